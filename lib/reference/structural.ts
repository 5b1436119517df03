// Reference rules for primitives that move values without computing on them:
// iota, broadcast_in_dim, reshape, transpose, squeeze, rev, slice, pad and
// concatenate. Most are one strided read of the operand (stridedCopy).
import { isFloating, wrapInteger } from '../core/dtype.js';
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { type RefArray, aroundAxis, nextIndex, sizeOf, stridedCopy, stridesOf } from './array.js';

export function iotaRule(_inputs: RefArray[], { dtype, shape, dimension }: PrimitiveParams['iota']): Float64Array[] {
  const out = new Float64Array(sizeOf(shape));
  const { size, inner } = aroundAxis(shape, dimension);
  for (let i = 0; i < out.length; i++) {
    const v = Math.floor(i / inner) % size;
    out[i] = isFloating(dtype) ? v : wrapInteger(v, dtype);
  }
  return [out];
}

export function broadcastInDimRule(
  inputs: RefArray[],
  { shape, broadcastDimensions }: PrimitiveParams['broadcast_in_dim'],
): Float64Array[] {
  const x = inputs[0]!;
  const inStrides = stridesOf(x.shape);
  const strides = new Array<number>(shape.length).fill(0);
  broadcastDimensions.forEach((d, i) => {
    strides[d] = x.shape[i] === 1 ? 0 : inStrides[i]!;
  });
  return [stridedCopy(x.data, 0, strides, shape)];
}

/** reshape and squeeze keep the row-major order of the values. */
export function copyRule(inputs: RefArray[]): Float64Array[] {
  return [inputs[0]!.data.slice()];
}

export function transposeRule(inputs: RefArray[], { permutation }: PrimitiveParams['transpose']): Float64Array[] {
  const x = inputs[0]!;
  const inStrides = stridesOf(x.shape);
  return [stridedCopy(x.data, 0, permutation.map((p) => inStrides[p]!), permutation.map((p) => x.shape[p]!))];
}

export function revRule(inputs: RefArray[], { dimensions }: PrimitiveParams['rev']): Float64Array[] {
  const x = inputs[0]!;
  const strides = stridesOf(x.shape);
  let offset = 0;
  for (const d of dimensions) {
    if (x.shape[d] === 0) continue;
    offset += (x.shape[d]! - 1) * strides[d]!;
    strides[d] = -strides[d]!;
  }
  return [stridedCopy(x.data, offset, strides, x.shape)];
}

export function sliceRule(
  inputs: RefArray[],
  { startIndices, strides }: PrimitiveParams['slice'],
  outs: ShapedArray[],
): Float64Array[] {
  const x = inputs[0]!;
  const inStrides = stridesOf(x.shape);
  const offset = startIndices.reduce((acc, s, k) => acc + s * inStrides[k]!, 0);
  const step = inStrides.map((s, k) => s * (strides ? strides[k]! : 1));
  return [stridedCopy(x.data, offset, step, outs[0]!.shape)];
}

/**
 * Output position of input index i on axis k is lo + i·(interior + 1); the rest
 * is the padding value. Negative lo/hi crop, so positions outside the output are skipped.
 */
export function padRule(inputs: RefArray[], { paddingConfig }: PrimitiveParams['pad'], outs: ShapedArray[]): Float64Array[] {
  const [x, padValue] = inputs as [RefArray, RefArray];
  const outShape = outs[0]!.shape;
  const outStrides = stridesOf(outShape);
  const out = new Float64Array(sizeOf(outShape)).fill(padValue.data[0]!);
  if (x.data.length === 0) return [out];
  const index = new Array<number>(x.shape.length).fill(0);
  let i = 0;
  do {
    let pos = 0;
    let inside = true;
    for (let k = 0; k < index.length; k++) {
      const [lo, , interior] = paddingConfig[k]!;
      const c = lo + index[k]! * (interior + 1);
      if (c < 0 || c >= outShape[k]!) {
        inside = false;
        break;
      }
      pos += c * outStrides[k]!;
    }
    if (inside) out[pos] = x.data[i]!;
    i++;
  } while (nextIndex(index, x.shape));
  return [out];
}

export function concatenateRule(inputs: RefArray[], { dimension }: PrimitiveParams['concatenate'], outs: ShapedArray[]): Float64Array[] {
  const outShape = outs[0]!.shape;
  const out = new Float64Array(sizeOf(outShape));
  const { outer, size: total, inner } = aroundAxis(outShape, dimension);
  let start = 0; // where this operand begins along `dimension`
  for (const x of inputs) {
    const chunk = x.shape[dimension]! * inner;
    for (let o = 0; o < outer; o++) {
      out.set(x.data.subarray(o * chunk, (o + 1) * chunk), o * total * inner + start * inner);
    }
    start += x.shape[dimension]!;
  }
  return [out];
}
