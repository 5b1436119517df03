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

/**
 * jax.lax.reduce_window: reduces each window of `operand` (sizes `windowDimensions`, moved by `windowStrides`, over
 * the operand padded by `padding` with `initValue` and dilated by `baseDilation`, window elements `windowDilation`
 * apart) with `computation`, starting from `initValue`. `windowStrides`, `baseDilation` and `windowDilation` default
 * to ones; the two dilations may also come as an options object `{ baseDilation, windowDilation }`.
 */
export function reduceWindow(
  operand: ArrayLike,
  initValue: ArrayLike,
  computation: WindowComputation,
  windowDimensions: number[],
  windowStrides?: number[] | null,
  padding: WindowPadding = 'VALID',
  baseDilation?: number[] | null | { baseDilation?: number[] | null; windowDilation?: number[] | null },
  windowDilation?: number[] | null,
): Array {
  const fn = 'lax.reduceWindow';
  if (baseDilation && !globalThis.Array.isArray(baseDilation) && typeof baseDilation === 'object') {
    const options = baseDilation as Record<string, unknown>;
    for (const key of Object.keys(options)) if (key !== 'baseDilation' && key !== 'windowDilation') throw new ValueError(`${fn}: unknown option ${show(key)} (expected baseDilation, windowDilation)`);
    windowDilation = options.windowDilation as number[] | null | undefined;
    baseDilation = options.baseDilation as number[] | null | undefined;
  }
  const x = toArray(fn, operand, 'operand');
  const rank = x.ndim;
  const reducer = reducerOf(fn, computation);
  const window = positiveInts(fn, 'windowDimensions', windowDimensions, rank);
  const strides = windowStrides == null ? window.map(() => 1) : positiveInts(fn, 'windowStrides', windowStrides, rank);
  const base = baseDilation == null ? window.map(() => 1) : positiveInts(fn, 'baseDilation', baseDilation, rank);
  const wdil = windowDilation == null ? window.map(() => 1) : positiveInts(fn, 'windowDilation', windowDilation, rank);
  const init = toArray(fn, initValue, 'initValue', initValue instanceof Array ? undefined : x.dtype);
  if (init.ndim !== 0) throw new ValueError(`${fn}: initValue must be a scalar, got shape ${show(init.shape)}`);
  if (init.dtype !== x.dtype) throw new TypeError(`${fn}: initValue dtype ${init.dtype} must equal the operand dtype ${x.dtype}`);
  const dilatedWindow = window.map((w, i) => (w - 1) * wdil[i]! + 1);
  let pads: [number, number][];
  if (typeof padding === 'string') pads = padtypeToPads(x.shape, dilatedWindow, strides, padding, fn);
  else if (globalThis.Array.isArray(padding) && padding.length === rank && padding.every((p) => globalThis.Array.isArray(p) && p.length === 2 && p.every((v) => Number.isInteger(v) && v >= 0))) {
    pads = padding.map((p) => [p[0], p[1]]);
  } else {
    throw new ValueError(`${fn}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or ${rank} pairs [low, high] of non-negative integers, got ${show(padding)}`);
  }
  const padded = pads.map(([lo, hi], i) => (x.shape[i]! === 0 ? 0 : (x.shape[i]! - 1) * base[i]! + 1) + lo + hi);
  const outShape = padded.map((n, i) => (n < dilatedWindow[i]! ? 0 : Math.floor((n - dilatedWindow[i]!) / strides[i]!) + 1));
  if (outShape.some((n) => n === 0) || x.size === 0) return ops.broadcast(init, outShape);
  const needsPad = pads.some(([lo, hi]) => lo !== 0 || hi !== 0) || base.some((b) => b !== 1);
  const source = needsPad ? ops.pad(x, init, pads.map(([lo, hi], i) => [lo, hi, base[i]! - 1])) : x;

  const monoid = typeof reducer === 'string' && isIdentity(init, initValue, identityOf(reducer, x.dtype));
  // JAX's generic reduce_window folds only the operand's elements: padding and dilation holes are skipped
  const validSource = needsPad && !monoid ? ops.pad(ops.broadcast(toArray(fn, true, 'mask'), [...x.shape]), false, pads.map(([lo, hi], i) => [lo, hi, base[i]! - 1])) : null;
  const slices: Array[] = [];
  const masks: Array[] = [];
  const offsets = window.map(() => 0);
  for (;;) {
    const start = offsets.map((k, i) => k * wdil[i]!);
    const limit = start.map((s, i) => s + (outShape[i]! - 1) * strides[i]! + 1);
    slices.push(ops.slice(source, start, limit, strides));
    if (validSource) masks.push(ops.slice(validSource, start, limit, strides));
    let d = rank - 1;
    while (d >= 0 && ++offsets[d]! === window[d]!) offsets[d--] = 0;
    if (d < 0) break;
  }
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
