// PRNG keys: making them from seeds, splitting, folding in data, and raw
// random bits. jaxon keys are raw threefry2x32 keys, uint32 arrays of shape
// [2] (JAX's legacy `PRNGKey` layout), for both random.key and
// random.PRNGKey; a batch of keys is an array [..., 2] to vmap over.
import { Array } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { type DType, checkUserDType, isInteger } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { checkShape } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { jit } from '../transforms/jit.js';
import { type Key, foldInKey, randomBits, seedKey, splitKey } from './threefry.js';

export type { Key };

/** Validates a key argument: a uint32 array of shape [2]. */
export function checkKey(fn: string, key: unknown): Key {
  if (!(key instanceof Array)) {
    throw new TypeError(`${fn}: key must be a PRNG key (a uint32 array of shape [2] from random.key or random.PRNGKey), got ${show(key)}`);
  }
  if (key.dtype !== 'uint32') throw new TypeError(`${fn}: key must be a uint32 array of shape [2], got dtype ${key.dtype}`);
  if (key.ndim > 1 && key.shape[key.ndim - 1] === 2) {
    throw new ValueError(`${fn}: accepts a single key, but was given a key array of shape ${show(key.shape)}; use jax.vmap for batching`);
  }
  if (key.ndim !== 1 || key.shape[0] !== 2) throw new TypeError(`${fn}: key must be a uint32 array of shape [2], got shape ${show(key.shape)}`);
  if (!key.isTracer) key.storage(fn); // a disposed key fails here, naming the caller
  return key;
}

function seedToKey(fn: string, seed: unknown): Key {
  if (typeof seed === 'number') {
    if (!Number.isInteger(seed)) throw new TypeError(`${fn}: seed must be an integer, got ${seed}`);
    // jax_enable_x64 off: the seed is taken mod 2^32 and the high word is zero
    const low = ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
    return arrayFromValues([0, low], [2], 'uint32');
  }
  if (seed instanceof Array) {
    if (seed.ndim !== 0) throw new TypeError(`${fn}: accepts a scalar seed, but was given an array of shape ${show(seed.shape)}; use jax.vmap for batching`);
    if (!isInteger(seed.dtype)) throw new TypeError(`${fn}: seed must be an integer, got an array of dtype ${seed.dtype} (arrays made from JS numbers are float32: pass { dtype: 'int32' }, an Int32Array or jnp.arange)`);
    return seedKey(seed);
  }
  throw new TypeError(`${fn}: seed must be an integer or an integer scalar Array, got ${show(seed)}`);
}

/**
 * A PRNG key from an integer seed. JAX's `key` makes a typed `key<fry>`
 * scalar; jaxon has no key dtype, so this is the same raw uint32[2] key as
 * PRNGKey: [0, seed mod 2^32] (JAX's values with jax_enable_x64 off).
 */
export function key(seed: number | Array): Key {
  return seedToKey('random.key', seed);
}

/** A legacy raw PRNG key from an integer seed: a uint32 array [0, seed mod 2^32]. */
export function PRNGKey(seed: number | Array): Key {
  return seedToKey('random.PRNGKey', seed);
}

/** The uint32 data of a key (or key array): a copy, since jaxon keys are their data. */
export function keyData(keys: Array): Array {
  if (!(keys instanceof Array) || keys.dtype !== 'uint32' || keys.shape[keys.ndim - 1] !== 2) {
    throw new TypeError(`random.keyData: keys must be a uint32 array of shape [..., 2], got ${keys instanceof Array ? `${keys.dtype}${show(keys.shape)}` : show(keys)}`);
  }
  return lax.copy(keys);
}

/** Keys from their uint32 data, shape [..., 2] (a copy: jaxon keys are raw). */
export function wrapKeyData(keyBitsArray: Array): Array {
  if (!(keyBitsArray instanceof Array) || keyBitsArray.dtype !== 'uint32' || keyBitsArray.shape[keyBitsArray.ndim - 1] !== 2) {
    throw new TypeError(
      `random.wrapKeyData: keyBitsArray must be a uint32 array of shape [..., 2], got ${keyBitsArray instanceof Array ? `${keyBitsArray.dtype}${show(keyBitsArray.shape)}` : show(keyBitsArray)}`,
    );
  }
  return lax.copy(keyBitsArray);
}

const splitJit = jit((k: Array, shape: number[]) => splitKey(k, shape), { staticArgnums: [1] });

/** `num` new keys (shape [num, 2]), or an array of keys of shape [...num, 2] when num is a shape. */
export function split(key: Key, num: number | number[] = 2): Array {
  const k = checkKey('random.split', key);
  return splitJit(k, checkShape('random.split', num, 'num'));
}

const foldInJit = jit((k: Array, data: Array) => foldInKey(k, data));

/** A new key from a key and 32-bit integer data (JAX's fold_in). */
export function foldIn(key: Key, data: number | boolean | Array): Key {
  const fn = 'random.foldIn';
  const k = checkKey(fn, key);
  let d: Array;
  if (typeof data === 'number' || typeof data === 'boolean') {
    const v = Math.trunc(Number(data));
    if (!(v >= 0 && v < 2 ** 32)) throw new ValueError(`${fn}: data = ${data} is out of bounds for uint32 [0, 4294967295]`);
    d = arrayFromValues([v], [], 'uint32');
  } else if (data instanceof Array) {
    if (data.ndim !== 0) throw new TypeError(`${fn}: accepts a scalar, but was given an array of shape ${show(data.shape)}; use jax.vmap for batching`);
    d = lax.convertElementType(data, 'uint32');
  } else {
    throw new TypeError(`${fn}: data must be an integer or a scalar Array, got ${show(data)}`);
  }
  return foldInJit(k, d);
}

const BIT_WIDTHS: Partial<Record<DType, 8 | 16 | 32>> = { uint8: 8, uint16: 16, uint32: 32 };
const bitsJit = jit((k: Array, width: 8 | 16 | 32, shape: number[]) => randomBits(k, width, shape), { staticArgnums: [1, 2] });

/** Uniformly random unsigned integers (JAX's random.bits); dtype uint8, uint16 or uint32 (default). */
export function bits(key: Key, shape: number | number[] = [], options: { dtype?: DType } = {}): Array {
  const fn = 'random.bits';
  checkOptions(fn, options, ['dtype']);
  const k = checkKey(fn, key);
  const dtype = options.dtype === undefined ? 'uint32' : checkUserDType(fn, options.dtype);
  const width = BIT_WIDTHS[dtype];
  if (width === undefined) throw new ValueError(`${fn}: dtype must be an unsigned int dtype (uint8, uint16 or uint32), got ${dtype}`);
  return bitsJit(k, width, checkShape(fn, shape));
}

