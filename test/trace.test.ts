// Tracing: makeJaxpr's JAX-style printing, constants and literals, tracers
// refusing concrete access, escaped tracers.
import test from 'ava';
import * as jax from '../lib/index.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

const jnp = jax.numpy;

test('makeJaxpr prints a jaxpr in JAX style with literals and constvars', (t) => {
  const w = jnp.ones([3, 2]);
  const closed = jax.makeJaxpr((x: jax.Array) => jnp.sum(jnp.tanh(jnp.add(jnp.matmul(x, w), 1.5)), { axis: 0 }))(jnp.zeros([4, 3]));
  t.is(
    String(closed),
    `{ lambda a:f32[3,2]; b:f32[4,3]. let
    c:f32[4,2] = dot_general[dimension_numbers=(((1,), (0,)), ((), ())) preferred_element_type=None] b a
    d:f32[4,2] = add c 1.5:f32[]
    e:f32[4,2] = tanh d
    f:f32[2] = reduce_sum[axes=(0,)] e
  in (f,) }`,
  );
  t.is(closed.consts.length, 1);
  t.deepEqual(closed.outAvals.map((a) => [...a.shape]), [[2]]);
  w.dispose();
  t.false(closed.consts[0]!.isDisposed, 'the jaxpr keeps its own reference to closed-over arrays');
});

test('makeJaxpr over pytrees and several outputs', (t) => {
  const closed = jax.makeJaxpr((p: { a: jax.Array; b: jax.Array }) => [p.a.mul(2), jnp.mean(p.b)])({ a: jnp.zeros([2]), b: jnp.arange(3) });
  t.is(
    String(closed),
    `{ lambda ; a:f32[2] b:i32[3]. let
    c:f32[2] = mul a 2.0:f32[]
    d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:f32[] = reduce_sum[axes=(0,)] d
    f:f32[] = div e 3.0:f32[]
  in (c, f) }`,
  );
});

test('constants created inside the traced function are staged, not evaluated (omnistaging)', (t) => {
  const closed = jax.makeJaxpr((x: jax.Array) => jnp.add(x, jnp.ones([2])))(jnp.zeros([2]));
  t.true(String(closed).includes('broadcast_in_dim'));
});

test('a tracer has no concrete value', (t) => {
  assertThrowsMentioning(t, () => jax.makeJaxpr((x: jax.Array) => x.dataSync())(jnp.zeros([2])), 'traced array', 'float32[2]');
  assertThrowsMentioning(t, () => jax.makeJaxpr((x: jax.Array) => jnp.sum(x).item())(jnp.zeros([2])), 'traced array');
});

test('a tracer used after its transformation returned is reported as escaped', (t) => {
  let leaked: jax.Array | undefined;
  jax.makeJaxpr((x: jax.Array) => {
    leaked = x;
    return x;
  })(jnp.zeros([2]));
  assertThrowsMentioning(t, () => jnp.add(leaked!, 1), 'escaped tracer');
});

test('tracers print like JAX tracers', (t) => {
  let text = '';
  jax.makeJaxpr((x: jax.Array) => {
    text = String(x);
    return x;
  })(jnp.zeros([2, 3]));
  t.is(text, 'Traced<f32[2,3]>with<DynamicJaxprTrace>');
});
