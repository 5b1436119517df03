// Tracing to a jaxpr (JAX's DynamicJaxprTrace): each primitive becomes an
// equation; concrete arrays met along the way become constvars (scalars are
// inlined as literals). Used by makeJaxpr, jit, and the autodiff transforms.
import { Array } from '../core/array.js';
import { isShapeDtypeLike, shapeDtypeAval, toArray } from '../core/coerce.js';
import { keep } from '../core/memory.js';
import { flatten, type PyTree, type TreeDef, unflatten } from '../core/pytree.js';
import { type Primitive, type PrimitiveParams, type ShapedArray, abstractEval } from '../core/primitives.js';
import { MainTrace, type Trace, Tracer, findTopMain, fullRaise, withDynamicTrace, withMainTrace } from './core.js';
import { type Atom, ClosedJaxpr, Jaxpr, type JaxprEqn, Literal, Var } from './jaxpr.js';

class JaxprBuilder {
  readonly eqns: JaxprEqn[] = [];
  readonly vars = new Map<JaxprTracer, Var>();
  readonly consts = new Map<Array, JaxprTracer>();
  readonly constValues: Array[] = [];
  readonly constTracers: JaxprTracer[] = [];

  varOf(t: JaxprTracer): Var {
    let v = this.vars.get(t);
    if (!v) {
      v = new Var(t.aval);
      this.vars.set(t, v);
    }
    return v;
  }
}

export class JaxprTracer extends Tracer {
  constructor(
    readonly trace: JaxprTrace,
    aval: ShapedArray,
  ) {
    super(aval);
  }
}

class JaxprTrace implements Trace {
  constructor(readonly main: MainTrace) {}
  get builder(): JaxprBuilder {
    return this.main.globalData as JaxprBuilder;
  }
  pure(x: Array): JaxprTracer {
    const known = this.builder.consts.get(x);
    if (known) return known;
    const t = new JaxprTracer(this, x.aval);
    // the jaxpr owns a reference of its own: the caller may dispose x afterwards
    const owned = keep(new Array(x.storage('jit').retain(), x.shape, x.dtype, x.weakType, x.memorySpace));
    this.builder.consts.set(x, t);
    this.builder.constValues.push(owned);
    this.builder.constTracers.push(t);
    return t;
  }
  /**
   * A tracer of an outer transformation that the traced function closes over
   * (grad of a closure inside jit, grad of grad) becomes a constvar whose
   * value is that tracer: evaluating the jaxpr binds it at its own level.
   */
  lift(x: Tracer): JaxprTracer {
    const known = this.builder.consts.get(x);
    if (known) return known;
    const t = new JaxprTracer(this, x.aval);
    this.builder.consts.set(x, t);
    this.builder.constValues.push(x);
    this.builder.constTracers.push(t);
    return t;
  }
  processPrimitive<P extends Primitive>(prim: P, tracers: Tracer[], params: PrimitiveParams[P]): JaxprTracer[] {
    const ins = tracers as JaxprTracer[];
    const outAvals = abstractEval[prim](ins.map((t) => t.aval), params);
    const outs = outAvals.map((a) => new JaxprTracer(this, a));
    this.builder.eqns.push({
      primitive: prim,
      inputs: ins.map((t) => this.builder.varOf(t)),
      params,
      outVars: outs.map((t) => this.builder.varOf(t)),
    });
    return outs;
  }
}

/** Replaces constvars of scalar constants by literals. */
function inlineLiterals(builder: JaxprBuilder, jaxpr: Jaxpr): ClosedJaxpr {
  const literal = new Map<Var, Literal>();
  const constVars: Var[] = [];
  const consts: Array[] = [];
  builder.constTracers.forEach((t, i) => {
    const v = builder.varOf(t);
    const value = builder.constValues[i]!;
    // a host-resident scalar stays a constvar: a literal would live on the device
    if (value.ndim === 0 && !value.isTracer && value.memorySpace === 'device') {
      literal.set(v, new Literal(Number(value.dataSync()[0]), value.aval));
      value.dispose();
    } else {
      constVars.push(v);
      consts.push(value);
    }
  });
  const atom = (a: Atom): Atom => (a instanceof Var ? (literal.get(a) ?? a) : a);
  const eqns = jaxpr.eqns.map((e) => ({ ...e, inputs: e.inputs.map(atom) }));
  return new ClosedJaxpr(new Jaxpr(constVars, jaxpr.inVars, eqns, jaxpr.outs.map(atom)), consts);
}

/** Traces fn on abstract arguments of the given avals; returns the closed jaxpr. */
export function traceToJaxpr(fn: (...args: Array[]) => Array[], inAvals: ShapedArray[]): ClosedJaxpr {
  const builder = new JaxprBuilder();
  return withMainTrace(
    'DynamicJaxprTrace',
    (main) => new JaxprTrace(main),
    (main) =>
      withDynamicTrace(main, () => {
        const trace = main.trace() as JaxprTrace;
        const args = inAvals.map((a) => new JaxprTracer(trace, a));
        const inVars = args.map((t) => builder.varOf(t));
        const outs = fn(...args).map((o) => {
          const x = toArray('jit', o, 'output');
          if (x instanceof JaxprTracer && x.trace.main === main) return x;
          // an outer transformation's tracer the function closes over and returns becomes a constvar (an escaped one raises)
          if (x instanceof Tracer) {
            findTopMain([x]);
            return fullRaise(trace, x) as JaxprTracer;
          }
          return trace.pure(x);
        });
        const jaxpr = new Jaxpr(builder.constTracers.map((t) => builder.varOf(t)), inVars, builder.eqns, outs.map((t) => builder.varOf(t)));
        return inlineLiterals(builder, jaxpr);
      }),
    builder,
  );
}

export function avalOf(x: unknown, fn: string): ShapedArray {
  return toArray(fn, x).aval;
}

/** Flattens a function over pytrees into one over flat lists of Arrays, recording the output structure. */
export function flattenFunction(fn: (...args: never[]) => unknown, inTree: TreeDef): { flat: (...xs: Array[]) => Array[]; outTree: () => TreeDef } {
  let out: TreeDef | undefined;
  const flat = (...xs: Array[]) => {
    const args = unflatten(inTree, xs) as unknown[];
    const result = (fn as (...a: unknown[]) => unknown)(...args);
    const [leaves, tree] = flatten(result as PyTree);
    out = tree;
    return leaves.map((l) => toArray('jit', l, 'output'));
  };
  return { flat, outTree: () => out! };
}

/** jax.makeJaxpr(f)(...args): the jaxpr of f at these arguments' shapes and dtypes. */
/** makeJaxpr's arguments are traced as jit traces them: a bare JS number is a weak float (API.md, "JS numbers"), and an object with a shape and a dtype (a ShapeDtypeStruct) is abstract, as JAX duck-types it. */
function argumentAval(leaf: unknown, i: number): ShapedArray {
  if (typeof leaf === 'number') return { shape: [], dtype: 'float32', weakType: true };
  if (isShapeDtypeLike(leaf)) return shapeDtypeAval('makeJaxpr', leaf, `argument leaf ${i}`);
  return avalOf(leaf, `makeJaxpr: argument leaf ${i}`);
}

export function makeJaxpr(fn: (...args: never[]) => unknown): (...args: unknown[]) => ClosedJaxpr {
  return (...args: unknown[]) => {
    const [leaves, inTree] = flatten(args as PyTree);
    const avals = leaves.map((l, i) => argumentAval(l, i));
    const { flat } = flattenFunction(fn, inTree);
    return traceToJaxpr(flat, avals);
  };
}
