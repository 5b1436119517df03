// Reference rules for indexing primitives: dynamic_slice,
// dynamic_update_slice, gather and scatter/scatter_add/mul/min/max, following XLA's
// operation semantics (index_vector_dim is the last axis of the indices, as
// in JAX) and JAX's modes: 'clip' clamps start indices, 'fill' fills
// out-of-bounds gathers with a fill value and drops out-of-bounds scatters.
import { type DType, integerRange, isFloating, isUnsigned, roundToDType, wrapInteger } from '../core/dtype.js';
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { type RefArray, nextIndex, offsetOf, sizeOf, stridedCopy, stridesOf } from './array.js';

const clampIndex = (v: number, hi: number): number => Math.min(Math.max(v, 0), hi);

/** XLA clamps each start index to [0, dim - size] so the slice stays in bounds. */
function clampedStarts(operand: RefArray, indexOperands: RefArray[], sizes: number[]): number[] {
  return indexOperands.map((s, k) => clampIndex(s.data[0]!, operand.shape[k]! - sizes[k]!));
}

export function dynamicSliceRule(inputs: RefArray[], { sliceSizes }: PrimitiveParams['dynamic_slice']): Float64Array[] {
  const [x, ...starts] = inputs as [RefArray, ...RefArray[]];
  const strides = stridesOf(x.shape);
  const offset = offsetOf(clampedStarts(x, starts, sliceSizes), strides);
  return [stridedCopy(x.data, offset, strides, sliceSizes)];
}

export function dynamicUpdateSliceRule(inputs: RefArray[]): Float64Array[] {
  const [x, update, ...starts] = inputs as [RefArray, RefArray, ...RefArray[]];
  const out = x.data.slice();
  if (update.data.length === 0) return [out];
  const strides = stridesOf(x.shape);
  const offset = offsetOf(clampedStarts(x, starts, update.shape), strides);
  const index = new Array<number>(update.shape.length).fill(0);
  let i = 0;
  do out[offset + offsetOf(index, strides)] = update.data[i++]!;
  while (nextIndex(index, update.shape));
  return [out];
}

/** JAX's default gather fill: NaN for floats, the minimum of signed ints, the maximum of unsigned ints, true for bool. */
export function defaultFillValue(dtype: DType): number {
  if (isFloating(dtype)) return NaN;
  if (dtype === 'bool') return 1;
  return isUnsigned(dtype) ? integerRange(dtype)[1] : integerRange(dtype)[0];
}

/**
 * Start vectors of a batch of index vectors (the last axis of `indices`),
 * scattered to operand axes by `axisMap` and clamped so a window of
 * `windowSizes` fits; `inBounds` says whether it fitted before clamping.
 */
function windowStarts(
  operand: RefArray,
  indices: RefArray,
  axisMap: number[],
  windowSizes: number[],
): { starts: Float64Array; inBounds: Uint8Array; batch: number } {
  const rank = operand.shape.length;
  const vector = axisMap.length;
  const batch = sizeOf(indices.shape.slice(0, -1));
  const starts = new Float64Array(batch * rank);
  const inBounds = new Uint8Array(batch).fill(1);
  for (let b = 0; b < batch; b++) {
    for (let k = 0; k < vector; k++) {
      const d = axisMap[k]!;
      const v = indices.data[b * vector + k]!;
      const hi = operand.shape[d]! - windowSizes[d]!;
      if (v < 0 || v > hi) inBounds[b] = 0;
      starts[b * rank + d] = clampIndex(v, hi);
    }
  }
  return { starts, inBounds, batch };
}

export function gatherRule(
  inputs: RefArray[],
  { dimensionNumbers, sliceSizes, mode, fillValue }: PrimitiveParams['gather'],
  outs: ShapedArray[],
): Float64Array[] {
  const [operand, indices] = inputs as [RefArray, RefArray];
  const { offsetDims, collapsedSliceDims, startIndexMap } = dimensionNumbers;
  const outShape = outs[0]!.shape;
  const out = new Float64Array(sizeOf(outShape));
  if (out.length === 0) return [out];
  const rank = operand.shape.length;
  const operandStrides = stridesOf(operand.shape);
  const { starts, inBounds } = windowStarts(operand, indices, startIndexMap, sliceSizes);
  const fill = fillValue === null ? defaultFillValue(operand.dtype) : roundToDType(fillValue, operand.dtype);

  // output axes split into batch axes (walking the indices' batch) and offset axes (walking the window)
  const batchAxes = outShape.map((_, i) => i).filter((i) => !offsetDims.includes(i));
  const batchStrides = stridesOf(indices.shape.slice(0, -1));
  const windowAxes = operand.shape.map((_, d) => d).filter((d) => !collapsedSliceDims.includes(d));
  const outAxisStride = new Array<number>(outShape.length).fill(0); // operand stride each offset axis moves by
  offsetDims.forEach((axis, i) => {
    outAxisStride[axis] = operandStrides[windowAxes[i]!]!;
  });

  const index = new Array<number>(outShape.length).fill(0);
  let i = 0;
  do {
    let b = 0;
    for (let j = 0; j < batchAxes.length; j++) b += index[batchAxes[j]!]! * batchStrides[j]!;
    if (mode === 'fill' && !inBounds[b]) {
      out[i++] = fill;
      continue;
    }
    let pos = offsetOf(index, outAxisStride);
    for (let d = 0; d < rank; d++) pos += starts[b * rank + d]! * operandStrides[d]!;
    out[i++] = operand.data[pos]!;
  } while (nextIndex(index, outShape));
  return [out];
}

type Combine = (old: number, update: number, dtype: DType) => number;

function scatterRule(combine: Combine | null) {
  return (inputs: RefArray[], { dimensionNumbers, mode }: PrimitiveParams['scatter']): Float64Array[] => {
    const [operand, indices, updates] = inputs as [RefArray, RefArray, RefArray];
    const { updateWindowDims, insertedWindowDims, scatterDimsToOperandDims } = dimensionNumbers;
    const out = operand.data.slice();
    const rank = operand.shape.length;
    const dtype = operand.dtype;
    const operandStrides = stridesOf(operand.shape);
    const updateStrides = stridesOf(updates.shape);

    // the window: updates' window axes, mapped in order onto the operand axes that are not inserted
    const windowAxes = operand.shape.map((_, d) => d).filter((d) => !insertedWindowDims.includes(d));
    const windowShape = updateWindowDims.map((u) => updates.shape[u]!);
    const windowSizes = new Array<number>(rank).fill(1);
    windowAxes.forEach((d, i) => {
      windowSizes[d] = windowShape[i]!;
    });
    const windowOperandStrides = windowAxes.map((d) => operandStrides[d]!);
    const windowUpdateStrides = updateWindowDims.map((u) => updateStrides[u]!);

    const batchUpdateAxes = updates.shape.map((_, i) => i).filter((i) => !updateWindowDims.includes(i));
    const batchShape = indices.shape.slice(0, -1);
    const { starts, inBounds, batch } = windowStarts(operand, indices, scatterDimsToOperandDims, windowSizes);
    if (sizeOf(windowShape) === 0) return [out];

    // batch elements in row-major order, so with repeated indices the last update wins
    const batchIndex = new Array<number>(batchShape.length).fill(0);
    const windowIndex = new Array<number>(windowShape.length).fill(0);
    for (let b = 0; b < batch; b++, nextIndex(batchIndex, batchShape)) {
      if (mode === 'fill' && !inBounds[b]) continue; // FILL_OR_DROP drops the whole window
      let base = 0;
      for (let d = 0; d < rank; d++) base += starts[b * rank + d]! * operandStrides[d]!;
      let updateBase = 0;
      batchUpdateAxes.forEach((axis, j) => {
        updateBase += batchIndex[j]! * updateStrides[axis]!;
      });
      windowIndex.fill(0);
      do {
        const pos = base + offsetOf(windowIndex, windowOperandStrides);
        const u = updates.data[updateBase + offsetOf(windowIndex, windowUpdateStrides)]!;
        out[pos] = combine ? combine(out[pos]!, u, dtype) : u;
      } while (nextIndex(windowIndex, windowShape));
    }
    return [out];
  };
}

export const scatterSetRule = scatterRule(null);
export const scatterAddRule = scatterRule((a, b, d) => (isFloating(d) ? a + b : wrapInteger(a + b, d)));
// Math.imul keeps the low 32 bits exactly, which float64 a * b would not for large int32/uint32 products.
export const scatterMulRule = scatterRule((a, b, d) => (isFloating(d) ? a * b : wrapInteger(Math.imul(a, b), d)));
export const scatterMinRule = scatterRule((a, b) => Math.min(a, b)); // NaN propagates, as lax.min
export const scatterMaxRule = scatterRule((a, b) => Math.max(a, b));
