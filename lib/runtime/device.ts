// Devices jaxon can place arrays on. This first cut has the CPU device; the
// CUDA backend adds GPUs, and memory kinds arrive with the sharding API.
import { cpuBackend } from './cpu.js';
import type { Backend } from './backend.js';
import { native } from './native.js';

export class Device {
  constructor(
    readonly id: number,
    readonly platform: 'cpu' | 'cuda',
    readonly deviceKind: string,
    readonly backend: Backend,
  ) {}
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
      ? `${probe.reason}; the CUDA backend is not built yet, running on the CPU`
      : `running on the CPU because ${probe.reason}`;
  } catch (error) {
    cuda = `running on the CPU because the native addon failed to load: ${(error as Error).message}`;
  }
  return { platform: defaultBackend(), cuda, node: process.version };
}
