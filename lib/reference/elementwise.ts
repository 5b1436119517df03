// Reference rules for elementwise primitives: unary and binary arithmetic,
// comparisons, select_n, clamp and convert_element_type. Values are computed
// in float64; integer results wrap here (two's complement), float results
// are rounded to their dtype by the interpreter afterwards.
import {
  type DType,
  castToInteger,
  integerRange,
  isFloating,
  itemsize,
  isUnsigned,
  roundToDType,
  wrapInteger,
} from '../core/dtype.js';
import { ValueError } from '../core/errors.js';
import { storageBytesOf, unpackValues } from '../core/host.js';
import type { BinaryPrimitive, ComparePrimitive, PrimitiveParams, UnaryPrimitive } from '../core/primitives.js';
import type { RefArray } from './array.js';
import { cPow, erf, nextAfter, reducePrecision, roundHalfAwayFromZero, roundHalfToEven } from './special.js';

type ScalarUnary = (x: number, dtype: DType) => number;
type ScalarBinary = (a: number, b: number, dtype: DType) => number;

/** Unary primitives whose params are empty. */
export type PlainUnaryPrimitive = Exclude<UnaryPrimitive, 'round' | 'integer_pow' | 'reduce_precision'>;

const float = (f: (x: number) => number): ScalarUnary => (x) => f(x);

export const UNARY_FUNCTIONS: { [P in PlainUnaryPrimitive]: ScalarUnary } = {
  neg: (x, d) => (isFloating(d) ? -x : wrapInteger(-x, d)),
  sign: (x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : x), // keeps ±0
  floor: float(Math.floor),
  ceil: float(Math.ceil),
  is_finite: (x) => (Number.isFinite(x) ? 1 : 0),
  exp: float(Math.exp),
  exp2: (x) => 2 ** x,
  log: float(Math.log),
  expm1: float(Math.expm1),
  log1p: float(Math.log1p),
  tanh: float(Math.tanh),
  logistic: (x) => 1 / (1 + Math.exp(-x)),
  sin: float(Math.sin),
  cos: float(Math.cos),
  tan: float(Math.tan),
  asin: float(Math.asin),
  acos: float(Math.acos),
  atan: float(Math.atan),
  sinh: float(Math.sinh),
  cosh: float(Math.cosh),
  asinh: float(Math.asinh),
  acosh: float(Math.acosh),
  atanh: float(Math.atanh),
  sqrt: float(Math.sqrt),
  rsqrt: (x) => 1 / Math.sqrt(x),
  cbrt: float(Math.cbrt),
  abs: (x, d) => (isFloating(d) ? Math.abs(x) : wrapInteger(Math.abs(x), d)),
  not: (x, d) => (d === 'bool' ? (x ? 0 : 1) : wrapInteger(~x, d)),
  erf: float(erf),
  square: (x, d) => (isFloating(d) ? x * x : wrapInteger(Math.imul(x, x), d)),
  copy: (x) => x,
  population_count: (x, d) => {
    let bits = unsignedBits(x, d);
    let n = 0;
    for (; bits; bits >>>= 1) n += bits & 1;
    return n;
  },
  clz: (x, d) => bitWidth(d) - (32 - Math.clz32(unsignedBits(x, d))),
};

const bitWidth = (d: DType): number => 8 * itemsize(d);
/** An integer's two's-complement bits as an unsigned number below 2^width. */
const unsignedBits = (x: number, d: DType): number => (bitWidth(d) === 32 ? x >>> 0 : x & ((1 << bitWidth(d)) - 1));
/** XLA's shifts read the amount as unsigned: a negative amount is as out of range as one >= the width. */
const shiftInRange = (s: number, d: DType): boolean => unsignedBits(s, d) < bitWidth(d);
/** The bits below 2^width read as the dtype's signed value. */
const signedOf = (bits: number, d: DType): number => (bitWidth(d) === 32 ? bits | 0 : (bits << (32 - bitWidth(d))) >> (32 - bitWidth(d)));

/** Integer division as XLA defines it: truncation toward zero, x/0 = -1 (all ones unsigned), INT_MIN/-1 = INT_MIN. */
function integerDivide(a: number, b: number, d: DType): number {
  if (b === 0) return isUnsigned(d) ? integerRange(d)[1] : -1;
  return wrapInteger(Math.trunc(a / b), d); // exact: |a|, |b| < 2^32
}

export const BINARY_FUNCTIONS: { [P in BinaryPrimitive]: ScalarBinary } = {
  add: (a, b, d) => (isFloating(d) ? a + b : wrapInteger(a + b, d)),
  sub: (a, b, d) => (isFloating(d) ? a - b : wrapInteger(a - b, d)),
  mul: (a, b, d) => (isFloating(d) ? a * b : wrapInteger(Math.imul(a, b), d)),
  div: (a, b, d) => (isFloating(d) ? a / b : integerDivide(a, b, d)),
  // JavaScript's % is C's fmod, and on integers C's % (sign of the dividend); x % 0 = x for integers
  rem: (a, b, d) => (isFloating(d) ? a % b : b === 0 ? a : wrapInteger(a % b, d)),
  pow: (a, b) => cPow(a, b),
  max: (a, b) => Math.max(a, b), // NaN propagates
  min: (a, b) => Math.min(a, b),
  atan2: (a, b) => Math.atan2(a, b),
  and: (a, b, d) => wrapInteger(a & b, d),
  or: (a, b, d) => wrapInteger(a | b, d),
  xor: (a, b, d) => wrapInteger(a ^ b, d),
  nextafter: (a, b, d) => nextAfter(a, b, d),
  // shift amounts out of [0, width) give 0, or the sign fill for an arithmetic right shift (XLA's semantics)
  shift_left: (a, b, d) => (shiftInRange(b, d) ? wrapInteger(a << unsignedBits(b, d), d) : 0),
  shift_right_logical: (a, b, d) => (shiftInRange(b, d) ? wrapInteger(unsignedBits(a, d) >>> unsignedBits(b, d), d) : 0),
  shift_right_arithmetic: (a, b, d) => wrapInteger(signedOf(unsignedBits(a, d), d) >> (shiftInRange(b, d) ? unsignedBits(b, d) : 31), d),
};

export const COMPARE_FUNCTIONS: { [P in ComparePrimitive]: (a: number, b: number) => boolean } = {
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b, // true for NaN
  lt: (a, b) => a < b,
  le: (a, b) => a <= b,
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
};

function mapUnary(x: RefArray, f: (v: number) => number): Float64Array {
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < out.length; i++) out[i] = f(x.data[i]!);
  return out;
}

export function unaryRule(f: ScalarUnary) {
  return (inputs: RefArray[]): Float64Array[] => {
    const x = inputs[0]!;
    return [mapUnary(x, (v) => f(v, x.dtype))];
  };
}

export function binaryRule(f: ScalarBinary) {
  return (inputs: RefArray[]): Float64Array[] => {
    const [a, b] = inputs as [RefArray, RefArray];
    // a rank-0 operand broadcasts (scalar literals)
    const sa = a.shape.length === 0 ? 0 : 1;
    const sb = b.shape.length === 0 ? 0 : 1;
    const out = new Float64Array(a.shape.length === 0 ? b.data.length : a.data.length);
    for (let i = 0; i < out.length; i++) out[i] = f(a.data[i * sa]!, b.data[i * sb]!, a.dtype);
    return [out];
  };
}

export function compareRule(f: (a: number, b: number) => boolean) {
  return (inputs: RefArray[]): Float64Array[] => {
    const [a, b] = inputs as [RefArray, RefArray];
    const sa = a.shape.length === 0 ? 0 : 1;
    const sb = b.shape.length === 0 ? 0 : 1;
    const out = new Float64Array(a.shape.length === 0 ? b.data.length : a.data.length);
    for (let i = 0; i < out.length; i++) out[i] = f(a.data[i * sa]!, b.data[i * sb]!) ? 1 : 0;
    return [out];
  };
}

export function roundRule(inputs: RefArray[], { roundingMethod }: PrimitiveParams['round']): Float64Array[] {
  const f = roundingMethod === 'to_nearest_even' ? roundHalfToEven : roundHalfAwayFromZero;
  return [mapUnary(inputs[0]!, f)];
}

/** x**y by binary powering (as JAX lowers integer_pow); integers wrap at each product, negative y gives 1/x**|y|. */
export function integerPowRule(inputs: RefArray[], { y }: PrimitiveParams['integer_pow']): Float64Array[] {
  const x = inputs[0]!;
  const d = x.dtype;
  const mul = isFloating(d) ? (a: number, b: number) => a * b : (a: number, b: number) => wrapInteger(Math.imul(a, b), d);
  const power = (base: number): number => {
    let acc = 1;
    let square = base;
    for (let e = Math.abs(y); e > 0; e = Math.floor(e / 2)) {
      if (e % 2 === 1) acc = mul(acc, square);
      if (e > 1) square = mul(square, square);
    }
    return y < 0 ? 1 / acc : acc;
  };
  return [mapUnary(x, power)];
}

export function reducePrecisionRule(
  inputs: RefArray[],
  { exponentBits, mantissaBits }: PrimitiveParams['reduce_precision'],
): Float64Array[] {
  if (!Number.isInteger(exponentBits) || exponentBits < 1 || !Number.isInteger(mantissaBits) || mantissaBits < 0) {
    throw new ValueError(`lax.reduce_precision: needs exponentBits >= 1 and mantissaBits >= 0, got ${exponentBits} and ${mantissaBits}`);
  }
  const x = inputs[0]!;
  return [mapUnary(x, (v) => reducePrecision(v, x.dtype, exponentBits, mantissaBits))];
}

/** bitcast_convert_type: the operand's storage bytes read as the new dtype (a NaN's sign and payload are JS's to keep or lose). */
export function bitcastConvertTypeRule(inputs: RefArray[], { newDtype }: PrimitiveParams['bitcast_convert_type']): Float64Array[] {
  const x = inputs[0]!;
  return [Float64Array.from(unpackValues(storageBytesOf(x.data, x.dtype), newDtype))];
}

/** select_n(pred, ...cases): a bool predicate picks case0 (false) or case1 (true), an int32 one picks by index (clamped). */
export function selectNRule(inputs: RefArray[]): Float64Array[] {
  const [pred, ...cases] = inputs as [RefArray, ...RefArray[]];
  const n = cases[0]!.data.length;
  const scalar = pred.shape.length === 0;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const which = Math.min(Math.max(pred.data[scalar ? 0 : i]!, 0), cases.length - 1);
    out[i] = cases[which]!.data[i]!;
  }
  return [out];
}

/** clamp(lo, x, hi) = min(max(x, lo), hi); bounds may be scalars; NaN anywhere propagates. */
export function clampRule(inputs: RefArray[]): Float64Array[] {
  const [lo, x, hi] = inputs as [RefArray, RefArray, RefArray];
  const out = new Float64Array(x.data.length);
  const loScalar = lo.shape.length === 0;
  const hiScalar = hi.shape.length === 0;
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.min(Math.max(x.data[i]!, lo.data[loScalar ? 0 : i]!), hi.data[hiScalar ? 0 : i]!);
  }
  return [out];
}

/** One value converted from dtype `from` to `to`, as XLA's convert does it on our backends. */
export function convertValue(v: number, from: DType, to: DType): number {
  if (to === 'bool') return v !== 0 ? 1 : 0; // NaN → true
  if (isFloating(to)) return roundToDType(v, to);
  if (isFloating(from)) return castToInteger(v, to) + 0; // truncate, saturate, NaN → 0; no -0
  return wrapInteger(v, to); // int (or bool) → int wraps
}

export function convertElementTypeRule(inputs: RefArray[], { newDtype }: PrimitiveParams['convert_element_type']): Float64Array[] {
  const x = inputs[0]!;
  return [mapUnary(x, (v) => convertValue(v, x.dtype, newDtype))];
}
