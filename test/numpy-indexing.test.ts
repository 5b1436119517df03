// x.index(...) / x.at(...) / jnp.take / jnp.takeAlongAxis against NumPy
// (test/fixtures/gen_numpy_indexing.py emulates JAX's out-of-bounds rules),
// the compiled kernels against the reference interpreter, and bad input.
import test from 'ava';
import type { Array, IndexItem } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import * as jnp from '../lib/numpy/index.js';
import { at, index, take, takeAlongAxis } from '../lib/numpy/indexing.js';
import * as jax from '../lib/index.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference } from './helpers/oracle.js';
import { decodeNumber as number, loadFixture } from './helpers/fixtures.js';
import { sweep } from './helpers/emulator.js';

type Value = number | boolean | string;
interface Encoded {
  shape: number[];
  dtype: DType;
  values: Value[];
}
type EncodedItem = number | null | string | (number | null)[] | { array: unknown; dtype: DType } | { nested: unknown };

interface Fixture {
  index: { name: string; shape: number[]; index: EncodedItem[]; expected: Encoded }[];
  update: { name: string; x: Encoded; index: EncodedItem[]; op: 'set' | 'add' | 'multiply' | 'min' | 'max'; values: Encoded; expected: Encoded }[];
  take: { name: string; a: Encoded; indices: Encoded; axis: number | null; mode: 'fill' | 'clip' | 'wrap' | null; fillValue: number | null; expected: Encoded }[];
  takeAlongAxis: { name: string; a: Encoded; indices: Encoded; axis: number | null; mode: 'fill' | 'clip' | null; fillValue: number | null; expected: Encoded }[];
}

const fixture = loadFixture<Fixture>('numpy-indexing.json');

const expected = (e: Encoded) => ({ shape: e.shape, dtype: e.dtype, values: e.values.map(number) });
const decode = (e: Encoded): Array => jnp.array(e.values.map(number), { dtype: e.dtype }).reshape(e.shape);
const arange = (shape: number[], dtype: DType = 'float32'): Array => {
  const n = shape.reduce((a, b) => a * b, 1);
  return jnp.array(globalThis.Array.from({ length: n }, (_, i) => i), { dtype }).reshape(shape);
};

function decodeItem(item: EncodedItem): IndexItem {
  if (item !== null && typeof item === 'object' && !globalThis.Array.isArray(item)) {
    if ('nested' in item) return item.nested as IndexItem;
    return jnp.array(item.array as number[], { dtype: item.dtype });
  }
  return item as IndexItem;
}

// ---- x[idx] ----

// the emulated GPU (helpers/emulator.ts) runs every other fixture case of x[idx] and x.at[idx]
for (const c of sweep(fixture.index, 2)) {
  test(`index ${c.name}`, (t) => {
    const x = arange(c.shape);
    assertArray(t, index(x, c.index.map(decodeItem)), expected(c.expected));
  });
}

test('index results match the reference interpreter (slices, gathers, newaxis)', (t) => {
  const x = arange([2, 3, 4]);
  checkAgainstReference(t, () => index(x, [1, [null, null, -1], [1, 4, 2]]));
  checkAgainstReference(t, () => index(x, ['newaxis', jnp.array([1, 0], { dtype: 'int32' }), null, jnp.array([[3], [-1]], { dtype: 'int32' })]));
  checkAgainstReference(t, () => index(x, ['...', jnp.array([9, -9], { dtype: 'int32' })]));
});

test('index with no items, or only whole axes, returns x unchanged', (t) => {
  const x = arange([2, 3]);
  t.is(index(x, []), x);
  t.is(index(x, [null, '...']), x);
});

test('index keeps the dtype and accepts integer TypedArrays and 0-d arrays', (t) => {
  const x = arange([3, 4], 'int32');
  assertArray(t, index(x, [new Int32Array([2, 0])]), { shape: [2, 4], dtype: 'int32', values: [8, 9, 10, 11, 0, 1, 2, 3] });
  assertArray(t, index(x, [jnp.array(1, { dtype: 'int32' }), jnp.array([3, 0], { dtype: 'uint32' })]), { shape: [2], dtype: 'int32', values: [7, 4] });
  const b = jnp.array([true, false, true]);
  assertArray(t, index(b, [jnp.array([2, 1], { dtype: 'int32' })]), { shape: [2], dtype: 'bool', values: [1, 0] });
  const h = jnp.array([1.5, 2.5, 3.5], { dtype: 'bfloat16' });
  assertArray(t, index(h, [[null, null, -2]]), { shape: [2], dtype: 'bfloat16', values: [3.5, 1.5] });
});

test('index array entries out of bounds are clamped, as JAX does when reading', (t) => {
  const x = arange([5]);
  assertArray(t, index(x, [jnp.array([5, 100, -6, -100], { dtype: 'int32' })]), { shape: [4], dtype: 'float32', values: [4, 4, 0, 0] });
  const big = jnp.array([4294967295, 1], { dtype: 'uint32' });
  assertArray(t, index(x, [big]), { shape: [2], dtype: 'float32', values: [4, 1] });
});

// ---- x.at[idx] ----

for (const c of sweep(fixture.update, 2)) {
  test(`at ${c.name}`, (t) => {
    const x = decode(c.x);
    const before = x.dataSync().slice();
    const result = at(x, c.index.map(decodeItem))[c.op](decode(c.values));
    assertArray(t, result, expected(c.expected));
    t.deepEqual(x.dataSync(), before, 'x itself is not modified');
  });
}

test('at updates match the reference interpreter, including the new scatter primitives', (t) => {
  const x = arange([3, 4]);
  const rows = jnp.array([0, 2, 0, 7], { dtype: 'int32' });
  const cols = jnp.array([1, 3, 1, 0], { dtype: 'int32' });
  const v = jnp.array([3, -1, 5, 2], { dtype: 'float32' });
  for (const op of ['set', 'add', 'multiply', 'min', 'max'] as const) {
    checkAgainstReference(t, () => at(x, [rows, cols])[op](v), { message: op });
    checkAgainstReference(t, () => at(x, [[null, null, -2], jnp.array([0, 0], { dtype: 'int32' })])[op](index(v, [[0, null, 2]]).reshape([2, 1])), { message: `${op} strided` });
  }
  const i = jnp.array([200, 7, 100, 3], { dtype: 'int32' });
  checkAgainstReference(t, () => at(i, [jnp.array([0, 0, 1, 2], { dtype: 'int32' })]).multiply(jnp.array([100000, 100000, -3, 0], { dtype: 'int32' })));
});

test('at: repeated indices accumulate for add/multiply/min/max; set keeps the last value', (t) => {
  const x = jnp.array([1, 1, 1], { dtype: 'float32' });
  const idx = jnp.array([0, 0, 0, 2], { dtype: 'int32' });
  const v = jnp.array([2, 3, 4, 5], { dtype: 'float32' });
  assertArray(t, at(x, [idx]).add(v), { shape: [3], dtype: 'float32', values: [10, 1, 6] });
  assertArray(t, at(x, [idx]).multiply(v), { shape: [3], dtype: 'float32', values: [24, 1, 5] });
  assertArray(t, at(x, [idx]).max(v), { shape: [3], dtype: 'float32', values: [4, 1, 5] });
  assertArray(t, at(x, [idx]).min(jnp.array([0, -3, 2, 0], { dtype: 'float32' })), { shape: [3], dtype: 'float32', values: [-3, 1, 0] });
  assertArray(t, at(x, [idx]).set(v), { shape: [3], dtype: 'float32', values: [4, 1, 5] });
});

test('at: values broadcast to the indexed shape, and JS scalars take x dtype', (t) => {
  const x = jnp.zeros([2, 3], { dtype: 'int32' });
  assertArray(t, at(x, [null, 1]).set(7), { shape: [2, 3], dtype: 'int32', values: [0, 7, 0, 0, 7, 0] });
  assertArray(t, at(x, [jnp.array([1], { dtype: 'int32' })]).add(jnp.array([1, 2, 3], { dtype: 'int32' })), { shape: [2, 3], dtype: 'int32', values: [0, 0, 0, 1, 2, 3] });
  assertArray(t, at(x, []).add(2), { shape: [2, 3], dtype: 'int32', values: [2, 2, 2, 2, 2, 2] });
  assertArray(t, at(x, ['...']).max([[1], [-1]]), { shape: [2, 3], dtype: 'int32', values: [1, 1, 1, 0, 0, 0] });
});

test('at: values are computed in the promoted dtype and cast back to x dtype, as JAX does', (t) => {
  const x = jnp.array([1, 2, 3], { dtype: 'int32' });
  // 1 + 1.5 + 1.5 = 4 (not 1 + 1 + 1): the sum is float32, then truncated back to int32
  assertArray(t, at(x, [jnp.array([0, 0], { dtype: 'int32' })]).add(1.5), { shape: [3], dtype: 'int32', values: [4, 2, 3] });
  assertArray(t, at(x, [2]).multiply(0.5), { shape: [3], dtype: 'int32', values: [1, 2, 1] });
  assertArray(t, at(x, [1]).set(-7.9), { shape: [3], dtype: 'int32', values: [1, -7, 3] });
  const h = jnp.array([1, 2], { dtype: 'float16' });
  assertArray(t, at(h, [0]).add(jnp.array(0.25, { dtype: 'float32' })), { shape: [2], dtype: 'float16', values: [1.25, 2] });
  const b = jnp.array([false, true, false]);
  assertArray(t, at(b, [jnp.array([0, 0], { dtype: 'int32' })]).add(true), { shape: [3], dtype: 'bool', values: [1, 1, 0] });
  assertArray(t, at(b, [1]).multiply(false), { shape: [3], dtype: 'bool', values: [0, 0, 0] });
  assertArray(t, at(b, [null]).add(true), { shape: [3], dtype: 'bool', values: [1, 1, 1] });
});

test('at: out-of-bounds index arrays are dropped by default, clamped with mode clip', (t) => {
  const x = jnp.zeros([4], { dtype: 'float32' });
  const idx = jnp.array([4, -5, 1, 100], { dtype: 'int32' });
  const v = jnp.array([1, 2, 3, 4], { dtype: 'float32' });
  assertArray(t, at(x, [idx]).set(v), { shape: [4], dtype: 'float32', values: [0, 3, 0, 0] });
  assertArray(t, at(x, [idx]).add(v, { mode: 'drop' }), { shape: [4], dtype: 'float32', values: [0, 3, 0, 0] });
  assertArray(t, at(x, [idx]).add(v, { mode: 'clip' }), { shape: [4], dtype: 'float32', values: [2, 3, 0, 5] });
  // a static integer out of bounds is an error unless a mode asks for JAX's drop/clip
  assertArray(t, at(x, [9]).set(1, { mode: 'drop' }), { shape: [4], dtype: 'float32', values: [0, 0, 0, 0] });
  assertArray(t, at(x, [9]).set(1, { mode: 'clip' }), { shape: [4], dtype: 'float32', values: [0, 0, 0, 1] });
});

test('at().get is x[idx]; mode fill reads fillValue out of bounds', (t) => {
  const x = arange([2, 3]);
  assertArray(t, at(x, [1, [null, null, -1]]).get(), { shape: [3], dtype: 'float32', values: [5, 4, 3] });
  assertArray(t, at(x, [jnp.array([1, 5], { dtype: 'int32' })]).get(), { shape: [2, 3], dtype: 'float32', values: [3, 4, 5, 3, 4, 5] });
  const filled = at(x, [null, jnp.array([0, 3, -4], { dtype: 'int32' })]).get({ mode: 'fill' });
  assertArray(t, filled, { shape: [2, 3], dtype: 'float32', values: [0, NaN, NaN, 3, NaN, NaN] });
  assertArray(t, at(x, [null, jnp.array([-1, 3], { dtype: 'int32' })]).get({ mode: 'fill', fillValue: -1 }), { shape: [2, 2], dtype: 'float32', values: [2, -1, 5, -1] });
  assertArray(t, at(x, [7]).get({ mode: 'clip' }), { shape: [3], dtype: 'float32', values: [3, 4, 5] });
  const ints = arange([3], 'int32');
  assertArray(t, at(ints, [jnp.array([0, 3], { dtype: 'int32' })]).get({ mode: 'fill' }), { shape: [2], dtype: 'int32', values: [0, -2147483648] });
  assertArray(t, at(jnp.array([1, 2], { dtype: 'uint8' }), [jnp.array([2], { dtype: 'int32' })]).get({ mode: 'drop' }), { shape: [1], dtype: 'uint8', values: [255] });
});

test('at on an empty selection returns x', (t) => {
  const x = arange([3]);
  t.is(at(x, [jnp.array([], { dtype: 'int32' })]).set(5), x);
  t.is(at(x, [[2, 1]]).add(5), x);
});

// ---- take / takeAlongAxis ----

for (const c of fixture.take) {
  test(c.name, (t) => {
    const options = { axis: c.axis, ...(c.mode ? { mode: c.mode } : {}), ...(c.fillValue !== null ? { fillValue: c.fillValue } : {}) };
    assertArray(t, take(decode(c.a), decode(c.indices), options), expected(c.expected));
  });
}

for (const c of fixture.takeAlongAxis) {
  test(c.name, (t) => {
    const options = { ...(c.mode ? { mode: c.mode } : {}), ...(c.fillValue !== null ? { fillValue: c.fillValue } : {}) };
    assertArray(t, takeAlongAxis(decode(c.a), decode(c.indices), c.axis, options), expected(c.expected));
  });
}

test('take and takeAlongAxis match the reference interpreter', (t) => {
  const a = arange([3, 4]);
  checkAgainstReference(t, () => take(a, jnp.array([[0, 5], [-1, 2]], { dtype: 'int32' }), { axis: 1 }));
  checkAgainstReference(t, () => take(a, jnp.array([0, 5, -1], { dtype: 'int32' }), { mode: 'wrap' }));
  checkAgainstReference(t, () => takeAlongAxis(a, jnp.array([[0], [3], [-1]], { dtype: 'int32' }), 1));
  checkAgainstReference(t, () => takeAlongAxis(a, jnp.array([[2, 0, 1, 7]], { dtype: 'int32' }), 0, { mode: 'clip' }));
});

test('take accepts JS arrays and numbers; a scalar index drops the axis', (t) => {
  assertArray(t, take([[1, 2], [3, 4]], [1, 0], { axis: 1 }), { shape: [2, 2], dtype: 'int32', values: [2, 1, 4, 3] });
  assertArray(t, take([[1, 2], [3, 4]], 1, { axis: 0 }), { shape: [2], dtype: 'int32', values: [3, 4] });
  assertArray(t, take(jnp.array(5, { dtype: 'int32' }), [0, 0]), { shape: [2], dtype: 'int32', values: [5, 5] });
  assertArray(t, take(jnp.zeros([0, 2]), jnp.array([], { dtype: 'int32' }), { axis: 0 }), { shape: [0, 2], dtype: 'float32', values: [] });
});

// ---- bad input ----

test('index: static integers out of bounds are clamped when reading and dropped when updating, as in JAX', (t) => {
  const x = arange([2, 3]);
  // JAX's Common Gotchas: jnp.arange(10)[11] is Array(9): a read must return something, so it clamps
  t.deepEqual(globalThis.Array.from(index(x, [2]).dataSync()), [3, 4, 5]);
  t.deepEqual(globalThis.Array.from(index(x, [0, -4]).dataSync()), [0]);
  t.deepEqual(globalThis.Array.from(index(x, ['...', 3]).dataSync()), [2, 5]);
  t.deepEqual(globalThis.Array.from(index(x, [jnp.array([0], { dtype: 'int32' }), 5]).dataSync()), [2]);
  t.deepEqual(globalThis.Array.from(at(x, [0, 3]).get().dataSync()), [2]);
  // updates out of bounds are dropped (mode 'clip' clamps them)
  t.deepEqual(globalThis.Array.from(at(x, [5]).set(1).dataSync()), [0, 1, 2, 3, 4, 5]);
  t.deepEqual(globalThis.Array.from(at(x, [5]).set(9, { mode: 'clip' }).dataSync()), [0, 1, 2, 9, 9, 9]);
  // an axis of size 0 has nothing to return: still an IndexError naming index, axis and size
  assertThrowsMentioning(t, () => index(jnp.zeros([0, 2]), [0]), 'Array.index', 'index 0', 'axis 0', 'size 0');
  assertThrowsMentioning(t, () => index(jnp.zeros([0, 2]), [jnp.array([0], { dtype: 'int32' })]), 'out of bounds', 'size 0');
  t.is(t.throws(() => index(jnp.zeros([0, 2]), [0]))?.name, 'IndexError');
});

test('index: malformed items give clear errors', (t) => {
  const x = arange([2, 3]);
  assertThrowsMentioning(t, () => index(x, [0, 0, 0]), 'too many indices', 'shape [2,3]', '3 regular indices');
  assertThrowsMentioning(t, () => index(x, ['...', '...']), 'single ellipsis');
  assertThrowsMentioning(t, () => index(x, [1.5]), 'index 1.5', 'must be an integer');
  assertThrowsMentioning(t, () => index(x, [NaN]), 'must be an integer');
  assertThrowsMentioning(t, () => index(x, [[0, 2, 0]]), 'slice step cannot be zero');
  assertThrowsMentioning(t, () => index(x, [[1.5, 2]]), 'slice start', '1.5');
  assertThrowsMentioning(t, () => index(x, [[0, 2, 0.5]]), 'slice step');
  assertThrowsMentioning(t, () => index(x, [[1] as unknown as IndexItem]), '[start, stop]', 'jnp.array');
  assertThrowsMentioning(t, () => index(x, [[0, 1, 2, 3] as unknown as IndexItem]), '[start, stop]', 'index array');
  assertThrowsMentioning(t, () => index(x, ['foo' as IndexItem]), "'foo'", 'not supported');
  assertThrowsMentioning(t, () => index(x, [true as unknown as IndexItem]), 'boolean index true');
  assertThrowsMentioning(t, () => index(x, [undefined as unknown as IndexItem]), 'position 0', 'undefined');
  assertThrowsMentioning(t, () => index(x, [{} as unknown as IndexItem]), 'position 0');
  assertThrowsMentioning(t, () => index(x, 3 as unknown as IndexItem[]), 'list of index items');
});

test('index: float index arrays are rejected; concrete boolean masks select, traced ones suggest jnp.where', (t) => {
  const x = arange([3]);
  assertThrowsMentioning(t, () => index(x, [jnp.array([0.5, 1])]), 'integer dtype', 'float32');
  assertThrowsMentioning(t, () => index(x, [new Float32Array([1]) as unknown as IndexItem]), 'integer dtype', 'float32');
  assertThrowsMentioning(t, () => index(x, [[[0.5]]]), 'integer dtype');
  const mask = jnp.array([true, false, true]);
  t.deepEqual(globalThis.Array.from(index(x, [mask]).dataSync()), [0, 2]);
  t.deepEqual(globalThis.Array.from(at(x, [mask]).set(7).dataSync()), [7, 1, 7]);
  assertThrowsMentioning(t, () => index(x, [[[true, false]]]), 'boolean mask', 'shape [1,2]', 'does not match');
  assertThrowsMentioning(t, () => jax.jit((m: Array) => index(x, [m]))(mask), 'boolean mask', 'shape [3]', 'traced', 'jnp.where');
  assertThrowsMentioning(t, () => jax.jit((m: Array) => at(x, [m]).set(0))(mask), 'Array.at().set', 'jnp.where');
});

test('index: index arrays that do not broadcast together are rejected', (t) => {
  const x = arange([3, 4]);
  assertThrowsMentioning(t, () => index(x, [jnp.array([0, 1], { dtype: 'int32' }), jnp.array([0, 1, 2], { dtype: 'int32' })]), 'shapes [2], [3]', 'broadcast');
});

test('at: bad values, options and modes are rejected', (t) => {
  const x = arange([2, 3]);
  assertThrowsMentioning(t, () => at(x, [0]).set(jnp.array([1, 2])), 'Array.at().set', 'shape [2]', 'indexed shape [3]');
  assertThrowsMentioning(t, () => at(x, [0]).add(jnp.zeros([1, 3])), 'shape [1,3]', 'indexed shape [3]');
  assertThrowsMentioning(t, () => at(x, [0]).set('a' as unknown as number), 'Array.at().set', 'value');
  assertThrowsMentioning(t, () => at(x, [0]).set(1, { mod: 'clip' } as never), "unknown option 'mod'");
  assertThrowsMentioning(t, () => at(x, [0]).get({ mode: 'wrap' } as never), 'mode', "'wrap'");
  assertThrowsMentioning(t, () => at(x, [0]).get({ fillValue: 'x' } as never), 'fillValue');
  assertThrowsMentioning(t, () => at(x, 0 as unknown as IndexItem[]), 'Array.at', 'list of index items');
});

test('take / takeAlongAxis: bad input', (t) => {
  const a = arange([2, 3]);
  assertThrowsMentioning(t, () => take(a, jnp.array([0.5])), 'jnp.take', 'integer dtype', 'float32');
  assertThrowsMentioning(t, () => take(a, [0], { axis: 2 }), 'jnp.take', 'axis 2', 'out of bounds');
  assertThrowsMentioning(t, () => take(a, [0], { mode: 'raise' }), "'raise' is not supported");
  assertThrowsMentioning(t, () => take(a, [0], { mode: 'nope' as never }), "invalid mode 'nope'");
  assertThrowsMentioning(t, () => take(a, [0], { axes: 0 } as never), "unknown option 'axes'");
  assertThrowsMentioning(t, () => take(jnp.zeros([0, 2]), [0], { axis: 0 }), 'non-empty take from an empty axis');
  assertThrowsMentioning(t, () => take(a, [0], { fillValue: 'x' as never }), 'fillValue');
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([0, 1], { dtype: 'int32' }), 1), 'jnp.takeAlongAxis', 'same number of dimensions', 'shape [2]');
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0, 1]], { dtype: 'int32' }), null), '1-D when axis is null', 'shape [1,2]');
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0], [1], [2]], { dtype: 'int32' }), 1), 'shape [3,1]', 'cannot be broadcast');
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0]], { dtype: 'int32' }), 2), 'axis 2', 'out of bounds');
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0.5]]), 0), 'integer dtype');
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0]], { dtype: 'int32' }), 0, { mode: 'wrap' } as never), "invalid mode 'wrap'");
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0]], { dtype: 'int32' }), 0, { fill: 1 } as never), "unknown option 'fill'");
  assertThrowsMentioning(t, () => takeAlongAxis(a, jnp.array([[0]], { dtype: 'int32' }), undefined as never), 'axis is required');
});
