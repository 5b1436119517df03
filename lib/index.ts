// jaxon: JAX for Node.js. `import * as jax from 'jaxon'` gives the top level
// (jit, grad, devices, tree, ...); `numpy`, `lax`, `nn`, `random` are
// namespaces, as in JAX.
export * as numpy from './numpy/index.js';
export * as lax from './lax/index.js';
export * as tree from './tree.js';
export { Array } from './core/array.js';
export type { ArrayLike } from './core/array.js';
export type { DType } from './core/dtype.js';
export { promoteTypes, resultType } from './core/dtype.js';
export { ValueError, ResourceExhaustedError } from './core/errors.js';
export { tidy, keep, liveArrayCount } from './core/memory.js';
export { Device, devices, defaultBackend, environmentInfo } from './runtime/device.js';
