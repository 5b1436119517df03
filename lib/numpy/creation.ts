// jnp's array-creation functions. Data from JS is copied to the default
// device; generated arrays (arange, eye, tri) are built from primitives so
// they run as kernels, not JS loops.
import { Array, type ArrayLike } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { type DType, canonicalizeDType, isFloating, isInteger } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { checkShape } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { stack } from './manipulation.js';
import { dtypeOption } from './util.js';

type DtypeOptions = { dtype?: DType };

/** jnp.array: a new strongly typed array (always a copy of JS data; Arrays are converted, not copied, when the dtype matches). */
export function array(data: ArrayLike | NestedWithArrays, options: DtypeOptions & { copy?: boolean } = {}): Array {
  checkOptions('jnp.array', options, ['dtype', 'copy']);
  const dtype = dtypeOption('jnp.array', options.dtype);
  if (data instanceof Array) {
    // a float64 Array made while x64 was on becomes float32 once it is off, as JAX canonicalizes
    const converted = lax.convertElementType(data, dtype ?? canonicalizeDType(data.dtype));
    return options.copy === false || converted !== data ? converted : lax.copy(data);
  }
  if (containsArray(data)) return array(stackNested(data as NestedWithArrays), options);
  const a = toArray('jnp.array', data as ArrayLike, 'data', dtype ?? jsNumbersDtype(data));
  return a.weakType ? lax.convertWeak(a, a.dtype, false) : a;
}

export type NestedWithArrays = Array | number | boolean | NestedWithArrays[];

/**
 * The dtype of an array made from JS numbers: JS has one number type and cannot tell 1. from 1, so it is float32
 * (API.md, "JS numbers"), or bool when every value is a boolean; TypedArrays keep their own type.
 */
function jsNumbersDtype(data: unknown): DType | undefined {
  if (typeof data === 'number') return 'float32';
  if (!globalThis.Array.isArray(data)) return undefined;
  let allBoolean = true;
  let any = false;
  const visit = (x: unknown): void => {
    if (globalThis.Array.isArray(x)) for (const v of x) visit(v);
    else {
      any = true;
      if (typeof x !== 'boolean') allBoolean = false;
    }
  };
  visit(data);
  return allBoolean && any ? 'bool' : 'float32'; // jnp.array([[], []]) is float32, as in JAX
}

function containsArray(data: unknown): boolean {
  return globalThis.Array.isArray(data) && data.some((x) => x instanceof Array || containsArray(x));
}

/** Nested JS arrays holding Arrays (and numbers): stacked level by level, dtypes promoted as jnp.stack does. */
function stackNested(data: NestedWithArrays): Array {
  if (data instanceof Array) return data;
  if (!globalThis.Array.isArray(data)) return toArray('jnp.array', data, 'data');
  if (data.length === 0) throw new ValueError('jnp.array: an empty list cannot hold Arrays');
  return stack(data.map(stackNested));
}

/** jnp.asarray: like array, but returns Arrays of the requested dtype as they are. */
export function asarray(data: ArrayLike | NestedWithArrays, options: DtypeOptions = {}): Array {
  checkOptions('jnp.asarray', options, ['dtype']);
  const dtype = dtypeOption('jnp.asarray', options.dtype);
  if (data instanceof Array) {
    const target = dtype ?? canonicalizeDType(data.dtype);
    return target !== data.dtype ? lax.convertElementType(data, target) : data;
  }
  return array(data, options);
}

export function full(shape: number | number[], fillValue: ArrayLike, options: DtypeOptions = {}): Array {
  checkOptions('jnp.full', options, ['dtype']);
  return fill('jnp.full', shape, fillValue, dtypeOption('jnp.full', options.dtype));
}

/** full's body; `fn` names the public function in errors. */
function fill(fn: string, shape: unknown, fillValue: ArrayLike, dtype: DType | undefined): Array {
  const s = checkShape(fn, shape);
  const value = toArray(fn, fillValue, 'fillValue', fillValue instanceof Array ? undefined : dtype ?? jsNumbersDtype(fillValue));
  const v = dtype ? lax.convertElementType(value, dtype) : lax.convertWeak(value, value.dtype, false);
  if (v.ndim > s.length || v.shape.some((d, i) => d !== 1 && d !== s[i + s.length - v.ndim])) {
    throw new ValueError(`${fn}: fillValue of shape ${show(v.shape)} cannot be broadcast to ${show(s)}`);
  }
  return lax.broadcastInDim(v, s, v.shape.map((_, i) => i + s.length - v.ndim));
}

export function zeros(shape: number | number[], options: DtypeOptions = {}): Array {
  checkOptions('jnp.zeros', options, ['dtype']);
  return fill('jnp.zeros', shape, 0, dtypeOption('jnp.zeros', options.dtype) ?? 'float32');
}

export function ones(shape: number | number[], options: DtypeOptions = {}): Array {
  checkOptions('jnp.ones', options, ['dtype']);
  return fill('jnp.ones', shape, 1, dtypeOption('jnp.ones', options.dtype) ?? 'float32');
}

/** jnp.empty: JAX has no uninitialized memory; like JAX, returns zeros. */
export function empty(shape: number | number[], options: DtypeOptions = {}): Array {
  checkOptions('jnp.empty', options, ['dtype']);
  return fill('jnp.empty', shape, 0, dtypeOption('jnp.empty', options.dtype) ?? 'float32');
}

function likeOptions(fn: string, x: ArrayLike, options: DtypeOptions & { shape?: number | number[] }): { shape: number[]; dtype: DType } {
  checkOptions(fn, options, ['dtype', 'shape']);
  const a = toArray(fn, x);
  return { shape: options.shape === undefined ? [...a.shape] : checkShape(fn, options.shape), dtype: dtypeOption(fn, options.dtype) ?? a.dtype };
}

export function zerosLike(x: ArrayLike, options: DtypeOptions & { shape?: number | number[] } = {}): Array {
  const o = likeOptions('jnp.zerosLike', x, options);
  return fill('jnp.zerosLike', o.shape, 0, o.dtype);
}

export function onesLike(x: ArrayLike, options: DtypeOptions & { shape?: number | number[] } = {}): Array {
  const o = likeOptions('jnp.onesLike', x, options);
  return fill('jnp.onesLike', o.shape, 1, o.dtype);
}

export function fullLike(x: ArrayLike, fillValue: ArrayLike, options: DtypeOptions & { shape?: number | number[] } = {}): Array {
  const o = likeOptions('jnp.fullLike', x, options);
  return fill('jnp.fullLike', o.shape, fillValue, o.dtype);
}

function checkNumber(fn: string, value: unknown, arg: string): number {
  if (typeof value !== 'number' || Number.isNaN(value)) throw new TypeError(`${fn}: ${arg} must be a number, got ${show(value)}`);
  if (!Number.isFinite(value)) throw new ValueError(`${fn}: ${arg} must be finite, got ${value}`);
  return value;
}

/** jnp.arange(stop) or arange(start, stop, step): int32 when all are integers, else float32. */
export function arange(start: number, stop?: number | null, step?: number | null, options: DtypeOptions = {}): Array {
  checkOptions('jnp.arange', options, ['dtype']);
  let lo = checkNumber('jnp.arange', start, 'start');
  let hi: number;
  if (stop === undefined || stop === null) {
    hi = lo;
    lo = 0;
  } else {
    hi = checkNumber('jnp.arange', stop, 'stop');
  }
  const st = step === undefined || step === null ? 1 : checkNumber('jnp.arange', step, 'step');
  if (st === 0) throw new ValueError('jnp.arange: step must not be zero');
  const dtype = dtypeOption('jnp.arange', options.dtype) ?? ([lo, hi, st].every(Number.isInteger) ? 'int32' : 'float32');
  const n = Math.max(0, Math.ceil((hi - lo) / st));
  if (isInteger(dtype) && [lo, st].every(Number.isInteger)) {
    if (lo === 0 && st === 1) return lax.iota(dtype, n);
    // a negative step or start may not fit an unsigned dtype: count in int32 (or uint32 for large starts), then convert
    const work = lo >= 0 && st > 0 && dtype === 'uint32' ? 'uint32' : 'int32';
    return lax.convertElementType(lax.add(lax.mul(lax.iota(work, n), st), lo), dtype);
  }
  const work = isFloating(dtype) && dtype !== 'float64' ? 'float32' : dtype === 'float64' ? 'float64' : 'float32';
  const values = lax.add(lax.mul(lax.iota(work, n), st), lo);
  return lax.convertElementType(values, dtype);
}

/** jnp.linspace(start, stop, num = 50, { endpoint = true, dtype }). */
export function linspace(start: number, stop: number, num = 50, options: DtypeOptions & { endpoint?: boolean } = {}): Array {
  checkOptions('jnp.linspace', options, ['dtype', 'endpoint']);
  const lo = checkNumber('jnp.linspace', start, 'start');
  const hi = checkNumber('jnp.linspace', stop, 'stop');
  if (!Number.isInteger(num) || num < 0) throw new ValueError(`jnp.linspace: num must be a non-negative integer, got ${show(num)}`);
  if (options.endpoint !== undefined && typeof options.endpoint !== 'boolean') {
    throw new TypeError(`jnp.linspace: endpoint must be a boolean, got ${show(options.endpoint)}`);
  }
  const endpoint = options.endpoint ?? true;
  const dtype = dtypeOption('jnp.linspace', options.dtype) ?? 'float32';
  const div = endpoint ? num - 1 : num;
  const work = dtype === 'float64' ? 'float64' : 'float32';
  // computed in float64 on the host, like NumPy, then rounded once to the dtype (stored straight into a typed array:
  // a JS array of 2e8 numbers failed with RangeError: Invalid array length)
  const values = work === 'float64' ? new Float64Array(num) : new Float32Array(num);
  for (let i = 0; i < num; i++) values[i] = div > 0 ? lo + ((hi - lo) * i) / div : lo;
  if (endpoint && num > 1) values[num - 1] = hi;
  const a = arrayFromValues(values, [num], work);
  return isFloating(dtype) ? lax.convertElementType(a, dtype) : lax.convertElementType(lax.floor(a), dtype);
}

/** jnp.eye(n, m = n, { k = 0, dtype }). */
export function eye(n: number, m?: number | null, options: DtypeOptions & { k?: number } = {}): Array {
  checkOptions('jnp.eye', options, ['dtype', 'k']);
  const rows = checkShape('jnp.eye', [n], 'n')[0]!;
  const cols = m === undefined || m === null ? rows : checkShape('jnp.eye', [m], 'm')[0]!;
  const k = options.k ?? 0;
  if (!Number.isInteger(k)) throw new TypeError(`jnp.eye: k must be an integer, got ${show(k)}`);
  const dtype = dtypeOption('jnp.eye', options.dtype) ?? 'float32';
  const i = lax.broadcastedIota('int32', [rows, cols], 0);
  const j = lax.broadcastedIota('int32', [rows, cols], 1);
  return lax.convertElementType(lax.eq(lax.add(i, k), j), dtype);
}

export function identity(n: number, options: DtypeOptions = {}): Array {
  checkOptions('jnp.identity', options, ['dtype']);
  const size = checkShape('jnp.identity', [n], 'n')[0]!;
  return eye(size, size, { dtype: dtypeOption('jnp.identity', options.dtype) });
}

/** jnp.tri(n, m = n, k = 0): ones at and below the k-th diagonal. */
export function tri(n: number, m?: number | null, k = 0, options: DtypeOptions = {}): Array {
  checkOptions('jnp.tri', options, ['dtype']);
  const rows = checkShape('jnp.tri', [n], 'n')[0]!;
  const cols = m === undefined || m === null ? rows : checkShape('jnp.tri', [m], 'm')[0]!;
  if (!Number.isInteger(k)) throw new TypeError(`jnp.tri: k must be an integer, got ${show(k)}`);
  const dtype = dtypeOption('jnp.tri', options.dtype) ?? 'float32';
  const i = lax.broadcastedIota('int32', [rows, cols], 0);
  const j = lax.broadcastedIota('int32', [rows, cols], 1);
  return lax.convertElementType(lax.ge(lax.add(i, k), j), dtype);
}
