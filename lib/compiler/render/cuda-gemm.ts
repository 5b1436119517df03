// The tensor-core GEMM (issue 17): out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n]
// with mma.sync (sm_80 and later) through the device functions of
// cuda/kernels/jaxon_mma.h, f32 accumulation, the epilogue fused into the
// store (cuda-dot.ts dotStore). The shape of CUTLASS's sm80 multistage GEMM:
// a block computes a blockM x blockN tile with warpsM x warpsN warps, each a
// (blockM / warpsM) x (blockN / warpsN) tile of m16n8 mma tiles; operand
// tiles of blockK (64 bytes) per stage stream through `stages` buffers of
// dynamic shared memory with cp.async (16-byte copies, or 8 or 4 where the
// strides are not multiples of 16 bytes, zero-filled past the edges, so odd
// M, N and K need no other care) while earlier stages compute.
// Each operand tile keeps the operand's contiguous axis contiguous in shared
// memory (k for a row-major lhs, n for a row-major rhs), 16-byte chunks
// swizzled by XOR with the 128-byte line (the TMA / wgmma 128B swizzle), or
// with the row for 16-bit rows of 256 bytes and more, so ldmatrix (.trans for
// m- or n-contiguous 16-bit tiles) reads without bank conflicts; float32 fragments are read element by element and rounded to
// tf32 (cvt.rna), or split into two tf32 parts for Precision.HIGHEST (three
// mma per step: small x big, big x small, big x big; float32 accuracy).
// An operand cp.async cannot copy (no unit-stride axis, a base or a stride
// not a multiple of 4 bytes: 16-bit operands with odd strides) is loaded
// element by element into the same layout, synchronously. Blocks walk
// the tiles in groups of 8 tile rows (L2 reuse); split-K blocks write f32
// partials to a module-scope workspace, and the last block of a tile (atomic
// ticket) adds them in split order and runs the epilogue: deterministic.
import { type DType, itemsize } from '../../core/dtype.js';
import type { DotKernel } from '../kernel-ir.js';
import { type RenderedKernel, indent, indexType, int, viewReach } from './cuda-common.js';
import { type Decision, type GemmPath, type GemmTiling } from './cuda-decisions.js';
import { type DotParams, dotBuffers, dotStore } from './cuda-dot.js';

/** How one operand tile sits in shared memory and how it gets there. */
interface OperandLayout {
  /** the operand's axis that is contiguous in shared memory: k, or the free axis (m for lhs, n for rhs) */
  contiguous: 'k' | 'free';
  /** bytes per cp.async (16, 8 or 4), or 0: loaded element by element */
  chunk: number;
  why: string;
}

/**
 * The smem layout and copy of an operand with strides (batch, free, k): the contiguous axis stays contiguous; cp.async
 * copies the widest chunk (16, 8 or 4 bytes) that the base's alignment and every other stride allow, along a unit
 * stride; 16-bit operands whose strides are odd go element by element.
 */
export function operandLayout(strides: readonly [number, number, number], alignment: number, bytes: number): OperandLayout {
  const [sb, sf, sk] = strides;
  const contiguous = sk === 1 || sf !== 1 ? 'k' : 'free';
  const along = contiguous === 'k' ? sk : sf;
  const others = contiguous === 'k' ? [sb, sf] : [sb, sk];
  if (along !== 1) return { contiguous, chunk: 0, why: 'no contiguous axis: element by element' };
  const chunk = [16, 8, 4].find((c) => c >= bytes && alignment % c === 0 && others.every((s) => (s * bytes) % c === 0)) ?? 0;
  if (!chunk) return { contiguous, chunk, why: alignment < 4 ? `base aligned to ${alignment} bytes: element by element` : `a stride of ${others.find((s) => (s * bytes) % 4 !== 0)} elements: element by element` };
  return { contiguous, chunk, why: `${chunk}-byte cp.async` };
}

/**
 * The swizzle of an operand tile whose rows are rowBytes long: 16-byte chunks XOR the 128-byte line (jx_swizzle128)
 * for rows of up to 128 bytes; a 16-bit tile with longer rows XORs the row instead (jx_swizzle_rows), since
 * ldmatrix reads 8 rows at one column, which the 128-byte line alone spreads over 4 (256-byte rows) or 2 (512)
 * chunks only: 2- and 4-way bank conflicts. float32 tiles keep the line (their reads are 4 rows of 32 bytes).
 */
export function tileSwizzle(f32: boolean, rowBytes: number): (offset: string) => string {
  return (offset) => (!f32 && rowBytes >= 256 && (rowBytes & (rowBytes - 1)) === 0 ? `jx_swizzle_rows(${offset}, ${Math.log2(rowBytes)})` : `jx_swizzle128(${offset})`);
}

/** What a warp's k step needs: its operand tiles' layouts in shared memory and the byte offset of element (free, k). */
export interface MmaStepLayout {
  dtype: DType;
  highest: boolean;
  /** m16 tiles and n8 tiles of the warp */
  MT: number;
  NT: number;
  /** the contiguous axis of the A (m x k) and B (n x k) tiles in shared memory */
  a: 'k' | 'free';
  b: 'k' | 'free';
  aAt: (f: string, kk: string) => string;
  bAt: (f: string, kk: string) => string;
}

/**
 * One k step of a warp's mma tiles (the GEMM's and the conv's, conv-mma.ts): the fragment declarations, the
 * statements reading the fragments of step `ks` from the stage at `sa` / `sb` (warp offsets wm0, wn0; lane, g, t),
 * and the products into acc[mt][nt] (in loops over mt and nt).
 */
export function mmaStep(l: MmaStepLayout): { decls: string[]; fragments: string[]; products: string[] } {
  const { MT, NT, aAt, bAt, highest } = l;
  const f32 = l.dtype === 'float32';
  const fragments: string[] = [];
  if (!f32) {
    // A: 4 8x8 matrices per m16 tile (rows 0-7 / 8-15 by k 0-7 / 8-15); lane l addresses a row of matrix l / 8
    fragments.push('#pragma unroll', `for (int mt = 0; mt < ${MT}; ++mt) {`);
    fragments.push(l.a === 'k'
      ? `  jx_ldmatrix_x4(af[mt], sa + ${aAt(`wm0 + mt * 16 + (lane & 15)`, `ks + (lane >> 4) * 8`)});`
      : `  jx_ldmatrix_x4_trans(af[mt], sa + ${aAt(`wm0 + mt * 16 + (lane >> 3 & 1) * 8`, `ks + (lane & 7) + (lane >> 4) * 8`)});`);
    fragments.push('}');
    // B: 4 8x8 matrices per pair of n8 tiles (tile by k 0-7 / 8-15)
    fragments.push('#pragma unroll', `for (int np = 0; np < ${NT / 2}; ++np) {`, '  jx_u32 r[4];');
    fragments.push(l.b === 'k'
      ? `  jx_ldmatrix_x4(r, sb + ${bAt(`wn0 + (np * 2 + (lane >> 4)) * 8 + (lane & 7)`, `ks + (lane >> 3 & 1) * 8`)});`
      : `  jx_ldmatrix_x4_trans(r, sb + ${bAt(`wn0 + (np * 2 + (lane >> 4)) * 8`, `ks + (lane & 7) + (lane >> 3 & 1) * 8`)});`);
    fragments.push('  bf[2 * np][0] = r[0]; bf[2 * np][1] = r[1]; bf[2 * np + 1][0] = r[2]; bf[2 * np + 1][1] = r[3];', '}');
  } else {
    // tf32: a_i at (g + 8 (i & 1), t + 4 (i >> 1)), b_i at (k t + 4 i, n g), read one by one and rounded
    const split = (v: string, big: string, small: string) => highest
      ? [`{ const float v = ${v}; ${big} = jx_f2tf32(v); ${small} = jx_f2tf32(v - __uint_as_float(${big})); }`]
      : [`${big} = jx_f2tf32(${v});`];
    fragments.push('#pragma unroll', `for (int mt = 0; mt < ${MT}; ++mt) {`, '  #pragma unroll', '  for (int i = 0; i < 4; ++i) {');
    fragments.push(...split(`*(const float *)(sa + ${aAt('wm0 + mt * 16 + g + 8 * (i & 1)', 'ks + t + 4 * (i >> 1)')})`, 'af[mt][i]', 'as[mt][i]').map((x) => `    ${x}`));
    fragments.push('  }', '}');
    fragments.push('#pragma unroll', `for (int nt = 0; nt < ${NT}; ++nt) {`, '  #pragma unroll', '  for (int i = 0; i < 2; ++i) {');
    fragments.push(...split(`*(const float *)(sb + ${bAt('wn0 + nt * 8 + g', 'ks + t + 4 * i')})`, 'bf[nt][i]', 'bs[nt][i]').map((x) => `    ${x}`));
    fragments.push('  }', '}');
  }
  const mma = f32 ? 'jx_mma_m16n8k8_tf32' : `jx_mma_m16n8k16_${l.dtype === 'bfloat16' ? 'bf16' : 'f16'}`;
  const products = highest
    ? [`${mma}(acc[mt][nt], as[mt], bf[nt]);`, `${mma}(acc[mt][nt], af[mt], bs[nt]);`, `${mma}(acc[mt][nt], af[mt], bf[nt]);`]
    : [`${mma}(acc[mt][nt], af[mt], bf[nt]);`];
  const decls = f32
    ? [`jx_u32 af[${MT}][4], bf[${NT}][2];`, ...(highest ? [`jx_u32 as[${MT}][4], bs[${NT}][2];`] : [])]
    : [`jx_u32 af[${MT}][4], bf[${NT}][2];`];
  return { decls, fragments, products };
}

/** The f32 accumulators of a warp's MT x NT m16n8 tiles (four per thread and tile), zeroed: the mma kernels' declaration. */
export function accumulators(MT: number, NT: number): string[] {
  return [
    `float acc[${MT}][${NT}][4];`,
    '#pragma unroll',
    `for (int mt = 0; mt < ${MT}; ++mt)`,
    '  #pragma unroll',
    `  for (int nt = 0; nt < ${NT}; ++nt)`,
    '    #pragma unroll',
    '    for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0f;',
  ];
}

/** What pipeline() renders: the stage geometry, the lines that issue one stage's copies, and the k step's lines. */
export interface PipelineParts {
  S: number; BK: number; KSTEP: number; STAGE: number; A_BYTES: number; MT: number; NT: number;
  /** lines that start copying k tile `k0` into stage `stage` (cp.async, a commit group per stage) */
  loadStage: string[];
  fragments: string[];
  products: string[];
}

/**
 * The multistage main loop of the mma kernels (this GEMM and render/conv-mma.ts's conv) over k tiles kt0 .. kt1 - 1,
 * through the drain of the last copies: stages kt0 .. kt0 + S - 2 in flight before the first compute, a commit group
 * per stage (empty past the end), so `wait<S - 2>` always means "the oldest stage has landed".
 */
export function pipeline(p: PipelineParts): string[] {
  const { S, BK, KSTEP, STAGE, A_BYTES, MT, NT } = p;
  return [
    `for (int s = 0; s < ${S - 1}; ++s) {`,
    `  if (kt0 + s < kt1) {`,
    `    const int stage = s;`,
    `    const jx_index k0 = (jx_index)(kt0 + s) * ${BK};`,
    indent(p.loadStage, 4),
    '  }',
    '  jx_cp_async_commit();',
    '}',
    'for (int kt = kt0; kt < kt1; ++kt) {',
    indent([
      `jx_cp_async_wait<${S - 2}>();`,
      '__syncthreads(); // stage kt has landed for every thread, and every warp is done with stage kt - 1',
      `if (kt + ${S - 1} < kt1) {`,
      `  const int stage = (kt - kt0 + ${S - 1}) % ${S};`,
      `  const jx_index k0 = (jx_index)(kt + ${S - 1}) * ${BK};`,
      indent(p.loadStage, 2),
      '}',
      'jx_cp_async_commit();',
      `const unsigned char *sa = jx_smem + (kt - kt0) % ${S} * ${STAGE}, *sb = sa + ${A_BYTES};`,
      '#pragma unroll',
      `for (int ks = 0; ks < ${BK}; ks += ${KSTEP}) {`,
      indent([
        ...p.fragments,
        '#pragma unroll',
        `for (int mt = 0; mt < ${MT}; ++mt) {`,
        '  #pragma unroll',
        `  for (int nt = 0; nt < ${NT}; ++nt) {`,
        ...p.products.map((l) => `    ${l}`),
        '  }',
        '}',
      ], 2),
      '}',
    ], 2),
    '}',
    'jx_cp_async_wait<0>();',
  ];
}

/** The tensor-core GEMM kernel; `name` prefixes its module-scope split-K workspace. */
export function gemm(k: DotKernel, p: DotParams, alignments: readonly number[], path: Decision<GemmPath>, tiling: Decision<GemmTiling>, name: string): RenderedKernel {
  const { B, M, N, K, views } = p;
  const { blockM: BM, blockN: BN, blockK: BK, warpsM: WM, warpsN: WN, stages: S, splitK: SPLIT } = tiling.choice;
  const buffers = dotBuffers(k);
  const nOut = buffers.filter((b) => b.output).length;
  const E = itemsize(k.inputDtype);
  const f32 = k.inputDtype === 'float32';
  const highest = k.precision === 'highest';
  const THREADS = WM * WN * 32;
  const WTM = BM / WM, WTN = BN / WN;
  const MT = WTM / 16, NT = WTN / 8;
  const KSTEP = f32 ? 8 : 16;
  if (WTM % 16 || WTN % 16 || BK % KSTEP || (BM * BK * E) % 1024 || (BN * BK * E) % 1024) {
    throw new Error(`renderCuda: gemm tiling ${JSON.stringify(tiling.choice)} does not fit ${k.inputDtype} mma tiles`);
  }
  const lhs = operandLayout(p.lhs, alignments[nOut] ?? 16, E);
  const rhs = operandLayout([p.rhs[0], p.rhs[2], p.rhs[1]], alignments[nOut + 1] ?? 16, E);
  const A_BYTES = BM * BK * E, B_BYTES = BN * BK * E, STAGE = A_BYTES + B_BYTES;
  // an empty output still launches one block, which stores nothing (no division by zero tiles in the tile order)
  const tilesM = Math.max(1, Math.ceil(M / BM)), tilesN = Math.max(1, Math.ceil(N / BN)), tiles = tilesM * tilesN;
  const kTiles = Math.ceil(K / BK);
  const perSplit = Math.ceil(kTiles / SPLIT);
  const idx = indexType([
    B * M * N * SPLIT, M + BM, N + BN, K + BK * SPLIT,
    viewReach([B, M, K], p.lhs), viewReach([B, K, N], p.rhs), ...views.map((v) => viewReach([B, M, N], v)),
  ]);
  const st = f32 ? 'float' : 'jx_u16';

  const swizzleOf = (rowBytes: number) => tileSwizzle(f32, rowBytes);

  // ---- global → shared: one stage of an operand ----
  /** Rows and columns of an operand's smem tile, and the (free, k) coordinates of tile element (r, c). */
  const tileOf = (which: 'lhs' | 'rhs', layout: OperandLayout) => {
    const free = which === 'lhs' ? BM : BN;
    const [rows, cols] = layout.contiguous === 'k' ? [free, BK] : [BK, free];
    return { rows, cols, coords: (r: string, c: string) => (layout.contiguous === 'k' ? [r, c] : [c, r]) as [string, string] };
  };
  const loadStage = (which: 'lhs' | 'rhs', layout: OperandLayout): string[] => {
    const { rows, cols, coords } = tileOf(which, layout);
    const [sb, sf, sk] = which === 'lhs' ? p.lhs : [p.rhs[0], p.rhs[2], p.rhs[1]];
    const [FREE, base, ptr] = which === 'lhs' ? [M, 'm0', 'lhs'] as const : [N, 'n0', 'rhs'] as const;
    const smem = `jx_smem + stage * ${STAGE}${which === 'rhs' ? ` + ${A_BYTES}` : ''}`;
    const offset = (f: string, kk: string) => `(jx_index)bz * ${int(sb)} + (jx_index)(${f}) * ${int(sf)} + (jx_index)(${kk}) * ${int(sk)}`;
    if (layout.chunk) {
      const chunk = layout.chunk / E;
      const chunks = (rows * cols) / chunk;
      const [fr, kc] = coords('r', 'c');
      const [rowExtent, colExtent] = layout.contiguous === 'k' ? [FREE, K] : [K, FREE];
      return [
        `for (int q = threadIdx.x; q < ${chunks}; q += ${THREADS}) {`,
        indent([
          `const int r = q / ${cols / chunk}, c = q % ${cols / chunk} * ${chunk};`,
          `const jx_index f = ${base} + ${fr}, kk = k0 + ${kc};`,
          // the row must be inside, and the chunk copies what of it lies before the edge of the contiguous axis
          `const jx_index row = ${layout.contiguous === 'k' ? 'f' : 'kk'}, col = ${layout.contiguous === 'k' ? 'kk' : 'f'};`,
          `const int bytes = row < ${int(rowExtent)} && col < ${int(colExtent)} ? (int)min((jx_index)${layout.chunk}, (${int(colExtent)} - col) * ${E}) : 0;`,
          `jx_cp_async_${layout.chunk}(${smem} + ${swizzleOf(cols * E)(`r * ${cols * E} + c * ${E}`)}, bytes ? (const void *)(${ptr} + ${offset('f', 'kk')}) : (const void *)${ptr}, bytes);`,
        ], 2),
        '}',
      ];
    }
    return [
      `for (int e = threadIdx.x; e < ${rows * cols}; e += ${THREADS}) {`,
      indent([
        `const int r = e / ${cols}, c = e % ${cols};`,
        `const jx_index f = ${base} + ${coords('r', 'c')[0]}, kk = k0 + ${coords('r', 'c')[1]};`,
        `*(${st} *)(${smem} + ${swizzleOf(cols * E)(`r * ${cols * E} + c * ${E}`)}) = f < ${int(FREE)} && kk < ${int(K)} ? ${ptr}[${offset('f', 'kk')}] : (${st})0;`,
      ], 2),
      '}',
    ];
  };

  // ---- shared → registers: fragments of one k step ----
  const aTile = tileOf('lhs', lhs), bTile = tileOf('rhs', rhs);
  const aRow = aTile.cols * E, bRow = bTile.cols * E;
  /** byte offset within a stage of operand element (free f, k kk) */
  const aAt = (f: string, kk: string) => swizzleOf(aRow)(lhs.contiguous === 'k' ? `(${f}) * ${aRow} + (${kk}) * ${E}` : `(${kk}) * ${aRow} + (${f}) * ${E}`);
  const bAt = (f: string, kk: string) => swizzleOf(bRow)(rhs.contiguous === 'k' ? `(${f}) * ${bRow} + (${kk}) * ${E}` : `(${kk}) * ${bRow} + (${f}) * ${E}`);
  const step = mmaStep({ dtype: k.inputDtype, highest, MT, NT, a: lhs.contiguous, b: rhs.contiguous, aAt, bAt });
  const { fragments, products } = step;

  // ---- the epilogue: each accumulator element to (gm, gn) ----
  const element = (lines: string[]) => [
    '#pragma unroll',
    `for (int mt = 0; mt < ${MT}; ++mt) {`,
    '  #pragma unroll',
    `  for (int nt = 0; nt < ${NT}; ++nt) {`,
    '    #pragma unroll',
    '    for (int i = 0; i < 4; ++i) {',
    `      const jx_index gm = m0 + wm0 + mt * 16 + g + 8 * (i >> 1), gn = n0 + wn0 + nt * 8 + 2 * t + (i & 1);`,
    `      if (gm < ${int(M)} && gn < ${int(N)}) {`,
    indent(lines, 8),
    '      }',
    '    }',
    '  }',
    '}',
  ];
  const out = (acc: string) => ['const jx_index o = ((jx_index)bz * ' + int(M) + ' + gm) * ' + int(N) + ' + gn;', ...dotStore(k, views, acc)];
  const epilogue = SPLIT === 1
    ? element(out('acc[mt][nt][i]'))
    : [
        ...element([`${name}_partials[(((jx_index)split * ${int(B)} + bz) * ${int(M)} + gm) * ${int(N)} + gn] = acc[mt][nt][i];`]),
        '__threadfence();',
        '__syncthreads();',
        `if (threadIdx.x == 0) jx_last = atomicAdd(&${name}_tickets[bz * ${tiles} + tile], 1u) == ${SPLIT - 1};`,
        '__syncthreads();',
        'if (jx_last) {',
        '  __threadfence();',
        indent(element([
          'float sum = 0.0f;',
          `for (int s = 0; s < ${SPLIT}; ++s) sum += ${name}_partials[(((jx_index)s * ${int(B)} + bz) * ${int(M)} + gm) * ${int(N)} + gn];`,
          ...out('sum'),
        ]), 2),
        `  if (threadIdx.x == 0) ${name}_tickets[bz * ${tiles} + tile] = 0u; // ready for the next launch`,
        '}',
        '__syncthreads();',
      ];

  const fragmentDecls = step.decls;
  const body = [
    `typedef ${idx} jx_index;`,
    'extern __shared__ __align__(1024) unsigned char jx_smem[];',
    ...(SPLIT > 1 ? ['__shared__ bool jx_last;'] : []),
    'const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;',
    `const int wm0 = warp / ${WN} * ${WTM}, wn0 = warp % ${WN} * ${WTN};`,
    // grouped tile order: 8 tile rows at a time, so neighbouring blocks share operand tiles in L2
    `const int tile = blockIdx.x, group = tile / ${8 * tilesN}, firstM = group * 8, groupM = min(${tilesM} - firstM, 8);`,
    `const jx_index m0 = (jx_index)(firstM + tile % ${8 * tilesN} % groupM) * ${BM}, n0 = (jx_index)(tile % ${8 * tilesN} / groupM) * ${BN};`,
    ...(SPLIT > 1 ? ['const int split = blockIdx.y;', `const int kt0 = split * ${perSplit}, kt1 = min(kt0 + ${perSplit}, ${kTiles});`] : [`const int kt0 = 0, kt1 = ${kTiles};`]),
    `for (jx_index bz = blockIdx.z; bz < ${int(B)}; bz += gridDim.z) {`,
    indent([
      ...accumulators(MT, NT),
      ...fragmentDecls,
      ...pipeline({ S, BK, KSTEP, STAGE, A_BYTES, MT, NT, loadStage: [...loadStage('lhs', lhs), ...loadStage('rhs', rhs)], fragments, products }),
      '__syncthreads(); // the next batch element reuses the stages',
      ...epilogue,
    ], 2),
    '}',
  ];
  const smemBytes = S * STAGE;
  const globals = [
    '#include "jaxon_mma.h"',
    ...(SPLIT > 1 ? [
      `__device__ float ${name}_partials[${SPLIT * B * M * N}];`,
      `__device__ unsigned ${name}_tickets[${B * tiles}];`,
    ] : []),
  ].join('\n');
  const what = (l: OperandLayout, axis: string) => `${l.contiguous === 'k' ? 'k' : axis}-contiguous, ${l.why}`;
  return {
    buffers,
    body: indent(body, 2),
    globals,
    grid: [Math.max(1, tiles), SPLIT, Math.max(1, Math.min(B, 65535))],
    block: [THREADS, 1, 1],
    sharedMemBytes: smemBytes,
    strategy: `dot, tensor-core GEMM (mma.sync ${f32 ? (highest ? '3xTF32' : 'tf32') : k.inputDtype}), ${BM}x${BN}x${BK} tiles, ${WM}x${WN} warps, ${S} stages${SPLIT > 1 ? `, split-K ${SPLIT}` : ''}, f32 accumulation; lhs ${what(lhs, 'm')}, rhs ${what(rhs, 'n')}${k.epilogue ? ', fused epilogue' : ''} (${idx} indices)`,
    decisions: [path, tiling],
  };
}
