// NumPy indexing as JAX does it: x.index(...) is x[idx], x.at(...) is x.at[idx]
// (get/set/add/multiply/min/max), and jnp.take / jnp.takeAlongAxis. Static
// integers and slices become lax.slice, lax.rev and lax.reshape; anything with
// an index array becomes one lax.gather (one lax.scatter for updates), built
// like JAX's index_to_gather in jax/_src/numpy/indexing.py. Out-of-bounds
// index arrays follow JAX: clamped when reading, dropped when updating.
// Static integer indices out of bounds are treated the same way (jnp.arange(10)[11] is 9, as JAX's Common
// Gotchas shows), unlike NumPy's IndexError.
import { Array, type ArrayAt, type ArrayLike, type AtGetOptions, type AtUpdateOptions, type IndexItem } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { type DType, isFloating, isInteger, isUnsigned } from '../core/dtype.js';
import { IndexError, ValueError, checkOptions, show } from '../core/errors.js';
import type { GatherDimensionNumbers, GatherMode } from '../core/primitives.js';
import { broadcastShapes, normalizeAxis, shapesEqual, sizeOf } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { promote } from './util.js';

type Item =
  | { kind: 'int'; value: number }
  | { kind: 'slice'; start: number | null; stop: number | null; step: number | null }
  | { kind: 'newaxis' }
  | { kind: 'ellipsis' }
  | { kind: 'array'; array: Array };

const FULL_SLICE: Item = { kind: 'slice', start: null, stop: null, step: null };

// ---- parsing ----

function isIndexArrayData(item: unknown): boolean {
  return globalThis.Array.isArray(item) && item.some((e) => globalThis.Array.isArray(e));
}

function checkIndexArray(fn: string, a: Array, position: number): Array {
  if (a.dtype === 'bool') {
    throw new IndexError(
      `${fn}: the boolean mask at position ${position} (shape ${show(a.shape)}) is traced, so the result's shape would depend on its values ` +
        `(JAX's NonConcreteBooleanIndexError); use jnp.where(mask, x, other) to select values, or index outside jit`,
    );
  }
  if (!isInteger(a.dtype)) throw new TypeError(`${fn}: index arrays must have an integer dtype, got ${a.dtype} at position ${position}${isFloating(a.dtype) ? FLOAT_INDEX_HINT : ''}`);
  return a;
}

function sliceEntry(fn: string, value: unknown, position: number, name: string): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${fn}: slice ${name} at position ${position} must be an integer or null, got ${show(value)}`);
  }
  return value;
}

function parseItem(fn: string, item: unknown, position: number): Item {
  if (typeof item === 'number') {
    if (!Number.isInteger(item)) throw new TypeError(`${fn}: index ${item} at position ${position} must be an integer`);
    return { kind: 'int', value: item };
  }
  if (item === null) return FULL_SLICE;
  if (item === 'newaxis') return { kind: 'newaxis' };
  if (item === '...') return { kind: 'ellipsis' };
  if (item instanceof Array) return { kind: 'array', array: checkIndexArray(fn, toArray(fn, item, `index ${position}`), position) };
  if (ArrayBuffer.isView(item) || isIndexArrayData(item)) {
    return { kind: 'array', array: checkIndexArray(fn, toArray(fn, item, `index ${position}`), position) };
  }
  if (globalThis.Array.isArray(item)) {
    if (item.length !== 2 && item.length !== 3) {
      throw new TypeError(
        `${fn}: a slice at position ${position} is [start, stop] or [start, stop, step] (null for an open end), got ${show(item)}; ` +
          `for an index array pass jnp.array([...]), an Int32Array or nested arrays`,
      );
    }
    const step = sliceEntry(fn, item[2], position, 'step');
    if (step === 0) throw new ValueError(`${fn}: slice step cannot be zero (position ${position}, ${show(item)})`);
    return { kind: 'slice', start: sliceEntry(fn, item[0], position, 'start'), stop: sliceEntry(fn, item[1], position, 'stop'), step };
  }
  if (typeof item === 'boolean') {
    throw new TypeError(`${fn}: boolean index ${item} at position ${position} is not supported; use 'newaxis' to add an axis`);
  }
  if (typeof item === 'string') throw new TypeError(`${fn}: string index ${show(item)} at position ${position} is not supported (use 'newaxis' or '...')`);
  throw new TypeError(
    `${fn}: index at position ${position} must be an integer, null, a [start, stop, step] slice, 'newaxis', '...' or an integer array, got ${show(item)}`,
  );
}

/** Axes an index item consumes (a boolean mask: its rank). */
function axesOf(item: unknown): number {
  if (item === 'newaxis' || item === '...') return 0;
  if (item instanceof Array && item.dtype === 'bool') return Math.max(item.ndim, 1);
  return 1;
}

/**
 * A boolean mask on a concrete array becomes the integer index arrays of its true positions (NumPy's
 * x[mask] is x[mask.nonzero()]), so x.index(jnp.less(x, 0)) works outside jit; under jit the result's shape
 * would depend on values, which stays JAX's error. The mask must have the shape of the axes it indexes.
 */
function expandMasks(fn: string, shape: readonly number[], given: readonly unknown[]): unknown[] {
  // nested JS booleans are a mask too
  const hasBoolean = (x: unknown): boolean => typeof x === 'boolean' || (globalThis.Array.isArray(x) && x.some(hasBoolean));
  const raw = given.map((item, i) => (isIndexArrayData(item) && hasBoolean(item) ? toArray(fn, item, `index ${i}`) : item));
  if (!raw.some((item) => item instanceof Array && item.dtype === 'bool' && !item.isTracer)) return [...raw];
  const ellipsis = raw.indexOf('...');
  const out: unknown[] = [];
  raw.forEach((item, position) => {
    if (!(item instanceof Array && item.dtype === 'bool' && !item.isTracer)) {
      out.push(item);
      return;
    }
    const before = ellipsis >= 0 && ellipsis < position
      ? shape.length - raw.slice(position).reduce((n: number, r) => n + axesOf(r), 0)
      : raw.slice(0, position).reduce((n: number, r) => n + axesOf(r), 0);
    const mask = item;
    const axes = shape.slice(before, before + mask.ndim);
    if (mask.ndim === 0 || axes.length !== mask.ndim || axes.some((d, i) => d !== mask.shape[i])) {
      throw new IndexError(`${fn}: the boolean mask at position ${position} has shape ${show(mask.shape)}, which does not match the indexed axes ${show(axes)} of an array of shape ${show(shape)}`);
    }
    const flags = mask.dataSync();
    const coords: number[][] = mask.shape.map(() => []);
    const strides = mask.shape.map((_, i) => mask.shape.slice(i + 1).reduce((a, b) => a * b, 1));
    flags.forEach((f, flat) => {
      if (!f) return;
      strides.forEach((st, i) => coords[i]!.push(Math.floor(flat / st) % mask.shape[i]!));
    });
    for (const c of coords) out.push(arrayFromValues(c, [c.length], 'int32'));
  });
  return out;
}

interface ParsedIndex {
  items: Item[]; // no ellipsis; one slice/int/array per axis of x, plus newaxis entries
  hasArray: boolean;
  advancedContiguous: boolean;
}

/** Parses items, expands the ellipsis and adds trailing full slices (JAX's _canonicalize_tuple_index). */
function parseIndex(fn: string, shape: readonly number[], raw: readonly unknown[]): ParsedIndex {
  const ndim = shape.length;
  if (!globalThis.Array.isArray(raw)) throw new TypeError(`${fn}: indices must be a list of index items, got ${show(raw)}`);
  const parsed = expandMasks(fn, shape, raw).map((item, i) => parseItem(fn, item, i));
  const ellipses = parsed.filter((p) => p.kind === 'ellipsis').length;
  if (ellipses > 1) throw new IndexError(`${fn}: an index can only have a single ellipsis ('...'), got ${ellipses}`);
  const consumed = parsed.filter((p) => p.kind === 'int' || p.kind === 'slice' || p.kind === 'array').length;
  if (consumed > ndim) {
    throw new IndexError(`${fn}: too many indices: a ${ndim}-dimensional array of shape ${show(shape)} indexed with ${consumed} regular ${consumed === 1 ? 'index' : 'indices'}`);
  }
  const hasArray = parsed.some((p) => p.kind === 'array');
  // Contiguity is judged before the ellipsis expands, as NumPy does (jax-ml/jax#25109).
  const advanced = parsed.flatMap((p, i) => (p.kind === 'int' || p.kind === 'array' ? [i] : []));
  const advancedContiguous = advanced.every((p, i) => i === 0 || p === advanced[i - 1]! + 1);
  const fill = (n: number) => globalThis.Array.from({ length: n }, () => FULL_SLICE);
  const at = parsed.findIndex((p) => p.kind === 'ellipsis');
  const items = at >= 0 ? [...parsed.slice(0, at), ...fill(ndim - consumed), ...parsed.slice(at + 1)] : [...parsed, ...fill(ndim - consumed)];
  return { items, hasArray, advancedContiguous };
}

/** Python's slice.indices + len(range(...)): the first index, the step and the number of elements. */
function canonicalSlice(item: Extract<Item, { kind: 'slice' }>, size: number): { start: number; step: number; count: number } {
  const step = item.step ?? 1;
  if (step > 0) {
    const clamp = (v: number) => (v < 0 ? Math.max(v + size, 0) : Math.min(v, size));
    const start = item.start === null ? 0 : clamp(item.start);
    const stop = item.stop === null ? size : clamp(item.stop);
    return { start, step, count: stop > start ? Math.ceil((stop - start) / step) : 0 };
  }
  const clamp = (v: number) => (v < 0 ? Math.max(v + size, -1) : Math.min(v, size - 1));
  const start = item.start === null ? size - 1 : clamp(item.start);
  const stop = item.stop === null ? -1 : clamp(item.stop);
  return { start, step, count: start > stop ? Math.ceil((start - stop) / -step) : 0 };
}

/** A static integer index made non-negative when it is in [-size, 0); out-of-bounds values stay out of bounds (clamped or dropped later, as JAX does). */
function staticIndex(value: number, size: number): number {
  return value < 0 && value >= -size ? value + size : value;
}

// ---- x[idx] with static integers and slices only ----

function basicIndex(fn: string, x: Array, items: Item[]): Array {
  const start: number[] = [];
  const limit: number[] = [];
  const strides: number[] = [];
  const reversed: number[] = [];
  const outShape: number[] = [];
  let axis = 0;
  for (const item of items) {
    if (item.kind === 'newaxis') {
      outShape.push(1);
      continue;
    }
    const size = x.shape[axis]!;
    if (item.kind === 'int') {
      // JAX clamps an out-of-bounds read (jnp.arange(10)[11] is 9): something must be returned
      if (size === 0) throw new IndexError(`${fn}: index ${item.value} is out of bounds for axis ${axis} with size 0`);
      const v = Math.min(Math.max(staticIndex(item.value, size), 0), size - 1);
      start.push(v);
      limit.push(v + 1);
      strides.push(1);
    } else if (item.kind === 'slice') {
      const s = canonicalSlice(item, size);
      if (s.count === 0) {
        start.push(0);
        limit.push(0);
        strides.push(1);
      } else if (s.step > 0) {
        start.push(s.start);
        limit.push(s.start + (s.count - 1) * s.step + 1);
        strides.push(s.step);
      } else {
        // a negative step is the positive-step slice of the same elements, reversed
        start.push(s.start + (s.count - 1) * s.step);
        limit.push(s.start + 1);
        strides.push(-s.step);
        if (s.count > 1) reversed.push(axis);
      }
      outShape.push(s.count);
    } else {
      throw new Error(`${fn}: internal error: unexpected ${item.kind} in basic indexing`);
    }
    axis++;
  }
  let y = x;
  const trivial = start.every((s, d) => s === 0 && limit[d] === x.shape[d] && strides[d] === 1);
  if (!trivial) y = lax.slice(y, start, limit, strides);
  if (reversed.length > 0) y = lax.rev(y, reversed);
  return lax.reshape(y, outShape);
}

// ---- the general case: one gather (JAX's index_to_gather) ----

interface Indexer {
  /** The shape of x[idx], newaxis dims included. */
  sliceShape: number[];
  newaxisDims: number[];
  /** Pieces of the gather indices, each placed at `start` in the batch shape; null when no index is needed. */
  components: { array: Array; start: number }[];
  batchShape: number[];
  dnums: GatherDimensionNumbers;
  gatherSliceShape: number[];
}

const zerosOf = (fn: string, dtype: DType, shape: number[]): Array => lax.broadcastInDim(toArray(fn, 0, 'x', dtype), shape, []);

const int32Constant = (values: number[], shape: number[]): Array => arrayFromValues(values, shape, 'int32');

/** An index array as int32 with negative entries wrapped (JAX's _normalize_index). */
function normalizeIndexArray(a: Array, size: number): Array {
  if (isUnsigned(a.dtype)) {
    // values past int32 stay out of bounds rather than wrapping negative
    return lax.convertElementType(a.dtype === 'uint32' ? lax.min(a, 2147483647) : a, 'int32');
  }
  const i = lax.convertElementType(a, 'int32');
  return lax.select(lax.lt(i, 0), lax.add(i, size), i);
}

function indexToGather(fn: string, x: Array, index: ParsedIndex): Indexer {
  const { items } = index;
  const advancedPositions: number[] = [];
  const advanced: { array: Array; axis: number }[] = [];
  if (index.hasArray) {
    let axis = 0;
    items.forEach((item, pos) => {
      if (item.kind === 'int') {
        advancedPositions.push(pos);
        advanced.push({ array: int32Constant([staticIndex(item.value, x.shape[axis]!)], []), axis });
      } else if (item.kind === 'array') {
        advancedPositions.push(pos);
        advanced.push({ array: normalizeIndexArray(item.array, x.shape[axis]!), axis });
      }
      if (item.kind !== 'newaxis') axis++;
    });
  }
  let advancedShape: number[] = [];
  if (advanced.length > 0) {
    try {
      advancedShape = broadcastShapes(fn, ...advanced.map((a) => a.array.shape));
    } catch {
      throw new IndexError(`${fn}: index arrays of shapes ${advanced.map((a) => show(a.array.shape)).join(', ')} cannot be broadcast together`);
    }
  }

  const offsetDims: number[] = [];
  const collapsedSliceDims: number[] = [];
  const startIndexMap: number[] = [];
  const components: { array: Array; start: number }[] = [];
  const batchShape: number[] = [];
  const sliceShape: number[] = [];
  const newaxisDims: number[] = [];
  const gatherSliceShape: number[] = [];
  let xAxis = 0;
  let yAxis = 0;
  let collapsedYAxis = 0;

  items.forEach((item, pos) => {
    const atAdvancedBlock = index.advancedContiguous ? pos === advancedPositions[0] : pos === 0;
    if (advanced.length > 0 && atAdvancedBlock) {
      const start = batchShape.length;
      for (const a of advanced) components.push({ array: a.array, start: start + advancedShape.length - a.array.ndim });
      batchShape.push(...advancedShape);
      startIndexMap.push(...advanced.map((a) => a.axis));
      collapsedSliceDims.push(...advanced.map((a) => a.axis));
      sliceShape.push(...advancedShape);
      yAxis += advancedShape.length;
      collapsedYAxis += advancedShape.length;
    }
    if (advancedPositions.includes(pos)) {
      xAxis++;
      gatherSliceShape.push(1);
      return;
    }
    const size = x.shape[xAxis]!;
    if (item.kind === 'int') {
      components.push({ array: int32Constant([staticIndex(item.value, size)], []), start: batchShape.length });
      collapsedSliceDims.push(xAxis);
      gatherSliceShape.push(1);
      startIndexMap.push(xAxis);
      xAxis++;
    } else if (item.kind === 'newaxis') {
      sliceShape.push(1);
      newaxisDims.push(yAxis);
      yAxis++;
    } else if (item.kind === 'slice') {
      const s = canonicalSlice(item, size);
      sliceShape.push(s.count);
      if (s.step === 1) {
        if (s.count !== size) {
          components.push({ array: int32Constant([s.start], []), start: batchShape.length });
          startIndexMap.push(xAxis);
        }
        gatherSliceShape.push(s.count);
        offsetDims.push(collapsedYAxis);
      } else {
        const positions = globalThis.Array.from({ length: s.count }, (_, k) => s.start + k * s.step);
        components.push({ array: int32Constant(positions, [s.count]), start: batchShape.length });
        batchShape.push(s.count);
        gatherSliceShape.push(1);
        startIndexMap.push(xAxis);
        collapsedSliceDims.push(xAxis);
      }
      collapsedYAxis++;
      yAxis++;
      xAxis++;
    } else {
      throw new Error(`${fn}: internal error: unexpected ${item.kind} while building a gather`);
    }
  });
  return {
    sliceShape,
    newaxisDims,
    components,
    batchShape,
    dnums: { offsetDims, collapsedSliceDims: [...collapsedSliceDims].sort((a, b) => a - b), startIndexMap },
    gatherSliceShape,
  };
}

/** Concatenates the components into gather indices of shape [...batchShape, vectorLength]. */
function gatherIndices(ix: Indexer): Array | null {
  if (ix.components.length === 0) return null;
  const full = [...ix.batchShape, 1];
  const parts = ix.components.map(({ array, start }) => {
    if (start === 0 && shapesEqual(array.shape, ix.batchShape)) return lax.reshape(array, full);
    return lax.broadcastInDim(array, full, array.shape.map((_, i) => start + i));
  });
  return parts.length === 1 ? parts[0]! : lax.concatenate(parts, full.length - 1);
}

/** An index array into an empty axis has nothing to read or write (XLA rejects the gather). */
function checkEmptyAxes(fn: string, x: Array, ix: Indexer): void {
  ix.gatherSliceShape.forEach((s, d) => {
    if (s > x.shape[d]!) throw new IndexError(`${fn}: index is out of bounds for axis ${d} with size ${x.shape[d]}`);
  });
}

function gatherIndex(fn: string, x: Array, index: ParsedIndex, mode: GatherMode, fillValue: number | null): Array {
  const ix = indexToGather(fn, x, index);
  if (sizeOf(ix.sliceShape) === 0) return lax.convertWeak(zerosOf(fn, x.dtype, ix.sliceShape), x.dtype, x.weakType);
  checkEmptyAxes(fn, x, ix);
  const indices = gatherIndices(ix);
  const y = indices === null ? x : lax.gather(x, indices, ix.dnums, ix.gatherSliceShape, { mode, fillValue });
  return lax.reshape(y, ix.sliceShape);
}

function asOperand(fn: string, x: unknown): Array {
  return toArray(fn, x, 'x');
}

/** x[...items], NumPy/JAX indexing. Indices out of bounds, static or not, are clamped (JAX). */
/** Said after an error about float index arrays. */
const FLOAT_INDEX_HINT = " (arrays made from JS numbers are float32: pass { dtype: 'int32' }, an Int32Array or jnp.arange)";

export function index(x: ArrayLike, items: readonly IndexItem[]): Array {
  const fn = 'Array.index';
  const xa = asOperand(fn, x);
  const parsed = parseIndex(fn, xa.shape, items);
  if (!parsed.hasArray) return basicIndex(fn, xa, parsed.items);
  return gatherIndex(fn, xa, parsed, 'clip', null);
}

// ---- x.at[idx] ----

type Combine = 'set' | 'add' | 'multiply' | 'min' | 'max';

const MODES = ['promise_in_bounds', 'clip', 'drop', 'fill'] as const;

function checkMode(fn: string, mode: unknown): (typeof MODES)[number] | undefined {
  if (mode === undefined || mode === null) return undefined;
  if (!MODES.includes(mode as never)) throw new ValueError(`${fn}: mode must be one of ${MODES.map((m) => `'${m}'`).join(', ')}, got ${show(mode)}`);
  return mode as (typeof MODES)[number];
}

function elementwiseCombine(combine: Combine, x: Array, v: Array): Array {
  const bool = x.dtype === 'bool';
  switch (combine) {
    case 'set': return v;
    case 'add': return bool ? lax.bitwiseOr(x, v) : lax.add(x, v);
    case 'multiply': return bool ? lax.bitwiseAnd(x, v) : lax.mul(x, v);
    case 'min': return lax.min(x, v);
    case 'max': return lax.max(x, v);
  }
}

const SCATTER = { set: lax.scatter, add: lax.scatterAdd, multiply: lax.scatterMul, min: lax.scatterMin, max: lax.scatterMax };

function scatterUpdate(fn: string, x: Array, rawItems: readonly IndexItem[], value: ArrayLike, combine: Combine, options: AtUpdateOptions): Array {
  checkOptions(fn, options, ['mode', 'indicesAreSorted', 'uniqueIndices']);
  const requested = checkMode(fn, options.mode);
  // out-of-bounds updates are dropped (JAX's default), static integers included; mode 'clip' clamps them
  const mode: GatherMode = requested === 'clip' ? 'clip' : 'fill';
  const parsed = parseIndex(fn, x.shape, rawItems);
  const v = value instanceof Array || typeof value === 'number' || typeof value === 'boolean' ? value : toArray(fn, value, 'value');
  if (v instanceof Array && !v.isTracer) v.storage(fn);
  const ix = indexToGather(fn, x, parsed);
  if (sizeOf(ix.sliceShape) === 0) return x;
  checkEmptyAxes(fn, x, ix);

  // JAX promotes x and the values, updates in the promoted dtype, and casts back to x's dtype.
  let [xp, vp] = promote(fn, x, v) as [Array, Array];
  const target = ix.sliceShape;
  const lead = target.length - vp.ndim;
  if (lead < 0 || vp.shape.some((d, i) => d !== 1 && d !== target[lead + i])) {
    throw new ValueError(`${fn}: values of shape ${show(vp.shape)} cannot be broadcast to the indexed shape ${show(target)}`);
  }
  vp = lax.broadcastInDim(vp, target, vp.shape.map((_, i) => lead + i));
  vp = lax.reshape(vp, ix.sliceShape.filter((_, d) => !ix.newaxisDims.includes(d)));

  const indices = gatherIndices(ix);
  let out: Array;
  if (indices === null) {
    out = elementwiseCombine(combine, xp, vp);
  } else {
    const dnums = {
      updateWindowDims: ix.dnums.offsetDims,
      insertedWindowDims: ix.dnums.collapsedSliceDims,
      scatterDimsToOperandDims: ix.dnums.startIndexMap,
    };
    // bool add/multiply are or/and: accumulate as int32 and test for nonzero
    const viaInt = xp.dtype === 'bool' && (combine === 'add' || combine === 'multiply');
    if (viaInt) [xp, vp] = [lax.convertElementType(xp, 'int32'), lax.convertElementType(vp, 'int32')];
    out = SCATTER[combine](xp, indices, vp, dnums, { mode });
    if (viaInt) out = lax.ne(out, 0);
  }
  return lax.convertWeak(out, x.dtype, x.weakType);
}

/** The object x.at(...items) returns: JAX's x.at[idx]. Every method returns a new array. */
class IndexUpdateRef implements ArrayAt {
  readonly #x: Array;
  readonly #items: readonly IndexItem[];

  constructor(x: Array, items: readonly IndexItem[]) {
    this.#x = x;
    this.#items = items;
  }

  /** x[idx]; mode 'fill'/'drop' fills out-of-bounds reads with fillValue (NaN, the integer minimum/maximum, or true by default). */
  get(options: AtGetOptions = {}): Array {
    const fn = 'Array.at().get';
    checkOptions(fn, options, ['mode', 'fillValue', 'indicesAreSorted', 'uniqueIndices']);
    const requested = checkMode(fn, options.mode);
    const fillValue = options.fillValue ?? null;
    if (fillValue !== null && typeof fillValue !== 'number' && typeof fillValue !== 'boolean') {
      throw new TypeError(`${fn}: fillValue must be a number, got ${show(fillValue)}`);
    }
    const parsed = parseIndex(fn, this.#x.shape, this.#items);
    if (requested === undefined || requested === 'promise_in_bounds') {
      if (!parsed.hasArray) return basicIndex(fn, this.#x, parsed.items);
      return gatherIndex(fn, this.#x, parsed, 'clip', null);
    }
    return gatherIndex(fn, this.#x, parsed, requested === 'clip' ? 'clip' : 'fill', fillValue === null ? null : Number(fillValue));
  }

  /** x with x[idx] = value; with repeated indices the last update wins on the CPU (JAX leaves the order unspecified). */
  set(value: ArrayLike, options: AtUpdateOptions = {}): Array {
    return scatterUpdate('Array.at().set', this.#x, this.#items, value, 'set', options);
  }
  /** x with x[idx] += value; repeated indices accumulate. */
  add(value: ArrayLike, options: AtUpdateOptions = {}): Array {
    return scatterUpdate('Array.at().add', this.#x, this.#items, value, 'add', options);
  }
  /** x with x[idx] *= value; repeated indices multiply together. */
  multiply(value: ArrayLike, options: AtUpdateOptions = {}): Array {
    return scatterUpdate('Array.at().multiply', this.#x, this.#items, value, 'multiply', options);
  }
  /** x with x[idx] = minimum(x[idx], value), over all repeats of an index. */
  min(value: ArrayLike, options: AtUpdateOptions = {}): Array {
    return scatterUpdate('Array.at().min', this.#x, this.#items, value, 'min', options);
  }
  /** x with x[idx] = maximum(x[idx], value), over all repeats of an index. */
  max(value: ArrayLike, options: AtUpdateOptions = {}): Array {
    return scatterUpdate('Array.at().max', this.#x, this.#items, value, 'max', options);
  }
}

/** JAX's x.at[idx]: functional updates. Out-of-bounds index arrays are dropped by default (mode 'drop'/'fill'), clamped with 'clip'. */
export function at(x: ArrayLike, items: readonly IndexItem[]): ArrayAt {
  const xa = asOperand('Array.at', x);
  if (!globalThis.Array.isArray(items)) throw new TypeError(`Array.at: indices must be a list of index items, got ${show(items)}`);
  return new IndexUpdateRef(xa, [...items]);
}

// ---- take / takeAlongAxis ----

function integerIndices(fn: string, indices: ArrayLike): Array {
  const idx = toArray(fn, indices, 'indices');
  if (!isInteger(idx.dtype)) throw new TypeError(`${fn}: indices must have an integer dtype, got ${idx.dtype}${isFloating(idx.dtype) ? FLOAT_INDEX_HINT : ''}`);
  return idx;
}

function fillOption(fn: string, fillValue: unknown): number | null {
  if (fillValue === undefined || fillValue === null) return null;
  if (typeof fillValue === 'boolean') return Number(fillValue);
  if (typeof fillValue !== 'number') throw new TypeError(`${fn}: fillValue must be a number, got ${show(fillValue)}`);
  return fillValue;
}

export interface TakeOptions {
  axis?: number | null;
  mode?: 'fill' | 'clip' | 'wrap' | 'raise' | null;
  fillValue?: number | boolean | null;
  uniqueIndices?: boolean;
  indicesAreSorted?: boolean;
}

/** jnp.take: elements of `a` at `indices` along `axis` (the flattened array when axis is null). Default mode 'fill': out-of-bounds reads give NaN / the dtype's fill value. */
export function take(a: ArrayLike, indices: ArrayLike, options: TakeOptions = {}): Array {
  const fn = 'jnp.take';
  checkOptions(fn, options, ['axis', 'mode', 'fillValue', 'uniqueIndices', 'indicesAreSorted']);
  let x = toArray(fn, a, 'a');
  let idx = integerIndices(fn, indices);
  let axis: number;
  if (options.axis === undefined || options.axis === null) {
    x = lax.reshape(x, [x.size]);
    axis = 0;
  } else {
    axis = normalizeAxis(fn, options.axis, x.ndim);
  }
  const mode = options.mode ?? 'fill';
  const fillValue = fillOption(fn, options.fillValue);
  const size = x.shape[axis]!;
  const outShape = [...x.shape.slice(0, axis), ...idx.shape, ...x.shape.slice(axis + 1)];
  if (mode === 'raise') throw new ValueError(`${fn}: mode 'raise' is not supported (a device cannot raise on a bad index); use 'fill', 'clip' or 'wrap'`);
  if (mode !== 'fill' && mode !== 'clip' && mode !== 'wrap') throw new ValueError(`${fn}: invalid mode ${show(mode)}; expected 'fill', 'clip' or 'wrap'`);
  const gatherMode: GatherMode = mode === 'fill' ? 'fill' : 'clip'; // 'wrap' indices are in bounds after the modulo
  if (size === 0) {
    if (idx.size !== 0) throw new IndexError(`${fn}: cannot do a non-empty take from an empty axis (axis ${axis} of shape ${show(x.shape)})`);
    return zerosOf(fn, x.dtype, outShape);
  }
  if (idx.size === 0) return zerosOf(fn, x.dtype, outShape);
  if (mode === 'wrap') {
    const i = lax.convertElementType(idx, 'int32');
    const r = lax.rem(i, size);
    idx = lax.select(lax.lt(r, 0), lax.add(r, size), r);
  } else if (mode === 'fill') {
    idx = normalizeIndexArray(idx, size);
  } else {
    idx = isUnsigned(idx.dtype) ? normalizeIndexArray(idx, size) : lax.convertElementType(idx, 'int32');
  }
  const rank = idx.ndim;
  const sliceSizes = [...x.shape];
  sliceSizes[axis] = 1;
  const offsetDims = [
    ...globalThis.Array.from({ length: axis }, (_, i) => i),
    ...globalThis.Array.from({ length: x.ndim - axis - 1 }, (_, i) => axis + rank + i),
  ];
  const dnums = { offsetDims, collapsedSliceDims: [axis], startIndexMap: [axis] };
  return lax.gather(x, lax.reshape(idx, [...idx.shape, 1]), dnums, sliceSizes, { mode: gatherMode, fillValue });
}

export interface TakeAlongAxisOptions {
  mode?: 'fill' | 'clip' | 'drop' | 'promise_in_bounds' | null;
  fillValue?: number | boolean | null;
}

/** jnp.takeAlongAxis: arr's elements at `indices` along `axis`, indices broadcasting against arr on the other axes. Default mode 'fill'. */
export function takeAlongAxis(arr: ArrayLike, indices: ArrayLike, axis: number | null, options: TakeAlongAxisOptions = {}): Array {
  const fn = 'jnp.takeAlongAxis';
  checkOptions(fn, options, ['mode', 'fillValue']);
  let a = toArray(fn, arr, 'arr');
  const idx = integerIndices(fn, indices);
  const requested = options.mode ?? 'fill';
  if (!['fill', 'clip', 'drop', 'promise_in_bounds'].includes(requested)) {
    throw new ValueError(`${fn}: invalid mode ${show(requested)}; expected 'fill', 'clip', 'drop' or 'promise_in_bounds'`);
  }
  const mode: GatherMode = requested === 'fill' || requested === 'drop' ? 'fill' : 'clip';
  const fillValue = fillOption(fn, options.fillValue);
  if (axis === undefined) throw new TypeError(`${fn}: axis is required (a number, or null to use the flattened array)`);
  let ax: number;
  if (axis === null) {
    if (idx.ndim !== 1) throw new ValueError(`${fn}: indices must be 1-D when axis is null, got shape ${show(idx.shape)}`);
    a = lax.reshape(a, [a.size]);
    ax = 0;
  } else {
    if (a.ndim !== idx.ndim) {
      throw new ValueError(`${fn}: indices and arr must have the same number of dimensions; got indices of shape ${show(idx.shape)} and arr of shape ${show(a.shape)}`);
    }
    ax = normalizeAxis(fn, axis, a.ndim);
  }
  const rank = a.ndim;
  const axisSize = a.shape[ax]!;
  const arrShape = a.shape.map((d, i) => (i === ax ? 1 : d));
  let outShape: number[];
  try {
    outShape = broadcastShapes(fn, idx.shape, arrShape);
  } catch {
    throw new ValueError(`${fn}: indices of shape ${show(idx.shape)} cannot be broadcast against arr of shape ${show(a.shape)} outside axis ${ax}`);
  }
  if (axisSize === 0 || sizeOf(outShape) === 0) return zerosOf(fn, a.dtype, outShape);

  // Axes where indices have size 1 read all of arr's axis (offset dims); axes where arr has size 1 are
  // squeezed and taken from the indices' batch; the rest pair arr and indices elementwise through an iota.
  const indexDims = idx.shape.flatMap((d, i) => (i === ax || d !== 1 ? [i] : []));
  const gatherIndexShape = indexDims.map((d) => outShape[d]!);
  const components: Array[] = [];
  const sliceSizes: number[] = [];
  const offsetDims: number[] = [];
  const startIndexMap: number[] = [];
  const squeezed: number[] = [];
  let newAxis = 0;
  let j = 0;
  for (let i = 0; i < rank; i++) {
    if (i === ax) {
      let k = requested === 'promise_in_bounds' && !isUnsigned(idx.dtype) ? lax.convertElementType(idx, 'int32') : normalizeIndexArray(idx, axisSize);
      k = lax.reshape(k, indexDims.map((d) => idx.shape[d]!));
      components.push(lax.broadcastInDim(k, gatherIndexShape, gatherIndexShape.map((_, q) => q)));
      sliceSizes.push(1);
      startIndexMap.push(newAxis++);
      j++;
    } else if (idx.shape[i] === 1) {
      offsetDims.push(i);
      sliceSizes.push(arrShape[i]!);
      newAxis++;
    } else if (arrShape[i] === 1) {
      squeezed.push(i);
      j++;
    } else {
      components.push(lax.broadcastedIota('int32', gatherIndexShape, j));
      sliceSizes.push(1);
      startIndexMap.push(newAxis++);
      j++;
    }
  }
  a = lax.squeeze(a, squeezed);
  const full = [...gatherIndexShape, 1];
  const gi = lax.concatenate(components.map((c) => lax.reshape(c, full)), full.length - 1);
  return lax.gather(a, gi, { offsetDims, collapsedSliceDims: [...startIndexMap], startIndexMap }, sliceSizes, { mode, fillValue });
}
