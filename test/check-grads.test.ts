// The check_grads catalogue: every differentiable primitive (and the jnp
// compositions people differentiate most) checked to second order in forward
// and reverse mode against float64 central differences on the reference
// interpreter (test/helpers/check-grads.ts, a port of JAX's check_grads).
// Inputs are float64 and kept away from kinks and branch cuts; functions
// whose derivative is discontinuous at the chosen point (ties of max, a zero
// update of scatter_mul) are checked to first order only, as the
// second-order numerical derivative does not exist there.
import test from 'ava';
import type { Array } from '../lib/core/array.js';
import { type DotDimensionNumbers, abstractEval } from '../lib/core/primitives.js';
import * as jax from '../lib/index.js';
import { bind1 } from '../lib/core/bind.js';
import { type CheckGradsOptions, Rng, checkGrads } from './helpers/check-grads.js';
import { emulatorSubset } from './helpers/emulator.js';

// 64-bit on for the whole file, as JAX's tests run with jax_enable_x64: it tests float64 arguments, checked at float64 tolerances.
// What x64 off (the default) does to float64 requests is config.test.ts's subject.
jax.config.update('jaxEnableX64', true);

const { numpy: jnp, lax } = jax;

const rng = new Rng(42);
/** A float64 array of `shape` with values uniform in [lo, hi). */
const rand = (shape: number[], lo = -2, hi = 2): Array => {
  const n = shape.reduce((a, b) => a * b, 1);
  return jnp.array(globalThis.Array.from({ length: n }, () => lo + (hi - lo) * rng.uniform()), { dtype: 'float64' }).reshape(shape);
};
const f64 = (data: number[], shape?: number[]): Array => {
  const a = jnp.array(data, { dtype: 'float64' });
  return shape ? a.reshape(shape) : a;
};
const i32 = (data: number[] | number[][]): Array => jnp.array(data, { dtype: 'int32' });
/** Values away from 0 with both signs. */
const signed = (shape: number[], lo = 0.3, hi = 2): Array => {
  const n = shape.reduce((a, b) => a * b, 1);
  return f64(globalThis.Array.from({ length: n }, (_, i) => (i % 2 ? -1 : 1) * (lo + (hi - lo) * rng.uniform())), shape);
};

type Fn = (...args: Array[]) => unknown;

/** sin(x) * y with its derivative as a custom jvp rule, and as custom vjp rules. */
const customSinMul = jax.customJvp((x: Array, y: Array) => jnp.multiply(jnp.sin(x), y));
customSinMul.defjvp(([x, y]: Array[], [dx, dy]: Array[]) => [customSinMul(x, y), jnp.add(jnp.multiply(jnp.multiply(jnp.cos(x), dx), y), jnp.multiply(jnp.sin(x), dy))]);
const customSinMulVjp = jax.customVjp((x: Array, y: Array) => jnp.multiply(jnp.sin(x), y));
customSinMulVjp.defvjp(
  (x: Array, y: Array) => [customSinMulVjp(x, y), [x, y]],
  ([x, y]: Array[], g: Array) => [jnp.multiply(jnp.multiply(jnp.cos(x), g), y), jnp.multiply(jnp.sin(x), g)],
);
interface Case {
  name: string;
  fn: Fn;
  args: () => Array[];
  options?: CheckGradsOptions;
}

const cases: Case[] = [
  // ---- elementwise unary ----
  { name: 'neg', fn: (x) => lax.neg(x), args: () => [rand([3])] },
  { name: 'exp', fn: (x) => jnp.exp(x), args: () => [rand([2, 3])] },
  { name: 'exp2', fn: (x) => jnp.exp2(x), args: () => [rand([3])] },
  { name: 'log', fn: (x) => jnp.log(x), args: () => [rand([2, 3], 0.5, 3)] },
  { name: 'expm1', fn: (x) => jnp.expm1(x), args: () => [rand([3])] },
  { name: 'log1p', fn: (x) => jnp.log1p(x), args: () => [rand([3], -0.5, 2)] },
  { name: 'tanh', fn: (x) => jnp.tanh(x), args: () => [rand([4])] },
  { name: 'logistic', fn: (x) => lax.logistic(x), args: () => [rand([4], -3, 3)] },
  { name: 'sin', fn: (x) => jnp.sin(x), args: () => [rand([3])] },
  { name: 'cos', fn: (x) => jnp.cos(x), args: () => [rand([3])] },
  { name: 'tan', fn: (x) => jnp.tan(x), args: () => [rand([3], -1, 1)] },
  { name: 'asin', fn: (x) => jnp.arcsin(x), args: () => [rand([3], -0.8, 0.8)] },
  { name: 'acos', fn: (x) => jnp.arccos(x), args: () => [rand([3], -0.8, 0.8)] },
  { name: 'atan', fn: (x) => jnp.arctan(x), args: () => [rand([3])] },
  { name: 'sinh', fn: (x) => jnp.sinh(x), args: () => [rand([3])] },
  { name: 'cosh', fn: (x) => jnp.cosh(x), args: () => [rand([3])] },
  { name: 'asinh', fn: (x) => jnp.arcsinh(x), args: () => [rand([3])] },
  { name: 'acosh', fn: (x) => jnp.arccosh(x), args: () => [rand([3], 1.5, 3)] },
  { name: 'atanh', fn: (x) => jnp.arctanh(x), args: () => [rand([3], -0.8, 0.8)] },
  { name: 'sqrt', fn: (x) => jnp.sqrt(x), args: () => [rand([3], 0.5, 3)] },
  { name: 'rsqrt', fn: (x) => lax.rsqrt(x), args: () => [rand([3], 0.5, 3)] },
  { name: 'cbrt', fn: (x) => jnp.cbrt(x), args: () => [signed([4], 0.5, 3)] },
  { name: 'abs', fn: (x) => jnp.abs(x), args: () => [signed([4])] },
  { name: 'erf', fn: (x) => lax.erf(x), args: () => [rand([4])] },
  { name: 'square', fn: (x) => jnp.square(x), args: () => [rand([3])] },
  { name: 'integer_pow 3 and -2', fn: (x) => jnp.add(lax.integerPow(x, 3), lax.integerPow(x, -2)), args: () => [signed([4], 0.5, 2)] },
  { name: 'reduce_precision', fn: (x) => jnp.sin(lax.reducePrecision(x, 11, 40)), args: () => [rand([3])] },
  { name: 'copy', fn: (x) => jnp.multiply(lax.copy(x), x), args: () => [rand([3])] },
  {
    name: 'sign, floor, ceil, round (zero derivatives)',
    fn: (x) => jnp.add(jnp.add(jnp.multiply(jnp.sign(x), x), jnp.multiply(jnp.floor(x), x)), jnp.multiply(jnp.ceil(x), jnp.round(x))),
    args: () => [f64([-1.7, -0.4, 0.3, 1.6, 2.2])],
  },

  // ---- elementwise binary (including rank-0 operands, which broadcast) ----
  { name: 'add and sub with a scalar operand', fn: (x, s) => jnp.multiply(lax.add(x, s), lax.sub(s, x)), args: () => [rand([3]), rand([])] },
  { name: 'mul', fn: (x, y) => lax.mul(x, y), args: () => [rand([2, 3]), rand([2, 3])] },
  { name: 'mul by a scalar operand', fn: (x, s) => lax.mul(s, x), args: () => [rand([3]), rand([])] },
  { name: 'div', fn: (x, y) => lax.div(x, y), args: () => [rand([3]), signed([3], 0.5, 2)] },
  { name: 'div of a scalar by an array', fn: (s, y) => lax.div(s, y), args: () => [rand([]), signed([3], 0.5, 2)] },
  { name: 'rem', fn: (x, y) => lax.rem(x, y), args: () => [f64([2.3, 5.1, -3.7]), f64([1.5, 2.2, 1.6])] },
  { name: 'pow', fn: (x, y) => lax.pow(x, y), args: () => [rand([3], 0.5, 2), rand([3], -1.5, 1.5)] },
  { name: 'pow with a scalar exponent', fn: (x, y) => lax.pow(x, y), args: () => [rand([3], 0.5, 2), f64([1.7]).reshape([])] },
  { name: 'max and min', fn: (x, y) => jnp.add(jnp.maximum(x, y), jnp.multiply(jnp.minimum(x, y), x)), args: () => [f64([0.1, 1.2, -0.7, 2.0]), f64([0.9, -0.4, 0.5, 1.1])] },
  { name: 'max with ties (even split)', fn: (x, y) => jnp.maximum(x, y), args: () => [f64([1, 2, 3]), f64([1, 0, 3])], options: { order: 1 } },
  { name: 'atan2', fn: (x, y) => jnp.arctan2(x, y), args: () => [rand([4]), signed([4], 0.5, 2)] },

  // ---- select, clamp, conversions ----
  { name: 'select_n via where', fn: (x, y) => jnp.where(jnp.greater(x, 0), jnp.sin(x), jnp.multiply(y, x)), args: () => [signed([4]), rand([4])] },
  {
    name: 'select_n with an int32 predicate and three cases',
    fn: (a, b, c) => lax.selectN(i32([0, 2, 1, 2]), a, jnp.multiply(b, b), jnp.exp(c)),
    args: () => [rand([4]), rand([4]), rand([4])],
  },
  { name: 'clamp with scalar bounds', fn: (x) => lax.clamp(-1, x, 1.5), args: () => [f64([-1.8, -0.3, 0.7, 2.4])] },
  {
    name: 'clamp with array bounds (all three differentiated)',
    fn: (lo, x, hi) => lax.clamp(lo, x, hi),
    args: () => [f64([-1, -1, -1, 0.5]), f64([-1.8, -0.3, 2.4, 0.2]), f64([1, 1, 1, 2])],
  },
  { name: 'clip and relu', fn: (x) => jnp.add(jnp.clip(x, -1, 1), jnp.maximum(x, 0)), args: () => [f64([-1.5, -0.4, 0.3, 1.7])] },
  {
    name: 'convert_element_type float64 -> float32 -> float64',
    fn: (x) => jnp.sin(lax.convertElementType(jnp.exp(lax.convertElementType(x, 'float32')), 'float64')),
    args: () => [rand([3])],
    options: { eps: 1e-2, atol: 2e-3, rtol: 2e-3 },
  },

  // ---- structural ----
  { name: 'broadcast_in_dim', fn: (x, w) => jnp.multiply(jnp.broadcastTo(x, [2, 3]), w), args: () => [rand([3]), rand([2, 3])] },
  { name: 'broadcasting of size-1 axes', fn: (x, y) => jnp.multiply(x, y), args: () => [rand([1, 3]), rand([2, 1])] },
  { name: 'reshape and transpose', fn: (x) => jnp.multiply(x.reshape([3, 2]).T, x), args: () => [rand([2, 3])] },
  { name: 'transpose of rank 3', fn: (x) => jnp.sin(jnp.transpose(x, [2, 0, 1])), args: () => [rand([2, 3, 2])] },
  { name: 'squeeze and expandDims', fn: (x) => jnp.expandDims(jnp.square(jnp.squeeze(x, { axis: 0 })), 1), args: () => [rand([1, 3])] },
  { name: 'rev', fn: (x) => jnp.multiply(jnp.flip(x, { axis: 1 }), x), args: () => [rand([2, 3])] },
  { name: 'slice with strides', fn: (x) => jnp.sin(lax.slice(x, [0, 1], [3, 5], [2, 2])), args: () => [rand([4, 5])] },
  { name: 'index with slices and integers', fn: (x) => jnp.exp(x.index(1, [0, null, 2])), args: () => [rand([3, 5])] },
  {
    name: 'pad (negative and interior padding, differentiated padding value)',
    fn: (x, v) => jnp.multiply(lax.pad(x, v, [[1, 2, 1], [-1, 0, 0]]), lax.pad(x, v, [[1, 2, 1], [-1, 0, 0]])),
    args: () => [rand([3, 3]), rand([])],
  },
  { name: 'jnp.pad', fn: (x) => jnp.cos(jnp.pad(x, [[1, 0], [2, 1]])), args: () => [rand([2, 2])] },
  { name: 'concatenate', fn: (x, y) => jnp.concatenate([x, jnp.sin(y), x], { axis: 1 }), args: () => [rand([2, 2]), rand([2, 3])] },
  { name: 'stack', fn: (x, y) => jnp.stack([x, jnp.multiply(x, y)]), args: () => [rand([3]), rand([3])] },
  { name: 'dynamic_slice', fn: (x) => jnp.square(lax.dynamicSlice(x, [1, 2], [2, 2])), args: () => [rand([3, 4])] },
  { name: 'dynamic_update_slice', fn: (x, u) => jnp.sin(lax.dynamicUpdateSlice(x, jnp.exp(u), [1, 1])), args: () => [rand([3, 4]), rand([2, 2])] },

  // ---- gather and scatter ----
  { name: 'gather with repeated indices', fn: (x) => jnp.square(x.index(i32([2, 0, 2]))), args: () => [rand([4, 2])] },
  { name: 'take along an axis', fn: (x) => jnp.take(x, i32([1, 1, 0]), { axis: 1 }), args: () => [rand([2, 3])] },
  { name: 'takeAlongAxis', fn: (x) => jnp.takeAlongAxis(x, i32([[0, 2], [1, 1]]), 1), args: () => [rand([2, 3])] },
  { name: 'sort along each axis', fn: (x) => jnp.add(jnp.sin(jnp.sort(x)), jnp.sort(x, { axis: 0 })), args: () => [rand([3, 4])] },
  { name: 'sort of a payload by two keys', fn: (k, v) => lax.sort([jnp.floor(jnp.multiply(k, 0)), k, v], { numKeys: 2 })[2], args: () => [rand([5]), rand([5])] },
  { name: 'topK', fn: (x) => jnp.exp(lax.topK(x, 3)[0]), args: () => [rand([2, 5])] },
  // linalg: sign-invariant functions of the vectors (squares), the thin QR (its jvp's domain)
  { name: 'lax.linalg.qr', fn: (x) => lax.linalg.qr(x, { fullMatrices: false }), args: () => [rand([4, 3])] },
  { name: 'lax.linalg.eigh', fn: (x) => { const [v, w] = lax.linalg.eigh(x); return [w, jnp.multiply(v, v)]; }, args: () => [rand([3, 3])] },
  { name: 'lax.linalg.svd', fn: (x) => { const [u, s, vh] = lax.linalg.svd(x, { fullMatrices: false }); return [s, jnp.multiply(u, u), jnp.multiply(vh, vh)]; }, args: () => [rand([4, 3])] },
  // linalg (test/linalg-lu.test.ts checks them against JAX): shifted to stay well conditioned
  { name: 'cholesky', fn: (x) => lax.linalg.cholesky(jnp.add(jnp.matmul(x, jnp.swapaxes(x, 0, 1)), jnp.multiply(jnp.eye(3), 3))), args: () => [rand([3, 3])] },
  { name: 'triangular_solve', fn: (a, b) => lax.linalg.triangularSolve(jnp.add(a, jnp.multiply(jnp.eye(3), 5)), b, { leftSide: true, lower: true }), args: () => [rand([3, 3]), rand([3, 2])] },
  { name: 'lu', fn: (x) => lax.linalg.lu(jnp.add(x, jnp.multiply(jnp.eye(3), 5)))[0], args: () => [rand([3, 3])] },
  { name: 'argmax then takeAlongAxis', fn: (x) => jnp.takeAlongAxis(x, jnp.expandDims(jnp.argmax(x, { axis: 1 }), 1), 1), args: () => [f64([0.1, 0.9, 0.4, 1.5, -0.2, 0.3], [2, 3])] },
  { name: 'take with out-of-bounds indices filled (fill mode)', fn: (x) => jnp.take(jnp.sin(x), i32([4, 1, -9]), { mode: 'fill', fillValue: 2 }), args: () => [rand([3])] },
  { name: 'scatter_add in clip mode with an out-of-bounds index', fn: (x, u) => x.at(i32([7, 0, 2])).add(jnp.exp(u), { mode: 'clip' }), args: () => [rand([4]), rand([3])] },
  { name: 'scatter (at.set) with unique indices', fn: (x, u) => jnp.sin(x.at(i32([0, 3])).set(u)), args: () => [rand([5]), rand([2])] },
  { name: 'scatter (at.set) with repeated indices', fn: (x, u) => x.at(i32([1, 3, 1])).set(jnp.exp(u)), args: () => [rand([5]), rand([3])] },
  { name: 'scatter_add (at.add) with repeated indices', fn: (x, u) => jnp.sin(x.at(i32([1, 3, 1])).add(u)), args: () => [rand([5]), rand([3])] },
  { name: 'scatter_add of rows', fn: (x, u) => x.at(i32([0, 2, 0])).add(u), args: () => [rand([3, 2]), rand([3, 2])] },
  { name: 'scatter_mul (at.multiply) with repeated indices', fn: (x, u) => x.at(i32([1, 3, 1])).multiply(u), args: () => [rand([5]), signed([3], 0.5, 2)] },
  {
    name: 'scatter_mul with a zero update',
    fn: (x, u) => x.at(i32([1, 3, 1])).multiply(u),
    args: () => [rand([5]), f64([0, 1.3, -0.7])],
    options: { order: 1 },
  },
  { name: 'scatter_max (at.max) with repeated indices', fn: (x, u) => x.at(i32([1, 3, 1])).max(u), args: () => [f64([0.1, 0.2, 0.3, 1.5, 0.5]), f64([0.7, -0.4, 1.1])] },
  { name: 'scatter_min (at.min) with repeated indices', fn: (x, u) => x.at(i32([1, 3, 1, 0])).min(u), args: () => [f64([0.1, 0.2, 0.3, 1.5, 0.5]), f64([0.7, -0.4, -1.1, 0.6])] },

  // ---- reductions and scans ----
  { name: 'reduce_sum over an axis', fn: (x) => jnp.sum(jnp.square(x), { axis: 0 }), args: () => [rand([3, 2])] },
  { name: 'mean', fn: (x) => jnp.mean(jnp.exp(x), { axis: 1, keepdims: true }), args: () => [rand([2, 3])] },
  { name: 'reduce_prod (odd length)', fn: (x) => jnp.prod(x, { axis: 1 }), args: () => [signed([2, 5], 0.5, 1.5)] },
  { name: 'reduce_prod over all axes', fn: (x) => jnp.prod(x), args: () => [signed([2, 3], 0.5, 1.5)] },
  { name: 'reduce_max and reduce_min', fn: (x) => jnp.concatenate([jnp.max(x, { axis: 1 }), jnp.min(jnp.sin(x), { axis: 0 })]), args: () => [f64([0.1, 0.9, 0.4, 1.5, -0.2, 0.3], [2, 3])] },
  { name: 'reduce_max with ties (even split)', fn: (x) => jnp.max(x, { axis: 1 }), args: () => [f64([1, 3, 3, 2, 2, 0], [2, 3])], options: { order: 1 } },
  { name: 'cumsum', fn: (x) => jnp.cumsum(jnp.square(x), { axis: 1 }), args: () => [rand([2, 4])] },
  { name: 'cumsum reversed', fn: (x) => lax.cumsum(jnp.sin(x), { axis: 0, reverse: true }), args: () => [rand([4, 2])] },
  { name: 'cumprod', fn: (x) => jnp.cumprod(x), args: () => [signed([5], 0.5, 1.5)] },
  { name: 'cumprod reversed', fn: (x) => lax.cumprod(x, { axis: 1, reverse: true }), args: () => [signed([2, 4], 0.5, 1.5)] },
  { name: 'cummax', fn: (x) => lax.cummax(x, { axis: 0 }), args: () => [f64([0.3, -0.2, 1.1, 0.5, 1.7, 0.9, 2.0])] },
  { name: 'cummin reversed', fn: (x) => lax.cummin(x, { axis: 1, reverse: true }), args: () => [f64([0.3, -0.2, 1.1, 0.5, 1.7, 0.9], [2, 3])] },

  // ---- dot_general ----
  { name: 'matmul', fn: (a, b) => jnp.matmul(a, b), args: () => [rand([2, 3]), rand([3, 4])] },
  { name: 'matrix-vector and vector dot', fn: (a, v) => jnp.dot(v, jnp.matmul(a, v)), args: () => [rand([3, 3]), rand([3])] },
  { name: 'batched matmul', fn: (a, b) => jnp.matmul(a, b), args: () => [rand([2, 2, 3]), rand([2, 3, 2])] },
  { name: 'einsum with batch and contraction', fn: (a, b) => jnp.einsum('bij,bkj->bik', a, b), args: () => [rand([2, 2, 3]), rand([2, 4, 3])] },
  {
    name: 'dot_general with permuted contracting dimensions',
    fn: (a, b) => lax.dotGeneral(a, b, [[[0, 2], [2, 1]], [[], []]] as DotDimensionNumbers),
    args: () => [rand([2, 3, 4]), rand([3, 4, 2])],
  },
  {
    name: 'dot_general with preferredElementType float64 from float32 operands',
    fn: (a, b) => lax.dotGeneral(a, b, [[[1], [0]], [[], []]] as DotDimensionNumbers, { preferredElementType: 'float64' }),
    args: () => [rand([2, 3]).astype('float32'), rand([3, 2]).astype('float32')],
  },
  { name: 'outer', fn: (a, b) => jnp.outer(a, jnp.exp(b)), args: () => [rand([3]), rand([2])] },

  // ---- conv_general_dilated ----
  {
    name: 'convGeneralDilated NHWC with strides, padding, rhs dilation and feature groups',
    fn: (a, b) => lax.convGeneralDilated(a, b, [2, 1], [[1, 0], [0, 1]], { rhsDilation: [1, 2], featureGroupCount: 2, dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }),
    args: () => [rand([1, 4, 3, 4]), rand([2, 2, 2, 4])],
  },

  // ---- compositions ----
  {
    name: 'softmax (max shift through stopGradient)',
    fn: (x) => {
      const shifted = jnp.exp(jnp.subtract(x, lax.stopGradient(jnp.max(x, { axis: -1, keepdims: true }))));
      return jnp.divide(shifted, jnp.sum(shifted, { axis: -1, keepdims: true }));
    },
    args: () => [rand([2, 4])],
  },
  { name: 'logsumexp', fn: (x) => jnp.logsumexp(x, { axis: 1 }), args: () => [rand([2, 4])] },
  { name: 'var and std', fn: (x) => jnp.add(jnp.var(x, { axis: 0 }), jnp.std(x)), args: () => [rand([3, 2])] },
  {
    name: 'two-layer tanh MLP loss',
    fn: (w1, b1, w2, x) => jnp.mean(jnp.square(jnp.matmul(jnp.tanh(jnp.add(jnp.matmul(x, w1), b1)), w2))),
    args: () => [rand([3, 4], -1, 1), rand([4], -1, 1), rand([4, 2], -1, 1), rand([5, 3], -1, 1)],
  },
  {
    name: 'softplus and gelu (tanh approximation)',
    fn: (x) => {
      const softplus = jnp.log1p(jnp.exp(x));
      const inner = jnp.multiply(Math.sqrt(2 / Math.PI), jnp.add(x, jnp.multiply(0.044715, lax.integerPow(x, 3))));
      return jnp.add(softplus, jnp.multiply(jnp.multiply(0.5, x), jnp.add(1, jnp.tanh(inner))));
    },
    args: () => [rand([4])],
  },
  {
    name: 'where over isfinite and comparisons',
    fn: (x) => jnp.where(jnp.logicalAnd(jnp.isfinite(jnp.log(jnp.abs(x))), jnp.lessEqual(x, 1)), jnp.square(x), jnp.sin(x)),
    args: () => [f64([-0.5, 0.4, 1.6, 2.5])],
  },
  { name: 'iota-weighted sum (arange)', fn: (x) => jnp.sum(jnp.multiply(x, jnp.arange(0, 4, 1, { dtype: 'float64' }))), args: () => [rand([4])] },
  {
    name: 'float32: a tanh MLP loss (float32 tolerances against the float64 oracle)',
    fn: (w, x) => jnp.mean(jnp.square(jnp.tanh(jnp.matmul(x, w)))),
    args: () => [rand([3, 2], -1, 1).astype('float32'), rand([4, 3], -1, 1).astype('float32')],
  },
  { name: 'float32: logsumexp', fn: (x) => jnp.logsumexp(x, { axis: 0 }), args: () => [rand([3, 2]).astype('float32')] },
  // remat: the checkpoint primitive (recomputing a named matmul), checkpoint_name, and device_put (an offload's transfer)
  {
    name: 'checkpoint (saveOnlyTheseNames) and checkpoint_name',
    fn: jax.remat((x: Array, w: Array) => jnp.sum(jnp.sin(jax.checkpointName(jnp.matmul(x, w), 'h'))), { policy: jax.checkpointPolicies.saveOnlyTheseNames('h') }),
    args: () => [rand([2, 3]), rand([3, 2])],
  },
  { name: 'checkpoint_name outside remat', fn: (x) => jnp.sin(jax.checkpointName(jnp.multiply(x, x), 'h')), args: () => [rand([3])] },
  // custom derivatives whose rules are the true derivatives (the second order differentiates the rules); custom_vjp is reverse mode only
  { name: 'customJvp (custom_jvp_call)', fn: (x, y) => customSinMul(jnp.exp(x), y), args: () => [rand([3]), rand([3])] },
  { name: 'customVjp (custom_vjp_call, custom_lin)', fn: (x, y) => customSinMulVjp(jnp.exp(x), y), args: () => [rand([3]), rand([3])], options: { modes: ['rev'] } },
  // a debug callback sees the primals and changes no derivative (its callback here records nothing, so nothing prints)
  {
    name: 'debug callback (debug_callback) beside the computation',
    fn: (x) => {
      const y = jnp.sin(x);
      jax.debug.callback(() => {}, y);
      return jnp.multiply(y, x);
    },
    args: () => [rand([3])],
  },
  // (the value comes back before the function returns: a host output would meet the checker's device cotangents, which JAX rejects too)
  {
    name: 'device_put to pinned_host and back',
    fn: (x) => jnp.sin(bind1('device_put', [bind1('device_put', [jnp.multiply(x, x)], { srcKind: 'device', dstKind: 'pinned_host' })], { srcKind: 'pinned_host', dstKind: 'device' })),
    args: () => [rand([3])],
  },
  // control flow: scan (carry, ys, a closed-over weight, reverse), cond (both branches), while (forward mode only, as in JAX)
  {
    name: 'scan with a closed-over weight, carry and ys',
    fn: (w, h0, xs) => lax.scan((h: Array, x: Array) => [jnp.sin(jnp.add(jnp.multiply(h, w), x)), jnp.multiply(h, x)], h0, xs),
    args: () => [rand([2]), rand([2]), rand([3, 2])],
  },
  {
    name: 'reverse scan over a pytree of xs',
    fn: (a, b) => lax.scan((h: Array, x: { a: Array; b: Array }) => [jnp.tanh(jnp.add(jnp.multiply(h, x.a), x.b)), h], f64([0.3, -0.2]), { a, b }, { reverse: true })[1],
    args: () => [rand([3, 2]), rand([3, 2])],
  },
  { name: 'cond, true branch', fn: (x) => lax.cond(jnp.greater(jnp.sum(x), -100), (v: Array) => jnp.sin(jnp.multiply(v, v)), (v: Array) => jnp.exp(v), x), args: () => [rand([3])] },
  { name: 'cond, false branch', fn: (x) => lax.cond(jnp.greater(jnp.sum(x), 100), (v: Array) => jnp.sin(jnp.multiply(v, v)), (v: Array) => jnp.exp(v), x), args: () => [rand([3])] },
  {
    name: 'while (forward mode)',
    fn: (x) => lax.whileLoop((c: [Array, Array]) => jnp.less(c[0], 3), ([i, v]: [Array, Array]) => [jnp.add(i, 1), jnp.sin(jnp.multiply(v, x))] as [Array, Array], [jnp.array(0, { dtype: 'int32' }), x] as [Array, Array])[1],
    args: () => [rand([2], 0.3, 1.5)],
    options: { modes: ['fwd'] },
  },
  { name: 'pytree arguments and outputs', fn: ((p: { w: Array; b: Array }) => ({ y: jnp.add(jnp.multiply(p.w, p.w), p.b), z: [jnp.sin(p.b)] })) as unknown as Fn, args: () => [{ w: rand([3]), b: rand([3]) }] as unknown as Array[] },
];

// The emulated GPU (helpers/emulator.ts) checks every other function to first order only: the second-order checks'
// programs are each new kernels to compile there, and every function still meets the second order on the CPU
for (const [i, c] of cases.entries()) {
  test(`check_grads: ${c.name}`, (t) => {
    checkGrads(t, c.fn, c.args(), emulatorSubset && i % 2 === 1 ? { ...c.options, order: 1 } : c.options);
  });
}

test('the catalogue has at least 60 functions', (t) => {
  t.true(cases.length >= 60, `${cases.length} cases`);
});

/** Primitives whose derivative is zero or undefined everywhere (bitwise, comparisons, index results): nothing to check numerically. */
const NOT_DIFFERENTIABLE = new Set<string>([
  'is_finite', 'not', 'and', 'or', 'xor', 'nextafter', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'iota', 'reduce_and', 'reduce_or',
  'argmax', 'argmin', 'stop_gradient',
  // integer bit operations, and bitcasts (JAX's defjvp_zero: a float result's tangent is zero, numerical differences are not)
  'shift_left', 'shift_right_logical', 'shift_right_arithmetic', 'population_count', 'clz', 'bitcast_convert_type',
  // the tangent map of a custom_vjp function: it appears only in derivatives, and forward mode through it is an error
  'custom_lin',
  // a pure callback has no derivative: differentiating it raises JAX's error (debug-callbacks.test.ts)
  'pure_callback',
]);

test('the catalogue covers every differentiable primitive', (t) => {
  const seen = new Set<string>();
  for (const c of cases) {
    for (const e of jax.makeJaxpr(c.fn as never)(...c.args()).jaxpr.eqns) seen.add(e.primitive);
  }
  const missing = Object.keys(abstractEval).filter((p) => !NOT_DIFFERENTIABLE.has(p) && !seen.has(p));
  t.deepEqual(missing, [], `primitives without a check_grads case: ${missing.join(', ')}`);
});
