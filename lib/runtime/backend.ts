// The backend interface: what the runtime asks of a platform. The CPU backend
// (cpu.ts) keeps buffers in ArrayBuffers and runs C kernels; the CUDA backend
// (cuda.ts) keeps them in device or pinned host memory and runs NVRTC-compiled
// kernels. Single primitives run through execute(); whole programs (jit,
// control flow) are planned once by the compiler (compiler/plan.ts, with the
// backend's arena alignment) and compiled into a ProgramExecutable.
import type { Array } from '../core/array.js';
import type { Plan } from '../compiler/lower.js';
import type { ProgramPlan, ScanPrefetchMode } from '../compiler/plan.js';
import type { MemoryKind, ShapedArray } from '../core/primitives.js';

/** Memory that holds one array's elements on some device. */
export interface DeviceBuffer {
  readonly nbytes: number;
}

/** A planned program compiled for one backend. */
export interface ProgramExecutable {
  readonly plan: ProgramPlan;
  /** Kernel launch sites in the program and its nested ones (a loop body's kernels count once). */
  readonly kernelCount: number;
  /** Runs on arguments (the flat jaxpr inputs) and constants already on this backend's device; returns new arrays. */
  run(args: readonly Array[], consts: readonly Array[]): Array[];
  /** The generated kernels (complete C or CUDA translation units) of the program and its nested programs. */
  kernels(): { name: string; label: string; source: string }[];
  toString(): string;
}

export interface Backend {
  readonly platform: 'cpu' | 'cuda';
  /** Byte alignment of arena offsets in this backend's program plans. */
  readonly planAlignment: number;
  /** Whether plans reserve device scratch to prefetch scan inputs from pinned host memory (PlanOptions.prefetchScanInputs). */
  readonly prefetchesScanInputs: ScanPrefetchMode;
  /** Copies host bytes into a new buffer of a memory kind ('device' by default). */
  fromHost(bytes: Uint8Array, memoryKind?: MemoryKind): DeviceBuffer;
  /** Copies a buffer's bytes to the host. */
  toHostSync(buffer: DeviceBuffer): Uint8Array;
  toHost(buffer: DeviceBuffer): Promise<Uint8Array>;
  /** A copy of a buffer in a memory kind of the same device. */
  devicePut(buffer: DeviceBuffer, memoryKind: MemoryKind): DeviceBuffer;
  /** Runs a plan; returns the output buffers (new, or aliases of inputs the plan names). */
  execute(plan: Plan, inputs: DeviceBuffer[], outputs: ShapedArray[]): DeviceBuffer[];
  /** Compiles a program planned with this backend's planAlignment; `label` ('jax.jit(f)') names it in failures. */
  compileProgram(plan: ProgramPlan, label?: string): ProgramExecutable;
  /** Returns once the buffer's contents are computed (JAX's block_until_ready), blocking the thread. */
  blockUntilReadySync(buffer: DeviceBuffer): void;
  /** Releases a buffer's memory now. */
  free(buffer: DeviceBuffer): void;
}
