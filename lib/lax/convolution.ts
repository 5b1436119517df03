// Convolutions: lax.convGeneralDilated (JAX's conv_general_dilated, XLA's
// ConvGeneralDilated: 1-3 or more spatial dims, strides, SAME / SAME_LOWER /
// VALID / explicit padding, lhs and rhs dilation, dimension numbers, feature and
// batch groups, precision, preferredElementType), lax.conv,
// lax.convWithGeneralPadding, lax.convDimensionNumbers.
//
// The arguments are checked here with JAX's messages, the string padding
// resolved, and one conv_general_dilated primitive bound: its kernel
// (compiler/render/conv.ts) reads the operands in their own layouts, and its
// jvp, transpose and batching rules (transforms/conv-rules.ts) are JAX's, so
// derivatives and vmaps of convolutions are convolutions. The im2col
// composite it replaced is kept in convolution-composite.ts as a test oracle.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { bind1 } from '../core/bind.js';
import { type ConvDimensionNumbers, type ConvParams } from '../core/primitives.js';
import { canonicalizePrecision } from './ops.js';

export type { ConvDimensionNumbers };

/** JAX's string form (e.g. ['NHWC', 'HWIO', 'NHWC']), a ConvDimensionNumbers, or null for (N, C, spatial...) / (O, I, spatial...). */
export type ConvGeneralDilatedDimensionNumbers = [string, string, string] | ConvDimensionNumbers | null | undefined;

export type ConvPadding = 'SAME' | 'SAME_LOWER' | 'VALID' | string | [number, number][];

export interface ConvGeneralDilatedOptions {
  lhsDilation?: number[] | null;
  rhsDilation?: number[] | null;
  dimensionNumbers?: ConvGeneralDilatedDimensionNumbers;
  featureGroupCount?: number;
  batchGroupCount?: number;
  precision?: unknown;
  preferredElementType?: DType | null;
}

const FN = 'lax.convGeneralDilated';

/** JAX's conv_general_permutations: the string form to axis permutations; spatial axes follow the rhs spec's order. */
function convGeneralPermutations(fn: string, dn: readonly string[]): ConvDimensionNumbers {
  const pairs: [string, string][] = [['N', 'C'], ['O', 'I'], ['N', 'C']];
  dn.forEach((spec, i) => {
    const [a, b] = pairs[i]!;
    const count = (ch: string) => [...spec].filter((c) => c === ch).length;
    if (count(a) !== 1 || count(b) !== 1) throw new TypeError(`${fn}: dimensionNumbers[${i}] must contain the characters '${a}' and '${b}' exactly once, got '${spec}'`);
    if (new Set(spec).size !== spec.length) throw new TypeError(`${fn}: dimensionNumbers[${i}] cannot have duplicate characters, got '${spec}'`);
  });
  const spatial = (spec: string, [a, b]: [string, string]) => [...spec].filter((c) => c !== a && c !== b).sort().join('');
  if (!(spatial(dn[0]!, pairs[0]!) === spatial(dn[1]!, pairs[1]!) && spatial(dn[1]!, pairs[1]!) === spatial(dn[2]!, pairs[2]!))) {
    throw new TypeError(`${fn}: dimensionNumbers elements must each have the same set of spatial characters, got ${show(dn)}`);
  }
  const rhs = dn[1]!;
  const perm = (spec: string, [a, b]: [string, string], isRhs: boolean): number[] => {
    let sp = [...spec].map((c, i) => ({ c, i })).filter(({ c }) => c !== a && c !== b);
    if (!isRhs) sp = sp.sort((x, y) => rhs.indexOf(x.c) - rhs.indexOf(y.c));
    return [spec.indexOf(a), spec.indexOf(b), ...sp.map(({ i }) => i)];
  };
  return { lhsSpec: perm(dn[0]!, pairs[0]!, false), rhsSpec: perm(rhs, pairs[1]!, true), outSpec: perm(dn[2]!, pairs[2]!, false) };
}

/** JAX's conv_dimension_numbers: any accepted form to ConvDimensionNumbers, checked against the operands' ranks. */
export function convDimensionNumbers(lhsShape: readonly number[], rhsShape: readonly number[], dimensionNumbers: ConvGeneralDilatedDimensionNumbers, fn = 'lax.convDimensionNumbers'): ConvDimensionNumbers {
  const n = lhsShape.length;
  if (dimensionNumbers !== null && dimensionNumbers !== undefined && !globalThis.Array.isArray(dimensionNumbers)) {
    if (typeof dimensionNumbers !== 'object') throw new TypeError(`${fn}: dimensionNumbers must be a list of 3 strings, a ConvDimensionNumbers or null, got ${show(dimensionNumbers)}`);
    const { lhsSpec, rhsSpec, outSpec } = dimensionNumbers;
    for (const [name, spec] of [['lhsSpec', lhsSpec], ['rhsSpec', rhsSpec], ['outSpec', outSpec]] as const) {
      if (!globalThis.Array.isArray(spec) || spec.length !== n || [...spec].sort((a, b) => a - b).some((v, i) => v !== i)) {
        throw new ValueError(`${fn}: dimensionNumbers.${name} must be a permutation of the ${n} axes of lhs ${show(lhsShape)}, got ${show(spec)}`);
      }
    }
    return { lhsSpec: [...lhsSpec], rhsSpec: [...rhsSpec], outSpec: [...outSpec] };
  }
  if (n !== rhsShape.length) throw new TypeError(`${fn}: convolution requires lhs and rhs ndim to be equal, got ${n} and ${rhsShape.length}`);
  if (dimensionNumbers === null || dimensionNumbers === undefined) {
    const iota = [...globalThis.Array(n).keys()];
    return { lhsSpec: iota, rhsSpec: [...iota], outSpec: [...iota] };
  }
  if (dimensionNumbers.length !== 3) throw new TypeError(`${fn}: convolution dimensionNumbers list must be length 3, got ${dimensionNumbers.length}`);
  if (!dimensionNumbers.every((e) => typeof e === 'string')) throw new TypeError(`${fn}: convolution dimensionNumbers elements must be strings, got ${show(dimensionNumbers)}`);
  dimensionNumbers.forEach((e, i) => {
    if (e.length !== n) throw new TypeError(`${fn}: dimensionNumbers[${i}] must have length equal to the ndim of lhs and rhs, got ${e.length} ('${e}') for lhs and rhs shapes ${show(lhsShape)} and ${show(rhsShape)}`);
  });
  return convGeneralPermutations(fn, dimensionNumbers);
}

/** JAX's lax.padtype_to_pads: 'SAME' / 'SAME_LOWER' / 'VALID' to explicit (lo, hi) pairs. */
export function padtypeToPads(inShape: readonly number[], windowShape: readonly number[], windowStrides: readonly number[], padding: string, fn = 'lax.padtypeToPads'): [number, number][] {
  const kind = padding.toUpperCase();
  if (kind === 'VALID') return inShape.map(() => [0, 0]);
  if (kind !== 'SAME' && kind !== 'SAME_LOWER') throw new ValueError(`${fn}: unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got '${padding}'`);
  return inShape.map((d, i) => {
    const s = windowStrides[i]!;
    const out = Math.ceil(d / s);
    const size = Math.max(0, (out - 1) * s + windowShape[i]! - d);
    const small = Math.floor(size / 2);
    return kind === 'SAME' ? [small, size - small] : [size - small, small];
  });
}

function checkInts(fn: string, arg: string, v: unknown, n: number, min: number): number[] {
  if (!globalThis.Array.isArray(v) || v.length !== n || !v.every((x) => Number.isInteger(x) && x >= min)) {
    throw new ValueError(`${fn}: ${arg} must be a list of ${n} integers >= ${min} (one per spatial dimension), got ${show(v)}`);
  }
  return [...v];
}

const dilate = (d: number, r: number): number => (d === 0 ? 0 : 1 + r * (d - 1));

/** lax.convGeneralDilated(lhs, rhs, windowStrides, padding, { lhsDilation, rhsDilation, dimensionNumbers, featureGroupCount, batchGroupCount, precision, preferredElementType }). */
export function convGeneralDilated(lhs: ArrayLike, rhs: ArrayLike, windowStrides: number[], padding: ConvPadding, options: ConvGeneralDilatedOptions = {}): Array {
  checkOptions(FN, options, ['lhsDilation', 'rhsDilation', 'dimensionNumbers', 'featureGroupCount', 'batchGroupCount', 'precision', 'preferredElementType']);
  return convImpl(FN, lhs, rhs, windowStrides, padding, options);
}

function convImpl(fn: string, lhs: ArrayLike, rhs: ArrayLike, windowStrides: number[], padding: ConvPadding, options: ConvGeneralDilatedOptions): Array {
  const l = toArray(fn, lhs, 'lhs');
  const r = toArray(fn, rhs, 'rhs');
  if (l.ndim !== r.ndim) throw new ValueError(`${fn}: lhs and rhs must have the same number of dimensions, but got ${show(l.shape)} and ${show(r.shape)}`);
  if (l.ndim < 2) throw new ValueError(`${fn}: lhs and rhs need at least 2 dimensions (batch and feature), got shapes ${show(l.shape)} and ${show(r.shape)}`);
  if (l.dtype !== r.dtype) throw new TypeError(`${fn}: lhs and rhs must have the same dtype, got ${l.dtype} and ${r.dtype}`);
  const dn = convDimensionNumbers(l.shape, r.shape, options.dimensionNumbers, fn);
  const ns = l.ndim - 2;
  if (!globalThis.Array.isArray(windowStrides) || windowStrides.length !== ns) {
    throw new ValueError(`${fn}: window and windowStrides must have the same number of dimensions, but got ${ns} and ${show(windowStrides)}`);
  }
  const strides = checkInts(fn, 'windowStrides', windowStrides, ns, 1);
  const lhsDilation = options.lhsDilation == null ? strides.map(() => 1) : checkInts(fn, 'lhsDilation', options.lhsDilation, ns, 1);
  const rhsDilation = options.rhsDilation == null ? strides.map(() => 1) : checkInts(fn, 'rhsDilation', options.rhsDilation, ns, 1);
  const G = options.featureGroupCount ?? 1;
  const B = options.batchGroupCount ?? 1;
  if (!Number.isInteger(G) || G < 1) throw new ValueError(`${fn}: featureGroupCount must be a positive integer, got ${show(G)}`);
  if (!Number.isInteger(B) || B < 1) throw new ValueError(`${fn}: batchGroupCount must be a positive integer, got ${show(B)}`);

  const lShape = dn.lhsSpec.map((a) => l.shape[a]!);
  const rShape = dn.rhsSpec.map((a) => r.shape[a]!);
  const [N, C] = lShape as [number, number];
  const [O, I] = rShape as [number, number];
  const inSp = lShape.slice(2);
  const kSp = rShape.slice(2);
  if (C % G !== 0) throw new ValueError(`${fn}: featureGroupCount must divide lhs feature dimension size, but ${G} does not divide ${C}`);
  if (C / G !== I) throw new ValueError(`${fn}: lhs feature dimension size divided by featureGroupCount must equal the rhs input feature dimension size, but ${C} // ${G} != ${I}`);
  if (O % G !== 0) throw new ValueError(`${fn}: rhs output feature dimension size must be a multiple of featureGroupCount, but ${O} is not a multiple of ${G}`);
  if (B > 1 && N % B !== 0) throw new ValueError(`${fn}: batchGroupCount must divide lhs batch dimension size, but ${B} does not divide ${N}`);
  if (O % B !== 0) throw new ValueError(`${fn}: rhs output feature dimension size must be a multiple of batchGroupCount, but ${O} is not a multiple of ${B}`);
  if (B > 1 && G > 1) throw new ValueError(`${fn}: at most one of batchGroupCount and featureGroupCount may be > 1, got batchGroupCount=${B} and featureGroupCount=${G}`);

  let pads: [number, number][];
  if (typeof padding === 'string') {
    if (lhsDilation.some((d) => d !== 1)) throw new ValueError(`${fn}: string padding is not implemented for transposed convolution using this op; specify the padding explicitly (got padding '${padding}' with lhsDilation ${show(lhsDilation)})`);
    pads = padtypeToPads(inSp, kSp.map((k, i) => dilate(k, rhsDilation[i]!)), strides, padding, fn);
  } else {
    if (!globalThis.Array.isArray(padding) || !padding.every((p) => globalThis.Array.isArray(p) && p.length === 2 && Number.isInteger(p[0]) && Number.isInteger(p[1]))) {
      throw new ValueError(`${fn}: padding should be a string or a list of (low, high) integer pairs, got ${show(padding)}`);
    }
    if (padding.length !== ns) throw new TypeError(`${fn}: wrong number of explicit pads for convolution: expected ${ns}, got ${padding.length}`);
    pads = padding.map((p) => [p[0], p[1]]);
  }
  const padded = inSp.map((d, i) => dilate(d, lhsDilation[i]!) + pads[i]![0] + pads[i]![1]);
  if (padded.some((d) => d < 0)) throw new ValueError(`${fn}: negative padding is larger than the size of the corresponding dimension: got padding=${show(pads)} for lhs spatial shape ${show(inSp)}`);
  const pet = options.preferredElementType ? checkUserDType(fn, options.preferredElementType, 'preferredElementType') : null;
  const precision = canonicalizePrecision(fn, options.precision);
  const params: ConvParams = {
    windowStrides: strides, padding: pads, lhsDilation, rhsDilation, dimensionNumbers: dn,
    featureGroupCount: G, batchGroupCount: B, preferredElementType: pet, ...(precision ? { precision } : {}),
  };
  return bind1('conv_general_dilated', [l, r], params);
}

/** lax.conv(lhs, rhs, windowStrides, padding, { precision, preferredElementType }): NC.../OI... layout, no dilation. */
export function conv(lhs: ArrayLike, rhs: ArrayLike, windowStrides: number[], padding: ConvPadding, options: { precision?: unknown; preferredElementType?: DType | null } = {}): Array {
  checkOptions('lax.conv', options, ['precision', 'preferredElementType']);
  return convImpl('lax.conv', lhs, rhs, windowStrides, padding, options);
}

/** lax.convWithGeneralPadding(lhs, rhs, windowStrides, padding, lhsDilation, rhsDilation, { precision, preferredElementType }). */
export function convWithGeneralPadding(
  lhs: ArrayLike,
  rhs: ArrayLike,
  windowStrides: number[],
  padding: ConvPadding,
  lhsDilation?: number[] | null,
  rhsDilation?: number[] | null,
  options: { precision?: unknown; preferredElementType?: DType | null } = {},
): Array {
  checkOptions('lax.convWithGeneralPadding', options, ['precision', 'preferredElementType']);
  return convImpl('lax.convWithGeneralPadding', lhs, rhs, windowStrides, padding, { ...options, lhsDilation: lhsDilation ?? null, rhsDilation: rhsDilation ?? null });
}
