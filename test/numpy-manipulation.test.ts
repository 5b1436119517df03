// jnp's array-manipulation functions (lib/numpy/manipulation.ts): values,
// shapes and dtypes against NumPy (fixtures/manipulation.json, made by
// fixtures/gen_manipulation.py), the kernels against the reference
// interpreter, JAX's dtype rules where they differ from NumPy's, and the
// errors for bad input.
import test from 'ava';
import { Array } from '../lib/core/array.js';
import { arrayFromValues } from '../lib/core/bind.js';
import type { DType } from '../lib/core/dtype.js';
import { array, arange, zeros } from '../lib/numpy/creation.js';
import * as m from '../lib/numpy/manipulation.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference } from './helpers/oracle.js';
import { decodeNumber as decode, loadFixture } from './helpers/fixtures.js';
import { emulatorSubset } from './helpers/emulator.js';

type Value = number | 'nan' | 'inf' | '-inf';
interface Encoded {
  shape: number[];
  dtype: DType;
  values: Value[];
}
interface Case {
  name: string;
  op: string;
  inputs: Encoded[];
  params: Record<string, any>;
  expected: Encoded | Encoded[] | number[];
}

const fixture = loadFixture<{ cases: Case[] }>('manipulation.json');

const build = (e: Encoded): Array => arrayFromValues(e.values.map(decode), e.shape, e.dtype);
const expectation = (e: Encoded) => ({ shape: e.shape, dtype: e.dtype, values: e.values.map(decode) });

// Calls the jaxon function a fixture case names, with the case's (JS-form) parameters.
type Params = Record<string, any>;
const pick = (p: Params, ...keys: string[]): Params => Object.fromEntries(keys.filter((k) => k in p).map((k) => [k, p[k]]));
const OPS: Record<string, (xs: Array[], p: Params) => unknown> = {
  reshape: ([x], p) => m.reshape(x!, p.shape, pick(p, 'order')),
  ravel: ([x], p) => m.ravel(x!, pick(p, 'order')),
  transpose: ([x], p) => m.transpose(x!, p.axes),
  swapaxes: ([x], p) => m.swapaxes(x!, p.axis1, p.axis2),
  moveaxis: ([x], p) => m.moveaxis(x!, p.source, p.destination),
  expandDims: ([x], p) => m.expandDims(x!, p.axis),
  squeeze: ([x], p) => m.squeeze(x!, pick(p, 'axis')),
  broadcastTo: ([x], p) => m.broadcastTo(x!, p.shape),
  broadcastArrays: (xs) => m.broadcastArrays(...xs),
  broadcastShapes: (_xs, p) => m.broadcastShapes(...p.shapes),
  concatenate: (xs, p) => m.concatenate(xs, pick(p, 'axis')),
  stack: (xs, p) => m.stack(xs, pick(p, 'axis')),
  hstack: (xs) => m.hstack(xs),
  vstack: (xs) => m.vstack(xs),
  dstack: (xs) => m.dstack(xs),
  split: ([x], p) => m.split(x!, p.indicesOrSections, pick(p, 'axis')),
  arraySplit: ([x], p) => m.arraySplit(x!, p.indicesOrSections, pick(p, 'axis')),
  tile: ([x], p) => m.tile(x!, p.reps),
  repeat: ([x], p) => m.repeat(x!, p.repeats, pick(p, 'axis')),
  flip: ([x], p) => m.flip(x!, pick(p, 'axis')),
  fliplr: ([x]) => m.fliplr(x!),
  flipud: ([x]) => m.flipud(x!),
  rot90: ([x], p) => m.rot90(x!, pick(p, 'k', 'axes')),
  pad: ([x], p) => m.pad(x!, p.padWidth, pick(p, 'mode', 'constantValues')),
  tril: ([x], p) => m.tril(x!, p.k),
  triu: ([x], p) => m.triu(x!, p.k),
  atleast1d: ([x]) => m.atleast1d(x!),
  atleast2d: ([x]) => m.atleast2d(x!),
  atleast3d: ([x]) => m.atleast3d(x!),
};

test('the fixture covers every function', (t) => {
  t.true(fixture.cases.length > 100);
  t.deepEqual([...new Set(fixture.cases.map((c) => c.op))].sort(), Object.keys(OPS).sort());
});

// the emulated GPU (helpers/emulator.ts) runs each function's first case and every other one after it
const nth = new Map<string, number>();
const onThisPlatform = fixture.cases.filter((c) => {
  const i = nth.get(c.op) ?? 0;
  nth.set(c.op, i + 1);
  return !emulatorSubset || i % 2 === 0;
});

for (const c of onThisPlatform) {
  test(`numpy fixture: ${c.op}: ${c.name}`, (t) => {
    const result = OPS[c.op]!(c.inputs.map(build), c.params);
    if (c.op === 'broadcastShapes') {
      t.deepEqual(result, c.expected);
      return;
    }
    if (globalThis.Array.isArray(result)) {
      const expected = c.expected as Encoded[];
      t.is(result.length, expected.length, 'number of outputs');
      result.forEach((r, i) => assertArray(t, r, expectation(expected[i]!), { message: `output ${i}` }));
    } else {
      assertArray(t, result, expectation(c.expected as Encoded));
      t.false((result as Array).weakType, 'strong inputs give a strong result');
    }
  });
}

// ---- kernels against the reference interpreter ----

test('layout kernels agree with the reference interpreter', (t) => {
  const x = m.reshape(arange(24), [2, 3, 4]);
  checkAgainstReference(t, () => m.pad(x, [[1, 0], [2, 3], [4, 1]], { mode: 'reflect' }), { message: 'm.pad(x, [[1, 0], [2, 3], [4, 1]], { mode: "reflect" })' });
  checkAgainstReference(t, () => m.pad(x, [[2, 1], [0, 1], [1, 1]], { constantValues: [[1, 2], [3, 4], [5, 6]] }), { message: 'm.pad(x, [[2, 1], [0, 1], [1, 1]], { constantValues: [[1, 2], [3, 4], [5, 6]] })' });
  checkAgainstReference(t, () => m.repeat(x, [2, 0, 3], { axis: 1 }), { message: 'm.repeat(x, [2, 0, 3], { axis: 1 })' });
  checkAgainstReference(t, () => m.tile(x, [2, 1, 1, 2]), { message: 'm.tile(x, [2, 1, 1, 2])' });
  checkAgainstReference(t, () => m.tril(x, 1), { message: 'm.tril(x, 1)' });
  checkAgainstReference(t, () => m.rot90(x, { axes: [2, 0] }), { message: 'm.rot90(x, { axes: [2, 0] })' });
  checkAgainstReference(t, () => m.split(x, [1, 3], { axis: -1 }), { message: 'm.split(x, [1, 3], { axis: -1 })' });
});

// ---- JAX semantics beyond the fixtures ----

test('reshape in C order aliases the buffer (no copy)', (t) => {
  const x = arange(6);
  const y = m.reshape(x, [2, -1]);
  t.is(y.storage(), x.storage());
  t.is(m.ravel(y).storage(), x.storage());
});

test('JS data is accepted wherever an array is', (t) => {
  assertArray(t, m.reshape([[1, 2], [3, 4]], [-1]), { shape: [4], dtype: 'int32', values: [1, 2, 3, 4] });
  assertArray(t, m.concatenate([[1, 2], [0.5]]), { shape: [3], dtype: 'float32', values: [1, 2, 0.5] });
  assertArray(t, m.stack([[true], [false]]), { shape: [2, 1], dtype: 'bool', values: [1, 0] });
  assertArray(t, m.tril([[1, 2], [3, 4]]), { shape: [2, 2], dtype: 'int32', values: [1, 0, 3, 4] });
});

test('weak types are kept by layout functions and by promotion of all-weak operands', (t) => {
  const weak = arrayFromValues([1.5], [], 'float32', true);
  t.true(m.reshape(weak, [1, 1]).weakType);
  t.true(m.broadcastTo(weak, [2]).weakType);
  t.true(m.tril(m.broadcastTo(weak, [2, 2])).weakType);
  t.true(m.pad(m.expandDims(weak, 0), 1).weakType);
  t.true(m.stack([1.5, 2.5]).weakType);
  // a strong operand makes the join strong, and its dtype wins over weak ones
  const joined = m.stack([arrayFromValues([1], [], 'int8'), 3]);
  t.is(joined.dtype, 'int8');
  t.false(joined.weakType);
});

test('concatenate, stack and the stacks take a dtype option', (t) => {
  const a = array([1, 2], { dtype: 'int8' });
  const b = array([3.5], { dtype: 'float32' });
  assertArray(t, m.concatenate([a, b], { dtype: 'int32' }), { shape: [3], dtype: 'int32', values: [1, 2, 3] });
  assertArray(t, m.stack([a, a], { axis: 1, dtype: 'float16' }), { shape: [2, 2], dtype: 'float16', values: [1, 1, 2, 2] });
  assertArray(t, m.hstack([a, b], { dtype: 'bfloat16' }), { shape: [3], dtype: 'bfloat16', values: [1, 2, 3.5] });
  assertArray(t, m.vstack([a, a], { dtype: 'bool' }), { shape: [2, 2], dtype: 'bool', values: [1, 1, 1, 1] });
});

test('concatenate with one array returns it with the dtype asked for', (t) => {
  const a = array([[1, 2]], { dtype: 'uint8' });
  assertArray(t, m.concatenate([a], { axis: 1 }), { shape: [1, 2], dtype: 'uint8', values: [1, 2] });
  assertArray(t, m.concatenate([a], { axis: null, dtype: 'float32' }), { shape: [2], dtype: 'float32', values: [1, 2] });
});

test('split and arraySplit return a JS array of Arrays; a whole-axis piece is the input itself', (t) => {
  const x = arange(4);
  const parts = m.split(x, 1);
  t.true(globalThis.Array.isArray(parts));
  t.is(parts[0], x);
  t.is(m.arraySplit(x, [0]).length, 2);
});

test('atleast functions return a list for several arguments', (t) => {
  const out = m.atleast2d(1, [1, 2], [[1]]) as Array[];
  t.deepEqual(out.map((a) => a.shape), [[1, 1], [1, 2], [1, 1]]);
  t.deepEqual((m.atleast3d(zeros([2, 3])) as Array).shape, [2, 3, 1]);
});

test("pad mode 'empty' pads (with zeros) to the padded shape", (t) => {
  const r = m.pad(array([1, 2], { dtype: 'int8' }), [1, 2], { mode: 'empty' });
  t.deepEqual(r.shape, [5]);
  t.is(r.dtype, 'int8');
});

test('pad constantValues is converted to the array dtype and may be a 0-d Array', (t) => {
  assertArray(t, m.pad(array([1], { dtype: 'int32' }), 1, { constantValues: 2.7 }), { shape: [3], dtype: 'int32', values: [2, 1, 2] });
  assertArray(t, m.pad(array([1], { dtype: 'float16' }), [0, 1], { constantValues: array(0.25) }), { shape: [2], dtype: 'float16', values: [1, 0.25] });
  assertArray(t, m.pad(array([1], { dtype: 'uint8' }), [1, 0], { constantValues: [[4, 5]] }), { shape: [2], dtype: 'uint8', values: [4, 1] });
});

test('repeat with counts for every element of a flattened array', (t) => {
  assertArray(t, m.repeat(array([[1, 2], [3, 4]], { dtype: 'int32' }), [0, 1, 0, 2]), { shape: [3], dtype: 'int32', values: [2, 4, 4] });
});

// ---- bad input ----

test('reshape: bad shapes and options', (t) => {
  const x = zeros([2, 3]);
  assertThrowsMentioning(t, () => m.reshape(x, [4]), 'jnp.reshape', 'shape [2,3]', 'size 6', '[4]');
  assertThrowsMentioning(t, () => m.reshape(x, [4, -1]), 'jnp.reshape', '[4,-1]', 'do not divide 6');
  assertThrowsMentioning(t, () => m.reshape(x, [-1, -1]), 'jnp.reshape', 'only one', '[-1,-1]');
  assertThrowsMentioning(t, () => m.reshape(x, [-2, -3]), 'jnp.reshape', 'shape', '[-2,-3]');
  assertThrowsMentioning(t, () => m.reshape(x, [1.5, 4]), 'jnp.reshape', 'shape', '[1.5,4]');
  assertThrowsMentioning(t, () => m.reshape(zeros([0, 3]), [0, -1]), 'jnp.reshape', 'ambiguous', '[0,-1]');
  assertThrowsMentioning(t, () => m.reshape(x, [6], { order: 'A' as 'C' }), 'jnp.reshape', 'order', "'A'");
  assertThrowsMentioning(t, () => m.reshape(x, [6], { copy: true } as object), 'jnp.reshape', "unknown option 'copy'");
  assertThrowsMentioning(t, () => m.reshape('abc' as unknown as Array, [3]), 'jnp.reshape', 'x', "'abc'");
  assertThrowsMentioning(t, () => m.ravel(x, { order: 'K' as 'C' }), 'jnp.ravel', 'order', "'K'");
});

test('transpose, swapaxes, moveaxis: bad axes', (t) => {
  const x = zeros([2, 3, 4]);
  assertThrowsMentioning(t, () => m.transpose(x, [0, 1]), 'jnp.transpose', 'axes', '[0,1]', '[2,3,4]');
  assertThrowsMentioning(t, () => m.transpose(x, [0, 1, 1]), 'jnp.transpose', 'repeated', '[0,1,1]');
  assertThrowsMentioning(t, () => m.transpose(x, [0, 1, 3]), 'jnp.transpose', 'axes', '3');
  assertThrowsMentioning(t, () => m.swapaxes(x, 0, 3), 'jnp.swapaxes', 'axis2', '3', 'dimension 3');
  assertThrowsMentioning(t, () => m.swapaxes(x, 0.5, 1), 'jnp.swapaxes', 'axis1', '0.5');
  assertThrowsMentioning(t, () => m.moveaxis(x, [0, 1], [2]), 'jnp.moveaxis', 'source [0,1]', 'destination [2]');
  assertThrowsMentioning(t, () => m.moveaxis(x, [0, 0], [1, 2]), 'jnp.moveaxis', 'repeated', 'source');
  assertThrowsMentioning(t, () => m.moveaxis(x, -4, 0), 'jnp.moveaxis', 'source', '-4');
  assertThrowsMentioning(t, () => m.moveaxis(x, null as unknown as number, 0), 'jnp.moveaxis', 'source', 'null');
});

test('expandDims and squeeze: bad axes', (t) => {
  const x = zeros([2, 1]);
  assertThrowsMentioning(t, () => m.expandDims(x, 3), 'jnp.expandDims', 'axis', '3', 'dimension 3');
  assertThrowsMentioning(t, () => m.expandDims(x, [0, 0]), 'jnp.expandDims', 'repeated', '[0,0]');
  assertThrowsMentioning(t, () => m.expandDims(x, [0, -4]), 'jnp.expandDims', 'axis', '-4');
  assertThrowsMentioning(t, () => m.expandDims(x, '0' as unknown as number), 'jnp.expandDims', 'axis', "'0'");
  assertThrowsMentioning(t, () => m.squeeze(x, { axis: 0 }), 'jnp.squeeze', 'axis 0', 'size 2', '[2,1]');
  assertThrowsMentioning(t, () => m.squeeze(x, { axis: 2 }), 'jnp.squeeze', 'axis', '2');
  assertThrowsMentioning(t, () => m.squeeze(x, { axes: 1 } as object), 'jnp.squeeze', "unknown option 'axes'");
  assertThrowsMentioning(t, () => m.squeeze(x, 1 as unknown as object), 'jnp.squeeze', 'options must be an object');
});

test('broadcasting: incompatible shapes', (t) => {
  assertThrowsMentioning(t, () => m.broadcastTo(zeros([2, 3]), [4]), 'jnp.broadcastTo', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => m.broadcastTo(zeros([3]), [3, 2]), 'jnp.broadcastTo', '[3]', '[3,2]');
  assertThrowsMentioning(t, () => m.broadcastTo(zeros([0]), [1]), 'jnp.broadcastTo', '[0]', '[1]');
  assertThrowsMentioning(t, () => m.broadcastTo(zeros([1]), [-1]), 'jnp.broadcastTo', 'shape', '[-1]');
  assertThrowsMentioning(t, () => m.broadcastArrays(zeros([2]), zeros([3])), 'jnp.broadcastArrays', '[2] and [3]');
  assertThrowsMentioning(t, () => m.broadcastShapes([2, 3], [2]), 'jnp.broadcastShapes', '[2,3] and [2]');
  assertThrowsMentioning(t, () => m.broadcastShapes([2], 'x' as unknown as number), 'jnp.broadcastShapes', 'shapes[1]', "'x'");
});

test('joins: bad lists, ranks, shapes and axes', (t) => {
  const a = zeros([2, 3]);
  assertThrowsMentioning(t, () => m.concatenate([]), 'jnp.concatenate', 'at least one');
  assertThrowsMentioning(t, () => m.concatenate(a as unknown as Array[]), 'jnp.concatenate', 'arrays', 'JS array');
  assertThrowsMentioning(t, () => m.concatenate([zeros([]), zeros([])]), 'jnp.concatenate', 'zero-dimensional', 'arrays[0]');
  assertThrowsMentioning(t, () => m.concatenate([a, zeros([3])]), 'jnp.concatenate', 'number of dimensions', '[2,3]', '[3]');
  assertThrowsMentioning(t, () => m.concatenate([a, zeros([2, 2])]), 'jnp.concatenate', 'except along axis 0', '[2,2]');
  assertThrowsMentioning(t, () => m.concatenate([a, a], { axis: 2 }), 'jnp.concatenate', 'axis 2', 'dimension 2');
  assertThrowsMentioning(t, () => m.concatenate([a, a], { dtype: 'float8' as DType }), 'jnp.concatenate', 'dtype', "'float8'");
  assertThrowsMentioning(t, () => m.concatenate([a, a], { axes: 0 } as object), 'jnp.concatenate', "unknown option 'axes'");
  assertThrowsMentioning(t, () => m.concatenate([a, 'b' as unknown as Array]), 'jnp.concatenate', 'arrays[1]', "'b'");
  assertThrowsMentioning(t, () => m.stack([a, zeros([3, 2])]), 'jnp.stack', 'same shape', '[2,3]', '[3,2]');
  assertThrowsMentioning(t, () => m.stack([a, a], { axis: 3 }), 'jnp.stack', 'axis 3', 'dimension 3');
  assertThrowsMentioning(t, () => m.stack([]), 'jnp.stack', 'at least one');
  assertThrowsMentioning(t, () => m.hstack([a, zeros([3, 1])]), 'jnp.hstack', 'except along axis 1', '[3,1]');
  assertThrowsMentioning(t, () => m.vstack([zeros([2]), zeros([3])]), 'jnp.vstack', 'except along axis 0', '[1,2]', '[1,3]');
  assertThrowsMentioning(t, () => m.dstack([zeros([2]), zeros([3])]), 'jnp.dstack', 'except along axis 2');
});

test('split: unequal division, bad sections, indices and axes', (t) => {
  const x = zeros([7, 2]);
  assertThrowsMentioning(t, () => m.split(x, 3), 'jnp.split', 'equal division', 'size 7', '3 sections');
  assertThrowsMentioning(t, () => m.split(x, 0), 'jnp.split', 'sections', '0');
  assertThrowsMentioning(t, () => m.arraySplit(x, -1), 'jnp.arraySplit', 'sections', '-1');
  assertThrowsMentioning(t, () => m.split(x, [1.5]), 'jnp.split', 'indicesOrSections', '[1.5]');
  assertThrowsMentioning(t, () => m.split(x, 2, { axis: 2 }), 'jnp.split', 'axis 2', 'dimension 2');
  assertThrowsMentioning(t, () => m.split(zeros([]), 1), 'jnp.split', 'axis 0', 'dimension 0');
  assertThrowsMentioning(t, () => m.split(x, 7, { axes: 0 } as object), 'jnp.split', "unknown option 'axes'");
});

test('tile and repeat: bad counts and axes', (t) => {
  const x = zeros([2, 3]);
  assertThrowsMentioning(t, () => m.tile(x, [-1]), 'jnp.tile', 'reps', '[-1]');
  assertThrowsMentioning(t, () => m.tile(x, 1.5), 'jnp.tile', 'reps', '1.5');
  assertThrowsMentioning(t, () => m.repeat(x, -2), 'jnp.repeat', 'repeats', '-2');
  assertThrowsMentioning(t, () => m.repeat(x, [1, 2], { axis: 1 }), 'jnp.repeat', '2 entries', 'axis 1', '3 elements');
  assertThrowsMentioning(t, () => m.repeat(x, [1, 0.5], { axis: 0 }), 'jnp.repeat', 'repeats', '[1,0.5]');
  assertThrowsMentioning(t, () => m.repeat(x, 2, { axis: -3 }), 'jnp.repeat', 'axis -3', 'dimension 2');
  assertThrowsMentioning(t, () => m.repeat(x, 2, { totalRepeatLength: 4 } as object), 'jnp.repeat', "unknown option 'totalRepeatLength'");
});

test('flips and rot90: bad axes and ranks', (t) => {
  const x = zeros([2, 3]);
  assertThrowsMentioning(t, () => m.flip(x, { axis: 2 }), 'jnp.flip', 'axis 2', 'dimension 2');
  assertThrowsMentioning(t, () => m.flip(x, { axis: [1, -1] }), 'jnp.flip', 'repeated', '[1,-1]');
  assertThrowsMentioning(t, () => m.fliplr(zeros([3])), 'jnp.fliplr', 'at least 2', '[3]');
  assertThrowsMentioning(t, () => m.flipud(zeros([])), 'jnp.flipud', 'at least 1', '[]');
  assertThrowsMentioning(t, () => m.rot90(zeros([3])), 'jnp.rot90', 'at least 2', '[3]');
  assertThrowsMentioning(t, () => m.rot90(x, { axes: [0, -2] }), 'jnp.rot90', 'repeated', '[0,-2]');
  assertThrowsMentioning(t, () => m.rot90(x, { axes: [0, 1, 2] as unknown as [number, number] }), 'jnp.rot90', 'axes', '[0,1,2]');
  assertThrowsMentioning(t, () => m.rot90(x, { k: 0.5 }), 'jnp.rot90', 'k', '0.5');
});

test('pad: bad widths, modes and constant values', (t) => {
  const x = zeros([2, 3]);
  assertThrowsMentioning(t, () => m.pad(x, 1, { mode: 'mean' as 'edge' }), 'jnp.pad', "'mean'", "'constant', 'edge', 'reflect', 'symmetric', 'wrap'");
  assertThrowsMentioning(t, () => m.pad(x, -1), 'jnp.pad', 'padWidth', '-1');
  assertThrowsMentioning(t, () => m.pad(x, [[1, 1], [1, 1], [1, 1]]), 'jnp.pad', 'padWidth', 'per axis (2)', '[[1,1],[1,1],[1,1]]');
  assertThrowsMentioning(t, () => m.pad(x, [1, 2, 3] as unknown as number), 'jnp.pad', 'padWidth', '[1,2,3]');
  assertThrowsMentioning(t, () => m.pad(x, [1.5, 0]), 'jnp.pad', 'padWidth', '[1.5,0]');
  assertThrowsMentioning(t, () => m.pad(x, 'wide' as unknown as number), 'jnp.pad', 'padWidth', "'wide'");
  assertThrowsMentioning(t, () => m.pad(x, 1, { mode: 'edge', constantValues: 1 }), 'jnp.pad', 'constantValues', "'edge'");
  assertThrowsMentioning(t, () => m.pad(zeros([0, 2]), 1, { mode: 'reflect' }), 'jnp.pad', 'empty axis 0', "'reflect'");
  assertThrowsMentioning(t, () => m.pad(zeros([2, 0]), [[0, 0], [1, 0]], { mode: 'wrap' }), 'jnp.pad', 'empty axis 1', "'wrap'");
  assertThrowsMentioning(t, () => m.pad(x, 1, { constantValues: [1, 2, 3] as unknown as number }), 'jnp.pad', 'constantValues', '[1,2,3]');
  assertThrowsMentioning(t, () => m.pad(x, 1, { constantValues: zeros([2]) }), 'jnp.pad', 'constantValues', '[2]');
  assertThrowsMentioning(t, () => m.pad(x, 1, { reflectType: 'odd' } as object), 'jnp.pad', "unknown option 'reflectType'");
});

test('tril and triu: rank and k', (t) => {
  assertThrowsMentioning(t, () => m.tril(zeros([3])), 'jnp.tril', 'm', 'at least 2', '[3]');
  assertThrowsMentioning(t, () => m.triu(zeros([])), 'jnp.triu', 'm', 'at least 2', '[]');
  assertThrowsMentioning(t, () => m.tril(zeros([2, 2]), 0.5), 'jnp.tril', 'k', '0.5');
  assertThrowsMentioning(t, () => m.triu(zeros([2, 2]), '1' as unknown as number), 'jnp.triu', 'k', "'1'");
});

test('stack and concatenate of 300 arrays (more than a launch takes buffers), eager, under jit and through grad', async (t) => {
  const jax = await import('../lib/index.js');
  const rows = globalThis.Array.from({ length: 300 }, (_, i) => array([i, i + 0.5]));
  const expected = rows.flatMap((_, i) => [i, i + 0.5]);
  assertArray(t, m.stack(rows), { shape: [300, 2], dtype: 'float32', values: expected });
  const jitted = jax.jit((...a: Array[]) => m.concatenate(a))(...rows);
  assertArray(t, jitted, { shape: [600], dtype: 'float32', values: expected });
  // the gradient of a weighted sum of the stack reaches every row
  const grads = jax.grad((a: Array[]) => jax.numpy.sum(jax.numpy.multiply(m.stack(a), arange(600).reshape([300, 2]))))(rows) as Array[];
  t.is(grads.length, 300);
  assertArray(t, grads[299]!, { shape: [2], dtype: 'float32', values: [598, 599] });
});
