// jax.jit: trace once per signature (argument structure, shapes, dtypes,
// weak types and static arguments), cache the closed jaxpr, compile it once
// through the compiler (compiler/fuse.ts: fused kernels; executable.ts) and
// run the executable on concrete arguments. Under an outer transformation
// (arguments are tracers, or a jit is tracing) the jaxpr is evaluated by
// binding its equations, so grad(jit(f)), vmap(jit(f)) and jit(jit(f))
// compose. Donated arguments are unusable after the call.
import { Array } from '../core/array.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, type PyTree, type TreeDef, treeDefToString, unflatten } from '../core/pytree.js';
import type { ShapedArray } from '../core/primitives.js';
import { isArrayLike, toArray } from '../lax/coerce.js';
import { type Executable, compileJaxpr } from '../compiler/executable.js';
import { defaultDevice } from '../runtime/device.js';
import { findTopMain } from '../trace/core.js';
import { ClosedJaxpr, evalJaxpr } from '../trace/jaxpr.js';
import { flattenFunction, traceToJaxpr } from '../trace/jaxpr-trace.js';
import { usesControlFlow } from './control-flow/jaxprs.js';
import { segmentedProgram } from './control-flow/segmented.js';

export interface JitOptions {
  staticArgnums?: number | number[];
  donateArgnums?: number | number[];
  inShardings?: unknown;
  outShardings?: unknown;
}

interface CacheEntry {
  closed: ClosedJaxpr;
  outTree: TreeDef;
  /** compiled on the first concrete call */
  executable?: Executable;
}

export interface Jitted<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  /** The traced program for these arguments (cached like a call would be). */
  trace(...args: Parameters<F>): ClosedJaxpr;
  /** Number of distinct signatures traced so far. */
  readonly cacheSize: number;
  /** The compiled program for these arguments (compiled and cached like a call would be). */
  executable(...args: Parameters<F>): Executable;
  /** Number of kernel launches one call with these arguments makes. */
  kernelCount(...args: Parameters<F>): number;
}

function indexList(fn: string, value: unknown, arg: string): number[] {
  if (value === undefined) return [];
  const list = typeof value === 'number' ? [value] : value;
  if (!globalThis.Array.isArray(list) || list.some((i) => typeof i !== 'number' || !Number.isInteger(i))) {
    throw new TypeError(`${fn}: ${arg} must be an integer or an array of integers, got ${show(value)}`);
  }
  return list as number[];
}

function staticKey(value: unknown, index: number): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    throw new TypeError(`jax.jit: static argument ${index} must be JSON-serializable (it is part of the cache key), got ${show(value)}`);
  }
}

function avalKey(a: ShapedArray): string {
  return `${a.dtype}${a.weakType ? '~' : ''}[${a.shape.join(',')}]`;
}

export function jit<F extends (...args: never[]) => unknown>(fn: F, options: JitOptions = {}): Jitted<F> {
  checkOptions('jax.jit', options, ['staticArgnums', 'donateArgnums', 'inShardings', 'outShardings']);
  if (typeof fn !== 'function') throw new TypeError(`jax.jit: fn must be a function, got ${show(fn)}`);
  const staticArgnums = indexList('jax.jit', options.staticArgnums, 'staticArgnums');
  const donateArgnums = indexList('jax.jit', options.donateArgnums, 'donateArgnums');
  for (const d of donateArgnums) {
    if (staticArgnums.includes(d)) throw new ValueError(`jax.jit: argument ${d} cannot be both static and donated`);
  }
  const cache = new Map<string, CacheEntry>();

  const prepare = (args: unknown[]) => {
    const normalize = (i: number) => (i < 0 ? i + args.length : i);
    for (const i of [...staticArgnums, ...donateArgnums]) {
      if (normalize(i) < 0 || normalize(i) >= args.length) {
        throw new ValueError(`jax.jit: argnum ${i} is out of range for a call with ${args.length} arguments`);
      }
    }
    const statics = new Set(staticArgnums.map(normalize));
    const dynamic = args.map((a, i) => (statics.has(i) ? null : a));
    const [leaves, inTree] = flatten(dynamic as PyTree);
    const arrays = leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`jax.jit: argument leaf ${i} must be an array or a number, got ${show(l)} (mark it static with staticArgnums)`);
      return toArray('jax.jit', l, `argument leaf ${i}`);
    });
    const key = `${treeDefToString(inTree)}|${arrays.map((a) => avalKey(a.aval)).join(';')}|${[...statics].sort().map((i) => `${i}=${staticKey(args[i], i)}`).join(';')}`;
    let entry = cache.get(key);
    if (!entry) {
      const call = (...dyn: unknown[]) => fn(...(args.map((a, i) => (statics.has(i) ? a : dyn[i])) as never[]));
      const { flat, outTree } = flattenFunction(call as never, inTree);
      const closed = traceToJaxpr(flat, arrays.map((a) => a.aval));
      entry = { closed, outTree: outTree() };
      // a jaxpr that closes over an outer transformation's tracers is valid only inside that transformation
      if (!closed.consts.some((c) => c.isTracer)) cache.set(key, entry);
    }
    return { entry, arrays, leaves, normalize, leavesPerArg: dynamic.map((d) => flatten(d as PyTree)[0].length) };
  };

  const compiled = (entry: CacheEntry): Executable => {
    entry.executable ??= compileJaxpr(entry.closed.jaxpr, defaultDevice().backend);
    return entry.executable;
  };

  const wrapped = ((...args: unknown[]) => {
    const { entry, arrays, leaves, normalize, leavesPerArg } = prepare(args);
    // Tracers among the arguments, or a jit tracing around us: stage the equations into that trace.
    const concrete = findTopMain(arrays) === null;
    // control flow (scan / while / cond) runs between compiled straight-line segments (control-flow/segmented.ts)
    const run = () => (usesControlFlow(entry.closed.jaxpr) ? segmentedProgram(entry.closed).run(arrays) : compiled(entry).run(arrays, entry.closed.consts));
    const outs = concrete ? run() : evalJaxpr(entry.closed.jaxpr, entry.closed.consts, arrays);
    if (concrete) {
      // arrays made from JS numbers for this call are ours to free (outputs hold their own references)
      arrays.forEach((a, i) => {
        if (!(leaves[i] instanceof Array)) a.dispose();
      });
    }
    if (donateArgnums.length && concrete) {
      const donated = new Set(donateArgnums.map(normalize));
      let offset = 0;
      leavesPerArg.forEach((count, i) => {
        if (donated.has(i)) {
          // only the caller's Arrays are donated; numbers converted for the call are not theirs
          for (let k = 0; k < count; k++) if (leaves[offset + k] instanceof Array) arrays[offset + k]!.markDonated();
        }
        offset += count;
      });
    }
    return unflatten(entry.outTree, outs);
  }) as unknown as Jitted<F>;
  Object.defineProperty(wrapped, 'trace', { value: (...args: unknown[]) => prepare(args).entry.closed });
  Object.defineProperty(wrapped, 'cacheSize', { get: () => cache.size });
  Object.defineProperty(wrapped, 'executable', { value: (...args: unknown[]) => compiled(prepare(args).entry) });
  Object.defineProperty(wrapped, 'kernelCount', { value: (...args: unknown[]) => compiled(prepare(args).entry).kernelCount });
  return wrapped;
}

export type { Array };
