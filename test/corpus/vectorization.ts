// JAX 101: "Automatic vectorization" (docs/automatic-vectorization.md, and the
// jax-101/03-vectorization notebook it grew from), plus the single-device
// examples of "Introduction to parallel programming"
// (docs/sharded-computation.md).
import * as jax from '../../lib/index.js';
import { expectArray, snippet, todo, type Snippet } from './snippet.js';

const { numpy: jnp } = jax;
const SRC = 'Automatic vectorization';

// x = jnp.arange(5); w = jnp.array([2., 3., 4.])
const x = () => jnp.arange(5);
const w = () => jnp.array([2.0, 3.0, 4.0]);

function convolve(x: jax.Array, w: jax.Array): jax.Array {
  const output: jax.Array[] = [];
  for (let i = 1; i < x.shape[0]! - 1; i++) output.push(jnp.dot(x.index([i - 1, i + 2]), w));
  return jnp.array(output);
}

export const snippets: Snippet[] = [
  snippet(`${SRC} › Manual vectorization`, 'convolve(x, w) is [11. 20. 29.]', (t) => {
    expectArray(t, convolve(x(), w()), [11, 20, 29], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Manual vectorization`, 'a Python loop over the batch: manually_batched_convolve', (t) => {
    const xs = jnp.stack([x(), x()]);
    const ws = jnp.stack([w(), w()]);
    const manuallyBatchedConvolve = (xs: jax.Array, ws: jax.Array) => {
      const output: jax.Array[] = [];
      for (let i = 0; i < xs.shape[0]!; i++) output.push(convolve(xs.index(i), ws.index(i)));
      return jnp.stack(output);
    };
    expectArray(t, manuallyBatchedConvolve(xs, ws), [[11, 20, 29], [11, 20, 29]], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Manual vectorization`, 'rewritten by hand: manually_vectorized_convolve', (t) => {
    const xs = jnp.stack([x(), x()]);
    const ws = jnp.stack([w(), w()]);
    const manuallyVectorizedConvolve = (xs: jax.Array, ws: jax.Array) => {
      const output: jax.Array[] = [];
      for (let i = 1; i < xs.shape[xs.ndim - 1]! - 1; i++) {
        output.push(jnp.sum(jnp.multiply(xs.index(null, [i - 1, i + 2]), ws), { axis: 1 }));
      }
      return jnp.stack(output, { axis: 1 });
    };
    expectArray(t, manuallyVectorizedConvolve(xs, ws), [[11, 20, 29], [11, 20, 29]], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Automatic vectorization`, 'jax.vmap(convolve)(xs, ws)', (t) => {
    const xs = jnp.stack([x(), x()]);
    const ws = jnp.stack([w(), w()]);
    const autoBatchConvolve = jax.vmap(convolve);
    expectArray(t, autoBatchConvolve(xs, ws), [[11, 20, 29], [11, 20, 29]], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Automatic vectorization`, 'in_axes=1, out_axes=1 on transposed inputs', (t) => {
    const xst = jnp.transpose(jnp.stack([x(), x()]));
    const wst = jnp.transpose(jnp.stack([w(), w()]));
    const autoBatchConvolveV2 = jax.vmap(convolve, 1, 1);
    expectArray(t, autoBatchConvolveV2(xst, wst), [[11, 11], [20, 20], [29, 29]], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Automatic vectorization`, 'in_axes=[0, None]: one w for a batch of x', (t) => {
    const xs = jnp.stack([x(), x()]);
    const batchConvolveV3 = jax.vmap(convolve, [0, null]);
    expectArray(t, batchConvolveV3(xs, w()), [[11, 20, 29], [11, 20, 29]], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Combining transformations`, 'jax.jit(jax.vmap(convolve))(xs, ws)', (t) => {
    const xs = jnp.stack([x(), x()]);
    const ws = jnp.stack([w(), w()]);
    const jittedBatchConvolve = jax.jit(jax.vmap(convolve));
    expectArray(t, jittedBatchConvolve(xs, ws), [[11, 20, 29], [11, 20, 29]], { dtype: 'float32' });
  }),

  snippet('Introduction to parallel programming › Automatic parallelism via jit', 'f_elementwise = 2 * sin(x) + 1 over jnp.arange(32)', (t) => {
    const fElementwise = jax.jit((v: jax.Array) => jnp.add(jnp.multiply(2, jnp.sin(v)), 1));
    // the page runs this under shard_map over 8 devices; the values do not depend on the sharding
    expectArray(t, fElementwise(jnp.arange(32)), [
      1.0, 2.682942, 2.818595, 1.28224, -0.513605, -0.9178486, 0.44116902, 2.3139732, 2.9787164, 1.824237,
      -0.08804226, -0.99998045, -0.07314587, 1.840334, 2.9812148, 2.3005757, 0.42419338, -0.92279494, -0.50197446,
      1.2997544, 2.8258905, 2.6733112, 0.98229736, -0.69244087, -0.81115675, 0.7352965, 2.525117, 2.912752,
      1.5418116, -0.32726777, -0.97606325, 0.19192469,
    ], { dtype: 'float32', atol: 2e-6 });
  }),

  snippet('Introduction to parallel programming › Automatic parallelism via jit', 'f_contract: jnp.arange(32.0).reshape(4, 8).sum(axis=0)', (t) => {
    const arr = jnp.arange(32).astype('float32').reshape([4, 8]);
    const fContract = jax.jit((v: jax.Array) => v.sum(0));
    expectArray(t, fContract(arr), [48, 52, 56, 60, 64, 68, 72, 76], { dtype: 'float32' });
  }),

  todo('Introduction to parallel programming › Manual parallelism with shard_map', 'jax.shard_map(f, mesh, in_specs=P("x"), out_specs=P("x")) of jnp.sum(x, keepdims=True) over 8 devices is [6 22 38 54 70 86 102 118]; with lax.psum it is 496: jax.shard_map and lax.psum are missing'),
];
