// optax's optimizers as chains of transformations (optax/_src/alias.py):
// sgd = [trace] + scaleByLearningRate, adam = scaleByAdam +
// scaleByLearningRate, adamw = scaleByAdam + addDecayedWeights +
// scaleByLearningRate, with optax's defaults.
import type { Array } from '../core/array.js';
import type { DType } from '../core/dtype.js';
import { checkOptions } from '../core/errors.js';
import { type GradientTransformation, type ScalarOrSchedule, chain, checkScalar, identity } from './base.js';
import { type Mask, type ScaleByAdamOptions, addDecayedWeights, scaleByAdam, scaleByLearningRate, trace } from './transforms.js';

export interface SgdOptions {
  /** Momentum decay; null (the default) means plain SGD. */
  momentum?: number | Array | null;
  nesterov?: boolean;
  accumulatorDtype?: DType | null;
}

/** optax.sgd(learningRate, { momentum, nesterov, accumulatorDtype }). State: [traceState or {}, scaleState]. */
export function sgd(learningRate: ScalarOrSchedule, options: SgdOptions = {}): GradientTransformation<unknown[]> {
  const fn = 'optax.sgd';
  checkOptions(fn, options, ['momentum', 'nesterov', 'accumulatorDtype']);
  const o = options ?? {};
  const scaleLr = scaleByLearningRate(learningRate);
  if (o.momentum === undefined || o.momentum === null) {
    if (o.nesterov) throw new TypeError(`${fn}: nesterov needs a momentum (got momentum ${String(o.momentum)})`);
    return chain(identity(), scaleLr);
  }
  const momentum = checkScalar(fn, o.momentum, 'momentum');
  return chain(trace(momentum, { nesterov: o.nesterov ?? false, accumulatorDtype: o.accumulatorDtype ?? null }), scaleLr);
}

/** optax.adam(learningRate, { b1 = 0.9, b2 = 0.999, eps = 1e-8, epsRoot = 0, muDtype, nesterov }). State: [{count, mu, nu}, {}]. */
export function adam(learningRate: ScalarOrSchedule, options: ScaleByAdamOptions = {}): GradientTransformation<unknown[]> {
  checkOptions('optax.adam', options, ['b1', 'b2', 'eps', 'epsRoot', 'muDtype', 'nesterov']);
  return chain(scaleByAdam(options ?? {}), scaleByLearningRate(learningRate));
}

export interface AdamwOptions extends ScaleByAdamOptions {
  /** Decoupled weight decay (default 1e-4), a number or a schedule. */
  weightDecay?: ScalarOrSchedule;
  /** Which parameters to decay: a pytree of booleans or a function of the params giving one. */
  mask?: Mask | null;
}

/** optax.adamw(learningRate, { b1, b2, eps, epsRoot, muDtype, nesterov, weightDecay = 1e-4, mask }). State: [{count, mu, nu}, decayState, {}]. */
export function adamw(learningRate: ScalarOrSchedule, options: AdamwOptions = {}): GradientTransformation<unknown[]> {
  checkOptions('optax.adamw', options, ['b1', 'b2', 'eps', 'epsRoot', 'muDtype', 'nesterov', 'weightDecay', 'mask']);
  const { weightDecay = 1e-4, mask = null, ...adamOptions } = options ?? {};
  return chain(scaleByAdam(adamOptions), addDecayedWeights(weightDecay, { mask }), scaleByLearningRate(learningRate));
}
