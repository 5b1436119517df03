// Samplers of jax.random, each following jax/_src/random/core.py operation
// for operation so that the same key gives the same bits, integers and
// floats as JAX on the CPU (xla-math.ts has the special functions, done the
// way XLA does them). Each sampler's body is jitted with its shape and dtype
// static, as JAX's are: compiled once per signature eagerly, inlined under an
// outer jit/vmap/grad.
//
// JAX computes 16-bit floats in float32 and rounds after every op (XLA's
// float normalization); jaxon's fused kernels keep float32 between ops, so
// the samplers do that arithmetic in float32 and round explicitly
// (FloatMath.round), giving the same values eagerly and under jit.
import type { Array, ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType, integerRange, isFloating, isInteger, itemsize, roundToDType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { broadcastShapes, checkShape, normalizeAxis, shapesEqual } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import * as jnp from '../numpy/index.js';
import { jit } from '../transforms/jit.js';
import { type Key, checkKey } from './keys.js';
import { sortKeyVal } from '../lax/sort.js';
import { randomBits, splitKey } from './threefry.js';
import { erf32, erfInv, fma, log1p, log32 } from './xla-math.js';

export type FloatDType = 'float16' | 'bfloat16' | 'float32' | 'float64';

/** finfo(dtype).nmant and .tiny (the smallest normal number). */
export const FINFO: Record<FloatDType, { nmant: number; tiny: number }> = {
  float16: { nmant: 10, tiny: 2 ** -14 },
  bfloat16: { nmant: 7, tiny: 2 ** -126 },
  float32: { nmant: 23, tiny: 2 ** -126 },
  float64: { nmant: 52, tiny: 2 ** -1022 },
};

/** Arithmetic in a float dtype, as XLA rounds it (see the header). */
export class FloatMath {
  readonly compute: 'float32' | 'float64';
  readonly nmant: number;
  readonly tiny: number;
  constructor(readonly dtype: FloatDType) {
    this.compute = dtype === 'float64' ? 'float64' : 'float32';
    ({ nmant: this.nmant, tiny: this.tiny } = FINFO[dtype]);
  }

  /** Rounds a compute-dtype value to the nearest value of `dtype`. */
  round(x: Array): Array {
    if (this.dtype === 'bfloat16') return lax.reducePrecision(x, 8, 7);
    if (this.dtype !== 'float16') return x;
    // reduce_precision flushes float16's subnormals; below 2^-14 round to a multiple of 2^-24 instead
    const subnormal = lax.mul(lax.round(lax.mul(x, 2 ** 24), 'to_nearest_even'), 2 ** -24);
    return lax.select(lax.lt(lax.abs(x), 2 ** -14), subnormal, lax.reducePrecision(x, 5, 10));
  }

  /** A value converted to `dtype`, held in the compute dtype. */
  cast(x: Array): Array {
    return this.round(lax.convertElementType(x, this.compute));
  }

  /** A scalar constant of `dtype` (exact in the compute dtype). */
  full(value: number): Array {
    return toArray('random', roundToDType(value, this.dtype), 'constant', this.compute);
  }

  add(x: Array, y: Array | number): Array {
    return this.round(jnp.add(x, y));
  }
  sub(x: Array, y: Array | number): Array {
    return this.round(jnp.subtract(x, y));
  }
  mul(x: Array, y: Array | number): Array {
    return this.round(jnp.multiply(x, y));
  }
  div(x: Array, y: Array | number): Array {
    return this.round(jnp.divide(x, y));
  }

  /** nextafter taken in `dtype` itself (a float32 step is smaller than a 16-bit float's). */
  nextafter(x: Array, toward: number): Array {
    if (this.compute === this.dtype) return lax.nextafter(x, toward);
    return lax.convertElementType(lax.nextafter(lax.convertElementType(x, this.dtype), toward), this.compute);
  }

  /** The result in `dtype` (exact: values are already rounded). */
  out(x: Array): Array {
    return lax.convertElementType(x, this.dtype);
  }
}

/**
 * Floats in [0, 1) with nmant random mantissa bits: JAX sets the exponent of
 * the top bits to that of 1.0 and subtracts 1; the same values are the top
 * bits times 2^-nmant, which needs no bitcast.
 */
export function unitFloats(key: Key, shape: number[], dtype: FloatDType): Array {
  const scaled = (m: Array, compute: 'float32' | 'float64', nmant: number) => lax.mul(lax.convertElementType(m, compute), 2 ** -nmant);
  switch (dtype) {
    case 'float32':
      return scaled(lax.div(randomBits(key, 32, shape), 2 ** 9), 'float32', 23);
    case 'float16':
      return scaled(lax.div(randomBits(key, 16, shape), 2 ** 6), 'float32', 10);
    case 'bfloat16':
      // fewer than 8 mantissa bits: JAX draws 8 bits and keeps the top 7
      return scaled(lax.div(randomBits(key, 8, shape), 2), 'float32', 7);
    case 'float64': {
      const [high, low] = randomBits(key, 64, shape);
      const mantissa = lax.add(lax.mul(lax.convertElementType(high, 'float64'), 2 ** 20), lax.convertElementType(lax.div(low, 2 ** 12), 'float64'));
      return lax.mul(mantissa, 2 ** -52);
    }
  }
}

/** JAX's _uniform in the compute dtype; minval/maxval already cast. */
export function uniformIn(f: FloatMath, key: Key, shape: number[], minval: Array, maxval: Array): Array {
  const floats = unitFloats(key, shape, f.dtype);
  const span = f.sub(maxval, minval);
  // XLA fuses floats * span + minval into one FMA; 16-bit floats round between the two
  const scaled = f.compute === f.dtype ? fma(floats, span, minval, f.compute) : f.add(f.mul(floats, span), minval);
  return jnp.maximum(minval, scaled);
}

export function normalIn(f: FloatMath, key: Key, shape: number[]): Array {
  // the open interval (-1, 1): the float after -1, and 1
  const u = uniformIn(f, key, shape, f.full(-(1 - 2 ** -(f.nmant + 1))), f.full(1));
  return f.mul(f.round(erfInv(u)), roundToDType(Math.SQRT2, f.dtype));
}

export function gumbelIn(f: FloatMath, key: Key, shape: number[], mode: 'low' | 'high'): Array {
  const log = (x: Array) => (f.compute === 'float32' ? log32(x) : lax.log(x));
  if (mode === 'low') {
    const u = uniformIn(f, key, shape, f.full(f.tiny), f.full(1));
    return lax.neg(f.round(log(lax.neg(f.round(log(u))))));
  }
  const both = uniformIn(f, key, [2, ...shape], f.full(0), f.full(1));
  const [high, low] = [0, 1].map((i) => lax.reshape(lax.sliceInDim(both, i, i + 1, 1, 0), shape)) as [Array, Array];
  const x = lax.select(lax.ge(high, 0.5), high, f.add(f.add(high, f.mul(low, 2 ** -f.nmant)), f.tiny));
  return lax.neg(f.round(log(lax.neg(f.round(log1p(lax.neg(x)))))));
}

// ---- argument checks ----

export function floatDtype(fn: string, dtype: unknown): FloatDType {
  if (dtype === undefined || dtype === null) return 'float32';
  const d = checkUserDType(fn, dtype);
  if (!isFloating(d)) throw new ValueError(`${fn}: dtype must be a float dtype, got ${d}`);
  return d as FloatDType;
}

/** JAX's _check_shape: parameters must broadcast to exactly the shape argument. */
export function checkParamShapes(fn: string, shape: number[], params: Record<string, Array>): void {
  const entries = Object.entries(params);
  let broadcast: number[] | null;
  try {
    broadcast = broadcastShapes(fn, shape, ...entries.map(([, a]) => a.shape));
  } catch {
    broadcast = null;
  }
  if (broadcast === null || !shapesEqual(broadcast, shape)) {
    const names = entries.map(([name, a]) => `${name} shape ${show(a.shape)}`).join(', ');
    const result = broadcast === null ? 'they cannot be broadcast together' : `broadcasting gives ${show(broadcast)}`;
    throw new ValueError(`${fn}: ${names} must broadcast to the shape argument ${show(shape)}, but ${result}`);
  }
}

export function modeOption(fn: string, mode: unknown): 'low' | 'high' {
  if (mode === undefined || mode === null) return 'low';
  if (mode !== 'low' && mode !== 'high') throw new ValueError(`${fn}: mode must be 'low' or 'high', got ${show(mode)}`);
  return mode;
}

// ---- uniform, normal, truncatedNormal, gumbel ----

export interface UniformOptions { dtype?: DType; minval?: ArrayLike; maxval?: ArrayLike }

const uniformJit = jit((key: Key, minval: Array, maxval: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  return f.out(uniformIn(f, key, shape, f.cast(minval), f.cast(maxval)));
}, { staticArgnums: [3, 4] });

/** Uniform floats in [minval, maxval) (defaults 0 and 1; arrays broadcast to `shape`). */
export function uniform(key: Key, shape: number | number[] = [], options: UniformOptions = {}): Array {
  const fn = 'random.uniform';
  checkOptions(fn, options, ['dtype', 'minval', 'maxval']);
  const k = checkKey(fn, key);
  const s = checkShape(fn, shape);
  const dtype = floatDtype(fn, options.dtype);
  const minval = toArray(fn, options.minval ?? 0, 'minval');
  const maxval = toArray(fn, options.maxval ?? 1, 'maxval');
  checkParamShapes(fn, s, { minval, maxval });
  return uniformJit(k, minval, maxval, s, dtype);
}

const normalJit = jit((key: Key, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  return f.out(normalIn(f, key, shape));
}, { staticArgnums: [1, 2] });

/** Standard normal floats: sqrt(2)·erf⁻¹(u) for u uniform in (-1, 1). */
export function normal(key: Key, shape: number | number[] = [], options: { dtype?: DType } = {}): Array {
  const fn = 'random.normal';
  checkOptions(fn, options, ['dtype']);
  return normalJit(checkKey(fn, key), checkShape(fn, shape), floatDtype(fn, options.dtype));
}

const truncatedNormalJit = jit((key: Key, lower: Array, upper: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const sqrt2 = roundToDType(Math.SQRT2, dtype);
  const lo = f.cast(lower);
  const hi = f.cast(upper);
  // 16-bit floats: XLA computes erf in float32 and rounds
  const erf = (x: Array) => (f.compute === 'float32' ? erf32(x) : lax.erf(x));
  const a = f.round(erf(f.div(lo, sqrt2)));
  const b = f.round(erf(f.div(hi, sqrt2)));
  const out = f.mul(f.round(erfInv(uniformIn(f, key, shape, a, b))), sqrt2);
  // rounding can land on a bound; keep to the open interval
  return f.out(jnp.minimum(f.nextafter(hi, -Infinity), jnp.maximum(f.nextafter(lo, Infinity), out)));
}, { staticArgnums: [3, 4] });

/**
 * Standard normal floats truncated to (lower, upper). `shape` defaults to the
 * broadcast shape of the bounds.
 */
export function truncatedNormal(key: Key, lower: ArrayLike, upper: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const fn = 'random.truncatedNormal';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const lo = toArray(fn, lower, 'lower');
  const hi = toArray(fn, upper, 'upper');
  let s: number[];
  if (shape === undefined || shape === null) {
    s = broadcastShapes(fn, lo.shape, hi.shape);
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { lower: lo, upper: hi });
  }
  return truncatedNormalJit(k, lo, hi, s, dtype);
}

const gumbelJit = jit((key: Key, shape: number[], dtype: FloatDType, mode: 'low' | 'high') => {
  const f = new FloatMath(dtype);
  return f.out(gumbelIn(f, key, shape, mode));
}, { staticArgnums: [1, 2, 3] });

/** Standard Gumbel floats: -log(-log(u)). mode 'high' draws twice the bits for a wider range. */
export function gumbel(key: Key, shape: number | number[] = [], options: { dtype?: DType; mode?: 'low' | 'high' } = {}): Array {
  const fn = 'random.gumbel';
  checkOptions(fn, options, ['dtype', 'mode']);
  return gumbelJit(checkKey(fn, key), checkShape(fn, shape), floatDtype(fn, options.dtype), modeOption(fn, options.mode));
}

// ---- bernoulli, categorical ----

const bernoulliJit = jit((key: Key, p: Array, shape: number[], mode: 'low' | 'high') => {
  const f = new FloatMath(p.dtype as FloatDType);
  const prob = f.cast(p);
  if (mode === 'low') return lax.lt(uniformIn(f, key, shape, f.full(0), f.full(1)), jnp.broadcastTo(prob, shape));
  const both = uniformIn(f, key, [2, ...shape], f.full(0), f.full(1));
  const [u1, u2] = [0, 1].map((i) => lax.reshape(lax.sliceInDim(both, i, i + 1, 1, 0), shape)) as [Array, Array];
  // u2 fills in the bits below u1's resolution
  return jnp.less(f.mul(u2, 2 ** -f.nmant), f.sub(prob, u1));
}, { staticArgnums: [2, 3] });

/** Booleans that are true with probability p (a float; its dtype is the sampling dtype). */
export function bernoulli(key: Key, p: ArrayLike = 0.5, shape?: number | number[] | null, options: { mode?: 'low' | 'high' } = {}): Array {
  const fn = 'random.bernoulli';
  checkOptions(fn, options, ['mode']);
  const k = checkKey(fn, key);
  // a JS number is a Python float here: in JS 1 and 1.0 are the same number
  const prob = typeof p === 'number' ? toArray(fn, p, 'p', 'float32') : toArray(fn, p, 'p');
  if (!isFloating(prob.dtype)) throw new TypeError(`${fn}: probability p must have a floating dtype, got ${prob.dtype}`);
  let s: number[];
  if (shape === undefined || shape === null) {
    s = [...prob.shape];
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { p: prob });
  }
  return bernoulliJit(k, prob, s, modeOption(fn, options.mode));
}

const categoricalJit = jit((key: Key, logits: Array, prefix: number[], logitsShape: number[], axis: number, mode: 'low' | 'high') => {
  const f = new FloatMath(logits.dtype as FloatDType);
  const g = gumbelIn(f, key, [...prefix, ...logitsShape], mode);
  const l = f.cast(logits);
  const expanded = prefix.length ? lax.reshape(l, [...prefix.map(() => 1), ...l.shape]) : l;
  return jnp.argmax(f.add(g, expanded), { axis: prefix.length + axis });
}, { staticArgnums: [2, 3, 4, 5] });

export interface CategoricalOptions { axis?: number; shape?: number | number[] | null; mode?: 'low' | 'high' }

/**
 * Samples from categorical distributions given unnormalized log
 * probabilities along `axis` (the Gumbel-max trick, as JAX samples with
 * replacement). Returns int32 indices of shape `shape` (default: logits'
 * shape without `axis`).
 */
export function categorical(key: Key, logits: ArrayLike, options: CategoricalOptions = {}): Array {
  const fn = 'random.categorical';
  checkOptions(fn, options, ['axis', 'shape', 'mode']);
  const k = checkKey(fn, key);
  const l = toArray(fn, logits, 'logits');
  if (!isFloating(l.dtype)) throw new TypeError(`${fn}: logits must have a float dtype, got ${l.dtype}`);
  if (l.ndim === 0) throw new ValueError(`${fn}: logits must have at least one axis, got a scalar`);
  const axis = normalizeAxis(fn, options.axis ?? -1, l.ndim);
  const batchShape = l.shape.filter((_, i) => i !== axis);
  let s = batchShape;
  if (options.shape !== undefined && options.shape !== null) {
    s = checkShape(fn, options.shape);
    const broadcast = broadcastShapes(fn, s, batchShape);
    if (!shapesEqual(broadcast, s)) {
      throw new ValueError(`${fn}: shape ${show(s)} must be a broadcast of the logits' batch shape ${show(batchShape)} (logits shape ${show(l.shape)} without axis ${axis})`);
    }
  }
  const prefix = s.slice(0, s.length - batchShape.length);
  const logitsShape = s.slice(s.length - batchShape.length);
  logitsShape.splice(axis, 0, l.shape[axis]!);
  return categoricalJit(k, l, prefix, logitsShape, axis, modeOption(fn, options.mode));
}

// ---- randint ----

/** Converts integers to `dtype`, clipping to the values both dtypes hold (JAX's _convert_and_clip_integer). */
function convertAndClip(x: Array, dtype: DType): Array {
  const [dlo, dhi] = integerRange(dtype);
  const [xlo, xhi] = integerRange(x.dtype);
  return lax.convertElementType(jnp.clip(x, Math.max(dlo, xlo), Math.min(dhi, xhi)), dtype);
}

const randintJit = jit((key: Key, minval: Array, maxval: Array, shape: number[], dtype: DType) => {
  if (!isInteger(minval.dtype)) minval = lax.convertElementType(minval, 'int32');
  if (!isInteger(maxval.dtype)) maxval = lax.convertElementType(maxval, 'int32');
  const [, dhi] = integerRange(dtype);
  // maxval past dtype's range (e.g. 256 for uint8) widens the span by one
  const maxvalOutOfRange = lax.gt(maxval, convertAndClip(toArray('random.randint', dhi, 'maxval', dtype), maxval.dtype));
  const lo = jnp.broadcastTo(convertAndClip(minval, dtype), shape);
  const hi = jnp.broadcastTo(convertAndClip(maxval, dtype), shape);
  const unsigned = 'uint32';
  // 32 random bits twice over, so the modulus below is only slightly biased
  const keys = splitKey(key, [2]);
  const [k1, k2] = [0, 1].map((i) => lax.reshape(lax.sliceInDim(keys, i, i + 1, 1, 0), [2])) as [Array, Array];
  const higherBits = randomBits(k1, 32, shape);
  const lowerBits = randomBits(k2, 32, shape);
  let span = lax.convertElementType(lax.sub(hi, lo), unsigned);
  span = lax.select(lax.le(hi, lo), lax.broadcastInDim(lax.convertElementType(1, unsigned), shape, []), span);
  span = lax.select(jnp.logicalAnd(jnp.broadcastTo(maxvalOutOfRange, shape), lax.gt(hi, lo)), lax.add(span, 1), span);
  // (2^32 mod span), from (2^16 mod span)² to stay in 32 bits
  let multiplier = lax.rem(lax.broadcastInDim(lax.convertElementType(2 ** 16, unsigned), shape, []), span);
  multiplier = lax.rem(lax.mul(multiplier, multiplier), span);
  const offset = lax.rem(lax.add(lax.mul(lax.rem(higherBits, span), multiplier), lax.rem(lowerBits, span)), span);
  return lax.add(lo, lax.convertElementType(offset, dtype));
}, { staticArgnums: [3, 4] });

/** An integer bound: JS numbers must fit int32 (JAX's rule with x64 off). */
function integerBound(fn: string, value: ArrayLike, arg: string): Array {
  if (typeof value === 'number' && Number.isInteger(value)) return toArray(fn, value, arg, 'int32');
  return toArray(fn, value, arg);
}

/** Uniform integers in [minval, maxval) of an integer dtype (default int32). */
export function randint(key: Key, shape: number | number[], minval: ArrayLike, maxval: ArrayLike, options: { dtype?: DType } = {}): Array {
  const fn = 'random.randint';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const s = checkShape(fn, shape);
  const dtype = options.dtype === undefined ? 'int32' : checkUserDType(fn, options.dtype);
  if (!isInteger(dtype)) throw new TypeError(`${fn}: randint only accepts integer dtypes, got ${dtype}`);
  let lo = integerBound(fn, minval, 'minval');
  let hi = integerBound(fn, maxval, 'maxval');
  checkParamShapes(fn, s, { minval: lo, maxval: hi });
  if (itemsize(dtype) < 4) {
    // 8- and 16-bit integers are sampled in 32 bits, bounds clipped to the dtype's range (maxval one past it)
    const [dlo, dhi] = integerRange(dtype);
    lo = jnp.clip(lax.convertElementType(lo, 'int32'), dlo, dhi);
    hi = jnp.clip(lax.convertElementType(hi, 'int32'), dlo, dhi + 1);
    return lax.convertElementType(randintJit(k, lo, hi, s, 'int32'), dtype);
  }
  return randintJit(k, lo, hi, s, dtype);
}

// ---- permutation ----

const splitForShuffle = jit((key: Key) => {
  const keys = splitKey(key, [2]);
  return [0, 1].map((i) => lax.reshape(lax.sliceInDim(keys, i, i + 1, 1, 0), [2])) as [Array, Array];
});
const sortKeysJit = jit((key: Key, shape: number[]) => randomBits(key, 32, shape), { staticArgnums: [1] });

/**
 * JAX's _shuffle: sort by fresh random 32-bit keys, stably, for enough rounds
 * that all keys differ with high probability (ceil(3·ln n / ln(2^32 - 1))).
 */
function shuffle(key: Key, x: Array, axis: number): Array {
  const rounds = Math.ceil((3 * Math.log(Math.max(1, x.size))) / Math.log(2 ** 32 - 1));
  let k = key;
  for (let r = 0; r < rounds; r++) {
    const [next, subkey] = splitForShuffle(k);
    x = sortKeyVal(sortKeysJit(subkey!, [...x.shape]), x, { dimension: axis })[1];
    k = next!;
  }
  return x;
}

export interface PermutationOptions { axis?: number; independent?: boolean }

/**
 * A random permutation of arange(x) (x an integer) or of x's elements along
 * `axis`; `independent` shuffles each slice along `axis` on its own.
 */
export function permutation(key: Key, x: ArrayLike, options: PermutationOptions = {}): Array {
  const fn = 'random.permutation';
  checkOptions(fn, options, ['axis', 'independent']);
  const k = checkKey(fn, key);
  if (options.independent !== undefined && typeof options.independent !== 'boolean') {
    throw new TypeError(`${fn}: independent must be a boolean, got ${show(options.independent)}`);
  }
  const xa = typeof x === 'number' ? null : toArray(fn, x, 'x');
  if (xa === null || xa.ndim === 0) {
    let n: number;
    if (xa === null) {
      n = x as number;
    } else {
      if (!isInteger(xa.dtype)) throw new TypeError(`${fn}: x must be an integer or at least 1-dimensional, got a ${xa.dtype} scalar (arrays made from JS numbers are float32: pass { dtype: 'int32' }, an Int32Array or jnp.arange)`);
      n = xa.item() as number;
    }
    if (!Number.isInteger(n)) throw new TypeError(`${fn}: x must be an integer or at least 1-dimensional, got ${n}`);
    normalizeAxis(fn, options.axis ?? 0, 1);
    return shuffle(k, jnp.arange(Math.max(0, n), null, null, { dtype: 'int32' }), 0);
  }
  const axis = normalizeAxis(fn, options.axis ?? 0, xa.ndim);
  if (options.independent || xa.ndim === 1) {
    const out = shuffle(k, xa, axis);
    return out === xa ? lax.copy(xa) : out; // a fresh array even when there is nothing to shuffle
  }
  const order = shuffle(k, jnp.arange(xa.shape[axis]!, null, null, { dtype: 'int32' }), 0);
  return jnp.take(xa, order, { axis, mode: 'clip' });
}

