// jax.custom_jvp and jax.custom_vjp, after jax/_src/custom_derivatives.py:
// functions that carry their own differentiation rule. Called under a
// transformation, such a function is traced to a jaxpr and binds
// custom_jvp_call / custom_vjp_call, which hold that jaxpr (what eager
// evaluation, jit and the compiler run, so the rule costs nothing until
// something differentiates) and the rule as a flat function of the operands
// and their tangents. The primitives' jvp rule calls the user's rule; their
// batching rule batches the jaxpr and vmaps the rule (under the same vmap
// while it runs, so a rule may close over its values, as JAX's
// batch_custom_jvp_subtrace allows). A custom_vjp function's rule runs fwd
// and applies `custom_lin` to the tangents: a primitive with no evaluation,
// only a transpose, which runs bwd; so grad works and jvp raises JAX's
// error. Values the function closes over are leading operands (JAX's
// convert_constvars_jaxpr); differentiating with respect to them raises
// JAX's CustomJVPException / CustomVJPException.
//
// The rules are function declarations: the rule tables import them, and
// they import the transforms whose tables those are (an import cycle that
// hoisted functions make harmless).
import { Array } from '../core/array.js';
import { bind, bind1 } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { type DType, isFloating } from '../core/dtype.js';
import { AttributeError, UnexpectedTracerError, ValueError, checkOptions, show } from '../core/errors.js';
import { tidy } from '../core/memory.js';
import {
  CUSTOM_VJP_JVP_ERROR, type CustomBwdFunction, type CustomCallParams, type CustomJvpFunction, type PrimitiveParams, type ShapedArray,
} from '../core/primitives.js';
import { flatten, type PyTree, type TreeDef, treeDefEqual, unflatten } from '../core/pytree.js';
import { shapesEqual } from '../core/shape.js';
import { type MainTrace, Tracer, findTopMain, fullRaise, isActive, withMainTrace } from '../trace/core.js';
import { disposeConsts, hoistConsts } from '../trace/hoisted-jaxpr.js';
import { evalJaxpr } from '../trace/jaxpr.js';
import { traceToJaxpr } from '../trace/jaxpr-trace.js';
import { registerImpl } from '../runtime/eager.js';
import { type BatchDim, batchDimAt, moveaxis } from './batching-rules.js';
import { batchJaxpr } from './control-flow/jaxprs.js';
import type { JittedArgs } from './jit.js';
import { type Tangent, addTangents, flattenArgs, zerosLike } from './jvp.js';
import { type LinearInput, UndefinedPrimal, backwardPass } from './transpose.js';
import { BatchTrace, BatchTracer } from './vmap.js';

// ---- errors (JAX's wording) ----

/** JAX's AttributeError (the custom function has no rule yet) lives in core: jax.config raises it too. */
export { AttributeError };

/** JAX's UnexpectedTracerError lives in core: the trace stack raises it for escaped tracers too. */
export { UnexpectedTracerError };

/** JAX's ad.CustomJVPException: differentiation with respect to a value the custom_jvp function closes over. */
export class CustomJVPException extends Error {
  override name = 'CustomJVPException';
  constructor() {
    super(
      'Detected differentiation of a custom_jvp function with respect to a closed-over value. That isn\'t supported because the custom JVP ' +
        'rule only specifies how to differentiate the custom_jvp function with respect to explicit input parameters. Try passing the ' +
        'closed-over value into the custom_jvp function as an argument, and adapting the custom_jvp rule.',
    );
  }
}

/** JAX's ad.CustomVJPException, the same for custom_vjp. */
export class CustomVJPException extends Error {
  override name = 'CustomVJPException';
  constructor() {
    super(
      'Detected differentiation of a custom_vjp function with respect to a closed-over value. That isn\'t supported because the custom VJP ' +
        'rule only specifies how to differentiate the custom_vjp function with respect to explicit input parameters. Try passing the ' +
        'closed-over value into the custom_vjp function as an argument, and adapting the custom_vjp fwd and bwd rules.',
    );
  }
}

// ---- the API ----

// Rules and functions take and return pytrees of any shape, as in JAX.
/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyFunction = (...args: any[]) => any;

export interface CustomJvpOptions {
  /** Arguments that are not differentiated (functions, static values); the jvp rule receives them first, as JAX passes them. */
  nondiffArgnums?: number | number[];
}

export type CustomVjpOptions = CustomJvpOptions;

/** jax.custom_jvp(fun): call it like fun; `defjvp` gives it its rule. */
export interface CustomJvp<F extends AnyFunction> {
  /** Where fun takes an Array, a call may pass anything jnp converts (a JS number, nested arrays), as with jit. */
  (...args: JittedArgs<F>): ReturnType<F>;
  readonly fun: F;
  readonly nondiffArgnums: readonly number[];
  readonly jvp: AnyFunction | null;
  /** rule(...nondiffArgs, primals, tangents) returns [primalOut, tangentOut] (primals and tangents are JS arrays, one entry per argument). */
  defjvp<R extends AnyFunction>(rule: R, options?: { symbolicZeros?: boolean }): R;
  /** One rule per argument, jvp(tangent, primalOut, ...primals), or null for an argument with a zero derivative; their tangents are summed. */
  defjvps(...jvps: (AnyFunction | null | undefined)[]): void;
}

/** jax.custom_vjp(fun): call it like fun; `defvjp(fwd, bwd)` gives it its rule. */
export interface CustomVjp<F extends AnyFunction> {
  (...args: JittedArgs<F>): ReturnType<F>;
  readonly fun: F;
  readonly nondiffArgnums: readonly number[];
  readonly fwd: AnyFunction | null;
  readonly bwd: AnyFunction | null;
  /**
   * fwd(...args) returns [primalOut, residuals]; bwd(...nondiffArgs,
   * residuals, cotangent) returns a JS array with one cotangent per
   * differentiable argument (null for zero).
   */
  defvjp(fwd: AnyFunction, bwd: AnyFunction, options?: { symbolicZeros?: boolean }): void;
}

/**
 * jax.custom_jvp(fun, { nondiffArgnums }): fun with a custom jvp rule,
 * used by jvp, grad (through linearity of the rule's tangent output) and
 * everything built on them; jit, vmap, scan and checkpoint compose with it.
 */
export function customJvp<F extends AnyFunction>(fun: F, options: CustomJvpOptions = {}): CustomJvp<F> {
  const api = 'jax.customJvp';
  checkOptions(api, options, ['nondiffArgnums']);
  checkFunction(api, 'fun', fun);
  const nondiff = argnums(api, options.nondiffArgnums);
  const name = functionName(fun);
  let rule: AnyFunction | null = null;
  const f = ((...args: unknown[]) => {
    if (!rule) throw new AttributeError(`No JVP defined for custom_jvp function ${name} using defjvp.`);
    const jvpRule = rule;
    // what the call made and did not return is disposed, as vmap and the jnp functions do
    return tidy(() => {
      // nondiff arguments have no tangent (JAX stop_gradients them)
      const call = splitArgs(api, args, nondiff, (x) => (x instanceof Tracer ? bind1('stop_gradient', [x], {}) : x));
      if (call.eager) return fun(...call.merge(unflatten(call.inTree, call.leaves) as unknown[]));
      const traced = tracePrimal(api, name, fun, call);
      return bindCall('custom_jvp_call', name, traced, call, jvpRuleFunction(name, jvpRule, call, traced));
    });
  }) as unknown as CustomJvp<F>;
  define(f, name, { fun, nondiffArgnums: nondiff, jvp: () => rule });
  f.defjvp = <R extends AnyFunction>(r: R, ruleOptions: { symbolicZeros?: boolean } = {}): R => {
    checkOptions(`${api}.defjvp`, ruleOptions, ['symbolicZeros']);
    checkFunction(`${api}.defjvp`, 'jvp', r);
    if (ruleOptions.symbolicZeros) throw new ValueError(`${api}.defjvp: symbolicZeros is not supported; the rule receives zero tangents as arrays of zeros`);
    rule = r;
    return r;
  };
  f.defjvps = (...jvps) => {
    if (nondiff.length) throw new TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.");
    jvps.forEach((j, i) => {
      if (j !== null && j !== undefined) checkFunction(`${api}.defjvps`, `jvps[${i}]`, j);
    });
    rule = defjvpsRule(f, jvps);
  };
  return f;
}

/**
 * jax.custom_vjp(fun, { nondiffArgnums }): fun with a custom vjp rule, used
 * by grad / vjp (and their compositions with jit, vmap, scan, checkpoint);
 * forward mode (jvp) raises JAX's error.
 */
export function customVjp<F extends AnyFunction>(fun: F, options: CustomVjpOptions = {}): CustomVjp<F> {
  const api = 'jax.customVjp';
  checkOptions(api, options, ['nondiffArgnums']);
  checkFunction(api, 'fun', fun);
  const nondiff = argnums(api, options.nondiffArgnums);
  const name = functionName(fun);
  let fwd: AnyFunction | null = null;
  let bwd: AnyFunction | null = null;
  const f = ((...args: unknown[]) => {
    if (!fwd || !bwd) throw new AttributeError(`No VJP defined for custom_vjp function ${name} using defvjp.`);
    for (const i of nondiff) {
      if (flatten(args[i] as PyTree)[0].some((l) => l instanceof Tracer)) {
        throw new UnexpectedTracerError(
          'Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated by nondiff_argnums as ' +
            'non-differentiable. Tracers cannot be passed as non-differentiable arguments to custom_vjp functions; instead, nondiff_argnums ' +
            "should only be used for arguments that can't be or contain JAX tracers, e.g. function-valued arguments. In particular, " +
            'array-valued arguments should typically not be indicated as nondiff_argnums.',
        );
      }
    }
    const [fwdRule, bwdRule] = [fwd, bwd];
    return tidy(() => {
      const call = splitArgs(api, args, nondiff, (x) => x);
      if (call.eager) return fun(...call.merge(unflatten(call.inTree, call.leaves) as unknown[]));
      const traced = tracePrimal(api, name, fun, call);
      return bindCall('custom_vjp_call', name, traced, call, vjpRuleFunction(name, fwdRule, bwdRule, call, traced));
    });
  }) as unknown as CustomVjp<F>;
  define(f, name, { fun, nondiffArgnums: nondiff, fwd: () => fwd, bwd: () => bwd });
  f.defvjp = (fwdRule, bwdRule, ruleOptions: { symbolicZeros?: boolean } = {}) => {
    checkOptions(`${api}.defvjp`, ruleOptions, ['symbolicZeros']);
    checkFunction(`${api}.defvjp`, 'fwd', fwdRule);
    checkFunction(`${api}.defvjp`, 'bwd', bwdRule);
    if (ruleOptions.symbolicZeros) throw new ValueError(`${api}.defvjp: symbolicZeros is not supported; bwd receives zero cotangents as arrays of zeros`);
    fwd = fwdRule;
    bwd = bwdRule;
  };
  return f;
}

// ---- calling a custom function ----

function checkFunction(api: string, what: string, f: unknown): void {
  if (typeof f !== 'function') throw new TypeError(`${api}: ${what} must be a function, got ${show(f)}`);
}

/** A function's name as JAX's messages give it (`__name__`). */
function functionName(f: AnyFunction): string {
  return f.name || '<lambda>';
}

function argnums(api: string, value: unknown): number[] {
  if (value === undefined) return [];
  const list = typeof value === 'number' ? [value] : value;
  if (!globalThis.Array.isArray(list) || list.some((i) => typeof i !== 'number' || !Number.isInteger(i) || i < 0)) {
    throw new TypeError(`${api}: nondiffArgnums must be a non-negative integer or an array of them, got ${show(value)}`);
  }
  return [...new Set(list as number[])].sort((a, b) => a - b);
}

function define(f: object, name: string, fields: Record<string, unknown>): void {
  Object.defineProperty(f, 'name', { value: name });
  for (const [key, value] of Object.entries(fields)) {
    Object.defineProperty(f, key, typeof value === 'function' && key !== 'fun' ? { get: value as () => unknown } : { value });
  }
}

/** The arguments of one call, split into nondiff (static) and differentiable ones, the latter flattened. */
interface Call {
  staticArgs: unknown[];
  diffArgs: unknown[];
  leaves: Array[];
  inTree: TreeDef;
  /** No transformation sees this call: run fun itself (JAX's impl); `leaves` are then the arguments' leaves, numbers made arrays. */
  eager: boolean;
  /** The full argument list from differentiable arguments (as fwd takes them). */
  merge(diff: unknown[]): unknown[];
}

function splitArgs(api: string, args: unknown[], nondiff: readonly number[], prepareStatic: (x: Array) => Array): Call {
  for (const i of nondiff) {
    if (i >= args.length) throw new ValueError(`${api}: nondiffArgnums names argument ${i}, but the function was called with ${args.length} arguments`);
  }
  const tracers = flatten(args as PyTree)[0].filter((l): l is Array => l instanceof Array);
  const eager = findTopMain(tracers) === null;
  const staticArgs = nondiff.map((i) => {
    const [leaves, tree] = flatten(args[i] as PyTree);
    return leaves.some((l) => l instanceof Array) ? unflatten(tree, leaves.map((l) => (l instanceof Array ? prepareStatic(l) : l))) : args[i];
  });
  const diffArgs = args.filter((_, i) => !nondiff.includes(i));
  const [leaves, inTree] = eager ? eagerLeaves(diffArgs) : flattenArgs(api, diffArgs, 'argument');
  const merge = (diff: unknown[]) => {
    const all: unknown[] = [];
    let d = 0;
    let s = 0;
    for (let i = 0; i < args.length; i++) all.push(nondiff.includes(i) ? staticArgs[s++] : diff[d++]);
    return all;
  };
  return { staticArgs, diffArgs, leaves, inTree, eager, merge };
}

/** Eagerly, fun gets arrays where the call passed numbers (as under a transformation); other leaves pass as they are. */
function eagerLeaves(diffArgs: unknown[]): [Array[], TreeDef] {
  const [leaves, tree] = flatten(diffArgs as PyTree);
  return [leaves.map((l) => (typeof l === 'number' ? flattenArgs('jax.customJvp', l, 'argument')[0][0]! : l)) as Array[], tree];
}

interface Traced {
  jaxpr: PrimitiveParams['custom_jvp_call']['callJaxpr'];
  consts: Array[];
  outTree: TreeDef;
  outAvals: ShapedArray[];
}

/** fun traced at the arguments' avals; what it closes over becomes leading operands. */
function tracePrimal(api: string, name: string, fun: AnyFunction, call: Call): Traced {
  let outTree: TreeDef | undefined;
  const closed = traceToJaxpr((...xs) => {
    const out = fun(...call.merge(unflatten(call.inTree, xs) as unknown[]));
    const [leaves, tree] = flatten(out as PyTree);
    outTree = tree;
    return leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`${api}: output leaf ${i} of ${name} must be an array or a number, got ${show(l)}`);
      return toArray(api, l, `output leaf ${i}`);
    });
  }, call.leaves.map((l) => l.aval));
  const { jaxpr, consts } = hoistConsts(closed);
  return { jaxpr, consts, outTree: outTree!, outAvals: closed.outAvals };
}

function bindCall(prim: 'custom_jvp_call' | 'custom_vjp_call', name: string, traced: Traced, call: Call, jvp: CustomJvpFunction): unknown {
  const params: CustomCallParams = { name, callJaxpr: traced.jaxpr, jvp, numConsts: traced.consts.length, symbolicZeros: false };
  const outs = bind(prim, [...traced.consts, ...call.leaves], params);
  // the trace's own views of concrete constants: whoever needs them past the bind holds views of its own
  disposeConsts(traced.consts);
  return unflatten(traced.outTree, outs);
}

// ---- the rules as flat functions ----

/** `float32[3]`, JAX's aval.str_short(). */
const typeString = (a: { shape: readonly number[]; dtype: DType }): string => `${a.dtype}[${a.shape.join(',')}]`;

/** A tree of types as JAX prints str(tree_unflatten(tree, types)) without quotes. */
function typeTree(tree: TreeDef, avals: readonly { shape: readonly number[]; dtype: DType }[]): string {
  const render = (x: unknown): string => {
    if (typeof x === 'string') return x;
    if (x === null || x === undefined) return 'None';
    if (globalThis.Array.isArray(x)) return `[${x.map(render).join(', ')}]`;
    if (Object.getPrototypeOf(x) === Object.prototype) return `{${Object.entries(x as object).map(([k, v]) => `${k}: ${render(v)}`).join(', ')}}`;
    return String(x);
  };
  return render(unflatten(tree, avals.map(typeString)));
}

/** A leaf a rule returned, as an array (a JS number takes the dtype of the value it stands for, as a weak scalar would). */
function ruleLeaf(what: string, leaf: unknown, dtype: DType | undefined): Array {
  if (leaf instanceof Array) return leaf;
  if (!isArrayLike(leaf)) throw new TypeError(`${what} must be an array or a number, got ${show(leaf)}`);
  return toArray(what, leaf, 'output', typeof leaf === 'number' ? dtype : undefined);
}

/** Checks a rule's primal output against fun's (structure, then shapes and dtypes), with JAX's messages. */
function checkPrimalOut(
  messages: { prefix: string; structure: string; types: string }, name: string, tree: TreeDef, outs: Array[], traced: Traced,
): void {
  if (!treeDefEqual(tree, traced.outTree)) {
    throw new TypeError(
      `${messages.prefix}${messages.structure}:\n    ${typeTree(tree, outs)}\nwhile the custom_${messages.prefix.startsWith('Custom JVP') ? 'jvp' : 'vjp'}` +
        `-decorated function ${name} had output container/pytree structure:\n    ${typeTree(traced.outTree, traced.outAvals)}.`,
    );
  }
  if (outs.some((o, i) => o.dtype !== traced.outAvals[i]!.dtype || !shapesEqual(o.shape, traced.outAvals[i]!.shape))) {
    throw new TypeError(
      `${messages.prefix}${messages.types}:\n    ${typeTree(tree, outs)}\nwhile the custom_${messages.prefix.startsWith('Custom JVP') ? 'jvp' : 'vjp'}` +
        `-decorated function ${name} had output shapes/dtypes of:\n    ${typeTree(traced.outTree, traced.outAvals)}`,
    );
  }
}

/** The user's jvp rule over flat arrays, with JAX's checks of what it returns. */
function jvpRuleFunction(name: string, rule: AnyFunction, call: Call, traced: Traced): CustomJvpFunction {
  const ruleName = functionName(rule);
  const prefix = `Custom JVP rule ${ruleName} for function ${name} must produce a pair (list or tuple of length two) where the first element ` +
    `represents the primal output (equal in value to the output of the custom_jvp-decorated function ${name}, and in particular `;
  const jvp = (primals: Array[], tangents: Array[]): [Array[], Array[]] => {
    const pair: unknown = rule(...call.staticArgs, unflatten(call.inTree, primals), unflatten(call.inTree, tangents));
    if (!globalThis.Array.isArray(pair) || pair.length !== 2) {
      throw new TypeError(
        `Custom JVP rule ${ruleName} for function ${name} must produce a pair (list or tuple of length two) representing primal and tangent outputs, but got ${showValue(pair)}.`,
      );
    }
    const [primalLeaves, primalTree] = flatten(pair[0] as PyTree);
    const [tangentLeaves, tangentTree] = flatten(pair[1] as PyTree);
    if (!treeDefEqual(primalTree, tangentTree)) {
      throw new TypeError(
        `Custom JVP rule ${ruleName} for function ${name} must produce primal and tangent outputs with equal container (pytree) structures, ` +
          `but got ${String(primalTree)} and ${String(tangentTree)} respectively.`,
      );
    }
    const outs = primalLeaves.map((l, i) => ruleLeaf(`Custom JVP rule ${ruleName}: primal output leaf ${i}`, l, traced.outAvals[i]?.dtype));
    checkPrimalOut({
      prefix,
      structure: "of the same container/pytree structure), but instead the JVP rule output's first element had container/pytree structure",
      types: "with leaves of the same shape/dtype), but instead the JVP rule output's first element had shapes/dtypes of",
    }, name, primalTree, outs, traced);
    const outTangents = tangentLeaves.map((l, i) => ruleLeaf(`Custom JVP rule ${ruleName}: tangent output leaf ${i}`, l, outs[i]!.dtype));
    const wrong = outs.map((_, i) => i).filter((i) => isFloating(outs[i]!.dtype) && !sameType(outs[i]!, outTangents[i]!));
    if (wrong.length === 1 && outs.length === 1) {
      throw new TypeError(
        `Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. ` +
          `Expected ${typeString(outs[0]!)} (tangent type of ${typeString(outs[0]!)}) but got ${typeString(outTangents[0]!)}.`,
      );
    }
    if (wrong.length) {
      throw new TypeError(
        `Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes, but got:\n` +
          wrong.map((i) => `  primal ${typeString(outs[i]!)} with tangent ${typeString(outTangents[i]!)}, expecting tangent ${typeString(outs[i]!)}`).join('\n'),
      );
    }
    return [outs, outTangents];
  };
  return Object.assign(jvp, { toString: () => ruleName });
}

const sameType = (a: Array, b: Array) => a.dtype === b.dtype && shapesEqual(a.shape, b.shape);

/** A value for a message: a concrete scalar as its number (JAX prints `1.0`), anything else as show() does. */
function showValue(x: unknown): string {
  if (x instanceof Array && !x.isTracer && x.ndim === 0) return String(x.item());
  return x instanceof Array ? x.toString() : show(x);
}

/** defjvps: the rule that sums one tangent per argument. */
function defjvpsRule(f: AnyFunction, jvps: (AnyFunction | null | undefined)[]): AnyFunction {
  const jvp = (primals: unknown[], tangents: unknown[]) => {
    const primalOut = f(...primals);
    const [outLeaves, outTree] = flatten(primalOut as PyTree);
    const outs = outLeaves.map((l) => toArray('jax.customJvp.defjvps', l, 'primal output'));
    let sum: Tangent[] = outs.map(() => null);
    jvps.forEach((rule, i) => {
      if (!rule) return;
      const [leaves, tree] = flatten(rule(tangents[i], primalOut, ...primals) as PyTree);
      if (!treeDefEqual(tree, outTree)) {
        throw new TypeError(`jax.customJvp.defjvps: rule ${i} returned a tangent of structure ${String(tree)} for a primal output of structure ${String(outTree)}`);
      }
      sum = sum.map((s, k) => addTangents(s, ruleLeaf(`jax.customJvp.defjvps: rule ${i}`, leaves[k], outs[k]!.dtype)));
    });
    return [primalOut, unflatten(outTree, sum.map((s, k) => s ?? zerosLike(outs[k]!.aval)))];
  };
  return jvp;
}

/** A custom_vjp function's rule as a jvp: fwd on the primals, then custom_lin (bwd, transposed) on the tangents. */
function vjpRuleFunction(name: string, fwd: AnyFunction, bwd: AnyFunction, call: Call, traced: Traced): CustomJvpFunction {
  const fwdName = functionName(fwd);
  const bwdName = functionName(bwd);
  const residualsDoc = `and the second element represents residuals (i.e. values stored from the forward pass for use on the backward pass), but `;
  const prefix = `Custom VJP fwd rule ${fwdName} for function ${name} must produce a pair (list or tuple of length two) where the first element ` +
    `represents the primal output (equal to the output of the custom_vjp-decorated function ${name}) `;
  const jvp = (primals: Array[], tangents: Array[]): [Array[], Array[]] => {
    const pair: unknown = fwd(...call.merge(unflatten(call.inTree, primals) as unknown[]));
    if (!globalThis.Array.isArray(pair) || pair.length !== 2) {
      throw new TypeError(
        `Custom VJP fwd rule ${fwdName} for function ${name} must produce a pair (list or tuple of length two) where the first element ` +
          `represents the primal output (equal to those of the custom_vjp-decorated function ${name}) ${residualsDoc}` +
          `instead of a pair the fwd rule ${fwdName} produced ${showValue(pair)}.`,
      );
    }
    const [primalLeaves, primalTree] = flatten(pair[0] as PyTree);
    const outs = primalLeaves.map((l, i) => ruleLeaf(`Custom VJP fwd rule ${fwdName}: primal output leaf ${i}`, l, traced.outAvals[i]?.dtype));
    checkPrimalOut({
      prefix,
      structure: `${residualsDoc}instead the fwd rule output's first element had container/pytree structure`,
      types: `${residualsDoc}instead the fwd rule output's first element had shapes/dtypes of`,
    }, name, primalTree, outs, traced);
    // array residuals are operands of custom_lin; anything else (numbers, functions, None) is kept as it is
    const [resLeaves, resTree] = flatten(pair[1] as PyTree);
    const residuals = resLeaves.filter((l): l is Array => l instanceof Array);
    const backward: CustomBwdFunction = (res, cts) => {
      let k = 0;
      const pyRes = unflatten(resTree, resLeaves.map((l) => (l instanceof Array ? res[k++] : l)));
      const out: unknown = bwd(...call.staticArgs, pyRes, unflatten(traced.outTree, cts));
      return flattenCotangents(name, bwdName, out, call);
    };
    const outTangents = bind('custom_lin', [...residuals, ...tangents], {
      numRes: residuals.length,
      bwd: Object.assign(backward, { toString: () => bwdName }),
      outAvals: outs.map((o) => o.aval),
      symbolicZeros: false,
    });
    return [outs, outTangents];
  };
  return Object.assign(jvp, { toString: () => `(${fwdName}, ${bwdName})` });
}

/** bwd's output as one cotangent per differentiable leaf (null for zero), with JAX's checks. */
function flattenCotangents(name: string, bwdName: string, out: unknown, call: Call): (Array | null)[] {
  const structureError = () =>
    new TypeError(
      'Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args tuple of the primal function, ' +
        'and in particular must produce a tuple of length equal to the number of arguments to the primal function, but got bwd output ' +
        `structure ${String(flatten(out as PyTree)[1])} for primal input structure ${String(call.inTree)}.`,
    );
  if (!globalThis.Array.isArray(out) || out.length !== call.diffArgs.length) throw structureError();
  const cts: (Array | null)[] = [];
  // a null (or undefined) cotangent stands for zeros of a whole argument or subtree, as None does in JAX
  const walk = (ct: unknown, arg: unknown): void => {
    const [argLeaves, argTree] = flatten(arg as PyTree);
    if (ct === null || ct === undefined) {
      for (let i = 0; i < argLeaves.length; i++) cts.push(null);
      return;
    }
    if (globalThis.Array.isArray(arg) && globalThis.Array.isArray(ct)) {
      if (ct.length !== arg.length) throw structureError();
      arg.forEach((a, i) => walk(ct[i], a));
      return;
    }
    const [ctLeaves, ctTree] = flatten(ct as PyTree);
    if (!treeDefEqual(ctTree, argTree)) throw structureError();
    cts.push(...(ctLeaves as (Array | null)[]));
  };
  out.forEach((ct, i) => walk(ct, call.diffArgs[i]));
  return cts.map((ct, i) => {
    const primal = call.leaves[i]!;
    if (ct === null || !isFloating(primal.dtype)) return null;
    const c = ruleLeaf(`Custom VJP bwd rule ${bwdName}: cotangent leaf ${i}`, ct, primal.dtype);
    if (!shapesEqual(c.shape, primal.shape)) {
      throw new ValueError(
        `Custom VJP bwd rule attached to ${name} must produce an output with the same type as the args tuple of the primal function, ` +
          `but at output leaf ${i} the bwd rule produced an output of type ${typeString(c)} corresponding to an input of type ${typeString(primal)}`,
      );
    }
    // JAX lets a floating cotangent differ in dtype; the backward pass needs the input's
    return c.dtype === primal.dtype ? c : bind1('convert_element_type', [c], { newDtype: primal.dtype, weakType: primal.weakType });
  });
}

// ---- primitive rules: eager evaluation ----

function customCallImpl(inputs: Array[], { callJaxpr }: CustomCallParams): Array[] {
  const outs = tidy(() => evalJaxpr(callJaxpr.jaxpr, [], inputs));
  // an output that is an operand (or repeats an output) gets a view of its own, as aliasing primitives give
  const seen = new Set<Array>(inputs);
  return outs.map((o) => {
    if (!seen.has(o)) {
      seen.add(o);
      return o;
    }
    return new Array(o.storage('jax.customJvp').retain(), o.shape, o.dtype, o.weakType, o.memorySpace);
  });
}

registerImpl('custom_jvp_call', customCallImpl);
registerImpl('custom_vjp_call', customCallImpl);
registerImpl('custom_lin', () => {
  throw new TypeError(CUSTOM_VJP_JVP_ERROR);
});

// ---- jvp ----

function customCallJvp(primals: Array[], tangents: Tangent[], { jvp, numConsts }: CustomCallParams, closedOver: () => Error): [Array[], Tangent[]] {
  if (tangents.slice(0, numConsts).some((t) => t !== null)) throw closedOver();
  const args = primals.slice(numConsts);
  // zero tangents are instantiated: the rule gets arrays (no symbolic zeros)
  return jvp(args, tangents.slice(numConsts).map((t, i) => t ?? zerosLike(args[i]!.aval)));
}

export function customJvpCallJvp(primals: Array[], tangents: Tangent[], params: CustomCallParams): [Array[], Tangent[]] {
  return customCallJvp(primals, tangents, params, () => new CustomJVPException());
}

export function customVjpCallJvp(primals: Array[], tangents: Tangent[], params: CustomCallParams): [Array[], Tangent[]] {
  return customCallJvp(primals, tangents, params, () => new CustomVJPException());
}

export function customLinJvp(): never {
  throw new TypeError(CUSTOM_VJP_JVP_ERROR);
}

// ---- transpose ----

/** A custom call applied to tangents (a rule that calls a custom function on them) is linear: transpose its jaxpr (JAX drops the rule here too). */
export function customCallTranspose(cts: (Array | null)[], inputs: LinearInput[], { callJaxpr }: CustomCallParams): (Array | null)[] {
  return backwardPass(callJaxpr.jaxpr, [], inputs, cts);
}

/** custom_lin's transpose is the bwd rule (JAX's _custom_lin_transpose). */
export function customLinTranspose(cts: (Array | null)[], inputs: LinearInput[], { numRes, bwd, outAvals }: PrimitiveParams['custom_lin']): (Array | null)[] {
  const res = inputs.slice(0, numRes);
  if (res.some((r) => r instanceof UndefinedPrimal)) throw new Error('transpose: custom_lin is not linear in its residuals (the linear jaxpr is malformed)');
  const inCts = bwd(res as Array[], cts.map((c, i) => c ?? zerosLike(outAvals[i]!)));
  return [...res.map(() => null), ...inCts.map((c, i) => (inputs[numRes + i] instanceof UndefinedPrimal ? c : null))];
}

// ---- batching ----

/**
 * Runs fn on values batched at `dims` under a vmap: `main` (the vmap whose
 * rule this is) while it runs, so values the rule closes over are its
 * tracers; a new one once it has finished. Outputs are batched at 0.
 */
function batchedCall(main: MainTrace | undefined, axisSize: number, fn: (xs: Array[]) => (Array | null)[], vals: Array[], dims: BatchDim[]): (Array | null)[] {
  const run = (m: MainTrace) => {
    const trace = m.trace() as BatchTrace;
    const ins = vals.map((v, i) => (dims[i] === null ? v : new BatchTracer(trace, v, dims[i]!)));
    return fn(ins).map((o) => {
      if (o === null) return null;
      const t = fullRaise(trace, o) as BatchTracer;
      return batchDimAt(t.val, t.batchDim, 0, axisSize);
    });
  };
  return main && isActive(main) ? run(main) : withMainTrace('BatchTrace', (m) => new BatchTrace(m), run, axisSize);
}

/** Batches the primal jaxpr (outputs batched at 0) and vmaps the rule (JAX's batch_custom_jvp_subtrace). */
function customCallBatch(
  prim: 'custom_jvp_call' | 'custom_vjp_call', vals: Array[], dims: BatchDim[], params: CustomCallParams, axisSize: number, main?: MainTrace,
): [Array[], BatchDim[]] {
  const moved = vals.map((v, i) => (dims[i] === null ? v : moveaxis(v, dims[i]!, 0)));
  const inBatched = dims.map((d) => d !== null);
  const { jaxpr: batched } = batchJaxpr(params.callJaxpr, axisSize, inBatched, params.callJaxpr.outAvals.map(() => true));
  const argDims: BatchDim[] = inBatched.slice(params.numConsts).map((b) => (b ? 0 : null));
  const numOuts = params.callJaxpr.outAvals.length;
  const rule = params.jvp;
  const jvp = (primals: Array[], tangents: Array[]): [Array[], Array[]] => {
    const outs = batchedCall(main, axisSize, (xs) => {
      const [o, t] = rule(xs.slice(0, primals.length), xs.slice(primals.length));
      return [...o, ...t];
    }, [...primals, ...tangents], [...argDims, ...argDims]) as Array[];
    return [outs.slice(0, numOuts), outs.slice(numOuts)];
  };
  const outs = bind(prim, [...batched.consts, ...moved], {
    ...params,
    callJaxpr: batched.jaxpr,
    jvp: Object.assign(jvp, { toString: () => String(rule) }),
    numConsts: batched.consts.length + params.numConsts,
  });
  disposeConsts(batched.consts);
  return [outs, outs.map(() => 0)];
}

export function customJvpCallBatch(vals: Array[], dims: BatchDim[], params: CustomCallParams, axisSize: number, main?: MainTrace): [Array[], BatchDim[]] {
  return customCallBatch('custom_jvp_call', vals, dims, params, axisSize, main);
}

export function customVjpCallBatch(vals: Array[], dims: BatchDim[], params: CustomCallParams, axisSize: number, main?: MainTrace): [Array[], BatchDim[]] {
  return customCallBatch('custom_vjp_call', vals, dims, params, axisSize, main);
}

/**
 * custom_lin under vmap (the rule of a batched custom_vjp function): the
 * outputs are batched at 0, and bwd is vmapped over the residuals' batch
 * dimensions; cotangents of unbatched tangents are summed over the batch
 * (JAX's batch_custom_vjp_bwd).
 */
export function customLinBatch(vals: Array[], dims: BatchDim[], params: PrimitiveParams['custom_lin'], axisSize: number, main?: MainTrace): [Array[], BatchDim[]] {
  const { numRes, bwd, outAvals } = params;
  const resDims = dims.slice(0, numRes);
  const tangentDims = dims.slice(numRes);
  const backward: CustomBwdFunction = (res, cts) => {
    const inCts = batchedCall(main, axisSize, (xs) => bwd(xs.slice(0, numRes), xs.slice(numRes)), [...res, ...cts], [...resDims, ...cts.map(() => 0)]);
    return inCts.map((c, i) => {
      if (c === null) return null;
      const d = tangentDims[i]!;
      return d === null ? bind1('reduce_sum', [c], { axes: [0] }) : moveaxis(c, 0, d);
    });
  };
  const outs = bind('custom_lin', vals, {
    ...params,
    bwd: Object.assign(backward, { toString: () => String(bwd) }),
    outAvals: outAvals.map((a) => ({ ...a, shape: [axisSize, ...a.shape] })),
  });
  return [outs, outs.map(() => 0)];
}
