// Lowering of the linear-algebra primitives (cholesky, triangular_solve, lu)
// to one LinalgKernel launch each (kernel-ir.ts; rendered by render/linalg.ts
// for both targets): the batch dims flatten into one count of matrices.
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { BufferRef, Plan } from './lower.js';
import { BLOCKED_MIN } from './render/linalg-blocked.js';

const input = (index: number): BufferRef => ({ kind: 'input', index });
const output = (index: number): BufferRef => ({ kind: 'output', index });
const empty = (): Plan => ({ launches: [], temps: [], aliases: new Map() });

function matrices(x: ShapedArray): { batch: number; m: number; n: number } {
  const r = x.shape.length;
  return { batch: sizeOf(x.shape.slice(0, -2)), m: x.shape[r - 2]!, n: x.shape[r - 1]! };
}

export function lowerCholesky(x: ShapedArray): Plan {
  const { batch, n } = matrices(x);
  if (batch * n === 0) return empty();
  const large = n >= BLOCKED_MIN ? { large: true } : {};
  return { launches: [{ kernel: { kind: 'linalg', op: 'cholesky', dtype: x.dtype, ...large }, buffers: [output(0), input(0)], params: [batch, n] }], temps: [], aliases: new Map() };
}

export function lowerTriangularSolve(a: ShapedArray, b: ShapedArray, p: PrimitiveParams['triangular_solve']): Plan {
  const { batch, m, n } = matrices(b);
  if (batch * m * n === 0) return empty();
  const large = (p.leftSide ? m : n) >= BLOCKED_MIN ? { large: true } : {};
  const kernel = { kind: 'linalg' as const, op: 'triangular_solve' as const, dtype: b.dtype, leftSide: p.leftSide, lower: p.lower, transposeA: p.transposeA, unitDiagonal: p.unitDiagonal, ...large };
  return { launches: [{ kernel, buffers: [output(0), input(0), input(1)], params: [batch, m, n] }], temps: [], aliases: new Map() };
}

export function lowerLu(x: ShapedArray): Plan {
  const { batch, m, n } = matrices(x);
  // an empty matrix still has a permutation (iota of m) when n == 0
  if (batch * m === 0) return empty();
  return {
    launches: [{ kernel: { kind: 'linalg', op: 'lu', dtype: x.dtype, ...(Math.min(m, n) >= BLOCKED_MIN ? { large: true } : {}) }, buffers: [output(0), output(1), output(2), input(0)], params: [batch, m, n] }],
    temps: [], aliases: new Map(),
  };
}
