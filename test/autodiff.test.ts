// The autodiff API: jvp, linearize, vjp, grad and valueAndGrad (argnums,
// hasAux, pytrees), higher order, stopGradient, composition with jit and
// makeJaxpr, JAX's error messages, the rule tables' totality, partial
// evaluation's residual policy hook, and memory (no leaked arrays).
import test from 'ava';
import type { Array } from '../lib/core/array.js';
import { abstractEval } from '../lib/core/primitives.js';
import * as jax from '../lib/index.js';
import { Jaxpr } from '../lib/trace/jaxpr.js';
import { jvpRules } from '../lib/transforms/jvp-rules.js';
import { partialEvalJaxpr } from '../lib/transforms/partial-eval.js';
import { UndefinedPrimal, backwardPass, notLinear, transposeRules } from '../lib/transforms/transpose.js';
import { assertArray, assertThrowsMentioning } from './helpers/oracle.js';

// 64-bit on for the whole file, as JAX's tests run with jax_enable_x64: it tests float64 arguments (second derivatives to 1e-14, dtype mismatch errors).
// What x64 off (the default) does to float64 requests is config.test.ts's subject.
jax.config.update('jaxEnableX64', true);

const { numpy: jnp, lax } = jax;
type Fn = (...args: never[]) => unknown;

const f32 = (data: number[]): Array => jnp.array(data, { dtype: 'float32' });
const f64 = (data: number[]): Array => jnp.array(data, { dtype: 'float64' });
const vals = (x: unknown): number[] => globalThis.Array.from((x as Array).dataSync() as ArrayLike<number>);
const close = (t: import('ava').ExecutionContext, actual: unknown, expected: number[], tol = 1e-5, message?: string) => {
  const got = vals(actual);
  t.is(got.length, expected.length, message);
  got.forEach((g, i) => t.true(Math.abs(g - expected[i]!) <= tol * (1 + Math.abs(expected[i]!)), `${message ?? ''} [${i}]: ${g} vs ${expected[i]}`));
};

// ---- jvp ----

test('jvp: primal and tangent of sin, with pytrees in and out and hasAux', (t) => {
  const x = f32([0.5, 1, 2]);
  const [y, ty] = jax.jvp(jnp.sin as Fn, [x], [jnp.onesLike(x)]) as [Array, Array];
  close(t, y, [0.5, 1, 2].map(Math.sin));
  close(t, ty, [0.5, 1, 2].map(Math.cos));

  const f = (p: { a: Array; b: Array }) => [jnp.multiply(p.a, p.b), { s: jnp.sum(p.a) }];
  const [out, tout] = jax.jvp(f as Fn, [{ a: f32([1, 2]), b: f32([3, 4]) }], [{ a: f32([1, 0]), b: f32([0, 1]) }]) as [[Array, { s: Array }], [Array, { s: Array }]];
  close(t, out[0], [3, 8]);
  close(t, tout[0], [3, 2]); // da·b + a·db
  close(t, tout[1].s, [1]);

  const [, tAux, aux] = jax.jvp(((x: Array) => [jnp.square(x), { raw: jnp.exp(x) }]) as Fn, [f32([1])], [f32([1])], { hasAux: true }) as [Array, Array, { raw: Array }];
  close(t, tAux, [2]);
  t.false(aux.raw.isTracer, 'aux comes back as a plain array');
  close(t, aux.raw, [Math.E]);
});

test('jvp: integer inputs have zero tangents; integer outputs get zero tangents of their dtype', (t) => {
  const n = jnp.array([2, 3], { dtype: 'int32' });
  const [y, ty] = jax.jvp(((x: Array, k: Array) => jnp.multiply(x, k.astype('float32'))) as Fn, [f32([1, 1]), n], [f32([1, 1]), n]) as [Array, Array];
  close(t, y, [2, 3]);
  close(t, ty, [2, 3]);
  const [, ti] = jax.jvp(((x: Array) => jnp.argmax(x)) as Fn, [f32([1, 5, 2])], [f32([1, 1, 1])]) as [Array, Array];
  t.is(ti.dtype, 'int32');
  t.deepEqual(vals(ti), [0]);
});

test('jvp: nextafter, sign and stop_gradient have zero tangents', (t) => {
  const [, t1] = jax.jvp(((x: Array) => lax.nextafter(x, f32([10, 10]))) as Fn, [f32([1, 2])], [f32([1, 1])]) as [Array, Array];
  t.deepEqual(vals(t1), [0, 0]);
  const [, t2] = jax.jvp(((x: Array) => jnp.add(jnp.sign(x), lax.stopGradient(x))) as Fn, [f32([1, -2])], [f32([1, 1])]) as [Array, Array];
  t.deepEqual(vals(t2), [0, 0]);
});

test('jvp: argument validation names the problem', (t) => {
  const f = jnp.sin as Fn;
  assertThrowsMentioning(t, () => jax.jvp(f, [f32([1, 2])], [f32([1, 2, 3])]), 'jax.jvp', 'equal shapes', '[2]', '[3]');
  assertThrowsMentioning(t, () => jax.jvp(f, [f32([1, 2])], [f64([1, 2])]), 'jax.jvp', 'float32', 'float64');
  assertThrowsMentioning(t, () => jax.jvp(f, [f32([1]), f32([2])], [f32([1])]), 'jax.jvp', 'tree structure');
  assertThrowsMentioning(t, () => jax.jvp(f, f32([1]) as never, [f32([1])]), 'jax.jvp', 'primals and tangents must be arrays');
  assertThrowsMentioning(t, () => jax.jvp(f, [f32([1])], [f32([1])], { has_aux: true } as never), 'jax.jvp', "unknown option 'has_aux'");
});

test('jvp of jvp: second derivative (forward over forward)', (t) => {
  const d1 = (x: Array) => (jax.jvp(jnp.sin as Fn, [x], [jnp.onesLike(x)]) as Array[])[1]!;
  const [, d2] = jax.jvp(d1 as Fn, [f64([0.3, 1.2])], [f64([1, 1])]) as [Array, Array];
  close(t, d2, [0.3, 1.2].map((v) => -Math.sin(v)), 1e-12);
});

// ---- linearize and vjp ----

test('linearize: the linear map equals jvp and is linear', (t) => {
  const f = (x: Array) => jnp.multiply(jnp.sin(x), jnp.exp(x));
  const x = f64([0.1, 0.7, -1.3]);
  const [y, fJvp] = jax.linearize(f as Fn, x) as [Array, (t: Array) => Array];
  close(t, y, vals(f(x)), 1e-14);
  const tangent = f64([1, -2, 0.5]);
  const [, expected] = jax.jvp(f as Fn, [x], [tangent]) as [Array, Array];
  close(t, fJvp(tangent), vals(expected), 1e-14);
  close(t, fJvp(jnp.multiply(tangent, 3)), vals(expected).map((v) => 3 * v), 1e-14, 'linear');
  assertThrowsMentioning(t, () => fJvp(f64([1, 2])), 'jax.linearize', 'shape', '[2]', '[3]');
});

test('vjp: one cotangent per argument, pytrees, integer arguments get zero cotangents', (t) => {
  const f = (a: Array, p: { w: Array; k: Array }) => ({ out: jnp.multiply(jnp.multiply(a, p.w), p.k.astype('float32')) });
  const a = f32([1, 2]);
  const p = { w: f32([3, 4]), k: jnp.array([5, 6], { dtype: 'int32' }) };
  const [out, pullback] = jax.vjp(f as Fn, a, p) as [{ out: Array }, (ct: unknown) => [Array, { w: Array; k: Array }]];
  close(t, out.out, [15, 48]);
  const [ga, gp] = pullback({ out: f32([1, 1]) });
  close(t, ga, [15, 24]);
  close(t, gp.w, [5, 12]);
  t.is(gp.k.dtype, 'int32');
  t.deepEqual(vals(gp.k), [0, 0]);
  assertThrowsMentioning(t, () => pullback(f32([1, 1])), 'jax.vjp', 'structure');
  assertThrowsMentioning(t, () => pullback({ out: f32([1, 1, 1]) }), 'jax.vjp pullback', 'shape', '[3]', '[2]');
  assertThrowsMentioning(t, () => pullback({ out: f64([1, 1]) }), 'jax.vjp pullback', 'float64', 'float32');
});

test('vjpWithAux returns the aux output as plain arrays', (t) => {
  const [y, pullback, aux] = jax.vjpWithAux(((x: Array) => [jnp.sum(jnp.square(x)), { doubled: jnp.multiply(x, 2) }]) as Fn, f32([1, 2, 3])) as [Array, (ct: Array) => Array[], { doubled: Array }];
  close(t, y, [14]);
  close(t, aux.doubled, [2, 4, 6]);
  close(t, pullback(f32([1]).reshape([]))[0], [2, 4, 6]);
});

// ---- grad and valueAndGrad ----

test('grad: argnums as an integer, a list and negative; pytree arguments keep their structure', (t) => {
  const f = (x: Array, y: Array, z: Array) => jnp.sum(jnp.multiply(jnp.multiply(x, y), jnp.square(z)));
  const [x, y, z] = [f32([1, 2]), f32([3, 4]), f32([5, 6])];
  close(t, jax.grad(f as Fn)(x, y, z), [75, 144]);
  close(t, jax.grad(f as Fn, { argnums: 1 })(x, y, z), [25, 72]);
  close(t, jax.grad(f as Fn, { argnums: -1 })(x, y, z), [30, 96]);
  const [gx, gz] = jax.grad(f as Fn, { argnums: [0, 2] })(x, y, z) as Array[];
  close(t, gx, [75, 144]);
  close(t, gz, [30, 96]);

  const loss = (params: { w: Array; b: Array[] }, data: Array) => jnp.sum(jnp.square(jnp.add(jnp.multiply(params.w, data), params.b[0]!)));
  const g = jax.grad(loss as Fn)({ w: f32([1, 2]), b: [f32([0.5, 0.5])] }, f32([3, 4])) as { w: Array; b: Array[] };
  t.deepEqual(Object.keys(g), ['b', 'w']);
  close(t, g.w, [2 * 3.5 * 3, 2 * 8.5 * 4]);
  close(t, g.b[0], [7, 17]);
});

test('grad: hasAux gives [gradient, aux]; valueAndGrad gives [value, gradient] and [[value, aux], gradient]', (t) => {
  const f = (x: Array) => [jnp.sum(jnp.exp(x)), { n: jnp.sum(x), label: 'kept as is' }];
  const x = f32([0, 1]);
  const [g, aux] = jax.grad(f as Fn, { hasAux: true })(x) as [Array, { n: Array; label: string }];
  close(t, g, [1, Math.E]);
  close(t, aux.n, [1]);
  t.false(aux.n.isTracer);
  t.is(aux.label, 'kept as is');
  const [v, g2] = jax.valueAndGrad(((x: Array) => jnp.sum(jnp.exp(x))) as Fn)(x) as [Array, Array];
  close(t, v, [1 + Math.E]);
  close(t, g2, [1, Math.E]);
  const [[v3, aux3], g3] = jax.valueAndGrad(f as Fn, { hasAux: true })(x) as [[Array, { n: Array }], Array];
  close(t, v3, [1 + Math.E]);
  close(t, aux3.n, [1]);
  close(t, g3, [1, Math.E]);
});

test('grad: a JS number argument is a float32 point', (t) => {
  const g = jax.grad(((x: Array) => jnp.multiply(x, jnp.multiply(x, x))) as Fn)(2) as Array;
  t.is(g.dtype, 'float32');
  close(t, g, [12]);
});

test('grad: the gradient of a constant function is zero', (t) => {
  const g = jax.grad(((x: Array) => jnp.sum(lax.stopGradient(x))) as Fn)(f32([1, 2])) as Array;
  t.deepEqual(vals(g), [0, 0]);
  t.deepEqual([...g.shape], [2]);
});

test('grad of grad: d²/dx² sin = -sin, d³/dx³ sin = -cos', (t) => {
  const points = [0.3, 1.1, -2.5];
  const d2 = jax.grad(jax.grad(jnp.sin as Fn) as Fn);
  const d3 = jax.grad(d2 as Fn);
  for (const p of points) {
    close(t, d2(f64([p]).reshape([])), [-Math.sin(p)], 1e-12);
    close(t, d3(f64([p]).reshape([])), [-Math.cos(p)], 1e-12);
  }
});

test('grad of a function closing over the outer differentiated variable', (t) => {
  // d/dx [ d/dy (x·y²) at y = x ] = d/dx 2x² = 4x
  const outer = (x: Array) => jax.grad(((y: Array) => jnp.multiply(x, jnp.multiply(y, y))) as Fn)(x);
  close(t, jax.grad(outer as Fn)(f64([1.5]).reshape([])), [6], 1e-12);
});

test('forward over reverse: a Hessian-vector product', (t) => {
  // f(x) = Σ x_i³ x_0, H v computed as jvp(grad f)
  const f = (x: Array) => jnp.multiply(jnp.sum(lax.integerPow(x, 3)), x.index(0));
  const x = f64([1, 2]);
  const v = f64([1, -1]);
  const [, hv] = jax.jvp(jax.grad(f as Fn) as Fn, [x], [v]) as [Array, Array];
  // ∂f/∂x0 = 3x0²·x0 + S = 4x0³ + x1³, ∂f/∂x1 = 3x1²·x0; H = [[12x0², 3x1²], [3x1², 6x1·x0]]
  const [x0, x1] = [1, 2];
  close(t, hv, [12 * x0 * x0 - 3 * x1 * x1, 3 * x1 * x1 - 6 * x1 * x0], 1e-12);
});

test('stopGradient blocks the derivative, works over pytrees, and is the identity eagerly', (t) => {
  close(t, jax.grad(((x: Array) => jnp.multiply(x, lax.stopGradient(x))) as Fn)(3), [3]);
  const g = jax.grad(((p: { a: Array; b: Array }) => {
    const s = lax.stopGradient(p);
    return jnp.add(jnp.multiply(s.a, p.b), jnp.multiply(p.a, s.b));
  }) as Fn)({ a: f32([2]).reshape([]), b: f32([5]).reshape([]) }) as { a: Array; b: Array };
  close(t, g.a, [5]);
  close(t, g.b, [2]);
  const x = f32([1]);
  t.is(lax.stopGradient(x), x);
  t.true(jax.makeJaxpr(((x: Array) => lax.stopGradient(jnp.sin(x))) as Fn)(x).toString().includes('stop_gradient'));
});

// ---- composition with jit and makeJaxpr ----

test('jit inside grad and grad inside jit agree with plain grad', (t) => {
  const f = (w: Array, x: Array) => jnp.sum(jnp.tanh(jnp.matmul(x, w)));
  const w = f32([0.1, -0.2, 0.3, 0.4, -0.5, 0.6]).reshape([3, 2]);
  const x = f32([1, 2, 3, -1, 0, 1]).reshape([2, 3]);
  const expected = vals(jax.grad(f as Fn)(w, x));
  close(t, jax.grad(jax.jit(f) as Fn)(w, x), expected, 1e-6, 'grad(jit(f))');
  close(t, jax.jit(jax.grad(f as Fn))(w, x), expected, 1e-6, 'jit(grad(f))');
  // the differentiated function closes over a value traced by the enclosing jit
  const step = jax.jit((w: Array, x: Array) => jax.grad(((v: Array) => f(v, jnp.multiply(x, 1))) as Fn)(w));
  close(t, step(w, x), expected, 1e-6, 'grad of a closure inside jit');
  // a jitted function closing over the differentiated variable
  close(t, jax.grad((s: Array) => jax.jit((y: Array) => jnp.multiply(s, y))(s))(3), [6], 1e-6, 'jit closing over a grad tracer');
  const [v, g] = jax.jit(jax.valueAndGrad(f as Fn))(w, x) as [Array, Array];
  close(t, v, vals(f(w, x)), 1e-6);
  close(t, g, expected, 1e-6);
});

test('per-example gradients: vmap of grad equals a loop of grads', (t) => {
  const f = (w: Array, x: Array) => jnp.sum(jnp.multiply(jnp.sin(jnp.multiply(w, x)), x));
  const w = f32([0.5, -1.5]);
  const xs = f32([0.5, 1, 2, -1, 0.1, 0.2]).reshape([3, 2]);
  const batched = jax.vmap((x: Array) => jax.grad(f as Fn)(w, x))(xs) as Array;
  const loop = [0, 1, 2].flatMap((i) => vals(jax.grad(f as Fn)(w, xs.index(i))));
  t.deepEqual([...batched.shape], [3, 2]);
  close(t, batched, loop, 1e-6);
});

test('makeJaxpr of grad is a readable jaxpr', (t) => {
  const text = jax.makeJaxpr(jax.grad(jnp.sin as Fn))(f32([1.5]).reshape([])).toString();
  t.is(
    text,
    [
      '{ lambda ; a:f32[]. let',
      '    b:f32[] = sin a',
      '    c:f32[] = cos a',
      '    d:f32[] = mul 1.0:f32[] c',
      '  in (d,) }',
    ].join('\n'),
  );
  const mlp = jax.makeJaxpr(jax.grad(((w: Array, x: Array) => jnp.sum(jnp.tanh(jnp.matmul(x, w)))) as Fn))(jnp.ones([3, 2]), jnp.ones([4, 3])).toString();
  for (const fragment of ['dot_general', 'tanh', 'transpose[permutation=(1, 0)]', 'in (']) t.true(mlp.includes(fragment), `${fragment} in\n${mlp}`);
});

// ---- errors ----

test('grad errors follow JAX: non-scalar, pytree and integer outputs; integer inputs; argnums', (t) => {
  assertThrowsMentioning(t, () => jax.grad(jnp.sin as Fn)(f32([1, 2, 3])), 'jax.grad', 'Gradient only defined for scalar-output functions', 'Output had shape: [3]');
  assertThrowsMentioning(t, () => jax.grad(((x: Array) => [x, x]) as Fn)(f32([1]).reshape([])), 'Gradient only defined for scalar-output functions', 'pytree');
  assertThrowsMentioning(t, () => jax.grad(((x: Array) => jnp.argmax(x)) as Fn)(f32([1, 2])), 'grad requires real-valued outputs', 'int32');
  assertThrowsMentioning(
    t,
    () => jax.grad(((x: Array) => jnp.sum(x)) as Fn)(jnp.array([1, 2], { dtype: 'int32' })),
    'grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), but got int32',
  );
  const f = ((x: Array, y: Array) => jnp.sum(jnp.multiply(x, y))) as Fn;
  assertThrowsMentioning(t, () => jax.grad(f, { argnums: 2 })(f32([1]), f32([2])), 'jax.grad', 'argnums=2', 'at least 3 positional arguments', 'got only 2');
  assertThrowsMentioning(t, () => jax.grad(f, { argnums: 0.5 }), 'jax.grad', 'argnums must be an integer');
  assertThrowsMentioning(t, () => jax.grad(f, { argnums: [0, 0] }), 'jax.grad', 'duplicates');
  assertThrowsMentioning(t, () => jax.grad(f, { argnum: 0 } as never), 'jax.grad', "unknown option 'argnum'");
  assertThrowsMentioning(t, () => jax.grad(((x: Array) => jnp.sum(x)) as Fn, { hasAux: true })(f32([1])), 'jax.grad', 'hasAux', 'pair');
  assertThrowsMentioning(t, () => jax.grad(3 as never), 'jax.grad', 'fn must be a function');
});

// ---- the tables and partial evaluation ----

test('every primitive has a jvp rule and a transpose entry; linear primitives have transpose rules', (t) => {
  const primitives = Object.keys(abstractEval);
  t.deepEqual(Object.keys(jvpRules).sort(), [...primitives].sort());
  t.deepEqual(Object.keys(transposeRules).sort(), [...primitives].sort());
  const linear = ['neg', 'add', 'sub', 'mul', 'div', 'convert_element_type', 'reduce_precision', 'copy', 'select_n', 'broadcast_in_dim',
    'reshape', 'squeeze', 'transpose', 'rev', 'slice', 'pad', 'concatenate', 'dynamic_slice', 'dynamic_update_slice', 'gather', 'scatter',
    'scatter_add', 'scatter_mul', 'reduce_sum', 'cumsum', 'dot_general', 'conv_general_dilated', 'checkpoint', 'name', 'device_put',
    // control flow: transposed by their own rules (while's raises JAX's reverse-mode error)
    'scan', 'while', 'cond',
    // custom derivatives: a custom call on tangents transposes its jaxpr; custom_lin's transpose is the bwd rule
    'custom_jvp_call', 'custom_vjp_call', 'custom_lin',
    // host callbacks: a debug callback's transpose gives no cotangents; a pure callback's raises JAX's error
    'debug_callback', 'pure_callback',
    // linear in b only (JAX's _triangular_solve_transpose_rule; a cotangent for the matrix a is an error)
    'triangular_solve'];
  for (const p of primitives) t.is(transposeRules[p as keyof typeof transposeRules] !== notLinear, linear.includes(p), p);
});

test('partial evaluation: residuals by default; a remat policy recomputes on the unknown side', (t) => {
  const x = f64([0.4, 1.3]);
  const closed = jax.makeJaxpr(((x: Array, tangent: Array) => jax.jvp(jnp.sin as Fn, [x], [tangent])) as Fn)(x, x);
  const saved = partialEvalJaxpr(closed.jaxpr, [false, true]);
  t.deepEqual(saved.outUnknowns, [false, true]);
  t.is(saved.numResiduals, 1);
  t.false(saved.unknown.eqns.some((e) => e.primitive === 'cos'));
  t.is(saved.known.outs[1], saved.unknown.inVars[0]);

  const recomputed = partialEvalJaxpr(closed.jaxpr, [false, true], { saveable: (e) => e.primitive !== 'cos' });
  t.true(recomputed.unknown.eqns.some((e) => e.primitive === 'cos'), 'cos moved to the unknown side');
  t.is(recomputed.numResiduals, 1);
  t.is(recomputed.known.outs[1], closed.jaxpr.inVars[0], 'the residual is x itself');
  t.false(recomputed.known.eqns.some((e) => e.primitive === 'cos'), 'and the known side no longer computes cos');
  // transposing the unknown jaxpr evaluates the recomputed equation forward first
  const linear = new Jaxpr([], recomputed.unknown.inVars, recomputed.unknown.eqns, recomputed.unknown.outs);
  const [, ctX] = backwardPass(linear, [], [x, new UndefinedPrimal(x.aval)], [f64([1, 1])]);
  assertArray(t, ctX, { shape: [2], dtype: 'float64', values: [Math.cos(0.4), Math.cos(1.3)] }, { tol: 1e-14 });
});

test('transposing a non-linear use of a tangent is an error naming the primitive', (t) => {
  const closed = jax.makeJaxpr(((a: Array, b: Array) => jnp.multiply(a, b)) as Fn)(f32([1]), f32([2]));
  const [u, v] = closed.jaxpr.inVars.map((w) => new UndefinedPrimal(w.aval));
  assertThrowsMentioning(t, () => backwardPass(closed.jaxpr, closed.consts, [u!, v!], [f32([1])]), 'mul is not linear');
});

// ---- memory ----

test('grad, valueAndGrad, jvp and vjp leave no arrays behind', (t) => {
  const x = f32([0.5, 1.5, 2.5]);
  const f = (x: Array) => jnp.sum(jnp.multiply(jnp.sin(x), jnp.exp(x)));
  const before = jax.liveArrayCount();
  (jax.grad(f as Fn)(x) as Array).dispose();
  for (const a of jax.valueAndGrad(f as Fn)(x) as Array[]) a.dispose();
  for (const a of jax.jvp(f as Fn, [x], [x]) as Array[]) a.dispose();
  const [y, pullback] = jax.vjp(f as Fn, x) as [Array, (ct: Array) => Array[]];
  const ct = jnp.onesLike(y);
  pullback(ct)[0]!.dispose();
  ct.dispose();
  t.is(jax.liveArrayCount(), before + 1 + 3, 'only vjp keeps its output and its residuals (cos x, sin x, exp x) while the pullback lives');
  y.dispose();
});
