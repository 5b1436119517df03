// jaxon/optax against optax 0.2.8 (fixtures from test/fixtures/gen_optax.py):
// several steps of each optimizer, so bias correction, momentum, weight
// decay, masking, clipping, chaining and schedules are all exercised; the
// saturating int32 count; states under jit with donation; bad input.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';

const isJsArray = globalThis.Array.isArray;
import type { DType } from '../lib/core/dtype.js';
import * as optax from '../lib/optax/index.js';
import { assertArray, assertThrowsMentioning } from './helpers/oracle.js';
import { decodeNumber as decode, loadFixture } from './helpers/fixtures.js';

const jnp = jax.numpy;

type Encoded = number | 'nan' | 'inf' | '-inf';
interface Spec {
  shape: number[];
  dtype: DType;
  values: Encoded[];
}
type TreeSpec = Record<string, Spec>;
interface Step {
  updates: TreeSpec;
  params: TreeSpec;
  state: Spec[];
}
interface Case {
  name: string;
  params: TreeSpec;
  grads: TreeSpec[];
  initialState: Spec[];
  steps: Step[];
}

const fixture = loadFixture<{ optax: string; cases: Case[] }>('optax.json');
const values = (s: Spec) => s.values.map(decode);

function makeArray(s: Spec): Array {
  return jnp.reshape(jnp.array(values(s), { dtype: s.dtype }), s.shape);
}
function makeTree(t: TreeSpec): Record<string, Array> {
  return Object.fromEntries(Object.entries(t).map(([k, s]) => [k, makeArray(s)]));
}

/** The optimizers the fixture cases were made with, built the same way. */
const OPTIMIZERS: Record<string, () => optax.GradientTransformation<unknown>> = {
  'sgd': () => optax.sgd(0.1),
  'sgd momentum': () => optax.sgd(0.1, { momentum: 0.9 }),
  'sgd nesterov': () => optax.sgd(0.05, { momentum: 0.8, nesterov: true }),
  'adam': () => optax.adam(0.01),
  'adam custom': () => optax.adam(0.02, { b1: 0.8, b2: 0.99, eps: 1e-6, epsRoot: 1e-8 }),
  'adam nesterov': () => optax.adam(0.01, { nesterov: true }),
  'adamw': () => optax.adamw(0.01, { weightDecay: 0.1 }),
  'adamw default decay': () => optax.adamw(0.001),
  'adamw mask': () => optax.adamw(0.01, { weightDecay: 0.5, mask: { b: false, w: true } }),
  'clip then adam': () => optax.chain(optax.clipByGlobalNorm(1.0), optax.adam(0.1)),
  'clip below max': () => optax.clipByGlobalNorm(100.0),
  'clip above max': () => optax.clipByGlobalNorm(0.5),
  'add decayed weights': () => optax.addDecayedWeights(0.01),
  'schedule': () => optax.chain(optax.scaleByAdam(), optax.scaleByLearningRate((c) => jnp.multiply(0.1, jnp.power(0.5, c)))),
  'adam bfloat16': () => optax.adam(0.01),
  'adam saturating count': () => optax.adam(0.01),
};

/** The initial state, with the saturating case's count set as in the fixture. */
function initialState(c: Case, opt: optax.GradientTransformation<unknown>, params: Record<string, Array>): unknown {
  const state = opt.init(params);
  if (c.name !== 'adam saturating count') return state;
  const [adamState, rest] = state as [optax.ScaleByAdamState, unknown];
  return [{ ...adamState, count: jnp.array(values(c.initialState[0]!)[0]!, { dtype: 'int32' }) }, rest];
}

function checkTree(t: import('ava').ExecutionContext, actual: unknown, expected: TreeSpec, what: string, tol?: number): void {
  const a = actual as Record<string, Array>;
  t.deepEqual(Object.keys(a).sort(), Object.keys(expected).sort(), `${what}: keys`);
  for (const [k, s] of Object.entries(expected)) {
    assertArray(t, a[k], { shape: s.shape, dtype: s.dtype, values: values(s) }, { tol, message: `${what}.${k}` });
  }
}

function checkState(t: import('ava').ExecutionContext, state: unknown, expected: Spec[], what: string, tol?: number): void {
  const leaves = jax.tree.leaves(state as never) as Array[];
  t.is(leaves.length, expected.length, `${what}: number of state leaves`);
  expected.forEach((s, i) => assertArray(t, leaves[i], { shape: s.shape, dtype: s.dtype, values: values(s) }, { tol, message: `${what} leaf ${i}` }));
}

test('fixtures come from optax 0.2.x and cover every optimizer', (t) => {
  t.regex(fixture.optax, /^0\.2\./);
  t.deepEqual(fixture.cases.map((c) => c.name).sort(), Object.keys(OPTIMIZERS).sort());
});

for (const c of fixture.cases) {
  test(`${c.name}: ${c.steps.length} steps match optax`, (t) => {
    const opt = OPTIMIZERS[c.name]!();
    // bfloat16 keeps 8 bits of mantissa; everything else is float32 (pow and sqrt may differ by an ulp)
    const tol = c.name.includes('bfloat16') ? 1e-2 : 2e-6;
    let params = makeTree(c.params);
    let state = initialState(c, opt, params);
    checkState(t, state, c.initialState, 'initial state');
    c.steps.forEach((step, i) => {
      const [updates, next] = opt.update(makeTree(c.grads[i]!), state, params);
      params = optax.applyUpdates(params, updates) as Record<string, Array>;
      state = next;
      checkTree(t, updates, step.updates, `step ${i + 1} updates`, tol);
      checkTree(t, params, step.params, `step ${i + 1} params`, tol);
      checkState(t, state, step.state, `step ${i + 1} state`, tol);
    });
  });
}

test('adam under jit with the state donated matches eager adam, and the count is int32', (t) => {
  const c = fixture.cases.find((x) => x.name === 'adam')!;
  const opt = optax.adam(0.01);
  const step = jax.jit((params: Record<string, Array>, state: unknown[], grads: Record<string, Array>) => {
    const [updates, next] = opt.update(grads, state, params);
    return [optax.applyUpdates(params, updates), next];
  }, { donateArgnums: [0, 1] });
  let params = makeTree(c.params);
  let state = opt.init(params);
  c.steps.forEach((expected, i) => {
    const old = state;
    [params, state] = step(params, state, makeTree(c.grads[i]!)) as [Record<string, Array>, unknown[]];
    t.true((jax.tree.leaves(old as never)[0] as Array).isDisposed, 'the donated state is consumed');
    checkTree(t, params, expected.params, `jit step ${i + 1} params`, 2e-6);
    checkState(t, state, expected.state, `jit step ${i + 1} state`, 2e-6);
  });
  const [adamState] = state as [optax.ScaleByAdamState];
  t.is(adamState.count.dtype, 'int32');
  t.is(adamState.count.item(), c.steps.length);
});

test('safeIncrement saturates at the dtype maximum', (t) => {
  t.is(optax.safeIncrement(jnp.array(2147483646, { dtype: 'int32' })).item(), 2147483647);
  t.is(optax.safeIncrement(jnp.array(2147483647, { dtype: 'int32' })).item(), 2147483647);
  t.is(optax.safeIncrement(jnp.array(7, { dtype: 'int32' })).item(), 8);
  t.is(optax.safeInt32Increment, optax.safeIncrement);
  assertThrowsMentioning(t, () => optax.safeIncrement(jnp.array(true)), 'optax.safeIncrement', 'bool');
});

test('chain state is the array of inner states; clipByGlobalNorm and identity states have no leaves', (t) => {
  const params = { w: jnp.ones([2]) };
  const state = optax.chain(optax.clipByGlobalNorm(1), optax.scaleByAdam(), optax.identity()).init(params) as unknown[];
  t.true(isJsArray(state));
  t.is(state.length, 3);
  t.deepEqual(state[0], {});
  t.deepEqual(Object.keys(state[1] as object).sort(), ['count', 'mu', 'nu']);
  t.deepEqual(state[2], {});
  t.is(jax.tree.leaves(state as never).length, 3);
});

test('clipByGlobalNorm clips to exactly maxNorm and leaves small updates alone', (t) => {
  const clip = optax.clipByGlobalNorm(1);
  const [big] = clip.update({ a: jnp.array([3, 0], { dtype: 'float32' }), b: jnp.array([[4]], { dtype: 'float32' }) } as never, {}) as unknown as [Record<string, Array>];
  assertArray(t, big.a, { shape: [2], dtype: 'float32', values: [0.6, 0] });
  assertArray(t, big.b, { shape: [1, 1], dtype: 'float32', values: [0.8] });
  assertArray(t, optax.globalNorm(big as never), { shape: [], dtype: 'float32', values: [1] });
  const [small] = clip.update({ a: jnp.array([0.3, 0.4]) } as never, {}) as unknown as [Record<string, Array>];
  assertArray(t, small.a, { shape: [2], dtype: 'float32', values: [0.3, 0.4] });
});

test('adamw decays only the masked-in leaves; a mask function is called with the params', (t) => {
  const params = { b: jnp.array([1, 2]), w: jnp.array([3, 4]) };
  const zeros = { b: jnp.zeros([2]), w: jnp.zeros([2]) };
  const seen: unknown[] = [];
  const opt = optax.adamw(0.1, { weightDecay: 0.5, mask: (p) => { seen.push(p); return { b: false, w: true }; } });
  const [updates] = opt.update(zeros, opt.init(params), params) as unknown as [Record<string, Array>];
  // zero gradients: adam's update is 0, so the update is -lr * wd * p where masked in
  assertArray(t, updates.b, { shape: [2], dtype: 'float32', values: [0, 0] });
  assertArray(t, updates.w, { shape: [2], dtype: 'float32', values: [-0.15, -0.2] });
  t.true(seen.length >= 2);
});

test('a learning-rate schedule is called with the int32 count and the count advances', (t) => {
  const counts: number[] = [];
  const opt = optax.sgd((count: Array) => {
    counts.push(count.item() as number);
    t.is(count.dtype, 'int32');
    return 0.5;
  });
  const params = { w: jnp.array([1, 1], { dtype: 'float32' }) };
  let state = opt.init(params);
  for (let i = 0; i < 3; i++) {
    const [updates, next] = opt.update({ w: jnp.array([2, 4], { dtype: 'float32' }) }, state, params) as unknown as [Record<string, Array>, unknown[]];
    assertArray(t, updates.w, { shape: [2], dtype: 'float32', values: [-1, -2] });
    state = next;
  }
  t.deepEqual(counts, [0, 1, 2]);
  const constant = optax.sgd(optax.constantSchedule(0.5));
  const [u] = constant.update({ w: jnp.array([2, 4], { dtype: 'float32' }) }, constant.init(params), params) as unknown as [Record<string, Array>];
  assertArray(t, u.w, { shape: [2], dtype: 'float32', values: [-1, -2] });
});

test('applyUpdates keeps each parameter dtype and works on nested pytrees', (t) => {
  const params = { layers: [{ w: jnp.array([1, 2], { dtype: 'bfloat16' }) }, { w: jnp.array([1, 2], { dtype: 'float16' }) }] };
  const updates = { layers: [{ w: jnp.array([0.5, 0.5]) }, { w: jnp.array([0.25, 0.25]) }] };
  const out = optax.applyUpdates(params, updates) as typeof params;
  assertArray(t, out.layers[0]!.w, { shape: [2], dtype: 'bfloat16', values: [1.5, 2.5] });
  assertArray(t, out.layers[1]!.w, { shape: [2], dtype: 'float16', values: [1.25, 2.25] });
});

test('update does not leak intermediates: only the new updates and state stay alive', (t) => {
  const opt = optax.adamw(0.01);
  const params = { w: jnp.ones([4]), b: jnp.ones([2]) };
  const grads = { w: jnp.ones([4]), b: jnp.ones([2]) };
  const state = opt.init(params);
  const before = jax.liveArrayCount();
  const [updates, next] = opt.update(grads, state, params);
  // new: 2 updates, count, 2 mu, 2 nu
  t.is(jax.liveArrayCount() - before, 7);
  t.is(jax.tree.leaves(updates as never).length + jax.tree.leaves(next as never).length, 7);
});

test('bad input: unknown options, wrong types, mismatched trees, wrong states and missing params', (t) => {
  const params = { w: jnp.ones([2]) };
  assertThrowsMentioning(t, () => optax.adam(0.1, { beta1: 0.9 } as never), 'optax.adam', "unknown option 'beta1'");
  assertThrowsMentioning(t, () => optax.adamw(0.1, { weight_decay: 0.1 } as never), 'optax.adamw', "'weight_decay'");
  assertThrowsMentioning(t, () => optax.sgd('fast' as never), 'optax.scaleByLearningRate', 'learningRate', "'fast'");
  assertThrowsMentioning(t, () => optax.adam(0.1, { b1: '0.9' } as never), 'optax.scaleByAdam', 'b1');
  assertThrowsMentioning(t, () => optax.sgd(0.1, { nesterov: true }), 'optax.sgd', 'nesterov', 'momentum');
  assertThrowsMentioning(t, () => optax.chain(optax.adam(0.1), 3 as never), 'optax.chain', 'transforms[1]');
  assertThrowsMentioning(t, () => optax.clipByGlobalNorm(null as never), 'optax.clipByGlobalNorm', 'maxNorm');
  const opt = optax.adam(0.1);
  const state = opt.init(params);
  assertThrowsMentioning(t, () => opt.update({ w: jnp.ones([2]), b: jnp.ones([1]) }, state, params), 'optax.scaleByAdam', 'structure', '{b: *, w: *}');
  assertThrowsMentioning(t, () => opt.update(params, [state], params), 'optax.chain', 'one state per transformation (2)', 'an array of 1');
  assertThrowsMentioning(t, () => optax.scaleByAdam().update(params, { count: 0 } as never), 'optax.scaleByAdam', 'count, mu, nu');
  const wd = optax.addDecayedWeights(0.1);
  assertThrowsMentioning(t, () => wd.update(params, wd.init(params)), 'optax.addDecayedWeights', 'params');
  assertThrowsMentioning(t, () => optax.applyUpdates(params, { v: jnp.ones([2]) }), 'optax.applyUpdates', 'structure');
  const m = optax.masked(optax.scaleByAdam(), { x: true });
  assertThrowsMentioning(t, () => m.init(params), 'optax.masked', 'keys {x}', '{w}');
  assertThrowsMentioning(t, () => optax.masked(optax.scaleByAdam(), { w: 1 } as never).init(params), 'optax.masked', 'booleans');
});
