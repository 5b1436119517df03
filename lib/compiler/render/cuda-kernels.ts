// The CUDA target of the kernels written once in indexed.ts (pad, dynamic
// slices, gather, cumulative scans: params baked in as constant scalars and
// arrays, so the loops over axes unroll into straight-line coordinate
// arithmetic; elements grid-stride), and the CUDA-specific renderings of
// concatenate (one thread per element) and scatter (applying its updates in
// order: repeated indices, last write wins, floats combine in update order).
import { isFloating } from '../../core/dtype.js';
import type { ConcatenateKernel, ScatterKernel } from '../kernel-ir.js';
import {
  BLOCK, type BufferArg, type RenderedKernel, SM_COUNT, dotStrides, gridStride, indent, indexType, int, product,
  strideGrid, unravel,
} from './cuda-common.js';
import { stridesOf } from '../../core/shape.js';
import { CUDA_TYPES } from './expr.js';
import { ParamReader } from './cuda-params.js';
import { type IndexedKernel, indexedSpec } from './indexed.js';

const { computeType, loadValue, storageType, storeValue } = CUDA_TYPES;


/** A grid-stride kernel over n output elements with `body` per element index i. */
function overElements(n: number, idx: string, buffers: BufferArg[], setup: string[], body: string[], strategy: string): RenderedKernel {
  const lines = [`typedef ${idx} jx_index;`, ...setup, `${gridStride('jx_index', 'i', int(n))} {`, indent(body, 2), '}'];
  return { buffers, body: indent(lines, 2), grid: [strideGrid(n), 1, 1], block: [BLOCK, 1, 1], strategy: `${strategy} (${idx} indices)` };
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

/** An indexed.ts kernel for the exact params: each param a constant, each loop grid-stride over its elements. */
export function indexed(k: IndexedKernel, params: readonly number[]): RenderedKernel {
  const spec = indexedSpec(k, CUDA_TYPES);
  const r = new ParamReader(params, k.kind);
  const scalars = new Map<string, number>();
  const arrays = new Map<string, number[]>();
  for (const p of spec.params) {
    if (p.length === undefined) scalars.set(p.name, r.next(p.name));
    else arrays.set(p.name, r.take(scalars.get(p.length)!, p.name));
  }
  r.done();
  const countOf = (names: readonly string[]) => product(names.map((n) => scalars.get(n) ?? product(arrays.get(n)!)));
  const counts = spec.loops.map((l) => countOf(l.count));
  const scalarProduct = product([...scalars.values()].map((v) => Math.max(Math.abs(v), 1)));
  const idx = indexType([...counts.map((c) => c * scalarProduct), ...[...arrays.values()].map((a) => product(a.map((v) => Math.max(Math.abs(v), 1))))]);
  const lines = [
    `typedef ${idx} jx_index;`,
    ...[...scalars].map(([name, v]) => `const jx_index ${name} = ${int(v)};`),
    ...[...arrays].map(([name, v]) => `const jx_index ${name}[${Math.max(v.length, 1)}] = {${v.length ? v.map(int).join(', ') : '0'}};`),
    ...spec.setup,
  ];
  spec.loops.forEach((loop, j) => {
    const body = [`${gridStride('jx_index', 'i', int(counts[j]!))} {`, indent([...loop.body], 2), '}'];
    lines.push(...(loop.when ? [`if (${loop.when}) {`, indent(body, 2), '}'] : body));
  });
  const work = Math.max(1, ...counts);
  return {
    buffers: spec.buffers.map((b) => ({ ...b })),
    body: indent(lines, 2),
    grid: [strideGrid(work), 1, 1],
    block: [BLOCK, 1, 1],
    strategy: `${spec.label}, grid-stride over ${counts.join(' then ')} (${idx} indices)`,
  };
}
