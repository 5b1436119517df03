// jnp's NaN-ignoring reductions (nansum nanprod nanmax nanmin nanmean nanvar
// nanstd nanargmax nanargmin nancumsum nancumprod), composed as
// jax/_src/numpy/reductions.py composes them: NaNs are replaced by the
// reduction's identity with a select (so their gradient is zero), integer and
// bool inputs take the plain reduction, and nanmax/nanmin/nanargmax give NaN
// (or -1) where a whole slice is NaN.
import { Array, type ArrayLike } from '../core/array.js';
import { type DType, isFloating, toInexact } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import * as reductions from './reductions.js';
import type { ArgReductionOptions, CumulativeOptions, MaxOptions, MeanOptions, SumOptions, VarOptions } from './reductions.js';
import { asArray, broadcastToShape, dtypeOption } from './util.js';

function isnan(x: Array): Array {
  return lax.ne(x, x);
}

/** jnp.where(mask, value, x) for a scalar `value`, in x's dtype. */
function fillWhere(mask: Array, value: number, x: Array): Array {
  return lax.select(mask, lax.broadcastInDim(lax.convertElementType(value, x.dtype), [...x.shape], []), x);
}

/** JAX's _nan_reduction: NaNs become `init`; with nanIfAllNaN, all-NaN slices give NaN. */
function nanReduction<O extends { axis?: unknown; keepdims?: boolean | null; where?: ArrayLike | null }>(
  fn: string, a: ArrayLike, reduce: (x: Array, o: O) => Array, init: number, nanIfAllNaN: boolean, options: O,
): Array {
  const x = asArray(fn, a, 'a');
  reductions.normalizeAxisOption(fn, options.axis, x.ndim); // errors name this function, not the reduction inside
  if (!isFloating(x.dtype)) return reduce(x, options);
  const nan = isnan(x);
  const out = reduce(fillWhere(nan, init, x), options);
  if (!nanIfAllNaN) return out;
  const allNaN = reductions.all(nan, { axis: options.axis as never, keepdims: options.keepdims ?? false });
  return fillWhere(allNaN, NaN, out);
}

/** jnp.nansum(a, { axis, dtype, keepdims, initial, where }): the sum with NaNs treated as 0. */
export function nansum(a: ArrayLike, options: SumOptions = {}): Array {
  checkOptions('jnp.nansum', options, ['axis', 'dtype', 'keepdims', 'initial', 'where']);
  return nanReduction('jnp.nansum', a, reductions.sum, 0, false, options ?? {});
}

/** jnp.nanprod(a, { axis, dtype, keepdims, initial, where }): the product with NaNs treated as 1. */
export function nanprod(a: ArrayLike, options: SumOptions = {}): Array {
  checkOptions('jnp.nanprod', options, ['axis', 'dtype', 'keepdims', 'initial', 'where']);
  return nanReduction('jnp.nanprod', a, reductions.prod, 1, false, options ?? {});
}

/** jnp.nanmax(a, { axis, keepdims, initial, where }): NaN where a slice is all NaN (unless `initial` is given). */
export function nanmax(a: ArrayLike, options: MaxOptions = {}): Array {
  checkOptions('jnp.nanmax', options, ['axis', 'keepdims', 'initial', 'where']);
  const o = options ?? {};
  return nanReduction('jnp.nanmax', a, reductions.max, -Infinity, o.initial === undefined || o.initial === null, o);
}

/** jnp.nanmin(a, { axis, keepdims, initial, where }): NaN where a slice is all NaN (unless `initial` is given). */
export function nanmin(a: ArrayLike, options: MaxOptions = {}): Array {
  checkOptions('jnp.nanmin', options, ['axis', 'keepdims', 'initial', 'where']);
  const o = options ?? {};
  return nanReduction('jnp.nanmin', a, reductions.min, Infinity, o.initial === undefined || o.initial === null, o);
}

/** jnp.nanmean(a, { axis, dtype, keepdims, where }): the mean of the non-NaN elements (NaN if there are none). */
export function nanmean(a: ArrayLike, options: MeanOptions = {}): Array {
  const fn = 'jnp.nanmean';
  checkOptions(fn, options, ['axis', 'dtype', 'keepdims', 'where']);
  const o = options ?? {};
  const x = asArray(fn, a, 'a');
  reductions.normalizeAxisOption(fn, o.axis, x.ndim);
  if (!isFloating(x.dtype)) return reductions.mean(x, o);
  const dtype = dtypeOption(fn, o.dtype) ?? toInexact(x.dtype);
  const where = o.where ?? null;
  const normalizer = reductions.sum(lax.bitwiseNot(isnan(x)), { axis: o.axis, dtype, keepdims: o.keepdims ?? false, where });
  return lax.div(nansum(x, { axis: o.axis, dtype, keepdims: o.keepdims ?? false, where }), normalizer);
}

/** JAX's _var_promote_types: [computation dtype (16-bit floats upcast), result dtype]. */
function varTypes(a: DType, dtype: DType | undefined): [DType, DType] {
  const upcast = (d: DType): DType => (d === 'float16' || d === 'bfloat16' ? 'float32' : d);
  if (dtype !== undefined) return [upcast(dtype), dtype];
  if (!isFloating(a)) return ['float32', 'float32'];
  return [upcast(a), a];
}

function nanvariance(fn: string, a: ArrayLike, options: VarOptions): Array {
  checkOptions(fn, options, ['axis', 'dtype', 'ddof', 'keepdims', 'where']);
  const o = options ?? {};
  const ddof = o.ddof ?? 0;
  if (typeof ddof !== 'number' || !Number.isFinite(ddof)) throw new TypeError(`${fn}: ddof must be a finite number, got ${show(ddof)}`);
  const x0 = asArray(fn, a, 'a');
  reductions.normalizeAxisOption(fn, o.axis, x0.ndim);
  const [computation, dtype] = varTypes(x0.dtype, dtypeOption(fn, o.dtype));
  const x = lax.convertElementType(x0, computation);
  const where = o.where ?? null;
  const keepdims = o.keepdims ?? false;
  const mean = nanmean(x, { axis: o.axis, dtype: computation, keepdims: true, where });
  const nan = isnan(x);
  // the double-where trick: NaN elements contribute 0 and a zero gradient
  const centered = lax.square(fillWhere(nan, 0, lax.sub(x, broadcastToShape(mean, x.shape))));
  const count = reductions.sum(lax.bitwiseNot(nan), { axis: o.axis, keepdims, where });
  // normalizer - ddof: a weak JS number keeps int32 int32 (an integral ddof) or makes it float32
  const normalizer = Number.isInteger(ddof) ? lax.sub(count, ddof) : lax.sub(lax.convertElementType(count, 'float32'), ddof);
  const empty = lax.le(normalizer, 0);
  let result = reductions.sum(centered, { axis: o.axis, keepdims, where });
  result = fillWhere(empty, NaN, result);
  const divisor = fillWhere(empty, 1, normalizer);
  return lax.convertElementType(lax.div(result, lax.convertElementType(divisor, result.dtype)), dtype);
}

/** jnp.nanvar(a, { axis, dtype, ddof, keepdims, where }): the variance of the non-NaN elements. */
export function nanvar(a: ArrayLike, options: VarOptions = {}): Array {
  return nanvariance('jnp.nanvar', a, options);
}

/** jnp.nanstd(a, { axis, dtype, ddof, keepdims, where }) = sqrt(nanvar). */
export function nanstd(a: ArrayLike, options: VarOptions = {}): Array {
  return lax.sqrt(nanvariance('jnp.nanstd', a, options));
}

function nanArgReduction(name: 'nanargmax' | 'nanargmin', fill: number, reduce: typeof reductions.argmax) {
  const fn = `jnp.${name}`;
  return (a: ArrayLike, options: ArgReductionOptions = {}): Array => {
    checkOptions(fn, options, ['axis', 'keepdims']);
    const o = options ?? {};
    const x = asArray(fn, a, 'a');
    if (o.axis !== undefined && o.axis !== null) normalizeAxis(fn, o.axis, x.ndim);
    if (!isFloating(x.dtype)) return reduce(x, o);
    const nan = isnan(x);
    const result = reduce(fillWhere(nan, fill, x), o);
    const allNaN = reductions.all(nan, { axis: o.axis ?? null, keepdims: o.keepdims ?? false });
    return fillWhere(allNaN, -1, result);
  };
}

/** jnp.nanargmax(a, { axis, keepdims }): argmax ignoring NaNs; -1 where a slice is all NaN. */
export const nanargmax = nanArgReduction('nanargmax', -Infinity, reductions.argmax);
/** jnp.nanargmin(a, { axis, keepdims }): argmin ignoring NaNs; -1 where a slice is all NaN. */
export const nanargmin = nanArgReduction('nanargmin', Infinity, reductions.argmin);

function nanCumulative(name: 'nancumsum' | 'nancumprod', fill: number, op: typeof reductions.cumsum) {
  const fn = `jnp.${name}`;
  return (a: ArrayLike, options: CumulativeOptions = {}): Array => {
    checkOptions(fn, options, ['axis', 'dtype']);
    if (typeof a === 'number' || typeof a === 'boolean') return op(a, options);
    const x = asArray(fn, a, 'a');
    if (x.ndim === 0 && options?.axis !== undefined && options?.axis !== null) {
      throw new ValueError(`${fn}: axis ${show(options.axis)} is out of bounds for an array of dimension 0`);
    }
    return op(isFloating(x.dtype) ? fillWhere(isnan(x), fill, x) : x, options);
  };
}

/** jnp.nancumsum(a, { axis, dtype }): the cumulative sum with NaNs treated as 0. */
export const nancumsum = nanCumulative('nancumsum', 0, reductions.cumsum);
/** jnp.nancumprod(a, { axis, dtype }): the cumulative product with NaNs treated as 1. */
export const nancumprod = nanCumulative('nancumprod', 1, reductions.cumprod);
