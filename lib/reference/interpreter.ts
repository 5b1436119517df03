// The float64 reference interpreter: one rule per primitive, computing in
// float64 and rounding each result to its dtype. It is the tests' oracle, so
// it is written to be obviously right (plain loops over flat indices), and
// the semantics it pins down (integer wrapping, division by zero, NaN in
// max/argmax, gather/scatter modes) are the ones the CPU and CUDA kernels
// implement. Output shapes and dtypes come from `abstractEval`, so a rule
// cannot disagree with the primitive table about them.
import { convRule } from './conv.js';
import { type DType } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';
import {
  type Primitive,
  type PrimitiveParams,
  type ShapedArray,
  BINARY_PRIMITIVES,
  COMPARE_PRIMITIVES,
  CUSTOM_VJP_JVP_ERROR,
  abstractEval,
  aval,
} from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import { type RefArray, finish, isRepresentable } from './array.js';
import { dotGeneralRule } from './dot.js';
import {
  BINARY_FUNCTIONS,
  COMPARE_FUNCTIONS,
  type PlainUnaryPrimitive,
  UNARY_FUNCTIONS,
  binaryRule,
  clampRule,
  compareRule,
  convertElementTypeRule,
  bitcastConvertTypeRule,
  integerPowRule,
  reducePrecisionRule,
  roundRule,
  selectNRule,
  unaryRule,
} from './elementwise.js';
import {
  dynamicSliceRule, dynamicUpdateSliceRule, gatherRule, scatterAddRule, scatterMaxRule, scatterMinRule, scatterMulRule, scatterSetRule,
} from './indexing.js';
import { CUMULATIVE_MONOIDS, REDUCE_MONOIDS, argReduceRule, cumulativeRule, reduceRule, sortRule, topKRule } from './reductions.js';
import { eighRule, qrRule, svdRule } from './linalg-eig.js';
import { choleskyRule, luRule, triangularSolveRule } from './linalg.js';
import { condReference, scanReference, whileReference } from './control-flow.js';
import { checkpointReference, customCallReference } from './checkpoint.js';
import { debugCallbackReference, pureCallbackReference } from './callbacks.js';
import {
  broadcastInDimRule,
  concatenateRule,
  copyRule,
  iotaRule,
  padRule,
  revRule,
  sliceRule,
  transposeRule,
} from './structural.js';

export { type RefArray, refArray, toNumbers } from './array.js';

/**
 * A rule gets the inputs, the params and the output avals abstractEval
 * computed; it returns each output's values (row-major, float64). Integer
 * results must be wrapped by the rule; float results are rounded afterwards.
 */
export type ReferenceRule<P extends Primitive> = (inputs: RefArray[], params: PrimitiveParams[P], outs: ShapedArray[]) => Float64Array[];

/** One rule per key, built by `make`. */
function rulesFor<K extends string>(keys: readonly K[], make: (key: K) => (inputs: RefArray[]) => Float64Array[]) {
  const rules = {} as Record<K, (inputs: RefArray[]) => Float64Array[]>;
  for (const key of keys) rules[key] = make(key);
  return rules;
}

const unaryRules = rulesFor(Object.keys(UNARY_FUNCTIONS) as PlainUnaryPrimitive[], (p) => unaryRule(UNARY_FUNCTIONS[p]));
const binaryRules = rulesFor(BINARY_PRIMITIVES, (p) => binaryRule(BINARY_FUNCTIONS[p]));
const compareRules = rulesFor(COMPARE_PRIMITIVES, (p) => compareRule(COMPARE_FUNCTIONS[p]));

export const referenceRules: { [P in Primitive]: ReferenceRule<P> } = {
  ...unaryRules,
  round: roundRule,
  integer_pow: integerPowRule,
  reduce_precision: reducePrecisionRule,
  ...binaryRules,
  ...compareRules,
  select_n: selectNRule,
  clamp: clampRule,
  convert_element_type: convertElementTypeRule,
  bitcast_convert_type: bitcastConvertTypeRule,
  iota: iotaRule,
  broadcast_in_dim: broadcastInDimRule,
  reshape: copyRule,
  transpose: transposeRule,
  squeeze: copyRule,
  rev: revRule,
  slice: sliceRule,
  pad: padRule,
  concatenate: concatenateRule,
  dynamic_slice: dynamicSliceRule,
  dynamic_update_slice: dynamicUpdateSliceRule,
  gather: gatherRule,
  scatter: scatterSetRule,
  scatter_add: scatterAddRule,
  scatter_mul: scatterMulRule,
  scatter_min: scatterMinRule,
  scatter_max: scatterMaxRule,
  reduce_sum: reduceRule(REDUCE_MONOIDS.reduce_sum),
  reduce_prod: reduceRule(REDUCE_MONOIDS.reduce_prod),
  reduce_max: reduceRule(REDUCE_MONOIDS.reduce_max),
  reduce_min: reduceRule(REDUCE_MONOIDS.reduce_min),
  reduce_and: reduceRule(REDUCE_MONOIDS.reduce_and),
  reduce_or: reduceRule(REDUCE_MONOIDS.reduce_or),
  argmax: argReduceRule((a, b) => a > b),
  argmin: argReduceRule((a, b) => a < b),
  cumsum: cumulativeRule(CUMULATIVE_MONOIDS.cumsum),
  cumprod: cumulativeRule(CUMULATIVE_MONOIDS.cumprod),
  cummax: cumulativeRule(CUMULATIVE_MONOIDS.cummax),
  cummin: cumulativeRule(CUMULATIVE_MONOIDS.cummin),
  sort: sortRule,
  top_k: topKRule,
  qr: qrRule, eigh: eighRule, svd: svdRule,
  cholesky: choleskyRule,
  triangular_solve: triangularSolveRule,
  lu: luRule,
  dot_general: dotGeneralRule,
  conv_general_dilated: convRule,
  stop_gradient: copyRule,
  scan: scanReference,
  while: whileReference,
  cond: condReference,
  checkpoint: checkpointReference,
  custom_jvp_call: customCallReference,
  custom_vjp_call: customCallReference,
  custom_lin: () => {
    throw new TypeError(CUSTOM_VJP_JVP_ERROR);
  },
  name: copyRule,
  device_put: copyRule,
  debug_callback: debugCallbackReference,
  pure_callback: pureCallbackReference,
};

function checkLength(prim: string, x: RefArray, i: number): void {
  if (x.data.length !== sizeOf(x.shape)) {
    throw new ValueError(`reference ${prim}: input ${i} has shape ${show(x.shape)} but ${x.data.length} values`);
  }
}

/** Evaluates one primitive on concrete arrays: validates with abstractEval, computes in float64, rounds to the output dtypes. */
export function evalPrimitive<P extends Primitive>(prim: P, inputs: RefArray[], params: PrimitiveParams[P]): RefArray[] {
  const rule = referenceRules[prim] as ReferenceRule<P> | undefined;
  if (!rule) throw new ValueError(`reference: unknown primitive ${show(prim)}`);
  inputs.forEach((x, i) => checkLength(prim, x, i));
  const outs = abstractEval[prim](inputs.map((x) => aval(x.shape, x.dtype)), params);
  const results = rule(inputs, params, outs);
  if (results.length !== outs.length) {
    throw new Error(`reference ${prim}: rule returned ${results.length} outputs, abstractEval ${outs.length} (interpreter bug)`);
  }
  return outs.map((o, i) => finish(prim, [...o.shape], o.dtype, results[i]!));
}

export interface RefResult {
  shape: number[];
  dtype: DType;
  values: number[];
}

/**
 * evalPrimitive for tests at a boundary: also checks that every input value
 * is representable in its dtype (a float32 array holding 0.1 is a bug in the
 * test, not a case to round silently), and returns plain number arrays.
 */
export function evalPrimitiveChecked<P extends Primitive>(prim: P, inputs: RefArray[], params: PrimitiveParams[P]): RefResult[] {
  inputs.forEach((x, i) => {
    checkLength(prim, x, i);
    x.data.forEach((v, j) => {
      if (!isRepresentable(v, x.dtype)) {
        throw new ValueError(`reference ${prim}: input ${i} value ${v} at ${j} is not representable in ${x.dtype}`);
      }
    });
  });
  return evalPrimitive(prim, inputs, params).map((r) => ({ shape: r.shape, dtype: r.dtype, values: Array.from(r.data) }));
}
