/* The prelude of every generated CPU kernel (lib/compiler/render/c.ts): the
   C target layer of jaxon_common.h (C11 <stdint.h> types, bit casts through
   memcpy, plain operators, which round each operation on their own because
   kernels compile with -ffp-contract=off), software 16-bit float conversion
   (round to nearest even, no toolkit headers), the OpenMP entry points the
   kernels call, and (jaxon_math.h) vectorizable float math in place of the C
   library's sinf, expf, powf, ... Found by the C compiler through -I (runtime/kernel-headers.ts);
   part of every kernel cache key. */
#ifndef JX_C_H
#define JX_C_H
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
int omp_get_num_threads(void);
int omp_get_thread_num(void);
#define JX_PARALLEL_THRESHOLD 32768
#define JX_MAX_RANK 32
/* loops over axes run their run-time rank here */
#define JX_UNROLL
#define JX_NO_UNROLL
#define JX_FN static inline
typedef int8_t jx_i8;
typedef uint8_t jx_u8;
typedef int16_t jx_i16;
typedef uint16_t jx_u16;
typedef int32_t jx_i32;
typedef uint32_t jx_u32;
typedef int64_t jx_i64;
typedef uint64_t jx_u64;
#define JX_NANF NAN
#define JX_ISFINITEF(x) isfinite(x)
#define JX_FMUL(a, b) ((a) * (b))
#define JX_FDIV(a, b) ((a) / (b))
#define JX_DMUL(a, b) ((a) * (b))
#define JX_DDIV(a, b) ((a) / (b))
JX_FN jx_u32 JX_F2U(float f) { jx_u32 u; memcpy(&u, &f, 4); return u; }
JX_FN float JX_U2F(jx_u32 u) { float f; memcpy(&f, &u, 4); return f; }
JX_FN jx_u64 JX_D2U(double d) { jx_u64 u; memcpy(&u, &d, 8); return u; }
JX_FN double JX_U2D(jx_u64 u) { double d; memcpy(&d, &u, 8); return d; }
/* population_count and clz of 32 bits (clz of 0 is 32, as CUDA's __clz) */
#define JX_POPC(x) __builtin_popcount((jx_u32)(x))
#define JX_CLZ(x) ((jx_u32)(x) ? __builtin_clz((jx_u32)(x)) : 32)
/* 1 when a test asks sorts to run without scratch memory, as when malloc fails (render/sort.ts) */
JX_FN int jx_sort_scratch_refused(void) { const char *e = getenv("JAXON_TEST_SORT_NO_SCRATCH"); return e && e[0] == '1'; }
/* sort keys (render/sort.ts): unsigned, ascending as JAX's float order; -0 as 0, every NaN above +inf */
JX_FN jx_u32 jx_radix_key_f32(float f) {
  jx_u32 u = JX_F2U(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if (u == 0x80000000u) u = 0;
  return (u >> 31) ? ~u : (u | 0x80000000u);
}
JX_FN jx_u64 jx_radix_key_f64(double f) {
  jx_u64 u = JX_D2U(f);
  if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return 0xffffffffffffffffull;
  if (u == 0x8000000000000000ull) u = 0;
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}
JX_FN float jx_h2f(jx_u16 h) {
  jx_u32 sign = (jx_u32)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0) {
    if (mantissa == 0) { bits = sign; }
    else { float f = (float)mantissa * 5.9604644775390625e-8f; return sign ? -f : f; }
  } else if (exponent == 31) { bits = sign | 0x7f800000u | (mantissa << 13); }
  else { bits = sign | ((exponent + 112) << 23) | (mantissa << 13); }
  return JX_U2F(bits);
}
JX_FN jx_u16 jx_nan2h(jx_u32 x); /* jaxon_common.h */
JX_FN jx_u16 jx_f2h(float f) {
  jx_u32 x = JX_F2U(f);
  jx_u32 sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return jx_nan2h(x);
  if (a == 0x7f800000u) return (jx_u16)(sign | 0x7c00u);
  if (a >= 0x477ff000u) return (jx_u16)(sign | 0x7c00u);
  if (a < 0x38800000u) {
    float scaled = fabsf(f) * 16777216.0f;
    float r = rintf(scaled);
    return (jx_u16)(sign | (jx_u32)r);
  }
  jx_u32 half = (((a >> 23) - 112) << 10) | ((a & 0x7fffffu) >> 13);
  jx_u32 rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) half += 1;
  return (jx_u16)(sign | half);
}
#include "jaxon_common.h"
#include "jaxon_gemm.h"
#include "jaxon_math.h"
#endif
