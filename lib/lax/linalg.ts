// The `lax.linalg` namespace: each family in its own file.
export { cholesky, lu, triangularSolve } from './linalg-lu.js';
