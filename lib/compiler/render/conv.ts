// The conv kernel (kernel-ir.ts ConvKernel) for both targets. What they share
// is written once here: the params' names in kernel-ir.ts order, the element
// types (float accumulation for float32 and 16-bit operands, double for
// float64, wrapping 32 bits for integers, fused multiply-adds) and the index
// arithmetic from an output position and a kernel tap to the lhs element
// (XLA's padded, lhs-dilated input: a position in padding or in a dilation
// hole reads zero, which still multiplies the weight, as XLA's explicit
// padding does). The targets differ in how they tile the sum:
//  - C: a direct convolution. A tile is PW output pixels along the last
//    spatial axis by VEC output features; for each tap and input feature it
//    loads VEC weights once and adds PW broadcast inputs times them, so the
//    output-feature axis is innermost and, when the weights' and output's
//    feature strides are 1 (HWIO, NHWC), contiguous and vectorized, with the
//    tile's sums in registers (a specialized copy of the tile for unit
//    strides). OpenMP runs over (group, batch, output rows).
//  - CUDA: an implicit GEMM, M = batch x output pixels, N = output features of
//    the group, K = taps x input features, a grid (M tiles, N tiles, groups).
//    Each K step gathers the A tile from the input by the index arithmetic
//    (no im2col buffer) and the B tile from the kernel into shared memory;
//    256 threads compute 4x4 outputs each. Sizes are compile-time constants.
//    A grid of fewer tiles than SMs (the kernel gradient: few outputs, a
//    long K) splits K over blocks, summed in split order by the last block
//    of each tile: deterministic. float32 and 16-bit convs whose GEMM is not
//    too thin take tensor cores instead (conv-mma.ts; cuda-decisions.ts
//    convPath).
// The C target runs windows of 64 taps or more (the kernel gradient, whose
// window is the image) as a GEMM per output pixel (gemmPerPixel below).
import { isFloating } from '../../core/dtype.js';
import type { ConvKernel } from '../kernel-ir.js';
import { type RenderedKernel, SM_COUNT, indent, indexType, int, viewReach } from './cuda-common.js';
import { type ConvFacts, type ConvPath, convMmaTiling, convPath, forcedConvPath } from './cuda-decisions.js';
import { ParamReader } from './cuda-params.js';
import { convMma } from './conv-mma.js';
import { C_TYPES, CUDA_TYPES, type DialectTypes } from './expr.js';

/** The params' names, in kernel-ir.ts order, for a spatial rank. */
export function convParamNames(rank: number): string[] {
  const perDim = (prefix: string) => Array.from({ length: rank }, (_, d) => `${prefix}${d}`);
  const spatial = Array.from({ length: rank }, (_, d) => [`out${d}`, `in${d}`, `k${d}`, `s${d}`, `lo${d}`, `ld${d}`, `rd${d}`]).flat();
  return ['nOut', 'groups', 'I', 'Og', ...spatial, 'lsN', 'lsC', ...perDim('ls'), 'lsG', 'rsO', 'rsI', ...perDim('rs'), 'osN', 'osO', ...perDim('os')];
}

/** The accumulator type and the multiply-add of one target. */
function arithmetic(k: ConvKernel, types: DialectTypes, cuda: boolean): { acc: string; load: (dtype: ConvKernel['inputDtype'], ref: string) => string; fma: (x: string, w: string, a: string) => string; store: (v: string) => string } {
  const floating = isFloating(k.inputDtype) || isFloating(k.outputDtype);
  const double = k.inputDtype === 'float64' || k.outputDtype === 'float64';
  const acc = !floating ? (cuda ? 'jx_u32' : 'uint32_t') : double ? 'double' : 'float';
  const load = (dtype: ConvKernel['inputDtype'], ref: string) => `(${acc})${types.loadValue(dtype, ref)}`;
  const fma = (x: string, w: string, a: string) => (!floating ? `${a} + ${x} * ${w}` : double ? `fma(${x}, ${w}, ${a})` : cuda ? `__fmaf_rn(${x}, ${w}, ${a})` : `fmaf(${x}, ${w}, ${a})`);
  // integers wrap into the output's width through int32 (two's complement)
  const store = (v: string) => types.storeValue(k.outputDtype, floating ? `(${types.computeType(k.outputDtype)})(${v})` : `(${types.computeType(k.outputDtype)})(${cuda ? 'jx_i32' : 'int32_t'})(${v})`);
  return { acc, load, fma, store };
}

/**
 * Lines setting `${name}_ok` (inside the padded, dilated input) and `${name}_off` (the lhs offset along dim d) for
 * output coordinate `y` and tap coordinate `t` of spatial dim d.
 */
function lhsPosition(d: number, y: string, t: string, name: string): string[] {
  return lhsPositionAt(d, `${y} * s${d} + ${t} * rd${d} - lo${d}`, name);
}

/** lhsPosition from the position `p` in the padded, dilated input (conv-mma.ts hoists y * s - lo out of its k loop). */
export function lhsPositionAt(d: number, p: string, name: string): string[] {
  return [
    `const jx_index ${name}_p = ${p};`,
    // without lhs dilation (the common case, and a branch the C target predicts) no division
    `const jx_index ${name}_q = ld${d} == 1 ? ${name}_p : ${name}_p / ld${d};`,
    `const int ${name}_ok = ${name}_p >= 0 && (ld${d} == 1 || ${name}_p % ld${d} == 0) && ${name}_q < in${d};`,
    `const jx_index ${name}_off = ${name}_ok ? ${name}_q * ls${d} : 0;`,
  ];
}

/** Lines setting `${prefix}${d}` to the row-major coordinates of `linear` over sizes size(d) for d < rank (the outermost takes the quotient). */
function unravelNamed(linear: string, rank: number, size: (d: number) => string, prefix: string): string[] {
  const lines = [`jx_index ${prefix}_rest = ${linear};`];
  for (let d = rank - 1; d >= 0; d--) {
    lines.push(d === 0 ? `const jx_index ${prefix}0 = ${prefix}_rest;` : `const jx_index ${prefix}${d} = ${prefix}_rest % ${size(d)}; ${prefix}_rest /= ${size(d)};`);
  }
  return lines;
}

/** Advances the C tiles' tap coordinates t0.. (the last fastest) by one tap: counters, not divisions per tap. */
function nextTap(rank: number): string {
  const carry = (d: number): string => (d === 0 ? '++t0;' : `if (++t${d} == k${d}) { t${d} = 0; ${carry(d - 1)} }`);
  return carry(rank - 1);
}

const product = (names: string[]) => (names.length ? names.join(' * ') : '1');
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// ---- C ----

/** Output pixels and output features of one C tile (the AVX2 registers hold PW x VEC float sums). */
const PW = 4;
const vecWidth = (k: ConvKernel) => (k.inputDtype === 'float64' || k.outputDtype === 'float64' ? 8 : 16);

export function convC(k: ConvKernel, name: string): string {
  const r = k.spatialRank;
  const { acc, load, fma, store } = arithmetic(k, C_TYPES, false);
  const ti = C_TYPES.storageType(k.inputDtype);
  const to = C_TYPES.storageType(k.outputDtype);
  const VEC = vecWidth(k);
  const last = r - 1;
  const outer = range(last);
  const names = convParamNames(r);
  /** One tile's statements; np and no (pixels, features) and the strides rsO and lsC may be literals. */
  const tile = (np: string, no: string, rsO: string, lsC: string): string[] => [
    `${acc} sum[${PW}][${VEC}];`,
    `for (int p = 0; p < ${PW}; p++) for (int v = 0; v < ${VEC}; v++) sum[p][v] = 0;`,
    `jx_index ${range(r).map((d) => `t${d} = 0`).join(', ')};`,
    `for (jx_index t = 0; t < taps; t++) {`,
    indent([
      'jx_index loff = lhsBase;',
      'int ok = 1;',
      ...outer.flatMap((d) => [...lhsPosition(d, `y${d}`, `t${d}`, `q${d}`), `ok &= q${d}_ok; loff += q${d}_off;`]),
      `const jx_index woff = rhsBase + ${[...range(r).map((d) => `t${d} * rs${d}`)].join(' + ')};`,
      `jx_index xo[${PW}];`,
      `for (int p = 0; p < ${np}; p++) {`,
      indent([...lhsPosition(last, `(w0 + p)`, `t${last}`, 'qw'), 'xo[p] = ok && qw_ok ? loff + qw_off : -1;'], 2),
      '}',
      'for (jx_index c = 0; c < I; c++) {',
      indent([
        `const ${ti} *wr = rhs + woff + c * rsI;`,
        `${acc} wv[${VEC}];`,
        `for (int v = 0; v < ${no}; v++) wv[v] = ${load(k.inputDtype, `wr[v * ${rsO}]`)};`,
        `for (int p = 0; p < ${np}; p++) {`,
        `  const ${acc} x = xo[p] >= 0 ? ${load(k.inputDtype, `lhs[xo[p] + c * ${lsC}]`)} : (${acc})0;`,
        `  for (int v = 0; v < ${no}; v++) sum[p][v] = ${fma('x', 'wv[v]', 'sum[p][v]')};`,
        '}',
      ], 2),
      '}',
      nextTap(r),
    ], 2),
    '}',
    `for (int p = 0; p < ${np}; p++) for (int v = 0; v < ${no}; v++) out[outBase + (w0 + p) * os${last} + (o0 + v) * osO] = ${store('sum[p][v]')};`,
  ];
  /**
   * The tile of VEC features with unit feature strides (NHWC / HWIO): PW separate sum arrays of VEC, the pixel loop
   * unrolled, and a pixel in padding (or past the row's end) reading a row of zeros instead of branching, so the compiler keeps the sums in
   * vector registers and each weight vector feeds PW multiply-adds.
   */
  const fastTile = (): string[] => [
    ...range(PW).map((p) => `${acc} sum${p}[${VEC}] = {0};`),
    `jx_index ${range(r).map((d) => `t${d} = 0`).join(', ')};`,
    `for (jx_index t = 0; t < taps; t++) {`,
    indent([
      'jx_index loff = lhsBase;',
      'int ok = 1;',
      ...outer.flatMap((d) => [...lhsPosition(d, `y${d}`, `t${d}`, `q${d}`), `ok &= q${d}_ok; loff += q${d}_off;`]),
      `const ${ti} *wt = rhs + rhsBase + ${range(r).map((d) => `t${d} * rs${d}`).join(' + ')};`,
      ...range(PW).flatMap((p) => [
        ...lhsPosition(last, `(w0 + ${p})`, `t${last}`, `x${p}`),
        `const ${ti} *restrict xp${p} = ok && x${p}_ok && ${p} < np ? lhs + loff + x${p}_off : jx_zeros;`,
      ]),
      'for (jx_index c = 0; c < I; c++) {',
      indent([
        `const ${ti} *restrict wr = wt + c * rsI;`,
        ...range(PW).map((p) => `const ${acc} x${p} = ${load(k.inputDtype, `xp${p}[c]`)};`),
        `for (int v = 0; v < ${VEC}; v++) {`,
        `  const ${acc} w = ${load(k.inputDtype, 'wr[v]')};`,
        ...range(PW).map((p) => `  sum${p}[v] = ${fma(`x${p}`, 'w', `sum${p}[v]`)};`),
        '}',
      ], 2),
      '}',
      nextTap(r),
    ], 2),
    '}',
    ...range(PW).map((p) => `if (${p} < np) for (int v = 0; v < ${VEC}; v++) out[outBase + (w0 + ${p}) * os${last} + (o0 + v) * osO] = ${store(`sum${p}[v]`)};`),
  ];
  const rowBody = [
    ...unravelNamed('row', outer.length + 2, (d) => `jx_rows[${d}]`, 'rc'),
    'const jx_index g = rc0, n = rc1;',
    ...outer.map((d) => `const jx_index y${d} = rc${d + 2};`),
    'const jx_index lhsBase = g * lsG + n * lsN;',
    `const jx_index outBase = n * osN + g * Og * osO${outer.map((d) => ` + y${d} * os${d}`).join('')};`,
    `for (jx_index w0 = 0; w0 < out${last}; w0 += ${PW}) {`,
    `  const jx_index np = out${last} - w0 < ${PW} ? out${last} - w0 : ${PW};`,
    `  for (jx_index o0 = 0; o0 < Og; o0 += ${VEC}) {`,
    `    const jx_index no = Og - o0 < ${VEC} ? Og - o0 : ${VEC};`,
    '    const jx_index rhsBase = (g * Og + o0) * rsO;',
    `    if (no == ${VEC} && rsO == 1 && (lsC == 1 || I == 1)) {`,
    indent(fastTile(), 6),
    '    } else {',
    indent(tile('np', 'no', 'rsO', 'lsC'), 6),
    '    }',
    '  }',
    '}',
  ];
  // the row space: groups, batch, then every output spatial dim but the last
  const rowSizes = ['groups', 'nOut', ...outer.map((d) => `out${d}`)];
  return `typedef int64_t jx_index;

void ${name}(void **buffers, const int64_t *params) {
${indent(names.map((p, i) => `const jx_index ${p} = params[${i}];`), 2)}
  ${to} *restrict out = (${to} *)buffers[0];
  const ${ti} *restrict lhs = (const ${ti} *)buffers[1];
  const ${ti} *restrict rhs = (const ${ti} *)buffers[2];
  const jx_index taps = ${product(range(r).map((d) => `k${d}`))};
  const jx_index jx_rows[${rowSizes.length}] = {${rowSizes.join(', ')}};
  const jx_index rows = ${product(rowSizes)};
  (void)jx_rows; (void)${names.join('; (void)')};
  const jx_index work = rows * out${last} * Og * I * taps;
${k.inputDtype === 'float32' && k.outputDtype === 'float32' ? `${indent(gemmPerPixel(r), 2)}\n` : ''}  // what a pixel in padding reads in the unit-stride tile: a row of I zeros
  ${ti} *jx_zeros = (${ti} *)calloc((size_t)(I > 0 ? I : 1), sizeof(${ti}));
  // one copy of the loop (a false if clause costs about a µs, nothing beside a convolution)
  #pragma omp parallel for schedule(static) if (work > JX_PARALLEL_THRESHOLD)
  for (jx_index row = 0; row < rows; row++) {
${indent(rowBody, 4)}
  }
  free(jx_zeros);
}`;
}

/** Windows of at least this many taps take gemmPerPixel on the CPU (lower.ts copies their kernel operand canonical). */
export const CONV_GEMM_MIN_TAPS = 64;

/**
 * A float32 convolution with a large window (CONV_GEMM_MIN_TAPS taps or more: the kernel gradient of a convolution,
 * whose window is the image) as a GEMM per output pixel and group, C[n, o] += A[n, k] B[k, o] (jaxon_gemm.h), where k
 * runs over the in-bounds taps of the last spatial dim and the input features (one GEMM per in-bounds tap of the other
 * dims): the direct tiles stream the whole kernel operand through every 4-pixel tile, which such a shape makes a
 * few hundred passes over it. Taken at run time when the layout gives k one stride on both sides (features
 * innermost in lhs, contiguous taps along the last dim, kernel taps along the last dim I features apart, unit
 * output-feature stride in out, no lhs dilation); else the direct tiles run. Each output element sums its
 * in-bounds taps in order, blocks of KC from zero: results do not depend on the thread count.
 */
function gemmPerPixel(r: number): string[] {
  const last = r - 1;
  const outer = range(last);
  const pixels = product(range(r).map((d) => `out${d}`));
  // the taps t of dim d that read inside the input at output coordinate y (no lhs dilation): 0 <= y s + t rd - lo < in
  const bounds = (d: number): string[] => [
    `const jx_index b${d} = y${d} * s${d} - lo${d};`,
    `const jx_index tlo${d} = b${d} >= 0 ? 0 : (-b${d} + rd${d} - 1) / rd${d};`,
    `const jx_index thi${d} = in${d} - 1 - b${d} < 0 ? 0 : ((in${d} - 1 - b${d}) / rd${d} + 1 < k${d} ? (in${d} - 1 - b${d}) / rd${d} + 1 : k${d});`,
  ];
  const gemm = [
    `const jx_index kl = thi${last} > tlo${last} ? (thi${last} - tlo${last}) * I : 0;`,
    'if (kl > 0) {',
    indent([
      `const float *A = lhs + g * lsG${outer.map((d) => ` + (b${d} + t${d} * rd${d}) * ls${d}`).join('')} + (b${last} + tlo${last} * rd${last}) * ls${last};`,
      `const float *B = rhs + g * Og * rsO${outer.map((d) => ` + t${d} * rs${d}`).join('')} + tlo${last} * rs${last};`,
      'jx_sgemm_update_f32(kl, A, lsN, 1, B, rsI, rsO, C, osN, m_lo, m_hi, n_lo, n_hi, &w, 0);',
    ], 2),
    '}',
  ];
  const loops = outer.reduceRight<string[]>((body, d) => [`for (jx_index t${d} = tlo${d}; t${d} < thi${d}; t${d}++) {`, ...indent(body, 2).split('\n'), '}'], gemm);
  const ldOne = range(r).map((d) => `ld${d} == 1`).join(' && ');
  return [
    `if (taps >= ${CONV_GEMM_MIN_TAPS} && lsC == 1 && rd${last} * ls${last} == I && rs${last} == I * rsI && osO == 1 && ${ldOne}) {`,
    indent([
      `const jx_index items = groups * ${pixels};`,
      '#pragma omp parallel if (work > JX_PARALLEL_THRESHOLD)',
      '{',
      indent([
        'jx_sgemm_buffers w;',
        `jx_sgemm_buffers_alloc(&w, nOut, Og, (k${last} < 256 ? k${last} : 256) * I);`,
        'const jx_sgemm_split split = jx_sgemm_plan(items, nOut, Og, omp_get_num_threads());',
        '#pragma omp for schedule(dynamic)',
        'for (jx_index it = 0; it < split.items; it++) {',
        indent([
          'int64_t item, m_lo, m_hi, n_lo, n_hi;',
          'jx_sgemm_item(split, it, nOut, Og, &item, &m_lo, &m_hi, &n_lo, &n_hi);',
          ...unravelNamed('item', r + 1, (d) => (d === 0 ? 'groups' : `out${d - 1}`), 'p'),
          'const jx_index g = p0;',
          ...range(r).map((d) => `const jx_index y${d} = p${d + 1};`),
          `float *C = out + g * Og${range(r).map((d) => ` + y${d} * os${d}`).join('')};`,
          'for (jx_index m = m_lo; m < m_hi; m++) for (jx_index o = n_lo; o < n_hi; o++) C[m * osN + o] = 0;',
          ...range(r).flatMap(bounds),
          ...loops,
        ], 2),
        '}',
        'jx_sgemm_buffers_free(&w);',
      ], 2),
      '}',
      'return;',
    ], 2),
    '}',
  ];
}

// ---- CUDA ----

const THREADS = 256;
const BK = 16;
/** Elements of a split-K conv's workspace at most (as the GEMM's, render/cuda-decisions.ts). */
const SPLIT_K_WORKSPACE = 1 << 22;

/** What the renderer knows of the GPU a conv runs on: its compute capability (default 90) and a forced path (default: JAXON_CONV). */
export interface ConvTarget {
  sm?: number;
  path?: ConvPath | null;
}

/** The conv kernel for these params: the tensor-core implicit GEMM (conv-mma.ts) or the SIMT one, as `conv path` decides. */
export function convCuda(k: ConvKernel, params: readonly number[], name: string, alignments: readonly number[] = [16, 16, 16], target: ConvTarget = {}): RenderedKernel {
  const r = k.spatialRank;
  const names = convParamNames(r);
  const reader = new ParamReader(params, 'conv');
  const value = new Map(names.map((n) => [n, reader.next(n)] as const));
  reader.done();
  const v = (n: string) => value.get(n)!;
  const { acc, load, fma, store } = arithmetic(k, CUDA_TYPES, true);
  const outSp = range(r).map((d) => v(`out${d}`));
  const kSp = range(r).map((d) => v(`k${d}`));
  const taps = kSp.reduce((a, b) => a * b, 1);
  const M = v('nOut') * outSp.reduce((a, b) => a * b, 1);
  const K = taps * v('I');
  const Og = v('Og');
  if (v('groups') > 65535) throw new Error(`render/cuda: a conv kernel runs one grid z-slice per group, at most 65535, got ${v('groups')} groups`);
  const facts: ConvFacts = {
    M, N: Og, K, groups: v('groups'), inputDtype: k.inputDtype, outputDtype: k.outputDtype, highest: k.precision === 'highest' && k.inputDtype === 'float32',
    sm: target.sm ?? 90, forced: target.path === undefined ? forcedConvPath() : target.path,
  };
  const path = convPath(facts);
  const constants = [...names.map((n) => `const jx_index ${n} = ${int(v(n))};`), ...names.map((n) => `(void)${n};`)];
  if (path.choice === 'mma') {
    return convMma({ k, value: v, constants, lhsPosition, lhsPositionAt, unravel: unravelNamed, store, alignments }, path, convMmaTiling(facts), name);
  }
  // output-feature tile: the features of a group rounded up to a power of two, 16 to 64; the M tile fills 256 threads x 16
  const BN = Math.min(64, Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(Og, 1)))));
  const BM = (THREADS * 16) / BN;
  const TX = BN / 4;
  const TY = BM / 4;
  const lhsReach = viewReach([v('groups'), v('nOut'), v('I'), ...range(r).map((d) => v(`in${d}`))], [v('lsG'), v('lsN'), v('lsC'), ...range(r).map((d) => v(`ls${d}`))]);
  const rhsReach = viewReach([v('groups') * Og, v('I'), ...kSp], [v('rsO'), v('rsI'), ...range(r).map((d) => v(`rs${d}`))]);
  const outReach = viewReach([v('nOut'), v('groups') * Og, ...outSp], [v('osN'), v('osO'), ...range(r).map((d) => v(`os${d}`))]);
  // split-K: a grid of too few tiles for the SMs (the kernel gradient: M = input features x kernel pixels, K = batch x
  // image pixels) splits K over blocks; each writes its partial sums to a module-scope workspace and the last block of
  // a tile (atomic ticket) adds them in split order: deterministic
  const tilesM = Math.max(1, Math.ceil(M / BM)), tilesN = Math.max(1, Math.ceil(Og / BN)), groups = Math.max(1, v('groups'));
  const tiles = tilesM * tilesN * groups;
  const kSteps = Math.ceil(K / BK);
  let SPLIT = tiles >= SM_COUNT ? 1 : Math.max(1, Math.min(Math.ceil((2 * SM_COUNT) / tiles), Math.floor(kSteps / 8), 64));
  while (SPLIT > 1 && SPLIT * M * Og * groups > SPLIT_K_WORKSPACE) SPLIT--;
  const perSplit = Math.ceil(kSteps / SPLIT) * BK;
  const idx = indexType([lhsReach, rhsReach, outReach, M + BM, K + BK * SPLIT, Og + BN, SPLIT * M * Og * groups]);
  // m is (batch, output pixel) row-major: y0 the batch, y(d + 1) output coordinate d
  const unravelM = (m: string, prefix: string) => unravelNamed(m, r + 1, (d) => `out${d - 1}`, prefix);
  /** Stores this thread's 4x4 outputs (`value` of i, j) that fall inside the output. */
  const storeTile = (value: string): string[] => [
    'for (int i = 0; i < 4; i++) {',
    indent([
      `const jx_index m = m0 + ty + i * ${TY};`,
      'if (m >= M) continue;',
      ...unravelM('m', 'y'),
      'for (int j = 0; j < 4; j++) {',
      indent([
        `const jx_index o = n0 + tx + j * ${TX};`,
        `if (o < Og) out[y0 * osN + (g * Og + o) * osO${range(r).map((d) => ` + y${d + 1} * os${d}`).join('')}] = ${store(value)};`,
      ], 2),
      '}',
    ], 2),
    '}',
  ];
  const lines = [
    `typedef ${idx} jx_index;`,
    ...constants,
    `const jx_index M = ${int(M)}, K = ${int(K)};`,
    `__shared__ ${acc} jx_a[${BK}][${BM + 1}];`,
    `__shared__ ${acc} jx_b[${BK}][${BN + 1}];`,
    ...(SPLIT > 1 ? ['__shared__ bool jx_last;'] : []),
    'const int tid = threadIdx.x;',
    `const int tx = tid % ${TX}, ty = tid / ${TX};`,
    'const jx_index g = blockIdx.z;',
    `const jx_index m0 = (jx_index)blockIdx.x * ${BM};`,
    `const jx_index n0 = (jx_index)(blockIdx.y % ${tilesN}) * ${BN};`,
    `const jx_index split = blockIdx.y / ${tilesN}, kEnd = (split + 1) * ${perSplit} < K ? (split + 1) * ${perSplit} : K;`,
    '(void)split;',
    `${acc} sum[4][4];`,
    '#pragma unroll',
    'for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) sum[i][j] = 0;',
    `for (jx_index kb = split * ${perSplit}; kb < kEnd; kb += ${BK}) {`,
    indent([
      // A tile: consecutive threads take consecutive k, so consecutive input features (contiguous in NHWC)
      `for (int e = tid; e < ${BM * BK}; e += ${THREADS}) {`,
      indent([
        `const int kk = e % ${BK}, mm = e / ${BK};`,
        'const jx_index m = m0 + mm, kx = kb + kk;',
        `${acc} a = 0;`,
        'if (m < M && kx < kEnd) {',
        indent([
          'const jx_index c = kx % I;',
          ...unravelNamed('kx / I', r, (d) => `k${d}`, 't'),
          ...unravelM('m', 'y'),
          `jx_index off = g * lsG + y0 * lsN + c * lsC;`,
          'int ok = 1;',
          ...range(r).flatMap((d) => [...lhsPosition(d, `y${d + 1}`, `t${d}`, `q${d}`), `ok &= q${d}_ok; off += q${d}_off;`]),
          `if (ok) a = ${load(k.inputDtype, 'lhs[off]')};`,
        ], 2),
        '}',
        'jx_a[kk][mm] = a;',
      ], 2),
      '}',
      // B tile: consecutive threads take consecutive output features (contiguous in HWIO)
      `for (int e = tid; e < ${BN * BK}; e += ${THREADS}) {`,
      indent([
        `const int nn = e % ${BN}, kk = e / ${BN};`,
        'const jx_index o = n0 + nn, kx = kb + kk;',
        `${acc} b = 0;`,
        'if (o < Og && kx < kEnd) {',
        indent([
          'const jx_index c = kx % I;',
          ...unravelNamed('kx / I', r, (d) => `k${d}`, 't'),
          `b = ${load(k.inputDtype, `rhs[(g * Og + o) * rsO + c * rsI${range(r).map((d) => ` + t${d} * rs${d}`).join('')}]`)};`,
        ], 2),
        '}',
        'jx_b[kk][nn] = b;',
      ], 2),
      '}',
      '__syncthreads();',
      '#pragma unroll',
      `for (int kk = 0; kk < ${BK}; kk++) {`,
      indent([
        `${acc} av[4], bv[4];`,
        '#pragma unroll',
        `for (int i = 0; i < 4; i++) av[i] = jx_a[kk][ty + i * ${TY}];`,
        '#pragma unroll',
        `for (int j = 0; j < 4; j++) bv[j] = jx_b[kk][tx + j * ${TX}];`,
        '#pragma unroll',
        `for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) sum[i][j] = ${fma('av[i]', 'bv[j]', 'sum[i][j]')};`,
      ], 2),
      '}',
      '__syncthreads();',
    ], 2),
    '}',
    ...(SPLIT === 1 ? storeTile('sum[i][j]') : [
      // partials of the tile's elements inside the output: [split][group][m][o]
      'for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) {',
      `  const jx_index m = m0 + ty + i * ${TY}, o = n0 + tx + j * ${TX};`,
      `  if (m < M && o < Og) ${name}_partials[((split * ${groups} + g) * M + m) * Og + o] = sum[i][j];`,
      '}',
      '__threadfence();',
      '__syncthreads();',
      `if (tid == 0) jx_last = atomicAdd(&${name}_tickets[(g * ${tilesN} + blockIdx.y % ${tilesN}) * ${tilesM} + blockIdx.x], 1u) == ${SPLIT - 1};`,
      '__syncthreads();',
      'if (jx_last) {',
      indent([
        '__threadfence();',
        'for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) {',
        `  const jx_index m = m0 + ty + i * ${TY}, o = n0 + tx + j * ${TX};`,
        '  if (m >= M || o >= Og) continue;',
        `  ${acc} total = 0;`,
        `  for (int s = 0; s < ${SPLIT}; s++) total += ${name}_partials[((s * ${groups} + g) * M + m) * Og + o];`,
        '  sum[i][j] = total;',
        '}',
        ...storeTile('sum[i][j]'),
        `if (tid == 0) ${name}_tickets[(g * ${tilesN} + blockIdx.y % ${tilesN}) * ${tilesM} + blockIdx.x] = 0u; // ready for the next launch`,
      ], 2),
      '}',
    ]),
  ];
  const grid: [number, number, number] = [tilesM, tilesN * SPLIT, groups];
  return {
    ...(SPLIT > 1 ? { globals: `__device__ ${acc} ${name}_partials[${SPLIT * M * Og * groups}];\n__device__ unsigned ${name}_tickets[${tiles}];` } : {}),
    buffers: [
      { name: 'out', dtype: k.outputDtype, output: true },
      { name: 'lhs', dtype: k.inputDtype, output: false },
      { name: 'rhs', dtype: k.inputDtype, output: false },
    ],
    body: indent(lines, 2),
    grid,
    block: [THREADS, 1, 1],
    decisions: [path],
    strategy: `implicit GEMM, M ${M} (batch x output pixels) x N ${Og} (features per group) x K ${K} (taps x features) per group, ${BM}x${BN} tiles of ${BK}-deep k steps${SPLIT > 1 ? `, split-K ${SPLIT}` : ''}, ${THREADS} threads with 4x4 outputs, ${v('groups')} group(s) (${idx} indices)`,
  };
}
