// examples/cnn.ts: a jitted valueAndGrad + optax.adam step on a two-conv-layer
// CNN (lax.convGeneralDilated NHWC/HWIO, average pooling, dense head) drives
// the cross-entropy down on synthetic 28x28 images, and frees what it
// allocates. Small (10 steps of 8 images) so it runs on the CPU and on the
// emulated GPU alike.
import test from 'ava';
import * as jax from '../lib/index.js';
import { train } from '../examples/cnn.js';

test('the CNN example trains: the loss falls by more than half in 10 Adam steps of 8 images, and only the parameters stay alive', (t) => {
  const before = jax.liveArrayCount();
  const { losses, params } = train({ steps: 10, batch: 8, seed: 0, learningRate: 3e-3 });
  t.is(losses.length, 10);
  t.true(losses.every(Number.isFinite), `losses ${losses.join(', ')}`);
  t.true(losses[0]! > 1, `initial loss ${losses[0]} (log 4 = 1.39 for a uniform guess)`);
  t.true(losses[9]! < losses[0]! / 2, `final loss ${losses[9]} vs initial ${losses[0]} (${losses.join(', ')})`);
  t.deepEqual(params.conv1.w.shape, [3, 3, 1, 8]);
  t.deepEqual(params.conv2.w.shape, [3, 3, 8, 16]);
  t.deepEqual(params.dense.w.shape, [7 * 7 * 16, 4]);
  t.is(jax.liveArrayCount() - before, jax.tree.leaves(params as never).length);
});
