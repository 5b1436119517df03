// The CPU's eigh and svd for large matrices, LAPACK's route instead of the
// round-robin Jacobi of render/linalg-jacobi.ts (which keeps small matrices
// and the CUDA target, so those agree with the GPU, signs included):
//  - eigh: Householder reduction to tridiagonal form (LAPACK dsytd2, the
//    reflectors of dlarfg), Q^T formed from the reflectors (dorgtr), then the
//    implicit QL iteration with Wilkinson-style shifts (EISPACK tql2, as JAMA
//    writes it), each sweep's rotations stored and then applied to the rows of
//    Q^T (LAPACK dsteqr + dlasr), eigenvalues ascending.
//  - svd: Golub-Kahan bidiagonalization of the tall orientation (dgebd2), the
//    left and right reflectors formed into U^T and V^T (dorgbr), then the
//    implicit-shift bidiagonal QR of Golub & Reinsch (EISPACK svd, as
//    Numerical Recipes' svdcmp writes it), each sweep's rotations stored and
//    applied to rows of U^T and V^T; singular values non-negative, descending.
// The vectors are kept as rows (U^T, V^T, Q^T), so every rotation and every
// reflector application runs along contiguous memory (vectorized), and they
// are transposed once at the end. Level-2 throughout (no latrd / labrd panel
// GEMMs yet). A matrix with a non-finite entry gives NaNs in every output (as
// LAPACK's drivers and JAX do); an iteration that does not converge (a cap per
// eigen- or singular value) gives NaNs too, never a hang.
// OpenMP: over the batch (a matrix per thread) when there are several
// matrices, inside each reflector application and rotation sweep when one.
// Sizes: lower.ts sets OrthogonalKernel.large on the C target from
// cpuEigMinimum() = EIG_MIN (min(m, n); measured: bench/RESULTS.md), or
// JAXON_CPU_EIG_MIN; a large kernel takes this path for every matrix it runs.
import type { OrthogonalKernel } from '../kernel-ir.js';
import { eighWork } from './linalg-jacobi.js';

/** The smallest min(m, n) that takes this path on the C target (below it the Jacobi kernels are as fast or faster). */
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

/** svd's rotation temp per matrix on this path: V^T (N²), then d, e, the two tau, four rotation sequences, the sort's permutation (N each), a reflector (M). */
export const svdLargeRot = (M: number, N: number): number => N * N + 9 * N + M;

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
static void ${name}_reflect_rows(${T} *restrict X, jx_index ld, jx_index from, jx_index rows, jx_index col, jx_index len, const ${T} *restrict u, ${T} tau, int par) {
  if (par && (rows - from) * len > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(static)
    for (jx_index i = from; i < rows; i++) {
      ${T} *restrict z = X + i * ld + col;
      const ${T} s = tau * ${name}_dot(len, z, u);
      for (jx_index j = 0; j < len; j++) z[j] -= s * u[j];
    }
  } else {
    for (jx_index i = from; i < rows; i++) {
      ${T} *restrict z = X + i * ld + col;
      const ${T} s = tau * ${name}_dot(len, z, u);
      for (jx_index j = 0; j < len; j++) z[j] -= s * u[j];
    }
  }
}

/* rows i, i + 1 of X (row length len) for i = first, ..., last in that order (LAPACK dlasr's order is the caller's):
   x_i <- c x_i + s x_{i+1}, x_{i+1} <- c x_{i+1} - s x_i; a chunk of columns at a time, so the rows stay in L1 */
static void ${name}_rotate_chunk(${T} *restrict X, jx_index len, jx_index first, jx_index last, const ${T} *restrict c, const ${T} *restrict s, jx_index lo, jx_index hi) {
  const jx_index step = first <= last ? 1 : -1;
  for (jx_index i = first;; i += step) {
    ${T} *restrict a = X + i * len;
    ${T} *restrict b = X + (i + 1) * len;
    const ${T} ci = c[i], si = s[i];
    for (jx_index j = lo; j < hi; j++) {
      const ${T} x = a[j], y = b[j];
      a[j] = ci * x + si * y;
      b[j] = ci * y - si * x;
    }
    if (i == last) break;
  }
}

static void ${name}_rotate_rows(${T} *restrict X, jx_index len, jx_index first, jx_index last, const ${T} *restrict c, const ${T} *restrict s, int par) {
  const jx_index count = first <= last ? last - first + 1 : first - last + 1;
  if (par && count * len > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(static)
    for (jx_index lo = 0; lo < len; lo += 128) ${name}_rotate_chunk(X, len, first, last, c, s, lo, lo + 128 < len ? lo + 128 : len);
  } else {
    for (jx_index lo = 0; lo < len; lo += 128) ${name}_rotate_chunk(X, len, first, last, c, s, lo, lo + 128 < len ? lo + 128 : len);
  }
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
   T's diagonal d and off-diagonal e; H_k's u in row k from column k + 1 (its 1 stored there) */
static void ${name}_tridiagonalize(jx_index n, ${T} *restrict A, ${T} *restrict d, ${T} *restrict e, ${T} *restrict tau, ${T} *restrict p, int par) {
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
    if (par && m * m > JX_PARALLEL_THRESHOLD) {
      #pragma omp parallel for schedule(static)
      for (jx_index lo = 0; lo < m; lo += 64) {
        const jx_index hi = lo + 64 < m ? lo + 64 : m;
        for (jx_index j = lo; j < hi; j++) p[j] = 0;
        for (jx_index i = 0; i < m; i++) { const ${T} c = t * u[i]; const ${T} *restrict s = S + i * n; for (jx_index j = lo; j < hi; j++) p[j] += c * s[j]; }
      }
    } else {
      for (jx_index j = 0; j < m; j++) p[j] = 0;
      for (jx_index i = 0; i < m; i++) { const ${T} c = t * u[i]; const ${T} *restrict s = S + i * n; for (jx_index j = 0; j < m; j++) p[j] += c * s[j]; }
    }
    /* w = p - (tau/2)(p.u) u, then S -= u w^T + w u^T */
    const ${T} alpha = -(${T})0.5 * t * ${name}_dot(m, p, u);
    for (jx_index j = 0; j < m; j++) p[j] += alpha * u[j];
    if (par && m * m > JX_PARALLEL_THRESHOLD) {
      #pragma omp parallel for schedule(static)
      for (jx_index i = 0; i < m; i++) { ${T} *restrict s = S + i * n; const ${T} ui = u[i], wi = p[i]; for (jx_index j = 0; j < m; j++) s[j] -= ui * p[j] + wi * u[j]; }
    } else {
      for (jx_index i = 0; i < m; i++) { ${T} *restrict s = S + i * n; const ${T} ui = u[i], wi = p[i]; for (jx_index j = 0; j < m; j++) s[j] -= ui * p[j] + wi * u[j]; }
    }
  }
  for (jx_index k = 0; k < n; k++) d[k] = A[k * n + k];
  if (n >= 2) { e[n - 2] = A[(n - 2) * n + n - 1]; tau[n - 2] = 0; }
  e[n - 1] = 0;
}

/* tql2 on (d, e) with the rotations applied to the rows of Z; d ascends only once sorted. 0, or 1 when some
   eigenvalue took over 60 iterations */
static int ${name}_ql(jx_index n, ${T} *restrict d, ${T} *restrict e, ${T} *restrict Z, ${T} *restrict rc, ${T} *restrict rs, int vectors, int par) {
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
          rc[i] = c; rs[i] = -s;
        }
        p = -s * s2 * c3 * el1 * e[l] / dl1;
        e[l] = s * p;
        d[l] = c * p;
        if (vectors) ${name}_rotate_rows(Z, n, m - 1, l, rc, rs, par);
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
  ${name}_tridiagonalize(n, A, d, e, tau, p, par);
  /* Z = Q^T = H_{n-3} ... H_0: the identity times the reflectors on the right, the last first; H_k reaches rows and
     columns from k + 1 only */
  for (jx_index a = 0; a < n; a++) for (jx_index c = 0; c < n; c++) v[a * n + c] = a == c ? 1 : 0;
  for (jx_index k = n - 3; k >= 0; k--) if (tau[k] != 0) ${name}_reflect_rows(v, n, k + 1, n, k + 1, n - k - 1, A + k * n + k + 1, tau[k], par);
  /* the reflectors are spent: A's storage holds the rotations, then Z for the transpose */
  if (${name}_ql(n, d, e, v, A, A + n, 1, par)) {
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
      `${T} *restrict VT = (${T} *)buffers[4] + jx_b * (N * N + 9 * N + M);`,
      `${T} *restrict UT = (${T} *)buffers[5] + jx_b * M * M;`,
      `const ${T} *restrict x = (const ${T} *)buffers[6] + jx_b * m * n;`,
    ]
    : [
      `${T} *restrict s = (${T} *)buffers[0] + jx_b * N;`,
      `${T} *restrict G = (${T} *)buffers[1] + jx_b * M * N;`,
      `${T} *restrict VT = (${T} *)buffers[2] + jx_b * (N * N + 9 * N + M);`,
      `${T} *restrict UT = 0;`,
      `const ${T} *restrict x = (const ${T} *)buffers[3] + jx_b * m * n;`,
    ];
  return `${helpers(name, T)}

/* dgebd2 on the tall G (M x N, M >= N): G = Qu B Qv^T, B upper bidiagonal (d, e); H_k (Qu = H_0 ... H_{N-1}) in
   column k from row k, G_k (Qv = G_0 ... G_{N-2}) in row k from column k + 1, each with its 1 stored; t: N scratch */
static void ${name}_bidiagonalize(jx_index M, jx_index N, ${T} *restrict G, ${T} *restrict d, ${T} *restrict e, ${T} *restrict tq, ${T} *restrict tp, ${T} *restrict t, int par) {
  for (jx_index k = 0; k < N; k++) {
    d[k] = ${name}_reflector(M - k, G + k * N + k, N, &tq[k]);
    if (tq[k] != 0 && k + 1 < N) {
      G[k * N + k] = 1;
      /* G[k:, k+1:] -= tau u (u^T G[k:, k+1:]): t as a sum of rows, then a rank-1 update, both along rows */
      const jx_index len = N - k - 1;
      for (jx_index j = 0; j < len; j++) t[j] = 0;
      for (jx_index a = k; a < M; a++) { const ${T} ua = G[a * N + k]; const ${T} *restrict r = G + a * N + k + 1; for (jx_index j = 0; j < len; j++) t[j] += ua * r[j]; }
      const ${T} tau = tq[k];
      if (par && (M - k) * len > JX_PARALLEL_THRESHOLD) {
        #pragma omp parallel for schedule(static)
        for (jx_index a = k; a < M; a++) { const ${T} c = tau * G[a * N + k]; ${T} *restrict r = G + a * N + k + 1; for (jx_index j = 0; j < len; j++) r[j] -= c * t[j]; }
      } else {
        for (jx_index a = k; a < M; a++) { const ${T} c = tau * G[a * N + k]; ${T} *restrict r = G + a * N + k + 1; for (jx_index j = 0; j < len; j++) r[j] -= c * t[j]; }
      }
    }
    if (k + 1 < N) {
      e[k] = ${name}_reflector(N - k - 1, G + k * N + k + 1, 1, &tp[k]);
      if (tp[k] != 0) {
        G[k * N + k + 1] = 1;
        ${name}_reflect_rows(G, N, k + 1, M, k + 1, N - k - 1, G + k * N + k + 1, tp[k], par);
      }
    }
  }
}

/* Golub-Reinsch on the bidiagonal w (diagonal) and rv (rv[i] couples i - 1 and i, rv[0] = 0), as svdcmp: rotations of
   U's columns are rows of UT (length M), of V's columns rows of VT (length N). 0, or 1 when a value took over 75
   iterations */
static int ${name}_bidiagonal_qr(jx_index M, jx_index N, ${T} *restrict w, ${T} *restrict rv, ${T} *restrict UT, ${T} *restrict VT, ${T} *restrict cu, ${T} *restrict su, ${T} *restrict cv, ${T} *restrict sv, int vectors, int par) {
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
            ${T} *restrict a = UT + nm * M, *restrict b = UT + i * M;
            for (jx_index j = 0; j < M; j++) { const ${T} y = a[j], z = b[j]; a[j] = y * c + z * s; b[j] = z * c - y * s; }
          }
        }
      }
      ${T} z = w[k];
      if (l == k) {
        if (z < 0) {
          w[k] = -z;
          if (vectors) for (jx_index j = 0; j < N; j++) VT[k * N + j] = -VT[k * N + j];
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
        cv[j] = c; sv[j] = s;
        z = ${hypot}(f, h);
        w[j] = z;
        if (z != 0) { z = 1 / z; c = f * z; s = h * z; }
        f = c * g + s * y;
        x = c * y - s * g;
        cu[j] = c; su[j] = s;
      }
      rv[l] = 0;
      rv[k] = f;
      w[k] = x;
      if (vectors) {
        ${name}_rotate_rows(VT, N, l, k - 1, cv, sv, par);
        ${name}_rotate_rows(UT, M, l, k - 1, cu, su, par);
      }
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
  ${T} *restrict cu = tp + N, *restrict su = cu + N, *restrict cv = su + N, *restrict sv = cv + N, *restrict perm = sv + N, *restrict ref = perm + N;
  int finite = 1;
  for (jx_index a = 0; a < M; a++) for (jx_index c = 0; c < N; c++) { const ${T} y = wide ? x[c * n + a] : x[a * n + c]; G[a * N + c] = y; finite &= isfinite(y); }
  if (!finite) { ${nan} return; }
  ${name}_bidiagonalize(M, N, G, d, e, tq, tp, cu, par);
${uv ? `  /* UT = (Qu E)^T = E^T H_{N-1} ... H_0 (E: bc columns of the identity) and VT = Qv^T = G_{N-2} ... G_0, the
     identity times the reflectors on the right, the last first; H_k reaches rows and columns from k, G_k from k + 1 */
  for (jx_index a = 0; a < bc; a++) for (jx_index c = 0; c < M; c++) UT[a * M + c] = a == c ? 1 : 0;
  for (jx_index k = N - 1; k >= 0; k--) {
    if (tq[k] == 0) continue;
    for (jx_index a = k + 1; a < M; a++) ref[a - k] = G[a * N + k];
    ref[0] = 1;
    ${name}_reflect_rows(UT, M, k, bc, k, M - k, ref, tq[k], par);
  }
  for (jx_index a = 0; a < N; a++) for (jx_index c = 0; c < N; c++) VT[a * N + c] = a == c ? 1 : 0;
  for (jx_index k = N - 2; k >= 0; k--) if (tp[k] != 0) ${name}_reflect_rows(VT, N, k + 1, N, k + 1, N - k - 1, G + k * N + k + 1, tp[k], par);` : '  (void)ref;'}
  /* svdcmp's superdiagonal: rv[i] couples i - 1 and i */
  for (jx_index i = N - 1; i >= 1; i--) e[i] = e[i - 1];
  e[0] = 0;
  if (${name}_bidiagonal_qr(M, N, d, e, UT, VT, cu, su, cv, sv, ${uv ? 1 : 0}, par)) { ${nan} return; }
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
