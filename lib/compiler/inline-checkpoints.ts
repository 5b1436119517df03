// Before fusion, remat's primitives leave the program: a checkpoint's jaxpr
// is inlined (with fresh variables: the known and unknown halves of a
// partially evaluated checkpoint share equations), and checkpoint_name, an
// identity, disappears, as does stop_gradient (an identity once differentiated). A differentiated checkpoint (the backward pass's
// recomputation) with preventCse reads its operands through `copy`
// equations, as JAX lowers it behind an optimization barrier: CSE then
// cannot merge the recomputation with the forward computation it repeats
// (fusion makes the copies free). device_put stays: it is a transfer.
// custom_jvp_call / custom_vjp_call are inlined too: their rules only act
// when the program is differentiated, before it gets here.
import type { Primitive, PrimitiveParams } from '../core/primitives.js';
import { type Atom, Jaxpr, type JaxprEqn, Var } from '../trace/jaxpr.js';

function inline(out: JaxprEqn[], jaxpr: Jaxpr, args: readonly Atom[] | null): Atom[] {
  const env = new Map<Var, Atom>();
  if (args) jaxpr.inVars.forEach((v, i) => env.set(v, args[i]!));
  // at the top level, variables keep their identity (inVars and constVars are the program's)
  const read = (a: Atom): Atom => (a instanceof Var ? (env.get(a) ?? a) : a);
  for (const e of jaxpr.eqns) {
    const inputs = e.inputs.map(read);
    if (e.primitive === 'name' || e.primitive === 'stop_gradient') {
      env.set(e.outVars[0]!, inputs[0]!);
      continue;
    }
    if (e.primitive === 'checkpoint') {
      const { jaxpr: inner, preventCse, differentiated } = e.params as PrimitiveParams['checkpoint'];
      const operands = differentiated && preventCse
        ? inputs.map((a) => {
            if (!(a instanceof Var)) return a;
            const barrier = new Var(a.aval);
            out.push({ primitive: 'copy', inputs: [a], params: {}, outVars: [barrier] });
            return barrier;
          })
        : inputs;
      const results = inline(out, inner.jaxpr, operands);
      e.outVars.forEach((v, i) => env.set(v, results[i]!));
      continue;
    }
    if (e.primitive === 'custom_jvp_call' || e.primitive === 'custom_vjp_call') {
      // only differentiation uses the rule: the compiled program is the primal function
      const results = inline(out, (e.params as PrimitiveParams['custom_jvp_call']).callJaxpr.jaxpr, inputs);
      e.outVars.forEach((v, i) => env.set(v, results[i]!));
      continue;
    }
    const outVars = args ? e.outVars.map((v) => new Var(v.aval)) : e.outVars;
    e.outVars.forEach((v, i) => env.set(v, outVars[i]!));
    out.push({ ...e, inputs, outVars });
  }
  return jaxpr.outs.map(read);
}

const INLINED = new Set<Primitive>(['checkpoint', 'name', 'stop_gradient', 'custom_jvp_call', 'custom_vjp_call']);

/** The jaxpr with every checkpoint (and custom derivative call) inlined and every checkpoint_name and stop_gradient removed (the jaxpr itself when it has none). */
export function inlineCheckpoints(jaxpr: Jaxpr): Jaxpr {
  if (!jaxpr.eqns.some((e) => INLINED.has(e.primitive))) return jaxpr;
  const eqns: JaxprEqn[] = [];
  const outs = inline(eqns, jaxpr, null);
  return new Jaxpr(jaxpr.constVars, jaxpr.inVars, eqns, outs);
}
