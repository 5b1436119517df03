// lax.linalg.cholesky / triangularSolve / lu and jnp.linalg.cholesky / det /
// slogdet / inv / solve against JAX 0.10.2 fixtures (test/fixtures/
// gen_linalg_lu.py): values and reverse-mode gradients, float32 and float64,
// batched, with JAX's failure cases (NaNs for a matrix that is not positive
// definite, infs and NaNs for a singular solve, det's finite gradient at rank
// n-1 and zero at rank n-2); ports of linalg_test.py's reconstruction checks
// (testCholesky, testLu, testInv, testSolve, testTriangularSolve*) on sizes
// larger than a CUDA block; jit against eager; vmap against a loop;
// checkGrads to order 2; bad input. Runs on whichever platform the suite runs
// on (the CPU, or the emulated GPU with JAXON_TEST_PLATFORM=cuda).
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { type EncodedNumber, decodeNumber, loadFixture } from './helpers/fixtures.js';
import { checkGrads } from './helpers/check-grads.js';
import { withX64 } from './helpers/x64.js';

interface Spec { shape: number[]; dtype: DType; values: EncodedNumber[] }
interface Case { name: string; fn: string; options: Record<string, unknown>; args: Spec[]; outputs: Spec[]; cotangents?: (Spec | null)[]; grads?: Spec[] }
const fixture = loadFixture<{ cases: Case[] }>('linalg_lu.json');

const make = (s: Spec): Array => jnp.array(s.values.map(decodeNumber), { dtype: s.dtype }).reshape(s.shape);

function call(fn: string, options: Record<string, unknown>, args: Array[]): Array[] {
  switch (fn) {
    case 'lax.cholesky': return [lax.linalg.cholesky(args[0]!, options)];
    case 'jnp.cholesky': return [jnp.linalg.cholesky(args[0]!, options)];
    case 'lax.lu': return lax.linalg.lu(args[0]!);
    case 'lax.triangularSolve': return [lax.linalg.triangularSolve(args[0]!, args[1]!, options)];
    case 'jnp.det': return [jnp.linalg.det(args[0]!)];
    case 'jnp.slogdet': return jnp.linalg.slogdet(args[0]!);
    case 'jnp.inv': return [jnp.linalg.inv(args[0]!)];
    case 'jnp.solve': return [jnp.linalg.solve(args[0]!, args[1]!)];
  }
  throw new Error(`unknown fixture function ${fn}`);
}

/**
 * Elementwise closeness, scaled by the largest expected magnitude; a NaN expected is a NaN got, an infinity expected
 * is a non-finite value got, and for a singular solve any non-finite value expected is one got.
 */
function assertClose(t: ExecutionContext, actual: Array, expected: Spec, tol: number, message: string, singular = false): void {
  t.deepEqual([...actual.shape], expected.shape, `${message}: shape`);
  t.is(actual.dtype, expected.dtype, `${message}: dtype`);
  const got = globalThis.Array.from(actual.dataSync(), Number);
  const want = expected.values.map((v) => decodeNumber(v as EncodedNumber));
  const scale = Math.max(1, ...want.filter(Number.isFinite).map(Math.abs));
  const bad = got.findIndex((g, i) => {
    const w = want[i]!;
    // a singular solve: whether an entry is 0 * inf (NaN) or x * inf depends on the rounding of the zero pivot's row
    if (singular && !Number.isFinite(w)) return Number.isFinite(g);
    if (Number.isNaN(w)) return !Number.isNaN(g);
    if (!Number.isFinite(w)) return Number.isFinite(g);
    return !(Math.abs(g - w) <= tol * scale);
  });
  if (got.length !== want.length || bad >= 0) t.fail(`${message}: at flat index ${bad} got ${got[bad]}, expected ${want[bad]}\n got ${got.join(',')}\nwant ${want.join(',')}`);
  else t.pass();
}

const tolerance = (d: DType, grad: boolean) => (d === 'float64' ? 1e-9 : grad ? 2e-4 : 5e-5);

/** The fixture's vjp as a gradient: d/dargs sum(outputs * cotangents) over the float outputs. */
function fixtureGrads(c: Case, args: Array[], cts: (Array | null)[]): Array[] {
  const loss = (...xs: Array[]) => call(c.fn, c.options, xs).reduce((acc: Array | null, o, i) => {
    const ct = cts[i];
    if (!ct) return acc;
    const term = jnp.sum(jnp.multiply(o, ct));
    return acc ? jnp.add(acc, term) : term;
  }, null)!;
  return jax.grad(loss, args.map((_, i) => i))(...args) as Array[];
}

/**
 * Every case's outputs and gradients from one jitted program (one compile: each distinct program costs a C or CUDA
 * compile, seconds on the emulated GPU); eager evaluation is checked against jit below.
 */
function checkCases(t: ExecutionContext, cases: Case[]): void {
  const inputs = cases.map((c) => [...c.args.map(make), ...(c.cotangents ?? []).map((s) => (s ? make(s) : null))]);
  const all = jax.jit((...flat: (Array | null)[][]) => cases.map((c, k) => {
    const args = flat[k]!.slice(0, c.args.length) as Array[];
    const outs = call(c.fn, c.options, args);
    return c.grads ? [...outs, ...fixtureGrads(c, args, flat[k]!.slice(c.args.length))] : outs;
  }))(...inputs) as Array[][];
  cases.forEach((c, k) => {
    const got = all[k]!;
    t.is(got.length, c.outputs.length + (c.grads?.length ?? 0), `${c.name}: number of results`);
    const singular = /singular/.test(c.name) && /solve|inv/.test(c.fn);
    c.outputs.forEach((e, i) => assertClose(t, got[i]!, e, tolerance(e.dtype, false), `${c.name} output ${i}`, singular));
    c.grads?.forEach((e, i) => assertClose(t, got[c.outputs.length + i]!, e, tolerance(e.dtype, true), `${c.name} grad ${i}`));
  });
}

const isF64 = (c: Case) => c.args.some((a) => a.dtype === 'float64');

test('float32 fixtures: values and vjps against JAX (batched, singular and non-positive-definite cases)', (t) => {
  // all in one program: the 2x2 and 3x3 closed-form determinants' gradients together once caught __restrict__ on
  // pointers that plan.ts lets alias (test/buffer-sharing.test.ts has the reduced case)
  checkCases(t, fixture.cases.filter((x) => !isF64(x)));
});

test.serial('float64 fixtures: values and vjps against JAX', (t) => {
  withX64(true, () => checkCases(t, fixture.cases.filter(isF64)));
});

/** A deterministic well-conditioned matrix: a diagonal of `shift` plus small values. */
function matrix(shape: number[], shift: number, seed: number, dtype: DType = 'float32'): Array {
  const n = shape[shape.length - 1]!;
  const size = shape.reduce((a, b) => a * b, 1);
  const values = globalThis.Array.from({ length: size }, (_, i) => {
    const r = Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453;
    const u = r - Math.floor(r) - 0.5;
    const col = i % n;
    const row = Math.floor(i / n) % shape[shape.length - 2]!;
    return u + (row === col ? shift : 0);
  });
  return jnp.array(values, { dtype }).reshape(shape);
}

const maxAbsDiff = (x: Array, y: Array): Array => jnp.max(jnp.abs(jnp.subtract(x, y)));
const maxAbsDiffValue = (x: Array, y: Array) => maxAbsDiff(x, y).item() as number;

// ports of linalg_test.py's checks that a factorization reconstructs its input, at sizes beyond one CUDA block
test('linalg_test.py ports: cholesky, lu, inv, solve and triangular solves reconstruct their inputs', (t) => {
  const shapes = [[5, 5], [2, 33, 33]];
  const mm = (x: Array, y: Array) => jnp.matmul(x, y, { precision: 'highest' });
  const residuals = (x: Array, a: Array, b: Array): [string, Array, number][] => {
    const shape = [...a.shape];
    const n = shape[shape.length - 1]!;
    const checks: [string, Array, number][] = [];
    const spd = jnp.add(mm(x, jnp.swapaxes(x, -1, -2)), jnp.multiply(jnp.eye(n), n));
    const L = jnp.linalg.cholesky(spd);
    checks.push(['testCholesky', maxAbsDiff(mm(L, jnp.swapaxes(L, -1, -2)), spd), 1e-5 * n * n]);
    checks.push(['cholesky is lower triangular', maxAbsDiff(L, jnp.tril(L)), 0]);
    const [lu, , perm] = lax.linalg.lu(a);
    const l = jnp.add(jnp.tril(lu, -1), jnp.eye(n));
    const pa = jnp.takeAlongAxis(a, jnp.broadcastTo(jnp.expandDims(perm, -1), shape), -2);
    checks.push(['testLu', maxAbsDiff(mm(l, jnp.triu(lu)), pa), 1e-5 * n]);
    checks.push(['testInv', maxAbsDiff(mm(a, jnp.linalg.inv(a)), jnp.broadcastTo(jnp.eye(n), shape)), 1e-5 * n]);
    checks.push(['testSolve', maxAbsDiff(mm(a, jnp.linalg.solve(a, b)), b), 1e-5 * n]);
    for (const leftSide of [true, false]) {
      for (const lower of [true, false]) {
        for (const transposeA of [true, false]) {
          const tri = lower ? jnp.tril(a) : jnp.triu(a);
          const op = transposeA ? jnp.swapaxes(tri, -1, -2) : tri;
          const rhs = leftSide ? b : jnp.swapaxes(b, -1, -2);
          // a's other triangle holds values the solve must not read
          const sol = lax.linalg.triangularSolve(a, rhs, { leftSide, lower, transposeA });
          checks.push([`testTriangularSolve left=${leftSide} lower=${lower} transpose=${transposeA}`, maxAbsDiff(leftSide ? mm(op, sol) : mm(sol, op), rhs), 1e-5 * n]);
        }
      }
    }
    return checks;
  };
  const inputs = shapes.map((shape, k) => [matrix(shape, 0, 1 + k), matrix(shape, 3, 2 + k), matrix([...shape.slice(0, -1), 3], 0, 3 + k)]);
  const names: string[][] = [];
  const bounds: number[][] = [];
  const got = jax.jit((...xs: Array[][]) => xs.map(([x, a, b], k) => {
    const checks = residuals(x!, a!, b!);
    names[k] = checks.map((c) => c[0]);
    bounds[k] = checks.map((c) => c[2]);
    return checks.map((c) => c[1]);
  }))(...inputs) as Array[][];
  shapes.forEach((shape, k) => got[k]!.forEach((r, i) => {
    const value = r.item() as number;
    t.true(value <= bounds[k]![i]!, `${names[k]![i]} ${JSON.stringify(shape)}: residual ${value}`);
  }));
});

test('jit equals eager', (t) => {
  const a = matrix([2, 6, 6], 3, 4);
  const b = matrix([2, 6, 2], 0, 5);
  const all = (x: Array, y: Array) => {
    const [lu, pivots, perm] = lax.linalg.lu(x);
    const spd = jnp.add(jnp.matmul(x, jnp.swapaxes(x, -1, -2)), jnp.multiply(jnp.eye(6), 6));
    return [lu, pivots, perm, jnp.linalg.cholesky(spd), lax.linalg.triangularSolve(x, y, { leftSide: true, lower: true }), jnp.linalg.det(x), ...jnp.linalg.slogdet(x), jnp.linalg.inv(x), jnp.linalg.solve(x, y)];
  };
  const eager = all(a, b);
  const jitted = jax.jit(all)(a, b) as Array[];
  eager.forEach((e, i) => t.true(maxAbsDiffValue(e, jitted[i]!) <= 1e-6 * Math.max(1, jnp.max(jnp.abs(e)).item() as number), `output ${i}`));
});

test('vmap equals a loop', (t) => {
  const a = matrix([3, 4, 4], 3, 6);
  const b = matrix([4, 2], 0, 7);
  const fns: [string, (x: Array) => Array[]][] = [
    ['lu', (x) => lax.linalg.lu(x)],
    ['cholesky', (x) => [jnp.linalg.cholesky(jnp.add(jnp.matmul(x, x.T), jnp.multiply(jnp.eye(4), 4)))]],
    ['triangularSolve with an unbatched rhs', (x) => [lax.linalg.triangularSolve(x, b, { leftSide: true, lower: false })]],
    ['det, slogdet', (x) => [jnp.linalg.det(x), ...jnp.linalg.slogdet(x)]],
    ['solve', (x) => [jnp.linalg.solve(x, b)]],
  ];
  for (const [name, f] of fns) {
    const batched = jax.vmap(f)(a) as Array[];
    for (let i = 0; i < 3; i++) {
      const single = f(a.index(i));
      single.forEach((s, j) => t.true(maxAbsDiffValue(batched[j]!.index(i), s) <= 1e-6 * Math.max(1, jnp.max(jnp.abs(s)).item() as number), `${name} output ${j} matrix ${i}`));
    }
  }
});

// the derivative rules are compositions of the same primitives on both platforms, whose kernels the fixtures' vjps
// check on each; order-2 checkGrads evaluates hundreds of eager ops, minutes of compiles on the emulated GPU
const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';

test.serial('checkGrads to order 2 (float64)', (t) => {
  if (onCuda) {
    t.log('runs on the CPU only (platform-independent rules; fixtures check the vjps on this platform)');
    t.pass();
    return;
  }
  withX64(true, () => {
    const a = matrix([3, 3], 2, 8, 'float64');
    const b = matrix([3, 2], 0, 9, 'float64');
    const spd = jnp.add(jnp.matmul(a, a.T), jnp.multiply(jnp.eye(3, 3, { dtype: 'float64' }), 3));
    const four = matrix([4, 4], 2, 10, 'float64');
    checkGrads(t, (x: Array) => lax.linalg.cholesky(x), [spd], { order: 2 });
    checkGrads(t, (x: Array, y: Array) => lax.linalg.triangularSolve(x, y, { leftSide: true, lower: true }), [a, b], { order: 2 });
    checkGrads(t, (x: Array) => lax.linalg.lu(x)[0], [a], { order: 2 });
    checkGrads(t, (x: Array) => jnp.linalg.det(x), [four], { order: 2 });
    checkGrads(t, (x: Array) => jnp.linalg.slogdet(x)[1], [four], { order: 2 });
    checkGrads(t, (x: Array, y: Array) => jnp.linalg.solve(x, y), [a, b], { order: 2 });
  });
});

test('bad input names the function, the argument and the values', (t) => {
  const msg = (f: () => unknown) => {
    try { f(); } catch (e) { return (e as Error).message; }
    return 'no error';
  };
  t.regex(msg(() => jnp.linalg.det(jnp.ones([2, 3]))), /jnp\.linalg\.det: a must have shape \[\.\.\., n, n\], got \[2,\s?3\]/);
  t.regex(msg(() => lax.linalg.cholesky(jnp.ones([3, 3], { dtype: 'float16' }))), /lax\.linalg\.cholesky: x must be float32 or float64, got float16/);
  t.regex(msg(() => lax.linalg.triangularSolve(jnp.eye(3), jnp.ones([4, 2]), { leftSide: true })), /triangular_solve: a's size 3 must equal b's second-to-last axis/);
  t.regex(msg(() => lax.linalg.triangularSolve(jnp.eye(3), jnp.ones([3, 2]), { lower: 1 } as never)), /lax\.linalg\.triangularSolve: lower must be a boolean, got 1/);
  t.regex(msg(() => jnp.linalg.solve(jnp.eye(3), jnp.ones([4]))), /jnp\.linalg\.solve: the arguments to solve must have shapes/);
  t.regex(msg(() => jnp.linalg.cholesky(jnp.eye(2), { lower: true } as never)), /jnp\.linalg\.cholesky.*lower/);
});
