// The linear-algebra kernels (kernel-ir.ts LinalgKernel: cholesky,
// triangular_solve, lu) written once for both targets, as LAPACK's unblocked
// right-looking algorithms (potf2, trsm's substitution, getf2) over one
// matrix. A spec is a list of steps: plain C statements, sequential loops,
// `parallel` loops whose iterations are independent, and barriers. The C
// target runs a matrix on one thread (the batch loop is the OpenMP loop) and
// renders a parallel loop as nested loops, the last index innermost, so the
// rank-1 updates stream along contiguous rows; barriers vanish. The CUDA
// target gives each matrix a thread block: a parallel loop is flattened and
// strided over the block's threads, a barrier is __syncthreads. Every thread
// keeps the scalars a step needs (the pivot, the failure flag) in registers,
// computed from memory after a barrier, so no shared memory is needed.
import type { DType } from '../../core/dtype.js';
import type { LinalgKernel } from '../kernel-ir.js';

/** An independent loop nest: dims [variable, first, end]; `cudaEnd` bounds a dim whose end depends on an outer one. */
export interface ParallelLoop {
  parallel: { name: string; from: string; to: string; cudaTo?: string }[];
  /** statements that read only the first dim's variable: C hoists them out of the inner loop (so it vectorizes) */
  outer?: string[];
  body: string[];
}

export interface SequentialLoop {
  /** the header, e.g. `for (jx_index j = 0; j < n; j++)` */
  loop: string;
  steps: LinalgStep[];
}

/** A statement, a loop, or 'sync' (every thread of the matrix has finished the steps before). */
export type LinalgStep = string | ParallelLoop | SequentialLoop | 'sync';

export interface LinalgSpec {
  label: string;
  /** run-time params in kernel-ir.ts order; the first is the batch */
  params: string[];
  buffers: { name: string; dtype: DType; output: boolean }[];
  /** each buffer's elements per matrix (an expression over the params) */
  perMatrix: string[];
  /** work per matrix, for the C target's OpenMP threshold */
  work: string;
  steps: LinalgStep[];
}

/** Target spellings the spec needs. */
export interface LinalgTarget {
  sqrt: (double: boolean, x: string) => string;
  nan: string;
}

export function linalgSpec(k: LinalgKernel, target: LinalgTarget): LinalgSpec {
  const double = k.dtype === 'float64';
  const t = double ? 'double' : 'float';
  const abs = (x: string) => `${double ? 'fabs' : 'fabsf'}(${x})`;
  // LAPACK's safe minimum: getf2 multiplies by the reciprocal of a pivot at least this large and divides otherwise
  const sfmin = double ? '2.2250738585072014e-308' : '1.17549435e-38f';
  switch (k.op) {
    case 'cholesky':
      return {
        label: 'Cholesky factor (potf2, right-looking)',
        params: ['batch', 'n'],
        buffers: [{ name: 'out', dtype: k.dtype, output: true }, { name: 'in', dtype: k.dtype, output: false }],
        perMatrix: ['n * n', 'n * n'],
        work: 'n * n * n',
        steps: [
          { parallel: [{ name: 'i', from: '0', to: 'n' }, { name: 'c', from: '0', to: 'n' }], body: ['out[i * n + c] = c <= i ? in[i * n + c] : 0;'] },
          'sync',
          'int failed = 0;',
          {
            loop: 'for (jx_index j = 0; j < n; j++)',
            steps: [
              `const ${t} d = out[j * n + j];`,
              // potf2 stops at a diagonal that is not positive (or NaN); JAX then reports the whole matrix as NaN
              'if (!(d > 0)) failed = 1;',
              `const ${t} ljj = ${target.sqrt(double, 'd')};`,
              `const ${t} rinv = (${t})1 / ljj;`,
              'sync',
              { parallel: [{ name: 'i', from: 'j', to: 'n' }], body: ['out[i * n + j] = i == j ? ljj : out[i * n + j] * rinv;'] },
              'sync',
              {
                parallel: [{ name: 'i', from: 'j + 1', to: 'n' }, { name: 'c', from: 'j + 1', to: 'i + 1', cudaTo: 'n' }],
                outer: [`const ${t} lij = out[i * n + j];`],
                body: ['out[i * n + c] -= lij * out[c * n + j];'],
              },
              'sync',
            ],
          },
          { loop: 'if (failed)', steps: [{ parallel: [{ name: 'i', from: '0', to: 'n' }, { name: 'c', from: '0', to: 'n' }], body: [`out[i * n + c] = (${t})${target.nan};`] }] },
        ],
      };
    case 'triangular_solve': {
      // op(a) x = b, or x op(a) = b solved as op(a)^T x^T = b^T: a system M x = b over `rows` unknowns per column,
      // M(i, c) read from a directly or transposed; forward substitution when M is lower triangular
      const transposed = !!k.transposeA !== !k.leftSide;
      const forward = !!k.lower !== transposed;
      const M = (i: string, c: string) => (transposed ? `a[(${c}) * r + (${i})]` : `a[(${i}) * r + (${c})]`);
      const X = (i: string, c: string) => (k.leftSide ? `out[(${i}) * n + (${c})]` : `out[(${c}) * n + (${i})]`);
      const below = forward ? { from: 'j + 1', to: 'r' } : { from: '0', to: 'j' };
      return {
        label: `triangular solve (${k.leftSide ? 'op(a) x = b' : 'x op(a) = b'}, ${forward ? 'forward' : 'backward'} substitution)`,
        params: ['batch', 'm', 'n'],
        buffers: [
          { name: 'out', dtype: k.dtype, output: true }, { name: 'a', dtype: k.dtype, output: false }, { name: 'b', dtype: k.dtype, output: false },
        ],
        perMatrix: ['m * n', k.leftSide ? 'm * m' : 'n * n', 'm * n'],
        work: `m * n * ${k.leftSide ? 'm' : 'n'}`,
        steps: [
          `const jx_index r = ${k.leftSide ? 'm' : 'n'}, cols = ${k.leftSide ? 'n' : 'm'};`,
          { parallel: [{ name: 'i', from: '0', to: 'm' }, { name: 'c', from: '0', to: 'n' }], body: ['out[i * n + c] = b[i * n + c];'] },
          'sync',
          {
            loop: forward ? 'for (jx_index j = 0; j < r; j++)' : 'for (jx_index j = r - 1; j >= 0; j--)',
            steps: [
              // BLAS trsm kernels multiply by the diagonal's reciprocal (so a zero pivot gives inf, and 0 * inf = NaN)
              ...(k.unitDiagonal ? [] : [
                `const ${t} rinv = (${t})1 / ${M('j', 'j')};`,
                { parallel: [{ name: 'c', from: '0', to: 'cols' }], body: [`${X('j', 'c')} *= rinv;`] },
                'sync' as const,
              ]),
              { parallel: [{ name: 'i', from: below.from, to: below.to }, { name: 'c', from: '0', to: 'cols' }], outer: [`const ${t} mij = ${M('i', 'j')};`], body: [`${X('i', 'c')} -= mij * ${X('j', 'c')};`] },
              'sync',
            ],
          },
        ],
      };
    }
    case 'lu':
      return {
        label: 'LU with partial pivoting (getf2, right-looking)',
        params: ['batch', 'm', 'n'],
        buffers: [
          { name: 'lu', dtype: k.dtype, output: true }, { name: 'pivots', dtype: 'int32', output: true },
          { name: 'permutation', dtype: 'int32', output: true }, { name: 'in', dtype: k.dtype, output: false },
        ],
        perMatrix: ['m * n', '(m < n ? m : n)', 'm', 'm * n'],
        work: 'm * n * (m < n ? m : n)',
        steps: [
          'const jx_index kmax = m < n ? m : n;',
          { parallel: [{ name: 'i', from: '0', to: 'm' }, { name: 'c', from: '0', to: 'n' }], body: ['lu[i * n + c] = in[i * n + c];'] },
          'sync',
          {
            loop: 'for (jx_index j = 0; j < kmax; j++)',
            steps: [
              // every thread finds the pivot (BLAS i?amax: the first largest magnitude) before any row moves
              'jx_index p = j;',
              `${t} best = ${abs('lu[j * n + j]')};`,
              `for (jx_index i = j + 1; i < m; i++) { const ${t} v = ${abs('lu[i * n + j]')}; if (v > best) { best = v; p = i; } }`,
              'if (JX_FIRST_THREAD) pivots[j] = (jx_i32)p;',
              'sync',
              { loop: 'if (p != j)', steps: [{ parallel: [{ name: 'c', from: '0', to: 'n' }], body: [`const ${t} s = lu[j * n + c];`, 'lu[j * n + c] = lu[p * n + c];', 'lu[p * n + c] = s;'] }] },
              'sync',
              `const ${t} pivot = lu[j * n + j];`,
              `const ${t} rinv = (${t})1 / pivot;`,
              `const int by_reciprocal = ${abs('pivot')} >= ${sfmin};`,
              {
                loop: 'if (pivot != 0)',
                steps: [{ parallel: [{ name: 'i', from: 'j + 1', to: 'm' }], body: ['lu[i * n + j] = by_reciprocal ? lu[i * n + j] * rinv : lu[i * n + j] / pivot;'] }],
              },
              'sync',
              { parallel: [{ name: 'i', from: 'j + 1', to: 'm' }, { name: 'c', from: 'j + 1', to: 'n' }], outer: [`const ${t} lij = lu[i * n + j];`], body: ['lu[i * n + c] -= lij * lu[j * n + c];'] },
              'sync',
            ],
          },
          {
            loop: 'if (JX_FIRST_THREAD)',
            steps: [
              'for (jx_index i = 0; i < m; i++) permutation[i] = (jx_i32)i;',
              'for (jx_index i = 0; i < kmax; i++) { const jx_i32 s = permutation[i]; permutation[i] = permutation[pivots[i]]; permutation[pivots[i]] = s; }',
            ],
          },
        ],
      };
  }
}
