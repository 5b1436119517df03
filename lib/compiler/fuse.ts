// Fusion: turns a jaxpr into a program of fused kernels (after XLA's loop,
// input and output fusion, simplified), after CSE and DCE (passes.ts).
// Elementwise equations (with broadcast_in_dim, transpose, iota and size-1
// reshapes, which only remap coordinates) never get buffers of their own: a
// kernel evaluates them as one scalar Expr DAG per output element, reading
// the values it needs from buffers through strided views. Buffers exist only for "materialized" values: arguments,
// outputs, results of reductions and of every other primitive (dot, gather,
// ...: one kernel each, via lower.ts), the operands those primitives need,
// and expensive elementwise values that would otherwise be computed twice.
//
// Kernels ("units") are formed per materialized value and then merged:
//  - elementwise consumers of a dot's product (bias, activation, cast) are
//    applied as the dot stores it, when their operands are [B, M, N] views;
//  - an elementwise value a reduction reads in element order becomes a side
//    output of it (written where the reduction reads it);
//  - elementwise consumers of a reduction's result become its epilogue;
//  - elementwise values over a reduction's input space that read its result
//    (softmax's exp(x - max) / sum) become its final outputs, computed in a
//    second pass over each output element's inputs;
//  - elementwise units over the same shape become one multi-output kernel.
// Every merge is kept only if the kernel graph stays acyclic. Cheap
// elementwise values may be recomputed by several kernels; an expensive one
// (transcendental, division) that would be computed twice, or once per
// element of a broadcast, is materialized and fusion runs again. The one
// recompute allowed is a second pass re-evaluating its own prologue's values.
import { type DType, isHalf, itemsize } from '../core/dtype.js';
import {
  type MemoryKind, type Primitive, type PrimitiveParams, type ShapedArray,
} from '../core/primitives.js';
import { type Shape, shapesEqual, sizeOf, stridesOf } from '../core/shape.js';
import { type Atom, type Jaxpr, type JaxprEqn, Literal, Var, eqnHasEffects } from '../trace/jaxpr.js';
import type { Expr, Kernel, ReduceOp } from './kernel-ir.js';
import { KernelGraph } from './kernel-graph.js';
import { type LowerTarget, type Plan, collapseAxes, lowerPrimitive } from './lower.js';
import { eliminateCommonSubexpressions, liveEquations } from './passes.js';
import { inlineCheckpoints } from './inline-checkpoints.js';
import { primitivesWith } from '../core/traits.js';
import { ELEMENTWISE_PRIMITIVES, isElementwisePrimitive, scalarExpr } from './scalar-expr.js';

// ---- the program fusion produces (run by executable.ts) ----

export interface ProgramBuffer {
  /** argument/constant: supplied per call (index into the flat arguments / the jaxpr's consts); literal: a constant scalar */
  kind: 'argument' | 'constant' | 'literal' | 'value' | 'temp';
  dtype: DType;
  /** elements */
  size: number;
  /** where the buffer lives (the aval's memory space; literals and kernel temporaries: 'device') */
  memoryKind: MemoryKind;
  index?: number;
  value?: number;
}

/** A kernel launch. */
export interface ProgramLaunch {
  kind: 'launch';
  kernel: Kernel;
  /** program buffer ids, in the kernel's buffer order */
  buffers: number[];
  params: number[];
  /** the primitives this kernel computes, for dumps and tests */
  label: string;
}

/**
 * Control flow (scan, while, cond), run by the executable over nested
 * programs of its jaxprs; or a host callback (debug_callback, pure_callback),
 * which the host runs on its inputs once they are computed.
 */
export interface ProgramCall {
  kind: 'call';
  eqn: JaxprEqn;
  inputs: number[];
  outputs: number[];
  label: string;
}

/** A device_put: a byte copy, between memory kinds or within one (a transfer on the copy streams on a GPU). */
export interface ProgramCopy {
  kind: 'copy';
  src: number;
  dst: number;
  label: string;
}

export type ProgramStep = ProgramLaunch | ProgramCall | ProgramCopy;

export type ProgramOutput = { buffer: number; aval: ShapedArray } | { literal: number; aval: ShapedArray };

export interface Program {
  buffers: ProgramBuffer[];
  /** in execution order */
  steps: ProgramStep[];
  outputs: ProgramOutput[];
}

/** The memory kind of a value's aval ('device' unless it says otherwise). */
export const memoryKindOf = (aval: ShapedArray): MemoryKind => (aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device';

// ---- classification ----

const ELEMENTWISE = new Set<Primitive>([...ELEMENTWISE_PRIMITIVES, 'iota', 'broadcast_in_dim', 'transpose']);

const REDUCTIONS: Partial<Record<Primitive, ReduceOp>> = {
  reduce_sum: 'sum', reduce_prod: 'prod', reduce_max: 'max', reduce_min: 'min', reduce_and: 'and', reduce_or: 'or',
  argmax: 'argmax', argmin: 'argmin',
};

// Run by the executable over nested programs (executable.ts), or on the host (callbacks): 'call' steps.
const CALLS = new Set<Primitive>(['scan', 'while', 'cond', 'debug_callback', 'pure_callback']);

// What XLA calls expensive: worth a buffer rather than a second evaluation (core/traits.ts).
const EXPENSIVE = primitivesWith('expensive');

// Ops whose half-precision result is already representable: no rounding node (core/traits.ts).
const EXACT_IN_HALF = primitivesWith('exactInHalf');

/**
 * The most buffers one fused kernel may take (inputs and outputs). The native launchers take at most 256 and a
 * CUDA launch's parameter space is bounded; a kernel fusing more (a sum of 500 arguments) is split by
 * materializing values inside it.
 */
const MAX_KERNEL_BUFFERS = 128;

/** A dot epilogue recomputes expensive values instead of reading them from a buffer once K is at least this. */
const RECOMPUTE_IN_GEMM_MIN_K = 64;

/** The number of multiply-adds per product element of a dot_general. */
function contractionSize(eqn: JaxprEqn): number {
  const [[lc]] = (eqn.params as PrimitiveParams['dot_general']).dimensionNumbers;
  const lhs = eqn.inputs[0]!.aval.shape;
  return lc.reduce((n, d) => n * lhs[d]!, 1);
}

type EqnClass = 'elementwise' | 'reduce' | 'alias' | 'opaque';

/** For each axis of `to`, the axis of `from` it is (size-1 axes: -1), when `to` only adds or drops size-1 axes; else null. */
function unitAxes(from: Shape, to: Shape): number[] | null {
  const real = from.map((d, i) => [d, i] as const).filter(([d]) => d !== 1);
  const out: number[] = [];
  let k = 0;
  for (const d of to) {
    if (d === 1) {
      out.push(-1);
      continue;
    }
    const next = real[k++];
    if (!next || next[0] !== d) return null;
    out.push(next[1]);
  }
  return k === real.length ? out : null;
}

const identityMap = (rank: number): number[] => Array.from({ length: rank }, (_, i) => i);

/** The buffers a kernel binds: the values it reads and the values it produces. */
const kernelBuffers = (a: Analysis): number => a.reads.size + a.produces.length;

/** Element strides over the space axes (embedded into `viewRank` kernel axes) of reading a row-major `shape` through `map`. */
function viewStrides(shape: Shape, map: readonly number[], embed: readonly number[], viewRank: number): number[] {
  const strides = new Array<number>(viewRank).fill(0);
  const rowMajor = stridesOf(shape);
  shape.forEach((d, a) => {
    if (d === 1) return;
    const axis = map[a]!;
    if (axis < 0) throw new Error(`fuse: internal error: axis ${a} of size ${d} has no coordinate`);
    strides[embed[axis]!]! += rowMajor[a]!;
  });
  return strides;
}

/** Whether a view over `space` visits elements in row-major order (size-1 axes ignored). */
function isContiguous(strides: readonly number[], space: Shape): boolean {
  const rowMajor = stridesOf(space);
  return space.every((d, i) => d === 1 || strides[i] === rowMajor[i]);
}

/**
 * The [B, M, N] strides of a view over a dot_general's output (batch, lhs free, rhs free axes, in that order),
 * or null when an axis group's strides do not merge into one stride.
 */
function dotEpilogueView(eqn: JaxprEqn, strides: readonly number[]): number[] | null {
  const shape = eqn.outVars[0]!.aval.shape;
  const [[lc], [lb]] = (eqn.params as PrimitiveParams['dot_general']).dimensionNumbers;
  const nb = lb.length;
  const nm = eqn.inputs[0]!.aval.shape.length - nb - lc.length;
  const group = (from: number, to: number): number | null => {
    const live = identityMap(shape.length).slice(from, to).filter((d) => shape[d] !== 1);
    for (let i = 0; i + 1 < live.length; i++) {
      if (strides[live[i]!] !== strides[live[i + 1]!]! * shape[live[i + 1]!]!) return null;
    }
    return live.length ? strides[live[live.length - 1]!]! : 0;
  };
  const view = [group(0, nb), group(nb, nb + nm), group(nb + nm, shape.length)];
  return view.every((s) => s !== null) ? (view as number[]) : null;
}

// ---- kernels under construction ----

interface Leaf {
  base: Var;
  dtype: DType;
  /** over the kernel's view axes */
  strides: number[];
}

class KernelInputs {
  readonly list: Leaf[] = [];
  #index = new Map<string, number>();
  constructor(private readonly fusion: Fusion) {}
  add(base: Var, dtype: DType, strides: number[]): number {
    const key = `${this.fusion.id(base)}|${strides.join(',')}`;
    let i = this.#index.get(key);
    if (i === undefined) {
      i = this.list.length;
      this.list.push({ base, dtype, strides });
      this.#index.set(key, i);
    }
    return i;
  }
}

/** Builds the Expr of values over one index space, reading materialized values as kernel inputs. */
class Expander {
  /** (value, map) pairs evaluated here, for the duplication check */
  readonly instantiated: { v: Var; reuse: boolean }[] = [];
  readonly primitives = new Set<JaxprEqn>();
  /** a value this kernel computes is also read from its own buffer: the kernel is invalid */
  selfRead = false;
  usesIota = false;
  #memo = new Map<string, Expr>();

  constructor(
    private readonly fusion: Fusion,
    private readonly space: Shape,
    /** space axis → kernel view axis */
    private readonly embed: readonly number[],
    private readonly viewRank: number,
    private readonly inputs: KernelInputs,
    /** materialized values computed by this kernel, evaluated in place when read in element order */
    private readonly members: ReadonlySet<Var>,
    /** values with a fixed in-kernel expression (a reduction's result) */
    private readonly bound: ReadonlyMap<Var, Expr>,
    private readonly iota: (viewAxis: number, dtype: DType) => Expr,
    /** the space strides at which `bound` values are in place (default: row-major over the space) */
    private readonly boundStrides?: readonly number[],
  ) {}

  expand(atom: Atom, map: readonly number[]): Expr {
    if (atom instanceof Literal) return { op: 'literal', value: atom.value, dtype: atom.aval.dtype };
    if (this.fusion.materialized.has(atom)) {
      const key = `r${this.fusion.id(atom)}|${map.join(',')}`;
      let e = this.#memo.get(key);
      if (!e) {
        e = this.#read(atom, map);
        this.#memo.set(key, e);
      }
      return e;
    }
    return this.compute(atom, map);
  }

  /** The value of a non-materialized (or member) value under a map. */
  compute(v: Var, map: readonly number[]): Expr {
    const key = `c${this.fusion.id(v)}|${map.join(',')}`;
    let e = this.#memo.get(key);
    if (!e) {
      e = this.#node(v, map);
      this.#memo.set(key, e);
    }
    return e;
  }

  #read(v: Var, map: readonly number[]): Expr {
    const base = this.fusion.base(v);
    const bound = this.bound.get(base);
    if (bound || this.members.has(base)) {
      const spaceStrides = viewStrides(v.aval.shape, map, identityMap(this.space.length), this.space.length);
      if (bound && this.boundStrides) {
        // a reduction's output-space value, read where its own output element's inputs are
        if (this.space.every((d, i) => d === 1 || spaceStrides[i] === this.boundStrides![i])) return bound;
      } else {
        const inPlace = sizeOf(v.aval.shape) === sizeOf(this.space) && isContiguous(spaceStrides, this.space) ? unitAxes(this.space, base.aval.shape) : null;
        if (inPlace) return bound ?? this.compute(base, inPlace);
      }
      this.selfRead = true;
    }
    const index = this.inputs.add(base, v.aval.dtype, viewStrides(v.aval.shape, map, this.embed, this.viewRank));
    return { op: 'input', index, dtype: v.aval.dtype };
  }

  #node(v: Var, map: readonly number[]): Expr {
    const eqn = this.fusion.producerOf(v);
    if (!eqn || this.fusion.classify(eqn) !== 'elementwise') {
      throw new Error(`fuse: internal error: ${eqn?.primitive ?? 'an argument'} is not elementwise but was not materialized`);
    }
    this.instantiated.push({ v, reuse: sizeOf(v.aval.shape) < sizeOf(this.space) });
    this.primitives.add(eqn);
    const out = v.aval;
    const prim = eqn.primitive;
    const arg = (i: number): Expr => {
      const a = eqn.inputs[i]!;
      return this.expand(a, a.aval.shape.length === 0 ? [] : map);
    };
    let e: Expr;
    if (prim === 'broadcast_in_dim') {
      const { broadcastDimensions } = eqn.params as PrimitiveParams['broadcast_in_dim'];
      const x = eqn.inputs[0]!;
      return this.expand(x, x.aval.shape.map((d, a) => (d === 1 ? -1 : map[broadcastDimensions[a]!]!)));
    } else if (prim === 'transpose') {
      // out axis i is operand axis permutation[i]: a coordinate permutation, read through a strided view
      const { permutation } = eqn.params as PrimitiveParams['transpose'];
      const x = eqn.inputs[0]!;
      return this.expand(x, x.aval.shape.map((d, a) => (d === 1 ? -1 : map[permutation.indexOf(a)]!)));
    } else if (prim === 'reshape' || prim === 'squeeze') {
      const x = eqn.inputs[0]!;
      const axes = unitAxes(out.shape, x.aval.shape)!;
      return this.expand(x, axes.map((a) => (a < 0 ? -1 : map[a]!)));
    } else if (prim === 'iota') {
      const { dimension } = eqn.params as PrimitiveParams['iota'];
      const axis = map[dimension]!;
      if (axis < 0) return { op: 'literal', value: 0, dtype: out.dtype };
      this.usesIota = true;
      e = this.iota(this.embed[axis]!, out.dtype);
    } else if (prim === 'copy') {
      return arg(0);
    } else if (isElementwisePrimitive(prim)) {
      e = scalarExpr(prim, eqn.inputs.map((_, i) => arg(i)), eqn.params as never, out.dtype);
    } else {
      throw new Error(`fuse: internal error: no fused form for ${prim}`);
    }
    // 16-bit floats compute in float32; eager stores round every result, so fused intermediates round too.
    if (isHalf(out.dtype) && !EXACT_IN_HALF.has(prim)) {
      e = { op: 'unary', name: 'reduce_precision', x: e, dtype: out.dtype, param: out.dtype === 'float16' ? [5, 10] : [8, 7] };
    }
    return e;
  }
}

// ---- units: the kernels being formed ----

type Unit =
  | { kind: 'elementwise'; space: Shape; members: Var[]; order: number }
  /** sides: input-space values written while reducing; epilogue: output-space consumers; finals: input-space values of a second pass */
  | { kind: 'reduce'; eqn: JaxprEqn; result: Var; sides: Var[]; epilogue: Var[]; finals: Var[]; order: number }
  /** a dot_general with elementwise consumers of its product fused into its store */
  | { kind: 'dot'; eqn: JaxprEqn; epilogue: Var[]; order: number }
  | { kind: 'opaque'; eqn: JaxprEqn; order: number };

interface Analysis {
  valid: boolean;
  reads: Set<Var>;
  produces: Var[];
  expanders: Expander[];
  inputs?: KernelInputs;
  /** elementwise: member exprs; reduce: the sides, epilogue and final exprs; dot: the epilogue exprs */
  exprs: Map<Var, Expr>;
  prologue?: Expr;
  /** the reduction's result or the dot's product as its kernel reads it (index fixed by emit) */
  result?: Expr;
  /** a reduction's second pass, which may recompute what its prologue computed */
  finalPass?: Expander;
  iotaAxes?: number[];
}

class Fusion {
  readonly materialized = new Set<Var>();
  #ids = new Map<Var, number>();
  #producer = new Map<Var, JaxprEqn>();
  #eqnIndex = new Map<JaxprEqn, number>();
  #analyses = new WeakMap<Unit, Analysis>();
  /** Values brought from pinned_host to the device inside the program, and values computed from them. */
  #hostDerived = new Set<Var>();
  /**
   * Equations with effects run in program order: each reads a token the one
   * before it writes, so the kernel graph orders them as it orders data (a
   * merge elsewhere never swaps two prints). Tokens get no buffers.
   */
  #effectTokens = new Map<JaxprEqn, { after: Var | null; token: Var }>();
  readonly eqns: JaxprEqn[];

  constructor(readonly jaxpr: Jaxpr, readonly target: LowerTarget) {
    this.eqns = liveEquations(jaxpr);
    let previous: Var | null = null;
    this.eqns.forEach((e, i) => {
      this.#eqnIndex.set(e, i);
      for (const v of e.outVars) this.#producer.set(v, e);
      const params = e.params as Partial<PrimitiveParams['device_put']>;
      if ((e.primitive === 'device_put' && params.srcKind === 'pinned_host' && params.dstKind === 'device') || e.inputs.some((x) => x instanceof Var && this.#hostDerived.has(x))) {
        for (const v of e.outVars) this.#hostDerived.add(v);
      }
      if (eqnHasEffects(e)) {
        const token = new Var({ shape: [], dtype: 'bool', weakType: false });
        this.#effectTokens.set(e, { after: previous, token });
        previous = token;
      }
    });
  }

  id(v: Var): number {
    let i = this.#ids.get(v);
    if (i === undefined) {
      i = this.#ids.size;
      this.#ids.set(v, i);
    }
    return i;
  }

  producerOf(v: Var): JaxprEqn | undefined {
    return this.#producer.get(v);
  }

  classify(e: JaxprEqn): EqnClass {
    // a bitcast that changes the width reads several elements per output element (or one per several): its own kernel
    if (e.primitive === 'bitcast_convert_type' && itemsize(e.inputs[0]!.aval.dtype) !== itemsize(e.outVars[0]!.aval.dtype)) return 'opaque';
    if (ELEMENTWISE.has(e.primitive)) return 'elementwise';
    if (e.primitive === 'reshape' || e.primitive === 'squeeze') {
      return unitAxes(e.outVars[0]!.aval.shape, e.inputs[0]!.aval.shape) ? 'elementwise' : 'alias';
    }
    if (REDUCTIONS[e.primitive]) return 'reduce';
    return 'opaque';
  }

  /** The value whose buffer holds v: reshapes of materialized values share their operand's buffer. */
  base(v: Var): Var {
    const e = this.#producer.get(v);
    if (e && (e.primitive === 'reshape' || e.primitive === 'squeeze')) {
      const x = e.inputs[0]!;
      if (x instanceof Var && this.materialized.has(x)) return this.base(x);
    }
    return v;
  }

  /** Values that must live in buffers whatever the fusion decisions. */
  materializeRequired(): void {
    const add = (a: Atom) => {
      if (a instanceof Var) this.materialized.add(a);
    };
    this.jaxpr.inVars.forEach(add);
    this.jaxpr.constVars.forEach(add);
    this.jaxpr.outs.forEach(add);
    for (const e of this.eqns) {
      const c = this.classify(e);
      if (c === 'reduce' || c === 'opaque' || c === 'alias') e.outVars.forEach(add);
      if (c === 'opaque' || c === 'alias') e.inputs.forEach(add);
    }
  }

  run(): Program {
    this.materializeRequired();
    for (let round = 0; ; round++) {
      const units = this.formUnits();
      const extra = [...this.duplicatedExpensiveValues(units), ...this.splitsOfWideKernels(units)];
      if (extra.length === 0 || round > this.eqns.length) return this.emit(units);
      extra.forEach((v) => this.materialized.add(v));
    }
  }

  // ---- forming and merging units ----

  formUnits(): Unit[] {
    const initial: Unit[] = [];
    this.eqns.forEach((e, order) => {
      const c = this.classify(e);
      if (c === 'opaque') initial.push({ kind: 'opaque', eqn: e, order });
      else if (c === 'reduce') initial.push({ kind: 'reduce', eqn: e, result: e.outVars[0]!, sides: [], epilogue: [], finals: [], order });
      else if (c === 'elementwise') {
        const v = e.outVars[0]!;
        if (this.materialized.has(v) && this.base(v) === v) initial.push({ kind: 'elementwise', space: v.aval.shape, members: [v], order });
      }
    });
    const graph = new KernelGraph<Unit, Var>(initial, { reads: (u) => this.analyze(u).reads, produces: (u) => this.analyze(u).produces });
    const merge = (a: Unit, b: Unit, merged: Unit) =>
      this.analyze(merged).valid && kernelBuffers(this.analyze(merged)) <= MAX_KERNEL_BUFFERS && this.hostStateParts(merged) <= 1 && graph.tryMerge(a, b, merged);
    const elementwise = () => graph.kernels.filter((u): u is Extract<Unit, { kind: 'elementwise' }> => u.kind === 'elementwise');

    // Elementwise consumers of a dot's product (over its output shape) are applied as it stores it.
    for (const u of elementwise()) {
      const w = u.members[0]!;
      const reads = this.analyze(u).reads;
      for (const d of graph.producersFor(u)) {
        if (d.kind !== 'dot' && !(d.kind === 'opaque' && d.eqn.primitive === 'dot_general')) continue;
        const epilogue = d.kind === 'dot' ? d.epilogue : [];
        if (!shapesEqual(d.eqn.outVars[0]!.aval.shape, w.aval.shape) || ![d.eqn.outVars[0]!, ...epilogue].some((x) => reads.has(x))) continue;
        if (merge(u, d, { kind: 'dot', eqn: d.eqn, epilogue: [...epilogue, w], order: d.order })) break;
      }
    }
    // An elementwise value a reduction reads in element order becomes its side output.
    for (const u of elementwise()) {
      const v = u.members[0]!;
      for (const r of graph.readersOf(u)) {
        if (r.kind !== 'reduce' || !shapesEqual(r.eqn.inputs[0]!.aval.shape, v.aval.shape) || !this.readsInOrder(r, v)) continue;
        if (merge(u, r, { ...r, sides: [...r.sides, v] })) break;
      }
    }
    // Elementwise consumers of a reduction's result (over its output shape) become its epilogue.
    for (const u of elementwise()) {
      const w = u.members[0]!;
      const reads = this.analyze(u).reads;
      for (const r of graph.producersFor(u)) {
        if (r.kind !== 'reduce' || !unitAxes(r.result.aval.shape, w.aval.shape)) continue;
        if (![r.result, ...r.epilogue].some((x) => reads.has(x))) continue;
        if (merge(u, r, { ...r, epilogue: [...r.epilogue, w] })) break;
      }
    }
    // Elementwise values over a reduction's input space that read its result (row softmax's exp(x - max) / sum)
    // become final outputs, computed in a second pass over each output element's inputs once its reduction is done.
    for (const u of elementwise()) {
      const v = u.members[0]!;
      const reads = this.analyze(u).reads;
      for (const r of graph.producersFor(u)) {
        if (r.kind !== 'reduce' || !shapesEqual(r.eqn.inputs[0]!.aval.shape, v.aval.shape)) continue;
        if (![r.result, ...r.epilogue].some((x) => reads.has(x))) continue;
        if (merge(u, r, { ...r, finals: [...r.finals, v] })) break;
      }
    }
    // Elementwise units over the same shape become one multi-output kernel (tried against the last few such units).
    const byShape = new Map<string, Extract<Unit, { kind: 'elementwise' }>[]>();
    for (const u of elementwise().sort((a, b) => a.order - b.order)) {
      const key = u.space.join(',');
      const earlier = (byShape.get(key) ?? []).filter((g) => graph.has(g));
      let merged: Extract<Unit, { kind: 'elementwise' }> = u;
      for (const g of earlier.slice(-8)) {
        const m: Extract<Unit, { kind: 'elementwise' }> = { kind: 'elementwise', space: g.space, members: [...g.members, ...u.members], order: g.order };
        if (merge(u, g, m)) {
          merged = m;
          earlier.splice(earlier.indexOf(g), 1);
          break;
        }
      }
      earlier.push(merged);
      byShape.set(key, earlier);
    }
    return graph.kernels;
  }

  /**
   * How many independent parts of a kernel read host-derived values (the offloaded optimizer state put on the
   * device, and what is computed from it). Parts are the kernel's values joined by the full-size buffers they read
   * and by each other; a merge that leaves two such parts in one kernel is refused, so each parameter's state is
   * brought in, updated and sent back by its own kernels and the schedule can hold one parameter's state at a time.
   */
  hostStateParts(u: Unit): number {
    const a = this.analyze(u);
    const space = sizeOf(u.kind === 'elementwise' ? u.space : u.kind === 'reduce' ? u.eqn.inputs[0]!.aval.shape : u.eqn.outVars[0]!.aval.shape);
    const large = (v: Var) => sizeOf(v.aval.shape) >= space && space > 1;
    if (![...a.reads, ...a.produces].some((v) => this.#hostDerived.has(v) && large(v))) return 0;
    const parent = new Map<Var, Var>();
    const find = (v: Var): Var => {
      const p = parent.get(v) ?? v;
      if (p === v) return v;
      const root = find(p);
      parent.set(v, root);
      return root;
    };
    const union = (x: Var, y: Var) => parent.set(find(x), find(y));
    for (const p of a.produces) {
      // the leaves p is computed from: materialized values, reached through the unmaterialized elementwise ones
      const seen = new Set<Var>();
      const stack: Var[] = [];
      const visit = (x: Atom) => {
        if (!(x instanceof Var) || seen.has(x)) return;
        seen.add(x);
        if (this.materialized.has(x)) {
          if (large(x)) union(p, this.base(x));
        } else stack.push(x);
      };
      this.#producer.get(p)?.inputs.forEach(visit);
      while (stack.length) this.#producer.get(stack.pop()!)?.inputs.forEach(visit);
    }
    const hostParts = new Set<Var>();
    for (const v of [...parent.keys(), ...a.produces]) if (this.#hostDerived.has(v) && large(v)) hostParts.add(find(v));
    return hostParts.size;
  }

  /** Whether a reduction reads v's buffer in its input's element order. */
  readsInOrder(r: Extract<Unit, { kind: 'reduce' }>, v: Var): boolean {
    const a = this.analyze(r);
    const space = r.eqn.inputs[0]!.aval.shape;
    return a.inputs!.list.some((l) => l.base === v && sizeOf(v.aval.shape) === sizeOf(space) && isContiguous(l.strides, space));
  }

  analyze(u: Unit): Analysis {
    let a = this.#analyses.get(u);
    if (!a) {
      a = u.kind === 'elementwise' ? this.#analyzeElementwise(u)
        : u.kind === 'reduce' ? this.#analyzeReduce(u)
        : u.kind === 'dot' ? this.#analyzeDot(u)
        : this.#analyzeOpaque(u);
      this.#analyses.set(u, a);
    }
    return a;
  }

  #analyzeOpaque(u: Extract<Unit, { kind: 'opaque' }>): Analysis {
    const reads = new Set<Var>();
    for (const x of u.eqn.inputs) if (x instanceof Var) reads.add(this.base(x));
    const produces = [...u.eqn.outVars];
    const effect = this.#effectTokens.get(u.eqn);
    if (effect) {
      if (effect.after) reads.add(effect.after);
      produces.push(effect.token);
    }
    return { valid: true, reads, produces, expanders: [], exprs: new Map() };
  }

  #analyzeElementwise(u: Extract<Unit, { kind: 'elementwise' }>): Analysis {
    const rank = u.space.length;
    const inputs = new KernelInputs(this);
    const ex = new Expander(this, u.space, identityMap(rank), rank, inputs, new Set(u.members), new Map(), (axis, dtype) => ({ op: 'iota', axis, dtype }));
    const exprs = new Map(u.members.map((m) => [m, ex.compute(m, identityMap(rank))] as const));
    return {
      valid: !ex.selfRead,
      reads: new Set(inputs.list.map((l) => l.base)),
      produces: [...u.members],
      expanders: [ex],
      inputs,
      exprs,
    };
  }

  #analyzeDot(u: Extract<Unit, { kind: 'dot' }>): Analysis {
    const product = u.eqn.outVars[0]!;
    const space = product.aval.shape;
    const rank = space.length;
    const inputs = new KernelInputs(this);
    // The product's input index is fixed once all inputs are known (emit patches it).
    const result: Expr = { op: 'input', index: -1, dtype: product.aval.dtype };
    // the dot kernel has no coordinates for iota: an epilogue using it is not formed (usesIota)
    const ex = new Expander(this, space, identityMap(rank), rank, inputs, new Set(u.epilogue), new Map([[product, result]]), (axis, dtype) => ({ op: 'iota', axis, dtype }));
    const exprs = new Map(u.epilogue.map((w) => [w, ex.compute(w, identityMap(rank))] as const));
    const reads = new Set<Var>();
    for (const x of u.eqn.inputs) if (x instanceof Var) reads.add(this.base(x));
    for (const l of inputs.list) reads.add(l.base);
    return {
      valid: !ex.usesIota && !ex.selfRead && inputs.list.every((l) => dotEpilogueView(u.eqn, l.strides) !== null),
      reads,
      produces: [product, ...u.epilogue],
      expanders: [ex],
      inputs,
      exprs,
      result,
    };
  }

  #analyzeReduce(u: Extract<Unit, { kind: 'reduce' }>): Analysis {
    const operand = u.eqn.inputs[0]!;
    const space = operand.aval.shape;
    const rank = space.length;
    const axes = (u.eqn.params as { axes: number[] }).axes;
    const outer = identityMap(rank).filter((a) => !axes.includes(a));
    const inputs = new KernelInputs(this);
    const iotaAxes: number[] = [];
    const iota = (axis: number, dtype: DType): Expr => {
      if (!iotaAxes.includes(axis)) iotaAxes.push(axis);
      return { op: 'iota', axis, dtype };
    };
    const pro = new Expander(this, space, identityMap(rank), rank, inputs, new Set(u.sides), new Map(), iota);
    const prologue = pro.expand(operand, identityMap(rank));
    const exprs = new Map<Var, Expr>();
    for (const s of u.sides) exprs.set(s, pro.compute(s, identityMap(rank)));
    // The result's input index is fixed once all inputs are known (emit patches it).
    const result: Expr = { op: 'input', index: -1, dtype: u.result.aval.dtype };
    const outShape = u.result.aval.shape;
    const epi = new Expander(this, outShape, outer, rank, inputs, new Set(u.epilogue), new Map([[u.result, result]]), iota);
    for (const w of u.epilogue) exprs.set(w, epi.compute(w, unitAxes(outShape, w.aval.shape)!));
    // The second pass reads the result and epilogue values of its own output element (zero strides on the reduced axes).
    const outStrides = stridesOf(outShape);
    const naturalStrides = space.map((_, d) => (outer.includes(d) ? outStrides[outer.indexOf(d)]! : 0));
    const bound = new Map<Var, Expr>([[u.result, result], ...u.epilogue.map((w) => [w, exprs.get(w)!] as const)]);
    const fin = new Expander(this, space, identityMap(rank), rank, inputs, new Set([...u.sides, ...u.finals]), bound, iota, naturalStrides);
    for (const v of u.finals) exprs.set(v, fin.compute(v, identityMap(rank)));
    return {
      valid: !pro.selfRead && !epi.selfRead && !fin.selfRead,
      reads: new Set(inputs.list.map((l) => l.base)),
      produces: [u.result, ...u.sides, ...u.epilogue, ...u.finals],
      expanders: [pro, epi, fin],
      inputs,
      exprs,
      prologue,
      result,
      finalPass: fin,
      iotaAxes,
    };
  }

  /** Expensive elementwise values the current units evaluate more than once per element. */
  duplicatedExpensiveValues(units: Unit[]): Var[] {
    const count = new Map<Var, number>();
    for (const u of units) {
      const a = this.analyze(u);
      // A reduction's second pass may recompute its prologue's values per element (XLA's softmax recomputes exp):
      // a buffer for them would cost a write and a read, and another kernel.
      const prologueValues = new Set(a.finalPass ? a.expanders[0]!.instantiated.filter((i) => !i.reuse).map((i) => i.v) : []);
      // A GEMM's epilogue recomputes an expensive value once per product element, next to K multiply-adds each:
      // cheaper than a buffer written by one kernel and kept alive until another reads it (gelu's tanh, saved from
      // the forward pass for the backward one, would hold a [M, N] buffer per layer).
      const computeBound = u.kind === 'dot' && contractionSize(u.eqn) >= RECOMPUTE_IN_GEMM_MIN_K;
      for (const ex of a.expanders) {
        for (const { v, reuse } of ex.instantiated) {
          if (this.materialized.has(v) || !EXPENSIVE.has(this.producerOf(v)!.primitive)) continue;
          if (computeBound && !reuse) continue;
          if (ex === a.finalPass && !reuse && prologueValues.has(v)) continue;
          count.set(v, (count.get(v) ?? 0) + (reuse ? 2 : 1));
        }
      }
    }
    return [...count].filter(([, n]) => n > 1).map(([v]) => v);
  }

  /** For each kernel with more than MAX_KERNEL_BUFFERS buffers, a value it computes to materialize: one near the middle of its expression, splitting its reads. */
  splitsOfWideKernels(units: Unit[]): Var[] {
    const splits: Var[] = [];
    for (const u of units) {
      const a = this.analyze(u);
      if (kernelBuffers(a) <= MAX_KERNEL_BUFFERS) continue;
      const candidates = [...new Set(a.expanders.flatMap((ex) => ex.instantiated.filter((i) => !i.reuse).map((i) => i.v)))].filter((v) => !this.materialized.has(v));
      const v = candidates[Math.floor(candidates.length / 2)];
      if (v) splits.push(v);
    }
    return splits;
  }

  // ---- emitting the program ----

  emit(units: Unit[]): Program {
    const buffers: ProgramBuffer[] = [];
    const steps: ProgramStep[] = [];
    const bufferOf = new Map<Var, number>();
    const newBuffer = (b: ProgramBuffer) => buffers.push(b) - 1;
    const spec = (v: Var) => ({ dtype: v.aval.dtype, size: sizeOf(v.aval.shape), memoryKind: memoryKindOf(v.aval) });
    this.jaxpr.inVars.forEach((v, index) => bufferOf.set(v, newBuffer({ kind: 'argument', ...spec(v), index })));
    this.jaxpr.constVars.forEach((v, index) => bufferOf.set(v, newBuffer({ kind: 'constant', ...spec(v), index })));
    const valueBuffer = (v: Var): number => {
      const base = this.base(v);
      let b = bufferOf.get(base);
      if (b === undefined) {
        b = newBuffer({ kind: 'value', ...spec(base) });
        bufferOf.set(base, b);
      }
      return b;
    };
    const literalBuffer = (l: Literal) => newBuffer({ kind: 'literal', dtype: l.aval.dtype, size: 1, memoryKind: 'device', value: l.value });

    const needed = new Set<Var>();
    for (const o of this.jaxpr.outs) if (o instanceof Var) needed.add(this.base(o));
    for (const u of units) for (const r of this.analyze(u).reads) needed.add(r);

    for (const u of units) {
      const a = this.analyze(u);
      const label = this.#label(u, a);
      if (u.kind === 'dot') {
        const fused = this.#dotLaunch(u, a, needed);
        if (!fused) continue;
        const operands = u.eqn.inputs.map((x) => (x instanceof Literal ? literalBuffer(x) : valueBuffer(x)));
        const ids = { input: [...operands, ...a.inputs!.list.map((l) => valueBuffer(l.base))], output: fused.outputs.map(valueBuffer), temp: [] as number[] };
        ids.temp = fused.plan.temps.map((t) => newBuffer({ kind: 'temp', dtype: t.dtype, size: t.size, memoryKind: memoryKindOf(u.eqn.outVars[0]!.aval) }));
        for (const l of fused.plan.launches) steps.push({ kind: 'launch', kernel: l.kernel, buffers: l.buffers.map((ref) => ids[ref.kind][ref.index]!), params: l.params, label });
        continue;
      }
      if (u.kind === 'opaque') {
        const e = u.eqn;
        const operand = (x: Atom) => (x instanceof Literal ? literalBuffer(x) : valueBuffer(x));
        if (CALLS.has(e.primitive)) {
          steps.push({ kind: 'call', eqn: e, inputs: e.inputs.map(operand), outputs: e.outVars.map(valueBuffer), label });
          continue;
        }
        if (e.primitive === 'device_put') {
          steps.push({ kind: 'copy', src: operand(e.inputs[0]!), dst: valueBuffer(e.outVars[0]!), label });
          continue;
        }
        const plan = lowerPrimitive(e.primitive, e.inputs.map((x) => x.aval as ShapedArray), e.outVars.map((v) => v.aval), e.params as never, this.target);
        if (plan.aliases.size) throw new Error(`fuse: internal error: ${e.primitive} lowers to an alias`);
        const inputIds = e.inputs.map((x) => (x instanceof Literal ? literalBuffer(x) : valueBuffer(x)));
        const outputIds = e.outVars.map(valueBuffer);
        const temps = plan.temps.map((t) => newBuffer({ kind: 'temp', dtype: t.dtype, size: t.size, memoryKind: memoryKindOf(e.outVars[0]!.aval) }));
        for (const l of plan.launches) {
          const ids = l.buffers.map((ref) => (ref.kind === 'input' ? inputIds : ref.kind === 'output' ? outputIds : temps)[ref.index]!);
          steps.push({ kind: 'launch', kernel: l.kernel, buffers: ids, params: l.params, label });
        }
        continue;
      }
      const inputIds = a.inputs!.list.map((l) => valueBuffer(l.base));
      if (u.kind === 'elementwise') {
        const stored = u.members.filter((m) => needed.has(m));
        if (stored.length === 0) continue;
        steps.push({ kind: 'launch', ...elementwiseLaunch(u.space, a, stored), buffers: [...stored.map(valueBuffer), ...inputIds], label });
        continue;
      }
      const launch = this.#reduceLaunch(u, a, needed);
      if (launch) steps.push({ kind: 'launch', kernel: launch.kernel, params: launch.params, buffers: [...launch.outputs.map(valueBuffer), ...inputIds], label });
    }

    const outputs = this.jaxpr.outs.map((o): ProgramOutput => (o instanceof Literal ? { literal: o.value, aval: o.aval } : { buffer: valueBuffer(o), aval: o.aval }));
    return { buffers, steps, outputs };
  }

  /** The dot's eager plan (operand transposes, then the dot) with the epilogue fused into the dot; outputs: the values it stores. */
  #dotLaunch(u: Extract<Unit, { kind: 'dot' }>, a: Analysis, needed: Set<Var>): { plan: Plan; outputs: Var[] } | null {
    const e = u.eqn;
    const product = e.outVars[0]!;
    const outputs = [product, ...u.epilogue].filter((w) => needed.has(w));
    if (outputs.length === 0) return null;
    const plan = lowerPrimitive('dot_general', e.inputs.map((x) => x.aval as ShapedArray), [product.aval], e.params as PrimitiveParams['dot_general'], this.target);
    const inputs = a.inputs!.list;
    (a.result as { index: number }).index = inputs.length;
    const last = plan.launches[plan.launches.length - 1]!;
    if (last.kernel.kind !== 'dot') throw new Error(`fuse: internal error: dot_general lowers to a ${last.kernel.kind} kernel last`);
    const epilogue = {
      inputs: inputs.map((l) => ({ dtype: l.dtype })),
      outputs: outputs.map((w) => ({ dtype: w.aval.dtype, expr: w === product ? a.result! : a.exprs.get(w)! })),
    };
    plan.launches[plan.launches.length - 1] = {
      kernel: { ...last.kernel, epilogue },
      params: [...last.params, ...inputs.flatMap((l) => dotEpilogueView(e, l.strides)!)],
      buffers: [...outputs.map((_, j) => ({ kind: 'output' as const, index: j })), last.buffers[1]!, last.buffers[2]!, ...inputs.map((_, k) => ({ kind: 'input' as const, index: e.inputs.length + k }))],
    };
    return { plan, outputs };
  }

  #reduceLaunch(u: Extract<Unit, { kind: 'reduce' }>, a: Analysis, needed: Set<Var>): { kernel: Kernel; params: number[]; outputs: Var[] } | null {
    const e = u.eqn;
    const operand = e.inputs[0]!;
    const space = operand.aval.shape;
    const inputs = a.inputs!.list;
    const sides = u.sides.filter((s) => needed.has(s));
    const outs = [u.result, ...u.epilogue].filter((w) => needed.has(w));
    const finals = u.finals.filter((v) => needed.has(v));
    if (sides.length === 0 && outs.length === 0 && finals.length === 0) return null;
    const op = REDUCTIONS[e.primitive]!;
    const plain = a.prologue!.op === 'input' && inputs.length === 1 && a.iotaAxes!.length === 0 && isContiguous(inputs[0]!.strides, space);
    if (plain && sides.length === 0 && finals.length === 0 && outs.length === 1 && outs[0] === u.result) {
      // Nothing fused: the eager kernel (already compiled and cached) does it.
      const plan = lowerPrimitive(e.primitive, [{ ...operand.aval, shape: space } as ShapedArray], [u.result.aval], e.params as never, this.target);
      return { kernel: plan.launches[0]!.kernel, params: plan.launches[0]!.params, outputs: outs };
    }
    (a.result as { index: number }).index = inputs.length;
    const axes = [...(e.params as { axes: number[] }).axes].sort((x, y) => x - y);
    const outerAxes = identityMap(space.length).filter((d) => !axes.includes(d));
    const views = [
      ...inputs.map((l) => l.strides),
      ...sides.map(() => stridesOf(space)),
      ...finals.map(() => stridesOf(space)),
      ...a.iotaAxes!.map((axis) => space.map((_, d) => (d === axis ? 1 : 0))),
    ];
    const outer = collapseAxes(outerAxes.map((d) => space[d]!), views.map((v) => outerAxes.map((d) => v[d]!)));
    const inner = collapseAxes(axes.map((d) => space[d]!), views.map((v) => axes.map((d) => v[d]!)));
    const innerShape = inner.shape.length ? inner.shape : [1];
    const innerViews = inner.shape.length ? inner.views : views.map(() => [0]);
    const params = [
      sizeOf(u.result.aval.shape), sizeOf(axes.map((d) => space[d]!)),
      outer.shape.length, ...outer.shape, innerShape.length, ...innerShape,
      ...views.flatMap((_, k) => [...(outer.views[k] ?? []), ...innerViews[k]!]),
    ];
    const steps = innerShape.length === 1 ? innerViews.map((v) => v[0]) : [];
    const innerSteps = steps.length && steps.every((s) => s === 0 || s === 1) ? (steps as (0 | 1)[]) : undefined;
    const kernel: Kernel = {
      kind: 'reduce',
      op,
      inputDtype: operand.aval.dtype,
      outputDtype: u.result.aval.dtype,
      fused: {
        ...(innerSteps ? { innerSteps } : {}),
        inputs: inputs.map((l) => ({ dtype: l.dtype })),
        iotaAxes: a.iotaAxes!,
        prologue: a.prologue!,
        sideOutputs: sides.map((s) => ({ dtype: s.aval.dtype, expr: a.exprs.get(s)! })),
        outputs: outs.map((w) => ({ dtype: w.aval.dtype, expr: w === u.result ? a.result! : a.exprs.get(w)! })),
        ...(finals.length ? { finalOutputs: finals.map((v) => ({ dtype: v.aval.dtype, expr: a.exprs.get(v)! })) } : {}),
      },
    };
    return { kernel, params, outputs: [...outs, ...sides, ...finals] };
  }

  #label(u: Unit, a: Analysis): string {
    const eqns = new Set<JaxprEqn>();
    for (const ex of a.expanders) for (const e of ex.primitives) eqns.add(e);
    if (u.kind !== 'elementwise') eqns.add(u.eqn);
    return [...eqns].sort((x, y) => this.#eqnIndex.get(x)! - this.#eqnIndex.get(y)!).map((e) => e.primitive).join(' ');
  }
}

function elementwiseLaunch(space: Shape, a: Analysis, stored: Var[]): { kernel: Kernel; params: number[] } {
  const n = sizeOf(space);
  const rowMajor = stridesOf(space);
  const usesIota = a.expanders[0]!.usesIota;
  const access = a.inputs!.list.map((l) => {
    if (l.strides.every((s) => s === 0)) return 'scalar' as const;
    if (space.every((d, i) => d === 1 || l.strides[i] === rowMajor[i])) return 'contiguous' as const;
    return 'strided' as const;
  });
  const stridedViews = a.inputs!.list.filter((_, i) => access[i] === 'strided').map((l) => l.strides);
  let shape: number[];
  let views: number[][];
  if (usesIota) {
    shape = [...space];
    views = stridedViews;
  } else if (stridedViews.length) {
    ({ shape, views } = collapseAxes(space, stridedViews));
  } else {
    shape = [n];
    views = [];
  }
  const kernel: Kernel = {
    kind: 'elementwise',
    inputs: a.inputs!.list.map((l, i) => ({ dtype: l.dtype, access: access[i]! })),
    outputs: stored.map((m) => ({ dtype: m.aval.dtype, expr: a.exprs.get(m)! })),
  };
  return { kernel, params: [n, shape.length, ...shape, ...views.flatMap((v) => [0, ...v])] };
}

/**
 * Fuses a jaxpr into a program of kernels over argument, constant, literal, value and temporary buffers; `target`
 * picks the lowering of the few primitives whose launches differ per target (lower.ts LowerTarget).
 */
export function fuseJaxpr(jaxpr: Jaxpr, target: LowerTarget): Program {
  return new Fusion(eliminateCommonSubexpressions(inlineCheckpoints(jaxpr)), target).run();
}
