// Host time per jitted call on the CUDA backend with the program run three
// ways (issue 11): op by op (JAXON_CUDA_GRAPHS=0); as a CUDA graph whose
// nodes are updated in place when a call brings fresh output buffers
// (JAXON_CUDA_GRAPHS=1, cuda_graph.c); and as a graph built and instantiated
// again on every such call, the path before node updates (the emulated
// driver refuses every update: JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES=1);
// plus a graph relaunched with unchanged pointers, for reference. Functions
// of 1 and 10 kernels on f32[8]. The last 4 outputs stay alive, so each call
// gets an output buffer the previous call did not have (fresh pointers).
// Each mode runs in processes of its own (the settings are read at start),
// in rounds that interleave the modes. Prints median and 10th–90th
// percentile of per-call host time over all calls and writes
// bench/graph-replay.json. On the emulated GPU
// (JAXON_CUDA_EMULATOR=1) launches are host work too, so this measures host
// cost only; on a GPU the same script measures the real driver.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as jax from '../lib/index.js';
import type { CudaExecutable } from '../lib/runtime/cuda-executable.js';
import { quantile } from './jaxon/measure.js';

const jnp = jax.numpy;
const CALLS = 2000;
const WARMUP = 500;
const ROUNDS = 5;
const KEEP = 4;

/** One function's calls in one process: per-call host times and its native programs' counters over them. */
interface Sample {
  kernels: number;
  timesUs: number[];
  stats: { graphLaunches: number; graphCaptures: number; graphUpdates: number };
}

interface Timing {
  kernels: number;
  medianUs: number;
  p10Us: number;
  p90Us: number;
  calls: number;
  stats: Sample['stats'];
}

type Mode = 'ops' | 'update' | 'rebuild' | 'same';

const modes: Record<Mode, { label: string; env: Record<string, string> }> = {
  ops: { label: 'op by op', env: { JAXON_CUDA_GRAPHS: '0' } },
  update: { label: 'graph, nodes updated', env: { JAXON_CUDA_GRAPHS: '1' } },
  rebuild: { label: 'graph built again', env: { JAXON_CUDA_GRAPHS: '1', JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES: '1' } },
  same: { label: 'graph, same pointers', env: { JAXON_CUDA_GRAPHS: '1' } },
};

function measure(fn: (a: jax.Array) => jax.Array, x: jax.Array, keep: number): Sample {
  const jitted = jax.jit(fn);
  const live: jax.Array[] = [];
  const call = () => {
    live.push(jitted(x));
    while (live.length > keep) live.shift()!.dispose();
  };
  const wait = () => jnp.zeros([1]).blockUntilReady().dispose(); // queued after the calls: the device caught up
  for (let i = 0; i < WARMUP; i++) call();
  wait();
  const executable = jitted.executable(x) as CudaExecutable;
  const before = executable.programStats();
  const timesUs: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    call();
    timesUs.push((performance.now() - start) * 1000);
    if (i % 100 === 99) wait(); // the device keeps up (not timed)
  }
  wait();
  const after = executable.programStats();
  for (const a of live) a.dispose();
  const sum = (s: typeof before, k: keyof Sample['stats']) => s.reduce((n, p) => n + p[k], 0);
  const delta = (k: keyof Sample['stats']) => sum(after, k) - sum(before, k);
  return {
    kernels: executable.kernelCount, timesUs,
    stats: { graphLaunches: delta('graphLaunches'), graphCaptures: delta('graphCaptures'), graphUpdates: delta('graphUpdates') },
  };
}

/** Median and 10th–90th percentile of the pooled calls; the counters summed. */
function summarize(samples: Sample[]): Timing {
  const times = samples.flatMap((s) => s.timesUs).sort((a, b) => a - b);
  const at = (q: number) => quantile(times, q);
  const stats = { graphLaunches: 0, graphCaptures: 0, graphUpdates: 0 };
  for (const s of samples) for (const k of Object.keys(stats) as (keyof typeof stats)[]) stats[k] += s.stats[k];
  return { kernels: samples[0]!.kernels, medianUs: at(0.5), p10Us: at(0.1), p90Us: at(0.9), calls: times.length, stats };
}

function child(mode: Mode): void {
  const x = jnp.arange(8).astype('float32');
  const one = (a: jax.Array) => jnp.multiply(jnp.add(a, 1), 2);
  const ten = (a: jax.Array) => {
    for (let i = 0; i < 10; i++) a = jnp.multiply(jnp.sum(a), a); // a reduction each: 10 kernels
    return a;
  };
  const keep = mode === 'same' ? 0 : KEEP;
  measure(ten, x, keep); // warms up jaxon's own JS (V8 tiers up the call path), not counted
  console.log(JSON.stringify({ one: measure(one, x, keep), ten: measure(ten, x, keep) }));
}

function main(): void {
  const script = fileURLToPath(import.meta.url);
  const samples: Record<string, { one: Sample[]; ten: Sample[] }> = {};
  // rounds interleave the modes, so load that comes and goes falls on all of them
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of Object.keys(modes) as Mode[]) {
      const out = execFileSync(process.execPath, [script, `--mode=${mode}`], { env: { ...process.env, ...modes[mode].env }, encoding: 'utf8' });
      const { one, ten } = JSON.parse(out.trim().split('\n').pop()!) as { one: Sample; ten: Sample };
      samples[mode] ??= { one: [], ten: [] };
      samples[mode].one.push(one);
      samples[mode].ten.push(ten);
    }
  }
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`;
  console.log(`${jax.environmentInfo().cuda}\n${machine}\n`);
  console.log(`| host time per jitted call, f32[8], ${ROUNDS} × ${CALLS} calls | 1 kernel: median (p10–p90) | 10 kernels: median (p10–p90) | graph builds / updates per call (10 kernels) |`);
  console.log('|---|---:|---:|---|');
  const cell = (t: Timing) => `${t.medianUs.toFixed(1)} µs (${t.p10Us.toFixed(1)}–${t.p90Us.toFixed(1)})`;
  const results: Record<string, { one: Timing; ten: Timing }> = {};
  for (const mode of Object.keys(modes) as Mode[]) {
    const one = summarize(samples[mode]!.one), ten = summarize(samples[mode]!.ten);
    results[mode] = { one, ten };
    const per = (n: number) => (n / ten.calls).toFixed(2);
    console.log(`| ${modes[mode].label} | ${cell(one)} | ${cell(ten)} | ${per(ten.stats.graphCaptures)} / ${per(ten.stats.graphUpdates)} |`);
  }
  const file = path.join(path.dirname(script), '..', '..', 'bench', 'graph-replay.json');
  writeFileSync(file, `${JSON.stringify({ machine, backend: jax.environmentInfo(), date: new Date().toISOString(), rounds: ROUNDS, calls: CALLS, results }, null, 2)}\n`);
  console.log(`\nraw numbers: ${path.relative(process.cwd(), file)}`);
}

const mode = process.argv.find((a) => a.startsWith('--mode='))?.slice('--mode='.length) as Mode | undefined;
if (mode) child(mode);
else main();
