// Expression syntax the C and CUDA renderers share: both targets are C
// dialects, so select, clamp and comparisons read the same in either (the
// scalar helpers jx_min*/jx_max* exist in both preludes).
import { type DType, isFloating } from '../../core/dtype.js';
import type { ComparePrimitive } from '../../core/primitives.js';

export const COMPARE_OPS: Record<ComparePrimitive, string> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };

/** select_n over rendered cases: a bool predicate picks case 1 when true; an integer one clamps to the first or last case, as the reference interpreter defines. */
export function selectExpr(p: string, predicate: DType, cases: readonly string[]): string {
  if (cases.length === 1) return cases[0]!;
  if (predicate === 'bool') return `(${p} ? ${cases[1]} : ${cases[0]})`;
  let out = cases[cases.length - 1]!;
  for (let i = cases.length - 2; i >= 0; i--) out = `(${p} ${i === 0 ? '<=' : '=='} ${i} ? ${cases[i]} : ${out})`;
  return out;
}

/** XLA's clamp: min(max(x, lo), hi), so hi wins when lo > hi; NaN-propagating for floats. */
export function clampExpr(lo: string, x: string, hi: string, dtype: DType): string {
  if (isFloating(dtype)) {
    const s = dtype === 'float64' ? 'd' : 'f';
    return `jx_min${s}(jx_max${s}(${x}, ${lo}), ${hi})`;
  }
  return `(${x} > ${hi} || ${lo} > ${hi} ? ${hi} : (${x} < ${lo} ? ${lo} : ${x}))`;
}
