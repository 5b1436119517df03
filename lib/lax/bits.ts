// lax's bit-level functions: shifts, population_count, clz and
// bitcast_convert_type, each one primitive as in JAX, with JAX's dtype rules
// checked here so the error names the lax function and the argument.
import { Array, type ArrayLike } from '../core/array.js';
import { bind1 } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType, isInteger, itemsize } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';

/** A shift's operands: integer arrays of one dtype (a JS number takes the other operand's dtype). */
function integerOperands(fn: string, x: ArrayLike, y: ArrayLike): [Array, Array] {
  const like = x instanceof Array ? x : y instanceof Array ? y : undefined;
  const typed = (v: ArrayLike, arg: string) =>
    (typeof v === 'number' || typeof v === 'boolean') && like ? toArray(fn, v, arg, like.dtype) : toArray(fn, v, arg);
  const a = typed(x, 'x');
  const b = typed(y, 'y');
  for (const [arg, v] of [['x', a], ['y', b]] as const) {
    if (!isInteger(v.dtype)) throw new TypeError(`${fn}: ${arg} must have an integer dtype (JAX accepts subtypes of integer), got ${v.dtype}`);
  }
  return [a, b];
}

function shift(prim: 'shift_left' | 'shift_right_logical' | 'shift_right_arithmetic', fn: string) {
  return (x: ArrayLike, y: ArrayLike): Array => bind1(prim, integerOperands(fn, x, y), {});
}

/** x << y; 0 where y is negative or at least the bit width (XLA's shift semantics). */
export const shiftLeft = shift('shift_left', 'lax.shiftLeft');
/** x >> y filling with zeros; 0 where y is negative or at least the bit width. */
export const shiftRightLogical = shift('shift_right_logical', 'lax.shiftRightLogical');
/** x >> y filling with the sign bit (of the dtype's width, unsigned dtypes too); the sign fill where y is out of range. */
export const shiftRightArithmetic = shift('shift_right_arithmetic', 'lax.shiftRightArithmetic');

function integerUnary(prim: 'population_count' | 'clz', fn: string) {
  return (x: ArrayLike): Array => {
    const a = toArray(fn, x);
    if (!isInteger(a.dtype)) throw new TypeError(`${fn}: x must have an integer dtype (JAX accepts subtypes of integer), got ${a.dtype}`);
    return bind1(prim, [a], {});
  };
}

/** The number of 1 bits of each element (of its two's-complement bits), in x's dtype. */
export const populationCount = integerUnary('population_count', 'lax.populationCount');
/** The number of leading 0 bits of each element in its dtype's width (the width for 0). */
export const clz = integerUnary('clz', 'lax.clz');

/**
 * lax.bitcast_convert_type: x's bits read as `newDtype`. Between dtypes of one width the shape is kept; to a
 * narrower dtype a trailing axis of the width ratio is added (least significant part first, XLA's little-endian
 * layout); from a wider one x's last axis, of that ratio, is removed. bool converts only to itself.
 */
export function bitcastConvertType(x: ArrayLike, newDtype: DType): Array {
  const fn = 'lax.bitcastConvertType';
  const to = checkUserDType(fn, newDtype, 'newDtype');
  const xa = toArray(fn, x);
  const from = xa.dtype;
  if ((from === 'bool' || to === 'bool') && from !== to) {
    throw new TypeError(`${fn}: bool converts only to bool (JAX: use arr.view()), got operand dtype ${from} and newDtype ${to}`);
  }
  const [inBits, outBits] = [8 * itemsize(from), 8 * itemsize(to)];
  if (inBits < outBits && xa.shape[xa.ndim - 1] !== outBits / inBits) {
    throw new ValueError(`${fn}: converting ${from} (${inBits} bits) to ${to} (${outBits} bits) needs x's last axis to hold ${outBits / inBits} values, got shape ${show(xa.shape)}`);
  }
  return bind1('bitcast_convert_type', [xa], { newDtype: to });
}
