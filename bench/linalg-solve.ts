// Linear solves on the CPU (issue 15, linalg part A): jaxon's jit(jnp.linalg.solve) (LU with partial pivoting and
// two triangular solves, render/linalg.ts's right-looking kernels) against NumPy's np.linalg.solve (LAPACK gesv,
// OpenBLAS) in a child python3 right after, on the same machine in one run: n x n with one right-hand side, float32
// and float64, and a batch of 4096 8 x 8 systems. Each figure is the median and range of the repeats; a ratio is
// jaxon's median time over NumPy's (above 1, NumPy is faster). The load average is printed beside the numbers: a
// loaded machine's timings mean little. Writes bench/linalg-solve.json. Options: --reps N (default 5), --n N (1024).
//   npx tsc -p . && node dist/bench/linalg-solve.js
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};
const reps = arg('--reps', 5);
const n = arg('--n', 1024);

interface Timing { median_ms: number; min_ms: number; max_ms: number }

function timed(fn: () => void): Timing {
  fn();
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median_ms: times[reps >> 1]!, min_ms: times[0]!, max_ms: times[reps - 1]! };
}

/** A deterministic well-conditioned matrix: sqrt(n) on the diagonal plus values in [-0.5, 0.5). */
function matrix(shape: number[], shift: number, dtype: 'float32' | 'float64'): jax.Array {
  const size = shape.reduce((a, b) => a * b, 1);
  const m = shape[shape.length - 1]!;
  const values = new Float64Array(size);
  for (let i = 0; i < size; i++) {
    const r = Math.sin(i * 12.9898) * 43758.5453;
    values[i] = r - Math.floor(r) - 0.5 + (shape.length >= 2 && i % m === Math.floor(i / m) % shape[shape.length - 2]! ? shift : 0);
  }
  return jnp.array(values, { dtype }).reshape(shape);
}

jax.config.update('jaxEnableX64', true);
const solve = jax.jit((a: jax.Array, b: jax.Array) => jnp.linalg.solve(a, b));
const ours: Record<string, Timing> = {};
for (const dtype of ['float32', 'float64'] as const) {
  const a = matrix([n, n], Math.sqrt(n), dtype);
  const b = matrix([n], 0, dtype);
  ours[`solve ${dtype}`] = timed(() => solve(a, b).blockUntilReady().dispose());
}
{
  const a = matrix([4096, 8, 8], 3, 'float32');
  const b = matrix([4096, 8, 1], 0, 'float32');
  ours['solve float32 4096 x 8x8'] = timed(() => solve(a, b).blockUntilReady().dispose());
}
const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');

let numpy: Record<string, Timing> | null = null;
try {
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), '../../bench/peers/numpy_linalg.py');
  const threads = String(os.cpus().length);
  numpy = JSON.parse(execFileSync('python3', [script, String(reps), String(n)], { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: threads, OMP_NUM_THREADS: threads } })) as Record<string, Timing>;
} catch (error) {
  console.log(`NumPy side skipped: ${(error as Error).message.split('\n')[0]}`);
}
const loadAfter = os.loadavg().map((l) => l.toFixed(2)).join(' ');

const fmt = (t: Timing | undefined) => (t ? `${t.median_ms.toFixed(2)} ms [${t.min_ms.toFixed(2)}, ${t.max_ms.toFixed(2)}]` : '-');
console.log(`linalg solve, n = ${n}, ${reps} repeats, ${os.cpus().length} cores; load average ${load} (jaxon), ${loadAfter} (after NumPy)`);
console.log(`${'workload'.padEnd(28)} ${'jaxon'.padEnd(30)} ${'NumPy'.padEnd(30)} jaxon / NumPy`);
for (const [name, t] of Object.entries(ours)) {
  const np = numpy?.[name.replace(`${n}`, `${n}`)];
  console.log(`${name.padEnd(28)} ${fmt(t).padEnd(30)} ${fmt(np).padEnd(30)} ${np ? (t.median_ms / np.median_ms).toFixed(2) : '-'}`);
}
writeFileSync('bench/linalg-solve.json', `${JSON.stringify({ n, reps, cores: os.cpus().length, loadAverage: { jaxon: load, numpy: loadAfter }, jaxon: ours, numpy }, null, 2)}\n`);
