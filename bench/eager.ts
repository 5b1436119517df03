// Eager-mode benchmarks (issue 2): per-op latency on small arrays, and the
// throughput of a 10-op elementwise chain on 2^24 float32 elements, each op a
// separate kernel. Host-side timing with benchmark.js; kernels are compiled
// (or loaded from the disk cache) before timing starts.
import Benchmark from 'benchmark';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;

export interface EagerResult {
  name: string;
  meanMicroseconds: number;
  rme: number;
  samples: number;
  note?: string;
}

function run(name: string, fn: () => void, note?: string): Promise<EagerResult> {
  fn(); // compile / warm up
  return new Promise((resolve) => {
    const bench = new Benchmark(name, fn, { minSamples: 20, maxTime: 2 });
    bench.on('complete', () => {
      resolve({ name, meanMicroseconds: bench.stats.mean * 1e6, rme: bench.stats.rme, samples: bench.stats.sample.length, ...(note ? { note } : {}) });
    });
    bench.run();
  });
}

export async function eagerBenchmarks(): Promise<EagerResult[]> {
  const results: EagerResult[] = [];
  const small = jnp.array([1, 2, 3, 4, 5, 6, 7, 8], { dtype: 'float32' });
  const smallB = jnp.array([8, 7, 6, 5, 4, 3, 2, 1], { dtype: 'float32' });
  results.push(await run('add f32[8] + f32[8]', () => jnp.add(small, smallB).dispose()));
  results.push(await run('add f32[8] + JS scalar', () => jnp.add(small, 2.5).dispose()));
  results.push(await run('exp f32[8]', () => jnp.exp(small).dispose()));
  results.push(await run('jnp.array from JS [8] + dataSync', () => {
    const a = jnp.array([1, 2, 3, 4, 5, 6, 7, 8]);
    a.dataSync();
    a.dispose();
  }));
  const n = 1 << 24;
  const x = jnp.linspace(-1, 1, n);
  const chainFn = (v: jax.Array) => {
    let y = jnp.multiply(v, 1.5);
    y = jnp.add(y, 0.25);
    y = jnp.tanh(y);
    y = jnp.multiply(y, y);
    y = jnp.subtract(y, 0.5);
    y = jnp.abs(y);
    y = jnp.sqrt(y);
    y = jnp.maximum(y, 0.1);
    y = jnp.exp(y);
    return jnp.negative(y);
  };
  const chain = () =>
    jax.tidy(() => {
      chainFn(x).blockUntilReady();
      return null;
    });
  const r = await run('10-op elementwise chain, f32[2^24], eager', chain);
  const bytes = 10 * 2 * n * 4; // each op reads and writes one f32 array (scalar operands are free)
  r.note = `10 kernels, ${((bytes / (r.meanMicroseconds * 1e-6)) / 1e9).toFixed(1)} GB/s of array traffic`;
  results.push(r);
  const jitted = jax.jit(chainFn);
  const kernels = jitted.kernelCount(x);
  const rj = await run('10-op elementwise chain, f32[2^24], jit', () => jitted(x).blockUntilReady().dispose());
  rj.note = `${kernels} fused kernel, ${(r.meanMicroseconds / rj.meanMicroseconds).toFixed(2)}x eager`;
  results.push(rj);
  for (const a of [small, smallB, x]) a.dispose();
  return results;
}
