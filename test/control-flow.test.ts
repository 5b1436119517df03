// Control flow: lax.scan (against JS loops: sums, products, pytrees,
// reverse, length without xs, unroll), foriLoop, whileLoop, cond and switch;
// the jaxprs they make (scan / while / cond with nested jaxprs); JAX's error
// messages; autodiff (grad through scan equals grad of the unrolled loop,
// including the 10-layer network of JAX's scan tutorial; jvp through while;
// reverse mode through while raises JAX's error; check_grads at order 2);
// vmap (batched carries, a batched cond predicate, a batched while
// predicate); jit; the reference interpreter; and memory.
import test, { type ExecutionContext } from 'ava';
import type { Array } from '../lib/core/array.js';
import * as jax from '../lib/index.js';
import { ClosedJaxpr } from '../lib/trace/jaxpr.js';
import { checkGrads } from './helpers/check-grads.js';
import { withX64 } from './helpers/x64.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference, randomValues } from './helpers/oracle.js';

// Float32 dots at float32 precision, to compare with the float64 reference at float32 tolerances: a GPU's default rounds their operands to tf32, as
// JAX's does (jax.config's jax_default_matmul_precision, as JAX's own tests set it).
jax.config.update('jaxDefaultMatmulPrecision', 'float32');

const { numpy: jnp, lax } = jax;
type Fn = (...args: never[]) => unknown;

const f32 = (data: number[], shape?: number[]): Array => {
  const a = jnp.array(data, { dtype: 'float32' });
  return shape ? a.reshape(shape) : a;
};
const f64 = (data: number[], shape?: number[]): Array => {
  const a = jnp.array(data, { dtype: 'float64' });
  return shape ? a.reshape(shape) : a;
};
const rand = (shape: number[], seed: number, lo = -1, hi = 1, dtype: 'float32' | 'float64' = 'float32'): Array =>
  jnp.array(randomValues(shape.reduce((a, b) => a * b, 1), seed, lo, hi), { dtype }).reshape(shape);
const vals = (x: unknown): number[] => globalThis.Array.from((x as Array).dataSync() as ArrayLike<number>, Number);
const close = (t: ExecutionContext, actual: unknown, expected: Array | number[], tol = 1e-5, message = '') => {
  const got = vals(actual);
  const want = globalThis.Array.isArray(expected) ? expected : vals(expected);
  t.is(got.length, want.length, `${message} length`);
  const bad = got.findIndex((g, i) => !(Math.abs(g - want[i]!) <= tol * (1 + Math.abs(want[i]!))));
  t.is(bad, -1, `${message} differs at ${bad}: ${got[bad]} vs ${want[bad]}`);
};
const eqnsOf = (closed: ClosedJaxpr): string[] => closed.jaxpr.eqns.map((e) => e.primitive);

// ---- scan against JS loops ----

test('scan: cumulative sum (carry and ys) equals a JS loop', (t) => {
  const data = [3, -1, 4, 1, -5, 9];
  const [total, partial] = lax.scan((c: Array, x: Array) => {
    const next = jnp.add(c, x);
    return [next, next];
  }, jnp.zeros([]), f32(data));
  let acc = 0;
  const expected = data.map((x) => (acc += x));
  close(t, total, [acc]);
  close(t, partial, expected);
  t.deepEqual([...(partial as Array).shape], [6]);
});

test('scan: cumulative products of matrices, with the ys stacked along a new leading axis', (t) => {
  const ms = rand([5, 2, 2], 3);
  const [prod, history] = lax.scan((c: Array, m: Array) => {
    const next = jnp.matmul(c, m);
    return [next, next];
  }, jnp.eye(2, 2), ms) as [Array, Array];
  let acc = [[1, 0], [0, 1]];
  const m = vals(ms);
  const expected: number[] = [];
  for (let k = 0; k < 5; k++) {
    const b = [[m[4 * k]!, m[4 * k + 1]!], [m[4 * k + 2]!, m[4 * k + 3]!]];
    acc = [0, 1].map((i) => [0, 1].map((j) => acc[i]![0]! * b[0]![j]! + acc[i]![1]! * b[1]![j]!));
    expected.push(...acc.flat());
  }
  close(t, prod, expected.slice(-4));
  close(t, history, expected);
  t.deepEqual([...history.shape], [5, 2, 2]);
});

test('scan: pytree carry, xs and ys (objects and arrays, null leaves)', (t) => {
  const xs = { a: f32([1, 2, 3]), b: [f32([10, 20, 30]), null] };
  const init = { count: jnp.array(0, { dtype: 'int32' }), sum: f32([0, 0]) };
  type C = typeof init;
  const [carry, ys] = lax.scan((c: C, x: typeof xs) => {
    const a = x.a as unknown as Array;
    const b = (x.b as unknown as Array[])[0]!;
    const next = { count: jnp.add(c.count, 1), sum: jnp.add(c.sum, jnp.stack([a, b])) };
    return [next, { prod: jnp.multiply(a, b), pair: [a, null] }];
  }, init, xs) as [C, { prod: Array; pair: [Array, null] }];
  t.deepEqual(vals(carry.count), [3]);
  t.is(carry.count.dtype, 'int32');
  close(t, carry.sum, [6, 60]);
  close(t, ys.prod, [10, 40, 90]);
  close(t, ys.pair[0], [1, 2, 3]);
  t.is(ys.pair[1], null);
});

test('scan: reverse runs from the end but stacks ys in xs order', (t) => {
  const data = [1, 2, 3, 4];
  const [c, ys] = lax.scan((carry: Array, x: Array) => {
    const next = jnp.add(jnp.multiply(carry, 10), x);
    return [next, next];
  }, f32([0]).reshape([]), f32(data), { reverse: true }) as [Array, Array];
  close(t, c, [4321]);
  close(t, ys, [4321, 432, 43, 4]);
});

test('scan: length without xs, and xs = null with a pytree carry', (t) => {
  const [[a, b], ys] = lax.scan(([x, y]: [Array, Array]) => [[y, jnp.add(x, y)], x] as [[Array, Array], Array], [f32([0]).reshape([]), f32([1]).reshape([])], null, { length: 10 }) as [[Array, Array], Array];
  close(t, ys, [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]);
  close(t, a, [55]);
  close(t, b, [89]);
  const [c0, empty] = lax.scan((c: Array) => [jnp.add(c, 1), c], f32([7]).reshape([]), null, { length: 0 }) as [Array, Array];
  close(t, c0, [7]);
  t.deepEqual([...empty.shape], [0]);
});

test('scan: unroll gives the same results (divisible, with a remainder, and fully unrolled)', (t) => {
  const xs = rand([7, 3], 5);
  const body = (c: Array, x: Array): [Array, Array] => {
    const next = jnp.sin(jnp.add(jnp.multiply(c, 0.9), x));
    return [next, jnp.sum(next)];
  };
  const [c1, y1] = lax.scan(body, jnp.zeros([3]), xs) as [Array, Array];
  for (const unroll of [2, 3, 7, true] as const) {
    const [c, y] = lax.scan(body, jnp.zeros([3]), xs, { unroll }) as [Array, Array];
    close(t, c, c1, 1e-6, `carry, unroll ${unroll}`);
    close(t, y, y1, 1e-6, `ys, unroll ${unroll}`);
    for (const reverse of [true]) {
      const [cr] = lax.scan(body, jnp.zeros([3]), xs, { unroll, reverse }) as [Array, Array];
      const [cr1] = lax.scan(body, jnp.zeros([3]), xs, { reverse }) as [Array, Array];
      close(t, cr, cr1, 1e-6, `reverse carry, unroll ${unroll}`);
    }
  }
  const closed = jax.makeJaxpr((x: Array) => lax.scan(body, jnp.zeros([3]), x, { unroll: 3 }))(xs);
  t.is((closed.jaxpr.eqns.find((e) => e.primitive === 'scan')!.params as { unroll: number }).unroll, 3);
});

test('scan: a weakly typed init takes the type of the body output (JAX promotes and retraces)', (t) => {
  const [c] = lax.scan((acc: Array, x: Array) => [jnp.add(acc, x), null], 0, f32([0.5, 0.25])) as [Array, null];
  t.is(c.dtype, 'float32');
  close(t, c, [0.75]);
});

test('scan: closed-over arrays and nested scans', (t) => {
  const w = f32([0.5, -1, 2]);
  const outer = (xs: Array) =>
    lax.scan((c: Array, row: Array) => {
      const [inner] = lax.scan((d: Array, x: Array) => [jnp.add(jnp.multiply(d, w), x), null], c, row.reshape([2, 3])) as [Array, null];
      return [inner, jnp.sum(inner)];
    }, jnp.zeros([3]), xs);
  const xs = rand([4, 6], 9);
  const [c, ys] = outer(xs) as [Array, Array];
  // the same loops in JS
  const x = vals(xs);
  let d = [0, 0, 0];
  const sums: number[] = [];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 2; j++) d = d.map((v, k) => v * [0.5, -1, 2][k]! + x[i * 6 + j * 3 + k]!);
    sums.push(d.reduce((a, b) => a + b, 0));
  }
  close(t, c, d, 1e-5);
  close(t, ys, sums, 1e-5);
  checkAgainstReference(t, () => outer(xs), { tol: 1e-5, message: 'nested scans vs the reference interpreter' });
});

test('lax.map stacks f over the leading axis (a scan without a carry)', (t) => {
  const xs = rand([4, 3], 13);
  const ys = lax.map((x: Array) => ({ s: jnp.sum(x), d: jnp.multiply(x, 2) }), xs);
  close(t, ys.s, [0, 1, 2, 3].map((i) => vals(xs).slice(3 * i, 3 * i + 3).reduce((a, b) => a + b, 0)), 1e-6);
  close(t, ys.d, vals(xs).map((v) => 2 * v), 1e-6);
  t.deepEqual(eqnsOf(jax.makeJaxpr((x: Array) => lax.map((v: Array) => jnp.sin(v), x))(xs)), ['scan']);
});

// ---- fori_loop / while_loop / cond / switch ----

test('foriLoop: concrete bounds lower to scan; traced bounds to while', (t) => {
  const body = (i: Array, v: Array) => jnp.add(jnp.multiply(v, 2), i);
  let expected = 1;
  for (let i = 2; i < 7; i++) expected = expected * 2 + i;
  close(t, lax.foriLoop(2, 7, body, f32([1]).reshape([])), [expected]);
  close(t, lax.foriLoop(5, 3, body, f32([1]).reshape([])), [1], 0, 'an empty range runs no iteration');
  t.deepEqual(eqnsOf(jax.makeJaxpr((v: Array) => lax.foriLoop(2, 7, body, v))(f32([1]).reshape([]))), ['scan']);
  const traced = jax.makeJaxpr((n: Array, v: Array) => lax.foriLoop(2, n, body, v))(jnp.array(7, { dtype: 'int32' }), f32([1]).reshape([]));
  t.true(eqnsOf(traced).includes('while'));
  const jitted = jax.jit((n: Array, v: Array) => lax.foriLoop(2, n, body, v));
  close(t, jitted(jnp.array(7, { dtype: 'int32' }), f32([1]).reshape([])), [expected]);
  close(t, jitted(jnp.array(4, { dtype: 'int32' }), f32([1]).reshape([])), [(1 * 2 + 2) * 2 + 3]);
});

test('whileLoop: runs while cond holds; pytree carry; JS loop equivalence', (t) => {
  const collatz = (n: number) => {
    let steps = 0;
    while (n !== 1) {
      n = n % 2 ? 3 * n + 1 : n / 2;
      steps++;
    }
    return steps;
  };
  for (const n of [1, 6, 27]) {
    const [, steps] = lax.whileLoop(
      ([x]: [Array, Array]) => jnp.notEqual(x, 1),
      ([x, s]: [Array, Array]) => [jnp.where(jnp.equal(jnp.mod(x, 2), 1), jnp.add(jnp.multiply(x, 3), 1), jnp.floorDivide(x, 2)), jnp.add(s, 1)] as [Array, Array],
      [jnp.array(n, { dtype: 'int32' }), jnp.array(0, { dtype: 'int32' })] as [Array, Array],
    );
    t.deepEqual(vals(steps), [collatz(n)], `collatz(${n})`);
  }
  const out = lax.whileLoop((c: { x: Array }) => jnp.less(c.x, 100), (c: { x: Array }) => ({ x: jnp.multiply(c.x, 3) }), { x: f32([1]).reshape([]) });
  close(t, out.x, [243]);
});

test('cond and switch: the chosen branch runs; pytrees; integer predicates; switch clamps its index', (t) => {
  const branches = (x: Array, y: { s: Array }) => [jnp.sin(x), { s: jnp.add(y.s, 1) }];
  const other = (x: Array, y: { s: Array }) => [jnp.cos(x), { s: jnp.subtract(y.s, 1) }];
  const x = f32([0.5, 1]);
  const y = { s: f32([10]).reshape([]) };
  const [a, b] = lax.cond(true, branches, other, x, y) as [Array, { s: Array }];
  close(t, a, [Math.sin(0.5), Math.sin(1)]);
  close(t, b.s, [11]);
  const [c, d] = lax.cond(jnp.array(0, { dtype: 'int32' }), branches, other, x, y) as [Array, { s: Array }];
  close(t, c, [Math.cos(0.5), Math.cos(1)]);
  close(t, d.s, [9]);
  const fns = [(v: Array) => jnp.multiply(v, 1), (v: Array) => jnp.multiply(v, 2), (v: Array) => jnp.multiply(v, 3)];
  for (const [i, factor] of [[-4, 1], [0, 1], [1, 2], [2, 3], [9, 3]] as const) {
    close(t, lax.switch(jnp.array(i, { dtype: 'int32' }), fns, f32([1, 2])), [factor, 2 * factor], 0, `switch(${i})`);
  }
  const inJit = jax.jit((p: Array, v: Array) => lax.cond(p, (u: Array) => jnp.exp(u), (u: Array) => jnp.negative(u), v));
  close(t, inJit(jnp.array(true), f32([1])), [Math.E]);
  close(t, inJit(jnp.array(false), f32([1])), [-1]);
});

test('makeJaxpr shows scan, while and cond with their nested jaxprs', (t) => {
  const f = (xs: Array, p: Array) => {
    const [c] = lax.scan((acc: Array, x: Array) => [jnp.add(acc, jnp.sin(x)), null], jnp.zeros([]), xs) as [Array, null];
    const w = lax.whileLoop((v: Array) => jnp.less(v, 10), (v: Array) => jnp.multiply(v, 2), c);
    return lax.cond(p, (v: Array) => jnp.exp(v), (v: Array) => v, w);
  };
  const closed = jax.makeJaxpr(f)(f32([1, 2, 3]), jnp.array(true));
  const text = closed.toString();
  t.deepEqual(eqnsOf(closed).filter((p) => ['scan', 'while', 'cond'].includes(p)), ['scan', 'while', 'cond']);
  for (const fragment of ['= scan[', 'jaxpr={ lambda ; ', 'length=3', 'num_carry=1', 'num_consts=0', 'reverse=False', '= sin ',
    '= while[', 'body_jaxpr={ lambda', 'cond_jaxpr={ lambda', 'body_nconsts=0', '= lt ', '= cond[', 'branches=(', '= exp ']) {
    t.true(text.includes(fragment), `jaxpr should contain "${fragment}":\n${text}`);
  }
  const scanEqn = closed.jaxpr.eqns.find((e) => e.primitive === 'scan')!;
  t.true((scanEqn.params as { jaxpr: unknown }).jaxpr instanceof ClosedJaxpr);
  // variable names continue through the nested jaxprs, as JAX prints them
  const lines = text.split('\n');
  const scanLine = lines.findIndex((l) => l.includes('= scan['));
  t.regex(lines[scanLine + 1]!, /jaxpr=\{ lambda ; [a-z]+:f32\[\] [a-z]+:f32\[\]\. let/);
  t.false(lines[scanLine + 1]!.includes(' a:f32'), 'nested names do not restart at a');
});

// ---- errors ----

test('errors: carry types and structure, lengths, predicates and branch outputs follow JAX', (t) => {
  assertThrowsMentioning(t, () => lax.scan((c: Array, x: Array) => [jnp.stack([c, x]), null], f32([0]).reshape([]), f32([1, 2])),
    'scan body function carry input and carry output must have equal types', 'the input carry has type float32[] but the corresponding output carry component has type float32[2], so the shapes do not match');
  assertThrowsMentioning(t, () => lax.scan(((c: [Array, Array]) => [[c[0], c[1].astype('int32')], null]) as never, [f32([0]).reshape([]), f32([0]).reshape([])], null, { length: 2 }),
    'the input carry component carry[1] has type float32[] but the corresponding output carry component has type int32[], so the dtypes do not match',
    'Revise the function so that all output types match the corresponding input types.');
  assertThrowsMentioning(t, () => lax.scan(((c: Array) => [[c, c], null]) as never, f32([0]).reshape([]), null, { length: 2 }),
    'scan body function carry input and carry output must have the same pytree structure');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, null), 'scan got no values to scan over and `length` not provided.');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, f32([1, 2]), { length: 3 }), 'scan got `length` argument of 3 which disagrees with leading axis sizes [2].');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, [f32([1, 2]), f32([1, 2, 3])]), 'scan got values with different leading axis sizes: 2, 3.');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, jnp.array(1)), 'scan got value with no leading axis to scan over');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => c as never, 0, null, { length: 1 }), 'must return a pair [carry, y]');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, null, { length: 1, unroll: 0 }), '`unroll` must be a `bool` or a positive `int`');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, null, { length: 1, reverse: 1 as never }), 'reverse must be a boolean');
  assertThrowsMentioning(t, () => lax.scan((c: Array) => [c, null], 0, null, { lenght: 1 } as never), "unknown option 'lenght'");
  assertThrowsMentioning(t, () => lax.whileLoop((v: Array) => jnp.add(v, 1), (v: Array) => v, f32([1]).reshape([])), 'cond_fun must return a boolean scalar, but got output type(s) [float32[]]');
  assertThrowsMentioning(t, () => lax.whileLoop((v: Array) => jnp.less(v, 1), (v: Array) => jnp.stack([v, v]), f32([1]).reshape([])),
    'while_loop body function carry input and carry output must have equal types');
  assertThrowsMentioning(t, () => lax.cond(f32([1, 0]), (v: Array) => v, (v: Array) => v, f32([1])), 'Pred must be a scalar');
  assertThrowsMentioning(t, () => lax.cond(f32([1]).reshape([]), (v: Array) => v, (v: Array) => v, f32([1])), 'Pred type must be either boolean or number, got float32.');
  assertThrowsMentioning(t, () => lax.cond(true, (v: Array) => v, (v: Array) => v.astype('int32'), f32([1])), 'true_fun and false_fun output must have identical types');
  assertThrowsMentioning(t, () => lax.cond(true, (v: Array) => [v, v], (v: Array) => v, f32([1])), 'true_fun and false_fun output must have same type structure');
  assertThrowsMentioning(t, () => lax.switch(jnp.array(0, { dtype: 'int32' }), [], f32([1])), 'Empty branch sequence');
  assertThrowsMentioning(t, () => lax.switch(f32([0]).reshape([]), [(v: Array) => v, (v: Array) => v], f32([1])), 'Index type must be an integer, got float32.');
});

// ---- autodiff ----

test('grad through scan equals grad of the unrolled loop (with closed-over weights, ys and carry both used)', (t) => {
  const w = f32([0.7, -0.3, 1.1]);
  const xs = rand([5, 3], 11);
  const scanned = (w: Array, init: Array) => {
    const [c, ys] = lax.scan((h: Array, x: Array) => {
      const next = jnp.tanh(jnp.add(jnp.multiply(h, w), x));
      return [next, jnp.sum(jnp.square(next))];
    }, init, xs) as [Array, Array];
    return jnp.add(jnp.sum(c), jnp.sum(ys));
  };
  const unrolled = (w: Array, init: Array) => {
    let h = init;
    let total: Array = jnp.zeros([]);
    for (let i = 0; i < 5; i++) {
      h = jnp.tanh(jnp.add(jnp.multiply(h, w), xs.index(i)));
      total = jnp.add(total, jnp.sum(jnp.square(h)));
    }
    return jnp.add(jnp.sum(h), total);
  };
  const init = f32([0.1, 0.2, 0.3]);
  close(t, scanned(w, init), unrolled(w, init), 1e-5, 'value');
  const [gw, gi] = jax.grad(scanned as Fn, { argnums: [0, 1] })(w, init) as [Array, Array];
  const [ew, ei] = jax.grad(unrolled as Fn, { argnums: [0, 1] })(w, init) as [Array, Array];
  close(t, gw, ew, 1e-5, 'grad w');
  close(t, gi, ei, 1e-5, 'grad init');
  // jvp and grad of reverse scans too
  const rev = (w: Array) => jnp.sum((lax.scan((h: Array, x: Array) => [jnp.sin(jnp.multiply(h, jnp.add(x, w))), h], init, xs, { reverse: true }) as [Array, Array])[1]);
  const revUnrolled = (w: Array) => {
    let h = init;
    let total: Array = jnp.zeros([]);
    for (let i = 4; i >= 0; i--) {
      total = jnp.add(total, jnp.sum(h));
      h = jnp.sin(jnp.multiply(h, jnp.add(xs.index(i), w)));
    }
    return total;
  };
  close(t, jax.grad(rev as Fn)(w), jax.grad(revUnrolled as Fn)(w) as Array, 1e-5, 'grad of a reverse scan');
  const dw = f32([1, 0.5, -1]);
  close(t, (jax.jvp(rev as Fn, [w], [dw]) as Array[])[1], (jax.jvp(revUnrolled as Fn, [w], [dw]) as Array[])[1], 1e-5, 'jvp of a reverse scan');
});

test("grad through scan: the tutorial's 10-layer network scanned over stacked weights equals the unrolled network", (t) => {
  const layer = (x: Array, [w1, w2]: [Array, Array]): [Array, null] => [jnp.matmul(jnp.sin(jnp.matmul(x, w1)), w2), null];
  const w1 = rand([10, 8, 16], 21, -0.4, 0.4);
  const w2 = rand([10, 16, 8], 22, -0.4, 0.4);
  const x = rand([4, 8], 23);
  const scanned = (w1: Array, w2: Array, x: Array) => jnp.sum(jnp.square((lax.scan(layer, x, [w1, w2]) as [Array, null])[0]));
  const unrolled = (w1: Array, w2: Array, x: Array) => {
    let h = x;
    for (let i = 0; i < 10; i++) [h] = layer(h, [w1.index(i), w2.index(i)]);
    return jnp.sum(jnp.square(h));
  };
  close(t, scanned(w1, w2, x), unrolled(w1, w2, x), 1e-5, 'loss');
  const grads = jax.grad(scanned as Fn, { argnums: [0, 1, 2] })(w1, w2, x) as Array[];
  const expected = jax.grad(unrolled as Fn, { argnums: [0, 1, 2] })(w1, w2, x) as Array[];
  ['w1', 'w2', 'x'].forEach((name, i) => {
    t.deepEqual([...grads[i]!.shape], [...expected[i]!.shape], name);
    close(t, grads[i], expected[i]!, 1e-4, `grad ${name}`);
  });
  // under jit too, as one would train it
  const jitted = jax.jit(jax.valueAndGrad(scanned as Fn, { argnums: [0, 1] }) as Fn) as unknown as (...a: Array[]) => [Array, Array[]];
  const [loss, [g1, g2]] = jitted(w1, w2, x);
  close(t, loss, scanned(w1, w2, x), 1e-5, 'jit loss');
  close(t, g1, expected[0]!, 1e-4, 'jit grad w1');
  close(t, g2, expected[1]!, 1e-4, 'jit grad w2');
});

test('scan over a rematerialized layer: the grad equals the plain scan, eagerly and under jit; only the carries are saved', (t) => {
  const body = (x: Array, [w1, w2]: [Array, Array]): [Array, null] => [jnp.matmul(jnp.sin(jnp.matmul(x, w1)), w2), null];
  const w1 = rand([3, 4, 5], 81, -0.5, 0.5);
  const w2 = rand([3, 5, 4], 82, -0.5, 0.5);
  const x = rand([2, 4], 83);
  const loss = (layer: typeof body) => (w1: Array, w2: Array, x: Array) => jnp.sum(jnp.square((lax.scan(layer, x, [w1, w2]) as [Array, null])[0]));
  const remat = loss(jax.remat(body as Fn) as unknown as typeof body);
  const expected = jax.grad(loss(body) as Fn, { argnums: [0, 1] })(w1, w2, x) as Array[];
  const eager = jax.grad(remat as Fn, { argnums: [0, 1] })(w1, w2, x) as Array[];
  const jitted = jax.jit(jax.grad(remat as Fn, { argnums: [0, 1] }) as Fn)(w1 as never, w2 as never, x as never) as Array[];
  [0, 1].forEach((i) => {
    close(t, eager[i], expected[i]!, 1e-5, `eager grad ${i}`);
    close(t, jitted[i], expected[i]!, 1e-5, `jit grad ${i}`);
  });
  const text = jax.makeJaxpr(jax.grad(remat as Fn) as Fn)(w1, w2, x).toString();
  t.true(text.includes('f32[3,2,4]'), 'the stacked carries are the residuals');
  t.false(text.includes('f32[3,2,5]'), 'the layer intermediates are recomputed, not stacked');
});

test('linearize of scan: loop-invariant residuals are hoisted, not stacked per iteration', (t) => {
  const w = rand([3, 3], 31);
  const f = (w: Array, x0: Array) => (lax.scan((h: Array) => [jnp.tanh(jnp.matmul(h, jnp.transpose(w))), null], x0, null, { length: 6 }) as [Array, null])[0];
  const closed = jax.makeJaxpr(jax.grad((w: Array, x0: Array) => jnp.sum(f(w, x0)) as never) as Fn)(w, f32([0.1, 0.2, 0.3]));
  const text = closed.toString();
  t.false(/f32\[6,3,3\]/.test(text), `w (or its transpose) must not be stacked 6 times:\n${text}`);
  t.true(/f32\[6,3\]/.test(text), 'the per-iteration residuals are stacked');
  const scans = closed.jaxpr.eqns.filter((e) => e.primitive === 'scan').map((e) => (e.params as { reverse: boolean }).reverse);
  t.deepEqual(scans, [false, true], 'a forward scan, then the transposed one running backwards');
});

test('whileLoop: jvp equals the jvp of the unrolled loop; reverse mode raises JAX\'s error', (t) => {
  const f = (x: Array) => lax.whileLoop(([i]: [Array, Array]) => jnp.less(i, 4), ([i, v]: [Array, Array]) => [jnp.add(i, 1), jnp.sin(jnp.multiply(v, x))] as [Array, Array], [jnp.array(0, { dtype: 'int32' }), x] as [Array, Array])[1];
  const unrolled = (x: Array) => {
    let v = x;
    for (let i = 0; i < 4; i++) v = jnp.sin(jnp.multiply(v, x));
    return v;
  };
  const x = f32([0.9, -1.3]);
  const dx = f32([1, 0.5]);
  const [y, dy] = jax.jvp(f as Fn, [x], [dx]) as [Array, Array];
  const [ey, edy] = jax.jvp(unrolled as Fn, [x], [dx]) as [Array, Array];
  close(t, y, ey, 1e-6, 'primal');
  close(t, dy, edy, 1e-5, 'tangent');
  const [, fJvp] = jax.linearize(f as Fn, x);
  close(t, fJvp(dx), edy, 1e-5, 'linearize works (the loop is recomputed on the unknown side)');
  const message = 'Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop.';
  assertThrowsMentioning(t, () => jax.grad((x: Array) => jnp.sum(f(x)) as never)(x), message);
  // traced bounds (inside jit) make foriLoop a while loop
  const dynamic = jax.jit((x: Array, n: Array) => jnp.sum(lax.foriLoop(0, n, (_i: Array, v: Array) => jnp.sin(v), x)));
  assertThrowsMentioning(t, () => jax.grad(dynamic as Fn)(x, jnp.array(3, { dtype: 'int32' })), message);
  // fori_loop with concrete bounds is a scan: reverse mode works
  const fori = (x: Array) => jnp.sum(lax.foriLoop(0, 4, (_i: Array, v: Array) => jnp.sin(jnp.multiply(v, x)), x));
  close(t, jax.grad(fori as Fn)(x), jax.grad(((x: Array) => jnp.sum(unrolled(x))) as Fn)(x) as Array, 1e-5, 'grad of foriLoop');
});

test('grad through cond takes the branch that ran; cond with an integer-indexed switch', (t) => {
  const f = (x: Array) => jnp.sum(lax.cond(jnp.greater(jnp.sum(x), 0), (v: Array) => jnp.sin(v), (v: Array) => jnp.multiply(v, v), x) as Array);
  const x = f32([0.3, 0.4]);
  close(t, jax.grad(f as Fn)(x), [Math.cos(0.3), Math.cos(0.4)], 1e-6);
  close(t, jax.grad(f as Fn)(jnp.negative(x)), [-0.6, -0.8], 1e-6);
  const g = (i: Array, x: Array) => jnp.sum(lax.switch(i, [(v: Array) => jnp.exp(v), (v: Array) => jnp.multiply(v, 3), (v: Array) => v], x) as Array);
  close(t, jax.grad(g as Fn, { argnums: 1 })(jnp.array(1, { dtype: 'int32' }), x), [3, 3], 1e-6);
  close(t, jax.grad(g as Fn, { argnums: 1 })(jnp.array(0, { dtype: 'int32' }), x), [Math.exp(0.3), Math.exp(0.4)], 1e-6);
});

// serial: float64 arguments need x64 on, which it turns on (process-wide) while it runs
test.serial('check_grads: scan, reverse scan with a closed-over weight, and cond at order 2; while in forward mode', (t) => withX64(true, () => {
  const xs = rand([4, 2], 41, -1, 1, 'float64');
  const scanFn = (w: Array, h0: Array) => (lax.scan((h: Array, x: Array) => {
    const next = jnp.sin(jnp.add(jnp.multiply(h, w), x));
    return [next, jnp.multiply(next, h)];
  }, h0, xs) as [Array, Array]);
  checkGrads(t, scanFn as Fn, [f64([0.8, -0.5]), f64([0.2, 0.1])], { order: 2 });
  const reverseFn = (w: Array) => (lax.scan((h: Array, x: Array) => [jnp.tanh(jnp.multiply(jnp.add(h, x), w)), jnp.exp(h)], f64([0.1, 0.2]), xs, { reverse: true, unroll: 3 }) as [Array, Array])[1];
  checkGrads(t, reverseFn as Fn, [f64([0.9, 1.2])], { order: 2 });
  const condFn = (p: Array, x: Array) => lax.cond(jnp.greater(jnp.sum(p), 0), (a: Array, b: Array) => jnp.multiply(jnp.sin(a), b), (a: Array, b: Array) => jnp.add(a, jnp.exp(b)), p, x);
  checkGrads(t, condFn as Fn, [f64([0.4, 0.5]), f64([1.5, -0.3])], { order: 2 });
  checkGrads(t, condFn as Fn, [f64([-0.4, -0.5]), f64([1.5, -0.3])], { order: 2 });
  const whileFn = (x: Array) => lax.whileLoop((c: [Array, Array]) => jnp.less(c[0], 3), ([i, v]: [Array, Array]) => [jnp.add(i, 1), jnp.sin(jnp.multiply(v, x))] as [Array, Array], [jnp.array(0, { dtype: 'int32' }), x] as [Array, Array])[1];
  checkGrads(t, whileFn as Fn, [f64([0.7, 1.1])], { order: 2, modes: ['fwd'] });
}));

// ---- vmap ----

test('vmap of scan: batched xs, batched init, batched consts; equals a loop over the batch', (t) => {
  const f = (w: Array, h0: Array, xs: Array) => lax.scan((h: Array, x: Array) => {
    const next = jnp.tanh(jnp.add(jnp.multiply(h, w), x));
    return [next, jnp.sum(next)];
  }, h0, xs);
  // each argument batched ([3, ...]) or not
  const args = [[rand([3, 2], 51), rand([2], 54)], [rand([3, 2], 52), rand([2], 55)], [rand([3, 5, 2], 53), rand([5, 2], 56)]] as const;
  for (const inAxes of [[0, 0, 0], [null, null, 0], [0, null, null], [null, 0, null]] as (0 | null)[][]) {
    const [w, h0, xs] = args.map(([batched, single], i) => (inAxes[i] === 0 ? batched : single)) as [Array, Array, Array];
    const [c, ys] = jax.vmap(f, { inAxes })(w, h0, xs) as [Array, Array];
    for (let b = 0; b < 3; b++) {
      const pick = (a: Array, axis: 0 | null) => (axis === null ? a : a.index(b));
      const [ec, eys] = f(pick(w, inAxes[0]!), pick(h0, inAxes[1]!), pick(xs, inAxes[2]!)) as [Array, Array];
      close(t, c.index(b), ec, 1e-6, `carry, inAxes ${inAxes}, example ${b}`);
      close(t, ys.index(b), eys, 1e-6, `ys, inAxes ${inAxes}, example ${b}`);
    }
  }
});

test('vmap of cond with a batched predicate selects per example; with an unbatched one it stays a cond', (t) => {
  const f = (p: Array, x: Array) => lax.cond(p, (v: Array) => jnp.sin(v), (v: Array) => jnp.multiply(v, 10), x) as Array;
  const p = jnp.array([true, false, true]);
  const x = f32([0.5, 0.5, 2]);
  close(t, jax.vmap(f)(p, x), [Math.sin(0.5), 5, Math.sin(2)], 1e-6);
  const batchedPred = jax.makeJaxpr(jax.vmap(f))(p, x);
  t.false(eqnsOf(batchedPred).includes('cond'));
  t.true(eqnsOf(batchedPred).includes('select_n'));
  const unbatched = jax.makeJaxpr(jax.vmap(f, { inAxes: [null, 0] }))(jnp.array(true), x);
  t.true(eqnsOf(unbatched).includes('cond'));
  close(t, jax.vmap(f, { inAxes: [null, 0] })(jnp.array(false), x), [5, 5, 20], 1e-6);
  const s = (i: Array, x: Array) => lax.switch(i, [(v: Array) => jnp.negative(v), (v: Array) => jnp.exp(v), (v: Array) => jnp.square(v)], x) as Array;
  close(t, jax.vmap(s)(jnp.array([2, 0, 1, 7], { dtype: 'int32' }), f32([3, 3, 0, 2])), [9, -3, 1, 4], 1e-6, 'switch with a batched index');
});

test('vmap of whileLoop with a batched predicate runs until every example is done', (t) => {
  const f = (limit: Array, x: Array) => lax.whileLoop(([v]: [Array, Array]) => jnp.less(v, limit), ([v, n]: [Array, Array]) => [jnp.multiply(v, 2), jnp.add(n, 1)] as [Array, Array], [x, jnp.array(0, { dtype: 'int32' })] as [Array, Array]);
  const [v, n] = jax.vmap(f)(f32([10, 1, 100]), f32([1, 1, 3])) as [Array, Array];
  close(t, v, [16, 1, 192]);
  t.deepEqual(vals(n), [4, 0, 6]);
  const [v2, n2] = jax.vmap(f, { inAxes: [null, 0] })(f32([10]).reshape([]), f32([1, 3, 20])) as [Array, Array];
  close(t, v2, [16, 12, 20]);
  t.deepEqual(vals(n2), [4, 2, 0]);
});

// ---- jit, reference, memory ----

test('jit of scan / while / cond equals eager; the reference interpreter agrees', (t) => {
  const f = (xs: Array, p: Array) => {
    const [c, ys] = lax.scan((h: Array, x: Array) => [jnp.add(jnp.multiply(h, 0.5), jnp.cos(x)), jnp.exp(h)], jnp.zeros([2]), xs) as [Array, Array];
    const w = lax.whileLoop((v: Array) => jnp.less(jnp.sum(v), 50), (v: Array) => jnp.add(jnp.multiply(v, 1.5), 1), c);
    return [lax.cond(p, (v: Array) => jnp.sin(v), (v: Array) => jnp.negative(v), w), jnp.sum(ys)];
  };
  const xs = rand([6, 2], 61);
  for (const p of [true, false]) {
    const eager = f(xs, jnp.array(p)) as Array[];
    const jitted = jax.jit(f)(xs, jnp.array(p)) as Array[];
    eager.forEach((e, i) => assertArray(t, jitted[i], e, { tol: 1e-6, message: `output ${i}, pred ${p}` }));
    checkAgainstReference(t, () => f(xs, jnp.array(p)), { tol: 1e-5, message: `pred ${p}` });
  }
});

test('eager scan, while and cond leave no arrays behind', (t) => {
  const xs = rand([20, 3], 71);
  const init = jnp.zeros([3]);
  const run = () => {
    const [c, ys] = lax.scan((h: Array, x: Array) => [jnp.add(h, jnp.sin(x)), h], init, xs, { unroll: 3 }) as [Array, Array];
    const w = lax.whileLoop((v: Array) => jnp.less(jnp.sum(v), 100), (v: Array) => jnp.add(v, 1), c);
    const r = lax.cond(true, (v: Array) => v, (v: Array) => jnp.negative(v), w) as Array;
    return [c, ys, w, r];
  };
  run().forEach((a) => a.dispose()); // kernels compiled, caches warm
  const before = jax.liveArrayCount();
  const outs = run();
  t.is(jax.liveArrayCount(), before + outs.length, 'only the outputs are alive');
  outs.forEach((a) => a.dispose());
  t.is(jax.liveArrayCount(), before);
  t.false(init.isDisposed);
  t.false(xs.isDisposed);
});
