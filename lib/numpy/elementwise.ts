// jnp's elementwise functions: promote (with weak JS scalars), broadcast,
// then one primitive. Float functions make integer inputs float32 first, as
// jnp does.
import { Array, type ArrayLike } from '../core/array.js';
import { isFloating, isInteger, isUnsigned } from '../core/dtype.js';
import { ValueError, checkOptions } from '../core/errors.js';
import * as lax from '../lax/ops.js';
import { asArray, broadcastAll, promote, promoteInexact, ufuncOperands } from './util.js';

function floatUnary(name: string, op: (x: Array) => Array) {
  return (x: ArrayLike): Array => op(promoteInexact(`jnp.${name}`, x)[0]!);
}

export const exp = floatUnary('exp', lax.exp);
export const exp2 = floatUnary('exp2', lax.exp2);
export const expm1 = floatUnary('expm1', lax.expm1);
export const log = floatUnary('log', lax.log);
export const log1p = floatUnary('log1p', lax.log1p);
export const log2 = floatUnary('log2', (x) => lax.div(lax.log(x), Math.LN2));
export const log10 = floatUnary('log10', (x) => lax.div(lax.log(x), Math.LN10));
export const sqrt = floatUnary('sqrt', lax.sqrt);
export const rsqrt = floatUnary('rsqrt', lax.rsqrt);
export const cbrt = floatUnary('cbrt', lax.cbrt);
export const sin = floatUnary('sin', lax.sin);
export const cos = floatUnary('cos', lax.cos);
export const tan = floatUnary('tan', lax.tan);
export const arcsin = floatUnary('arcsin', lax.asin);
export const arccos = floatUnary('arccos', lax.acos);
export const arctan = floatUnary('arctan', lax.atan);
export const sinh = floatUnary('sinh', lax.sinh);
export const cosh = floatUnary('cosh', lax.cosh);
export const tanh = floatUnary('tanh', lax.tanh);
export const arcsinh = floatUnary('arcsinh', lax.asinh);
export const arccosh = floatUnary('arccosh', lax.acosh);
export const arctanh = floatUnary('arctanh', lax.atanh);

function binary(name: string, op: (x: Array, y: Array) => Array) {
  return (x: ArrayLike, y: ArrayLike): Array => {
    const [a, b] = ufuncOperands(`jnp.${name}`, x, y);
    return op(a!, b!);
  };
}

function noBool(name: string, op: (x: Array, y: Array) => Array) {
  return (x: Array, y: Array): Array => {
    if (x.dtype === 'bool') throw new TypeError(`jnp.${name}: boolean operands are not supported; use jnp.logicalXxx or cast with .astype`);
    return op(x, y);
  };
}

export const add = binary('add', (x, y) => (x.dtype === 'bool' ? lax.bitwiseOr(x, y) : lax.add(x, y)));
export const subtract = binary('subtract', noBool('subtract', lax.sub));
export const multiply = binary('multiply', (x, y) => (x.dtype === 'bool' ? lax.bitwiseAnd(x, y) : lax.mul(x, y)));
export const maximum = binary('maximum', lax.max);
export const minimum = binary('minimum', lax.min);
export const arctan2 = (x: ArrayLike, y: ArrayLike): Array => {
  const [a, b] = ufuncOperands('jnp.arctan2', ...promoteInexact('jnp.arctan2', x, y));
  return lax.atan2(a!, b!);
};

export function trueDivide(x: ArrayLike, y: ArrayLike): Array {
  const [a, b] = ufuncOperands('jnp.trueDivide', ...promoteInexact('jnp.trueDivide', x, y));
  return lax.div(a!, b!);
}
export const divide = trueDivide;

/** Promotes like ufuncOperands, then bool becomes int32 (JAX's promote_args_numeric). */
function numericOperands(fn: string, x: ArrayLike, y: ArrayLike): [Array, Array] {
  const [a, b] = ufuncOperands(fn, x, y) as [Array, Array];
  if (a.dtype !== 'bool') return [a, b];
  return [lax.convertWeak(a, 'int32', a.weakType), lax.convertWeak(b, 'int32', b.weakType)];
}

/**
 * Python's floor division: rounds toward -inf; for ints, -7 // 2 == -4. As in
 * JAX, integer x // 0 is XLA's x / 0 (-1, or the maximum unsigned) minus one
 * when x != 0, and float x // 0 is NaN.
 */
export function floorDivide(x: ArrayLike, y: ArrayLike): Array {
  const [a, b] = numericOperands('jnp.floorDivide', x, y);
  if (isFloating(a.dtype)) {
    // CPython's float_divmod (as jnp does): exact for quotients that floor(a / b) would round wrongly
    const m = lax.rem(a, b);
    const div = lax.div(lax.sub(a, m), b);
    const fix = lax.bitwiseAnd(lax.ne(m, 0), lax.ne(lax.sign(b), lax.sign(m)));
    return lax.round(lax.select(fix, lax.sub(div, 1), div));
  }
  if (isUnsigned(a.dtype)) return lax.div(a, b);
  // truncated quotient, minus one where the signs differ and the division is inexact
  const q = lax.div(a, b);
  const fix = lax.bitwiseAnd(lax.ne(lax.sign(a), lax.sign(b)), lax.ne(lax.rem(a, b), 0));
  return lax.select(fix, lax.sub(q, 1), q);
}

/** jnp.rint: rounds half to even; integer and bool inputs become float first, as jnp's promote_args_inexact. */
export const rint = floatUnary('rint', (x) => lax.round(x, 'to_nearest_even'));

/** jnp.divmod(x, y): [floorDivide(x, y), mod(x, y)], Python's divmod elementwise. */
export function divmod(x: ArrayLike, y: ArrayLike): [Array, Array] {
  return [floorDivide(x, y), mod(x, y)];
}

/** Python's modulo: the result has the sign of the divisor; integer x % 0 is 0, as in NumPy and JAX. */
export function mod(x: ArrayLike, y: ArrayLike): Array {
  const [a, bRaw] = numericOperands('jnp.mod', x, y);
  // integer divisors of 0 become 1 (b + (b == 0)), so x % 0 == 0
  const b = isFloating(a.dtype) ? bRaw : lax.add(bRaw, lax.convertWeak(lax.eq(bRaw, 0), bRaw.dtype, bRaw.weakType));
  const r = lax.rem(a, b);
  if (isUnsigned(a.dtype)) return r;
  const fix = lax.bitwiseAnd(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(b, 0)));
  return lax.select(fix, lax.add(r, b), r);
}
export const remainder = mod;

export function power(x: ArrayLike, y: ArrayLike): Array {
  if (typeof y === 'number' && Number.isInteger(y)) {
    // a JS integer exponent: binary powering in x's own dtype (JAX's integer_pow path for concrete ints)
    let base = asArray('jnp.power', x);
    if (base.dtype === 'bool') base = lax.convertWeak(base, 'int32', base.weakType);
    if (y < 0 && !isFloating(base.dtype)) {
      throw new ValueError(`jnp.power: integers to negative integer powers are not allowed, got ${base.dtype} ** ${y}`);
    }
    return lax.integerPow(base, y);
  }
  const [a, b] = numericOperands('jnp.power', x, y);
  if (isFloating(a!.dtype)) return lax.pow(a!, b!);
  // JAX's _pow_int_int: binary exponentiation over the exponent's low 6 bits, shifting it as unsigned.
  const unsigned = ({ int8: 'uint8', int16: 'uint16', int32: 'uint32' } as const)[a!.dtype as 'int8'] ?? a!.dtype;
  let e = lax.convertElementType(b!, unsigned);
  let base = a!;
  let acc = lax.select(lax.bitwiseAnd(lax.eq(a!, 0), lax.ne(b!, 0)), lax.mul(a!, 0), lax.add(lax.mul(a!, 0), 1));
  for (let i = 0; i < 6; i++) {
    acc = lax.select(lax.ne(lax.bitwiseAnd(e, 1), 0), lax.mul(acc, base), acc);
    base = lax.mul(base, base);
    e = lax.div(e, 2);
  }
  return acc;
}
export const pow = power;

export function negative(x: ArrayLike): Array {
  const a = asArray('jnp.negative', x);
  if (a.dtype === 'bool') throw new TypeError('jnp.negative: boolean operands are not supported; use jnp.logicalNot');
  return lax.neg(a);
}

export function positive(x: ArrayLike): Array {
  return asArray('jnp.positive', x);
}

export function abs(x: ArrayLike): Array {
  const a = asArray('jnp.abs', x);
  return a.dtype === 'bool' || isUnsigned(a.dtype) ? a : lax.abs(a);
}
export const absolute = abs;

export function sign(x: ArrayLike): Array {
  const a = asArray('jnp.sign', x);
  if (a.dtype === 'bool') throw new TypeError('jnp.sign: boolean operands are not supported (as in JAX); cast with .astype');
  return lax.sign(a);
}

export function square(x: ArrayLike): Array {
  const a = asArray('jnp.square', x);
  return lax.square(a.dtype === 'bool' ? lax.convertWeak(a, 'int32', a.weakType) : a);
}

export function reciprocal(x: ArrayLike): Array {
  const [a] = promoteInexact('jnp.reciprocal', x);
  return lax.integerPow(a!, -1); // as jnp: 1 / x, with 1 / inf = 0
}

function roundingFn(name: string, op: (x: Array) => Array) {
  return (x: ArrayLike): Array => {
    const a = asArray(`jnp.${name}`, x);
    if (isInteger(a.dtype) || a.dtype === 'bool') return a;
    return op(a);
  };
}
export const floor = roundingFn('floor', lax.floor);
export const ceil = roundingFn('ceil', lax.ceil);
export const trunc = roundingFn('trunc', (x) => lax.select(lax.lt(x, 0), lax.ceil(x), lax.floor(x)));

/** NumPy's round: half to even, with `decimals`. */
export function round(x: ArrayLike, options: { decimals?: number } = {}): Array {
  checkOptions('jnp.round', options, ['decimals']);
  const decimals = options.decimals ?? 0;
  if (!Number.isInteger(decimals)) throw new TypeError(`jnp.round: decimals must be an integer, got ${decimals}`);
  const a = asArray('jnp.round', x);
  if (isInteger(a.dtype) || a.dtype === 'bool') {
    if (decimals >= 0) return a;
    const factor = 10 ** -decimals;
    return lax.mul(lax.convertElementType(lax.round(lax.div(lax.convertElementType(a, 'float32'), factor), 'to_nearest_even'), a.dtype), factor);
  }
  if (decimals === 0) return lax.round(a, 'to_nearest_even');
  const factor = 10 ** decimals;
  return lax.div(lax.round(lax.mul(a, factor), 'to_nearest_even'), factor);
}
export const around = round;

export function clip(x: ArrayLike, min?: ArrayLike | null, max?: ArrayLike | null): Array {
  let a = asArray('jnp.clip', x);
  if (min !== undefined && min !== null) a = maximum(a, asArray('jnp.clip', min, 'min'));
  if (max !== undefined && max !== null) a = minimum(a, asArray('jnp.clip', max, 'max'));
  return a;
}

export function where(condition: ArrayLike, x?: ArrayLike, y?: ArrayLike): Array {
  if (x === undefined || y === undefined) {
    throw new ValueError('jnp.where: the one-argument form (nonzero indices) has a data-dependent shape; pass x and y, as JAX requires under jit');
  }
  const [xa, ya] = promote('jnp.where', x, y);
  const c = asArray('jnp.where', condition, 'condition');
  const cond = c.dtype === 'bool' ? c : lax.ne(c, 0);
  const [cb, xb, yb] = broadcastAll('jnp.where', cond, xa!, ya!);
  return lax.select(cb!, xb!, yb!);
}

function predicate(name: string, op: (x: Array) => Array, ints: (x: Array) => Array) {
  return (x: ArrayLike): Array => {
    const a = asArray(`jnp.${name}`, x);
    return isFloating(a.dtype) ? op(a) : ints(a);
  };
}
const allFalse = (x: Array) => lax.ne(x, x);
const allTrue = (x: Array) => lax.eq(x, x);
export const isnan = predicate('isnan', (x) => lax.ne(x, x), allFalse);
export const isinf = predicate('isinf', (x) => lax.eq(lax.abs(x), Infinity), allFalse);
export const isfinite = predicate('isfinite', lax.isFinite, allTrue);

function toBool(fn: string, x: ArrayLike): Array {
  const a = asArray(fn, x);
  return a.dtype === 'bool' ? a : lax.ne(a, 0);
}

export function logicalNot(x: ArrayLike): Array {
  return lax.bitwiseNot(toBool('jnp.logicalNot', x));
}
export function logicalAnd(x: ArrayLike, y: ArrayLike): Array {
  const [a, b] = ufuncOperands('jnp.logicalAnd', toBool('jnp.logicalAnd', x), toBool('jnp.logicalAnd', y));
  return lax.bitwiseAnd(a!, b!);
}
export function logicalOr(x: ArrayLike, y: ArrayLike): Array {
  const [a, b] = ufuncOperands('jnp.logicalOr', toBool('jnp.logicalOr', x), toBool('jnp.logicalOr', y));
  return lax.bitwiseOr(a!, b!);
}
export function logicalXor(x: ArrayLike, y: ArrayLike): Array {
  const [a, b] = ufuncOperands('jnp.logicalXor', toBool('jnp.logicalXor', x), toBool('jnp.logicalXor', y));
  return lax.bitwiseXor(a!, b!);
}

export const equal = binary('equal', lax.eq);
export const notEqual = binary('notEqual', lax.ne);
export const less = binary('less', lax.lt);
export const lessEqual = binary('lessEqual', lax.le);
export const greater = binary('greater', lax.gt);
export const greaterEqual = binary('greaterEqual', lax.ge);
