// The blocked QR (LAPACK's geqrf + orgqr by panels: render/linalg-qr-blocked.ts on the CPU) against NumPy 2.4's
// LAPACK (test/fixtures/gen_linalg_qr_blocked.py: R's diagonal with LAPACK's signs and last row, Q's first and last
// columns) at a forced threshold of 16 with panels of 8 (JAXON_CPU_BLOCKED_QR): tall, square and wide, reduced and
// complete (float32; float64 complete), batched, sizes that are not multiples of the panel, float32 and float64;
// Q R = A and Q^T Q = I for every matrix; the blocked path against the unblocked one on the same matrices. On the
// (emulated) GPU the same through the CUDA blocked stages (render/linalg-qr-cuda-blocked.ts) from
// JAXON_CUDA_BLOCKED_LINALG's threshold of 16 with panels of 8, against the one-block-per-matrix kernel.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import { QR_BLOCKED_MIN, QR_NB, cpuQrBlocking } from '../lib/compiler/render/linalg-qr-blocked.js';
import { loadFixture } from './helpers/fixtures.js';
import { withX64 } from './helpers/x64.js';

interface Case {
  dtype: DType; shape: number[]; seed: number; mode: 'reduced' | 'complete';
  diagonal: number[]; lastRow: number[]; firstColumn: number[]; lastColumn: number[];
}
const fixture = loadFixture<{ cases: Case[] }>('linalg_qr_blocked.json');
const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';
/** The CPU's blocked QR from 16 (every fixture takes it) with panels of 8 (3 to 5 panels, the last one partial). */
const CPU_TEST_BLOCKING = '16:8';
process.env['JAXON_CPU_BLOCKED_QR'] ??= CPU_TEST_BLOCKING;
/** The same on the GPU (render/linalg-cuda-blocked.ts's override, which qr shares). */
const CUDA_TEST_BLOCKING = '16:8';
if (onCuda) process.env['JAXON_CUDA_BLOCKED_LINALG'] ??= CUDA_TEST_BLOCKING;
/** The variable that moves the threshold on the platform the tests run on. */
const blockingVariable = onCuda ? 'JAXON_CUDA_BLOCKED_LINALG' : 'JAXON_CPU_BLOCKED_QR';

/** gen_linalg_qr_blocked.py's integer generator (MINSTD): entries (x % 2001 - 1000) / 64, exact in float32. */
function generated(shape: number[], seed: number): number[] {
  let x = seed;
  return globalThis.Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => {
    x = (x * 48271) % 2147483647;
    return ((x % 2001) - 1000) / 64;
  });
}

const values = (x: Array) => globalThis.Array.from(x.dataSync(), Number);
const maxDifference = (x: readonly number[], y: readonly number[]) => x.reduce((a, v, i) => Math.max(a, Math.abs(v - y[i]!)), 0);
const inX64 = <T>(dtype: DType, fn: () => T): T => withX64(dtype === 'float64', fn);
/** Relative to the largest entry of what is compared: float32 LAPACK and ours differ by a few ulps of R's norms. */
const tolerance = (d: DType) => (d === 'float64' ? 1e-11 : 2e-5);

/** The matrix b of a batch of row-major [rows, cols] matrices. */
const matrixOf = (x: readonly number[], b: number, rows: number, cols: number) => x.slice(b * rows * cols, (b + 1) * rows * cols);

function assertNear(t: ExecutionContext, got: readonly number[], want: readonly number[], dtype: DType, message: string): void {
  const scale = Math.max(1, ...want.map(Math.abs));
  const bad = got.findIndex((v, i) => !(Math.abs(v - want[i]!) <= tolerance(dtype) * scale));
  t.true(got.length === want.length && bad < 0, `${message}: at ${bad} got ${got[bad]}, want ${want[bad]} (${got.length} vs ${want.length} values)`);
}

/** q [rows, qc] and r [qc, n] of every matrix: Q R = A and Q^T Q = I, in float64 JS. */
function assertFactors(t: ExecutionContext, q: number[], r: number[], a: number[], batch: number, m: number, n: number, qc: number, dtype: DType, message: string): void {
  const eps = dtype === 'float64' ? 2.2e-16 : 1.2e-7;
  for (let b = 0; b < batch; b++) {
    const Q = matrixOf(q, b, m, qc);
    const R = matrixOf(r, b, qc, n);
    const A = matrixOf(a, b, m, n);
    let residual = 0;
    let norm = 0;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let k = 0; k < qc; k++) s += Q[i * qc + k]! * R[k * n + j]!;
        residual = Math.max(residual, Math.abs(s - A[i * n + j]!));
        norm = Math.max(norm, Math.abs(A[i * n + j]!));
      }
    }
    let orthogonality = 0;
    for (let i = 0; i < qc; i++) {
      for (let j = 0; j < qc; j++) {
        let s = 0;
        for (let k = 0; k < m; k++) s += Q[k * qc + i]! * Q[k * qc + j]!;
        orthogonality = Math.max(orthogonality, Math.abs(s - (i === j ? 1 : 0)));
      }
    }
    const bound = 30 * Math.max(m, n) * eps;
    t.true(residual <= bound * norm * Math.sqrt(n), `${message}, matrix ${b}: |Q R - A| = ${residual}`);
    t.true(orthogonality <= bound, `${message}, matrix ${b}: |Q^T Q - I| = ${orthogonality}`);
    t.true(R.every((v, e) => Math.floor(e / n) <= e % n || v === 0), `${message}, matrix ${b}: R is upper triangular`);
  }
}

/** The fixtures' qr in one jitted program (one kernel compile per shape and mode), lowered at the current blocking. */
function qrs(cases: Case[], dtype: DType): { inputs: number[][]; outputs: number[][][] } {
  const inputs = cases.map((c) => generated(c.shape, c.seed));
  const arrays = cases.map((c, i) => jnp.array(inputs[i]!, { dtype }).reshape(c.shape));
  const outputs = jax.jit((...as: Array[]) => as.map((a, i) => jnp.linalg.qr(a, { mode: cases[i]!.mode })))(...arrays) as Array[][];
  return { inputs, outputs: outputs.map((pair) => pair.map(values)) };
}

test('the fixtures take the blocked path on the CPU (panels of 8 from 16; the default threshold and panel otherwise)', (t) => {
  t.is(process.env['JAXON_CPU_BLOCKED_QR'], CPU_TEST_BLOCKING);
  t.deepEqual(cpuQrBlocking(), { min: 16, nb: 8 });
  for (const c of fixture.cases) t.true(Math.min(...c.shape.slice(-2)) >= 16, `${c.shape}`);
  const plan = (m: number, n: number, target: 'cpu' | 'cuda', dtype: DType = 'float32') => {
    const x = { shape: [m, n], dtype, weakType: false };
    const kernel = lowerPrimitive('qr', [x], [], { fullMatrices: false }, target).launches[0]!.kernel;
    return kernel.kind === 'orthogonal' ? kernel.cpuBlocked : undefined;
  };
  t.deepEqual(plan(16, 40, 'cpu'), { min: 16, nb: 8 });
  t.deepEqual(plan(40, 16, 'cpu', 'float64'), { min: 16, nb: 8 });
  t.is(plan(15, 40, 'cpu'), undefined, 'min(m, n) = 15: the unblocked loop');
  t.is(plan(40, 40, 'cuda'), undefined, 'not on CUDA');
  // the default, and a malformed override that names the variable
  const saved = process.env['JAXON_CPU_BLOCKED_QR'];
  try {
    delete process.env['JAXON_CPU_BLOCKED_QR'];
    t.deepEqual(cpuQrBlocking(), { min: QR_BLOCKED_MIN, nb: QR_NB });
    t.is(plan(QR_BLOCKED_MIN - 1, 500, 'cpu'), undefined);
    t.deepEqual(plan(QR_BLOCKED_MIN, 500, 'cpu'), { min: QR_BLOCKED_MIN, nb: QR_NB });
    process.env['JAXON_CPU_BLOCKED_QR'] = '16:1';
    t.throws(() => cpuQrBlocking(), { message: /JAXON_CPU_BLOCKED_QR: expected MIN or MIN:NB .* got "16:1"/ });
  } finally {
    process.env['JAXON_CPU_BLOCKED_QR'] = saved;
  }
  if (onCuda) {
    // the stages' sequence: per panel geqr2 + larft and the trailing update while columns are left, then R and Q
    t.is(process.env['JAXON_CUDA_BLOCKED_LINALG'], CUDA_TEST_BLOCKING);
    const stages = (m: number, n: number, batch: number[] = []) => lowerPrimitive('qr', [{ shape: [...batch, m, n], dtype: 'float32', weakType: false }], [], { fullMatrices: true }, 'cuda')
      .launches.map((l) => (l.kernel.kind === 'orthogonal' ? l.kernel.cudaStage?.stage ?? 'one block per matrix' : l.kernel.kind));
    const repeat = (times: number, ...xs: string[]) => globalThis.Array.from({ length: times }, () => xs).flat();
    t.deepEqual(stages(20, 29), ['elementwise', 'elementwise', ...repeat(3, 'panel', 'project_r', 'apply_r'), 'init', ...repeat(3, 'project_q', 'apply_q')], 'wide: every panel updates');
    t.deepEqual(stages(29, 20), ['elementwise', 'elementwise', ...repeat(2, 'panel', 'project_r', 'apply_r'), 'panel', 'init', ...repeat(3, 'project_q', 'apply_q')], 'tall: the last panel has no columns right of it');
    t.deepEqual(stages(15, 40), ['one block per matrix']);
    t.deepEqual(stages(20, 20, [65]), ['one block per matrix'], 'a batch of 65: a block per matrix');
    return;
  }
  // the kernel's C carries the blocked path only when lowered for large matrices
  const source = (n: number) => jax.jit((a: Array) => lax.linalg.qr(a)).lower(jnp.zeros([n, n])).compile().kernels().find((k) => k.name.startsWith('linalg_qr'))!;
  t.true(source(16).source.includes('_blocked(b, buffers, params'), 'n = 16: blocked');
  t.false(source(15).source.includes('_blocked('), 'n = 15: unblocked');
});

for (const dtype of ['float32', 'float64'] as const) {
  test.serial(`qr ${dtype}: NumPy's R diagonal (LAPACK's signs), R's last row, Q's first and last columns; Q R = A, Q^T Q = I`, (t) => {
    inX64(dtype, () => {
      const cases = fixture.cases.filter((c) => c.dtype === dtype);
      const { inputs, outputs } = qrs(cases, dtype);
      cases.forEach((c, i) => {
        const [q, r] = outputs[i]!;
        const name = `qr ${dtype} ${JSON.stringify(c.shape)} ${c.mode}`;
        const [m, n] = c.shape.slice(-2) as [number, number];
        const k = Math.min(m, n);
        const qc = c.mode === 'complete' ? m : k;
        const batch = inputs[i]!.length / (m * n);
        t.is(q!.length, batch * m * qc, `${name}: q's size`);
        t.is(r!.length, batch * qc * n, `${name}: r's size`);
        const each = <T>(f: (b: number) => T[]) => globalThis.Array.from({ length: batch }, (_, b) => f(b)).flat();
        assertNear(t, each((b) => globalThis.Array.from({ length: k }, (_, j) => r![b * qc * n + j * n + j]!)), c.diagonal, dtype, `${name}: R's diagonal`);
        assertNear(t, each((b) => matrixOf(r!, b, qc, n).slice((qc - 1) * n)), c.lastRow, dtype, `${name}: R's last row`);
        assertNear(t, each((b) => globalThis.Array.from({ length: m }, (_, a) => q![b * m * qc + a * qc]!)), c.firstColumn, dtype, `${name}: Q's first column`);
        assertNear(t, each((b) => globalThis.Array.from({ length: m }, (_, a) => q![b * m * qc + a * qc + qc - 1]!)), c.lastColumn, dtype, `${name}: Q's last column`);
        assertFactors(t, q!, r!, inputs[i]!, batch, m, n, qc, dtype, name);
      });
    });
  });
}

test.serial('the blocked QR against the unblocked kernel on the same matrices', (t) => {
  const saved = process.env[blockingVariable];
  const run = (blocking: string, cases: Case[], dtype: DType) => {
    process.env[blockingVariable] = blocking;
    try {
      return inX64(dtype, () => qrs(cases, dtype).outputs);
    } finally {
      process.env[blockingVariable] = saved;
    }
  };
  // float32 (the packed GEMM's path; float64's loops are checked against NumPy above), complete: every Q column updated
  const cases = fixture.cases.filter((c) => c.dtype === 'float32' && c.shape.length === 2 && c.mode === 'complete');
  const blocked = run(onCuda ? CUDA_TEST_BLOCKING : CPU_TEST_BLOCKING, cases, 'float32');
  const unblocked = run('100000', cases, 'float32');
  cases.forEach((c, i) => {
    const scale = Math.max(...unblocked[i]![1]!.map(Math.abs));
    for (const [o, what] of [[0, 'Q'], [1, 'R']] as const) {
      const d = maxDifference(blocked[i]![o]!, unblocked[i]![o]!);
      t.true(d <= tolerance('float32') * (o === 1 ? scale : 1), `${c.shape} ${what}: blocked vs unblocked differ by ${d}`);
      t.true(d > 0, `${c.shape} ${what}: the blocked path ran (its GEMMs' sums round differently)`);
    }
  });
  // a zero matrix (every tau 0, H = I, T = 0: the updates change nothing): R = 0 and Q = I exactly, on the kernels above
  const [zq, zr] = inX64('float32', () => jax.jit((a: Array) => jnp.linalg.qr(a, { mode: 'complete' }))(jnp.zeros([37, 29])).map(values));
  t.true(zr!.every((v) => v === 0) && zq!.every((v, e) => v === (e % 37 === Math.floor(e / 37) ? 1 : 0)), 'a zero matrix: R = 0, Q = I');
  if (onCuda) return;
  // one matrix large enough that its block updates split their columns over the OpenMP threads (more than 64 x
  // JX_PARALLEL_THRESHOLD multiply-adds: 1000 x 8 x 292 at the first panel); the reduced kernel the fixtures compiled
  const big: Case = { dtype: 'float32', shape: [1000, 300], seed: 17, mode: 'reduced', diagonal: [], lastRow: [], firstColumn: [], lastColumn: [] };
  const [split] = run(CPU_TEST_BLOCKING, [big], 'float32');
  assertFactors(t, split![0]!, split![1]!, generated(big.shape, big.seed), 1, 1000, 300, 300, 'float32', 'qr float32 [1000, 300], columns split over the threads');
});
