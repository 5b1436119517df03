// Lowering of the linear-algebra primitives (cholesky, triangular_solve, lu)
// to one LinalgKernel launch each (kernel-ir.ts; rendered by render/linalg.ts
// for both targets): the batch dims flatten into one count of matrices. On
// CUDA, large matrices (render/linalg-cuda-blocked.ts cudaBlockedWidth) take
// the blocked algorithm instead: its stages' launches, panel by panel, every
// launch with the one-block kernel's buffers and params (a launch finds its
// panel at run time) and a small temporary of ticket counters.
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { LinalgKernel } from './kernel-ir.js';
import { type BufferRef, type Launch, type LowerTarget, type Plan, copyKernel, zerosKernel } from './lower.js';
import { BLOCKED_MIN } from './render/linalg-blocked.js';
import { BLOCKED_STATE_SIZE, blockedSchedule, cudaBlockedWidth } from './render/linalg-cuda-blocked.js';

const input = (index: number): BufferRef => ({ kind: 'input', index });
const output = (index: number): BufferRef => ({ kind: 'output', index });
const empty = (): Plan => ({ launches: [], temps: [], aliases: new Map() });

function matrices(x: ShapedArray): { batch: number; m: number; n: number } {
  const r = x.shape.length;
  return { batch: sizeOf(x.shape.slice(0, -2)), m: x.shape[r - 2]!, n: x.shape[r - 1]! };
}

/**
 * The kernel's launches: one (the C target; CUDA below the blocked sizes), or the CUDA blocked stages at panel width
 * `nb`. `size`: the CPU's blocked-path measure (LU's min(m, n), Cholesky's n, a solve's unknowns); `columns`: a
 * solve's right-hand sides.
 */
function launches(kernel: LinalgKernel, buffers: BufferRef[], params: number[], target: LowerTarget, size: number, columns: number): Plan {
  const nb = target === 'cuda' ? cudaBlockedWidth(kernel.op, kernel.dtype, params[0]!, size, columns) : 0;
  if (!nb) return { launches: [{ kernel: { ...kernel, ...(target === 'cpu' && size >= BLOCKED_MIN ? { large: true } : {}) }, buffers, params }], temps: [], aliases: new Map() };
  // the stages work in place on the output: first the operand (b for a solve) by the elementwise copy kernel, and
  // zeros into the stages' ticket counters (a temp after the outputs: each launch takes its panel from them)
  const [batch, m, n] = params as [number, number, number?];
  const outputs = kernel.op === 'lu' ? 3 : 1;
  const state: BufferRef = { kind: 'temp', index: 0 };
  const stageBuffers = [...buffers.slice(0, outputs), state, ...buffers.slice(outputs)];
  const list: Launch[] = [
    { ...copyKernel(kernel.dtype, batch * m * (n ?? m)), buffers: [buffers[0]!, buffers[buffers.length - 1]!] },
    { ...zerosKernel('int32', BLOCKED_STATE_SIZE), buffers: [state] },
    ...blockedSchedule(kernel, params, nb).map((stage) => ({ kernel: { ...kernel, blocked: { stage, nb } }, buffers: stageBuffers, params })),
  ];
  return { launches: list, temps: [{ dtype: 'int32', size: BLOCKED_STATE_SIZE }], aliases: new Map() };
}

export function lowerCholesky(x: ShapedArray, target: LowerTarget): Plan {
  const { batch, n } = matrices(x);
  if (batch * n === 0) return empty();
  return launches({ kind: 'linalg', op: 'cholesky', dtype: x.dtype }, [output(0), input(0)], [batch, n], target, n, 0);
}

export function lowerTriangularSolve(a: ShapedArray, b: ShapedArray, p: PrimitiveParams['triangular_solve'], target: LowerTarget): Plan {
  const { batch, m, n } = matrices(b);
  if (batch * m * n === 0) return empty();
  const kernel: LinalgKernel = { kind: 'linalg', op: 'triangular_solve', dtype: b.dtype, leftSide: p.leftSide, lower: p.lower, transposeA: p.transposeA, unitDiagonal: p.unitDiagonal };
  return launches(kernel, [output(0), input(0), input(1)], [batch, m, n], target, p.leftSide ? m : n, p.leftSide ? n : m);
}

export function lowerLu(x: ShapedArray, target: LowerTarget): Plan {
  const { batch, m, n } = matrices(x);
  // an empty matrix still has a permutation (iota of m) when n == 0
  if (batch * m === 0) return empty();
  return launches({ kind: 'linalg', op: 'lu', dtype: x.dtype }, [output(0), output(1), output(2), input(0)], [batch, m, n], target, Math.min(m, n), 0);
}
