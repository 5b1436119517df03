// jvp rules of lax.linalg.qr, eigh and svd, transcribed from JAX's
// jax/_src/lax/linalg.py (qr_jvp_rule with _thin_qr_jvp, _eigh_jvp_rule,
// _svd_jvp_rule) over primitives bound directly: batched matmuls as
// dot_general at HIGHEST precision, broadcasts spelled out. Every operation
// on a tangent is linear (dot_general, mul by a primal, select against
// zeros, reduce_sum), so grad works through transpose.ts. The right solve
// dx·R⁻¹ of the QR rule (JAX's triangular_solve) is a column-by-column back
// substitution unrolled at trace time: n steps of small ops.
import type { Array } from '../core/array.js';
import { bind, bind1 } from '../core/bind.js';
import type { Tangent, JvpRule } from './jvp.js';
import { scalar } from './jvp.js';

const add = (a: Array, b: Array) => bind1('add', [a, b], {});
const sub = (a: Array, b: Array) => bind1('sub', [a, b], {});
const mul = (a: Array, b: Array) => bind1('mul', [a, b], {});
const div = (a: Array, b: Array) => bind1('div', [a, b], {});
const num = (value: number, like: Array) => scalar(value, like.dtype);

const batchAxes = (x: Array) => x.shape.slice(0, -2).map((_, i) => i);

/** a @ b over the leading batch axes. */
function mm(a: Array, b: Array): Array {
  const r = a.ndim;
  const batch = batchAxes(a);
  return bind1('dot_general', [a, b], { dimensionNumbers: [[[r - 1], [r - 2]], [batch, batch]], preferredElementType: null, precision: 'highest' });
}

/** The transpose of the last two axes. */
function mT(x: Array): Array {
  const r = x.ndim;
  return bind1('transpose', [x], { permutation: [...batchAxes(x), r - 1, r - 2] });
}

/** v [..., k] as a [..., rows, k] matrix whose every row is v (`w[..., None, :]`). */
function asRows(v: Array, rows: number): Array {
  const b = v.ndim - 1;
  return bind1('broadcast_in_dim', [v], { shape: [...v.shape.slice(0, b), rows, v.shape[b]!], broadcastDimensions: [...globalThis.Array.from({ length: b }, (_, i) => i), b + 1] });
}

/** v [..., k] as a [..., k, k] matrix whose every column is v (`w[..., :, None]`). */
function asColumns(v: Array): Array {
  const b = v.ndim - 1;
  const k = v.shape[b]!;
  return bind1('broadcast_in_dim', [v], { shape: [...v.shape.slice(0, b), k, k], broadcastDimensions: [...globalThis.Array.from({ length: b }, (_, i) => i), b] });
}

/** A [..., rows, cols] boolean mask, true where `keep(row, col)` (iotas compared). */
function mask(like: Array, rows: number, cols: number, cmp: 'eq' | 'gt'): Array {
  const shape = [...like.shape.slice(0, -2), rows, cols];
  const r = shape.length;
  const i = bind1('iota', [], { dtype: 'int32', shape, dimension: r - 2 });
  const j = bind1('iota', [], { dtype: 'int32', shape, dimension: r - 1 });
  return bind1(cmp, [i, j], {});
}

/** The identity matrices [..., k, k] in x's dtype. */
function eye(x: Array, k: number): Array {
  return bind1('convert_element_type', [mask(x, k, k, 'eq')], { newDtype: x.dtype, weakType: false });
}

/** x [..., k, k] with its strictly upper triangle and diagonal set to 0 (JAX's _tril(x, -1), a select). */
function strictLower(x: Array): Array {
  const zeros = bind1('broadcast_in_dim', [num(0, x)], { shape: [...x.shape], broadcastDimensions: [] });
  return bind1('select_n', [mask(x, x.shape.at(-2)!, x.shape.at(-1)!, 'gt'), zeros, x], {});
}

/** The diagonal [..., k] of square x [..., k, k] (a mask and a sum: linear in x). */
function diagonal(x: Array): Array {
  return bind1('reduce_sum', [mul(x, eye(x, x.shape.at(-1)!))], { axes: [x.ndim - 1] });
}

function sliceLast2(x: Array, rows: [number, number], cols: [number, number]): Array {
  const r = x.ndim;
  return bind1('slice', [x], {
    startIndices: x.shape.map((_, i) => (i === r - 2 ? rows[0] : i === r - 1 ? cols[0] : 0)),
    limitIndices: x.shape.map((d, i) => (i === r - 2 ? rows[1] : i === r - 1 ? cols[1] : d)),
    strides: null,
  });
}

/** X with X·R = B for upper-triangular R [..., n, n] and B [..., m, n]: back substitution one column at a time. */
function solveRightUpper(b: Array, r: Array): Array {
  const m = b.shape.at(-2)!;
  const n = r.shape.at(-1)!;
  const columns: Array[] = [];
  for (let j = 0; j < n; j++) {
    let col = sliceLast2(b, [0, m], [j, j + 1]);
    if (j > 0) {
      const done = columns.length === 1 ? columns[0]! : bind1('concatenate', columns, { dimension: b.ndim - 1 });
      col = sub(col, mm(done, sliceLast2(r, [0, j], [j, j + 1])));
    }
    const pivot = bind1('broadcast_in_dim', [sliceLast2(r, [j, j + 1], [j, j + 1])], {
      shape: [...col.shape], broadcastDimensions: col.shape.map((_, i) => i),
    });
    columns.push(div(col, pivot));
  }
  return columns.length === 1 ? columns[0]! : bind1('concatenate', columns, { dimension: b.ndim - 1 });
}

/** JAX's _thin_qr_jvp for m >= n (real matrices). */
function thinQrJvp(q: Array, r: Array, dx: Array): [Array, Array] {
  const dxRinv = solveRightUpper(dx, r);
  const qtDxRinv = mm(mT(q), dxRinv);
  const lower = strictLower(qtDxRinv);
  const dOmega = sub(lower, mT(lower));
  const dq = add(mm(q, sub(dOmega, qtDxRinv)), dxRinv);
  const dr = mm(sub(qtDxRinv, dOmega), r);
  return [dq, dr];
}

export const qrJvp: JvpRule<'qr'> = ([x], [dx], params) => {
  const [q, r] = bind('qr', [x!], params) as [Array, Array];
  if (dx === null) return [[q, r], [null, null]];
  const m = x!.shape.at(-2)!;
  const n = x!.shape.at(-1)!;
  if (m < n) {
    const x2 = sliceLast2(x!, [0, m], [m, n]);
    const dx1 = sliceLast2(dx!, [0, m], [0, m]);
    const dx2 = sliceLast2(dx!, [0, m], [m, n]);
    const [dq, dr1] = thinQrJvp(q, sliceLast2(r, [0, m], [0, m]), dx1);
    const dr2 = add(mm(mT(dq), x2), mm(mT(q), dx2));
    return [[q, r], [dq, bind1('concatenate', [dr1, dr2], { dimension: x!.ndim - 1 })]];
  }
  if (params.fullMatrices && m > n) {
    throw new Error(`lax.linalg.qr: the derivative with fullMatrices=true of a tall matrix (m=${m} > n=${n}) needs lu_solve, not available yet; use fullMatrices=false`);
  }
  const [dq, dr] = thinQrJvp(q, r, dx!);
  return [[q, r], [dq, dr]];
};

export const eighJvp: JvpRule<'eigh'> = ([a], [aDot], params) => {
  if (aDot === null) {
    const outs = bind('eigh', [a!], params);
    return [outs, outs.map(() => null)];
  }
  // JAX decomposes the symmetrized operand under differentiation
  const [v, w] = bind('eigh', [mul(add(a!, mT(a!)), num(0.5, a!))], params) as [Array, Array];
  const n = a!.shape.at(-1)!;
  const eyeN = eye(a!, n);
  const fmat = sub(div(num(1, a!), add(eyeN, sub(asRows(w, n), asColumns(w)))), eyeN);
  const vtAdotV = mm(mm(mT(v), aDot), v);
  const dv = mm(v, mul(fmat, vtAdotV));
  const dw = diagonal(vtAdotV);
  return [[v, w], [dv, dw]];
};

export const svdJvp: JvpRule<'svd'> = ([a], [dA], params) => {
  if (dA === null) {
    const outs = bind('svd', [a!], params);
    return [outs, outs.map(() => null)];
  }
  const [s, u, vt] = bind('svd', [a!], { fullMatrices: false, computeUv: true }) as [Array, Array, Array];
  const m = a!.shape.at(-2)!;
  const n = a!.shape.at(-1)!;
  const k = Math.min(m, n);
  if (params.computeUv && params.fullMatrices && m !== n) {
    throw new Error('lax.linalg.svd: Singular value decomposition JVP not implemented for full matrices');
  }
  const ut = mT(u);
  const v = mT(vt);
  const dS = mm(mm(ut, dA), v);
  const ds = diagonal(dS);
  if (!params.computeUv) return [[s], [ds]];
  const sRow = asRows(s, k);
  const sCol = asColumns(s);
  const sDiffs = mul(add(sRow, sCol), sub(sRow, sCol));
  const eyeK = eye(a!, k);
  const f = sub(div(num(1, a!), add(sDiffs, eyeK)), eyeK);
  const dSS = mul(sRow, dS);
  const SdS = mul(sCol, dS);
  const sZeros = bind1('convert_element_type', [bind1('eq', [s, num(0, s)], {})], { newDtype: s.dtype, weakType: false });
  const sInv = sub(div(num(1, s), add(s, sZeros)), sZeros);
  const sInvMat = mul(asColumns(sInv), eyeK);
  const dUdVDiag = mul(mul(sub(dS, mT(dS)), num(0.5, a!)), sInvMat);
  let dU = mm(u, add(mul(f, add(dSS, mT(dSS))), dUdVDiag));
  let dV = mm(v, mul(f, add(SdS, mT(SdS))));
  if (m > n) {
    const dAV = mm(dA, v);
    dU = add(dU, div(sub(dAV, mm(u, mm(ut, dAV))), asRows(s, m)));
  }
  if (n > m) {
    const dAHU = mm(mT(dA), u);
    dV = add(dV, div(sub(dAHU, mm(v, mm(vt, dAHU))), asRows(s, n)));
  }
  return [[s, u, vt], [ds, dU, mT(dV)] as Tangent[]];
};
