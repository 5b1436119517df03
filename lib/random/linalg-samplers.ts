// jax.random.multivariate_normal and jax.random.orthogonal (jax/_src/random/core.py, JAX 0.10.2): a factor of the
// covariance (cholesky, eigh or svd) times standard normals, and the Q of a QR of a normal matrix with its columns'
// signs fixed by R's diagonal (Mezzadri's method). The normals are random.normal's, bit for bit; the factorizations are
// jaxon's (jnp.linalg), so samples agree with JAX's to the factorizations' rounding, and eigh/svd factors agree up to
// the sign of each eigenvector (LAPACK's choice), which changes the sample but not its distribution.
import type { Array, ArrayLike } from '../core/array.js';
import { type DType, isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { broadcastShapes, checkShape } from '../core/shape.js';
import * as jnp from '../numpy/index.js';
import { promoteInexact } from '../numpy/util.js';
import { jit } from '../transforms/jit.js';
import { checkParamShapes, normal } from './distributions.js';
import { type Key, checkKey } from './keys.js';

export interface MultivariateNormalOptions {
  /** The batch shape of the result (its shape without the last axis); default: mean's and cov's batch shapes broadcast. */
  shape?: number[] | null;
  /** A float dtype (default: the promoted dtype of mean and cov). */
  dtype?: DType;
  /** How cov is factored: 'cholesky' (default), or 'eigh' / 'svd' for a singular cov. */
  method?: 'cholesky' | 'eigh' | 'svd';
}

const multivariateNormalJit = jit((key: Key, mean: Array, cov: Array, shape: number[], dtype: DType, method: string) => {
  let factor: Array;
  if (method === 'svd') {
    const [u, s] = jnp.linalg.svd(cov) as Array[];
    factor = jnp.multiply(u!, jnp.expandDims(jnp.sqrt(s!), -2));
  } else if (method === 'eigh') {
    const [w, v] = jnp.linalg.eigh(cov) as Array[];
    factor = jnp.multiply(v!, jnp.expandDims(jnp.sqrt(w!), -2));
  } else {
    factor = jnp.linalg.cholesky(cov);
  }
  const samples = normal(key, [...shape, mean.shape[mean.ndim - 1]!], { dtype });
  return jnp.add(mean, jnp.einsum('...ij,...j->...i', factor, samples));
}, { staticArgnums: [3, 4, 5] });

/** Multivariate normal samples of shape [...shape, n] with the given mean [..., n] and covariance [..., n, n]. */
export function multivariateNormal(key: Key, mean: ArrayLike, cov: ArrayLike, options: MultivariateNormalOptions = {}): Array {
  const fn = 'random.multivariateNormal';
  checkOptions(fn, options, ['shape', 'dtype', 'method']);
  const k = checkKey(fn, key);
  const [m, c] = promoteInexact(fn, mean, cov) as [Array, Array];
  const method = options.method ?? 'cholesky';
  if (method !== 'cholesky' && method !== 'eigh' && method !== 'svd') throw new ValueError(`${fn}: method must be one of 'svd', 'eigh' and 'cholesky', got ${show(method)}`);
  const dtype = options.dtype ?? m.dtype;
  if (!isFloating(dtype)) throw new ValueError(`${fn}: dtype must be a float dtype, got ${show(dtype)}`);
  if (m.ndim < 1) throw new ValueError(`${fn}: requires mean.ndim >= 1, got mean.ndim == ${m.ndim}`);
  if (c.ndim < 2) throw new ValueError(`${fn}: requires cov.ndim >= 2, got cov.ndim == ${c.ndim}`);
  const n = m.shape[m.ndim - 1]!;
  if (c.shape[c.ndim - 2] !== n || c.shape[c.ndim - 1] !== n) {
    throw new ValueError(`${fn}: requires cov.shape == [..., n, n] for n = ${n} (mean's last axis), got cov.shape == ${show(c.shape)}`);
  }
  const meanBatch = m.shape.slice(0, -1);
  const covBatch = c.shape.slice(0, -2);
  let shape: number[];
  if (options.shape === undefined || options.shape === null) {
    shape = broadcastShapes(fn, meanBatch, covBatch);
  } else {
    shape = checkShape(fn, options.shape);
    checkParamShapes(fn, shape, { mean: jnp.zeros(meanBatch), cov: jnp.zeros(covBatch) });
  }
  return multivariateNormalJit(k, m, c, shape, dtype, method);
}

export interface OrthogonalOptions {
  /** Leading batch shape (default []). */
  shape?: number[];
  /** A float dtype (default float32, float64 with x64). */
  dtype?: DType;
  /** Columns (default n): n x m, semi-orthogonal when n != m. */
  m?: number | null;
}

const orthogonalJit = jit((key: Key, n: number, m: number, shape: number[], dtype: DType) => {
  const z = normal(key, [...shape, Math.max(n, m), Math.min(n, m)], { dtype });
  const [q, r] = jnp.linalg.qr(z) as Array[];
  const d = jnp.diagonal(r!, { axis1: -2, axis2: -1 });
  const x = jnp.multiply(q!, jnp.expandDims(jnp.sign(d), -2));
  return n < m ? jnp.swapaxes(x, -1, -2) : x;
}, { staticArgnums: [1, 2, 3, 4] });

/** A matrix drawn uniformly from the orthogonal group O(n) (or a semi-orthogonal n x m one), batched by `shape`. */
export function orthogonal(key: Key, n: number, options: OrthogonalOptions = {}): Array {
  const fn = 'random.orthogonal';
  checkOptions(fn, options, ['shape', 'dtype', 'm']);
  const k = checkKey(fn, key);
  if (!Number.isInteger(n) || n < 0) throw new ValueError(`${fn}: n must be a nonnegative integer, got ${show(n)}`);
  const m = options.m ?? n;
  if (!Number.isInteger(m) || m < 0) throw new ValueError(`${fn}: m must be a nonnegative integer, got ${show(m)}`);
  const dtype = options.dtype ?? jnp.zeros([]).dtype;
  if (!isFloating(dtype)) throw new ValueError(`${fn}: dtype must be a float dtype, got ${show(dtype)}`);
  return orthogonalJit(k, n, m, checkShape(fn, options.shape ?? []), dtype);
}
