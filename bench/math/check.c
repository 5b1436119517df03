/* The float math of cuda/kernels/jaxon_math.h against double libm (issue 16), offline (the test suite samples it:
   test/cpu-math.test.ts). Build and run from the repository root:
     gcc -O3 -march=native -fopenmp -ffp-contract=off -fno-math-errno -Icuda/kernels bench/math/check.c -o /tmp/check -lm
     /tmp/check [function...]            every one of the 2^32 floats through each unary function
     /tmp/check --step 257 [function...] every 257th bit pattern (a quick look)
     /tmp/check --pairs N pow atan2      N random and structured pairs for the binary ones (default 4e7)
     /tmp/check --speed                  ns per element on 2^24 floats: the vectorized jx_ loop against glibc's
   The jx_ functions run in `#pragma omp simd` loops compiled like the generated kernels', so what is checked is the
   vectorized code. Errors are in ulps of the float result; a NaN or an infinity on one side only counts as infinite. */
#include "jaxon_c.h"
#include <stdio.h>
#include <omp.h>
#include <time.h>
#undef expf
#undef exp2f
#undef expm1f
#undef logf
#undef log1pf
#undef tanhf
#undef sinf
#undef cosf
#undef tanf
#undef asinf
#undef acosf
#undef atanf
#undef atan2f
#undef sinhf
#undef coshf
#undef asinhf
#undef acoshf
#undef atanhf
#undef cbrtf
#undef erff
#undef powf

static double logistic_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static float logistic_glibc(float x) { return 1.0f / (1.0f + expf(-x)); }

#define UNARY(X) \
  X(exp, jx_expf(x), exp, expf) X(exp2, jx_exp2f(x), exp2, exp2f) X(expm1, jx_expm1f(x), expm1, expm1f) \
  X(log, jx_logf(x), log, logf) X(log1p, jx_log1pf(x), log1p, log1pf) X(tanh, jx_tanhf(x), tanh, tanhf) \
  X(sin, jx_sinf(x), sin, sinf) X(cos, jx_cosf(x), cos, cosf) X(tan, jx_tanf(x), tan, tanf) \
  X(asin, jx_asinf(x), asin, asinf) X(acos, jx_acosf(x), acos, acosf) X(atan, jx_atanf(x), atan, atanf) \
  X(sinh, jx_sinhf(x), sinh, sinhf) X(cosh, jx_coshf(x), cosh, coshf) X(asinh, jx_asinhf(x), asinh, asinhf) \
  X(acosh, jx_acoshf(x), acosh, acoshf) X(atanh, jx_atanhf(x), atanh, atanhf) X(cbrt, jx_cbrtf(x), cbrt, cbrtf) \
  X(erf, jx_erff(x), erf, erff) X(logistic, 1.0f / (1.0f + jx_expf(-x)), logistic_d, logistic_glibc)

#define KERNELS(name, expr, ref, glibc) \
  static void jx_loop_##name(float *restrict out, const float *restrict in, int64_t n) { \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) { const float x = in[i]; out[i] = expr; } \
  } \
  static void glibc_loop_##name(float *restrict out, const float *restrict in, int64_t n) { \
    for (int64_t i = 0; i < n; i++) out[i] = glibc(in[i]); \
  }
UNARY(KERNELS)

typedef struct { const char *name; void (*jx)(float *, const float *, int64_t); void (*glibc)(float *, const float *, int64_t); double (*ref)(double); } unary_t;
#define ENTRY(name, expr, ref, glibc) { #name, jx_loop_##name, glibc_loop_##name, ref },
static const unary_t unaries[] = { UNARY(ENTRY) };

/* the first pass of a blocked kernel (render/c.ts): the fast trigonometry, which holds below 2^20 */
#define FAST_LOOP(name) \
  static void jx_fast_loop_##name(float *restrict out, const float *restrict in, int64_t n) { \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) out[i] = jx_##name##f_fast(in[i]); \
  }
FAST_LOOP(sin) FAST_LOOP(cos) FAST_LOOP(tan)

static void jx_loop_pow(float *restrict out, const float *restrict a, const float *restrict b, int64_t n) {
  _Pragma("omp simd") for (int64_t i = 0; i < n; i++) out[i] = jx_powf(a[i], b[i]);
}
static void jx_loop_atan2(float *restrict out, const float *restrict a, const float *restrict b, int64_t n) {
  _Pragma("omp simd") for (int64_t i = 0; i < n; i++) out[i] = jx_atan2f(a[i], b[i]);
}

/* |got - ref| in ulps of the float binade of ref */
static double ulp_error(float got, double ref) {
  if (ref != ref) return got != got ? 0 : INFINITY;
  if (got != got) return INFINITY;
  const float rounded = (float)ref;
  if (isinf(rounded) || isinf(got)) return got == rounded ? 0 : INFINITY;
  int e;
  frexp(ref, &e);
  const double ulp = ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
  return fabs((double)got - ref) / ulp;
}

typedef struct { double worst; float at, at2; double mean; } result_t;

static result_t check_unary(const unary_t *f, uint64_t step) {
  result_t total = { 0, 0, 0, 0 };
  double sum = 0;
  uint64_t count = 0;
  const int64_t block = 1 << 16;
#pragma omp parallel
  {
    float *in = malloc(block * 4), *out = malloc(block * 4);
    double worst = -1, local_sum = 0;
    uint64_t local_count = 0;
    float at = 0;
#pragma omp for schedule(dynamic, 16)
    for (int64_t start = 0; start < (int64_t)(0x100000000ull / step); start += block) {
      int64_t n = 0;
      for (int64_t k = start; k < start + block && (uint64_t)k * step < 0x100000000ull; k++) in[n++] = JX_U2F((jx_u32)((uint64_t)k * step));
      f->jx(out, in, n);
      for (int64_t i = 0; i < n; i++) {
        /* logistic is rendered as 1/(1 + exp(-x)): from -88.72 down, exp(-x) overflows and the result is 0, not a subnormal */
        if (f->ref == logistic_d && in[i] <= -88.72283935546875f) continue;
        const double e = ulp_error(out[i], f->ref((double)in[i]));
        if (e > worst) { worst = e; at = in[i]; }
        if (e < 1e9) { local_sum += e; local_count++; }
      }
    }
#pragma omp critical
    {
      if (worst > total.worst) { total.worst = worst; total.at = at; }
      sum += local_sum;
      count += local_count;
    }
    free(in);
    free(out);
  }
  total.mean = sum / (double)count;
  return total;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void) {
  rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
  return rng_state;
}

/* random bit patterns, random values in [-4, 4] and [0, 2], special values, and integer y for negative x */
static void fill_pairs(float *a, float *b, int64_t n, int atan2) {
  static const float specials[] = { 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f, INFINITY, -INFINITY, NAN,
                                    1e-45f, -1e-45f, 1e-40f, 1.17549435e-38f, 3.4028235e38f, -3.4028235e38f, 1.0000001f, 0.99999994f, 10.0f, 0.1f };
  const int ns = sizeof specials / sizeof specials[0];
  for (int64_t i = 0; i < n; i++) {
    const uint64_t r = next_random();
    switch (r % 8) {
      case 0: case 1: a[i] = JX_U2F((jx_u32)r); b[i] = JX_U2F((jx_u32)(r >> 32)); break;
      case 2: a[i] = (float)((double)(jx_u32)r / 4294967296.0 * 8 - 4); b[i] = (float)((double)(jx_u32)(r >> 32) / 4294967296.0 * 8 - 4); break;
      case 3: a[i] = (float)((double)(jx_u32)r / 4294967296.0 * 2); b[i] = JX_U2F((jx_u32)(r >> 32) >> 3 | 0x38000000u) * ((r >> 62) ? 1 : -1); break;
      case 4: a[i] = specials[(r >> 8) % ns]; b[i] = specials[(r >> 20) % ns]; break;
      case 5: a[i] = specials[(r >> 8) % ns]; b[i] = JX_U2F((jx_u32)(r >> 32)); break;
      case 6: a[i] = JX_U2F((jx_u32)(r >> 32)); b[i] = specials[(r >> 8) % ns]; break;
      default:
        /* small integers of exact bases: pow(3, 5), pow(-2, -3), ... */
        a[i] = atan2 ? (float)((int)(r % 2001) - 1000) : (float)((int)((r >> 8) % 41) - 20) * ((r >> 40) & 1 ? 0.5f : 1.0f);
        b[i] = (float)((int)((r >> 16) % 61) - 30);
    }
    /* quiet NaNs only: glibc's pow(1, signaling NaN) is NaN, C99's pow(1, NaN) is 1 */
    if (a[i] != a[i]) a[i] = JX_U2F(JX_F2U(a[i]) | 0x00400000u);
    if (b[i] != b[i]) b[i] = JX_U2F(JX_F2U(b[i]) | 0x00400000u);
  }
}

static void check_binary(const char *name, int64_t total) {
  const int64_t block = 1 << 20;
  float *a = malloc(block * 4), *b = malloc(block * 4), *out = malloc(block * 4);
  double worst = -1, sum = 0;
  uint64_t count = 0, inexact_integer = 0;
  float wa = 0, wb = 0, wgot = 0;
  const int is_atan2 = strcmp(name, "atan2") == 0;
  for (int64_t done = 0; done < total; done += block) {
    fill_pairs(a, b, block, is_atan2);
    (is_atan2 ? jx_loop_atan2 : jx_loop_pow)(out, a, b, block);
#pragma omp parallel for reduction(+ : sum, count, inexact_integer)
    for (int64_t i = 0; i < block; i++) {
      const double ref = is_atan2 ? atan2((double)a[i], (double)b[i]) : pow((double)a[i], (double)b[i]);
      const float glibc = is_atan2 ? atan2f(a[i], b[i]) : powf(a[i], b[i]);
      double e = ulp_error(out[i], ref);
      /* C99's special cases: bit for bit what glibc gives (signs of zeros included), NaN for NaN */
      const int special = a[i] != a[i] || b[i] != b[i] || isinf(a[i]) || isinf(b[i]) || a[i] == 0 || (is_atan2 ? b[i] == 0 : (b[i] == 0 || fabsf(a[i]) == 1));
      if (special)
        if (!(JX_F2U(out[i]) == JX_F2U(glibc) || (out[i] != out[i] && glibc != glibc))) e = INFINITY;
      /* exact results stay exact */
      if ((double)(float)ref == ref && out[i] != (float)ref && ref == ref) inexact_integer++;
      if (e < 1e9) { sum += e; count++; }
      if (e > worst) {
#pragma omp critical
        if (e > worst) { worst = e; wa = a[i]; wb = b[i]; wgot = out[i]; }
      }
    }
  }
  printf("%-8s max %.4f ulp at (%a, %a) = (%.9g, %.9g): got %.9g, double %.17g; mean %.4f; exact results missed: %llu; %lld pairs\n",
         name, worst, wa, wb, wa, wb, wgot, is_atan2 ? atan2(wa, wb) : pow(wa, wb),
         sum / (double)count, (unsigned long long)inexact_integer, (long long)total);
  free(a); free(b); free(out);
}

static double seconds(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void speed(void) {
  const int64_t n = 1 << 24;
  float *in = malloc(n * 4), *in2 = malloc(n * 4), *out = malloc(n * 4);
  printf("ns per element, 2^24 floats, one thread (median of 5); inputs: normal(0, 1)-like, and |x| < 1 for asin/acos/atanh, x >= 1 for acosh\n");
  printf("| function | jx_ (vectorized) | glibc (scalar) | speed-up |\n|---|---:|---:|---:|\n");
  for (size_t f = 0; f < sizeof unaries / sizeof unaries[0]; f++) {
    const char *name = unaries[f].name;
    for (int64_t i = 0; i < n; i++) {
      const double u = (double)(next_random() >> 11) / 9007199254740992.0, v = (double)(next_random() >> 11) / 9007199254740992.0;
      double g = sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
      if (!strcmp(name, "asin") || !strcmp(name, "acos") || !strcmp(name, "atanh")) g = 2 * v - 1;
      if (!strcmp(name, "acosh")) g = 1 + fabs(g) * 10;
      in[i] = (float)g;
    }
    double tj[5], tg[5];
    for (int r = 0; r < 5; r++) {
      double t0 = seconds(); unaries[f].jx(out, in, n); double t1 = seconds(); unaries[f].glibc(out, in, n); double t2 = seconds();
      tj[r] = (t1 - t0) / n * 1e9; tg[r] = (t2 - t1) / n * 1e9;
    }
    for (int i = 0; i < 5; i++) for (int j = i + 1; j < 5; j++) { if (tj[j] < tj[i]) { double t = tj[i]; tj[i] = tj[j]; tj[j] = t; } if (tg[j] < tg[i]) { double t = tg[i]; tg[i] = tg[j]; tg[j] = t; } }
    printf("| %s | %.2f | %.2f | %.1fx |\n", name, tj[2], tg[2], tg[2] / tj[2]);
  }
  {
    void (*fast[3])(float *, const float *, int64_t) = { jx_fast_loop_sin, jx_fast_loop_cos, jx_fast_loop_tan };
    static const char *names[3] = { "sin", "cos", "tan" };
    void (*glibc[3])(float *, const float *, int64_t) = { glibc_loop_sin, glibc_loop_cos, glibc_loop_tan };
    for (int64_t i = 0; i < n; i++) {
      const double u = (double)(next_random() >> 11) / 9007199254740992.0, v = (double)(next_random() >> 11) / 9007199254740992.0;
      in[i] = (float)(sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v));
    }
    for (int f = 0; f < 3; f++) {
      double tj[5], tg[5];
      for (int r = 0; r < 5; r++) {
        double t0 = seconds(); fast[f](out, in, n); double t1 = seconds(); glibc[f](out, in, n); double t2 = seconds();
        tj[r] = (t1 - t0) / n * 1e9; tg[r] = (t2 - t1) / n * 1e9;
      }
      for (int i = 0; i < 5; i++) for (int j = i + 1; j < 5; j++) { if (tj[j] < tj[i]) { double t = tj[i]; tj[i] = tj[j]; tj[j] = t; } if (tg[j] < tg[i]) { double t = tg[i]; tg[i] = tg[j]; tg[j] = t; } }
      printf("| %s, fast pass (blocked kernels) | %.2f | %.2f | %.1fx |\n", names[f], tj[2], tg[2], tg[2] / tj[2]);
    }
  }
  for (int which = 0; which < 2; which++) {
    for (int64_t i = 0; i < n; i++) { in[i] = (float)((next_random() >> 40) / 16777216.0 * 4); in2[i] = (float)((double)(next_random() >> 40) / 16777216.0 * 8 - 4); }
    double tj[5], tg[5];
    for (int r = 0; r < 5; r++) {
      double t0 = seconds();
      (which ? jx_loop_atan2 : jx_loop_pow)(out, in, in2, n);
      double t1 = seconds();
      for (int64_t i = 0; i < n; i++) out[i] = which ? atan2f(in[i], in2[i]) : powf(in[i], in2[i]);
      double t2 = seconds();
      tj[r] = (t1 - t0) / n * 1e9; tg[r] = (t2 - t1) / n * 1e9;
    }
    for (int i = 0; i < 5; i++) for (int j = i + 1; j < 5; j++) { if (tj[j] < tj[i]) { double t = tj[i]; tj[i] = tj[j]; tj[j] = t; } if (tg[j] < tg[i]) { double t = tg[i]; tg[i] = tg[j]; tg[j] = t; } }
    printf("| %s | %.2f | %.2f | %.1fx |\n", which ? "atan2" : "pow", tj[2], tg[2], tg[2] / tj[2]);
  }
}

int main(int argc, char **argv) {
  uint64_t step = 1;
  int64_t pairs = 40000000;
  const char *wanted[64];
  int nwanted = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--step") && i + 1 < argc) step = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = (int64_t)strtod(argv[++i], NULL);
    else if (!strcmp(argv[i], "--speed")) { speed(); return 0; }
    else if (nwanted < 64) wanted[nwanted++] = argv[i];
  }
  for (size_t f = 0; f < sizeof unaries / sizeof unaries[0]; f++) {
    int on = nwanted == 0;
    for (int i = 0; i < nwanted; i++) on |= !strcmp(wanted[i], unaries[f].name);
    if (!on) continue;
    const double t = seconds();
    const result_t r = check_unary(&unaries[f], step);
    float got;
    unaries[f].jx(&got, &r.at, 1);
    printf("%-8s max %.4f ulp at %a (%.9g): got %.9g, double %.17g; mean %.4f ulp; %s floats, %.0f s\n", unaries[f].name, r.worst, r.at,
           r.at, got, unaries[f].ref(r.at), r.mean, step == 1 ? "all 2^32" : "sampled", seconds() - t);
    fflush(stdout);
  }
  for (int i = 0; i < nwanted; i++) if (!strcmp(wanted[i], "pow") || !strcmp(wanted[i], "atan2")) check_binary(wanted[i], pairs);
  if (nwanted == 0) { check_binary("pow", pairs); check_binary("atan2", pairs); }
  return 0;
}
