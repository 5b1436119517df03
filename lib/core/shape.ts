// Shapes, broadcasting and axis arguments, validated at the API boundary with
// errors that name the function and the values.
import { ConcretizationTypeError, ValueError, show } from './errors.js';

export type Shape = readonly number[];

export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major strides in elements. */
export function stridesOf(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

export function shapesEqual(a: Shape, b: Shape): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Validates a user-given shape (a number or an array of non-negative integers). */
export function checkShape(fn: string, shape: unknown, arg = 'shape'): number[] {
  const dims = typeof shape === 'number' ? [shape] : shape;
  const traced = (Array.isArray(dims) ? dims : [dims]).find((d) => typeof d === 'object' && d !== null && (d as { isTracer?: unknown }).isTracer === true);
  if (traced !== undefined) {
    throw new ConcretizationTypeError(
      `${fn}: shapes must be sequences of concrete integers, but ${arg} holds the traced value ${String(traced)}: inside jit a ` +
        `shape cannot depend on an argument's value. Mark that argument static (jit(f, { staticArgnums: [...] })), or ` +
        `apply jit to a smaller function that takes the shape as a JS number`,
    );
  }
  if (!Array.isArray(dims)) throw new TypeError(`${fn}: ${arg} must be a number or an array of numbers, got ${show(shape)}`);
  for (const d of dims) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw new ValueError(`${fn}: ${arg} must contain non-negative integers, got ${show(shape)}`);
    }
  }
  return dims.slice();
}

/** NumPy broadcasting of several shapes. */
export function broadcastShapes(fn: string, ...shapes: Shape[]): number[] {
  // two equal shapes (most binary ops): no search
  if (shapes.length === 2) {
    const [a, b] = shapes as [Shape, Shape];
    let same = a.length === b.length;
    for (let i = 0; same && i < a.length; i++) same = a[i] === b[i];
    if (same) return a.slice();
  }
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(rank).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const j = rank - s.length + i;
      const d = s[i]!;
      if (d === out[j] || d === 1) continue;
      if (out[j] === 1) out[j] = d;
      else throw new ValueError(`${fn}: shapes ${shapes.map((x) => show(x)).join(' and ')} cannot be broadcast together`);
    }
  }
  return out;
}

/** Normalizes an axis (negative counts from the end). */
export function normalizeAxis(fn: string, axis: unknown, ndim: number, arg = 'axis'): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) {
    throw new TypeError(`${fn}: ${arg} must be an integer, got ${show(axis)}`);
  }
  if (axis < -ndim || axis >= ndim) {
    throw new ValueError(`${fn}: ${arg} ${axis} is out of bounds for an array of dimension ${ndim}`);
  }
  return axis < 0 ? axis + ndim : axis;
}

/**
 * Normalizes an axis option that may be a number, an array of numbers, or
 * null/undefined (all axes). Rejects repeated axes.
 */
export function normalizeAxes(fn: string, axis: unknown, ndim: number, arg = 'axis'): number[] {
  if (axis === undefined || axis === null) return Array.from({ length: ndim }, (_, i) => i);
  const list = Array.isArray(axis) ? axis : [axis];
  const out = list.map((a) => normalizeAxis(fn, a, ndim, arg));
  if (new Set(out).size !== out.length) throw new ValueError(`${fn}: repeated axis in ${arg} ${show(axis)}`);
  return out;
}

export function checkInteger(fn: string, value: unknown, arg: string, min = -Infinity): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${fn}: ${arg} must be an integer, got ${show(value)}`);
  }
  if (value < min) throw new ValueError(`${fn}: ${arg} must be >= ${min}, got ${value}`);
  return value;
}

export function checkPermutation(fn: string, perm: unknown, ndim: number, arg = 'axes'): number[] {
  if (!Array.isArray(perm) || perm.length !== ndim) {
    throw new ValueError(`${fn}: ${arg} ${show(perm)} is not a permutation of ${ndim} axes`);
  }
  const out = perm.map((a) => normalizeAxis(fn, a, ndim, arg));
  if (new Set(out).size !== ndim) throw new ValueError(`${fn}: ${arg} ${show(perm)} repeats an axis`);
  return out;
}
