// jit's inShardings and outShardings, after jax/_src/pjit.py: shardings (or
// null: unconstrained) given as pytree prefixes of the non-static positional
// arguments and of the outputs. They act inside the traced program: an
// argument whose memory kind differs from its inSharding is an error when it
// is a jaxon Array (JAX's "Memory kinds passed to jax.jit does not match"),
// while JS numbers and TypedArrays, which have no placement yet, are moved
// there by a device_put at the program's start; an output whose memory kind
// differs from its outSharding is moved by a device_put at the program's end
// (so `outShardings: host` offloads results, per output).
import { Array } from '../core/array.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { ValueError, show } from '../core/errors.js';
import { typeWithSpace } from '../core/memory-space.js';
import { flatten, unflatten } from '../core/pytree.js';
import type { ShapedArray } from '../core/primitives.js';
import { Sharding } from '../sharding/index.js';
import { broadcastPrefix } from '../sharding/tree-prefix.js';
import { devicePut } from './device-put.js';

type Constraint = Sharding | null | undefined;

const isConstraint = (x: unknown): x is Constraint => x === null || x === undefined || x instanceof Sharding;

function checkLeaves(fn: string, name: string, tree: unknown, path = ''): void {
  if (isConstraint(tree)) return;
  if (globalThis.Array.isArray(tree)) {
    tree.forEach((t, i) => checkLeaves(fn, name, t, `${path}[${i}]`));
    return;
  }
  if (typeof tree === 'object' && Object.getPrototypeOf(tree) === Object.prototype) {
    for (const [k, v] of Object.entries(tree as object)) checkLeaves(fn, name, v, `${path}.${k}`);
    return;
  }
  throw new TypeError(
    `${fn}: ${name} must be a Sharding (SingleDeviceSharding, NamedSharding), null, or a pytree of these, got ${show(tree)}${path ? ` at ${path}` : ''}`,
  );
}

export interface JitShardings {
  /**
   * Rejects arguments placed in another memory kind than inShardings gives
   * them (also on a cache hit: call it before looking the signature up).
   */
  checkArguments(args: readonly unknown[], statics: ReadonlySet<number>): void;
  /** The traced function's arguments (`dynamic[i]` traces `args[i]`; statics untouched), placed per inShardings. */
  placeArguments(dynamic: unknown[], args: readonly unknown[], statics: ReadonlySet<number>): unknown[];
  /** The traced function's result, placed per outShardings. */
  placeOutputs(result: unknown): unknown;
}

function mismatch(fn: string, s: Sharding, aval: ShapedArray): ValueError {
  return new ValueError(
    `${fn}: Memory kinds passed to jax.jit does not match memory kind on the respective arg. ` +
      `Got jit memory kind: ${s.memoryKind}, arg memory kind: ${aval.memorySpace ?? 'device'} for arg type: ${typeWithSpace(aval)}`,
  );
}

/** Validates jit's inShardings / outShardings (at jit time) and returns what applies them while tracing. */
export function jitShardings(fn: string, inShardings: unknown, outShardings: unknown): JitShardings {
  checkLeaves(fn, 'inShardings', inShardings);
  checkLeaves(fn, 'outShardings', outShardings);

  /** For each non-static position: the constraint of each of its leaves (null when inShardings is unset). */
  const argumentConstraints = (args: readonly unknown[], statics: ReadonlySet<number>): Map<number, Constraint[]> | null => {
    if (inShardings === undefined || inShardings === null) return null;
    const positions = args.map((_, i) => i).filter((i) => !statics.has(i));
    let perArgument: unknown[];
    if (globalThis.Array.isArray(inShardings)) {
      if (inShardings.length !== positions.length) {
        throw new ValueError(
          `${fn}: inShardings must be a pytree prefix of the positional arguments: a Sharding, or an array with one entry per ` +
            `non-static positional argument, but it has length ${inShardings.length} for ${positions.length} such arguments`,
        );
      }
      perArgument = inShardings;
    } else if (inShardings instanceof Sharding) {
      perArgument = positions.map(() => inShardings);
    } else {
      throw new ValueError(`${fn}: inShardings must be a Sharding or an array with one entry per non-static positional argument, got ${show(inShardings)}`);
    }
    return new Map(positions.map((position, k) => [
      position,
      broadcastPrefix(fn, perArgument[k], args[position], isConstraint, `inShardings[${k}]`, `argument ${position}`),
    ]));
  };

  return {
    checkArguments(args, statics) {
      const constraints = argumentConstraints(args, statics);
      if (!constraints) return;
      for (const [position, perLeaf] of constraints) {
        flatten<unknown>(args[position] as never)[0].forEach((leaf, j) => {
          const s = perLeaf[j];
          if (s && leaf instanceof Array && leaf.memorySpace !== s.memoryKind) throw mismatch(fn, s, leaf.aval);
        });
      }
    },
    placeArguments(dynamic, args, statics) {
      const constraints = argumentConstraints(args, statics);
      if (!constraints) return dynamic;
      const out = [...dynamic];
      for (const [position, perLeaf] of constraints) {
        const [traced, tree] = flatten<unknown>(dynamic[position] as never);
        const [given] = flatten<unknown>(args[position] as never);
        const placed = traced.map((t, j) => {
          const s = perLeaf[j];
          if (!s) return t;
          const x = t as Array;
          s.checkShape(fn, x.shape);
          if (x.memorySpace === s.memoryKind) return x;
          // an Array (or a ShapeDtypeStruct given to lower()) has a placement of its own; JS data does not
          if (given[j] instanceof Array || !isArrayLike(given[j])) throw mismatch(fn, s, x.aval);
          return devicePut(x, s);
        });
        out[position] = unflatten(tree, placed);
      }
      return out;
    },
    placeOutputs(result) {
      if (outShardings === undefined || outShardings === null) return result;
      const [outs, tree] = flatten(result as never);
      const constraints = broadcastPrefix(fn, outShardings, result, isConstraint, 'outShardings', 'the outputs');
      const placed = outs.map((o, i) => {
        const s = constraints[i];
        if (!s) return o;
        const x = toArray(fn, o, `output ${i}`);
        s.checkShape(fn, x.shape);
        return x.memorySpace === s.memoryKind ? x : devicePut(x, s);
      });
      return unflatten(tree, placed);
    },
  };
}
