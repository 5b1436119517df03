/* The prelude of every generated CUDA kernel (lib/compiler/render/cuda.ts):
   the CUDA target layer of jaxon_common.h, plus what only the GPU needs
   (16-byte vector types, warp shuffles of any accumulator type). No system
   #include: NVRTC compiles it with only its builtins (math functions,
   intrinsics), so the fixed-width types are our own `jx_` names, NaN and
   infinity come from bit patterns, and float operations go through the
   `__f*_rn` / `__d*_rn` intrinsics, which are never contracted into an FMA.
   Handed to NVRTC as in-memory headers (runtime/kernel-headers.ts), part of
   every kernel cache key. Inline PTX sits behind `#ifdef JX_EMULATED`, which
   jaxon's emulated GPU defines (cuda/emulator/jaxon_emu.h), with exact
   emulated equivalents. Include guards let many kernels share one
   translation unit (nvcc checks, dumps). */
#ifndef JX_CUDA_PRELUDE
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
#define JX_FN JX_DEVICE
#define JX_INFF __int_as_float(0x7f800000)
#define JX_NANF __int_as_float(0x7fc00000)
#define JX_INF __longlong_as_double(0x7ff0000000000000ll)
#define JX_NAN __longlong_as_double(0x7ff8000000000000ll)
#define JX_F2U(x) __float_as_uint(x)
#define JX_U2F(x) __uint_as_float(x)
#define JX_D2U(x) ((jx_u64)__double_as_longlong(x))
#define JX_U2D(x) __longlong_as_double((jx_i64)(x))
#define JX_POPC(x) __popc((jx_u32)(x))
#define JX_CLZ(x) __clz((jx_i32)(jx_u32)(x))
#define JX_FMUL(a, b) __fmul_rn(a, b)
#define JX_FDIV(a, b) __fdiv_rn(a, b)
#define JX_DMUL(a, b) __dmul_rn(a, b)
#define JX_DDIV(a, b) __ddiv_rn(a, b)
#define JX_ISFINITEF(x) jx_isfinitef(x)
/* loops over axes: their trip counts are constants here, so they unroll into straight-line code */
#define JX_UNROLL _Pragma("unroll")
/* a one-thread loop kept rolled: unrolled at its constant trip count it would take registers the block's other loops need */
#define JX_NO_UNROLL _Pragma("unroll 1")
#define JX_MAX_RANK 32
/* N elements of T moved by one aligned load or store (16 bytes at most: ld.global.v4) */
template <typename T, int N> struct alignas(sizeof(T) * N) jx_vec { T v[N]; };
JX_DEVICE int jx_isfinitef(float x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }
JX_DEVICE int jx_isfinited(double x) { return ((jx_u64)__double_as_longlong(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }
/* 16-bit float conversions by the hardware (IEEE round to nearest even, subnormals kept); NaNs as the C prelude
   writes them (jx_nan2h): their sign and payload kept both ways, so a float16 NaN survives the trip through float */
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
JX_FN jx_u16 jx_nan2h(jx_u32 x); /* jaxon_common.h */
JX_DEVICE jx_u16 jx_f2h(float f) {
  if (f != f) return jx_nan2h(__float_as_uint(f));
#ifdef JX_EMULATED
  return jx_emu_float_to_half_rn(f);
#else
  jx_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
}
#include "jaxon_common.h"
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
