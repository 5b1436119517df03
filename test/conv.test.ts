// Convolutions (lax.convGeneralDilated / conv / convWithGeneralPadding,
// jnp.convolve / correlate) against JAX 0.10.2 fixtures
// (test/fixtures/gen_conv.py): values eager and under one jit, the vjp wrt
// lhs and rhs against JAX's (its transpose rules), check_grads at order 2 on
// tiny cases, vmap against a loop (batched lhs, rhs, both), the dimension
// number forms, and JAX's argument errors. Inputs in the fixtures are exact in
// float32, so values compare tightly. Runs on whichever platform the suite runs
// on (the CPU, or the emulated GPU with JAXON_TEST_PLATFORM=cuda). Each distinct
// kernel is a compile, slow on the emulator: there the fixtures run on a
// representative subset (every layout, group kind and dtype path) under jit, and
// the eager runs and platform-independent checks (check_grads on the float64
// reference, vmap == loop, argument errors) run on the CPU only.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { assertArray, assertThrowsMentioning, randomValues } from './helpers/oracle.js';
import { checkGrads } from './helpers/check-grads.js';
import { withX64 } from './helpers/x64.js';
import { loadFixture } from './helpers/fixtures.js';

type Fn = (...args: never[]) => unknown;
interface Spec { shape: number[]; dtype: string; values: number[] }
interface ConvCase {
  name: string; lhs: Spec; rhs: Spec; dtype: DType; windowStrides: number[]; padding: string | [number, number][];
  lhsDilation: number[] | null; rhsDilation: number[] | null; dimensionNumbers: [string, string, string] | null;
  featureGroupCount: number; batchGroupCount: number; preferredElementType: DType | null; out: Spec; outDtype: DType;
  ct?: Spec; gradLhs?: Spec; gradRhs?: Spec;
}
interface ConvolveCase { op: 'convolve' | 'correlate'; mode: 'full' | 'same' | 'valid'; a: Spec; v: Spec; preferredElementType?: DType; out: Spec; ct?: Spec; gradA?: Spec; gradV?: Spec }
const fixture = loadFixture<{ conv: ConvCase[]; generalPadding: ConvCase; convolve: ConvolveCase[] }>('conv.json');

const make = (s: Spec, dtype = s.dtype as DType): Array => jnp.array(s.values, { dtype }).reshape(s.shape);
const expect = (s: Spec, dtype = s.dtype as DType) => ({ shape: s.shape, dtype, values: s.values });
const rand = (shape: number[], seed: number, dtype: DType = 'float32'): Array => jnp.array(randomValues(shape.reduce((a, b) => a * b, 1), seed, -1, 1), { dtype }).reshape(shape);
// exact inputs: float32 results are exact whatever the summation order; bf16 rounds once
const TOL: Partial<Record<DType, number>> = { float32: 1e-6, bfloat16: 1e-2 };
const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';
const cpuOnly = onCuda ? test.skip : test;
const CUDA_CASES = ['1d_explicit_ldil', '2d_nhwc_same_stride', '2d_feature_groups', '2d_batch_groups', '2d_scrambled_layout', '3d_ndhwc_valid', '2d_f16_pet_f32', '2d_bf16'];
const convCases = onCuda ? fixture.conv.filter((c) => CUDA_CASES.includes(c.name)) : fixture.conv;

function conv(c: ConvCase, l: Array, r: Array): Array {
  return lax.convGeneralDilated(l, r, c.windowStrides, c.padding, {
    lhsDilation: c.lhsDilation, rhsDilation: c.rhsDilation, dimensionNumbers: c.dimensionNumbers,
    featureGroupCount: c.featureGroupCount, batchGroupCount: c.batchGroupCount, preferredElementType: c.preferredElementType,
  });
}
const operands = (c: ConvCase): [Array, Array] => [make(c.lhs, c.dtype), make(c.rhs, c.dtype)];

cpuOnly('convGeneralDilated: values vs JAX, eager (NHWC SAME strided; feature groups)', (t) => {
  for (const c of fixture.conv.filter((k) => k.name === '2d_nhwc_same_stride' || k.name === '2d_feature_groups')) {
    const out = conv(c, ...operands(c));
    assertArray(t, out, expect(c.out, c.outDtype), { tol: TOL[c.outDtype], message: c.name });
  }
});

test('convGeneralDilated: values and vjp wrt lhs and rhs vs JAX under one jit (1-3 spatial dims, strides, paddings, dilations, layouts, groups, f16/bf16)', (t) => {
  const cases = convCases;
  const f = jax.jit((args: [Array, Array, Array | null][]) => args.map(([l, r, ct], i) => {
    const c = cases[i]!;
    if (!ct) return [conv(c, l, r)];
    const [out, pullback] = jax.vjp((a: Array, b: Array) => conv(c, a, b), l, r);
    return [out, ...(pullback(ct) as Array[])];
  }));
  const results = f(cases.map((c) => [...operands(c), c.ct ? make(c.ct) : null])) as Array[][];
  cases.forEach((c, i) => {
    const [out, gl, gr] = results[i]!;
    assertArray(t, out, expect(c.out, c.outDtype), { tol: TOL[c.outDtype], message: `${c.name} (jit)` });
    if (c.gradLhs) {
      assertArray(t, gl, expect(c.gradLhs), { message: `${c.name} d/dlhs` });
      assertArray(t, gr, expect(c.gradRhs!), { message: `${c.name} d/drhs` });
    }
  });
});

cpuOnly('convGeneralDilated: eager vjp wrt lhs and rhs vs JAX (lhs dilation with explicit padding)', (t) => {
  for (const name of ['1d_explicit_ldil']) {
    const c = fixture.conv.find((k) => k.name === name)!;
    const [, pullback] = jax.vjp((a: Array, b: Array) => conv(c, a, b), ...operands(c));
    const [gl, gr] = pullback(make(c.ct!)) as Array[];
    assertArray(t, gl, expect(c.gradLhs!), { message: `${name} d/dlhs` });
    assertArray(t, gr, expect(c.gradRhs!), { message: `${name} d/drhs` });
  }
});

// serial: float64 arguments need x64 on, which it turns on (process-wide) while it runs
(onCuda ? test.skip : test.serial)('convGeneralDilated: check_grads at order 2 (strides, lhs and rhs dilation, padding; feature groups)', (t) => withX64(true, () => {
  const f1 = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [2], [[1, 0]], { lhsDilation: [2], rhsDilation: [2] });
  checkGrads(t, f1 as Fn, [rand([1, 2, 3], 1, 'float64'), rand([2, 2, 2], 2, 'float64')], { order: 2 });
  const f2 = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [1, 1], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'], featureGroupCount: 2 });
  checkGrads(t, f2 as Fn, [rand([1, 3, 2, 4], 3, 'float64'), rand([2, 2, 2, 2], 4, 'float64')], { order: 2 });
}));

cpuOnly('convGeneralDilated: vmap over lhs, rhs and both equals a loop', (t) => {
  const f = (l: Array, r: Array) => lax.convGeneralDilated(l, r, [2, 1], 'SAME', { rhsDilation: [1, 2], dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'], featureGroupCount: 2 });
  const L = rand([3, 2, 5, 4, 4], 7);
  const R = rand([3, 2, 2, 2, 4], 8);
  const l0 = L.index(0);
  const r0 = R.index(0);
  const loop = (g: (i: number) => Array) => jnp.stack([0, 1, 2].map(g));
  assertArray(t, jax.vmap(f, { inAxes: [0, null] })(L, r0), loop((i) => f(L.index(i), r0)), { tol: 1e-5, message: 'lhs batched' });
  assertArray(t, jax.vmap(f, { inAxes: [null, 0] })(l0, R), loop((i) => f(l0, R.index(i))), { tol: 1e-5, message: 'rhs batched' });
  // batched along a middle axis of both, output batched on axis 2
  const Lm = jnp.moveaxis(L, 0, 3);
  const Rm = jnp.moveaxis(R, 0, 1);
  const both = jax.vmap(f, { inAxes: [3, 1], outAxes: 2 })(Lm, Rm);
  assertArray(t, both, jnp.moveaxis(loop((i) => f(L.index(i), R.index(i))), 0, 2), { tol: 1e-5, message: 'both batched' });
});

cpuOnly('convWithGeneralPadding and conv match JAX; dimension numbers as strings and as ConvDimensionNumbers agree', (t) => {
  const g = fixture.generalPadding;
  const out = lax.convWithGeneralPadding(make(g.lhs), make(g.rhs), g.windowStrides, g.padding, g.lhsDilation, g.rhsDilation);
  assertArray(t, out, expect(g.out), { message: 'convWithGeneralPadding' });
  const c = fixture.conv.find((k) => k.name === '2d_valid_stride3')!;
  assertArray(t, lax.conv(...operands(c), c.windowStrides, c.padding), expect(c.out), { message: 'lax.conv' });
  assertArray(t, lax.conv(...operands(c), c.windowStrides, c.padding, { precision: lax.Precision.HIGHEST }), expect(c.out), { message: 'lax.conv, Precision.HIGHEST' });
  assertArray(t, lax.conv(...operands(c), c.windowStrides, c.padding, { precision: ['highest', 'default'] }), expect(c.out), { message: 'lax.conv, a precision pair' });
  const s = fixture.conv.find((k) => k.name === '2d_scrambled_layout')!;
  const dn = lax.convDimensionNumbers(s.lhs.shape, s.rhs.shape, s.dimensionNumbers);
  t.deepEqual(dn, { lhsSpec: [3, 1, 2, 0], rhsSpec: [0, 2, 1, 3], outSpec: [1, 2, 0, 3] });
  assertArray(t, conv({ ...s, dimensionNumbers: dn as never }, ...operands(s)), expect(s.out), { message: 'ConvDimensionNumbers form' });
  t.deepEqual(lax.padtypeToPads([5, 6], [3, 2], [2, 1], 'SAME_LOWER'), [[1, 1], [1, 0]]);
});

test('jnp.convolve / correlate: modes, the longer operand second, int and float inputs vs JAX; vjp vs JAX; under jit', (t) => {
  const cases = onCuda ? fixture.convolve.filter((c) => c.mode === 'same' || c.a.shape[0] === 3) : fixture.convolve;
  const call = (c: ConvolveCase, a: Array, v: Array) => jnp[c.op](a, v, c.mode, c.preferredElementType ? { preferredElementType: c.preferredElementType } : {});
  if (!onCuda) for (const c of cases.slice(0, 1)) assertArray(t, call(c, make(c.a), make(c.v)), expect(c.out), { message: `${c.op} ${c.mode} eager` });
  const f = jax.jit((args: [Array, Array, Array | null][]) => args.map(([a, v, ct], i) => {
    const c = cases[i]!;
    if (!ct) return [call(c, a, v)];
    const [out, pullback] = jax.vjp((x: Array, y: Array) => call(c, x, y), a, v);
    return [out, ...(pullback(ct) as Array[])];
  }));
  const results = f(cases.map((c) => [make(c.a), make(c.v), c.ct ? make(c.ct) : null])) as Array[][];
  cases.forEach((c, i) => {
    const [out, ga, gv] = results[i]!;
    const what = `${c.op}(${c.a.dtype}[${c.a.shape}], [${c.v.shape}], ${c.mode})`;
    assertArray(t, out, expect(c.out), { message: what });
    if (c.gradA) {
      assertArray(t, ga, expect(c.gradA), { message: `${what} d/da` });
      assertArray(t, gv, expect(c.gradV!), { message: `${what} d/dv` });
    }
  });
  t.deepEqual(jax.vmap((a: Array) => jnp.convolve(a, jnp.array([1, 2])))(jnp.array([[1, 0], [0, 1]])).tolistSync(), [[1, 2, 0], [0, 1, 2]]);
});

test('convGeneralDilated / convolve: JAX\'s argument errors', (t) => {
  const x = jnp.zeros([2, 4, 5, 5]);
  const w = jnp.zeros([6, 2, 3, 3]);
  const cg = (l: Array, r: Array, o: Parameters<typeof lax.convGeneralDilated>[4] = {}, padding: Parameters<typeof lax.convGeneralDilated>[3] = 'VALID', strides = [1, 1]) => lax.convGeneralDilated(l, r, strides, padding, o);
  assertThrowsMentioning(t, () => cg(x, jnp.zeros([6, 2, 3])), 'lax.convGeneralDilated', 'same number of dimensions');
  assertThrowsMentioning(t, () => cg(x, w), 'lhs feature dimension size divided by featureGroupCount', '4 // 1 != 2');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 3 }), 'featureGroupCount must divide', '3 does not divide 4');
  assertThrowsMentioning(t, () => cg(x, jnp.zeros([5, 2, 3, 3]), { featureGroupCount: 2 }), 'multiple of featureGroupCount', '5');
  assertThrowsMentioning(t, () => cg(jnp.zeros([3, 2, 5, 5]), jnp.zeros([4, 2, 3, 3]), { batchGroupCount: 2 }), 'batchGroupCount must divide', '2 does not divide 3');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2, batchGroupCount: 2 }), 'at most one of batchGroupCount and featureGroupCount');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 0 }), 'featureGroupCount must be a positive integer');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2 }, 'VALID', [1]), 'windowStrides', '2');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2 }, 'FULL'), "'VALID', 'SAME', or 'SAME_LOWER'", 'FULL');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2, lhsDilation: [2, 2] }, 'SAME'), 'string padding', 'lhsDilation');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2 }, [[1, 1]]), 'wrong number of explicit pads', 'expected 2, got 1');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2 }, [[-9, 0], [0, 0]]), 'negative padding is larger');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2, rhsDilation: [0, 1] }), 'rhsDilation', 'integers >= 1');
  assertThrowsMentioning(t, () => cg(x, w, { dimensionNumbers: ['NCHW', 'OIHW'] as never }), 'must be length 3');
  assertThrowsMentioning(t, () => cg(x, w, { dimensionNumbers: ['NCHW', 'OIHW', 'NCWX'] }), 'same set of spatial characters');
  assertThrowsMentioning(t, () => cg(x, w, { dimensionNumbers: ['NCHH', 'OIHW', 'NCHW'] }), "dimensionNumbers[0]", 'duplicate');
  assertThrowsMentioning(t, () => cg(x, jnp.zeros([6, 2, 3, 3], { dtype: 'float16' })), 'same dtype', 'float32 and float16');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2, strides: [1, 1] } as never), 'strides');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2, precision: 'turbo' }), 'lax.convGeneralDilated', 'precision', 'turbo');
  assertThrowsMentioning(t, () => cg(x, w, { featureGroupCount: 2, preferredElementType: 'float128' as never }), 'lax.convGeneralDilated', 'float128');
  assertThrowsMentioning(t, () => jnp.convolve(jnp.zeros([2, 2]), jnp.zeros([2])), 'jnp.convolve', '1-dimensional');
  assertThrowsMentioning(t, () => jnp.correlate(jnp.zeros([0]), jnp.zeros([2])), 'jnp.correlate', 'cannot be empty');
  assertThrowsMentioning(t, () => jnp.convolve(jnp.zeros([3]), jnp.zeros([2]), 'circular' as never), "mode must be one of ['full', 'same', 'valid']");
});
