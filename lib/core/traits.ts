// One table of primitive traits (issue 14): every primitive says here which
// dtype class it accepts and how the compiler should treat it, and the sets
// the layers used to keep by hand (primitives.ts's float-only check, fusion's
// expensive ops, the cost model's transcendentals, the CUDA renderer's libm
// calls) are derived from it. The table is typed over every primitive, so a
// new primitive that forgets its traits is a compile error here.
import type { Primitive } from './primitives.js';

export interface PrimitiveTraits {
  /** Operands must be floating point ('requires a floating-point operand'). */
  floatOnly?: boolean;
  /** Operands must be integers or booleans (bitwise ops). */
  intOrBoolOnly?: boolean;
  /** Operands must be integers, not booleans (shifts, population_count, clz): a TypeError otherwise, as JAX's dtype check. */
  intOnly?: boolean;
  /** XLA's HloCostAnalysis counts one transcendental per element (the cost model matches JAX's costAnalysis). */
  xlaTranscendental?: boolean;
  /** XLA's IsExpensive: fusion materializes its result rather than evaluating it twice. */
  expensive?: boolean;
  /** Rendered as a libm-sized function call (exp, sin, pow, ...): CUDA kernels use at most 4 vector lanes for it. */
  libmCall?: boolean;
  /**
   * The C math function (C99 <math.h>, CUDA's math API) that computes it on float64; the float version is its
   * name with an `f` suffix. Both renderers call it (render/expr.ts), so such a primitive needs no rendering code.
   */
  mathFunction?: string;
  /** Its float16/bfloat16 result is exactly one of its operands' values: fusion needs no rounding node after it. */
  exactInHalf?: boolean;
  /** Has an effect beyond its outputs (JAX's effectful primitives): never eliminated or merged, and kept in program order. */
  effectful?: boolean;
}

const none: PrimitiveTraits = {};
/** A libm function of floats that XLA counts as transcendental and expensive. */
const math = (mathFunction: string): PrimitiveTraits => ({ floatOnly: true, xlaTranscendental: true, expensive: true, libmCall: true, mathFunction });
/** A libm function of floats that XLA does not count as transcendental (but is expensive). */
const mathOther = (mathFunction: string): PrimitiveTraits => ({ floatOnly: true, expensive: true, libmCall: true, mathFunction });
const bitwise: PrimitiveTraits = { intOrBoolOnly: true };
const exact: PrimitiveTraits = { exactInHalf: true };
const integerOnly: PrimitiveTraits = { intOnly: true };

export const TRAITS: { readonly [P in Primitive]: PrimitiveTraits } = {
  // unary
  neg: exact, sign: exact, floor: { floatOnly: true, mathFunction: 'floor' }, ceil: { floatOnly: true, mathFunction: 'ceil' },
  round: { floatOnly: true }, is_finite: { floatOnly: true }, exp: math('exp'), exp2: mathOther('exp2'), log: math('log'),
  expm1: math('expm1'), log1p: math('log1p'), tanh: math('tanh'), logistic: { floatOnly: true, xlaTranscendental: true, expensive: true, libmCall: true },
  sin: math('sin'), cos: math('cos'), tan: math('tan'), asin: mathOther('asin'), acos: mathOther('acos'),
  atan: mathOther('atan'), sinh: mathOther('sinh'), cosh: mathOther('cosh'), asinh: mathOther('asinh'),
  acosh: mathOther('acosh'), atanh: mathOther('atanh'),
  sqrt: { floatOnly: true, xlaTranscendental: true, expensive: true }, rsqrt: { floatOnly: true, xlaTranscendental: true, expensive: true },
  cbrt: math('cbrt'), erf: math('erf'), abs: exact, not: bitwise, integer_pow: none, reduce_precision: { floatOnly: true }, copy: exact,
  square: none, population_count: integerOnly, clz: integerOnly,
  // binary
  add: none, sub: none, mul: none, div: { expensive: true }, rem: { expensive: true, libmCall: true },
  pow: { xlaTranscendental: true, expensive: true, libmCall: true, mathFunction: 'pow' }, max: exact, min: exact,
  atan2: { floatOnly: true, xlaTranscendental: true, expensive: true, libmCall: true, mathFunction: 'atan2' }, and: bitwise,
  or: bitwise, xor: bitwise, nextafter: { floatOnly: true, libmCall: true },
  shift_left: integerOnly, shift_right_logical: integerOnly, shift_right_arithmetic: integerOnly,
  eq: none, ne: none, lt: none, le: none, gt: none, ge: none,
  // the rest: no elementwise traits
  select_n: exact, clamp: exact, convert_element_type: none, bitcast_convert_type: exact, iota: none, broadcast_in_dim: none, reshape: none,
  transpose: none, squeeze: none, rev: none, slice: none, pad: none, concatenate: none, dynamic_slice: none,
  dynamic_update_slice: none, gather: none, scatter: none, scatter_add: none, scatter_mul: none, scatter_min: none,
  scatter_max: none, reduce_sum: none, reduce_prod: none, reduce_max: none, reduce_min: none, reduce_and: none,
  reduce_or: none, argmax: none, argmin: none, cumsum: none, cumprod: none, cummax: none, cummin: none, sort: none, top_k: none, qr: none, eigh: none, svd: none,
  cholesky: none, triangular_solve: none, lu: none,
  dot_general: none, conv_general_dilated: none, stop_gradient: none, scan: none, while: none, cond: none, checkpoint: none, name: none,
  device_put: none, custom_jvp_call: none, custom_vjp_call: none, custom_lin: none,
  // host callbacks: a debug callback prints (an effect); a pure callback is a value like any other
  debug_callback: { effectful: true }, pure_callback: none,
};

/** The primitives (or kernel-IR op names, which are the primitives' names) with a trait. */
export function primitivesWith(trait: keyof PrimitiveTraits): ReadonlySet<string> {
  return new Set(Object.entries(TRAITS).filter(([, t]) => t[trait] === true).map(([p]) => p));
}
