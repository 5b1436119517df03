// The CUDA dot kernels: out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n] over
// strided 3-d operand views. `dot` picks the path (a named decision,
// cuda-decisions.ts gemmPath): float32, bfloat16 and float16 operands go to
// the tensor-core GEMM (cuda-gemm.ts, f32 accumulation) on sm_80 and later;
// integers, float64 and a float64 result, older GPUs and JAXON_GEMM=simt get
// the classic shared-memory tiled kernel here (64x64 output tiles, 16-deep k
// steps, 256 threads with 4x4 outputs each), which accumulates float32 and
// 16-bit operands in float with fused multiply-adds, float64 in double,
// integers in wrapping 64 bits, adding the products in k order.
// Tile loads are coalesced along whichever operand axis is contiguous. Both
// paths run the optional epilogue (bias, activation, cast: dotStore) on each
// product element as it is stored.
import { isFloating } from '../../core/dtype.js';
import type { DotKernel } from '../kernel-ir.js';
import { type BufferArg, type RenderedKernel, dotStrides, indent, indexType, int, viewReach } from './cuda-common.js';
import { CUDA_DIALECT, CUDA_TYPES, ExprRenderer } from './expr.js';
import { ParamReader } from './cuda-params.js';
import { type GemmPath, type GemmTiling, dotTiling, forcedGemmPath, gemmPath, gemmTiling, wgmmaTiling } from './cuda-decisions.js';
import { gemm } from './cuda-gemm.js';
import { wgmma } from './cuda-wgmma.js';

const { computeType, loadValue, storeValue } = CUDA_TYPES;

/** What the renderer knows of the GPU a dot runs on, and what the runtime chose for it. */
export interface GemmTarget {
  /** compute capability as major * 10 + minor (default 90: the H100 every launch shape here is sized for) */
  sm?: number;
  /** a forced path (default: JAXON_GEMM) */
  path?: GemmPath | null;
  /** what an autotune chose for this shape class (and why), used instead of the heuristic's */
  tuned?: { path?: 'mma' | 'wgmma'; tiling: GemmTiling; why: string } | null;
  /** whether the driver can encode TMA descriptors (cuTensorMapEncodeTiled; default true) */
  tma?: boolean;
}

/** A dot kernel's params, read in kernel-ir.ts's order. */
export interface DotParams {
  B: number;
  M: number;
  N: number;
  K: number;
  /** lhs strides (batch, m, k) and rhs strides (batch, k, n) */
  lhs: [number, number, number];
  rhs: [number, number, number];
  /** each epilogue input's (batch, m, n) strides */
  views: number[][];
}

export function dotParams(k: DotKernel, params: readonly number[]): DotParams {
  const r = new ParamReader(params, 'dot');
  const [B, M, N, K] = r.take(4, 'B, M, N, K') as [number, number, number, number];
  const lhs = r.take(3, 'lhs strides') as [number, number, number];
  const rhs = r.take(3, 'rhs strides') as [number, number, number];
  const views = (k.epilogue?.inputs ?? []).map((_, i) => r.take(3, `epilogue input ${i} strides (B, M, N)`));
  r.done();
  return { B, M, N, K, lhs, rhs, views };
}

/** The kernel's buffers: outputs..., lhs, rhs, epilogue inputs... */
export function dotBuffers(k: DotKernel): BufferArg[] {
  const outputs = k.epilogue ? k.epilogue.outputs : [{ dtype: k.outputDtype }];
  return [
    // plan.ts may write an epilogue output over an epilogue input of its layout: no __restrict__ on either
    ...outputs.map((o, j) => ({ name: `out${j}`, dtype: o.dtype, output: true, restrict: !k.epilogue })),
    { name: 'lhs', dtype: k.inputDtype, output: false },
    { name: 'rhs', dtype: k.inputDtype, output: false },
    ...(k.epilogue?.inputs ?? []).map((e, i) => ({ name: `ein${i}`, dtype: e.dtype, output: false, restrict: false })),
  ];
}

/**
 * Statements storing one product element: `acc` (an expression of the accumulator) rounded to the output dtype,
 * then each epilogue output at offset `o`, its inputs read at (bz, gm, gn). The product enters the epilogue
 * rounded to the output dtype, as the unfused program would store it.
 */
export function dotStore(k: DotKernel, views: readonly number[][], acc: string): string[] {
  const result = k.outputDtype === 'bool' ? acc : `(${computeType(k.outputDtype)})(${acc})`;
  if (!k.epilogue) return [`out0[o] = ${storeValue(k.outputDtype, result)};`];
  const inputs = k.epilogue.inputs;
  const renderer = new ExprRenderer(CUDA_DIALECT,
    (i) => (i === inputs.length ? 'res' : loadValue(inputs[i]!.dtype, `ein${i}[${dotStrides(['bz', 'gm', 'gn'], views[i]!)}]`)),
    (axis) => {
      throw new Error(`renderCuda: a dot epilogue reads iota axis ${axis}; dot epilogues carry no iota (kernel-ir.ts)`);
    },
  );
  const values = k.epilogue.outputs.map((o) => renderer.render(o.expr));
  return [
    `const ${computeType(k.outputDtype)} res = ${loadValue(k.outputDtype, storeValue(k.outputDtype, result))};`,
    ...renderer.lines,
    ...k.epilogue.outputs.map((o, j) => `out${j}[o] = ${storeValue(o.dtype, values[j]!)};`),
  ];
}

/** The dot kernel for these params: the tensor-core GEMM or the SIMT kernel, as the `gemm path` decision says. */
export function dot(k: DotKernel, params: readonly number[], alignments: readonly number[], name: string, target: GemmTarget = {}): RenderedKernel {
  const p = dotParams(k, params);
  const facts = {
    B: p.B, M: p.M, N: p.N, K: p.K, inputDtype: k.inputDtype, outputDtype: k.outputDtype, highest: k.precision === 'highest',
    sm: target.sm ?? 90, forced: target.path === undefined ? forcedGemmPath() : target.path,
  };
  const path = target.tuned?.path === 'wgmma' && facts.forced === null && facts.sm === 90 && k.inputDtype !== 'float32'
    ? { name: 'gemm path', choice: 'wgmma' as const, why: `Hopper's warpgroup MMA, ${k.inputDtype}, f32 accumulation: ${target.tuned.why}` }
    : gemmPath(facts);
  if (path.choice === 'simt') return simtDot(k, p, path);
  if (path.choice === 'wgmma') return wgmma(k, p, alignments, path, wgmmaTiling(p), target.tma ?? true);
  const tiling = target.tuned ? { name: 'gemm tiling', choice: target.tuned.tiling, why: target.tuned.why } : gemmTiling(facts);
  return gemm(k, p, alignments, path, tiling, name);
}

/** The SIMT kernel: shared-memory tiles, float (double, wrapping 64-bit integer) accumulation in k order. */
function simtDot(k: DotKernel, p: DotParams, path: ReturnType<typeof gemmPath>): RenderedKernel {
  const { B, M, N, K, views } = p;
  const tiling = dotTiling({ M, N, K });
  const { tileM: TILE_M, tileN: TILE_N, tileK: TILE_K, threads: THREADS } = tiling.choice;
  const [lsb, lsm, lsk] = p.lhs;
  const [rsb, rsk, rsn] = p.rhs;
  const buffers = dotBuffers(k);
  const idx = indexType([
    B * M * N, M + TILE_M, N + TILE_N, K + TILE_K,
    viewReach([B, M, K], [lsb, lsm, lsk]), viewReach([B, K, N], [rsb, rsk, rsn]),
    ...views.map((v) => viewReach([B, M, N], v)),
  ]);
  const floating = isFloating(k.outputDtype) || isFloating(k.inputDtype);
  // float accumulation for float32 and 16-bit operands (as the tensor-core GEMM and the CPU's), double for float64
  // operands or result, wrapping 64 bits for integers
  const double = k.inputDtype === 'float64' || k.outputDtype === 'float64';
  const acc = !floating ? 'jx_u64' : double ? 'double' : 'float';
  const ct = computeType(k.inputDtype);
  // float32 and 16-bit products are exact in double, so an FMA changes nothing there; float64 rounds each step like C
  const step = !floating ? 'acc[i][j] += (ACC)av[i] * (ACC)bv[j];'
    : !double ? 'acc[i][j] = __fmaf_rn(av[i], bv[j], acc[i][j]);'
    : k.inputDtype !== 'float64' ? 'acc[i][j] += (ACC)av[i] * (ACC)bv[j];'
    : 'acc[i][j] = __dadd_rn(acc[i][j], __dmul_rn((ACC)av[i], (ACC)bv[j]));';

  // coalesced tile loads: consecutive threads walk the operand's contiguous axis
  const aLoad = lsk === 1 || lsm !== 1 ? ['const int kk = e & 15, mm = e >> 4;'] : ['const int mm = e & 63, kk = e >> 6;'];
  const bLoad = rsn === 1 || rsk !== 1 ? ['const int nn = e & 63, kk = e >> 6;'] : ['const int kk = e & 15, nn = e >> 4;'];

  const store = dotStore(k, views, 'acc[i][j]');

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
    decisions: [path, tiling],
  };
}
