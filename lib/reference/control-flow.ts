// The reference interpreter's control flow: scan, while and cond evaluate
// their nested jaxprs equation by equation with evalPrimitive (so nested
// loops recurse), in plain loops over iterations. Slicing xs and stacking ys
// are row-major copies along the leading axis.
import type { Array } from '../core/array.js';
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import { type Atom, type Jaxpr, Literal, type Var } from '../trace/jaxpr.js';
import { type RefArray, refArray } from './array.js';
import { evalPrimitive } from './interpreter.js';

/** Evaluates a jaxpr on reference arrays. */
export function evalJaxprReference(jaxpr: Jaxpr, consts: readonly RefArray[], args: readonly RefArray[]): RefArray[] {
  const env = new Map<Var, RefArray>();
  const read = (a: Atom): RefArray => {
    if (a instanceof Literal) return refArray([], a.aval.dtype, [a.value]);
    const v = env.get(a);
    if (!v) throw new Error('reference: a jaxpr variable is read before it is defined (malformed jaxpr)');
    return v;
  };
  jaxpr.constVars.forEach((v, i) => env.set(v, consts[i]!));
  jaxpr.inVars.forEach((v, i) => env.set(v, args[i]!));
  for (const e of jaxpr.eqns) {
    const outs = evalPrimitive(e.primitive, e.inputs.map(read), e.params);
    e.outVars.forEach((v, i) => env.set(v, outs[i]!));
  }
  return jaxpr.outs.map(read);
}

/** A closed jaxpr's constants as reference arrays (control-flow jaxprs normally have none). */
function closedConsts(consts: readonly Array[]): RefArray[] {
  return consts.map((c) => refArray([...c.shape], c.dtype, globalThis.Array.from(c.dataSync() as ArrayLike<number>, Number)));
}

/** Element i along the leading axis. */
function row(x: RefArray, i: number): RefArray {
  const shape = x.shape.slice(1);
  const n = sizeOf(shape);
  return { shape, dtype: x.dtype, data: x.data.slice(i * n, (i + 1) * n) };
}

export function scanReference(inputs: RefArray[], params: PrimitiveParams['scan'], outs: ShapedArray[]): Float64Array[] {
  const { jaxpr, length, numConsts, numCarry, reverse } = params;
  const closed = closedConsts(jaxpr.consts);
  const consts = inputs.slice(0, numConsts);
  let carry = inputs.slice(numConsts, numConsts + numCarry);
  const xs = inputs.slice(numConsts + numCarry);
  const ys = outs.slice(numCarry).map((o) => new Float64Array(sizeOf(o.shape)));
  for (let t = 0; t < length; t++) {
    const i = reverse ? length - 1 - t : t;
    const results = evalJaxprReference(jaxpr.jaxpr, closed, [...consts, ...carry, ...xs.map((x) => row(x, i))]);
    carry = results.slice(0, numCarry);
    results.slice(numCarry).forEach((y, k) => ys[k]!.set(y.data, i * y.data.length));
  }
  return [...carry.map((c) => c.data.slice()), ...ys];
}

export function whileReference(inputs: RefArray[], params: PrimitiveParams['while']): Float64Array[] {
  const { condJaxpr, bodyJaxpr, condNconsts, bodyNconsts } = params;
  const condConsts = inputs.slice(0, condNconsts);
  const bodyConsts = inputs.slice(condNconsts, condNconsts + bodyNconsts);
  let carry = inputs.slice(condNconsts + bodyNconsts);
  for (;;) {
    const [pred] = evalJaxprReference(condJaxpr.jaxpr, closedConsts(condJaxpr.consts), [...condConsts, ...carry]);
    if (pred!.data[0] === 0) break;
    carry = evalJaxprReference(bodyJaxpr.jaxpr, closedConsts(bodyJaxpr.consts), [...bodyConsts, ...carry]);
  }
  return carry.map((c) => c.data.slice());
}

export function condReference(inputs: RefArray[], params: PrimitiveParams['cond']): Float64Array[] {
  const [index, ...ops] = inputs as [RefArray, ...RefArray[]];
  const n = params.branches.length;
  const branch = params.branches[Math.min(Math.max(index.data[0]!, 0), n - 1)]!;
  return evalJaxprReference(branch.jaxpr, closedConsts(branch.consts), ops).map((o) => o.data.slice());
}
