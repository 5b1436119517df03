// The GPU's multi-block eigh and svd (render/linalg-jacobi-cuda.ts: the
// one-block kernel's round-robin rounds spread over many blocks, a launch
// per round) against the one-block kernel (render/linalg-jacobi.ts): the
// same operations per entry, so the same bits, values and vectors, signs and
// order included; svd tall, wide, full, reduced, values only, with a
// rank-deficient matrix (U completed by the one-block kernel's tail). Forced onto small matrices with
// JAXON_CUDA_MULTIBLOCK_JACOBI (odd and even n, batched, both triangles,
// unsorted, float32 and float64), plus invariants (a·v = v·diag(w),
// orthonormal v, ascending w) and NaN inputs, which must end as the one-block
// kernel's do instead of hanging. On the CPU
// the plan alone is checked (cross-lowering for CUDA): the C target never
// takes the path; and where nvcc exists every stage, rendered at 1024 x 1024
// (eigh) and 2048 x 1024 (svd), compiles for sm_90a with no spills.
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jax from '../lib/index.js';
import { bind } from '../lib/core/bind.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import type { JacobiStage, OrthogonalKernel } from '../lib/compiler/kernel-ir.js';
import { renderCuda } from '../lib/compiler/render/cuda.js';
import { kernelHeaderDir } from '../lib/runtime/kernel-headers.js';
import { CUDA_JACOBI_MAX_BATCH, CUDA_JACOBI_MIN } from '../lib/compiler/render/linalg-jacobi-cuda.js';
import { JACOBI_MAX_SWEEPS } from '../lib/compiler/render/linalg-jacobi.js';
import { randomValues } from './helpers/oracle.js';
import { withX64 } from './helpers/x64.js';

const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';
const VARIABLE = 'JAXON_CUDA_MULTIBLOCK_JACOBI';

/** `fn` with the multi-block threshold at `min` (undefined: the default), restored after. */
function withThreshold<T>(min: string | undefined, fn: () => T): T {
  const saved = process.env[VARIABLE];
  if (min === undefined) delete process.env[VARIABLE];
  else process.env[VARIABLE] = min;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env[VARIABLE];
    else process.env[VARIABLE] = saved;
  }
}

const symmetric = (n: number, seed: number): number[] => {
  const a = randomValues(n * n, seed);
  return a.map((_, e) => (a[e]! + a[(e % n) * n + Math.floor(e / n)]!) / 2);
};

/** The stages of eigh's CUDA plan over [..., n, n] (the state's zeros as 'elementwise'). */
function stages(shape: number[], dtype: DType = 'float32'): string[] {
  const x = { shape, dtype, weakType: false };
  return lowerPrimitive('eigh', [x], [], { lower: true, sortEigenvalues: true }, 'cuda').launches
    .map((l) => (l.kernel.kind === 'orthogonal' ? l.kernel.jacobi?.stage ?? 'one block per matrix' : l.kernel.kind));
}

test('the CUDA plan: a block per matrix below the threshold and above the batch cap, else 60 sweeps of n - 1 (n odd: n) rounds and the test', (t) => {
  withThreshold(undefined, () => {
    t.deepEqual(stages([CUDA_JACOBI_MIN - 1, CUDA_JACOBI_MIN - 1]), ['one block per matrix']);
    t.is(stages([CUDA_JACOBI_MIN, CUDA_JACOBI_MIN]).filter((s) => s === 'round').length, JACOBI_MAX_SWEEPS * (CUDA_JACOBI_MIN - 1));
  });
  withThreshold('5', () => {
    const sweep = (rounds: number) => ['norms', 'test', ...globalThis.Array<string>(rounds).fill('round')];
    t.deepEqual(stages([2, 5, 5]), ['elementwise', 'init', ...globalThis.Array.from({ length: JACOBI_MAX_SWEEPS }, () => sweep(5)).flat(), 'sort', 'permute']);
    t.is(stages([6, 6], 'float64').filter((s) => s === 'round').length, JACOBI_MAX_SWEEPS * 5);
    t.deepEqual(stages([4, 4]), ['one block per matrix']);
    t.deepEqual(stages([CUDA_JACOBI_MAX_BATCH + 1, 8, 8]), ['one block per matrix']);
    t.is(stages([CUDA_JACOBI_MAX_BATCH, 8, 8]).length, 2 + JACOBI_MAX_SWEEPS * (2 + 7) + 2, 'zeros, init, 60 sweeps of the test and 7 rounds, sort, permute');
    // the C target keeps its one launch
    const x = { shape: [8, 8], dtype: 'float32' as const, weakType: false };
    t.is(lowerPrimitive('eigh', [x], [], { lower: true, sortEigenvalues: true }, 'cpu').launches.length, 1);
    t.is(lowerPrimitive('svd', [x], [], { fullMatrices: true, computeUv: true }, 'cpu').launches.length, 1);
    // svd by min(m, n): a launch per round, a test after each sweep, the one-block tail
    const svd = (shape: number[]) => lowerPrimitive('svd', [{ shape, dtype: 'float32', weakType: false }], [], { fullMatrices: false, computeUv: true }, 'cuda').launches
      .map((l) => (l.kernel.kind === 'orthogonal' ? l.kernel.jacobi?.stage ?? 'one block per matrix' : l.kernel.kind));
    const svdSweep = [...globalThis.Array<string>(5).fill('svd_round'), 'svd_test'];
    t.deepEqual(svd([9, 5]), ['elementwise', 'svd_init', ...globalThis.Array.from({ length: JACOBI_MAX_SWEEPS }, () => svdSweep).flat(), 'svd_finish']);
    t.deepEqual(svd([4, 9]), ['one block per matrix']);
  });
  withThreshold('0', () => t.throws(() => stages([8, 8]), { message: /JAXON_CUDA_MULTIBLOCK_JACOBI: expected MIN \(an integer >= 1\), got "0"/ }));
});

const bits = (x: Array): string => Buffer.from(x.dataSync().buffer).toString('hex');

function assertInvariants(t: ExecutionContext, label: string, input: number[], v: number[], w: number[], n: number, batch: number, atol: number): void {
  for (let b = 0; b < batch; b++) {
    const at = (h: number[], i: number, j: number) => h[b * n * n + i * n + j]!;
    let residual = 0;
    let orthogonality = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let av = 0;
        let vv = 0;
        for (let k = 0; k < n; k++) { av += at(input, i, k) * at(v, k, j); vv += at(v, k, i) * at(v, k, j); }
        residual = Math.max(residual, Math.abs(av - at(v, i, j) * w[b * n + j]!));
        orthogonality = Math.max(orthogonality, Math.abs(vv - (i === j ? 1 : 0)));
      }
      if (i > 0) t.true(w[b * n + i]! >= w[b * n + i - 1]!, `${label}: matrix ${b}: eigenvalues ascending`);
    }
    t.true(residual <= atol * 50, `${label}: matrix ${b}: |a·v - v·diag(w)| = ${residual}`);
    t.true(orthogonality <= atol, `${label}: matrix ${b}: |vᵀv - I| = ${orthogonality}`);
  }
}

interface Case { label: string; dtype: DType; batch: number[]; n: number; lower: boolean; sort: boolean }
const cases: Case[] = [
  { label: 'float32, batch of 2, n = 9 (odd: a dummy index), upper triangle', dtype: 'float32', batch: [2], n: 9, lower: false, sort: true },
  { label: 'float64, n = 33 (tiles of 16 x 16 pairs, 4 per matrix)', dtype: 'float64', batch: [], n: 33, lower: true, sort: true },
  { label: 'float64, batch of 2, n = 10, unsorted', dtype: 'float64', batch: [2], n: 10, lower: true, sort: false },
];

(onCuda ? test.serial : test.skip)('multi-block eigh == the one-block kernel, bit for bit (odd n, batched, upper, unsorted, float32 and float64)', (t) => {
  withX64(true, () => {
    for (const c of cases) {
      const batch = c.batch.reduce((a, b) => a * b, 1);
      // not symmetric: each triangle gives another matrix, so reading the wrong one fails
      const values = [...globalThis.Array(batch).keys()].flatMap((b) => randomValues(c.n * c.n, 20 + b));
      const x = lax.reshape(jnp.array(values, { dtype: c.dtype }), [...c.batch, c.n, c.n]);
      const run = () => jax.jit((a: Array) => lax.linalg.eigh(a, { symmetrizeInput: false, lower: c.lower, sortEigenvalues: c.sort }));
      const one = withThreshold(undefined, () => run()(x));
      const multiFn = withThreshold(String(c.n), () => run());
      const compiled = withThreshold(String(c.n), () => multiFn.lower(x).compile().kernels().map((k) => k.name));
      t.true(compiled.some((name) => name.includes('_multiblock_round')), `${c.label}: the multi-block stages (${compiled.join(', ')})`);
      const multi = withThreshold(String(c.n), () => multiFn(x));
      t.is(bits(multi[1]!), bits(one[1]!), `${c.label}: eigenvalues bit for bit`);
      t.is(bits(multi[0]!), bits(one[0]!), `${c.label}: eigenvectors bit for bit`);
      // the triangle it read, symmetrized, is what v and w decompose
      const input = values.map((_, e) => {
        const b = Math.floor(e / (c.n * c.n));
        const i = Math.floor(e / c.n) % c.n;
        const j = e % c.n;
        const [r, s] = c.lower === i >= j ? [i, j] : [j, i];
        return values[b * c.n * c.n + r * c.n + s]!;
      });
      const w = globalThis.Array.from(multi[1]!.dataSync(), Number);
      if (c.sort) assertInvariants(t, c.label, input, globalThis.Array.from(multi[0]!.dataSync(), Number), w, c.n, batch, c.dtype === 'float32' ? 2e-5 : 1e-12);
    }
  });
});

(onCuda ? test.serial : test.skip)('multi-block eigh of matrices with a NaN ends as the one-block kernel does', (t) => {
  // a NaN on the diagonal makes the whole mass NaN, one below it the off-diagonal mass: either way the first test
  // (!(off > tol)) stops the sweeps at once, the first with a NaN eigenvalue, the second with the diagonal's values
  // the kernels of the first case above (float32, 2 x 9 x 9, the upper triangle): nothing more to compile
  const n = 9;
  const values = [...symmetric(n, 40), ...symmetric(n, 42)];
  values[5 * n + 5] = NaN;
  values[n * n + 3 * n + 5] = NaN; // in the upper triangle, the one read
  const x = lax.reshape(jnp.array(values, { dtype: 'float32' }), [2, n, n]);
  // the primitive itself: lax.linalg.eigh turns every output of a matrix with a NaN into NaN (as JAX), which would
  // hide what the kernels did
  const run = () => jax.jit((a: Array) => bind('eigh', [a], { lower: false, sortEigenvalues: true }) as [Array, Array]);
  const one = withThreshold(undefined, () => run()(x));
  const multi = withThreshold(String(n), () => run()(x));
  t.is(bits(multi[1]!), bits(one[1]!));
  t.is(bits(multi[0]!), bits(one[0]!));
  const w = globalThis.Array.from(multi[1]!.dataSync(), Number);
  t.true(w.slice(0, n).some(Number.isNaN), `the NaN on the diagonal: ${w.slice(0, n)}`);
  t.deepEqual(w.slice(n), values.slice(n * n).filter((_, e) => e % (n + 1) === 0).map(Math.fround).sort((a, b) => a - b), 'the NaN off the diagonal: its diagonal, sorted');
  const [vLax, wLax] = withThreshold(String(n), () => jax.jit((a: Array) => lax.linalg.eigh(a, { symmetrizeInput: false, lower: false }))(x));
  t.true([...vLax!.dataSync(), ...wLax!.dataSync()].every(Number.isNaN), 'lax.linalg.eigh: NaN throughout, as JAX');
});

interface SvdCase { label: string; dtype: DType; shape: number[]; fullMatrices: boolean; computeUv: boolean }
const svdCases: SvdCase[] = [
  { label: 'float32, batch of 2, tall 9 x 6, full', dtype: 'float32', shape: [2, 9, 6], fullMatrices: true, computeUv: true },
  { label: 'float64, wide 33 x 34 (9 blocks of pairs), reduced', dtype: 'float64', shape: [33, 34], fullMatrices: false, computeUv: true },
  { label: 'float32, wide 5 x 8, values only', dtype: 'float32', shape: [5, 8], fullMatrices: false, computeUv: false },
];

(onCuda ? test.serial : test.skip)('multi-block svd == the one-block kernel, bit for bit (tall, wide, batched, full, reduced, values only, float32 and float64)', (t) => {
  withX64(true, () => {
    for (const c of svdCases) {
      const [m, n] = c.shape.slice(-2) as [number, number];
      const count = c.shape.reduce((a, b) => a * b, 1);
      const values = randomValues(count, 60 + m);
      // the second matrix of a batch of rank 2: zero singular values, U completed by Gram-Schmidt
      if (c.shape.length === 3) {
        const b = randomValues(m * 2, 70);
        const d = randomValues(2 * n, 71);
        for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) values[m * n + i * n + j] = b[i * 2]! * d[j]! + b[i * 2 + 1]! * d[n + j]!;
      }
      const x = lax.reshape(jnp.array(values, { dtype: c.dtype }), c.shape);
      const options = { fullMatrices: c.fullMatrices, computeUv: c.computeUv };
      const run = () => jax.jit((a: Array) => lax.linalg.svd(a, options) as Array | Array[]);
      const flat = (o: Array | Array[]) => (o instanceof globalThis.Array ? o : [o]);
      const one = flat(withThreshold(undefined, () => run()(x)));
      const min = String(Math.min(m, n));
      const multiFn = withThreshold(min, () => run());
      const compiled = withThreshold(min, () => multiFn.lower(x).compile().kernels().map((k) => k.name));
      t.true(compiled.some((name) => name.includes('_multiblock_svd_round')), `${c.label}: the multi-block stages (${compiled.join(', ')})`);
      const multi = flat(withThreshold(min, () => multiFn(x)));
      t.is(multi.length, c.computeUv ? 3 : 1);
      multi.forEach((o, i) => t.is(bits(o), bits(one[i]!), `${c.label}: output ${i} bit for bit`));
      const s = globalThis.Array.from(multi[c.computeUv ? 1 : 0]!.dataSync(), Number);
      const k = Math.min(m, n);
      t.true(s.every((v, e) => e % k === 0 || v <= s[e - 1]!), `${c.label}: singular values descending`);
      if (!c.computeUv) continue;
      // u·diag(s)·vt = x
      const u = globalThis.Array.from(multi[0]!.dataSync(), Number);
      const vt = globalThis.Array.from(multi[2]!.dataSync(), Number);
      const uc = c.fullMatrices ? m : k;
      const vr = c.fullMatrices ? n : k;
      let worst = 0;
      for (let b = 0; b < count / (m * n); b++) {
        for (let i = 0; i < m; i++) {
          for (let j = 0; j < n; j++) {
            let sum = 0;
            for (let q = 0; q < k; q++) sum += u[b * m * uc + i * uc + q]! * s[b * k + q]! * vt[b * vr * n + q * n + j]!;
            worst = Math.max(worst, Math.abs(sum - values[b * m * n + i * n + j]!));
          }
        }
      }
      t.true(worst <= (c.dtype === 'float32' ? 1e-4 : 1e-11), `${c.label}: |u·diag(s)·vt - x| = ${worst}`);
    }
  });
});

(onCuda ? test.serial : test.skip)('multi-block svd of a matrix with a NaN ends as the one-block kernel does', (t) => {
  // the kernels of the values-only case above (float32, 5 x 8): nothing more to compile
  const values = randomValues(5 * 8, 80);
  values[7] = NaN;
  const x = lax.reshape(jnp.array(values, { dtype: 'float32' }), [5, 8]);
  const run = () => jax.jit((a: Array) => bind('svd', [a], { fullMatrices: true, computeUv: false })[0]!);
  const one = withThreshold(undefined, () => run()(x));
  const multi = withThreshold('5', () => run()(x));
  t.is(bits(multi), bits(one));
  t.true(globalThis.Array.from(multi.dataSync(), Number).some(Number.isNaN));
});

const nvcc = spawnSync('nvcc', ['--version'], { encoding: 'utf8' }).status === 0;

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

// on the CPU run only (the emulated GPU's run renders the same sources)
(nvcc && !onCuda ? test : test.skip)(`nvcc -Xptxas -v: every multi-block stage compiles for sm_90a with no spills${nvcc ? '' : ' (nvcc not on PATH)'}`, async (t) => {
  t.timeout(300_000);
  const eigh = (dtype: DType): OrthogonalKernel => ({ kind: 'orthogonal', op: 'eigh', dtype, fullMatrices: false, computeUv: true, lower: true, sort: true });
  const svd = (dtype: DType, fullMatrices: boolean, computeUv: boolean): OrthogonalKernel => ({ kind: 'orthogonal', op: 'svd', dtype, fullMatrices, computeUv, lower: true, sort: true });
  const variants: { label: string; kernel: OrthogonalKernel; params: number[]; stages: JacobiStage[] }[] = [
    { label: 'eigh float32 1024', kernel: eigh('float32'), params: [1, 1024, 1024], stages: ['init', 'norms', 'test', 'round', 'sort', 'permute'] },
    { label: 'eigh float64 2 x 1024', kernel: eigh('float64'), params: [2, 1024, 1024], stages: ['norms', 'round', 'sort'] },
    { label: 'svd float32 2048 x 1024 full', kernel: svd('float32', true, true), params: [1, 2048, 1024], stages: ['svd_init', 'svd_round', 'svd_test', 'svd_finish'] },
    { label: 'svd float64 1024 x 2048 values only', kernel: svd('float64', false, false), params: [1, 1024, 2048], stages: ['svd_init', 'svd_round'] },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'jaxon-jacobi-multiblock-'));
  const jobs = variants.flatMap((v) => v.stages.map((stage) => ({ label: `${v.label} ${stage}`, source: renderCuda({ ...v.kernel, jacobi: { stage } }, v.params) })));
  // one translation unit, one nvcc (the suite shares the machine); ptxas reports each entry function in turn
  const path = join(dir, 'stages.cu');
  writeFileSync(path, jobs.map((j) => j.source.source).join('\n'));
  const { code, output } = await run('nvcc', ['-cubin', '-arch=sm_90a', '-w', '-Xptxas', '-v', '-I', kernelHeaderDir(), '-o', join(dir, 'stages.cubin'), path]);
  if (code !== 0) t.fail(`nvcc failed:\n${output.slice(0, 6000)}`);
  const lines: string[] = [];
  for (const j of code === 0 ? jobs : []) {
    const from = output.indexOf(`Compiling entry function '${j.source.name}'`);
    const report = from < 0 ? '' : output.slice(from, output.indexOf('Compiling entry function', from + 1) >>> 0);
    const registers = /Used (\d+) registers/.exec(report)?.[1];
    const spills = /(\d+) bytes spill stores, (\d+) bytes spill loads/.exec(report);
    t.truthy(registers && spills, `${j.label}: ptxas -v reports registers and spills`);
    t.deepEqual([spills?.[1], spills?.[2]], ['0', '0'], `${j.label}: no spills`);
    lines.push(`${j.label}: ${registers} registers, ${spills?.[1]} bytes spill stores, ${spills?.[2]} bytes spill loads`);
  }
  t.log(lines.join('\n'));
  rmSync(dir, { recursive: true, force: true });
});
