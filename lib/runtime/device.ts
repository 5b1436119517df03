// Devices jaxon can place arrays on. This first cut has the CPU device; the
// CUDA backend adds GPUs. Every device offers JAX's memory kinds 'device'
// (its default memory) and 'pinned_host' (page-locked host memory it can
// reach); on the CPU both are ordinary host memory, so programs that move
// data between kinds run, and are tested, without a GPU.
import { ValueError, show } from '../core/errors.js';
import { storageStats } from '../core/memory.js';
import { MEMORY_KINDS, type MemoryKind } from '../core/primitives.js';
import { cpuBackend } from './cpu.js';
import type { Backend } from './backend.js';
import { native } from './native.js';

/** One memory space of a device (jax.Device.memory(kind)): where arrays of that memory kind live. */
export class Memory {
  constructor(
    readonly kind: MemoryKind,
    readonly device: Device,
  ) {}
  /** The devices that can read and write this memory directly. */
  addressableByDevices(): Device[] {
    return [this.device];
  }
  toString(): string {
    return `Memory(kind=${this.kind}, device=${this.device})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

/** Bytes held by live arrays' buffers (of every memory kind); a compiled program's temporaries are not counted. */
export interface MemoryStats {
  bytesInUse: number;
  peakBytesInUse: number;
  numAllocs: number;
  largestAllocSize: number;
}

export class Device {
  #memories: Memory[] | undefined;
  constructor(
    readonly id: number,
    readonly platform: 'cpu' | 'cuda',
    readonly deviceKind: string,
    readonly backend: Backend,
  ) {}
  /** The memories this device can address, one per memory kind ('device' first). */
  addressableMemories(): Memory[] {
    this.#memories ??= MEMORY_KINDS.map((kind) => new Memory(kind, this));
    return [...this.#memories];
  }
  /** Same as addressableMemories() (a single-process runtime addresses every memory it has). */
  memories(): Memory[] {
    return this.addressableMemories();
  }
  /** The memory arrays go to when no memory kind is asked for: 'device'. */
  defaultMemory(): Memory {
    return this.addressableMemories()[0]!;
  }
  /** The memory of a kind; an unknown kind is rejected with the kinds this device has (JAX's wording). */
  memory(kind: string): Memory {
    const found = this.addressableMemories().find((m) => m.kind === kind);
    if (!found) {
      throw new ValueError(
        `Could not find memory addressable by device ${this.deviceKind}. Device ${this.deviceKind} can address the following memory kinds: ` +
          `${this.addressableMemories().map((m) => m.kind).join(', ')}. Got memory kind: ${typeof kind === 'string' ? kind : show(kind)}`,
      );
    }
    return found;
  }
  /** Bytes of live arrays' buffers (on the CPU, of every memory kind together). */
  memoryStats(): MemoryStats {
    return storageStats();
  }
  toString(): string {
    return `${this.platform.toUpperCase()}Device(id=${this.id})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

const cpuDevice = new Device(0, 'cpu', 'cpu', cpuBackend);

export function devices(backend?: 'cpu' | 'cuda'): Device[] {
  if (backend === undefined || backend === 'cpu') return [cpuDevice];
  throw new Error(`jax.devices: backend 'cuda' is not available: ${environmentInfo().cuda}`);
}

export function defaultDevice(): Device {
  return cpuDevice;
}

export function defaultBackend(): 'cpu' | 'cuda' {
  return 'cpu';
}

/** What jaxon found on this machine, one line per item. */
export function environmentInfo(): { platform: string; cuda: string; node: string } {
  let cuda: string;
  try {
    const probe = native().cudaProbe();
    cuda = probe.available
      ? `${probe.reason}; the CUDA backend (runtime/cuda.ts) is not the default device yet, running on the CPU`
      : `running on the CPU because ${probe.reason}`;
  } catch (error) {
    cuda = `running on the CPU because the native addon failed to load: ${(error as Error).message}`;
  }
  return { platform: defaultBackend(), cuda, node: process.version };
}
