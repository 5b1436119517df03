// jax.nn.initializers (jax/_src/nn/initializers.py): functions
// `init(key, shape, dtype = 'float32')` that make parameter arrays.
// varianceScaling follows JAX's fan rules (fan_in = shape[inAxis] x receptive
// field, fan_out = shape[outAxis] x receptive field, the receptive field
// being the product of the other dimensions) and, for 'truncated_normal',
// divides by 0.87962566103423978, the stddev of a standard normal truncated
// to (-2, 2); the samples come from lib/random, bit-identical to JAX's.
import type { Array } from '../core/array.js';
import { type DType, checkUserDType, isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { tidy } from '../core/memory.js';
import { checkShape, normalizeAxis } from '../core/shape.js';
import * as jnp from '../numpy/index.js';
import * as random from '../random/index.js';

/** An initializer: a key, a shape and a dtype (default float32) to an array. */
export type Initializer = (key: Array, shape: number | number[], dtype?: DType) => Array;

export type VarianceScalingMode = 'fan_in' | 'fan_out' | 'fan_avg' | 'fan_geo_avg';
export type VarianceScalingDistribution = 'truncated_normal' | 'normal' | 'uniform';

export interface FanOptions {
  /** The input axis or axes (default -2). */
  inAxis?: number | number[];
  /** The output axis or axes (default -1). */
  outAxis?: number | number[];
  /** Batch axes, excluded from the fans (default none). */
  batchAxis?: number | number[];
  /** The default dtype of the initializer (float32 if not given). */
  dtype?: DType;
}

function initDtype(fn: string, dtype: unknown, fallback: DType | undefined, floatingOnly = true): DType {
  const asked = dtype === undefined || dtype === null ? fallback : dtype;
  const d = asked === undefined ? 'float32' : checkUserDType(fn, asked);
  if (floatingOnly && !isFloating(d)) throw new TypeError(`${fn}: dtype must be a floating dtype, got ${d}`);
  return d;
}

/** Wraps an init body: validates shape and dtype (floating unless `anyDtype`), frees intermediates. */
function initializer(
  fn: string,
  defaultDtype: DType | undefined,
  body: (key: Array, shape: number[], dtype: DType) => Array,
  anyDtype = false,
): Initializer {
  return (key, shape, dtype) => {
    const s = checkShape(fn, shape);
    const d = initDtype(fn, dtype, defaultDtype, !anyDtype);
    return tidy(() => body(key, s, d));
  };
}

/** JAX's _compute_fans: [fanIn, fanOut] for a weight of this shape. */
export function computeFans(shape: readonly number[], options: Omit<FanOptions, 'dtype'> = {}): [number, number] {
  const fn = 'nn.initializers.computeFans';
  const inAxis = options.inAxis ?? -2;
  const outAxis = options.outAxis ?? -1;
  const batchAxis = options.batchAxis ?? [];
  if (inAxis === -2 && shape.length <= 1) {
    throw new ValueError(
      `${fn}: can't compute input and output sizes of a ${shape.length}-dimensional weights tensor with the default inAxis; it must be at least 2-D or specify inAxis`,
    );
  }
  const size = (axes: number | number[], arg: string): number =>
    (typeof axes === 'number' ? [axes] : axes).reduce((p, a) => p * shape[normalizeAxis(fn, a, shape.length, arg)]!, 1);
  const inSize = size(inAxis, 'inAxis');
  const outSize = size(outAxis, 'outAxis');
  const batchSize = size(batchAxis, 'batchAxis');
  const receptiveField = shape.reduce((p, d) => p * d, 1) / inSize / outSize / batchSize;
  return [inSize * receptiveField, outSize * receptiveField];
}

/**
 * jax.nn.initializers.variance_scaling: samples with variance scale / n,
 * n being fan_in, fan_out, their mean or their geometric mean.
 */
export function varianceScaling(
  scale: number,
  mode: VarianceScalingMode,
  distribution: VarianceScalingDistribution,
  options: FanOptions = {},
): Initializer {
  const fn = 'nn.initializers.varianceScaling';
  checkOptions(fn, options, ['inAxis', 'outAxis', 'batchAxis', 'dtype']);
  if (typeof scale !== 'number' || !(scale >= 0)) throw new TypeError(`${fn}: scale must be a non-negative number, got ${show(scale)}`);
  if (!['fan_in', 'fan_out', 'fan_avg', 'fan_geo_avg'].includes(mode)) {
    throw new ValueError(`${fn}: invalid mode ${show(mode)}; expected 'fan_in', 'fan_out', 'fan_avg' or 'fan_geo_avg'`);
  }
  if (!['truncated_normal', 'normal', 'uniform'].includes(distribution)) {
    throw new ValueError(`${fn}: invalid distribution ${show(distribution)}; expected 'truncated_normal', 'normal' or 'uniform'`);
  }
  const { dtype: defaultDtype, ...fanOptions } = options ?? {};
  if (defaultDtype !== undefined) initDtype(fn, defaultDtype, undefined);
  return initializer(fn, defaultDtype, (key, shape, dtype) => {
    const [fanIn, fanOut] = computeFans(shape, fanOptions);
    const denominator = mode === 'fan_in' ? fanIn : mode === 'fan_out' ? fanOut : mode === 'fan_avg' ? (fanIn + fanOut) / 2 : Math.sqrt(fanIn * fanOut);
    const variance = jnp.array(scale / denominator, { dtype });
    if (distribution === 'truncated_normal') {
      // 0.879...: the stddev of a standard normal truncated to (-2, 2)
      const stddev = jnp.divide(jnp.sqrt(variance), jnp.array(0.87962566103423978, { dtype }));
      return jnp.multiply(random.truncatedNormal(key, -2, 2, shape, { dtype }), stddev);
    }
    if (distribution === 'normal') return jnp.multiply(random.normal(key, shape, { dtype }), jnp.sqrt(variance));
    return jnp.multiply(random.uniform(key, shape, { dtype, minval: -1 }), jnp.sqrt(jnp.multiply(3, variance)));
  });
}

function checkFanOptions(fn: string, options: FanOptions): FanOptions {
  checkOptions(fn, options, ['inAxis', 'outAxis', 'batchAxis', 'dtype']);
  return options ?? {};
}

/** jax.nn.initializers.glorot_uniform (xavier_uniform): variance 1 / fan_avg, uniform. */
export function glorotUniform(options: FanOptions = {}): Initializer {
  return varianceScaling(1, 'fan_avg', 'uniform', checkFanOptions('nn.initializers.glorotUniform', options));
}
/** jax.nn.initializers.glorot_normal (xavier_normal): variance 1 / fan_avg, truncated normal. */
export function glorotNormal(options: FanOptions = {}): Initializer {
  return varianceScaling(1, 'fan_avg', 'truncated_normal', checkFanOptions('nn.initializers.glorotNormal', options));
}
/** jax.nn.initializers.lecun_uniform: variance 1 / fan_in, uniform. */
export function lecunUniform(options: FanOptions = {}): Initializer {
  return varianceScaling(1, 'fan_in', 'uniform', checkFanOptions('nn.initializers.lecunUniform', options));
}
/** jax.nn.initializers.lecun_normal: variance 1 / fan_in, truncated normal. */
export function lecunNormal(options: FanOptions = {}): Initializer {
  return varianceScaling(1, 'fan_in', 'truncated_normal', checkFanOptions('nn.initializers.lecunNormal', options));
}
/** jax.nn.initializers.he_uniform (kaiming_uniform): variance 2 / fan_in, uniform. */
export function heUniform(options: FanOptions = {}): Initializer {
  return varianceScaling(2, 'fan_in', 'uniform', checkFanOptions('nn.initializers.heUniform', options));
}
/** jax.nn.initializers.he_normal (kaiming_normal): variance 2 / fan_in, truncated normal. */
export function heNormal(options: FanOptions = {}): Initializer {
  return varianceScaling(2, 'fan_in', 'truncated_normal', checkFanOptions('nn.initializers.heNormal', options));
}
export const xavierUniform = glorotUniform;
export const xavierNormal = glorotNormal;
export const kaimingUniform = heUniform;
export const kaimingNormal = heNormal;

function checkScale(fn: string, value: unknown, arg: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`${fn}: ${arg} must be a finite number, got ${show(value)}`);
  return value;
}

/** jax.nn.initializers.normal: normal samples times stddev (default 1e-2). */
export function normal(stddev = 1e-2, options: { dtype?: DType } = {}): Initializer {
  const fn = 'nn.initializers.normal';
  checkOptions(fn, options, ['dtype']);
  const s = checkScale(fn, stddev, 'stddev');
  return initializer(fn, options?.dtype, (key, shape, dtype) => jnp.multiply(random.normal(key, shape, { dtype }), jnp.array(s, { dtype })));
}

/** jax.nn.initializers.uniform: uniform samples in [0, scale) (default 1e-2). */
export function uniform(scale = 1e-2, options: { dtype?: DType } = {}): Initializer {
  const fn = 'nn.initializers.uniform';
  checkOptions(fn, options, ['dtype']);
  const s = checkScale(fn, scale, 'scale');
  return initializer(fn, options?.dtype, (key, shape, dtype) => jnp.multiply(random.uniform(key, shape, { dtype }), jnp.array(s, { dtype })));
}

/** jax.nn.initializers.truncated_normal: normal samples truncated to (lower, upper) (default ±2), times stddev. */
export function truncatedNormal(stddev = 1e-2, options: { dtype?: DType; lower?: number; upper?: number } = {}): Initializer {
  const fn = 'nn.initializers.truncatedNormal';
  checkOptions(fn, options, ['dtype', 'lower', 'upper']);
  const s = checkScale(fn, stddev, 'stddev');
  const lower = checkScale(fn, options?.lower ?? -2, 'lower');
  const upper = checkScale(fn, options?.upper ?? 2, 'upper');
  return initializer(fn, options?.dtype, (key, shape, dtype) =>
    jnp.multiply(random.truncatedNormal(key, lower, upper, shape, { dtype }), jnp.array(s, { dtype })));
}

/** jax.nn.initializers.constant: every element is `value`. */
export function constant(value: number, options: { dtype?: DType } = {}): Initializer {
  const fn = 'nn.initializers.constant';
  checkOptions(fn, options, ['dtype']);
  const v = checkScale(fn, value, 'value');
  if (options?.dtype !== undefined) initDtype(fn, options.dtype, undefined, false);
  return initializer(fn, options?.dtype, (_key, shape, dtype) => jnp.full(shape, v, { dtype }), true);
}

/** jax.nn.initializers.zeros: an initializer itself (the key is ignored). */
export const zeros: Initializer = initializer('nn.initializers.zeros', undefined, (_key, shape, dtype) => jnp.zeros(shape, { dtype }), true);
/** jax.nn.initializers.ones: an initializer itself (the key is ignored). */
export const ones: Initializer = initializer('nn.initializers.ones', undefined, (_key, shape, dtype) => jnp.ones(shape, { dtype }), true);
