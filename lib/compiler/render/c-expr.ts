// Renders kernel-IR scalar expressions to C statements in SSA form (one
// `const T vN = ...;` per node, shared nodes rendered once). Types: 16-bit
// floats compute in float, everything else in its own C type.
import { type DType, isFloating, isHalf, isUnsigned, integerRange } from '../../core/dtype.js';
import type { Expr } from '../kernel-ir.js';
import { COMPARE_OPS, clampExpr, selectExpr } from './expr-common.js';

const STORAGE: Record<DType, string> = {
  bool: 'uint8_t', int8: 'int8_t', int16: 'int16_t', int32: 'int32_t', uint8: 'uint8_t', uint16: 'uint16_t',
  uint32: 'uint32_t', float16: 'uint16_t', bfloat16: 'uint16_t', float32: 'float', float64: 'double',
};

/** The C type of a dtype in memory. */
export const storageType = (d: DType): string => STORAGE[d];

/** The C type a dtype is computed in. */
export const computeType = (d: DType): string => (isHalf(d) ? 'float' : STORAGE[d]);

/** Unsigned twin of an integer C type, for wrapping arithmetic. */
const UNSIGNED: Record<string, string> = {
  int8_t: 'uint8_t', int16_t: 'uint16_t', int32_t: 'uint32_t', uint8_t: 'uint8_t', uint16_t: 'uint16_t', uint32_t: 'uint32_t',
};

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
  if (d === 'bool') return `(uint8_t)((${value}) != 0)`;
  return value;
}

export function literal(value: number, d: DType): string {
  if (d === 'bool') return value ? '1' : '0';
  if (isFloating(d)) {
    const f = d === 'float64' ? '' : 'f';
    if (Number.isNaN(value)) return d === 'float64' ? '((double)NAN)' : 'NAN';
    if (value === Infinity) return d === 'float64' ? '((double)INFINITY)' : 'INFINITY';
    if (value === -Infinity) return d === 'float64' ? '(-(double)INFINITY)' : '(-INFINITY)';
    if (Object.is(value, -0)) return `(-0.0${f})`;
    let s = value.toPrecision(17);
    if (!/[.e]/.test(s)) s += '.0';
    return `(${s}${f})`;
  }
  const [lo] = integerRange(d);
  if (d === 'int32' && value === lo) return '((int32_t)(-2147483647 - 1))';
  return `((${STORAGE[d]})${value}${isUnsigned(d) ? 'u' : ''})`;
}

const FLOAT_FN: Record<string, string> = {
  floor: 'floor', ceil: 'ceil', exp: 'exp', exp2: 'exp2', log: 'log', expm1: 'expm1', log1p: 'log1p', tanh: 'tanh',
  sin: 'sin', cos: 'cos', tan: 'tan', asin: 'asin', acos: 'acos', atan: 'atan', sinh: 'sinh', cosh: 'cosh',
  asinh: 'asinh', acosh: 'acosh', atanh: 'atanh', sqrt: 'sqrt', cbrt: 'cbrt', erf: 'erf', abs: 'fabs',
};

/**
 * Renders expressions into SSA statements; `input(i)` supplies the C expression that loads input i.
 * With an `outer` renderer whose statements are in scope, nodes it already rendered are reused
 * (loop-invariant values computed once outside a loop); `prefix` keeps the two sets of names apart.
 */
export class ExprRenderer {
  readonly lines: string[] = [];
  #names = new Map<Expr, string>();
  #count = 0;

  constructor(
    private readonly input: (index: number) => string,
    private readonly iota: (axis: number) => string,
    private readonly outer?: ExprRenderer,
    private readonly prefix = 'v',
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
      case 'unary': return unary(e.name, this.render(e.x), e.dtype, e.param ?? []);
      case 'binary': return binary(e.name, this.render(e.x), this.render(e.y), e.dtype);
      case 'compare': return `(uint8_t)(${this.render(e.x)} ${COMPARE_OPS[e.name]} ${this.render(e.y)})`;
      case 'select': return selectExpr(this.render(e.predicate), e.predicate.dtype, e.cases.map((c) => this.render(c)));
      case 'clamp': return clampExpr(this.render(e.lo), this.render(e.x), this.render(e.hi), e.dtype);
    }
  }
}

function floatFn(name: string, d: DType): string {
  return d === 'float64' ? name : `${name}f`;
}

function convert(x: string, from: DType, to: DType): string {
  if (from === to) return x;
  if (to === 'bool') return `(uint8_t)(${x} != 0)`;
  const target = computeType(to);
  if (from === 'float64' && to === 'float16') return `jx_h2f(jx_f2h(jx_d2f_odd(${x})))`;
  if (isFloating(to)) return `(${target})(${x})`;
  if (isFloating(from)) return `jx_fcast_${INT_SUFFIX[to]}((double)(${x}))`;
  return `(${target})(${x})`;
}

function wrapInt(d: DType, a: string, op: string, b: string): string {
  const t = computeType(d);
  const u = UNSIGNED[t]!;
  return `(${t})((${u})(${a}) ${op} (${u})(${b}))`;
}

function unary(name: string, x: string, d: DType, param: number[]): string {
  const t = computeType(d);
  const floating = isFloating(d);
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
    case 'is_finite': return `(uint8_t)isfinite(${x})`;
    case 'logistic': {
      const one = d === 'float64' ? '1.0' : '1.0f';
      return `(${one} / (${one} + ${floatFn('exp', d)}(-${x})))`;
    }
    case 'rsqrt': return `(${d === 'float64' ? '1.0' : '1.0f'} / ${floatFn('sqrt', d)}(${x}))`;
    case 'not': return d === 'bool' ? `(uint8_t)!${x}` : `(${t})~${x}`;
    case 'square': return floating ? `(${x} * ${x})` : wrapInt(d, x, '*', x);
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
      if (!fn) throw new Error(`render/c: no C lowering for unary ${name}`);
      return `${floatFn(fn, d)}(${x})`;
    }
  }
}

function binary(name: string, a: string, b: string, d: DType): string {
  const floating = isFloating(d);
  const s = d === 'float64' ? 'd' : 'f';
  switch (name) {
    case 'add': return floating ? `(${a} + ${b})` : wrapInt(d, a, '+', b);
    case 'sub': return floating ? `(${a} - ${b})` : wrapInt(d, a, '-', b);
    case 'mul': return floating ? `(${a} * ${b})` : wrapInt(d, a, '*', b);
    case 'div': return floating ? `(${a} / ${b})` : `jx_div_${INT_SUFFIX[d]}(${a}, ${b})`;
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
    default: throw new Error(`render/c: no C lowering for binary ${name}`);
  }
}
