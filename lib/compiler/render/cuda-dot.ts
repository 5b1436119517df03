// The CUDA dot kernel: out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n] over
// strided 3-d operand views, as the classic shared-memory tiled kernel (64x64 output
// tiles, 16-deep k steps, 256 threads with 4x4 outputs each). It accumulates
// floats in double (integers in wrapping 64 bits) and adds the products in k
// order; the CPU's float dots now go through a packed f32 GEMM
// (cuda/kernels/jaxon_gemm.h, f32 accumulation as OpenBLAS and XLA's CPU), so
// the two agree to f32 accumulation error; tensor cores (f32 accumulation)
// come later. Tile loads are coalesced along whichever operand axis is
// contiguous. The optional epilogue (bias, activation, cast) runs on each
// product element as it is stored.
import { isFloating } from '../../core/dtype.js';
import type { DotKernel } from '../kernel-ir.js';
import { type BufferArg, type RenderedKernel, dotStrides, indent, indexType, int, viewReach } from './cuda-common.js';
import { CUDA_DIALECT, CUDA_TYPES, ExprRenderer } from './expr.js';
import { ParamReader } from './cuda-params.js';
import { dotTiling } from './cuda-decisions.js';

const { computeType, loadValue, storeValue } = CUDA_TYPES;

export function dot(k: DotKernel, params: readonly number[]): RenderedKernel {
  const r = new ParamReader(params, 'dot');
  const [B, M, N, K] = r.take(4, 'B, M, N, K') as [number, number, number, number];
  const tiling = dotTiling({ M, N, K });
  const { tileM: TILE_M, tileN: TILE_N, tileK: TILE_K, threads: THREADS } = tiling.choice;
  const [lsb, lsm, lsk] = r.take(3, 'lhs strides') as [number, number, number];
  const [rsb, rsk, rsn] = r.take(3, 'rhs strides') as [number, number, number];
  const epilogueInputs = k.epilogue?.inputs ?? [];
  const views = epilogueInputs.map((_, i) => r.take(3, `epilogue input ${i} strides (B, M, N)`));
  r.done();

  const outputs = k.epilogue ? k.epilogue.outputs : [{ dtype: k.outputDtype, expr: null }];
  const buffers: BufferArg[] = [
    ...outputs.map((o, j) => ({ name: `out${j}`, dtype: o.dtype, output: true })),
    { name: 'lhs', dtype: k.inputDtype, output: false },
    { name: 'rhs', dtype: k.inputDtype, output: false },
    ...epilogueInputs.map((e, i) => ({ name: `ein${i}`, dtype: e.dtype, output: false })),
  ];
  const idx = indexType([
    B * M * N, M + TILE_M, N + TILE_N, K + TILE_K,
    viewReach([B, M, K], [lsb, lsm, lsk]), viewReach([B, K, N], [rsb, rsk, rsn]),
    ...views.map((v) => viewReach([B, M, N], v)),
  ]);
  const floating = isFloating(k.outputDtype) || isFloating(k.inputDtype);
  const acc = floating ? 'double' : 'jx_u64';
  const ct = computeType(k.inputDtype);
  // float32 and 16-bit products are exact in double, so an FMA changes nothing; wider ones round each step like C
  const exactProducts = k.inputDtype === 'float32' || k.inputDtype === 'float16' || k.inputDtype === 'bfloat16' || !floating;
  const step = exactProducts ? 'acc[i][j] += (ACC)av[i] * (ACC)bv[j];' : 'acc[i][j] = __dadd_rn(acc[i][j], __dmul_rn((ACC)av[i], (ACC)bv[j]));';

  // coalesced tile loads: consecutive threads walk the operand's contiguous axis
  const aLoad = lsk === 1 || lsm !== 1 ? ['const int kk = e & 15, mm = e >> 4;'] : ['const int mm = e & 63, kk = e >> 6;'];
  const bLoad = rsn === 1 || rsk !== 1 ? ['const int nn = e & 63, kk = e >> 6;'] : ['const int kk = e & 15, nn = e >> 4;'];

  const result = k.outputDtype === 'bool' ? 'acc[i][j]' : `(${computeType(k.outputDtype)})acc[i][j]`;
  let store: string[];
  if (!k.epilogue) {
    store = [`out0[o] = ${storeValue(k.outputDtype, result)};`];
  } else {
    const nE = epilogueInputs.length;
    const renderer = new ExprRenderer(CUDA_DIALECT, 
      (i) => (i === nE ? 'res' : loadValue(epilogueInputs[i]!.dtype, `ein${i}[${dotStrides(['bz', 'gm', 'gn'], views[i]!)}]`)),
      (axis) => {
        throw new Error(`renderCuda: a dot epilogue reads iota axis ${axis}; dot epilogues carry no iota (kernel-ir.ts)`);
      },
    );
    const values = k.epilogue.outputs.map((o) => renderer.render(o.expr));
    store = [
      `const ${computeType(k.outputDtype)} res = ${loadValue(k.outputDtype, storeValue(k.outputDtype, result))};`,
      ...renderer.lines,
      ...k.epilogue.outputs.map((o, j) => `out${j}[o] = ${storeValue(o.dtype, values[j]!)};`),
    ];
  }

  const mTiles = Math.ceil(M / TILE_M);
  const body = [
    `typedef ${idx} jx_index;`,
    `typedef ${acc} ACC;`,
    `__shared__ ${ct} jx_a[${TILE_K}][${TILE_M + 1}];`,
    `__shared__ ${ct} jx_b[${TILE_K}][${TILE_N + 1}];`,
    'const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;',
    `const jx_index n0 = (jx_index)blockIdx.x * ${TILE_N};`,
    `for (jx_index bz = blockIdx.z; bz < ${int(B)}; bz += gridDim.z) {`,
    `  for (jx_index mt = blockIdx.y; mt < ${int(mTiles)}; mt += gridDim.y) {`,
    indent([
      `const jx_index m0 = mt * ${TILE_M};`,
      'ACC acc[4][4];',
      '#pragma unroll',
      'for (int i = 0; i < 4; ++i) {',
      '  #pragma unroll',
      '  for (int j = 0; j < 4; ++j) acc[i][j] = 0;',
      '}',
      `for (jx_index k0 = 0; k0 < ${int(K)}; k0 += ${TILE_K}) {`,
      '  #pragma unroll',
      `  for (int t = 0; t < ${(TILE_M * TILE_K) / THREADS}; ++t) {`,
      `    const int e = threadIdx.x + t * ${THREADS};`,
      `    ${aLoad[0]}`,
      '    const jx_index gm = m0 + mm, gk = k0 + kk;',
      `    jx_a[kk][mm] = gm < ${int(M)} && gk < ${int(K)} ? (${ct})${loadValue(k.inputDtype, `lhs[${dotStrides(['bz', 'gm', 'gk'], [lsb, lsm, lsk])}]`)} : (${ct})0;`,
      '  }',
      '  #pragma unroll',
      `  for (int t = 0; t < ${(TILE_N * TILE_K) / THREADS}; ++t) {`,
      `    const int e = threadIdx.x + t * ${THREADS};`,
      `    ${bLoad[0]}`,
      '    const jx_index gk = k0 + kk, gn = n0 + nn;',
      `    jx_b[kk][nn] = gk < ${int(K)} && gn < ${int(N)} ? (${ct})${loadValue(k.inputDtype, `rhs[${dotStrides(['bz', 'gk', 'gn'], [rsb, rsk, rsn])}]`)} : (${ct})0;`,
      '  }',
      '  __syncthreads();',
      `  const int kmax = ${int(K)} - k0 < ${TILE_K} ? (int)(${int(K)} - k0) : ${TILE_K};`,
      '  #pragma unroll',
      `  for (int kk = 0; kk < ${TILE_K}; ++kk) {`,
      '    if (kk < kmax) { // the products add in k order, as in C (no padding terms: -0 sums stay -0)',
      `      ${ct} av[4], bv[4];`,
      '      #pragma unroll',
      '      for (int i = 0; i < 4; ++i) av[i] = jx_a[kk][ty + 16 * i];',
      '      #pragma unroll',
      '      for (int j = 0; j < 4; ++j) bv[j] = jx_b[kk][tx + 16 * j];',
      '      #pragma unroll',
      '      for (int i = 0; i < 4; ++i) {',
      '        #pragma unroll',
      `        for (int j = 0; j < 4; ++j) ${step}`,
      '      }',
      '    }',
      '  }',
      '  __syncthreads();',
      '}',
      '#pragma unroll',
      'for (int i = 0; i < 4; ++i) {',
      '  #pragma unroll',
      '  for (int j = 0; j < 4; ++j) {',
      '    const jx_index gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;',
      `    if (gm < ${int(M)} && gn < ${int(N)}) {`,
      `      const jx_index o = (bz * ${int(M)} + gm) * ${int(N)} + gn;`,
      indent(store, 6),
      '    }',
      '  }',
      '}',
    ], 4),
    '  }',
    '}',
  ];
  return {
    buffers,
    body: indent(body, 2),
    grid: [Math.max(1, Math.ceil(N / TILE_N)), Math.max(1, Math.min(mTiles, 65535)), Math.max(1, Math.min(B, 65535))],
    block: [THREADS, 1, 1],
    strategy: `dot, ${TILE_M}x${TILE_N} shared-memory tiles, ${acc} accumulation${k.epilogue ? ', fused epilogue' : ''} (${idx} indices)`,
    decisions: [tiling],
  };
}
