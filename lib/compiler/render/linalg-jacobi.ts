// lax.linalg.eigh and svd as render/linalg.ts step specs, one text for both
// targets: Jacobi methods in a parallel (round-robin, Brent & Luk 1985)
// ordering. The n indices (one more, a dummy, when n is odd) play a
// tournament by the circle method: in each of the n - 1 rounds of a sweep
// they form ⌈n/2⌉ disjoint pairs, so every pair (p, q) meets once a sweep and
// the rotations of one round commute. A round is phases with barriers
// between: each pair's rotation (cos, sin) from the matrix at the round's
// start, then the updates. On CUDA a matrix is a thread block
// (render/linalg-targets.ts), its threads a pair each in the first phase and
// an entry pair each in the updates; the C target runs the same phases in the
// same order on one thread per matrix (OpenMP over the batch), so both give
// the same eigen- and singular vectors, signs included.
//  - eigh: two-sided Jacobi (Golub & Van Loan 8.5.3 / 8.5.4; Numerical
//    Recipes' rotation), each round W <- J^T W (the pairs' rows), then
//    W <- W J and V <- V J (their columns), until the off-diagonal mass is
//    below eps² of the whole; then an ascending selection sort (the first
//    thread) and the columns of V permuted by all threads.
//  - svd: one-sided (Hestenes) Jacobi on the tall orientation G of the matrix,
//    a pair rotated when its columns are not orthogonal to eps, until a sweep
//    rotates none; singular values the column norms sorted descending; U's
//    columns for zero singular values and full_matrices' extra ones completed
//    by Gram-Schmidt on unit vectors (the first thread: each column needs the
//    ones before it).
// Working storage: kernel-ir.ts OrthogonalKernel's temps, the matrix first
// and then the rounds' scratch (rotations, partial sums, the sort's
// permutation, stored as T: exact below 2^24 indices).
import type { OrthogonalKernel } from '../kernel-ir.js';
import type { LinalgSpec, LinalgStep } from './linalg.js';
import { orthogonalBuffers, rotation } from './linalg-eig.js';

/** Scalars the spec spells per dtype. */
interface Spelling { T: string; sqrt: string; fabs: string; copysign: string; eps: string; one: string; zero: string }

export function spelling(k: OrthogonalKernel): Spelling {
  const f32 = k.dtype === 'float32';
  return {
    T: f32 ? 'float' : 'double', sqrt: f32 ? 'sqrtf' : 'sqrt', fabs: f32 ? 'fabsf' : 'fabs', copysign: f32 ? 'copysignf' : 'copysign',
    eps: f32 ? '1.1920929e-07f' : '2.220446049250313e-16', one: f32 ? '1.0f' : '1.0', zero: f32 ? '0.0f' : '0.0',
  };
}

/**
 * Pair `k` of round `r` of the tournament of NP players (NP - 1 is the fixed one; for odd n it is the dummy n), as C
 * declarations of p < q. The round's first phase stores them for the updates (an integer division each is dear).
 */
/** Sweeps before giving up: the one-block loops here and render/linalg-jacobi-cuda.ts's plan of launches. */
export const JACOBI_MAX_SWEEPS = 60;

export function pair(k: string): string {
  return `const jx_index jx_i = ${k} == 0 ? NP - 1 : (r + ${k}) % (NP - 1), jx_j = ${k} == 0 ? r : (r + NP - 1 - ${k}) % (NP - 1), `
    + 'p = jx_i < jx_j ? jx_i : jx_j, q = jx_i < jx_j ? jx_j : jx_i;';
}

/**
 * eigh's convergence sums of pair kp: the off-diagonal and whole squared masses of W's rows 2kp and 2kp + 1, into
 * OFF[kp] and ALL[kp]. The one-block loop and render/linalg-jacobi-cuda.ts's 'norms' stage both run these lines, hence
 * the same sums and the same sweep count.
 */
export function eighPairMass(T: string, zero: string): string[] {
  return [
    `${T} off = ${zero}, all = ${zero};`,
    'for (jx_index a = 2 * kp; a < 2 * kp + 2 && a < n; a++) for (jx_index c = 0; c < n; c++) {',
    `  const ${T} e = W[a * n + c] * W[a * n + c];`,
    '  all += e; if (a != c) off += e;',
    '}',
    'OFF[kp] = off; ALL[kp] = all;',
  ];
}

export function jacobiSpec(k: OrthogonalKernel): LinalgSpec {
  if (k.op === 'qr') throw new Error('render/linalg-jacobi: qr is render/linalg-qr.ts\'s (a Householder kernel, not a Jacobi one)');
  const s = spelling(k);
  const buffers = orthogonalBuffers(k);
  if (k.op === 'eigh') {
    return {
      label: `eigh (two-sided Jacobi, round-robin pairs${k.sort ? ', ascending' : ''}), each round's pairs, rows and columns shared by the block's threads`,
      params: ['batch', 'm', 'n'],
      buffers,
      perMatrix: ['n * n', 'n', eighWork('n'), 'n * n'],
      work: 'n * n * n * 8',
      steps: eighSteps(k, s),
    };
  }
  const N = '(m < n ? m : n)';
  const M = '(m < n ? n : m)';
  const uc = k.fullMatrices ? 'm' : N;
  const vr = k.fullMatrices ? 'n' : N;
  return {
    label: `svd (one-sided Jacobi, round-robin column pairs${k.computeUv ? (k.fullMatrices ? ', full U and V' : ', U and V') : ', values only'}), each round's pairs and columns shared by the block's threads`,
    params: ['batch', 'm', 'n'],
    buffers,
    perMatrix: k.computeUv
      ? [N, `m * ${uc}`, `${vr} * n`, `${M} * ${N}`, svdRot(N), `${M} * ${M}`, 'm * n']
      : [N, `${M} * ${N}`, svdRot(N), 'm * n'],
    work: `${M} * ${N} * ${N} * 8`,
    steps: svdSteps(k, s),
  };
}

/** svd's spec after the sweeps (render/linalg-jacobi-cuda.ts's finish): the buffers and params of jacobiSpec's. */
export function svdFinishSpec(k: OrthogonalKernel): LinalgSpec {
  const spec = jacobiSpec(k);
  return { ...spec, label: spec.label.replace('svd (', 'svd, after multi-block sweeps ('), steps: svdSteps(k, spelling(k), true) };
}

/** eigh's work per matrix: W (n²), then each pair's cos, sin, p, q, off and all (⌈n/2⌉ each), then the sort's permutation (n). */
export const eighWork = (n: string): string => `(${n} * ${n} + 6 * ((${n} + 1) / 2) + ${n})`;
/** svd's rotation storage per matrix: V (N²), then each pair's cos, sin, p, q and rotated (⌈N/2⌉ each), then the sort's permutation (N). */
export const svdRot = (N: string): string => `(${N} * ${N} + 5 * ((${N} + 1) / 2) + ${N})`;

function eighSteps(k: OrthogonalKernel, { T, sqrt, fabs, copysign, eps, one, zero }: Spelling): LinalgStep[] {
  const read = k.lower ? '(a >= c ? x[a * n + c] : x[c * n + a])' : '(a <= c ? x[a * n + c] : x[c * n + a])';
  return [
    'const jx_index P = (n + 1) / 2, NP = 2 * P;',
    `${T} *W = work, *CS = work + n * n, *SN = CS + P, *PP = SN + P, *PQ = PP + P, *OFF = PQ + P, *ALL = OFF + P, *PERM = ALL + P;`,
    { parallel: [{ name: 'a', from: '0', to: 'n' }, { name: 'c', from: '0', to: 'n' }], body: [`W[a * n + c] = ${read};`, `v[a * n + c] = a == c ? ${one} : ${zero};`] },
    'sync',
    {
      loop: `for (int sweep = 0; sweep < ${JACOBI_MAX_SWEEPS}; sweep++)`,
      steps: [
        // the off-diagonal and whole squared masses, two rows per pair, then summed by every thread in the same order
        {
          parallel: [{ name: 'kp', from: '0', to: 'P' }],
          body: eighPairMass(T, zero),
        },
        'sync',
        `${T} off = ${zero}, all = ${zero};`,
        'for (jx_index kp = 0; kp < P; kp++) { off += OFF[kp]; all += ALL[kp]; }',
        `if (!(off > all * ${eps} * ${eps})) break;`,
        {
          loop: 'for (jx_index r = 0; r < NP - 1; r++)',
          steps: [
            {
              parallel: [{ name: 'kp', from: '0', to: 'P' }],
              body: [
                pair('kp'),
                `${T} rc = ${one}, rs = ${zero};`,
                `if (q < n && W[p * n + q] != ${zero}) {`,
                ...rotation(T, sqrt, fabs, copysign, one, 'W[p * n + p]', 'W[q * n + q]', 'W[p * n + q]').map((l) => `  ${l}`),
                '  rc = cs; rs = sn;',
                '}',
                `CS[kp] = rc; SN[kp] = rs; PP[kp] = (${T})p; PQ[kp] = (${T})q;`,
              ],
            },
            'sync',
            // W <- J^T W: each pair's two rows (a pair that does not rotate, the dummy's among them, is skipped)
            {
              parallel: [{ name: 'kp', from: '0', to: 'P' }, { name: 'c', from: '0', to: 'n' }],
              outer: [`const ${T} cs = CS[kp], sn = SN[kp];`, `if (sn == ${zero}) continue;`, 'const jx_index p = (jx_index)PP[kp], q = (jx_index)PQ[kp];'],
              body: [`const ${T} wp = W[p * n + c], wq = W[q * n + c];`, 'W[p * n + c] = cs * wp - sn * wq; W[q * n + c] = sn * wp + cs * wq;'],
            },
            'sync',
            // then W <- W J and V <- V J, row by row; the rotated pair's own off-diagonal entries are exactly zero
            {
              parallel: [{ name: 'a', from: '0', to: 'n' }, { name: 'kp', from: '0', to: 'P' }],
              body: [
                `const ${T} cs = CS[kp], sn = SN[kp];`,
                `if (sn == ${zero}) continue;`,
                'const jx_index p = (jx_index)PP[kp], q = (jx_index)PQ[kp];',
                `const ${T} wp = W[a * n + p], wq = W[a * n + q];`,
                `W[a * n + p] = a == q ? ${zero} : cs * wp - sn * wq; W[a * n + q] = a == p ? ${zero} : sn * wp + cs * wq;`,
                `const ${T} vp = v[a * n + p], vq = v[a * n + q];`,
                'v[a * n + p] = cs * vp - sn * vq; v[a * n + q] = sn * vp + cs * vq;',
              ],
            },
            'sync',
          ],
        },
      ],
    },
    { parallel: [{ name: 'a', from: '0', to: 'n' }], body: ['w[a] = W[a * n + a];'] },
    ...(k.sort ? sortSteps('w', 'n', '<', [
      { parallel: [{ name: 'a', from: '0', to: 'n' }, { name: 'c', from: '0', to: 'n' }], body: ['W[a * n + c] = v[a * n + c];'] },
      'sync',
      { parallel: [{ name: 'a', from: '0', to: 'n' }, { name: 'c', from: '0', to: 'n' }], body: ['v[a * n + c] = W[a * n + (jx_index)PERM[c]];'] },
    ], T) : []),
  ];
}

/**
 * The first thread's selection sort of `values` (n of them) by `before`, recording in PERM where each one came from
 * (the order a swapping selection sort leaves), then `after` once every thread sees it.
 */
function sortSteps(values: string, count: string, before: '<' | '>', after: LinalgStep[], T: string): LinalgStep[] {
  return [
    'sync',
    'if (JX_FIRST_THREAD) {',
    `  for (jx_index a = 0; a < ${count}; a++) PERM[a] = (${T})a;`,
    `  for (jx_index a = 0; a < ${count}; a++) {`,
    '    jx_index best = a;',
    `    for (jx_index c = a + 1; c < ${count}; c++) if (${values}[c] ${before} ${values}[best]) best = c;`,
    '    if (best == a) continue;',
    `    const ${T} e = ${values}[a]; ${values}[a] = ${values}[best]; ${values}[best] = e;`,
    `    const ${T} from = PERM[a]; PERM[a] = PERM[best]; PERM[best] = from;`,
    '  }',
    '}',
    'sync',
    ...after,
  ];
}

/**
 * One-sided Jacobi's rotation of columns p < q of G (M x N; q = N is the odd n's dummy): their norms and inner product
 * summed down the rows in order, and where they are not yet orthogonal to working precision, the rotation into rc, rs
 * (declared by the caller as 1, 0) and `rotated` = 1. The one-block kernel and render/linalg-jacobi-cuda.ts's rounds
 * both run these lines, hence the same bits.
 */
export function svdPairRotation({ T, sqrt, fabs, copysign, eps, one, zero }: Spelling): string[] {
  return [
    'int rotated = 0;',
    'if (q < N) {',
    `  ${T} alpha = ${zero}, beta = ${zero}, gamma = ${zero};`,
    `  for (jx_index a = 0; a < M; a++) { const ${T} gp = G[a * N + p], gq = G[a * N + q]; alpha += gp * gp; beta += gq * gq; gamma += gp * gq; }`,
    `  if (${fabs}(gamma) > ${eps} * ${sqrt}(alpha) * ${sqrt}(beta)) {`,
    ...rotation(T, sqrt, fabs, copysign, one, 'alpha', 'beta', 'gamma').map((l) => `    ${l}`),
    '    rc = cs; rs = sn; rotated = 1;',
    '  }',
    '}',
  ];
}

/**
 * svd's steps; `finish`: only those after the sweeps (norms, sort, U's completion, the outputs), for
 * render/linalg-jacobi-cuda.ts's multi-block sweeps, which leave G in work and V in rot as the loop would.
 */
function svdSteps(k: OrthogonalKernel, spelled: Spelling, finish = false): LinalgStep[] {
  const { T, sqrt, one, zero } = spelled;
  const uv = k.computeUv;
  const all: LinalgStep[] = [
    // the tall orientation G (M x N, M >= N): x itself, or its transpose when it is wide
    'const int wide = m < n;',
    'const jx_index M = wide ? n : m, N = wide ? m : n, P = (N + 1) / 2, NP = 2 * P;',
    `${T} *G = work, *V = rot, *CS = rot + N * N, *SN = CS + P, *PP = SN + P, *PQ = PP + P, *ROTATED = PQ + P, *PERM = ROTATED + P;`,
    '(void)V;',
    { parallel: [{ name: 'a', from: '0', to: 'M' }, { name: 'c', from: '0', to: 'N' }], body: ['G[a * N + c] = wide ? x[c * n + a] : x[a * n + c];'] },
    ...(uv ? [{ parallel: [{ name: 'a', from: '0', to: 'N' }, { name: 'c', from: '0', to: 'N' }], body: [`V[a * N + c] = a == c ? ${one} : ${zero};`] }] : []),
    'sync',
    {
      loop: `for (int sweep = 0; sweep < ${JACOBI_MAX_SWEEPS}; sweep++)`,
      steps: [
        {
          loop: 'for (jx_index r = 0; r < NP - 1; r++)',
          steps: [
            {
              parallel: [{ name: 'kp', from: '0', to: 'P' }],
              body: [
                pair('kp'),
                `${T} rc = ${one}, rs = ${zero};`,
                ...svdPairRotation(spelled),
                `CS[kp] = rc; SN[kp] = rs; PP[kp] = (${T})p; PQ[kp] = (${T})q;`,
                // whether the pair's slot rotated this sweep (rounds are barrier-separated, so any thread may own it)
                `ROTATED[kp] = (r == 0 ? ${zero} : ROTATED[kp]) + (${T})rotated;`,
              ],
            },
            'sync',
            // each rotating pair's two columns of G (and of V), down the rows
            ...[['G', 'M'], ...(uv ? [['V', 'N']] : [])].map(([X, rows]): LinalgStep => ({
              parallel: [{ name: 'kp', from: '0', to: 'P' }, { name: 'a', from: '0', to: rows! }],
              outer: [`const ${T} cs = CS[kp], sn = SN[kp];`, `if (sn == ${zero}) continue;`, 'const jx_index p = (jx_index)PP[kp], q = (jx_index)PQ[kp];'],
              body: [`const ${T} xp = ${X}[a * N + p], xq = ${X}[a * N + q];`, `${X}[a * N + p] = cs * xp - sn * xq; ${X}[a * N + q] = sn * xp + cs * xq;`],
            })),
            'sync',
          ],
        },
        'int rotated = 0;',
        `for (jx_index kp = 0; kp < P; kp++) rotated |= ROTATED[kp] != ${zero};`,
        'if (!rotated) break;',
        // every thread has read ROTATED before the next sweep's first round writes it
        'sync',
      ],
    },
  ];
  // `finish` keeps the tall orientation's names (the first four steps) but not the init and the sweeps
  const steps: LinalgStep[] = finish ? [...all.slice(0, 4)] : all;
  steps.push(
    {
      parallel: [{ name: 'c', from: '0', to: 'N' }],
      body: [
        `${T} norm2 = ${zero};`,
        'for (jx_index a = 0; a < M; a++) norm2 += G[a * N + c] * G[a * N + c];',
        `s[c] = ${sqrt}(norm2);`,
      ],
    },
  );
  // descending; the columns of G and V are read through the permutation
  if (!uv) return [...steps, ...sortSteps('s', 'N', '>', [], T)];
  return [...steps, ...sortSteps('s', 'N', '>', [
    // B (M x bc): the left singular vectors of G, completed to bc orthonormal columns
    `const jx_index bc = ${k.fullMatrices ? 'M' : 'N'};`,
    `${T} *B = basis;`,
    { parallel: [{ name: 'c', from: '0', to: 'N' }, { name: 'a', from: '0', to: 'M' }], body: [`B[a * M + c] = s[c] > ${zero} ? G[a * N + (jx_index)PERM[c]] / s[c] : ${zero};`] },
    'sync',
    'if (JX_FIRST_THREAD) {',
    '  jx_index candidate = 0;',
    // kept rolled on CUDA: unrolled at the baked sizes, this one thread's loops took the registers of the whole kernel
    '  JX_NO_UNROLL',
    '  for (jx_index c = 0; c < bc; c++) {',
    `    if (c < N && s[c] > ${zero}) continue;`,
    '    JX_NO_UNROLL',
    '    for (; candidate < M; candidate++) {',
    '      JX_NO_UNROLL',
    `      for (jx_index a = 0; a < M; a++) B[a * M + c] = a == candidate ? ${one} : ${zero};`,
    // twice is enough (Kahan-Parlett): project out every filled column
    '      JX_NO_UNROLL',
    '      for (int pass = 0; pass < 2; pass++) for (jx_index o = 0; o < bc; o++) {',
    `        if (o == c || (o < N ? !(s[o] > ${zero}) && o > c : o > c)) continue;`,
    `        ${T} dot = ${zero};`,
    '        JX_NO_UNROLL',
    '        for (jx_index a = 0; a < M; a++) dot += B[a * M + o] * B[a * M + c];',
    '        JX_NO_UNROLL',
    '        for (jx_index a = 0; a < M; a++) B[a * M + c] -= dot * B[a * M + o];',
    '      }',
    `      ${T} norm2 = ${zero};`,
    '      JX_NO_UNROLL',
    '      for (jx_index a = 0; a < M; a++) norm2 += B[a * M + c] * B[a * M + c];',
    `      if (norm2 > (${T})0.25) { const ${T} inv = ${one} / ${sqrt}(norm2); for (jx_index a = 0; a < M; a++) B[a * M + c] *= inv; candidate++; break; }`,
    '    }',
    '  }',
    '}',
    'sync',
    // x = G' (wide: x^T = G = B S V^T, so u = V and vt = B^T)
    `const jx_index uc = ${k.fullMatrices ? 'm' : 'N'}, vr = ${k.fullMatrices ? 'n' : 'N'};`,
    { parallel: [{ name: 'a', from: '0', to: 'm' }, { name: 'c', from: '0', to: 'uc' }], body: ['u[a * uc + c] = wide ? V[a * N + (jx_index)PERM[c]] : B[a * M + c];'] },
    { parallel: [{ name: 'a', from: '0', to: 'vr' }, { name: 'c', from: '0', to: 'n' }], body: ['vt[a * n + c] = wide ? B[c * M + a] : V[c * N + (jx_index)PERM[a]];'] },
  ], T)];
}
