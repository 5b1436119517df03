// jax.blockUntilReady, jax.deviceGet and jax.makeMesh: small top-level
// helpers over pytrees of Arrays and the device list.
import { Array } from '../core/array.js';
import { ValueError, show } from '../core/errors.js';
import { flatten, type PyTree, unflatten } from '../core/pytree.js';
import { devices } from '../runtime/device.js';
import { copyToDevice } from '../runtime/placement.js';
import { Mesh, type NestedDevices } from '../sharding/index.js';

/** jax.block_until_ready: waits until every Array in the tree is computed; returns the tree. */
export function blockUntilReady<T>(tree: T): T {
  for (const leaf of flatten(tree as PyTree)[0]) if (leaf instanceof Array) leaf.blockUntilReady();
  return tree;
}

/**
 * jax.device_get: the tree with every Array copied to host memory, as Arrays on the CPU device (JAX returns
 * NumPy arrays, which live on the host); other leaves as they are. The copies are uncommitted, like NumPy arrays
 * handed back to JAX.
 */
export function deviceGet<T>(tree: T): T {
  const cpu = devices('cpu')[0]!;
  const [leaves, def] = flatten(tree as PyTree);
  return unflatten(def, leaves.map((l) => (l instanceof Array ? (l.device === cpu ? l : copyToDevice(l, cpu)) : l))) as T;
}

/** jax.make_mesh(axisShapes, axisNames): a Mesh over the default platform's devices, in order. */
export function makeMesh(axisShapes: readonly number[], axisNames: readonly string[], options: { devices?: readonly unknown[] } = {}): Mesh {
  const fn = 'jax.makeMesh';
  if (!globalThis.Array.isArray(axisShapes) || !axisShapes.every((d) => Number.isInteger(d) && d > 0)) {
    throw new TypeError(`${fn}: axisShapes must be an array of positive integers, got ${show(axisShapes)}`);
  }
  if (!globalThis.Array.isArray(axisNames) || axisNames.length !== axisShapes.length) {
    throw new ValueError(`${fn}: axisNames must name each of the ${axisShapes.length} axes of ${show(axisShapes)}, got ${show(axisNames)}`);
  }
  const pool = (options.devices ?? devices()) as NestedDevices[];
  const size = axisShapes.reduce((a, b) => a * b, 1);
  if (pool.length < size) throw new ValueError(`${fn}: a mesh of shape ${show(axisShapes)} needs ${size} devices, but ${pool.length} ${pool.length === 1 ? 'is' : 'are'} available`);
  const nest = (dims: readonly number[], offset: number): NestedDevices[] => {
    if (dims.length === 1) return pool.slice(offset, offset + dims[0]!);
    const inner = dims.slice(1).reduce((a, b) => a * b, 1);
    return globalThis.Array.from({ length: dims[0]! }, (_, i) => nest(dims.slice(1), offset + i * inner)) as unknown as NestedDevices[];
  };
  return new Mesh(nest(axisShapes, 0), axisNames);
}
