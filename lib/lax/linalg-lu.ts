// lax.linalg.cholesky, triangularSolve and lu (jax/_src/lax/linalg.py): thin
// wrappers over the cholesky, triangular_solve and lu primitives, with JAX's
// input symmetrization, lower-triangle masking and vector right-hand sides.
import { Array, type ArrayLike } from '../core/array.js';
import { arrayFromValues, bind, bind1 } from '../core/bind.js';
import { toArray } from '../core/coerce.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { triangle } from '../transforms/linalg-rules.js';

/** A float32 or float64 array of rank >= 2 (LAPACK's real types), or an error naming the function and argument. */
export function linalgOperand(fn: string, x: unknown, arg: string, square = false): Array {
  const a = toArray(fn, x, arg);
  if (a.dtype !== 'float32' && a.dtype !== 'float64') throw new TypeError(`${fn}: ${arg} must be float32 or float64, got ${a.dtype}`);
  if (a.ndim < 2) throw new ValueError(`${fn}: ${arg} must have shape [..., m, n], got ${show(a.shape)}`);
  if (square && a.shape[a.ndim - 1] !== a.shape[a.ndim - 2]) throw new ValueError(`${fn}: ${arg} must be square in its last two axes, got shape ${show(a.shape)}`);
  return a;
}

function flag(fn: string, options: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${show(v)}`);
  return v;
}

/** (x + x^T) / 2 over the last two axes (JAX's symmetrize; the conjugate is a no-op for real dtypes). */
export function symmetrize(x: Array): Array {
  const r = x.ndim;
  const t = bind1('transpose', [x], { permutation: [...globalThis.Array.from({ length: r - 2 }, (_, i) => i), r - 1, r - 2] });
  return bind1('div', [bind1('add', [x, t], {}), arrayFromValues([2], [], x.dtype)], {});
}

/**
 * lax.linalg.cholesky: the lower factor L of each [..., n, n] matrix, A = L L^T. The input is symmetrized first
 * unless symmetrizeInput is false (then only its lower triangle is read). A matrix that is not positive definite
 * gives NaNs in the lower triangle (as JAX: no error).
 */
export function cholesky(x: ArrayLike, options: { symmetrizeInput?: boolean } = {}): Array {
  const fn = 'lax.linalg.cholesky';
  checkOptions(fn, options, ['symmetrizeInput']);
  let a = linalgOperand(fn, x, 'x', true);
  if (flag(fn, options, 'symmetrizeInput', true)) a = symmetrize(a);
  return triangle(bind1('cholesky', [a], {}), 'ge');
}

export interface TriangularSolveOptions {
  /** solve op(a) x = b (true) or x op(a) = b (false, the default) */
  leftSide?: boolean;
  /** a is lower triangular (default false: upper); the other triangle is not read */
  lower?: boolean;
  transposeA?: boolean;
  /** accepted for JAX's signature: a no-op for real dtypes */
  conjugateA?: boolean;
  /** a's diagonal is taken to be ones (not read) */
  unitDiagonal?: boolean;
}

/**
 * lax.linalg.triangular_solve: x with op(a) x = b (leftSide) or x op(a) = b, a [..., k, k] triangular, b [..., m, n]
 * with the same batch dims, or b [..., k] (one vector, a rank lower than a). Like BLAS trsm, no check for a zero on
 * the diagonal: it gives infs and NaNs.
 */
export function triangularSolve(a: ArrayLike, b: ArrayLike, options: TriangularSolveOptions = {}): Array {
  const fn = 'lax.linalg.triangularSolve';
  checkOptions(fn, options, ['leftSide', 'lower', 'transposeA', 'conjugateA', 'unitDiagonal']);
  const o = options as Record<string, unknown>;
  const params = {
    leftSide: flag(fn, o, 'leftSide', false), lower: flag(fn, o, 'lower', false), transposeA: flag(fn, o, 'transposeA', false),
    conjugateA: flag(fn, o, 'conjugateA', false), unitDiagonal: flag(fn, o, 'unitDiagonal', false),
  };
  const A = linalgOperand(fn, a, 'a', true);
  let B = toArray(fn, b, 'b');
  if (B.dtype !== A.dtype) throw new TypeError(`${fn}: a and b must have the same dtype, got ${A.dtype} and ${B.dtype}`);
  const singleton = B.ndim === A.ndim - 1;
  if (singleton) B = bind1('reshape', [B], { newSizes: params.leftSide ? [...B.shape, 1] : [...B.shape.slice(0, -1), 1, B.shape[B.ndim - 1]!] });
  if (B.ndim !== A.ndim) throw new ValueError(`${fn}: b must have the rank of a or one less, got shapes ${show(A.shape)} and ${show(B.shape)}`);
  const out = bind1('triangular_solve', [A, B], params);
  return singleton ? bind1('reshape', [out], { newSizes: [...out.shape.slice(0, -2), out.shape[out.ndim - (params.leftSide ? 2 : 1)]!] }) : out;
}

/**
 * lax.linalg.lu: LU decomposition with partial pivoting (LAPACK getrf) of [..., m, n]: [lu, pivots, permutation], lu
 * holding L below the diagonal (unit diagonal implied) and U on and above it, pivots the int32 row swapped with each
 * row in turn (0-based), permutation the rows of the input in the order of P A = L U.
 */
export function lu(x: ArrayLike): [Array, Array, Array] {
  const a = linalgOperand('lax.linalg.lu', x, 'x');
  const [l, pivots, permutation] = bind('lu', [a], {}) as [Array, Array, Array];
  return [l, pivots, permutation];
}
