// jax.random: threefry2x32 keys and samplers giving the same values as JAX
// 0.10.2 on the CPU with its default configuration (jax_threefry_partitionable
// on, x64 off; float64 samples match JAX with x64 on): keys, bits and
// integers exactly, floats too, since the special functions are computed as
// XLA computes them (xla-math.ts). The known exception: float16 gumbel (and
// so float16 categorical near ties), whose float16 log jaxon does not
// reproduce. multivariateNormal and orthogonal draw random.normal's bits
// and factor with jnp.linalg (samples agree with JAX's to the factorizations'
// rounding; eigh/svd factors up to eigenvector signs). The further samplers (samplers.ts, gamma.ts) follow JAX's
// algorithms op for op too; where XLA's float32 rsqrt/pow/exp/tan are not
// reproduced (float32 gamma family, beta, dirichlet, chisquare, pareto,
// cauchy, maxwell) they agree to a few ulps, and the gradient of a gamma
// sample with respect to a is not implemented (it raises). Keys are raw
// uint32 arrays of shape [2] — JAX's legacy PRNGKey
// layout — whether made by `key` or `PRNGKey`: jaxon has no typed key<fry>
// dtype. Split a key rather than reusing it; vmap over an array of keys
// [n, 2] for batches. Every function frees its own intermediates.
import type { Array } from '../core/array.js';
import { disposeIntermediates, tidy } from '../core/memory.js';
import * as distributions from './distributions.js';
import * as gammaFamily from './gamma.js';
import * as samplers from './samplers.js';
import * as linalgSamplers from './linalg-samplers.js';
import * as keys from './keys.js';

export type { Key } from './keys.js';
export type { CategoricalOptions, PermutationOptions, UniformOptions } from './distributions.js';
export type { ChoiceOptions } from './samplers.js';
export type { MultivariateNormalOptions, OrthogonalOptions } from './linalg-samplers.js';

const api = disposeIntermediates({ ...keys, ...distributions, ...samplers, ...gammaFamily, ...linalgSamplers }, 'random.');

export const { key, split, foldIn, keyData, wrapKeyData, bits } = api;
export const { uniform, normal, truncatedNormal, gumbel, bernoulli, categorical, randint, permutation } = api;
export const { exponential, laplace, logistic, cauchy, pareto, weibullMin, maxwell, rademacher, choice } = api;
export const { gamma, loggamma, beta, dirichlet, t, chisquare, poisson } = api;
export const { multivariateNormal, orthogonal } = api;
/** A legacy raw key: uint32 [0, seed mod 2^32] (the same as `key` in jaxon). */
export const PRNGKey = (seed: number | Array): Array => tidy(() => keys.PRNGKey(seed));
