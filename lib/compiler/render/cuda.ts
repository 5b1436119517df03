// The CUDA renderer: kernel IR + the exact run-time params → one CUDA C++
// translation unit for NVRTC, with one `extern "C" __global__` entry taking a
// pointer per buffer in the kernel IR's buffer order. Every jit program has
// static shapes, so sizes and strides are baked in as constants (as XLA does):
// divisions by them become multiply-shifts and loops unroll; the aligned
// vector accesses follow PyTorch's aligned_vector. Semantics are the
// C renderer's (render/c.ts), case for case; expr.ts renders the scalar
// expressions for both (CUDA_DIALECT here) and cuda/kernels/jaxon_cuda.h,
// over jaxon_common.h, holds the helpers both backends share. The vector
// width and the reduction strategy are named decisions (cuda-decisions.ts),
// recorded in each kernel's header.
//
// Launch shapes (H100: 132 SMs, 2048 threads per SM; see cuda-common.ts):
//  - Elementwise, pad, concatenate, gather, dynamic slices, cumulative lines:
//    grid-stride loops, block 256, grid = min(ceil(work / 256), 132 * 8)
//    (one full wave). Elementwise kernels move V = 16 / (widest item) elements
//    per thread with 16-byte vector loads and stores when every contiguous
//    buffer's alignment allows it (and, with strided inputs or iota, when the
//    innermost axis is a multiple of V), then finish the n % V tail with
//    scalar code; otherwise they are scalar. Expressions calling libm-sized
//    functions (exp, sin, pow, ...) use at most 4 lanes: they are closer to
//    compute-bound, and 8 or 16 unrolled copies only grow the code.
//  - Reductions (cuda-reduce.ts) pick one of: a thread per output (rows of at
//    most 32), a warp per output (rows up to 1024; shuffle butterfly), a
//    block of 256 per output (longer rows; shuffles then shared memory), a
//    32x8 tile per 32 outputs for column reductions (the reduced axis is not
//    the contiguous one), and a deterministic two-stage split of long rows
//    over several blocks when the outputs alone cannot fill the GPU (full
//    reductions): each block writes a partial, the last block of each output
//    (atomic ticket) merges the partials in a fixed order.
//  - Dot: float32, bfloat16 and float16 on tensor cores (cuda-gemm.ts:
//    mma.sync, cp.async pipelines, block / warp tiles and stages chosen per
//    shape, split-K for skinny shapes, f32 accumulation); integers and
//    float64 on the SIMT kernel (cuda-dot.ts: 64x64 output tiles, 16-deep k
//    steps, 256 threads with 4x4 outputs each). Both run the epilogue on
//    each product element as it is stored.
//  - Scatter: all blocks copy the operand, the last block applies the updates
//    in XLA's sequential order (parallel over window elements when windows of
//    different updates can only meet at the same window element).
// Index arithmetic is 32-bit when every size and offset fits in int32, 64-bit
// otherwise. Shared memory is static (sharedMemBytes, the dynamic amount, is
// 0) except in the tensor-core GEMM, whose pipeline stages are dynamic. Two-stage reductions and scatter keep their partials and
// ticket counters in module-scope __device__ arrays named after the kernel:
// launches of one loaded module must not overlap (one compute stream).
// Float arithmetic uses the __f*_rn intrinsics, so --fmad and --prec-div
// change nothing; --use_fast_math (approximate libm) and --ftz=true (flushed
// subnormals) would, so the runtime must not pass them.
import { isFloating } from '../../core/dtype.js';
import { primitivesWith } from '../../core/traits.js';
import { kernelJson, kernelName, mayBeWrittenInPlace } from '../kernel-ir.js';
import type { ElementwiseKernel, Expr, Kernel } from '../kernel-ir.js';
import { CUDA_DIALECT, CUDA_TYPES, ExprRenderer, exprsUseIota, someNode } from './expr.js';
import {
  BLOCK, type BufferArg, type RenderedKernel, type TensorMapParam, dotStrides, gridStride, indent, indexType, int, parameterList, strideGrid,
  unravel, viewReach,
} from './cuda-common.js';
import { ParamReader } from './cuda-params.js';
import { reduce } from './cuda-reduce.js';
import { type GemmTarget, dot } from './cuda-dot.js';
import { indexed } from './cuda-indexed.js';
import { linalgBufferCount } from './linalg-eig.js';
import { convCuda } from './conv.js';
import { jacobiCuda, linalgCuda, qrCuda } from './linalg-targets.js';
import { linalgBlockedCuda } from './linalg-cuda-blocked.js';
import { jacobiMultiblockBuffers, jacobiMultiblockCuda } from './linalg-jacobi-cuda.js';
import { qrBlockedCuda } from './linalg-qr-cuda-blocked.js';
import { decisionComment, elementwiseVectorWidth, forcedConvPath, gridStrideLaunch, tmaAllowed, transposeTiling } from './cuda-decisions.js';

const { computeType, loadValue, storageType, storeValue } = CUDA_TYPES;

export interface CudaKernelSource {
  /** unique C identifier of the entry point (kernel name + a short hash of the specialization) */
  name: string;
  /** a complete CUDA C++ translation unit: no #include, one `extern "C" __global__` entry */
  source: string;
  grid: [number, number, number];
  block: [number, number, number];
  sharedMemBytes: number;
  /** tensor-map parameters the launch encodes after the buffers' pointers (cuda-common.ts TensorMapParam) */
  tensorMaps?: TensorMapParam[];
}

export interface RenderCudaOptions {
  name?: string;
  /** byte alignment of each buffer's address, in the kernel's buffer order (default 16 for all) */
  alignments?: number[];
  /** for dots: the GPU's compute capability, a forced GEMM path, an autotuned tiling (cuda-dot.ts); for convs the compute
   * capability and a forced path, simt or mma (conv.ts ConvTarget) */
  gemm?: GemmTarget;
}

const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The number of buffers a kernel takes (its ABI arity). */
export function bufferCount(k: Kernel): number {
  switch (k.kind) {
    case 'elementwise': return k.outputs.length + k.inputs.length;
    case 'reduce': {
      const f = k.fused;
      return f ? f.outputs.length + f.sideOutputs.length + (f.finalOutputs?.length ?? 0) + f.inputs.length : 2;
    }
    case 'cumulative': return k.stage === 'carry_scan' ? 1 : k.stage === 'chunk_scan' ? 3 : 2;
    case 'dot': return k.epilogue ? k.epilogue.outputs.length + 2 + k.epilogue.inputs.length : 3;
    case 'pad': return 3;
    case 'concatenate': return 1 + k.count;
    case 'dynamic_slice': return 2 + k.indexDtypes.length;
    case 'dynamic_update_slice': return 3 + k.indexDtypes.length;
    case 'gather': return 3;
    case 'scatter': return 4;
    case 'orthogonal': return k.jacobi ? jacobiMultiblockBuffers(k).length : k.cudaStage ? 8 : linalgBufferCount(k);
    case 'linalg': return (k.op === 'lu' ? 4 : k.op === 'triangular_solve' ? 3 : 2) + (k.blocked ? 1 : 0);
    case 'conv': return 3;
    case 'sort': return k.stage === 'top_k' ? 4 : k.stage === 'sort_rows' ? 2 * k.dtypes.length : k.stage === 'rank' ? 1 + k.dtypes.length : k.stage === 'merge' || k.stage === 'order' ? 2 + k.dtypes.length : 2 * k.dtypes.length + 1;
  }
}

/** Renders a kernel for the exact run-time params (sizes and strides become compile-time constants). */
export function renderCuda(kernel: Kernel, params: readonly number[], options: RenderCudaOptions = {}): CudaKernelSource {
  for (const key of Object.keys(options)) {
    if (key !== 'name' && key !== 'alignments' && key !== 'gemm') throw new TypeError(`renderCuda: unknown option ${JSON.stringify(key)} (expected name, alignments, gemm)`);
  }
  if (!globalThis.Array.isArray(params) || params.some((p) => !Number.isSafeInteger(p))) {
    throw new TypeError(`renderCuda: params must be an array of integers, got ${JSON.stringify(params)}`);
  }
  const count = bufferCount(kernel);
  const alignments = options.alignments ?? new globalThis.Array<number>(count).fill(16);
  if (!globalThis.Array.isArray(alignments) || alignments.length !== count || alignments.some((a) => !Number.isInteger(a) || a < 1 || (a & (a - 1)) !== 0)) {
    throw new TypeError(`renderCuda: alignments must be ${count} powers of two (one per buffer of ${kernel.kind} kernel), got ${JSON.stringify(alignments)}`);
  }
  const gemm = kernel.kind === 'dot' || kernel.kind === 'conv' ? options.gemm ?? {} : {};
  const specialization = `${exactJson(kernel)}|${params.join(',')}|${alignments.join(',')}${Object.keys(gemm).length ? `|${JSON.stringify(gemm)}` : ''}${kernel.kind === 'conv' && forcedConvPath() ? `|conv ${forcedConvPath()}` : ''}${kernel.kind === 'dot' && !tmaAllowed() ? '|no tma' : ''}`;
  const name = options.name ?? `${kernelName(kernel).slice(0, 48).replace(/_+$/, '')}_${shortHash(specialization)}`;
  if (typeof name !== 'string' || !C_IDENTIFIER.test(name)) {
    throw new TypeError(`renderCuda: name must be a C identifier, got ${JSON.stringify(options.name)}`);
  }
  const r = renderKernel(kernel, params, alignments, name, gemm);
  const threads = r.block[0] * r.block[1] * r.block[2];
  const sharedMemBytes = r.sharedMemBytes ?? 0;
  const header = [
    `// jaxon CUDA kernel ${name}: ${r.strategy}`,
    `// kernel: ${kernelJson(kernel)}`,
    `// params: ${JSON.stringify(params)}`,
    `// alignments: ${JSON.stringify(alignments)}`,
    `// launch: grid ${JSON.stringify(r.grid)}, block ${JSON.stringify(r.block)}, dynamic shared memory ${sharedMemBytes} bytes`,
    ...(r.decisions ?? []).map(decisionComment),
  ].join('\n');
  const source = `${header}
#include "jaxon_cuda.h"
${r.globals ? `${r.globals}\n` : ''}extern "C" __global__ void __launch_bounds__(${threads}) ${name}(${parameterList(r.buffers)}${(r.tensorMaps ?? []).map((m) => `, const __grid_constant__ jx_tensor_map ${m.name}`).join('')}) {
${r.body}
}
`;
  return { name, source, grid: r.grid, block: r.block, sharedMemBytes, ...(r.tensorMaps?.length ? { tensorMaps: r.tensorMaps } : {}) };
}

function renderKernel(k: Kernel, params: readonly number[], alignments: number[], name: string, gemm: GemmTarget): RenderedKernel {
  switch (k.kind) {
    case 'elementwise': return elementwise(k, params, alignments);
    case 'reduce': return reduce(k, params, name);
    case 'cumulative': return indexed(k, params, name);
    case 'dot': return dot(k, params, alignments, name, gemm);
    case 'pad': return indexed(k, params, name);
    case 'concatenate': return indexed(k, params, name);
    case 'dynamic_slice': return indexed(k, params, name);
    case 'dynamic_update_slice': return indexed(k, params, name);
    case 'gather': return indexed(k, params, name);
    case 'scatter': return indexed(k, params, name);
    case 'sort': return indexed(k, params, name);
    case 'orthogonal': return k.jacobi ? jacobiMultiblockCuda(k, params) : k.op !== 'qr' ? jacobiCuda(k, params) : k.cudaStage ? qrBlockedCuda(k, params) : qrCuda(k, params);
    case 'linalg': return k.blocked ? linalgBlockedCuda(k, params) : linalgCuda(k, params);
    case 'conv': return convCuda(k, params, name, alignments, { ...(gemm.sm !== undefined ? { sm: gemm.sm } : {}), ...(gemm.path === 'simt' || gemm.path === 'mma' ? { path: gemm.path } : {}) });
  }
}

/**
 * kernelJson with every number exact: JSON writes NaN and infinities as null and -0 as 0, so kernels differing only
 * in such a literal (a -inf max identity vs a NaN fill) would share a name.
 */
function exactJson(kernel: Kernel): string {
  const seen = new Map<object, number>();
  return JSON.stringify(kernel, function (this: unknown, _key: string, value: unknown) {
    if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : { $number: Object.is(value, -0) ? '-0' : String(value) };
    if (value === null || typeof value !== 'object' || globalThis.Array.isArray(value)) return value;
    if ((value as { $number?: string }).$number !== undefined) return value;
    const known = seen.get(value);
    if (known !== undefined) return { $ref: known };
    seen.set(value, seen.size);
    return value;
  });
}

/** 12 hex digits of two FNV-1a hashes: distinct specializations get distinct names. */
function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
    b = (b ^ (b >>> 15)) >>> 0;
  }
  return (a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0')).slice(0, 12);
}

/** Ops rendered as libm-sized calls (core/traits.ts). */
const TRANSCENDENTAL = primitivesWith('libmCall');

/** Whether any expr calls a libm-sized function. */
function exprsUseTranscendentals(exprs: readonly Expr[]): boolean {
  return someNode(exprs, (e) => (e.op === 'unary' || e.op === 'binary') && TRANSCENDENTAL.has(e.name) && isFloating(e.dtype));
}

function elementwise(k: ElementwiseKernel, params: readonly number[], alignments: number[]): RenderedKernel {
  const r = new ParamReader(params, 'elementwise');
  const n = r.next('n');
  const rank = r.next('rank');
  const shape = r.take(rank, 'shape');
  const strided = k.inputs.map((inp, i) => (inp.access === 'strided' ? i : -1)).filter((i) => i >= 0);
  const views = new Map(strided.map((i) => {
    const offset = r.next(`offset of input ${i}`);
    return [i, { offset, strides: r.take(rank, `strides of input ${i}`) }] as const;
  }));
  r.done();
  const nOut = k.outputs.length;
  // plan.ts may write an output over a contiguous (or one-element) input it reads at the same index, so those and
  // the outputs may alias: no __restrict__ on them (with it, the compiler may load after the aliasing store)
  const buffers: BufferArg[] = [
    ...k.outputs.map((o, j) => ({ name: `out${j}`, dtype: o.dtype, output: true, restrict: false })),
    ...k.inputs.map((inp, i) => ({ name: `in${i}`, dtype: inp.dtype, output: false, restrict: !mayBeWrittenInPlace(inp.access) })),
  ];
  const tiled = transposedTiles(k, n, shape, views, buffers);
  if (tiled) return tiled;
  // why no tiles, where it was a question (a strided input)
  const tiling = views.size ? transposeTiling({ shape, views: [...views.entries()].map(([i, v]) => [i, v.strides] as const) }) : null;
  const iota = exprsUseIota(k.outputs.map((o) => o.expr));
  const needsCoords = strided.length > 0 || iota;
  const contiguous = [
    ...k.outputs.map((o, j) => ({ dtype: o.dtype, alignment: alignments[j]! })),
    ...k.inputs.flatMap((inp, i) => (inp.access === 'contiguous' ? [{ dtype: inp.dtype, alignment: alignments[nOut + i]! }] : [])),
  ];
  const widthDecision = elementwiseVectorWidth({
    buffers: contiguous, libmCalls: exprsUseTranscendentals(k.outputs.map((o) => o.expr)), needsCoords, innermost: rank === 0 ? null : shape[rank - 1]!, n,
  });
  const v = widthDecision.choice;
  const idx = indexType([n, ...[...views.values()].map((view) => viewReach(shape, view.strides, view.offset))]);
  const coords = shape.map((_, d) => `c${d}`);
  const innermost = rank - 1;

  const scalars = k.inputs.flatMap((inp, i) => (inp.access === 'scalar' ? [`const ${computeType(inp.dtype)} s${i} = ${loadValue(inp.dtype, `in${i}[0]`)};`] : []));
  const strideLines = (): string[] => [
    ...(needsCoords ? unravel('jx_index', 'i', shape, 'c') : []),
    ...strided.map((i) => `const jx_index off${i} = ${dotStrides(coords, views.get(i)!.strides, views.get(i)!.offset)};`),
  ];

  /** One element's statements; `lane` is the vector lane expression (null: scalar code). */
  const element = (lane: string | null): string[] => {
    const renderer = new ExprRenderer(CUDA_DIALECT, 
      (i) => {
        const inp = k.inputs[i]!;
        if (inp.access === 'scalar') return `s${i}`;
        if (inp.access === 'contiguous') return loadValue(inp.dtype, lane ? `a${i}.v[${lane}]` : `in${i}[i]`);
        const s = views.get(i)!.strides[innermost] ?? 0;
        return loadValue(inp.dtype, lane && s !== 0 ? `in${i}[off${i} + ${lane} * ${int(s)}]` : `in${i}[off${i}]`);
      },
      (axis) => (lane && axis === innermost ? `(c${axis} + ${lane})` : `c${axis}`),
    );
    const results = k.outputs.map((o) => renderer.render(o.expr));
    const stores = k.outputs.map((o, j) => (lane ? `r${j}.v[${lane}]` : `out${j}[i]`) + ` = ${storeValue(o.dtype, results[j]!)};`);
    return [...renderer.lines, ...stores];
  };

  const lines: string[] = [`typedef ${idx} jx_index;`];
  if (n === 0) {
    lines.push('return; // no elements');
  } else {
    lines.push(...scalars);
    // with one lane there is no vector loop: the scalar loop below covers every element
    const vectors = v > 1 ? Math.floor(n / v) : 0;
    if (v > 1) {
      const vec = (t: string) => `jx_vec<${t}, ${v}>`;
      lines.push(`${gridStride('jx_index', 'g', int(vectors))} {`);
      lines.push(
        indent([
          `const jx_index i = g * ${v};`,
          ...strideLines(),
          ...k.inputs.flatMap((inp, i) => (inp.access === 'contiguous' ? [`const ${vec(storageType(inp.dtype))} a${i} = *reinterpret_cast<const ${vec(storageType(inp.dtype))} *>(in${i} + i);`] : [])),
          ...k.outputs.map((o, j) => `${vec(storageType(o.dtype))} r${j};`),
          '#pragma unroll',
          `for (int q = 0; q < ${v}; ++q) {`,
          indent(element('q'), 2),
          '}',
          ...k.outputs.map((o, j) => `*reinterpret_cast<${vec(storageType(o.dtype))} *>(out${j} + i) = r${j};`),
        ], 2),
      );
      lines.push('}');
    }
    if (vectors * v < n) {
      lines.push(`${gridStride('jx_index', 'i', int(n), BLOCK, int(vectors * v))} {`);
      lines.push(indent([...strideLines(), ...element(null)], 2));
      lines.push('}');
    }
  }
  const work = v > 1 ? Math.floor(n / v) + (n % v) : n;
  const launch = gridStrideLaunch(work, BLOCK, v > 1 ? `${v}-wide vectors and leftover elements` : 'elements');
  return {
    buffers,
    body: indent(lines, 2),
    grid: [launch.choice.grid, 1, 1],
    block: [launch.choice.block, 1, 1],
    strategy: v > 1 ? `elementwise, grid-stride, ${v}-wide vector loads (${idx} indices)` : `elementwise, grid-stride, scalar (${idx} indices)`,
    decisions: [widthDecision, launch, ...(tiling ? [tiling] : [])],
  };
}

/** Edge of the square tiles a transposing elementwise kernel stages through shared memory. */
const TILE = 32;
/** Rows of a tile one pass of the 32x8 thread block covers. */
const TILE_ROWS = BLOCK / TILE;

/**
 * An elementwise kernel reading an input transposed (contiguous along an outer output axis `a`, strided along the
 * innermost one) as 32x32 tiles of the (a, innermost) plane: each block reads a tile of every such input with
 * consecutive threads on consecutive addresses (along a) into shared memory (rows padded to 33 words, so neither
 * phase has bank conflicts), then computes and writes the tile along the innermost axis, also coalesced. A
 * grid-stride loop over tiles (one per block at a time) covers any size. Null when no input is transposed or the
 * plane is too small for tiles to pay.
 */
function transposedTiles(
  k: ElementwiseKernel, n: number, shape: readonly number[], views: ReadonlyMap<number, { offset: number; strides: readonly number[] }>, buffers: BufferArg[],
): RenderedKernel | null {
  const rank = shape.length;
  const last = rank - 1;
  const decision = transposeTiling({ shape, views: [...views.entries()].map(([i, v]) => [i, v.strides] as const) });
  if (!decision.choice) return null;
  const { axis: a, inputs: tiledInputs } = decision.choice;
  const others = shape.map((_, d) => d).filter((d) => d !== a && d !== last);
  const [sa, sl] = [shape[a]!, shape[last]!];
  const [ta, tl] = [Math.ceil(sa / TILE), Math.ceil(sl / TILE)];
  const tiles = ta * tl * others.reduce((p, d) => p * shape[d]!, 1);
  const launch = gridStrideLaunch(tiles, 1, 'tiles');
  const idx = indexType([n, tiles * TILE * TILE, ...[...views.values()].map((view) => viewReach(shape, view.strides, view.offset))]);
  const rowMajor = shape.map((_, d) => shape.slice(d + 1).reduce((p, x) => p * x, 1));
  const coords = shape.map((_, d) => `c${d}`);
  const otherCoord = (d: number) => `o${others.indexOf(d)}`;
  /** The coordinates of element (A, L) of the tile, declared as c0..c{rank-1}. */
  const coordLines = (A: string, L: string) => shape.map((_, d) => `const jx_index c${d} = ${d === a ? A : d === last ? L : otherCoord(d)};`);
  const loads = tiledInputs.map((i) => {
    const v = views.get(i)!;
    return [
      `for (int k = 0; k < ${TILE}; k += ${TILE_ROWS}) {`,
      indent([
        `const jx_index A = ta * ${TILE} + tx, L = tl * ${TILE} + ty + k;`,
        `if (A < ${int(sa)} && L < ${int(sl)}) {`,
        indent([...coordLines('A', 'L'), `jx_t${i}[tx][ty + k] = in${i}[${dotStrides(coords, v.strides, v.offset)}];`], 2),
        '}',
      ], 2),
      '}',
    ].join('\n');
  });
  const renderer = new ExprRenderer(CUDA_DIALECT, 
    (i) => {
      const inp = k.inputs[i]!;
      if (inp.access === 'scalar') return `s${i}`;
      if (inp.access === 'contiguous') return loadValue(inp.dtype, `in${i}[i]`);
      if (tiledInputs.includes(i)) return loadValue(inp.dtype, `jx_t${i}[ty + k][tx]`);
      const v = views.get(i)!;
      return loadValue(inp.dtype, `in${i}[${dotStrides(coords, v.strides, v.offset)}]`);
    },
    (axis) => `c${axis}`,
  );
  const results = k.outputs.map((o) => renderer.render(o.expr));
  const stores = k.outputs.map((o, j) => `out${j}[i] = ${storeValue(o.dtype, results[j]!)};`);
  const lines = [
    `typedef ${idx} jx_index;`,
    ...k.inputs.flatMap((inp, i) => (inp.access === 'scalar' ? [`const ${computeType(inp.dtype)} s${i} = ${loadValue(inp.dtype, `in${i}[0]`)};`] : [])),
    ...tiledInputs.map((i) => `__shared__ ${storageType(k.inputs[i]!.dtype)} jx_t${i}[${TILE}][${TILE + 1}];`),
    `const int tx = threadIdx.x % ${TILE}, ty = threadIdx.x / ${TILE};`,
    `for (jx_index tile = blockIdx.x; tile < ${int(tiles)}; tile += gridDim.x) {`,
    indent([
      `const jx_index tl = tile % ${int(tl)};`,
      `jx_index rest = tile / ${int(tl)};`,
      `const jx_index ta = rest % ${int(ta)};`,
      `rest /= ${int(ta)};`,
      ...unravel('jx_index', 'rest', others.map((d) => shape[d]!), 'o'),
      ...loads,
      '__syncthreads();',
      `for (int k = 0; k < ${TILE}; k += ${TILE_ROWS}) {`,
      indent([
        `const jx_index A = ta * ${TILE} + ty + k, L = tl * ${TILE} + tx;`,
        `if (A < ${int(sa)} && L < ${int(sl)}) {`,
        indent([...coordLines('A', 'L'), `const jx_index i = ${dotStrides(coords, rowMajor)};`, ...renderer.lines, ...stores], 2),
        '}',
      ], 2),
      '}',
      '__syncthreads(); // the tiles are reloaded for the next tile',
    ], 2),
    '}',
  ];
  return {
    buffers,
    body: indent(lines, 2),
    grid: [launch.choice.grid, 1, 1],
    block: [launch.choice.block, 1, 1],
    strategy: `elementwise, ${tiledInputs.length} transposed input(s) through ${TILE}x${TILE} shared-memory tiles of axes ${a} and ${last} (${idx} indices)`,
    decisions: [decision, launch],
  };
}
