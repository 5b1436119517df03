// One jvp rule per primitive (the table is total: a missing rule fails to
// compile). The rules follow JAX's (jax/_src/lax/*.py): derivatives of
// elementwise math written with the primal output where JAX does; max/min
// and reduce_max/min split the tangent evenly between ties; reduce_prod is
// the jvp of a tree of products and cumprod/cummax/cummin the jvp of an
// associative scan, as in JAX; scatter uses JAX's update-id masks, so
// repeated indices are exact; scatter_min/max share the tangent evenly
// between the operand and updates that attain the result (JAX's averaging).
// scatter_mul goes beyond JAX, which differentiates it only for unique
// indices: the product of the other updates is formed from the product of
// the nonzero ones and the count of zeros, so repeated indices and zeros are
// exact. Every operation applied to a tangent is linear with a transpose
// rule (transpose.ts), which is what makes linearize + transpose (vjp) work.
import { Array } from '../core/array.js';
import { bind, bind1 } from '../core/bind.js';
import { type DType, isFloating } from '../core/dtype.js';
import type { GatherDimensionNumbers, Primitive, PrimitiveParams, ScatterDimensionNumbers, ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import {
  type JvpRule, type Tangent, addTangents, broadcastTo, full, instantiate, jvpFlat, scalar, zerosLike,
} from './jvp.js';
import { convJvp } from './conv-rules.js';
import { checkpointJvp } from './remat-rules.js';
import { eighJvp, qrJvp, svdJvp } from './linalg-jvp.js';
import { choleskyJvp, luJvp, triangularSolveJvp } from './linalg-rules.js';
import { customJvpCallJvp, customLinJvp, customVjpCallJvp } from './custom-derivatives.js';
import { debugCallbackJvp, pureCallbackJvp } from './callbacks.js';
import { condJvp } from './control-flow/cond-rules.js';
import { scanJvp } from './control-flow/scan-rules.js';
import { whileJvp } from './control-flow/while-rules.js';

// ---- primitive helpers (bind directly: no coercion, no tidy scopes) ----

const add = (a: Array, b: Array) => bind1('add', [a, b], {});
const sub = (a: Array, b: Array) => bind1('sub', [a, b], {});
const mul = (a: Array, b: Array) => bind1('mul', [a, b], {});
const div = (a: Array, b: Array) => bind1('div', [a, b], {});
const neg = (a: Array) => bind1('neg', [a], {});
const eq = (a: Array, b: Array) => bind1('eq', [a, b], {});
const c = (value: number, like: Array) => scalar(value, like.dtype);
/** lax.select: `onTrue` where pred, else `onFalse` (select_n's case order is [false, true]). */
const select = (pred: Array, onTrue: Array, onFalse: Array) => bind1('select_n', [pred, onFalse, onTrue], {});
const asDtype = (x: Array, dtype: DType) => bind1('convert_element_type', [x], { newDtype: dtype, weakType: false });
const square = (x: Array) => mul(x, x);
const reduceSum = (x: Array, axes: number[]) => (axes.length ? bind1('reduce_sum', [x], { axes }) : x);
const sliceAxis = (x: Array, axis: number, start: number, limit: number, stride = 1) =>
  bind1('slice', [x], {
    startIndices: x.shape.map((_, i) => (i === axis ? start : 0)),
    limitIndices: x.shape.map((d, i) => (i === axis ? limit : d)),
    strides: x.shape.map((_, i) => (i === axis ? stride : 1)),
  });
const padAxis = (x: Array, value: Array, axis: number, lo: number, hi: number, interior: number) =>
  bind1('pad', [x, value], { paddingConfig: x.shape.map((_, i) => (i === axis ? [lo, hi, interior] : [0, 0, 0])) as [number, number, number][] });

// ---- rule builders ----

/** Primitives whose output does not change to first order (or is not floating): zero tangents. */
function zeroJvp<P extends Primitive>(prim: P): JvpRule<P> {
  return (primals, _tangents, params) => {
    const outs = bind(prim, primals, params);
    return [outs, outs.map(() => null)];
  };
}

/** Linear primitives: the tangent is the primitive applied to the tangents (zeros instantiated). */
function linearJvp<P extends Primitive>(prim: P, linearArgs = 1): JvpRule<P> {
  return (primals, tangents, params) => {
    const outs = bind(prim, primals, params);
    if (tangents.slice(0, linearArgs).every((t) => t === null)) return [outs, outs.map(() => null)];
    const ins = primals.map((p, i) => (i < linearArgs ? instantiate(tangents[i]!, p.aval) : p));
    return [outs, bind(prim, ins, params)];
  };
}

/** Unary elementwise: tangent = d(t, x, y). */
function unaryJvp<P extends Primitive>(prim: P, d: (t: Array, x: Array, y: Array, params: PrimitiveParams[P]) => Array): JvpRule<P> {
  return (primals, tangents, params) => {
    const y = bind1(prim, primals, params);
    const t = tangents[0]!;
    return [[y], [t === null ? null : d(t, primals[0]!, y, params)]];
  };
}

type Partial = (t: Array, x: Array, y: Array, out: Array) => Array;

/** Binary elementwise: the sum of each operand's contribution (a rank-0 operand's broadcast to the output shape). */
function binaryJvp<P extends Primitive>(prim: P, dx: Partial | null, dy: Partial | null): JvpRule<P> {
  return (primals, tangents, params) => {
    const [x, y] = primals as [Array, Array];
    const out = bind1(prim, primals, params);
    let acc: Tangent = null;
    if (tangents[0] && dx) acc = addTangents(acc, broadcastTo(dx(tangents[0], x, y, out), out.shape));
    if (tangents[1] && dy) acc = addTangents(acc, broadcastTo(dy(tangents[1], x, y, out), out.shape));
    return [[out], [acc]];
  };
}

/** JAX's _balanced_eq: 1 where x attains the extremum alone, 0.5 on a tie with y, else 0. */
function balancedEq(x: Array, out: Array, y: Array): Array {
  const shape = out.aval;
  return select(eq(x, out), select(eq(y, out), full(shape, 0.5), full(shape, 1)), full(shape, 0));
}

function replaceZero(x: Array): Array {
  return select(eq(x, c(0, x)), full(x.aval, 1), x);
}

// ---- reductions ----

/** JAX's _reduce_chooser_jvp_rule: the tangent averaged over the locations attaining the extremum. */
function chooserJvp(prim: 'reduce_max' | 'reduce_min'): JvpRule<typeof prim> {
  return ([x], [t], params) => {
    const ans = bind1(prim, [x!], params);
    if (!t) return [[ans], [null]];
    const kept = x!.shape.map((_, i) => i).filter((i) => !params.axes.includes(i));
    const ansB = bind1('broadcast_in_dim', [ans], { shape: [...x!.shape], broadcastDimensions: kept });
    const location = asDtype(eq(x!, ansB), x!.dtype);
    const counts = reduceSum(location, params.axes);
    return [[ans], [div(reduceSum(mul(t, location), params.axes), counts)]];
  };
}

/** JAX's reduce_prod jvp: the reduced axes moved to the front and flattened, then a tree of pairwise products. */
const reduceProdJvp: JvpRule<'reduce_prod'> = ([x], [t], { axes }) => {
  const ans = bind1('reduce_prod', [x!], { axes });
  if (!t) return [[ans], [null]];
  const rest = x!.shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const n = sizeOf(axes.map((a) => x!.shape[a]!));
  if (n === 0) return [[ans], [null]];
  const flat = (v: Array) =>
    bind1('reshape', [bind1('transpose', [v], { permutation: [...axes, ...rest] })], { newSizes: [n, ...rest.map((i) => x!.shape[i]!)] });
  let p = flat(x!);
  let tp = flat(t);
  while (p.shape[0]! > 1) {
    const len = p.shape[0]!;
    const n1 = Math.ceil(len / 2);
    const [a, ta] = [sliceAxis(p, 0, 0, n1), sliceAxis(tp, 0, 0, n1)];
    let [b, tb] = [sliceAxis(p, 0, n1, len), sliceAxis(tp, 0, n1, len)];
    if (len - n1 !== n1) {
      b = padAxis(b, c(1, b), 0, 0, 1, 0);
      tb = padAxis(tb, c(0, tb), 0, 0, 1, 0);
    }
    [p, tp] = [mul(a, b), add(mul(ta, b), mul(a, tb))];
  }
  return [[ans], [bind1('reshape', [tp], { newSizes: [...ans.shape] })]];
};

/**
 * lax.associative_scan (JAX's recursive odd/even scheme) of a binary
 * operator along one axis, built from slices, pads and concatenates.
 */
export function associativeScan(combine: (a: Array, b: Array) => Array, x: Array, axis: number, reverse: boolean): Array {
  const interleave = (a: Array, b: Array): Array => {
    const zeroA = c(0, a);
    const [padA, padB] = a.shape[axis] === b.shape[axis] ? [[0, 1, 1], [1, 0, 1]] : [[0, 0, 1], [1, 1, 1]];
    return add(padAxis(a, zeroA, axis, padA[0]!, padA[1]!, padA[2]!), padAxis(b, c(0, b), axis, padB[0]!, padB[1]!, padB[2]!));
  };
  const scan = (elems: Array): Array => {
    const n = elems.shape[axis]!;
    if (n < 2) return elems;
    const reduced = combine(sliceAxis(elems, axis, 0, n - 1, 2), sliceAxis(elems, axis, 1, n, 2));
    const odd = scan(reduced);
    const even =
      n % 2 === 0
        ? combine(sliceAxis(odd, axis, 0, odd.shape[axis]! - 1), sliceAxis(elems, axis, 2, n, 2))
        : combine(odd, sliceAxis(elems, axis, 2, n, 2));
    const withFirst = bind1('concatenate', [sliceAxis(elems, axis, 0, 1), even], { dimension: axis });
    return interleave(withFirst, odd);
  };
  const rev = (v: Array) => bind1('rev', [v], { dimensions: [axis] });
  return reverse ? rev(scan(rev(x))) : scan(x);
}

/** JAX's _cumulative_jvp_rule: the jvp of the associative scan (the primal comes from the primitive itself). */
function cumulativeJvp(prim: 'cumprod' | 'cummax' | 'cummin'): JvpRule<typeof prim> {
  const combineOf = { cumprod: 'mul', cummax: 'max', cummin: 'min' } as const;
  return ([x], [t], params) => {
    const ans = bind1(prim, [x!], params);
    if (!t) return [[ans], [null]];
    const op = combineOf[prim];
    const [, [tangent]] = jvpFlat((v) => [associativeScan((a, b) => bind1(op, [a, b], {}), v, params.axis, params.reverse)], [x!], [t]);
    return [[ans], [tangent ?? null]];
  };
}

/**
 * JAX's _sort_jvp: the primals sorted together with an iota along the dimension, and each tangent gathered at the
 * positions that iota ends up holding (a gather, whose transpose is a scatter-add: grad works through sort).
 */
const sortJvp: JvpRule<'sort'> = (primals, tangents, params) => {
  const shape = [...primals[0]!.shape];
  const { dimension } = params;
  const iotas = shape.map((_, d) => bind1('iota', [], { dtype: 'int32', shape, dimension: d }));
  const sorted = bind('sort', [...primals, iotas[dimension]!], params);
  const permutation = sorted.pop()!;
  if (tangents.every((t) => t === null)) return [sorted, sorted.map(() => null)];
  // index vectors [..., rank]: the position along every axis, the sorted one from the permutation
  const columns = shape.map((_, d) => bind1('broadcast_in_dim', [d === dimension ? permutation : iotas[d]!], { shape: [...shape, 1], broadcastDimensions: shape.map((__, k) => k) }));
  const indices = columns.length === 1 ? columns[0]! : bind1('concatenate', columns, { dimension: shape.length });
  const axes = shape.map((_, d) => d);
  const gather = (t: Array) => bind1('gather', [t, indices], {
    dimensionNumbers: { offsetDims: [], collapsedSliceDims: axes, startIndexMap: axes }, sliceSizes: shape.map(() => 1), mode: 'clip', fillValue: null,
  });
  return [sorted, tangents.map((t) => (t === null ? null : gather(t)))];
};

/** JAX's _top_k_jvp: the tangent gathered at the indices top_k chose (zero for the indices). */
const topKJvp: JvpRule<'top_k'> = ([x], [t], params) => {
  const [values, indices] = bind('top_k', [x!], params) as [Array, Array];
  if (!t) return [[values, indices], [null, null]];
  const shape = [...indices.shape];
  const rank = shape.length;
  const columns = shape.map((_, d) => (d === rank - 1
    ? bind1('broadcast_in_dim', [indices], { shape: [...shape, 1], broadcastDimensions: shape.map((__, i) => i) })
    : bind1('iota', [], { dtype: 'int32', shape: [...shape, 1], dimension: d })));
  const gatherIndices = columns.length === 1 ? columns[0]! : bind1('concatenate', columns, { dimension: rank });
  const axes = shape.map((_, d) => d);
  const tangent = bind1('gather', [t, gatherIndices], {
    dimensionNumbers: { offsetDims: [], collapsedSliceDims: axes, startIndexMap: axes }, sliceSizes: shape.map(() => 1), mode: 'clip', fillValue: null,
  });
  return [[values, indices], [tangent, null]];
};

// ---- indexing ----

/** The gather that reads back, for every update element, the operand element a scatter wrote it to. */
export function inverseGather(dn: ScatterDimensionNumbers, operandShape: readonly number[], updatesShape: readonly number[]): {
  dimensionNumbers: GatherDimensionNumbers;
  sliceSizes: number[];
} {
  let pos = 0;
  const sliceSizes = operandShape.map((_, i) => (dn.insertedWindowDims.includes(i) ? 1 : updatesShape[dn.updateWindowDims[pos++]!]!));
  return {
    dimensionNumbers: { offsetDims: [...dn.updateWindowDims], collapsedSliceDims: [...dn.insertedWindowDims], startIndexMap: [...dn.scatterDimsToOperandDims] },
    sliceSizes,
  };
}

function gatherBack(operand: Array, indices: Array, updatesShape: readonly number[], params: PrimitiveParams['scatter']): Array {
  const g = inverseGather(params.dimensionNumbers, operand.shape, updatesShape);
  return bind1('gather', [operand, indices], { ...g, mode: params.mode, fillValue: 0 });
}

/**
 * Which updates of a scatter win (JAX's scheme): every update window gets an
 * id >= 1, the ids are scattered like the values, and gathering them back
 * says, per update element, whether it was the one written; operand elements
 * whose scattered id is 0 were not overwritten.
 */
export function scatterWinners(operand: ShapedArray, indices: Array, updates: ShapedArray, params: PrimitiveParams['scatter']): {
  operandKept: Array;
  updateWon: Array;
} {
  const dn = params.dimensionNumbers;
  const idsShape = updates.shape.map((d, i) => (dn.updateWindowDims.includes(i) ? 1 : d));
  const iota = bind1('iota', [], { dtype: 'int32', shape: [sizeOf(idsShape)], dimension: 0 });
  const ids = add(bind1('reshape', [iota], { newSizes: idsShape }), scalar(1, 'int32'));
  const updateIds = bind1('broadcast_in_dim', [ids], { shape: [...updates.shape], broadcastDimensions: idsShape.map((_, i) => i) });
  const zeros = zerosLike({ shape: operand.shape, dtype: 'int32', weakType: false });
  const scattered = bind1('scatter', [zeros, indices, updateIds], params);
  return { operandKept: eq(scattered, scalar(0, 'int32')), updateWon: eq(updateIds, gatherBack(scattered, indices, updates.shape, params)) };
}

const scatterJvp: JvpRule<'scatter'> = ([x, idx, u], [tx, , tu], params) => {
  const out = bind1('scatter', [x!, idx!, u!], params);
  if (!tx && !tu) return [[out], [null]];
  const { operandKept, updateWon } = scatterWinners(x!.aval, idx!, u!.aval, params);
  const maskedOperand = select(operandKept, instantiate(tx!, x!.aval), zerosLike(x!.aval));
  const maskedUpdates = select(updateWon, instantiate(tu!, u!.aval), zerosLike(u!.aval));
  return [[out], [bind1('scatter_add', [maskedOperand, idx!, maskedUpdates], params)]];
};

/**
 * d out[k] = t_x[k]·∏y + x[k]·Σ_j t_y[j]·∏_{i≠j} y_i over the updates j
 * written to k; the products of the others are computed from the product
 * of the nonzero updates and the number of zero updates, so zeros are exact.
 */
const scatterMulJvp: JvpRule<'scatter_mul'> = ([x, idx, u], [tx, , tu], params) => {
  const out = bind1('scatter_mul', [x!, idx!, u!], params);
  let tangent: Tangent = null;
  if (tx) tangent = bind1('scatter_mul', [tx, idx!, u!], params);
  if (tu) {
    const isZero = eq(u!, c(0, u!));
    const nonzero = select(isZero, full(u!.aval, 1), u!);
    const productNonzero = gatherBack(bind1('scatter_mul', [full(x!.aval, 1), idx!, nonzero], params), idx!, u!.shape, params);
    const zeroCount = gatherBack(bind1('scatter_add', [zerosLike(x!.aval), idx!, asDtype(isZero, u!.dtype)], params), idx!, u!.shape, params);
    const zerosU = zerosLike(u!.aval);
    const others = select(
      isZero,
      select(eq(zeroCount, c(1, zeroCount)), productNonzero, zerosU),
      select(eq(zeroCount, c(0, zeroCount)), div(productNonzero, nonzero), zerosU),
    );
    const summed = bind1('scatter_add', [zerosLike(x!.aval), idx!, mul(tu, others)], params);
    tangent = addTangents(tangent, mul(x!, summed));
  }
  return [[out], [tangent]];
};

/** scatter_min/max: the tangent of whichever of the operand and the updates attain the result, averaged over ties. */
function scatterExtremumJvp(prim: 'scatter_min' | 'scatter_max'): JvpRule<typeof prim> {
  return ([x, idx, u], [tx, , tu], params) => {
    const out = bind1(prim, [x!, idx!, u!], params);
    if (!tx && !tu) return [[out], [null]];
    const updateWins = asDtype(eq(u!, gatherBack(out, idx!, u!.shape, params)), u!.dtype);
    const operandWins = asDtype(eq(x!, out), x!.dtype);
    const count = add(operandWins, bind1('scatter_add', [zerosLike(x!.aval), idx!, updateWins], params));
    let sum: Tangent = null;
    if (tx) sum = mul(operandWins, tx);
    if (tu) sum = addTangents(sum, bind1('scatter_add', [zerosLike(x!.aval), idx!, mul(updateWins, tu)], params));
    return [[out], [div(sum!, count)]];
  };
}

// ---- the table ----

const LN2 = Math.LN2;
const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

export const jvpRules: { [P in Primitive]: JvpRule<P> } = {
  // elementwise unary
  neg: linearJvp('neg'),
  sign: zeroJvp('sign'),
  floor: zeroJvp('floor'),
  ceil: zeroJvp('ceil'),
  round: zeroJvp('round'),
  is_finite: zeroJvp('is_finite'),
  exp: unaryJvp('exp', (t, _x, y) => mul(t, y)),
  exp2: unaryJvp('exp2', (t, _x, y) => mul(t, mul(y, c(LN2, y)))),
  log: unaryJvp('log', (t, x) => div(t, x)),
  expm1: unaryJvp('expm1', (t, _x, y) => mul(t, add(y, c(1, y)))),
  log1p: unaryJvp('log1p', (t, x) => div(t, add(x, c(1, x)))),
  tanh: unaryJvp('tanh', (t, _x, y) => mul(t, sub(c(1, y), square(y)))),
  logistic: unaryJvp('logistic', (t, _x, y) => mul(t, mul(y, sub(c(1, y), y)))),
  sin: unaryJvp('sin', (t, x) => mul(t, bind1('cos', [x], {}))),
  cos: unaryJvp('cos', (t, x) => neg(mul(t, bind1('sin', [x], {})))),
  tan: unaryJvp('tan', (t, _x, y) => mul(t, add(c(1, y), square(y)))),
  asin: unaryJvp('asin', (t, x) => mul(t, bind1('rsqrt', [sub(c(1, x), square(x))], {}))),
  acos: unaryJvp('acos', (t, x) => neg(mul(t, bind1('rsqrt', [sub(c(1, x), square(x))], {})))),
  atan: unaryJvp('atan', (t, x) => div(t, add(c(1, x), square(x)))),
  sinh: unaryJvp('sinh', (t, x) => mul(t, bind1('cosh', [x], {}))),
  cosh: unaryJvp('cosh', (t, x) => mul(t, bind1('sinh', [x], {}))),
  asinh: unaryJvp('asinh', (t, x) => mul(t, bind1('rsqrt', [add(square(x), c(1, x))], {}))),
  acosh: unaryJvp('acosh', (t, x) => mul(t, bind1('rsqrt', [mul(sub(x, c(1, x)), add(x, c(1, x)))], {}))),
  atanh: unaryJvp('atanh', (t, x) => div(t, sub(c(1, x), square(x)))),
  sqrt: unaryJvp('sqrt', (t, _x, y) => mul(t, div(c(0.5, y), y))),
  rsqrt: unaryJvp('rsqrt', (t, x, y) => mul(t, mul(c(-0.5, y), div(y, x)))),
  cbrt: unaryJvp('cbrt', (t, _x, y) => mul(t, mul(c(1 / 3, y), bind1('integer_pow', [y], { y: -2 })))),
  abs: unaryJvp('abs', (t, x) => select(bind1('ge', [x, c(0, x)], {}), t, neg(t))),
  not: zeroJvp('not'),
  erf: unaryJvp('erf', (t, x) => mul(t, mul(c(TWO_OVER_SQRT_PI, x), bind1('exp', [neg(square(x))], {})))),
  square: unaryJvp('square', (t, x) => mul(t, mul(c(2, x), x))),
  integer_pow: (primals, tangents, params) => {
    const y = bind1('integer_pow', primals, params);
    const t = tangents[0]!;
    const x = primals[0]!;
    const n = params.y;
    if (t === null || n === 0) return [[y], [null]];
    const power = n === 1 ? null : n === 2 ? x : bind1('integer_pow', [x], { y: n - 1 });
    return [[y], [power === null ? t : mul(t, mul(c(n, x), power))]];
  },
  reduce_precision: linearJvp('reduce_precision'),
  copy: linearJvp('copy'),
  stop_gradient: zeroJvp('stop_gradient'),

  // elementwise binary
  add: binaryJvp('add', (t) => t, (t) => t),
  sub: binaryJvp('sub', (t) => t, (t) => neg(t)),
  mul: binaryJvp('mul', (t, _x, y) => mul(t, y), (t, x) => mul(x, t)),
  div: binaryJvp('div', (t, _x, y) => div(t, y), (t, x, y) => mul(neg(t), div(x, square(y)))),
  rem: binaryJvp('rem', (t) => t, (t, x, y) => {
    const q = div(x, y);
    return mul(neg(t), mul(bind1('sign', [q], {}), bind1('floor', [bind1('abs', [q], {})], {})));
  }),
  pow: binaryJvp(
    'pow',
    (t, x, y, out) => {
      const [xb, yb] = [broadcastTo(x, out.shape), broadcastTo(y, out.shape)];
      const jac = select(eq(yb, c(0, yb)), zerosLike(out.aval), mul(replaceZero(yb), bind1('pow', [xb, sub(yb, c(1, yb))], {})));
      return mul(t, jac);
    },
    (t, x, _y, out) => mul(t, mul(bind1('log', [replaceZero(broadcastTo(x, out.shape))], {}), out)),
  ),
  max: binaryJvp('max', (t, x, y, out) => mul(t, balancedEq(x, out, y)), (t, x, y, out) => mul(t, balancedEq(y, out, x))),
  min: binaryJvp('min', (t, x, y, out) => mul(t, balancedEq(x, out, y)), (t, x, y, out) => mul(t, balancedEq(y, out, x))),
  atan2: binaryJvp(
    'atan2',
    (t, x, y) => mul(t, div(y, add(square(x), square(y)))),
    (t, x, y) => mul(t, div(neg(x), add(square(x), square(y)))),
  ),
  and: zeroJvp('and'),
  or: zeroJvp('or'),
  xor: zeroJvp('xor'),
  nextafter: zeroJvp('nextafter'),
  shift_left: zeroJvp('shift_left'),
  shift_right_logical: zeroJvp('shift_right_logical'),
  shift_right_arithmetic: zeroJvp('shift_right_arithmetic'),
  population_count: zeroJvp('population_count'),
  clz: zeroJvp('clz'),
  bitcast_convert_type: zeroJvp('bitcast_convert_type'),
  eq: zeroJvp('eq'),
  ne: zeroJvp('ne'),
  lt: zeroJvp('lt'),
  le: zeroJvp('le'),
  gt: zeroJvp('gt'),
  ge: zeroJvp('ge'),

  select_n: ([which, ...cases], [, ...caseTangents]) => {
    const out = bind1('select_n', [which!, ...cases], {});
    if (caseTangents.every((t) => t === null)) return [[out], [null]];
    return [[out], [bind1('select_n', [which!, ...cases.map((x, i) => instantiate(caseTangents[i]!, x.aval))], {})]];
  },
  clamp: ([lo, x, hi], [tlo, tx, thi]) => {
    const out = bind1('clamp', [lo!, x!, hi!], {});
    const zeros = zerosLike(out.aval);
    const and = (a: Array, b: Array) => bind1('and', [a, b], {});
    const gt = (a: Array, b: Array) => bind1('gt', [a, b], {});
    const lt = (a: Array, b: Array) => bind1('lt', [a, b], {});
    let acc: Tangent = null;
    if (tlo) acc = addTangents(acc, select(and(gt(lo!, x!), lt(lo!, hi!)), broadcastTo(tlo, out.shape), zeros));
    if (tx) acc = addTangents(acc, select(and(gt(x!, lo!), lt(x!, hi!)), tx, zeros));
    if (thi) acc = addTangents(acc, select(lt(hi!, x!), broadcastTo(thi, out.shape), zeros));
    return [[out], [acc]];
  },
  convert_element_type: ([x], [t], params) => {
    const out = bind1('convert_element_type', [x!], params);
    // float -> float is linear; a cast to an integer or bool has no tangent
    return [[out], [t && isFloating(params.newDtype) ? bind1('convert_element_type', [t], params) : null]];
  },
  iota: zeroJvp('iota'),

  // structural (linear)
  broadcast_in_dim: linearJvp('broadcast_in_dim'),
  reshape: linearJvp('reshape'),
  transpose: linearJvp('transpose'),
  squeeze: linearJvp('squeeze'),
  rev: linearJvp('rev'),
  slice: linearJvp('slice'),
  pad: linearJvp('pad', 2),
  concatenate: (primals, tangents, params) => {
    const out = bind1('concatenate', primals, params);
    if (tangents.every((t) => t === null)) return [[out], [null]];
    return [[out], [bind1('concatenate', primals.map((p, i) => instantiate(tangents[i]!, p.aval)), params)]];
  },
  dynamic_slice: linearJvp('dynamic_slice'),
  dynamic_update_slice: linearJvp('dynamic_update_slice', 2),
  gather: ([x, idx], [tx], params) => {
    const out = bind1('gather', [x!, idx!], params);
    return [[out], [tx ? bind1('gather', [tx, idx!], { ...params, fillValue: 0 }) : null]];
  },
  scatter: scatterJvp,
  scatter_add: ([x, idx, u], [tx, , tu], params) => {
    const out = bind1('scatter_add', [x!, idx!, u!], params);
    if (!tx && !tu) return [[out], [null]];
    return [[out], [bind1('scatter_add', [instantiate(tx!, x!.aval), idx!, instantiate(tu!, u!.aval)], params)]];
  },
  scatter_mul: scatterMulJvp,
  scatter_min: scatterExtremumJvp('scatter_min'),
  scatter_max: scatterExtremumJvp('scatter_max'),

  // reductions
  reduce_sum: linearJvp('reduce_sum'),
  reduce_prod: reduceProdJvp,
  reduce_max: chooserJvp('reduce_max'),
  reduce_min: chooserJvp('reduce_min'),
  reduce_and: zeroJvp('reduce_and'),
  reduce_or: zeroJvp('reduce_or'),
  argmax: zeroJvp('argmax'),
  argmin: zeroJvp('argmin'),
  cumsum: linearJvp('cumsum'),
  cumprod: cumulativeJvp('cumprod'),
  cummax: cumulativeJvp('cummax'),
  cummin: cumulativeJvp('cummin'),
  sort: sortJvp,
  top_k: topKJvp,
  qr: qrJvp, eigh: eighJvp, svd: svdJvp,
  cholesky: choleskyJvp,
  triangular_solve: triangularSolveJvp,
  lu: luJvp,

  conv_general_dilated: convJvp,
  dot_general: ([x, y], [tx, ty], params) => {
    const out = bind1('dot_general', [x!, y!], params);
    let acc: Tangent = null;
    if (tx) acc = bind1('dot_general', [tx, y!], params);
    if (ty) acc = addTangents(acc, bind1('dot_general', [x!, ty], params));
    return [[out], [acc]];
  },

  // remat (remat-rules.ts): the tangent of a named value is not named; a transfer moves the tangent too
  checkpoint: checkpointJvp,
  // custom derivatives (custom-derivatives.ts): the user's rule; custom_lin has none (jvp of a custom_vjp function is an error)
  custom_jvp_call: customJvpCallJvp,
  custom_vjp_call: customVjpCallJvp,
  custom_lin: customLinJvp,
  name: ([x], [t], params) => [[bind1('name', [x!], params)], [t!]],
  device_put: linearJvp('device_put'),

  // host callbacks (callbacks.ts): a debug callback sees the primals only; a pure callback has no derivative (JAX's error)
  debug_callback: debugCallbackJvp,
  pure_callback: pureCallbackJvp,

  // control flow (control-flow/*-rules.ts)
  scan: scanJvp,
  while: whileJvp,
  cond: condJvp,
};
