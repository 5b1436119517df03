// The `jnp.linalg` namespace (jax.numpy.linalg): each family in its own file.
export { cholesky, det, inv, slogdet, solve } from './linalg-lu.js';
export { eigh, eigvalsh, lstsq, matrixPower, norm, pinv, qr, svd } from './linalg-eig.js';
