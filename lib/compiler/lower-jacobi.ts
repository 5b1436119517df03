// Lowering of lax.linalg.eigh for large matrices on CUDA to
// render/linalg-jacobi-cuda.ts's multi-block Jacobi: zeros into the state
// (ticket counters, per matrix converged and sweeps), then the stages in
// jacobiSchedule's order, every launch with the same buffers and params (a
// launch finds its sweep and round at run time). Smaller matrices, larger
// batches and the C target keep lower.ts's one launch.
import type { OrthogonalKernel } from './kernel-ir.js';
import { type BufferRef, type Plan, zerosKernel } from './lower.js';
import { cudaJacobiMultiblock, eighMultiblockWork, jacobiSchedule, jacobiStateSize } from './render/linalg-jacobi-cuda.js';

/** The multi-block plan of an eigh kernel over [batch, n, n], or null where a block per matrix serves it. */
export function lowerJacobiMultiblock(kernel: OrthogonalKernel, batch: number, m: number, n: number): Plan | null {
  if (!cudaJacobiMultiblock(kernel, batch, m, n)) return null;
  const work: BufferRef = { kind: 'temp', index: 0 };
  const state: BufferRef = { kind: 'temp', index: 1 };
  const buffers: BufferRef[] = [{ kind: 'output', index: 0 }, { kind: 'output', index: 1 }, work, state, { kind: 'input', index: 0 }];
  const params = [batch, m, n];
  return {
    launches: [
      { ...zerosKernel('int32', jacobiStateSize(batch)), buffers: [state] },
      ...jacobiSchedule(n).map((stage) => ({ kernel: { ...kernel, jacobi: { stage } }, buffers, params })),
    ],
    temps: [{ dtype: kernel.dtype, size: batch * eighMultiblockWork(n) }, { dtype: 'int32', size: jacobiStateSize(batch) }],
    aliases: new Map(),
  };
}
