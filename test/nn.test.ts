// jax.nn against JAX 0.10.2 (fixtures from test/fixtures/gen_nn.py):
// activations in float32/float16/bfloat16 and on ints, gelu in both forms,
// softmax/logSoftmax/logsumexp on inputs near 1e4 (no overflow), oneHot,
// standardize, gradients via jax.grad (relu'(0) = 0), the initializers
// (bit-for-bit samples, fans, statistics), and bad input.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { assertArray, assertThrowsMentioning } from './helpers/oracle.js';
import { decodeNumber as decode, loadFixture } from './helpers/fixtures.js';
import { sweep } from './helpers/emulator.js';

const jnp = jax.numpy;
const nn = jax.nn;

type Encoded = number | 'nan' | 'inf' | '-inf';
interface Spec {
  shape: number[];
  dtype: DType;
  values: Encoded[];
}
interface Case {
  kind: 'value' | 'grad';
  fn: string;
  x: string;
  options: Record<string, unknown>;
  args?: unknown[];
  weights?: Encoded[];
  expected: Spec;
  tol?: number;
}
interface InitCase {
  name: string;
  key: number[];
  shape: number[];
  dtype: DType;
  expected: Spec;
}
interface Fixture {
  inputs: Record<string, Spec>;
  masks: Record<string, { shape: number[]; values: boolean[] }>;
  cases: Case[];
  initializers: InitCase[];
}

const fixture = loadFixture<Fixture>('nn.json');

function makeArray(s: Spec): Array {
  return jnp.reshape(jnp.array(s.values.map(decode), { dtype: s.dtype }), s.shape);
}

/** Options with mask and input names replaced by arrays. */
function resolve(options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    const mask = typeof v === 'string' ? fixture.masks[v] : undefined;
    out[k] = mask ? jnp.reshape(jnp.array(mask.values), mask.shape) : v;
  }
  return out;
}

type Fn = (x: Array, ...rest: unknown[]) => Array;
const FUNCTIONS: Record<string, Fn> = {
  relu: nn.relu, relu6: nn.relu6, sigmoid: nn.sigmoid, silu: nn.silu, swish: nn.swish, softplus: nn.softplus,
  logSigmoid: nn.logSigmoid, selu: nn.selu, gelu: nn.gelu as Fn, elu: nn.elu as Fn, leakyRelu: nn.leakyRelu as Fn,
  softmax: nn.softmax as Fn, logSoftmax: nn.logSoftmax as Fn, logsumexp: nn.logsumexp as Fn, standardize: nn.standardize as Fn,
  oneHot: ((x: Array, numClasses: number, options: object) => nn.oneHot(x, numClasses, options)) as Fn,
};

function call(c: Case, x: Array): Array {
  const f = FUNCTIONS[c.fn]!;
  const options = resolve(c.options);
  const hasOptions = Object.keys(options).length > 0;
  const positional = c.args ?? [];
  return hasOptions || positional.length ? f(x, ...positional, options) : f(x);
}

/** f32 results within a few ulps; 16-bit floats within their precision. */
function tolerance(c: Case): number {
  if (c.tol !== undefined) return c.tol;
  const d = c.expected.dtype;
  return d === 'bfloat16' ? 1e-2 : d === 'float16' ? 2e-3 : 3e-6;
}

function describe(c: Case): string {
  const opts = JSON.stringify(c.options);
  return `${c.kind} ${c.fn}(${c.x}${c.args?.length ? `, ${c.args.join(', ')}` : ''}${opts === '{}' ? '' : `, ${opts}`})`;
}

const seen = new Map<string, number>();
// the emulated GPU (helpers/emulator.ts) runs every other fixture case
for (const c of sweep(fixture.cases, 2)) {
  const base = describe(c);
  const n = seen.get(base) ?? 0;
  seen.set(base, n + 1);
  test(n ? `${base} #${n + 1}` : base, (t) => {
    const x = makeArray(fixture.inputs[c.x]!);
    let out: Array;
    if (c.kind === 'value') {
      out = call(c, x);
    } else {
      const w = jnp.reshape(jnp.array(c.weights!.map(decode), { dtype: x.dtype }), [...call(c, x).shape]);
      out = jax.grad((v: Array) => jnp.sum(jnp.multiply(call(c, v), w)))(x) as Array;
    }
    assertArray(t, out, { shape: c.expected.shape, dtype: c.expected.dtype, values: c.expected.values.map(decode) }, { tol: tolerance(c) });
  });
}

test('softmax, logSoftmax and logsumexp stay finite on inputs of magnitude 1e4, and their gradients too', (t) => {
  const x = jnp.array([[1e4, -1e4, 0, 9999], [3e4, 3e4, -3e4, 3e4]], { dtype: 'float32' });
  for (const [name, f] of [['softmax', nn.softmax], ['logSoftmax', nn.logSoftmax], ['logsumexp', (v: Array) => nn.logsumexp(v, { axis: -1 })]] as const) {
    const value = (f as Fn)(x);
    t.true(jnp.all(jnp.isfinite(value)).item() as boolean, `${name} is finite`);
    const g = jax.grad((v: Array) => jnp.sum(jnp.multiply((f as Fn)(v), jnp.arange(value.size).reshape([...value.shape]))))(x) as Array;
    t.true(jnp.all(jnp.isfinite(g)).item() as boolean, `${name}'s gradient is finite`);
  }
  const s = nn.softmax(x);
  assertArray(t, jnp.sum(s, { axis: -1 }), { shape: [2], dtype: 'float32', values: [1, 1] });
});

test("relu'(0) = 0 under grad, jvp and jit, as JAX's custom jvp; relu keeps NaN and integer dtypes", (t) => {
  const g = jax.grad((x: Array) => jnp.sum(nn.relu(x)));
  assertArray(t, g(jnp.array([-1, -0, 0, 1e-30, 2], { dtype: 'float32' })) as Array, { shape: [5], dtype: 'float32', values: [0, 0, 0, 1, 1] });
  assertArray(t, jax.jit(g)(jnp.array([0, 3], { dtype: 'float32' })) as Array, { shape: [2], dtype: 'float32', values: [0, 1] });
  const [, tangent] = jax.jvp(nn.relu, [jnp.array([0, 1], { dtype: 'float32' })], [jnp.array([5, 5], { dtype: 'float32' })]) as [Array, Array];
  assertArray(t, tangent, { shape: [2], dtype: 'float32', values: [0, 5] });
  assertArray(t, nn.relu(jnp.array([NaN, -1, 2])), { shape: [3], dtype: 'float32', values: [NaN, 0, 2] });
  assertArray(t, nn.relu(jnp.array([-3, 4], { dtype: 'int32' })), { shape: [2], dtype: 'int32', values: [0, 4] });
});

test('activations work under jit and vmap with the eager values', (t) => {
  const x = jnp.array([[-2, -0.5, 0, 0.5, 3]], { dtype: 'float32' });
  const f = (v: Array) => jnp.add(nn.gelu(v), jnp.add(nn.softplus(v), jnp.add(nn.relu(v), nn.elu(v))));
  const eager = f(x);
  assertArray(t, jax.jit(f)(x) as Array, eager, { tol: 1e-6 });
  assertArray(t, jax.vmap(f)(x) as Array, eager, { tol: 1e-6 });
  const g = jax.grad((v: Array) => jnp.sum(f(v)));
  assertArray(t, jax.jit(g)(x) as Array, g(x) as Array, { tol: 1e-6 });
});

test('softmax and logSoftmax (which stop the gradient of their max) work under jit and vmap', (t) => {
  const x = jnp.array([[-2, -0.5, 0, 0.5, 3e4], [1, 2, 3, 4, 5]], { dtype: 'float32' });
  const rows = (v: Array) => jnp.add(nn.softmax(v), nn.logSoftmax(v));
  assertArray(t, jax.vmap(rows)(x) as Array, rows(x), { tol: 1e-6 });
  const f = (v: Array) => jnp.add(nn.softmax(v), nn.logSoftmax(v, { axis: 0 }));
  assertArray(t, jax.jit(f)(x) as Array, f(x), { tol: 1e-6 });
  const g = jax.grad((v: Array) => jnp.sum(jnp.multiply(f(v), jnp.arange(10).reshape([2, 5]))));
  assertArray(t, jax.jit(g)(x) as Array, g(x) as Array, { tol: 1e-6 });
});

test('oneHot takes integer indices only and validates numClasses and axis', (t) => {
  assertThrowsMentioning(t, () => nn.oneHot(jnp.array([0.0, 1.5]), 3), 'nn.oneHot', 'integer', 'float32');
  assertThrowsMentioning(t, () => nn.oneHot(jnp.array([true]), 3), 'nn.oneHot', 'integer', 'bool');
  assertThrowsMentioning(t, () => nn.oneHot(jnp.array([1], { dtype: 'int32' }), -1), 'nn.oneHot', 'numClasses', '-1');
  assertThrowsMentioning(t, () => nn.oneHot(jnp.array([1], { dtype: 'int32' }), 2.5), 'nn.oneHot', 'numClasses');
  assertThrowsMentioning(t, () => nn.oneHot(jnp.array([1], { dtype: 'int32' }), 3, { axis: 2 }), 'nn.oneHot', 'axis 2');
  assertArray(t, nn.oneHot(2, 3), { shape: [3], dtype: 'float32', values: [0, 0, 1] });
});

test('bad input: unknown options, wrong option types, floating-only functions', (t) => {
  const x = jnp.array([1.5, -2]);
  assertThrowsMentioning(t, () => nn.gelu(x, { approx: true } as never), 'nn.gelu', "unknown option 'approx'");
  assertThrowsMentioning(t, () => nn.gelu(x, { approximate: 'yes' } as never), 'nn.gelu', 'approximate', 'boolean');
  assertThrowsMentioning(t, () => nn.softmax(x, { axes: 0 } as never), 'nn.softmax', "'axes'");
  assertThrowsMentioning(t, () => nn.softmax(x, { axis: 3 }), 'axis');
  assertThrowsMentioning(t, () => nn.leakyRelu(x, { negative_slope: 0.1 } as never), 'nn.leakyRelu', "'negative_slope'");
  assertThrowsMentioning(t, () => nn.standardize(x, { algorithm: 'exact' } as never), 'nn.standardize', "'exact'");
  assertThrowsMentioning(t, () => nn.sigmoid(jnp.array([1, 2], { dtype: 'int32' })), 'nn.sigmoid', 'int32');
  assertThrowsMentioning(t, () => nn.silu(jnp.array([1, 2], { dtype: 'int32' })), 'nn.silu', 'int32');
});

test('nn functions free their intermediates', (t) => {
  const x = jnp.array([[1, -2, 3], [0.5, 0, -1]], { dtype: 'float32' });
  const before = jax.liveArrayCount();
  const outs = [nn.gelu(x), nn.gelu(x, { approximate: false }), nn.softmax(x), nn.logSoftmax(x), nn.softplus(x), nn.standardize(x), nn.relu(x), nn.elu(x)];
  t.is(jax.liveArrayCount() - before, outs.length);
});

// ---- initializers ----

const I = nn.initializers;
const INITIALIZERS: Record<string, () => (key: Array, shape: number[], dtype?: DType) => Array> = {
  'lecunNormal': () => I.lecunNormal(),
  'glorotUniform': () => I.glorotUniform(),
  'glorotNormal': () => I.glorotNormal(),
  'heNormal': () => I.heNormal(),
  'heUniform': () => I.heUniform(),
  'lecunUniform': () => I.lecunUniform(),
  'normal': () => I.normal(),
  'normal(0.5)': () => I.normal(0.5),
  'uniform(2)': () => I.uniform(2),
  'truncatedNormal(1)': () => I.truncatedNormal(1),
  'varianceScaling fan_out normal': () => I.varianceScaling(0.5, 'fan_out', 'normal'),
  'varianceScaling fan_geo_avg uniform': () => I.varianceScaling(3, 'fan_geo_avg', 'uniform'),
  'varianceScaling batchAxis': () => I.varianceScaling(1, 'fan_in', 'truncated_normal', { batchAxis: 0 }),
  'lecunNormal bfloat16': () => I.lecunNormal(),
  'zeros': () => I.zeros,
  'ones': () => I.ones,
};

const rawKey = (data: number[]) => jnp.array(data, { dtype: 'uint32' });

for (const c of fixture.initializers) {
  test(`initializers.${c.name}: ${c.dtype}[${c.shape.join(',')}] matches jax.nn.initializers`, (t) => {
    const init = INITIALIZERS[c.name]!();
    const out = init(rawKey(c.key), c.shape, c.dtype);
    // the samples are JAX's bits; scaling by sqrt(variance) may round differently in the last ulp
    assertArray(t, out, { shape: c.expected.shape, dtype: c.expected.dtype, values: c.expected.values.map(decode) }, { tol: c.dtype === 'bfloat16' ? 1e-2 : 2e-6 });
  });
}

test('variance-scaling initializers have the variance and bounds JAX intends', (t) => {
  const key = rawKey([0, 1234]);
  const shape = [400, 300];
  const stats = (a: Array) => {
    const v = a.dataSync();
    let mean = 0;
    for (const x of v) mean += x;
    mean /= v.length;
    let variance = 0;
    let maxAbs = 0;
    for (const x of v) {
      variance += (x - mean) ** 2;
      maxAbs = Math.max(maxAbs, Math.abs(x));
    }
    return { mean, variance: variance / v.length, maxAbs };
  };
  const fanIn = 400;
  const fanAvg = (400 + 300) / 2;
  const checks: [string, Array, number, number][] = [
    // [name, samples, variance, bound]
    ['lecunNormal', I.lecunNormal()(key, shape), 1 / fanIn, 2 * Math.sqrt(1 / fanIn) / 0.87962566103423978],
    ['heNormal', I.heNormal()(key, shape), 2 / fanIn, 2 * Math.sqrt(2 / fanIn) / 0.87962566103423978],
    ['glorotNormal', I.glorotNormal()(key, shape), 1 / fanAvg, 2 * Math.sqrt(1 / fanAvg) / 0.87962566103423978],
    ['glorotUniform', I.glorotUniform()(key, shape), 1 / fanAvg, Math.sqrt(3 / fanAvg)],
  ];
  for (const [name, a, variance, bound] of checks) {
    const s = stats(a);
    t.true(Math.abs(s.mean) < 0.05 * Math.sqrt(variance), `${name}: mean ${s.mean}`);
    t.true(Math.abs(s.variance / variance - 1) < 0.02, `${name}: variance ${s.variance}, expected ${variance}`);
    t.true(s.maxAbs <= bound * (1 + 1e-6), `${name}: |x| <= ${bound}, got ${s.maxAbs}`);
    t.true(s.maxAbs > bound * 0.95, `${name}: samples reach near the bound ${bound}, got ${s.maxAbs}`);
  }
  const n = stats(I.normal(0.5)(key, [100000]));
  t.true(Math.abs(n.variance / 0.25 - 1) < 0.02, `normal(0.5) variance ${n.variance}`);
});

test('computeFans follows JAX: receptive field from the other axes, batch axes excluded', (t) => {
  t.deepEqual(I.computeFans([64, 32]), [64, 32]);
  t.deepEqual(I.computeFans([3, 3, 16, 32]), [9 * 16, 9 * 32]);
  t.deepEqual(I.computeFans([4, 6, 12], { batchAxis: 0 }), [6, 12]);
  t.deepEqual(I.computeFans([2, 5, 7], { inAxis: [0, 1], outAxis: 2 }), [10, 7]);
  assertThrowsMentioning(t, () => I.lecunNormal()(rawKey([0, 1]), [5]), 'computeFans', '1-dimensional', 'inAxis');
});

test('initializers: dtype and argument errors', (t) => {
  const key = rawKey([0, 1]);
  assertArray(t, I.zeros(key, [2], 'int32'), { shape: [2], dtype: 'int32', values: [0, 0] });
  assertArray(t, I.ones(key, 3), { shape: [3], dtype: 'float32', values: [1, 1, 1] });
  assertThrowsMentioning(t, () => I.heNormal()(key, [2, 2], 'int32'), 'varianceScaling', 'floating', 'int32');
  assertThrowsMentioning(t, () => I.varianceScaling(1, 'fan_middle' as never, 'normal'), 'varianceScaling', "'fan_middle'");
  assertThrowsMentioning(t, () => I.varianceScaling(1, 'fan_in', 'cauchy' as never), 'varianceScaling', "'cauchy'");
  assertThrowsMentioning(t, () => I.glorotUniform({ in_axis: 0 } as never), 'glorotUniform', "'in_axis'");
  assertThrowsMentioning(t, () => I.normal('big' as never), 'nn.initializers.normal', 'stddev');
  assertThrowsMentioning(t, () => I.lecunNormal()(key, [2, -1]), 'shape');
});
