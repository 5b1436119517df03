// The GPU's blocked linear algebra for large matrices: LAPACK's right-looking
// potrf, getrf and a blocked trsm, as a fixed sequence of launches (lowered by
// lower-linalg.ts for the 'cuda' target) so each big update spreads over the
// whole GPU instead of render/linalg.ts's one block per matrix. Per panel of
// NB columns: the small sequential part on one block per matrix (potf2 of the
// diagonal block; getf2 of the m x NB panel with a block-wide pivot search),
// the row-parallel or column-parallel part over many blocks (Cholesky's panel
// solve L21 = A21 L11^-T; LU's row swaps with U12 = L11^-1 A12; the
// triangular solve's diagonal block over the right-hand sides), and the
// trailing update as a tiled GEMM of depth NB (64 x 64 tiles in shared
// memory, 256 threads of 4 x 4 outputs; Cholesky's on tiles on and below the
// diagonal).
// Every launch of a stage has the same params, hence one compile per stage
// and not one per panel: a launch learns its panel from a ticket, a counter
// per stage in a small int32 buffer of the plan (zeroed before the first
// stage) that each block takes once (launches of a stage run in order on the
// compute stream, so launch p hands out tickets p·G .. p·G + G - 1 for G
// blocks). The counters are arguments, not module state, so a run starts from
// zero whatever an earlier one did, and the emulator's schedule check, which
// reruns a launch from a snapshot of its arguments, sees the same panel.
// Grids are sized for the first panel; a block past the current panel's work
// only takes its ticket. A failed Cholesky needs no flag between launches: a
// diagonal that is not positive gives a NaN or 0 on L's diagonal (and NaNs
// after it), which the last launch finds and turns into JAX's all-NaN matrix.
// The operations per entry are the unblocked kernels' but for the GEMM's sums
// of NB products, so pivots are LAPACK's wherever rounding does not decide a
// tie.
import type { DType } from '../../core/dtype.js';
import { CUDA_DIALECT, CUDA_TYPES } from './expr.js';
import { type RenderedKernel, indent, indexType, int } from './cuda-common.js';
import type { LinalgKernel } from '../kernel-ir.js';
import { BLOCKED_MIN_COLUMNS } from './linalg-blocked.js';

/** Columns per panel on the GPU (the GEMM updates' depth). */
export const CUDA_NB = 32;
/**
 * The smallest size on the blocked path (Cholesky's n, LU's min(m, n), a triangular solve's unknowns, with at least
 * BLOCKED_MIN_COLUMNS right-hand sides). Not measured on a GPU yet: a guess from the CPU's crossover (128) and one
 * block's share of an H100 (1/132), which a 256 x 256 matrix's updates already exceed.
 */
export const CUDA_BLOCKED_MIN = 256;
/** Batches of more matrices keep a block per matrix, which fills the GPU by itself (132 SMs on an H100). */
export const CUDA_BLOCKED_MAX_BATCH = 64;

export type BlockedStage = NonNullable<LinalgKernel['blocked']>['stage'];

/** The ticket counters' buffer: a slot per stage kind. */
export const BLOCKED_STATE_SIZE = 8;
const TICKET_SLOT: Record<BlockedStage, number> = { factor: 0, panel: 1, rows: 2, diagonal: 3, update: 4, finish: 5 };

/**
 * The blocked path's threshold and panel width: CUDA_BLOCKED_MIN and CUDA_NB, or JAXON_CUDA_BLOCKED_LINALG=MIN or
 * MIN:NB (tests run the blocked path on small matrices with it). Read at each lowering: plans cached before a change
 * (eager ops, compiled jit programs) keep their path.
 */
export function cudaBlocking(): { min: number; nb: number } {
  const value = process.env['JAXON_CUDA_BLOCKED_LINALG'];
  if (value === undefined || value === '') return { min: CUDA_BLOCKED_MIN, nb: CUDA_NB };
  const match = /^(\d+)(?::(\d+))?$/.exec(value);
  const min = Number(match?.[1]);
  const nb = match?.[2] === undefined ? CUDA_NB : Number(match[2]);
  if (!match || !(min >= 1) || !(nb >= 2 && nb <= CUDA_NB)) {
    throw new Error(`JAXON_CUDA_BLOCKED_LINALG: expected MIN or MIN:NB (integers, MIN >= 1, 2 <= NB <= ${CUDA_NB}), got ${JSON.stringify(value)}`);
  }
  return { min, nb };
}

/** The panel width a kernel's matrices take the blocked path at on the GPU, or 0 for a block per matrix. */
export function cudaBlockedWidth(op: LinalgKernel['op'], dtype: string, batch: number, size: number, columns: number): number {
  if (dtype !== 'float32' && dtype !== 'float64') return 0;
  const { min, nb } = cudaBlocking();
  if (batch > CUDA_BLOCKED_MAX_BATCH || size < min || size <= nb) return 0;
  return op === 'triangular_solve' && columns < BLOCKED_MIN_COLUMNS ? 0 : nb;
}

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);

interface Shape { batch: number; m: number; n: number }

function shapeOf(k: LinalgKernel, params: readonly number[]): Shape {
  return k.op === 'cholesky' ? { batch: params[0]!, m: params[1]!, n: params[1]! } : { batch: params[0]!, m: params[1]!, n: params[2]! };
}

/** The unknowns of a triangular solve (r) and its right-hand sides (cols). */
const system = (k: LinalgKernel, s: Shape) => (k.leftSide ? { r: s.m, cols: s.n } : { r: s.n, cols: s.m });

/** The panels of a blocked kernel: over Cholesky's n, LU's min(m, n), a triangular solve's unknowns. */
function panels(k: LinalgKernel, s: Shape, nb: number): number {
  return ceilDiv(k.op === 'lu' ? Math.min(s.m, s.n) : k.op === 'cholesky' ? s.n : system(k, s).r, nb);
}

/** The launch order of a blocked kernel's stages, after the operand's copy and the counters' zeros (lower-linalg.ts). */
export function blockedSchedule(k: LinalgKernel, params: readonly number[], nb: number): BlockedStage[] {
  const s = shapeOf(k, params);
  const count = panels(k, s, nb);
  const out: BlockedStage[] = [];
  for (let p = 0; p < count; p++) {
    const last = p === count - 1;
    if (k.op === 'cholesky') out.push('factor', ...(last ? [] : ['panel', 'update'] as const));
    else if (k.op === 'lu') out.push('panel', 'rows', ...(last ? [] : ['update'] as const));
    else out.push('diagonal', ...(last ? [] : ['update'] as const));
  }
  if (k.op !== 'triangular_solve') out.push('finish');
  return out;
}

const TILE = 64;

/** The CUDA body of one stage of a blocked kernel at the exact params. */
export function linalgBlockedCuda(k: LinalgKernel, params: readonly number[]): RenderedKernel {
  const { stage, nb } = k.blocked!;
  const s = shapeOf(k, params);
  const { batch, m, n } = s;
  const double = k.dtype === 'float64';
  const t = double ? 'double' : 'float';
  const sqrt = (x: string) => CUDA_DIALECT.sqrt(double, x);
  const abs = (x: string) => `${double ? 'fabs' : 'fabsf'}(${x})`;
  const sfmin = double ? '2.2250738585072014e-308' : '1.17549435e-38f';
  const idx = indexType([batch * Math.max(m, n) ** 2]);
  // the unblocked kernel's buffers with the ticket counters after the outputs (jx_state: not per matrix)
  const names = k.op === 'lu' ? ['lu', 'pivots', 'permutation', 'jx_state', 'in'] : k.op === 'cholesky' ? ['out', 'jx_state', 'in'] : ['out', 'jx_state', 'a', 'b'];
  const dtypes: DType[] = k.op === 'lu' ? [k.dtype, 'int32', 'int32', 'int32', k.dtype] : names.map((b) => (b === 'jx_state' ? 'int32' : k.dtype));
  const per = k.op === 'lu' ? [m * n, Math.min(m, n), m, 0, m * n] : k.op === 'cholesky' ? [n * n, 0, n * n] : [m * n, 0, k.leftSide ? m * m : n * n, m * n];
  const buffers = names.map((b, i) => ({ name: `jx_arg${i}`, dtype: dtypes[i]!, output: i <= names.indexOf('jx_state') }));
  const state = names.indexOf('jx_state');
  const declare = (i: number) => {
    const c = buffers[i]!.output ? '' : 'const ';
    const type = CUDA_TYPES.storageType(dtypes[i]!);
    return `${c}${type} *__restrict__ ${names[i]} = (${c}${type} *)jx_arg${i} + jx_b * ${int(per[i]!)};`;
  };
  const head = [
    `typedef ${idx} jx_index;`,
    `const jx_index m = ${int(m)}, n = ${int(n)};`,
    '(void)m; (void)n;',
  ];
  // the matrix's buffers that `body` uses (nvcc warns of the others)
  const perMatrix = (body: string[]) => {
    const text = body.join('\n');
    return ['const jx_index jx_b = blockIdx.y;', ...names.flatMap((b, i) => (new RegExp(`\\b${b}\\[`).test(text) ? [declare(i)] : [])), ...body];
  };
  const min = (a: string, b: string) => `(${a} < ${b} ? ${a} : ${b})`;

  // a block per panel-indexed launch: its ticket, the panel p and the block's place among the launch's blocks
  const ticketed = (grid: [number, number, number], threads: number, body: string[], strategy: string): RenderedKernel => {
    const blocks = grid[0] * grid[1];
    return {
      buffers, grid, block: [threads, 1, 1], strategy: `blocked ${k.op} (NB ${nb}), ${stage}: ${strategy}`,
      body: indent([
        ...head,
        '__shared__ jx_index jx_panel;',
        `if (threadIdx.x == 0) jx_panel = (jx_index)(atomicAdd((jx_i32 *)jx_arg${state} + ${TICKET_SLOT[stage]}, 1) / ${int(blocks)});`,
        '__syncthreads();',
        'const jx_index p = jx_panel;',
        ...perMatrix(body),
      ], 2),
    };
  };
  // The trailing update C(i, c) -= sum over k < NB of A(i, k) B(k, c), for rows [r0, r0 + rows) and columns
  // [c0, c0 + cols) (run-time expressions; at most maxRows x maxCols); `lowerOnly`: only c <= i (Cholesky).
  const update = (o: {
    r0: string; rows: string; c0: string; cols: string; maxRows: number; maxCols: number; lowerOnly?: boolean;
    A: (i: string, q: string) => string; B: (q: string, c: string) => string; C: (i: string, c: string) => string;
    /** the index along which A's (B's) entries are contiguous in memory: consecutive threads load along it */
    aContiguous: 'q' | 'i'; bContiguous: 'q' | 'c';
  }, setup: string[]): RenderedKernel => {
    // a tile's entry e: its depth q and its row (column) r within the tile, consecutive e along memory
    const along = (depthFastest: boolean) => (depthFastest ? `const jx_index r = e / ${nb}, q = e % ${nb};` : `const jx_index q = e / ${TILE}, r = e % ${TILE};`);
    const tilesAcross = ceilDiv(o.maxCols, TILE);
    const tiles = ceilDiv(o.maxRows, TILE) * tilesAcross;
    return ticketed([tiles, batch, 1], 256, [
      ...setup,
      `const jx_index jx_rows = ${o.rows}, jx_cols = ${o.cols};`,
      `const jx_index ti = blockIdx.x / ${int(tilesAcross)}, tc = blockIdx.x % ${int(tilesAcross)};`,
      `const int active = ti * ${TILE} < jx_rows && tc * ${TILE} < jx_cols${o.lowerOnly ? ' && tc <= ti' : ''};`,
      `__shared__ ${t} jx_a[${nb}][${TILE + 1}], jx_bt[${nb}][${TILE + 1}]; // padded: a store along the depth hits 32 banks`,
      'if (active) {',
      `  for (jx_index e = threadIdx.x; e < ${TILE * nb}; e += 256) {`,
      `    ${along(o.aContiguous === 'q')}`,
      `    const jx_index i = ti * ${TILE} + r;`,
      `    jx_a[q][r] = i < jx_rows ? ${o.A(`${o.r0} + i`, 'q')} : (${t})0;`,
      '  }',
      `  for (jx_index e = threadIdx.x; e < ${TILE * nb}; e += 256) {`,
      `    ${along(o.bContiguous === 'q')}`,
      `    const jx_index c = tc * ${TILE} + r;`,
      `    jx_bt[q][r] = c < jx_cols ? ${o.B('q', `${o.c0} + c`)} : (${t})0;`,
      '  }',
      '}',
      '__syncthreads();',
      'if (active) {',
      `  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;`,
      `  ${t} acc[4][4] = {};`,
      `  #pragma unroll 4`,
      `  for (int q = 0; q < ${nb}; q++) {`,
      `    ${t} jx_av[4], jx_bv[4];`,
      '    #pragma unroll',
      '    for (int u = 0; u < 4; u++) { jx_av[u] = jx_a[q][ty + 16 * u]; jx_bv[u] = jx_bt[q][tx + 16 * u]; }',
      '    #pragma unroll',
      '    for (int u = 0; u < 4; u++)',
      '      #pragma unroll',
      '      for (int v = 0; v < 4; v++) acc[u][v] += jx_av[u] * jx_bv[v];',
      '  }',
      '  #pragma unroll',
      '  for (int u = 0; u < 4; u++) {',
      `    const jx_index i = ti * ${TILE} + ty + 16 * u;`,
      '    #pragma unroll',
      '    for (int v = 0; v < 4; v++) {',
      `      const jx_index c = tc * ${TILE} + tx + 16 * v;`,
      `      if (i < jx_rows && c < jx_cols${o.lowerOnly ? ' && c <= i' : ''}) ${o.C(`${o.r0} + i`, `${o.c0} + c`)} -= acc[u][v];`,
      '    }',
      '  }',
      '}',
    ], `tiles of ${TILE} x ${TILE} over the trailing ${o.lowerOnly ? 'lower triangle' : 'matrix'} (${tiles} per matrix, those of the current panel active), depth ${nb}`);
  };

  switch (k.op) {
    case 'cholesky': {
      const L = (i: string, c: string) => `out[(${i}) * n + (${c})]`;
      switch (stage) {
        case 'factor':
          // potf2 on the diagonal block in shared memory, the unblocked kernel's operations
          return ticketed([1, batch, 1], 256, [
            `const jx_index j0 = p * ${nb}, w = ${min(String(nb), 'n - j0')};`,
            `__shared__ ${t} s[${nb}][${nb + 1}];`,
            'for (jx_index e = threadIdx.x; e < w * w; e += blockDim.x) { const jx_index r = e / w, c = e % w; if (c <= r) s[r][c] = out[(j0 + r) * n + j0 + c]; }',
            '__syncthreads();',
            'for (jx_index j = 0; j < w; j++) {',
            `  const ${t} ljj = ${sqrt('s[j][j]')};`,
            `  const ${t} rinv = (${t})1 / ljj;`,
            '  __syncthreads();',
            '  for (jx_index i = j + threadIdx.x; i < w; i += blockDim.x) s[i][j] = i == j ? ljj : s[i][j] * rinv;',
            '  __syncthreads();',
            '  const jx_index rest = w - j - 1;',
            '  for (jx_index e = threadIdx.x; e < rest * rest; e += blockDim.x) {',
            '    const jx_index i = j + 1 + e / rest, c = j + 1 + e % rest;',
            '    if (c <= i) s[i][c] -= s[i][j] * s[c][j];',
            '  }',
            '  __syncthreads();',
            '}',
            'for (jx_index e = threadIdx.x; e < w * w; e += blockDim.x) { const jx_index r = e / w, c = e % w; if (c <= r) out[(j0 + r) * n + j0 + c] = s[r][c]; }',
          ], 'potf2 on the diagonal block, one block per matrix');
        case 'panel': {
          const rowsPerBlock = 128;
          return ticketed([ceilDiv(n - nb, rowsPerBlock), batch, 1], rowsPerBlock, [
            `const jx_index j0 = p * ${nb}, j1 = j0 + ${nb};`,
            `__shared__ ${t} s[${nb}][${nb + 1}], rinv[${nb}];`,
            `for (jx_index e = threadIdx.x; e < ${nb * nb}; e += blockDim.x) { const jx_index r = e / ${nb}, c = e % ${nb}; s[r][c] = c <= r ? out[(j0 + r) * n + j0 + c] : (${t})0; }`,
            '__syncthreads();',
            `for (jx_index j = threadIdx.x; j < ${nb}; j += blockDim.x) rinv[j] = (${t})1 / s[j][j];`,
            '__syncthreads();',
            `const jx_index i = j1 + (jx_index)blockIdx.x * ${rowsPerBlock} + threadIdx.x;`,
            'if (i < n) {',
            `  ${t} x[${nb}];`,
            '  #pragma unroll',
            `  for (int j = 0; j < ${nb}; j++) x[j] = ${L('i', 'j0 + j')};`,
            '  #pragma unroll',
            `  for (int j = 0; j < ${nb}; j++) {`,
            '    x[j] *= rinv[j];',
            '    #pragma unroll',
            `    for (int c = j + 1; c < ${nb}; c++) x[c] -= x[j] * s[c][j];`,
            '  }',
            '  #pragma unroll',
            `  for (int j = 0; j < ${nb}; j++) ${L('i', 'j0 + j')} = x[j];`,
            '}',
          ], `L21 = A21 L11^-T, a thread per row, ${rowsPerBlock} rows per block`);
        }
        case 'update':
          return update({
            r0: 'j1', rows: 'n - j1', c0: 'j1', cols: 'n - j1', maxRows: n - nb, maxCols: n - nb, lowerOnly: true,
            A: (i, q) => L(i, `j0 + ${q}`), B: (q, c) => L(c, `j0 + ${q}`), C: L, aContiguous: 'q', bContiguous: 'q',
          }, [`const jx_index j0 = p * ${nb}, j1 = j0 + ${nb};`]);
        case 'finish': {
          // potrf failed where L's diagonal is not positive (a NaN or 0 from the first failing pivot on): all NaN, as
          // JAX reports it; else zeros above the diagonal (the stages read and write only the lower triangle)
          const blocks = Math.max(1, Math.min(ceilDiv(n * n, 4096), 264));
          return {
            buffers, grid: [blocks, batch, 1], block: [256, 1, 1], strategy: `blocked cholesky (NB ${nb}), finish: zeros above the diagonal, or all NaN where it failed`,
            body: indent([
              ...head, ...perMatrix([
                '__shared__ int failed;',
                'if (threadIdx.x == 0) failed = 0;',
                '__syncthreads();',
                'for (jx_index j = threadIdx.x; j < n; j += blockDim.x) if (!(out[j * n + j] > 0)) failed = 1;',
                '__syncthreads();',
                `for (jx_index e = (jx_index)blockIdx.x * blockDim.x + threadIdx.x; e < n * n; e += (jx_index)gridDim.x * blockDim.x) {`,
                `  if (failed) out[e] = (${t})JX_NANF;`,
                `  else if (e % n > e / n) out[e] = (${t})0;`,
                '}',
              ]),
            ], 2),
          };
        }
        default: break;
      }
      break;
    }
    case 'lu': {
      const kmax = Math.min(m, n);
      const A = (i: string, c: string) => `lu[(${i}) * n + (${c})]`;
      switch (stage) {
        case 'panel': {
          const threads = 256;
          return ticketed([1, batch, 1], threads, [
            `const jx_index j0 = p * ${nb}, j1 = ${min(`j0 + ${nb}`, int(kmax))};`,
            `__shared__ ${t} best_v[${threads}];`,
            `__shared__ jx_index best_i[${threads}];`,
            'for (jx_index j = j0; j < j1; j++) {',
            '  // BLAS i?amax\'s pivot, the first largest magnitude (a NaN never beats the current best; a NaN at j stays)',
            `  ${t} bv = (${t})-1;`,
            '  jx_index bi = m;',
            `  for (jx_index i = j + threadIdx.x; i < m; i += ${threads}) { const ${t} v = ${abs(A('i', 'j'))}; if (v > bv) { bv = v; bi = i; } }`,
            '  best_v[threadIdx.x] = bv;',
            '  best_i[threadIdx.x] = bi;',
            '  __syncthreads();',
            `  for (int half = ${threads / 2}; half > 0; half /= 2) {`,
            '    if (threadIdx.x < half) {',
            `      const ${t} ov = best_v[threadIdx.x + half];`,
            '      const jx_index oi = best_i[threadIdx.x + half];',
            '      if (ov > best_v[threadIdx.x] || (ov == best_v[threadIdx.x] && oi < best_i[threadIdx.x])) { best_v[threadIdx.x] = ov; best_i[threadIdx.x] = oi; }',
            '    }',
            '    __syncthreads();',
            '  }',
            `  const jx_index piv = best_i[0] == m || ${abs(A('j', 'j'))} != ${abs(A('j', 'j'))} ? j : best_i[0];`,
            '  __syncthreads();',
            '  if (threadIdx.x == 0) pivots[j] = (jx_i32)piv;',
            `  if (piv != j) for (jx_index c = j0 + threadIdx.x; c < j1; c += ${threads}) { const ${t} x = ${A('j', 'c')}; ${A('j', 'c')} = ${A('piv', 'c')}; ${A('piv', 'c')} = x; }`,
            '  __syncthreads();',
            `  const ${t} pivot = ${A('j', 'j')};`,
            `  const ${t} rinv = (${t})1 / pivot;`,
            `  const int by_reciprocal = ${abs('pivot')} >= ${sfmin};`,
            `  if (pivot != 0) for (jx_index i = j + 1 + threadIdx.x; i < m; i += ${threads}) ${A('i', 'j')} = by_reciprocal ? ${A('i', 'j')} * rinv : ${A('i', 'j')} / pivot;`,
            '  __syncthreads();',
            '  const jx_index width = j1 - j - 1;',
            `  if (width > 0) for (jx_index e = threadIdx.x; e < (m - j - 1) * width; e += ${threads}) {`,
            '    const jx_index i = j + 1 + e / width, c = j + 1 + e % width;',
            `    ${A('i', 'c')} -= ${A('i', 'j')} * ${A('j', 'c')};`,
            '  }',
            '  __syncthreads();',
            '}',
          ], `getf2 on the m x ${nb} panel, one block of ${threads} per matrix`);
        }
        case 'rows': {
          const threads = 256;
          return ticketed([ceilDiv(n, threads), batch, 1], threads, [
            `const jx_index j0 = p * ${nb}, j1 = ${min(`j0 + ${nb}`, int(kmax))}, w = j1 - j0;`,
            `__shared__ ${t} s[${nb}][${nb + 1}];`,
            `for (jx_index e = threadIdx.x; e < w * w; e += ${threads}) { const jx_index r = e / w, c = e % w; s[r][c] = ${A('j0 + r', 'j0 + c')}; }`,
            '__syncthreads();',
            `const jx_index c = (jx_index)blockIdx.x * ${threads} + threadIdx.x;`,
            'if (c < n && (c < j0 || c >= j1)) {',
            '  // laswp: the panel\'s swaps in order, on this column',
            `  for (jx_index j = j0; j < j1; j++) { const jx_index q = pivots[j]; if (q != j) { const ${t} x = ${A('j', 'c')}; ${A('j', 'c')} = ${A('q', 'c')}; ${A('q', 'c')} = x; } }`,
            '  if (c >= j1) {',
            '    // U12 = L11^-1 A12 on this column: unit lower forward substitution, the order of getf2\'s updates',
            `    ${t} x[${nb}];`,
            '    #pragma unroll',
            `    for (int r = 0; r < ${nb}; r++) x[r] = r < w ? ${A('j0 + r', 'c')} : (${t})0;`,
            '    #pragma unroll',
            `    for (int q = 0; q < ${nb}; q++)`,
            '      #pragma unroll',
            `      for (int r = q + 1; r < ${nb}; r++) if (r < w) x[r] -= s[r][q] * x[q];`,
            '    #pragma unroll',
            `    for (int r = 0; r < ${nb}; r++) if (r < w) ${A('j0 + r', 'c')} = x[r];`,
            '  }',
            '}',
          ], `row swaps (laswp) and U12 = L11^-1 A12, a thread per column, ${threads} columns per block`);
        }
        case 'update':
          return update({
            r0: 'j1', rows: 'm - j1', c0: 'j1', cols: 'n - j1', maxRows: m - nb, maxCols: n - nb,
            A: (i, q) => A(i, `j0 + ${q}`), B: (q, c) => A(`j0 + ${q}`, c), C: A, aContiguous: 'q', bContiguous: 'c',
          }, [`const jx_index j0 = p * ${nb}, j1 = j0 + ${nb};`]);
        case 'finish':
          return {
            buffers, grid: [1, batch, 1], block: [32, 1, 1], strategy: `blocked lu (NB ${nb}), finish: the permutation from the pivots`,
            body: indent([
              ...head, ...perMatrix([
              'if (threadIdx.x == 0) {',
              '  for (jx_index i = 0; i < m; i++) permutation[i] = (jx_i32)i;',
              `  for (jx_index i = 0; i < ${int(kmax)}; i++) { const jx_i32 x = permutation[i]; permutation[i] = permutation[pivots[i]]; permutation[pivots[i]] = x; }`,
              '}',
              ]),
            ], 2),
          };
        default: break;
      }
      break;
    }
    case 'triangular_solve': {
      // render/linalg.ts's system: M x = b over r unknowns per column, M(i, c) read from a directly or transposed,
      // X(i, c) a row of out (left side) or a column (right side); forward substitution when M is lower triangular
      const { r, cols } = system(k, s);
      const transposed = !!k.transposeA !== !k.leftSide;
      const forward = !!k.lower !== transposed;
      const M = (i: string, c: string) => (transposed ? `a[(${c}) * ${int(r)} + (${i})]` : `a[(${i}) * ${int(r)} + (${c})]`);
      const X = (i: string, c: string) => (k.leftSide ? `out[(${i}) * n + (${c})]` : `out[(${c}) * n + (${i})]`);
      // the panel's unknowns [j0, j1): from the top going forward, from the bottom going backward
      const range = forward
        ? `const jx_index j0 = p * ${nb}, j1 = ${min(`j0 + ${nb}`, int(r))}, w = j1 - j0;`
        : `const jx_index j1 = ${int(r)} - p * ${nb}, j0 = j1 > ${nb} ? j1 - ${nb} : 0, w = j1 - j0;`;
      switch (stage) {
        case 'diagonal': {
          const threads = 128;
          const step = k.unitDiagonal ? [] : ['x[q] *= rinv[q];'];
          return ticketed([ceilDiv(cols, threads), batch, 1], threads, [
            range,
            `__shared__ ${t} s[${nb}][${nb + 1}]${k.unitDiagonal ? '' : `, rinv[${nb}]`};`,
            `for (jx_index e = threadIdx.x; e < w * w; e += ${threads}) { const jx_index i = e / w, c = e % w; s[i][c] = ${M('j0 + i', 'j0 + c')}; }`,
            '__syncthreads();',
            // BLAS trsm kernels multiply by the diagonal's reciprocal (a zero pivot gives inf, and 0 * inf = NaN)
            ...(k.unitDiagonal ? [] : [`for (jx_index j = threadIdx.x; j < w; j += ${threads}) rinv[j] = (${t})1 / s[j][j];`, '__syncthreads();']),
            `const jx_index c = (jx_index)blockIdx.x * ${threads} + threadIdx.x;`,
            `if (c < ${int(cols)}) {`,
            `  ${t} x[${nb}];`,
            '  #pragma unroll',
            `  for (int i = 0; i < ${nb}; i++) x[i] = i < w ? ${X('j0 + i', 'c')} : (${t})0;`,
            ...(forward
              ? [
                  '  #pragma unroll',
                  `  for (int q = 0; q < ${nb}; q++) {`,
                  '    if (q < w) {',
                  ...step.map((l) => `      ${l}`),
                  '      #pragma unroll',
                  `      for (int i = q + 1; i < ${nb}; i++) if (i < w) x[i] -= s[i][q] * x[q];`,
                  '    }',
                  '  }',
                ]
              : [
                  '  #pragma unroll',
                  `  for (int q = ${nb - 1}; q >= 0; q--) {`,
                  '    if (q < w) {',
                  ...step.map((l) => `      ${l}`),
                  '      #pragma unroll',
                  '      for (int i = 0; i < q; i++) x[i] -= s[i][q] * x[q];',
                  '    }',
                  '  }',
                ]),
            '  #pragma unroll',
            `  for (int i = 0; i < ${nb}; i++) if (i < w) ${X('j0 + i', 'c')} = x[i];`,
            '}',
          ], `the diagonal block's ${forward ? 'forward' : 'backward'} substitution, a thread per right-hand side, ${threads} per block`);
        }
        case 'update':
          return update({
            r0: forward ? 'j1' : '0', rows: forward ? `${int(r)} - j1` : 'j0', c0: '0', cols: int(cols), maxRows: r - nb, maxCols: cols,
            A: (i, q) => M(i, `j0 + ${q}`), B: (q, c) => X(`j0 + ${q}`, c), C: X, aContiguous: transposed ? 'i' : 'q', bContiguous: k.leftSide ? 'c' : 'q',
          }, [range, '(void)w;']);
        default: break;
      }
      break;
    }
  }
  throw new Error(`render/cuda: blocked ${k.op} has no stage ${JSON.stringify(stage)}`);
}
