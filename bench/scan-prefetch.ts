// Time per call of a jitted scan whose inputs live in pinned host memory,
// with the next iteration's slice prefetched while the current one computes
// (the default on CUDA) and without (JAXON_CUDA_SCAN_PREFETCH=0), issue 11.
// Each iteration copies a slice f32[SLICE] to the device and runs a few
// elementwise kernels and a reduction on it. Each mode runs in processes of
// its own (the setting is read when a program is planned), in rounds that
// interleave the modes; prints the median and 10th–90th percentile of the
// per-call time and the copy time alone (a scan with no compute), and
// writes bench/scan-prefetch.json.
//
// On the emulated GPU give the copies a bandwidth, or they take no time:
//   JAXON_CUDA_EMULATOR=1 JAXON_CUDA_EMULATOR_LINK_GBPS=2 node dist/bench/scan-prefetch.js
// On a GPU the same script measures the real copy engines.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { CudaExecutable } from '../lib/runtime/cuda-executable.js';
import { quantile } from './jaxon/measure.js';

const jnp = jax.numpy;
const lax = jax.lax;
const LENGTH = Number(process.env['SCAN_PREFETCH_LENGTH'] ?? 12);
const SLICE = Number(process.env['SCAN_PREFETCH_SLICE'] ?? 1 << 18);
/** elementwise rounds per iteration (each a few kernels' worth of work, fused into one) */
const ROUNDS_OF_WORK = Number(process.env['SCAN_PREFETCH_WORK'] ?? 2);
const CALLS = Number(process.env['SCAN_PREFETCH_CALLS'] ?? 5);
const ROUNDS = 3;

const modes = {
  on: { label: 'prefetch (JAXON_CUDA_SCAN_PREFETCH=1)', env: { JAXON_CUDA_SCAN_PREFETCH: '1' } },
  off: { label: 'no prefetch (JAXON_CUDA_SCAN_PREFETCH=0)', env: { JAXON_CUDA_SCAN_PREFETCH: '0' } },
};
type Mode = keyof typeof modes;

/** carry ← carry/2 + mean(tanh(sin(x)·1.5 + x²)) per iteration; `compute` false: the copy and a sum only. */
const scanned = (compute: boolean) => (c: Array, xs: Array) =>
  lax.scan((carry: Array, x: Array) => {
    const xd = jax.devicePut(x, 'device');
    let y = xd;
    if (compute) for (let k = 0; k < ROUNDS_OF_WORK; k++) y = jnp.tanh(jnp.add(jnp.multiply(jnp.sin(y), 1.5), jnp.multiply(xd, xd)));
    return [jnp.add(jnp.multiply(carry, 0.5), jnp.mean(y)), null];
  }, c, xs)[0];

function child(): void {
  const xs = jax.devicePut(jnp.sin(jnp.multiply(jnp.ones([LENGTH, SLICE]), 0.37)), 'pinned_host');
  const c = jnp.zeros([]);
  const out: Record<string, number[]> = {};
  let prefetches = 0;
  for (const [name, compute] of [['step', true], ['copyOnly', false]] as const) {
    const f = jax.jit(scanned(compute));
    f(c, xs).blockUntilReady(); // compiles
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      f(c, xs).blockUntilReady();
      times.push(performance.now() - start);
    }
    out[name] = times;
    if (name === 'step') prefetches = (f.executable(c, xs) as CudaExecutable).scanPrefetches;
  }
  console.log(JSON.stringify({ ...out, prefetchesPerCall: prefetches / (CALLS + 1) }));
}

function main(): void {
  const script = fileURLToPath(import.meta.url);
  const samples: Record<string, { step: number[]; copyOnly: number[]; prefetchesPerCall: number }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of Object.keys(modes) as Mode[]) {
      const text = execFileSync(process.execPath, [script, '--child'], { env: { ...process.env, ...modes[mode].env }, encoding: 'utf8' });
      const got = JSON.parse(text.trim().split('\n').pop()!) as { step: number[]; copyOnly: number[]; prefetchesPerCall: number };
      samples[mode] ??= { step: [], copyOnly: [], prefetchesPerCall: got.prefetchesPerCall };
      samples[mode].step.push(...got.step);
      samples[mode].copyOnly.push(...got.copyOnly);
    }
  }
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`;
  const link = process.env['JAXON_CUDA_EMULATOR_LINK_GBPS'];
  console.log(`${jax.environmentInfo().cuda}${link ? ` (JAXON_CUDA_EMULATOR_LINK_GBPS=${link})` : ''}\n${machine}\n`);
  const mb = (SLICE * 4) / 2 ** 20;
  console.log(`| scan of ${LENGTH} × f32[${SLICE}] (${mb} MiB a slice) from pinned host, ${ROUNDS} × ${CALLS} calls | per call: median (p10–p90) | copies and a sum only | prefetches per call |`);
  console.log('|---|---:|---:|---:|');
  const summary = (values: number[]) => {
    const v = [...values].sort((a, b) => a - b);
    return { median: quantile(v, 0.5), p10: quantile(v, 0.1), p90: quantile(v, 0.9) };
  };
  const cell = (s: { median: number; p10: number; p90: number }) => `${s.median.toFixed(1)} ms (${s.p10.toFixed(1)}–${s.p90.toFixed(1)})`;
  const results: Record<string, unknown> = {};
  for (const mode of Object.keys(modes) as Mode[]) {
    const s = samples[mode]!;
    const step = summary(s.step), copyOnly = summary(s.copyOnly);
    results[mode] = { step, copyOnly, prefetchesPerCall: s.prefetchesPerCall, raw: s };
    console.log(`| ${modes[mode].label} | ${cell(step)} | ${cell(copyOnly)} | ${s.prefetchesPerCall.toFixed(0)} |`);
  }
  const file = path.join(path.dirname(script), '..', '..', 'bench', 'scan-prefetch.json');
  writeFileSync(file, `${JSON.stringify({ machine, backend: jax.environmentInfo(), link: link ?? null, date: new Date().toISOString(), length: LENGTH, slice: SLICE, results }, null, 2)}\n`);
  console.log(`\nraw numbers: ${path.relative(process.cwd(), file)}`);
}

if (process.argv.includes('--child')) child();
else main();
