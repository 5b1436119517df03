// Renders kernel-IR scalar expressions to C-family statements in SSA form
// (one `const T vN = ...;` per node, shared nodes rendered once), for both
// targets: the C backend and CUDA are C dialects, so every case is written
// once here and each target supplies only a `Dialect` (tinygrad's
// cstyle.py shape): its fixed-width type names, NaN/infinity spellings,
// how an IEEE operation is written, and two intrinsics. Both backends
// compute the same bits: 16-bit floats compute in float and round on store;
// integers wrap (computed in 32 unsigned bits, truncated to the type);
// division by zero, float-to-int saturation and NaN-propagating max/min
// follow XLA through the prelude helpers (cuda/kernels/jaxon_prelude.h).
// A new elementwise primitive that is a C math function needs nothing here:
// its `mathFunction` trait (core/traits.ts) names the function.
import { type DType, isFloating, isHalf, isUnsigned, integerRange, itemsize } from '../../core/dtype.js';
import type { BinaryPrimitive, ComparePrimitive, UnaryPrimitive } from '../../core/primitives.js';
import { TRAITS } from '../../core/traits.js';
import type { Expr } from '../kernel-ir.js';

/** What differs between the C and CUDA spellings of the same expression. */
export interface Dialect {
  readonly target: 'c' | 'cuda';
  /** The type of each dtype in memory. */
  readonly storage: Readonly<Record<DType, string>>;
  /** NaN and +infinity of float (`double: false`) or double. */
  nan(double: boolean): string;
  inf(double: boolean): string;
  /** One IEEE operation, rounded on its own (never contracted into an FMA). */
  arith(op: 'add' | 'sub' | 'mul' | 'div', double: boolean, a: string, b: string): string;
  /** The correctly rounded square root. */
  sqrt(double: boolean, x: string): string;
  /** 1 when x (of dtype `d`, computed in float or double) is finite, as the dialect's bool type. */
  isFinite(d: DType, x: string): string;
}

/**
 * The C backend: <stdint.h> types and <math.h> spellings; kernels compile with
 * -ffp-contract=off, so operators already round each operation on its own.
 */
export const C_DIALECT: Dialect = {
  target: 'c',
  storage: {
    bool: 'uint8_t', int8: 'int8_t', int16: 'int16_t', int32: 'int32_t', uint8: 'uint8_t', uint16: 'uint16_t',
    uint32: 'uint32_t', float16: 'uint16_t', bfloat16: 'uint16_t', float32: 'float', float64: 'double',
  },
  nan: (double) => (double ? '((double)NAN)' : 'NAN'),
  inf: (double) => (double ? '((double)INFINITY)' : 'INFINITY'),
  arith: (op, _double, a, b) => `(${a} ${ARITH_OPS[op]} ${b})`,
  sqrt: (double, x) => `${double ? 'sqrt' : 'sqrtf'}(${x})`,
  isFinite: (_d, x) => `(uint8_t)isfinite(${x})`,
};

/**
 * CUDA under NVRTC: no headers, so our own `jx_` fixed-width types and NaN/infinity
 * from bit patterns; float arithmetic through the `__f*_rn` / `__d*_rn` intrinsics,
 * which round every operation on its own whatever --fmad says, and divide and take
 * square roots exactly whatever --prec-div and --prec-sqrt say.
 */
export const CUDA_DIALECT: Dialect = {
  target: 'cuda',
  storage: {
    bool: 'jx_u8', int8: 'jx_i8', int16: 'jx_i16', int32: 'jx_i32', uint8: 'jx_u8', uint16: 'jx_u16',
    uint32: 'jx_u32', float16: 'jx_u16', bfloat16: 'jx_u16', float32: 'float', float64: 'double',
  },
  nan: (double) => (double ? 'JX_NAN' : 'JX_NANF'),
  inf: (double) => (double ? 'JX_INF' : 'JX_INFF'),
  arith: (op, double, a, b) => `__${double ? 'd' : 'f'}${op}_rn(${a}, ${b})`,
  sqrt: (double, x) => `__${double ? 'd' : 'f'}sqrt_rn(${x})`,
  isFinite: (d, x) => `(jx_u8)${d === 'float64' ? 'jx_isfinited' : 'jx_isfinitef'}(${x})`,
};

const ARITH_OPS = { add: '+', sub: '-', mul: '*', div: '/' } as const;

export const COMPARE_OPS: Record<ComparePrimitive, string> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };

const UNSIGNED_OF_WIDTH: Record<number, DType> = { 8: 'uint8', 16: 'uint16', 32: 'uint32' };
const SIGNED_OF_WIDTH: Record<number, DType> = { 8: 'int8', 16: 'int16', 32: 'int32' };

const INT_SUFFIX: Partial<Record<DType, string>> = { int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32' };

/** The type and value conversions of one dialect, for the kernel renderers. */
export interface DialectTypes {
  /** The type of a dtype in memory. */
  storageType(d: DType): string;
  /** The type a dtype is computed in (16-bit floats compute in float). */
  computeType(d: DType): string;
  /** Converts a value loaded from storage to its compute type. */
  loadValue(d: DType, ref: string): string;
  /** Converts a compute value to storage. */
  storeValue(d: DType, value: string): string;
  literal(value: number, d: DType): string;
}

export function dialectTypes(dialect: Dialect): DialectTypes {
  const { storage } = dialect;
  const computeType = (d: DType) => (isHalf(d) ? 'float' : storage[d]);
  return {
    storageType: (d) => storage[d],
    computeType,
    loadValue(d, ref) {
      if (d === 'float16') return `jx_h2f(${ref})`;
      if (d === 'bfloat16') return `jx_bf2f(${ref})`;
      return ref;
    },
    storeValue(d, value) {
      if (d === 'float16') return `jx_f2h(${value})`;
      if (d === 'bfloat16') return `jx_f2bf(${value})`;
      if (d === 'bool') return `(${storage.bool})((${value}) != 0)`;
      return value;
    },
    literal(value, d) {
      if (d === 'bool') return value ? '1' : '0';
      if (isFloating(d)) {
        const double = d === 'float64';
        if (Number.isNaN(value)) return dialect.nan(double);
        if (value === Infinity) return dialect.inf(double);
        if (value === -Infinity) return `(-${dialect.inf(double)})`;
        const f = double ? '' : 'f';
        if (Object.is(value, -0)) return `(-0.0${f})`;
        let s = value.toPrecision(17);
        if (!/[.e]/.test(s)) s += '.0';
        return `(${s}${f})`;
      }
      const [lo] = integerRange(d);
      if (d === 'int32' && value === lo) return `((${storage.int32})(-2147483647 - 1))`;
      return `((${storage[d]})${value}${isUnsigned(d) ? 'u' : ''})`;
    },
  };
}

export const C_TYPES = dialectTypes(C_DIALECT);
export const CUDA_TYPES = dialectTypes(CUDA_DIALECT);

/** select_n over rendered cases: a bool predicate picks case 1 when true; an integer one clamps to the first or last case, as the reference interpreter defines. */
function selectExpr(p: string, predicate: DType, cases: readonly string[]): string {
  if (cases.length === 1) return cases[0]!;
  if (predicate === 'bool') return `(${p} ? ${cases[1]} : ${cases[0]})`;
  let out = cases[cases.length - 1]!;
  for (let i = cases.length - 2; i >= 0; i--) out = `(${p} ${i === 0 ? '<=' : '=='} ${i} ? ${cases[i]} : ${out})`;
  return out;
}

/** XLA's clamp: min(max(x, lo), hi), so hi wins when lo > hi; NaN-propagating for floats. */
function clampExpr(lo: string, x: string, hi: string, dtype: DType): string {
  if (isFloating(dtype)) {
    const s = dtype === 'float64' ? 'd' : 'f';
    return `jx_min${s}(jx_max${s}(${x}, ${lo}), ${hi})`;
  }
  return `(${x} > ${hi} || ${lo} > ${hi} ? ${hi} : (${x} < ${lo} ? ${lo} : ${x}))`;
}

/**
 * Renders expressions into SSA statements; `input(i)` supplies the expression that loads input i, `iota(axis)` a
 * coordinate. With an `outer` renderer whose statements are in scope, nodes it already rendered are reused
 * (loop-invariant values computed once outside a loop); `prefix` keeps the sets of names apart.
 */
export class ExprRenderer {
  readonly lines: string[] = [];
  readonly #types: DialectTypes;
  #names = new Map<Expr, string>();
  #count = 0;

  constructor(
    private readonly dialect: Dialect,
    private readonly input: (index: number) => string,
    private readonly iota: (axis: number) => string,
    private readonly prefix = 'v',
    private readonly outer?: ExprRenderer,
  ) {
    this.#types = dialect === C_DIALECT ? C_TYPES : dialect === CUDA_DIALECT ? CUDA_TYPES : dialectTypes(dialect);
  }

  /** The name of an already rendered node (here or in the outer renderer). */
  nameOf(e: Expr): string | undefined {
    return this.#names.get(e) ?? this.outer?.nameOf(e);
  }

  render(e: Expr): string {
    const known = this.nameOf(e);
    if (known) return known;
    const value = this.#value(e);
    const name = `${this.prefix}${this.#count++}`;
    this.lines.push(`const ${this.#types.computeType(e.dtype)} ${name} = ${value};`);
    this.#names.set(e, name);
    return name;
  }

  #value(e: Expr): string {
    const bool = this.dialect.storage.bool;
    switch (e.op) {
      case 'input': return this.input(e.index);
      case 'literal': return this.#types.literal(e.value, e.dtype);
      case 'iota': return `(${this.#types.computeType(e.dtype)})(${this.iota(e.axis)})`;
      case 'convert': return this.#convert(this.render(e.x), e.x.dtype, e.dtype);
      case 'bitcast': return this.#bitcast(e.parts.map((p) => this.render(p)), e.parts[0]!.dtype, e.dtype, e.lane && this.render(e.lane));
      case 'unary': return this.#unary(e.name, this.render(e.x), e.dtype, e.x.dtype, e.param ?? []);
      case 'binary': return this.#binary(e.name, this.render(e.x), this.render(e.y), e.dtype);
      case 'compare': return `(${bool})(${this.render(e.x)} ${COMPARE_OPS[e.name]} ${this.render(e.y)})`;
      case 'select': return selectExpr(this.render(e.predicate), e.predicate.dtype, e.cases.map((c) => this.render(c)));
      case 'clamp': return clampExpr(this.render(e.lo), this.render(e.x), this.render(e.hi), e.dtype);
    }
  }

  #convert(x: string, from: DType, to: DType): string {
    if (from === to) return x;
    if (to === 'bool') return `(${this.dialect.storage.bool})(${x} != 0)`;
    const target = this.#types.computeType(to);
    if (from === 'float64' && to === 'float16') return `jx_h2f(jx_f2h(jx_d2f_odd(${x})))`;
    if (isFloating(to)) return `(${target})(${x})`;
    if (isFloating(from)) return `jx_fcast_${INT_SUFFIX[to]}((double)(${x}))`;
    return `(${target})(${x})`;
  }

  /**
   * Bit reinterpretation: each part's compute value to its storage bits; one part of the same width, the `lane`-th
   * narrower piece of one wider part, or narrower parts joined (least significant first); then those bits to the
   * new dtype's compute value. A width change goes through 64 unsigned bits.
   */
  #bitcast(parts: string[], from: DType, to: DType, lane?: string): string {
    if (from === to && parts.length === 1 && lane === undefined) return parts[0]!;
    const storage = this.dialect.storage;
    const [inBits, outBits] = [8 * itemsize(from), 8 * itemsize(to)];
    const unsigned = (bits: number) => (bits === 64 ? 'jx_u64' : storage[UNSIGNED_OF_WIDTH[bits]!]);
    const bitsOf = (x: string): string => {
      if (from === 'float64') return `JX_D2U(${x})`;
      if (from === 'float32') return `JX_F2U(${x})`;
      if (from === 'float16') return `jx_f2h(${x})`;
      if (from === 'bfloat16') return `jx_f2bf(${x})`;
      return `(${unsigned(inBits)})(${x})`;
    };
    let bits: string;
    if (inBits === outBits) bits = bitsOf(parts[0]!);
    else if (lane !== undefined) bits = `(${unsigned(outBits)})((jx_u64)${bitsOf(parts[0]!)} >> (${outBits}u * (${storage.uint32})(${lane})))`;
    else bits = `(${parts.map((p, k) => `((jx_u64)(${unsigned(inBits)})${bitsOf(p)} << ${k * inBits}u)`).join(' | ')})`;
    const u = unsigned(outBits);
    if (to === 'float64') return `JX_U2D((jx_u64)${bits})`;
    if (to === 'float32') return `JX_U2F((${u})${bits})`;
    if (to === 'float16') return `jx_h2f((${u})${bits})`;
    if (to === 'bfloat16') return `jx_bf2f((${u})${bits})`;
    return `(${storage[to]})(${u})${bits}`;
  }

  /** An integer's two's-complement bits, zero-extended to 32 unsigned bits. */
  #unsignedBits(d: DType, x: string): string {
    return `(${this.dialect.storage.uint32})(${this.dialect.storage[UNSIGNED_OF_WIDTH[8 * itemsize(d)]!]})(${x})`;
  }

  /** Wrapping integer arithmetic: computed in 32 unsigned bits (no signed overflow, no int promotion), truncated to the type. */
  #wrapInt(d: DType, a: string, op: string, b: string): string {
    const u32 = this.dialect.storage.uint32;
    return `(${this.#types.computeType(d)})((${u32})(${a}) ${op} (${u32})(${b}))`;
  }

  #unary(name: UnaryPrimitive, x: string, d: DType, xd: DType, param: readonly number[]): string {
    const t = this.#types.computeType(d);
    const floating = isFloating(d);
    const double = d === 'float64';
    const one = double ? '1.0' : '1.0f';
    const { arith } = this.dialect;
    switch (name) {
      case 'neg': return floating ? `(-${x})` : this.#wrapInt(d, '0', '-', x);
      case 'sign':
        if (floating) return double ? `jx_signd(${x})` : `jx_signf(${x})`;
        return isUnsigned(d) ? `(${t})(${x} > 0)` : `(${t})((${x} > 0) - (${x} < 0))`;
      case 'abs':
        if (floating) return `${floatFn('fabs', d)}(${x})`;
        return isUnsigned(d) ? x : `(${x} < 0 ? ${this.#wrapInt(d, '0', '-', x)} : ${x})`;
      case 'round':
        return param[0] === 1 ? `${floatFn('rint', d)}(${x})` : `${floatFn('round', d)}(${x})`;
      case 'is_finite': return this.dialect.isFinite(xd, x);
      case 'logistic': return arith('div', double, one, arith('add', double, one, `${floatFn('exp', d)}(-${x})`));
      case 'sqrt': return this.dialect.sqrt(double, x);
      case 'rsqrt': return arith('div', double, one, this.dialect.sqrt(double, x));
      case 'not': return d === 'bool' ? `(${this.dialect.storage.bool})!${x}` : `(${t})~${x}`;
      case 'square': return floating ? arith('mul', double, x, x) : this.#wrapInt(d, x, '*', x);
      case 'integer_pow': {
        const y = param[0]!;
        if (floating) return double ? `jx_ipowd(${x}, ${y})` : `jx_ipowf(${x}, ${y})`;
        return `jx_ipow_${INT_SUFFIX[d]}(${x}, ${y})`;
      }
      case 'reduce_precision': {
        // each dtype rounds in its own format (float16 has fewer exponent bits than float32, and keeps its subnormals)
        const fn = double ? 'jx_reduce_precisiond' : d === 'float16' ? 'jx_reduce_precision_f16' : 'jx_reduce_precisionf';
        return `${fn}(${x}, ${param[0]}, ${param[1]})`;
      }
      case 'copy': return x;
      case 'population_count': return `(${t})JX_POPC(${this.#unsignedBits(d, x)})`;
      case 'clz': return `(${t})(JX_CLZ(${this.#unsignedBits(d, x)}) - ${32 - 8 * itemsize(d)})`;
      default: {
        const fn = TRAITS[name].mathFunction;
        if (!fn) throw new Error(`render/${this.dialect.target}: no lowering for unary ${name} (give it a mathFunction trait in core/traits.ts or a case in render/expr.ts)`);
        return `${floatFn(fn, d)}(${x})`;
      }
    }
  }

  #binary(name: BinaryPrimitive, a: string, b: string, d: DType): string {
    const floating = isFloating(d);
    const double = d === 'float64';
    const s = double ? 'd' : 'f';
    const t = this.#types.computeType(d);
    switch (name) {
      case 'add': case 'sub': case 'mul':
        return floating ? this.dialect.arith(name, double, a, b) : this.#wrapInt(d, a, ARITH_OPS[name], b);
      case 'div': return floating ? this.dialect.arith('div', double, a, b) : `jx_div_${INT_SUFFIX[d]}(${a}, ${b})`;
      case 'rem': return floating ? `${floatFn('fmod', d)}(${a}, ${b})` : `jx_rem_${INT_SUFFIX[d]}(${a}, ${b})`;
      case 'nextafter':
        // 16-bit floats step in their own format, not float32's
        if (d === 'float16') return `jx_nextafter_f16(${a}, ${b})`;
        if (d === 'bfloat16') return `jx_nextafter_bf16(${a}, ${b})`;
        return `${floatFn('nextafter', d)}(${a}, ${b})`;
      case 'max': return floating ? `jx_max${s}(${a}, ${b})` : `(${a} > ${b} ? ${a} : ${b})`;
      case 'min': return floating ? `jx_min${s}(${a}, ${b})` : `(${a} < ${b} ? ${a} : ${b})`;
      case 'and': return `(${t})(${a} & ${b})`;
      case 'or': return `(${t})(${a} | ${b})`;
      case 'xor': return `(${t})(${a} ^ ${b})`;
      // XLA's shifts: the amount read as unsigned, so a negative one is out of range like one >= the width; out of
      // range, left and logical right shifts give 0 and an arithmetic right shift the sign fill
      case 'shift_left': case 'shift_right_logical': case 'shift_right_arithmetic': {
        const width = 8 * itemsize(d);
        const u = this.dialect.storage[UNSIGNED_OF_WIDTH[width]!];
        const amount = `(${u})(${b})`;
        if (name === 'shift_right_arithmetic') {
          const signed = this.dialect.storage[SIGNED_OF_WIDTH[width]!];
          return `(${t})((${signed})(${a}) >> (${amount} < ${width}u ? ${amount} : ${width - 1}u))`;
        }
        const u32 = this.dialect.storage.uint32;
        const shifted = name === 'shift_left' ? `(${u32})(${a}) << ${amount}` : `(${u32})(${u})(${a}) >> ${amount}`;
        return `(${amount} < ${width}u ? (${t})(${shifted}) : (${t})0)`;
      }
      default: {
        const fn = TRAITS[name].mathFunction;
        if (!fn) throw new Error(`render/${this.dialect.target}: no lowering for binary ${name} (give it a mathFunction trait in core/traits.ts or a case in render/expr.ts)`);
        return `${floatFn(fn, d)}(${a}, ${b})`;
      }
    }
  }
}

/** The float (f-suffixed) or double spelling of a C math function. */
function floatFn(name: string, d: DType): string {
  return d === 'float64' ? name : `${name}f`;
}

/** Whether any output expr reads an iota node. */
export function exprsUseIota(exprs: readonly Expr[]): boolean {
  return someNode(exprs, (e) => e.op === 'iota');
}

/** Whether any node reachable from exprs (each shared node visited once) passes `test`. */
export function someNode(exprs: readonly Expr[], test: (e: Expr) => boolean): boolean {
  const seen = new Set<Expr>();
  const walk = (e: Expr): boolean => {
    if (seen.has(e)) return false;
    seen.add(e);
    if (test(e)) return true;
    switch (e.op) {
      case 'iota': return false;
      case 'input': case 'literal': return false;
      case 'unary': case 'convert': return walk(e.x);
      case 'bitcast': return e.parts.some(walk) || (e.lane !== undefined && walk(e.lane));
      case 'binary': case 'compare': return walk(e.x) || walk(e.y);
      case 'select': return walk(e.predicate) || e.cases.some(walk);
      case 'clamp': return walk(e.lo) || walk(e.x) || walk(e.hi);
    }
  };
  return exprs.some(walk);
}
