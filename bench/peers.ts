// `npm run bench:peers` (issue 16): jaxon's CPU backend against NumPy on the same machine in one run, as ratios.
// The workloads: a 10-op elementwise chain and a full sum over 2^24 floats, a row softmax of 4096 x 1024, square
// f32 matmuls of 512, 1024 and 2048, and the host time of an eager add and a jitted call on f32[8]. jaxon's side runs
// here (jit, after a warm-up that compiles), NumPy's in python3 right after (bench/peers/numpy_peers.py), both with
// every core (OpenMP / OpenBLAS threads = the core count). Each figure is the median and range of the repeats.
// The ratio is NumPy's median time over jaxon's: above 1, jaxon is faster.
// onnxruntime-node, the second rival, is used when it can be imported (it is not a dependency: install it
// beside jaxon to compare); otherwise the table says it was not found.
// Writes bench/peers.json. Options: --reps N (default 7).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
const reps = Number(process.argv[process.argv.indexOf('--reps') + 1] ?? 7) || 7;

interface Timing {
  median_ms: number;
  min_ms: number;
  max_ms: number;
}

function timed(fn: () => void, n = reps): Timing {
  fn();
  const times: number[] = [];
  for (let r = 0; r < n; r++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median_ms: times[n >> 1]!, min_ms: times[0]!, max_ms: times[n - 1]! };
}

/** Runs a jitted function on arguments and waits for the result; frees it. */
function call(f: (...a: jax.Array[]) => jax.Array, ...args: jax.Array[]): () => void {
  return () => f(...args).blockUntilReady().dispose();
}

function chain(x: jax.Array): jax.Array {
  let y = jnp.sin(x);
  y = jnp.exp(y);
  y = jnp.tanh(y);
  y = jnp.sqrt(jnp.add(y, 1));
  y = jnp.log(y);
  y = jnp.multiply(y, 3);
  y = jnp.cos(y);
  y = jnp.subtract(y, 0.5);
  y = jnp.abs(y);
  return jnp.maximum(y, 0.1);
}

function softmax(x: jax.Array): jax.Array {
  const e = jnp.exp(jnp.subtract(x, jnp.max(x, { axis: 1, keepdims: true })));
  return jnp.divide(e, jnp.sum(e, { axis: 1, keepdims: true }));
}

function perCallMicroseconds(fn: () => jax.Array, calls = 20000): Timing {
  for (let i = 0; i < 2000; i++) fn().dispose();
  fn().blockUntilReady().dispose();
  const t = timed(() => {
    for (let i = 0; i < calls; i++) fn().dispose();
  }, 5);
  const us = (ms: number) => (ms * 1000) / calls;
  return { median_ms: us(t.median_ms), min_ms: us(t.min_ms), max_ms: us(t.max_ms) };
}

function jaxonSide(): Record<string, Timing> {
  const out: Record<string, Timing> = {};
  const x = jax.random.normal(jax.random.key(0), [2 ** 24]);
  out['chain10'] = timed(call(jax.jit(chain), x));
  out['sum'] = timed(call(jax.jit((a: jax.Array) => jnp.sum(a)), x));
  const s = jax.random.normal(jax.random.key(1), [4096, 1024]);
  out['softmax'] = timed(call(jax.jit(softmax), s));
  for (const n of [512, 1024, 2048]) {
    const a = jax.random.normal(jax.random.key(2), [n, n]);
    const b = jax.random.normal(jax.random.key(3), [n, n]);
    out[`matmul${n}`] = timed(call(jax.jit((p: jax.Array, q: jax.Array) => jnp.matmul(p, q)), a, b));
    a.dispose();
    b.dispose();
  }
  const small = jnp.arange(8).astype('float32');
  out['add8'] = perCallMicroseconds(() => jnp.add(small, small));
  const jitted = jax.jit((a: jax.Array) => jnp.add(a, a));
  out['jitAdd8'] = perCallMicroseconds(() => jitted(small));
  return out;
}

function numpySide(): Record<string, Timing> & { numpy?: string } {
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'bench', 'peers', 'numpy_peers.py');
  const threads = String(os.cpus().length);
  const stdout = execFileSync('python3', [script, String(reps)], { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: threads, OMP_NUM_THREADS: threads } });
  return JSON.parse(stdout) as Record<string, Timing> & { numpy?: string };
}

async function onnxAvailable(): Promise<string> {
  try {
    await import('onnxruntime-node' as string);
    return 'found, but its workloads are not written yet';
  } catch {
    return 'not installed (npm install onnxruntime-node beside jaxon to compare)';
  }
}

const rows: [string, string, 'ms' | 'µs'][] = [
  ['chain10', '10-op elementwise chain, f32 2^24', 'ms'],
  ['sum', 'full sum, f32 2^24', 'ms'],
  ['softmax', 'row softmax, f32 4096x1024', 'ms'],
  ['matmul512', 'matmul f32 512²', 'ms'],
  ['matmul1024', 'matmul f32 1024²', 'ms'],
  ['matmul2048', 'matmul f32 2048²', 'ms'],
  ['add8', 'eager add f32[8], per call', 'µs'],
  ['jitAdd8', 'jitted add f32[8], per call (NumPy: eager add)', 'µs'],
];

const info = jax.environmentInfo();
if (info.platform !== 'cpu') console.log(`(note: jaxon's default platform is ${info.platform}; run with JAXON_PLATFORMS=cpu for the CPU backend)`);
const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}`;
const started = new Date();
const mine = jaxonSide();
let theirs: (Record<string, Timing> & { numpy?: string }) | null = null;
let numpyError = '';
try {
  theirs = numpySide();
} catch (error) {
  numpyError = (error as Error).message.split('\n')[0]!;
}
const fmt = (t: Timing | undefined, unit: string) => (t ? `${t.median_ms.toFixed(unit === 'µs' ? 2 : 1)} ${unit} (${t.min_ms.toFixed(unit === 'µs' ? 2 : 1)}–${t.max_ms.toFixed(unit === 'µs' ? 2 : 1)})` : 'n/a');
console.log(`jaxon vs NumPy ${theirs?.numpy ?? ''} on ${machine}, ${started.toISOString()}, ${reps} repeats (median, range)`);
console.log(`onnxruntime-node: ${await onnxAvailable()}`);
if (!theirs) console.log(`NumPy: not run (${numpyError})`);
console.log('\n| workload | jaxon | NumPy | speed vs NumPy (median; worst–best) |');
console.log('|---|---:|---:|---:|');
const ratios: Record<string, number> = {};
for (const [key, label, unit] of rows) {
  const a = mine[key === 'jitAdd8' ? 'jitAdd8' : key];
  const b = theirs?.[key === 'jitAdd8' ? 'add8' : key];
  let ratio = 'n/a';
  if (a && b) {
    ratios[key] = b.median_ms / a.median_ms;
    ratio = `${ratios[key]!.toFixed(2)}× (${(b.min_ms / a.max_ms).toFixed(2)}–${(b.max_ms / a.min_ms).toFixed(2)})`;
  }
  console.log(`| ${label} | ${fmt(a, unit)} | ${fmt(b, unit)} | ${ratio} |`);
}
writeFileSync(path.join('bench', 'peers.json'), JSON.stringify({ machine, date: started.toISOString(), reps, jaxon: mine, numpy: theirs, ratios }, null, 2) + '\n');
