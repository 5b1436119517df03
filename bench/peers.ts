// `npm run bench:peers` (issue 16): jaxon's CPU backend against NumPy and onnxruntime-node on the same machine in one
// run, as ratios. The workloads: a 10-op elementwise chain and a full sum over 2^24 floats, a row softmax of
// 4096 x 1024, square f32 matmuls of 512, 1024 and 2048, and the host time of an eager add and a jitted call on f32[8].
// jaxon's side runs here (jit, after a warm-up that compiles), NumPy's in python3 right after
// (bench/peers/numpy_peers.py), then onnxruntime-node's CPU execution provider (bench/peers/onnx.ts: the same
// workloads as ONNX graphs built in memory, each output checked against jaxon's on the same inputs before it is timed),
// all with every core (OpenMP / OpenBLAS / intra-op threads = the core count). Each figure is the median and range of
// the repeats. A ratio is the peer's median time over jaxon's: above 1, jaxon is faster.
// onnxruntime-node is not a dependency of jaxon: it is installed for the benchmark only, into bench/peers/onnx/
// (pinned there by a package.json and lockfile; node_modules gitignored), from the repository root with
//   npm ci --prefix bench/peers/onnx --ignore-scripts
// Without it (or without python3) the table says so and shows the other columns.
// Writes bench/peers.json. Options: --reps N (default 7).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jax from '../lib/index.js';
import { loadOnnxruntime, onnxSide, type OnnxResult, type Reference } from './peers/onnx.js';

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

/** jaxon's inputs and output of a workload (for onnxruntime's side to run on and be checked against). */
function reference(f: (...a: jax.Array[]) => jax.Array, args: jax.Array[], atol: number, rtol: number): Reference {
  const y = f(...args);
  const output = y.dataSync() as Float32Array;
  y.dispose();
  return { inputs: args.map((a) => ({ data: a.dataSync() as Float32Array, shape: a.shape })), output, atol, rtol };
}

function jaxonSide(refs: Record<string, Reference> | null): Record<string, Timing> {
  const out: Record<string, Timing> = {};
  const x = jax.random.normal(jax.random.key(0), [2 ** 24]);
  const jchain = jax.jit(chain);
  out['chain10'] = timed(call(jchain, x));
  // Tolerances (onnxruntime vs jaxon, float32): the chain's transcendentals a few ulp each through 11 ops; the sum of
  // 2^24 normals (|sum| ~ 4e3) in different orders; softmax entries ~1e-3; matmul entries ~sqrt(n), k = n products.
  if (refs) refs['chain10'] = reference(jchain, [x], 1e-5, 1e-4);
  const jsum = jax.jit((a: jax.Array) => jnp.sum(a));
  out['sum'] = timed(call(jsum, x));
  if (refs) refs['sum'] = reference(jsum, [x], 0.5, 1e-5);
  x.dispose();
  const s = jax.random.normal(jax.random.key(1), [4096, 1024]);
  const jsoftmax = jax.jit(softmax);
  out['softmax'] = timed(call(jsoftmax, s));
  if (refs) refs['softmax'] = reference(jsoftmax, [s], 1e-7, 1e-4);
  s.dispose();
  for (const n of [512, 1024, 2048]) {
    const a = jax.random.normal(jax.random.key(2), [n, n]);
    const b = jax.random.normal(jax.random.key(3), [n, n]);
    const jmatmul = jax.jit((p: jax.Array, q: jax.Array) => jnp.matmul(p, q));
    out[`matmul${n}`] = timed(call(jmatmul, a, b));
    if (refs) refs[`matmul${n}`] = reference(jmatmul, [a, b], 1e-6 * n, 1e-4);
    a.dispose();
    b.dispose();
  }
  const small = jnp.arange(8).astype('float32');
  out['add8'] = perCallMicroseconds(() => jnp.add(small, small));
  if (refs) refs['add8'] = reference((p: jax.Array, q: jax.Array) => jnp.add(p, q), [small, small], 0, 0);
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

const rows: [string, string, 'ms' | 'µs'][] = [
  ['chain10', '10-op elementwise chain, f32 2^24', 'ms'],
  ['sum', 'full sum, f32 2^24', 'ms'],
  ['softmax', 'row softmax, f32 4096x1024', 'ms'],
  ['matmul512', 'matmul f32 512²', 'ms'],
  ['matmul1024', 'matmul f32 1024²', 'ms'],
  ['matmul2048', 'matmul f32 2048²', 'ms'],
  ['add8', 'eager add f32[8], per call', 'µs'],
  ['jitAdd8', 'jitted add f32[8], per call (peers: their per-call add)', 'µs'],
];

const info = jax.environmentInfo();
if (info.platform !== 'cpu') console.log(`(note: jaxon's default platform is ${info.platform}; run with JAXON_PLATFORMS=cpu for the CPU backend)`);
const threads = os.cpus().length;
const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} x${threads}, Node ${process.version}`;
const started = new Date();
const loadAvg = os.loadavg().map((l) => l.toFixed(2)).join(' ');
const ortLoaded = loadOnnxruntime();
const refs: Record<string, Reference> | null = 'ort' in ortLoaded ? {} : null;
const mine = jaxonSide(refs);
let theirs: (Record<string, Timing> & { numpy?: string }) | null = null;
let numpyError = '';
try {
  theirs = numpySide();
} catch (error) {
  numpyError = (error as Error).message.split('\n')[0]!;
}
let onnx: OnnxResult | null = null;
let onnxNote = '';
if ('ort' in ortLoaded) {
  try {
    onnx = await onnxSide(ortLoaded.ort, ortLoaded.version, refs!, threads, reps, (line) => console.log(line));
    onnxNote = `onnxruntime-node ${ortLoaded.version}, CPU execution provider, ${threads} intra-op threads`;
  } catch (error) {
    onnxNote = `onnxruntime-node ${ortLoaded.version} failed: ${(error as Error).message.split('\n')[0]}`;
  }
} else onnxNote = `onnxruntime-node: ${ortLoaded.missing}`;
const fmt = (t: Timing | undefined, unit: string) => (t ? `${t.median_ms.toFixed(unit === 'µs' ? 2 : 1)} ${unit} (${t.min_ms.toFixed(unit === 'µs' ? 2 : 1)}–${t.max_ms.toFixed(unit === 'µs' ? 2 : 1)})` : 'n/a');
const ratio = (a: Timing | undefined, b: Timing | undefined): [number | undefined, string] =>
  a && b ? [b.median_ms / a.median_ms, `${(b.median_ms / a.median_ms).toFixed(2)}× (${(b.min_ms / a.max_ms).toFixed(2)}–${(b.max_ms / a.min_ms).toFixed(2)})`] : [undefined, 'n/a'];
console.log(`\njaxon vs NumPy ${theirs?.numpy ?? ''} and onnxruntime-node on ${machine}, ${started.toISOString()}, load average ${loadAvg} at the start, ${reps} repeats (median, range)`);
console.log(onnxNote);
if (!theirs) console.log(`NumPy: not run (${numpyError})`);
console.log('\n| workload | jaxon | NumPy | onnxruntime-node | speed vs NumPy (median; worst–best) | speed vs onnxruntime (median; worst–best) |');
console.log('|---|---:|---:|---:|---:|---:|');
const ratios: Record<string, number> = {};
const onnxRatios: Record<string, number> = {};
for (const [key, label, unit] of rows) {
  const a = mine[key];
  // NumPy and onnxruntime have no jit of their own: the jitted f32[8] add is set against their plain per-call add.
  const peerKey = key === 'jitAdd8' ? 'add8' : key;
  const b = theirs?.[peerKey];
  const o = onnx?.timings[peerKey];
  const [r, rs] = ratio(a, b);
  const [ro, ros] = ratio(a, o);
  if (r !== undefined) ratios[key] = r;
  if (ro !== undefined) onnxRatios[key] = ro;
  console.log(`| ${label} | ${fmt(a, unit)} | ${fmt(b, unit)} | ${fmt(o, unit)} | ${rs} | ${ros} |`);
}
writeFileSync(
  path.join('bench', 'peers.json'),
  JSON.stringify({ machine, date: started.toISOString(), loadavg_at_start: loadAvg, reps, jaxon: mine, numpy: theirs, onnxruntime: onnx ?? onnxNote, ratios, onnx_ratios: onnxRatios }, null, 2) + '\n',
);
