// The two targets of the step specs of render/linalg.ts, linalg-qr.ts and
// linalg-jacobi.ts. C: one function per matrix on one thread (parallel loops become nested loops, the last index innermost;
// barriers vanish), matrices under OpenMP when the batch is worth it; params
// are read at run time, so one compiled kernel serves every shape. CUDA: one
// thread block per matrix (blockIdx.x), the params baked in; a parallel loop
// is flattened and strided over the block's threads, a barrier is
// __syncthreads. Blocks of 32 to 256 threads, by the matrix's size: batches of
// small matrices fill the GPU with blocks, so it serves batched small and
// medium matrices; large ones take render/linalg-cuda-blocked.ts's stages.
// Which path serves which sizes:
// - C, float32/float64: the unblocked spec below 128 (LU's min(m, n),
//   Cholesky's n, a triangular solve's unknowns), render/linalg-blocked.ts's
//   blocked getrf/potrf/trsm from 128 up (at 128 the two are even; the
//   blocked LU is 1.2x at 160, 1.8x at 256, 3x at 512, 4x at 1024 on one
//   thread); a triangular solve with fewer than 16 right-hand sides from 128
//   up is a row-oriented substitution where a's rows are the system's rows,
//   else the unblocked spec. Other dtypes: the unblocked spec at every size.
//   Only kernels lowered for matrices from 128 up (LinalgKernel.large) carry
//   the blocked code; the choice is made again per matrix at run time.
// - CUDA, float32/float64: render/linalg-cuda-blocked.ts's blocked potrf /
//   getrf / trsm (panels of CUDA_NB = 32, a plan of launches per panel,
//   lowered by lower-linalg.ts for the 'cuda' target) from CUDA_BLOCKED_MIN =
//   256 (Cholesky's n, LU's min(m, n), a triangular solve's unknowns with at
//   least 16 right-hand sides) in batches of at most CUDA_BLOCKED_MAX_BATCH =
//   64 matrices; the spec below (one block per matrix) for smaller matrices,
//   larger batches, solves with fewer right-hand sides and other dtypes.
//   JAXON_CUDA_BLOCKED_LINALG=MIN[:NB] moves the threshold (tests). Neither
//   threshold is measured on a GPU yet.
// The orthogonal kernels (kernel-ir.ts OrthogonalKernel) come here too: qr on
// CUDA (render/linalg-qr.ts; the C target keeps render/linalg-eig.ts's loop;
// large matrices take render/linalg-qr-blocked.ts / linalg-qr-cuda-blocked.ts),
// eigh and svd on both targets (render/linalg-jacobi.ts: on CUDA a block per
// matrix, ⌈min(m, n)/2⌉ threads rounded up to a warp, 32 to 256, below
// CUDA_JACOBI_MIN = 512 (min(m, n)) or in batches over 16, else
// render/linalg-jacobi-cuda.ts's same rounds over many blocks, bit for bit;
// on the C target a matrix per thread, OpenMP over the batch, below
// EIG_MIN = 32 of min(m, n)). The C target's eigh and svd from EIG_MIN up
// (OrthogonalKernel.large, set by lower.ts; JAXON_CPU_EIG_MIN moves it) are
// render/linalg-tridiagonal.ts's LAPACK-style reductions and QL / QR
// iterations (at 32 about 3x the Jacobi kernels, 25x at 64, 10-80x from 256:
// bench/RESULTS.md); their vector signs differ from the GPU's, so CPU-GPU
// comparisons of vectors from 32 up are up to sign.
import type { LinalgKernel, OrthogonalKernel } from '../kernel-ir.js';
import { type RenderedKernel, indent, indexType, int } from './cuda-common.js';
import { C_DIALECT, C_TYPES, CUDA_DIALECT, CUDA_TYPES } from './expr.js';
import { blockedWhen, hasBlocked, linalgBlockedC } from './linalg-blocked.js';
import { type LinalgSpec, type LinalgStep, linalgSpec } from './linalg.js';
import { jacobiSpec } from './linalg-jacobi.js';
import { qrSpec } from './linalg-qr.js';
import { tridiagonalC } from './linalg-tridiagonal.js';

interface Target {
  parallel: (loop: Extract<LinalgStep, { parallel: unknown }>) => string[];
  sync: string;
  firstThread: string;
}

function renderSteps(steps: readonly LinalgStep[], target: Target): string[] {
  return steps.flatMap((step): string[] => {
    if (step === 'sync') return target.sync ? [target.sync] : [];
    if (typeof step === 'string') return [step.replaceAll('JX_FIRST_THREAD', target.firstThread)];
    if ('loop' in step) return [`${step.loop.replaceAll('JX_FIRST_THREAD', target.firstThread)} {`, ...renderSteps(step.steps, target).map((l) => `  ${l}`), '}'];
    return target.parallel(step);
  });
}

const C_TARGET: Target = {
  sync: '',
  firstThread: '1',
  parallel: ({ parallel, outer, body }) => {
    const loop = (i: number): string[] => {
      const d = parallel[i]!;
      const header = `for (jx_index ${d.name} = ${d.from}; ${d.name} < ${d.to}; ${d.name}++) {`;
      const inner = i === parallel.length - 1 ? body : [...(i === 0 ? outer ?? [] : []), ...loop(i + 1)];
      return [header, ...inner.map((l) => `  ${l}`), '}'];
    };
    // a single large matrix shares its big updates among OpenMP threads (a batch already runs a matrix per thread);
    // a plain `if` keeps small work out of libgomp, whose region with a false `if` clause still costs about a µs
    if (parallel.length < 2) return loop(0);
    const size = (d: (typeof parallel)[number]) => `((${d.cudaTo ?? d.to}) - (${d.from}))`;
    const work = parallel.map(size).join(' * ');
    return [`if (batch == 1 && ${work} > JX_PARALLEL_THRESHOLD) {`, '  #pragma omp parallel for', ...loop(0).map((l) => `  ${l}`), '} else {', ...loop(0).map((l) => `  ${l}`), '}'];
  },
};

const CUDA_TARGET: Target = {
  sync: '__syncthreads();',
  firstThread: '(threadIdx.x == 0)',
  parallel: ({ parallel, outer, body }) => {
    const sizes = parallel.map((d, i) => `const jx_index jx_n${i} = (${d.cudaTo ?? d.to}) - (${d.from}) > 0 ? (${d.cudaTo ?? d.to}) - (${d.from}) : 0;`);
    const count = parallel.map((_, i) => `jx_n${i}`).join(' * ');
    const coords: string[] = [];
    let rest = 'jx_e';
    for (let i = parallel.length - 1; i >= 0; i--) {
      const d = parallel[i]!;
      coords.unshift(`const jx_index ${d.name} = ${d.from} + ${i === 0 ? rest : `${rest} % jx_n${i}`};`);
      rest = `${rest} / jx_n${i}`;
    }
    const guards = parallel.filter((d) => d.cudaTo !== undefined).map((d) => `if (${d.name} >= ${d.to}) continue;`);
    return [
      '{',
      ...sizes.map((l) => `  ${l}`),
      `  for (jx_index jx_e = threadIdx.x; jx_e < ${count}; jx_e += blockDim.x) {`,
      ...[...coords, ...guards, ...(outer ?? []), ...body].map((l) => `    ${l}`),
      '  }',
      '}',
    ];
  },
};

function bufferDeclaration(spec: LinalgSpec, i: number, storage: (d: LinalgSpec['buffers'][number]['dtype']) => string, restrict: string, base: string): string {
  const b = spec.buffers[i]!;
  const c = b.output ? '' : 'const ';
  const t = storage(b.dtype);
  return `${c}${t} *${restrict}${b.name} = (${c}${t} *)(${base}) + jx_b * (${spec.perMatrix[i]});`;
}

/** The C translation unit's function for a linalg kernel. */
export function linalgC(k: LinalgKernel, name: string): string {
  if (k.blocked) throw new Error(`render/c: ${name} is a stage of the CUDA blocked algorithm (lower-linalg.ts lowers it for 'cuda' only)`);
  const spec = linalgSpec(k, { sqrt: C_DIALECT.sqrt, nan: 'JX_NANF' });
  // large matrices take the blocked path (render/linalg-blocked.ts), chosen per call from the params
  const blocked = hasBlocked(k) && k.large
    ? { functions: `${linalgBlockedC(k, name, C_DIALECT.sqrt)}\n\n`, dispatch: [`if (${blockedWhen(k)}) { ${name}_blocked(jx_b, buffers, params); return; }`] }
    : { functions: '', dispatch: [] };
  return specC(spec, name, blocked);
}

/** The C translation unit's function for lax.linalg.eigh / svd (render/linalg-jacobi.ts): a matrix per thread. */
export function jacobiC(k: OrthogonalKernel, name: string): string {
  if (k.jacobi) throw new Error(`render/c: ${name} is a stage of the CUDA multi-block Jacobi (lower-jacobi.ts lowers it for 'cuda' only)`);
  if (k.large) return tridiagonalC(k, name);
  return specC(jacobiSpec(k), name, { functions: '', dispatch: [] });
}

/** A spec's C function: a matrix per call of NAME_matrix, OpenMP over the batch; `blocked` may take a matrix first. */
function specC(spec: LinalgSpec, name: string, blocked: { functions: string; dispatch: string[] }): string {
  const params = spec.params.map((p, i) => `const jx_index ${p} = params[${i}];`);
  const matrix = [
    ...params,
    ...spec.buffers.map((_, i) => bufferDeclaration(spec, i, C_TYPES.storageType, 'restrict ', `buffers[${i}]`)),
    ...renderSteps(spec.steps, C_TARGET),
  ];
  return `typedef int64_t jx_index;

${blocked.functions}static void ${name}_matrix(jx_index jx_b, void **buffers, const int64_t *params) {
${indent([...params.slice(0, spec.params.length), ...blocked.dispatch, ...matrix.slice(spec.params.length)], 2)}
}

void ${name}(void **buffers, const int64_t *params) {
${indent(params, 2)}
  (void)${spec.params.slice(1).join(';\n  (void)')};
  if (batch > 1 && batch * (${spec.work}) > JX_PARALLEL_THRESHOLD) {
    #pragma omp parallel for schedule(dynamic)
    for (jx_index jx_b = 0; jx_b < batch; jx_b++) ${name}_matrix(jx_b, buffers, params);
  } else {
    for (jx_index jx_b = 0; jx_b < batch; jx_b++) ${name}_matrix(jx_b, buffers, params);
  }
}`;
}

/** The CUDA body for a linalg kernel at the exact params: a block per matrix. */
export function linalgCuda(k: LinalgKernel, params: readonly number[]): RenderedKernel {
  const spec = linalgSpec(k, { sqrt: CUDA_DIALECT.sqrt, nan: 'JX_NANF' });
  const m = params[1] ?? 0;
  const n = params[params.length - 1] ?? 0;
  return specCuda(spec, params, k.op === 'cholesky' ? n * n : m * n, Math.max(m, n));
}

/** The CUDA body for lax.linalg.qr (render/linalg-qr.ts): a block per matrix, a thread per column of each update. */
export function qrCuda(k: OrthogonalKernel, params: readonly number[]): RenderedKernel {
  const spec = qrSpec(k, CUDA_DIALECT.sqrt);
  const side = Math.max(params[1] ?? 0, params[2] ?? 0);
  return specCuda(spec, params, side, side);
}

/**
 * The CUDA body for lax.linalg.eigh / svd (render/linalg-jacobi.ts): a block per matrix, a thread per pair of the
 * round-robin ordering (⌈n/2⌉ of the smaller dimension, rounded up to a warp; 32 to 256) and a share of each update.
 */
export function jacobiCuda(k: OrthogonalKernel, params: readonly number[], spec = jacobiSpec(k)): RenderedKernel {
  const m = params[1] ?? 0;
  const n = params[2] ?? 0;
  const pairs = Math.ceil(Math.min(m, n) / 2);
  const threads = Math.min(256, Math.max(32, Math.ceil(pairs / 32) * 32));
  // the largest per-matrix slice is the square of the larger side plus the scratch after it
  return specCuda(spec, params, 0, Math.max(m, n) + 2, threads);
}

/** A spec's CUDA body: blocks of 32 to 256 threads as `width` asks (or `threads`), one per matrix, the params baked in. */
function specCuda(spec: LinalgSpec, params: readonly number[], width: number, side: number, threads = Math.min(256, Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(width, 1)))))): RenderedKernel {
  if (params.length !== spec.params.length) throw new Error(`render/cuda: a linalg kernel (${spec.label}) takes params [${spec.params.join(', ')}], got ${JSON.stringify(params)}`);
  const batch = params[0]!;
  const idx = indexType([batch * side * side]);
  const lines = [
    `typedef ${idx} jx_index;`,
    ...spec.params.map((p, i) => `const jx_index ${p} = ${int(params[i]!)};`),
    `(void)batch;`,
    'const jx_index jx_b = blockIdx.x;',
    ...spec.buffers.map((_, i) => bufferDeclaration(spec, i, CUDA_TYPES.storageType, '__restrict__ ', `jx_arg${i}`)),
    ...renderSteps(spec.steps, CUDA_TARGET),
  ];
  return {
    buffers: spec.buffers.map((b, i) => ({ name: `jx_arg${i}`, dtype: b.dtype, output: b.output })),
    body: indent(lines, 2),
    grid: [Math.max(batch, 1), 1, 1],
    block: [threads, 1, 1],
    strategy: `${spec.label}: one block of ${threads} threads per matrix, ${batch} matrices (${idx} indices)`,
  };
}
