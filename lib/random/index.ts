// jax.random: threefry2x32 keys and samplers, bit-identical to JAX 0.10.2
// with its default configuration (jax_threefry_partitionable on, x64 off;
// float64 samples match JAX with x64 on). Keys are raw uint32 arrays of
// shape [2] — JAX's legacy PRNGKey layout — whether made by `key` or
// `PRNGKey`: jaxon has no typed key<fry> dtype. Split a key rather than
// reusing it; vmap over an array of keys [n, 2] for batches. Every function
// frees its own intermediates.
import type { Array } from '../core/array.js';
import { disposeIntermediates, tidy } from '../core/memory.js';
import * as distributions from './distributions.js';
import * as keys from './keys.js';

export type { Key } from './keys.js';
export type { CategoricalOptions, PermutationOptions, UniformOptions } from './distributions.js';

const api = disposeIntermediates({ ...keys, ...distributions });

export const { key, split, foldIn, keyData, wrapKeyData, bits } = api;
export const { uniform, normal, truncatedNormal, gumbel, bernoulli, categorical, randint, permutation } = api;
/** A legacy raw key: uint32 [0, seed mod 2^32] (the same as `key` in jaxon). */
export const PRNGKey = (seed: number | Array): Array => tidy(() => keys.PRNGKey(seed));
