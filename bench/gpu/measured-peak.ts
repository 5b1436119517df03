// Measured against planned: runs a compiled program once on a CUDA device (a
// GPU or the emulated one) between a reset of the caching allocator's peaks
// and a synchronize, and sets what the allocators handed out during the call
// beside what memoryAnalysis() planned. "Equal" means: the peak of the bytes
// requested from the device pool during the call, less the bytes requested
// before it (the arguments, the executable's literals), is the plan's
// temp + output - alias; the same for the pinned-host pool with the host
// figures. The pools' own figures (peakBytesInUse) are larger by their
// rounding only (512-byte blocks on the device, power-of-two classes for
// pinned host), reported beside. Used by test/offloading.test.ts on the
// emulated GPU and by bench/gpu/offload-check.ts (gpu:verify --part offload).
import * as jax from '../../lib/index.js';
import type { Array } from '../../lib/index.js';
import type { MemoryAnalysis } from '../../lib/compiler/analysis.js';
import type { CudaBackend } from '../../lib/runtime/cuda.js';

export interface PoolFigures {
  /** what memoryAnalysis() says the call adds: temp + output - alias */
  planned: number;
  /** peak bytes requested during the call, less those requested before it */
  requested: number;
  /** the same with the pool's rounding (peakBytesInUse - bytesInUse before) */
  inUse: number;
}

export interface MeasuredPeak {
  device: PoolFigures;
  pinnedHost: PoolFigures;
}

interface Runnable {
  (...args: unknown[]): unknown;
  memoryAnalysis(): MemoryAnalysis;
}

/** Runs `compiled` on `args()` (fresh arguments where it donates them) once to warm it, then once measured; disposes the outputs. */
export async function measurePeak(compiled: Runnable, args: () => unknown[]): Promise<MeasuredPeak> {
  const device = jax.devices()[0]!;
  if (device.platform !== 'cuda') throw new Error(`measurePeak: needs a CUDA device (a GPU or JAXON_CUDA_EMULATOR=1), got ${String(device)}`);
  const backend = device.backend as CudaBackend;
  const release = (x: unknown) => (jax.tree.leaves(x as never) as Array[]).forEach((a) => a.isDisposed || a.dispose());
  release(compiled(...args()));
  const inputs = args();
  await backend.synchronize();
  backend.resetPeakMemoryStats();
  const before = backend.memoryStats();
  const outs = compiled(...inputs);
  await backend.synchronize();
  const after = backend.memoryStats();
  release(outs);
  const m = compiled.memoryAnalysis();
  return {
    device: {
      planned: m.tempSizeInBytes + m.outputSizeInBytes - m.aliasSizeInBytes,
      requested: after.peakBytesRequested - before.bytesRequested,
      inUse: after.peakBytesInUse - before.bytesInUse,
    },
    pinnedHost: {
      planned: m.hostTempSizeInBytes + m.hostOutputSizeInBytes - m.hostAliasSizeInBytes,
      requested: after.pinnedHost.peakBytesRequested - before.pinnedHost.bytesRequested,
      inUse: after.pinnedHost.peakBytesInUse - before.pinnedHost.bytesInUse,
    },
  };
}
