// The dry run of the GPU benchmark suite (issue 12): every jaxon workload of
// bench/gpu-suite.ts at tiny sizes on this machine's platform, so the harness
// cannot rot between the rare runs on a lent GPU. The suite's own checks
// must pass, and a few outputs are checked here against JS references too,
// so the dry run cannot pass on timings alone. The CLI joins a JAX report
// into its table; and, where python3 exists, JAX's side (bench/jax/*.py)
// compiles and lists the same workload names.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import * as jax from '../lib/index.js';
import { runSuite, selectWorkloads, workloads, type Row } from '../bench/gpu-suite.js';
import { checkConvPixels, checkSorted } from '../bench/jaxon/breadth.js';
import { disposeTree, quantile } from '../bench/jaxon/measure.js';
import { join, markdownTable, rooflineFraction } from '../bench/jaxon/report.js';

type Array = jax.Array;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SUITE = path.join(ROOT, 'dist', 'bench', 'gpu-suite.js');
const PYTHON_OK = spawnSync('python3', ['--version']).status === 0;

/** Runs one tiny workload's step once and hands its inputs and output to `inspect`. */
function withOutput(name: string, inspect: (out: Array, inputs: Array[]) => void): void {
  const [w] = selectWorkloads(workloads('tiny'), [name]);
  const p = w!.prepare!();
  try {
    const out = p.step() as Array;
    try {
      inspect(out, p.inputs!);
    } finally {
      disposeTree(out);
    }
  } finally {
    p.dispose();
  }
}

/** a (m×k) @ b (k×n) in float64. */
function matmulReference(a: ArrayLike<number>, b: ArrayLike<number>, m: number, k: number, n: number): Float64Array {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) out[i * n + j]! += a[i * k + p]! * b[p * n + j]!;
  return out;
}

test('every workload runs at tiny sizes with finite positive times and right outputs', (t) => {
  const device = jax.devices()[0]!;
  t.log(`platform ${device.platform} (${device.deviceKind})`);
  const start = performance.now();
  const rows = runSuite({ sizes: 'tiny' });
  t.log(`the tiny suite took ${((performance.now() - start) / 1000).toFixed(1)} s`);
  t.deepEqual(rows.map((r) => r.name), workloads('tiny').map((w) => w.name));
  for (const r of rows) {
    t.true(Number.isFinite(r.median_ms) && r.median_ms > 0, `${r.name}: median ${r.median_ms}`);
    t.true(r.p10_ms <= r.median_ms && r.median_ms <= r.p90_ms && r.min_ms <= r.p10_ms && r.p90_ms <= r.max_ms, `${r.name}: spread out of order`);
    t.true(r.n >= 1, `${r.name}: n ${r.n}`);
    t.is(r.timing, 'wall');
    t.true(r.check === 'ok' || r.check === 'not checked', `${r.name}: ${r.check}`);
  }
  // the workload families are all here, and most outputs were checked
  for (const family of ['copy_', 'chain10_f32', 'chain10_bf16', 'sum_', 'softmax_', 'layernorm_', 'transpose_', 'gemm_bf16', 'gemm_f32', 'mlp_gelu', 'sort_f32', 'conv_f32', 'conv_bf16', 'solve_f32', 'dispatch_1kernel', 'dispatch_10kernels', 'h2d_pageable', 'h2d_pinned', 'd2h_pinned', 'd2h_pageable', 'tutorial_baseline', 'tutorial_activation_offload', 'tutorial_parameter_offload', 'adam_step', 'adam_step_offloaded', 'compile_cold', 'compile_warm']) {
    t.true(rows.some((r) => r.name.startsWith(family)), `no ${family} row`);
  }
  t.true(rows.filter((r) => r.check === 'ok').length >= 27, `only ${rows.filter((r) => r.check === 'ok').length} rows checked`);
  const kernels = (name: string) => rows.find((r) => r.name === name)!.extra?.['kernels'];
  t.is(kernels('dispatch_1kernel'), 1);
  t.is(kernels('dispatch_10kernels'), 10);
  for (const name of ['tutorial_activation_offload', 'adam_step_offloaded']) {
    const extra = rows.find((r) => r.name === name)!.extra!;
    t.is(typeof (extra['memory_analysis'] as { peak_bytes: number }).peak_bytes, 'number', `${name}: memory_analysis`);
  }
});

test('softmax rows sum to 1 and match a JS softmax', (t) => {
  withOutput('softmax_f32_64x64', (out, [x]) => {
    const got = out.dataSync();
    const input = x!.dataSync();
    for (let r = 0; r < 64; r++) {
      const row = Array.from(input.subarray(r * 64, (r + 1) * 64));
      const max = Math.max(...row);
      const total = row.reduce((a, v) => a + Math.exp(v - max), 0);
      let sum = 0;
      for (let c = 0; c < 64; c++) {
        sum += got[r * 64 + c]!;
        t.true(Math.abs(got[r * 64 + c]! - Math.exp(row[c]! - max) / total) < 1e-6, `[${r},${c}]`);
      }
      t.true(Math.abs(sum - 1) < 1e-5, `row ${r} sums to ${sum}`);
    }
  });
});

test('GEMMs match a float64 JS matmul (f32 closely, bf16 within its rounding)', (t) => {
  withOutput('gemm_f32_64', (out, [a, b]) => {
    const want = matmulReference(a!.dataSync(), b!.dataSync(), 64, 64, 64);
    // a GPU's default precision rounds float32 operands to tf32, as JAX's: relative to sum |a||b|
    const magnitude = matmulReference(a!.dataSync().map(Math.abs), b!.dataSync().map(Math.abs), 64, 64, 64);
    const got = out.dataSync();
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) - (jax.defaultBackend() === 'cuda' ? 2 ** -10 * magnitude[i]! : 0));
    t.true(worst < 1e-3, `worst error ${worst} (beyond tf32 rounding on a GPU)`);
  });
  withOutput('gemm_bf16_48', (out, [a, b]) => {
    t.is(out.dtype, 'bfloat16');
    const want = matmulReference(a!.dataSync(), b!.dataSync(), 48, 48, 48);
    const got = out.dataSync();
    for (let i = 0; i < want.length; i++) t.true(Math.abs(got[i]! - want[i]!) <= 2 ** -7 * Math.abs(want[i]!) + 1e-2, `[${i}] ${got[i]} vs ${want[i]}`);
  });
});

test('transpose is exact and the elementwise chain matches bench/eager.ts’s ops in JS', (t) => {
  withOutput('transpose_f32_64x48', (out, [x]) => {
    t.deepEqual(out.shape, [48, 64]);
    const got = out.dataSync();
    const input = x!.dataSync();
    let mismatches = 0;
    for (let r = 0; r < 64; r++) for (let c = 0; c < 48; c++) if (got[c * 64 + r] !== input[r * 48 + c]) mismatches++;
    t.is(mismatches, 0);
  });
  withOutput('chain10_f32_2^10', (out, [x]) => {
    const got = out.dataSync();
    const input = x!.dataSync();
    let worst = 0;
    input.forEach((v, i) => {
      const want = -Math.exp(Math.max(Math.sqrt(Math.abs(Math.tanh(v * 1.5 + 0.25) ** 2 - 0.5)), 0.1));
      worst = Math.max(worst, Math.abs(got[i]! - want) / Math.abs(want));
    });
    t.true(worst < 4e-3, `worst relative error ${worst}`);
  });
});

test('the breadth rows check their outputs: a sort out of order or losing a value, a convolution 1% off, fail', (t) => {
  const { numpy: jnp } = jax;
  t.is(checkSorted(jnp.array([1, 2, 3]), jnp.array([3, 1, 2])), null);
  t.regex(checkSorted(jnp.array([1, 3, 2]), jnp.array([3, 1, 2])) ?? '', /out of order at 2: 3 then 2/);
  t.regex(checkSorted(jnp.array([1, 2, 2]), jnp.array([3, 1, 2])) ?? '', /the output sums to 5, the input to 6/);
  withOutput('conv_f32_2x8x8x4_3x3x8', (out, [x, w]) => {
    t.is(checkConvPixels(out, x!, w!, 3), null);
    const off = jnp.multiply(out, 1.01);
    t.regex(checkConvPixels(off, x!, w!, 3) ?? '', /^conv: pixel \(0, 0\) feature 0/);
    off.dispose();
  });
});

test('the table: ratio is JAX time / jaxon time, roofline from bytes or flops', (t) => {
  const row = (name: string, kind: Row['kind'], median: number, flops: number, bytes: number): Row => ({
    name, kind, shape: '1', dtype: 'float32', median_ms: median, p10_ms: median * 0.9, p90_ms: median * 1.1, min_ms: median * 0.8, max_ms: median * 1.2,
    n: 5, flops, bytes, timing: 'wall', check: 'ok',
  });
  const roofline = { hbmBytesPerSecond: 1e12, peakFlops: { float32: 1e15 } };
  // 1 GB at 1 TB/s is 1 ms: a 2 ms run is at 50% of the roofline; 1e12 flops at 1e15 is 1 ms: a 4 ms run is at 25%
  t.is(rooflineFraction(row('m', 'memory', 2, 0, 1e9), roofline), 0.5);
  t.is(rooflineFraction(row('c', 'compute', 4, 1e12, 1e6), roofline), 0.25);
  t.is(rooflineFraction(row('d', 'dispatch', 4, 1e12, 1e6), roofline), null);
  const joined = join([row('a', 'memory', 2, 0, 1e9), row('b', 'compute', 4, 1e12, 0)], [row('a', 'memory', 1, 0, 1e9), row('z', 'memory', 1, 0, 1)], roofline, { jaxOnly: true });
  t.deepEqual(joined.map((j) => j.name), ['a', 'b', 'z']);
  t.is(joined[0]!.ratio, 0.5);
  t.is(joined[1]!.ratio, null);
  const table = markdownTable(joined, true);
  t.regex(table, /\| a \| 2\.000 ms \| 1\.000 ms \| 0\.50x \| 50% \/ 100% \| ±10\.0% \/ ±10\.0% \|/);
  t.is(quantile([1, 2, 3, 4, 5], 0.1), 1.4);
});

test('the CLI prints the device and wall-time table, joins a JAX report by name, writes JSON, and rejects unknown arguments', (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jaxon-gpu-suite-'));
  try {
    const names = ['gemm_f32_16', 'dispatch_1kernel'];
    const jaxRows = names.map((name) => ({ name, kind: name.startsWith('gemm') ? 'compute' : 'dispatch', shape: '16', dtype: 'float32', median_ms: 1e-3, p10_ms: 1e-3, p90_ms: 1e-3, min_ms: 1e-3, max_ms: 1e-3, n: 3, flops: 8192, bytes: 3072, timing: 'wall', check: 'ok' }));
    writeFileSync(path.join(dir, 'jax.json'), JSON.stringify({ meta: { device_kind: 'test', hbm_bytes_per_s: 1e12, peak_flops: { float32: 1e15 } }, rows: jaxRows }));
    const out = path.join(dir, 'jaxon.json');
    const run = spawnSync(process.execPath, [SUITE, '--sizes', 'tiny', '--only', names.join(','), '--jax', path.join(dir, 'jax.json'), '--out', out], { encoding: 'utf8' });
    t.is(run.status, 0, run.stderr);
    t.regex(run.stdout, /device: \w+Device\(id=0\)/);
    t.regex(run.stdout, /wall time/);
    t.regex(run.stdout, /\| workload \| jaxon \| JAX \| ratio \(JAX \/ jaxon\)/);
    t.regex(run.stdout, /\| gemm_f32_16 \| [\d.]+ (µs|ms) \| 1\.0 µs \| [\d.]+x \|/);
    const written = JSON.parse(readFileSync(out, 'utf8')) as { rows: Row[]; joined: { name: string; ratio: number }[] };
    t.deepEqual(written.rows.map((r) => r.name), names);
    t.true(written.joined.every((j) => j.ratio > 0));
    const bad = spawnSync(process.execPath, [SUITE, '--sizes', 'huge'], { encoding: 'utf8' });
    t.not(bad.status, 0);
    t.regex(bad.stderr, /--sizes must be full or tiny, got "huge"/);
    const unknown = spawnSync(process.execPath, [SUITE, '--only', 'nonesuch'], { encoding: 'utf8' });
    t.regex(unknown.stderr, /--only "nonesuch" matches no workload; the workloads are copy_f32/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

(PYTHON_OK ? test : test.skip)(`JAX's side: bench/jax/*.py pass python3 -m py_compile and list the same workloads${PYTHON_OK ? '' : ' (skipped: python3 not found)'}`, (t) => {
  const jaxDir = path.join(ROOT, 'bench', 'jax');
  const scripts = readdirSync(jaxDir).filter((f) => f.endsWith('.py')).map((f) => path.join(jaxDir, f));
  t.true(scripts.length >= 5, scripts.join(', '));
  // compiled bytecode goes to a scratch folder, not beside the sources
  const env = { ...process.env, PYTHONPYCACHEPREFIX: mkdtempSync(path.join(os.tmpdir(), 'jaxon-pycache-')) };
  try {
    const compiled = spawnSync('python3', ['-m', 'py_compile', ...scripts], { encoding: 'utf8', env });
    t.is(compiled.status, 0, compiled.stderr);
    // --list builds the workload list without importing JAX or NumPy
    for (const sizes of ['tiny', 'full'] as const) {
      const listed = spawnSync('python3', [path.join(jaxDir, 'run.py'), '--sizes', sizes, '--list'], { encoding: 'utf8', env });
      t.is(listed.status, 0, listed.stderr);
      t.deepEqual(listed.stdout.trim().split('\n'), workloads(sizes).map((w) => w.name), `${sizes}: JAX's and jaxon's workload names differ`);
    }
  } finally {
    rmSync(env.PYTHONPYCACHEPREFIX, { recursive: true, force: true });
  }
});
