// Every lax wrapper (lib/lax/ops.ts) on small cases, run on the compiled C
// kernels and checked against the float64 reference interpreter; that covers
// each primitive's kernel (render/c.ts, render/expr.ts, cuda/kernels/jaxon_c.h, lower.ts) in
// several dtypes, with special values and edge cases (clamped indices,
// negative padding, empty axes, NaN in reductions). Also hand-checked values
// where the semantics are the point, and the abstract-eval errors.
import test from 'ava';
import { config, numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import { type DType, DTYPES, isFloating } from '../lib/core/dtype.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference, randomValues } from './helpers/oracle.js';

// Float32 dots at float32 precision, to compare with the float64 reference at float32 tolerances: a GPU's default
// rounds their operands to tf32, as JAX's does (jax.config's jax_default_matmul_precision, as JAX's own tests set it).
config.update('jaxDefaultMatmulPrecision', 'float32');

// 64-bit on for the whole file, as JAX's tests run with jax_enable_x64: it tests every primitive in float64 too.
// What x64 off (the default) does to float64 requests is config.test.ts's subject.
config.update('jaxEnableX64', true);

const FLOATS: DType[] = ['float32', 'float16', 'bfloat16', 'float64'];
const INTS: DType[] = ['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'];

function arr(values: (number | boolean)[], shape: number[], dtype: DType): Array {
  return lax.reshape(jnp.array(values as number[], { dtype }), shape);
}

/** Deterministic data of a dtype: floats in [lo, hi], integers over a range that exercises wrapping, bools mixed. */
function data(shape: number[], dtype: DType, seed = 1, lo = -3, hi = 3): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  if (dtype === 'bool') return arr(randomValues(n, seed).map((v) => v > 0), shape, dtype);
  if (isFloating(dtype)) return arr(randomValues(n, seed, lo, hi), shape, dtype);
  const range: Record<string, [number, number]> = {
    int8: [-128, 127], int16: [-2000, 2000], int32: [-100000, 100000], uint8: [0, 255], uint16: [0, 5000], uint32: [0, 4000000000],
  };
  const [a, b] = range[dtype]!;
  return arr(randomValues(n, seed, a, b).map(Math.floor), shape, dtype);
}

const SPECIALS = [0, -0, Infinity, -Infinity, NaN, 1, -1, 0.5, -2.5, 1e-30, 3e38];
const special = (dtype: DType) => arr(SPECIALS, [SPECIALS.length], dtype);
const vals = (x: Array) => globalThis.Array.from(x.dataSync());

// ---- elementwise ----

const FLOAT_UNARY = [
  'neg', 'sign', 'floor', 'ceil', 'isFinite', 'exp', 'exp2', 'log', 'expm1', 'log1p', 'tanh', 'logistic', 'sin', 'cos',
  'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'sqrt', 'rsqrt', 'cbrt', 'abs', 'erf',
  'square', 'copy',
] as const;
const laxFns = lax as unknown as Record<string, (...args: unknown[]) => Array>;

for (const dtype of FLOATS) {
  test(`float unary primitives (${dtype})`, (t) => {
    // float32 and float16 run every op; bfloat16 and float64 a representative subset (each op × dtype is a kernel to compile)
    const names = dtype === 'float32' || dtype === 'float16' ? FLOAT_UNARY : (['neg', 'sign', 'floor', 'isFinite', 'exp', 'log', 'tanh', 'logistic', 'sin', 'sqrt', 'rsqrt', 'erf', 'abs'] as const);
    for (const name of names) {
      checkAgainstReference(t, () => laxFns[name]!(data([2, 5], dtype, 3, -2, 2)), { message: `${name} random` });
      checkAgainstReference(t, () => laxFns[name]!(special(dtype)), { message: `${name} specials` });
    }
    checkAgainstReference(t, () => lax.round(data([9], dtype, 4, -4, 4)), { message: 'round away' });
    checkAgainstReference(t, () => lax.round(arr([0.5, 1.5, 2.5, -0.5, -2.5, 3.49], [6], dtype), 'to_nearest_even'), { message: 'round even' });
    checkAgainstReference(t, () => lax.round(arr([0.5, 1.5, 2.5, -0.5, -2.5, 3.49], [6], dtype), 'away_from_zero'), { message: 'round away' });
  });
}

test('round: both rounding methods by hand', (t) => {
  const x = jnp.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4999998]);
  assertArray(t, lax.round(x), { shape: [6], dtype: 'float32', values: [1, 2, 3, -1, -3, 2] });
  assertArray(t, lax.round(x, 'to_nearest_even'), { shape: [6], dtype: 'float32', values: [0, 2, 2, -0, -2, 2] });
});

for (const dtype of [...INTS, 'bool'] as DType[]) {
  test(`integer and bool unary primitives (${dtype})`, (t) => {
    const x = data([7], dtype, 5);
    const ops = dtype === 'bool' ? ['bitwiseNot', 'copy'] : ['neg', 'sign', 'abs', 'bitwiseNot', 'square', 'copy'];
    for (const name of ops) checkAgainstReference(t, () => laxFns[name]!(x), { message: name });
    if (dtype !== 'bool') {
      for (const y of [0, 7]) checkAgainstReference(t, () => lax.integerPow(x, y), { message: `integerPow ${y}` });
    }
  });
}

test('integerPow on floats, negative exponents included', (t) => {
  for (const dtype of FLOATS) {
    for (const y of dtype === 'float32' ? [0, 1, 2, 3, 5, -1, -2, -3] : [3, -2]) checkAgainstReference(t, () => lax.integerPow(data([6], dtype, 6, -2, 2), y), { message: `${dtype} ** ${y}` });
  }
  assertArray(t, lax.integerPow(jnp.array([2, -3, 0], { dtype: 'int32' }), 3), { shape: [3], dtype: 'int32', values: [8, -27, 0] });
  assertArray(t, lax.integerPow(jnp.array([2, 0.5, 0]), -2), { shape: [3], dtype: 'float32', values: [0.25, 4, Infinity] });
});

const FLOAT_BINARY = ['add', 'sub', 'mul', 'div', 'rem', 'pow', 'max', 'min', 'atan2', 'nextafter', 'eq', 'ne', 'lt', 'le', 'gt', 'ge'];
const INT_BINARY = ['add', 'sub', 'mul', 'div', 'rem', 'max', 'min', 'bitwiseAnd', 'bitwiseOr', 'bitwiseXor', 'eq', 'ne', 'lt', 'le', 'gt', 'ge'];

for (const dtype of FLOATS) {
  test(`float binary primitives, with specials and a scalar operand (${dtype})`, (t) => {
    const a = data([3, 4], dtype, 7);
    const b = data([3, 4], dtype, 8);
    const s1 = special(dtype);
    const s2 = arr([...SPECIALS].reverse(), [SPECIALS.length], dtype);
    for (const name of FLOAT_BINARY) {
      const f = laxFns[name]!;
      checkAgainstReference(t, () => f(a, b), { message: `${name}` });
      checkAgainstReference(t, () => f(s1, s2), { message: `${name} specials` });
      if (dtype !== 'float32') continue; // rank-0 operands compile their own kernels: one dtype is enough
      checkAgainstReference(t, () => f(a, arr([1.5], [], dtype)), { message: `${name} scalar y` });
      checkAgainstReference(t, () => f(2, b), { message: `${name} weak x` });
    }
  });
}

for (const dtype of ['int8', 'int32', 'uint8', 'uint32', 'bool'] as DType[]) {
  test(`integer and bool binary primitives, division by zero included (${dtype})`, (t) => {
    const a = data([12], dtype, 9);
    const b = lax.concatenate([data([9], dtype, 10), arr([0, 0, 1], [3], dtype)], 0);
    const names = dtype === 'bool' ? ['max', 'min', 'bitwiseAnd', 'bitwiseOr', 'bitwiseXor', 'eq', 'ne', 'lt', 'le', 'gt', 'ge'] : INT_BINARY;
    for (const name of names) {
      checkAgainstReference(t, () => laxFns[name]!(a, b), { message: name });
      if (dtype === 'int32' || dtype === 'bool') checkAgainstReference(t, () => laxFns[name]!(arr([1], [], dtype), b), { message: `${name} scalar x` });
    }
  });
}

test('integer division and remainder by zero and INT_MIN / -1 follow XLA', (t) => {
  const x = jnp.array([7, -7, 0, -2147483648, -2147483648], { dtype: 'int32' });
  const y = jnp.array([0, 0, 0, -1, 0], { dtype: 'int32' });
  assertArray(t, lax.div(x, y), { shape: [5], dtype: 'int32', values: [-1, -1, -1, -2147483648, -1] });
  assertArray(t, lax.rem(x, y), { shape: [5], dtype: 'int32', values: [7, -7, 0, 0, -2147483648] });
  assertArray(t, lax.div(jnp.array([-128], { dtype: 'int8' }), jnp.array([-1], { dtype: 'int8' })), { shape: [1], dtype: 'int8', values: [-128] });
  assertArray(t, lax.div(jnp.array([9], { dtype: 'uint16' }), jnp.array([0], { dtype: 'uint16' })), { shape: [1], dtype: 'uint16', values: [65535] });
});

test('nextafter steps one ulp in the dtype itself (float16 and bfloat16 too)', (t) => {
  for (const dtype of FLOATS) {
    checkAgainstReference(t, () => lax.nextafter(arr([1, 1, 0, 0, -0, 65504, -1, 2, NaN, 3], [10], dtype), arr([2, 0, 1, -1, 1, Infinity, -Infinity, 2, 1, NaN], [10], dtype)), { message: dtype, tol: 0 });
  }
  assertArray(t, lax.nextafter(arr([1, 1, 0], [3], 'float16'), arr([2, 0, 1], [3], 'float16')), { shape: [3], dtype: 'float16', values: [1 + 2 ** -10, 1 - 2 ** -11, 2 ** -24] }, { tol: 0 });
  assertArray(t, lax.nextafter(arr([1, 1, 0], [3], 'bfloat16'), arr([2, 0, -1], [3], 'bfloat16')), { shape: [3], dtype: 'bfloat16', values: [1 + 2 ** -7, 1 - 2 ** -8, -(2 ** -133)] }, { tol: 0 });
  assertArray(t, lax.nextafter(arr([1, 0], [2], 'float32'), arr([2, 1], [2], 'float32')), { shape: [2], dtype: 'float32', values: [1 + 2 ** -23, 2 ** -149] }, { tol: 0 });
});

test('reducePrecision rounds the mantissa to nearest even and clamps the exponent, in every float dtype', (t) => {
  const xs = [1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.14159, 65504, 65520, 1e5, 2 ** -14, 2 ** -20, 2 ** -24, -0, NaN, Infinity, -Infinity, -1e-3, 1e-40];
  // NaN stays NaN even with no mantissa bits left (XLA's CPU backend under JAX 0.10)
  const configs: Record<string, [number, number][]> = {
    float32: [[8, 23], [5, 10], [8, 7], [3, 2], [2, 0], [8, 0], [11, 52]],
    float16: [[5, 10], [5, 3], [3, 2], [8, 7], [5, 0], [2, 1]],
    bfloat16: [[8, 7], [5, 2], [8, 0], [4, 3]],
    float64: [[11, 52], [8, 23], [5, 10], [8, 7], [11, 0]],
  };
  for (const [dtype, list] of Object.entries(configs) as [DType, [number, number][]][]) {
    for (const [e, m] of list) checkAgainstReference(t, () => lax.reducePrecision(arr(xs, [xs.length], dtype), e, m), { message: `${dtype} e${e}m${m}`, tol: 0 });
  }
  // float32 → (5, 10) is float16's rounding: ties to even, overflow to inf, flush below the normal range
  assertArray(t, lax.reducePrecision(jnp.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520, 2 ** -15, NaN]), 5, 10), {
    shape: [5], dtype: 'float32', values: [1, 1 + 2 ** -9, Infinity, 0, NaN],
  }, { tol: 0 });
  // float16 with its own format keeps subnormals
  assertArray(t, lax.reducePrecision(arr([2 ** -24, 2 ** -20], [2], 'float16'), 5, 10), { shape: [2], dtype: 'float16', values: [2 ** -24, 2 ** -20] }, { tol: 0 });
});

test('convertElementType between every pair of dtypes', (t) => {
  const source: Record<string, number[]> = {
    float: [0, -0, 1.5, -1.5, 2.5, -2.9, 127.9, 128, 255.5, 256, -129, 40000.7, -70000, 3e9, -3e9, 5e9, 1e38, NaN, Infinity, -Infinity, 1e-8, 65519],
    int: [0, 1, -1, 127, -128, 128, 255, 256, -129, 32767, -32768, 65535, 65536, 2147483647, -2147483648, 123456789],
    uint: [0, 1, 127, 128, 255, 256, 32768, 65535, 65536, 2147483648, 4294967295, 3000000000],
    bool: [0, 1],
  };
  for (const from of DTYPES) {
    const kind = isFloating(from) ? 'float' : from === 'bool' ? 'bool' : from.startsWith('u') ? 'uint' : 'int';
    // integer sources hold the values of the list that fit them
    const list = kind === 'float' ? source.float! : source[kind]!.filter((v) => {
      const range: Record<string, [number, number]> = {
        bool: [0, 1], int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647], uint8: [0, 255], uint16: [0, 65535], uint32: [0, 4294967295],
      };
      return v >= range[from]![0] && v <= range[from]![1];
    });
    const x = jnp.array(list, { dtype: from });
    for (const to of DTYPES) checkAgainstReference(t, () => lax.convertElementType(x, to), { message: `${from} → ${to}`, tol: 0 });
  }
});

test('select and selectN: bool and int32 predicates, scalar predicates, out-of-range cases clamp', (t) => {
  for (const dtype of ['float32', 'int8', 'bfloat16', 'bool'] as DType[]) {
    const a = data([2, 3], dtype, 11);
    const b = data([2, 3], dtype, 12);
    const c = data([2, 3], dtype, 13);
    checkAgainstReference(t, () => lax.select(data([2, 3], 'bool', 14), a, b), { message: `select ${dtype}` });
    checkAgainstReference(t, () => lax.select(true, a, b), { message: `select scalar ${dtype}` });
    checkAgainstReference(t, () => lax.selectN(arr([0, 1, 2, 2, 1, 0], [2, 3], 'int32'), a, b, c), { message: `selectN ${dtype}` });
    checkAgainstReference(t, () => lax.selectN(arr([-1, 3, 7, -5, 1, 0], [2, 3], 'int32'), a, b, c), { message: `selectN out of range ${dtype}` });
    checkAgainstReference(t, () => lax.selectN(arr([1], [], 'int32'), a, b, c), { message: `selectN scalar ${dtype}` });
    checkAgainstReference(t, () => lax.selectN(arr([true, false, true, false, true, false], [2, 3], 'bool'), a, b), { message: `selectN bool ${dtype}` });
  }
  assertArray(t, lax.selectN(jnp.array([0, 1, 2], { dtype: 'int32' }), jnp.array([1, 1, 1], { dtype: 'int32' }), jnp.array([2, 2, 2], { dtype: 'int32' }), jnp.array([3, 3, 3], { dtype: 'int32' })), { shape: [3], dtype: 'int32', values: [1, 2, 3] });
  assertArray(t, lax.select(jnp.array([true, false]), jnp.array([1.5, 2.5]), jnp.zeros([2])), { shape: [2], dtype: 'float32', values: [1.5, 0] });
  assertThrowsMentioning(t, () => lax.select(jnp.array([true, false]), jnp.array([1.5, 2.5]), 0), 'lax.select_n', '[]', '[2]');
});

test('clamp: scalar and array bounds, NaN', (t) => {
  for (const dtype of ['float32', 'float16', 'int8', 'uint32', 'float64'] as DType[]) {
    checkAgainstReference(t, () => lax.clamp(arr([dtype.startsWith('u') ? 3 : -1], [], dtype), data([8], dtype, 15), arr([100], [], dtype)), { message: `scalar ${dtype}` });
    checkAgainstReference(t, () => lax.clamp(data([8], dtype, 16, -2, 0), data([8], dtype, 17), data([8], dtype, 18, 0, 2)), { message: `array ${dtype}` });
  }
  assertArray(t, lax.clamp(0, jnp.array([-1, 0.5, 2, NaN]), 1), { shape: [4], dtype: 'float32', values: [0, 0.5, 1, NaN] });
});

// ---- structural ----

test('iota and broadcastedIota in several dtypes', (t) => {
  for (const dtype of ['int32', 'int8', 'uint8', 'float32', 'float16', 'bfloat16', 'float64', 'uint32'] as DType[]) {
    checkAgainstReference(t, () => lax.iota(dtype, 300), { message: `iota ${dtype}` });
    checkAgainstReference(t, () => lax.broadcastedIota(dtype, [3, 4, 2], 1), { message: `broadcastedIota ${dtype}` });
  }
  assertArray(t, lax.iota('int32', 4), { shape: [4], dtype: 'int32', values: [0, 1, 2, 3] });
  assertArray(t, lax.broadcastedIota('float32', [2, 3], -1), { shape: [2, 3], dtype: 'float32', values: [0, 1, 2, 0, 1, 2] });
  assertArray(t, lax.iota('int32', 0), { shape: [0], dtype: 'int32', values: [] });
});

test('broadcastInDim, broadcast, reshape, transpose, squeeze, expandDims, rev', (t) => {
  for (const dtype of ['float32', 'int8', 'float16', 'bool', 'float64'] as DType[]) {
    const x = data([2, 3], dtype, 19);
    checkAgainstReference(t, () => lax.broadcastInDim(x, [4, 2, 3], [1, 2]), { message: `broadcastInDim ${dtype}` });
    checkAgainstReference(t, () => lax.broadcastInDim(data([2, 1], dtype, 20), [2, 5], [0, 1]), { message: `broadcastInDim size-1 ${dtype}` });
    checkAgainstReference(t, () => lax.broadcastInDim(data([3], dtype, 21), [3, 2, 4], [0]), { message: `broadcastInDim leading ${dtype}` });
    checkAgainstReference(t, () => lax.broadcastInDim(arr([1], [], dtype), [2, 2], []), { message: `broadcastInDim scalar ${dtype}` });
    checkAgainstReference(t, () => lax.broadcast(x, [2]), { message: `broadcast ${dtype}` });
    checkAgainstReference(t, () => lax.reshape(x, [3, 2]), { message: `reshape ${dtype}` });
    checkAgainstReference(t, () => lax.reshape(x, [6], [1, 0]), { message: `reshape with dimensions ${dtype}` });
    const y = data([2, 3, 4], dtype, 22);
    for (const perm of [[0, 2, 1], [2, 0, 1], [1, 2, 0], [2, 1, 0]]) checkAgainstReference(t, () => lax.transpose(y, perm), { message: `transpose ${perm} ${dtype}` });
    checkAgainstReference(t, () => lax.squeeze(data([1, 3, 1], dtype, 23), [0, 2]), { message: `squeeze ${dtype}` });
    checkAgainstReference(t, () => lax.expandDims(x, [0, -1]), { message: `expandDims ${dtype}` });
    checkAgainstReference(t, () => lax.rev(y, [0, 2]), { message: `rev ${dtype}` });
    checkAgainstReference(t, () => lax.rev(y, [1]), { message: `rev ${dtype}` });
  }
  assertArray(t, lax.transpose(jnp.array([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' }), [1, 0]), { shape: [3, 2], dtype: 'int32', values: [1, 4, 2, 5, 3, 6] });
  assertArray(t, lax.rev(jnp.array([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' }), [1]), { shape: [2, 3], dtype: 'int32', values: [3, 2, 1, 6, 5, 4] });
  assertArray(t, lax.expandDims(jnp.array([1, 2], { dtype: 'int32' }), [0, -1]), { shape: [1, 2, 1], dtype: 'int32', values: [1, 2] });
});

test('slice with strides, sliceInDim', (t) => {
  for (const dtype of ['float32', 'uint8', 'bfloat16'] as DType[]) {
    const x = data([5, 6, 3], dtype, 24);
    checkAgainstReference(t, () => lax.slice(x, [1, 0, 0], [4, 6, 3]), { message: `slice ${dtype}` });
    checkAgainstReference(t, () => lax.slice(x, [0, 1, 1], [5, 6, 3], [2, 3, 1]), { message: `slice strided ${dtype}` });
    checkAgainstReference(t, () => lax.slice(x, [4, 5, 2], [5, 6, 3], [3, 3, 3]), { message: `slice one ${dtype}` });
    checkAgainstReference(t, () => lax.slice(x, [2, 2, 0], [2, 6, 3]), { message: `slice empty ${dtype}` });
    checkAgainstReference(t, () => lax.sliceInDim(x, 1, 6, 2, 1), { message: `sliceInDim ${dtype}` });
  }
  assertArray(t, lax.slice(jnp.arange(10), [1], [9], [3]), { shape: [3], dtype: 'int32', values: [1, 4, 7] });
  assertArray(t, lax.sliceInDim(jnp.array([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' }), 0, 3, 2, -1), { shape: [2, 2], dtype: 'int32', values: [1, 3, 4, 6] });
});

test('pad: low, high, interior and negative (cropping) padding', (t) => {
  for (const dtype of ['float32', 'int16', 'float16', 'bool'] as DType[]) {
    const x = data([3, 4], dtype, 25);
    const v = dtype === 'bool' ? true : 7;
    for (const config of [
      [[1, 2, 0], [0, 1, 0]], [[0, 0, 1], [2, 0, 2]], [[-1, 1, 0], [1, -2, 0]], [[-2, -1, 1], [0, 0, 0]], [[0, 0, 0], [-4, 1, 0]],
    ] as [number, number, number][][]) {
      checkAgainstReference(t, () => lax.pad(x, v, config), { message: `pad ${JSON.stringify(config)} ${dtype}` });
    }
    checkAgainstReference(t, () => lax.pad(arr([1], [], dtype), v, []), { message: `pad scalar ${dtype}` });
    checkAgainstReference(t, () => lax.pad(data([0, 2], dtype, 26), v, [[1, 1, 0], [0, 0, 3]]), { message: `pad empty ${dtype}` });
  }
  assertArray(t, lax.pad(jnp.array([1, 2, 3], { dtype: 'int32' }), 0, [[1, -1, 1]]), { shape: [5], dtype: 'int32', values: [0, 1, 0, 2, 0] });
  assertArray(t, lax.pad(jnp.array([1, 2, 3], { dtype: 'int32' }), -1, [[-1, 2, 0]]), { shape: [4], dtype: 'int32', values: [2, 3, -1, -1] });
});

test('concatenate along every axis, with empty operands', (t) => {
  for (const dtype of ['float32', 'int8', 'float16', 'float64'] as DType[]) {
    const a = data([2, 3], dtype, 27);
    const b = data([2, 1], dtype, 28);
    const c = data([2, 2], dtype, 29);
    checkAgainstReference(t, () => lax.concatenate([a, b, c], 1), { message: `axis 1 ${dtype}` });
    checkAgainstReference(t, () => lax.concatenate([a, data([3, 3], dtype, 30)], 0), { message: `axis 0 ${dtype}` });
    checkAgainstReference(t, () => lax.concatenate([a, data([2, 0], dtype, 31), b], -1), { message: `empty ${dtype}` });
  }
  assertArray(t, lax.concatenate([jnp.array([[1], [2]], { dtype: 'int32' }), jnp.array([[3, 4], [5, 6]], { dtype: 'int32' })], 1), { shape: [2, 3], dtype: 'int32', values: [1, 3, 4, 2, 5, 6] });
});

test('dynamicSlice and dynamicUpdateSlice: clamped, negative and array start indices', (t) => {
  for (const dtype of ['float32', 'uint16', 'bfloat16', 'bool'] as DType[]) {
    const x = data([4, 5], dtype, 32);
    const u = data([2, 3], dtype, 33);
    for (const starts of [[0, 0], [1, 2], [3, 4], [-1, -2], [100, -100]]) {
      checkAgainstReference(t, () => lax.dynamicSlice(x, starts, [2, 3]), { message: `dynamicSlice ${starts} ${dtype}` });
      checkAgainstReference(t, () => lax.dynamicUpdateSlice(x, u, starts), { message: `dynamicUpdateSlice ${starts} ${dtype}` });
    }
    checkAgainstReference(t, () => lax.dynamicSlice(x, [arr([2], [], 'uint8'), arr([-1], [], 'int8')], [2, 2]), { message: `array indices ${dtype}` });
    checkAgainstReference(t, () => lax.dynamicUpdateSlice(x, u, [arr([1], [], 'uint32'), arr([9], [], 'int16')]), { message: `array indices ${dtype}` });
    checkAgainstReference(t, () => lax.dynamicSliceInDim(x, 2, 3, 1), { message: `dynamicSliceInDim ${dtype}` });
  }
  const x = lax.reshape(jnp.arange(12), [3, 4]);
  assertArray(t, lax.dynamicSlice(x, [5, 1], [2, 2]), { shape: [2, 2], dtype: 'int32', values: [5, 6, 9, 10] });
  assertArray(t, lax.dynamicUpdateSlice(jnp.zeros([4]), jnp.ones([2]), [3]), { shape: [4], dtype: 'float32', values: [0, 0, 1, 1] });
});

// ---- gather / scatter ----

test('gather: take along an axis, batched index vectors, clip and fill modes', (t) => {
  for (const dtype of ['float32', 'int32', 'float16', 'uint8'] as DType[]) {
    const x = data([5, 4], dtype, 34);
    // x[idx, :] (jnp.take along axis 0)
    const rows = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0] };
    checkAgainstReference(t, () => lax.gather(x, arr([4, 0, 2, 2], [4, 1], 'int32'), rows, [1, 4]), { message: `rows ${dtype}` });
    // out-of-bounds rows: clipped, or filled (default fill and a custom one)
    checkAgainstReference(t, () => lax.gather(x, arr([7, -1, 3], [3, 1], 'int32'), rows, [1, 4]), { message: `rows clip ${dtype}` });
    checkAgainstReference(t, () => lax.gather(x, arr([7, -1, 3], [3, 1], 'int32'), rows, [1, 4], { mode: 'fill' }), { message: `rows fill ${dtype}` });
    checkAgainstReference(t, () => lax.gather(x, arr([7, -1, 3], [3, 1], 'int8'), rows, [1, 4], { mode: 'fill', fillValue: 9 }), { message: `rows fill 9 ${dtype}` });
    // x[i, j] for a [2, 3] batch of (i, j) pairs: point gathers
    const points = { offsetDims: [], collapsedSliceDims: [0, 1], startIndexMap: [0, 1] };
    checkAgainstReference(t, () => lax.gather(x, arr([0, 0, 1, 2, 4, 3, 3, 1, 2, 2, 0, 3], [2, 3, 2], 'uint32'), points, [1, 1]), { message: `points ${dtype}` });
    // 2x2 windows at (i, j), window axes after the batch axis; start map in reversed order
    const windows = { offsetDims: [1, 2], collapsedSliceDims: [], startIndexMap: [1, 0] };
    checkAgainstReference(t, () => lax.gather(x, arr([0, 0, 2, 3, 3, 1], [3, 2], 'int32'), windows, [2, 2]), { message: `windows ${dtype}` });
    checkAgainstReference(t, () => lax.gather(x, arr([0, 0, 2, 3, 3, 1], [3, 2], 'int32'), windows, [2, 2], { mode: 'fill' }), { message: `windows fill ${dtype}` });
  }
  const x = jnp.array([[1, 2], [3, 4], [5, 6]], { dtype: 'int32' });
  const rows = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0] };
  assertArray(t, lax.gather(x, jnp.array([[2], [0], [5]], { dtype: 'int32' }), rows, [1, 2]), { shape: [3, 2], dtype: 'int32', values: [5, 6, 1, 2, 5, 6] });
  assertArray(t, lax.gather(x, jnp.array([[2], [0], [5]], { dtype: 'int32' }), rows, [1, 2], { mode: 'fill' }), { shape: [3, 2], dtype: 'int32', values: [5, 6, 1, 2, -2147483648, -2147483648] });
  assertArray(t, lax.gather(jnp.array([[1.5, 2]]), jnp.array([[1]], { dtype: 'int32' }), rows, [1, 2], { mode: 'fill' }), { shape: [1, 2], dtype: 'float32', values: [NaN, NaN] });
});

test('scatter, scatterAdd, scatterMul, scatterMin, scatterMax: repeated indices, windows, modes', (t) => {
  for (const dtype of ['float32', 'int8', 'float16', 'uint32', 'bfloat16'] as DType[]) {
    const x = data([5, 3], dtype, 35);
    const rows = { updateWindowDims: [1], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
    const idx = arr([1, 3, 1, 4], [4, 1], 'int32');
    const up = data([4, 3], dtype, 36);
    const combines = dtype === 'float32' || dtype === 'int8' ? [lax.scatter, lax.scatterAdd, lax.scatterMul, lax.scatterMin, lax.scatterMax] : [lax.scatter, lax.scatterAdd];
    for (const f of combines) {
      checkAgainstReference(t, () => f(x, idx, up, rows), { message: `${f.name} rows ${dtype}` });
      checkAgainstReference(t, () => f(x, arr([1, 7, -1, 4], [4, 1], 'int32'), up, rows), { message: `${f.name} fill ${dtype}` });
      checkAgainstReference(t, () => f(x, arr([1, 7, -1, 4], [4, 1], 'int8'), up, rows, { mode: 'clip' }), { message: `${f.name} clip ${dtype}` });
    }
    // point updates x[i, j] += u
    const points = { updateWindowDims: [], insertedWindowDims: [0, 1], scatterDimsToOperandDims: [0, 1] };
    checkAgainstReference(t, () => lax.scatterAdd(x, arr([0, 0, 4, 2, 0, 0], [3, 2], 'int32'), data([3], dtype, 37), points), { message: `points ${dtype}` });
    // 2x2 windows
    const windows = { updateWindowDims: [1, 2], insertedWindowDims: [], scatterDimsToOperandDims: [0, 1] };
    checkAgainstReference(t, () => lax.scatter(x, arr([0, 0, 3, 1], [2, 2], 'int32'), data([2, 2, 2], dtype, 38), windows), { message: `windows ${dtype}` });
  }
  const rows = { updateWindowDims: [1], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
  assertArray(t, lax.scatterAdd(jnp.zeros([3, 2]), jnp.array([[0], [2], [0], [5]], { dtype: 'int32' }), jnp.ones([4, 2]), rows), { shape: [3, 2], dtype: 'float32', values: [2, 2, 0, 0, 1, 1] });
  assertArray(t, lax.scatter(jnp.zeros([3]), jnp.array([[1], [1]], { dtype: 'int32' }), jnp.array([5, 6], { dtype: 'float32' }), { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0] }), { shape: [3], dtype: 'float32', values: [0, 6, 0] });
  // bool scatterAdd is logical or
  checkAgainstReference(t, () => lax.scatterAdd(jnp.array([true, false, false]), jnp.array([[1], [1], [2]], { dtype: 'int32' }), jnp.array([true, true, false]), { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0] }), { message: 'bool scatterAdd' });
});

test('scatter on operands the GPU copies over several blocks: window elements in parallel, overlapping windows in order', (t) => {
  // window axis before the batch axis, 600 window elements x 100 updates: the CPU's parallel loop, the GPU's last block
  const rows = { updateWindowDims: [0], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
  const idx = arr([...globalThis.Array(100).keys()].map((i) => ((i * 37) % 70) - 3), [100, 1], 'int32');
  for (const f of [lax.scatter, lax.scatterAdd, lax.scatterMax]) {
    checkAgainstReference(t, () => f(data([64, 600], 'int32', 60), idx, data([600, 100], 'int32', 61), rows), { message: `${f.name} window elements in parallel` });
  }
  checkAgainstReference(t, () => lax.scatter(data([64, 600], 'float32', 62), idx, data([600, 100], 'float32', 63), rows, { mode: 'clip' }), { message: 'scatter clip, window elements in parallel' });
  // windows of 2 rows that overlap, so they apply one at a time in update order
  const windows = { updateWindowDims: [1, 2], insertedWindowDims: [], scatterDimsToOperandDims: [0] };
  const starts = arr([5, 6, 5, 2999, 0, 6, -1, 7], [8, 1], 'int32');
  for (const f of [lax.scatter, lax.scatterAdd, lax.scatterMul]) {
    checkAgainstReference(t, () => f(data([3000, 4], 'float32', 64), starts, data([8, 2, 4], 'float32', 65), windows), { message: `${f.name} overlapping windows` });
  }
});

// ---- reductions ----

test('reductions over various axes in several dtypes, keeping NaN', (t) => {
  const axesList = [[], [0], [1], [2], [0, 2], [1, 2], [0, 1, 2]];
  for (const dtype of ['float32', 'float16', 'bfloat16', 'float64', 'int8', 'uint32', 'int32'] as DType[]) {
    const x = data([3, 4, 5], dtype, 39);
    for (const axes of axesList) {
      for (const f of [lax.reduceSum, lax.reduceProd, lax.reduceMax, lax.reduceMin]) checkAgainstReference(t, () => f(x, axes), { message: `${f.name} ${axes} ${dtype}` });
    }
    if (isFloating(dtype)) {
      const withNaN = arr([1, NaN, 3, -Infinity, 2, 5], [2, 3], dtype);
      for (const f of [lax.reduceSum, lax.reduceMax, lax.reduceMin]) checkAgainstReference(t, () => f(withNaN, [1]), { message: `${f.name} NaN ${dtype}` });
    }
  }
  for (const dtype of ['bool', 'uint8', 'int32'] as DType[]) {
    const x = data([3, 4], dtype, 40);
    for (const axes of [[0], [1], [0, 1]]) {
      checkAgainstReference(t, () => lax.reduceAnd(x, axes), { message: `and ${axes} ${dtype}` });
      checkAgainstReference(t, () => lax.reduceOr(x, axes), { message: `or ${axes} ${dtype}` });
    }
  }
  assertArray(t, lax.reduceMax(jnp.array([[1, NaN], [3, 2]]), [1]), { shape: [2], dtype: 'float32', values: [NaN, 3] });
  assertArray(t, lax.reduceSum(jnp.array([[1, 2], [3, 4]], { dtype: 'int8' }), [0]), { shape: [2], dtype: 'int8', values: [4, 6] });
  assertArray(t, lax.reduceProd(jnp.array([100, 100], { dtype: 'int8' }), [0]), { shape: [], dtype: 'int8', values: [16] });
});

test('reductions over empty axes give the identity; bool sums do not wrap at 256', (t) => {
  for (const dtype of ['float32', 'int8', 'uint16', 'bool'] as DType[]) {
    const x = data([0, 2, 3], dtype, 41);
    for (const f of [lax.reduceSum, lax.reduceProd, lax.reduceMax, lax.reduceMin]) {
      checkAgainstReference(t, () => f(x, [0]), { message: `${f.name} [0] ${dtype}` });
      checkAgainstReference(t, () => f(x, [0, 2]), { message: `${f.name} [0,2] ${dtype}` });
    }
  }
  assertArray(t, lax.reduceMax(jnp.zeros([0, 2]), [0]), { shape: [2], dtype: 'float32', values: [-Infinity, -Infinity] });
  assertArray(t, lax.reduceMin(jnp.zeros([2, 0], { dtype: 'uint8' }), [1]), { shape: [2], dtype: 'uint8', values: [255, 255] });
  const trues = jnp.full([512], true);
  checkAgainstReference(t, () => lax.reduceSum(trues, [0]), { message: 'bool sum of 512 trues' });
  assertArray(t, lax.reduceSum(trues, [0]), { shape: [], dtype: 'bool', values: [1] });
  assertArray(t, lax.reduceProd(trues, [0]), { shape: [], dtype: 'bool', values: [1] });
});

test('argmax and argmin: first index on ties, NaN wins, several axes and index dtypes', (t) => {
  for (const dtype of ['float32', 'float16', 'int8', 'uint32', 'bool', 'bfloat16'] as DType[]) {
    const x = data([3, 4, 2], dtype, 42);
    for (const axis of [0, 1, 2]) {
      checkAgainstReference(t, () => lax.argmax(x, axis), { message: `argmax ${axis} ${dtype}` });
      checkAgainstReference(t, () => lax.argmin(x, axis, 'uint8'), { message: `argmin ${axis} ${dtype}` });
    }
  }
  const x = jnp.array([[1, 3, 3, 0], [NaN, 5, NaN, 9], [2, 2, 2, 2], [-Infinity, -Infinity, 0, 1]]);
  assertArray(t, lax.argmax(x, 1), { shape: [4], dtype: 'int32', values: [1, 0, 0, 3] });
  assertArray(t, lax.argmin(x, 1), { shape: [4], dtype: 'int32', values: [3, 0, 0, 0] });
  checkAgainstReference(t, () => lax.argmax(x, 1));
  checkAgainstReference(t, () => lax.argmin(x, 0, 'int16'));
});

test('cumulative reductions: cumsum, cumprod, cummax, cummin, forward and reverse', (t) => {
  for (const dtype of ['float32', 'float16', 'int8', 'uint32', 'bfloat16', 'float64'] as DType[]) {
    const x = data([3, 5, 2], dtype, 43, -2, 2);
    for (const axis of [0, 1, -1]) {
      for (const reverse of [false, true]) {
        for (const f of [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin]) {
          checkAgainstReference(t, () => f(x, { axis, reverse }), { message: `${f.name} ${axis} ${reverse} ${dtype}` });
        }
      }
    }
  }
  checkAgainstReference(t, () => lax.cummax(jnp.array([true, false, true]), {}), { message: 'bool cummax' });
  checkAgainstReference(t, () => lax.cummax(jnp.array([1, NaN, 3, 2]), {}), { message: 'NaN cummax' });
  assertArray(t, lax.cumsum(jnp.array([1, 2, 3, 4], { dtype: 'int32' })), { shape: [4], dtype: 'int32', values: [1, 3, 6, 10] });
  assertArray(t, lax.cumsum(jnp.array([1, 2, 3, 4], { dtype: 'int32' }), { reverse: true }), { shape: [4], dtype: 'int32', values: [10, 9, 7, 4] });
  assertArray(t, lax.cummin(jnp.array([3, NaN, 1])), { shape: [3], dtype: 'float32', values: [3, NaN, NaN] });
});

// ---- dot_general ----

test('dotGeneral: batch dimensions, transposed operands, integer and 16-bit inputs', (t) => {
  for (const dtype of ['float32', 'float16', 'bfloat16', 'float64', 'int8', 'int32', 'uint8'] as DType[]) {
    const lo = isFloating(dtype) ? -2 : undefined;
    const a = data([2, 3, 4], dtype, 44, lo, 2);
    const b = data([2, 4, 5], dtype, 45, lo, 2);
    checkAgainstReference(t, () => lax.dotGeneral(a, b, [[[2], [1]], [[0], [0]]]), { message: `batched ${dtype}` });
    // contract lhs axis 1 with rhs axis 2, batch on the last axis of lhs and the first of rhs
    const c = data([3, 4, 2], dtype, 46, lo, 2);
    const d = data([2, 5, 4], dtype, 47, lo, 2);
    checkAgainstReference(t, () => lax.dotGeneral(c, d, [[[1], [2]], [[2], [0]]]), { message: `transposed ${dtype}` });
    // two contracting axes, no batch
    checkAgainstReference(t, () => lax.dotGeneral(data([3, 2, 4], dtype, 48, lo, 2), data([4, 5, 2], dtype, 49, lo, 2), [[[1, 2], [2, 0]], [[], []]]), { message: `two contracting ${dtype}` });
    // matrix × vector, vector · vector, outer product (no contraction)
    checkAgainstReference(t, () => lax.dot(data([3, 4], dtype, 50, lo, 2), data([4], dtype, 51, lo, 2)), { message: `matvec ${dtype}` });
    checkAgainstReference(t, () => lax.dot(data([4], dtype, 52, lo, 2), data([4], dtype, 53, lo, 2)), { message: `vecvec ${dtype}` });
    checkAgainstReference(t, () => lax.dotGeneral(data([3], dtype, 54, lo, 2), data([2], dtype, 55, lo, 2), [[[], []], [[], []]]), { message: `outer ${dtype}` });
  }
  checkAgainstReference(t, () => lax.dotGeneral(data([2, 3], 'int8', 56), data([3, 2], 'int8', 57), [[[1], [0]], [[], []]], { preferredElementType: 'int32' }), { message: 'int8 → int32' });
  checkAgainstReference(t, () => lax.dotGeneral(data([2, 3], 'float16', 58), data([3, 2], 'float16', 59), [[[1], [0]], [[], []]], { preferredElementType: 'float32' }), { message: 'f16 → f32' });
  checkAgainstReference(t, () => lax.dotGeneral(data([2, 3], 'bfloat16', 60), data([3, 2], 'bfloat16', 61), [[[1], [0]], [[], []]], { preferredElementType: 'float32' }), { message: 'bf16 → f32' });
  assertArray(t, lax.dot(jnp.array([[1, 2], [3, 4]], { dtype: 'int32' }), jnp.array([[5, 6], [7, 8]], { dtype: 'int32' })), { shape: [2, 2], dtype: 'int32', values: [19, 22, 43, 50] });
  assertArray(t, lax.dot(jnp.array([100, 100], { dtype: 'int8' }), jnp.array([2, 1], { dtype: 'int8' })), { shape: [], dtype: 'int8', values: [44] });
  // a bool dot is "any": 300 true products must not wrap to false
  const ones = jnp.full([300], true);
  checkAgainstReference(t, () => lax.dot(ones, ones), { message: 'bool dot' });
  assertArray(t, lax.dot(ones, ones), { shape: [], dtype: 'bool', values: [1] });
});

// ---- errors from abstract evaluation and the wrappers ----

test('elementwise primitives reject mismatched shapes and dtypes, and the wrong dtype class', (t) => {
  const f32 = jnp.zeros([2, 3]);
  assertThrowsMentioning(t, () => lax.add(f32, jnp.zeros([3])), 'lax.add', 'shapes', '[2,3]', '[3]');
  assertThrowsMentioning(t, () => lax.mul(f32, jnp.zeros([2, 3], { dtype: 'int32' })), 'lax.mul', 'float32', 'int32');
  assertThrowsMentioning(t, () => lax.exp(jnp.array([1], { dtype: 'int32' })), 'lax.exp', 'floating-point', 'int32');
  assertThrowsMentioning(t, () => lax.bitwiseAnd(f32, f32), 'lax.and', 'float32');
  assertThrowsMentioning(t, () => lax.neg(jnp.array([true])), 'lax.neg', 'bool');
  assertThrowsMentioning(t, () => lax.add(jnp.array([true]), jnp.array([true])), 'lax.add', 'bool');
  assertThrowsMentioning(t, () => lax.pow(jnp.array([2], { dtype: 'int32' }), jnp.array([2], { dtype: 'int32' })), 'lax.pow', 'int32');
  assertThrowsMentioning(t, () => lax.integerPow(jnp.array([2], { dtype: 'int32' }), -1), 'lax.integer_pow', '-1');
  assertThrowsMentioning(t, () => lax.integerPow(jnp.array([2.5]), 1.5), 'lax.integerPow', '1.5');
  assertThrowsMentioning(t, () => lax.reducePrecision(f32, 0, 3), 'lax.reducePrecision', 'exponentBits');
  assertThrowsMentioning(t, () => lax.reducePrecision(jnp.array([1], { dtype: 'int32' }), 5, 10), 'lax.reduce_precision', 'int32');
  assertThrowsMentioning(t, () => lax.round(f32, 'up' as never), 'lax.round', "'up'");
  assertThrowsMentioning(t, () => lax.convertElementType(f32, 'int64' as never), 'lax.convertElementType', "'int64'");
  assertThrowsMentioning(t, () => lax.select(jnp.zeros([2, 3]), f32, f32), 'lax.select_n', 'float32');
  assertThrowsMentioning(t, () => lax.select(jnp.array([true, false]), f32, f32), 'lax.select_n', '[2]', '[2,3]');
  assertThrowsMentioning(t, () => lax.selectN(jnp.array(true), f32, f32, f32), 'lax.select_n', 'bool');
  assertThrowsMentioning(t, () => lax.clamp(jnp.zeros([2]), f32, 1), 'lax.clamp', '[2]');
  assertThrowsMentioning(t, () => lax.clamp(jnp.array(0, { dtype: 'int32' }), f32, 1), 'lax.clamp', 'int32', 'float32');
  assertThrowsMentioning(t, () => lax.add('x' as never, 1), 'lax.add', "'x'");
});

test('structural primitives reject bad parameters with the values in the message', (t) => {
  const x = jnp.zeros([2, 3]);
  assertThrowsMentioning(t, () => lax.reshape(x, [4]), 'lax.reshape', '[2,3]', '[4]');
  assertThrowsMentioning(t, () => lax.reshape(x, [-1, 6]), 'lax.reshape', 'newSizes');
  assertThrowsMentioning(t, () => lax.transpose(x, [0, 0]), 'lax.transpose', '[0,0]');
  assertThrowsMentioning(t, () => lax.broadcastInDim(x, [2, 4], [0, 1]), 'lax.broadcast_in_dim', '[2,3]', '[2,4]');
  assertThrowsMentioning(t, () => lax.broadcastInDim(x, [3, 2, 3], [1]), 'lax.broadcast_in_dim', 'broadcastDimensions');
  assertThrowsMentioning(t, () => lax.squeeze(x, [0]), 'lax.squeeze', 'axis 0', '2');
  assertThrowsMentioning(t, () => lax.squeeze(x, [2]), 'lax.squeeze', '2');
  assertThrowsMentioning(t, () => lax.rev(x, [3]), 'lax.rev', '3');
  assertThrowsMentioning(t, () => lax.slice(x, [0, 0], [3, 3]), 'lax.slice', 'axis 0');
  assertThrowsMentioning(t, () => lax.slice(x, [0, 0], [2, 3], [1, 0]), 'lax.slice', 'axis 1');
  assertThrowsMentioning(t, () => lax.slice(x, [0], [2]), 'lax.slice', '[2,3]');
  assertThrowsMentioning(t, () => lax.pad(x, 0, [[0, 0, -1], [0, 0, 0]]), 'lax.pad', 'interior', '-1');
  assertThrowsMentioning(t, () => lax.pad(x, 0, [[-3, 0, 0], [0, 0, 0]]), 'lax.pad', 'axis 0');
  assertThrowsMentioning(t, () => lax.pad(x, 0, [[0, 0, 0]]), 'lax.pad', '[2,3]');
  assertThrowsMentioning(t, () => lax.pad(x, jnp.zeros([2]), [[0, 0, 0], [0, 0, 0]]), 'lax.pad', 'scalar');
  assertThrowsMentioning(t, () => lax.concatenate([x, jnp.zeros([3, 3])], 1), 'lax.concatenate', '[2,3]', '[3,3]');
  assertThrowsMentioning(t, () => lax.concatenate([x, jnp.zeros([2, 3], { dtype: 'int8' })], 0), 'lax.concatenate', 'int8');
  assertThrowsMentioning(t, () => lax.concatenate([], 0), 'lax.concatenate', 'non-empty');
  assertThrowsMentioning(t, () => lax.concatenate([x, x], 2), 'lax.concatenate', '2');
  assertThrowsMentioning(t, () => lax.iota('bool', 3), 'lax.iota', 'bool');
  assertThrowsMentioning(t, () => lax.iota('int32', -1), 'lax.iota', 'size');
  assertThrowsMentioning(t, () => lax.iota('int32', 2.5), 'lax.iota', 'size');
  assertThrowsMentioning(t, () => lax.broadcastedIota('int32', [2, 3], 2), 'lax.broadcastedIota', 'dimension');
  assertThrowsMentioning(t, () => lax.dynamicSlice(x, [0], [1, 1]), 'lax.dynamicSlice', 'start indices');
  assertThrowsMentioning(t, () => lax.dynamicSlice(x, [0, 0], [3, 1]), 'lax.dynamic_slice', '[3,1]', '[2,3]');
  assertThrowsMentioning(t, () => lax.dynamicSlice(x, [0, 0.5], [1, 1]), 'lax.dynamicSlice', '0.5');
  assertThrowsMentioning(t, () => lax.dynamicSlice(x, [0, jnp.array([1.5])], [1, 1]), 'lax.dynamicSlice');
  assertThrowsMentioning(t, () => lax.dynamicUpdateSlice(x, jnp.zeros([3, 1]), [0, 0]), 'lax.dynamic_update_slice', '[3,1]');
  assertThrowsMentioning(t, () => lax.dynamicUpdateSlice(x, jnp.zeros([1, 1], { dtype: 'int32' }), [0, 0]), 'lax.dynamic_update_slice', 'int32');
});

test('indexing, reduction and dot primitives reject bad parameters', (t) => {
  const x = jnp.zeros([3, 4]);
  const rows = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0] };
  assertThrowsMentioning(t, () => lax.gather(x, jnp.array([[0.5]]), rows, [1, 4]), 'lax.gather', 'float32');
  assertThrowsMentioning(t, () => lax.gather(x, jnp.array([[0, 1]], { dtype: 'int32' }), rows, [1, 4]), 'lax.gather', 'index vector');
  assertThrowsMentioning(t, () => lax.gather(x, jnp.array([[0]], { dtype: 'int32' }), rows, [1, 5]), 'lax.gather', '[1,5]', '[3,4]');
  assertThrowsMentioning(t, () => lax.gather(x, jnp.array([[0]], { dtype: 'int32' }), rows, [2, 4]), 'lax.gather', 'collapsed');
  assertThrowsMentioning(t, () => lax.gather(x, jnp.array([[0]], { dtype: 'int32' }), rows, [1, 4], { mode: 'wrap' as never }), 'lax.gather', "'wrap'");
  assertThrowsMentioning(t, () => lax.gather(x, jnp.array([[0]], { dtype: 'int32' }), rows, [1, 4], { fill: 0 } as never), 'lax.gather', "'fill'");
  const srows = { updateWindowDims: [1], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
  assertThrowsMentioning(t, () => lax.scatter(x, jnp.array([[0]], { dtype: 'int32' }), jnp.zeros([1, 4], { dtype: 'int32' }), srows), 'lax.scatter', 'int32');
  assertThrowsMentioning(t, () => lax.scatterAdd(x, jnp.array([[0], [1]], { dtype: 'int32' }), jnp.zeros([1, 4]), srows), 'lax.scatter_add', '[1,4]');
  assertThrowsMentioning(t, () => lax.scatter(x, jnp.array([[0]], { dtype: 'int32' }), jnp.zeros([1, 5]), srows), 'lax.scatter', '[3,4]');
  assertThrowsMentioning(t, () => lax.scatter(x, jnp.array([[0]], { dtype: 'int32' }), jnp.zeros([1, 4]), srows, { mode: 'x' as never }), 'lax.scatter', "'x'");
  assertThrowsMentioning(t, () => lax.reduceSum(x, [2]), 'lax.reduceSum', '2');
  assertThrowsMentioning(t, () => lax.reduceMax(x, [0, 0]), 'lax.reduce_max', 'repeated');
  assertThrowsMentioning(t, () => lax.reduceAnd(x, [0]), 'lax.reduce_and', 'float32');
  assertThrowsMentioning(t, () => lax.argmax(x, 2), 'lax.argmax', '2');
  assertThrowsMentioning(t, () => lax.argmax(jnp.zeros([0, 2]), 0), 'lax.argmax', 'empty');
  assertThrowsMentioning(t, () => lax.argmin(x, 0, 'float32'), 'lax.argmin', 'float32');
  assertThrowsMentioning(t, () => lax.cumsum(jnp.array([true])), 'lax.cumsum', 'bool');
  assertThrowsMentioning(t, () => lax.cumsum(jnp.array(1)), 'lax.cumsum', 'scalar');
  assertThrowsMentioning(t, () => lax.cumprod(x, { axis: 2 }), 'lax.cumprod', '2');
  assertThrowsMentioning(t, () => lax.cummax(x, { reversed: true } as never), 'lax.cummax', "'reversed'");
  assertThrowsMentioning(t, () => lax.dotGeneral(x, jnp.zeros([5, 4]), [[[1], [1]], [[0], [0]]]), 'lax.dot_general', 'batch', '[3,4]', '[5,4]');
  assertThrowsMentioning(t, () => lax.dotGeneral(x, jnp.zeros([3, 4]), [[[1], [1]], [[0], [1]]]), 'lax.dot_general', 'repeated');
  assertThrowsMentioning(t, () => lax.dotGeneral(x, jnp.zeros([5, 2]), [[[1], [0]], [[], []]]), 'lax.dot_general', 'contracting', '[3,4]', '[5,2]');
  assertThrowsMentioning(t, () => lax.dotGeneral(x, jnp.zeros([4, 2], { dtype: 'int32' }), [[[1], [0]], [[], []]]), 'lax.dot_general', 'int32');
  assertThrowsMentioning(t, () => lax.dotGeneral(x, jnp.zeros([4, 2]), [[[1], [0]], [[], []]], { preferred: 'float32' } as never), 'lax.dotGeneral', "'preferred'");
  assertThrowsMentioning(t, () => lax.dotGeneral(x, jnp.zeros([4, 2]), [[[1], [0]], [[], []]], { preferredElementType: 'f32' as never }), 'lax.dotGeneral', "'f32'");
  assertThrowsMentioning(t, () => lax.dot(jnp.zeros([2, 2, 2]), x), 'lax.dot', '[2,2,2]');
  // nothing ran: the shapes stay valid after the errors
  t.deepEqual(vals(lax.reduceSum(x, [0, 1])), [0]);
});

test('stopGradient and optimizationBarrier are identities eagerly', (t) => {
  const x = jnp.array([1, 2]);
  t.is(lax.stopGradient(x), x);
  t.deepEqual(lax.optimizationBarrier([x, 3]), [x, 3]);
});
