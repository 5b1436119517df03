// jax.vmap: the batching interpreter, after Autodidax's BatchTrace. A
// BatchTracer is a value of the batched computation with the dimension its
// batch lives on (or null: the same for every batch element); each primitive
// on tracers goes to its rule in batching-rules.ts. inAxes / outAxes follow
// JAX: an int, null, or a pytree prefix of the arguments (a JS array with one
// entry per argument) / of the output; errors follow JAX's wording.
import type { Array } from '../core/array.js';
import { bind } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { heldArrays, tidy } from '../core/memory.js';
import { type Primitive, type PrimitiveParams, type ShapedArray, abstractEval } from '../core/primitives.js';
import { flatten, type PyTree, type TreeDef, treeDefToString, unflatten } from '../core/pytree.js';
import { shapesEqual } from '../core/shape.js';
import { type MainTrace, type Trace, Tracer, fullRaise, withMainTrace } from '../trace/core.js';
import { type BatchDim, batchDimAt, batchingRules, moveaxis } from './batching-rules.js';
import { wraps } from './signature.js';

export type { BatchDim, BatchRule } from './batching-rules.js';
export { batchingRules } from './batching-rules.js';

function perExampleAval(val: Array, batchDim: BatchDim): ShapedArray {
  const shape = batchDim === null ? val.shape : val.shape.filter((_, i) => i !== batchDim);
  return { ...val.aval, shape };
}

export class BatchTracer extends Tracer {
  constructor(
    readonly trace: BatchTrace,
    readonly val: Array,
    readonly batchDim: BatchDim,
  ) {
    super(perExampleAval(val, batchDim));
  }
  override fullLower(): Array {
    if (this.batchDim !== null) return this;
    return this.val instanceof Tracer ? this.val.fullLower() : this.val;
  }
  /** A tidy that keeps this tracer keeps its value (jnp functions run in tidy scopes). */
  [heldArrays](): Array[] {
    return [this.val];
  }
}

export class BatchTrace implements Trace {
  constructor(readonly main: MainTrace) {}
  get axisSize(): number {
    return this.main.globalData as number;
  }
  pure(x: Array): BatchTracer {
    return new BatchTracer(this, x, null);
  }
  lift(x: Tracer): BatchTracer {
    return new BatchTracer(this, x, null);
  }
  processPrimitive<P extends Primitive>(prim: P, tracers: Tracer[], params: PrimitiveParams[P]): BatchTracer[] {
    const ins = tracers as BatchTracer[];
    const vals = ins.map((t) => t.val);
    const dims = ins.map((t) => t.batchDim);
    // checked per example first, so shape errors name the shapes the user's function sees
    const expected = abstractEval[prim](ins.map((t) => t.aval), params);
    if (dims.every((d) => d === null)) return bind(prim, vals, params).map((v) => new BatchTracer(this, v, null));
    const [outs, outDims] = batchingRules[prim](vals, dims, params, this.axisSize, this.main);
    return outs.map((v, i) => {
      const t = new BatchTracer(this, v, outDims[i]!);
      const e = expected[i]!;
      if (!shapesEqual(t.shape, e.shape) || t.dtype !== e.dtype || (outDims[i] !== null && v.shape[outDims[i]!] !== this.axisSize)) {
        throw new Error(
          `vmap: the batching rule of ${prim} gave ${v.dtype}[${v.shape.join(',')}] batched at ${outDims[i]}, ` +
            `expected ${e.dtype}[${e.shape.join(',')}] per example with batch size ${this.axisSize} (a jaxon bug)`,
        );
      }
      return t;
    });
  }
}

/** An axis spec: an int, null (not mapped), or a pytree prefix of the values it describes. */
export type AxisSpec = number | null | undefined | AxisSpec[] | { [key: string]: AxisSpec };

export interface VmapOptions {
  /** Which axis of each argument to map over (default 0). A JS array has one entry per positional argument. */
  inAxes?: AxisSpec;
  /** Where the mapped axis goes in each output (default 0); null for outputs that are not batched. */
  outAxes?: AxisSpec;
  /** The batch size, needed when no argument is mapped. */
  axisSize?: number;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function checkAxisSpec(spec: unknown, name: 'inAxes' | 'outAxes'): void {
  const ok = (s: unknown): boolean =>
    s === null || s === undefined || (typeof s === 'number' && Number.isInteger(s)) ||
    (globalThis.Array.isArray(s) && s.every(ok)) || (isPlainObject(s) && Object.values(s).every(ok));
  if (!ok(spec)) {
    throw new TypeError(`jax.vmap: ${name} must be an int, null, or (nested) arrays / objects with those as leaves, got ${show(spec)}`);
  }
}

/** One axis per leaf of `tree`, from a spec that is a pytree prefix of it (JAX's flatten_axes). */
function broadcastPrefix(spec: AxisSpec, tree: unknown, name: 'inAxes' | 'outAxes', what: string): (number | null)[] {
  const out: (number | null)[] = [];
  const mismatch = (): never => {
    throw new ValueError(
      `jax.vmap: ${name} specification must be a tree prefix of the corresponding value, got specification ${show(spec)} ` +
        `for value tree ${treeDefToString(flatten(tree as PyTree)[1])} (${what})`,
    );
  };
  const walk = (s: AxisSpec, t: unknown): void => {
    if (s === null || s === undefined || typeof s === 'number') {
      const n = flatten(t as PyTree)[0].length;
      for (let i = 0; i < n; i++) out.push(s ?? null);
      return;
    }
    if (globalThis.Array.isArray(s)) {
      if (!globalThis.Array.isArray(t) || t.length !== s.length) mismatch();
      s.forEach((c, i) => walk(c, (t as unknown[])[i]));
      return;
    }
    if (!isPlainObject(t)) return mismatch();
    const keys = Object.keys(t).sort();
    const specKeys = Object.keys(s).sort();
    if (keys.length !== specKeys.length || keys.some((k, i) => k !== specKeys[i])) mismatch();
    for (const k of keys) walk(s[k], t[k]);
  };
  walk(spec, tree);
  return out;
}

/** Names of leaves for error messages: `args[0]`, `args[1].w`, `args[2][1]`. */
function leafPaths(tree: unknown, root: string): string[] {
  const out: string[] = [];
  const walk = (t: unknown, path: string): void => {
    if (t === null || t === undefined) return;
    if (globalThis.Array.isArray(t)) t.forEach((c, i) => walk(c, `${path}[${i}]`));
    else if (isPlainObject(t)) for (const k of Object.keys(t).sort()) walk(t[k], `${path}.${k}`);
    else out.push(path);
  };
  walk(tree, root);
  return out;
}

const typeString = (x: Array): string => `${x.dtype}[${x.shape.join(',')}]`;

function inconsistentSizes(mapped: { size: number; axis: number; path: string; x: Array }[], axisSize: number | undefined): ValueError {
  const lines: string[] = [];
  if (axisSize !== undefined) lines.push(`  * axisSize = ${axisSize} was given`);
  const bySize = new Map<number, typeof mapped>();
  for (const m of mapped) bySize.set(m.size, [...(bySize.get(m.size) ?? []), m]);
  const sizes = [...bySize.entries()].sort((a, b) => b[1].length - a[1].length);
  sizes.forEach(([size, ms], i) => {
    const e = ms[0]!;
    const where = `axis ${e.axis} of argument ${e.path} of type ${typeString(e.x)}`;
    if (ms.length === 1) lines.push(`  * one axis had size ${size}: ${where}`);
    else lines.push(`  * ${i === 0 ? 'most axes' : 'some axes'} (${ms.length} of them) had size ${size}, e.g. ${where}`);
  });
  return new ValueError(`jax.vmap got inconsistent sizes for array axes to be mapped:\n${lines.join(';\n')}`);
}

/**
 * jax.vmap(f, { inAxes, outAxes, axisSize }): f mapped over an axis of its
 * arguments, computed as one batched program (each primitive's batching rule)
 * rather than a loop. Like a jnp function, it disposes the arrays it made
 * that are not part of its result.
 */
/** vmap(f, inAxes, outAxes, options?) as JAX's habit has it, or vmap(f, { inAxes, outAxes, axisSize }). */
export function vmap<F extends (...args: never[]) => unknown>(
  fn: F,
  inAxesOrOptions?: VmapOptions | VmapOptions['inAxes'],
  outAxesArg?: VmapOptions['outAxes'],
  rest?: Omit<VmapOptions, 'inAxes' | 'outAxes'>,
): (...args: Parameters<F>) => ReturnType<F> {
  const positional = inAxesOrOptions === null || typeof inAxesOrOptions === 'number' || globalThis.Array.isArray(inAxesOrOptions) || outAxesArg !== undefined;
  const options: VmapOptions = positional
    ? { ...(rest ?? {}), ...(inAxesOrOptions !== undefined ? { inAxes: inAxesOrOptions as VmapOptions['inAxes'] } : {}), ...(outAxesArg !== undefined ? { outAxes: outAxesArg } : {}) }
    : ((inAxesOrOptions as VmapOptions | undefined) ?? {});
  checkOptions('jax.vmap', options, ['inAxes', 'outAxes', 'axisSize']);
  if (typeof fn !== 'function') throw new TypeError(`jax.vmap: fn must be a function, got ${show(fn)}`);
  const inAxes = options.inAxes === undefined ? 0 : options.inAxes;
  const outAxes = options.outAxes === undefined ? 0 : options.outAxes;
  checkAxisSpec(inAxes, 'inAxes');
  checkAxisSpec(outAxes, 'outAxes');
  if (isPlainObject(inAxes)) {
    throw new TypeError(`jax.vmap: inAxes must be an int, null, or an array with one entry per positional argument, got ${show(inAxes)}`);
  }
  const axisSizeOption = options.axisSize;
  if (axisSizeOption !== undefined && (typeof axisSizeOption !== 'number' || !Number.isInteger(axisSizeOption) || axisSizeOption < 0)) {
    throw new TypeError(`jax.vmap: axisSize must be a non-negative integer, got ${show(axisSizeOption)}`);
  }

  // the tidy disposes what the batched computation made and did not return (as jnp functions do)
  const batched = (...args: unknown[]): unknown => tidy(() => {
    if (globalThis.Array.isArray(inAxes) && inAxes.length !== args.length) {
      throw new ValueError(
        `jax.vmap: inAxes must be an int, null, or an array of entries corresponding to the positional arguments passed to the function, ` +
          `but got inAxes.length = ${inAxes.length}, args.length = ${args.length}`,
      );
    }
    const [leaves, inTree] = flatten(args as PyTree);
    const axes = broadcastPrefix(inAxes, args, 'inAxes', 'the arguments');
    const paths = leafPaths(args, 'args');
    const mapped: { index: number; size: number; axis: number; path: string; x: Array }[] = [];
    const inputs: unknown[] = leaves.map((leaf, i) => {
      const axis = axes[i]!;
      if (axis === null) return leaf;
      if (!isArrayLike(leaf)) {
        throw new TypeError(`jax.vmap: argument ${paths[i]} is mapped (inAxes ${axis}) but is not an array, got ${show(leaf)}`);
      }
      const x = toArray('jax.vmap', leaf, paths[i]);
      if (axis < -x.ndim || axis >= x.ndim) {
        throw new ValueError(
          `jax.vmap was requested to map its argument along axis ${axis}, which implies that its rank should be at least ` +
            `${axis < 0 ? -axis : axis + 1}, but is only ${x.ndim} (argument ${paths[i]} has shape [${x.shape.join(',')}])`,
        );
      }
      const a = axis < 0 ? axis + x.ndim : axis;
      mapped.push({ index: i, size: x.shape[a]!, axis: a, path: paths[i]!, x });
      return x;
    });
    if (leaves.length === 0 && axisSizeOption === undefined) {
      throw new ValueError(`jax.vmap wrapped function must be passed at least one argument containing an array or axisSize must be specified, got empty args ${show(args)}`);
    }
    if (mapped.length === 0 && axisSizeOption === undefined) {
      throw new ValueError(
        `jax.vmap must have at least one non-null value in inAxes (or be given axisSize); got inAxes ${show(inAxes)} for ${leaves.length} argument leaves`,
      );
    }
    const axisSize = axisSizeOption ?? mapped[0]!.size;
    if (mapped.some((m) => m.size !== axisSize)) throw inconsistentSizes(mapped, axisSizeOption);

    return withMainTrace('BatchTrace', (main) => new BatchTrace(main), (main) => {
      const trace = main.trace() as BatchTrace;
      for (const m of mapped) inputs[m.index] = new BatchTracer(trace, m.x, m.axis);
      const result = (fn as unknown as (...a: unknown[]) => unknown)(...(unflatten(inTree, inputs) as unknown[]));
      const [outLeaves, outTree] = flatten(result as PyTree);
      const outSpec = broadcastPrefix(outAxes, result, 'outAxes', 'the outputs');
      const outs = outLeaves.map((leaf, i) => {
        const t = fullRaise(trace, toArray('jax.vmap', leaf, 'output'));
        return moveToOutAxis(t as BatchTracer, outSpec[i]!, axisSize, i, outTree);
      });
      return unflatten(outTree, outs);
    }, axisSize);
  });
  return wraps(batched, fn) as (...args: Parameters<F>) => ReturnType<F>;
}

function moveToOutAxis(t: BatchTracer, outAxis: number | null, size: number, leaf: number, tree: TreeDef): Array {
  const { val, batchDim } = t;
  if (outAxis === null) {
    if (batchDim === null) return val;
    throw new ValueError(
      `jax.vmap has mapped output but outAxes is null: output leaf ${leaf} of ${treeDefToString(tree)} ` +
        `(per example ${t.dtype}[${t.shape.join(',')}]) depends on the mapped inputs`,
    );
  }
  const rank = t.ndim + 1;
  if (outAxis < -rank || outAxis >= rank) {
    throw new ValueError(
      `jax.vmap: outAxes ${outAxis} is out of bounds for output leaf ${leaf} of ${treeDefToString(tree)}, ` +
        `which has rank ${rank} with the mapped axis (per example ${t.dtype}[${t.shape.join(',')}])`,
    );
  }
  const axis = outAxis < 0 ? outAxis + rank : outAxis;
  return batchDim === null ? batchDimAt(val, null, axis, size) : moveaxis(val, batchDim, axis);
}
