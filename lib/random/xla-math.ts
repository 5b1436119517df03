// Special functions the samplers need, computed the way XLA's CPU backend
// computes them for JAX, operation for operation, so that samples match
// JAX's bits rather than merely its accuracy:
//  - XLA contracts a multiply feeding an add into one fused multiply-add
//    (one rounding). jaxon has no FMA primitive and compiles with
//    -ffp-contract=off, so `fma` emulates it in a wider format.
//  - erf (XLA's Eigen-derived rational with FMAs), log1p (Cephes' rational
//    for |x| < sqrt(2) - 1, else log(1 + x)) and erf⁻¹ (the expansion of
//    chlo.erf_inv: M. Giles, "Approximating the erfinv function", GPU
//    Computing Gems, 2011) in XLA's operation order.
//  - float32 log: XLA's Cephes-derived polynomial (via Eigen), not the C
//    library's logf; the exponent split (frexp) is done with power-of-two
//    scalings, which are exact, since jaxon has no bitcast.
import type { Array } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import * as lax from '../lax/ops.js';
import * as jnp from '../numpy/index.js';

type Operand = Array | number;

/**
 * An operand of an fma in `dtype`, held in float64 (JS numbers are rounded to `dtype` first). The float64 is
 * internal, so it holds while x64 is off: made and converted without canonicalization, and combined by lax ops
 * only (jnp's promotion would canonicalize it to float32).
 */
function wide(x: Operand, dtype: 'float32' | 'float64'): Array {
  if (typeof x === 'number') return toArray('random', dtype === 'float32' ? Math.fround(x) : x, 'constant', 'float64');
  return lax.convertWeak(x, 'float64', false);
}

/** Two operands of a lax binary op broadcast to a common shape (a rank-0 one stays a scalar, as jnp's ufuncs keep it). */
function sameShape(x: Array, y: Array): [Array, Array] {
  const shape = jnp.broadcastShapes([...x.shape], [...y.shape]);
  return [x.ndim === 0 ? x : jnp.broadcastTo(x, shape), y.ndim === 0 ? y : jnp.broadcastTo(y, shape)];
}

/** TwoSum: s = fl(a + b) and the exact error (a + b) - s (Knuth). */
function twoSum(a: Array, b: Array): [Array, Array] {
  const s = lax.add(a, b);
  const bb = lax.sub(s, a);
  return [s, lax.add(lax.sub(a, lax.sub(s, bb)), lax.sub(b, bb))];
}

/** Veltkamp's split of a float64 into two halves whose products are exact. */
function split64(a: Array): [Array, Array] {
  const t = lax.mul(a, 2 ** 27 + 1);
  const high = lax.sub(t, lax.sub(t, a));
  return [high, lax.sub(a, high)];
}

/**
 * a·b + c with one rounding, in float32 or float64.
 * float32: the product is exact in float64 and the sum is rounded to float64
 * and then to float32. Rounding twice differs from rounding once only when
 * the float64 sum lands exactly on a float32 tie that the exact sum is not
 * (about 2^-28 of the sums that are inexact in float64); catching that case
 * costs three times the arithmetic, which normal() would pay ~40 times per
 * sample, so it is left out.
 * float64: Dekker's exact product, TwoSum with c, and the two error terms
 * added before the last rounding (wrong only when rounding those error terms
 * moves the result across a tie, far rarer still).
 */
export function fma(a: Operand, b: Operand, c: Operand, dtype: 'float32' | 'float64'): Array {
  if (dtype === 'float64') {
    const [xb, yb, zb] = jnp.broadcastArrays(wide(a, dtype), wide(b, dtype), wide(c, dtype)) as [Array, Array, Array];
    const p = lax.mul(xb, yb);
    const [xh, xl] = split64(xb);
    const [yh, yl] = split64(yb);
    const productError = lax.add(lax.add(lax.add(lax.sub(lax.mul(xh, yh), p), lax.mul(xh, yl)), lax.mul(xl, yh)), lax.mul(xl, yl));
    const [s, sumError] = twoSum(p, zb);
    const exact = lax.add(s, lax.add(sumError, productError));
    // infinities and NaNs: the error terms are NaN, the plain expression is right
    return lax.select(lax.isFinite(exact), exact, lax.add(p, zb));
  }
  return lax.convertElementType(lax.add(...sameShape(lax.mul(...sameShape(wide(a, dtype), wide(b, dtype))), wide(c, dtype))), 'float32');
}

/** c[0]·wⁿ + ... + c[n] by XLA's loop `p = c[i] + p * w`, each step one FMA. */
function horner(coefficients: readonly number[], w: Array, dtype: 'float32' | 'float64'): Array {
  let p = fma(coefficients[0]!, w, coefficients[1]!, dtype);
  for (let i = 2; i < coefficients.length; i++) p = fma(p, w, coefficients[i]!, dtype);
  return p;
}

/** x = m·2^e with m in [0.5, 1), for positive normal float32 x: power-of-two scalings only, so exact. */
function frexp32(x: Array): [Array, Array] {
  let m = x;
  let e = jnp.zerosLike(x);
  for (const k of [64, 32, 16, 8, 4, 2, 1]) {
    const big = lax.ge(m, 2 ** k);
    m = lax.select(big, lax.mul(m, 2 ** -k), m);
    e = lax.select(big, lax.add(e, k), e);
  }
  for (const k of [64, 32, 16, 8, 4, 2, 1]) {
    const small = lax.lt(m, 2 ** (1 - k));
    m = lax.select(small, lax.mul(m, 2 ** k), m);
    e = lax.select(small, lax.sub(e, k), e);
  }
  return [lax.mul(m, 0.5), lax.add(e, 1)]; // m was in [1, 2)
}

const LOG_P = [
  7.0376836292e-2, -1.151461031e-1, 1.167699874e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
  2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
];

/**
 * log(x) in float32 as XLA's CPU backend computes it: Cephes' logf (via
 * Eigen), log(1 + f) for the mantissa in [sqrt(1/2), sqrt(2)) by a degree-8
 * polynomial, plus e·ln 2 in two parts, with XLA's FMAs.
 */
export function log32(x: Array): Array {
  const [mantissa, exponent] = frexp32(lax.max(x, 2 ** -126)); // subnormals are cut off, as XLA does
  const lowHalf = lax.lt(mantissa, Math.fround(Math.SQRT1_2));
  const zero = jnp.zerosLike(x);
  const f = lax.add(lax.sub(mantissa, 1), lax.select(lowHalf, mantissa, zero));
  const e = lax.sub(exponent, lax.select(lowHalf, jnp.onesLike(x), zero));
  const f2 = lax.mul(f, f);
  const f3 = lax.mul(f2, f);
  let y = fma(f, LOG_P[0]!, LOG_P[1]!, 'float32');
  let y1 = fma(f, LOG_P[3]!, LOG_P[4]!, 'float32');
  let y2 = fma(f, LOG_P[6]!, LOG_P[7]!, 'float32');
  y = fma(y, f, LOG_P[2]!, 'float32');
  y1 = fma(y1, f, LOG_P[5]!, 'float32');
  y2 = fma(y2, f, LOG_P[8]!, 'float32');
  y = fma(y, f3, y1, 'float32');
  y = fma(y, f3, y2, 'float32');
  y = fma(y, f3, lax.mul(e, Math.fround(-2.12194440e-4)), 'float32');
  let r = lax.add(fma(-0.5, f2, f, 'float32'), y);
  r = fma(e, 0.693359375, r, 'float32');
  // log(0) = -inf, log(inf) = inf, negative and NaN inputs give NaN
  const special = lax.select(lax.eq(x, 0), jnp.fullLike(x, -Infinity), lax.select(lax.eq(x, Infinity), x, jnp.fullLike(x, NaN)));
  return lax.select(lax.gt(x, 0), lax.select(lax.eq(x, Infinity), x, r), special);
}

const LOG1P_NUMERATOR = [
  4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969, 2.9911919328553073277375e1,
  6.0949667980987787057556e1, 5.7112963590585538103336e1, 2.0039553499201281259648e1,
];
const LOG1P_DENOMINATOR = [
  1, 1.5062909083469192043167e1, 8.3047565967967209469434e1, 2.2176239823732856465394e2, 3.0909872225312059774938e2,
  2.1642788614495947685003e2, 6.0118660497603843919306e1,
];

/**
 * log(1 + x) as XLA's CPU backend computes it, in float32 or float64:
 * Cephes' rational for |x| < sqrt(2) - 1, else log(1 + x).
 */
export function log1p(x: Array): Array {
  const dtype = x.dtype === 'float64' ? 'float64' : 'float32';
  const large = dtype === 'float32' ? log32(lax.add(x, 1)) : lax.log(lax.add(x, 1));
  const x2 = lax.mul(x, x);
  const ratio = lax.div(horner(LOG1P_NUMERATOR, x, dtype), horner(LOG1P_DENOMINATOR, x, dtype));
  const cubicTerm = lax.mul(lax.mul(x, x2), ratio);
  const small = lax.add(x, fma(-0.5, x2, cubicTerm, dtype));
  const threshold = dtype === 'float32' ? Math.fround(Math.SQRT2 - 1) : Math.SQRT2 - 1;
  return lax.select(lax.lt(lax.abs(x), threshold), small, large);
}

const ERF_NUMERATOR = [0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145, 1.128379143519084];
const ERF_DENOMINATOR = [
  -1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667, 0.11098505178285362,
  0.49746925110067538, 1,
];

/** erf(x) in float32 as XLA's CPU backend computes it (±1 from |x| ≥ 3.8325, where erf rounds to 1). */
export function erf32(x: Array): Array {
  const x2 = lax.mul(x, x);
  // the Horner steps are fma(x², p, c): the same single rounding as fma(p, x², c)
  const p = lax.mul(x, horner(ERF_NUMERATOR, x2, 'float32'));
  const q = horner(ERF_DENOMINATOR, x2, 'float32');
  return lax.select(lax.ge(lax.abs(x), Math.fround(3.832506856900711)), lax.sign(x), lax.div(p, q));
}

const F32_W_LESS_THAN_5 = [
  2.81022636e-8, 3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164,
  0.246640727, 1.50140941,
];
const F32_W_AT_LEAST_5 = [
  -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
  1.00167406, 2.83297682,
];

const F64_W_LESS_THAN_6_25 = [
  -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18, 1.115787767802518096e-17,
  -1.333171662854620906e-16, 2.0972767875968561637e-17, 6.6376381343583238325e-15, -4.0545662729752068639e-14,
  -8.1519341976054721522e-14, 2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
  1.051212273321532285e-9, -4.1126339803469836976e-9, -2.9070369957882005086e-8, 4.2347877827932403518e-7,
  -1.3654692000834678645e-6, -1.3882523362786468719e-5, 0.0001867342080340571352, -0.00074070253416626697512,
  -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356,
];
const F64_W_LESS_THAN_16 = [
  2.2137376921775787049e-9, 9.0756561938885390979e-8, -2.7517406297064545428e-7, 1.8239629214389227755e-8,
  1.5027403968909827627e-6, -4.013867526981545969e-6, 2.9234449089955446044e-6, 1.2475304481671778723e-5,
  -4.7318229009055733981e-5, 6.8284851459573175448e-5, 2.4031110387097893999e-5, -0.0003550375203628474796,
  0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066, -0.0037512085075692412107,
  0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635,
];
const F64_W_AT_LEAST_16 = [
  -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-9, -3.7894654401267369937e-9,
  7.6157012080783393804e-9, -1.4960026627149240478e-8, 2.9147953450901080826e-8, -6.7711997758452339498e-8,
  2.2900482228026654717e-7, -9.9298272942317002539e-7, 4.5260625972231537039e-6, -1.9681778105531670567e-5,
  7.5995277030017761139e-5, -0.00021503011930044477347, -0.00013871931833623122026, 1.0103004648645343977,
  4.8499064014085844221,
];

/**
 * erf⁻¹(x) for float32 or float64 x (XLA's ErfInv32 / ErfInv64). Each
 * branch's polynomial is evaluated on its own w and the branches selected
 * after, which gives every element exactly the arithmetic XLA's selected
 * coefficients do. 16-bit floats: call with float32 (XLA upcasts them).
 */
export function erfInv(x: Array): Array {
  let p: Array;
  if (x.dtype === 'float64') {
    const w = lax.neg(log1p(lax.mul(x, lax.neg(x))));
    const root = lax.sqrt(w);
    const small = horner(F64_W_LESS_THAN_6_25, lax.sub(w, 3.125), 'float64');
    const middle = horner(F64_W_LESS_THAN_16, lax.sub(root, 3.25), 'float64');
    const large = horner(F64_W_AT_LEAST_16, lax.sub(root, 5), 'float64');
    p = lax.select(lax.lt(w, 6.25), small, lax.select(lax.lt(w, 16), middle, large));
  } else if (x.dtype === 'float32') {
    const w = lax.neg(log1p(lax.mul(x, lax.neg(x))));
    const small = horner(F32_W_LESS_THAN_5, lax.add(w, -2.5), 'float32');
    const large = horner(F32_W_AT_LEAST_5, lax.add(lax.sqrt(w), -3), 'float32');
    p = lax.select(lax.lt(w, 5), small, large);
  } else {
    throw new TypeError(`erfInv: x must be float32 or float64, got ${x.dtype}`);
  }
  // erf⁻¹(±1) = ±inf, which the polynomial does not reach
  return lax.select(lax.eq(lax.abs(x), 1), lax.mul(x, Infinity), lax.mul(p, x));
}
