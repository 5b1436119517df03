// Scalar functions JavaScript's Math lacks or gets different from C: erf,
// C's round and rint, C's pow, nextafter and XLA's ReducePrecision, each on
// float64 values (the latter two on the bits of a given float dtype).
import {
  type DType,
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from '../core/dtype.js';

// 2/√π and 1/√π rounded to float64, and the rest of 2/√π (for the Taylor branch)
const TWO_OVER_SQRT_PI = 1.1283791670955126;
const TWO_OVER_SQRT_PI_LO = 1.533545961316588e-17;
const ONE_OVER_SQRT_PI = 0.5641895835477563;

/** e^(-x²) without the error of rounding x² first: x = hi + lo with hi·hi exact. */
function expMinusSquare(x: number): number {
  const hi = Math.fround(x); // 24 significant bits, so hi·hi is exact in float64
  const lo = x - hi; // exact
  return Math.exp(-hi * hi) * Math.exp(-lo * (x + hi));
}

const taylorTerms = new Float64Array(64);

/**
 * The error function in double precision, within about 1.5 ulp (checked
 * against mpmath). |x| < 0.875: the Taylor series 2/√π·Σ (-1)^n x^(2n+1)/(n!(2n+1)),
 * summed smallest term first with the leading term added last in extra
 * precision. Otherwise erf = 1 - erfc, with erfc from its continued fraction
 * e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), evaluated from the tail.
 */
export function erf(x: number): number {
  if (Number.isNaN(x) || x === 0) return x; // erf(±0) = ±0
  const a = Math.abs(x);
  if (a >= 6) return Math.sign(x); // erfc(6) < 2.2e-17, below half an ulp of 1
  if (a < 0.875) {
    const x2 = x * x;
    let power = x;
    let count = 0;
    for (let n = 1; n < taylorTerms.length; n++) {
      power *= -x2 / n;
      const term = power / (2 * n + 1);
      taylorTerms[count++] = term;
      if (Math.abs(term) <= a * 1e-18) break;
    }
    let tail = 0;
    for (let i = count - 1; i >= 0; i--) tail += taylorTerms[i]!;
    return TWO_OVER_SQRT_PI * x + (TWO_OVER_SQRT_PI_LO * x + TWO_OVER_SQRT_PI * tail);
  }
  // the fraction converges faster for larger x; these depths reach full precision (checked against mpmath)
  const depth = a < 1.5 ? 600 : a < 2.5 ? 150 : 60;
  let fraction = a;
  for (let n = depth; n >= 1; n--) fraction = a + n / 2 / fraction;
  const erfc = (ONE_OVER_SQRT_PI * expMinusSquare(a)) / fraction;
  return Math.sign(x) * (1 - erfc);
}

/** C's round: halfway cases away from zero; keeps the sign of zero. */
export function roundHalfAwayFromZero(x: number): number {
  if (!Number.isFinite(x)) return x;
  const t = Math.trunc(x); // -0 for x in (-1, 0)
  return Math.abs(x - t) >= 0.5 ? t + Math.sign(x) : t;
}

/** C's rint in the default rounding mode: halfway cases to even; keeps the sign of zero. */
export function roundHalfToEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x);
  const d = x - f; // exact
  const r = d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return r === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : r;
}

/** C's pow. Math.pow differs: pow(1, NaN) and pow(-1, ±inf) are 1 in C, NaN in JavaScript. */
export function cPow(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}

// ---- float bits ----

interface FloatFormat {
  exponentBits: number;
  mantissaBits: number;
  totalBits: number;
}

const FORMATS: Partial<Record<DType, FloatFormat>> = {
  float64: { exponentBits: 11, mantissaBits: 52, totalBits: 64 },
  float32: { exponentBits: 8, mantissaBits: 23, totalBits: 32 },
  float16: { exponentBits: 5, mantissaBits: 10, totalBits: 16 },
  bfloat16: { exponentBits: 8, mantissaBits: 7, totalBits: 16 },
};

function formatOf(dtype: DType): FloatFormat {
  const format = FORMATS[dtype];
  if (!format) throw new Error(`reference: ${dtype} is not a floating-point dtype`);
  return format;
}

const scratch = new DataView(new ArrayBuffer(8));

/** The bits of a value stored in a float dtype (the value must be representable). */
export function floatToBits(value: number, dtype: DType): bigint {
  switch (dtype) {
    case 'float64':
      scratch.setFloat64(0, value);
      return scratch.getBigUint64(0);
    case 'float32':
      scratch.setFloat32(0, value);
      return BigInt(scratch.getUint32(0));
    case 'float16':
      return BigInt(float32ToFloat16Bits(value));
    case 'bfloat16':
      return BigInt(float32ToBfloat16Bits(value));
    default:
      throw new Error(`reference: ${dtype} is not a floating-point dtype`);
  }
}

export function bitsToFloat(bits: bigint, dtype: DType): number {
  switch (dtype) {
    case 'float64':
      scratch.setBigUint64(0, bits);
      return scratch.getFloat64(0);
    case 'float32':
      scratch.setUint32(0, Number(bits));
      return scratch.getFloat32(0);
    case 'float16':
      return float16BitsToFloat32(Number(bits));
    case 'bfloat16':
      return bfloat16BitsToFloat32(Number(bits));
    default:
      throw new Error(`reference: ${dtype} is not a floating-point dtype`);
  }
}

/** C's nextafter in the dtype's own format: the next representable value after x toward y. */
export function nextAfter(x: number, y: number, dtype: DType): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === y) return y;
  if (x === 0) return bitsToFloat(1n, dtype) * (y > 0 ? 1 : -1); // smallest subnormal toward y
  const bits = floatToBits(x, dtype);
  // moving away from zero increments the magnitude bits, toward zero decrements them
  return bitsToFloat((x < y) === (x > 0) ? bits + 1n : bits - 1n, dtype);
}

/**
 * XLA's ReducePrecision on a value of a float dtype: round the mantissa to
 * `mantissaBits` (nearest even), then send exponents beyond `exponentBits` to
 * ±inf and below its normal range to ±0 (no subnormals). NaN stays NaN, even
 * with no mantissa bits left (what XLA's CPU backend returns under JAX 0.10;
 * older XLA sources turned it into +inf there).
 */
export function reducePrecision(x: number, dtype: DType, exponentBits: number, mantissaBits: number): number {
  if (Number.isNaN(x)) return x;
  const src = formatOf(dtype);
  let bits = floatToBits(x, dtype);
  const m = BigInt(src.mantissaBits);
  if (mantissaBits < src.mantissaBits) {
    const shift = m - BigInt(mantissaBits);
    const lastBitMask = 1n << shift;
    const lastBit = (bits & lastBitMask) >> shift;
    const bias = lastBit + (lastBitMask >> 1n) - 1n;
    bits = (bits + bias) & ~(lastBitMask - 1n) & ((1n << BigInt(src.totalBits)) - 1n);
  }
  if (exponentBits < src.exponentBits) {
    const exponentMask = ((1n << BigInt(src.exponentBits)) - 1n) << m;
    const signMask = 1n << BigInt(src.totalBits - 1);
    const bias = (1n << BigInt(src.exponentBits - 1)) - 1n;
    const reducedBias = (1n << BigInt(exponentBits - 1)) - 1n;
    const exponent = bits & exponentMask;
    const sign = bits & signMask;
    if (exponent > (bias + reducedBias) << m) bits = sign | exponentMask;
    else if (exponent <= (bias - reducedBias) << m) bits = sign;
  }
  return bitsToFloat(bits, dtype);
}
