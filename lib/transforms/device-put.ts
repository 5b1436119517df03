// jax.device_put: place values on a device and in a memory kind, after
// jax/_src/api.py device_put and dispatch.py's device_put primitive.
// Outside any transformation it runs now: a value already in the
// destination memory kind keeps its buffer (JAX's REUSE_INPUT; mayAlias:
// false forces a copy), anything else is copied by the device_put primitive
// (on the CPU both kinds are host memory, so the copy is a kernel; on a GPU
// it is a transfer), and JS numbers and TypedArrays become new arrays in
// the destination kind. Inside jit, grad, vmap, ... it binds device_put
// (srcKind: the operand's memory space), so the transfer is part of the
// traced program and its transpose sends cotangents back to the source kind.
import { Array } from '../core/array.js';
import { bind1 } from '../core/bind.js';
import { isArrayLike, toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, type PyTree, unflatten } from '../core/pytree.js';
import type { MemoryKind } from '../core/primitives.js';
import { Device, defaultDevice } from '../runtime/device.js';
import { Sharding } from '../sharding/index.js';
import { broadcastPrefix } from '../sharding/tree-prefix.js';
import { findTopMain } from '../trace/core.js';
import { copyToDevice } from '../runtime/placement.js';

/** jax.memory.Space: the memory kinds by JAX's names (Space.Host is 'pinned_host'). */
export const memory = Object.freeze({ Space: Object.freeze({ Device: 'device', Host: 'pinned_host' } as const) });

/** Where devicePut sends a value: a device (its default memory), a sharding, a memory kind, or null (where it is). */
export type Placement = Device | Sharding | MemoryKind | null | undefined;

export interface DevicePutOptions {
  /** The inputs' buffers are given up (the inputs cannot be used afterwards). */
  donate?: boolean;
  /** true or unset: a value already in place keeps its buffer; false: always copy. */
  mayAlias?: boolean | null;
}

/** What devicePut returns for x: every leaf an Array. */
export type Placed<T> = T extends Array | number | boolean | ArrayBufferView
  ? Array
  : T extends null | undefined
    ? T
    : T extends readonly unknown[]
      ? { -readonly [K in keyof T]: Placed<T[K]> }
      : T extends object
        ? { [K in keyof T]: Placed<T[K]> }
        : never;

const FN = 'jax.devicePut';

const isPlacement = (x: unknown): x is Placement =>
  x === null || x === undefined || x instanceof Device || x instanceof Sharding || typeof x === 'string';

interface Target {
  /** the device asked for (the value commits to it), or null: the value's own */
  device: Device | null;
  /** the memory kind asked for, or null: the value's own */
  kind: MemoryKind | null;
}

/** Where a placement sends a value of `shape`, after checking it fits. */
export function placementTarget(fn: string, placement: Placement, shape: readonly number[]): Target {
  if (placement === null || placement === undefined) return { device: null, kind: null };
  if (placement instanceof Device) return { device: placement, kind: placement.defaultMemory().kind };
  if (placement instanceof Sharding) {
    const [device, ...others] = placement.devices;
    if (!device || others.some((d) => d !== device)) {
      throw new ValueError(`${fn}: the sharding ${placement} spans ${placement.devices.length} devices; jaxon places an array on one device`);
    }
    placement.checkShape(fn, shape);
    return { device, kind: placement.memoryKind };
  }
  try {
    return { device: null, kind: defaultDevice().memory(placement).kind };
  } catch (error) {
    if (error instanceof ValueError) throw new ValueError(`${fn}: ${error.message}`);
    throw error;
  }
}

/** The memory kind a placement asks for (null: keep the value's), after checking it fits a value of `shape`. */
export function placementKind(fn: string, placement: Placement, shape: readonly number[]): MemoryKind | null {
  return placementTarget(fn, placement, shape).kind;
}

/** A copy of `x`'s buffer reference in another memory space (on the CPU every kind is host memory). */
function sameBuffer(x: Array, space: MemoryKind): Array {
  return new Array(x.storage(FN).retain(), x.shape, x.dtype, x.weakType, space);
}

function putLeaf(leaf: unknown, placement: Placement, index: number, donate: boolean, mayAlias: boolean | null): Array {
  if (!(leaf instanceof Array)) {
    if (!isArrayLike(leaf)) throw new TypeError(`${FN}: leaf ${index} of x must be an Array, a number, a boolean or a TypedArray, got ${show(leaf)}`);
    const fresh = toArray(FN, leaf, `leaf ${index} of x`);
    const out = putLeaf(fresh, placement, index, false, true);
    if (out !== fresh) fresh.dispose();
    return out;
  }
  const target = placementTarget(FN, placement, leaf.shape);
  const src = leaf.memorySpace;
  const dst = target.kind ?? src;
  if (findTopMain([leaf]) !== null) return bind1('device_put', [leaf], { srcKind: src, dstKind: dst });
  leaf.storage(FN);
  // another device: the bytes move there (the copy is committed to it), then change memory kind there if asked
  if (target.device && target.device !== leaf.device) {
    const moved = copyToDevice(leaf, target.device, true);
    if (donate) leaf.markDonated();
    if (moved.memorySpace === dst) return moved;
    const out = commit(bind1('device_put', [moved], { srcKind: moved.memorySpace, dstKind: dst }));
    moved.dispose();
    return out;
  }
  const committed = target.device !== null;
  if (src === dst && mayAlias !== false) {
    const out = committed ? commit(sameBuffer(leaf, dst)) : sameBuffer(leaf, dst);
    if (donate) leaf.markDonated();
    return out;
  }
  const copied = bind1('device_put', [leaf], { srcKind: src, dstKind: dst });
  if (donate) leaf.markDonated();
  return committed ? commit(copied) : copied;
}

/** The same buffer, committed to its device (devicePut to a device or sharding commits, as in JAX). */
function commit(x: Array): Array {
  if (x.committed) return x;
  const out = new Array(x.storage(FN).retain(), x.shape, x.dtype, x.weakType, x.memorySpace, true);
  x.dispose();
  return out;
}

/**
 * jax.device_put(x, device_or_sharding, donate=, may_alias=): x is a pytree of
 * Arrays, numbers, booleans and TypedArrays; `to` is a Device, a Sharding, a
 * memory kind ('device', 'pinned_host', or jax.memory.Space.*), null, or a
 * pytree prefix of x of these. Returns x with every leaf an Array placed there.
 */
export function devicePut<T>(x: T, to?: PyTree<Placement>, options: DevicePutOptions = {}): Placed<T> {
  checkOptions(FN, options, ['donate', 'mayAlias']);
  const donate = options.donate ?? false;
  const mayAlias = options.mayAlias ?? null;
  if (typeof donate !== 'boolean') throw new TypeError(`${FN}: donate must be a boolean, got ${show(donate)}`);
  if (mayAlias !== null && typeof mayAlias !== 'boolean') throw new TypeError(`${FN}: mayAlias must be a boolean or null, got ${show(mayAlias)}`);
  if (donate && mayAlias === true) throw new ValueError(`${FN}: mayAlias and donate cannot be true at the same time`);
  const [leaves, tree] = flatten(x as PyTree);
  let placements: Placement[];
  try {
    placements = broadcastPrefix(FN, to, x, isPlacement, 'the destination', 'x');
  } catch (error) {
    if (error instanceof TypeError) {
      throw new TypeError(
        `${FN}: the destination must be null, a Device, a Sharding, a memory kind ('device', 'pinned_host') or a pytree prefix of x of these; ${error.message.slice(FN.length + 2)}`,
      );
    }
    throw error;
  }
  const out = leaves.map((leaf, i) => putLeaf(leaf, placements[i], i, donate, mayAlias));
  return unflatten(tree, out) as Placed<T>;
}
