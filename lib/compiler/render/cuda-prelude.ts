// The prelude every generated CUDA kernel starts with: the CUDA twin of
// c-prelude.ts (same helper names and the same bit-level semantics: 16-bit
// float conversion rounding to nearest even, XLA's integer division by zero,
// saturating float-to-int conversion, NaN-propagating max/min,
// reduce_precision), plus what only the GPU needs (16-byte vector types,
// warp shuffles of any accumulator type). No #include: NVRTC compiles it with
// only its builtins (math functions, intrinsics), so the fixed-width types are
// our own `jx_` names and NaN/infinity come from bit patterns. Inline PTX
// sits behind `#ifdef JX_EMULATED`, which jaxon's emulated GPU defines
// (cuda/emulator/jaxon_emu.h), with exact emulated equivalents. An include
// guard lets many kernels share one translation unit (nvcc checks, dumps).

export const CUDA_PRELUDE = String.raw`#ifndef JX_CUDA_PRELUDE
#define JX_CUDA_PRELUDE
typedef signed char jx_i8;
typedef unsigned char jx_u8;
typedef short jx_i16;
typedef unsigned short jx_u16;
typedef int jx_i32;
typedef unsigned int jx_u32;
typedef long long jx_i64;
typedef unsigned long long jx_u64;
#define JX_DEVICE static __device__ __forceinline__
#define JX_INFF __int_as_float(0x7f800000)
#define JX_NANF __int_as_float(0x7fc00000)
#define JX_INF __longlong_as_double(0x7ff0000000000000ll)
#define JX_NAN __longlong_as_double(0x7ff8000000000000ll)
/* N elements of T moved by one aligned load or store (16 bytes at most: ld.global.v4) */
template <typename T, int N> struct alignas(sizeof(T) * N) jx_vec { T v[N]; };
JX_DEVICE int jx_isfinitef(float x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }
JX_DEVICE int jx_isfinited(double x) { return ((jx_u64)__double_as_longlong(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }
/* 16-bit float conversions by the hardware (IEEE round to nearest even, subnormals kept); NaNs as the C prelude
   writes them: float16 → float keeps the payload, float → float16 gives the quiet NaN 0x7e00 with the sign */
JX_DEVICE float jx_h2f(jx_u16 h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) return __uint_as_float(((jx_u32)(h & 0x8000u) << 16) | 0x7f800000u | ((jx_u32)(h & 0x3ffu) << 13));
#ifdef JX_EMULATED
  return jx_emu_half_to_float(h);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#endif
}
JX_DEVICE jx_u16 jx_f2h(float f) {
  if (f != f) return (jx_u16)(((__float_as_uint(f) >> 16) & 0x8000u) | 0x7e00u);
#ifdef JX_EMULATED
  return jx_emu_float_to_half_rn(f);
#else
  jx_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
}
/* double → float rounding to odd: a later rounding to float16 then rounds once, as XLA's f64→f16 convert does */
JX_DEVICE float jx_d2f_odd(double d) {
  float f = (float)d;
  if ((double)f != d && jx_isfinitef(f)) {
    jx_u32 b = __float_as_uint(f);
    if (!(b & 1u)) { b = fabs((double)f) < fabs(d) ? b + 1u : b - 1u; f = __uint_as_float(b); }
  }
  return f;
}
JX_DEVICE float jx_bf2f(jx_u16 b) { return __uint_as_float((jx_u32)b << 16); }
JX_DEVICE jx_u16 jx_f2bf(float f) {
  jx_u32 x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (jx_u16)((x >> 16) | 0x40u);
  return (jx_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
JX_DEVICE float jx_maxf(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
JX_DEVICE float jx_minf(float a, float b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
JX_DEVICE double jx_maxd(double a, double b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
JX_DEVICE double jx_mind(double a, double b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
JX_DEVICE float jx_signf(float x) { return x != x ? x : (float)((x > 0) - (x < 0)); }
JX_DEVICE double jx_signd(double x) { return x != x ? x : (double)((x > 0) - (x < 0)); }
JX_DEVICE float jx_nextafter_f16(float a, float b) {
  if (a != a || b != b) return JX_NANF;
  if (a == b) return b;
  if (a == 0) return b > 0 ? 5.9604644775390625e-8f : -5.9604644775390625e-8f;
  jx_u16 h = jx_f2h(a);
  return jx_h2f((jx_u16)(((a < b) == (a > 0)) ? h + 1 : h - 1));
}
JX_DEVICE float jx_nextafter_bf16(float a, float b) {
  if (a != a || b != b) return JX_NANF;
  if (a == b) return b;
  if (a == 0) return jx_bf2f(b > 0 ? 0x0001u : 0x8001u);
  jx_u16 h = jx_f2bf(a);
  return jx_bf2f((jx_u16)(((a < b) == (a > 0)) ? h + 1 : h - 1));
}
/* XLA's ReducePrecision on float16 bits (5 exponent and 10 mantissa bits); NaN stays NaN */
JX_DEVICE float jx_reduce_precision_f16(float f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  jx_u32 x = jx_f2h(f);
  if (mantissa_bits < 10) {
    jx_u32 shift = 10 - mantissa_bits;
    jx_u32 last = (x >> shift) & 1u, bias = (1u << (shift - 1)) - 1u + last;
    x = (x + bias) & ~((1u << shift) - 1u) & 0xffffu;
  }
  if (exponent_bits < 5) {
    jx_i32 exponent = (jx_i32)((x >> 10) & 0x1fu) - 15;
    jx_i32 max_exponent = (1 << (exponent_bits - 1)) - 1, min_exponent = 1 - max_exponent;
    if (exponent > max_exponent) x = (x & 0x8000u) | 0x7c00u;
    else if (exponent < min_exponent) x &= 0x8000u;
  }
  return jx_h2f((jx_u16)x);
}
JX_DEVICE float jx_reduce_precisionf(float f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  jx_u32 x = __float_as_uint(f);
  if (mantissa_bits < 23) {
    jx_u32 shift = 23 - mantissa_bits;
    jx_u32 last = (x >> shift) & 1u, bias = (1u << (shift - 1)) - 1u + last;
    if ((x & 0x7fffffffu) <= 0x7f800000u) { x += bias; x &= ~((1u << shift) - 1u); }
  }
  if (exponent_bits < 8 && (x & 0x7fffffffu) <= 0x7f800000u) {
    jx_i32 exponent = (jx_i32)((x >> 23) & 0xffu) - 127;
    jx_i32 max_exponent = (1 << (exponent_bits - 1)) - 1, min_exponent = 1 - max_exponent;
    if (exponent > max_exponent) x = (x & 0x80000000u) | 0x7f800000u;
    else if (exponent < min_exponent) x &= 0x80000000u;
  }
  return __uint_as_float(x);
}
JX_DEVICE double jx_reduce_precisiond(double f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  jx_u64 x = (jx_u64)__double_as_longlong(f);
  if (mantissa_bits < 52) {
    jx_u64 shift = 52 - mantissa_bits;
    jx_u64 last = (x >> shift) & 1u, bias = (1ull << (shift - 1)) - 1u + last;
    if ((x & 0x7fffffffffffffffull) <= 0x7ff0000000000000ull) { x += bias; x &= ~((1ull << shift) - 1u); }
  }
  if (exponent_bits < 11 && (x & 0x7fffffffffffffffull) <= 0x7ff0000000000000ull) {
    jx_i64 exponent = (jx_i64)((x >> 52) & 0x7ffu) - 1023;
    jx_i64 max_exponent = (1ll << (exponent_bits - 1)) - 1, min_exponent = 1 - max_exponent;
    if (exponent > max_exponent) x = (x & 0x8000000000000000ull) | 0x7ff0000000000000ull;
    else if (exponent < min_exponent) x &= 0x8000000000000000ull;
  }
  return __longlong_as_double((jx_i64)x);
}
#define JX_INT_HELPERS(T, U, MIN, MAX, NAME) \
  JX_DEVICE T jx_div_##NAME(T a, T b) { if (b == 0) return (T)-1; if (MIN != 0 && a == (T)MIN && b == (T)-1) return a; return (T)(a / b); } \
  JX_DEVICE T jx_rem_##NAME(T a, T b) { if (b == 0) return a; if (MIN != 0 && a == (T)MIN && b == (T)-1) return 0; return (T)(a % b); } \
  JX_DEVICE T jx_fcast_##NAME(double x) { if (x != x) return 0; if (x <= (double)MIN) return (T)MIN; if (x >= (double)MAX) return (T)MAX; return (T)x; } \
  JX_DEVICE T jx_ipow_##NAME(T x, jx_i64 y) { U r = 1, b = (U)x; while (y > 0) { if (y & 1) r = (U)(r * b); b = (U)(b * b); y >>= 1; } return (T)r; }
JX_INT_HELPERS(jx_i8, jx_u32, -128, 127, i8)
JX_INT_HELPERS(jx_i16, jx_u32, -32768, 32767, i16)
JX_INT_HELPERS(jx_i32, jx_u32, (-2147483647 - 1), 2147483647, i32)
JX_INT_HELPERS(jx_u8, jx_u32, 0, 255, u8)
JX_INT_HELPERS(jx_u16, jx_u32, 0, 65535, u16)
JX_INT_HELPERS(jx_u32, jx_u32, 0, 4294967295u, u32)
JX_DEVICE float jx_ipowf(float x, jx_i64 y) { int neg = y < 0; float r = 1.0f, b = x; if (neg) y = -y; while (y > 0) { if (y & 1) r = __fmul_rn(r, b); b = __fmul_rn(b, b); y >>= 1; } return neg ? __fdiv_rn(1.0f, r) : r; }
JX_DEVICE double jx_ipowd(double x, jx_i64 y) { int neg = y < 0; double r = 1.0, b = x; if (neg) y = -y; while (y > 0) { if (y & 1) r = __dmul_rn(r, b); b = __dmul_rn(b, b); y >>= 1; } return neg ? __ddiv_rn(1.0, r) : r; }
/* butterfly shuffles of every accumulator type (64-bit values move as two 32-bit halves) */
JX_DEVICE jx_i32 jx_shfl_xor(jx_i32 v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
JX_DEVICE jx_u32 jx_shfl_xor(jx_u32 v, int m) { return (jx_u32)__shfl_xor_sync(0xffffffffu, (jx_i32)v, m); }
JX_DEVICE jx_i16 jx_shfl_xor(jx_i16 v, int m) { return (jx_i16)__shfl_xor_sync(0xffffffffu, (jx_i32)v, m); }
JX_DEVICE jx_u16 jx_shfl_xor(jx_u16 v, int m) { return (jx_u16)__shfl_xor_sync(0xffffffffu, (jx_i32)v, m); }
JX_DEVICE jx_i8 jx_shfl_xor(jx_i8 v, int m) { return (jx_i8)__shfl_xor_sync(0xffffffffu, (jx_i32)v, m); }
JX_DEVICE jx_u8 jx_shfl_xor(jx_u8 v, int m) { return (jx_u8)__shfl_xor_sync(0xffffffffu, (jx_i32)v, m); }
JX_DEVICE float jx_shfl_xor(float v, int m) { return __int_as_float(__shfl_xor_sync(0xffffffffu, __float_as_int(v), m)); }
JX_DEVICE jx_u64 jx_shfl_xor(jx_u64 v, int m) {
  jx_u32 lo = (jx_u32)__shfl_xor_sync(0xffffffffu, (jx_i32)(jx_u32)v, m), hi = (jx_u32)__shfl_xor_sync(0xffffffffu, (jx_i32)(jx_u32)(v >> 32), m);
  return ((jx_u64)hi << 32) | lo;
}
JX_DEVICE jx_i64 jx_shfl_xor(jx_i64 v, int m) { return (jx_i64)jx_shfl_xor((jx_u64)v, m); }
JX_DEVICE double jx_shfl_xor(double v, int m) { return __longlong_as_double((jx_i64)jx_shfl_xor((jx_u64)__double_as_longlong(v), m)); }
#endif
`;
