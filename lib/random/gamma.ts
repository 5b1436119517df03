// jax.random's gamma family and poisson, following JAX 0.10.2
// (jax/_src/random/core.py) operation for operation so that a key gives
// JAX's samples:
//  - gamma / loggamma: Marsaglia and Tsang's rejection sampler, one scalar
//    while loop per element (_gamma_one) with its own key from split(key,
//    n), vmapped as JAX lowers random_gamma_p; a < 1 is boosted to a + 1
//    and multiplied by u^(1/a) (or, in log space, plus log(u)/a).
//  - beta, dirichlet, t, chisquare from loggamma / gamma as JAX builds them.
//  - poisson: Knuth's product of uniforms for lam < 10, Hörmann's
//    transformed rejection (PTRS) otherwise, each one while loop over the
//    whole array.
// XLA contracts a multiply feeding an add into an FMA; `fma` reproduces
// that where JAX's expression has one (v = 1 + x·c). float64 samples are
// JAX's bit for bit. float32 samples agree to a few ulps, not always
// exactly: XLA's algebraic simplifier turns c = (1/3)/sqrt(d) into
// (1/3)·rsqrt(d), and XLA's float32 rsqrt is a hardware estimate plus a
// Newton step, not correctly rounded (jaxon uses the correctly rounded
// value, which is XLA's in about 5 cases of 6), and the boost for a < 1 uses
// XLA's own float32 pow; both move v by an ulp or two, never the
// accept/reject decisions in the fixtures (a decision flips only when a
// sample lies within an ulp of the acceptance boundary).
import type { Array, ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType, integerRange, isInteger } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { broadcastShapes, checkShape } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { whileLoop } from '../lax/control-flow.js';
import * as jnp from '../numpy/index.js';
import { customJvp } from '../transforms/custom-derivatives.js';
import { jit } from '../transforms/jit.js';
import { vmap } from '../transforms/vmap.js';
import { FloatMath, type FloatDType, checkParamShapes, floatDtype, normalIn, uniformIn } from './distributions.js';
import { type Key, checkKey } from './keys.js';
import { exponentialIn, logIn } from './samplers.js';
import { splitKey } from './threefry.js';
import { fma, log1p, log32 } from './xla-math.js';

/**
 * 1/sqrt(x), correctly rounded. XLA's float32 rsqrt on the CPU is a hardware
 * estimate refined by a Newton step (not correctly rounded in about 1 case of
 * 6, by up to 2 ulps, and vendor-dependent), which jaxon cannot reproduce.
 */
function rsqrt(x: Array): Array {
  if (x.dtype === 'float64') return lax.div(1, lax.sqrt(x));
  const wide = lax.convertWeak(x, 'float64', false);
  return lax.convertElementType(lax.div(toArray('random', 1, 'one', 'float64'), lax.sqrt(wide)), x.dtype);
}

/** JAX's _split(key, n) as a JS array of n keys. */
function splitN(key: Key, n: number): Key[] {
  const keys = splitKey(key, [n]);
  return globalThis.Array.from({ length: n }, (_, i) => lax.reshape(lax.sliceInDim(keys, i, i + 1, 1, 0), [2]));
}

/** _gamma_one: one Gamma(alpha) sample (or its log) from one key; alpha a scalar in the compute dtype. */
function gammaOne(f: FloatMath, key: Key, alpha: Array, logSpace: boolean): Array {
  const third = f.full(1 / 3);
  const boostMask = lax.ge(alpha, 1);
  const alphaOrig = alpha;
  alpha = lax.select(boostMask, alpha, f.add(alpha, 1));
  const d = f.sub(alpha, third);
  // XLA rewrites (1/3) / sqrt(d) as (1/3)·rsqrt(d) (see the header)
  const c = f.mul(third, f.round(rsqrt(d)));
  const zero = f.full(0);
  const one = f.full(1);
  const log = (x: Array) => logIn(f, x);

  type State = [Key, Array, Array, Array];
  const reject = ([, X, V, U]: State) => {
    const squeeze = lax.ge(U, f.sub(one, f.mul(f.mul(X, X), f.full(0.0331))));
    const tail = lax.ge(log(U), f.add(f.mul(X, 0.5), f.mul(d, f.add(f.sub(one, V), log(V)))));
    return jnp.logicalAnd(squeeze, tail);
  };
  const propose = ([k]: State): State => {
    const [next, xKey, uKey] = splitN(k, 3) as [Key, Key, Key];
    const [, x, v] = whileLoop(
      ([, , vv]: [Key, Array, Array]) => lax.le(vv, zero),
      ([kk]: [Key, Array, Array]): [Key, Array, Array] => {
        const [kNext, sub] = splitN(kk, 2) as [Key, Key];
        const xx = normalIn(f, sub, []);
        return [kNext, xx, fmaIn(f, xx, c, one)];
      },
      [xKey, zero, f.full(-1)],
    );
    const U = uniformIn(f, uKey, [], zero, one);
    return [next, f.mul(x, x), f.mul(f.mul(v, v), v), U];
  };
  const [k, subkey] = splitN(key, 2) as [Key, Key];
  const [, , V] = whileLoop(reject, propose, [k, zero, one, f.full(2)] as State);
  if (logSpace) {
    const logSamples = lax.neg(exponentialIn(f, subkey, []));
    const skip = jnp.logicalOr(boostMask, lax.eq(logSamples, 0));
    const inverse = f.div(one, alphaOrig);
    return f.add(f.add(log(d), log(V)), lax.select(skip, zero, f.mul(logSamples, inverse)));
  }
  const samples = f.sub(one, uniformIn(f, subkey, [], zero, one));
  const boost = lax.select(boostMask, one, f.round(lax.pow(samples, f.div(one, alphaOrig))));
  return f.mul(f.mul(d, V), boost);
}

/** a·b + c as XLA computes it in `f`'s dtype: one FMA (16-bit floats: in float32, then rounded). */
function fmaIn(f: FloatMath, a: Array, b: Array, c: Array): Array {
  return f.round(fma(a, b, c, f.compute));
}

const gammaImpl = jit((key: Key, a: Array, shape: number[], dtype: FloatDType, logSpace: boolean) => {
  const f = new FloatMath(dtype);
  const n = shape.reduce((x, y) => x * y, 1);
  if (n === 0) return jnp.zeros(shape, { dtype });
  const alphas = lax.reshape(jnp.broadcastTo(f.cast(a), shape), [n]);
  const keys = splitKey(key, [n]);
  const samples = vmap((k: Key, alpha: Array) => gammaOne(f, k, alpha, logSpace))(keys, alphas) as Array;
  return f.out(lax.reshape(samples, shape));
}, { staticArgnums: [2, 3, 4] });

const gammaWithJvp = customJvp((key: Key, a: Array, shape: number[], dtype: FloatDType, logSpace: boolean) => gammaImpl(key, a, shape, dtype, logSpace), { nondiffArgnums: [0, 2, 3, 4] });
gammaWithJvp.defjvp(() => {
  throw new Error('random.gamma: the derivative of a gamma sample with respect to a (JAX\'s implicit reparameterization, random_gamma_grad) is not implemented in jaxon; wrap a in lax.stopGradient to differentiate other inputs');
});

function gammaArgs(fn: string, key: Key, a: ArrayLike, shape: number | number[] | null | undefined, options: { dtype?: DType }): [Key, Array, number[], FloatDType] {
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const alpha = numberParameter(fn, a, 'a', dtype);
  let s: number[];
  if (shape === undefined || shape === null) {
    s = [...alpha.shape];
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { a: alpha });
  }
  return [k, alpha, s, dtype];
}

/** Gamma(a) floats (shape a's shape by default), by Marsaglia and Tsang's method. */
export function gamma(key: Key, a: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const [k, alpha, s, dtype] = gammaArgs('random.gamma', key, a, shape, options);
  return gammaWithJvp(k, alpha, s, dtype, false);
}

/** log of Gamma(a) floats, computed in log space (accurate for small a, where the samples underflow). */
export function loggamma(key: Key, a: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const [k, alpha, s, dtype] = gammaArgs('random.loggamma', key, a, shape, options);
  return gammaWithJvp(k, alpha, s, dtype, true);
}

const betaJit = jit((key: Key, a: Array, b: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const [keyA, keyB] = splitN(key, 2) as [Key, Key];
  const logA = gammaWithJvp(keyA, jnp.broadcastTo(f.out(f.cast(a)), shape), shape, dtype, true) as Array;
  const logB = gammaWithJvp(keyB, jnp.broadcastTo(f.out(f.cast(b)), shape), shape, dtype, true) as Array;
  const [la, lb] = [f.cast(logA), f.cast(logB)];
  const logMax = lax.max(la, lb);
  const ga = f.round(lax.exp(f.sub(la, logMax)));
  const gb = f.round(lax.exp(f.sub(lb, logMax)));
  return f.out(f.div(ga, f.add(ga, gb)));
}, { staticArgnums: [3, 4] });

/** Beta(a, b) floats: from two log-gamma samples, ga / (ga + gb) scaled by their max. */
export function beta(key: Key, a: ArrayLike, b: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const fn = 'random.beta';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const aa = numberParameter(fn, a, 'a', dtype);
  const bb = numberParameter(fn, b, 'b', dtype);
  let s: number[];
  if (shape === undefined || shape === null) {
    s = broadcastShapes(fn, aa.shape, bb.shape);
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { a: aa, b: bb });
  }
  return betaJit(k, aa, bb, s, dtype);
}

const dirichletJit = jit((key: Key, alpha: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const full = [...shape, alpha.shape[alpha.ndim - 1]!];
  const logGamma = gammaWithJvp(key, jnp.broadcastTo(f.out(f.cast(alpha)), full), full, dtype, true) as Array;
  // jax.nn.softmax over the last axis, written out (random may not import nn, whose initializers import random)
  const unnormalized = jnp.exp(jnp.subtract(logGamma, lax.stopGradient(jnp.max(logGamma, { axis: -1, initial: -Infinity, keepdims: true }))));
  return jnp.divide(unnormalized, jnp.sum(unnormalized, { axis: -1, keepdims: true }));
}, { staticArgnums: [2, 3] });

/** Dirichlet(alpha) floats along alpha's last axis (shape: the batch shape, default alpha's without the last axis). */
export function dirichlet(key: Key, alpha: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const fn = 'random.dirichlet';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const a = toArray(fn, alpha, 'alpha');
  if (a.ndim < 1) throw new ValueError(`${fn}: requires alpha.ndim >= 1, got alpha.ndim == 0`);
  const batch = a.shape.slice(0, -1);
  let s: number[];
  if (shape === undefined || shape === null) {
    s = batch;
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { 'alpha[..., 0]': jnp.zeros(batch) });
  }
  return dirichletJit(k, a, s, dtype);
}

const tJit = jit((key: Key, df: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const [keyN, keyG] = splitN(key, 2) as [Key, Key];
  const n = normalIn(f, keyN, shape);
  const halfDf = f.div(f.cast(df), 2);
  const g = f.cast(gammaWithJvp(keyG, jnp.broadcastTo(f.out(halfDf), shape), shape, dtype, false) as Array);
  return f.out(f.mul(n, f.round(lax.sqrt(f.div(halfDf, g)))));
}, { staticArgnums: [2, 3] });

/** Student's t floats with df degrees of freedom: n·sqrt((df/2) / Gamma(df/2)). */
export function t(key: Key, df: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const [k, d, s, dtype] = dfArgs('random.t', key, df, shape, options);
  return tJit(k, d, s, dtype);
}

const chisquareJit = jit((key: Key, df: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const halfDf = f.div(f.cast(df), 2);
  const logG = f.cast(gammaWithJvp(key, jnp.broadcastTo(f.out(halfDf), shape), shape, dtype, true) as Array);
  return f.out(f.mul(f.round(lax.exp(logG)), 2));
}, { staticArgnums: [2, 3] });

/** Chi-square floats with df degrees of freedom: 2·exp(loggamma(df/2)). */
export function chisquare(key: Key, df: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const [k, d, s, dtype] = dfArgs('random.chisquare', key, df, shape, options);
  return chisquareJit(k, d, s, dtype);
}

function dfArgs(fn: string, key: Key, df: ArrayLike, shape: number | number[] | null | undefined, options: { dtype?: DType }): [Key, Array, number[], FloatDType] {
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const d = numberParameter(fn, df, 'df', dtype);
  let s: number[];
  if (shape === undefined || shape === null) {
    s = [...d.shape];
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { df: d });
  }
  return [k, d, s, dtype];
}

/** A parameter array; a JS number is a Python float, converted straight to the sampling dtype (as JAX does). */
export function numberParameter(fn: string, value: ArrayLike, name: string, dtype: FloatDType): Array {
  return toArray(fn, value, name, typeof value === 'number' ? dtype : undefined);
}

// ---- poisson ----

const LANCZOS_COEFFICIENTS = [
  676.520368121885098567009190444019, -1259.13921672240287047156078755283, 771.3234287776530788486528258894,
  -176.61502916214059906584551354, 12.507343278686904814458936853, -0.13857109526572011689554707,
  9.984369578019570859563e-6, 1.50563273514931155834e-7,
];

/**
 * log Γ(x) in float32 for x ≥ 1/2 by XLA's Lanczos approximation (g = 7),
 * in XLA's operation order. PTRS only needs it at k + 1 for k ≥ 0 (a
 * negative k is rejected before log Γ matters), so the reflection for
 * x < 1/2 is left out.
 */
function lgammaPositive(x: Array): Array {
  const g = 7;
  const z = lax.sub(x, 1);
  let sum = toArray('random', Math.fround(0.99999999999980993227684700473478), 'c', 'float32');
  for (let i = 0; i < LANCZOS_COEFFICIENTS.length; i++) {
    sum = lax.add(sum, lax.div(Math.fround(LANCZOS_COEFFICIENTS[i]!), lax.add(z, i + 1)));
  }
  const t = lax.add(z, g + 0.5);
  const logT = lax.add(Math.fround(Math.log(g + 0.5)), log1p(lax.div(z, g + 0.5)));
  const logSqrtTwoPi = Math.fround((Math.log(2) + Math.log(Math.PI)) / 2);
  return lax.add(fma(lax.sub(lax.add(z, 0.5), lax.div(t, logT)), logT, logSqrtTwoPi, 'float32'), log32(sum));
}

function poissonKnuth(key: Key, lam: Array, shape: number[], dtype: DType, maxIters: number): Array {
  const f = new FloatMath('float32');
  type State = [Array, Array, Key, Array];
  const init: State = [toArray('random', 0, 'i', 'int32'), jnp.zeros(shape, { dtype }), key, jnp.zeros(shape)];
  const [, k] = whileLoop(
    ([i, , , logProd]: State) => jnp.logicalAnd(jnp.any(lax.gt(logProd, lax.neg(lam))), lax.lt(i, maxIters)),
    ([i, kk, rng, logProd]: State): State => {
      const [next, sub] = splitN(rng, 2) as [Key, Key];
      const counted = lax.select(lax.gt(logProd, lax.neg(lam)), lax.add(kk, lax.convertElementType(1, dtype)), kk);
      const u = uniformIn(f, sub, shape, f.full(0), f.full(1));
      return [lax.add(i, 1), counted, next, lax.add(logProd, log32(u))];
    },
    init,
  );
  return lax.convertElementType(lax.sub(k, lax.convertElementType(1, dtype)), dtype);
}

function poissonRejection(key: Key, lam: Array, shape: number[], dtype: DType, maxIters: number): Array {
  const f = new FloatMath('float32');
  const logLam = log32(lam);
  const b = fma(2.53, lax.sqrt(lam), 0.931, 'float32');
  const a = fma(0.02483, b, -0.059, 'float32');
  const invAlpha = lax.add(lax.div(1.1328, lax.sub(b, 3.4)), 1.1239);
  const vR = lax.sub(0.9277, lax.div(3.6224, lax.sub(b, 2)));
  type State = [Array, Array, Array, Key];
  const init: State = [toArray('random', 0, 'i', 'int32'), jnp.fullLike(lam, -1), jnp.zeros(shape, { dtype: 'bool' }), key];
  const [, kOut] = whileLoop(
    ([i, , accepted]: State) => jnp.logicalAnd(jnp.any(jnp.logicalNot(accepted)), lax.lt(i, maxIters)),
    ([i, kPrev, accepted, rng]: State): State => {
      const [next, key0, key1] = splitN(rng, 3) as [Key, Key, Key];
      const u = lax.sub(uniformIn(f, key0, shape, f.full(0), f.full(1)), 0.5);
      const v = uniformIn(f, key1, shape, f.full(0), f.full(1));
      const uShifted = lax.sub(0.5, lax.abs(u));
      const k = lax.floor(lax.add(fma(lax.add(lax.div(lax.mul(2, a), uShifted), b), u, lam, 'float32'), 0.43));
      const s = log32(lax.div(lax.mul(v, invAlpha), lax.add(lax.div(a, lax.mul(uShifted, uShifted)), b)));
      const tt = lax.sub(fma(k, logLam, lax.neg(lam), 'float32'), lgammaPositive(lax.add(k, 1)));
      const accept1 = jnp.logicalAnd(lax.ge(uShifted, 0.07), lax.le(v, vR));
      const reject = jnp.logicalOr(lax.lt(k, 0), jnp.logicalAnd(lax.lt(uShifted, 0.013), lax.gt(v, uShifted)));
      const accept = jnp.logicalOr(accept1, jnp.logicalAnd(jnp.logicalNot(reject), lax.le(s, tt)));
      return [lax.add(i, 1), lax.select(accept, k, kPrev), jnp.logicalOr(accepted, accept), next];
    },
    init,
  );
  return lax.convertElementType(kOut, dtype);
}

const poissonJit = jit((key: Key, lam: Array, shape: number[], dtype: DType) => {
  const useKnuth = jnp.logicalOr(jnp.isnan(lam), lax.lt(lam, 10));
  const lamKnuth = lax.select(useKnuth, lam, jnp.zerosLike(lam));
  const lamRejection = lax.select(useKnuth, jnp.fullLike(lam, 1e5), lam);
  const maxIters = integerRange(dtype)[1];
  const result = lax.select(useKnuth, poissonKnuth(key, lamKnuth, shape, dtype, maxIters), poissonRejection(key, lamRejection, shape, dtype, maxIters));
  return lax.select(lax.eq(lam, 0), jnp.zerosLike(result), result);
}, { staticArgnums: [2, 3] });

/** Poisson(lam) integers of `dtype` (default int32): Knuth's method for lam < 10, transformed rejection above. */
export function poisson(key: Key, lam: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const fn = 'random.poisson';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = options.dtype === undefined ? 'int32' : checkUserDType(fn, options.dtype);
  if (!isInteger(dtype)) throw new TypeError(`${fn}: dtype must be an integer dtype, got ${dtype}`);
  const l = toArray(fn, lam, 'lam');
  const s = shape === undefined || shape === null ? [...l.shape] : checkShape(fn, shape);
  checkParamShapes(fn, s, { lam: l });
  return poissonJit(k, lax.convertElementType(jnp.broadcastTo(l, s), 'float32'), s, dtype);
}
