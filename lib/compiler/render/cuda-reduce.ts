// CUDA reductions: plain, fused (prologue, side outputs, output-space
// epilogue, second-pass final outputs) and arg reductions, all rendered from
// one normalized plan. Accumulation follows render/c.ts: floats accumulate in
// double, integer sums and products in wrapping 64 bits, max/min propagate
// NaN, argmax/argmin keep the first index of the best value (the first NaN
// wins); partial results merge with the same rules in a fixed order, so every
// launch gives the same bits. Strategies (chosen from the sizes; see cuda.ts):
// thread, warp, block and column groups per output (after XLA's GPU row and
// column reduction emitters), and a two-stage split of long rows across
// blocks with partials in module-scope arrays, merged by the last block to
// finish (the CUDA samples' threadFenceReduction).
import type { DType } from '../../core/dtype.js';
import type { Expr, ReduceKernel, ReduceOp } from '../kernel-ir.js';
import {
  BLOCK, type BufferArg, type RenderedKernel, SM_COUNT, dotStrides, gridStride, indent, indexType, int,
  strideGrid, unravel, viewReach,
} from './cuda-common.js';
import { CUDA_DIALECT, CUDA_TYPES, ExprRenderer } from './expr.js';
import { resultOnlyNodes } from '../kernel-ir.js';
import { ParamReader } from './cuda-params.js';
import { type Decision, type ReductionStrategy, reductionStrategy } from './cuda-decisions.js';
import { reductionState } from './reduce-state.js';

const { computeType, loadValue, storeValue } = CUDA_TYPES;

interface View {
  outer: number[];
  inner: number[];
}

interface Valued {
  dtype: DType;
  expr: Expr;
}

/** A reduction in one shape, plain or fused: views are inputs, side outputs, final outputs, iota axes, in that order. */
interface ReducePlan {
  op: ReduceOp;
  inputDtype: DType;
  outputDtype: DType;
  nOut: number;
  nInner: number;
  outerShape: number[];
  innerShape: number[];
  inputs: DType[];
  prologue: Expr;
  sides: Valued[];
  finals: Valued[];
  outputs: Valued[];
  iotaAxes: number[];
  views: View[];
}

function plan(k: ReduceKernel, params: readonly number[]): ReducePlan {
  const r = new ParamReader(params, k.fused ? 'fused reduce' : 'reduce');
  const nOut = r.next('nOut');
  const nInner = r.next('nInner');
  const outerRank = r.next('outerRank');
  const outerShape = r.take(outerRank, 'outerShape');
  const base = { op: k.op, inputDtype: k.inputDtype, outputDtype: k.outputDtype, nOut, nInner, outerShape };
  if (!k.fused) {
    const outer = r.take(outerRank, 'outerStrides');
    const innerRank = r.next('innerRank');
    const innerShape = r.take(innerRank, 'innerShape');
    const inner = r.take(innerRank, 'innerStrides');
    r.done();
    return {
      ...base,
      innerShape,
      inputs: [k.inputDtype],
      prologue: { op: 'input', index: 0, dtype: k.inputDtype },
      sides: [],
      finals: [],
      outputs: [{ dtype: k.outputDtype, expr: { op: 'input', index: 1, dtype: k.outputDtype } }],
      iotaAxes: [],
      views: [{ outer, inner }],
    };
  }
  const f = k.fused;
  const innerRank = r.next('innerRank');
  const innerShape = r.take(innerRank, 'innerShape');
  const finals = f.finalOutputs ?? [];
  const count = f.inputs.length + f.sideOutputs.length + finals.length + f.iotaAxes.length;
  const views = Array.from({ length: count }, (_, v) => ({ outer: r.take(outerRank, `outer strides of view ${v}`), inner: r.take(innerRank, `inner strides of view ${v}`) }));
  r.done();
  return {
    ...base,
    innerShape,
    inputs: f.inputs.map((i) => i.dtype),
    prologue: f.prologue,
    sides: f.sideOutputs,
    finals,
    outputs: f.outputs,
    iotaAxes: f.iotaAxes,
    views,
  };
}

/** The facts of this reduction, for the named decision (cuda-decisions.ts). */
function strategyOf(p: ReducePlan): Decision<ReductionStrategy> {
  const last = p.innerShape.length - 1;
  const main = p.views.slice(0, p.inputs.length).find((v) => v.inner.some((s) => s !== 0));
  const innerContiguous = !main || last < 0 || Math.abs(main.inner[last]!) === 1;
  const outerLast = p.outerShape.length - 1;
  const columnLike = !innerContiguous && outerLast >= 0 && Math.abs(main!.outer[outerLast]!) === 1;
  return reductionStrategy({ nOut: p.nOut, nInner: p.nInner, innerContiguous, columnLike, splittable: p.finals.length === 0 && p.nOut > 0 });
}

export function reduce(k: ReduceKernel, params: readonly number[], name: string): RenderedKernel {
  const p = plan(k, params);
  const nIn = p.inputs.length;
  const nSide = p.sides.length;
  const nFinal = p.finals.length;
  const sideView = (j: number) => nIn + j;
  const finalView = (j: number) => nIn + nSide + j;
  const iotaView = (axis: number) => {
    const t = p.iotaAxes.indexOf(axis);
    if (t < 0) throw new Error(`renderCuda: fused reduction ${name} reads iota axis ${axis}, which is not in iotaAxes ${JSON.stringify(p.iotaAxes)}`);
    return nIn + nSide + nFinal + t;
  };
  const iotaViews = p.iotaAxes.map((a) => iotaView(a));
  const decision = strategyOf(p);
  const s = decision.choice;
  const chunks = s.kind === 'block' || s.kind === 'column' ? s.chunks : 1;
  const st = reductionState(p.op, p.inputDtype, p.outputDtype, CUDA_TYPES);
  const rt = computeType(p.outputDtype);
  const idx = indexType([
    p.nOut, p.nInner, p.nOut * chunks, Math.ceil(p.nOut / 32) * 32,
    ...p.views.map((v) => viewReach(p.outerShape, v.outer) + viewReach(p.innerShape, v.inner)),
  ]);

  const buffers: BufferArg[] = [
    ...p.outputs.map((o, j) => ({ name: `out${j}`, dtype: o.dtype, output: true })),
    // plan.ts may write a side or final output over an input of the same view: no __restrict__ on those
    ...p.sides.map((o, j) => ({ name: `side${j}`, dtype: o.dtype, output: true, restrict: false })),
    ...p.finals.map((o, j) => ({ name: `fin${j}`, dtype: o.dtype, output: true, restrict: false })),
    ...p.inputs.map((d, i) => ({ name: `in${i}`, dtype: d, output: false, restrict: false })),
  ];

  // ---- per-output and per-element code ----
  const ocs = p.outerShape.map((_, d) => `oc${d}`);
  const ics = p.innerShape.map((_, d) => `ic${d}`);
  const bases = (o: string) => [
    ...unravel('jx_index', o, p.outerShape, 'oc'),
    ...p.views.map((v, i) => `const jx_index b${i} = ${dotStrides(ocs, v.outer)};`),
  ];
  const offsets = (j: string, views: number[]) => [
    ...unravel('jx_index', j, p.innerShape, 'ic'),
    ...views.map((v) => {
      const inner = dotStrides(ics, p.views[v]!.inner);
      return `const jx_index p${v} = ${inner === '0' ? `b${v}` : `b${v} + ${inner}`};`;
    }),
  ];
  const inputViews = p.inputs.map((_, i) => i);

  const pro = new ExprRenderer(CUDA_DIALECT, (i) => loadValue(p.inputs[i]!, `in${i}[p${i}]`), (axis) => `p${iotaView(axis)}`, 'v');
  const value = pro.render(p.prologue);
  const sideValues = p.sides.map((o) => pro.render(o.expr));
  const visit = (j: string) => [
    '{',
    indent([
      ...offsets(j, [...inputViews, ...p.sides.map((_, k) => sideView(k)), ...iotaViews]),
      ...pro.lines,
      ...p.sides.map((o, k) => `side${k}[p${sideView(k)}] = ${storeValue(o.dtype, sideValues[k]!)};`),
      st.visit(value, j),
    ], 2),
    '}',
  ];

  const epi = new ExprRenderer(CUDA_DIALECT, (i) => (i === nIn ? 'res' : loadValue(p.inputs[i]!, `in${i}[b${i}]`)), (axis) => `b${iotaView(axis)}`, 'e');
  const outValues = p.outputs.map((o) => epi.render(o.expr));
  const epilogue = ['{', indent([...epi.lines, ...p.outputs.map((o, j) => `out${j}[o] = ${storeValue(o.dtype, outValues[j]!)};`)], 2), '}'];

  // the final pass: what depends on the result alone (layernorm's 1 / sqrt(var + eps)) is computed once per output
  const noInput = (i: number): string => {
    throw new Error(`renderCuda: internal error: a result-only node of ${name} reads input ${i}`);
  };
  const hoist = new ExprRenderer(CUDA_DIALECT, (i) => (i === nIn ? 'res' : noInput(i)), (axis) => `p${iotaView(axis)}`, 'h');
  for (const e of resultOnlyNodes(p.finals.map((o) => o.expr), nIn)) hoist.render(e);
  const fin = new ExprRenderer(CUDA_DIALECT, (i) => (i === nIn ? 'res' : loadValue(p.inputs[i]!, `in${i}[p${i}]`)), (axis) => `p${iotaView(axis)}`, 'f', hoist);
  const finValues = p.finals.map((o) => fin.render(o.expr));
  const finalLoop = (start: string, step: number) =>
    nFinal === 0
      ? []
      : [
          ...hoist.lines,
          `for (jx_index j = ${start}; j < ${int(p.nInner)}; j += ${step}) {`,
          indent([
            ...offsets('j', [...inputViews, ...p.finals.map((_, k) => finalView(k)), ...iotaViews]),
            ...fin.lines,
            ...p.finals.map((o, k) => `fin${k}[p${finalView(k)}] = ${storeValue(o.dtype, finValues[k]!)};`),
          ], 2),
          '}',
        ];

  const declare = st.parts.map((q) => `${q.type} ${q.name} = ${q.init};`);
  const reset = st.parts.map((q) => `${q.name} = ${q.init};`);
  const resLine = `const ${rt} res = ${st.result};`;
  const shuffle = (width: number) => [
    '#pragma unroll',
    `for (int m = ${width / 2}; m > 0; m >>= 1) ${st.merge(st.parts.map((q) => `jx_shfl_xor(${q.name}, m)`))}`,
  ];
  const loop = (variable: string, start: string, end: string, step: string | number, body: string[]) => [
    `for (jx_index ${variable} = ${start}; ${variable} < ${end}; ${variable} += ${step}) {`,
    indent(body, 2),
    '}',
  ];

  // two-stage partials and tickets (module scope, named after the kernel)
  const counters = s.kind === 'column' ? Math.ceil(p.nOut / 32) : p.nOut;
  const partial = (q: number) => `jx_partial${q}_${name}`;
  const globals = chunks > 1
    ? [
        ...st.parts.map((q, i) => `__device__ ${q.type} ${partial(i)}[${int(p.nOut * chunks)}];`),
        `__device__ jx_u32 jx_ticket_${name}[${int(counters)}];`,
      ].join('\n')
    : undefined;
  const readPartials = (o: string, c: string) => st.merge(st.parts.map((q, i) => `((volatile ${q.type} *)${partial(i)})[${o} * ${chunks} + ${c}]`));
  const writePartials = (o: string, c: string) => st.parts.map((q, i) => `${partial(i)}[${o} * ${chunks} + ${c}] = ${q.name};`);
  const chunk = s.kind === 'block' || s.kind === 'column' ? s.chunk : p.nInner;
  const chunkRange = chunks > 1
    ? [`const jx_index lo = (jx_index)blockIdx.y * ${int(chunk)};`, `const jx_index hi = lo + ${int(chunk)} < ${int(p.nInner)} ? lo + ${int(chunk)} : ${int(p.nInner)};`]
    : [`const jx_index lo = 0, hi = ${int(p.nInner)};`];

  const lines: string[] = [`typedef ${idx} jx_index;`];
  let grid: [number, number, number];
  let block: [number, number, number] = [BLOCK, 1, 1];
  let strategy: string;
  switch (s.kind) {
    case 'thread': {
      lines.push(`${gridStride('jx_index', 'o', int(p.nOut))} {`);
      lines.push(indent([...bases('o'), ...declare, ...loop('j', '0', int(p.nInner), 1, visit('j')), resLine, ...epilogue, ...finalLoop('0', 1)], 2));
      lines.push('}');
      grid = [strideGrid(p.nOut), 1, 1];
      strategy = 'reduction, one thread per output';
      break;
    }
    case 'warp': {
      const perBlock = BLOCK / 32;
      lines.push('const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;');
      lines.push(`for (jx_index o = (jx_index)blockIdx.x * ${perBlock} + warp; o < ${int(p.nOut)}; o += (jx_index)gridDim.x * ${perBlock}) {`);
      lines.push(indent([
        ...bases('o'), ...declare, ...loop('j', 'lane', int(p.nInner), 32, visit('j')), ...shuffle(32), resLine,
        'if (lane == 0)', ...epilogue, ...finalLoop('lane', 32),
      ], 2));
      lines.push('}');
      grid = [Math.max(1, Math.min(Math.ceil(p.nOut / perBlock), SM_COUNT * 64)), 1, 1];
      strategy = 'reduction, one warp per output (shuffle butterfly)';
      break;
    }
    case 'block': {
      const warps = BLOCK / 32;
      lines.push('const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;');
      lines.push(...st.parts.map((q, i) => `__shared__ ${q.type} jx_red${i}[${warps}];`));
      if (chunks > 1) lines.push('__shared__ int jx_last;');
      if (nFinal) lines.push(`__shared__ ${rt} jx_res;`);
      const combine = [
        ...shuffle(32),
        `if (lane == 0) { ${st.parts.map((q, i) => `jx_red${i}[warp] = ${q.name};`).join(' ')} }`,
        '__syncthreads();',
        `if (warp == 0) {`,
        indent([...st.parts.map((q, i) => `${q.name} = lane < ${warps} ? jx_red${i}[lane] : ${q.init};`), ...shuffle(warps)], 2),
        '}',
        '__syncthreads();',
      ];
      const body = [...bases('o'), ...chunkRange, ...declare, ...loop('j', 'lo + threadIdx.x', 'hi', BLOCK, visit('j')), ...combine];
      if (chunks > 1) {
        body.push(
          'if (threadIdx.x == 0) {',
          indent([...writePartials('o', 'blockIdx.y'), '__threadfence();', `jx_last = atomicAdd(&jx_ticket_${name}[o], 1u) == ${chunks - 1};`], 2),
          '}',
          '__syncthreads();',
          'if (!jx_last) continue; // another block of this output finishes it',
          '__threadfence();',
          ...reset,
          ...loop('c', 'threadIdx.x', int(chunks), BLOCK, [readPartials('o', 'c')]),
          ...combine,
          `if (threadIdx.x == 0) jx_ticket_${name}[o] = 0;`,
        );
      }
      body.push('if (threadIdx.x == 0) {', indent([resLine, ...epilogue, ...(nFinal ? ['jx_res = res;'] : [])], 2), '}');
      if (nFinal) body.push('__syncthreads();', '{', indent(['const ' + rt + ' res = jx_res;', ...finalLoop('threadIdx.x', BLOCK)], 2), '}');
      body.push('__syncthreads();');
      lines.push(`for (jx_index o = blockIdx.x; o < ${int(p.nOut)}; o += gridDim.x) {`, indent(body, 2), '}');
      grid = [Math.max(1, Math.min(p.nOut, SM_COUNT * 64)), chunks, 1];
      strategy = chunks > 1 ? `reduction, two-stage: ${chunks} blocks per output, the last merges their partials` : 'reduction, one block per output (shuffles, then shared memory)';
      break;
    }
    case 'column': {
      const tiles = Math.ceil(p.nOut / 32);
      block = [32, 8, 1];
      lines.push('const int tx = threadIdx.x, ty = threadIdx.y;');
      lines.push(...st.parts.map((q, i) => `__shared__ ${q.type} jx_col${i}[8][32];`));
      if (chunks > 1) lines.push('__shared__ int jx_last;');
      if (nFinal) lines.push(`__shared__ ${rt} jx_colres[32];`);
      const combine = [
        ...st.parts.map((q, i) => `jx_col${i}[ty][tx] = ${q.name};`),
        '__syncthreads();',
        `if (ty == 0) { for (int y = 1; y < 8; ++y) ${st.merge(st.parts.map((_, i) => `jx_col${i}[y][tx]`))} }`,
        '__syncthreads();',
      ];
      const body = [
        'const jx_index o = tile * 32 + tx;',
        `const bool live = o < ${int(p.nOut)};`,
        ...bases('o'), ...chunkRange, ...declare,
        'if (live)', ...loop('j', 'lo + ty', 'hi', 8, visit('j')),
        ...combine,
      ];
      if (chunks > 1) {
        body.push(
          `if (ty == 0 && live) { ${writePartials('o', 'blockIdx.y').join(' ')} }`,
          '__threadfence();',
          '__syncthreads();',
          `if (tx == 0 && ty == 0) jx_last = atomicAdd(&jx_ticket_${name}[tile], 1u) == ${chunks - 1};`,
          '__syncthreads();',
          'if (!jx_last) continue; // another block of this tile finishes it',
          '__threadfence();',
          ...reset,
          'if (live)', ...loop('c', 'ty', int(chunks), 8, [readPartials('o', 'c')]),
          ...combine,
          `if (tx == 0 && ty == 0) jx_ticket_${name}[tile] = 0;`,
        );
      }
      body.push('if (ty == 0 && live) {', indent([resLine, ...epilogue, ...(nFinal ? ['jx_colres[tx] = res;'] : [])], 2), '}');
      if (nFinal) body.push('__syncthreads();', 'if (live) {', indent([`const ${rt} res = jx_colres[tx];`, ...finalLoop('ty', 8)], 2), '}');
      body.push('__syncthreads();');
      lines.push(`for (jx_index tile = blockIdx.x; tile < ${int(tiles)}; tile += gridDim.x) {`, indent(body, 2), '}');
      grid = [Math.max(1, Math.min(tiles, SM_COUNT * 64)), chunks, 1];
      strategy = `column reduction, 32 outputs x 8 lanes per block${chunks > 1 ? `, two-stage over ${chunks} blocks per tile` : ''}`;
      break;
    }
  }
  return {
    buffers,
    body: indent(lines, 2),
    ...(globals ? { globals } : {}),
    grid,
    block,
    strategy: `${strategy} (${idx} indices)`,
    decisions: [decision],
  };
}
