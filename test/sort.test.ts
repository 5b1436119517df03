// Sorting (lax.sort / sortKeyVal / topK, jnp.sort / argsort / lexsort /
// searchsorted) against NumPy-computed fixtures (test/fixtures/gen_sort.py),
// bit for bit (the sign of zeros and the place of every NaN included), eager
// and under jit; vmap against a loop; jvp and grad (JAX's _sort_jvp); the
// merge stages on long rows and on a middle axis; several keys against the
// float64 reference interpreter; bad input. Runs on whichever platform the
// suite runs on (the CPU, or the emulated GPU with JAXON_TEST_PLATFORM=cuda).
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { assertThrowsMentioning, checkAgainstReference, randomValues } from './helpers/oracle.js';
import { type EncodedNumber, decodeNumber, loadFixture } from './helpers/fixtures.js';
import { withX64 } from './helpers/x64.js';

interface Spec { shape: number[]; dtype: DType; values: EncodedNumber[] }
interface Case { fn: string; args: string[]; options: Record<string, unknown>; expected: Spec | Spec[] | { values: Spec; indices: Spec } }
const fixture = loadFixture<{ inputs: Record<string, Spec>; cases: Case[] }>('sort.json');

const make = (s: Spec): Array => lax.reshape(jnp.array(s.values.map((v) => (typeof v === 'boolean' ? Number(v) : decodeNumber(v))), { dtype: s.dtype }), s.shape);
const input = (name: string): Array => make(fixture.inputs[name]!);

/** Shape, dtype and every value exactly: Object.is tells -0 from 0 (a stable sort keeps their order) and NaN equals NaN. */
function assertExact(t: import('ava').ExecutionContext, actual: Array, expected: Spec, message: string): void {
  t.deepEqual([...actual.shape], expected.shape, `${message}: shape`);
  t.is(actual.dtype, expected.dtype, `${message}: dtype`);
  const got = globalThis.Array.from(actual.dataSync(), Number);
  const want = expected.values.map((v) => (typeof v === 'boolean' ? Number(v) : decodeNumber(v)));
  const bad = got.findIndex((g, i) => !Object.is(g, want[i]));
  if (got.length !== want.length || bad >= 0) t.fail(`${message}: at flat index ${bad} got ${got[bad]}, expected ${want[bad]} (got ${got.join(',')})`);
  else t.pass();
}

function run(c: Case, args: Array[]): Array[] {
  const o = { ...c.options };
  switch (c.fn) {
    case 'sort': return [jnp.sort(args[0]!, o)];
    case 'argsort': return [jnp.argsort(args[0]!, o)];
    case 'lexsort': return [jnp.lexsort(args, o)];
    case 'searchsorted': {
      const sorter = typeof o.sorter === 'string' ? input(o.sorter) : undefined;
      return [jnp.searchsorted(args[0]!, args[1]!, { side: o.side as 'left' | 'right', ...(sorter ? { sorter } : {}) })];
    }
    case 'top_k': return lax.topK(args[0]!, o.k as number);
    case 'partition': return [jnp.partition(args[0]!, o.kth as number, { axis: o.axis as number })];
    case 'argpartition': return [jnp.argpartition(args[0]!, o.kth as number, { axis: o.axis as number })];
    case 'nonzero': return jnp.nonzero(args[0]!, o);
    case 'flatnonzero': return [jnp.flatnonzero(args[0]!, o)];
    case 'argwhere': return [jnp.argwhere(args[0]!, o)];
    case 'bincount': return [jnp.bincount(args[0]!, { ...o, ...(typeof o.weights === 'string' ? { weights: input(o.weights) } : {}) })];
    case 'unique': {
      const out = jnp.unique(args[0]!, o);
      return out instanceof globalThis.Array ? out : [out];
    }
  }
  throw new Error(`unknown fixture function ${c.fn}`);
}

const expectedOf = (c: Case): Spec[] => (globalThis.Array.isArray(c.expected) ? c.expected : 'indices' in c.expected ? [c.expected.values, c.expected.indices] : [c.expected as Spec]);

/** Functions whose result size depends on the data run under jit only with a static size (length for bincount). */
const staticSized = (c: Case) => !['nonzero', 'flatnonzero', 'argwhere', 'bincount', 'unique'].includes(c.fn) || c.options.size !== undefined || c.options.length !== undefined;

/**
 * The fixture cases a platform runs: all of them on the CPU; on the emulated GPU, whose kernels are specialized to
 * their shapes and each compiled by the host's C++ compiler, every third case of a function plus its first two (the
 * same kernel IR renders both targets; the emulated sweep of all 79 compiled 556 kernels, 3-4 minutes of CI).
 */
function sweep(cases: Case[]): Case[] {
  if (jax.defaultBackend() !== 'cuda' || process.env['JAXON_SORT_FULL_SWEEP'] === '1') return cases;
  const seen = new Map<string, number>();
  return cases.filter((c) => {
    const i = seen.get(c.fn) ?? 0;
    seen.set(c.fn, i + 1);
    return i < 2 || i % 3 === 0;
  });
}

for (const fns of [['sort'], ['argsort'], ['lexsort', 'searchsorted'], ['top_k', 'partition', 'argpartition'], ['nonzero', 'flatnonzero', 'argwhere', 'bincount', 'unique']]) {
  test(`${fns.join(', ')} match NumPy bit for bit, eager and under jit`, (t) => {
    for (const fn of fns) t.true(fixture.cases.filter((c) => c.fn === fn).length >= 2, fn);
    for (const c of sweep(fixture.cases.filter((x) => fns.includes(x.fn)))) {
      const fn = c.fn;
      const args = c.args.map(input);
      const label = `${fn}(${c.args.join(', ')}, ${JSON.stringify(c.options)})`;
      const eager = run(c, args);
      t.is(eager.length, expectedOf(c).length, `${label}: number of outputs`);
      if (!staticSized(c)) {
        expectedOf(c).forEach((e, i) => assertExact(t, eager[i]!, e, `${label} output ${i}`));
        const error = t.throws(() => jax.jit((...xs: Array[]) => run(c, xs))(...args));
        t.true(error?.name === 'ConcretizationTypeError' && error.message.includes(`jnp.${fn}`) && /static `(size|length)`/.test(error.message), error?.message);
        continue;
      }
      const jitted = jax.jit((...xs: Array[]) => run(c, xs))(...args) as Array[];
      expectedOf(c).forEach((e, i) => {
        assertExact(t, eager[i]!, e, `${label} output ${i}`);
        assertExact(t, jitted[i]!, e, `${label} under jit, output ${i}`);
      });
    }
  });
}

/** JavaScript's stable sort with JAX's float order: the expected result for rows of any length. */
function stableOrder(values: number[]): number[] {
  const key = (v: number) => (Number.isNaN(v) ? Infinity : v);
  return values.map((_, i) => i).sort((a, b) => {
    const x = values[a]!;
    const y = values[b]!;
    if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
    return key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : a - b;
  });
}

test('long rows (merge passes), a middle axis and one long row sort stably, eager and under jit', (t) => {
  // 2 x 1000 with many ties and NaNs: runs of 32, five merges of uneven last pairs
  const n = 1000;
  const raw = randomValues(2 * n, 7, -20, 20).map((v, i) => (i % 97 === 0 ? NaN : i % 89 === 0 ? -0 : Math.round(v)));
  const x = lax.reshape(jnp.array(raw, { dtype: 'float32' }), [2, n]);
  const orders = [0, 1].map((r) => stableOrder(raw.slice(r * n, (r + 1) * n)));
  const argsortRows = [jnp.argsort(x), jax.jit((a: Array) => jnp.argsort(a))(x) as Array];
  for (const got of argsortRows) t.deepEqual(globalThis.Array.from(got.dataSync()), orders.flat());
  const sorted = globalThis.Array.from(jnp.sort(x).dataSync());
  t.true(sorted.every((v, i) => Object.is(v, Math.fround(raw[Math.floor(i / n) * n + orders[Math.floor(i / n)]![i % n]!]!))));
  // sorting along axis 1 of [3, 70, 2]: rows strided by 2, with a payload permuted alike
  const m = jnp.array(randomValues(420, 3, 0, 9).map(Math.floor), { dtype: 'int32' });
  const cube = lax.reshape(m, [3, 70, 2]);
  const payload = lax.broadcastedIota('int32', [3, 70, 2], 1);
  const [keys, perm] = lax.sortKeyVal(cube, payload, { dimension: 1 });
  const flat = globalThis.Array.from(m.dataSync());
  const keysFlat = globalThis.Array.from(keys!.dataSync());
  const permFlat = globalThis.Array.from(perm!.dataSync());
  for (let a = 0; a < 3; a++) {
    for (let c = 0; c < 2; c++) {
      const column = globalThis.Array.from({ length: 70 }, (_, p) => flat[(a * 70 + p) * 2 + c]!);
      const order = stableOrder(column);
      order.forEach((from, p) => {
        if (permFlat[(a * 70 + p) * 2 + c] !== from || keysFlat[(a * 70 + p) * 2 + c] !== column[from]) t.fail(`[${a}, ${p}, ${c}]`);
      });
    }
  }
  t.pass();
});

test('long rows in every key width: special floats, halves, small and unsigned integers, two keys and top_k order stably', (t) => withX64(true, () => {
  // rows of 300 (the CPU radix-sorts whole rows, the GPU merges runs): -0 equal to 0, NaNs of both signs last,
  // halves, int8 below zero, uint32 above 2^31, a float64 key with an int16 tie-breaker, top_k's order on long rows
  const n = 300;
  const specials = [NaN, -NaN, -0, 0, Infinity, -Infinity];
  const raw = randomValues(n, 11, -6, 6).map((v, i) => (i % 7 === 0 ? specials[(i / 7) % specials.length]! : Math.round(v * 2) / 2));
  const argsortOf = jax.jit((a: Array) => jnp.argsort(a));
  for (const dtype of ['float64', 'float16', 'bfloat16'] as DType[]) {
    t.deepEqual(globalThis.Array.from(argsortOf(jnp.array(raw, { dtype })).dataSync()), stableOrder(raw), dtype);
  }
  const small = raw.map((v, i) => (Number.isFinite(v) ? Math.round(v * 10) : i % 5 - 2));
  t.deepEqual(globalThis.Array.from(argsortOf(jnp.array(small, { dtype: 'int8' })).dataSync()), stableOrder(small), 'int8');
  const big = small.map((v) => (v < 0 ? 2 ** 32 + v * 1000 : v));
  t.deepEqual(globalThis.Array.from(argsortOf(jnp.array(big, { dtype: 'uint32' })).dataSync()), stableOrder(big), 'uint32');
  const minor = small.map((v) => (v * 7) % 5);
  const [, , perm] = jax.jit((a: Array, b: Array, c: Array) => lax.sort([a, b, c], { numKeys: 2 }))(
    jnp.array(raw.map((v) => (Number.isNaN(v) ? NaN : Math.sign(v))), { dtype: 'float64' }), jnp.array(minor, { dtype: 'int16' }), lax.iota('int32', n)) as Array[];
  const major = raw.map((v) => (Number.isNaN(v) ? NaN : Math.sign(v) + 0));
  const twoKeys = major.map((_, i) => i).sort((a, b) => {
    const x = major[a]!, y = major[b]!;
    if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
    if (!Number.isNaN(x) && x !== y) return x - y;
    return minor[a]! - minor[b]! || a - b;
  });
  t.deepEqual(globalThis.Array.from(perm!.dataSync()), twoKeys, 'float64 then int16 keys');
  for (const dtype of ['float32', 'float64'] as DType[]) {
    const x = jnp.array(raw, { dtype });
    const [, indices] = jax.jit((a: Array) => lax.topK(a, 20))(x) as [Array, Array];
    // XLA TopK's key on the stored bits, largest first, ties by lower index
    const data = x.dataSync();
    const key = dtype === 'float32'
      ? ((words) => (i: number) => BigInt(words[i]! < 0 ? 0x7fffffff - (words[i]! >>> 0) : words[i]!))(new Int32Array(data.buffer, data.byteOffset, n))
      : ((words) => (i: number) => (words[i]! < 0n ? 0x7fffffffffffffffn - BigInt.asUintN(64, words[i]!) : words[i]!))(new BigInt64Array(data.buffer, data.byteOffset, n));
    const want = raw.map((_, i) => i).sort((a, b) => { const d = key(b) - key(a); return d > 0n ? 1 : d < 0n ? -1 : a - b; }).slice(0, 20);
    t.deepEqual(globalThis.Array.from(indices.dataSync()), want, `top_k ${dtype}`);
  }
}));

test('the CPU sort without scratch memory (insertion-sorted runs, then real merges) orders long rows as with it', (t) => {
  if (jax.defaultBackend() !== 'cpu') return t.pass();
  const n = 1000;
  const raw = randomValues(2 * n, 5, -20, 20).map((v, i) => (i % 97 === 0 ? NaN : i % 89 === 0 ? -0 : Math.round(v)));
  const x = lax.reshape(jnp.array(raw, { dtype: 'float32' }), [2, n]);
  const want = [0, 1].map((r) => stableOrder(raw.slice(r * n, (r + 1) * n))).flat();
  const keyed = lax.reshape(lax.iota('int32', 2 * n), [2, n]);
  const run = () => {
    const [values, indices] = lax.topK(x, 40);
    const [, carried] = lax.sortKeyVal(lax.neg(x), keyed);
    return [jnp.argsort(x), values!, indices!, carried!].map((a) => globalThis.Array.from(a.dataSync()));
  };
  const withScratch = run();
  t.deepEqual(withScratch[0], want);
  process.env.JAXON_TEST_SORT_NO_SCRATCH = '1';
  try {
    t.deepEqual(run(), withScratch);
  } finally {
    delete process.env.JAXON_TEST_SORT_NO_SCRATCH;
  }
});

test('topK orders as XLA TopK: a total order on the bits (-NaN lowest, -0 < +0, +NaN highest), equal values by lower index', (t) => {
  const nan = jnp.array([NaN], { dtype: 'float32' });
  const negativeNan = lax.neg(nan);
  const bits = (a: Array) => globalThis.Array.from(new Uint32Array(new Float32Array(a.dataSync()).buffer));
  t.is(bits(negativeNan)[0]! >>> 31, 1, 'lax.neg(NaN) has the sign bit set');
  const x = jnp.concatenate([jnp.array([1], { dtype: 'float32' }), nan, negativeNan, jnp.array([-0, 0, -Infinity, Infinity, 1], { dtype: 'float32' })]);
  for (const run of [(a: Array) => lax.topK(a, 8), jax.jit((a: Array) => lax.topK(a, 8))]) {
    const [values, indices] = run(x) as [Array, Array];
    t.deepEqual(globalThis.Array.from(indices.dataSync()), [1, 6, 0, 7, 4, 3, 5, 2]);
    const v = bits(values);
    t.deepEqual([v[0]! >>> 31, v[7]! >>> 31], [0, 1], 'NaN signs kept');
    t.true(Object.is(values.dataSync()[4], 0) && Object.is(values.dataSync()[5], -0));
  }
  checkAgainstReference(t, () => lax.topK(x, 8));
  for (const dtype of ['int32', 'uint8', 'float16'] as DType[]) {
    const y = jnp.array(randomValues(2 * 75, 5, 0, 9).map(Math.floor), { dtype }).reshape([2, 75]);
    checkAgainstReference(t, () => lax.topK(y, 40), { message: dtype });
  }
});

// ports of jax/tests/lax_test.py (testSortFloatSpecialValues, testSort / testSortKeyVal / testTopK over dtypes)
test('lax_test ports: special floats sort by value with NaNs last whatever their sign; sort, sortKeyVal, topK over dtypes', (t) => {
  for (const dtype of ['float16', 'bfloat16', 'float32'] as DType[]) {
    const x = jnp.concatenate([jnp.array([-Infinity, 0, -0, Infinity, NaN], { dtype }), lax.neg(jnp.array([NaN], { dtype }))]);
    const [, indices] = lax.sortKeyVal(x, lax.broadcastedIota('int32', [6], 0));
    t.deepEqual(globalThis.Array.from(indices.dataSync()), [0, 1, 2, 3, 4, 5], dtype);
  }
  // distinct values in a random order, as the JAX tests draw them, for the dtypes the fixtures leave out, both axes
  for (const dtype of ['bool', 'int8', 'int16', 'uint16', 'uint32', 'bfloat16'] as DType[]) {
    const values = randomValues(35, 21, 0, 1).map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]).map(([, i]) => (dtype === 'bool' ? i % 2 : i));
    const x = jnp.array(values, { dtype }).reshape([5, 7]);
    for (const axis of [0, -1]) checkAgainstReference(t, () => lax.sort(x, { dimension: axis }), { message: `sort ${dtype} axis ${axis}` });
    checkAgainstReference(t, () => lax.sortKeyVal(x, lax.broadcastedIota('int32', [5, 7], 1), { dimension: -1 }), { message: `sortKeyVal ${dtype}` });
    checkAgainstReference(t, () => lax.topK(x, 3), { message: `topK ${dtype}` });
  }
});

test('several operands and keys agree with the float64 reference interpreter; sortKeyVal carries values', (t) => {
  const k0 = jnp.array(randomValues(2 * 45, 11, 0, 3).map(Math.floor), { dtype: 'int32' }).reshape([2, 45]);
  const k1 = jnp.array(randomValues(2 * 45, 12, -2, 2).map((v, i) => (i % 13 === 0 ? NaN : Math.round(v))), { dtype: 'float32' }).reshape([2, 45]);
  const v = jnp.array(randomValues(90, 13), { dtype: 'float32' }).reshape([2, 45]);
  checkAgainstReference(t, () => lax.sort([k0, k1, v], { numKeys: 2 }));
  checkAgainstReference(t, () => lax.sort([k1, k0, v], { numKeys: 2, dimension: 0 }));
  checkAgainstReference(t, () => lax.sort([k1, v], { numKeys: 1 }));
  const [sk, sv] = lax.sortKeyVal(jnp.array([3, 1, 2, 1]), jnp.array([10, 20, 30, 40]));
  t.deepEqual(globalThis.Array.from(sk.dataSync()), [1, 1, 2, 3]);
  t.deepEqual(globalThis.Array.from(sv.dataSync()), [20, 40, 30, 10]);
});

test('vmap of sort, argsort, topK and searchsorted equals a loop over the batch', (t) => {
  const x = input('f2'); // [3, 45]
  const rows = [0, 1, 2].map((r) => lax.reshape(lax.sliceInDim(x, r, r + 1, 1, 0), [45]));
  const check = (batched: Array, perRow: Array[], label: string) => {
    const want = perRow.flatMap((a) => globalThis.Array.from(a.dataSync()));
    const got = globalThis.Array.from(batched.dataSync());
    t.true(got.length === want.length && got.every((g, i) => Object.is(g, want[i])), label);
  };
  check(jax.vmap((r: Array) => jnp.sort(r))(x) as Array, rows.map((r) => jnp.sort(r)), 'sort');
  check(jax.vmap((r: Array) => jnp.argsort(r, { descending: true }))(x) as Array, rows.map((r) => jnp.argsort(r, { descending: true })), 'argsort');
  // batched along axis 1 of the transposed input, result batched at 0
  check(jax.vmap((r: Array) => jnp.argsort(r), { inAxes: 1 })(lax.transpose(x, [1, 0])) as Array, rows.map((r) => jnp.argsort(r)), 'argsort, inAxes 1');
  const [v, i] = jax.vmap((r: Array) => lax.topK(r, 4))(x) as Array[];
  check(v!, rows.map((r) => lax.topK(r, 4)[0]), 'topK values');
  check(i!, rows.map((r) => lax.topK(r, 4)[1]), 'topK indices');
  const a = input('sorted');
  const q = input('queries'); // [5, 8]
  const qs = [0, 1, 2, 3, 4].map((r) => lax.reshape(lax.sliceInDim(q, r, r + 1, 1, 0), [8]));
  check(jax.vmap((row: Array) => jnp.searchsorted(a, row))(q) as Array, qs.map((row) => jnp.searchsorted(a, row)), 'searchsorted');
  // value-dependent sizes made static: each row's unique values and nonzero indices, padded
  const m = input('m2'); // [4, 6]
  const mRows = [0, 1, 2, 3].map((r) => lax.reshape(lax.sliceInDim(m, r, r + 1, 1, 0), [6]));
  check(jax.vmap((row: Array) => jnp.unique(row, { size: 5, fillValue: 9 }))(m) as Array, mRows.map((row) => jnp.unique(row, { size: 5, fillValue: 9 }) as Array), 'unique with size');
  check(jax.vmap((row: Array) => jnp.nonzero(row, { size: 4 })[0])(m) as Array, mRows.map((row) => jnp.nonzero(row, { size: 4 })[0]!), 'nonzero with size');
  check(jax.vmap((row: Array) => jnp.bincount(lax.add(row, 1), { length: 3 }))(m) as Array, mRows.map((row) => jnp.bincount(lax.add(row, 1), { length: 3 })), 'bincount with length');
  // a batched key with an unbatched payload
  const payload = lax.broadcastedIota("int32", [45], 0);
  const [, carried] = jax.vmap((r: Array) => lax.sortKeyVal(r, payload), { inAxes: 0 })(x) as Array[];
  check(carried!, rows.map((r) => jnp.argsort(r)), 'sortKeyVal with an unbatched value');
});

test('jvp and grad of sort and topK permute the tangents (JAX _sort_jvp)', (t) => {
  const xs = [0.5, -1, 3, 2, -1, 7, 0];
  const x = jnp.array(xs, { dtype: 'float32' });
  const w = jnp.array([1, 2, 3, 4, 5, 6, 7], { dtype: 'float32' });
  const order = stableOrder(xs.map(Math.fround));
  // d/dx sum(sort(x) * w): element order[k] receives w[k]
  const g = jax.grad((a: Array) => jnp.sum(jnp.multiply(jnp.sort(a), w)))(x) as Array;
  const want = new globalThis.Array<number>(7).fill(0);
  order.forEach((from, k) => (want[from] = k + 1));
  t.deepEqual(globalThis.Array.from(g.dataSync()), want);
  const [, tangent] = jax.jvp((a: Array) => jnp.sort(a), [x], [w]) as [Array, Array];
  t.deepEqual(globalThis.Array.from(tangent.dataSync()), order.map((from) => from + 1));
  const gTop = jax.grad((a: Array) => jnp.sum(lax.topK(a, 3)[0]))(x) as Array;
  t.deepEqual(globalThis.Array.from(gTop.dataSync()), [0, 0, 1, 1, 0, 1, 0]);
  const gJit = jax.jit(jax.grad((a: Array) => jnp.sum(jnp.multiply(jnp.sort(a), w))))(x) as Array;
  t.deepEqual(globalThis.Array.from(gJit.dataSync()), want);
});

test('under jit, every output of a several-operand sort and of topK is written before a later kernel reads it', (t) => {
  // the planner once counted one output per sort launch, so a later use of sortKeyVal's values read an unwritten buffer
  const x = jnp.array([[3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]]);
  const f = (a: Array) => {
    const [v, i] = lax.topK(jnp.sin(a), 3);
    const [s, p] = lax.sortKeyVal(jnp.cos(a), jnp.exp(a));
    return [jnp.add(jnp.multiply(i, 2), 1), jnp.add(v, 1), jnp.add(p, 1), s];
  };
  const eager = f(x);
  (jax.jit(f)(x) as Array[]).forEach((y, k) => t.deepEqual(globalThis.Array.from(y.dataSync()), globalThis.Array.from(eager[k]!.dataSync()), `output ${k}`));
});

test('bad input names the function, the argument and the values', (t) => {
  const x = jnp.array([3, 1, 2]);
  assertThrowsMentioning(t, () => lax.sort(x, { numKeys: 0 }), 'lax.sort', 'numKeys', '0');
  assertThrowsMentioning(t, () => lax.sort([x, x], { numKeys: 3 }), 'lax.sort', 'numKeys', '3');
  assertThrowsMentioning(t, () => lax.sort([x, jnp.array([1, 2])]), 'lax.sort', '[3]', '[2]');
  assertThrowsMentioning(t, () => lax.sort(x, { dimension: 1 }), 'lax.sort', 'dimension', '1');
  assertThrowsMentioning(t, () => lax.sort(jnp.array(1)), 'lax.sort', 'rank');
  assertThrowsMentioning(t, () => lax.topK(x, 4), 'lax.topK', '4', '3');
  assertThrowsMentioning(t, () => lax.topK(x, -1), 'lax.topK', 'nonnegative', '-1');
  assertThrowsMentioning(t, () => jnp.searchsorted(x, x, { side: 'middle' as 'left' }), 'jnp.searchsorted', "'middle'", 'side');
  assertThrowsMentioning(t, () => jnp.searchsorted(jnp.zeros([2, 2]), x), 'jnp.searchsorted', '1-dimensional', '[2,2]');
  assertThrowsMentioning(t, () => jnp.lexsort([x, jnp.array([1, 2])]), 'jnp.lexsort', 'same shape');
  assertThrowsMentioning(t, () => jnp.sort(x, { axis: 2 }), 'jnp.sort', 'axis', '2');
  assertThrowsMentioning(t, () => jnp.sort(x, { bogus: 1 } as never), 'jnp.sort', 'bogus');
  assertThrowsMentioning(t, () => jnp.bincount(jnp.array([1.5])), 'jnp.bincount', 'integer type', 'float32');
  assertThrowsMentioning(t, () => jnp.bincount(jnp.array([1, 2], { dtype: 'int32' }), { length: -1 }), 'jnp.bincount', 'length', '-1');
  assertThrowsMentioning(t, () => jnp.nonzero(jnp.array(1)), 'jnp.nonzero', '0d');
  assertThrowsMentioning(t, () => jnp.nonzero(jnp.zeros([2, 2]), { size: 3, fillValue: [1, 2, 3] }), 'jnp.nonzero', 'fillValue', 'length 2');
  assertThrowsMentioning(t, () => jnp.unique(x, { size: 1.5 }), 'jnp.unique', 'size', '1.5');
  // JAX's bincount: negative values count at 0, values at or past length are dropped
  t.deepEqual([...jnp.bincount(jnp.array([-2, 0, 3, 7, -1], { dtype: 'int32' }), { length: 5 }).dataSync()], [3, 0, 0, 1, 0]);
});
