// The backend interface: what the runtime asks of a platform. The CPU backend
// (cpu.ts) keeps buffers in ArrayBuffers and runs C kernels; the CUDA backend
// implements the same interface over device memory.
import type { Plan } from '../compiler/lower.js';
import type { ShapedArray } from '../core/primitives.js';

/** Memory that holds one array's elements on some device. */
export interface DeviceBuffer {
  readonly nbytes: number;
}

export interface Backend {
  readonly platform: 'cpu' | 'cuda';
  /** Copies host bytes into a new buffer. */
  fromHost(bytes: Uint8Array): DeviceBuffer;
  /** Copies a buffer's bytes to the host. */
  toHostSync(buffer: DeviceBuffer): Uint8Array;
  toHost(buffer: DeviceBuffer): Promise<Uint8Array>;
  /** Runs a plan; returns the output buffers (new, or aliases of inputs the plan names). */
  execute(plan: Plan, inputs: DeviceBuffer[], outputs: ShapedArray[]): DeviceBuffer[];
  /** Releases a buffer's memory now. */
  free(buffer: DeviceBuffer): void;
}
