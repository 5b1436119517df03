// lax.reduceWindow, lax.cummax / cummin / cumprod / cumlogsumexp and
// lax.associativeScan against JAX fixtures (test/fixtures/gen_windows.py):
// values, jvps and vjps, where max/min windows and cummax hold ties (JAX sends
// a window's tangent to one element, never split); eager against jit; vmap
// against a loop; check_grads to order 2; bad input. Each group of fixture
// cases runs as one jitted program, to keep compiles (and CI time) few. Runs
// on whichever platform the suite runs on (the CPU, or the emulated GPU with
// JAXON_TEST_PLATFORM=cuda).
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { checkGrads } from './helpers/check-grads.js';
import { type EncodedNumber, decodeNumber, loadFixture } from './helpers/fixtures.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

interface Spec { shape: number[]; dtype: DType; values: EncodedNumber[] }
type Padding = 'SAME' | 'VALID' | [number, number][];
interface WindowCase { kind: 'reduce_window'; name: string; op: 'add' | 'max' | 'min'; init: number | null; x: Spec; window: number[]; strides: number[]; padding: Padding; base: number[] | null; wdil: number[] | null; y: Spec; t?: Spec; jvp?: Spec; ct?: Spec; vjp?: Spec }
interface AvgCase { kind: 'avg_pool'; name: string; x: Spec; y: Spec; ct: Spec; vjp: Spec }
interface CumCase { kind: 'cumulative'; name: string; fn: 'cummax' | 'cummin' | 'cumsum' | 'cumprod' | 'cumlogsumexp'; axis: number; reverse: boolean; x: Spec; y: Spec; t: Spec; jvp: Spec; ct: Spec; vjp: Spec }
interface AssocAdd { kind: 'assoc_add'; name: string; x: Spec; y: Spec }
interface AssocLinear { kind: 'assoc_linear'; name: string; axis: number; reverse: boolean; a: Spec; b: Spec; ya: Spec; yb: Spec; ct: Spec; ga: Spec; gb: Spec }
interface VariadicCase {
  kind: 'variadic_window'; name: string; fn: 'sum_and_max' | 'value_index_max'; init: [EncodedNumber, number]; window: number[]; strides: number[];
  padding: [number, number][]; base: number[] | null; wdil: number[] | null; x: Spec; k: Spec; ya: Spec; yb: Spec; t: Spec; t2: Spec; jvpa: Spec; jvpb: Spec;
}
type Case = WindowCase | AvgCase | CumCase | AssocAdd | AssocLinear | VariadicCase;
const fixture = loadFixture<{ cases: Case[] }>('windows.json');
const casesOf = <K extends Case['kind']>(kind: K) => fixture.cases.filter((c): c is Extract<Case, { kind: K }> => c.kind === kind);

// every kernel is a compile on the emulated GPU: there, eager checks (one compile per primitive and shape) are few
const onGpu = jax.defaultBackend() !== 'cpu';
const make = (s: Spec): Array => lax.reshape(jnp.array(s.values.map(decodeNumber), { dtype: s.dtype }), s.shape);
type Fn = (...args: never[]) => unknown;

/** Shape, dtype and values within rtol/atol (0 for exact); infinities and NaNs must match. */
function check(t: ExecutionContext, actual: Array, expected: Spec, message: string, tol = 1e-5): void {
  t.deepEqual([...actual.shape], expected.shape, `${message}: shape`);
  t.is(actual.dtype, expected.dtype, `${message}: dtype`);
  const got = globalThis.Array.from(actual.dataSync(), Number);
  const want = expected.values.map(decodeNumber);
  const bad = got.findIndex((g, i) => {
    const w = want[i]!;
    if (!Number.isFinite(w) || !Number.isFinite(g)) return !Object.is(g, w) && !(Number.isNaN(g) && Number.isNaN(w));
    return Math.abs(g - w) > tol * (1 + Math.abs(w));
  });
  if (got.length !== want.length || bad >= 0) t.fail(`${message}: at flat index ${bad} got ${got[bad]}, expected ${want[bad]}\n got ${got.join(',')}\nwant ${want.join(',')}`);
  else t.pass();
}

const windowFn = (c: WindowCase) => (x: Array) => {
  const init = c.init !== null ? c.init : c.op === 'add' ? 0 : c.x.dtype === 'int32' ? (c.op === 'max' ? -(2 ** 31) : 2 ** 31 - 1) : c.op === 'max' ? -Infinity : Infinity;
  return lax.reduceWindow(x, init, lax[c.op], c.window, c.strides, c.padding, c.base, c.wdil);
};

const windowCases = casesOf('reduce_window');

test('reduceWindow: values against JAX, eager and under jit', (t) => {
  const xs = windowCases.map((c) => make(c.x));
  // eager runs every primitive as its own kernel (a compile each on the emulated GPU): a few cases suffice
  windowCases.forEach((c, i) => {
    if (i === 0 || (!onGpu && i % 3 === 0)) check(t, windowFn(c)(xs[i]!), c.y, `${c.name} eager`, c.x.dtype === 'int32' ? 0 : 1e-6);
  });
  const all = jax.jit((...args: Array[]) => windowCases.map((c, i) => windowFn(c)(args[i]!)))(...xs) as Array[];
  windowCases.forEach((c, i) => check(t, all[i]!, c.y, `${c.name} jit`, c.x.dtype === 'int32' ? 0 : 1e-6));
});

test('reduceWindow: jvp and vjp against JAX (max/min ties: the whole tangent to one element of each window)', (t) => {
  // a window's vjp is one pad per window element (distinct kernels): on the emulated GPU, the max and min tie cases
  const cs = windowCases.filter((c, i) => c.t && (!onGpu || [0, 2, 8].includes(i)));
  const args = cs.flatMap((c) => [make(c.x), make(c.t!), make(c.ct!)]);
  const out = jax.jit((...a: Array[]) =>
    cs.map((c, i) => {
      const [x, tx, ct] = [a[3 * i]!, a[3 * i + 1]!, a[3 * i + 2]!];
      const f = windowFn(c);
      const [, tangent] = jax.jvp(f as Fn, [x], [tx]) as [Array, Array];
      const cotangent = jax.grad((v: Array) => jnp.sum(jnp.multiply(f(v), ct)))(x) as Array;
      return [tangent, cotangent];
    }),
  )(...args) as Array[][];
  cs.forEach((c, i) => {
    check(t, out[i]![0]!, c.jvp!, `${c.name} jvp`);
    if (c.vjp) check(t, out[i]![1]!, c.vjp, `${c.name} vjp`);
  });
});

test('reduceWindow: average pooling as JAX users write it, and its gradient', (t) => {
  const [c] = casesOf('avg_pool');
  const avg = (v: Array) => jnp.divide(lax.reduceWindow(v, 0, lax.add, [1, 2, 2, 1], [1, 2, 2, 1], 'VALID'), 4);
  const [y, g] = jax.jit((x: Array, ct: Array) => [avg(x), jax.grad((v: Array) => jnp.sum(jnp.multiply(avg(v), ct)))(x)])(make(c!.x), make(c!.ct)) as Array[];
  check(t, y!, c!.y, 'avg pool');
  check(t, g!, c!.vjp, 'avg pool vjp');
});

test('reduceWindow: string computations, strides default, generic computations (init not the identity, padding skipped)', (t) => {
  const [byName, prod, plusOne, dilated] = jax.jit((x: Array, v: Array) => [
    lax.reduceWindow(x, -Infinity, 'max', [2, 2], null, 'VALID'),
    // a function JAX does not recognize folds as XLA's generic ReduceWindow: init once per window, padding skipped
    lax.reduceWindow(x, 1, (a: Array, b: Array) => lax.mul(a, b), [1, 2], [1, 2], 'VALID'),
    lax.reduceWindow(v, 1, lax.add, [2], [1], [[1, 0]]),
    lax.reduceWindow(v, 0, lax.add, [2], [1], 'VALID', { windowDilation: [2] }),
  ])(jnp.array([[1, 5, 2, 7], [3, 0, 4, 4]]), jnp.array([1, 2, 3])) as Array[];
  t.deepEqual(byName!.tolistSync(), [[5, 5, 7]]);
  t.deepEqual(prod!.tolistSync(), [[5, 14], [0, 16]]);
  t.deepEqual(plusOne!.tolistSync(), [2, 4, 6]); // JAX: [2. 4. 6.]
  t.deepEqual(dilated!.tolistSync(), [4]);
  t.deepEqual(lax.padtypeToPads([5, 4], [3, 2], [2, 1], 'SAME_LOWER'), [[1, 1], [1, 0]]);
});

test('reduceWindow: vmap equals a loop', (t) => {
  const x = jnp.array([[[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], [[9, 7, 9, 3], [2, 3, 8, 4], [6, 2, 6, 4]]]);
  const pool = (v: Array) => lax.reduceWindow(v, -Infinity, lax.max, [2, 2], [1, 2], 'SAME');
  const sumPool = (v: Array) => lax.reduceWindow(v, 0, lax.add, [2], [1], [[1, 1]]);
  // under jit, so the emulated GPU compiles two programs rather than every primitive
  const [batched, byColumn] = jax.jit((v: Array) => [jax.vmap(pool)(v), jax.vmap(sumPool, { inAxes: 1, outAxes: 1 })(v.index(0))])(x) as Array[];
  const [loop, columnLoop] = jax.jit((v: Array) => [
    jnp.stack([pool(v.index(0)), pool(v.index(1))]),
    lax.transpose(jnp.stack([0, 1, 2, 3].map((j) => sumPool(v.index(0, null, j)))), [1, 0]),
  ])(x) as Array[];
  t.deepEqual(batched!.tolistSync(), loop!.tolistSync());
  t.deepEqual(byColumn!.tolistSync(), columnLoop!.tolistSync());
});

test('reduceWindow: check_grads to order 2 (sum with dilations and pads; max away from ties)', (t) => {
  const x = jnp.array([[0.3, -1.2, 0.7, 2.1], [1.4, -0.5, 0.1, -2.2], [0.9, 1.8, -0.8, 0.4]]);
  // jitted, so each derivative is one compiled program rather than one kernel per primitive; the CPU run checks the
  // numerics of the composition, which is the same jaxpr on the emulated GPU (where its many pads cost compiles)
  if (onGpu) return t.pass();
  checkGrads(t, jax.jit((v: Array) => lax.reduceWindow(v, 0, lax.add, [2, 2], [1, 2], [[1, 0], [0, 1]], [1, 2], [2, 1])) as Fn, [x], { order: 2 });
  checkGrads(t, jax.jit((v: Array) => lax.reduceWindow(v, -Infinity, lax.max, [2, 2], [1, 1], 'SAME')) as Fn, [x], { order: 2 });
});

const VARIADIC_COMPUTATIONS = {
  sum_and_max: ([a0, a1]: Array[], [b0, b1]: Array[]) => [lax.add(a0!, b0!), lax.max(a1!, b1!)],
  value_index_max: ([a0, a1]: Array[], [b0, b1]: Array[]) => {
    const take = lax.gt(b0!, a0!);
    return [lax.select(take, b0!, a0!), lax.select(take, b1!, a1!)];
  },
};

test('reduceWindow with several operands (JAX\'s tuple form): values and jvps against JAX, under jit', (t) => {
  const all = casesOf('variadic_window');
  t.is(all.length, 3);
  // the emulated GPU compiles each window position's slices: there the last case (padding, an argmax-style pair)
  const cases = onGpu ? all.slice(2) : all;
  const run = (c: VariadicCase, x: Array, k: Array, init1: number) =>
    lax.reduceWindow([x, k], [decodeNumber(c.init[0]), init1], VARIADIC_COMPUTATIONS[c.fn], c.window, c.strides, c.padding, c.base, c.wdil);
  const args = cases.flatMap((c) => [make(c.x), make(c.k), make(c.t), make(c.t2)]);
  const outs = jax.jit((...a: Array[]) =>
    cases.flatMap((c, i) => {
      const [x, k, tx, tk] = a.slice(4 * i, 4 * i + 4) as [Array, Array, Array, Array];
      const [ya, yb] = run(c, x, k, c.init[1]);
      const kf = lax.convertElementType(k, 'float32');
      const [, tangents] = jax.jvp((u: Array, v: Array) => run(c, u, v, c.init[1]), [x, kf], [tx, tk]) as [Array[], Array[]];
      return [ya!, yb!, tangents[0]!, tangents[1]!];
    }))(...args) as Array[];
  cases.forEach((c, i) => {
    check(t, outs[4 * i]!, c.ya, `${c.name}: first output`);
    check(t, outs[4 * i + 1]!, c.yb, `${c.name}: second output`, 0);
    check(t, outs[4 * i + 2]!, c.jvpa, `${c.name}: jvp of the first output`);
    check(t, outs[4 * i + 3]!, c.jvpb, `${c.name}: jvp of the second output`);
  });
  if (onGpu) return;
  // eager == jit, vmap == a loop
  const c = all[0]!;
  const [x, k] = [make(c.x), make(c.k)];
  const eager = run(c, x, k, c.init[1]);
  check(t, eager[0]!, c.ya, `${c.name}: eager`);
  check(t, eager[1]!, c.yb, `${c.name}: eager`, 0);
  const batched = jax.vmap((u: Array, v: Array) => lax.reduceWindow([u, v], [0, -100], VARIADIC_COMPUTATIONS.sum_and_max, [2], [1], [[1, 0]]))(x, k) as Array[];
  for (let r = 0; r < 5; r++) {
    const row = lax.reduceWindow([x.index(r), k.index(r)], [0, -100], VARIADIC_COMPUTATIONS.sum_and_max, [2], [1], [[1, 0]]);
    t.deepEqual([...batched[0]!.index(r).dataSync()], [...row[0]!.dataSync()], `vmap row ${r}`);
    t.deepEqual([...batched[1]!.index(r).dataSync()], [...row[1]!.dataSync()], `vmap row ${r}`);
  }
  checkGrads(t, ((u: Array, v: Array) => lax.reduceWindow([u, v], [0, 0], ([a0, a1]: Array[], [b0, b1]: Array[]) => [lax.add(lax.mul(a0!, b1!), b0!), lax.add(a1!, b1!)], [2, 2], [1, 1], 'SAME')) as Fn, [x, lax.convertElementType(k, 'float32')], { order: 2 });
});

test('reduceWindow with several operands: bad input names the function, the argument and the values', (t) => {
  const x = jnp.ones([3, 4]);
  const k = jnp.ones([3, 4], { dtype: 'int32' });
  const f = VARIADIC_COMPUTATIONS.sum_and_max;
  assertThrowsMentioning(t, () => lax.reduceWindow([x, jnp.ones([4, 3])], [0, 0], f, [2, 2]), 'lax.reduceWindow', 'one shape', '[3,4]', '[4,3]');
  assertThrowsMentioning(t, () => lax.reduceWindow([x, k], [0], f, [2, 2]), 'lax.reduceWindow', 'initValue', 'one scalar per operand (2)');
  assertThrowsMentioning(t, () => lax.reduceWindow([x, k], [0, jnp.zeros([])], f, [2, 2]), 'initValue[1]', 'float32', 'int32');
  assertThrowsMentioning(t, () => lax.reduceWindow([x, k], [0, 0], 'add' as never, [2, 2]), 'lax.reduceWindow', 'computation', 'function');
  assertThrowsMentioning(t, () => lax.reduceWindow([x, k], [0, 0], ([a]: Array[]) => [a!], [2, 2]), 'lax.reduceWindow', 'must return 2 arrays', 'float32, int32');
});

test('reduceWindow: bad input names the function, the argument and the values', (t) => {
  const x = jnp.ones([3, 4]);
  assertThrowsMentioning(t, () => lax.reduceWindow(x, 0, lax.add, [2], [1, 1], 'VALID'), 'lax.reduceWindow', 'windowDimensions', '[2]');
  assertThrowsMentioning(t, () => lax.reduceWindow(x, 0, lax.add, [2, 2], [1, 0], 'VALID'), 'lax.reduceWindow', 'windowStrides');
  assertThrowsMentioning(t, () => lax.reduceWindow(x, 0, lax.add, [2, 2], [1, 1], 'FULL' as never), "'FULL'");
  assertThrowsMentioning(t, () => lax.reduceWindow(x, 0, lax.add, [2, 2], [1, 1], [[1, 1]]), 'lax.reduceWindow', 'padding');
  assertThrowsMentioning(t, () => lax.reduceWindow(x, 0, 'mul' as never, [2, 2], [1, 1], 'VALID'), 'lax.reduceWindow', 'computation');
  assertThrowsMentioning(t, () => lax.reduceWindow(x, jnp.zeros([2]), lax.add, [2, 2], [1, 1], 'VALID'), 'initValue', 'scalar');
});

test('cummax / cummin / cumprod / cumlogsumexp: values, jvp and vjp against JAX (ties, -inf, reverse)', (t) => {
  // on the emulated GPU: cummax with ties, cumlogsumexp with -inf
  const cs = casesOf('cumulative').filter((c, i) => !onGpu || i === 0 || c.name.includes('-inf'));
  const f = (c: CumCase) => (v: Array) => lax[c.fn](v, { axis: c.axis, reverse: c.reverse });
  const args = cs.flatMap((c) => [make(c.x), make(c.t), make(c.ct)]);
  const out = jax.jit((...a: Array[]) =>
    cs.map((c, i) => {
      const [x, tx, ct] = [a[3 * i]!, a[3 * i + 1]!, a[3 * i + 2]!];
      const [y, tangent] = jax.jvp(f(c) as Fn, [x], [tx]) as [Array, Array];
      return [y, tangent, jax.grad((v: Array) => jnp.sum(jnp.multiply(f(c)(v), ct)))(x) as Array];
    }),
  )(...args) as Array[][];
  cs.forEach((c, i) => {
    if (i === 0 || (!onGpu && i === 3)) check(t, f(c)(args[3 * i]!), c.y, `${c.name} eager`, 1e-6);
    check(t, out[i]![0]!, c.y, `${c.name} jit`, 1e-6);
    check(t, out[i]![1]!, c.jvp, `${c.name} jvp`);
    check(t, out[i]![2]!, c.vjp, `${c.name} vjp`);
  });
});

test('cumlogsumexp: vmap equals a loop, check_grads to order 2, bad input', (t) => {
  const x = jnp.array([[0.5, -1.0, 2.0, 0.1, -0.3], [1.5, 1.5, -2.0, 0.0, 3.0]]);
  const f = (v: Array) => lax.cumlogsumexp(v, { reverse: true });
  const [batched, loop] = jax.jit((v: Array) => [jax.vmap(f)(v), jnp.stack([f(v.index(0)), f(v.index(1))])])(x) as Array[];
  t.deepEqual(batched!.tolistSync(), loop!.tolistSync());
  if (!onGpu) checkGrads(t, jax.jit((v: Array) => lax.cumlogsumexp(v, { axis: 1 })) as Fn, [x], { order: 2 });
  assertThrowsMentioning(t, () => lax.cumlogsumexp(jnp.arange(3)), 'lax.cumlogsumexp', 'int32');
});

test('associativeScan: values against JAX (odd/even recursion), pytrees, axis and reverse, gradients', (t) => {
  const adds = casesOf('assoc_add');
  const added = jax.jit((...xs: Array[]) => xs.map((x) => lax.associativeScan(lax.add, x)))(...adds.map((c) => make(c.x))) as Array[];
  adds.forEach((c, i) => check(t, added[i]!, c.y, c.name, 1e-6));
  check(t, lax.associativeScan(lax.add, make(adds[0]!.x)), adds[0]!.y, `${adds[0]!.name} eager`, 1e-6);
  const linear = ([a1, b1]: Array[], [a2, b2]: Array[]): Array[] => [lax.mul(a1!, a2!), lax.add(lax.mul(a2!, b1!), b2!)];
  const cs = casesOf('assoc_linear').filter((_, i) => !onGpu || i === 1);
  const args = cs.flatMap((c) => [make(c.a), make(c.b), make(c.ct)]);
  const out = jax.jit((...a: Array[]) =>
    cs.map((c, i) => {
      const scan = (x: Array, y: Array) => lax.associativeScan(linear, [x, y], { axis: c.axis, reverse: c.reverse });
      const [ga, gb] = jax.grad((x: Array, y: Array) => jnp.sum(jnp.multiply(scan(x, y)[1]!, a[3 * i + 2]!)), { argnums: [0, 1] })(a[3 * i]!, a[3 * i + 1]!) as Array[];
      return [...scan(a[3 * i]!, a[3 * i + 1]!), ga!, gb!];
    }),
  )(...args) as Array[][];
  cs.forEach((c, i) => {
    check(t, out[i]![0]!, c.ya, `${c.name} a`, 1e-6);
    check(t, out[i]![1]!, c.yb, `${c.name} b`, 1e-6);
    check(t, out[i]![2]!, c.ga, `${c.name} grad a`);
    check(t, out[i]![3]!, c.gb, `${c.name} grad b`);
  });
  // a dict pytree, eager, against the jitted list form
  const first = casesOf('assoc_linear')[0]!; // axis 1, forward
  const [a, b] = [make(first.a), make(first.b)];
  const dict = jax.jit((a: Array, b: Array) => lax.associativeScan((p: { a: Array; b: Array }, q: { a: Array; b: Array }) => ({ a: lax.mul(p.a, q.a), b: lax.add(lax.mul(q.a, p.b), q.b) }), { a, b }, { axis: 1 }))(a, b) as { a: Array; b: Array };
  check(t, dict.b, first.yb, 'dict pytree', 1e-6);
  // bools interleave with or
  const anyScan = jax.jit((v: Array) => lax.associativeScan(lax.bitwiseOr, v))(jnp.array([false, false, true, false, false])) as Array;
  t.deepEqual(anyScan.tolistSync(), [false, false, true, true, true]);
  assertThrowsMentioning(t, () => lax.associativeScan((p: Array[], q: Array[]) => [lax.add(p[0]!, q[0]!), lax.add(p[1]!, q[1]!)], [jnp.ones([3]), jnp.ones([4])]), 'lax.associativeScan', '[3]', '[4]');
});

test('associativeScan: vmap equals a loop', (t) => {
  const x = jnp.array([[1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1]]);
  const f = (v: Array) => lax.associativeScan(lax.max, v, { reverse: true });
  const [batched, loop] = jax.jit((v: Array) => [jax.vmap(f)(v), jnp.stack([f(v.index(0)), f(v.index(1))])])(x) as Array[];
  t.deepEqual(batched!.tolistSync(), loop!.tolistSync());
});

/** A scan in float64 (floats) or wrapping int32, as one JS loop: the oracle for long lines. */
function scanLine(values: ArrayLike<number>, shape: number[], axis: number, reverse: boolean, op: 'sum' | 'max', int: boolean): number[] {
  const pre = shape.slice(0, axis).reduce((p, s) => p * s, 1);
  const n = shape[axis]!;
  const post = shape.slice(axis + 1).reduce((p, s) => p * s, 1);
  const out = new globalThis.Array<number>(values.length);
  for (let a = 0; a < pre; a++) {
    for (let c = 0; c < post; c++) {
      let acc = op === 'sum' ? 0 : -Infinity;
      for (let step = 0; step < n; step++) {
        const idx = (a * n + (reverse ? n - 1 - step : step)) * post + c;
        acc = op === 'max' ? Math.max(acc, values[idx]!) : int ? (acc + values[idx]!) | 0 : acc + values[idx]!;
        out[idx] = int ? acc : Math.fround(acc);
      }
    }
  }
  return out;
}

test('cumsum / cummax on long lines: chunked reduce-then-scan kernels, against a JS scan (integers exactly)', (t) => {
  const n = 2 ** 16 + 3;
  const floats = jnp.array(globalThis.Array.from({ length: n }, (_, i) => Math.sin(i * 0.37) * 3));
  const ints = jnp.array(globalThis.Array.from({ length: n }, (_, i) => ((i * 2654435761) % 2 ** 21) - 2 ** 20), { dtype: 'int32' });
  const columns = jnp.array(globalThis.Array.from({ length: 3 * 5000 * 2 }, (_, i) => Math.cos(i * 0.11)));
  const f = (x: Array, k: Array, m: Array) => [lax.cumsum(x), lax.cumsum(k, { reverse: true }), lax.cummax(lax.reshape(m, [3, 5000, 2]), { axis: 1, reverse: true })];
  const jitted = jax.jit(f);
  const names = jitted.lower(floats, ints, columns).compile().kernels().map((k) => k.name).join(' ');
  t.true(names.includes('chunk_reduce') && names.includes('carry_scan') && names.includes('chunk_scan'), `long lines use the chunked kernels: ${names}`);
  const [s, k, m] = jitted(floats, ints, columns) as Array[];
  const close = (got: ArrayLike<number>, want: number[], tol: number, message: string) => {
    const bad = want.findIndex((w, i) => Math.abs(got[i]! - w) > tol * (1 + Math.abs(w)));
    t.true(bad < 0 && got.length === want.length, `${message}: at ${bad} got ${got[bad]}, expected ${want[bad]}`);
  };
  close(s!.dataSync() as Float32Array, scanLine(floats.dataSync() as Float32Array, [n], 0, false, 'sum', false), 1e-6, 'cumsum float32');
  close(k!.dataSync() as Int32Array, scanLine(ints.dataSync() as Int32Array, [n], 0, true, 'sum', true), 0, 'cumsum int32 (wrapping), reverse');
  close(m!.dataSync() as Float32Array, scanLine(columns.dataSync() as Float32Array, [3, 5000, 2], 1, true, 'max', false), 0, 'cummax middle axis, reverse');
  if (jax.defaultBackend() !== 'cpu') {
    const cpu = jax.devices('cpu')[0]!;
    const onCpu = f(...([floats, ints, columns].map((x) => jax.devicePut(x, cpu)) as [Array, Array, Array]));
    close(s!.dataSync() as Float32Array, globalThis.Array.from(onCpu[0]!.dataSync() as Float32Array), 1e-6, 'cumsum float32 vs the CPU backend');
    close(k!.dataSync() as Int32Array, globalThis.Array.from(onCpu[1]!.dataSync() as Int32Array), 0, 'cumsum int32 vs the CPU backend');
  }
});
