// jax.random's samplers built from a uniform draw (exponential, laplace,
// logistic, cauchy, pareto, weibullMin), from normals (maxwell) or bernoulli
// (rademacher), and choice, each following jax/_src/random/core.py (JAX
// 0.10.2) operation for operation, with XLA's float32 log/log1p from
// xla-math.ts, so that a key gives JAX's samples. Bodies are jitted with
// shape and dtype static, as JAX's are.
import type { Array, ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType, isFloating, isInteger } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { checkShape, normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { topK } from '../lax/sort.js';
import * as jnp from '../numpy/index.js';
import { jit } from '../transforms/jit.js';
import {
  FINFO, FloatMath, type FloatDType, bernoulli, checkParamShapes, floatDtype, gumbelIn, modeOption, normalIn, permutation, randint, uniformIn,
} from './distributions.js';
import { type Key, checkKey } from './keys.js';
import { fma, log1p, log32 } from './xla-math.js';

/** log in the compute dtype as XLA's CPU backend computes it, rounded to `dtype`. */
export function logIn(f: FloatMath, x: Array): Array {
  return f.round(f.compute === 'float32' ? log32(x) : lax.log(x));
}

export function log1pIn(f: FloatMath, x: Array): Array {
  return f.round(log1p(x));
}

/** JAX's _exponential: -log1p(-u), u uniform in [0, 1). */
export function exponentialIn(f: FloatMath, key: Key, shape: number[]): Array {
  const u = uniformIn(f, key, shape, f.full(0), f.full(1));
  return lax.neg(log1pIn(f, lax.neg(u)));
}

type Sampler = (f: FloatMath, key: Key, shape: number[]) => Array;

function simpleSampler(name: string, sample: Sampler) {
  const body = jit((key: Key, shape: number[], dtype: FloatDType) => {
    const f = new FloatMath(dtype);
    return f.out(sample(f, key, shape));
  }, { staticArgnums: [1, 2] });
  return (key: Key, shape: number | number[] = [], options: { dtype?: DType } = {}): Array => {
    const fn = `random.${name}`;
    checkOptions(fn, options, ['dtype']);
    return body(checkKey(fn, key), checkShape(fn, shape), floatDtype(fn, options.dtype));
  };
}

/** Standard exponential floats: -log1p(-u). */
export const exponential = simpleSampler('exponential', exponentialIn);

/** Standard Laplace floats: sign(u)·log1p(-|u|), u uniform in (-1, 1). */
export const laplace = simpleSampler('laplace', (f, key, shape) => {
  const u = uniformIn(f, key, shape, f.full(-1 + 2 ** -(f.nmant + 1)), f.full(1));
  return f.mul(lax.sign(u), log1pIn(f, lax.neg(lax.abs(u))));
});

/** Standard logistic floats: log(u) - log1p(-u), u uniform in [tiny, 1). */
export const logistic = simpleSampler('logistic', (f, key, shape) => {
  const u = uniformIn(f, key, shape, f.full(f.tiny), f.full(1));
  return f.sub(logIn(f, u), log1pIn(f, lax.neg(u)));
});

/** Standard Cauchy floats: tan(π(u - 1/2)), u uniform in [eps, 1). */
export const cauchy = simpleSampler('cauchy', (f, key, shape) => {
  const u = uniformIn(f, key, shape, f.full(2 ** -f.nmant), f.full(1));
  return f.round(lax.tan(f.mul(f.sub(u, 0.5), roundPi(f.dtype))));
});

function roundPi(dtype: FloatDType): number {
  return dtype === 'float64' ? Math.PI : dtype === 'float32' ? Math.fround(Math.PI) : toArray('random', Math.PI, 'pi', dtype).item() as number;
}

/** Maxwell floats: the norm of three standard normals. */
export const maxwell = simpleSampler('maxwell', (f, key, shape) => {
  const x = normalIn(f, key, [...shape, 3]);
  const parts = [0, 1, 2].map((i) => lax.reshape(lax.sliceInDim(x, i, i + 1, 1, -1 + x.ndim), shape));
  // XLA's reduction loop contracts acc + x·x into an FMA
  let sum = f.mul(parts[0]!, parts[0]!);
  for (const p of parts.slice(1)) sum = f.round(fma(p, p, sum, f.compute));
  return f.round(lax.sqrt(sum));
});

/** A float parameter converted to `dtype` and checked against `shape` (default: its own shape). */
function parameter(fn: string, name: string, value: ArrayLike, shape: number | number[] | null | undefined, extra: Record<string, Array> = {}): [Array, number[]] {
  const x = toArray(fn, value, name);
  let s: number[];
  if (shape === undefined || shape === null) {
    s = [...x.shape];
  } else {
    s = checkShape(fn, shape);
    checkParamShapes(fn, s, { [name]: x, ...extra });
  }
  return [x, s];
}

const paretoJit = jit((key: Key, b: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const e = exponentialIn(f, key, shape);
  return f.out(f.round(lax.exp(f.div(e, f.cast(b)))));
}, { staticArgnums: [2, 3] });

/** Pareto floats with shape parameter b: exp(e / b), e standard exponential. */
export function pareto(key: Key, b: ArrayLike, shape?: number | number[] | null, options: { dtype?: DType } = {}): Array {
  const fn = 'random.pareto';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const [bb, s] = parameter(fn, 'b', typeof b === 'number' ? toArray(fn, b, 'b', dtype) : b, shape);
  return paretoJit(k, bb, s, dtype);
}

const weibullJit = jit((key: Key, scale: Array, concentration: Array, shape: number[], dtype: FloatDType) => {
  const f = new FloatMath(dtype);
  const u = uniformIn(f, key, shape, f.full(0), f.full(1));
  const e = lax.neg(log1pIn(f, lax.neg(u)));
  return f.out(f.mul(f.round(jnp.power(e, f.div(f.full(1), f.cast(concentration)))), f.cast(scale)));
}, { staticArgnums: [3, 4] });

/** Weibull floats: (-log1p(-u))^(1/concentration)·scale (the inverse CDF). */
export function weibullMin(key: Key, scale: ArrayLike, concentration: ArrayLike, shape: number | number[] = [], options: { dtype?: DType } = {}): Array {
  const fn = 'random.weibullMin';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = floatDtype(fn, options.dtype);
  const param = (v: ArrayLike, name: string) => toArray(fn, v, name, typeof v === 'number' ? dtype : undefined);
  return weibullJit(k, param(scale, 'scale'), param(concentration, 'concentration'), checkShape(fn, shape), dtype);
}

/** -1 or +1 with equal probability, as integers of `dtype` (default int32) or floats. */
export function rademacher(key: Key, shape: number | number[] = [], options: { dtype?: DType } = {}): Array {
  const fn = 'random.rademacher';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = options.dtype === undefined ? 'int32' : checkUserDType(fn, options.dtype);
  const b = lax.convertElementType(bernoulli(k, 0.5, checkShape(fn, shape)), dtype);
  return lax.convertElementType(jnp.subtract(jnp.multiply(b, 2), 1), dtype);
}

// ---- choice ----

export interface ChoiceOptions { shape?: number | number[]; replace?: boolean; p?: ArrayLike | null; axis?: number; mode?: 'low' | 'high' }

const cumulativeSample = jit((key: Key, p: Array, shape: number[]) => {
  const f = new FloatMath(p.dtype as FloatDType);
  const cumulative = jnp.cumsum(p);
  const total = lax.sliceInDim(cumulative, p.shape[0]! - 1, p.shape[0]!, 1, 0);
  const u = uniformIn(f, key, shape, f.full(0), f.full(1));
  const r = f.mul(lax.reshape(total, []), f.sub(f.full(1), u));
  return lax.convertElementType(jnp.searchsorted(cumulative, r), 'int32');
}, { staticArgnums: [2] });

const gumbelTopK = jit((key: Key, p: Array, draws: number, mode: 'low' | 'high') => {
  const f = new FloatMath(p.dtype as FloatDType);
  const g = f.add(gumbelIn(f, key, [p.shape[0]!], mode), logIn(f, p));
  return topK(g, draws)[1];
}, { staticArgnums: [2, 3] });

/**
 * A random sample of `shape` from a's elements along `axis` (or from
 * arange(a) for an integer a), with or without replacement, uniformly or with
 * probabilities p (JAX's algorithms: randint, cumsum + searchsorted of a
 * uniform, a permutation, or Gumbel top-k without replacement).
 */
export function choice(key: Key, a: ArrayLike, options: ChoiceOptions = {}): Array {
  const fn = 'random.choice';
  checkOptions(fn, options, ['shape', 'replace', 'p', 'axis', 'mode']);
  const k = checkKey(fn, key);
  const shape = checkShape(fn, options.shape ?? []);
  const replace = options.replace ?? true;
  if (typeof replace !== 'boolean') throw new TypeError(`${fn}: replace must be a boolean, got ${show(replace)}`);
  const mode = modeOption(fn, options.mode);
  const arr = typeof a === 'number' ? null : toArray(fn, a, 'a');
  let nInputs: number;
  let axis = 0;
  if (arr === null || arr.ndim === 0) {
    const n = arr === null ? a : arr.item();
    if (typeof n !== 'number' || !Number.isInteger(n) || (arr !== null && !isInteger(arr.dtype))) {
      throw new TypeError(`${fn}: a must be an integer or an array of at least one axis, got ${arr === null ? show(a) : `a ${arr.dtype} scalar`}`);
    }
    nInputs = n;
  } else {
    axis = normalizeAxis(fn, options.axis ?? 0, arr.ndim);
    nInputs = arr.shape[axis]!;
  }
  const draws = shape.reduce((x, y) => x * y, 1);
  const outShape = arr === null || arr.ndim === 0 ? shape : [...arr.shape.slice(0, axis), ...shape, ...arr.shape.slice(axis + 1)];
  if (draws === 0) return jnp.zeros(outShape, { dtype: arr === null || arr.ndim === 0 ? 'int32' : arr.dtype });
  if (nInputs <= 0) throw new ValueError(`${fn}: a must be greater than 0 unless no samples are taken, got ${nInputs} inputs`);
  if (!replace && draws > nInputs) {
    throw new ValueError(`${fn}: cannot take a larger sample (size ${draws}) than population (size ${nInputs}) when replace is false`);
  }
  const take = (ind: Array) => (arr === null || arr.ndim === 0 ? ind : jnp.take(arr, ind, { axis }));
  let result: Array;
  if (options.p === undefined || options.p === null) {
    if (replace) {
      result = take(randint(k, shape, 0, nInputs));
    } else {
      const permuted = permutation(k, arr === null || arr.ndim === 0 ? nInputs : arr, { axis });
      result = lax.sliceInDim(permuted, 0, draws, 1, arr === null || arr.ndim === 0 ? 0 : axis);
    }
  } else {
    let p = toArray(fn, options.p, 'p');
    if (!isFloating(p.dtype)) p = lax.convertElementType(p, 'float32');
    if (p.ndim !== 1 || p.shape[0] !== nInputs) {
      throw new ValueError(`${fn}: p must be None or a 1D vector with the same size as a.shape[axis]. p has shape ${show(p.shape)} and a.shape[axis] is ${nInputs}`);
    }
    result = take(replace ? cumulativeSample(k, p, shape) : gumbelTopK(k, p, draws, mode));
  }
  return jnp.reshape(result, outShape);
}
