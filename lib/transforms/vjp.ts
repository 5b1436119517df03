// Reverse-mode autodiff as in JAX: linearize = jvp traced to a jaxpr, then
// partially evaluated with the primals known and the tangents unknown (the
// known part runs now; the unknown part is the linear tangent map, closed
// over the residuals); vjp = linearize + transpose (backwardPass); grad and
// valueAndGrad = vjp with a cotangent of 1. The backward pass binds
// primitives, so grad of grad, grad under jit and jit under grad compose.
import { Array } from '../core/array.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { type DType, isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { tidy } from '../core/memory.js';
import type { ShapedArray } from '../core/primitives.js';
import { flatten, type PyTree, type TreeDef, treeDefEqual, treeDefToString, unflatten } from '../core/pytree.js';
import { shapesEqual } from '../core/shape.js';
import { ClosedJaxpr, Jaxpr, evalJaxpr } from '../trace/jaxpr.js';
import { traceToJaxpr } from '../trace/jaxpr-trace.js';
import { flatCall, flattenArgs, full, hasTangent, instantiate, jvpFlat, zerosLike } from './jvp.js';
import { partialEvalJaxpr } from './partial-eval.js';
import { UndefinedPrimal, backwardPass } from './transpose.js';
import { wraps } from './signature.js';

/** What linearizing a flat function gives. */
export interface LinearizedFlat {
  /** The primal outputs, then the aux leaves. */
  outs: Array[];
  /** The linear map: tangents of the differentiable inputs → tangents of the outputs whose tangent is not always zero. */
  linear: ClosedJaxpr;
  /** Which inputs have a tangent input in `linear` (the floating ones). */
  inDiff: boolean[];
  /** Which outputs have a tangent output in `linear` (the others' tangents are zero). */
  outDiff: boolean[];
}

/**
 * linearize of a flat function whose first `numOuts()` outputs are
 * differentiated and the rest are aux (primal values only).
 */
export function linearizeFlat(fn: (...xs: Array[]) => Array[], primals: Array[], numOuts?: () => number): LinearizedFlat {
  const inDiff = primals.map(hasTangent);
  const n = primals.length;
  let outDiff: boolean[] = [];
  let total = 0;
  const jvpOfFn = (...xs: Array[]): Array[] => {
    let k = n;
    const tangents = inDiff.map((d) => (d ? xs[k++]! : null));
    const [outs, tangentsOut] = jvpFlat(fn, xs.slice(0, n), tangents);
    total = outs.length;
    const numDiff = numOuts ? numOuts() : outs.length;
    outDiff = outs.map((o, i) => i < numDiff && hasTangent(o) && tangentsOut[i] !== null);
    return [...outs, ...tangentsOut.filter((_, i) => outDiff[i]).map((t) => t!)];
  };
  const tangentAvals = primals.filter((_, i) => inDiff[i]).map((p) => p.aval);
  const closed = traceToJaxpr(jvpOfFn, [...primals.map((p) => p.aval), ...tangentAvals]);
  const numTangentsOut = closed.jaxpr.outs.length - total;
  const pe = partialEvalJaxpr(
    closed.jaxpr,
    [...primals.map(() => false), ...tangentAvals.map(() => true)],
    { instantiate: [...globalThis.Array.from({ length: total }, () => false), ...globalThis.Array.from({ length: numTangentsOut }, () => true)] },
  );
  if (pe.outUnknowns.slice(0, total).some((u) => u)) {
    throw new Error('linearize: a primal output depends on a tangent (a jvp rule is wrong)');
  }
  const knownValues = evalJaxpr(pe.known, closed.consts, primals);
  const residuals = knownValues.slice(total);
  const residualVars = pe.unknown.inVars.slice(0, pe.numResiduals);
  const linearJaxpr = new Jaxpr(residualVars, pe.unknown.inVars.slice(pe.numResiduals), pe.unknown.eqns, pe.unknown.outs);
  // the closed jaxpr's own views of closed-over arrays are no longer needed unless they are residuals or outputs
  const used = new Set<Array>(knownValues);
  for (const c of closed.consts) if (!used.has(c)) c.dispose();
  return { outs: knownValues.slice(0, total), linear: new ClosedJaxpr(linearJaxpr, residuals), inDiff, outDiff };
}

/** Evaluates the linear map on tangents of every input (non-floating inputs' tangents are ignored); zero tangents where outDiff is false. */
function applyLinear(lin: LinearizedFlat, tangents: Array[], outAvals: ShapedArray[]): Array[] {
  const ins = tangents.filter((_, i) => lin.inDiff[i]);
  const outs = evalJaxpr(lin.linear.jaxpr, lin.linear.consts, ins);
  let k = 0;
  return outAvals.map((a, i) => (lin.outDiff[i] ? outs[k++]! : zerosLike(a)));
}

/** Runs the transposed linear map: output cotangents → input cotangents (zeros for non-floating inputs). */
function applyTranspose(lin: LinearizedFlat, cotangents: (Array | null)[], inAvals: ShapedArray[]): Array[] {
  const args = lin.linear.jaxpr.inVars.map((v) => new UndefinedPrimal(v.aval));
  const cts = backwardPass(lin.linear.jaxpr, lin.linear.consts, args, cotangents.filter((_, i) => lin.outDiff[i]));
  let k = 0;
  return inAvals.map((a, i) => {
    if (!lin.inDiff[i]) return zerosLike(a);
    const ct = cts[k++] ?? null;
    return instantiate(ct, a);
  });
}

// ---- API ----

function checkFunction(name: string, fn: unknown): void {
  if (typeof fn !== 'function') throw new TypeError(`${name}: fn must be a function, got ${show(fn)}`);
}

/** Linearizes a user function over pytrees; aux leaves that are not arrays pass through untouched. */
function linearizeTree(name: string, fn: (...args: never[]) => unknown, primals: unknown[], hasAux: boolean) {
  checkFunction(name, fn);
  const [flatPrimals, inTree] = flattenArgs(name, primals, 'primal');
  const { flat, outTree, aux } = flatCall(name, fn, inTree, hasAux);
  let auxTree: TreeDef | undefined;
  let auxStatic: unknown[] = [];
  let auxIsArray: boolean[] = [];
  let numOuts = 0;
  const withAux = (...xs: Array[]) => {
    const outs = flat(...xs);
    numOuts = outs.length;
    if (!hasAux) return outs;
    const [leaves, tree] = flatten(aux() as PyTree);
    auxTree = tree;
    auxIsArray = leaves.map((l) => isArrayLike(l));
    auxStatic = leaves;
    return [...outs, ...leaves.filter((_, i) => auxIsArray[i]).map((l, i) => toArray(name, l, `aux leaf ${i}`))];
  };
  // intermediates die here; the residuals live on in the linear map
  const lin = tidy(() => {
    const l = linearizeFlat(withAux, flatPrimals, () => numOuts);
    return { ...l, keep: [l.outs, l.linear.consts] };
  });
  const outs = lin.outs.slice(0, numOuts);
  let auxValue: unknown;
  if (hasAux) {
    let k = numOuts;
    auxValue = unflatten(auxTree!, auxStatic.map((l, i) => (auxIsArray[i] ? lin.outs[k++] : l)));
  }
  return { lin, outs, outTree: outTree(), inTree, flatPrimals, auxValue };
}

/**
 * jax.linearize(fn, ...primals): [fn(...primals), fJvp] where fJvp(...tangents)
 * evaluates the jvp at `primals` by running only the linear part.
 */
export function linearize(fn: (...args: never[]) => unknown, ...primals: unknown[]): [unknown, (...tangents: unknown[]) => unknown] {
  const { lin, outs, outTree, inTree, flatPrimals } = linearizeTree('jax.linearize', fn, primals, false);
  const outAvals = outs.map((o) => o.aval);
  const fJvp = (...tangents: unknown[]) => {
    const [ts, tree] = flattenArgs('jax.linearize', tangents, 'tangent');
    if (!treeDefEqual(tree, inTree)) {
      throw new TypeError(`jax.linearize: the tangents must have the structure of the primals ${treeDefToString(inTree)}, got ${treeDefToString(tree)}`);
    }
    ts.forEach((t, i) => checkLeaf('jax.linearize: linearized function called on tangent values inconsistent with the original primal values', 'tangent', t, flatPrimals[i]!.aval, i, 'primal input'));
    return unflatten(outTree, tidy(() => applyLinear(lin, ts, outAvals)));
  };
  return [unflatten(outTree, outs), fJvp];
}

/** A tangent or cotangent of the wrong type: JAX's ValueError, for a wrong shape or dtype alike. */
function checkLeaf(name: string, what: string, x: Array, expected: ShapedArray, i: number, of: string): void {
  if (!shapesEqual(x.shape, expected.shape)) {
    throw new ValueError(`${name}: the shape of ${what} leaf ${i}, ${show(x.shape)}, must equal the shape of the corresponding ${of}, ${show(expected.shape)}`);
  }
  if (isFloating(expected.dtype) && x.dtype !== expected.dtype) {
    throw new ValueError(`${name}: the dtype of ${what} leaf ${i}, ${x.dtype}, must equal the dtype of the corresponding ${of}, ${expected.dtype}`);
  }
}

function makeVjp(name: string, fn: (...args: never[]) => unknown, primals: unknown[], hasAux: boolean) {
  const { lin, outs, outTree, inTree, flatPrimals, auxValue } = linearizeTree(name, fn, primals, hasAux);
  const inAvals = flatPrimals.map((p) => p.aval);
  const vjpFn = (cotangent: unknown, ...extra: unknown[]): unknown[] => {
    if (extra.length) {
      throw new TypeError(
        `The function returned by \`jax.vjp\` applied to ${fn.name || '(anonymous)'} was called with ${extra.length + 1} arguments, but functions returned ` +
          `by \`jax.vjp\` must be called with a single argument corresponding to the single value returned by the function being differentiated ` +
          `(even if that returned value is an array or other container): call it with [${extra.length + 1} values], not with them as separate arguments`,
      );
    }
    const [cts, tree] = flattenArgs(`${name} pullback`, cotangent, 'cotangent');
    if (!treeDefEqual(tree, outTree)) {
      throw new ValueError(`${name} pullback: unexpected tree structure: the cotangent must have the structure of fn's output ${treeDefToString(outTree)}, got ${treeDefToString(tree)}`);
    }
    cts.forEach((c, i) => checkLeaf(`${name} pullback: unexpected JAX type (e.g. shape/dtype) for argument to VJP function`, 'cotangent', c, outs[i]!.aval, i, 'primal output'));
    const grads = tidy(() => applyTranspose(lin, cts, inAvals));
    return unflatten(inTree, grads) as unknown[];
  };
  return { out: unflatten(outTree, outs), vjpFn, auxValue, lin, outs, outTree };
}

/**
 * jax.vjp(fn, ...primals): [fn(...primals), vjpFn] where vjpFn(cotangent)
 * returns one cotangent per argument (a list, as JAX returns a tuple).
 * Integer and bool arguments get zero cotangents of their own dtype.
 */
export function vjp(fn: (...args: never[]) => unknown, ...primals: unknown[]): [unknown, (cotangent: unknown) => unknown[]] {
  const { out, vjpFn } = makeVjp('jax.vjp', fn, primals, false);
  return [out, vjpFn];
}

/** jax.vjp(fn, ...primals, has_aux=True): fn returns [output, aux]; gives [output, vjpFn, aux]. */
export function vjpWithAux(fn: (...args: never[]) => unknown, ...primals: unknown[]): [unknown, (cotangent: unknown) => unknown[], unknown] {
  const { out, vjpFn, auxValue } = makeVjp('jax.vjp', fn, primals, true);
  return [out, vjpFn, auxValue];
}

export interface GradOptions {
  /** Which positional arguments to differentiate (default 0); a list gives a list of gradients. */
  argnums?: number | number[];
  /** fn returns [output, aux]; aux is returned beside the gradient. */
  hasAux?: boolean;
}

function parseArgnums(name: string, argnums: unknown): { list: number[]; single: boolean } {
  if (argnums === undefined) return { list: [0], single: true };
  if (typeof argnums === 'number') {
    if (!Number.isInteger(argnums)) throw new TypeError(`${name}: argnums must be an integer or an array of integers, got ${show(argnums)}`);
    return { list: [argnums], single: true };
  }
  if (!globalThis.Array.isArray(argnums) || argnums.some((a) => typeof a !== 'number' || !Number.isInteger(a))) {
    throw new TypeError(`${name}: argnums must be an integer or an array of integers, got ${show(argnums)}`);
  }
  if (argnums.length === 0) throw new ValueError(`${name}: argnums must not be empty`);
  if (new Set(argnums).size !== argnums.length) throw new ValueError(`${name}: argnums ${show(argnums)} contains duplicates`);
  return { list: [...argnums] as number[], single: false };
}

function checkOutput(name: string, out: Array[], outTree: TreeDef): DType {
  if (outTree.kind !== 'leaf') {
    throw new TypeError(`${name}: Gradient only defined for scalar-output functions. Output was a pytree ${treeDefToString(outTree)}`);
  }
  const o = out[0]!;
  if (o.ndim !== 0) throw new TypeError(`${name}: Gradient only defined for scalar-output functions. Output had shape: ${show(o.shape)}`);
  if (!isFloating(o.dtype)) {
    throw new TypeError(
      `${name}: grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got ${o.dtype}. ` +
        `For differentiation of functions with integer outputs, use jax.vjp directly`,
    );
  }
  return o.dtype;
}

function valueAndGradImpl(name: string, fn: (...args: never[]) => unknown, options: GradOptions, wantValue: boolean) {
  checkOptions(name, options, ['argnums', 'hasAux']);
  checkFunction(name, fn);
  const { list, single } = parseArgnums(name, options.argnums);
  const hasAux = options.hasAux ?? false;
  return (...args: unknown[]): { value: unknown; grads: unknown; aux: unknown } => {
    const positions = list.map((a) => (a < 0 ? a + args.length : a));
    positions.forEach((p, k) => {
      if (p < 0 || p >= args.length) {
        throw new TypeError(
          `${name}: differentiating with respect to argnums=${show(single ? list[0] : list)} requires at least ${Math.max(list[k]! + 1, -list[k]!)} ` +
            `positional arguments to be passed by the caller, but got only ${args.length} positional arguments.`,
        );
      }
    });
    const diffArgs = positions.map((p) => args[p]);
    const [leaves] = flatten(diffArgs as PyTree);
    leaves.forEach((l) => {
      // JS numbers are real points (flattenArgs makes them float32); other leaves keep their dtype
      const dtype = l instanceof Array ? l.dtype : typeof l === 'number' ? null : isArrayLike(l) ? toArray(name, l).dtype : null;
      if (dtype !== null && !isFloating(dtype)) {
        throw new TypeError(
          `${name}: grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), but got ${dtype}. ` +
            `If you want to use Boolean- or integer-valued inputs, use vjp`,
        );
      }
    });
    const call = (...diff: unknown[]) => {
      const allArgs = [...args];
      positions.forEach((p, k) => (allArgs[p] = diff[k]));
      return (fn as (...a: unknown[]) => unknown)(...allArgs);
    };
    return tidy(() => {
      const { vjpFn, auxValue, outs, outTree, lin } = makeVjp(name, call as never, diffArgs, hasAux);
      const dtype = checkOutput(name, outs, outTree);
      const seed = full({ shape: [], dtype, weakType: outs[0]!.weakType }, 1);
      const grads = vjpFn(seed);
      // what is not returned is disposed by the tidy (the value too, for grad)
      const result = { value: wantValue ? outs[0]! : null, grads: single ? grads[0] : grads, aux: auxValue };
      // residuals die with this call unless they are part of the result or the caller's own arrays
      const keepAlive = new Set<unknown>([...flatten(result as PyTree)[0], ...flatten(args as PyTree)[0]]);
      for (const r of lin.linear.consts) if (!keepAlive.has(r)) r.dispose();
      return result;
    });
  };
}

/**
 * jax.grad(fn, { argnums, hasAux }): the gradient of a scalar, floating
 * output with respect to the chosen arguments (pytrees of floating arrays).
 * With hasAux, fn returns [output, aux] and the result is [gradient, aux].
 */
/** grad's argnums may come by position, as JAX's habit has it: grad(f, 1), grad(f, [0, 1], { hasAux }). */
function gradOptions(argnums: number | number[] | GradOptions | undefined, options: GradOptions | undefined): GradOptions {
  if (typeof argnums === 'number' || globalThis.Array.isArray(argnums)) return { ...(options ?? {}), argnums };
  if (options !== undefined) throw new TypeError(`jax.grad: a second options object needs argnums before it (grad(f, argnums, options)), got ${show(argnums)} then ${show(options)}`);
  return argnums ?? {};
}

export function grad(fn: (...args: never[]) => unknown, argnumsOrOptions?: number | number[] | GradOptions, maybeOptions?: GradOptions): (...args: unknown[]) => unknown {
  const options = gradOptions(argnumsOrOptions, maybeOptions);
  const impl = valueAndGradImpl('jax.grad', fn, options, false);
  return wraps((...args: unknown[]) => {
    const { grads, aux } = impl(...args);
    return options.hasAux ? [grads, aux] : grads;
  }, fn);
}

/** jax.valueAndGrad: [value, gradient], or [[value, aux], gradient] with hasAux. */
export function valueAndGrad(fn: (...args: never[]) => unknown, argnumsOrOptions?: number | number[] | GradOptions, maybeOptions?: GradOptions): (...args: unknown[]) => [unknown, unknown] {
  const options = gradOptions(argnumsOrOptions, maybeOptions);
  const impl = valueAndGradImpl('jax.valueAndGrad', fn, options, true);
  return wraps((...args: unknown[]): [unknown, unknown] => {
    const { value, grads, aux } = impl(...args);
    return options.hasAux ? [[value, aux], grads] : [value, grads];
  }, fn);
}
