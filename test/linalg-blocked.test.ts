// The blocked LU, Cholesky and triangular solve of both targets against JAX 0.10.2 (test/fixtures/gen_linalg_blocked.py:
// LAPACK's pivots, exactly, and U's diagonal; Cholesky's diagonal and last row), on sizes that are not multiples of the
// block, rectangular, batched and single: the CPU's (render/linalg-blocked.ts, from BLOCKED_MIN; a matrix per thread or
// the updates over every thread) and, on the (emulated) GPU, the CUDA blocked stages (render/linalg-cuda-blocked.ts,
// run here from JAXON_CUDA_BLOCKED_LINALG's lower threshold with panels of 16: many panels, cheap to emulate). Also a
// zero column (an exact zero pivot: JAX's pivots and the solve's infs and NaNs), matrices that are not positive
// definite (NaN as JAX gives them, whether the failure is in the first block or a later one, alone or beside a good
// matrix in a batch), and the blocked triangular solve (every side, triangle and transpose, unit diagonal) against the
// unblocked or row-oriented one (fewer right-hand sides than BLOCKED_MIN_COLUMNS), also through a zero diagonal.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { BLOCKED_MIN, BLOCKED_MIN_COLUMNS, NB } from '../lib/compiler/render/linalg-blocked.js';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import { CUDA_BLOCKED_MAX_BATCH, CUDA_BLOCKED_MIN, cudaBlocking } from '../lib/compiler/render/linalg-cuda-blocked.js';
import { type EncodedNumber, decodeNumber, loadFixture } from './helpers/fixtures.js';
import { withX64 } from './helpers/x64.js';

interface Case {
  fn: 'lu' | 'cholesky'; dtype: DType; shape: number[]; seed: number; zeroColumn?: number;
  pivots?: number[]; diagonal: EncodedNumber[]; lastRow?: EncodedNumber[]; solveFinite?: boolean[];
}
const fixture = loadFixture<{ cases: Case[] }>('linalg_blocked.json');
const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';
/** The GPU's blocked path from 100 (the fixtures' sizes, 129 to 200, take it) with panels of 16 (8 to 13 panels). */
const CUDA_TEST_BLOCKING = '100:16';
if (onCuda) process.env['JAXON_CUDA_BLOCKED_LINALG'] ??= CUDA_TEST_BLOCKING;

/** gen_linalg_blocked.py's integer generator (MINSTD): entries (x % 2001 - 1000) / 64, exact in float32. */
function generated(shape: number[], seed: number): number[] {
  let x = seed;
  return globalThis.Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => {
    x = (x * 48271) % 2147483647;
    return ((x % 2001) - 1000) / 64;
  });
}

/** m m^T / n + I in float64, as the generator builds it, before the cast. */
function spd(n: number, seed: number): number[] {
  const m = generated([n, n], seed);
  const out = new globalThis.Array<number>(n * n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += m[i * n + k]! * m[j * n + k]!;
      out[i * n + j] = s / n + (i === j ? 1 : 0);
    }
  }
  return out;
}

const tolerance = (d: DType) => (d === 'float64' ? 1e-10 : 2e-5);
const values = (x: Array) => globalThis.Array.from(x.dataSync(), Number);
const maxAbs = (x: readonly number[]) => x.reduce((a, v) => Math.max(a, Math.abs(v)), 0);

/** A row-major rows x cols matrix times a cols x n one, in float64 (the checks run in JS: no kernels to compile). */
function matmul(x: readonly number[], y: readonly number[], rows: number, cols: number, n: number): number[] {
  const out = new globalThis.Array<number>(rows * n).fill(0);
  for (let i = 0; i < rows; i++) {
    for (let k = 0; k < cols; k++) {
      const a = x[i * cols + k]!;
      if (a !== 0) for (let j = 0; j < n; j++) out[i * n + j] += a * y[k * n + j]!;
    }
  }
  return out;
}

/** A float64 value as the dtype stores it. */
const rounded = (dtype: DType) => (dtype === 'float32' ? Math.fround : (v: number) => v);
const transpose = (x: readonly number[], rows: number, cols: number) => globalThis.Array.from({ length: rows * cols }, (_, e) => x[(e % rows) * cols + Math.floor(e / rows)]!);
const maxDifference = (x: readonly number[], y: readonly number[]) => x.reduce((a, v, i) => Math.max(a, Math.abs(v - y[i]!)), 0);

function assertClose(t: ExecutionContext, got: readonly number[], want: EncodedNumber[], dtype: DType, message: string): void {
  const g = got;
  const w = want.map(decodeNumber);
  const scale = Math.max(1, ...w.filter(Number.isFinite).map(Math.abs));
  const bad = g.findIndex((v, i) => !(Math.abs(v - w[i]!) <= tolerance(dtype) * scale));
  t.true(g.length === w.length && bad < 0, `${message}: at ${bad} got ${g[bad]}, want ${w[bad]}`);
}

/** JAX's failed Cholesky (as the fixtures of linalg-lu.test.ts): NaN on and below the diagonal, zeros above. */
const failedAsJax = (got: number[], n: number) => got.every((v, e) => (e % n <= Math.floor(e / n) ? Number.isNaN(v) : v === 0));

const inX64 = <T>(dtype: DType, fn: () => T): T => withX64(dtype === 'float64', fn);

/**
 * The emulated GPU compiles a kernel per stage per shape (about 0.1 CPU-s each, 300 in all): it runs every float32
 * case, and of float64 only square ones (LU: 200 and the zero column; Cholesky: 129), the stages' code being the same.
 */
const cudaSubset = (c: Case) => !onCuda || c.dtype === 'float32' || (c.shape.length === 2 && c.shape[0] === c.shape[1] && (c.fn === 'lu' || c.shape[0] === 129));

const threeKernels = (a: Array, b: Array) => [lax.linalg.lu(a)[0], lax.linalg.cholesky(a), lax.linalg.triangularSolve(a, b, { leftSide: true, lower: true })];

test('the fixtures take the blocked path (sizes from BLOCKED_MIN, not multiples of the block)', (t) => {
  t.true(NB < BLOCKED_MIN && BLOCKED_MIN <= 129, `NB ${NB}, BLOCKED_MIN ${BLOCKED_MIN}: the fixtures' sizes (129 to 200) must be blocked`);
  for (const c of fixture.cases) t.true(Math.min(...c.shape.slice(-2)) >= BLOCKED_MIN, `${c.fn} ${c.shape}`);
  if (onCuda) {
    // the GPU's blocked stages at the test's threshold (planned only: compiling them here would cost CI time)
    t.is(process.env['JAXON_CUDA_BLOCKED_LINALG'], CUDA_TEST_BLOCKING);
    const { min, nb } = cudaBlocking();
    t.true(min <= 129 && nb === 16, `JAXON_CUDA_BLOCKED_LINALG ${CUDA_TEST_BLOCKING}: the fixtures must be blocked`);
    const stages = (n: number, batch: number[] = []) => {
      const x = { shape: [...batch, n, n], dtype: 'float32' as const, weakType: false };
      const b = { ...x, shape: [...batch, n, 20] };
      const plans = [
        lowerPrimitive('lu', [x], [], {}, 'cuda'), lowerPrimitive('cholesky', [x], [], {}, 'cuda'),
        lowerPrimitive('triangular_solve', [x, b], [], { leftSide: true, lower: true, transposeA: false, conjugateA: false, unitDiagonal: false }, 'cuda'),
      ];
      return plans.map((p) => p.launches.map((l) => (l.kernel.kind === 'linalg' ? `${l.kernel.blocked?.stage ?? 'one block per matrix'}${l.kernel.blocked ? l.kernel.blocked.nb : ''}` : l.kernel.kind)));
    };
    const panels = Math.ceil(min / nb);
    const copyAndZeros = ['elementwise', 'elementwise'];
    const repeat = (times: number, ...xs: string[]) => globalThis.Array.from({ length: times }, () => xs).flat();
    t.deepEqual(stages(min), [
      [...copyAndZeros, ...repeat(panels - 1, 'panel16', 'rows16', 'update16'), 'panel16', 'rows16', 'finish16'],
      [...copyAndZeros, ...repeat(panels - 1, 'factor16', 'panel16', 'update16'), 'factor16', 'finish16'],
      [...copyAndZeros, ...repeat(panels - 1, 'diagonal16', 'update16'), 'diagonal16'],
    ], `n = ${min}: the copy, the counters' zeros, then the stages panel by panel`);
    const single = [['one block per matrix'], ['one block per matrix'], ['one block per matrix']];
    t.deepEqual(stages(min - 1), single, `n = ${min - 1}: a block per matrix`);
    t.deepEqual(stages(min, [CUDA_BLOCKED_MAX_BATCH + 1]), single, `a batch of ${CUDA_BLOCKED_MAX_BATCH + 1}: a block per matrix`);
    return;
  }
  // the kernels' C has the blocked path from BLOCKED_MIN up (and not below: its compile costs CI time)
  const sources = (n: number) => jax.jit(threeKernels)
    .lower(jnp.zeros([n, n]), jnp.zeros([n, 2])).compile().kernels().filter((k) => k.name.startsWith('linalg_'));
  for (const [n, large] of [[BLOCKED_MIN, true], [BLOCKED_MIN - 1, false]] as const) {
    const kernels = sources(n);
    t.is(kernels.length, 3, `n = ${n}: three linalg kernels`);
    for (const k of kernels) t.is(k.source.includes(`${k.name}_blocked(`), large, `n = ${n}: ${k.name} ${large ? 'has' : 'lacks'} the blocked path`);
  }
});

test('cross-lowering for CUDA plans the blocked stages from CUDA_BLOCKED_MIN, panel by panel; the CPU keeps one launch', (t) => {
  if (onCuda) return t.pass();
  const lowered = (n: number, platform: 'cpu' | 'cuda') => jax.jit(threeKernels).lower(jnp.zeros([n, n]), jnp.zeros([n, 20]), { platform }).compile();
  const linalg = (n: number, platform: 'cpu' | 'cuda') => lowered(n, platform).kernels().map((k) => k.name).filter((name) => name.startsWith('linalg_'));
  const big = linalg(CUDA_BLOCKED_MIN, 'cuda');
  t.true(big.length >= 10 && big.every((name) => name.includes('_blocked32_')), `n = ${CUDA_BLOCKED_MIN}: ${big.join(', ')}`);
  t.false(linalg(CUDA_BLOCKED_MIN - 1, 'cuda').some((name) => name.includes('_blocked')));
  t.is(linalg(CUDA_BLOCKED_MIN, 'cpu').length, 3);
  // the same sequence from the override, at the panel width it names
  const saved = process.env['JAXON_CUDA_BLOCKED_LINALG'];
  process.env['JAXON_CUDA_BLOCKED_LINALG'] = '40:8';
  try {
    t.true(linalg(40, 'cuda').every((name) => name.includes('_blocked8_')));
    process.env['JAXON_CUDA_BLOCKED_LINALG'] = '40:64';
    t.throws(() => linalg(40, 'cuda'), { message: /JAXON_CUDA_BLOCKED_LINALG: expected MIN or MIN:NB .* got "40:64"/ });
  } finally {
    if (saved === undefined) delete process.env['JAXON_CUDA_BLOCKED_LINALG'];
    else process.env['JAXON_CUDA_BLOCKED_LINALG'] = saved;
  }
});

// each test's work is one jitted program of the factorizations alone (one C compile; on the GPU no kernels but theirs),
// checked in float64 JS
for (const dtype of ['float32', 'float64'] as const) {
  test.serial(`lu ${dtype}: LAPACK's pivots exactly, U's diagonal, P A = L U; a zero column's pivot and solve`, (t) => {
    inX64(dtype, () => {
      const cases = fixture.cases.filter((x) => x.fn === 'lu' && x.dtype === dtype && cudaSubset(x));
      const matrices = cases.map((c) => {
        const values = generated(c.shape, c.seed);
        const [m, n] = c.shape.slice(-2) as [number, number];
        if (c.zeroColumn !== undefined) for (let i = 0; i < m; i++) values[i * n + c.zeroColumn] = 0;
        return values;
      });
      const inputs = cases.map((c, q) => jnp.array(matrices[q]!, { dtype }).reshape(c.shape));
      const results = jax.jit((...as: Array[]) => as.map((a, q) => {
        const c = cases[q]!;
        const m = c.shape[c.shape.length - 2]!;
        return [...lax.linalg.lu(a), ...(c.solveFinite ? [jnp.linalg.solve(a, jnp.ones([m, 1], { dtype }))] : [])];
      }))(...inputs) as Array[][];
      cases.forEach((c, q) => {
        const [lu, pivots, permutation, solve] = results[q]!.map(values);
        const name = `lu ${dtype} ${JSON.stringify(c.shape)}${c.zeroColumn !== undefined ? ' zero column' : ''}`;
        const [m, n] = c.shape.slice(-2) as [number, number];
        const k = Math.min(m, n);
        const batch = lu!.length / (m * n);
        t.deepEqual(pivots, c.pivots, `${name}: pivots`);
        const diagonal = globalThis.Array.from({ length: batch * k }, (_, e) => lu![Math.floor(e / k) * m * n + (e % k) * (n + 1)]!);
        assertClose(t, diagonal, c.diagonal, dtype, `${name}: U's diagonal`);
        for (let b = 0; b < batch; b++) {
          const f = lu!.slice(b * m * n, (b + 1) * m * n);
          const l = globalThis.Array.from({ length: m * k }, (_, e) => {
            const [i, j] = [Math.floor(e / k), e % k];
            return i > j ? f[i * n + j]! : i === j ? 1 : 0;
          });
          const u = globalThis.Array.from({ length: k * n }, (_, e) => (e % n >= Math.floor(e / n) ? f[e]! : 0));
          const perm = permutation!.slice(b * m, (b + 1) * m);
          const a = matrices[q]!.slice(b * m * n, (b + 1) * m * n);
          const pa = globalThis.Array.from({ length: m * n }, (_, e) => a[perm[Math.floor(e / n)]! * n + (e % n)]!);
          const r = maxDifference(matmul(l, u, m, k, n), pa);
          t.true(r <= (dtype === 'float64' ? 1e-11 : 1e-5) * k * 16, `${name}, matrix ${b}: |P A - L U| = ${r}`);
        }
        if (c.solveFinite) t.deepEqual(solve!.map((v) => Number.isFinite(v)), c.solveFinite, `${name}: solve's finite entries`);
      });
    });
  });

  test.serial(`cholesky ${dtype}: JAX's diagonal and last row, L L^T = A; not positive definite (first or later block): NaN as JAX`, (t) => {
    inX64(dtype, () => {
      const cases = fixture.cases.filter((x) => x.fn === 'cholesky' && x.dtype === dtype && cudaSubset(x));
      // per case: the matrix; a negative diagonal in the first block, and one where only the third block's pivot goes
      // negative; a batch of two, the second not positive definite (a matrix per thread)
      const failAt = (n: number) => [3, Math.min(2 * NB + 5, n - 1)];
      const goods = cases.map((c) => spd(c.shape[0]!, c.seed));
      const inputs = cases.map((c, q) => {
        const n = c.shape[0]!;
        const good = goods[q]!;
        const bad = (at: number, value: number) => jnp.array(good.map((v, e) => (e === at * n + at ? value : v)), { dtype }).reshape([n, n]);
        const a = jnp.array(good, { dtype }).reshape([n, n]);
        return [a, ...failAt(n).map((at) => bad(at, -1)), jnp.stack([a, bad(n - 1, -1e6)])];
      });
      const results = jax.jit((...xs: Array[][]) => xs.map((x) => x.map((a) => lax.linalg.cholesky(a))))(...inputs) as Array[][];
      cases.forEach((c, q) => {
        const n = c.shape[0]!;
        const [L, ...failed] = results[q]!.map(values);
        const both = failed.pop()!;
        assertClose(t, globalThis.Array.from({ length: n }, (_, i) => L![i * (n + 1)]!), c.diagonal, dtype, `cholesky ${dtype} ${n}: diagonal`);
        assertClose(t, L!.slice((n - 1) * n), c.lastRow!, dtype, `cholesky ${dtype} ${n}: last row`);
        t.true(L!.every((v, e) => e % n <= Math.floor(e / n) || v === 0), `cholesky ${dtype} ${n}: upper triangle`);
        const r = maxDifference(matmul(L!, transpose(L!, n, n), n, n, n), goods[q]!.map(rounded(dtype)));
        t.true(r <= (dtype === 'float64' ? 1e-11 : 1e-5) * n * 16, `cholesky ${dtype} ${n}: |L L^T - A| = ${r}`);
        failed.forEach((f, i) => t.true(failedAsJax(f, n), `cholesky ${dtype} ${n}, negative diagonal at ${failAt(n)[i]}: NaN below the diagonal, 0 above`));
        t.deepEqual(both.slice(0, n * n), L, `cholesky ${dtype} ${n} batched: the first matrix as alone`);
        t.true(failedAsJax(both.slice(n * n), n), `cholesky ${dtype} ${n} batched: the second failed`);
      });
    });
  });

  test.serial(`triangular solve ${dtype}: blocked (many right-hand sides) equals unblocked (few), every side/triangle/transpose`, (t) => {
    inX64(dtype, () => {
      const r = 150;
      const cols = BLOCKED_MIN_COLUMNS + 5;
      const few = BLOCKED_MIN_COLUMNS - 1;
      const values64 = generated([r, r], 11).map((v, e) => (Math.floor(e / r) === e % r ? v / 4 + 40 * Math.sign(v || 1) : v / 256));
      // a zero on the diagonal: infs and NaNs, in the same entries on both paths
      const singularValues = values64.map((v, e) => (e === 70 * r + 70 ? 0 : v));
      // float32: every side, triangle and transpose (each a blocked GEMM's layout), a unit diagonal, transposed or not;
      // float64 (its own GEMM loops): three of them
      const all = [true, false].flatMap((leftSide) => [true, false].flatMap((lower) => [true, false].map((transposeA) => ({ leftSide, lower, transposeA, unitDiagonal: false }))));
      const configs = dtype === 'float32'
        ? [...all, { leftSide: true, lower: true, transposeA: true, unitDiagonal: true }, { leftSide: true, lower: false, transposeA: false, unitDiagonal: true }]
        : all.filter((o) => o.lower && (o.leftSide || o.transposeA));
      // right-hand sides r x cols (left side) or cols x r (right side), and their first `few` columns (rows)
      const b = generated([r, cols], 12);
      const bt = transpose(b, r, cols);
      const bFew = globalThis.Array.from({ length: r * few }, (_, e) => b[Math.floor(e / few) * cols + (e % few)]!);
      const btFew = bt.slice(0, few * r);
      const array = (x: number[], shape: number[]) => jnp.array(x, { dtype }).reshape(shape);
      const results = jax.jit((a: Array, singular: Array, left: Array, right: Array, leftFew: Array, rightFew: Array) => configs.map((options) => {
        const [rhs, part] = options.leftSide ? [left, leftFew] : [right, rightFew];
        const solve = (m: Array, y: Array) => lax.linalg.triangularSolve(m, y, options);
        return [solve(a, rhs), solve(a, part), ...(options.unitDiagonal ? [] : [solve(singular, rhs), solve(singular, part)])];
      }))(array(values64, [r, r]), array(singularValues, [r, r]), array(b, [r, cols]), array(bt, [cols, r]), array(bFew, [r, few]), array(btFew, [few, r])) as Array[][];
      const a = values64.map(rounded(dtype));
      configs.forEach((options, q) => {
        const { leftSide, lower, transposeA, unitDiagonal } = options;
        const name = `triangular solve ${dtype} ${JSON.stringify(options)}`;
        const [x, x1, sx, s1] = results[q]!.map(values);
        // the first `few` right-hand sides of the blocked solve
        const head = (y: number[]) => (leftSide ? globalThis.Array.from({ length: r * few }, (_, e) => y[Math.floor(e / few) * cols + (e % few)]!) : y.slice(0, few * r));
        const diff = maxDifference(head(x!), x1!) / Math.max(1, maxAbs(x1!));
        t.true(diff <= tolerance(dtype) * 10, `${name}: blocked vs unblocked ${diff}`);
        const tri = a.map((v, e) => {
          const [i, j] = [Math.floor(e / r), e % r];
          return i === j ? (unitDiagonal ? 1 : v) : (lower ? i > j : i < j) ? v : 0;
        });
        const op = transposeA ? transpose(tri, r, r) : tri;
        const rhs = leftSide ? b : bt;
        const product = leftSide ? matmul(op, x!, r, r, cols) : matmul(x!, op, cols, r, r);
        const rel = maxDifference(product, rhs) / Math.max(1, maxAbs(rhs));
        t.true(rel <= tolerance(dtype) * 10, `${name}: residual ${rel}`);
        if (sx) {
          const finite = (y: number[]) => y.map((v) => Number.isFinite(v));
          t.deepEqual(finite(head(sx)), finite(s1!), `${name}, zero diagonal: the same entries non-finite`);
          t.true(finite(s1!).includes(false), `${name}, zero diagonal: some entries non-finite`);
        }
      });
    });
  });
}
