// `npm run demo`: a small, real demo on the default device (`npm start` runs
// the host-offloading tutorial, examples/host-offloading.ts). It fits a
// linear model y = X w + b by gradient descent with hand-written gradients
// (autodiff arrives with the transformations issue), printing the loss as it
// falls, then shows dtype promotion, bfloat16 and NumPy-style printing.
import * as jax from '../lib/index.js';

const jnp = jax.numpy;

function main(): void {
  const info = jax.environmentInfo();
  console.log(`jaxon demo on ${info.platform}: ${info.cuda}\n`);

  const n = 512;
  const features = 8;
  const { trueW, X, y } = jax.tidy(() => {
    const trueW = jnp.linspace(-1, 1, features).reshape([features, 1]);
    // deterministic, well-conditioned inputs: a quadratic-phase sine
    const k = jnp.arange(n * features, undefined, undefined, { dtype: 'float32' }).reshape([n, features]);
    const X = jnp.sin(jnp.multiply(jnp.square(k), 0.0137));
    const y = jnp.add(jnp.matmul(X, trueW), 0.5);
    return { trueW, X, y };
  });

  let w = jnp.zeros([features, 1]);
  let b = jnp.zeros([]);
  const lr = 0.1;
  const start = performance.now();
  for (let step = 0; step <= 200; step++) {
    const [nextW, nextB, loss] = jax.tidy(() => {
      const err = jnp.subtract(jnp.add(jnp.matmul(X, w), b), y);
      const loss = jnp.mean(jnp.square(err));
      const gradW = jnp.multiply(jnp.matmul(X.T, err), 2 / n);
      const gradB = jnp.multiply(jnp.mean(err), 2);
      return [jnp.subtract(w, jnp.multiply(gradW, lr)), jnp.subtract(b, jnp.multiply(gradB, lr)), loss];
    });
    w.dispose();
    b.dispose();
    w = nextW!;
    b = nextB!;
    if (step % 40 === 0) console.log(`step ${String(step).padStart(3)}  loss ${(loss!.item() as number).toExponential(3)}`);
    loss!.dispose();
  }
  const elapsed = performance.now() - start;
  console.log(`\n200 steps in ${elapsed.toFixed(0)} ms (eager: every op is one compiled C kernel)`);
  jax.tidy(() => {
    console.log(`fitted w: ${jnp.round(w.reshape([features]), { decimals: 3 })}`);
    console.log(`true w:   ${jnp.round(trueW.reshape([features]), { decimals: 3 })}`);
    return null;
  });
  console.log(`fitted b: ${(b.item() as number).toFixed(4)} (true 0.5)\n`);

  jax.tidy(() => {
    const ints = jnp.arange(6).reshape([2, 3]);
    console.log('int32 * 0.5 promotes like JAX (weak JS scalar):');
    console.log(jnp.multiply(ints, 0.5).toRepr());
    const h = jnp.array([1, 2, 3], { dtype: 'bfloat16' });
    console.log(`exp in bfloat16: ${jnp.exp(h).toRepr()}`);
    const m = jnp.arange(12).reshape([3, 4]);
    console.log(`m.index([1, 3], -1) = ${m.index([1, 3], -1)}, m.at(0, 0).add(100).index(0) = ${m.at(0, 0).add(100).index(0)}`);
    return null;
  });
  for (const a of [trueW, X, y, w, b]) a.dispose();
  console.log(`live arrays at exit: ${jax.liveArrayCount()}`);
}

main();
