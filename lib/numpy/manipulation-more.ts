// More of jnp's array manipulation: diff, roll and meshgrid, written as
// jax/_src/numpy/lax_numpy.py writes them (diff by slices, bools by !=; roll
// by two slices and a concatenate, or a dynamic slice of the doubled array
// when the shift is an Array; meshgrid by broadcast_in_dim).
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { mod } from './elementwise.js';
import { concatenate } from './manipulation.js';
import { asArray, checkBoolean } from './util.js';

export interface DiffOptions {
  /** How many times to difference (default 1). */
  n?: number;
  /** The axis to difference along (default -1). */
  axis?: number;
  /** Values put before `a` along `axis` first (a scalar is broadcast to one slice). */
  prepend?: ArrayLike | null;
  /** Values put after `a` along `axis` first (a scalar is broadcast to one slice). */
  append?: ArrayLike | null;
}

function edge(fn: string, value: ArrayLike, arg: string, like: Array, axis: number): Array {
  const x = toArray(fn, value, arg);
  if (x.ndim !== 0) return x;
  const shape = [...like.shape];
  shape[axis] = 1;
  return lax.broadcastInDim(x, shape, []);
}

/**
 * jnp.diff(a, n?, { axis, prepend, append }) (or diff(a, { n, axis, ... })):
 * the n-th discrete difference along `axis`; bools give a != of neighbours.
 */
export function diff(a: ArrayLike, n?: number | DiffOptions, options: DiffOptions = {}): Array {
  const fn = 'jnp.diff';
  let o = options ?? {};
  if (typeof n === 'object' && n !== null) {
    o = n;
    n = undefined;
  }
  checkOptions(fn, o, ['n', 'axis', 'prepend', 'append']);
  if (n !== undefined && o.n !== undefined) throw new TypeError(`${fn}: n given both by position (${show(n)}) and in the options (${show(o.n)})`);
  const order = n ?? o.n ?? 1;
  if (typeof order !== 'number' || !Number.isInteger(order)) throw new TypeError(`${fn}: n must be an integer, got ${show(order)}`);
  let x = asArray(fn, a, 'a');
  if (order === 0) return x;
  if (order < 0) throw new ValueError(`${fn}: order must be non-negative but got ${order}`);
  if (x.ndim === 0) throw new ValueError(`${fn}: diff requires input that is at least one dimensional; got a scalar`);
  const axis = normalizeAxis(fn, o.axis ?? -1, x.ndim);
  const parts: ArrayLike[] = [];
  if (o.prepend !== undefined && o.prepend !== null) parts.push(edge(fn, o.prepend, 'prepend', x, axis));
  parts.push(x);
  if (o.append !== undefined && o.append !== null) parts.push(edge(fn, o.append, 'append', x, axis));
  if (parts.length > 1) x = concatenate(parts, { axis });
  const op = x.dtype === 'bool' ? lax.ne : lax.sub;
  for (let i = 0; i < order; i++) {
    const len = x.shape[axis]!;
    const upper = lax.sliceInDim(x, Math.min(1, len), len, 1, axis);
    const lower = lax.sliceInDim(x, 0, Math.max(len - 1, 0), 1, axis);
    x = op(upper, lower);
  }
  return x;
}

function intList(fn: string, value: unknown, arg: string): number[] {
  const list = globalThis.Array.isArray(value) ? value : [value];
  for (const v of list) if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${fn}: ${arg} must be an integer or an array of integers, got ${show(value)}`);
  return list as number[];
}

/**
 * jnp.roll(a, shift, axis?): elements shifted along `axis` (an axis or an
 * array of axes; null/absent rolls the flattened array), wrapping around.
 * `shift` is an integer, an array of integers (one per axis), or an Array
 * (which may be traced).
 */
export function roll(a: ArrayLike, shift: number | number[] | Array, axis?: number | number[] | null | { axis?: number | number[] | null }): Array {
  const fn = 'jnp.roll';
  let axisOption = axis;
  if (typeof axis === 'object' && axis !== null && !globalThis.Array.isArray(axis)) {
    checkOptions(fn, axis, ['axis']);
    axisOption = axis.axis;
  }
  const x = asArray(fn, a, 'a');
  if (axisOption === undefined || axisOption === null) return lax.reshape(roll(lax.reshape(x, [x.size]), shift, 0), [...x.shape]);
  const axes = intList(fn, axisOption, 'axis').map((d) => normalizeAxis(fn, d, x.ndim));
  if (shift instanceof Array) return rollDynamic(fn, x, shift, axes);
  const shifts = intList(fn, shift, 'shift');
  if (shifts.length !== axes.length && shifts.length !== 1 && axes.length !== 1) {
    throw new ValueError(`${fn}: shape mismatch: shift ${show(shift)} and axis ${show(axisOption)} cannot be broadcast together`);
  }
  const count = Math.max(shifts.length, axes.length);
  let out = x;
  for (let k = 0; k < count; k++) {
    const ax = axes[axes.length === 1 ? 0 : k]!;
    const s = shifts[shifts.length === 1 ? 0 : k]!;
    const size = out.shape[ax]!;
    if (size === 0) continue;
    const i = (((-s) % size) + size) % size;
    if (i === 0) continue;
    out = lax.concatenate([lax.sliceInDim(out, i, size, 1, ax), lax.sliceInDim(out, 0, i, 1, ax)], ax);
  }
  return out;
}

/** JAX's _roll_dynamic: each shift taken modulo the axis size, then a dynamic slice of the array doubled along it. */
function rollDynamic(fn: string, x: Array, shift: Array, axes: number[]): Array {
  if (shift.ndim > 1) throw new ValueError(`${fn}: 'shift' and 'axis' arguments to roll must be scalars or 1D arrays, got shift of shape ${show(shift.shape)}`);
  const n = shift.ndim === 0 ? 1 : shift.shape[0]!;
  if (n !== axes.length && n !== 1 && axes.length !== 1) throw new ValueError(`${fn}: shape mismatch: shift of shape ${show(shift.shape)} and ${axes.length} axes cannot be broadcast together`);
  const count = Math.max(n, axes.length);
  let out = x;
  for (let k = 0; k < count; k++) {
    const ax = axes[axes.length === 1 ? 0 : k]!;
    const s = shift.ndim === 0 ? shift : lax.reshape(lax.sliceInDim(shift, n === 1 ? 0 : k, (n === 1 ? 0 : k) + 1, 1, 0), []);
    const size = out.shape[ax]!;
    const r = mod(lax.convertElementType(s, 'int32'), Math.max(size, 1));
    const doubled = lax.concatenate([out, out], ax);
    out = lax.dynamicSliceInDim(doubled, lax.sub(lax.convertElementType(size, 'int32'), r), size, ax);
  }
  return out;
}

export interface MeshgridOptions {
  /** 'xy' (Cartesian, the default: the first two outputs' axes swapped) or 'ij' (matrix). */
  indexing?: 'xy' | 'ij';
  /** Outputs keep size 1 on every axis but their own (they broadcast to the full grid). */
  sparse?: boolean;
  /** Accepted for NumPy's signature; only true is supported, as in JAX. */
  copy?: boolean;
}

/** jnp.meshgrid(...xs, { indexing, sparse }): coordinate grids from 1-D arrays (a trailing plain object is the options). */
export function meshgrid(...args: (ArrayLike | MeshgridOptions)[]): Array[] {
  const fn = 'jnp.meshgrid';
  let o: MeshgridOptions = {};
  const last = args[args.length - 1];
  if (last !== null && typeof last === 'object' && !(last instanceof Array) && !globalThis.Array.isArray(last) && !ArrayBuffer.isView(last)) {
    o = last as MeshgridOptions;
    args = args.slice(0, -1);
  }
  checkOptions(fn, o, ['indexing', 'sparse', 'copy']);
  if (o.copy === false) throw new ValueError(`${fn}: jax.numpy.meshgrid only supports copy=true`);
  const indexing = o.indexing ?? 'xy';
  if (indexing !== 'xy' && indexing !== 'ij') throw new ValueError(`${fn}: Valid values for indexing are 'xy' and 'ij', got ${show(indexing)}`);
  const sparse = checkBoolean(fn, o.sparse, 'sparse');
  const xs = args.map((x, i) => asArray(fn, x, `xi[${i}]`));
  if (xs.some((x) => x.ndim !== 1)) throw new ValueError(`${fn}: Arguments to jax.numpy.meshgrid must be 1D, got shapes ${show(xs.map((x) => x.shape))}`);
  const swap = indexing === 'xy' && xs.length >= 2;
  if (swap) [xs[0], xs[1]] = [xs[1]!, xs[0]!];
  const shape = xs.map((x) => (sparse ? 1 : x.shape[0]!));
  const out = xs.map((x, i) => lax.broadcastInDim(x, sparse ? shape.map((d, j) => (j === i ? x.shape[0]! : d)) : shape, [i]));
  if (swap) [out[0], out[1]] = [out[1]!, out[0]!];
  return out;
}
