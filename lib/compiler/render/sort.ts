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
import type { Dialect, DialectTypes } from './expr.js';
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

/**
 * An unsigned radix key for key operand `j` whose ascending order is keyLess's order (ties stay equal): floats with
 * -0 as 0 and every NaN the largest key, signed integers with the sign bit flipped; for 'top_k', XLA's TopK key
 * descending. Halves sort as the floats they load as (their low bytes are then all zero and their passes skipped).
 */
function radixKey(k: SortKernel, j: number, types: DialectTypes, v: string): { expr: string; bits: 32 | 64 } {
  const d = k.dtypes[j]!;
  if (k.order === 'top_k') {
    if (d === 'float64') return { expr: `~(JX_D2U(${v}) >> 63 ? (0x7fffffffffffffffull - JX_D2U(${v})) ^ 0x8000000000000000ull : JX_D2U(${v}) ^ 0x8000000000000000ull)`, bits: 64 };
    if (isFloating(d)) return { expr: `(jx_u32)~(JX_F2U(${v}) >> 31 ? (0x7fffffffu - JX_F2U(${v})) ^ 0x80000000u : JX_F2U(${v}) ^ 0x80000000u)`, bits: 32 };
    const signed = d === 'int8' || d === 'int16' || d === 'int32';
    return { expr: signed ? `(jx_u32)~((jx_u32)(jx_i32)(${v}) ^ 0x80000000u)` : `(jx_u32)~(jx_u32)(${v})`, bits: 32 };
  }
  if (d === 'float64') return { expr: `jx_radix_key_f64(${v})`, bits: 64 };
  if (isFloating(d)) return { expr: `jx_radix_key_f32(${v})`, bits: 32 };
  if (d === 'int8' || d === 'int16' || d === 'int32') return { expr: `((jx_u32)(jx_i32)(${v}) ^ 0x80000000u)`, bits: 32 };
  return { expr: `(jx_u32)(${v})`, bits: 32 };
}

/**
 * The CPU's 'order' stage: each line (one per row and column) sorted whole by a stable LSD radix sort of (key,
 * position) pairs, key operands last to first, all byte histograms from one read and a pass skipped where one bucket
 * holds every element. Without scratch memory it insertion-sorts runs of the width and merges them pairwise between
 * the order and the scratch buffer (tests force that with JAXON_TEST_SORT_NO_SCRATCH=1).
 */
function cpuOrder(k: SortKernel, keys: string[], types: DialectTypes, params: IndexedSpec['params'], inputs: IndexedBuffer[]): IndexedSpec {
  const wide = keys.some((_, j) => radixKey(k, j, types, 'x').bits === 64);
  const kt = wide ? 'jx_u64' : 'jx_u32';
  const body: string[] = [
    'const jx_index c = i % post, row = i / post * n;',
    `${kt} *jx_keys = (${kt} *)malloc((size_t)n * 2 * sizeof(${kt}));`,
    'int32_t *jx_pos = (int32_t *)malloc((size_t)n * 2 * sizeof(int32_t));',
    'if (jx_keys && jx_pos && !jx_sort_scratch_refused()) {',
    `  ${kt} *ka = jx_keys, *kb = jx_keys + n;`,
    '  int32_t *va = jx_pos, *vb = jx_pos + n;',
    '  for (jx_index t = 0; t < n; t++) va[t] = (int32_t)t;',
  ];
  for (let j = keys.length - 1; j >= 0; j--) {
    const d = k.dtypes[j]!;
    const { expr, bits } = radixKey(k, j, types, 'jx_v');
    const bytes = bits / 8;
    body.push(
      '  {',
      `    jx_index jx_count[${bytes}][256];`,
      '    memset(jx_count, 0, sizeof jx_count);',
      '    for (jx_index t = 0; t < n; t++) {',
      `      const ${types.computeType(d)} jx_v = ${types.loadValue(d, `${keys[j]}[(row + va[t]) * post + c]`)};`,
      `      const ${kt} key = ${expr};`,
      '      ka[t] = key;',
      `      for (int b = 0; b < ${bytes}; b++) jx_count[b][(key >> (8 * b)) & 255]++;`,
      '    }',
      `    for (int b = 0; b < ${bytes}; b++) {`,
      '      jx_index *count = jx_count[b], offset = 0;',
      '      int trivial = 0;',
      '      for (int d = 0; d < 256; d++) { if (count[d] == n) trivial = 1; const jx_index c0 = count[d]; count[d] = offset; offset += c0; }',
      '      if (trivial) continue;',
      '      for (jx_index t = 0; t < n; t++) {',
      '        const jx_index o = count[(ka[t] >> (8 * b)) & 255]++;',
      '        kb[o] = ka[t];',
      '        vb[o] = va[t];',
      '      }',
      `      { ${kt} *sk = ka; ka = kb; kb = sk; int32_t *sv = va; va = vb; vb = sv; }`,
      '    }',
      '  }',
    );
  }
  body.push(
    '  for (jx_index t = 0; t < n; t++) order[(row + t) * post + c] = va[t];',
    '} else {',
    '  for (jx_index s = 0; s < n; s += width) {',
    '    const jx_index e = s + width < n ? s + width : n;',
    '    for (jx_index j = s; j < e; j++) {',
    '      jx_index t = j;',
    '      while (t > s) {',
    '        const jx_index q = order[(row + t - 1) * post + c];',
    ...keyLess(k, keys, types, 'j', 'q', 'lt').map((l) => `        ${l}`),
    '        if (!lt) break;',
    '        order[(row + t) * post + c] = (int32_t)q;',
    '        t--;',
    '      }',
    '      order[(row + t) * post + c] = (int32_t)j;',
    '    }',
    '  }',
    // the runs merged pairwise between order and scratch
    ...[
      '  int32_t *jx_from = order, *jx_to = scratch;',
      '  for (jx_index w = width; w < n; w *= 2) {',
      ...cMergePass(k, keys, types, 'jx_to', 'jx_from', 'w').map((l) => `    ${l}`),
      '    int32_t *jx_t = jx_from; jx_from = jx_to; jx_to = jx_t;',
      '  }',
      '  if (jx_from != order) for (jx_index t = 0; t < n; t++) order[(row + t) * post + c] = jx_from[(row + t) * post + c];',
    ],
    '}',
    'free(jx_keys);',
    'free(jx_pos);',
  );
  return {
    label: `sort of each line into an order, a stable radix sort of (key, position) pairs (${k.numKeys} keys)`,
    params, buffers: [order('order', true), order('scratch', true), ...inputs], setup: [],
    loops: [{ count: ['pre', 'post'], workPerElement: 'n', body }],
  };
}

/**
 * One pass of the CPU's merge (cpuOrder without scratch memory): the sorted runs of `width` in `source` merged
 * pairwise into `dest`, each line's pairs front to back (n steps a pass, where an element-wise binary search costs
 * n log(width) scattered reads). A pair already in order is copied; ties take the left run's element first (stable).
 * Inside a loop over lines that sets `c` and `row`.
 */
function cMergePass(k: SortKernel, keys: string[], types: DialectTypes, dest: string, source: string, width: string): string[] {
  const at = (q: string) => `[(row + ${q}) * post + c]`;
  return [
    `for (jx_index p = 0; p < n; p += 2 * ${width}) {`,
    `  const jx_index mid = p + ${width} < n ? p + ${width} : n, e = p + 2 * ${width} < n ? p + 2 * ${width} : n;`,
    '  jx_index a = p, b = mid, t = p;',
    '  if (a < mid && b < e) {',
    `    const jx_index last = ${source}${at('mid - 1')}, first = ${source}${at('mid')};`,
    ...keyLess(k, keys, types, 'first', 'last', 'inverted').map((l) => `    ${l}`),
    '    if (!inverted) a = mid, b = e, t = e;',
    `    if (!inverted && post == 1) memcpy(${dest} + row + p, ${source} + row + p, (size_t)(e - p) * sizeof(int32_t));`,
    `    else if (!inverted) for (jx_index q = p; q < e; q++) ${dest}${at('q')} = ${source}${at('q')};`,
    '  }',
    '  if (a < mid && b < e) {',
    `    jx_index qa = ${source}${at('a')}, qb = ${source}${at('b')};`,
    '    for (;;) {',
    ...keyLess(k, keys, types, 'qb', 'qa', 'lt').map((l) => `      ${l}`),
    '      if (lt) {',
    `        ${dest}${at('t++')} = (int32_t)qb;`,
    '        if (++b == e) break;',
    `        qb = ${source}${at('b')};`,
    '      } else {',
    `        ${dest}${at('t++')} = (int32_t)qa;`,
    '        if (++a == mid) break;',
    `        qa = ${source}${at('a')};`,
    '      }',
    '    }',
    '  }',
    `  while (a < mid) ${dest}${at('t++')} = ${source}${at('a++')};`,
    `  while (b < e) ${dest}${at('t++')} = ${source}${at('b++')};`,
    '}',
  ];
}

export function sortSpec(k: SortKernel, types: DialectTypes, dialect: Dialect): IndexedSpec {
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
    case 'order':
      if (dialect.target !== 'c') throw new Error(`render/sort: the 'order' stage is the CPU's (lower.ts lowers sorts for a GPU to rank and merge stages)`);
      return cpuOrder(k, keys, types, params, inputs);
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
