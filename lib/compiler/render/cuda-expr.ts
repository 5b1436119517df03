// Renders kernel-IR scalar expressions to CUDA C++ statements in SSA form:
// the twin of c-expr.ts, case for case, so both backends compute the same
// bits (16-bit floats compute in float and round on store; integers wrap;
// division by zero, float-to-int saturation and NaN-propagating max/min follow
// XLA through the prelude helpers). What differs from C is only spelling: our
// own `jx_` fixed-width types, NaN/infinity from bit patterns, and float
// arithmetic through the `__f*_rn` / `__d*_rn` intrinsics, which round every
// operation on its own (never fused into an FMA, whatever --fmad says) and
// divide and take square roots exactly (whatever --prec-div says), like the
// C backend compiled with -ffp-contract=off.
import { type DType, isFloating, isHalf, isUnsigned, integerRange } from '../../core/dtype.js';
import type { Expr } from '../kernel-ir.js';
import { COMPARE_OPS, clampExpr, selectExpr } from './expr-common.js';

const STORAGE: Record<DType, string> = {
  bool: 'jx_u8', int8: 'jx_i8', int16: 'jx_i16', int32: 'jx_i32', uint8: 'jx_u8', uint16: 'jx_u16',
  uint32: 'jx_u32', float16: 'jx_u16', bfloat16: 'jx_u16', float32: 'float', float64: 'double',
};

/** The CUDA type of a dtype in memory. */
export const storageType = (d: DType): string => STORAGE[d];

/** The CUDA type a dtype is computed in. */
export const computeType = (d: DType): string => (isHalf(d) ? 'float' : STORAGE[d]);

const INT_SUFFIX: Partial<Record<DType, string>> = { int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32' };

/** Converts a value loaded from storage to its compute type. */
export function loadValue(d: DType, ref: string): string {
  if (d === 'float16') return `jx_h2f(${ref})`;
  if (d === 'bfloat16') return `jx_bf2f(${ref})`;
  return ref;
}

/** Converts a compute value to storage. */
export function storeValue(d: DType, value: string): string {
  if (d === 'float16') return `jx_f2h(${value})`;
  if (d === 'bfloat16') return `jx_f2bf(${value})`;
  if (d === 'bool') return `(jx_u8)((${value}) != 0)`;
  return value;
}

export function literal(value: number, d: DType): string {
  if (d === 'bool') return value ? '1' : '0';
  if (isFloating(d)) {
    const double = d === 'float64';
    if (Number.isNaN(value)) return double ? 'JX_NAN' : 'JX_NANF';
    if (value === Infinity) return double ? 'JX_INF' : 'JX_INFF';
    if (value === -Infinity) return double ? '(-JX_INF)' : '(-JX_INFF)';
    const f = double ? '' : 'f';
    if (Object.is(value, -0)) return `(-0.0${f})`;
    let s = value.toPrecision(17);
    if (!/[.e]/.test(s)) s += '.0';
    return `(${s}${f})`;
  }
  const [lo] = integerRange(d);
  if (d === 'int32' && value === lo) return '((jx_i32)(-2147483647 - 1))';
  return `((${STORAGE[d]})${value}${isUnsigned(d) ? 'u' : ''})`;
}

const FLOAT_FN: Record<string, string> = {
  floor: 'floor', ceil: 'ceil', exp: 'exp', exp2: 'exp2', log: 'log', expm1: 'expm1', log1p: 'log1p', tanh: 'tanh',
  sin: 'sin', cos: 'cos', tan: 'tan', asin: 'asin', acos: 'acos', atan: 'atan', sinh: 'sinh', cosh: 'cosh',
  asinh: 'asinh', acosh: 'acosh', atanh: 'atanh', cbrt: 'cbrt', erf: 'erf', abs: 'fabs',
};

/**
 * Renders expressions into SSA statements; `input(i)` supplies the expression that loads input i, `iota(axis)` a
 * coordinate. With an `outer` renderer whose statements are in scope, nodes it already rendered are reused
 * (loop-invariant values computed once outside a loop); `prefix` keeps the sets of names apart.
 */
export class CudaExprRenderer {
  readonly lines: string[] = [];
  #names = new Map<Expr, string>();
  #count = 0;

  constructor(
    private readonly input: (index: number) => string,
    private readonly iota: (axis: number) => string,
    private readonly prefix = 'v',
    private readonly outer?: CudaExprRenderer,
  ) {}

  /** The name of an already rendered node (here or in the outer renderer). */
  nameOf(e: Expr): string | undefined {
    return this.#names.get(e) ?? this.outer?.nameOf(e);
  }

  render(e: Expr): string {
    const known = this.nameOf(e);
    if (known) return known;
    const value = this.#value(e);
    const name = `${this.prefix}${this.#count++}`;
    this.lines.push(`const ${computeType(e.dtype)} ${name} = ${value};`);
    this.#names.set(e, name);
    return name;
  }

  #value(e: Expr): string {
    switch (e.op) {
      case 'input': return this.input(e.index);
      case 'literal': return literal(e.value, e.dtype);
      case 'iota': return `(${computeType(e.dtype)})(${this.iota(e.axis)})`;
      case 'convert': return convert(this.render(e.x), e.x.dtype, e.dtype);
      case 'unary': return unary(e.name, this.render(e.x), e.dtype, e.x.dtype, e.param ?? []);
      case 'binary': return binary(e.name, this.render(e.x), this.render(e.y), e.dtype);
      case 'compare': return `(jx_u8)(${this.render(e.x)} ${COMPARE_OPS[e.name]} ${this.render(e.y)})`;
      case 'select': return selectExpr(this.render(e.predicate), e.predicate.dtype, e.cases.map((c) => this.render(c)));
      case 'clamp': return clampExpr(this.render(e.lo), this.render(e.x), this.render(e.hi), e.dtype);
    }
  }
}


function floatFn(name: string, d: DType): string {
  return d === 'float64' ? name : `${name}f`;
}

/** An IEEE operation that is never contracted: __fadd_rn, __dmul_rn, ... */
function exact(op: 'add' | 'sub' | 'mul' | 'div', d: DType, a: string, b: string): string {
  return `__${d === 'float64' ? 'd' : 'f'}${op}_rn(${a}, ${b})`;
}

function convert(x: string, from: DType, to: DType): string {
  if (from === to) return x;
  if (to === 'bool') return `(jx_u8)(${x} != 0)`;
  const target = computeType(to);
  if (from === 'float64' && to === 'float16') return `jx_h2f(jx_f2h(jx_d2f_odd(${x})))`;
  if (isFloating(to)) return `(${target})(${x})`;
  if (isFloating(from)) return `jx_fcast_${INT_SUFFIX[to]}((double)(${x}))`;
  return `(${target})(${x})`;
}

/** Wrapping integer arithmetic: computed in 32 unsigned bits (no signed overflow), truncated to the type. */
function wrapInt(d: DType, a: string, op: string, b: string): string {
  return `(${computeType(d)})((jx_u32)(${a}) ${op} (jx_u32)(${b}))`;
}

function unary(name: string, x: string, d: DType, xd: DType, param: number[]): string {
  const t = computeType(d);
  const floating = isFloating(d);
  const one = d === 'float64' ? '1.0' : '1.0f';
  switch (name) {
    case 'neg': return floating ? `(-${x})` : wrapInt(d, '0', '-', x);
    case 'sign':
      if (floating) return d === 'float64' ? `jx_signd(${x})` : `jx_signf(${x})`;
      return isUnsigned(d) ? `(${t})(${x} > 0)` : `(${t})((${x} > 0) - (${x} < 0))`;
    case 'abs':
      if (floating) return `${floatFn('fabs', d)}(${x})`;
      return isUnsigned(d) ? x : `(${x} < 0 ? ${wrapInt(d, '0', '-', x)} : ${x})`;
    case 'round':
      return param[0] === 1 ? `${floatFn('rint', d)}(${x})` : `${floatFn('round', d)}(${x})`;
    case 'is_finite': return `(jx_u8)${xd === 'float64' ? 'jx_isfinited' : 'jx_isfinitef'}(${x})`;
    case 'logistic': return exact('div', d, one, exact('add', d, one, `${floatFn('exp', d)}(-${x})`));
    case 'sqrt': return `__${d === 'float64' ? 'd' : 'f'}sqrt_rn(${x})`;
    case 'rsqrt': return exact('div', d, one, `__${d === 'float64' ? 'd' : 'f'}sqrt_rn(${x})`);
    case 'not': return d === 'bool' ? `(jx_u8)!${x}` : `(${t})~${x}`;
    case 'square': return floating ? exact('mul', d, x, x) : wrapInt(d, x, '*', x);
    case 'integer_pow': {
      const y = param[0]!;
      if (floating) return d === 'float64' ? `jx_ipowd(${x}, ${y})` : `jx_ipowf(${x}, ${y})`;
      return `jx_ipow_${INT_SUFFIX[d]}(${x}, ${y})`;
    }
    case 'reduce_precision': {
      // each dtype rounds in its own format (float16 has fewer exponent bits than float32, and keeps its subnormals)
      const fn = d === 'float64' ? 'jx_reduce_precisiond' : d === 'float16' ? 'jx_reduce_precision_f16' : 'jx_reduce_precisionf';
      return `${fn}(${x}, ${param[0]}, ${param[1]})`;
    }
    case 'copy': return x;
    default: {
      const fn = FLOAT_FN[name];
      if (!fn) throw new Error(`render/cuda: no CUDA lowering for unary ${name}`);
      return `${floatFn(fn, d)}(${x})`;
    }
  }
}

function binary(name: string, a: string, b: string, d: DType): string {
  const floating = isFloating(d);
  const s = d === 'float64' ? 'd' : 'f';
  switch (name) {
    case 'add': return floating ? exact('add', d, a, b) : wrapInt(d, a, '+', b);
    case 'sub': return floating ? exact('sub', d, a, b) : wrapInt(d, a, '-', b);
    case 'mul': return floating ? exact('mul', d, a, b) : wrapInt(d, a, '*', b);
    case 'div': return floating ? exact('div', d, a, b) : `jx_div_${INT_SUFFIX[d]}(${a}, ${b})`;
    case 'rem': return floating ? `${floatFn('fmod', d)}(${a}, ${b})` : `jx_rem_${INT_SUFFIX[d]}(${a}, ${b})`;
    case 'pow': return `${floatFn('pow', d)}(${a}, ${b})`;
    case 'atan2': return `${floatFn('atan2', d)}(${a}, ${b})`;
    case 'nextafter':
      // 16-bit floats step in their own format, not float32's
      if (d === 'float16') return `jx_nextafter_f16(${a}, ${b})`;
      if (d === 'bfloat16') return `jx_nextafter_bf16(${a}, ${b})`;
      return `${floatFn('nextafter', d)}(${a}, ${b})`;
    case 'max': return floating ? `jx_max${s}(${a}, ${b})` : `(${a} > ${b} ? ${a} : ${b})`;
    case 'min': return floating ? `jx_min${s}(${a}, ${b})` : `(${a} < ${b} ? ${a} : ${b})`;
    case 'and': return `(${computeType(d)})(${a} & ${b})`;
    case 'or': return `(${computeType(d)})(${a} | ${b})`;
    case 'xor': return `(${computeType(d)})(${a} ^ ${b})`;
    default: throw new Error(`render/cuda: no CUDA lowering for binary ${name}`);
  }
}
