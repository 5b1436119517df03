// jnp's array-manipulation routines (NumPy's "Array manipulation routines"):
// reshaping, transposing, joining, splitting, tiling, repeating, flipping,
// padding and triangles. Each is a composition of layout primitives (reshape,
// transpose, broadcast_in_dim, slice, rev, pad, concatenate, gather,
// select_n), written after jax/_src/numpy/lax_numpy.py; shapes and axes are
// checked here so errors name the jnp function, its argument and the values.
import { Array, type ArrayLike } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { type DType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { type Shape, broadcastShapes as broadcastShapesOf, checkShape, normalizeAxes, normalizeAxis, sizeOf } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { asArray, broadcastToShape, dtypeOption, promote } from './util.js';

type Order = 'C' | 'F';
type AxisOption = { axis?: number | number[] | null };
type JoinOptions = { dtype?: DType | null };

// `Array` is jaxon's class in this file; JS arrays are reached through these
const isList = (v: unknown): v is unknown[] => globalThis.Array.isArray(v);
const ones = (n: number): number[] => new globalThis.Array<number>(n).fill(1);
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

function orderOption(fn: string, order: unknown): Order {
  if (order === undefined || order === null || order === 'C') return 'C';
  if (order === 'F') return 'F';
  throw new ValueError(`${fn}: order must be 'C' or 'F', got ${show(order)}`);
}

/** An integer, or a JS array of integers, as a list; `arg` names it in errors. */
function integerList(fn: string, value: unknown, arg: string, what = 'an integer or an array of integers'): number[] {
  const list = typeof value === 'number' ? [value] : value;
  if (!isList(list) || list.some((v) => typeof v !== 'number' || !Number.isInteger(v))) {
    throw new TypeError(`${fn}: ${arg} must be ${what}, got ${show(value)}`);
  }
  return list as number[];
}

/** Axes given as a number or an array of numbers (not null), normalized, no repeats. */
function axisList(fn: string, axis: unknown, ndim: number, arg: string): number[] {
  const list = typeof axis === 'number' ? [axis] : axis;
  if (!isList(list)) throw new TypeError(`${fn}: ${arg} must be an integer or an array of integers, got ${show(axis)}`);
  return normalizeAxes(fn, list, ndim, arg);
}

// ---- reshaping ----

/** The new shape with its -1 (at most one) resolved; errors name both shapes and sizes. */
function resolveShape(fn: string, from: Shape, shape: unknown): number[] {
  const dims = integerList(fn, shape, 'shape', 'an integer or an array of integers (one may be -1)');
  if (dims.some((d) => d < -1)) throw new ValueError(`${fn}: shape must contain non-negative integers or one -1, got ${show(shape)}`);
  const unknown = dims.flatMap((d, i) => (d === -1 ? [i] : []));
  if (unknown.length > 1) throw new ValueError(`${fn}: only one axis size may be -1, got shape ${show(shape)}`);
  const size = sizeOf(from);
  const known = sizeOf(dims.filter((d) => d !== -1));
  const cannot = `${fn}: cannot reshape array of shape ${show(from)} (size ${size}) into shape ${show(shape)}`;
  if (unknown.length === 1) {
    if (known === 0) throw new ValueError(`${cannot}: the -1 axis is ambiguous when the other sizes multiply to 0`);
    if (size % known !== 0) throw new ValueError(`${cannot}: the other axis sizes (product ${known}) do not divide ${size}`);
    const out = [...dims];
    out[unknown[0]!] = size / known;
    return out;
  }
  if (known !== size) throw new ValueError(`${cannot} (size ${known})`);
  return [...dims];
}

function reshapeOrdered(x: Array, shape: number[], order: Order): Array {
  if (order === 'C') return lax.reshape(x, shape);
  // Fortran order: reverse the axes, reshape in C order to the reversed shape, reverse back
  const flipped = lax.reshape(lax.transpose(x, range(x.ndim).reverse()), [...shape].reverse());
  return lax.transpose(flipped, range(shape.length).reverse());
}

/** jnp.reshape(x, shape, { order = 'C' }): one axis size may be -1. Free (no copy) in C order. */
export function reshape(x: ArrayLike, shape: number | number[], options: { order?: Order } = {}): Array {
  checkOptions('jnp.reshape', options, ['order']);
  const a = asArray('jnp.reshape', x);
  const order = orderOption('jnp.reshape', options.order);
  return reshapeOrdered(a, resolveShape('jnp.reshape', a.shape, shape), order);
}

/** jnp.ravel(x, { order = 'C' }): the elements as a 1-d array. */
export function ravel(x: ArrayLike, options: { order?: Order } = {}): Array {
  checkOptions('jnp.ravel', options, ['order']);
  const a = asArray('jnp.ravel', x);
  return reshapeOrdered(a, [a.size], orderOption('jnp.ravel', options.order));
}

// ---- transposing ----

/** jnp.transpose(x, axes?): axes defaults to reversing them; negative axes count from the end. */
export function transpose(x: ArrayLike, axes?: number[] | null): Array {
  const a = asArray('jnp.transpose', x);
  if (axes === undefined || axes === null) return lax.transpose(a, range(a.ndim).reverse());
  if (!isList(axes) || axes.length !== a.ndim) {
    throw new ValueError(`jnp.transpose: axes ${show(axes)} must be a permutation of the ${a.ndim} axes of shape ${show(a.shape)}`);
  }
  const perm = normalizeAxes('jnp.transpose', axes, a.ndim, 'axes');
  return lax.transpose(a, perm);
}

/** jnp.swapaxes(x, axis1, axis2). */
export function swapaxes(x: ArrayLike, axis1: number, axis2: number): Array {
  const a = asArray('jnp.swapaxes', x);
  const i = normalizeAxis('jnp.swapaxes', axis1, a.ndim, 'axis1');
  const j = normalizeAxis('jnp.swapaxes', axis2, a.ndim, 'axis2');
  const perm = range(a.ndim);
  perm[i] = j;
  perm[j] = i;
  return lax.transpose(a, perm);
}

/** jnp.moveaxis(x, source, destination): axes (numbers or arrays of them) moved to new positions; the others keep their order. */
export function moveaxis(x: ArrayLike, source: number | number[], destination: number | number[]): Array {
  const fn = 'jnp.moveaxis';
  const a = asArray(fn, x);
  const src = axisList(fn, source, a.ndim, 'source');
  const dst = axisList(fn, destination, a.ndim, 'destination');
  if (src.length !== dst.length) {
    throw new ValueError(`${fn}: source ${show(source)} and destination ${show(destination)} must have the same number of axes`);
  }
  const perm = range(a.ndim).filter((i) => !src.includes(i));
  const moves = dst.map((d, k) => [d, src[k]!] as const).sort((p, q) => p[0] - q[0]);
  for (const [d, s] of moves) perm.splice(d, 0, s);
  return lax.transpose(a, perm);
}

// ---- adding and removing axes ----

/** jnp.expandDims(x, axis): inserts size-1 axes at the given positions of the result. */
export function expandDims(x: ArrayLike, axis: number | number[]): Array {
  const fn = 'jnp.expandDims';
  const a = asArray(fn, x);
  const list = integerList(fn, axis, 'axis');
  const dims = normalizeAxes(fn, list, a.ndim + list.length, 'axis');
  const shape: number[] = [];
  let k = 0;
  for (let i = 0; i < a.ndim + dims.length; i++) shape.push(dims.includes(i) ? 1 : a.shape[k++]!);
  return lax.reshape(a, shape);
}

/** jnp.squeeze(x, { axis }): removes the given size-1 axes, or all of them. */
export function squeeze(x: ArrayLike, options: AxisOption = {}): Array {
  const fn = 'jnp.squeeze';
  checkOptions(fn, options, ['axis']);
  const a = asArray(fn, x);
  const axis = options.axis;
  const dims = axis === undefined || axis === null ? range(a.ndim).filter((i) => a.shape[i] === 1) : axisList(fn, axis, a.ndim, 'axis');
  for (const d of dims) {
    if (a.shape[d] !== 1) throw new ValueError(`${fn}: cannot squeeze axis ${d} of size ${a.shape[d]} (shape ${show(a.shape)}); only size-1 axes can be removed`);
  }
  return lax.squeeze(a, dims);
}

function atleastNd(fn: string, x: ArrayLike, n: 1 | 2 | 3, arg: string): Array {
  const a = asArray(fn, x, arg);
  if (a.ndim >= n) return a;
  if (n === 1 || a.ndim === 0) return lax.reshape(a, [...ones(n - a.ndim), ...a.shape]);
  if (n === 2) return lax.reshape(a, [1, a.shape[0]!]);
  return lax.reshape(a, a.ndim === 1 ? [1, a.shape[0]!, 1] : [...a.shape, 1]);
}

function atleast(fn: string, n: 1 | 2 | 3, xs: ArrayLike[]): Array | Array[] {
  const out = xs.map((x, i) => atleastNd(fn, x, n, xs.length === 1 ? 'x' : `arrays[${i}]`));
  return out.length === 1 ? out[0]! : out;
}

/** jnp.atleast1d(...xs): an Array for one argument, an array of Arrays for several (as JAX). */
export function atleast1d(x: ArrayLike): Array;
export function atleast1d(...xs: ArrayLike[]): Array | Array[];
export function atleast1d(...xs: ArrayLike[]): Array | Array[] {
  return atleast('jnp.atleast1d', 1, xs);
}
/** jnp.atleast2d: shape [n] becomes [1, n]. */
export function atleast2d(x: ArrayLike): Array;
export function atleast2d(...xs: ArrayLike[]): Array | Array[];
export function atleast2d(...xs: ArrayLike[]): Array | Array[] {
  return atleast('jnp.atleast2d', 2, xs);
}
/** jnp.atleast3d: [n] becomes [1, n, 1] and [m, n] becomes [m, n, 1]. */
export function atleast3d(x: ArrayLike): Array;
export function atleast3d(...xs: ArrayLike[]): Array | Array[];
export function atleast3d(...xs: ArrayLike[]): Array | Array[] {
  return atleast('jnp.atleast3d', 3, xs);
}

// ---- broadcasting ----

/** jnp.broadcastTo(x, shape): NumPy broadcasting to an explicit shape. */
export function broadcastTo(x: ArrayLike, shape: number | number[]): Array {
  const a = asArray('jnp.broadcastTo', x);
  const s = checkShape('jnp.broadcastTo', shape);
  const offset = s.length - a.ndim;
  if (offset < 0 || a.shape.some((d, i) => d !== 1 && d !== s[i + offset])) {
    throw new ValueError(`jnp.broadcastTo: cannot broadcast array of shape ${show(a.shape)} to shape ${show(s)}`);
  }
  return broadcastToShape(a, s);
}

/** jnp.broadcastArrays(...xs): the arrays broadcast to their common shape (dtypes unchanged). */
export function broadcastArrays(...xs: ArrayLike[]): Array[] {
  const arrays = xs.map((x, i) => asArray('jnp.broadcastArrays', x, `args[${i}]`));
  const shape = broadcastShapesOf('jnp.broadcastArrays', ...arrays.map((a) => a.shape));
  return arrays.map((a) => broadcastToShape(a, shape));
}

/** jnp.broadcastShapes(...shapes): the shape NumPy broadcasting gives. */
export function broadcastShapes(...shapes: (number | number[])[]): number[] {
  const checked = shapes.map((s, i) => checkShape('jnp.broadcastShapes', s, `shapes[${i}]`));
  return broadcastShapesOf('jnp.broadcastShapes', ...checked);
}

// ---- joining ----

function arrayList(fn: string, arrays: unknown): Array[] {
  if (!isList(arrays)) throw new TypeError(`${fn}: arrays must be a JS array of arrays, got ${show(arrays)}`);
  if (arrays.length === 0) throw new ValueError(`${fn}: need at least one array`);
  return arrays.map((x, i) => asArray(fn, x, `arrays[${i}]`));
}

/** Casts to `dtype` when given, else promotes to the common dtype (JAX's promote_dtypes), then concatenates. */
function join(fn: string, xs: Array[], axis: number, dtype: DType | undefined): Array {
  const rank = xs[0]!.ndim;
  xs.forEach((x) => {
    if (x.ndim !== rank) {
      throw new ValueError(`${fn}: all arrays must have the same number of dimensions, got shapes ${xs.map((a) => show(a.shape)).join(', ')}`);
    }
    if (x.shape.some((d, i) => i !== axis && d !== xs[0]!.shape[i])) {
      throw new ValueError(`${fn}: array shapes must match except along axis ${axis}, got ${xs.map((a) => show(a.shape)).join(', ')}`);
    }
  });
  const typed = dtype ? xs.map((x) => lax.convertElementType(x, dtype)) : promote(fn, ...xs);
  return lax.concatenate(typed, axis);
}

/** jnp.concatenate(arrays, { axis = 0, dtype }): axis null flattens every array first. Dtypes promote as in JAX. */
export function concatenate(arrays: ArrayLike[], options: { axis?: number | null } & JoinOptions = {}): Array {
  const fn = 'jnp.concatenate';
  checkOptions(fn, options, ['axis', 'dtype']);
  const xs = arrayList(fn, arrays);
  const dtype = dtypeOption(fn, options.dtype);
  if (options.axis === null) return join(fn, xs.map((x) => lax.reshape(x, [x.size])), 0, dtype);
  xs.forEach((x, i) => {
    if (x.ndim === 0) throw new ValueError(`${fn}: zero-dimensional arrays cannot be concatenated (arrays[${i}] has shape [])`);
  });
  const axis = normalizeAxis(fn, options.axis ?? 0, xs[0]!.ndim);
  return join(fn, xs, axis, dtype);
}

/** jnp.stack(arrays, { axis = 0, dtype }): joins equal-shaped arrays along a new axis. */
export function stack(arrays: ArrayLike[], options: { axis?: number } & JoinOptions = {}): Array {
  const fn = 'jnp.stack';
  checkOptions(fn, options, ['axis', 'dtype']);
  const xs = arrayList(fn, arrays);
  const shape = xs[0]!.shape;
  if (xs.some((x) => x.ndim !== shape.length || x.shape.some((d, i) => d !== shape[i]))) {
    throw new ValueError(`${fn}: all arrays must have the same shape, got ${xs.map((a) => show(a.shape)).join(', ')}`);
  }
  const axis = normalizeAxis(fn, options.axis ?? 0, shape.length + 1);
  const expanded = [...shape.slice(0, axis), 1, ...shape.slice(axis)];
  return join(fn, xs.map((x) => lax.reshape(x, expanded)), axis, dtypeOption(fn, options.dtype));
}

/** jnp.hstack(arrays): along axis 0 for 1-d arrays, else axis 1 (scalars become 1-d). */
export function hstack(arrays: ArrayLike[], options: JoinOptions = {}): Array {
  checkOptions('jnp.hstack', options, ['dtype']);
  const xs = arrayList('jnp.hstack', arrays).map((x, i) => atleastNd('jnp.hstack', x, 1, `arrays[${i}]`));
  return join('jnp.hstack', xs, xs[0]!.ndim === 1 ? 0 : 1, dtypeOption('jnp.hstack', options.dtype));
}

/** jnp.vstack(arrays): along axis 0 after making each array at least 2-d. */
export function vstack(arrays: ArrayLike[], options: JoinOptions = {}): Array {
  checkOptions('jnp.vstack', options, ['dtype']);
  const xs = arrayList('jnp.vstack', arrays).map((x, i) => atleastNd('jnp.vstack', x, 2, `arrays[${i}]`));
  return join('jnp.vstack', xs, 0, dtypeOption('jnp.vstack', options.dtype));
}

/** jnp.dstack(arrays): along axis 2 after making each array at least 3-d. */
export function dstack(arrays: ArrayLike[], options: JoinOptions = {}): Array {
  checkOptions('jnp.dstack', options, ['dtype']);
  const xs = arrayList('jnp.dstack', arrays).map((x, i) => atleastNd('jnp.dstack', x, 3, `arrays[${i}]`));
  return join('jnp.dstack', xs, 2, dtypeOption('jnp.dstack', options.dtype));
}

// ---- splitting ----

/** [start, stop) of each piece, with Python slice semantics for split indices (negative counts from the end, clamped). */
function splitBounds(fn: string, size: number, indicesOrSections: unknown, equal: boolean, axis: number): [number, number][] {
  if (typeof indicesOrSections === 'number') {
    const n = indicesOrSections;
    if (!Number.isInteger(n) || n < 1) throw new ValueError(`${fn}: the number of sections must be a positive integer, got ${show(n)}`);
    const part = Math.floor(size / n);
    const extra = size % n;
    if (equal && extra !== 0) {
      throw new ValueError(`${fn}: array split does not result in an equal division: axis ${axis} of size ${size} into ${n} sections`);
    }
    const bounds: [number, number][] = [];
    let start = 0;
    for (let i = 0; i < n; i++) {
      const stop = start + part + (i < extra ? 1 : 0);
      bounds.push([start, stop]);
      start = stop;
    }
    return bounds;
  }
  const indices = integerList(fn, indicesOrSections, 'indicesOrSections', 'a number of sections or an array of integer indices');
  const clamp = (i: number) => Math.min(size, Math.max(0, i < 0 ? i + size : i));
  const points = [0, ...indices.map(clamp), size];
  return indices.concat(size).map((_, k) => [points[k]!, Math.max(points[k]!, points[k + 1]!)]);
}

function splitImpl(fn: string, x: ArrayLike, indicesOrSections: unknown, options: { axis?: number }, equal: boolean): Array[] {
  checkOptions(fn, options, ['axis']);
  const a = asArray(fn, x);
  const axis = normalizeAxis(fn, options.axis ?? 0, a.ndim);
  const size = a.shape[axis]!;
  return splitBounds(fn, size, indicesOrSections, equal, axis).map(([start, stop]) =>
    start === 0 && stop === size ? a : lax.sliceInDim(a, start, stop, 1, axis),
  );
}

/** jnp.split(x, indicesOrSections, { axis = 0 }): N equal pieces (N must divide the axis), or pieces between sorted indices. */
export function split(x: ArrayLike, indicesOrSections: number | number[], options: { axis?: number } = {}): Array[] {
  return splitImpl('jnp.split', x, indicesOrSections, options, true);
}

/** jnp.arraySplit: like split, but N sections need not divide the axis (the first ones get one more element). */
export function arraySplit(x: ArrayLike, indicesOrSections: number | number[], options: { axis?: number } = {}): Array[] {
  return splitImpl('jnp.arraySplit', x, indicesOrSections, options, false);
}

// ---- tiling and repeating ----

/** jnp.tile(x, reps): x repeated reps[i] times along each axis (shorter of shape and reps padded with leading 1s). */
export function tile(x: ArrayLike, reps: number | number[]): Array {
  const fn = 'jnp.tile';
  const a = asArray(fn, x);
  const r = integerList(fn, reps, 'reps', 'a non-negative integer or an array of them');
  if (r.some((v) => v < 0)) throw new ValueError(`${fn}: reps must be non-negative, got ${show(reps)}`);
  const n = Math.max(r.length, a.ndim);
  const counts = [...ones(n - r.length), ...r];
  const shape = [...ones(n - a.ndim), ...a.shape];
  const base = lax.reshape(a, shape);
  if (counts.every((c) => c === 1)) return base;
  // broadcast to [r0, s0, r1, s1, ...], then merge each pair of axes
  const interleaved = shape.flatMap((s, i) => [counts[i]!, s]);
  const tiled = lax.broadcastInDim(base, interleaved, range(n).map((i) => 2 * i + 1));
  return lax.reshape(tiled, shape.map((s, i) => s * counts[i]!));
}

/** jnp.repeat(x, repeats, { axis }): each element repeated; repeats is a number or one count per element; no axis flattens. */
export function repeat(x: ArrayLike, repeats: number | number[], options: { axis?: number | null } = {}): Array {
  const fn = 'jnp.repeat';
  checkOptions(fn, options, ['axis']);
  let a = asArray(fn, x);
  if (options.axis === undefined || options.axis === null) a = lax.reshape(a, [a.size]);
  const axis = normalizeAxis(fn, options.axis ?? 0, a.ndim);
  const n = a.shape[axis]!;
  const counts = integerList(fn, repeats, 'repeats', 'a non-negative integer or an array of them');
  if (counts.some((c) => c < 0)) throw new ValueError(`${fn}: repeats must be non-negative, got ${show(repeats)}`);
  if (typeof repeats !== 'number' && counts.length !== 1 && counts.length !== n) {
    throw new ValueError(`${fn}: repeats has ${counts.length} entries but axis ${axis} of shape ${show(a.shape)} has ${n} elements`);
  }
  const shape = [...a.shape];
  if (counts.length === 1 || (n > 0 && counts.every((c) => c === counts[0]))) {
    // the same count everywhere: broadcast a new axis after `axis`, then merge the two
    const c = counts[0] ?? 0;
    const expanded = [...shape.slice(0, axis + 1), c, ...shape.slice(axis + 1)];
    const dims = range(a.ndim).map((i) => (i <= axis ? i : i + 1));
    shape[axis] = n * c;
    return lax.reshape(lax.broadcastInDim(a, expanded, dims), shape);
  }
  const indices: number[] = [];
  counts.forEach((c, i) => {
    for (let k = 0; k < c; k++) indices.push(i);
  });
  if (indices.length === 0) return lax.sliceInDim(a, 0, 0, 1, axis);
  const sliceSizes = [...shape];
  sliceSizes[axis] = 1;
  const gathered = arrayFromValues(indices, [indices.length, 1], 'int32');
  return lax.gather(a, gathered, {
    offsetDims: range(a.ndim).filter((i) => i !== axis), collapsedSliceDims: [axis], startIndexMap: [axis],
  }, sliceSizes);
}

// ---- flipping and rotating ----

/** jnp.flip(x, { axis }): reverses the given axes, or all of them. */
export function flip(x: ArrayLike, options: AxisOption = {}): Array {
  checkOptions('jnp.flip', options, ['axis']);
  const a = asArray('jnp.flip', x);
  return lax.rev(a, normalizeAxes('jnp.flip', options.axis, a.ndim));
}

/** jnp.fliplr(x): reverses axis 1. */
export function fliplr(x: ArrayLike): Array {
  const a = asArray('jnp.fliplr', x);
  if (a.ndim < 2) throw new ValueError(`jnp.fliplr: x must have at least 2 dimensions, got shape ${show(a.shape)}`);
  return lax.rev(a, [1]);
}

/** jnp.flipud(x): reverses axis 0. */
export function flipud(x: ArrayLike): Array {
  const a = asArray('jnp.flipud', x);
  if (a.ndim < 1) throw new ValueError(`jnp.flipud: x must have at least 1 dimension, got shape ${show(a.shape)}`);
  return lax.rev(a, [0]);
}

/** jnp.rot90(x, { k = 1, axes = [0, 1] }): rotates by k quarter turns from the first axis towards the second. */
export function rot90(x: ArrayLike, options: { k?: number; axes?: [number, number] } = {}): Array {
  const fn = 'jnp.rot90';
  checkOptions(fn, options, ['k', 'axes']);
  const a = asArray(fn, x);
  if (a.ndim < 2) throw new ValueError(`${fn}: x must have at least 2 dimensions, got shape ${show(a.shape)}`);
  const k = integerList(fn, options.k ?? 1, 'k', 'an integer');
  const axes = options.axes ?? [0, 1];
  if (!isList(axes) || axes.length !== 2) throw new ValueError(`${fn}: axes must be an array of 2 axes, got ${show(axes)}`);
  const [i, j] = normalizeAxes(fn, axes, a.ndim, 'axes') as [number, number];
  const turns = ((k[0]! % 4) + 4) % 4;
  if (turns === 0) return a;
  if (turns === 2) return lax.rev(a, [i, j]);
  const perm = range(a.ndim);
  perm[i] = j;
  perm[j] = i;
  return turns === 1 ? lax.transpose(lax.rev(a, [j]), perm) : lax.rev(lax.transpose(a, perm), [j]);
}

// ---- padding ----

const PAD_MODES = ['constant', 'edge', 'reflect', 'symmetric', 'wrap', 'empty'] as const;
type PadMode = (typeof PAD_MODES)[number];
type PadPairs<T> = T | [T] | [T, T] | ([T] | [T, T])[];

/** NumPy's _as_pairs: a value, [v], [before, after] or per-axis pairs, broadcast to one [before, after] per axis. */
function asPairs(fn: string, value: unknown, ndim: number, arg: string, integers: boolean): [number, number][] {
  const bad = () =>
    new ValueError(`${fn}: ${arg} must be a ${integers ? 'non-negative integer' : 'number'}, [before, after], or [[before, after], ...] with one pair per axis (${ndim}), got ${show(value)}`);
  const isScalar = (v: unknown): v is number => typeof v === 'number' || typeof v === 'boolean';
  let rows: unknown[][];
  if (isScalar(value)) rows = [[value]];
  else if (isList(value) && value.length > 0 && value.every(isScalar)) rows = [value];
  else if (isList(value) && value.length > 0 && value.every((r) => isList(r))) rows = value as unknown[][];
  else throw bad();
  if (rows.length !== 1 && rows.length !== ndim) throw bad();
  if (rows.some((r) => (r.length !== 1 && r.length !== 2) || !r.every(isScalar))) throw bad();
  const pairs = range(ndim).map((i) => {
    const r = (rows.length === 1 ? rows[0] : rows[i]) as number[];
    return [Number(r[0]), Number(r[r.length - 1])] as [number, number];
  });
  if (integers && pairs.some((p) => p.some((v) => !Number.isInteger(v) || v < 0))) {
    throw new ValueError(`${fn}: ${arg} must contain non-negative integers, got ${show(value)}`);
  }
  return pairs;
}

function padConstant(fn: string, a: Array, widths: [number, number][], constantValues: unknown): Array {
  // constants take x's dtype (and weak type), as JAX's _pad_constant converts them
  const scalar = (v: number | Array): Array => (v instanceof Array ? lax.convertElementType(v, a.dtype) : arrayFromValues([v], [], a.dtype, a.weakType));
  const everywhere = (v: number | Array): Array => (a.ndim === 0 ? a : lax.pad(a, scalar(v), widths.map(([lo, hi]) => [lo, hi, 0])));
  if (constantValues instanceof Array) {
    if (constantValues.ndim !== 0) {
      throw new ValueError(`${fn}: constantValues must be a scalar or pairs of JS numbers, got an Array of shape ${show(constantValues.shape)}`);
    }
    return everywhere(constantValues);
  }
  const values = asPairs(fn, constantValues, a.ndim, 'constantValues', false);
  if (values.length === 0) return a;
  if (values.every(([lo, hi]) => lo === values[0]![0] && hi === values[0]![0])) return everywhere(values[0]![0]);
  // per-axis values: pad one side at a time, axis 0 first, so corners take the last axis's values (as NumPy)
  let out = a;
  widths.forEach(([lo, hi], i) => {
    const side = (before: number, after: number, v: number) => {
      const config = widths.map((): [number, number, number] => [0, 0, 0]);
      config[i] = [before, after, 0];
      out = lax.pad(out, scalar(v), config);
    };
    if (lo > 0) side(lo, 0, values[i]![0]);
    if (hi > 0) side(0, hi, values[i]![1]);
  });
  return out;
}

function padEdge(a: Array, axis: number, [lo, hi]: [number, number]): Array {
  const n = a.shape[axis]!;
  const grow = (edge: Array, count: number) => {
    const shape = [...a.shape];
    shape[axis] = count;
    return lax.broadcastInDim(edge, shape, range(a.ndim));
  };
  const parts = [a];
  if (lo > 0) parts.unshift(grow(lax.sliceInDim(a, 0, 1, 1, axis), lo));
  if (hi > 0) parts.push(grow(lax.sliceInDim(a, n - 1, n, 1, axis), hi));
  return lax.concatenate(parts, axis);
}

function padWrap(a: Array, axis: number, [lo, hi]: [number, number]): Array {
  const n = a.shape[axis]!;
  const parts: Array[] = [];
  if (lo % n > 0) parts.push(lax.sliceInDim(a, n - (lo % n), n, 1, axis));
  for (let i = 0; i < Math.floor(lo / n) + Math.floor(hi / n) + 1; i++) parts.push(a);
  if (hi % n > 0) parts.push(lax.sliceInDim(a, 0, hi % n, 1, axis));
  return lax.concatenate(parts, axis);
}

/** Reflection about the edge element ('reflect') or the edge itself ('symmetric'); wide pads reflect the padded array again, as NumPy. */
function padReflect(a: Array, axis: number, [lo, hi]: [number, number], mode: 'reflect' | 'symmetric'): Array {
  const n = a.shape[axis]!;
  const offset = mode === 'reflect' && n > 1 ? 1 : 0;
  let out = a;
  for (let left = lo; left > 0;) {
    const count = Math.min(left, n - offset);
    left -= count;
    out = lax.concatenate([lax.rev(lax.sliceInDim(out, offset, offset + count, 1, axis), [axis]), out], axis);
  }
  for (let right = hi; right > 0;) {
    const count = Math.min(right, n - offset);
    right -= count;
    const size = out.shape[axis]!;
    out = lax.concatenate([out, lax.rev(lax.sliceInDim(out, size - count - offset, size - offset, 1, axis), [axis])], axis);
  }
  return out;
}

/**
 * jnp.pad(x, padWidth, { mode = 'constant', constantValues = 0 }). padWidth is
 * n, [before, after], or [[before0, after0], [before1, after1], ...].
 */
export function pad(x: ArrayLike, padWidth: PadPairs<number>, options: { mode?: PadMode; constantValues?: PadPairs<number | boolean> | Array } = {}): Array {
  const fn = 'jnp.pad';
  checkOptions(fn, options, ['mode', 'constantValues']);
  const a = asArray(fn, x);
  const mode = options.mode ?? 'constant';
  if (!(PAD_MODES as readonly unknown[]).includes(mode)) {
    throw new ValueError(`${fn}: mode ${show(mode)} is not supported (supported modes: ${PAD_MODES.map((m) => `'${m}'`).join(', ')})`);
  }
  if (mode !== 'constant' && options.constantValues !== undefined) {
    throw new ValueError(`${fn}: constantValues is only allowed with mode 'constant', got mode ${show(mode)}`);
  }
  const widths = asPairs(fn, padWidth, a.ndim, 'padWidth', true);
  if (mode === 'constant') return padConstant(fn, a, widths, options.constantValues ?? 0);
  if (mode === 'empty') return padConstant(fn, a, widths, 0);
  let out = a;
  widths.forEach((w, axis) => {
    if (w[0] === 0 && w[1] === 0) return;
    if (a.shape[axis] === 0) {
      throw new ValueError(`${fn}: cannot pad empty axis ${axis} of shape ${show(a.shape)} with mode ${show(mode)}; only 'constant' and 'empty' can extend an empty axis`);
    }
    out = mode === 'edge' ? padEdge(out, axis, w) : mode === 'wrap' ? padWrap(out, axis, w) : padReflect(out, axis, w, mode);
  });
  return out;
}

// ---- triangles ----

function triangle(fn: string, m: ArrayLike, k: number, lower: boolean): Array {
  const a = asArray(fn, m, 'm');
  if (a.ndim < 2) throw new ValueError(`${fn}: m must have at least 2 dimensions, got shape ${show(a.shape)}`);
  if (typeof k !== 'number' || !Number.isInteger(k)) throw new TypeError(`${fn}: k must be an integer, got ${show(k)}`);
  const rows = a.shape[a.ndim - 2]!;
  const cols = a.shape[a.ndim - 1]!;
  const i = lax.broadcastedIota('int32', [rows, cols], 0);
  const j = lax.broadcastedIota('int32', [rows, cols], 1);
  const shifted = k === 0 ? i : lax.add(i, k);
  // tril keeps j <= i + k; triu keeps j >= i + k
  const mask = lax.broadcastInDim(lower ? lax.ge(shifted, j) : lax.le(shifted, j), [...a.shape], [a.ndim - 2, a.ndim - 1]);
  const zero = lax.broadcastInDim(arrayFromValues([0], [], a.dtype, a.weakType), [...a.shape], []);
  return lax.select(mask, a, zero);
}

/** jnp.tril(m, k = 0): zeros above the k-th diagonal of the last two axes. */
export function tril(m: ArrayLike, k = 0): Array {
  return triangle('jnp.tril', m, k, true);
}

/** jnp.triu(m, k = 0): zeros below the k-th diagonal of the last two axes. */
export function triu(m: ArrayLike, k = 0): Array {
  return triangle('jnp.triu', m, k, false);
}
