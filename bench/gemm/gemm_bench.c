/* Standalone GEMM benchmark for cuda/kernels/jaxon_gemm.h (issue 16 item 3): times C = A . B for square f32
   matrices through jx_sgemm_plan / jx_sgemm_item / jx_sgemm_range_f32, exactly as the rendered dot kernel
   (lib/compiler/render/c.ts gemmDot) drives them, and prints GFLOP/s as JSON. Compile with the kernels' flags
   (bench/gemm/standalone.py): gcc -O3 -std=c11 -fopenmp -ffp-contract=off -fno-math-errno -march=native -I cuda/kernels.
   Usage: gemm_bench N [reps]; threads from OMP_NUM_THREADS. */
#define _POSIX_C_SOURCE 199309L
#include "jaxon_c.h"
#include <omp.h>
#include <stdio.h>
#include <time.h>

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void gemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C) {
#pragma omp parallel
  {
    jx_sgemm_buffers w;
    jx_sgemm_buffers_alloc(&w, M, N, K);
    const jx_sgemm_split s = jx_sgemm_plan(1, M, N, omp_get_num_threads());
#pragma omp for schedule(static)
    for (int64_t it = 0; it < s.items; it++) {
      int64_t ib, m_lo, m_hi, n_lo, n_hi;
      jx_sgemm_item(s, it, M, N, &ib, &m_lo, &m_hi, &n_lo, &n_hi);
      jx_sgemm_range_f32(K, A, K, 1, B, N, 1, C, N, m_lo, m_hi, n_lo, n_hi, &w);
    }
    jx_sgemm_buffers_free(&w);
  }
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 1024;
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  float *A = malloc(sizeof(float) * n * n), *B = malloc(sizeof(float) * n * n), *C = malloc(sizeof(float) * n * n);
  uint32_t seed = 12345;
  for (int64_t i = 0; i < n * n; i++) {
    seed = seed * 1664525u + 1013904223u;
    A[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    seed = seed * 1664525u + 1013904223u;
    B[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
  gemm(n, n, n, A, B, C);
  /* wall time, and the process's CPU time over threads: on a shared machine the second leaves out the time this
     process waited for a core (a single-threaded run is then insensitive to load, but for cache sharing) */
  double *t = malloc(sizeof(double) * reps), *cpu = malloc(sizeof(double) * reps);
  for (int r = 0; r < reps; r++) {
    const double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    gemm(n, n, n, A, B, C);
    t[r] = clock_s(CLOCK_MONOTONIC) - t0;
    cpu[r] = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / omp_get_max_threads();
  }
  qsort(t, reps, sizeof(double), cmp);
  qsort(cpu, reps, sizeof(double), cmp);
  /* a spot check against a double-precision dot, so a broken kernel cannot post a figure */
  double worst = 0;
  for (int probe = 0; probe < 64; probe++) {
    const int64_t i = (probe * 7919) % n, j = (probe * 104729) % n;
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) ref += (double)A[i * n + k] * B[k * n + j], mag += fabs((double)A[i * n + k] * B[k * n + j]);
    const double err = fabs(C[i * n + j] - ref) / (mag * n * 6e-8 + 1e-30);
    if (err > worst) worst = err;
  }
  const double flop = 2.0 * n * n * n;
  printf("{\"n\": %lld, \"threads\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"gflops_median\": %.1f, "
         "\"gflops_best\": %.1f, \"cpu_gflops_median\": %.1f, \"err_over_bound\": %.3g}\n",
         (long long)n, omp_get_max_threads(), t[reps / 2] * 1e3, t[0] * 1e3, t[reps - 1] * 1e3, flop / t[reps / 2] * 1e-9,
         flop / t[0] * 1e-9, flop / cpu[reps / 2] * 1e-9, worst);
  return worst > 1 ? 1 : 0;
}
