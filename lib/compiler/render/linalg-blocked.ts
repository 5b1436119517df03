// The CPU's blocked linear algebra for large matrices (LAPACK's getrf, potrf
// and a blocked trsm), beside render/linalg.ts's unblocked specs, which keep
// small matrices and the CUDA target. Each factorization goes a block of NB
// columns at a time: the unblocked algorithm on a narrow panel (same pivot
// rule, the first largest magnitude; same reciprocal scalings), a triangular
// solve of the row block, and the trailing update as one GEMM (jaxon_gemm.h's
// packed kernel for float32 LU and Cholesky, with A packed negated; a
// row-streaming loop for float64 and for the triangular solves, whose eight
// layouts would each pay the packed kernel's compile), split over the OpenMP
// threads when there is one matrix. Sizes:
// linalgC (render/linalg-targets.ts) takes this path for float32 and float64
// from BLOCKED_MIN rows/columns up (LU's min(m, n), Cholesky's n, a triangular
// solve's unknowns: blocked with at least BLOCKED_MIN_COLUMNS right-hand sides,
// row-oriented substitution with fewer where a's rows are M's rows); below it
// the unblocked loops are as fast (measured: bench/RESULTS.md).
import type { LinalgKernel } from '../kernel-ir.js';

/** Columns per block: a panel of NB columns, GEMM updates of depth NB. */
export const NB = 64;
/** The smallest size that takes the blocked path (LU: min(m, n); Cholesky: n; triangular solve: the unknowns). */
export const BLOCKED_MIN = 128;
/** A triangular solve is blocked only with this many right-hand sides (one column is a matrix-vector product). */
export const BLOCKED_MIN_COLUMNS = 16;

/** Whether a kernel has a blocked path (the float dtypes). */
export function hasBlocked(k: LinalgKernel): boolean {
  return k.dtype === 'float32' || k.dtype === 'float64';
}

/** The condition (over the kernel's params) under which a matrix takes the blocked path. */
export function blockedWhen(k: LinalgKernel): string {
  switch (k.op) {
    case 'lu': return `(m < n ? m : n) >= ${BLOCKED_MIN}`;
    case 'cholesky': return `n >= ${BLOCKED_MIN}`;
    case 'triangular_solve': {
      // few right-hand sides: a row-oriented substitution where M's rows are a's rows (see linalgBlockedC)
      const [r, cols] = k.leftSide ? ['m', 'n'] : ['n', 'm'];
      return `${r} >= ${BLOCKED_MIN}${triangularTransposed(k) ? ` && ${cols} >= ${BLOCKED_MIN_COLUMNS}` : ''}`;
    }
  }
}

/** Whether a triangular solve's system matrix M is a transposed (M(i, j) = a[j][i]). */
const triangularTransposed = (k: LinalgKernel) => !!k.transposeA !== !k.leftSide;

/**
 * The trailing-update GEMM, C -= A . B, every thread on it when `par`: jaxon_gemm.h's packed kernel (`packed`, float
 * only) or a row-streaming loop. The packed kernel costs about a second of C compile per kernel, so only LU and
 * Cholesky take it; the triangular solves (eight layouts, each a kernel) take the loop.
 */
function gemmSub(name: string, double: boolean, packed: boolean): string {
  const t = double ? 'double' : 'float';
  const signature = `static void ${name}_sub(jx_index M, jx_index N, jx_index K, const ${t} *A, jx_index sam, jx_index sak, const ${t} *B, jx_index sbk, jx_index sbn, ${t} *C, jx_index ldc, int par)`;
  if (packed) {
    return `${signature} {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (par && M * N * K > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel
    {
      jx_sgemm_buffers w;
      jx_sgemm_buffers_alloc(&w, M, N, K);
      const jx_sgemm_split s = jx_sgemm_plan(1, M, N, omp_get_num_threads());
      #pragma omp for schedule(static)
      for (int64_t it = 0; it < s.items; it++) {
        int64_t ib, m_lo, m_hi, n_lo, n_hi;
        jx_sgemm_item(s, it, M, N, &ib, &m_lo, &m_hi, &n_lo, &n_hi);
        jx_sgemm_sub_f32(K, A, sam, sak, B, sbk, sbn, C, ldc, m_lo, m_hi, n_lo, n_hi, &w);
      }
      jx_sgemm_buffers_free(&w);
    }
  } else {
    jx_sgemm_buffers w;
    jx_sgemm_buffers_alloc(&w, M, N, K);
    jx_sgemm_sub_f32(K, A, sam, sak, B, sbk, sbn, C, ldc, 0, M, 0, N, &w);
    jx_sgemm_buffers_free(&w);
  }
}`;
  }
  // a row of C at a time stays in L1 while the K rows of B stream past (or dot products along k when B is
  // stored transposed, as in Cholesky's L21 L21^T)
  return `static void ${name}_sub_row(jx_index i, jx_index N, jx_index K, const ${t} *A, jx_index sam, jx_index sak, const ${t} *B, jx_index sbk, jx_index sbn, ${t} *C, jx_index ldc) {
  ${t} *restrict c = C + i * ldc;
  if (sbn == 1) {
    for (jx_index k = 0; k < K; k++) {
      const ${t} a = A[i * sam + k * sak];
      const ${t} *restrict b = B + k * sbk;
      for (jx_index j = 0; j < N; j++) c[j] -= a * b[j];
    }
  } else if (sbk == 1 && sak == 1) {
    const ${t} *restrict a = A + i * sam;
    for (jx_index j = 0; j < N; j++) {
      const ${t} *restrict b = B + j * sbn;
      ${t} s = 0;
      for (jx_index k = 0; k < K; k++) s += a[k] * b[k];
      c[j] -= s;
    }
  } else {
    for (jx_index k = 0; k < K; k++) {
      const ${t} a = A[i * sam + k * sak];
      for (jx_index j = 0; j < N; j++) c[j] -= a * B[k * sbk + j * sbn];
    }
  }
}

${signature} {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (par && M * N * K > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(static)
    for (jx_index i = 0; i < M; i++) ${name}_sub_row(i, N, K, A, sam, sak, B, sbk, sbn, C, ldc);
  } else {
    for (jx_index i = 0; i < M; i++) ${name}_sub_row(i, N, K, A, sam, sak, B, sbk, sbn, C, ldc);
  }
}`;
}

/** A parallel-when-large loop over column chunks [c_lo, c_hi) of width 256 in [from, to). */
function columnChunks(from: string, to: string, work: string, body: string[]): string[] {
  const loop = [
    `for (jx_index jx_c = ${from}; jx_c < ${to}; jx_c += 256) {`,
    `  const jx_index c_lo = jx_c, c_hi = ${to} - jx_c < 256 ? ${to} : jx_c + 256;`,
    ...body.map((l) => `  ${l}`),
    '}',
  ];
  return [`if (par && (${work}) > JX_PARALLEL_THRESHOLD) {`, '  #pragma omp parallel for schedule(static)', ...loop.map((l) => `  ${l}`), '} else {', ...loop.map((l) => `  ${l}`), '}'];
}

/**
 * The C functions of a kernel's blocked path: helpers and `${name}_blocked(jx_b, buffers, params)`, one matrix,
 * with the same buffers and params as the unblocked `${name}_matrix`; `par`: the matrix may use every thread.
 */
export function linalgBlockedC(k: LinalgKernel, name: string, sqrt: (double: boolean, x: string) => string): string {
  const double = k.dtype === 'float64';
  const t = double ? 'double' : 'float';
  const abs = (x: string) => `${double ? 'fabs' : 'fabsf'}(${x})`;
  const sfmin = double ? '2.2250738585072014e-308' : '1.17549435e-38f';
  const min = (a: string, b: string) => `(${a} < ${b} ? ${a} : ${b})`;
  const head = (params: string[], buffers: string[]) => [
    ...params.map((p, i) => `const jx_index ${p} = params[${i}];`),
    ...buffers,
    'const int par = batch == 1;',
  ];
  const fn = (body: string[]) => `${gemmSub(name, double, !double && k.op !== 'triangular_solve')}

static void ${name}_blocked(jx_index jx_b, void **buffers, const int64_t *params) {
${body.map((l) => `  ${l}`).join('\n')}
}`;
  switch (k.op) {
    case 'lu':
      return fn([
        ...head(['batch', 'm', 'n'], [
          `${t} *restrict lu = (${t} *)buffers[0] + jx_b * (m * n);`,
          'jx_i32 *restrict pivots = (jx_i32 *)buffers[1] + jx_b * (m < n ? m : n);',
          'jx_i32 *restrict permutation = (jx_i32 *)buffers[2] + jx_b * m;',
          `const ${t} *restrict in = (const ${t} *)buffers[3] + jx_b * (m * n);`,
        ]),
        '(void)batch;',
        'const jx_index kmax = m < n ? m : n;',
        'memcpy(lu, in, sizeof(*lu) * (size_t)(m * n));',
        `${t} *panel = (${t} *)malloc(sizeof(${t}) * (size_t)(m * ${NB}));`,
        `for (jx_index j0 = 0; j0 < kmax; j0 += ${NB}) {`,
        `  const jx_index j1 = ${min(`j0 + ${NB}`, 'kmax')};`,
        '  // the panel (rows j0.., columns j0..j1): getf2 on a column-major copy (a column of the matrix is a page per',
        '  // element), its row swaps on the panel only; the same operations in the same order as getf2 on the matrix',
        '  const jx_index rows = m - j0, width = j1 - j0;',
        '  for (jx_index i = 0; i < rows; i++) for (jx_index c = 0; c < width; c++) panel[c * rows + i] = lu[(j0 + i) * n + j0 + c];',
        '  for (jx_index jj = 0; jj < width; jj++) {',
        `    ${t} *restrict col = panel + jj * rows;`,
        '    jx_index p = jj;',
        `    ${t} best = ${abs('col[jj]')};`,
        `    for (jx_index i = jj + 1; i < rows; i++) { const ${t} v = ${abs('col[i]')}; if (v > best) { best = v; p = i; } }`,
        '    pivots[j0 + jj] = (jx_i32)(j0 + p);',
        `    if (p != jj) for (jx_index c = 0; c < width; c++) { const ${t} s = panel[c * rows + jj]; panel[c * rows + jj] = panel[c * rows + p]; panel[c * rows + p] = s; }`,
        `    const ${t} pivot = col[jj];`,
        `    const ${t} rinv = (${t})1 / pivot;`,
        `    const int by_reciprocal = ${abs('pivot')} >= ${sfmin};`,
        '    if (pivot != 0) {',
        '      if (by_reciprocal) for (jx_index i = jj + 1; i < rows; i++) col[i] *= rinv;',
        '      else for (jx_index i = jj + 1; i < rows; i++) col[i] /= pivot;',
        '    }',
        '    for (jx_index c = jj + 1; c < width; c++) {',
        `      ${t} *restrict target = panel + c * rows;`,
        `      const ${t} ujc = target[jj];`,
        '      for (jx_index i = jj + 1; i < rows; i++) target[i] -= col[i] * ujc;',
        '    }',
        '  }',
        '  for (jx_index i = 0; i < rows; i++) for (jx_index c = 0; c < width; c++) lu[(j0 + i) * n + j0 + c] = panel[c * rows + i];',
        '  // the panel\'s swaps on the columns left and right of it (laswp)',
        '  for (jx_index j = j0; j < j1; j++) {',
        '    const jx_index p = pivots[j];',
        '    if (p == j) continue;',
        `    for (jx_index c = 0; c < j0; c++) { const ${t} s = lu[j * n + c]; lu[j * n + c] = lu[p * n + c]; lu[p * n + c] = s; }`,
        `    for (jx_index c = j1; c < n; c++) { const ${t} s = lu[j * n + c]; lu[j * n + c] = lu[p * n + c]; lu[p * n + c] = s; }`,
        '  }',
        '  if (j1 >= n) continue;',
        '  // the row block U12 = L11^-1 A12 (unit lower forward substitution, the k order of getf2\'s updates)',
        ...columnChunks('j1', 'n', '(j1 - j0) * (j1 - j0) * (n - j1)', [
          'for (jx_index i = j0 + 1; i < j1; i++) {',
          '  for (jx_index q = j0; q < i; q++) {',
          `    const ${t} liq = lu[i * n + q];`,
          '    for (jx_index c = c_lo; c < c_hi; c++) lu[i * n + c] -= liq * lu[q * n + c];',
          '  }',
          '}',
        ]).map((l) => `  ${l}`),
        '  // the trailing matrix A22 -= L21 U12',
        `  ${name}_sub(m - j1, n - j1, j1 - j0, lu + j1 * n + j0, n, 1, lu + j0 * n + j1, n, 1, lu + j1 * n + j1, n, par);`,
        '}',
        'free(panel);',
        'for (jx_index i = 0; i < m; i++) permutation[i] = (jx_i32)i;',
        'for (jx_index i = 0; i < kmax; i++) { const jx_i32 s = permutation[i]; permutation[i] = permutation[pivots[i]]; permutation[pivots[i]] = s; }',
      ]);
    case 'cholesky':
      return fn([
        ...head(['batch', 'n'], [
          `${t} *restrict out = (${t} *)buffers[0] + jx_b * (n * n);`,
          `const ${t} *restrict in = (const ${t} *)buffers[1] + jx_b * (n * n);`,
        ]),
        '(void)batch;',
        'memcpy(out, in, sizeof(*out) * (size_t)(n * n));',
        'int failed = 0;',
        `for (jx_index j0 = 0; j0 < n && !failed; j0 += ${NB}) {`,
        `  const jx_index j1 = ${min(`j0 + ${NB}`, 'n')};`,
        '  // the diagonal block: potf2 (a diagonal that is not positive, or NaN, fails the whole matrix, as JAX reports it)',
        '  for (jx_index j = j0; j < j1 && !failed; j++) {',
        `    const ${t} d = out[j * n + j];`,
        '    if (!(d > 0)) { failed = 1; break; }',
        `    const ${t} ljj = ${sqrt(double, 'd')};`,
        `    const ${t} rinv = (${t})1 / ljj;`,
        '    out[j * n + j] = ljj;',
        '    for (jx_index i = j + 1; i < j1; i++) out[i * n + j] *= rinv;',
        '    for (jx_index i = j + 1; i < j1; i++) {',
        `      const ${t} lij = out[i * n + j];`,
        '      for (jx_index c = j + 1; c <= i; c++) out[i * n + c] -= lij * out[c * n + j];',
        '    }',
        '  }',
        '  if (failed || j1 >= n) continue;',
        '  // the panel L21 = A21 L11^-T, row by row in potf2\'s order of operations (L11 read from a transposed copy: its',
        '  // columns are a page apart)',
        `  ${t} l11t[${NB * NB}], rinv[${NB}];`,
        '  for (jx_index j = j0; j < j1; j++) {',
        `    rinv[j - j0] = (${t})1 / out[j * n + j];`,
        `    for (jx_index c = j0; c < j1; c++) l11t[(j - j0) * ${NB} + (c - j0)] = out[c * n + j];`,
        '  }',
        `  if (par && (n - j1) * (j1 - j0) * (j1 - j0) > JX_PARALLEL_THRESHOLD) {`,
        '    #pragma omp parallel for schedule(static)',
        `    for (jx_index i = j1; i < n; i++) ${name}_panel_row(out, n, i, j0, j1, l11t, rinv);`,
        '  } else {',
        `    for (jx_index i = j1; i < n; i++) ${name}_panel_row(out, n, i, j0, j1, l11t, rinv);`,
        '  }',
        '  // the trailing matrix A22 -= L21 L21^T on its lower triangle, by blocks of 256 rows (each to its diagonal)',
        '  for (jx_index r0 = j1; r0 < n; r0 += 256) {',
        `    const jx_index r1 = ${min('r0 + 256', 'n')};`,
        `    ${name}_sub(r1 - r0, r1 - j1, j1 - j0, out + r0 * n + j0, n, 1, out + j1 * n + j0, 1, n, out + r0 * n + j1, n, par);`,
        '  }',
        '}',
        `if (failed) { for (jx_index e = 0; e < n * n; e++) out[e] = (${t})JX_NANF; }`,
        'else { for (jx_index i = 0; i < n; i++) for (jx_index c = i + 1; c < n; c++) out[i * n + c] = 0; }',
      ]).replace(`static void ${name}_blocked`, `/* row i of the panel, given L11 transposed (l11t[j * NB + c] = L[j0 + c][j0 + j]) and its diagonal's reciprocals */
static void ${name}_panel_row(${t} *restrict out, jx_index n, jx_index i, jx_index j0, jx_index j1, const ${t} *restrict l11t, const ${t} *restrict rinv) {
  ${t} *restrict row = out + i * n + j0;
  for (jx_index j = 0; j < j1 - j0; j++) {
    const ${t} x = row[j] * rinv[j];
    row[j] = x;
    const ${t} *restrict l = l11t + j * ${NB};
    for (jx_index c = j + 1; c < j1 - j0; c++) row[c] -= x * l[c];
  }
}

static void ${name}_blocked`);
    case 'triangular_solve': {
      // the same system as render/linalg.ts's: M x = b over r unknowns per column, M(i, c) read from a directly or
      // transposed, X(i, c) a row of out (left side) or a column (right side)
      const transposed = triangularTransposed(k);
      const forward = !!k.lower !== transposed;
      const M = (i: string, c: string) => (transposed ? `a[(${c}) * r + (${i})]` : `a[(${i}) * r + (${c})]`);
      const X = (i: string, c: string) => (k.leftSide ? `out[(${i}) * n + (${c})]` : `out[(${c}) * n + (${i})]`);
      // rows [i0, i1) of X -= M[i0:i1, j0:j1] X[j0:j1, :], as a GEMM over out's layout
      const update = (i0: string, i1: string) => {
        if (k.leftSide) {
          const [A, sam, sak] = transposed ? [`a + j0 * r + ${i0}`, '1', 'r'] : [`a + ${i0} * r + j0`, 'r', '1'];
          return `${name}_sub(${i1} - ${i0}, cols, j1 - j0, ${A}, ${sam}, ${sak}, out + j0 * n, n, 1, out + ${i0} * n, n, par);`;
        }
        const [B, sbk, sbn] = transposed ? [`a + j0 * r + ${i0}`, 'r', '1'] : [`a + ${i0} * r + j0`, '1', 'r'];
        return `${name}_sub(cols, ${i1} - ${i0}, j1 - j0, out + j0, n, 1, ${B}, ${sbk}, ${sbn}, out + ${i0}, n, par);`;
      };
      const diagonal = (j: string, below: { from: string; to: string }) => [
        ...(k.unitDiagonal ? [] : [
          `const ${t} rinv = (${t})1 / ${M(j, j)};`,
          `for (jx_index c = 0; c < cols; c++) ${X(j, 'c')} *= rinv;`,
        ]),
        `for (jx_index i = ${below.from}; i < ${below.to}; i++) {`,
        `  const ${t} mij = ${M('i', j)};`,
        `  for (jx_index c = 0; c < cols; c++) ${X('i', 'c')} -= mij * ${X(j, 'c')};`,
        '}',
      ];
      return fn([
        ...head(['batch', 'm', 'n'], [
          `${t} *restrict out = (${t} *)buffers[0] + jx_b * (m * n);`,
          `const ${t} *restrict a = (const ${t} *)buffers[1] + jx_b * (${k.leftSide ? 'm * m' : 'n * n'});`,
          `const ${t} *restrict b = (const ${t} *)buffers[2] + jx_b * (m * n);`,
        ]),
        '(void)batch;',
        `const jx_index r = ${k.leftSide ? 'm' : 'n'}, cols = ${k.leftSide ? 'n' : 'm'};`,
        'memcpy(out, b, sizeof(*out) * (size_t)(m * n));',
        // few right-hand sides of an untransposed M: row by row, each row of X taking its updates in the order the
        // column-oriented substitution gives them (the same operations: identical results), reading M along its rows
        // where the column-oriented loop reads a page per element
        ...(transposed ? [] : [
          `if (cols < ${BLOCKED_MIN_COLUMNS}) {`,
          `  for (jx_index i = ${forward ? '0' : 'r - 1'}; ${forward ? 'i < r' : 'i >= 0'}; ${forward ? 'i++' : 'i--'}) {`,
          `    for (jx_index j = ${forward ? '0' : 'r - 1'}; ${forward ? 'j < i' : 'j > i'}; ${forward ? 'j++' : 'j--'}) {`,
          `      const ${t} mij = ${M('i', 'j')};`,
          `      for (jx_index c = 0; c < cols; c++) ${X('i', 'c')} -= mij * ${X('j', 'c')};`,
          '    }',
          ...(k.unitDiagonal ? [] : [`    const ${t} rinv = (${t})1 / ${M('i', 'i')};`, `    for (jx_index c = 0; c < cols; c++) ${X('i', 'c')} *= rinv;`]),
          '  }',
          '  return;',
          '}',
        ]),
        ...(forward
          ? [
              `for (jx_index j0 = 0; j0 < r; j0 += ${NB}) {`,
              `  const jx_index j1 = ${min(`j0 + ${NB}`, 'r')};`,
              '  for (jx_index j = j0; j < j1; j++) {',
              ...diagonal('j', { from: 'j + 1', to: 'j1' }).map((l) => `    ${l}`),
              '  }',
              `  ${update('j1', 'r')}`,
              '}',
            ]
          : [
              `for (jx_index j1 = r; j1 > 0; j1 -= ${NB}) {`,
              `  const jx_index j0 = j1 > ${NB} ? j1 - ${NB} : 0;`,
              '  for (jx_index j = j1 - 1; j >= j0; j--) {',
              ...diagonal('j', { from: 'j0', to: 'j' }).map((l) => `    ${l}`),
              '  }',
              `  ${update('0', 'j0')}`,
              '}',
            ]),
      ]);
    }
  }
}
