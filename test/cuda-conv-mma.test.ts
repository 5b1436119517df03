// The tensor-core convolution (lib/compiler/render/conv-mma.ts, issue 15) on
// a CUDA device (jaxon's emulated GPU in npm test) against the CPU backend:
// 1-, 2- and 3-D convs with strides, SAME and explicit padding, lhs and rhs
// dilation, feature and batch groups, NHWC and NCHW dimension numbers, odd
// sizes, bfloat16 / float16 / float32 (tf32) operands, the cp.async and the
// element-by-element A tiles, split-K, and jax.grad through a conv. Operands
// are small integers, so every product is exact in bf16, f16 and tf32 and
// every f32 sum is exact in any order: the results must equal the CPU's bit
// for bit. Then the precision: at default precision float32 operands are
// rounded to tf32 exactly as the dot's are (JAX on a GPU), at
// Precision.HIGHEST (3xTF32, also through the gradient's transposed convs)
// a conv keeps float32's low mantissa bits. The conv path decision itself
// (cuda-decisions.ts convPath, JAXON_CONV) is checked without a device.
import test from 'ava';
import * as jax from '../lib/index.js';
import { type ConvFacts, convPath, forcedConvPath } from '../lib/compiler/render/cuda-decisions.js';

const jnp = jax.numpy;
const lax = jax.lax;
const onCuda = jax.defaultBackend() === 'cuda';
const cpu = jax.devices('cpu')[0]!;

/** Integers in [-3, 3] of `shape` as dtype (deterministic). */
function ints(shape: number[], seed: number, dtype: string): jax.Array {
  const n = shape.reduce((a, b) => a * b, 1);
  let s = (seed * 2654435761) >>> 0 || 1;
  const values = Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return ((s >>> 16) % 7) - 3;
  });
  return jnp.array(values).reshape(shape).astype(dtype as 'float32');
}

/** Runs `body` with the environment variables set (undefined: unset), restoring them afterwards. */
function withEnv<T>(vars: Record<string, string | undefined>, body: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return body();
  } finally {
    set(saved);
  }
}

/** The conv kernels' headers (strategy and decisions) of f's CUDA program. */
function convHeaders(f: (...xs: jax.Array[]) => unknown, xs: jax.Array[]): string[] {
  return jax.jit(f).lower(...xs, { platform: 'cuda' }).compile().kernels().filter((k) => k.name.startsWith('conv')).map((k) => k.source.split('\n').filter((l) => l.startsWith('// jaxon CUDA kernel') || l.startsWith('// decision conv')).join('\n'));
}

/** f's outputs (flattened, as float32) on the CUDA device and on the CPU. */
function both(f: (...xs: jax.Array[]) => jax.Array | jax.Array[], xs: jax.Array[]): { got: Float32Array[]; want: Float32Array[] } {
  const flat = (r: jax.Array | jax.Array[]) => (Array.isArray(r) ? r : [r]).map((a) => a.astype('float32').dataSync() as Float32Array);
  return { got: flat(jax.jit(f)(...xs)), want: flat(jax.jit(f)(...xs.map((x) => jax.devicePut(x, cpu)))) };
}

/** The first element where got and want differ, or null. */
function firstDifference(got: Float32Array[], want: Float32Array[]): string | null {
  for (let o = 0; o < want.length; o++) {
    if (got[o]!.length !== want[o]!.length) return `output ${o}: ${got[o]!.length} elements, the CPU has ${want[o]!.length}`;
    for (let i = 0; i < want[o]!.length; i++) if (!Object.is(got[o]![i], want[o]![i])) return `output ${o} element ${i}: CUDA ${got[o]![i]}, CPU ${want[o]![i]}`;
  }
  return null;
}

interface Case {
  label: string;
  dtype: 'bfloat16' | 'float16' | 'float32';
  lhs: number[];
  rhs: number[];
  conv: (x: jax.Array, w: jax.Array) => jax.Array;
  /** what the header must say (the A tile's copy, split-K) */
  expect?: RegExp;
}

const CASES: Case[] = [
  {
    label: '1-D NWC, stride 2, explicit padding, rhs dilation 2, odd sizes', dtype: 'bfloat16', lhs: [3, 37, 20], rhs: [5, 20, 19],
    conv: (x, w) => lax.convGeneralDilated(x, w, [2], [[2, 1]], { rhsDilation: [2], dimensionNumbers: ['NWC', 'WIO', 'NWC'] }),
    expect: /lhs by 8-byte cp\.async/,
  },
  {
    label: '2-D NCHW / OIHW, strides (2, 1), SAME padding', dtype: 'float16', lhs: [2, 24, 9, 11], rhs: [17, 24, 3, 3],
    conv: (x, w) => lax.convGeneralDilated(x, w, [2, 1], 'SAME'),
  },
  {
    label: '2-D NHWC, lhs dilation 2 (a transposed conv), explicit padding, 15 features (4-byte A chunks), tf32', dtype: 'float32', lhs: [2, 6, 5, 15], rhs: [3, 3, 15, 24],
    conv: (x, w) => lax.convGeneralDilated(x, w, [1, 1], [[2, 2], [1, 2]], { lhsDilation: [2, 2], dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }),
    expect: /lhs by 4-byte cp\.async/,
  },
  {
    label: '2-D NHWC, 2 feature groups of 35 odd features (element-by-element A tiles)', dtype: 'bfloat16', lhs: [2, 7, 8, 70], rhs: [3, 3, 35, 40],
    conv: (x, w) => lax.convGeneralDilated(x, w, [1, 1], 'VALID', { featureGroupCount: 2, dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }),
    expect: /lhs element by element/,
  },
  {
    label: '2-D NHWC, 2 batch groups, rhs dilation (2, 1)', dtype: 'float16', lhs: [4, 9, 7, 24], rhs: [2, 3, 24, 36],
    conv: (x, w) => lax.convGeneralDilated(x, w, [1, 2], 'SAME', { rhsDilation: [2, 1], batchGroupCount: 2, dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }),
  },
  {
    label: '3-D NDHWC, strides (1, 2, 1), SAME, a long K (split-K)', dtype: 'bfloat16', lhs: [1, 5, 6, 7, 64], rhs: [3, 3, 3, 64, 24],
    conv: (x, w) => lax.convGeneralDilated(x, w, [1, 2, 1], 'SAME', { dimensionNumbers: ['NDHWC', 'DHWIO', 'NDHWC'] }),
    expect: /split-K/,
  },
];

// Every case fills an mma tile (16 or more features per group, K of 32 or more): tensor cores by default. The tests
// set JAXON_CONV only where they must: node's process.env writes call setenv, which may move `environ` while the
// emulated NVRTC's threads spawn the host compiler with it (the likely cause of the occasional "cannot run g++:
// Bad address" seen under the address check when the variable was set around each case).
for (const c of CASES) {
  (onCuda ? test.serial : test.skip)(`tensor cores, ${c.dtype}: ${c.label}: equal to the CPU`, (t) => {
    const x = ints(c.lhs, 1, c.dtype), w = ints(c.rhs, 2, c.dtype);
    const headers = convHeaders(c.conv, [x, w]).join('\n');
    t.regex(headers, /implicit tensor-core GEMM \(mma\.sync (bfloat16|float16|tf32)\).*\n.*conv path: mma \(tensor cores/, headers);
    if (c.expect) t.regex(headers, c.expect, headers);
    const { got, want } = both(c.conv, [x, w]);
    t.is(firstDifference(got, want), null);
  });
}

(onCuda ? test.serial : test.skip)('tensor cores by default for a float32 NHWC conv and its gradient (jax.grad: lhs and rhs transposes), equal to the CPU', (t) => {
  const x = ints([2, 8, 8, 32], 3, 'float32'), w = ints([3, 3, 32, 32], 4, 'float32'), ct = ints([2, 4, 4, 32], 5, 'float32');
  const loss = (a: jax.Array, b: jax.Array) => jnp.sum(jnp.multiply(lax.convGeneralDilated(a, b, [2, 2], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }), ct));
  const grads = (a: jax.Array, b: jax.Array) => jax.grad(loss as (...xs: never[]) => unknown, { argnums: [0, 1] })(a, b) as jax.Array[];
  const headers = convHeaders(grads, [x, w]);
  t.is(headers.length, 2, headers.join('\n'));
  for (const h of headers) t.regex(h, /implicit tensor-core GEMM \(mma\.sync tf32\).*\n.*conv path: mma \(tensor cores/, h);
  t.regex(headers.join('\n'), /lhs by 16-byte cp\.async/);
  const { got, want } = both(grads, [x, w]);
  t.is(firstDifference(got, want), null);
});

(onCuda ? test.serial : test.skip)('float32 at default precision is rounded to tf32 as the dot is; Precision.HIGHEST (3xTF32, gradients too) keeps float32', (t) => {
  // 1 + 2^-12 loses its low bit in tf32 (10 mantissa bits): 64 taps x features sum to 64 there, to 64 + 2^-6 in float32
  // (every partial sum exact, in any order)
  const x = jnp.full([1, 4, 4, 16], 1 + 2 ** -12, { dtype: 'float32' }), w = jnp.ones([2, 2, 16, 16], { dtype: 'float32' });
  const conv = (precision?: unknown) => (a: jax.Array, b: jax.Array) => lax.convGeneralDilated(a, b, [1, 1], 'VALID', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'], ...(precision ? { precision } : {}) });
  {
    const low = (jax.jit(conv())(x, w).dataSync() as Float32Array)[0];
    const high = (jax.jit(conv(lax.Precision.HIGHEST))(x, w).dataSync() as Float32Array)[0];
    t.is(low, 64, 'default precision: tf32 operands');
    t.is(high, 64 + 2 ** -6, 'HIGHEST: float32 accuracy');
    // the dot at default precision agrees with the conv: the same tf32 rounding
    const dot = (jax.jit((a: jax.Array, b: jax.Array) => jnp.matmul(a, b))(jnp.full([1, 64], 1 + 2 ** -12, { dtype: 'float32' }), jnp.ones([64, 16], { dtype: 'float32' })).dataSync() as Float32Array)[0];
    t.is(dot, low, 'conv and dot round float32 operands alike');
    t.regex(convHeaders(conv(lax.Precision.HIGHEST), [x, w]).join('\n'), /mma\.sync 3xTF32/);
    // the gradient's transposed convs keep HIGHEST: d/dw sum(conv) = sums of x over the output pixels, 9 (1 + 2^-12)
    const grad = (a: jax.Array, b: jax.Array) => jax.grad(((bb: jax.Array) => jnp.sum(conv(lax.Precision.HIGHEST)(a, bb))) as (...xs: never[]) => unknown)(b) as jax.Array;
    const headers = convHeaders(grad, [x, w]).join('\n');
    t.regex(headers, /conv\dd_f32_f32_highest/);
    t.notRegex(headers, /mma\.sync tf32/);
    const dw = jax.jit(grad)(x, w).dataSync() as Float32Array;
    t.is(dw[0], 9 * (1 + 2 ** -12));
  }
});

(onCuda ? test.serial : test.skip)('JAXON_CONV=simt keeps the SIMT kernel, with its decision in the header', (t) => {
  const x = ints([1, 5, 5, 32], 6, 'bfloat16'), w = ints([3, 3, 32, 32], 7, 'bfloat16');
  const f = (a: jax.Array, b: jax.Array) => lax.convGeneralDilated(a, b, [1, 1], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] });
  withEnv({ JAXON_CONV: 'simt' }, () => {
    const headers = convHeaders(f, [x, w]).join('\n');
    t.regex(headers, /decision conv path: simt \(JAXON_CONV=simt\)/);
    t.notRegex(headers, /tensor-core/);
    const { got, want } = both(f, [x, w]);
    t.is(firstDifference(got, want), null);
  });
});

test('the conv path decision: tensor cores for float32 / 16-bit convs that fill an mma tile, SIMT otherwise or when JAXON_CONV says', (t) => {
  const base: ConvFacts = { M: 1000, N: 64, K: 576, groups: 1, inputDtype: 'bfloat16', outputDtype: 'bfloat16', highest: false, sm: 90, forced: null };
  const path = (f: Partial<ConvFacts>) => convPath({ ...base, ...f });
  t.is(path({}).choice, 'mma');
  t.regex(path({ inputDtype: 'float32', outputDtype: 'float32' }).why, /float32 as tf32/);
  t.regex(path({ inputDtype: 'float32', outputDtype: 'float32', highest: true }).why, /3xTF32/);
  t.is(path({ inputDtype: 'float64', outputDtype: 'float64' }).choice, 'simt');
  t.is(path({ inputDtype: 'int32', outputDtype: 'int32', forced: 'mma' }).choice, 'simt');
  t.is(path({ N: 1, groups: 32 }).choice, 'simt', 'depthwise');
  t.is(path({ K: 27 }).choice, 'simt', 'an RGB first layer');
  t.is(path({ K: 27, forced: 'mma' }).choice, 'mma');
  t.is(path({ forced: 'simt' }).choice, 'simt');
  t.is(path({ sm: 75 }).choice, 'simt');
  withEnv({ JAXON_CONV: 'mma' }, () => t.is(forcedConvPath(), 'mma'));
  withEnv({ JAXON_CONV: 'auto' }, () => t.is(forcedConvPath(), null));
  withEnv({ JAXON_CONV: 'tensor' }, () => t.throws(() => forcedConvPath(), { message: 'JAXON_CONV must be simt, mma or auto, got "tensor"' }));
});
