// The threefry2x32 counter-based PRNG (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011) as JAX implements it in
// jax/_src/random/threefry2x32.py: the 20-round hash, key derivation from a
// seed, split and fold_in, and random bits in the "partitionable" layout
// (jax_threefry_partitionable=True, JAX's default), where element i of the
// output hashes the 64-bit counter i. Everything is built from lax ops on
// uint32 arrays (rotations are a multiply and a divide by powers of two), so
// it runs eagerly, fuses into one kernel under jit and batches under vmap.
import type { Array } from '../core/array.js';
import { ValueError } from '../core/errors.js';
import { sizeOf, stridesOf } from '../core/shape.js';
import * as lax from '../lax/ops.js';

/** A raw key: a uint32 array of shape [2] (JAX's legacy PRNGKey layout). */
export type Key = Array;

const ROTATIONS = [
  [13, 15, 26, 6],
  [17, 29, 16, 24],
] as const;

/** Threefry's key-schedule parity constant. */
const KEY_PARITY = 0x1bd11bda;

function rotateLeft(x: Array, r: number): Array {
  // x << r | x >>> (32 - r): multiplication wraps mod 2^32, division truncates
  return lax.bitwiseOr(lax.mul(x, 2 ** r), lax.div(x, 2 ** (32 - r)));
}

/**
 * The threefry2x32 hash of counter pairs (x1, x2) under the key (k1, k2),
 * all uint32; operands are equal-shaped or scalars (JAX's threefry2x32_p,
 * unrolled as its non-CPU lowering is).
 */
export function threefry2x32Hash(k1: Array, k2: Array, x1: Array, x2: Array): [Array, Array] {
  const ks = [k1, k2, lax.bitwiseXor(lax.bitwiseXor(k1, k2), KEY_PARITY)] as const;
  let v0 = lax.add(x1, ks[0]);
  let v1 = lax.add(x2, ks[1]);
  for (let block = 0; block < 5; block++) {
    for (const r of ROTATIONS[block % 2]!) {
      v0 = lax.add(v0, v1);
      v1 = lax.bitwiseXor(v0, rotateLeft(v1, r));
    }
    // key injection after every four rounds: 20 rounds in all
    v0 = lax.add(v0, ks[(block + 1) % 3]!);
    v1 = lax.add(lax.add(v1, ks[(block + 2) % 3]!), block + 1);
  }
  return [v0, v1];
}

/** The two words of a raw key, as uint32 scalars. */
export function keyWords(key: Key): [Array, Array] {
  return [lax.reshape(lax.slice(key, [0], [1]), []), lax.reshape(lax.slice(key, [1], [2]), [])];
}

/**
 * jax._src.random.threefry2x32.threefry_2x32(keypair, count): hashes the
 * flattened `count` as two halves (padded with a zero when odd) and returns
 * the outputs in count's shape.
 */
export function threefry2x32(key: Key, count: Array): Array {
  const [k1, k2] = keyWords(key);
  const n = count.size;
  let flat = lax.reshape(count, [n]);
  if (n % 2 === 1) flat = lax.concatenate([flat, lax.convertElementType([0], 'uint32')], 0);
  const half = flat.shape[0]! / 2;
  const [y1, y2] = threefry2x32Hash(k1, k2, lax.slice(flat, [0], [half]), lax.slice(flat, [half], [2 * half]));
  const out = lax.concatenate([y1, y2], 0);
  return lax.reshape(n % 2 === 1 ? lax.slice(out, [0], [n]) : out, [...count.shape]);
}

/**
 * The low 32 bits of a row-major iota over `shape` (JAX's iota_2x32_shape;
 * the high word is zero for the shapes jaxon can allocate).
 */
function counters(shape: readonly number[]): Array {
  if (sizeOf(shape) > 2 ** 32) throw new ValueError(`random: shapes of more than 2^32 elements are not supported, got [${shape.join(',')}]`);
  if (shape.length === 0) return lax.convertElementType(0, 'uint32');
  const strides = stridesOf(shape);
  let count = lax.broadcastedIota('uint32', [...shape], 0);
  if (strides[0] !== 1) count = lax.mul(count, strides[0]!);
  for (let axis = 1; axis < shape.length; axis++) {
    const term = lax.broadcastedIota('uint32', [...shape], axis);
    count = lax.add(count, strides[axis] === 1 ? term : lax.mul(term, strides[axis]!));
  }
  return count;
}

/** The pair of hash outputs for counters 0..size-1 laid out in `shape`. */
function hashCounters(key: Key, shape: readonly number[]): [Array, Array] {
  const [k1, k2] = keyWords(key);
  const high = lax.convertElementType(0, 'uint32');
  return threefry2x32Hash(k1, k2, high, counters(shape));
}

/** threefry_seed: a 32-bit integer seed becomes the key [0, seed mod 2^32] (jax_enable_x64 off). */
export function seedKey(seed: Array): Key {
  const low = lax.convertElementType(seed, 'uint32');
  return lax.concatenate([lax.convertElementType([0], 'uint32'), lax.reshape(low, [1])], 0);
}

/** threefry_split (fold-like, partitionable): keys of shape [...shape, 2]. */
export function splitKey(key: Key, shape: readonly number[]): Array {
  const [bits1, bits2] = hashCounters(key, shape);
  return lax.concatenate([lax.reshape(bits1, [...shape, 1]), lax.reshape(bits2, [...shape, 1])], shape.length);
}

/** threefry_fold_in: hashes the counter pair (0, data) under the key. */
export function foldInKey(key: Key, data: Array): Key {
  const [k1, k2] = keyWords(key);
  const [y1, y2] = threefry2x32Hash(k1, k2, lax.convertElementType(0, 'uint32'), data);
  return lax.concatenate([lax.reshape(y1, [1]), lax.reshape(y2, [1])], 0);
}

/**
 * threefry_random_bits (partitionable): uniformly random unsigned integers
 * of `bitWidth` bits in `shape`. Width 64 returns the [high, low] uint32
 * words (jaxon has no uint64), as JAX would combine them.
 */
export function randomBits(key: Key, bitWidth: 8 | 16 | 32, shape: readonly number[]): Array;
export function randomBits(key: Key, bitWidth: 64, shape: readonly number[]): [Array, Array];
export function randomBits(key: Key, bitWidth: 8 | 16 | 32 | 64, shape: readonly number[]): Array | [Array, Array] {
  const [bits1, bits2] = hashCounters(key, shape);
  if (bitWidth === 64) return [bits1, bits2];
  const bits = lax.bitwiseXor(bits1, bits2);
  return bitWidth === 32 ? bits : lax.convertElementType(bits, bitWidth === 16 ? 'uint16' : 'uint8');
}
