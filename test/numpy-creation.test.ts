// jnp's array-creation functions (lib/numpy/creation.ts): values against
// NumPy (fixtures/elementwise.json, `creation` cases, from
// fixtures/gen_elementwise.py), the default dtypes (JAX's int32 / float32 with
// x64 off; arrays from JS numbers are float32, as JS has one number type),
// conversions from JS data, and the errors for bad input.
import test from 'ava';
import * as fs from 'node:fs';
import { config, numpy as jnp, lax } from '../lib/index.js';
import { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference } from './helpers/oracle.js';

// 64-bit on for the whole file, as JAX's tests run with jax_enable_x64: it tests float64 creation (exact values, Float64Array data).
// What x64 off (the default) does to float64 requests is config.test.ts's subject.
config.update('jaxEnableX64', true);

type Value = number | string;
interface CreationCase { name: string; args: number[]; options: Record<string, unknown>; shape: number[]; dtype: DType; values: Value[] }
const fixture = JSON.parse(fs.readFileSync('test/fixtures/elementwise.json', 'utf8')) as { creation: CreationCase[] };

const decode = (v: Value): number =>
  typeof v === 'number' ? v : ({ nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 } as Record<string, number>)[v] ?? NaN;
const vals = (x: Array) => globalThis.Array.from(x.dataSync());
const dt = (x: Array) => `${x.dtype}${x.weakType ? ' weak' : ''}`;

const CREATORS: Record<string, (args: number[], options: Record<string, unknown>) => Array> = {
  arange: (a, o) => jnp.arange(a[0]!, a[1], a[2], o),
  linspace: (a, o) => jnp.linspace(a[0]!, a[1]!, a[2], o),
  eye: (a, o) => jnp.eye(a[0]!, a[1], o),
  identity: (a, o) => jnp.identity(a[0]!, o),
  tri: (a, o) => jnp.tri(a[0]!, a[1], a[2], o),
};

test('arange, linspace, eye, identity and tri match NumPy (with JAX dtypes)', (t) => {
  for (const c of fixture.creation) {
    const out = CREATORS[c.name]!(c.args, c.options);
    assertArray(t, out, { shape: c.shape, dtype: c.dtype, values: c.values.map(decode) }, { message: `${c.name}(${c.args.join(', ')}, ${JSON.stringify(c.options)})` });
  }
});

test('generated arrays agree with the reference interpreter', (t) => {
  checkAgainstReference(t, () => jnp.arange(3, 40, 3));
  checkAgainstReference(t, () => jnp.arange(-2, 3, 0.3));
  checkAgainstReference(t, () => jnp.arange(10, 0, -1, { dtype: 'uint8' }));
  checkAgainstReference(t, () => jnp.arange(0, 4, 0.5, { dtype: 'bfloat16' }));
  checkAgainstReference(t, () => jnp.linspace(-1, 1, 9, { dtype: 'float16' }));
  checkAgainstReference(t, () => jnp.eye(4, 3, { k: -1, dtype: 'int8' }));
  checkAgainstReference(t, () => jnp.tri(3, 5, 2, { dtype: 'bool' }));
  checkAgainstReference(t, () => jnp.full([2, 3], jnp.array([1, 2, 3], { dtype: 'float16' })));
  checkAgainstReference(t, () => jnp.zeros([3, 2], { dtype: 'bfloat16' }));
});

test('default dtypes: float32 for JS numbers, int32 for integer arange and TypedArrays, bool for booleans', (t) => {
  t.is(dt(jnp.arange(5)), 'int32');
  t.is(dt(jnp.arange(3)), 'int32');
  t.is(dt(jnp.arange(1, 7, 2)), 'int32');
  t.is(dt(jnp.arange(0, 1, 0.25)), 'float32');
  t.is(dt(jnp.arange(5.5)), 'float32');
  t.is(dt(jnp.linspace(0, 1)), 'float32');
  t.is(dt(jnp.zeros([2])), 'float32');
  t.is(dt(jnp.ones(2)), 'float32');
  t.is(dt(jnp.empty([2])), 'float32');
  t.is(dt(jnp.eye(2)), 'float32');
  t.is(dt(jnp.tri(2)), 'float32');
  // JS has one number type: jaxon types by kind, never by value, so JS numbers make float32 arrays
  t.is(dt(jnp.array([1, 2])), 'float32');
  t.is(dt(jnp.array([[1, 2], [3, 4]])), 'float32');
  t.is(dt(jnp.asarray([1, 2])), 'float32');
  t.is(dt(jnp.array([1, 2.5])), 'float32');
  t.is(dt(jnp.array([true])), 'bool');
  t.is(dt(jnp.array([[true], [false]])), 'bool');
  t.is(dt(jnp.array([true, 2])), 'float32');
  t.is(dt(jnp.array(5)), 'float32');
  t.is(dt(jnp.asarray(5)), 'float32');
  t.is(dt(jnp.array(5.5)), 'float32');
  t.is(dt(jnp.array(false)), 'bool');
  t.is(dt(jnp.array([])), 'float32');
  t.is(dt(jnp.array([[], []])), 'float32');
  t.is(dt(jnp.array([NaN, Infinity])), 'float32');
  t.is(dt(jnp.array([2 ** 31])), 'float32');
  // a dtype or an integer TypedArray says otherwise
  t.is(dt(jnp.array([1, 2], { dtype: 'int32' })), 'int32');
  t.is(dt(jnp.array(5, { dtype: 'int32' })), 'int32');
  t.is(dt(jnp.array(Int32Array.of(1, 2))), 'int32');
  t.is(dt(jnp.asarray(Int32Array.of(1, 2))), 'int32');
  t.is(dt(jnp.array(Uint8Array.of(1))), 'uint8');
  t.is(dt(jnp.full([2], 3)), 'float32');
  t.is(dt(jnp.full([2], 3, { dtype: 'int32' })), 'int32');
  t.is(dt(jnp.full([2], jnp.arange(2))), 'int32');
  t.is(dt(jnp.full([2], 3.5)), 'float32');
  t.is(dt(jnp.full([2], true)), 'bool');
  t.is(dt(jnp.zerosLike(jnp.array([1, 2], { dtype: 'uint8' }))), 'uint8');
  t.is(dt(jnp.onesLike([1.5])), 'float32');
  t.is(dt(jnp.fullLike(jnp.array([true]), 7)), 'bool');
});

test('jnp.array from nested JS arrays, scalars and TypedArrays', (t) => {
  assertArray(t, jnp.array([[1, 2, 3], [4, 5, 6]]), { shape: [2, 3], dtype: 'float32', values: [1, 2, 3, 4, 5, 6] });
  assertArray(t, jnp.array([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' }), { shape: [2, 3], dtype: 'int32', values: [1, 2, 3, 4, 5, 6] });
  assertArray(t, jnp.array([[[true], [false]]]), { shape: [1, 2, 1], dtype: 'bool', values: [1, 0] });
  assertArray(t, jnp.array(-3), { shape: [], dtype: 'float32', values: [-3] });
  assertArray(t, jnp.array(-3, { dtype: 'int32' }), { shape: [], dtype: 'int32', values: [-3] });
  assertArray(t, jnp.array([]), { shape: [0], dtype: 'float32', values: [] });
  assertArray(t, jnp.array([[], [], []]), { shape: [3, 0], dtype: 'float32', values: [] });
  assertArray(t, jnp.array(Float32Array.of(1.5, -2)), { shape: [2], dtype: 'float32', values: [1.5, -2] });
  assertArray(t, jnp.array(Float64Array.of(0.1)), { shape: [1], dtype: 'float64', values: [0.1] }, { tol: 0 });
  assertArray(t, jnp.array(Int8Array.of(-128, 127)), { shape: [2], dtype: 'int8', values: [-128, 127] });
  assertArray(t, jnp.array(Uint8Array.of(255)), { shape: [1], dtype: 'uint8', values: [255] });
  assertArray(t, jnp.array(Int16Array.of(-5)), { shape: [1], dtype: 'int16', values: [-5] });
  assertArray(t, jnp.array(Uint16Array.of(65535)), { shape: [1], dtype: 'uint16', values: [65535] });
  assertArray(t, jnp.array(Int32Array.of(-7)), { shape: [1], dtype: 'int32', values: [-7] });
  assertArray(t, jnp.array(Uint32Array.of(4294967295)), { shape: [1], dtype: 'uint32', values: [4294967295] });
  // with a dtype: floats truncate toward zero into integers, round to nearest even into 16-bit floats
  assertArray(t, jnp.array([1.7, -1.7, 2.5], { dtype: 'int32' }), { shape: [3], dtype: 'int32', values: [1, -1, 2] });
  assertArray(t, jnp.array([0.1, 65519, 1e6], { dtype: 'float16' }), { shape: [3], dtype: 'float16', values: [0.0999755859375, 65504, Infinity] }, { tol: 0 });
  assertArray(t, jnp.array([0.1], { dtype: 'bfloat16' }), { shape: [1], dtype: 'bfloat16', values: [0.10009765625] }, { tol: 0 });
  assertArray(t, jnp.array([0, 2, NaN, -0.5], { dtype: 'bool' }), { shape: [4], dtype: 'bool', values: [0, 1, 1, 1] });
  assertArray(t, jnp.array([true, false], { dtype: 'float32' }), { shape: [2], dtype: 'float32', values: [1, 0] });
  assertArray(t, jnp.array(Float32Array.of(1.5, -300), { dtype: 'int8' }), { shape: [2], dtype: 'int8', values: [1, -128] });
  assertArray(t, jnp.array([0.1], { dtype: 'float64' }), { shape: [1], dtype: 'float64', values: [0.1] }, { tol: 0 });
});

test('jnp.array and jnp.asarray on Arrays: copies, conversions, weak types dropped', (t) => {
  const x = jnp.array([1, 2, 3], { dtype: 'int32' });
  const copy = jnp.array(x);
  t.not(copy, x);
  t.deepEqual(vals(copy), [1, 2, 3]);
  t.is(jnp.array(x, { copy: false }), x);
  t.is(jnp.asarray(x), x);
  t.is(jnp.asarray(x, { dtype: 'int32' }), x);
  assertArray(t, jnp.asarray(x, { dtype: 'float16' }), { shape: [3], dtype: 'float16', values: [1, 2, 3] });
  assertArray(t, jnp.array(x, { dtype: 'uint8' }), { shape: [3], dtype: 'uint8', values: [1, 2, 3] });
  assertArray(t, jnp.asarray([1.5, 2]), { shape: [2], dtype: 'float32', values: [1.5, 2] });
  const weak = jnp.add(2, 3);
  t.true(weak.weakType);
  t.is(dt(jnp.array(weak)), 'int32');
  t.is(dt(jnp.asarray(weak)), 'int32 weak'); // asarray keeps an Array as it is, as in JAX
  // a copy is independent of its source's lifetime
  x.dispose();
  t.deepEqual(vals(copy), [1, 2, 3]);
});

test('full, zeros, ones, empty: shapes as numbers or arrays, broadcasting fill values', (t) => {
  assertArray(t, jnp.full(3, 7), { shape: [3], dtype: 'float32', values: [7, 7, 7] });
  assertArray(t, jnp.full(3, 7, { dtype: 'int32' }), { shape: [3], dtype: 'int32', values: [7, 7, 7] });
  assertArray(t, jnp.full([2, 3], jnp.array([1, 2, 3], { dtype: 'int32' })), { shape: [2, 3], dtype: 'int32', values: [1, 2, 3, 1, 2, 3] });
  assertArray(t, jnp.full([2, 2], [[1], [2]]), { shape: [2, 2], dtype: 'float32', values: [1, 1, 2, 2] });
  assertArray(t, jnp.full([2, 2], Int32Array.of(1, 2)), { shape: [2, 2], dtype: 'int32', values: [1, 2, 1, 2] });
  assertArray(t, jnp.full([2], 2.5, { dtype: 'int32' }), { shape: [2], dtype: 'int32', values: [2, 2] });
  assertArray(t, jnp.full([2], jnp.array(1.5), { dtype: 'float16' }), { shape: [2], dtype: 'float16', values: [1.5, 1.5] });
  assertArray(t, jnp.full([], NaN), { shape: [], dtype: 'float32', values: [NaN] });
  assertArray(t, jnp.full([0, 2], 1), { shape: [0, 2], dtype: 'float32', values: [] });
  assertArray(t, jnp.full([0, 2], 1, { dtype: 'int32' }), { shape: [0, 2], dtype: 'int32', values: [] });
  assertArray(t, jnp.zeros([2, 0, 3]), { shape: [2, 0, 3], dtype: 'float32', values: [] });
  assertArray(t, jnp.zeros([]), { shape: [], dtype: 'float32', values: [0] });
  assertArray(t, jnp.ones([2, 2], { dtype: 'bool' }), { shape: [2, 2], dtype: 'bool', values: [1, 1, 1, 1] });
  assertArray(t, jnp.ones(2, { dtype: 'bfloat16' }), { shape: [2], dtype: 'bfloat16', values: [1, 1] });
  assertArray(t, jnp.empty([2], { dtype: 'int8' }), { shape: [2], dtype: 'int8', values: [0, 0] });
  assertArray(t, jnp.zeros(3, { dtype: 'uint32' }), { shape: [3], dtype: 'uint32', values: [0, 0, 0] });
  const f = jnp.full([2], 3);
  t.false(f.weakType);
});

test('zerosLike, onesLike, fullLike: dtype and shape from x unless given', (t) => {
  const x = jnp.array([[1, 2, 3], [4, 5, 6]], { dtype: 'int16' });
  assertArray(t, jnp.zerosLike(x), { shape: [2, 3], dtype: 'int16', values: [0, 0, 0, 0, 0, 0] });
  assertArray(t, jnp.onesLike(x, { dtype: 'float16' }), { shape: [2, 3], dtype: 'float16', values: [1, 1, 1, 1, 1, 1] });
  assertArray(t, jnp.fullLike(x, 9, { shape: [2] }), { shape: [2], dtype: 'int16', values: [9, 9] });
  assertArray(t, jnp.fullLike(x, 2.7), { shape: [2, 3], dtype: 'int16', values: [2, 2, 2, 2, 2, 2] });
  assertArray(t, jnp.zerosLike([[1.5], [2]]), { shape: [2, 1], dtype: 'float32', values: [0, 0] });
  assertArray(t, jnp.onesLike(3, { shape: 2 }), { shape: [2], dtype: 'int32', values: [1, 1] });
  assertArray(t, jnp.fullLike(jnp.zeros([2]), jnp.array([1, 2])), { shape: [2], dtype: 'float32', values: [1, 2] });
});

test('arange and linspace edge cases', (t) => {
  assertArray(t, jnp.arange(0), { shape: [0], dtype: 'int32', values: [] });
  assertArray(t, jnp.arange(-3), { shape: [0], dtype: 'int32', values: [] });
  assertArray(t, jnp.arange(3, 3), { shape: [0], dtype: 'int32', values: [] });
  assertArray(t, jnp.arange(0, 5, -1), { shape: [0], dtype: 'int32', values: [] });
  assertArray(t, jnp.arange(5, null, null), { shape: [5], dtype: 'int32', values: [0, 1, 2, 3, 4] });
  assertArray(t, jnp.arange(10, 0, -3, { dtype: 'uint8' }), { shape: [4], dtype: 'uint8', values: [10, 7, 4, 1] });
  assertArray(t, jnp.arange(-2, 2, 1, { dtype: 'int8' }), { shape: [4], dtype: 'int8', values: [-2, -1, 0, 1] });
  assertArray(t, jnp.arange(0, 2, 0.5, { dtype: 'int32' }), { shape: [4], dtype: 'int32', values: [0, 0, 1, 1] });
  assertArray(t, jnp.arange(1, 2, 0.25, { dtype: 'float64' }), { shape: [4], dtype: 'float64', values: [1, 1.25, 1.5, 1.75] });
  assertArray(t, jnp.linspace(2, 2, 3), { shape: [3], dtype: 'float32', values: [2, 2, 2] });
  assertArray(t, jnp.linspace(1, 0, 3), { shape: [3], dtype: 'float32', values: [1, 0.5, 0] });
  assertArray(t, jnp.linspace(0, 1, 1, { endpoint: false }), { shape: [1], dtype: 'float32', values: [0] });
  assertArray(t, jnp.linspace(0, 3, 3, { endpoint: false, dtype: 'uint8' }), { shape: [3], dtype: 'uint8', values: [0, 1, 2] });
  const l = jnp.linspace(0, 1, 7);
  t.is(vals(l)[6], 1); // the endpoint is exact
});

// ---- bad input ----

test('bad shapes name the function, the argument and the value', (t) => {
  assertThrowsMentioning(t, () => jnp.zeros([2, -1]), 'jnp.zeros', 'shape', '[2,-1]');
  assertThrowsMentioning(t, () => jnp.ones([1.5]), 'jnp.ones', 'shape', '[1.5]');
  assertThrowsMentioning(t, () => jnp.full(-2, 0), 'jnp.full', 'shape', '-2');
  assertThrowsMentioning(t, () => jnp.empty('3' as never), 'jnp.empty', 'shape', "'3'");
  assertThrowsMentioning(t, () => jnp.zeros([NaN]), 'jnp.zeros', 'shape');
  assertThrowsMentioning(t, () => jnp.zerosLike(jnp.zeros([2]), { shape: [-1] }), 'jnp.zerosLike', 'shape', '[-1]');
  assertThrowsMentioning(t, () => jnp.eye(-1), 'jnp.eye', 'n', '-1');
  assertThrowsMentioning(t, () => jnp.eye(2, 1.5), 'jnp.eye', 'm', '1.5');
  assertThrowsMentioning(t, () => jnp.identity(2.5), 'jnp.identity', 'n', '2.5');
  assertThrowsMentioning(t, () => jnp.tri(-3), 'jnp.tri', 'n', '-3');
  assertThrowsMentioning(t, () => jnp.full([2, 2], jnp.array([1, 2, 3])), 'jnp.full', '[3]', '[2,2]');
  assertThrowsMentioning(t, () => jnp.full([2], [[1, 2], [3, 4]]), 'jnp.full', '[2,2]', '[2]');
});

test('bad dtypes and unknown option keys are rejected', (t) => {
  assertThrowsMentioning(t, () => jnp.zeros([2], { dtype: 'float128' as never }), 'jnp.zeros', 'dtype', "'float128'");
  assertThrowsMentioning(t, () => jnp.array([1], { dtype: 'int64' as never }), 'jnp.array', "'int64'");
  assertThrowsMentioning(t, () => jnp.arange(3, null, null, { dtype: 'complex64' as never }), 'jnp.arange', "'complex64'");
  assertThrowsMentioning(t, () => jnp.zeros([2], { dtyp: 'int32' } as never), 'jnp.zeros', "'dtyp'");
  assertThrowsMentioning(t, () => jnp.array([1], { order: 'C' } as never), 'jnp.array', "'order'");
  assertThrowsMentioning(t, () => jnp.full([1], 0, { fill: 1 } as never), 'jnp.full', "'fill'");
  assertThrowsMentioning(t, () => jnp.linspace(0, 1, 5, { retstep: true } as never), 'jnp.linspace', "'retstep'");
  assertThrowsMentioning(t, () => jnp.eye(2, 2, { K: 1 } as never), 'jnp.eye', "'K'");
  assertThrowsMentioning(t, () => jnp.tri(2, 2, 0, { k: 1 } as never), 'jnp.tri', "'k'");
  assertThrowsMentioning(t, () => jnp.onesLike([1], { order: 'K' } as never), 'jnp.onesLike', "'order'");
  assertThrowsMentioning(t, () => jnp.identity(2, { dtype: 'x' as never }), 'jnp.identity', "'x'");
  assertThrowsMentioning(t, () => jnp.zeros([2], 'float32' as never), 'jnp.zeros', 'options');
});

test('bad data: ragged nested arrays, non-numbers, out-of-range integers', (t) => {
  assertThrowsMentioning(t, () => jnp.array([[1, 2], [3]]), 'jnp.array', 'ragged', '[1]');
  assertThrowsMentioning(t, () => jnp.array([[1], 2]), 'jnp.array', 'ragged');
  assertThrowsMentioning(t, () => jnp.array([1, [2]] as never), 'jnp.array');
  assertThrowsMentioning(t, () => jnp.array(['a'] as never), 'jnp.array', "'a'");
  assertThrowsMentioning(t, () => jnp.array({ a: 1 } as never), 'jnp.array', 'data');
  assertThrowsMentioning(t, () => jnp.array(undefined as never), 'jnp.array', 'undefined');
  assertThrowsMentioning(t, () => jnp.array(new BigInt64Array(2) as never), 'jnp.array', 'BigInt64Array');
  assertThrowsMentioning(t, () => jnp.array([300], { dtype: 'uint8' }), 'jnp.array', '300', 'uint8');
  assertThrowsMentioning(t, () => jnp.array([-1], { dtype: 'uint32' }), 'jnp.array', '-1', 'uint32');
  assertThrowsMentioning(t, () => jnp.full([2], 'x' as never), 'jnp.full', 'fillValue');
  assertThrowsMentioning(t, () => jnp.zerosLike('x' as never), 'jnp.zerosLike');
  const gone = jnp.array([1]);
  gone.dispose();
  assertThrowsMentioning(t, () => jnp.array(gone), 'disposed');
});

test('bad arange, linspace, eye and tri arguments', (t) => {
  assertThrowsMentioning(t, () => jnp.arange(0, 5, 0), 'jnp.arange', 'step', 'zero');
  assertThrowsMentioning(t, () => jnp.arange(NaN), 'jnp.arange', 'start');
  assertThrowsMentioning(t, () => jnp.arange(0, Infinity), 'jnp.arange', 'stop', 'finite');
  assertThrowsMentioning(t, () => jnp.arange('5' as never), 'jnp.arange', 'start', "'5'");
  assertThrowsMentioning(t, () => jnp.arange(0, 5, '1' as never), 'jnp.arange', 'step');
  assertThrowsMentioning(t, () => jnp.linspace(0, 1, -1), 'jnp.linspace', 'num', '-1');
  assertThrowsMentioning(t, () => jnp.linspace(0, 1, 2.5), 'jnp.linspace', 'num', '2.5');
  assertThrowsMentioning(t, () => jnp.linspace(NaN, 1), 'jnp.linspace', 'start');
  assertThrowsMentioning(t, () => jnp.linspace(0, 1, 5, { endpoint: 'yes' as never }), 'jnp.linspace', 'endpoint', "'yes'");
  assertThrowsMentioning(t, () => jnp.eye(2, 2, { k: 0.5 }), 'jnp.eye', 'k', '0.5');
  assertThrowsMentioning(t, () => jnp.tri(2, 2, 1.5), 'jnp.tri', 'k', '1.5');
});

test('results are ordinary arrays: usable by jnp and lax', (t) => {
  const x = jnp.arange(6);
  assertArray(t, lax.reshape(x, [2, 3]), { shape: [2, 3], dtype: 'int32', values: [0, 1, 2, 3, 4, 5] });
  t.true(jnp.zeros([2]) instanceof Array);
  assertArray(t, jnp.add(jnp.eye(2), jnp.ones([2, 2])), { shape: [2, 2], dtype: 'float32', values: [2, 1, 1, 2] });
});
