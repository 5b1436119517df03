// jax.checkpoint / jax.remat, jax.ad_checkpoint.checkpoint_name and
// jax.checkpoint_policies, after jax/_src/ad_checkpoint.py. checkpoint(f)
// traces f to a jaxpr and binds the `checkpoint` primitive on it (rules in
// remat-rules.ts); the policy decides, when the function is differentiated,
// which intermediates the backward pass gets saved, which it recomputes and
// which go to host memory and back. Policies are functions of an equation
// (primitive, input avals, params) returning true / 'save', false /
// 'recompute' or { offload: [src, dst] }; checkpointName marks a value with
// the `name` primitive that the name-based policies match.
import type { Array } from '../core/array.js';
import { bind1 } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, type PyTree, unflatten } from '../core/pytree.js';
import {
  type CheckpointPolicy, type DotDimensionNumbers, MEMORY_KINDS, type MemoryKind, type PolicyDecision, type Primitive, type ShapedArray,
} from '../core/primitives.js';
import { traceToJaxpr } from '../trace/jaxpr-trace.js';
import { flatCall } from './jvp.js';
import { bindCheckpoint } from './remat-rules.js';

export type { CheckpointPolicy, MemoryKind, PolicyDecision } from '../core/primitives.js';

export interface CheckpointOptions {
  /** Which intermediates to save for the backward pass (default: none, everything is recomputed from the inputs). */
  policy?: CheckpointPolicy | null;
  /** Keep the compiler from merging the recomputation with the forward pass (default true). */
  preventCse?: boolean;
  /** Arguments that are not traced (passed to fn as they are). */
  staticArgnums?: number | number[];
}

const POLICY = Symbol('jaxon.checkpointPolicy');

/** Gives a policy the name jaxprs print it with. */
function named<F extends CheckpointPolicy>(name: string, policy: F): F {
  Object.defineProperty(policy, 'name', { value: name });
  Object.defineProperty(policy, 'toString', { value: () => name });
  Object.defineProperty(policy, POLICY, { value: true });
  return policy;
}

const nameList = (names: readonly string[]) => names.map((n) => `'${n}'`).join(', ');

function checkNames(fn: string, what: string, names: unknown): string[] {
  if (!globalThis.Array.isArray(names)) throw new TypeError(`${fn}: ${what} must be an array of strings, got ${show(names)}`);
  names.forEach((n, i) => {
    if (typeof n !== 'string') throw new TypeError(`${fn}: ${what} must be strings, got ${show(n)} at position ${i}`);
  });
  return names as string[];
}

function checkKind(fn: string, what: string, kind: unknown): MemoryKind {
  if (!MEMORY_KINDS.includes(kind as MemoryKind)) {
    throw new ValueError(`${fn}: ${what} must be a memory kind (${MEMORY_KINDS.map((k) => `'${k}'`).join(' or ')}), got ${show(kind)}`);
  }
  return kind as MemoryKind;
}

function checkPolicyFunction(fn: string, what: string, policy: unknown): CheckpointPolicy {
  if (typeof policy !== 'function') {
    throw new TypeError(`${fn}: ${what} must be a policy function (prim, avals, params) => decision, such as jax.checkpointPolicies.dotsSaveable, got ${show(policy)}`);
  }
  return policy as CheckpointPolicy;
}

const hasNoBatchDims = (prim: Primitive, params: Readonly<Record<string, unknown>>) => {
  if (prim !== 'dot_general') return false;
  const [, [lhsBatch, rhsBatch]] = params.dimensionNumbers as DotDimensionNumbers;
  return lhsBatch.length === 0 && rhsBatch.length === 0;
};

/** Whether a decision saves, for policies that combine boolean policies. */
function asBoolean(d: PolicyDecision): boolean | null {
  if (d === true || d === 'save') return true;
  if (d === false || d === 'recompute') return false;
  return null;
}

// JAX's DotsSaveable: convolutions count as dots, except for the no-batch-dims policy
const dotsSaveable = named('dots_saveable', (prim) => prim === 'dot_general' || prim === 'conv_general_dilated');
const dotsWithNoBatchDimsSaveable = named('dots_with_no_batch_dims_saveable', (prim, _avals, params) => hasNoBatchDims(prim, params));

/** jax.checkpoint_policies. */
export const checkpointPolicies = Object.freeze({
  /** Save every intermediate (no recomputation). */
  everythingSaveable: named('everything_saveable', () => true),
  /** Save nothing: recompute every intermediate from the checkpoint's inputs. */
  nothingSaveable: named('nothing_saveable', () => false),
  /** Save the results of matrix multiplications and convolutions (dot_general, conv_general_dilated). */
  dotsSaveable,
  /** Alias of dotsSaveable (JAX's checkpoint_dots). */
  checkpointDots: dotsSaveable,
  /** Save the results of dot_generals without batch dimensions. */
  dotsWithNoBatchDimsSaveable,
  /** Alias of dotsWithNoBatchDimsSaveable (JAX's checkpoint_dots_with_no_batch_dims). */
  checkpointDotsWithNoBatchDims: dotsWithNoBatchDimsSaveable,
  /** Save only values named (checkpointName) with one of `names`; recompute everything else. */
  saveOnlyTheseNames(...names: string[]): CheckpointPolicy {
    const allowed = new Set(checkNames('jax.checkpointPolicies.saveOnlyTheseNames', 'names', names));
    return named(`save_only_these_names(${nameList(names)})`, (prim, _avals, params) => (prim === 'name' && allowed.has(params.name as string) ? 'save' : 'recompute'));
  },
  /** Save every named value except those named with one of `names`; recompute unnamed values. */
  saveAnyNamesButThese(...names: string[]): CheckpointPolicy {
    const denied = new Set(checkNames('jax.checkpointPolicies.saveAnyNamesButThese', 'names', names));
    return named(`save_any_names_but_these(${nameList(names)})`, (prim, _avals, params) => prim === 'name' && !denied.has(params.name as string));
  },
  /**
   * Save the values named with namesWhichCanBeSaved, offload those named with
   * namesWhichCanBeOffloaded from offloadSrc to offloadDst (and back for the
   * backward pass), recompute everything else.
   */
  saveAndOffloadOnlyTheseNames(options: {
    namesWhichCanBeSaved: string[];
    namesWhichCanBeOffloaded: string[];
    offloadSrc: MemoryKind;
    offloadDst: MemoryKind;
  }): CheckpointPolicy {
    const fn = 'jax.checkpointPolicies.saveAndOffloadOnlyTheseNames';
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${fn}: expected an options object { namesWhichCanBeSaved, namesWhichCanBeOffloaded, offloadSrc, offloadDst }, got ${show(options)}`);
    }
    const keys = ['namesWhichCanBeSaved', 'namesWhichCanBeOffloaded', 'offloadSrc', 'offloadDst'];
    checkOptions(fn, options, keys);
    for (const k of keys) if ((options as unknown as Record<string, unknown>)[k] === undefined) throw new TypeError(`${fn}: missing option '${k}'`);
    const saved = new Set(checkNames(fn, 'namesWhichCanBeSaved', options.namesWhichCanBeSaved));
    const offloaded = new Set(checkNames(fn, 'namesWhichCanBeOffloaded', options.namesWhichCanBeOffloaded));
    const src = checkKind(fn, 'offloadSrc', options.offloadSrc);
    const dst = checkKind(fn, 'offloadDst', options.offloadDst);
    const both = [...saved].filter((n) => offloaded.has(n));
    if (both.length) {
      throw new ValueError(
        `${fn}: the names should be exclusive and should not intersect in namesWhichCanBeSaved and namesWhichCanBeOffloaded; ` +
          `got namesWhichCanBeSaved=[${nameList([...saved])}], namesWhichCanBeOffloaded=[${nameList([...offloaded])}] and the intersection [${nameList(both)}]`,
      );
    }
    return named(
      `save_and_offload_only_these_names(names_which_can_be_saved=[${nameList([...saved])}], names_which_can_be_offloaded=[${nameList([...offloaded])}], offload_src='${src}', offload_dst='${dst}')`,
      (prim, _avals, params) => {
        if (prim !== 'name') return 'recompute';
        const name = params.name as string;
        if (saved.has(name)) return 'save';
        if (offloaded.has(name)) return { offload: [src, dst] };
        return 'recompute';
      },
    );
  },
  /** Offload the results of dot_generals without batch dimensions from src to dst; recompute everything else. */
  offloadDotWithNoBatchDims(offloadSrc: MemoryKind, offloadDst: MemoryKind): CheckpointPolicy {
    const fn = 'jax.checkpointPolicies.offloadDotWithNoBatchDims';
    const src = checkKind(fn, 'offloadSrc', offloadSrc);
    const dst = checkKind(fn, 'offloadDst', offloadDst);
    return named(`offload_dot_with_no_batch_dims('${src}', '${dst}')`, (prim, _avals, params) =>
      hasNoBatchDims(prim, params) ? { offload: [src, dst] } : 'recompute');
  },
  /** Save what either policy saves (both must decide save or recompute, not offload). */
  saveFromBothPolicies(policy1: CheckpointPolicy, policy2: CheckpointPolicy): CheckpointPolicy {
    const fn = 'jax.checkpointPolicies.saveFromBothPolicies';
    const p1 = checkPolicyFunction(fn, 'policy1', policy1);
    const p2 = checkPolicyFunction(fn, 'policy2', policy2);
    return named(`save_from_both_policies(${p1.name || 'policy'}, ${p2.name || 'policy'})`, (prim, avals, params) => {
      const out1 = p1(prim, avals, params);
      const out2 = p2(prim, avals, params);
      const b1 = asBoolean(out1);
      const b2 = asBoolean(out2);
      if (b1 === null || b2 === null) {
        throw new ValueError(
          `${fn}: the policies must decide save or recompute (a boolean), got ${show(out1)} and ${show(out2)}; ` +
            `write a custom policy function for offloading instead`,
        );
      }
      return b1 || b2;
    });
  },
});

/** A user's policy, named for the jaxpr printer (which would otherwise print its source). */
function normalizePolicy(policy: unknown): CheckpointPolicy | null {
  if (policy === undefined || policy === null) return null;
  const p = checkPolicyFunction('jax.checkpoint', 'policy', policy);
  if ((p as unknown as Record<symbol, unknown>)[POLICY]) return p;
  return named(p.name || 'custom_policy', (prim, avals, params) => p(prim, avals, params));
}

function indexList(value: unknown): number[] {
  if (value === undefined) return [];
  const list = typeof value === 'number' ? [value] : value;
  if (!globalThis.Array.isArray(list) || list.some((i) => typeof i !== 'number' || !Number.isInteger(i))) {
    throw new TypeError(`jax.checkpoint: staticArgnums must be an integer or an array of integers, got ${show(value)}`);
  }
  return list as number[];
}

/**
 * jax.checkpoint(fn, { policy, preventCse, staticArgnums }) (also jax.remat):
 * fn, computed the same way, whose intermediates are not kept for the
 * backward pass unless the policy saves them; the rest are recomputed there.
 */
export function checkpoint<F extends (...args: never[]) => unknown>(fn: F, options: CheckpointOptions = {}): F {
  checkOptions('jax.checkpoint', options, ['policy', 'preventCse', 'staticArgnums']);
  if (typeof fn !== 'function') throw new TypeError(`jax.checkpoint: fn must be a function, got ${show(fn)}`);
  const policy = normalizePolicy(options.policy);
  const preventCse = options.preventCse ?? true;
  if (typeof preventCse !== 'boolean') throw new TypeError(`jax.checkpoint: preventCse must be a boolean, got ${show(preventCse)}`);
  const staticArgnums = indexList(options.staticArgnums);

  const wrapped = (...args: unknown[]) => {
    const statics = new Set(
      staticArgnums.map((i) => {
        const k = i < 0 ? i + args.length : i;
        if (k < 0 || k >= args.length) throw new ValueError(`jax.checkpoint: staticArgnums ${i} is out of range for a call with ${args.length} arguments`);
        return k;
      }),
    );
    const dynamic = args.map((a, i) => (statics.has(i) ? null : a));
    const [leaves, inTree] = flatten(dynamic as PyTree);
    const arrays = leaves.map((l, i) => {
      if (!isArrayLike(l)) throw new TypeError(`jax.checkpoint: argument leaf ${i} must be an array or a number, got ${show(l)} (mark it static with staticArgnums)`);
      return toArray('jax.checkpoint', l, `argument leaf ${i}`);
    });
    const call = (...dyn: unknown[]) => (fn as unknown as (...a: unknown[]) => unknown)(...args.map((a, i) => (statics.has(i) ? a : dyn[i])));
    const { flat, outTree } = flatCall('jax.checkpoint', call as never, inTree, false);
    const closed = traceToJaxpr(flat, arrays.map((a) => a.aval));
    const outs = bindCheckpoint(closed, arrays, { preventCse, differentiated: false, policy });
    // arrays this call made from JS numbers are its own to free
    arrays.forEach((a, i) => {
      if (a !== leaves[i] && !a.isTracer && !outs.includes(a)) a.dispose();
    });
    return unflatten(outTree(), outs);
  };
  Object.defineProperty(wrapped, 'name', { value: `checkpoint(${fn.name || 'fn'})` });
  return wrapped as unknown as F;
}

/** jax.remat: another name for jax.checkpoint. */
export const remat = checkpoint;

/**
 * jax.ad_checkpoint.checkpoint_name(x, name): x (each leaf of a pytree)
 * unchanged, named for the remat policies that select values by name.
 */
export function checkpointName<T>(x: T, name: string): T {
  if (typeof name !== 'string') throw new TypeError(`jax.checkpointName: name must be a string, got ${show(name)}`);
  const [leaves, tree] = flatten(x as PyTree);
  const named = leaves.map((l, i) => {
    if (!isArrayLike(l)) throw new TypeError(`jax.checkpointName: leaf ${i} of x must be an array or a number, got ${show(l)}`);
    return bind1('name', [toArray('jax.checkpointName', l, `leaf ${i} of x`)], { name });
  });
  return unflatten(tree, named) as T;
}

/** jax.ad_checkpoint. */
export const adCheckpoint = Object.freeze({ checkpointName, checkpoint, remat, checkpointPolicies });

export type { Array, ShapedArray };
