// The jax.tree operations beyond flatten/unflatten/map (core/pytree.ts): the *WithPath forms (JAX's
// tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path), transpose, reduce and all, with JAX's
// semantics and error messages.
import { show, ValueError } from './errors.js';
import {
  checkFunction, checkTreeDef, flatten, flattenTree, flattenUpTo, isOptionsArgument, mapLeaves, readIsLeaf, structure,
  treeDefEqual, unflatten,
  type IsLeaf, type IsLeafWithPath, type KeyPath, type PyTree, type PyTreeDef, type TreeDef, type TreeOptions,
  type TreePathOptions,
} from './pytree.js';

// ---- with paths ----

function readPathOptions(fn: string, options: unknown): [IsLeaf | IsLeafWithPath | undefined, boolean] {
  const isLeaf = readIsLeaf(fn, options, ['isLeaf', 'isLeafTakesPath']);
  const takesPath = (options as TreePathOptions | undefined)?.isLeafTakesPath ?? false;
  if (typeof takesPath !== 'boolean') throw new TypeError(`${fn}: options.isLeafTakesPath must be a boolean, got ${show(takesPath)}`);
  return [isLeaf, takesPath && typeof options !== 'function'];
}

/** tree.flattenWithPath(tree, { isLeaf, isLeafTakesPath }): [[path, leaf], ...] and the structure. */
export function flattenWithPath<Leaf = unknown>(tree: PyTree<Leaf>, options?: TreePathOptions | IsLeaf): [[KeyPath, Leaf][], TreeDef] {
  const fn = 'tree.flattenWithPath';
  const [isLeaf, takesPath] = readPathOptions(fn, options);
  const { leaves: ls, paths, def } = flattenTree<Leaf>(fn, tree, isLeaf, true, takesPath);
  return [ls.map((x, i) => [paths[i]!, x]), def];
}

/** tree.leavesWithPath(tree, { isLeaf, isLeafTakesPath }): [[path, leaf], ...]. */
export function leavesWithPath<Leaf = unknown>(tree: PyTree<Leaf>, options?: TreePathOptions | IsLeaf): [KeyPath, Leaf][] {
  const fn = 'tree.leavesWithPath';
  const [isLeaf, takesPath] = readPathOptions(fn, options);
  const { leaves: ls, paths } = flattenTree<Leaf>(fn, tree, isLeaf, true, takesPath);
  return ls.map((x, i) => [paths[i]!, x]);
}

/** tree.mapWithPath(f, tree, ...rest, { isLeaf, isLeafTakesPath }): f(path, leaf, ...restSubtrees); options as tree.map. */
export function mapWithPath<A = any, B = unknown>(
  f: (path: KeyPath, x: A, ...rest: any[]) => B,
  tree: PyTree<A> | object,
  ...rest: unknown[]
): PyTree<B> {
  const fn = 'tree.mapWithPath';
  checkFunction(fn, 'f', f);
  const options = rest.length > 0 && isOptionsArgument(rest[rest.length - 1], ['isLeaf', 'isLeafTakesPath']) ? rest.pop() : undefined;
  const [isLeaf, takesPath] = readPathOptions(fn, options);
  const { leaves: ls, paths, def } = flattenTree<A>(fn, tree, isLeaf, true, takesPath);
  const others = mapLeaves(fn, def, rest);
  return unflatten(def, ls.map((x, i) => f(paths[i]!, x, ...others.map((o) => o[i]))));
}

// ---- transpose, reduce, all ----

/**
 * tree.transpose(outerTreedef, innerTreedef, tree): turns a tree of structure outer∘inner into one of
 * inner∘outer. innerTreedef null/undefined is inferred from the first outer subtree, as in JAX.
 */
export function transpose(outer: PyTreeDef, inner: PyTreeDef | null | undefined, tree: unknown): PyTree {
  const fn = 'tree.transpose';
  checkTreeDef(fn, 'outerTreedef', outer);
  if (inner === null || inner === undefined) {
    if (outer.numLeaves === 0) throw new ValueError(`${fn}: cannot infer innerTreedef: outerTreedef ${String(outer)} has no leaves`);
    inner = structure(flattenUpTo(fn, outer, tree)[0]);
  }
  checkTreeDef(fn, 'innerTreedef', inner);
  const [flat, def] = flatten(tree as PyTree);
  const expected = outer.compose(inner);
  if (!treeDefEqual(def, expected)) throw new TypeError(`${fn}: Mismatch\n${String(def)}\n != \n${String(expected)}`);
  const innerSize = inner.numLeaves;
  const columns = Array.from({ length: innerSize }, (_, j) =>
    unflatten(outer, Array.from({ length: outer.numLeaves }, (_, i) => flat[i * innerSize + j])),
  );
  return unflatten(inner, columns);
}

/**
 * tree.reduce(f, tree, initializer?, { isLeaf }): f(accumulator, leaf) over the leaves, as functools.reduce.
 * With three arguments the third is the options when it looks like them (see isOptionsArgument), else the
 * initializer; an undefined initializer counts as none given.
 */
export function reduce<T>(f: (accumulator: T, leaf: any) => T, tree: PyTree, options?: TreeOptions): T;
export function reduce<T>(f: (accumulator: T, leaf: any) => T, tree: PyTree, initializer: T, options?: TreeOptions): T;
export function reduce<T>(f: (accumulator: T, leaf: any) => T, tree: PyTree, ...args: unknown[]): T {
  const fn = 'tree.reduce';
  checkFunction(fn, 'f', f);
  if (args.length > 2) throw new TypeError(`${fn}: expected (f, tree, initializer?, options?), got ${args.length + 2} arguments`);
  const options = args.length === 2 || (args.length === 1 && isOptionsArgument(args[0], ['isLeaf'])) ? args.pop() : undefined;
  const hasInitializer = args.length === 1 && args[0] !== undefined;
  const ls = flattenTree(fn, tree, readIsLeaf(fn, options), false).leaves;
  if (!hasInitializer && ls.length === 0) {
    throw new TypeError(`${fn}: the tree ${String(structure(tree))} has no leaves and no initializer was given`);
  }
  let acc = (hasInitializer ? args[0] : ls[0]) as T;
  for (let i = hasInitializer ? 0 : 1; i < ls.length; i++) acc = f(acc, ls[i]);
  return acc;
}

/** Python's truthiness of a leaf: 0, '' and false are false, NaN is true, a 1-element Array is its value's. */
function truthy(fn: string, x: unknown, index: number): boolean {
  if (typeof x === 'number') return x !== 0;
  if (typeof x === 'bigint') return x !== 0n;
  if (typeof x === 'string') return x.length > 0;
  if (typeof x === 'boolean') return x;
  if (x === null || x === undefined) return false;
  const array = x as { shape?: unknown; size?: number; isTracer?: boolean; item?: () => unknown };
  if (Array.isArray(array.shape) && typeof array.item === 'function') {
    if (array.isTracer) return Number(x) !== 0; // throws JAX's TracerBoolConversionError
    if (array.size !== 1) {
      throw new ValueError(
        `${fn}: leaf ${index} is an Array of shape [${array.shape.join(',')}]: the truth value of an array with more than ` +
          `one element is ambiguous; reduce it with jnp.all or jnp.any first`,
      );
    }
    return truthy(fn, array.item(), index);
  }
  return true;
}

/** tree.all(tree, { isLeaf }): whether every leaf is truthy, in Python's sense (as JAX's all(leaves)). */
export function all(tree: PyTree, options?: TreeOptions | IsLeaf): boolean {
  const fn = 'tree.all';
  return flattenTree(fn, tree, readIsLeaf(fn, options), false).leaves.every((x, i) => truthy(fn, x, i));
}
