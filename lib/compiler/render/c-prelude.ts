// The C prelude every generated CPU kernel starts with: fixed-width types,
// 16-bit float conversion (round to nearest even, no toolkit headers), and the
// integer helpers that give XLA's semantics (wrapping arithmetic, division by
// zero, saturating float-to-int conversion). The CUDA renderer mirrors these.

export const C_PRELUDE = String.raw`#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
int omp_get_num_threads(void);
int omp_get_thread_num(void);
#define JX_PARALLEL_THRESHOLD 32768
#define JX_MAX_RANK 32
static inline float jx_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0) {
    if (mantissa == 0) { bits = sign; }
    else { float f = (float)mantissa * 5.9604644775390625e-8f; return sign ? -f : f; }
  } else if (exponent == 31) { bits = sign | 0x7f800000u | (mantissa << 13); }
  else { bits = sign | ((exponent + 112) << 23) | (mantissa << 13); }
  float f; memcpy(&f, &bits, 4); return f;
}
static inline uint16_t jx_f2h(float f) {
  uint32_t x; memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (a < 0x38800000u) {
    float scaled = fabsf(f) * 16777216.0f;
    float r = rintf(scaled);
    return (uint16_t)(sign | (uint32_t)r);
  }
  uint32_t half = (((a >> 23) - 112) << 10) | ((a & 0x7fffffu) >> 13);
  uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) half += 1;
  return (uint16_t)(sign | half);
}
/* double → float rounding to odd: a later rounding to float16 then rounds once, as XLA's f64→f16 convert does */
static inline float jx_d2f_odd(double d) {
  float f = (float)d;
  if ((double)f != d && isfinite(f)) {
    uint32_t b; memcpy(&b, &f, 4);
    if (!(b & 1u)) { b = fabs((double)f) < fabs(d) ? b + 1u : b - 1u; memcpy(&f, &b, 4); }
  }
  return f;
}
static inline float jx_bf2f(uint16_t b) { uint32_t bits = (uint32_t)b << 16; float f; memcpy(&f, &bits, 4); return f; }
static inline uint16_t jx_f2bf(float f) {
  uint32_t x; memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static inline float jx_maxf(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
static inline float jx_minf(float a, float b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
static inline double jx_maxd(double a, double b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
static inline double jx_mind(double a, double b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
static inline float jx_signf(float x) { return x != x ? x : (float)((x > 0) - (x < 0)); }
static inline double jx_signd(double x) { return x != x ? x : (double)((x > 0) - (x < 0)); }
static inline float jx_nextafter_f16(float a, float b) {
  if (a != a || b != b) return NAN;
  if (a == b) return b;
  if (a == 0) return b > 0 ? 5.9604644775390625e-8f : -5.9604644775390625e-8f;
  uint16_t h = jx_f2h(a);
  return jx_h2f((uint16_t)(((a < b) == (a > 0)) ? h + 1 : h - 1));
}
static inline float jx_nextafter_bf16(float a, float b) {
  if (a != a || b != b) return NAN;
  if (a == b) return b;
  if (a == 0) return jx_bf2f(b > 0 ? 0x0001u : 0x8001u);
  uint16_t h = jx_f2bf(a);
  return jx_bf2f((uint16_t)(((a < b) == (a > 0)) ? h + 1 : h - 1));
}
/* XLA's ReducePrecision on float16 bits (5 exponent and 10 mantissa bits); NaN stays NaN, as on XLA's CPU backend */
static inline float jx_reduce_precision_f16(float f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  uint32_t x = jx_f2h(f);
  if (mantissa_bits < 10) {
    uint32_t shift = 10 - mantissa_bits;
    uint32_t last = (x >> shift) & 1u, bias = (1u << (shift - 1)) - 1u + last;
    x = (x + bias) & ~((1u << shift) - 1u) & 0xffffu;
  }
  if (exponent_bits < 5) {
    int32_t exponent = (int32_t)((x >> 10) & 0x1fu) - 15;
    int32_t max_exponent = (1 << (exponent_bits - 1)) - 1, min_exponent = 1 - max_exponent;
    if (exponent > max_exponent) x = (x & 0x8000u) | 0x7c00u;
    else if (exponent < min_exponent) x &= 0x8000u;
  }
  return jx_h2f((uint16_t)x);
}
static inline float jx_reduce_precisionf(float f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  uint32_t x; memcpy(&x, &f, 4);
  if (mantissa_bits < 23) {
    uint32_t shift = 23 - mantissa_bits;
    uint32_t last = (x >> shift) & 1u, bias = (1u << (shift - 1)) - 1u + last;
    if ((x & 0x7fffffffu) <= 0x7f800000u) { x += bias; x &= ~((1u << shift) - 1u); }
  }
  if (exponent_bits < 8 && (x & 0x7fffffffu) <= 0x7f800000u) {
    int32_t exponent = (int32_t)((x >> 23) & 0xffu) - 127;
    int32_t max_exponent = (1 << (exponent_bits - 1)) - 1, min_exponent = 1 - max_exponent;
    if (exponent > max_exponent) x = (x & 0x80000000u) | 0x7f800000u;
    else if (exponent < min_exponent) x &= 0x80000000u;
  }
  memcpy(&f, &x, 4); return f;
}
static inline double jx_reduce_precisiond(double f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  uint64_t x; memcpy(&x, &f, 8);
  if (mantissa_bits < 52) {
    uint64_t shift = 52 - mantissa_bits;
    uint64_t last = (x >> shift) & 1u, bias = (1ull << (shift - 1)) - 1u + last;
    if ((x & 0x7fffffffffffffffull) <= 0x7ff0000000000000ull) { x += bias; x &= ~((1ull << shift) - 1u); }
  }
  if (exponent_bits < 11 && (x & 0x7fffffffffffffffull) <= 0x7ff0000000000000ull) {
    int64_t exponent = (int64_t)((x >> 52) & 0x7ffu) - 1023;
    int64_t max_exponent = (1ll << (exponent_bits - 1)) - 1, min_exponent = 1 - max_exponent;
    if (exponent > max_exponent) x = (x & 0x8000000000000000ull) | 0x7ff0000000000000ull;
    else if (exponent < min_exponent) x &= 0x8000000000000000ull;
  }
  memcpy(&f, &x, 8); return f;
}
#define JX_INT_HELPERS(T, U, MIN, MAX, NAME) \
  static inline T jx_div_##NAME(T a, T b) { if (b == 0) return (T)-1; if (MIN != 0 && a == (T)MIN && b == (T)-1) return a; return (T)(a / b); } \
  static inline T jx_rem_##NAME(T a, T b) { if (b == 0) return a; if (MIN != 0 && a == (T)MIN && b == (T)-1) return 0; return (T)(a % b); } \
  static inline T jx_fcast_##NAME(double x) { if (x != x) return 0; if (x <= (double)MIN) return (T)MIN; if (x >= (double)MAX) return (T)MAX; return (T)x; } \
  static inline T jx_ipow_##NAME(T x, int64_t y) { U r = 1, b = (U)x; while (y > 0) { if (y & 1) r = (U)(r * b); b = (U)(b * b); y >>= 1; } return (T)r; }
JX_INT_HELPERS(int8_t, uint8_t, -128, 127, i8)
JX_INT_HELPERS(int16_t, uint16_t, -32768, 32767, i16)
JX_INT_HELPERS(int32_t, uint32_t, (-2147483647 - 1), 2147483647, i32)
JX_INT_HELPERS(uint8_t, uint8_t, 0, 255, u8)
JX_INT_HELPERS(uint16_t, uint16_t, 0, 65535, u16)
JX_INT_HELPERS(uint32_t, uint32_t, 0, 4294967295u, u32)
static inline float jx_ipowf(float x, int64_t y) { int neg = y < 0; float r = 1.0f, b = x; if (neg) y = -y; while (y > 0) { if (y & 1) r *= b; b *= b; y >>= 1; } return neg ? 1.0f / r : r; }
static inline double jx_ipowd(double x, int64_t y) { int neg = y < 0; double r = 1.0, b = x; if (neg) y = -y; while (y > 0) { if (y & 1) r *= b; b *= b; y >>= 1; } return neg ? 1.0 / r : r; }
`;
