// Kernel choices as named decisions (issue 14): each takes the few facts it
// depends on and returns its choice with the reason, so a test can ask "what
// would the renderer pick here, and why?" without rendering, and every CUDA
// kernel's header records its decisions (`// decision <name>: <choice>
// (<why>)`), which `Compiled.kernels()` shows.
import { type DType, itemsize } from '../../core/dtype.js';
import { BLOCK, MAX_GRID, TARGET_BLOCKS, strideGrid } from './cuda-common.js';

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
  const c = choice as ReductionStrategy | DotTiling | TransposeTiling | GridStrideLaunch;
  if ('kind' in c) return describeStrategy(c);
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
