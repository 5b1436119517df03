// jaxon/optax: gradient processing and optimization, as DeepMind's optax
// 0.2.x (same names in camelCase, same defaults and update equations).
// `import * as optax from 'jaxon/optax'`; an optimizer is a
// GradientTransformation { init(params), update(grads, state, params?) },
// and optax.applyUpdates(params, updates) applies what update returns.
export type {
  EmptyState, GradientTransformation, OptState, Params, ScalarOrSchedule, Schedule, Updates,
} from './base.js';
export { applyUpdates, chain, identity, safeIncrement, safeInt32Increment } from './base.js';
export type {
  Mask, MaskedState, ScaleByAdamOptions, ScaleByAdamState, ScaleByScheduleState, TraceOptions, TraceState,
  WeightDecayScheduleState,
} from './transforms.js';
export {
  addDecayedWeights, clipByGlobalNorm, globalNorm, masked, scale, scaleByAdam, scaleByLearningRate, scaleBySchedule, trace,
} from './transforms.js';
export type { AdamwOptions, SgdOptions } from './alias.js';
export { adam, adamw, sgd } from './alias.js';
export { constantSchedule } from './schedules.js';
