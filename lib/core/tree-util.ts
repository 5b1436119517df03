// jax.tree_util, exported as jax.treeUtil: JAX's tree_* functions under camelCased names (treeMap,
// treeFlatten, treeFlattenWithPath, ...), the key types and keystr, and the registration of user classes
// as pytree nodes (registerPytreeNode, registerPytreeWithKeys, registerDataclass, registerStatic and the
// *Class forms; jax.tree exports these too).
import { ValueError } from './errors.js';
import {
  GetAttrKey, type KeyEntry, type PytreeClass, type TreeDef, type TreeOptions, leaves, PyTreeDef,
  registerNodeType, readIsLeaf, flattenTree, checkTreeDef,
} from './pytree.js';

export {
  flatten as treeFlatten, leaves as treeLeaves, map as treeMap, structure as treeStructure, unflatten as treeUnflatten,
  keystr, PyTreeDef, SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey,
} from './pytree.js';
export {
  all as treeAll, flattenWithPath as treeFlattenWithPath, leavesWithPath as treeLeavesWithPath,
  mapWithPath as treeMapWithPath, reduce as treeReduce, transpose as treeTranspose,
} from './pytree-ops.js';
export type { IsLeaf, IsLeafWithPath, KeyEntry, KeyPath, KeystrOptions, PyTree, TreeDef, TreeOptions, TreePathOptions } from './pytree.js';

/**
 * registerPytreeNode(Class, flatten, unflatten): instances of exactly Class (not subclasses, as in JAX) become
 * pytree nodes. flatten(x) returns [children, auxData]; unflatten(auxData, children) rebuilds an instance.
 * auxData is compared by value when it is a primitive, JS array or plain object, with its `equals(other)`
 * method when it has one, else by identity; it keys jit's cache, so keep it small and immutable.
 */
export function registerPytreeNode<T>(
  cls: PytreeClass<T>,
  flatten: (x: T) => [Iterable<unknown>, unknown],
  unflatten: (auxData: any, children: any[]) => T,
): void {
  registerNodeType('treeUtil.registerPytreeNode', cls, flatten, unflatten);
}

/**
 * registerPytreeWithKeys(Class, flattenWithKeys, unflatten, flatten?): as registerPytreeNode, with
 * flattenWithKeys(x) returning [[[key, child], ...], auxData], so paths name the children (GetAttrKey('x')
 * prints as `.x`; any other key prints with String). flatten, if given, must agree with it.
 */
export function registerPytreeWithKeys<T>(
  cls: PytreeClass<T>,
  flattenWithKeys: (x: T) => [Iterable<[KeyEntry, unknown]>, unknown],
  unflatten: (auxData: any, children: any[]) => T,
  flatten?: (x: T) => [Iterable<unknown>, unknown],
): void {
  const fn = 'treeUtil.registerPytreeWithKeys';
  const flattenFromKeys = (x: T): [unknown[], unknown] => {
    const result = flattenWithKeys(x);
    if (!Array.isArray(result) || result.length !== 2 || result[0] === null || typeof result[0] !== 'object') return result as never;
    return [Array.from(result[0], (pair) => (Array.isArray(pair) ? pair[1] : pair)), result[1]];
  };
  registerNodeType(fn, cls, flatten ?? flattenFromKeys, unflatten, flattenWithKeys);
}

type ClassWithTreeMethods<T> = PytreeClass<T> & { treeUnflatten(auxData: any, children: any[]): T };

/** registerPytreeNodeClass(Class): Class has a method treeFlatten() and a static treeUnflatten(auxData, children). */
export function registerPytreeNodeClass<C extends ClassWithTreeMethods<any>>(cls: C): C {
  const fn = 'treeUtil.registerPytreeNodeClass';
  checkClassMethods(fn, cls, ['treeFlatten']);
  registerNodeType(fn, cls, (x: { treeFlatten(): unknown }) => x.treeFlatten(), cls.treeUnflatten?.bind(cls));
  return cls;
}

/** registerPytreeWithKeysClass(Class): Class has treeFlattenWithKeys() (and optionally treeFlatten()) and a static treeUnflatten. */
export function registerPytreeWithKeysClass<C extends ClassWithTreeMethods<any>>(cls: C): C {
  const fn = 'treeUtil.registerPytreeWithKeysClass';
  checkClassMethods(fn, cls, ['treeFlattenWithKeys']);
  const flatten = typeof cls.prototype?.treeFlatten === 'function' ? (x: any) => x.treeFlatten() : undefined;
  registerPytreeWithKeys(cls, (x: any) => x.treeFlattenWithKeys(), cls.treeUnflatten?.bind(cls), flatten);
  return cls;
}

function checkClassMethods(fn: string, cls: unknown, methods: string[]): void {
  if (typeof cls !== 'function') throw new TypeError(`${fn}: cls must be a class, got ${String(cls)}`);
  for (const m of methods) {
    if (typeof cls.prototype?.[m] !== 'function') throw new TypeError(`${fn}: class ${cls.name} has no method ${m}()`);
  }
  if (typeof (cls as { treeUnflatten?: unknown }).treeUnflatten !== 'function') {
    throw new TypeError(`${fn}: class ${cls.name} has no static method treeUnflatten(auxData, children)`);
  }
}

/**
 * registerDataclass(Class, dataFields, metaFields): instances flatten to their dataFields (children, with
 * GetAttrKey paths) and keep their metaFields as aux data. JS has no keyword constructors, so unflatten
 * makes the instance with Object.create(Class.prototype) and assigns the fields; fields not listed are
 * not carried over.
 */
export function registerDataclass<C extends PytreeClass>(cls: C, dataFields: readonly string[], metaFields: readonly string[] = []): C {
  const fn = 'treeUtil.registerDataclass';
  for (const [name, fields] of [['dataFields', dataFields], ['metaFields', metaFields]] as const) {
    if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string')) {
      throw new TypeError(`${fn}: ${name} must be an array of field names, got ${String(fields)}`);
    }
  }
  const both = dataFields.filter((f) => metaFields.includes(f));
  if (both.length) throw new ValueError(`${fn}: fields ${both.map((f) => `'${f}'`).join(', ')} are in both dataFields and metaFields`);
  const data = [...dataFields];
  const meta = [...metaFields];
  const get = (x: unknown, f: string): unknown => (x as Record<string, unknown>)[f];
  registerPytreeWithKeys(
    cls,
    (x) => [data.map((f) => [new GetAttrKey(f), get(x, f)] as [KeyEntry, unknown]), meta.map((f) => get(x, f))],
    (aux: unknown[], children: unknown[]) => {
      const out = Object.create(cls.prototype) as Record<string, unknown>;
      meta.forEach((f, i) => (out[f] = aux[i]));
      data.forEach((f, i) => (out[f] = children[i]));
      return out as InstanceType<C>;
    },
    (x) => [data.map((f) => get(x, f)), meta.map((f) => get(x, f))],
  );
  return cls;
}

/**
 * registerStatic(Class): instances are pytrees with no leaves, kept whole as aux data, so jit treats them as
 * static. Two instances count as the same structure only if `a.equals(b)` (give the class an equals and a
 * toString that tells unequal instances apart) or they are the same object.
 */
export function registerStatic<C extends PytreeClass>(cls: C): C {
  registerPytreeWithKeys(cls, (x) => [[], x], (aux) => aux);
  return cls;
}

/** treeUtil.allLeaves(xs, { isLeaf }): whether every element of xs is a leaf. */
export function allLeaves(xs: Iterable<unknown>, options?: TreeOptions): boolean {
  const fn = 'treeUtil.allLeaves';
  const isLeaf = readIsLeaf(fn, options);
  const list = Array.from(xs);
  if (isLeaf) {
    const ls = leaves(list, isLeaf);
    return ls.length === list.length && ls.every((x, i) => x === list[i]);
  }
  return list.every((x) => flattenTree(fn, x, undefined, false).def.kind === 'leaf');
}

/** treeUtil.treedefChildren(def): the structures of def's immediate children (JAX's treedef.children()). */
export function treedefChildren(def: PyTreeDef): TreeDef[] {
  checkTreeDef('treeUtil.treedefChildren', 'treedef', def);
  return 'children' in def ? [...def.children] : [];
}

/** treeUtil.treedefIsLeaf(def): whether def is a single node (a leaf or None). */
export function treedefIsLeaf(def: PyTreeDef): boolean {
  checkTreeDef('treeUtil.treedefIsLeaf', 'treedef', def);
  return def.numNodes === 1;
}
