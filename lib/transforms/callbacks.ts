// Host callbacks, after jax/_src/debugging.py and jax/_src/callback.py:
// jax.debug.callback and jax.debug.print bind `debug_callback`, an effectful
// primitive with no outputs (eagerly it runs at once; in a compiled program
// it is a call step the program runner makes on the host, each time the
// program runs, in program order, never eliminated); jax.pureCallback binds
// `pure_callback`, whose outputs the host computes (pure: unused results are
// eliminated, as in JAX). Either way the user's function gets the operands as
// Arrays committed to the CPU device (JAX passes jax.Arrays placed on the
// CPU), with arguments that are not arrays passed through as they are
// (JAX's static callback arguments). The rules follow JAX's: a debug
// callback's jvp binds it on the primals (the forward pass prints, tangents
// never do) and its transpose is nothing; vmap unrolls it over the batch
// (one call per element, JAX's debug_batching_rule); a pure callback has no
// derivative (JAX's errors) and batches by its vmapMethod (JAX's
// ffi_batching_rule: a scan for 'sequential', one call on the stacked values
// for 'expand_dims' / 'broadcast_all').
//
// The rules are function declarations: the rule tables import them, and
// this module imports the transforms whose tables those are.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { Array } from '../core/array.js';
import { arrayFromValues, bind, bind1 } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { type DType, canonicalizeDType, checkDType, integerRange, isFloating, isInteger } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { dtypeOfTypedArray, packValues } from '../core/host.js';
import { Storage, tidy } from '../core/memory.js';
import type { DebugEffect, HostArgument, HostCallback, PrimitiveParams, ShapedArray, VmapMethod } from '../core/primitives.js';
import { flatten, type PyTree, type TreeDef, unflatten } from '../core/pytree.js';
import { checkFormat, hasPlaceholders, pyRepr, pyStr, pythonFormat, usesKeywords } from '../core/python-format.js';
import { shapesEqual } from '../core/shape.js';
import { traceHoisted } from '../trace/hoisted-jaxpr.js';
import { devices } from '../runtime/device.js';
import { registerImpl } from '../runtime/eager.js';
import { computationDevice } from '../runtime/placement.js';
import { type BatchDim, moveaxis } from './batching-rules.js';
import type { Tangent } from './jvp.js';
import type { LinearInput } from './transpose.js';

// ---- errors (JAX's wording) ----

/** Python's RuntimeError: what JAX raises when a pure callback returns the wrong number, shapes or dtypes of results. */
export class RuntimeError extends Error {
  override name = 'RuntimeError';
}

/** Python's NotImplementedError: vmap of a pure callback without a vmapMethod. */
export class NotImplementedError extends Error {
  override name = 'NotImplementedError';
}

const PURE_JVP_ERROR = 'Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.';
const PURE_TRANSPOSE_ERROR = 'Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use callbacks while taking gradients.';

// ---- where prints go ----

export type PrintSink = (line: string) => void;

const consoleSink: PrintSink = (line) => console.log(line);
let printSink: PrintSink = consoleSink;

/**
 * Where jax.debug.print writes its lines (one call per print, without the
 * newline): console.log unless replaced. Returns the sink it replaced; null
 * restores console.log. Tests capture output this way.
 */
export function setPrintSink(sink: PrintSink | null): PrintSink {
  if (sink !== null && typeof sink !== 'function') throw new TypeError(`jax.debug.setPrintSink: sink must be a function or null, got ${show(sink)}`);
  const previous = printSink;
  printSink = sink ?? consoleSink;
  return previous;
}

// ---- arguments: dynamic leaves are operands, the rest is static ----

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** Arrays (and TypedArrays) are the callback's operands; JS numbers, strings and everything else pass through as they are. */
const isDynamic = (leaf: unknown): boolean => leaf instanceof Array || (ArrayBuffer.isView(leaf) && !(leaf instanceof DataView));

interface SplitArgs {
  tree: TreeDef;
  leaves: unknown[];
  dynamic: boolean[];
  operands: Array[];
}

function splitArgs(api: string, args: unknown): SplitArgs {
  const [all, tree] = flatten(args as PyTree);
  const dynamic = all.map(isDynamic);
  const operands = all.filter((_, i) => dynamic[i]).map((l, i) => toArray(api, l, `argument leaf ${i}`));
  // the callback keeps the static leaves only (not the traced or concrete operands it is called with)
  return { tree, leaves: all.map((l, i) => (dynamic[i] ? null : l)), dynamic, operands };
}

/** The operands as the user's function sees them: new Arrays committed to the CPU device. */
function hostArrays(args: readonly HostArgument[]): Array[] {
  const cpu = devices('cpu')[0]!;
  return args.map(({ bytes, aval }) => new Array(new Storage(cpu.backend, cpu.backend.fromHost(bytes)), aval.shape, aval.dtype, aval.weakType, 'device', true));
}

/** The arguments rebuilt around the host arrays. */
function merge(split: SplitArgs, arrays: readonly Array[]): unknown {
  let k = 0;
  return unflatten(split.tree, split.leaves.map((l, i) => (split.dynamic[i] ? arrays[k++] : l)));
}

/** A callback as a jaxpr prints it. */
function named<F extends object>(f: F, name: string): F {
  return Object.assign(f, { toString: () => `<function ${name}>` });
}

// ---- jax.debug.callback / jax.debug.print ----

export interface DebugCallbackOptions {
  /** JAX orders only ordered callbacks; jaxon runs every callback in program order, so this changes nothing. */
  ordered?: boolean;
  /** JAX's per-shard printing; jaxon's programs run on one device, so this changes nothing. */
  partitioned?: boolean;
}

export interface DebugPrintOptions extends DebugCallbackOptions {
  /** Skip the check that every argument is used by a field; with no fields at all, the arguments print after fmt, space-separated. */
  skipFormatCheck?: boolean;
}

function debugEffect(options: DebugCallbackOptions): DebugEffect {
  return options.ordered ? 'OrderedDebug' : 'Debug';
}

/** Binds debug_callback: `fn` gets the arguments (operands as CPU Arrays, valid during the call: jax.keep one to hold it longer). */
function bindDebugCallback(api: string, name: string, fn: (args: unknown) => void, args: unknown, options: DebugCallbackOptions): void {
  tidy(() => {
    const split = splitArgs(api, args);
    const callback: HostCallback = (hostArgs) => {
      tidy(() => {
        fn(merge(split, hostArrays(hostArgs)));
      });
      return [];
    };
    bind('debug_callback', split.operands, { callback: named(callback, name), effect: debugEffect(options) });
  });
}

function callbackImpl(options: DebugCallbackOptions, fn: unknown, args: unknown[]): void {
  if (typeof fn !== 'function') throw new TypeError(`first argument to jax.debug.callback must be callable, but got an object of type ${pyTypeOf(fn)}`);
  bindDebugCallback('jax.debug.callback', fn.name || '<lambda>', (a) => {
    fn(...(a as unknown[]));
  }, args, options);
}

/**
 * jax.debug.callback(fn, ...args): calls fn(...args) when the computation
 * runs (eagerly: now; under jit: every time the program runs), with array
 * arguments as Arrays on the CPU device. Under vmap it is called once per
 * batch element; under grad only in the forward pass. Its return value is
 * ignored. The two-call form takes options first:
 * `jax.debug.callback({ ordered: true })(fn, ...args)`.
 */
export function callback(options: DebugCallbackOptions): (fn: (...args: any[]) => unknown, ...args: unknown[]) => void;
export function callback(fn: (...args: any[]) => unknown, ...args: unknown[]): void;
export function callback(fnOrOptions: unknown, ...args: unknown[]): unknown {
  if (isPlainObject(fnOrOptions)) {
    if (args.length) throw new TypeError(`debug_callback received unexpected arguments in the two-call form: args=${pyRepr(args)}`);
    checkOptions('jax.debug.callback', fnOrOptions, ['ordered', 'partitioned']);
    const options = fnOrOptions as DebugCallbackOptions;
    return (fn: unknown, ...rest: unknown[]) => callbackImpl(options, fn, rest);
  }
  callbackImpl({}, fnOrOptions, args);
}

function pyTypeOf(x: unknown): string {
  if (x === null || x === undefined) return "<class 'NoneType'>";
  if (typeof x === 'number') return Number.isSafeInteger(x) ? "<class 'int'>" : "<class 'float'>";
  if (typeof x === 'string') return "<class 'str'>";
  if (typeof x === 'boolean') return "<class 'bool'>";
  if (globalThis.Array.isArray(x)) return "<class 'list'>";
  if (isPlainObject(x)) return "<class 'dict'>";
  return `<class '${(x as object).constructor?.name ?? 'object'}'>`;
}

function printImpl(options: DebugPrintOptions, fmt: unknown, given: unknown[]): void {
  if (typeof fmt !== 'string') throw new TypeError(`jax.debug.print: fmt must be a string, got ${show(fmt)}`);
  const args = [...given];
  // JS has no keyword arguments: a format with named fields takes them from a trailing plain object
  let kwargs: Record<string, unknown> = {};
  if (args.length && isPlainObject(args[args.length - 1]) && usesKeywords(fmt)) kwargs = args.pop() as Record<string, unknown>;
  if (!options.skipFormatCheck) {
    const { unusedArgs, unusedKwargs } = checkFormat(fmt, args, kwargs);
    if (unusedArgs.length) throw new ValueError(`Unused positional arguments to \`jax.debug.print\`: ${pyRepr(unusedArgs.map((i) => args[i]))}`);
    if (unusedKwargs.length) {
      throw new ValueError(
        `Unused keyword arguments to \`jax.debug.print\`: ${pyRepr(unusedKwargs)}. ` +
          'You may be passing an f-string (i.e, `f"{x}"`) into `jax.debug.print` and instead should pass in a regular string.',
      );
    }
  }
  const placeholders = fmt !== '' && hasPlaceholders(fmt);
  bindDebugCallback('jax.debug.print', 'print', (a) => {
    const [positional, keywords] = a as [unknown[], Record<string, unknown>];
    printSink(placeholders ? pythonFormat(fmt, positional, keywords) : [fmt, ...positional.map(pyStr)].join(' '));
  }, [args, kwargs], options);
}

/**
 * jax.debug.print(fmt, ...args): prints fmt formatted as Python's
 * str.format does (`{}`, `{0}`, `{x:.3f}`; named fields take their values
 * from a trailing object, `jax.debug.print('{x}', { x })`), with Arrays
 * shown as JAX shows them, when the computation runs: eagerly at once,
 * under jit every time the program runs, under vmap once per batch element,
 * under grad in the forward pass only, in loops once per iteration; always
 * in program order. Lines go to console.log (see setPrintSink). The
 * two-call form takes options first: `jax.debug.print({ ordered: true })(fmt, ...args)`.
 */
export function print(options?: DebugPrintOptions): (fmt: string, ...args: unknown[]) => void;
export function print(fmt: string, ...args: unknown[]): void;
export function print(fmtOrOptions?: unknown, ...args: unknown[]): unknown {
  if (fmtOrOptions === undefined || isPlainObject(fmtOrOptions)) {
    if (args.length) throw new TypeError(`debug_print received unexpected arguments in the two-call form: args=${pyRepr(args)}`);
    checkOptions('jax.debug.print', fmtOrOptions ?? {}, ['ordered', 'partitioned', 'skipFormatCheck']);
    const options = (fmtOrOptions ?? {}) as DebugPrintOptions;
    return (fmt: string, ...rest: unknown[]) => printImpl(options, fmt, rest);
  }
  printImpl({}, fmtOrOptions, args);
}

// ---- jax.pureCallback ----

const VMAP_METHODS: readonly VmapMethod[] = ['sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized'];

export interface PureCallbackOptions {
  /** How vmap batches the callback (JAX's vmap_method); without one, vmap raises JAX's NotImplementedError. */
  vmapMethod?: VmapMethod | null;
  /** JAX's device to call back from; jaxon calls back on the host of the computation's device, so this is accepted and ignored. */
  sharding?: unknown;
}

const PURE_OPTIONS = ['vmapMethod', 'sharding'];

/** A trailing plain object whose keys are all pureCallback options is the options, not one more argument. */
function isPureOptions(x: unknown): x is PureCallbackOptions {
  return isPlainObject(x) && Object.keys(x).length > 0 && Object.keys(x).every((k) => PURE_OPTIONS.includes(k));
}

interface ShapeDtypeLike {
  shape: readonly number[];
  dtype: unknown;
}

const isShapeDtypeLike = (x: unknown): x is ShapeDtypeLike =>
  x instanceof Array || (typeof x === 'object' && x !== null && globalThis.Array.isArray((x as ShapeDtypeLike).shape) && 'dtype' in x);

/** JAX's result_avals from result_shape_dtypes, with its check of 64-bit types. */
function resultAvalsOf(spec: unknown): { avals: ShapedArray[]; tree: TreeDef } {
  const [leaves, tree] = flatten(spec as PyTree, { isLeaf: isShapeDtypeLike });
  const avals = leaves.map((l, i): ShapedArray => {
    if (!isShapeDtypeLike(l)) throw new TypeError(`jax.pureCallback: resultShapeDtypes leaf ${i} must have a shape and a dtype (a jax.ShapeDtypeStruct), got ${show(l)}`);
    if (!l.shape.every((d) => Number.isInteger(d) && d >= 0)) throw new ValueError(`jax.pureCallback: resultShapeDtypes leaf ${i} has an invalid shape ${show(l.shape)}`);
    const dtype = checkDType('jax.pureCallback', l.dtype, `resultShapeDtypes leaf ${i} dtype`);
    if (canonicalizeDType(dtype) !== dtype) throw new ValueError('result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled');
    return { shape: [...l.shape], dtype, weakType: false };
  });
  return { avals, tree };
}

/** A shape as Python prints a tuple: (), (3,), (2, 3). */
const pyShape = (shape: readonly number[]) => (shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`);

/**
 * One result leaf as numpy would see it (np.asarray, canonicalized): its
 * shape, dtype and bytes. A JS number is weakly typed here, as everywhere
 * in jaxon: it is a value of any floating dtype, and an integral one of any
 * integer dtype it fits (JS cannot tell 2.0 from 2, so Python's int/float
 * distinction cannot be made).
 */
function resultValue(leaf: unknown, expected: DType, i: number): { shape: readonly number[]; dtype: DType; bytes: () => Uint8Array } {
  if (leaf instanceof Array) {
    if (leaf.isTracer) throw new TypeError(`jax.pureCallback: the callback returned a traced value ${leaf} as return value #${i}; it must return concrete arrays`);
    const s = leaf.storage('jax.pureCallback');
    return { shape: leaf.shape, dtype: leaf.dtype, bytes: () => s.backend.toHostSync(s.buffer) };
  }
  if (ArrayBuffer.isView(leaf) && !(leaf instanceof DataView)) {
    const own = dtypeOfTypedArray(leaf);
    if (own === null) throw new TypeError(`jax.pureCallback: return value #${i} is a ${leaf.constructor.name}, which has no jaxon dtype`);
    const dtype = canonicalizeDType(own);
    const values = leaf as unknown as ArrayLike<number>;
    return { shape: [values.length], dtype, bytes: () => packValues(values, dtype) };
  }
  if (typeof leaf === 'boolean') return { shape: [], dtype: 'bool', bytes: () => packValues([leaf], 'bool') };
  if (typeof leaf === 'number') {
    let dtype: DType;
    if (isFloating(expected)) dtype = expected;
    else if (isInteger(expected) && Number.isInteger(leaf) && leaf >= integerRange(expected)[0] && leaf <= integerRange(expected)[1]) dtype = expected;
    else dtype = Number.isInteger(leaf) ? 'int32' : 'float32';
    return { shape: [], dtype, bytes: () => packValues([leaf], dtype) };
  }
  throw new TypeError(`jax.pureCallback: return value #${i} must be an array or a number, got ${show(leaf)}`);
}

/** JAX's checks of a callback's results (emit_python_callback's _wrapped_callback), then their bytes. */
function checkResults(result: unknown, avals: readonly ShapedArray[]): Uint8Array[] {
  const leaves = flatten(result as PyTree)[0];
  if (leaves.length !== avals.length) {
    throw new RuntimeError(`Mismatched number of outputs from callback. Expected: ${avals.length}, Actual: ${leaves.length}`);
  }
  return leaves.map((leaf, i) => {
    const expected = avals[i]!;
    const got = resultValue(leaf, expected.dtype, i);
    if (!shapesEqual(got.shape, expected.shape)) {
      throw new RuntimeError(`Incorrect output shape for return value #${i}: Expected: ${pyShape(expected.shape)}, Actual: ${pyShape(got.shape)}`);
    }
    if (got.dtype !== expected.dtype) {
      throw new RuntimeError(`Incorrect output dtype for return value #${i}: Expected: ${expected.dtype}, Actual: ${got.dtype}`);
    }
    return got.bytes();
  });
}

/**
 * jax.pureCallback(callback, resultShapeDtypes, ...args, { vmapMethod }):
 * calls callback(...args) on the host (array arguments as Arrays on the CPU
 * device) and returns its results as arrays of the declared
 * ShapeDtypeStructs (a pytree of them), checked with JAX's errors. Works
 * under jit (called when the program runs, and not at all when its results
 * are unused: it is pure) and vmap (by vmapMethod: 'sequential',
 * 'sequential_unrolled', 'expand_dims', 'broadcast_all'); differentiating
 * it raises JAX's error (use jax.customJvp / customVjp around it).
 */
export function pureCallback(callbackFn: unknown, resultShapeDtypes: unknown, ...rest: unknown[]): unknown {
  const api = 'jax.pureCallback';
  if (typeof callbackFn !== 'function') throw new TypeError(`${api}: callback must be a function, got ${show(callbackFn)}`);
  const options: PureCallbackOptions = rest.length && isPureOptions(rest[rest.length - 1]) ? (rest.pop() as PureCallbackOptions) : {};
  checkOptions(api, options, PURE_OPTIONS);
  const vmapMethod = options.vmapMethod ?? null;
  if (vmapMethod !== null && !VMAP_METHODS.includes(vmapMethod)) {
    throw new ValueError(`vmap_method must be one of the allowed methods ${pyRepr([...VMAP_METHODS, null])}, but got: ${typeof vmapMethod === 'string' ? vmapMethod : show(vmapMethod)}`);
  }
  const { avals, tree: outTree } = resultAvalsOf(resultShapeDtypes);
  const name = callbackFn.name || '<lambda>';
  return tidy(() => {
    const [leaves, inTree] = flatten(rest as PyTree);
    const operands = leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`${api}: argument leaf ${i} must be an array or a number, got ${show(l)}`);
      // a bare JS number is a weak float, as jit takes it (API.md, "JS numbers")
      return typeof l === 'number' ? arrayFromValues([l], [], 'float32', true) : toArray(api, l, `argument leaf ${i}`);
    });
    // the results are checked against the equation's types: under vmap ('expand_dims', 'broadcast_all') those are batched
    const flat: HostCallback = (hostArgs, resultTypes) => {
      let results: Uint8Array[] = [];
      tidy(() => {
        const args = unflatten(inTree, hostArrays(hostArgs)) as unknown[];
        results = checkResults((callbackFn as (...a: unknown[]) => unknown)(...args), resultTypes);
      });
      return results;
    };
    const outs = bind('pure_callback', operands, { callback: named(flat, name), resultAvals: avals, vmapMethod });
    return unflatten(outTree, outs);
  });
}

// ---- eager evaluation ----

/** An operand's bytes on the host (any device, any memory kind). */
function hostArgument(x: Array): HostArgument {
  const s = x.storage('jax.debug.callback');
  return { bytes: s.backend.toHostSync(s.buffer), aval: x.aval };
}

registerImpl('debug_callback', (inputs, { callback }) => {
  callback(inputs.map(hostArgument), []);
  return [];
});

registerImpl('pure_callback', (inputs, { callback, resultAvals }) => {
  const device = computationDevice('jax.pureCallback', inputs);
  const committed = inputs.some((x) => x.committed);
  const results = callback(inputs.map(hostArgument), resultAvals);
  return resultAvals.map((a, i) => new Array(new Storage(device.backend, device.backend.fromHost(results[i]!)), a.shape, a.dtype, false, 'device', committed));
});

// ---- jvp and transpose ----

/** JAX's debug_callback_jvp_rule: the callback runs on the primals; tangents never reach it. */
export function debugCallbackJvp(primals: Array[], _tangents: Tangent[], params: PrimitiveParams['debug_callback']): [Array[], Tangent[]] {
  bind('debug_callback', primals, params);
  return [[], []];
}

export function pureCallbackJvp(): [Array[], Tangent[]] {
  throw new ValueError(PURE_JVP_ERROR);
}

/** JAX's debug_callback_transpose_rule: no cotangents (a debug callback has no outputs to carry any). */
export function debugCallbackTranspose(_cts: (Array | null)[], inputs: LinearInput[]): (Array | null)[] {
  return inputs.map(() => null);
}

export function pureCallbackTranspose(): (Array | null)[] {
  throw new ValueError(PURE_TRANSPOSE_ERROR);
}

// ---- batching ----

/** x at index i of `axis`, the axis removed (lax.index_in_dim with keepdims=False). */
function indexInDim(x: Array, axis: number, i: number): Array {
  const sliced = bind1('slice', [x], {
    startIndices: x.shape.map((_, d) => (d === axis ? i : 0)),
    limitIndices: x.shape.map((n, d) => (d === axis ? i + 1 : n)),
    strides: null,
  });
  return bind1('squeeze', [sliced], { dimensions: [axis] });
}

/** JAX's debug_batching_rule: one callback per batch element, in order; unbatched operands are passed as they are. */
export function debugCallbackBatch(vals: Array[], dims: BatchDim[], params: PrimitiveParams['debug_callback'], axisSize: number): [Array[], BatchDim[]] {
  for (let i = 0; i < axisSize; i++) {
    bind('debug_callback', vals.map((v, k) => (dims[k] === null ? v : indexInDim(v, dims[k]!, i))), params);
  }
  return [[], []];
}

/** JAX's ffi_batching_rule for pure_callback. */
export function pureCallbackBatch(vals: Array[], dims: BatchDim[], params: PrimitiveParams['pure_callback'], axisSize: number): [Array[], BatchDim[]] {
  const { vmapMethod, resultAvals } = params;
  const moved = vals.map((v, k) => (dims[k] === null ? v : moveaxis(v, dims[k]!, 0)));
  const batchedAvals = resultAvals.map((a) => ({ ...a, shape: [axisSize, ...a.shape] }));
  let outs: Array[];
  switch (vmapMethod) {
    case 'legacy_vectorized':
      outs = bind('pure_callback', moved, { ...params, resultAvals: batchedAvals });
      break;
    case 'expand_dims':
    case 'broadcast_all': {
      // unbatched operands get a leading axis: of size 1, or the batch size
      const size = vmapMethod === 'broadcast_all' ? axisSize : 1;
      const args = moved.map((v, k) => (dims[k] !== null ? v : bind1('broadcast_in_dim', [v], { shape: [size, ...v.shape], broadcastDimensions: v.shape.map((_, d) => d + 1) })));
      outs = bind('pure_callback', args, { ...params, resultAvals: batchedAvals });
      break;
    }
    case 'sequential':
    case 'sequential_unrolled': {
      // lax.map over the batched operands: a scan whose body calls back once per element
      const batched = dims.map((d) => d !== null);
      const unbatchedOps = moved.filter((_, k) => !batched[k]);
      const batchedOps = moved.filter((_, k) => batched[k]);
      const body = traceHoisted((...xs) => {
        let u = 0;
        let b = unbatchedOps.length;
        return bind('pure_callback', batched.map((f) => (f ? xs[b++]! : xs[u++]!)), params);
      }, [...unbatchedOps.map((v) => v.aval), ...batchedOps.map((v) => ({ ...v.aval, shape: v.shape.slice(1) }))]);
      outs = bind('scan', [...body.consts, ...unbatchedOps, ...batchedOps], {
        jaxpr: body.jaxpr,
        length: axisSize,
        numCarry: 0,
        numConsts: body.consts.length + unbatchedOps.length,
        reverse: false,
        unroll: vmapMethod === 'sequential_unrolled' ? Math.max(axisSize, 1) : 1,
      });
      break;
    }
    default:
      throw new NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmapMethod is one of 'sequential', 'sequential_unrolled', " +
          `'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got vmapMethod=${vmapMethod === null ? 'null' : show(vmapMethod)}.`,
      );
  }
  return [outs, outs.map(() => 0)];
}
