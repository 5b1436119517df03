// Lowers one primitive application (eager mode) to a plan: the kernels to
// launch, their buffers and their run-time parameters. Shape information
// lives in the parameters, so the kernels themselves are shape-generic and
// cached by their IR alone. Layout-only primitives (reshape, squeeze) alias
// their input and launch nothing.
import { type DType, isFloating, isUnsigned, integerRange, itemsize } from '../core/dtype.js';
import {
  type Primitive, type PrimitiveParams, type ShapedArray, CUSTOM_VJP_JVP_ERROR,
} from '../core/primitives.js';
import { type Shape, sizeOf, stridesOf } from '../core/shape.js';
import type { Access, Expr, Kernel, OrthogonalKernel, ReduceOp, ScatterKernel } from './kernel-ir.js';
import { cumulativePartialDtype } from './kernel-ir.js';
import { lowerCholesky, lowerLu, lowerTriangularSolve } from './lower-linalg.js';
import { lowerJacobiMultiblock } from './lower-jacobi.js';
import { lowerQr } from './lower-qr.js';
import { CONV_GEMM_MIN_TAPS } from './render/conv.js';
import { cpuEigMinimum, svdLargeRot } from './render/linalg-tridiagonal.js';
import { type ElementwisePrimitive, ELEMENTWISE_PRIMITIVES, isElementwisePrimitive, scalarExpr } from './scalar-expr.js';

export type BufferRef = { kind: 'input' | 'output' | 'temp'; index: number };

/**
 * The platform a plan is for. Most primitives lower alike on both (one kernel IR, two renderers); the few whose best
 * algorithm differs in its launches read it: cholesky, lu and triangular_solve of large matrices (lower-linalg.ts:
 * on CUDA a blocked sequence of launches that spreads each update over the GPU, on the CPU one launch), eigh and svd
 * (the CPU's large matrices take render/linalg-tridiagonal.ts's kernels: OrthogonalKernel.large), sort and
 * top_k (the CPU sorts each line whole in one stage, a GPU merges runs in passes) and conv_general_dilated (the CPU's
 * large-window GEMM wants the kernel operand canonical).
 */
export type LowerTarget = 'cpu' | 'cuda';

export interface Launch {
  kernel: Kernel;
  buffers: BufferRef[];
  params: number[];
}

export interface Plan {
  launches: Launch[];
  temps: { dtype: DType; size: number }[];
  /** output index → input index whose buffer it shares (layout-only primitives) */
  aliases: Map<number, number>;
}

const input = (index: number): BufferRef => ({ kind: 'input', index });
const output = (index: number): BufferRef => ({ kind: 'output', index });

function single(kernel: Kernel, buffers: BufferRef[], params: number[]): Plan {
  return { launches: [{ kernel, buffers, params }], temps: [], aliases: new Map() };
}

/**
 * Merges adjacent axes that are contiguous with each other in every view,
 * so most strided accesses become rank 1 or 2.
 */
export function collapseAxes(shape: Shape, views: number[][]): { shape: number[]; views: number[][] } {
  const outShape: number[] = [];
  const outViews: number[][] = views.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    const size = shape[d]!;
    if (size === 1) continue; // a size-1 axis never moves the offset
    const last = outShape.length - 1;
    if (last >= 0 && views.every((v, k) => outViews[k]![last] === v[d]! * size)) {
      outShape[last] = outShape[last]! * size;
      views.forEach((v, k) => (outViews[k]![last] = v[d]!));
      continue;
    }
    outShape.push(size);
    views.forEach((v, k) => outViews[k]!.push(v[d]!));
  }
  return { shape: outShape, views: outViews };
}

/** One strided input copied into a contiguous output of `outShape`. */
function stridedCopy(dtype: DType, outShape: Shape, offset: number, strides: number[]): Plan {
  const contiguous = stridesOf(outShape);
  const { shape, views } = collapseAxes(outShape, [strides, contiguous]);
  const n = sizeOf(outShape);
  const view = views[0]!;
  if (offset === 0 && shape.length <= 1 && (shape.length === 0 || view[0] === 1)) {
    return elementwiseLaunch([{ dtype, access: 'contiguous' }], [{ dtype, expr: { op: 'input', index: 0, dtype } }], n, [], []);
  }
  return elementwiseLaunch(
    [{ dtype, access: 'strided' }],
    [{ dtype, expr: { op: 'input', index: 0, dtype } }],
    n,
    shape,
    [[offset, ...view]],
  );
}

/** A contiguous copy of n elements (its buffers: the destination, then the source). */
export function copyKernel(dtype: DType, n: number): { kernel: Kernel; params: number[] } {
  const launch = elementwiseLaunch([{ dtype, access: 'contiguous' }], [{ dtype, expr: { op: 'input', index: 0, dtype } }], n, [], []).launches[0]!;
  return { kernel: launch.kernel, params: launch.params };
}

/** n zeros (its one buffer: the destination). */
export function zerosKernel(dtype: DType, n: number): { kernel: Kernel; params: number[] } {
  const launch = elementwiseLaunch([], [{ dtype, expr: { op: 'literal', value: 0, dtype } }], n, [], []).launches[0]!;
  return { kernel: launch.kernel, params: launch.params };
}

function elementwiseLaunch(
  inputs: { dtype: DType; access: Access }[],
  outputs: { dtype: DType; expr: Expr }[],
  n: number,
  shape: number[],
  stridedViews: number[][],
): Plan {
  const rank = stridedViews.length ? shape.length : 1;
  const dims = stridedViews.length ? shape : [n];
  const params = [n, rank, ...dims, ...stridedViews.flat()];
  const buffers = [...outputs.map((_, j) => output(j)), ...inputs.map((_, i) => input(i))];
  return single({ kind: 'elementwise', inputs, outputs }, buffers, params);
}

function elementwisePrimitive(prim: Primitive, ins: ShapedArray[], out: ShapedArray, params: unknown): Plan {
  const n = sizeOf(out.shape);
  const inputs = ins.map((a) => ({
    dtype: a.dtype,
    access: (a.shape.length === 0 && out.shape.length > 0 ? 'scalar' : 'contiguous') as Access,
  }));
  if (!isElementwisePrimitive(prim)) throw new Error(`lower: ${prim} is not elementwise`);
  const args = ins.map((a, i): Expr => ({ op: 'input', index: i, dtype: a.dtype }));
  const expr = scalarExpr(prim, args, params as never, out.dtype);
  return elementwiseLaunch(inputs, [{ dtype: out.dtype, expr }], n, [], []);
}

function reduceLaunch(op: ReduceOp, x: ShapedArray, out: ShapedArray, axes: number[]): Plan {
  const strides = stridesOf(x.shape);
  const outerAxes = x.shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const innerAxes = [...axes].sort((a, b) => a - b);
  const outer = collapseAxes(outerAxes.map((a) => x.shape[a]!), [outerAxes.map((a) => strides[a]!)]);
  const inner = collapseAxes(innerAxes.map((a) => x.shape[a]!), [innerAxes.map((a) => strides[a]!)]);
  const nInner = sizeOf(innerAxes.map((a) => x.shape[a]!));
  // an empty inner space is one axis of size 0: the kernel's multi-axis walk would divide by the zero size
  const innerShape = nInner === 0 ? [0] : inner.shape.length ? inner.shape : [1];
  const innerStrides = nInner === 0 || !inner.shape.length ? [0] : inner.views[0]!;
  const params = [
    sizeOf(out.shape), nInner,
    outer.shape.length, ...outer.shape, ...(outer.views[0] ?? []),
    innerShape.length, ...innerShape, ...innerStrides,
  ];
  return single({ kind: 'reduce', op, inputDtype: x.dtype, outputDtype: out.dtype }, [output(0), input(0)], params);
}

/** The fill value JAX uses for out-of-bounds gathers in 'fill' mode. */
export function defaultFillValue(dtype: DType): number {
  if (isFloating(dtype)) return NaN;
  if (dtype === 'bool') return 1;
  const [lo, hi] = integerRange(dtype);
  return isUnsigned(dtype) ? hi : lo;
}

type LowerRule<Params> = (ins: ShapedArray[], outs: ShapedArray[], params: Params, target: LowerTarget) => Plan;

const elementwiseRule = (prim: Primitive): LowerRule<unknown> => (ins, outs, params) => elementwisePrimitive(prim, ins, outs[0]!, params);
const reduceRule = (op: ReduceOp): LowerRule<{ axes: number[] }> => (ins, outs, { axes }) => reduceLaunch(op, ins[0]!, outs[0]!, axes);
/** Lines at least this long, when there are fewer than CHUNKED_SCAN_MAX_LINES of them, scan in chunks (three launches). */
export const CHUNKED_SCAN_MIN_LENGTH = 2048;
const CHUNKED_SCAN_MAX_LINES = 4096;

const cumulativeRule = (op: 'sum' | 'prod' | 'max' | 'min'): LowerRule<{ axis: number; reverse: boolean }> => (ins, _outs, { axis, reverse }) => {
  const shape = ins[0]!.shape;
  const dtype = ins[0]!.dtype;
  const pre = sizeOf(shape.slice(0, axis));
  const n = shape[axis]!;
  const post = sizeOf(shape.slice(axis + 1));
  if (n < CHUNKED_SCAN_MIN_LENGTH || pre * post >= CHUNKED_SCAN_MAX_LINES || dtype === 'bool') {
    return single({ kind: 'cumulative', op, dtype }, [output(0), input(0)], [pre, n, post, reverse ? 1 : 0]);
  }
  // one thread per line would leave the GPU idle: about sqrt(n) chunks of about sqrt(n) elements, so the chunk
  // passes and the carry pass each walk about sqrt(n) elements per thread
  const chunk = 2 ** Math.ceil(Math.log2(Math.sqrt(n)));
  const nchunks = Math.ceil(n / chunk);
  const params = [pre, n, post, reverse ? 1 : 0, chunk, nchunks];
  const partial: BufferRef = { kind: 'temp', index: 0 };
  const kernel = (stage: 'chunk_reduce' | 'carry_scan' | 'chunk_scan') => ({ kind: 'cumulative' as const, op, dtype, stage });
  return {
    launches: [
      { kernel: kernel('chunk_reduce'), buffers: [partial, input(0)], params },
      { kernel: kernel('carry_scan'), buffers: [partial], params },
      { kernel: kernel('chunk_scan'), buffers: [output(0), partial, input(0)], params },
    ],
    temps: [{ dtype: cumulativePartialDtype(dtype), size: pre * nchunks * post }],
    aliases: new Map(),
  };
};
const alias: LowerRule<unknown> = () => ({ launches: [], temps: [], aliases: new Map([[0, 0]]) });

/** Control flow is a program, not a kernel: it runs through its registered implementation (runtime/eager.ts `registerImpl`). */
const opaqueCall = (prim: string): LowerRule<unknown> => () => {
  throw new Error(`lower: ${prim} is control flow or a host callback, not one kernel; the eager interpreter runs it through its registered impl and the compiler must treat it as an opaque call (hasImpl)`);
};

const elementwiseRules = Object.fromEntries(ELEMENTWISE_PRIMITIVES.map((p) => [p, elementwiseRule(p)])) as {
  [P in ElementwisePrimitive]: LowerRule<unknown>;
};

/**
 * bitcast_convert_type: elementwise between dtypes of one width; a width change reads each output element's parts
 * through strided views of the operand (to a narrower dtype: the element again for each of `ratio` lanes, the lane
 * an iota; to a wider one: `ratio` views stepping by `ratio`).
 */
const bitcastRule: LowerRule<PrimitiveParams['bitcast_convert_type']> = (ins, outs, params) => {
  const [x, out] = [ins[0]!, outs[0]!];
  const [from, to] = [x.dtype, out.dtype];
  const [inBytes, outBytes] = [itemsize(from), itemsize(to)];
  if (inBytes === outBytes) return elementwisePrimitive('bitcast_convert_type', ins, out, params);
  const n = sizeOf(out.shape);
  const part = (index: number): Expr => ({ op: 'input', index, dtype: from });
  if (inBytes > outBytes) {
    const ratio = inBytes / outBytes;
    const lane: Expr = { op: 'iota', axis: 1, dtype: 'int32' };
    return elementwiseLaunch([{ dtype: from, access: 'strided' }], [{ dtype: to, expr: { op: 'bitcast', parts: [part(0)], lane, dtype: to } }], n, [n / ratio, ratio], [[0, 1, 0]]);
  }
  const ratio = outBytes / inBytes;
  const parts = globalThis.Array.from({ length: ratio }, (_, k) => part(k));
  const plan = elementwiseLaunch(parts.map(() => ({ dtype: from, access: 'strided' as const })), [{ dtype: to, expr: { op: 'bitcast', parts, dtype: to } }], n, [n], parts.map((_, k) => [k, ratio]));
  // every view reads the one operand
  plan.launches[0]!.buffers = [output(0), ...parts.map(() => input(0))];
  return plan;
};

export const lowerRules: { [P in Primitive]: LowerRule<PrimitiveParams[P]> } = {
  ...elementwiseRules,
  bitcast_convert_type: bitcastRule,
  iota: (_ins, outs, { dimension }) => {
    const out = outs[0]!;
    const expr: Expr = { op: 'iota', axis: dimension, dtype: out.dtype };
    const plan = elementwiseLaunch([], [{ dtype: out.dtype, expr }], sizeOf(out.shape), [...out.shape], []);
    // iota needs coordinates over the full output shape
    plan.launches[0]!.params = [sizeOf(out.shape), out.shape.length, ...out.shape];
    return plan;
  },
  broadcast_in_dim: (ins, outs, { shape, broadcastDimensions }) => {
    const x = ins[0]!;
    const inStrides = stridesOf(x.shape);
    const strides = shape.map(() => 0);
    broadcastDimensions.forEach((d, i) => (strides[d] = x.shape[i] === 1 ? 0 : inStrides[i]!));
    if (sizeOf(x.shape) === 1 && sizeOf(shape) > 1) {
      return elementwiseLaunch([{ dtype: x.dtype, access: 'scalar' }], [{ dtype: x.dtype, expr: { op: 'input', index: 0, dtype: x.dtype } }], sizeOf(shape), [], []);
    }
    return stridedCopy(outs[0]!.dtype, shape, 0, strides);
  },
  reshape: alias,
  squeeze: alias,
  stop_gradient: alias,
  scan: opaqueCall('scan'),
  while: opaqueCall('while'),
  cond: opaqueCall('cond'),
  copy: elementwiseRule('copy'),
  // remat: checkpoint is inlined before compilation (inline-checkpoints.ts) and runs eagerly through its impl
  checkpoint: () => {
    throw new Error('lower: checkpoint holds a jaxpr, not one kernel; eagerly it runs through its registered impl, and the compiler inlines it (inline-checkpoints.ts)');
  },
  // custom derivatives: the call is inlined like a checkpoint; custom_lin (the tangent map of a custom_vjp function) cannot run
  custom_jvp_call: () => {
    throw new Error('lower: custom_jvp_call holds a jaxpr, not one kernel; eagerly it runs through its registered impl, and the compiler inlines it (inline-checkpoints.ts)');
  },
  custom_vjp_call: () => {
    throw new Error('lower: custom_vjp_call holds a jaxpr, not one kernel; eagerly it runs through its registered impl, and the compiler inlines it (inline-checkpoints.ts)');
  },
  custom_lin: () => {
    throw new TypeError(CUSTOM_VJP_JVP_ERROR);
  },
  // host callbacks run on the host (their registered impl eagerly; a call step of the program runner under jit)
  debug_callback: opaqueCall('debug_callback'),
  pure_callback: opaqueCall('pure_callback'),
  name: alias,
  // a transfer between memory kinds: a copy on the CPU backend
  device_put: (ins, outs, _params, target) => elementwiseRule('copy')(ins, outs, {}, target),
  transpose: (ins, outs, { permutation }) => {
    const strides = stridesOf(ins[0]!.shape);
    return stridedCopy(ins[0]!.dtype, outs[0]!.shape, 0, permutation.map((p) => strides[p]!));
  },
  rev: (ins, outs, { dimensions }) => {
    const x = ins[0]!;
    const strides = stridesOf(x.shape);
    let offset = 0;
    const view = strides.map((s, d) => {
      if (!dimensions.includes(d)) return s;
      offset += (x.shape[d]! - 1) * s;
      return -s;
    });
    return stridedCopy(x.dtype, outs[0]!.shape, offset, view);
  },
  slice: (ins, outs, { startIndices, strides: steps }) => {
    const x = ins[0]!;
    const strides = stridesOf(x.shape);
    const offset = startIndices.reduce((o, s, d) => o + s * strides[d]!, 0);
    return stridedCopy(x.dtype, outs[0]!.shape, offset, strides.map((s, d) => s * (steps ? steps[d]! : 1)));
  },
  pad: (ins, outs, { paddingConfig }) => {
    const x = ins[0]!;
    const rank = x.shape.length;
    const params = [rank, ...outs[0]!.shape, ...x.shape, ...paddingConfig.map((p) => p[0]), ...paddingConfig.map((p) => p[2])];
    if (rank === 0) return stridedCopy(x.dtype, [], 0, []);
    return single({ kind: 'pad', dtype: x.dtype }, [output(0), input(0), input(1)], params);
  },
  concatenate: (ins, outs, { dimension }) => {
    const out = outs[0]!;
    return single(
      { kind: 'concatenate', dtype: out.dtype, count: ins.length },
      [output(0), ...ins.map((_, i) => input(i))],
      [sizeOf(out.shape.slice(0, dimension)), out.shape[dimension]!, sizeOf(out.shape.slice(dimension + 1)), ...ins.map((a) => a.shape[dimension]!)],
    );
  },
  dynamic_slice: (ins, _outs, { sliceSizes }) => {
    const x = ins[0]!;
    return single(
      { kind: 'dynamic_slice', dtype: x.dtype, indexDtypes: ins.slice(1).map((a) => a.dtype) },
      ins.map((_, i) => input(i)).reduce<BufferRef[]>((acc, b) => [...acc, b], [output(0)]),
      [x.shape.length, ...x.shape, ...sliceSizes],
    );
  },
  dynamic_update_slice: (ins) => {
    const [x, u] = ins as [ShapedArray, ShapedArray];
    return single(
      { kind: 'dynamic_update_slice', dtype: x.dtype, indexDtypes: ins.slice(2).map((a) => a.dtype) },
      [output(0), ...ins.map((_, i) => input(i))],
      [x.shape.length, ...x.shape, ...u.shape],
    );
  },
  gather: (ins, outs, { dimensionNumbers: dn, sliceSizes, mode, fillValue }) => {
    const [x, idx] = ins as [ShapedArray, ShapedArray];
    const out = outs[0]!;
    const offsetOperandAxes = x.shape.map((_, i) => i).filter((i) => !dn.collapsedSliceDims.includes(i));
    const outToOperand: number[] = [];
    const outToBatch: number[] = [];
    let b = 0;
    out.shape.forEach((_, d) => {
      const o = dn.offsetDims.indexOf(d);
      outToOperand.push(o >= 0 ? offsetOperandAxes[o]! : -1);
      outToBatch.push(o >= 0 ? -1 : b++);
    });
    const batchRank = idx.shape.length - 1;
    const params = [
      x.shape.length, out.shape.length, batchRank, dn.startIndexMap.length,
      ...x.shape, ...sliceSizes, ...out.shape, ...outToOperand, ...outToBatch, ...dn.startIndexMap,
    ];
    const fill = fillValue ?? defaultFillValue(x.dtype);
    return single(
      { kind: 'gather', dtype: x.dtype, indexDtype: idx.dtype, mode, fillValue: mode === 'fill' ? fill : 0 },
      [output(0), input(0), input(1)],
      params,
    );
  },
  scatter: (ins, outs, params) => scatterLaunch('replace', ins, outs, params),
  scatter_add: (ins, outs, params) => scatterLaunch('add', ins, outs, params),
  scatter_mul: (ins, outs, params) => scatterLaunch('mul', ins, outs, params),
  scatter_min: (ins, outs, params) => scatterLaunch('min', ins, outs, params),
  scatter_max: (ins, outs, params) => scatterLaunch('max', ins, outs, params),
  reduce_sum: reduceRule('sum'), reduce_prod: reduceRule('prod'), reduce_max: reduceRule('max'),
  reduce_min: reduceRule('min'), reduce_and: reduceRule('and'), reduce_or: reduceRule('or'),
  argmax: (ins, outs, { axes }) => reduceLaunch('argmax', ins[0]!, outs[0]!, axes),
  argmin: (ins, outs, { axes }) => reduceLaunch('argmin', ins[0]!, outs[0]!, axes),
  cumsum: cumulativeRule('sum'), cumprod: cumulativeRule('prod'), cummax: cumulativeRule('max'), cummin: cumulativeRule('min'),
  sort: (ins, _outs, { dimension, numKeys }, target) => lowerSort(ins, dimension, numKeys, target),
  top_k: (ins, _outs, { k }, target) => lowerTopK(ins[0]!, k, target),
  qr: (ins, _outs, { fullMatrices }, target) => lowerQr(ins[0]!, fullMatrices, target),
  eigh: (ins, _outs, { lower, sortEigenvalues }, target) => lowerLinalg('eigh', ins[0]!, { lower, sort: sortEigenvalues }, target),
  svd: (ins, _outs, { fullMatrices, computeUv }, target) => lowerLinalg('svd', ins[0]!, { fullMatrices, computeUv }, target),
  cholesky: (ins, _outs, _params, target) => lowerCholesky(ins[0]!, target),
  triangular_solve: (ins, _outs, params, target) => lowerTriangularSolve(ins[0]!, ins[1]!, params, target),
  lu: (ins, _outs, _params, target) => lowerLu(ins[0]!, target),
  conv_general_dilated: (ins, outs, params, target) => lowerConv(ins[0]!, ins[1]!, outs[0]!, params, target),
  dot_general: (ins, outs, { dimensionNumbers, precision }) => lowerDot(ins[0]!, ins[1]!, outs[0]!, dimensionNumbers, precision === 'highest'),
};

function scatterLaunch(
  combine: ScatterKernel['combine'],
  ins: ShapedArray[],
  _outs: ShapedArray[],
  { dimensionNumbers: dn, mode }: PrimitiveParams['scatter'],
): Plan {
  const [x, idx, up] = ins as [ShapedArray, ShapedArray, ShapedArray];
  const windowOperandAxes = x.shape.map((_, i) => i).filter((i) => !dn.insertedWindowDims.includes(i));
  const upToOperand: number[] = [];
  const upToBatch: number[] = [];
  let b = 0;
  up.shape.forEach((_, d) => {
    const w = dn.updateWindowDims.indexOf(d);
    upToOperand.push(w >= 0 ? windowOperandAxes[w]! : -1);
    upToBatch.push(w >= 0 ? -1 : b++);
  });
  const window = x.shape.map(() => 1);
  up.shape.forEach((size, d) => {
    if (upToOperand[d]! >= 0) window[upToOperand[d]!] = size;
  });
  const params = [
    x.shape.length, up.shape.length, dn.scatterDimsToOperandDims.length, sizeOf(x.shape), sizeOf(up.shape),
    ...x.shape, ...up.shape, ...upToOperand, ...upToBatch, ...dn.scatterDimsToOperandDims, ...window,
  ];
  return single({ kind: 'scatter', combine, dtype: x.dtype, indexDtype: idx.dtype, mode }, [output(0), input(0), input(1), input(2)], params);
}

/** Rows up to this long sort in one launch, each element counting the others; longer rows sort runs of it, then merge. */
export const SORT_RUN = 32;

/**
 * lax.sort as stages of kernel-ir.ts's SortKernel: short rows in one launch; long ones as runs of SORT_RUN sorted into
 * an int32 order (a temporary), log2(n / SORT_RUN) merge passes between two order temporaries, then every operand
 * gathered along the final order. On the CPU one 'order' stage sorts each line whole (a radix sort; the second
 * temporary is its scratch for the runs it merges when it gets no memory): the merge passes would only copy.
 */
function lowerSort(ins: ShapedArray[], dimension: number, numKeys: number, target: LowerTarget): Plan {
  const shape = ins[0]!.shape;
  const pre = sizeOf(shape.slice(0, dimension));
  const n = shape[dimension]!;
  const post = sizeOf(shape.slice(dimension + 1));
  const dtypes = ins.map((a) => a.dtype);
  const keys = ins.slice(0, numKeys).map((_, i) => input(i));
  const plan: Plan = { launches: [], temps: [], aliases: new Map() };
  if (pre * n * post === 0) return plan;
  const outputs = ins.map((_, i) => output(i));
  if (n <= SORT_RUN) {
    plan.launches.push({ kernel: { kind: 'sort', stage: 'sort_rows', dtypes, numKeys }, buffers: [...outputs, ...ins.map((_, i) => input(i))], params: [pre, n, post, n] });
    return plan;
  }
  const keyDtypes = dtypes.slice(0, numKeys);
  const temp = (index: number): BufferRef => ({ kind: 'temp', index });
  plan.temps.push({ dtype: 'int32', size: pre * n * post }, { dtype: 'int32', size: pre * n * post });
  let current = 0;
  if (target === 'cpu') {
    plan.launches.push({ kernel: { kind: 'sort', stage: 'order', dtypes: keyDtypes, numKeys }, buffers: [temp(0), temp(1), ...keys], params: [pre, n, post, SORT_RUN] });
  } else {
    plan.launches.push({ kernel: { kind: 'sort', stage: 'rank', dtypes: keyDtypes, numKeys }, buffers: [temp(0), ...keys], params: [pre, n, post, SORT_RUN] });
    for (let width = SORT_RUN; width < n; width *= 2) {
      plan.launches.push({ kernel: { kind: 'sort', stage: 'merge', dtypes: keyDtypes, numKeys }, buffers: [temp(1 - current), temp(current), ...keys], params: [pre, n, post, width] });
      current = 1 - current;
    }
  }
  plan.launches.push({ kernel: { kind: 'sort', stage: 'permute', dtypes, numKeys }, buffers: [...outputs, temp(current), ...ins.map((_, i) => input(i))], params: [pre, n, post] });
  return plan;
}

/** lax.top_k: the row sorted into an order with XLA's TopK comparator (as lowerSort's stages), then its first k taken. */
function lowerTopK(x: ShapedArray, k: number, target: LowerTarget): Plan {
  const n = x.shape[x.shape.length - 1]!;
  const pre = sizeOf(x.shape) / Math.max(n, 1);
  const plan: Plan = { launches: [], temps: [], aliases: new Map() };
  if (pre * n * k === 0) return plan;
  const kernel = (stage: 'rank' | 'merge' | 'top_k' | 'order') => ({ kind: 'sort' as const, stage, dtypes: [x.dtype], numKeys: 1, order: 'top_k' as const });
  const temp = (index: number): BufferRef => ({ kind: 'temp', index });
  plan.temps.push({ dtype: 'int32', size: pre * n });
  if (n > SORT_RUN) plan.temps.push({ dtype: 'int32', size: pre * n });
  let current = 0;
  if (target === 'cpu' && n > SORT_RUN) {
    // the CPU's one 'order' stage sorts each row whole (lowerSort)
    plan.launches.push({ kernel: kernel('order'), buffers: [temp(0), temp(1), input(0)], params: [pre, n, 1, SORT_RUN] });
  } else {
    plan.launches.push({ kernel: kernel('rank'), buffers: [temp(0), input(0)], params: [pre, n, 1, Math.min(n, SORT_RUN)] });
    for (let width = SORT_RUN; width < n; width *= 2) {
      plan.launches.push({ kernel: kernel('merge'), buffers: [temp(1 - current), temp(current), input(0)], params: [pre, n, 1, width] });
      current = 1 - current;
    }
  }
  plan.launches.push({ kernel: kernel('top_k'), buffers: [output(0), output(1), temp(current), input(0)], params: [pre, n, k] });
  return plan;
}

/**
 * lax.linalg.eigh / svd: one launch of kernel-ir.ts's OrthogonalKernel over the batch, its working storage in temps
 * (one slice per matrix; render/linalg-eig.ts says what each holds); qr: lower-qr.ts.
 */
function lowerLinalg(op: 'eigh' | 'svd', x: ShapedArray, flags: { fullMatrices?: boolean; computeUv?: boolean; lower?: boolean; sort?: boolean }, target: LowerTarget): Plan {
  const r = x.shape.length;
  const m = x.shape[r - 2]!;
  const n = x.shape[r - 1]!;
  const batch = sizeOf(x.shape.slice(0, r - 2));
  const kernel: Kernel = {
    kind: 'orthogonal', op, dtype: x.dtype, fullMatrices: flags.fullMatrices ?? false, computeUv: flags.computeUv ?? true,
    lower: flags.lower ?? true, sort: flags.sort ?? true,
    // the CPU's large eigh / svd: reductions and QL / QR iteration (render/linalg-tridiagonal.ts), not Jacobi
    ...(target === 'cpu' && Math.min(m, n) >= cpuEigMinimum() ? { large: true } : {}),
  };
  const plan: Plan = { launches: [], temps: [], aliases: new Map() };
  if (batch === 0) return plan;
  const big = Math.max(m, n);
  const small = Math.min(m, n);
  // eigh's work and svd's rotations carry the Jacobi rounds' scratch after the matrix (render/linalg-jacobi.ts)
  const pairs = (k: number) => Math.floor((k + 1) / 2);
  const eighWork = n * n + 6 * pairs(n) + n;
  const svdRot = kernel.large ? svdLargeRot(big, small) : small * small + 5 * pairs(small) + small;
  const temps = op === 'eigh' ? [eighWork] : kernel.computeUv ? [big * small, svdRot, big * (kernel.large && !kernel.fullMatrices ? small : big)] : [big * small, svdRot];
  // large matrices on CUDA: the same rounds over many blocks (render/linalg-jacobi-cuda.ts)
  const multiblock = target === 'cuda' ? lowerJacobiMultiblock(kernel as OrthogonalKernel, batch, m, n, temps) : null;
  if (multiblock) return multiblock;
  const temp = (index: number): BufferRef => ({ kind: 'temp', index });
  // a temp of 0 elements still gets a buffer: the kernel's pointer arithmetic on it is never dereferenced
  for (const size of temps) plan.temps.push({ dtype: x.dtype, size: Math.max(1, batch * size) });
  const outs = op === 'svd' && !kernel.computeUv ? [output(0)] : op === 'svd' ? [output(0), output(1), output(2)] : [output(0), output(1)];
  plan.launches.push({ kernel, buffers: [...outs, ...temps.map((_, i) => temp(i)), input(0)], params: [batch, m, n] });
  return plan;
}

/** Strides of `axes` of a row-major array, merged into one axis if they are contiguous with each other; null if not. */
function mergedStride(shape: Shape, axes: number[]): number | null {
  const strides = stridesOf(shape);
  const live = axes.filter((a) => shape[a] !== 1);
  if (live.length === 0) return 0;
  for (let i = 0; i + 1 < live.length; i++) {
    if (strides[live[i]!] !== strides[live[i + 1]!]! * shape[live[i + 1]!]!) return null;
  }
  return strides[live[live.length - 1]!]!;
}

function lowerDot(l: ShapedArray, r: ShapedArray, out: ShapedArray, dn: PrimitiveParams['dot_general']['dimensionNumbers'], highest: boolean): Plan {
  const [[lc, rc], [lb, rb]] = dn;
  const lFree = l.shape.map((_, i) => i).filter((i) => !lc.includes(i) && !lb.includes(i));
  const rFree = r.shape.map((_, i) => i).filter((i) => !rc.includes(i) && !rb.includes(i));
  const size = (shape: Shape, axes: number[]) => sizeOf(axes.map((a) => shape[a]!));
  const B = size(l.shape, lb);
  const M = size(l.shape, lFree);
  const N = size(r.shape, rFree);
  const K = size(l.shape, lc);
  const plan: Plan = { launches: [], temps: [], aliases: new Map() };
  // Each operand must be a strided 3-d view [batch, free, contract]; if its axes cannot merge, transpose it into a temporary first.
  const view = (a: ShapedArray, batch: number[], free: number[], contract: number[], operand: number, rhs: boolean): { ref: BufferRef; strides: number[] } => {
    const sb = mergedStride(a.shape, batch);
    const sf = mergedStride(a.shape, free);
    const sc = mergedStride(a.shape, contract);
    if (sb !== null && sf !== null && sc !== null) {
      return { ref: input(operand), strides: rhs ? [sb, sc, sf] : [sb, sf, sc] };
    }
    const order = [...batch, ...free, ...contract];
    const strides = stridesOf(a.shape);
    const shape = order.map((d) => a.shape[d]!);
    const copy = stridedCopy(a.dtype, shape, 0, order.map((d) => strides[d]!)).launches[0]!;
    const temp = plan.temps.length;
    plan.temps.push({ dtype: a.dtype, size: sizeOf(a.shape) });
    copy.buffers = copy.buffers.map((b) => (b.kind === 'output' ? { kind: 'temp', index: temp } : input(operand)));
    plan.launches.push(copy);
    const f = size(a.shape, free);
    const c = size(a.shape, contract);
    return { ref: { kind: 'temp', index: temp }, strides: rhs ? [f * c, 1, c] : [f * c, c, 1] };
  };
  const lv = view(l, lb, lFree, lc, 0, false);
  const rv = view(r, rb, rFree, rc, 1, true);
  plan.launches.push({
    kernel: { kind: 'dot', inputDtype: l.dtype, outputDtype: out.dtype, ...(highest && l.dtype === 'float32' ? { precision: 'highest' as const } : {}) },
    buffers: [output(0), lv.ref, rv.ref],
    params: [B, M, N, K, ...lv.strides, ...rv.strides],
  });
  return plan;
}

/** conv_general_dilated as one conv kernel over the operands' contiguous layouts, read in canonical axis order (kernel-ir.ts ConvKernel). */
function lowerConv(l: ShapedArray, r: ShapedArray, out: ShapedArray, params: PrimitiveParams['conv_general_dilated'], target: LowerTarget): Plan {
  const { windowStrides, padding, lhsDilation, rhsDilation, dimensionNumbers: dn, featureGroupCount: G, batchGroupCount: B } = params;
  const canon = (shape: readonly number[], spec: number[]) => spec.map((a) => shape[a]!);
  const plan: Plan = { launches: [], temps: [], aliases: new Map() };
  const ns = l.shape.length - 2;
  // The kernels vectorize over output features, reading input features with unit stride: an operand in another
  // layout (NCHW, OIHW, and the transposed layouts of the derivatives) is first copied channels-last, lhs
  // (N, spatial..., C) and rhs (spatial..., I, O); NHWC / HWIO operands are read where they are.
  const channelsLast = (a: ShapedArray, order: number[], operand: number): { ref: BufferRef; strides: number[] } => {
    const strides = stridesOf(a.shape);
    const copy = stridedCopy(a.dtype, order.map((d) => a.shape[d]!), 0, order.map((d) => strides[d]!)).launches[0]!;
    const temp = plan.temps.length;
    plan.temps.push({ dtype: a.dtype, size: sizeOf(a.shape) });
    copy.buffers = copy.buffers.map((b) => (b.kind === 'output' ? { kind: 'temp', index: temp } : input(operand)));
    plan.launches.push(copy);
    return { ref: { kind: 'temp', index: temp }, strides: stridesOf(order.map((d) => a.shape[d]!)) };
  };
  let ls = canon(stridesOf(l.shape), dn.lhsSpec);
  let rs = canon(stridesOf(r.shape), dn.rhsSpec);
  const os = canon(stridesOf(out.shape), dn.outSpec);
  const [, C, ...inSp] = canon(l.shape, dn.lhsSpec) as [number, number, ...number[]];
  const [O, I, ...kSp] = canon(r.shape, dn.rhsSpec) as [number, number, ...number[]];
  const [nOut, , ...outSp] = canon(out.shape, dn.outSpec) as [number, number, ...number[]];
  const groups = G * B;
  let lhsRef = input(0);
  let rhsRef = input(1);
  const empty = sizeOf(out.shape) === 0;
  if (!empty && ls[1] !== 1 && I > 1 && C > 1) {
    const v = channelsLast(l, [dn.lhsSpec[0]!, ...dn.lhsSpec.slice(2), dn.lhsSpec[1]!], 0);
    lhsRef = v.ref;
    ls = [v.strides[0]!, v.strides[ns + 1]!, ...v.strides.slice(1, ns + 1)];
  }
  // on the CPU a large window (the kernel gradient) runs as a GEMM per output pixel (render/conv.ts gemmPerPixel),
  // which needs the kernel's taps along the last spatial dim I features apart: the kernel operand is copied canonical
  const taps = kSp.reduce((a, b) => a * b, 1);
  const canonicalRhs = stridesOf([...kSp, I, O]);
  const gemmWants = target === 'cpu' && taps >= CONV_GEMM_MIN_TAPS && l.dtype === 'float32' && out.dtype === 'float32' && !(rs[0] === canonicalRhs[ns + 1] && rs[1] === canonicalRhs[ns] && kSp.every((_, d) => rs[d + 2] === canonicalRhs[d]));
  if (!empty && ((rs[0] !== 1 && O / groups > 1) || gemmWants)) {
    const v = channelsLast(r, [...dn.rhsSpec.slice(2), dn.rhsSpec[1]!, dn.rhsSpec[0]!], 1);
    rhsRef = v.ref;
    rs = [v.strides[ns + 1]!, v.strides[ns]!, ...v.strides.slice(0, ns)];
  }
  // group g reads lhs batch g·nOut + n (batch groups) or lhs feature g·I + i (feature groups)
  const groupStride = B > 1 ? nOut * ls[0]! : G > 1 ? I * ls[1]! : 0;
  const spatial = outSp.flatMap((o, d) => [o, inSp[d]!, kSp[d]!, windowStrides[d]!, padding[d]![0], lhsDilation[d]!, rhsDilation[d]!]);
  // no spatial dims (a grouped matmul): one of size 1, which the kernels tile over
  const none = outSp.length === 0;
  // Precision.HIGHEST as lowerDot keeps it: float32 operands only (16-bit ones are exact in any case)
  const highest = params.precision === 'highest' && l.dtype === 'float32';
  const kernel: Kernel = { kind: 'conv', inputDtype: l.dtype, outputDtype: out.dtype, spatialRank: none ? 1 : outSp.length, ...(highest ? { precision: 'highest' as const } : {}) };
  const [lsp, rsp, osp] = [ls.slice(2), rs.slice(2), os.slice(2)].map((x) => (none ? [0] : x));
  plan.launches.push({
    kernel,
    buffers: [output(0), lhsRef, rhsRef],
    params: [
      nOut, groups, I, O / groups, ...(none ? [1, 1, 1, 1, 0, 1, 1] : spatial),
      ls[0]!, ls[1]!, ...lsp!, groupStride, rs[0]!, rs[1]!, ...rsp!, os[0]!, os[1]!, ...osp!,
    ],
  });
  return plan;
}

export function lowerPrimitive<P extends Primitive>(prim: P, ins: ShapedArray[], outs: ShapedArray[], params: PrimitiveParams[P], target: LowerTarget): Plan {
  return (lowerRules[prim] as LowerRule<PrimitiveParams[P]>)(ins, outs, params, target);
}
