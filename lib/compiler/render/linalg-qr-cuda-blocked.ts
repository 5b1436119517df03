// The GPU's blocked QR for large matrices: render/linalg-qr-blocked.ts's
// algorithm (LAPACK's geqrf by panels with larft/larfb, then orgqr a panel at
// a time from the last) as a fixed sequence of stage launches in the style of
// render/linalg-cuda-blocked.ts (lowered by lower-qr.ts for the 'cuda'
// target), so the updates spread over many blocks instead of
// render/linalg-qr.ts's one block per matrix. Per panel of NB columns:
//  - 'panel', a block per matrix: geqr2 on the panel's columns of work (dlarfg's
//    reflectors: beta = -sign(alpha)·‖x‖, tau = (beta - alpha)/beta, H = I
//    when the column below the diagonal is zero; a warp per column for each
//    reflector's dot products), then larft's T (H_0 ... H_{w-1} = I - V T Vᵀ)
//    into a per-panel slot of the T temp (orgqr reads it again);
//  - 'project', a block per 64 columns: Y = Tᵀ Vᵀ A2 (the rows streamed
//    through shared memory in chunks, T applied in shared memory);
//  - 'apply', 64 x 64 tiles: A2 -= V Y (depth NB);
// then 'init' (R from work's upper triangle, Q the identity's first columns)
// and, per panel from the last, 'project' with T (not transposed) and
// 'apply' on Q's rows and columns from the panel's first on.
// A launch learns its panel from a ticket (render/linalg-cuda-blocked.ts's
// scheme: a counter per stage kind in a small int32 temp, zeroed before the
// first stage; launch t of a kind hands out tickets t·G .. t·G + G - 1 for
// G blocks); grids are sized for the largest panel, and a block beyond the
// current panel's work only takes its ticket. Sums are in another order than
// the one-block kernel's (reductions over the block, GEMM sums of NB
// products), so results agree with it to rounding, not bit for bit.
import type { DType } from '../../core/dtype.js';
import type { OrthogonalKernel } from '../kernel-ir.js';
import { type RenderedKernel, indent, indexType, int } from './cuda-common.js';
import { CUDA_DIALECT, CUDA_TYPES } from './expr.js';

export type QrStage = NonNullable<OrthogonalKernel['cudaStage']>['stage'];

/** The ticket counters' buffer: a slot per stage kind. */
export const QR_STATE_SIZE = 8;
const TICKET_SLOT: Record<QrStage, number> = { panel: 0, project_r: 1, apply_r: 2, init: 3, project_q: 4, apply_q: 5 };

const ceilDiv = (a: number, b: number) => Math.ceil(a / b);
const TILE = 64;

/** The panels of an m x n qr at width nb. */
export const qrPanels = (m: number, n: number, nb: number) => ceilDiv(Math.min(m, n), nb);

/** The launch order of the stages, after the operand's copy into work and the counters' zeros (lower-qr.ts). */
export function qrSchedule(m: number, n: number, nb: number): QrStage[] {
  const kk = Math.min(m, n);
  const count = qrPanels(m, n, nb);
  const out: QrStage[] = [];
  for (let p = 0; p < count; p++) {
    out.push('panel');
    // a trailing update while columns are left right of the panel (a wide matrix's last panel too)
    if (Math.min(p * nb + nb, kk) < n) out.push('project_r', 'apply_r');
  }
  out.push('init');
  for (let p = count - 1; p >= 0; p--) out.push('project_q', 'apply_q');
  return out;
}

/** The temps of the stages beside work and tau: the counters (int32), T per panel and Y (the dtype's), per matrix. */
export function qrStageTemps(m: number, n: number, nb: number, fullMatrices: boolean): { t: number; y: number } {
  const qc = fullMatrices ? m : Math.min(m, n);
  return { t: qrPanels(m, n, nb) * nb * nb, y: nb * Math.max(n, qc) };
}

/**
 * The CUDA body of one stage at the exact params. Buffers: q, r, work, tau, the counters, T, Y, x (the one-block
 * kernel's, with the counters and the stages' temps before the operand).
 */
export function qrBlockedCuda(k: OrthogonalKernel, params: readonly number[]): RenderedKernel {
  const { stage, nb } = k.cudaStage!;
  const [batch, m, n] = params as [number, number, number];
  const kk = Math.min(m, n);
  const qc = k.fullMatrices ? m : kk;
  const count = qrPanels(m, n, nb);
  const double = k.dtype === 'float64';
  const t = double ? 'double' : 'float';
  const sqrt = (x: string) => CUDA_DIALECT.sqrt(double, x);
  const copysign = double ? 'copysign' : 'copysignf';
  const temps = qrStageTemps(m, n, nb, k.fullMatrices);
  const idx = indexType([batch * Math.max(m, n) ** 2, batch * temps.t]);
  const names = ['q', 'r', 'work', 'tau', 'jx_state', 'tbuf', 'ybuf', 'x'];
  const dtypes: DType[] = names.map((b) => (b === 'jx_state' ? 'int32' : k.dtype));
  const per = [m * qc, qc * n, m * n, kk, 0, temps.t, temps.y, m * n];
  const buffers = names.map((b, i) => ({ name: `jx_arg${i}`, dtype: dtypes[i]!, output: b !== 'x' }));
  const declare = (i: number) => {
    const c = buffers[i]!.output ? '' : 'const ';
    const type = CUDA_TYPES.storageType(dtypes[i]!);
    return `${c}${type} *__restrict__ ${names[i]} = (${c}${type} *)jx_arg${i} + jx_b * ${int(per[i]!)};`;
  };
  const perMatrix = (body: string[]) => {
    const text = body.join('\n');
    return ['const jx_index jx_b = blockIdx.y;', ...names.flatMap((b, i) => (b !== 'jx_state' && new RegExp(`\\b${b}\\[`).test(text) ? [declare(i)] : [])), ...body];
  };
  // the panel a launch works on (Q's stages go from the last panel back) and its columns [j0, j1)
  const panelOf = (ticket: string) => (stage === 'project_q' || stage === 'apply_q' ? `${int(count - 1)} - ${ticket}` : ticket);
  const ticketed = (grid: [number, number, number], threads: number, body: string[], strategy: string): RenderedKernel => ({
    buffers, grid, block: [threads, 1, 1], strategy: `blocked qr (NB ${nb}), ${stage}: ${strategy}`,
    body: indent([
      `typedef ${idx} jx_index;`,
      `const jx_index m = ${int(m)}, n = ${int(n)}, qc = ${int(qc)};`,
      '(void)m; (void)n; (void)qc;',
      '__shared__ jx_index jx_panel;',
      `if (threadIdx.x == 0) jx_panel = (jx_index)(atomicAdd((jx_i32 *)jx_arg4 + ${TICKET_SLOT[stage]}, 1) / ${int(grid[0] * grid[1])});`,
      '__syncthreads();',
      `const jx_index p = ${panelOf('jx_panel')};`,
      `const jx_index j0 = p * ${nb}, j1 = ${int(kk)} - j0 < ${nb} ? ${int(kk)} : j0 + ${nb}, w = j1 - j0;`,
      '(void)j1; (void)w;',
      ...perMatrix(body),
    ], 2),
  });
  // V(l, i): reflector i of the panel at matrix row l (unit diagonal, zeros above it)
  const V = (l: string, i: string) => `((${l}) - j0 > (${i}) ? work[(${l}) * n + j0 + (${i})] : (${l}) - j0 == (${i}) ? (${t})1 : (${t})0)`;
  const T = (r: string, c: string) => `tbuf[p * ${nb * nb} + (${r}) * ${nb} + (${c})]`;

  switch (stage) {
    case 'panel': {
      const threads = 256;
      const warps = threads / 32;
      return ticketed([1, batch, 1], threads, [
        `__shared__ ${t} jx_sum[${warps}], jx_dot[${nb}];`,
        `__shared__ ${t} jx_g[${nb}][${nb + 1}];`,
        'const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;',
        'for (jx_index jj = 0; jj < w; jj++) {',
        '  const jx_index j = j0 + jj;',
        '  // the norm below the diagonal: a sum per thread, then per warp, then over the warps',
        `  ${t} s = 0;`,
        `  for (jx_index a = j + 1 + threadIdx.x; a < m; a += ${threads}) s += work[a * n + j] * work[a * n + j];`,
        '  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);',
        '  if (lane == 0) jx_sum[warp] = s;',
        '  __syncthreads();',
        `  ${t} xnorm2 = 0;`,
        `  for (int u = 0; u < ${warps}; u++) xnorm2 += jx_sum[u];`,
        `  const ${t} alpha = work[j * n + j];`,
        '  __syncthreads();',
        '  // every thread has the same norm: all of them skip together (H = I)',
        '  if (xnorm2 == 0) { if (threadIdx.x == 0) tau[j] = 0; continue; }',
        `  const ${t} beta = -${copysign}(${sqrt('alpha * alpha + xnorm2')}, alpha);`,
        `  const ${t} tj = (beta - alpha) / beta;`,
        `  const ${t} scale = (${t})1 / (alpha - beta);`,
        `  for (jx_index a = j + 1 + threadIdx.x; a < m; a += ${threads}) work[a * n + j] *= scale;`,
        '  __syncthreads();',
        '  if (threadIdx.x == 0) { work[j * n + j] = beta; tau[j] = tj; }',
        '  // H_j on the panel\'s columns right of j: a warp per column',
        `  for (jx_index c = j + 1 + warp; c < j1; c += ${warps}) {`,
        `    ${t} d = 0;`,
        '    for (jx_index a = j + 1 + lane; a < m; a += 32) d += work[a * n + j] * work[a * n + c];',
        '    for (int o = 16; o > 0; o /= 2) d += __shfl_xor_sync(0xffffffffu, d, o);',
        '    d = (d + work[j * n + c]) * tj;',
        '    __syncwarp();',
        '    if (lane == 0) work[j * n + c] -= d;',
        '    for (jx_index a = j + 1 + lane; a < m; a += 32) work[a * n + c] -= d * work[a * n + j];',
        '  }',
        '  __syncthreads();',
        '}',
        '// larft: G(r, i) = V_r . V_i (r < i), a warp per pair; then T column by column (column i reads columns < i)',
        `for (jx_index e = warp; e < w * w; e += ${warps}) {`,
        '  const jx_index r = e / w, i = e % w;',
        '  if (r >= i) continue;',
        `  ${t} d = 0;`,
        `  for (jx_index a = j0 + i + 1 + lane; a < m; a += 32) d += work[a * n + j0 + r] * work[a * n + j0 + i];`,
        '  for (int o = 16; o > 0; o /= 2) d += __shfl_xor_sync(0xffffffffu, d, o);',
        '  if (lane == 0) jx_g[r][i] = d + work[(j0 + i) * n + j0 + r];',
        '}',
        `for (jx_index i = threadIdx.x; i < w; i += ${threads}) jx_dot[i] = tau[j0 + i];`,
        '__syncthreads();',
        'for (jx_index i = 0; i < w; i++) {',
        `  for (jx_index r = threadIdx.x; r <= i; r += ${threads}) {`,
        `    ${t} v = 0;`,
        '    if (r == i) v = jx_dot[i];',
        '    else if (jx_dot[i] != 0) for (jx_index c = r; c < i; c++) v += ' + `${T('r', 'c')} * (-jx_dot[i] * jx_g[c][i]);`,
        `    ${T('r', 'i')} = v;`,
        '  }',
        '  __syncthreads();',
        '}',
      ], `geqr2 on the ${m} x ${nb} panel and larft's T, one block of ${threads} per matrix`);
    }
    case 'project_r':
    case 'project_q': {
      // Y (w x cols) = op(T) V^T C over the columns [c0, c0 + 64) of C: A2 = work[j0:, j1:] (Tᵀ) or Q[j0:, j0:] (T)
      const onQ = stage === 'project_q';
      const cols = onQ ? 'qc - j0' : 'n - j1';
      const C = (l: string, c: string) => (onQ ? `q[(${l}) * qc + j0 + (${c})]` : `work[(${l}) * n + j1 + (${c})]`);
      const maxCols = onQ ? qc : n - Math.min(nb, kk);
      // rows per chunk: float64's four tiles fit the 48 KiB of static shared memory at 16
      const chunk = double ? 16 : 32;
      const perThread = ceilDiv(nb, 4);
      return ticketed([ceilDiv(maxCols, TILE), batch, 1], 256, [
        `const jx_index jx_cols = ${cols}, c0 = (jx_index)blockIdx.x * ${TILE};`,
        'if (c0 >= jx_cols) return;',
        `__shared__ ${t} jx_v[${chunk}][${nb + 1}], jx_c[${chunk}][${TILE + 1}], jx_y[${nb}][${TILE + 1}], jx_t[${nb}][${nb + 1}];`,
        `const int tc = threadIdx.x % ${TILE}, tg = threadIdx.x / ${TILE};`,
        `${t} acc[${perThread}] = {};`,
        `for (jx_index l0 = j0; l0 < m; l0 += ${chunk}) {`,
        `  for (jx_index e = threadIdx.x; e < ${chunk * nb}; e += 256) {`,
        `    const jx_index r = e / ${nb}, i = e % ${nb}, l = l0 + r;`,
        `    jx_v[r][i] = l < m && i < w ? ${V('l', 'i')} : (${t})0;`,
        '  }',
        `  for (jx_index e = threadIdx.x; e < ${chunk * TILE}; e += 256) {`,
        `    const jx_index r = e / ${TILE}, c = e % ${TILE}, l = l0 + r;`,
        `    jx_c[r][c] = l < m && c0 + c < jx_cols ? ${C('l', 'c0 + c')} : (${t})0;`,
        '  }',
        '  __syncthreads();',
        `  for (int r = 0; r < ${chunk}; r++) {`,
        `    const ${t} cv = jx_c[r][tc];`,
        '    #pragma unroll',
        `    for (int u = 0; u < ${perThread}; u++) if (tg + 4 * u < ${nb}) acc[u] += jx_v[r][tg + 4 * u] * cv;`,
        '  }',
        '  __syncthreads();',
        '}',
        '#pragma unroll',
        `for (int u = 0; u < ${perThread}; u++) if (tg + 4 * u < ${nb}) jx_y[tg + 4 * u][tc] = acc[u];`,
        `for (jx_index e = threadIdx.x; e < ${nb * nb}; e += 256) { const jx_index r = e / ${nb}, c = e % ${nb}; jx_t[r][c] = r < w && c < w && r <= c ? ${T('r', 'c')} : (${t})0; }`,
        '__syncthreads();',
        `if (c0 + tc < jx_cols) {`,
        '  #pragma unroll',
        `  for (int u = 0; u < ${perThread}; u++) {`,
        `    const int i = tg + 4 * u;`,
        `    if (i >= w) continue;`,
        `    ${t} v = 0;`,
        onQ
          ? `    for (int s = i; s < w; s++) v += jx_t[i][s] * jx_y[s][tc];`
          : '    for (int s = 0; s <= i; s++) v += jx_t[s][i] * jx_y[s][tc];',
        `    ybuf[i * jx_cols + c0 + tc] = v;`,
        '  }',
        '}',
      ], `Y = ${onQ ? 'T' : 'T^T'} V^T ${onQ ? 'Q2' : 'A2'}, a block per ${TILE} columns, rows in chunks of ${chunk}`);
    }
    case 'apply_r':
    case 'apply_q': {
      // C -= V Y over tiles of 64 x 64 (rows from j0, C's columns as in project)
      const onQ = stage === 'apply_q';
      const cols = onQ ? 'qc - j0' : 'n - j1';
      const C = (l: string, c: string) => (onQ ? `q[(${l}) * qc + j0 + (${c})]` : `work[(${l}) * n + j1 + (${c})]`);
      const maxCols = onQ ? qc : n - Math.min(nb, kk);
      const across = ceilDiv(maxCols, TILE);
      const tiles = ceilDiv(m, TILE) * across;
      return ticketed([tiles, batch, 1], 256, [
        `const jx_index jx_rows = m - j0, jx_cols = ${cols};`,
        `const jx_index ti = blockIdx.x / ${int(across)}, tc = blockIdx.x % ${int(across)};`,
        `if (ti * ${TILE} >= jx_rows || tc * ${TILE} >= jx_cols) return;`,
        `__shared__ ${t} jx_a[${nb}][${TILE + 1}], jx_bt[${nb}][${TILE + 1}];`,
        `for (jx_index e = threadIdx.x; e < ${TILE * nb}; e += 256) {`,
        `  const jx_index r = e / ${nb}, q = e % ${nb}, i = ti * ${TILE} + r;`,
        `  jx_a[q][r] = i < jx_rows && q < w ? ${V('j0 + i', 'q')} : (${t})0;`,
        '}',
        `for (jx_index e = threadIdx.x; e < ${TILE * nb}; e += 256) {`,
        `  const jx_index q = e / ${TILE}, r = e % ${TILE}, c = tc * ${TILE} + r;`,
        `  jx_bt[q][r] = c < jx_cols && q < w ? ybuf[q * jx_cols + c] : (${t})0;`,
        '}',
        '__syncthreads();',
        'const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;',
        `${t} acc[4][4] = {};`,
        '#pragma unroll 4',
        `for (int q = 0; q < ${nb}; q++) {`,
        `  ${t} av[4], bv[4];`,
        '  #pragma unroll',
        '  for (int u = 0; u < 4; u++) { av[u] = jx_a[q][ty + 16 * u]; bv[u] = jx_bt[q][tx + 16 * u]; }',
        '  #pragma unroll',
        '  for (int u = 0; u < 4; u++)',
        '    #pragma unroll',
        '    for (int v = 0; v < 4; v++) acc[u][v] += av[u] * bv[v];',
        '}',
        '#pragma unroll',
        'for (int u = 0; u < 4; u++) {',
        `  const jx_index i = ti * ${TILE} + ty + 16 * u;`,
        '  #pragma unroll',
        '  for (int v = 0; v < 4; v++) {',
        `    const jx_index c = tc * ${TILE} + tx + 16 * v;`,
        `    if (i < jx_rows && c < jx_cols) ${C('j0 + i', 'c')} -= acc[u][v];`,
        '  }',
        '}',
      ], `${onQ ? 'Q2' : 'A2'} -= V Y, tiles of ${TILE} x ${TILE} (${tiles} per matrix, those of the current panel active), depth ${nb}`);
    }
    case 'init': {
      const blocks = Math.max(1, Math.min(ceilDiv(m * Math.max(n, qc), 4096), 264));
      return ticketed([blocks, batch, 1], 256, [
        '(void)p;',
        `for (jx_index e = (jx_index)blockIdx.x * blockDim.x + threadIdx.x; e < qc * n; e += (jx_index)gridDim.x * blockDim.x) {`,
        '  const jx_index a = e / n, c = e % n;',
        `  r[e] = a <= c ? work[e] : (${t})0;`,
        '}',
        `for (jx_index e = (jx_index)blockIdx.x * blockDim.x + threadIdx.x; e < m * qc; e += (jx_index)gridDim.x * blockDim.x) q[e] = e / qc == e % qc ? (${t})1 : (${t})0;`,
      ], 'R from work\'s upper triangle, Q the identity\'s first columns');
    }
  }
}
