// Reference rule for conv_general_dilated, straight from XLA's definition:
// out[n, o, y...] = Σ over taps t and group features i of
// lhs[batch(n, group), feature(group, i), x...] · rhs[o, i, t...] where the
// padded, lhs-dilated input position y·stride + t·rhsDilation − padLo is a
// multiple of the lhs dilation and x is its quotient, inside the input (else a
// zero of the padding, which still multiplies the weight).
// Floats accumulate in float64; integers modulo 2^32 (as dot.ts).
import { castToInteger, isFloating, wrapInteger } from '../core/dtype.js';
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { type RefArray, stridesOf } from './array.js';

export function convRule(inputs: RefArray[], params: PrimitiveParams['conv_general_dilated'], outs: ShapedArray[]): Float64Array[] {
  const [lhs, rhs] = inputs as [RefArray, RefArray];
  const { windowStrides, padding, lhsDilation, rhsDilation, dimensionNumbers: dn, featureGroupCount: G, batchGroupCount: B } = params;
  const out = outs[0]!;
  const ns = lhs.shape.length - 2;
  const canon = (shape: readonly number[], spec: number[]) => spec.map((a) => shape[a]!);
  const ls = canon(stridesOf(lhs.shape), dn.lhsSpec);
  const rs = canon(stridesOf(rhs.shape), dn.rhsSpec);
  const os = canon(stridesOf(out.shape), dn.outSpec);
  const [, , ...inSp] = canon(lhs.shape, dn.lhsSpec);
  const [O, I, ...kSp] = canon(rhs.shape, dn.rhsSpec) as [number, number, ...number[]];
  const [Nout, , ...outSp] = canon(out.shape, dn.outSpec) as [number, number, ...number[]];
  const groups = G * B;
  const Og = O / groups;
  const result = new Float64Array(out.shape.reduce((a, b) => a * b, 1));
  const integerSum = !isFloating(out.dtype) && out.dtype !== 'bool' && !isFloating(lhs.dtype);
  const outIdx = new Array<number>(ns).fill(0);
  const tap = new Array<number>(ns).fill(0);
  const next = (idx: number[], sizes: number[]) => {
    for (let d = sizes.length - 1; d >= 0; d--) {
      if (++idx[d]! < sizes[d]!) return true;
      idx[d] = 0;
    }
    return false;
  };
  const outCount = outSp.reduce((a, b) => a * b, 1);
  const tapCount = kSp.reduce((a, b) => a * b, 1);
  for (let n = 0; n < Nout; n++) {
    for (let o = 0; o < O; o++) {
      const g = Math.floor(o / Og);
      const lhsBatch = B > 1 ? g * Nout + n : n;
      const lhsFeature = G > 1 ? g * I : 0;
      outIdx.fill(0);
      for (let y = 0; y < outCount; y++, next(outIdx, outSp)) {
        let acc = 0;
        tap.fill(0);
        for (let t = 0; t < tapCount; t++, next(tap, kSp)) {
          let offset = lhsBatch * ls[0]! + lhsFeature * ls[1]!;
          let inside = true;
          for (let d = 0; d < ns && inside; d++) {
            const p = outIdx[d]! * windowStrides[d]! + tap[d]! * rhsDilation[d]! - padding[d]![0];
            if (p < 0 || p % lhsDilation[d]! !== 0) inside = false;
            const x = p / lhsDilation[d]!;
            if (x >= inSp[d]!) inside = false;
            offset += x * ls[2 + d]!;
          }
          let w = o * rs[0]!;
          for (let d = 0; d < ns; d++) w += tap[d]! * rs[2 + d]!;
          for (let i = 0; i < I; i++) {
            // padding and dilation holes are zeros that still multiply the weight (0 · inf is NaN, as in XLA)
            const a = inside ? lhs.data[offset + i * ls[1]!]! : 0;
            const b = rhs.data[w + i * rs[1]!]!;
            acc = integerSum ? (acc + Math.imul(a, b)) | 0 : acc + a * b;
          }
        }
        let at = n * os[0]! + o * os[1]!;
        for (let d = 0; d < ns; d++) at += outIdx[d]! * os[2 + d]!;
        result[at] = out.dtype === 'bool' ? (acc !== 0 ? 1 : 0) : integerSum ? wrapInteger(acc, out.dtype) : isFloating(out.dtype) ? acc : castToInteger(acc, out.dtype) + 0;
      }
    }
  }
  return [result];
}
