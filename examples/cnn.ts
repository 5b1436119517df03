// `npm run example:cnn`: a small convolutional network classifies synthetic
// 28x28 images, the JAX way: two 3x3 convolutions (lax.convGeneralDilated,
// NHWC / HWIO as flax writes them) with ReLU and 2x2 average pooling, a dense
// head, softmax cross-entropy; parameters are a pytree from
// jax.nn.initializers, and the whole training step (jax.valueAndGrad +
// optax.adam) is one jax.jit program with donated parameters and optimizer
// state. The images: one of four patterns (horizontal bars, vertical bars, a
// diagonal, a centred square) plus Gaussian noise, labelled by the pattern.
// `train` is exported for test/cnn.test.ts.
import { pathToFileURL } from 'node:url';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/index.js';
import * as optax from '../lib/optax/index.js';

const jnp = jax.numpy;
const { lax } = jax;

export const CLASSES = 4;
export const SIZE = 28;

export interface Params {
  conv1: { w: Array; b: Array };
  conv2: { w: Array; b: Array };
  dense: { w: Array; b: Array };
}

export interface TrainOptions {
  /** Number of optimizer steps (default 200). */
  steps?: number;
  /** Images per step (default 32); each step draws a new batch. */
  batch?: number;
  /** Seed of the PRNG key for data and initial weights (default 0). */
  seed?: number;
  /** Adam's learning rate (default 3e-3). */
  learningRate?: number;
  /** Channels of the two convolutions (default [8, 16]). */
  channels?: [number, number];
  /** Called with the loss every `logEvery` steps (and at the last step). */
  log?: (step: number, loss: number) => void;
  logEvery?: number;
}

export interface TrainResult {
  /** The training loss before each step. */
  losses: number[];
  params: Params;
}

/** The four 28x28 patterns, values 0 or 1, as a [4, 28, 28] array. */
function templates(): Array {
  const data = new Float32Array(CLASSES * SIZE * SIZE);
  for (let i = 0; i < SIZE; i++) {
    for (let j = 0; j < SIZE; j++) {
      const at = (c: number) => c * SIZE * SIZE + i * SIZE + j;
      data[at(0)] = Math.floor(i / 4) % 2;
      data[at(1)] = Math.floor(j / 4) % 2;
      data[at(2)] = Math.abs(i - j) <= 2 ? 1 : 0;
      data[at(3)] = i >= 8 && i < 20 && j >= 8 && j < 20 ? 1 : 0;
    }
  }
  return jax.tidy(() => jnp.array(data).reshape([CLASSES, SIZE, SIZE]));
}

/** A batch of noisy images [n, 28, 28, 1] (NHWC) and their labels [n] (int32). */
export function imageBatch(key: Array, n: number, patterns: Array): { x: Array; y: Array } {
  return jax.tidy(() => {
    const [kLabel, kNoise] = jax.random.split(key);
    const y = jax.random.randint(kLabel!, [n], 0, CLASSES);
    const clean = jnp.take(patterns, y, { axis: 0 });
    const noise = jnp.multiply(jax.random.normal(kNoise!, [n, SIZE, SIZE]), 0.5);
    return { x: jnp.add(clean, noise).reshape([n, SIZE, SIZE, 1]), y };
  });
}

/** He-normal 3x3 kernels (HWIO), a Lecun-normal dense head, zero biases. */
export function initParams(key: Array, channels: [number, number] = [8, 16]): Params {
  return jax.tidy(() => {
    const [k1, k2, k3] = jax.random.split(key, 3);
    const [c1, c2] = channels;
    const he = jax.nn.initializers.heNormal();
    const flat = (SIZE / 4) * (SIZE / 4) * c2;
    return {
      conv1: { w: he(k1!, [3, 3, 1, c1]), b: jnp.zeros([c1]) },
      conv2: { w: he(k2!, [3, 3, c1, c2]), b: jnp.zeros([c2]) },
      dense: { w: jax.nn.initializers.lecunNormal()(k3!, [flat, CLASSES]), b: jnp.zeros([CLASSES]) },
    };
  });
}

/** 2x2 average pooling with stride 2 over the spatial axes of an NHWC array. */
export function avgPool2(x: Array): Array {
  const [n, h, w, c] = x.shape as [number, number, number, number];
  return jnp.mean(x.reshape([n, h / 2, 2, w / 2, 2, c]), { axis: [2, 4] });
}

function convLayer(x: Array, { w, b }: { w: Array; b: Array }): Array {
  const y = lax.convGeneralDilated(x, w, [1, 1], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] });
  return jax.nn.relu(jnp.add(y, b));
}

/** Logits [n, 4] of NHWC images [n, 28, 28, 1]. */
export function cnn(params: Params, x: Array): Array {
  const h1 = avgPool2(convLayer(x, params.conv1));
  const h2 = avgPool2(convLayer(h1, params.conv2));
  const flat = h2.reshape([h2.shape[0]!, -1]);
  return jnp.add(jnp.matmul(flat, params.dense.w), params.dense.b);
}

/** Mean softmax cross-entropy of the logits against integer labels. */
export function loss(params: Params, x: Array, y: Array): Array {
  const logp = jax.nn.logSoftmax(cnn(params, x));
  return jnp.negative(jnp.mean(jnp.sum(jnp.multiply(logp, jax.nn.oneHot(y, CLASSES)), { axis: -1 })));
}

/** Trains the CNN with Adam on fresh batches and returns the loss at every step and the final parameters. */
export function train(options: TrainOptions = {}): TrainResult {
  const { steps = 200, batch = 32, seed = 0, learningRate = 3e-3, channels = [8, 16], log, logEvery = 20 } = options;
  const patterns = templates();
  const [initKey, dataKey] = jax.tidy(() => {
    const keys = jax.random.split(jax.random.key(seed));
    return [keys.index(0), keys.index(1)];
  });
  let key = dataKey;
  let params = initParams(initKey, channels);
  initKey.dispose();
  const optimizer = optax.adam(learningRate);
  let state = optimizer.init(params);

  // one program per step: forward, backward, Adam; the old params and state are donated to the new ones
  const step = jax.jit(
    (p: Params, s: unknown[], xs: Array, ys: Array) => {
      const [value, grads] = jax.valueAndGrad(loss)(p, xs, ys) as [Array, Params];
      const [updates, next] = optimizer.update(grads, s, p);
      return [optax.applyUpdates(p, updates), next, value];
    },
    { donateArgnums: [0, 1] },
  );

  // the next key and a batch, one program too
  const nextBatch = jax.jit((k: Array, pats: Array) => {
    const [nextKey, batchKey] = jax.random.split(k);
    const { x, y } = imageBatch(batchKey!, batch, pats);
    return [nextKey, x, y];
  });

  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const [nextKey, x, y] = nextBatch(key, patterns) as [Array, Array, Array];
    key.dispose();
    key = nextKey;
    const [nextParams, nextState, value] = step(params, state, x, y) as [Params, unknown[], Array];
    params = nextParams;
    state = nextState;
    losses.push(value.item() as number);
    for (const a of [value, x, y]) a.dispose();
    if (log && (i % logEvery === 0 || i === steps - 1)) log(i, losses[i]!);
  }
  for (const leaf of jax.tree.leaves(state as never) as Array[]) leaf.dispose();
  key.dispose();
  patterns.dispose();
  return { losses, params };
}

/** Fraction of a fresh batch the parameters classify correctly. */
export function accuracy(params: Params, key: Array, n: number): number {
  return jax.tidy(() => {
    const patterns = templates();
    const { x, y } = imageBatch(key, n, patterns);
    const predicted = jnp.argmax(cnn(params, x), { axis: -1 });
    return jnp.mean(jnp.equal(predicted, y).astype('float32')).item() as number;
  });
}

function main(): void {
  const info = jax.environmentInfo();
  console.log(`CNN conv3x3(8)-pool-conv3x3(16)-pool-dense(4) on synthetic 28x28 images with Adam, on ${info.platform}\n`);
  const start = performance.now();
  const { losses, params } = train({
    steps: 200,
    log: (step, value) => console.log(`step ${String(step).padStart(4)}  loss ${value.toFixed(4)}`),
  });
  const seconds = (performance.now() - start) / 1000;
  console.log(`\n${losses.length} steps in ${seconds.toFixed(2)} s (${((seconds / losses.length) * 1e3).toFixed(1)} ms/step)`);
  const key = jax.random.key(1234);
  console.log(`accuracy on 256 fresh images: ${(accuracy(params, key, 256) * 100).toFixed(1)}%`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
