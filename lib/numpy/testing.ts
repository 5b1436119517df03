// jnp's comparison predicates: isclose, allclose, arrayEqual, arrayEquiv.
// Like JAX they return Arrays (a bool array, or a 0-d bool Array for the
// whole-array tests), not JS booleans; call .item() for a boolean.
// isclose is NumPy's |a - b| <= atol + rtol * |b|, with equal values
// (infinities included) close, NaN never close unless equalNan.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { shapesEqual } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { isfinite, isnan } from './elementwise.js';
import { broadcastAll, checkBoolean, promote, promoteInexact } from './util.js';

export interface IsCloseOptions {
  rtol?: number;
  atol?: number;
  equalNan?: boolean;
}

function tolerance(fn: string, value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) throw new TypeError(`${fn}: ${name} must be a number, got ${show(value)}`);
  return value;
}

function operands(fn: string, a: ArrayLike, b: ArrayLike): [Array, Array] {
  const x = a instanceof Array || typeof a === 'number' || typeof a === 'boolean' ? a : toArray(fn, a, 'a');
  const y = b instanceof Array || typeof b === 'number' || typeof b === 'boolean' ? b : toArray(fn, b, 'b');
  return [x as Array, y as Array];
}

function closeness(fn: string, a: ArrayLike, b: ArrayLike, options: IsCloseOptions): Array {
  checkOptions(fn, options, ['rtol', 'atol', 'equalNan']);
  const rtol = tolerance(fn, options.rtol, 'rtol', 1e-5);
  const atol = tolerance(fn, options.atol, 'atol', 1e-8);
  const equalNan = checkBoolean(fn, options.equalNan, 'equalNan');
  const [x, y] = operands(fn, a, b);
  const [xi, yi] = broadcastAll(fn, ...promoteInexact(fn, x, y)) as [Array, Array];
  // JAX: a == b, or (b finite and |a - b| <= atol + rtol * |b|), computed in the promoted float dtype
  const inRange = lax.le(lax.abs(lax.sub(xi, yi)), lax.add(lax.mul(lax.abs(yi), rtol), atol));
  let out = lax.bitwiseOr(lax.eq(xi, yi), lax.bitwiseAnd(isfinite(yi), inRange));
  if (equalNan) out = lax.bitwiseOr(out, lax.bitwiseAnd(isnan(xi), isnan(yi)));
  return out;
}

const all = (x: Array): Array => (x.ndim === 0 ? x : lax.reduceAnd(x, x.shape.map((_, i) => i)));

/** jnp.isclose: elementwise |a - b| <= atol + rtol * |b| (not symmetric, as in NumPy), as a bool array. */
export function isclose(a: ArrayLike, b: ArrayLike, options: IsCloseOptions = {}): Array {
  return closeness('jnp.isclose', a, b, options);
}

/** jnp.allclose: whether isclose holds everywhere, as a 0-d bool Array. */
export function allclose(a: ArrayLike, b: ArrayLike, options: IsCloseOptions = {}): Array {
  return all(closeness('jnp.allclose', a, b, options));
}

/** jnp.arrayEqual: same shape and equal elements, as a 0-d bool Array (false, not an error, for different shapes). */
export function arrayEqual(a1: ArrayLike, a2: ArrayLike, options: { equalNan?: boolean } = {}): Array {
  const fn = 'jnp.arrayEqual';
  checkOptions(fn, options, ['equalNan']);
  const equalNan = checkBoolean(fn, options.equalNan, 'equalNan');
  const x = toArray(fn, a1, 'a1');
  const y = toArray(fn, a2, 'a2');
  if (!shapesEqual(x.shape, y.shape)) return toArray(fn, false);
  const [xp, yp] = promote(fn, x, y) as [Array, Array];
  let eq = lax.eq(xp, yp);
  if (equalNan) eq = lax.bitwiseOr(eq, lax.bitwiseAnd(isnan(xp), isnan(yp)));
  return all(eq);
}

/** jnp.arrayEquiv: equal after broadcasting, as a 0-d bool Array (false when the shapes do not broadcast). */
export function arrayEquiv(a1: ArrayLike, a2: ArrayLike): Array {
  const fn = 'jnp.arrayEquiv';
  const x = toArray(fn, a1, 'a1');
  const y = toArray(fn, a2, 'a2');
  let xb: Array;
  let yb: Array;
  try {
    [xb, yb] = broadcastAll(fn, ...promote(fn, x, y)) as [Array, Array];
  } catch (e) {
    if (e instanceof ValueError) return toArray(fn, false);
    throw e;
  }
  return all(lax.eq(xb, yb));
}
