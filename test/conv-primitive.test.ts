// The conv_general_dilated primitive against the im2col composite it replaced
// (lib/lax/convolution-composite.ts: pad, strided slices, concatenate,
// dot_general) on random configurations: 1-3 spatial dims, strides, padding
// (negative too), lhs and rhs dilation, feature or batch groups, every
// dimension-number layout, preferredElementType. Values and vjps (the
// primitive's transpose rules against the composite's pad/slice/dot ones):
// first both sides on the float64 reference interpreter (no compiles, so
// many configurations), then the compiled kernels (render/conv.ts) against
// the composite on the reference, eager and under jit. Also check_grads at
// order 2 and vmap == loop for the batch-group paths of the batching rule.
// Inputs are multiples of 1/4 in [-2, 2], so float32 sums are exact in any
// order. On the emulated GPU every conv shape is a compile: a few
// configurations, under one jit.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { type ConvParams, convOutputShape } from '../lib/core/primitives.js';
import { convComposite } from '../lib/lax/convolution-composite.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { assertArray, withReference } from './helpers/oracle.js';
import { Rng, checkGrads } from './helpers/check-grads.js';
import { withX64 } from './helpers/x64.js';

type Fn = (...args: never[]) => unknown;
const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';
const cpuOnly = onCuda ? test.skip : test;

interface Config {
  lhsShape: number[];
  rhsShape: number[];
  params: ConvParams;
  layout: [string, string, string];
}

/** A seeded random integer in [lo, hi]. */
class Draw {
  #rng: Rng;
  constructor(seed: number) {
    this.#rng = new Rng(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.#rng.uniform() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)]!;
  }
  shuffle(s: string): string {
    const a = [...s];
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a.join('');
  }
}

/** A random valid configuration (resampled until its shape rule accepts it and the output is not empty, mostly). */
function randomConfig(seed: number): Config {
  const d = new Draw(seed);
  for (;;) {
    const ns = d.int(1, 3);
    const spatialChars = 'HWD'.slice(0, ns);
    const layout: [string, string, string] = [d.shuffle(`NC${spatialChars}`), d.shuffle(`OI${spatialChars}`), d.shuffle(`NC${spatialChars}`)];
    const groupKind = d.pick(['none', 'none', 'feature', 'batch'] as const);
    const G = groupKind === 'feature' ? d.int(2, 3) : 1;
    const B = groupKind === 'batch' ? d.int(2, 3) : 1;
    const I = d.int(1, 3);
    const C = I * G;
    const N = B * d.int(1, 2);
    const O = G * B * d.int(1, 3);
    const inSp = spatialChars.split('').map(() => d.int(1, ns === 3 ? 4 : 6));
    const kSp = inSp.map(() => d.int(1, 3));
    const windowStrides = inSp.map(() => d.int(1, 3));
    const lhsDilation = inSp.map(() => d.pick([1, 1, 2, 3]));
    const rhsDilation = inSp.map(() => d.pick([1, 1, 2]));
    const padding = inSp.map((): [number, number] => [d.int(-1, 2), d.int(-1, 2)]);
    const canonical = (spec: string, pairs: string, sizes: number[]) => [...spec].map((ch) => (ch === pairs[0] ? sizes[0]! : ch === pairs[1] ? sizes[1]! : sizes[2 + spatialChars.indexOf(ch)]!));
    const lhsShape = canonical(layout[0], 'NC', [N, C, ...inSp]);
    const rhsShape = canonical(layout[1], 'OI', [O, I, ...kSp]);
    const dn = lax.convDimensionNumbers(lhsShape, rhsShape, layout);
    const params: ConvParams = {
      windowStrides, padding, lhsDilation, rhsDilation, dimensionNumbers: dn, featureGroupCount: G, batchGroupCount: B, preferredElementType: null,
    };
    try {
      const out = convOutputShape(lhsShape, rhsShape, params);
      if (out.some((x) => x === 0) && d.int(0, 9) > 0) continue; // keep a few empty outputs
    } catch {
      continue;
    }
    return { lhsShape, rhsShape, params, layout };
  }
}

/** Multiples of 1/4 in [-2, 2]: products and their sums are exact in float32. */
function quarters(shape: number[], seed: number, dtype: DType = 'float32'): Array {
  const d = new Draw(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return jnp.array(globalThis.Array.from({ length: n }, () => d.int(-8, 8) / 4), { dtype }).reshape(shape);
}

/** NHWC / HWIO / NHWC with SAME padding and more output features and pixels than one C tile: the unit-stride tile, its edges and padding. */
function nhwcConfig(): Config {
  const layout: [string, string, string] = ['NHWC', 'HWIO', 'NHWC'];
  const lhsShape = [2, 5, 9, 3];
  const rhsShape = [3, 3, 3, 20];
  const dn = lax.convDimensionNumbers(lhsShape, rhsShape, layout);
  const params: ConvParams = {
    windowStrides: [1, 1], padding: [[1, 1], [1, 1]], lhsDilation: [1, 1], rhsDilation: [1, 1], dimensionNumbers: dn, featureGroupCount: 1, batchGroupCount: 1, preferredElementType: null,
  };
  return { lhsShape, rhsShape, params, layout };
}

const primitive = (c: Config) => (l: Array, r: Array): Array =>
  lax.convGeneralDilated(l, r, c.params.windowStrides, c.params.padding, {
    lhsDilation: c.params.lhsDilation, rhsDilation: c.params.rhsDilation, dimensionNumbers: c.layout,
    featureGroupCount: c.params.featureGroupCount, batchGroupCount: c.params.batchGroupCount, preferredElementType: c.params.preferredElementType,
  });
const composite = (c: Config) => (l: Array, r: Array): Array => convComposite(l, r, c.params);

/** Value and vjp (l, r, cotangent) of a conv function. */
function valueAndVjp(f: (l: Array, r: Array) => Array, l: Array, r: Array, ct: Array): Array[] {
  const [out, pullback] = jax.vjp(f, l, r);
  return [out as Array, ...(pullback(ct) as Array[])];
}

function inputs(c: Config, seed: number, dtype: DType = 'float32'): [Array, Array, Array] {
  const out = convOutputShape(c.lhsShape, c.rhsShape, c.params);
  return [quarters(c.lhsShape, seed, dtype), quarters(c.rhsShape, seed + 1, dtype), quarters(out, seed + 2, c.params.preferredElementType ?? dtype)];
}

const describe = (c: Config) =>
  `${c.layout.join('/')} lhs [${c.lhsShape}] rhs [${c.rhsShape}] strides [${c.params.windowStrides}] pad ${JSON.stringify(c.params.padding)} ldil [${c.params.lhsDilation}] rdil [${c.params.rhsDilation}] G ${c.params.featureGroupCount} B ${c.params.batchGroupCount}`;

const NAMES = ['value', 'd/dlhs', 'd/drhs'];

test('the primitive equals the im2col composite on the reference interpreter: values and vjps, 40 random configurations (10 on the emulated GPU)', (t) => {
  const count = onCuda ? 10 : 40;
  for (let s = 0; s < count; s++) {
    const c = randomConfig(1000 + s);
    withReference(() => {
      const [l, r, ct] = inputs(c, s);
      const got = valueAndVjp(primitive(c), l, r, ct);
      const want = valueAndVjp(composite(c), l, r, ct);
      got.forEach((g, i) => assertArray(t, g, want[i]!, { tol: 0, message: `${describe(c)}: ${NAMES[i]}` }));
    });
  }
});

test('the compiled conv kernels equal the composite on the reference: values and vjps, eager and under one jit', (t) => {
  const configs = [nhwcConfig(), ...globalThis.Array.from({ length: onCuda ? 2 : 7 }, (_, s) => randomConfig(5000 + s))];
  const data = configs.map((c, s) => inputs(c, 7 * s));
  const expected = configs.map((c, s) => withReference(() => valueAndVjp(composite(c), ...data[s]!)));
  const check = (results: Array[][], how: string) => results.forEach((got, s) => got.forEach((g, i) => {
    assertArray(t, g, expected[s]![i]!, { tol: 1e-6, message: `${how} ${describe(configs[s]!)}: ${NAMES[i]}` });
  }));
  const jitted = jax.jit((args: [Array, Array, Array][]) => args.map(([l, r, ct], s) => valueAndVjp(primitive(configs[s]!), l, r, ct)));
  check(jitted(data) as Array[][], 'jit');
  if (!onCuda) check(configs.slice(0, 4).map((c, s) => valueAndVjp(primitive(c), ...data[s]!)), 'eager');
});

/** A float32 configuration with the given layout and padding, unit dilations. */
function config(layout: [string, string, string], lhsShape: number[], rhsShape: number[], windowStrides: number[], padding: [number, number][], B = 1): Config {
  const dn = lax.convDimensionNumbers(lhsShape, rhsShape, layout);
  const ones = windowStrides.map(() => 1);
  return { lhsShape, rhsShape, layout, params: { windowStrides, padding, lhsDilation: ones, rhsDilation: ones, dimensionNumbers: dn, featureGroupCount: 1, batchGroupCount: B, preferredElementType: null } };
}

// windows of 64 taps or more run on the CPU as a GEMM per output pixel (render/conv.ts gemmPerPixel: in-bounds taps
// only, per group; the kernel operand copied canonical first when it is not): the kernel gradient of an NHWC
// convolution, and such windows directly, with padding on both sides, strides, batch groups, 1-3 spatial dims, and
// an OIHW kernel (copied); values and vjps (whose convolutions have large windows too). On CUDA the same shapes
// give grids of one or two tiles and K of 256 or more: split-K
test('large windows (a GEMM per output pixel on the CPU, split-K on CUDA) equal the composite: values and vjps', (t) => {
  const configs = [
    config(['NHWC', 'HWIO', 'NHWC'], [2, 9, 9, 4], [8, 8, 4, 6], [1, 2], [[2, 1], [0, 3]]),
    config(['NHWC', 'HWIO', 'NHWC'], [4, 10, 9, 3], [9, 8, 3, 4], [1, 1], [[1, 1], [2, 0]], 2),
    config(['NDHWC', 'DHWIO', 'NDHWC'], [1, 4, 5, 6, 2], [4, 4, 4, 2, 3], [1, 1, 1], [[1, 2], [0, 0], [3, -1]]),
    config(['NWC', 'WIO', 'NWC'], [3, 80, 2], [70, 2, 4], [3], [[5, 5]]),
    config(['NHWC', 'OIHW', 'NHWC'], [2, 9, 8, 4], [5, 4, 8, 8], [1, 1], [[1, 2], [3, 3]]),
  ].slice(0, onCuda ? 2 : undefined);
  configs.forEach((c, s) => {
    const data = inputs(c, 11 * s);
    const want = withReference(() => valueAndVjp(composite(c), ...data));
    valueAndVjp(primitive(c), ...data).forEach((g, i) => assertArray(t, g, want[i]!, { tol: 1e-6, message: `${describe(c)}: ${NAMES[i]}` }));
  });
  // the kernel gradient of a 3x3 SAME convolution on 9x10 images: a window of 90 taps
  const c = config(['NHWC', 'HWIO', 'NHWC'], [2, 9, 10, 3], [3, 3, 3, 5], [1, 1], [[1, 1], [1, 1]]);
  const data = inputs(c, 99);
  const want = withReference(() => valueAndVjp(composite(c), ...data));
  assertArray(t, valueAndVjp(primitive(c), ...data)[2]!, want[2]!, { tol: 1e-6, message: 'the kernel gradient' });
});

test('dtypes: float16 / bfloat16 with a float32 preferredElementType, float64, int32 against the composite on the reference', (t) => {
  const base = nhwcConfig();
  const cases: [DType, DType | null][] = onCuda ? [['bfloat16', 'float32']] : [['float16', 'float32'], ['bfloat16', null], ['int32', null], ['float64', null]];
  for (const [dtype, pet] of cases) {
    const c = { ...base, params: { ...base.params, preferredElementType: pet } };
    const run = () => {
      const [l, r] = inputs(c, 3, dtype);
      const got = primitive(c)(l, r);
      const want = withReference(() => composite(c)(l, r));
      assertArray(t, got, want, { tol: dtype === 'bfloat16' && !pet ? 1e-2 : 1e-6, message: `${dtype} -> ${pet ?? dtype} ${describe(c)}` });
    };
    if (dtype === 'float64') withX64(true, run);
    else run();
  }
});

// serial: float64 arguments need x64 on, which it turns on (process-wide) while it runs
(onCuda ? test.skip : test.serial)('check_grads at order 2: batch groups with rhs dilation, 3-d with lhs dilation and negative padding', (t) => withX64(true, () => {
  const f1 = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [2], [[1, -1]], { rhsDilation: [2], batchGroupCount: 2, dimensionNumbers: ['NWC', 'WIO', 'NWC'] });
  checkGrads(t, f1 as Fn, [quarters([4, 5, 2], 1, 'float64'), quarters([2, 2, 4], 2, 'float64')], { order: 2 });
  const f2 = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [1, 2, 1], [[0, 1], [-1, 1], [1, 0]], { lhsDilation: [2, 1, 1] });
  checkGrads(t, f2 as Fn, [quarters([1, 2, 2, 3, 2], 3, 'float64'), quarters([2, 2, 2, 1, 2], 4, 'float64')], { order: 2 });
}));

cpuOnly('vmap equals a loop: batch groups (lhs, rhs and both batched) and feature groups with the rhs batched', (t) => {
  const fb = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [1, 2], [[1, 0], [0, 1]], { batchGroupCount: 2, dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] });
  const ff = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [1, 1], 'SAME', { featureGroupCount: 2, dimensionNumbers: ['NCHW', 'OIHW', 'NHWC'] });
  const loop = (g: (i: number) => Array) => jnp.stack([0, 1, 2].map(g));
  for (const [name, f, L, R] of [
    ['batch groups', fb, quarters([3, 4, 3, 4, 2], 1), quarters([3, 2, 2, 2, 4], 2)],
    ['feature groups', ff, quarters([3, 2, 4, 3, 4], 3), quarters([3, 4, 2, 2, 2], 4)],
  ] as const) {
    const l0 = L.index(0);
    const r0 = R.index(0);
    assertArray(t, jax.vmap(f, { inAxes: [0, null] })(L, r0), loop((i) => f(L.index(i), r0)), { tol: 1e-6, message: `${name}: lhs batched` });
    assertArray(t, jax.vmap(f, { inAxes: [null, 0] })(l0, R), loop((i) => f(l0, R.index(i))), { tol: 1e-6, message: `${name}: rhs batched` });
    const both = jax.vmap(f, { inAxes: [2, 3], outAxes: 1 })(jnp.moveaxis(L, 0, 2), jnp.moveaxis(R, 0, 3));
    assertArray(t, both, jnp.moveaxis(loop((i) => f(L.index(i), R.index(i))), 0, 1), { tol: 1e-6, message: `${name}: both batched` });
  }
});

test('makeJaxpr shows one conv_general_dilated equation', (t) => {
  const f = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [1, 1], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] });
  const text = String(jax.makeJaxpr(f)(jnp.zeros([1, 4, 4, 2]), jnp.zeros([3, 3, 2, 5])));
  t.regex(text, /conv_general_dilated/);
  t.notRegex(text, /concatenate|dot_general/);
});
