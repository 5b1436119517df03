/* Single-precision GEMM for the CPU's dot kernels (lib/compiler/render/c.ts):
   C[m, n] = sum_k A[m, k] * B[k, n] for one batch element, A and B read
   through strides (any layout: they are packed), float accumulation with
   fused multiply-adds, as OpenBLAS and XLA's CPU backend accumulate.

   The BLIS/GotoBLAS scheme: B is packed into KC x NC panels of NR-wide column
   strips, A into MC x KC blocks of MR-tall row strips, and an MR x NR
   micro-kernel keeps its tile of C in registers for the whole KC depth:
   12 x 32 floats in 24 zmm registers where the host has AVX-512, 6 x 16 in
   12 ymm with AVX2, else 6 x 8. The micro-kernel is written with GCC's vector
   extensions (kernels compile with -march of the host, runtime/kernel-cache.ts);
   the rest of the kernel keeps -ffp-contract=off, only it contracts. It sums
   each element's products in k order within a KC block, from zero, and add
   the block's sum to C: results do not depend on the tile an element falls
   in, nor on how the work is split over threads.

   Work is split over OpenMP threads by the caller, as row and column ranges
   of C (jx_sgemm_range_f32/_f16/_bf16: 16-bit operands are converted while
   packing): each thread packs its own panels. Part of every
   kernel cache key (runtime/kernel-headers.ts). */
#ifndef JX_GEMM_H
#define JX_GEMM_H

#if defined(__clang__)
#define JX_CONTRACT
#elif defined(__GNUC__)
#define JX_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define JX_CONTRACT
#endif

/* The tile is MR rows by two vectors of JX_VL floats, the host's register width: written with vectors of a width the
   host lacks, GCC 12 keeps the accumulators on the stack (a 6 x 16 tile of 16-float vectors ran 8-9 GFLOP/s with
   -march=haswell, the same tile in 8-float halves 56-66; bench/gemm/standalone.py, test/gemm-edges.test.ts). */
#if defined(__AVX512F__) && !defined(JX_GEMM_AVX2)
/* AVX-512 (32 zmm registers): a 12 x 32 tile, 24 accumulators, per k two aligned loads of B and 12 broadcasts of A
   (GCC 12 emits them as vbroadcastss from memory, load-port only; no spills in the loop: check with -S). A 14 x 32
   tile (-DJX_MR=14, 28 accumulators) measured the same. Blocking tuned single-threaded on the 2-core development
   machine (Xeon, 48 KiB L1d and 2 MiB L2 per core; bench/gemm/, CPU-time GFLOP/s against NumPy's OpenBLAS): tiles go
   along a row strip of C (JX_IR_OUTER), so the 12 KiB MR x KC strip of A stays in L1 while the KC x NR strips of B
   stream from the 1 MiB KC x NC panel in L2, and a tile's 12 rows of C stay on the same 12 pages while it moves
   (down a column strip instead was 8% slower at 2048^2 in an interleaved sweep, best MC 48; rows of C a power of two
   apart, on new pages each tile, are our guess at why). JX_GEMM_AVX2 picks the AVX2 kernel on an AVX-512 host, for
   comparisons. */
#define JX_VL 16
#ifndef JX_MR /* 12 or 14; bench/gemm/ tries them with -D, and the blocks below */
#define JX_MR 12
#endif
#ifndef JX_IR_OUTER
#define JX_IR_OUTER 1
#endif
#ifndef JX_PREFETCH_B /* k steps ahead the micro-kernel prefetches B (from L2): 12 and 16 measured +5-8% over none */
#define JX_PREFETCH_B 12
#endif
#ifndef JX_KC
#define JX_KC 256
#define JX_MC 144
#define JX_NC 1024
#endif
#elif defined(__AVX__) || defined(JX_GEMM_AVX2)
/* AVX2 (16 ymm registers): a 6 x 16 tile, 12 accumulators. */
#define JX_VL 8
#define JX_MR 6
#ifndef JX_IR_OUTER
#define JX_IR_OUTER 0
#endif
#ifndef JX_PREFETCH_B
#define JX_PREFETCH_B 0
#endif
#ifndef JX_KC
#define JX_KC 256
#define JX_MC 72
#define JX_NC 512
#endif
#else
/* 128-bit vectors (SSE, NEON): a 6 x 8 tile, 12 accumulators. */
#define JX_VL 4
#define JX_MR 6
#define JX_IR_OUTER 0
#define JX_PREFETCH_B 0
#define JX_KC 256
#define JX_MC 72
#define JX_NC 512
#endif
#define JX_NR (2 * JX_VL)

typedef float jx_vec __attribute__((vector_size(JX_VL * sizeof(float)), aligned(JX_VL * sizeof(float))));

#define JX_ROW(i)                                                                                                 \
  {                                                                                                               \
    const float x = ak[i];                                                                                        \
    c##i##a += x * b0;                                                                                            \
    c##i##b += x * b1;                                                                                            \
  }
#define JX_ACC(i) jx_vec c##i##a = {0}, c##i##b = {0};
#define JX_SAVE(i) rows[2 * i] = c##i##a, rows[2 * i + 1] = c##i##b;
#if JX_MR == 6
#define JX_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#elif JX_MR == 12
#define JX_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#elif JX_MR == 14
#define JX_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#else
#error "jaxon_gemm.h: JX_MR must be 6, 12 or 14"
#endif

/* One MR x NR tile: c (row stride ldc) = (first ? 0 : c) + a_panel . b_panel over kc; only mr x nr of it is stored.
   Every element sums its kc products in k order from zero, then adds them to c: the same on every tile. */
static JX_CONTRACT void jx_sgemm_micro(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                                       int64_t ldc, int mr, int nr, int first) {
#if defined(__clang__)
#pragma clang fp contract(fast)
#endif
  JX_ROWS(JX_ACC)
  for (int64_t k = 0; k < kc; k++) {
    const jx_vec b0 = *(const jx_vec *)(b + k * JX_NR), b1 = *(const jx_vec *)(b + k * JX_NR + JX_VL);
    const float *ak = a + k * JX_MR;
#if JX_PREFETCH_B > 0
    __builtin_prefetch(b + (k + JX_PREFETCH_B) * JX_NR, 0, 3);
    __builtin_prefetch(b + (k + JX_PREFETCH_B) * JX_NR + 16, 0, 3);
#endif
    JX_ROWS(JX_ROW)
  }
  jx_vec rows[2 * JX_MR];
  JX_ROWS(JX_SAVE)
  if (nr == JX_NR) {
    for (int i = 0; i < mr; i++) {
      float *ci = c + i * ldc;
      jx_vec v0 = rows[2 * i], v1 = rows[2 * i + 1];
      if (!first) {
        jx_vec o0, o1;
        memcpy(&o0, ci, sizeof o0);
        memcpy(&o1, ci + JX_VL, sizeof o1);
        v0 += o0;
        v1 += o1;
      }
      memcpy(ci, &v0, sizeof v0);
      memcpy(ci + JX_VL, &v1, sizeof v1);
    }
  } else {
    for (int i = 0; i < mr; i++) {
      float *ci = c + i * ldc;
      const float *r = (const float *)&rows[2 * i];
      if (first) for (int j = 0; j < nr; j++) ci[j] = r[j];
      else for (int j = 0; j < nr; j++) ci[j] += r[j];
    }
  }
}
#undef JX_ROW
#undef JX_ACC
#undef JX_SAVE
#undef JX_ROWS

/* Packs A[m0:m0+mc, k0:k0+kc] into MR-row strips, k-major within a strip; rows past mc are zeros. Operands of
   type T are converted by LOAD while packing (16-bit floats: once per panel, no f32 copy of the operand). */
#define JX_SGEMM_PACKERS(SUFFIX, T, LOAD)                                                                         \
  static void jx_sgemm_pack_a##SUFFIX(const T *a, int64_t sm, int64_t sk, int64_t mc, int64_t kc, float *restrict out) { \
    for (int64_t i0 = 0; i0 < mc; i0 += JX_MR) {                                                                  \
      const int64_t rows = mc - i0 < JX_MR ? mc - i0 : JX_MR;                                                     \
      for (int64_t k = 0; k < kc; k++) {                                                                          \
        for (int64_t i = 0; i < rows; i++) out[k * JX_MR + i] = LOAD(a[(i0 + i) * sm + k * sk]);                  \
        for (int64_t i = rows; i < JX_MR; i++) out[k * JX_MR + i] = 0;                                            \
      }                                                                                                           \
      out += kc * JX_MR;                                                                                          \
    }                                                                                                             \
  }                                                                                                               \
  /* B[k0:k0+kc, n0:n0+nc] into NR-column strips, k-major within a strip; columns past nc are zeros. Rows of B    \
     (sn == 1) are read whole, one k at a time across the strips: a strip at a time would read kc rows of NR     \
     floats each, a page apart when B is wide (TLB misses: twice the time at 2048^2). */                         \
  static void jx_sgemm_pack_b##SUFFIX(const T *b, int64_t sk, int64_t sn, int64_t kc, int64_t nc, float *restrict out) { \
    const int64_t full = nc / JX_NR * JX_NR;                                                                      \
    if (sn == 1) {                                                                                                \
      for (int64_t k = 0; k < kc; k++) {                                                                          \
        const T *bk = b + k * sk;                                                                                 \
        for (int64_t j0 = 0; j0 < full; j0 += JX_NR) {                                                            \
          float *o = out + j0 * kc + k * JX_NR;                                                                   \
          for (int64_t j = 0; j < JX_NR; j++) o[j] = LOAD(bk[j0 + j]);                                            \
        }                                                                                                         \
      }                                                                                                           \
    } else {                                                                                                      \
      for (int64_t j0 = 0; j0 < full; j0 += JX_NR) {                                                              \
        for (int64_t k = 0; k < kc; k++) {                                                                        \
          const T *bk = b + k * sk + j0 * sn;                                                                     \
          float *o = out + j0 * kc + k * JX_NR;                                                                   \
          for (int64_t j = 0; j < JX_NR; j++) o[j] = LOAD(bk[j * sn]);                                            \
        }                                                                                                         \
      }                                                                                                           \
    }                                                                                                             \
    if (full < nc) {                                                                                              \
      const int64_t cols = nc - full;                                                                             \
      for (int64_t k = 0; k < kc; k++) {                                                                          \
        const T *bk = b + k * sk + full * sn;                                                                     \
        float *o = out + full * kc + k * JX_NR;                                                                   \
        for (int64_t j = 0; j < cols; j++) o[j] = LOAD(bk[j * sn]);                                               \
        for (int64_t j = cols; j < JX_NR; j++) o[j] = 0;                                                          \
      }                                                                                                           \
    }                                                                                                             \
  }

#define JX_LOAD_F32(v) (v)
JX_SGEMM_PACKERS(_f32, float, JX_LOAD_F32)
JX_SGEMM_PACKERS(_f16, jx_u16, jx_h2f)
JX_SGEMM_PACKERS(_bf16, jx_u16, jx_bf2f)

/* The panels one thread packs into (64-byte aligned). */
typedef struct {
  float *a, *b;
} jx_sgemm_buffers;

/* Panels sized for an M x N x K product (small products get small panels: no mmap per call). */
static int jx_sgemm_buffers_alloc(jx_sgemm_buffers *w, int64_t M, int64_t N, int64_t K) {
  const int64_t kc = K < JX_KC ? (K > 0 ? K : 1) : JX_KC;
  const int64_t mc = M < JX_MC ? (M + JX_MR - 1) / JX_MR * JX_MR : JX_MC;
  const int64_t nc = N < JX_NC ? (N + JX_NR - 1) / JX_NR * JX_NR : JX_NC;
  const size_t a_bytes = ((size_t)(mc > 0 ? mc : JX_MR) * kc * sizeof(float) + 63) / 64 * 64;
  const size_t b_bytes = ((size_t)(nc > 0 ? nc : JX_NR) * kc * sizeof(float) + 63) / 64 * 64;
  w->a = (float *)aligned_alloc(64, a_bytes);
  w->b = (float *)aligned_alloc(64, b_bytes);
  return w->a && w->b;
}

static void jx_sgemm_buffers_free(jx_sgemm_buffers *w) {
  free(w->a);
  free(w->b);
}

#if JX_IR_OUTER
#define JX_SGEMM_TILES                                                                                            \
  for (int64_t ir = 0; ir < mc; ir += JX_MR) {                                                                    \
    const int mr = (int)(mc - ir < JX_MR ? mc - ir : JX_MR);                                                      \
    for (int64_t jr = 0; jr < nc; jr += JX_NR) {                                                                  \
      const int nr = (int)(nc - jr < JX_NR ? nc - jr : JX_NR);                                                    \
      jx_sgemm_micro(kc, w->a + ir * kc, w->b + jr * kc, C + (ic + ir) * ldc + jc + jr, ldc, mr, nr, pc == 0);    \
    }                                                                                                             \
  }
#else
#define JX_SGEMM_TILES                                                                                            \
  for (int64_t jr = 0; jr < nc; jr += JX_NR) {                                                                    \
    const int nr = (int)(nc - jr < JX_NR ? nc - jr : JX_NR);                                                      \
    for (int64_t ir = 0; ir < mc; ir += JX_MR) {                                                                  \
      const int mr = (int)(mc - ir < JX_MR ? mc - ir : JX_MR);                                                    \
      jx_sgemm_micro(kc, w->a + ir * kc, w->b + jr * kc, C + (ic + ir) * ldc + jc + jr, ldc, mr, nr, pc == 0);    \
    }                                                                                                             \
  }
#endif

/* C[m_lo:m_hi, n_lo:n_hi] (row stride ldc) = A . B, A [M, K] by strides (sam, sak), B [K, N] by (sbk, sbn). */
#define JX_SGEMM_RANGE(SUFFIX, T)                                                                                 \
  static void jx_sgemm_range##SUFFIX(int64_t K, const T *A, int64_t sam, int64_t sak, const T *B, int64_t sbk,     \
                                     int64_t sbn, float *C, int64_t ldc, int64_t m_lo, int64_t m_hi,             \
                                     int64_t n_lo, int64_t n_hi, jx_sgemm_buffers *w) {                          \
    if (m_hi <= m_lo || n_hi <= n_lo) return;                                                                     \
    if (K == 0) {                                                                                                 \
      for (int64_t i = m_lo; i < m_hi; i++)                                                                       \
        for (int64_t j = n_lo; j < n_hi; j++) C[i * ldc + j] = 0;                                      \
      return;                                                                                                     \
    }                                                                                                             \
    for (int64_t jc = n_lo; jc < n_hi; jc += JX_NC) {                                                             \
      const int64_t nc = n_hi - jc < JX_NC ? n_hi - jc : JX_NC;                                                   \
      for (int64_t pc = 0; pc < K; pc += JX_KC) {                                                                 \
        const int64_t kc = K - pc < JX_KC ? K - pc : JX_KC;                                                       \
        jx_sgemm_pack_b##SUFFIX(B + pc * sbk + jc * sbn, sbk, sbn, kc, nc, w->b);                                 \
        for (int64_t ic = m_lo; ic < m_hi; ic += JX_MC) {                                                         \
          const int64_t mc = m_hi - ic < JX_MC ? m_hi - ic : JX_MC;                                               \
          jx_sgemm_pack_a##SUFFIX(A + ic * sam + pc * sak, sam, sak, mc, kc, w->a);                               \
          JX_SGEMM_TILES                                                                                          \
        }                                                                                                         \
      }                                                                                                           \
    }                                                                                                             \
  }

/* How a batch of B [M, N] products is split over `threads`: items of (batch, row chunk, column chunk). */
typedef struct {
  int64_t m_chunks, n_chunks, items;
} jx_sgemm_split;

static jx_sgemm_split jx_sgemm_plan(int64_t B, int64_t M, int64_t N, int64_t threads) {
  jx_sgemm_split s = {1, 1, B};
  if (B >= threads) return s;
  const int64_t want = (threads + B - 1) / B;
  const int64_t m_strips = (M + JX_MR - 1) / JX_MR, n_strips = (N + JX_NR - 1) / JX_NR;
  s.m_chunks = want < m_strips ? want : m_strips;
  if (s.m_chunks < 1) s.m_chunks = 1;
  if (s.m_chunks < want) {
    int64_t rest = (want + s.m_chunks - 1) / s.m_chunks;
    s.n_chunks = rest < n_strips ? rest : n_strips;
    if (s.n_chunks < 1) s.n_chunks = 1;
  }
  s.items = B * s.m_chunks * s.n_chunks;
  return s;
}

/* Item `it` of a split: its batch and its [m_lo, m_hi) x [n_lo, n_hi) range (row chunks in whole MR strips). */
static void jx_sgemm_item(jx_sgemm_split s, int64_t it, int64_t M, int64_t N, int64_t *b, int64_t *m_lo, int64_t *m_hi,
                          int64_t *n_lo, int64_t *n_hi) {
  const int64_t nc = it % s.n_chunks, mc = (it / s.n_chunks) % s.m_chunks;
  *b = it / (s.n_chunks * s.m_chunks);
  const int64_t m_strips = (M + JX_MR - 1) / JX_MR, n_strips = (N + JX_NR - 1) / JX_NR;
  *m_lo = m_strips * mc / s.m_chunks * JX_MR;
  *m_hi = m_strips * (mc + 1) / s.m_chunks * JX_MR;
  if (*m_hi > M) *m_hi = M;
  *n_lo = n_strips * nc / s.n_chunks * JX_NR;
  *n_hi = n_strips * (nc + 1) / s.n_chunks * JX_NR;
  if (*n_hi > N) *n_hi = N;
}

JX_SGEMM_RANGE(_f32, float)
JX_SGEMM_RANGE(_f16, jx_u16)
JX_SGEMM_RANGE(_bf16, jx_u16)

/* C[m_lo:m_hi, n_lo:n_hi] (row stride ldc) += A . B, or -= A . B when `negate`: the trailing updates of
   render/linalg-blocked.ts's blocked factorizations (-=) and render/conv.ts's convolutions as a GEMM per output
   pixel (+=). For -=, A is packed negated, so every tile adds its k-ordered sum of -a.b to C. */
static void jx_sgemm_update_f32(int64_t K, const float *A, int64_t sam, int64_t sak, const float *B, int64_t sbk,
                                int64_t sbn, float *C, int64_t ldc, int64_t m_lo, int64_t m_hi, int64_t n_lo,
                                int64_t n_hi, jx_sgemm_buffers *w, int negate) {
  if (m_hi <= m_lo || n_hi <= n_lo || K <= 0) return;
  for (int64_t jc = n_lo; jc < n_hi; jc += JX_NC) {
    const int64_t nc = n_hi - jc < JX_NC ? n_hi - jc : JX_NC;
    for (int64_t pc = 0; pc < K; pc += JX_KC) {
      const int64_t kc = K - pc < JX_KC ? K - pc : JX_KC;
      jx_sgemm_pack_b_f32(B + pc * sbk + jc * sbn, sbk, sbn, kc, nc, w->b);
      for (int64_t ic = m_lo; ic < m_hi; ic += JX_MC) {
        const int64_t mc = m_hi - ic < JX_MC ? m_hi - ic : JX_MC;
        jx_sgemm_pack_a_f32(A + ic * sam + pc * sak, sam, sak, mc, kc, w->a);
        if (negate) {
          const int64_t packed = (mc + JX_MR - 1) / JX_MR * JX_MR * kc;
          for (int64_t i = 0; i < packed; i++) w->a[i] = -w->a[i];
        }
        for (int64_t ir = 0; ir < mc; ir += JX_MR) {
          const int mr = (int)(mc - ir < JX_MR ? mc - ir : JX_MR);
          for (int64_t jr = 0; jr < nc; jr += JX_NR) {
            const int nr = (int)(nc - jr < JX_NR ? nc - jr : JX_NR);
            jx_sgemm_micro(kc, w->a + ir * kc, w->b + jr * kc, C + (ic + ir) * ldc + jc + jr, ldc, mr, nr, 0);
          }
        }
      }
    }
  }
}


static void jx_sgemm_sub_f32(int64_t K, const float *A, int64_t sam, int64_t sak, const float *B, int64_t sbk,
                             int64_t sbn, float *C, int64_t ldc, int64_t m_lo, int64_t m_hi, int64_t n_lo,
                             int64_t n_hi, jx_sgemm_buffers *w) {
  jx_sgemm_update_f32(K, A, sam, sak, B, sbk, sbn, C, ldc, m_lo, m_hi, n_lo, n_hi, w, 1);
}

#endif
