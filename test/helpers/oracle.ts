// Test oracle: runs a jaxon function twice, once on the compiled backend and
// once with every primitive evaluated by the float64 reference interpreter,
// and compares at JAX's default tolerances (f32 1e-6, f16 1e-3, bf16 1e-2,
// f64 1e-15 relative+absolute; integers and bools exactly).
import type { ExecutionContext } from 'ava';
import { Array } from '../../lib/core/array.js';
import { type Interpreter, arrayFromValues, setInterpreter } from '../../lib/core/bind.js';
import type { DType } from '../../lib/core/dtype.js';
import { flatten } from '../../lib/core/pytree.js';
import { evalPrimitive } from '../../lib/reference/interpreter.js';
import { refArray } from '../../lib/reference/array.js';

/** Evaluates each primitive with the reference interpreter and stores its (dtype-exact) results in new Arrays. */
export const referenceInterpreter: Interpreter = {
  apply(prim, inputs, params) {
    const refs = inputs.map((x) => refArray([...x.shape], x.dtype, x.dataSync()));
    const outs = evalPrimitive(prim, refs, params);
    return outs.map((o, i) => {
      const weak = inputs.length > 0 && inputs.every((x) => x.weakType) && o.dtype !== 'bool';
      void i;
      return arrayFromValues(o.data, o.shape, o.dtype, weak);
    });
  },
};

/** Runs fn with the reference interpreter installed. */
export function withReference<T>(fn: () => T): T {
  const previous = setInterpreter(referenceInterpreter);
  try {
    return fn();
  } finally {
    setInterpreter(previous);
  }
}

export const TOLERANCE: Record<DType, number> = {
  bool: 0, int8: 0, int16: 0, int32: 0, uint8: 0, uint16: 0, uint32: 0,
  float16: 1e-3, bfloat16: 1e-2, float32: 1e-6, float64: 1e-15,
};

/** Elementwise |a - b| <= tol * (1 + |b|)-style closeness (JAX's assert_allclose with atol = rtol = tol), NaNs equal. */
export function closeValues(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number): { ok: boolean; index: number } {
  if (actual.length !== expected.length) return { ok: false, index: -1 };
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const b = expected[i]!;
    if (Number.isNaN(a) && Number.isNaN(b)) continue;
    if (a === b) continue;
    if (!(Math.abs(a - b) <= tol + tol * Math.abs(b))) return { ok: false, index: i };
  }
  return { ok: true, index: -1 };
}

/** Asserts an Array's shape, dtype and values match expected values (number[] or Array). */
export function assertArray(
  t: ExecutionContext,
  actual: unknown,
  expected: { shape: readonly number[]; dtype: DType; values: ArrayLike<number> } | Array,
  options: { tol?: number; message?: string } = {},
): void {
  if (!(actual instanceof Array)) {
    t.fail(`${options.message ?? ''} expected an Array, got ${String(actual)}`);
    return;
  }
  const exp = expected instanceof Array ? { shape: expected.shape, dtype: expected.dtype, values: expected.dataSync() } : expected;
  const prefix = options.message ? `${options.message}: ` : '';
  t.deepEqual([...actual.shape], [...exp.shape], `${prefix}shape`);
  t.is(actual.dtype, exp.dtype, `${prefix}dtype`);
  const tol = options.tol ?? TOLERANCE[exp.dtype];
  const got = actual.dataSync();
  const { ok, index } = closeValues(got, exp.values, tol);
  if (!ok) {
    t.fail(`${prefix}values differ${index >= 0 ? ` at flat index ${index}: got ${got[index]}, expected ${exp.values[index]}` : ` in length: ${got.length} vs ${exp.values.length}`} (tol ${tol})`);
  } else {
    t.pass();
  }
}

/**
 * Runs `fn` on the compiled backend and under the reference interpreter, and
 * asserts every output leaf agrees in shape, dtype and value.
 */
export function checkAgainstReference(t: ExecutionContext, fn: () => unknown, options: { tol?: number; message?: string } = {}): void {
  const actual = flatten(fn())[0];
  const expected = flatten(withReference(fn))[0];
  t.is(actual.length, expected.length, 'number of outputs');
  actual.forEach((a, i) => {
    const e = expected[i];
    if (e instanceof Array) assertArray(t, a, e, { ...options, message: `${options.message ?? 'output'} ${i}` });
    else t.deepEqual(a, e);
  });
}

/** Deterministic pseudo-random values (mulberry32), for tests that need data. */
export function randomValues(n: number, seed = 1, lo = -3, hi = 3): number[] {
  let s = seed >>> 0;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    out.push(lo + (((r ^ (r >>> 14)) >>> 0) / 4294967296) * (hi - lo));
  }
  return out;
}

/** Asserts fn throws an error whose message contains every fragment. */
export function assertThrowsMentioning(t: ExecutionContext, fn: () => unknown, ...fragments: string[]): void {
  // a block body, so a returned Array is never handed to ava's formatter
  const error = t.throws(() => {
    fn();
  });
  if (error) for (const f of fragments) t.true(error.message.includes(f), `error message "${error.message}" should mention "${f}"`);
}
