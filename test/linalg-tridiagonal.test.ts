// The CPU's large-matrix eigh and svd (render/linalg-tridiagonal.ts: Householder tridiagonalization + QL, Golub-Kahan
// bidiagonalization + Golub-Reinsch QR), forced at small sizes with JAXON_CPU_EIG_MIN=1 for the whole file, against
// NumPy's LAPACK (test/fixtures/gen_linalg_tridiagonal.py): 1x1, 2x2, 9x9, 40x40, 40x33, 33x40, batches, the upper
// triangle, the identity, repeated eigenvalues, a rank-deficient matrix and zeros, float32 and float64. Values are
// compared as they are; vectors, where unique up to sign, after flipping each so the entry where NumPy's is largest is
// positive; every decomposition by its invariants too (a v = v diag(w), u diag(s) vh = a, orthonormal columns).
// Also: where lowering chooses this path (EIG_MIN, the C target only), non-finite inputs (NaNs, per matrix, no hang),
// a batch under OpenMP equal to its matrices one by one (each then splits its updates over the threads), and
// check_grads of eigh and svd through this path. The CPU only: CUDA keeps the Jacobi kernels at every size.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import { EIG_MIN, cpuEigMinimum } from '../lib/compiler/render/linalg-tridiagonal.js';
import { checkGrads } from './helpers/check-grads.js';
import { loadFixture } from './helpers/fixtures.js';
import { withX64 } from './helpers/x64.js';

process.env['JAXON_CPU_EIG_MIN'] = '1';
const onCpu = jax.defaultBackend() === 'cpu';
const cpuTest = onCpu ? test.serial : test.serial.skip;

interface Case {
  op: 'eigh' | 'svd'; label: string; shape: number[]; simple: boolean; seed?: number; input?: number[]; at: number[];
  lower?: boolean; w?: number[]; v?: number[]; s?: number[]; u?: number[]; vh?: number[];
}
const fixture = loadFixture<{ cases: Case[] }>('linalg_tridiagonal.json');

/** gen_linalg_tridiagonal.py's integer generator (MINSTD): entries (x % 2001 - 1000) / 64, exact in float32. */
function generated(count: number, seed: number): number[] {
  let x = seed;
  return globalThis.Array.from({ length: count }, () => {
    x = (x * 48271) % 2147483647;
    return ((x % 2001) - 1000) / 64;
  });
}

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
const inputOf = (c: Case): number[] => c.input ?? generated(size(c.shape), c.seed!);
const values = (x: Array): number[] => globalThis.Array.from(x.dataSync(), Number);

/** Matrix b of a row-major batch of r x c matrices. */
const at = (h: number[], r: number, c: number) => (b: number, i: number, j: number) => h[b * r * c + i * c + j]!;

function close(t: ExecutionContext, got: number[], want: number[], atol: number, message: string): void {
  const bad = got.findIndex((g, i) => !(Math.abs(g - want[i]!) <= atol));
  if (got.length !== want.length) t.fail(`${message}: ${got.length} values, expected ${want.length}`);
  else if (bad >= 0) t.fail(`${message}: at ${bad} got ${got[bad]}, expected ${want[bad]} (atol ${atol})`);
  else t.pass();
}

/** Columns of each r x k matrix (of c columns) flipped so the entry in row at[b·k + j] is positive; the first k. */
function flipColumns(h: number[], count: number, r: number, c: number, k: number, rows: number[]): { values: number[]; signs: number[] } {
  const get = at(h, r, c);
  const signs = globalThis.Array.from({ length: count * k }, (_, e) => (get(Math.floor(e / k), rows[e]!, e % k) < 0 ? -1 : 1));
  const out: number[] = [];
  for (let b = 0; b < count; b++) for (let i = 0; i < r; i++) for (let j = 0; j < k; j++) out.push(get(b, i, j) * signs[b * k + j]!);
  return { values: out, signs };
}

/** max |a·b - c| over a batch: a [count, p, q] (row stride sa), b [count, q, r] (row stride sb), c [count, p, r]. */
function productError(count: number, p: number, q: number, r: number, a: (b: number, i: number, j: number) => number, b: (b: number, i: number, j: number) => number, c: (b: number, i: number, j: number) => number): number {
  let worst = 0;
  for (let n = 0; n < count; n++) for (let i = 0; i < p; i++) for (let j = 0; j < r; j++) {
    let s = 0;
    for (let l = 0; l < q; l++) s += a(n, i, l) * b(n, l, j);
    worst = Math.max(worst, Math.abs(s - c(n, i, j)));
  }
  return worst;
}

/** max |QᵀQ - I| for the columns of each r x c matrix. */
function orthonormality(h: number[], count: number, r: number, c: number): number {
  const get = at(h, r, c);
  return productError(count, c, r, c, (b, i, j) => get(b, j, i), get, (_, i, j) => (i === j ? 1 : 0));
}

const tol = (dtype: DType) => (dtype === 'float32' ? 2e-5 : 1e-12);

function checkEigh(t: ExecutionContext, c: Case, dtype: DType): void {
  const n = c.shape.at(-1)!;
  const count = size(c.shape) / (n * n);
  const input = inputOf(c);
  const [v, w] = lax.linalg.eigh(lax.reshape(jnp.array(input, { dtype }), c.shape), { symmetrizeInput: false, lower: c.lower! });
  const label = `${c.label} ${dtype}`;
  t.deepEqual([v.shape, w.shape, v.dtype], [c.shape, c.shape.slice(0, -1), dtype], `${label}: shapes, dtype`);
  const wv = values(w);
  const vv = values(v);
  const scale = Math.max(1, ...c.w!.map(Math.abs));
  close(t, wv, c.w!, tol(dtype) * scale, `${label}: eigenvalues`);
  t.true(wv.every((x, e) => e % n === 0 || x >= wv[e - 1]!), `${label}: eigenvalues ascending`);
  if (c.simple) close(t, flipColumns(vv, count, n, n, n, c.at).values, c.v!, dtype === 'float32' ? 1e-3 : 1e-9, `${label}: eigenvectors up to sign`);
  t.true(orthonormality(vv, count, n, n) <= tol(dtype) * 10 * n, `${label}: vᵀv = I`);
  // the matrix decomposed: the chosen triangle mirrored
  const get = at(input, n, n);
  const sym = (b: number, i: number, j: number) => (c.lower ? (i >= j ? get(b, i, j) : get(b, j, i)) : (i <= j ? get(b, i, j) : get(b, j, i)));
  const V = at(vv, n, n);
  const err = productError(count, n, n, n, sym, V, (b, i, j) => V(b, i, j) * wv[b * n + j]!);
  t.true(err <= tol(dtype) * 10 * scale * Math.sqrt(n), `${label}: |a·v - v·diag(w)| = ${err}`);
}

function checkSvd(t: ExecutionContext, c: Case, dtype: DType, fullMatrices: boolean): void {
  const [m, n] = c.shape.slice(-2) as [number, number];
  const k = Math.min(m, n);
  const count = size(c.shape) / (m * n);
  const input = inputOf(c);
  const x = lax.reshape(jnp.array(input, { dtype }), c.shape);
  const [u, s, vh] = lax.linalg.svd(x, { fullMatrices });
  const label = `${c.label} ${dtype}${fullMatrices ? ' full' : ''}`;
  const [uc, vr] = fullMatrices ? [m, n] : [k, k];
  t.deepEqual([u.shape.slice(-2), vh.shape.slice(-2), s.shape.at(-1), s.dtype], [[m, uc], [vr, n], k, dtype], `${label}: shapes, dtype`);
  const sv = values(s);
  const scale = Math.max(1, ...c.s!);
  close(t, sv, c.s!, tol(dtype) * scale, `${label}: singular values`);
  t.true(sv.every((y, e) => y >= 0 && (e % k === 0 || y <= sv[e - 1]!)), `${label}: singular values descending, non-negative`);
  close(t, values(lax.linalg.svd(x, { computeUv: false })), sv, 0, `${label}: singular values without vectors`);
  const uv = values(u);
  const vv = values(vh);
  if (c.simple) {
    const { values: flipped, signs } = flipColumns(uv, count, m, uc, k, c.at);
    close(t, flipped, c.u!, dtype === 'float32' ? 1e-3 : 1e-9, `${label}: u up to sign`);
    const VH = at(vv, vr, n);
    const rows: number[] = [];
    for (let b = 0; b < count; b++) for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) rows.push(VH(b, i, j) * signs[b * k + i]!);
    close(t, rows, c.vh!, dtype === 'float32' ? 1e-3 : 1e-9, `${label}: vh up to the same signs`);
  }
  t.true(orthonormality(uv, count, m, uc) <= tol(dtype) * 10 * m, `${label}: uᵀu = I`);
  const VH = at(vv, vr, n);
  t.true(orthonormality(vv.length ? (() => { const o: number[] = []; for (let b = 0; b < count; b++) for (let i = 0; i < n; i++) for (let j = 0; j < vr; j++) o.push(VH(b, j, i)); return o; })() : [], count, n, vr) <= tol(dtype) * 10 * n, `${label}: vh vhᵀ = I`);
  const U = at(uv, m, uc);
  const err = productError(count, m, k, n, (b, i, j) => U(b, i, j) * sv[b * k + j]!, VH, at(input, m, n));
  t.true(err <= tol(dtype) * 10 * scale * Math.sqrt(k), `${label}: |u·diag(s)·vh - a| = ${err}`);
}

for (const dtype of ['float32', 'float64'] as DType[]) {
  // float64 skips the upper triangle and full_matrices (a kernel compile each, about a second of CI; float32 has them)
  const f64 = dtype === 'float64';
  cpuTest(`eigh against NumPy (LAPACK), ${dtype}`, (t) => withX64(f64, () => {
    for (const c of fixture.cases) if (c.op === 'eigh' && !(f64 && !c.lower)) checkEigh(t, c, dtype);
  }));
  cpuTest(`svd against NumPy (LAPACK), ${f64 ? 'reduced' : 'full_matrices both ways'}, ${dtype}`, (t) => withX64(f64, () => {
    for (const c of fixture.cases) if (c.op === 'svd') for (const full of f64 ? [false] : [false, true]) checkSvd(t, c, dtype, full);
  }));
}

test.serial('lowering: the C target takes this path from EIG_MIN = min(m, n) (or JAXON_CPU_EIG_MIN), CUDA never', (t) => {
  const large = (op: 'eigh' | 'svd', shape: number[], target: 'cpu' | 'cuda') => {
    const x = { shape, dtype: 'float32' as const, weakType: false };
    const plan = op === 'eigh' ? lowerPrimitive('eigh', [x], [], { lower: true, sortEigenvalues: true }, target) : lowerPrimitive('svd', [x], [], { fullMatrices: true, computeUv: true }, target);
    const kernel = plan.launches[0]!.kernel;
    return kernel.kind === 'orthogonal' && kernel.large === true;
  };
  const previous = process.env['JAXON_CPU_EIG_MIN'];
  try {
    delete process.env['JAXON_CPU_EIG_MIN'];
    t.is(cpuEigMinimum(), EIG_MIN);
    t.true(large('eigh', [EIG_MIN, EIG_MIN], 'cpu') && large('svd', [3, EIG_MIN + 5, EIG_MIN], 'cpu') && large('svd', [EIG_MIN, 300], 'cpu'));
    t.false(large('eigh', [EIG_MIN - 1, EIG_MIN - 1], 'cpu') || large('svd', [EIG_MIN - 1, 300], 'cpu') || large('svd', [300, EIG_MIN - 1], 'cpu'));
    t.false(large('eigh', [512, 512], 'cuda') || large('svd', [512, 512], 'cuda'));
    process.env['JAXON_CPU_EIG_MIN'] = '4';
    t.true(large('eigh', [4, 4], 'cpu') && !large('eigh', [3, 3], 'cpu'));
    process.env['JAXON_CPU_EIG_MIN'] = '0';
    t.throws(() => cpuEigMinimum(), { message: /JAXON_CPU_EIG_MIN: expected an integer >= 1, got "0"/ });
  } finally {
    process.env['JAXON_CPU_EIG_MIN'] = previous;
  }
});

cpuTest('non-finite input: NaNs for that matrix only (as LAPACK and JAX), no hang', (t) => {
  const a = generated(2 * 6 * 6, 21);
  a[7] = NaN;
  a[36 + 35] = Infinity;
  const good = generated(6 * 6, 22);
  const x = lax.reshape(jnp.array([...a, ...good]), [3, 6, 6]);
  const [v, w] = lax.linalg.eigh(x);
  const [u, s, vh] = lax.linalg.svd(x);
  for (const [name, out, per] of [['v', v, 36], ['w', w, 6], ['u', u, 36], ['s', s, 6], ['vh', vh, 36]] as const) {
    const got = values(out);
    t.true(got.slice(0, 2 * per).every(Number.isNaN), `${name}: NaNs for the matrices with a NaN and an infinity`);
    t.true(got.slice(2 * per).every(Number.isFinite), `${name}: the finite matrix's values`);
  }
});

cpuTest('a batch under OpenMP equals its matrices one by one (those split their updates over the threads), eigh 200x200, svd 150x200', (t) => {
  const n = 200;
  const raw = generated(2 * n * n, 31);
  const x = lax.reshape(jnp.array(raw), [2, n, n]);
  const eigh = jax.jit((a: Array) => lax.linalg.eigh(a));
  const y = lax.reshape(jnp.array(generated(2 * n * 150, 32)), [2, 150, n]);
  const svd = jax.jit((a: Array) => lax.linalg.svd(a));
  const batched = [...eigh(x), ...svd(y)].map(values);
  for (const b of [0, 1]) {
    const one = [...eigh(x.index(b)), ...svd(y.index(b))].map(values);
    one.forEach((o, i) => close(t, o, batched[i]!.slice(b * o.length, (b + 1) * o.length), 0, `matrix ${b}, output ${i}: bit for bit`));
  }
  // and the single matrix's decomposition holds (of (a + aᵀ)/2: symmetrizeInput)
  const [v, w] = eigh(x.index(0)).map(values) as [number[], number[]];
  const get = at(raw, n, n);
  const V = at(v, n, n);
  const err = productError(1, n, n, n, (_, i, j) => (get(0, i, j) + get(0, j, i)) / 2, V, (_, i, j) => V(0, i, j) * w[j]!);
  t.true(err <= 2e-5 * Math.max(...w.map(Math.abs)) * Math.sqrt(n) * 10, `|a·v - v·diag(w)| = ${err}`);
});

cpuTest('check_grads of eigh and svd through this path, order 2, float64', (t) => withX64(true, () => {
  const a = lax.reshape(jnp.array(generated(16, 41), { dtype: 'float64' }), [4, 4]);
  const sym = jnp.add(a, jnp.swapaxes(a, 0, 1));
  const tall = lax.reshape(jnp.array(generated(15, 42), { dtype: 'float64' }), [5, 3]);
  const opts = { order: 2, atol: 1e-5, rtol: 1e-5 };
  checkGrads(t, (y: Array) => { const [v, w] = lax.linalg.eigh(y); return [w, jnp.multiply(v, v)]; }, [sym], opts);
  checkGrads(t, (y: Array) => { const [u, s, vh] = lax.linalg.svd(y, { fullMatrices: false }); return [s, jnp.multiply(u, u), jnp.multiply(vh, vh)]; }, [tall], opts);
}));
