// The `lax.linalg` namespace (jax.lax.linalg): each family in its own file.
export { cholesky, lu, triangularSolve } from './linalg-lu.js';
export { eigh, qr, svd } from './linalg-eig.js';
