// lax.linalg.qr, eigh and svd (jax/_src/lax/linalg.py): thin wrappers over
// the qr, eigh and svd primitives with JAX's defaults and return order.
import '../runtime/eager.js';
import type { Array, ArrayLike } from '../core/array.js';
import { bind, bind1 } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';

function operand(fn: string, x: ArrayLike): Array {
  const a = toArray(fn, x, 'x');
  if (a.ndim < 2) throw new ValueError(`${fn}: x must have rank >= 2, got shape ${show(a.shape)}`);
  if (a.dtype !== 'float32' && a.dtype !== 'float64') throw new ValueError(`${fn}: x must be float32 or float64, got ${a.dtype}`);
  return a;
}

function flag(fn: string, options: Record<string, unknown> | undefined, name: string, fallback: boolean): boolean {
  const value = options?.[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${show(value)}`);
  return value;
}

/** (x + xᵀ) / 2 over the last two axes (JAX's symmetrize). */
export function symmetrize(x: Array): Array {
  const r = x.ndim;
  const t = bind1('transpose', [x], { permutation: [...x.shape.slice(0, -2).map((_, i) => i), r - 1, r - 2] });
  return bind1('mul', [bind1('add', [x, t], {}), toArray('symmetrize', 0.5, 'x', x.dtype)], {});
}

export interface QrOptions {
  /** q [..., m, m] and r [..., m, n] (default), or q [..., m, k] and r [..., k, n] with k = min(m, n). */
  fullMatrices?: boolean;
}

/** lax.linalg.qr(x, { fullMatrices = true }): [q, r] with x = q·r, q orthogonal, r upper triangular (LAPACK's signs). */
export function qr(x: ArrayLike, options?: QrOptions): [Array, Array] {
  const fn = 'lax.linalg.qr';
  checkOptions(fn, options, ['fullMatrices']);
  const a = operand(fn, x);
  return bind('qr', [a], { fullMatrices: flag(fn, options as Record<string, unknown>, 'fullMatrices', true) }) as [Array, Array];
}

/**
 * Per matrix, whether every entry the kernel reads is finite (without symmetrizeInput, eigh reads one triangle): a
 * bool of the batch shape. JAX's LAPACK and cuSOLVER calls give NaNs for a matrix with a NaN, where the Jacobi rounds
 * would not (a NaN in one pair leaves the other pairs' rotations finite: eigh of [[1, 2, 0], [2, NaN, 1], [0, 1, 3]]
 * came out [1, NaN, 3] with identity vectors, its svd with two finite singular values), so such a matrix's outputs are
 * all NaN on every path and target (render/linalg-tridiagonal.ts also does so itself).
 */
function finiteMatrices(a: Array, triangle?: 'lower' | 'upper'): Array {
  const r = a.ndim;
  let ok = bind1('is_finite', [a], {});
  if (triangle) {
    const n = a.shape[r - 1]!;
    const row = bind1('iota', [], { dtype: 'int32', shape: [n, n], dimension: 0 });
    const col = bind1('iota', [], { dtype: 'int32', shape: [n, n], dimension: 1 });
    const unread = bind1(triangle === 'lower' ? 'gt' : 'lt', [col, row], {});
    ok = bind1('or', [ok, bind1('broadcast_in_dim', [unread], { shape: [...a.shape], broadcastDimensions: [r - 2, r - 1] })], {});
  }
  return bind1('reduce_and', [ok], { axes: [r - 2, r - 1] });
}

/** `out` where its matrix was finite (`ok`, the batch shape), NaN elsewhere. */
function nanUnless(fn: string, ok: Array, out: Array): Array {
  const shape = [...out.shape];
  const pred = bind1('broadcast_in_dim', [ok], { shape, broadcastDimensions: ok.shape.map((_, i) => i) });
  const nan = bind1('broadcast_in_dim', [toArray(fn, NaN, 'nan', out.dtype)], { shape, broadcastDimensions: [] });
  return bind1('select_n', [pred, nan, out], {});
}

export interface EighOptions {
  /** Without symmetrizeInput: read the lower (default) or upper triangle. */
  lower?: boolean;
  /** Decompose (x + xᵀ)/2 (default true). */
  symmetrizeInput?: boolean;
  /** Ascending eigenvalues (default true); otherwise in the order Jacobi leaves them. */
  sortEigenvalues?: boolean;
}

/** lax.linalg.eigh(x, options): [v, w] with x·v[..., :, i] = w[..., i]·v[..., :, i], w ascending. */
export function eigh(x: ArrayLike, options?: EighOptions): [Array, Array] {
  const fn = 'lax.linalg.eigh';
  checkOptions(fn, options, ['lower', 'symmetrizeInput', 'sortEigenvalues']);
  const o = options as Record<string, unknown> | undefined;
  let a = operand(fn, x);
  if (a.shape.at(-1) !== a.shape.at(-2)) throw new ValueError(`${fn}: x must be a batch of square matrices, got shape ${show(a.shape)}`);
  const symmetrized = flag(fn, o, 'symmetrizeInput', true);
  if (symmetrized) a = symmetrize(a);
  const lower = flag(fn, o, 'lower', true);
  const ok = finiteMatrices(a, symmetrized ? undefined : lower ? 'lower' : 'upper');
  const [v, w] = bind('eigh', [a], { lower, sortEigenvalues: flag(fn, o, 'sortEigenvalues', true) }) as [Array, Array];
  return [nanUnless(fn, ok, v), nanUnless(fn, ok, w)];
}

export interface SvdOptions {
  /** u [..., m, m] and vh [..., n, n] (default), or u [..., m, k] and vh [..., k, n]. */
  fullMatrices?: boolean;
  /** Return [u, s, vh] (default) or s alone. */
  computeUv?: boolean;
}

/** lax.linalg.svd(x, options): [u, s, vh] (s descending) with x = u·diag(s)·vh, or s alone without computeUv. */
export function svd(x: ArrayLike, options: SvdOptions & { computeUv: false }): Array;
export function svd(x: ArrayLike, options?: SvdOptions): [Array, Array, Array];
export function svd(x: ArrayLike, options?: SvdOptions): Array | [Array, Array, Array] {
  const fn = 'lax.linalg.svd';
  checkOptions(fn, options, ['fullMatrices', 'computeUv']);
  const o = options as Record<string, unknown> | undefined;
  const a = operand(fn, x);
  const computeUv = flag(fn, o, 'computeUv', true);
  const ok = finiteMatrices(a);
  const outs = bind('svd', [a], { fullMatrices: flag(fn, o, 'fullMatrices', true), computeUv }).map((out) => nanUnless(fn, ok, out));
  return computeUv ? [outs[1]!, outs[0]!, outs[2]!] : outs[0]!;
}
