// jnp's elementwise functions (lib/numpy/elementwise.ts): values against
// NumPy (fixtures/elementwise.json, made by fixtures/gen_elementwise.py) in
// every dtype, JAX's result dtypes and weak types, XLA's integer semantics
// where NumPy differs (division by zero, INT_MIN / -1, float → int
// saturation), broadcasting, bad input, and every function's kernels against
// the float64 reference interpreter.
import test from 'ava';
import * as fs from 'node:fs';
import { config, numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference, randomValues } from './helpers/oracle.js';
import { emulatorSubset } from './helpers/emulator.js';

// 64-bit on for the whole file, as JAX's tests run with jax_enable_x64: it tests float64 kernels against the reference interpreter.
// What x64 off (the default) does to float64 requests is config.test.ts's subject.
config.update('jaxEnableX64', true);

type Value = number | string;
interface UnaryCase { dtype: DType; outDtype: DType; x: Value[]; y: Value[] }
interface BinaryCase {
  dtype: DType; outDtype: DType; x: Value[]; xShape: number[]; y: Value[]; yShape: number[]; shape: number[]; out: Value[];
}
interface Fixture { unary: Record<string, UnaryCase[]>; binary: Record<string, BinaryCase[]> }

const fixture = JSON.parse(fs.readFileSync('test/fixtures/elementwise.json', 'utf8')) as Fixture;

const decode = (v: Value): number =>
  typeof v === 'number' ? v : ({ nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 } as Record<string, number>)[v] ?? NaN;

function build(values: Value[], shape: number[], dtype: DType): Array {
  return lax.reshape(jnp.array(values.map(decode), { dtype }), shape);
}

type Unary = (x: Array) => Array;
type Binary = (x: Array, y: Array) => Array;
const fns = jnp as unknown as Record<string, unknown>;

// ---- values against NumPy ----

/**
 * The fixture cases of the k-th function a platform runs: all on the CPU; on the emulated GPU (helpers/emulator.ts) every
 * other dtype, alternating with k, so each dtype still meets half the functions there.
 */
const casesOf = <C>(cases: C[], k: number): C[] => (emulatorSubset ? cases.filter((_, i) => (i + k) % 2 === 0) : cases);

for (const [k, [name, cases]] of Object.entries(fixture.unary).entries()) {
  test(`jnp.${name} matches NumPy in every dtype`, (t) => {
    const f = fns[name] as Unary;
    for (const c of casesOf(cases, k)) {
      const x = jnp.array(c.x.map(decode), { dtype: c.dtype });
      assertArray(t, f(x), { shape: [c.x.length], dtype: c.outDtype, values: c.y.map(decode) }, { message: `${name}(${c.dtype})` });
    }
  });
}

for (const [k, [name, cases]] of Object.entries(fixture.binary).entries()) {
  test(`jnp.${name} matches NumPy in every dtype, broadcasting [n,1] with [1,m]`, (t) => {
    const f = fns[name] as Binary;
    for (const c of casesOf(cases, k)) {
      const out = f(build(c.x, c.xShape, c.dtype), build(c.y, c.yShape, c.dtype));
      assertArray(t, out, { shape: c.shape, dtype: c.outDtype, values: c.out.map(decode) }, { message: `${name}(${c.dtype})` });
    }
  });
}

// ---- XLA's integer semantics, where NumPy differs ----

const i = (values: number[], dtype: DType = 'int32') => jnp.array(values, { dtype });
const values = (x: Array) => globalThis.Array.from(x.dataSync());

test('integer division by zero follows XLA: x / 0 is -1 (signed) or the maximum (unsigned); floorDivide subtracts one more like jnp', (t) => {
  // lax.div is XLA's division: truncation, x / 0 = -1, INT_MIN / -1 = INT_MIN
  assertArray(t, lax.div(i([7, -7, 0, -2147483648, 7]), i([0, 0, 0, -1, -2])), { shape: [5], dtype: 'int32', values: [-1, -1, -1, -2147483648, -3] });
  assertArray(t, lax.div(i([7, 0, 255], 'uint8'), i([0, 0, 2], 'uint8')), { shape: [3], dtype: 'uint8', values: [255, 255, 127] });
  assertArray(t, lax.div(i([7], 'uint32'), i([0], 'uint32')), { shape: [1], dtype: 'uint32', values: [4294967295] });
  assertArray(t, lax.rem(i([7, -7, -2147483648], 'int32'), i([0, 0, -1], 'int32')), { shape: [3], dtype: 'int32', values: [7, -7, 0] });
  // jnp.floor_divide: where(sign(x) != sign(y) & rem != 0, x / y - 1, x / y)
  assertArray(t, jnp.floorDivide(i([7, -7, 0, -128, -128, 127], 'int8'), i([0, 0, 0, -1, 1, -1], 'int8')), {
    shape: [6], dtype: 'int8', values: [-2, -2, -1, -128, -128, -127],
  });
  assertArray(t, jnp.floorDivide(i([7, 0], 'uint16'), i([0, 0], 'uint16')), { shape: [2], dtype: 'uint16', values: [65535, 65535] });
  // jnp.remainder replaces integer divisors of 0 by 1: x % 0 == 0 (as NumPy)
  assertArray(t, jnp.mod(i([7, -7, 0], 'int32'), i([0, 0, 0], 'int32')), { shape: [3], dtype: 'int32', values: [0, 0, 0] });
  assertArray(t, jnp.mod(i([7], 'uint8'), i([0], 'uint8')), { shape: [1], dtype: 'uint8', values: [0] });
  assertArray(t, jnp.mod(i([-2147483648]), -1), { shape: [1], dtype: 'int32', values: [0] });
});

test('float floorDivide and mod follow Python (CPython float_divmod), with x // 0 = NaN as in JAX', (t) => {
  const x = jnp.array([1, -1, 7, -7, 0.5, 5, -5]);
  const y = jnp.array([0.1, 0.1, -2, 2, 0, Infinity, Infinity]);
  // 1 // 0.1 is 9 in Python (0.1 is a bit more than 1/10), not floor(1 / 0.1) = 10
  assertArray(t, jnp.floorDivide(x, y), { shape: [7], dtype: 'float32', values: [9, -10, -4, -4, NaN, 0, -1] });
  assertArray(t, jnp.mod(x, y), { shape: [7], dtype: 'float32', values: [Math.fround(1 - 9 * Math.fround(0.1)), Math.fround(0.1) - Math.fround(1 - 9 * Math.fround(0.1)), -1, 1, NaN, 5, Infinity] }, { tol: 1e-6 });
  assertArray(t, jnp.floorDivide(jnp.array([-0.5, 0.5, Infinity, NaN]), 2), { shape: [4], dtype: 'float32', values: [-1, 0, NaN, NaN] });
});

test('integer arithmetic wraps; abs and negative of INT_MIN are INT_MIN', (t) => {
  assertArray(t, jnp.add(i([127, -128], 'int8'), i([1, -1], 'int8')), { shape: [2], dtype: 'int8', values: [-128, 127] });
  assertArray(t, jnp.multiply(i([65535], 'uint16'), i([65535], 'uint16')), { shape: [1], dtype: 'uint16', values: [1] });
  assertArray(t, jnp.multiply(i([2147483647]), i([2147483647])), { shape: [1], dtype: 'int32', values: [1] });
  assertArray(t, jnp.subtract(i([0], 'uint32'), i([1], 'uint32')), { shape: [1], dtype: 'uint32', values: [4294967295] });
  assertArray(t, jnp.abs(i([-2147483648, -5])), { shape: [2], dtype: 'int32', values: [-2147483648, 5] });
  assertArray(t, jnp.negative(i([-128, 5], 'int8')), { shape: [2], dtype: 'int8', values: [-128, -5] });
  assertArray(t, jnp.negative(i([1, 0], 'uint8')), { shape: [2], dtype: 'uint8', values: [255, 0] });
  assertArray(t, jnp.square(i([16], 'int8')), { shape: [1], dtype: 'int8', values: [0] });
  assertArray(t, jnp.power(i([2, 3], 'int8'), 7), { shape: [2], dtype: 'int8', values: [-128, -117] });
  assertArray(t, jnp.power(i([2, -3, 0, 0, 5]), i([10, 3, 0, 5, 1])), { shape: [5], dtype: 'int32', values: [1024, -27, 1, 0, 5] });
});

test('float → int conversion truncates and saturates; NaN becomes 0 (XLA on CPU and GPU)', (t) => {
  const x = jnp.array([1e10, -1e10, NaN, Infinity, -Infinity, -3.7, 3.7, 255.9, -0.9]);
  assertArray(t, x.astype('int32'), { shape: [9], dtype: 'int32', values: [2147483647, -2147483648, 0, 2147483647, -2147483648, -3, 3, 255, 0] });
  assertArray(t, x.astype('int8'), { shape: [9], dtype: 'int8', values: [127, -128, 0, 127, -128, -3, 3, 127, 0] });
  assertArray(t, x.astype('uint8'), { shape: [9], dtype: 'uint8', values: [255, 0, 0, 255, 0, 0, 3, 255, 0] });
  assertArray(t, x.astype('uint32'), { shape: [9], dtype: 'uint32', values: [4294967295, 0, 0, 4294967295, 0, 0, 3, 255, 0] });
  assertArray(t, x.astype('bool'), { shape: [9], dtype: 'bool', values: [1, 1, 1, 1, 1, 1, 1, 1, 1] });
  assertArray(t, jnp.array([300, -1, 70000], { dtype: 'int32' }).astype('uint8'), { shape: [3], dtype: 'uint8', values: [44, 255, 112] });
  assertArray(t, jnp.array([70000.5], { dtype: 'float32' }).astype('float16'), { shape: [1], dtype: 'float16', values: [Infinity] });
});

// ---- result dtypes (JAX's rules) ----

const dt = (x: Array) => `${x.dtype}${x.weakType ? ' weak' : ''}`;

test('result dtypes follow JAX', (t) => {
  const i32 = jnp.array([1, 4], { dtype: 'int32' });
  const i8 = jnp.array([1, 4], { dtype: 'int8' });
  const u8 = jnp.array([1, 4], { dtype: 'uint8' });
  const f16 = jnp.array([1, 4], { dtype: 'float16' });
  const bf16 = jnp.array([1, 4], { dtype: 'bfloat16' });
  const b = jnp.array([true, false]);
  t.is(dt(jnp.sqrt(i32)), 'float32');
  t.is(dt(jnp.sqrt(u8)), 'float32');
  t.is(dt(jnp.sin(b)), 'float32');
  t.is(dt(jnp.exp(f16)), 'float16');
  t.is(dt(jnp.exp(bf16)), 'bfloat16');
  t.is(dt(jnp.exp(2)), 'float32 weak');
  t.is(dt(jnp.add(i8, 1)), 'int8');
  t.is(dt(jnp.divide(i32, i32)), 'float32');
  t.is(dt(jnp.divide(i8, u8)), 'float32');
  t.is(dt(jnp.divide(f16, 2)), 'float16');
  t.is(dt(jnp.trueDivide(7, 2)), 'float32 weak');
  t.is(dt(jnp.floorDivide(i32, i32)), 'int32');
  t.is(dt(jnp.floorDivide(i8, 2)), 'int8');
  t.is(dt(jnp.floorDivide(b, b)), 'int32');
  t.is(dt(jnp.mod(b, b)), 'int32');
  t.is(dt(jnp.mod(u8, 3)), 'uint8');
  t.is(dt(jnp.power(b, 2)), 'int32');
  t.is(dt(jnp.power(i8, 2)), 'int8');
  t.is(dt(jnp.power(f16, 2)), 'float16');
  t.is(dt(jnp.power(i32, 0.5)), 'float32 weak');
  t.is(dt(jnp.square(b)), 'int32');
  t.is(dt(jnp.arctan2(i32, i8)), 'float32');
  t.is(dt(jnp.arctan2(f16, bf16)), 'float32');
  t.is(dt(jnp.maximum(i8, u8)), 'int16');
  t.is(dt(jnp.minimum(f16, 1.5)), 'float16');
  t.is(dt(jnp.abs(u8)), 'uint8');
  t.is(dt(jnp.abs(b)), 'bool');
  t.is(dt(jnp.negative(i8)), 'int8');
  t.is(dt(jnp.floor(i32)), 'int32');
  t.is(dt(jnp.ceil(f16)), 'float16');
  t.is(dt(jnp.round(u8)), 'uint8');
  t.is(dt(jnp.trunc(b)), 'bool');
  t.is(dt(jnp.reciprocal(i32)), 'float32');
  t.is(dt(jnp.equal(i8, 1.5)), 'bool');
  t.is(dt(jnp.less(f16, bf16)), 'bool');
  t.is(dt(jnp.isnan(i32)), 'bool');
  t.is(dt(jnp.logicalAnd(i32, 1)), 'bool');
  t.is(dt(jnp.where(b, i8, u8)), 'int16');
  t.is(dt(jnp.where(b, 1, 2.5)), 'float32 weak');
  t.is(dt(jnp.where(b, f16, 2)), 'float16');
  t.is(dt(jnp.clip(i32, 0.5, 3)), 'float32 weak');
  t.is(dt(jnp.clip(i8, 0, 3)), 'int8');
  t.is(dt(jnp.add(b, b)), 'bool');
  t.is(dt(jnp.multiply(b, b)), 'bool');
});

test('bool operands: add is or, multiply is and; subtract, negative and sign reject bool as jnp does', (t) => {
  const a = jnp.array([true, true, false, false]);
  const b = jnp.array([true, false, true, false]);
  assertArray(t, jnp.add(a, b), { shape: [4], dtype: 'bool', values: [1, 1, 1, 0] });
  assertArray(t, jnp.multiply(a, b), { shape: [4], dtype: 'bool', values: [1, 0, 0, 0] });
  assertArray(t, jnp.floorDivide(a, b), { shape: [4], dtype: 'int32', values: [1, -2, 0, -1] });
  assertArray(t, jnp.square(a), { shape: [4], dtype: 'int32', values: [1, 1, 0, 0] });
  assertThrowsMentioning(t, () => jnp.subtract(a, b), 'jnp.subtract', 'bool');
  assertThrowsMentioning(t, () => jnp.negative(a), 'jnp.negative', 'bool');
  assertThrowsMentioning(t, () => jnp.sign(a), 'jnp.sign', 'bool');
});

test('aliases: absolute, remainder, pow, around, trueDivide, positive', (t) => {
  const x = jnp.array([-2.5, 1.5, 7]);
  t.deepEqual(values(jnp.absolute(x)), values(jnp.abs(x)));
  t.deepEqual(values(jnp.remainder(x, 2)), values(jnp.mod(x, 2)));
  t.deepEqual(values(jnp.pow(x, 2)), values(jnp.power(x, 2)));
  t.deepEqual(values(jnp.around(x)), values(jnp.round(x)));
  t.deepEqual(values(jnp.trueDivide(x, 2)), values(jnp.divide(x, 2)));
  t.is(jnp.positive(x), x);
  assertArray(t, jnp.positive(3), { shape: [], dtype: 'int32', values: [3] });
});

test('round: half to even, with decimals; integers unchanged; negative decimals round integers', (t) => {
  assertArray(t, jnp.round(jnp.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.7])), { shape: [6], dtype: 'float32', values: [0, 2, 2, -0, -2, 4] });
  assertArray(t, jnp.round(jnp.array([1.25, 1.35, -2.675, 123.456]), { decimals: 1 }), {
    shape: [4], dtype: 'float32', values: [1.2, 1.4, -2.7, 123.5],
  });
  assertArray(t, jnp.round(jnp.array([1234.5, -1250]), { decimals: -2 }), { shape: [2], dtype: 'float32', values: [1200, -1200] });
  assertArray(t, jnp.round(jnp.array([1234, -1250, 1350], { dtype: 'int32' }), { decimals: -2 }), { shape: [3], dtype: 'int32', values: [1200, -1200, 1400] });
  assertArray(t, jnp.round(jnp.array([7], { dtype: 'int8' }), { decimals: 2 }), { shape: [1], dtype: 'int8', values: [7] });
  assertThrowsMentioning(t, () => jnp.round(jnp.array([1]), { decimals: 1.5 }), 'jnp.round', 'decimals', '1.5');
  assertThrowsMentioning(t, () => jnp.round(jnp.array([1]), { decimal: 1 } as never), 'jnp.round', "'decimal'");
});

test('clip and where: broadcasting, NaN, and weak bounds', (t) => {
  assertArray(t, jnp.clip(jnp.array([1, 5, 10, NaN]), 2, 8), { shape: [4], dtype: 'float32', values: [2, 5, 8, NaN] });
  assertArray(t, jnp.clip(jnp.array([[1, 5], [10, -3]], { dtype: 'int32' }), jnp.array([0, 6], { dtype: 'int32' })), { shape: [2, 2], dtype: 'int32', values: [1, 6, 10, 6] });
  assertArray(t, jnp.clip(jnp.array([1, 5, 10], { dtype: 'int32' }), null, 4), { shape: [3], dtype: 'int32', values: [1, 4, 4] });
  assertArray(t, jnp.clip(jnp.array([1, 5, 10], { dtype: 'int32' })), { shape: [3], dtype: 'int32', values: [1, 5, 10] });
  assertArray(t, jnp.where(jnp.array([[1], [0]], { dtype: 'int32' }), jnp.array([1, 2, 3], { dtype: 'int32' }), -1), { shape: [2, 3], dtype: 'int32', values: [1, 2, 3, -1, -1, -1] });
  assertArray(t, jnp.where(jnp.array([NaN, 0, -0, 2]), 1, 0), { shape: [4], dtype: 'int32', values: [1, 0, 0, 1] });
  assertArray(t, jnp.where(true, jnp.array([1.5]), jnp.array([[2], [3]])), { shape: [2, 1], dtype: 'float32', values: [1.5, 1.5] });
  assertThrowsMentioning(t, () => jnp.where(jnp.array([true])), 'jnp.where', 'x and y');
  assertThrowsMentioning(t, () => jnp.where(jnp.array([true, false, true]), jnp.array([1, 2]), 0), 'jnp.where', '[3]', '[2]');
});

test('isnan, isinf, isfinite on special values and integers', (t) => {
  const x = jnp.array([NaN, Infinity, -Infinity, 0, -0, 1e38, 3.4e38 * 10]);
  assertArray(t, jnp.isnan(x), { shape: [7], dtype: 'bool', values: [1, 0, 0, 0, 0, 0, 0] });
  assertArray(t, jnp.isinf(x), { shape: [7], dtype: 'bool', values: [0, 1, 1, 0, 0, 0, 1] });
  assertArray(t, jnp.isfinite(x), { shape: [7], dtype: 'bool', values: [0, 0, 0, 1, 1, 1, 0] });
  assertArray(t, jnp.isfinite(jnp.array([1, 2], { dtype: 'uint8' })), { shape: [2], dtype: 'bool', values: [1, 1] });
  assertArray(t, jnp.isinf(jnp.array([65504, 65520], { dtype: 'float32' }).astype('float16')), { shape: [2], dtype: 'bool', values: [0, 1] });
});

test('broadcasting: scalars, rank extension, size-1 axes', (t) => {
  const a = lax.reshape(jnp.arange(12), [4, 1, 3]);
  const b = jnp.array([[10], [20]], { dtype: 'int32' });
  const s = jnp.add(a, b);
  t.deepEqual([...s.shape], [4, 2, 3]);
  t.deepEqual(values(s).slice(0, 6), [10, 11, 12, 20, 21, 22]);
  assertArray(t, jnp.multiply(jnp.array(2, { dtype: 'int32' }), jnp.array([[1, 2]], { dtype: 'int32' })), { shape: [1, 2], dtype: 'int32', values: [2, 4] });
  assertArray(t, jnp.subtract(5, jnp.zeros([0, 3])), { shape: [0, 3], dtype: 'float32', values: [] });
  assertArray(t, jnp.greater(jnp.array([[1, 2, 3]]), jnp.array([[2], [0]])), { shape: [2, 3], dtype: 'bool', values: [0, 0, 1, 1, 1, 1] });
  assertArray(t, jnp.add(1, 2.5), { shape: [], dtype: 'float32', values: [3.5] });
});

// ---- bad input ----

test('unbroadcastable shapes name the function and both shapes', (t) => {
  const x = jnp.zeros([2, 3]);
  const y = jnp.zeros([4]);
  assertThrowsMentioning(t, () => jnp.add(x, y), 'jnp.add: shapes [2,3] and [4] cannot be broadcast together');
  assertThrowsMentioning(t, () => jnp.arctan2(x, y), 'jnp.arctan2', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => jnp.divide(x, y), 'jnp.trueDivide', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => jnp.logicalAnd(x, y), 'jnp.logicalAnd', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => jnp.equal(x, y), 'jnp.equal', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => jnp.mod(x, y), 'jnp.mod', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => jnp.floorDivide(x, y), 'jnp.floorDivide', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => jnp.power(x, y), 'jnp.power', '[2,3]', '[4]');
});

test('wrong argument types name the function and the argument', (t) => {
  assertThrowsMentioning(t, () => jnp.add('a' as never, 1), 'jnp.add', 'x', "'a'");
  assertThrowsMentioning(t, () => jnp.add(1, { a: 1 } as never), 'jnp.add', 'y');
  assertThrowsMentioning(t, () => jnp.exp(undefined as never), 'jnp.exp', 'undefined');
  assertThrowsMentioning(t, () => jnp.sqrt(null as never), 'jnp.sqrt', 'null');
  assertThrowsMentioning(t, () => jnp.negative('x' as never), 'jnp.negative');
  assertThrowsMentioning(t, () => jnp.where([true], 'a' as never, 1), 'jnp.where');
  assertThrowsMentioning(t, () => jnp.add([[1, 2], [3]], 1), 'jnp.add', 'ragged');
  assertThrowsMentioning(t, () => jnp.multiply([1, 'b'] as never, 1), 'jnp.multiply', "'b'");
  assertThrowsMentioning(t, () => jnp.round(jnp.array([1.5]), 2 as never), 'jnp.round', 'options');
});

test('integers to negative integer powers are an error, as in JAX', (t) => {
  assertThrowsMentioning(t, () => jnp.power(jnp.array([2, 3], { dtype: 'int32' }), -1), 'jnp.power', 'negative', '-1');
  assertArray(t, jnp.power(jnp.array([2, 4], { dtype: 'float32' }), -1), { shape: [2], dtype: 'float32', values: [0.5, 0.25] });
  assertArray(t, jnp.power(jnp.array([2, 4], { dtype: 'int32' }), -1.5), { shape: [2], dtype: 'float32', values: [2 ** -1.5, 4 ** -1.5] });
});

test('disposed arrays are reported, not read', (t) => {
  const x = jnp.array([1, 2]);
  x.dispose();
  assertThrowsMentioning(t, () => jnp.add(x, 1), 'disposed');
});

// ---- kernels against the reference interpreter ----

const UNARY_NAMES = Object.keys(fixture.unary);
const BINARY_NAMES = Object.keys(fixture.binary);

function randomArray(shape: number[], dtype: DType, seed: number): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  let lo = -4;
  let hi = 4;
  if (dtype === 'uint8' || dtype === 'uint32') lo = 0;
  if (dtype === 'int8' || dtype === 'uint8') hi = 100;
  if (dtype === 'int32' || dtype === 'uint32') [lo, hi] = [lo === 0 ? 0 : -50000, 50000];
  const raw = randomValues(n, seed, lo, hi);
  const vals = dtype === 'bool' ? raw.map((v) => v > 0) : dtype.startsWith('float') || dtype === 'bfloat16' ? raw : raw.map(Math.round);
  return lax.reshape(jnp.array(vals as number[], { dtype }), shape);
}

// The kernels against the reference interpreter, dtype by dtype; the emulated GPU's run (helpers/emulator.ts) takes one
// float and one integer dtype of each sweep, the NumPy fixtures above covering every dtype there
const reference = (dtypes: DType[], subset: DType[]): DType[] => (emulatorSubset ? subset : dtypes);

for (const dtype of reference(['float32', 'float16', 'bfloat16', 'float64'], ['bfloat16'])) {
  test(`every unary function's kernels agree with the reference interpreter (${dtype})`, (t) => {
    for (const [k, name] of UNARY_NAMES.entries()) {
      const f = fns[name] as Unary;
      checkAgainstReference(t, () => f(randomArray([3, 4], dtype, 100 + k)), { message: `${name}(${dtype})` });
    }
    checkAgainstReference(t, () => jnp.round(randomArray([5], dtype, 7), { decimals: 2 }), { message: 'round decimals' });
    checkAgainstReference(t, () => jnp.clip(randomArray([5], dtype, 8), -1, 1.5), { message: 'clip' });
  });
}

for (const dtype of reference(['int8', 'uint8', 'int32', 'uint32'], ['int8'])) {
  test(`integer unary functions agree with the reference interpreter (${dtype})`, (t) => {
    for (const name of ['negative', 'abs', 'sign', 'square', 'floor', 'round', 'isnan', 'isfinite', 'logicalNot', 'sqrt', 'exp']) {
      const f = fns[name] as Unary;
      checkAgainstReference(t, () => f(randomArray([7], dtype, 3)), { message: `${name}(${dtype})` });
    }
  });
}

for (const dtype of reference(['int8', 'uint8', 'int32', 'uint32', 'float16', 'bfloat16', 'float32'], ['uint8', 'float16'])) {
  test(`every binary function's kernels agree with the reference interpreter (${dtype})`, (t) => {
    for (const [k, name] of BINARY_NAMES.entries()) {
      const f = fns[name] as Binary;
      let y = () => randomArray([4], dtype, 50 + k);
      if (name === 'power' && !dtype.includes('float')) y = () => jnp.array([0, 1, 3, 5], { dtype });
      checkAgainstReference(t, () => f(randomArray([3, 1], dtype, 20 + k), y()), { message: `${name}(${dtype})` });
    }
    checkAgainstReference(t, () => jnp.where(randomArray([3, 4], 'bool', 9), randomArray([4], dtype, 1), randomArray([3, 1], dtype, 2)), { message: 'where' });
  });
}
