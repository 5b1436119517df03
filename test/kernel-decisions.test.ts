// The CUDA renderer's choices as named decisions (lib/compiler/render/cuda-decisions.ts, issue 14): each is asked
// directly with the facts it depends on, and every rendered kernel records its decisions in its header.
import test from 'ava';
import {
  type GemmFacts, dotTiling, elementwiseVectorWidth, gemmCandidates, gemmPath, gemmTiling, gridStrideLaunch, reductionStrategy, transposeTiling,
  wgmmaTiling,
} from '../lib/compiler/render/cuda-decisions.js';
import { renderCuda } from '../lib/compiler/render/cuda.js';
import type { Kernel } from '../lib/compiler/kernel-ir.js';

const f32 = (alignment = 16) => ({ dtype: 'float32' as const, alignment });
const vector = (over: Partial<Parameters<typeof elementwiseVectorWidth>[0]>) =>
  elementwiseVectorWidth({ buffers: [f32(), f32()], libmCalls: false, needsCoords: false, innermost: 1024, n: 1 << 20, ...over });

test('vector width: 16-byte loads when every buffer allows them, narrower as alignment, libm, the innermost axis or the size demand', (t) => {
  t.like(vector({}), { choice: 4, why: '4-element 16-byte loads of 4-byte elements' });
  t.like(vector({ buffers: [f32(), f32(8)] }), { choice: 2, why: '4-element 16-byte loads of 4-byte elements; alignments allow 2' });
  t.is(vector({ buffers: [f32(), f32(4)] }).choice, 1);
  t.is(vector({ buffers: [{ dtype: 'bfloat16', alignment: 16 }, { dtype: 'bfloat16', alignment: 16 }] }).choice, 8);
  t.like(vector({ buffers: [{ dtype: 'bfloat16', alignment: 16 }], libmCalls: true }), { choice: 4, why: '8-element 16-byte loads of 2-byte elements; libm calls cap it at 4 lanes' });
  // a float32 output of a bfloat16 input: the wider element sets the width
  t.is(vector({ buffers: [f32(), { dtype: 'bfloat16', alignment: 16 }] }).choice, 4);
  t.like(vector({ needsCoords: true, innermost: 6 }), { choice: 2, why: '4-element 16-byte loads of 4-byte elements; the innermost axis (6) takes 2' });
  t.is(vector({ needsCoords: true, innermost: null }).choice, 1);
  t.is(vector({ needsCoords: false, innermost: 6 }).choice, 4, 'contiguous code ignores the axes');
  t.like(vector({ n: 3 }), { choice: 1, why: '4-element 16-byte loads of 4-byte elements; only 3 elements' });
  t.like(vector({ buffers: [] }), { choice: 1, why: 'no contiguous buffer' });
});

const reduction = (over: Partial<Parameters<typeof reductionStrategy>[0]>) =>
  reductionStrategy({ nOut: 4096, nInner: 4096, innerContiguous: true, columnLike: false, splittable: true, ...over });

test('reduction strategy: thread, warp, block or column by the sizes; long rows too few to fill the GPU split over blocks', (t) => {
  t.deepEqual(reduction({ nInner: 32 }).choice, { kind: 'thread' });
  t.deepEqual(reduction({ nInner: 33 }).choice, { kind: 'warp' });
  t.deepEqual(reduction({ nInner: 1024 }).choice, { kind: 'warp' });
  t.deepEqual(reduction({ nInner: 1025 }).choice, { kind: 'block', chunks: 1, chunk: 1025 });
  // one row of 2^21: as many blocks as fill the GPU, each 4096 or more elements
  const sum = reduction({ nOut: 1, nInner: 1 << 21 });
  t.deepEqual(sum.choice, { kind: 'block', chunks: 512, chunk: 4096 });
  t.regex(sum.why, /1 output\(s\) cannot fill 528 blocks: split/);
  // a second pass (softmax's normalized row) needs the whole row in one block
  t.deepEqual(reduction({ nOut: 1, nInner: 1 << 21, splittable: false }).choice, { kind: 'block', chunks: 1, chunk: 1 << 21 });
  t.regex(reduction({ nOut: 1, nInner: 1 << 21, splittable: false }).why, /a second pass needs the row in one block/);
  // many rows fill the GPU without splitting
  t.deepEqual(reduction({ nOut: 8192, nInner: 1 << 16 }).choice, { kind: 'block', chunks: 1, chunk: 1 << 16 });
  // summing the rows of a row-major matrix: neighbouring outputs are adjacent
  t.deepEqual(reduction({ nOut: 1000, nInner: 100, innerContiguous: false, columnLike: true }).choice, { kind: 'column', chunks: 1, chunk: 100 });
  t.deepEqual(reduction({ nOut: 64, nInner: 1 << 20, innerContiguous: false, columnLike: true }).choice, { kind: 'column', chunks: 264, chunk: 3972 });
});

test('launch shape: 256-thread blocks, one item per thread or a tile per block, at most 8 blocks per SM striding over the rest', (t) => {
  t.deepEqual(gridStrideLaunch(1000, 256, 'elements'), { name: 'launch', choice: { grid: 4, block: 256 }, why: '1000 elements, one per thread' });
  t.deepEqual(gridStrideLaunch(1 << 26, 256, 'elements').choice, { grid: 1056, block: 256 });
  t.regex(gridStrideLaunch(1 << 26, 256, 'elements').why, /: 1056 blocks \(8 per SM\) stride over the rest$/);
  t.deepEqual(gridStrideLaunch(40, 1, 'tiles'), { name: 'launch', choice: { grid: 40, block: 256 }, why: '40 tiles, 1 per block' });
  t.is(gridStrideLaunch(0, 256, 'elements').choice.grid, 1, 'never an empty grid');
});

test('dot tiling: one 64x64x16 tile shape; the why says when a small dimension leaves a tile part idle', (t) => {
  t.deepEqual(dotTiling({ M: 4096, N: 4096, K: 4096 }).choice, { tileM: 64, tileN: 64, tileK: 16, threads: 256 });
  t.regex(dotTiling({ M: 4096, N: 4096, K: 4096 }).why, /reuse each loaded element 4 times/);
  t.regex(dotTiling({ M: 8, N: 4096, K: 64 }).why, /M = 8 fills part of a tile/);
});

const gemmFacts = (over: Partial<GemmFacts>): GemmFacts => ({
  B: 1, M: 4096, N: 4096, K: 4096, inputDtype: 'bfloat16', outputDtype: 'bfloat16', highest: false, sm: 90, forced: null, ...over,
});

test('gemm path: tensor cores for float32 / bfloat16 / float16 on sm_80+, the SIMT kernel for integers, float64, older GPUs and JAXON_GEMM=simt', (t) => {
  t.like(gemmPath(gemmFacts({})), { choice: 'mma', why: 'tensor cores: mma.sync, bfloat16, f32 accumulation' });
  t.regex(gemmPath(gemmFacts({ inputDtype: 'float32', outputDtype: 'float32' })).why, /float32 as tf32 \(default precision\)/);
  t.regex(gemmPath(gemmFacts({ inputDtype: 'float32', outputDtype: 'float32', highest: true })).why, /float32 as 3xTF32 \(Precision\.HIGHEST\)/);
  t.like(gemmPath(gemmFacts({ inputDtype: 'int32', outputDtype: 'int32' })), { choice: 'simt', why: 'int32 operands: exact integer accumulation on the SIMT kernel' });
  t.like(gemmPath(gemmFacts({ inputDtype: 'float64', outputDtype: 'float64' })), { choice: 'simt', why: 'float64 operands: double accumulation on the SIMT kernel' });
  t.like(gemmPath(gemmFacts({ inputDtype: 'float32', outputDtype: 'float64' })), { choice: 'simt', why: 'a float64 result: double accumulation on the SIMT kernel' });
  t.like(gemmPath(gemmFacts({ sm: 75 })), { choice: 'simt', why: 'sm_75 has no bf16/tf32 mma.sync (sm_80 and later)' });
  t.like(gemmPath(gemmFacts({ forced: 'simt' })), { choice: 'simt', why: 'JAXON_GEMM=simt' });
  t.like(gemmPath(gemmFacts({ forced: 'mma', inputDtype: 'int8', outputDtype: 'int32' })), { choice: 'simt' }, 'integers never go to tensor cores');
  t.like(gemmPath(gemmFacts({ forced: 'wgmma' })), { choice: 'wgmma', why: "JAXON_GEMM=wgmma: Hopper's warpgroup MMA, bfloat16, f32 accumulation" });
  t.like(gemmPath(gemmFacts({ forced: 'wgmma', sm: 80 })), { choice: 'mma', why: 'JAXON_GEMM=wgmma, but wgmma needs sm_90a, this is sm_80: mma.sync, bfloat16, f32 accumulation' });
  t.regex(gemmPath(gemmFacts({ forced: 'wgmma', inputDtype: 'float32', outputDtype: 'float32' })).why, /the wgmma kernel takes bfloat16 and float16/);
});

test('wgmma tiling: 128-row tiles, blockN 64 where N fits it, 2 to 4 stages of 64-deep k steps', (t) => {
  t.deepEqual(wgmmaTiling({ N: 4096, K: 4096 }).choice, { blockN: 128, stages: 4 });
  t.deepEqual(wgmmaTiling({ N: 40, K: 100 }).choice, { blockN: 64, stages: 2 });
  t.is(wgmmaTiling({ N: 40, K: 100 }).why, 'N = 40 fits 64; K = 100: 2 k steps');
});

test('gemm tiling: the largest block tile that fills the SMs, 64x64 and split-K for skinny shapes, 64-byte k steps, 2-4 stages', (t) => {
  t.deepEqual(gemmTiling(gemmFacts({})).choice, { blockM: 128, blockN: 256, blockK: 32, warpsM: 2, warpsN: 4, stages: 4, splitK: 1 });
  t.is(gemmTiling(gemmFacts({})).why, '512 tiles fill 132 SMs');
  t.like(gemmTiling(gemmFacts({ M: 2048, N: 1024 })).choice, { blockM: 128, blockN: 64 }, '128 tiles of 128x128 do not fill 132 SMs: 128x64');
  t.like(gemmTiling(gemmFacts({ inputDtype: 'float32', outputDtype: 'float32' })).choice, { blockK: 16, stages: 4 });
  // skinny: one 32x32 tile, K split over blocks
  const skinny = gemmTiling(gemmFacts({ M: 16, N: 24, K: 4097 }));
  t.like(skinny.choice, { blockM: 32, blockN: 32, warpsM: 1, warpsN: 1, splitK: 16 });
  t.is(skinny.why, '1 tile(s) cannot fill 132 SMs: K = 4097 split over 16 blocks');
  t.like(gemmTiling(gemmFacts({ M: 16, N: 24, K: 64 })).choice, { splitK: 1, stages: 2 }, 'short K: no split, 2 stages');
  // 3xTF32 keeps warp tiles at most 64x32 (two fragments per operand)
  t.true(gemmCandidates(gemmFacts({ inputDtype: 'float32', outputDtype: 'float32', highest: true })).every((c) => (c.blockM / c.warpsM) * (c.blockN / c.warpsN) <= 64 * 32));
  // small M or N: no tile much larger than the problem
  t.true(gemmCandidates(gemmFacts({ M: 7, N: 4096 })).every((c) => c.blockM === 32));
});

test('transpose tiling: an input contiguous along an outer axis and strided along the innermost goes through 32x32 tiles', (t) => {
  // out[i, j] = x[j, i] for x of [512, 256]: the view has strides [1, 256] over the output's [256, 512]
  t.deepEqual(transposeTiling({ shape: [256, 512], views: [[0, [1, 256]]] }).choice, { axis: 0, inputs: [0] });
  t.like(transposeTiling({ shape: [256, 512], views: [] }), { choice: null, why: 'no strided input' });
  t.like(transposeTiling({ shape: [16, 16], views: [[0, [1, 16]]] }), { choice: null, why: '256 elements: less than one 32x32 tile' });
  t.like(transposeTiling({ shape: [1024, 4], views: [[0, [1, 1024]]] }), { choice: null, why: 'the innermost axis (4) is shorter than 8' });
  // a broadcast (stride 0) along the innermost axis is no transpose
  t.like(transposeTiling({ shape: [256, 512], views: [[0, [1, 0]]] }), { choice: null, why: 'no input is contiguous along an outer axis of 8 or more' });
  // at most 4 inputs through tiles (shared memory per block)
  const five = [0, 1, 2, 3, 4].map((i) => [i, [1, 256]] as const);
  t.deepEqual(transposeTiling({ shape: [256, 512], views: five }).choice?.inputs, [0, 1, 2, 3]);
});

test('every rendered kernel records its decisions in its header', (t) => {
  const exp: Kernel = {
    kind: 'elementwise',
    inputs: [{ dtype: 'float32', access: 'contiguous' }],
    outputs: [{ dtype: 'float32', expr: { op: 'unary', name: 'exp', x: { op: 'input', index: 0, dtype: 'float32' }, dtype: 'float32' } }],
  };
  t.true(renderCuda(exp, [1 << 20, 1, 1 << 20]).source.includes('\n// decision vector width: 4 (4-element 16-byte loads of 4-byte elements)\n'));
  t.true(renderCuda(exp, [1 << 20, 1, 1 << 20]).source.includes('\n// decision launch: grid 1024 x block 256 (262144 4-wide vectors and leftover elements, one per thread)\n'));
  t.true(renderCuda(exp, [1 << 20, 1, 1 << 20], { alignments: [16, 4] }).source.includes('\n// decision vector width: 1 (alignments allow no vector load)\n'));
  // a transpose: out[256, 512] reads in0 through strides [1, 256]
  const transpose: Kernel = {
    kind: 'elementwise',
    inputs: [{ dtype: 'float32', access: 'strided' }],
    outputs: [{ dtype: 'float32', expr: { op: 'input', index: 0, dtype: 'float32' } }],
  };
  const tiled = renderCuda(transpose, [131072, 2, 256, 512, 0, 1, 256]).source;
  t.true(tiled.includes('\n// decision transpose tiling: 32x32 tiles of axes 0 and innermost, input(s) 0 (input(s) 0 contiguous along axis 0, strided along the innermost: reads and writes both coalesced)\n'));
  t.true(tiled.includes('\n// decision launch: grid 128 x block 256 (128 tiles, 1 per block)\n'));
  const broadcast = renderCuda(transpose, [131072, 2, 256, 512, 0, 0, 1]).source;
  t.true(broadcast.includes('\n// decision transpose tiling: none (no input is contiguous along an outer axis of 8 or more)\n'));
  const dotSource = renderCuda({ kind: 'dot', inputDtype: 'int32', outputDtype: 'int32' }, [1, 128, 128, 64, 0, 64, 1, 0, 128, 1]).source;
  t.true(dotSource.includes('\n// decision gemm path: simt (int32 operands: exact integer accumulation on the SIMT kernel)\n'));
  t.true(dotSource.includes('\n// decision dot tiling: 64x64 output tiles, 16-deep k steps, 256 threads (one tile shape for all sizes; 4x4 outputs per thread reuse each loaded element 4 times)\n'));
  const gemmSource = renderCuda({ kind: 'dot', inputDtype: 'bfloat16', outputDtype: 'bfloat16' }, [1, 128, 128, 64, 0, 64, 1, 0, 128, 1]).source;
  t.true(gemmSource.includes('\n// decision gemm path: mma (tensor cores: mma.sync, bfloat16, f32 accumulation)\n'));
  t.true(gemmSource.includes('\n// decision gemm tiling: 64x64x32 block tiles, 2x2 warps of 32x32, 2 stages (4 tile(s) cannot fill 132 SMs)\n'));
  const sum: Kernel = { kind: 'reduce', op: 'sum', inputDtype: 'float32', outputDtype: 'float32' };
  // params: [nOut, nInner, outerRank, outerShape, outerStrides, innerRank, innerShape, innerStrides]
  const rows = renderCuda(sum, [8, 100000, 1, 8, 100000, 1, 100000, 1]).source;
  t.regex(rows, /\n\/\/ decision reduction strategy: 25 blocks per output \(chunks of 4000\) \(100000 elements per output, 8 output\(s\) cannot fill 528 blocks: split\)\n/);
});
