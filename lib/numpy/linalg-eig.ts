// jnp.linalg's QR / eigh / SVD family (jax/_src/numpy/linalg.py): qr, eigh,
// eigvalsh, svd, lstsq, pinv (with JAX's custom_jvp, Golub & Pereyra's
// derivative), norm (vector and matrix norms), matrixPower. Each is the
// lax.linalg primitive plus the same jnp composition JAX writes, so values,
// dtypes and derivatives (norm's NaN gradient at 0 included) follow JAX.
import type { Array, ArrayLike } from '../core/array.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';
import * as laxLinalg from '../lax/linalg-eig.js';
import { customJvp } from '../transforms/custom-derivatives.js';
import { eye, zeros } from './creation.js';
import { abs, add, divide, greater, greaterEqual, logicalAnd, multiply, negative, notEqual, power, sqrt, subtract, where } from './elementwise.js';
import { matmul } from './linalg.js';
import { inv } from './linalg-lu.js';
import { broadcastTo, expandDims, moveaxis, ravel, swapaxes } from './manipulation.js';
import { max, min, sum } from './reductions.js';
import { promoteInexact } from './util.js';

const HIGHEST = { precision: 'highest' };
const EPS = { float16: 2 ** -10, bfloat16: 2 ** -7, float32: 2 ** -23, float64: 2 ** -52 } as Record<string, number>;

/** The operand promoted to a float dtype jnp.linalg computes in (float32 or float64), rank >= 2. */
function matrices(fn: string, a: unknown, arg = 'a'): Array {
  let [x] = promoteInexact(fn, a) as [Array];
  if (x.dtype === 'float16' || x.dtype === 'bfloat16') {
    throw new ValueError(`${fn}: ${x.dtype} is not supported (LAPACK computes in float32 or float64); cast ${arg} first`);
  }
  if (x.ndim < 2) throw new ValueError(`${fn}: ${arg} must have at least 2 dimensions, got shape ${show(x.shape)}`);
  return x;
}

const mT = (x: Array) => swapaxes(x, -1, -2);

export interface QrOptions {
  /** 'reduced' (default): q [..., m, k], r [..., k, n]; 'complete': q [..., m, m], r [..., m, n]; 'r': the reduced r alone (as JAX). */
  mode?: 'reduced' | 'complete' | 'r';
}

/** jnp.linalg.qr(a, { mode }): [q, r], or the reduced r alone with mode 'r'. */
export function qr(a: ArrayLike, options: QrOptions & { mode: 'r' }): Array;
export function qr(a: ArrayLike, options?: QrOptions): [Array, Array];
export function qr(a: ArrayLike, options: QrOptions = {}): Array | [Array, Array] {
  const fn = 'jnp.linalg.qr';
  checkOptions(fn, options, ['mode']);
  const mode = options.mode ?? 'reduced';
  if (mode !== 'reduced' && mode !== 'complete' && mode !== 'r') {
    throw new ValueError(`${fn}: Unsupported QR decomposition mode ${show(mode)}; expected 'reduced', 'complete' or 'r'`);
  }
  const [q, r] = laxLinalg.qr(matrices(fn, a), { fullMatrices: mode === 'complete' });
  return mode === 'r' ? r : [q, r];
}

export interface EighOptions {
  /** Which triangle to read: 'L' (default) or 'U'. */
  UPLO?: 'L' | 'U' | null;
  /** Decompose (a + aᵀ)/2 (default true, as JAX). */
  symmetrizeInput?: boolean;
}

function lowerOption(fn: string, options: EighOptions): boolean {
  const uplo = options.UPLO ?? 'L';
  if (uplo !== 'L' && uplo !== 'U') throw new ValueError(`${fn}: UPLO must be 'L' or 'U', got ${show(uplo)}`);
  return uplo === 'L';
}

/** jnp.linalg.eigh(a, { UPLO, symmetrizeInput }): [eigenvalues (ascending), eigenvectors (columns)]. */
export function eigh(a: ArrayLike, options: EighOptions = {}): [Array, Array] {
  const fn = 'jnp.linalg.eigh';
  checkOptions(fn, options, ['UPLO', 'symmetrizeInput']);
  const [v, w] = laxLinalg.eigh(matrices(fn, a), { lower: lowerOption(fn, options), symmetrizeInput: options.symmetrizeInput ?? true });
  return [w, v];
}

/** jnp.linalg.eigvalsh(a, { UPLO, symmetrizeInput }): the eigenvalues, ascending. */
export function eigvalsh(a: ArrayLike, options: EighOptions = {}): Array {
  const fn = 'jnp.linalg.eigvalsh';
  checkOptions(fn, options, ['UPLO', 'symmetrizeInput']);
  return laxLinalg.eigh(matrices(fn, a), { lower: lowerOption(fn, options), symmetrizeInput: options.symmetrizeInput ?? true })[1];
}

export interface SvdOptions {
  /** u [..., m, m] and vh [..., n, n] (default true), else [..., m, k] and [..., k, n]. */
  fullMatrices?: boolean;
  /** [u, s, vh] (default true) or s alone. */
  computeUv?: boolean;
  /** Only false is supported (the general SVD). */
  hermitian?: boolean;
}

/** jnp.linalg.svd(a, { fullMatrices, computeUv, hermitian: false }): [u, s, vh] with s descending, or s alone. */
export function svd(a: ArrayLike, options: SvdOptions & { computeUv: false }): Array;
export function svd(a: ArrayLike, options?: SvdOptions): [Array, Array, Array];
export function svd(a: ArrayLike, options: SvdOptions = {}): Array | [Array, Array, Array] {
  const fn = 'jnp.linalg.svd';
  checkOptions(fn, options, ['fullMatrices', 'computeUv', 'hermitian']);
  if (options.hermitian) throw new ValueError(`${fn}: hermitian=true is not supported yet; use jnp.linalg.eigh for a symmetric matrix`);
  const x = matrices(fn, a);
  const fullMatrices = options.fullMatrices ?? true;
  if (options.computeUv === false) return laxLinalg.svd(x, { fullMatrices, computeUv: false });
  return laxLinalg.svd(x, { fullMatrices, computeUv: true });
}

export interface LstsqOptions {
  /** Singular values below rcond·s[0] count as zero (default eps·max(m, n); negative: eps). */
  rcond?: number | null;
  /** NumPy's empty residuals when rank < n or m <= n (default false: always the residuals, as JAX). */
  numpyResid?: boolean;
}

/** jnp.linalg.lstsq(a, b, { rcond }): [x, residuals, rank, s], JAX's SVD formulation. */
export function lstsq(a: ArrayLike, b: ArrayLike, options: LstsqOptions = {}): [Array, Array, Array, Array] {
  const fn = 'jnp.linalg.lstsq';
  checkOptions(fn, options, ['rcond', 'numpyResid']);
  if (options.numpyResid) {
    throw new ValueError(`${fn}: numpyResid=true gives a value-dependent shape; jaxon, like jax.jit, supports only numpyResid=false`);
  }
  let [x, y] = promoteInexact(fn, a, b) as [Array, Array];
  if (x.ndim !== 2) throw new TypeError(`${fn}: ${x.ndim}-dimensional array given. Array must be two-dimensional`);
  if (y.ndim !== 1 && y.ndim !== 2) throw new TypeError(`${fn}: ${y.ndim}-dimensional array given. Array must be one or two-dimensional`);
  if (x.shape[0] !== y.shape[0]) throw new ValueError(`${fn}: Leading dimensions of input arrays must match, got shapes ${show(x.shape)} and ${show(y.shape)}`);
  const vector = y.ndim === 1;
  if (vector) y = expandDims(y, 1);
  x = matrices(fn, x);
  const [m, n] = x.shape as [number, number];
  const eps = EPS[x.dtype]!;
  const rcond = options.rcond === undefined || options.rcond === null ? eps * Math.max(m, n) : options.rcond < 0 ? eps : options.rcond;
  const [u, s, vt] = laxLinalg.svd(x, { fullMatrices: false });
  const s0 = s.index([0, 1]);
  const mask = logicalAnd(greater(s, 0), greaterEqual(s, multiply(s0, rcond)));
  const rank = sum(mask);
  const safeS = where(mask, s, 1);
  const sInv = expandDims(where(mask, divide(1, safeS), 0), 1);
  const uTb = matmul(mT(u), y, HIGHEST);
  let solution = matmul(mT(vt), multiply(sInv, uTb), HIGHEST);
  const residual = subtract(y, matmul(x, solution, HIGHEST));
  const resid = power(norm(residual, { axis: 0 }), 2);
  if (vector) solution = ravel(solution);
  return [solution, resid, rank, s];
}

function pinvPrimal(a: Array, rtol: number | null): Array {
  const m = a.shape.at(-2)!;
  const n = a.shape.at(-1)!;
  const tol = rtol ?? 10 * Math.max(m, n) * EPS[a.dtype]!;
  const [u, s, vh] = laxLinalg.svd(a, { fullMatrices: false });
  const cutoff = multiply(s.index(...a.shape.slice(0, -2).map(() => null), [0, 1]), tol);
  const kept = where(greater(s, cutoff), s, Infinity);
  return matmul(mT(vh), divide(mT(u), expandDims(kept, -1)), HIGHEST);
}

const pinvJvp = customJvp((a: Array, rtol: number | null) => pinvPrimal(a, rtol), { nondiffArgnums: [1] });
pinvJvp.defjvp((rtol: number | null, [a]: Array[], [aDot]: Array[]) => {
  const p = pinvPrimal(a!, rtol);
  const [m, n] = a!.shape.slice(-2) as [number, number];
  const mm = (x: Array, y: Array) => matmul(x, y, HIGHEST);
  let pDot: Array;
  if (m >= n) {
    const s = mm(mm(p, mT(p)), mT(aDot!));
    const t = mm(mm(mT(aDot!), mT(p)), p);
    // -(p·ȧ)·p + s - (s·a)·p + t - (p·a)·t
    pDot = subtract(add(subtract(add(negative(mm(mm(p, aDot!), p)), s), mm(mm(s, a!), p)), t), mm(mm(p, a!), t));
  } else {
    const s = mm(p, mm(mT(p), mT(aDot!)));
    const t = mm(mT(aDot!), mm(mT(p), p));
    // -p·(ȧ·p) + s - s·(a·p) + t - p·(a·t)
    pDot = subtract(add(subtract(add(negative(mm(p, mm(aDot!, p))), s), mm(s, mm(a!, p))), t), mm(p, mm(a!, t)));
  }
  return [p, pDot];
});

export interface PinvOptions {
  /** Singular values at most rtol·s_max count as zero (default 10·max(m, n)·eps). */
  rtol?: number | null;
  /** NumPy's older name for rtol. */
  rcond?: number | null;
  /** Only false is supported. */
  hermitian?: boolean;
}

/** jnp.linalg.pinv(a, { rtol | rcond }): the Moore-Penrose pseudo-inverse, with JAX's custom jvp. */
export function pinv(a: ArrayLike, options: PinvOptions = {}): Array {
  const fn = 'jnp.linalg.pinv';
  checkOptions(fn, options, ['rtol', 'rcond', 'hermitian']);
  if (options.hermitian) throw new ValueError(`${fn}: hermitian=true is not supported yet`);
  if (options.rcond !== undefined && options.rcond !== null && options.rtol !== undefined && options.rtol !== null) {
    throw new ValueError(`${fn}: only one of rtol and rcond may be specified, got rtol=${options.rtol} and rcond=${options.rcond}`);
  }
  const rtol = options.rtol ?? options.rcond ?? null;
  if (rtol !== null && typeof rtol !== 'number') throw new TypeError(`${fn}: rtol must be a number, got ${show(rtol)}`);
  const x = matrices(fn, a);
  const m = x.shape.at(-2)!;
  const n = x.shape.at(-1)!;
  if (m === 0 || n === 0) return zeros([...x.shape.slice(0, -2), n, m], { dtype: x.dtype });
  return pinvJvp(x, rtol) as Array;
}

export type NormOrder = number | 'fro' | 'nuc' | null;

export interface NormOptions {
  ord?: NormOrder;
  axis?: number | number[] | null;
  keepdims?: boolean;
}

function vectorNorm(x: Array, ord: number, axis: number[], keepdims: boolean): Array {
  if (ord === 2) return sqrt(sum(multiply(x, x), { axis, keepdims }));
  if (ord === Infinity) return max(abs(x), { axis, keepdims, initial: 0 });
  if (ord === -Infinity) return min(abs(x), { axis, keepdims });
  if (ord === 0) return sum(notEqual(x, 0), { axis, keepdims, dtype: x.dtype });
  if (ord === 1) return sum(abs(x), { axis, keepdims });
  return power(sum(power(abs(x), ord), { axis, keepdims }), 1 / ord);
}

/** jnp.linalg.norm(x, { ord, axis, keepdims }): vector norms over one axis, matrix norms over two, as JAX. */
export function norm(x: ArrayLike, options: NormOptions = {}): Array {
  const fn = 'jnp.linalg.norm';
  checkOptions(fn, options, ['ord', 'axis', 'keepdims']);
  const [a] = promoteInexact(fn, x) as [Array];
  const ord = options.ord ?? null;
  const keepdims = options.keepdims ?? false;
  if (ord !== null && typeof ord !== 'number' && ord !== 'fro' && ord !== 'nuc') {
    throw new ValueError(`${fn}: Invalid order ${show(ord)} for a norm; expected a number, 'fro', 'nuc' or null`);
  }
  let axis: number[];
  if (options.axis === undefined || options.axis === null) {
    if (ord === null) return sqrt(sum(multiply(a, a), { keepdims }));
    axis = a.shape.map((_, i) => i);
  } else {
    axis = (typeof options.axis === 'number' ? [options.axis] : options.axis).map((d) => normalizeAxis(fn, d, a.ndim));
  }
  if (axis.length === 1) {
    if (typeof ord === 'string') throw new ValueError(`${fn}: Invalid order '${ord}' for vector norm.`);
    return vectorNorm(a, ord ?? 2, axis, keepdims);
  }
  if (axis.length !== 2) {
    throw new ValueError(`${fn}: Improper number of axes for norm: axis=${show(options.axis ?? null)}. Pass one axis to compute a vector-norm, or two axes to compute a matrix-norm.`);
  }
  let [row, col] = axis as [number, number];
  if (ord === null || ord === 'fro') return sqrt(sum(multiply(a, a), { axis, keepdims }));
  if (ord === 1 || ord === -1) {
    if (!keepdims && col > row) col -= 1;
    const sums = sum(abs(a), { axis: row, keepdims });
    return ord === 1 ? max(sums, { axis: col, keepdims, initial: 0 }) : min(sums, { axis: col, keepdims });
  }
  if (ord === Infinity || ord === -Infinity) {
    if (!keepdims && row > col) row -= 1;
    const sums = sum(abs(a), { axis: col, keepdims });
    return ord === Infinity ? max(sums, { axis: row, keepdims, initial: 0 }) : min(sums, { axis: row, keepdims });
  }
  if (ord === 'nuc' || ord === 2 || ord === -2) {
    const s = laxLinalg.svd(matrices(fn, moveaxis(a, [row, col], [-2, -1])), { computeUv: false });
    const y = ord === 2 ? max(s, { axis: -1, initial: 0 }) : ord === -2 ? min(s, { axis: -1 }) : sum(s, { axis: -1 });
    return keepdims ? expandDims(y, [row, col].sort((p, q) => p - q)) : y;
  }
  throw new ValueError(`${fn}: Invalid order '${ord}' for matrix norm.`);
}

/** jnp.linalg.matrixPower(a, n): a multiplied by itself n times (binary powering, as JAX); negative n needs inv. */
export function matrixPower(a: ArrayLike, n: number): Array {
  const fn = 'jnp.linalg.matrixPower';
  const [x] = promoteInexact(fn, a) as [Array];
  if (x.ndim < 2) throw new TypeError(`${fn}: ${x.ndim}-dimensional array given. Array must be at least two-dimensional`);
  if (x.shape.at(-1) !== x.shape.at(-2)) throw new TypeError(`${fn}: Last 2 dimensions of the array must be square, got shape ${show(x.shape)}`);
  if (!Number.isInteger(n)) throw new TypeError(`${fn}: exponent must be an integer, got ${show(n)}`);
  if (n === 0) return broadcastTo(eye(x.shape.at(-1)!, null, { dtype: x.dtype }), [...x.shape]);
  // JAX: a negative power is the inverse's positive power
  const base = n < 0 ? inv(x) : x;
  const power = Math.abs(n);
  if (power === 1) return base;
  if (power === 2) return matmul(base, base);
  if (power === 3) return matmul(matmul(base, base), base);
  let z: Array | null = null;
  let result: Array | null = null;
  let k = power;
  while (k > 0) {
    z = z === null ? base : matmul(z, z);
    const bit = k % 2;
    k = Math.floor(k / 2);
    if (bit) result = result === null ? z : matmul(result, z);
  }
  return result!;
}
