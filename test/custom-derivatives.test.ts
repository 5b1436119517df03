// jax.customJvp / jax.customVjp: ports of JAX's CustomJVPTest and
// CustomVJPTest (tests/custom_derivatives_test.py) and of the examples of
// JAX's "Custom derivative rules" tutorial, with the numbers they document.
// Each composition is checked by value: eager, jvp, grad, grad of grad,
// jit (both orders), vmap (both orders), lax.scan bodies and checkpoint;
// JAX's error messages for malformed rules, for forward mode through a
// custom_vjp function and for tracers where they cannot go; and the compiled
// program of jit, which holds the primal computation only.
import test, { type ExecutionContext } from 'ava';
import type { Array } from '../lib/core/array.js';
import * as jax from '../lib/index.js';
import { checkGrads } from './helpers/check-grads.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

const { numpy: jnp, lax } = jax;
// rules take and return pytrees of any shape, as in JAX
/* eslint-disable @typescript-eslint/no-explicit-any */
type Fn = (...args: any[]) => any;

const f32 = (data: number | number[]): Array => jnp.array(data, { dtype: 'float32' });
const arange = (n: number): Array => jnp.arange(n).astype('float32');
const leaves = (x: unknown): number[] => jax.tree.leaves(x as any).flatMap((l: unknown) => (typeof l === 'number' ? [l] : globalThis.Array.from((l as Array).dataSync() as ArrayLike<number>)));

/** Every leaf of `actual` is close to the matching number of `expected` (a pytree of numbers or arrays). */
function near(t: ExecutionContext, actual: unknown, expected: unknown, message = '', tol = 1e-5): void {
  const got = leaves(actual);
  const want = leaves(expected);
  t.is(got.length, want.length, `${message}: number of values`);
  got.forEach((g, i) => {
    const w = want[i]!;
    const ok = (Number.isNaN(g) && Number.isNaN(w)) || Math.abs(g - w) <= tol * (1 + Math.abs(w));
    t.true(ok, `${message} [${i}]: got ${g}, expected ${w}`);
  });
}

const sin = Math.sin;
const cos = Math.cos;

/** JAX's running example: f = sin with the (wrong on purpose) rule 2 cos(x) t, so the rule is visibly used. */
function sinWithRule(): Fn {
  const f = jax.customJvp(function f(x: Array) {
    return jnp.sin(x);
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), jnp.cos(x).mul(2).mul(g)];
  });
  return f;
}

/** The custom_vjp version: fwd saves cos(x), bwd gives 2 cos(x) g. */
function sinWithVjp(): Fn {
  const f = jax.customVjp(function f(x: Array) {
    return jnp.sin(x);
  });
  f.defvjp(function f_fwd(x: Array) {
    return [f(x), jnp.cos(x)];
  }, function f_rev(cosX: Array, g: Array) {
    return [cosX.mul(2).mul(g)];
  });
  return f;
}

const scanApply = (f: Fn) => (x: any): any => lax.scan((c: unknown) => [f(c), null], x, null, { length: 1 })[0];

// ---- custom_jvp ----

test('customJvp basic: eager, jvp and grad use the rule (test_basic)', (t) => {
  const f = sinWithRule();
  near(t, f(3), sin(3), 'f(3)');
  near(t, jax.jvp(f, [3], [1]), [sin(3), 2 * cos(3)], 'jvp');
  near(t, jax.grad(f)(3), 2 * cos(3), 'grad');
});

test('customJvp: grad of grad differentiates the rule itself', (t) => {
  const f = sinWithRule();
  // d/dx of the rule's 2 cos(x)
  near(t, jax.grad(jax.grad(f))(3), -2 * sin(3), 'grad grad');
  near(t, jax.grad(jax.grad(jax.grad(f)))(3), -2 * cos(3), 'grad grad grad');
  near(t, jax.jvp(jax.grad(f), [3], [1])[1], -2 * sin(3), 'jvp of grad');
});

test('customJvp invariance: jvp of a function that calls jvp (test_invariance)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return jnp.cos(x.mul(2)).div(2);
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), g.mul(3)];
  });
  const f2 = (x: Array) => jax.jvp(f, [x], [x])[0];
  const f3 = (x: Array) => jax.jvp(f2, [x], [x])[0];
  const expected = jax.jvp(f, [1], [1]);
  near(t, expected, [cos(2) / 2, 3], 'jvp f');
  near(t, jax.jvp(f2, [1], [1]), expected, 'jvp f2');
  near(t, jax.jvp(f3, [1], [1]), expected, 'jvp f3');
});

test('customJvp under vmap: the function and the rule see one example (test_vmap)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    if (x.ndim !== 0) throw new Error(`f got rank ${x.ndim}`);
    return jnp.sin(x);
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    if (x.ndim !== 0 || g.ndim !== 0) throw new Error('the rule got a batched value');
    return [f(x), jnp.cos(x).mul(2).mul(g)];
  });
  const x = arange(3);
  const xx = arange(6).reshape([2, 3]);
  const xs = [0, 1, 2];
  const xxs = [0, 1, 2, 3, 4, 5];
  near(t, jax.vmap(f)(x), xs.map(sin), 'vmap');
  near(t, jax.vmap(jax.vmap(f))(xx), xxs.map(sin), 'vmap vmap');
  near(t, jax.vmap((x: Array) => jax.jvp(f, [x], [x]))(x), [xs.map(sin), xs.map((v) => 2 * cos(v) * v)], 'vmap of jvp');
  near(t, jax.vmap(jax.vmap((x: Array) => jax.jvp(f, [x], [x])))(xx), [xxs.map(sin), xxs.map((v) => 2 * cos(v) * v)], 'vmap vmap of jvp');
  near(t, jax.jvp(jax.vmap(f), [x], [x]), [xs.map(sin), xs.map((v) => 2 * cos(v) * v)], 'jvp of vmap');
  near(t, jax.jvp(jax.vmap(jax.vmap(f)), [xx], [xx]), [xxs.map(sin), xxs.map((v) => 2 * cos(v) * v)], 'jvp of vmap vmap');
  near(t, jax.vmap((x: Array) => jax.jvp(jax.vmap(f), [x], [x]))(xx), [xxs.map(sin), xxs.map((v) => 2 * cos(v) * v)], 'vmap of jvp of vmap');
  near(t, jax.grad((x: Array) => jax.vmap(f)(x).sum())(x), xs.map((v) => 2 * cos(v)), 'grad of vmap');
  near(t, jax.vmap(jax.grad(f))(x), xs.map((v) => 2 * cos(v)), 'vmap of grad');
});

test('customJvp under jit: jit, jit of jit, jit of jvp, jvp of jit, jit of grad, grad of jit (test_jit)', (t) => {
  const f = sinWithRule();
  const x = f32(3);
  near(t, jax.jit(f)(x), sin(3), 'jit');
  near(t, jax.jit(jax.jit(f))(x), sin(3), 'jit jit');
  near(t, jax.jit((x: Array) => jax.jvp(f, [x], [x]))(x), [sin(3), 2 * cos(3) * 3], 'jit of jvp');
  near(t, jax.jvp(jax.jit(f), [x], [x]), [sin(3), 2 * cos(3) * 3], 'jvp of jit');
  near(t, jax.jit(jax.grad(f))(x), 2 * cos(3), 'jit of grad');
  near(t, jax.grad(jax.jit(f))(x), 2 * cos(3), 'grad of jit');
  near(t, jax.jit(jax.grad(jax.grad(f)))(x), -2 * sin(3), 'jit of grad of grad');
});

test('customJvp under jit: the compiled program is the primal computation only; the jaxpr carries the rule', (t) => {
  const f = sinWithRule();
  const x = f32(3);
  const kernels = jax.jit(f).lower(x).compile().kernels();
  t.true(kernels.some((k) => k.source.includes('sin')), 'the primal sin is compiled');
  t.false(kernels.some((k) => /\bcosf?\(/.test(k.source)), 'the rule (cos) is not');
  const jaxpr = jax.makeJaxpr(f)(x).toString();
  t.true(jaxpr.includes('custom_jvp_call['), jaxpr);
  t.true(jaxpr.includes('name=f'), jaxpr);
  t.true(jaxpr.includes('jvp=f_jvp'), jaxpr);
  t.true(jaxpr.includes('symbolic_zeros=False'), jaxpr);
  t.true(/call_jaxpr=\{ lambda ; \w+:f32\[\]\. let\s+\w+:f32\[\] = sin/.test(jaxpr), jaxpr);
  // differentiated, the jit program computes the rule
  const gradKernels = jax.jit(jax.grad(f)).lower(x).compile().kernels();
  t.true(gradKernels.some((k) => /\bcosf?\(/.test(k.source)), 'grad under jit computes the rule');
});

test('customJvp pytrees in and out (test_pytrees)', (t) => {
  const f = jax.customJvp(function f(x: { a: Array }) {
    return { b: jnp.sin(x.a) };
  });
  f.defjvp(function f_jvp([x]: { a: Array }[], [g]: { a: Array }[]) {
    return [f(x), { b: jnp.cos(x.a).mul(2).mul(g.a) }];
  });
  const x = { a: f32(3) };
  near(t, f(x).b, sin(3), 'f');
  const [out, tangent] = jax.jvp(f, [x], [x]) as [{ b: Array }, { b: Array }];
  near(t, out.b, sin(3), 'jvp primal');
  near(t, tangent.b, 2 * cos(3) * 3, 'jvp tangent');
  near(t, jax.grad((x: { a: Array }) => f(x).b)(x), { a: 2 * cos(3) }, 'grad');
});

test('customJvp in a lax.scan body: grad, jit, grad of grad in every order (test_initial_style)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return x.mul(3);
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), g.mul(2)];
  });
  const foo = scanApply(f);
  near(t, foo(3), 9, 'scan');
  near(t, jax.grad(foo)(3), 2, 'grad');
  near(t, jax.grad(jax.jit(foo))(3), 2, 'grad of jit');
  near(t, jax.jit(jax.grad(foo))(f32(3)), 2, 'jit of grad');
  near(t, jax.grad(jax.grad(foo))(3), 0, 'grad of grad');
  near(t, jax.grad(jax.grad(jax.jit(foo)))(3), 0, 'grad grad jit');
  near(t, jax.grad(jax.jit(jax.grad(foo)))(3), 0, 'grad jit grad');
  near(t, jax.jit(jax.grad(jax.grad(foo)))(f32(3)), 0, 'jit grad grad');
});

test('customJvp in a scan body under vmap, jit and grad (test_initial_style_vmap)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    if (x.ndim !== 0) throw new Error('batched');
    return x.mul(3);
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), g.mul(2)];
  });
  const foo = scanApply(f);
  const ones = jnp.ones(3);
  near(t, jax.vmap(foo)(ones), [3, 3, 3], 'vmap');
  near(t, jax.vmap(jax.jit(foo))(ones), [3, 3, 3], 'vmap jit');
  near(t, jax.jit(jax.vmap(foo))(ones), [3, 3, 3], 'jit vmap');
  near(t, jax.grad((x: Array) => jax.vmap(foo)(x).sum())(ones), [2, 2, 2], 'grad vmap');
  near(t, jax.grad((x: Array) => jax.vmap(jax.jit(foo))(x).sum())(ones), [2, 2, 2], 'grad vmap jit');
  near(t, jax.grad((x: Array) => jax.jit(jax.vmap(foo))(x).sum())(ones), [2, 2, 2], 'grad jit vmap');
  near(t, jax.grad(jax.jit((x: Array) => jax.vmap(foo)(x).sum()))(ones), [2, 2, 2], 'grad of jit of vmap');
  near(t, jax.jit(jax.grad((x: Array) => jax.vmap(foo)(x).sum()))(ones), [2, 2, 2], 'jit of grad of vmap');
});

test('customJvp closing over an array constant, in a scan under vmap (test_initial_style_vmap_2)', (t) => {
  const y = jnp.arange(1, 4).astype('float32');
  const f = jax.customJvp(function f(x: Array) {
    return x.mul(3).mul(jnp.sum(y));
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), g.mul(2)];
  });
  const foo = scanApply(f);
  const ones = jnp.ones(3);
  near(t, jax.vmap(foo)(ones), [18, 18, 18], 'vmap');
  near(t, jax.grad((x: Array) => jax.vmap(foo)(x).sum())(ones), [2, 2, 2], 'grad vmap');
  near(t, jax.grad((x: Array) => jax.vmap(jax.jit(foo))(x).sum())(ones), [2, 2, 2], 'grad vmap jit');
  near(t, jax.grad((x: Array) => jax.jit(jax.vmap(foo))(x).sum())(ones), [2, 2, 2], 'grad jit vmap');
  near(t, jax.jit(jax.grad((x: Array) => jax.vmap(foo)(x).sum()))(ones), [2, 2, 2], 'jit grad vmap');
});

test('customJvp nondiffArgnums: a function argument goes first to the rule (test_nondiff_argnums)', (t) => {
  const app = jax.customJvp(function app(f: Fn, x: any) {
    return f(x);
  }, { nondiffArgnums: [0] });
  app.defjvp(function app_jvp(f: Fn, [x]: Array[], [g]: Array[]) {
    return [app(f, x), g.mul(3)];
  });
  t.is(app((x: number) => 2 * x, 1), 2, 'eager call is the function itself');
  near(t, jax.jvp((x: Array) => app((y: Array) => y.mul(2), x), [1], [1]), [2, 3], 'jvp');
  near(t, jax.grad((x: Array) => app((y: Array) => y.mul(2), x))(1), 3, 'grad');
  near(t, jax.jit(jax.grad((x: Array) => app((y: Array) => y.mul(2), x)))(f32(1)), 3, 'jit of grad');
});

test('customJvp nondiffArgnums with a vmap tracer (test_nondiff_arg_vmap_tracer)', (t) => {
  const f = jax.customJvp(function f(x: Array, y: Array) {
    return x.mul(y);
  }, { nondiffArgnums: [0] });
  f.defjvp(function f_jvp(x: Array, [y]: Array[], [ty]: Array[]) {
    return [f(x, y), ty.mul(5)];
  });
  const g = jax.vmap(f);
  near(t, jax.jvp((y: Array) => g(f32([2]), y), [f32([3])], [f32([1])]), [[6], [5]], 'jvp of vmap');
});

test('customJvp rule closing over a vmap tracer, called with no batched argument (test_closure_with_vmap2)', (t) => {
  const h = (z: Array) => {
    const f = (x: Array) => {
      const g = jax.customJvp(function g(y: Array) {
        return x.mul(y);
      });
      // the rule closes over the vmap tracer x
      g.defjvp(function g_jvp([y]: Array[], [ydot]: Array[]) {
        return [x.mul(y), x.mul(ydot)];
      });
      return g(z);
    };
    return jax.vmap(f)(arange(3));
  };
  const [primals, tangents] = jax.jvp(h, [f32(1)], [f32(2)]);
  near(t, primals, [0, 1, 2], 'primals');
  near(t, tangents, [0, 2, 4], 'tangents');
});

test('customJvp: a function of zeros, under jit, vmap and grad (test_hard_stuff2)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return jnp.zeros([...x.shape], { dtype: x.dtype });
  });
  f.defjvp(function f_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), g];
  });
  const x = arange(3);
  near(t, jax.jit(jax.vmap(f))(x), [0, 0, 0], 'jit vmap');
  near(t, jax.jit(jax.vmap(jax.grad(f)))(x), [1, 1, 1], 'jit vmap grad');
  near(t, jax.jit(jax.grad((x: Array) => jax.vmap(f)(x).sum()))(x), [1, 1, 1], 'jit grad vmap');
  near(t, jax.grad((x: Array) => jax.vmap(f)(x).sum())(x), [1, 1, 1], 'grad vmap');
  near(t, jax.jvp(jax.vmap(f), [x], [jnp.ones(3)]), [[0, 0, 0], [1, 1, 1]], 'jvp vmap');
});

test('customJvp relu in a multi-carry scan: every composition agrees (test_hard_stuff3)', (t) => {
  const relu = jax.customJvp(function relu(x: Array) {
    return jnp.maximum(x, 0);
  });
  relu.defjvp(function relu_jvp([x]: Array[], [g]: Array[]) {
    return [relu(x), jnp.where(lax.gt(x, 0), g, jnp.zerosLike(g))];
  });
  const make = (r: Fn) => (x: Array) => {
    const zero = jnp.zerosLike(x);
    const [c] = lax.scan((c: Array[]) => [[r(c[0]!), ...c.slice(1).map((ci, i) => c[i]!.add(ci))], null], [x, zero, zero, zero, zero], null, { length: 10 });
    return (c as Array[])[4]!;
  };
  const f = make(relu);
  // the same function with JAX's relu derivative (0 at 0) written out
  const reference = make((x: Array) => jnp.where(lax.gt(x, 0), x, jnp.zerosLike(x)));
  const x = arange(3).sub(1);
  const value = jax.vmap(reference)(x);
  const gradient = jax.vmap(jax.grad(reference))(x);
  near(t, jax.jit(jax.vmap(f))(x), value, 'jit vmap');
  near(t, jax.jit(jax.vmap(jax.grad(f)))(x), gradient, 'jit vmap grad');
  near(t, jax.jit(jax.grad((x: Array) => jax.vmap(f)(x).sum()))(x), gradient, 'jit grad vmap');
  near(t, jax.grad((x: Array) => jax.vmap(f)(x).sum())(x), gradient, 'grad vmap');
  near(t, jax.jvp(jax.jit(jax.vmap(f)), [x], [jnp.ones(3)])[1], gradient, 'jvp jit vmap');
});

test('customJvp under evalShape (test_eval_shape)', (t) => {
  const expit = jax.customJvp(function expit(x: Array) {
    return jnp.divide(1, jnp.add(1, jnp.exp(x.neg())));
  });
  expit.defjvp(function expit_jvp([x]: Array[], [g]: Array[]) {
    const ans = expit(x);
    return [ans, g.mul(ans).mul(jnp.subtract(1, ans))];
  });
  const shaped = jax.evalShape(expit, jnp.ones([2, 3])) as unknown as { shape: number[]; dtype: string };
  t.deepEqual([...shaped.shape], [2, 3]);
  const shapedGrad = jax.evalShape(jax.grad((x: Array) => expit(x).sum()), jnp.ones([2, 3])) as unknown as { shape: number[]; dtype: string };
  t.deepEqual([...shapedGrad.shape], [2, 3]);
  t.is(shapedGrad.dtype, 'float32');
});

test('customJvp with a matmul rule inside scan: zero tangents of closed-over constants (test_jaxpr_zeros)', (t) => {
  const f = jax.customJvp(function f(A: Array, b: Array) {
    return jnp.matmul(A, b);
  });
  f.defjvp(function f_jvp([A, b]: Array[], [dA, db]: Array[]) {
    return [f(A, b), jnp.matmul(A, db).add(jnp.matmul(dA, b))];
  });
  const experiment = (theta: Array) => {
    const [q] = lax.scan((q: Array) => {
      const z = f(jnp.eye(3), jnp.ones(3).mul(theta)) as Array;
      const next = q.add(z.index(0));
      return [next, next];
    }, f32(0), null, { length: 4 });
    return q;
  };
  near(t, experiment(f32(1)), 4, 'value');
  near(t, jax.grad(experiment)(1), 4, 'grad');
});

test('customJvp whose rule applies the function to tangents, in a scan: the call is transposed (test_linear_in_scan)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return x.neg();
  });
  f.defjvp(function f_jvp([x]: Array[], [xDot]: Array[]) {
    return [f(x), f(xDot)];
  });
  near(t, jax.grad(scanApply(f))(3), -1, 'grad through scan');
  near(t, jax.grad(f)(3), -1, 'grad');
});

test('customJvp defjvps with a null first rule (test_custom_jvps_first_rule_is_none)', (t) => {
  const f = jax.customJvp(function f(x: Array, y: Array) {
    return jnp.square(x).mul(y);
  });
  f.defjvps(null, (yDot: Array, _out: Array, x: Array, y: Array) => x.mul(2).mul(y).mul(yDot));
  near(t, jax.grad(f, 1)(2, 3), 12, 'grad wrt y');
  near(t, jax.grad(f, 0)(2, 3), 0, 'no rule for x: zero');
});

test('customJvp: a rule broadcasting against a closed-over array unbroadcasts (test_custom_jvp_unbroadcasting)', (t) => {
  const a = f32([1, 1]);
  const f = jax.customJvp(function f(x: Array) {
    return a.mul(x);
  });
  f.defjvp(function f_jvp([x]: Array[], [dx]: Array[]) {
    return [a.mul(x), a.mul(dx)];
  });
  const g = jax.grad((x: Array) => jnp.sum(f(x)))(f32(1)) as Array;
  t.deepEqual([...g.shape], []);
  near(t, g, 2, 'grad');
});

test('customJvp under checkpoint / remat (test_remat, test_remat_higher_order)', (t) => {
  const f = sinWithRule();
  const g = (x: Array) => f(f(x));
  const rg = jax.remat(g);
  near(t, rg(f32(2)), sin(sin(2)), 'remat value');
  const plain = jax.grad((x: Array) => jnp.sin(jnp.sin(x)))(2) as Array;
  near(t, jax.grad(rg)(2), plain.mul(4), 'grad of remat: the rule twice');
  near(t, jax.grad(jax.grad(jax.checkpoint(g)))(2), jax.grad(jax.grad(g))(2), 'grad grad checkpoint');
  near(t, jax.grad(jax.checkpoint(jax.grad(g)))(2), jax.grad(jax.grad(g))(2), 'grad checkpoint grad');
  near(t, jax.grad(jax.grad(jax.grad(jax.checkpoint(g))))(2), jax.grad(jax.grad(jax.grad(g)))(2), 'grad^3 checkpoint');
});

test('customJvp tutorial: f(x, y) = sin(x) * y with defjvp and with defjvps', (t) => {
  const f = jax.customJvp(function f(x: Array, y: Array) {
    return jnp.sin(x).mul(y);
  });
  f.defjvp(function f_jvp([x, y]: Array[], [xDot, yDot]: Array[]) {
    return [f(x, y), jnp.cos(x).mul(xDot).mul(y).add(jnp.sin(x).mul(yDot))];
  });
  near(t, f(2, 3), 2.7278922, 'f(2, 3)');
  near(t, jax.jvp(f, [2, 3], [1, 0]), [2.7278922, -1.2484405], 'jvp');
  near(t, jax.grad(f)(2, 3), -1.2484405, 'grad');

  const h = jax.customJvp(function h(x: Array, y: Array) {
    return jnp.sin(x).mul(y);
  });
  h.defjvps((xDot: Array, _out: Array, x: Array, y: Array) => jnp.cos(x).mul(xDot).mul(y), (yDot: Array, _out: Array, x: Array) => jnp.sin(x).mul(yDot));
  near(t, jax.grad(h, [0, 1])(2, 3), [-1.2484405, 0.9092974], 'grad of the defjvps version');
});

test('customJvp tutorial: log1pexp is stable (grad at 100 is 1, not nan), under jit and vmap', (t) => {
  const naive = (x: Array) => jnp.log(jnp.add(1, jnp.exp(x)));
  near(t, jax.grad(naive)(100), NaN, 'the naive gradient is nan');
  const log1pexp = jax.customJvp(function log1pexp(x: Array) {
    return jnp.log(jnp.add(1, jnp.exp(x)));
  });
  log1pexp.defjvp(function log1pexp_jvp([x]: Array[], [xDot]: Array[]) {
    const ans = log1pexp(x);
    return [ans, jnp.subtract(1, jnp.divide(1, jnp.add(1, jnp.exp(x)))).mul(xDot)];
  });
  near(t, jax.grad(log1pexp)(100), 1, 'grad at 100');
  near(t, jax.jit(log1pexp)(f32(3)), 3.0485873, 'jit');
  near(t, jax.jit(jax.grad(log1pexp))(f32(3)), 0.95257413, 'jit of grad');
  near(t, jax.vmap(jax.jit(jax.grad(log1pexp)))(arange(3)), [0.5, 0.7310586, 0.8807971], 'vmap of jit of grad');
});

test('customJvp tutorial: x / (1 + sqrt(x)) has gradient 1 at 0 instead of nan', (t) => {
  const naive = (x: Array) => x.div(jnp.add(1, jnp.sqrt(x)));
  near(t, jax.grad(naive)(0), NaN, 'naive');
  const f = jax.customJvp(function f(x: Array) {
    return x.div(jnp.add(1, jnp.sqrt(x)));
  });
  f.defjvp(function f_jvp([x]: Array[], [xDot]: Array[]) {
    const s = jnp.sqrt(x);
    return [f(x), s.add(2).div(jnp.square(s.add(1)).mul(2)).mul(xDot)];
  });
  near(t, jax.grad(f)(0), 1, 'custom');
});

test('customJvp errors: no rule (test_missing_jvp_rule_error_message)', (t) => {
  const foo = jax.customJvp(function foo(x: Array) {
    return jnp.square(x);
  });
  for (const call of [() => foo(2), () => jax.jvp(foo, [2], [1]), () => jax.grad(foo)(2)]) {
    const e = t.throws(call);
    t.is(e?.name, 'AttributeError');
    t.is(e?.message, 'No JVP defined for custom_jvp function foo using defjvp.');
  }
});

test('customJvp errors: a rule whose primal and tangent structures differ (test_jvp_rule_inconsistent_pytree_structures_error_message)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return [jnp.square(x)];
  });
  f.defjvp(function foo_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), [x.mul(2).mul(g), x]];
  });
  near(t, f(2), [4], 'the function itself is fine');
  const e = t.throws(() => jax.jvp(f, [2], [1]), { instanceOf: TypeError });
  t.is(e?.message, 'Custom JVP rule foo_jvp for function f must produce primal and tangent outputs with equal container (pytree) structures, but got PyTreeDef([*]) and PyTreeDef([*, *]) respectively.');
});

test('customJvp errors: a tangent of another shape (test_primal_tangent_aval_disagreement_error_message)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return jnp.square(x);
  });
  f.defjvp(function foo_jvp([x]: Array[], [g]: Array[]) {
    return [f(x), jnp.reshape(g, [1])];
  });
  near(t, f(2), 4, 'the function itself is fine');
  const e = t.throws(() => jax.jvp(f, [f32(2)], [f32(1)]), { instanceOf: TypeError });
  t.is(e?.message, 'Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. Expected float32[] (tangent type of float32[]) but got float32[1].');
});

test('customJvp errors: a rule that does not return a pair (test_jvp_rule_doesnt_return_pair_error_message)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return jnp.square(x);
  });
  f.defjvp(function foo_jvp(_primals: Array[], [g]: Array[]) {
    return g;
  });
  const e = t.throws(() => jax.jvp(f, [2], [1]), { instanceOf: TypeError });
  t.true(e!.message.startsWith('Custom JVP rule foo_jvp for function f must produce a pair (list or tuple of length two) representing primal and tangent outputs, but got 1'), e!.message);
});

test('customJvp errors: a rule whose primal output differs from the function\'s, in a scan (test_jvp_rule_primal_out_type_doesnt_match_primal_error_message)', (t) => {
  const f = jax.customJvp(function f(x: Array) {
    return x;
  });
  f.defjvp(function f_jvp([x]: Array[], [xdot]: Array[]) {
    return [[x, x], [xdot, xdot]];
  });
  const x = f32(1);
  let e = t.throws(() => jax.jvp(scanApply(f), [x], [x]), { instanceOf: TypeError });
  t.is(e?.message,
    'Custom JVP rule f_jvp for function f must produce a pair (list or tuple of length two) where the first element represents the primal ' +
    'output (equal in value to the output of the custom_jvp-decorated function f, and in particular of the same container/pytree structure), ' +
    "but instead the JVP rule output's first element had container/pytree structure:\n    [float32[], float32[]]\n" +
    'while the custom_jvp-decorated function f had output container/pytree structure:\n    float32[].');
  f.defjvp(function f_jvp2([x]: Array[], [xdot]: Array[]) {
    return [jnp.zeros([3, ...x.shape], { dtype: x.dtype }), xdot];
  });
  e = t.throws(() => jax.jvp(scanApply(f), [x], [x]), { instanceOf: TypeError });
  t.is(e?.message,
    'Custom JVP rule f_jvp2 for function f must produce a pair (list or tuple of length two) where the first element represents the primal ' +
    'output (equal in value to the output of the custom_jvp-decorated function f, and in particular with leaves of the same shape/dtype), ' +
    "but instead the JVP rule output's first element had shapes/dtypes of:\n    float32[3]\n" +
    'while the custom_jvp-decorated function f had output shapes/dtypes of:\n    float32[]');
});

test('customJvp errors: differentiating with respect to a closed-over value raises JAX\'s CustomJVPException', (t) => {
  const outer = (x: Array) => {
    const g = jax.customJvp(function g(y: Array) {
      return x.add(y);
    });
    g.defjvp(function g_jvp([y]: Array[], [ty]: Array[]) {
      return [g(y), ty.mul(2)];
    });
    return g(f32(1));
  };
  const e = t.throws(() => jax.grad(outer)(3));
  t.is(e?.name, 'CustomJVPException');
  t.true(e!.message.startsWith('Detected differentiation of a custom_jvp function with respect to a closed-over value.'), e!.message);
  // the closed-over value is fine when it is not differentiated
  near(t, jax.jit(outer)(f32(3)), 4, 'jit');
  near(t, jax.vmap(outer)(arange(3)), [1, 2, 3], 'vmap');
});

// ---- custom_vjp ----

test('customVjp basic: eager, grad and valueAndGrad use fwd and bwd (test_basic)', (t) => {
  const f = sinWithVjp();
  near(t, f(3), sin(3), 'f');
  near(t, jax.grad(f)(3), 2 * cos(3), 'grad');
  near(t, jax.valueAndGrad(f)(3), [sin(3), 2 * cos(3)], 'valueAndGrad');
  const [out, pullback] = jax.vjp(f, 3);
  near(t, out, sin(3), 'vjp value');
  near(t, pullback(f32(2)), [4 * cos(3)], 'vjp pullback');
});

test('customVjp: grad of grad differentiates fwd and bwd (test_initial_style, second order)', (t) => {
  const f = sinWithVjp();
  near(t, jax.grad(jax.grad(f))(3), -2 * sin(3), 'grad of grad');
  near(t, jax.jit(jax.grad(jax.grad(f)))(f32(3)), -2 * sin(3), 'jit of grad of grad');
  near(t, jax.grad(jax.jit(jax.grad(f)))(3), -2 * sin(3), 'grad of jit of grad');
});

test('customVjp invariance: valueAndGrad of a function calling valueAndGrad (test_invariance)', (t) => {
  const f = jax.customVjp(function f(x: Array) {
    return jnp.cos(x.mul(2)).div(2);
  });
  f.defvjp((x: Array) => [f(x), x], (_x: Array, g: Array) => [g.mul(3)]);
  const f2 = (x: Array) => jax.valueAndGrad(f)(x)[0];
  const f3 = (x: Array) => jax.valueAndGrad(f2)(x)[0];
  near(t, f2(f32(1)), f(1), 'f2');
  near(t, f3(f32(1)), f(1), 'f3');
  near(t, jax.grad(f)(1), 3, 'grad f');
  near(t, jax.grad(f2)(1), 3, 'grad f2');
  near(t, jax.grad(f3)(1), 3, 'grad f3');
});

test('customVjp under vmap: vmap of grad, grad of vmap, vmap of grad of vmap (test_vmap)', (t) => {
  const f = jax.customVjp(function f(x: Array) {
    if (x.ndim !== 0) throw new Error('batched');
    return jnp.sin(x);
  });
  f.defvjp(function f_fwd(x: Array) {
    if (x.ndim !== 0) throw new Error('batched fwd');
    return [f(x), jnp.cos(x)];
  }, (cosX: Array, g: Array) => [cosX.mul(2).mul(g)]);
  const x = arange(3);
  const xx = arange(6).reshape([2, 3]);
  const xs = [0, 1, 2];
  const xxs = [0, 1, 2, 3, 4, 5];
  near(t, jax.vmap(f)(x), xs.map(sin), 'vmap');
  near(t, jax.vmap(jax.vmap(f))(xx), xxs.map(sin), 'vmap vmap');
  near(t, jax.vmap(jax.grad(f))(x), xs.map((v) => 2 * cos(v)), 'vmap grad');
  near(t, jax.vmap(jax.valueAndGrad(f))(x), [xs.map(sin), xs.map((v) => 2 * cos(v))], 'vmap valueAndGrad');
  near(t, jax.vmap(jax.vmap(jax.grad(f)))(xx), xxs.map((v) => 2 * cos(v)), 'vmap vmap grad');
  near(t, jax.grad((x: Array) => jax.vmap(f)(x).sum())(x), xs.map((v) => 2 * cos(v)), 'grad vmap');
  near(t, jax.grad((x: Array) => jax.vmap(jax.vmap(f))(x).sum())(xx), xxs.map((v) => 2 * cos(v)), 'grad vmap vmap');
  near(t, jax.vmap(jax.grad((x: Array) => jax.vmap(f)(x).sum()))(xx), xxs.map((v) => 2 * cos(v)), 'vmap grad vmap');
});

test('customVjp under jit: jit, jit of jit, jit of grad, grad of jit; the compiled program is the primal only (test_jit)', (t) => {
  const f = sinWithVjp();
  const x = f32(3);
  near(t, jax.jit(f)(x), sin(3), 'jit');
  near(t, jax.jit(jax.jit(f))(x), sin(3), 'jit jit');
  near(t, jax.jit(jax.grad(f))(x), 2 * cos(3), 'jit grad');
  near(t, jax.grad(jax.jit(f))(x), 2 * cos(3), 'grad jit');
  const kernels = jax.jit(f).lower(x).compile().kernels();
  t.false(kernels.some((k) => /\bcosf?\(/.test(k.source)), 'fwd\'s cos is not in the primal program');
  t.true(jax.makeJaxpr(f)(x).toString().includes('custom_vjp_call['));
});

test('customVjp pytrees in, out and in the residuals (test_pytrees)', (t) => {
  const f = jax.customVjp(function f(x: { a: Array }) {
    return { b: jnp.sin(x.a) };
  });
  f.defvjp((x: { a: Array }) => [f(x), { r: jnp.cos(x.a) }], (res: { r: Array }, g: { b: Array }) => [{ a: res.r.mul(2).mul(g.b) }]);
  const x = { a: f32(3) };
  near(t, f(x).b, sin(3), 'f');
  near(t, jax.grad((x: { a: Array }) => f(x).b)(x), { a: 2 * cos(3) }, 'grad');
});

test('customVjp: forward mode raises JAX\'s error, also under vmap and jit (test_jvp_error)', (t) => {
  const f = sinWithVjp();
  const message = "can't apply forward-mode autodiff (jvp) to a custom_vjp function.";
  for (const call of [
    () => jax.jvp(f, [3], [1]),
    () => jax.jvp(jax.vmap(f), [arange(3)], [jnp.ones(3)]),
    () => jax.jvp(jax.jit(f), [f32(3)], [f32(1)]),
  ]) {
    const e = t.throws(call, { instanceOf: TypeError });
    t.is(e?.message, message);
  }
});

test('customVjp in a lax.scan body: grad and grad of grad (test_initial_style)', (t) => {
  const foo = scanApply(sinWithVjp());
  near(t, jax.grad(foo)(3), 2 * cos(3), 'grad');
  near(t, jax.grad(jax.grad(foo))(3), -2 * sin(3), 'grad of grad');
  near(t, jax.jit(jax.grad(foo))(f32(3)), 2 * cos(3), 'jit of grad');
});

test('customVjp in a scan body under vmap (test_initial_style_vmap, test_initial_style_vmap_3)', (t) => {
  const f = jax.customVjp(function f(x: Array) {
    if (x.ndim !== 0) throw new Error('batched');
    return x.mul(3);
  });
  f.defvjp((x: Array) => [f(x), jnp.cos(x)], (cosX: Array, g: Array) => [cosX.mul(2).mul(g)]);
  const foo = scanApply(f);
  const x = arange(3);
  near(t, jax.vmap(foo)(x), [0, 3, 6], 'vmap');
  near(t, jax.grad((x: Array) => jax.vmap(foo)(x).sum())(x), [0, 1, 2].map((v) => 2 * cos(v)), 'grad vmap');

  const y = jnp.arange(1, 4).astype('float32');
  const h = jax.customVjp(function h(x: Array) {
    return x.mul(3).mul(jnp.sum(y));
  });
  h.defvjp((x: Array) => [h(x), jnp.cos(x)], (cosX: Array, g: Array) => [cosX.mul(2).mul(g)]);
  const bar = scanApply(h);
  near(t, jax.vmap(bar)(x), [0, 18, 36], 'vmap, closing over an array');
  near(t, jax.grad((x: Array) => jax.vmap(bar)(x).sum())(x), [0, 1, 2].map((v) => 2 * cos(v)), 'grad vmap, closing over an array');
});

test('customVjp nondiffArgnums: fwd takes every argument, bwd the nondiff ones first (test_nondiff_argnums)', (t) => {
  const app = jax.customVjp(function app(f: Fn, x: Array) {
    return f(x);
  }, { nondiffArgnums: [0] });
  app.defvjp((f: Fn, x: Array) => [app(f, x), jnp.cos(x)], (_f: Fn, cosX: Array, g: Array) => [cosX.mul(g)]);
  t.is(app((x: number) => 2 * x, 1), 2);
  near(t, jax.valueAndGrad((x: Array) => app((y: Array) => y.mul(2), x))(1), [2, cos(1)], 'valueAndGrad');
});

test('customVjp closing over a vmap tracer (test_closed_over_vmap_tracer, test_closed_over_tracer3)', (t) => {
  const outer = (x: Array) => {
    const f = jax.customVjp(function f(y: Array) {
      return x.mul(y);
    });
    f.defvjp((y: Array) => [f(y), [x, jnp.cos(y)]], ([x, cosY]: Array[], g: Array) => [cosY.mul(g).mul(x)]);
    return f;
  };
  near(t, jax.vmap((x: Array) => outer(x)(3))(arange(3)), [0, 3, 6], 'vmap');
  near(t, jax.vmap((x: Array) => jax.grad(outer(x))(3))(arange(3)), [0, 1, 2].map((v) => cos(3) * v), 'vmap of grad');
});

test('customVjp: a tracer among nondiff arguments raises UnexpectedTracerError (test_nondiff_arg_tracer_error)', (t) => {
  const f = jax.customVjp(function f(x: Array, y: Array) {
    return x.mul(y);
  }, { nondiffArgnums: [0] });
  f.defvjp((x: Array, y: Array) => [f(x, y), jnp.cos(y)], (_x: Array, cosY: Array, g: Array) => [cosY.mul(g)]);
  const g = jax.jit((x: Array, y: Array) => f(x, y));
  for (const call of [() => g(f32(2), f32(3)), () => jax.grad(g, 1)(2, 3)]) {
    const e = t.throws(call);
    t.is(e?.name, 'UnexpectedTracerError');
    t.true(e!.message.includes('custom_vjp'), e!.message);
  }
});

test('customVjp errors: no rule (test_missing_vjp_rule_error)', (t) => {
  const foo = jax.customVjp(function foo(x: Array) {
    return jnp.square(x);
  });
  for (const call of [() => foo(2), () => jax.grad(foo)(2)]) {
    const e = t.throws(call);
    t.is(e?.name, 'AttributeError');
    t.is(e?.message, 'No VJP defined for custom_vjp function foo using defvjp.');
  }
});

test('customVjp errors: bwd output of the wrong structure, or not a tuple (test_vjp_rule_inconsistent_pytree_structures_error, test_vjp_bwd_returns_non_tuple_error)', (t) => {
  const f = jax.customVjp(function f(x: Array) {
    return x;
  });
  f.defvjp((x: Array) => [x, null], (_: unknown, g: Array) => [g, g]);
  near(t, f(2), 2, 'the function itself is fine');
  let e = t.throws(() => jax.grad(f)(2), { instanceOf: TypeError });
  t.is(e?.message,
    'Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args tuple of the primal function, ' +
    'and in particular must produce a tuple of length equal to the number of arguments to the primal function, but got bwd output ' +
    'structure PyTreeDef([*, *]) for primal input structure PyTreeDef([*]).');
  f.defvjp((x: Array) => [x, null], (_: unknown, g: Array) => g.mul(2));
  e = t.throws(() => jax.grad(f)(3), { instanceOf: TypeError });
  t.regex(e!.message, /^Custom VJP bwd rule .* must produce a tuple/);
});

test('customVjp errors: a fwd rule whose primal output differs from the function\'s, in a scan (test_fwd_rule_primal_out_type_doesnt_match_primal_error_message)', (t) => {
  const f = jax.customVjp(function f(x: Array) {
    return x;
  });
  f.defvjp(function f_fwd(x: Array) {
    return [[x, x], null];
  }, (_: unknown, yBar: Array) => [yBar]);
  const residuals = 'and the second element represents residuals (i.e. values stored from the forward pass for use on the backward pass), ';
  let e = t.throws(() => jax.grad(scanApply(f))(f32(1)), { instanceOf: TypeError });
  t.is(e?.message,
    'Custom VJP fwd rule f_fwd for function f must produce a pair (list or tuple of length two) where the first element represents the ' +
    `primal output (equal to the output of the custom_vjp-decorated function f) ${residuals}but instead the fwd rule output's first element ` +
    'had container/pytree structure:\n    [float32[], float32[]]\nwhile the custom_vjp-decorated function f had output container/pytree structure:\n    float32[].');
  f.defvjp(function f_fwd2(x: Array) {
    return [jnp.zeros([3, ...x.shape], { dtype: x.dtype }), null];
  }, (_: unknown, yBar: Array) => [yBar]);
  e = t.throws(() => jax.grad(scanApply(f))(f32(1)), { instanceOf: TypeError });
  t.is(e?.message,
    'Custom VJP fwd rule f_fwd2 for function f must produce a pair (list or tuple of length two) where the first element represents the ' +
    `primal output (equal to the output of the custom_vjp-decorated function f) ${residuals}but instead the fwd rule output's first element ` +
    'had shapes/dtypes of:\n    float32[3]\nwhile the custom_vjp-decorated function f had output shapes/dtypes of:\n    float32[]');
});

test('customVjp errors: differentiating with respect to a closed-over value raises JAX\'s CustomVJPException', (t) => {
  const outer = (x: Array) => {
    const f = jax.customVjp(function f(y: Array) {
      return x.mul(y);
    });
    f.defvjp((y: Array) => [f(y), y], (_y: Array, g: Array) => [g.mul(x)]);
    return f(f32(2));
  };
  const e = t.throws(() => jax.grad(outer)(3));
  t.is(e?.name, 'CustomVJPException');
  t.true(e!.message.startsWith('Detected differentiation of a custom_vjp function with respect to a closed-over value.'), e!.message);
});

test('customVjp clip_gradient (test_clip_gradient and the tutorial\'s clip_sin)', (t) => {
  const clipGradient = jax.customVjp(function clipGradient(_lo: Array, _hi: Array, x: Array) {
    return x;
  });
  clipGradient.defvjp((lo: Array, hi: Array, x: Array) => [x, [lo, hi]], ([lo, hi]: Array[], g: Array) => [null, null, jnp.clip(g, lo, hi)]);
  near(t, jax.grad((x: Array) => clipGradient(-0.1, x.add(0.1), x))(0.1), 0.2, 'test_clip_gradient');

  const clipSin = (x: Array) => jnp.sin(clipGradient(-0.75, 0.75, x));
  const ts = jnp.linspace(0, 10, 50);
  const values = leaves(ts);
  near(t, jax.vmap(clipSin)(ts), values.map(sin), 'clip_sin');
  near(t, jax.vmap(jax.grad(clipSin))(ts), values.map((v) => Math.min(0.75, Math.max(-0.75, cos(v)))), 'grad of clip_sin is clipped', 1e-4);
  near(t, jax.jit(jax.vmap(jax.grad(clipSin)))(ts), values.map((v) => Math.min(0.75, Math.max(-0.75, cos(v)))), 'under jit', 1e-4);
});

test('customVjp tutorial: f(x, y) = sin(x) * y, and the docstring\'s valueAndGrad', (t) => {
  const f = jax.customVjp(function f(x: Array, y: Array) {
    return jnp.sin(x).mul(y);
  });
  f.defvjp((x: Array, y: Array) => [f(x, y), [jnp.cos(x), jnp.sin(x), y]], ([cosX, sinX, y]: Array[], g: Array) => [cosX.mul(g).mul(y), sinX.mul(g)]);
  near(t, f(2, 3), 2.7278922, 'f(2, 3)');
  near(t, jax.grad(f)(2, 3), -1.2484405, 'grad');
  near(t, jax.grad(f, [0, 1])(2, 3), [-1.2484405, 0.9092974], 'grad wrt both');
  near(t, jax.valueAndGrad(f)(f32(1), f32(2)), [1.6829419, 1.0806046], 'valueAndGrad(f)(1, 2) = (1.68, 1.08)');
});

test('customVjp: bwd closing over an outer tracer under jit, vmap and grad (test_bwd_closes_over_tracer)', (t) => {
  const outer = (y: Array) => {
    const f = jax.customVjp(function f(x: Array) {
      return jnp.sin(x).mul(2);
    });
    f.defvjp((x: Array) => [f(x), []], (_: unknown, g: Array) => [jnp.cos(y).mul(2).mul(g)]);
    return jax.grad(f)(1);
  };
  near(t, jax.jit(outer)(f32(2)), 2 * cos(2), 'jit');
  near(t, jax.vmap(outer)(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'vmap');
  near(t, jax.jit(jax.vmap(outer))(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'jit vmap');
  near(t, jax.vmap(jax.jit(outer))(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'vmap jit');
  near(t, jax.grad(outer)(4), -2 * sin(4), 'grad');
});

test('customVjp: fwd closing over an outer tracer (test_fwd_closes_over_tracer)', (t) => {
  const outer = (y: Array) => {
    const f = jax.customVjp(function f(x: Array) {
      return jnp.sin(x).mul(2);
    });
    f.defvjp((x: Array) => [f(x), y], (y: Array, g: Array) => [jnp.cos(y).mul(2).mul(g)]);
    return jax.grad(f)(1);
  };
  near(t, jax.jit(outer)(f32(2)), 2 * cos(2), 'jit');
  near(t, jax.vmap(outer)(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'vmap');
  near(t, jax.jit(jax.vmap(outer))(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'jit vmap');
  near(t, jax.vmap(jax.jit(outer))(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'vmap jit');
});

test('customVjp under checkpoint / remat (test_remat, test_remat_higher_order)', (t) => {
  const f = sinWithVjp();
  const g = (x: Array) => f(f(x));
  const rg = jax.remat(g);
  near(t, rg(f32(2)), sin(sin(2)), 'remat value');
  const plain = jax.grad((x: Array) => jnp.sin(jnp.sin(x)))(2) as Array;
  near(t, jax.grad(rg)(2), plain.mul(4), 'grad of remat');
  near(t, jax.grad(jax.grad(jax.remat(g)))(2), jax.grad(jax.grad(g))(2), 'grad grad remat');
  near(t, jax.grad(jax.remat(jax.grad(g)))(2), jax.grad(jax.grad(g))(2), 'grad remat grad');
  near(t, jax.grad(jax.grad(jax.grad(jax.remat(g))))(2), jax.grad(jax.grad(jax.grad(g)))(2), 'grad^3 remat');
});

test('customVjp: null cotangents from bwd are zeros, for arguments and subtrees, under vmap (test_bwd_nones, _vmap, _pytree, test_float0_bwd_none)', (t) => {
  const f = jax.customVjp(function f(x: Array, y: Array) {
    return x.mul(jnp.sin(y));
  });
  f.defvjp((x: Array, y: Array) => [f(x, y), jnp.cos(y)], (cosY: Array, g: Array) => [null, cosY.mul(2).mul(g)]);
  near(t, jax.grad((x: Array) => f(x, x))(3), 2 * cos(3), 'bwd nones');
  near(t, jax.grad((x: Array) => jax.vmap(f)(x, x).sum())(arange(3)), [0, 1, 2].map((v) => 2 * cos(v)), 'under vmap');

  const h = jax.customVjp(function h(xs: Array[], y: Array) {
    return xs[0]!.mul(xs[1]!).mul(jnp.sin(y));
  });
  h.defvjp((xs: Array[], y: Array) => [h(xs, y), jnp.cos(y)], (cosY: Array, g: Array) => [null, cosY.mul(2).mul(g)]);
  near(t, jax.grad((x: Array) => h([x, x], x))(3), 2 * cos(3), 'a null for a whole pytree argument');

  const k = jax.customVjp(function k(_i: Array, x: Array) {
    return jnp.sin(x);
  });
  k.defvjp((i: Array, x: Array) => [k(i, x), jnp.cos(x)], (cosX: Array, g: Array) => [null, cosX.mul(2).mul(g)]);
  near(t, jax.grad(k, 1)(jnp.array([1, 2], { dtype: 'int32' }), 3), 2 * cos(3), 'an integer argument');
});

test('customVjp in a scan under vmap: vjp and check_grads (test_custom_vjp_scan_batching_edge_case)', (t) => {
  const mul = jax.customVjp(function mul(x: Array, coeff: Array) {
    return x.mul(coeff);
  });
  mul.defvjp((x: Array, coeff: Array) => [mul(x, coeff), [x, coeff]], ([x, coeff]: Array[], g: Array) => [g.mul(coeff), x.mul(g).sum()]);
  const scanOverMul = (x: Array, coeff: Array) => lax.scan((x: Array) => [mul(x, coeff), null], x, jnp.arange(3))[0];
  const xBatch = f32([0.3, -1.2, 0.5, 2.0, -0.7, 1.1]).reshape([3, 2]);
  const covector = f32([1, -2, 0.5, 0.25, 3, -1]).reshape([3, 2]);
  const coeff = f32(1);
  const batched = jax.vmap(scanOverMul, [0, null]);
  const [, vjpFun] = jax.vjp(batched, xBatch, coeff);
  const [gx, gc] = vjpFun(covector) as [Array, Array];
  // coeff is 1: each of the 3 steps passes g through and adds x·g to coeff's cotangent
  near(t, gx, leaves(covector), 'x cotangent');
  near(t, gc, 3 * leaves(xBatch).reduce((s, v, i) => s + v * leaves(covector)[i]!, 0), 'coeff cotangent');
  checkGrads(t, batched, [xBatch, coeff], { order: 2, modes: ['rev'] });
});

test('customVjp closing over a vmap tracer: check_grads through vmap (test_closure_with_vmap2)', (t) => {
  const h = (z: Array) => {
    const f = (x: Array) => {
      const g = jax.customVjp(function g(y: Array) {
        return x.mul(y);
      });
      g.defvjp((y: Array) => [x.mul(y), [x, x.mul(y), y]], ([x]: Array[], wBar: Array) => [x.mul(wBar)]);
      return g(z);
    };
    return jax.vmap(f)(arange(3)).sum();
  };
  near(t, jax.grad(h)(f32(3.14)), 3, 'grad');
  checkGrads(t, h, [f32(3.14)], { order: 1, modes: ['rev'] });
});

test('customVjp: a vjp of vmap can be pulled back twice (test_vmap_vjp_called_twice)', (t) => {
  const f = jax.customVjp(function f(x: Array) {
    return x;
  });
  f.defvjp((x: Array) => [x, null], (_: unknown, yBar: Array) => [yBar]);
  const [, fVjp] = jax.vjp(jax.vmap(f), f32([3]));
  near(t, fVjp(f32([3])), [[3]], 'first');
  near(t, fVjp(f32([3])), [[3]], 'second');
});

test('customJvp and customVjp under jacfwd, jacrev, hessian and linearize', (t) => {
  const f = sinWithRule();
  const g = sinWithVjp();
  const x = f32([0.5, 1, 2]);
  const diag = (values: number[]) => values.flatMap((v, i) => values.map((_, j) => (i === j ? v : 0)));
  const xs = [0.5, 1, 2];
  near(t, jax.jacfwd(f)(x), diag(xs.map((v) => 2 * cos(v))), 'jacfwd of customJvp');
  near(t, jax.jacrev(f)(x), diag(xs.map((v) => 2 * cos(v))), 'jacrev of customJvp');
  near(t, jax.hessian((x: Array) => f(x).sum())(x), diag(xs.map((v) => -2 * sin(v))), 'hessian of customJvp');
  near(t, jax.jacrev(g)(x), diag(xs.map((v) => 2 * cos(v))), 'jacrev of customVjp');
  near(t, jax.jacrev(jax.grad((x: Array) => g(x).sum()))(x), diag(xs.map((v) => -2 * sin(v))), 'reverse over reverse of customVjp');
  const [, fJvp] = jax.linearize(f, x);
  near(t, fJvp(jnp.onesLike(x)), xs.map((v) => 2 * cos(v)), 'linearize of customJvp');
  // forward mode, also forward over reverse (hessian), raises as in JAX
  t.throws(() => jax.jacfwd(g)(x), { instanceOf: TypeError, message: "can't apply forward-mode autodiff (jvp) to a custom_vjp function." });
  t.throws(() => jax.hessian((x: Array) => g(x).sum())(x), { instanceOf: TypeError, message: "can't apply forward-mode autodiff (jvp) to a custom_vjp function." });
  const [, gJvp] = jax.linearize(g, x);
  t.throws(() => gJvp(jnp.onesLike(x)), { instanceOf: TypeError, message: "can't apply forward-mode autodiff (jvp) to a custom_vjp function." });
});

test('custom functions leave no arrays behind, eagerly and under grad, vmap and jit', (t) => {
  const f = sinWithRule();
  const g = sinWithVjp();
  const x = f32([1, 2, 3]);
  const calls: [string, () => Array][] = [
    ['eager', () => f(x)], ['eager with a number', () => g(2)], ['grad', () => jax.grad((x: Array) => f(x).sum())(x)],
    ['grad of customVjp', () => jax.grad((x: Array) => g(x).sum())(x)], ['vmap', () => jax.vmap(f)(x)],
    ['grad of vmap', () => jax.grad((x: Array) => jax.vmap(g)(x).sum())(x)], ['jit of grad', () => jax.jit(jax.grad((x: Array) => g(x).sum()))(x)],
  ];
  for (const [name, call] of calls) {
    call().dispose();
    const before = jax.liveArrayCount();
    for (let i = 0; i < 3; i++) call().dispose();
    t.is(jax.liveArrayCount(), before, name);
  }
});

test('customJvp and customVjp check their arguments', (t) => {
  assertThrowsMentioning(t, () => jax.customJvp(3 as unknown as Fn), 'jax.customJvp', 'fun must be a function');
  assertThrowsMentioning(t, () => jax.customVjp(jnp.sin as Fn, { nondiffArgnum: [0] } as never), "unknown option 'nondiffArgnum'");
  assertThrowsMentioning(t, () => jax.customJvp(jnp.sin as Fn, { nondiffArgnums: [-1] }), 'nondiffArgnums must be a non-negative integer');
  const f = jax.customJvp(jnp.sin as Fn, { nondiffArgnums: [0] });
  t.throws(() => f.defjvps(null), { instanceOf: TypeError, message: "Can't use ``defjvps`` with ``nondiff_argnums``." });
  f.defjvp((_a: unknown, [x]: Array[], [g]: Array[]) => [jnp.sin(x), g]);
  assertThrowsMentioning(t, () => f(), 'nondiffArgnums names argument 0');
});
