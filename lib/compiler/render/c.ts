// The C renderer: kernel IR → one C translation unit per kernel with the
// uniform ABI `void NAME(void **buffers, const int64_t *params)`. Loops over
// more than JX_PARALLEL_THRESHOLD elements run under OpenMP. Parameter layouts
// are documented on each kernel type in ../kernel-ir.ts.
import { type DType, isFloating, isUnsigned } from '../../core/dtype.js';
import { primitivesWith } from '../../core/traits.js';
import { kernelJson, kernelName, mayBeWrittenInPlace, resultOnlyNodes } from '../kernel-ir.js';
import type { DotKernel, ElementwiseKernel, Expr, FusedReduce, Kernel, ReduceKernel, ReduceOp } from '../kernel-ir.js';
import { C_DIALECT, C_TYPES, ExprRenderer, exprsUseIota, someNode } from './expr.js';
import { type IndexedKernel, indexedSpec } from './indexed.js';
import { convC } from './conv.js';
import { jacobiC, linalgC } from './linalg-targets.js';
import { qrBlockedC } from './linalg-qr-blocked.js';
import { type ReductionState, reductionState } from './reduce-state.js';

const { computeType, loadValue, storageType, storeValue } = C_TYPES;

export function renderC(kernel: Kernel, name: string): string {
  const body = renderBody(kernel, name);
  return `// jaxon kernel ${name}: ${kernelJson(kernel)}\n#include "jaxon_c.h"\n\n${body}\n`;
}

function renderBody(k: Kernel, name: string): string {
  switch (k.kind) {
    case 'elementwise': return elementwise(k, name);
    case 'reduce': return reduce(k, name);
    case 'cumulative': return indexed(k, name);
    case 'dot': return dot(k, name);
    case 'pad': return indexed(k, name);
    case 'concatenate': return indexed(k, name);
    case 'dynamic_slice': return indexed(k, name);
    case 'dynamic_update_slice': return indexed(k, name);
    case 'gather': return indexed(k, name);
    case 'scatter': return indexed(k, name);
    case 'sort': return indexed(k, name);
    case 'orthogonal': if (k.cudaStage) throw new Error(`render/c: ${name} is a stage of the CUDA blocked qr (lower-qr.ts lowers it for 'cuda' only)`);
      return k.op !== 'qr' ? jacobiC(k, name) : k.cpuBlocked ? qrBlockedC(k, name, indexed(k, `${name}_unblocked`)) : indexed(k, name);
    case 'linalg': return linalgC(k, name);
    case 'conv': return convC(k, name);
  }
}

const indent = (lines: string[], n: number) => lines.flatMap((l) => l.split('\n')).map((l) => ' '.repeat(n) + l).join('\n');

/**
 * A kernel whose work is one OpenMP region: the region's body is the static function NAME_part (its signature
 * `extra.params` after buffers and params), run by every thread inside `#pragma omp parallel` when `parallel` holds and
 * called once, directly, otherwise. Its worksharing loops are orphaned (`#pragma omp for`), which run the whole
 * loop on the calling thread outside a region, and omp_get_num_threads() is 1 there. Small work never enters
 * libgomp: a region whose `if` clause is false still costs it a team of one, 0.3-1.1 µs a call on this 2-core
 * machine (issue 16's per-op budget is 2-3 µs). `head` declares what `parallel` reads; `extra.tail` runs after the part.
 */
function regionKernel(
  name: string,
  head: string[],
  parallel: string,
  part: string[],
  extra: { params: string; args: string; tail?: string[] } = { params: '', args: '' },
): string {
  const call = `${name}_part(buffers, params${extra.args});`;
  return `static __attribute__((noinline)) void ${name}_part(void **buffers, const int64_t *params${extra.params}) {
${indent(part, 2)}
}

void ${name}(void **buffers, const int64_t *params) {
${indent(head, 2)}
  if (${parallel}) {
    #pragma omp parallel
    ${call}
  } else {
    ${call}
  }${extra.tail ? `\n${indent(extra.tail, 2)}` : ''}
}`;
}

function elementwise(k: ElementwiseKernel, name: string): string {
  const strided = k.inputs.map((inp, i) => (inp.access === 'strided' ? i : -1)).filter((i) => i >= 0);
  const needsCoords = strided.length > 0 || exprsUseIota(k.outputs.map((o) => o.expr));
  const nOut = k.outputs.length;
  const decls: string[] = [
    'const int64_t n = params[0];',
    'const int rank = (int)params[1];',
    'const int64_t *shape = params + 2;',
  ];
  // plan.ts may write an output over a contiguous (or one-element) input: those and the outputs may alias, no restrict
  k.outputs.forEach((o, j) => decls.push(`${storageType(o.dtype)} *out${j} = (${storageType(o.dtype)} *)buffers[${j}];`));
  k.inputs.forEach((inp, i) => decls.push(`const ${storageType(inp.dtype)} *${mayBeWrittenInPlace(inp.access) ? '' : 'restrict '}in${i} = (const ${storageType(inp.dtype)} *)buffers[${nOut + i}];`));
  strided.forEach((i, s) => {
    decls.push(`const int64_t offset${i} = params[2 + rank + ${s} * (rank + 1)];`);
    decls.push(`const int64_t *stride${i} = params + 3 + rank + ${s} * (rank + 1);`);
  });
  const renderer = new ExprRenderer(C_DIALECT, 
    (i) => {
      const inp = k.inputs[i]!;
      const ref = inp.access === 'contiguous' ? `in${i}[i]` : inp.access === 'scalar' ? `in${i}[0]` : `in${i}[off${i}]`;
      return loadValue(inp.dtype, ref);
    },
    (axis) => `coord[${axis}]`,
  );
  const results = k.outputs.map((o) => renderer.render(o.expr));
  const stores = k.outputs.map((o, j) => `out${j}[i] = ${storeValue(o.dtype, results[j]!)};`);
  const body = [...renderer.lines, ...stores];
  const head = ['const int64_t n = params[0];'];
  const parallel = 'n > JX_PARALLEL_THRESHOLD';
  const exprs = k.outputs.map((o) => o.expr);
  const trig = usesTrigonometry(exprs);
  if (!needsCoords && (trig || mathCalls(exprs) >= INTERLEAVE_MIN_CALLS)) {
    // Blocks of ELEMENTWISE_BLOCK; a trigonometric kernel stages each block's results, computes them with the
    // fast reductions, and again with the full ones only when an argument was huge (jaxon_math.h). A full block
    // of a kernel with several math calls runs as INTERLEAVE independent strips, one statement of each in turn.
    const target = (j: number, at: string) => (trig ? `staged${j}[${at} - i0]` : `out${j}[${at}]`);
    const plain = [...renderer.lines, ...k.outputs.map((o, j) => `${target(j, 'i')} = ${storeValue(o.dtype, results[j]!)};`)];
    const strip = ELEMENTWISE_BLOCK / INTERLEAVE;
    const copies = Array.from({ length: INTERLEAVE }, (_, u) => {
      const at = u === 0 ? 'i' : `i + ${u * strip}`;
      const r = new ExprRenderer(C_DIALECT,
        (i) => {
          const inp = k.inputs[i]!;
          return loadValue(inp.dtype, inp.access === 'scalar' ? `in${i}[0]` : `in${i}[${at}]`);
        },
        (axis) => `coord[${axis}]`,
        `s${u}v`,
      );
      const out = k.outputs.map((o) => r.render(o.expr));
      return [...r.lines, ...k.outputs.map((o, j) => `${target(j, at)} = ${storeValue(o.dtype, out[j]!)};`)];
    });
    const interleaved = copies[0]!.flatMap((_, line) => copies.map((c) => c[line]!));
    const reduction = trig ? ' reduction(| : jx_huge)' : '';
    const fastPass = [
      'if (i1 - i0 == ' + ELEMENTWISE_BLOCK + ') {',
      `  #pragma omp simd${reduction}`,
      `  for (int64_t i = i0; i < i0 + ${strip}; i++) {`,
      indent(interleaved, 4),
      '  }',
      '} else {',
      `  #pragma omp simd${reduction}`,
      '  for (int64_t i = i0; i < i1; i++) {',
      indent(plain, 4),
      '  }',
      '}',
    ];
    const trigPasses = [
      indent(k.outputs.map((o, j) => `${storageType(o.dtype)} staged${j}[${ELEMENTWISE_BLOCK}];`), 2),
      '  jx_u32 jx_huge = 0;',
      '#undef JX_TRIG',
      '#define JX_TRIG JX_TRIG_FAST',
      indent(fastPass, 2),
      '#undef JX_TRIG',
      '#define JX_TRIG JX_TRIG_FULL',
      '  if (jx_huge) {',
      '    #pragma omp simd',
      '    for (int64_t i = i0; i < i1; i++) {',
      indent(plain, 6),
      '    }',
      '  }',
      '  for (int64_t i = i0; i < i1; i++) {',
      indent(k.outputs.map((_, j) => `out${j}[i] = staged${j}[i - i0];`), 4),
      '  }',
    ];
    return regionKernel(name, head, parallel, [
      ...decls,
      '(void)rank; (void)shape;',
      '#pragma omp for schedule(static) nowait',
      `for (int64_t i0 = 0; i0 < n; i0 += ${ELEMENTWISE_BLOCK}) {`,
      `  const int64_t i1 = n - i0 < ${ELEMENTWISE_BLOCK} ? n : i0 + ${ELEMENTWISE_BLOCK};`,
      ...(trig ? trigPasses : [indent(fastPass, 2)]),
      '}',
    ]);
  }
  if (!needsCoords) {
    return regionKernel(name, head, parallel, [
      ...decls,
      '(void)rank; (void)shape;',
      '#pragma omp for simd schedule(static) nowait',
      'for (int64_t i = 0; i < n; i++) {',
      indent(body, 2),
      '}',
    ]);
  }
  const init = strided.map((i) => `int64_t off${i} = offset${i};`);
  const unravel = strided.map((i) => `off${i} += coord[d] * stride${i}[d];`);
  const step = strided.map((i) => `off${i} += stride${i}[d];`);
  const unstep = strided.map((i) => `off${i} -= stride${i}[d] * shape[d];`);
  return regionKernel(name, head, parallel, [
    ...decls,
    'if (n == 0) return;',
    'const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();',
    'const int64_t start = n * thread / threads, end = n * (thread + 1) / threads;',
    'int64_t coord[JX_MAX_RANK];',
    ...init,
    'int64_t rest = start;',
    'for (int d = rank - 1; d >= 0; d--) {',
    '  coord[d] = shape[d] ? rest % shape[d] : 0;',
    '  rest = shape[d] ? rest / shape[d] : 0;',
    indent(unravel, 2),
    '}',
    'for (int64_t i = start; i < end; i++) {',
    indent(body, 2),
    '  for (int d = rank - 1; d >= 0; d--) {',
    '    coord[d]++;',
    indent(step, 4),
    '    if (coord[d] < shape[d]) break;',
    indent(unstep, 4),
    '    coord[d] = 0;',
    '  }',
    '}',
  ]);
}

const REDUCE_DECLS = (input: DType, output: DType) => `const int64_t n_out = params[0], n_inner = params[1];
  const int outer_rank = (int)params[2];
  const int64_t *outer_shape = params + 3, *outer_stride = params + 3 + outer_rank;
  const int inner_rank = (int)params[3 + 2 * outer_rank];
  const int64_t *inner_shape = params + 4 + 2 * outer_rank, *inner_stride = params + 4 + 2 * outer_rank + inner_rank;
  ${storageType(output)} *restrict out = (${storageType(output)} *)buffers[0];
  const ${storageType(input)} *restrict in = (const ${storageType(input)} *)buffers[1];`;

/** C code that sets `base` to the input offset of output element `o`. */
const OUTER_BASE = `int64_t base = 0, rest_o = o;
    for (int d = outer_rank - 1; d >= 0; d--) { const int64_t c = rest_o % outer_shape[d]; rest_o /= outer_shape[d]; base += c * outer_stride[d]; }`;

/** C code looping j over [lo, hi) of the inner space with `off` the input offset; BODY uses in[off]. */
function innerLoop(body: string): string {
  return `if (inner_rank == 1) {
      const int64_t s = inner_stride[0];
      for (int64_t j = lo; j < hi; j++) { const int64_t off = base + j * s; ${body} }
    } else {
      int64_t coord[JX_MAX_RANK], off = base, rest = lo;
      for (int d = inner_rank - 1; d >= 0; d--) { coord[d] = rest % inner_shape[d]; rest /= inner_shape[d]; off += coord[d] * inner_stride[d]; }
      for (int64_t j = lo; j < hi; j++) {
        ${body}
        for (int d = inner_rank - 1; d >= 0; d--) {
          coord[d]++; off += inner_stride[d];
          if (coord[d] < inner_shape[d]) break;
          off -= inner_stride[d] * inner_shape[d]; coord[d] = 0;
        }
      }
    }`;
}

/** Consecutive inner elements per block of a float reduction (see `floatLanes`). */
const REDUCE_BLOCK = 256;
/** Float lanes per block: element j of a block goes to lane j mod LANES. */
const LANES = 16;
/** Outputs one thread reduces side by side when consecutive outputs are consecutive in memory (sums over a leading axis). */
const COLUMN_WIDTH = 64;

/**
 * The order in which a float32/16-bit sum, max or min reduces (issue 16), the same in every loop that computes one,
 * vectorized or not, so eager and jit results stay bit-identical: the inner elements [lo, hi) go in blocks of
 * REDUCE_BLOCK; element j of a block adds into float lane j mod LANES; a block's lanes combine pairwise (lane k with
 * k + 8, then + 4, + 2, + 1); the blocks fold in order into the double `acc` of the scalar state (reduce-state.ts),
 * as do threads' partials. A lane adds 16 values per block, about a NumPy pairwise leaf: longer float runs lose the
 * values below half an ulp of the running sum, always downwards (4096-element blocks of 16 lanes made a 50000-long
 * softmax denominator 3e-6 too small; these stay within an ulp of the float64 sum). max and min let NaN through
 * (`x != x ||`), so a NaN anywhere is the result. Null for other ops and dtypes: integers and float64 keep the
 * scalar loop, and prod keeps double (a float product over- and underflows where the double one does not).
 */
function floatLanes(op: ReduceOp, d: DType) {
  if (!(d === 'float32' || d === 'float16' || d === 'bfloat16') || !(op === 'sum' || op === 'max' || op === 'min')) return null;
  const cmp = op === 'max' ? '>' : '<';
  /** lane = lane (op) x, as a statement */
  const visit = (lane: string, x: string) =>
    op === 'sum' ? `${lane} += ${x};` : `{ const float x = ${x}; ${lane} = (x != x || x ${cmp} ${lane}) ? x : ${lane}; }`;
  const init = op === 'sum' ? '0.0f' : op === 'max' ? '-INFINITY' : 'INFINITY';
  const fold = (lane: (k: string) => string): string[] => [
    `for (int w = ${LANES / 2}; w > 0; w >>= 1) for (int k = 0; k < w; k++) ${visit(lane('k'), lane('k + w'))}`,
  ];
  const merge = (acc: string, x: string) =>
    op === 'sum' ? `${acc} += (double)${x};` : `{ const double x = ${x}; if (x != x || x ${cmp} ${acc}) ${acc} = (${acc} != ${acc}) ? ${acc} : x; }`;
  return { visit, init, fold, merge };
}

/** The reduction of [lo, hi) into `acc` over unit-stride indices, in floatLanes' order, vectorized across each 16 lanes. `body(j)` computes `value` at j. */
function contiguousLanes(op: ReduceOp, d: DType, body: (j: string) => string[], value: string): string[] | null {
  const rule = floatLanes(op, d);
  if (!rule) return null;
  return [
    `for (int64_t j0 = lo; j0 < hi; j0 += ${REDUCE_BLOCK}) {`,
    `  const int64_t j1 = hi - j0 > ${REDUCE_BLOCK} ? j0 + ${REDUCE_BLOCK} : hi;`,
    `  float lanes[${LANES}];`,
    `  for (int k = 0; k < ${LANES}; k++) lanes[k] = ${rule.init};`,
    '  int64_t j = j0;',
    `  for (; j + ${LANES} <= j1; j += ${LANES}) {`,
    '    #pragma omp simd',
    `    for (int k = 0; k < ${LANES}; k++) {`,
    ...indent(['const int64_t jk = j + k;', ...body('jk'), rule.visit('lanes[k]', value)], 6).split('\n'),
    '    }',
    '  }',
    '  for (int k = 0; j < j1; j++, k++) {',
    ...indent([...body('j'), rule.visit('lanes[k]', value)], 4).split('\n'),
    '  }',
    ...indent(rule.fold((k) => `lanes[${k}]`), 2).split('\n'),
    `  ${rule.merge('acc', 'lanes[0]')}`,
    '}',
  ];
}

/**
 * The same order in any loop over [lo, hi) (strided and multi-axis inner spaces): `declare` before the loop,
 * `visit(value)` per element in order, `flush` after it.
 */
function steppedLanes(op: ReduceOp, d: DType): { declare: string[]; visit: (value: string) => string; flush: string[] } | null {
  const rule = floatLanes(op, d);
  if (!rule) return null;
  const close = [...rule.fold((k) => `lanes[${k}]`), rule.merge('acc', 'lanes[0]')];
  return {
    declare: [`float lanes[${LANES}];`, `for (int k = 0; k < ${LANES}; k++) lanes[k] = ${rule.init};`, 'int in_block = 0;'],
    visit: (value) =>
      `${rule.visit(`lanes[in_block % ${LANES}]`, value)} if (++in_block == ${REDUCE_BLOCK}) { ${close.join(' ')} for (int k = 0; k < ${LANES}; k++) lanes[k] = ${rule.init}; in_block = 0; }`,
    flush: [`if (in_block) { ${close.join(' ')} }`],
  };
}

/**
 * A float reduction whose consecutive outputs are consecutive input elements (one outer axis of stride 1, one
 * inner axis: a sum over a leading axis, such as a bias gradient): each thread takes COLUMN_WIDTH outputs and walks
 * the rows once, vectorized across the outputs, each output keeping floatLanes' lanes (the same order as the other
 * loops, so the result is too).
 */
function columnReduce(k: ReduceKernel, st: ReductionState): string[] | null {
  const rule = floatLanes(k.op, k.inputDtype);
  if (!rule) return null;
  const W = COLUMN_WIDTH;
  return [
    `if (outer_rank == 1 && outer_stride[0] == 1 && inner_rank == 1 && n_out >= 16) {`,
    '  const int64_t s = inner_stride[0];',
    '  #pragma omp for schedule(static) nowait',
    `  for (int64_t o0 = 0; o0 < n_out; o0 += ${W}) {`,
    `    const int64_t w = n_out - o0 < ${W} ? n_out - o0 : ${W};`,
    `    double accs[${W}]; float lanes[${LANES}][${W}];`,
    `    for (int64_t c = 0; c < w; c++) accs[c] = ${st.parts[0]!.init};`,
    `    for (int64_t j0 = 0; j0 < n_inner; j0 += ${REDUCE_BLOCK}) {`,
    `      const int64_t j1 = n_inner - j0 > ${REDUCE_BLOCK} ? j0 + ${REDUCE_BLOCK} : n_inner;`,
    `      for (int k = 0; k < ${LANES}; k++) for (int64_t c = 0; c < w; c++) lanes[k][c] = ${rule.init};`,
    '      for (int64_t j = j0; j < j1; j++) {',
    `        float *restrict lane = lanes[(j - j0) % ${LANES}];`,
    '        const int64_t row = o0 + j * s;',
    '        #pragma omp simd',
    `        for (int64_t c = 0; c < w; c++) ${rule.visit('lane[c]', loadValue(k.inputDtype, 'in[row + c]'))}`,
    '      }',
    `      for (int64_t c = 0; c < w; c++) {`,
    ...indent([...rule.fold((q) => `lanes[${q}][c]`), rule.merge('accs[c]', 'lanes[0][c]')], 8).split('\n'),
    '      }',
    '    }',
    `    for (int64_t c = 0; c < w; c++) { const double acc = accs[c]; out[o0 + c] = ${st.stored}; }`,
    '  }',
    '  return;',
    '}',
  ];
}

function reduce(k: ReduceKernel, name: string): string {
  if (k.fused) return fusedReduce(k, k.fused, name);
  const st = reductionState(k.op, k.inputDtype, k.outputDtype, C_TYPES);
  const v = loadValue(k.inputDtype, 'in[off]');
  const contiguous = contiguousLanes(k.op, k.inputDtype, (j) => [`const int64_t off = base + ${j};`, `const float value = ${v};`], 'value');
  const stepped = steppedLanes(k.op, k.inputDtype);
  const loop = stepped ? `{\n${indent([...stepped.declare, innerLoop(stepped.visit(v)), ...stepped.flush], 2)}\n}` : innerLoop(st.visit(v, 'j'));
  return reductionSkeleton(name, st, {
    decls: [REDUCE_DECLS(k.inputDtype, k.outputDtype), ...(columnReduce(k, st) ?? [])],
    base: [OUTER_BASE],
    loop: [contiguous ? `if (inner_rank == 1 && inner_stride[0] == 1) {\n${indent(contiguous, 2)}\n} else ${loop}` : loop],
    finish: [`out[o] = ${st.stored};`],
  });
}

/**
 * The loop nest every reduction kernel shares. Few outputs and a long inner
 * space: split the inner space across threads and merge partials in order;
 * otherwise one thread per output. `base` computes the output's input
 * offsets, `loop` accumulates [lo, hi) into `acc`, `finish` stores output o.
 */
function reductionSkeleton(
  name: string,
  st: ReductionState,
  code: { decls: string[]; base: string[]; loop: string[]; finish: string[]; splitFinish?: string[] },
): string {
  const declare = (from: (name: string) => string) => st.parts.map((q) => `${q.type} ${q.name} = ${from(q.name)};`).join(' ');
  // few outputs, long rows: the split path opens its own regions, so the part runs outside one
  const split = 'n_out < 8 && n_inner > JX_PARALLEL_THRESHOLD';
  const part = `${code.decls.join('\n')}
if (${split}) {
  for (int64_t o = 0; o < n_out; o++) {
${indent(code.base, 4)}
    ${st.parts.map((q) => `${q.type} partial_${q.name}[256];`).join(' ')}
    int used = 0;
    #pragma omp parallel
    {
      const int64_t threads = omp_get_num_threads() < 256 ? omp_get_num_threads() : 256, thread = omp_get_thread_num();
      if (thread < threads) {
        const int64_t lo = n_inner * thread / threads, hi = n_inner * (thread + 1) / threads;
        ${st.parts.map((q) => `${q.type} ${q.name} = ${q.init};`).join(' ')}
${indent(code.loop, 8)}
        ${st.parts.map((q) => `partial_${q.name}[thread] = ${q.name};`).join(' ')}
      }
      #pragma omp single
      used = (int)threads;
    }
    ${declare((n) => `partial_${n}[0]`)}
    for (int t = 1; t < used; t++) { ${st.merge(st.parts.map((q) => `partial_${q.name}[t]`))} }
${indent(code.splitFinish ?? code.finish, 4)}
  }
  return;
}
#pragma omp for schedule(static) nowait
for (int64_t o = 0; o < n_out; o++) {
${indent(code.base, 2)}
  const int64_t lo = 0, hi = n_inner;
  ${st.parts.map((q) => `${q.type} ${q.name} = ${q.init};`).join(' ')}
${indent(code.loop, 2)}
${indent(code.finish, 2)}
}`;
  return regionKernel(
    name,
    ['const int64_t n_out = params[0], n_inner = params[1];'],
    `!(${split}) && n_out * n_inner > JX_PARALLEL_THRESHOLD && n_out > 1`,
    [part],
  );
}

/** The offsets p<v> = b<v> + j * (inner stride) of every view v, for a single inner axis. */
const directOffsets = (views: number): string =>
  views ? `const int64_t ${[...Array(views).keys()].map((v) => `p${v} = b${v} + j * is${v}[0]`).join(', ')};` : '';

/** C code looping j over [lo, hi) of the inner space, keeping offsets p<v> = b<v> + inner offset for each view v. */
function fusedInnerLoop(views: number, body: string[]): string {
  const ids = [...Array(views).keys()];
  const each = (f: (v: number) => string) => ids.map(f).join(' ');
  const start = ids.length ? `int64_t ${ids.map((v) => `p${v} = b${v}`).join(', ')};` : '';
  return `if (inner_rank == 1) {
${indent([`for (int64_t j = lo; j < hi; j++) {\n  ${directOffsets(views)}\n${indent(body, 2)}\n}`], 2)}
} else {
  int64_t coord[JX_MAX_RANK], rest = lo;
  ${start}
  for (int d = inner_rank - 1; d >= 0; d--) { coord[d] = rest % inner_shape[d]; rest /= inner_shape[d]; ${each((v) => `p${v} += coord[d] * is${v}[d];`)} }
  for (int64_t j = lo; j < hi; j++) {
${indent(body, 4)}
    for (int d = inner_rank - 1; d >= 0; d--) {
      coord[d]++; ${each((v) => `p${v} += is${v}[d];`)}
      if (coord[d] < inner_shape[d]) break;
      ${each((v) => `p${v} -= is${v}[d] * inner_shape[d];`)} coord[d] = 0;
    }
  }
}`;
}


/**
 * Whether float sin, cos or tan appear: their kernels run in blocks, the fast versions first and the full ones (the
 * reduction of huge arguments, most of their cost) only again for a block that needs them (jaxon_math.h JX_TRIG).
 */
function usesTrigonometry(exprs: readonly Expr[]): boolean {
  return someNode(exprs, (n) => n.op === 'unary' && (n.name === 'sin' || n.name === 'cos' || n.name === 'tan') && n.dtype !== 'float64');
}

/** Elements per block of a blocked elementwise kernel (trigonometry's fast/full passes, interleaved strips). */
const ELEMENTWISE_BLOCK = 256;
/**
 * Independent strips a full block of a math-heavy elementwise kernel is computed in, one statement of each in turn:
 * a chain of vectorized math functions is one long dependency chain per vector, which the out-of-order core
 * cannot overlap across loop iterations; four strips side by side ran the 10-op chain (sin, exp, tanh, log, cos,
 * ...) at 5.0 ns/element instead of 10.3 on one core of the development machine, and exp(x) alone no faster.
 */
const INTERLEAVE = 4;
/** Float math calls (jaxon_math.h) from which an elementwise kernel interleaves its strips. */
const INTERLEAVE_MIN_CALLS = 2;
/** Ops rendered as libm-sized calls (core/traits.ts), as the CUDA renderer counts them. */
const MATH_CALLS = primitivesWith('libmCall');

/** How many libm-sized calls the expressions make (float64 calls the C library's scalar functions: not counted). */
function mathCalls(exprs: readonly Expr[]): number {
  let calls = 0;
  someNode(exprs, (n) => {
    if ((n.op === 'unary' || n.op === 'binary') && MATH_CALLS.has(n.name) && isFloating(n.dtype) && n.dtype !== 'float64') calls++;
    return false;
  });
  return calls;
}

/** A reduction with a prologue (the reduced value), side outputs, output-space epilogue and final outputs; layout in kernel-ir.ts FusedReduce. */
function fusedReduce(k: ReduceKernel, f: FusedReduce, name: string): string {
  const nOut = f.outputs.length;
  const nSide = f.sideOutputs.length;
  const nIn = f.inputs.length;
  const finals = f.finalOutputs ?? [];
  const nFinal = finals.length;
  const views = nIn + nSide + nFinal + f.iotaAxes.length;
  const iotaView = (axis: number) => {
    const t = f.iotaAxes.indexOf(axis);
    if (t < 0) throw new Error(`render/c: fused reduction ${name} reads iota axis ${axis}, which is not in iotaAxes ${JSON.stringify(f.iotaAxes)}`);
    return nIn + nSide + nFinal + t;
  };
  const decls = [
    'const int64_t n_out = params[0], n_inner = params[1];',
    'const int outer_rank = (int)params[2];',
    'const int64_t *outer_shape = params + 3;',
    'const int inner_rank = (int)params[3 + outer_rank];',
    'const int64_t *inner_shape = params + 4 + outer_rank;',
    'const int64_t *views = params + 4 + outer_rank + inner_rank;',
    '(void)views; (void)inner_shape;',
  ];
  // plan.ts may write a side or final output over an input of the same view: those may alias, no restrict
  f.outputs.forEach((o, j) => decls.push(`${storageType(o.dtype)} *restrict out${j} = (${storageType(o.dtype)} *)buffers[${j}];`));
  f.sideOutputs.forEach((o, j) => decls.push(`${storageType(o.dtype)} *side${j} = (${storageType(o.dtype)} *)buffers[${nOut + j}];`));
  finals.forEach((o, j) => decls.push(`${storageType(o.dtype)} *final${j} = (${storageType(o.dtype)} *)buffers[${nOut + nSide + j}];`));
  f.inputs.forEach((inp, i) => decls.push(`const ${storageType(inp.dtype)} *in${i} = (const ${storageType(inp.dtype)} *)buffers[${nOut + nSide + nFinal + i}];`));
  for (let v = 0; v < views; v++) decls.push(`const int64_t *os${v} = views + ${v} * (outer_rank + inner_rank), *is${v} = os${v} + outer_rank;`);
  const ids = [...Array(views).keys()];
  const bases = ids.length
    ? [
        `int64_t ${ids.map((v) => `b${v} = 0`).join(', ')};`,
        `{ int64_t rest_o = o; for (int d = outer_rank - 1; d >= 0; d--) { const int64_t c = rest_o % outer_shape[d]; rest_o /= outer_shape[d]; ${ids.map((v) => `b${v} += c * os${v}[d];`).join(' ')} } }`,
      ]
    : [];

  // The reduced value and the side outputs, per input-space element.
  const prologue = new ExprRenderer(C_DIALECT, (i) => loadValue(f.inputs[i]!.dtype, `in${i}[p${i}]`), (axis) => `p${iotaView(axis)}`);
  const value = prologue.render(f.prologue);
  const sides = f.sideOutputs.map((o) => prologue.render(o.expr));
  const sideStores = f.sideOutputs.map((o, j) => `side${j}[p${nIn + j}] = ${storeValue(o.dtype, sides[j]!)};`);
  const resultType = computeType(k.outputDtype);

  // Output-space values, once per output element, from the result and output-space views (inner strides 0, so p == b).
  const epilogue = new ExprRenderer(C_DIALECT, 
    (i) => (i === nIn ? 'res' : loadValue(f.inputs[i]!.dtype, `in${i}[b${i}]`)),
    (axis) => `b${iotaView(axis)}`,
  );
  const outs = f.outputs.map((o) => epilogue.render(o.expr));
  const outStores = f.outputs.map((o, j) => `out${j}[o] = ${storeValue(o.dtype, outs[j]!)};`);

  // The final outputs: a second pass over the inputs of output o once `res` is complete. What depends on the
  // result alone (layernorm's 1 / sqrt(var + eps)) is computed once, with the epilogue, outside the loop.
  for (const e of resultOnlyNodes(finals.map((o) => o.expr), nIn)) epilogue.render(e);
  const second = new ExprRenderer(C_DIALECT, 
    (i) => (i === nIn ? 'res' : loadValue(f.inputs[i]!.dtype, `in${i}[p${i}]`)),
    (axis) => `p${iotaView(axis)}`,
    'f',
    epilogue,
  );
  const finalValues = finals.map((o) => second.render(o.expr));
  const finalBody = [...second.lines, ...finals.map((o, j) => `final${j}[p${nIn + nSide + j}] = ${storeValue(o.dtype, finalValues[j]!)};`)];
  // Every view steps 0 or 1 element along the single inner axis (fusion says so, checked again at run time): plain
  // indices the compiler vectorizes, in the reduction and in the final pass.
  const steps = f.innerSteps;
  const unitIndex = (j: string) => (ids.length ? [`const int64_t ${ids.map((v) => `p${v} = ${steps![v] ? `b${v} + ${j}` : `b${v}`}`).join(', ')};`] : []);
  const unit = steps ? ['inner_rank == 1', ...ids.map((v) => `is${v}[0] == ${steps[v]}`)].join(' && ') : '';
  const finalPass = (split: boolean): string[] => {
    if (nFinal === 0) return [];
    const general = fusedInnerLoop(views, finalBody).split('\n');
    const plain = () => ['#pragma omp simd', 'for (int64_t j = lo; j < hi; j++) {', ...indent([...unitIndex('j'), ...finalBody], 2).split('\n'), '}'];
    const loop = steps ? [`if (${unit}) {`, ...indent(plain(), 2).split('\n'), '} else {', ...indent(general, 2).split('\n'), '}'] : general;
    if (!split) return ['{', '  const int64_t lo = 0, hi = n_inner;', ...indent(loop, 2).split('\n'), '}'];
    return [
      '#pragma omp parallel',
      '{',
      '  const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();',
      '  const int64_t lo = n_inner * thread / threads, hi = n_inner * (thread + 1) / threads;',
      ...indent(loop, 2).split('\n'),
      '}',
    ];
  };
  const finishBlock = (split = false) => ['{', ...indent([...epilogue.lines, ...outStores, ...finalPass(split)], 2).split('\n'), '}'];

  const st = reductionState(k.op, k.inputDtype, k.outputDtype, C_TYPES);
  const stepped = steppedLanes(k.op, k.inputDtype);
  const body = [...prologue.lines, ...sideStores, stepped ? stepped.visit(value) : st.visit(value, 'j')];
  let loop = fusedInnerLoop(views, body).split('\n');
  if (stepped) loop = ['{', ...indent([...stepped.declare, ...loop, ...stepped.flush], 2).split('\n'), '}'];
  const contiguous = steps && contiguousLanes(k.op, k.inputDtype, (j) => [...unitIndex(j), ...prologue.lines, ...sideStores], value);
  if (contiguous) loop = [`if (${unit}) {`, ...indent(contiguous, 2).split('\n'), `} else {`, ...indent(loop, 2).split('\n'), '}'];
  const result = `const ${resultType} res = ${st.result};`;
  return reductionSkeleton(name, st, { decls, base: bases, loop, finish: [result, ...finishBlock()], splitFinish: [result, ...finishBlock(true)] });
}

/** The statements storing row[j] (the accumulated product) at column j of output row `bm`: plain, or through the epilogue. */
function dotStore(k: DotKernel): { decls: string[]; row: string[]; store: string[] } {
  // bool: any nonzero sum is true (casting the sum to uint8_t first would wrap 256 to false)
  const result = k.outputDtype === 'bool' ? 'row[j]' : `(${computeType(k.outputDtype)})row[j]`;
  const stored = storeValue(k.outputDtype, result);
  const e = k.epilogue;
  if (!e) {
    const to = storageType(k.outputDtype);
    return { decls: [`${to} *restrict out = (${to} *)buffers[0];`], row: [`${to} *o = out + bm * N;`], store: [`o[j] = ${stored};`] };
  }
  const nOut = e.outputs.length;
  const decls: string[] = [];
  // plan.ts may write an epilogue output over an epilogue input of its layout: no restrict on either
  e.outputs.forEach((o, j) => decls.push(`${storageType(o.dtype)} *out${j} = (${storageType(o.dtype)} *)buffers[${j}];`));
  e.inputs.forEach((inp, i) => {
    decls.push(`const ${storageType(inp.dtype)} *in${i} = (const ${storageType(inp.dtype)} *)buffers[${nOut + 2 + i}];`);
    decls.push(`const int64_t esb${i} = params[${10 + 3 * i}], esm${i} = params[${11 + 3 * i}], esn${i} = params[${12 + 3 * i}];`);
  });
  // the product rounded to the output dtype first, as eager's dot stores it before the elementwise ops read it
  const renderer = new ExprRenderer(C_DIALECT, 
    (i) => (i === e.inputs.length ? 'product' : loadValue(e.inputs[i]!.dtype, `e${i}[j * esn${i}]`)),
    (axis) => {
      throw new Error(`render/c: dot kernel ${kernelName(k)} has an epilogue reading iota axis ${axis}`);
    },
  );
  const values = e.outputs.map((o) => renderer.render(o.expr));
  return {
    decls,
    row: e.inputs.map((inp, i) => `const ${storageType(inp.dtype)} *e${i} = in${i} + b * esb${i} + m * esm${i};`),
    store: [
      `const ${computeType(k.outputDtype)} product = ${loadValue(k.outputDtype, stored)};`,
      ...renderer.lines,
      ...e.outputs.map((o, j) => `out${j}[bm * N + j] = ${storeValue(o.dtype, values[j]!)};`),
    ],
  };
}

/** A dot kernel's ten params (shape and operand strides), output pointers and operands; empty: done. */
function dotOpening(ti: string, nOut: number, decls: string[]): string[] {
  return [
    'const int64_t B = params[0], M = params[1], N = params[2], K = params[3];',
    'const int64_t lsb = params[4], lsm = params[5], lsk = params[6], rsb = params[7], rsk = params[8], rsn = params[9];',
    ...decls,
    `const ${ti} *restrict lhs = (const ${ti} *)buffers[${nOut}];`,
    `const ${ti} *restrict rhs = (const ${ti} *)buffers[${nOut + 1}];`,
    'if (B * M * N == 0) return;',
  ];
}

/** What a dot kernel's entry reads to decide whether its region runs on every thread. */
const DOT_HEAD = ['const int64_t B = params[0], M = params[1], N = params[2], K = params[3];'];
const DOT_PARALLEL = 'B * M * N * K > JX_PARALLEL_THRESHOLD';

/** Dots the packed float GEMM serves (jaxon_gemm.h): 32- and 16-bit float operands and results, f32 accumulation. */
const GEMM_DTYPES: ReadonlySet<DType> = new Set(['float32', 'float16', 'bfloat16']);

function dot(k: DotKernel, name: string): string {
  return GEMM_DTYPES.has(k.inputDtype) && GEMM_DTYPES.has(k.outputDtype) ? gemmDot(k, name) : loopDot(k, name);
}

/**
 * A float dot through the packed GEMM: each batch element's product is computed in float (f32 accumulation, as
 * OpenBLAS and XLA's CPU backend) over threads splitting batches, rows and columns; 16-bit operands are converted
 * while packing. The product goes straight to the output when it is f32 and nothing is fused onto it; otherwise into
 * a float scratch of at most 2^22 elements (16 MiB, whatever the product's size; one MR-row block where rows are longer), a block of rows at a time, which
 * the epilogue (or the rounding to a 16-bit output) reads row by row.
 */
function gemmDot(k: DotKernel, name: string): string {
  const ti = storageType(k.inputDtype);
  const nOut = k.epilogue ? k.epilogue.outputs.length : 1;
  const store = dotStore(k);
  const range = `jx_sgemm_range_${k.inputDtype === 'float32' ? 'f32' : k.inputDtype === 'float16' ? 'f16' : 'bf16'}`;
  // `batches` products of `rows` x N, split over the threads into (batch ib, rows, columns) items
  const items = (batches: string, rows: string, lhsAt: string, rhsAt: string, cAt: string) => [
    `const jx_sgemm_split s = jx_sgemm_plan(${batches}, ${rows}, N, omp_get_num_threads());`,
    '#pragma omp for schedule(static)',
    'for (int64_t it = 0; it < s.items; it++) {',
    '  int64_t ib, m_lo, m_hi, n_lo, n_hi;',
    `  jx_sgemm_item(s, it, ${rows}, N, &ib, &m_lo, &m_hi, &n_lo, &n_hi);`,
    `  ${range}(K, ${lhsAt}, lsm, lsk, ${rhsAt}, rsk, rsn, ${cAt}, N, m_lo, m_hi, n_lo, n_hi, &w);`,
    '}',
  ];
  // the region: every thread packs into its own buffers, then takes its share of the items
  const region = (rows: string, body: string[]) => ['jx_sgemm_buffers w;', `jx_sgemm_buffers_alloc(&w, ${rows}, N, K);`, ...body, 'jx_sgemm_buffers_free(&w);'];
  if (!k.epilogue && k.outputDtype === 'float32') {
    return regionKernel(name, DOT_HEAD, DOT_PARALLEL, [
      ...dotOpening(ti, nOut, store.decls),
      ...region('M', items('B', 'M', 'lhs + ib * lsb', 'rhs + ib * rsb', 'out + ib * M * N')),
    ]);
  }
  const blocks = [
    'for (int64_t b = 0; b < B; b++) {',
    '  for (int64_t m0 = 0; m0 < M; m0 += R) {',
    '    const int64_t rows = M - m0 < R ? M - m0 : R;',
    indent(items('1', 'rows', 'lhs + b * lsb + m0 * lsm', 'rhs + b * rsb', 'C'), 4),
    '    #pragma omp for schedule(static)',
    '    for (int64_t r = 0; r < rows; r++) {',
    '      const int64_t m = m0 + r, bm = b * M + m;',
    '      const float *row = C + r * N;',
    indent([...store.row, 'for (int64_t j = 0; j < N; j++) {'], 6),
    indent(store.store, 8),
    '      }',
    '    }',
    '  }',
    '}',
  ];
  // the float product of a block of rows, shared by the threads: allocated by the entry around the region
  return regionKernel(
    name,
    [
      ...DOT_HEAD,
      'if (B * M * N == 0) return;',
      'const int64_t fit = ((int64_t)1 << 22) / N > JX_MR ? ((int64_t)1 << 22) / N : JX_MR; /* rows of 2^22 floats */',
      'const int64_t R = M < fit ? M : fit;',
      'float *C = (float *)malloc(sizeof(float) * (size_t)(R * N));',
    ],
    DOT_PARALLEL,
    [...dotOpening(ti, nOut, store.decls), ...region('R', blocks)],
    { params: ', float *C, int64_t R', args: ', C, R', tail: ['free(C);'] },
  );
}

/** Other dots (integers, float64, mixed): one row of the product at a time, accumulated in 64 bits. */
function loopDot(k: DotKernel, name: string): string {
  const floating = isFloating(k.outputDtype) || isFloating(k.inputDtype);
  const acc = floating ? 'double' : isUnsigned(k.outputDtype) ? 'uint64_t' : 'uint64_t';
  const ti = storageType(k.inputDtype);
  const load = (ref: string) => `(${acc})${loadValue(k.inputDtype, ref)}`;
  const nOut = k.epilogue ? k.epilogue.outputs.length : 1;
  const store = dotStore(k);
  return regionKernel(name, DOT_HEAD, DOT_PARALLEL, [
    ...dotOpening(ti, nOut, store.decls),
    `${acc} *row = (${acc} *)malloc(sizeof(${acc}) * (size_t)N);`,
    '#pragma omp for schedule(static)',
    'for (int64_t bm = 0; bm < B * M; bm++) {',
    '  const int64_t b = bm / M, m = bm % M;',
    '  for (int64_t j = 0; j < N; j++) row[j] = 0;',
    `  const ${ti} *a = lhs + b * lsb + m * lsm;`,
    `  const ${ti} *w = rhs + b * rsb;`,
    '  for (int64_t kk = 0; kk < K; kk++) {',
    `    const ${acc} x = ${load('a[kk * lsk]')};`,
    `    const ${ti} *wr = w + kk * rsk;`,
    `    if (rsn == 1) { for (int64_t j = 0; j < N; j++) row[j] += x * ${load('wr[j]')}; }`,
    `    else { for (int64_t j = 0; j < N; j++) row[j] += x * ${load('wr[j * rsn]')}; }`,
    '  }',
    indent([...store.row, 'for (int64_t j = 0; j < N; j++) {'], 2),
    indent(store.store, 4),
    '  }',
    '}',
    'free(row);',
  ]);
}

/**
 * An indexed.ts kernel for the CPU: params read at run time (one compiled kernel serves every shape), each loop an
 * OpenMP parallel loop over its elements, or the memcpy the spec allows; loops run in turn, so a loop that rereads
 * what the ones before it wrote needs nothing more.
 */
function indexed(k: IndexedKernel, name: string): string {
  const spec = indexedSpec(k, C_DIALECT);
  const lines = ['typedef int64_t jx_index;'];
  // each param's index: a count of scalars plus the lengths of the arrays before it
  let scalarsBefore = 0;
  const lengthsBefore: string[] = [];
  for (const p of spec.params) {
    const at = [...(scalarsBefore || !lengthsBefore.length ? [`${scalarsBefore}`] : []), ...lengthsBefore].join(' + ');
    if (p.length === undefined) {
      lines.push(`const jx_index ${p.name} = params[${at}];`);
      scalarsBefore++;
    } else {
      lines.push(`const int64_t *${p.name} = params + ${at};`);
      lengthsBefore.push(p.length);
    }
  }
  spec.buffers.forEach((b, i) => {
    const t = storageType(b.dtype);
    const c = b.output ? '' : 'const ';
    lines.push(`${c}${t} *${b.restrict === false ? '' : 'restrict '}${b.name} = (${c}${t} *)buffers[${i}];`);
  });
  lines.push(...spec.setup);
  const scalars = new Set(spec.params.filter((p) => p.length === undefined).map((p) => p.name));
  const lengthOf = new Map(spec.params.map((p) => [p.name, p.length]));
  spec.loops.forEach((loop, j) => {
    const count = `jx_count${j}`;
    lines.push(`jx_index ${count} = 1;`);
    for (const n of loop.count) lines.push(scalars.has(n) ? `${count} *= ${n};` : `for (int d = 0; d < (int)${lengthOf.get(n)}; d++) ${count} *= ${n}[d];`);
    const copy = loop.memcpy;
    // a parallel loop, or the same loop without OpenMP for small work (see regionKernel: a false `if` clause still enters libgomp)
    const parallelFor = (work: string, forLoop: string[]) => [`if (${work} > JX_PARALLEL_THRESHOLD) {`, '  #pragma omp parallel for', indent(forLoop, 2), '} else {', indent(forLoop, 2), '}'];
    const body = copy?.rows
      ? [
          `if (${count} > 0) {`,
          `  const jx_index jx_run = ${count} / ${copy.rows.count};`,
          indent(parallelFor(count, [`for (jx_index row = 0; row < ${copy.rows.count}; row++) memcpy(${copy.dst} + ${copy.rows.dst}, ${copy.src} + ${copy.rows.src}, (size_t)jx_run * sizeof(*${copy.dst}));`]), 2),
          '}',
        ]
      : copy
      ? [`memcpy(${copy.dst}, ${copy.src}, (size_t)${count} * sizeof(*${copy.dst}));`]
      : parallelFor(`${count}${loop.workPerElement ? ` * ${loop.workPerElement}` : ''}`, [`for (jx_index i = 0; i < ${count}; i++) {`, indent([...loop.body], 2), '}']);
    lines.push(...(loop.when ? [`if (${loop.when}) {`, indent(body, 2), '}'] : body));
  });
  return `void ${name}(void **buffers, const int64_t *params) {\n${indent(lines, 2)}\n}`;
}
