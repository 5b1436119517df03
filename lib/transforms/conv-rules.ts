// conv_general_dilated's jvp, transpose and batching rules, ported from
// jax/_src/lax/convolution.py: the convolution is bilinear, so its tangent is
// conv(dx, w) + conv(x, dw), and each operand's transpose is itself a
// convolution (_conv_general_dilated_transpose_lhs: the cotangent convolved
// with the flipped kernel, strides and lhs dilation swapped;
// _conv_general_dilated_transpose_rhs: the input correlated with the
// cotangent, feature and batch groups swapped). vmap folds the batch into the
// batch or feature axis (_conv_general_dilated_batch_rule), so every transform
// of a convolution stays one convolution.
import type { Array } from '../core/array.js';
import { bind1 } from '../core/bind.js';
import { type ConvDimensionNumbers, type ConvParams, type ShapedArray, aval, convOutputShape, dilateSize } from '../core/primitives.js';
import { addTangents, full, type JvpRule, type Tangent } from './jvp.js';
import type { BatchRule } from './batching-rules.js';

const conv = (l: Array, r: Array, params: ConvParams): Array => bind1('conv_general_dilated', [l, r], params);
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);
const reshape = (x: Array, newSizes: number[]): Array => (newSizes.every((d, i) => d === x.shape[i]) && newSizes.length === x.ndim ? x : bind1('reshape', [x], { newSizes }));
const transpose = (x: Array, permutation: number[]): Array => (permutation.every((p, i) => p === i) ? x : bind1('transpose', [x], { permutation }));
const convert = (x: Array, dtype: ShapedArray['dtype']): Array => (x.dtype === dtype ? x : bind1('convert_element_type', [x], { newDtype: dtype, weakType: false }));

/** JAX's _reshape_axis_into: axis src merged into axis dst (dst numbered after src is removed), src major. */
function reshapeAxisInto(src: number, dst: number, x: Array): Array {
  const perm = range(x.ndim).filter((i) => i !== src);
  perm.splice(dst, 0, src);
  const shape = x.shape.filter((_, i) => i !== src);
  shape[dst] = shape[dst]! * x.shape[src]!;
  return reshape(transpose(x, perm), shape);
}

/** JAX's _reshape_axis_out_of: axis src split into (size1, rest). */
function reshapeAxisOutOf(src: number, size1: number, x: Array): Array {
  const shape = [...x.shape];
  shape.splice(src, 1, size1, shape[src]! / size1);
  return reshape(x, shape);
}

const specTranspose = (spec: number[]): number[] => [spec[1]!, spec[0]!, ...spec.slice(2)];

// function declarations, not consts: the rule tables that read them (jvp-rules.ts, batching-rules.ts) can be
// evaluated inside an import cycle through jvp.ts before this module's body has run
export function convJvp(...[[x, y], [tx, ty], params]: Parameters<JvpRule<'conv_general_dilated'>>): ReturnType<JvpRule<'conv_general_dilated'>> {
  const out = conv(x!, y!, params);
  let acc: Tangent = null;
  if (tx) acc = conv(tx, y!, params);
  if (ty) acc = addTangents(acc, conv(x!, ty, params));
  return [[out], [acc]];
}

/** JAX's _conv_general_vjp_lhs_padding. */
function vjpLhsPadding(inShape: number[], window: number[], strides: number[], outShape: number[], padding: [number, number][], lhsDilation: number[], rhsDilation: number[]): [number, number][] {
  return inShape.map((d, i) => {
    const lhsDilated = dilateSize(d, lhsDilation[i]!);
    const rhsDilated = dilateSize(window[i]!, rhsDilation[i]!);
    const outDilated = dilateSize(outShape[i]!, strides[i]!);
    const before = rhsDilated - padding[i]![0] - 1;
    return [before, lhsDilated + rhsDilated - 1 - outDilated - before];
  });
}

/** JAX's _conv_general_vjp_rhs_padding. */
function vjpRhsPadding(inShape: number[], window: number[], strides: number[], outShape: number[], padding: [number, number][], lhsDilation: number[], rhsDilation: number[]): [number, number][] {
  return inShape.map((d, i) => {
    const lhsDilated = dilateSize(d, lhsDilation[i]!);
    const rhsDilated = dilateSize(window[i]!, rhsDilation[i]!);
    const outDilated = dilateSize(outShape[i]!, strides[i]!);
    const lo = padding[i]![0];
    return [lo, outDilated - lhsDilated + rhsDilated - lo - 1];
  });
}

/** JAX's _conv_general_dilated_transpose_lhs. */
export function convTransposeLhs(g: Array, lhs: ShapedArray, rhsIn: Array, params: ConvParams): Array {
  const { windowStrides, padding, lhsDilation, rhsDilation, dimensionNumbers: dn, batchGroupCount: B, precision, preferredElementType } = params;
  let G = params.featureGroupCount;
  const take = (shape: readonly number[], axes: number[]) => axes.map((a) => shape[a]!);
  const lhsSdims = dn.lhsSpec.slice(2);
  const rhsSdims = dn.rhsSpec.slice(2);
  const outSdims = dn.outSpec.slice(2);
  const rhsShape = [...rhsIn.shape];
  let rhs = rhsIn;
  if (G > 1) {
    rhs = reshapeAxisInto(dn.rhsSpec[0]!, dn.rhsSpec[1]!, reshapeAxisOutOf(dn.rhsSpec[0]!, G, rhs));
  } else if (B > 1) {
    rhs = reshapeAxisInto(dn.rhsSpec[0]!, dn.rhsSpec[1]!, reshapeAxisOutOf(dn.rhsSpec[0]!, B, rhs));
    G = B;
  }
  const trans: ConvDimensionNumbers = { lhsSpec: dn.outSpec, rhsSpec: specTranspose(dn.rhsSpec), outSpec: dn.lhsSpec };
  const pads = vjpLhsPadding(take(lhs.shape, lhsSdims), take(rhsShape, rhsSdims), windowStrides, take(g.shape, outSdims), padding, lhsDilation, rhsDilation);
  const revd = convert(rhsSdims.length ? bind1('rev', [rhs], { dimensions: rhsSdims }) : rhs, g.dtype);
  let out = conv(g, revd, {
    windowStrides: lhsDilation, padding: pads, lhsDilation: windowStrides, rhsDilation, dimensionNumbers: trans,
    featureGroupCount: G, batchGroupCount: 1, preferredElementType, ...(precision ? { precision } : {}),
  });
  out = convert(out, lhs.dtype);
  if (B > 1) out = reshapeAxisInto(dn.lhsSpec[1]!, dn.lhsSpec[0]!, reshapeAxisOutOf(dn.lhsSpec[1]!, B, out));
  return out;
}

/** JAX's _conv_general_dilated_transpose_rhs. */
export function convTransposeRhs(g: Array, lhsIn: Array, rhs: ShapedArray, params: ConvParams): Array {
  const { windowStrides, padding, lhsDilation, rhsDilation, dimensionNumbers: dn, precision, preferredElementType } = params;
  if (g.size === 0) return full(aval(rhs.shape, rhs.dtype), 0);
  let G = params.featureGroupCount;
  let B = params.batchGroupCount;
  if (B > 1) {
    G = B;
    B = 1;
  } else if (G > 1) {
    B = G;
    G = 1;
  }
  const take = (shape: readonly number[], axes: number[]) => axes.map((a) => shape[a]!);
  const trans: ConvDimensionNumbers = { lhsSpec: specTranspose(dn.lhsSpec), rhsSpec: specTranspose(dn.outSpec), outSpec: specTranspose(dn.rhsSpec) };
  const pads = vjpRhsPadding(take(lhsIn.shape, dn.lhsSpec.slice(2)), take(rhs.shape, dn.rhsSpec.slice(2)), windowStrides, take(g.shape, dn.outSpec.slice(2)), padding, lhsDilation, rhsDilation);
  const lhs = convert(lhsIn, g.dtype);
  const out = conv(lhs, g, {
    windowStrides: rhsDilation, padding: pads, lhsDilation, rhsDilation: windowStrides, dimensionNumbers: trans,
    featureGroupCount: G, batchGroupCount: B, preferredElementType, ...(precision ? { precision } : {}),
  });
  return convert(out, rhs.dtype);
}

/** JAX's _conv_general_dilated_batch_rule. */
export function convBatch(...[[lhs, rhs], [ld, rd], params]: Parameters<BatchRule<'conv_general_dilated'>>): ReturnType<BatchRule<'conv_general_dilated'>> {
  const { dimensionNumbers: dn } = params;
  const { lhsSpec, rhsSpec, outSpec } = dn;
  if (ld === null && rd === null) return [[conv(lhs!, rhs!, params)], [null]];
  let G = params.featureGroupCount;
  let B = params.batchGroupCount;
  if ((ld !== null && lhs!.shape[ld] === 0) || (rd !== null && rhs!.shape[rd] === 0)) {
    const l = ld === null ? lhs!.shape : lhs!.shape.filter((_, i) => i !== ld);
    const r = rd === null ? rhs!.shape : rhs!.shape.filter((_, i) => i !== rd);
    const shape = convOutputShape(l, r, params);
    return [[full(aval([0, ...shape], params.preferredElementType ?? lhs!.dtype), 0)], [0]];
  }
  if (ld !== null && rd !== null) {
    const size = lhs!.shape[ld]!;
    let newLhs: Array;
    if (B > 1) {
      newLhs = reshapeAxisInto(ld, lhsSpec[0]!, lhs!);
      B *= size;
    } else {
      newLhs = reshapeAxisInto(ld, lhsSpec[1]!, lhs!);
      G *= size;
    }
    const newRhs = reshapeAxisInto(rd, rhsSpec[0]!, rhs!);
    const out = conv(newLhs, newRhs, { ...params, featureGroupCount: G, batchGroupCount: B });
    return [[reshapeAxisOutOf(outSpec[1]!, size, out)], [outSpec[1]!]];
  }
  if (ld !== null) {
    const size = lhs!.shape[ld]!;
    let newLhs: Array;
    if (B === 1) {
      newLhs = reshapeAxisInto(ld, lhsSpec[0]!, lhs!);
    } else {
      newLhs = reshapeAxisOutOf(lhsSpec[0]! + (ld <= lhsSpec[0]! ? 1 : 0), B, lhs!);
      newLhs = reshapeAxisInto(ld + (lhsSpec[0]! < ld ? 1 : 0), lhsSpec[0]! + 1, newLhs);
      newLhs = reshapeAxisInto(lhsSpec[0]!, lhsSpec[0]!, newLhs);
    }
    const out = conv(newLhs, rhs!, params);
    return [[reshapeAxisOutOf(outSpec[0]!, size, out)], [outSpec[0]!]];
  }
  const size = rhs!.shape[rd!]!;
  if (G === 1 && B === 1) {
    const out = conv(lhs!, reshapeAxisInto(rd!, rhsSpec[0]!, rhs!), params);
    return [[reshapeAxisOutOf(outSpec[1]!, size, out)], [outSpec[1]!]];
  }
  // groups outermost: factored out of the rhs output features, the batch folded in, the groups put back; the same on the output
  const groups = G > 1 ? G : B;
  let newRhs = reshapeAxisOutOf(rhsSpec[0]! + (rd! <= rhsSpec[0]! ? 1 : 0), groups, rhs!);
  newRhs = reshapeAxisInto(rd! + (rhsSpec[0]! < rd! ? 1 : 0), rhsSpec[0]! + 1, newRhs);
  newRhs = reshapeAxisInto(rhsSpec[0]!, rhsSpec[0]!, newRhs);
  let out = conv(lhs!, newRhs, params);
  out = reshapeAxisOutOf(outSpec[1]!, groups, out);
  out = reshapeAxisOutOf(outSpec[1]! + 1, size, out);
  out = reshapeAxisInto(outSpec[1]!, outSpec[1]! + 1, out);
  return [[out], [outSpec[1]!]];
}
