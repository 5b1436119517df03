// jax.jit: trace once per signature (argument structure, shapes, dtypes,
// weak types and static arguments), cache the closed jaxpr, compile it once
// through the compiler (compiler/fuse.ts: fused kernels; executable.ts) and
// run the executable on concrete arguments. Under an outer transformation
// (arguments are tracers, or a jit is tracing) the jaxpr is evaluated by
// binding its equations, so grad(jit(f)), vmap(jit(f)) and jit(jit(f))
// compose. Donated arguments are unusable after the call.
import { Array, type ArrayLike } from '../core/array.js';
import { arrayFromValues, bind1 } from '../core/bind.js';
import { type ShapeDtypeLike, isArrayLike, isShapeDtypeLike, shapeDtypeAval, toArray } from '../core/coerce.js';
import { DeviceLostError, ResourceExhaustedError, ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, type PyTree, type TreeDef, treeDefToString, unflatten } from '../core/pytree.js';
import { type ShapedArray, avalKey } from '../core/primitives.js';
import { traceConfigKey } from '../core/config.js';
import { canonicalizeDType } from '../core/dtype.js';
import type { ProgramExecutable } from '../runtime/backend.js';
import { lostArrays } from '../runtime/cuda-health.js';
import { type Device, defaultDevice } from '../runtime/device.js';
import { computationDevice, onDevice } from '../runtime/placement.js';
import { compileForDevice } from '../runtime/program.js';
import { findTopMain } from '../trace/core.js';
import { ClosedJaxpr, evalJaxpr } from '../trace/jaxpr.js';
import { flattenFunction, traceToJaxpr } from '../trace/jaxpr-trace.js';
import { jitShardings } from './jit-shardings.js';
import { signatureOf, wraps } from './signature.js';
import { Lowered, type Platform } from './stages.js';

export interface JitOptions {
  staticArgnums?: number | number[];
  /** Parameters to treat as static, by name (found in fn's source, as JAX finds them in its signature). */
  staticArgnames?: string | string[];
  donateArgnums?: number | number[];
  inShardings?: unknown;
  outShardings?: unknown;
}

interface CacheEntry {
  closed: ClosedJaxpr;
  outTree: TreeDef;
  inTree: TreeDef;
  avals: ShapedArray[];
  /** flat argument indices donated to the call */
  donated: ReadonlySet<number>;
  /** compiled on the first concrete call on each device */
  executables: Map<Device, ProgramExecutable>;
  /** the constants copied to devices other than their own, kept with the trace */
  movedConsts: Map<Device, Array[]>;
}

/** What a call may pass where fn takes an Array: anything jnp converts (a JS number, nested arrays, a TypedArray). */
type Loosen<T> = T extends Array ? ArrayLike : T;
type LoosenAll<T extends readonly unknown[]> = { [K in keyof T]: Loosen<T[K]> };
export type JittedArgs<F extends (...args: never[]) => unknown> = LoosenAll<Parameters<F>>;

export interface Jitted<F extends (...args: never[]) => unknown> {
  (...args: JittedArgs<F>): ReturnType<F>;
  /** The traced program for these arguments (cached like a call would be). */
  trace(...args: JittedArgs<F>): ClosedJaxpr;
  /** Number of distinct signatures traced so far. */
  readonly cacheSize: number;
  /** The compiled program for these arguments (compiled and cached like a call would be). */
  executable(...args: JittedArgs<F>): ProgramExecutable;
  /** Number of kernel launch sites in the compiled program for these arguments (a loop body's kernels count once). */
  kernelCount(...args: JittedArgs<F>): number;
  /** Traces for these arguments (arrays, or ShapeDtypeStructs: nothing is allocated) and lowers for a platform (default: the default device's; 'cuda' works without a GPU). */
  lower(...args: [...unknown[]]): Lowered;
}

function indexList(fn: string, value: unknown, arg: string): number[] {
  if (value === undefined) return [];
  const list = typeof value === 'number' ? [value] : value;
  if (!globalThis.Array.isArray(list) || list.some((i) => typeof i !== 'number' || !Number.isInteger(i))) {
    throw new TypeError(`${fn}: ${arg} must be an integer or an array of integers, got ${show(value)}`);
  }
  return list as number[];
}

/** An Array somewhere in a static argument (JS arrays and plain objects are looked into), or undefined. */
function arrayInside(value: unknown, depth = 0): Array | undefined {
  if (value instanceof Array) return value;
  if (depth > 32 || value === null || typeof value !== 'object') return undefined;
  const items = globalThis.Array.isArray(value) ? value : Object.getPrototypeOf(value) === Object.prototype ? Object.values(value) : [];
  for (const item of items) {
    const found = arrayInside(item, depth + 1);
    if (found) return found;
  }
  return undefined;
}

// JS has no __hash__ / __eq__. Plain data (numbers, strings, booleans, null, undefined, bigints, JS arrays, plain
// objects, TypedArrays) is keyed by value, as JAX hashes a tuple; anything else (a function, a class instance, a Map,
// a symbol) by identity, Python's default for an object without __eq__: two closures with the same source text but
// different captured values, or two Maps, must not share a trace. A class instance's own fields key it too, so
// mutating one retraces (where JAX's identity hash would reuse the stale trace, the Sharp Bits' warning).
const identities = new WeakMap<object, number>();
const symbolIdentities = new Map<symbol, number>();
let nextIdentity = 0;

function identityKey(x: object | symbol): string {
  const table = typeof x === 'symbol' ? symbolIdentities : identities;
  let id = (table as Map<object | symbol, number>).get(x);
  if (id === undefined) (table as Map<object | symbol, number>).set(x, (id = nextIdentity++));
  return `#${id}`;
}

function valueKey(value: unknown, index: number, depth: number): string {
  if (depth > 64) throw new TypeError(`jax.jit: static argument ${index} is nested too deeply (or cyclic) to be part of the cache key`);
  switch (typeof value) {
    // -0 keys as 0 (equal, as in Python); NaN and the infinities are values of their own
    case 'number': return `n${Object.is(value, -0) ? 0 : value}`;
    case 'string': return `s${JSON.stringify(value)}`;
    case 'boolean': return value ? 'T' : 'F';
    case 'undefined': return 'u';
    case 'bigint': return `b${value}`;
    case 'symbol':
    case 'function': return identityKey(value);
  }
  if (value === null) return 'z';
  const object = value as object;
  if (globalThis.Array.isArray(object)) return `[${object.map((v) => valueKey(v, index, depth + 1)).join(',')}]`;
  if (ArrayBuffer.isView(object) && !(object instanceof DataView)) {
    return `${object.constructor.name}(${globalThis.Array.from(object as unknown as Iterable<number | bigint>).join(',')})`;
  }
  const proto = Object.getPrototypeOf(object);
  if (proto === Object.prototype || proto === null) {
    return `{${Object.keys(object).map((k) => `${JSON.stringify(k)}:${valueKey((object as Record<string, unknown>)[k], index, depth + 1)}`).join(',')}}`;
  }
  if (object instanceof Array) return identityKey(object);
  const fields = Object.keys(object).map((k) => `${JSON.stringify(k)}:${valueKey((object as Record<string, unknown>)[k], index, depth + 1)}`);
  return `${identityKey(object)}{${fields.join(',')}}`;
}

function staticKey(value: unknown, index: number): string {
  // An Array has no value-based hash (JAX: unhashable); keyed as JSON it would look like every other Array and
  // its first trace would serve them all
  const array = arrayInside(value);
  if (array) {
    throw new ValueError(
      `jax.jit: Non-hashable static arguments are not supported. An error occurred while trying to hash an object of type Array, ` +
        `${array.isTracer ? `a traced ${array.dtype}[${array.shape.join(',')}]` : array.toRepr()} (static argument ${index}). ` +
        "The error was: TypeError: unhashable type: 'Array'. Pass it as a regular (traced) argument, or pass a JS number or array instead",
    );
  }
  return valueKey(value, index, 0);
}

/** An argument's aval with its dtype canonicalized (float64 is float32 while x64 is off). */
function canonicalAval(aval: ShapedArray): ShapedArray {
  const dtype = canonicalizeDType(aval.dtype);
  return dtype === aval.dtype ? aval : { ...aval, dtype };
}

function isLowerOptions(x: unknown): x is { platform?: unknown } {
  return typeof x === 'object' && x !== null && !(x instanceof Array) && !globalThis.Array.isArray(x) && !isShapeDtypeLike(x) && 'platform' in x;
}

// Traces are cached per function object, as JAX caches them per function: jit(f) twice shares them (the Gotchas
// tutorial's side-effect example prints once). Shardings are compared by identity, so only option sets without
// them share.
const caches = new WeakMap<object, Map<string, Map<string, CacheEntry>>>();

function sharedCache(fn: object, options: JitOptions, staticArgnums: number[], donateArgnums: number[]): Map<string, CacheEntry> {
  if (options.inShardings !== undefined || options.outShardings !== undefined) return new Map();
  const key = `${staticArgnums.join(',')}|${donateArgnums.join(',')}`;
  let byOptions = caches.get(fn);
  if (!byOptions) caches.set(fn, (byOptions = new Map()));
  let cache = byOptions.get(key);
  if (!cache) byOptions.set(key, (cache = new Map()));
  return cache;
}

/** jit's staticArgnames as positions: JS has no keyword arguments, so a name picks the parameter of that name. */
function argnumsOfNames(fn: (...args: never[]) => unknown, names: unknown): number[] {
  if (names === undefined) return [];
  const list = typeof names === 'string' ? [names] : names;
  if (!globalThis.Array.isArray(list) || !list.every((n) => typeof n === 'string')) {
    throw new TypeError(`jax.jit: staticArgnames must be a string or an array of strings, got ${show(names)}`);
  }
  const params = signatureOf(fn)?.params ?? [];
  return list.map((name) => {
    const i = params.indexOf(name);
    if (i < 0) throw new ValueError(`jax.jit: staticArgnames names '${name}', which is not a parameter of fn (its parameters: ${params.map((p) => p ?? '<destructured>').join(', ') || 'none'})`);
    return i;
  });
}

/** JAX's check_callable: jit takes a function, and not a generator function (its calls return generators, not arrays). */
function checkCallable(fn: unknown): void {
  if (typeof fn !== 'function') throw new TypeError(`jax.jit: Expected a callable value, got ${show(fn)}`);
  const kind = Object.getPrototypeOf(fn)?.constructor?.name;
  if (kind === 'GeneratorFunction' || kind === 'AsyncGeneratorFunction') {
    throw new TypeError(`jax.jit: Expected a function, got a generator function: ${(fn as { name?: string }).name || '(anonymous)'}`);
  }
}

/** JAX checks argnums against fn's signature when jit is applied (api_util._validate_argnums); a rest parameter takes any index. */
function checkArgnums(fn: (...args: never[]) => unknown, lists: Record<string, number[]>): void {
  const signature = signatureOf(fn);
  if (!signature || signature.rest) return;
  const n = signature.params.length;
  for (const [name, argnums] of Object.entries(lists)) {
    if (argnums.some((i) => i >= n || i < -n)) {
      throw new ValueError(`jax.jit: Jitted function has ${name}=${show(argnums)}, but only accepts ${n} positional arguments`);
    }
  }
}

/** `traced` (an argument as the traced function receives it) with the JS booleans of `original` put back. */
function withBooleans(traced: unknown, original: unknown): unknown {
  if (typeof original === 'boolean') return original;
  if (globalThis.Array.isArray(original) && globalThis.Array.isArray(traced)) return traced.map((t, i) => withBooleans(t, original[i]));
  if (original !== null && typeof original === 'object' && Object.getPrototypeOf(original) === Object.prototype && traced !== null && typeof traced === 'object') {
    return Object.fromEntries(Object.entries(traced).map(([k, v]) => [k, withBooleans(v, (original as Record<string, unknown>)[k])]));
  }
  return traced;
}

export function jit<F extends (...args: never[]) => unknown>(fn: F, options: JitOptions = {}): Jitted<F> {
  checkOptions('jax.jit', options, ['staticArgnums', 'staticArgnames', 'donateArgnums', 'inShardings', 'outShardings']);
  const shardings = jitShardings('jax.jit', options.inShardings, options.outShardings);
  checkCallable(fn);
  const staticArgnums = [...new Set([...indexList('jax.jit', options.staticArgnums, 'staticArgnums'), ...argnumsOfNames(fn, options.staticArgnames)])];
  const donateArgnums = indexList('jax.jit', options.donateArgnums, 'donateArgnums');
  checkArgnums(fn, { staticArgnums: indexList('jax.jit', options.staticArgnums, 'staticArgnums'), donateArgnums });
  for (const d of donateArgnums) {
    if (staticArgnums.includes(d)) throw new ValueError(`jax.jit: argument ${d} cannot be both static and donated`);
  }
  const cache = sharedCache(fn, options, staticArgnums, donateArgnums);

  const prepare = (args: unknown[], abstract = false) => {
    // an argnum past the arguments passed names a parameter left to its default: nothing is static or donated there (JAX)
    const positions = (argnums: number[]) => argnums.map((i) => (i < 0 ? i + args.length : i)).filter((i) => i >= 0 && i < args.length);
    const statics = new Set(positions(staticArgnums));
    const dynamic = args.map((a, i) => (statics.has(i) ? null : a));
    const [leaves, inTree] = flatten(dynamic as PyTree);
    // lower() takes ShapeDtypeStructs (anything with a shape and a dtype): avals, nothing allocated
    const arrays = leaves.map((l, i) => {
      if (abstract && isShapeDtypeLike(l)) return null;
      if (!isArrayLike(l)) throw new TypeError(`jax.jit: argument leaf ${i} must be an array or a number, got ${show(l)} (mark it static with staticArgnums)`);
      // a bare JS number is a weak float (API.md, "JS numbers"): JS cannot tell 2 from 2.0, and JAX's float habit wins
      if (typeof l === 'number') return arrayFromValues([l], [], 'float32', true);
      return toArray('jax.jit', l, `argument leaf ${i}`);
    });
    // a float64 argument is traced (and run) as float32 while x64 is off, as JAX canonicalizes its arguments
    const avals = arrays.map((a, i) => (a ? canonicalAval(a.aval) : shapeDtypeAval('jax.jit(...).lower', leaves[i] as ShapeDtypeLike, `argument leaf ${i}`)));
    // JS booleans are static wherever they sit (a traced one would be truthy in `flag ? a : b`, a silent wrong
    // branch JS gives no way to trap): their values key the cache and the function sees them as they are
    const booleans = leaves.map((l) => (l === true ? 'T' : l === false ? 'F' : '')).join('');
    // traces made with x64 on and off differ (dtypes asked for inside are canonicalized), as do those made with another
    // default matmul precision (baked into each dot_general), so the settings key them too
    const key = `${traceConfigKey()}${treeDefToString(inTree)}|${avals.map(avalKey).join(';')}|${[...statics].sort().map((i) => `${i}=${staticKey(args[i], i)}`).join(';')}|${booleans}`;
    const donated = new Set<number>();
    if (donateArgnums.length) {
      // the leaves of each donated argument (flattening each argument again only when something is donated)
      const donatedArgs = new Set(positions(donateArgnums));
      let offset = 0;
      for (const [i, d] of dynamic.entries()) {
        const count = flatten(d as PyTree)[0].length;
        if (donatedArgs.has(i)) for (let k = 0; k < count; k++) donated.add(offset + k);
        offset += count;
      }
    }
    if (!abstract) shardings.checkArguments(args, statics);
    let entry = cache.get(key);
    // constants traced on a device whose state was lost since are gone: trace again (closed-over arrays stay lost)
    if (entry && lostArrays(entry.closed.consts)) entry = undefined;
    if (!entry) {
      // inShardings / outShardings act inside the program: device_puts at its inputs and outputs (jit-shardings.ts)
      const call = (...dyn: unknown[]) => {
        const placed = shardings.placeArguments(dyn, args, statics);
        return shardings.placeOutputs(fn(...(args.map((a, i) => (statics.has(i) ? a : withBooleans(placed[i], a))) as never[])));
      };
      const { flat, outTree } = flattenFunction(call as never, inTree);
      const closed = traceToJaxpr(flat, avals);
      entry = { closed, outTree: outTree(), inTree, avals, donated, executables: new Map(), movedConsts: new Map() };
      // a jaxpr that closes over an outer transformation's tracers is valid only inside that transformation
      if (!closed.consts.some((c) => c.isTracer)) cache.set(key, entry);
    }
    return { entry, arrays, leaves, donated };
  };

  const compiled = (entry: CacheEntry, device: Device = defaultDevice()): ProgramExecutable => {
    let executable = entry.executables.get(device);
    if (!executable) {
      executable = compileForDevice(device, entry.closed.jaxpr, constsOn(entry, device), entry.donated, `jax.jit(${fn.name || 'fn'})`);
      entry.executables.set(device, executable);
    }
    return executable;
  };

  // closed-over constants live where they were made; a call on another device uses copies made once
  const constsOn = (entry: CacheEntry, device: Device): Array[] => {
    const consts = entry.closed.consts;
    if (consts.every((c) => c.device === device)) return consts;
    let moved = entry.movedConsts.get(device);
    if (!moved || lostArrays(moved)) {
      moved = consts.map((c) => onDevice(c, device).array);
      entry.movedConsts.set(device, moved);
    }
    return moved;
  };

  // the device a call runs on: its committed arguments' device, else the default one
  const callDevice = (arrays: (Array | null)[]): Device => computationDevice('jax.jit', arrays.filter((a): a is Array => a !== null));

  // The last call whose arguments were all concrete arrays (no statics, donation or inShardings): a call with arrays
  // of the same avals in the same places has the same cache key, so it reuses the entry without flattening the
  // arguments or building the key (host time per call is the cost of a small jitted function).
  const plainCalls = staticArgnums.length === 0 && donateArgnums.length === 0 && options.inShardings == null;
  let last: { entry: CacheEntry; config: string } | undefined;
  const sameAsLast = (args: unknown[]): CacheEntry | undefined => {
    if (!last || args.length !== last.entry.avals.length || last.config !== traceConfigKey()) return undefined;
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      const av = last.entry.avals[i]!;
      if (!(a instanceof Array) || a.isTracer || a.dtype !== av.dtype || a.weakType !== av.weakType || a.memorySpace !== (av.memorySpace ?? 'device')) return undefined;
      const shape = a.shape;
      if (shape.length !== av.shape.length) return undefined;
      for (let d = 0; d < shape.length; d++) if (shape[d] !== av.shape[d]) return undefined;
    }
    return lostArrays(last.entry.closed.consts) ? undefined : last.entry;
  };
  const noDonation: ReadonlySet<number> = new Set();
  const noArrays: readonly Array[] = [];
  // a device's errors name the jitted function
  const named = (error: unknown): unknown => {
    if ((error instanceof ResourceExhaustedError || error instanceof DeviceLostError) && !error.message.startsWith('jax.jit')) error.message = `jax.jit(${fn.name || 'fn'}): ${error.message}`;
    return error;
  };

  const invoke = (args: unknown[], on?: Device) => {
    const fast = plainCalls ? sameAsLast(args) : undefined;
    // The repeated call (host time per call): concrete arrays of the traced avals, no trace around us, every argument
    // already on the call's device. Nothing to convert, stage, move or free.
    if (fast && findTopMain(noArrays) === null) {
      const arrays = args as Array[];
      const device = on ?? computationDevice('jax.jit', arrays);
      let here = true;
      for (const a of arrays) if (a.device !== device) here = false;
      if (here) {
        const executable = compiled(fast, device);
        try {
          return unflatten(fast.outTree, executable.run(arrays, constsOn(fast, device)));
        } catch (error) {
          throw named(error);
        }
      }
    }
    const { entry, arrays: maybe, leaves, donated } = fast ? { entry: fast, arrays: args as Array[], leaves: args, donated: noDonation } : prepare(args);
    // (only entries the cache keeps: one closing over an outer transformation's tracers is valid only there)
    if (plainCalls && !fast && leaves.length === args.length && args.every((a) => a instanceof Array && !a.isTracer) && !entry.closed.consts.some((c) => c.isTracer)) {
      last = { entry, config: traceConfigKey() };
    }
    // a call always passes values (only lower() passes ShapeDtypeStructs), converted to the traced dtypes
    const arrays = (maybe as Array[]).map((a, i) => {
      const { dtype } = entry.avals[i]!;
      return a.dtype === dtype ? a : bind1('convert_element_type', [a], { newDtype: dtype, weakType: a.weakType });
    });
    // Tracers among the arguments or among the values fn closes over (an outer jvp's, say), or a jit tracing around
    // us: stage the equations into that trace.
    const concrete = findTopMain([...arrays, ...entry.closed.consts]) === null;
    if (!concrete) return unflatten(entry.outTree, evalJaxpr(entry.closed.jaxpr, entry.closed.consts, arrays));
    const device = on ?? callDevice(arrays);
    const executable = compiled(entry, device);
    const placed = arrays.map((a) => onDevice(a, device));
    let outs: Array[];
    try {
      outs = executable.run(placed.map((p) => p.array), constsOn(entry, device));
    } catch (error) {
      throw named(error);
    } finally {
      // copies to the device, and arrays made from JS numbers for this call, are ours to free (outputs hold their own references)
      placed.forEach((p, i) => {
        if (p.moved && !p.array.isDisposed) p.array.dispose();
        if (arrays[i] !== leaves[i]) arrays[i]!.dispose();
      });
    }
    // only the caller's Arrays are donated (not numbers converted for the call, nor arrays that had to move)
    if (donated.size) {
      const consumed = executable.plan.consumedArguments();
      for (const i of donated) if (arrays[i] === leaves[i] && !placed[i]!.moved && consumed.has(i)) arrays[i]!.markDonated();
    }
    return unflatten(entry.outTree, outs);
  };
  const wrapped = wraps((...args: unknown[]) => invoke(args), fn) as unknown as Jitted<F>;
  Object.defineProperty(wrapped, 'trace', { value: (...args: unknown[]) => prepare(args).entry.closed });
  Object.defineProperty(wrapped, 'cacheSize', { get: () => cache.size });
  const executableFor = (args: unknown[]) => {
    const { entry, arrays } = prepare(args);
    return compiled(entry, callDevice(arrays));
  };
  Object.defineProperty(wrapped, 'executable', { value: (...args: unknown[]) => executableFor(args) });
  Object.defineProperty(wrapped, 'kernelCount', { value: (...args: unknown[]) => executableFor(args).kernelCount });
  Object.defineProperty(wrapped, 'lower', {
    value: (...args: unknown[]) => {
      const last = args[args.length - 1];
      let platform: Platform = defaultDevice().platform;
      if (args.length && isLowerOptions(last)) {
        args = args.slice(0, -1);
        checkOptions('jax.jit(...).lower', last, ['platform']);
        if (last.platform !== undefined) {
          if (last.platform !== 'cpu' && last.platform !== 'cuda') throw new ValueError(`jax.jit(...).lower: platform must be 'cpu' or 'cuda', got ${show(last.platform)}`);
          platform = last.platform;
        }
      }
      const { entry } = prepare(args, true);
      if (entry.closed.consts.some((c) => c.isTracer)) throw new ValueError('jax.jit(...).lower: cannot lower a function that closes over values being traced by an outer transformation');
      return new Lowered(entry.closed, { platform, inTree: entry.inTree, outTree: entry.outTree, avals: entry.avals, donated: entry.donated, fn: fn.name || 'fn', executable: (device: Device) => compiled(entry, device), call: (device: Device, a: unknown[]) => invoke(a, device) });
    },
  });
  return wrapped;
}

export type { Array };
