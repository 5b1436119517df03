// jax.nn: activations, softmax and friends, oneHot, standardize, and the
// parameter initializers (nn.initializers). Each function disposes its own
// intermediates, like jax.numpy's.
import { disposeIntermediates } from '../core/memory.js';
import * as functions from './functions.js';
import * as initializersModule from './initializers.js';

export type { Axis, SoftmaxOptions, StandardizeOptions } from './functions.js';
export type { FanOptions, Initializer, VarianceScalingDistribution, VarianceScalingMode } from './initializers.js';

export const {
  relu, relu6, sigmoid, silu, swish, softplus, logSigmoid, gelu, elu, selu, leakyRelu,
  softmax, logSoftmax, logsumexp, standardize, oneHot,
} = disposeIntermediates(functions, 'nn.');

/** jax.nn.initializers. The initializers they return free their own intermediates. */
export const initializers = initializersModule;
