// jax.checkpoint / remat, checkpoint names and policies: ports of JAX's
// RematTest (tests/api_test.py): linearize of a remat'd function recomputes
// in the linear part (sin once, cos twice for sin(sin(x))); policies change
// what is saved (residual counts, equation counts in the linear jaxpr);
// name policies allow- and deny-list; offloading is explicit device_put
// transfers in the jaxpr of grad; gradients never depend on the policy;
// remat composes with jit, vmap and itself (grad of grad, check_grads to
// order 2 against the float64 oracle); bad arguments give clear errors.
import test, { type ExecutionContext } from 'ava';
import type { Array } from '../lib/core/array.js';
import { type Interpreter, setInterpreter } from '../lib/core/bind.js';
import { eliminateCommonSubexpressions } from '../lib/compiler/passes.js';
import { inlineCheckpoints } from '../lib/compiler/inline-checkpoints.js';
import * as jax from '../lib/index.js';
import type { ClosedJaxpr, Jaxpr } from '../lib/trace/jaxpr.js';
import { checkGrads } from './helpers/check-grads.js';
import { withX64 } from './helpers/x64.js';
import { assertArray, assertThrowsMentioning, randomValues } from './helpers/oracle.js';

const { numpy: jnp, checkpointPolicies: policies } = jax;
type Fn = (...args: never[]) => unknown;

const f32 = (data: number | number[], shape?: number[]): Array => {
  const a = jnp.array(data, { dtype: 'float32' });
  return shape ? a.reshape(shape) : a;
};
const rand = (shape: number[], seed: number, lo = -1, hi = 1): Array =>
  f32(randomValues(shape.reduce((a, b) => a * b, 1), seed, lo, hi), shape);

/** Counts the primitives applied eagerly while fn runs (JAX's test wraps sin_p's impl the same way). */
function countApplications<T>(fn: () => T): { result: T; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  let inner: Interpreter;
  const counting: Interpreter = {
    apply(prim, inputs, params) {
      counts.set(prim, (counts.get(prim) ?? 0) + 1);
      return inner.apply(prim, inputs, params);
    },
  };
  inner = setInterpreter(counting);
  try {
    return { result: fn(), counts };
  } finally {
    setInterpreter(inner);
  }
}

/** Occurrences of `text` in a printed jaxpr (nested jaxprs included), as JAX's tests count `' sin '`. */
const count = (jaxpr: ClosedJaxpr | Jaxpr, text: string): number => jaxpr.toString().split(text).length - 1;

/** The linear part of linearize(f, x) as a jaxpr; its constants are the residuals. */
function linearJaxpr(f: Fn, x: Array): ClosedJaxpr {
  const [, fJvp] = jax.linearize(f, x);
  return jax.makeJaxpr(fJvp as Fn)(x);
}

function assertSame(t: ExecutionContext, actual: unknown, expected: unknown, message: string, tol = 1e-5): void {
  const a = jax.tree.leaves(actual as never) as Array[];
  const e = jax.tree.leaves(expected as never) as Array[];
  t.is(a.length, e.length, `${message}: number of leaves`);
  e.forEach((x, i) => assertArray(t, a[i], x, { message: `${message} leaf ${i}`, tol }));
}

// ---- JAX's test_remat_basic ----

test('remat: linearize recomputes in the linear part: sin once, cos twice', (t) => {
  const g = jax.remat((x: Array) => [jnp.sin(jnp.sin(x)), 3]);
  const f = (x: Array) => (g(x) as Array[])[0]!;
  const x = f32(2);
  assertArray(t, f(x), { shape: [], dtype: 'float32', values: [Math.fround(Math.sin(Math.sin(2)))] });

  const forward = countApplications(() => jax.linearize(f as Fn, x));
  const [y, fLin] = forward.result as [Array, (t: Array) => Array];
  assertArray(t, y, { shape: [], dtype: 'float32', values: [Math.sin(Math.sin(2))] });
  t.is(forward.counts.get('sin'), 2, 'the forward pass computes the primal');
  t.is(forward.counts.get('cos') ?? 0, 0, 'nothing for the backward pass is computed (or saved) by default');

  const linear = countApplications(() => fLin(f32(3)));
  assertArray(t, linear.result, { shape: [], dtype: 'float32', values: [Math.cos(Math.sin(2)) * Math.cos(2) * 3] });
  t.is(linear.counts.get('sin'), 1);
  t.is(linear.counts.get('cos'), 2);
});

test('remat: the linear jaxpr holds the recomputation in a differentiated checkpoint', (t) => {
  const f = jax.checkpoint((x: Array) => jnp.sin(jnp.sin(x)));
  const lin = linearJaxpr(f as Fn, f32([0.5, 1, 2]));
  t.is(count(lin, ' sin '), 1);
  t.is(count(lin, ' cos '), 2);
  t.is(count(lin, 'checkpoint['), 1);
  t.is(count(lin, 'differentiated=True'), 1);
  t.is(lin.consts.length, 1, 'the only residual is the input');
});

test('makeJaxpr shows the checkpoint primitive with its params', (t) => {
  const f = jax.checkpoint((x: Array) => jnp.sin(jnp.sin(x)), { policy: policies.dotsSaveable });
  const closed = jax.makeJaxpr(f as Fn)(f32(1));
  const text = closed.toString();
  t.deepEqual(closed.jaxpr.eqns.map((e) => e.primitive), ['checkpoint']);
  for (const param of ['jaxpr={ lambda', 'prevent_cse=True', 'differentiated=False', 'policy=dots_saveable']) t.true(text.includes(param), text);
  t.is(count(closed, ' sin '), 2);
  const custom = jax.checkpoint((x: Array) => jnp.sin(x), { policy: function saveCos(prim) { return prim === 'cos'; }, preventCse: false });
  const customText = jax.makeJaxpr(custom as Fn)(f32(1)).toString();
  t.true(customText.includes('prevent_cse=False') && customText.includes('policy=saveCos'), customText);
});

// ---- policies ----

test('everythingSaveable saves every residual; nothingSaveable and the default save only the inputs', (t) => {
  const g = (x: Array) => jnp.sin(jnp.sin(x));
  const x = f32([0.5, 1, 2]);
  const everything = linearJaxpr(jax.remat(g, { policy: policies.everythingSaveable }) as Fn, x);
  t.is(count(everything, ' sin '), 0);
  t.is(count(everything, ' cos '), 0);
  t.is(everything.consts.length, 2, 'cos(x) and cos(sin(x))');
  for (const [name, policy] of [['nothingSaveable', policies.nothingSaveable], ['default', undefined]] as const) {
    const nothing = linearJaxpr(jax.remat(g, { policy }) as Fn, x);
    t.is(count(nothing, ' sin '), 1, name);
    t.is(count(nothing, ' cos '), 2, name);
    t.is(nothing.consts.length, 1, `${name}: x`);
  }
  const plain = linearJaxpr(g as Fn, x);
  t.is(plain.consts.length, 2, 'without remat everything is saved');

  // everythingSaveable: the linear part computes no sin or cos at all
  const [, fLin] = jax.linearize(jax.remat(g, { policy: policies.everythingSaveable }) as Fn, x) as [Array, (t: Array) => Array];
  const { counts } = countApplications(() => fLin(x));
  t.is((counts.get('sin') ?? 0) + (counts.get('cos') ?? 0), 0);
});

test('a custom policy that saves cos (JAX test_remat_custom_policy_save_cos)', (t) => {
  const saveCos = (prim: string) => prim === 'cos';
  const f = jax.checkpoint((x: Array) => jnp.sin(jnp.sin(x)), { policy: saveCos });
  const lin = linearJaxpr(f as Fn, f32([0.3, 1.2]));
  t.is(count(lin, ' sin '), 0);
  t.is(count(lin, ' cos '), 0);
  // policies return booleans, 'save' / 'recompute', or an offload
  const saveCosString = jax.checkpoint((x: Array) => jnp.sin(jnp.sin(x)), { policy: (prim) => (prim === 'cos' ? 'save' : 'recompute') });
  t.is(count(linearJaxpr(saveCosString as Fn, f32([0.3, 1.2])), ' cos '), 0);
});

/** JAX's test_remat_checkpoint_dots: three dots and sins. */
function dotsAndSins(x: Array): Array {
  let y = jnp.dot(x, x);
  y = jnp.sin(y);
  y = jnp.dot(y, y);
  y = jnp.sin(y);
  y = jnp.dot(y, y);
  return jnp.sin(y);
}

test('dotsSaveable saves only dot_general outputs (JAX test_remat_checkpoint_dots)', (t) => {
  const x = rand([2, 2], 3, -0.5, 0.5);
  for (const policy of [policies.dotsSaveable, policies.checkpointDots]) {
    const lin = linearJaxpr(jax.checkpoint(dotsAndSins, { policy }) as Fn, x);
    t.is(count(lin, ' sin '), 2, 'the sins feeding the dots are recomputed');
    t.is(count(lin, ' cos '), 3);
    t.is(count(lin, ' dot_general'), 6, 'only the tangent dots: the primal dots are saved');
  }
  const nothing = linearJaxpr(jax.checkpoint(dotsAndSins) as Fn, x);
  t.is(count(nothing, ' dot_general'), 9, 'nothing saved: the primal dots are recomputed too');
  assertSame(t, jax.grad((x: Array) => jnp.sum(jax.checkpoint(dotsAndSins, { policy: policies.dotsSaveable })(x)))(x),
    jax.grad((x: Array) => jnp.sum(dotsAndSins(x)))(x), 'gradient');
});

test('dotsWithNoBatchDimsSaveable saves dots without batch dimensions only', (t) => {
  const chain = (spec: string) => (x: Array): Array => {
    let y = jnp.einsum(spec, x, x);
    y = jnp.sin(y);
    y = jnp.einsum(spec, y, y);
    y = jnp.sin(y);
    y = jnp.einsum(spec, y, y);
    return jnp.sin(y);
  };
  for (const policy of [policies.dotsWithNoBatchDimsSaveable, policies.checkpointDotsWithNoBatchDims]) {
    const plain = linearJaxpr(jax.checkpoint(chain('ij,jk->ik'), { policy }) as Fn, rand([2, 2], 5, -0.5, 0.5));
    t.is(count(plain, ' sin '), 2);
    t.is(count(plain, ' cos '), 3);
    t.is(count(plain, ' dot_general'), 6);
    const batched = linearJaxpr(jax.checkpoint(chain('nij,njk->nik'), { policy }) as Fn, rand([3, 2, 2], 6, -0.5, 0.5));
    t.is(count(batched, ' sin '), 2);
    t.is(count(batched, ' cos '), 3);
    t.is(count(batched, ' dot_general'), 9, 'batched dots are not saved');
  }
});

/** sin three times, each result named: y, z, w. */
function namedChain(x: Array): Array {
  const y = jax.checkpointName(jnp.sin(x), 'y');
  const z = jax.checkpointName(jnp.sin(y), 'z');
  return jax.checkpointName(jnp.sin(z), 'w');
}

test('saveOnlyTheseNames: an allow-list of named values', (t) => {
  const x = f32([0.1, 0.7, 1.9]);
  const cases: [string[], number, number][] = [
    // names saved, residuals (x is always one), sins recomputed
    [['y', 'z'], 3, 0],
    [['y'], 2, 1],
    [['z'], 2, 1],
    [['w'], 1, 2],
    [[], 1, 2],
  ];
  for (const [names, residuals, sins] of cases) {
    const lin = linearJaxpr(jax.remat(namedChain, { policy: policies.saveOnlyTheseNames(...names) }) as Fn, x);
    t.is(lin.consts.length, residuals, `saveOnlyTheseNames(${names.join(', ')}): residuals`);
    t.is(count(lin, ' sin '), sins, `saveOnlyTheseNames(${names.join(', ')}): sins recomputed`);
    t.is(count(lin, ' cos '), 3);
  }
  // unnamed values are never saved by a name policy
  const unnamed = linearJaxpr(jax.remat((x: Array) => jnp.sin(jnp.sin(x)), { policy: policies.saveOnlyTheseNames('y') }) as Fn, x);
  t.is(unnamed.consts.length, 1);
});

test('saveAnyNamesButThese: a deny-list of named values', (t) => {
  const x = f32([0.1, 0.7, 1.9]);
  const cases: [string[], number, number][] = [
    [[], 3, 0],
    [['y'], 2, 1],
    [['y', 'z'], 1, 2],
    [['w'], 3, 0],
  ];
  for (const [names, residuals, sins] of cases) {
    const lin = linearJaxpr(jax.remat(namedChain, { policy: policies.saveAnyNamesButThese(...names) }) as Fn, x);
    t.is(lin.consts.length, residuals, `saveAnyNamesButThese(${names.join(', ')}): residuals`);
    t.is(count(lin, ' sin '), sins, `saveAnyNamesButThese(${names.join(', ')}): sins recomputed`);
  }
});

test('saveFromBothPolicies saves what either policy saves', (t) => {
  const x = f32([0.1, 0.7, 1.9]);
  const both = policies.saveFromBothPolicies(policies.saveOnlyTheseNames('y'), policies.saveOnlyTheseNames('z'));
  const lin = linearJaxpr(jax.remat(namedChain, { policy: both }) as Fn, x);
  t.is(lin.consts.length, 3);
  t.is(count(lin, ' sin '), 0);
  const dotsOrNames = policies.saveFromBothPolicies(policies.dotsSaveable, policies.saveAnyNamesButThese());
  t.is(linearJaxpr(jax.remat(namedChain, { policy: dotsOrNames }) as Fn, x).consts.length, 3);
});

// ---- offloading ----

test('saveAndOffloadOnlyTheseNames: offloaded residuals are device_put transfers in the jaxpr of grad', (t) => {
  const policy = policies.saveAndOffloadOnlyTheseNames({
    namesWhichCanBeSaved: ['z'], namesWhichCanBeOffloaded: ['y'], offloadSrc: 'device', offloadDst: 'pinned_host',
  });
  const f = jax.remat((x: Array) => jnp.sum(namedChain(x)), { policy });
  const x = f32([0.1, 0.7, 1.9]);
  const text = jax.makeJaxpr(jax.grad(f as Fn) as Fn)(x).toString();
  t.is(count(jax.makeJaxpr(jax.grad(f as Fn) as Fn)(x), 'device_put[src_kind=device dst_kind=pinned_host]'), 1, text);
  t.is(count(jax.makeJaxpr(jax.grad(f as Fn) as Fn)(x), 'device_put[src_kind=pinned_host dst_kind=device]'), 1, text);
  // the transfer to the host is in the forward checkpoint, the one back in the backward (differentiated) one
  const checkpoints = jax.makeJaxpr(jax.grad(f as Fn) as Fn)(x).jaxpr.eqns.filter((e) => e.primitive === 'checkpoint');
  const transfers = (differentiated: boolean) => checkpoints
    .filter((e) => (e.params as { differentiated: boolean }).differentiated === differentiated)
    .flatMap((e) => (e.params as { jaxpr: ClosedJaxpr }).jaxpr.jaxpr.eqns.filter((q) => q.primitive === 'device_put').map((q) => (q.params as { dstKind: string }).dstKind));
  t.deepEqual(transfers(false), ['pinned_host']);
  t.deepEqual(transfers(true), ['device']);
  // y offloaded and z saved: only x's sin is... not recomputed at all
  t.is(count(linearJaxpr(f as Fn, x), ' sin '), 0);
  assertSame(t, jax.grad(f as Fn)(x), jax.grad((x: Array) => jnp.sum(namedChain(x)))(x), 'gradient');
});

test('a policy that offloads every residual (JAX memories_test: remat offload)', (t) => {
  const offloadAll = () => ({ offload: ['device', 'pinned_host'] as ['device', 'pinned_host'] });
  const f = jax.remat((x: Array) => jnp.sum(jnp.sin(jnp.sin(x))), { policy: offloadAll });
  const x = f32([0.1, 0.7, 1.9]);
  const g = jax.makeJaxpr(jax.grad(f as Fn) as Fn)(x);
  const toHost = count(g, 'dst_kind=pinned_host]');
  t.is(toHost, 2, g.toString());
  t.is(count(g, 'src_kind=pinned_host dst_kind=device]'), toHost);
  assertSame(t, jax.grad(f as Fn)(x), jax.grad((x: Array) => jnp.sum(jnp.sin(jnp.sin(x))))(x), 'gradient');
});

test('offloadDotWithNoBatchDims offloads the matmul outputs', (t) => {
  const f = (w1: Array, w2: Array, x: Array) => jnp.sum(jnp.sin(jnp.tanh(jnp.matmul(x, w1)).matmul(w2)));
  const g = jax.remat(f, { policy: policies.offloadDotWithNoBatchDims('device', 'pinned_host') });
  const args = [rand([3, 4], 1), rand([4, 2], 2), rand([5, 3], 3)];
  const jaxpr = jax.makeJaxpr(jax.grad(g as Fn, { argnums: [0, 1, 2] }) as Fn)(...args);
  t.is(count(jaxpr, 'dst_kind=pinned_host]'), 2, 'both matmul outputs feed the backward pass');
  t.is(count(jaxpr, 'src_kind=pinned_host dst_kind=device]'), 2);
  assertSame(t, jax.grad(g as Fn, { argnums: [0, 1, 2] })(...args), jax.grad(f as Fn, { argnums: [0, 1, 2] })(...args), 'gradient');
});

// ---- gradients never depend on the policy ----

const ALL_POLICIES: [string, jax.CheckpointPolicy | null][] = [
  ['default (nothing saveable)', null],
  ['everythingSaveable', policies.everythingSaveable],
  ['nothingSaveable', policies.nothingSaveable],
  ['dotsSaveable', policies.dotsSaveable],
  ['dotsWithNoBatchDimsSaveable', policies.dotsWithNoBatchDimsSaveable],
  ["saveOnlyTheseNames('h')", policies.saveOnlyTheseNames('h')],
  ["saveAnyNamesButThese('h')", policies.saveAnyNamesButThese('h')],
  ['saveAndOffloadOnlyTheseNames', policies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['h'], offloadSrc: 'device', offloadDst: 'pinned_host' })],
  ['offloadDotWithNoBatchDims', policies.offloadDotWithNoBatchDims('device', 'pinned_host')],
  ['saveFromBothPolicies', policies.saveFromBothPolicies(policies.dotsSaveable, policies.saveOnlyTheseNames('h'))],
];

/** The tutorial's two-matmul network, with the intermediate named. */
const network = (w1: Array, w2: Array, x: Array): Array => {
  const h = jax.checkpointName(jnp.matmul(x, w1), 'h');
  return jnp.sum(jnp.sin(jnp.matmul(jnp.tanh(h), w2)));
};

test('gradients of the two-matmul network are the same under every policy', (t) => {
  const args = [rand([3, 4], 11), rand([4, 2], 12), rand([5, 3], 13)];
  const expected = jax.valueAndGrad(network as Fn, { argnums: [0, 1, 2] })(...args);
  for (const [name, policy] of ALL_POLICIES) {
    const f = jax.remat(network, { policy });
    assertSame(t, jax.valueAndGrad(f as Fn, { argnums: [0, 1, 2] })(...args), expected, name);
  }
  // plain x @ w1 @ w2
  const linear = (w1: Array, w2: Array, x: Array) => jnp.sum(jnp.matmul(jax.checkpointName(jnp.matmul(x, w1), 'h'), w2));
  const plain = jax.grad(linear as Fn, { argnums: [0, 1] })(...args);
  for (const [name, policy] of ALL_POLICIES) assertSame(t, jax.grad(jax.remat(linear, { policy }) as Fn, { argnums: [0, 1] })(...args), plain, `x @ w1 @ w2: ${name}`);
});

// serial: float64 arguments need x64 on, which it turns on (process-wide) while it runs
test.serial('check_grads of remat to order 2 (forward and reverse) against the float64 oracle', (t) => withX64(true, () => {
  const f64 = (shape: number[], seed: number) => rand(shape, seed).astype('float64');
  for (const [name, policy] of [ALL_POLICIES[0]!, ALL_POLICIES[3]!, ALL_POLICIES[5]!, ALL_POLICIES[7]!]) {
    t.log(name);
    checkGrads(t, jax.remat(network, { policy }) as Fn, [f64([3, 2], 1), f64([2, 2], 2), f64([2, 3], 3)], { order: 2, modes: ['fwd', 'rev'] });
  }
}));

test('grad of grad through remat', (t) => {
  const g = (x: Array) => jnp.sin(jnp.sin(x));
  for (const [name, policy] of ALL_POLICIES.slice(0, 3)) {
    const f = jax.remat(g, { policy });
    assertSame(t, jax.grad(jax.grad(f as Fn) as Fn)(f32(0.7)), jax.grad(jax.grad(g as Fn) as Fn)(f32(0.7)), name);
  }
  // remat of a function that itself differentiates
  const inner = jax.remat((x: Array) => jax.grad(g as Fn)(x) as Array);
  assertSame(t, jax.grad(inner as Fn)(f32(0.7)), jax.grad(jax.grad(g as Fn) as Fn)(f32(0.7)), 'remat(grad)');
});

test('nested remat: a checkpoint inside a checkpoint', (t) => {
  const inner = jax.remat((x: Array) => jnp.sin(jnp.sin(x)), { policy: policies.everythingSaveable });
  const outer = jax.remat((x: Array) => jnp.cos(inner(jnp.multiply(x, x))));
  const plain = (x: Array) => jnp.cos(jnp.sin(jnp.sin(jnp.multiply(x, x))));
  const x = f32([0.2, 0.9]);
  assertSame(t, jax.grad((x: Array) => jnp.sum(outer(x)))(x), jax.grad((x: Array) => jnp.sum(plain(x)))(x), 'gradient');
  assertSame(t, outer(x), plain(x), 'value');
});

// ---- composition with jit and vmap ----

test('remat composes with jit', (t) => {
  const g = (x: Array) => jnp.sum(jnp.sin(jnp.sin(jnp.multiply(x, 2))));
  const x = f32([0.1, 0.5, 1.5]);
  for (const [name, policy] of ALL_POLICIES.slice(0, 3)) {
    const f = jax.remat(g, { policy });
    assertSame(t, jax.jit(f)(x), g(x), `jit(remat): ${name}`);
    assertSame(t, jax.jit(jax.grad(f as Fn))(x), jax.grad(g as Fn)(x), `jit(grad(remat)): ${name}`);
    assertSame(t, jax.grad(jax.jit(f) as Fn)(x), jax.grad(g as Fn)(x), `grad(jit(remat)): ${name}`);
    assertSame(t, jax.grad(jax.remat(jax.jit(g), { policy }) as Fn)(x), jax.grad(g as Fn)(x), `grad(remat(jit)): ${name}`);
  }
  const offload = jax.remat((w1: Array, w2: Array, x: Array) => network(w1, w2, x), { policy: ALL_POLICIES[7]![1] });
  const args = [rand([3, 4], 11), rand([4, 2], 12), rand([5, 3], 13)];
  assertSame(t, jax.jit(jax.grad(offload as Fn))(...args), jax.grad(network as Fn)(...args), 'jit(grad) with offloading');
});

test('under jit, preventCse keeps the backward recomputation apart from the forward computation', (t) => {
  const g = (x: Array) => jnp.sum(jnp.sin(jnp.sin(x)));
  const x = f32([0.1, 0.5, 1.5]);
  const sinsAfterCse = (preventCse: boolean) => {
    const f = jax.remat(g, { preventCse });
    const closed = jax.jit(jax.valueAndGrad(f as Fn)).trace(x);
    const program = eliminateCommonSubexpressions(inlineCheckpoints(closed.jaxpr));
    t.false(program.eqns.some((e) => e.primitive === 'checkpoint' || e.primitive === 'name'), 'inlined');
    return program.eqns.filter((e) => e.primitive === 'sin').length;
  };
  t.is(sinsAfterCse(true), 3, 'two forward sins and the recomputed one');
  t.is(sinsAfterCse(false), 2, 'CSE merges the recomputation with the forward sin');
});

test('remat composes with vmap', (t) => {
  const g = (x: Array, w: Array) => jnp.sum(jnp.sin(jnp.matmul(jax.checkpointName(jnp.tanh(x), 'h'), w)));
  const xs = rand([4, 2, 3], 21);
  const w = rand([3, 2], 22);
  for (const [name, policy] of ALL_POLICIES) {
    const f = jax.remat(g, { policy });
    assertSame(t, jax.vmap(f, { inAxes: [0, null] })(xs, w), jax.vmap(g, { inAxes: [0, null] })(xs, w), `vmap(remat): ${name}`);
    assertSame(t, jax.vmap(jax.grad(f as Fn, { argnums: [0, 1] }), { inAxes: [0, null] })(xs, w),
      jax.vmap(jax.grad(g as Fn, { argnums: [0, 1] }), { inAxes: [0, null] })(xs, w), `vmap(grad(remat)): ${name}`);
  }
  const f = jax.remat(g, { policy: ALL_POLICIES[7]![1] });
  assertSame(t, jax.grad((xs: Array) => jnp.sum(jax.vmap(f, { inAxes: [0, null] })(xs, w)))(xs),
    jax.grad((xs: Array) => jnp.sum(jax.vmap(g, { inAxes: [0, null] })(xs, w)))(xs), 'grad(vmap(remat))');
  assertSame(t, jax.remat(jax.vmap(g, { inAxes: [0, null] }))(xs, w), jax.vmap(g, { inAxes: [0, null] })(xs, w), 'remat(vmap)');
});

test('jvp of remat', (t) => {
  const g = (x: Array) => jnp.sin(jnp.sin(x));
  const x = f32([0.3, 1.1]);
  const v = f32([1, -2]);
  assertSame(t, jax.jvp(jax.remat(g) as Fn, [x], [v]), jax.jvp(g as Fn, [x], [v]), 'jvp');
});

// ---- arguments, outputs, names ----

test('pytrees, static arguments and closures', (t) => {
  const w = f32([2, 3]);
  const f = jax.checkpoint((p: { a: Array; b: Array }, n: number) => ({ out: [jnp.multiply(jnp.sin(p.a), n), jnp.multiply(p.b, w)] }), { staticArgnums: 1 });
  const p = { a: f32([0.5, 1]), b: f32([1, 2]) };
  const out = f(p, 3) as { out: Array[] };
  assertArray(t, out.out[0], { shape: [2], dtype: 'float32', values: [3 * Math.sin(0.5), 3 * Math.sin(1)] });
  assertArray(t, out.out[1], { shape: [2], dtype: 'float32', values: [2, 6] });
  const grads = jax.grad((p: { a: Array; b: Array }) => jnp.sum(jnp.add(f(p, 3).out[0]!, f(p, 3).out[1]!)))(p) as { a: Array; b: Array };
  assertArray(t, grads.a, { shape: [2], dtype: 'float32', values: [3 * Math.cos(0.5), 3 * Math.cos(1)] });
  assertArray(t, grads.b, { shape: [2], dtype: 'float32', values: [2, 3] });
  // a closed-over value being differentiated (an outer tracer) is an operand of the checkpoint
  const gw = jax.grad((w: Array) => jnp.sum(jax.remat((x: Array) => jnp.sin(jnp.multiply(x, w)))(f32([1, 2]))))(f32([0.5, 0.25]));
  assertArray(t, gw, { shape: [2], dtype: 'float32', values: [Math.cos(0.5), 2 * Math.cos(0.5)] });
});

test('checkpointName is the identity on values and pytrees, visible in jaxprs', (t) => {
  t.is(jax.adCheckpoint.checkpointName, jax.checkpointName);
  t.is(jax.remat, jax.checkpoint);
  const x = f32([1, 2]);
  assertArray(t, jax.checkpointName(x, 'a'), x);
  const tree = jax.checkpointName({ u: x, v: [x] }, 'b');
  assertArray(t, tree.v[0], x);
  t.true(jax.makeJaxpr(((x: Array) => jax.checkpointName(jnp.sin(x), 'hidden')) as Fn)(x).toString().includes('name[name=hidden]'));
  assertSame(t, jax.grad((x: Array) => jnp.sum(jax.checkpointName(jnp.sin(x), 'h')))(x), jnp.cos(x), 'gradient passes through');
  assertSame(t, jax.jit((x: Array) => jax.checkpointName(jnp.sin(x), 'h'))(x), jnp.sin(x), 'under jit');
  // outputs that are inputs are arrays of their own
  const y = jax.remat((x: Array) => [x, x])(x) as Array[];
  y[0]!.dispose();
  y[1]!.dispose();
  assertArray(t, x, { shape: [2], dtype: 'float32', values: [1, 2] });
});

test('eager remat leaves no arrays behind', (t) => {
  const w = f32([1, 2, 3]);
  const f = jax.remat((x: Array) => jnp.sum(jnp.sin(jnp.multiply(x, w))), { policy: policies.dotsSaveable });
  const x = f32([0.1, 0.2, 0.3]);
  const runs: [string, () => unknown][] = [['call', () => f(x)], ['grad', () => jax.grad(f as Fn)(x)], ['jvp', () => jax.jvp(f as Fn, [x], [x])]];
  for (const [name, run] of runs) {
    jax.tree.leaves(run() as never).forEach((a) => (a as Array).dispose());
    const before = jax.liveArrayCount();
    jax.tree.leaves(run() as never).forEach((a) => (a as Array).dispose());
    t.is(jax.liveArrayCount(), before, name);
  }
});

// ---- errors ----

test('bad arguments give clear errors', (t) => {
  const f = (x: Array) => jnp.sin(x);
  assertThrowsMentioning(t, () => jax.checkpoint(f, { policy: 'dots' as never }), 'jax.checkpoint', 'policy must be a policy function', "'dots'");
  assertThrowsMentioning(t, () => jax.checkpoint(f, { polcy: null } as never), 'jax.checkpoint', "unknown option 'polcy'", "'policy'");
  assertThrowsMentioning(t, () => jax.checkpoint(f, { preventCse: 1 as never }), 'jax.checkpoint', 'preventCse must be a boolean', '1');
  assertThrowsMentioning(t, () => jax.checkpoint(f, { staticArgnums: 'a' as never }), 'jax.checkpoint', 'staticArgnums');
  assertThrowsMentioning(t, () => jax.checkpoint(f, { staticArgnums: 3 })(f32(1)), 'jax.checkpoint', 'staticArgnums 3', '1 arguments');
  assertThrowsMentioning(t, () => jax.checkpoint(3 as never), 'jax.checkpoint', 'fn must be a function');
  assertThrowsMentioning(t, () => jax.checkpoint((s: string) => jnp.sin(f32(1)) as never)('a' as never), 'jax.checkpoint', "'a'", 'staticArgnums');
  assertThrowsMentioning(t, () => policies.saveOnlyTheseNames(3 as never), 'saveOnlyTheseNames', 'strings', '3');
  assertThrowsMentioning(t, () => policies.saveAnyNamesButThese('a', null as never), 'saveAnyNamesButThese', 'strings', 'null');
  assertThrowsMentioning(
    t,
    () => policies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: ['a', 'b'], namesWhichCanBeOffloaded: ['b'], offloadSrc: 'device', offloadDst: 'pinned_host' }),
    'saveAndOffloadOnlyTheseNames', 'should not intersect', "intersection ['b']",
  );
  assertThrowsMentioning(
    t,
    () => policies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['b'], offloadSrc: 'device', offloadDst: 'host' as never }),
    'saveAndOffloadOnlyTheseNames', 'offloadDst', "'device' or 'pinned_host'", "'host'",
  );
  assertThrowsMentioning(t, () => policies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [] } as never), 'saveAndOffloadOnlyTheseNames', "missing option 'namesWhichCanBeOffloaded'");
  assertThrowsMentioning(t, () => policies.offloadDotWithNoBatchDims('device', 'gpu' as never), 'offloadDotWithNoBatchDims', 'offloadDst', "'gpu'");
  assertThrowsMentioning(t, () => policies.saveFromBothPolicies(policies.dotsSaveable, 3 as never), 'saveFromBothPolicies', 'policy2', 'policy function');
  assertThrowsMentioning(t, () => jax.checkpointName(f32(1), 3 as never), 'jax.checkpointName', 'name must be a string', '3');
  assertThrowsMentioning(t, () => jax.checkpointName({ a: 'x' } as never, 'n'), 'jax.checkpointName', "'x'");

  // policies are checked when they are used
  const x = f32([0.5, 1]);
  const bad = jax.remat((x: Array) => jnp.sum(jnp.sin(x)), { policy: function maybe() { return 'maybe' as never; } });
  assertThrowsMentioning(t, () => jax.grad(bad as Fn)(x), 'jax.checkpoint', 'policy maybe', "'maybe'", 'for cos', "{ offload: [src, dst] }");
  const offloadAll = () => ({ offload: ['device', 'pinned_host'] as ['device', 'pinned_host'] });
  const mixed = jax.remat((x: Array) => jnp.sum(jnp.sin(x)), { policy: policies.saveFromBothPolicies(policies.dotsSaveable, offloadAll) });
  assertThrowsMentioning(t, () => jax.grad(mixed as Fn)(x), 'saveFromBothPolicies', 'boolean', 'offload');
  const badKind = jax.remat((x: Array) => jnp.sum(jnp.sin(x)), { policy: () => ({ offload: ['device', 'disk'] }) as never });
  assertThrowsMentioning(t, () => jax.grad(badKind as Fn)(x), 'jax.checkpoint', 'memory kinds among device, pinned_host');
});
