// jnp.linalg.cholesky, det, slogdet, inv and solve (jax/_src/numpy/linalg.py
// and lax/linalg.py's _solve): LU-based, with JAX's derivative rules: solve
// differentiates as custom_linear_solve (the factorization reused, a
// stop-gradient on it), slogdet's tangent is trace(solve(a, a')), det's is
// the trace of the adjugate times a' (_cofactor_solve, finite for singular
// matrices), 2x2 and 3x3 determinants are the closed forms JAX uses.
import { Array, type ArrayLike } from '../core/array.js';
import { bind1 } from '../core/bind.js';
import type { DType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { broadcastShapes } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { cholesky as laxCholesky, lu as laxLu, triangularSolve } from '../lax/linalg-lu.js';
import { customJvp } from '../transforms/custom-derivatives.js';
import * as creation from './creation.js';
import * as elementwise from './elementwise.js';
import { takeAlongAxis } from './indexing.js';
import { matmul } from './linalg.js';
import * as manipulation from './manipulation.js';
import * as reductions from './reductions.js';
import { promoteInexact } from './util.js';

/** The operand promoted to an inexact dtype, float32 or float64 (LAPACK's real types), rank >= 2 and square if asked. */
function operand(fn: string, x: unknown, arg: string, square: boolean): Array {
  const [a] = promoteInexact(fn, x);
  if (a!.dtype !== 'float32' && a!.dtype !== 'float64') throw new TypeError(`${fn}: ${arg} must be float32 or float64 (LAPACK's types), got ${a!.dtype}`);
  if (a!.ndim < 2 || (square && a!.shape[a!.ndim - 1] !== a!.shape[a!.ndim - 2])) {
    throw new ValueError(`${fn}: ${arg} must have shape [..., ${square ? 'n, n' : 'm, n'}], got ${show(a!.shape)}`);
  }
  return a!;
}

const HIGHEST = { precision: 'highest' };

/** x[..., start:stop] along the axis `fromEnd` places from the end (1: the last). */
function sliceAxis(x: Array, fromEnd: number, start: number, stop: number): Array {
  const axis = x.ndim - fromEnd;
  return bind1('slice', [x], {
    startIndices: x.shape.map((_, d) => (d === axis ? start : 0)), limitIndices: x.shape.map((s, d) => (d === axis ? stop : s)), strides: null,
  });
}

/** The entry [..., i, j] of a batch of matrices. */
function entry(x: Array, i: number, j: number): Array {
  const e = sliceAxis(sliceAxis(x, 2, i, i + 1), 1, j, j + 1);
  return manipulation.reshape(e, x.shape.slice(0, -2));
}

/** The diagonal [..., n] of [..., n, n]: a strided slice of the flattened matrices. */
function diagonal(x: Array): Array {
  const n = x.shape[x.ndim - 1]!;
  const flat = manipulation.reshape(x, [...x.shape.slice(0, -2), n * n]);
  if (n === 0) return flat;
  return bind1('slice', [flat], { startIndices: flat.shape.map(() => 0), limitIndices: [...flat.shape.slice(0, -1), n * n], strides: [...flat.shape.slice(0, -1).map(() => 1), n + 1] });
}

const trace = (x: Array) => reductions.sum(diagonal(x), { axis: -1 });

/** The rows of x [..., m, k] in the order perm [..., m]. */
function permuteRows(x: Array, perm: Array): Array {
  const idx = manipulation.broadcastTo(manipulation.expandDims(perm, -1), [...perm.shape, x.shape[x.ndim - 1]!]);
  return takeAlongAxis(x, idx, -2);
}

/** lu_solve with trans = 0: x = U^-1 L^-1 P b for b [..., m, k] with lu's batch dims. */
function luSolve(lu: Array, perm: Array, b: Array): Array {
  const x = triangularSolve(lu, permuteRows(b, perm), { leftSide: true, lower: true, unitDiagonal: true });
  return triangularSolve(lu, x, { leftSide: true, lower: false });
}

/** A strong scalar of `dtype` (a weak one would take the default float type in a where with another weak one). */
const constant = (value: number, dtype: DType): Array => creation.full([], value, { dtype });

/** The number of pivots that swap a row, as JAX's parity: count_nonzero(pivots != iota). */
function swaps(pivots: Array): Array {
  const iota = lax.broadcastInDim(lax.iota('int32', pivots.shape[pivots.ndim - 1]!), [...pivots.shape], [pivots.ndim - 1]);
  return reductions.sum(lax.convertElementType(elementwise.notEqual(pivots, iota), 'int32'), { axis: -1 });
}

// ---- cholesky ----

/** jnp.linalg.cholesky: L with A = L L^T (upper: U = L^T with A = U^T U); NaNs where A is not positive definite. */
export function cholesky(a: ArrayLike, options: { upper?: boolean; symmetrizeInput?: boolean } = {}): Array {
  const fn = 'jnp.linalg.cholesky';
  checkOptions(fn, options, ['upper', 'symmetrizeInput']);
  const x = operand(fn, a, 'a', true);
  const L = laxCholesky(x, { symmetrizeInput: options.symmetrizeInput ?? true });
  if (options.upper !== undefined && typeof options.upper !== 'boolean') throw new TypeError(`${fn}: upper must be a boolean, got ${show(options.upper)}`);
  return options.upper ? manipulation.swapaxes(L, -1, -2) : L;
}

// ---- solve and inv ----

/**
 * custom_linear_solve over lu_solve: x' = A^-1 (b' - A' x). JAX stop-gradients the factorization and gives the
 * solve a transpose rule that keeps A; here the transpose of a solve applied to tangents is the transpose of this
 * function's jaxpr, so the factorization stays differentiable for a VJP's own derivatives to see A.
 */
const solveCore = customJvp(function solve(a: Array, b: Array): Array {
  const [lu, , perm] = laxLu(a);
  return luSolve(lu, perm, b);
});
// the tangent is itself a solve with a (as custom_linear_solve's jvp is), so higher derivatives see a's dependence
solveCore.defjvp(([a, b]: Array[], [da, db]: Array[]) => {
  const x = solveCore(a!, b!);
  return [x, solveCore(a!, elementwise.subtract(db!, matmul(da!, x, HIGHEST)))];
});

/**
 * jnp.linalg.solve: x with a x = b, a [..., n, n], b [n] or [..., n, k] (batch dims broadcast). A singular a gives
 * infs and NaNs, as in JAX.
 */
export function solve(a: ArrayLike, b: ArrayLike): Array {
  const fn = 'jnp.linalg.solve';
  const [pa, pb] = promoteInexact(fn, a, b);
  const A = operand(fn, pa, 'a', true);
  let B = pb!;
  const n = A.shape[A.ndim - 1]!;
  if (B.ndim > 1 && A.ndim === B.ndim + 1 && A.shape[A.ndim - 1] === B.shape[B.ndim - 1] && A.shape[A.ndim - 1] !== B.shape[B.ndim - 2]) {
    throw new ValueError(`${fn}: invalid shapes for solve: ${show(A.shape)}, ${show(B.shape)}. Prior to JAX v0.5.0, this would have been treated as a batched 1-dimensional solve. To recover this behavior, use solve(a, b[..., None]).squeeze(-1).`);
  }
  const vector = B.ndim === 1;
  if (vector) B = manipulation.reshape(B, [B.shape[0]!, 1]);
  if (B.ndim < 2 || B.shape[B.ndim - 2] !== n) {
    throw new ValueError(`${fn}: the arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[m]; got a=${show(A.shape)} and b=${show(pb!.shape)}`);
  }
  const batch = broadcastShapes(fn, A.shape.slice(0, -2), B.shape.slice(0, -2));
  const x = solveCore(manipulation.broadcastTo(A, [...batch, n, n]), manipulation.broadcastTo(B, [...batch, n, B.shape[B.ndim - 1]!]));
  return vector ? manipulation.reshape(x, x.shape.slice(0, -1)) : x;
}

/** jnp.linalg.inv: solve(a, I) with I broadcast over a's batch dims. */
export function inv(a: ArrayLike): Array {
  const x = operand('jnp.linalg.inv', a, 'a', true);
  const n = x.shape[x.ndim - 1]!;
  return solve(x, manipulation.broadcastTo(creation.eye(n, n, { dtype: x.dtype }), [...x.shape]));
}

// ---- slogdet ----

const slogdetSmall = customJvp(function slogdetSmall(a: Array): Array[] {
  const det = a.shape[a.ndim - 1] === 1 ? entry(a, 0, 0) : det2x2(a);
  return [elementwise.sign(det), elementwise.log(elementwise.abs(det))];
});
slogdetSmall.defjvp(([x]: Array[], [g]: Array[]) => {
  const [sign, ans] = slogdetSmall(x!) as [Array, Array];
  const e = (y: Array, i: number, j: number) => entry(y, i, j);
  const { add, subtract, multiply, divide } = elementwise;
  const ansDot = x!.shape[x!.ndim - 1] === 1
    ? divide(e(g!, 0, 0), e(x!, 0, 0))
    : divide(add(subtract(subtract(multiply(e(g!, 0, 0), e(x!, 1, 1)), multiply(e(g!, 0, 1), e(x!, 1, 0))), multiply(e(g!, 1, 0), e(x!, 0, 1))), multiply(e(g!, 1, 1), e(x!, 0, 0))), det2x2(x!));
  return [[sign, ans], [creation.zerosLike(sign), ansDot]];
});

const slogdetLu = customJvp(function slogdetLu(a: Array): Array[] {
  const [lu, pivots] = laxLu(a);
  const diag = diagonal(lu);
  const zero = constant(0, a.dtype);
  const isZero = reductions.any(elementwise.equal(diag, zero), { axis: -1 });
  const parity = elementwise.add(swaps(pivots), reductions.sum(lax.convertElementType(elementwise.less(diag, zero), 'int32'), { axis: -1 }));
  const odd = elementwise.equal(lax.rem(parity, constant(2, 'int32')), constant(1, 'int32'));
  const sign = elementwise.where(isZero, zero, elementwise.where(odd, constant(-1, a.dtype), constant(1, a.dtype)));
  const logdet = elementwise.where(isZero, constant(-Infinity, a.dtype), reductions.sum(elementwise.log(elementwise.abs(diag)), { axis: -1 }));
  return [sign, logdet];
});
slogdetLu.defjvp(([x]: Array[], [g]: Array[]) => {
  const [sign, ans] = slogdetLu(x!) as [Array, Array];
  return [[sign, ans], [creation.zerosLike(sign), trace(solve(x!, g!))]];
});

/** jnp.linalg.slogdet: [sign, logabsdet] of [..., n, n] (LU; sign 0 and -inf for a singular matrix). */
export function slogdet(a: ArrayLike, options: { method?: string | null } = {}): [Array, Array] {
  const fn = 'jnp.linalg.slogdet';
  checkOptions(fn, options, ['method']);
  const method = options.method ?? 'lu';
  if (method === 'qr') throw new ValueError(`${fn}: method 'qr' is not implemented in jaxon yet; use 'lu' (the default)`);
  if (method !== 'lu') throw new ValueError(`${fn}: unknown slogdet method ${show(method)}; supported methods are 'lu' (null) and 'qr'`);
  const x = operand(fn, a, 'a', true);
  const n = x.shape[x.ndim - 1]!;
  const [sign, logdet] = (n === 1 || n === 2 ? slogdetSmall(x) : slogdetLu(x)) as [Array, Array];
  return [sign, logdet];
}

// ---- det ----

function det2x2(a: Array): Array {
  const e = (i: number, j: number) => entry(a, i, j);
  return elementwise.subtract(elementwise.multiply(e(0, 0), e(1, 1)), elementwise.multiply(e(0, 1), e(1, 0)));
}

function det3x3(a: Array): Array {
  const e = (i: number, j: number) => entry(a, i, j);
  const m = (...xs: Array[]) => xs.reduce((p, q) => elementwise.multiply(p, q));
  const { add, subtract } = elementwise;
  return subtract(subtract(subtract(add(add(m(e(0, 0), e(1, 1), e(2, 2)), m(e(0, 1), e(1, 2), e(2, 0))), m(e(0, 2), e(1, 0), e(2, 1))),
    m(e(0, 2), e(1, 1), e(2, 0))), m(e(0, 0), e(1, 2), e(2, 1))), m(e(0, 1), e(1, 0), e(2, 2)));
}

/**
 * JAX's _cofactor_solve: det(a) and adj(a) b, finite for singular a: the last pivot replaced by the inverse of the
 * product of the others, and matrices of rank < n - 1 (whose adjugate is 0) filtered to zeros.
 */
function cofactorSolve(a: Array, b: Array): [Array, Array] {
  const n = a.shape[a.ndim - 1]!;
  if (n === 1) return [entry(a, 0, 0), b];
  const [lu0, pivots, perm] = laxLu(a);
  const dtype = a.dtype;
  const diag = diagonal(lu0);
  const odd = elementwise.equal(lax.rem(swaps(pivots), constant(2, 'int32')), constant(1, 'int32'));
  const sign = elementwise.where(odd, constant(-1, dtype), constant(1, dtype));
  const partialDet = elementwise.multiply(reductions.cumprod(diag, { axis: -1 }), manipulation.expandDims(sign, -1));
  const lastOf = (x: Array, k: number) => manipulation.reshape(sliceAxis(x, 1, k, k + 1), x.shape.slice(0, -1));
  // lu.at[..., -1, -1].set(1 / partial_det[..., -2])
  const rows = lax.broadcastInDim(lax.iota('int32', n), [n, n], [0]);
  const cols = lax.broadcastInDim(lax.iota('int32', n), [n, n], [1]);
  const corner = elementwise.logicalAnd(elementwise.equal(rows, n - 1), elementwise.equal(cols, n - 1));
  const inverse = manipulation.expandDims(elementwise.divide(constant(1, dtype), lastOf(partialDet, n - 2)), [-1, -2]);
  const lu = elementwise.where(corner, inverse, lu0);
  // matrices of rank < n - 1: the solve still overflows, and their adjugate is zero
  let d = triangularSolve(lu, creation.ones(a.shape.slice(0, -1), { dtype }), { leftSide: true, lower: false });
  d = reductions.any(elementwise.logicalOr(elementwise.isnan(d), elementwise.isinf(d)), { axis: -1 });
  const filter = manipulation.broadcastTo(manipulation.expandDims(d, [-1, -2]), [...b.shape]);
  let x = elementwise.where(filter, constant(0, dtype), b);
  x = permuteRows(x, perm);
  x = triangularSolve(lu, x, { leftSide: true, lower: true, unitDiagonal: true });
  const det = lastOf(partialDet, n - 1);
  x = manipulation.concatenate([elementwise.multiply(sliceAxis(x, 2, 0, n - 1), manipulation.expandDims(det, [-1, -2])), sliceAxis(x, 2, n - 1, n)], { axis: -2 });
  x = triangularSolve(lu, x, { leftSide: true, lower: false });
  x = elementwise.where(filter, constant(0, dtype), x);
  return [det, x];
}

const detGeneral = customJvp(function det(a: Array): Array {
  const [sign, logdet] = slogdet(a);
  return elementwise.multiply(sign, elementwise.exp(logdet));
});
detGeneral.defjvp(([x]: Array[], [g]: Array[]) => {
  const [y, z] = cofactorSolve(x!, g!);
  return [y, trace(z)];
});

/** jnp.linalg.det of [..., n, n]: closed forms for 2x2 and 3x3 (as JAX), else sign * exp(logdet) with JAX's jvp. */
export function det(a: ArrayLike): Array {
  const x = operand('jnp.linalg.det', a, 'a', true);
  const n = x.shape[x.ndim - 1]!;
  if (n === 2) return det2x2(x);
  if (n === 3) return det3x3(x);
  return detGeneral(x);
}
