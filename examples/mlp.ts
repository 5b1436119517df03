// `npm run example:mlp`: a two-hidden-layer MLP fits a noisy sine wave, the
// JAX way: parameters are a pytree initialized with jax.nn.initializers from
// a PRNG key, the loss's value and gradient come from jax.valueAndGrad, the
// whole training step (gradient + optax.adam update) is one jax.jit program
// whose parameter and optimizer-state buffers are donated, and the loss is
// printed as it falls. `train` is exported for test/mlp.test.ts.
import { pathToFileURL } from 'node:url';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/index.js';
import * as optax from '../lib/optax/index.js';

const jnp = jax.numpy;

export interface Layer {
  w: Array;
  b: Array;
}
export type Params = Layer[];

export interface TrainOptions {
  /** Number of optimizer steps (default 1000). */
  steps?: number;
  /** Seed of the PRNG key for the data noise and the initial weights (default 0). */
  seed?: number;
  /** Adam's learning rate (default 1e-2). */
  learningRate?: number;
  /** Width of the two hidden layers (default 32). */
  hidden?: number;
  /** Called with the loss every `logEvery` steps (and at the last step). */
  log?: (step: number, loss: number) => void;
  logEvery?: number;
}

export interface TrainResult {
  /** The training loss before each step. */
  losses: number[];
  params: Params;
}

/** The data: 256 points of sin(x) on [-π, π] plus Gaussian noise of stddev 0.05. */
export function sineData(key: Array, n = 256): { x: Array; y: Array } {
  return jax.tidy(() => {
    const x = jnp.linspace(-Math.PI, Math.PI, n).reshape([n, 1]);
    const noise = jnp.multiply(jax.random.normal(key, [n, 1]), 0.05);
    return { x, y: jnp.add(jnp.sin(x), noise) };
  });
}

/** Glorot-normal weights and zero biases for layers of these sizes. */
export function initParams(key: Array, sizes: number[]): Params {
  return jax.tidy(() => {
    const keys = jax.random.split(key, sizes.length - 1);
    const init = jax.nn.initializers.glorotNormal();
    return sizes.slice(1).map((out, i) => ({
      w: init(keys.index(i), [sizes[i]!, out]),
      b: jax.nn.initializers.zeros(keys.index(i), [out]),
    }));
  });
}

/** tanh hidden layers, a linear output. */
export function mlp(params: Params, x: Array): Array {
  let h = x;
  params.forEach(({ w, b }, i) => {
    h = jnp.add(jnp.matmul(h, w), b);
    if (i < params.length - 1) h = jnp.tanh(h);
  });
  return h;
}

/** Mean squared error of the MLP's predictions. */
export function loss(params: Params, x: Array, y: Array): Array {
  return jnp.mean(jnp.square(jnp.subtract(mlp(params, x), y)));
}

/** Trains the MLP with Adam and returns the loss at every step and the final parameters. */
export function train(options: TrainOptions = {}): TrainResult {
  const { steps = 1000, seed = 0, learningRate = 1e-2, hidden = 32, log, logEvery = 100 } = options;
  const [dataKey, initKey] = jax.tidy(() => {
    const keys = jax.random.split(jax.random.key(seed));
    return [keys.index(0), keys.index(1)];
  });
  const { x, y } = sineData(dataKey);
  let params = initParams(initKey, [1, hidden, hidden, 1]);
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

  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const [nextParams, nextState, value] = step(params, state, x, y) as [Params, unknown[], Array];
    params = nextParams;
    state = nextState;
    losses.push(value.item() as number);
    value.dispose();
    if (log && (i % logEvery === 0 || i === steps - 1)) log(i, losses[i]!);
  }
  for (const leaf of jax.tree.leaves(state as never) as Array[]) leaf.dispose();
  for (const a of [dataKey, initKey, x, y]) a!.dispose();
  return { losses, params };
}

function main(): void {
  const info = jax.environmentInfo();
  console.log(`MLP [1, 32, 32, 1] (tanh) fitting sin(x) + noise with Adam, on ${info.platform}\n`);
  const start = performance.now();
  const { losses, params } = train({
    steps: 1000,
    seed: 0,
    log: (step, value) => console.log(`step ${String(step).padStart(4)}  loss ${value.toFixed(6)}`),
  });
  const seconds = (performance.now() - start) / 1000;
  console.log(`\n${losses.length} steps in ${seconds.toFixed(2)} s (${((seconds / losses.length) * 1e3).toFixed(2)} ms/step)`);
  const probe = jnp.array([[-Math.PI / 2], [0], [Math.PI / 4]], { dtype: 'float32' });
  const predicted = mlp(params, probe).dataSync();
  console.log(`f(-π/2) = ${predicted[0]!.toFixed(3)} (sin: -1.000), f(0) = ${predicted[1]!.toFixed(3)} (0.000), f(π/4) = ${predicted[2]!.toFixed(3)} (0.707)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
