// The primitive table's vocabulary: every primitive's name (JAX's jaxpr
// names), its parameters, and its abstract evaluation rule (output avals from
// input avals). Transform and lowering rules live in their own layers, each
// typed `{ [P in Primitive]: Rule<P> }` so a missing rule fails to compile.
import { type DType, isDType, isFloating, isInteger, itemsize } from './dtype.js';
import { ValueError, show } from './errors.js';
import type { MatmulPrecision } from './config.js';
import { type Shape, shapesEqual, sizeOf } from './shape.js';
import type { ClosedJaxpr } from '../trace/jaxpr.js';
import type { Array } from './array.js';
import { checkControlFlow } from './control-flow-avals.js';
import { withMemorySpaces } from './memory-space.js';
import { primitivesWith } from './traits.js';

/** Abstract value: what tracing knows of an array. */
export interface ShapedArray {
  readonly shape: Shape;
  readonly dtype: DType;
  readonly weakType: boolean;
  /** Where the value lives (JAX's aval.memory_space); absent means 'device'. */
  readonly memorySpace?: MemoryKind;
}

export const aval = (shape: Shape, dtype: DType, weakType = false): ShapedArray => ({ shape: [...shape], dtype, weakType });

/** An aval as a cache key: 'float32~[2,3]{pinned_host}' (`~` weak; no memory space means 'device'). */
export function avalKey(a: ShapedArray): string {
  return `${a.dtype}${a.weakType ? '~' : ''}[${a.shape.join(',')}]${a.memorySpace && a.memorySpace !== 'device' ? `{${a.memorySpace}}` : ''}`;
}

export type Empty = Record<string, never>;

export const UNARY_PRIMITIVES = [
  'neg', 'sign', 'floor', 'ceil', 'round', 'is_finite', 'exp', 'exp2', 'log', 'expm1', 'log1p', 'tanh', 'logistic',
  'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'sqrt', 'rsqrt', 'cbrt',
  'abs', 'not', 'erf', 'square', 'integer_pow', 'reduce_precision', 'copy', 'population_count', 'clz',
] as const;
export const BINARY_PRIMITIVES = [
  'add', 'sub', 'mul', 'div', 'rem', 'pow', 'max', 'min', 'atan2', 'and', 'or', 'xor', 'nextafter',
  'shift_left', 'shift_right_logical', 'shift_right_arithmetic',
] as const;
export const COMPARE_PRIMITIVES = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
export const REDUCE_PRIMITIVES = ['reduce_sum', 'reduce_prod', 'reduce_max', 'reduce_min', 'reduce_and', 'reduce_or'] as const;
export const CUMULATIVE_PRIMITIVES = ['cumsum', 'cumprod', 'cummax', 'cummin'] as const;

export type UnaryPrimitive = (typeof UNARY_PRIMITIVES)[number];
export type BinaryPrimitive = (typeof BINARY_PRIMITIVES)[number];
export type ComparePrimitive = (typeof COMPARE_PRIMITIVES)[number];
export type ReducePrimitive = (typeof REDUCE_PRIMITIVES)[number];
export type CumulativePrimitive = (typeof CUMULATIVE_PRIMITIVES)[number];

/** XLA GatherDimensionNumbers (index_vector_dim is the last axis of the indices, as in JAX). */
export interface GatherDimensionNumbers {
  offsetDims: number[];
  collapsedSliceDims: number[];
  startIndexMap: number[];
}

/** XLA ScatterDimensionNumbers (index_vector_dim last). */
export interface ScatterDimensionNumbers {
  updateWindowDims: number[];
  insertedWindowDims: number[];
  scatterDimsToOperandDims: number[];
}

/** 'clip' clamps start indices into range; 'fill' returns fillValue (gather) or drops updates (scatter) out of range. */
export type GatherMode = 'clip' | 'fill';

/** [[lhsContracting, rhsContracting], [lhsBatch, rhsBatch]], as lax.dot_general takes. */
export type DotDimensionNumbers = [[number[], number[]], [number[], number[]]];

/**
 * lax.Precision of a dot_general, as JAX's GPU backend reads it for float32 operands: 'default' and 'high' let
 * tensor cores round the operands to tf32 (10 mantissa bits), 'highest' keeps float32 accuracy. Other dtypes and
 * the CPU ignore it.
 */
export type DotPrecision = MatmulPrecision;

/** JAX's ConvDimensionNumbers: for lhs, rhs and out, the axes in canonical order (batch/out-feature, feature/in-feature, spatial...). */
export interface ConvDimensionNumbers {
  lhsSpec: number[];
  rhsSpec: number[];
  outSpec: number[];
}

export interface ConvParams {
  windowStrides: number[];
  padding: [number, number][];
  lhsDilation: number[];
  rhsDilation: number[];
  dimensionNumbers: ConvDimensionNumbers;
  featureGroupCount: number;
  batchGroupCount: number;
  preferredElementType: DType | null;
  precision?: DotPrecision | null;
}

/** XLA's dilated size of an axis: d elements with r - 1 holes between neighbours. */
export const dilateSize = (d: number, r: number): number => (d === 0 ? 0 : 1 + r * (d - 1));

/**
 * JAX's _conv_general_dilated_shape_rule in canonical order: lhs (N, C, in...), rhs (O, I, k...) to out
 * (N / batchGroupCount, O, out...). Checks what a rule-built (not user-built) equation could get wrong.
 */
export function convOutputShape(lhsShape: readonly number[], rhsShape: readonly number[], params: ConvParams): number[] {
  const prim = 'conv_general_dilated';
  const { windowStrides, padding, lhsDilation, rhsDilation, dimensionNumbers: dn, featureGroupCount: G, batchGroupCount: B } = params;
  const n = lhsShape.length;
  if (n < 2 || rhsShape.length !== n) fail(prim, `lhs and rhs must have the same rank >= 2, got shapes ${show(lhsShape)} and ${show(rhsShape)}`);
  const ns = n - 2;
  for (const [name, spec] of [['lhsSpec', dn.lhsSpec], ['rhsSpec', dn.rhsSpec], ['outSpec', dn.outSpec]] as const) {
    if (spec.length !== n || [...spec].sort((a, b) => a - b).some((v, i) => v !== i)) fail(prim, `dimensionNumbers.${name} ${show(spec)} is not a permutation of ${n} axes`);
  }
  for (const [name, v, min] of [['windowStrides', windowStrides, 1], ['lhsDilation', lhsDilation, 1], ['rhsDilation', rhsDilation, 1]] as const) {
    if (v.length !== ns || !v.every((x) => Number.isInteger(x) && x >= min)) fail(prim, `${name} must be ${ns} integers >= ${min}, got ${show(v)}`);
  }
  if (padding.length !== ns || !padding.every((p) => p.length === 2 && Number.isInteger(p[0]) && Number.isInteger(p[1]))) fail(prim, `padding must be ${ns} integer (lo, hi) pairs, got ${show(padding)}`);
  const l = dn.lhsSpec.map((a) => lhsShape[a]!);
  const r = dn.rhsSpec.map((a) => rhsShape[a]!);
  if (!Number.isInteger(G) || G < 1 || !Number.isInteger(B) || B < 1 || (G > 1 && B > 1)) fail(prim, `featureGroupCount ${G} and batchGroupCount ${B} must be positive integers, at most one > 1`);
  if (l[1]! !== r[1]! * G) fail(prim, `lhs feature dimension ${l[1]} must equal rhs input feature dimension ${r[1]} times featureGroupCount ${G}`);
  if (r[0]! % (G * B) !== 0) fail(prim, `rhs output feature dimension ${r[0]} must be a multiple of the group count ${G * B}`);
  if (l[0]! % B !== 0) fail(prim, `batchGroupCount ${B} must divide the lhs batch dimension ${l[0]}`);
  const outSp = l.slice(2).map((d, i) => {
    const padded = dilateSize(d, lhsDilation[i]!) + padding[i]![0] + padding[i]![1];
    if (padded < 0) fail(prim, `negative padding ${show(padding[i])} is larger than the dilated lhs spatial dimension ${d}`);
    const k = dilateSize(r[2 + i]!, rhsDilation[i]!);
    return padded < k ? 0 : Math.floor((padded - k) / windowStrides[i]!) + 1;
  });
  const canonical = [l[0]! / B, r[0]!, ...outSp];
  const out = new globalThis.Array<number>(n);
  dn.outSpec.forEach((axis, i) => (out[axis] = canonical[i]!));
  return out;
}

type UnaryParams = { [P in Exclude<UnaryPrimitive, 'round' | 'integer_pow' | 'reduce_precision'>]: Empty };

export interface PrimitiveParams extends UnaryParams {
  add: Empty; sub: Empty; mul: Empty; div: Empty; rem: Empty; pow: Empty; max: Empty; min: Empty; atan2: Empty;
  and: Empty; or: Empty; xor: Empty; nextafter: Empty;
  shift_left: Empty; shift_right_logical: Empty; shift_right_arithmetic: Empty;
  eq: Empty; ne: Empty; lt: Empty; le: Empty; gt: Empty; ge: Empty;
  round: { roundingMethod: 'away_from_zero' | 'to_nearest_even' };
  integer_pow: { y: number };
  reduce_precision: { exponentBits: number; mantissaBits: number };
  select_n: Empty;
  clamp: Empty;
  convert_element_type: { newDtype: DType; weakType: boolean };
  /** lax.bitcast_convert_type: the bits read as newDtype; a narrower one adds a trailing axis of the width ratio, a wider one removes it. */
  bitcast_convert_type: { newDtype: DType };
  iota: { dtype: DType; shape: number[]; dimension: number };
  broadcast_in_dim: { shape: number[]; broadcastDimensions: number[] };
  reshape: { newSizes: number[] };
  transpose: { permutation: number[] };
  squeeze: { dimensions: number[] };
  rev: { dimensions: number[] };
  slice: { startIndices: number[]; limitIndices: number[]; strides: number[] | null };
  pad: { paddingConfig: [number, number, number][] };
  concatenate: { dimension: number };
  dynamic_slice: { sliceSizes: number[] };
  dynamic_update_slice: Empty;
  gather: { dimensionNumbers: GatherDimensionNumbers; sliceSizes: number[]; mode: GatherMode; fillValue: number | null };
  scatter: { dimensionNumbers: ScatterDimensionNumbers; mode: GatherMode };
  scatter_add: { dimensionNumbers: ScatterDimensionNumbers; mode: GatherMode };
  scatter_mul: { dimensionNumbers: ScatterDimensionNumbers; mode: GatherMode };
  scatter_min: { dimensionNumbers: ScatterDimensionNumbers; mode: GatherMode };
  scatter_max: { dimensionNumbers: ScatterDimensionNumbers; mode: GatherMode };
  reduce_sum: { axes: number[] }; reduce_prod: { axes: number[] }; reduce_max: { axes: number[] };
  reduce_min: { axes: number[] }; reduce_and: { axes: number[] }; reduce_or: { axes: number[] };
  argmax: { axes: number[]; indexDtype: DType };
  argmin: { axes: number[]; indexDtype: DType };
  cumsum: { axis: number; reverse: boolean }; cumprod: { axis: number; reverse: boolean };
  cummax: { axis: number; reverse: boolean }; cummin: { axis: number; reverse: boolean };
  /**
   * lax.sort: operands of one shape sorted together along `dimension`, ordered lexicographically by the first
   * `numKeys` (JAX's comparator: floats with -0 == 0 and every NaN equal and last); always stable here.
   */
  sort: { dimension: number; isStable: boolean; numKeys: number };
  /** lax.top_k: the k largest along the last axis (XLA's TopK order: total order on the bits) and their int32 indices. */
  top_k: { k: number };
  /**
   * lax.linalg.qr: Householder QR of [..., m, n] (LAPACK geqrf's reflectors and signs): q [..., m, m] and r [..., m, n]
   * when fullMatrices, else q [..., m, k] and r [..., k, n] with k = min(m, n).
   */
  qr: { fullMatrices: boolean };
  /** lax.linalg.eigh: eigenvectors v [..., n, n] and eigenvalues w [..., n] of the symmetric matrix read from one triangle. */
  eigh: { lower: boolean; sortEigenvalues: boolean };
  /** lax.linalg.svd: s [..., k] descending, and with computeUv u [..., m, m or k] and vt [..., n or k, n]. */
  svd: { fullMatrices: boolean; computeUv: boolean };
  /** lax.linalg.cholesky's primitive: the lower factor of each [..., n, n] matrix from its lower triangle; NaNs where not positive definite. */
  cholesky: Empty;
  /**
   * lax.linalg.triangular_solve: op(a) x = b (leftSide) or x op(a) = b, a [..., k, k] triangular (only the `lower` or
   * upper triangle read), op transposes when transposeA; conjugateA is a no-op for real dtypes.
   */
  triangular_solve: { leftSide: boolean; lower: boolean; transposeA: boolean; conjugateA: boolean; unitDiagonal: boolean };
  /** lax.linalg.lu: LAPACK getrf's partial pivoting of [..., m, n]: lu, int32 pivots [..., min(m, n)] (0-based), permutation [..., m]. */
  lu: Empty;
  /**
   * lax.conv_general_dilated (JAX's params): dimensionNumbers give, for lhs, rhs and out, the axes in canonical order
   * (batch / out-feature, feature / in-feature, spatial...); padding is explicit (lo, hi) per spatial dim, negative
   * crops. Feature groups split the lhs features and out features group-major; batch groups split the lhs batch and
   * out features group-major (at most one of the two counts is > 1).
   */
  conv_general_dilated: ConvParams;
  /** precision: absent or null is 'default' */
  dot_general: { dimensionNumbers: DotDimensionNumbers; preferredElementType: DType | null; precision?: DotPrecision | null };
  /** Identity whose tangent is zero (lax.stopGradient). */
  stop_gradient: Empty;
  /**
   * lax.scan: operands [...consts, ...init, ...xs]; the body maps
   * [...consts, ...carry, ...x] to [...carry, ...y]; outputs [...carry, ...ys].
   * Control-flow jaxprs never have constvars: closed-over values are operands.
   */
  scan: { jaxpr: ClosedJaxpr; length: number; numCarry: number; numConsts: number; reverse: boolean; unroll: number };
  /** lax.while_loop: operands [...condConsts, ...bodyConsts, ...init]; outputs the final carry. */
  while: { bodyJaxpr: ClosedJaxpr; bodyNconsts: number; condJaxpr: ClosedJaxpr; condNconsts: number };
  /** lax.cond / lax.switch: operands [index (int32 scalar, in range), ...operands]; runs branches[index]. */
  cond: { branches: ClosedJaxpr[] };
  /**
   * jax.checkpoint (remat): evaluates `jaxpr` on the operands; under
   * differentiation the policy decides, per equation of the jaxpr, whether
   * its outputs are saved, recomputed in the backward pass or offloaded.
   * `differentiated` marks the backward-pass copies (JAX's param of the same name).
   */
  checkpoint: { jaxpr: ClosedJaxpr; preventCse: boolean; differentiated: boolean; policy: CheckpointPolicy | null };
  /** checkpoint_name: the identity, naming its operand for remat policies. */
  name: { name: string };
  /** A transfer between memory kinds (a copy on the CPU backend). */
  device_put: { srcKind: MemoryKind; dstKind: MemoryKind };
  /**
   * jax.custom_jvp (transforms/custom-derivatives.ts): evaluates `callJaxpr`
   * on the operands [...consts, ...args]; differentiated, `jvp` gives the
   * outputs and their tangents from the args and their tangents instead.
   */
  custom_jvp_call: CustomCallParams;
  /** jax.custom_vjp: as custom_jvp_call, where `jvp` runs the fwd rule and applies `custom_lin` (the bwd rule) to the tangents. */
  custom_vjp_call: CustomCallParams;
  /**
   * The tangent map of a custom_vjp function: operands [...residuals,
   * ...tangents], outputs of `outAvals`; it cannot be evaluated (forward mode
   * of a custom_vjp function is an error, as in JAX), only transposed, by `bwd`.
   */
  custom_lin: { numRes: number; bwd: CustomBwdFunction; outAvals: ShapedArray[]; symbolicZeros: boolean };
  /**
   * jax.debug.callback / jax.debug.print (transforms/callbacks.ts): the host
   * runs `callback` on the operands when the program runs; no outputs. An
   * effect: never eliminated or merged, and run in program order.
   */
  debug_callback: { callback: HostCallback; effect: DebugEffect };
  /** jax.pureCallback: the host computes the outputs (of `resultAvals`) from the operands; pure, so unused results are eliminated. */
  pure_callback: { callback: HostCallback; resultAvals: ShapedArray[]; vmapMethod: VmapMethod | null };
}

/** JAX's DebugEffect / OrderedDebugEffect, as jaxprs print them. */
export type DebugEffect = 'Debug' | 'OrderedDebug';

/** How jax.pureCallback batches under vmap (JAX's vmap_method). */
export type VmapMethod = 'sequential' | 'sequential_unrolled' | 'expand_dims' | 'broadcast_all' | 'legacy_vectorized';

/** One operand of a host callback: its bytes (its dtype's storage layout, row-major) and its abstract value. */
export interface HostArgument {
  bytes: Uint8Array;
  aval: ShapedArray;
}

/**
 * What the host runs for debug_callback and pure_callback (made by
 * transforms/callbacks.ts around the user's function): the operands' bytes
 * in, with the types the results must have (the equation's: vmap's
 * 'expand_dims' batches them); each result's bytes out (none for a debug
 * callback). Eager evaluation, both program runners and the reference
 * interpreter call it alike.
 */
export type HostCallback = (args: HostArgument[], results: readonly ShapedArray[]) => Uint8Array[];

/** JAX's error for evaluating custom_lin: forward-mode differentiation of a custom_vjp function. */
export const CUSTOM_VJP_JVP_ERROR = "can't apply forward-mode autodiff (jvp) to a custom_vjp function.";

/** A custom derivative rule as the custom-call primitives hold it: outputs and their tangents from the non-constant operands and their tangents. */
export type CustomJvpFunction = (primals: Array[], tangents: Array[]) => [Array[], Array[]];
/** custom_lin's backward rule: the cotangents of its tangent operands (null for zero) from the residuals and the output cotangents. */
export type CustomBwdFunction = (residuals: Array[], cotangents: Array[]) => (Array | null)[];
export interface CustomCallParams {
  name: string;
  callJaxpr: ClosedJaxpr;
  jvp: CustomJvpFunction;
  numConsts: number;
  symbolicZeros: boolean;
}

/** Where an array lives: device memory, or page-locked host memory the device can reach. */
export type MemoryKind = 'device' | 'pinned_host';
export const MEMORY_KINDS: readonly MemoryKind[] = ['device', 'pinned_host'];

/** What a remat policy decides for an equation's outputs (true: save, false: recompute). */
export type PolicyDecision = boolean | 'save' | 'recompute' | { offload: [MemoryKind, MemoryKind] };

/** A remat policy (jax.checkpoint_policies): called for each equation whose outputs the backward pass needs. */
export type CheckpointPolicy = (prim: Primitive, avals: ShapedArray[], params: Readonly<Record<string, unknown>>) => PolicyDecision;

export type Primitive = keyof PrimitiveParams;

export type AbstractEvalRule<P extends Primitive> = (avals: ShapedArray[], params: PrimitiveParams[P]) => ShapedArray[];

// ---- helpers ----

/** The float dtypes the linear-algebra kernels compute in (as LAPACK's real routines). */
function linalgOperand(prim: string, a: ShapedArray, what: string): void {
  if (a.dtype !== 'float32' && a.dtype !== 'float64') fail(prim, `${what} must be float32 or float64, got ${a.dtype}`);
  if (a.shape.length < 2) fail(prim, `${what} must have rank >= 2, got shape ${show(a.shape)}`);
}

const linalgShapeRules = {
  cholesky: (avals: ShapedArray[]): ShapedArray[] => {
    arity('cholesky', avals, 1);
    const x = avals[0]!;
    linalgOperand('cholesky', x, 'operand');
    const [n, m] = x.shape.slice(-2);
    if (n !== m) fail('cholesky', `the input to cholesky must be a square matrix, got shape ${show(x.shape)}`);
    return [aval(x.shape, x.dtype)];
  },
  triangular_solve: (avals: ShapedArray[], { leftSide }: PrimitiveParams['triangular_solve']): ShapedArray[] => {
    arity('triangular_solve', avals, 2);
    const [a, b] = avals as [ShapedArray, ShapedArray];
    linalgOperand('triangular_solve', a, 'a');
    linalgOperand('triangular_solve', b, 'b');
    if (a.dtype !== b.dtype) fail('triangular_solve', `a and b must have the same dtype, got ${a.dtype} and ${b.dtype}`);
    const [k, k2] = a.shape.slice(-2);
    if (k !== k2) fail('triangular_solve', `a must be square in its last two axes, got shape ${show(a.shape)}`);
    if (a.shape.length !== b.shape.length || !shapesEqual(a.shape.slice(0, -2), b.shape.slice(0, -2))) {
      fail('triangular_solve', `a and b must have equal batch dimensions, got shapes ${show(a.shape)} and ${show(b.shape)}`);
    }
    const common = leftSide ? b.shape[b.shape.length - 2] : b.shape[b.shape.length - 1];
    if (common !== k) {
      fail('triangular_solve', `a's size ${k} must equal b's ${leftSide ? 'second-to-last' : 'last'} axis (leftSide=${leftSide}), got shapes ${show(a.shape)} and ${show(b.shape)}`);
    }
    return [aval(b.shape, b.dtype)];
  },
  lu: (avals: ShapedArray[]): ShapedArray[] => {
    arity('lu', avals, 1);
    const x = avals[0]!;
    linalgOperand('lu', x, 'operand');
    const batch = x.shape.slice(0, -2);
    const [m, n] = x.shape.slice(-2) as [number, number];
    return [aval(x.shape, x.dtype), aval([...batch, Math.min(m, n)], 'int32'), aval([...batch, m], 'int32')];
  },
};

function fail(prim: string, message: string): never {
  throw new ValueError(`lax.${prim}: ${message}`);
}

function arity(prim: string, avals: ShapedArray[], n: number): void {
  if (avals.length !== n) fail(prim, `expected ${n} operands, got ${avals.length}`);
}

/** The one float32/float64 operand of rank >= 2 of qr / eigh / svd: its batch shape, m, n and aval. */
function orthogonalOperand(prim: string, avals: ShapedArray[]): [number[], number, number, ShapedArray] {
  arity(prim, avals, 1);
  const x = avals[0]!;
  if (x.shape.length < 2) fail(prim, `operand must have rank >= 2, got shape [${x.shape.join(', ')}]`);
  if (x.dtype !== 'float32' && x.dtype !== 'float64') fail(prim, `operand must be float32 or float64, got ${x.dtype}`);
  const r = x.shape.length;
  return [x.shape.slice(0, r - 2), x.shape[r - 2]!, x.shape[r - 1]!, x];
}

function sameShapes(prim: string, avals: ShapedArray[]): void {
  for (const a of avals) {
    if (!shapesEqual(a.shape, avals[0]!.shape)) {
      fail(prim, `operand shapes must be equal, got ${avals.map((x) => show(x.shape)).join(' and ')}`);
    }
  }
}

/** The jnp function that promotes where a lax binary op does not (JAX's tip names it). */
const JNP_PROMOTING: Record<string, string> = {
  add: 'add', sub: 'subtract', mul: 'multiply', div: 'divide', rem: 'remainder', pow: 'power', max: 'maximum', min: 'minimum',
  atan2: 'arctan2', and: 'bitwise_and', or: 'bitwise_or', xor: 'bitwise_xor', nextafter: 'nextafter', eq: 'equal',
  shift_left: 'left_shift', shift_right_logical: 'right_shift', shift_right_arithmetic: 'right_shift',
  ne: 'not_equal', lt: 'less', le: 'less_equal', gt: 'greater', ge: 'greater_equal', concatenate: 'concatenate',
};

/** JAX's check_same_dtypes: a TypeError naming the lax function, the dtypes and the jnp function that promotes. */
function sameDtypes(prim: string, avals: ShapedArray[]): void {
  if (avals.every((a) => a.dtype === avals[0]!.dtype)) return;
  const jnpName = JNP_PROMOTING[prim];
  const tip = jnpName ? ` (Tip: jnp.${jnpName} is a similar function that does automatic type promotion on inputs).` : '';
  throw new TypeError(`lax.${prim} requires arguments to have the same dtypes, got ${avals.map((x) => x.dtype).join(', ')}.${tip}`);
}

// dtype classes from the one table of traits (core/traits.ts)
const FLOAT_ONLY = primitivesWith('floatOnly');
const INT_OR_BOOL_ONLY = primitivesWith('intOrBoolOnly');
const INT_ONLY = primitivesWith('intOnly');

function checkDtypeClass(prim: string, dtype: DType): void {
  if (FLOAT_ONLY.has(prim) && !isFloating(dtype)) fail(prim, `requires a floating-point operand, got ${dtype}`);
  if (INT_OR_BOOL_ONLY.has(prim) && isFloating(dtype)) fail(prim, `requires an integer or boolean operand, got ${dtype}`);
  // JAX's dtype check on integer-only ops (shifts, population_count, clz) is a TypeError
  if (INT_ONLY.has(prim) && !isInteger(dtype)) {
    throw new TypeError(`lax.${prim} does not accept dtype ${dtype}. Accepted dtypes are subtypes of integer.`);
  }
  if ((prim === 'neg' || prim === 'sign' || prim === 'abs') && dtype === 'bool') fail(prim, `does not accept bool`);
  if ((prim === 'add' || prim === 'sub' || prim === 'mul' || prim === 'div' || prim === 'rem' || prim === 'pow') && dtype === 'bool') {
    fail(prim, `does not accept bool operands`);
  }
  if (prim === 'pow' && !isFloating(dtype)) fail(prim, `requires floating-point operands, got ${dtype}`);
}

function unary(prim: string): AbstractEvalRule<Primitive> {
  return (avals) => {
    arity(prim, avals, 1);
    const x = avals[0]!;
    checkDtypeClass(prim, x.dtype);
    const dtype = prim === 'is_finite' ? 'bool' : x.dtype;
    return [aval(x.shape, dtype, prim === 'is_finite' ? false : x.weakType)];
  };
}

/** Binary ops take equal shapes, or a rank-0 operand that broadcasts (JAX's scalar literals in jaxprs). */
function binary(prim: string, compare: boolean): AbstractEvalRule<Primitive> {
  return (avals) => {
    arity(prim, avals, 2);
    const [x, y] = avals as [ShapedArray, ShapedArray];
    // JAX's broadcasting_shape_rule: a TypeError, as for mixed dtypes
    if (x.shape.length !== 0 && y.shape.length !== 0 && !shapesEqual(x.shape, y.shape)) {
      throw new TypeError(`lax.${prim} got incompatible shapes for broadcasting: ${show(x.shape)}, ${show(y.shape)}.`);
    }
    sameDtypes(prim, avals);
    if (!compare) checkDtypeClass(prim, x.dtype);
    const weak = avals.every((a) => a.weakType);
    const shape = x.shape.length === 0 ? y.shape : x.shape;
    return [aval(shape, compare ? 'bool' : x.dtype, compare ? false : weak)];
  };
}

function checkAxes(prim: string, axes: number[], ndim: number): void {
  for (const a of axes) if (!Number.isInteger(a) || a < 0 || a >= ndim) fail(prim, `axis ${a} is out of range for rank ${ndim}`);
  if (new Set(axes).size !== axes.length) fail(prim, `repeated axes ${show(axes)}`);
}

function reduce(prim: string): AbstractEvalRule<Primitive> {
  return (avals, params) => {
    arity(prim, avals, 1);
    const x = avals[0]!;
    const { axes } = params as { axes: number[] };
    checkAxes(prim, axes, x.shape.length);
    if ((prim === 'reduce_and' || prim === 'reduce_or') && isFloating(x.dtype)) fail(prim, `requires bool or integer operand, got ${x.dtype}`);
    return [aval(x.shape.filter((_, i) => !axes.includes(i)), x.dtype, x.weakType)];
  };
}

function argReduce(prim: 'argmax' | 'argmin'): (avals: ShapedArray[], params: { axes: number[]; indexDtype: DType }) => ShapedArray[] {
  return (avals, { axes, indexDtype }) => {
    arity(prim, avals, 1);
    const x = avals[0]!;
    if (axes.length !== 1) fail(prim, `takes exactly one axis, got ${show(axes)}`);
    checkAxes(prim, axes, x.shape.length);
    if (x.shape[axes[0]!] === 0) fail(prim, `cannot reduce an empty axis ${axes[0]} of shape ${show(x.shape)}`);
    if (!isInteger(indexDtype)) fail(prim, `indexDtype must be an integer dtype, got ${indexDtype}`);
    return [aval(x.shape.filter((_, i) => i !== axes[0]), indexDtype)];
  };
}

function cumulative(prim: string): (avals: ShapedArray[], params: { axis: number }) => ShapedArray[] {
  return (avals, { axis }) => {
    arity(prim, avals, 1);
    const x = avals[0]!;
    checkAxes(prim, [axis], x.shape.length);
    if (x.dtype === 'bool' && prim !== 'cummax' && prim !== 'cummin') fail(prim, `does not accept bool`);
    return [aval(x.shape, x.dtype, x.weakType)];
  };
}

function checkIndexOperands(prim: string, avals: ShapedArray[]): void {
  for (const a of avals) {
    if (a.shape.length !== 0 || !isInteger(a.dtype)) fail(prim, `indices must be integer scalars, got ${a.dtype}${show(a.shape)}`);
  }
}

function gatherShape(
  operand: ShapedArray,
  indices: ShapedArray,
  dn: GatherDimensionNumbers,
  sliceSizes: number[],
): number[] {
  const prim = 'gather';
  if (!isInteger(indices.dtype)) fail(prim, `indices must be integers, got ${indices.dtype}`);
  if (indices.shape.length < 1) fail(prim, `indices must have rank >= 1 (the last axis is the index vector)`);
  const vector = indices.shape[indices.shape.length - 1]!;
  if (vector !== dn.startIndexMap.length) fail(prim, `index vector length ${vector} != startIndexMap length ${dn.startIndexMap.length}`);
  if (sliceSizes.length !== operand.shape.length) fail(prim, `sliceSizes ${show(sliceSizes)} must have one entry per operand axis ${show(operand.shape)}`);
  sliceSizes.forEach((s, i) => {
    if (s < 0 || s > operand.shape[i]!) fail(prim, `sliceSizes ${show(sliceSizes)} exceed operand shape ${show(operand.shape)}`);
  });
  checkAxes(prim, dn.collapsedSliceDims, operand.shape.length);
  checkAxes(prim, dn.startIndexMap, operand.shape.length);
  for (const d of dn.collapsedSliceDims) if (sliceSizes[d] !== 1) fail(prim, `collapsed dimension ${d} must have slice size 1`);
  const offsetSizes = sliceSizes.filter((_, i) => !dn.collapsedSliceDims.includes(i));
  if (offsetSizes.length !== dn.offsetDims.length) fail(prim, `offsetDims ${show(dn.offsetDims)} must have ${offsetSizes.length} entries`);
  const batchShape = indices.shape.slice(0, -1);
  const rank = batchShape.length + offsetSizes.length;
  checkAxes(prim, dn.offsetDims, rank);
  const out: number[] = [];
  let b = 0;
  let o = 0;
  for (let i = 0; i < rank; i++) out.push(dn.offsetDims.includes(i) ? offsetSizes[o++]! : batchShape[b++]!);
  return out;
}

function scatterCheck(prim: string, avals: ShapedArray[], dn: ScatterDimensionNumbers): ShapedArray[] {
  arity(prim, avals, 3);
  const [operand, indices, updates] = avals as [ShapedArray, ShapedArray, ShapedArray];
  if (!isInteger(indices.dtype)) fail(prim, `indices must be integers, got ${indices.dtype}`);
  if (operand.dtype !== updates.dtype) fail(prim, `operand dtype ${operand.dtype} != updates dtype ${updates.dtype}`);
  if (indices.shape.length < 1) fail(prim, `indices must have rank >= 1`);
  const vector = indices.shape[indices.shape.length - 1]!;
  if (vector !== dn.scatterDimsToOperandDims.length) fail(prim, `index vector length ${vector} != scatterDimsToOperandDims length`);
  checkAxes(prim, dn.insertedWindowDims, operand.shape.length);
  checkAxes(prim, dn.scatterDimsToOperandDims, operand.shape.length);
  const windowRank = operand.shape.length - dn.insertedWindowDims.length;
  if (dn.updateWindowDims.length !== windowRank) fail(prim, `updateWindowDims ${show(dn.updateWindowDims)} must have ${windowRank} entries`);
  const batchRank = indices.shape.length - 1;
  if (updates.shape.length !== batchRank + windowRank) fail(prim, `updates rank ${updates.shape.length} != ${batchRank + windowRank}`);
  const windowOperandDims = operand.shape.map((_, i) => i).filter((i) => !dn.insertedWindowDims.includes(i));
  let b = 0;
  updates.shape.forEach((size, i) => {
    const w = dn.updateWindowDims.indexOf(i);
    if (w >= 0) {
      if (size > operand.shape[windowOperandDims[w]!]!) fail(prim, `update window ${show(updates.shape)} exceeds operand ${show(operand.shape)}`);
    } else if (size !== indices.shape[b++]) {
      fail(prim, `updates shape ${show(updates.shape)} does not match indices batch shape ${show(indices.shape.slice(0, -1))}`);
    }
  });
  return [aval(operand.shape, operand.dtype, operand.weakType)];
}

function dotShape(lhs: ShapedArray, rhs: ShapedArray, dn: DotDimensionNumbers): number[] {
  const prim = 'dot_general';
  const [[lc, rc], [lb, rb]] = dn;
  if (lc.length !== rc.length) fail(prim, `contracting dimensions ${show(lc)} and ${show(rc)} differ in length`);
  if (lb.length !== rb.length) fail(prim, `batch dimensions ${show(lb)} and ${show(rb)} differ in length`);
  checkAxes(prim, [...lc, ...lb], lhs.shape.length);
  checkAxes(prim, [...rc, ...rb], rhs.shape.length);
  lc.forEach((d, i) => {
    if (lhs.shape[d] !== rhs.shape[rc[i]!]) {
      fail(prim, `contracting dimension sizes differ: lhs ${show(lhs.shape)} axis ${d} vs rhs ${show(rhs.shape)} axis ${rc[i]}`);
    }
  });
  lb.forEach((d, i) => {
    if (lhs.shape[d] !== rhs.shape[rb[i]!]) fail(prim, `batch dimension sizes differ: lhs ${show(lhs.shape)} vs rhs ${show(rhs.shape)}`);
  });
  const free = (shape: Shape, c: number[], b: number[]) => shape.filter((_, i) => !c.includes(i) && !b.includes(i));
  return [...lb.map((d) => lhs.shape[d]!), ...free(lhs.shape, lc, lb), ...free(rhs.shape, rc, rb)];
}

function customCallAvals(prim: string, avals: ShapedArray[], { callJaxpr, numConsts }: CustomCallParams): ShapedArray[] {
  const expected = callJaxpr.inAvals;
  if (callJaxpr.consts.length) fail(prim, `the jaxpr must have no constvars (closed-over values are operands)`);
  if (avals.length !== expected.length || numConsts > avals.length) fail(prim, `expected ${expected.length} operands, got ${avals.length}`);
  avals.forEach((a, i) => {
    const e = expected[i]!;
    if (a.dtype !== e.dtype || !shapesEqual(a.shape, e.shape)) {
      fail(prim, `operand ${i} has type ${a.dtype}${show(a.shape)} but the jaxpr expects ${e.dtype}${show(e.shape)}`);
    }
  });
  return callJaxpr.outAvals.map((o) => aval(o.shape, o.dtype, o.weakType));
}

// ---- the table ----

type AbstractEvalTable = { [P in Primitive]: AbstractEvalRule<P> };

const unaryRules = Object.fromEntries(UNARY_PRIMITIVES.map((p) => [p, unary(p)])) as { [P in UnaryPrimitive]: AbstractEvalRule<P> };

const shapeAndDtypeRules: AbstractEvalTable = {
  ...unaryRules,
  integer_pow: (avals, { y }) => {
    arity('integer_pow', avals, 1);
    if (!Number.isInteger(y)) fail('integer_pow', `exponent must be an integer, got ${y}`);
    if (y < 0 && !isFloating(avals[0]!.dtype)) fail('integer_pow', `negative exponent ${y} needs a floating-point operand`);
    return unary('integer_pow')(avals, {} as never);
  },
  add: binary('add', false), sub: binary('sub', false), mul: binary('mul', false), div: binary('div', false),
  rem: binary('rem', false), pow: binary('pow', false), max: binary('max', false), min: binary('min', false),
  atan2: binary('atan2', false), and: binary('and', false), or: binary('or', false), xor: binary('xor', false),
  shift_left: binary('shift_left', false), shift_right_logical: binary('shift_right_logical', false),
  shift_right_arithmetic: binary('shift_right_arithmetic', false),
  nextafter: binary('nextafter', false),
  eq: binary('eq', true), ne: binary('ne', true), lt: binary('lt', true), le: binary('le', true),
  gt: binary('gt', true), ge: binary('ge', true),
  select_n: (avals) => {
    if (avals.length < 2) fail('select_n', `needs a predicate and at least one case`);
    const [pred, ...cases] = avals as [ShapedArray, ...ShapedArray[]];
    sameShapes('select_n', cases);
    sameDtypes('select_n', cases);
    if (pred.dtype !== 'bool' && pred.dtype !== 'int32') fail('select_n', `predicate must be bool or int32, got ${pred.dtype}`);
    if (pred.dtype === 'bool' && cases.length > 2) fail('select_n', `a bool predicate selects between at most 2 cases`);
    if (pred.shape.length !== 0 && !shapesEqual(pred.shape, cases[0]!.shape)) {
      fail('select_n', `predicate shape ${show(pred.shape)} must be scalar or equal to case shape ${show(cases[0]!.shape)}`);
    }
    return [aval(cases[0]!.shape, cases[0]!.dtype, cases.every((c) => c.weakType))];
  },
  clamp: (avals) => {
    arity('clamp', avals, 3);
    const [lo, x, hi] = avals as [ShapedArray, ShapedArray, ShapedArray];
    for (const b of [lo, hi]) {
      if (b.dtype !== x.dtype) fail('clamp', `bound dtype ${b.dtype} != operand dtype ${x.dtype}`);
      if (b.shape.length !== 0 && !shapesEqual(b.shape, x.shape)) fail('clamp', `bound shape ${show(b.shape)} must be scalar or ${show(x.shape)}`);
    }
    return [aval(x.shape, x.dtype, x.weakType)];
  },
  reduce_precision: (avals, { exponentBits, mantissaBits }) => {
    if (!Number.isInteger(exponentBits) || exponentBits < 1 || !Number.isInteger(mantissaBits) || mantissaBits < 0) {
      fail('reduce_precision', `exponentBits must be an integer >= 1 and mantissaBits an integer >= 0, got ${exponentBits} and ${mantissaBits}`);
    }
    return unary('reduce_precision')(avals, {} as never);
  },
  convert_element_type: (avals, { newDtype, weakType }) => {
    arity('convert_element_type', avals, 1);
    if (!isDType(newDtype)) fail('convert_element_type', `unknown dtype ${show(newDtype)}`);
    return [aval(avals[0]!.shape, newDtype, weakType)];
  },
  bitcast_convert_type: (avals, { newDtype }) => {
    arity('bitcast_convert_type', avals, 1);
    const x = avals[0]!;
    if (!isDType(newDtype)) fail('bitcast_convert_type', `unknown dtype ${show(newDtype)}`);
    if ((x.dtype === 'bool' || newDtype === 'bool') && x.dtype !== newDtype) {
      throw new TypeError(`lax.bitcast_convert_type does not support bool values unless the operand and destination types match. Got operand dtype=${x.dtype}, new_dtype=${newDtype}.`);
    }
    const [inBytes, outBytes] = [itemsize(x.dtype), itemsize(newDtype)];
    // JAX's shape rule: a narrower dtype adds a trailing axis of the width ratio, a wider one removes it
    if (inBytes === outBytes) return [aval(x.shape, newDtype)];
    if (inBytes > outBytes) return [aval([...x.shape, inBytes / outBytes], newDtype)];
    if (x.shape[x.shape.length - 1] !== outBytes / inBytes) {
      fail('bitcast_convert_type', `converting ${x.dtype} to ${newDtype} needs a last axis of size ${outBytes / inBytes}, got shape ${show(x.shape)}`);
    }
    return [aval(x.shape.slice(0, -1), newDtype)];
  },
  iota: (avals, { dtype, shape, dimension }) => {
    arity('iota', avals, 0);
    if (dimension < 0 || dimension >= shape.length) fail('iota', `dimension ${dimension} out of range for shape ${show(shape)}`);
    if (dtype === 'bool') fail('iota', `dtype bool is not allowed`);
    return [aval(shape, dtype)];
  },
  broadcast_in_dim: (avals, { shape, broadcastDimensions }) => {
    arity('broadcast_in_dim', avals, 1);
    const x = avals[0]!;
    if (broadcastDimensions.length !== x.shape.length) {
      fail('broadcast_in_dim', `broadcastDimensions ${show(broadcastDimensions)} must have one entry per operand axis ${show(x.shape)}`);
    }
    broadcastDimensions.forEach((d, i) => {
      if (d < 0 || d >= shape.length || (i > 0 && d <= broadcastDimensions[i - 1]!)) {
        fail('broadcast_in_dim', `broadcastDimensions ${show(broadcastDimensions)} must be strictly increasing axes of ${show(shape)}`);
      }
      if (x.shape[i] !== 1 && x.shape[i] !== shape[d]) {
        fail('broadcast_in_dim', `operand shape ${show(x.shape)} cannot be broadcast to ${show(shape)}`);
      }
    });
    return [aval(shape, x.dtype, x.weakType)];
  },
  reshape: (avals, { newSizes }) => {
    arity('reshape', avals, 1);
    const x = avals[0]!;
    if (sizeOf(newSizes) !== sizeOf(x.shape)) fail('reshape', `cannot reshape ${show(x.shape)} into ${show(newSizes)}`);
    return [aval(newSizes, x.dtype, x.weakType)];
  },
  transpose: (avals, { permutation }) => {
    arity('transpose', avals, 1);
    const x = avals[0]!;
    if (permutation.length !== x.shape.length || new Set(permutation).size !== permutation.length ||
        permutation.some((p) => p < 0 || p >= x.shape.length)) {
      fail('transpose', `permutation ${show(permutation)} is not a permutation of ${x.shape.length} axes`);
    }
    return [aval(permutation.map((p) => x.shape[p]!), x.dtype, x.weakType)];
  },
  squeeze: (avals, { dimensions }) => {
    arity('squeeze', avals, 1);
    const x = avals[0]!;
    checkAxes('squeeze', dimensions, x.shape.length);
    for (const d of dimensions) if (x.shape[d] !== 1) fail('squeeze', `cannot squeeze axis ${d} of size ${x.shape[d]} in shape ${show(x.shape)}`);
    return [aval(x.shape.filter((_, i) => !dimensions.includes(i)), x.dtype, x.weakType)];
  },
  rev: (avals, { dimensions }) => {
    arity('rev', avals, 1);
    checkAxes('rev', dimensions, avals[0]!.shape.length);
    return [aval(avals[0]!.shape, avals[0]!.dtype, avals[0]!.weakType)];
  },
  slice: (avals, { startIndices, limitIndices, strides }) => {
    arity('slice', avals, 1);
    const x = avals[0]!;
    const n = x.shape.length;
    if (startIndices.length !== n || limitIndices.length !== n || (strides && strides.length !== n)) {
      fail('slice', `start ${show(startIndices)}, limit ${show(limitIndices)} and strides must have one entry per axis of ${show(x.shape)}`);
    }
    const shape = x.shape.map((d, i) => {
      const s = startIndices[i]!;
      const l = limitIndices[i]!;
      const st = strides ? strides[i]! : 1;
      if (s < 0 || l > d || s > l || st < 1) fail('slice', `invalid slice [${s}:${l}:${st}] of axis ${i} with size ${d}`);
      return Math.ceil((l - s) / st);
    });
    return [aval(shape, x.dtype, x.weakType)];
  },
  pad: (avals, { paddingConfig }) => {
    arity('pad', avals, 2);
    const [x, v] = avals as [ShapedArray, ShapedArray];
    if (v.shape.length !== 0 || v.dtype !== x.dtype) fail('pad', `padding value must be a ${x.dtype} scalar, got ${v.dtype}${show(v.shape)}`);
    if (paddingConfig.length !== x.shape.length) fail('pad', `paddingConfig needs one entry per axis of ${show(x.shape)}`);
    const shape = x.shape.map((d, i) => {
      const [lo, hi, interior] = paddingConfig[i]!;
      if (interior < 0) fail('pad', `interior padding must be >= 0, got ${interior}`);
      const size = lo + hi + d + Math.max(0, d - 1) * interior;
      if (size < 0) fail('pad', `negative padding ${show(paddingConfig[i])} removes more than axis ${i} of size ${d}`);
      return size;
    });
    return [aval(shape, x.dtype, x.weakType)];
  },
  concatenate: (avals, { dimension }) => {
    if (avals.length < 1) fail('concatenate', `needs at least one operand`);
    const first = avals[0]!;
    checkAxes('concatenate', [dimension], first.shape.length);
    sameDtypes('concatenate', avals);
    let total = 0;
    for (const a of avals) {
      if (a.shape.length !== first.shape.length || a.shape.some((d, i) => i !== dimension && d !== first.shape[i])) {
        fail('concatenate', `shapes ${avals.map((x) => show(x.shape)).join(', ')} differ outside axis ${dimension}`);
      }
      total += a.shape[dimension]!;
    }
    const shape = [...first.shape];
    shape[dimension] = total;
    return [aval(shape, first.dtype, avals.every((a) => a.weakType))];
  },
  dynamic_slice: (avals, { sliceSizes }) => {
    const [x, ...idx] = avals as [ShapedArray, ...ShapedArray[]];
    if (idx.length !== x.shape.length) fail('dynamic_slice', `needs ${x.shape.length} start indices, got ${idx.length}`);
    checkIndexOperands('dynamic_slice', idx);
    if (sliceSizes.length !== x.shape.length || sliceSizes.some((s, i) => s < 0 || s > x.shape[i]!)) {
      fail('dynamic_slice', `slice sizes ${show(sliceSizes)} do not fit operand shape ${show(x.shape)}`);
    }
    return [aval(sliceSizes, x.dtype, x.weakType)];
  },
  dynamic_update_slice: (avals) => {
    const [x, u, ...idx] = avals as [ShapedArray, ShapedArray, ...ShapedArray[]];
    if (idx.length !== x.shape.length) fail('dynamic_update_slice', `needs ${x.shape.length} start indices, got ${idx.length}`);
    checkIndexOperands('dynamic_update_slice', idx);
    if (u.dtype !== x.dtype) fail('dynamic_update_slice', `update dtype ${u.dtype} != operand dtype ${x.dtype}`);
    if (u.shape.length !== x.shape.length || u.shape.some((s, i) => s > x.shape[i]!)) {
      fail('dynamic_update_slice', `update shape ${show(u.shape)} does not fit operand shape ${show(x.shape)}`);
    }
    return [aval(x.shape, x.dtype, x.weakType)];
  },
  gather: (avals, { dimensionNumbers, sliceSizes }) => {
    arity('gather', avals, 2);
    const [x, idx] = avals as [ShapedArray, ShapedArray];
    return [aval(gatherShape(x, idx, dimensionNumbers, sliceSizes), x.dtype, x.weakType)];
  },
  scatter: (avals, { dimensionNumbers }) => scatterCheck('scatter', avals, dimensionNumbers),
  scatter_add: (avals, { dimensionNumbers }) => scatterCheck('scatter_add', avals, dimensionNumbers),
  scatter_mul: (avals, { dimensionNumbers }) => scatterCheck('scatter_mul', avals, dimensionNumbers),
  scatter_min: (avals, { dimensionNumbers }) => scatterCheck('scatter_min', avals, dimensionNumbers),
  scatter_max: (avals, { dimensionNumbers }) => scatterCheck('scatter_max', avals, dimensionNumbers),
  reduce_sum: reduce('reduce_sum'), reduce_prod: reduce('reduce_prod'), reduce_max: reduce('reduce_max'),
  reduce_min: reduce('reduce_min'), reduce_and: reduce('reduce_and'), reduce_or: reduce('reduce_or'),
  argmax: argReduce('argmax'),
  argmin: argReduce('argmin'),
  cumsum: cumulative('cumsum'), cumprod: cumulative('cumprod'), cummax: cumulative('cummax'), cummin: cumulative('cummin'),
  sort: (avals, { dimension, numKeys }) => {
    if (avals.length < 1) fail('sort', `needs at least one operand`);
    sameShapes('sort', avals);
    const shape = avals[0]!.shape;
    if (shape.length === 0) fail('sort', `operands must have rank >= 1, got shape []`);
    checkAxes('sort', [dimension], shape.length);
    if (!Number.isInteger(numKeys) || numKeys < 1 || numKeys > avals.length) {
      fail('sort', `numKeys must be an integer from 1 to the number of operands (${avals.length}), got ${numKeys}`);
    }
    if (shape[dimension]! > 2 ** 31 - 1) fail('sort', `cannot sort ${shape[dimension]} elements along one axis (at most 2^31 - 1)`);
    return avals.map((a) => aval(a.shape, a.dtype, a.weakType));
  },
  top_k: (avals, { k }) => {
    arity('top_k', avals, 1);
    const x = avals[0]!;
    if (x.shape.length === 0) fail('top_k', `operand must have rank >= 1, got shape []`);
    const n = x.shape[x.shape.length - 1]!;
    if (!Number.isInteger(k) || k < 0 || k > n) fail('top_k', `k must be an integer from 0 to the last axis' size ${n}, got ${k}`);
    const shape = [...x.shape.slice(0, -1), k];
    return [aval(shape, x.dtype, x.weakType), aval(shape, 'int32')];
  },
  qr: (avals, { fullMatrices }) => {
    const [batch, m, n, x] = orthogonalOperand('qr', avals);
    const k = fullMatrices ? m : Math.min(m, n);
    return [aval([...batch, m, k], x.dtype), aval([...batch, k, n], x.dtype)];
  },
  eigh: (avals) => {
    const [batch, m, n, x] = orthogonalOperand('eigh', avals);
    if (m !== n) fail('eigh', `operand must be a batch of square matrices, got shape [${x.shape.join(', ')}]`);
    return [aval([...batch, n, n], x.dtype), aval([...batch, n], x.dtype)];
  },
  svd: (avals, { fullMatrices, computeUv }) => {
    const [batch, m, n, x] = orthogonalOperand('svd', avals);
    const k = Math.min(m, n);
    const s = aval([...batch, k], x.dtype);
    if (!computeUv) return [s];
    return [s, aval([...batch, m, fullMatrices ? m : k], x.dtype), aval([...batch, fullMatrices ? n : k, n], x.dtype)];
  },
  ...linalgShapeRules,
  conv_general_dilated: (avals, params) => {
    arity('conv_general_dilated', avals, 2);
    const [l, r] = avals as [ShapedArray, ShapedArray];
    if (l.dtype !== r.dtype) fail('conv_general_dilated', `operand dtypes differ: ${l.dtype} and ${r.dtype}`);
    return [aval(convOutputShape(l.shape, r.shape, params), params.preferredElementType ?? l.dtype, l.weakType && r.weakType)];
  },
  dot_general: (avals, { dimensionNumbers, preferredElementType }) => {
    arity('dot_general', avals, 2);
    const [l, r] = avals as [ShapedArray, ShapedArray];
    if (l.dtype !== r.dtype) fail('dot_general', `operand dtypes differ: ${l.dtype} and ${r.dtype}`);
    const shape = dotShape(l, r, dimensionNumbers);
    return [aval(shape, preferredElementType ?? l.dtype, l.weakType && r.weakType)];
  },
  stop_gradient: (avals) => {
    arity('stop_gradient', avals, 1);
    return [aval(avals[0]!.shape, avals[0]!.dtype, avals[0]!.weakType)];
  },
  scan: (avals, params) => checkControlFlow.scan(avals, params),
  while: (avals, params) => checkControlFlow.while(avals, params),
  cond: (avals, params) => checkControlFlow.cond(avals, params),
  checkpoint: (avals, { jaxpr }) => {
    const expected = jaxpr.inAvals;
    if (jaxpr.consts.length) fail('checkpoint', `the jaxpr must have no constvars (closed-over values are operands)`);
    if (avals.length !== expected.length) fail('checkpoint', `expected ${expected.length} operands, got ${avals.length}`);
    avals.forEach((a, i) => {
      const e = expected[i]!;
      if (a.dtype !== e.dtype || !shapesEqual(a.shape, e.shape)) {
        fail('checkpoint', `operand ${i} has type ${a.dtype}${show(a.shape)} but the jaxpr expects ${e.dtype}${show(e.shape)}`);
      }
    });
    return jaxpr.outAvals.map((o) => aval(o.shape, o.dtype, o.weakType));
  },
  custom_jvp_call: (avals, params) => customCallAvals('custom_jvp_call', avals, params),
  custom_vjp_call: (avals, params) => customCallAvals('custom_vjp_call', avals, params),
  custom_lin: (avals, { numRes, outAvals }) => {
    if (avals.length < numRes) fail('custom_lin', `expected at least ${numRes} residual operands, got ${avals.length}`);
    return outAvals.map((o) => aval(o.shape, o.dtype, o.weakType));
  },
  debug_callback: (_avals, { callback }) => {
    if (typeof callback !== 'function') fail('debug_callback', `the callback must be a function, got ${show(callback)}`);
    return [];
  },
  pure_callback: (_avals, { callback, resultAvals }) => {
    if (typeof callback !== 'function') fail('pure_callback', `the callback must be a function, got ${show(callback)}`);
    return resultAvals.map((o) => {
      if (!isDType(o.dtype) || !o.shape.every((d) => Number.isInteger(d) && d >= 0)) fail('pure_callback', `invalid result type ${show(o.dtype)}${show(o.shape)}`);
      return aval(o.shape, o.dtype);
    });
  },
  name: (avals, { name }) => {
    arity('name', avals, 1);
    if (typeof name !== 'string') fail('name', `the name must be a string, got ${show(name)}`);
    return [aval(avals[0]!.shape, avals[0]!.dtype, avals[0]!.weakType)];
  },
  device_put: (avals, { srcKind, dstKind }) => {
    arity('device_put', avals, 1);
    for (const k of [srcKind, dstKind]) {
      if (!MEMORY_KINDS.includes(k)) fail('device_put', `unknown memory kind ${show(k)} (memory kinds: ${MEMORY_KINDS.join(', ')})`);
    }
    return [aval(avals[0]!.shape, avals[0]!.dtype, avals[0]!.weakType)];
  },
};

/** Every primitive's abstract evaluation: shapes and dtypes above, memory spaces by memory-space.ts. */
export const abstractEval: AbstractEvalTable = withMemorySpaces(shapeAndDtypeRules);
