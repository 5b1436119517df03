// The reference interpreter's array: a shape, a dtype and float64 values in
// row-major order, each exactly representable in the dtype. Plain data on
// purpose: the oracle must be obviously correct, not fast.
import { type DType, integerRange, isFloating, roundToDType } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';
import { type Shape, sizeOf, stridesOf } from '../core/shape.js';

export interface RefArray {
  shape: number[];
  dtype: DType;
  data: Float64Array;
}

/** Builds a RefArray, rounding each value to the dtype (floats round to nearest even, ints truncate and saturate, bool is != 0). */
export function refArray(shape: number[], dtype: DType, values: ArrayLike<number>): RefArray {
  const size = sizeOf(shape);
  if (values.length !== size) {
    throw new ValueError(`refArray: shape ${show(shape)} holds ${size} values, got ${values.length}`);
  }
  const data = new Float64Array(size);
  const floating = isFloating(dtype);
  for (let i = 0; i < size; i++) {
    const v = roundToDType(values[i]!, dtype);
    data[i] = floating ? v : v + 0; // integers have no -0 (castToInteger(-0.5) is -0)
  }
  return { shape: [...shape], dtype, data };
}

/** A RefArray's values as a plain array (bools as 0/1). */
export function toNumbers(ref: RefArray): number[] {
  return Array.from(ref.data);
}

/** Whether `value` is exactly a value of `dtype` (NaN counts for floats; -0 does not for integers). */
export function isRepresentable(value: number, dtype: DType): boolean {
  if (isFloating(dtype)) return Number.isNaN(value) || Object.is(roundToDType(value, dtype), value);
  if (dtype === 'bool') return value === 0 || value === 1;
  const [lo, hi] = integerRange(dtype);
  return Number.isInteger(value) && !Object.is(value, -0) && value >= lo && value <= hi;
}

/**
 * Turns a rule's float64 results into a value of `dtype`: floats are rounded;
 * integer results must already be wrapped by the rule, and anything else is a
 * bug in the interpreter, so it throws instead of hiding it.
 */
export function finish(prim: string, shape: number[], dtype: DType, data: Float64Array): RefArray {
  if (data.length !== sizeOf(shape)) {
    throw new Error(`reference ${prim}: rule produced ${data.length} values for shape ${show(shape)} (interpreter bug)`);
  }
  if (isFloating(dtype)) {
    if (dtype !== 'float64') for (let i = 0; i < data.length; i++) data[i] = roundToDType(data[i]!, dtype);
  } else {
    for (let i = 0; i < data.length; i++) {
      const v = data[i]! + 0; // integers have no -0
      if (!isRepresentable(v, dtype)) {
        throw new Error(`reference ${prim}: result ${v} at ${i} is not a ${dtype} (interpreter bug)`);
      }
      data[i] = v;
    }
  }
  return { shape, dtype, data };
}

/** Advances a row-major multi-index in place; returns false after the last index. */
export function nextIndex(index: number[], shape: Shape): boolean {
  for (let k = shape.length - 1; k >= 0; k--) {
    if (++index[k]! < shape[k]!) return true;
    index[k] = 0;
  }
  return false;
}

/** out[i] = src[offset + Σ index[k]·strides[k]] for each index of outShape in row-major order. */
export function stridedCopy(src: Float64Array, offset: number, strides: number[], outShape: Shape): Float64Array {
  const n = sizeOf(outShape);
  const out = new Float64Array(n);
  const rank = outShape.length;
  const index = new Array<number>(rank).fill(0);
  let pos = offset;
  for (let i = 0; i < n; i++) {
    out[i] = src[pos]!;
    for (let k = rank - 1; k >= 0; k--) {
      pos += strides[k]!;
      if (++index[k]! < outShape[k]!) break;
      pos -= strides[k]! * outShape[k]!;
      index[k] = 0;
    }
  }
  return out;
}

/** Σ index[k]·strides[k]. */
export function offsetOf(index: number[], strides: number[]): number {
  let offset = 0;
  for (let k = 0; k < index.length; k++) offset += index[k]! * strides[k]!;
  return offset;
}

/** Splits a shape around `axis` into (outer, size, inner) for loops over one axis. */
export function aroundAxis(shape: Shape, axis: number): { outer: number; size: number; inner: number } {
  return { outer: sizeOf(shape.slice(0, axis)), size: shape[axis]!, inner: sizeOf(shape.slice(axis + 1)) };
}

export { sizeOf, stridesOf };
