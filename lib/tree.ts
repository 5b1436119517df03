// jax.tree: map, leaves, flatten, unflatten, structure, transpose, reduce, all and the *WithPath forms over
// pytrees (JS arrays, plain objects, null/undefined as None, registered classes; anything else is a leaf),
// with JAX's `is_leaf` as the option `{ isLeaf }`. Registration and keystr are here too (API.md), and in
// jax.treeUtil (core/tree-util.ts) under JAX's tree_util names. The machinery is core/pytree*.ts.
export {
  flatten, leaves, map, structure, unflatten, treeDefToString, keystr, PyTreeDef, SequenceKey, DictKey, GetAttrKey,
  FlattenedIndexKey,
} from './core/pytree.js';
export { all, flattenWithPath, leavesWithPath, mapWithPath, reduce, transpose } from './core/pytree-ops.js';
export {
  registerDataclass, registerPytreeNode, registerPytreeNodeClass, registerPytreeWithKeys, registerPytreeWithKeysClass,
  registerStatic,
} from './core/tree-util.js';
export type {
  IsLeaf, IsLeafWithPath, KeyEntry, KeyPath, KeystrOptions, PyTree, TreeDef, TreeOptions, TreePathOptions,
} from './core/pytree.js';
