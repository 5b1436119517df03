// Host time per call on the CUDA backend (issue 11): from the JS call to the
// last launch queued, for a jitted function of 1 and 3 kernels and for an
// eager op, on f32[8] (launches are asynchronous, so the loop measures the
// host's work: dispatch, argument checks, allocation, the native call).
// Run on the emulated GPU (JAXON_CUDA_EMULATOR=1), where launches are cheap
// and host work dominates, or on a GPU. Prints median and spread of 9 runs.
import * as jax from '../lib/index.js';

const jnp = jax.numpy;

function perCall(label: string, call: () => jax.Array, n = 2000): void {
  for (let i = 0; i < 200; i++) call().dispose(); // warm up: compiles, caches
  call().blockUntilReady().dispose();
  const samples: number[] = [];
  for (let r = 0; r < 9; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) call().dispose();
    samples.push(((performance.now() - start) * 1000) / n);
    jnp.zeros([1]).blockUntilReady().dispose(); // let the device catch up between samples
  }
  samples.sort((a, b) => a - b);
  console.log(`| ${label} | ${samples[4]!.toFixed(1)} µs | ${samples[0]!.toFixed(1)}–${samples[8]!.toFixed(1)} µs |`);
}

const x = jnp.arange(8).astype('float32');
const y = jnp.ones([8]);
const one = jax.jit((a: jax.Array) => jnp.multiply(jnp.add(a, 1), 2));
const three = jax.jit((a: jax.Array, b: jax.Array) => {
  const s = jnp.sum(jnp.exp(a)); // a reduction
  return jnp.add(jnp.divide(b, s), jnp.cumsum(a)); // a cumulative scan, then an elementwise kernel
});
console.log(`${jax.environmentInfo().cuda}\n\n| host time per call, f32[8] | median | range (9 runs) |\n|---|---:|---:|`);
console.log(`(kernels: ${one.kernelCount(x)} and ${three.kernelCount(x, y)})`);
perCall(`jit, ${one.kernelCount(x)} kernel`, () => one(x));
perCall(`jit, ${three.kernelCount(x, y)} kernels`, () => three(x, y));
perCall('eager jnp.add', () => jnp.add(x, y));
