// Scheduling and buffer assignment (after XLA's BufferAssignment and heap
// simulator): a fused Program (fuse.ts) runs its steps in order; every
// intermediate buffer is live from the step that writes it to the last step
// that reads it, and all intermediates of one memory kind are packed into one
// arena at fixed, aligned offsets, reusing the space of dead buffers (greedy
// by size: the largest buffer first, each at the lowest offset that overlaps
// no buffer live at the same time). Outputs get their own allocations (they
// outlive the call), or the storage of a donated argument of the same dtype,
// size and memory kind whose last read comes before the output's first write.
// Control flow (scan / while / cond) runs nested plans of its jaxprs; a call
// step reserves scratch (the nested arenas and the loop's second carry
// buffers) in its caller's arena for the duration of the step. The plan is
// target-independent apart from alignment: the CPU runner (executable.ts)
// and cross-lowering for CUDA (stages.ts) use the same plan, so
// memoryAnalysis() is what a run allocates.
import { itemsize } from '../core/dtype.js';
import type { MemoryKind, PrimitiveParams } from '../core/primitives.js';
import type { ClosedJaxpr, Jaxpr } from '../trace/jaxpr.js';
import { type Program, type ProgramBuffer, type ProgramCall, fuseJaxpr, memoryKindOf } from './fuse.js';

export const MEMORY_KINDS_ORDER: readonly MemoryKind[] = ['device', 'pinned_host'];

/** Where a program buffer's bytes are during a call. */
export type Placement =
  | { place: 'argument'; index: number }
  | { place: 'constant'; index: number }
  | { place: 'literal' }
  /** an output: its own allocation (top level) or the caller's destination (nested plans) */
  | { place: 'output'; output: number }
  /** an output written into a donated argument's storage */
  | { place: 'donated'; output: number; argument: number }
  | { place: 'arena'; kind: MemoryKind; offset: number };

export type Bytes = Record<MemoryKind, number>;

const zeroBytes = (): Bytes => ({ device: 0, pinned_host: 0 });

/** Nested plans of a control-flow step, with the scratch each needs. */
export type CallPlans =
  | { primitive: 'scan'; body: ProgramPlan }
  | { primitive: 'while'; cond: ProgramPlan; body: ProgramPlan }
  | { primitive: 'cond'; branches: ProgramPlan[] };

export interface CallLayout {
  plans: CallPlans;
  /** per memory kind: where this step's scratch starts in the caller's arena, and its size */
  scratch: Bytes;
  scratchOffset: Bytes;
  /** within the scratch: offsets of the loop's second carry buffers (scan / while, one per carry), of the while predicate, and of the nested arenas */
  carryOffsets: number[];
  predicateOffset: number;
  nestedOffset: Bytes;
}

export interface PlanOptions {
  /** byte alignment of arena offsets (64 on the CPU: a cache line; 256 for CUDA) */
  alignment: number;
  /** flat argument indices whose storage outputs may reuse */
  donated?: ReadonlySet<number>;
}

export const bufferBytes = (b: Pick<ProgramBuffer, 'size' | 'dtype'>): number => b.size * itemsize(b.dtype);

const align = (n: number, a: number) => Math.ceil(n / a) * a;

interface Interval {
  id: number;
  kind: MemoryKind;
  bytes: number;
  first: number;
  last: number;
}

/** Greedy-by-size interval packing; returns offsets by id and the arena size. */
export function packIntervals(intervals: readonly Interval[], alignment: number): { offsets: Map<number, number>; size: number } {
  const order = [...intervals].sort((a, b) => b.bytes - a.bytes || a.first - b.first || a.id - b.id);
  const placed: { first: number; last: number; start: number; end: number }[] = [];
  const offsets = new Map<number, number>();
  let size = 0;
  for (const iv of order) {
    const busy = placed.filter((p) => p.first <= iv.last && iv.first <= p.last).sort((a, b) => a.start - b.start);
    let offset = 0;
    for (const p of busy) {
      if (offset + iv.bytes <= p.start) break;
      offset = Math.max(offset, align(p.end, alignment));
    }
    offsets.set(iv.id, offset);
    placed.push({ first: iv.first, last: iv.last, start: offset, end: offset + iv.bytes });
    size = Math.max(size, offset + iv.bytes);
  }
  return { offsets, size: size ? align(size, alignment) : 0 };
}

/** The buffers a step reads and writes. */
function stepBuffers(step: Program['steps'][number]): { reads: number[]; writes: number[] } {
  switch (step.kind) {
    case 'launch': {
      const nOut = launchOutputCount(step.kernel, step.buffers.length);
      return { writes: step.buffers.slice(0, nOut), reads: step.buffers.slice(nOut) };
    }
    case 'call': return { reads: step.inputs, writes: step.outputs };
    case 'copy': return { reads: [step.src], writes: [step.dst] };
  }
}

/** How many of a launch's buffers (outputs first, as kernel-ir.ts orders them) it writes. */
function launchOutputCount(kernel: import('./kernel-ir.js').Kernel, total: number): number {
  switch (kernel.kind) {
    case 'elementwise': return kernel.outputs.length;
    case 'reduce': return kernel.fused ? kernel.fused.outputs.length + kernel.fused.sideOutputs.length + (kernel.fused.finalOutputs?.length ?? 0) : 1;
    case 'dot': return kernel.epilogue ? kernel.epilogue.outputs.length : 1;
    default: return Math.min(1, total);
  }
}

export class ProgramPlan {
  readonly placements: Placement[];
  /** arena bytes per memory kind */
  readonly arena: Bytes;
  /** per step index: the nested plans and scratch of a control-flow step */
  readonly calls = new Map<number, CallLayout>();
  /** program output index → output slot (outputs sharing one buffer share a slot) */
  readonly outputSlots: number[];
  /** output slot → its program buffer */
  readonly slotBuffers: number[];
  readonly #consumed = new Set<number>();

  constructor(
    readonly program: Program,
    readonly consts: readonly unknown[],
    readonly options: PlanOptions,
  ) {
    const { buffers, steps } = program;
    for (const [i, step] of steps.entries()) if (step.kind === 'call') this.calls.set(i, callLayout(step, options.alignment));

    // outputs: one slot per distinct value/temp buffer
    this.outputSlots = [];
    this.slotBuffers = [];
    const slotOf = new Map<number, number>();
    for (const o of program.outputs) {
      if (!('buffer' in o)) {
        this.outputSlots.push(-1);
        continue;
      }
      const b = buffers[o.buffer]!;
      if (b.kind !== 'value' && b.kind !== 'temp') {
        this.outputSlots.push(-1);
        continue;
      }
      let slot = slotOf.get(o.buffer);
      if (slot === undefined) {
        slot = this.slotBuffers.push(o.buffer) - 1;
        slotOf.set(o.buffer, slot);
      }
      this.outputSlots.push(slot);
    }

    // liveness over the step order
    const first = new Map<number, number>();
    const last = new Map<number, number>();
    const firstWrite = new Map<number, number>();
    steps.forEach((s, k) => {
      const { reads, writes } = stepBuffers(s);
      for (const b of [...reads, ...writes]) {
        if (!first.has(b)) first.set(b, k);
        last.set(b, k);
      }
      for (const b of writes) if (!firstWrite.has(b)) firstWrite.set(b, k);
    });

    this.placements = buffers.map((b, id): Placement => {
      if (b.kind === 'argument') return { place: 'argument', index: b.index! };
      if (b.kind === 'constant') return { place: 'constant', index: b.index! };
      if (b.kind === 'literal') return { place: 'literal' };
      const slot = slotOf.get(id);
      if (slot !== undefined) return { place: 'output', output: slot };
      return { place: 'arena', kind: b.memoryKind, offset: -1 };
    });

    // donation: an output takes a donated argument's storage when the argument is dead before the output is written
    if (options.donated?.size) {
      const taken = new Set<number>();
      this.slotBuffers.forEach((id, slot) => {
        const out = buffers[id]!;
        const write = firstWrite.get(id) ?? -1;
        for (const [argId, arg] of buffers.entries()) {
          if (arg.kind !== 'argument' || !options.donated!.has(arg.index!) || taken.has(argId)) continue;
          if (arg.dtype !== out.dtype || arg.size !== out.size || arg.memoryKind !== out.memoryKind) continue;
          const lastRead = last.get(argId) ?? -1;
          if (program.outputs.some((o) => 'buffer' in o && o.buffer === argId)) continue;
          // as in XLA, a matching output uses the donation; it is written in place when that is safe, else allocated
          taken.add(argId);
          this.#consumed.add(arg.index!);
          if (lastRead < write || (lastRead === write && inPlaceSafe(program, write, argId, id))) this.placements[id] = { place: 'donated', output: slot, argument: arg.index! };
          break;
        }
      });
    }

    // the arena: intermediates plus each call step's scratch
    const intervals: Interval[] = [];
    this.placements.forEach((p, id) => {
      if (p.place !== 'arena' || !first.has(id)) return;
      intervals.push({ id, kind: p.kind, bytes: bufferBytes(buffers[id]!), first: first.get(id)!, last: last.get(id)! });
    });
    const scratchIds = new Map<number, number>();
    for (const [k, layout] of this.calls) {
      for (const kind of MEMORY_KINDS_ORDER) {
        if (!layout.scratch[kind]) continue;
        const id = -1 - intervals.length;
        scratchIds.set(id, k);
        intervals.push({ id, kind, bytes: layout.scratch[kind], first: k, last: k });
      }
    }
    this.arena = zeroBytes();
    for (const kind of MEMORY_KINDS_ORDER) {
      const { offsets, size } = packIntervals(intervals.filter((iv) => iv.kind === kind), options.alignment);
      this.arena[kind] = size;
      for (const [id, offset] of offsets) {
        if (id >= 0) (this.placements[id] as { offset: number }).offset = offset;
        else this.calls.get(scratchIds.get(id)!)!.scratchOffset[kind] = offset;
      }
    }
  }

  /**
   * Donated arguments the call consumes: those matched with an output (held
   * in place where the schedule allows), and those returned as they are. Like JAX, a donation the program cannot use (no
   * output of the same dtype, size and memory kind) leaves the argument alive.
   */
  consumedArguments(): Set<number> {
    const out = new Set(this.#consumed);
    for (const o of this.program.outputs) {
      if (!('buffer' in o)) continue;
      const b = this.program.buffers[o.buffer]!;
      if (b.kind === 'argument' && this.options.donated?.has(b.index!)) out.add(b.index!);
    }
    return out;
  }

  /** Bytes of the distinct argument buffers per memory kind. */
  argumentBytes(): Bytes {
    const out = zeroBytes();
    for (const b of this.program.buffers) if (b.kind === 'argument') out[b.memoryKind] += bufferBytes(b);
    return out;
  }

  /** Bytes of the outputs per memory kind, and of those written into donated arguments. */
  outputBytes(): { output: Bytes; alias: Bytes } {
    const output = zeroBytes();
    const alias = zeroBytes();
    for (const o of this.program.outputs) output[memoryKindOf(o.aval)] += o.aval.shape.reduce((a, d) => a * d, 1) * itemsize(o.aval.dtype);
    this.placements.forEach((p, id) => {
      if (p.place === 'donated') alias[this.program.buffers[id]!.memoryKind] += bufferBytes(this.program.buffers[id]!);
    });
    return { output, alias };
  }

  /** Every plan in this one (itself first, then nested plans, depth first). */
  *allPlans(): Generator<ProgramPlan> {
    yield this;
    for (const layout of this.calls.values()) for (const p of nestedPlans(layout.plans)) yield* p.allPlans();
  }
}

export function nestedPlans(plans: CallPlans): ProgramPlan[] {
  switch (plans.primitive) {
    case 'scan': return [plans.body];
    case 'while': return [plans.cond, plans.body];
    case 'cond': return plans.branches;
  }
}

/** Whether a launch may write output buffer `out` over argument buffer `arg` it also reads (same element order). */
function inPlaceSafe(program: Program, step: number, arg: number, out: number): boolean {
  const s = program.steps[step]!;
  if (s.kind !== 'launch' || s.kernel.kind !== 'elementwise') return false;
  const nOut = s.kernel.outputs.length;
  const outIndex = s.buffers.indexOf(out);
  if (outIndex < 0 || outIndex >= nOut) return false;
  // every read of the argument is at the element being written (a one-element buffer read as a scalar is too)
  const single = program.buffers[out]!.size === 1;
  return s.buffers.every((b, i) => {
    if (i < nOut || b !== arg || s.kernel.kind !== 'elementwise') return true;
    const access = s.kernel.inputs[i - nOut]!.access;
    return access === 'contiguous' || (single && access === 'scalar');
  });
}

/** Plans a closed jaxpr (its consts are the plan's constants). */
export function planJaxpr(jaxpr: Jaxpr, consts: readonly unknown[], options: PlanOptions): ProgramPlan {
  return new ProgramPlan(fuseJaxpr(jaxpr), consts, options);
}

const nestedPlan = (closed: ClosedJaxpr, alignment: number) => planJaxpr(closed.jaxpr, closed.consts, { alignment });

function callLayout(step: ProgramCall, alignment: number): CallLayout {
  const e = step.eqn;
  let plans: CallPlans;
  let carries: { bytes: number; kind: MemoryKind }[] = [];
  let predicate = false;
  const avalBytes = (a: { shape: readonly number[]; dtype: import('../core/dtype.js').DType }) => a.shape.reduce((x, d) => x * d, 1) * itemsize(a.dtype);
  if (e.primitive === 'scan') {
    const p = e.params as PrimitiveParams['scan'];
    plans = { primitive: 'scan', body: nestedPlan(p.jaxpr, alignment) };
    carries = e.outVars.slice(0, p.numCarry).map((v) => ({ bytes: avalBytes(v.aval), kind: memoryKindOf(v.aval) }));
  } else if (e.primitive === 'while') {
    const p = e.params as PrimitiveParams['while'];
    plans = { primitive: 'while', cond: nestedPlan(p.condJaxpr, alignment), body: nestedPlan(p.bodyJaxpr, alignment) };
    carries = e.outVars.map((v) => ({ bytes: avalBytes(v.aval), kind: memoryKindOf(v.aval) }));
    predicate = true;
  } else if (e.primitive === 'cond') {
    const p = e.params as PrimitiveParams['cond'];
    plans = { primitive: 'cond', branches: p.branches.map((b) => nestedPlan(b, alignment)) };
  } else {
    throw new Error(`plan: internal error: ${e.primitive} is not control flow`);
  }
  const scratch = zeroBytes();
  const carryOffsets = carries.map((c) => {
    const offset = scratch[c.kind];
    scratch[c.kind] = align(offset + c.bytes, alignment);
    return offset;
  });
  const predicateOffset = predicate ? scratch.device : -1;
  if (predicate) scratch.device = align(scratch.device + 1, alignment);
  const nestedOffset = zeroBytes();
  for (const kind of MEMORY_KINDS_ORDER) {
    nestedOffset[kind] = scratch[kind];
    // the nested plans run one at a time, so they share one region
    scratch[kind] += Math.max(0, ...nestedPlans(plans).map((n) => n.arena[kind]));
  }
  return { plans, scratch, scratchOffset: zeroBytes(), carryOffsets, predicateOffset, nestedOffset };
}
