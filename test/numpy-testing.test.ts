// jnp.isclose / allclose against NumPy (test/fixtures/gen_numpy_testing.py),
// arrayEqual / arrayEquiv by hand, and bad input.
import test from 'ava';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import * as jnp from '../lib/numpy/index.js';
import { allclose, arrayEqual, arrayEquiv, isclose } from '../lib/numpy/testing.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference } from './helpers/oracle.js';
import { decodeNumber as number, loadFixture } from './helpers/fixtures.js';

type Value = number | boolean | string;
interface Case {
  name: string;
  a: { shape: number[]; dtype: DType; values: Value[] };
  b: { shape: number[]; dtype: DType; values: Value[] };
  options: { rtol?: number; atol?: number; equalNan?: boolean };
  isclose: { shape: number[]; values: boolean[] };
  allclose: boolean;
}

const cases = loadFixture<{ isclose: Case[] }>('numpy-testing.json').isclose;
const decode = (e: Case['a']): Array => jnp.array(e.values.map(number), { dtype: e.dtype }).reshape(e.shape);

/** A 0-d bool Array holding `value`. */
function assertScalarBool(t: import('ava').ExecutionContext, x: Array, value: boolean, message?: string): void {
  assertArray(t, x, { shape: [], dtype: 'bool', values: [value ? 1 : 0] }, { message });
}

for (const c of cases) {
  test(c.name, (t) => {
    const a = decode(c.a);
    const b = decode(c.b);
    assertArray(t, isclose(a, b, c.options), { shape: c.isclose.shape, dtype: 'bool', values: c.isclose.values.map(Number) });
    assertScalarBool(t, allclose(a, b, c.options), c.allclose, 'allclose');
  });
}

test('isclose matches the reference interpreter', (t) => {
  const a = jnp.array([1, NaN, Infinity, -Infinity, 2, 1e-9]);
  const b = jnp.array([1.000001, NaN, Infinity, Infinity, 2.1, 0]);
  checkAgainstReference(t, () => isclose(a, b));
  checkAgainstReference(t, () => isclose(a, b, { equalNan: true, rtol: 0.1 }));
});

test('isclose: JS scalars, nested arrays and mixed dtypes promote like JAX', (t) => {
  assertArray(t, isclose([1, 2, 3], 2), { shape: [3], dtype: 'bool', values: [0, 1, 0] });
  assertArray(t, isclose(jnp.array([1, 2], { dtype: 'int32' }), jnp.array([1.000001, 2.5], { dtype: 'float32' })), { shape: [2], dtype: 'bool', values: [1, 0] });
  assertArray(t, isclose(jnp.array([true, false]), jnp.array([true, true])), { shape: [2], dtype: 'bool', values: [1, 0] });
  assertArray(t, isclose(jnp.array([1, 2], { dtype: 'bfloat16' }), 1.003), { shape: [2], dtype: 'bool', values: [1, 0] });
  assertArray(t, isclose(jnp.zeros([0, 2]), 1), { shape: [0, 2], dtype: 'bool', values: [] });
});

test('allclose returns a 0-d bool Array; empty inputs are all close', (t) => {
  const r = allclose([1, 2], [1, 2.000001]);
  assertScalarBool(t, r, true);
  t.is(r.item(), true);
  assertScalarBool(t, allclose(jnp.zeros([0]), jnp.ones([0])), true);
  assertScalarBool(t, allclose(1, 1.1, { atol: 0.2 }), true);
  assertScalarBool(t, allclose(NaN, NaN), false);
  assertScalarBool(t, allclose([NaN, 1], [NaN, 1], { equalNan: true }), true);
});

test('arrayEqual: same shape and values; different shapes are false, not an error', (t) => {
  assertScalarBool(t, arrayEqual([1, 2, 3], [1, 2, 3]), true);
  assertScalarBool(t, arrayEqual([1, 2, 3], [1, 2, 4]), false);
  assertScalarBool(t, arrayEqual([1, 2], [1, 2, 3]), false);
  assertScalarBool(t, arrayEqual([[1, 2]], [1, 2]), false);
  assertScalarBool(t, arrayEqual(jnp.array([1, 2], { dtype: 'int32' }), jnp.array([1, 2], { dtype: 'float32' })), true);
  assertScalarBool(t, arrayEqual(jnp.array([true, false]), jnp.array([1, 0], { dtype: 'uint8' })), true);
  assertScalarBool(t, arrayEqual(3, jnp.array(3, { dtype: 'int8' })), true);
  assertScalarBool(t, arrayEqual(jnp.zeros([0, 3]), jnp.zeros([0, 3])), true);
  assertScalarBool(t, arrayEqual([NaN, 1], [NaN, 1]), false);
  assertScalarBool(t, arrayEqual([NaN, 1], [NaN, 1], { equalNan: true }), true);
  assertScalarBool(t, arrayEqual([1, 2], [1, 2], { equalNan: true }), true);
});

test('arrayEquiv: equal after broadcasting; unbroadcastable shapes are false', (t) => {
  assertScalarBool(t, arrayEquiv([1, 2], [[1, 2], [1, 2]]), true);
  assertScalarBool(t, arrayEquiv([1, 2], [[1, 2], [1, 3]]), false);
  assertScalarBool(t, arrayEquiv([1, 2], [1, 2, 3]), false);
  assertScalarBool(t, arrayEquiv(2, [2, 2]), true);
});

test('bad input: options, tolerance types and operands are checked', (t) => {
  assertThrowsMentioning(t, () => isclose([1], [1], { rtoll: 1 } as never), 'jnp.isclose', "unknown option 'rtoll'");
  assertThrowsMentioning(t, () => allclose([1], [1], { atol: '1' } as never), 'jnp.allclose', 'atol', "'1'");
  assertThrowsMentioning(t, () => isclose([1], [1], { rtol: NaN }), 'rtol', 'NaN');
  assertThrowsMentioning(t, () => isclose([1], [1], { equalNan: 1 } as never), 'equalNan', 'boolean');
  assertThrowsMentioning(t, () => isclose([1, 2], [1, 2, 3]), 'jnp.isclose', '[2] and [3]', 'broadcast');
  assertThrowsMentioning(t, () => allclose([[1, 2]], [1, 2, 3]), 'jnp.allclose', 'broadcast');
  assertThrowsMentioning(t, () => isclose('a' as never, [1]), 'jnp.isclose', "'a'");
  assertThrowsMentioning(t, () => arrayEqual([1], [1], { nan: true } as never), 'jnp.arrayEqual', "unknown option 'nan'");
  assertThrowsMentioning(t, () => arrayEqual({} as never, [1]), 'jnp.arrayEqual', 'a1');
  assertThrowsMentioning(t, () => arrayEquiv([1], 'b' as never), 'jnp.arrayEquiv', 'a2');
});
