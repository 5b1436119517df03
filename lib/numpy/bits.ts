// jnp's bit functions: left_shift / right_shift (and their bitwise_ aliases),
// bitwise_count, signbit and copysign, as jax/_src/numpy/ufuncs.py writes
// them over lax's shifts, population_count and bitcast_convert_type (signbit
// reads the float's sign bit, so a NaN's and -0's sign count).
import type { Array, ArrayLike } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { isFloating, isInteger, isUnsigned } from '../core/dtype.js';
import * as bits from '../lax/bits.js';
import * as lax from '../lax/ops.js';
import { broadcastToShape, promote, promoteInexact, ufuncOperands } from './util.js';

/** JAX's promote_args_numeric: the ufunc's operands promoted and broadcast, bool made int32; then integers only. */
function integerOperands(fn: string, x: ArrayLike, y: ArrayLike): [Array, Array] {
  let [a, b] = ufuncOperands(fn, x, y) as [Array, Array];
  if (a.dtype === 'bool') [a, b] = [lax.convertWeak(a, 'int32', a.weakType), lax.convertWeak(b, 'int32', b.weakType)];
  if (!isInteger(a.dtype)) throw new TypeError(`${fn}: operands must be integers (or bools), got x1 ${typeName(x)} and x2 ${typeName(y)}, which promote to ${a.dtype}`);
  return [a, b];
}

const typeName = (v: unknown): string => (typeof v === 'number' ? `${v}` : (v as Array).dtype ?? typeof v);

/** jnp.left_shift(x1, x2): x1 << x2 (0 where x2 is negative or at least the bit width). */
export function leftShift(x1: ArrayLike, x2: ArrayLike): Array {
  return bits.shiftLeft(...integerOperands('jnp.leftShift', x1, x2));
}

/** jnp.right_shift(x1, x2): x1 >> x2, arithmetic for signed and logical for unsigned dtypes. */
export function rightShift(x1: ArrayLike, x2: ArrayLike): Array {
  const [a, b] = integerOperands('jnp.rightShift', x1, x2);
  return isUnsigned(a.dtype) ? bits.shiftRightLogical(a, b) : bits.shiftRightArithmetic(a, b);
}

export const bitwiseLeftShift = leftShift;
export const bitwiseRightShift = rightShift;

/** jnp.bitwise_count(x): the 1 bits of |x| (bools as int32), as uint8. */
export function bitwiseCount(x: ArrayLike): Array {
  const fn = 'jnp.bitwiseCount';
  let [a] = promote(fn, x) as [Array];
  if (a.dtype === 'bool') a = lax.convertWeak(a, 'int32', a.weakType);
  if (!isInteger(a.dtype)) throw new TypeError(`${fn}: x must have an integer (or bool) dtype, got ${a.dtype}`);
  return lax.convertElementType(bits.populationCount(lax.abs(a)), 'uint8');
}

/** A JS -0 is a float's zero (its sign is what these functions read): a weak float32 -0, not the int32 0 of other integral numbers. */
const negativeZero = (x: ArrayLike): ArrayLike => (Object.is(x, -0) ? arrayFromValues([-0], [], 'float32', true) : x);

/** jnp.signbit(x): the sign bit of each float (NaN and -0 included), x < 0 for integers, false for bools. */
export function signbit(x: ArrayLike): Array {
  const [a] = promote('jnp.signbit', negativeZero(x)) as [Array];
  if (a.dtype === 'bool') return lax.ne(a, a);
  if (!isFloating(a.dtype)) return lax.lt(a, 0);
  if (a.dtype === 'float64') {
    // no 64-bit integers: the sign is the top bit of the more significant 32-bit half
    const halves = bits.bitcastConvertType(a, 'int32');
    return lax.lt(lax.squeeze(lax.sliceInDim(halves, 1, 2, 1, a.ndim), [a.ndim]), 0);
  }
  return lax.lt(bits.bitcastConvertType(a, a.dtype === 'float32' ? 'int32' : 'int16'), 0);
}

/** jnp.copysign(x1, x2): |x1| with the sign bit of x2 (a NaN's too), in the inexact promoted dtype. */
export function copysign(x1: ArrayLike, x2: ArrayLike): Array {
  const fn = 'jnp.copysign';
  const [a, b] = ufuncOperands(fn, ...promoteInexact(fn, negativeZero(x1), negativeZero(x2))) as [Array, Array];
  const shape = a.ndim >= b.ndim ? a.shape : b.shape;
  const magnitude = broadcastToShape(lax.abs(a), shape);
  return lax.select(broadcastToShape(signbit(b), shape), lax.neg(magnitude), magnitude);
}
