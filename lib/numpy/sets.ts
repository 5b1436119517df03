// jnp's functions whose result size depends on the data (jax/_src/numpy/
// lax_numpy.py and setops.py): bincount, nonzero, flatnonzero, argwhere and
// unique. Eagerly they read the size from the data; under jit they need a
// static `size` (`length` for bincount), as in JAX, and pad with `fillValue`.
// Each follows JAX's formulation, so padding and truncation give what JAX
// gives: nonzero's indices come from cumsum(bincount(cumsum(mask))), past
// the count they are 0 unless filled; unique pads with its smallest value.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { isFloating, isInteger } from '../core/dtype.js';
import { ConcretizationTypeError, ValueError, checkOptions, show } from '../core/errors.js';
import * as lax from '../lax/ops.js';
import { sort as laxSort } from '../lax/sort.js';
import { full } from './creation.js';

function staticSize(fn: string, value: unknown, arg: string): number {
  if (!Number.isInteger(value) || (value as number) < 0) throw new TypeError(`${fn}: ${arg} must be a nonnegative integer, got ${show(value)}`);
  return value as number;
}

/** A concrete array's values, or a ConcretizationTypeError saying which argument to make static. */
function concreteValues(fn: string, x: Array, hint: string): number[] {
  if (x.isTracer) throw new ConcretizationTypeError(`${fn}: the size of the result depends on the values of a traced array; ${hint}`);
  return globalThis.Array.from(x.dataSync(), Number);
}

const int32 = (x: Array) => lax.convertElementType(x, 'int32');
const sum32 = (x: Array) => lax.reduceSum(int32(x), [0]);

/**
 * jnp.bincount: counts (or sums of `weights`) of each value of the 1-D integer x; negative values count at 0 and values
 * at or past `length` are dropped. Under jit `length` must be given; eagerly it defaults to max(minlength, max(x) + 1).
 */
export function bincount(x: ArrayLike, options: { weights?: ArrayLike | null; minlength?: number; length?: number | null } = {}): Array {
  const fn = 'jnp.bincount';
  checkOptions(fn, options, ['weights', 'minlength', 'length']);
  let xa = toArray(fn, x, 'x');
  if (xa.dtype === 'bool') xa = int32(xa);
  if (!isInteger(xa.dtype)) throw new TypeError(`${fn}: x argument to bincount must have an integer type; got ${xa.dtype}`);
  if (xa.ndim !== 1) throw new ValueError(`${fn}: only 1-dimensional input supported, got shape ${show(xa.shape)}`);
  const minlength = staticSize(fn, options.minlength ?? 0, 'minlength');
  let length: number;
  if (options.length === undefined || options.length === null) {
    const values = concreteValues(fn, xa, 'pass a static `length` argument');
    length = Math.max(minlength, values.length ? Math.max(0, ...values) + 1 : 0);
  } else {
    length = staticSize(fn, options.length, 'length');
  }
  let weights: Array;
  if (options.weights === undefined || options.weights === null) {
    weights = lax.broadcastInDim(toArray(fn, 1, 'weights', 'int32'), [...xa.shape], []);
  } else {
    weights = toArray(fn, options.weights, 'weights');
    if (weights.ndim !== xa.ndim || weights.shape[0] !== xa.shape[0]) throw new ValueError(`${fn}: shape of weights must match shape of x, got ${show(weights.shape)} and ${show(xa.shape)}`);
  }
  const index = lax.reshape(lax.max(xa, lax.convertElementType(toArray(fn, 0), xa.dtype)), [xa.shape[0]!, 1]);
  const zeros = full([length], 0, { dtype: weights.dtype });
  return lax.scatterAdd(zeros, index, weights, { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0] }, { mode: 'fill' });
}

export interface SizeOptions {
  /** The number of results (static; required under jit): fewer are padded, more are cut off. */
  size?: number | null;
  /** What pads the results past the count (default 0); for nonzero and argwhere one value or one per axis. */
  fillValue?: ArrayLike | readonly ArrayLike[] | null;
}

/** jnp.nonzero: for each axis, the int32 indices of the nonzero elements in row-major order. */
export function nonzero(a: ArrayLike, options: SizeOptions = {}): Array[] {
  checkOptions('jnp.nonzero', options, ['size', 'fillValue']);
  return nonzeroOf('jnp.nonzero', toArray('jnp.nonzero', a, 'a'), options);
}

/** nonzero for `fn` (the function the user called, named in errors). */
function nonzeroOf(fn: string, x: Array, options: SizeOptions): Array[] {
  if (x.ndim === 0) throw new ValueError(`${fn}: Calling nonzero on 0d arrays is not allowed. Use jnp.atleast1d(scalar) first.`);
  const mask = x.dtype === 'bool' ? x : lax.ne(x, lax.convertElementType(toArray(fn, 0), x.dtype));
  const flatMask = lax.reshape(mask, [x.size]);
  const size = options.size === undefined || options.size === null
    ? concreteValues(fn, flatMask, 'pass a static `size` (and a `fillValue`) to use it under jit').filter((v) => v !== 0).length
    : staticSize(fn, options.size, 'size');
  if (x.size === 0 || size === 0) return x.shape.map(() => full([size], 0, { dtype: 'int32' }));
  const flatIndices = lax.cumsum(bincount(lax.cumsum(int32(flatMask), { axis: 0 }), { length: size }), { axis: 0 });
  const strides = x.shape.map((_, d) => x.shape.slice(d + 1).reduce((p, s) => p * s, 1));
  let out = x.shape.map((dim, d) => lax.rem(lax.div(flatIndices, strides[d]!), dim));
  const fill = options.fillValue;
  if (fill !== undefined && fill !== null) {
    const fills = globalThis.Array.isArray(fill) ? fill : x.shape.map(() => fill);
    if (fills.length !== x.ndim) throw new ValueError(`${fn}: fillValue must be a scalar or a list of length ${x.ndim}; got ${show(fill)}`);
    const filled = lax.ge(lax.broadcastedIota('int32', [size], 0), sum32(flatMask));
    out = out.map((o, d) => {
      const f = toArray(fn, fills[d] as ArrayLike, 'fillValue');
      if (f.ndim !== 0) throw new ValueError(`${fn}: fillValue must be a scalar or a list of length ${x.ndim}; got ${show(fill)}`);
      return lax.select(filled, lax.broadcastInDim(lax.convertElementType(f, 'int32'), [size], []), o);
    });
  }
  return out;
}

/** jnp.flatnonzero: the int32 indices of the nonzero elements of the flattened array. */
export function flatnonzero(a: ArrayLike, options: SizeOptions = {}): Array {
  checkOptions('jnp.flatnonzero', options, ['size', 'fillValue']);
  const x = toArray('jnp.flatnonzero', a, 'a');
  return nonzeroOf('jnp.flatnonzero', lax.reshape(x, [x.size]), options)[0]!;
}

/** jnp.argwhere: the int32 indices of the nonzero elements, one row [count, ndim] per element. */
export function argwhere(a: ArrayLike, options: SizeOptions = {}): Array {
  checkOptions('jnp.argwhere', options, ['size', 'fillValue']);
  const x = toArray('jnp.argwhere', a, 'a');
  const columns = nonzeroOf('jnp.argwhere', x.ndim === 0 ? lax.reshape(x, [1]) : x, options);
  const rows = columns[0]!.shape[0]!;
  if (x.ndim === 0) return full([rows, 0], 0, { dtype: 'int32' });
  return lax.concatenate(columns.map((c) => lax.reshape(c, [rows, 1])), 1);
}

export interface UniqueOptions extends SizeOptions {
  /** Also return the index of each unique value's first occurrence in the flattened input. */
  returnIndex?: boolean;
  /** Also return how many times each unique value occurs. */
  returnCounts?: boolean;
  /** NaNs count as one value (default true, as in JAX). */
  equalNan?: boolean;
}

/**
 * jnp.unique (over the flattened array): the sorted distinct values; with `size`, padded with `fillValue` (default:
 * the smallest value) or cut off. With returnIndex / returnCounts, a list [values, index?, counts?].
 */
export function unique(ar: ArrayLike, options: UniqueOptions = {}): Array | Array[] {
  const fn = 'jnp.unique';
  checkOptions(fn, options, ['size', 'fillValue', 'returnIndex', 'returnCounts', 'equalNan']);
  const x = toArray(fn, ar, 'ar');
  const n = x.size;
  const flat = lax.reshape(x, [n]);
  const [aux, perm] = laxSort([flat, lax.broadcastedIota('int32', [n], 0)], { dimension: 0, numKeys: 1 });
  const equalNan = options.equalNan ?? true;
  let mask: Array;
  if (n === 0) {
    mask = full([0], false, { dtype: 'bool' });
  } else {
    const next = lax.sliceInDim(aux!, 1, n, 1, 0);
    const previous = lax.sliceInDim(aux!, 0, n - 1, 1, 0);
    let differs = lax.ne(next, previous);
    if (isFloating(x.dtype) && equalNan) differs = lax.bitwiseAnd(differs, lax.bitwiseNot(lax.bitwiseAnd(lax.ne(next, next), lax.ne(previous, previous))));
    mask = lax.concatenate([full([1], true, { dtype: 'bool' }), differs], 0);
  }
  const sized = options.size !== undefined && options.size !== null;
  const size = sized ? staticSize(fn, options.size, 'size') : undefined;
  const ind = nonzeroOf(fn, mask, sized ? { size } : {})[0]!;
  const gather = (v: Array, at: Array) => lax.gather(v, lax.reshape(at, [at.shape[0]!, 1]), { offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0] }, [1], { mode: 'clip' });
  let values = n ? gather(aux!, ind) : aux!;
  if (sized && options.fillValue !== undefined && options.fillValue !== null) {
    const f = lax.convertElementType(toArray(fn, options.fillValue as ArrayLike, 'fillValue'), x.dtype);
    if (f.ndim !== 0) throw new ValueError(`${fn}: fillValue must be a scalar, got shape ${show(f.shape)}`);
    const fillAll = lax.broadcastInDim(f, [size!], []);
    values = n ? lax.select(lax.lt(lax.broadcastedIota('int32', [size!], 0), sum32(mask)), values, fillAll) : fillAll;
  }
  if (!options.returnIndex && !options.returnCounts) return values;
  const out = [values];
  if (options.returnIndex) out.push(n ? gather(perm!, ind) : perm!);
  if (options.returnCounts) {
    let idx: Array;
    if (!sized) {
      idx = lax.concatenate([ind, full([1], n, { dtype: 'int32' })], 0);
    } else {
      idx = nonzeroOf(fn, mask, { size: size! + 1 })[0]!;
      const tail = lax.sliceInDim(idx, 1, size! + 1, 1, 0);
      idx = lax.concatenate([lax.sliceInDim(idx, 0, 1, 1, 0), lax.select(lax.ne(tail, 0), tail, lax.broadcastInDim(toArray(fn, n, 'n', 'int32'), [size!], []))], 0);
    }
    const count = idx.shape[0]!;
    out.push(lax.sub(lax.sliceInDim(idx, 1, count, 1, 0), lax.sliceInDim(idx, 0, count - 1, 1, 0)));
  }
  return out;
}
