// lax.linalg.qr, eigh and svd (kernel-ir.ts OrthogonalKernel) as indexed.ts specs,
// so the C and CUDA targets render them from one text: a loop over the
// matrices of the batch, each decomposed by one thread with the classic
// serial algorithms that are accurate without pivoting heuristics:
//  - qr: Householder reflectors exactly as LAPACK's dgeqrf/dlarfg form them
//    (beta = -sign(alpha)·‖x‖, tau = (beta - alpha)/beta, H = I when the
//    column below the diagonal is zero), Q accumulated backwards (dorgqr);
//  - eigh: cyclic Jacobi (Golub & Van Loan 8.5; Numerical Recipes' rotation)
//    until the off-diagonal mass is below eps² of the whole, then an
//    ascending selection sort of the eigenpairs;
//  - svd: one-sided (Hestenes) Jacobi on the tall orientation of the matrix
//    until every column pair is orthogonal to eps, singular values the column
//    norms sorted descending; columns of U for zero singular values and the
//    extra columns of full_matrices completed by Gram-Schmidt on unit vectors.
// Working storage is in temps the lowering allocates (one slice per matrix).
// Which path serves which sizes: the C target runs these at every size, a
// matrix per thread, OpenMP over the batch. On CUDA, qr goes to
// render/linalg-qr.ts (a thread block per matrix at every size, its threads a
// column each of every reflector's application: the same arithmetic as here);
// eigh and svd are still one thread per matrix at every size (a block per
// matrix with parallel-ordered Jacobi rotations is issue 15's open part).
import type { Dialect } from './expr.js';
import type { OrthogonalKernel } from '../kernel-ir.js';
import type { IndexedBuffer, IndexedSpec } from './indexed.js';

/** The buffers a linalg kernel takes, in kernel-ir.ts's order. */
function buffers(k: OrthogonalKernel): IndexedBuffer[] {
  const b = (name: string, output: boolean): IndexedBuffer => ({ name, dtype: k.dtype, output });
  switch (k.op) {
    case 'qr': return [b('q', true), b('r', true), b('work', true), b('tau', true), b('x', false)];
    case 'eigh': return [b('v', true), b('w', true), b('work', true), b('x', false)];
    case 'svd':
      return k.computeUv
        ? [b('s', true), b('u', true), b('vt', true), b('work', true), b('rot', true), b('basis', true), b('x', false)]
        : [b('s', true), b('work', true), b('rot', true), b('x', false)];
  }
}

export function linalgBufferCount(k: OrthogonalKernel): number {
  return buffers(k).length;
}

export function linalgSpec(k: OrthogonalKernel, _dialect: Dialect): IndexedSpec {
  const f32 = k.dtype === 'float32';
  const T = f32 ? 'float' : 'double';
  const sqrt = f32 ? 'sqrtf' : 'sqrt';
  const fabs = f32 ? 'fabsf' : 'fabs';
  const copysign = f32 ? 'copysignf' : 'copysign';
  const eps = f32 ? '1.1920929e-07f' : '2.220446049250313e-16';
  const one = f32 ? '1.0f' : '1.0';
  const zero = f32 ? '0.0f' : '0.0';
  const body = k.op === 'qr' ? qrBody(k, T, sqrt, copysign, one, zero)
    : k.op === 'eigh' ? eighBody(k, T, sqrt, fabs, copysign, eps, one, zero)
    : svdBody(k, T, sqrt, fabs, copysign, eps, one, zero);
  return {
    label: `${k.op} of each matrix of the batch, one thread per matrix`,
    params: [{ name: 'batch' }, { name: 'm' }, { name: 'n' }],
    buffers: buffers(k),
    setup: [],
    loops: [{ count: ['batch'], body, workPerElement: '(m * n * (m > n ? m : n) * 8)' }],
  };
}

function qrBody(k: OrthogonalKernel, T: string, sqrt: string, copysign: string, one: string, zero: string): string[] {
  return [
    'const jx_index kk = m < n ? m : n, qc = ' + (k.fullMatrices ? 'm' : 'kk') + ';',
    `const ${T} *A = x + i * m * n;`,
    `${T} *W = work + i * m * n, *TAU = tau + i * kk, *Q = q + i * m * qc, *R = r + i * qc * n;`,
    'for (jx_index e = 0; e < m * n; e++) W[e] = A[e];',
    'for (jx_index j = 0; j < kk; j++) {',
    `  const ${T} alpha = W[j * n + j];`,
    `  ${T} xnorm2 = ${zero};`,
    '  for (jx_index a = j + 1; a < m; a++) xnorm2 += W[a * n + j] * W[a * n + j];',
    `  if (xnorm2 == ${zero}) { TAU[j] = ${zero}; continue; }`,
    `  const ${T} beta = -${copysign}(${sqrt}(alpha * alpha + xnorm2), alpha);`,
    '  TAU[j] = (beta - alpha) / beta;',
    `  const ${T} scale = ${one} / (alpha - beta);`,
    '  for (jx_index a = j + 1; a < m; a++) W[a * n + j] *= scale;',
    '  W[j * n + j] = beta;',
    '  for (jx_index c = j + 1; c < n; c++) {',
    `    ${T} dot = W[j * n + c];`,
    '    for (jx_index a = j + 1; a < m; a++) dot += W[a * n + j] * W[a * n + c];',
    '    dot *= TAU[j];',
    '    W[j * n + c] -= dot;',
    '    for (jx_index a = j + 1; a < m; a++) W[a * n + c] -= dot * W[a * n + j];',
    '  }',
    '}',
    `for (jx_index a = 0; a < qc; a++) for (jx_index c = 0; c < n; c++) R[a * n + c] = a <= c ? W[a * n + c] : ${zero};`,
    `for (jx_index a = 0; a < m; a++) for (jx_index c = 0; c < qc; c++) Q[a * qc + c] = a == c ? ${one} : ${zero};`,
    // Q = H_0 ... H_{k-1} applied to the identity's first qc columns, last reflector first
    'for (jx_index j = kk - 1; j >= 0; j--) {',
    `  if (TAU[j] == ${zero}) continue;`,
    '  for (jx_index c = j; c < qc; c++) {',
    `    ${T} dot = Q[j * qc + c];`,
    '    for (jx_index a = j + 1; a < m; a++) dot += W[a * n + j] * Q[a * qc + c];',
    '    dot *= TAU[j];',
    '    Q[j * qc + c] -= dot;',
    '    for (jx_index a = j + 1; a < m; a++) Q[a * qc + c] -= dot * W[a * n + j];',
    '  }',
    '}',
  ];
}

/** The rotation (c, s) that zeroes the off-diagonal entry of [[app, apq], [apq, aqq]] (Numerical Recipes' jacobi). */
function rotation(T: string, sqrt: string, fabs: string, copysign: string, one: string, app: string, aqq: string, apq: string): string[] {
  return [
    `const ${T} theta = (${aqq} - ${app}) / (2 * ${apq});`,
    // for a huge theta, t = 1/(2 theta) without squaring it
    `const ${T} t = ${fabs}(theta) > (${T})1e18 ? ${one} / (2 * theta) : ${copysign}(${one}, theta) / (${fabs}(theta) + ${sqrt}(theta * theta + ${one}));`,
    `const ${T} cs = ${one} / ${sqrt}(t * t + ${one}), sn = t * cs;`,
  ];
}

function eighBody(k: OrthogonalKernel, T: string, sqrt: string, fabs: string, copysign: string, eps: string, one: string, zero: string): string[] {
  const read = k.lower ? '(a >= c ? A[a * n + c] : A[c * n + a])' : '(a <= c ? A[a * n + c] : A[c * n + a])';
  return [
    `const ${T} *A = x + i * n * n;`,
    `${T} *W = work + i * n * n, *V = v + i * n * n, *E = w + i * n;`,
    `for (jx_index a = 0; a < n; a++) for (jx_index c = 0; c < n; c++) { W[a * n + c] = ${read}; V[a * n + c] = a == c ? ${one} : ${zero}; }`,
    'for (int sweep = 0; sweep < 60; sweep++) {',
    `  ${T} off = ${zero}, all = ${zero};`,
    '  for (jx_index a = 0; a < n; a++) for (jx_index c = 0; c < n; c++) { const ' + T + ' e = W[a * n + c] * W[a * n + c]; all += e; if (a != c) off += e; }',
    `  if (!(off > all * ${eps} * ${eps})) break;`,
    '  for (jx_index p = 0; p < n - 1; p++) for (jx_index qq = p + 1; qq < n; qq++) {',
    `    const ${T} apq = W[p * n + qq];`,
    `    if (apq == ${zero}) continue;`,
    ...rotation(T, sqrt, fabs, copysign, one, 'W[p * n + p]', 'W[qq * n + qq]', 'apq').map((l) => `    ${l}`),
    '    for (jx_index a = 0; a < n; a++) {',
    `      const ${T} ap = W[a * n + p], aq = W[a * n + qq];`,
    '      W[a * n + p] = cs * ap - sn * aq; W[a * n + qq] = sn * ap + cs * aq;',
    '    }',
    '    for (jx_index a = 0; a < n; a++) {',
    `      const ${T} pa = W[p * n + a], qa = W[qq * n + a];`,
    '      W[p * n + a] = cs * pa - sn * qa; W[qq * n + a] = sn * pa + cs * qa;',
    `      const ${T} vp = V[a * n + p], vq = V[a * n + qq];`,
    '      V[a * n + p] = cs * vp - sn * vq; V[a * n + qq] = sn * vp + cs * vq;',
    '    }',
    `    W[p * n + qq] = ${zero}; W[qq * n + p] = ${zero};`,
    '  }',
    '}',
    'for (jx_index a = 0; a < n; a++) E[a] = W[a * n + a];',
    ...(k.sort ? [
      'for (jx_index a = 0; a < n; a++) {',
      '  jx_index best = a;',
      '  for (jx_index c = a + 1; c < n; c++) if (E[c] < E[best]) best = c;',
      '  if (best == a) continue;',
      `  const ${T} e = E[a]; E[a] = E[best]; E[best] = e;`,
      `  for (jx_index c = 0; c < n; c++) { const ${T} t = V[c * n + a]; V[c * n + a] = V[c * n + best]; V[c * n + best] = t; }`,
      '}',
    ] : []),
  ];
}

function svdBody(k: OrthogonalKernel, T: string, sqrt: string, fabs: string, copysign: string, eps: string, one: string, zero: string): string[] {
  const lines = [
    // the tall orientation G (M x N, M >= N): x itself, or its transpose when it is wide
    'const int wide = m < n;',
    'const jx_index M = wide ? n : m, N = wide ? m : n;',
    `const ${T} *A = x + i * m * n;`,
    `${T} *G = work + i * M * N, *V = rot + i * N * N, *S = s + i * N;`,
    'for (jx_index a = 0; a < M; a++) for (jx_index c = 0; c < N; c++) G[a * N + c] = wide ? A[c * n + a] : A[a * n + c];',
    `for (jx_index a = 0; a < N; a++) for (jx_index c = 0; c < N; c++) V[a * N + c] = a == c ? ${one} : ${zero};`,
    'for (int sweep = 0; sweep < 60; sweep++) {',
    '  int rotated = 0;',
    '  for (jx_index p = 0; p < N - 1; p++) for (jx_index qq = p + 1; qq < N; qq++) {',
    `    ${T} alpha = ${zero}, beta = ${zero}, gamma = ${zero};`,
    '    for (jx_index a = 0; a < M; a++) { const ' + T + ' gp = G[a * N + p], gq = G[a * N + qq]; alpha += gp * gp; beta += gq * gq; gamma += gp * gq; }',
    `    if (!(${fabs}(gamma) > ${eps} * ${sqrt}(alpha) * ${sqrt}(beta))) continue;`,
    '    rotated = 1;',
    ...rotation(T, sqrt, fabs, copysign, one, 'alpha', 'beta', 'gamma').map((l) => `    ${l}`),
    '    for (jx_index a = 0; a < M; a++) {',
    `      const ${T} gp = G[a * N + p], gq = G[a * N + qq];`,
    '      G[a * N + p] = cs * gp - sn * gq; G[a * N + qq] = sn * gp + cs * gq;',
    '    }',
    '    for (jx_index a = 0; a < N; a++) {',
    `      const ${T} vp = V[a * N + p], vq = V[a * N + qq];`,
    '      V[a * N + p] = cs * vp - sn * vq; V[a * N + qq] = sn * vp + cs * vq;',
    '    }',
    '  }',
    '  if (!rotated) break;',
    '}',
    'for (jx_index c = 0; c < N; c++) {',
    `  ${T} norm2 = ${zero};`,
    '  for (jx_index a = 0; a < M; a++) norm2 += G[a * N + c] * G[a * N + c];',
    `  S[c] = ${sqrt}(norm2);`,
    '}',
    // descending, columns of G and V moving with their singular values
    'for (jx_index a = 0; a < N; a++) {',
    '  jx_index best = a;',
    '  for (jx_index c = a + 1; c < N; c++) if (S[c] > S[best]) best = c;',
    '  if (best == a) continue;',
    `  const ${T} e = S[a]; S[a] = S[best]; S[best] = e;`,
    `  for (jx_index c = 0; c < M; c++) { const ${T} t = G[c * N + a]; G[c * N + a] = G[c * N + best]; G[c * N + best] = t; }`,
    `  for (jx_index c = 0; c < N; c++) { const ${T} t = V[c * N + a]; V[c * N + a] = V[c * N + best]; V[c * N + best] = t; }`,
    '}',
  ];
  if (!k.computeUv) return lines;
  return [
    ...lines,
    // B (M x B): the left singular vectors of G, completed to `bc` orthonormal columns
    `const jx_index bc = ${k.fullMatrices ? 'M' : 'N'};`,
    `${T} *B = basis + i * M * M;`,
    'for (jx_index c = 0; c < N; c++) for (jx_index a = 0; a < M; a++) B[a * M + c] = S[c] > ' + zero + ' ? G[a * N + c] / S[c] : ' + zero + ';',
    'jx_index candidate = 0;',
    'for (jx_index c = 0; c < bc; c++) {',
    `  if (c < N && S[c] > ${zero}) continue;`,
    '  for (; candidate < M; candidate++) {',
    `    for (jx_index a = 0; a < M; a++) B[a * M + c] = a == candidate ? ${one} : ${zero};`,
    // twice is enough (Kahan-Parlett): project out every filled column
    '    for (int pass = 0; pass < 2; pass++) for (jx_index o = 0; o < bc; o++) {',
    `      if (o == c || (o < N ? !(S[o] > ${zero}) && o > c : o > c)) continue;`,
    `      ${T} dot = ${zero};`,
    '      for (jx_index a = 0; a < M; a++) dot += B[a * M + o] * B[a * M + c];',
    '      for (jx_index a = 0; a < M; a++) B[a * M + c] -= dot * B[a * M + o];',
    '    }',
    `    ${T} norm2 = ${zero};`,
    '    for (jx_index a = 0; a < M; a++) norm2 += B[a * M + c] * B[a * M + c];',
    `    if (norm2 > (${T})0.25) { const ${T} inv = ${one} / ${sqrt}(norm2); for (jx_index a = 0; a < M; a++) B[a * M + c] *= inv; candidate++; break; }`,
    '  }',
    '}',
    // x = G' (wide: x^T = G = B S V^T, so u = V and vt = B^T)
    `const jx_index uc = ${k.fullMatrices ? 'm' : '(m < n ? m : n)'}, vr = ${k.fullMatrices ? 'n' : '(m < n ? m : n)'};`,
    `${T} *U = u + i * m * uc, *VT = vt + i * vr * n;`,
    'for (jx_index a = 0; a < m; a++) for (jx_index c = 0; c < uc; c++) U[a * uc + c] = wide ? V[a * N + c] : B[a * M + c];',
    'for (jx_index a = 0; a < vr; a++) for (jx_index c = 0; c < n; c++) VT[a * n + c] = wide ? B[c * M + a] : V[c * N + a];',
  ];
}
