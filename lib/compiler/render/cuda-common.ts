// What every CUDA kernel renderer shares: the rendered-kernel record, the
// entry signature (one pointer per buffer, in the kernel IR's buffer order),
// the index-width decision (32-bit arithmetic when every size and offset fits,
// with room for a grid-stride loop's overshoot), grid-stride loops and the
// launch-shape arithmetic. The launch choices themselves are documented at
// the top of cuda.ts.
import type { DType } from '../../core/dtype.js';
import { CUDA_TYPES } from './expr.js';
import type { Decision } from './cuda-decisions.js';

const { storageType } = CUDA_TYPES;

/** The H100's streaming multiprocessors: grids are sized in waves of these. */
export const SM_COUNT = 132;
/** Threads per block of the grid-stride kernels (8 resident blocks fill an SM's 2048 threads). */
export const BLOCK = 256;
/** Grid cap of the grid-stride kernels: one full wave of 256-thread blocks. */
export const MAX_GRID = SM_COUNT * 8;
/** Blocks that keep every SM busy in a reduction (4 per SM). */
export const TARGET_BLOCKS = SM_COUNT * 4;

/** One kernel argument: a pointer into a buffer. */
export interface BufferArg {
  name: string;
  dtype: DType;
  output: boolean;
  /** false where the buffer may alias another (scatter and dynamic_update_slice operands) */
  restrict?: boolean;
}

/** A rendered kernel before the header and prelude are added. */
/**
 * A kernel parameter of the "tensor map" kind (cuda/cuda_tensor_map.h): a TMA descriptor that each launch encodes
 * with cuTensorMapEncodeTiled from the address of buffer `arg`, passed after the buffers as
 * `const __grid_constant__ jx_tensor_map <name>`. Numbers are cuda.h's: dataType a CUtensorMapDataType, swizzle a
 * CUtensorMapSwizzle; dims and box in elements, innermost first; strides in bytes, of dimensions 1 and up.
 */
export interface TensorMapParam {
  name: string;
  arg: number;
  dataType: number;
  dims: number[];
  strides: number[];
  box: number[];
  swizzle: number;
}

export interface RenderedKernel {
  buffers: BufferArg[];
  /** tensor-map parameters after the buffers */
  tensorMaps?: TensorMapParam[];
  /** statements of the entry's body */
  body: string;
  /** module-scope declarations the kernel needs (two-stage partials and counters), named after the kernel */
  globals?: string;
  grid: [number, number, number];
  block: [number, number, number];
  /** the launch strategy in a few words, for the source header */
  strategy: string;
  /** the named choices behind it (cuda-decisions.ts), one header line each */
  decisions?: readonly Decision<unknown>[];
  /** dynamic shared memory the launch needs (default 0: all shared memory static) */
  sharedMemBytes?: number;
}

/** Index arithmetic width: 32-bit when every magnitude (sizes, offsets) plus a grid-stride overshoot fits in int32. */
export function indexType(magnitudes: number[]): 'jx_i32' | 'jx_i64' {
  const margin = 2 ** 26; // a grid-stride loop steps at most MAX_GRID * 1024 * 16 elements past its bound
  const largest = Math.max(0, ...magnitudes.map((m) => Math.abs(m)));
  return largest + margin < 2 ** 31 ? 'jx_i32' : 'jx_i64';
}

/** The largest offset a strided view reaches: |offset| + sum |stride| * (size - 1). */
export function viewReach(shape: readonly number[], strides: readonly number[], offset = 0): number {
  let reach = Math.abs(offset);
  shape.forEach((d, i) => (reach += Math.abs(strides[i] ?? 0) * Math.max(d - 1, 0)));
  return reach;
}


export const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);

/** Blocks of a grid-stride loop over `work` items with `threads` per block: enough for the work, at most one full wave. */
export function strideGrid(work: number, threads = BLOCK, cap = MAX_GRID): number {
  return Math.max(1, Math.min(Math.ceil(work / threads), cap));
}

/** An integer constant as CUDA source (ll suffix beyond int32). */
export function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`render/cuda: ${n} is not an integer a kernel can use as a size`);
  return Math.abs(n) < 2 ** 31 ? `${n}` : `${n}ll`;
}

/** A grid-stride loop header over [start, end) with the block's threads; `idx` is the index type. */
export function gridStride(idx: string, variable: string, end: string, threads = BLOCK, start = '0'): string {
  return `for (${idx} ${variable} = ${start === '0' ? '' : `${start} + `}(${idx})blockIdx.x * ${threads} + threadIdx.x; ${variable} < ${end}; ${variable} += (${idx})gridDim.x * ${threads})`;
}

/**
 * Lines that set `coords[d]` (named `${prefix}${d}`) to the row-major coordinates of linear index `linear` in `shape`.
 * Size-1 axes are 0; the outermost axis takes the remaining quotient (no modulo).
 */
export function unravel(idx: string, linear: string, shape: readonly number[], prefix: string): string[] {
  const lines: string[] = [];
  if (shape.length === 0) return lines;
  if (shape.length === 1) return [`const ${idx} ${prefix}0 = ${linear};`];
  lines.push(`${idx} ${prefix}_rest = ${linear};`);
  for (let d = shape.length - 1; d >= 0; d--) {
    const size = Math.max(shape[d]!, 1); // an empty axis: the loop around never runs
    if (d === 0) lines.push(`const ${idx} ${prefix}0 = ${prefix}_rest;`);
    else if (size === 1) lines.push(`const ${idx} ${prefix}${d} = 0;`);
    else lines.push(`const ${idx} ${prefix}${d} = ${prefix}_rest % ${int(size)}; ${prefix}_rest /= ${int(size)};`);
  }
  return lines;
}

/** sum(coord_d * stride_d) + offset as a CUDA expression, leaving out zero terms. */
export function dotStrides(coords: readonly string[], strides: readonly number[], offset = 0): string {
  const terms: string[] = [];
  if (offset !== 0) terms.push(int(offset));
  coords.forEach((c, d) => {
    const s = strides[d] ?? 0;
    if (s === 0) return;
    terms.push(s === 1 ? c : s === -1 ? `-${c}` : `${c} * ${int(s)}`);
  });
  return terms.length ? terms.join(' + ').replace(/\+ -/g, '- ') : '0';
}

/** The entry's parameter list: outputs writable, inputs const, __restrict__ unless the buffer may alias. */
export function parameterList(buffers: readonly BufferArg[]): string {
  return buffers
    .map((b) => `${b.output ? '' : 'const '}${storageType(b.dtype)} *${b.restrict === false ? '' : '__restrict__ '}${b.name}`)
    .join(', ');
}


export const indent = (lines: readonly string[], n: number): string =>
  lines.flatMap((l) => l.split('\n')).map((l) => (l ? ' '.repeat(n) + l : l)).join('\n');
