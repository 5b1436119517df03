// Transformations compose: vmap of grad, grad of a vmapped loss, jit of both,
// per-example gradients equal a loop over the batch.
import test from 'ava';
import * as jax from '../lib/index.js';
import { assertArray } from './helpers/oracle.js';

const jnp = jax.numpy;

const loss = (w: jax.Array, x: jax.Array) => jnp.sum(jnp.square(jnp.tanh(jnp.matmul(x, w))));

test('vmap(grad) gives per-example gradients equal to a loop', (t) => {
  const w = jnp.array([[0.5, -1], [0.25, 2], [1, 0.1]]);
  const xs = jnp.array([[1, 2, 3], [-1, 0.5, 2], [0, 0, 1], [2, -2, 0.5]]);
  const perExample = jax.vmap((x: jax.Array) => jax.grad((v: jax.Array) => loss(v, x.reshape([1, 3])))(w) as jax.Array)(xs) as jax.Array;
  const loop = jnp.stack([0, 1, 2, 3].map((i) => jax.grad((v: jax.Array) => loss(v, xs.index(i).reshape([1, 3])))(w) as jax.Array));
  assertArray(t, perExample, loop, { tol: 1e-5 });
  const jitted = jax.jit((ws: jax.Array, batch: jax.Array) => jax.vmap((x: jax.Array) => jax.grad((v: jax.Array) => loss(v, x.reshape([1, 3])))(ws) as jax.Array)(batch));
  assertArray(t, jitted(w, xs) as jax.Array, loop, { tol: 1e-5 });
});

test('grad of a vmapped, summed loss equals the sum of per-example gradients', (t) => {
  const w = jnp.array([[0.5], [-0.25], [1]]);
  const xs = jnp.array([[1, 2, 3], [-1, 0.5, 2]]);
  const batched = (v: jax.Array) => jnp.sum(jax.vmap((x: jax.Array) => loss(v, x.reshape([1, 3])))(xs) as jax.Array);
  const g = jax.grad(batched)(w) as jax.Array;
  const direct = jax.grad((v: jax.Array) => loss(v, xs))(w) as jax.Array;
  assertArray(t, g, direct, { tol: 1e-5 });
});

test('jit(grad(grad)) of sin is -sin', (t) => {
  const d2 = jax.jit(jax.grad(jax.grad((x: jax.Array) => jnp.sin(x)) as (x: jax.Array) => jax.Array) as (x: jax.Array) => jax.Array);
  const x = jnp.array(0.7);
  assertArray(t, d2(x), { shape: [], dtype: 'float32', values: [-Math.sin(0.7)] }, { tol: 1e-6 });
});

test('a jitted function that closes over an outer tracer can be reused under another transformation', (t) => {
  let scale: jax.Array | undefined;
  const inner = jax.jit((x: jax.Array) => jnp.multiply(x, scale!));
  const outer = (s: jax.Array) => {
    scale = s;
    return jnp.sum(inner(jnp.array([1, 2, 3], { dtype: 'float32' })));
  };
  const g1 = jax.grad(outer)(jnp.array(2, { dtype: 'float32' })) as jax.Array;
  const g2 = jax.grad(outer)(jnp.array(5, { dtype: 'float32' })) as jax.Array;
  t.is(g1.item(), 6);
  t.is(g2.item(), 6);
});

test('the tutorial network under scan: grad with saveAndOffloadOnlyTheseNames equals grad of the unrolled network, and the offload is in the jaxpr', (t) => {
  const policies = jax.checkpointPolicies;
  const policy = policies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['x'], offloadSrc: 'device', offloadDst: 'pinned_host' });
  const layer = (x: jax.Array, w1: jax.Array, w2: jax.Array) => {
    const h = jax.checkpointName(jnp.sin(jnp.matmul(x, w1)), 'x') as jax.Array;
    return jnp.matmul(h, w2);
  };
  const scanned = (params: [jax.Array, jax.Array], x: jax.Array) => {
    const body = jax.checkpoint((c: jax.Array, [w1, w2]: [jax.Array, jax.Array]) => [layer(c, w1, w2), null] as [jax.Array, null], { policy });
    const [y] = jax.lax.scan(body as never, x, params) as [jax.Array, unknown];
    return jnp.sum(y);
  };
  const unrolled = (params: [jax.Array, jax.Array], x: jax.Array) => {
    let h = x;
    for (let i = 0; i < 4; i++) h = layer(h, params[0].index(i), params[1].index(i));
    return jnp.sum(h);
  };
  const x = jnp.multiply(jnp.sin(jnp.arange(24, undefined, undefined, { dtype: 'float32' })), 0.5).reshape([3, 8]);
  const w1 = jnp.multiply(jnp.cos(jnp.arange(4 * 8 * 16, undefined, undefined, { dtype: 'float32' })), 0.3).reshape([4, 8, 16]);
  const w2 = jnp.multiply(jnp.sin(jnp.arange(4 * 16 * 8, undefined, undefined, { dtype: 'float32' })), 0.3).reshape([4, 16, 8]);
  const [g1, g2] = jax.grad(scanned)([w1, w2], x) as [jax.Array, jax.Array];
  const [u1, u2] = jax.grad(unrolled)([w1, w2], x) as [jax.Array, jax.Array];
  assertArray(t, g1, u1, { tol: 1e-5 });
  assertArray(t, g2, u2, { tol: 1e-5 });
  const [j1] = jax.jit(jax.grad(scanned))([w1, w2], x) as [jax.Array, jax.Array];
  assertArray(t, j1, u1, { tol: 1e-5 });
  const text = String(jax.makeJaxpr(jax.grad(scanned))([w1, w2], x));
  t.true(text.includes('dst_kind=pinned_host'), 'the residual goes to pinned_host');
  t.true(text.includes('src_kind=pinned_host'), 'and comes back for the backward pass');
});
