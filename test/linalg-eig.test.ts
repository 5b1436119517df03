// lax.linalg.qr / eigh / svd and jnp.linalg.qr / eigh / eigvalsh / svd /
// lstsq / pinv / norm / matrixPower against JAX 0.10.2's outputs
// (test/fixtures/gen_linalg_eig.py), float32 and float64, batched, with
// rank-deficient and repeated-eigenvalue inputs (ports of linalg_test.py's
// testQr, testEigh, testEighGrad, testSvd, testNorm, testPinv, testLstsq,
// testMatrixPower). Eigen- and singular vectors are not unique: each is
// compared after flipping it so its largest entry is positive, only where
// its value is simple and nonzero, and every decomposition is also checked
// by its invariants (reconstruction, orthogonality). Gradients of
// sign-invariant functions against JAX's; checkGrads to order 2; jit ==
// eager; vmap == a loop. Runs on whichever platform the suite runs on (the
// CPU, or the emulated GPU with JAXON_TEST_PLATFORM=cuda).
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { checkGrads } from './helpers/check-grads.js';
import { type EncodedNumber, decodeNumber, loadFixture } from './helpers/fixtures.js';
import { assertThrowsMentioning, randomValues, withReference } from './helpers/oracle.js';
import { withX64 } from './helpers/x64.js';

interface Spec { shape: number[]; values: EncodedNumber[] }
interface Case {
  fn: string; args: string[]; options: Record<string, unknown>; dtype: DType; expected: Spec[];
  repeated?: boolean; rankdef?: boolean; bslice?: number;
}
interface GradCase { name: string; args: string[]; expected: Spec }
const fixture = loadFixture<{ inputs: Record<string, Spec>; cases: Case[]; grads: GradCase[] }>('linalg_eig.json');

/** A host matrix: shape and float64 values. */
interface Host { shape: number[]; values: number[] }

const make = (name: string, dtype: DType): Array => {
  const s = fixture.inputs[name]!;
  return lax.reshape(jnp.array(s.values.map(decodeNumber), { dtype }), s.shape);
};
const host = (x: Array): Host => ({ shape: [...x.shape], values: globalThis.Array.from(x.dataSync(), Number) });
const fromSpec = (s: Spec): Host => ({ shape: s.shape, values: s.values.map(decodeNumber) });
const tol = (dtype: DType) => (dtype === 'float32' ? 3e-4 : 1e-9);

function assertClose(t: ExecutionContext, got: Host, want: Host, atol: number, message: string): void {
  if (got.shape.join() !== want.shape.join()) {
    t.fail(`${message}: shape [${got.shape}] expected [${want.shape}]`);
    return;
  }
  const scale = Math.max(1, ...want.values.filter(Number.isFinite).map(Math.abs));
  const bad = got.values.findIndex((g, i) => {
    const w = want.values[i]!;
    return Number.isNaN(w) ? !Number.isNaN(g) : !(Math.abs(g - w) <= atol * scale);
  });
  if (bad >= 0) t.fail(`${message}: at flat index ${bad} got ${got.values[bad]}, expected ${want.values[bad]} (atol ${atol}·${scale})`);
  else t.pass();
}

/** Matrices of a [..., r, c] host array. */
function mats(h: Host): { r: number; c: number; count: number; at: (b: number, i: number, j: number) => number } {
  const r = h.shape.at(-2)!;
  const c = h.shape.at(-1)!;
  return { r, c, count: h.values.length / (r * c || 1), at: (b, i, j) => h.values[b * r * c + i * c + j]! };
}

/** Flips column j of u (and row j of vh when given) of every matrix so u's largest |entry| in the column is positive; keeps the first k. */
function normalizeColumns(u: Host, k: number, vh?: Host): [Host, Host | undefined] {
  const U = mats(u);
  const outU: number[] = [];
  const signs: number[][] = [];
  for (let b = 0; b < U.count; b++) {
    const sg: number[] = [];
    for (let j = 0; j < k; j++) {
      let best = 0;
      for (let i = 0; i < U.r; i++) if (Math.abs(U.at(b, i, j)) > Math.abs(best) + 1e-6) best = U.at(b, i, j);
      sg.push(best < 0 ? -1 : 1);
    }
    signs.push(sg);
    for (let i = 0; i < U.r; i++) for (let j = 0; j < k; j++) outU.push(U.at(b, i, j) * sg[j]!);
  }
  const uOut = { shape: [...u.shape.slice(0, -1), k], values: outU };
  if (!vh) return [uOut, undefined];
  const V = mats(vh);
  const outV: number[] = [];
  for (let b = 0; b < V.count; b++) for (let j = 0; j < k; j++) for (let c = 0; c < V.c; c++) outV.push(V.at(b, j, c) * signs[b]![j]!);
  return [uOut, { shape: [...vh.shape.slice(0, -2), k, V.c], values: outV }];
}

/** max |a·b - c| over the batch of matrices (host, float64): a [..., p, q], b [..., q, r]. */
function matmulError(a: Host, b: Host, c: Host): number {
  const A = mats(a);
  const B = mats(b);
  const C = mats(c);
  let worst = 0;
  for (let n = 0; n < A.count; n++) {
    for (let i = 0; i < A.r; i++) {
      for (let j = 0; j < B.c; j++) {
        let s = 0;
        for (let k = 0; k < A.c; k++) s += A.at(n, i, k) * B.at(n, k, j);
        worst = Math.max(worst, Math.abs(s - C.at(n, i, j)));
      }
    }
  }
  return worst;
}

function transposeHost(h: Host): Host {
  const M = mats(h);
  const values: number[] = [];
  for (let b = 0; b < M.count; b++) for (let j = 0; j < M.c; j++) for (let i = 0; i < M.r; i++) values.push(M.at(b, i, j));
  return { shape: [...h.shape.slice(0, -2), M.c, M.r], values };
}

function identityHost(count: number, n: number): Host {
  const values: number[] = [];
  for (let b = 0; b < count; b++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) values.push(i === j ? 1 : 0);
  return { shape: [count, n, n], values };
}

function diagTimes(u: Host, s: Host, k: number): Host {
  const U = mats(u);
  const values = u.values.map((v, idx) => {
    const b = Math.floor(idx / (U.r * U.c));
    const j = idx % U.c;
    return j < k ? v * s.values[b * k + j]! : 0;
  });
  return { shape: u.shape, values };
}

function firstRows(h: Host, k: number): Host {
  const M = mats(h);
  const values: number[] = [];
  for (let b = 0; b < M.count; b++) for (let i = 0; i < k; i++) for (let j = 0; j < M.c; j++) values.push(M.at(b, i, j));
  return { shape: [...h.shape.slice(0, -2), k, M.c], values };
}

function firstColumns(h: Host, k: number): Host {
  const M = mats(h);
  const values: number[] = [];
  for (let b = 0; b < M.count; b++) for (let i = 0; i < M.r; i++) for (let j = 0; j < k; j++) values.push(M.at(b, i, j));
  return { shape: [...h.shape.slice(0, -1), k], values };
}

function assertOrthonormalColumns(t: ExecutionContext, q: Host, atol: number, message: string): void {
  const Q = mats(q);
  const err = matmulError(transposeHost(q), q, identityHost(Q.count, Q.c));
  t.true(err <= atol, `${message}: |QᵀQ - I| = ${err}`);
}

function runCase(c: Case, args: Array[]): Array[] {
  const o = c.options;
  switch (c.fn) {
    case 'lax.qr': return lax.linalg.qr(args[0]!, o);
    case 'lax.svd': {
      const out = lax.linalg.svd(args[0]!, o);
      return out instanceof globalThis.Array ? out : [out];
    }
    case 'lax.eigh': return lax.linalg.eigh(args[0]!, o);
    case 'qr': {
      const out = jnp.linalg.qr(args[0]!, o);
      return out instanceof globalThis.Array ? out : [out];
    }
    case 'eigh': return jnp.linalg.eigh(args[0]!, o);
    case 'eigvalsh': return [jnp.linalg.eigvalsh(args[0]!, o)];
    case 'svd': return jnp.linalg.svd(args[0]!, o);
    case 'lstsq': return jnp.linalg.lstsq(args[0]!, c.bslice ? args[1]!.index([0, c.bslice]) : args[1]!, o);
    case 'pinv': return [jnp.linalg.pinv(args[0]!, o)];
    case 'norm': return [jnp.linalg.norm(args[0]!, { ...o, ...(typeof o.ord === 'string' && o.ord.endsWith('inf') ? { ord: decodeNumber(o.ord) } : {}) } as never)];
    case 'matrixPower': return [jnp.linalg.matrixPower(args[0]!, o.n as number)];
  }
  throw new Error(`unknown fixture function ${c.fn}`);
}

/** Compares one case's outputs with JAX's: values, vectors up to sign, and the decomposition's invariants. */
function checkCase(t: ExecutionContext, c: Case, outs: Array[], input: Host): void {
  const label = `${c.fn}(${c.args.join(', ')}, ${JSON.stringify(c.options)}) ${c.dtype}`;
  const got = outs.map(host);
  const want = c.expected.map(fromSpec);
  // matrixPower multiplies at default precision: TF32 tensor cores for float32 on a GPU (as JAX there)
  const atol = c.fn === 'matrixPower' && c.dtype === 'float32' && jax.defaultBackend() === 'cuda' ? 3e-3 : tol(c.dtype);
  t.is(outs.length, want.length, `${label}: output count`);
  // lstsq's rank is an int (JAX: int64 under x64, which jaxon does not have: int32)
  outs.forEach((o, i) => t.is(o.dtype, c.fn === 'lstsq' && i === 2 ? 'int32' : c.dtype, `${label}: dtype ${i}`));
  const svdLike = c.fn === 'lax.svd' || c.fn === 'svd';
  const eighLike = c.fn === 'lax.eigh' || c.fn === 'eigh';
  if (svdLike && got.length === 3) {
    const [u, s, vh] = got as [Host, Host, Host];
    const k = s.shape.at(-1)!;
    assertClose(t, s, want[1]!, atol, `${label} s`);
    // vectors of nonzero singular values only (rankdef: the last is zero)
    const kk = c.rankdef ? 2 : k;
    const [un, vn] = normalizeColumns(u, kk, vh);
    const [uw, vw] = normalizeColumns(want[0]!, kk, want[2]!);
    assertClose(t, un, uw, atol * 10, `${label} u up to sign`);
    assertClose(t, vn!, vw!, atol * 10, `${label} vh up to sign`);
    const err = matmulError(diagTimes(firstColumns(u, k), s, k), firstRows(vh, k), input);
    t.true(err <= atol * 20, `${label}: |u·diag(s)·vh - a| = ${err}`);
    assertOrthonormalColumns(t, u, atol * 10, `${label} u`);
    assertOrthonormalColumns(t, transposeHost(vh), atol * 10, `${label} vh`);
    return;
  }
  if (eighLike) {
    const [v, w] = (c.fn === 'eigh' ? [got[1]!, got[0]!] : got) as [Host, Host];
    const [vWant, wWant] = c.fn === 'eigh' ? [want[1]!, want[0]!] : [want[0]!, want[1]!];
    assertClose(t, w, wWant, atol, `${label} w`);
    if (!c.repeated) assertClose(t, normalizeColumns(v, v.shape.at(-1)!)[0], normalizeColumns(vWant, v.shape.at(-1)!)[0], atol * 10, `${label} v up to sign`);
    assertOrthonormalColumns(t, v, atol * 10, `${label} v`);
    if (c.options.symmetrizeInput !== false) {
      // the decomposed matrix is (a + aᵀ)/2
      const aT = transposeHost(input);
      const symmetric = { shape: input.shape, values: input.values.map((x, i) => (x + aT.values[i]!) / 2) };
      const err = matmulError(symmetric, v, diagTimes(v, w, w.shape.at(-1)!));
      t.true(err <= atol * 20, `${label}: |a·v - v·diag(w)| = ${err}`);
    }
    return;
  }
  got.forEach((g, i) => assertClose(t, g, want[i]!, atol, `${label} output ${i}`));
  if (c.fn === 'lax.qr' || (c.fn === 'qr' && got.length === 2)) {
    const [q, r] = got as [Host, Host];
    const err = matmulError(q, r, input);
    t.true(err <= atol * 20, `${label}: |q·r - a| = ${err}`);
    assertOrthonormalColumns(t, q, atol * 10, `${label} q`);
  }
}

// The CPU runs the cases eagerly (its kernels are shape-generic and cached): every float32 case, and for float64 the
// decompositions and one case of each jnp function (CI time); the emulated GPU compiles a kernel per shape, so it runs
// that subset in both dtypes, all of a dtype in one jitted program.
const onCpu = jax.defaultBackend() === 'cpu';

function gpuSubset(cases: Case[]): Case[] {
  const seen = new Set<string>();
  return cases.filter((c) => {
    if (c.fn.startsWith('lax.') && !(c.args[0] === 'batch' && !c.options.fullMatrices)) return true;
    const key = `${c.fn}${c.fn === 'norm' ? c.args[0] : ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

for (const dtype of ['float32', 'float64'] as DType[]) {
  test.serial(`fixtures: every function against JAX, ${dtype}`, (t) => {
    withX64(dtype === 'float64', () => {
      if (onCpu) {
        const all = fixture.cases.filter((k) => k.dtype === dtype);
        for (const c of dtype === 'float32' ? all : gpuSubset(all)) {
          const args = c.args.map((a) => make(a, dtype));
          checkCase(t, c, runCase(c, args), host(args[0]!));
        }
        return;
      }
      const cases = gpuSubset(fixture.cases.filter((k) => k.dtype === dtype));
      const names = [...new Set(cases.flatMap((c) => c.args))];
      const all = jax.jit((...inputs: Array[]) => cases.map((c) => runCase(c, c.args.map((a) => inputs[names.indexOf(a)]!))));
      const outs = all(...names.map((n) => make(n, dtype))) as Array[][];
      cases.forEach((c, i) => checkCase(t, c, outs[i]!, host(make(c.args[0]!, dtype))));
    });
  });
}

test.serial('jit == eager (one program of many decompositions), float32', (t) => {
  const names = ['tall', 'wide', 'batch', 'sym', 'rankdef'];
  const f = (tall: Array, wide: Array, batch: Array, sym: Array, rankdef: Array) => [
    ...lax.linalg.qr(tall), ...lax.linalg.qr(wide, { fullMatrices: false }), ...lax.linalg.svd(batch), ...lax.linalg.eigh(sym),
    jnp.linalg.pinv(rankdef), jnp.linalg.norm(wide, { ord: 'nuc' }), jnp.linalg.lstsq(tall, wide.index(0).index([0, 5]).reshape([5]))[0],
    jnp.linalg.matrixPower(sym, 3), jnp.linalg.svd(wide, { computeUv: false }),
  ];
  const args = names.map((n) => make(n, 'float32')) as [Array, Array, Array, Array, Array];
  const eager = f(...args).map(host);
  const jitted = (jax.jit(f)(...args) as Array[]).map(host);
  eager.forEach((e, i) => assertClose(t, jitted[i]!, e, 2e-5, `output ${i}`));
});

test.serial('vmap == a loop over the batch (eigh, svd, qr, pinv; batch axis 0 and 1)', (t) => {
  const x = make('batch', 'float32'); // [2, 3, 4, 3]
  const f = (a: Array) => [...lax.linalg.eigh(jnp.matmul(jnp.swapaxes(a, -1, -2), a)), ...lax.linalg.svd(a, { fullMatrices: false }), ...lax.linalg.qr(a), jnp.linalg.pinv(a)];
  const batched = (jax.jit(jax.vmap(f))(x) as Array[]).map(host);
  const loop = [0, 1].map((i) => (jax.jit(f)(x.index(i)) as Array[]).map(host));
  batched.forEach((b, k) => assertClose(t, b, { shape: b.shape, values: [...loop[0]![k]!.values, ...loop[1]![k]!.values] }, 1e-5, `vmap axis 0 output ${k}`));
  // batch along axis 1 moves to the front of the primitive's batch axes
  const y = jnp.moveaxis(x, 0, 1); // [3, 2, 4, 3]
  const inner = (jax.jit(jax.vmap(f, 1))(y) as Array[]).map(host);
  inner.forEach((b, k) => assertClose(t, b, batched[k]!, 1e-5, `vmap axis 1 output ${k}`));
});

test.serial('gradients of sign-invariant functions against JAX, float64', (t) => {
  withX64(true, () => {
    const A = (n: string) => make(n, 'float64');
    const W = A('weights');
    const w = (r: number, c: number) => W.index([0, r], [0, c]);
    const ar = (n: number) => jnp.arange(1, n + 1, 1, { dtype: 'float64' });
    const svdF = (a: Array) => {
      const [u, s, vh] = jnp.linalg.svd(a, { fullMatrices: false });
      const k = s.shape[0]!;
      return jnp.sum(jnp.multiply(s, ar(k))).add(jnp.sum(jnp.multiply(jnp.multiply(u, u), w(a.shape[0]!, k)))).add(jnp.sum(jnp.multiply(jnp.multiply(vh, vh), w(k, a.shape[1]!))));
    };
    const qrF = (a: Array) => {
      const [q, r] = jnp.linalg.qr(a);
      return jnp.sum(jnp.multiply(q, w(q.shape[0]!, q.shape[1]!))).add(jnp.sum(jnp.multiply(r, jnp.square(w(r.shape[0]!, r.shape[1]!)))));
    };
    const fns: Record<string, (a: Array) => Array> = {
      'eigh': (a) => { const [ws, v] = jnp.linalg.eigh(a); return jnp.sum(jnp.multiply(ws, ar(4))).add(jnp.sum(jnp.multiply(jnp.multiply(v, v), w(4, 4)))); },
      'svd square': svdF,
      'svd wide': svdF,
      'svd tall 5x3': (a) => jnp.sum(jnp.multiply(jnp.linalg.svd(a, { computeUv: false }), ar(3))).add(jnp.sum(jnp.multiply(jnp.square(jnp.linalg.svd(a, { fullMatrices: false })[0]), ar(3)))),
      'qr tall': qrF,
      'qr wide': qrF,
      'qr square': qrF,
      'pinv tall': (a) => jnp.sum(jnp.multiply(jnp.linalg.pinv(a), w(3, 5))),
      'pinv wide': (a) => jnp.sum(jnp.square(jnp.linalg.pinv(a))),
      'norm nuc': (a) => jnp.linalg.norm(a, { ord: 'nuc' }),
      'norm 2': (a) => jnp.linalg.norm(a, { ord: 2 }),
      'norm -2': (a) => jnp.linalg.norm(a, { ord: -2 }),
      'norm fro': (a) => jnp.linalg.norm(a),
      'norm inf': (a) => jnp.linalg.norm(a, { ord: Infinity }),
      'norm vec 2 at zero': (a) => jnp.linalg.norm(a),
      'norm vec inf at zero': (a) => jnp.linalg.norm(a, { ord: Infinity }),
      'norm vec 1 at zero': (a) => jnp.linalg.norm(a, { ord: 1 }),
      'norm vec 3': (a) => jnp.linalg.norm(a, { ord: 3 }),
      'lstsq': (a) => jnp.sum(jnp.multiply(jnp.linalg.lstsq(a, A('b1'))[0], ar(3))),
      'matrixPower': (a) => jnp.sum(jnp.multiply(jnp.linalg.matrixPower(a, 5), w(3, 3))),
      'eigvalsh repeated': (a) => jnp.sum(jnp.multiply(jnp.linalg.eigvalsh(a), ar(3))),
    };
    t.is(Object.keys(fns).length, fixture.grads.length);
    // eager on the CPU; on the emulated GPU the decompositions' cases in one jitted program (one compile)
    const cases = onCpu ? fixture.grads : fixture.grads.filter((g) => ['eigh', 'svd wide', 'qr tall', 'pinv tall', 'norm vec 2 at zero'].includes(g.name));
    const grads = onCpu
      ? cases.map((g) => jax.grad(fns[g.name]!)(A(g.args[0]!)) as Array)
      : jax.jit((...xs: Array[]) => cases.map((g, i) => jax.grad(fns[g.name]!)(xs[i]!)))(...cases.map((g) => A(g.args[0]!))) as Array[];
    cases.forEach((g, i) => assertClose(t, host(grads[i]!), fromSpec(g.expected), 1e-7, `grad ${g.name}`));
  });
});

// eager numerical differentiation compiles a program per step: the CPU only (the emulated GPU runs the jitted grads above)
(onCpu ? test.serial : test.serial.skip)('checkGrads to order 2 (fwd and rev) on small well-conditioned matrices, float64', (t) => {
  withX64(true, () => {
    const a = make('wellcond', 'float64');
    const sym = jnp.add(a, jnp.swapaxes(a, 0, 1));
    const tall = make('tall', 'float64').index([0, 4]); // 4 x 3, distinct singular values
    const opts = { order: 2, atol: 1e-5, rtol: 1e-5 };
    checkGrads(t, (x: Array) => { const [v, w] = lax.linalg.eigh(x); return [w, jnp.multiply(v, v)]; }, [sym], opts);
    checkGrads(t, (x: Array) => { const [u, s, vh] = lax.linalg.svd(x, { fullMatrices: false }); return [s, jnp.multiply(u, u), jnp.multiply(vh, vh)]; }, [tall], opts);
    checkGrads(t, (x: Array) => lax.linalg.qr(x, { fullMatrices: false }), [tall], opts);
    checkGrads(t, (x: Array) => lax.linalg.qr(x), [jnp.swapaxes(tall, 0, 1)], opts);
    checkGrads(t, (x: Array) => jnp.linalg.pinv(x), [tall], { ...opts, order: 1 });
  });
});

test('bad input: clear errors naming the function and the values', (t) => {
  assertThrowsMentioning(t, () => lax.linalg.eigh(jnp.ones([3, 4])), 'lax.linalg.eigh', 'square', '[3,4]');
  assertThrowsMentioning(t, () => lax.linalg.qr(jnp.ones([3])), 'lax.linalg.qr', 'rank >= 2', '[3]');
  assertThrowsMentioning(t, () => lax.linalg.svd(jnp.ones([2, 2], { dtype: 'int32' })), 'lax.linalg.svd', 'int32');
  assertThrowsMentioning(t, () => jnp.linalg.qr(jnp.ones([2, 2]), { mode: 'raw' as never }), 'jnp.linalg.qr', 'raw');
  assertThrowsMentioning(t, () => jnp.linalg.eigh(jnp.ones([2, 2]), { UPLO: 'X' as never }), 'jnp.linalg.eigh', 'UPLO', 'X');
  assertThrowsMentioning(t, () => jnp.linalg.norm(jnp.ones([2, 2, 2]), { ord: 2 }), 'jnp.linalg.norm', 'Improper number of axes');
  assertThrowsMentioning(t, () => jnp.linalg.norm(jnp.ones([3]), { ord: 'nuc' }), 'jnp.linalg.norm', 'vector norm');
  assertThrowsMentioning(t, () => jnp.linalg.matrixPower(jnp.ones([2, 3]), 2), 'jnp.linalg.matrixPower', 'square');
  assertThrowsMentioning(t, () => jnp.linalg.pinv(jnp.ones([2, 2]), { rtol: 0.1, rcond: 0.1 }), 'jnp.linalg.pinv', 'rtol', 'rcond');
  assertThrowsMentioning(t, () => jax.grad((x: Array) => jnp.sum(lax.linalg.qr(x)[0]))(jnp.ones([4, 2])), 'lax.linalg.qr', 'fullMatrices');
  // integer input promotes to float32 as jnp does
  t.is(jnp.linalg.eigvalsh(jnp.array([[2, 1], [1, 2]], { dtype: 'int32' })).dtype, 'float32');
});

test('matrixPower with a negative exponent is the inverse\'s power, as JAX (value from JAX 0.10.2)', (t) => {
  const a = jnp.array([[2.0, 0.5, -0.25], [0.25, 1.5, 0.5], [-0.5, 0.25, 3.0]]);
  const want = [0.2193879932165146, -0.25838327407836914, 0.09321852773427963, -0.1795540153980255, 0.4633820056915283, -0.14326931536197662, 0.08571231365203857, -0.12199701368808746, 0.07674188166856766];
  const got = jnp.linalg.matrixPower(a, -3).dataSync();
  // TF32 products on a GPU at the default precision, as JAX's there
  const atol = jax.defaultBackend() === 'cuda' ? 3e-3 : 2e-6;
  t.true(want.every((w, i) => Math.abs(got[i]! - w) <= atol), `got ${globalThis.Array.from(got).join(', ')}`);
});

// JAX 0.10.2 (LAPACK on the CPU) returns NaN for every eigenvalue, eigenvector entry, singular value and singular
// vector entry of a matrix with a NaN; the Jacobi rounds alone gave eigh [1, NaN, 3] with identity vectors and an svd
// with two finite singular values for this one. Only that matrix of a batch; an unsymmetrized eigh ignores a NaN in the
// triangle it does not read (LAPACK reads one triangle too). One jitted program for the emulated GPU's compile.
test('eigh and svd of a matrix with a NaN are NaN throughout, as JAX; the other matrices of the batch are not', (t) => {
  const bad = [[1, 2, 0], [2, NaN, 1], [0, 1, 3]];
  const good = [[2, 1, 0], [1, 2, 0], [0, 0, 5]];
  const upperNaN = [[2, NaN, 0], [1, 2, 0], [0, 0, 5]];
  const run = jax.jit((x: Array, y: Array) => [...lax.linalg.eigh(x), ...lax.linalg.svd(x), ...lax.linalg.eigh(y, { symmetrizeInput: false })]);
  const outs = run(jnp.array([bad, good]), jnp.array(upperNaN)) as Array[];
  const [v, w, u, s, vh, vLower, wLower] = outs.map((o) => globalThis.Array.from(o.dataSync(), Number));
  const half = (xs: number[]) => [xs.slice(0, xs.length / 2), xs.slice(xs.length / 2)] as const;
  for (const [name, xs] of Object.entries({ w, v, u, s, vh })) {
    const [first, second] = half(xs!);
    t.true(first.every(Number.isNaN), `${name} of the matrix with a NaN: ${first.join(', ')}`);
    t.true(second.every(Number.isFinite), `${name} of the finite matrix: ${second.join(', ')}`);
  }
  // eigenvalues of [[2, 1, 0], [1, 2, 0], [0, 0, 5]]: 1, 3, 5 (the lower triangle of upperNaN is the same matrix)
  for (const [name, values] of [['eigh', half(w!)[1]], ['eigh of the lower triangle', wLower!]] as const) {
    t.true(values.every((x, i) => Math.abs(x - [1, 3, 5][i]!) < 1e-5), `${name}: ${values.join(', ')}`);
  }
  t.true(vLower!.every(Number.isFinite), `eigenvectors of the lower triangle: ${vLower!.join(', ')}`);
  t.true(half(s!)[1].every((x, i) => Math.abs(x - [5, 3, 1][i]!) < 1e-5), `singular values: ${half(s!)[1].join(', ')}`);
});

// The round-robin Jacobi kernels (render/linalg-jacobi.ts; on CUDA a thread block per matrix) at the sizes that
// exercise their tournament: a batch, odd n (a dummy index), n = 1 and 2, n = 70 (35 pairs: a block of two warps), the
// identity and repeated eigenvalues, tall / wide / rank-deficient svd with full_matrices both ways, float32 and float64.
// Against the float64 reference, which runs the same rounds: eigen- and singular vectors of simple values are compared
// as they are, signs included (the CPU, the GPU and the oracle pick the same ones), the rest by their invariants.
// One jitted program, so the emulated GPU compiles its kernels in one batch. The CPU takes render/linalg-tridiagonal.ts's
// path from EIG_MIN (32) up, with other signs: JAXON_CPU_EIG_MIN keeps n = 70 on the Jacobi kernel here (lowering reads
// it; the test is serial and synchronous, as withX64).
test.serial('round-robin Jacobi eigh and svd: batches, odd n, n = 1, 2 and 70, degenerate and rank-deficient inputs', (t) => {
  const previousMinimum = process.env['JAXON_CPU_EIG_MIN'];
  process.env['JAXON_CPU_EIG_MIN'] = '1000000';
  try {
    jacobiCases(t);
  } finally {
    if (previousMinimum === undefined) delete process.env['JAXON_CPU_EIG_MIN'];
    else process.env['JAXON_CPU_EIG_MIN'] = previousMinimum;
  }
});

function jacobiCases(t: ExecutionContext): void {
  withX64(true, () => {
    const symmetric = (n: number, seed: number): number[] => {
      const a = randomValues(n * n, seed);
      return a.map((_, e) => (a[e]! + a[(e % n) * n + Math.floor(e / n)]!) / 2);
    };
    // H diag(d) H with H = I - 2 u uᵀ / uᵀu: eigenvalues d (repeated), eigenvectors H's columns
    const withEigenvalues = (d: number[], seed: number): number[] => {
      const n = d.length;
      const u = randomValues(n, seed);
      const uu = u.reduce((s, x) => s + x * x, 0);
      const h = (i: number, j: number) => (i === j ? 1 : 0) - (2 * u[i]! * u[j]!) / uu;
      const out: number[] = [];
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out.push(d.reduce((s, dk, k) => s + h(i, k) * dk * h(k, j), 0));
      return out;
    };
    const identity = (n: number) => identityHost(1, n).values;
    // an m x n matrix of rank r: (m x r)(r x n)
    const ranked = (m: number, n: number, r: number, seed: number): number[] => {
      const b = randomValues(m * r, seed);
      const c = randomValues(r * n, seed + 1);
      const out: number[] = [];
      for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) { let s = 0; for (let k = 0; k < r; k++) s += b[i * r + k]! * c[k * n + j]!; out.push(s); }
      return out;
    };
    interface JacobiCase {
      label: string; dtype: DType; shape: number[]; values: number[];
      op: 'eigh' | { fullMatrices: boolean; computeUv: boolean };
      /** matrices of the batch whose vectors are unique up to sign (compared as they are), and how many of them */
      simple: number[]; vectors: number;
    }
    const cases: JacobiCase[] = [
      { label: 'eigh batch of 3, odd n = 5, the second the identity', dtype: 'float32', shape: [3, 5, 5], values: [...symmetric(5, 1), ...identity(5), ...symmetric(5, 2)], op: 'eigh', simple: [0, 1, 2], vectors: 5 },
      { label: 'eigh n = 1', dtype: 'float32', shape: [1, 1], values: [-2.5], op: 'eigh', simple: [0], vectors: 1 },
      { label: 'eigh n = 2', dtype: 'float32', shape: [2, 2], values: symmetric(2, 3), op: 'eigh', simple: [0], vectors: 2 },
      { label: 'eigh n = 70', dtype: 'float32', shape: [70, 70], values: symmetric(70, 4), op: 'eigh', simple: [0], vectors: 70 },
      { label: 'eigh float64 batch of 2, n = 6, the second with eigenvalues 1, 1, 2, 2, 2, -3', dtype: 'float64', shape: [2, 6, 6], values: [...symmetric(6, 5), ...withEigenvalues([1, 1, 2, 2, 2, -3], 6)], op: 'eigh', simple: [0], vectors: 6 },
      { label: 'svd tall 7 x 4 full, the second of rank 2', dtype: 'float32', shape: [2, 7, 4], values: [...randomValues(28, 7), ...ranked(7, 4, 2, 8)], op: { fullMatrices: true, computeUv: true }, simple: [0, 1], vectors: 2 },
      { label: 'svd wide 4 x 7 reduced, the second of rank 2', dtype: 'float32', shape: [2, 4, 7], values: [...randomValues(28, 9), ...ranked(4, 7, 2, 10)], op: { fullMatrices: false, computeUv: true }, simple: [0, 1], vectors: 2 },
      { label: 'svd float64 tall 6 x 5 reduced, the second of rank 3', dtype: 'float64', shape: [2, 6, 5], values: [...randomValues(30, 11), ...ranked(6, 5, 3, 12)], op: { fullMatrices: false, computeUv: true }, simple: [0, 1], vectors: 3 },
      { label: 'svd float64 wide 5 x 9 full', dtype: 'float64', shape: [5, 9], values: randomValues(45, 13), op: { fullMatrices: true, computeUv: true }, simple: [0], vectors: 5 },
      { label: 'svd float64 values only, 9 x 7', dtype: 'float64', shape: [9, 7], values: randomValues(63, 14), op: { fullMatrices: false, computeUv: false }, simple: [], vectors: 0 },
    ];
    const run = (c: JacobiCase, x: Array): Array[] => {
      if (c.op === 'eigh') return lax.linalg.eigh(x, { symmetrizeInput: false });
      const out = lax.linalg.svd(x, c.op);
      return out instanceof globalThis.Array ? out : [out];
    };
    const inputs = cases.map((c) => lax.reshape(jnp.array(c.values, { dtype: c.dtype }), c.shape));
    const outs = (jax.jit((...xs: Array[]) => cases.map((c, i) => run(c, xs[i]!)))(...inputs) as Array[][]).map((o) => o.map(host));
    const want = cases.map((c, i) => withReference(() => run(c, inputs[i]!)).map(host));
    cases.forEach((c, i) => {
      const f32 = c.dtype === 'float32';
      const atol = f32 ? (c.shape.at(-1)! > 10 ? 3e-3 : 3e-4) : 1e-9;
      const got = outs[i]!;
      const ref = want[i]!;
      const input = host(inputs[i]!);
      // the batch's matrices whose first `c.vectors` columns are compared as they are
      const pick = (h: Host, columns: number): Host => {
        const M = mats(h);
        const values: number[] = [];
        for (const b of c.simple) for (let r = 0; r < M.r; r++) for (let j = 0; j < columns; j++) values.push(M.at(b, r, j));
        return { shape: [c.simple.length, M.r, columns], values };
      };
      if (c.op === 'eigh') {
        const [v, w] = got as [Host, Host];
        assertClose(t, w, ref[1]!, atol / 10, `${c.label}: eigenvalues`);
        t.true(w.values.every((x, e) => e % c.vectors === 0 || x >= w.values[e - 1]!), `${c.label}: eigenvalues ascending`);
        assertClose(t, pick(v, c.vectors), pick(ref[0]!, c.vectors), atol, `${c.label}: eigenvectors, signs included`);
        assertOrthonormalColumns(t, v, atol, `${c.label}: v`);
        t.true(matmulError(input, v, diagTimes(v, w, c.vectors)) <= atol * 20, `${c.label}: |a·v - v·diag(w)|`);
        return;
      }
      // lax.linalg.svd's outputs: u, s, vt (s alone without computeUv)
      const si = c.op.computeUv ? 1 : 0;
      const s = got[si]!;
      const k = s.shape.at(-1)!;
      assertClose(t, s, ref[si]!, atol / 10, `${c.label}: singular values`);
      t.true(s.values.every((x, e) => e % k === 0 || x <= s.values[e - 1]!), `${c.label}: singular values descending`);
      if (!c.op.computeUv) return;
      const [u, vt] = [got[0]!, got[2]!];
      assertClose(t, pick(u, c.vectors), pick(ref[0]!, c.vectors), atol, `${c.label}: u, signs included`);
      assertClose(t, pick(transposeHost(vt), c.vectors), pick(transposeHost(ref[2]!), c.vectors), atol, `${c.label}: vt, signs included`);
      t.is(u.shape.at(-1), c.op.fullMatrices ? c.shape.at(-2) : k, `${c.label}: u's columns`);
      assertOrthonormalColumns(t, u, atol, `${c.label}: u`);
      assertOrthonormalColumns(t, transposeHost(vt), atol, `${c.label}: vt`);
      t.true(matmulError(diagTimes(firstColumns(u, k), s, k), firstRows(vt, k), input) <= atol * 20, `${c.label}: |u·diag(s)·vt - a|`);
    });
  });
}
