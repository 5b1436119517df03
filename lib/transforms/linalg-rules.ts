// Derivative and batching rules of the linear-algebra primitives, as JAX
// writes them (jax/_src/lax/linalg.py): cholesky's forward rule (Murray,
// arXiv:1602.07527), triangular_solve's jvp in its matrix and its linear
// transpose in its right-hand side (transpose.ts), lu's jvp (De Hoog, Anderssen and Lukas).
// They bind primitives directly, so they trace at any level; every matmul is
// HIGHEST precision, as JAX asks.
import type { Array } from '../core/array.js';
import { bind, bind1 } from '../core/bind.js';
import type { DType } from '../core/dtype.js';
import type { PrimitiveParams } from '../core/primitives.js';
import { type JvpRule, scalar, zerosLike } from './jvp.js';

function range(n: number): number[] {
  return globalThis.Array.from({ length: n }, (_, i) => i);
}

/** a @ b over the last two axes, the leading ones batch dimensions of both. */
function matmul(a: Array, b: Array): Array {
  const r = a.ndim;
  const batch = range(r - 2);
  return bind1('dot_general', [a, b], { dimensionNumbers: [[[r - 1], [r - 2]], [batch, batch]], preferredElementType: null, precision: 'highest' });
}

function swapLast(x: Array): Array {
  const r = x.ndim;
  return bind1('transpose', [x], { permutation: [...range(r - 2), r - 1, r - 2] });
}

type Triangle = 'ge' | 'gt' | 'le' | 'lt';

/** x where (row `cmp` column) holds, zero elsewhere: tril is 'ge' (k = 0) or 'gt' (k = -1), triu 'le' (k = 0) or 'lt' (k = 1). */
export function triangle(x: Array, cmp: Triangle): Array {
  const shape = [...x.shape];
  const r = shape.length;
  const square = shape.slice(-2);
  const rows = bind1('iota', [], { dtype: 'int32', shape: square, dimension: 0 });
  const cols = bind1('iota', [], { dtype: 'int32', shape: square, dimension: 1 });
  const mask = bind1('broadcast_in_dim', [bind1(cmp, [rows, cols], {})], { shape, broadcastDimensions: [r - 2, r - 1] });
  return bind1('select_n', [mask, zerosLike({ shape, dtype: x.dtype, weakType: false }), x], {});
}

/** The identity of [n, m] (ones where row == column), broadcast to `batch`. */
function eye(batch: number[], n: number, m: number, dtype: DType): Array {
  const rows = bind1('iota', [], { dtype: 'int32', shape: [n, m], dimension: 0 });
  const cols = bind1('iota', [], { dtype: 'int32', shape: [n, m], dimension: 1 });
  const e = bind1('convert_element_type', [bind1('eq', [rows, cols], {})], { newDtype: dtype, weakType: false });
  return bind1('broadcast_in_dim', [e], { shape: [...batch, n, m], broadcastDimensions: [batch.length, batch.length + 1] });
}

function add(x: Array, y: Array): Array {
  return bind1('add', [x, y], {});
}

function triangularSolve(a: Array, b: Array, params: Partial<PrimitiveParams['triangular_solve']>): Array {
  return bind1('triangular_solve', [a, b], { leftSide: false, lower: false, transposeA: false, conjugateA: false, unitDiagonal: false, ...params });
}

/** JAX's _cholesky_jvp_rule: L' = L phi(L^-1 sigma' L^-T), phi taking the lower triangle with its diagonal halved. */
export function choleskyJvp(...[[x], [t]]: Parameters<JvpRule<'cholesky'>>): ReturnType<JvpRule<'cholesky'>> {
  const L = triangle(bind1('cholesky', [x!], {}), 'ge');
  if (t === null) return [[L], [null]];
  const tmp = triangularSolve(L, t!, { leftSide: false, transposeA: true, conjugateA: true, lower: true });
  const inner = triangleHalfDiagonal(triangularSolve(L, tmp, { leftSide: true, transposeA: false, lower: true }));
  return [[L], [matmul(L, inner)]];
}

/** phi(X) = tril(X) / (1 + eye): the lower triangle, its diagonal halved. */
function triangleHalfDiagonal(x: Array): Array {
  const l = triangle(x, 'ge');
  const n = x.shape[x.ndim - 1]!;
  const denominator = add(eye(x.shape.slice(0, -2), n, n, x.dtype), scalar(1, x.dtype, false));
  return bind1('div', [l, denominator], {});
}

/** JAX's _triangular_solve_jvp_rule_a plus the linear rule in b (defjvp2: the a term first). */
export function triangularSolveJvp(...[[a, b], [ta, tb], params]: Parameters<JvpRule<'triangular_solve'>>): ReturnType<JvpRule<'triangular_solve'>> {
  const ans = bind1('triangular_solve', [a!, b!], params);
  let tangent: Array | null = null;
  if (ta !== null) {
    const { leftSide, lower, transposeA, unitDiagonal } = params;
    const [m, n] = b!.shape.slice(-2) as [number, number];
    let g = triangle(ta!, lower ? (unitDiagonal ? 'gt' : 'ge') : (unitDiagonal ? 'lt' : 'le'));
    g = bind1('neg', [g], {});
    if (transposeA) g = swapLast(g);
    const aInverse = (rhs: Array) => bind1('triangular_solve', [a!, rhs], params);
    // triangular_solve costs about a matmul: the cheaper order, as JAX picks it
    if (leftSide) tangent = m > n ? aInverse(matmul(g, ans)) : matmul(aInverse(g), ans);
    else tangent = m < n ? aInverse(matmul(ans, g)) : matmul(ans, aInverse(g));
  }
  if (tb !== null) {
    const fromB = bind1('triangular_solve', [a!, tb!], params);
    tangent = tangent === null ? fromB : add(tangent, fromB);
  }
  return [[ans], [tangent]];
}

/** JAX's _lu_jvp_rule: with L and U from lu, X = L^-1 P A' U^-1, L' = L tril(X, -1), U' = triu(X) U. */
export function luJvp(...[[a], [t]]: Parameters<JvpRule<'lu'>>): ReturnType<JvpRule<'lu'>> {
  const [lu, pivots, permutation] = bind('lu', [a!], {}) as [Array, Array, Array];
  if (t === null) return [[lu, pivots, permutation], [null, null, null]];
  const shape = [...a!.shape];
  const r = shape.length;
  const batch = shape.slice(0, -2);
  const [m, n] = shape.slice(-2) as [number, number];
  const k = Math.min(m, n);
  const dtype = a!.dtype;
  // the rows of A' in pivot order: a permutation matrix P[i, j] = (permutation[i] == j), exact in a HIGHEST matmul
  const cols = bind1('iota', [], { dtype: 'int32', shape: [...batch, m, m], dimension: r - 1 });
  const perm = bind1('broadcast_in_dim', [permutation], { shape: [...batch, m, m], broadcastDimensions: range(r - 1) });
  const P = bind1('convert_element_type', [bind1('eq', [perm, cols], {})], { newDtype: dtype, weakType: false });
  const x = matmul(P, t!);
  const zero = scalar(0, dtype, false);
  const start = range(r).map(() => 0);
  let l = triangle(k === n ? lu : bind1('slice', [lu], { startIndices: start, limitIndices: [...batch, m, k], strides: null }), 'gt');
  if (k < m) l = bind1('pad', [l, zero], { paddingConfig: [...batch.map((): [number, number, number] => [0, 0, 0]), [0, 0, 0], [0, m - k, 0]] });
  l = add(l, eye(batch, m, m, dtype));
  let u = triangle(k === m ? lu : bind1('slice', [lu], { startIndices: start, limitIndices: [...batch, k, n], strides: null }), 'le');
  if (k < n) {
    u = bind1('pad', [u, zero], { paddingConfig: [...batch.map((): [number, number, number] => [0, 0, 0]), [0, n - k, 0], [0, 0, 0]] });
    const uEye = bind1('pad', [eye(batch, n - k, n - k, dtype), zero], { paddingConfig: [...batch.map((): [number, number, number] => [0, 0, 0]), [k, 0, 0], [k, 0, 0]] });
    u = add(u, uEye);
  }
  const la = triangularSolve(l, x, { leftSide: true, lower: true, unitDiagonal: true });
  const lau = triangularSolve(u, la, { leftSide: false, lower: false });
  const luDot = add(matmul(l, triangle(lau, 'gt')), matmul(triangle(lau, 'le'), u));
  return [[lu, pivots, permutation], [luDot, null, null]];
}
