// Abstract evaluation of the control-flow primitives (scan, while, cond),
// after JAX's _scan_abstract_eval / _while_loop_abstract_eval /
// _cond_abstract_eval: operands are checked against the avals of the nested
// jaxprs, and the outputs are the carry types (preserved by the body) and
// the stacked ys. Kept apart from primitives.ts, whose rules are all local.
import { ValueError, show } from './errors.js';
import type { PrimitiveParams, ShapedArray } from './primitives.js';
import { shapesEqual } from './shape.js';

const typeString = (a: ShapedArray): string => `${a.dtype}[${a.shape.join(',')}]`;
const sameType = (a: ShapedArray, b: ShapedArray): boolean => a.dtype === b.dtype && shapesEqual(a.shape, b.shape);

function fail(prim: string, message: string): never {
  throw new ValueError(`lax.${prim}: ${message}`);
}

function checkOperands(prim: string, what: string, given: readonly ShapedArray[], expected: readonly ShapedArray[]): void {
  if (given.length !== expected.length) fail(prim, `expected ${expected.length} ${what}, got ${given.length}`);
  given.forEach((g, i) => {
    if (!sameType(g, expected[i]!)) fail(prim, `${what} ${i} has type ${typeString(g)} but the jaxpr expects ${typeString(expected[i]!)}`);
  });
}

function checkCount(prim: string, name: string, n: number, max: number): void {
  if (!Number.isInteger(n) || n < 0 || n > max) fail(prim, `${name} must be an integer in [0, ${max}], got ${show(n)}`);
}

export const checkControlFlow = {
  scan(avals: ShapedArray[], params: PrimitiveParams['scan']): ShapedArray[] {
    const { jaxpr, length, numCarry, numConsts } = params;
    const inAvals = jaxpr.inAvals;
    const outAvals = jaxpr.outAvals;
    checkCount('scan', 'numConsts', numConsts, inAvals.length);
    checkCount('scan', 'numCarry', numCarry, Math.min(inAvals.length - numConsts, outAvals.length));
    if (!Number.isInteger(length) || length < 0) fail('scan', `length must be a non-negative integer, got ${show(length)}`);
    if (jaxpr.consts.length) fail('scan', `the body jaxpr must have no constvars (closed-over values are operands)`);
    if (avals.length !== inAvals.length) fail('scan', `expected ${inAvals.length} operands (consts, init, xs), got ${avals.length}`);
    const stacked = (a: ShapedArray) => ({ ...a, shape: [length, ...a.shape] });
    checkOperands('scan', 'consts', avals.slice(0, numConsts), inAvals.slice(0, numConsts));
    checkOperands('scan', 'carry', avals.slice(numConsts, numConsts + numCarry), inAvals.slice(numConsts, numConsts + numCarry));
    checkOperands('scan', 'xs', avals.slice(numConsts + numCarry), inAvals.slice(numConsts + numCarry).map(stacked));
    const carryIn = inAvals.slice(numConsts, numConsts + numCarry);
    outAvals.slice(0, numCarry).forEach((o, i) => {
      if (!sameType(o, carryIn[i]!)) {
        fail('scan', `the body's carry output ${i} has type ${typeString(o)} but its carry input has type ${typeString(carryIn[i]!)}`);
      }
    });
    return [...avals.slice(numConsts, numConsts + numCarry), ...outAvals.slice(numCarry).map(stacked)];
  },

  while(avals: ShapedArray[], params: PrimitiveParams['while']): ShapedArray[] {
    const { condJaxpr, bodyJaxpr, condNconsts, bodyNconsts } = params;
    checkCount('while', 'condNconsts', condNconsts, avals.length);
    checkCount('while', 'bodyNconsts', bodyNconsts, avals.length - condNconsts);
    if (condJaxpr.consts.length || bodyJaxpr.consts.length) fail('while', `the cond and body jaxprs must have no constvars`);
    const init = avals.slice(condNconsts + bodyNconsts);
    checkOperands('while', 'cond operands', [...avals.slice(0, condNconsts), ...init], condJaxpr.inAvals);
    checkOperands('while', 'body operands', [...avals.slice(condNconsts, condNconsts + bodyNconsts), ...init], bodyJaxpr.inAvals);
    const pred = condJaxpr.outAvals;
    if (pred.length !== 1 || pred[0]!.dtype !== 'bool' || pred[0]!.shape.length !== 0) {
      fail('while', `cond_fun must return a boolean scalar, but got output type(s) [${pred.map(typeString).join(', ')}]`);
    }
    checkOperands('while', 'body outputs', bodyJaxpr.outAvals, init);
    return init.map((a) => ({ ...a, shape: [...a.shape] }));
  },

  cond(avals: ShapedArray[], params: PrimitiveParams['cond']): ShapedArray[] {
    const { branches } = params;
    if (branches.length < 1) fail('cond', `needs at least one branch`);
    if (avals.length < 1) fail('cond', `needs an index operand`);
    const [index, ...ops] = avals as [ShapedArray, ...ShapedArray[]];
    if (index.dtype !== 'int32' || index.shape.length !== 0) fail('cond', `the index must be an int32 scalar, got ${typeString(index)}`);
    const outs = branches[0]!.outAvals;
    branches.forEach((b, i) => {
      if (b.consts.length) fail('cond', `branch ${i} must have no constvars`);
      checkOperands('cond', `operands of branch ${i}`, ops, b.inAvals);
      const o = b.outAvals;
      if (o.length !== outs.length || o.some((a, k) => !sameType(a, outs[k]!))) {
        fail('cond', `branch 0 and ${i} outputs must have the same types, got (${outs.map(typeString).join(', ')}) and (${o.map(typeString).join(', ')})`);
      }
    });
    return outs.map((a, k) => ({ shape: [...a.shape], dtype: a.dtype, weakType: branches.every((b) => b.outAvals[k]!.weakType) }));
  },
};
