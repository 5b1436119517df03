// Structured control flow (JAX's lax.scan, fori_loop, while_loop, cond,
// switch; jax/_src/lax/control_flow): the user's functions are traced once
// on abstract values into jaxprs, which become parameters of the `scan`,
// `while` and `cond` primitives, so loops stay loops under every
// transformation. Closed-over arrays and tracers become explicit operands.
// Carry types must be preserved (a weakly typed init is promoted to the
// body's output type and the body retraced, as JAX does); errors follow
// JAX's wording.
import { Array } from '../core/array.js';
import { arrayFromValues, bind, bind1 } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { isInteger, resultType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, type PyTree, type TreeDef, treeDefEqual, treeDefToString, unflatten } from '../core/pytree.js';
import type { ShapedArray } from '../core/primitives.js';
import { shapesEqual } from '../core/shape.js';
import { disposeConsts, joinBranchConsts, traceHoisted } from '../trace/hoisted-jaxpr.js';

const typeString = (a: ShapedArray): string => `${a.dtype}[${a.shape.join(',')}]`;

/** Names of the leaves of a tree for messages: `carry[0]`, `carry.w`, or `carry` for a lone leaf. */
function leafPaths(def: TreeDef, root: string): string[] {
  const out: string[] = [];
  const walk = (d: TreeDef, path: string): void => {
    if (d.kind === 'leaf') out.push(path);
    else if (d.kind === 'array') d.children.forEach((c, i) => walk(c, `${path}[${i}]`));
    else if (d.kind === 'object') d.keys.forEach((k, i) => walk(d.children[i]!, `${path}.${k}`));
  };
  walk(def, root);
  return out;
}

function leafArrays(fn: string, tree: unknown, what: string): [Array[], TreeDef] {
  const [leaves, def] = flatten(tree as PyTree);
  const paths = leafPaths(def, what);
  return [
    leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`${fn}: ${paths[i]} must be an array or a number, got ${show(l)}`);
      return toArray(fn, l, paths[i]);
    }),
    def,
  ];
}

/** JAX's _check_carry_type: the body must return a carry of the input carry's structure and types. */
function checkCarry(name: string, inTree: TreeDef, outTree: TreeDef, inAvals: ShapedArray[], outAvals: ShapedArray[]): void {
  if (!treeDefEqual(inTree, outTree)) {
    throw new TypeError(
      `${name} function carry input and carry output must have the same pytree structure, but they differ: ` +
        `the input carry is ${treeDefToString(inTree)} but the carry output is ${treeDefToString(outTree)}`,
    );
  }
  const paths = leafPaths(inTree, 'carry');
  const diffs: string[] = [];
  inAvals.forEach((a, i) => {
    const o = outAvals[i]!;
    const shapes = !shapesEqual(a.shape, o.shape);
    const dtypes = a.dtype !== o.dtype;
    if (!shapes && !dtypes) return;
    const what = shapes && dtypes ? 'the shapes and dtypes do' : shapes ? 'the shapes do' : 'the dtypes do';
    const component = inTree.kind === 'leaf' ? 'the input carry' : `the input carry component ${paths[i]}`;
    diffs.push(`  * ${component} has type ${typeString(a)} but the corresponding output carry component has type ${typeString(o)}, so ${what} not match`);
  });
  if (diffs.length) {
    throw new TypeError(
      `${name} function carry input and carry output must have equal types (e.g. shapes and dtypes of arrays), but they differ:\n\n` +
        `${diffs.join('\n')}\n\nRevise the function so that all output types match the corresponding input types.`,
    );
  }
}

/** JAX's _promote_weak_typed_inputs: a weakly typed init whose type the body changes takes the promoted type. */
function promoteWeakInit(init: Array[], outAvals: ShapedArray[]): Array[] | null {
  let changed = false;
  const promoted = init.map((x, i) => {
    const o = outAvals[i];
    if (!o || !x.weakType || (x.dtype === o.dtype && shapesEqual(x.shape, o.shape))) return x;
    const { dtype } = resultType({ dtype: x.dtype, weak: true }, { dtype: o.dtype, weak: o.weakType });
    if (dtype === x.dtype) return x;
    changed = true;
    return bind1('convert_element_type', [x], { newDtype: dtype, weakType: false });
  });
  return changed ? promoted : null;
}

/**
 * Traces a loop body on the carry (and extra) avals, promoting weakly typed
 * carries the body changes and checking that the carry type is preserved.
 * `body` returns [carry leaves + other outputs, carry tree].
 */
function traceLoopBody(
  name: string,
  init: Array[],
  initTree: TreeDef,
  extraAvals: ShapedArray[],
  body: (carry: Array[], extra: Array[]) => [Array[], TreeDef],
): { init: Array[]; traced: ReturnType<typeof traceHoisted> } {
  const trace = (carryInit: Array[]) => {
    let outTree: TreeDef | undefined;
    const traced = traceHoisted((...args) => {
      const [outs, tree] = body(args.slice(0, carryInit.length), args.slice(carryInit.length));
      outTree = tree;
      return outs;
    }, [...carryInit.map((x) => x.aval), ...extraAvals]);
    return { traced, outTree: outTree! };
  };
  let attempt = trace(init);
  const outCarry = () => attempt.traced.jaxpr.outAvals.slice(0, init.length);
  if (treeDefEqual(initTree, attempt.outTree)) {
    const promoted = promoteWeakInit(init, outCarry());
    if (promoted) {
      disposeConsts(attempt.traced.consts);
      init = promoted;
      attempt = trace(init);
    }
  }
  checkCarry(name, initTree, attempt.outTree, init.map((x) => x.aval), outCarry());
  return { init, traced: attempt.traced };
}

// ---- scan ----

/** What an initial carry may be given as: the carry's pytree, with JS numbers and booleans allowed for arrays. */
export type CarryInit<C> = C extends Array
  ? Array | number | boolean
  : C extends readonly unknown[] | Record<string, unknown>
    ? { [K in keyof C]: CarryInit<C[K]> }
    : C;

export interface ScanOptions {
  /** The number of iterations; required when xs is null, else must equal the leading axis of every xs leaf. */
  length?: number;
  /** Scan from the end of xs to its start (ys are still stacked in xs order). */
  reverse?: boolean;
  /** How many iterations one step of the loop runs (true: all of them). */
  unroll?: number | boolean;
}

/**
 * lax.scan(f, init, xs, { length, reverse, unroll }): f(carry, x) returns
 * [carry, y]; the loop threads the carry through the leading axis of xs and
 * stacks the ys. carry, xs and ys are pytrees; xs may be null (then give
 * `length`). Returns [finalCarry, stackedYs].
 */
export function scan<C, X, Y>(f: (carry: C, x: X) => [C, Y], init: CarryInit<C>, xs: X | null = null, options: ScanOptions = {}): [C, Y] {
  const fn = 'lax.scan';
  checkOptions(fn, options, ['length', 'reverse', 'unroll']);
  if (typeof f !== 'function') throw new TypeError(`${fn}: f must be a function, got ${show(f)}`);
  const reverse = options.reverse ?? false;
  if (typeof reverse !== 'boolean') throw new TypeError(`${fn}: reverse must be a boolean, got ${show(reverse)}`);
  const [initLeaves, initTree] = leafArrays(fn, init, 'init');
  const [xsLeaves, xsTree] = leafArrays(fn, xs, 'xs');

  const unranked = xsLeaves.filter((x) => x.ndim === 0);
  if (unranked.length) throw new ValueError(`${fn}: scan got value with no leading axis to scan over: ${unranked.map((x) => x.toString()).join(', ')}.`);
  const lengths = xsLeaves.map((x) => x.shape[0]!);
  let length: number;
  if (options.length !== undefined) {
    if (typeof options.length !== 'number' || !Number.isInteger(options.length) || options.length < 0) {
      throw new TypeError(`${fn}: length must be a non-negative integer, got ${show(options.length)}`);
    }
    length = options.length;
    if (lengths.some((l) => l !== length)) {
      throw new ValueError(`${fn}: scan got \`length\` argument of ${length} which disagrees with leading axis sizes [${lengths.join(', ')}].`);
    }
  } else {
    if (lengths.length === 0) throw new ValueError(`${fn}: scan got no values to scan over and \`length\` not provided.`);
    if (new Set(lengths).size > 1) throw new ValueError(`${fn}: scan got values with different leading axis sizes: ${lengths.join(', ')}.`);
    length = lengths[0]!;
  }
  const unrollOption = options.unroll ?? 1;
  if (!(typeof unrollOption === 'boolean' || (typeof unrollOption === 'number' && Number.isInteger(unrollOption) && unrollOption >= 1))) {
    throw new ValueError(`${fn}: \`unroll\` must be a \`bool\` or a positive \`int\`, got ${show(unrollOption)}.`);
  }
  const unroll = unrollOption === true ? Math.max(length, 1) : unrollOption === false ? 1 : unrollOption;

  let yTree: TreeDef | undefined;
  const xAvals = xsLeaves.map((x) => ({ ...x.aval, shape: x.shape.slice(1) }));
  const { init: carry, traced } = traceLoopBody('scan body', initLeaves, initTree, xAvals, (c, x) => {
    const out = f(unflatten(initTree, c) as C, unflatten(xsTree, x) as X);
    if (!globalThis.Array.isArray(out) || out.length !== 2) {
      throw new TypeError(`${fn}: the body function must return a pair [carry, y], got ${show(out)}`);
    }
    const [cLeaves, cTree] = leafArrays(fn, out[0], 'carry output');
    const [yLeaves, tree] = leafArrays(fn, out[1], 'y');
    yTree = tree;
    return [[...cLeaves, ...yLeaves], cTree];
  });
  const outs = bind('scan', [...traced.consts, ...carry, ...xsLeaves], {
    jaxpr: traced.jaxpr,
    length,
    numCarry: carry.length,
    numConsts: traced.consts.length,
    reverse,
    unroll,
  });
  disposeConsts(traced.consts);
  return [unflatten(initTree, outs.slice(0, carry.length)) as C, unflatten(yTree!, outs.slice(carry.length)) as Y];
}

/** lax.map(f, xs): f applied to each slice of xs along its leading axis, the results stacked (a scan without a carry). */
export function map<X, Y>(f: (x: X) => Y, xs: X): Y {
  if (typeof f !== 'function') throw new TypeError(`lax.map: f must be a function, got ${show(f)}`);
  return scan((_: null, x: X) => [null, f(x)] as [null, Y], null, xs)[1];
}

// ---- loops ----

/** A loop bound or index given as a JS number or an array that is not traced. */
function concreteInt(x: unknown): number | null {
  if (typeof x === 'number') return Number.isInteger(x) ? x : null;
  if (x instanceof Array && !x.isTracer && x.ndim === 0 && isInteger(x.dtype)) return Number(x.dataSync()[0]);
  return null;
}

/**
 * lax.whileLoop(cond, body, init): while cond(carry) is true, carry =
 * body(carry). cond must return a boolean scalar; body must preserve the
 * carry's structure and types. Forward-mode differentiable only (as in JAX).
 */
export function whileLoop<C>(condFun: (carry: C) => unknown, bodyFun: (carry: C) => C, init: CarryInit<C>): C {
  const fn = 'lax.whileLoop';
  if (typeof condFun !== 'function' || typeof bodyFun !== 'function') {
    throw new TypeError(`${fn}: condFun and bodyFun must be functions, got ${show(condFun)} and ${show(bodyFun)}`);
  }
  const [initLeaves, initTree] = leafArrays(fn, init, 'init');
  const { init: carry, traced: body } = traceLoopBody('while_loop body', initLeaves, initTree, [], (c) => {
    const [leaves, tree] = leafArrays(fn, bodyFun(unflatten(initTree, c) as C), 'carry output');
    return [leaves, tree];
  });
  const cond = traceHoisted((...c) => {
    const [leaves] = leafArrays(fn, condFun(unflatten(initTree, c) as C), 'cond output');
    return leaves;
  }, carry.map((x) => x.aval));
  const pred = cond.jaxpr.outAvals;
  if (pred.length !== 1 || pred[0]!.dtype !== 'bool' || pred[0]!.shape.length !== 0) {
    throw new TypeError(`${fn}: cond_fun must return a boolean scalar, but got output type(s) [${pred.map(typeString).join(', ')}].`);
  }
  const outs = bind('while', [...cond.consts, ...body.consts, ...carry], {
    bodyJaxpr: body.jaxpr,
    bodyNconsts: body.consts.length,
    condJaxpr: cond.jaxpr,
    condNconsts: cond.consts.length,
  });
  disposeConsts([...cond.consts, ...body.consts]);
  return unflatten(initTree, outs) as C;
}

export interface ForiLoopOptions {
  /** Passed to scan when the trip count is concrete. */
  unroll?: number | boolean;
}

/**
 * lax.foriLoop(lower, upper, body, init): for i in [lower, upper), val =
 * body(i, val). With concrete bounds it is a scan (reverse-differentiable);
 * with traced bounds a while loop, as in JAX.
 */
export function foriLoop<C>(lower: unknown, upper: unknown, bodyFun: (i: Array, val: C) => C, init: CarryInit<C>, options: ForiLoopOptions = {}): C {
  const fn = 'lax.foriLoop';
  checkOptions(fn, options, ['unroll']);
  if (typeof bodyFun !== 'function') throw new TypeError(`${fn}: bodyFun must be a function, got ${show(bodyFun)}`);
  for (const [x, name] of [[lower, 'lower'], [upper, 'upper']] as const) {
    if (typeof x === 'number' && !Number.isInteger(x)) throw new TypeError(`${fn}: ${name} must be an integer, got ${x}`);
  }
  const lo = toArray(fn, lower, 'lower');
  const hi = toArray(fn, upper, 'upper');
  for (const [x, name] of [[lo, 'lower'], [hi, 'upper']] as const) {
    if (x.ndim !== 0 || !isInteger(x.dtype)) throw new TypeError(`${fn}: ${name} must be an integer scalar, got ${typeString(x.aval)}`);
  }
  const { dtype, weak } = resultType({ dtype: lo.dtype, weak: lo.weakType }, { dtype: hi.dtype, weak: hi.weakType });
  const cast = (x: Array) => (x.dtype === dtype && x.weakType === weak ? x : bind1('convert_element_type', [x], { newDtype: dtype, weakType: weak }));
  const [l, u] = [cast(lo), cast(hi)];
  const one = arrayFromValues([1], [], dtype, weak);
  const step = ([i, x]: [Array, C]): [Array, C] => [bind1('add', [i, one], {}), bodyFun(i, x)];
  const [cl, cu] = [concreteInt(lower), concreteInt(upper)];
  if (cl !== null && cu !== null) {
    const [[, result]] = foriErrors(() => scan((c: [Array, C]) => [step(c), null], [l, init] as never, null, { length: Math.max(cu - cl, 0), unroll: options.unroll ?? 1 }));
    return result;
  }
  if (options.unroll !== undefined) throw new ValueError(`${fn}: unroll is only supported with concrete loop bounds`);
  const [, result] = foriErrors(() => whileLoop(([i]: [Array, C]) => bind1('lt', [i, u], {}), step, [l, init] as never));
  return result;
}

/** foriLoop runs as a scan or a while loop over [i, val]: their carry errors are said in foriLoop's words. */
function foriErrors<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof TypeError) || !/^\S+ (body )?function carry input and carry output/.test(error.message)) throw error;
    const message = error.message
      .replace(/^\S+ (body )?function carry input and carry output/, "lax.foriLoop: bodyFun's input val and output val")
      .replace(/input carry component carry\[1\]/g, 'input component val')
      .replace(/output carry component/g, 'output component')
      .replace(/the input carry is \[\*, (.*)\] but the carry output is \[\*, (.*)\]$/, 'the input val is $1 but the output val is $2');
    throw new TypeError(message);
  }
}

// ---- cond / switch ----

function traceBranches(fn: string, branches: ((...ops: never[]) => unknown)[], operands: unknown[], names: string[]) {
  const [opLeaves, opTree] = leafArrays(fn, operands, 'operands');
  const outTrees: TreeDef[] = [];
  const traced = branches.map((b, k) =>
    traceHoisted((...xs) => {
      const [leaves, tree] = leafArrays(fn, (b as (...a: unknown[]) => unknown)(...(unflatten(opTree, xs) as unknown[])), `${names[k]} output`);
      outTrees[k] = tree;
      return leaves;
    }, opLeaves.map((x) => x.aval)),
  );
  const what = names.length === 2 ? `${names[1]} and ${names[0]} output` : 'branch outputs';
  outTrees.forEach((t) => {
    if (!treeDefEqual(t, outTrees[0]!)) {
      throw new TypeError(`${fn}: ${what} must have same type structure, got ${treeDefToString(outTrees[0]!)} and ${treeDefToString(t)}.`);
    }
  });
  const outs0 = traced[0]!.jaxpr.outAvals;
  traced.forEach((t, k) => {
    const outs = t.jaxpr.outAvals;
    if (outs.some((a, i) => a.dtype !== outs0[i]!.dtype || !shapesEqual(a.shape, outs0[i]!.shape))) {
      throw new TypeError(
        `${fn}: ${what} must have identical types, got\n${names[0]}: (${outs0.map(typeString).join(', ')})\n${names[k]}: (${outs.map(typeString).join(', ')}).`,
      );
    }
  });
  const joined = joinBranchConsts(traced);
  return { ...joined, opLeaves, outTree: outTrees[0]! };
}

function bindCond(index: Array, traced: ReturnType<typeof traceBranches>): unknown {
  const outs = bind('cond', [index, ...traced.consts, ...traced.opLeaves], { branches: traced.branches });
  disposeConsts(traced.consts);
  return unflatten(traced.outTree, outs);
}

/**
 * lax.cond(pred, trueFun, falseFun, ...operands): trueFun(...operands) if
 * pred else falseFun(...operands). Both branches are traced; they must return
 * the same structure and types. pred is a boolean or integer scalar (nonzero
 * is true).
 */
export function cond(pred: unknown, trueFun: (...operands: never[]) => unknown, falseFun: (...operands: never[]) => unknown, ...operands: unknown[]): unknown {
  const fn = 'lax.cond';
  if (typeof trueFun !== 'function' || typeof falseFun !== 'function') throw new TypeError(`${fn}: true_fun and false_fun arguments should be callable.`);
  let p = toArray(fn, pred, 'pred');
  if (p.ndim !== 0) throw new TypeError(`${fn}: Pred must be a scalar, got ${p.toString()} of shape [${p.shape.join(',')}].`);
  if (p.dtype !== 'bool') {
    if (!isInteger(p.dtype)) throw new TypeError(`${fn}: Pred type must be either boolean or number, got ${p.dtype}.`);
    p = bind1('ne', [p, toArray(fn, 0, 'zero', p.dtype)], {});
  }
  const index = bind1('convert_element_type', [p], { newDtype: 'int32', weakType: false });
  return bindCond(index, traceBranches(fn, [falseFun, trueFun], operands, ['false_fun', 'true_fun']));
}

/**
 * lax.switch(index, branches, ...operands): branches[clamp(index, 0,
 * n - 1)](...operands).
 */
function switchBranches(index: unknown, branches: ((...operands: never[]) => unknown)[], ...operands: unknown[]): unknown {
  const fn = 'lax.switch';
  if (!globalThis.Array.isArray(branches) || branches.some((b) => typeof b !== 'function')) {
    throw new TypeError(`${fn}: branches must be an array of functions, got ${show(branches)}`);
  }
  if (branches.length === 0) throw new ValueError(`${fn}: Empty branch sequence`);
  const i = toArray(fn, index, 'index');
  if (i.ndim !== 0) throw new TypeError(`${fn}: Branch index must be scalar, got ${i.toString()} of shape [${i.shape.join(',')}].`);
  if (!isInteger(i.dtype)) throw new TypeError(`${fn}: Index type must be an integer, got ${i.dtype}.`);
  if (branches.length === 1) return (branches[0] as (...a: unknown[]) => unknown)(...operands);
  const i32 = i.dtype === 'int32' ? i : bind1('convert_element_type', [i], { newDtype: 'int32', weakType: false });
  const clamped = bind1('clamp', [toArray(fn, 0, 'lo', 'int32'), i32, toArray(fn, branches.length - 1, 'hi', 'int32')], {});
  return bindCond(clamped, traceBranches(fn, branches, operands, branches.map((_, k) => `branch ${k}`)));
}

export { switchBranches as switch };
