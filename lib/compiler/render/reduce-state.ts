// What a reduction keeps while it runs, written once for both targets
// (issue 14): the state's variables, how one element and another state merge
// in, and the result. The C backend merges per-thread partials in thread
// order; CUDA merges across warp shuffles, shared memory and blocks; both use
// these rules, so every strategy of either target reduces the same way:
// floats accumulate in double, integer sums and products in 64 wrapping bits,
// max/min propagate NaN, arg reductions keep the first index on ties and the
// first NaN over everything (JAX).
import { type DType, integerRange, isFloating } from '../../core/dtype.js';
import type { ReduceOp } from '../kernel-ir.js';
import type { DialectTypes } from './expr.js';

export interface ReductionState {
  /** The state's variables (their names are fixed: `acc`, or `best` and `bi` for arg reductions). */
  parts: { type: string; name: string; init: string }[];
  /** A statement folding in one element `value` at inner index `j`. */
  visit: (value: string, j: string) => string;
  /** A statement merging another state, given as one expression per part, that covers later elements. */
  merge: (other: string[]) => string;
  /** The result in the output's compute type (rounded to the output dtype). */
  result: string;
  /** The result as the output stores it. */
  stored: string;
}

/** The lowest and highest value of an integer or bool dtype: the identities of max and min. */
function bounds(d: DType): [number, number] {
  return d === 'bool' ? [0, 1] : integerRange(d);
}

export function reductionState(op: ReduceOp, d: DType, out: DType, types: DialectTypes): ReductionState {
  const rt = types.computeType(out);
  if (op === 'argmax' || op === 'argmin') {
    const cmp = op === 'argmax' ? '>' : '<';
    const t = types.computeType(d);
    const better = isFloating(d) ? `(best == best) && (x != x || x ${cmp} best)` : `x ${cmp} best`;
    const otherBetter = isFloating(d)
      ? `(ob != ob ? (best == best || obi < bi) : (best == best && (ob ${cmp} best || (ob == best && obi < bi))))`
      : `(ob ${cmp} best || (ob == best && obi < bi))`;
    return {
      parts: [{ type: t, name: 'best', init: '0' }, { type: 'jx_i64', name: 'bi', init: '-1' }],
      visit: (v, j) => `{ const ${t} x = ${v}; if (bi < 0 || (${better})) { best = x; bi = ${j}; } }`,
      merge: ([ob, obi]) => `{ const ${t} ob = ${ob}; const jx_i64 obi = ${obi}; if (obi >= 0 && (bi < 0 || ${otherBetter})) { best = ob; bi = obi; } }`,
      result: `(${rt})bi`,
      stored: `(${types.storageType(out)})bi`,
    };
  }
  const floating = isFloating(d);
  const acc = floating ? 'double' : op === 'sum' || op === 'prod' ? 'jx_u64' : types.computeType(d);
  const stored = out === 'bool' ? `(${types.storageType('bool')})((acc) != 0)` : types.storeValue(out, `(${rt})(acc)`);
  const result = types.loadValue(out, stored);
  const simple = (init: string, sym: string): ReductionState => ({
    parts: [{ type: acc, name: 'acc', init }],
    visit: (v) => `acc ${sym}= (${acc})${v};`,
    merge: ([o]) => `acc ${sym}= ${o};`,
    result,
    stored,
  });
  switch (op) {
    case 'sum': return simple('0', '+');
    case 'prod': return simple('1', '*');
    case 'and': return simple(d === 'bool' ? '1' : `(${acc})~(${acc})0`, '&');
    case 'or': return simple('0', '|');
    case 'max':
    case 'min': {
      const cmp = op === 'max' ? '>' : '<';
      const [lo, hi] = floating ? [-Infinity, Infinity] : bounds(d);
      const init = floating ? types.literal(op === 'max' ? lo : hi, 'float64') : types.literal(op === 'max' ? lo : hi, d);
      const combine = (v: string) =>
        floating
          ? `{ const double x = ${v}; if (x != x || x ${cmp} acc) acc = (acc != acc) ? acc : x; }`
          : `{ const ${acc} x = ${v}; if (x ${cmp} acc) acc = x; }`;
      return { parts: [{ type: acc, name: 'acc', init }], visit: combine, merge: ([o]) => combine(o!), result, stored };
    }
  }
}
