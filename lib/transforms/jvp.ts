// Forward-mode autodiff (jax.jvp), after Autodidax: a JVPTrace whose tracers
// carry a primal and a tangent, and one rule per primitive (jvp-rules.ts).
// A tangent may be a symbolic zero (`null`), instantiated only when a rule
// needs an array; integer and bool values always have zero tangents (JAX
// gives them float0 tangents). Also home of the small tangent algebra (zeros,
// adds, broadcasts) that the jvp and transpose rules share.
import { Array } from '../core/array.js';
import { arrayFromValues, bind, bind1 } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { type DType, isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { heldArrays, tidy } from '../core/memory.js';
import type { Primitive, PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { flatten, type PyTree, type TreeDef, treeDefEqual, treeDefToString, unflatten } from '../core/pytree.js';
import { shapesEqual } from '../core/shape.js';
import { type MainTrace, type Trace, Tracer, fullRaise, withMainTrace } from '../trace/core.js';
import { jvpRules } from './jvp-rules.js';

/** A tangent: an array, or null for a symbolic zero. */
export type Tangent = Array | null;

/**
 * A jvp rule: primal outputs and their tangents from primal inputs and their
 * tangents (at least one of which is not zero). Output tangents of
 * non-floating outputs must be null.
 */
export type JvpRule<P extends Primitive> = (primals: Array[], tangents: Tangent[], params: PrimitiveParams[P]) => [Array[], Tangent[]];

// ---- tangent algebra (binds primitives directly, so it is traceable at any level) ----

/** A weakly typed scalar constant: it takes the dtype and weakness of what it meets. */
export function scalar(value: number, dtype: DType, weakType = true): Array {
  return arrayFromValues([value], [], dtype, weakType);
}

export function full(aval: ShapedArray, value: number): Array {
  const s = scalar(value, aval.dtype, aval.weakType);
  const x = aval.shape.length === 0 ? s : bind1('broadcast_in_dim', [s], { shape: [...aval.shape], broadcastDimensions: [] });
  // zeros for a host-resident value live in host memory too (they meet that value's other tangents)
  const space = aval.memorySpace ?? 'device';
  return space === x.memorySpace ? x : bind1('device_put', [x], { srcKind: x.memorySpace, dstKind: space });
}

export function zerosLike(aval: ShapedArray): Array {
  return full(aval, 0);
}

/** A rank-0 array broadcast to `shape` (binary primitives broadcast rank-0 operands; results sometimes must not). */
export function broadcastTo(x: Array, shape: readonly number[]): Array {
  if (shapesEqual(x.shape, shape)) return x;
  if (x.ndim !== 0) throw new Error(`jaxon internal: cannot broadcast a tangent of shape ${show(x.shape)} to ${show(shape)}`);
  return bind1('broadcast_in_dim', [x], { shape: [...shape], broadcastDimensions: [] });
}

/** Sums `ct` down to a rank-0 operand's shape (the transpose of a binary primitive's scalar broadcast). */
export function unbroadcast(ct: Array, aval: ShapedArray): Array {
  if (shapesEqual(ct.shape, aval.shape)) return ct;
  return bind1('reduce_sum', [ct], { axes: ct.shape.map((_, i) => i) });
}

export function instantiate(t: Tangent, aval: ShapedArray): Array {
  return t ?? zerosLike(aval);
}

/** Adds two possibly-zero tangents (a rank-0 one broadcasts to the other's shape). */
export function addTangents(a: Tangent, b: Tangent): Tangent {
  if (a === null) return b;
  if (b === null) return a;
  const shape = b.ndim > a.ndim ? b.shape : a.shape;
  return bind1('add', [broadcastTo(a, shape), broadcastTo(b, shape)], {});
}

export const hasTangent = (aval: { dtype: DType }): boolean => isFloating(aval.dtype);

// ---- the trace ----

export class JVPTracer extends Tracer {
  constructor(
    readonly trace: JVPTrace,
    readonly primal: Array,
    readonly tangent: Tangent,
  ) {
    super(primal.aval);
  }
  override fullLower(): Array {
    // a value with a zero tangent is just its primal to the traces below
    if (this.tangent !== null) return this;
    return this.primal instanceof Tracer ? this.primal.fullLower() : this.primal;
  }
  [heldArrays](): unknown[] {
    return [this.primal, this.tangent];
  }
}

export class JVPTrace implements Trace {
  constructor(readonly main: MainTrace) {}
  pure(x: Array): JVPTracer {
    return new JVPTracer(this, x, null);
  }
  lift(x: Tracer): JVPTracer {
    return new JVPTracer(this, x, null);
  }
  processPrimitive<P extends Primitive>(prim: P, tracers: Tracer[], params: PrimitiveParams[P]): JVPTracer[] {
    const ins = tracers as JVPTracer[];
    const primals = ins.map((t) => t.primal);
    const tangents = ins.map((t) => (hasTangent(t.primal) ? t.tangent : null));
    if (tangents.every((t) => t === null)) {
      return bind(prim, primals, params).map((p) => new JVPTracer(this, p, null));
    }
    const rule = jvpRules[prim] as JvpRule<P>;
    const [outs, outTangents] = rule(primals, tangents, params);
    return outs.map((p, i) => {
      const t = hasTangent(p) ? (outTangents[i] ?? null) : null;
      if (t && (!shapesEqual(t.shape, p.shape) || t.dtype !== p.dtype)) {
        throw new Error(
          `jaxon internal: the jvp rule of ${prim} gave a tangent ${t.dtype}${show(t.shape)} for a primal ${p.dtype}${show(p.shape)}`,
        );
      }
      return new JVPTracer(this, p, t);
    });
  }
}

/**
 * jvp of a flat function: runs fn on JVP tracers and returns the primal and
 * tangent outputs (null tangents for outputs that do not depend on the inputs
 * or are not floating).
 */
export function jvpFlat(fn: (...xs: Array[]) => Array[], primals: Array[], tangents: Tangent[]): [Array[], Tangent[]] {
  return withMainTrace('JVPTrace', (main) => new JVPTrace(main), (main) => {
    const trace = main.trace() as JVPTrace;
    const ins = primals.map((p, i) => new JVPTracer(trace, p, hasTangent(p) ? (tangents[i] ?? null) : null));
    const outs = fn(...ins).map((o) => fullRaise(trace, o) as JVPTracer);
    return [outs.map((o) => lowerOut(o.primal)), outs.map((o) => (o.tangent === null ? null : lowerOut(o.tangent)))];
  });
}

function lowerOut(x: Array): Array {
  return x instanceof Tracer ? x.fullLower() : x;
}

/** The value a pytree leaf has once the JVP trace of `main` is left (for aux outputs). */
function primalOf(leaf: unknown, main: MainTrace): unknown {
  if (leaf instanceof JVPTracer && leaf.trace.main === main) return lowerOut(leaf.primal);
  return leaf;
}

// ---- the API ----

/** Calls a user function over pytrees on flat arrays; records the output tree. `fn` names the transformation in errors. */
export function flatCall(
  name: string,
  fn: (...args: never[]) => unknown,
  inTree: TreeDef,
  hasAux: boolean,
): { flat: (...xs: Array[]) => Array[]; outTree: () => TreeDef; aux: () => unknown } {
  let outTree: TreeDef | undefined;
  let aux: unknown;
  const flat = (...xs: Array[]) => {
    const args = unflatten(inTree, xs) as unknown[];
    let result = (fn as (...a: unknown[]) => unknown)(...args);
    if (hasAux) {
      if (!globalThis.Array.isArray(result) || result.length !== 2) {
        throw new TypeError(`${name}: expected a function with aux output (hasAux) to return a two-element tuple, a pair [output, aux], got ${show(result)}`);
      }
      aux = result[1];
      result = result[0];
    }
    const [leaves, tree] = flatten(result as PyTree);
    outTree = tree;
    return leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`${name}: output leaf ${i} must be an array or a number, got ${show(l)}`);
      return toArray(name, l, `output leaf ${i}`);
    });
  };
  return { flat, outTree: () => outTree!, aux: () => aux };
}

/**
 * Flattens arguments given to a transformation. A JS number is a weakly
 * typed float32 scalar here (JS cannot tell 1.0 from 1, and a point to
 * differentiate at is meant to be real); other leaves convert as usual.
 */
export function flattenArgs(name: string, args: unknown, what: string): [Array[], TreeDef] {
  const [leaves, tree] = flatten(args as PyTree);
  return [
    leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`${name}: ${what} leaf ${i} must be an array or a number, got ${show(l)}`);
      if (typeof l === 'number') return scalar(l, 'float32');
      return toArray(name, l, `${what} leaf ${i}`);
    }),
    tree,
  ];
}

export interface JvpOptions {
  hasAux?: boolean;
}

/**
 * jax.jvp(fn, primals, tangents): fn's outputs at `primals` and their
 * directional derivatives along `tangents` (pytrees matching fn's arguments).
 * Integer and bool inputs have zero tangents; outputs that are not floating
 * get zero tangents of their own dtype (JAX's float0).
 */
export function jvp(fn: (...args: never[]) => unknown, primals: unknown[], tangents: unknown[], options: JvpOptions = {}): unknown[] {
  checkOptions('jax.jvp', options, ['hasAux']);
  if (typeof fn !== 'function') throw new TypeError(`jax.jvp: fn must be a function, got ${show(fn)}`);
  if (!globalThis.Array.isArray(primals) || !globalThis.Array.isArray(tangents)) {
    throw new TypeError(`jax.jvp: primals and tangents must be arrays of arguments (one entry per argument of fn), got ${show(primals)} and ${show(tangents)}`);
  }
  const hasAux = options.hasAux ?? false;
  const [ps, inTree] = flattenArgs('jax.jvp', primals, 'primal');
  const [ts, tangentTree] = flattenArgs('jax.jvp', tangents, 'tangent');
  if (!treeDefEqual(inTree, tangentTree)) {
    throw new TypeError(
      `jax.jvp: primal and tangent arguments must have the same tree structure; primals have ${treeDefToString(inTree)}, tangents ${treeDefToString(tangentTree)}`,
    );
  }
  ps.forEach((p, i) => {
    const t = ts[i]!;
    if (!shapesEqual(p.shape, t.shape)) {
      throw new ValueError(`jax.jvp: primal and tangent leaf ${i} must have equal shapes, got primal shape ${show(p.shape)} and tangent shape ${show(t.shape)}`);
    }
    if (hasTangent(p) && p.dtype !== t.dtype) {
      throw new TypeError(`jax.jvp: primal and tangent leaf ${i} must have equal dtypes, got primal dtype ${p.dtype} and tangent dtype ${t.dtype}`);
    }
  });
  const { flat, outTree, aux } = flatCall('jax.jvp', fn, inTree, hasAux);
  let auxOut: unknown;
  // intermediates (the primals and tangents inside the tracers) are disposed once the outputs are known
  const [outs, outTangents] = tidy(() => withMainTrace('JVPTrace', (main) => new JVPTrace(main), (main) => {
    const trace = main.trace() as JVPTrace;
    const ins = ps.map((p, i) => new JVPTracer(trace, p, hasTangent(p) ? ts[i]! : null));
    const raised = flat(...ins).map((o) => fullRaise(trace, o) as JVPTracer);
    if (hasAux) {
      const [leaves, tree] = flatten(aux() as PyTree);
      auxOut = unflatten(tree, leaves.map((l) => primalOf(l, main)));
    }
    return [raised.map((o) => lowerOut(o.primal)), raised.map((o) => lowerOut(instantiate(o.tangent, o.primal.aval))), auxOut] as const;
  }));
  const tree = outTree();
  const result = [unflatten(tree, outs), unflatten(tree, outTangents)];
  return hasAux ? [...result, auxOut] : result;
}
