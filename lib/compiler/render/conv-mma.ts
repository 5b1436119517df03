// The tensor-core convolution (issue 15): the conv's implicit GEMM (render/
// conv.ts: M = batch x output pixels, N = output features of a group, K =
// taps x input features, a grid of (M tiles, N tiles x K splits, groups)) on
// mma.sync, with the GEMM's warp tiles and k steps (cuda-gemm.ts mmaStep:
// ldmatrix and m16n8k16 for float16 / bfloat16, m16n8k8 on tf32-rounded or,
// at Precision.HIGHEST, 3xTF32-split float32 fragments; f32 accumulation).
// What differs from the GEMM is the A tile: each k step gathers it from the
// input by the conv's index arithmetic (no im2col buffer; zeros for padding
// and lhs-dilation holes), into BM rows of 64 bytes of k. Where the input
// features are contiguous and a whole chunk of them lies in one tap (the
// features per group a multiple of the chunk), a row's chunk is one cp.async,
// zero-filled when the tap reads padding, each thread's rows indexed once
// before the k loop; else element by element. The B
// tile (k x output features) comes from the kernel with output features
// contiguous (lower.ts copies the kernel operand so), by cp.async chunks
// zero-filled past the group's last feature, or element by element. Tiles
// stream through `stages` buffers while earlier ones compute. A grid of
// fewer tiles than SMs splits K (conv.ts's scheme: partials in a module-scope
// workspace, the last block of a tile adds them in split order).
import { itemsize } from '../../core/dtype.js';
import type { ConvKernel } from '../kernel-ir.js';
import { type RenderedKernel, indent, indexType, int, viewReach } from './cuda-common.js';
import { type ConvPath, type Decision, type GemmTiling } from './cuda-decisions.js';
import { accumulators, mmaStep, pipeline, tileSwizzle } from './cuda-gemm.js';
import { CUDA_TYPES } from './expr.js';

/** What conv.ts hands over: the params by name, their lines, and the pieces of index arithmetic both kernels share. */
export interface ConvMmaInput {
  k: ConvKernel;
  value: (name: string) => number;
  /** `const jx_index <param> = <value>;` lines (and their (void) uses) */
  constants: string[];
  /** lines setting `${name}_ok` and `${name}_off` for output coordinate y and tap coordinate t of spatial dim d */
  lhsPosition: (d: number, y: string, t: string, name: string) => string[];
  /** the same from the position p = y s + t rd - lo in the padded, dilated input */
  lhsPositionAt: (d: number, p: string, name: string) => string[];
  /** lines unravelling a row-major linear index into `${prefix}${d}` */
  unravel: (linear: string, rank: number, size: (d: number) => string, prefix: string) => string[];
  /** the store conversion of the output dtype */
  store: (v: string) => string;
  /** byte alignments of out, lhs, rhs */
  alignments: readonly number[];
}

/** The widest cp.async (16, 8, 4 bytes) whose every address is aligned: along a unit stride, `others` the strides it steps by. */
function chunkBytes(E: number, alignment: number, others: readonly number[], fits: (elements: number) => boolean): number {
  return [16, 8, 4].find((c) => c >= E && alignment % c === 0 && fits(c / E) && others.every((s) => (s * E) % c === 0)) ?? 0;
}

export function convMma(c: ConvMmaInput, path: Decision<ConvPath>, tiling: Decision<GemmTiling>, name: string): RenderedKernel {
  const { k, value: v } = c;
  const r = k.spatialRank;
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  const { blockM: BM, blockN: BN, blockK: BK, warpsM: WM, warpsN: WN, stages: S, splitK: SPLIT } = tiling.choice;
  const E = itemsize(k.inputDtype);
  const f32 = k.inputDtype === 'float32';
  const highest = k.precision === 'highest' && f32;
  const THREADS = WM * WN * 32;
  const WTM = BM / WM, WTN = BN / WN, MT = WTM / 16, NT = WTN / 8;
  if (WTM % 16 || WTN % 16 || BK * E !== 64 || (BN * BK * E) % 1024) throw new Error(`renderCuda: conv tiling ${JSON.stringify(tiling.choice)} does not fit ${k.inputDtype} mma tiles`);
  const outSp = range(r).map((d) => v(`out${d}`));
  const kSp = range(r).map((d) => v(`k${d}`));
  const I = v('I'), Og = v('Og'), groups = Math.max(1, v('groups'));
  const M = v('nOut') * outSp.reduce((a, b) => a * b, 1);
  const K = kSp.reduce((a, b) => a * b, 1) * I;
  const tilesM = Math.max(1, Math.ceil(M / BM)), tilesN = Math.max(1, Math.ceil(Og / BN)), tiles = tilesM * tilesN * groups;
  const kTiles = Math.ceil(K / BK);
  const perSplit = Math.ceil(kTiles / SPLIT);
  const lhsReach = viewReach([v('groups'), v('nOut'), I, ...range(r).map((d) => v(`in${d}`))], [v('lsG'), v('lsN'), v('lsC'), ...range(r).map((d) => v(`ls${d}`))]);
  const rhsReach = viewReach([v('groups') * Og, I, ...kSp], [v('rsO'), v('rsI'), ...range(r).map((d) => v(`rs${d}`))]);
  const outReach = viewReach([v('nOut'), v('groups') * Og, ...outSp], [v('osN'), v('osO'), ...range(r).map((d) => v(`os${d}`))]);
  const idx = indexType([lhsReach, rhsReach, outReach, M + BM, K + BK * SPLIT, Og + BN, SPLIT * M * Og * groups]);
  const st = CUDA_TYPES.storageType(k.inputDtype);

  // the copies: lhs chunks of input features within one tap; rhs chunks of a group's output features
  const lhsChunk = chunkBytes(E, c.alignments[1] ?? 16, [v('lsN'), ...(groups > 1 ? [v('lsG')] : []), ...range(r).map((d) => v(`ls${d}`))], (n) => I % n === 0 && (n === 1 || v('lsC') === 1));
  const rhsChunk = v('rsO') === 1 ? chunkBytes(E, c.alignments[2] ?? 16, [v('rsI'), ...(groups > 1 ? [Og] : []), ...range(r).map((d) => v(`rs${d}`))], () => true) : 0;
  const lhsWhy = lhsChunk ? `lhs by ${lhsChunk}-byte cp.async (rows indexed once)` : `lhs element by element (${v('lsC') !== 1 && I > 1 ? `feature stride ${v('lsC')}` : `${I} features per group, strides or alignment allow no ${E}-byte multiple chunk`})`;
  const rhsWhy = rhsChunk ? `rhs by ${rhsChunk}-byte cp.async` : `rhs element by element (${v('rsO') !== 1 ? `output-feature stride ${v('rsO')}` : 'strides or alignment allow no chunk'})`;

  const A_BYTES = BM * BK * E, B_BYTES = BK * BN * E, STAGE = A_BYTES + B_BYTES;
  const swizzleA = tileSwizzle(f32, BK * E), swizzleB = tileSwizzle(f32, BN * E);
  const aAt = (f: string, kk: string) => swizzleA(`(${f}) * ${BK * E} + (${kk}) * ${E}`);
  const bAt = (f: string, kk: string) => swizzleB(`(${kk}) * ${BN * E} + (${f}) * ${E}`);

  // the tap t0.. and input feature ci of reduction index kx
  const tapOf = (kx: string) => ['const jx_index ci = ' + kx + ' % I;', ...c.unravel(`${kx} / I`, r, (d) => `k${d}`, 't')];
  /** lines setting `off` and `ok` for output row m (batch, pixel) at tap t0.. and feature ci */
  const lhsOffset = [
    ...c.unravel('m', r + 1, (d) => `out${d - 1}`, 'y'),
    'jx_index off = grp * lsG + y0 * lsN + ci * lsC;',
    'int ok = 1;',
    ...range(r).flatMap((d) => [...c.lhsPosition(d, `y${d + 1}`, `t${d}`, `q${d}`), `ok &= q${d}_ok; off += q${d}_off;`]),
  ];
  const rhsOffset = `(grp * Og + o) * rsO + ci * rsI${range(r).map((d) => ` + t${d} * rs${d}`).join('')}`;
  // A by chunks: a thread copies the same chunk column of the same rows at every k step (the block's threads are a
  // multiple of a row's 4 to 16 chunks), so the rows' index arithmetic (batch, output pixel: divisions) is done once,
  // before the k loop (4 to 16 rows a thread), and the tap and feature once per k step
  const chunksPerRow = lhsChunk ? (BK * E) / lhsChunk : 0;
  const rowsPerThread = lhsChunk ? (BM * chunksPerRow) / THREADS : 0;
  if (lhsChunk && (THREADS % chunksPerRow || !Number.isInteger(rowsPerThread))) throw new Error(`renderCuda: conv tiling ${JSON.stringify(tiling.choice)}: ${THREADS} threads do not cover rows of ${chunksPerRow} chunks`);
  const rowSetup = lhsChunk
    ? [
        `const int aCol = threadIdx.x % ${chunksPerRow} * ${lhsChunk / E};`,
        `jx_index aBase[${rowsPerThread}]${range(r).map((d) => `, aP${d}[${rowsPerThread}]`).join('')};`,
        `bool aIn[${rowsPerThread}];`,
        '#pragma unroll',
        `for (int i = 0; i < ${rowsPerThread}; ++i) {`,
        indent([
          `const jx_index m = m0 + threadIdx.x / ${chunksPerRow} + i * ${THREADS / chunksPerRow};`,
          'aIn[i] = m < M;',
          ...c.unravel('(aIn[i] ? m : 0)', r + 1, (d) => `out${d - 1}`, 'y'),
          'aBase[i] = grp * lsG + y0 * lsN;',
          ...range(r).map((d) => `aP${d}[i] = y${d + 1} * s${d} - lo${d};`),
        ], 2),
        '}',
      ]
    : [];
  const hoistedA = (sa: string): string[] => [
    '{',
    indent([
      'const jx_index kx = k0 + aCol;',
      'const bool kIn = kx < K;',
      ...tapOf('(kIn ? kx : 0)'),
      '#pragma unroll',
      `for (int i = 0; i < ${rowsPerThread}; ++i) {`,
      indent([
        'int bytes = 0;',
        `const ${st} *src = lhs;`,
        'if (kIn && aIn[i]) {',
        indent([
          'jx_index off = aBase[i] + ci * lsC;',
          'int ok = 1;',
          ...range(r).flatMap((d) => [...c.lhsPositionAt(d, `aP${d}[i] + t${d} * rd${d}`, `q${d}`), `ok &= q${d}_ok; off += q${d}_off;`]),
          `if (ok) { bytes = ${lhsChunk}; src = lhs + off; }`,
        ], 2),
        '}',
        `const int row = threadIdx.x / ${chunksPerRow} + i * ${THREADS / chunksPerRow};`,
        `jx_cp_async_${lhsChunk}(${sa} + ${swizzleA(`row * ${BK * E} + aCol * ${E}`)}, src, bytes);`,
      ], 2),
      '}',
    ], 2),
    '}',
  ];
  const loadStage = (): string[] => {
    const sa = 'jx_smem + stage * ' + STAGE, sb = `jx_smem + stage * ${STAGE} + ${A_BYTES}`;
    const a = lhsChunk
      ? hoistedA(sa)
      : [
          `for (int e = threadIdx.x; e < ${BM * BK}; e += ${THREADS}) {`,
          indent([
            `const int row = e / ${BK}, col = e % ${BK};`,
            'const jx_index m = m0 + row, kx = k0 + col;',
            `${st} x = (${st})0;`,
            'if (m < M && kx < K) {',
            indent([...tapOf('kx'), ...lhsOffset, 'if (ok) x = lhs[off];'], 2),
            '}',
            `*(${st} *)(${sa} + ${swizzleA(`row * ${BK * E} + col * ${E}`)}) = x;`,
          ], 2),
          '}',
        ];
    const b = rhsChunk
      ? [
          `for (int q = threadIdx.x; q < ${(BK * BN * E) / rhsChunk}; q += ${THREADS}) {`,
          indent([
            `const int row = q / ${(BN * E) / rhsChunk}, col = q % ${(BN * E) / rhsChunk} * ${rhsChunk / E};`,
            'const jx_index kx = k0 + row, o = n0 + col;',
            'int bytes = 0;',
            `const ${st} *src = rhs;`,
            'if (kx < K && o < Og) {',
            indent([...tapOf('kx'), `bytes = (int)min((jx_index)${rhsChunk}, (Og - o) * ${E});`, `src = rhs + ${rhsOffset};`], 2),
            '}',
            `jx_cp_async_${rhsChunk}(${sb} + ${swizzleB(`row * ${BN * E} + col * ${E}`)}, src, bytes);`,
          ], 2),
          '}',
        ]
      : [
          `for (int e = threadIdx.x; e < ${BK * BN}; e += ${THREADS}) {`,
          indent([
            `const int row = e / ${BN}, col = e % ${BN};`,
            'const jx_index kx = k0 + row, o = n0 + col;',
            `${st} w = (${st})0;`,
            'if (kx < K && o < Og) {',
            indent([...tapOf('kx'), `w = rhs[${rhsOffset}];`], 2),
            '}',
            `*(${st} *)(${sb} + ${swizzleB(`row * ${BN * E} + col * ${E}`)}) = w;`,
          ], 2),
          '}',
        ];
    return [...a, ...b];
  };

  const step = mmaStep({ dtype: k.inputDtype, highest, MT, NT, a: 'k', b: 'free', aAt, bAt });

  // ---- the epilogue: accumulator (mt, nt, i) is output row gm = m0 + wm0 + mt 16 + g + 8 (i >> 1), feature gn ----
  /** each accumulator element inside the output, with `base` its output offset less the feature's */
  const element = (lines: string[]) => [
    '#pragma unroll',
    `for (int mt = 0; mt < ${MT}; ++mt) {`,
    '  #pragma unroll',
    '  for (int h = 0; h < 2; ++h) {',
    indent([
      `const jx_index gm = m0 + wm0 + mt * 16 + g + 8 * h;`,
      'if (gm >= M) continue;',
      ...c.unravel('gm', r + 1, (d) => `out${d - 1}`, 'y'),
      `const jx_index base = y0 * osN + grp * Og * osO${range(r).map((d) => ` + y${d + 1} * os${d}`).join('')};`,
      '(void)base;',
      '#pragma unroll',
      `for (int nt = 0; nt < ${NT}; ++nt) {`,
      '  #pragma unroll',
      '  for (int j = 0; j < 2; ++j) {',
      '    const int i = 2 * h + j;',
      `    const jx_index gn = n0 + wn0 + nt * 8 + 2 * t + j;`,
      '    if (gn >= Og) continue;',
      indent(lines, 4),
      '  }',
      '}',
    ], 4),
    '  }',
    '}',
  ];
  const ticket = `${name}_tickets[(grp * ${tilesN} + blockIdx.y % ${tilesN}) * ${tilesM} + blockIdx.x]`;
  const epilogue = SPLIT === 1
    ? element([`out[base + gn * osO] = ${c.store('acc[mt][nt][i]')};`])
    : [
        ...element([`${name}_partials[((split * ${groups} + grp) * M + gm) * Og + gn] = acc[mt][nt][i];`]),
        '__threadfence();',
        '__syncthreads();',
        `if (threadIdx.x == 0) jx_last = atomicAdd(&${ticket}, 1u) == ${SPLIT - 1};`,
        '__syncthreads();',
        'if (jx_last) {',
        '  __threadfence();',
        indent(element([
          'float total = 0.0f;',
          `for (int s = 0; s < ${SPLIT}; ++s) total += ${name}_partials[((s * ${groups} + grp) * M + gm) * Og + gn];`,
          `out[base + gn * osO] = ${c.store('total')};`,
        ]), 2),
        `  if (threadIdx.x == 0) ${ticket} = 0u; // ready for the next launch`,
        '}',
      ];

  const body = [
    `typedef ${idx} jx_index;`,
    ...c.constants,
    `const jx_index M = ${int(M)}, K = ${int(K)};`,
    'extern __shared__ __align__(1024) unsigned char jx_smem[];',
    ...(SPLIT > 1 ? ['__shared__ bool jx_last;'] : []),
    'const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;',
    `const int wm0 = warp / ${WN} * ${WTM}, wn0 = warp % ${WN} * ${WTN};`,
    'const jx_index grp = blockIdx.z;',
    `const jx_index m0 = (jx_index)blockIdx.x * ${BM}, n0 = (jx_index)(blockIdx.y % ${tilesN}) * ${BN};`,
    `const int split = blockIdx.y / ${tilesN}, kt0 = split * ${perSplit}, kt1 = min(kt0 + ${perSplit}, ${kTiles});`,
    '(void)split;',
    ...accumulators(MT, NT),
    ...step.decls,
    ...rowSetup,
    ...pipeline({ S, BK, KSTEP: f32 ? 8 : 16, STAGE, A_BYTES, MT, NT, loadStage: loadStage(), fragments: step.fragments, products: step.products }),
    ...epilogue,
  ];
  const globals = [
    '#include "jaxon_mma.h"',
    ...(SPLIT > 1 ? [`__device__ float ${name}_partials[${SPLIT * M * Og * groups}];`, `__device__ unsigned ${name}_tickets[${tiles}];`] : []),
  ].join('\n');
  const operands = f32 ? (highest ? '3xTF32' : 'tf32') : k.inputDtype;
  return {
    globals,
    buffers: [
      { name: 'out', dtype: k.outputDtype, output: true },
      { name: 'lhs', dtype: k.inputDtype, output: false },
      { name: 'rhs', dtype: k.inputDtype, output: false },
    ],
    body: indent(body, 2),
    grid: [tilesM, tilesN * SPLIT, groups],
    block: [THREADS, 1, 1],
    sharedMemBytes: S * STAGE,
    strategy: `conv, implicit tensor-core GEMM (mma.sync ${operands}), M ${M} (batch x output pixels) x N ${Og} (features per group) x K ${K} (taps x features) per group, ${BM}x${BN}x${BK} tiles, ${WM}x${WN} warps, ${S} stages${SPLIT > 1 ? `, split-K ${SPLIT}` : ''}, f32 accumulation; ${lhsWhy}, ${rhsWhy}; ${v('groups')} group(s) (${idx} indices)`,
    decisions: [path, tiling],
  };
}
