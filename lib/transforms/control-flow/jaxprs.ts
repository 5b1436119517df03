// The jvp and batched versions of a control-flow primitive's jaxpr (after
// JAX's ad.jvp_jaxpr and batching.batch_jaxpr), traced with
// trace/hoisted-jaxpr.ts so that closed-over values become leading inputs.
import type { Array } from '../../core/array.js';
import type { ShapedArray } from '../../core/primitives.js';
import { fullRaise, withMainTrace } from '../../trace/core.js';
import { type HoistedJaxpr, traceHoisted } from '../../trace/hoisted-jaxpr.js';
import { type ClosedJaxpr, evalJaxpr } from '../../trace/jaxpr.js';
import { batchDimAt } from '../batching-rules.js';
import { hasTangent, instantiate, jvpFlat } from '../jvp.js';
import { BatchTrace, BatchTracer } from '../vmap.js';

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
