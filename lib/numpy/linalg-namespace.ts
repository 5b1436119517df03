// The `jnp.linalg` namespace: each family in its own file.
export { cholesky, det, inv, slogdet, solve } from './linalg-lu.js';
