// The CUDA renderings of the data-movement kernels (pad, concatenate,
// dynamic slices, gather, scatter) and of cumulative scans: grid-stride
// loops over output elements with every shape, stride and axis map baked in
// as constants, so coordinate arithmetic is straight-line code. Semantics
// mirror render/c.ts: XLA's start-index clamping, gather's clip/fill modes,
// scatter applying its updates in order (repeated indices: last write wins,
// floats combine in update order), scans accumulating like the C backend.
import { type DType, isFloating } from '../../core/dtype.js';
import type {
  ConcatenateKernel, CumulativeKernel, DynamicSliceKernel, DynamicUpdateSliceKernel, GatherKernel, PadKernel, ScatterKernel,
} from '../kernel-ir.js';
import {
  BLOCK, type BufferArg, type RenderedKernel, SM_COUNT, dotStrides, gridStride, indent, indexType, int, product,
  strideGrid, unravel,
} from './cuda-common.js';
import { stridesOf } from '../../core/shape.js';
import { CUDA_TYPES } from './expr.js';
import { ParamReader } from './cuda-params.js';

const { computeType, literal, loadValue, storageType, storeValue } = CUDA_TYPES;

const coordNames = (prefix: string, rank: number) => Array.from({ length: rank }, (_, d) => `${prefix}${d}`);

/** A grid-stride kernel over n output elements with `body` per element index i. */
function overElements(n: number, idx: string, buffers: BufferArg[], setup: string[], body: string[], strategy: string): RenderedKernel {
  const lines = [`typedef ${idx} jx_index;`, ...setup, `${gridStride('jx_index', 'i', int(n))} {`, indent(body, 2), '}'];
  return { buffers, body: indent(lines, 2), grid: [strideGrid(n), 1, 1], block: [BLOCK, 1, 1], strategy: `${strategy} (${idx} indices)` };
}

export function cumulative(k: CumulativeKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'cumulative');
  const [pre, n, post, reverse] = r.take(4, 'pre, n, post, reverse') as [number, number, number, number];
  r.done();
  const d = k.dtype;
  const floating = isFloating(d);
  const acc = floating ? 'double' : k.op === 'sum' || k.op === 'prod' ? 'jx_u64' : computeType(d);
  let init: string;
  let combine: string;
  switch (k.op) {
    case 'sum': init = '0'; combine = `acc += (${acc})x;`; break;
    case 'prod': init = '1'; combine = `acc *= (${acc})x;`; break;
    case 'max':
    case 'min': {
      const cmp = k.op === 'max' ? '>' : '<';
      const bound = k.op === 'max' ? { int8: -128, int16: -32768, int32: -2147483648, uint8: 0, uint16: 0, uint32: 0, bool: 0 } : { int8: 127, int16: 32767, int32: 2147483647, uint8: 255, uint16: 65535, uint32: 4294967295, bool: 1 };
      init = floating ? (k.op === 'max' ? '(-JX_INF)' : 'JX_INF') : literal(bound[d as 'int8'] ?? 0, d);
      combine = floating ? `if (acc == acc && (x != x || x ${cmp} acc)) acc = x;` : `if (x ${cmp} acc) acc = x;`;
      break;
    }
  }
  const lines = pre * post;
  const idx = indexType([pre * n * post, lines]);
  // one thread per line; consecutive threads take consecutive `post` positions, so loads coalesce when post > 1
  return overElements(lines, idx, [
    { name: 'out', dtype: d, output: true },
    { name: 'in', dtype: d, output: false },
  ], [], [
    `const jx_index a = i / ${int(Math.max(post, 1))}, c = i % ${int(Math.max(post, 1))};`,
    `${acc} acc = ${init};`,
    `for (jx_index step = 0; step < ${int(n)}; ++step) {`,
    `  const jx_index idx = (a * ${int(n)} + ${reverse ? `${int(n - 1)} - step` : 'step'}) * ${int(post)} + c;`,
    `  const ${floating ? 'double' : computeType(d)} x = ${loadValue(d, 'in[idx]')};`,
    `  ${combine}`,
    `  out[idx] = ${storeValue(d, `(${computeType(d)})acc`)};`,
    '}',
  ], `cumulative ${k.op}, one thread per line of ${n}`);
}

export function pad(k: PadKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'pad');
  const rank = r.next('rank');
  const outShape = r.take(rank, 'outShape');
  const inShape = r.take(rank, 'inShape');
  const lo = r.take(rank, 'lo');
  const interior = r.take(rank, 'interior');
  r.done();
  const t = storageType(k.dtype);
  const n = product(outShape);
  const inStrides = stridesOf(inShape);
  const idx = indexType([n, product(inShape), ...lo, ...interior.map((x, d) => (x + 1) * (inShape[d]! + 1))]);
  const checks = outShape.flatMap((_, d) => {
    const step = interior[d]! + 1;
    const q = step === 1 ? `t${d}` : `t${d} / ${int(step)}`;
    return [
      `const jx_index t${d} = c${d} - ${int(lo[d]!)};`.replace('- -', '+ '),
      `inside = inside && t${d} >= 0${step === 1 ? '' : ` && t${d} % ${int(step)} == 0`} && ${q} < ${int(inShape[d]!)};`,
      `src += ${inStrides[d] === 1 ? q : `(${q}) * ${int(inStrides[d]!)}`};`,
    ];
  });
  return overElements(n, idx, [
    { name: 'out', dtype: k.dtype, output: true },
    { name: 'in', dtype: k.dtype, output: false },
    { name: 'pad_value', dtype: k.dtype, output: false },
  ], [`const ${t} value = pad_value[0];`], [
    ...unravel('jx_index', 'i', outShape, 'c'),
    'jx_index src = 0;',
    'bool inside = true;',
    ...checks,
    'out[i] = inside ? in[src] : value;',
  ], `pad, grid-stride over ${n} outputs`);
}

export function concatenate(k: ConcatenateKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'concatenate');
  const rank = r.next('rank');
  const axis = r.next('axis');
  const count = r.next('count');
  if (count !== k.count) throw new Error(`renderCuda: concatenate params say ${count} inputs, the kernel has ${k.count}`);
  const outShape = r.take(rank, 'outShape');
  const offsets = r.take(count + 1, 'axisOffsets');
  r.done();
  const n = product(outShape);
  const inner = product(outShape.slice(axis + 1));
  const total = outShape[axis]!;
  const idx = indexType([n]);
  const pieces: string[] = [];
  for (let c = 0; c < count; c++) {
    const width = offsets[c + 1]! - offsets[c]!;
    if (width === 0) continue;
    const src = `(o * ${int(width)} + a - ${int(offsets[c]!)}) * ${int(inner)} + q`;
    pieces.push(`${pieces.length ? 'else ' : ''}if (a < ${int(offsets[c + 1]!)}) out[i] = in${c}[${src}];`);
  }
  return overElements(n, idx, [
    { name: 'out', dtype: k.dtype, output: true },
    ...Array.from({ length: count }, (_, c) => ({ name: `in${c}`, dtype: k.dtype, output: false })),
  ], [], [
    `const jx_index o = i / ${int(Math.max(total * inner, 1))}, r = i % ${int(Math.max(total * inner, 1))};`,
    `const jx_index a = r / ${int(Math.max(inner, 1))}, q = r % ${int(Math.max(inner, 1))};`,
    ...pieces,
  ], `concatenate of ${count}, grid-stride over ${n} outputs`);
}

/** Lines reading the start indices start0.., each clamped like XLA into [0, shape - size] (the upper bound first). */
function clampedStarts(indexDtypes: DType[], shape: number[], size: number[], prefix: string): string[] {
  return indexDtypes.map((_, i) => {
    const hi = int(shape[i]! - size[i]!);
    return `const jx_i64 raw${i} = (jx_i64)${prefix}${i}[0]; const jx_index start${i} = (jx_index)(raw${i} > ${hi} ? (${hi} < 0 ? 0 : ${hi}) : (raw${i} < 0 ? 0 : raw${i}));`;
  });
}

export function dynamicSlice(k: DynamicSliceKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'dynamic_slice');
  const rank = r.next('rank');
  const shape = r.take(rank, 'operandShape');
  const size = r.take(rank, 'sliceSizes');
  r.done();
  const n = product(size);
  const idx = indexType([product(shape), n]);
  const strides = stridesOf(shape);
  const coords = coordNames('c', rank).map((c, d) => `(${c} + start${d})`);
  return overElements(n, idx, [
    { name: 'out', dtype: k.dtype, output: true },
    { name: 'in', dtype: k.dtype, output: false },
    ...k.indexDtypes.map((d, i) => ({ name: `index${i}`, dtype: d, output: false })),
  ], [...clampedStarts(k.indexDtypes, shape, size, 'index')], [
    ...unravel('jx_index', 'i', size, 'c'),
    `out[i] = in[${dotStrides(coords, strides)}];`,
  ], `dynamic_slice, grid-stride over ${n} outputs`);
}

export function dynamicUpdateSlice(k: DynamicUpdateSliceKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'dynamic_update_slice');
  const rank = r.next('rank');
  const shape = r.take(rank, 'operandShape');
  const size = r.take(rank, 'updateShape');
  r.done();
  const total = product(shape);
  const n = product(size);
  const idx = indexType([total, n]);
  const strides = stridesOf(shape);
  const window = coordNames('c', rank).map((c, d) => `${c} >= start${d} && ${c} < start${d} + ${int(size[d]!)}`);
  const dst = coordNames('u', rank).map((c, d) => `(${c} + start${d})`);
  // the copy skips the window and the update writes only the window, so the two loops never touch one element twice
  const lines = [
    `typedef ${idx} jx_index;`,
    ...clampedStarts(k.indexDtypes, shape, size, 'index'),
    'if (out != in) {',
    `  ${gridStride('jx_index', 'i', int(total))} {`,
    indent([...unravel('jx_index', 'i', shape, 'c'), `if (!(${window.join(' && ') || 'true'})) out[i] = in[i];`], 4),
    '  }',
    '}',
    `${gridStride('jx_index', 'i', int(n))} {`,
    indent([...unravel('jx_index', 'i', size, 'u'), `out[${dotStrides(dst, strides)}] = update[i];`], 2),
    '}',
  ];
  return {
    buffers: [
      { name: 'out', dtype: k.dtype, output: true, restrict: false },
      { name: 'in', dtype: k.dtype, output: false, restrict: false },
      { name: 'update', dtype: k.dtype, output: false },
      ...k.indexDtypes.map((d, i) => ({ name: `index${i}`, dtype: d, output: false })),
    ],
    body: indent(lines, 2),
    grid: [strideGrid(Math.max(total, n)), 1, 1],
    block: [BLOCK, 1, 1],
    strategy: `dynamic_update_slice, copy outside the window then write the window (${idx} indices)`,
  };
}

export function gather(k: GatherKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'gather');
  const opRank = r.next('operandRank');
  const outRank = r.next('outRank');
  const batchRank = r.next('batchRank');
  const vec = r.next('vectorLength');
  const opShape = r.take(opRank, 'operandShape');
  const slice = r.take(opRank, 'sliceSizes');
  const outShape = r.take(outRank, 'outShape');
  const outToOperand = r.take(outRank, 'outToOperand');
  const outToBatch = r.take(outRank, 'outToBatch');
  const startMap = r.take(vec, 'startIndexMap');
  r.done();
  const n = product(outShape);
  const batchShape = new Array<number>(batchRank).fill(1);
  outToBatch.forEach((b, d) => { if (b >= 0) batchShape[b] = outShape[d]!; });
  const batchStrides = stridesOf(batchShape);
  const opStrides = stridesOf(opShape);
  const nBatch = product(batchShape);
  const idx = indexType([n, product(opShape), nBatch * vec]);
  const cs = coordNames('c', outRank);
  const row = dotStrides(cs, outToBatch.map((b) => (b >= 0 ? batchStrides[b]! : 0)));
  // operand coordinate per axis: start (for mapped axes) + the offset coordinate of the output dim that maps to it
  const terms = opShape.map((_, axis) => {
    const parts: string[] = [];
    const v = startMap.indexOf(axis);
    if (v >= 0) parts.push(`s${v}`);
    const d = outToOperand.indexOf(axis);
    if (d >= 0) parts.push(`c${d}`);
    return parts.length ? `(${parts.join(' + ')})` : '0';
  });
  const fill = storeValue(k.dtype, literal(k.fillValue, k.dtype === 'bfloat16' || k.dtype === 'float16' ? 'float32' : k.dtype));
  return overElements(n, idx, [
    { name: 'out', dtype: k.dtype, output: true },
    { name: 'operand', dtype: k.dtype, output: false },
    { name: 'indices', dtype: k.indexDtype, output: false },
  ], [], [
    ...unravel('jx_index', 'i', outShape, 'c'),
    `const jx_index row = ${row};`,
    'bool inside = true;',
    ...startMap.map((axis, v) => {
      const hi = opShape[axis]! - slice[axis]!;
      return `jx_i64 s${v}_raw = (jx_i64)indices[row * ${vec} + ${v}]; if (s${v}_raw < 0 || s${v}_raw > ${int(hi)}) { inside = false; s${v}_raw = s${v}_raw < 0 ? 0 : ${int(hi)}; } const jx_index s${v} = (jx_index)s${v}_raw;`;
    }),
    k.mode === 'fill' ? `if (!inside) { out[i] = ${fill}; continue; }` : '(void)inside;',
    `out[i] = operand[${dotStrides(terms, opStrides)}];`,
  ], `gather (${k.mode}), grid-stride over ${n} outputs`);
}

/** The statement combining updates[u] into out[dst] (render/c.ts scatterWrite): integers wrap, float max/min propagate NaN. */
function scatterWrite(k: ScatterKernel, out: string): string {
  const c = computeType(k.dtype);
  if (k.combine === 'replace') return `${out}[dst] = updates[u];`;
  const old = loadValue(k.dtype, `${out}[dst]`);
  const up = loadValue(k.dtype, 'updates[u]');
  if (isFloating(k.dtype)) {
    const s = k.dtype === 'float64' ? 'd' : 'f';
    const value = { add: `__${s}add_rn(${old}, ${up})`, mul: `__${s}mul_rn(${old}, ${up})`, max: `jx_max${s}(${old}, ${up})`, min: `jx_min${s}(${old}, ${up})` }[k.combine];
    return `${out}[dst] = ${storeValue(k.dtype, `(${c})(${value})`)};`;
  }
  // bool: add is or and mul is and (a sum of 1 + 1 must not store 2)
  if (k.dtype === 'bool') return `${out}[dst] = (jx_u8)(${k.combine === 'add' || k.combine === 'max' ? `${out}[dst] | updates[u]` : `${out}[dst] & updates[u]`});`;
  switch (k.combine) {
    case 'add': return `${out}[dst] = (${c})((jx_u64)${out}[dst] + (jx_u64)updates[u]);`;
    case 'mul': return `${out}[dst] = (${c})((jx_u64)${out}[dst] * (jx_u64)updates[u]);`;
    case 'max': return `{ const ${c} x = updates[u]; if (x > ${out}[dst]) ${out}[dst] = x; }`;
    case 'min': return `{ const ${c} x = updates[u]; if (x < ${out}[dst]) ${out}[dst] = x; }`;
  }
}

const SCATTER_THREADS = 1024;

export function scatter(k: ScatterKernel, params: readonly number[], name: string): RenderedKernel {
  const r = new ParamReader(params, 'scatter');
  const opRank = r.next('operandRank');
  const upRank = r.next('updateRank');
  const vec = r.next('vectorLength');
  const nOperand = r.next('nOperand');
  const nUpdate = r.next('nUpdate');
  const opShape = r.take(opRank, 'operandShape');
  const upShape = r.take(upRank, 'updateShape');
  const upToOperand = r.take(upRank, 'updateToOperand');
  const upToBatch = r.take(upRank, 'updateToBatch');
  const dimsToOperand = r.take(vec, 'scatterDimsToOperandDims');
  const window = r.take(opRank, 'windowSizes');
  r.done();
  const batchDims = upShape.map((_, d) => d).filter((d) => upToBatch[d]! >= 0);
  const windowDims = upShape.map((_, d) => d).filter((d) => upToBatch[d]! < 0);
  const batchShape = new Array<number>(batchDims.length).fill(1);
  batchDims.forEach((d) => (batchShape[upToBatch[d]!] = upShape[d]!));
  const nBatch = product(batchShape);
  const windowShape = windowDims.map((d) => upShape[d]!);
  const nWindow = product(windowShape);
  const upStrides = stridesOf(upShape);
  const opStrides = stridesOf(opShape);
  const idx = indexType([nOperand, nUpdate, nBatch * vec]);
  const grid = Math.max(1, Math.min(Math.ceil(nOperand / (SCATTER_THREADS * 4)), SM_COUNT * 2));
  const multiBlock = grid > 1 && nUpdate > 0;
  const target = multiBlock ? 'vout' : 'out';

  // the destination of update (batch row b, window element w)
  const bs = batchShape.map((_, a) => `bc${a}`);
  const ws = windowDims.map((_, a) => `wc${a}`);
  const uTerms = upShape.map((_, d) => (upToBatch[d]! >= 0 ? `bc${upToBatch[d]}` : `wc${windowDims.indexOf(d)}`));
  const dstTerms = opShape.map((_, axis) => {
    const parts: string[] = [];
    const v = dimsToOperand.indexOf(axis);
    if (v >= 0) parts.push(`s${v}`);
    const d = upToOperand.indexOf(axis);
    if (d >= 0) parts.push(`wc${windowDims.indexOf(d)}`);
    return parts.length ? `(${parts.join(' + ')})` : '0';
  });
  const apply = [
    `const jx_index u = ${dotStrides(uTerms, upStrides)};`,
    'bool inside = true;',
    ...dimsToOperand.map((axis, v) => {
      const hi = opShape[axis]! - window[axis]!;
      return `jx_i64 s${v}_raw = (jx_i64)indices[b * ${vec} + ${v}]; if (s${v}_raw < 0 || s${v}_raw > ${int(hi)}) { inside = false; s${v}_raw = s${v}_raw < 0 ? 0 : ${int(hi)}; } const jx_index s${v} = (jx_index)s${v}_raw;`;
    }),
    k.mode === 'fill' ? 'if (inside) {' : '(void)inside; {',
    `  const jx_index dst = ${dotStrides(dstTerms, opStrides)};`,
    `  ${scatterWrite(k, target)}`,
    '}',
  ];
  // Windows of different updates can only meet at the same window element when every scattered axis has window size 1:
  // then each thread owns window elements and applies their updates in batch order; otherwise one thread goes in update order.
  const independent = dimsToOperand.every((axis) => window[axis] === 1);
  const updates = nUpdate === 0
    ? []
    : independent
    ? [
        `for (jx_index w = threadIdx.x; w < ${int(nWindow)}; w += ${SCATTER_THREADS}) {`,
        indent([
          ...unravel('jx_index', 'w', windowShape, 'wc'),
          `for (jx_index b = 0; b < ${int(nBatch)}; ++b) {`,
          indent([...unravel('jx_index', 'b', batchShape, 'bc'), ...apply], 2),
          '}',
        ], 2),
        '}',
      ]
    : [
        'if (threadIdx.x == 0) {',
        indent([
          `for (jx_index u0 = 0; u0 < ${int(nUpdate)}; ++u0) {`,
          indent([
            ...unravel('jx_index', 'u0', upShape, 'uc'),
            ...bs.map((b, a) => `const jx_index ${b} = uc${batchDims[a]};`),
            ...ws.map((w, a) => `const jx_index ${w} = uc${windowDims[a]};`),
            `const jx_index b = ${dotStrides(bs, stridesOf(batchShape))};`,
            ...apply,
          ], 2),
          '}',
        ], 2),
        '}',
      ];
  const lines = [
    `typedef ${idx} jx_index;`,
    'if (out != in) {',
    `  ${gridStride('jx_index', 'i', int(nOperand), SCATTER_THREADS)} out[i] = in[i];`,
    '}',
    ...(multiBlock
      ? [
          '__shared__ int jx_last;',
          '__threadfence();',
          '__syncthreads();',
          `if (threadIdx.x == 0) jx_last = atomicAdd(&jx_ticket_${name}, 1u) == gridDim.x - 1;`,
          '__syncthreads();',
          'if (!jx_last) return; // the last block to finish copying applies the updates',
          '__threadfence();',
          `volatile ${storageType(k.dtype)} *vout = out; // other blocks wrote the copy: read it past the L1 cache`,
        ]
      : nUpdate > 0 ? ['__syncthreads();'] : []),
    ...updates,
    ...(multiBlock ? ['__syncthreads();', `if (threadIdx.x == 0) jx_ticket_${name} = 0;`] : []),
  ];
  return {
    buffers: [
      { name: 'out', dtype: k.dtype, output: true, restrict: false },
      { name: 'in', dtype: k.dtype, output: false, restrict: false },
      { name: 'indices', dtype: k.indexDtype, output: false },
      { name: 'updates', dtype: k.dtype, output: false },
    ],
    body: indent(lines, 2),
    ...(multiBlock ? { globals: `__device__ jx_u32 jx_ticket_${name};` } : {}),
    grid: [grid, 1, 1],
    block: [SCATTER_THREADS, 1, 1],
    strategy: `scatter ${k.combine} (${k.mode}): ${multiBlock ? `${grid} blocks copy, the last applies` : `${grid} block(s) copy and one applies`} the updates ${independent ? 'in parallel over window elements' : 'in order on one thread'} (${idx} indices)`,
  };
}
