// The Hopper GEMM (issue 17, item 3): out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n]
// for bfloat16 and float16 operands with wgmma.mma_async (sm_90a) through the
// device functions of cuda/kernels/jaxon_mma.h, f32 accumulation, the
// epilogue fused into the store (cuda-dot.ts dotStore). Warp-specialized and
// persistent, in the shape of CUTLASS's sm90 kernels: a block of three
// warpgroups walks the work tiles (batch x 128 x blockN) with a stride of the
// grid (one block per SM); warpgroup 0 produces, filling `stages` buffers of
// dynamic shared memory with each tile's k steps (64 elements: one 128-byte
// row per operand row, the 128B-swizzled K-major layout wgmma reads through
// its matrix descriptors) and signalling a `full` mbarrier per stage;
// warpgroups 1 and 2 consume, each issuing four m64n{blockN}k16 wgmmas per
// stage on its 64 rows, waiting for them, and releasing the stage on its
// `empty` mbarrier. How each operand's tiles are loaded is the `wgmma
// producer` decision (cuda-decisions.ts): by TMA where the operand is a
// k-contiguous tensor with 16-byte strides and the driver can encode tensor
// maps (one producer thread announces the stage's bytes with
// mbarrier.arrive.expect_tx and issues cp.async.bulk.tensor, whose 128B
// swizzle is the descriptors' and whose zero fill covers the ragged edges, so
// no bounds checks), else by cp.async rows (their completion arriving on the
// `full` barrier, cp.async.mbarrier.arrive.noinc), else element by element.
// An m- or n-contiguous operand (a transposed one) goes by TMA (or, without
// it, cp.async) into MN-major tiles that wgmma reads with its transpose
// immediate, so nothing transposes it; other layouts are transposed element
// by element into K-major tiles.
// Not done: tf32 wgmma for float32 (float32 takes mma.sync).
import { itemsize } from '../../core/dtype.js';
import type { DotKernel } from '../kernel-ir.js';
import { type RenderedKernel, SM_COUNT, type TensorMapParam, indent, indexType, int, viewReach } from './cuda-common.js';
import { type Decision, type GemmPath, type OperandFacts, type OperandLoad, type WgmmaTiling, tensorMapStrides, tmaAllowed, wgmmaProducer } from './cuda-decisions.js';
import { type DotParams, dotBuffers, dotStore } from './cuda-dot.js';

/** cuda.h's CUtensorMapDataType and CUtensorMapSwizzle values the tensor maps use. */
const TENSOR_MAP_BFLOAT16 = 9, TENSOR_MAP_FLOAT16 = 6, TENSOR_MAP_SWIZZLE_128B = 3;

export function wgmma(k: DotKernel, p: DotParams, alignments: readonly number[], path: Decision<GemmPath>, tiling: Decision<WgmmaTiling>, tmaDriver = true): RenderedKernel {
  const { B, M, N, K, views } = p;
  if (k.inputDtype !== 'bfloat16' && k.inputDtype !== 'float16') throw new Error(`renderCuda: the wgmma GEMM takes bfloat16 or float16 operands, not ${k.inputDtype}`);
  const { blockN: BN, stages: S } = tiling.choice;
  const BM = 128, BK = 64, E = itemsize(k.inputDtype);
  const buffers = dotBuffers(k);
  const nOut = buffers.filter((b) => b.output).length;
  const A_BYTES = BM * BK * E, B_BYTES = BN * BK * E, STAGE = A_BYTES + B_BYTES;
  const tilesM = Math.max(1, Math.ceil(M / BM)), tilesN = Math.max(1, Math.ceil(N / BN));
  const items = B * tilesM * tilesN;
  const kTiles = Math.ceil(K / BK);
  const rhsStrides: [number, number, number] = [p.rhs[0], p.rhs[2], p.rhs[1]];
  const lhsFacts: OperandFacts = { strides: p.lhs, sizes: [B, M, K], alignment: alignments[nOut] ?? 16, itemsize: E };
  const rhsFacts: OperandFacts = { strides: rhsStrides, sizes: [B, N, K], alignment: alignments[nOut + 1] ?? 16, itemsize: E };
  const producer = wgmmaProducer(lhsFacts, rhsFacts, { driver: tmaDriver, allowed: tmaAllowed() });
  const { lhs: lhsLoad, rhs: rhsLoad } = producer.choice;
  const viaTma = (l: OperandLoad) => l === 'tma' || l === 'tma-mn';
  const generic = [lhsLoad, rhsLoad].filter((l) => !viaTma(l));
  const isAsync = (l: OperandLoad) => l === 'cp.async' || l === 'cp.async-mn';
  const allTma = generic.length === 0, asyncOnly = generic.length > 0 && generic.every(isAsync);
  const tmaBytes = (viaTma(lhsLoad) ? A_BYTES : 0) + (viaTma(rhsLoad) ? B_BYTES : 0);
  // each TMA operand as a 3-d tensor (k, free, batch), k innermost, in boxes of 64 k x the tile's rows; an MN-major one
  // as (free, k, batch) in boxes of 64 free x 64 k (the 128-byte swizzle spans 64 16-bit elements), one per 64 rows
  const tensorMaps: TensorMapParam[] = [];
  const tensorMap = (which: 'lhs' | 'rhs', facts: OperandFacts, rows: number, how: OperandLoad) => {
    const [sb, sf, sk] = facts.strides, [b, f, kk] = facts.sizes;
    const mn = how === 'tma-mn';
    tensorMaps.push({
      name: `tmap_${which}`, arg: nOut + (which === 'lhs' ? 0 : 1), dataType: k.inputDtype === 'bfloat16' ? TENSOR_MAP_BFLOAT16 : TENSOR_MAP_FLOAT16,
      dims: mn ? [f, kk, b] : [kk, f, b],
      strides: mn ? tensorMapStrides({ ...facts, strides: [sb, sk, sf], sizes: [b, kk, f] }) : tensorMapStrides(facts),
      box: mn ? [64, BK, 1] : [BK, rows, 1], swizzle: TENSOR_MAP_SWIZZLE_128B,
    });
  };
  if (viaTma(lhsLoad)) tensorMap('lhs', lhsFacts, BM, lhsLoad);
  if (viaTma(rhsLoad)) tensorMap('rhs', rhsFacts, BN, rhsLoad);
  const mnMajor = (l: OperandLoad) => (l === 'tma-mn' || l === 'cp.async-mn' ? 1 : 0);
  const tnspA = mnMajor(lhsLoad), tnspB = mnMajor(rhsLoad);
  const idx = indexType([B * M * N, M + BM, N + BN, K + BK, viewReach([B, M, K], p.lhs), viewReach([B, K, N], p.rhs), ...views.map((v) => viewReach([B, M, N], v))]);
  const mma = `jx_wgmma_m64n${BN}k16_${k.inputDtype === 'bfloat16' ? 'bf16' : 'f16'}`;

  /** The producer's loads of one operand's tile (rows: free axis, 64 k each) into the stage at `tile`. */
  const load = (which: 'lhs' | 'rhs', how: OperandLoad): string[] => {
    const [sb, sf, sk] = which === 'lhs' ? p.lhs : rhsStrides;
    const [rows, FREE, base, ptr, tile] = which === 'lhs' ? [BM, M, 'm0', 'lhs', 'sa'] : [BN, N, 'n0', 'rhs', 'sb'];
    const at = (f: string, kk: string) => `(jx_index)bz * ${int(sb)} + (jx_index)(${f}) * ${int(sf)} + (jx_index)(${kk}) * ${int(sk)}`;
    if (how === 'tma') return [`jx_tma_load_3d(${tile}, &tmap_${which}, &full[s], (int)k0, (int)${base}, bz);`];
    // MN-major: 64-row blocks 8192 bytes apart, each 64 k lines of 128 bytes (8-k groups 1024 apart)
    if (how === 'tma-mn') return Array.from({ length: rows / 64 }, (_, j) => `jx_tma_load_3d(${tile}${j ? ` + ${j * 8192}` : ''}, &tmap_${which}, &full[s], (int)${base}${j ? ` + ${j * 64}` : ''}, (int)k0, bz);`);
    if (how === 'cp.async-mn') {
      // 16-byte chunks of 8 along the free axis (consecutive threads along it), each k one 128-byte line of its 64-row atom
      return [
        `for (int q = x; q < ${(rows * BK) / 8}; q += 128) {`,
        indent([
          `const int c = q % ${rows / 8}, r = q / ${rows / 8};`,
          `const jx_index f = ${base} + c * 8, kk = k0 + r;`,
          `const int bytes = f < ${int(FREE)} && kk < ${int(K)} ? (int)min((jx_index)16, (${int(FREE)} - f) * ${E}) : 0;`,
          `jx_cp_async_16(${tile} + (c >> 3) * 8192 + jx_swizzle128(r * 128 + (c & 7) * 16), bytes ? (const void *)(${ptr} + ${at('f', 'kk')}) : (const void *)${ptr}, bytes);`,
        ], 2),
        '}',
      ];
    }
    if (how === 'cp.async') {
      return [
        `for (int q = x; q < ${(rows * BK) / 8}; q += 128) {`,
        indent([
          'const int r = q >> 3, c = (q & 7) * 8;',
          `const jx_index f = ${base} + r, kk = k0 + c;`,
          `const int bytes = f < ${int(FREE)} && kk < ${int(K)} ? (int)min((jx_index)16, (${int(K)} - kk) * ${E}) : 0;`,
          `jx_cp_async_16(${tile} + jx_swizzle128(r * 128 + c * ${E}), bytes ? (const void *)(${ptr} + ${at('f', 'kk')}) : (const void *)${ptr}, bytes);`,
        ], 2),
        '}',
      ];
    }
    // element by element, consecutive threads along the operand's contiguous axis (k unless the free axis is)
    const freeFirst = sf === 1 && sk !== 1;
    return [
      `for (int e = x; e < ${rows * BK}; e += 128) {`,
      indent([
        freeFirst ? `const int r = e % ${rows}, c = e / ${rows};` : 'const int r = e >> 6, c = e & 63;',
        `const jx_index f = ${base} + r, kk = k0 + c;`,
        `*(jx_u16 *)(${tile} + jx_swizzle128(r * 128 + c * ${E})) = f < ${int(FREE)} && kk < ${int(K)} ? ${ptr}[${at('f', 'kk')}] : (jx_u16)0;`,
      ], 2),
      '}',
    ];
  };

  const desc = (base: string, mn: number) => (mn ? `jx_wgmma_desc(${base} + kk * 2048, 8192, 1024, 1)` : `jx_wgmma_desc(${base} + kk * 32, 16, 1024, 1)`);
  const decode = [
    `const int bz = item / ${tilesM * tilesN}, tile = item % ${tilesM * tilesN};`,
    // grouped tile order: 8 tile rows at a time (L2 reuse between neighbouring blocks)
    `const int group = tile / ${8 * tilesN}, firstM = group * 8, groupM = min(${tilesM} - firstM, 8);`,
    `const jx_index m0 = (jx_index)(firstM + tile % ${8 * tilesN} % groupM) * ${BM}, n0 = (jx_index)(tile % ${8 * tilesN} / groupM) * ${BN};`,
  ];
  // one producer step: wait for the stage, announce the TMA bytes, load both operands, arrive on `full`
  const tmaIssue = [
    ...(viaTma(lhsLoad) ? load('lhs', lhsLoad) : []),
    ...(viaTma(rhsLoad) ? load('rhs', rhsLoad) : []),
  ];
  const fill = allTma
    ? [`jx_mbarrier_arrive_expect_tx(&full[s], ${tmaBytes}); // the phase completes when both boxes' bytes have landed`, ...tmaIssue]
    : [
      ...(tmaBytes ? [`if (x == 0) { // TMA for one operand: its bytes join the phase before this thread arrives`, indent([`jx_mbarrier_expect_tx(&full[s], ${tmaBytes});`, ...tmaIssue], 2), '}'] : []),
      ...(!viaTma(lhsLoad) ? load('lhs', lhsLoad) : []),
      ...(!viaTma(rhsLoad) ? load('rhs', rhsLoad) : []),
      ...(asyncOnly
        ? ['jx_cp_async_mbarrier_arrive(&full[s]); // once this thread\'s copies have landed: the next stage is issued meanwhile']
        : [
          ...(generic.some(isAsync) ? ['jx_cp_async_wait_all();'] : []),
          'jx_fence_proxy_async(); // this thread\'s shared-memory stores, visible to wgmma (the async proxy)',
          'jx_mbarrier_arrive(&full[s]);',
        ]),
    ];
  const producerLoop = [
    `for (int item = blockIdx.x; item < ${items}; item += gridDim.x) {`,
    indent([
      ...decode,
      `for (int kt = 0; kt < ${kTiles}; ++kt, ++it) {`,
      indent([
        `const int s = it % ${S};`,
        `jx_mbarrier_wait(&empty[s], (it / ${S} & 1) ^ 1); // the first round finds every stage free`,
        `unsigned char *sa = jx_smem + s * ${STAGE}, *sb = sa + ${A_BYTES};`,
        `const jx_index k0 = (jx_index)kt * ${BK};`,
        ...fill,
      ], 2),
      '}',
    ], 2),
    '}',
  ];
  const body = [
    `typedef ${idx} jx_index;`,
    'extern __shared__ __align__(1024) unsigned char jx_smem[];',
    `jx_u64 *full = (jx_u64 *)(jx_smem + ${S * STAGE}), *empty = full + ${S};`,
    'const int role = threadIdx.x >> 7, x = threadIdx.x & 127;',
    'if (threadIdx.x == 0) {',
    '  if (jx_smem_u32(jx_smem) & 1023) __trap(); // the 128B swizzle (TMA\'s and the descriptors\') is of address bits 4-9',
    `  for (int s = 0; s < ${S}; ++s) {`,
    `    jx_mbarrier_init(&full[s], ${allTma ? '1); // the producer thread\'s arrive.expect_tx' : '128); // the producer warpgroup\'s threads'}`,
    '    jx_mbarrier_init(&empty[s], 256); // the consumers\'',
    '  }',
    '  jx_fence_mbarrier_init(); // the initialized barriers, visible to TMA\'s complete_tx',
    '}',
    '__syncthreads();',
    'int it = 0; // k steps this thread has gone through, over all its items: stage it % S, round it / S',
    'if (role == 0) {',
    indent(allTma
      ? [
        '// the producer: one thread issues every TMA copy; the warpgroup\'s other threads have nothing to do',
        'if (x == 0) {',
        indent([...tensorMaps.map((m) => `jx_prefetch_tensor_map(&${m.name});`), ...producerLoop], 2),
        '}',
      ]
      : [
        '// the producer: fills a stage once the consumers released it',
        ...producerLoop,
        ...(asyncOnly ? ['jx_cp_async_wait_all();'] : []),
      ], 2),
    '} else {',
    indent([
      '// the consumers: warpgroup 1 takes rows 0-63 of the tile, warpgroup 2 rows 64-127',
      'const int half = role - 1, warp = x >> 5, lane = x & 31, g = lane >> 2, t = lane & 3;',
      `for (int item = blockIdx.x; item < ${items}; item += gridDim.x) {`,
      indent([
        ...decode,
        `float acc[${BN / 2}];`,
        '#pragma unroll',
        `for (int i = 0; i < ${BN / 2}; ++i) acc[i] = 0.0f;`,
        `for (int kt = 0; kt < ${kTiles}; ++kt, ++it) {`,
        indent([
          `const int s = it % ${S};`,
          `jx_mbarrier_wait(&full[s], it / ${S} & 1);`,
          ...(allTma ? [] : ['jx_fence_proxy_async(); // the stage\'s stores and copies, visible to wgmma']),
          `const jx_u32 sa = jx_smem_u32(jx_smem + s * ${STAGE}) + half * ${64 * 128}, sb = jx_smem_u32(jx_smem + s * ${STAGE} + ${A_BYTES});`,
          'jx_wgmma_fence();',
          '#pragma unroll',
          'for (int kk = 0; kk < 4; ++kk) {',
          '  // 128B-swizzled K-major: rows of 128 bytes, 8-row atoms 1024 bytes apart (SBO), k16 steps 32 bytes along;',
          '  // MN-major: 64-row atoms 8192 bytes apart (LBO), 8-k groups 1024 apart (SBO), k16 steps 2048 bytes along',
          `  ${mma}${tnspA || tnspB ? `<${tnspA}, ${tnspB}>` : ''}(acc, ${desc('sa', tnspA)}, ${desc('sb', tnspB)}, 1);`,
          '}',
          'jx_wgmma_commit();',
          'jx_wgmma_wait<0>();',
          'jx_mbarrier_arrive(&empty[s]); // the stage is free again',
        ], 2),
        '}',
        '#pragma unroll',
        `for (int i = 0; i < ${BN / 2}; ++i) {`,
        indent([
          'const jx_index gm = m0 + half * 64 + warp * 16 + g + 8 * ((i & 3) >> 1), gn = n0 + (i >> 2) * 8 + 2 * t + (i & 1);',
          `if (gm < ${int(M)} && gn < ${int(N)}) {`,
          indent([`const jx_index o = ((jx_index)bz * ${int(M)} + gm) * ${int(N)} + gn;`, ...dotStore(k, views, 'acc[i]')], 2),
          '}',
        ], 2),
        '}',
      ], 2),
      '}',
    ], 2),
    '}',
  ];
  const how = (l: OperandLoad) => (l === 'tma' ? 'by TMA' : l === 'tma-mn' ? 'by TMA into MN-major tiles' : l === 'cp.async' ? 'k-contiguous rows by cp.async'
    : l === 'cp.async-mn' ? 'by cp.async into MN-major tiles' : 'element by element into K-major tiles');
  return {
    buffers,
    ...(tensorMaps.length ? { tensorMaps } : {}),
    body: indent(body, 2),
    globals: '#include "jaxon_mma.h"',
    grid: [Math.max(1, Math.min(items, SM_COUNT)), 1, 1],
    block: [384, 1, 1],
    sharedMemBytes: S * STAGE + 2 * S * 8,
    strategy: `dot, Hopper GEMM (wgmma ${k.inputDtype}, m64n${BN}k16), ${BM}x${BN}x${BK} tiles, ${S} stages, warp-specialized (1 producer, 2 consumer warpgroups, mbarriers), persistent over ${items} tiles, f32 accumulation; lhs ${how(lhsLoad)}, rhs ${how(rhsLoad)}${k.epilogue ? ', fused epilogue' : ''} (${idx} indices)`,
    decisions: [path, tiling, producer],
  };
}
