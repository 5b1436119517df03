// `npm run bench:breadth` (issue 15's measurements): jaxon's CPU backend beside NumPy in one run, as ratios: a
// sort of 2^22 float32 (jnp.sort is stable: NumPy's stable sort is the like-for-like rival, its default introsort is
// shown too), a ResNet-style 3x3 convolution (batch 32, 56x56x64 -> 64, NHWC/HWIO, SAME) and a 1024^2 solve with one
// right-hand side, each jitted and warmed up first. NumPy's side is bench/peers/numpy_breadth.py, run right after
// with every core (OPENBLAS_NUM_THREADS = the core count, as jaxon's OpenMP). Every figure is the median and range of
// the repeats, with the load average beside them; above 1 a ratio means jaxon is faster. jaxon's results are checked
// (sorted order, the solve's residual) before they are timed. Writes bench/breadth.json. Options: --reps N (default 5).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jax from '../lib/index.js';

const { numpy: jnp, lax, random } = jax;
const reps = Number(process.argv[process.argv.indexOf('--reps') + 1] ?? 5) || 5;

interface Timing { median_ms: number; min_ms: number; max_ms: number }

function timed(fn: () => jax.Array, n = reps): Timing {
  fn().dispose();
  const times: number[] = [];
  for (let r = 0; r < n; r++) {
    const t = performance.now();
    fn().blockUntilReady().dispose();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median_ms: times[n >> 1]!, min_ms: times[0]!, max_ms: times[n - 1]! };
}

function jaxonSide(): Record<string, Timing> {
  const out: Record<string, Timing> = {};
  const x = random.uniform(random.key(0), [1 << 22]);
  const sort = jax.jit((a: jax.Array) => jnp.sort(a));
  const sorted = sort(x).dataSync();
  for (let i = 1; i < sorted.length; i++) if (sorted[i - 1]! > sorted[i]!) throw new Error(`bench:breadth: jnp.sort is out of order at ${i}`);
  out.sort = timed(() => sort(x));
  const images = random.normal(random.key(1), [32, 56, 56, 64]);
  const kernel = jnp.multiply(random.normal(random.key(2), [3, 3, 64, 64]), 0.05);
  const conv = jax.jit((a: jax.Array, w: jax.Array) => lax.convGeneralDilated(a, w, [1, 1], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }));
  out.conv = timed(() => conv(images, kernel), Math.max(3, reps >> 1));
  const a = jnp.add(random.normal(random.key(3), [1024, 1024]), jnp.multiply(jnp.eye(1024), 32));
  const b = random.normal(random.key(4), [1024, 1]);
  const solve = jax.jit((m: jax.Array, v: jax.Array) => jnp.linalg.solve(m, v));
  const residual = jnp.max(jnp.abs(jnp.subtract(jnp.matmul(a, solve(a, b), { precision: 'highest' }), b))).item() as number;
  if (!(residual < 1e-3)) throw new Error(`bench:breadth: solve's residual is ${residual}`);
  out.solve = timed(() => solve(a, b));
  return out;
}

function numpySide(): Record<string, Timing> & { numpy?: string } {
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'bench', 'peers', 'numpy_breadth.py');
  const threads = String(os.cpus().length);
  const stdout = execFileSync('python3', [script, String(reps)], { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: threads, OMP_NUM_THREADS: threads } });
  return JSON.parse(stdout) as Record<string, Timing> & { numpy?: string };
}

const show = (t: Timing) => `${t.median_ms.toFixed(1)} (${t.min_ms.toFixed(1)}-${t.max_ms.toFixed(1)})`;
const loadBefore = os.loadavg()[0]!;
const mine = jaxonSide();
const theirs = numpySide();
const loadAfter = os.loadavg()[0]!;
const rows: [string, string, string][] = [
  ['sort', 'sort', 'sort f32 2^22 (NumPy stable)'],
  ['sort', 'sortDefault', 'sort f32 2^22 (NumPy default introsort)'],
  ['conv', 'conv', 'conv 3x3 NHWC 32x56x56x64 -> 64, SAME'],
  ['solve', 'solve', 'solve f32 1024^2, one right-hand side'],
];
console.log(`jaxon CPU vs NumPy ${theirs.numpy ?? ''}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), load ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}, ms median (range) of ${reps}`);
console.log(`${'workload'.padEnd(42)} ${'jaxon'.padEnd(24)} ${'NumPy'.padEnd(24)} NumPy / jaxon`);
for (const [ours, peer, label] of rows) {
  const a = mine[ours]!;
  const b = theirs[peer]!;
  console.log(`${label.padEnd(42)} ${show(a).padEnd(24)} ${show(b).padEnd(24)} ${(b.median_ms / a.median_ms).toFixed(2)}`);
}
writeFileSync('bench/breadth.json', `${JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, load: [loadBefore, loadAfter], reps, jaxon: mine, numpy: theirs }, null, 1)}\n`);
