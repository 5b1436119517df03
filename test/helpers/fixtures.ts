// Reading the JSON fixtures that test/fixtures/gen_*.py wrote offline with
// NumPy / JAX: non-finite floats are encoded as 'nan', 'inf' and '-inf'.
import fs from 'node:fs';
import * as jax from '../../lib/index.js';

/** A fixture element: a number, a bool, or one of the non-finite names. */
export type EncodedNumber = number | boolean | string;

export function decodeNumber(v: EncodedNumber): number {
  return v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : Number(v);
}

/** Parses test/fixtures/<name> (tests run from the repository root). */
export function loadFixture<T>(name: string): T {
  return JSON.parse(fs.readFileSync(`test/fixtures/${name}`, 'utf8')) as T;
}

/**
 * `run` (which reads fixture inputs through `cache` by name) traced once under jit with the inputs `names` as its
 * arguments: on the emulated GPU each eager op is a kernel compile, one fused program far fewer. `cache` is restored
 * afterwards.
 */
export function underOneJit<T>(cache: Map<string, jax.Array>, names: readonly string[], input: (name: string) => jax.Array, run: () => T): T {
  const traced = (...xs: jax.Array[]) => {
    const saved = new Map(cache);
    names.forEach((n, i) => cache.set(n, xs[i]!));
    try {
      return run();
    } finally {
      cache.clear();
      saved.forEach((v, k) => cache.set(k, v));
    }
  };
  return jax.jit(traced)(...names.map(input)) as T;
}
