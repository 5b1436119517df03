// The float GEMM edge cases of test/gemm-edges.test.ts (issue 16 item 3), shared with the child processes it
// starts: `node dist/test/helpers/gemm-cases.js --child` computes every case with whatever OMP_NUM_THREADS and
// JAXON_CPU_MARCH it was given and prints the results (float32 bytes, base64) as one JSON object, so the test can
// compare thread counts and the AVX2 micro-kernel with the in-process run.
import { Buffer } from 'node:buffer';
import { fileURLToPath } from 'node:url';
import * as jax from '../../lib/index.js';
import { randomValues } from './oracle.js';

const jnp = jax.numpy;

export type GemmDtype = 'float32' | 'float16' | 'bfloat16';

export interface GemmCase {
  readonly name: string;
  readonly M: number;
  readonly K: number;
  readonly N: number;
  /** Batch elements; 0: a plain [M, K] x [K, N] product. */
  readonly batch: number;
  /** With a batch: whether the rhs has one too (otherwise one [K, N] rhs broadcast to every element). */
  readonly bBatched: boolean;
  /** The lhs stored as [.., K, M] and transposed in the jitted function (and the rhs as [.., N, K]). */
  readonly ta: boolean;
  readonly tb: boolean;
  readonly dtype: GemmDtype;
  /** relu(product + bias[N]) fused onto the product. */
  readonly epilogue: boolean;
}

function gemmCase(M: number, K: number, N: number, more: Partial<Omit<GemmCase, 'name' | 'M' | 'K' | 'N'>> = {}): GemmCase {
  const c = { M, K, N, batch: 0, bBatched: false, ta: false, tb: false, dtype: 'float32' as GemmDtype, epilogue: false, ...more };
  const layout = `${c.ta ? 'aT' : 'a'}${c.tb ? ' bT' : ' b'}`;
  const batch = c.batch ? ` batch ${c.batch}${c.bBatched ? '' : ' (shared rhs)'}` : '';
  return { ...c, name: `[${M},${K}]x[${K},${N}] ${c.dtype} ${layout}${batch}${c.epilogue ? ' relu(+bias)' : ''}` };
}

// Sizes around the micro-tiles (AVX-512 12 x 32, AVX2 6 x 16) and blocks (KC 256, MC 144 or 72, NC 1024 or 512):
// every size of 1, 7, 13, 31, 33, 129, 1000 in each of m, k and n, then one past KC, MC and NC.
const SIZES = [1, 7, 13, 31, 33, 129, 1000];
const layouts = [
  { ta: false, tb: false },
  { ta: true, tb: false },
  { ta: false, tb: true },
  { ta: true, tb: true },
];

export const GEMM_CASES: readonly GemmCase[] = [
  ...SIZES.flatMap((s) => [gemmCase(s, 33, 129), gemmCase(129, s, 31), gemmCase(31, 129, s)]),
  gemmCase(13, 257, 1025), // one past KC and NC
  gemmCase(145, 513, 65), // one past MC, three KC blocks
  gemmCase(7, 1000, 1000),
  ...[gemmCase(13, 33, 31), gemmCase(31, 129, 33), gemmCase(129, 7, 1000), gemmCase(145, 257, 65)].flatMap((c) =>
    layouts.filter((l) => l.ta || l.tb).map((l) => gemmCase(c.M, c.K, c.N, l)),
  ),
  ...(['float16', 'bfloat16'] as const).flatMap((dtype) => [
    gemmCase(13, 257, 33, { dtype }),
    gemmCase(129, 31, 1000, { dtype, ta: true, tb: true }),
    gemmCase(31, 7, 129, { dtype, epilogue: true }),
  ]),
  gemmCase(13, 129, 33, { batch: 3, bBatched: true }),
  gemmCase(31, 7, 129, { batch: 5, bBatched: false }),
  gemmCase(13, 33, 31, { batch: 2, bBatched: true, ta: true, tb: true }),
  gemmCase(129, 257, 33, { epilogue: true }),
  gemmCase(13, 31, 1000, { epilogue: true, tb: true }),
  gemmCase(7, 13, 33, { batch: 3, bBatched: true, epilogue: true }),
];

export interface GemmOperands {
  readonly lhs: jax.Array;
  readonly rhs: jax.Array;
  readonly bias: jax.Array;
  /** The values the kernel multiplies (rounded to the dtype), logical row-major [batch?, M, K] and [batch?, K, N]. */
  readonly a: Float64Array;
  readonly b: Float64Array;
  readonly biasValues: Float64Array;
}

/** Deterministic operands of a case, stored in its layout. */
export function gemmOperands(c: GemmCase, seed: number): GemmOperands {
  const batches = Math.max(c.batch, 1);
  const bBatches = c.batch && c.bBatched ? c.batch : 1;
  const make = (shape: number[], s: number) => {
    const n = shape.reduce((x, y) => x * y, 1);
    const array = jnp.array(randomValues(n, s, -1, 1), { dtype: 'float32' }).reshape(shape).astype(c.dtype);
    return { array, values: Float64Array.from(array.astype('float32').dataSync() as Float32Array) };
  };
  const lead = (n: number, shape: number[]) => (c.batch && n ? [n, ...shape] : shape);
  const lhs = make(lead(batches, c.ta ? [c.K, c.M] : [c.M, c.K]), seed);
  const rhs = make(lead(c.bBatched ? bBatches : 0, c.tb ? [c.N, c.K] : [c.K, c.N]), seed + 1);
  const bias = make([c.N], seed + 2);
  // the logical operands from the stored ones
  const a = new Float64Array(batches * c.M * c.K);
  for (let p = 0; p < batches; p++)
    for (let i = 0; i < c.M; i++)
      for (let k = 0; k < c.K; k++) a[(p * c.M + i) * c.K + k] = lhs.values[p * c.M * c.K + (c.ta ? k * c.M + i : i * c.K + k)]!;
  const b = new Float64Array(bBatches * c.K * c.N);
  for (let p = 0; p < bBatches; p++)
    for (let k = 0; k < c.K; k++)
      for (let j = 0; j < c.N; j++) b[(p * c.K + k) * c.N + j] = rhs.values[p * c.K * c.N + (c.tb ? j * c.K + k : k * c.N + j)]!;
  return { lhs: lhs.array, rhs: rhs.array, bias: bias.array, a, b, biasValues: bias.values };
}

/** The jitted product of a case (transposes, batch and epilogue inside the traced function), as float32 values. */
export function gemmResult(c: GemmCase, ops: GemmOperands): Float32Array {
  const swap = (x: jax.Array) => jnp.swapaxes(x, -1, -2);
  const f = jax.jit((x: jax.Array, y: jax.Array, z: jax.Array) => {
    const p = jnp.matmul(c.ta ? swap(x) : x, c.tb ? swap(y) : y);
    return c.epilogue ? jnp.maximum(jnp.add(p, z), 0) : p;
  });
  const out = f(ops.lhs, ops.rhs, ops.bias);
  const expected = c.batch ? [c.batch, c.M, c.N] : [c.M, c.N];
  if (out.shape.join() !== expected.join()) throw new Error(`${c.name}: result shape [${out.shape}], expected [${expected}]`);
  if (out.dtype !== c.dtype) throw new Error(`${c.name}: result dtype ${out.dtype}, expected ${c.dtype}`);
  return out.astype('float32').dataSync() as Float32Array;
}

/** Each case's seed: its index, spread out. */
export const caseSeed = (index: number) => 1000 + 17 * index;

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--child') {
  const out: Record<string, string> = {};
  GEMM_CASES.forEach((c, i) => {
    const r = gemmResult(c, gemmOperands(c, caseSeed(i)));
    out[c.name] = Buffer.from(r.buffer, r.byteOffset, r.byteLength).toString('base64');
  });
  process.stdout.write(JSON.stringify(out) + '\n');
}
