// lax.linalg.qr (kernel-ir.ts OrthogonalKernel) on the C target as an
// indexed.ts spec: a loop over the matrices of the batch, each decomposed by
// one thread with Householder reflectors exactly as LAPACK's dgeqrf/dlarfg
// form them (beta = -sign(alpha)·‖x‖, tau = (beta - alpha)/beta, H = I when
// the column below the diagonal is zero), Q accumulated backwards (dorgqr).
// Working storage is in temps the lowering allocates (one slice per matrix).
// Also here: the buffer lists of qr, eigh and svd (the kernels' ABI) and the
// Jacobi rotation render/linalg-jacobi.ts's eigh and svd use.
// Which path serves which sizes:
// - qr: this file on the C target below render/linalg-qr-blocked.ts's blocked
//   size (min(m, n) >= 64), a matrix per thread, OpenMP over the batch; on
//   CUDA render/linalg-qr.ts (a thread block per matrix, its threads a column
//   each of every reflector's application: the same arithmetic as here) below
//   render/linalg-qr-cuda-blocked.ts's stages (lower-qr.ts chooses).
// - eigh and svd: render/linalg-jacobi.ts's round-robin Jacobi: on CUDA at
//   every size, a thread block per matrix (threads: ⌈min(m, n)/2⌉ rounded up
//   to a warp, 32 to 256), or from min(m, n) = 512 in batches of at most 16
//   the same rounds over many blocks (render/linalg-jacobi-cuda.ts, a launch
//   per round, the same bits); on the C target below min(m, n) = EIG_MIN
//   (32), a matrix per thread, OpenMP over the batch (and over a single
//   matrix's updates). From EIG_MIN up the C target takes
//   render/linalg-tridiagonal.ts (tridiagonal / bidiagonal reduction, then
//   QL / QR iteration).
import type { Dialect } from './expr.js';
import type { OrthogonalKernel } from '../kernel-ir.js';
import type { IndexedBuffer, IndexedSpec } from './indexed.js';

/** The buffers a linalg kernel takes, in kernel-ir.ts's order. */
export function orthogonalBuffers(k: OrthogonalKernel): IndexedBuffer[] {
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
  return orthogonalBuffers(k).length;
}

export function linalgSpec(k: OrthogonalKernel, _dialect: Dialect): IndexedSpec {
  const f32 = k.dtype === 'float32';
  const T = f32 ? 'float' : 'double';
  const sqrt = f32 ? 'sqrtf' : 'sqrt';
  const copysign = f32 ? 'copysignf' : 'copysign';
  const one = f32 ? '1.0f' : '1.0';
  const zero = f32 ? '0.0f' : '0.0';
  // eigh and svd are render/linalg-jacobi.ts's on both targets
  if (k.op !== 'qr') throw new Error(`render/linalg-eig: ${k.op} is rendered from render/linalg-jacobi.ts's spec, not this one`);
  const body = qrBody(k, T, sqrt, copysign, one, zero);
  return {
    label: `${k.op} of each matrix of the batch, one thread per matrix`,
    params: [{ name: 'batch' }, { name: 'm' }, { name: 'n' }],
    buffers: orthogonalBuffers(k),
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
export function rotation(T: string, sqrt: string, fabs: string, copysign: string, one: string, app: string, aqq: string, apq: string): string[] {
  return [
    `const ${T} theta = (${aqq} - ${app}) / (2 * ${apq});`,
    // for a huge theta, t = 1/(2 theta) without squaring it
    `const ${T} t = ${fabs}(theta) > (${T})1e18 ? ${one} / (2 * theta) : ${copysign}(${one}, theta) / (${fabs}(theta) + ${sqrt}(theta * theta + ${one}));`,
    `const ${T} cs = ${one} / ${sqrt}(t * t + ${one}), sn = t * cs;`,
  ];
}
