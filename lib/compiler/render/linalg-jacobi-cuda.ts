// lax.linalg.eigh and svd on the GPU for large matrices: render/linalg-jacobi.ts's
// round-robin Jacobi spread over many thread blocks, as a fixed sequence of
// launches (lowered by lower-jacobi.ts for the 'cuda' target) instead of one
// block per matrix (one SM of an H100's 132, at most 256 threads).
// Why the same rounds over many blocks and not block Jacobi (cuSOLVER
// syevj's 2b x 2b subproblems applied as GEMMs): a round's ⌈n/2⌉ rotations
// are disjoint, so an eigh round is an elementwise map over 2 x 2 blocks of
// pairs (rows p_k, q_k by columns p_l, q_l) whose value needs only the four
// entries of the round's start and the rotations of pairs k and l, each O(1)
// from three entries of the matrix; an svd round touches only its pairs'
// columns, so a block that owns a few pairs computes their rotations (the
// columns' dot products) and applies them, with no other block involved.
// Doing each entry's operations in the one-block kernel's order (eigh: the
// rows' rotation J^T W, then the columns' W J and V J, the rotated pair's own
// off-diagonal entries set to zero) gives the one-block kernel's results bit
// for bit, signs and order included, which the tests check; block Jacobi
// would give other (equally valid) vectors and a second convergence behaviour
// to validate. Its cost is launches: a launch per round, n - 1 rounds a sweep
// (n odd: n), each reading and writing W and V once (coalesced along a row of
// pairs: consecutive pairs take consecutive indices mod n - 1).
// eigh's rounds read W from one buffer and write the other (a block computing
// pair k's rotation reads entries other blocks rewrite in the same launch); V
// is updated in place (each entry has one owner and its rotation comes from W).
// Every launch of a stage has the same params, hence one compile per stage:
// a launch learns its sweep and round from a ticket counter in a small int32
// state buffer (as render/linalg-cuda-blocked.ts's stages), which also holds
// per matrix whether it converged and how many sweeps it ran. The plan has
// the one-block kernel's cap of 60 sweeps with its convergence tests (the same
// sums in the same order); launches after a matrix converged (or whose test
// saw a NaN: !(off > tol) is true) return at once. They are most of a plan
// (a matrix converges in about 10 sweeps), each still a launch and a ticket
// per block: a conditional graph node around the sweeps would skip them.
// svd's tail (norms, sort, U's completion) is the one-block kernel's, on one
// block per matrix.
import type { DType } from '../../core/dtype.js';
import type { JacobiStage, OrthogonalKernel } from '../kernel-ir.js';
import { type RenderedKernel, indent, indexType, int } from './cuda-common.js';
import { CUDA_TYPES } from './expr.js';
import { rotation } from './linalg-eig.js';
import { JACOBI_MAX_SWEEPS, eighPairMass, pair, spelling, svdFinishSpec, svdPairRotation } from './linalg-jacobi.js';
import { jacobiCuda } from './linalg-targets.js';

/**
 * The smallest min(m, n) on the multi-block path. Not measured on a GPU yet, an estimate: a one-block round costs about
 * (n/256)² x 8 µs, a multi-block round about 4 µs, but the plan also launches the 50 or so sweeps after convergence
 * (about 2 µs a launch), so the two are even near 384 and the multi-block path is twice as fast from 512.
 */
export const CUDA_JACOBI_MIN = 512;
/**
 * Larger batches keep a block per matrix. Also an estimate: both paths move the same bytes a round, so once the batch's
 * blocks fill a good part of the GPU (16 of an H100's 132 SMs, each matrix's W and V beyond L1) the multi-block path
 * saves little and still pays the launches after convergence.
 */
export const CUDA_JACOBI_MAX_BATCH = 16;
/** The state buffer: a ticket slot per ticketed stage, then per matrix [converged, sweeps run (eigh)]. */
export const JACOBI_TICKETS = 8;
const TICKET_SLOT: Partial<Record<JacobiStage, number>> = { norms: 0, round: 1, svd_round: 2 };
/** Pairs along each side of a round's tile (TP x TP threads, one per 2 x 2 block). */
const TILE_PAIRS = 16;
/** svd: pairs per block of a round (N = 1024 gives 128 blocks, about one per SM of an H100). */
const SVD_PAIRS_PER_BLOCK = 4;

/**
 * The multi-block threshold: CUDA_JACOBI_MIN, or JAXON_CUDA_MULTIBLOCK_JACOBI=MIN (tests force the path on small
 * matrices with it). Read at each lowering.
 */
export function cudaJacobiMin(): number {
  const value = process.env['JAXON_CUDA_MULTIBLOCK_JACOBI'];
  if (value === undefined || value === '') return CUDA_JACOBI_MIN;
  const min = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(min >= 1)) throw new Error(`JAXON_CUDA_MULTIBLOCK_JACOBI: expected MIN (an integer >= 1), got ${JSON.stringify(value)}`);
  return min;
}

/** Whether a kernel's matrices take the multi-block path on the GPU (eigh, and svd by min(m, n)). */
export function cudaJacobiMultiblock(k: OrthogonalKernel, batch: number, m: number, n: number): boolean {
  if (k.op === 'qr' || (k.dtype !== 'float32' && k.dtype !== 'float64')) return false;
  return batch >= 1 && batch <= CUDA_JACOBI_MAX_BATCH && Math.min(m, n) >= cudaJacobiMin();
}

const pairsOf = (n: number) => Math.floor((n + 1) / 2);

/** eigh's work per matrix on the multi-block path: W twice (the rounds' ping-pong), V, then OFF and ALL (P each), PERM (n). */
export const eighMultiblockWork = (n: number): number => 3 * n * n + 2 * pairsOf(n) + n;
export const jacobiStateSize = (batch: number): number => JACOBI_TICKETS + 2 * batch;

/** svd's rotation storage per matrix (render/linalg-jacobi.ts svdRot): V (N²), cos, sin, p, q, rotated (P each), PERM (N). */
const svdRotSize = (N: number): number => N * N + 5 * pairsOf(N) + N;

/** The launch order of the stages, after the state's zeros (lower-jacobi.ts); svd's over N = min(m, n). */
export function jacobiSchedule(op: 'eigh' | 'svd', n: number): JacobiStage[] {
  const rounds = 2 * pairsOf(n) - 1;
  if (op === 'svd') {
    // the one-block kernel tests after a sweep: whether any pair rotated
    const out: JacobiStage[] = ['svd_init'];
    for (let s = 0; s < JACOBI_MAX_SWEEPS; s++) {
      for (let r = 0; r < rounds; r++) out.push('svd_round');
      out.push('svd_test');
    }
    out.push('svd_finish');
    return out;
  }
  const out: JacobiStage[] = ['init'];
  for (let s = 0; s < JACOBI_MAX_SWEEPS; s++) out.push('norms', 'test', ...Array<JacobiStage>(rounds).fill('round'));
  out.push('sort', 'permute');
  return out;
}

/**
 * The buffers of a stage: the one-block kernel's outputs and working storage (eigh: v, w, work; svd: s, (u, vt,) work,
 * rot, (basis)), then the state (int32, not per matrix), then x; svd's finish is the one-block kernel's tail and takes
 * that kernel's buffers (no state).
 */
export function jacobiMultiblockBuffers(k: OrthogonalKernel): { name: string; dtype: DType; output: boolean }[] {
  const outputs = k.op === 'eigh' ? 3 : k.computeUv ? 6 : 3;
  const state = k.jacobi?.stage !== 'svd_finish';
  return [
    ...[...Array(outputs).keys()].map((i) => ({ name: `jx_arg${i}`, dtype: k.dtype, output: true })),
    ...(state ? [{ name: `jx_arg${outputs}`, dtype: 'int32' as DType, output: true }] : []),
    { name: `jx_arg${outputs + (state ? 1 : 0)}`, dtype: k.dtype, output: false },
  ];
}

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);

/**
 * Rendered stages by kernel and params: a plan launches each stage thousands of times (60 sweeps of n - 1 rounds) and
 * every launch is rendered (cross-lowering, executables), so each renders once.
 */
const rendered = new Map<string, RenderedKernel>();

/** The CUDA body of one stage of the multi-block eigh or svd at the exact params [batch, m, n]. */
export function jacobiMultiblockCuda(k: OrthogonalKernel, params: readonly number[]): RenderedKernel {
  const key = JSON.stringify([k.op, k.dtype, k.fullMatrices, k.computeUv, k.lower, k.sort, k.jacobi?.stage, params]);
  let r = rendered.get(key);
  if (!r) {
    if (rendered.size >= 256) rendered.clear();
    rendered.set(key, (r = renderStage(k, params)));
  }
  return r;
}

function renderStage(k: OrthogonalKernel, params: readonly number[]): RenderedKernel {
  const stage = k.jacobi!.stage;
  if (k.op === 'svd') return svdMultiblockCuda(k, params);
  if (k.op !== 'eigh') throw new Error(`render/cuda: the multi-block Jacobi path has no ${k.op}`);
  const [batch, , n] = params as [number, number, number];
  const { T, sqrt, fabs, copysign, eps, one, zero } = spelling(k);
  const P = pairsOf(n);
  const NP = 2 * P;
  const work = eighMultiblockWork(n);
  const idx = indexType([batch * work, batch * n * n]);
  const storage = CUDA_TYPES.storageType(k.dtype);
  const buffers = jacobiMultiblockBuffers(k);
  const head = [
    `typedef ${idx} jx_index;`,
    `const jx_index n = ${int(n)}, P = ${int(P)}, NP = ${int(NP)};`,
    '(void)P; (void)NP;',
    'const jx_index jx_b = blockIdx.y;',
    `${storage} *__restrict__ v = (${storage} *)jx_arg0 + jx_b * ${int(n * n)};`,
    `${storage} *__restrict__ w = (${storage} *)jx_arg1 + jx_b * ${int(n)};`,
    `${storage} *__restrict__ work = (${storage} *)jx_arg2 + jx_b * ${int(work)};`,
    `const ${storage} *__restrict__ x = (const ${storage} *)jx_arg4 + jx_b * ${int(n * n)};`,
    '(void)v; (void)w; (void)x;',
    // per matrix: [0] converged (or a NaN seen), [1] sweeps run, so W's current buffer is W[sweeps * (NP - 1) % 2]
    `jx_i32 *mine = (jx_i32 *)jx_arg3 + ${JACOBI_TICKETS} + 2 * jx_b;`,
    `${T} *W0 = work, *W1 = work + n * n, *V = work + 2 * n * n, *OFF = work + 3 * n * n, *ALL = OFF + P, *PERM = ALL + P;`,
    '(void)W0; (void)W1; (void)V; (void)OFF; (void)ALL; (void)PERM;',
  ];
  const kernel = (grid: number, threads: number, body: string[], strategy: string): RenderedKernel => {
    const slot = TICKET_SLOT[stage];
    const ticket = slot === undefined ? [] : [
      // launches of a stage run in order on the compute stream: launch t hands out tickets t·G .. t·G + G - 1
      '__shared__ jx_index jx_launch;',
      `if (threadIdx.x == 0) jx_launch = (jx_index)(atomicAdd((jx_i32 *)jx_arg3 + ${slot}, 1) / ${int(grid * batch)});`,
      '__syncthreads();',
    ];
    return {
      buffers, grid: [grid, batch, 1], block: [threads, 1, 1],
      strategy: `multi-block eigh (two-sided Jacobi, round-robin pairs), ${stage}: ${strategy}`,
      body: indent([...head, ...ticket, ...body], 2),
    };
  };
  const elementwise = (body: string[], strategy: string) => kernel(Math.max(1, ceilDiv(n * n, 256)), 256, [
    `const jx_index e = (jx_index)blockIdx.x * 256 + threadIdx.x;`,
    `if (e >= ${int(n * n)}) return;`,
    'const jx_index a = e / n, c = e % n;',
    ...body,
  ], strategy);

  switch (stage) {
    case 'init': {
      const read = k.lower ? '(a >= c ? x[a * n + c] : x[c * n + a])' : '(a <= c ? x[a * n + c] : x[c * n + a])';
      return elementwise([`W0[e] = ${read};`, `V[e] = a == c ? ${one} : ${zero};`], `W from the ${k.lower ? 'lower' : 'upper'} triangle and V = I, a thread per entry`);
    }
    case 'norms':
      // the convergence test's partial sums of render/linalg-jacobi.ts, two rows per pair, in its order
      return kernel(ceilDiv(P, 128), 128, [
        'if (mine[0]) return;',
        `const ${T} *W = (jx_launch * (NP - 1)) % 2 ? W1 : W0;`,
        'const jx_index kp = (jx_index)blockIdx.x * 128 + threadIdx.x;',
        'if (kp >= P) return;',
        ...eighPairMass(T, zero),
      ], 'the off-diagonal and whole squared masses of two rows per thread');
    case 'test':
      return kernel(1, 32, [
        'if (mine[0] || threadIdx.x != 0) return;',
        `${T} off = ${zero}, all = ${zero};`,
        'for (jx_index kp = 0; kp < P; kp++) { off += OFF[kp]; all += ALL[kp]; }',
        `if (!(off > all * ${eps} * ${eps})) mine[0] = 1;`,
        'else mine[1] += 1;',
      ], 'the sums in the one-block kernel\'s order; converged (or NaN) ends the matrix\'s sweeps');
    case 'round': {
      const tp = Math.min(TILE_PAIRS, P);
      const across = ceilDiv(P, tp);
      const rotate = (c: string, s: string, x: string, y: string) => [`{ const ${T} jx_x = ${x}, jx_y = ${y}; ${x} = ${c} * jx_x - ${s} * jx_y; ${y} = ${s} * jx_x + ${c} * jx_y; }`];
      return kernel(across * across, tp * tp, [
        'if (mine[0]) return;',
        'const jx_index r = jx_launch % (NP - 1);',
        `const ${T} *__restrict__ Win = jx_launch % 2 ? W1 : W0;`,
        `${T} *__restrict__ Wout = jx_launch % 2 ? W0 : W1;`,
        `const jx_index tk = blockIdx.x / ${int(across)}, tl = blockIdx.x % ${int(across)};`,
        // the rotations of the tile's row pairs (first TP) and column pairs, from the round's W as the one-block kernel
        `__shared__ ${T} jx_cs[${2 * tp}], jx_sn[${2 * tp}];`,
        `__shared__ jx_index jx_p[${2 * tp}], jx_q[${2 * tp}];`,
        `for (jx_index e = threadIdx.x; e < ${2 * tp}; e += blockDim.x) {`,
        `  const jx_index kp = (e < ${tp} ? tk : tl) * ${tp} + e % ${tp};`,
        '  if (kp < P) {',
        `    ${pair('kp')}`,
        `    ${T} rc = ${one}, rs = ${zero};`,
        `    if (q < n && Win[p * n + q] != ${zero}) {`,
        ...rotation(T, sqrt, fabs, copysign, one, 'Win[p * n + p]', 'Win[q * n + q]', 'Win[p * n + q]').map((l) => `      ${l}`),
        '      rc = cs; rs = sn;',
        '    }',
        '    jx_cs[e] = rc; jx_sn[e] = rs; jx_p[e] = p; jx_q[e] = q;',
        '  }',
        '}',
        '__syncthreads();',
        `const jx_index i = threadIdx.x / ${tp}, j = ${tp} + threadIdx.x % ${tp};`,
        `if (tk * ${tp} + i >= P || tl * ${tp} + j - ${tp} >= P) return;`,
        'const jx_index pk = jx_p[i], qk = jx_q[i], pl = jx_p[j], ql = jx_q[j];',
        `const ${T} ck = jx_cs[i], sk = jx_sn[i], cl = jx_cs[j], sl = jx_sn[j];`,
        // the dummy index n (odd n) has no row or column; p < n always
        'const int hq = qk < n, hl = ql < n;',
        `${T} a00 = Win[pk * n + pl], a01 = hl ? Win[pk * n + ql] : ${zero}, a10 = hq ? Win[qk * n + pl] : ${zero}, a11 = hq && hl ? Win[qk * n + ql] : ${zero};`,
        // W <- J^T W on pair k's rows, then W <- W J on pair l's columns: a pair that does not rotate is skipped
        `if (sk != ${zero}) {`,
        ...rotate('ck', 'sk', 'a00', 'a10').map((l) => `  ${l}`),
        ...rotate('ck', 'sk', 'a01', 'a11').map((l) => `  ${l}`),
        '}',
        `if (sl != ${zero}) {`,
        `  { const ${T} wp = a00, wq = a01; a00 = pk == ql ? ${zero} : cl * wp - sl * wq; a01 = pk == pl ? ${zero} : sl * wp + cl * wq; }`,
        `  { const ${T} wp = a10, wq = a11; a10 = qk == ql ? ${zero} : cl * wp - sl * wq; a11 = qk == pl ? ${zero} : sl * wp + cl * wq; }`,
        // V <- V J on pair l's columns, rows pk and qk (every row is one pair's)
        ...rotate('cl', 'sl', 'V[pk * n + pl]', 'V[pk * n + ql]').map((l) => `  ${l}`),
        `  if (hq) ${rotate('cl', 'sl', 'V[qk * n + pl]', 'V[qk * n + ql]')[0]}`,
        '}',
        'Wout[pk * n + pl] = a00;',
        'if (hl) Wout[pk * n + ql] = a01;',
        'if (hq) Wout[qk * n + pl] = a10;',
        'if (hq && hl) Wout[qk * n + ql] = a11;',
      ], `a thread per 2 x 2 block of pairs, tiles of ${tp} x ${tp} pairs (${across * across} per matrix), each tile's rotations from three entries each`);
    }
    case 'sort':
      return kernel(1, 256, [
        `const ${T} *W = (mine[1] * (NP - 1)) % 2 ? W1 : W0;`,
        'for (jx_index a = threadIdx.x; a < n; a += blockDim.x) w[a] = W[a * n + a];',
        ...(k.sort ? [
          '__syncthreads();',
          // the one-block kernel's selection sort, ascending, PERM recording where each value came from
          'if (threadIdx.x == 0) {',
          `  for (jx_index a = 0; a < n; a++) PERM[a] = (${T})a;`,
          '  for (jx_index a = 0; a < n; a++) {',
          '    jx_index best = a;',
          '    for (jx_index c = a + 1; c < n; c++) if (w[c] < w[best]) best = c;',
          '    if (best == a) continue;',
          `    const ${T} e = w[a]; w[a] = w[best]; w[best] = e;`,
          `    const ${T} from = PERM[a]; PERM[a] = PERM[best]; PERM[best] = from;`,
          '  }',
          '}',
        ] : []),
      ], k.sort ? 'the eigenvalues, sorted ascending by one thread (the one-block kernel\'s selection sort)' : 'the eigenvalues, unsorted');
    case 'permute':
      return elementwise([k.sort ? 'v[e] = V[a * n + (jx_index)PERM[c]];' : 'v[e] = V[e];'], k.sort ? 'V\'s columns in the eigenvalues\' order, a thread per entry' : 'V, a thread per entry');
    default:
      throw new Error(`render/cuda: the multi-block eigh has no stage ${JSON.stringify(stage)}`);
  }
}

/** The CUDA body of one stage of the multi-block svd (one-sided Jacobi) at the exact params [batch, m, n]. */
function svdMultiblockCuda(k: OrthogonalKernel, params: readonly number[]): RenderedKernel {
  const stage = k.jacobi!.stage;
  // the tail (norms, sort, U's completion, outputs) is the one-block kernel's, on the G and V the sweeps left
  if (stage === 'svd_finish') return jacobiCuda(k, params, svdFinishSpec(k));
  const [batch, m, n] = params as [number, number, number];
  const { T, one, zero } = spelling(k);
  const M = Math.max(m, n);
  const N = Math.min(m, n);
  const P = pairsOf(N);
  const uv = k.computeUv;
  const rotSize = svdRotSize(N);
  const idx = indexType([batch * M * M, batch * rotSize]);
  const storage = CUDA_TYPES.storageType(k.dtype);
  const buffers = jacobiMultiblockBuffers(k);
  // buffers: s, (u, vt,) work, rot, (basis,) state, x
  const work = uv ? 3 : 1;
  const state = buffers.length - 2;
  const head = [
    `typedef ${idx} jx_index;`,
    `const jx_index m = ${int(m)}, n = ${int(n)}, M = ${int(M)}, N = ${int(N)}, P = ${int(P)}, NP = ${int(2 * P)};`,
    `const int wide = ${m < n ? 1 : 0};`,
    '(void)m; (void)M; (void)P; (void)NP; (void)wide;',
    'const jx_index jx_b = blockIdx.y;',
    `${storage} *__restrict__ G = (${storage} *)jx_arg${work} + jx_b * ${int(M * N)};`,
    `${storage} *__restrict__ rot = (${storage} *)jx_arg${work + 1} + jx_b * ${int(rotSize)};`,
    `const ${storage} *__restrict__ x = (const ${storage} *)jx_arg${state + 1} + jx_b * ${int(m * n)};`,
    '(void)G; (void)x;',
    // per matrix: [0] no pair rotated in a sweep (converged)
    `jx_i32 *mine = (jx_i32 *)jx_arg${state} + ${JACOBI_TICKETS} + 2 * jx_b;`,
    // rot's layout as the one-block kernel's (its finish reads PERM after ROTATED); CS to PQ stay unused
    `${T} *V = rot, *ROTATED = rot + N * N + 4 * P;`,
    '(void)V; (void)ROTATED;',
  ];
  const kernel = (grid: number, threads: number, body: string[], strategy: string): RenderedKernel => {
    const ticket = stage !== 'svd_round' ? [] : [
      '__shared__ jx_index jx_launch;',
      `if (threadIdx.x == 0) jx_launch = (jx_index)(atomicAdd((jx_i32 *)jx_arg${state} + ${TICKET_SLOT.svd_round}, 1) / ${int(grid * batch)});`,
      '__syncthreads();',
    ];
    return {
      buffers, grid: [grid, batch, 1], block: [threads, 1, 1],
      strategy: `multi-block svd (one-sided Jacobi, round-robin column pairs), ${stage}: ${strategy}`,
      body: indent([...head, ...ticket, ...body], 2),
    };
  };
  switch (stage) {
    case 'svd_init':
      // the tall orientation G (x, or its transpose when wide) and V = I
      return kernel(Math.max(1, ceilDiv(M * N, 256)), 256, [
        'const jx_index e = (jx_index)blockIdx.x * 256 + threadIdx.x;',
        `if (e >= ${int(M * N)}) return;`,
        'const jx_index a = e / N, c = e % N;',
        'G[e] = wide ? x[c * n + a] : x[a * n + c];',
        ...(uv ? [`if (e < N * N) V[e] = a == c ? ${one} : ${zero};`] : []),
      ], 'G and V = I, a thread per entry');
    case 'svd_round': {
      // A block owns PB pairs: their columns of G and V are touched by no other block this round, so it computes their
      // rotations (a thread per pair, its dot products down the rows in the one-block kernel's order) and applies them
      // in place, one launch per round
      const threads = 256;
      return kernel(ceilDiv(P, SVD_PAIRS_PER_BLOCK), threads, [
        'if (mine[0]) return;',
        'const jx_index r = jx_launch % (NP - 1);',
        `__shared__ ${T} jx_cs[${SVD_PAIRS_PER_BLOCK}], jx_sn[${SVD_PAIRS_PER_BLOCK}];`,
        `__shared__ jx_index jx_p[${SVD_PAIRS_PER_BLOCK}], jx_q[${SVD_PAIRS_PER_BLOCK}];`,
        `if (threadIdx.x < ${SVD_PAIRS_PER_BLOCK}) {`,
        `  const jx_index kp = (jx_index)blockIdx.x * ${SVD_PAIRS_PER_BLOCK} + threadIdx.x;`,
        `  ${T} rc = ${one}, rs = ${zero};`,
        '  jx_index p = 0, q = 0;',
        '  if (kp < P) {',
        `    ${pair('kp').replace('p = jx_i < jx_j ? jx_i : jx_j, q = jx_i < jx_j ? jx_j : jx_i;', 'jx_p0 = jx_i < jx_j ? jx_i : jx_j, jx_q0 = jx_i < jx_j ? jx_j : jx_i;')}`,
        '    p = jx_p0; q = jx_q0;',
        ...svdPairRotation(spelling(k)).map((l) => `    ${l}`),
        // whether the pair's slot rotated this sweep, for the sweep's test
        `    ROTATED[kp] = (r == 0 ? ${zero} : ROTATED[kp]) + (${T})rotated;`,
        '  }',
        '  jx_cs[threadIdx.x] = rc; jx_sn[threadIdx.x] = rs; jx_p[threadIdx.x] = p; jx_q[threadIdx.x] = q;',
        '}',
        '__syncthreads();',
        // each rotating pair's two columns of G (and of V), consecutive threads on consecutive pairs of a row
        `for (jx_index e = threadIdx.x; e < ${int(SVD_PAIRS_PER_BLOCK * M)}; e += ${threads}) {`,
        `  const jx_index i = e % ${SVD_PAIRS_PER_BLOCK}, a = e / ${SVD_PAIRS_PER_BLOCK};`,
        `  const ${T} cs = jx_cs[i], sn = jx_sn[i];`,
        `  if (sn == ${zero}) continue;`,
        '  const jx_index p = jx_p[i], q = jx_q[i];',
        `  { const ${T} xp = G[a * N + p], xq = G[a * N + q]; G[a * N + p] = cs * xp - sn * xq; G[a * N + q] = sn * xp + cs * xq; }`,
        ...(uv ? [`  if (a < N) { const ${T} xp = V[a * N + p], xq = V[a * N + q]; V[a * N + p] = cs * xp - sn * xq; V[a * N + q] = sn * xp + cs * xq; }`] : []),
        '}',
      ], `blocks of ${SVD_PAIRS_PER_BLOCK} pairs (${ceilDiv(P, SVD_PAIRS_PER_BLOCK)} per matrix): their rotations, a thread per pair summing down the rows, then their columns of G and V by the block's ${threads} threads`);
    }
    case 'svd_test':
      return kernel(1, 32, [
        'if (mine[0] || threadIdx.x != 0) return;',
        'int rotated = 0;',
        `for (jx_index kp = 0; kp < P; kp++) rotated |= ROTATED[kp] != ${zero};`,
        'if (!rotated) mine[0] = 1;',
      ], 'whether any pair rotated this sweep (none: converged)');
    default:
      throw new Error(`render/cuda: the multi-block svd has no stage ${JSON.stringify(stage)}`);
  }
}
