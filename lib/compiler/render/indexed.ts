// The data-movement kernels written once for both targets (issue 14): pad,
// dynamic_slice, dynamic_update_slice, gather and cumulative scans. Each is a
// spec: its run-time params in kernel-ir.ts's order, its buffers, setup
// statements and one or more loops over elements whose bodies are plain C
// over those names: `jx_index` integers, the params as scalars and arrays
// (`out_shape[d]`), loops over axes marked `JX_UNROLL`. A target supplies only
// how params arrive and how elements map to threads: the C backend reads the
// params at run time (one compiled kernel serves every shape) and loops with
// OpenMP; CUDA bakes them in as constants (the loops over axes unroll into
// straight-line code) and loops grid-stride. Concatenate (a memcpy per row on
// the CPU, one thread per element on the GPU) and scatter (sequential on the
// CPU, a multi-block ordered strategy on the GPU) stay target-specific.
import { type DType, isFloating } from '../../core/dtype.js';
import type { CumulativeKernel, DynamicSliceKernel, DynamicUpdateSliceKernel, GatherKernel, PadKernel } from '../kernel-ir.js';
import type { DialectTypes } from './expr.js';

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
   * The CPU may run this loop as one memcpy(dst, src, count elements) instead: the body then only leaves out
   * elements a later loop writes, which matters where loops run concurrently (the GPU's one kernel).
   */
  memcpy?: { dst: string; src: string };
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
}

export type IndexedKernel = PadKernel | DynamicSliceKernel | DynamicUpdateSliceKernel | GatherKernel | CumulativeKernel;

export function isIndexedKernel(k: { kind: string }): k is IndexedKernel {
  return k.kind === 'pad' || k.kind === 'dynamic_slice' || k.kind === 'dynamic_update_slice' || k.kind === 'gather' || k.kind === 'cumulative';
}

export function indexedSpec(k: IndexedKernel, types: DialectTypes): IndexedSpec {
  switch (k.kind) {
    case 'pad': return pad(k, types);
    case 'dynamic_slice': return dynamicSlice(k, types);
    case 'dynamic_update_slice': return dynamicUpdateSlice(k, types);
    case 'gather': return gather(k, types);
    case 'cumulative': return cumulative(k, types);
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

/** The identity of a running max/min: the lowest/highest value of the dtype. */
const INT_BOUNDS: Partial<Record<DType, [number, number]>> = {
  int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647], uint8: [0, 255], uint16: [0, 65535], uint32: [0, 4294967295], bool: [0, 1],
};

function cumulative(k: CumulativeKernel, types: DialectTypes): IndexedSpec {
  const d = k.dtype;
  const floating = isFloating(d);
  // floats accumulate in double, integers sum and multiply in 64 wrapping bits: as the reference interpreter rounds
  const acc = floating ? 'double' : k.op === 'sum' || k.op === 'prod' ? 'jx_u64' : types.computeType(d);
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
        `  const ${floating ? 'double' : types.computeType(d)} x = ${types.loadValue(d, 'in[idx]')};`,
        `  ${combine}`,
        `  out[idx] = ${types.storeValue(d, `(${types.computeType(d)})acc`)};`,
        '}',
      ],
    }],
  };
}
