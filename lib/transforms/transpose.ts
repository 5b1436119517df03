// Transposition of linear jaxprs (JAX's backward_pass): walking the linear
// equations in reverse, each primitive's transpose rule turns the cotangent
// of its output into cotangents of its linear inputs, which accumulate by
// addition. Every primitive has an entry: a rule, or `notLinear` for the
// primitives that never apply to tangents linearly. Rules bind primitives,
// so a backward pass run under another transformation (grad of grad, grad
// inside jit) is itself transformed.
import { Array } from '../core/array.js';
import { bind, bind1 } from '../core/bind.js';
import { show } from '../core/errors.js';
import {
  type BinaryPrimitive, type ComparePrimitive, type DotDimensionNumbers, type Primitive, type PrimitiveParams, type ShapedArray, type UnaryPrimitive,
  BINARY_PRIMITIVES, COMPARE_PRIMITIVES, UNARY_PRIMITIVES,
} from '../core/primitives.js';
import { shapesEqual } from '../core/shape.js';
import { type Atom, type Jaxpr, Literal, Var, literalArray } from '../trace/jaxpr.js';
import { convTransposeLhs, convTransposeRhs } from './conv-rules.js';
import { inverseGather, scatterWinners } from './jvp-rules.js';
import { unbroadcast, zerosLike } from './jvp.js';
import { checkpointTranspose } from './remat-rules.js';
import { customCallTranspose, customLinTranspose } from './custom-derivatives.js';
import { debugCallbackTranspose, pureCallbackTranspose } from './callbacks.js';
import { condTranspose } from './control-flow/cond-rules.js';
import { scanTranspose } from './control-flow/scan-rules.js';
import { whileTranspose } from './control-flow/while-rules.js';

/** A linear input of an equation being transposed: only its aval is known. */
export class UndefinedPrimal {
  constructor(readonly aval: ShapedArray) {}
}

export type LinearInput = Array | UndefinedPrimal;

/**
 * A transpose rule: from the cotangent of the (single) output and the
 * equation's inputs (linear ones as UndefinedPrimal, the others as values),
 * the cotangent of each input (null for non-linear inputs or zero).
 */
export type TransposeRule<P extends Primitive> = (ct: Array, inputs: LinearInput[], params: PrimitiveParams[P]) => (Array | null)[];

/** The entry of primitives that are not linear in any input (their tangents never flow through them). */
export interface NotLinear {
  readonly notLinear: true;
}
export const notLinear: NotLinear = Object.freeze({ notLinear: true as const });

/**
 * The entry of a primitive with several outputs (control flow): from each
 * output's cotangent (null for zero; at least one is not) and the inputs, the
 * cotangent of each input.
 */
export interface MultiOutputTranspose<P extends Primitive> {
  readonly multiOutput: (cts: (Array | null)[], inputs: LinearInput[], params: PrimitiveParams[P]) => (Array | null)[];
}

const isUndefined = (x: LinearInput): x is UndefinedPrimal => x instanceof UndefinedPrimal;
const avalOf = (x: LinearInput): ShapedArray => x.aval;
const range = (n: number) => globalThis.Array.from({ length: n }, (_, i) => i);
const argsort = (xs: readonly number[]) => range(xs.length).sort((a, b) => xs[a]! - xs[b]!);

function nonLinearOperand(prim: string, what: string): never {
  throw new Error(`transpose: ${prim} is not linear in its ${what} (the linear jaxpr is malformed)`);
}

// ---- rules ----

function unaryLinear<P extends Primitive>(t: (ct: Array, x: ShapedArray, params: PrimitiveParams[P]) => Array): TransposeRule<P> {
  return (ct, [x, ...rest], params) => [t(ct, avalOf(x!), params), ...rest.map(() => null)];
}

const addTranspose = (negateY: boolean): TransposeRule<'add' | 'sub'> => (ct, [x, y]) => [
  isUndefined(x!) ? unbroadcast(ct, x.aval) : null,
  isUndefined(y!) ? unbroadcast(negateY ? bind1('neg', [ct], {}) : ct, y.aval) : null,
];

const mulTranspose: TransposeRule<'mul'> = (ct, [x, y]) => {
  if (isUndefined(x!) && isUndefined(y!)) nonLinearOperand('mul', 'two operands at once');
  if (isUndefined(x!)) return [unbroadcast(bind1('mul', [ct, y as Array], {}), x.aval), null];
  return [null, unbroadcast(bind1('mul', [x as Array, ct], {}), (y as UndefinedPrimal).aval)];
};

const divTranspose: TransposeRule<'div'> = (ct, [x, y]) => {
  if (isUndefined(y!)) nonLinearOperand('div', 'divisor');
  return [unbroadcast(bind1('div', [ct, y as Array], {}), (x as UndefinedPrimal).aval), null];
};

const broadcastInDimTranspose: TransposeRule<'broadcast_in_dim'> = (ct, [x], { shape, broadcastDimensions }) => {
  const operand = avalOf(x!);
  const unitDims = operand.shape.map((d, i) => (d === 1 ? i : -1)).filter((i) => i >= 0);
  const bdims = broadcastDimensions.filter((_, i) => !unitDims.includes(i));
  const axes = range(shape.length).filter((d) => !bdims.includes(d));
  const summed = axes.length ? bind1('reduce_sum', [ct], { axes }) : ct;
  return [shapesEqual(summed.shape, operand.shape) ? summed : bind1('reshape', [summed], { newSizes: [...operand.shape] })];
};

const sliceTranspose: TransposeRule<'slice'> = (ct, [x], { startIndices, limitIndices, strides }) => {
  const shape = avalOf(x!).shape;
  const config: [number, number, number][] = shape.map((d, i) => {
    const stride = strides ? strides[i]! : 1;
    if (stride === 1) return [startIndices[i]!, d - limitIndices[i]!, 0];
    const realLimit = startIndices[i]! + (ct.shape[i] === 0 ? 0 : 1 + (ct.shape[i]! - 1) * stride);
    return [startIndices[i]!, d - realLimit, stride - 1];
  });
  return [bind1('pad', [ct, zeroScalar(ct)], { paddingConfig: config })];
};

function zeroScalar(like: Array): Array {
  return zerosLike({ shape: [], dtype: like.dtype, weakType: false });
}

/** JAX's _pad_transpose: the operand's cotangent is the unpadded (cropped, strided) cotangent; the padding value's is the rest of the sum. */
const padTranspose: TransposeRule<'pad'> = (ct, [x, v], { paddingConfig }) => {
  const operand = avalOf(x!);
  const grow = paddingConfig.map(([lo, hi]) => [Math.max(0, -lo), Math.max(0, -hi), 0] as [number, number, number]);
  const grown = grow.some(([a, b]) => a || b) ? bind1('pad', [ct, zeroScalar(ct)], { paddingConfig: grow }) : ct;
  const unpadded = bind1('slice', [grown], {
    startIndices: paddingConfig.map(([lo]) => Math.max(0, lo)),
    limitIndices: paddingConfig.map(([, hi], i) => grown.shape[i]! - Math.max(0, hi)),
    strides: paddingConfig.map(([, , interior]) => interior + 1),
  });
  if (!shapesEqual(unpadded.shape, operand.shape)) throw new Error(`transpose of pad: got ${show(unpadded.shape)} for operand ${show(operand.shape)}`);
  const all = (a: Array) => bind1('reduce_sum', [a], { axes: range(a.ndim) });
  const padValueCt = isUndefined(v!) ? bind1('sub', [all(ct), all(unpadded)], {}) : null;
  return [isUndefined(x!) ? unpadded : null, padValueCt];
};

const concatenateTranspose: TransposeRule<'concatenate'> = (ct, inputs, { dimension }) => {
  let offset = 0;
  return inputs.map((x) => {
    const size = avalOf(x).shape[dimension]!;
    const start = offset;
    offset += size;
    if (!isUndefined(x)) return null;
    return bind1('slice', [ct], {
      startIndices: ct.shape.map((_, i) => (i === dimension ? start : 0)),
      limitIndices: ct.shape.map((d, i) => (i === dimension ? start + size : d)),
      strides: null,
    });
  });
};

const selectTranspose: TransposeRule<'select_n'> = (ct, [which, ...cases]) => {
  if (isUndefined(which!)) nonLinearOperand('select_n', 'predicate');
  const zeros = zerosLike(ct.aval);
  return [null, ...cases.map((c, i) => (isUndefined(c) ? bind1('select_n', [which as Array, ...cases.map((_, j) => (j === i ? ct : zeros))], {}) : null))];
};

/** JAX's _dot_general_transpose_lhs: contract the cotangent with the other operand, then put the axes back in order. */
function dotTransposeLhs(g: Array, x: ShapedArray, y: Array, dn: DotDimensionNumbers, swapAns: boolean, params: PrimitiveParams['dot_general']): Array {
  const { precision, preferredElementType } = params;
  const [[xContract, yContract], [xBatch, yBatch]] = dn;
  const remaining = (n: number, ...removed: number[][]) => range(n).filter((i) => !removed.some((r) => r.includes(i)));
  const xKept = remaining(x.shape.length, xContract, xBatch);
  const yKept = remaining(y.ndim, yContract, yBatch);
  const nb = xBatch.length;
  const ansBatch = range(nb);
  const ansY = swapAns ? range(yKept.length).map((i) => nb + i) : range(yKept.length).map((i) => nb + xKept.length + i);
  const dims: DotDimensionNumbers = [[ansY, yKept], [ansBatch, [...yBatch]]];
  const gIn = g.dtype === y.dtype ? g : bind1('convert_element_type', [g], { newDtype: y.dtype, weakType: g.weakType });
  // the primal's preferredElementType (JAX's rule): a float32 x float32 -> float64 dot transposes into a float64 product
  const product = bind1('dot_general', [gIn, y], { dimensionNumbers: dims, preferredElementType, ...(precision ? { precision } : {}) });
  const xContractSortedByY = argsort(yContract).map((i) => xContract[i]!);
  const outAxes = argsort([...xBatch, ...xKept, ...xContractSortedByY]);
  const result = outAxes.every((a, i) => a === i) ? product : bind1('transpose', [product], { permutation: outAxes });
  return result.dtype === x.dtype ? result : bind1('convert_element_type', [result], { newDtype: x.dtype, weakType: x.weakType });
}

const dotGeneralTranspose: TransposeRule<'dot_general'> = (ct, [x, y], params) => {
  if (isUndefined(x!) && isUndefined(y!)) nonLinearOperand('dot_general', 'two operands at once');
  const { dimensionNumbers } = params;
  const [[xc, yc], [xb, yb]] = dimensionNumbers;
  if (isUndefined(x!)) return [dotTransposeLhs(ct, x.aval, y as Array, dimensionNumbers, false, params), null];
  return [null, dotTransposeLhs(ct, (y as UndefinedPrimal).aval, x as Array, [[yc, xc], [yb, xb]], true, params)];
};

const convTranspose: TransposeRule<'conv_general_dilated'> = (ct, [x, y], params) => {
  if (isUndefined(x!) && isUndefined(y!)) nonLinearOperand('conv_general_dilated', 'two operands at once');
  if (isUndefined(x!)) return [convTransposeLhs(ct, x.aval, y as Array, params), null];
  return [null, convTransposeRhs(ct, x as Array, (y as UndefinedPrimal).aval, params)];
};

const gatherTranspose: TransposeRule<'gather'> = (ct, [x, idx], { dimensionNumbers: dn, mode }) => {
  const zeros = zerosLike(avalOf(x!));
  const dimensionNumbers = { updateWindowDims: [...dn.offsetDims], insertedWindowDims: [...dn.collapsedSliceDims], scatterDimsToOperandDims: [...dn.startIndexMap] };
  return [bind1('scatter_add', [zeros, idx as Array, ct], { dimensionNumbers, mode }), null];
};

function gatherUpdates(ct: Array, indices: Array, updates: ShapedArray, params: PrimitiveParams['scatter']): Array {
  const g = inverseGather(params.dimensionNumbers, ct.shape, updates.shape);
  return bind1('gather', [ct, indices], { ...g, mode: params.mode, fillValue: 0 });
}

const scatterAddTranspose: TransposeRule<'scatter_add'> = (ct, [x, idx, u], params) => [
  isUndefined(x!) ? ct : null,
  null,
  isUndefined(u!) ? gatherUpdates(ct, idx as Array, u.aval, params) : null,
];

/** scatter overwrites: the operand's cotangent is zero where it was overwritten, an update's is the cotangent where it won. */
const scatterTranspose: TransposeRule<'scatter'> = (ct, [x, idx, u], params) => {
  const { operandKept, updateWon } = scatterWinners(avalOf(x!), idx as Array, avalOf(u!), params);
  const select = (pred: Array, onTrue: Array, onFalse: Array) => bind1('select_n', [pred, onFalse, onTrue], {});
  return [
    isUndefined(x!) ? select(operandKept, ct, zerosLike(ct.aval)) : null,
    null,
    isUndefined(u!) ? select(updateWon, gatherUpdates(ct, idx as Array, u.aval, params), zerosLike(u.aval)) : null,
  ];
};

const scatterMulTranspose: TransposeRule<'scatter_mul'> = (ct, [, idx, u], params) => {
  if (isUndefined(u!)) nonLinearOperand('scatter_mul', 'updates');
  return [bind1('scatter_mul', [ct, idx as Array, u as Array], params), null, null];
};

const dynamicSliceTranspose: TransposeRule<'dynamic_slice'> = (ct, [x, ...idx]) => [
  bind1('dynamic_update_slice', [zerosLike(avalOf(x!)), ct, ...(idx as Array[])], {}),
  ...idx.map(() => null),
];

const dynamicUpdateSliceTranspose: TransposeRule<'dynamic_update_slice'> = (ct, [x, u, ...idx]) => {
  const indices = idx as Array[];
  const update = avalOf(u!);
  return [
    isUndefined(x!) ? bind1('dynamic_update_slice', [ct, zerosLike(update), ...indices], {}) : null,
    isUndefined(u!) ? bind1('dynamic_slice', [ct, ...indices], { sliceSizes: [...update.shape] }) : null,
    ...idx.map(() => null),
  ];
};

/** Unary, binary and comparison primitives are not linear unless the table below says how to transpose them. */
const elementwiseNotLinear = Object.fromEntries([...UNARY_PRIMITIVES, ...BINARY_PRIMITIVES, ...COMPARE_PRIMITIVES].map((p) => [p, notLinear])) as {
  [P in UnaryPrimitive | BinaryPrimitive | ComparePrimitive]: NotLinear;
};

export const transposeRules: { [P in Primitive]: TransposeRule<P> | NotLinear | MultiOutputTranspose<P> } = {
  ...elementwiseNotLinear,
  neg: unaryLinear((ct) => bind1('neg', [ct], {})),
  reduce_precision: unaryLinear((ct, _x, params) => bind1('reduce_precision', [ct], params)),
  copy: unaryLinear((ct) => bind1('copy', [ct], {})),
  stop_gradient: notLinear,
  add: addTranspose(false),
  sub: addTranspose(true),
  mul: mulTranspose,
  div: divTranspose,

  select_n: selectTranspose,
  clamp: notLinear,
  convert_element_type: unaryLinear((ct, x) => (ct.dtype === x.dtype ? ct : bind1('convert_element_type', [ct], { newDtype: x.dtype, weakType: x.weakType }))),
  iota: notLinear,
  bitcast_convert_type: notLinear,

  broadcast_in_dim: broadcastInDimTranspose,
  reshape: unaryLinear((ct, x) => bind1('reshape', [ct], { newSizes: [...x.shape] })),
  squeeze: unaryLinear((ct, x) => bind1('reshape', [ct], { newSizes: [...x.shape] })),
  transpose: unaryLinear((ct, _x, { permutation }) => bind1('transpose', [ct], { permutation: argsort(permutation) })),
  rev: unaryLinear((ct, _x, { dimensions }) => bind1('rev', [ct], { dimensions })),
  slice: sliceTranspose,
  pad: padTranspose,
  concatenate: concatenateTranspose,
  dynamic_slice: dynamicSliceTranspose,
  dynamic_update_slice: dynamicUpdateSliceTranspose,
  gather: gatherTranspose,
  scatter: scatterTranspose,
  scatter_add: scatterAddTranspose,
  scatter_mul: scatterMulTranspose,
  scatter_min: notLinear,
  scatter_max: notLinear,

  reduce_sum: unaryLinear((ct, x, { axes }) =>
    bind1('broadcast_in_dim', [ct], { shape: [...x.shape], broadcastDimensions: range(x.shape.length).filter((i) => !axes.includes(i)) })),
  reduce_prod: notLinear, reduce_max: notLinear, reduce_min: notLinear, reduce_and: notLinear, reduce_or: notLinear,
  argmax: notLinear, argmin: notLinear, sort: notLinear, top_k: notLinear, qr: notLinear, eigh: notLinear, svd: notLinear,
  cholesky: notLinear, lu: notLinear,
  // linear in b only: b's cotangent solves with op(a) transposed (JAX's _triangular_solve_transpose_rule)
  triangular_solve: (ct, [a, b], params) => {
    if (isUndefined(a!) || !isUndefined(b!)) nonLinearOperand('triangular_solve', 'matrix a');
    return [null, bind1('triangular_solve', [a as Array, ct], { ...params, transposeA: !params.transposeA })];
  },
  cumsum: unaryLinear((ct, _x, { axis, reverse }) => bind1('cumsum', [ct], { axis, reverse: !reverse })),
  cumprod: notLinear, cummax: notLinear, cummin: notLinear,

  dot_general: dotGeneralTranspose,
  conv_general_dilated: convTranspose,

  // remat (remat-rules.ts): checkpoint_name is the identity; a transfer's cotangent goes back to the source memory kind
  checkpoint: { multiOutput: checkpointTranspose },
  // custom derivatives (custom-derivatives.ts): a custom call on tangents is linear in its jaxpr; custom_lin runs the bwd rule
  custom_jvp_call: { multiOutput: customCallTranspose },
  custom_vjp_call: { multiOutput: customCallTranspose },
  custom_lin: { multiOutput: customLinTranspose },
  name: unaryLinear((ct) => ct),
  device_put: unaryLinear((ct, _x, { srcKind, dstKind }) => bind1('device_put', [ct], { srcKind: dstKind, dstKind: srcKind })),
  // host callbacks (callbacks.ts): a debug callback gives no cotangents; a pure callback cannot be transposed (JAX's error)
  debug_callback: { multiOutput: debugCallbackTranspose },
  pure_callback: { multiOutput: pureCallbackTranspose },

  // control flow (control-flow/*-rules.ts); reverse mode through while raises JAX's error
  scan: { multiOutput: scanTranspose },
  while: { multiOutput: whileTranspose },
  cond: { multiOutput: condTranspose },
};

// ---- the backward pass ----

/**
 * Transposes a linear jaxpr: `args` gives each input's value, or an
 * UndefinedPrimal for the linear inputs; `cotangents` one per output (null
 * for zero). Equations that read no linear input (residual computations a
 * remat policy moved here) are evaluated forward first. Returns the
 * cotangent of each input (null where zero or not linear).
 */
export function backwardPass(jaxpr: Jaxpr, consts: readonly Array[], args: readonly LinearInput[], cotangents: readonly (Array | null)[]): (Array | null)[] {
  const values = new Map<Var, Array>();
  const linear = new Set<Var>();
  jaxpr.constVars.forEach((v, i) => values.set(v, consts[i]!));
  jaxpr.inVars.forEach((v, i) => {
    const a = args[i]!;
    if (isUndefined(a)) linear.add(v);
    else values.set(v, a);
  });
  const read = (a: Atom): Array => {
    if (a instanceof Literal) return literalArray(a);
    const v = values.get(a);
    if (!v) throw new Error('backwardPass: a non-linear variable is read before it is defined (malformed jaxpr)');
    return v;
  };
  const isLinear = (a: Atom): a is Var => a instanceof Var && linear.has(a);

  const linearEqns = [];
  for (const e of jaxpr.eqns) {
    if (e.inputs.some(isLinear)) {
      linearEqns.push(e);
      for (const v of e.outVars) linear.add(v);
    } else {
      const outs = bind(e.primitive, e.inputs.map(read), e.params);
      e.outVars.forEach((v, i) => values.set(v, outs[i]!));
    }
  }

  const cts = new Map<Var, Array>();
  const accumulate = (v: Var, ct: Array) => {
    if (!shapesEqual(ct.shape, v.aval.shape)) {
      throw new Error(`backwardPass: cotangent of shape ${show(ct.shape)} for a value of shape ${show(v.aval.shape)} (a transpose rule is wrong)`);
    }
    const previous = cts.get(v);
    cts.set(v, previous ? bind1('add', [previous, ct], {}) : ct);
  };
  jaxpr.outs.forEach((o, i) => {
    const ct = cotangents[i];
    if (ct && isLinear(o)) accumulate(o, ct);
  });

  for (let k = linearEqns.length - 1; k >= 0; k--) {
    const e = linearEqns[k]!;
    const rule = transposeRules[e.primitive] as TransposeRule<Primitive> | NotLinear | MultiOutputTranspose<Primitive>;
    const outCts = e.outVars.map((v) => cts.get(v) ?? null);
    if (outCts.every((c) => c === null)) continue;
    e.outVars.forEach((v) => cts.delete(v));
    if ('notLinear' in rule) {
      throw new Error(`backwardPass: ${e.primitive} is not linear but was applied to a tangent (its jvp rule is wrong)`);
    }
    const inputs = e.inputs.map((a) => (isLinear(a) ? new UndefinedPrimal(a.aval) : read(a)));
    let inCts: (Array | null)[];
    if ('multiOutput' in rule) {
      inCts = rule.multiOutput(outCts, inputs, e.params);
    } else {
      if (e.outVars.length !== 1) throw new Error(`backwardPass: ${e.primitive} has ${e.outVars.length} outputs; its transpose rule takes one`);
      inCts = rule(outCts[0]!, inputs, e.params);
    }
    e.inputs.forEach((a, i) => {
      const c = inCts[i];
      if (c && isLinear(a)) accumulate(a, c);
    });
  }
  return jaxpr.inVars.map((v) => (linear.has(v) ? (cts.get(v) ?? null) : null));
}
