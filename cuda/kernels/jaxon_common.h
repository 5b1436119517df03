/* The helpers every generated kernel uses, written once for both targets
   (jaxon_c.h and jaxon_cuda.h include this after defining the target layer:
   JX_FN, the jx_ fixed-width types, bit casts, JX_NANF, JX_ISFINITEF, IEEE
   operations that are never contracted, and jx_h2f / jx_f2h). Same bits on
   both: 16-bit float conversion rounding to nearest even, XLA's integer
   division by zero, saturating float-to-int conversion, NaN-propagating
   max/min, reduce_precision. */
#ifndef JX_COMMON_H
#define JX_COMMON_H
/* double → float rounding to odd: a later rounding to float16 then rounds once, as XLA's f64→f16 convert does */
JX_FN float jx_d2f_odd(double d) {
  float f = (float)d;
  if ((double)f != d && JX_ISFINITEF(f)) {
    jx_u32 b = JX_F2U(f);
    if (!(b & 1u)) { b = fabs((double)f) < fabs(d) ? b + 1u : b - 1u; f = JX_U2F(b); }
  }
  return f;
}
JX_FN float jx_bf2f(jx_u16 b) { return JX_U2F((jx_u32)b << 16); }
/* A float NaN's bits to a 16-bit NaN with its sign and the top of its payload, so a 16-bit NaN widened to float
   (jx_h2f, jx_bf2f: the payload moves up) comes back with the same bits, signalling ones too (a bitcast or a copy of
   16-bit data is exact, as XLA's); a payload only in the low bits that do not fit becomes the quiet NaN. */
JX_FN jx_u16 jx_nan2h(jx_u32 x) {
  const jx_u32 payload = (x & 0x7fffffu) >> 13;
  return (jx_u16)(((x >> 16) & 0x8000u) | 0x7c00u | (payload ? payload : 0x200u));
}
JX_FN jx_u16 jx_nan2bf(jx_u32 x) {
  const jx_u32 top = x >> 16;
  return (jx_u16)((top & 0x7fu) ? top : (top | 0x40u));
}
JX_FN jx_u16 jx_f2bf(float f) {
  jx_u32 x = JX_F2U(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return jx_nan2bf(x);
  return (jx_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
JX_FN float jx_maxf(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
JX_FN float jx_minf(float a, float b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
JX_FN double jx_maxd(double a, double b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
JX_FN double jx_mind(double a, double b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
JX_FN float jx_signf(float x) { return x != x ? x : (float)((x > 0) - (x < 0)); }
JX_FN double jx_signd(double x) { return x != x ? x : (double)((x > 0) - (x < 0)); }
/* 16-bit floats step in their own format, not float32's */
JX_FN float jx_nextafter_f16(float a, float b) {
  if (a != a || b != b) return JX_NANF;
  if (a == b) return b;
  if (a == 0) return b > 0 ? 5.9604644775390625e-8f : -5.9604644775390625e-8f;
  jx_u16 h = jx_f2h(a);
  return jx_h2f((jx_u16)(((a < b) == (a > 0)) ? h + 1 : h - 1));
}
JX_FN float jx_nextafter_bf16(float a, float b) {
  if (a != a || b != b) return JX_NANF;
  if (a == b) return b;
  if (a == 0) return jx_bf2f(b > 0 ? 0x0001u : 0x8001u);
  jx_u16 h = jx_f2bf(a);
  return jx_bf2f((jx_u16)(((a < b) == (a > 0)) ? h + 1 : h - 1));
}
/* XLA's ReducePrecision on float16 bits (5 exponent and 10 mantissa bits); NaN stays NaN, as on XLA's CPU backend */
JX_FN float jx_reduce_precision_f16(float f, int exponent_bits, int mantissa_bits) {
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
JX_FN float jx_reduce_precisionf(float f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  jx_u32 x = JX_F2U(f);
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
  return JX_U2F(x);
}
JX_FN double jx_reduce_precisiond(double f, int exponent_bits, int mantissa_bits) {
  if (f != f) return f;
  jx_u64 x = JX_D2U(f);
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
  return JX_U2D(x);
}
/* integer division and remainder as XLA defines them (x/0 = -1, x%0 = x, MIN/-1 = MIN), saturating float-to-int
   conversion (NaN to 0), and integer powers wrapping in 32 unsigned bits (no signed overflow, no int promotion) */
#define JX_INT_HELPERS(T, MIN, MAX, NAME) \
  JX_FN T jx_div_##NAME(T a, T b) { if (b == 0) return (T)-1; if (MIN != 0 && a == (T)MIN && b == (T)-1) return a; return (T)(a / b); } \
  JX_FN T jx_rem_##NAME(T a, T b) { if (b == 0) return a; if (MIN != 0 && a == (T)MIN && b == (T)-1) return 0; return (T)(a % b); } \
  JX_FN T jx_fcast_##NAME(double x) { if (x != x) return 0; if (x <= (double)MIN) return (T)MIN; if (x >= (double)MAX) return (T)MAX; return (T)x; } \
  JX_FN T jx_ipow_##NAME(T x, jx_i64 y) { jx_u32 r = 1, b = (jx_u32)x; while (y > 0) { if (y & 1) r = r * b; b = b * b; y >>= 1; } return (T)r; }
JX_INT_HELPERS(jx_i8, -128, 127, i8)
JX_INT_HELPERS(jx_i16, -32768, 32767, i16)
JX_INT_HELPERS(jx_i32, (-2147483647 - 1), 2147483647, i32)
JX_INT_HELPERS(jx_u8, 0, 255, u8)
JX_INT_HELPERS(jx_u16, 0, 65535, u16)
JX_INT_HELPERS(jx_u32, 0, 4294967295u, u32)
JX_FN float jx_ipowf(float x, jx_i64 y) { int neg = y < 0; float r = 1.0f, b = x; if (neg) y = -y; while (y > 0) { if (y & 1) r = JX_FMUL(r, b); b = JX_FMUL(b, b); y >>= 1; } return neg ? JX_FDIV(1.0f, r) : r; }
JX_FN double jx_ipowd(double x, jx_i64 y) { int neg = y < 0; double r = 1.0, b = x; if (neg) y = -y; while (y > 0) { if (y & 1) r = JX_DMUL(r, b); b = JX_DMUL(b, b); y >>= 1; } return neg ? JX_DDIV(1.0, r) : r; }
#endif
