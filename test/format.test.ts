// Array printing against NumPy 2 and JAX: every case in fixtures/format.json
// (made by fixtures/gen_format.py from numpy, checked against jax) printed
// both ways, plus hand-written cases for the shapes of output that matter most.
import test from 'ava';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DType } from '../lib/core/dtype.js';
import { formatArray } from '../lib/core/format.js';

interface FormatCase {
  name: string;
  values: (number | 'nan' | 'inf' | '-inf')[];
  shape: number[];
  dtype: DType;
  str: string;
  repr: string;
}

const fixturePath = path.resolve(process.cwd(), 'test/fixtures/format.json');
const cases = JSON.parse(fs.readFileSync(fixturePath, 'utf8')) as FormatCase[];

const decode = (v: FormatCase['values'][number]): number =>
  v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v;

test('the fixture file has cases', (t) => {
  t.true(cases.length > 100);
});

cases.forEach((c, i) => {
  test(`fixture ${i}: ${c.name}`, (t) => {
    const values = c.values.map(decode);
    t.is(formatArray(values, c.shape, c.dtype), c.str, 'str');
    t.is(formatArray(values, c.shape, c.dtype, { mode: 'repr' }), c.repr, 'repr');
  });
});

const str = (values: number[], shape: number[], dtype: DType): string => formatArray(values, shape, dtype);
const repr = (values: number[], shape: number[], dtype: DType): string =>
  formatArray(values, shape, dtype, { mode: 'repr' });

test('str of small arrays', (t) => {
  t.is(str([1, 2, 3], [3], 'float32'), '[1. 2. 3.]');
  t.is(str([1, 2, 3, 4], [2, 2], 'int32'), '[[1 2]\n [3 4]]');
  t.is(str([1, 0], [2], 'bool'), '[ True False]');
  t.is(str([1.5], [], 'float32'), '1.5');
  t.is(str([1], [], 'float32'), '1.0');
  t.is(str([], [0], 'float32'), '[]');
  t.is(str([], [3, 0], 'int32'), '[]');
});

test('repr of small arrays', (t) => {
  t.is(repr([1, 2, 3], [3], 'float32'), 'Array([1., 2., 3.], dtype=float32)');
  t.is(repr([1, 2, 3, 4], [2, 2], 'int32'), 'Array([[1, 2],\n       [3, 4]], dtype=int32)');
  t.is(repr([1.5], [], 'float32'), 'Array(1.5, dtype=float32)');
  t.is(repr([1], [], 'float32'), 'Array(1., dtype=float32)');
  t.is(repr([], [0], 'float32'), 'Array([], shape=(0,), dtype=float32)');
  t.is(repr([], [2, 0], 'float32'), 'Array([], shape=(2, 0), dtype=float32)');
  t.is(repr([1, 0], [2], 'bool'), 'Array([ True, False], dtype=bool)');
  t.is(repr([1], [], 'bool'), 'Array(True, dtype=bool)');
});

test('non-finite values and negative zero', (t) => {
  t.is(str([NaN, Infinity], [2], 'float32'), '[nan inf]');
  t.is(str([NaN, -Infinity], [2], 'float32'), '[ nan -inf]');
  t.is(str([-0, 1], [2], 'float32'), '[-0.  1.]');
  t.is(str([-0], [], 'float64'), '-0.0');
  t.is(str([NaN], [], 'float32'), 'nan');
});

test('scientific notation follows the dtype', (t) => {
  t.is(str([1, 1e6], [2], 'float32'), '[1.e+00 1.e+06]');
  t.is(str([1e6, 2e6], [2], 'float64'), '[1000000. 2000000.]');
  t.is(str([1e6, 2e6], [2], 'float32'), '[1.e+06 2.e+06]');
  t.is(str([1, 1000], [2], 'float16'), '[1.e+00 1.e+03]');
  t.is(str([1.1, 1.23456789e-5], [2], 'float32'), '[1.1000000e+00 1.2345679e-05]');
  t.is(str([1e-100, 1, 1e100], [3], 'float64'), '[1.e-100 1.e+000 1.e+100]');
  t.is(str([1e20], [], 'float32'), '1e+20');
  t.is(str([123456789], [], 'float32'), '1.2345679e+08');
  // the scalar's lower bound is 1e-4 in long double, so float32(1e-4) is below it
  t.is(str([1e-4], [], 'float32'), '1e-04');
  t.is(str([1e-4], [], 'float64'), '0.0001');
});

test('shortest digits that round-trip in the dtype', (t) => {
  t.is(str([0.1], [1], 'float32'), '[0.1]');
  t.is(str([1 / 3], [1], 'float32'), '[0.33333334]');
  t.is(str([1 / 3], [1], 'float64'), '[0.33333333]');
  t.is(str([1 / 3], [], 'float64'), '0.3333333333333333');
  t.is(str([0.1], [], 'float16'), '0.1');
  t.is(str([65504], [], 'float16'), '6.55e+04');
});

test('bfloat16 prints as ml_dtypes does (C++ %g, 6 significant digits)', (t) => {
  t.is(repr([1, 2.5, -3], [3], 'bfloat16'), 'Array([1, 2.5, -3], dtype=bfloat16)');
  t.is(str([1, 2.5, -3], [3], 'bfloat16'), '[1 2.5 -3]');
  // 3.140625 is a tie at 6 digits: printf rounds it to even
  t.is(str([3.140625], [], 'bfloat16'), '3.14062');
  t.is(str([0.10009765625], [], 'bfloat16'), '0.100098');
  t.is(str([9999220736], [], 'bfloat16'), '9.99922e+09');
  t.is(str([-0], [], 'bfloat16'), '-0');
  t.is(str([NaN, -Infinity], [2], 'bfloat16'), '[nan -inf]');
  t.is(repr([2], [], 'bfloat16'), 'Array(2, dtype=bfloat16)');
});

test('summarizes arrays over 1000 elements', (t) => {
  const values = Array.from({ length: 1001 }, (_, i) => i);
  t.is(str(values, [1001], 'int32'), '[   0    1    2 ...  998  999 1000]');
  t.is(repr(values, [1001], 'int32'), 'Array([   0,    1,    2, ...,  998,  999, 1000], dtype=int32)');
  t.is(str(values.slice(0, 1000), [1000], 'int32').includes('...'), false);
});

test('wraps long rows at 75 columns and puts the dtype after a wide gap when full', (t) => {
  const values = Array.from({ length: 30 }, (_, i) => i);
  t.is(
    str(values, [30], 'int32'),
    '[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 29]',
  );
  t.is(
    repr(values.slice(0, 20), [20], 'int32'),
    'Array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n' +
      '       17, 18, 19], dtype=int32)',
  );
  const full = Array.from({ length: 11 }, (_, i) => i * 1.5);
  t.is(
    repr(full, [11], 'float32'),
    'Array([ 0. ,  1.5,  3. ,  4.5,  6. ,  7.5,  9. , 10.5, 12. , 13.5, 15. ],      dtype=float32)',
  );
});

test('rejects bad arguments with the values', (t) => {
  t.throws(() => formatArray([1, 2], [3], 'float32'), { message: 'formatArray: shape [3] needs 3 values, got 2' });
  t.throws(() => formatArray([1], [], 'float32', { mode: 'html' as 'str' }), {
    message: "formatArray: mode must be 'str' or 'repr', got 'html'",
  });
  t.throws(() => formatArray([1], [], 'float32', { modes: 'str' } as object), {
    message: "formatArray: unknown option 'modes' (known options: 'mode', 'weakType')",
  });
  t.throws(() => formatArray([1], [], 'float128' as DType), { instanceOf: TypeError });
  t.throws(() => formatArray([1], [-1], 'float32'), { instanceOf: TypeError });
});
