// jnp's order statistics and weighted means: quantile, percentile, median
// (sorting along the axis and interpolating, as jax/_src/numpy/reductions.py's
// _quantile does, so values and gradients follow JAX's: a stable sort, then a
// gather of the neighbouring order statistics), average and ptp.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis, shapesEqual } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { sort as laxSort } from '../lax/sort.js';
import { divide, multiply } from './elementwise.js';
import { type Axis, amax, amin, any, mean, normalizeAxisOption, sum } from './reductions.js';
import { asArray, broadcastToShape, checkBoolean, promoteInexact } from './util.js';

export type QuantileMethod = 'linear' | 'lower' | 'higher' | 'nearest' | 'midpoint';
const METHODS: readonly string[] = ['linear', 'lower', 'higher', 'nearest', 'midpoint'];

export interface QuantileOptions {
  /** The axis or axes to reduce; null or absent: the flattened array. */
  axis?: Axis;
  /** How to pick between the two order statistics around the quantile (default 'linear'). */
  method?: QuantileMethod;
  keepdims?: boolean;
}

function constant(value: number, like: Array): Array {
  return lax.broadcastInDim(lax.convertElementType(value, like.dtype), [...like.shape], []);
}

/**
 * JAX's _quantile (without weights): `a` already inexact, `q` a float array of rank 0 or 1. With `squashNans`
 * (nanquantile) NaNs sort last and each slice interpolates among its non-NaN count; else a slice with a NaN is NaN.
 */
function quantileOf(fn: string, a0: Array, q: Array, axisOption: unknown, method: string, keepdims: boolean, squashNans = false): Array {
  if (!METHODS.includes(method)) throw new ValueError(`${fn}: method can only be 'linear', 'lower', 'higher', 'midpoint' or 'nearest', got ${show(method)}`);
  if (!isFloating(q.dtype)) throw new TypeError(`${fn}: q must be a floating-point array or number, got dtype ${q.dtype}`);
  if (q.ndim > 1) throw new ValueError(`${fn}: q must be have rank <= 1, got shape ${show(q.shape)}`);
  let a = a0;
  let keepdim: number[] | null = null;
  let axis: number;
  if (axisOption === undefined || axisOption === null) {
    if (keepdims) keepdim = a.shape.map(() => 1);
    a = lax.reshape(a, [a.size]);
    axis = 0;
  } else if (globalThis.Array.isArray(axisOption)) {
    const axes = normalizeAxisOption(fn, axisOption, a.ndim);
    keepdim = a.shape.map((d, i) => (axes.includes(i) ? 1 : d));
    const keep = a.shape.map((_, i) => i).filter((i) => !axes.includes(i));
    // JAX's permutation: each kept axis swapped to the front in turn (this fixes the order ties break in)
    const dimensions = a.shape.map((_, i) => i);
    keep.forEach((s, i) => {
      [dimensions[i], dimensions[s]] = [dimensions[s]!, dimensions[i]!];
    });
    const touched = axes.length === 0 ? 1 : a.shape.filter((_, i) => axes.includes(i)).reduce((p, d) => p * d, 1);
    a = lax.reshape(a, [...keep.map((i) => a.shape[i]!), touched], dimensions);
    axis = a.ndim - 1;
  } else {
    axis = normalizeAxis(fn, axisOption, a.ndim);
  }
  const n = a.shape[axis]!;
  if (n === 0) throw new ValueError(`${fn}: cannot take a quantile of an empty axis (axis ${axis} of shape ${show(a.shape)})`);
  const qRank = q.ndim;
  let lowValue: Array;
  let highValue: Array;
  let lowWeight: Array;
  let highWeight: Array;
  if (squashNans) {
    [lowValue, highValue, lowWeight, highWeight] = nanOrderStatistics(a, q, axis, keepdims);
  } else {
    // a slice with a NaN is all NaN, so every statistic of it is NaN
    const hasNaN = any(lax.ne(a, a), { axis, keepdims: true });
    a = lax.select(broadcastToShape(hasNaN, a.shape), constant(NaN, a), a);
    a = laxSort(a, { dimension: axis });
    const position = lax.mul(q, lax.convertElementType(n - 1, q.dtype));
    let low = lax.floor(position);
    let high = lax.ceil(position);
    highWeight = lax.sub(position, low);
    lowWeight = lax.sub(lax.convertElementType(1, q.dtype), highWeight);
    low = lax.convertElementType(lax.clamp(lax.convertElementType(0, q.dtype), low, lax.convertElementType(n - 1, q.dtype)), 'int32');
    high = lax.convertElementType(lax.clamp(lax.convertElementType(0, q.dtype), high, lax.convertElementType(n - 1, q.dtype)), 'int32');
    const sliceSizes = [...a.shape];
    sliceSizes[axis] = 1;
    const offsetCount = keepdims ? a.ndim : a.ndim - 1;
    const dnums = {
      offsetDims: globalThis.Array.from({ length: offsetCount }, (_, i) => qRank + i),
      collapsedSliceDims: keepdims ? [] : [axis],
      startIndexMap: [axis],
    };
    const sorted = a;
    const at = (index: Array): Array => lax.gather(sorted, lax.reshape(index, [...index.shape, 1]), dnums, sliceSizes, { mode: 'clip' });
    lowValue = at(low);
    highValue = at(high);
    if (qRank === 1) {
      lowWeight = lax.broadcastInDim(lowWeight, [...lowValue.shape], [0]);
      highWeight = lax.broadcastInDim(highWeight, [...highValue.shape], [0]);
    } else {
      lowWeight = lax.broadcastInDim(lowWeight, [...lowValue.shape], []);
      highWeight = lax.broadcastInDim(highWeight, [...highValue.shape], []);
    }
  }
  let result: Array;
  switch (method as QuantileMethod) {
    case 'linear':
      result = lax.add(lax.mul(lax.convertElementType(lowValue, q.dtype), lowWeight), lax.mul(lax.convertElementType(highValue, q.dtype), highWeight));
      break;
    case 'lower': result = lowValue; break;
    case 'higher': result = highValue; break;
    case 'nearest': result = lax.select(lax.le(highWeight, constant(0.5, highWeight)), lowValue, highValue); break;
    case 'midpoint': result = lax.mul(lax.add(lowValue, highValue), constant(0.5, lowValue)); break;
  }
  if (keepdims && keepdim) result = lax.reshape(result, qRank > 0 ? [q.shape[0]!, ...keepdim] : keepdim);
  return lax.convertElementType(result, a.dtype);
}

/**
 * JAX's squash_nans branch of _quantile: NaNs made positive so they sort last, then per slice the order statistics
 * around q * (count - 1) of its `count` non-NaN values (index 0 of an all-NaN slice: NaN), gathered at
 * [q..., reduced...] by indices that are iotas but along `axis`. Returns the low and high values and weights.
 */
function nanOrderStatistics(a0: Array, q0: Array, axis: number, keepdims: boolean): [Array, Array, Array, Array] {
  const isNaN = lax.ne(a0, a0);
  const a = laxSort(lax.select(isNaN, constant(NaN, a0), a0), { dimension: axis });
  const counts = sum(lax.bitwiseNot(lax.ne(a, a)), { axis, dtype: q0.dtype, keepdims });
  const reduced = [...counts.shape];
  const qRank = q0.ndim;
  const outShape = [...q0.shape, ...reduced];
  const q = lax.broadcastInDim(q0, outShape, qRank ? [0] : []);
  const countsOut = lax.broadcastInDim(counts, outShape, reduced.map((_, i) => i + qRank));
  const one = constant(1, countsOut);
  const position = lax.mul(q, lax.sub(countsOut, one));
  const low = lax.floor(position);
  const high = lax.ceil(position);
  const highWeight = lax.sub(position, low);
  const lowWeight = lax.sub(constant(1, highWeight), highWeight);
  const last = lax.sub(countsOut, one);
  const clip = (i: Array) => lax.convertElementType(lax.max(constant(0, i), lax.min(i, last)), 'int32');
  // a[index] with one index array per axis of a: iotas over the output, `axis` the order statistic
  const gatherAt = (k: Array): Array => {
    const coords: Array[] = [];
    for (let d = 0; d < a.ndim; d++) {
      if (d === axis) coords.push(k);
      else {
        const outAxis = qRank + (keepdims || d < axis ? d : d - 1);
        coords.push(lax.broadcastedIota('int32', outShape, outAxis));
      }
    }
    const indices = lax.concatenate(coords.map((c) => lax.reshape(c, [...outShape, 1])), outShape.length);
    const dnums = { offsetDims: [], collapsedSliceDims: a.shape.map((_, i) => i), startIndexMap: a.shape.map((_, i) => i) };
    return lax.gather(a, indices, dnums, a.shape.map(() => 1), { mode: 'clip' });
  };
  return [gatherAt(clip(low)), gatherAt(clip(high)), lowWeight, highWeight];
}

function quantileArgs(fn: string, options: QuantileOptions): { method: string; keepdims: boolean } {
  checkOptions(fn, options, ['axis', 'method', 'keepdims']);
  const method = options?.method ?? 'linear';
  if (typeof method !== 'string') throw new TypeError(`${fn}: method must be a string, got ${show(method)}`);
  return { method, keepdims: checkBoolean(fn, options?.keepdims, 'keepdims') };
}

/**
 * jnp.quantile(a, q, { axis, method, keepdims }): the q-th quantiles (q in
 * [0, 1], a number or a vector) along `axis`; a vector q adds a leading axis.
 * Integer inputs give float32; a slice containing NaN gives NaN.
 */
export function quantile(a: ArrayLike, q: ArrayLike, options: QuantileOptions = {}): Array {
  const fn = 'jnp.quantile';
  const { method, keepdims } = quantileArgs(fn, options);
  const [x] = promoteInexact(fn, asArray(fn, a, 'a'));
  return quantileOf(fn, x!, toArray(fn, q, 'q'), options?.axis, method, keepdims);
}

/** jnp.percentile(a, q, { axis, method, keepdims }): quantile(a, q / 100). */
export function percentile(a: ArrayLike, q: ArrayLike, options: QuantileOptions = {}): Array {
  const fn = 'jnp.percentile';
  const { method, keepdims } = quantileArgs(fn, options);
  const [x] = promoteInexact(fn, asArray(fn, a, 'a'));
  const [qq] = promoteInexact(fn, toArray(fn, q, 'q'));
  return quantileOf(fn, x!, lax.div(qq!, lax.convertElementType(100, qq!.dtype)), options?.axis, method, keepdims);
}

/** jnp.median(a, { axis, keepdims }): the 0.5 quantile by the 'midpoint' method, as JAX computes it. */
export function median(a: ArrayLike, options: { axis?: Axis; keepdims?: boolean } = {}): Array {
  const fn = 'jnp.median';
  checkOptions(fn, options, ['axis', 'keepdims']);
  const [x] = promoteInexact(fn, asArray(fn, a, 'a'));
  return quantileOf(fn, x!, toArray(fn, 0.5, 'q'), options?.axis, 'midpoint', checkBoolean(fn, options?.keepdims, 'keepdims'));
}

/**
 * jnp.nanquantile(a, q, { axis, method, keepdims }): quantile ignoring NaNs (each slice's non-NaN values); an
 * all-NaN slice gives NaN.
 */
export function nanquantile(a: ArrayLike, q: ArrayLike, options: QuantileOptions = {}): Array {
  const fn = 'jnp.nanquantile';
  const { method, keepdims } = quantileArgs(fn, options);
  const [x] = promoteInexact(fn, asArray(fn, a, 'a'));
  return quantileOf(fn, x!, toArray(fn, q, 'q'), options?.axis, method, keepdims, true);
}

/** jnp.nanpercentile(a, q, { axis, method, keepdims }): nanquantile(a, q / 100). */
export function nanpercentile(a: ArrayLike, q: ArrayLike, options: QuantileOptions = {}): Array {
  const fn = 'jnp.nanpercentile';
  const { method, keepdims } = quantileArgs(fn, options);
  const [x] = promoteInexact(fn, asArray(fn, a, 'a'));
  const [qq] = promoteInexact(fn, toArray(fn, q, 'q'));
  return quantileOf(fn, x!, lax.div(qq!, lax.convertElementType(100, qq!.dtype)), options?.axis, method, keepdims, true);
}

/** jnp.nanmedian(a, { axis, keepdims }): nanquantile(a, 0.5) by the 'midpoint' method, as JAX computes it. */
export function nanmedian(a: ArrayLike, options: { axis?: Axis; keepdims?: boolean } = {}): Array {
  const fn = 'jnp.nanmedian';
  checkOptions(fn, options, ['axis', 'keepdims']);
  const [x] = promoteInexact(fn, asArray(fn, a, 'a'));
  return quantileOf(fn, x!, toArray(fn, 0.5, 'q'), options?.axis, 'midpoint', checkBoolean(fn, options?.keepdims, 'keepdims'), true);
}

export interface AverageOptions {
  axis?: Axis;
  /** Weights of a's shape, or of the shape of a's `axis` dimensions. */
  weights?: ArrayLike | null;
  /** Also return the sum of the weights (broadcast to the average's shape). */
  returned?: boolean;
  keepdims?: boolean;
}

/** jnp.average(a, { axis, weights, returned, keepdims }): the weighted mean; with `returned`, [average, sumOfWeights]. */
export function average(a: ArrayLike, options: AverageOptions & { returned: true }): [Array, Array];
export function average(a: ArrayLike, options?: AverageOptions): Array;
export function average(a: ArrayLike, options: AverageOptions = {}): Array | [Array, Array] {
  const fn = 'jnp.average';
  checkOptions(fn, options, ['axis', 'weights', 'returned', 'keepdims']);
  const o = options ?? {};
  const keepdims = checkBoolean(fn, o.keepdims, 'keepdims');
  const returned = checkBoolean(fn, o.returned, 'returned');
  const x0 = asArray(fn, a, 'a');
  const axes = normalizeAxisOption(fn, o.axis, x0.ndim);
  let avg: Array;
  let weightsSum: Array;
  if (o.weights === undefined || o.weights === null) {
    const [x] = promoteInexact(fn, x0);
    avg = mean(x!, { axis: o.axis, keepdims });
    weightsSum = lax.convertElementType(axes.reduce((p, d) => p * x!.shape[d]!, 1), avg.dtype);
  } else {
    let [x, w] = promoteInexact(fn, x0, asArray(fn, o.weights, 'weights')) as [Array, Array];
    if (!shapesEqual(x.shape, w.shape)) {
      if (o.axis === undefined || o.axis === null) throw new ValueError(`${fn}: Axis must be specified when shapes of a and weights differ (${show(x.shape)} and ${show(w.shape)}).`);
      const expected = axes.map((d) => x.shape[d]!);
      if (!shapesEqual(w.shape, expected)) {
        throw new ValueError(`${fn}: Shape of weights must be consistent with shape of a along specified axis: weights ${show(w.shape)}, expected ${show(expected)}`);
      }
      const order = axes.map((d, i) => [d, i] as const).sort((p, q) => p[0] - q[0]).map(([, i]) => i);
      w = lax.reshape(w, x.shape.map((d, i) => (axes.includes(i) ? d : 1)), order);
    }
    weightsSum = sum(w, { axis: o.axis, keepdims });
    avg = divide(sum(multiply(x, w), { axis: o.axis, keepdims }), weightsSum);
  }
  if (!returned) return avg;
  if (!shapesEqual(weightsSum.shape, avg.shape)) weightsSum = broadcastToShape(weightsSum, avg.shape);
  return [avg, weightsSum];
}

/** jnp.count_nonzero(a, { axis, keepdims }): how many elements along `axis` are not zero (NaN counts), as int32. */
export function countNonzero(a: ArrayLike, options: { axis?: Axis; keepdims?: boolean } = {}): Array {
  const fn = 'jnp.countNonzero';
  checkOptions(fn, options, ['axis', 'keepdims']);
  const x = asArray(fn, a, 'a');
  const nonzero = x.dtype === 'bool' ? x : lax.ne(x, lax.convertElementType(0, x.dtype));
  return sum(nonzero, { axis: options?.axis, keepdims: checkBoolean(fn, options?.keepdims, 'keepdims'), dtype: 'int32' });
}

/** jnp.ptp(a, { axis, keepdims }): max - min along `axis` (unsigned results wrap, as in JAX). */
export function ptp(a: ArrayLike, options: { axis?: Axis; keepdims?: boolean } = {}): Array {
  const fn = 'jnp.ptp';
  checkOptions(fn, options, ['axis', 'keepdims']);
  const x = asArray(fn, a, 'a');
  if (x.dtype === 'bool') throw new TypeError(`${fn}: sub does not accept dtype bool (max - min of a bool array)`);
  const o = { axis: options?.axis, keepdims: checkBoolean(fn, options?.keepdims, 'keepdims') };
  return lax.sub(amax(x, o), amin(x, o));
}

