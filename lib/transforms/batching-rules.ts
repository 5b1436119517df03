// vmap's batching rules, one per primitive (after jax/_src/interpreters/
// batching.py and the *_batch_rule functions of jax/_src/lax): a rule gets
// the operands' values with their batch dimension (null: not batched) and
// returns the outputs with theirs. Rules move the batch dimension where the
// primitive needs it and broadcast unbatched operands that meet batched ones;
// dynamic_slice / dynamic_update_slice with batched indices become gather /
// scatter, and gather / scatter with batched indices get an iota that counts
// along the batch, as JAX's _gather_batching_rule does.
import type { Array } from '../core/array.js';
import { arrayFromValues, bind, bind1 } from '../core/bind.js';
import type { DType } from '../core/dtype.js';
import {
  type BinaryPrimitive,
  type ComparePrimitive,
  type CumulativePrimitive,
  type Primitive,
  type PrimitiveParams,
  type ReducePrimitive,
  type UnaryPrimitive,
  BINARY_PRIMITIVES,
  COMPARE_PRIMITIVES,
  CUMULATIVE_PRIMITIVES,
  REDUCE_PRIMITIVES,
  UNARY_PRIMITIVES,
  abstractEval,
  aval,
} from '../core/primitives.js';
import type { MainTrace } from '../trace/core.js';
import { convBatch } from './conv-rules.js';
import { checkpointBatch } from './remat-rules.js';
import { customJvpCallBatch, customLinBatch, customVjpCallBatch } from './custom-derivatives.js';
import { debugCallbackBatch, pureCallbackBatch } from './callbacks.js';
import { condBatch } from './control-flow/cond-rules.js';
import { scanBatch } from './control-flow/scan-rules.js';
import { whileBatch } from './control-flow/while-rules.js';

/** Where an array's batch dimension is; null when the value is the same for every batch element. */
export type BatchDim = number | null;

export type BatchRule<P extends Primitive> = (
  vals: Array[],
  dims: BatchDim[],
  params: PrimitiveParams[P],
  axisSize: number,
  /** The vmap's main trace, for rules that run user functions under the same vmap (custom derivative rules). */
  main?: MainTrace,
) => [Array[], BatchDim[]];

const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

/** The axis of the batched array that per-example axis `axis` is, given batch dimension `bdim`. */
const fullAxis = (axis: number, bdim: number): number => (axis < bdim ? axis : axis + 1);

/** The per-example shape of a value with batch dimension `bdim`. */
function exampleShape(x: Array, bdim: BatchDim): number[] {
  return bdim === null ? [...x.shape] : x.shape.filter((_, i) => i !== bdim);
}

// The structural ops the rules build with, bound directly: lax (lib/lax) sits above the transforms.
function transpose(x: Array, permutation: number[]): Array {
  return bind1('transpose', [x], { permutation });
}

function broadcastInDim(x: Array, shape: number[], broadcastDimensions: number[]): Array {
  if (x.ndim === shape.length && x.shape.every((d, i) => d === shape[i]) && broadcastDimensions.every((d, i) => d === i)) return x;
  return bind1('broadcast_in_dim', [x], { shape, broadcastDimensions });
}

function convertElementType(x: Array, dtype: DType): Array {
  if (x.dtype === dtype && !x.weakType) return x;
  return bind1('convert_element_type', [x], { newDtype: dtype, weakType: false });
}

function concatenate(operands: Array[], dimension: number): Array {
  return operands.length === 1 ? operands[0]! : bind1('concatenate', operands, { dimension });
}

/** Moves axis `from` of x to position `to`. */
export function moveaxis(x: Array, from: number, to: number): Array {
  if (from === to) return x;
  const perm = range(x.ndim).filter((i) => i !== from);
  perm.splice(to, 0, from);
  return transpose(x, perm);
}

/** x with its batch dimension at `to`: moved there, or made by broadcasting when x is not batched. */
export function batchDimAt(x: Array, bdim: BatchDim, to: number, size: number): Array {
  if (bdim !== null) return moveaxis(x, bdim, to);
  const shape = [...x.shape];
  shape.splice(to, 0, size);
  return broadcastInDim(x, shape, range(x.ndim).map((i) => fullAxis(i, to)));
}

/**
 * Brings elementwise operands to one layout: every operand the per-example
 * shape of the highest-rank one, batched at a common dimension. Unbatched
 * scalars stay scalars where `scalarOk` allows it (binary primitives and
 * select_n / clamp accept a rank-0 operand).
 */
function alignElementwise(vals: Array[], dims: BatchDim[], size: number, scalarOk: (i: number) => boolean): { vals: Array[]; dim: number } {
  const shapes = vals.map((v, i) => exampleShape(v, dims[i]!));
  const shape = shapes.reduce((a, s) => (s.length > a.length ? s : a), [] as number[]);
  const first = dims.findIndex((d, i) => d !== null && shapes[i]!.length === shape.length);
  const dim = first >= 0 ? dims[first]! : 0;
  const full = [...shape];
  full.splice(dim, 0, size);
  const out = vals.map((v, i) => {
    const d = dims[i]!;
    if (d === null) {
      if (v.ndim === 0 && scalarOk(i)) return v;
      return broadcastInDim(v, full, range(v.ndim).map((k) => fullAxis(k + shape.length - v.ndim, dim)));
    }
    if (shapes[i]!.length === shape.length) return moveaxis(v, d, dim);
    return broadcastInDim(v, full, [dim]); // a batched per-example scalar
  });
  return { vals: out, dim };
}

function elementwiseRule<P extends Primitive>(prim: P, scalarOk: (i: number) => boolean = () => true): BatchRule<P> {
  return (vals, dims, params, size) => {
    const aligned = alignElementwise(vals, dims, size, scalarOk);
    return [bind(prim, aligned.vals, params), [aligned.dim]];
  };
}

function unaryRule<P extends Primitive>(prim: P): BatchRule<P> {
  return (vals, dims, params) => [bind(prim, vals, params), [dims[0]!]];
}

/** Batch dimension after removing `removed` (full axes) from an array batched at `bdim`. */
const afterRemoving = (bdim: number, removed: number[]): number => bdim - removed.filter((a) => a < bdim).length;

function reduceRule<P extends ReducePrimitive | 'argmax' | 'argmin'>(prim: P): BatchRule<P> {
  return ([x], [d], params) => {
    const axes = params.axes.map((a) => fullAxis(a, d!));
    return [bind(prim, [x!], { ...params, axes } as PrimitiveParams[P]), [afterRemoving(d!, axes)]];
  };
}

function cumulativeRule<P extends CumulativePrimitive>(prim: P): BatchRule<P> {
  return ([x], [d], params) => [bind(prim, [x!], { ...params, axis: fullAxis(params.axis, d!) } as PrimitiveParams[P]), [d!]];
}

const int32Scalar = (v: number): Array => arrayFromValues([v], [], 'int32');

/** Scalar start indices (some batched, shape [B]) as one [B, n] index array batched at 0 (JAX's _batch_dynamic_slice_indices). */
function batchStartIndices(indices: Array[], dims: BatchDim[], size: number): Array {
  const dtype = indices.every((i) => i.dtype === indices[0]!.dtype) ? indices[0]!.dtype : 'int32';
  const columns = indices.map((ix, k) => {
    const typed = ix.dtype === dtype ? ix : convertElementType(ix, dtype);
    return broadcastInDim(typed, [size, 1], dims[k] === null ? [] : [0]);
  });
  return concatenate(columns, 1);
}

/** Prepends to the index vectors an iota counting along the batch (both arrays batched at 0). */
function withBatchCounter(indices: Array): Array {
  const dtype = indices.dtype === 'int8' || indices.dtype === 'uint8' || indices.dtype === 'int16' || indices.dtype === 'uint16' ? 'int32' : indices.dtype;
  const counts = bind1('iota', [], { dtype, shape: [...indices.shape.slice(0, -1), 1], dimension: 0 });
  return concatenate([counts, indices.dtype === dtype ? indices : convertElementType(indices, dtype)], indices.ndim - 1);
}

const gatherRule: BatchRule<'gather'> = ([operand, indices], [od, id], params, size) => {
  const dn = params.dimensionNumbers;
  const add1 = (xs: number[]) => xs.map((x) => x + 1);
  if (id === null) {
    const x = moveaxis(operand!, od!, 0);
    const dimensionNumbers = { offsetDims: [0, ...add1(dn.offsetDims)], collapsedSliceDims: add1(dn.collapsedSliceDims), startIndexMap: add1(dn.startIndexMap) };
    return [bind('gather', [x, indices!], { ...params, dimensionNumbers, sliceSizes: [size, ...params.sliceSizes] }), [0]];
  }
  if (od === null) {
    const ix = moveaxis(indices!, id, 0);
    const dimensionNumbers = { ...dn, offsetDims: add1(dn.offsetDims) };
    return [bind('gather', [operand!, ix], { ...params, dimensionNumbers }), [0]];
  }
  const x = moveaxis(operand!, od, 0);
  const ix = moveaxis(indices!, id, 0);
  if (size === 0) {
    // gather cannot take size-1 slices of an empty axis, even zero times (as in JAX)
    const [out] = abstractEval.gather([aval(x.shape.slice(1), x.dtype), aval(ix.shape.slice(1), ix.dtype)], params);
    const zero = convertElementType(int32Scalar(0), x.dtype);
    return [[broadcastInDim(zero, [0, ...out!.shape], [])], [0]];
  }
  const dimensionNumbers = { offsetDims: add1(dn.offsetDims), collapsedSliceDims: [0, ...add1(dn.collapsedSliceDims)], startIndexMap: [0, ...add1(dn.startIndexMap)] };
  return [bind('gather', [x, withBatchCounter(ix)], { ...params, dimensionNumbers, sliceSizes: [1, ...params.sliceSizes] }), [0]];
};

type ScatterPrimitive = 'scatter' | 'scatter_add' | 'scatter_mul' | 'scatter_min' | 'scatter_max';

function scatterRule<P extends ScatterPrimitive>(prim: P): BatchRule<P> {
  return ([operand, indices, updates], [od, id, ud], params, size) => {
    const dn = params.dimensionNumbers;
    const add1 = (xs: number[]) => xs.map((x) => x + 1);
    const x = batchDimAt(operand!, od!, 0, size);
    const u = batchDimAt(updates!, ud!, 0, size);
    if (id === null) {
      const dimensionNumbers = {
        updateWindowDims: [0, ...add1(dn.updateWindowDims)],
        insertedWindowDims: add1(dn.insertedWindowDims),
        scatterDimsToOperandDims: add1(dn.scatterDimsToOperandDims),
      };
      return [bind(prim, [x, indices!, u], { ...params, dimensionNumbers } as PrimitiveParams[P]), [0]];
    }
    const ix = withBatchCounter(batchDimAt(indices!, id, 0, size));
    const dimensionNumbers = {
      updateWindowDims: add1(dn.updateWindowDims),
      insertedWindowDims: [0, ...add1(dn.insertedWindowDims)],
      scatterDimsToOperandDims: [0, ...add1(dn.scatterDimsToOperandDims)],
    };
    return [bind(prim, [x, ix, u], { ...params, dimensionNumbers } as PrimitiveParams[P]), [0]];
  };
}

const dynamicSliceRule: BatchRule<'dynamic_slice'> = ([operand, ...indices], [od, ...ids], params, size) => {
  if (ids.every((d) => d === null)) {
    const starts = [...indices];
    starts.splice(od!, 0, int32Scalar(0));
    const sliceSizes = [...params.sliceSizes];
    sliceSizes.splice(od!, 0, size);
    return [bind('dynamic_slice', [operand!, ...starts], { sliceSizes }), [od!]];
  }
  // batched start indices: one gather of a window per batch element
  const n = indices.length;
  const index = batchStartIndices(indices, ids, size);
  return gatherRule([operand!, index], [od!, 0], {
    dimensionNumbers: { offsetDims: range(n), collapsedSliceDims: [], startIndexMap: range(n) },
    sliceSizes: params.sliceSizes, mode: 'clip', fillValue: null,
  }, size);
};

const scatterSetRule = scatterRule('scatter');

const dynamicUpdateSliceRule: BatchRule<'dynamic_update_slice'> = ([operand, update, ...indices], [od, ud, ...ids], params, size) => {
  if (ids.every((d) => d === null)) {
    const x = batchDimAt(operand!, od!, 0, size);
    const u = batchDimAt(update!, ud!, 0, size);
    return [bind('dynamic_update_slice', [x, u, int32Scalar(0), ...indices], params), [0]];
  }
  // batched start indices: one scatter of a window per batch element ('clip' clamps the window into range, as dynamic_update_slice does)
  const n = indices.length;
  const index = batchStartIndices(indices, ids, size);
  return scatterSetRule([operand!, index, update!], [od!, 0, ud!], {
    dimensionNumbers: { updateWindowDims: range(n), insertedWindowDims: [], scatterDimsToOperandDims: range(n) },
    mode: 'clip',
  }, size);
};

const dotGeneralRule: BatchRule<'dot_general'> = ([lhs, rhs], [ld, rd], params) => {
  const [[lc, rc], [lb, rb]] = params.dimensionNumbers;
  const add1 = (xs: number[]) => xs.map((x) => x + 1);
  if (ld !== null && rd !== null) {
    const l = moveaxis(lhs!, ld, 0);
    const r = moveaxis(rhs!, rd, 0);
    const dimensionNumbers: PrimitiveParams['dot_general']['dimensionNumbers'] = [[add1(lc), add1(rc)], [[0, ...add1(lb)], [0, ...add1(rb)]]];
    return [bind('dot_general', [l, r], { ...params, dimensionNumbers }), [0]];
  }
  // one side batched: its batch dimension becomes one of its free dimensions
  const free = (ndim: number, c: number[], b: number[]) => range(ndim).filter((i) => !c.includes(i) && !b.includes(i));
  if (ld !== null) {
    const lc2 = lc.map((a) => fullAxis(a, ld));
    const lb2 = lb.map((a) => fullAxis(a, ld));
    const outDim = lb.length + free(lhs!.ndim, lc2, lb2).indexOf(ld);
    return [bind('dot_general', [lhs!, rhs!], { ...params, dimensionNumbers: [[lc2, rc], [lb2, rb]] }), [outDim]];
  }
  const rc2 = rc.map((a) => fullAxis(a, rd!));
  const rb2 = rb.map((a) => fullAxis(a, rd!));
  const lhsFree = lhs!.ndim - lc.length - lb.length;
  const outDim = lb.length + lhsFree + free(rhs!.ndim, rc2, rb2).indexOf(rd!);
  return [bind('dot_general', [lhs!, rhs!], { ...params, dimensionNumbers: [[lc, rc2], [lb, rb2]] }), [outDim]];
};

const padRule: BatchRule<'pad'> = ([x, padValue], [xd, pd], params, size) => {
  if (pd === null) {
    const paddingConfig = [...params.paddingConfig];
    paddingConfig.splice(xd!, 0, [0, 0, 0]);
    return [bind('pad', [x!, padValue!], { paddingConfig }), [xd!]];
  }
  // a batched padding value: pad with zeros, then select the padding from a broadcast of the values (JAX's _pad_batch_rule)
  const xb = batchDimAt(x!, xd!, 0, size);
  const paddingConfig: [number, number, number][] = [[0, 0, 0], ...params.paddingConfig];
  const zero = convertElementType(int32Scalar(0), xb.dtype);
  const padded = bind1('pad', [xb, zero], { paddingConfig });
  const mask = bind1('pad', [broadcastInDim(arrayFromValues([true], [], 'bool'), xb.shape as number[], []), arrayFromValues([false], [], 'bool')], { paddingConfig });
  const fill = broadcastInDim(padValue!, padded.shape as number[], [0]);
  return [bind('select_n', [mask, fill, padded], {}), [0]];
};

const unreachable = (prim: string): BatchRule<Primitive> => () => {
  throw new Error(`vmap: ${prim} has no operands, so it is never batched`);
};

type UnaryRules = { [P in UnaryPrimitive]: BatchRule<P> };
type BinaryRules = { [P in BinaryPrimitive | ComparePrimitive]: BatchRule<P> };
type ReduceRules = { [P in ReducePrimitive]: BatchRule<P> };
type CumulativeRules = { [P in CumulativePrimitive]: BatchRule<P> };

const fromList = <K extends string, R>(names: readonly K[], rule: (p: K) => R): { [P in K]: R } =>
  Object.fromEntries(names.map((p) => [p, rule(p)])) as { [P in K]: R };

export const batchingRules: { [P in Primitive]: BatchRule<P> } = {
  ...(fromList(UNARY_PRIMITIVES, unaryRule) as UnaryRules),
  ...(fromList([...BINARY_PRIMITIVES, ...COMPARE_PRIMITIVES], (p) => elementwiseRule(p)) as BinaryRules),
  ...(fromList(REDUCE_PRIMITIVES, reduceRule) as ReduceRules),
  ...(fromList(CUMULATIVE_PRIMITIVES, cumulativeRule) as CumulativeRules),
  convert_element_type: unaryRule('convert_element_type'),
  // a width change adds or removes the last axis: the batch dimension goes first, so it is never that axis
  bitcast_convert_type: ([x], [d], params) => [bind('bitcast_convert_type', [moveaxis(x!, d!, 0)], params), [0]],
  select_n: elementwiseRule('select_n', (i) => i === 0),
  clamp: elementwiseRule('clamp', (i) => i !== 1),
  iota: unreachable('iota'),
  broadcast_in_dim: ([x], [d], { shape, broadcastDimensions }, size) => {
    const xb = moveaxis(x!, d!, 0);
    return [bind('broadcast_in_dim', [xb], { shape: [size, ...shape], broadcastDimensions: [0, ...broadcastDimensions.map((b) => b + 1)] }), [0]];
  },
  reshape: ([x], [d], { newSizes }, size) => [bind('reshape', [moveaxis(x!, d!, 0)], { newSizes: [size, ...newSizes] }), [0]],
  transpose: ([x], [d], { permutation }) => [bind('transpose', [x!], { permutation: [d!, ...permutation.map((p) => fullAxis(p, d!))] }), [0]],
  squeeze: ([x], [d], { dimensions }) => {
    const dims = dimensions.map((a) => fullAxis(a, d!));
    return [bind('squeeze', [x!], { dimensions: dims }), [afterRemoving(d!, dims)]];
  },
  rev: ([x], [d], { dimensions }) => [bind('rev', [x!], { dimensions: dimensions.map((a) => fullAxis(a, d!)) }), [d!]],
  slice: ([x], [d], { startIndices, limitIndices, strides }, size) => {
    const insert = (xs: number[], v: number) => [...xs.slice(0, d!), v, ...xs.slice(d!)];
    return [bind('slice', [x!], { startIndices: insert(startIndices, 0), limitIndices: insert(limitIndices, size), strides: strides && insert(strides, 1) }), [d!]];
  },
  pad: padRule,
  sort: (vals, dims, params, size) => {
    const outs = bind('sort', vals.map((v, i) => batchDimAt(v, dims[i]!, 0, size)), { ...params, dimension: params.dimension + 1 });
    return [outs, outs.map(() => 0)];
  },
  // top_k works on the last axis: the batch moves to the front
  // the linalg decompositions take leading batch axes: the vmapped one moves to the front of them
  qr: ([x], [d], params, size) => [bind('qr', [batchDimAt(x!, d!, 0, size)], params), [0, 0]],
  eigh: ([x], [d], params, size) => [bind('eigh', [batchDimAt(x!, d!, 0, size)], params), [0, 0]],
  svd: ([x], [d], params, size) => {
    const outs = bind('svd', [batchDimAt(x!, d!, 0, size)], params);
    return [outs, outs.map(() => 0)];
  },
  top_k: ([x], [d], params, size) => [bind('top_k', [batchDimAt(x!, d!, 0, size)], params), [0, 0]],
  // the linalg kernels take leading batch dims: the vmapped axis moves to the front (an unbatched operand is broadcast)
  cholesky: ([x], [d], params, size) => [bind('cholesky', [batchDimAt(x!, d!, 0, size)], params), [0]],
  lu: ([x], [d], params, size) => [bind('lu', [batchDimAt(x!, d!, 0, size)], params), [0, 0, 0]],
  triangular_solve: ([a, b], [da, db], params, size) => [bind('triangular_solve', [batchDimAt(a!, da!, 0, size), batchDimAt(b!, db!, 0, size)], params), [0]],
  concatenate: (vals, dims, { dimension }, size) => [bind('concatenate', vals.map((v, i) => batchDimAt(v, dims[i]!, 0, size)), { dimension: dimension + 1 }), [0]],
  dynamic_slice: dynamicSliceRule,
  dynamic_update_slice: dynamicUpdateSliceRule,
  gather: gatherRule,
  scatter: scatterSetRule,
  scatter_add: scatterRule('scatter_add'),
  scatter_mul: scatterRule('scatter_mul'),
  scatter_min: scatterRule('scatter_min'),
  scatter_max: scatterRule('scatter_max'),
  argmax: reduceRule('argmax'),
  argmin: reduceRule('argmin'),
  dot_general: dotGeneralRule,
  conv_general_dilated: convBatch,
  stop_gradient: unaryRule('stop_gradient'),
  checkpoint: checkpointBatch,
  custom_jvp_call: customJvpCallBatch,
  custom_vjp_call: customVjpCallBatch,
  custom_lin: customLinBatch,
  name: unaryRule('name'),
  device_put: unaryRule('device_put'),
  debug_callback: debugCallbackBatch,
  pure_callback: pureCallbackBatch,
  scan: scanBatch,
  while: whileBatch,
  cond: condBatch,
};
