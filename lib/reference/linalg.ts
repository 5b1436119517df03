// Reference rules of the linear-algebra primitives, in float64 with the
// kernels' algorithms (LAPACK's potf2, trsm, getf2 with partial pivoting).
import type { PrimitiveParams } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { RefArray } from './array.js';

function dims(x: RefArray): { batch: number; m: number; n: number } {
  const r = x.shape.length;
  return { batch: sizeOf(x.shape.slice(0, -2)), m: x.shape[r - 2]!, n: x.shape[r - 1]! };
}

/** The lower Cholesky factor (zeros above the diagonal); all NaN for a matrix that is not positive definite. */
export function choleskyRule([x]: RefArray[]): Float64Array[] {
  const { batch, n } = dims(x!);
  const out = new Float64Array(x!.data.length);
  for (let b = 0; b < batch; b++) {
    const o = b * n * n;
    const L = (i: number, j: number) => o + i * n + j;
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) out[L(i, j)] = x!.data[L(i, j)]!;
    let failed = false;
    for (let j = 0; j < n; j++) {
      const d = out[L(j, j)]!;
      if (!(d > 0)) failed = true;
      const ljj = Math.sqrt(d);
      out[L(j, j)] = ljj;
      for (let i = j + 1; i < n; i++) out[L(i, j)] = out[L(i, j)]! / ljj;
      for (let i = j + 1; i < n; i++) for (let c = j + 1; c <= i; c++) out[L(i, c)] = out[L(i, c)]! - out[L(i, j)]! * out[L(c, j)]!;
    }
    if (failed) out.fill(NaN, o, o + n * n);
  }
  return [out];
}

/** op(a) x = b or x op(a) = b, reading only a's `lower` (or upper) triangle. */
export function triangularSolveRule([a, b]: RefArray[], p: PrimitiveParams['triangular_solve']): Float64Array[] {
  const { batch, m, n } = dims(b!);
  const r = p.leftSide ? m : n;
  const cols = p.leftSide ? n : m;
  const transposed = p.transposeA !== !p.leftSide;
  const forward = p.lower !== transposed;
  const out = Float64Array.from(b!.data);
  for (let k = 0; k < batch; k++) {
    const ao = k * r * r;
    const bo = k * m * n;
    const M = (i: number, c: number) => a!.data[ao + (transposed ? c * r + i : i * r + c)]!;
    const X = (i: number, c: number) => bo + (p.leftSide ? i * n + c : c * n + i);
    for (let s = 0; s < r; s++) {
      const j = forward ? s : r - 1 - s;
      if (!p.unitDiagonal) {
        const rinv = 1 / M(j, j);
        for (let c = 0; c < cols; c++) out[X(j, c)] = out[X(j, c)]! * rinv;
      }
      const [from, to] = forward ? [j + 1, r] : [0, j];
      for (let i = from; i < to; i++) for (let c = 0; c < cols; c++) out[X(i, c)] = out[X(i, c)]! - M(i, j) * out[X(j, c)]!;
    }
  }
  return [out];
}

/** LAPACK getrf: partial pivoting on the first largest magnitude, 0-based pivots, and the permutation they make. */
export function luRule([x]: RefArray[]): Float64Array[] {
  const { batch, m, n } = dims(x!);
  const k = Math.min(m, n);
  const lu = Float64Array.from(x!.data);
  const pivots = new Float64Array(batch * k);
  const permutation = new Float64Array(batch * m);
  for (let b = 0; b < batch; b++) {
    const o = b * m * n;
    const A = (i: number, j: number) => o + i * n + j;
    for (let j = 0; j < k; j++) {
      let p = j;
      let best = Math.abs(lu[A(j, j)]!);
      for (let i = j + 1; i < m; i++) if (Math.abs(lu[A(i, j)]!) > best) { best = Math.abs(lu[A(i, j)]!); p = i; }
      pivots[b * k + j] = p;
      if (p !== j) for (let c = 0; c < n; c++) { const s = lu[A(j, c)]!; lu[A(j, c)] = lu[A(p, c)]!; lu[A(p, c)] = s; }
      const pivot = lu[A(j, j)]!;
      if (pivot !== 0) for (let i = j + 1; i < m; i++) lu[A(i, j)] = lu[A(i, j)]! / pivot;
      for (let i = j + 1; i < m; i++) for (let c = j + 1; c < n; c++) lu[A(i, c)] = lu[A(i, c)]! - lu[A(i, j)]! * lu[A(j, c)]!;
    }
    const perm = Array.from({ length: m }, (_, i) => i);
    for (let i = 0; i < k; i++) { const p = pivots[b * k + i]!; const s = perm[i]!; perm[i] = perm[p]!; perm[p] = s; }
    perm.forEach((v, i) => (permutation[b * m + i] = v));
  }
  return [lu, pivots, permutation];
}
