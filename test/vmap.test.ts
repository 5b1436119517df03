// jax.vmap: for every primitive (through the lax / jnp functions) the batched
// computation equals a loop over the batch whose per-example results are
// stacked with jnp.stack, with inAxes 0, 1, -1 and null mixed and outAxes 0
// / 1; nested vmap, vmap of jit and jit of vmap; pytrees in and out; a small
// MLP; jnp functions (matmul, einsum, softmax, indexing, .at().set, take,
// cumsum, concatenate, pad, where); sort and topK; JAX's error messages.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import { numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { flatten } from '../lib/core/pytree.js';
import { jvp } from '../lib/transforms/jvp.js';
import { vmap } from '../lib/transforms/vmap.js';
import { type BatchRule, batchingRules } from '../lib/transforms/batching-rules.js';
import { assertArray, assertThrowsMentioning, randomValues, withReference } from './helpers/oracle.js';
import { emulatorSubset } from './helpers/emulator.js';

type Fn = (...args: never[]) => unknown;

// Against the reference interpreter (the emulated GPU's loop, below), float32 dots at float32 precision: a GPU's
// default rounds their operands to tf32, as JAX's does
if (emulatorSubset) jax.config.update('jaxDefaultMatmulPrecision', 'float32');

// Every rule records that it ran; the last hook checks that the tests below reached every primitive's rule.
const exercised = new Set<string>();
const rules = batchingRules as unknown as Record<string, BatchRule<never>>;
for (const [prim, rule] of Object.entries(rules)) {
  rules[prim] = (...args) => {
    exercised.add(prim);
    return rule(...args);
  };
}
test.after('every primitive with operands went through its batching rule', (t) => {
  const missed = Object.keys(rules).filter((p) => p !== 'iota' && !exercised.has(p));
  t.deepEqual(missed, [], `primitives whose batching rule no test reached: ${missed.join(', ')}`);
});
type Axis = number | null;

/** Deterministic data: floats in [lo, hi]; integer dtypes get the values rounded down. */
function rand(shape: number[], seed = 1, lo = -3, hi = 3, dtype: DType = 'float32'): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  let values = randomValues(n, seed, lo, hi);
  if (dtype !== 'float32') values = values.map(Math.floor);
  return lax.reshape(jnp.array(values, { dtype }), shape);
}

/** Element b of x along `axis`. */
function take(x: Array, axis: number, b: number): Array {
  const a = axis < 0 ? axis + x.ndim : axis;
  return lax.squeeze(lax.sliceInDim(x, b, b + 1, 1, a), [a]);
}

/**
 * f on each batch element (arguments sliced per inAxes, whole pytree arguments mapped leaf by leaf), outputs stacked
 * along outAxis. On the emulated GPU (helpers/emulator.ts) the loop runs on the reference interpreter: its per-example
 * slices and ops would each be another kernel to compile there, while the batched program, the subject, still runs on
 * the device.
 */
function loop(f: Fn, args: unknown[], inAxes: Axis[], outAxis: number, size: number): Array[] {
  return emulatorSubset ? withReference(() => loopOnce(f, args, inAxes, outAxis, size)) : loopOnce(f, args, inAxes, outAxis, size);
}

function loopOnce(f: Fn, args: unknown[], inAxes: Axis[], outAxis: number, size: number): Array[] {
  const results: Array[][] = [];
  for (let b = 0; b < size; b++) {
    const sliced = args.map((a, i) => (inAxes[i] === null ? a : jax.tree.map((leaf) => take(leaf as Array, inAxes[i]!, b), a)));
    results.push(flatten((f as (...a: unknown[]) => unknown)(...sliced))[0] as Array[]);
  }
  return results[0]!.map((_, k) => jnp.stack(results.map((r) => r[k]!), { axis: outAxis }));
}

/** Asserts vmap(f, { inAxes, outAxes }) equals the loop, leaf by leaf. */
function check(t: ExecutionContext, name: string, f: Fn, args: unknown[], inAxes: Axis[], outAxes = 0, tol?: number): void {
  const firstMapped = args.findIndex((_, i) => inAxes[i] !== null);
  const leaf = flatten(args[firstMapped])[0][0] as Array;
  const size = leaf.shape[inAxes[firstMapped]! < 0 ? inAxes[firstMapped]! + leaf.ndim : inAxes[firstMapped]!]!;
  const actual = flatten(vmap(f, { inAxes, outAxes })(...(args as never[])))[0];
  const expected = loop(f, args, inAxes, outAxes, size);
  t.is(actual.length, expected.length, `${name}: number of outputs`);
  expected.forEach((e, k) => {
    const floating = e.dtype.startsWith('float');
    assertArray(t, actual[k], e, { message: `${name} (inAxes ${JSON.stringify(inAxes)}, outAxes ${outAxes}) output ${k}`, tol: floating ? (tol ?? 2e-6) : 0 });
  });
}

/** An in-axis for argument i of test case k: the axis mixtures cycle so every rule sees batch dims at the front, inside and at the end. */
const AXES: Axis[][] = [[0, 0, 0], [1, -1, 0], [-1, null, 1], [null, 1, -1], [0, 1, null]];

// ---- elementwise ----

const UNARY: [string, (x: Array) => Array, number, number, DType?][] = [
  ['neg', lax.neg, -3, 3], ['sign', lax.sign, -3, 3], ['floor', lax.floor, -3, 3], ['ceil', lax.ceil, -3, 3],
  ['round', (x) => lax.round(x), -3, 3], ['round even', (x) => lax.round(x, 'to_nearest_even'), -3, 3],
  ['isFinite', lax.isFinite, -3, 3], ['exp', lax.exp, -3, 3], ['exp2', lax.exp2, -3, 3], ['log', lax.log, 0.1, 4],
  ['expm1', lax.expm1, -3, 3], ['log1p', lax.log1p, -0.5, 3], ['tanh', lax.tanh, -3, 3], ['logistic', lax.logistic, -3, 3],
  ['sin', lax.sin, -3, 3], ['cos', lax.cos, -3, 3], ['tan', lax.tan, -1, 1], ['asin', lax.asin, -0.9, 0.9],
  ['acos', lax.acos, -0.9, 0.9], ['atan', lax.atan, -3, 3], ['sinh', lax.sinh, -3, 3], ['cosh', lax.cosh, -3, 3],
  ['asinh', lax.asinh, -3, 3], ['acosh', lax.acosh, 1.1, 4], ['atanh', lax.atanh, -0.9, 0.9], ['sqrt', lax.sqrt, 0, 4],
  ['rsqrt', lax.rsqrt, 0.1, 4], ['cbrt', lax.cbrt, -3, 3], ['abs', lax.abs, -3, 3], ['erf', lax.erf, -3, 3],
  ['square', lax.square, -3, 3], ['integerPow 3', (x) => lax.integerPow(x, 3), -3, 3], ['integerPow -2', (x) => lax.integerPow(x, -2), 0.5, 3],
  ['reducePrecision', (x) => lax.reducePrecision(x, 5, 10), -3, 3], ['copy', lax.copy, -3, 3], ['stopGradient', lax.stopGradient, -3, 3],
  ['convertElementType', (x) => lax.convertElementType(x, 'int32'), -9, 9],
  ['bitwiseNot int32', lax.bitwiseNot, -50, 50, 'int32'], ['abs int32', lax.abs, -50, 50, 'int32'],
  ['populationCount int16', lax.populationCount, -300, 300, 'int16'], ['clz uint8', lax.clz, 0, 255, 'uint8'],
  ['bitcastConvertType float32 to int32', (x) => lax.bitcastConvertType(x, 'int32'), -3, 3],
  ['bitcastConvertType float32 to uint8 (a trailing axis)', (x) => lax.bitcastConvertType(x, 'uint8'), -3, 3],
];

test('unary primitives: vmap equals the loop', (t) => {
  UNARY.forEach(([name, f, lo, hi, dtype], k) => {
    const x = rand([4, 3], k + 1, lo, hi, dtype ?? 'float32');
    const inAxis = [0, 1, -1][k % 3]!;
    check(t, name, f as Fn, [x], [inAxis], k % 2);
  });
});

const BINARY: [string, (x: Array, y: Array) => Array, number, number, DType?][] = [
  ['add', lax.add, -3, 3], ['sub', lax.sub, -3, 3], ['mul', lax.mul, -3, 3], ['div', lax.div, 0.5, 3],
  ['rem', lax.rem, 0.5, 5], ['pow', lax.pow, 0.5, 2], ['max', lax.max, -3, 3], ['min', lax.min, -3, 3],
  ['atan2', lax.atan2, -3, 3], ['nextafter', lax.nextafter, -3, 3],
  ['eq', lax.eq, -2, 2, 'int32'], ['ne', lax.ne, -2, 2, 'int32'], ['lt', lax.lt, -3, 3], ['le', lax.le, -2, 2, 'int32'],
  ['gt', lax.gt, -3, 3], ['ge', lax.ge, -3, 3],
  ['add int32', lax.add, -50, 50, 'int32'], ['mul int32', lax.mul, -50, 50, 'int32'], ['rem int32', lax.rem, 1, 20, 'int32'],
  ['and int32', lax.bitwiseAnd, -50, 50, 'int32'], ['or int32', lax.bitwiseOr, -50, 50, 'int32'], ['xor int32', lax.bitwiseXor, -50, 50, 'int32'],
  ['max int32', lax.max, -50, 50, 'int32'],
  ['shiftLeft int32', lax.shiftLeft, -40, 40, 'int32'], ['shiftRightLogical int8', lax.shiftRightLogical, -10, 10, 'int8'],
  ['shiftRightArithmetic int16', lax.shiftRightArithmetic, -20, 20, 'int16'],
];

test('binary primitives: both batched, one batched, batch dims that differ', (t) => {
  BINARY.forEach(([name, f, lo, hi, dtype], k) => {
    const d = dtype ?? 'float32';
    const [ax, ay] = AXES[k % AXES.length]!;
    // arguments laid out so the mapped axis has size 4 wherever inAxes puts it
    const shapeFor = (axis: Axis) => (axis === null ? [3, 2] : axis === 0 ? [4, 3, 2] : axis === 1 || axis === -2 ? [3, 4, 2] : [3, 2, 4]);
    const x = rand(shapeFor(ax!), 2 * k + 1, lo, hi, d);
    const y = rand(shapeFor(ay!), 2 * k + 2, lo, hi, d);
    const axes: Axis[] = [ax!, ay!];
    if (axes.every((a) => a === null)) return;
    check(t, name, f as Fn, [x, y], axes, k % 2);
  });
});

test('binary primitives with scalars: per-example scalars meet arrays, JS numbers meet tracers', (t) => {
  const x = rand([4, 3], 1);
  const s = rand([4], 2);
  check(t, 'batched scalar + batched array', (a: Array, b: Array) => lax.add(a, b), [s, x], [0, 0]);
  check(t, 'batched array * batched scalar', (a: Array, b: Array) => lax.mul(a, b), [rand([3, 4], 7), s], [1, 0], 1);
  check(t, 'unbatched rank-0 array - batched', (a: Array, b: Array) => lax.sub(a, b), [jnp.array(2.5), x], [null, -1]);
  check(t, 'batched scalar / unbatched array', (a: Array, b: Array) => lax.div(a, b), [s, rand([3], 3, 1, 2)], [0, null]);
  check(t, 'batched scalar vs unbatched scalar', (a: Array, b: Array) => lax.max(a, b), [s, jnp.array(0.5)], [0, null]);
  check(t, 'JS number operand', (a: Array) => lax.pow(lax.abs(a), 2), [x], [1]);
  check(t, 'jnp broadcasting', (a: Array, b: Array) => jnp.add(a, b), [rand([4, 3, 1], 4), rand([2, 4], 5)], [0, 1]);
  check(t, 'int32 scalar compare', (a: Array) => lax.lt(a, 3), [rand([5, 2], 6, -9, 9, 'int32')], [0]);
});

test('select_n: predicate batched or not, scalar predicates, int32 predicate with 3 cases', (t) => {
  const p = lax.gt(rand([4, 3], 1), 0);
  const x = rand([4, 3], 2);
  const y = rand([3, 4], 3);
  check(t, 'all batched', (c: Array, a: Array, b: Array) => lax.select(c, a, b), [p, x, y], [0, 0, 1]);
  check(t, 'predicate unbatched', (c: Array, a: Array, b: Array) => lax.select(c, a, b), [lax.gt(rand([3], 4), 0), x, y], [null, 0, -1], 1);
  check(t, 'only predicate batched', (c: Array, a: Array, b: Array) => lax.select(c, a, b), [p, rand([3], 5), rand([3], 6)], [0, null, null]);
  check(t, 'batched scalar predicate', (c: Array, a: Array, b: Array) => lax.select(c, a, b), [lax.gt(rand([4], 7), 0), x, rand([3], 8)], [0, 0, null]);
  check(t, 'unbatched scalar predicate', (c: Array, a: Array, b: Array) => lax.select(c, a, b), [jnp.array(true), rand([3], 8), x], [null, null, 0]);
  const which = lax.convertElementType(lax.floor(rand([4, 3], 9, 0, 2.99)), 'int32');
  check(t, 'selectN int32', (w: Array, a: Array, b: Array, c: Array) => lax.selectN(w, a, b, c), [which, x, rand([3], 10), rand([3, 4], 11)], [0, 0, null, 1]);
});

test('clamp: bounds scalar, batched, unbatched; operand unbatched', (t) => {
  const x = rand([4, 3], 1);
  check(t, 'scalar bounds', (a: Array) => lax.clamp(-1, a, 1), [x], [0]);
  check(t, 'batched bounds', (lo: Array, a: Array, hi: Array) => lax.clamp(lo, a, hi), [rand([4], 2, -2, 0), x, rand([3, 4], 3, 0, 2)], [0, 0, 1]);
  check(t, 'operand unbatched', (lo: Array, a: Array) => lax.clamp(lo, a, 2), [rand([4, 3], 4, -2, 0), rand([3], 5)], [0, null]);
  check(t, 'int32', (a: Array) => lax.clamp(-5, a, 5), [rand([4, 3], 6, -9, 9, 'int32')], [1]);
});

// ---- structural ----

test('structural primitives: reshape, transpose, broadcast_in_dim, squeeze, expandDims, rev, slice', (t) => {
  const x = rand([2, 3, 4], 1);
  for (const [i, axis] of [0, 1, -1].entries()) {
    const out = i % 2;
    check(t, 'reshape', (a: Array) => lax.reshape(a, [a.size]), [x], [axis], out);
    check(t, 'reshape with dimensions', (a: Array) => lax.reshape(a, [a.size], [1, 0]), [x], [axis], out);
    check(t, 'transpose', (a: Array) => lax.transpose(a, [1, 0]), [x], [axis], out);
    check(t, 'broadcastInDim', (a: Array) => lax.broadcastInDim(a, [a.shape[0]!, 5, a.shape[1]!], [0, 2]), [x], [axis], out);
    check(t, 'broadcastInDim of size-1 axes', (a: Array) => lax.broadcastInDim(lax.sliceInDim(a, 0, 1, 1, 1), [a.shape[0]!, 3], [0, 1]), [x], [axis], out);
    check(t, 'squeeze', (a: Array) => lax.squeeze(lax.sliceInDim(a, 1, 2, 1, 0), [0]), [x], [axis], out);
    check(t, 'expandDims', (a: Array) => lax.expandDims(a, [0, 2]), [x], [axis], out);
    check(t, 'rev', (a: Array) => lax.rev(a, [0, 1]), [x], [axis], out);
    check(t, 'slice', (a: Array) => lax.slice(a, [0, 1], [a.shape[0]!, a.shape[1]!], [2, 1]), [x], [axis], out);
  }
  check(t, 'broadcast of a per-example scalar', (a: Array) => lax.broadcast(a, [2, 3]), [rand([4], 2)], [0], 1);
});

test('pad: unbatched and batched padding values, negative and interior padding', (t) => {
  const x = rand([3, 4], 1);
  const config: [number, number, number][] = [[1, 2, 1], [-1, 1, 0]];
  check(t, 'unbatched value', (a: Array) => lax.pad(a, 0.5, [config[0]!]), [x], [1]);
  check(t, 'unbatched value, batch dim 0', (a: Array) => lax.pad(a, -1, [config[1]!]), [x], [0], 1);
  check(t, 'batched value', (a: Array, v: Array) => lax.pad(a, v, [config[0]!]), [x, rand([4], 2)], [1, 0]);
  check(t, 'batched value, unbatched operand', (a: Array, v: Array) => lax.pad(a, v, config), [x, rand([5], 3)], [null, 0]);
  check(t, 'int32 batched value', (a: Array, v: Array) => lax.pad(a, v, [[2, 1, 2]]), [rand([4, 3], 4, -9, 9, 'int32'), rand([4], 5, -9, 9, 'int32')], [0, 0]);
});

test('concatenate: batched and unbatched operands', (t) => {
  const x = rand([4, 2, 3], 1);
  const y = rand([2, 5, 4], 2);
  const z = rand([2, 1], 3);
  check(t, 'mixed', (a: Array, b: Array, c: Array) => lax.concatenate([a, b, c], 1), [x, y, z], [0, -1, null]);
  check(t, 'axis 0', (a: Array, b: Array) => lax.concatenate([a, b], 0), [rand([3, 4], 4), rand([4, 2], 5)], [1, 0], 1);
});

// ---- reductions and scans ----

test('reductions, argmax/argmin and cumulative ops shift their axes', (t) => {
  const x = rand([3, 4, 5], 1);
  const bools = lax.gt(x, 0);
  const ints = rand([3, 4, 5], 2, -9, 9, 'int32');
  for (const [i, axis] of [0, 1, -1].entries()) {
    const out = i % 2;
    check(t, 'reduceSum', (a: Array) => lax.reduceSum(a, [1]), [x], [axis], out, 1e-5);
    check(t, 'reduceSum all', (a: Array) => lax.reduceSum(a, [0, 1]), [x], [axis], 0, 1e-5);
    check(t, 'reduceProd', (a: Array) => lax.reduceProd(a, [0]), [x], [axis], out, 1e-5);
    check(t, 'reduceMax', (a: Array) => lax.reduceMax(a, [1]), [x], [axis], out);
    check(t, 'reduceMin', (a: Array) => lax.reduceMin(a, [0]), [x], [axis], out);
    check(t, 'reduceAnd', (a: Array) => lax.reduceAnd(a, [1]), [bools], [axis], out);
    check(t, 'reduceOr', (a: Array) => lax.reduceOr(a, [0, 1]), [bools], [axis]);
    check(t, 'reduceSum int32', (a: Array) => lax.reduceSum(a, [0]), [ints], [axis], out);
    check(t, 'argmax', (a: Array) => lax.argmax(a, 1), [x], [axis], out);
    check(t, 'argmin', (a: Array) => lax.argmin(a, 0), [x], [axis], out);
    check(t, 'argmax int32', (a: Array) => lax.argmax(a, -1), [ints], [axis], out);
    check(t, 'cumsum', (a: Array) => lax.cumsum(a, { axis: 1 }), [x], [axis], out, 1e-5);
    check(t, 'cumprod reverse', (a: Array) => lax.cumprod(a, { axis: 0, reverse: true }), [x], [axis], out, 1e-5);
    check(t, 'cummax', (a: Array) => lax.cummax(a, { axis: 1 }), [x], [axis], out);
    check(t, 'cummin reverse', (a: Array) => lax.cummin(a, { axis: 0, reverse: true }), [x], [axis], out);
    check(t, 'cumsum int32', (a: Array) => lax.cumsum(a, { axis: 0 }), [ints], [axis], out);
    check(t, 'sort', (a: Array) => lax.sort(a, { dimension: 0 }), [x], [axis], out);
    check(t, 'sort two keys with an unbatched payload', (a: Array, b: Array, c: Array) => lax.sort([a, b, c], { dimension: 1, numKeys: 2 }), [ints, x, rand([[4, 5], [3, 5], [3, 4]][i]!, 3)], [axis, axis, null], out);
    check(t, 'topK', (a: Array) => lax.topK(a, 2), [x], [axis], out);
  }
});

// ---- linalg ----

test('lax.linalg qr, eigh, svd: batched along a middle axis, over matrices with batch axes of their own', (t) => {
  const m = rand([3, 2, 4, 3], 7);
  check(t, 'qr', (a: Array) => lax.linalg.qr(a, { fullMatrices: false }), [m], [1], 0, 1e-5);
  check(t, 'eigh', (a: Array) => lax.linalg.eigh(jnp.matmul(jnp.swapaxes(a, -1, -2), a)), [m], [1], 0, 1e-4);
  check(t, 'svd', (a: Array) => lax.linalg.svd(a, { fullMatrices: false }), [m], [1], 0, 1e-4);
});

test('linalg: lu, cholesky, triangular_solve with a batched or unbatched right-hand side', (t) => {
  const a = jnp.add(rand([3, 4, 4], 7), jnp.multiply(jnp.eye(4), 8));
  const b = rand([4, 2], 8);
  check(t, 'lu', (x: Array) => lax.linalg.lu(x), [a], [0], 0, 1e-5);
  check(t, 'cholesky', (x: Array) => lax.linalg.cholesky(jnp.matmul(x, jnp.swapaxes(x, 0, 1), { precision: 'highest' })), [a], [0], 0, 1e-4);
  check(t, 'triangular_solve, b unbatched', (x: Array, y: Array) => lax.linalg.triangularSolve(x, y, { leftSide: true, lower: true }), [a, b], [0, null], 0, 1e-5);
  check(t, 'triangular_solve, both batched on other axes', (x: Array, y: Array) => lax.linalg.triangularSolve(x, y, { leftSide: false, transposeA: true }), [jnp.moveaxis(a, 0, 2), rand([2, 4, 3], 9)], [2, 2], 1, 1e-5);
});

// ---- conv_general_dilated ----

test('conv_general_dilated: lhs, rhs and both batched; feature and batch groups', (t) => {
  const tol = 1e-5;
  const conv = (o: { featureGroupCount?: number; batchGroupCount?: number }) => (l: Array, r: Array) =>
    lax.convGeneralDilated(l, r, [1, 2], [[1, 0], [0, 1]], { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'], ...o });
  check(t, 'plain, both', conv({}), [rand([2, 3, 3, 4, 2], 1), rand([2, 2, 2, 2, 3], 2)], [0, 0], 0, tol);
  check(t, 'plain, lhs', conv({}), [rand([3, 3, 4, 2, 2], 3), rand([2, 2, 2, 3], 4)], [-1, null], 1, tol);
  check(t, 'plain, rhs', conv({}), [rand([3, 3, 4, 2], 5), rand([2, 2, 2, 2, 3], 6)], [null, 2], 0, tol);
  check(t, 'feature groups, rhs', conv({ featureGroupCount: 2 }), [rand([1, 3, 4, 4], 7), rand([2, 2, 2, 2, 4], 8)], [null, 0], 0, tol);
  check(t, 'batch groups, both', conv({ batchGroupCount: 2 }), [rand([2, 2, 3, 4, 2], 9), rand([2, 2, 2, 2, 4], 10)], [0, 0], 0, tol);
});

// ---- dot_general ----

test('dot_general: both batched, one side batched, with and without batch dimensions', (t) => {
  const tol = 1e-5;
  const mm = (a: Array, b: Array) => lax.dotGeneral(a, b, [[[1], [0]], [[], []]]);
  check(t, 'both', mm, [rand([4, 2, 3], 1), rand([3, 4, 5], 2)], [0, 1], 0, tol);
  check(t, 'lhs only', mm, [rand([2, 3, 4], 3), rand([3, 5], 4)], [-1, null], 1, tol);
  check(t, 'lhs only, batch dim between', mm, [rand([2, 4, 3], 3), rand([3, 5], 4)], [1, null], 0, tol);
  check(t, 'rhs only', mm, [rand([2, 3], 5), rand([4, 3, 5], 6)], [null, 0], 0, tol);
  check(t, 'rhs only, batch dim last', mm, [rand([2, 3], 5), rand([3, 5, 4], 6)], [null, 2], 1, tol);
  const bmm = (a: Array, b: Array) => lax.dotGeneral(a, b, [[[2], [1]], [[0], [0]]]);
  check(t, 'batch dims, both', bmm, [rand([2, 4, 3, 5], 7), rand([2, 5, 6, 4], 8)], [1, -1], 0, tol);
  check(t, 'batch dims, lhs', bmm, [rand([2, 3, 5, 4], 9), rand([2, 5, 6], 10)], [-1, null], 1, tol);
  check(t, 'batch dims, rhs', bmm, [rand([2, 3, 5], 11), rand([4, 2, 5, 6], 12)], [null, 0], 0, tol);
  check(t, 'vector dot', (a: Array, b: Array) => lax.dot(a, b), [rand([4, 3], 13), rand([3, 4], 14)], [0, 1], 0, tol);
  check(t, 'preferredElementType', (a: Array, b: Array) => lax.dotGeneral(a, b, [[[0], [0]], [[], []]], { preferredElementType: 'float32' }),
    [rand([3, 4], 15, -9, 9, 'int32'), rand([3, 2], 16, -9, 9, 'int32')], [1, null]);
});

// ---- iota, convert ----

test('iota is never batched; it meets batched values', (t) => {
  const x = rand([4, 5], 1);
  check(t, 'iota + x', (a: Array) => lax.add(a, lax.iota('float32', 5)), [x], [0]);
  check(t, 'broadcastedIota * x', (a: Array) => lax.mul(a, lax.broadcastedIota('float32', [5], 0)), [x], [0], 1);
  check(t, 'convert int32 to float32', (a: Array) => lax.convertElementType(a, 'float32'), [rand([3, 4], 2, -9, 9, 'int32')], [1]);
});

// ---- dynamic slicing ----

test('dynamic_slice: unbatched indices, batched indices (a gather), clamping and negative indices', (t) => {
  const x = rand([4, 6, 5], 1);
  const i = jnp.array([0, 3, 5, -2], { dtype: 'int32' });
  const ds = (a: Array, r: Array | number, c: Array | number) => lax.dynamicSlice(a, [r, c], [2, 3]);
  check(t, 'unbatched indices', (a: Array) => ds(a, 1, 2), [x], [0]);
  check(t, 'unbatched indices, batch dim 1', (a: Array) => ds(a, 4, 1), [rand([6, 4, 5], 2)], [1], 1);
  check(t, 'unbatched array indices', (a: Array, r: Array) => ds(a, r, 1), [x, jnp.array(2, { dtype: 'int32' })], [-1, null]);
  check(t, 'batched index, batched operand', (a: Array, r: Array) => ds(a, r, 1), [x, i], [0, 0]);
  check(t, 'batched indices, unbatched operand', (a: Array, r: Array, c: Array) => ds(a, r, c), [rand([6, 5], 3), i, jnp.array([4, 0, 1, -1], { dtype: 'int32' })], [null, 0, 0]);
  check(t, 'batched index, operand batched in the middle', (a: Array, c: Array) => ds(a, 2, c), [rand([6, 4, 5], 4), i], [1, 0], 1);
  check(t, 'dynamicSliceInDim', (a: Array, r: Array) => lax.dynamicSliceInDim(a, r, 2, 1), [x, i], [0, 0]);
  check(t, 'int32 operand', (a: Array, r: Array) => ds(a, r, r), [rand([4, 6, 5], 5, -9, 9, 'int32'), i], [0, 0]);
});

test('dynamic_update_slice: unbatched indices, batched indices (a scatter), unbatched operand or update', (t) => {
  const x = rand([4, 6, 5], 1);
  const u = rand([4, 2, 3], 2);
  const i = jnp.array([0, 3, 5, -2], { dtype: 'int32' });
  const dus = (a: Array, b: Array, r: Array | number, c: Array | number) => lax.dynamicUpdateSlice(a, b, [r, c]);
  check(t, 'unbatched indices', (a: Array, b: Array) => dus(a, b, 1, 2), [x, u], [0, 0]);
  check(t, 'unbatched indices, unbatched update', (a: Array, b: Array) => dus(a, b, 4, 3), [x, rand([2, 3], 3)], [0, null], 1);
  check(t, 'unbatched indices, unbatched operand', (a: Array, b: Array) => dus(a, b, 0, 0), [rand([6, 5], 4), rand([2, 3, 4], 5)], [null, -1]);
  check(t, 'batched indices', (a: Array, b: Array, r: Array) => dus(a, b, r, 1), [x, u, i], [0, 0, 0]);
  check(t, 'batched indices only', (a: Array, b: Array, r: Array, c: Array) => dus(a, b, r, c), [rand([6, 5], 6), rand([2, 3], 7), i, jnp.array([4, 0, 1, -1], { dtype: 'int32' })], [null, null, 0, 0]);
  check(t, 'batched indices, operand batched last', (a: Array, b: Array, c: Array) => dus(a, b, 2, c), [rand([6, 5, 4], 8), u, i], [-1, 0, 0], 1);
});

// ---- gather / scatter ----

test('gather: batched operand, batched indices, both; clip and fill modes', (t) => {
  const dn = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0] };
  const rows = (mode: 'clip' | 'fill') => (a: Array, idx: Array) => lax.gather(a, idx, dn, [1, 4], { mode });
  const x = rand([3, 5, 4], 1);
  const idx = jnp.array([[[0], [4], [2]], [[1], [1], [3]], [[4], [0], [0]]], { dtype: 'int32' });
  const oob = jnp.array([[[0], [7], [2]], [[-1], [1], [3]], [[4], [0], [9]]], { dtype: 'int32' });
  for (const mode of ['clip', 'fill'] as const) {
    check(t, `operand batched (${mode})`, rows(mode), [x, idx.index(0)], [0, null]);
    check(t, `indices batched (${mode})`, rows(mode), [rand([5, 4], 2), oob], [null, 0], 1);
    check(t, `both batched (${mode})`, rows(mode), [x, oob], [0, 0]);
    check(t, `both batched, other axes (${mode})`, rows(mode), [rand([5, 3, 4], 3), lax.transpose(oob, [1, 0, 2])], [1, 1]);
  }
  // a 2-d index vector with a window on the last axis
  const dn2 = { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0, 1] };
  const windows = (a: Array, ix: Array) => lax.gather(a, ix, dn2, [1, 2]);
  check(t, 'index vectors of length 2', windows, [x, jnp.array([[[0, 1], [3, 2]], [[4, 0], [1, 3]], [[2, 2], [0, 0]]], { dtype: 'int32' })], [0, 0]);
  check(t, 'fill value', (a: Array, ix: Array) => lax.gather(a, ix, dn, [1, 4], { mode: 'fill', fillValue: -7 }), [x, oob], [0, 0]);
});

test('scatter, scatter_add, scatter_mul, scatter_min, scatter_max: batched operand, indices and updates', (t) => {
  const dn = { updateWindowDims: [1], insertedWindowDims: [0], scatterDimsToOperandDims: [0] };
  const x = rand([3, 5, 4], 1);
  const idx = jnp.array([[[0], [4], [2]], [[1], [3], [2]], [[4], [0], [6]]], { dtype: 'int32' });
  const dup = jnp.array([[[0], [4], [0]], [[1], [1], [2]], [[4], [4], [4]]], { dtype: 'int32' });
  const u = rand([3, 3, 4], 2);
  const ops = [['scatter', lax.scatter, idx], ['scatterAdd', lax.scatterAdd, dup], ['scatterMul', lax.scatterMul, dup],
    ['scatterMin', lax.scatterMin, dup], ['scatterMax', lax.scatterMax, dup]] as const;
  for (const [name, op, ix] of ops) {
    const f = (a: Array, i: Array, v: Array) => op(a, i, v, dn);
    check(t, `${name}: all batched`, f, [x, ix, u], [0, 0, 0], 0, 1e-5);
    check(t, `${name}: operand only`, f, [x, ix.index(0), u.index(0)], [0, null, null], 1);
    check(t, `${name}: updates only`, f, [rand([5, 4], 3), ix.index(1), u], [null, null, 0]);
    check(t, `${name}: indices only`, f, [rand([5, 4], 4), ix, u.index(2)], [null, 0, null], 0, 1e-5);
    check(t, `${name}: operand and updates, other axes`, f, [rand([5, 3, 4], 5), ix.index(0), lax.transpose(u, [1, 2, 0])], [1, null, -1], 1);
    check(t, `${name}: indices and updates`, f, [rand([5, 4], 6), lax.transpose(ix, [1, 0, 2]), u], [null, 1, 0], 0, 1e-5);
  }
  check(t, 'scatter clip mode', (a: Array, i: Array, v: Array) => lax.scatter(a, i, v, dn, { mode: 'clip' }), [x, idx, u], [0, 0, 0]);
  check(t, 'scatterAdd int32', (a: Array, i: Array, v: Array) => lax.scatterAdd(a, i, v, dn),
    [rand([3, 5, 4], 7, -9, 9, 'int32'), dup, rand([3, 3, 4], 8, -9, 9, 'int32')], [0, 0, 0]);
});

// ---- jnp functions ----

test('jnp functions: matmul, einsum, softmax, sum, cumsum, concatenate, pad, where', (t) => {
  const x = rand([4, 3, 5], 1);
  const w = rand([5, 2], 2);
  const tol = 1e-5;
  check(t, 'matmul', (a: Array, b: Array) => jnp.matmul(a, b), [x, w], [0, null], 0, tol);
  check(t, 'matmul both batched', (a: Array, b: Array) => jnp.matmul(a, b), [x, rand([5, 4, 2], 3)], [0, 1], 1, tol);
  check(t, 'matmul vector', (a: Array, b: Array) => jnp.matmul(a, b), [rand([3, 4], 4), rand([4, 3], 5)], [-1, 0], 0, tol);
  check(t, 'einsum', (a: Array, b: Array) => jnp.einsum('ij,jk->ki', a, b), [x, w], [0, null], 0, tol);
  check(t, 'einsum both batched', (a: Array, b: Array) => jnp.einsum('ij,kj->ik', a, b), [x, rand([4, 6, 5], 6)], [0, 0], 0, tol);
  const softmax = (a: Array) => {
    const e = jnp.exp(jnp.subtract(a, jnp.max(a, { axis: -1, keepdims: true })));
    return jnp.divide(e, jnp.sum(e, { axis: -1, keepdims: true }));
  };
  check(t, 'softmax', softmax, [x], [1], 1, tol);
  check(t, 'sum with axis', (a: Array) => jnp.sum(a, { axis: 0 }), [x], [-1], 0, tol);
  check(t, 'mean keepdims', (a: Array) => jnp.mean(a, { axis: 1, keepdims: true }), [x], [0], 0, tol);
  check(t, 'cumsum', (a: Array) => jnp.cumsum(a, { axis: 1 }), [x], [0], 0, tol);
  check(t, 'cumsum flattened', (a: Array) => jnp.cumsum(a), [x], [2], 0, tol);
  check(t, 'concatenate', (a: Array, b: Array) => jnp.concatenate([a, b], { axis: 0 }), [x, rand([2, 5], 7)], [0, null]);
  check(t, 'stack', (a: Array, b: Array) => jnp.stack([a, b], { axis: 1 }), [x, rand([4, 3, 5], 8)], [0, 0]);
  check(t, 'pad', (a: Array) => jnp.pad(a, [[1, 2], [0, 1]]), [x], [1]);
  check(t, 'pad reflect', (a: Array) => jnp.pad(a, [[2, 2], [1, 1]], { mode: 'reflect' }), [x], [0]);
  check(t, 'where', (c: Array, a: Array) => jnp.where(c, a, 0), [lax.gt(x, 0), x], [0, 0]);
  check(t, 'where, unbatched condition', (c: Array, a: Array) => jnp.where(c, a, jnp.negative(a)), [lax.gt(rand([3, 5], 9), 0), x], [null, 0]);
  check(t, 'int32 sum and argmax', (a: Array) => [jnp.sum(a, { axis: 1 }), jnp.argmax(a, { axis: 0 })], [rand([4, 3, 5], 10, -9, 9, 'int32')], [0]);
});

test('jnp indexing with arrays, .at().set / .add, take', (t) => {
  const x = rand([4, 6, 5], 1);
  const idx = jnp.array([[0, 5, 2], [1, 1, 3], [5, 0, 0], [2, 4, 1]], { dtype: 'int32' });
  check(t, 'index with a constant array', (a: Array) => a.index(jnp.array([0, 2, 5], { dtype: 'int32' })), [x], [0]);
  check(t, 'index with a batched array', (a: Array, i: Array) => a.index(i), [x, idx], [0, 0]);
  check(t, 'index an unbatched array with batched indices', (a: Array, i: Array) => a.index(null, i), [rand([5, 6], 2), idx], [null, 0], 1);
  check(t, 'index with a slice and an array', (a: Array, i: Array) => a.index([1, 5], i), [rand([6, 4, 5], 3), jnp.array([[0, 4], [1, 1], [3, 2], [4, 0]], { dtype: 'int32' })], [1, 0]);
  check(t, 'at().set scalar', (a: Array, i: Array) => a.at(i).set(100), [x, idx], [0, 0]);
  check(t, 'at().set batched values', (a: Array, i: Array, v: Array) => a.at(i, 2).set(v), [x, jnp.array([[0, 5], [1, 3], [5, 0], [2, 4]], { dtype: 'int32' }), rand([4, 2], 4)], [0, 0, 0]);
  check(t, 'at().add repeated indices', (a: Array, i: Array) => a.at(i).add(1), [x, idx], [0, 0]);
  check(t, 'at().set static index, batched value', (a: Array, v: Array) => a.at(1).set(v), [x, rand([4, 5], 5)], [0, 0]);
  check(t, 'take', (a: Array, i: Array) => jnp.take(a, i, { axis: 1 }), [x, idx], [0, 0]);
  check(t, 'take unbatched indices', (a: Array, i: Array) => jnp.take(a, i, { axis: -1 }), [x, jnp.array([4, 0, 2], { dtype: 'int32' })], [1, null]);
  check(t, 'takeAlongAxis', (a: Array, i: Array) => jnp.takeAlongAxis(a, i, 0), [rand([4, 6], 6), jnp.array([[0, 5, 2, 1, 1, 3], [5, 0, 0, 2, 4, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0]], { dtype: 'int32' })], [0, 0]);
});

// ---- pytrees, MLP, composition ----

test('pytrees in and out: inAxes and outAxes as prefixes', (t) => {
  const params = { w: rand([3, 2], 1), b: rand([2], 2) };
  const xs = rand([4, 3], 3);
  const f = (p: { w: Array; b: Array }, x: Array) => ({ y: jnp.add(jnp.matmul(x, p.w), p.b), pair: [jnp.sum(x), p.b] });
  const out = vmap(f, { inAxes: [null, 0], outAxes: { y: 1, pair: [0, null] } })(params, xs) as { y: Array; pair: [Array, Array] };
  const expected = loop(f as Fn, [params, xs], [null, 0], 0, 4); // leaves in key order: pair[0], pair[1], y
  assertArray(t, out.pair[0], expected[0]!, { message: 'pair[0]', tol: 1e-5 });
  assertArray(t, out.pair[1], params.b, { message: 'pair[1] stays unbatched' });
  assertArray(t, out.y, jnp.transpose(expected[2]!, [1, 0]), { message: 'y with outAxes 1', tol: 1e-5 });

  // a mapped pytree argument with per-leaf axes
  const g = (p: { a: Array; b: Array[] }) => jnp.add(p.a, jnp.multiply(p.b[0]!, p.b[1]!));
  const tree = { a: rand([4, 2], 4), b: [rand([2, 4], 5), rand([4, 2], 6)] };
  const got = vmap(g, { inAxes: [{ a: 0, b: [1, 0] }] })(tree);
  const want = jnp.stack([0, 1, 2, 3].map((k) => g({ a: take(tree.a, 0, k), b: [take(tree.b[0]!, 1, k), take(tree.b[1]!, 0, k)] })));
  assertArray(t, got, want, { message: 'per-leaf inAxes' });
  // outputs that do not depend on the mapped input are broadcast; numbers are outputs too
  const [c, n] = vmap((x: Array) => [jnp.ones([2]), 3])(xs) as [Array, Array];
  assertArray(t, c, { shape: [4, 2], dtype: 'float32', values: new globalThis.Array(8).fill(1) });
  assertArray(t, n, { shape: [4], dtype: 'int32', values: [3, 3, 3, 3] });
});

test('a small MLP forward pass over a batch', (t) => {
  const params = { w1: rand([6, 8], 1, -1, 1), b1: rand([8], 2, -1, 1), w2: rand([8, 3], 3, -1, 1), b2: rand([3], 4, -1, 1) };
  const mlp = (p: typeof params, x: Array) => {
    const h = jnp.tanh(jnp.add(jnp.matmul(x, p.w1), p.b1));
    const logits = jnp.add(jnp.matmul(h, p.w2), p.b2);
    return jnp.subtract(logits, jnp.max(logits));
  };
  const xs = rand([5, 6], 5);
  check(t, 'mlp', mlp as Fn, [params, xs], [null, 0], 0, 1e-5);
  check(t, 'mlp, examples along axis 1', mlp as Fn, [params, jnp.transpose(xs)], [null, 1], 0, 1e-5);
  // per-example parameters too (an ensemble)
  const ensemble = jax.tree.map((p) => jnp.stack([p as Array, jnp.multiply(p as Array, 0.5)]), params) as typeof params;
  check(t, 'ensemble', mlp as Fn, [ensemble, rand([2, 6], 6)], [0, 0], 0, 1e-5);
});

test('nested vmap: outer and inner axes, closures over the outer tracer', (t) => {
  const x = rand([3, 4, 5], 1);
  const y = rand([5, 4], 2);
  const f = (a: Array, b: Array) => jnp.sum(jnp.multiply(a, b));
  // pairwise: over x's axis 0 outside, y's axis 1 inside
  const xs = rand([3, 5], 5);
  const pairwise = vmap((a: Array) => vmap((b: Array) => f(a, b), { inAxes: 1 })(y));
  const got = pairwise(xs) as Array;
  t.deepEqual([...got.shape], [3, 4]);
  const want = jnp.stack([0, 1, 2].map((i) => jnp.stack([0, 1, 2, 3].map((j) => f(take(xs, 0, i), take(y, 1, j))))));
  assertArray(t, got, want, { tol: 1e-5 });
  // vmap(vmap(g)) over two axes of one argument equals the double loop
  const g = (a: Array) => jnp.cumsum(jnp.exp(a));
  const both = vmap(vmap(g, { inAxes: 1, outAxes: 1 }), { inAxes: 0 })(x) as Array;
  const loops = jnp.stack([0, 1, 2].map((i) => jnp.stack([0, 1, 2, 3, 4].map((j) => g(take(take(x, 0, i), 1, j))), { axis: 1 })));
  assertArray(t, both, loops, { tol: 1e-5 });
  // the inner function closes over the outer tracer (it is lifted into the inner trace)
  const closure = vmap((a: Array) => vmap((b: Array) => jnp.add(jnp.multiply(a, 2), b))(y))(rand([3, 4], 3)) as Array;
  t.deepEqual([...closure.shape], [3, 5, 4]);
  check(t, 'nested with gather and dot', vmap((a: Array, i: Array) => jnp.matmul(a.index(i), y), { inAxes: [0, null] }) as Fn,
    [rand([2, 3, 6, 5], 4), jnp.array([5, 0], { dtype: 'int32' })], [0, null], 1, 1e-5);
});

test('vmap of jit, jit of vmap, jit inside vmap inside jit', (t) => {
  const f = (a: Array, b: Array) => jnp.add(jnp.matmul(a, b), jnp.sum(a));
  const x = rand([4, 3, 5], 1);
  const w = rand([5, 2], 2);
  const eager = vmap(f, { inAxes: [0, null] })(x, w) as Array;
  const expected = loop(f as Fn, [x, w], [0, null], 0, 4)[0]!;
  assertArray(t, eager, expected, { tol: 1e-5, message: 'vmap' });
  const jf = jax.jit(f);
  assertArray(t, vmap(jf, { inAxes: [0, null] })(x, w) as Array, expected, { tol: 1e-5, message: 'vmap(jit(f))' });
  t.is(jf.cacheSize, 1, 'jit traced the per-example signature once');
  const jv = jax.jit(vmap(f, { inAxes: [0, null] }));
  assertArray(t, jv(x, w) as Array, expected, { tol: 1e-5, message: 'jit(vmap(f))' });
  assertArray(t, jv(x, w) as Array, expected, { tol: 1e-5, message: 'jit(vmap(f)) cached' });
  t.is(jv.cacheSize, 1);
  const jaxpr = jax.makeJaxpr(vmap(f, { inAxes: [0, null] }))(x, w).toString();
  t.true(jaxpr.includes('dot_general'), jaxpr);
  t.true(jaxpr.includes('f32[4,3,2]'), jaxpr);
  const nested = jax.jit((a: Array, b: Array) => vmap(jf, { inAxes: [1, null], outAxes: 1 })(a, b));
  assertArray(t, nested(jnp.transpose(x, [1, 0, 2]), w) as Array, jnp.transpose(expected, [1, 0, 2]), { tol: 1e-5, message: 'jit(vmap(jit(f)))' });
  // vmap of jit with gather and scatter inside
  const upd = jax.jit((a: Array, i: Array) => a.at(i).add(a.index(i)));
  check(t, 'vmap(jit(scatter))', upd as Fn, [rand([3, 6], 3), jnp.array([[0, 2], [5, 5], [1, 0]], { dtype: 'int32' })], [0, 0]);
});

test('vmap of jvp and jvp of vmap (per-example forward derivatives)', (t) => {
  const f = (a: Array, w: Array) => jnp.sum(jnp.tanh(jnp.matmul(a, w)));
  const x = rand([4, 3], 1, -1, 1);
  const w = rand([3, 2], 2, -1, 1);
  const dx = rand([4, 3], 3);
  const jvpOf = (a: Array, da: Array) => jvp((b: Array) => f(b, w), [a], [da]);
  check(t, 'vmap(jvp(f))', jvpOf as Fn, [x, dx], [0, 0], 0, 1e-5);
  check(t, 'vmap(jvp(f)), examples along axis 1', jvpOf as Fn, [jnp.transpose(x), jnp.transpose(dx)], [1, 1], 0, 1e-5);
  const [ys, dys] = jvp((a: Array) => vmap((b: Array) => f(b, w))(a), [x], [dx]) as [Array, Array];
  const [want, dwant] = loop(jvpOf as Fn, [x, dx], [0, 0], 0, 4);
  assertArray(t, ys, want!, { tol: 1e-5, message: 'jvp(vmap(f)) primal' });
  assertArray(t, dys, dwant!, { tol: 1e-5, message: 'jvp(vmap(f)) tangent' });
});

test('vmap of remat: checkpoint, checkpoint_name and device_put (offloaded residuals) batch', (t) => {
  const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({
    namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['h'], offloadSrc: 'device', offloadDst: 'pinned_host',
  });
  const f = jax.remat((a: Array, w: Array) => jnp.sum(jnp.sin(jnp.matmul(jax.checkpointName(jnp.tanh(a), 'h'), w))), { policy });
  const w = rand([3, 2], 2, -1, 1);
  check(t, 'vmap(remat(f))', f as Fn, [rand([4, 3], 1, -1, 1), w], [0, null], 0, 1e-5);
  check(t, 'vmap(remat(f)), examples along axis 1, w batched too', f as Fn, [rand([3, 4], 3, -1, 1), rand([3, 2, 4], 4, -1, 1)], [1, -1], 0, 1e-5);
  check(t, 'vmap(grad(remat(f)))', jax.grad(f as Fn, { argnums: [0, 1] }) as Fn, [rand([4, 3], 5, -1, 1), w], [0, null], 0, 1e-5);
});

test('vmap of custom derivatives: custom_jvp_call, custom_vjp_call and custom_lin batch', (t) => {
  const plain = (a: Array, w: Array) => jnp.sum(jnp.sin(jnp.matmul(a, w)));
  const f = jax.customJvp(plain);
  f.defjvp(([a, w]: Array[], [da, dw]: Array[]) => [f(a, w), jvp(plain as Fn, [a, w], [da, dw])[1]]);
  const g = jax.customVjp(plain);
  g.defvjp((a: Array, w: Array) => [g(a, w), [a, w]], ([a, w]: Array[], ct: Array) => jax.vjp(plain as Fn, a, w)[1](ct));
  const x = rand([4, 3], 1, -1, 1);
  const w = rand([3, 2], 2, -1, 1);
  check(t, 'vmap(customJvp)', f as Fn, [x, w], [0, null], 0, 1e-5);
  check(t, 'vmap(customVjp), examples along axis 1', g as Fn, [jnp.transpose(x), w], [1, null], 0, 1e-5);
  check(t, 'vmap(grad(customVjp))', jax.grad(g as Fn, { argnums: [0, 1] }) as Fn, [x, w], [0, null], 0, 1e-5);
  // differentiating through the vmap batches the rule (custom_lin under vmap; the cotangent of the unbatched w is summed)
  const through = (h: (a: Array, w: Array) => unknown) => jax.grad((a: Array, v: Array) => jnp.sum(vmap((b: Array) => h(b, v))(a) as Array), { argnums: [0, 1] })(x, w) as Array[];
  const want = through(plain);
  for (const [name, h] of [['customJvp', f], ['customVjp', g]] as const) {
    const got = through(h);
    assertArray(t, got[0], want[0]!, { tol: 1e-5, message: `grad(vmap(${name})) wrt the batched input` });
    assertArray(t, got[1], want[1]!, { tol: 1e-5, message: `grad(vmap(${name})) wrt the unbatched weight` });
  }
});

test('vmap of control flow: scan, while (batched predicate) and cond (batched and unbatched index)', (t) => {
  const scanned = (w: Array, xs: Array) => lax.scan((h: Array, x: Array) => [jnp.tanh(jnp.add(jnp.multiply(h, w), x)), jnp.sum(h)], jnp.zeros([2]), xs);
  check(t, 'vmap(scan), batched xs and consts', scanned as Fn, [rand([3, 2], 1, -1, 1), rand([3, 4, 2], 2, -1, 1)], [0, 0]);
  check(t, 'vmap(scan), xs batched along axis 1', scanned as Fn, [rand([2], 3, -1, 1), rand([4, 3, 2], 4, -1, 1)], [null, 1], 1);
  const loop = (limit: Array, x: Array) => lax.whileLoop((v: Array) => jnp.less(jnp.sum(v), limit), (v: Array) => jnp.add(jnp.multiply(v, 1.5), 0.25), x);
  check(t, 'vmap(while), batched predicate', loop as Fn, [jnp.array([1, 5, 20], { dtype: 'float32' }), rand([3, 2], 5, 0, 1)], [0, 0]);
  check(t, 'vmap(while), unbatched predicate', ((x: Array, y: Array) => lax.whileLoop((c: [Array, Array]) => jnp.less(c[0], 3), ([i, v]: [Array, Array]) => [jnp.add(i, 1), jnp.add(v, y)] as [Array, Array], [jnp.array(0, { dtype: 'int32' }), x] as [Array, Array])) as Fn, [rand([2], 6), rand([3, 2], 7)], [null, 0]);
  const branch = (p: Array, x: Array) => lax.cond(p, (v: Array) => jnp.sin(v), (v: Array) => jnp.negative(v), x);
  check(t, 'vmap(cond), batched predicate', branch as Fn, [jnp.array([true, false, true]), rand([3, 2], 8)], [0, 0]);
  check(t, 'vmap(cond), unbatched predicate', branch as Fn, [jnp.array(false), rand([2, 3], 9)], [null, 1]);
});

test('vmap of host callbacks: debug_callback once per element, pure_callback by its vmapMethod', (t) => {
  // (debug-callbacks.test.ts tests printing; here the rules must equal the per-example loop)
  const seen: number[][] = [];
  const record = (x: Array) => {
    jax.debug.callback((v: Array) => {
      seen.push([...v.dataSync()]);
    }, x);
    return jnp.sin(x);
  };
  const xs = rand([3, 2], 1);
  check(t, 'vmap(debug.callback)', record as Fn, [xs], [0]);
  const rows = [...xs.dataSync()];
  const expected = [[rows[0]!, rows[1]!], [rows[2]!, rows[3]!], [rows[4]!, rows[5]!]];
  // the batched call and the loop each called back once per row, in order
  t.deepEqual(seen, [...expected, ...expected]);
  for (const vmapMethod of ['sequential', 'expand_dims', 'broadcast_all'] as const) {
    const f = (x: Array, y: Array) => jax.pureCallback((a: Array, b: Array) => jnp.add(jnp.multiply(a, 2), b), new jax.ShapeDtypeStruct(x.shape as number[], x.dtype), x, y, { vmapMethod });
    check(t, `vmap(pureCallback) with vmapMethod '${vmapMethod}'`, f as Fn, [rand([4, 2], 2), rand([2], 3)], [0, null]);
  }
});

test('axisSize: no mapped inputs, unbatched outputs are broadcast', (t) => {
  const out = vmap(() => jnp.arange(3), { axisSize: 2 })() as Array;
  assertArray(t, out, { shape: [2, 3], dtype: 'int32', values: [0, 1, 2, 0, 1, 2] });
  const out2 = vmap((a: Array) => jnp.multiply(a, 2), { inAxes: null, axisSize: 3, outAxes: 1 })(jnp.array([1, 2], { dtype: 'int32' })) as Array;
  assertArray(t, out2, { shape: [2, 3], dtype: 'int32', values: [2, 2, 2, 4, 4, 4] });
  const out3 = vmap((a: Array) => a, { axisSize: 4 })(rand([4, 2], 1)) as Array;
  t.deepEqual([...out3.shape], [4, 2]);
});

test('outAxes: null for unbatched outputs, negative axes', (t) => {
  const x = rand([4, 3, 2], 1);
  const [m, c] = vmap((a: Array, b: Array) => [jnp.sin(a), jnp.cos(b)], { inAxes: [0, null], outAxes: [-1, null] })(x, jnp.array([0, 1])) as [Array, Array];
  assertArray(t, m, jnp.transpose(jnp.sin(x), [1, 2, 0]));
  assertArray(t, c, jnp.cos(jnp.array([0, 1])));
});

test('memory: vmap disposes what it made and did not return', (t) => {
  const x = rand([4, 3, 5], 1);
  const w = rand([5, 2], 2);
  const f = vmap((a: Array, b: Array) => jnp.sum(jnp.tanh(jnp.matmul(jnp.transpose(jnp.transpose(a)), lax.add(b, 1))), { axis: 0 }), { inAxes: [1, null], outAxes: -1 });
  f(x, w).dispose(); // compile the kernels first
  const before = jax.liveArrayCount();
  const out = f(x, w);
  t.is(jax.liveArrayCount(), before + 1);
  out.dispose();
  t.false(x.isDisposed);
  t.false(w.isDisposed);
});

test('errors follow JAX', (t) => {
  const x = rand([3, 4], 1);
  const y = rand([2, 4], 2);
  const add = (a: Array, b: Array) => jnp.add(a, b);
  assertThrowsMentioning(t, () => vmap(add)(x, y), 'vmap got inconsistent sizes for array axes to be mapped', 'size 3', 'axis 0 of argument args[0] of type float32[3,4]', 'size 2', 'args[1]');
  assertThrowsMentioning(t, () => vmap(add, { inAxes: [1, 0] })(x, rand([3, 4], 3)), 'inconsistent sizes', 'size 4', 'axis 1 of argument args[0]');
  assertThrowsMentioning(t, () => vmap((a: Array) => a, { axisSize: 5 })(x), 'inconsistent sizes', 'axisSize = 5');
  assertThrowsMentioning(t, () => vmap((a: Array) => a, { inAxes: 2 })(x), 'map its argument along axis 2', 'rank should be at least 3', 'but is only 2');
  assertThrowsMentioning(t, () => vmap((a: Array) => a, { inAxes: -3 })(x), 'along axis -3', 'but is only 2');
  assertThrowsMentioning(t, () => vmap((a: Array) => a, { inAxes: 0 })(3 as never), 'along axis 0', 'but is only 0');
  assertThrowsMentioning(t, () => vmap(add, { inAxes: [null, null] })(x, x), 'at least one non-null value in inAxes');
  assertThrowsMentioning(t, () => vmap(add, { inAxes: [0] })(x, x), 'inAxes.length = 1, args.length = 2');
  assertThrowsMentioning(t, () => vmap(add, { inAxes: [[0, 0], 0] })(x, x), 'inAxes specification must be a tree prefix');
  assertThrowsMentioning(t, () => vmap((a: Array) => [a, a], { outAxes: [0, 0, 0] })(x), 'outAxes specification must be a tree prefix');
  assertThrowsMentioning(t, () => vmap((a: Array) => jnp.sin(a), { outAxes: null })(x), 'mapped output but outAxes is null');
  assertThrowsMentioning(t, () => vmap((a: Array) => jnp.sin(a), { outAxes: 2 })(x), 'outAxes 2 is out of bounds');
  assertThrowsMentioning(t, () => vmap(add, { in_axes: 0 } as never), "unknown option 'in_axes'");
  assertThrowsMentioning(t, () => vmap(add, { inAxes: 0.5 }), 'inAxes must be an int, null');
  assertThrowsMentioning(t, () => vmap(add, { inAxes: { a: 0 } }), 'inAxes must be an int, null, or an array');
  assertThrowsMentioning(t, () => vmap(add, { axisSize: -1 }), 'axisSize must be a non-negative integer');
  // shape errors inside the function name per-example shapes
  assertThrowsMentioning(t, () => vmap((a: Array) => jnp.add(a, jnp.ones([5])))(x), '[4]', '[5]');
  assertThrowsMentioning(t, () => vmap((a: Array) => lax.add(a, jnp.ones([5])))(x), 'lax.add', '[4]', '[5]');
});
