// The im2col composite that lax.convGeneralDilated was before it became the
// conv_general_dilated primitive, kept as a private reference: the input in a
// channels-last layout (N, spatial..., C), padded once (lax.pad: edge padding,
// negative padding as cropping, interior padding for lhs dilation), one strided
// window slice per kernel tap (the rhs dilation is the slices' offsets), the
// taps concatenated along the feature axis, and one dot_general contracting
// features and taps against the kernel (groups are dot_general batch dims).
// Built only from other primitives, so test/conv-primitive.test.ts compares
// the primitive's values and derivatives against it on random configurations.
import type { Array } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type ConvParams, convOutputShape } from '../core/primitives.js';
import { broadcastInDim, concatenate, dotGeneral, pad, reshape, slice, transpose } from './ops.js';

function argsort(p: readonly number[]): number[] {
  return p.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]).map(([, i]) => i);
}

/** conv_general_dilated(l, r, params) computed as pad, slices, concatenate and dot_general. */
export function convComposite(l: Array, r: Array, params: ConvParams): Array {
  const fn = 'convComposite';
  const { windowStrides: strides, padding: pads, lhsDilation, rhsDilation, dimensionNumbers: dn, featureGroupCount: G, batchGroupCount: B } = params;
  const ns = l.ndim - 2;
  const lShape = dn.lhsSpec.map((a) => l.shape[a]!);
  const rShape = dn.rhsSpec.map((a) => r.shape[a]!);
  const [N, C] = lShape as [number, number];
  const [O, I] = rShape as [number, number];
  const kSp = rShape.slice(2);
  const outShape = convOutputShape(l.shape, r.shape, params);
  const outSp = dn.outSpec.slice(2).map((a) => outShape[a]!);
  const outDtype = params.preferredElementType ?? l.dtype;
  const pet = params.preferredElementType;
  const precision = params.precision ?? null;
  const outCanon = [B > 1 ? N / B : N, O, ...outSp];
  const outPerm = argsort(dn.outSpec);

  const kTaps = kSp.reduce((a, b) => a * b, 1);
  if (outCanon.some((d) => d === 0) || kTaps === 0 || I === 0) {
    // nothing to sum (an empty window or feature axis) or nothing to compute: zeros, still a function of the inputs' shapes only
    const z = broadcastInDim(toArray(fn, 0, 'zero', outDtype), outCanon, []);
    return transpose(z, outPerm);
  }

  // channels-last layout: lhs (N, spatial..., C), rhs (spatial..., I, O); NHWC / HWIO operands need no transpose
  const lc = transpose(l, [dn.lhsSpec[0]!, ...dn.lhsSpec.slice(2), dn.lhsSpec[1]!]);
  const rc = transpose(r, [...dn.rhsSpec.slice(2), dn.rhsSpec[1]!, dn.rhsSpec[0]!]);
  const needPad = pads.some(([lo, hi]) => lo !== 0 || hi !== 0) || lhsDilation.some((d) => d !== 1);
  const lp = needPad ? pad(lc, 0, [[0, 0, 0], ...pads.map(([lo, hi], i): [number, number, number] => [lo, hi, lhsDilation[i]! - 1]), [0, 0, 0]]) : lc;

  // im2col: one strided window slice per kernel tap (offsets k * rhsDilation), concatenated along the feature axis:
  // (N, out spatial..., T * C), taps major, in the row-major tap order of the kernel's (spatial..., I, O) layout
  const wins: Array[] = [];
  const tap = kSp.map(() => 0);
  for (let t = 0; t < kTaps; t++) {
    const start = tap.map((k, i) => k * rhsDilation[i]!);
    const limit = start.map((st, i) => st + (outSp[i]! - 1) * strides[i]! + 1);
    wins.push(slice(lp, [0, ...start, 0], [N, ...limit, C], [1, ...strides, 1]));
    for (let i = ns - 1; i >= 0; i--) {
      if (++tap[i]! < kSp[i]!) break;
      tap[i] = 0;
    }
  }
  const patches = wins.length === 1 ? wins[0]! : concatenate(wins, ns + 1);
  const opts = { precision, preferredElementType: pet } as const;
  const spAxes = outSp.map((_, i) => i + 1);
  let out: Array; // (N', out spatial..., O)
  if (G === 1 && B === 1) {
    // one GEMM: (N * S, T * C) x (T * C, O)
    out = dotGeneral(patches, reshape(rc, [kTaps * I, O]), [[[ns + 1], [0]], [[], []]], opts);
  } else if (G > 1) {
    // features split group-major: (N, S..., T, G, I) x (T, I, G, O/G) -> (G, N, S..., O/G)
    const p = reshape(patches, [N, ...outSp, kTaps, G, I]);
    const k = reshape(rc, [kTaps, I, G, O / G]);
    const y = dotGeneral(p, k, [[[ns + 1, ns + 3], [0, 1]], [[ns + 2], [2]]], opts);
    out = reshape(transpose(y, [1, ...spAxes.map((i) => i + 1), 0, ns + 2]), [N, ...outSp, O]);
  } else {
    // batch split group-major: (B, N/B, S..., T * C) x (T * C, B, O/B) -> (B, N/B, S..., O/B)
    const p = reshape(patches, [B, N / B, ...outSp, kTaps * C]);
    const k = reshape(rc, [kTaps * I, B, O / B]);
    const y = dotGeneral(p, k, [[[ns + 2], [0]], [[0], [1]]], opts);
    out = reshape(transpose(y, [1, ...spAxes.map((i) => i + 1), 0, ns + 2]), [N / B, ...outSp, O]);
  }
  // to the output layout: output axis outSpec[0] is N', outSpec[1] the features, outSpec[2 + i] spatial dim i
  const perm = new globalThis.Array<number>(ns + 2);
  perm[dn.outSpec[0]!] = 0;
  perm[dn.outSpec[1]!] = ns + 1;
  dn.outSpec.slice(2).forEach((d, i) => (perm[d] = i + 1));
  return transpose(out, perm);
}
