// Partial evaluation of a jaxpr (JAX's pe.partial_eval_jaxpr_nounits): given
// which inputs are known, split the equations into a known jaxpr, which runs
// now and also outputs the residuals (known values the rest needs), and an
// unknown jaxpr that takes the residuals and the unknown inputs. linearize
// uses it with primals known and tangents unknown, so the unknown jaxpr is
// the linear tangent map. Which known values are saved as residuals and
// which are recomputed on the unknown side is decided in one place,
// `selectResiduals`, where remat policies plug in.
import type { Primitive } from '../core/primitives.js';
import { type Atom, Jaxpr, type JaxprEqn, Var, eqnHasEffects } from '../trace/jaxpr.js';

export interface PartialEvalOptions {
  /** Outputs to make unknown even when they are known (their value becomes a residual); default none. */
  instantiate?: boolean[];
  /**
   * Whether a known equation's outputs may be saved as residuals (a remat
   * policy); an unsaveable value the unknown side needs is recomputed there
   * from the values its equation reads. Default: everything is saveable.
   */
  saveable?: (eqn: JaxprEqn) => boolean;
}

/**
 * How an equation with some unknown inputs splits, for primitives that hold
 * jaxprs (checkpoint; JAX's partial_eval_jaxpr_custom_rules): the known
 * equations read only known values and define the equation's known outputs
 * (and any residual variables they add); the unknown equations define its
 * unknown outputs. Without a rule, the whole equation is unknown.
 */
export type PartialEvalRule = (eqn: JaxprEqn, inUnknowns: readonly boolean[]) => { known: JaxprEqn[]; unknown: JaxprEqn[] };

/** Registered by the modules that define such primitives (remat-rules.ts for checkpoint). */
export const partialEvalRules: { [P in Primitive]?: PartialEvalRule } = {};

export interface PartialEvalResult {
  /** constVars: the original's; inVars: the known inputs; outs: the known outputs, then the residuals. */
  known: Jaxpr;
  /** no constVars; inVars: the residuals, then the unknown inputs; outs: the unknown outputs. */
  unknown: Jaxpr;
  /** For each output of the original: whether it is an output of `unknown` (else of `known`). */
  outUnknowns: boolean[];
  numResiduals: number;
}

/** The equations (in order) needed to compute `outs`, and those with effects (a debug print runs where its values are known). */
export function deadCodeElimination(eqns: readonly JaxprEqn[], outs: readonly Atom[]): JaxprEqn[] {
  const live = new Set<Var>(outs.filter((a): a is Var => a instanceof Var));
  const kept: JaxprEqn[] = [];
  for (let i = eqns.length - 1; i >= 0; i--) {
    const e = eqns[i]!;
    if (!e.outVars.some((v) => live.has(v)) && !eqnHasEffects(e)) continue;
    kept.push(e);
    for (const a of e.inputs) if (a instanceof Var) live.add(a);
  }
  return kept.reverse();
}

/**
 * The residuals: the known values the unknown equations and outputs read.
 * With a `saveable` policy, a value produced by an unsaveable equation is not
 * saved: that equation is recomputed on the unknown side (returned in
 * `recomputed`) and its own inputs are considered in turn.
 */
export function selectResiduals(
  unknownEqns: readonly JaxprEqn[],
  unknownOuts: readonly Atom[],
  isUnknown: (v: Var) => boolean,
  producer: ReadonlyMap<Var, JaxprEqn>,
  saveable: (eqn: JaxprEqn) => boolean,
): { residuals: Var[]; recomputed: Set<JaxprEqn> } {
  const residuals: Var[] = [];
  const seen = new Set<Var>();
  const recomputed = new Set<JaxprEqn>();
  const need = (a: Atom) => {
    if (!(a instanceof Var) || isUnknown(a) || seen.has(a)) return;
    seen.add(a);
    const eqn = producer.get(a);
    if (eqn && !saveable(eqn)) {
      if (!recomputed.has(eqn)) {
        recomputed.add(eqn);
        eqn.inputs.forEach(need);
      }
      return;
    }
    residuals.push(a);
  };
  for (const e of unknownEqns) e.inputs.forEach(need);
  unknownOuts.forEach(need);
  return { residuals, recomputed };
}

export function partialEvalJaxpr(jaxpr: Jaxpr, inUnknowns: readonly boolean[], options: PartialEvalOptions = {}): PartialEvalResult {
  if (inUnknowns.length !== jaxpr.inVars.length) {
    throw new Error(`partialEvalJaxpr: ${inUnknowns.length} flags for ${jaxpr.inVars.length} inputs`);
  }
  const unknownVars = new Set<Var>(jaxpr.inVars.filter((_, i) => inUnknowns[i]));
  const isUnknown = (v: Var) => unknownVars.has(v);
  const knownEqns: JaxprEqn[] = [];
  const unknownEqns: JaxprEqn[] = [];
  const producer = new Map<Var, JaxprEqn>();
  // the equations in order, with rule-split equations replaced by their parts
  const ordered: JaxprEqn[] = [];
  for (const e of jaxpr.eqns) {
    const inUnknown = e.inputs.map((a) => a instanceof Var && unknownVars.has(a));
    const rule = partialEvalRules[e.primitive];
    if (rule && inUnknown.some((u) => u)) {
      const split = rule(e, inUnknown);
      for (const k of split.known) {
        knownEqns.push(k);
        for (const v of k.outVars) producer.set(v, k);
      }
      for (const u of split.unknown) {
        unknownEqns.push(u);
        for (const v of u.outVars) unknownVars.add(v);
      }
      ordered.push(...split.known, ...split.unknown);
      continue;
    }
    ordered.push(e);
    if (inUnknown.some((u) => u)) {
      unknownEqns.push(e);
      for (const v of e.outVars) unknownVars.add(v);
    } else {
      knownEqns.push(e);
      for (const v of e.outVars) producer.set(v, e);
    }
  }
  const instantiate = options.instantiate ?? [];
  const outUnknowns = jaxpr.outs.map((a, i) => (a instanceof Var && unknownVars.has(a)) || (instantiate[i] ?? false));
  const unknownOuts = jaxpr.outs.filter((_, i) => outUnknowns[i]);
  const knownOuts = jaxpr.outs.filter((_, i) => !outUnknowns[i]);

  const neededUnknown = deadCodeElimination(unknownEqns, unknownOuts);
  const { residuals, recomputed } = selectResiduals(neededUnknown, unknownOuts, isUnknown, producer, options.saveable ?? (() => true));

  // recomputed known equations run on the unknown side, in their original order, before their uses
  const unknownSide = new Set<JaxprEqn>([...neededUnknown, ...recomputed]);
  const unknownBody = ordered.filter((e) => unknownSide.has(e));
  const knownBody = deadCodeElimination(knownEqns, [...knownOuts, ...residuals]);

  const known = new Jaxpr(jaxpr.constVars, jaxpr.inVars.filter((_, i) => !inUnknowns[i]), knownBody, [...knownOuts, ...residuals]);
  const unknown = new Jaxpr([], [...residuals, ...jaxpr.inVars.filter((_, i) => inUnknowns[i])], unknownBody, unknownOuts);
  return { known, unknown, outUnknowns, numResiduals: residuals.length };
}
