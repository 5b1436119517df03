// The float dot kernels (issue 16: the CPU's packed GEMM, cuda/kernels/jaxon_gemm.h; on CUDA the CUDA dot) on the
// shapes where blocked code goes wrong: sizes that are not multiples of the micro-tile (12 x 32 with AVX-512, 6 x 16 with AVX2), depths past one
// 256-deep KC block, widths past one NC panel (512 wide with AVX2; 1024 with AVX-512: gemm-edges.test.ts), batches split over threads, a batch-broadcast rhs (stride 0),
// transposed operands (packing through strides), 16-bit operands, epilogues fused onto the product, K = 0 and
// M = 1. Each is checked element by element against a float64 product computed here, with a tolerance scaled by
// sum |a||b| (the bound on float32 accumulation error), so a dropped edge tile or a wrong panel is caught.
import test from 'ava';
import * as jax from '../lib/index.js';
import { randomValues } from './helpers/oracle.js';

// Float32 dots at float32 precision, to compare with float32 accuracy (the tf32 default: cuda-gemm.test.ts): a GPU's default rounds their operands to tf32, as
// JAX's does (jax.config's jax_default_matmul_precision, as JAX's own tests set it).
jax.config.update('jaxDefaultMatmulPrecision', 'float32');

const jnp = jax.numpy;

function operand(shape: number[], seed: number, dtype: 'float32' | 'float16' | 'bfloat16' = 'float32'): { array: jax.Array; values: Float64Array } {
  const n = shape.reduce((a, b) => a * b, 1);
  const array = jnp.array(randomValues(n, seed, -1, 1), { dtype: 'float32' }).reshape(shape).astype(dtype);
  // the values the kernel sees: rounded to the operand's dtype
  const values = Float64Array.from(array.astype('float32').dataSync() as Float32Array);
  return { array, values };
}

/** The float64 product of [batch?, M, K] x [batch?, K, N] row-major values, and sum |a||b| per element. */
function product(a: Float64Array, b: Float64Array, batch: number, M: number, K: number, N: number, bBatched: boolean) {
  const out = new Float64Array(batch * M * N);
  const mag = new Float64Array(batch * M * N);
  for (let p = 0; p < batch; p++) {
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = 0;
        let m = 0;
        for (let k = 0; k < K; k++) {
          const x = a[p * M * K + i * K + k]! * b[(bBatched ? p * K * N : 0) + k * N + j]!;
          s += x;
          m += Math.abs(x);
        }
        out[p * M * N + i * N + j] = s;
        mag[p * M * N + i * N + j] = m;
      }
    }
  }
  return { out, mag };
}

function assertClose(t: import('ava').ExecutionContext, actual: ArrayLike<number>, expected: Float64Array, mag: Float64Array, rel: number, what: string): void {
  t.is(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const bound = rel * (mag[i]! + 1e-30) + 1e-6;
    if (!(Math.abs(actual[i]! - expected[i]!) <= bound)) {
      t.fail(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (bound ${bound})`);
      return;
    }
  }
  t.pass();
}

const shapes: [number, number, number][] = [
  [1, 1, 1],
  [7, 5, 3],
  [6, 16, 256], // exactly one micro-tile, one KC block
  [13, 33, 257], // one past every block edge
  [1, 700, 600], // a row vector: M = 1, two KC blocks, two NC panels
  [130, 1100, 90], // rows over several MC blocks, columns over three NC panels
  [600, 3, 520],
];

for (const [M, K, N] of shapes) {
  test(`f32 matmul [${M},${K}] x [${K},${N}] agrees with a float64 product`, (t) => {
    const a = operand([M, K], M * 31 + K);
    const b = operand([K, N], N * 17 + 3);
    const { out, mag } = product(a.values, b.values, 1, M, K, N, false);
    const got = jax.jit(jnp.matmul)(a.array, b.array);
    t.deepEqual(got.shape, [M, N]);
    assertClose(t, got.dataSync() as Float32Array, out, mag, 2 ** -20 * Math.max(8, Math.sqrt(K)), 'jit');
    assertClose(t, jnp.matmul(a.array, b.array).dataSync() as Float32Array, out, mag, 2 ** -20 * Math.max(8, Math.sqrt(K)), 'eager');
  });
}

test('transposed operands are packed through their strides', (t) => {
  const [M, K, N] = [37, 300, 45];
  const aT = operand([K, M], 5);
  const bT = operand([N, K], 6);
  // a = aT.T, b = bT.T as row-major values
  const a = new Float64Array(M * K);
  const b = new Float64Array(K * N);
  for (let i = 0; i < M; i++) for (let k = 0; k < K; k++) a[i * K + k] = aT.values[k * M + i]!;
  for (let k = 0; k < K; k++) for (let j = 0; j < N; j++) b[k * N + j] = bT.values[j * K + k]!;
  const { out, mag } = product(a, b, 1, M, K, N, false);
  const got = jax.jit((x: jax.Array, y: jax.Array) => jnp.matmul(x.T, y.T))(aT.array, bT.array);
  assertClose(t, got.dataSync() as Float32Array, out, mag, 2 ** -18, 'x.T @ y.T');
});

test('batched products split over threads, with the rhs shared by every batch element', (t) => {
  const [P, M, K, N] = [5, 19, 70, 23];
  const a = operand([P, M, K], 7);
  const b = operand([P, K, N], 8);
  const shared = operand([K, N], 9);
  const batched = product(a.values, b.values, P, M, K, N, true);
  assertClose(t, jax.jit(jnp.matmul)(a.array, b.array).dataSync() as Float32Array, batched.out, batched.mag, 2 ** -18, 'batched');
  const broadcast = product(a.values, shared.values, P, M, K, N, false);
  assertClose(t, jax.jit(jnp.matmul)(a.array, shared.array).dataSync() as Float32Array, broadcast.out, broadcast.mag, 2 ** -18, 'broadcast rhs');
});

test('an epilogue fused onto the product (bias, then tanh) reads each product element once', (t) => {
  const [M, K, N] = [21, 40, 35];
  const a = operand([M, K], 10);
  const b = operand([K, N], 11);
  const bias = operand([N], 12);
  const { out, mag } = product(a.values, b.values, 1, M, K, N, false);
  const expected = out.map((v, i) => Math.tanh(v + bias.values[i % N]!));
  const got = jax.jit((x: jax.Array, y: jax.Array, z: jax.Array) => jnp.tanh(jnp.add(jnp.matmul(x, y), z)))(a.array, b.array, bias.array);
  assertClose(t, got.dataSync() as Float32Array, expected, mag, 2 ** -18, 'tanh(x @ y + b)');
});

for (const dtype of ['bfloat16', 'float16'] as const) {
  test(`${dtype} operands: products of the rounded values, the result rounded to ${dtype}`, (t) => {
    const [M, K, N] = [9, 50, 20];
    const a = operand([M, K], 13, dtype);
    const b = operand([K, N], 14, dtype);
    const { out, mag } = product(a.values, b.values, 1, M, K, N, false);
    const got = jax.jit(jnp.matmul)(a.array, b.array);
    t.is(got.dtype, dtype);
    const eps = dtype === 'bfloat16' ? 2 ** -8 : 2 ** -11;
    const values = got.astype('float32').dataSync() as Float32Array;
    for (let i = 0; i < out.length; i++) {
      const bound = eps * Math.abs(out[i]!) + 2 ** -18 * mag[i]! + 1e-6;
      if (!(Math.abs(values[i]! - out[i]!) <= bound)) return t.fail(`element ${i}: ${values[i]} vs ${out[i]}`);
    }
    t.pass();
  });
}

test('K = 0 gives zeros, and empty outputs are empty', (t) => {
  const z = jax.jit(jnp.matmul)(jnp.ones([4, 0]), jnp.ones([0, 5]));
  t.deepEqual(z.shape, [4, 5]);
  t.deepEqual([...(z.dataSync() as Float32Array)], new globalThis.Array(20).fill(0));
  t.deepEqual(jax.jit(jnp.matmul)(jnp.ones([0, 3]), jnp.ones([3, 5])).shape, [0, 5]);
});

test('a fused product larger than the 2^22-float scratch runs a block of rows at a time', (t) => {
  if (process.env['JAXON_TEST_PLATFORM'] === 'cuda') {
    // the CPU GEMM's scratch blocking; 27 M outputs would take the emulated GPU minutes (a fiber per CUDA thread)
    t.log('skipped: a test of the CPU backend, which the CPU run of the suite covers');
    t.pass();
    return;
  }
  // N past 2^22 / 6 leaves room for one MR-row block of the scratch (MR 12 with AVX-512, 6 with AVX2): 13 rows run as
  // 12 + 1 or 6 + 6 + 1, for each batch element
  const [P, M, K, N] = [2, 13, 3, (1 << 20) + 5];
  const a = operand([P, M, K], 15);
  const b = operand([K, N], 16);
  const got = jax.jit((x: jax.Array, y: jax.Array) => jnp.maximum(jnp.matmul(x, y), 0))(a.array, b.array);
  t.deepEqual(got.shape, [P, M, N]);
  const values = got.dataSync() as Float32Array;
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j += 997) {
        let s = 0;
        for (let k = 0; k < K; k++) s += a.values[p * M * K + i * K + k]! * b.values[k * N + j]!;
        const v = values[(p * M + i) * N + j]!;
        if (!(Math.abs(v - Math.max(s, 0)) <= 1e-6)) return t.fail(`[${p}, ${i}, ${j}]: ${v}, expected ${Math.max(s, 0)}`);
      }
    }
  }
  t.pass();
});
