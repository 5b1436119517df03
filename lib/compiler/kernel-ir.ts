// The kernel IR: what one generated kernel computes, independent of the
// target. Both renderers (render/c.ts, and render/cuda.ts later) consume it.
// Kernels are shape-generic: sizes and strides arrive at run time in one
// int64 parameter array, so one compiled kernel serves every shape of the
// same rank class. The `params` layout of each kind is documented here and
// built by lower.ts; renderers read it in the same order.
import { type DType, isFloating } from '../core/dtype.js';
import type { BinaryPrimitive, ComparePrimitive, UnaryPrimitive } from '../core/primitives.js';

/** How an elementwise kernel reads one input per output element. */
export type Access =
  | 'contiguous' // input[i], same element order as the output
  | 'scalar' // input[0] for every element
  | 'strided'; // input[offset + sum(coord[d] * stride[d])]

/** A scalar expression evaluated per output element. Every node knows its dtype. */
export type Expr =
  | { op: 'input'; index: number; dtype: DType }
  | { op: 'literal'; value: number; dtype: DType }
  | { op: 'iota'; axis: number; dtype: DType }
  | { op: 'unary'; name: UnaryPrimitive; x: Expr; dtype: DType; param?: number[] }
  | { op: 'binary'; name: BinaryPrimitive; x: Expr; y: Expr; dtype: DType }
  | { op: 'compare'; name: ComparePrimitive; x: Expr; y: Expr; dtype: 'bool' }
  | { op: 'select'; predicate: Expr; cases: Expr[]; dtype: DType }
  | { op: 'clamp'; lo: Expr; x: Expr; hi: Expr; dtype: DType }
  | { op: 'convert'; x: Expr; dtype: DType }
  /**
   * Bits read as `dtype` (lax.bitcast_convert_type): one part of the same width; or one wider part of which `lane`
   * (an integer expr) picks the narrower piece, least significant first; or several narrower parts, least
   * significant first, joined.
   */
  | { op: 'bitcast'; parts: Expr[]; lane?: Expr; dtype: DType };

/**
 * Whether plan.ts (inPlaceSafe) may write an elementwise output over an input of this access (contiguous, or one
 * element): the renderers then declare that input, and every output, without restrict.
 */
export function mayBeWrittenInPlace(access: Access): boolean {
  return access === 'contiguous' || access === 'scalar';
}

/**
 * out_k[i] = outputs[k].expr for i < n.
 * params: [n, rank, shape[rank], then for each strided input: offset, strides[rank]]
 * buffers: outputs..., inputs...
 */
export interface ElementwiseKernel {
  kind: 'elementwise';
  inputs: { dtype: DType; access: Access }[];
  outputs: { dtype: DType; expr: Expr }[];
}

export type ReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'and' | 'or' | 'argmax' | 'argmin';

/**
 * out[o] = reduce over the inner index space of input.
 * params: [nOut, nInner, outerRank, outerShape[], outerStrides[], innerRank, innerShape[], innerStrides[]]
 * (strides in input elements; the output is contiguous over the outer space)
 * buffers: out, input
 */
export interface ReduceKernel {
  kind: 'reduce';
  op: ReduceOp;
  inputDtype: DType;
  outputDtype: DType;
  /** Present when jit fused elementwise work into the reduction (fuse.ts); changes the params and buffers layout. */
  fused?: FusedReduce;
}

/**
 * A reduction with fused elementwise work (XLA's input and output fusion).
 * Every buffer is read through a view of the reduction's input index space
 * (outer axes kept, inner axes reduced); a view of an output-space value has
 * zero inner strides. Exprs index `inputs`; index `inputs.length` in an
 * `outputs` expr is the reduction's result (rounded to `outputDtype`), and
 * iota nodes name input-space axes listed in `iotaAxes`.
 * params: [nOut, nInner, outerRank, outerShape[], innerRank, innerShape[],
 *          then per view (inputs, sideOutputs, iotaAxes, in that order): outerStrides[outerRank], innerStrides[innerRank]]
 * buffers: outputs..., sideOutputs..., inputs...
 */
export interface FusedReduce {
  inputs: { dtype: DType }[];
  iotaAxes: number[];
  /** The value reduced at each input-space element (dtype: the kernel's inputDtype). */
  prologue: Expr;
  /** Input-space values written while reducing (intermediates other kernels read). */
  sideOutputs: { dtype: DType; expr: Expr }[];
  /** Output-space values written once per output element (the result itself, or consumers of it). */
  outputs: { dtype: DType; expr: Expr }[];
  /**
   * Input-space values written in a second pass over each output element's
   * inner elements, once its reduction is complete (row softmax's
   * exp(x - max) / sum, layernorm's normalized row). Their exprs may read
   * `inputs` and the result (index `inputs.length`, as in `outputs`); each is
   * a row-major buffer of the input's shape, written through its own view
   * (like a side output's). Nodes that read only the result and literals
   * (layernorm's sqrt(var + eps)) are the same for all of an output's
   * elements: renderers compute them once per output, outside the pass. Fusion
   * forms final outputs as XLA does for softmax: the pass recomputes prologue
   * values (exp(x - max)) instead of reading them back. When present, the
   * params list one more view per final output after the side outputs' views
   * (before the iota views), and the buffers are outputs..., sideOutputs...,
   * finalOutputs..., inputs...
   */
  finalOutputs?: { dtype: DType; expr: Expr }[];
  /**
   * Each view's step along the inner space when that space is one axis and every view steps 0 (an output-space
   * value) or 1 element (contiguous) along it: the renderers' vectorized loop indexes plain `base + j` and `base`
   * (row softmax, layernorm, sums over a last axis). Absent otherwise; the kernel then walks the strides.
   */
  innerSteps?: (0 | 1)[];
}

/**
 * Scan along one axis of a contiguous array viewed as [pre, n, post].
 * params: [pre, n, post, reverse]
 * buffers: out, input
 * A long line is scanned in chunks by three launches of `stage`s (reduce-then-scan), each one thread per chunk or
 * per line, with params [pre, n, post, reverse, chunk, nchunks] and a partial per chunk (float64 for floats, the
 * dtype itself for integers, whose sums and products wrap):
 *   'chunk_reduce': buffers partial (out), input: each chunk's total;
 *   'carry_scan': buffers partial (in place): each line's totals made an exclusive scan;
 *   'chunk_scan': buffers out, partial, input: each chunk scanned from its carry.
 */
export interface CumulativeKernel {
  kind: 'cumulative';
  op: 'sum' | 'prod' | 'max' | 'min';
  dtype: DType;
  stage?: 'chunk_reduce' | 'carry_scan' | 'chunk_scan';
}

/** The dtype of a chunked scan's partials: floats carry in double, as the one-pass scan accumulates. */
export function cumulativePartialDtype(dtype: DType): DType {
  return isFloating(dtype) ? 'float64' : dtype;
}

/**
 * out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n], operands as strided 3-d views, out contiguous.
 * params: [B, M, N, K, lhsStrideB, lhsStrideM, lhsStrideK, rhsStrideB, rhsStrideK, rhsStrideN]
 * buffers: out, lhs, rhs
 */
export interface DotKernel {
  kind: 'dot';
  inputDtype: DType;
  outputDtype: DType;
  /**
   * Present only for float32 operands at lax.Precision.HIGHEST: tensor cores must keep float32 accuracy (the CUDA
   * GEMM splits each operand into two tf32 parts, 3 products per step); absent, float32 operands may be rounded to
   * tf32 on a GPU, as JAX's default there.
   */
  precision?: 'highest';
  /**
   * Elementwise work fused onto each product element (bias, activation,
   * scale, cast: XLA's output fusion). In the exprs, `input` k <
   * inputs.length reads epilogue input k at the element through a strided
   * [B, M, N] view, and index inputs.length is the accumulated product
   * (rounded to outputDtype); exprs contain no iota. The outputs are
   * contiguous [B, M, N] arrays; the product itself is stored only as an
   * output whose expr is that input. When present, params gain one view per
   * epilogue input after the ten above (strideB, strideM, strideN), and the
   * buffers are outputs..., lhs, rhs, inputs...
   */
  epilogue?: { inputs: { dtype: DType }[]; outputs: { dtype: DType; expr: Expr }[] };
}

/**
 * params: [rank, outShape[rank], inShape[rank], lo[rank], interior[rank]]
 * buffers: out, operand (contiguous), padding value (scalar)
 */
export interface PadKernel {
  kind: 'pad';
  dtype: DType;
}

/**
 * params: [outer (the output's elements before the axis), axisSize, inner (after it), then each input's size along the axis]
 * buffers: out, inputs... (contiguous)
 */
export interface ConcatenateKernel {
  kind: 'concatenate';
  dtype: DType;
  count: number;
}

/**
 * Reads rank scalar start indices, clamps them like XLA, copies the window.
 * params: [rank, operandShape[rank], sliceSizes[rank]]
 * buffers: out, operand, index_0 ... index_{rank-1}
 */
export interface DynamicSliceKernel {
  kind: 'dynamic_slice';
  dtype: DType;
  indexDtypes: DType[];
}

/**
 * out = operand with update written at the clamped start indices.
 * params: [rank, operandShape[rank], updateShape[rank]]
 * buffers: out, operand, update, index_0 ... index_{rank-1}
 */
export interface DynamicUpdateSliceKernel {
  kind: 'dynamic_update_slice';
  dtype: DType;
  indexDtypes: DType[];
}

/**
 * XLA gather with index_vector_dim last.
 * params: [operandRank, outRank, batchRank, vectorLength,
 *          operandShape[operandRank], sliceSizes[operandRank], outShape[outRank],
 *          outToOperand[outRank] (operand axis an offset dim maps to, -1 for batch dims),
 *          outToBatch[outRank] (batch axis of indices, -1 for offset dims),
 *          startIndexMap[vectorLength]]
 * buffers: out, operand, indices
 */
export interface GatherKernel {
  kind: 'gather';
  dtype: DType;
  indexDtype: DType;
  mode: 'clip' | 'fill';
  fillValue: number;
}

/**
 * XLA scatter (replace, or combine with add/mul/min/max) with index_vector_dim last.
 * params: [operandRank, updateRank, vectorLength, nOperand, nUpdate,
 *          operandShape[operandRank], updateShape[updateRank],
 *          updateToOperand[updateRank] (operand axis of a window dim, -1 for batch dims),
 *          updateToBatch[updateRank] (indices batch axis, -1 for window dims),
 *          scatterDimsToOperandDims[vectorLength], windowSizes[operandRank]]
 * buffers: out, operand, indices, updates
 */
export interface ScatterKernel {
  kind: 'scatter';
  combine: 'replace' | 'add' | 'mul' | 'min' | 'max';
  dtype: DType;
  indexDtype: DType;
  mode: 'clip' | 'fill';
}

/**
 * One stage of a stable sort along the middle axis of contiguous arrays viewed as [pre, n, post] (lax.sort; lower.ts
 * chains the stages). Elements compare lexicographically by the first `numKeys` operands with JAX's comparator
 * (lax._sort_lt_comparator: floats canonicalized so -0 == 0 and every NaN is one value greater than +inf); ties keep
 * their order. Every stage is a loop over all pre·n·post elements, one element per thread on a GPU, so one long row
 * and many short ones both fill the device (a merge sort in which each element finds its own place):
 *  - 'sort_rows': rows of n <= width sorted directly: each element counts the elements that go before it and moves
 *    every operand there. params: [pre, n, post, width]; buffers: outputs..., inputs... (dtypes: every operand's)
 *  - 'rank': the same within runs of `width`, writing each run's order (positions along the row, int32) instead.
 *    params: [pre, n, post, width]; buffers: order, keys... (dtypes: the keys')
 *  - 'merge': sorted runs of `width` merged pairwise: each element binary-searches the other run of its pair.
 *    params: [pre, n, post, width]; buffers: order out, order in, keys... (dtypes: the keys')
 *  - 'permute': out_k = in_k at the sorted order. params: [pre, n, post]; buffers: outputs..., order, inputs...
 *  - 'order' (CPU plans only): each line's whole order at once (a stable radix sort; without scratch memory, runs
 *    of `width` merged between order and scratch). params: [pre, n, post, width]; buffers: order, scratch, keys...
 */
export interface SortKernel {
  kind: 'sort';
  stage: 'sort_rows' | 'rank' | 'merge' | 'permute' | 'top_k' | 'order';
  dtypes: DType[];
  numKeys: number;
  /**
   * 'top_k' (lax.top_k; one key, post = 1): largest first in XLA's TopK order, a total order on the bits (-NaN lowest,
   * then -inf ... -0 < +0 ... +inf, +NaN highest, NaNs by payload). The 'top_k' stage then writes the first k of each
   * row and their positions. params: [pre, n, k]; buffers: values, indices, order, input.
   */
  order?: 'top_k';
}

/**
 * A dense matrix decomposition of each matrix of a batch (lax.linalg.qr / eigh / svd; render/linalg-eig.ts,
 * linalg-qr.ts, linalg-jacobi.ts): a loop iteration per matrix on the CPU, a thread block per matrix on a GPU.
 * params: [batch, m, n]. buffers, by op (every one but the operand x, last, is written; the working storage is per
 * matrix; P = ⌈k/2⌉ pairs of the round-robin Jacobi ordering over k indices):
 *  - 'qr' (Householder, LAPACK geqrf's reflectors): q, r, work [m·n], tau [min(m, n)], x
 *  - 'eigh' (two-sided Jacobi, from the `lower` or upper triangle, ascending if `sort`): v, w, work [n² + 6P + n], x
 *  - 'svd' (one-sided Jacobi on the tall orientation, descending): s, (u, vt,) work [max·min], v [min² + 5P + min],
 *    (basis [max²],) x
 * fullMatrices applies to qr and svd; computeUv to svd.
 */
export interface OrthogonalKernel {
  kind: 'orthogonal';
  op: 'qr' | 'eigh' | 'svd';
  dtype: DType;
  fullMatrices: boolean;
  computeUv: boolean;
  lower: boolean;
  sort: boolean;
  /**
   * CUDA only: one stage of the multi-block eigh or svd for large matrices (render/linalg-jacobi-cuda.ts;
   * lower-jacobi.ts lowers the sequence). eigh: v, w, work [3n² + 2P + n], state (int32 ticket counters, then per
   * matrix whether it converged and its sweeps), x; svd: the one-block buffers with the state before x (its
   * svd_finish: the one-block buffers).
   */
  jacobi?: { stage: JacobiStage };
  /**
   * C target only: eigh / svd of matrices from render/linalg-tridiagonal.ts's threshold up, which every matrix of the
   * launch then takes (tridiagonal / bidiagonal reduction and QL / QR iteration instead of Jacobi; svd's v temp is
   * svdLargeRot there, and its basis max·min without fullMatrices).
   */
  large?: boolean;
  /**
   * qr on the C target: some matrix reaches the blocked sizes, so the kernel carries render/linalg-qr-blocked.ts's
   * blocked geqrf/orgqr (panels of `nb`) for matrices with min(m, n) >= `min`, beside the one-thread loop.
   */
  cpuBlocked?: { min: number; nb: number };
  /**
   * qr on CUDA: one stage of render/linalg-qr-cuda-blocked.ts's blocked QR for large matrices (lower-qr.ts lowers the
   * sequence after a copy of the operand into work), panels of `nb`; buffers q, r, work, tau, the ticket counters
   * (int32), T [panels·nb²], Y [nb·max(n, q's columns)], x.
   */
  cudaStage?: { stage: 'panel' | 'project_r' | 'apply_r' | 'init' | 'project_q' | 'apply_q'; nb: number };
}

export type JacobiStage = 'init' | 'norms' | 'test' | 'round' | 'sort' | 'permute' | 'svd_init' | 'svd_round' | 'svd_test' | 'svd_finish';

/**
 * A dense factorization or solve of each matrix of a batch (lax.linalg; render/linalg.ts): one matrix per CUDA thread
 * block, its threads cooperating on each step's column and trailing updates (large matrices on CUDA: a sequence of
 * `blocked` stages over many blocks); a loop over matrices on the CPU. Matrices
 * are row-major and contiguous, the batch leading.
 *  - 'cholesky': params [batch, n]; buffers: out, in. The lower factor from the lower triangle (zeros above); a
 *    matrix that is not positive definite gives all NaNs (LAPACK potrf's info > 0, as JAX reports it).
 *  - 'triangular_solve': params [batch, m, n]; buffers: out (m x n), a (k x k), b (m x n), with the flags of the
 *    primitive (op(a) x = b when leftSide, else x op(a) = b).
 *  - 'lu': params [batch, m, n]; buffers: lu, pivots (int32, min(m, n)), permutation (int32, m), in. LAPACK getrf's
 *    partial pivoting: the first largest |entry| of the column, no division by a zero pivot.
 */
export interface LinalgKernel {
  kind: 'linalg';
  op: 'cholesky' | 'triangular_solve' | 'lu';
  dtype: DType;
  leftSide?: boolean;
  lower?: boolean;
  transposeA?: boolean;
  unitDiagonal?: boolean;
  /**
   * Some matrix reaches render/linalg-blocked.ts's blocked sizes: the C target compiles its blocked path beside the
   * unblocked one (chosen per matrix at run time); a kernel without it skips that code, a second less of C compile.
   */
  large?: boolean;
  /**
   * CUDA only: one stage of the blocked algorithm for large matrices (render/linalg-cuda-blocked.ts; lower-linalg.ts
   * lowers the sequence after a copy of the operand into the output), over panels of `nb` columns; the same params as
   * the one-block-per-matrix kernel, its buffers with the stages' ticket counters (int32, zeroed before the first
   * stage) after the outputs. cholesky: per panel factor (diagonal block), panel (L21), update
   * (A22), then finish (zeros above the diagonal, or NaNs where it failed); lu: per panel panel (getf2), rows (laswp
   * and U12), update, then finish (the permutation); triangular_solve: per panel diagonal (the block's unknowns),
   * update.
   */
  blocked?: { stage: 'factor' | 'panel' | 'rows' | 'diagonal' | 'update' | 'finish'; nb: number };
}

/**
 * lax.conv_general_dilated (render/conv.ts): out[n, g·Og + o, y...] = Σ over taps t and group features i of
 * lhs[n, i, x...] · rhs[g·Og + o, i, t...], x the lhs position of output position y at tap t (y·stride + t·rhsDilation
 * − padLo, when a multiple of lhsDilation, divided by it; zero outside the input). Every operand is a strided view in
 * canonical axis order, so any dimension numbers need no transpose; the groups (feature or batch groups, the lowering
 * folds both into one offset) are the slowest axis.
 * params: [nOut, groups, inFeatures (per group), outFeatures (per group), then per spatial dim d < spatialRank:
 *   outSize, inSize, kernelSize, stride, padLo, lhsDilation, rhsDilation; then lhs strides [batch, feature,
 *   spatial..., group], rhs strides [outFeature, inFeature, spatial...], out strides [batch, feature, spatial...]]
 * buffers: out, lhs, rhs
 */
export interface ConvKernel {
  kind: 'conv';
  inputDtype: DType;
  outputDtype: DType;
  spatialRank: number;
  /**
   * float32 operands at lax.Precision.HIGHEST (as DotKernel's): float32 accuracy where the default lets a GPU round
   * the operands to tf32 (render/conv-mma.ts: 3xTF32 on tensor cores)
   */
  precision?: 'highest';
}

export type Kernel =
  | ConvKernel
  | LinalgKernel
  | OrthogonalKernel
  | SortKernel
  | ElementwiseKernel
  | ReduceKernel
  | CumulativeKernel
  | DotKernel
  | PadKernel
  | ConcatenateKernel
  | DynamicSliceKernel
  | DynamicUpdateSliceKernel
  | GatherKernel
  | ScatterKernel;

const DTYPE_CODE: Record<DType, string> = {
  bool: 'b', int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32',
  float16: 'f16', bfloat16: 'bf16', float32: 'f32', float64: 'f64',
};

export const dtypeCode = (d: DType): string => DTYPE_CODE[d];

function exprName(e: Expr): string {
  switch (e.op) {
    case 'input': return `in${e.index}`;
    case 'literal': return 'lit';
    case 'iota': return 'iota';
    case 'unary': return e.name;
    case 'binary': return e.name;
    case 'compare': return e.name;
    case 'select': return 'select';
    case 'clamp': return 'clamp';
    case 'convert': return `to_${dtypeCode(e.dtype)}`;
    case 'bitcast': return `as_${dtypeCode(e.dtype)}`;
  }
}

/** A readable C identifier for a kernel, used as its symbol and cache name. */
export function kernelName(k: Kernel): string {
  switch (k.kind) {
    case 'elementwise': {
      const ops = k.outputs.map((o) => exprName(o.expr)).join('_');
      const ins = k.inputs.map((i) => `${dtypeCode(i.dtype)}${i.access[0]}`).join('_');
      return `ew_${ops}_${ins || 'none'}`;
    }
    case 'reduce': {
      const base = `reduce_${k.op}_${dtypeCode(k.inputDtype)}`;
      if (!k.fused) return base;
      const f = k.fused;
      const finals = f.finalOutputs?.length ? `_final_${f.finalOutputs.map((o) => exprName(o.expr)).join('_')}` : '';
      return `${base}_fused_${exprName(f.prologue)}${f.sideOutputs.length ? `_side${f.sideOutputs.length}` : ''}_${f.outputs.map((o) => exprName(o.expr)).join('_')}${finals}`;
    }
    case 'cumulative': return `cum${k.op}_${dtypeCode(k.dtype)}${k.stage ? `_${k.stage}` : ''}`;
    case 'dot': {
      const base = `dot_${dtypeCode(k.inputDtype)}_${dtypeCode(k.outputDtype)}${k.precision === 'highest' ? '_highest' : ''}`;
      return k.epilogue ? `${base}_epilogue_${k.epilogue.outputs.map((o) => exprName(o.expr)).join('_')}` : base;
    }
    case 'pad': return `pad_${dtypeCode(k.dtype)}`;
    case 'concatenate': return `concatenate${k.count}_${dtypeCode(k.dtype)}`;
    case 'dynamic_slice': return `dynamic_slice_${dtypeCode(k.dtype)}`;
    case 'dynamic_update_slice': return `dynamic_update_slice_${dtypeCode(k.dtype)}`;
    case 'gather': return `gather_${k.mode}_${dtypeCode(k.dtype)}_${dtypeCode(k.indexDtype)}`;
    case 'scatter': return `scatter_${k.combine}_${k.mode}_${dtypeCode(k.dtype)}_${dtypeCode(k.indexDtype)}`;
    case 'orthogonal': return `linalg_${k.op}${k.large ? '_large' : ''}${k.fullMatrices ? '_full' : ''}${k.computeUv ? '' : '_nouv'}${k.lower ? '' : '_upper'}${k.sort ? '' : '_unsorted'}${k.jacobi ? `_multiblock_${k.jacobi.stage}` : ''}${k.cpuBlocked ? `_blocked${k.cpuBlocked.nb}_from${k.cpuBlocked.min}` : ''}${k.cudaStage ? `_blocked${k.cudaStage.nb}_${k.cudaStage.stage}` : ''}_${dtypeCode(k.dtype)}`;
    case 'linalg': return `linalg_${k.op}${k.op === 'triangular_solve' ? `_${k.leftSide ? 'l' : 'r'}${k.lower ? 'lo' : 'up'}${k.transposeA ? 't' : 'n'}${k.unitDiagonal ? 'u' : ''}` : ''}${k.large ? '_large' : ''}${k.blocked ? `_blocked${k.blocked.nb}_${k.blocked.stage}` : ''}_${dtypeCode(k.dtype)}`;
    case 'conv': return `conv${k.spatialRank}d_${dtypeCode(k.inputDtype)}_${dtypeCode(k.outputDtype)}${k.precision === 'highest' ? '_highest' : ''}`;
    case 'sort': return `sort_${k.stage}${k.order ? `_${k.order}` : ''}_${k.numKeys}_${k.dtypes.map(dtypeCode).join('_')}`;
  }
}

/**
 * JSON of a kernel for cache keys and source headers. Equals JSON.stringify
 * for tree-shaped exprs of finite numbers (NaN, ±Infinity and -0 are written
 * as {"$number": "NaN"} etc.); a node shared by several parents (fused kernels are
 * DAGs) is written once and later referenced as {"$ref": n}, so the text stays
 * linear in the DAG's size instead of exponential.
 */
export function kernelJson(kernel: Kernel): string {
  const seen = new Map<object, number>();
  return JSON.stringify(kernel, function (this: unknown, _key: string, value: unknown) {
    // JSON writes NaN and ±Infinity as null and -0 as 0; kernels differing only there must not share a key
    if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) return { $number: Object.is(value, -0) ? '-0' : String(value) };
    if (value === null || typeof value !== 'object' || globalThis.Array.isArray(value)) return value;
    const known = seen.get(value);
    if (known !== undefined) return { $ref: known };
    seen.set(value, seen.size);
    return value;
  });
}

/** The non-trivial nodes of `exprs` that read no input but `result` (renderers compute them once per output element of a reduction). */
export function resultOnlyNodes(exprs: readonly Expr[], result: number): Expr[] {
  const known = new Map<Expr, boolean>();
  const out: Expr[] = [];
  const visit = (e: Expr): boolean => {
    const seen = known.get(e);
    if (seen !== undefined) return seen;
    let only: boolean;
    switch (e.op) {
      case 'input': only = e.index === result; break;
      case 'literal': only = true; break;
      case 'iota': only = false; break;
      case 'unary': case 'convert': only = visit(e.x); break;
      case 'bitcast': only = [...e.parts.map(visit), ...(e.lane ? [visit(e.lane)] : [])].every(Boolean); break;
      case 'binary': case 'compare': only = [visit(e.x), visit(e.y)].every(Boolean); break;
      case 'select': only = [visit(e.predicate), ...e.cases.map(visit)].every(Boolean); break;
      case 'clamp': only = [visit(e.lo), visit(e.x), visit(e.hi)].every(Boolean); break;
    }
    known.set(e, only);
    if (only && e.op !== 'literal' && e.op !== 'input') out.push(e);
    return only;
  };
  exprs.forEach(visit);
  return out;
}
