// jnp's sorting functions (jax/_src/numpy/sorting.py and lax_numpy.py's
// searchsorted): sort, argsort, lexsort and searchsorted, all over lax.sort's
// order (floats: -0 == 0, NaNs last), with JAX's argument handling (axis
// null flattens; a descending argsort stays stable by reversing first).
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { sort as laxSort, topK } from '../lax/sort.js';
import { full } from './creation.js';
import { promote } from './util.js';

export interface SortOptions {
  /** The axis to sort along (default -1); null sorts the flattened array. */
  axis?: number | null;
  /** Accepted for NumPy's signature: jaxon's sort is stable whatever is asked. */
  kind?: string | null;
  /** Keep equal elements in their order (default true; the sort is stable either way). */
  stable?: boolean;
  /** Largest first (the ascending result reversed, as JAX does). */
  descending?: boolean;
}

function sortOperand(fn: string, a: ArrayLike, options: SortOptions): { x: Array; axis: number; stable: boolean; descending: boolean } {
  checkOptions(fn, options, ['axis', 'kind', 'stable', 'descending', 'order']);
  if ((options as { order?: unknown }).order !== undefined && (options as { order?: unknown }).order !== null) {
    throw new ValueError(`${fn}: 'order' argument to sort is not supported.`);
  }
  let x = toArray(fn, a, 'a');
  let axis: number;
  if (options.axis === null) {
    x = lax.reshape(x, [x.size]);
    axis = 0;
  } else {
    if (x.ndim === 0) throw new ValueError(`${fn}: axis ${options.axis ?? -1} is out of bounds for an array of dimension 0`);
    axis = normalizeAxis(fn, options.axis ?? -1, x.ndim);
  }
  const stable = options.stable ?? true;
  const descending = options.descending ?? false;
  if (typeof stable !== 'boolean') throw new TypeError(`${fn}: stable must be a boolean, got ${show(stable)}`);
  if (typeof descending !== 'boolean') throw new TypeError(`${fn}: descending must be a boolean, got ${show(descending)}`);
  return { x, axis, stable, descending };
}

/** jnp.sort: a sorted copy along `axis` (NaNs last; descending reverses the ascending result). */
export function sort(a: ArrayLike, options: SortOptions = {}): Array {
  const { x, axis, stable, descending } = sortOperand('jnp.sort', a, options);
  const sorted = laxSort(x, { dimension: axis, isStable: stable });
  return descending ? lax.rev(sorted, [axis]) : sorted;
}

/** jnp.argsort: int32 indices that sort `a` along `axis`; a stable descending argsort keeps equal elements in order. */
export function argsort(a: ArrayLike, options: SortOptions = {}): Array {
  const fn = 'jnp.argsort';
  let { x, axis, stable, descending } = sortOperand(fn, a, options);
  let iota = lax.broadcastedIota('int32', [...x.shape], axis);
  if (descending && stable) {
    x = lax.rev(x, [axis]);
    iota = lax.rev(iota, [axis]);
  }
  const [, indices] = laxSort([x, iota], { dimension: axis, isStable: stable, numKeys: 1 });
  return descending ? lax.rev(indices!, [axis]) : indices!;
}

/** jnp.lexsort: int32 indices that sort by the last key, then the one before it, and so on. */
export function lexsort(keys: readonly ArrayLike[], options: { axis?: number } = {}): Array {
  const fn = 'jnp.lexsort';
  checkOptions(fn, options, ['axis']);
  if (!globalThis.Array.isArray(keys) || keys.length === 0) throw new TypeError(`${fn}: need sequence of keys with len > 0 in lexsort, got ${show(keys)}`);
  const xs = keys.map((k, i) => toArray(fn, k, `keys[${i}]`));
  const shape = xs[0]!.shape;
  if (xs.some((k) => k.ndim !== shape.length || k.shape.some((d, i) => d !== shape[i]))) {
    throw new ValueError(`${fn}: all keys need to be the same shape, got ${xs.map((k) => show(k.shape)).join(', ')}`);
  }
  if (shape.length === 0) throw new TypeError(`${fn}: too many indices for array (keys are scalars)`);
  const axis = normalizeAxis(fn, options.axis ?? -1, shape.length);
  const iota = lax.broadcastedIota('int32', [...shape], axis);
  const sorted = laxSort([...xs.slice().reverse(), iota], { dimension: axis, numKeys: xs.length });
  return sorted[sorted.length - 1]!;
}

/** lax.sort's order on one key, elementwise: x before y (NaN after everything, -0 == 0). */
export function sortLess(x: Array, y: Array): Array {
  if (!isFloating(x.dtype)) return lax.lt(x, y);
  return lax.select(lax.ne(y, y), lax.eq(x, x), lax.lt(x, y));
}

/**
 * jnp.searchsorted: where each of `v` would be inserted into the sorted 1-D `a` to keep it sorted (int32), found by
 * JAX's default method, a binary search of ceil(log2(n + 1)) steps with lax.sort's order ('left': the first place,
 * 'right': the last). An unsorted `a` gives what that search gives in JAX.
 */
export function searchsorted(a: ArrayLike, v: ArrayLike, options: { side?: 'left' | 'right'; sorter?: ArrayLike | null; method?: string } = {}): Array {
  const fn = 'jnp.searchsorted';
  checkOptions(fn, options, ['side', 'sorter', 'method']);
  const side = options.side ?? 'left';
  if (side !== 'left' && side !== 'right') throw new ValueError(`${fn}: ${show(side)} is an invalid value for keyword 'side'. Expected one of ['left', 'right']`);
  const method = options.method ?? 'scan';
  if (!['scan', 'scan_unrolled', 'sort', 'compare_all'].includes(method)) {
    throw new ValueError(`${fn}: ${show(method)} is an invalid value for keyword 'method'. Expected one of ['sort', 'scan', 'scan_unrolled', 'compare_all']`);
  }
  let [sortedArray, query] = promote(fn, a, v) as [Array, Array];
  if (sortedArray.ndim !== 1) throw new ValueError(`${fn}: a should be 1-dimensional, got shape ${show(sortedArray.shape)}`);
  if (options.sorter !== undefined && options.sorter !== null) {
    const sorter = toArray(fn, options.sorter, 'sorter');
    if (sorter.ndim !== 1 || sorter.shape[0] !== sortedArray.shape[0]) throw new ValueError(`${fn}: sorter must be 1-dimensional of the length of a (${sortedArray.shape[0]}), got shape ${show(sorter.shape)}`);
    sortedArray = lax.gather(sortedArray, lax.reshape(sorter, [sortedArray.shape[0]!, 1]), { offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0] }, [1], { mode: 'clip' });
  }
  const n = sortedArray.shape[0]!;
  if (n === 0) return full([...query.shape], 0, { dtype: 'int32' });
  // 'left' goes left where query <= a[mid], 'right' where query < a[mid] (JAX's _sort_le / _sort_lt comparators)
  const goesLeft = (q: Array, m: Array) => (side === 'left' ? lax.bitwiseNot(sortLess(m, q)) : sortLess(q, m));
  let low = full([...query.shape], 0, { dtype: 'int32' });
  let high = full([...query.shape], n, { dtype: 'int32' });
  const levels = Math.ceil(Math.log2(n + 1));
  for (let level = 0; level < levels; level++) {
    const mid = lax.div(lax.add(low, high), 2);
    const atMid = lax.gather(sortedArray, lax.reshape(mid, [...mid.shape, 1]), { offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0] }, [1], { mode: 'clip' });
    const left = goesLeft(query, atMid);
    [low, high] = [lax.select(left, low, mid), lax.select(left, mid, high)];
  }
  return high;
}

function partitionOperand(fn: string, a: ArrayLike, kth: number, axis: number): { x: Array; kth: number; axis: number } {
  const x = toArray(fn, a, 'a');
  if (x.dtype.startsWith('uint')) throw new TypeError(`${fn}: unsigned dtypes are not supported (JAX raises NotImplementedError for ${x.dtype})`);
  if (x.ndim === 0) throw new ValueError(`${fn}: a must have rank >= 1, got a scalar`);
  const ax = normalizeAxis(fn, axis, x.ndim);
  const k = normalizeAxis(fn, kth, x.shape[ax]!, 'kth');
  return { x: swapLast(x, ax), kth: k, axis: ax };
}

/** x with axes `axis` and -1 swapped (its own inverse). */
function swapLast(x: Array, axis: number): Array {
  const last = x.ndim - 1;
  if (axis === last) return x;
  const perm = x.shape.map((_, i) => (i === axis ? last : i === last ? axis : i));
  return lax.transpose(x, perm);
}

/**
 * jnp.partition, as JAX computes it: the kth+1 smallest (lax.topK of -a, negated back) in ascending order, then the
 * rest (lax.topK of a) in descending order, so the kth element is in its sorted place.
 */
export function partition(a: ArrayLike, kth: number, options: { axis?: number } = {}): Array {
  const fn = 'jnp.partition';
  checkOptions(fn, options, ['axis']);
  const { x, kth: k, axis } = partitionOperand(fn, a, kth, options.axis ?? -1);
  const n = x.shape[x.ndim - 1]!;
  const bottom = lax.neg(topK(lax.neg(x), k + 1)[0]);
  const top = topK(x, n - k - 1)[0];
  return swapLast(lax.concatenate([bottom, top], x.ndim - 1), axis);
}

/** jnp.argpartition, as JAX computes it: indices of the kth+1 smallest, then of the rest through a proxy that marks them. */
export function argpartition(a: ArrayLike, kth: number, options: { axis?: number } = {}): Array {
  const fn = 'jnp.argpartition';
  checkOptions(fn, options, ['axis']);
  const { x, kth: k, axis } = partitionOperand(fn, a, kth, options.axis ?? -1);
  const n = x.shape[x.ndim - 1]!;
  const last = x.ndim - 1;
  const bottom = topK(lax.neg(x), k + 1)[1];
  // proxy: ones with zeros at the chosen indices, so the rest are the top n - k - 1 of it (by lower index among ties)
  const chosen = lax.reduceOr(lax.eq(lax.broadcastInDim(bottom, [...bottom.shape, n], x.shape.map((_, i) => i)), lax.broadcastedIota('int32', [...bottom.shape, n], last + 1)), [last]);
  const proxy = lax.select(chosen, lax.broadcastInDim(toArray(fn, 0, 'proxy', 'float32'), [...x.shape], []), lax.broadcastInDim(toArray(fn, 1, 'proxy', 'float32'), [...x.shape], []));
  const top = topK(proxy, n - k - 1)[1];
  return swapLast(lax.concatenate([bottom, top], last), axis);
}
