// The rules of the checkpoint (remat) primitive, after jax/_src/ad_checkpoint.py.
// Eager evaluation runs its jaxpr. jvp is the jvp of the jaxpr, checkpointed
// again. Partial evaluation (linearize) is where the policy acts: the
// jaxpr is split, and for each known value the unknown side needs the
// policy of the equation that made it decides whether it is saved as a
// residual, recomputed on the unknown side from the checkpoint's inputs, or
// offloaded (device_put to the offload memory kind right after it is
// computed, back right before the backward pass reads it). The known part
// and the unknown part are both checkpoints; the unknown one is marked
// `differentiated`, and its transpose is its transposed jaxpr checkpointed
// again, so the recomputation happens in the backward pass, also under jit
// (where preventCse keeps it from being merged with the forward pass; see
// compiler/inline-checkpoints.ts). Batching batches the jaxpr.
//
// The rules are function declarations: the rule tables import them, and
// they import the transforms whose tables those are (an import cycle that
// hoisted functions make harmless).
import { Array } from '../core/array.js';
import { bind } from '../core/bind.js';
import { ValueError, show } from '../core/errors.js';
import { tidy } from '../core/memory.js';
import { withMemorySpace } from '../core/memory-space.js';
import { type CheckpointPolicy, MEMORY_KINDS, type MemoryKind, type PrimitiveParams } from '../core/primitives.js';
import { fullRaise, withMainTrace } from '../trace/core.js';
import { type Atom, ClosedJaxpr, Jaxpr, type JaxprEqn, Var, evalJaxpr } from '../trace/jaxpr.js';
import { traceToJaxpr } from '../trace/jaxpr-trace.js';
import { hoistConsts } from '../trace/hoisted-jaxpr.js';
import { registerImpl } from '../runtime/eager.js';
import { type BatchDim, moveaxis } from './batching-rules.js';
import { type Tangent, jvpFlat } from './jvp.js';
import { partialEvalJaxpr, partialEvalRules } from './partial-eval.js';
import { type LinearInput, UndefinedPrimal, backwardPass } from './transpose.js';
import { BatchTrace, BatchTracer } from './vmap.js';

type Params = PrimitiveParams['checkpoint'];

/** A policy's decision, normalized. */
export type Decision = 'save' | 'recompute' | { offload: [MemoryKind, MemoryKind] };

const policyName = (policy: CheckpointPolicy) => policy.name || String(policy);

/** What `policy` decides for an equation's outputs; no policy saves nothing (JAX's default for checkpoint). */
export function decide(policy: CheckpointPolicy | null, eqn: JaxprEqn): Decision {
  if (policy === null) return 'recompute';
  const d = policy(eqn.primitive, eqn.inputs.map((a) => a.aval), eqn.params as Readonly<Record<string, unknown>>);
  if (d === true || d === 'save') return 'save';
  if (d === false || d === 'recompute') return 'recompute';
  if (d !== null && typeof d === 'object' && globalThis.Array.isArray((d as { offload?: unknown }).offload)) {
    const kinds = (d as { offload: unknown[] }).offload;
    if (kinds.length === 2 && kinds.every((k) => MEMORY_KINDS.includes(k as MemoryKind))) return { offload: kinds as [MemoryKind, MemoryKind] };
  }
  throw new ValueError(
    `jax.checkpoint: the policy ${policyName(policy)} returned ${show(d)} for ${eqn.primitive}; a policy must return true / 'save', ` +
      `false / 'recompute', or { offload: [src, dst] } with memory kinds among ${MEMORY_KINDS.join(', ')}`,
  );
}

/** Binds checkpoint on a freshly traced program; the constants it captured are its leading operands. */
export function bindCheckpoint(closed: ClosedJaxpr, args: Array[], params: Omit<Params, 'jaxpr'>): Array[] {
  const { jaxpr, consts } = hoistConsts(closed);
  const outs = bind('checkpoint', [...consts, ...args], { jaxpr, preventCse: params.preventCse, differentiated: params.differentiated, policy: params.policy });
  // the trace's own views of concrete constants: whoever needs them past the bind holds views of its own
  for (const c of consts) if (!c.isTracer && !outs.includes(c)) c.dispose();
  return outs;
}

// ---- eager evaluation ----

export function checkpointImpl(inputs: Array[], { jaxpr }: Params): Array[] {
  const outs = tidy(() => evalJaxpr(jaxpr.jaxpr, [], inputs));
  // an output that is an operand (or repeats an output) gets a view of its own, as aliasing primitives give
  const seen = new Set<Array>(inputs);
  return outs.map((o) => {
    if (!seen.has(o)) {
      seen.add(o);
      return o;
    }
    return new Array(o.storage('jax.checkpoint').retain(), o.shape, o.dtype, o.weakType, o.memorySpace);
  });
}

registerImpl('checkpoint', checkpointImpl);

// ---- jvp ----

export function checkpointJvp(primals: Array[], tangents: Tangent[], params: Params): [Array[], Tangent[]] {
  const inner = params.jaxpr.jaxpr;
  const n = primals.length;
  const given = tangents.filter((t): t is Array => t !== null);
  let outNonzero: boolean[] = [];
  const closed = traceToJaxpr((...xs) => {
    let k = n;
    const ts = tangents.map((t) => (t === null ? null : xs[k++]!));
    const [outs, outTangents] = jvpFlat((...a) => evalJaxpr(inner, [], a), xs.slice(0, n), ts);
    outNonzero = outTangents.map((t) => t !== null);
    return [...outs, ...outTangents.filter((t): t is Array => t !== null)];
  }, [...primals.map((p) => p.aval), ...given.map((t) => t.aval)]);
  const results = bindCheckpoint(closed, [...primals, ...given], params);
  const m = inner.outs.length;
  let k = m;
  return [results.slice(0, m), outNonzero.map((nz) => (nz ? results[k++]! : null))];
}

// ---- partial evaluation: where the policy acts ----

/**
 * Splits a checkpoint with some unknown operands into a known checkpoint
 * (the known outputs, then the residuals it computes) and an unknown,
 * differentiated one (residuals and unknown operands in; the unknown outputs
 * out) that recomputes what the policy did not save. Residuals that are
 * operands of the checkpoint are passed along, not output again.
 */
export function checkpointPartialEval(eqn: JaxprEqn, inUnknowns: readonly boolean[]): { known: JaxprEqn[]; unknown: JaxprEqn[] } {
  const params = eqn.params as Params;
  const inner = params.policy === null ? params.jaxpr.jaxpr : withPolicyInBodies(params.jaxpr.jaxpr, params.policy);
  const original = new Set(inner.eqns);
  const decisions = new Map<JaxprEqn, Decision>();
  const decision = (e: JaxprEqn): Decision => {
    let d = decisions.get(e);
    // the known half of a scan or cond split by its own rule outputs what the policy chose inside its bodies
    if (d === undefined) decisions.set(e, (d = !original.has(e) && (e.primitive === 'scan' || e.primitive === 'cond') ? 'save' : decide(params.policy, e)));
    return d;
  };
  const pe = partialEvalJaxpr(inner, inUnknowns, { saveable: (e) => decision(e) !== 'recompute' });
  const producer = new Map<Var, JaxprEqn>();
  for (const e of [...inner.eqns, ...pe.known.eqns]) for (const v of e.outVars) producer.set(v, e);
  const operandOf = new Map<Var, Atom>(inner.inVars.map((v, i) => [v, eqn.inputs[i]!]));

  const numKnownOuts = pe.known.outs.length - pe.numResiduals;
  const knownEqns = [...pe.known.eqns];
  const knownResidualOuts: Atom[] = [];
  const knownResidualVars: Var[] = [];
  const unknownInVars = [...pe.unknown.inVars];
  const prologue: JaxprEqn[] = [];
  const residualOperands = pe.unknown.inVars.slice(0, pe.numResiduals).map((r, j): Atom => {
    const operand = operandOf.get(r);
    if (operand) return operand;
    let saved: Var = r;
    const d = decision(producer.get(r)!);
    if (typeof d === 'object') {
      const [src, dst] = d.offload;
      saved = new Var(withMemorySpace(r.aval, dst));
      knownEqns.push({ primitive: 'device_put', inputs: [r], params: { srcKind: src, dstKind: dst }, outVars: [saved] });
      const offloaded = new Var(saved.aval);
      unknownInVars[j] = offloaded;
      prologue.push({ primitive: 'device_put', inputs: [offloaded], params: { srcKind: dst, dstKind: src }, outVars: [r] });
    }
    knownResidualOuts.push(saved);
    const outer = new Var(saved.aval);
    knownResidualVars.push(outer);
    return outer;
  });

  const knownOutVars = [...eqn.outVars.filter((_, i) => !pe.outUnknowns[i]), ...knownResidualVars];
  const known: JaxprEqn[] = [];
  if (knownOutVars.length) {
    const jaxpr = new Jaxpr([], pe.known.inVars, knownEqns, [...pe.known.outs.slice(0, numKnownOuts), ...knownResidualOuts]);
    known.push({
      primitive: 'checkpoint',
      inputs: eqn.inputs.filter((_, i) => !inUnknowns[i]),
      params: { ...params, jaxpr: new ClosedJaxpr(jaxpr, []) },
      outVars: knownOutVars,
    });
  }
  const unknownJaxpr = new Jaxpr([], unknownInVars, [...prologue, ...pe.unknown.eqns], pe.unknown.outs);
  const unknown: JaxprEqn = {
    primitive: 'checkpoint',
    inputs: [...residualOperands, ...eqn.inputs.filter((_, i) => inUnknowns[i])],
    params: { ...params, jaxpr: new ClosedJaxpr(unknownJaxpr, []), differentiated: true },
    outVars: eqn.outVars.filter((_, i) => pe.outUnknowns[i]),
  };
  return { known, unknown: [unknown] };
}

partialEvalRules.checkpoint = checkpointPartialEval;

/**
 * The policy reaches inside scan and cond (JAX's partial_eval_jaxpr_custom rules pass `saveable` down): each body
 * becomes a checkpoint under the same policy, so when the scan's or cond's own partial-evaluation rule splits it, the
 * residuals of its body are chosen by the policy (saved, offloaded, or recomputed per iteration) instead of the
 * whole loop being recomputed from its inputs. A while loop keeps no per-iteration residuals (its unknown half
 * re-runs the whole loop, as JAX's _while_partial_eval), so there is nothing for a policy to choose inside it.
 */
function withPolicyInBodies(jaxpr: Jaxpr, policy: CheckpointPolicy): Jaxpr {
  const wrap = (closed: ClosedJaxpr): ClosedJaxpr => {
    const body = closed.jaxpr;
    const ins = body.inVars.map((v) => new Var(v.aval));
    const outs = body.outs.map((a) => new Var(a.aval));
    const call: JaxprEqn = {
      primitive: 'checkpoint',
      inputs: ins,
      params: { jaxpr: new ClosedJaxpr(new Jaxpr([], body.inVars, body.eqns, body.outs), []), preventCse: false, differentiated: false, policy },
      outVars: outs,
    };
    const constVars = body.constVars.map((v) => new Var(v.aval));
    // constants of the body stay constants of the wrapper, passed to the checkpoint as leading operands
    if (body.constVars.length) {
      call.inputs = [...constVars, ...ins];
      (call.params as Params).jaxpr = new ClosedJaxpr(new Jaxpr([], [...body.constVars, ...body.inVars], body.eqns, body.outs), []);
    }
    return new ClosedJaxpr(new Jaxpr(constVars, ins, [call], outs), closed.consts);
  };
  const eqns = jaxpr.eqns.map((e): JaxprEqn => {
    if (e.primitive === 'scan') {
      const p = e.params as PrimitiveParams['scan'];
      return { ...e, params: { ...p, jaxpr: wrap(p.jaxpr) } };
    }
    if (e.primitive === 'cond') {
      const p = e.params as PrimitiveParams['cond'];
      return { ...e, params: { ...p, branches: p.branches.map(wrap) } };
    }
    return e;
  });
  return new Jaxpr(jaxpr.constVars, jaxpr.inVars, eqns, jaxpr.outs);
}

// ---- transpose ----

/** Transposes the jaxpr (recomputing its non-linear part first) and checkpoints the result. */
export function checkpointTranspose(cts: (Array | null)[], inputs: LinearInput[], params: Params): (Array | null)[] {
  const inner = params.jaxpr.jaxpr;
  const linear = inputs.map((x) => x instanceof UndefinedPrimal);
  const values = inputs.filter((x): x is Array => !(x instanceof UndefinedPrimal));
  const given = cts.filter((c): c is Array => c !== null);
  if (given.length === 0) return inputs.map(() => null);
  let nonzero: boolean[] = [];
  const closed = traceToJaxpr((...xs) => {
    let a = 0;
    const args = inputs.map((x) => (x instanceof UndefinedPrimal ? x : xs[a++]!));
    let c = values.length;
    const outCts = cts.map((ct) => (ct === null ? null : xs[c++]!));
    const inCts = backwardPass(inner, [], args, outCts).filter((_, i) => linear[i]);
    nonzero = inCts.map((x) => x !== null);
    return inCts.filter((x): x is Array => x !== null);
  }, [...values.map((x) => x.aval), ...given.map((c) => c.aval)]);
  if (!nonzero.some((nz) => nz)) return inputs.map(() => null);
  const results = bindCheckpoint(closed, [...values, ...given], { ...params, differentiated: true });
  let l = 0;
  let k = 0;
  return inputs.map((_, i) => (linear[i] ? (nonzero[l++] ? results[k++]! : null) : null));
}

// ---- batching ----

export function checkpointBatch(vals: Array[], dims: BatchDim[], params: Params, axisSize: number): [Array[], BatchDim[]] {
  const moved = vals.map((v, i) => (dims[i] === null ? v : moveaxis(v, dims[i]!, 0)));
  let outDims: BatchDim[] = [];
  const closed = traceToJaxpr(
    (...xs) =>
      withMainTrace('BatchTrace', (main) => new BatchTrace(main), (main) => {
        const trace = main.trace() as BatchTrace;
        const ins = xs.map((x, i) => (dims[i] === null ? x : new BatchTracer(trace, x, 0)));
        const outs = evalJaxpr(params.jaxpr.jaxpr, [], ins).map((o) => fullRaise(trace, o) as BatchTracer);
        outDims = outs.map((o) => (o.batchDim === null ? null : 0));
        return outs.map((o) => (o.batchDim === null ? o.val : moveaxis(o.val, o.batchDim, 0)));
      }, axisSize),
    moved.map((v) => v.aval),
  );
  return [bindCheckpoint(closed, moved, params), outDims];
}

