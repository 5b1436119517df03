/* The float math of the generated CPU kernels (issue 16): exp, log, sin, pow and the rest written branch-free, so
   that GCC vectorizes the `#pragma omp parallel for simd` loops that call them (glibc's sinf, expf, ... are scalar
   calls, which no loop around them survives). Included by jaxon_c.h after jaxon_common.h; the macros at the end send
   the generated kernels' float calls (sinf, powf, ...) here, float64 keeps the C library, and eager ops and jit share
   this one header, so they stay bit-identical.

   Two kinds of functions. exp, log and tanh, the hot ones (softmax, chains), compute in float: Cephes' reductions
   and polynomials. The others compute in double from the float argument and round once at the end: with the double
   result good to 2^-40 or so, the float is the correctly rounded one except within a hair of a half-way point (sin,
   cos and tan use glibc's shorter polynomials, 0.57 ulp), and cancellation or subnormal results need no care, which
   double's range absorbs. Everything is plain IEEE arithmetic
   (the kernels compile with -ffp-contract=off), integer bit operations and selects through bit masks: GCC if-converts
   one select in a loop but gives up on loops that chain several functions' selects ("control flow in loop"); masks
   keep every fused loop vectorizable. No table lookups: gathers are slow or emulated on the CPUs this runs on.

   Worst errors in ulps of the float result against double libm (bench/math/check.c; the table with the inputs and
   means is bench/math/RESULTS.md), over all 2^32 floats:
    expf 0.9903  exp2f 0.5000  expm1f 0.5000  logf 0.8291  log1pf 0.5000  tanhf 1.3303  logisticf 2.4807
    sinf 0.5607  cosf 0.5607  tanf 0.5681  asinf 0.5000  acosf 0.5000  atanf 0.5000  sinhf 0.5000
    coshf 0.5000  asinhf 0.5000  acoshf 0.5000  atanhf 0.5000  cbrtf 0.5000  erff 0.5000
    (logistic: 1/(1 + exp(-x)) in float, above -88.72, where exp(-x) overflows)
   pow and atan2, over 4e7 random and structured pairs each: 0.5000 and 0.5000, C99's special cases bit for bit. */
#ifndef JX_MATH_H
#define JX_MATH_H

/* c ? a : b through bit masks */
#define JX_MASK(c) (-(jx_u32)(c))
#define JX_MASK64(c) (-(jx_u64)(c))
JX_FN float jx_blendf(jx_u32 mask, float a, float b) { return JX_U2F((JX_F2U(a) & mask) | (JX_F2U(b) & ~mask)); }
JX_FN double jx_blendd(jx_u64 mask, double a, double b) { return JX_U2D((JX_D2U(a) & mask) | (JX_D2U(b) & ~mask)); }
/* |a| with b's sign, on bits (copysign without a library call) */
JX_FN float jx_signed_likef(float a, float b) { return JX_U2F((JX_F2U(a) & 0x7fffffffu) | (JX_F2U(b) & 0x80000000u)); }
#define JX_ROUND_SHIFT 0x1.8p52 /* t + shift - shift rounds t to an integer for |t| < 2^51; the integer sits in the low bits */

/* ---- float arithmetic: exp, log, tanh (Cephes) ---- */

JX_FN float jx_expf(float x) {
  const float hi = 88.72283935546875f, lo = -103.97208404541015625f;
  const jx_u32 nan_mask = JX_MASK(x != x), over = JX_MASK(x > hi), under = JX_MASK(x < lo);
  const float xc = jx_blendf(nan_mask | under, jx_blendf(nan_mask, 0.0f, lo), jx_blendf(over, hi, x));
  const float t = xc * 1.44269504088896341f;
  const float n = (t + 12582912.0f) - 12582912.0f; /* round to nearest through 1.5 * 2^23 (rintf needs SSE4.1) */
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = (p * (r * r) + r) + 1.0f;
  const jx_i32 ni = (jx_i32)n;
  const jx_i32 n1 = ni / 2, n2 = ni - n1; /* two scalings reach the subnormal results */
  const float s1 = JX_U2F((jx_u32)(n1 + 127) << 23), s2 = JX_U2F((jx_u32)(n2 + 127) << 23);
  const float res = (y * s1) * s2;
  return jx_blendf(nan_mask, x, jx_blendf(over, INFINITY, jx_blendf(under, 0.0f, res)));
}

JX_FN float jx_logf(float x) {
  const jx_u32 sub = JX_MASK((x > 0.0f) & (x < 1.17549435e-38f));
  const float xs = jx_blendf(sub, x * 8388608.0f, x);
  const jx_u32 u = JX_F2U(xs);
  jx_i32 e = (jx_i32)((u >> 23) & 0xffu) - 126 - (jx_i32)(sub & 23u);
  float m = JX_U2F((u & 0x007fffffu) | 0x3f000000u);
  const jx_u32 below = JX_MASK(m < 0.707106781186547524f);
  e = e - (jx_i32)(below & 1u);
  m = jx_blendf(below, (m + m) - 1.0f, m - 1.0f);
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m + -1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m + -1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m + -1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m + -2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = (y * m) * z;
  const float fe = (float)e;
  y = y + fe * -2.12194440e-4f;
  y = y - 0.5f * z;
  float r = m + y;
  r = r + fe * 0.693359375f;
  const jx_u32 nan_mask = JX_MASK((x != x) | (x < 0.0f)), zero_mask = JX_MASK(x == 0.0f), inf_mask = JX_MASK(x == INFINITY);
  return jx_blendf(nan_mask, NAN, jx_blendf(zero_mask, -INFINITY, jx_blendf(inf_mask, x, r)));
}

JX_FN float jx_tanhf(float x) {
  const float z = fabsf(x);
  const float s = jx_expf(z + z);
  const float big = jx_signed_likef(1.0f - 2.0f / (s + 1.0f), x);
  const float q = x * x;
  float p = -5.70498872745e-3f;
  p = p * q + 2.06390887954e-2f;
  p = p * q + -5.37397155531e-2f;
  p = p * q + 1.33314422036e-1f;
  p = p * q + -3.33332819422e-1f;
  const float small = ((p * q) * x) + x;
  return jx_blendf(JX_MASK((x == 0.0f) | (x != x)), x, jx_blendf(JX_MASK(z >= 0.625f), big, small));
}

/* ---- double cores: each accurate to 2^-44 or better relative on the range its callers give it ---- */

/* 2^n for an integer-valued double n in [-1022, 1023] */
JX_FN double jx_pow2d(double n) { return JX_U2D((jx_u64)((jx_i64)(JX_D2U(n + JX_ROUND_SHIFT) - JX_D2U(JX_ROUND_SHIFT)) + 1023) << 52); }

/* e^x = 2^n e^r, |r| <= ln2/2: returns e^r - 1 in *em1 and 2^n; e^r by Taylor to r^12 (remainder < 2^-50) */
JX_FN double jx_exp_reduce(double x, double *em1) {
  const double n = (x * 0x1.71547652b82fep0 + JX_ROUND_SHIFT) - JX_ROUND_SHIFT;
  const double r = (x - n * 0x1.62e42fee00000p-1) - n * 0x1.a39ef35793c76p-33; /* ln2 in two parts, n * hi exact */
  double p = 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  *em1 = p * (r * r) + r;
  return jx_pow2d(n);
}
/* e^x for |x| <= 700 */
JX_FN double jx_exp_d(double x) {
  double em1;
  const double scale = jx_exp_reduce(x, &em1);
  return scale * em1 + scale;
}
/* e^x - 1 for |x| <= 700, without cancellation near 0 */
JX_FN double jx_expm1_d(double x) {
  double em1;
  const double scale = jx_exp_reduce(x, &em1);
  return scale * em1 + (scale - 1.0);
}
/* log(u) for positive normal finite u: u = 2^k m, m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m-1)/(m+1)
   (fdlibm's polynomial, |error| < 2^-58) */
JX_FN double jx_log_d(double u) {
  const jx_u64 hx = JX_D2U(u) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
  const double k = (double)((jx_i32)(hx >> 52) - 1023);
  const double f = JX_U2D((hx & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull) - 1.0;
  const double s = f / (2.0 + f), z = s * s, w = z * z;
  const double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  const double hfsq = 0.5 * f * f;
  return k * 0x1.62e42fefa39efp-1 + (f - (hfsq - s * (hfsq + (t1 + t2))));
}
/* log(1 + v) for v > -1 finite: log(1 + v) rounded, plus the rounding error of 1 + v over 1 + v */
JX_FN double jx_log1p_d(double v) {
  const double u = 1.0 + v;
  return jx_log_d(u) + (v - (u - 1.0)) / u;
}
/* atan(t) for |t| <= tan(pi/8) = 0.4142: t + t z P(z) (bench/math/fit.py, relative error 2^-49.7) */
JX_FN double jx_atan_poly(double t) {
  const double z = t * t;
  double p = -0x1.a08db4547ae3bp-6;
  p = p * z + 0x1.9c58dee31340bp-5;
  p = p * z + -0x1.0a9ba4f323844p-4;
  p = p * z + 0x1.3a54bc4b8ec8bp-4;
  p = p * z + -0x1.744f4883a10f5p-4;
  p = p * z + 0x1.c71bd5e1cbab6p-4;
  p = p * z + -0x1.2492472f20c21p-3;
  p = p * z + 0x1.999999936178ep-3;
  p = p * z + -0x1.5555555551e72p-2;
  return t + t * (z * p);
}
/* asin(t) for |t| <= 1/2 given z = t^2: t + t z P(z) (bench/math/fit.py, relative error 2^-47.9) */
JX_FN double jx_asin_poly(double t, double z) {
  double p = 0x1.0142e6961d5a5p-5;
  p = p * z + -0x1.d6559fe747933p-8;
  p = p * z + 0x1.2466479e47f0cp-6;
  p = p * z + 0x1.9c169b126aa7dp-7;
  p = p * z + 0x1.1f748cc0c9245p-6;
  p = p * z + 0x1.6e4542cabed15p-6;
  p = p * z + 0x1.f1cae25fd556fp-6;
  p = p * z + 0x1.6db6cc9dbaecep-5;
  p = p * z + 0x1.3333334ff1626p-4;
  p = p * z + 0x1.5555555541f9bp-3;
  return t + t * (z * p);
}

/* ---- exponentials and logarithms in double ---- */

JX_FN float jx_exp2f(float x) {
  /* 2^x = e^(x ln2): the product's rounding is 2^-53 * 150 absolute at most, 2^-45 relative in the result */
  const double d = jx_blendd(JX_MASK64(x > 200.0f), 200.0, jx_blendd(JX_MASK64(x < -200.0f), -200.0, (double)x));
  return jx_blendf(JX_MASK(x != x), x, (float)jx_exp_d(d * 0x1.62e42fefa39efp-1));
}

JX_FN float jx_expm1f(float x) {
  const double d = jx_blendd(JX_MASK64(x > 100.0f), 100.0, jx_blendd(JX_MASK64(x < -100.0f), -100.0, (double)x));
  /* expm1 has x's sign (expm1(-0) = -0) */
  return jx_blendf(JX_MASK(x != x), x, jx_signed_likef((float)jx_expm1_d(d), x));
}

JX_FN float jx_log1pf(float x) {
  const jx_u32 ok = JX_MASK((x > -1.0f) & (x < INFINITY));
  const float r = (float)jx_log1p_d((double)jx_blendf(ok, x, 0.0f));
  /* log1p has x's sign (log1p(-0) = -0); log1p(-1) = -inf, below -1 or NaN: NaN, inf: inf */
  return jx_blendf(ok, jx_signed_likef(r, x), jx_blendf(JX_MASK(x == -1.0f), -INFINITY, jx_blendf(JX_MASK(x == INFINITY), x, NAN)));
}

/* ---- trigonometry: argument reduction for every finite float, then double polynomials ---- */

/* Below 2^20: n = round(|x| 2/pi) < 2^20, and |x| - n pi/2 with pi/2 in two parts, the first of 33 bits so that
   n times it is exact: good to 2^-66 absolute, where no float below 2^20 comes nearer to a multiple of pi/2 than
   2^-27.8 (0x1.f9cbe2p+7). Returns the reduced argument; n mod 4 in *quadrant. */
#define JX_TRIG_FAST_LIMIT 0x1p20f
JX_FN double jx_reduce_pio2_fast(float ax, jx_u32 *quadrant) {
  const double d = (double)ax;
  const double shifted = d * 0x1.45f306dc9c883p-1 + JX_ROUND_SHIFT;
  const double n = shifted - JX_ROUND_SHIFT;
  *quadrant = (jx_u32)JX_D2U(shifted) & 3u;
  return (d - n * 0x1.921fb544p0) - n * 0x1.0b4611a626331p-34;
}
/* Every finite float: |x| (2/pi) = n + f, |f| <= 1/2 plus a little, by Payne-Hanek without tables; returns f pi/2
   and n mod 4 in *quadrant. x = M 2^E (M < 2^24) times 28-bit chunks of 2/pi is exact in double. The chunks before
   the window each give a multiple of 4 (no quadrant information), so the window of four starts where that ends
   (|x| >= 2^53, 2^81, 2^109 move it, chosen by selects); the first two products are reduced mod 4 exactly and summed
   with their rounding error (TwoSum); the third is below 1/8 and joins once n is taken off; the fourth, a 53-bit
   tail of 2/pi, adds its rounding error of 2^-84. f is good to 2^-80 absolute plus 2^-53 relative, where the
   closest a float comes to a multiple of pi/2 is 2^-29.2 (0x1.f37c8ap+95). */
JX_FN double jx_reduce_pio2_huge(float ax, jx_u32 *quadrant) {
  const double d = (double)ax;
  const jx_u64 w1 = JX_MASK64(ax >= 0x1p53f), w2 = JX_MASK64(ax >= 0x1p81f), w3 = JX_MASK64(ax >= 0x1p109f);
  const double c0 = jx_blendd(w1, jx_blendd(w2, jx_blendd(w3, 0x1.f47d4d0000000p-86, 0x1.4fe13a8000000p-59), 0x1.c9c882a000000p-29), 0x1.45f306c000000p-1);
  const double c1 = jx_blendd(w1, jx_blendd(w2, jx_blendd(w3, 0x1.bb81b6c000000p-113, 0x1.f47d4d0000000p-86), 0x1.4fe13a8000000p-59), 0x1.c9c882a000000p-29);
  const double c2 = jx_blendd(w1, jx_blendd(w2, jx_blendd(w3, 0x1.4acc9e0000000p-143, 0x1.bb81b6c000000p-113), 0x1.f47d4d0000000p-86), 0x1.4fe13a8000000p-59);
  const double c3 = jx_blendd(w1, jx_blendd(w2, jx_blendd(w3, 0x1.0e4107f9458eap-170, 0x1.4acc9e21c820cp-143), 0x1.bb81b6c52b327p-113), 0x1.f47d4d377036cp-86);
  const double p0 = d * c0, p1 = d * c1, p2 = d * c2, p3 = d * c3;
  /* minus the nearest multiple of 4: the sum with 1.5 * 2^54 has an ulp of 4; exact, as |p0|, |p1| < 2^53 */
  const double q0 = p0 - ((p0 + 0x1.8p54) - 0x1.8p54), q1 = p1 - ((p1 + 0x1.8p54) - 0x1.8p54);
  const double s = q0 + q1, b = s - q0, e = (q0 - (s - b)) + (q1 - b);
  /* n from the rounded sum; s - n is exact, and adding p2 to it rounds relative to f */
  const double shifted = (s + p2) + JX_ROUND_SHIFT;
  const double n = shifted - JX_ROUND_SHIFT;
  *quadrant = (jx_u32)JX_D2U(shifted) & 3u;
  return (((s - n) + p2) + (e + p3)) * 0x1.921fb54442d18p0;
}
/* sin(r) and cos(r) for |r| <= pi/4 plus a little: the polynomials of glibc's sinf/cosf (ARM's optimized routines) */
JX_FN double jx_sin_poly(double r) {
  const double z = r * r;
  return r + (r * z) * (-0x1.555545995a603p-3 + z * (0x1.1107605230bc4p-7 + z * -0x1.994eb3774cf24p-13));
}
JX_FN double jx_cos_poly(double r) {
  const double z = r * r;
  return 1.0 + z * (-0x1.ffffffd0c621cp-2 + z * (0x1.55553e1068f19p-5 + z * (-0x1.6c087e89a359dp-10 + z * 0x1.99343027bf8c3p-16)));
}
/* sin, cos and tan from the reduced argument and quadrant: the polynomials chosen by the quadrant's parity after
   rounding to float, signs flipped on bits; tan divides in double */
JX_FN float jx_sin_from(float x, double r, jx_u32 q) {
  const float v = jx_blendf(JX_MASK(q & 1u), (float)jx_cos_poly(r), (float)jx_sin_poly(r));
  /* quadrants 2 and 3 negate; sin is odd */
  return JX_U2F(JX_F2U(v) ^ ((q >> 1) << 31) ^ (JX_F2U(x) & 0x80000000u));
}
JX_FN float jx_cos_from(float x, double r, jx_u32 q) {
  (void)x;
  const float v = jx_blendf(JX_MASK(q & 1u), (float)jx_sin_poly(r), (float)jx_cos_poly(r));
  /* quadrants 1 and 2 negate */
  return JX_U2F(JX_F2U(v) ^ ((((q + 1u) >> 1) & 1u) << 31));
}
JX_FN float jx_tan_from(float x, double r, jx_u32 q) {
  const double s = jx_sin_poly(r), c = jx_cos_poly(r);
  const jx_u64 odd = JX_MASK64(q & 1u);
  /* odd quadrants: -cos/sin; tan is odd */
  const float v = (float)(jx_blendd(odd, c, s) / jx_blendd(odd, s, c));
  return JX_U2F(JX_F2U(v) ^ ((q & 1u) << 31) ^ (JX_F2U(x) & 0x80000000u));
}
/* jx_sinf: every float (infinities and NaN give NaN), both reductions computed and the fast one's result taken below
   2^20, so that jx_sinf_fast, which holds only there, gives the same bits */
#define JX_TRIG_FUNCTIONS(NAME)                                                                                        \
  JX_FN float jx_##NAME##f_fast(float x) {                                                                             \
    jx_u32 q;                                                                                                          \
    const double r = jx_reduce_pio2_fast(fabsf(x), &q);                                                                \
    return jx_##NAME##_from(x, r, q);                                                                                  \
  }                                                                                                                    \
  JX_FN float jx_##NAME##f(float x) {                                                                                  \
    const float ax = fabsf(x);                                                                                         \
    jx_u32 q_fast, q_huge;                                                                                             \
    const double r_fast = jx_reduce_pio2_fast(ax, &q_fast), r_huge = jx_reduce_pio2_huge(ax, &q_huge);                \
    const jx_u32 fast = JX_MASK(ax < JX_TRIG_FAST_LIMIT);                                                              \
    const double r = jx_blendd(JX_MASK64(ax < JX_TRIG_FAST_LIMIT), r_fast, r_huge);                                    \
    return jx_blendf(JX_MASK(!(ax < INFINITY)), NAN, jx_##NAME##_from(x, r, (q_fast & fast) | (q_huge & ~fast)));       \
  }
JX_TRIG_FUNCTIONS(sin)
JX_TRIG_FUNCTIONS(cos)
JX_TRIG_FUNCTIONS(tan)
/* The kernels call sinf, cosf, tanf through JX_TRIG(name, x): the full versions, except in the first pass of a
   kernel rendered in blocks (render/c.ts), which redefines JX_TRIG as JX_TRIG_FAST: the fast versions, noting in
   the block's jx_huge whether an argument needed the full ones (the block is then computed again with them). The
   huge-argument reduction is most of the full versions' cost, and almost never needed. */
#define JX_TRIG_FULL(NAME, x) jx_##NAME##f(x)
#define JX_TRIG_FAST(NAME, x) (jx_huge |= !(fabsf(x) < JX_TRIG_FAST_LIMIT), jx_##NAME##f_fast(x))
#define JX_TRIG(NAME, x) JX_TRIG_FULL(NAME, x)

/* ---- inverse trigonometry ---- */

JX_FN float jx_asinf(float x) {
  const double a = fabs((double)x);
  /* |x| <= 1/2: the polynomial at |x|; above: asin(a) = pi/2 - 2 asin(sqrt((1 - a)/2)) */
  const jx_u64 big = JX_MASK64(a > 0.5);
  const double z = jx_blendd(big, (1.0 - a) * 0.5, a * a);
  const double t = jx_blendd(big, sqrt(z), a);
  const double p = jx_asin_poly(t, z);
  const double v = jx_blendd(big, 0x1.921fb54442d18p0 - 2.0 * p, p);
  return jx_blendf(JX_MASK(a <= 1.0), jx_signed_likef((float)v, x), NAN);
}

JX_FN float jx_acosf(float x) {
  const double d = (double)x, a = fabs(d);
  const jx_u64 big = JX_MASK64(a > 0.5), negative = JX_MASK64(d < 0.0);
  const double z = jx_blendd(big, (1.0 - a) * 0.5, a * a);
  const double t = jx_blendd(big, sqrt(z), d);
  const double p = jx_asin_poly(t, z);
  /* |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(sqrt((1 - x)/2)); x < -1/2: pi - that */
  const double v = jx_blendd(big, jx_blendd(negative, 0x1.921fb54442d18p1 - 2.0 * p, 2.0 * p), 0x1.921fb54442d18p0 - p);
  return jx_blendf(JX_MASK(a <= 1.0), (float)v, NAN);
}

/* atan(n / m) for 0 <= n <= m, m > 0 (one division): above tan(pi/8) through atan(a) = pi/4 + atan((a-1)/(a+1)) */
JX_FN double jx_atan_ratio(double n, double m) {
  const jx_u64 mid = JX_MASK64(n > 0x1.a827999fcef32p-2 * m);
  const double t = jx_blendd(mid, n - m, n) / jx_blendd(mid, n + m, m);
  return jx_blendd(mid, 0x1.921fb54442d18p-1, 0.0) + jx_atan_poly(t);
}

JX_FN float jx_atanf(float x) {
  const double a = fabs((double)x);
  /* |x| > 1: pi/2 - atan(1/|x|) */
  const jx_u64 big = JX_MASK64(a > 1.0);
  const double v = jx_atan_ratio(jx_blendd(big, 1.0, a), jx_blendd(big, a, 1.0));
  const double w = jx_blendd(big, 0x1.921fb54442d18p0 - v, v);
  return jx_blendf(JX_MASK(x != x), x, jx_signed_likef((float)w, x));
}

JX_FN float jx_atan2f(float y, float x) {
  double ay = fabs((double)y), ax = fabs((double)x);
  /* both infinite: the angle of (1, 1) */
  const jx_u64 both_inf = JX_MASK64((ay == INFINITY) & (ax == INFINITY));
  ay = jx_blendd(both_inf, 1.0, ay);
  ax = jx_blendd(both_inf, 1.0, ax);
  const jx_u64 steep = JX_MASK64(ay > ax);
  const double n = jx_blendd(steep, ax, ay), m = jx_blendd(steep, ay, ax);
  /* both zero: atan(0) */
  const double v = jx_atan_ratio(n, jx_blendd(JX_MASK64(m == 0.0), 1.0, m));
  const double w1 = jx_blendd(steep, 0x1.921fb54442d18p0 - v, v);
  const double w = jx_blendd(JX_MASK64(JX_F2U(x) >> 31), 0x1.921fb54442d18p1 - w1, w1);
  return jx_blendf(JX_MASK((x != x) | (y != y)), x + y, jx_signed_likef((float)w, y));
}

/* ---- hyperbolic ---- */

JX_FN float jx_sinhf(float x) {
  /* (u + u/(u + 1))/2 with u = e^|x| - 1: no cancellation for small |x|; |x| > 100 overflows anyway */
  const double a = jx_blendd(JX_MASK64(fabsf(x) > 100.0f), 100.0, fabs((double)x));
  const double u = jx_expm1_d(a);
  const float r = (float)(0.5 * (u + u / (u + 1.0)));
  return jx_blendf(JX_MASK(x != x), x, jx_signed_likef(r, x));
}

JX_FN float jx_coshf(float x) {
  const double a = jx_blendd(JX_MASK64(fabsf(x) > 100.0f), 100.0, fabs((double)x));
  const double e = jx_exp_d(a);
  return jx_blendf(JX_MASK(x != x), x, (float)(0.5 * e + 0.5 / e));
}

JX_FN float jx_asinhf(float x) {
  /* log1p(a + a^2/(1 + sqrt(1 + a^2))): exact near 0; a^2 stays finite in double for every float */
  const double a = fabs((double)x);
  const double r = jx_log1p_d(a + a * a / (1.0 + sqrt(1.0 + a * a)));
  return jx_blendf(JX_MASK(!(fabsf(x) < INFINITY)), x, jx_signed_likef((float)r, x));
}

JX_FN float jx_acoshf(float x) {
  /* log1p(t + sqrt(t^2 + 2t)), t = x - 1 exact: accurate near 1 */
  const jx_u32 ok = JX_MASK((x >= 1.0f) & (x < INFINITY));
  const double t = (double)jx_blendf(ok, x, 1.0f) - 1.0;
  const float r = (float)jx_log1p_d(t + sqrt(t * t + 2.0 * t));
  return jx_blendf(ok, r, jx_blendf(JX_MASK(x == INFINITY), x, NAN));
}

JX_FN float jx_atanhf(float x) {
  /* log1p(2a/(1 - a))/2, 1 - a exact */
  const float ax = fabsf(x);
  const jx_u32 ok = JX_MASK(ax < 1.0f);
  const double a = (double)jx_blendf(ok, ax, 0.0f);
  const float r = (float)(0.5 * jx_log1p_d(2.0 * a / (1.0 - a)));
  return jx_blendf(ok, jx_signed_likef(r, x), jx_blendf(JX_MASK(ax == 1.0f), jx_signed_likef(INFINITY, x), NAN));
}

/* ---- cube root, erf ---- */

JX_FN float jx_cbrtf(float x) {
  const float ax = fabsf(x);
  /* subnormals scaled by 2^24 (their cube root by 2^8); a first guess of ax^(-1/3) from the bits, four Newton
     steps r (4 - a r^3)/3 (each squares the error: 2^-5 to 2^-70), then ax^(1/3) = a r^2 */
  const jx_u32 sub = JX_MASK(ax < 0x1p-126f);
  const float as = jx_blendf(sub, ax * 0x1p24f, ax);
  const double a = (double)as;
  double r = (double)JX_U2F(0x54a2fa8cu - JX_F2U(as) / 3u);
  for (int i = 0; i < 4; i++) r = r * (4.0 - a * (r * r * r)) * (1.0 / 3.0);
  const double c = a * r * r * jx_blendd(JX_MASK64(ax < 0x1p-126f), 0x1p-8, 1.0);
  return jx_blendf(JX_MASK((ax == 0.0f) | !(ax < INFINITY)), x, jx_signed_likef((float)c, x));
}

JX_FN float jx_erff(float x) {
  /* |x| <= 1: x P(x^2), relative 2^-45.6; 1 < |x| < 4: Q(|x| - 5/2), absolute 2^-39.7; beyond: 1 (bench/math/fit.py) */
  const double a = fabs((double)x), z = a * a;
  double p = -0x1.c1daad3671359p-24;
  p = p * z + 0x1.9aefaf18a65e6p-20;
  p = p * z + -0x1.f073e484864fep-17;
  p = p * z + 0x1.f942318f6a365p-14;
  p = p * z + -0x1.c028752415c97p-11;
  p = p * z + 0x1.565ba09e58bf8p-8;
  p = p * z + -0x1.b82ce160ceea5p-6;
  p = p * z + 0x1.ce2f2197d8c8ap-4;
  p = p * z + -0x1.812746b02763ap-2;
  p = p * z + 0x1.20dd750429b1ap+0;
  const double t = a - 2.5;
  double q = 0x1.22874842ab16dp-30;
  q = q * t + -0x1.d8681547cd00ep-32;
  q = q * t + -0x1.7f4aeb5e8e038p-26;
  q = q * t + 0x1.4698cc856f4e6p-25;
  q = q * t + 0x1.74dc2b61ef388p-23;
  q = q * t + -0x1.735089154de27p-21;
  q = q * t + 0x1.9eb2f210a773cp-23;
  q = q * t + 0x1.404183352893ep-18;
  q = q * t + -0x1.d8f386df85c15p-17;
  q = q * t + 0x1.530e6e4f50cfep-18;
  q = q * t + 0x1.4a9140d6ff439p-14;
  q = q * t + -0x1.06626a98c5cb1p-12;
  q = q * t + 0x1.11538332aea4bp-12;
  q = q * t + 0x1.1c5e058f1e18cp-11;
  q = q * t + -0x1.6ecdb0b16faacp-9;
  q = q * t + 0x1.90e82804e8facp-8;
  q = q * t + -0x1.1a89ba06a32b6p-7;
  q = q * t + 0x1.119d9faac4d78p-7;
  q = q * t + -0x1.64e3dcc4059e5p-8;
  q = q * t + 0x1.1d831731d0135p-9;
  q = q * t + 0x1.ffcaa8f4c9737p-1;
  const double v = jx_blendd(JX_MASK64(a <= 1.0), a * p, jx_blendd(JX_MASK64(a < 4.0), q, 1.0));
  return jx_blendf(JX_MASK(x != x), x, jx_signed_likef((float)v, x));
}

/* ---- pow ---- */

/* C99 Annex F's pow: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; a negative x needs an integer y (odd: negative
   result); zeros and infinities by the limits. Otherwise 2^(y log2|x|) in double: log2|x| good to 2^-52, its
   product with y rounded once, so the exponent is good to 2^-44 absolute over the float range and the result to
   2^-43 relative; exact results (pow(3, 2), pow(2, -3), pow(x, 1)) come out exact. */
JX_FN float jx_powf(float x, float y) {
  const float ay = fabsf(y);
  /* y integer, y odd; every float from 2^23 up is an integer, and from 2^24 up even */
  const float rounded = (ay + 8388608.0f) - 8388608.0f;
  const jx_u32 is_int = JX_MASK((ay >= 8388608.0f) | (rounded == ay));
  /* below 2^23, ay + 2^23 has an ulp of 1 and the integer in its low mantissa bits */
  const jx_u32 parity = JX_F2U(jx_blendf(JX_MASK(ay < 8388608.0f), ay + 8388608.0f, ay)) & 1u;
  const jx_u32 odd = is_int & JX_MASK(ay < 16777216.0f) & JX_MASK(parity);
  const float ax = fabsf(x);
  const jx_u32 x_zero = JX_MASK(ax == 0.0f), x_inf = JX_MASK(ax == INFINITY);
  /* log2|x|: -inf at 0, +inf at inf, so that y log2|x| gives the limits */
  const double lx = jx_log_d((double)jx_blendf(x_zero | x_inf, 1.0f, ax)) * 0x1.71547652b82fep0;
  const double l = jx_blendd(JX_MASK64(ax == 0.0f), -INFINITY, jx_blendd(JX_MASK64(ax == INFINITY), INFINITY, lx));
  double t = (double)y * l;
  t = jx_blendd(JX_MASK64(t > 300.0), 300.0, jx_blendd(JX_MASK64(t < -300.0), -300.0, t));
  const float mag = (float)jx_exp_d(t * 0x1.62e42fefa39efp-1);
  const float signed_mag = JX_U2F(JX_F2U(mag) | (JX_F2U(x) & 0x80000000u & odd));
  const jx_u32 one = JX_MASK((y == 0.0f) | (x == 1.0f) | ((ax == 1.0f) & (ay == INFINITY)));
  const jx_u32 nan = JX_MASK((x != x) | (y != y) | ((x < 0.0f) & (x > -INFINITY) & ~is_int));
  return jx_blendf(one, 1.0f, jx_blendf(nan, NAN, signed_mag));
}

/* the generated kernels' float math calls (render/expr.ts: the f-suffixed C names) */
#define expf(x) jx_expf(x)
#define exp2f(x) jx_exp2f(x)
#define expm1f(x) jx_expm1f(x)
#define logf(x) jx_logf(x)
#define log1pf(x) jx_log1pf(x)
#define tanhf(x) jx_tanhf(x)
#define sinf(x) JX_TRIG(sin, x)
#define cosf(x) JX_TRIG(cos, x)
#define tanf(x) JX_TRIG(tan, x)
#define asinf(x) jx_asinf(x)
#define acosf(x) jx_acosf(x)
#define atanf(x) jx_atanf(x)
#define atan2f(y, x) jx_atan2f(y, x)
#define sinhf(x) jx_sinhf(x)
#define coshf(x) jx_coshf(x)
#define asinhf(x) jx_asinhf(x)
#define acoshf(x) jx_acoshf(x)
#define atanhf(x) jx_atanhf(x)
#define cbrtf(x) jx_cbrtf(x)
#define erff(x) jx_erff(x)
#define powf(x, y) jx_powf(x, y)
#endif
