// The tutorial corpus (issue 13): snippets ported from JAX's own tutorials and
// docstrings, each asserting the output JAX prints in that text. A snippet is
// one small function a newcomer can read as an example; this file holds the
// shape of a snippet and the few assertion helpers they share.
// test/tutorial-corpus.test.ts registers every snippet as one ava test:
// `failing` snippets document where jaxon gives something other than JAX's
// printed value (a finding, kept visible with both values in its comment), and
// `todo` snippets name what jaxon does not have yet.
import type { ExecutionContext } from 'ava';
import { Array } from '../../lib/index.js';

export type Run = (t: ExecutionContext) => void | Promise<void>;

export interface Snippet {
  /** The JAX document and section the snippet comes from. */
  source: string;
  /** What the snippet shows. */
  title: string;
  kind: 'test' | 'failing' | 'todo';
  run?: Run;
  /** Registered with test.serial: it changes process-wide state (jax.config) while it runs, and restores it. */
  serial?: boolean;
}

/** A snippet whose documented result jaxon reproduces. */
export const snippet = (source: string, title: string, run: Run, options: { serial?: boolean } = {}): Snippet => ({ source, title, kind: 'test', run, ...options });

/** A snippet where jaxon differs from JAX's printed value: the comment at the call says both values. */
export const failing = (source: string, title: string, run: Run): Snippet => ({ source, title, kind: 'failing', run });

/** A snippet that needs something jaxon does not have yet. */
export const todo = (source: string, missing: string): Snippet => ({ source, title: missing, kind: 'todo' });

type Nested = number | boolean | Nested[];

interface CloseOptions {
  /** Expected dtype, checked exactly. */
  dtype?: string;
  /** Absolute tolerance (default 1e-6). */
  atol?: number;
  /** Relative tolerance (default 2e-5: JAX prints float32 with 8 significant digits). */
  rtol?: number;
}

function shapeOf(expected: Nested): number[] {
  return globalThis.Array.isArray(expected) ? [expected.length, ...(expected.length > 0 ? shapeOf(expected[0]!) : [])] : [];
}

function flat(expected: Nested): number[] {
  if (globalThis.Array.isArray(expected)) return expected.flatMap(flat);
  return [typeof expected === 'boolean' ? Number(expected) : expected];
}

function close(actual: number, expected: number, atol: number, rtol: number): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return actual === expected;
  return Math.abs(actual - expected) <= atol + rtol * Math.abs(expected);
}

/**
 * Asserts that `x` is an Array with the shape of `expected` (nested JS arrays, as JAX prints them), its values
 * within float32 tolerance, and, if given, its dtype.
 */
export function expectArray(t: ExecutionContext, x: unknown, expected: Nested, options: CloseOptions = {}): void {
  if (!(x instanceof Array)) {
    t.fail(`expected an Array, got ${String(x)}`);
    return;
  }
  const { atol = 1e-6, rtol = 2e-5 } = options;
  t.deepEqual(x.shape, shapeOf(expected), 'shape');
  if (options.dtype !== undefined) t.is(x.dtype as string, options.dtype, 'dtype');
  const got = globalThis.Array.from(x.dataSync(), Number);
  const want = flat(expected);
  const bad = want.findIndex((w, i) => !close(got[i]!, w, atol, rtol));
  t.true(bad < 0, bad < 0 ? '' : `element ${bad}: got ${got[bad]}, JAX documents ${want[bad]} (got ${JSON.stringify(got)})`);
}

/** Asserts a scalar (an Array of shape [] or a JS number) is within float32 tolerance of JAX's printed value. */
export function expectScalar(t: ExecutionContext, x: unknown, expected: number, options: CloseOptions = {}): void {
  if (x instanceof Array) {
    expectArray(t, x, expected, options);
    return;
  }
  if (typeof x !== 'number') {
    t.fail(`expected a number or an Array, got ${String(x)}`);
    return;
  }
  const { atol = 1e-6, rtol = 2e-5 } = options;
  t.true(close(x, expected, atol, rtol), `got ${x}, JAX documents ${expected}`);
}

/** The values of an Array as nested JS arrays (jnp's tolist). */
export const tolist = (x: unknown): unknown => (x as Array).tolistSync();
