// lax: thin wrappers over primitives with JAX's signatures. Like JAX's lax,
// operands of binary ops must have equal dtypes and shapes, except that JS
// numbers are weakly typed and take the other operand's dtype.
// Loading lax loads the runtime, which installs the eager interpreter and the
// devices into core: every API function reaches bind through here.
import '../runtime/eager.js';
import { Array, type ArrayLike } from '../core/array.js';
import { bind1, bind } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { type DType, castToInteger, checkUserDType, isFloating, isInteger, roundToDType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { PRECISION_NAMES, defaultMatmulPrecision } from '../core/config.js';
import type { DotDimensionNumbers, DotPrecision, GatherDimensionNumbers, GatherMode, ScatterDimensionNumbers } from '../core/primitives.js';
import { type PyTree, map as treeMap } from '../core/pytree.js';
import { checkShape, normalizeAxis } from '../core/shape.js';

/** Converts a weak JS scalar to `like`'s dtype; arrays pass through. */
function operand(fn: string, x: unknown, like: Array | undefined, arg: string): Array {
  if ((typeof x === 'number' || typeof x === 'boolean') && like) return toArray(fn, x, arg, like.dtype);
  return toArray(fn, x, arg);
}

function unaryOp(prim: Parameters<typeof bind1>[0]) {
  return (x: ArrayLike): Array => bind1(prim, [toArray(`lax.${prim}`, x)], {} as never);
}

function binaryOp(prim: Parameters<typeof bind1>[0]) {
  return (x: ArrayLike, y: ArrayLike): Array => {
    const fn = `lax.${prim}`;
    const a = x instanceof Array ? x : undefined;
    const b = y instanceof Array ? y : undefined;
    const xa = operand(fn, x, b, 'x');
    const ya = operand(fn, y, xa, 'y');
    return bind1(prim, [xa, ya], {} as never);
  };
}

export const neg = unaryOp('neg');
export const sign = unaryOp('sign');
export const floor = unaryOp('floor');
export const ceil = unaryOp('ceil');
export const isFinite = unaryOp('is_finite');
export const exp = unaryOp('exp');
export const exp2 = unaryOp('exp2');
export const log = unaryOp('log');
export const expm1 = unaryOp('expm1');
export const log1p = unaryOp('log1p');
export const tanh = unaryOp('tanh');
export const logistic = unaryOp('logistic');
export const sin = unaryOp('sin');
export const cos = unaryOp('cos');
export const tan = unaryOp('tan');
export const asin = unaryOp('asin');
export const acos = unaryOp('acos');
export const atan = unaryOp('atan');
export const sinh = unaryOp('sinh');
export const cosh = unaryOp('cosh');
export const asinh = unaryOp('asinh');
export const acosh = unaryOp('acosh');
export const atanh = unaryOp('atanh');
export const sqrt = unaryOp('sqrt');
export const rsqrt = unaryOp('rsqrt');
export const cbrt = unaryOp('cbrt');
export const abs = unaryOp('abs');
export const bitwiseNot = unaryOp('not');
export const erf = unaryOp('erf');
export const square = unaryOp('square');
export const copy = unaryOp('copy');

export const add = binaryOp('add');
export const sub = binaryOp('sub');
export const mul = binaryOp('mul');
export const div = binaryOp('div');
export const rem = binaryOp('rem');
export const pow = binaryOp('pow');
export const max = binaryOp('max');
export const min = binaryOp('min');
export const atan2 = binaryOp('atan2');
export const bitwiseAnd = binaryOp('and');
export const bitwiseOr = binaryOp('or');
export const bitwiseXor = binaryOp('xor');
export const nextafter = binaryOp('nextafter');
export const eq = binaryOp('eq');
export const ne = binaryOp('ne');
export const lt = binaryOp('lt');
export const le = binaryOp('le');
export const gt = binaryOp('gt');
export const ge = binaryOp('ge');

export function round(x: ArrayLike, roundingMethod: 'away_from_zero' | 'to_nearest_even' = 'away_from_zero'): Array {
  if (roundingMethod !== 'away_from_zero' && roundingMethod !== 'to_nearest_even') {
    throw new ValueError(`lax.round: roundingMethod must be 'away_from_zero' or 'to_nearest_even', got ${show(roundingMethod)}`);
  }
  return bind1('round', [toArray('lax.round', x)], { roundingMethod });
}

export function integerPow(x: ArrayLike, y: number): Array {
  if (!Number.isInteger(y)) throw new TypeError(`lax.integerPow: y must be an integer, got ${show(y)}`);
  return bind1('integer_pow', [toArray('lax.integerPow', x)], { y });
}

export function reducePrecision(x: ArrayLike, exponentBits: number, mantissaBits: number): Array {
  if (!Number.isInteger(exponentBits) || exponentBits < 1 || !Number.isInteger(mantissaBits) || mantissaBits < 0) {
    throw new ValueError(`lax.reducePrecision: exponentBits must be >= 1 and mantissaBits >= 0, got ${exponentBits} and ${mantissaBits}`);
  }
  const xa = toArray('lax.reducePrecision', x);
  return bind1('reduce_precision', [xa], { exponentBits, mantissaBits });
}

export function convertElementType(x: ArrayLike, newDtype: DType): Array {
  const dtype = checkUserDType('lax.convertElementType', newDtype, 'newDtype');
  const xa = toArray('lax.convertElementType', x);
  if (xa.dtype === dtype && !xa.weakType) return xa;
  return bind1('convert_element_type', [xa], { newDtype: dtype, weakType: false });
}

/** Internal: convert keeping weak typing (for promotion of weak scalars). */
export function convertWeak(x: Array, dtype: DType, weakType: boolean): Array {
  if (x.dtype === dtype && x.weakType === weakType) return x;
  return bind1('convert_element_type', [x], { newDtype: dtype, weakType });
}

export function select(pred: ArrayLike, onTrue: ArrayLike, onFalse: ArrayLike): Array {
  const t = operand('lax.select', onTrue, onFalse instanceof Array ? onFalse : undefined, 'onTrue');
  const f = operand('lax.select', onFalse, t, 'onFalse');
  return bind1('select_n', [toArray('lax.select', pred, 'pred'), f, t], {});
}

export function selectN(which: ArrayLike, ...cases: ArrayLike[]): Array {
  const first = cases.find((c) => c instanceof Array) as Array | undefined;
  return bind1('select_n', [toArray('lax.selectN', which, 'which'), ...cases.map((c, i) => operand('lax.selectN', c, first, `cases[${i}]`))], {});
}

export function clamp(lo: ArrayLike, x: ArrayLike, hi: ArrayLike): Array {
  const xa = toArray('lax.clamp', x);
  return bind1('clamp', [operand('lax.clamp', lo, xa, 'min'), xa, operand('lax.clamp', hi, xa, 'max')], {});
}

export function iota(dtype: DType, size: number): Array {
  const [n] = checkShape('lax.iota', [size], 'size');
  return bind1('iota', [], { dtype: checkUserDType('lax.iota', dtype), shape: [n!], dimension: 0 });
}

export function broadcastedIota(dtype: DType, shape: number[], dimension: number): Array {
  const s = checkShape('lax.broadcastedIota', shape);
  return bind1('iota', [], { dtype: checkUserDType('lax.broadcastedIota', dtype), shape: s, dimension: normalizeAxis('lax.broadcastedIota', dimension, s.length, 'dimension') });
}

export function broadcastInDim(x: ArrayLike, shape: number[], broadcastDimensions: number[]): Array {
  const xa = toArray('lax.broadcastInDim', x);
  const s = checkShape('lax.broadcastInDim', shape);
  if (xa.ndim === s.length && xa.shape.every((d, i) => d === s[i]) && broadcastDimensions.every((d, i) => d === i)) return xa;
  return bind1('broadcast_in_dim', [xa], { shape: s, broadcastDimensions: [...broadcastDimensions] });
}

export function broadcast(x: ArrayLike, sizes: number[]): Array {
  const xa = toArray('lax.broadcast', x);
  const shape = [...checkShape('lax.broadcast', sizes, 'sizes'), ...xa.shape];
  return broadcastInDim(xa, shape, xa.shape.map((_, i) => i + sizes.length));
}

export function reshape(x: ArrayLike, newSizes: number[], dimensions?: number[] | null): Array {
  let xa = toArray('lax.reshape', x);
  if (dimensions) xa = transpose(xa, dimensions);
  const s = checkShape('lax.reshape', newSizes, 'newSizes');
  if (s.length === xa.ndim && s.every((d, i) => d === xa.shape[i])) return xa;
  return bind1('reshape', [xa], { newSizes: s });
}

export function transpose(x: ArrayLike, permutation: number[]): Array {
  const xa = toArray('lax.transpose', x);
  if (permutation.every((p, i) => p === i) && permutation.length === xa.ndim) return xa;
  return bind1('transpose', [xa], { permutation: [...permutation] });
}

export function squeeze(x: ArrayLike, dimensions: number[]): Array {
  const xa = toArray('lax.squeeze', x);
  const dims = dimensions.map((d) => normalizeAxis('lax.squeeze', d, xa.ndim, 'dimensions'));
  if (dims.length === 0) return xa;
  return bind1('squeeze', [xa], { dimensions: dims });
}

export function expandDims(x: ArrayLike, dimensions: number[]): Array {
  const xa = toArray('lax.expandDims', x);
  const rank = xa.ndim + dimensions.length;
  const dims = dimensions.map((d) => normalizeAxis('lax.expandDims', d, rank, 'dimensions')).sort((a, b) => a - b);
  const shape: number[] = [];
  let k = 0;
  for (let i = 0; i < rank; i++) shape.push(dims.includes(i) ? 1 : xa.shape[k++]!);
  return reshape(xa, shape);
}

/**
 * lax.tile(operand, reps): the operand repeated reps[i] times along axis i (one count per axis). JAX 0.10.2 binds a
 * tile primitive; here it is the broadcast to [r0, s0, r1, s1, ...] and the reshape that merges each pair (jnp.tile's
 * form), with the same values and derivatives.
 */
export function tile(operand: ArrayLike, reps: number[]): Array {
  const fn = 'lax.tile';
  const x = toArray(fn, operand, 'operand');
  if (!globalThis.Array.isArray(reps) || !reps.every((r) => Number.isInteger(r) && r >= 0)) {
    throw new TypeError(`${fn}: reps must be non-negative integers, got ${show(reps)}`);
  }
  if (reps.length !== x.ndim) throw new TypeError(`${fn}: reps length must be equal to the ndim of x, got len(reps)=${reps.length} and x.ndim=${x.ndim}`);
  if (reps.every((r) => r === 1)) return x;
  const interleaved = x.shape.flatMap((s, i) => [reps[i]!, s]);
  const tiled = broadcastInDim(x, interleaved, x.shape.map((_, i) => 2 * i + 1));
  return reshape(tiled, x.shape.map((s, i) => s * reps[i]!));
}

export function rev(x: ArrayLike, dimensions: number[]): Array {
  const xa = toArray('lax.rev', x);
  if (dimensions.length === 0) return xa;
  return bind1('rev', [xa], { dimensions: dimensions.map((d) => normalizeAxis('lax.rev', d, xa.ndim, 'dimensions')) });
}

export function slice(x: ArrayLike, startIndices: number[], limitIndices: number[], strides?: number[] | null): Array {
  return bind1('slice', [toArray('lax.slice', x)], { startIndices: [...startIndices], limitIndices: [...limitIndices], strides: strides ? [...strides] : null });
}

export function sliceInDim(x: ArrayLike, startIndex: number, limitIndex: number, stride = 1, axis = 0): Array {
  const xa = toArray('lax.sliceInDim', x);
  const ax = normalizeAxis('lax.sliceInDim', axis, xa.ndim);
  const start = xa.shape.map(() => 0);
  const limit = [...xa.shape];
  const strides = xa.shape.map(() => 1);
  start[ax] = startIndex;
  limit[ax] = limitIndex;
  strides[ax] = stride;
  return slice(xa, start, limit, strides);
}

export function pad(x: ArrayLike, paddingValue: ArrayLike, paddingConfig: [number, number, number][]): Array {
  const xa = toArray('lax.pad', x);
  return bind1('pad', [xa, operand('lax.pad', paddingValue, xa, 'paddingValue')], { paddingConfig: paddingConfig.map((p) => [p[0], p[1], p[2]]) });
}

const CONCATENATE_GROUP = 128;

export function concatenate(operands: ArrayLike[], dimension: number): Array {
  if (!globalThis.Array.isArray(operands) || operands.length === 0) {
    throw new ValueError(`lax.concatenate: operands must be a non-empty array, got ${show(operands)}`);
  }
  const arrays = operands.map((o, i) => toArray('lax.concatenate', o, `operands[${i}]`));
  if (arrays.length === 1) return arrays[0]!;
  // a kernel reads each operand as a buffer of its own and a launch takes at most 256: many operands concatenate in
  // groups first (jnp.stack of 300 rows), as one concatenate of the groups' results
  if (arrays.length > CONCATENATE_GROUP) {
    const groups: Array[] = [];
    for (let i = 0; i < arrays.length; i += CONCATENATE_GROUP) groups.push(concatenate(arrays.slice(i, i + CONCATENATE_GROUP), dimension));
    return concatenate(groups, dimension);
  }
  return bind1('concatenate', arrays, { dimension: normalizeAxis('lax.concatenate', dimension, arrays[0]!.ndim, 'dimension') });
}

/** Start indices as scalar Arrays; negative indices count from the end of their axis, as JAX's lax wrappers do before binding. */
function indexScalars(fn: string, indices: ArrayLike[] | ArrayLike, shape: readonly number[]): Array[] {
  const list = globalThis.Array.isArray(indices) ? (indices as ArrayLike[]) : [indices];
  if (list.length !== shape.length) throw new ValueError(`${fn}: needs ${shape.length} start indices (one per axis of ${show(shape)}), got ${list.length}`);
  return list.map((i, k) => {
    if (typeof i === 'number') {
      if (!Number.isInteger(i)) throw new TypeError(`${fn}: startIndices[${k}] must be an integer, got ${i}`);
      return toArray(fn, i < 0 ? i + shape[k]! : i, `startIndices[${k}]`, 'int32');
    }
    const a = toArray(fn, i, `startIndices[${k}]`);
    if (a.ndim !== 0) throw new ValueError(`${fn}: startIndices[${k}] must be a scalar, got shape ${show(a.shape)}`);
    if (a.dtype === 'uint8' || a.dtype === 'uint16' || a.dtype === 'uint32' || a.dtype === 'bool') return a;
    return select(lt(a, 0), add(a, shape[k]!), a);
  });
}

export function dynamicSlice(x: ArrayLike, startIndices: ArrayLike[], sliceSizes: number[]): Array {
  const xa = toArray('lax.dynamicSlice', x);
  return bind1('dynamic_slice', [xa, ...indexScalars('lax.dynamicSlice', startIndices, xa.shape)], { sliceSizes: checkShape('lax.dynamicSlice', sliceSizes, 'sliceSizes') });
}

export function dynamicUpdateSlice(x: ArrayLike, update: ArrayLike, startIndices: ArrayLike[]): Array {
  const xa = toArray('lax.dynamicUpdateSlice', x);
  const u = operand('lax.dynamicUpdateSlice', update, xa, 'update');
  return bind1('dynamic_update_slice', [xa, u, ...indexScalars('lax.dynamicUpdateSlice', startIndices, xa.shape)], {});
}

export function dynamicSliceInDim(x: ArrayLike, startIndex: ArrayLike, sliceSize: number, axis = 0): Array {
  const xa = toArray('lax.dynamicSliceInDim', x);
  const ax = normalizeAxis('lax.dynamicSliceInDim', axis, xa.ndim);
  const starts: ArrayLike[] = xa.shape.map(() => 0);
  starts[ax] = startIndex;
  const sizes = [...xa.shape];
  sizes[ax] = sliceSize;
  return dynamicSlice(xa, starts, sizes);
}

export function gather(
  operand_: ArrayLike,
  startIndices: ArrayLike,
  dimensionNumbers: GatherDimensionNumbers,
  sliceSizes: number[],
  options: { mode?: GatherMode; fillValue?: number | null } = {},
): Array {
  checkOptions('lax.gather', options, ['mode', 'fillValue']);
  const mode = options.mode ?? 'clip';
  if (mode !== 'clip' && mode !== 'fill') throw new ValueError(`lax.gather: mode must be 'clip' or 'fill', got ${show(mode)}`);
  const operand = toArray('lax.gather', operand_, 'operand');
  // the fill value is converted to the operand's dtype as a convert would (NaN into an integer array is 0)
  const f = options.fillValue ?? null;
  const fillValue = f === null ? null : isInteger(operand.dtype) ? castToInteger(Number(f), operand.dtype) : operand.dtype === 'bool' ? Number(Number(f) !== 0 || Number.isNaN(Number(f))) : roundToDType(Number(f), operand.dtype);
  return bind1('gather', [operand, toArray('lax.gather', startIndices, 'startIndices')], {
    dimensionNumbers, sliceSizes: [...sliceSizes], mode, fillValue,
  });
}

const SCATTER_NAMES = { scatter: 'lax.scatter', scatter_add: 'lax.scatterAdd', scatter_mul: 'lax.scatterMul', scatter_min: 'lax.scatterMin', scatter_max: 'lax.scatterMax' } as const;

function scatterOp(prim: keyof typeof SCATTER_NAMES) {
  return (operand_: ArrayLike, indices: ArrayLike, updates: ArrayLike, dimensionNumbers: ScatterDimensionNumbers, options: { mode?: GatherMode } = {}): Array => {
    const fn = SCATTER_NAMES[prim];
    checkOptions(fn, options, ['mode']);
    const mode = options.mode ?? 'fill';
    if (mode !== 'clip' && mode !== 'fill') throw new ValueError(`${fn}: mode must be 'clip' or 'fill', got ${show(mode)}`);
    const xa = toArray(fn, operand_, 'operand');
    return bind1(prim, [xa, toArray(fn, indices, 'indices'), operand(fn, updates, xa, 'updates')], { dimensionNumbers, mode });
  };
}
export const scatter = scatterOp('scatter');
export const scatterAdd = scatterOp('scatter_add');
export const scatterMul = scatterOp('scatter_mul');
export const scatterMin = scatterOp('scatter_min');
export const scatterMax = scatterOp('scatter_max');

function reduceOp(prim: 'reduce_sum' | 'reduce_prod' | 'reduce_max' | 'reduce_min' | 'reduce_and' | 'reduce_or', name: string) {
  return (x: ArrayLike, axes: number[]): Array => {
    const xa = toArray(`lax.${name}`, x);
    const ax = axes.map((a) => normalizeAxis(`lax.${name}`, a, xa.ndim, 'axes'));
    return bind1(prim, [xa], { axes: ax });
  };
}
export const reduceSum = reduceOp('reduce_sum', 'reduceSum');
export const reduceProd = reduceOp('reduce_prod', 'reduceProd');
export const reduceMax = reduceOp('reduce_max', 'reduceMax');
export const reduceMin = reduceOp('reduce_min', 'reduceMin');
export const reduceAnd = reduceOp('reduce_and', 'reduceAnd');
export const reduceOr = reduceOp('reduce_or', 'reduceOr');

export function argmax(x: ArrayLike, axis: number, indexDtype: DType = 'int32'): Array {
  const xa = toArray('lax.argmax', x);
  return bind1('argmax', [xa], { axes: [normalizeAxis('lax.argmax', axis, xa.ndim)], indexDtype });
}
export function argmin(x: ArrayLike, axis: number, indexDtype: DType = 'int32'): Array {
  const xa = toArray('lax.argmin', x);
  return bind1('argmin', [xa], { axes: [normalizeAxis('lax.argmin', axis, xa.ndim)], indexDtype });
}

function cumulativeOp(prim: 'cumsum' | 'cumprod' | 'cummax' | 'cummin') {
  return (x: ArrayLike, options: { axis?: number; reverse?: boolean } = {}): Array => {
    checkOptions(`lax.${prim}`, options, ['axis', 'reverse']);
    const xa = toArray(`lax.${prim}`, x);
    if (xa.ndim === 0) throw new ValueError(`lax.${prim}: operand must have rank >= 1, got a scalar`);
    return bind1(prim, [xa], { axis: normalizeAxis(`lax.${prim}`, options.axis ?? 0, xa.ndim), reverse: options.reverse ?? false });
  };
}
export const cumsum = cumulativeOp('cumsum');
export const cumprod = cumulativeOp('cumprod');
export const cummax = cumulativeOp('cummax');
export const cummin = cumulativeOp('cummin');

/**
 * lax.Precision: how float32 operands of a dot or convolution may be rounded on an accelerator. DEFAULT and HIGH
 * allow tf32 tensor cores on a GPU (as JAX's default there), HIGHEST keeps float32 accuracy; the CPU computes in
 * float32 for all three. JAX's strings are accepted too ('default', 'high', 'highest', 'bfloat16',
 * 'tensorfloat32', 'float32'), and a pair [lhs, rhs] means the more precise of the two.
 */
export const Precision = Object.freeze({ DEFAULT: 'default', HIGH: 'high', HIGHEST: 'highest' } as const);
export type Precision = (typeof Precision)[keyof typeof Precision];

const PRECISION_ORDER: DotPrecision[] = ['default', 'high', 'highest'];

/** A precision option as dot_general's param: null for DEFAULT; absent, jax.config's jaxDefaultMatmulPrecision. */
export function canonicalizePrecision(fn: string, precision: unknown): DotPrecision | null {
  if (precision === undefined || precision === null) return defaultMatmulPrecision();
  const one = (p: unknown): DotPrecision => {
    const name = typeof p === 'string' ? PRECISION_NAMES[p.toLowerCase()] : undefined;
    if (!name) throw new ValueError(`${fn}: precision must be a lax.Precision, one of ${Object.keys(PRECISION_NAMES).map((n) => `'${n}'`).join(', ')}, or a pair of them; got ${show(p)}`);
    return name;
  };
  const pair = globalThis.Array.isArray(precision);
  if (pair && precision.length !== 2) throw new ValueError(`${fn}: a precision pair must have two entries, got ${show(precision)}`);
  const chosen = pair ? PRECISION_ORDER[Math.max(...precision.map((p) => PRECISION_ORDER.indexOf(one(p))))]! : one(precision);
  return chosen === 'default' ? null : chosen;
}

export function dotGeneral(
  lhs: ArrayLike,
  rhs: ArrayLike,
  dimensionNumbers: DotDimensionNumbers,
  options: { precision?: unknown; preferredElementType?: DType | null } = {},
): Array {
  checkOptions('lax.dotGeneral', options, ['precision', 'preferredElementType']);
  const l = toArray('lax.dotGeneral', lhs, 'lhs');
  const r = toArray('lax.dotGeneral', rhs, 'rhs');
  const pet = options.preferredElementType ? checkUserDType('lax.dotGeneral', options.preferredElementType, 'preferredElementType') : null;
  const precision = canonicalizePrecision('lax.dotGeneral', options.precision);
  return bind1('dot_general', [l, r], { dimensionNumbers, preferredElementType: pet, ...(precision ? { precision } : {}) });
}

export function dot(lhs: ArrayLike, rhs: ArrayLike, options: { precision?: unknown; preferredElementType?: DType | null } = {}): Array {
  const l = toArray('lax.dot', lhs, 'lhs');
  const r = toArray('lax.dot', rhs, 'rhs');
  if (l.ndim < 1 || l.ndim > 2 || r.ndim < 1 || r.ndim > 2) throw new ValueError(`lax.dot: operands must have rank 1 or 2, got shapes ${show(l.shape)} and ${show(r.shape)}`);
  return dotGeneral(l, r, [[[l.ndim - 1], [0]], [[], []]], options);
}

/**
 * Identity whose derivative is zero, over a pytree. Traced floating leaves
 * bind stop_gradient (so jvp/grad see it); concrete leaves have no tangent
 * to stop and come back as they are, as do integer and bool leaves (JAX's rule).
 */
export function stopGradient<T>(x: T): T {
  return treeMap((leaf: unknown) => {
    if (leaf instanceof Array && leaf.isTracer && isFloating(leaf.dtype)) return bind1('stop_gradient', [leaf], {});
    return leaf;
  }, x as PyTree) as T;
}

/** Identity that keeps the compiler from moving work across it (meaningful under jit). */
export function optimizationBarrier<T>(x: T): T {
  return x;
}

export { bind };
export const isFloatingDtype = isFloating;
