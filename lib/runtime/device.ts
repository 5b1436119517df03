// Devices jaxon can place arrays on, and the platforms as in JAX: the CUDA
// devices are the default where a GPU (or jaxon's emulated one) and NVRTC
// are found, else the CPU; JAXON_PLATFORMS chooses like JAX_PLATFORMS. Every device offers JAX's memory kinds 'device'
// (its default memory) and 'pinned_host' (page-locked host memory it can
// reach); on the CPU both are ordinary host memory, so programs that move
// data between kinds run, and are tested, without a GPU.
import { ValueError, show } from '../core/errors.js';
import { storageStats } from '../core/memory.js';
import { MEMORY_KINDS, type MemoryKind } from '../core/primitives.js';
import { cpuBackend } from './cpu.js';
import type { Backend } from './backend.js';
import { installDeviceHooks } from '../core/array.js';
import { native, nativeAddonInfo } from './native.js';
import { chooseCCompiler, missingCompilerMessage } from './c-compiler.js';
import { createCudaDevice } from './cuda.js';

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

// Made on first use: modules that import each other (cpu.ts, its executable, core) may still be loading now.
let cpuDeviceMemo: Device | undefined;
function cpuDevice(): Device {
  if (!cpuDeviceMemo) {
    cpuDeviceMemo = new Device(0, 'cpu', 'cpu', cpuBackend);
    deviceOfBackend.set(cpuBackend, cpuDeviceMemo);
  }
  return cpuDeviceMemo;
}

export type PlatformName = 'cpu' | 'cuda';

/** Devices by backend, so an array's buffer tells its device. */
const deviceOfBackend = new Map<Backend, Device>();

/** The device a backend belongs to (each device has its own backend). */
export function deviceOf(backend: Backend): Device {
  if (backend === cpuBackend) return cpuDevice();
  const device = deviceOfBackend.get(backend);
  if (!device) throw new Error(`jaxon: internal error: a buffer's backend (${backend.platform}) belongs to no known device`);
  return device;
}

interface Platforms {
  /** the platforms in priority order; the first is the default */
  readonly order: PlatformName[];
  /** one line: which platform runs and why */
  readonly why: string;
}

let platforms: Platforms | undefined;
let cudaDevices: Device[] | undefined;
let cudaProblem: string | undefined;

/** JAXON_PLATFORMS (like JAX_PLATFORMS): 'cpu', 'cuda', 'cuda,cpu'; null when unset. */
function requestedPlatforms(): PlatformName[] | null {
  const raw = process.env['JAXON_PLATFORMS'];
  if (raw === undefined || raw.trim() === '') return null;
  const names = raw.split(',').map((n) => n.trim().toLowerCase()).filter((n) => n !== '');
  return names.map((n) => {
    if (n === 'cpu' || n === 'cuda') return n;
    if (n === 'gpu') return 'cuda';
    throw new ValueError(`JAXON_PLATFORMS=${raw}: unknown platform ${JSON.stringify(n)} (the platforms are 'cpu' and 'cuda')`);
  });
}

/** The CUDA devices, initialized on first use; undefined (and cudaProblem set) when CUDA cannot run here. */
function cudaDeviceList(): Device[] | undefined {
  if (cudaDevices || cudaProblem !== undefined) return cudaDevices;
  let probe: ReturnType<ReturnType<typeof native>['cudaProbe']>;
  try {
    probe = native().cudaProbe();
  } catch (error) {
    cudaProblem = `the native addon failed to load: ${(error as Error).message}`;
    return undefined;
  }
  if (!probe.available) {
    cudaProblem = probe.reason;
    return undefined;
  }
  try {
    const list: Device[] = [];
    for (let ordinal = 0; ordinal < probe.deviceCount; ordinal++) {
      const device = createCudaDevice(ordinal);
      deviceOfBackend.set(device.backend, device);
      list.push(device);
    }
    cudaDevices = list;
  } catch (error) {
    cudaProblem = `the CUDA device failed to initialize: ${(error as Error).message}`;
  }
  return cudaDevices;
}

function resolvePlatforms(): Platforms {
  if (platforms) return platforms;
  const requested = requestedPlatforms();
  const raw = process.env['JAXON_PLATFORMS'];
  if (requested === null) {
    const cuda = cudaDeviceList();
    platforms = cuda
      ? { order: ['cuda', 'cpu'], why: `running on cuda: ${native().cudaProbe().reason}` }
      : { order: ['cpu'], why: `running on the CPU because ${cudaProblem}` };
  } else {
    if (requested.includes('cuda') && !cudaDeviceList()) {
      throw new Error(`JAXON_PLATFORMS=${raw} asks for cuda, which is not available here: ${cudaProblem}`);
    }
    const order = [...new Set(requested)];
    platforms = {
      order,
      why: order[0] === 'cuda'
        ? `running on cuda (JAXON_PLATFORMS=${raw}): ${native().cudaProbe().reason}`
        : `running on the CPU (JAXON_PLATFORMS=${raw})${cudaDeviceList() ? '' : `; CUDA: ${cudaProblem}`}`,
    };
  }
  return platforms;
}

/**
 * jax.devices(backend?): the default platform's devices, or those of 'cpu' /
 * 'cuda' (also 'gpu'). The CPU device is always there; asking for CUDA where
 * it cannot run says why.
 */
export function devices(backend?: PlatformName | 'gpu'): Device[] {
  if (backend === undefined) {
    const first = resolvePlatforms().order[0]!;
    return first === 'cuda' ? [...cudaDeviceList()!] : [cpuDevice()];
  }
  if (backend === 'cpu') return [cpuDevice()];
  if (backend === 'cuda' || backend === 'gpu') {
    const list = cudaDeviceList();
    if (!list) throw new ValueError(`jax.devices: backend 'cuda' is not available: ${cudaProblem}`);
    return [...list];
  }
  throw new ValueError(`jax.devices: unknown backend ${show(backend)} (the backends are 'cpu' and 'cuda')`);
}

/** Where arrays go when nothing says otherwise: the first device of the default platform. */
export function defaultDevice(): Device {
  return devices()[0]!;
}

export function defaultBackend(): PlatformName {
  return resolvePlatforms().order[0]!;
}

/** What jaxon runs on, and why, in one line each. */
export function environmentInfo(): { platform: PlatformName; cuda: string; node: string; addon: string; compiler: string } {
  const compiler = chooseCCompiler();
  return {
    platform: defaultBackend(),
    cuda: resolvePlatforms().why,
    node: process.version,
    addon: nativeAddonInfo(),
    compiler: compiler.command ? `${compiler.command} (from ${compiler.from})` : missingCompilerMessage(),
  };
}

// How an Array finds its device (core imports nothing above it; lib/sharding installs how it names its sharding).
installDeviceHooks({ deviceOf, defaultDevice });
