// Jaxpr plumbing shared by the control-flow primitives and their rules
// (after JAX's pe.convert_constvars_jaxpr, ad.jvp_jaxpr and
// batching.batch_jaxpr): tracing a function to a jaxpr whose closed-over
// values become leading inputs (control-flow jaxprs have no constvars, so a
// closed-over tracer of an outer transformation is an operand that the
// transformation sees), merging branch constants, and the jvp and batched
// versions of a jaxpr.
import type { Array } from '../../core/array.js';
import type { PrimitiveParams, ShapedArray } from '../../core/primitives.js';
import { fullRaise, withMainTrace } from '../../trace/core.js';
import { ClosedJaxpr, Jaxpr, type JaxprEqn, Var, evalJaxpr } from '../../trace/jaxpr.js';
import { traceToJaxpr } from '../../trace/jaxpr-trace.js';
import { batchDimAt } from '../batching-rules.js';
import { hasTangent, instantiate, jvpFlat } from '../jvp.js';
import { BatchTrace, BatchTracer } from '../vmap.js';

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

const CONTROL_FLOW = new Set<string>(['scan', 'while', 'cond']);

/** Whether an equation is control flow, which the compiler runs as an opaque call (its registered impl). */
export function isControlFlow(eqn: JaxprEqn): boolean {
  return CONTROL_FLOW.has(eqn.primitive);
}

/**
 * Whether the jaxpr runs control flow, so it cannot be compiled as one fused
 * program: at the top level, or inside a checkpoint (which the compiler
 * inlines before fusion).
 */
export function usesControlFlow(jaxpr: Jaxpr): boolean {
  return jaxpr.eqns.some((e) => isControlFlow(e) || (e.primitive === 'checkpoint' && usesControlFlow((e.params as PrimitiveParams['checkpoint']).jaxpr.jaxpr)));
}

/**
 * JAX's ad.jvp_jaxpr: a jaxpr from [...primals, ...tangents where nonzeros]
 * to [...outputs, ...tangents where outNonzeros]. `instantiate[i]` forces
 * output i's tangent (zeros when it is symbolically zero); non-floating
 * values never have tangents.
 */
export function jvpJaxpr(closed: ClosedJaxpr, nonzeros: readonly boolean[], instantiateOuts: readonly boolean[]): { jaxpr: HoistedJaxpr; outNonzeros: boolean[] } {
  const inAvals = closed.inAvals;
  const nz = inAvals.map((a, i) => (nonzeros[i] ?? false) && hasTangent(a));
  let outNonzeros: boolean[] = [];
  const fn = (...args: Array[]): Array[] => {
    const n = inAvals.length;
    let k = n;
    const tangents = nz.map((d) => (d ? args[k++]! : null));
    const [outs, outTangents] = jvpFlat((...xs) => evalJaxpr(closed.jaxpr, closed.consts, xs), args.slice(0, n), tangents);
    outNonzeros = outs.map((o, i) => hasTangent(o) && (outTangents[i] !== null || (instantiateOuts[i] ?? false)));
    return [...outs, ...outs.flatMap((o, i) => (outNonzeros[i] ? [instantiate(outTangents[i]!, o.aval)] : []))];
  };
  const jaxpr = traceHoisted(fn, [...inAvals, ...inAvals.filter((_, i) => nz[i])]);
  return { jaxpr, outNonzeros };
}

/** A value of the batched computation: [axisSize, ...aval] when batched (always at axis 0 here). */
export function batchedAval(a: ShapedArray, batched: boolean, axisSize: number): ShapedArray {
  return batched ? { ...a, shape: [axisSize, ...a.shape] } : a;
}

/**
 * JAX's batching.batch_jaxpr with every batch dimension at 0: the jaxpr of
 * the batched computation, from inputs batched where inBatched (leading axis
 * of size axisSize) to outputs batched where outBatched; `instantiateOuts[i]`
 * broadcasts output i when it would not be batched.
 */
export function batchJaxpr(closed: ClosedJaxpr, axisSize: number, inBatched: readonly boolean[], instantiateOuts: readonly boolean[]): { jaxpr: HoistedJaxpr; outBatched: boolean[] } {
  let outBatched: boolean[] = [];
  const fn = (...args: Array[]): Array[] =>
    withMainTrace('BatchTrace', (main) => new BatchTrace(main), (main) => {
      const trace = main.trace() as BatchTrace;
      const ins = args.map((a, i) => (inBatched[i] ? new BatchTracer(trace, a, 0) : a));
      const outs = evalJaxpr(closed.jaxpr, closed.consts, ins).map((o) => fullRaise(trace, o) as BatchTracer);
      outBatched = outs.map((o, i) => o.batchDim !== null || (instantiateOuts[i] ?? false));
      return outs.map((o, i) => (outBatched[i] ? batchDimAt(o.val, o.batchDim, 0, axisSize) : o.fullLower()));
    }, axisSize);
  const jaxpr = traceHoisted(fn, closed.inAvals.map((a, i) => batchedAval(a, inBatched[i] ?? false, axisSize)));
  return { jaxpr, outBatched };
}
