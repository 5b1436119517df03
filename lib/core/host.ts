// Conversion between JS values and the bytes arrays store: nested JS arrays
// and TypedArrays in, TypedArrays / nested lists / numbers out. 16-bit floats
// are stored as their bits and read back as Float32Array values.
import {
  type DType, bfloat16BitsToFloat32, float16BitsToFloat32, float32ToBfloat16Bits, float32ToFloat16Bits, newStorage,
  roundToDType, storageArray, wrapInteger, isInteger,
} from './dtype.js';
import { ValueError, show } from './errors.js';

export type NestedArray = number | boolean | NestedArray[];
export type HostData = NestedArray | ArrayBufferView;

/** The dtype a TypedArray maps to, or null. */
export function dtypeOfTypedArray(data: ArrayBufferView): DType | null {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Uint32Array) return 'uint32';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint8Array || data instanceof Uint8ClampedArray) return 'uint8';
  return null;
}

/** Shape and row-major values of nested JS arrays; checks they are rectangular. */
export function flattenNested(fn: string, data: NestedArray): { shape: number[]; values: (number | boolean)[] } {
  const shape: number[] = [];
  let probe: unknown = data;
  while (Array.isArray(probe)) {
    shape.push(probe.length);
    probe = probe[0];
  }
  const values: (number | boolean)[] = [];
  const path: number[] = []; // the index being visited, copied only into an error message
  const walk = (x: unknown, depth: number): void => {
    if (depth === shape.length) {
      if (typeof x !== 'number' && typeof x !== 'boolean') {
        throw new TypeError(`${fn}: elements must be numbers or booleans, got ${show(x)} at index ${show(path.slice(0, depth))}`);
      }
      values.push(x);
      return;
    }
    if (!Array.isArray(x) || x.length !== shape[depth]) {
      throw new ValueError(`${fn}: nested arrays are ragged: expected length ${shape[depth]} at index ${show(path.slice(0, depth))}, got ${Array.isArray(x) ? x.length : show(x)}`);
    }
    for (let i = 0; i < x.length; i++) {
      path[depth] = i;
      walk(x[i], depth + 1);
    }
  };
  walk(data, 0);
  return { shape, values };
}

/** Packs numbers into a dtype's storage bytes (rounding and casting as JAX does). */
export function packValues(values: ArrayLike<number | boolean>, dtype: DType): Uint8Array {
  const n = values.length;
  const out = newStorage(dtype, n);
  const source = ArrayBuffer.isView(values) ? dtypeOfTypedArray(values) : null;
  if (source !== null && ((dtype === 'float32' || dtype === 'float64') || (isInteger(dtype) && isInteger(source)))) {
    // TypedArray.set converts as Number() and, into integer storage from integers, wraps as wrapInteger does.
    (out as Float32Array).set(values as unknown as Float32Array);
  } else if (dtype === 'float16' || dtype === 'bfloat16') {
    const convert = dtype === 'float16' ? float32ToFloat16Bits : float32ToBfloat16Bits;
    for (let i = 0; i < n; i++) out[i] = convert(Number(values[i]));
  } else if (dtype === 'float32' || dtype === 'float64') {
    for (let i = 0; i < n; i++) out[i] = Number(values[i]);
  } else if (dtype === 'bool') {
    for (let i = 0; i < n; i++) out[i] = Number(values[i]) !== 0 || Number.isNaN(Number(values[i])) ? 1 : 0;
  } else if (isInteger(dtype)) {
    for (let i = 0; i < n; i++) {
      const v = Number(values[i]);
      out[i] = Number.isInteger(v) ? wrapInteger(v, dtype) : roundToDType(v, dtype);
    }
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * The storage bytes of `values` in `dtype`, for a consumer that copies them at
 * once (Backend.fromHost): a TypedArray already in the dtype's storage type is
 * viewed, not copied; anything else is packed.
 */
export function storageBytesOf(values: ArrayLike<number | boolean>, dtype: DType): Uint8Array {
  if (ArrayBuffer.isView(values) && dtype !== 'bool' && dtype !== 'float16' && dtype !== 'bfloat16' && dtypeOfTypedArray(values) === dtype && !(values instanceof Uint8ClampedArray)) {
    return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  }
  return packValues(values, dtype);
}

export type UserTypedArray = Float32Array | Float64Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/** Storage bytes → the TypedArray users get from data(): 16-bit floats widen to Float32Array, bool is Uint8Array. */
export function unpackValues(bytes: Uint8Array, dtype: DType): UserTypedArray {
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  const storage = storageArray(dtype, aligned.buffer, aligned.byteLength / itemBytes(dtype));
  if (dtype === 'float16' || dtype === 'bfloat16') {
    const convert = dtype === 'float16' ? float16BitsToFloat32 : bfloat16BitsToFloat32;
    const out = new Float32Array(storage.length);
    for (let i = 0; i < storage.length; i++) out[i] = convert(storage[i]!);
    return out;
  }
  return storage as UserTypedArray;
}

function itemBytes(dtype: DType): number {
  return { bool: 1, int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, bfloat16: 2, int32: 4, uint32: 4, float32: 4, float64: 8 }[dtype];
}

/** Row-major values → nested JS arrays of the given shape. */
export function nest(values: ArrayLike<number>, shape: readonly number[], bool: boolean): NestedArray {
  const convert = (v: number): number | boolean => (bool ? v !== 0 : v);
  if (shape.length === 0) return convert(values[0]!);
  let offset = 0;
  const build = (depth: number): NestedArray[] => {
    const out: NestedArray[] = [];
    for (let i = 0; i < shape[depth]!; i++) {
      if (depth === shape.length - 1) out.push(convert(values[offset++]!));
      else out.push(build(depth + 1));
    }
    return out;
  };
  return build(0);
}
