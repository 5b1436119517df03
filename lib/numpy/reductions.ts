// jnp's reductions (sum, prod, max, min, all, any, mean, var, std), arg
// reductions, cumulative sums and products, and logsumexp. They follow
// jax/_src/numpy/reductions.py: small integers and bools sum in the default
// int (uint32 for unsigned), 16-bit floats are reduced in float32 and cast
// back, `initial` is combined after the reduction (XLA's init value must be
// the identity), and `where` replaces masked elements by that identity.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, integerRange, isFloating, isInteger, isUnsigned, toInexact } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { broadcastShapes, normalizeAxes, normalizeAxis, shapesEqual, sizeOf } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { asArray, broadcastToShape, dtypeOption, promoteInexact, ufuncOperands } from './util.js';

/** An axis option: one axis, several, or null/undefined for all of them. */
export type Axis = number | number[] | null | undefined;

export interface ReductionOptions {
  axis?: Axis;
  keepdims?: boolean;
  /** Elements to include (a bool array broadcastable to the input). */
  where?: ArrayLike | null;
}
export interface SumOptions extends ReductionOptions {
  dtype?: DType | null;
  initial?: ArrayLike | null;
  /** Sum small integers in the default int (uint32 for unsigned), as JAX does by default. */
  promoteIntegers?: boolean;
}
export interface MaxOptions extends ReductionOptions {
  initial?: ArrayLike | null;
}
export interface MeanOptions extends ReductionOptions {
  dtype?: DType | null;
}
export interface VarOptions extends MeanOptions {
  ddof?: number;
  correction?: number | null;
}
export interface ArgReductionOptions {
  axis?: number | null;
  keepdims?: boolean | null;
}
export interface CumulativeOptions {
  axis?: number | null;
  dtype?: DType | null;
}
export interface LogsumexpOptions {
  axis?: Axis;
  keepdims?: boolean;
  b?: ArrayLike | null;
  returnSign?: boolean;
  where?: ArrayLike | null;
}

/**
 * Normalizes an `axis` option (a number, an array of numbers, or
 * null/undefined for every axis) to non-negative axes in the order given,
 * rejecting wrong types, out-of-range and repeated axes.
 */
export function normalizeAxisOption(fn: string, axis: unknown, ndim: number): number[] {
  if (axis !== undefined && axis !== null && typeof axis !== 'number' && !globalThis.Array.isArray(axis)) {
    throw new TypeError(`${fn}: axis must be an integer, an array of integers or null, got ${show(axis)}`);
  }
  return normalizeAxes(fn, axis, ndim);
}

function flag(fn: string, value: unknown, arg: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${arg} must be a boolean, got ${show(value)}`);
  return value;
}

/** The shape with the reduced axes kept as size 1. */
function keptShape(shape: readonly number[], axes: number[]): number[] {
  return shape.map((d, i) => (axes.includes(i) ? 1 : d));
}

/** A strongly typed rank-0 array. */
function scalar(fn: string, value: number | boolean, dtype: DType): Array {
  return toArray(fn, value, 'value', dtype);
}

function full(fn: string, value: number | boolean, dtype: DType, shape: readonly number[]): Array {
  return lax.broadcastInDim(scalar(fn, value, dtype), [...shape], []);
}

/** 16-bit floats are reduced in float32 (JAX's _upcast_f16). */
function upcastHalf(dtype: DType): DType {
  return dtype === 'float16' || dtype === 'bfloat16' ? 'float32' : dtype;
}

/** JAX's default-int promotion for sum and prod: bool and small ints → int32, small unsigned → uint32. */
function promoteIntegerDtype(dtype: DType): DType {
  if (dtype === 'bool') return 'int32';
  if (isUnsigned(dtype)) return 'uint32';
  if (isInteger(dtype)) return 'int32';
  return dtype;
}

type Monoid = 'sum' | 'prod' | 'max' | 'min' | 'and' | 'or';

const REDUCE: Record<Monoid, (x: Array, axes: number[]) => Array> = {
  sum: lax.reduceSum, prod: lax.reduceProd, max: lax.reduceMax, min: lax.reduceMin, and: lax.reduceAnd, or: lax.reduceOr,
};
const COMBINE: Record<Monoid, (x: Array, y: Array) => Array> = {
  sum: lax.add, prod: lax.mul, max: lax.max, min: lax.min, and: lax.bitwiseAnd, or: lax.bitwiseOr,
};

/** The identity XLA reduces from (JAX's _reduction_init_val). */
function identity(op: Monoid, dtype: DType): number | boolean {
  if (dtype === 'bool') return op === 'prod' || op === 'min' || op === 'and';
  switch (op) {
    case 'sum': case 'or': return 0;
    case 'prod': return 1;
    case 'and': return -1;
    case 'max': return isFloating(dtype) ? -Infinity : integerRange(dtype)[0];
    case 'min': return isFloating(dtype) ? Infinity : integerRange(dtype)[1];
  }
}

/** The `where` mask as a bool array of exactly `shape`. */
function whereMask(fn: string, where: unknown, shape: readonly number[]): Array {
  const mask = asArray(fn, where, 'where');
  if (mask.dtype !== 'bool') throw new TypeError(`${fn}: where must be a bool array, got dtype ${mask.dtype}`);
  const target = broadcastShapes(fn, mask.shape, shape);
  if (!shapesEqual(target, shape)) {
    throw new ValueError(`${fn}: where of shape ${show(mask.shape)} cannot be broadcast to the input shape ${show(shape)}`);
  }
  return broadcastToShape(mask, shape);
}

function initialArray(fn: string, initial: unknown, dtype: DType): Array {
  const init = asArray(fn, initial, 'initial');
  if (init.ndim !== 0) throw new ValueError(`${fn}: initial must be a scalar, got an array of shape ${show(init.shape)}`);
  return lax.convertElementType(init, dtype);
}

interface ReductionSpec {
  name: string;
  op: Monoid;
  boolOp: Monoid;
  hasIdentity: boolean;
  preprocess: 'numeric' | 'bool' | null;
  upcastHalf: boolean;
}

interface ReductionArgs {
  axis?: unknown;
  keepdims?: unknown;
  where?: unknown;
  dtype?: unknown;
  initial?: unknown;
  promoteIntegers?: boolean;
}

/** JAX's _reduction: the shared body of sum, prod, max, min, all and any. */
function reduction(spec: ReductionSpec, a: ArrayLike, o: ReductionArgs): Array {
  const fn = `jnp.${spec.name}`;
  let x = asArray(fn, a, 'a');
  const dtype = dtypeOption(fn, o.dtype);
  const keepdims = flag(fn, o.keepdims, 'keepdims');
  const hasWhere = o.where !== undefined && o.where !== null;
  const hasInitial = o.initial !== undefined && o.initial !== null;
  if (hasWhere && !hasInitial && !spec.hasIdentity) {
    throw new ValueError(`${fn}: reduction operation ${spec.name} does not have an identity, so to use a where mask one has to specify 'initial'`);
  }
  if (spec.preprocess === 'numeric' && x.dtype === 'bool') x = lax.convertElementType(x, 'int32');
  if (spec.preprocess === 'bool') x = lax.convertElementType(x, 'bool');
  const axes = normalizeAxisOption(fn, o.axis, x.ndim);
  if (!spec.hasIdentity && !hasInitial && axes.some((d) => x.shape[d] === 0)) {
    throw new ValueError(`${fn}: zero-size array to reduction operation ${spec.name} which has no identity (shape ${show(x.shape)}, axis ${show(axes)})`);
  }
  let resultDtype = dtype ?? x.dtype;
  if (dtype === undefined && o.promoteIntegers) resultDtype = promoteIntegerDtype(resultDtype);
  const computation = spec.upcastHalf && isFloating(resultDtype) ? upcastHalf(resultDtype) : resultDtype;
  x = lax.convertElementType(x, computation);
  const op = computation === 'bool' ? spec.boolOp : spec.op;
  if (hasWhere) x = lax.select(whereMask(fn, o.where, x.shape), x, full(fn, identity(op, computation), computation, x.shape));
  let result = axes.length > 0 ? REDUCE[op](x, axes) : x;
  if (hasInitial) result = COMBINE[op](initialArray(fn, o.initial, computation), result);
  if (keepdims) result = lax.reshape(result, keptShape(x.shape, axes));
  return lax.convertElementType(result, resultDtype);
}

const SUM: ReductionSpec = { name: 'sum', op: 'sum', boolOp: 'or', hasIdentity: true, preprocess: 'numeric', upcastHalf: true };
const PROD: ReductionSpec = { name: 'prod', op: 'prod', boolOp: 'and', hasIdentity: true, preprocess: 'numeric', upcastHalf: true };

function integerOption(fn: string, value: unknown, arg: string): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${arg} must be a boolean, got ${show(value)}`);
  return value;
}

/** jnp.sum(a, { axis, dtype, keepdims, initial, where, promoteIntegers }). */
export function sum(a: ArrayLike, options: SumOptions = {}): Array {
  checkOptions('jnp.sum', options, ['axis', 'dtype', 'keepdims', 'initial', 'where', 'promoteIntegers']);
  return reduction(SUM, a, { ...options, promoteIntegers: integerOption('jnp.sum', options?.promoteIntegers, 'promoteIntegers') });
}

/** jnp.prod(a, { axis, dtype, keepdims, initial, where, promoteIntegers }). */
export function prod(a: ArrayLike, options: SumOptions = {}): Array {
  checkOptions('jnp.prod', options, ['axis', 'dtype', 'keepdims', 'initial', 'where', 'promoteIntegers']);
  return reduction(PROD, a, { ...options, promoteIntegers: integerOption('jnp.prod', options?.promoteIntegers, 'promoteIntegers') });
}

function extremum(name: 'max' | 'min' | 'amax' | 'amin', op: 'max' | 'min') {
  const spec: ReductionSpec = { name, op, boolOp: op, hasIdentity: false, preprocess: null, upcastHalf: false };
  return (a: ArrayLike, options: MaxOptions = {}): Array => {
    checkOptions(`jnp.${name}`, options, ['axis', 'keepdims', 'initial', 'where']);
    return reduction(spec, a, options ?? {});
  };
}

/** jnp.max(a, { axis, keepdims, initial, where }); `where` needs `initial`. */
export const max = extremum('max', 'max');
/** jnp.min(a, { axis, keepdims, initial, where }); `where` needs `initial`. */
export const min = extremum('min', 'min');
export const amax = extremum('amax', 'max');
export const amin = extremum('amin', 'min');

function logical(name: 'all' | 'any', op: 'and' | 'or') {
  const spec: ReductionSpec = { name, op, boolOp: op, hasIdentity: true, preprocess: 'bool', upcastHalf: false };
  return (a: ArrayLike, options: ReductionOptions = {}): Array => {
    checkOptions(`jnp.${name}`, options, ['axis', 'keepdims', 'where']);
    return reduction(spec, a, options ?? {});
  };
}

/** jnp.all(a, { axis, keepdims, where }): bool. */
export const all = logical('all', 'and');
/** jnp.any(a, { axis, keepdims, where }): bool. */
export const any = logical('any', 'or');

/** The number of elements reduced, as an array of `dtype` (counting `where` if given). */
function normalizer(fn: string, x: Array, axes: number[], dtype: DType, where: unknown, keepdims: boolean): Array {
  if (where === undefined || where === null) return scalar(fn, sizeOf(axes.map((d) => x.shape[d]!)), dtype);
  return sum(whereMask(fn, where, x.shape), { axis: axes, dtype, keepdims });
}

/** jnp.mean(a, { axis, dtype, keepdims, where }): ints and bools give float32; 16-bit floats are summed in float32. */
export function mean(a: ArrayLike, options: MeanOptions = {}): Array {
  const fn = 'jnp.mean';
  checkOptions(fn, options, ['axis', 'dtype', 'keepdims', 'where']);
  const o = options ?? {};
  const x = asArray(fn, a, 'a');
  const dtype = dtypeOption(fn, o.dtype);
  const keepdims = flag(fn, o.keepdims, 'keepdims');
  const axes = normalizeAxisOption(fn, o.axis, x.ndim);
  const resultDtype = dtype ?? toInexact(x.dtype);
  const computation = isFloating(resultDtype) ? upcastHalf(resultDtype) : resultDtype;
  const count = normalizer(fn, x, axes, computation, o.where, keepdims);
  const total = sum(x, { axis: axes, dtype: computation, keepdims, where: o.where ?? null });
  return lax.convertElementType(lax.div(total, count), resultDtype);
}

function correctionOption(fn: string, o: VarOptions): number {
  const hasCorrection = o.correction !== undefined && o.correction !== null;
  if (hasCorrection && o.ddof !== undefined && o.ddof !== 0) throw new ValueError(`${fn}: ddof and correction can't be provided simultaneously`);
  const value = hasCorrection ? o.correction : (o.ddof ?? 0);
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${fn}: ${hasCorrection ? 'correction' : 'ddof'} must be a finite number, got ${show(value)}`);
  }
  return value;
}

/** The body of var and std (JAX's _var); `fn` names the caller in errors. */
function variance(fn: string, a: ArrayLike, options: VarOptions): Array {
  checkOptions(fn, options, ['axis', 'dtype', 'ddof', 'correction', 'keepdims', 'where']);
  const o = options ?? {};
  const x0 = asArray(fn, a, 'a');
  const dtype = dtypeOption(fn, o.dtype);
  const keepdims = flag(fn, o.keepdims, 'keepdims');
  const correction = correctionOption(fn, o);
  const axes = normalizeAxisOption(fn, o.axis, x0.ndim);
  // JAX's _var_promote_types
  const outDtype = dtype ?? toInexact(x0.dtype);
  const computation = upcastHalf(dtype ?? (isFloating(x0.dtype) ? x0.dtype : outDtype));
  const x = lax.convertElementType(x0, computation);
  const where = o.where ?? null;
  const centered = lax.square(lax.sub(x, broadcastToShape(mean(x, { axis: axes, dtype: computation, keepdims: true, where }), x.shape)));
  const count = lax.sub(normalizer(fn, x, axes, computation, where, keepdims), scalar(fn, correction, computation));
  let result = lax.convertElementType(lax.div(sum(centered, { axis: axes, dtype: computation, keepdims, where }), count), outDtype);
  // jnp.where(normalizer > 0, result, nan): a NaN literal makes integer results float32, as in JAX.
  if (!isFloating(result.dtype)) result = lax.convertElementType(result, 'float32');
  return lax.select(lax.gt(count, 0), result, full(fn, NaN, result.dtype, result.shape));
}

/** jnp.var(a, { axis, dtype, ddof, keepdims, where }): divides by N - ddof; NaN where that is <= 0 (JAX). */
function var_(a: ArrayLike, options: VarOptions = {}): Array {
  return variance('jnp.var', a, options);
}
export { var_ as var };

/** jnp.std(a, { axis, dtype, ddof, keepdims, where }) = sqrt(var). */
export function std(a: ArrayLike, options: VarOptions = {}): Array {
  const fn = 'jnp.std';
  checkOptions(fn, options, ['axis', 'dtype', 'ddof', 'correction', 'keepdims', 'where']);
  const dtype = dtypeOption(fn, options?.dtype);
  if (dtype !== undefined && !isFloating(dtype)) throw new ValueError(`${fn}: dtype must be inexact, got ${dtype}`);
  return lax.sqrt(variance(fn, a, options));
}

function argReduction(name: 'argmax' | 'argmin', op: typeof lax.argmax) {
  const fn = `jnp.${name}`;
  return (a: ArrayLike, options: ArgReductionOptions = {}): Array => {
    checkOptions(fn, options, ['axis', 'keepdims']);
    const o = options ?? {};
    let x = asArray(fn, a, 'a');
    const keepdims = flag(fn, o.keepdims, 'keepdims');
    const shape = x.shape;
    let axis: number;
    if (o.axis === undefined || o.axis === null) {
      x = lax.reshape(x, [x.size]);
      axis = 0;
    } else {
      axis = normalizeAxis(fn, o.axis, x.ndim);
    }
    if (x.shape[axis] === 0) throw new ValueError(`${fn}: attempt to get ${name} of an empty sequence (shape ${show(shape)}, axis ${axis})`);
    const result = op(x, axis, 'int32');
    if (!keepdims) return result;
    return lax.reshape(result, o.axis === undefined || o.axis === null ? shape.map(() => 1) : keptShape(shape, [axis]));
  };
}

/** jnp.argmax(a, { axis, keepdims }): int32 indices; no axis means the flattened array. */
export const argmax = argReduction('argmax', lax.argmax);
/** jnp.argmin(a, { axis, keepdims }): int32 indices; no axis means the flattened array. */
export const argmin = argReduction('argmin', lax.argmin);

function cumulative(name: 'cumsum' | 'cumprod', op: typeof lax.cumsum) {
  const fn = `jnp.${name}`;
  return (a: ArrayLike, options: CumulativeOptions = {}): Array => {
    checkOptions(fn, options, ['axis', 'dtype']);
    const o = options ?? {};
    let x = asArray(fn, a, 'a');
    const dtype = dtypeOption(fn, o.dtype);
    const noAxis = o.axis === undefined || o.axis === null;
    // a JS number counts as a 1-element vector, as a Python scalar does in JAX
    if (noAxis || typeof a === 'number' || typeof a === 'boolean') x = lax.reshape(x, [x.size]);
    const axis = normalizeAxis(fn, noAxis ? 0 : o.axis, x.ndim);
    // bools accumulate in int32 (and a bool dtype is applied afterwards), as in JAX
    const resultType = promoteBool(dtype ?? x.dtype);
    const result = op(lax.convertElementType(x, resultType), { axis });
    return dtype === 'bool' ? lax.convertElementType(result, 'bool') : result;
  };
}

function promoteBool(dtype: DType): DType {
  return dtype === 'bool' ? 'int32' : dtype;
}

/** jnp.cumsum(a, { axis, dtype }): no axis means the flattened array; bools accumulate as int32. */
export const cumsum = cumulative('cumsum', lax.cumsum);
/** jnp.cumprod(a, { axis, dtype }): no axis means the flattened array; bools accumulate as int32. */
export const cumprod = cumulative('cumprod', lax.cumprod);

/**
 * log(sum(b * exp(a))) over `axis`, shifted by the maximum so large inputs do
 * not overflow and all -inf rows give -inf (jax.nn.logsumexp). With
 * `returnSign`, returns [log|sum|, sign(sum)].
 */
export function logsumexp(a: ArrayLike, options: LogsumexpOptions & { returnSign: true }): [Array, Array];
export function logsumexp(a: ArrayLike, options?: LogsumexpOptions): Array;
export function logsumexp(a: ArrayLike, options: LogsumexpOptions = {}): Array | [Array, Array] {
  const fn = 'jnp.logsumexp';
  checkOptions(fn, options, ['axis', 'keepdims', 'b', 'returnSign', 'where']);
  const o = options ?? {};
  const keepdims = flag(fn, o.keepdims, 'keepdims');
  const returnSign = flag(fn, o.returnSign, 'returnSign');
  const hasB = o.b !== undefined && o.b !== null;
  let x: Array;
  let b: Array | undefined;
  if (hasB) {
    [x, b] = ufuncOperands(fn, ...promoteInexact(fn, a, o.b)) as [Array, Array];
    x = lax.select(lax.ne(b, 0), x, full(fn, -Infinity, x.dtype, x.shape));
  } else {
    x = promoteInexact(fn, a)[0]!;
  }
  const axes = normalizeAxisOption(fn, o.axis, x.ndim);
  const where = o.where ?? null;
  let amax = max(x, { axis: axes, keepdims, where, initial: -Infinity });
  amax = lax.select(lax.isFinite(amax), amax, full(fn, 0, amax.dtype, amax.shape));
  const amaxKept = keepdims ? amax : lax.reshape(amax, keptShape(x.shape, axes));
  let shifted = lax.exp(lax.sub(x, broadcastToShape(amaxKept, x.shape)));
  if (b) shifted = lax.mul(shifted, b);
  let total = sum(shifted, { axis: axes, keepdims, where });
  const sign = lax.sign(total);
  total = lax.abs(total);
  let out = lax.add(lax.log(total), lax.convertElementType(amax, total.dtype));
  if (returnSign) return [out, sign];
  if (b) out = lax.select(lax.lt(sign, 0), full(fn, NaN, out.dtype, out.shape), out);
  return out;
}
