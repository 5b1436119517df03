// The jnp.linalg namespace (jax.numpy.linalg).
export { eigh, eigvalsh, lstsq, matrixPower, norm, pinv, qr, svd } from './linalg-eig.js';
