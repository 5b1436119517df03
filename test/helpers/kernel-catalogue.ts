// A catalogue of kernels with their exact run-time params, for tests of the
// renderers (test/cuda-render.test.ts) and for anyone who needs "every kind
// of kernel the compiler emits": (a) the plans lower.ts returns for every
// primitive it lowers, over the dtypes each supports, at one or two shapes
// (ranks 0 to 3, strided views); (b) the fused programs fuse.ts builds for
// a set of jitted functions (softmax, layernorm, MLP loss and grad, ...);
// (c) hand-built IR for what (a) and (b) do not reach yet: fused reductions
// with final outputs, dot epilogues, every reduction strategy, a 64-bit-index
// elementwise kernel. Nothing runs: jaxprs are traced on zero-filled arrays.
import { type DType, itemsize } from '../../lib/core/dtype.js';
import {
  type Primitive, type PrimitiveParams, type ShapedArray, BINARY_PRIMITIVES, COMPARE_PRIMITIVES, UNARY_PRIMITIVES, abstractEval, aval,
} from '../../lib/core/primitives.js';
import { fuseJaxpr } from '../../lib/compiler/fuse.js';
import type { Expr, Kernel } from '../../lib/compiler/kernel-ir.js';
import { cumulativePartialDtype } from '../../lib/compiler/kernel-ir.js';
import { lowerPrimitive } from '../../lib/compiler/lower.js';
import { CUDA_BLOCKED_MIN } from '../../lib/compiler/render/linalg-cuda-blocked.js';
import * as jax from '../../lib/index.js';
import { numpy as jnp, nn } from '../../lib/index.js';
import type { Array } from '../../lib/core/array.js';

export interface CatalogueEntry {
  label: string;
  kernel: Kernel;
  params: number[];
  /** bytes of each buffer in the kernel's ABI order, where known (lowered primitives and fused programs) */
  bufferBytes?: number[];
}

const bytesOf = (dtype: DType, size: number) => size * itemsize(dtype);

/** Primitives lower.ts handles without a kernel (aliases) or as programs (control flow, remat). */
export const PRIMITIVES_WITHOUT_KERNELS: readonly Primitive[] = [
  'reshape', 'squeeze', 'stop_gradient', 'name', 'scan', 'while', 'cond', 'checkpoint', 'custom_jvp_call', 'custom_vjp_call', 'custom_lin',
  // host callbacks run on the host, not in a kernel
  'debug_callback', 'pure_callback',
];

const FLOATS: DType[] = ['float32', 'float16', 'bfloat16'];
const INTS: DType[] = ['int32', 'uint8'];
const FLOAT_ONLY_UNARY = new Set<string>(['floor', 'ceil', 'round', 'is_finite', 'exp', 'exp2', 'log', 'expm1', 'log1p', 'tanh', 'logistic', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'sqrt', 'rsqrt', 'cbrt', 'erf', 'reduce_precision']);
const FLOAT_ONLY_BINARY = new Set<string>(['pow', 'atan2', 'nextafter']);
const BITWISE = new Set<string>(['and', 'or', 'xor']);
/** Shifts, population_count and clz: every integer width and signedness (their renderings differ by both). */
const INTEGER_ONLY = new Set<string>(['shift_left', 'shift_right_logical', 'shift_right_arithmetic', 'population_count', 'clz']);
const ALL_INTS: DType[] = ['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'];

const describe = (a: ShapedArray) => `${a.dtype}[${a.shape.join(',')}]`;

/** The launches lower.ts plans for one primitive application. */
function lowered(prim: Primitive, ins: ShapedArray[], params: object, note = ''): CatalogueEntry[] {
  const outs = (abstractEval[prim] as (a: ShapedArray[], p: object) => ShapedArray[])(ins, params);
  const plan = lowerPrimitive(prim, ins, outs, params as never, 'cuda');
  const sizeOf = (shape: readonly number[]) => shape.reduce((n, d) => n * d, 1);
  return plan.launches.map((l, i) => ({
    label: `${prim}(${ins.map(describe).join(', ')})${note}${plan.launches.length > 1 ? ` launch ${i}` : ''}`,
    kernel: l.kernel,
    params: l.params,
    bufferBytes: l.buffers.map((b) => {
      if (b.kind === 'input') return bytesOf(ins[b.index]!.dtype, sizeOf(ins[b.index]!.shape));
      if (b.kind === 'output') return bytesOf(outs[b.index]!.dtype, sizeOf(outs[b.index]!.shape));
      return bytesOf(plan.temps[b.index]!.dtype, plan.temps[b.index]!.size);
    }),
  }));
}

function primitiveEntries(): CatalogueEntry[] {
  const out: CatalogueEntry[] = [];
  const add = (prim: Primitive, ins: ShapedArray[], params: object = {}, note = '') => out.push(...lowered(prim, ins, params, note));
  const a = aval;

  for (const prim of UNARY_PRIMITIVES) {
    const dtypes = FLOAT_ONLY_UNARY.has(prim) ? FLOATS : INTEGER_ONLY.has(prim) ? ALL_INTS : prim === 'not' ? [...INTS, 'bool' as DType] : [...FLOATS, ...INTS];
    for (const d of dtypes) {
      const params = prim === 'round' ? { roundingMethod: 'to_nearest_even' } : prim === 'integer_pow' ? { y: 3 } : prim === 'reduce_precision' ? { exponentBits: 5, mantissaBits: 2 } : {};
      add(prim, [a([3, 5], d)], params);
    }
  }
  add('exp', [a([], 'float32')]);
  add('log', [a([2, 3, 4], 'float64')]);
  add('round', [a([7], 'float32')], { roundingMethod: 'away_from_zero' });
  add('integer_pow', [a([7], 'float32')], { y: -2 });
  add('reduce_precision', [a([7], 'float32')], { exponentBits: 8, mantissaBits: 7 });
  add('reduce_precision', [a([7], 'float16')], { exponentBits: 5, mantissaBits: 10 });

  for (const prim of BINARY_PRIMITIVES) {
    const dtypes = FLOAT_ONLY_BINARY.has(prim) ? FLOATS : INTEGER_ONLY.has(prim) ? ALL_INTS : BITWISE.has(prim) ? [...INTS, 'bool' as DType] : [...FLOATS, ...INTS];
    for (const d of dtypes) {
      add(prim, [a([4, 6], d), a([4, 6], d)]);
      add(prim, [a([4, 6], d), a([], d)], {}, ' scalar rhs');
    }
  }
  add('add', [a([1000], 'float64'), a([1000], 'float64')]);
  for (const prim of COMPARE_PRIMITIVES) {
    for (const d of [...FLOATS, ...INTS, 'bool' as DType]) add(prim, [a([4, 6], d), a([4, 6], d)]);
  }
  for (const d of [...FLOATS, ...INTS, 'bool' as DType]) add('select_n', [a([4, 6], 'bool'), a([4, 6], d), a([4, 6], d)]);
  add('select_n', [a([4, 6], 'int32'), a([4, 6], 'float32'), a([4, 6], 'float32'), a([4, 6], 'float32')]);
  add('select_n', [a([], 'bool'), a([4, 6], 'float32'), a([4, 6], 'float32')]);
  for (const d of [...FLOATS, ...INTS]) add('clamp', [a([], d), a([4, 6], d), a([], d)]);
  const convertible: DType[] = [...FLOATS, ...INTS, 'bool', 'float64'];
  for (const from of convertible) {
    for (const to of convertible) if (from !== to) add('convert_element_type', [a([5, 3], from)], { newDtype: to, weakType: false });
  }
  // bitcasts: same width (elementwise), to a narrower dtype (a lane per part) and to a wider one (parts joined)
  for (const [from, to] of [['float32', 'int32'], ['uint32', 'float32'], ['float16', 'int16'], ['bfloat16', 'float16'], ['uint16', 'bfloat16'], ['int8', 'uint8'], ['bool', 'bool']] as const) {
    add('bitcast_convert_type', [a([5, 3], from)], { newDtype: to });
  }
  for (const [from, to] of [['float64', 'uint32'], ['float64', 'int8'], ['float32', 'uint8'], ['float32', 'bfloat16'], ['int16', 'int8']] as const) {
    add('bitcast_convert_type', [a([5, 3], from)], { newDtype: to });
  }
  for (const [from, to, ratio] of [['uint32', 'float64', 2], ['uint8', 'float32', 4], ['float16', 'uint32', 2], ['int8', 'float64', 8]] as const) {
    add('bitcast_convert_type', [a([5, ratio], from)], { newDtype: to });
  }
  add('iota', [], { dtype: 'int32', shape: [3, 4], dimension: 1 });
  add('iota', [], { dtype: 'float32', shape: [2, 3, 4], dimension: 0 });
  add('broadcast_in_dim', [a([3], 'float32')], { shape: [2, 3], broadcastDimensions: [1] });
  add('broadcast_in_dim', [a([3, 1], 'bfloat16')], { shape: [3, 5], broadcastDimensions: [0, 1] });
  add('broadcast_in_dim', [a([], 'int32')], { shape: [4, 4], broadcastDimensions: [] });
  add('transpose', [a([2, 3, 4], 'float32')], { permutation: [2, 0, 1] });
  add('transpose', [a([64, 48], 'float16')], { permutation: [1, 0] });
  add('rev', [a([5, 6], 'int32')], { dimensions: [1] });
  add('slice', [a([10, 10], 'float32')], { startIndices: [1, 2], limitIndices: [9, 8], strides: [2, 1] });
  add('slice', [a([4, 8], 'uint8')], { startIndices: [0, 4], limitIndices: [4, 8], strides: null });
  add('copy', [a([3, 5], 'float32')]);
  add('device_put', [a([3, 5], 'float32')], { srcKind: 'device', dstKind: 'pinned_host' });
  add('pad', [a([3, 4], 'float32'), a([], 'float32')], { paddingConfig: [[1, 2, 0], [-1, 1, 1]] });
  add('pad', [a([5], 'bool'), a([], 'bool')], { paddingConfig: [[2, 0, 2]] });
  add('concatenate', [a([2, 3], 'float32'), a([2, 5], 'float32')], { dimension: 1 });
  add('concatenate', [a([1, 4], 'int32'), a([0, 4], 'int32'), a([3, 4], 'int32')], { dimension: 0 });
  add('dynamic_slice', [a([8, 8], 'float32'), a([], 'int32'), a([], 'int32')], { sliceSizes: [3, 4] });
  add('dynamic_slice', [a([8], 'bfloat16'), a([], 'uint8')], { sliceSizes: [8] });
  add('dynamic_update_slice', [a([8, 8], 'float32'), a([3, 4], 'float32'), a([], 'int32'), a([], 'int32')]);
  add('dynamic_update_slice', [a([6, 5, 4], 'uint8'), a([2, 5, 1], 'uint8'), a([], 'int32'), a([], 'int32'), a([], 'int32')]);
  const rows = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0] };
  for (const mode of ['clip', 'fill'] as const) {
    for (const d of ['float32', 'float16', 'int32', 'bool'] as DType[]) {
      add('gather', [a([10, 5], d), a([7, 1], 'int32')], { dimensionNumbers: rows, sliceSizes: [1, 5], mode, fillValue: null });
    }
  }
  add('gather', [a([6, 7, 8], 'float32'), a([2, 3, 2], 'int32')], { dimensionNumbers: { offsetDims: [2, 3], collapsedSliceDims: [0], startIndexMap: [0, 2] }, sliceSizes: [1, 7, 3], mode: 'clip', fillValue: null });
  const update = { updateWindowDims: [1], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
  for (const prim of ['scatter', 'scatter_add', 'scatter_mul', 'scatter_min', 'scatter_max'] as const) {
    for (const d of ['float32', 'bfloat16', 'int32', 'uint8', 'bool'] as DType[]) {
      add(prim, [a([10, 5], d), a([7, 1], 'int32'), a([7, 5], d)], { dimensionNumbers: update, mode: 'fill' });
    }
    add(prim, [a([10, 5], 'float32'), a([7, 1], 'int32'), a([7, 5], 'float32')], { dimensionNumbers: update, mode: 'clip' });
  }
  // overlapping windows (a window spans the scattered axis): applied in update order
  add('scatter_add', [a([10], 'float32'), a([3, 1], 'int32'), a([3, 4], 'float32')], { dimensionNumbers: { updateWindowDims: [1], insertedWindowDims: [], scatterDimsToOperandDims: [0] }, mode: 'clip' });
  // an embedding gradient: many rows into a large table (the copy runs on many blocks)
  add('scatter_add', [a([50000, 256], 'float32'), a([4096, 1], 'int32'), a([4096, 256], 'float32')], { dimensionNumbers: update, mode: 'fill' }, ' embedding');

  const reductions = ['reduce_sum', 'reduce_prod', 'reduce_max', 'reduce_min'] as const;
  for (const prim of reductions) {
    for (const d of [...FLOATS, ...INTS]) {
      add(prim, [a([6, 7, 8], d)], { axes: [2] });
      add(prim, [a([6, 7, 8], d)], { axes: [1] });
    }
    add(prim, [a([6, 7, 8], 'float32')], { axes: [0, 2] });
    add(prim, [a([6, 7, 8], 'float32')], { axes: [0, 1, 2] });
    add(prim, [a([], 'float32')], { axes: [] });
  }
  for (const prim of ['reduce_and', 'reduce_or'] as const) {
    for (const d of ['bool', 'int32', 'uint8'] as DType[]) add(prim, [a([6, 7], d)], { axes: [1] });
    add(prim, [a([300, 5000], 'bool')], { axes: [0] });
  }
  // every reduction strategy: rows of 10 (thread), 64 (warp), 5000 (block), full reductions (two-stage), columns
  add('reduce_sum', [a([1000, 10], 'float32')], { axes: [1] }, ' short rows');
  add('reduce_sum', [a([1000, 64], 'float16')], { axes: [1] }, ' warp rows');
  add('reduce_max', [a([64, 5000], 'float32')], { axes: [1] }, ' block rows');
  add('reduce_sum', [a([3000000], 'float32')], { axes: [0] }, ' full');
  add('reduce_sum', [a([4, 100000], 'int32')], { axes: [1] }, ' long rows');
  add('reduce_max', [a([100000, 4], 'bfloat16')], { axes: [0] }, ' long columns');
  add('reduce_sum', [a([256, 4096], 'float32')], { axes: [0] }, ' columns');
  add('reduce_sum', [a([0, 5], 'float32')], { axes: [0] }, ' empty');
  for (const prim of ['argmax', 'argmin'] as const) {
    for (const d of ['float32', 'float16', 'int32', 'uint8'] as DType[]) add(prim, [a([6, 7], d)], { axes: [1], indexDtype: 'int32' });
    add(prim, [a([6, 7, 3], 'float32')], { axes: [1], indexDtype: 'int32' });
    add(prim, [a([8, 20000], 'bfloat16')], { axes: [1], indexDtype: 'int32' }, ' long rows');
    add(prim, [a([2000000], 'float32')], { axes: [0], indexDtype: 'int32' }, ' full');
  }
  for (const prim of ['cumsum', 'cumprod', 'cummax', 'cummin'] as const) {
    for (const d of ['float32', 'bfloat16', 'int32', 'uint8'] as DType[]) add(prim, [a([4, 5, 6], d)], { axis: 1, reverse: false });
    add(prim, [a([4, 5, 6], 'float16')], { axis: 2, reverse: true });
  }
  // long lines: chunked reduce-then-scan (three launches)
  add('cumsum', [a([3, 20000, 2], 'float32')], { axis: 1, reverse: true }, ' long lines');
  add('cumprod', [a([70000], 'int32')], { axis: 0, reverse: false }, ' long line');
  add('cummax', [a([5000], 'bfloat16')], { axis: 0, reverse: false }, ' long line');
  // sort: short rows (one launch), long rows (rank, merges, permute), several operands and keys, a middle axis
  for (const d of ['float32', 'bfloat16', 'int32', 'uint8', 'bool'] as DType[]) add('sort', [a([4, 7], d)], { dimension: 1, isStable: true, numKeys: 1 });
  add('sort', [a([3, 100], 'float32'), a([3, 100], 'int32')], { dimension: 1, isStable: true, numKeys: 1 }, ' long rows');
  add('sort', [a([5, 40, 3], 'float16'), a([5, 40, 3], 'int32'), a([5, 40, 3], 'float32')], { dimension: 1, isStable: true, numKeys: 2 }, ' two keys');
  for (const d of ['float32', 'bfloat16', 'float64', 'int32', 'uint8'] as DType[]) add('top_k', [a([4, 9], d)], { k: 3 });
  add('top_k', [a([2, 3, 80], 'float16')], { k: 5 }, ' long rows');
  // qr / eigh / svd: a block per matrix (eigh and svd: round-robin Jacobi); tall, wide, full and reduced, both triangles;
  // eigh n = 70 and svd's 68 columns give 64-thread blocks (two warps), the 5 x 5's odd n a dummy index
  for (const d of ['float32', 'float64'] as DType[]) {
    add('qr', [a([3, 5, 4], d)], { fullMatrices: false });
    add('eigh', [a([3, 4, 4], d)], { lower: true, sortEigenvalues: true });
    add('svd', [a([2, 3, 5], d)], { fullMatrices: true, computeUv: true });
  }
  add('qr', [a([4, 6], 'float32')], { fullMatrices: true }, ' wide full');
  add('eigh', [a([5, 5], 'float64')], { lower: false, sortEigenvalues: false }, ' upper unsorted');
  add('eigh', [a([70, 70], 'float32')], { lower: true, sortEigenvalues: true }, ' two warps');
  add('svd', [a([72, 68], 'float32')], { fullMatrices: true, computeUv: true }, ' tall full, two warps');
  add('svd', [a([6, 4], 'float32')], { fullMatrices: false, computeUv: false }, ' values only');
  // linalg: one block per matrix; every triangular_solve case (side, triangle, transpose, unit diagonal), rectangular lu
  for (const d of ['float32', 'float64'] as DType[]) {
    add('cholesky', [a([3, 5, 5], d)], {});
    add('lu', [a([2, 6, 6], d)], {});
  }
  add('lu', [a([7, 4], 'float32')], {}, ' tall');
  add('lu', [a([2, 3, 5], 'float64')], {}, ' wide');
  for (const leftSide of [true, false]) {
    for (const lower of [true, false]) {
      for (const transposeA of [true, false]) {
        const b = leftSide ? a([2, 4, 3], 'float32') : a([2, 3, 4], 'float32');
        add('triangular_solve', [a([2, 4, 4], 'float32'), b], { leftSide, lower, transposeA, conjugateA: false, unitDiagonal: lower && !transposeA }, ` ${leftSide ? 'left' : 'right'} ${lower ? 'lower' : 'upper'}${transposeA ? ' transposed' : ''}`);
      }
    }
  }
  // linalg's CUDA blocked stages at CUDA_BLOCKED_MIN (render/linalg-cuda-blocked.ts), each stage once: rendered and
  // compiled, not run alone (cuda-catalogue.test.ts skips them: a stage needs the ones before it; linalg-blocked.test.ts
  // runs whole factorizations on the device)
  const stagesOnce = (prim: Primitive, ins: ShapedArray[], params: object) => {
    const seen = new Set<string>();
    out.push(...lowered(prim, ins, params, ' blocked').filter((e) => e.kernel.kind === 'linalg' && e.kernel.blocked && !seen.has(e.kernel.blocked.stage) && seen.add(e.kernel.blocked.stage)));
  };
  for (const d of ['float32', 'float64'] as DType[]) {
    stagesOnce('cholesky', [a([CUDA_BLOCKED_MIN + 5, CUDA_BLOCKED_MIN + 5], d)], {});
    stagesOnce('lu', [a([CUDA_BLOCKED_MIN + 40, CUDA_BLOCKED_MIN + 7], d)], {});
    stagesOnce('triangular_solve', [a([CUDA_BLOCKED_MIN, CUDA_BLOCKED_MIN], d), a([20, CUDA_BLOCKED_MIN], d)], { leftSide: false, lower: false, transposeA: true, conjugateA: false, unitDiagonal: false });
    // qr's stages (render/linalg-qr-cuda-blocked.ts), tall and reduced, the same way
    const seen = new Set<string>();
    out.push(...lowered('qr', [a([CUDA_BLOCKED_MIN + 40, CUDA_BLOCKED_MIN + 7], d)], { fullMatrices: false }, ' blocked')
      .filter((e) => e.kernel.kind === 'orthogonal' && e.kernel.cudaStage && !seen.has(e.kernel.cudaStage.stage) && seen.add(e.kernel.cudaStage.stage)));
  }
  const matmul = { dimensionNumbers: [[[1], [0]], [[], []]], preferredElementType: null };
  for (const d of ['float32', 'float16', 'bfloat16', 'int32', 'bool'] as DType[]) add('dot_general', [a([4, 5], d), a([5, 6], d)], matmul);
  add('dot_general', [a([2, 3, 4], 'float32'), a([2, 4, 5], 'float32')], { dimensionNumbers: [[[2], [1]], [[0], [0]]], preferredElementType: null });
  add('dot_general', [a([5, 4], 'float32'), a([5, 6], 'float32')], { dimensionNumbers: [[[0], [0]], [[], []]], preferredElementType: null });
  add('dot_general', [a([3, 4, 5], 'float32'), a([5, 4, 6], 'float32')], { dimensionNumbers: [[[1, 2], [1, 0]], [[], []]], preferredElementType: null });
  add('dot_general', [a([130, 70], 'float64'), a([70, 129], 'float64')], matmul);
  add('dot_general', [a([4, 5], 'float16'), a([5, 6], 'float16')], { dimensionNumbers: matmul.dimensionNumbers, preferredElementType: 'float32' });
  // convolutions: NHWC/HWIO with padding and strides (the unit-stride C tile), NCHW/OIHW with dilations and feature
  // groups, 1-d batch groups, 3-d, 16-bit and integer operands (the float32 and 16-bit ones that fill an mma tile take
  // tensor cores on CUDA)
  const conv = (ns: number, o: Partial<PrimitiveParams['conv_general_dilated']> = {}): PrimitiveParams['conv_general_dilated'] => ({
    windowStrides: new globalThis.Array(ns).fill(1), padding: new globalThis.Array(ns).fill([0, 0]), lhsDilation: new globalThis.Array(ns).fill(1),
    rhsDilation: new globalThis.Array(ns).fill(1), dimensionNumbers: { lhsSpec: [...globalThis.Array(ns + 2).keys()], rhsSpec: [...globalThis.Array(ns + 2).keys()], outSpec: [...globalThis.Array(ns + 2).keys()] },
    featureGroupCount: 1, batchGroupCount: 1, preferredElementType: null, ...o,
  });
  const nhwc = { lhsSpec: [0, 3, 1, 2], rhsSpec: [3, 2, 0, 1], outSpec: [0, 3, 1, 2] };
  for (const d of ['float32', 'float64', 'bfloat16', 'int32'] as DType[]) {
    add('conv_general_dilated', [a([2, 7, 6, 5], d), a([3, 3, 5, 18], d)], conv(2, { windowStrides: [2, 1], padding: [[1, 1], [1, 2]], dimensionNumbers: nhwc }), ' NHWC');
  }
  add('conv_general_dilated', [a([2, 4, 6, 7], 'float32'), a([6, 2, 2, 3], 'float32')], conv(2, { padding: [[2, -1], [0, 1]], lhsDilation: [2, 1], rhsDilation: [1, 2], featureGroupCount: 2 }), ' NCHW groups dilations');
  add('conv_general_dilated', [a([4, 3, 9], 'float16'), a([6, 3, 2], 'float16')], conv(1, { batchGroupCount: 2, windowStrides: [3], preferredElementType: 'float32' }), ' batch groups');
  add('conv_general_dilated', [a([1, 2, 4, 3, 5], 'float32'), a([3, 2, 2, 2, 3], 'float32')], conv(3, { padding: [[1, 0], [0, 1], [1, 1]] }), ' 3-d');
  // the tensor-core conv (render/conv-mma.ts) in float16 with feature groups, and float32 at Precision.HIGHEST (3xTF32)
  add('conv_general_dilated', [a([2, 9, 8, 32], 'float16'), a([3, 3, 16, 48], 'float16')], conv(2, { padding: [[1, 1], [1, 1]], featureGroupCount: 2, dimensionNumbers: nhwc }), ' NHWC groups');
  add('conv_general_dilated', [a([2, 7, 6, 16], 'float32'), a([3, 3, 16, 32], 'float32')], conv(2, { windowStrides: [1, 2], dimensionNumbers: nhwc, precision: 'highest' }), ' NHWC HIGHEST');
  return out;
}

/** The launches of a jitted function's fused program, traced at these arguments. */
function fused(label: string, f: (...args: never[]) => unknown, ...args: unknown[]): CatalogueEntry[] {
  const closed = jax.makeJaxpr(f)(...args);
  // Program.steps (launches, control-flow calls, copies); older programs listed only `launches`
  type Step = { kind?: string; kernel?: Kernel; params?: number[]; label: string; buffers?: number[] };
  const program = fuseJaxpr(closed.jaxpr, 'cuda') as unknown as { steps?: Step[]; launches?: Step[]; buffers?: { dtype: DType; size: number }[] };
  const steps = program.steps ?? program.launches ?? [];
  return steps
    .filter((s) => (s.kind === undefined || s.kind === 'launch') && s.kernel)
    .map((s, i) => ({
      label: `${label} #${i}: ${s.label}`, kernel: s.kernel!, params: s.params!,
      ...(s.buffers && program.buffers ? { bufferBytes: s.buffers.map((id) => bytesOf(program.buffers![id]!.dtype, program.buffers![id]!.size)) } : {}),
    }));
}

function programEntries(): CatalogueEntry[] {
  const z = (shape: number[], dtype: DType = 'float32') => jnp.zeros(shape, { dtype });
  const x = z([64, 128]);
  const y = z([64, 128]);
  const out: CatalogueEntry[] = [];
  out.push(...fused('10-op chain', (a: Array, b: Array) => {
    let t = jnp.add(jnp.multiply(a, 2), 1);
    t = jnp.subtract(jnp.exp(t), b);
    t = jnp.multiply(jnp.tanh(t), jnp.sqrt(jnp.abs(b)));
    t = jnp.maximum(jnp.divide(t, jnp.add(jnp.square(a), 1)), -1);
    return jnp.where(jnp.greater(t, 0), jnp.negative(t), jnp.sin(t));
  }, x, y));
  out.push(...fused('row softmax', (a: Array) => nn.softmax(a, { axis: -1 }), z([32, 1000])));
  out.push(...fused('layernorm', (a: Array, g: Array, b: Array) => {
    const mean = jnp.mean(a, { axis: -1, keepdims: true });
    const variance = jnp.var(a, { axis: -1, keepdims: true });
    return jnp.add(jnp.multiply(jnp.divide(jnp.subtract(a, mean), jnp.sqrt(jnp.add(variance, 1e-5))), g), b);
  }, z([64, 512]), z([512]), z([512])));
  out.push(...fused('sum(exp(x - 1))', (a: Array) => jnp.sum(jnp.exp(jnp.subtract(a, 1))), z([4096, 256])));
  out.push(...fused('tanh(x @ w + b)', (a: Array, w: Array, b: Array) => jnp.tanh(jnp.add(jnp.matmul(a, w), b)), z([128, 256]), z([256, 512]), z([512])));
  const mlpLoss = (w1: Array, b1: Array, w2: Array, b2: Array, xs: Array, ys: Array) => {
    const h = nn.relu(jnp.add(jnp.matmul(xs, w1), b1));
    const pred = jnp.add(jnp.matmul(h, w2), b2);
    return jnp.mean(jnp.square(jnp.subtract(pred, ys)));
  };
  const mlpArgs = [z([32, 64]), z([64]), z([64, 10]), z([10]), z([16, 32]), z([16, 10])];
  out.push(...fused('MLP loss', mlpLoss, ...mlpArgs));
  out.push(...fused('MLP grad', jax.grad(mlpLoss, { argnums: [0, 1, 2, 3] }) as never, ...mlpArgs));
  out.push(...fused('batched dot', (a: Array, b: Array) => jnp.matmul(a, b), z([8, 32, 64]), z([8, 64, 16])));
  out.push(...fused('x.at(idx).add', (a: Array, idx: Array, v: Array) => a.at(idx).add(v), z([100, 16]), z([10], 'int32'), z([10, 16])));
  out.push(...fused('take', (a: Array, idx: Array) => jnp.take(a, idx, { axis: 0 }), z([100, 16]), z([10], 'int32')));
  out.push(...fused('argmax', (a: Array) => jnp.argmax(a, { axis: 1 }), x));
  out.push(...fused('cumsum', (a: Array) => jnp.cumsum(a, { axis: 1 }), x));
  out.push(...fused('pad + concatenate', (a: Array, b: Array) => jnp.concatenate([jnp.pad(a, [[1, 2], [3, 4]]), jnp.pad(b, [[1, 2], [3, 4]])], { axis: 1 }), x, y));
  for (const d of ['float16', 'bfloat16'] as DType[]) {
    out.push(...fused(`${d} chain`, (a: Array, b: Array) => {
      const t = jnp.add(jnp.multiply(a, b), 0.5);
      return jnp.sum(jnp.multiply(jnp.exp(jnp.negative(t)), jnp.maximum(a, b)), { axis: 1 });
    }, z([64, 128], d), z([64, 128], d)));
  }
  const layer = (w1: Array, w2: Array, xs: Array) => jnp.sum(jnp.matmul(jnp.matmul(xs, w1), w2));
  out.push(...fused('tutorial layer grad', jax.grad(layer, { argnums: [0, 1] }) as never, z([256, 1024]), z([1024, 256]), z([32, 256])));
  return out;
}

const inp = (index: number, dtype: DType): Expr => ({ op: 'input', index, dtype });
const lit = (value: number, dtype: DType): Expr => ({ op: 'literal', value, dtype });
const un = (name: string, x: Expr, dtype = x.dtype): Expr => ({ op: 'unary', name: name as never, x, dtype });
const bin = (name: string, x: Expr, y: Expr, dtype = x.dtype): Expr => ({ op: 'binary', name: name as never, x, y, dtype });

/** Hand-built kernels for IR the lowering and fusion do not produce yet, and for sizes no test should allocate. */
function irEntries(): CatalogueEntry[] {
  const f32: DType = 'float32';
  const out: CatalogueEntry[] = [];
  const softmaxRows = (rows: number, cols: number, finalDtype: DType): CatalogueEntry => {
    // one max pass with a second pass writing exp(x - max) (softmax's numerator), plus the row max itself
    const x = inp(0, f32);
    const res = inp(1, f32);
    const e = un('exp', bin('sub', x, res));
    return {
      label: `ir: max reduction with final outputs [${rows}, ${cols}] -> ${finalDtype}`,
      kernel: {
        kind: 'reduce', op: 'max', inputDtype: f32, outputDtype: f32,
        fused: {
          inputs: [{ dtype: f32 }], iotaAxes: [], prologue: x, sideOutputs: [],
          outputs: [{ dtype: f32, expr: res }],
          finalOutputs: [{ dtype: finalDtype, expr: finalDtype === f32 ? e : { op: 'convert', x: e, dtype: finalDtype } }],
        },
      },
      // [nOut, nInner, outerRank, outerShape, innerRank, innerShape, views: input, final]
      params: [rows, cols, 1, rows, 1, cols, cols, 1, cols, 1],
    };
  };
  out.push(softmaxRows(32, 10, f32), softmaxRows(256, 1000, 'bfloat16'), softmaxRows(4, 50000, f32));
  // a column reduction (axis 0 of [4096, 64]) with a side output, an epilogue, an iota and a final pass
  {
    const x = inp(0, f32);
    const res = inp(1, f32);
    const iota: Expr = { op: 'iota', axis: 0, dtype: f32 };
    const scaled = bin('mul', x, iota);
    out.push({
      label: 'ir: column sum with side, epilogue, iota and final outputs',
      kernel: {
        kind: 'reduce', op: 'sum', inputDtype: f32, outputDtype: f32,
        fused: {
          inputs: [{ dtype: f32 }], iotaAxes: [0], prologue: scaled, sideOutputs: [{ dtype: f32, expr: scaled }],
          outputs: [{ dtype: f32, expr: res }, { dtype: 'float16', expr: { op: 'convert', x: un('sqrt', res), dtype: 'float16' } }],
          finalOutputs: [{ dtype: f32, expr: bin('div', x, res) }],
        },
      },
      // outer [64] (stride 1), inner [4096] (stride 64); views: input, side, final, iota(axis 0: inner coordinate)
      params: [64, 4096, 1, 64, 1, 4096, 1, 64, 1, 64, 1, 64, 0, 1],
    });
  }
  // an argmax whose winner index feeds an epilogue and a final pass (one-hot of the argmax)
  {
    const x = inp(0, f32);
    const res = inp(1, 'int32');
    const iota: Expr = { op: 'iota', axis: 1, dtype: 'int32' };
    out.push({
      label: 'ir: argmax with one-hot final output',
      kernel: {
        kind: 'reduce', op: 'argmax', inputDtype: f32, outputDtype: 'int32',
        fused: {
          inputs: [{ dtype: f32 }], iotaAxes: [1], prologue: x, sideOutputs: [],
          outputs: [{ dtype: 'int32', expr: res }],
          finalOutputs: [{ dtype: 'bool', expr: { op: 'compare', name: 'eq', x: iota, y: res, dtype: 'bool' } }],
        },
      },
      params: [16, 3000, 1, 16, 1, 3000, 3000, 1, 3000, 1, 0, 1],
    });
  }
  // dot with a bias + gelu-ish epilogue, written twice (f32 pre-activation and a bf16 activation)
  {
    const res = inp(1, f32);
    const pre = bin('add', res, inp(0, f32));
    const act = bin('mul', pre, un('logistic', bin('mul', pre, lit(1.702, f32))));
    const epilogue: { inputs: { dtype: DType }[]; outputs: { dtype: DType; expr: Expr }[] } = { inputs: [{ dtype: f32 }], outputs: [{ dtype: f32, expr: pre }, { dtype: 'bfloat16' as DType, expr: { op: 'convert', x: act, dtype: 'bfloat16' } as Expr }] };
    out.push({
      label: 'ir: dot with bias and activation epilogue',
      kernel: { kind: 'dot', inputDtype: f32, outputDtype: f32, epilogue },
      params: [1, 130, 200, 70, 0, 70, 1, 0, 200, 1, 0, 0, 1],
    });
    out.push({
      label: 'ir: batched bf16 dot with epilogue over a [B, M, 1] input',
      kernel: { kind: 'dot', inputDtype: 'bfloat16', outputDtype: 'bfloat16', epilogue: { inputs: [{ dtype: 'bfloat16' as DType }], outputs: [{ dtype: 'bfloat16' as DType, expr: bin('mul', inp(1, 'bfloat16'), inp(0, 'bfloat16')) }] } },
      params: [3, 33, 65, 17, 33 * 17, 17, 1, 17 * 65, 65, 1, 33, 1, 0],
    });
  }
  // every elementwise expression op in one kernel: select with an int32 predicate, clamp, converts, literals, iota
  {
    const x = inp(0, f32);
    const i = inp(1, 'int32');
    const h = inp(2, 'float16');
    const sel: Expr = { op: 'select', predicate: { op: 'convert', x: bin('rem', i, lit(3, 'int32')), dtype: 'int32' }, cases: [x, un('neg', x), lit(NaN, f32)], dtype: f32 };
    const clamped: Expr = { op: 'clamp', lo: lit(-Infinity, f32), x: bin('nextafter', sel, lit(0, f32)), hi: lit(-0, f32), dtype: f32 };
    const fromHalf = bin('add', { op: 'convert', x: h, dtype: f32 }, { op: 'iota', axis: 1, dtype: f32 });
    out.push({
      label: 'ir: every expression op',
      kernel: {
        kind: 'elementwise',
        inputs: [{ dtype: f32, access: 'contiguous' }, { dtype: 'int32', access: 'strided' }, { dtype: 'float16', access: 'scalar' }],
        outputs: [
          { dtype: f32, expr: bin('add', clamped, fromHalf) },
          { dtype: 'uint8', expr: { op: 'convert', x: bin('max', x, lit(1e10, f32)), dtype: 'uint8' } },
          { dtype: 'bool', expr: { op: 'compare', name: 'ge', x: i, y: lit(-2147483648, 'int32'), dtype: 'bool' } },
          { dtype: 'float16', expr: { op: 'convert', x: { op: 'convert', x, dtype: 'float64' }, dtype: 'float16' } },
        ],
      },
      params: [96, 2, 8, 12, 5, 1, 8],
    });
  }
  // 3e9 elements: 64-bit indices
  out.push({
    label: 'ir: elementwise over 3e9 elements',
    kernel: { kind: 'elementwise', inputs: [{ dtype: f32, access: 'contiguous' }], outputs: [{ dtype: f32, expr: un('exp', inp(0, f32)) }] },
    params: [3e9, 1, 3e9],
  });
  out.push({
    label: 'ir: full sum over 3e9 elements',
    kernel: { kind: 'reduce', op: 'sum', inputDtype: 'bfloat16', outputDtype: 'bfloat16' },
    params: [1, 3e9, 0, 1, 3e9, 1],
  });
  return out;
}

/** The dtypes of a kernel's buffers in ABI order, and how many lead as outputs (from kernel-ir.ts, not from the renderer). */
export function bufferLayout(k: Kernel): { dtypes: DType[]; outputs: number } {
  switch (k.kind) {
    case 'elementwise': return { dtypes: [...k.outputs.map((o) => o.dtype), ...k.inputs.map((i) => i.dtype)], outputs: k.outputs.length };
    case 'reduce': {
      const f = k.fused;
      if (!f) return { dtypes: [k.outputDtype, k.inputDtype], outputs: 1 };
      const outs = [...f.outputs, ...f.sideOutputs, ...(f.finalOutputs ?? [])].map((o) => o.dtype);
      return { dtypes: [...outs, ...f.inputs.map((i) => i.dtype)], outputs: outs.length };
    }
    case 'cumulative': {
      const partial = cumulativePartialDtype(k.dtype);
      switch (k.stage) {
        case undefined: return { dtypes: [k.dtype, k.dtype], outputs: 1 };
        case 'chunk_reduce': return { dtypes: [partial, k.dtype], outputs: 1 };
        case 'carry_scan': return { dtypes: [partial], outputs: 1 };
        case 'chunk_scan': return { dtypes: [k.dtype, partial, k.dtype], outputs: 1 };
      }
    }
    case 'dot': {
      const outs = k.epilogue ? k.epilogue.outputs.map((o) => o.dtype) : [k.outputDtype];
      return { dtypes: [...outs, k.inputDtype, k.inputDtype, ...(k.epilogue?.inputs.map((i) => i.dtype) ?? [])], outputs: outs.length };
    }
    case 'conv': return { dtypes: [k.outputDtype, k.inputDtype, k.inputDtype], outputs: 1 };
    case 'pad': return { dtypes: [k.dtype, k.dtype, k.dtype], outputs: 1 };
    case 'concatenate': return { dtypes: new globalThis.Array<DType>(k.count + 1).fill(k.dtype), outputs: 1 };
    case 'dynamic_slice': return { dtypes: [k.dtype, k.dtype, ...k.indexDtypes], outputs: 1 };
    case 'dynamic_update_slice': return { dtypes: [k.dtype, k.dtype, k.dtype, ...k.indexDtypes], outputs: 1 };
    case 'gather': return { dtypes: [k.dtype, k.dtype, k.indexDtype], outputs: 1 };
    case 'scatter': return { dtypes: [k.dtype, k.dtype, k.indexDtype, k.dtype], outputs: 1 };
    case 'orthogonal': {
      // a blocked qr stage: q, r, work, tau, the ticket counters (int32), T, Y, x
      if (k.cudaStage) return { dtypes: [k.dtype, k.dtype, k.dtype, k.dtype, 'int32', k.dtype, k.dtype, k.dtype], outputs: 7 };
      const count = k.op === 'qr' ? 5 : k.op === 'eigh' ? 4 : k.computeUv ? 7 : 4;
      const outputs = count - 1; // outputs and working storage, then the operand
      return { dtypes: globalThis.Array.from({ length: count }, () => k.dtype), outputs };
    }
    case 'linalg': {
      const layout: { dtypes: DType[]; outputs: number } = k.op === 'lu'
        ? { dtypes: [k.dtype, 'int32', 'int32', k.dtype], outputs: 3 }
        : k.op === 'triangular_solve' ? { dtypes: [k.dtype, k.dtype, k.dtype], outputs: 1 } : { dtypes: [k.dtype, k.dtype], outputs: 1 };
      // a blocked stage's ticket counters after the outputs
      if (k.blocked) layout.dtypes.splice(layout.outputs++, 0, 'int32');
      return layout;
    }
    case 'sort': {
      const keys = k.dtypes;
      switch (k.stage) {
        case 'sort_rows': return { dtypes: [...k.dtypes, ...k.dtypes], outputs: k.dtypes.length };
        case 'rank': return { dtypes: ['int32', ...keys], outputs: 1 };
        case 'merge': return { dtypes: ['int32', 'int32', ...keys], outputs: 1 };
        case 'order': return { dtypes: ['int32', 'int32', ...keys], outputs: 2 };
        case 'permute': return { dtypes: [...k.dtypes, 'int32', ...k.dtypes], outputs: k.dtypes.length };
        case 'top_k': return { dtypes: [k.dtypes[0]!, 'int32', 'int32', k.dtypes[0]!], outputs: 2 };
      }
    }
  }
}

/** Every catalogue entry: primitives, fused programs, hand-built IR. Labels are unique. */
export function kernelCatalogue(): CatalogueEntry[] {
  const entries = [...primitiveEntries(), ...programEntries(), ...irEntries()];
  const seen = new Map<string, number>();
  return entries.map((e) => {
    const n = seen.get(e.label) ?? 0;
    seen.set(e.label, n + 1);
    return n ? { ...e, label: `${e.label} (${n + 1})` } : e;
  });
}
