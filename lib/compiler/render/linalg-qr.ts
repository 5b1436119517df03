// lax.linalg.qr for the CUDA target as a render/linalg.ts step spec: one
// thread block per matrix, the block's threads sharing each Householder
// reflector's application across the columns (a column each: its dot product
// with the reflector and its update), __syncthreads between the steps. The
// arithmetic of every column is render/linalg-eig.ts's one-thread qrBody,
// operation for operation (LAPACK's dgeqrf/dlarfg reflectors, Q accumulated
// backwards as dorgqr), so both targets give the same results; each thread
// computes the reflector's scalars itself from memory after a barrier. The C
// target keeps linalg-eig.ts's one-thread-per-matrix loop (the CPU's batch loop
// is the parallel one). Serves the sizes below render/linalg-qr-cuda-blocked.ts's
// stages (the CUDA blocked threshold; every size in batches over 64) with one
// block per matrix (up to 256 threads; the columns beyond are strided over them).
import type { OrthogonalKernel } from '../kernel-ir.js';
import type { LinalgSpec } from './linalg.js';

export function qrSpec(k: OrthogonalKernel, sqrt: (double: boolean, x: string) => string): LinalgSpec {
  const double = k.dtype === 'float64';
  const T = double ? 'double' : 'float';
  const copysign = double ? 'copysign' : 'copysignf';
  const one = double ? '1.0' : '1.0f';
  const zero = double ? '0.0' : '0.0f';
  const qc = k.fullMatrices ? 'm' : '(m < n ? m : n)';
  // one column's share of applying reflector j (stored below the diagonal of work's column j, tau tj) to matrix M
  const apply = (M: string, ld: string) => [
    `${T} dot = ${M}[j * ${ld} + c];`,
    `for (jx_index a = j + 1; a < m; a++) dot += work[a * n + j] * ${M}[a * ${ld} + c];`,
    'dot *= tj;',
    `${M}[j * ${ld} + c] -= dot;`,
    `for (jx_index a = j + 1; a < m; a++) ${M}[a * ${ld} + c] -= dot * work[a * n + j];`,
  ];
  return {
    label: `QR (Householder, geqrf + orgqr${k.fullMatrices ? ', full' : ''}), each reflector applied by the block's threads a column each`,
    params: ['batch', 'm', 'n'],
    buffers: [
      { name: 'q', dtype: k.dtype, output: true }, { name: 'r', dtype: k.dtype, output: true },
      { name: 'work', dtype: k.dtype, output: true }, { name: 'tau', dtype: k.dtype, output: true },
      { name: 'x', dtype: k.dtype, output: false },
    ],
    perMatrix: [`m * ${qc}`, `${qc} * n`, 'm * n', '(m < n ? m : n)', 'm * n'],
    work: 'm * n * (m > n ? m : n)',
    steps: [
      `const jx_index kk = m < n ? m : n, qc = ${qc};`,
      { parallel: [{ name: 'e', from: '0', to: 'm * n' }], body: ['work[e] = x[e];'] },
      'sync',
      {
        loop: 'for (jx_index j = 0; j < kk; j++)',
        steps: [
          `const ${T} alpha = work[j * n + j];`,
          `${T} xnorm2 = ${zero};`,
          'for (jx_index a = j + 1; a < m; a++) xnorm2 += work[a * n + j] * work[a * n + j];',
          // every thread computed the same norm: all of them skip together (H = I)
          `if (xnorm2 == ${zero}) { if (JX_FIRST_THREAD) tau[j] = ${zero}; continue; }`,
          `const ${T} beta = -${copysign}(${sqrt(double, 'alpha * alpha + xnorm2')}, alpha);`,
          `const ${T} tj = (beta - alpha) / beta;`,
          `const ${T} scale = ${one} / (alpha - beta);`,
          'sync',
          { parallel: [{ name: 'a', from: 'j + 1', to: 'm' }], body: ['work[a * n + j] *= scale;'] },
          'if (JX_FIRST_THREAD) { work[j * n + j] = beta; tau[j] = tj; }',
          'sync',
          { parallel: [{ name: 'c', from: 'j + 1', to: 'n' }], body: apply('work', 'n') },
          'sync',
        ],
      },
      { parallel: [{ name: 'a', from: '0', to: 'qc' }, { name: 'c', from: '0', to: 'n' }], body: [`r[a * n + c] = a <= c ? work[a * n + c] : ${zero};`] },
      { parallel: [{ name: 'a', from: '0', to: 'm' }, { name: 'c', from: '0', to: 'qc' }], body: [`q[a * qc + c] = a == c ? ${one} : ${zero};`] },
      'sync',
      // Q = H_0 ... H_{k-1} applied to the identity's first qc columns, last reflector first
      {
        loop: 'for (jx_index j = kk - 1; j >= 0; j--)',
        steps: [
          `const ${T} tj = tau[j];`,
          `if (tj == ${zero}) continue;`,
          { parallel: [{ name: 'c', from: 'j', to: 'qc' }], body: apply('q', 'qc') },
          'sync',
        ],
      },
    ],
  };
}
