// Pytrees as in JAX (jax.tree, jax.tree_util): containers (JS arrays, plain objects, instances of
// classes registered with registerPytreeNode) of leaves, with null/undefined as empty subtrees
// (Python's None). Objects flatten in sorted key order, as JAX sorts dict keys. A structure is a
// PyTreeDef, printed as JAX prints it (`PyTreeDef([*, {'a': *}])`); paths use JAX's key types
// (pytree-keys.ts). Lower layers use flatten/unflatten/map/treeDefToString from here; lib/tree.ts
// (transpose, reduce, all, the *WithPath forms) and lib/tree-util.ts are the user-facing namespaces.
import { checkOptions, show, ValueError } from './errors.js';
import { heldArrays } from './memory.js';
import { DictKey, FlattenedIndexKey, type KeyEntry, type KeyPath, SequenceKey, hasOwnToString, pyRepr, pyStr } from './pytree-keys.js';

export { DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr, pyRepr } from './pytree-keys.js';
export type { KeyEntry, KeyPath, KeystrOptions } from './pytree-keys.js';

export type PyTree<Leaf = unknown> = Leaf | PyTree<Leaf>[] | { [key: string]: PyTree<Leaf> } | null | undefined;

export type IsLeaf = (x: any) => boolean;
export type IsLeafWithPath = (path: KeyPath, x: any) => boolean;

/** Options of tree.leaves / flatten / structure / map / reduce / all (JAX's `is_leaf`). */
export interface TreeOptions {
  /** Called on every subtree, root and None included; true makes that subtree a leaf. */
  isLeaf?: IsLeaf;
}

/** Options of the *WithPath functions; with `isLeafTakesPath`, isLeaf is called as isLeaf(path, x). */
export interface TreePathOptions {
  isLeaf?: IsLeaf | IsLeafWithPath;
  isLeafTakesPath?: boolean;
}

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

// ---- registered classes ----

export type PytreeClass<T = any> = abstract new (...args: any[]) => T;

/** How a registered class flattens (JAX's registry entry). */
export interface PytreeNodeType {
  readonly cls: PytreeClass;
  /** The class's name, as PyTreeDef prints it. */
  readonly name: string;
  /** Unique among registered classes, for structure keys (two classes may share a name). */
  readonly uniqueName: string;
  readonly flatten: (x: any) => unknown;
  readonly flattenWithKeys?: (x: any) => unknown;
  readonly unflatten: (auxData: any, children: unknown[]) => unknown;
}

const registry = new Map<unknown, PytreeNodeType>();
const namesInUse = new Map<string, number>();

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** The registration of x's exact class (subclasses are not included, as in JAX), if any. */
function nodeTypeOf(x: unknown): PytreeNodeType | undefined {
  if (registry.size === 0 || x === null || typeof x !== 'object') return undefined;
  return registry.get(Object.getPrototypeOf(x)?.constructor);
}

export function checkFunction(fn: string, name: string, f: unknown): void {
  if (typeof f !== 'function') throw new TypeError(`${fn}: ${name} must be a function, got ${show(f)}`);
}

/** Adds a class to the registry; shared by the register* functions of tree-util. */
export function registerNodeType(
  fn: string,
  cls: unknown,
  flatten: unknown,
  unflatten: unknown,
  flattenWithKeys?: unknown,
): void {
  if (typeof cls !== 'function' || cls.prototype === undefined || cls.prototype === null) {
    throw new TypeError(`${fn}: nodetype must be a class, got ${show(cls)}`);
  }
  if (cls === Array || cls === Object) {
    throw new ValueError(`${fn}: ${cls.name} is already a pytree node type (JS arrays and plain objects are built in)`);
  }
  if (registry.has(cls)) throw new ValueError(`${fn}: Duplicate custom PyTreeDef type registration for class ${cls.name}`);
  checkFunction(fn, 'flatten', flatten);
  checkFunction(fn, 'unflatten', unflatten);
  if (flattenWithKeys !== undefined) checkFunction(fn, 'flattenWithKeys', flattenWithKeys);
  const name = cls.name || '<anonymous class>';
  const uses = namesInUse.get(name) ?? 0;
  namesInUse.set(name, uses + 1);
  const nodeType: PytreeNodeType = {
    cls: cls as PytreeClass,
    name,
    uniqueName: uses === 0 ? name : `${name}#${uses + 1}`,
    flatten: flatten as PytreeNodeType['flatten'],
    flattenWithKeys: flattenWithKeys as PytreeNodeType['flattenWithKeys'],
    unflatten: unflatten as PytreeNodeType['unflatten'],
  };
  registry.set(cls, nodeType);
  // tidy (and every jnp / grad / jit call) keeps the arrays of a returned pytree; it finds those inside an
  // instance through the heldArrays method, which a registered class gets unless it defines its own
  if (!(heldArrays in cls.prototype)) {
    Object.defineProperty(cls.prototype, heldArrays, {
      value(this: unknown): unknown[] {
        return nodeTypeOf(this) === nodeType ? flattenNode(fn, nodeType, this, false).children : [];
      },
      configurable: true,
      writable: true,
    });
  }
}

interface FlatNode {
  children: unknown[];
  keys: KeyEntry[] | undefined;
  auxData: unknown;
}

/** Calls a registered flatten (with keys when asked and available) and checks its [children, auxData] result. */
function flattenNode(fn: string, type: PytreeNodeType, x: unknown, withKeys: boolean): FlatNode {
  const useKeys = withKeys && type.flattenWithKeys !== undefined;
  const result = useKeys ? type.flattenWithKeys!(x) : type.flatten(x);
  const what = `the ${useKeys ? 'flattenWithKeys' : 'flatten'} function registered for ${type.name}`;
  if (!Array.isArray(result) || result.length !== 2) {
    throw new ValueError(`${fn}: ${what} should return a [children, auxData] pair, got ${pyRepr(result)}`);
  }
  const [raw, auxData] = result as [unknown, unknown];
  if (raw === null || typeof raw !== 'object' || typeof (raw as Iterable<unknown>)[Symbol.iterator] !== 'function') {
    throw new ValueError(`${fn}: ${what} should return a [children, auxData] pair where children is an array, got ${pyRepr(result)}`);
  }
  const items = Array.from(raw as Iterable<unknown>);
  if (!useKeys) return { children: items, keys: withKeys ? items.map((_, i) => new FlattenedIndexKey(i)) : undefined, auxData };
  for (const item of items) {
    if (!Array.isArray(item) || item.length !== 2) {
      throw new ValueError(`${fn}: ${what} should return [[key, child], ...] pairs as children, got ${pyRepr(item)}`);
    }
  }
  return { children: items.map((p) => (p as unknown[])[1]), keys: items.map((p) => (p as KeyEntry[])[0]!), auxData };
}

// ---- aux data: JAX compares it with ==; JS has no __eq__, so value equality for data, identity for objects ----

function auxEqual(a: unknown, b: unknown): boolean {
  if (a === b || (a == null && b == null)) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => auxEqual(v, b[i]));
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && auxEqual(a[k], b[k]));
  }
  if (a !== null && typeof a === 'object' && typeof (a as { equals?: unknown }).equals === 'function') {
    return Boolean((a as { equals(o: unknown): unknown }).equals(b));
  }
  return false;
}

const identities = new WeakMap<object, number>();
let nextIdentity = 1;

/** A string equal for equal aux data (structure keys, such as jit's cache key, must never confuse two). */
function auxKey(a: unknown): string {
  if (a === null || a === undefined) return 'None';
  if (typeof a !== 'object' && typeof a !== 'function') return pyRepr(a);
  if (Array.isArray(a)) return `[${a.map(auxKey).join(', ')}]`;
  if (isPlainObject(a)) return `{${Object.keys(a).sort().map((k) => `${pyRepr(k)}: ${auxKey(a[k])}`).join(', ')}}`;
  const name = (a as object).constructor?.name ?? 'object';
  if (typeof (a as { equals?: unknown }).equals === 'function' && hasOwnToString(a)) return `${name}(${String(a)})`;
  if (!identities.has(a)) identities.set(a, nextIdentity++);
  return `<${name}#${identities.get(a)}>`;
}

// ---- PyTreeDef ----

export type TreeDefNode =
  | { readonly kind: 'leaf' }
  | { readonly kind: 'none'; readonly value: null | undefined }
  | { readonly kind: 'array'; readonly children: readonly TreeDef[] }
  | { readonly kind: 'object'; readonly keys: readonly string[]; readonly children: readonly TreeDef[] }
  | { readonly kind: 'custom'; readonly nodeType: PytreeNodeType; readonly auxData: unknown; readonly children: readonly TreeDef[] };

/** A PyTreeDef narrowed by its kind, as flatten makes them. */
export type TreeDef = PyTreeDef & TreeDefNode;

/**
 * The structure of a pytree (JAX's PyTreeDef), from tree.structure / tree.flatten. Immutable; compare with
 * `equals`; `String(def)` and console.log print it as JAX does: `PyTreeDef([*, {'a': *}])`.
 */
export class PyTreeDef {
  declare readonly kind: TreeDefNode['kind'];
  readonly #numLeaves: number;
  readonly #numNodes: number;

  /** Internal: tree.structure and tree.flatten make PyTreeDefs. */
  constructor(node: TreeDefNode) {
    Object.assign(this, node);
    const children = 'children' in node ? node.children : [];
    this.#numLeaves = node.kind === 'leaf' ? 1 : children.reduce((n, c) => n + c.numLeaves, 0);
    this.#numNodes = 1 + children.reduce((n, c) => n + c.numNodes, 0);
    Object.freeze(this);
  }

  /** How many leaves the structure holds (JAX's num_leaves). */
  get numLeaves(): number {
    return this.#numLeaves;
  }

  /** How many nodes, leaves and None included (JAX's num_nodes). */
  get numNodes(): number {
    return this.#numNodes;
  }

  /** Builds the tree of this structure from its leaves (tree.unflatten(this, leaves)). */
  unflatten<Leaf>(leaves: Iterable<Leaf>): PyTree<Leaf> {
    return unflatten(this as unknown as TreeDef, leaves, 'PyTreeDef.unflatten');
  }

  /** The subtrees of `tree` at this structure's leaves; tree must have this structure as a prefix (JAX's flatten_up_to). */
  flattenUpTo(tree: unknown): unknown[] {
    return flattenUpTo('PyTreeDef.flattenUpTo', this as unknown as TreeDef, tree);
  }

  /** This structure with every leaf replaced by `inner` (JAX's compose). */
  compose(inner: PyTreeDef): TreeDef {
    checkTreeDef('PyTreeDef.compose', 'inner', inner);
    const go = (d: TreeDef): TreeDef => {
      switch (d.kind) {
        case 'leaf': return inner as TreeDef;
        case 'none': return d;
        case 'array': return makeTreeDef({ kind: 'array', children: d.children.map(go) });
        case 'object': return makeTreeDef({ kind: 'object', keys: d.keys, children: d.children.map(go) });
        case 'custom': return makeTreeDef({ kind: 'custom', nodeType: d.nodeType, auxData: d.auxData, children: d.children.map(go) });
      }
    };
    return go(this as unknown as TreeDef);
  }

  /** Same structure (JAX's ==): same containers, keys, registered classes and equal aux data. */
  equals(other: unknown): boolean {
    return other instanceof PyTreeDef && treeDefEqual(this as unknown as TreeDef, other as TreeDef);
  }

  toString(): string {
    return `PyTreeDef(${pyTreeDefBody(this as unknown as TreeDef)})`;
  }

  [inspectCustom](): string {
    return this.toString();
  }
}

export function makeTreeDef(node: TreeDefNode): TreeDef {
  return new PyTreeDef(node) as TreeDef;
}

const LEAF = makeTreeDef({ kind: 'leaf' });
const NONE_NULL = makeTreeDef({ kind: 'none', value: null });
const NONE_UNDEFINED = makeTreeDef({ kind: 'none', value: undefined });

function pyTreeDefBody(d: TreeDef): string {
  switch (d.kind) {
    case 'leaf': return '*';
    case 'none': return 'None';
    case 'array': return `[${d.children.map(pyTreeDefBody).join(', ')}]`;
    case 'object': return `{${d.keys.map((k, i) => `${pyRepr(k)}: ${pyTreeDefBody(d.children[i]!)}`).join(', ')}}`;
    case 'custom': return `CustomNode(${d.nodeType.name}[${pyStr(d.auxData)}], [${d.children.map(pyTreeDefBody).join(', ')}])`;
  }
}

/** The compact form used in jaxon's error messages and jit's cache keys: `{a: [*, None], b: *}`. */
export function treeDefToString(def: TreeDef): string {
  switch (def.kind) {
    case 'leaf': return '*';
    case 'none': return 'None';
    case 'array': return `[${def.children.map(treeDefToString).join(', ')}]`;
    case 'object': return `{${def.keys.map((k, i) => `${k}: ${treeDefToString(def.children[i]!)}`).join(', ')}}`;
    case 'custom':
      return `CustomNode(${def.nodeType.uniqueName}[${auxKey(def.auxData)}], [${def.children.map(treeDefToString).join(', ')}])`;
  }
}

export function treeDefEqual(a: TreeDef, b: TreeDef): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind || a.numLeaves !== b.numLeaves || a.numNodes !== b.numNodes) return false;
  switch (a.kind) {
    case 'leaf':
    case 'none': return true;
    case 'array': return a.children.every((c, i) => treeDefEqual(c, (b as typeof a).children[i]!));
    case 'object': {
      const bo = b as typeof a;
      return a.keys.every((k, i) => k === bo.keys[i]) && a.children.every((c, i) => treeDefEqual(c, bo.children[i]!));
    }
    case 'custom': {
      const bc = b as typeof a;
      return a.nodeType === bc.nodeType && a.children.length === bc.children.length && auxEqual(a.auxData, bc.auxData) &&
        a.children.every((c, i) => treeDefEqual(c, bc.children[i]!));
    }
  }
}

export function numLeaves(def: TreeDef): number {
  return def.numLeaves;
}

export function checkTreeDef(fn: string, name: string, def: unknown): asserts def is TreeDef {
  if (!(def instanceof PyTreeDef)) {
    throw new TypeError(`${fn}: ${name} must be a PyTreeDef (from tree.structure or tree.flatten), got ${show(def)}`);
  }
}

// ---- flatten / unflatten ----

/** Reads `isLeaf` from an options object, or takes a function given in its place (JAX's positional is_leaf). */
export function readIsLeaf(fn: string, options: unknown, allowed: readonly string[] = ['isLeaf']): IsLeaf | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options === 'function') return options as IsLeaf;
  checkOptions(fn, options, allowed);
  const isLeaf = (options as TreeOptions).isLeaf;
  if (isLeaf !== undefined && isLeaf !== null && typeof isLeaf !== 'function') {
    throw new TypeError(`${fn}: options.isLeaf must be a function (x) => boolean, got ${show(isLeaf)}`);
  }
  return isLeaf ?? undefined;
}

interface Flat<Leaf> {
  leaves: Leaf[];
  paths: KeyPath[];
  def: TreeDef;
}

/** The one traversal behind flatten and flattenWithPath (paths are only built when asked for). */
export function flattenTree<Leaf>(
  fn: string,
  tree: unknown,
  isLeaf: IsLeaf | IsLeafWithPath | undefined,
  withPaths: boolean,
  isLeafTakesPath = false,
): Flat<Leaf> {
  const leaves: Leaf[] = [];
  const paths: KeyPath[] = [];
  const path: KeyEntry[] = [];
  const leaf = (x: unknown): TreeDef => {
    leaves.push(x as Leaf);
    if (withPaths) paths.push([...path]);
    return LEAF;
  };
  const child = (key: KeyEntry, x: unknown): TreeDef => {
    if (!withPaths) return walk(x);
    path.push(key);
    const def = walk(x);
    path.pop();
    return def;
  };
  const walk = (x: unknown): TreeDef => {
    if (isLeaf && (isLeafTakesPath ? (isLeaf as IsLeafWithPath)([...path], x) : (isLeaf as IsLeaf)(x))) return leaf(x);
    if (x === null) return NONE_NULL;
    if (x === undefined) return NONE_UNDEFINED;
    if (Array.isArray(x)) {
      const children: TreeDef[] = [];
      for (let i = 0; i < x.length; i++) children.push(child(new SequenceKey(i), x[i]));
      return makeTreeDef({ kind: 'array', children });
    }
    if (isPlainObject(x)) {
      const keys = Object.keys(x).sort();
      return makeTreeDef({ kind: 'object', keys, children: keys.map((k) => child(new DictKey(k), x[k])) });
    }
    const nodeType = nodeTypeOf(x);
    if (nodeType) {
      const node = flattenNode(fn, nodeType, x, withPaths);
      const children = node.children.map((c, i) => child(node.keys?.[i] as KeyEntry, c));
      return makeTreeDef({ kind: 'custom', nodeType, auxData: node.auxData, children });
    }
    return leaf(x);
  };
  const def = walk(tree);
  return { leaves, paths, def };
}

/** tree.flatten(tree, { isLeaf }): the leaves in order and the structure. `isLeaf` may also be given bare. */
export function flatten<Leaf = unknown>(tree: PyTree<Leaf>, options?: TreeOptions | IsLeaf): [Leaf[], TreeDef] {
  const { leaves, def } = flattenTree<Leaf>('tree.flatten', tree, readIsLeaf('tree.flatten', options), false);
  return [leaves, def];
}

/** tree.leaves(tree, { isLeaf }) */
export function leaves<Leaf = unknown>(tree: PyTree<Leaf>, options?: TreeOptions | IsLeaf): Leaf[] {
  return flattenTree<Leaf>('tree.leaves', tree, readIsLeaf('tree.leaves', options), false).leaves;
}

/** tree.structure(tree, { isLeaf }) */
export function structure(tree: unknown, options?: TreeOptions | IsLeaf): TreeDef {
  return flattenTree('tree.structure', tree, readIsLeaf('tree.structure', options), false).def;
}

/** tree.unflatten(treedef, leaves): the tree of that structure holding those leaves (an array or any iterable). */
export function unflatten<Leaf>(def: TreeDef, leaves: Iterable<Leaf>, fn = 'tree.unflatten'): PyTree<Leaf> {
  checkTreeDef(fn, 'treedef', def);
  if (leaves === null || typeof leaves !== 'object' || typeof (leaves as Iterable<Leaf>)[Symbol.iterator] !== 'function') {
    throw new TypeError(`${fn}: leaves must be an array (or iterable) of leaves, got ${show(leaves)}`);
  }
  const values = Array.isArray(leaves) ? (leaves as Leaf[]) : Array.from(leaves);
  if (values.length !== def.numLeaves) {
    throw new ValueError(
      `${fn}: Too ${values.length < def.numLeaves ? 'few' : 'many'} leaves for ${String(def)}: the structure has ` +
        `${def.numLeaves} leaves, got ${values.length}`,
    );
  }
  let i = 0;
  const build = (d: TreeDef): PyTree<Leaf> => {
    switch (d.kind) {
      case 'leaf': return values[i++] as Leaf;
      case 'none': return d.value;
      case 'array': return d.children.map(build);
      case 'object': {
        const out: Record<string, PyTree<Leaf>> = {};
        d.keys.forEach((k, j) => (out[k] = build(d.children[j]!)));
        return out;
      }
      case 'custom': return d.nodeType.unflatten(d.auxData, d.children.map(build)) as PyTree<Leaf>;
    }
  };
  return build(def);
}

/** The subtrees of `tree` at def's leaves (JAX's flatten_up_to); errors read `${fn}: ${prefix}${JAX's message}`. */
export function flattenUpTo(fn: string, def: TreeDef, tree: unknown, prefix = ''): unknown[] {
  const out: unknown[] = [];
  const fail = (message: string): never => {
    throw new ValueError(`${fn}: ${prefix}${message}`);
  };
  const go = (d: TreeDef, x: unknown): void => {
    switch (d.kind) {
      case 'leaf':
        out.push(x);
        return;
      case 'none':
        if (x !== null && x !== undefined) fail(`Expected None, got ${pyRepr(x)}.`);
        return;
      case 'array':
        if (!Array.isArray(x)) return fail(`Expected list, got ${pyRepr(x)}.`);
        if (x.length !== d.children.length) fail(`List arity mismatch: ${x.length} != ${d.children.length}; list: ${pyRepr(x)}.`);
        d.children.forEach((c, i) => go(c, x[i]));
        return;
      case 'object': {
        if (!isPlainObject(x)) return fail(`Expected dict, got ${pyRepr(x)}.`);
        const keys = Object.keys(x).sort();
        if (keys.length !== d.keys.length || keys.some((k, i) => k !== d.keys[i])) {
          fail(`Dict key mismatch; expected keys: ${pyRepr(d.keys)}; dict: ${pyRepr(x)}.`);
        }
        d.children.forEach((c, i) => go(c, x[d.keys[i]!]));
        return;
      }
      case 'custom': {
        if (nodeTypeOf(x) !== d.nodeType) return fail(`Custom node type mismatch; expected type: ${d.nodeType.name}; value: ${pyRepr(x)}.`);
        const node = flattenNode(fn, d.nodeType, x, false);
        if (!auxEqual(d.auxData, node.auxData)) {
          fail(`Mismatch custom node data: ${pyStr(d.auxData)} != ${pyStr(node.auxData)}; value: ${pyRepr(x)}.`);
        }
        if (node.children.length !== d.children.length) {
          fail(`Custom type arity mismatch: ${node.children.length} != ${d.children.length}; value: ${pyRepr(x)}.`);
        }
        d.children.forEach((c, i) => go(c, node.children[i]));
        return;
      }
    }
  };
  go(def, tree);
  return out;
}

// ---- map ----

/**
 * A trailing argument of tree.map / mapWithPath / reduce is read as options, not as one more tree, when it is
 * a plain object whose keys are all option names (at least one) and whose isLeaf, if present, is a function
 * or undefined: `{ isLeaf: fn }`. To pass a tree that looks like that, follow it with `{ isLeaf: undefined }`.
 */
export function isOptionsArgument(x: unknown, allowed: readonly string[]): boolean {
  if (!isPlainObject(x)) return false;
  const keys = Object.keys(x);
  return keys.length > 0 && keys.every((k) => allowed.includes(k)) && (x.isLeaf === undefined || typeof x.isLeaf === 'function');
}

export function mapLeaves(fn: string, def: TreeDef, rest: unknown[]): unknown[][] {
  return rest.map((r, k) => flattenUpTo(fn, def, r, `rest[${k}] must have the first tree's structure ${String(def)} as a prefix: `));
}

/**
 * tree.map(f, tree, ...rest, { isLeaf }): f applied to each leaf of `tree` and the matching subtrees of
 * `rest` (each must have tree's structure as a prefix, as in JAX). A last argument that is a plain object
 * with only the key `isLeaf` (a function, or undefined) is the options, not a tree (see isOptionsArgument).
 */
export function map<A = any, B = unknown>(f: (x: A, ...rest: any[]) => B, tree: PyTree<A> | object, ...rest: unknown[]): PyTree<B> {
  const fn = 'tree.map';
  checkFunction(fn, 'f', f);
  const options = rest.length > 0 && isOptionsArgument(rest[rest.length - 1], ['isLeaf']) ? rest.pop() : undefined;
  const { leaves: ls, def } = flattenTree<A>(fn, tree, readIsLeaf(fn, options), false);
  const others = mapLeaves(fn, def, rest);
  return unflatten(def, ls.map((x, i) => f(x, ...others.map((o) => o[i]))));
}

export function checkTree(fn: string, tree: unknown): void {
  if (typeof tree === 'function') throw new TypeError(`${fn}: a function is not a pytree, got ${show(tree)}`);
}
