// Lowering of lax.linalg.eigh and svd for large matrices on CUDA to
// render/linalg-jacobi-cuda.ts's multi-block Jacobi: zeros into the state
// (ticket counters, per matrix converged and sweeps), then the stages in
// jacobiSchedule's order, every launch with the same buffers and params (a
// launch finds its sweep and round at run time). Smaller matrices, larger
// batches and the C target keep lower.ts's one launch.
import type { OrthogonalKernel } from './kernel-ir.js';
import { type BufferRef, type Plan, zerosKernel } from './lower.js';
import { cudaJacobiMultiblock, eighMultiblockWork, jacobiSchedule, jacobiStateSize } from './render/linalg-jacobi-cuda.js';

/**
 * The multi-block plan of an eigh or svd kernel over [batch, m, n], or null where a block per matrix serves it.
 * `oneBlockTemps`: svd's working storage as the one-block kernel has it (its finish is that kernel's tail).
 */
export function lowerJacobiMultiblock(kernel: OrthogonalKernel, batch: number, m: number, n: number, oneBlockTemps: number[]): Plan | null {
  if (!cudaJacobiMultiblock(kernel, batch, m, n)) return null;
  const temp = (index: number): BufferRef => ({ kind: 'temp', index });
  const output = (index: number): BufferRef => ({ kind: 'output', index });
  const input: BufferRef = { kind: 'input', index: 0 };
  const params = [batch, m, n];
  if (kernel.op === 'eigh') {
    const state = temp(1);
    const buffers: BufferRef[] = [output(0), output(1), temp(0), state, input];
    return {
      launches: [
        { ...zerosKernel('int32', jacobiStateSize(batch)), buffers: [state] },
        ...jacobiSchedule('eigh', n).map((stage) => ({ kernel: { ...kernel, jacobi: { stage } }, buffers, params })),
      ],
      temps: [{ dtype: kernel.dtype, size: batch * eighMultiblockWork(n) }, { dtype: 'int32', size: jacobiStateSize(batch) }],
      aliases: new Map(),
    };
  }
  // svd: s, (u, vt,) then work, rot, (basis) as the one-block kernel's temps, then the state
  const outs = kernel.computeUv ? [output(0), output(1), output(2)] : [output(0)];
  const [work, rot, basis] = [temp(0), temp(1), temp(2)];
  const oneBlock = kernel.computeUv ? [...outs, work, rot, basis, input] : [...outs, work, rot, input];
  const state = temp(oneBlockTemps.length);
  const staged = [...oneBlock.slice(0, -1), state, input];
  return {
    launches: [
      { ...zerosKernel('int32', jacobiStateSize(batch)), buffers: [state] },
      ...jacobiSchedule('svd', Math.min(m, n)).map((stage) => ({ kernel: { ...kernel, jacobi: { stage } }, buffers: stage === 'svd_finish' ? oneBlock : staged, params })),
    ],
    temps: [...oneBlockTemps.map((size) => ({ dtype: kernel.dtype, size: Math.max(1, batch * size) })), { dtype: 'int32', size: jacobiStateSize(batch) }],
    aliases: new Map(),
  };
}
