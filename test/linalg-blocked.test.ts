// The CPU's blocked LU, Cholesky and triangular solve (render/linalg-blocked.ts: sizes from BLOCKED_MIN up) against
// JAX 0.10.2 (test/fixtures/gen_linalg_blocked.py: LAPACK's pivots, exactly, and U's diagonal; Cholesky's diagonal
// and last row), on sizes that are not multiples of the block, rectangular, batched (a matrix per thread) and single
// (the updates over every thread); a zero column (an exact zero pivot: JAX's pivots and the solve's infs and NaNs),
// matrices that are not positive definite (NaN as JAX gives them, whether the failure is in the first block or a later one), and
// the blocked triangular solve against the unblocked or row-oriented one (fewer right-hand sides than
// BLOCKED_MIN_COLUMNS), also
// through a zero diagonal. CPU only: on the GPU these sizes take the block-per-matrix kernels, tested by
// linalg-lu.test.ts.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { BLOCKED_MIN, BLOCKED_MIN_COLUMNS, NB } from '../lib/compiler/render/linalg-blocked.js';
import { type EncodedNumber, decodeNumber, loadFixture } from './helpers/fixtures.js';
import { withX64 } from './helpers/x64.js';

interface Case {
  fn: 'lu' | 'cholesky'; dtype: DType; shape: number[]; seed: number; zeroColumn?: number;
  pivots?: number[]; diagonal: EncodedNumber[]; lastRow?: EncodedNumber[]; solveFinite?: boolean[];
}
const fixture = loadFixture<{ cases: Case[] }>('linalg_blocked.json');
const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';

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

const mm = (x: Array, y: Array) => jnp.matmul(x, y, { precision: 'highest' });
const maxAbs = (x: Array) => jnp.max(jnp.abs(x)).item() as number;
const tolerance = (d: DType) => (d === 'float64' ? 1e-10 : 2e-5);

function assertClose(t: ExecutionContext, got: Array, want: EncodedNumber[], dtype: DType, message: string): void {
  const g = globalThis.Array.from(got.dataSync(), Number);
  const w = want.map(decodeNumber);
  const scale = Math.max(1, ...w.filter(Number.isFinite).map(Math.abs));
  const bad = g.findIndex((v, i) => !(Math.abs(v - w[i]!) <= tolerance(dtype) * scale));
  t.true(g.length === w.length && bad < 0, `${message}: at ${bad} got ${g[bad]}, want ${w[bad]}`);
}

/** JAX's failed Cholesky (as the fixtures of linalg-lu.test.ts): NaN on and below the diagonal, zeros above. */
const failedAsJax = (got: number[], n: number) => got.every((v, e) => (e % n <= Math.floor(e / n) ? Number.isNaN(v) : v === 0));

const inX64 = <T>(dtype: DType, fn: () => T): T => withX64(dtype === 'float64', fn);

test('the fixtures take the blocked path (sizes from BLOCKED_MIN, not multiples of the block)', (t) => {
  t.true(NB < BLOCKED_MIN && BLOCKED_MIN <= 129, `NB ${NB}, BLOCKED_MIN ${BLOCKED_MIN}: the fixtures' sizes (129 to 200) must be blocked`);
  for (const c of fixture.cases) t.true(Math.min(...c.shape.slice(-2)) >= BLOCKED_MIN, `${c.fn} ${c.shape}`);
  if (onCuda) return;
  // the kernels' C has the blocked path from BLOCKED_MIN up (and not below: its compile costs CI time)
  const sources = (n: number) => jax.jit((a: Array, b: Array) => [lax.linalg.lu(a)[0], lax.linalg.cholesky(a), lax.linalg.triangularSolve(a, b, { leftSide: true, lower: true })])
    .lower(jnp.zeros([n, n]), jnp.zeros([n, 2])).compile().kernels().filter((k) => k.name.startsWith('linalg_'));
  for (const [n, large] of [[BLOCKED_MIN, true], [BLOCKED_MIN - 1, false]] as const) {
    const kernels = sources(n);
    t.is(kernels.length, 3, `n = ${n}: three linalg kernels`);
    for (const k of kernels) t.is(k.source.includes(`${k.name}_blocked(`), large, `n = ${n}: ${k.name} ${large ? 'has' : 'lacks'} the blocked path`);
  }
});

// each test's work is one jitted program: one C compile, where eager calls would compile a kernel per operation
for (const dtype of ['float32', 'float64'] as const) {
  test.serial(`lu ${dtype}: LAPACK's pivots exactly, U's diagonal, P A = L U; a zero column's pivot and solve`, (t) => {
    if (onCuda) return t.pass();
    inX64(dtype, () => {
      const cases = fixture.cases.filter((x) => x.fn === 'lu' && x.dtype === dtype);
      const inputs = cases.map((c) => {
        const values = generated(c.shape, c.seed);
        const [m, n] = c.shape.slice(-2) as [number, number];
        if (c.zeroColumn !== undefined) for (let i = 0; i < m; i++) values[i * n + c.zeroColumn] = 0;
        return jnp.array(values, { dtype }).reshape(c.shape);
      });
      const results = jax.jit((...as: Array[]) => as.map((a, q) => {
        const c = cases[q]!;
        const [m, n] = c.shape.slice(-2) as [number, number];
        const k = Math.min(m, n);
        const batch = c.shape.slice(0, -2).map(() => null);
        const [lu, pivots, perm] = lax.linalg.lu(a);
        const l = jnp.add(jnp.tril(lu, -1).index(...batch, null, [0, k]), jnp.eye(m, k, { dtype }));
        const u = jnp.triu(lu).index(...batch, [0, k], null);
        const pa = jnp.takeAlongAxis(a, jnp.broadcastTo(jnp.expandDims(perm, -1), c.shape), -2);
        const residual = jnp.max(jnp.abs(jnp.subtract(mm(l, u), pa)));
        const solve = c.solveFinite ? [jnp.linalg.solve(a, jnp.ones([m, 1], { dtype }))] : [];
        return [pivots, jnp.diagonal(lu, { axis1: -2, axis2: -1 }), residual, ...solve];
      }))(...inputs) as Array[][];
      cases.forEach((c, q) => {
        const [pivots, diagonal, residual, solve] = results[q]!;
        const name = `lu ${dtype} ${JSON.stringify(c.shape)}${c.zeroColumn !== undefined ? ' zero column' : ''}`;
        const k = Math.min(...c.shape.slice(-2));
        t.deepEqual(globalThis.Array.from(pivots!.dataSync(), Number), c.pivots, `${name}: pivots`);
        assertClose(t, diagonal!, c.diagonal, dtype, `${name}: U's diagonal`);
        const r = residual!.item() as number;
        t.true(r <= (dtype === 'float64' ? 1e-11 : 1e-5) * k * 16, `${name}: |P A - L U| = ${r}`);
        if (c.solveFinite) t.deepEqual(globalThis.Array.from(solve!.dataSync(), (v) => Number.isFinite(v)), c.solveFinite, `${name}: solve's finite entries`);
      });
    });
  });

  test.serial(`cholesky ${dtype}: JAX's diagonal and last row, L L^T = A; not positive definite (first or later block): NaN as JAX`, (t) => {
    if (onCuda) return t.pass();
    inX64(dtype, () => {
      const cases = fixture.cases.filter((x) => x.fn === 'cholesky' && x.dtype === dtype);
      // per case: the matrix; a negative diagonal in the first block, and one where only the third block's pivot goes
      // negative; a batch of two, the second not positive definite (a matrix per thread)
      const failAt = (n: number) => [3, Math.min(2 * NB + 5, n - 1)];
      const inputs = cases.map((c) => {
        const n = c.shape[0]!;
        const good = spd(n, c.seed);
        const bad = (at: number, value: number) => jnp.array(good.map((v, e) => (e === at * n + at ? value : v)), { dtype }).reshape([n, n]);
        const a = jnp.array(good, { dtype }).reshape([n, n]);
        return [a, ...failAt(n).map((at) => bad(at, -1)), jnp.stack([a, bad(n - 1, -1e6)])];
      });
      const results = jax.jit((...xs: Array[][]) => xs.map(([a, ...rest]) => {
        const L = lax.linalg.cholesky(a!);
        return [L, jnp.max(jnp.abs(jnp.subtract(mm(L, jnp.transpose(L)), a!))), ...rest.map((x) => lax.linalg.cholesky(x))];
      }))(...inputs) as Array[][];
      cases.forEach((c, q) => {
        const n = c.shape[0]!;
        const [L, residual, ...failed] = results[q]!;
        const both = failed.pop()!;
        assertClose(t, jnp.diagonal(L!), c.diagonal, dtype, `cholesky ${dtype} ${n}: diagonal`);
        assertClose(t, L!.index(-1), c.lastRow!, dtype, `cholesky ${dtype} ${n}: last row`);
        const values = L!.dataSync();
        t.true(values.every((v, e) => e % n <= Math.floor(e / n) || v === 0), `cholesky ${dtype} ${n}: upper triangle`);
        const r = residual!.item() as number;
        t.true(r <= (dtype === 'float64' ? 1e-11 : 1e-5) * n * 16, `cholesky ${dtype} ${n}: |L L^T - A| = ${r}`);
        failed.forEach((f, i) => t.true(failedAsJax(globalThis.Array.from(f.dataSync(), Number), n), `cholesky ${dtype} ${n}, negative diagonal at ${failAt(n)[i]}: NaN below the diagonal, 0 above`));
        const pair = globalThis.Array.from(both.dataSync(), Number);
        t.deepEqual(pair.slice(0, n * n), globalThis.Array.from(values, Number), `cholesky ${dtype} ${n} batched: the first matrix as alone`);
        t.true(failedAsJax(pair.slice(n * n), n), `cholesky ${dtype} ${n} batched: the second failed`);
      });
    });
  });

  test.serial(`triangular solve ${dtype}: blocked (many right-hand sides) equals unblocked (few), every side/triangle/transpose`, (t) => {
    if (onCuda) return t.pass();
    inX64(dtype, () => {
      const r = 150;
      const cols = BLOCKED_MIN_COLUMNS + 5;
      const few = BLOCKED_MIN_COLUMNS - 1;
      const values = generated([r, r], 11).map((v, e) => (Math.floor(e / r) === e % r ? v / 4 + 40 * Math.sign(v || 1) : v / 256));
      // a zero on the diagonal: infs and NaNs, in the same entries on both paths
      const singularValues = values.map((v, e) => (e === 70 * r + 70 ? 0 : v));
      // float32: every side, triangle and transpose (each a blocked GEMM's layout), a unit diagonal, transposed or not;
      // float64 (its own GEMM loops): three of them
      const all = [true, false].flatMap((leftSide) => [true, false].flatMap((lower) => [true, false].map((transposeA) => ({ leftSide, lower, transposeA, unitDiagonal: false }))));
      const configs = dtype === 'float32'
        ? [...all, { leftSide: true, lower: true, transposeA: true, unitDiagonal: true }, { leftSide: true, lower: false, transposeA: false, unitDiagonal: true }]
        : all.filter((o) => o.lower && (o.leftSide || o.transposeA));
      const results = jax.jit((a: Array, b: Array, singular: Array) => configs.map((options) => {
        const { leftSide, lower, transposeA, unitDiagonal } = options;
        const rhs = leftSide ? b : jnp.transpose(b);
        const part = leftSide ? b.index(null, [0, few]) : jnp.transpose(b).index([0, few]);
        const head = (x: Array) => (leftSide ? x.index(null, [0, few]) : x.index([0, few]));
        const x = lax.linalg.triangularSolve(a, rhs, options);
        const x1 = lax.linalg.triangularSolve(a, part, options);
        const tri = lower ? jnp.tril(a) : jnp.triu(a);
        const eye = jnp.eye(r, null, { dtype });
        const op1 = unitDiagonal ? jnp.add(jnp.subtract(tri, jnp.multiply(eye, a)), eye) : tri;
        const op = transposeA ? jnp.transpose(op1) : op1;
        const residual = jnp.max(jnp.abs(jnp.subtract(leftSide ? mm(op, x) : mm(x, op), rhs)));
        const singularOut = unitDiagonal ? [] : [head(lax.linalg.triangularSolve(singular, rhs, options)), lax.linalg.triangularSolve(singular, part, options)];
        return [head(x), x1, residual, jnp.max(jnp.abs(rhs)), ...singularOut];
      }))(jnp.array(values, { dtype }).reshape([r, r]), jnp.array(generated([r, cols], 12), { dtype }).reshape([r, cols]), jnp.array(singularValues, { dtype }).reshape([r, r])) as Array[][];
      configs.forEach((options, q) => {
        const name = `triangular solve ${dtype} ${JSON.stringify(options)}`;
        const [head, x1, residual, scale, sHead, s1] = results[q]!;
        const diff = maxAbs(jnp.subtract(head!, x1!)) / Math.max(1, maxAbs(x1!));
        t.true(diff <= tolerance(dtype) * 10, `${name}: blocked vs unblocked ${diff}`);
        const rel = (residual!.item() as number) / Math.max(1, scale!.item() as number);
        t.true(rel <= tolerance(dtype) * 10, `${name}: residual ${rel}`);
        if (sHead) {
          const finite = (y: Array) => globalThis.Array.from(y.dataSync(), (v) => Number.isFinite(v));
          t.deepEqual(finite(sHead), finite(s1!), `${name}, zero diagonal: the same entries non-finite`);
          t.true(finite(s1!).includes(false), `${name}, zero diagonal: some entries non-finite`);
        }
      });
    });
  });
}
