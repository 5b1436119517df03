// jnp reductions against NumPy-computed fixtures (values, dtypes and shapes
// under JAX's dtype rules), the float64 reference interpreter on a few
// compositions, accuracy of float32 sums over 1e6 elements, and bad input.
import test from 'ava';
import { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import * as lax from '../lib/lax/ops.js';
import { array } from '../lib/numpy/creation.js';
import * as r from '../lib/numpy/reductions.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference, randomValues } from './helpers/oracle.js';
import { decodeNumber as decode, loadFixture } from './helpers/fixtures.js';
import { sweep } from './helpers/emulator.js';

type Encoded = number | 'nan' | 'inf' | '-inf';
interface Spec {
  shape: number[];
  dtype: DType;
  values: Encoded[];
}
interface Case {
  fn: string;
  x: string;
  options: Record<string, unknown>;
  expected: Spec;
  expectedSign?: Spec;
  tol?: number;
}
interface Fixture {
  inputs: Record<string, Spec>;
  masks: Record<string, { shape: number[]; values: boolean[] }>;
  cases: Case[];
}

const fixture = loadFixture<Fixture>('numpy-reductions.json');


function makeArray(spec: { shape: number[]; dtype: DType; values: (Encoded | boolean)[] }): Array {
  const flat = array(spec.values.map((v) => (typeof v === 'boolean' ? v : decode(v))), { dtype: spec.dtype });
  return lax.reshape(flat, spec.shape);
}

const input = (name: string): Array => makeArray(fixture.inputs[name]!);

function options(c: Case): Record<string, unknown> {
  const o: Record<string, unknown> = { ...c.options };
  if (typeof o.where === 'string') o.where = makeArray({ ...fixture.masks[o.where]!, dtype: 'bool' });
  if (typeof o.b === 'string') o.b = input(o.b);
  return o;
}

const FUNCTIONS: Record<string, (x: Array, o: Record<string, unknown>) => unknown> = {
  sum: r.sum, prod: r.prod, max: r.max, min: r.min, amax: r.amax, amin: r.amin, mean: r.mean, var: r.var, std: r.std,
  argmax: r.argmax, argmin: r.argmin, all: r.all, any: r.any, cumsum: r.cumsum, cumprod: r.cumprod, logsumexp: r.logsumexp,
};

const expected = (s: Spec) => ({ shape: s.shape, dtype: s.dtype, values: s.values.map(decode) });

for (const fn of Object.keys(FUNCTIONS)) {
  test(`${fn} matches NumPy (values, dtype, shape)`, (t) => {
    const cases = fixture.cases.filter((c) => c.fn === fn);
    t.true(cases.length > 0);
    // the emulated GPU (helpers/emulator.ts): the first case and every other one
    for (const c of sweep(cases, 2)) {
      const label = `${fn}(${c.x}, ${JSON.stringify(c.options)})`;
      const out = FUNCTIONS[fn]!(input(c.x), options(c));
      if (c.expectedSign) {
        const [value, sign] = out as [Array, Array];
        assertArray(t, value, expected(c.expected), { message: label, tol: c.tol });
        assertArray(t, sign, expected(c.expectedSign), { message: `${label} sign` });
      } else {
        assertArray(t, out, expected(c.expected), { message: label, tol: c.tol });
      }
    }
  });
}

test('JS numbers and nested arrays are accepted; results are strongly typed', (t) => {
  const s = r.sum(3);
  assertArray(t, s, { shape: [], dtype: 'int32', values: [3] });
  t.false(s.weakType);
  assertArray(t, r.mean([[1, 2], [3, 5]], { axis: 0 }), { shape: [2], dtype: 'float32', values: [2, 3.5] });
  assertArray(t, r.max([true, false]), { shape: [], dtype: 'bool', values: [1] });
  assertArray(t, r.cumsum(2.5), { shape: [1], dtype: 'float32', values: [2.5] });
  assertArray(t, r.argmax(7), { shape: [], dtype: 'int32', values: [0] });
  assertArray(t, r.sum([1, 2, 3], { dtype: 'uint8' }), { shape: [], dtype: 'uint8', values: [6] });
  assertArray(t, r.prod(array([1, 2, 3], { dtype: 'uint16' })), { shape: [], dtype: 'uint32', values: [6] });
  assertArray(t, r.cumsum(array([true, true, false]), { dtype: 'bool' }), { shape: [3], dtype: 'bool', values: [1, 1, 1] });
  assertArray(t, r.std([1, 2, 3, 4], { dtype: 'float16' }), { shape: [], dtype: 'float16', values: [1.118] });
  // var with an integer dtype: the NaN fill makes it float32 in JAX
  assertArray(t, r.var(array([1, 2, 3, 4]), { dtype: 'int32' }), { shape: [], dtype: 'float32', values: [1] });
});

test('max/min/all/any/sum of scalars and 0-d arrays; axis [] reduces nothing', (t) => {
  const x = array([[1, -2], [3, 4]], { dtype: 'float32' });
  assertArray(t, r.sum(x, { axis: [] }), { shape: [2, 2], dtype: 'float32', values: [1, -2, 3, 4] });
  assertArray(t, r.max(array(5, { dtype: 'int16' })), { shape: [], dtype: 'int16', values: [5] });
  assertArray(t, r.any(0), { shape: [], dtype: 'bool', values: [0] });
  assertArray(t, r.sum(array(2, { dtype: 'int8' }), { initial: 3 }), { shape: [], dtype: 'int32', values: [5] });
});

test('logsumexp: stable for large inputs, -inf rows give -inf, +inf and NaN propagate', (t) => {
  const x = array([[3e38, 3e38], [-Infinity, -Infinity], [Infinity, 1], [NaN, 1]], { dtype: 'float32' });
  const out = r.logsumexp(x, { axis: 1 }).dataSync();
  t.true(Math.abs(out[0]! - (3e38 + Math.LN2)) / 3e38 < 1e-6);
  t.is(out[1], -Infinity);
  t.is(out[2], Infinity);
  t.true(Number.isNaN(out[3]!));
  assertArray(t, r.logsumexp(array([1000, 1000], { dtype: 'float32' })), { shape: [], dtype: 'float32', values: [1000 + Math.LN2] });
  assertArray(t, r.logsumexp(array([[0, 0]], { dtype: 'float32' }), { axis: 1, where: array([[false, false]]) }), {
    shape: [1], dtype: 'float32', values: [-Infinity],
  });
});

test('float32 reductions over 1e6 elements are accurate to 1e-6 relative (kernels accumulate in double)', (t) => {
  const n = 1_000_000;
  const values = Float32Array.from(randomValues(n, 7, 0, 1));
  const x = array(values);
  let exact = 0;
  let exactSquares = 0;
  for (const v of values) exact += v;
  const meanExact = exact / n;
  for (const v of values) exactSquares += (v - meanExact) ** 2;
  const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);
  t.true(rel(r.sum(x).item() as number, exact) < 1e-6, 'sum');
  t.true(rel(r.mean(x).item() as number, meanExact) < 1e-6, 'mean');
  t.true(rel(r.var(x).item() as number, exactSquares / n) < 1e-6, 'var');
  t.true(rel(r.sum(lax.reshape(x, [1000, 1000]), { axis: 0 }).dataSync()[17]!, sumColumn(values, 17)) < 1e-6, 'sum axis 0');
  const cs = r.cumsum(x).dataSync();
  t.true(rel(cs[n - 1]!, exact) < 1e-6, 'cumsum');
});

function sumColumn(values: Float32Array, column: number): number {
  let s = 0;
  for (let i = column; i < values.length; i += 1000) s += values[i]!;
  return s;
}

test('compositions agree with the float64 reference interpreter', (t) => {
  const x = lax.reshape(array(randomValues(60, 3)), [3, 4, 5]);
  const half = lax.convertElementType(x, 'float16');
  const mask = lax.reshape(array(randomValues(20, 4).map((v) => v > 0)), [4, 5]);
  checkAgainstReference(t, () => r.var(x, { axis: [0, 2], ddof: 1, keepdims: true }));
  checkAgainstReference(t, () => r.std(half, { axis: 1, where: mask }));
  checkAgainstReference(t, () => r.logsumexp(x, { axis: -1 }));
  checkAgainstReference(t, () => r.mean(r.cumsum(x, { axis: 1 }), { axis: 0 }));
  checkAgainstReference(t, () => [r.argmax(x, { axis: 2 }), r.max(x, { axis: 1, where: mask, initial: 0 })]);
  checkAgainstReference(t, () => r.prod(lax.convertElementType(x, 'int8'), { axis: [1, 2] }));
});

test('bad input: axis out of range, repeated axis, wrong types, unknown options', (t) => {
  const x = array([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' });
  assertThrowsMentioning(t, () => r.sum(x, { axis: 2 }), 'jnp.sum', 'axis 2', 'dimension 2');
  assertThrowsMentioning(t, () => r.mean(x, { axis: -3 }), 'jnp.mean', 'axis -3');
  assertThrowsMentioning(t, () => r.max(x, { axis: [0, -2] }), 'jnp.max', 'repeated axis');
  assertThrowsMentioning(t, () => r.var(x, { axis: 1.5 }), 'jnp.var', 'axis', '1.5');
  assertThrowsMentioning(t, () => r.sum(x, { axis: '1' as never }), 'jnp.sum', 'axis', "'1'");
  assertThrowsMentioning(t, () => r.argmax(x, { axis: [0] as never }), 'jnp.argmax', 'axis');
  assertThrowsMentioning(t, () => r.argmin(x, { axis: 5 }), 'jnp.argmin', 'axis 5');
  assertThrowsMentioning(t, () => r.cumsum(x, { axis: 2 }), 'jnp.cumsum', 'axis 2');
  assertThrowsMentioning(t, () => r.sum(x, { axes: 0 } as never), 'jnp.sum', "unknown option 'axes'");
  assertThrowsMentioning(t, () => r.max(x, { dtype: 'float32' } as never), 'jnp.max', "unknown option 'dtype'");
  assertThrowsMentioning(t, () => r.argmax(x, { where: x } as never), 'jnp.argmax', "unknown option 'where'");
  assertThrowsMentioning(t, () => r.logsumexp(x, { return_sign: true } as never), 'jnp.logsumexp', "unknown option 'return_sign'");
  assertThrowsMentioning(t, () => r.sum(x, { dtype: 'float8' as never }), 'jnp.sum', 'dtype', "'float8'");
  assertThrowsMentioning(t, () => r.sum(x, { keepdims: 1 as never }), 'jnp.sum', 'keepdims', 'boolean');
  assertThrowsMentioning(t, () => r.sum('abc' as never), 'jnp.sum', 'a must be');
  assertThrowsMentioning(t, () => r.var(x, { ddof: '1' as never }), 'jnp.var', 'ddof');
  assertThrowsMentioning(t, () => r.var(x, { ddof: 1, correction: 1 }), 'jnp.var', 'ddof and correction');
  assertThrowsMentioning(t, () => r.std(x, { dtype: 'int32' }), 'jnp.std', 'inexact');
  assertThrowsMentioning(t, () => r.sum(x, { initial: [1, 2] }), 'jnp.sum', 'initial', 'scalar');
});

test('bad input: where masks and empty reductions', (t) => {
  const x = array([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' });
  assertThrowsMentioning(t, () => r.sum(x, { where: array([true, false]) }), 'jnp.sum', '[2]', '[2,3]');
  assertThrowsMentioning(t, () => r.sum(x, { where: array([[[true, false, true]], [[true, true, true]]]) }), 'jnp.sum', 'where', '[2,3]');
  assertThrowsMentioning(t, () => r.sum(x, { where: array([1, 0, 1]) }), 'jnp.sum', 'where', 'bool');
  assertThrowsMentioning(t, () => r.max(x, { where: array([true, false, true]) }), 'jnp.max', "specify 'initial'");
  const empty = lax.reshape(array([], { dtype: 'float32' }), [0, 3]);
  assertThrowsMentioning(t, () => r.max(empty, { axis: 0 }), 'jnp.max', 'zero-size array to reduction operation max which has no identity');
  assertThrowsMentioning(t, () => r.min(empty), 'jnp.min', 'zero-size array', 'min');
  assertThrowsMentioning(t, () => r.argmax(empty, { axis: 0 }), 'jnp.argmax', 'empty sequence');
  assertThrowsMentioning(t, () => r.argmin(empty), 'jnp.argmin', 'empty sequence');
  // an empty axis that is not reduced is fine
  assertArray(t, r.max(empty, { axis: 1 }), { shape: [0], dtype: 'float32', values: [] });
  assertArray(t, r.argmax(empty, { axis: 1 }), { shape: [0], dtype: 'int32', values: [] });
});

test('argmax/argmin over rows long enough to split across threads keep the first index on ties and the first NaN (CPU partials merged in order)', (t) => {
  const n = 200_000;
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) values[i] = (i * 7919) % 1000; // every value repeats: the maximum 999 first at 111
  const x = array(values, { dtype: 'float32' });
  t.is(r.argmax(x).item(), values.indexOf(999));
  t.is(r.argmin(x).item(), values.indexOf(0));
  const withNaN = values.slice();
  withNaN[150_001] = NaN;
  withNaN[170_000] = NaN;
  t.is(r.argmax(array(withNaN, { dtype: 'float32' })).item(), 150_001);
  t.is(r.argmin(array(withNaN, { dtype: 'float32' })).item(), 150_001);
  // two rows: each its own answer
  const rows = array(new Float32Array([...values.slice(0, n / 2), ...values.slice(n / 2).reverse()]), { dtype: 'float32' }); // then viewed as two rows
  const rows2 = lax.reshape(rows, [2, n / 2]);
  const second = values.slice(n / 2).reverse();
  t.deepEqual(r.argmax(rows2, { axis: 1 }).dataSync(), new Int32Array([values.slice(0, n / 2).indexOf(999), second.indexOf(999)]));
});
