// The CPU's eigh and svd for large matrices, LAPACK's route instead of the
// round-robin Jacobi of render/linalg-jacobi.ts (which keeps small matrices
// and the CUDA target, so those agree with the GPU, signs included):
//  - eigh: Householder reduction to tridiagonal form (LAPACK dsytd2, the
//    reflectors of dlarfg), Q^T formed from the reflectors (dorgtr), then the
//    implicit QL iteration with Wilkinson-style shifts (EISPACK tql2, as JAMA
//    writes it), its rotations logged and then replayed on the rows of Q^T
//    (LAPACK dsteqr + dlasr, deferred), eigenvalues ascending.
//  - svd: Golub-Kahan bidiagonalization of the tall orientation (dgebd2), the
//    left and right reflectors formed into U^T and V^T (dorgbr), then the
//    implicit-shift bidiagonal QR of Golub & Reinsch (EISPACK svd, as
//    Numerical Recipes' svdcmp writes it), its rotations logged and replayed
//    on the rows of U^T and V^T; singular values non-negative, descending.
// The vectors are kept as rows (U^T, V^T, Q^T), so every rotation and every
// reflector application runs along contiguous memory (vectorized), and they
// are transposed once at the end. Level-2 throughout (no latrd / labrd panel
// GEMMs yet). A matrix with a non-finite entry gives NaNs in every output (as
// LAPACK's drivers and JAX do); an iteration that does not converge (a cap per
// eigen- or singular value) gives NaNs too, never a hang.
// OpenMP: over the batch (a matrix per thread) when there are several
// matrices; for one, the formation of Q^T / U^T / V^T (rows are independent)
// and the replay of the logged rotations (chunks of columns are independent)
// are one region each. The reductions stay on one thread: split per step
// they took a region (and a barrier) per column, ten times slower on this
// shared 2-core machine under load.
// Sizes: lower.ts sets OrthogonalKernel.large on the C target from
// cpuEigMinimum() = EIG_MIN (min(m, n)), or JAXON_CPU_EIG_MIN; a large kernel
// takes this path for every matrix it runs. Measured (jit, median, float32):
// even at 8, ahead from 16, 3x the Jacobi kernels at 32, 10-35x at 64
// (bench/RESULTS.md); below 32, where either costs well under a millisecond,
// Jacobi stays, so small matrices keep the GPU's vector signs.
import type { OrthogonalKernel } from '../kernel-ir.js';
import { eighWork } from './linalg-jacobi.js';

/** The smallest min(m, n) that takes this path on the C target (below it the Jacobi kernels: the GPU's signs, under a millisecond). */
export const EIG_MIN = 32;

/**
 * The threshold: EIG_MIN, or JAXON_CPU_EIG_MIN (tests force the path at small sizes with it). Read at each lowering:
 * plans cached before a change keep their path.
 */
export function cpuEigMinimum(): number {
  const value = process.env['JAXON_CPU_EIG_MIN'];
  if (value === undefined || value === '') return EIG_MIN;
  const min = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(min >= 1)) throw new Error(`JAXON_CPU_EIG_MIN: expected an integer >= 1, got ${JSON.stringify(value)}`);
  return min;
}

/** svd's rotation temp per matrix on this path: V^T (N²), then d, e, the two tau, the sign flips, the sort's permutation (N each), the left reflectors as rows (N x M). */
export const svdLargeRot = (M: number, N: number): number => N * N + 6 * N + M * N;

/** Scalars the C spells per dtype. */
function spelling(k: OrthogonalKernel) {
  const f32 = k.dtype === 'float32';
  return {
    T: f32 ? 'float' : 'double', fabs: f32 ? 'fabsf' : 'fabs', hypot: f32 ? 'hypotf' : 'hypot',
    eps: f32 ? '1.1920929e-07f' : '2.220446049250313e-16',
  };
}

/** Helpers both decompositions use: a vectorizable dot product, dlarfg, and a stored rotation sequence on rows. */
function helpers(name: string, T: string): string {
  return `typedef int64_t jx_index;

/* eight partial sums: vectorized without -ffast-math, where one running sum's order forbids it */
static inline ${T} ${name}_dot(jx_index len, const ${T} *restrict a, const ${T} *restrict b) {
  ${T} acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  jx_index i = 0;
  for (; i + 8 <= len; i += 8) for (int l = 0; l < 8; l++) acc[l] += a[i + l] * b[i + l];
  ${T} s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < len; i++) s += a[i] * b[i];
  return s;
}

/* LAPACK dlarfg on x[0], x[stride], ... (len entries): H = I - tau u u^T with u = (1, v) maps x to (beta, 0, ...);
   v overwrites x's tail, beta is returned; tau = 0 (H = I) when the tail is zero. The norm in double: float32
   squares overflow from 2^64 */
static ${T} ${name}_reflector(jx_index len, ${T} *restrict x, jx_index stride, ${T} *tau) {
  const ${T} alpha = x[0];
  double tail = 0;
  for (jx_index i = 1; i < len; i++) tail += (double)x[i * stride] * (double)x[i * stride];
  if (tail == 0) { *tau = 0; return alpha; }
  const ${T} beta = (${T})-copysign(sqrt((double)alpha * (double)alpha + tail), (double)alpha);
  *tau = (beta - alpha) / beta;
  const ${T} scale = 1 / (alpha - beta);
  for (jx_index i = 1; i < len; i++) x[i * stride] *= scale;
  return beta;
}

/* X <- X H for rows [from, rows) of X (row length ld), H = I - tau u u^T acting on columns [col, col + len) */
static void ${name}_reflect_rows(${T} *restrict X, jx_index ld, jx_index from, jx_index rows, jx_index col, jx_index len, const ${T} *restrict u, ${T} tau) {
  for (jx_index i = from; i < rows; i++) {
    ${T} *restrict z = X + i * ld + col;
    const ${T} s = tau * ${name}_dot(len, z, u);
    for (jx_index j = 0; j < len; j++) z[j] -= s * u[j];
  }
}

/* X <- X H_{count-1} ... H_0 (the last first) with H_k = I - tau[k] u u^T, u = U + k * ldu + k + shift (its 1 stored),
   acting on columns from k + shift: row i of X (row length ld; the identity's row to start with) meets H_k only from
   k = i - shift down. The rows are independent (one OpenMP region, no barrier); four at a time share each u's load */
static void ${name}_form_rows(${T} *restrict X, jx_index i0, jx_index i1, jx_index ld, jx_index count, jx_index shift, const ${T} *restrict U, jx_index ldu, const ${T} *restrict tau) {
  for (jx_index k = i1 - 1 - shift < count - 1 ? i1 - 1 - shift : count - 1; k >= 0; k--) {
    if (tau[k] == 0) continue;
    const ${T} *restrict u = U + k * ldu + k + shift;
    const jx_index len = ld - k - shift;
    for (jx_index i = i0 > k + shift ? i0 : k + shift; i < i1; i++) {
      ${T} *restrict z = X + i * ld + k + shift;
      const ${T} s = tau[k] * ${name}_dot(len, z, u);
      for (jx_index j = 0; j < len; j++) z[j] -= s * u[j];
    }
  }
}

static void ${name}_form(${T} *restrict X, jx_index ld, jx_index rows, jx_index count, jx_index shift, const ${T} *restrict U, jx_index ldu, const ${T} *restrict tau, int par) {
  for (jx_index i = 0; i < rows; i++) for (jx_index j = 0; j < ld; j++) X[i * ld + j] = i == j ? 1 : 0;
  const jx_index blocks = (rows + 3) / 4;
  if (par && rows * ld * count > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(dynamic)
    for (jx_index b = blocks - 1; b >= 0; b--) ${name}_form_rows(X, 4 * b, 4 * b + 4 < rows ? 4 * b + 4 : rows, ld, count, shift, U, ldu, tau);
  } else {
    for (jx_index b = 0; b < blocks; b++) ${name}_form_rows(X, 4 * b, 4 * b + 4 < rows ? 4 * b + 4 : rows, ld, count, shift, U, ldu, tau);
  }
}

/* The rotations of an iteration, logged while it runs (the scalars need none of the vectors) and replayed on the vector
   rows afterwards a chunk of columns at a time: each chunk's rows stay in L2 through every sweep, and one OpenMP region
   serves the whole iteration. A sweep: rows (i, i + 1) for i = first, ..., last in that order (pair < 0), or rows
   (pair, i) for i = first, ..., last (svdcmp's cancellation); c and s at cs + at, one pair per rotation, each taking
   x_a <- c x_a + s x_b, x_b <- c x_b - s x_a */
typedef struct { jx_index first, last, pair, at; } ${name}_sweep;
typedef struct { ${name}_sweep *sweeps; ${T} *cs; jx_index count, cap, used, room; int failed; } ${name}_log;

/* room for a sweep of len rotations: its (c, s) slots, or 0 when memory ran out (the log is then failed) */
static ${T} *${name}_log_sweep(${name}_log *log, jx_index first, jx_index last, jx_index pair, jx_index len) {
  if (log->failed) return 0;
  if (log->count == log->cap) {
    const jx_index cap = log->cap ? 2 * log->cap : 256;
    ${name}_sweep *grown = (${name}_sweep *)realloc(log->sweeps, sizeof(${name}_sweep) * cap);
    if (!grown) { log->failed = 1; return 0; }
    log->sweeps = grown; log->cap = cap;
  }
  if (log->used + 2 * len > log->room) {
    const jx_index room = 2 * (log->room + 2 * len);
    ${T} *grown = (${T} *)realloc(log->cs, sizeof(${T}) * room);
    if (!grown) { log->failed = 1; return 0; }
    log->cs = grown; log->room = room;
  }
  ${name}_sweep *sw = &log->sweeps[log->count++];
  sw->first = first; sw->last = last; sw->pair = pair; sw->at = log->used;
  log->used += 2 * len;
  return log->cs + sw->at;
}

/* a chunk of 64 columns of X's rows, copied to contiguous rows first: X's row stride (a power of two at 512 or 1024)
   would put the chunk's rows in the same few cache sets */
static void ${name}_replay_chunk(const ${name}_log *log, ${T} *restrict X, jx_index rows, jx_index len, jx_index lo, jx_index hi, ${T} *restrict P) {
  for (jx_index i = 0; i < rows; i++) for (jx_index j = 0; j < 64; j++) P[i * 64 + j] = lo + j < hi ? X[i * len + lo + j] : 0;
  for (jx_index w = 0; w < log->count; w++) {
    const ${name}_sweep sw = log->sweeps[w];
    const ${T} *restrict cs = log->cs + sw.at;
    const jx_index step = sw.first <= sw.last ? 1 : -1;
    for (jx_index i = sw.first, r = 0;; i += step, r++) {
      ${T} *restrict a = P + (sw.pair < 0 ? i : sw.pair) * 64;
      ${T} *restrict b = P + (sw.pair < 0 ? i + 1 : i) * 64;
      const ${T} c = cs[2 * r], s = cs[2 * r + 1];
      for (jx_index j = 0; j < 64; j++) {
        const ${T} x = a[j], y = b[j];
        a[j] = c * x + s * y;
        b[j] = c * y - s * x;
      }
      if (i == sw.last) break;
    }
  }
  for (jx_index i = 0; i < rows; i++) for (jx_index j = lo; j < hi; j++) X[i * len + j] = P[i * 64 + j - lo];
}

/* 0, or 1 when the chunk buffers' memory ran out */
static int ${name}_replay(const ${name}_log *log, ${T} *restrict X, jx_index rows, jx_index len, int par) {
  int failed = 0;
  if (par && log->used * len > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel reduction(|:failed)
    {
      ${T} *P = (${T} *)malloc(sizeof(${T}) * rows * 64);
      #pragma omp for schedule(dynamic)
      for (jx_index lo = 0; lo < len; lo += 64) if (P) ${name}_replay_chunk(log, X, rows, len, lo, lo + 64 < len ? lo + 64 : len, P);
      failed |= !P;
      free(P);
    }
  } else {
    ${T} *P = (${T} *)malloc(sizeof(${T}) * rows * 64);
    if (!P) return 1;
    for (jx_index lo = 0; lo < len; lo += 64) ${name}_replay_chunk(log, X, rows, len, lo, lo + 64 < len ? lo + 64 : len, P);
    free(P);
  }
  return failed;
}`;
}

/** The batch loop: OpenMP over the matrices when there are several, inside each matrix's updates when one. */
function batchLoop(name: string, work: string): string {
  return `void ${name}(void **buffers, const int64_t *params) {
  const jx_index batch = params[0], m = params[1], n = params[2];
  if (batch > 1 && batch * (${work}) > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(dynamic)
    for (jx_index jx_b = 0; jx_b < batch; jx_b++) ${name}_matrix(jx_b, buffers, params, 0);
  } else {
    for (jx_index jx_b = 0; jx_b < batch; jx_b++) ${name}_matrix(jx_b, buffers, params, batch == 1);
  }
  (void)m; (void)n;
}`;
}

/** The C translation unit's functions for a large eigh or svd kernel (kernel-ir.ts OrthogonalKernel with `large`). */
export function tridiagonalC(k: OrthogonalKernel, name: string): string {
  if (k.op === 'eigh') return eighC(k, name);
  if (k.op === 'svd') return svdC(k, name);
  throw new Error(`render/linalg-tridiagonal: ${k.op} has no large-matrix path here`);
}

function eighC(k: OrthogonalKernel, name: string): string {
  const { T, fabs, hypot, eps } = spelling(k);
  const read = k.lower ? '(a >= c ? x[a * n + c] : x[c * n + a])' : '(a <= c ? x[a * n + c] : x[c * n + a])';
  return `${helpers(name, T)}

/* dsytd2 on the full symmetric A (both triangles kept, so every access is a row): A = Q T Q^T, Q = H_0 ... H_{n-3},
   T's diagonal d and off-diagonal e; H_k's u in row k from column k + 1 (its 1 stored there). One thread: its steps
   would each be two OpenMP regions (n barriers), which cost more than they save on a loaded machine (measured) */
static void ${name}_tridiagonalize(jx_index n, ${T} *restrict A, ${T} *restrict d, ${T} *restrict e, ${T} *restrict tau, ${T} *restrict p) {
  for (jx_index k = 0; k + 2 < n; k++) {
    ${T} *restrict row = A + k * n;
    const jx_index m = n - k - 1;
    ${T} t;
    e[k] = ${name}_reflector(m, row + k + 1, 1, &t);
    tau[k] = t;
    if (t == 0) continue;
    row[k + 1] = 1;
    const ${T} *restrict u = row + k + 1;
    ${T} *restrict S = A + (k + 1) * n + k + 1;
    /* p = tau S u as a sum of S's rows (S is symmetric): axpys along rows */
    for (jx_index j = 0; j < m; j++) p[j] = 0;
    for (jx_index i = 0; i < m; i++) { const ${T} c = t * u[i]; const ${T} *restrict s = S + i * n; for (jx_index j = 0; j < m; j++) p[j] += c * s[j]; }
    /* w = p - (tau/2)(p.u) u, then S -= u w^T + w u^T */
    const ${T} alpha = -(${T})0.5 * t * ${name}_dot(m, p, u);
    for (jx_index j = 0; j < m; j++) p[j] += alpha * u[j];
    for (jx_index i = 0; i < m; i++) { ${T} *restrict s = S + i * n; const ${T} ui = u[i], wi = p[i]; for (jx_index j = 0; j < m; j++) s[j] -= ui * p[j] + wi * u[j]; }
  }
  for (jx_index k = 0; k < n; k++) d[k] = A[k * n + k];
  if (n >= 2) { e[n - 2] = A[(n - 2) * n + n - 1]; tau[n - 2] = 0; }
  e[n - 1] = 0;
}

/* tql2 on (d, e), its rotations logged for the rows of Z^T; d ascends only once sorted. 0, or 1 when some eigenvalue
   took over 60 iterations (or the log's memory ran out) */
static int ${name}_ql(jx_index n, ${T} *restrict d, ${T} *restrict e, ${name}_log *log) {
  ${T} f = 0, tst1 = 0;
  for (jx_index l = 0; l < n; l++) {
    const ${T} size = ${fabs}(d[l]) + ${fabs}(e[l]);
    if (size > tst1) tst1 = size;
    jx_index m = l;
    while (m < n - 1 && !(${fabs}(e[m]) <= ${eps} * tst1)) m++;
    if (m > l) {
      int iter = 0;
      do {
        if (++iter > 60) return 1;
        ${T} g = d[l];
        ${T} p = (d[l + 1] - g) / (2 * e[l]);
        ${T} r = ${hypot}(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const ${T} dl1 = d[l + 1];
        ${T} h = g - d[l];
        for (jx_index i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        ${T} c = 1, c2 = 1, c3 = 1, s = 0, s2 = 0;
        const ${T} el1 = e[l + 1];
        ${T} *restrict cs = ${name}_log_sweep(log, m - 1, l, -1, m - l);
        if (!cs) return 1;
        for (jx_index i = m - 1; i >= l; i--) {
          c3 = c2; c2 = c; s2 = s;
          g = c * e[i];
          h = c * p;
          r = ${hypot}(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          /* columns i, i + 1 of Z^T: z_{i+1} <- s z_i + c z_{i+1}, z_i <- c z_i - s z_{i+1} */
          cs[2 * (m - 1 - i)] = c; cs[2 * (m - 1 - i) + 1] = -s;
        }
        p = -s * s2 * c3 * el1 * e[l] / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (${fabs}(e[l]) > ${eps} * tst1);
    }
    d[l] += f;
    e[l] = 0;
  }
  return 0;
}

static void ${name}_matrix(jx_index jx_b, void **buffers, const int64_t *params, int par) {
  const jx_index n = params[2];
  ${T} *restrict v = (${T} *)buffers[0] + jx_b * n * n;
  ${T} *restrict w = (${T} *)buffers[1] + jx_b * n;
  ${T} *restrict A = (${T} *)buffers[2] + jx_b * ${eighWork('n')};
  const ${T} *restrict x = (const ${T} *)buffers[3] + jx_b * n * n;
  ${T} *restrict d = A + n * n, *restrict e = d + n, *restrict tau = e + n, *restrict p = tau + n;
  int finite = 1;
  for (jx_index a = 0; a < n; a++) for (jx_index c = 0; c < n; c++) { const ${T} y = ${read}; A[a * n + c] = y; finite &= isfinite(y); }
  if (!finite) {
    for (jx_index e2 = 0; e2 < n * n; e2++) v[e2] = NAN;
    for (jx_index a = 0; a < n; a++) w[a] = NAN;
    return;
  }
  ${name}_tridiagonalize(n, A, d, e, tau, p);
  /* Z^T = Q^T = H_{n-3} ... H_0 (H_k reaches rows and columns from k + 1), then the QL iteration's rotations */
  ${name}_form(v, n, n, n - 2, 1, A, n, tau, par);
  ${name}_log log = {0, 0, 0, 0, 0, 0, 0};
  const int failed = ${name}_ql(n, d, e, &log) || ${name}_replay(&log, v, n, n, par);
  free(log.sweeps);
  free(log.cs);
  if (failed) {
    for (jx_index e2 = 0; e2 < n * n; e2++) v[e2] = NAN;
    for (jx_index a = 0; a < n; a++) w[a] = NAN;
    return;
  }
  ${T} *restrict perm = tau;
  for (jx_index a = 0; a < n; a++) perm[a] = (${T})a;
${k.sort ? `  for (jx_index a = 0; a < n; a++) {
    jx_index best = a;
    for (jx_index c = a + 1; c < n; c++) if (d[c] < d[best]) best = c;
    if (best == a) continue;
    const ${T} y = d[a]; d[a] = d[best]; d[best] = y;
    const ${T} from = perm[a]; perm[a] = perm[best]; perm[best] = from;
  }` : '  /* unsorted: the order the QL iteration leaves */'}
  for (jx_index a = 0; a < n; a++) w[a] = d[a];
  memcpy(A, v, sizeof(${T}) * n * n);
  for (jx_index a = 0; a < n; a++) for (jx_index c = 0; c < n; c++) v[a * n + c] = A[(jx_index)perm[c] * n + a];
}

${batchLoop(name, 'n * n * n * 4')}`;
}

function svdC(k: OrthogonalKernel, name: string): string {
  const { T, fabs, hypot } = spelling(k);
  const uv = k.computeUv;
  const nan = [
    'for (jx_index a = 0; a < N; a++) s[a] = NAN;',
    ...(uv ? ['for (jx_index e2 = 0; e2 < m * uc; e2++) u[e2] = NAN;', 'for (jx_index e2 = 0; e2 < vr * n; e2++) vt[e2] = NAN;'] : []),
  ].join(' ');
  const buffers = uv
    ? [
      `${T} *restrict s = (${T} *)buffers[0] + jx_b * N;`,
      `${T} *restrict u = (${T} *)buffers[1] + jx_b * m * uc;`,
      `${T} *restrict vt = (${T} *)buffers[2] + jx_b * vr * n;`,
      `${T} *restrict G = (${T} *)buffers[3] + jx_b * M * N;`,
      `${T} *restrict VT = (${T} *)buffers[4] + jx_b * (N * N + 6 * N + M * N);`,
      `${T} *restrict UT = (${T} *)buffers[5] + jx_b * bc * M;`,
      `const ${T} *restrict x = (const ${T} *)buffers[6] + jx_b * m * n;`,
    ]
    : [
      `${T} *restrict s = (${T} *)buffers[0] + jx_b * N;`,
      `${T} *restrict G = (${T} *)buffers[1] + jx_b * M * N;`,
      `${T} *restrict VT = (${T} *)buffers[2] + jx_b * (N * N + 6 * N + M * N);`,
      `${T} *restrict UT = 0;`,
      `const ${T} *restrict x = (const ${T} *)buffers[3] + jx_b * m * n;`,
    ];
  return `${helpers(name, T)}

/* dgebd2 on the tall G (M x N, M >= N): G = Qu B Qv^T, B upper bidiagonal (d, e); H_k (Qu = H_0 ... H_{N-1}) in
   column k from row k, G_k (Qv = G_0 ... G_{N-2}) in row k from column k + 1, each with its 1 stored; t: N scratch.
   One thread, as the tridiagonalization */
static void ${name}_bidiagonalize(jx_index M, jx_index N, ${T} *restrict G, ${T} *restrict d, ${T} *restrict e, ${T} *restrict tq, ${T} *restrict tp, ${T} *restrict t) {
  for (jx_index k = 0; k < N; k++) {
    d[k] = ${name}_reflector(M - k, G + k * N + k, N, &tq[k]);
    if (tq[k] != 0 && k + 1 < N) {
      G[k * N + k] = 1;
      /* G[k:, k+1:] -= tau u (u^T G[k:, k+1:]): t as a sum of rows, then a rank-1 update, both along rows */
      const jx_index len = N - k - 1;
      for (jx_index j = 0; j < len; j++) t[j] = 0;
      for (jx_index a = k; a < M; a++) { const ${T} ua = G[a * N + k]; const ${T} *restrict r = G + a * N + k + 1; for (jx_index j = 0; j < len; j++) t[j] += ua * r[j]; }
      const ${T} tau = tq[k];
      for (jx_index a = k; a < M; a++) { const ${T} c = tau * G[a * N + k]; ${T} *restrict r = G + a * N + k + 1; for (jx_index j = 0; j < len; j++) r[j] -= c * t[j]; }
    }
    if (k + 1 < N) {
      e[k] = ${name}_reflector(N - k - 1, G + k * N + k + 1, 1, &tp[k]);
      if (tp[k] != 0) {
        G[k * N + k + 1] = 1;
        ${name}_reflect_rows(G, N, k + 1, M, k + 1, N - k - 1, G + k * N + k + 1, tp[k]);
      }
    }
  }
}

/* Golub-Reinsch on the bidiagonal w (diagonal) and rv (rv[i] couples i - 1 and i, rv[0] = 0), as svdcmp: the rotations
   of U's columns and V's (rows of U^T and V^T) logged, and flip[k] = -1 where V's row k is negated (after its last
   rotation: a converged index is never rotated again). 0, or 1 when a value took over 75 iterations (or the logs'
   memory ran out) */
static int ${name}_bidiagonal_qr(jx_index N, ${T} *restrict w, ${T} *restrict rv, ${name}_log *logU, ${name}_log *logV, ${T} *restrict flip) {
  const int vectors = logU != 0;
  ${T} anorm = 0;
  for (jx_index i = 0; i < N; i++) { const ${T} y = ${fabs}(w[i]) + ${fabs}(rv[i]); if (y > anorm) anorm = y; }
  for (jx_index k = N - 1; k >= 0; k--) {
    for (int its = 1;; its++) {
      int cancel = 1;
      jx_index l = k;
      for (; l >= 0; l--) {
        if (l == 0 || ${fabs}(rv[l]) + anorm == anorm) { cancel = 0; break; }
        if (${fabs}(w[l - 1]) + anorm == anorm) break;
      }
      if (cancel) {
        /* w[l - 1] is negligible: chase rv[l] away with rotations of rows (l - 1, i) from the left */
        const jx_index nm = l - 1;
        ${T} c = 0, s = 1;
        for (jx_index i = l; i <= k; i++) {
          const ${T} f = s * rv[i];
          rv[i] = c * rv[i];
          if (${fabs}(f) + anorm == anorm) break;
          const ${T} g = w[i];
          ${T} h = ${hypot}(f, g);
          w[i] = h;
          h = 1 / h;
          c = g * h;
          s = -f * h;
          if (vectors) {
            ${T} *restrict cs = ${name}_log_sweep(logU, i, i, nm, 1);
            if (!cs) return 1;
            cs[0] = c; cs[1] = s;
          }
        }
      }
      ${T} z = w[k];
      if (l == k) {
        if (z < 0) {
          w[k] = -z;
          flip[k] = -1;
        }
        break;
      }
      if (its > 75) return 1;
      /* the shift from the trailing 2 x 2, then one implicit QR sweep over l..k */
      ${T} x = w[l], y = w[k - 1], g = rv[k - 1], h = rv[k];
      ${T} f = ((y - z) * (y + z) + (g - h) * (g + h)) / (2 * h * y);
      g = ${hypot}(f, 1);
      f = ((x - z) * (x + z) + h * ((y / (f + (f >= 0 ? ${fabs}(g) : -${fabs}(g)))) - h)) / x;
      ${T} c = 1, s = 1;
      ${T} *restrict csv = vectors ? ${name}_log_sweep(logV, l, k - 1, -1, k - l) : 0;
      ${T} *restrict csu = vectors ? ${name}_log_sweep(logU, l, k - 1, -1, k - l) : 0;
      if (vectors && !(csv && csu)) return 1;
      for (jx_index j = l; j < k; j++) {
        const jx_index i = j + 1;
        g = rv[i];
        y = w[i];
        h = s * g;
        g = c * g;
        z = ${hypot}(f, h);
        rv[j] = z;
        c = f / z;
        s = h / z;
        f = x * c + g * s;
        g = g * c - x * s;
        h = y * s;
        y *= c;
        if (vectors) { csv[2 * (j - l)] = c; csv[2 * (j - l) + 1] = s; }
        z = ${hypot}(f, h);
        w[j] = z;
        if (z != 0) { z = 1 / z; c = f * z; s = h * z; }
        f = c * g + s * y;
        x = c * y - s * g;
        if (vectors) { csu[2 * (j - l)] = c; csu[2 * (j - l) + 1] = s; }
      }
      rv[l] = 0;
      rv[k] = f;
      w[k] = x;
    }
  }
  return 0;
}

static void ${name}_matrix(jx_index jx_b, void **buffers, const int64_t *params, int par) {
  const jx_index m = params[1], n = params[2];
  const int wide = m < n;
  const jx_index M = wide ? n : m, N = wide ? m : n;
  const jx_index uc = ${k.fullMatrices ? 'm' : 'N'}, vr = ${k.fullMatrices ? 'n' : 'N'}, bc = ${k.fullMatrices ? 'M' : 'N'};
  (void)uc; (void)vr; (void)bc;
${buffers.map((l) => `  ${l}`).join('\n')}
  ${T} *restrict d = VT + N * N, *restrict e = d + N, *restrict tq = e + N, *restrict tp = tq + N;
  ${T} *restrict flip = tp + N, *restrict perm = flip + N, *restrict R = perm + N;
  int finite = 1;
  for (jx_index a = 0; a < M; a++) for (jx_index c = 0; c < N; c++) { const ${T} y = wide ? x[c * n + a] : x[a * n + c]; G[a * N + c] = y; finite &= isfinite(y); }
  if (!finite) { ${nan} return; }
  ${name}_bidiagonalize(M, N, G, d, e, tq, tp, flip);
${uv ? `  /* UT = (Qu E)^T = E^T H_{N-1} ... H_0 (E: bc columns of the identity; H_k reaches rows and columns from k, its u
     copied to row k of R first) and VT = Qv^T = G_{N-2} ... G_0 (G_k from k + 1) */
  for (jx_index k = 0; k < N; k++) {
    R[k * M + k] = 1;
    for (jx_index a = k + 1; a < M; a++) R[k * M + a] = G[a * N + k];
  }
  ${name}_form(UT, M, bc, N, 0, R, M, tq, par);
  ${name}_form(VT, N, N, N - 1, 1, G, N, tp, par);` : '  (void)R;'}
  /* svdcmp's superdiagonal: rv[i] couples i - 1 and i */
  for (jx_index i = N - 1; i >= 1; i--) e[i] = e[i - 1];
  e[0] = 0;
  for (jx_index a = 0; a < N; a++) flip[a] = 1;
  ${name}_log logU = {0, 0, 0, 0, 0, 0, 0}, logV = {0, 0, 0, 0, 0, 0, 0};
  const int failed = ${name}_bidiagonal_qr(N, d, e, ${uv ? '&logU, &logV' : '0, 0'}, flip)${uv ? ` || ${name}_replay(&logU, UT, bc, M, par) || ${name}_replay(&logV, VT, N, N, par)` : ''};
${uv ? `  if (!failed) for (jx_index a = 0; a < N; a++) if (flip[a] < 0) for (jx_index c = 0; c < N; c++) VT[a * N + c] = -VT[a * N + c];
` : ''}  free(logU.sweeps); free(logU.cs); free(logV.sweeps); free(logV.cs);
  if (failed) { ${nan} return; }
  for (jx_index a = 0; a < N; a++) perm[a] = (${T})a;
  for (jx_index a = 0; a < N; a++) {
    jx_index best = a;
    for (jx_index c = a + 1; c < N; c++) if (d[c] > d[best]) best = c;
    if (best == a) continue;
    const ${T} y = d[a]; d[a] = d[best]; d[best] = y;
    const ${T} from = perm[a]; perm[a] = perm[best]; perm[best] = from;
  }
  for (jx_index a = 0; a < N; a++) s[a] = d[a];
${uv ? `  /* U's extra columns (full_matrices) are Qu's: rows N.. of UT, never rotated */
  if (!wide) {
    for (jx_index a = 0; a < m; a++) for (jx_index c = 0; c < uc; c++) u[a * uc + c] = UT[(c < N ? (jx_index)perm[c] : c) * M + a];
    for (jx_index r = 0; r < vr; r++) for (jx_index c = 0; c < n; c++) vt[r * n + c] = VT[(jx_index)perm[r] * N + c];
  } else {
    for (jx_index a = 0; a < m; a++) for (jx_index c = 0; c < uc; c++) u[a * uc + c] = VT[(jx_index)perm[c] * N + a];
    for (jx_index r = 0; r < vr; r++) for (jx_index c = 0; c < n; c++) vt[r * n + c] = UT[(r < N ? (jx_index)perm[r] : r) * M + c];
  }` : ''}
}

${batchLoop(name, '(m > n ? m : n) * (m < n ? m : n) * (m < n ? m : n) * 4')}`;
}
