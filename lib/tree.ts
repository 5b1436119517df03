// jax.tree: map, leaves, flatten, unflatten, structure over pytrees whose
// leaves are Arrays, numbers and other non-container values.
export { flatten, leaves, map, structure, unflatten, treeDefToString } from './core/pytree.js';
export type { PyTree, TreeDef } from './core/pytree.js';
