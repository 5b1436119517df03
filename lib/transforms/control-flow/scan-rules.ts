// The scan primitive's transformation rules, after jax/_src/lax/control_flow/
// loops.py: jvp (the jvp of the body, with a fixed point over which carries
// have nonzero tangents), partial evaluation (_scan_partial_eval: the body
// split into a known scan, which also stacks the residuals as ys, and an
// unknown scan; loop-invariant residuals are hoisted out of the loop rather
// than stacked), transposition (a scan in the other direction over the
// transposed body, with the cotangents of the carries as its carry and the
// linear constants' cotangents accumulated), and batching (a fixed point over
// which carries are batched; xs and ys are batched at axis 1).
import type { Array } from '../../core/array.js';
import { bind, bind1 } from '../../core/bind.js';
import type { PrimitiveParams, ShapedArray } from '../../core/primitives.js';
import { ClosedJaxpr, Jaxpr, type JaxprEqn, Literal, Var, type Atom, eqnHasEffects, jaxprHasEffects } from '../../trace/jaxpr.js';
import { type BatchDim, batchDimAt, moveaxis } from '../batching-rules.js';
import { type Tangent, instantiate, zerosLike } from '../jvp.js';
import { deadCodeElimination, partialEvalJaxpr, partialEvalRules } from '../partial-eval.js';
import { type LinearInput, UndefinedPrimal, backwardPass } from '../transpose.js';
import { permute, traceHoisted } from '../../trace/hoisted-jaxpr.js';
import { batchJaxpr, jvpJaxpr } from './jaxprs.js';

type ScanParams = PrimitiveParams['scan'];

const count = (flags: readonly boolean[]) => flags.filter((f) => f).length;
const pick = <T>(xs: readonly T[], flags: readonly boolean[], want = true): T[] => xs.filter((_, i) => flags[i] === want);
const stacked = (a: ShapedArray, length: number): ShapedArray => ({ ...a, shape: [length, ...a.shape] });
const sameFlags = (a: readonly boolean[], b: readonly boolean[]) => a.every((x, i) => x === b[i]);
const range = (from: number, to: number): number[] => globalThis.Array.from({ length: Math.max(to - from, 0) }, (_, k) => from + k);
/** For each set flag, how many set flags precede it. */
function positions(flags: readonly boolean[]): number[] {
  let k = 0;
  return flags.map((f) => (f ? k++ : -1));
}

function split<T>(xs: readonly T[], p: ScanParams): { consts: T[]; carry: T[]; xs: T[] } {
  return { consts: xs.slice(0, p.numConsts), carry: xs.slice(p.numConsts, p.numConsts + p.numCarry), xs: xs.slice(p.numConsts + p.numCarry) };
}

// ---- jvp ----

export function scanJvp(primals: Array[], tangents: Tangent[], params: ScanParams): [Array[], Tangent[]] {
  const { jaxpr, numConsts, numCarry } = params;
  const nz = split(tangents.map((t) => t !== null), params);
  const numYs = jaxpr.outAvals.length - numCarry;
  let carryNz = nz.carry;
  let jvp: ReturnType<typeof jvpJaxpr>;
  // a carry whose tangent becomes nonzero in the body is nonzero from the start
  for (;;) {
    jvp = jvpJaxpr(jaxpr, [...nz.consts, ...carryNz, ...nz.xs], [...carryNz, ...new globalThis.Array<boolean>(numYs).fill(false)]);
    const out = jvp.outNonzeros.slice(0, numCarry);
    if (sameFlags(out, carryNz)) break;
    carryNz = carryNz.map((n, i) => n || out[i]!);
  }
  const inNz = [...nz.consts, ...carryNz, ...nz.xs];
  const outNz = jvp.outNonzeros;
  // jvp.jaxpr maps [hoisted, ...primals, ...nonzero tangents] to [...outs, ...nonzero tangents];
  // the scan body takes [consts, dconsts, carry, dcarry, xs, dxs] and returns [carry, dcarry, ys, dys]
  const h = jvp.jaxpr.consts.length;
  const n = primals.length;
  const m = numCarry + numYs;
  const tin = positions(inNz);
  const tout = positions(outNz);
  const inGroup = (from: number, to: number) => [...range(from, to).map((i) => h + i), ...range(from, to).filter((i) => inNz[i]).map((i) => h + n + tin[i]!)];
  const outGroup = (from: number, to: number) => [...range(from, to), ...range(from, to).filter((i) => outNz[i]).map((i) => m + tout[i]!)];
  const body = permute(
    jvp.jaxpr.jaxpr,
    [...range(0, h), ...inGroup(0, numConsts), ...inGroup(numConsts, numConsts + numCarry), ...inGroup(numConsts + numCarry, n)],
    [...outGroup(0, numCarry), ...outGroup(numCarry, m)],
  );
  const operands = (from: number, to: number) => [
    ...range(from, to).map((i) => primals[i]!),
    ...range(from, to).filter((i) => inNz[i]).map((i) => instantiate(tangents[i] ?? null, primals[i]!.aval)),
  ];
  const outs = bind('scan', [...jvp.jaxpr.consts, ...operands(0, numConsts), ...operands(numConsts, numConsts + numCarry), ...operands(numConsts + numCarry, n)], {
    ...params,
    jaxpr: body,
    numConsts: h + numConsts + count(nz.consts),
    numCarry: numCarry + count(carryNz),
  });
  const nCarryNz = count(carryNz);
  const carry = outs.slice(0, numCarry);
  const dcarry = outs.slice(numCarry, numCarry + nCarryNz);
  const ys = outs.slice(numCarry + nCarryNz, numCarry + nCarryNz + numYs);
  const dys = outs.slice(numCarry + nCarryNz + numYs);
  return [
    [...carry, ...ys],
    [...carryNz.map((d, i) => (d ? dcarry[tout[i]!]! : null)), ...outNz.slice(numCarry).map((d, i) => (d ? dys[tout[numCarry + i]! - nCarryNz]! : null))],
  ];
}

// ---- partial evaluation ----

/** Copies equations with their variables renamed (inputs through `env`, outputs to fresh variables recorded in `env`). */
function copyEqns(eqns: readonly JaxprEqn[], env: Map<Var, Atom>): JaxprEqn[] {
  const atom = (a: Atom): Atom => (a instanceof Literal ? a : (env.get(a) ?? a));
  return eqns.map((e) => {
    const outVars = e.outVars.map((v) => {
      const fresh = new Var(v.aval);
      env.set(v, fresh);
      return fresh;
    });
    return { ...e, inputs: e.inputs.map(atom), outVars };
  });
}

/**
 * JAX's _scan_partial_eval. Which carries are unknown is a fixed point (a
 * carry that depends on an unknown value is unknown from the start). The
 * residuals the unknown body needs are: known constants (passed through),
 * values computed from known constants only (computed once, before the
 * loop), known xs (passed through), and the rest, stacked as extra ys of the
 * known scan.
 */
export function scanPartialEval(eqn: JaxprEqn, inUnknowns: readonly boolean[]): { known: JaxprEqn[]; unknown: JaxprEqn[] } {
  const params = eqn.params as ScanParams;
  const { jaxpr, numCarry, length } = params;
  const body = jaxpr.jaxpr;
  const uk = split(inUnknowns, params);
  const numYs = body.outs.length - numCarry;
  let carryUk = uk.carry;
  let pe: ReturnType<typeof partialEvalJaxpr>;
  for (;;) {
    pe = partialEvalJaxpr(body, [...uk.consts, ...carryUk, ...uk.xs], { instantiate: [...carryUk, ...new globalThis.Array<boolean>(numYs).fill(false)] });
    const out = pe.outUnknowns.slice(0, numCarry);
    if (sameFlags(out, carryUk)) break;
    carryUk = carryUk.map((u, i) => u || out[i]!);
  }
  const ysUk = pe.outUnknowns.slice(numCarry);
  const bodyUk = [...uk.consts, ...carryUk, ...uk.xs];
  const outer = split(eqn.inputs, params);
  const outerOuts = { carry: eqn.outVars.slice(0, numCarry), ys: eqn.outVars.slice(numCarry) };
  const bodyIns = split(body.inVars, params);

  const residuals = pe.unknown.inVars.slice(0, pe.numResiduals);
  const knownOutsCount = pe.known.outs.length - pe.numResiduals;
  const residualOuts = pe.known.outs.slice(knownOutsCount) as Var[];

  // loop-invariant values of the known body: known constants and what is computed from them alone
  // (an equation with an effect runs every iteration: it is never hoisted)
  const invariant = new Set<Var>(pick(bodyIns.consts, uk.consts, false));
  for (const e of pe.known.eqns) {
    if (!eqnHasEffects(e) && e.inputs.every((a) => a instanceof Literal || invariant.has(a))) e.outVars.forEach((v) => invariant.add(v));
  }
  const xsPassThrough = new Map<Var, Atom>();
  bodyIns.xs.forEach((v, i) => {
    if (!uk.xs[i]) xsPassThrough.set(v, outer.xs[i]!);
  });

  // hoisted: the invariant equations the residuals need, copied before the loop with constants renamed to the outer operands
  const env = new Map<Var, Atom>();
  bodyIns.consts.forEach((v, i) => env.set(v, outer.consts[i]!));
  const invariantResiduals = residualOuts.filter((r) => invariant.has(r));
  const hoisted = copyEqns(deadCodeElimination(pe.known.eqns.filter((e) => !eqnHasEffects(e) && e.outVars.every((v) => invariant.has(v))), invariantResiduals), env);
  const extensiveResiduals = residualOuts.filter((r) => !invariant.has(r));
  const stackedResiduals = extensiveResiduals.filter((r) => !xsPassThrough.has(r));

  // the known scan: known consts, carries and xs; known carries and ys, then the stacked residuals
  const knownOuts = [...pe.known.outs.slice(0, knownOutsCount), ...stackedResiduals];
  const knownBody = new Jaxpr([], pe.known.inVars, deadCodeElimination(pe.known.eqns, knownOuts), knownOuts);
  const stackedVars = stackedResiduals.map((r) => new Var(stacked(r.aval, length)));
  const knownScan: JaxprEqn<'scan'> = {
    primitive: 'scan',
    inputs: pick(eqn.inputs, bodyUk, false),
    params: { ...params, jaxpr: new ClosedJaxpr(knownBody, []), numConsts: count(uk.consts.map((u) => !u)), numCarry: count(carryUk.map((u) => !u)) },
    outVars: [...pick(outerOuts.carry, carryUk, false), ...pick(outerOuts.ys, ysUk, false), ...stackedVars],
  };

  // the unknown scan: [invariant residuals, unknown consts] [unknown carries] [unknown xs, extensive residuals]
  const residualIn = new Map<Var, Var>(residualOuts.map((r, i) => [r, residuals[i]!]));
  const unknownIns = pe.unknown.inVars.slice(pe.numResiduals);
  const numUkConsts = count(uk.consts);
  const numUkCarry = count(carryUk);
  const ukBodyIns = [
    ...invariantResiduals.map((r) => residualIn.get(r)!),
    ...unknownIns.slice(0, numUkConsts),
    ...unknownIns.slice(numUkConsts, numUkConsts + numUkCarry),
    ...unknownIns.slice(numUkConsts + numUkCarry),
    ...extensiveResiduals.map((r) => residualIn.get(r)!),
  ];
  const stackedOf = new Map<Var, Var>(stackedResiduals.map((r, i) => [r, stackedVars[i]!]));
  const unknownScan: JaxprEqn<'scan'> = {
    primitive: 'scan',
    inputs: [
      ...invariantResiduals.map((r) => env.get(r)!),
      ...pick(outer.consts, uk.consts),
      ...pick(outer.carry, carryUk),
      ...pick(outer.xs, uk.xs),
      ...extensiveResiduals.map((r) => xsPassThrough.get(r) ?? stackedOf.get(r)!),
    ],
    params: {
      ...params,
      jaxpr: new ClosedJaxpr(new Jaxpr([], ukBodyIns, pe.unknown.eqns, pe.unknown.outs), []),
      numConsts: invariantResiduals.length + numUkConsts,
      numCarry: numUkCarry,
    },
    outVars: [...pick(outerOuts.carry, carryUk), ...pick(outerOuts.ys, ysUk)],
  };
  // a scan without outputs still runs when its body has an effect (a print in the loop)
  const runs = (e: JaxprEqn<'scan'>) => e.outVars.length > 0 || jaxprHasEffects(e.params.jaxpr.jaxpr);
  const known = runs(knownScan) ? [...hoisted, knownScan] : hoisted;
  return { known, unknown: runs(unknownScan) ? [unknownScan] : [] };
}

partialEvalRules.scan = scanPartialEval;

// ---- transposition ----

/**
 * JAX's _scan_transpose: the carries and the undefined consts and xs are
 * linear; the defined consts and xs are residuals. The transposed scan runs
 * the other way, carrying [cotangents of the linear consts (accumulated),
 * cotangents of the carries] over [cotangents of the ys, residual xs].
 */
export function scanTranspose(cts: (Array | null)[], inputs: LinearInput[], params: ScanParams): (Array | null)[] {
  const { jaxpr, numCarry, length, reverse } = params;
  const ins = split(inputs, params);
  const avals = split(jaxpr.inAvals, params);
  const isLinear = (x: LinearInput) => x instanceof UndefinedPrimal;
  const constLin = ins.consts.map(isLinear);
  const xsLin = ins.xs.map(isLinear);
  const resConsts = pick(ins.consts, constLin, false) as Array[];
  const resXs = pick(ins.xs, xsLin, false) as Array[];
  const linConstAvals = pick(avals.consts, constLin);
  const yAvals = jaxpr.outAvals.slice(numCarry);
  const ctCarry = cts.slice(0, numCarry).map((c, i) => instantiate(c, avals.carry[i]!));
  const ctYs = cts.slice(numCarry).map((c, i) => instantiate(c, stacked(yAvals[i]!, length)));

  const nRes = resConsts.length;
  const nLin = linConstAvals.length;
  const transposed = traceHoisted((...args) => {
    const res = args.slice(0, nRes);
    const acc = args.slice(nRes, nRes + nLin);
    const ctC = args.slice(nRes + nLin, nRes + nLin + numCarry);
    const ctY = args.slice(nRes + nLin + numCarry, nRes + nLin + numCarry + yAvals.length);
    const resX = args.slice(nRes + nLin + numCarry + yAvals.length);
    let r = 0;
    let x = 0;
    const bodyArgs: LinearInput[] = [
      ...constLin.map((lin, i) => (lin ? new UndefinedPrimal(avals.consts[i]!) : res[r++]!)),
      ...avals.carry.map((a) => new UndefinedPrimal(a)),
      ...xsLin.map((lin, i) => (lin ? new UndefinedPrimal(avals.xs[i]!) : resX[x++]!)),
    ];
    const inCts = split(backwardPass(jaxpr.jaxpr, jaxpr.consts, bodyArgs, [...ctC, ...ctY]), params);
    const linConstCts = pick(inCts.consts, constLin).map((c, i) => instantiate(c, linConstAvals[i]!));
    return [
      ...linConstCts.map((c, i) => bind1('add', [acc[i]!, c], {})),
      ...inCts.carry.map((c, i) => instantiate(c, avals.carry[i]!)),
      ...pick(inCts.xs, xsLin).map((c, i) => instantiate(c, pick(avals.xs, xsLin)[i]!)),
    ];
  }, [...resConsts.map((c) => c.aval), ...linConstAvals, ...avals.carry, ...yAvals, ...pick(avals.xs, xsLin, false)]);
  const h = transposed.consts.length;
  const outs = bind('scan', [...transposed.consts, ...resConsts, ...linConstAvals.map(zerosLike), ...ctCarry, ...ctYs, ...resXs], {
    ...params,
    jaxpr: transposed.jaxpr,
    numConsts: h + nRes,
    numCarry: nLin + numCarry,
    reverse: !reverse,
  });
  const linConstCts = outs.slice(0, nLin);
  const initCts = outs.slice(nLin, nLin + numCarry);
  const xsCts = outs.slice(nLin + numCarry);
  let c = 0;
  let x = 0;
  return [
    ...constLin.map((lin) => (lin ? linConstCts[c++]! : null)),
    ...ins.carry.map((v, i) => (isLinear(v) ? initCts[i]! : null)),
    ...xsLin.map((lin) => (lin ? xsCts[x++]! : null)),
  ];
}

// ---- batching ----

/** JAX's _scan_batching_rule: consts and carries batched at 0, xs and ys at 1 (axis 0 is the scan's). */
export function scanBatch(vals: Array[], dims: BatchDim[], params: ScanParams, axisSize: number): [Array[], BatchDim[]] {
  const { jaxpr, numCarry } = params;
  const bat = split(dims.map((d) => d !== null), params);
  const numYs = jaxpr.outAvals.length - numCarry;
  let carryBat = bat.carry;
  let batched: ReturnType<typeof batchJaxpr>;
  for (;;) {
    batched = batchJaxpr(jaxpr, axisSize, [...bat.consts, ...carryBat, ...bat.xs], [...carryBat, ...new globalThis.Array<boolean>(numYs).fill(false)]);
    const out = batched.outBatched.slice(0, numCarry);
    if (sameFlags(out, carryBat)) break;
    carryBat = carryBat.map((b, i) => b || out[i]!);
  }
  const v = split(vals, params);
  const d = split(dims, params);
  const consts = v.consts.map((x, i) => (d.consts[i] === null ? x : moveaxis(x, d.consts[i]!, 0)));
  const carry = v.carry.map((x, i) => (carryBat[i] ? batchDimAt(x, d.carry[i]!, 0, axisSize) : x));
  const xs = v.xs.map((x, i) => (d.xs[i] === null ? x : moveaxis(x, d.xs[i]!, 1)));
  const h = batched.jaxpr.consts;
  const outs = bind('scan', [...h, ...consts, ...carry, ...xs], {
    ...params,
    jaxpr: batched.jaxpr.jaxpr,
    numConsts: h.length + params.numConsts,
  });
  const ysBat = batched.outBatched.slice(numCarry);
  return [outs, [...carryBat.map((b) => (b ? 0 : null)), ...ysBat.map((b) => (b ? 1 : null))]];
}
