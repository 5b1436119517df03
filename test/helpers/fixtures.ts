// Reading the JSON fixtures that test/fixtures/gen_*.py wrote offline with
// NumPy / JAX: non-finite floats are encoded as 'nan', 'inf' and '-inf'.
import fs from 'node:fs';

/** A fixture element: a number, a bool, or one of the non-finite names. */
export type EncodedNumber = number | boolean | string;

export function decodeNumber(v: EncodedNumber): number {
  return v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : Number(v);
}

/** Parses test/fixtures/<name> (tests run from the repository root). */
export function loadFixture<T>(name: string): T {
  return JSON.parse(fs.readFileSync(`test/fixtures/${name}`, 'utf8')) as T;
}
