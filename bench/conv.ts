// Convolution benchmark (issue 15 item 2): a ResNet-style 3x3 layer, NHWC
// float32 [32, 56, 56, 64] -> 64 channels, HWIO kernel, stride 1, SAME, under
// jit on the CPU (or whichever platform JAXON_PLATFORMS picks): the forward
// conv and the gradient wrt input and kernel. Then, in the same minute,
// bench/conv_numpy.py times NumPy's im2col + GEMM (sliding_window_view +
// tensordot) on the same shapes, and the load average is printed beside the
// numbers. Not run in CI; run on a quiet machine:
//
//   npx tsc -p . && JAXON_PLATFORMS=cpu node dist/bench/conv.js [reps]   (PYTHON=... picks the interpreter)
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/index.js';

const { numpy: jnp, lax } = jax;

function time(fn: () => Array | Array[], reps: number): { medianMs: number; minMs: number } {
  const block = (r: Array | Array[]) => { for (const a of [r].flat()) { a.blockUntilReady(); a.dispose(); } };
  block(fn()); // compile and warm up
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    block(fn());
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { medianMs: ms[Math.floor(ms.length / 2)]!, minMs: ms[0]! };
}

function main(): void {
  const reps = Number(process.argv[2] ?? 5);
  const keys = jax.random.split(jax.random.key(0));
  const x = jax.random.normal(keys.index(0), [32, 56, 56, 64]);
  const w = jax.random.normal(keys.index(1), [3, 3, 64, 64]);
  const dn: [string, string, string] = ['NHWC', 'HWIO', 'NHWC'];
  const conv = (a: Array, b: Array) => lax.convGeneralDilated(a, b, [1, 1], 'SAME', { dimensionNumbers: dn });
  const fwd = jax.jit(conv);
  const grads = jax.jit((a: Array, b: Array) => jax.grad((p: Array, q: Array) => jnp.sum(conv(p, q)), { argnums: [0, 1] })(a, b) as Array[]);
  const flops = 2 * 32 * 56 * 56 * 64 * 64 * 9;
  const report = (name: string, r: { medianMs: number; minMs: number }, mult = 1) =>
    console.log(`${name.padEnd(44)} median ${r.medianMs.toFixed(1).padStart(8)} ms  min ${r.minMs.toFixed(1).padStart(8)} ms  ${((mult * flops) / (r.minMs * 1e6)).toFixed(1)} GFLOP/s (best)`);
  console.log(`conv 3x3 NHWC [32,56,56,64] -> 64, SAME, float32; ${jax.environmentInfo().platform}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  report('jaxon jit forward', time(() => fwd(x, w), reps));
  report('jaxon jit grad wrt input and kernel', time(() => grads(x, w), reps), 2);
  try {
    const out = execFileSync(process.env['PYTHON'] ?? 'python3', ['bench/conv_numpy.py', String(reps)], { encoding: 'utf8' });
    const np = JSON.parse(out.trim().split('\n').pop()!) as { impl: string; medianMs: number; minMs: number };
    report(np.impl, np);
  } catch (e) {
    console.log(`NumPy baseline not run: ${(e as Error).message.split('\n')[0]}`);
  }
  console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

main();
