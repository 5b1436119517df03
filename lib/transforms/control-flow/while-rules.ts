// The while primitive's transformation rules, after jax/_src/lax/
// control_flow/loops.py: jvp (the body's jvp with a fixed point over nonzero
// carry tangents; the cond ignores the tangents), partial evaluation
// (_while_partial_eval: a known loop computes the known carries, and the
// unknown outputs come from the whole loop run again, like remat), which
// makes linearize work, and a transpose rule that raises JAX's error: a
// while loop's trip count is data, so reverse mode has nothing to store its
// residuals in. Batching (_while_loop_batching_rule): with a batched
// predicate every carry is batched, the loop runs while any example's
// predicate holds, and finished examples keep their carry (select).
import type { Array } from '../../core/array.js';
import { bind, bind1 } from '../../core/bind.js';
import type { PrimitiveParams } from '../../core/primitives.js';
import { ClosedJaxpr, Jaxpr, type JaxprEqn, Var, evalJaxpr } from '../../trace/jaxpr.js';
import { type BatchDim, batchDimAt, moveaxis } from '../batching-rules.js';
import { type Tangent, instantiate } from '../jvp.js';
import { deadCodeElimination, partialEvalJaxpr, partialEvalRules } from '../partial-eval.js';
import type { LinearInput } from '../transpose.js';
import { permute, traceHoisted, withUnusedInputs } from '../../trace/hoisted-jaxpr.js';
import { batchJaxpr, jvpJaxpr } from './jaxprs.js';

type WhileParams = PrimitiveParams['while'];

const count = (flags: readonly boolean[]) => flags.filter((f) => f).length;
const pick = <T>(xs: readonly T[], flags: readonly boolean[], want = true): T[] => xs.filter((_, i) => flags[i] === want);
const sameFlags = (a: readonly boolean[], b: readonly boolean[]) => a.every((x, i) => x === b[i]);
const range = (from: number, to: number): number[] => globalThis.Array.from({ length: Math.max(to - from, 0) }, (_, k) => from + k);

function split<T>(xs: readonly T[], p: WhileParams): { cond: T[]; body: T[]; carry: T[] } {
  const c = p.condNconsts;
  const b = p.bodyNconsts;
  return { cond: xs.slice(0, c), body: xs.slice(c, c + b), carry: xs.slice(c + b) };
}

// ---- jvp ----

export function whileJvp(primals: Array[], tangents: Tangent[], params: WhileParams): [Array[], Tangent[]] {
  const { bodyJaxpr, condJaxpr } = params;
  const nz = split(tangents.map((t) => t !== null), params);
  const p = split(primals, params);
  const t = split(tangents, params);
  let carryNz = nz.carry;
  let jvp: ReturnType<typeof jvpJaxpr>;
  for (;;) {
    jvp = jvpJaxpr(bodyJaxpr, [...nz.body, ...carryNz], carryNz);
    const out = jvp.outNonzeros;
    if (sameFlags(out, carryNz)) break;
    carryNz = carryNz.map((n, i) => n || out[i]!);
  }
  const nb = p.body.length;
  const nCarry = p.carry.length;
  const inNz = [...nz.body, ...carryNz];
  const h = jvp.jaxpr.consts.length;
  const n = nb + nCarry;
  let k = 0;
  const tin = inNz.map((f) => (f ? k++ : -1));
  const group = (from: number, to: number) => [...range(from, to).map((i) => h + i), ...range(from, to).filter((i) => inNz[i]).map((i) => h + n + tin[i]!)];
  // the body takes [hoisted, bodyConsts, dbodyConsts, carry, dcarry] and returns [carry, dcarry]
  const body = permute(jvp.jaxpr.jaxpr, [...range(0, h), ...group(0, nb), ...group(nb, n)]);
  const cond = withUnusedInputs(condJaxpr, condJaxpr.inAvals.length, pick(p.carry, carryNz).map((x) => x.aval));
  const dBody = pick(t.body, nz.body).map((x) => x!);
  const dCarry = p.carry.map((x, i) => (carryNz[i] ? [instantiate(t.carry[i] ?? null, x.aval)] : [])).flat();
  const outs = bind('while', [...p.cond, ...jvp.jaxpr.consts, ...p.body, ...dBody, ...p.carry, ...dCarry], {
    bodyJaxpr: body,
    bodyNconsts: h + nb + dBody.length,
    condJaxpr: cond,
    condNconsts: params.condNconsts,
  });
  const dOuts = outs.slice(nCarry);
  let d = 0;
  return [outs.slice(0, nCarry), carryNz.map((f) => (f ? dOuts[d++]! : null))];
}

// ---- partial evaluation ----

/** JAX's _while_partial_eval: a loop over the known carries, and the whole loop again for the unknown ones. */
export function whilePartialEval(eqn: JaxprEqn, inUnknowns: readonly boolean[]): { known: JaxprEqn[]; unknown: JaxprEqn[] } {
  const params = eqn.params as WhileParams;
  const { bodyJaxpr, condJaxpr } = params;
  const uk = split(inUnknowns, params);
  let carryUk = uk.carry;
  let pe: ReturnType<typeof partialEvalJaxpr>;
  for (;;) {
    pe = partialEvalJaxpr(bodyJaxpr.jaxpr, [...uk.body, ...carryUk], { instantiate: carryUk });
    if (sameFlags(pe.outUnknowns, carryUk)) break;
    carryUk = carryUk.map((u, i) => u || pe.outUnknowns[i]!);
  }
  const condPe = partialEvalJaxpr(condJaxpr.jaxpr, [...uk.cond, ...carryUk]);
  const whole = { known: [], unknown: [eqn] };
  if (condPe.outUnknowns[0] || carryUk.every((u) => u)) return whole;

  const knownCarryOuts = pe.known.outs.slice(0, pe.known.outs.length - pe.numResiduals);
  const knownBody = new Jaxpr([], pe.known.inVars, deadCodeElimination(pe.known.eqns, knownCarryOuts), knownCarryOuts);
  const pred = condPe.known.outs.slice(0, 1);
  const knownCond = new Jaxpr([], condPe.known.inVars, deadCodeElimination(condPe.known.eqns, pred), pred);
  const ins = split(eqn.inputs, params);
  const knownLoop: JaxprEqn<'while'> = {
    primitive: 'while',
    inputs: [...pick(ins.cond, uk.cond, false), ...pick(ins.body, uk.body, false), ...pick(ins.carry, carryUk, false)],
    params: {
      bodyJaxpr: new ClosedJaxpr(knownBody, []),
      bodyNconsts: count(uk.body.map((u) => !u)),
      condJaxpr: new ClosedJaxpr(knownCond, []),
      condNconsts: count(uk.cond.map((u) => !u)),
    },
    outVars: pick(eqn.outVars, carryUk, false),
  };
  // the unknown outputs: the whole loop, its known outputs discarded
  const wholeLoop: JaxprEqn = { ...eqn, outVars: eqn.outVars.map((v, i) => (carryUk[i] ? v : new Var(v.aval))) };
  return { known: [knownLoop], unknown: [wholeLoop] };
}

partialEvalRules.while = whilePartialEval;

// ---- transposition ----

export function whileTranspose(_cts: (Array | null)[], _inputs: LinearInput[], _params: WhileParams): (Array | null)[] {
  throw new Error(
    'Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop values. ' +
      'Try using lax.scan, or using fori_loop with static start/stop.',
  );
}

// ---- batching ----

export function whileBatch(vals: Array[], dims: BatchDim[], params: WhileParams, axisSize: number): [Array[], BatchDim[]] {
  const { bodyJaxpr, condJaxpr } = params;
  const bat = split(dims.map((d) => d !== null), params);
  let carryBat = bat.carry;
  let predBatched = false;
  let body: ReturnType<typeof batchJaxpr>;
  let cond: ReturnType<typeof batchJaxpr>;
  for (;;) {
    body = batchJaxpr(bodyJaxpr, axisSize, [...bat.body, ...carryBat], carryBat);
    cond = batchJaxpr(condJaxpr, axisSize, [...bat.cond, ...carryBat], [false]);
    const out = body.outBatched;
    if (cond.outBatched[0] && !predBatched) {
      // examples finish at different iterations: every carry varies along the batch
      predBatched = true;
      carryBat = carryBat.map(() => true);
      continue;
    }
    if (sameFlags(out, carryBat)) break;
    carryBat = carryBat.map((b, i) => b || out[i]!);
  }
  const v = split(vals, params);
  const d = split(dims, params);
  const atZero = (xs: Array[], ds: BatchDim[]) => xs.map((x, i) => (ds[i] === null ? x : moveaxis(x, ds[i]!, 0)));
  const condConsts = atZero(v.cond, d.cond);
  const bodyConsts = atZero(v.body, d.body);
  const carry = v.carry.map((x, i) => (carryBat[i] ? batchDimAt(x, d.carry[i]!, 0, axisSize) : x));
  const outDims = carryBat.map((b) => (b ? 0 : null));
  if (!predBatched) {
    const outs = bind('while', [...cond.jaxpr.consts, ...condConsts, ...body.jaxpr.consts, ...bodyConsts, ...carry], {
      bodyJaxpr: body.jaxpr.jaxpr,
      bodyNconsts: body.jaxpr.consts.length + bodyConsts.length,
      condJaxpr: cond.jaxpr.jaxpr,
      condNconsts: cond.jaxpr.consts.length + condConsts.length,
    });
    return [outs, outDims];
  }
  // run while any example's predicate holds; an example whose predicate is false keeps its carry
  const c = cond.jaxpr;
  const b = body.jaxpr;
  const condAvals = c.jaxpr.inAvals.slice(c.consts.length);
  const bodyAvals = b.jaxpr.inAvals.slice(b.consts.length);
  const nCond = condConsts.length;
  const nBody = bodyConsts.length;
  const anyCond = traceHoisted((...args) => {
    const [pred] = evalJaxpr(c.jaxpr.jaxpr, [], [...c.consts, ...args]);
    return [bind1('reduce_or', [pred!], { axes: [0] })];
  }, condAvals);
  const selectBody = traceHoisted((...args) => {
    const cc = args.slice(0, nCond);
    const bc = args.slice(nCond, nCond + nBody);
    const xs = args.slice(nCond + nBody);
    const [pred] = evalJaxpr(c.jaxpr.jaxpr, [], [...c.consts, ...cc, ...xs]);
    const next = evalJaxpr(b.jaxpr.jaxpr, [], [...b.consts, ...bc, ...xs]);
    return next.map((y, i) => {
      const p = y.ndim === 1 ? pred! : bind1('broadcast_in_dim', [pred!], { shape: [...y.shape], broadcastDimensions: [0] });
      return bind1('select_n', [p, xs[i]!, y], {});
    });
  }, [...condAvals.slice(0, nCond), ...bodyAvals.slice(0, nBody), ...bodyAvals.slice(nBody)]);
  const outs = bind('while', [...anyCond.consts, ...condConsts, ...selectBody.consts, ...condConsts, ...bodyConsts, ...carry], {
    bodyJaxpr: selectBody.jaxpr,
    bodyNconsts: selectBody.consts.length + nCond + nBody,
    condJaxpr: anyCond.jaxpr,
    condNconsts: anyCond.consts.length + nCond,
  });
  return [outs, outDims];
}
