// Kernel choices as named decisions (issue 14): each takes the few facts it
// depends on and returns its choice with the reason, so a test can ask "what
// would the renderer pick here, and why?" without rendering, and every CUDA
// kernel's header records its decisions (`// decision <name>: <choice>
// (<why>)`), which `Compiled.kernels()` shows.
import { type DType, itemsize } from '../../core/dtype.js';
import { BLOCK, MAX_GRID, SM_COUNT, TARGET_BLOCKS, strideGrid } from './cuda-common.js';

export interface Decision<T> {
  /** What was decided: 'vector width', 'reduction strategy', ... */
  readonly name: string;
  readonly choice: T;
  /** Why, in a few words. */
  readonly why: string;
}

/** The header line recording a decision. */
export function decisionComment(d: Decision<unknown>): string {
  return `// decision ${d.name}: ${describeChoice(d.choice)} (${d.why})`;
}

function describeChoice(choice: unknown): string {
  if (choice === null) return 'none';
  if (typeof choice !== 'object') return String(choice);
  const c = choice as ReductionStrategy | DotTiling | TransposeTiling | GridStrideLaunch | GemmTiling | WgmmaTiling | WgmmaProducer;
  if ('kind' in c) return describeStrategy(c);
  if ('lhs' in c) return `lhs ${describeLoad(c.lhs)}, rhs ${describeLoad(c.rhs)}`;
  if ('blockM' in c) return describeGemmTiling(c);
  if ('blockN' in c) return `128x${c.blockN}x64 block tiles, 1 producer and 2 consumer warpgroups (m64n${c.blockN}k16), ${c.stages} stages, persistent`;
  if ('tileM' in c) return `${c.tileM}x${c.tileN} output tiles, ${c.tileK}-deep k steps, ${c.threads} threads`;
  if ('axis' in c) return `32x32 tiles of axes ${c.axis} and innermost, input(s) ${c.inputs.join(', ')}`;
  return `grid ${c.grid} x block ${c.block}`;
}

/** Launch shape of a grid-stride kernel over `work` items (vectors, elements or tiles). */
export interface GridStrideLaunch {
  grid: number;
  block: number;
}

/**
 * Blocks of 256 threads (8 warps: enough to hide latency, small enough for 8 blocks per SM), `perBlock` items per
 * block at a time (256: one per thread; 1: a tile per block), at most 8 blocks per SM: a grid-stride loop covers
 * the rest, so huge arrays do not pay for launching blocks that only start and stop.
 */
export function gridStrideLaunch(items: number, perBlock: number, what: string): Decision<GridStrideLaunch> {
  const grid = strideGrid(items, perBlock);
  const capped = Math.ceil(items / perBlock) > MAX_GRID;
  return {
    name: 'launch',
    choice: { grid, block: BLOCK },
    why: `${items} ${what}, ${perBlock === BLOCK ? 'one per thread' : `${perBlock} per block`}${capped ? `: ${MAX_GRID} blocks (8 per SM) stride over the rest` : ''}`,
  };
}

/** Tiles of the shared-memory dot kernel (cuda-dot.ts). */
export interface DotTiling {
  tileM: number;
  tileN: number;
  tileK: number;
  threads: number;
}

/**
 * The classic tiled GEMM: 64x64 output tiles (each operand element loaded from global memory 64 times fewer than
 * a naive kernel), 16-deep k steps through shared memory, 256 threads computing 4x4 outputs each. One shape for
 * every size until tensor cores (issue 17); the why says when a dimension leaves most of a tile idle.
 */
export function dotTiling(f: { M: number; N: number; K: number }): Decision<DotTiling> {
  const choice = { tileM: 64, tileN: 64, tileK: 16, threads: 256 };
  const idle = [f.M < choice.tileM ? `M = ${f.M}` : '', f.N < choice.tileN ? `N = ${f.N}` : ''].filter(Boolean);
  return {
    name: 'dot tiling',
    choice,
    why: idle.length ? `one tile shape for all sizes (${idle.join(', ')} fills part of a tile)` : 'one tile shape for all sizes; 4x4 outputs per thread reuse each loaded element 4 times',
  };
}

/** How a float dot is computed: the SIMT kernel (cuda-dot.ts), mma.sync tensor cores or wgmma (cuda-gemm.ts). */
export type GemmPath = 'simt' | 'mma' | 'wgmma';
export const GEMM_PATHS: readonly GemmPath[] = ['simt', 'mma', 'wgmma'];

/** JAXON_GEMM=simt|mma|wgmma forces a path where the dtypes allow it (experiments, tests); unset or 'auto': null. */
export function forcedGemmPath(): GemmPath | null {
  const value = process.env['JAXON_GEMM'];
  if (value === undefined || value === '' || value === 'auto') return null;
  if (!(GEMM_PATHS as readonly string[]).includes(value)) throw new RangeError(`JAXON_GEMM must be simt, mma, wgmma or auto, got ${JSON.stringify(value)}`);
  return value as GemmPath;
}

/** The facts a dot's GEMM path and tiles depend on. */
export interface GemmFacts {
  B: number;
  M: number;
  N: number;
  K: number;
  inputDtype: DType;
  outputDtype: DType;
  /** float32 operands at Precision.HIGHEST (3xTF32: three products per step) */
  highest: boolean;
  /** the device's compute capability as major * 10 + minor (90: sm_90) */
  sm: number;
  /** JAXON_GEMM */
  forced: GemmPath | null;
}

const TENSOR_CORE_DTYPES: readonly DType[] = ['float32', 'bfloat16', 'float16'];

/**
 * Tensor cores (mma.sync, sm_80 and later) for float32, bfloat16 and float16 operands with a float32, bfloat16 or
 * float16 result, f32 accumulation; float32 operands as tf32 (JAX's default on a GPU) or, at Precision.HIGHEST,
 * split into two tf32 parts (3xTF32: float32 accuracy). Integers (exact wrapping sums), float64 and a float64
 * result (double accumulation) stay on the SIMT kernel, as does everything when JAXON_GEMM=simt. Hopper's wgmma
 * kernel (cuda-wgmma.ts: bfloat16 and float16 on sm_90a) runs where JAXON_GEMM=wgmma asks for it or the autotune
 * measured it faster; the heuristic alone keeps mma.sync until a GPU has measured both.
 */
export function gemmPath(f: GemmFacts): Decision<GemmPath> {
  const name = 'gemm path';
  if (!TENSOR_CORE_DTYPES.includes(f.inputDtype)) {
    return { name, choice: 'simt', why: `${f.inputDtype} operands: ${f.inputDtype === 'float64' ? 'double' : 'exact integer'} accumulation on the SIMT kernel` };
  }
  if (!TENSOR_CORE_DTYPES.includes(f.outputDtype)) return { name, choice: 'simt', why: `a ${f.outputDtype} result: ${f.outputDtype === 'float64' ? 'double' : 'exact'} accumulation on the SIMT kernel` };
  if (f.forced === 'simt') return { name, choice: 'simt', why: 'JAXON_GEMM=simt' };
  if (f.sm < 80) return { name, choice: 'simt', why: `sm_${f.sm} has no bf16/tf32 mma.sync (sm_80 and later)` };
  const operands = f.inputDtype === 'float32' ? (f.highest ? 'float32 as 3xTF32 (Precision.HIGHEST)' : 'float32 as tf32 (default precision)') : f.inputDtype;
  if (f.forced === 'wgmma') {
    if (f.sm === 90 && f.inputDtype !== 'float32') return { name, choice: 'wgmma', why: `JAXON_GEMM=wgmma: Hopper's warpgroup MMA, ${operands}, f32 accumulation` };
    const instead = f.sm !== 90 ? `wgmma needs sm_90a, this is sm_${f.sm}` : 'the wgmma kernel takes bfloat16 and float16 (no tf32 yet)';
    return { name, choice: 'mma', why: `JAXON_GEMM=wgmma, but ${instead}: mma.sync, ${operands}, f32 accumulation` };
  }
  return { name, choice: 'mma', why: `tensor cores: mma.sync, ${operands}, f32 accumulation${f.forced === 'mma' ? ' (JAXON_GEMM=mma)' : ''}` };
}

/** Tiles of the tensor-core GEMM (cuda-gemm.ts): block tile, warps, k depth per stage, pipeline stages, K splits. */
export interface GemmTiling {
  blockM: number;
  blockN: number;
  /** k elements per pipeline stage (64 bytes of each operand row) */
  blockK: number;
  warpsM: number;
  warpsN: number;
  stages: number;
  /** blocks sharing one output tile's K range; the last to finish adds the partials in split order */
  splitK: number;
}

/** Block tiles the heuristic and the autotune choose from: [blockM, blockN, warpsM, warpsN], biggest first. */
const GEMM_TILES: readonly (readonly [number, number, number, number])[] = [
  [128, 256, 2, 4], [128, 128, 2, 2], [128, 64, 2, 2], [64, 128, 2, 2], [64, 64, 2, 2], [32, 64, 1, 2], [64, 32, 2, 1], [32, 32, 1, 1],
];
/** Partial sums of split-K live in a module-scope workspace of at most this many floats. */
const SPLIT_K_WORKSPACE = 1 << 22;

/** The tiling for one block tile, with stages and split-K fitted to the sizes. */
export function gemmTilingFor(f: GemmFacts, [blockM, blockN, warpsM, warpsN]: readonly [number, number, number, number]): GemmTiling {
  const e = itemsize(f.inputDtype);
  const blockK = 64 / e;
  const kTiles = Math.ceil(f.K / blockK);
  const tiles = f.B * Math.ceil(f.M / blockM) * Math.ceil(f.N / blockN);
  let splitK = 1;
  if (tiles > 0 && tiles < SM_COUNT / 2 && kTiles >= 8) {
    splitK = Math.min(Math.ceil(SM_COUNT / tiles), Math.floor(kTiles / 4), 16);
    while (splitK > 1 && splitK * f.B * f.M * f.N > SPLIT_K_WORKSPACE) splitK--;
  }
  const stages = Math.max(2, Math.min(4, Math.ceil(kTiles / splitK)));
  return { blockM, blockN, blockK, warpsM, warpsN, stages, splitK };
}

/** Every block tile that suits the sizes (none much larger than M or N), biggest first: the autotune's candidates. */
export function gemmCandidates(f: GemmFacts): GemmTiling[] {
  const cap = (n: number) => (n <= 32 ? 32 : n <= 64 ? 64 : n <= 128 ? 128 : 256);
  // 3xTF32 keeps two fragments of each operand: warp tiles of 64x64 would spill
  const fits = ([bm, bn, wm, wn]: readonly number[]) => bm! <= cap(f.M) && bn! <= cap(f.N) && !(f.highest && (bm! / wm!) * (bn! / wn!) > 64 * 32);
  return GEMM_TILES.filter(fits).map((t) => gemmTilingFor(f, t));
}

/**
 * The largest block tile that still gives one wave of tiles (132 SMs), as CUTLASS's heuristics: big tiles load
 * each operand element fewer times; a problem with fewer tiles than SMs takes 64x64 tiles (or smaller where M or N
 * is) and splits K over blocks when K is long (skinny shapes), the partials added in a fixed order (deterministic).
 * 64-byte k steps (32 bf16/f16, 16 f32), 2 to 4 cp.async stages.
 */
export function gemmTiling(f: GemmFacts): Decision<GemmTiling> {
  const candidates = gemmCandidates(f);
  const tiles = (t: GemmTiling) => f.B * Math.ceil(f.M / t.blockM) * Math.ceil(f.N / t.blockN);
  const filling = candidates.find((t) => tiles(t) >= SM_COUNT);
  const choice = filling ?? candidates.find((t) => t.blockM * t.blockN <= 64 * 64) ?? candidates[candidates.length - 1]!;
  const why = filling
    ? `${tiles(choice)} tiles fill ${SM_COUNT} SMs`
    : `${tiles(choice)} tile(s) cannot fill ${SM_COUNT} SMs${choice.splitK > 1 ? `: K = ${f.K} split over ${choice.splitK} blocks` : ''}`;
  return { name: 'gemm tiling', choice, why };
}

/** How a convolution is computed: the SIMT implicit GEMM (render/conv.ts) or the tensor-core one (render/conv-mma.ts). */
export type ConvPath = 'simt' | 'mma';
export const CONV_PATHS: readonly ConvPath[] = ['simt', 'mma'];

/** JAXON_CONV=simt|mma forces a conv path where the dtypes allow it (experiments, tests); unset or 'auto': null. */
export function forcedConvPath(): ConvPath | null {
  const value = process.env['JAXON_CONV'];
  if (value === undefined || value === '' || value === 'auto') return null;
  if (!(CONV_PATHS as readonly string[]).includes(value)) throw new RangeError(`JAXON_CONV must be simt, mma or auto, got ${JSON.stringify(value)}`);
  return value as ConvPath;
}

/** The facts a convolution's path and tiles depend on: its implicit GEMM per group (M x N x K) and operands. */
export interface ConvFacts {
  /** batch x output pixels */
  M: number;
  /** output features per group */
  N: number;
  /** taps x input features per group */
  K: number;
  groups: number;
  inputDtype: DType;
  outputDtype: DType;
  /** float32 operands at Precision.HIGHEST (3xTF32) */
  highest: boolean;
  sm: number;
  /** JAXON_CONV */
  forced: ConvPath | null;
}

/** Below these a tensor-core tile is mostly idle (N: features per group; K: taps x features) and the SIMT kernel stays. */
const CONV_MMA_MIN_N = 16;
const CONV_MMA_MIN_K = 32;

/**
 * Tensor cores for the dot's dtypes (gemmPath): float32 (as tf32 at default precision, 3xTF32 at HIGHEST), bfloat16
 * and float16 operands, f32 accumulation; integers and float64 stay on the SIMT kernel. As XLA does on an H100:
 * JAX's default precision lets float32 convolutions run on TF32 tensor cores (cuDNN's TF32 math mode; JAX's
 * jax_default_matmul_precision "controls the default matmul and conv precision for 32bit inputs",
 * https://docs.jax.dev/en/latest/_autosummary/jax.default_matmul_precision.html), and Precision.HIGHEST keeps
 * float32 accuracy. The SIMT kernel also keeps convolutions whose GEMM is too thin for an mma tile (depthwise:
 * one feature per group; the first layer of an RGB image: K = 27), unless JAXON_CONV=mma forces it.
 */
export function convPath(f: ConvFacts): Decision<ConvPath> {
  const name = 'conv path';
  if (!TENSOR_CORE_DTYPES.includes(f.inputDtype)) {
    return { name, choice: 'simt', why: `${f.inputDtype} operands: ${f.inputDtype === 'float64' ? 'double' : 'exact integer'} accumulation on the SIMT kernel` };
  }
  if (!TENSOR_CORE_DTYPES.includes(f.outputDtype)) return { name, choice: 'simt', why: `a ${f.outputDtype} result: ${f.outputDtype === 'float64' ? 'double' : 'exact'} accumulation on the SIMT kernel` };
  if (f.forced === 'simt') return { name, choice: 'simt', why: 'JAXON_CONV=simt' };
  if (f.sm < 80) return { name, choice: 'simt', why: `sm_${f.sm} has no bf16/tf32 mma.sync (sm_80 and later)` };
  const operands = f.inputDtype === 'float32' ? (f.highest ? 'float32 as 3xTF32 (Precision.HIGHEST)' : 'float32 as tf32 (default precision)') : f.inputDtype;
  if (f.forced === 'mma') return { name, choice: 'mma', why: `JAXON_CONV=mma: mma.sync, ${operands}, f32 accumulation` };
  if (f.N < CONV_MMA_MIN_N) return { name, choice: 'simt', why: `${f.N} output feature(s) per group: an mma tile would be mostly idle` };
  if (f.K < CONV_MMA_MIN_K) return { name, choice: 'simt', why: `K = ${f.K} (taps x features): an mma tile would be mostly idle` };
  return { name, choice: 'mma', why: `tensor cores: mma.sync, ${operands}, f32 accumulation` };
}

/**
 * The tensor-core conv's tiles: blockN the features of a group rounded up to 32, 64 or 128, blockM 128 pixels (64
 * where that gives too few tiles for the SMs, and at HIGHEST, whose two fragments per operand would spill 64x64 warp
 * tiles), 2x2 warps, 64-byte k steps, 2 to 4 cp.async stages; a grid of too few tiles for the SMs splits K (the
 * kernel gradient: few outputs, a long K), the partials added in split order by the last block (deterministic).
 */
export function convMmaTiling(f: ConvFacts): Decision<GemmTiling> {
  const e = itemsize(f.inputDtype);
  const blockK = 64 / e;
  const blockN = f.N <= 32 ? 32 : f.N <= 64 || f.highest ? 64 : 128;
  const tilesAt = (bm: number) => Math.max(1, Math.ceil(f.M / bm)) * Math.ceil(Math.max(f.N, 1) / blockN) * Math.max(f.groups, 1);
  const blockM = f.highest || f.M <= 64 || tilesAt(128) < SM_COUNT ? 64 : 128;
  const tiles = tilesAt(blockM);
  const kTiles = Math.ceil(f.K / blockK);
  let splitK = 1;
  if (tiles < SM_COUNT / 2 && kTiles >= 8) {
    splitK = Math.min(Math.ceil(SM_COUNT / tiles), Math.floor(kTiles / 4), 16);
    while (splitK > 1 && splitK * f.M * f.N * Math.max(f.groups, 1) > SPLIT_K_WORKSPACE) splitK--;
  }
  const stages = Math.max(2, Math.min(4, Math.ceil(kTiles / splitK)));
  const choice = { blockM, blockN, blockK, warpsM: 2, warpsN: 2, stages, splitK };
  const why = `${tiles} tile(s) for ${SM_COUNT} SMs${splitK > 1 ? `: K = ${f.K} split over ${splitK} blocks` : ''}; ${f.N} feature(s) per group`;
  return { name: 'conv tiling', choice, why };
}

/** The wgmma kernel's shape (cuda-wgmma.ts): 128-row block tiles, blockN = one wgmma's N, pipeline stages. */
export interface WgmmaTiling {
  blockN: 64 | 128;
  stages: number;
}

/** blockN 64 where N fits it (less idle work), else 128; 2 to 4 stages of 64-deep k steps (32 KiB each at 128). */
export function wgmmaTiling(f: { N: number; K: number }): Decision<WgmmaTiling> {
  const blockN = f.N <= 64 ? 64 : 128;
  const stages = Math.max(2, Math.min(4, Math.ceil(f.K / 64)));
  return { name: 'wgmma tiling', choice: { blockN, stages }, why: `N = ${f.N}${blockN === 64 ? ' fits 64' : ''}; K = ${f.K}: ${Math.ceil(f.K / 64)} k steps` };
}

/**
 * How the Hopper GEMM's producer warpgroup fills one operand's 128B-swizzled tiles: 'tma' (one thread issues
 * cp.async.bulk.tensor through a tensor map the launch encodes, zeros out of bounds) into K-major tiles, 'tma-mn'
 * the same for an m- or n-contiguous operand into MN-major tiles (wgmma's transpose immediate reads them as they
 * are: no transposition), 'cp.async' (16-byte k-contiguous rows by every producer thread, zero-filled at the edges),
 * 'cp.async-mn' (16-byte chunks along the free axis of an m- or n-contiguous operand into MN-major tiles),
 * or 'elements' (element by element into K-major tiles: any other layout).
 */
export type OperandLoad = 'tma' | 'tma-mn' | 'cp.async' | 'cp.async-mn' | 'elements';
export interface WgmmaProducer {
  lhs: OperandLoad;
  rhs: OperandLoad;
}

function describeLoad(l: OperandLoad): string {
  return l === 'tma' ? 'by TMA (cp.async.bulk.tensor, tensor map)' : l === 'tma-mn' ? 'by TMA into MN-major tiles (transposed wgmma operand)'
    : l === 'cp.async' ? 'by cp.async rows' : l === 'cp.async-mn' ? 'by cp.async into MN-major tiles (transposed wgmma operand)' : 'element by element';
}

/** JAXON_WGMMA_TMA=0 turns TMA off (the cp.async producer), for comparisons and tests; unset or 1: TMA where it fits. */
export function tmaAllowed(): boolean {
  const value = process.env['JAXON_WGMMA_TMA'];
  if (value === undefined || value === '' || value === '1') return true;
  if (value === '0') return false;
  throw new RangeError(`JAXON_WGMMA_TMA must be 0 or 1, got ${JSON.stringify(value)}`);
}

/** The facts about one operand view (free axis f, contraction axis k) the producer's choice depends on. */
export interface OperandFacts {
  /** element strides (batch, free, k) */
  strides: readonly [number, number, number];
  /** batch, free and k sizes */
  sizes: readonly [number, number, number];
  /** byte alignment of the buffer's address */
  alignment: number;
  itemsize: number;
}

/**
 * TMA when the driver can encode tensor maps, JAXON_WGMMA_TMA allows it, and cuTensorMapEncodeTiled would accept
 * the view as a 3-d tensor (k innermost and contiguous, or the free axis for MN-major tiles; a 16-byte aligned
 * address; the other strides whole multiples of 16 bytes, nonzero); else cp.async when the rows (or, into MN-major
 * tiles, the free axis) are contiguous with 16-byte aligned strides; else element by element.
 */
export function operandLoad(f: OperandFacts, tma: boolean): { load: OperandLoad; why: string } {
  const [sb, sf, sk] = f.strides;
  const E = f.itemsize;
  const rows = sk === 1 && f.alignment % 16 === 0 && (sf * E) % 16 === 0 && (sb * E) % 16 === 0;
  // m- or n-contiguous (a transposed operand) with 16-byte strides: straight into MN-major tiles, by TMA boxes of 64
  // along the free axis or by 16-byte cp.async chunks along it
  if (!rows && sf === 1 && sk !== 1 && f.alignment % 16 === 0 && (sk * E) % 16 === 0 && (sb * E) % 16 === 0) {
    const [kStride, batchStride] = tensorMapStrides({ ...f, strides: [sb, sk, sf], sizes: [f.sizes[0], f.sizes[2], f.sizes[1]] });
    if (tma && kStride > 0 && batchStride > 0) return { load: 'tma-mn', why: 'free-axis-contiguous, 16-byte strides: MN-major descriptors' };
    return { load: 'cp.async-mn', why: `free-axis-contiguous, 16-byte strides: MN-major descriptors${tma ? ' (a broadcast axis is no tensor map)' : ', TMA off'}` };
  }
  if (!rows) return { load: 'elements', why: sk !== 1 ? `k stride ${sk}` : `rows not 16-byte aligned (strides ${f.strides.join(', ')}, address alignment ${f.alignment})` };
  if (!tma) return { load: 'cp.async', why: 'TMA off' };
  const [freeStride, batchStride] = tensorMapStrides(f);
  if (freeStride === 0 || batchStride === 0) return { load: 'cp.async', why: 'a broadcast axis (stride 0) is no tensor map' };
  return { load: 'tma', why: 'k-contiguous, 16-byte strides' };
}

/** The byte strides of an operand's tensor map (free axis, batch axis); an axis of size 1 takes 16 (never stepped). */
export function tensorMapStrides(f: OperandFacts): [number, number] {
  const [sb, sf] = f.strides;
  return [f.sizes[1] === 1 ? 16 : sf * f.itemsize, f.sizes[0] === 1 ? 16 : sb * f.itemsize];
}

export function wgmmaProducer(lhs: OperandFacts, rhs: OperandFacts, tma: { driver: boolean; allowed: boolean }): Decision<WgmmaProducer> {
  const on = tma.driver && tma.allowed;
  const l = operandLoad(lhs, on), r = operandLoad(rhs, on);
  const off = !tma.driver ? 'the driver lacks cuTensorMapEncodeTiled; ' : !tma.allowed ? 'JAXON_WGMMA_TMA=0; ' : '';
  return { name: 'wgmma producer', choice: { lhs: l.load, rhs: r.load }, why: `${off}lhs: ${l.why}; rhs: ${r.why}` };
}

function describeGemmTiling(t: GemmTiling): string {
  return `${t.blockM}x${t.blockN}x${t.blockK} block tiles, ${t.warpsM}x${t.warpsN} warps of ${t.blockM / t.warpsM}x${t.blockN / t.warpsN}, ${t.stages} stages${t.splitK > 1 ? `, split-K ${t.splitK}` : ''}`;
}

/** Which inputs of an elementwise kernel go through shared-memory tiles, and along which output axis they are contiguous. */
export interface TransposeTiling {
  axis: number;
  inputs: number[];
}

/**
 * An elementwise kernel whose input is contiguous along an outer output axis and strided along the innermost one
 * (a transpose) reads it through 32x32 shared-memory tiles, so both the reads and the writes are coalesced; not
 * for planes smaller than one tile or axes shorter than 8 (tiles would be mostly idle), at most 4 such inputs.
 */
export function transposeTiling(f: { shape: readonly number[]; views: readonly (readonly [number, readonly number[]])[] }): Decision<TransposeTiling | null> {
  const name = 'transpose tiling';
  const rank = f.shape.length;
  const last = rank - 1;
  const n = f.shape.reduce((p, d) => p * d, 1);
  if (f.views.length === 0) return { name, choice: null, why: 'no strided input' };
  if (rank < 2 || n < 32 * 32) return { name, choice: null, why: `${n} elements: less than one 32x32 tile` };
  let axis = -1;
  for (const [, strides] of f.views) {
    if (Math.abs(strides[last]!) <= 1) continue;
    const a = strides.findIndex((s, d) => s === 1 && d < last && f.shape[d]! >= 8);
    if (a >= 0) {
      axis = a;
      break;
    }
  }
  if (axis < 0) return { name, choice: null, why: 'no input is contiguous along an outer axis of 8 or more' };
  if (f.shape[last]! < 8) return { name, choice: null, why: `the innermost axis (${f.shape[last]}) is shorter than 8` };
  const inputs = f.views.filter(([, s]) => s[axis] === 1 && Math.abs(s[last]!) > 1).map(([i]) => i).slice(0, 4);
  return { name, choice: { axis, inputs }, why: `input(s) ${inputs.join(', ')} contiguous along axis ${axis}, strided along the innermost: reads and writes both coalesced` };
}

/** The facts the vector width of an elementwise kernel depends on. */
export interface VectorFacts {
  /** Every contiguously accessed buffer (outputs and inputs) with the alignment of its base pointer in bytes. */
  buffers: readonly { dtype: DType; alignment: number }[];
  /** The expression calls libm-sized functions (core/traits.ts `libmCall`). */
  libmCalls: boolean;
  /** Some input is read through a strided view or the expression reads a coordinate (iota). */
  needsCoords: boolean;
  /** The innermost axis' size; null for a 0-d kernel. */
  innermost: number | null;
  /** Elements in all. */
  n: number;
}

/**
 * Elements per thread per step: the widest power of two that 16-byte loads and every buffer's alignment allow,
 * at most 4 when the work calls libm (compute-bound: 4 lanes keep the loads vectorized without unrolling libm code
 * 8 times), dividing the innermost axis when coordinates are needed (a vector's elements share all others), and
 * 1 when there are fewer elements than lanes.
 */
export function elementwiseVectorWidth(f: VectorFacts): Decision<number> {
  const name = 'vector width';
  if (f.buffers.length === 0) return { name, choice: 1, why: 'no contiguous buffer' };
  const widest = Math.max(...f.buffers.map((b) => itemsize(b.dtype)));
  let v = 1;
  for (let w = 16 / widest; w > 1; w /= 2) {
    if (f.buffers.every((b) => b.alignment % (w * itemsize(b.dtype)) === 0)) {
      v = w;
      break;
    }
  }
  const why: string[] = [v > 1 ? `${16 / widest}-element 16-byte loads of ${widest}-byte elements` : 'alignments allow no vector load'];
  if (v > 1 && v < 16 / widest) why.push(`alignments allow ${v}`);
  if (v > 4 && f.libmCalls) {
    v = 4;
    why.push('libm calls cap it at 4 lanes');
  }
  if (v > 1 && f.needsCoords) {
    const before = v;
    while (v > 1 && (f.innermost === null || f.innermost % v !== 0)) v /= 2;
    if (v < before) why.push(`the innermost axis (${f.innermost ?? '0-d'}) takes ${v}`);
  }
  if (f.n < v) {
    v = 1;
    why.push(`only ${f.n} elements`);
  }
  return { name, choice: v, why: why.join('; ') };
}

export type ReductionStrategy =
  | { kind: 'thread' }
  | { kind: 'warp' }
  | { kind: 'block'; chunks: number; chunk: number }
  | { kind: 'column'; chunks: number; chunk: number };

/** The facts a reduction's strategy depends on. */
export interface ReductionFacts {
  nOut: number;
  nInner: number;
  /** The reduced elements of one output are adjacent in memory (the input's innermost reduced stride is 1). */
  innerContiguous: boolean;
  /** Not innerContiguous, but neighbouring outputs are adjacent (a reduction over rows of a row-major matrix). */
  columnLike: boolean;
  /** The kernel has no second pass (final outputs need a whole row's result in one block), so it may split rows over blocks. */
  splittable: boolean;
}

/** Splits n into at most `want` chunks of equal size (the last may be shorter), none empty. */
function chunking(n: number, want: number): { chunks: number; chunk: number } {
  if (want < 2 || n === 0) return { chunks: 1, chunk: Math.max(n, 1) };
  const chunk = Math.ceil(n / want);
  return { chunks: Math.ceil(n / chunk), chunk };
}

/**
 * Who reduces one output: a thread (≤ 32 elements), a warp (≤ 1024), a block, or 32 outputs × 8 lanes per block
 * for column-like reductions; rows long enough and too few to fill the GPU split over several blocks whose
 * partials the last one merges (two-stage).
 */
export function reductionStrategy(f: ReductionFacts): Decision<ReductionStrategy> {
  const name = 'reduction strategy';
  if (f.columnLike && f.nOut > 1) {
    const tiles = Math.ceil(f.nOut / 32);
    const want = f.splittable && tiles < TARGET_BLOCKS / 2 && f.nInner >= 1024 ? Math.min(Math.ceil(f.nInner / 512), Math.ceil(TARGET_BLOCKS / tiles)) : 1;
    const choice = { kind: 'column' as const, ...chunking(f.nInner, want) };
    return { name, choice, why: `neighbouring outputs are adjacent in memory: coalesced across outputs${choice.chunks > 1 ? `; ${tiles} tile(s) cannot fill ${TARGET_BLOCKS} blocks` : ''}` };
  }
  if (f.nInner <= 32) return { name, choice: { kind: 'thread' }, why: `${f.nInner} elements per output fit one thread` };
  if (f.nInner <= 1024) return { name, choice: { kind: 'warp' }, why: `${f.nInner} elements per output: 32 lanes, ≤ 32 each` };
  const want = f.splittable && f.nOut < TARGET_BLOCKS / 2 && f.nInner >= 8192 ? Math.min(Math.ceil(f.nInner / 4096), Math.ceil(TARGET_BLOCKS / f.nOut)) : 1;
  const choice = { kind: 'block' as const, ...chunking(f.nInner, want) };
  const why = `${f.nInner} elements per output${choice.chunks > 1 ? `, ${f.nOut} output(s) cannot fill ${TARGET_BLOCKS} blocks: split` : f.splittable ? '' : ', a second pass needs the row in one block'}`;
  return { name, choice, why };
}

function describeStrategy(s: ReductionStrategy): string {
  switch (s.kind) {
    case 'thread': return 'one thread per output';
    case 'warp': return 'one warp per output';
    case 'block': return s.chunks > 1 ? `${s.chunks} blocks per output (chunks of ${s.chunk})` : 'one block per output';
    case 'column': return `32 outputs x 8 lanes per block${s.chunks > 1 ? `, ${s.chunks} blocks per tile (chunks of ${s.chunk})` : ''}`;
  }
}
