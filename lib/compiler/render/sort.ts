// The stages of lax.sort (kernel-ir.ts SortKernel) as indexed.ts specs, so
// both targets render them from one text: each stage is a loop over every
// element of the [pre, n, post] arrays, and each element finds its own place
// (a rank within a short run, then merges of sorted runs by binary search
// into the other run of a pair, as in a merge-path merge sort). One long row
// and many short ones both give one thread per element. The comparison is
// JAX's lax._sort_lt_comparator: lexicographic over the keys, floats
// canonicalized first (-0 == 0, every NaN one value above +inf); equal
// elements keep their order because positions break every tie.
import { isFloating } from '../../core/dtype.js';
import type { SortKernel } from '../kernel-ir.js';
import type { DialectTypes } from './expr.js';
import type { IndexedBuffer, IndexedSpec } from './indexed.js';

/** Statements that set `int out` to whether row position `a` sorts strictly before row position `b` (C expressions). */
function keyLess(k: SortKernel, keys: string[], types: DialectTypes, a: string, b: string, out: string): string[] {
  if (k.order === 'top_k') {
    const d = k.dtypes[0]!;
    const load = (at: string) => types.loadValue(d, `${keys[0]}[(row + (${at})) * post + c]`);
    // XLA's TopK key: the bits as a signed integer, negative floats' magnitudes reversed (-0 just below +0)
    const key = (v: string) => d === 'float64'
      ? `((jx_i64)JX_D2U(${v}) < 0 ? (jx_i64)(0x7fffffffffffffffull - JX_D2U(${v})) : (jx_i64)JX_D2U(${v}))`
      : isFloating(d) ? `((jx_i32)JX_F2U(${v}) < 0 ? (jx_i32)(0x7fffffffu - JX_F2U(${v})) : (jx_i32)JX_F2U(${v}))` : v;
    const t = types.computeType(d);
    return [`int ${out};`, '{', `  const ${t} jx_x = ${load(a)};`, `  const ${t} jx_y = ${load(b)};`, `  ${out} = ${key('jx_x')} > ${key('jx_y')};`, '}'];
  }
  let nested: string[] = [];
  for (let j = k.numKeys - 1; j >= 0; j--) {
    const d = k.dtypes[j]!;
    const t = types.computeType(d);
    // JAX canonicalizes NaNs to one NaN that compares above everything; -0 == 0 already holds for `<`
    const lt = (x: string, y: string) => (isFloating(d) ? `(${y} != ${y} ? ${x} == ${x} : ${x} < ${y})` : `(${x} < ${y})`);
    nested = [
      '{',
      `  const ${t} jx_x = ${types.loadValue(d, `${keys[j]}[(row + (${a})) * post + c]`)};`,
      `  const ${t} jx_y = ${types.loadValue(d, `${keys[j]}[(row + (${b})) * post + c]`)};`,
      `  if (${lt('jx_x', 'jx_y')}) ${out} = 1;`,
      ...(nested.length ? [`  else if (!${lt('jx_y', 'jx_x')}) {`, ...nested.map((l) => `    ${l}`), '  }'] : []),
      '}',
    ];
  }
  return [`int ${out} = 0;`, ...nested];
}

const COORDS = 'const jx_index c = i % post, p = (i / post) % n, row = i / post / n * n;';

const order = (name: string, output: boolean): IndexedBuffer => ({ name, dtype: 'int32', output });

export function sortSpec(k: SortKernel, types: DialectTypes): IndexedSpec {
  if (k.stage === 'top_k') {
    return {
      label: 'the first k of each row in the sorted order, with their positions',
      params: [{ name: 'pre' }, { name: 'n' }, { name: 'k' }],
      buffers: [{ name: 'values', dtype: k.dtypes[0]!, output: true }, { name: 'indices', dtype: 'int32', output: true }, order('order', false), { name: 'in0', dtype: k.dtypes[0]!, output: false }],
      setup: [],
      loops: [{ count: ['pre', 'k'], body: ['const jx_index row = i / k * n;', 'const jx_index q = order[row + i % k];', 'values[i] = in0[row + q];', 'indices[i] = (int32_t)q;'] }],
    };
  }
  const params = [{ name: 'pre' }, { name: 'n' }, { name: 'post' }, ...(k.stage === 'permute' ? [] : [{ name: 'width' }])];
  const inputs = k.dtypes.map((d, j): IndexedBuffer => ({ name: `in${j}`, dtype: d, output: false }));
  const outputs = k.dtypes.map((d, j): IndexedBuffer => ({ name: `out${j}`, dtype: d, output: true }));
  const keys = inputs.slice(0, k.numKeys).map((b) => b.name);
  const count = ['pre', 'n', 'post'];
  // the rank of element p among the run [s, e) of its row: the elements before it in the sorted run
  const rank = [
    COORDS,
    'const jx_index s = p - p % width, e = s + width < n ? s + width : n;',
    'jx_index rank = 0;',
    'for (jx_index j = s; j < e; j++) {',
    '  if (j == p) continue;',
    ...keyLess(k, keys, types, 'j', 'p', 'before').map((l) => `  ${l}`),
    '  if (before) { rank++; continue; }',
    '  if (j < p) {',
    ...keyLess(k, keys, types, 'p', 'j', 'after').map((l) => `    ${l}`),
    '    if (!after) rank++;',
    '  }',
    '}',
  ];
  switch (k.stage) {
    case 'sort_rows':
      return {
        label: `sort of rows up to the width, each element counting the ones before it (${k.numKeys} keys)`,
        params, buffers: [...outputs, ...inputs], setup: [],
        loops: [{
          count, workPerElement: 'width',
          body: [...rank, 'const jx_index to = (row + s + rank) * post + c, from = (row + p) * post + c;', ...inputs.map((_, j) => `out${j}[to] = in${j}[from];`)],
        }],
      };
    case 'rank':
      return {
        label: `sort of runs of the width into an order, each element counting the ones before it (${k.numKeys} keys)`,
        params, buffers: [order('order', true), ...inputs], setup: [],
        loops: [{ count, workPerElement: 'width', body: [...rank, 'order[(row + s + rank) * post + c] = (int32_t)p;'] }],
      };
    case 'merge':
      return {
        label: `merge of sorted runs of the width in pairs, each element binary-searching the other run (${k.numKeys} keys)`,
        params, buffers: [order('order', true), order('source', false), ...inputs], setup: [],
        loops: [{
          count, workPerElement: '32',
          body: [
            COORDS,
            'const jx_index s = p - p % (2 * width), mid = s + width < n ? s + width : n, e = s + 2 * width < n ? s + 2 * width : n;',
            'const jx_index me = source[i];',
            'const int left = p < mid;',
            // a left element goes after the right run's smaller ones; a right one after the left run's smaller or equal ones
            'jx_index lo = left ? mid : s, hi = left ? e : mid;',
            'while (lo < hi) {',
            '  const jx_index m = lo + (hi - lo) / 2;',
            '  const jx_index q = source[(row + m) * post + c];',
            '  int goes_after;',
            '  if (left) {',
            ...keyLess(k, keys, types, 'q', 'me', 'lt').map((l) => `    ${l}`),
            '    goes_after = lt;',
            '  } else {',
            ...keyLess(k, keys, types, 'me', 'q', 'lt').map((l) => `    ${l}`),
            '    goes_after = !lt;',
            '  }',
            '  if (goes_after) lo = m + 1; else hi = m;',
            '}',
            'const jx_index to = left ? p + (lo - mid) : s + (p - mid) + (lo - s);',
            'order[(row + to) * post + c] = (int32_t)me;',
          ],
        }],
      };
    case 'permute':
      return {
        label: 'the sorted operands gathered along the order',
        params, buffers: [...outputs, order('order', false), ...inputs], setup: [],
        loops: [{
          count,
          body: ['const jx_index c = i % post, row = i / post / n * n;', 'const jx_index from = (row + order[i]) * post + c;', ...inputs.map((_, j) => `out${j}[i] = in${j}[from];`)],
        }],
      };
  }
}
