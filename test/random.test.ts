// jax.random against JAX 0.10.2 (test/fixtures/gen_random.py): the
// threefry2x32 known-answer vectors, keys, split and foldIn, and every
// sampler for several keys, shapes and dtypes, value for value; then argument
// errors, large-sample statistics, jit and vmap, and memory.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { threefry2x32, threefry2x32Hash } from '../lib/random/threefry.js';
import { erfInv } from '../lib/random/xla-math.js';
import { assertArray, assertThrowsMentioning, randomValues } from './helpers/oracle.js';
import { decodeNumber as decode, loadFixture } from './helpers/fixtures.js';
import { withX64 } from './helpers/x64.js';
import { emulatorSubset } from './helpers/emulator.js';

const { random, numpy: jnp } = jax;

type Encoded = number | boolean | 'nan' | 'inf' | '-inf';
interface Out { shape: number[]; dtype: DType; values: Encoded[] }
interface Tagged { array: number[] | number[][] | number; dtype: DType }
type Arg = number | Tagged | null;
interface Case {
  fn: string;
  key: number[];
  shape?: number[] | null;
  options?: Record<string, unknown>;
  p?: Arg; minval?: Arg; maxval?: Arg; x?: Arg; logits?: Arg; lower?: Arg; upper?: Arg;
  out: Out;
}

const fixtures = loadFixture<{
  kat: { key: number[]; count: number[]; out: number[] }[];
  hash: { key: number[]; x1: number[]; x2: number[]; y1: number[]; y2: number[] };
  threefry2x32Odd: { key: number[]; count: number[]; out: number[] };
  seeds: { seed: number; key: number[]; PRNGKey: number[] }[];
  seedArrays: { seed: number; dtype: DType; key: number[] }[];
  split: { key: number[]; num: number | number[]; out: Out }[];
  foldIn: { key: number[]; data: number; out: Out }[];
  foldInArrays: { key: number[]; data: number; dtype: DType; out: Out }[];
  chain: { seed: number; k1: number[]; k2: number[]; foldIn: number[]; split3: Out };
  cases: Case[];
  erfInv: { x: Encoded[]; out: Out };
  x64: { cases: Case[]; erfInv: { x: Encoded[]; out: Out } };
}>('random.json');

const u32 = (values: number[]): Array => jnp.array(new Uint32Array(values));
const arg = (a: Arg | undefined): unknown => (a !== null && typeof a === 'object' ? jnp.array(a.array as never, { dtype: a.dtype }) : a);

/** Asserts shape, dtype and every value; tol 0 means bit for bit (NaN equal to NaN). */
function assertOut(t: ExecutionContext, actual: Array, expected: Out, message: string, tol = 0): boolean {
  t.deepEqual([...actual.shape], expected.shape, `${message}: shape`);
  t.is(actual.dtype, expected.dtype, `${message}: dtype`);
  const got = actual.dataSync();
  const want = expected.values.map(decode);
  if (got.length !== want.length) {
    t.fail(`${message}: ${got.length} values, expected ${want.length}`);
    return false;
  }
  for (let i = 0; i < want.length; i++) {
    const a = got[i]!;
    const b = want[i]!;
    const ok = Object.is(a, b) || a === b || (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= tol * (1 + Math.abs(b));
    if (!ok) {
      t.fail(`${message}: value ${i} is ${a}, JAX gives ${b}${tol ? ` (tol ${tol})` : ' (bit for bit)'}`);
      return false;
    }
  }
  t.pass();
  return true;
}

function runCase(c: Case): Array {
  const key = u32(c.key);
  const options: Record<string, unknown> = { ...(c.options ?? {}) };
  for (const name of ['minval', 'maxval']) if (name in options) options[name] = arg(options[name] as Arg);
  const shape = c.shape === null ? undefined : c.shape;
  switch (c.fn) {
    case 'bits': return random.bits(key, shape!, options);
    case 'uniform': return random.uniform(key, shape!, options);
    case 'normal': return random.normal(key, shape!, options);
    case 'gumbel': return random.gumbel(key, shape!, options);
    case 'bernoulli': return c.p === null ? random.bernoulli(key) : random.bernoulli(key, arg(c.p) as never, shape, options);
    case 'randint': return random.randint(key, shape!, arg(c.minval) as never, arg(c.maxval) as never, options);
    case 'permutation': return random.permutation(key, arg(c.x) as never, options);
    case 'categorical': return random.categorical(key, arg(c.logits) as never, options);
    case 'truncatedNormal': return random.truncatedNormal(key, arg(c.lower) as never, arg(c.upper) as never, shape, options);
    default: throw new Error(`unknown fixture function ${c.fn}`);
  }
}

/**
 * JAX's float16 log on the CPU is not XLA's float32 polynomial rounded (it is
 * off by up to 3 float16 ulps from the correctly rounded log), and jaxon does
 * not reproduce it: float16 gumbel samples (and through them float16
 * categorical draws near a tie) can differ by a few float16 ulps.
 */
const toleranceFor = (c: Case): number => (c.fn === 'gumbel' && c.out.dtype === 'float16' ? 4e-3 : 0);

// ---- threefry2x32 ----

test('threefry2x32 gives the Random123 known answers (20 rounds)', (t) => {
  t.is(fixtures.kat.length, 3);
  for (const { key, count, out } of fixtures.kat) {
    t.deepEqual([...threefry2x32(u32(key), u32(count)).dataSync()], out, `key ${key} count ${count}`);
  }
});

test('threefry2x32 hashes many blocks at once and pads an odd-length count as JAX does', (t) => {
  const { key, x1, x2, y1, y2 } = fixtures.hash;
  const [a, b] = threefry2x32Hash(u32([key[0]!]).reshape([]), u32([key[1]!]).reshape([]), u32(x1), u32(x2));
  t.deepEqual([...a.dataSync()], y1);
  t.deepEqual([...b.dataSync()], y2);
  const odd = fixtures.threefry2x32Odd;
  const out = threefry2x32(u32(odd.key), u32(odd.count));
  t.deepEqual(out.shape, [7]);
  t.deepEqual([...out.dataSync()], odd.out);
});

// ---- keys ----

test('key and PRNGKey make the raw key [0, seed mod 2^32] (x64 off)', (t) => {
  for (const { seed, key, PRNGKey } of fixtures.seeds) {
    const k = random.key(seed);
    t.is(k.dtype, 'uint32');
    t.deepEqual(k.shape, [2]);
    t.deepEqual([...k.dataSync()], key, `key(${seed})`);
    t.deepEqual([...random.PRNGKey(seed).dataSync()], PRNGKey, `PRNGKey(${seed})`);
  }
  for (const { seed, dtype, key } of fixtures.seedArrays) {
    t.deepEqual([...random.PRNGKey(jnp.array(seed, { dtype })).dataSync()], key, `PRNGKey(${dtype} ${seed})`);
    t.deepEqual([...random.key(jnp.array(seed, { dtype })).dataSync()], key);
  }
  t.deepEqual([...random.keyData(random.key(7)).dataSync()], [0, 7]);
  t.deepEqual([...random.wrapKeyData(u32([3, 4])).dataSync()], [3, 4]);
});

test('split matches JAX for counts and shapes of keys', (t) => {
  for (const { key, num, out } of fixtures.split) assertOut(t, random.split(u32(key), num), out, `split([${key}], ${JSON.stringify(num)})`);
  t.deepEqual(random.split(random.key(0)).shape, [2, 2], 'num defaults to 2');
  t.deepEqual(random.split(random.key(0), 0).shape, [0, 2]);
});

test('foldIn matches JAX for numbers and integer arrays', (t) => {
  for (const { key, data, out } of fixtures.foldIn) assertOut(t, random.foldIn(u32(key), data), out, `foldIn([${key}], ${data})`);
  for (const { key, data, dtype, out } of fixtures.foldInArrays) {
    assertOut(t, random.foldIn(u32(key), jnp.array(data, { dtype })), out, `foldIn([${key}], ${dtype} ${data})`);
  }
});

test('a chain of key(), split, foldIn and split matches JAX', (t) => {
  const c = fixtures.chain;
  const [k1, k2] = [0, 1].map((i) => random.split(random.key(c.seed)).index(i));
  t.deepEqual([...k1!.dataSync()], c.k1);
  t.deepEqual([...k2!.dataSync()], c.k2);
  t.deepEqual([...random.foldIn(k2!, 99).dataSync()], c.foldIn);
  assertOut(t, random.split(k1!, 3), c.split3, 'split(k1, 3)');
});

// ---- samplers, value for value ----

const byFunction = new Map<string, Case[]>();
for (const c of fixtures.cases) byFunction.set(c.fn, [...(byFunction.get(c.fn) ?? []), c]);

/**
 * The cases a platform runs: all on the CPU; on the emulated GPU (helpers/emulator.ts) the first case of each shape and
 * options (the kernels: other keys are other data through the same ones) and every fourth of the rest.
 */
function casesFor(cases: Case[]): Case[] {
  if (!emulatorSubset) return cases;
  const seen = new Set<string>();
  return cases.filter((c, i) => {
    const form = (a: Arg | undefined) => (a === undefined || a === null ? a : typeof a === 'number' ? 'number' : [JSON.stringify(a.array).replace(/[^[\],]/g, ''), a.dtype]);
    const kernels = JSON.stringify([c.shape, c.options, ...[c.p, c.minval, c.maxval, c.x, c.logits, c.lower, c.upper].map(form)]);
    const fresh = !seen.has(kernels);
    seen.add(kernels);
    return fresh || i % 4 === 0;
  });
}

for (const [fn, cases] of byFunction) {
  test(`${fn} matches JAX value for value (${cases.length} cases: keys, shapes, dtypes, options)`, (t) => {
    for (const c of casesFor(cases)) {
      const what = `${fn}(key [${c.key}], ${JSON.stringify({ shape: c.shape, p: c.p, minval: c.minval, maxval: c.maxval, x: c.x, lower: c.lower, upper: c.upper, ...c.options })})`;
      assertOut(t, runCase(c), c.out, what, toleranceFor(c));
    }
  });
}

test('the fixtures cover every sampler and the 16-bit floats', (t) => {
  t.deepEqual([...byFunction.keys()].sort(), ['bernoulli', 'bits', 'categorical', 'gumbel', 'normal', 'permutation', 'randint', 'truncatedNormal', 'uniform']);
  const dtypes = new Set(fixtures.cases.map((c) => `${c.fn}/${c.out.dtype}`));
  for (const d of ['uniform/float16', 'uniform/bfloat16', 'normal/float16', 'normal/bfloat16', 'truncatedNormal/bfloat16', 'randint/uint8', 'randint/int16', 'randint/uint32', 'bits/uint8']) t.true(dtypes.has(d), d);
});

// serial: it turns the process-wide x64 setting on while it runs (the other tests run with the default, off)
test.serial('float64 samples match JAX with jax_enable_x64', (t) => withX64(true, () => {
  for (const c of fixtures.x64.cases) assertOut(t, runCase(c), c.out, `${c.fn} ${JSON.stringify(c.options)} [${c.shape}]`, 1e-15);
  const { x, out } = fixtures.x64.erfInv;
  assertOut(t, erfInv(jnp.array(x.map(decode), { dtype: 'float64' })), out, 'erfInv float64', 1e-15);
}));

test('erfInv (float32) is XLA ErfInv32 bit for bit, including ±1 and tiny inputs', (t) => {
  const { x, out } = fixtures.erfInv;
  assertOut(t, erfInv(jnp.array(x.map(decode), { dtype: 'float32' })), out, 'erfInv float32');
});

// ---- the stable sort behind permutation ----

function jsStableArgsort(row: number[]): number[] {
  return row.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, i]) => i);
}

test('lax.sortKeyVal on uint32 keys (what permutation sorts by) gives the stable order, duplicates included', (t) => {
  for (const [rows, n, distinct] of [[3, 1, 5], [3, 7, 3], [2, 50, 10], [1, 300, 4294967296], [2, 1000, 7]] as const) {
    const values = randomValues(rows * n, rows * 1000 + n, 0, distinct).map(Math.floor);
    const keys = jnp.array(new Uint32Array(values)).reshape([rows, n]);
    const expected = globalThis.Array.from({ length: rows }, (_, r) => jsStableArgsort(values.slice(r * n, (r + 1) * n)));
    const [, got] = jax.lax.sortKeyVal(keys, jax.lax.broadcastedIota('int32', [rows, n], 1));
    t.deepEqual(got.tolistSync(), expected, `[${rows}, ${n}] keys below ${distinct}`);
  }
  // the largest keys and zeros, where a signed comparison would show
  const edge = [0xffffffff, 0, 0xffffffff, 1, 0x80000000, 0, 0x7fffffff];
  t.deepEqual([...jax.lax.sortKeyVal(u32(edge), jax.lax.broadcastedIota('int32', [7], 0))[1].dataSync()], jsStableArgsort(edge));
});

// ---- argument errors ----

test('keys are checked: dtype, shape, batches, disposal', (t) => {
  assertThrowsMentioning(t, () => random.normal([0, 1] as never), 'random.normal', 'key must be a PRNG key');
  assertThrowsMentioning(t, () => random.uniform(jnp.array([0, 1])), 'random.uniform', 'uint32', 'int32');
  assertThrowsMentioning(t, () => random.split(u32([0, 1, 2])), 'random.split', 'shape [3]');
  assertThrowsMentioning(t, () => random.split(random.split(random.key(0), 3)), 'random.split', 'single key', '[3,2]', 'vmap');
  const k = random.key(0);
  k.dispose();
  const error = t.throws(() => random.normal(k));
  t.true(error?.message.includes('random.normal') && error.message.includes('disposed'), error?.message);
});

test('seeds, data and counts are checked', (t) => {
  assertThrowsMentioning(t, () => random.key(1.5), 'random.key', 'integer', '1.5');
  assertThrowsMentioning(t, () => random.PRNGKey(jnp.array([1, 2], { dtype: 'int32' })), 'random.PRNGKey', 'scalar seed', 'shape [2]');
  assertThrowsMentioning(t, () => random.key(jnp.array(1.5)), 'random.key', 'integer', 'float32');
  assertThrowsMentioning(t, () => random.key('3' as never), 'random.key', 'seed');
  assertThrowsMentioning(t, () => random.foldIn(random.key(0), -1), 'random.foldIn', '-1', 'out of bounds for uint32');
  assertThrowsMentioning(t, () => random.foldIn(random.key(0), 2 ** 32), 'random.foldIn', 'out of bounds');
  assertThrowsMentioning(t, () => random.foldIn(random.key(0), jnp.array([1, 2], { dtype: 'int32' })), 'random.foldIn', 'scalar', '[2]');
  assertThrowsMentioning(t, () => random.split(random.key(0), -1), 'random.split', 'num');
  t.deepEqual([...random.foldIn(random.key(0), 2.5).dataSync()], [...random.foldIn(random.key(0), 2).dataSync()], 'JAX truncates a float to uint32');
});

test('shapes, dtypes and options are checked with the values named', (t) => {
  const k = random.key(0);
  assertThrowsMentioning(t, () => random.normal(k, [2, -1]), 'random.normal', 'shape', '[2,-1]');
  assertThrowsMentioning(t, () => random.normal(k, [2], { dtype: 'int32' }), 'random.normal', 'float dtype', 'int32');
  assertThrowsMentioning(t, () => random.uniform(k, [2], { dtype: 'complex64' as never }), 'random.uniform', 'complex64');
  assertThrowsMentioning(t, () => random.uniform(k, [2], { seed: 1 } as never), 'random.uniform', "unknown option 'seed'");
  assertThrowsMentioning(t, () => random.uniform(k, [3, 4], { minval: jnp.zeros([5]) }), 'random.uniform', 'minval shape [5]', '[3,4]');
  assertThrowsMentioning(t, () => random.bits(k, [2], { dtype: 'int32' }), 'random.bits', 'unsigned', 'int32');
  assertThrowsMentioning(t, () => random.randint(k, [2], 0, 10, { dtype: 'float32' }), 'random.randint', 'integer dtypes', 'float32');
  assertThrowsMentioning(t, () => random.randint(k, [2], 0, 2 ** 31), 'random.randint', 'maxval', '2147483648');
  assertThrowsMentioning(t, () => random.randint(k, [2], jnp.array([1, 2, 3], { dtype: 'int32' }), 5), 'random.randint', 'minval shape [3]');
  assertThrowsMentioning(t, () => random.bernoulli(k, jnp.array([1, 0], { dtype: 'int32' })), 'random.bernoulli', 'floating dtype', 'int32');
  assertThrowsMentioning(t, () => random.bernoulli(k, 0.5, [2], { mode: 'medium' as never }), 'random.bernoulli', "'medium'");
  assertThrowsMentioning(t, () => random.categorical(k, jnp.array([1, 2, 3], { dtype: 'int32' })), 'random.categorical', 'float dtype', 'int32');
  assertThrowsMentioning(t, () => random.categorical(k, jnp.array(1.5)), 'random.categorical', 'scalar');
  assertThrowsMentioning(t, () => random.categorical(k, jnp.zeros([3, 4]), { shape: [5] }), 'random.categorical', '[5]', '[3]');
  assertThrowsMentioning(t, () => random.categorical(k, jnp.zeros([3, 4]), { axis: 2 }), 'random.categorical', 'axis 2');
  assertThrowsMentioning(t, () => random.categorical(k, jnp.zeros([4]), { replace: false } as never), 'random.categorical', "unknown option 'replace'");
  assertThrowsMentioning(t, () => random.permutation(k, 2.5), 'random.permutation', 'integer or at least 1-dimensional');
  assertThrowsMentioning(t, () => random.permutation(k, jnp.array(2.5)), 'random.permutation', 'float32 scalar');
  assertThrowsMentioning(t, () => random.permutation(k, jnp.zeros([2, 3]), { axis: 2 }), 'random.permutation', 'axis 2');
  assertThrowsMentioning(t, () => random.permutation(k, 5, { independent: 1 } as never), 'random.permutation', 'independent', 'boolean');
  assertThrowsMentioning(t, () => random.truncatedNormal(k, jnp.zeros([2]), jnp.ones([3])), 'random.truncatedNormal', 'cannot be broadcast');
  assertThrowsMentioning(t, () => random.truncatedNormal(k, -1, 1, [2], { dtype: 'int8' }), 'random.truncatedNormal', 'float dtype', 'int8');
});

test('defaults: scalar float32 samples, int32 randint, bool bernoulli, shapes from parameters', (t) => {
  const k = random.key(3);
  for (const x of [random.normal(k), random.uniform(k), random.gumbel(k)]) {
    t.deepEqual(x.shape, []);
    t.is(x.dtype, 'float32');
  }
  t.is(random.randint(k, [2], 0, 5).dtype, 'int32');
  t.is(random.bits(k).dtype, 'uint32');
  t.deepEqual(random.bernoulli(k, jnp.full([2, 3], 0.5)).shape, [2, 3]);
  t.is(random.bernoulli(k).dtype, 'bool');
  t.deepEqual(random.truncatedNormal(k, jnp.zeros([4, 1]), jnp.ones([3])).shape, [4, 3]);
  t.deepEqual(random.categorical(k, jnp.zeros([2, 5]), { axis: 0 }).shape, [5]);
  t.deepEqual(random.normal(k, 4).shape, [4], 'a bare number is a shape of one axis, as JAX accepts');
  const empty = random.permutation(k, 0);
  t.deepEqual([empty.shape, empty.dtype], [[0], 'int32']);
  t.deepEqual([...random.permutation(k, jnp.array(4, { dtype: 'int32' })).dataSync()].sort(), [0, 1, 2, 3], 'an integer scalar array is arange(n)');
});

// ---- statistics ----

function moments(x: Array): { mean: number; variance: number; min: number; max: number } {
  const v = x.dataSync();
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const a of v) {
    sum += a;
    min = Math.min(min, a);
    max = Math.max(max, a);
  }
  const mean = sum / v.length;
  let sq = 0;
  for (const a of v) sq += (a - mean) ** 2;
  return { mean, variance: sq / v.length, min, max };
}

test('large samples have the right moments and ranges', (t) => {
  const [k1, k2, k3, k4, k5, k6] = globalThis.Array.from({ length: 6 }, (_, i) => random.foldIn(random.key(2024), i)) as Array[];
  const n = 100_000;
  // standard errors: mean 1/sqrt(n) ≈ 0.0032 for unit variance; bounds are ~5 of them
  const normal = moments(random.normal(k1!, [n]));
  t.true(Math.abs(normal.mean) < 0.016, `normal mean ${normal.mean}`);
  t.true(Math.abs(normal.variance - 1) < 0.025, `normal variance ${normal.variance}`);
  const uniform = moments(random.uniform(k2!, [n]));
  t.true(Math.abs(uniform.mean - 0.5) < 0.005, `uniform mean ${uniform.mean}`);
  t.true(Math.abs(uniform.variance - 1 / 12) < 0.002, `uniform variance ${uniform.variance}`);
  t.true(uniform.min >= 0 && uniform.max < 1);
  const shifted = moments(random.uniform(k2!, [n], { minval: -3, maxval: 5 }));
  t.true(shifted.min >= -3 && shifted.max < 5 && Math.abs(shifted.mean - 1) < 0.04, `uniform(-3, 5) ${JSON.stringify(shifted)}`);
  const coin = moments(random.bernoulli(k3!, 0.3, [n]));
  t.true(Math.abs(coin.mean - 0.3) < 0.008, `bernoulli(0.3) mean ${coin.mean}`);
  const dice = moments(random.randint(k4!, [n], 1, 7));
  t.true(dice.min === 1 && dice.max === 6 && Math.abs(dice.mean - 3.5) < 0.03, `randint(1, 7) ${JSON.stringify(dice)}`);
  const truncated = moments(random.truncatedNormal(k5!, -1, 2, [n]));
  t.true(truncated.min > -1 && truncated.max < 2, `truncatedNormal range ${truncated.min} ${truncated.max}`);
  // the mean of N(0,1) truncated to (-1, 2): (φ(-1) - φ(2)) / (Φ(2) - Φ(-1)) ≈ 0.2292
  t.true(Math.abs(truncated.mean - 0.2292) < 0.01, `truncatedNormal mean ${truncated.mean}`);
  const gumbel = moments(random.gumbel(k6!, [n]));
  t.true(Math.abs(gumbel.mean - 0.5772) < 0.02 && Math.abs(gumbel.variance - Math.PI ** 2 / 6) < 0.05, `gumbel ${JSON.stringify(gumbel)}`);
  const half = moments(random.normal(k1!, [n], { dtype: 'bfloat16' }));
  t.true(Math.abs(half.mean) < 0.016 && Math.abs(half.variance - 1) < 0.03, `bfloat16 normal ${JSON.stringify(half)}`);
});

test('categorical draws follow softmax(logits); permutations are permutations', (t) => {
  const probs = [0.1, 0.2, 0.3, 0.4];
  const draws = random.categorical(random.key(5), jnp.log(jnp.array(probs)), { shape: [40_000] }).dataSync();
  const counts = [0, 0, 0, 0];
  for (const d of draws) counts[d]!++;
  counts.forEach((c, i) => t.true(Math.abs(c / draws.length - probs[i]!) < 0.01, `category ${i}: ${c / draws.length}`));
  for (const n of [10, 1000, 2500]) {
    const p = [...random.permutation(random.key(n), n).dataSync()];
    t.deepEqual([...p].sort((a, b) => a - b), globalThis.Array.from({ length: n }, (_, i) => i), `permutation(${n})`);
    t.notDeepEqual(p, globalThis.Array.from({ length: n }, (_, i) => i));
  }
  const rows = random.permutation(random.key(1), jnp.arange(12).reshape([3, 4]), { axis: 1 }).tolistSync() as number[][];
  t.deepEqual(rows.map((r) => r.map((v) => v % 4)), [rows[0]!.map((v) => v % 4), rows[0]!.map((v) => v % 4), rows[0]!.map((v) => v % 4)], 'columns move together');
});

// ---- transformations ----

test('jit(normal) and jitted key plumbing equal the eager results bit for bit', (t) => {
  const key = random.key(11);
  for (const dtype of ['float32', 'bfloat16', 'float16'] as const) {
    const jitted = jax.jit((k: Array) => random.normal(k, [64], { dtype }));
    t.deepEqual([...jitted(key).dataSync()], [...random.normal(key, [64], { dtype }).dataSync()], dtype);
  }
  const pipeline = (k: Array, x: Array) => {
    const [a, b] = [0, 1].map((i) => random.split(k).index(i)) as [Array, Array];
    const noise = random.uniform(random.foldIn(a, 3), [5], { minval: -1, maxval: 1 });
    return [jnp.add(x, noise), random.randint(b, [5], 0, 100), random.permutation(b, 7), random.bernoulli(a, 0.5, [5])];
  };
  const x = jnp.arange(5, null, null, { dtype: 'float32' });
  const eager = pipeline(key, x);
  const jitted = jax.jit(pipeline)(key, x) as Array[];
  eager.forEach((e, i) => t.deepEqual([...jitted[i]!.dataSync()], [...e.dataSync()], `output ${i}`));
});

test('vmap over split keys equals a loop over the keys', (t) => {
  const keys = random.split(random.key(8), 5);
  const sample = (k: Array) => [random.normal(k, [3]), random.randint(k, [2], 0, 10), random.split(k, 2), random.permutation(k, 6), random.permutation(k, 2000)];
  const batched = jax.vmap(sample)(keys) as Array[];
  for (let i = 0; i < 5; i++) {
    const single = sample(keys.index(i));
    single.forEach((s, j) => t.deepEqual([...batched[j]!.index(i).dataSync()], [...s.dataSync()], `key ${i}, output ${j}`));
  }
  const seeds = jnp.array([0, 1, 42, -1], { dtype: 'int32' });
  const fromSeeds = jax.vmap((s: Array) => random.key(s))(seeds);
  t.deepEqual(fromSeeds.tolistSync(), [[0, 0], [0, 1], [0, 42], [0, 4294967295]]);
  const folded = jax.vmap((d: Array) => random.foldIn(random.key(3), d))(jnp.array([0, 7], { dtype: 'uint32' }));
  t.deepEqual(folded.tolistSync(), [[...random.foldIn(random.key(3), 0).dataSync()], [...random.foldIn(random.key(3), 7).dataSync()]]);
});

test('grad flows through the samplers’ parameters, not their keys', (t) => {
  const key = random.key(4);
  const noise = random.normal(key, [3]);
  const g = jax.grad((scale: Array) => jnp.sum(jnp.multiply(random.normal(key, [3]), scale)))(jnp.array(2, { dtype: 'float32' }));
  assertArray(t, g, { shape: [], dtype: 'float32', values: [[...noise.dataSync()].reduce((a, b) => a + b, 0)] }, { tol: 1e-6 });
});

test('samplers free their intermediates', (t) => {
  const key = random.key(9);
  const [zeros34, zeros23, five] = [jnp.zeros([3, 4]), jnp.zeros([2, 3]), jnp.array(5, { dtype: 'int32' })];
  const warm = () => [
    random.split(key), random.foldIn(key, 1), random.bits(key, [4]), random.uniform(key, [4]), random.normal(key, [4], { dtype: 'bfloat16' }),
    random.bernoulli(key, 0.5, [4]), random.randint(key, [4], 0, 9, { dtype: 'uint8' }), random.permutation(key, 3000),
    random.permutation(key, zeros34, { axis: 1, independent: true }), random.categorical(key, zeros23),
    random.truncatedNormal(key, -1, 1, [4]), random.gumbel(key, [4]), random.PRNGKey(five), random.permutation(key, 10),
  ];
  warm().forEach((a) => a.dispose());
  const before = jax.liveArrayCount();
  const outs = warm();
  t.is(jax.liveArrayCount(), before + outs.length, 'only the results stay alive');
  outs.forEach((a) => a.dispose());
  t.is(jax.liveArrayCount(), before);
});
