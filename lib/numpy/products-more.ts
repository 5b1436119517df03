// More of jnp's products and diagonals: inner, kron, cross, trace, diag and
// diagonal, composed as jax/_src/numpy/{lax_numpy,tensor_contractions}.py
// compose them (trace masks with eye and sums; kron multiplies interleaved
// broadcasts). diagonal takes the strided slice of the flattened square block
// where JAX gathers a[..., i, j]: the same elements, and a slice's gradient
// (a pad) is the gather's (a scatter-add of distinct indices).
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { eye } from './creation.js';
import { multiply, subtract } from './elementwise.js';
import { type DotOptions, tensordot } from './linalg.js';
import { moveaxis, stack } from './manipulation.js';
import { sum } from './reductions.js';
import { dtypeOption, promote } from './util.js';

/** jnp.inner(a, b, { precision, preferredElementType }): the sum product over the last axes (a * b if either is a scalar). */
export function inner(a: ArrayLike, b: ArrayLike, options: DotOptions = {}): Array {
  const fn = 'jnp.inner';
  checkOptions(fn, options, ['precision', 'preferredElementType']);
  let x = toArray(fn, a, 'a');
  let y = toArray(fn, b, 'b');
  if (x.ndim === 0 || y.ndim === 0) {
    const preferred = dtypeOption(fn, options?.preferredElementType);
    if (preferred !== undefined) {
      x = lax.convertElementType(x, preferred);
      y = lax.convertElementType(y, preferred);
    }
    return multiply(typeof a === 'number' && preferred === undefined ? a : x, typeof b === 'number' && preferred === undefined ? b : y);
  }
  return tensordot(x, y, [-1, -1], options);
}

/** jnp.kron(a, b): the Kronecker product (the lower-rank operand gets leading unit axes). */
export function kron(a: ArrayLike, b: ArrayLike): Array {
  const fn = 'jnp.kron';
  let [x, y] = promote(fn, toArray(fn, a, 'a'), toArray(fn, b, 'b')) as [Array, Array];
  if (x.dtype === 'bool') throw new TypeError(`${fn}: mul does not accept dtype bool (the Kronecker product of bool arrays)`);
  if (x.ndim < y.ndim) x = lax.reshape(x, [...new globalThis.Array<number>(y.ndim - x.ndim).fill(1), ...x.shape]);
  if (y.ndim < x.ndim) y = lax.reshape(y, [...new globalThis.Array<number>(x.ndim - y.ndim).fill(1), ...y.shape]);
  const interleaved = x.shape.flatMap((d, i) => [d, y.shape[i]!]);
  const xb = lax.broadcastInDim(x, interleaved, x.shape.map((_, i) => 2 * i));
  const yb = lax.broadcastInDim(y, interleaved, y.shape.map((_, i) => 2 * i + 1));
  return lax.reshape(lax.mul(xb, yb), x.shape.map((d, i) => d * y.shape[i]!));
}

export interface CrossOptions {
  axisa?: number;
  axisb?: number;
  axisc?: number;
  /** Overrides axisa, axisb and axisc. */
  axis?: number | null;
}

function component(x: Array, k: number): Array {
  const last = x.ndim - 1;
  return lax.reshape(lax.sliceInDim(x, k, k + 1, 1, last), x.shape.slice(0, last));
}

/** jnp.cross(a, b, { axisa, axisb, axisc, axis }): the cross product of 2- or 3-vectors (two 2-vectors give the z component). */
export function cross(a: ArrayLike, b: ArrayLike, options: CrossOptions = {}): Array {
  const fn = 'jnp.cross';
  checkOptions(fn, options, ['axisa', 'axisb', 'axisc', 'axis']);
  const o = options ?? {};
  const hasAxis = o.axis !== undefined && o.axis !== null;
  const x = moveaxis(toArray(fn, a, 'a'), hasAxis ? o.axis! : (o.axisa ?? -1), -1);
  const y = moveaxis(toArray(fn, b, 'b'), hasAxis ? o.axis! : (o.axisb ?? -1), -1);
  const m = x.shape[x.ndim - 1]!;
  const k = y.shape[y.ndim - 1]!;
  if ((m !== 2 && m !== 3) || (k !== 2 && k !== 3)) throw new ValueError(`${fn}: Dimension must be either 2 or 3 for cross product, got vectors of lengths ${m} and ${k}`);
  const [a0, a1] = [component(x, 0), component(x, 1)];
  const [b0, b1] = [component(y, 0), component(y, 1)];
  if (m === 2 && k === 2) return subtract(multiply(a0, b1), multiply(a1, b0));
  const a2 = m === 3 ? component(x, 2) : lax.broadcastInDim(lax.convertElementType(0, a0.dtype), [...a0.shape], []);
  const b2 = k === 3 ? component(y, 2) : lax.broadcastInDim(lax.convertElementType(0, b0.dtype), [...b0.shape], []);
  const c = stack([
    subtract(multiply(a1, b2), multiply(a2, b1)),
    subtract(multiply(a2, b0), multiply(a0, b2)),
    subtract(multiply(a0, b1), multiply(a1, b0)),
  ]);
  return moveaxis(c, 0, hasAxis ? o.axis! : (o.axisc ?? -1));
}

export interface DiagonalOptions {
  offset?: number;
  axis1?: number;
  axis2?: number;
}

function diagonalArgs(fn: string, x: Array, o: DiagonalOptions): { offset: number; axis1: number; axis2: number } {
  if (x.ndim < 2) throw new ValueError(`${fn}: ${fn === 'jnp.trace' ? 'trace' : 'diagonal'} requires an array of at least two dimensions, got shape ${show(x.shape)}`);
  const offset = o.offset ?? 0;
  if (typeof offset !== 'number' || !Number.isInteger(offset)) throw new TypeError(`${fn}: offset must be an integer, got ${show(offset)}`);
  const axis1 = normalizeAxis(fn, o.axis1 ?? 0, x.ndim, 'axis1');
  const axis2 = normalizeAxis(fn, o.axis2 ?? 1, x.ndim, 'axis2');
  if (axis1 === axis2) throw new ValueError(`${fn}: axis1 and axis2 can not be same. axis1=${o.axis1 ?? 0} and axis2=${o.axis2 ?? 1}`);
  return { offset, axis1, axis2 };
}

function offsetOptions<T extends object>(offset: number | T | undefined): T {
  if (offset === undefined) return {} as T;
  return (typeof offset === 'number' ? { offset } : offset ?? {}) as T;
}

/** jnp.diagonal(a, { offset, axis1, axis2 }) (or diagonal(a, offset)): the diagonal over axis1/axis2 as a new last axis. */
export function diagonal(a: ArrayLike, options: number | DiagonalOptions = {}): Array {
  const fn = 'jnp.diagonal';
  const o = offsetOptions<DiagonalOptions>(options);
  checkOptions(fn, o, ['offset', 'axis1', 'axis2']);
  const x = toArray(fn, a, 'a');
  const { offset, axis1, axis2 } = diagonalArgs(fn, x, o);
  const moved = moveaxis(x, [axis1, axis2], [-2, -1]);
  const rows = x.shape[axis1]!;
  const cols = x.shape[axis2]!;
  const size = Math.max(0, Math.min(rows + Math.min(offset, 0), cols - Math.max(offset, 0)));
  const batch = moved.shape.slice(0, -2);
  const r0 = size === 0 ? 0 : Math.max(-offset, 0);
  const c0 = size === 0 ? 0 : Math.max(offset, 0);
  const start = [...batch.map(() => 0), r0, c0];
  const block = lax.slice(moved, start, [...batch, r0 + size, c0 + size]);
  const flat = lax.reshape(block, [...batch, size * size]);
  // element (i, i) of the size x size block sits at flat index i * (size + 1)
  return lax.slice(flat, batch.map(() => 0).concat(0), [...batch, size * size], [...batch.map(() => 1), size + 1]);
}

export interface TraceOptions extends DiagonalOptions {
  dtype?: DType | null;
}

/** jnp.trace(a, { offset, axis1, axis2, dtype }) (or trace(a, offset)): the sum of a diagonal; small ints and bools sum as int32. */
export function trace(a: ArrayLike, options: number | TraceOptions = {}): Array {
  const fn = 'jnp.trace';
  const o = offsetOptions<TraceOptions>(options);
  checkOptions(fn, o, ['offset', 'axis1', 'axis2', 'dtype']);
  const x = toArray(fn, a, 'a');
  const { offset, axis1, axis2 } = diagonalArgs(fn, x, o);
  const dtype = dtypeOption(fn, o.dtype);
  const moved = moveaxis(x, [axis1, axis2], [-2, -1]);
  const mask = lax.broadcastInDim(eye(x.shape[axis1]!, x.shape[axis2]!, { k: offset, dtype: 'bool' }), [...moved.shape], [moved.ndim - 2, moved.ndim - 1]);
  const zeros = lax.broadcastInDim(lax.convertElementType(0, moved.dtype), [...moved.shape], []);
  return sum(lax.select(mask, moved, zeros), { axis: [-2, -1], dtype });
}

/** jnp.diag(v, k = 0): a 1-D v becomes a square matrix with v on diagonal k; a 2-D v gives its diagonal k. */
export function diag(v: ArrayLike, k = 0): Array {
  const fn = 'jnp.diag';
  if (typeof k !== 'number' || !Number.isInteger(k)) throw new TypeError(`${fn}: k must be an integer, got ${show(k)}`);
  const x = toArray(fn, v, 'v');
  if (x.ndim === 2) return diagonal(x, { offset: k });
  if (x.ndim !== 1) throw new ValueError(`${fn}: diag input must be 1d or 2d, got shape ${show(x.shape)}`);
  const n = x.shape[0]! + Math.abs(k);
  const zero = lax.convertElementType(0, x.dtype);
  const padded = lax.pad(x, zero, [[Math.max(0, -k), Math.max(0, k), 0]]);
  const mask = eye(n, n, { k, dtype: 'bool' });
  return lax.select(mask, lax.broadcastInDim(padded, [n, n], [0]), lax.broadcastInDim(zero, [n, n], []));
}
