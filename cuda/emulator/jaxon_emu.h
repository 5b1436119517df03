// The emulation header: what jaxon's emulated NVRTC (nvrtc.cc) puts in front
// of every CUDA translation unit it compiles with the host C++ compiler, so
// that the source written for a real GPU compiles unchanged and runs on the
// emulated GPU (executor.cc). Ideas from Numba's CUDA simulator and HIP-CPU:
// each CUDA thread is a fiber; the builtin variables read the fiber's own
// jx_emu_thread, found from the stack pointer (emu_abi.h); __syncthreads and
// the warp collectives are rendezvous of exactly the threads that must
// arrive, run by the executor; __shared__ variables are thread_local, since
// every fiber of a block runs on one host thread, one block at a time;
// __device__ globals are the module's globals (one copy per loaded module).
// Arithmetic intrinsics map to IEEE host arithmetic with contraction off
// (-ffp-contract=off), which rounds like the GPU's _rn intrinsics; 16-bit
// float conversions are exact bit manipulations. JX_EMULATED lets generated
// code pick emulated equivalents of inline PTX.
#ifndef JAXON_EMU_H
#define JAXON_EMU_H
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "emu_abi.h"

// libm, declared here rather than through <math.h>: libstdc++'s <math.h> is <cmath>, whose parsing was most of a
// kernel's compile time (0.15 of 0.19 s). Float overloads of the double names, as CUDA's device math has.
#define JX_EMU_LIBM1(name) float name##f(float) noexcept; double name(double) noexcept;
#define JX_EMU_LIBM2(name) float name##f(float, float) noexcept; double name(double, double) noexcept;
extern "C" {
JX_EMU_LIBM1(exp) JX_EMU_LIBM1(exp2) JX_EMU_LIBM1(expm1) JX_EMU_LIBM1(log) JX_EMU_LIBM1(log2) JX_EMU_LIBM1(log10)
JX_EMU_LIBM1(log1p) JX_EMU_LIBM1(sin) JX_EMU_LIBM1(cos) JX_EMU_LIBM1(tan) JX_EMU_LIBM1(asin) JX_EMU_LIBM1(acos)
JX_EMU_LIBM1(atan) JX_EMU_LIBM1(sinh) JX_EMU_LIBM1(cosh) JX_EMU_LIBM1(tanh) JX_EMU_LIBM1(asinh) JX_EMU_LIBM1(acosh)
JX_EMU_LIBM1(atanh) JX_EMU_LIBM1(sqrt) JX_EMU_LIBM1(cbrt) JX_EMU_LIBM1(erf) JX_EMU_LIBM1(erfc) JX_EMU_LIBM1(floor)
JX_EMU_LIBM1(ceil) JX_EMU_LIBM1(round) JX_EMU_LIBM1(rint) JX_EMU_LIBM1(trunc) JX_EMU_LIBM1(fabs) JX_EMU_LIBM1(lgamma)
JX_EMU_LIBM1(tgamma) JX_EMU_LIBM1(nearbyint) JX_EMU_LIBM1(logb)
JX_EMU_LIBM2(pow) JX_EMU_LIBM2(atan2) JX_EMU_LIBM2(fmod) JX_EMU_LIBM2(nextafter) JX_EMU_LIBM2(fmin) JX_EMU_LIBM2(fmax)
JX_EMU_LIBM2(hypot) JX_EMU_LIBM2(remainder) JX_EMU_LIBM2(copysign) JX_EMU_LIBM2(fdim)
float fmaf(float, float, float) noexcept;
double fma(double, double, double) noexcept;
float ldexpf(float, int) noexcept;
double ldexp(double, int) noexcept;
float frexpf(float, int *) noexcept;
double frexp(double, int *) noexcept;
float modff(float, float *) noexcept;
double modf(double, double *) noexcept;
}
#undef JX_EMU_LIBM1
#undef JX_EMU_LIBM2
#define JX_EMU_FLOAT1(name) static inline float name(float x) { return name##f(x); }
#define JX_EMU_FLOAT2(name) static inline float name(float x, float y) { return name##f(x, y); }
JX_EMU_FLOAT1(exp) JX_EMU_FLOAT1(exp2) JX_EMU_FLOAT1(expm1) JX_EMU_FLOAT1(log) JX_EMU_FLOAT1(log2) JX_EMU_FLOAT1(log10)
JX_EMU_FLOAT1(log1p) JX_EMU_FLOAT1(sin) JX_EMU_FLOAT1(cos) JX_EMU_FLOAT1(tan) JX_EMU_FLOAT1(asin) JX_EMU_FLOAT1(acos)
JX_EMU_FLOAT1(atan) JX_EMU_FLOAT1(sinh) JX_EMU_FLOAT1(cosh) JX_EMU_FLOAT1(tanh) JX_EMU_FLOAT1(asinh) JX_EMU_FLOAT1(acosh)
JX_EMU_FLOAT1(atanh) JX_EMU_FLOAT1(sqrt) JX_EMU_FLOAT1(cbrt) JX_EMU_FLOAT1(erf) JX_EMU_FLOAT1(erfc) JX_EMU_FLOAT1(floor)
JX_EMU_FLOAT1(ceil) JX_EMU_FLOAT1(round) JX_EMU_FLOAT1(rint) JX_EMU_FLOAT1(trunc) JX_EMU_FLOAT1(fabs) JX_EMU_FLOAT1(lgamma)
JX_EMU_FLOAT1(tgamma) JX_EMU_FLOAT1(nearbyint)
JX_EMU_FLOAT2(pow) JX_EMU_FLOAT2(atan2) JX_EMU_FLOAT2(fmod) JX_EMU_FLOAT2(nextafter) JX_EMU_FLOAT2(fmin) JX_EMU_FLOAT2(fmax)
JX_EMU_FLOAT2(hypot) JX_EMU_FLOAT2(remainder) JX_EMU_FLOAT2(copysign) JX_EMU_FLOAT2(fdim)
#undef JX_EMU_FLOAT1
#undef JX_EMU_FLOAT2
static inline float fma(float a, float b, float c) { return fmaf(a, b, c); }
static inline float ldexp(float x, int e) { return ldexpf(x, e); }
static inline bool isnan(float x) { return __builtin_isnan(x); }
static inline bool isnan(double x) { return __builtin_isnan(x); }
static inline bool isinf(float x) { return __builtin_isinf(x); }
static inline bool isinf(double x) { return __builtin_isinf(x); }
static inline bool isfinite(float x) { return __builtin_isfinite(x); }
static inline bool isfinite(double x) { return __builtin_isfinite(x); }
static inline bool signbit(float x) { return __builtin_signbit(x); }
static inline bool signbit(double x) { return __builtin_signbit(x); }
static inline int abs(int x) { return x < 0 ? -x : x; }
static inline long long abs(long long x) { return x < 0 ? -x : x; }
static inline float abs(float x) { return fabsf(x); }
static inline double abs(double x) { return fabs(x); }
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define HUGE_VAL (__builtin_huge_val())
#define M_PI 3.14159265358979323846
#define M_E 2.7182818284590452354
#define M_LN2 0.69314718055994530942
#define M_SQRT2 1.41421356237309504880

// The little of <type_traits> and <utility> the kernel table needs.
namespace jx_emu_std {
template <typename T> struct remove_reference { typedef T type; };
template <typename T> struct remove_reference<T &> { typedef T type; };
template <typename T> struct remove_cv { typedef T type; };
template <typename T> struct remove_cv<const T> { typedef T type; };
template <typename T> struct remove_cv<volatile T> { typedef T type; };
template <typename T> struct remove_cv<const volatile T> { typedef T type; };
template <unsigned long... I> struct index_sequence {};
template <unsigned long N, unsigned long... I> struct make_index : make_index<N - 1, N - 1, I...> {};
template <unsigned long... I> struct make_index<0, I...> { typedef index_sequence<I...> type; };
}  // namespace jx_emu_std

#define JX_EMULATED 1
#define __CUDACC_RTC__ 1

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__

typedef jx_emu_dim3 uint3;
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(jx_emu_dim3 d) : x(d.x), y(d.y), z(d.z) {}
};

static inline __attribute__((always_inline)) jx_emu_thread *jx_emu_self() {
  return (jx_emu_thread *)((uintptr_t)__builtin_frame_address(0) & ~(JX_EMU_STACK_SIZE - 1));
}
#define threadIdx (jx_emu_self()->thread_idx)
#define blockIdx (jx_emu_self()->block_idx)
#define blockDim (jx_emu_self()->block_dim)
#define gridDim (jx_emu_self()->grid_dim)
#define warpSize 32

// Set by jx_emu_module_init when the emulated driver loads the module.
static const jx_emu_api *jx_emu_api_table;
extern "C" __attribute__((visibility("default"))) void jx_emu_module_init(const jx_emu_api *api) { jx_emu_api_table = api; }

// ---- synchronization ----

static inline void __syncthreads() { jx_emu_api_table->syncthreads(jx_emu_self()); }
static inline void __trap() {
  jx_emu_api_table->trap(jx_emu_self(), "__trap() called");
  __builtin_unreachable();
}
#define __brkpt() __trap()
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/** Every lane in `mask` deposits `value`; the values of all 32 lanes come back in `all`. */
static inline void jx_emu_exchange(unsigned mask, unsigned long long value, unsigned long long *all) {
  jx_emu_api_table->warp_exchange(jx_emu_self(), mask, value, all);
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  unsigned long long all[32];
  jx_emu_exchange(mask, 0, all);
}
/** The lanes of this thread's warp that exist in the block (a block may end mid-warp). */
static inline unsigned __activemask() {
  jx_emu_thread *t = jx_emu_self();
  unsigned threads = t->block_dim.x * t->block_dim.y * t->block_dim.z;
  unsigned lanes = threads - t->warp * 32 >= 32 ? 32 : threads - t->warp * 32;
  return lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
}
static inline unsigned __lanemask_lt() { return (1u << jx_emu_self()->lane) - 1u; }

template <typename T> static inline unsigned long long jx_emu_pack(T v) {
  static_assert(sizeof(T) <= 8 && __is_trivially_copyable(T), "warp shuffles move values of at most 8 bytes");
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof v);
  return bits;
}
template <typename T> static inline T jx_emu_unpack(unsigned long long bits) {
  T v;
  __builtin_memcpy(&v, &bits, sizeof v);
  return v;
}
/** The value lane `source` deposited; reading a lane outside the mask is undefined on a GPU, so it traps here. */
template <typename T> static inline T jx_emu_shuffle(unsigned mask, T var, unsigned source, const char *fn) {
  unsigned long long all[32];
  jx_emu_exchange(mask, jx_emu_pack(var), all);
  if (!(mask & (1u << source))) {
    char message[160];
    snprintf(message, sizeof message, "%s: lane %u reads lane %u, which is not in the mask 0x%08x", fn, jx_emu_self()->lane, source, mask);
    jx_emu_api_table->trap(jx_emu_self(), message);
  }
  return jx_emu_unpack<T>(all[source]);
}
template <typename T> static inline T __shfl_sync(unsigned mask, T var, int src, int width = 32) {
  unsigned lane = jx_emu_self()->lane;
  unsigned base = lane & ~(unsigned)(width - 1);
  return jx_emu_shuffle(mask, var, base + ((unsigned)src & (unsigned)(width - 1)), "__shfl_sync");
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  unsigned lane = jx_emu_self()->lane;
  unsigned within = lane & (unsigned)(width - 1);
  return jx_emu_shuffle(mask, var, within >= delta ? lane - delta : lane, "__shfl_up_sync");
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  unsigned lane = jx_emu_self()->lane;
  unsigned within = lane & (unsigned)(width - 1);
  return jx_emu_shuffle(mask, var, within + delta < (unsigned)width ? lane + delta : lane, "__shfl_down_sync");
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  unsigned lane = jx_emu_self()->lane;
  unsigned source = lane ^ (unsigned)lane_mask;
  // a lane of a later group of `width` lanes reads its own value
  if ((source & ~(unsigned)(width - 1)) > (lane & ~(unsigned)(width - 1))) source = lane;
  return jx_emu_shuffle(mask, var, source, "__shfl_xor_sync");
}
static inline unsigned __ballot_sync(unsigned mask, int predicate) {
  unsigned long long all[32];
  jx_emu_exchange(mask, predicate != 0, all);
  unsigned bits = 0;
  for (unsigned l = 0; l < 32; l++)
    if ((mask & (1u << l)) && all[l]) bits |= 1u << l;
  return bits;
}
static inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
static inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) == mask; }

// ---- clocks: the GPU's globaltimer (ns since the epoch) and cycle counters (ns here) ----

static inline unsigned long long jx_emu_globaltimer() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}
static inline long long clock64() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
static inline void __nanosleep(unsigned ns) {
  timespec ts = {0, (long)ns};
  nanosleep(&ts, nullptr);
}

// ---- atomics (device-wide: blocks run on several host threads) ----

#define JX_EMU_ATOMIC_INT(T)                                                                           \
  static inline T atomicAdd(T *a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }        \
  static inline T atomicSub(T *a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }        \
  static inline T atomicExch(T *a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }      \
  static inline T atomicAnd(T *a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }        \
  static inline T atomicOr(T *a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }          \
  static inline T atomicXor(T *a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }        \
  static inline T atomicCAS(T *a, T expected, T desired) {                                           \
    __atomic_compare_exchange_n(a, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
    return expected;                                                                                 \
  }                                                                                                  \
  static inline T atomicMin(T *a, T v) {                                                             \
    T old = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                    \
    while (v < old && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
    return old;                                                                                      \
  }                                                                                                  \
  static inline T atomicMax(T *a, T v) {                                                             \
    T old = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                    \
    while (v > old && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
    return old;                                                                                      \
  }
JX_EMU_ATOMIC_INT(int)
JX_EMU_ATOMIC_INT(unsigned)
JX_EMU_ATOMIC_INT(long long)
JX_EMU_ATOMIC_INT(unsigned long long)
#undef JX_EMU_ATOMIC_INT
static inline unsigned atomicInc(unsigned *a, unsigned limit) {
  unsigned old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(a, &old, old >= limit ? 0u : old + 1u, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
  return old;
}
static inline unsigned atomicDec(unsigned *a, unsigned limit) {
  unsigned old = __atomic_load_n(a, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(a, &old, (old == 0 || old > limit) ? limit : old - 1u, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
  return old;
}
template <typename F, typename U> static inline F jx_emu_atomic_float(F *a, F v, F (*op)(F, F)) {
  U *bits = reinterpret_cast<U *>(a);
  U old = __atomic_load_n(bits, __ATOMIC_SEQ_CST), next;
  F f;
  do {
    __builtin_memcpy(&f, &old, sizeof f);
    F r = op(f, v);
    __builtin_memcpy(&next, &r, sizeof next);
  } while (!__atomic_compare_exchange_n(bits, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return f;
}
static inline float atomicAdd(float *a, float v) { return jx_emu_atomic_float<float, unsigned>(a, v, [](float x, float y) { return x + y; }); }
static inline double atomicAdd(double *a, double v) { return jx_emu_atomic_float<double, unsigned long long>(a, v, [](double x, double y) { return x + y; }); }
static inline float atomicExch(float *a, float v) { return jx_emu_atomic_float<float, unsigned>(a, v, [](float, float y) { return y; }); }

// ---- bit casts and integer intrinsics ----

template <typename To, typename From> static inline To jx_emu_bits(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit cast between types of different sizes");
  To r;
  __builtin_memcpy(&r, &v, sizeof r);
  return r;
}
static inline int __float_as_int(float x) { return jx_emu_bits<int>(x); }
static inline unsigned __float_as_uint(float x) { return jx_emu_bits<unsigned>(x); }
static inline float __int_as_float(int x) { return jx_emu_bits<float>(x); }
static inline float __uint_as_float(unsigned x) { return jx_emu_bits<float>(x); }
static inline long long __double_as_longlong(double x) { return jx_emu_bits<long long>(x); }
static inline double __longlong_as_double(long long x) { return jx_emu_bits<double>(x); }
static inline int __double2hiint(double x) { return (int)(jx_emu_bits<unsigned long long>(x) >> 32); }
static inline int __double2loint(double x) { return (int)(unsigned)jx_emu_bits<unsigned long long>(x); }
static inline double __hiloint2double(int hi, int lo) { return jx_emu_bits<double>(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return (unsigned long long)(((unsigned __int128)a * b) >> 64); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline int __mul24(int a, int b) { return (int)((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }

// CUDA's min/max overloads for integers and floats (device functions in the global namespace).
#define JX_EMU_MINMAX(T)                                      \
  static inline T min(T a, T b) { return a < b ? a : b; }     \
  static inline T max(T a, T b) { return a > b ? a : b; }
JX_EMU_MINMAX(int)
JX_EMU_MINMAX(unsigned)
JX_EMU_MINMAX(long long)
JX_EMU_MINMAX(unsigned long long)
#undef JX_EMU_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

// ---- floating-point intrinsics: IEEE round-to-nearest host arithmetic ----

static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fdividef(float a, float b) { return a / b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __drcp_rn(double a) { return 1.0 / a; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
// the fast-math intrinsics, as macros: glibc declares some of these names itself
#define __expf expf
#define __exp10f(x) powf(10.0f, (x))
#define __logf logf
#define __log2f log2f
#define __log10f log10f
#define __sinf sinf
#define __cosf cosf
#define __tanf tanf
#define __powf powf
#define exp10f(x) powf(10.0f, (x))
#define exp10(x) pow(10.0, (x))
#define __sincosf(x, s, c) (*(s) = sinf(x), *(c) = cosf(x), (void)0)
static inline float __int2float_rn(int x) { return (float)x; }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline double __int2double_rn(int x) { return (double)x; }
static inline float __double2float_rn(double x) { return (float)x; }

// ---- 16-bit floats, exact: IEEE binary16 with round to nearest even, subnormals kept ----

static inline float jx_emu_half_to_float(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return __uint_as_float(sign);
    e = 113;
    while (!(m & 0x400u)) { m <<= 1; e--; }
    return __uint_as_float(sign | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return __uint_as_float(sign | ((e + 112) << 23) | (m << 13));
}
static inline unsigned short jx_emu_float_to_half_rn(float f) {
  unsigned x = __float_as_uint(f), sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return (unsigned short)(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u | ((x >> 13) & 0x3ffu) : 0u));
  if (x >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u); // 65520 and up round to infinity
  if (x < 0x38800000u) {                                            // below 2^-14: a subnormal half or zero
    if (x <= 0x33000000u) return (unsigned short)sign;              // at most 2^-25: ties to even give 0
    unsigned m = (x & 0x7fffffu) | 0x800000u, shift = 126 - (x >> 23);
    unsigned r = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (r & 1u))) r++;
    return (unsigned short)(sign | r);
  }
  unsigned r = x - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  return (unsigned short)(sign | (r >> 13));
}

// ---- what the emulated driver needs from every module ----

template <typename... A, unsigned long... I>
static inline void jx_emu_call(void (*kernel)(A...), void **params, jx_emu_std::index_sequence<I...>) {
  kernel(*static_cast<typename jx_emu_std::remove_cv<typename jx_emu_std::remove_reference<A>::type>::type *>(params[I])...);
}
template <typename... A> static inline void jx_emu_invoke(void (*kernel)(A...), void **params) {
  jx_emu_call(kernel, params, typename jx_emu_std::make_index<sizeof...(A)>::type{});
}
template <typename... A> struct jx_emu_sizes { static constexpr unsigned value[sizeof...(A) + 1] = {(unsigned)sizeof(A)..., 0u}; };
template <typename... A> constexpr unsigned jx_emu_sizes<A...>::value[sizeof...(A) + 1];
template <typename... A> static constexpr const unsigned *jx_emu_param_sizes(void (*)(A...)) { return jx_emu_sizes<A...>::value; }
template <typename... A> static constexpr int jx_emu_arity(void (*)(A...)) { return (int)sizeof...(A); }

#include "jaxon_emu_tensor.h"
#endif
