// The data-movement kernels written once for both targets (issue 14): pad,
// concatenate, dynamic_slice, dynamic_update_slice, gather, scatter and
// cumulative scans. Each is a spec: its run-time params in kernel-ir.ts's
// order, its buffers, setup statements and one or more loops over elements
// whose bodies are plain C over those names: `jx_index` integers, the params
// as scalars and arrays (`out_shape[d]`), loops over axes marked `JX_UNROLL`.
// A target supplies only how params arrive and how elements map to threads:
// the C backend reads the params at run time (one compiled kernel serves
// every shape), loops with OpenMP and copies with memcpy where a spec allows;
// CUDA bakes them in as constants (the loops over axes unroll into
// straight-line code) and loops grid-stride. A loop that rereads what the
// loops before it wrote (scatter's updates over its copied operand) runs
// after them: in turn on the CPU, in the last block to finish them on the GPU.
import { type DType, isFloating } from '../../core/dtype.js';
import { cumulativePartialDtype } from '../kernel-ir.js';
import type {
  ConcatenateKernel, CumulativeKernel, DynamicSliceKernel, DynamicUpdateSliceKernel, GatherKernel, PadKernel, ScatterKernel,
  OrthogonalKernel, SortKernel,
} from '../kernel-ir.js';
import { type Dialect, type DialectTypes, dialectTypes } from './expr.js';
import { sortSpec } from './sort.js';
import { linalgSpec } from './linalg-eig.js';

/** A run-time param: a scalar, or an array whose length is a scalar param named earlier. */
export interface IndexedParam {
  name: string;
  length?: string;
}

export interface IndexedBuffer {
  name: string;
  dtype: DType;
  output: boolean;
  /** false when it may alias another buffer (an in-place update) */
  restrict?: boolean;
}

export interface IndexedLoop {
  /** The element count: the product of these params (all elements of an array, the value of a scalar). */
  count: readonly string[];
  /** Statements per element `i` (a `jx_index`); `continue` skips to the next element. */
  body: readonly string[];
  /** Runs only when this holds (an expression over buffers and params). */
  when?: string;
  /**
   * The CPU may run this loop as memcpy from buffer `src` to buffer `dst` instead: one copy of all count elements,
   * or with `rows`, `rows.count` copies of count / rows.count elements, copy `row` to `dst + rows.dst` from
   * `src + rows.src` (expressions of `row`). The body then only leaves out elements a later loop writes, which
   * matters where loops run concurrently (the GPU's one kernel).
   */
  memcpy?: { dst: string; src: string; rows?: { count: string; dst: string; src: string } };
  /**
   * The buffer this loop reads back as the loops before it wrote it: it runs once they are done (the GPU's last
   * block to finish them runs it alone, reading the buffer past the L1 cache). Every later loop rereads it too.
   */
  rereads?: string;
  /** C's OpenMP threshold counts this much work per element (default 1). */
  workPerElement?: string;
}

export interface IndexedSpec {
  /** The strategy in a few words, for the kernel's header. */
  label: string;
  params: readonly IndexedParam[];
  buffers: readonly IndexedBuffer[];
  /** Statements before the loops (after the params and buffers are declared). */
  setup: readonly string[];
  loops: readonly IndexedLoop[];
  /**
   * Every index the kernel computes stays below the product of one of these lists of params (the GPU picks 32-bit
   * arithmetic from it); without it, the bound multiplies each loop's count by every scalar param.
   */
  reach?: readonly (readonly string[])[];
}

export type IndexedKernel =
  | PadKernel | ConcatenateKernel | DynamicSliceKernel | DynamicUpdateSliceKernel | GatherKernel | ScatterKernel | CumulativeKernel | SortKernel | OrthogonalKernel;

export function indexedSpec(k: IndexedKernel, dialect: Dialect): IndexedSpec {
  const types = dialectTypes(dialect);
  switch (k.kind) {
    case 'pad': return pad(k, types);
    case 'concatenate': return concatenate(k);
    case 'dynamic_slice': return dynamicSlice(k, types);
    case 'dynamic_update_slice': return dynamicUpdateSlice(k, types);
    case 'gather': return gather(k, types);
    case 'scatter': return scatter(k, dialect, types);
    case 'cumulative': return cumulative(k, types);
    case 'sort': return sortSpec(k, types, dialect);
    case 'orthogonal': return linalgSpec(k, dialect);
  }
}

function pad(k: PadKernel, types: DialectTypes): IndexedSpec {
  return {
    label: 'pad, one element per output',
    params: [{ name: 'rank' }, { name: 'out_shape', length: 'rank' }, { name: 'in_shape', length: 'rank' }, { name: 'lo', length: 'rank' }, { name: 'interior', length: 'rank' }],
    buffers: [{ name: 'out', dtype: k.dtype, output: true }, { name: 'in', dtype: k.dtype, output: false }, { name: 'pad_value', dtype: k.dtype, output: false }],
    setup: [`const ${types.storageType(k.dtype)} value = pad_value[0];`],
    loops: [{
      count: ['out_shape'],
      body: [
        'jx_index rest = i, src = 0, scale = 1;',
        'int inside = 1;',
        'JX_UNROLL',
        'for (int d = (int)rank - 1; d >= 0; d--) {',
        '  const jx_index c = rest % out_shape[d]; rest /= out_shape[d];',
        '  const jx_index t = c - lo[d], step = interior[d] + 1;',
        '  if (t < 0 || t % step != 0 || t / step >= in_shape[d]) { inside = 0; break; }',
        '  src += (t / step) * scale; scale *= in_shape[d];',
        '}',
        'out[i] = inside ? in[src] : value;',
      ],
    }],
  };
}

function concatenate(k: ConcatenateKernel): IndexedSpec {
  const inputs = [...Array(k.count).keys()];
  return {
    label: `concatenate of ${k.count}, one element per input element`,
    params: [{ name: 'outer' }, { name: 'total' }, { name: 'inner' }, ...inputs.map((c) => ({ name: `size${c}` }))],
    buffers: [{ name: 'out', dtype: k.dtype, output: true }, ...inputs.map((c) => ({ name: `in${c}`, dtype: k.dtype, output: false }))],
    setup: [],
    // one loop per input over its rows (of outer) of size * inner elements, each row a run of the output's row
    loops: inputs.map((c) => {
      const start = c === 0 ? '0' : `(${inputs.slice(0, c).map((b) => `size${b}`).join(' + ')})`;
      return {
        count: ['outer', `size${c}`, 'inner'],
        memcpy: { dst: 'out', src: `in${c}`, rows: { count: 'outer', dst: `(row * total + ${start}) * inner`, src: `row * size${c} * inner` } },
        body: [
          `const jx_index run = size${c} * inner, row = i / run, j = i % run;`,
          `out[(row * total + ${start}) * inner + j] = in${c}[i];`,
        ],
      };
    }),
    reach: [['outer', 'total', 'inner']],
  };
}

/** Reads the start indices into start[], each clamped like XLA into [0, shape - size] (the upper bound first), in 64 bits. */
function clampedStarts(indexDtypes: readonly DType[]): string[] {
  return [
    `jx_index start[${Math.max(indexDtypes.length, 1)}];`,
    ...indexDtypes.map((_, d) => `{ jx_i64 s = (jx_i64)index${d}[0]; const jx_i64 hi = (jx_i64)shape[${d}] - (jx_i64)size[${d}]; if (s > hi) s = hi; if (s < 0) s = 0; start[${d}] = (jx_index)s; }`),
  ];
}

const indexBuffers = (dtypes: readonly DType[]): IndexedBuffer[] => dtypes.map((d, i) => ({ name: `index${i}`, dtype: d, output: false }));

function dynamicSlice(k: DynamicSliceKernel, _types: DialectTypes): IndexedSpec {
  return {
    label: 'dynamic_slice, one element per output',
    params: [{ name: 'rank' }, { name: 'shape', length: 'rank' }, { name: 'size', length: 'rank' }],
    buffers: [{ name: 'out', dtype: k.dtype, output: true }, { name: 'in', dtype: k.dtype, output: false }, ...indexBuffers(k.indexDtypes)],
    setup: clampedStarts(k.indexDtypes),
    loops: [{
      count: ['size'],
      body: [
        'jx_index rest = i, src = 0, scale = 1;',
        'JX_UNROLL',
        'for (int d = (int)rank - 1; d >= 0; d--) {',
        '  const jx_index c = rest % size[d]; rest /= size[d];',
        '  src += (c + start[d]) * scale; scale *= shape[d];',
        '}',
        'out[i] = in[src];',
      ],
    }],
  };
}

function dynamicUpdateSlice(k: DynamicUpdateSliceKernel, _types: DialectTypes): IndexedSpec {
  return {
    label: 'dynamic_update_slice, copy outside the window (unless in place), then write the window',
    params: [{ name: 'rank' }, { name: 'shape', length: 'rank' }, { name: 'size', length: 'rank' }],
    buffers: [
      { name: 'out', dtype: k.dtype, output: true, restrict: false },
      { name: 'in', dtype: k.dtype, output: false, restrict: false },
      { name: 'update', dtype: k.dtype, output: false },
      ...indexBuffers(k.indexDtypes),
    ],
    setup: clampedStarts(k.indexDtypes),
    loops: [
      {
        // the copy leaves the window to the second loop, so the two never write one element twice
        count: ['shape'],
        when: 'out != in',
        memcpy: { dst: 'out', src: 'in' },
        body: [
          'jx_index rest = i;',
          'int window = 1;',
          'JX_UNROLL',
          'for (int d = (int)rank - 1; d >= 0; d--) {',
          '  const jx_index c = rest % shape[d]; rest /= shape[d];',
          '  window = window && c >= start[d] && c < start[d] + size[d];',
          '}',
          'if (!window) out[i] = in[i];',
        ],
      },
      {
        count: ['size'],
        body: [
          'jx_index rest = i, dst = 0, scale = 1;',
          'JX_UNROLL',
          'for (int d = (int)rank - 1; d >= 0; d--) {',
          '  const jx_index c = rest % size[d]; rest /= size[d];',
          '  dst += (c + start[d]) * scale; scale *= shape[d];',
          '}',
          'out[dst] = update[i];',
        ],
      },
    ],
  };
}

function gather(k: GatherKernel, types: DialectTypes): IndexedSpec {
  const fill = types.storeValue(k.dtype, types.literal(k.fillValue, k.dtype === 'bfloat16' || k.dtype === 'float16' ? 'float32' : k.dtype));
  return {
    label: `gather (${k.mode}), one element per output`,
    params: [
      { name: 'op_rank' }, { name: 'out_rank' }, { name: 'batch_rank' }, { name: 'vec' },
      { name: 'op_shape', length: 'op_rank' }, { name: 'slice', length: 'op_rank' }, { name: 'out_shape', length: 'out_rank' },
      { name: 'out_to_operand', length: 'out_rank' }, { name: 'out_to_batch', length: 'out_rank' }, { name: 'start_map', length: 'vec' },
    ],
    buffers: [{ name: 'out', dtype: k.dtype, output: true }, { name: 'operand', dtype: k.dtype, output: false }, { name: 'indices', dtype: k.indexDtype, output: false }],
    setup: [
      'jx_index batch_shape[JX_MAX_RANK];',
      'JX_UNROLL',
      'for (int d = 0; d < (int)out_rank; d++) if (out_to_batch[d] >= 0) batch_shape[out_to_batch[d]] = out_shape[d];',
    ],
    loops: [{
      count: ['out_shape'],
      body: [
        'jx_index coord[JX_MAX_RANK], batch[JX_MAX_RANK], start[JX_MAX_RANK], offset[JX_MAX_RANK], rest = i;',
        'JX_UNROLL',
        'for (int d = (int)out_rank - 1; d >= 0; d--) { coord[d] = rest % out_shape[d]; rest /= out_shape[d]; }',
        'JX_UNROLL',
        'for (int d = 0; d < (int)op_rank; d++) { start[d] = 0; offset[d] = 0; }',
        'JX_UNROLL',
        'for (int d = 0; d < (int)out_rank; d++) {',
        '  if (out_to_batch[d] >= 0) batch[out_to_batch[d]] = coord[d];',
        '  else offset[out_to_operand[d]] = coord[d];',
        '}',
        'jx_index row = 0;',
        'JX_UNROLL',
        'for (int d = 0; d < (int)batch_rank; d++) row = row * batch_shape[d] + batch[d];',
        'int inside = 1;',
        'JX_UNROLL',
        'for (int v = 0; v < (int)vec; v++) {',
        '  const jx_index axis = start_map[v];',
        '  const jx_i64 hi = (jx_i64)op_shape[axis] - (jx_i64)slice[axis];',
        '  jx_i64 s = (jx_i64)indices[row * vec + v];',
        '  if (s < 0 || s > hi) { inside = 0; s = s < 0 ? 0 : hi; }',
        '  start[axis] = (jx_index)s;',
        '}',
        k.mode === 'fill' ? `if (!inside) { out[i] = ${fill}; continue; }` : '(void)inside;',
        'jx_index src = 0;',
        'JX_UNROLL',
        'for (int d = 0; d < (int)op_rank; d++) src = src * op_shape[d] + start[d] + offset[d];',
        'out[i] = operand[src];',
      ],
    }],
  };
}

/** The statement combining updates[u] into out[dst]: integers wrap, floats round like the elementwise ops (max/min propagate NaN). */
function scatterWrite(k: ScatterKernel, dialect: Dialect, types: DialectTypes): string {
  if (k.combine === 'replace') return 'out[dst] = updates[u];';
  const c = types.computeType(k.dtype);
  if (isFloating(k.dtype)) {
    const [old, up] = [types.loadValue(k.dtype, 'out[dst]'), types.loadValue(k.dtype, 'updates[u]')];
    const double = k.dtype === 'float64';
    const s = double ? 'd' : 'f';
    const value = k.combine === 'add' || k.combine === 'mul' ? dialect.arith(k.combine, double, old, up) : `jx_${k.combine}${s}(${old}, ${up})`;
    return `out[dst] = ${types.storeValue(k.dtype, `(${c})(${value})`)};`;
  }
  // bool: add is or and mul is and (a sum of 1 + 1 must not store 2)
  if (k.dtype === 'bool') return `out[dst] = (${types.storageType('bool')})(out[dst] ${k.combine === 'add' || k.combine === 'max' ? '|' : '&'} updates[u]);`;
  switch (k.combine) {
    case 'add': return `out[dst] = (${c})((jx_u64)out[dst] + (jx_u64)updates[u]);`;
    case 'mul': return `out[dst] = (${c})((jx_u64)out[dst] * (jx_u64)updates[u]);`;
    case 'max': return `{ const ${c} x = updates[u]; if (x > out[dst]) out[dst] = x; }`;
    case 'min': return `{ const ${c} x = updates[u]; if (x < out[dst]) out[dst] = x; }`;
  }
}

/**
 * XLA scatter: copy the operand (unless in place), then apply the updates in XLA's sequential order, so repeated
 * indices resolve as on one thread (last write wins, floats combine in update order). When every scattered axis has
 * window size 1, windows of different updates can only meet at the same window element: then each window element
 * takes its updates in batch order, the window elements in parallel; otherwise one thread goes in update order.
 */
function scatter(k: ScatterKernel, dialect: Dialect, types: DialectTypes): IndexedSpec {
  // update u (batch row `row`, window offsets offset[]) into out, indices out of bounds dropped (fill) or clipped
  const apply = [
    'jx_index start[JX_MAX_RANK];',
    'JX_UNROLL',
    'for (int d = 0; d < (int)op_rank; d++) start[d] = 0;',
    'int inside = 1;',
    'JX_UNROLL',
    'for (int v = 0; v < (int)vec; v++) {',
    '  const jx_index axis = dims_to_operand[v];',
    '  const jx_i64 hi = (jx_i64)op_shape[axis] - (jx_i64)window[axis];',
    '  jx_i64 s = (jx_i64)indices[row * vec + v];',
    '  if (s < 0 || s > hi) { inside = 0; s = s < 0 ? 0 : hi; }',
    '  start[axis] = (jx_index)s;',
    '}',
    k.mode === 'fill' ? 'if (!inside) continue;' : '(void)inside;',
    'jx_index dst = 0;',
    'JX_UNROLL',
    'for (int d = 0; d < (int)op_rank; d++) dst = dst * op_shape[d] + start[d] + offset[d];',
    scatterWrite(k, dialect, types),
  ];
  return {
    label: `scatter ${k.combine} (${k.mode})`,
    params: [
      { name: 'op_rank' }, { name: 'up_rank' }, { name: 'vec' }, { name: 'n_operand' }, { name: 'n_update' },
      { name: 'op_shape', length: 'op_rank' }, { name: 'up_shape', length: 'up_rank' },
      { name: 'up_to_operand', length: 'up_rank' }, { name: 'up_to_batch', length: 'up_rank' },
      { name: 'dims_to_operand', length: 'vec' }, { name: 'window', length: 'op_rank' },
    ],
    buffers: [
      { name: 'out', dtype: k.dtype, output: true, restrict: false },
      { name: 'in', dtype: k.dtype, output: false, restrict: false },
      { name: 'indices', dtype: k.indexDtype, output: false },
      { name: 'updates', dtype: k.dtype, output: false },
    ],
    setup: [
      'jx_index batch_shape[JX_MAX_RANK];',
      'int batch_rank = 0;',
      'JX_UNROLL',
      'for (int d = 0; d < (int)up_rank; d++) if (up_to_batch[d] >= 0) { batch_shape[up_to_batch[d]] = up_shape[d]; batch_rank++; }',
      'jx_index n_window = 1;',
      'JX_UNROLL',
      'for (int d = 0; d < (int)op_rank; d++) n_window *= window[d];',
      'const jx_index n_batch = n_window ? n_update / n_window : 0;',
      'int independent = 1;',
      'JX_UNROLL',
      'for (int v = 0; v < (int)vec; v++) if (window[dims_to_operand[v]] != 1) independent = 0;',
    ],
    loops: [
      { count: ['n_operand'], when: 'out != in', memcpy: { dst: 'out', src: 'in' }, body: ['out[i] = in[i];'] },
      {
        // window element i (its offsets from the window sizes), its updates in batch order
        count: ['window'],
        when: 'independent',
        rereads: 'out',
        workPerElement: 'n_batch',
        body: [
          'jx_index offset[JX_MAX_RANK], rest = i;',
          'JX_UNROLL',
          'for (int d = (int)op_rank - 1; d >= 0; d--) { offset[d] = rest % window[d]; rest /= window[d]; }',
          'for (jx_index row = 0; row < n_batch; row++) {',
          '  jx_index batch[JX_MAX_RANK], u = 0;',
          '  rest = row;',
          '  JX_UNROLL',
          '  for (int d = batch_rank - 1; d >= 0; d--) { batch[d] = rest % batch_shape[d]; rest /= batch_shape[d]; }',
          '  JX_UNROLL',
          '  for (int d = 0; d < (int)up_rank; d++) u = u * up_shape[d] + (up_to_batch[d] >= 0 ? batch[up_to_batch[d]] : offset[up_to_operand[d]]);',
          ...apply.map((l) => `  ${l}`),
          '}',
        ],
      },
      {
        // one element: every update in order
        count: [],
        when: '!independent',
        rereads: 'out',
        body: [
          'for (jx_index u = 0; u < n_update; u++) {',
          '  jx_index offset[JX_MAX_RANK], batch[JX_MAX_RANK], row = 0, rest = u;',
          '  JX_UNROLL',
          '  for (int d = 0; d < (int)op_rank; d++) offset[d] = 0;',
          '  JX_UNROLL',
          '  for (int d = (int)up_rank - 1; d >= 0; d--) {',
          '    const jx_index c = rest % up_shape[d]; rest /= up_shape[d];',
          '    if (up_to_batch[d] >= 0) batch[up_to_batch[d]] = c; else offset[up_to_operand[d]] = c;',
          '  }',
          '  JX_UNROLL',
          '  for (int d = 0; d < batch_rank; d++) row = row * batch_shape[d] + batch[d];',
          ...apply.map((l) => `  ${l}`),
          '}',
        ],
      },
    ],
    reach: [['n_operand'], ['n_update', 'vec']],
  };
}

/** The identity of a running max/min: the lowest/highest value of the dtype. */
const INT_BOUNDS: Partial<Record<DType, [number, number]>> = {
  int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647], uint8: [0, 255], uint16: [0, 65535], uint32: [0, 4294967295], bool: [0, 1],
};

function cumulative(k: CumulativeKernel, types: DialectTypes): IndexedSpec {
  const d = k.dtype;
  const floating = isFloating(d);
  // floats accumulate in double, integers sum and multiply in 64 wrapping bits: as the reference interpreter rounds
  const acc = floating ? 'double' : k.op === 'sum' || k.op === 'prod' ? 'jx_u64' : types.computeType(d);
  const value = floating ? 'double' : types.computeType(d);
  let init: string;
  let combine: string;
  switch (k.op) {
    case 'sum': init = '0'; combine = `acc += (${acc})x;`; break;
    case 'prod': init = '1'; combine = `acc *= (${acc})x;`; break;
    case 'max':
    case 'min': {
      const cmp = k.op === 'max' ? '>' : '<';
      const [lo, hi] = INT_BOUNDS[d] ?? [0, 0];
      init = floating ? types.literal(k.op === 'max' ? -Infinity : Infinity, 'float64') : types.literal(k.op === 'max' ? lo : hi, d);
      combine = floating ? `if (acc == acc && (x != x || x ${cmp} acc)) acc = x;` : `if (x ${cmp} acc) acc = x;`;
      break;
    }
  }
  const store = types.storeValue(d, `(${types.computeType(d)})acc`);
  if (!k.stage) {
    return {
      label: `cumulative ${k.op}, one thread per line`,
      params: [{ name: 'pre' }, { name: 'n' }, { name: 'post' }, { name: 'reverse' }],
      buffers: [{ name: 'out', dtype: d, output: true }, { name: 'in', dtype: d, output: false }],
      setup: [],
      loops: [{
        // consecutive lines take consecutive `post` positions, so GPU loads coalesce when post > 1
        count: ['pre', 'post'],
        workPerElement: 'n',
        body: [
          'const jx_index a = i / post, c = i % post;',
          `${acc} acc = ${init};`,
          'for (jx_index step = 0; step < n; step++) {',
          '  const jx_index b = reverse ? n - 1 - step : step;',
          '  const jx_index idx = (a * n + b) * post + c;',
          `  const ${value} x = ${types.loadValue(d, 'in[idx]')};`,
          `  ${combine}`,
          `  out[idx] = ${store};`,
          '}',
        ],
      }],
    };
  }
  // reduce-then-scan over chunks of `chunk` elements (in scan order): partial[(a * nchunks + j) * post + c]
  const pd = cumulativePartialDtype(d);
  const partialValue = floating ? 'double' : types.computeType(d);
  const params = [{ name: 'pre' }, { name: 'n' }, { name: 'post' }, { name: 'reverse' }, { name: 'chunk' }, { name: 'nchunks' }];
  const chunkLoop = (write: boolean): string[] => [
    'const jx_index a = i / (nchunks * post), j = i / post % nchunks, c = i % post;',
    `${acc} acc = ${write ? `(${acc})${types.loadValue(pd, 'partial[i]')}` : init};`,
    'const jx_index end = (j + 1) * chunk < n ? (j + 1) * chunk : n;',
    'for (jx_index step = j * chunk; step < end; step++) {',
    '  const jx_index b = reverse ? n - 1 - step : step;',
    '  const jx_index idx = (a * n + b) * post + c;',
    `  const ${value} x = ${types.loadValue(d, 'in[idx]')};`,
    `  ${combine}`,
    ...(write ? [`  out[idx] = ${store};`] : []),
    '}',
    ...(write ? [] : [`partial[i] = ${types.storeValue(pd, `(${partialValue})acc`)};`]),
  ];
  switch (k.stage) {
    case 'chunk_reduce':
      return {
        label: `cumulative ${k.op}, chunk totals, one thread per chunk`,
        params,
        buffers: [{ name: 'partial', dtype: pd, output: true }, { name: 'in', dtype: d, output: false }],
        setup: [],
        loops: [{ count: ['pre', 'nchunks', 'post'], workPerElement: 'chunk', body: chunkLoop(false) }],
        reach: [['pre', 'n', 'post']],
      };
    case 'carry_scan':
      return {
        label: `cumulative ${k.op}, exclusive scan of the chunk totals, one thread per line`,
        params,
        buffers: [{ name: 'partial', dtype: pd, output: true, restrict: false }],
        setup: [],
        loops: [{
          count: ['pre', 'post'],
          workPerElement: 'nchunks',
          body: [
            'const jx_index a = i / post, c = i % post;',
            `${acc} acc = ${init};`,
            'for (jx_index j = 0; j < nchunks; j++) {',
            '  const jx_index idx = (a * nchunks + j) * post + c;',
            `  const ${partialValue} x = ${types.loadValue(pd, 'partial[idx]')};`,
            `  partial[idx] = ${types.storeValue(pd, `(${partialValue})acc`)};`,
            `  ${combine}`,
            '}',
          ],
        }],
        reach: [['pre', 'nchunks', 'post']],
      };
    case 'chunk_scan':
      return {
        label: `cumulative ${k.op}, each chunk scanned from its carry, one thread per chunk`,
        params,
        buffers: [{ name: 'out', dtype: d, output: true }, { name: 'partial', dtype: pd, output: false }, { name: 'in', dtype: d, output: false }],
        setup: [],
        loops: [{ count: ['pre', 'nchunks', 'post'], workPerElement: 'chunk', body: chunkLoop(true) }],
        reach: [['pre', 'n', 'post']],
      };
  }
}
