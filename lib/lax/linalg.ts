// The lax.linalg namespace (jax.lax.linalg).
export { eigh, qr, svd } from './linalg-eig.js';
