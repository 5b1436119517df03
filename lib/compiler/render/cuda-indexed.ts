// The CUDA target of the kernels written once in indexed.ts (pad,
// concatenate, dynamic slices, gather, scatter, cumulative scans): params
// baked in as constant scalars and arrays, so the loops over axes unroll into
// straight-line coordinate arithmetic; elements grid-stride. A loop that
// rereads what the loops before it wrote (scatter's updates) needs them done
// in every block: each block takes an atomic ticket once its share is
// written, and the last one runs the loop alone, its threads striding over
// the elements and reading the buffer through a volatile pointer (past the
// L1 cache, which other blocks' writes do not reach).
import {
  BLOCK, type RenderedKernel, SM_COUNT, gridStride, indent, indexType, int, product, strideGrid,
} from './cuda-common.js';
import { CUDA_DIALECT, CUDA_TYPES } from './expr.js';
import { ParamReader } from './cuda-params.js';
import { type IndexedKernel, indexedSpec } from './indexed.js';

/** Threads per block of a kernel with a loop run by one block: that block is all the parallelism the loop gets. */
const ONE_BLOCK_THREADS = 1024;

/** An indexed.ts kernel for the exact params: each param a constant, each loop grid-stride over its elements. */
export function indexed(k: IndexedKernel, params: readonly number[], name: string): RenderedKernel {
  const spec = indexedSpec(k, CUDA_DIALECT);
  const r = new ParamReader(params, k.kind);
  const scalars = new Map<string, number>();
  const arrays = new Map<string, number[]>();
  for (const p of spec.params) {
    if (p.length === undefined) scalars.set(p.name, r.next(p.name));
    else arrays.set(p.name, r.take(scalars.get(p.length)!, p.name));
  }
  r.done();
  const valueOf = (n: string) => scalars.get(n) ?? product(arrays.get(n)!);
  const countOf = (names: readonly string[]) => product(names.map(valueOf));
  const counts = spec.loops.map((l) => countOf(l.count));
  const scalarProduct = product([...scalars.values()].map((v) => Math.max(Math.abs(v), 1)));
  const idx = indexType(spec.reach
    ? spec.reach.map(countOf)
    : [...counts.map((c) => c * scalarProduct), ...[...arrays.values()].map((a) => product(a.map((v) => Math.max(Math.abs(v), 1))))]);

  // loops from the first that rereads run in the last block; the ones before size the grid
  const firstRereading = spec.loops.findIndex((l) => l.rereads !== undefined);
  const before = firstRereading < 0 ? counts : counts.slice(0, firstRereading);
  const threads = firstRereading < 0 ? BLOCK : ONE_BLOCK_THREADS;
  const grid = firstRereading < 0 ? strideGrid(Math.max(1, ...before)) : strideGrid(Math.max(1, ...before), threads * 4, SM_COUNT * 2);
  const ticketed = firstRereading >= 0 && grid > 1;

  const lines = [
    `typedef ${idx} jx_index;`,
    ...[...scalars].map(([n, v]) => `const jx_index ${n} = ${int(v)};`),
    ...[...arrays].map(([n, v]) => `const jx_index ${n}[${Math.max(v.length, 1)}] = {${v.length ? v.map(int).join(', ') : '0'}};`),
    ...spec.setup,
  ];
  const rereading: string[] = [];
  spec.loops.forEach((loop, j) => {
    const inLastBlock = firstRereading >= 0 && j >= firstRereading;
    if (inLastBlock && loop.rereads === undefined) throw new Error(`renderCuda: ${k.kind} loop ${j} follows a loop that rereads a buffer, so it must reread one too`);
    if (counts[j] === 0) return; // no elements (a concatenated input of size 0)
    const header = inLastBlock
      ? `for (jx_index i = threadIdx.x; i < ${int(counts[j]!)}; i += ${threads})`
      : gridStride('jx_index', 'i', int(counts[j]!), threads);
    const body = [`${header} {`, indent([...loop.body], 2), '}'];
    (inLastBlock ? rereading : lines).push(...(loop.when ? [`if (${loop.when}) {`, indent(body, 2), '}'] : body));
  });
  if (firstRereading >= 0) {
    const buffer = spec.loops[firstRereading]!.rereads!;
    const type = CUDA_TYPES.storageType(spec.buffers.find((b) => b.name === buffer)!.dtype);
    lines.push(...(ticketed
      ? [
          '__shared__ int jx_last;',
          '__threadfence();',
          '__syncthreads();',
          `if (threadIdx.x == 0) jx_last = atomicAdd(&jx_ticket_${name}, 1u) == gridDim.x - 1;`,
          '__syncthreads();',
          'if (!jx_last) return; // the last block to finish the loops before runs the rest',
          '__threadfence();',
          `volatile ${type} *jx_reread = ${buffer};`,
          '{',
          `  volatile ${type} *${buffer} = jx_reread; // other blocks wrote it: read it past the L1 cache`,
          indent(rereading, 2),
          '}',
          '__syncthreads();',
          `if (threadIdx.x == 0) jx_ticket_${name} = 0;`,
        ]
      : ['__syncthreads();', ...rereading]));
  }
  const strategy = firstRereading < 0
    ? `grid-stride over ${counts.join(' then ')}`
    : `${grid} block(s) of ${threads} over ${before.join(' then ')}, then ${ticketed ? 'the last' : 'that'} block over ${counts.slice(firstRereading).join(' or ')}`;
  return {
    buffers: spec.buffers.map((b) => ({ ...b })),
    body: indent(lines, 2),
    ...(ticketed ? { globals: `__device__ jx_u32 jx_ticket_${name};` } : {}),
    grid: [grid, 1, 1],
    block: [threads, 1, 1],
    strategy: `${spec.label}, ${strategy} (${idx} indices)`,
  };
}
