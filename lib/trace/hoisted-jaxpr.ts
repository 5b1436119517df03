// Jaxpr plumbing for primitives that carry jaxprs (control flow, checkpoint),
// after JAX's pe.convert_constvars_jaxpr: tracing a function to a jaxpr
// whose closed-over values become leading inputs (such jaxprs have no
// constvars, so a closed-over tracer of an outer transformation is an
// operand that the transformation sees), reordering and padding a jaxpr's
// inputs, and merging the constants of separately traced branches.
import type { Array } from '../core/array.js';
import type { ShapedArray } from '../core/primitives.js';
import { ClosedJaxpr, Jaxpr, Var } from './jaxpr.js';
import { traceToJaxpr } from './jaxpr-trace.js';

/** A jaxpr without constvars and the values of its leading `consts.length` inputs. */
export interface HoistedJaxpr {
  jaxpr: ClosedJaxpr;
  consts: Array[];
}

/** Turns constvars into leading inputs (JAX's convert_constvars_jaxpr). */
export function hoistConsts(closed: ClosedJaxpr): HoistedJaxpr {
  const j = closed.jaxpr;
  return { jaxpr: new ClosedJaxpr(new Jaxpr([], [...j.constVars, ...j.inVars], j.eqns, j.outs), []), consts: [...closed.consts] };
}

/** Traces fn on avals; what it closes over (arrays, outer tracers) becomes leading inputs. */
export function traceHoisted(fn: (...args: Array[]) => Array[], avals: ShapedArray[]): HoistedJaxpr {
  return hoistConsts(traceToJaxpr(fn, avals));
}

/** Disposes the traced constants that are concrete arrays we own (operands bound under a trace are owned by that trace's jaxpr). */
export function disposeConsts(consts: readonly Array[]): void {
  for (const c of consts) if (!c.isTracer && !c.isDisposed) c.dispose();
}

/** A jaxpr with inputs and outputs reordered: inVars[i] = old inVars[inOrder[i]], outs likewise. */
export function permute(closed: ClosedJaxpr, inOrder: readonly number[], outOrder?: readonly number[]): ClosedJaxpr {
  const j = closed.jaxpr;
  const outs = outOrder ? outOrder.map((i) => j.outs[i]!) : j.outs;
  return new ClosedJaxpr(new Jaxpr(j.constVars, inOrder.map((i) => j.inVars[i]!), j.eqns, outs), closed.consts);
}

/** The jaxpr with extra unused inputs of these avals inserted at `at`. */
export function withUnusedInputs(closed: ClosedJaxpr, at: number, avals: readonly ShapedArray[]): ClosedJaxpr {
  const j = closed.jaxpr;
  const ins = [...j.inVars];
  ins.splice(at, 0, ...avals.map((a) => new Var(a)));
  return new ClosedJaxpr(new Jaxpr(j.constVars, ins, j.eqns, j.outs), closed.consts);
}

/**
 * Branches traced separately, each with its own constants, made to take all
 * of them: every branch's inputs become [...allConsts, ...operands].
 */
export function joinBranchConsts(branches: readonly HoistedJaxpr[]): { branches: ClosedJaxpr[]; consts: Array[] } {
  const consts = branches.flatMap((b) => b.consts);
  const avals = branches.map((b) => b.consts.map((c) => c.aval));
  const joined = branches.map((b, k) => {
    const before = avals.slice(0, k).flat();
    const after = avals.slice(k + 1).flat();
    return withUnusedInputs(withUnusedInputs(b.jaxpr, 0, before), before.length + b.consts.length, after);
  });
  return { branches: joined, consts };
}
