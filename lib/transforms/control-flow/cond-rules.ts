// The cond primitive's transformation rules, after jax/_src/lax/
// control_flow/conditionals.py: every rule transforms all branches the same
// way and makes their outputs agree (the union of nonzero tangents, unknown
// or batched outputs). Partial evaluation (_cond_partial_eval) gives each
// branch its own residual slots, which the other branches fill with zeros;
// transposition transposes every branch; a batched index turns the cond into
// a select over all branches' results (_cond_batching_rule).
import type { Array } from '../../core/array.js';
import { bind, bind1 } from '../../core/bind.js';
import type { PrimitiveParams, ShapedArray } from '../../core/primitives.js';
import { ClosedJaxpr, Jaxpr, type JaxprEqn, Var, evalJaxpr, jaxprHasEffects } from '../../trace/jaxpr.js';
import { type BatchDim, moveaxis } from '../batching-rules.js';
import { type Tangent, instantiate, zerosLike } from '../jvp.js';
import { partialEvalJaxpr, partialEvalRules } from '../partial-eval.js';
import { type LinearInput, UndefinedPrimal, backwardPass } from '../transpose.js';
import { joinBranchConsts, traceHoisted } from '../../trace/hoisted-jaxpr.js';
import { batchJaxpr, jvpJaxpr } from './jaxprs.js';

type CondParams = PrimitiveParams['cond'];

const pick = <T>(xs: readonly T[], flags: readonly boolean[], want = true): T[] => xs.filter((_, i) => flags[i] === want);
const union = (flags: readonly (readonly boolean[])[]): boolean[] => flags[0]!.map((_, i) => flags.some((f) => f[i]));

// ---- jvp ----

export function condJvp(primals: Array[], tangents: Tangent[], params: CondParams): [Array[], Tangent[]] {
  const { branches } = params;
  const [index, ...ops] = primals as [Array, ...Array[]];
  const opsNz = tangents.slice(1).map((t) => t !== null);
  const outNz = union(branches.map((b) => jvpJaxpr(b, opsNz, []).outNonzeros));
  const jvps = branches.map((b) => jvpJaxpr(b, opsNz, outNz).jaxpr);
  const joined = joinBranchConsts(jvps);
  const dOps = ops.flatMap((x, i) => (opsNz[i] ? [instantiate(tangents[i + 1] ?? null, x.aval)] : []));
  const outs = bind('cond', [index, ...joined.consts, ...ops, ...dOps], { branches: joined.branches });
  const n = branches[0]!.outAvals.length;
  const dOuts = outs.slice(n);
  let k = 0;
  return [outs.slice(0, n), outNz.map((f) => (f ? dOuts[k++]! : null))];
}

// ---- partial evaluation ----

/** Traces fn into a jaxpr that must close over nothing (rules that build equations cannot add operands). */
function traceWithoutConsts(fn: (...args: Array[]) => Array[], avals: ShapedArray[]): ClosedJaxpr {
  const traced = traceHoisted(fn, avals);
  if (traced.consts.length) throw new Error(`cond partial evaluation: a branch closed over ${traced.consts.length} arrays (a jaxon bug)`);
  return traced.jaxpr;
}

/** JAX's _cond_partial_eval: with a known index, each branch splits into a known and an unknown part. */
export function condPartialEval(eqn: JaxprEqn, inUnknowns: readonly boolean[]): { known: JaxprEqn[]; unknown: JaxprEqn[] } {
  const { branches } = eqn.params as CondParams;
  if (inUnknowns[0]) return { known: [], unknown: [eqn] };
  const opsUk = inUnknowns.slice(1);
  const outUk = union(branches.map((b) => partialEvalJaxpr(b.jaxpr, opsUk).outUnknowns));
  const pes = branches.map((b) => partialEvalJaxpr(b.jaxpr, opsUk, { instantiate: outUk }));
  const slots = pes.flatMap((pe, branch) => pe.unknown.inVars.slice(0, pe.numResiduals).map((v, index) => ({ branch, index, aval: v.aval })));
  const knownOpAvals = pick(branches[0]!.inAvals, opsUk, false);
  const knownBranches = pes.map((pe, k) =>
    traceWithoutConsts((...knownOps) => {
      const outs = evalJaxpr(pe.known, [], knownOps);
      const n = outs.length - pe.numResiduals;
      return [...outs.slice(0, n), ...slots.map((s) => (s.branch === k ? outs[n + s.index]! : zerosLike(s.aval)))];
    }, knownOpAvals),
  );
  const residualVars = slots.map((s) => new Var(s.aval));
  const ops = eqn.inputs.slice(1);
  const knownEqn: JaxprEqn<'cond'> = {
    primitive: 'cond',
    inputs: [eqn.inputs[0]!, ...pick(ops, opsUk, false)],
    params: { branches: knownBranches },
    outVars: [...pick(eqn.outVars, outUk, false), ...residualVars],
  };
  const unknownBranches = pes.map((pe, k) => {
    const u = pe.unknown;
    const ins = [...slots.map((s) => (s.branch === k ? u.inVars[s.index]! : new Var(s.aval))), ...u.inVars.slice(pe.numResiduals)];
    return new ClosedJaxpr(new Jaxpr([], ins, u.eqns, u.outs), []);
  });
  const unknownEqn: JaxprEqn<'cond'> = {
    primitive: 'cond',
    inputs: [eqn.inputs[0]!, ...residualVars, ...pick(ops, opsUk)],
    params: { branches: unknownBranches },
    outVars: pick(eqn.outVars, outUk),
  };
  // a cond without outputs still runs when a branch has an effect (a print)
  const runs = (e: JaxprEqn<'cond'>) => e.outVars.length > 0 || e.params.branches.some((b) => jaxprHasEffects(b.jaxpr));
  return {
    known: runs(knownEqn) ? [knownEqn] : [],
    unknown: runs(unknownEqn) ? [unknownEqn] : [],
  };
}

partialEvalRules.cond = condPartialEval;

// ---- transposition ----

/** JAX's _cond_transpose: the index and the defined operands are residuals; each branch is transposed. */
export function condTranspose(cts: (Array | null)[], inputs: LinearInput[], params: CondParams): (Array | null)[] {
  const { branches } = params;
  const [index, ...ops] = inputs;
  if (index instanceof UndefinedPrimal) throw new Error('transpose: cond is not linear in its index (the linear jaxpr is malformed)');
  const lin = ops.map((x) => x instanceof UndefinedPrimal);
  const res = pick(ops, lin, false) as Array[];
  const opAvals = branches[0]!.inAvals;
  const linAvals = pick(opAvals, lin);
  const outAvals = branches[0]!.outAvals;
  const outCts = cts.map((c, i) => instantiate(c, outAvals[i]!));
  const transposed = branches.map((b) =>
    traceHoisted((...args) => {
      const r = args.slice(0, res.length);
      let j = 0;
      const bodyArgs = lin.map((l, i) => (l ? new UndefinedPrimal(opAvals[i]!) : r[j++]!));
      const inCts = backwardPass(b.jaxpr, b.consts, bodyArgs, args.slice(res.length));
      return pick(inCts, lin).map((c, i) => instantiate(c, linAvals[i]!));
    }, [...res.map((x) => x.aval), ...outAvals]),
  );
  const joined = joinBranchConsts(transposed);
  const outs = bind('cond', [index!, ...joined.consts, ...res, ...outCts], { branches: joined.branches });
  let k = 0;
  return [null, ...lin.map((l) => (l ? outs[k++]! : null))];
}

// ---- batching ----

export function condBatch(vals: Array[], dims: BatchDim[], params: CondParams, axisSize: number): [Array[], BatchDim[]] {
  const { branches } = params;
  const [index, ...ops] = vals as [Array, ...Array[]];
  const [indexDim, ...opDims] = dims;
  const opsBat = opDims.map((d) => d !== null);
  const opsAtZero = ops.map((x, i) => (opDims[i] === null ? x : moveaxis(x, opDims[i]!, 0)));
  if (indexDim === null) {
    const outBat = union(branches.map((b) => batchJaxpr(b, axisSize, opsBat, []).outBatched));
    const joined = joinBranchConsts(branches.map((b) => batchJaxpr(b, axisSize, opsBat, outBat).jaxpr));
    const outs = bind('cond', [index, ...joined.consts, ...opsAtZero], { branches: joined.branches });
    return [outs, outBat.map((b) => (b ? 0 : null))];
  }
  // a batched index: run every branch and select each example's result
  const which = moveaxis(index, indexDim!, 0);
  const all = branches[0]!.outAvals.map(() => true);
  const results = branches.map((b) => {
    const batched = batchJaxpr(b, axisSize, opsBat, all).jaxpr;
    return evalJaxpr(batched.jaxpr.jaxpr, [], [...batched.consts, ...opsAtZero]);
  });
  const outs = results[0]!.map((first, i) => {
    const pred = first.ndim === 1 ? which : bind1('broadcast_in_dim', [which], { shape: [...first.shape], broadcastDimensions: [0] });
    return bind1('select_n', [pred, ...results.map((r) => r[i]!)], {});
  });
  return [outs, outs.map(() => 0)];
}
