// The rest of jnp (issue 15 item 5): diff roll meshgrid logaddexp(2), the nan
// reductions, median quantile percentile average ptp, inner kron cross trace
// diag diagonal, iinfo/finfo and the Array methods, against JAX 0.10.2's own
// outputs (test/fixtures/gen_jnp_more.py): values, dtypes and gradients
// (JAX's conventions: median's stable-sort ties, max's split ties,
// logaddexp's custom_jvp at infinities). Then jit == eager in one program,
// vmap == a loop, check_grads to order 2 per family, and bad input. Runs on
// whichever platform the suite runs on (the CPU, or the emulated GPU).
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { checkGrads } from './helpers/check-grads.js';
import { assertArray, assertThrowsMentioning } from './helpers/oracle.js';
import { type EncodedNumber, decodeNumber, loadFixture, underOneJit } from './helpers/fixtures.js';

interface Spec { shape: number[]; dtype: DType; values: EncodedNumber[] }
type Arg = string | number | number[];
interface Case { fn: string; args: Arg[]; options: Record<string, unknown>; expected: Spec | Spec[] }
interface GradCase { fn: string; args: Arg[]; options: Record<string, unknown>; argnums: number[]; expected: Spec[] }
interface Fixture {
  inputs: Record<string, Spec>;
  cases: Case[];
  grads: GradCase[];
  info: { iinfo: Record<string, Record<string, unknown>>; finfo: Record<string, Record<string, EncodedNumber>> };
}
const fixture = loadFixture<Fixture>('jnp-more.json');

const make = (s: Spec): Array => lax.reshape(jnp.array(s.values.map((v) => (typeof v === 'boolean' ? Number(v) : decodeNumber(v))), { dtype: s.dtype }), s.shape);
const cache = new Map<string, Array>();
const input = (name: string): Array => {
  if (!cache.has(name)) cache.set(name, make(fixture.inputs[name]!));
  return cache.get(name)!;
};
const expected = (s: Spec) => ({ shape: s.shape, dtype: s.dtype, values: s.values.map((v) => (typeof v === 'boolean' ? Number(v) : decodeNumber(v))) });

type Value = Array | number | number[];
const resolve = (a: Arg): Value => (typeof a === 'string' ? input(a) : a);

/** Fixture options in jaxon's form: names of inputs become the Arrays. */
function options(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...o };
  for (const k of ['where', 'weights', 'prepend', 'append']) if (typeof out[k] === 'string') out[k] = input(out[k] as string);
  return out;
}

/** Calls a jnp function the way a jaxon user would, from a fixture case. */
function call(fn: string, args: Value[], o: Record<string, unknown>): Array | Array[] {
  const [a, b] = args as [Array, Array];
  switch (fn) {
    case 'roll': return jnp.roll(a, args[1] as number | number[], o.axis as number | number[] | undefined);
    case 'meshgrid': return jnp.meshgrid(...(args as Array[]), o);
    case 'diag': return jnp.diag(a, args[1] as number | undefined);
    case 'logaddexp': return jnp.logaddexp(a, b);
    case 'logaddexp2': return jnp.logaddexp2(a, b);
    case 'quantile': return jnp.quantile(a, b, o);
    case 'percentile': return jnp.percentile(a, b, o);
    case 'inner': return jnp.inner(a, b);
    case 'kron': return jnp.kron(a, b);
    case 'cross': return jnp.cross(a, b, o);
    case 'average': return jnp.average(a, o);
  }
  const f = (jnp as unknown as Record<string, (x: Array, o: object) => Array>)[fn];
  if (!f) throw new Error(`unknown fixture function ${fn}`);
  return f(a, o);
}

/**
 * The emulated GPU compiles every new kernel (seconds each on a loaded CI machine), so there the fixture sweeps run
 * a subset: each function's first case and every case with a 16-bit float input (the CUDA renderer's own paths),
 * and the gradient cases that exercise JAX's conventions (ties, infinities, the custom_jvp). The CPU runs them all.
 */
const onEmulatedGpu = process.env.JAXON_TEST_PLATFORM === 'cuda';
const HALF_INPUTS = new Set(['h', 'bh', 'hn']);
function casesToRun(cases: Case[]): Case[] {
  if (!onEmulatedGpu) return cases;
  const first = new Set<string>();
  return cases.filter((c) => {
    const keep = !first.has(c.fn) || c.args.some((a) => typeof a === 'string' && HALF_INPUTS.has(a));
    first.add(c.fn);
    return keep;
  });
}
const GPU_GRADS = new Set(['median', 'nanmax', 'nanstd', 'logaddexp', 'diagonal', 'cross', 'ptp']);
function gradsToRun(grads: GradCase[]): GradCase[] {
  if (!onEmulatedGpu) return grads;
  const seen = new Set<string>();
  return grads.filter((g) => {
    const keep = (GPU_GRADS.has(g.fn) && !seen.has(g.fn)) || (g.fn === 'median' && g.args[0] === 'tie') || (g.fn === 'nanmax' && g.args[0] === 'a');
    seen.add(g.fn);
    return keep;
  });
}

const label = (c: { fn: string; args: Arg[]; options: Record<string, unknown> }) => `${c.fn}(${c.args.map((a) => JSON.stringify(a)).join(', ')}, ${JSON.stringify(c.options)})`;

function check(t: import('ava').ExecutionContext, out: Array | Array[], want: Spec | Spec[], message: string, tol?: number): void {
  const outs = globalThis.Array.isArray(out) ? out : [out];
  const wants = globalThis.Array.isArray(want) ? want : [want];
  t.is(outs.length, wants.length, `${message}: number of outputs`);
  outs.forEach((o, i) => assertArray(t, o, expected(wants[i]!), { message: `${message} [${i}]`, tol }));
}

test('values, dtypes and shapes match JAX 0.10.2 (eager on the CPU, one jitted program on the emulated GPU)', (t) => {
  const cases = casesToRun(fixture.cases);
  const run = () => cases.map((c) => call(c.fn, c.args.map(resolve), options(c.options)));
  // the emulated GPU compiles each kernel: one fused program (the fixture inputs its arguments) needs far fewer
  // than an eager op per case
  const names = [...new Set(cases.flatMap((c) => [...c.args, ...Object.values(c.options)].filter((a): a is string => typeof a === 'string' && a in fixture.inputs)))];
  const outs = onEmulatedGpu ? underOneJit(cache, names, input, run) : run();
  cases.forEach((c, k) => {
    const tol = c.fn === 'logaddexp2' || c.fn === 'nanstd' || c.fn === 'nanvar' ? 4e-6 : undefined;
    check(t, outs[k]!, c.expected, label(c), tol);
  });
  t.is(new Set(cases.map((c) => c.fn)).size, 27);
});

/** d/dargs sum(f(args) * c), c[i] = (i % 7 + 1) / 4 over the flat output, as the generator computes it. */
function weightedSum(out: Array): Array {
  const n = out.size;
  const c = jnp.array(globalThis.Array.from({ length: n }, (_, i) => ((i % 7) + 1) / 4), { dtype: out.dtype });
  return jnp.sum(jnp.multiply(out, lax.reshape(c, [...out.shape])));
}

function gradOf(g: GradCase): (...xs: Array[]) => Array {
  return (...xs: Array[]) => {
    const args = g.args.map(resolve);
    g.argnums.forEach((k, i) => {
      args[k] = xs[i]!;
    });
    const out = call(g.fn, args, options(g.options));
    return weightedSum(globalThis.Array.isArray(out) ? out[0]! : out);
  };
}

test('gradients match JAX 0.10.2 (ties, NaNs, infinities, custom_jvp)', (t) => {
  const grads = gradsToRun(fixture.grads);
  t.true(grads.length >= (onEmulatedGpu ? 8 : 27));
  for (const g of grads) {
    const primals = g.argnums.map((k) => resolve(g.args[k]!) as Array);
    const grads = jax.grad(gradOf(g), { argnums: g.argnums.map((_, i) => i) })(...primals) as unknown as Array[];
    check(t, grads, g.expected, `grad ${label(g)}`, 2e-6);
  }
});

test('jit == eager: every family in one compiled program', (t) => {
  const f = (a: Array, n: Array, c: Array, p: Array, q3: Array, sx: Array, sy: Array, v3: Array, w3: Array) => [
    jnp.diff(a, { n: 2, axis: 0, prepend: 1.5 }), jnp.roll(c, [1, -3], [0, 2]), jnp.logaddexp(sx, sy),
    jnp.nanstd(n, { axis: 1, ddof: 1 }), jnp.median(c, { axis: [0, 2] }),
    jnp.quantile(a, q3, { axis: 1, method: 'nearest', keepdims: true }), jnp.kron(p, q3), jnp.cross(v3, w3),
    jnp.diagonal(c, { axis1: 2, axis2: 0, offset: 1 }),
  ];
  const args = ['a', 'n', 'c', 'p', 'q3', 'sx', 'sy', 'v3', 'w3'].map(input) as Parameters<typeof f>;
  const eager = f(...args);
  const jitted = jax.jit(f)(...args);
  t.is(jitted.length, eager.length);
  eager.forEach((e, k) => assertArray(t, jitted[k], e, { message: `output ${k}`, tol: 1e-6 }));
});

test('vmap == a loop over rows', (t) => {
  const c = input('c');
  const n = input('n');
  const f = (x: Array, m: Array) => [
    jnp.median(x, { axis: 1 }), jnp.quantile(x, jnp.array([0.2, 0.9]), { axis: 0 }), jnp.nanvar(m),
    jnp.diagonal(x, 1), jnp.logaddexp(m.index([0, 4]), x.index(0)),
    ...(onEmulatedGpu ? [] : [jnp.roll(x, 2, 1), jnp.trace(x)]),
  ];
  const batched = jax.vmap(f, { inAxes: [0, 0] })(c, lax.sliceInDim(n, 0, 2, 1, 0));
  for (let row = 0; row < 2; row++) {
    const loop = f(c.index(row), n.index(row));
    loop.forEach((e, k) => assertArray(t, batched[k]!.index(row), e, { message: `row ${row} output ${k}`, tol: 1e-6 }));
  }
});

// order 2 on the CPU; the emulated GPU checks first derivatives only (each order compiles its own kernels)
const ORDER = { order: onEmulatedGpu ? 1 : 2 };

test('check_grads (order 2 on the CPU): logaddexp, quantile/median, nan reductions, manipulation and products', (t) => {
  const x = jnp.array([[0.3, -1.2, 2.1, 0.7], [1.9, -0.4, 0.2, -2.5], [0.9, 1.4, -0.8, 3.3]]);
  const y = jnp.array([[1.1, 0.5, -0.3, 2.2], [-1.7, 0.8, 1.3, 0.1], [2.4, -0.6, 0.4, -1.5]]);
  checkGrads(t, (a: Array, b: Array) => [jnp.logaddexp(a, b), jnp.logaddexp2(a, b)], [x, y], ORDER);
  checkGrads(t, (a: Array) => jnp.quantile(a, jnp.array([0.3, 0.75]), { axis: 1 }), [x], ORDER);
  checkGrads(t, (a: Array) => jnp.median(a, { axis: 0 }), [x], ORDER);
  const withNaN = (a: Array) => jnp.where(jnp.array([[false, true, false, false], [false, false, false, true], [true, false, false, false]]), NaN, a);
  checkGrads(t, (a: Array) => [jnp.nanvar(withNaN(a), { axis: 1 }), jnp.nanmean(withNaN(a), { axis: 0 }), jnp.nanmax(withNaN(a), { axis: 1 })], [x], ORDER);
  checkGrads(t, (a: Array, b: Array) => [
    jnp.diff(a, { n: 2 }), jnp.roll(a, [1, 2], [0, 1]), jnp.trace(a, 1), jnp.diagonal(a, -1), jnp.diag(a.index(0), 1),
    // HIGHEST: a GPU's default float32 dot is TF32 (as in JAX), too coarse for second differences
    jnp.kron(a, b.index([0, 2], [1, 3])), jnp.cross(a.index(null, [0, 3]), b.index(null, [1, 4])), jnp.inner(a, b, { precision: lax.Precision.HIGHEST }),
    jnp.ptp(a, { axis: 1 }),
  ], [x, y], ORDER);
  // the weights' second derivative cancels terms of a float32 sum, which the emulated GPU accumulates in float32
  checkGrads(t, (a: Array, b: Array) => jnp.average(a, { axis: 1, weights: jnp.exp(b.index(0)) }), [x, y], { ...ORDER, rtol: 1e-2, atol: 1e-2 });
});

test('iinfo and finfo: NumPy / ml_dtypes values exactly, for every jaxon dtype', (t) => {
  for (const [d, info] of Object.entries(fixture.info.iinfo)) t.deepEqual({ ...jnp.iinfo(d as DType) }, info, `iinfo(${d})`);
  for (const [d, info] of Object.entries(fixture.info.finfo)) {
    const got = jnp.finfo(d as DType) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(info)) t.is(got[k], typeof v === 'string' && k !== 'dtype' ? decodeNumber(v) : v, `finfo(${d}).${k}`);
    t.deepEqual(Object.keys(got).sort(), Object.keys(info).sort(), `finfo(${d}) fields`);
  }
  t.is(jnp.finfo(jnp.zeros([2], { dtype: 'float16' })).eps, 2 ** -10);
  t.is(jnp.iinfo(jnp.arange(3)).max, 2147483647);
  assertThrowsMentioning(t, () => jnp.iinfo('bool'), 'jnp.iinfo', 'bool');
  assertThrowsMentioning(t, () => jnp.finfo('int32'), 'jnp.finfo', 'int32');
});

test('Array methods: reductions, sort/argsort, diagonal, ptp, nonzero, searchsorted, mT', (t) => {
  const a = input('a');
  const c = input('c');
  assertArray(t, a.ptp(0), jnp.ptp(a, { axis: 0 }));
  assertArray(t, a.ptp({ axis: 1, keepdims: true }), jnp.ptp(a, { axis: 1, keepdims: true }));
  assertArray(t, a.sort(), jnp.sort(a));
  assertArray(t, a.sort(0), jnp.sort(a, { axis: 0 }));
  assertArray(t, a.argsort(null), jnp.argsort(a, { axis: null }));
  assertArray(t, c.diagonal(0, 2, 0), jnp.diagonal(c, { axis1: 2, axis2: 0 }));
  // x.trace() is left out: a Tracer's `trace` field (its Trace) takes the name
  t.is(typeof (a as unknown as { trace?: unknown }).trace, 'undefined');
  assertArray(t, a.mT, jnp.swapaxes(a, -1, -2));
  assertArray(t, c.mT, jnp.swapaxes(c, -1, -2));
  assertArray(t, jnp.sort(input('p')).searchsorted(jnp.array([0, 3])), { shape: [2], dtype: 'int32', values: [2, 4] });
  const [rows, cols] = input('b').nonzero();
  assertArray(t, rows!, { shape: [5], dtype: 'int32', values: [0, 0, 0, 1, 1] });
  assertArray(t, cols!, { shape: [5], dtype: 'int32', values: [0, 3, 4, 2, 3] });
  // the reductions JAX has as methods
  assertArray(t, a.std(0), jnp.std(a, { axis: 0 }));
  assertArray(t, a.var({ ddof: 1 }), jnp.var(a, { ddof: 1 }));
  assertArray(t, a.any(1), jnp.any(a, { axis: 1 }));
  assertArray(t, a.all(), jnp.all(a));
  assertArray(t, a.prod(-1), jnp.prod(a, { axis: -1 }));
  assertArray(t, a.argmin(1), jnp.argmin(a, { axis: 1 }));
  assertArray(t, a.cumsum(0), jnp.cumsum(a, { axis: 0 }));
  t.throws(() => lax.reshape(a, [12]).mT, { message: /mT.*2/ });
});

test('bad input names the function, the argument and the value', (t) => {
  const a = input('a');
  assertThrowsMentioning(t, () => jnp.diff(a, -1), 'jnp.diff', 'non-negative', '-1');
  assertThrowsMentioning(t, () => jnp.diff(jnp.array(1)), 'jnp.diff', 'one dimensional');
  assertThrowsMentioning(t, () => jnp.diff(a, { axis: 2 }), 'jnp.diff', 'axis 2');
  assertThrowsMentioning(t, () => jnp.roll(a, 1, 3), 'jnp.roll', 'axis 3');
  assertThrowsMentioning(t, () => jnp.roll(a, [1, 2, 3], [0, 1]), 'jnp.roll', 'shift');
  assertThrowsMentioning(t, () => jnp.meshgrid(a, a), 'jnp.meshgrid', '1D');
  assertThrowsMentioning(t, () => jnp.meshgrid(input('p'), { indexing: 'xz' as 'xy' }), 'jnp.meshgrid', 'xz');
  assertThrowsMentioning(t, () => jnp.quantile(a, 0.5, { method: 'cubic' as 'linear' }), 'jnp.quantile', 'cubic');
  assertThrowsMentioning(t, () => jnp.quantile(a, jnp.array([[0.5]])), 'jnp.quantile', 'rank', '[1,1]');
  assertThrowsMentioning(t, () => jnp.quantile(a, 0.5, { axis: 2 }), 'jnp.quantile', 'axis 2');
  assertThrowsMentioning(t, () => jnp.median(a, { axis: [0, 0] }), 'jnp.median', 'repeated');
  assertThrowsMentioning(t, () => jnp.nanmax(a, { axis: -3 }), 'jnp.nanmax', 'axis -3');
  assertThrowsMentioning(t, () => jnp.nanmean(a, { axis: 2 }), 'jnp.nanmean', 'axis 2');
  assertThrowsMentioning(t, () => jnp.nanstd(input('i'), { axis: [1, 1] }), 'jnp.nanstd', 'repeated');
  assertThrowsMentioning(t, () => jnp.nanargmin(a, { axis: 5 }), 'jnp.nanargmin', 'axis 5');
  assertThrowsMentioning(t, () => jnp.nanvar(a, { bogus: 1 } as object), 'jnp.nanvar', 'bogus');
  assertThrowsMentioning(t, () => jnp.average(a, { weights: input('w4') }), 'jnp.average', 'Axis must be specified');
  assertThrowsMentioning(t, () => jnp.average(a, { axis: 0, weights: input('w4') }), 'jnp.average', 'weights', '[4]');
  assertThrowsMentioning(t, () => jnp.ptp(input('b')), 'jnp.ptp', 'bool');
  assertThrowsMentioning(t, () => jnp.kron(input('b'), input('b')), 'jnp.kron', 'bool');
  assertThrowsMentioning(t, () => jnp.cross(a, a), 'jnp.cross', '2 or 3', '4');
  assertThrowsMentioning(t, () => jnp.trace(a, { axis1: 1, axis2: -1 }), 'jnp.trace', 'axis1 and axis2');
  assertThrowsMentioning(t, () => jnp.trace(input('p')), 'jnp.trace', 'two dimensions');
  assertThrowsMentioning(t, () => jnp.diagonal(a, 0.5), 'jnp.diagonal', 'offset', '0.5');
  assertThrowsMentioning(t, () => jnp.diag(c3()), 'jnp.diag', '1d or 2d');
  assertThrowsMentioning(t, () => jnp.logaddexp(a, input('p')), 'jnp.logaddexp');
});

const c3 = () => input('c');
