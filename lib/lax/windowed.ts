// lax.reduce_window (jax/_src/lax/windowed_reductions.py) built from pad,
// strided slices and elementwise ops: the operand is padded (and base-dilated)
// with the init value, and each of the window's positions is one strided slice
// of the output's shape, folded into an accumulator that starts at the init
// value, as XLA's ReduceWindow folds a window. Being a composition, it gets
// jvp, transpose, vmap and both backends from the primitives it uses (the
// slices fuse into one elementwise kernel).
// Derivatives follow JAX: a sum window's transpose is a pad of the cotangent
// summed over windows (reduce_window_sum's transpose); a max/min window's
// tangent is the tangent of ONE element of each window, the one XLA's
// select_and_gather_add picks (the first element of the window, in row-major
// window order, that is >= (max) or <= (min) every later one), never split
// between ties: the fold is a select on `acc >= x` (`acc <= x`), whose jvp
// carries the chosen element's tangent. A NaN in the accumulator is kept, as
// XLA's max/min propagate NaN. As in JAX, that holds when the init value is
// the reducer's identity (a concrete -inf / +inf / the integer bound); any
// other init is JAX's generic reduce_window, whose jvp is the fold of lax.max
// itself (ties split in halves), and so is this one's; it skips padding and
// dilation holes rather than folding in the init value.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, isFloating } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';
import { unwrapped } from '../core/memory.js';
import { padtypeToPads } from './convolution.js';
import * as ops from './ops.js';

/** A binary reducer: lax.add, lax.max, lax.min (or their names), or any associative function of two arrays. */
export type WindowComputation = 'add' | 'max' | 'min' | ((a: Array, b: Array) => Array);
/** 'SAME', 'SAME_LOWER', 'VALID', or a [low, high] pair per dimension. */
export type WindowPadding = 'SAME' | 'SAME_LOWER' | 'VALID' | (readonly [number, number])[];

/** Whether the init value is concretely `identity` (a traced one never is, as JAX's core.is_concrete). */
function isIdentity(init: Array, initValue: unknown, identity: number): boolean {
  if (typeof initValue === 'number' || typeof initValue === 'boolean') return Number(initValue) === identity;
  return !init.isTracer && Number(init.item()) === identity;
}

function positiveInts(fn: string, name: string, value: unknown, rank: number): number[] {
  if (!globalThis.Array.isArray(value) || value.length !== rank || !value.every((v) => Number.isInteger(v) && v >= 1)) {
    throw new ValueError(`${fn}: ${name} must be ${rank} positive integers (one per operand dimension), got ${show(value)}`);
  }
  return [...(value as number[])];
}

type Reducer = 'add' | 'max' | 'min' | ((a: Array, b: Array) => Array);

/** JAX's _get_max_identity / _get_min_identity / 0 for add, in the operand's dtype. */
function identityOf(reducer: 'add' | 'max' | 'min', dtype: DType): number {
  if (reducer === 'add') return 0;
  const bounds: Partial<Record<DType, [number, number]>> = {
    bool: [0, 1], int8: [-128, 127], int16: [-32768, 32767], int32: [-(2 ** 31), 2 ** 31 - 1], uint8: [0, 255], uint16: [0, 65535], uint32: [0, 2 ** 32 - 1],
  };
  const [lo, hi] = bounds[dtype] ?? [-Infinity, Infinity];
  return reducer === 'max' ? lo : hi;
}

function reducerOf(fn: string, computation: unknown): Reducer {
  if (computation === 'add' || computation === 'max' || computation === 'min') return computation;
  if (typeof computation !== 'function') throw new TypeError(`${fn}: computation must be lax.add, lax.max, lax.min, 'add', 'max', 'min' or a function of two arrays, got ${show(computation)}`);
  const f = unwrapped(computation as (...args: never[]) => unknown);
  if (f === ops.add) return 'add';
  if (f === ops.max) return 'max';
  if (f === ops.min) return 'min';
  return computation as (a: Array, b: Array) => Array;
}

/** Variadic reduce_window's computation: the accumulators and the next elements, one per operand, to the new accumulators. */
export type VariadicWindowComputation = (accumulators: Array[], elements: Array[]) => Array[];

interface WindowGeometry {
  window: number[];
  strides: number[];
  base: number[];
  wdil: number[];
  pads: [number, number][];
  outShape: number[];
}

/** The window parameters checked against an operand of `shape`, its padding, and the output shape (XLA's ReduceWindow shape rule). */
function windowGeometry(
  fn: string,
  shape: readonly number[],
  windowDimensions: unknown,
  windowStrides: unknown,
  padding: WindowPadding,
  baseDilation: unknown,
  windowDilation: unknown,
): WindowGeometry {
  const rank = shape.length;
  const window = positiveInts(fn, 'windowDimensions', windowDimensions, rank);
  const strides = windowStrides == null ? window.map(() => 1) : positiveInts(fn, 'windowStrides', windowStrides, rank);
  const base = baseDilation == null ? window.map(() => 1) : positiveInts(fn, 'baseDilation', baseDilation, rank);
  const wdil = windowDilation == null ? window.map(() => 1) : positiveInts(fn, 'windowDilation', windowDilation, rank);
  const dilatedWindow = window.map((w, i) => (w - 1) * wdil[i]! + 1);
  let pads: [number, number][];
  if (typeof padding === 'string') pads = padtypeToPads(shape, dilatedWindow, strides, padding, fn);
  else if (globalThis.Array.isArray(padding) && padding.length === rank && padding.every((p) => globalThis.Array.isArray(p) && p.length === 2 && p.every((v) => Number.isInteger(v) && v >= 0))) {
    pads = padding.map((p) => [p[0], p[1]]);
  } else {
    throw new ValueError(`${fn}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or ${rank} pairs [low, high] of non-negative integers, got ${show(padding)}`);
  }
  const padded = pads.map(([lo, hi], i) => (shape[i]! === 0 ? 0 : (shape[i]! - 1) * base[i]! + 1) + lo + hi);
  const outShape = padded.map((n, i) => (n < dilatedWindow[i]! ? 0 : Math.floor((n - dilatedWindow[i]!) / strides[i]!) + 1));
  return { window, strides, base, wdil, pads, outShape };
}

/** The options-object form of the two dilations. */
function dilations(fn: string, baseDilation: unknown, windowDilation: unknown): [unknown, unknown] {
  if (baseDilation && !globalThis.Array.isArray(baseDilation) && typeof baseDilation === 'object') {
    const options = baseDilation as Record<string, unknown>;
    for (const key of Object.keys(options)) if (key !== 'baseDilation' && key !== 'windowDilation') throw new ValueError(`${fn}: unknown option ${show(key)} (expected baseDilation, windowDilation)`);
    return [options.baseDilation, options.windowDilation];
  }
  return [baseDilation, windowDilation];
}

/** Each window position's strided slice of `source` (row-major window order). */
function windowSlices(source: Array, g: WindowGeometry): Array[] {
  const slices: Array[] = [];
  const offsets = g.window.map(() => 0);
  for (;;) {
    const start = offsets.map((k, i) => k * g.wdil[i]!);
    const limit = start.map((s, i) => s + (g.outShape[i]! - 1) * g.strides[i]! + 1);
    slices.push(ops.slice(source, start, limit, g.strides));
    let d = g.window.length - 1;
    while (d >= 0 && ++offsets[d]! === g.window[d]!) offsets[d--] = 0;
    if (d < 0) return slices;
  }
}

/**
 * jax.lax.reduce_window: reduces each window of `operand` (sizes `windowDimensions`, moved by `windowStrides`, over
 * the operand padded by `padding` with `initValue` and dilated by `baseDilation`, window elements `windowDilation`
 * apart) with `computation`, starting from `initValue`. `windowStrides`, `baseDilation` and `windowDilation` default
 * to ones; the two dilations may also come as an options object `{ baseDilation, windowDilation }`.
 * Variadic, as JAX's with tuple operands: `operand` an array of Arrays of one shape, `initValue` one scalar per
 * operand, and `computation` a function of the accumulators and the next elements (arrays of Arrays) returning the
 * new accumulators; each window is folded by it, padding and dilation holes skipped (JAX's generic reduce_window).
 */
export function reduceWindow(
  operand: Array[],
  initValue: ArrayLike[],
  computation: VariadicWindowComputation,
  windowDimensions: number[],
  windowStrides?: number[] | null,
  padding?: WindowPadding,
  baseDilation?: number[] | null | { baseDilation?: number[] | null; windowDilation?: number[] | null },
  windowDilation?: number[] | null,
): Array[];
export function reduceWindow(
  operand: ArrayLike,
  initValue: ArrayLike,
  computation: WindowComputation,
  windowDimensions: number[],
  windowStrides?: number[] | null,
  padding?: WindowPadding,
  baseDilation?: number[] | null | { baseDilation?: number[] | null; windowDilation?: number[] | null },
  windowDilation?: number[] | null,
): Array;
export function reduceWindow(
  operand: ArrayLike | Array[],
  initValue: ArrayLike | ArrayLike[],
  computation: WindowComputation | VariadicWindowComputation,
  windowDimensions: number[],
  windowStrides?: number[] | null,
  padding: WindowPadding = 'VALID',
  baseDilationOption?: number[] | null | { baseDilation?: number[] | null; windowDilation?: number[] | null },
  windowDilationOption?: number[] | null,
): Array | Array[] {
  const fn = 'lax.reduceWindow';
  const [baseDilation, windowDilation] = dilations(fn, baseDilationOption, windowDilationOption);
  if (globalThis.Array.isArray(operand) && operand.length > 0 && operand.every((o) => o instanceof Array)) {
    return variadicReduceWindow(fn, operand as Array[], initValue, computation, windowDimensions, windowStrides, padding, baseDilation, windowDilation);
  }
  const x = toArray(fn, operand, 'operand');
  const reducer = reducerOf(fn, computation);
  const g = windowGeometry(fn, x.shape, windowDimensions, windowStrides, padding, baseDilation, windowDilation);
  const { base, pads, outShape } = g;
  const init = toArray(fn, initValue, 'initValue', initValue instanceof Array ? undefined : x.dtype);
  if (init.ndim !== 0) throw new ValueError(`${fn}: initValue must be a scalar, got shape ${show(init.shape)}`);
  if (init.dtype !== x.dtype) throw new TypeError(`${fn}: initValue dtype ${init.dtype} must equal the operand dtype ${x.dtype}`);
  if (outShape.some((n) => n === 0) || x.size === 0) return ops.broadcast(init, outShape);
  const needsPad = pads.some(([lo, hi]) => lo !== 0 || hi !== 0) || base.some((b) => b !== 1);
  const source = needsPad ? ops.pad(x, init, pads.map(([lo, hi], i) => [lo, hi, base[i]! - 1])) : x;

  const monoid = typeof reducer === 'string' && isIdentity(init, initValue, identityOf(reducer, x.dtype));
  // JAX's generic reduce_window folds only the operand's elements: padding and dilation holes are skipped
  const validSource = needsPad && !monoid ? ops.pad(ops.broadcast(toArray(fn, true, 'mask'), [...x.shape]), false, pads.map(([lo, hi], i) => [lo, hi, base[i]! - 1])) : null;
  const slices = windowSlices(source, g);
  const masks = validSource ? windowSlices(validSource, g) : [];
  let acc = ops.broadcast(init, outShape);
  if (monoid && reducer === 'add') {
    for (const s of slices) acc = ops.add(acc, s);
  } else if (monoid) {
    // the select_and_gather_add fold: the accumulator stays while it is >= (<=) the next element, or NaN
    const keeps = reducer === 'max' ? ops.ge : ops.le;
    const floating = isFloating(x.dtype);
    for (const s of slices) {
      const keep = floating ? ops.bitwiseOr(keeps(acc, s), ops.ne(acc, acc)) : keeps(acc, s);
      acc = ops.select(keep, acc, s);
    }
  } else {
    // JAX's generic reduce_window: the fold of the computation itself (lax.max's jvp splits ties in halves)
    const combine = reducer === 'add' ? ops.add : reducer === 'max' ? ops.max : reducer === 'min' ? ops.min : reducer;
    slices.forEach((s, i) => {
      const next = combine(acc, s);
      if (!(next instanceof Array) || next.dtype !== x.dtype || next.ndim !== acc.ndim || next.shape.some((n, j) => n !== acc.shape[j])) {
        throw new TypeError(`${fn}: computation must return one array of the operand's dtype ${x.dtype} and its arguments' shape, got ${next instanceof Array ? `${next.dtype}${show(next.shape)}` : show(next)}`);
      }
      acc = masks.length ? ops.select(masks[i]!, next, acc) : next;
    });
  }
  return acc;
}

/** The variadic form: JAX's generic reduce_window over several operands of one shape, folding `computation`. */
function variadicReduceWindow(
  fn: string,
  operands: Array[],
  initValue: unknown,
  computation: unknown,
  windowDimensions: unknown,
  windowStrides: unknown,
  padding: WindowPadding,
  baseDilation: unknown,
  windowDilation: unknown,
): Array[] {
  operands.forEach((o, i) => toArray(fn, o, `operand[${i}]`));
  const shape = operands[0]!.shape;
  if (operands.some((o) => o.ndim !== shape.length || o.shape.some((d, i) => d !== shape[i]))) {
    throw new ValueError(`${fn}: the operands must have one shape, got ${operands.map((o) => show(o.shape)).join(', ')}`);
  }
  if (!globalThis.Array.isArray(initValue) || initValue.length !== operands.length) {
    throw new ValueError(`${fn}: initValue must hold one scalar per operand (${operands.length}), got ${show(initValue)}`);
  }
  if (typeof computation !== 'function') throw new TypeError(`${fn}: with several operands, computation must be a function of the accumulators and the next elements (arrays of Arrays), got ${show(computation)}`);
  const inits = operands.map((o, i) => {
    const v = initValue[i] as unknown;
    const init = toArray(fn, v, `initValue[${i}]`, v instanceof Array ? undefined : o.dtype);
    if (init.ndim !== 0) throw new ValueError(`${fn}: initValue[${i}] must be a scalar, got shape ${show(init.shape)}`);
    if (init.dtype !== o.dtype) throw new TypeError(`${fn}: initValue[${i}] dtype ${init.dtype} must equal operand[${i}]'s dtype ${o.dtype}`);
    return init;
  });
  const g = windowGeometry(fn, shape, windowDimensions, windowStrides, padding, baseDilation, windowDilation);
  const { base, pads, outShape } = g;
  if (outShape.some((n) => n === 0) || operands[0]!.size === 0) return inits.map((init) => ops.broadcast(init, outShape));
  const needsPad = pads.some(([lo, hi]) => lo !== 0 || hi !== 0) || base.some((b) => b !== 1);
  const config = pads.map(([lo, hi], i): [number, number, number] => [lo, hi, base[i]! - 1]);
  const slices = operands.map((o, i) => windowSlices(needsPad ? ops.pad(o, inits[i]!, config) : o, g));
  // padding and dilation holes are skipped, not folded in
  const masks = needsPad ? windowSlices(ops.pad(ops.broadcast(toArray(fn, true, 'mask'), [...shape]), false, config), g) : [];
  let acc = inits.map((init) => ops.broadcast(init, outShape));
  slices[0]!.forEach((_, k) => {
    const next = (computation as VariadicWindowComputation)(acc, slices.map((s) => s[k]!));
    const ok = globalThis.Array.isArray(next) && next.length === acc.length &&
      next.every((n, i) => n instanceof Array && n.dtype === acc[i]!.dtype && n.ndim === acc[i]!.ndim && n.shape.every((d, j) => d === acc[i]!.shape[j]));
    if (!ok) {
      const got = globalThis.Array.isArray(next) ? `[${next.map((n) => (n instanceof Array ? `${n.dtype}${show(n.shape)}` : show(n))).join(', ')}]` : show(next);
      throw new TypeError(`${fn}: computation must return ${acc.length} arrays of the operands' dtypes (${acc.map((a) => a.dtype).join(', ')}) and their arguments' shape, got ${got}`);
    }
    acc = masks.length ? next.map((n, i) => ops.select(masks[k]!, n, acc[i]!)) : next;
  });
  return acc;
}
