// Jaxpr-level passes that run before fusion: common subexpression
// elimination (an equation equal to an earlier one reuses its outputs) and
// dead code elimination (equations no output needs). Equations with effects
// (a debug callback, a loop that prints) are neither merged nor removed.
// The remat work adds preventCse regions, which CSE must then leave alone.
import { type Atom, Jaxpr, type JaxprEqn, Var, eqnHasEffects } from '../trace/jaxpr.js';

/** A key for equal parameters, or null when they hold something other than plain data (objects of classes, functions). */
function paramsKey(params: unknown): string | null {
  let plain = true;
  const text = JSON.stringify(params, (_k, v: unknown) => {
    if (typeof v === 'function' || (v !== null && typeof v === 'object' && !globalThis.Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype)) plain = false;
    return v;
  });
  return plain ? text : null;
}

/** Common subexpression elimination: an equation equal to an earlier one (primitive, params, operands) reuses its outputs. */
export function eliminateCommonSubexpressions(jaxpr: Jaxpr): Jaxpr {
  const replaced = new Map<Var, Var>();
  const ids = new Map<Var, number>();
  const id = (v: Var) => {
    let i = ids.get(v);
    if (i === undefined) ids.set(v, (i = ids.size));
    return i;
  };
  const atom = (a: Atom): Atom => (a instanceof Var ? (replaced.get(a) ?? a) : a);
  const seen = new Map<string, JaxprEqn>();
  const eqns: JaxprEqn[] = [];
  for (const e of jaxpr.eqns) {
    const inputs = e.inputs.map(atom);
    const params = eqnHasEffects(e) ? null : paramsKey(e.params);
    const key = params === null ? null : `${e.primitive}|${params}|${inputs.map((a) => (a instanceof Var ? `v${id(a)}` : `${a.value}:${a.aval.dtype}:${a.aval.weakType}`)).join(',')}`;
    const earlier = key === null ? undefined : seen.get(key);
    if (earlier) {
      e.outVars.forEach((v, i) => replaced.set(v, earlier.outVars[i]!));
      continue;
    }
    const eqn = { ...e, inputs };
    if (key !== null) seen.set(key, eqn);
    eqns.push(eqn);
  }
  return replaced.size ? new Jaxpr(jaxpr.constVars, jaxpr.inVars, eqns, jaxpr.outs.map(atom)) : jaxpr;
}

/** Equations some output depends on, and those with effects, in order. */
export function liveEquations(jaxpr: Jaxpr): JaxprEqn[] {
  const live = new Set<Var>();
  for (const o of jaxpr.outs) if (o instanceof Var) live.add(o);
  const kept: JaxprEqn[] = [];
  for (let i = jaxpr.eqns.length - 1; i >= 0; i--) {
    const e = jaxpr.eqns[i]!;
    if (!e.outVars.some((v) => live.has(v)) && !eqnHasEffects(e)) continue;
    kept.push(e);
    for (const x of e.inputs) if (x instanceof Var) live.add(x);
  }
  return kept.reverse();
}
