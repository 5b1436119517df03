// Shared machinery of the numpy layer: NumPy/JAX type promotion with weak JS
// scalars, broadcasting of operands, and option parsing. Every jnp function
// validates its arguments here and names itself in errors.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, type TypeInfo, checkUserDType, resultType, scalarType } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';
import { broadcastShapes, shapesEqual } from '../core/shape.js';
import * as lax from '../lax/ops.js';

/** The promotion type of an operand: JS numbers are weak, arrays carry their own weak flag. */
export function typeOf(fn: string, x: unknown, arg = 'x'): TypeInfo {
  if (typeof x === 'number') return scalarType(x);
  if (typeof x === 'boolean') return { dtype: 'bool', weak: false };
  if (x instanceof Array) return { dtype: x.dtype, weak: x.weakType };
  return { dtype: toArray(fn, x, arg).dtype, weak: false };
}

/** Converts operands to Arrays of their common promoted dtype (JAX's promote_dtypes). */
export function promote(fn: string, ...xs: unknown[]): Array[] {
  // arrays of one dtype and weak flag already have the result type (the common case, on every op)
  const first = xs[0];
  if (first instanceof Array) {
    let same = true;
    for (let i = 1; i < xs.length && same; i++) {
      const x = xs[i];
      same = x instanceof Array && x.dtype === first.dtype && x.weakType === first.weakType;
    }
    if (same && resultType({ dtype: first.dtype, weak: first.weakType }).dtype === first.dtype) return xs as Array[];
  }
  const arrays = xs.map((x, i) => (x instanceof Array ? x : typeof x === 'number' || typeof x === 'boolean' ? x : toArray(fn, x, argName(i, xs.length))));
  const t = resultType(...arrays.map((x, i) => typeOf(fn, x, argName(i, xs.length))));
  return arrays.map((x, i) => castTo(fn, x, t, argName(i, xs.length)));
}

/** Like promote, then the result is made inexact (ints and bools become float32), as jnp's float functions do. */
export function promoteInexact(fn: string, ...xs: unknown[]): Array[] {
  const arrays = promote(fn, ...xs);
  const d = arrays[0]!.dtype;
  if (d === 'float16' || d === 'bfloat16' || d === 'float32' || d === 'float64') return arrays;
  return arrays.map((a) => lax.convertWeak(a, 'float32', a.weakType));
}

function argName(i: number, n: number): string {
  return n <= 2 ? (i === 0 ? 'x' : 'y') : `args[${i}]`;
}

function castTo(fn: string, x: unknown, t: TypeInfo, arg: string): Array {
  // every operand takes the result's weak flag (JAX's promote_dtypes): int32 array + 2.5 is weak float32
  if (x instanceof Array) return lax.convertWeak(x, t.dtype, t.weak);
  const a = toArray(fn, x, arg, t.dtype);
  return a.weakType === t.weak ? a : lax.convertWeak(a, t.dtype, t.weak);
}

/** Broadcasts arrays to their common shape (NumPy rules). */
export function broadcastAll(fn: string, ...xs: Array[]): Array[] {
  const shape = broadcastShapes(fn, ...xs.map((x) => x.shape));
  return xs.map((x) => broadcastToShape(x, shape));
}

/** Broadcasts one array to `shape` (assumed compatible). */
export function broadcastToShape(x: Array, shape: readonly number[]): Array {
  if (shapesEqual(x.shape, shape)) return x;
  const offset = shape.length - x.ndim;
  return lax.broadcastInDim(x, [...shape], x.shape.map((_, i) => i + offset));
}

/**
 * promote then broadcast: the operands of a NumPy binary ufunc. Rank-0
 * operands stay scalars (binary primitives broadcast them, like JAX's scalar
 * literals), so `x * 2` needs no broadcast.
 */
export function ufuncOperands(fn: string, ...xs: unknown[]): Array[] {
  const arrays = promote(fn, ...xs);
  if (arrays.length === 2 && shapesEqual(arrays[0]!.shape, arrays[1]!.shape)) return arrays; // the common case: nothing to broadcast
  const shape = ufuncShape(fn, arrays.map((x) => x.shape));
  return arrays.map((x) => (x.ndim === 0 ? x : broadcastToShape(x, shape)));
}

/**
 * The broadcast shape of a ufunc's operands. As in JAX, operands whose non-scalar ranks agree meet in lax, whose
 * shape rule raises a TypeError; operands of different ranks fail in jnp's rank promotion, a ValueError.
 */
function ufuncShape(fn: string, shapes: readonly (readonly number[])[]): number[] {
  try {
    return broadcastShapes(fn, ...shapes);
  } catch (error) {
    if (error instanceof ValueError && new Set(shapes.filter((s) => s.length > 0).map((s) => s.length)).size === 1) throw new TypeError(error.message);
    throw error;
  }
}

export function asArray(fn: string, x: unknown, arg = 'x'): Array {
  return toArray(fn, x, arg);
}

export function dtypeOption(fn: string, dtype: unknown): DType | undefined {
  if (dtype === undefined || dtype === null) return undefined;
  return checkUserDType(fn, dtype);
}

export function checkBoolean(fn: string, value: unknown, arg: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${arg} must be a boolean, got ${show(value)}`);
  return value;
}

export type { ArrayLike };
