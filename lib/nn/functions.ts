// jax.nn's activation and normalization functions (jax/_src/nn/functions.py),
// with the same formulas, dtypes and derivatives. Where JAX defines a custom
// jvp (relu, relu6, logaddexp in softplus), the formula here is chosen so
// ordinary autodiff gives the same tangent (relu'(0) = 0, softplus'(0) =
// 1/2); softmax and logSoftmax subtract their max under stopGradient, as
// JAX does, so inputs near 1e4 do not overflow; logsumexp is jnp.logsumexp.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType, isFloating, isInteger } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import * as jnp from '../numpy/index.js';
import { promoteInexact } from '../numpy/util.js';

export { logsumexp } from '../numpy/reductions.js';

/** An axis option of softmax-like functions: one axis, several, or null for all. */
export type Axis = number | number[] | null;

function floatingOnly(fn: string, x: ArrayLike): Array {
  const a = toArray(fn, x);
  if (!isFloating(a.dtype)) throw new TypeError(`${fn}: x must be a floating-point array (as lax.logistic requires), got dtype ${a.dtype}`);
  return a;
}

/** A strongly typed scalar constant in `dtype` (JAX's np.float32(c).astype(x.dtype)). */
function constant(value: number, dtype: DType): Array {
  return jnp.array(value, { dtype });
}

/**
 * x where `pass` holds, else `elsewhere` (NaN where x is NaN): JAX's primal
 * with its custom-jvp tangent select(pass, t, 0), since only the x branch
 * depends on x; the others are constants with no tangent.
 */
function passThrough(x: Array, pass: Array, elsewhere: Array): Array {
  return jnp.where(pass, x, jnp.where(jnp.isnan(x), NaN, elsewhere));
}

/** jax.nn.relu: max(x, 0), with gradient 0 at 0 (JAX's custom jvp: select(x > 0, g, 0)). */
export function relu(x: ArrayLike): Array {
  const a = toArray('nn.relu', x);
  if (!isFloating(a.dtype)) return jnp.maximum(a, 0);
  // x where x > 0; otherwise 0 or NaN, constants with no tangent
  return passThrough(a, lax.gt(a, 0), jnp.zerosLike(a));
}

/** jax.nn.relu6: min(max(x, 0), 6), with gradient 1 only on (0, 6) (JAX's custom jvp). */
export function relu6(x: ArrayLike): Array {
  const [a] = promoteInexact('nn.relu6', x) as [Array];
  return passThrough(a, jnp.logicalAnd(lax.gt(a, 0), lax.lt(a, 6)), jnp.where(lax.le(a, 0), jnp.zerosLike(a), jnp.fullLike(a, 6)));
}

/** jax.nn.sigmoid: 1 / (1 + exp(-x)) (lax.logistic); floating inputs only, as in JAX. */
export function sigmoid(x: ArrayLike): Array {
  return lax.logistic(floatingOnly('nn.sigmoid', x));
}

/** jax.nn.silu (also swish): x * sigmoid(x). */
export function silu(x: ArrayLike): Array {
  const a = floatingOnly('nn.silu', x);
  return jnp.multiply(a, lax.logistic(a));
}
export const swish = silu;

/**
 * jax.nn.softplus: log(1 + exp(x)) = logaddexp(x, 0), without overflow. The
 * branches give logaddexp's values exactly (x + log1p(exp(-x)) for x > 0,
 * log1p(exp(x)) otherwise, NaN for NaN) and, unlike max(x, 0) +
 * log1p(exp(-|x|)), differentiate to sigmoid(x) everywhere, 1/2 at 0, as
 * JAX's custom jvp of logaddexp does. Each branch sees a safe input, so the
 * unused one cannot put NaN into the gradient.
 */
export function softplus(x: ArrayLike): Array {
  const [a] = promoteInexact('nn.softplus', x) as [Array];
  const positive = lax.gt(a, 0);
  const xPos = jnp.where(positive, a, 0);
  const xNeg = jnp.where(positive, 0, a);
  return jnp.where(positive, jnp.add(xPos, jnp.log1p(jnp.exp(jnp.negative(xPos)))), jnp.log1p(jnp.exp(xNeg)));
}

/** jax.nn.log_sigmoid: -softplus(-x). */
export function logSigmoid(x: ArrayLike): Array {
  return jnp.negative(softplus(jnp.negative(toArray('nn.logSigmoid', x))));
}

/**
 * jax.nn.gelu: with approximate (the default) x/2 (1 + tanh(sqrt(2/pi) (x +
 * 0.044715 x³))); otherwise the exact x/2 erfc(-x/sqrt(2)) = x/2 (1 + erf(x/sqrt(2))).
 */
export function gelu(x: ArrayLike, options: { approximate?: boolean } = {}): Array {
  const fn = 'nn.gelu';
  checkOptions(fn, options, ['approximate']);
  const approximate = options?.approximate ?? true;
  if (typeof approximate !== 'boolean') throw new TypeError(`${fn}: approximate must be a boolean, got ${show(approximate)}`);
  const [a] = promoteInexact(fn, x) as [Array];
  if (approximate) {
    const inner = jnp.multiply(constant(Math.sqrt(2 / Math.PI), a.dtype), jnp.add(a, jnp.multiply(0.044715, jnp.power(a, 3))));
    return jnp.multiply(a, jnp.multiply(0.5, jnp.add(1, jnp.tanh(inner))));
  }
  // there is no erfc primitive: below x ≈ -4, 1 + erf is accurate to ~1e-7 absolute, not relative
  const erf = lax.erf(jnp.multiply(a, constant(Math.SQRT1_2, a.dtype)));
  return jnp.multiply(jnp.multiply(0.5, a), jnp.add(1, erf));
}

/** jax.nn.elu: x where x > 0, alpha * (exp(x) - 1) elsewhere. */
export function elu(x: ArrayLike, options: { alpha?: ArrayLike } = {}): Array {
  checkOptions('nn.elu', options, ['alpha']);
  const a = toArray('nn.elu', x);
  const alpha = options?.alpha ?? 1.0;
  const positive = jnp.greater(a, 0);
  return jnp.where(positive, a, jnp.multiply(alpha, jnp.expm1(jnp.where(positive, 0.0, a))));
}

/** jax.nn.selu: scale * elu(x, alpha) with the self-normalizing constants. */
export function selu(x: ArrayLike): Array {
  const alpha = 1.6732632423543772848170429916717;
  const scale = 1.0507009873554804934193349852946;
  return jnp.multiply(scale, elu(toArray('nn.selu', x), { alpha }));
}

/** jax.nn.leaky_relu: x where x >= 0, negativeSlope * x elsewhere. */
export function leakyRelu(x: ArrayLike, options: { negativeSlope?: ArrayLike } = {}): Array {
  checkOptions('nn.leakyRelu', options, ['negativeSlope']);
  const a = toArray('nn.leakyRelu', x);
  const slope = toArray('nn.leakyRelu', options?.negativeSlope ?? 1e-2, 'negativeSlope');
  return jnp.where(jnp.greaterEqual(a, 0), a, jnp.multiply(slope, a));
}

export interface SoftmaxOptions {
  /** The axis or axes to normalize over (default -1; null for all). */
  axis?: Axis;
  /** Elements to include (a bool array broadcastable to x); masked-out outputs are 0 (softmax) or -inf (logSoftmax). */
  where?: ArrayLike | null;
}

/** Checks an axis option here, so an error names the nn function the user called, not the jnp one inside it. */
function checkAxes(fn: string, axis: Axis, ndim: number): void {
  if (axis === null) return;
  for (const a of typeof axis === 'number' ? [axis] : axis) normalizeAxis(fn, a, ndim);
}

function softmaxOperands(fn: string, x: ArrayLike, options: SoftmaxOptions) {
  checkOptions(fn, options, ['axis', 'where']);
  const [a] = promoteInexact(fn, x) as [Array];
  const axis = options?.axis === undefined ? -1 : options.axis;
  checkAxes(fn, axis, a.ndim);
  const where = options?.where ?? null;
  const xMax = jnp.max(a, { axis, where, initial: -Infinity, keepdims: true });
  const safe = where === null ? a : jnp.where(where, a, -Infinity);
  return { axis, where, shifted: jnp.subtract(safe, lax.stopGradient(xMax)) };
}

/** jax.nn.softmax: exp(x - max) / sum(exp(x - max)) over `axis`. */
export function softmax(x: ArrayLike, options: SoftmaxOptions = {}): Array {
  const { axis, where, shifted } = softmaxOperands('nn.softmax', x, options);
  const unnormalized = jnp.exp(shifted);
  const result = jnp.divide(unnormalized, jnp.sum(unnormalized, { axis, where, keepdims: true }));
  return where === null ? result : jnp.where(where, result, 0);
}

/** jax.nn.log_softmax: (x - max) - log(sum(exp(x - max))) over `axis`. */
export function logSoftmax(x: ArrayLike, options: SoftmaxOptions = {}): Array {
  const { axis, where, shifted } = softmaxOperands('nn.logSoftmax', x, options);
  const result = jnp.subtract(shifted, jnp.log(jnp.sum(jnp.exp(shifted), { axis, where, keepdims: true })));
  return where === null ? result : jnp.where(where, result, -Infinity);
}

export interface StandardizeOptions {
  axis?: Axis;
  /** Use this mean instead of x's. */
  mean?: ArrayLike | null;
  /** Use this variance instead of x's. */
  variance?: ArrayLike | null;
  epsilon?: ArrayLike;
  /** Elements to use for the mean and variance. */
  where?: ArrayLike | null;
  /** 'fast' (the default): E[x²] - E[x]², clipped at 0; 'stable': E[(x - E[x])²]. */
  algorithm?: 'fast' | 'stable';
}

/** jax.nn.standardize: (x - mean) * rsqrt(variance + epsilon) over `axis` (default -1). */
export function standardize(x: ArrayLike, options: StandardizeOptions = {}): Array {
  const fn = 'nn.standardize';
  checkOptions(fn, options, ['axis', 'mean', 'variance', 'epsilon', 'where', 'algorithm']);
  const o = options ?? {};
  const a = toArray(fn, x);
  const axis = o.axis === undefined ? -1 : o.axis;
  checkAxes(fn, axis, a.ndim);
  const where = o.where ?? null;
  const algorithm = o.algorithm ?? 'fast';
  if (algorithm !== 'fast' && algorithm !== 'stable') throw new ValueError(`${fn}: unknown algorithm ${show(algorithm)}; expected 'fast' or 'stable'`);
  const mean = o.mean ?? jnp.mean(a, { axis, keepdims: true, where });
  let variance = o.variance ?? null;
  if (variance === null) {
    if (algorithm === 'stable') {
      variance = jnp.mean(jnp.square(jnp.subtract(a, mean)), { axis, keepdims: true, where });
    } else {
      // E[x²] - E[x]² can come out slightly negative, which rsqrt must not see
      variance = jnp.clip(jnp.subtract(jnp.mean(jnp.square(a), { axis, keepdims: true, where }), jnp.square(mean)), 0);
    }
  }
  return jnp.multiply(jnp.subtract(a, mean), lax.rsqrt(jnp.add(variance, o.epsilon ?? 1e-5)));
}

/**
 * jax.nn.one_hot: 1 where x equals the index along a new axis of size
 * numClasses (out-of-range indices give all zeros). Integer input only.
 */
export function oneHot(x: ArrayLike, numClasses: number, options: { dtype?: DType; axis?: number } = {}): Array {
  const fn = 'nn.oneHot';
  checkOptions(fn, options, ['dtype', 'axis']);
  const a = toArray(fn, x);
  if (!isInteger(a.dtype)) {
    throw new TypeError(`${fn}: x must be an integer array of class indices, got dtype ${a.dtype} (cast it with .astype('int32'))`);
  }
  if (typeof numClasses !== 'number' || !Number.isInteger(numClasses) || numClasses < 0) {
    throw new TypeError(`${fn}: numClasses must be a non-negative integer, got ${show(numClasses)}`);
  }
  const dtype = options?.dtype === undefined ? 'float32' : checkUserDType(fn, options.dtype);
  const axis = normalizeAxis(fn, options?.axis ?? -1, a.ndim + 1);
  const lhs = lax.expandDims(a, [axis]);
  const rhsShape = globalThis.Array.from({ length: a.ndim + 1 }, (_, i) => (i === axis ? numClasses : 1));
  const rhs = lax.broadcastedIota(a.dtype, rhsShape, axis);
  return lax.convertElementType(jnp.equal(lhs, rhs), dtype);
}
