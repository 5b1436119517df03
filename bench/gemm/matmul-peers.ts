// Issue 16 item 3: jaxon's jitted f32 matmul against NumPy's `a @ b`, interleaved round by round so both sides see
// the same load on a shared machine. Each round runs one child process per side (jaxon here, optionally a baseline
// jaxon from another checkout given by --baseline DIR, then NumPy: bench/gemm/numpy_gemm.py), each timing `--reps`
// calls after a warm-up; the table gives the median over rounds of each round's median, the best time, the spread
// of the per-round ratios, the ratio of CPU time per call and thread (less sensitive to waiting for a core on a loaded
// machine, though not to sharing caches and memory bandwidth), and the load average. Threads: --threads T (default 2) for OpenMP and OpenBLAS alike.
// Usage: node dist/bench/gemm/matmul-peers.js [--sizes 1024,2048] [--rounds 7] [--reps 7] [--baseline DIR]
// Writes bench/gemm/matmul-peers.json.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Array as JaxArray } from '../../lib/index.js';

interface Timing {
  median_ms: number;
  min_ms: number;
  max_ms: number;
  /** The process's CPU time per call over the thread count: what the call cost with the time spent waiting for a core left out. */
  cpu_median_ms: number;
}

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..');

async function jaxonChild(n: number, reps: number): Promise<void> {
  const jax = await import('../../lib/index.js');
  const jnp = jax.numpy;
  const a = jax.random.normal(jax.random.key(2), [n, n]);
  const b = jax.random.normal(jax.random.key(3), [n, n]);
  const f = jax.jit((p: JaxArray, q: JaxArray) => jnp.matmul(p, q));
  f(a, b).blockUntilReady().dispose();
  const threads = Number(process.env['OMP_NUM_THREADS'] ?? '1') || 1;
  const times: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    const c = process.cpuUsage();
    f(a, b).blockUntilReady().dispose();
    const used = process.cpuUsage(c);
    times.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1000 / threads);
  }
  times.sort((x, y) => x - y);
  cpu.sort((x, y) => x - y);
  console.log(JSON.stringify({ median_ms: times[reps >> 1], min_ms: times[0], max_ms: times[reps - 1], cpu_median_ms: cpu[reps >> 1] }));
}

function child(command: string, args: string[], threads: string): Timing {
  const env = { ...process.env, OMP_NUM_THREADS: threads, OPENBLAS_NUM_THREADS: threads, JAXON_PLATFORMS: 'cpu' };
  const out = execFileSync(command, args, { encoding: 'utf8', env }).trim().split('\n');
  return JSON.parse(out[out.length - 1]!) as Timing;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function driver(): void {
  const sizes = arg('--sizes', '1024,2048').split(',').map(Number);
  const rounds = Number(arg('--rounds', '7'));
  const reps = arg('--reps', '7');
  const threads = arg('--threads', '2');
  const baseline = process.argv.includes('--baseline') ? path.resolve(arg('--baseline', '')) : undefined;
  const sides: [string, string, string[]][] = [['jaxon', 'node', [fileURLToPath(import.meta.url), '--child']]];
  if (baseline) sides.push(['baseline', 'node', [path.join(baseline, 'dist', 'bench', 'gemm', 'matmul-peers.js'), '--child']]);
  sides.push(['numpy', 'python3', [path.join(repo, 'bench', 'gemm', 'numpy_gemm.py')]]);
  const raw: Record<string, Record<string, (Timing & { load: number })[]>> = {};
  console.log(`${os.cpus()[0]?.model} x${os.cpus().length}, ${threads} threads each side, ${rounds} rounds of ${reps} calls, ${new Date().toISOString()}`);
  console.log('\n| matmul f32 | side | median of round medians | best | ratio NumPy/side (median; min–max over rounds) | CPU-time ratio (median) | load (1 min) |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const n of sizes) {
    const rows: Record<string, (Timing & { load: number })[]> = Object.fromEntries(sides.map(([s]) => [s, []]));
    for (let r = 0; r < rounds; r++) {
      for (const [side, command, args] of sides) {
        const load = os.loadavg()[0]!;
        rows[side]!.push({ ...child(command, [...args, String(n), reps], threads), load });
      }
    }
    raw[n] = rows;
    const numpy = rows['numpy']!;
    for (const [side] of sides) {
      const t = rows[side]!;
      const ratios = t.map((x, i) => numpy[i]!.median_ms / x.median_ms);
      const loads = t.map((x) => x.load);
      const cpuRatios = t.map((x, i) => numpy[i]!.cpu_median_ms / x.cpu_median_ms);
      console.log(
        `| ${n}² | ${side} | ${median(t.map((x) => x.median_ms)).toFixed(2)} ms | ${Math.min(...t.map((x) => x.min_ms)).toFixed(2)} ms | ` +
          `${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | ${median(cpuRatios).toFixed(2)}× | ` +
          `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} |`,
      );
    }
  }
  writeFileSync(path.join(repo, 'bench', 'gemm', 'matmul-peers.json'), JSON.stringify({ machine: os.cpus()[0]?.model, threads, rounds, reps, baseline, raw }, null, 2) + '\n');
}

if (process.argv[2] === '--child') await jaxonChild(Number(process.argv[3]), Number(process.argv[4]));
else driver();
