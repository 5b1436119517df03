// lax.sort, lax.sortKeyVal and lax.topK (jax/_src/lax/lax.py): thin wrappers
// over the sort and top_k primitives.
import { Array, type ArrayLike } from '../core/array.js';
import { bind } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';

export interface SortOptions {
  /** The axis to sort along (default -1). */
  dimension?: number;
  /** Accepted for JAX's signature; jaxon's sort is always stable, which satisfies both settings. */
  isStable?: boolean;
  /** How many leading operands are keys, compared lexicographically (default 1). */
  numKeys?: number;
}

/**
 * lax.sort: sorts one array, or several of one shape together by the first `numKeys` of them. Floats order as in
 * JAX: -0 and 0 equal (their order kept), NaNs last. One array in, one out; a list in, a list out.
 */
export function sort(operand: ArrayLike, options?: SortOptions): Array;
export function sort(operand: readonly ArrayLike[], options?: SortOptions): Array[];
export function sort(operand: ArrayLike | readonly ArrayLike[], options: SortOptions = {}): Array | Array[] {
  checkOptions('lax.sort', options, ['dimension', 'isStable', 'numKeys']);
  const single = !globalThis.Array.isArray(operand);
  const operands = (single ? [operand as ArrayLike] : (operand as ArrayLike[])).map((x, i) => toArray('lax.sort', x, single ? 'operand' : `operand[${i}]`));
  if (operands.length === 0) throw new ValueError('lax.sort: needs at least one operand, got an empty list');
  const numKeys = options.numKeys ?? 1;
  if (!Number.isInteger(numKeys) || numKeys < 1) throw new ValueError(`lax.sort: numKeys must be at least 1, got ${show(numKeys)}`);
  if (numKeys > operands.length) throw new ValueError(`lax.sort: numKeys ${numKeys} exceeds the number of operands (${operands.length})`);
  const isStable = options.isStable ?? true;
  if (typeof isStable !== 'boolean') throw new TypeError(`lax.sort: isStable must be a boolean, got ${show(isStable)}`);
  const first = operands[0]!;
  if (first.ndim === 0) throw new ValueError('lax.sort: operands must have rank >= 1, got a scalar');
  const dimension = normalizeAxis('lax.sort', options.dimension ?? -1, first.ndim, 'dimension');
  const outs = bind('sort', operands, { dimension, isStable, numKeys });
  return single ? outs[0]! : outs;
}

/** lax.sort_key_val: `values` reordered as `keys` sort (stable), returned with the sorted keys. */
export function sortKeyVal(keys: ArrayLike, values: ArrayLike, options: { dimension?: number; isStable?: boolean } = {}): [Array, Array] {
  checkOptions('lax.sortKeyVal', options, ['dimension', 'isStable']);
  const [k, v] = sort([toArray('lax.sortKeyVal', keys, 'keys'), toArray('lax.sortKeyVal', values, 'values')], { ...options, numKeys: 1 });
  return [k!, v!];
}

/**
 * lax.top_k: the k largest entries along the last axis and their int32 indices, largest first, equal entries by lower
 * index, in XLA's TopK order: a total order on the bits, so -0 sorts below +0, a NaN with the sign bit set below -inf
 * and any other NaN above +inf.
 */
export function topK(operand: ArrayLike, k: number): [Array, Array] {
  const x = toArray('lax.topK', operand, 'operand');
  if (!Number.isInteger(k)) throw new TypeError(`lax.topK: k must be an integer, got ${show(k)}`);
  if (k < 0) throw new ValueError(`lax.topK: k argument to top_k must be nonnegative, got ${k}`);
  if (x.ndim === 0) throw new ValueError('lax.topK: operand must have rank >= 1, got a scalar');
  const n = x.shape[x.ndim - 1]!;
  if (k > n) throw new ValueError(`lax.topK: k argument to top_k must be no larger than minor dimension ${n} of operand shape ${show(x.shape)}, got ${k}`);
  const [values, indices] = bind('top_k', [x], { k });
  return [values!, indices!];
}
