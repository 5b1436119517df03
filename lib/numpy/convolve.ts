// jnp.convolve and jnp.correlate: NumPy's 1-D discrete convolution and
// cross-correlation, as JAX's _conv (jax/_src/numpy/lax_numpy.py) builds them
// on lax.convGeneralDilated: inputs promoted to an inexact dtype unless
// preferredElementType is given (then to their common dtype), convolve swaps
// the operands when v is longer and flips v, correlate conjugates v (a no-op:
// jaxon has no complex dtypes) and, when it swaps, reverses the output; the
// mode picks the padding. Their derivatives are those of the convolution.
import type { Array, ArrayLike } from '../core/array.js';
import { type DType, checkUserDType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import * as lax from '../lax/ops.js';
import { convGeneralDilated } from '../lax/convolution.js';
import { promote, promoteInexact } from './util.js';

export interface ConvolveOptions { precision?: unknown; preferredElementType?: DType | null }

function conv1d(fn: string, a: ArrayLike, v: ArrayLike, mode: string, op: 'convolve' | 'correlate', options: ConvolveOptions): Array {
  checkOptions(fn, options, ['precision', 'preferredElementType']);
  const pet = options.preferredElementType ? checkUserDType(fn, options.preferredElementType, 'preferredElementType') : null;
  let [x, y] = (pet ? promote(fn, a, v) : promoteInexact(fn, a, v)) as [Array, Array];
  if (x.ndim !== 1 || y.ndim !== 1) throw new ValueError(`${fn}: only 1-dimensional inputs are supported, got shapes ${show(x.shape)} and ${show(y.shape)}`);
  if (x.shape[0] === 0 || y.shape[0] === 0) throw new ValueError(`${fn}: inputs cannot be empty, got shapes ${show(x.shape)} and ${show(y.shape)}`);
  let reverse = false;
  if (x.shape[0]! < y.shape[0]!) {
    [x, y] = [y, x];
    reverse = op === 'correlate';
  }
  if (op === 'convolve') y = lax.rev(y, [0]);
  const m = y.shape[0]!;
  let padding: [number, number][];
  if (mode === 'valid') padding = [[0, 0]];
  else if (mode === 'same') padding = [[Math.floor(m / 2), m - Math.floor(m / 2) - 1]];
  else if (mode === 'full') padding = [[m - 1, m - 1]];
  else throw new ValueError(`${fn}: mode must be one of ['full', 'same', 'valid'], got ${show(mode)}`);
  const out = convGeneralDilated(lax.reshape(x, [1, 1, x.shape[0]!]), lax.reshape(y, [1, 1, m]), [1], padding, { precision: options.precision, preferredElementType: pet });
  const flat = lax.reshape(out, [out.shape[2]!]);
  return reverse ? lax.rev(flat, [0]) : flat;
}

/** jnp.convolve(a, v, mode = 'full', { precision, preferredElementType }). */
export function convolve(a: ArrayLike, v: ArrayLike, mode: 'full' | 'same' | 'valid' = 'full', options: ConvolveOptions = {}): Array {
  return conv1d('jnp.convolve', a, v, mode, 'convolve', options);
}

/** jnp.correlate(a, v, mode = 'valid', { precision, preferredElementType }). */
export function correlate(a: ArrayLike, v: ArrayLike, mode: 'full' | 'same' | 'valid' = 'valid', options: ConvolveOptions = {}): Array {
  return conv1d('jnp.correlate', a, v, mode, 'correlate', options);
}
