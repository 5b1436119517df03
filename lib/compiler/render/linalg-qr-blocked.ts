// The CPU's blocked QR for large matrices (LAPACK's dgeqrf and dorgqr),
// beside render/linalg-eig.ts's one-thread loop, which keeps small matrices.
// geqrf goes a panel of NB columns at a time: geqr2 on the panel (the
// unblocked loop's reflectors operation for operation: dlarfg's beta =
// -sign(alpha)·‖x‖, tau = (beta - alpha)/beta, H = I when the column below the
// diagonal is zero, so R's diagonal has LAPACK's signs), then larft's upper
// triangular T (H_0 ... H_{nb-1} = I - V T Vᵀ) and larfb's trailing update
// as GEMMs: Y = Vᵀ A2, Y = Tᵀ Y, A2 -= V Y. orgqr forms Q the same way from
// the last panel back: Y = Vᵀ Q2, Y = T Y, Q2 -= V Y on Q's columns from the
// panel's first on (the identity's columns before it are untouched), so
// reduced and complete Q cost a GEMM each per panel. The GEMMs are
// jaxon_gemm.h's packed kernel for float32 (Y = Vᵀ A2 by its plain product,
// the subtraction by its negated update) and column-chunked loops for float64
// (a row of A2 streams once per panel while Y's chunk stays in cache); with one
// matrix each thread takes a range of the updated columns through all three
// steps (one OpenMP region per block update); a batch runs a matrix per
// thread. Sizes: lower-qr.ts gives a kernel this path (OrthogonalKernel
// cpuBlocked) when min(m, n) reaches QR_BLOCKED_MIN; the choice is made again
// per call from the params, so a kernel reused for small matrices keeps the
// unblocked loop. JAXON_CPU_BLOCKED_QR=MIN[:NB] moves the threshold (tests).
import type { OrthogonalKernel } from '../kernel-ir.js';

/** Columns per panel (the GEMMs' depth): 16 measured faster than 32 and 64 at 256-1024 on one thread (bench/RESULTS.md). */
export const QR_NB = 16;
/** The smallest min(m, n) on the blocked path (2x the loop there; bench/RESULTS.md, "blocked QR on the CPU"). */
export const QR_BLOCKED_MIN = 64;

/** The blocked QR's threshold and panel width: QR_BLOCKED_MIN and QR_NB, or JAXON_CPU_BLOCKED_QR=MIN or MIN:NB. */
export function cpuQrBlocking(): { min: number; nb: number } {
  const value = process.env['JAXON_CPU_BLOCKED_QR'];
  if (value === undefined || value === '') return { min: QR_BLOCKED_MIN, nb: QR_NB };
  const match = /^(\d+)(?::(\d+))?$/.exec(value);
  const min = Number(match?.[1]);
  const nb = match?.[2] === undefined ? QR_NB : Number(match[2]);
  if (!match || !(min >= 1) || !(nb >= 2 && nb <= 128)) {
    throw new Error(`JAXON_CPU_BLOCKED_QR: expected MIN or MIN:NB (integers, MIN >= 1, 2 <= NB <= 128), got ${JSON.stringify(value)}`);
  }
  return { min, nb };
}

/** The blocked path's settings for a qr of [batch, m, n] matrices on the CPU, or undefined for the unblocked loop. */
export function cpuQrBlocked(dtype: string, m: number, n: number): { min: number; nb: number } | undefined {
  if (dtype !== 'float32' && dtype !== 'float64') return undefined;
  const blocking = cpuQrBlocking();
  return Math.min(m, n) >= blocking.min ? blocking : undefined;
}

/**
 * The multiply-adds a block update needs before it is split over the threads (about 0.2 ms on one): a region ends in
 * a barrier, and on a loaded machine a barrier waits for a descheduled thread a whole time slice (24-72 ms a call
 * measured at 64 x 64 with the plain loops' element threshold).
 */
const PARALLEL_WORK = '(64 * JX_PARALLEL_THRESHOLD)';

/**
 * NAME_larfb: C (rows x cols, rows `ldc` apart) = (I - V op(T) V^T) C, op(T) = T^T for geqrf's update and T for
 * orgqr's, as Y = V^T C, Y = op(T) Y, C -= V Y (V rows x w row-major, Y w x cols). The columns of C are independent,
 * so with `par` each thread takes a range of them through all three steps: one parallel region (one barrier) per
 * block update.
 */
function gemms(name: string, double: boolean, nb: number): string {
  const t = double ? 'double' : 'float';
  // one thread's columns [lo, hi) of C and Y (Y's rows `ldy` apart)
  const products = double
    ? `/* four rows of C (of Y) per pass over a chunk of Y (of C): four multiply-adds per load and store of the chunk */
static void ${name}_vtc(jx_index rows, jx_index w, jx_index cols, const double *restrict V, const double *restrict C, jx_index ldc, double *restrict Y, jx_index ldy) {
  /* chunks of 256 columns: a chunk of Y stays in cache while the rows of C stream by once */
  for (jx_index c0 = 0; c0 < cols; c0 += 256) {
    const jx_index c1 = cols - c0 < 256 ? cols : c0 + 256;
    for (jx_index q = 0; q < w; q++) for (jx_index c = c0; c < c1; c++) Y[q * ldy + c] = 0;
    jx_index l = 0;
    for (; l + 4 <= rows; l += 4) {
      const double *restrict a0 = C + l * ldc, *restrict a1 = a0 + ldc, *restrict a2 = a1 + ldc, *restrict a3 = a2 + ldc;
      for (jx_index q = 0; q < w; q++) {
        const double v0 = V[l * w + q], v1 = V[(l + 1) * w + q], v2 = V[(l + 2) * w + q], v3 = V[(l + 3) * w + q];
        double *restrict yq = Y + q * ldy;
        for (jx_index c = c0; c < c1; c++) yq[c] += v0 * a0[c] + v1 * a1[c] + v2 * a2[c] + v3 * a3[c];
      }
    }
    for (; l < rows; l++) {
      const double *restrict cl = C + l * ldc;
      for (jx_index q = 0; q < w; q++) {
        const double v = V[l * w + q];
        double *restrict yq = Y + q * ldy;
        for (jx_index c = c0; c < c1; c++) yq[c] += v * cl[c];
      }
    }
  }
}

static void ${name}_sub(jx_index rows, jx_index w, jx_index cols, const double *restrict V, const double *restrict Y, jx_index ldy, double *restrict C, jx_index ldc) {
  for (jx_index c0 = 0; c0 < cols; c0 += 256) {
    const jx_index c1 = cols - c0 < 256 ? cols : c0 + 256;
    for (jx_index l = 0; l < rows; l++) {
      double *restrict cl = C + l * ldc;
      const double *restrict vl = V + l * w;
      jx_index q = 0;
      for (; q + 4 <= w; q += 4) {
        const double *restrict y0 = Y + q * ldy, *restrict y1 = y0 + ldy, *restrict y2 = y1 + ldy, *restrict y3 = y2 + ldy;
        const double v0 = vl[q], v1 = vl[q + 1], v2 = vl[q + 2], v3 = vl[q + 3];
        for (jx_index c = c0; c < c1; c++) cl[c] -= v0 * y0[c] + v1 * y1[c] + v2 * y2[c] + v3 * y3[c];
      }
      for (; q < w; q++) {
        const double v = vl[q];
        const double *restrict yq = Y + q * ldy;
        for (jx_index c = c0; c < c1; c++) cl[c] -= v * yq[c];
      }
    }
  }
}`
    : `/* jaxon_gemm.h's packed kernel: Y = V^T C by its plain product, C -= V Y by its negated update */
static void ${name}_vtc(jx_index rows, jx_index w, jx_index cols, const float *V, const float *C, jx_index ldc, float *Y, jx_index ldy) {
  jx_sgemm_buffers b;
  jx_sgemm_buffers_alloc(&b, w, cols, rows);
  jx_sgemm_range_f32(rows, V, 1, w, C, ldc, 1, Y, ldy, 0, w, 0, cols, &b);
  jx_sgemm_buffers_free(&b);
}

static void ${name}_sub(jx_index rows, jx_index w, jx_index cols, const float *V, const float *Y, jx_index ldy, float *C, jx_index ldc) {
  jx_sgemm_buffers b;
  jx_sgemm_buffers_alloc(&b, rows, cols, w);
  jx_sgemm_sub_f32(w, V, w, 1, Y, ldy, 1, C, ldc, 0, rows, 0, cols, &b);
  jx_sgemm_buffers_free(&b);
}`;
  return `${products}

/* Y = T^T Y (transpose) or T Y in place, T upper triangular w x w (rows ${nb} apart) */
static void ${name}_trmm(jx_index w, jx_index cols, const ${t} *restrict T, ${t} *restrict Y, jx_index ldy, int transpose) {
  for (jx_index k = 0; k < w; k++) {
    /* T^T: rows from the last (row i reads rows s < i); T: from the first (row i reads rows s > i) */
    const jx_index i = transpose ? w - 1 - k : k;
    ${t} *restrict yi = Y + i * ldy;
    const ${t} tii = T[i * ${nb} + i];
    for (jx_index c = 0; c < cols; c++) yi[c] *= tii;
    for (jx_index s = transpose ? 0 : i + 1; s < (transpose ? i : w); s++) {
      const ${t} ts = transpose ? T[s * ${nb} + i] : T[i * ${nb} + s];
      const ${t} *restrict ys = Y + s * ldy;
      for (jx_index c = 0; c < cols; c++) yi[c] += ts * ys[c];
    }
  }
}

static void ${name}_larfb(jx_index rows, jx_index w, jx_index cols, const ${t} *V, const ${t} *T, ${t} *C, jx_index ldc, ${t} *Y, int transpose, int par) {
  if (cols <= 0) return;
  #pragma omp parallel if (par && rows * w * cols > ${PARALLEL_WORK})
  {
    /* a thread's columns, in whole 16-column strips (the packed kernel's vectors) */
    const jx_index threads = omp_get_num_threads(), id = omp_get_thread_num(), strips = (cols + 15) / 16;
    const jx_index lo = strips * id / threads * 16, hi = strips * (id + 1) / threads * 16 < cols ? strips * (id + 1) / threads * 16 : cols;
    if (hi > lo) {
      ${name}_vtc(rows, w, hi - lo, V, C + lo, ldc, Y + lo, cols);
      ${name}_trmm(w, hi - lo, T, Y + lo, cols, transpose);
      ${name}_sub(rows, w, hi - lo, V, Y + lo, cols, C + lo, ldc);
    }
  }
}`;
}

/**
 * The C translation unit's function for a qr kernel with k.cpuBlocked: `unblocked` is render/c.ts's rendering of the
 * one-thread loop under the name NAME_unblocked (it serves matrices below the threshold).
 */
export function qrBlockedC(k: OrthogonalKernel, name: string, unblocked: string): string {
  const { min, nb } = k.cpuBlocked!;
  const double = k.dtype === 'float64';
  const t = double ? 'double' : 'float';
  const sqrt = double ? 'sqrt' : 'sqrtf';
  const copysign = double ? 'copysign' : 'copysignf';
  const qc = k.fullMatrices ? 'm' : 'kk';
  return `typedef int64_t jx_index;

${unblocked.replace(`void ${name}_unblocked(`, `static void ${name}_unblocked(`)}

${gemms(name, double, nb)}

/* larft (forward, columnwise): T (rows ${nb} apart) with H_0 ... H_{w-1} = I - V T V^T, the reflectors below the diagonal
   of the column-major panel P (rows x w; unit diagonal implied), taus tau[0..w) */
static void ${name}_larft(jx_index rows, jx_index w, const ${t} *restrict P, const ${t} *restrict tau, ${t} *restrict T) {
  for (jx_index i = 0; i < w; i++) {
    const ${t} ti = tau[i];
    if (ti == 0) { for (jx_index r = 0; r <= i; r++) T[r * ${nb} + i] = 0; continue; }
    const ${t} *restrict vi = P + i * rows;
    for (jx_index r = 0; r < i; r++) {
      const ${t} *restrict vr = P + r * rows;
      ${t} s = vr[i];
      for (jx_index l = i + 1; l < rows; l++) s += vr[l] * vi[l];
      T[r * ${nb} + i] = -ti * s;
    }
    /* T[0:i, i] = T[0:i, 0:i] z (upper triangular, in place: row r reads z from r on) */
    for (jx_index r = 0; r < i; r++) {
      ${t} s = 0;
      for (jx_index c = r; c < i; c++) s += T[r * ${nb} + c] * T[c * ${nb} + i];
      T[r * ${nb} + i] = s;
    }
    T[i * ${nb} + i] = ti;
  }
}

/* V (rows x w, row-major, for the GEMMs): the panel's reflectors with their unit diagonal and zeros above it */
static void ${name}_v(jx_index rows, jx_index w, const ${t} *restrict P, ${t} *restrict V) {
  for (jx_index l = 0; l < rows; l++) for (jx_index c = 0; c < w; c++) V[l * w + c] = l < c ? 0 : l == c ? 1 : P[c * rows + l];
}

/* one matrix: geqrf (panels of ${nb}) into work and tau, then r and orgqr's q; the buffers and params of NAME_unblocked */
static void ${name}_blocked(jx_index b, void **buffers, const int64_t *params, int par) {
  const jx_index m = params[1], n = params[2];
  const jx_index kk = m < n ? m : n, qc = ${qc};
  ${t} *restrict Q = (${t} *)buffers[0] + b * m * qc;
  ${t} *restrict R = (${t} *)buffers[1] + b * qc * n;
  ${t} *restrict W = (${t} *)buffers[2] + b * m * n;
  ${t} *restrict TAU = (${t} *)buffers[3] + b * kk;
  const ${t} *restrict A = (const ${t} *)buffers[4] + b * m * n;
  memcpy(W, A, sizeof(${t}) * (size_t)(m * n));
  const jx_index wide = n > qc ? n : qc;
  ${t} *P = (${t} *)malloc(sizeof(${t}) * (size_t)(m * ${nb}));
  ${t} *V = (${t} *)malloc(sizeof(${t}) * (size_t)(m * ${nb}));
  ${t} *Y = (${t} *)malloc(sizeof(${t}) * (size_t)(${nb} * wide));
  ${t} *T = (${t} *)malloc(sizeof(${t}) * ${nb * nb});
  for (jx_index j0 = 0; j0 < kk; j0 += ${nb}) {
    const jx_index j1 = kk - j0 < ${nb} ? kk : j0 + ${nb}, w = j1 - j0, rows = m - j0;
    /* geqr2 on a column-major copy of the panel (a column of the matrix is n elements apart): the unblocked loop's
       operations in its order, on the panel's columns only */
    for (jx_index l = 0; l < rows; l++) for (jx_index c = 0; c < w; c++) P[c * rows + l] = W[(j0 + l) * n + j0 + c];
    for (jx_index jj = 0; jj < w; jj++) {
      ${t} *restrict col = P + jj * rows;
      const ${t} alpha = col[jj];
      ${t} xnorm2 = 0;
      for (jx_index l = jj + 1; l < rows; l++) xnorm2 += col[l] * col[l];
      if (xnorm2 == 0) { TAU[j0 + jj] = 0; continue; }
      const ${t} beta = -${copysign}(${sqrt}(alpha * alpha + xnorm2), alpha);
      const ${t} tj = (beta - alpha) / beta;
      TAU[j0 + jj] = tj;
      const ${t} scale = (${t})1 / (alpha - beta);
      for (jx_index l = jj + 1; l < rows; l++) col[l] *= scale;
      col[jj] = beta;
      for (jx_index c = jj + 1; c < w; c++) {
        ${t} *restrict target = P + c * rows;
        ${t} dot = target[jj];
        for (jx_index l = jj + 1; l < rows; l++) dot += col[l] * target[l];
        dot *= tj;
        target[jj] -= dot;
        for (jx_index l = jj + 1; l < rows; l++) target[l] -= dot * col[l];
      }
    }
    for (jx_index l = 0; l < rows; l++) for (jx_index c = 0; c < w; c++) W[(j0 + l) * n + j0 + c] = P[c * rows + l];
    if (j1 >= n) continue;
    /* larfb: A2 = (I - V T^T V^T) A2 on the columns right of the panel */
    ${name}_larft(rows, w, P, TAU + j0, T);
    ${name}_v(rows, w, P, V);
    ${name}_larfb(rows, w, n - j1, V, T, W + j0 * n + j1, n, Y, 1, par);
  }
  for (jx_index a = 0; a < qc; a++) for (jx_index c = 0; c < n; c++) R[a * n + c] = a <= c ? W[a * n + c] : 0;
  for (jx_index a = 0; a < m; a++) for (jx_index c = 0; c < qc; c++) Q[a * qc + c] = a == c ? 1 : 0;
  /* orgqr: Q = H_0 ... H_{kk-1} I[:, :qc], a panel's block (I - V T V^T) at a time from the last, on Q's rows and
     columns from the panel's first on (the identity's columns before it are zero there) */
  for (jx_index j0 = (kk - 1) / ${nb} * ${nb}; j0 >= 0; j0 -= ${nb}) {
    const jx_index j1 = kk - j0 < ${nb} ? kk : j0 + ${nb}, w = j1 - j0, rows = m - j0;
    for (jx_index l = 0; l < rows; l++) for (jx_index c = 0; c < w; c++) P[c * rows + l] = W[(j0 + l) * n + j0 + c];
    ${name}_larft(rows, w, P, TAU + j0, T);
    ${name}_v(rows, w, P, V);
    ${name}_larfb(rows, w, qc - j0, V, T, Q + j0 * qc + j0, qc, Y, 0, par);
  }
  free(P);
  free(V);
  free(Y);
  free(T);
}

void ${name}(void **buffers, const int64_t *params) {
  const jx_index batch = params[0], m = params[1], n = params[2];
  /* below the threshold (a kernel lowered for large matrices, reused for small ones) the one-thread loop */
  if ((m < n ? m : n) < ${min}) { ${name}_unblocked(buffers, params); return; }
  if (batch > 1 && batch * m * n * (m > n ? m : n) > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(dynamic)
    for (jx_index b = 0; b < batch; b++) ${name}_blocked(b, buffers, params, 0);
  } else {
    for (jx_index b = 0; b < batch; b++) ${name}_blocked(b, buffers, params, batch == 1);
  }
}`;
}
