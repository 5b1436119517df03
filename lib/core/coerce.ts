// Turning JS values into Arrays at API boundaries: numbers become weakly
// typed scalars (int32 for integer values, float32 otherwise), booleans bool
// scalars, nested arrays and TypedArrays strong arrays. In core because
// every layer that takes user arguments (trace, transforms, the API) needs it.
import { Array, type ArrayLike } from './array.js';
import { arrayFromValues } from './bind.js';
import { type DType, canonicalizeDType, castToInteger, checkUserDType, integerRange, isDType, isFloating, isInt32, isInteger, scalarType } from './dtype.js';
import type { ShapedArray } from './primitives.js';
import { ValueError, show } from './errors.js';
import { type NestedArray, dtypeOfTypedArray, flattenNested } from './host.js';

export function isArrayLike(x: unknown): x is ArrayLike {
  return x instanceof Array || typeof x === 'number' || typeof x === 'boolean' || globalThis.Array.isArray(x) || ArrayBuffer.isView(x);
}

/** The dtype JAX would give nested JS data: bool if all booleans, int32 if all integers, else float32. */
export function inferDtype(values: readonly (number | boolean)[]): DType {
  if (values.length === 0) return 'float32'; // jnp.array([]) is float32, as in JAX
  if (values.every((v) => typeof v === 'boolean')) return 'bool';
  if (values.every((v) => typeof v === 'boolean' || isInt32(v))) return 'int32';
  return 'float32';
}

/** JAX rejects a Python int that does not fit the integer dtype it is converted to; so do we. */
function checkIntegerRange(fn: string, arg: string, values: readonly (number | boolean)[], dtype: DType): void {
  if (!isInteger(dtype)) return;
  const [lo, hi] = integerRange(dtype);
  for (const v of values) {
    if (typeof v === 'number' && Number.isInteger(v) && (v < lo || v > hi)) {
      throw new ValueError(`${fn}: ${arg} = ${v} is out of range for ${dtype} [${lo}, ${hi}]`);
    }
  }
}

/** Converts any ArrayLike to an Array. `fn`/`arg` name the caller for errors. */
export function toArray(fn: string, x: unknown, arg = 'x', dtype?: DType): Array {
  if (x instanceof Array) {
    if (!x.isTracer) x.storage(fn);
    return x;
  }
  if (typeof x === 'number') {
    const t = scalarType(x);
    if (dtype) checkIntegerRange(fn, arg, [x], dtype);
    return arrayFromValues([x], [], dtype ?? t.dtype, dtype === undefined);
  }
  if (typeof x === 'boolean') return arrayFromValues([x], [], dtype ?? 'bool');
  if (ArrayBuffer.isView(x)) {
    const typed = dtypeOfTypedArray(x);
    if (!typed) throw new TypeError(`${fn}: ${arg} is a ${x.constructor.name}, which jaxon cannot read`);
    // a Float64Array is float32 data while x64 is off, as JAX canonicalizes a NumPy float64 array (silently)
    const inferred = canonicalizeDType(typed);
    let values = x as unknown as { length: number; [i: number]: number };
    // float data into an integer dtype saturates, like a convert on the device (not wrapping like -300.0 → int8 -44)
    if (dtype && isFloating(inferred) && isInteger(dtype)) values = globalThis.Array.from(values as unknown as Iterable<number>, (v) => castToInteger(v, dtype));
    return arrayFromValues(values, [values.length], dtype ?? inferred);
  }
  if (globalThis.Array.isArray(x)) {
    const { shape, values } = flattenNested(fn, x as NestedArray);
    if (dtype) checkIntegerRange(fn, arg, values, dtype);
    return arrayFromValues(values, shape, dtype ?? inferDtype(values));
  }
  throw new TypeError(`${fn}: ${arg} must be an Array, a number, a boolean, nested arrays of numbers or a TypedArray, got ${show(x)}`);
}

export function optionalDtype(fn: string, dtype: unknown): DType | undefined {
  return dtype === undefined || dtype === null ? undefined : checkUserDType(fn, dtype);
}

/** What abstract evaluation takes in place of an array (JAX duck-types it): a ShapeDtypeStruct, or any object with a shape and a dtype. */
export interface ShapeDtypeLike {
  shape: readonly number[];
  dtype: string;
  weakType?: boolean;
  sharding?: { memoryKind?: string | null } | null;
}

export function isShapeDtypeLike(x: unknown): x is ShapeDtypeLike {
  return typeof x === 'object' && x !== null && !(x instanceof Array) && globalThis.Array.isArray((x as ShapeDtypeLike).shape) && typeof (x as ShapeDtypeLike).dtype === 'string';
}

/** The aval a ShapeDtypeLike stands for (its sharding's memory kind is the memory space; float64 is float32 while x64 is off). */
export function shapeDtypeAval(fn: string, s: ShapeDtypeLike, what: string): ShapedArray {
  if (!s.shape.every((d) => Number.isInteger(d) && d >= 0)) throw new ValueError(`${fn}: ${what} has an invalid shape ${show(s.shape)}`);
  if (!isDType(s.dtype)) throw new ValueError(`${fn}: ${what} has an unknown dtype ${show(s.dtype)}`);
  const kind = s.sharding?.memoryKind;
  return { shape: [...s.shape], dtype: canonicalizeDType(s.dtype), weakType: s.weakType ?? false, ...(kind && kind !== 'device' ? { memorySpace: kind } : {}) } as ShapedArray;
}
