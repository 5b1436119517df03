// Known answers for the float64 reference interpreter, the tests' oracle:
// every primitive at least once, and the edge cases the kernels must match
// (integer wrapping and division, NaN propagation, gather/scatter modes,
// padding, 16-bit float rounding, saturating conversions).
import test, { type ExecutionContext } from 'ava';
import type { DType } from '../lib/core/dtype.js';
import { ValueError } from '../lib/core/errors.js';
import { type Primitive, type PrimitiveParams, abstractEval } from '../lib/core/primitives.js';
import {
  type RefArray,
  evalPrimitive,
  evalPrimitiveChecked,
  refArray,
  referenceRules,
  toNumbers,
} from '../lib/reference/interpreter.js';

const E = {};
const arr = (dtype: DType, values: number[], shape: number[] = [values.length]): RefArray => refArray(shape, dtype, values);
const scalar = (dtype: DType, value: number): RefArray => refArray([], dtype, [value]);
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function run<P extends Primitive>(prim: P, inputs: RefArray[], params: PrimitiveParams[P]): RefArray {
  return evalPrimitive(prim, inputs, params)[0]!;
}

/** Exact comparison that tells -0 from 0 and accepts NaN for NaN. */
function same(t: ExecutionContext, actual: RefArray, expected: number[], shape?: number[], dtype?: DType): void {
  const show = (v: number) => (Object.is(v, -0) ? '-0' : String(v));
  t.deepEqual(toNumbers(actual).map(show), expected.map(show));
  if (shape) t.deepEqual(actual.shape, shape);
  if (dtype) t.is(actual.dtype, dtype);
}

test('every primitive has a reference rule', (t) => {
  t.deepEqual(Object.keys(referenceRules).sort(), Object.keys(abstractEval).sort());
});

test('refArray rounds to the dtype', (t) => {
  same(t, arr('float32', [0.1]), [Math.fround(0.1)]);
  same(t, arr('int8', [1.7, -0.5, 300]), [1, 0, 127]);
  same(t, arr('bool', [0, 2, NaN]), [0, 1, 1]);
  same(t, arr('float16', [1 + 2 ** -11, 65520]), [1, Infinity]);
});

// ---- unary ----

test('neg wraps integers and keeps the sign of zero', (t) => {
  same(t, run('neg', [arr('float32', [1, -2, 0])], E), [-1, 2, -0]);
  same(t, run('neg', [arr('int8', [-128, 5])], E), [-128, -5]);
  same(t, run('neg', [arr('uint8', [1, 0])], E), [255, 0]);
});

test('sign: -1/0/1, ±0 and NaN kept, unsigned 0/1', (t) => {
  same(t, run('sign', [arr('float32', [-3, 0, -0, 2, NaN])], E), [-1, 0, -0, 1, NaN]);
  same(t, run('sign', [arr('int32', [-5, 0, 7])], E), [-1, 0, 1]);
  same(t, run('sign', [arr('uint8', [0, 200])], E), [0, 1]);
});

test('floor, ceil', (t) => {
  same(t, run('floor', [arr('float32', [-1.5, 1.5, -0])], E), [-2, 1, -0]);
  same(t, run('ceil', [arr('float32', [-1.5, 1.5, -0.5])], E), [-1, 2, -0]);
});

test('round away from zero and to nearest even', (t) => {
  const x = arr('float64', [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -0.2]);
  same(t, run('round', [x], { roundingMethod: 'away_from_zero' }), [1, 2, 3, -1, -3, 0, -0]);
  same(t, run('round', [x], { roundingMethod: 'to_nearest_even' }), [0, 2, 2, -0, -2, 0, -0]);
});

test('is_finite gives bool', (t) => {
  same(t, run('is_finite', [arr('float32', [1, Infinity, -Infinity, NaN])], E), [1, 0, 0, 0], [4], 'bool');
});

test('transcendental functions match Math in float64 and round in float32', (t) => {
  const cases: [Primitive, (x: number) => number, number][] = [
    ['exp', Math.exp, 0.5], ['exp2', (x) => 2 ** x, 0.5], ['log', Math.log, 0.5], ['expm1', Math.expm1, 0.5],
    ['log1p', Math.log1p, 0.5], ['tanh', Math.tanh, 0.5], ['sin', Math.sin, 0.5], ['cos', Math.cos, 0.5],
    ['tan', Math.tan, 0.5], ['asin', Math.asin, 0.5], ['acos', Math.acos, 0.5], ['atan', Math.atan, 0.5],
    ['sinh', Math.sinh, 0.5], ['cosh', Math.cosh, 0.5], ['asinh', Math.asinh, 0.5], ['acosh', Math.acosh, 1.5],
    ['atanh', Math.atanh, 0.5], ['sqrt', Math.sqrt, 2], ['rsqrt', (x) => 1 / Math.sqrt(x), 2], ['cbrt', Math.cbrt, 2],
  ];
  for (const [prim, f, x] of cases) {
    same(t, evalPrimitive(prim, [arr('float64', [x])], E as never)[0]!, [f(x)]);
    same(t, evalPrimitive(prim, [arr('float32', [x])], E as never)[0]!, [Math.fround(f(x))]);
  }
  same(t, run('exp2', [arr('float32', [3, -1])], E), [8, 0.5]);
  same(t, run('log', [arr('float32', [0, -1])], E), [-Infinity, NaN]);
});

test('logistic', (t) => {
  same(t, run('logistic', [arr('float32', [0, Infinity, -Infinity])], E), [0.5, 1, 0]);
  same(t, run('logistic', [arr('float64', [2])], E), [1 / (1 + Math.exp(-2))]);
});

test('abs wraps INT_MIN', (t) => {
  same(t, run('abs', [arr('int32', [-2147483648, -3, 4])], E), [-2147483648, 3, 4]);
  same(t, run('abs', [arr('int8', [-128])], E), [-128]);
  same(t, run('abs', [arr('float32', [-0, -2])], E), [0, 2]);
});

test('not: logical on bool, bitwise on integers', (t) => {
  same(t, run('not', [arr('bool', [0, 1])], E), [1, 0]);
  same(t, run('not', [arr('int8', [0, 5])], E), [-1, -6]);
  same(t, run('not', [arr('uint8', [0, 255])], E), [255, 0]);
  same(t, run('not', [arr('uint32', [0])], E), [4294967295]);
});

test('erf to double precision', (t) => {
  // values from mpmath at 40 digits, rounded to float64
  same(t, run('erf', [arr('float64', [0.5, 1, -2, 3, 0.1, 0, -0, Infinity, -Infinity, NaN, 7])], E), [
    0.5204998778130465, 0.8427007929497149, -0.9953222650189527, 0.9999779095030014, 0.1124629160182849, 0, -0, 1, -1, NaN, 1,
  ]);
  same(t, run('erf', [arr('float32', [1])], E), [0.8427007794380188]);
});

test('square and integer_pow wrap integers', (t) => {
  same(t, run('square', [arr('int8', [16, -3])], E), [0, 9]);
  same(t, run('square', [arr('int32', [65536])], E), [0]);
  same(t, run('square', [arr('float32', [3, -0.5])], E), [9, 0.25]);
  same(t, run('integer_pow', [arr('float32', [2, -3])], { y: 3 }), [8, -27]);
  same(t, run('integer_pow', [arr('float32', [2, 3])], { y: -2 }), [0.25, Math.fround(1 / 9)]);
  same(t, run('integer_pow', [arr('float32', [NaN, 0])], { y: 0 }), [1, 1]);
  same(t, run('integer_pow', [arr('int32', [3])], { y: 21 }), [1870418611]); // 3^21 mod 2^32
  same(t, run('integer_pow', [arr('int8', [2])], { y: 7 }), [-128]);
  same(t, run('integer_pow', [arr('uint8', [3])], { y: 5 }), [243]);
});

test('reduce_precision rounds the mantissa to nearest even and clamps the exponent', (t) => {
  const bf16 = { exponentBits: 8, mantissaBits: 7 };
  same(t, run('reduce_precision', [arr('float32', [1 + 2 ** -10, 1 + 3 * 2 ** -8, 1 + 2 ** -8, -(1 + 3 * 2 ** -8)])], bf16), [
    1, 1 + 2 ** -6, 1, -(1 + 2 ** -6),
  ]);
  const f16 = { exponentBits: 5, mantissaBits: 10 };
  same(t, run('reduce_precision', [arr('float32', [70000, 65504, 65520, 2 ** -14, 2 ** -15, -(2 ** -15), NaN, -Infinity])], f16), [
    Infinity, 65504, Infinity, 2 ** -14, 0, -0, NaN, -Infinity,
  ]);
  // no mantissa bits: ties go to the even exponent, as XLA's bit arithmetic does; NaN stays NaN (JAX 0.10 on CPU)
  same(t, run('reduce_precision', [arr('float32', [NaN, 3, 6, 5])], { exponentBits: 8, mantissaBits: 0 }), [NaN, 2, 8, 4]);
  same(t, run('reduce_precision', [arr('float64', [1 + 2 ** -30])], { exponentBits: 8, mantissaBits: 23 }), [1]);
  t.throws(() => run('reduce_precision', [arr('float32', [1])], { exponentBits: 0, mantissaBits: 3 }), { instanceOf: ValueError });
});

test('copy is the identity', (t) => {
  same(t, run('copy', [arr('int16', [1, -2, 3], [3])], E), [1, -2, 3], [3], 'int16');
});

// ---- binary ----

test('add/sub/mul wrap integers', (t) => {
  same(t, run('add', [arr('int8', [127, -128]), arr('int8', [1, -1])], E), [-128, 127]);
  same(t, run('add', [arr('uint8', [250]), arr('uint8', [10])], E), [4]);
  same(t, run('sub', [arr('uint32', [0]), arr('uint32', [1])], E), [4294967295]);
  same(t, run('sub', [arr('int32', [-2147483648]), arr('int32', [1])], E), [2147483647]);
  same(t, run('mul', [arr('int32', [65536, 2147483647, -3]), arr('int32', [65536, 2, 5])], E), [0, -2, -15]);
  same(t, run('mul', [arr('uint32', [4294967295, 65537]), arr('uint32', [4294967295, 65537])], E), [1, 131073]);
  same(t, run('mul', [arr('int16', [300]), arr('int16', [300])], E), [24464]); // 90000 - 65536
});

test('float32 arithmetic rounds once to float32', (t) => {
  same(t, run('add', [arr('float32', [1]), arr('float32', [2 ** -30])], E), [1]);
  same(t, run('add', [arr('float32', [1]), arr('float32', [2 ** -23])], E), [1 + 2 ** -23]);
  same(t, run('div', [arr('float32', [1]), arr('float32', [3])], E), [Math.fround(1 / 3)]);
});

test('float16 and bfloat16 results round to nearest even', (t) => {
  same(t, run('add', [arr('float16', [1, 1]), arr('float16', [2 ** -11, 3 * 2 ** -11])], E), [1, 1 + 2 ** -9]);
  same(t, run('add', [arr('float16', [65504, 65504]), arr('float16', [16, 8])], E), [Infinity, 65504]);
  same(t, run('mul', [arr('float16', [2 ** -24, 3 * 2 ** -24]), arr('float16', [0.5, 0.5])], E), [0, 2 * 2 ** -24]); // subnormal ties
  same(t, run('add', [arr('bfloat16', [256, 258]), arr('bfloat16', [1, 1])], E), [256, 260]);
  same(t, run('mul', [arr('bfloat16', [1 + 2 ** -7]), arr('bfloat16', [1 + 2 ** -7])], E), [1 + 2 ** -6]);
  same(t, run('exp', [arr('bfloat16', [1])], E), [2.71875]);
  same(t, run('sqrt', [arr('float16', [2])], E), [1.4140625]);
});

test('integer div truncates; x/0 is -1 (all ones unsigned); INT_MIN/-1 is INT_MIN', (t) => {
  same(t, run('div', [arr('int32', [7, -7, 7, -7, 5, -2147483648]), arr('int32', [2, 2, -2, -2, 0, -1])], E), [3, -3, -3, 3, -1, -2147483648]);
  same(t, run('div', [arr('int8', [-128, 0]), arr('int8', [-1, 0])], E), [-128, -1]);
  same(t, run('div', [arr('uint8', [5, 200]), arr('uint8', [0, 7])], E), [255, 28]);
  same(t, run('div', [arr('uint32', [5, 4294967295]), arr('uint32', [0, 2])], E), [4294967295, 2147483647]);
  same(t, run('div', [arr('float32', [1, -1, 0, 1]), arr('float32', [0, 0, 0, -0])], E), [Infinity, -Infinity, NaN, -Infinity]);
});

test('rem: sign of the dividend, x % 0 = x for integers, fmod for floats', (t) => {
  same(t, run('rem', [arr('int32', [7, -7, 7, -7, 5, -2147483648]), arr('int32', [2, 2, -2, -2, 0, -1])], E), [1, -1, 1, -1, 5, 0]);
  same(t, run('rem', [arr('uint8', [7, 9]), arr('uint8', [0, 4])], E), [7, 1]);
  same(t, run('rem', [arr('float32', [5.5, -5.5, 1, Infinity, 1, -4]), arr('float32', [2, 2, Infinity, 1, 0, 2])], E), [
    1.5, -1.5, 1, NaN, NaN, -0,
  ]);
});

test('pow follows C', (t) => {
  same(t, run('pow', [arr('float64', [2, 1, -1, 0, NaN, 2, -8]), arr('float64', [10, NaN, Infinity, -1, 0, 0.5, 1 / 3])], E), [
    1024, 1, 1, Infinity, 1, Math.pow(2, 0.5), NaN,
  ]);
  same(t, run('pow', [arr('float32', [2, 4]), arr('float32', [0.5, -0.5])], E), [Math.fround(Math.pow(2, 0.5)), 0.5]);
});

test('max/min propagate NaN', (t) => {
  const a = arr('float32', [1, NaN, 2, -Infinity]);
  const b = arr('float32', [NaN, 3, 1, 5]);
  same(t, run('max', [a, b], E), [NaN, NaN, 2, 5]);
  same(t, run('min', [a, b], E), [NaN, NaN, 1, -Infinity]);
  same(t, run('max', [arr('uint32', [4294967295]), arr('uint32', [1])], E), [4294967295]);
  same(t, run('min', [arr('bool', [1, 0]), arr('bool', [1, 1])], E), [1, 0]);
});

test('atan2', (t) => {
  same(t, run('atan2', [arr('float64', [1, 0, -0]), arr('float64', [1, -1, -1])], E), [Math.PI / 4, Math.PI, -Math.PI]);
});

test('and/or/xor: logical on bool, bitwise on integers', (t) => {
  const p = arr('bool', [0, 0, 1, 1]);
  const q = arr('bool', [0, 1, 0, 1]);
  same(t, run('and', [p, q], E), [0, 0, 0, 1]);
  same(t, run('or', [p, q], E), [0, 1, 1, 1]);
  same(t, run('xor', [p, q], E), [0, 1, 1, 0]);
  same(t, run('and', [arr('int8', [12]), arr('int8', [10])], E), [8]);
  same(t, run('or', [arr('int8', [12]), arr('int8', [10])], E), [14]);
  same(t, run('xor', [arr('int32', [-1]), arr('int32', [1])], E), [-2]);
  same(t, run('and', [arr('uint32', [0xffffffff]), arr('uint32', [0xf0f0f0f0])], E), [0xf0f0f0f0]);
  same(t, run('or', [arr('uint8', [0x80]), arr('uint8', [0x01])], E), [0x81]);
});

test('nextafter steps in the dtype', (t) => {
  same(t, run('nextafter', [arr('float32', [1, 1, 0, 0, -1, 2, NaN]), arr('float32', [2, 0, 1, -1, -2, 2, 1])], E), [
    1 + 2 ** -23, 1 - 2 ** -24, 2 ** -149, -(2 ** -149), -(1 + 2 ** -23), 2, NaN,
  ]);
  same(t, run('nextafter', [arr('float64', [1, 0]), arr('float64', [2, -1])], E), [1 + 2 ** -52, -5e-324]);
  same(t, run('nextafter', [arr('float32', [3.4028234663852886e38, -0]), arr('float32', [Infinity, 0])], E), [Infinity, 0]);
  same(t, run('nextafter', [arr('float16', [1]), arr('float16', [2])], E), [1 + 2 ** -10]);
});

test('comparisons give bool; NaN compares false except ne', (t) => {
  const a = arr('float32', [1, 2, NaN, -0]);
  const b = arr('float32', [2, 2, NaN, 0]);
  same(t, run('eq', [a, b], E), [0, 1, 0, 1], [4], 'bool');
  same(t, run('ne', [a, b], E), [1, 0, 1, 0]);
  same(t, run('lt', [a, b], E), [1, 0, 0, 0]);
  same(t, run('le', [a, b], E), [1, 1, 0, 1]);
  same(t, run('gt', [a, b], E), [0, 0, 0, 0]);
  same(t, run('ge', [a, b], E), [0, 1, 0, 1]);
  same(t, run('gt', [arr('uint32', [4294967295]), arr('uint32', [1])], E), [1]);
});

// ---- select, clamp, convert ----

test('select_n with bool, scalar and int32 predicates', (t) => {
  const c0 = arr('float32', [1, 2, 3]);
  const c1 = arr('float32', [4, 5, 6]);
  const c2 = arr('float32', [7, 8, 9]);
  same(t, run('select_n', [arr('bool', [1, 0, 1]), c0, c1], E), [4, 2, 6]);
  same(t, run('select_n', [scalar('bool', 1), c0, c1], E), [4, 5, 6]);
  same(t, run('select_n', [arr('int32', [0, 2, 1]), c0, c1, c2], E), [1, 8, 6]);
  same(t, run('select_n', [scalar('int32', 2), c0, c1, c2], E), [7, 8, 9]);
});

test('clamp with scalar and array bounds; NaN propagates', (t) => {
  same(t, run('clamp', [scalar('float32', 0), arr('float32', [-1, 0.5, 2, NaN]), scalar('float32', 1)], E), [0, 0.5, 1, NaN]);
  same(t, run('clamp', [arr('int32', [0, 5]), arr('int32', [-3, 3]), arr('int32', [10, 8])], E), [0, 5]);
  same(t, run('clamp', [scalar('float32', NaN), arr('float32', [1]), scalar('float32', 2)], E), [NaN]);
});

test('convert_element_type: truncation, saturation, NaN → 0, wrapping, bool', (t) => {
  const cvt = (x: RefArray, newDtype: DType) => run('convert_element_type', [x], { newDtype, weakType: false });
  same(t, cvt(arr('float32', [1.9, -1.9, 300, -300, NaN, Infinity, -0.5]), 'int8'), [1, -1, 127, -128, 0, 127, 0], [7], 'int8');
  same(t, cvt(arr('float32', [-5, 256.5, 3.99]), 'uint8'), [0, 255, 3]);
  same(t, cvt(arr('float64', [3e9, -3e9, 4294967296]), 'int32'), [2147483647, -2147483648, 2147483647]);
  same(t, cvt(arr('float64', [-1, 4294967295.5, 5e9]), 'uint32'), [0, 4294967295, 4294967295]);
  same(t, cvt(arr('int32', [200, -129, 255]), 'int8'), [-56, 127, -1]);
  same(t, cvt(arr('int32', [-1]), 'uint32'), [4294967295]);
  same(t, cvt(arr('uint32', [4294967295]), 'int32'), [-1]);
  same(t, cvt(arr('uint16', [65535]), 'int16'), [-1]);
  same(t, cvt(arr('float32', [0, -0, NaN, 0.5, -Infinity]), 'bool'), [0, 0, 1, 1, 1]);
  same(t, cvt(arr('int8', [0, -3]), 'bool'), [0, 1]);
  same(t, cvt(arr('bool', [1, 0]), 'float32'), [1, 0]);
  same(t, cvt(arr('bool', [1, 0]), 'int32'), [1, 0]);
  same(t, cvt(arr('float64', [65520, 1 + 2 ** -11, 1 + 3 * 2 ** -11]), 'float16'), [Infinity, 1, 1 + 2 ** -9]);
  same(t, cvt(arr('float64', [1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.5e38]), 'bfloat16'), [1, 1 + 2 ** -6, Infinity]);
  same(t, cvt(arr('int32', [16777217]), 'float32'), [16777216]);
  same(t, cvt(arr('uint32', [70000]), 'float16'), [Infinity]);
  same(t, cvt(arr('float16', [65504]), 'int16'), [32767]);
  same(t, cvt(arr('float32', [-0]), 'float64'), [-0]);
});

// ---- structural ----

test('iota', (t) => {
  same(t, run('iota', [], { dtype: 'int32', shape: [2, 3], dimension: 1 }), [0, 1, 2, 0, 1, 2], [2, 3], 'int32');
  same(t, run('iota', [], { dtype: 'float32', shape: [2, 3], dimension: 0 }), [0, 0, 0, 1, 1, 1]);
  same(t, run('iota', [], { dtype: 'uint8', shape: [0], dimension: 0 }), [], [0]);
});

test('broadcast_in_dim', (t) => {
  same(t, run('broadcast_in_dim', [arr('float32', [1, 2, 3])], { shape: [2, 3], broadcastDimensions: [1] }), [1, 2, 3, 1, 2, 3], [2, 3]);
  same(t, run('broadcast_in_dim', [arr('float32', [1, 2], [2, 1])], { shape: [2, 3], broadcastDimensions: [0, 1] }), [1, 1, 1, 2, 2, 2]);
  same(t, run('broadcast_in_dim', [scalar('int8', 7)], { shape: [2, 2], broadcastDimensions: [] }), [7, 7, 7, 7]);
  same(t, run('broadcast_in_dim', [arr('int8', [1, 2])], { shape: [2, 2, 2], broadcastDimensions: [1] }), [1, 1, 2, 2, 1, 1, 2, 2]);
});

test('reshape and squeeze keep row-major order', (t) => {
  same(t, run('reshape', [arr('float32', range(6), [2, 3])], { newSizes: [3, 2] }), range(6), [3, 2]);
  same(t, run('squeeze', [arr('float32', [1, 2, 3], [1, 3, 1])], { dimensions: [0, 2] }), [1, 2, 3], [3]);
});

test('transpose: out.shape[i] = in.shape[perm[i]]', (t) => {
  same(t, run('transpose', [arr('float32', range(6), [2, 3])], { permutation: [1, 0] }), [0, 3, 1, 4, 2, 5], [3, 2]);
  const expected: number[] = [];
  for (let i = 0; i < 4; i++) for (let j = 0; j < 2; j++) for (let k = 0; k < 3; k++) expected.push(j * 12 + k * 4 + i);
  same(t, run('transpose', [arr('int32', range(24), [2, 3, 4])], { permutation: [2, 0, 1] }), expected, [4, 2, 3]);
});

test('rev', (t) => {
  same(t, run('rev', [arr('float32', range(6), [2, 3])], { dimensions: [1] }), [2, 1, 0, 5, 4, 3]);
  same(t, run('rev', [arr('float32', range(6), [2, 3])], { dimensions: [0, 1] }), [5, 4, 3, 2, 1, 0]);
  same(t, run('rev', [arr('float32', [], [0, 2])], { dimensions: [0] }), [], [0, 2]);
});

test('slice with and without strides', (t) => {
  same(t, run('slice', [arr('int32', range(10))], { startIndices: [2], limitIndices: [9], strides: [3] }), [2, 5, 8], [3]);
  same(t, run('slice', [arr('int32', range(12), [3, 4])], { startIndices: [1, 1], limitIndices: [3, 3], strides: null }), [5, 6, 9, 10], [2, 2]);
  same(t, run('slice', [arr('int32', range(12), [3, 4])], { startIndices: [0, 0], limitIndices: [3, 4], strides: [2, 3] }), [0, 3, 8, 11]);
});

test('pad with low, high, interior and negative padding', (t) => {
  const x = arr('float32', [1, 2, 3]);
  const zero = scalar('float32', 0);
  same(t, run('pad', [x, zero], { paddingConfig: [[1, 2, 1]] }), [0, 1, 0, 2, 0, 3, 0, 0], [8]);
  same(t, run('pad', [x, zero], { paddingConfig: [[-1, 0, 1]] }), [0, 2, 0, 3], [4]);
  same(t, run('pad', [x, zero], { paddingConfig: [[0, -2, 0]] }), [1], [1]);
  same(t, run('pad', [x, scalar('float32', 9)], { paddingConfig: [[-2, -1, 0]] }), [], [0]);
  same(t, run('pad', [x, scalar('float32', 9)], { paddingConfig: [[-1, -1, 2]] }), [9, 9, 2, 9, 9], [5]);
  same(t, run('pad', [arr('int8', [1, 2, 3, 4], [2, 2]), scalar('int8', -1)], { paddingConfig: [[1, 0, 0], [0, 1, 1]] }), [
    -1, -1, -1, -1, 1, -1, 2, -1, 3, -1, 4, -1,
  ], [3, 4]);
  same(t, run('pad', [arr('float32', [], [0]), scalar('float32', 5)], { paddingConfig: [[1, 1, 3]] }), [5, 5], [2]);
});

test('concatenate', (t) => {
  same(t, run('concatenate', [arr('int32', [1, 2], [2, 1]), arr('int32', [3, 4, 5, 6], [2, 2])], { dimension: 1 }), [1, 3, 4, 2, 5, 6], [2, 3]);
  same(t, run('concatenate', [arr('int32', [1, 2]), arr('int32', []), arr('int32', [3])], { dimension: 0 }), [1, 2, 3], [3]);
  same(t, run('concatenate', [arr('int32', [1, 2], [1, 2]), arr('int32', [3, 4], [1, 2])], { dimension: 0 }), [1, 2, 3, 4], [2, 2]);
});

// ---- indexing ----

test('dynamic_slice clamps start indices into range', (t) => {
  const x = arr('float32', range(5));
  const ds = (start: number) => run('dynamic_slice', [x, scalar('int32', start)], { sliceSizes: [3] });
  same(t, ds(1), [1, 2, 3]);
  same(t, ds(3), [2, 3, 4]);
  same(t, ds(-2), [0, 1, 2]);
  same(t, run('dynamic_slice', [arr('int32', range(12), [3, 4]), scalar('int32', 2), scalar('uint8', 1)], { sliceSizes: [2, 2] }), [5, 6, 9, 10]);
});

test('dynamic_update_slice clamps start indices into range', (t) => {
  const x = arr('float32', [0, 0, 0, 0, 0]);
  const u = arr('float32', [1, 2]);
  same(t, run('dynamic_update_slice', [x, u, scalar('int32', 1)], E), [0, 1, 2, 0, 0]);
  same(t, run('dynamic_update_slice', [x, u, scalar('int32', 4)], E), [0, 0, 0, 1, 2]);
  same(t, run('dynamic_update_slice', [x, u, scalar('int32', -1)], E), [1, 2, 0, 0, 0]);
  same(t, run('dynamic_update_slice', [arr('int32', range(9), [3, 3]), arr('int32', [-1, -2], [1, 2]), scalar('int32', 1), scalar('int32', 5)], E), [
    0, 1, 2, 3, -1, -2, 6, 7, 8,
  ]);
});

const pointGather = { offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0] };

test('gather of points: clip clamps, fill fills the out-of-range ones', (t) => {
  const x = arr('float32', [10, 20, 30, 40, 50]);
  const idx = arr('int32', [1, 4, 7, -1], [4, 1]);
  const g = (mode: 'clip' | 'fill', fillValue: number | null, operand = x) =>
    run('gather', [operand, idx], { dimensionNumbers: pointGather, sliceSizes: [1], mode, fillValue });
  same(t, g('clip', null), [20, 50, 50, 10], [4]);
  same(t, g('fill', null), [20, 50, NaN, NaN]);
  same(t, g('fill', 0), [20, 50, 0, 0]);
  same(t, g('fill', null, arr('int32', [1, 2, 3, 4, 5])), [2, 5, -2147483648, -2147483648]);
  same(t, g('fill', null, arr('uint8', [1, 2, 3, 4, 5])), [2, 5, 255, 255]);
  same(t, g('fill', null, arr('bool', [0, 0, 0, 0, 0])), [0, 0, 1, 1]);
  same(t, g('fill', 0.1, x), [20, 50, Math.fround(0.1), Math.fround(0.1)]);
});

test('gather of rows and of windows', (t) => {
  const x = arr('float32', range(12), [3, 4]);
  const rows = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0] };
  const idx = arr('int32', [2, 0], [2, 1]);
  same(t, run('gather', [x, idx], { dimensionNumbers: rows, sliceSizes: [1, 4], mode: 'clip', fillValue: null }), [
    8, 9, 10, 11, 0, 1, 2, 3,
  ], [2, 4]);
  // offset axis first: out[o, b] = x[idx[b], o]
  const rowsT = { offsetDims: [0], collapsedSliceDims: [0], startIndexMap: [0] };
  same(t, run('gather', [x, idx], { dimensionNumbers: rowsT, sliceSizes: [1, 4], mode: 'clip', fillValue: null }), [
    8, 0, 9, 1, 10, 2, 11, 3,
  ], [4, 2]);
  // 2x2 windows at (0,1) and (2,3); the second does not fit (max start (1,2))
  const windows = { offsetDims: [1, 2], collapsedSliceDims: [], startIndexMap: [0, 1] };
  const starts = arr('int32', [0, 1, 2, 3], [2, 2]);
  same(t, run('gather', [x, starts], { dimensionNumbers: windows, sliceSizes: [2, 2], mode: 'clip', fillValue: null }), [
    1, 2, 5, 6, 6, 7, 10, 11,
  ], [2, 2, 2]);
  same(t, run('gather', [x, starts], { dimensionNumbers: windows, sliceSizes: [2, 2], mode: 'fill', fillValue: -1 }), [
    1, 2, 5, 6, -1, -1, -1, -1,
  ]);
  // index vector mapped to axis 1 only: columns gathered, start index map reorders
  const cols = { offsetDims: [0], collapsedSliceDims: [1], startIndexMap: [1] };
  same(t, run('gather', [x, arr('int32', [3, 1], [2, 1])], { dimensionNumbers: cols, sliceSizes: [3, 1], mode: 'clip', fillValue: null }), [
    3, 1, 7, 5, 11, 9,
  ], [3, 2]);
});

const pointScatter = { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };

test('scatter: the last repeated index wins; scatter_add sums repeats', (t) => {
  const x = arr('float32', [0, 0, 0, 0, 0]);
  const idx = arr('int32', [1, 3, 1], [3, 1]);
  const u = arr('float32', [5, 6, 7]);
  same(t, run('scatter', [x, idx, u], { dimensionNumbers: pointScatter, mode: 'fill' }), [0, 7, 0, 6, 0]);
  same(t, run('scatter_add', [x, idx, u], { dimensionNumbers: pointScatter, mode: 'fill' }), [0, 12, 0, 6, 0]);
  same(t, run('scatter_add', [arr('int8', [120, 0]), arr('int32', [0, 0], [2, 1]), arr('int8', [5, 5])], { dimensionNumbers: pointScatter, mode: 'clip' }), [
    -126, 0,
  ]);
  same(t, run('scatter_add', [arr('bool', [0, 1]), arr('int32', [0, 1], [2, 1]), arr('bool', [1, 1])], { dimensionNumbers: pointScatter, mode: 'clip' }), [
    1, 1,
  ]);
});

test('scatter out of bounds: fill drops, clip clamps', (t) => {
  const x = arr('float32', [0, 0, 0, 0, 0]);
  const idx = arr('int32', [5, -1, 2], [3, 1]);
  const u = arr('float32', [1, 2, 3]);
  same(t, run('scatter', [x, idx, u], { dimensionNumbers: pointScatter, mode: 'fill' }), [0, 0, 3, 0, 0]);
  same(t, run('scatter', [x, idx, u], { dimensionNumbers: pointScatter, mode: 'clip' }), [2, 0, 3, 0, 1]);
  same(t, run('scatter_add', [x, idx, u], { dimensionNumbers: pointScatter, mode: 'fill' }), [0, 0, 3, 0, 0]);
});

test('scatter of windows: a window that does not fit is dropped whole (fill) or moved (clip)', (t) => {
  const x = arr('float32', new Array(9).fill(0), [3, 3]);
  const idx = arr('int32', [0, 1, 2, 2], [2, 2]);
  const u = arr('float32', [1, 2, 3, 4, 5, 6, 7, 8], [2, 2, 2]);
  const dn = { updateWindowDims: [1, 2], insertedWindowDims: [], scatterDimsToOperandDims: [0, 1] };
  same(t, run('scatter', [x, idx, u], { dimensionNumbers: dn, mode: 'fill' }), [0, 1, 2, 0, 3, 4, 0, 0, 0]);
  same(t, run('scatter', [x, idx, u], { dimensionNumbers: dn, mode: 'clip' }), [0, 1, 2, 0, 5, 6, 0, 7, 8]);
  same(t, run('scatter_add', [x, idx, u], { dimensionNumbers: dn, mode: 'clip' }), [0, 1, 2, 0, 8, 10, 0, 7, 8]);
});

test('scatter with the window axis before the batch axis in updates', (t) => {
  // updates[w, b] goes to operand[idx[b], w]
  const dn = { updateWindowDims: [0], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
  const out = run('scatter', [arr('int32', new Array(6).fill(0), [3, 2]), arr('int32', [0, 2, 1], [3, 1]), arr('int32', [1, 2, 3, 4, 5, 6], [2, 3])], {
    dimensionNumbers: dn,
    mode: 'clip',
  });
  same(t, out, [1, 4, 3, 6, 2, 5], [3, 2]);
});

// ---- reductions ----

test('reduce_sum/prod over axes, with empty reductions', (t) => {
  const x = arr('float32', [1, 2, 3, 4, 5, 6], [2, 3]);
  same(t, run('reduce_sum', [x], { axes: [1] }), [6, 15], [2]);
  same(t, run('reduce_sum', [x], { axes: [0] }), [5, 7, 9], [3]);
  same(t, run('reduce_sum', [x], { axes: [0, 1] }), [21], []);
  same(t, run('reduce_sum', [x], { axes: [] }), [1, 2, 3, 4, 5, 6], [2, 3]);
  same(t, run('reduce_sum', [arr('float32', [-0, -0])], { axes: [] }), [-0, -0]); // XLA returns the operand
  same(t, run('reduce_sum', [arr('float32', [-0, -0])], { axes: [0] }), [0]); // 0 (the init value) + -0 + -0
  same(t, run('reduce_prod', [x], { axes: [1] }), [6, 120]);
  same(t, run('reduce_sum', [arr('float32', [], [0, 3])], { axes: [0] }), [0, 0, 0], [3]);
  same(t, run('reduce_prod', [arr('float32', [], [2, 0])], { axes: [1] }), [1, 1], [2]);
  same(t, run('reduce_sum', [arr('int8', [100, 100, 100])], { axes: [0] }), [44]); // 300 - 256
  same(t, run('reduce_prod', [arr('int32', [65536, 65536, 3])], { axes: [0] }), [0]);
  same(t, run('reduce_sum', [arr('float16', [2048, 1, 1])], { axes: [0] }), [2050]); // float64 accumulation, one rounding
});

test('reduce_max/min: NaN propagates; empty gives the identity', (t) => {
  same(t, run('reduce_max', [arr('float32', [1, NaN, 3])], { axes: [0] }), [NaN]);
  same(t, run('reduce_min', [arr('float32', [1, NaN, 3])], { axes: [0] }), [NaN]);
  same(t, run('reduce_max', [arr('float32', [1, 5, 3, -2], [2, 2])], { axes: [1] }), [5, 3]);
  same(t, run('reduce_min', [arr('int32', [1, 5, 3, -2], [2, 2])], { axes: [0] }), [1, -2]);
  same(t, run('reduce_max', [arr('float32', [])], { axes: [0] }), [-Infinity]);
  same(t, run('reduce_min', [arr('float32', [])], { axes: [0] }), [Infinity]);
  same(t, run('reduce_max', [arr('int8', [])], { axes: [0] }), [-128]);
  same(t, run('reduce_min', [arr('uint8', [])], { axes: [0] }), [255]);
  same(t, run('reduce_max', [arr('bool', [])], { axes: [0] }), [0]);
  same(t, run('reduce_min', [arr('bool', [])], { axes: [0] }), [1]);
});

test('reduce_and/or: logical on bool, bitwise on integers', (t) => {
  same(t, run('reduce_and', [arr('bool', [1, 1, 1, 0], [2, 2])], { axes: [1] }), [1, 0]);
  same(t, run('reduce_or', [arr('bool', [0, 0, 1, 0], [2, 2])], { axes: [1] }), [0, 1]);
  same(t, run('reduce_and', [arr('int8', [12, 10])], { axes: [0] }), [8]);
  same(t, run('reduce_or', [arr('uint32', [0x80000000, 1])], { axes: [0] }), [0x80000001]);
  same(t, run('reduce_and', [arr('uint8', [])], { axes: [0] }), [255]);
  same(t, run('reduce_and', [arr('int32', [])], { axes: [0] }), [-1]);
  same(t, run('reduce_and', [arr('bool', [])], { axes: [0] }), [1]);
  same(t, run('reduce_or', [arr('int16', [])], { axes: [0] }), [0]);
});

test('argmax/argmin: first extreme, first NaN wins', (t) => {
  const x = arr('float32', [1, 3, 3, NaN, 5, NaN], [2, 3]);
  same(t, run('argmax', [x], { axes: [1], indexDtype: 'int32' }), [1, 0], [2], 'int32');
  same(t, run('argmin', [x], { axes: [1], indexDtype: 'int32' }), [0, 0]);
  same(t, run('argmax', [arr('float32', [1, 5, NaN, NaN])], { axes: [0], indexDtype: 'int32' }), [2]);
  same(t, run('argmin', [arr('float32', [3, 1, 1, -Infinity, -Infinity])], { axes: [0], indexDtype: 'uint8' }), [3], [], 'uint8');
  same(t, run('argmax', [arr('int32', [4, 9, 9, 1, 0, 2], [3, 2])], { axes: [0], indexDtype: 'int32' }), [1, 0]);
  same(t, run('argmin', [arr('int32', [4, 9, 9, 1, 0, 2], [3, 2])], { axes: [0], indexDtype: 'int32' }), [2, 1]);
  same(t, run('argmax', [arr('bool', [0, 1, 1])], { axes: [0], indexDtype: 'int32' }), [1]);
});

test('cumulative ops, forward and reverse', (t) => {
  same(t, run('cumsum', [arr('float32', [1, 2, 3])], { axis: 0, reverse: false }), [1, 3, 6]);
  same(t, run('cumsum', [arr('float32', [1, 2, 3])], { axis: 0, reverse: true }), [6, 5, 3]);
  same(t, run('cumsum', [arr('int32', range(6), [2, 3])], { axis: 0, reverse: false }), [0, 1, 2, 3, 5, 7]);
  same(t, run('cumsum', [arr('int32', range(6), [2, 3])], { axis: 1, reverse: true }), [3, 3, 2, 12, 9, 5]);
  same(t, run('cumsum', [arr('int8', [100, 100, -100])], { axis: 0, reverse: false }), [100, -56, 100]);
  same(t, run('cumprod', [arr('float32', [1, 2, 3, 4])], { axis: 0, reverse: false }), [1, 2, 6, 24]);
  same(t, run('cumprod', [arr('float32', [1, 2, 3, 4])], { axis: 0, reverse: true }), [24, 24, 12, 4]);
  same(t, run('cummax', [arr('float32', [1, 3, 2, NaN, 5])], { axis: 0, reverse: false }), [1, 3, 3, NaN, NaN]);
  same(t, run('cummin', [arr('float32', [4, 3, 5, 1, 2])], { axis: 0, reverse: true }), [1, 1, 1, 1, 2]);
  same(t, run('cummin', [arr('float32', [4, NaN, 5, 1])], { axis: 0, reverse: true }), [NaN, NaN, 1, 1]);
  same(t, run('cummax', [arr('bool', [0, 1, 0])], { axis: 0, reverse: false }), [0, 1, 1]);
  same(t, run('cumsum', [arr('float32', [], [0, 2])], { axis: 0, reverse: false }), [], [0, 2]);
});

// ---- dot_general ----

test('dot_general: matmul, contracting the second axes, free axis order', (t) => {
  const a = arr('float32', [1, 2, 3, 4, 5, 6], [2, 3]);
  const b = arr('float32', [1, 0, 0, 1, 1, 1], [3, 2]);
  const matmul = { dimensionNumbers: [[[1], [0]], [[], []]] as PrimitiveParams['dot_general']['dimensionNumbers'], preferredElementType: null };
  same(t, run('dot_general', [a, b], matmul), [4, 5, 10, 11], [2, 2], 'float32');
  const bT = arr('float32', [1, 1, 1, 0, 1, 2], [2, 3]);
  same(t, run('dot_general', [a, bT], { dimensionNumbers: [[[1], [1]], [[], []]], preferredElementType: null }), [6, 8, 15, 17], [2, 2]);
  const out = run('dot_general', [arr('float32', range(24), [2, 3, 4]), arr('float32', new Array(15).fill(1), [3, 5])], {
    dimensionNumbers: [[[1], [0]], [[], []]],
    preferredElementType: null,
  });
  t.deepEqual(out.shape, [2, 4, 5]);
  t.is(out.data[(1 * 4 + 2) * 5 + 3], 12 + 2 + 16 + 2 + 20 + 2); // Σ_j x[1, j, 2]
  same(t, run('dot_general', [arr('float32', [1, 2]), arr('float32', [3, 4])], { dimensionNumbers: [[[], []], [[], []]], preferredElementType: null }), [
    3, 4, 6, 8,
  ], [2, 2]);
  same(t, run('dot_general', [arr('float32', [], [2, 0]), arr('float32', [], [0, 3])], matmul), [0, 0, 0, 0, 0, 0], [2, 3]);
});

test('dot_general with batch axes, leading or not', (t) => {
  const lhs = arr('float32', range(12).map((i) => i + 1), [2, 2, 3]);
  const rhs = arr('float32', range(6).map((i) => i + 1), [2, 3, 1]);
  same(t, run('dot_general', [lhs, rhs], { dimensionNumbers: [[[2], [1]], [[0], [0]]], preferredElementType: null }), [14, 32, 122, 167], [2, 2, 1]);
  // lhs [3, 2] batch on axis 1, rhs [2, 3] batch on axis 0
  const l2 = arr('float32', [1, 2, 3, 4, 5, 6], [3, 2]);
  const r2 = arr('float32', [1, 1, 1, 1, 2, 3], [2, 3]);
  same(t, run('dot_general', [l2, r2], { dimensionNumbers: [[[0], [1]], [[1], [0]]], preferredElementType: null }), [9, 28], [2]);
});

test('dot_general integer wrapping and preferred element types', (t) => {
  const dn: PrimitiveParams['dot_general']['dimensionNumbers'] = [[[0], [0]], [[], []]];
  same(t, run('dot_general', [arr('int8', [100, 100]), arr('int8', [100, 100])], { dimensionNumbers: dn, preferredElementType: 'int32' }), [20000], [], 'int32');
  same(t, run('dot_general', [arr('int8', [100, 100]), arr('int8', [100, 100])], { dimensionNumbers: dn, preferredElementType: null }), [32], [], 'int8'); // 20000 mod 256
  same(t, run('dot_general', [arr('int32', [65536, 1]), arr('int32', [65536, 5])], { dimensionNumbers: dn, preferredElementType: null }), [5]);
  same(t, run('dot_general', [arr('uint32', [4294967295]), arr('uint32', [2])], { dimensionNumbers: dn, preferredElementType: null }), [4294967294]);
  const h = arr('float16', [1 + 2 ** -10]);
  same(t, run('dot_general', [h, h], { dimensionNumbers: dn, preferredElementType: null }), [1 + 2 ** -9], [], 'float16');
  same(t, run('dot_general', [h, h], { dimensionNumbers: dn, preferredElementType: 'float32' }), [1 + 2 ** -9 + 2 ** -20], [], 'float32');
  same(t, run('dot_general', [arr('bfloat16', [256, 1]), arr('bfloat16', [1, 1])], { dimensionNumbers: dn, preferredElementType: null }), [256]);
  same(t, run('dot_general', [arr('bfloat16', [256, 1]), arr('bfloat16', [1, 1])], { dimensionNumbers: dn, preferredElementType: 'float32' }), [257]);
});

// ---- the interpreter's boundary ----

test('evalPrimitive validates through abstractEval', (t) => {
  // JAX's lax shape and dtype rules raise TypeErrors
  t.throws(() => run('add', [arr('float32', [1, 2]), arr('float32', [1])], E), { instanceOf: TypeError, message: /shapes/ });
  t.throws(() => run('add', [arr('float32', [1]), arr('int32', [1])], E), { instanceOf: TypeError, message: 'lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add is a similar function that does automatic type promotion on inputs).' });
  t.throws(() => run('pow', [arr('int32', [1]), arr('int32', [1])], E), { instanceOf: ValueError });
  t.throws(() => evalPrimitive('neg', [{ shape: [3], dtype: 'float32', data: new Float64Array(2) }], E), { instanceOf: ValueError, message: /3 values|2 values/ });
});

test('evalPrimitiveChecked rejects unrepresentable inputs and returns plain values', (t) => {
  const bad: RefArray = { shape: [1], dtype: 'float32', data: Float64Array.of(0.1) };
  t.throws(() => evalPrimitiveChecked('neg', [bad], E), { instanceOf: ValueError, message: /not representable in float32/ });
  const badInt: RefArray = { shape: [1], dtype: 'uint8', data: Float64Array.of(256) };
  t.throws(() => evalPrimitiveChecked('neg', [badInt], E), { instanceOf: ValueError });
  const [r] = evalPrimitiveChecked('add', [arr('int8', [127]), arr('int8', [1])], E);
  t.deepEqual(r, { shape: [1], dtype: 'int8', values: [-128] });
});

test('reductions and dot_general on 1e5 elements run quickly', (t) => {
  const n = 100_000;
  const x = arr('float32', range(n).map((i) => (i % 7) - 3), [100, 1000]);
  const start = performance.now();
  const s = run('reduce_sum', [x], { axes: [0, 1] });
  const cols = run('reduce_max', [x], { axes: [0] });
  const w = arr('float32', new Array(1000 * 10).fill(1), [1000, 10]);
  const y = run('dot_general', [x, w], { dimensionNumbers: [[[1], [0]], [[], []]], preferredElementType: null });
  const elapsed = performance.now() - start;
  t.is(s.data[0], range(n).reduce((acc, i) => acc + (i % 7) - 3, 0));
  t.is(cols.shape[0], 1000);
  t.deepEqual(y.shape, [100, 10]);
  t.true(elapsed < 2000, `took ${elapsed.toFixed(0)} ms`);
});
