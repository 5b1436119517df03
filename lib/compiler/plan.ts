// Scheduling and buffer assignment (after XLA's BufferAssignment and heap
// simulator): a fused Program (fuse.ts) runs its steps in fusion's order or
// in a memory-aware order (schedule.ts: host-to-device copies just before
// their readers, device-to-host copies just after their producers), the one
// that needs less memory; every intermediate buffer is live from the step
// that writes it to the last step that reads it, and all intermediates of one
// memory kind are packed into one arena at fixed, aligned offsets, reusing
// the space of dead buffers (greedy by size: the largest buffer first, each
// at the lowest offset that overlaps no buffer live at the same time). A
// kernel's output may take over the space of an operand that dies there when
// the kernel reads that operand only at the element it writes (XLA's buffer
// sharing). Outputs get their own allocations (they outlive the call), or
// the storage of a donated argument of the same dtype, size and memory kind
// that is dead, or read only at the element being written, when the output
// is written. Control flow (scan / while / cond) runs nested plans of its
// jaxprs; a call step reserves scratch (the nested arenas and the loop's
// second carry buffers) in its caller's arena for the duration of the step;
// a host callback is a call step too, with no nested plans and no scratch.
// Copy steps get their transfer stream and window (schedule.ts). The plan is
// target-independent apart from alignment and the launches of the primitives
// lowered per target (PlanOptions.target; lower.ts LowerTarget): the program runners
// (runtime/cpu-executable.ts, runtime/cuda-executable.ts) and cross-lowering
// for CUDA (analysis.ts) use the same plan, so memoryAnalysis() is what a
// run allocates.
import { itemsize } from '../core/dtype.js';
import type { MemoryKind, PrimitiveParams } from '../core/primitives.js';
import type { ClosedJaxpr, Jaxpr, JaxprEqn } from '../trace/jaxpr.js';
import { type Expr, mayBeWrittenInPlace } from './kernel-ir.js';
import { type Program, type ProgramBuffer, type ProgramCall, fuseJaxpr, memoryKindOf } from './fuse.js';
import type { LowerTarget } from './lower.js';
import { type Region, type Transfer, bufferLiveness, launchOutputCount, memoryAwareOrders, reorderSteps, stepBuffers, transferBounds } from './schedule.js';

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

/** Nested plans of a control-flow step, with the scratch each needs; a host callback has none. */
export type CallPlans =
  | { primitive: 'scan'; body: ProgramPlan }
  | { primitive: 'while'; cond: ProgramPlan; body: ProgramPlan }
  | { primitive: 'cond'; branches: ProgramPlan[] }
  | { primitive: 'debug_callback' | 'pure_callback' };

export interface CallLayout {
  plans: CallPlans;
  /** per memory kind: where this step's scratch starts in the caller's arena, and its size */
  scratch: Bytes;
  scratchOffset: Bytes;
  /** within the scratch: offsets of the loop's second carry buffers (scan / while, one per carry), of the while predicate, and of the nested arenas */
  carryOffsets: number[];
  predicateOffset: number;
  nestedOffset: Bytes;
  /**
   * scan with PlanOptions.prefetchScanInputs: the xs in pinned host memory whose slice the body only copies to the
   * device (on the h2d stream); the runner copies slice t+1 into one of two device regions (offsets in the device
   * scratch) while the body runs on slice t, and runs the body on the region (its copy becomes device to device).
   */
  prefetch: ScanPrefetch[];
}

export type ScanPrefetchMode = 'off' | 'auto' | 'always';

export interface ScanPrefetch {
  /** which xs (0 = the scan's first xs) */
  xs: number;
  /** bytes of one slice */
  bytes: number;
  /** the two device regions, in the step's device scratch */
  offsets: [number, number];
}

export interface PlanOptions {
  /** the platform the plan is for: the few primitives lowered per target (lower.ts LowerTarget) read it */
  target: LowerTarget;
  /** byte alignment of arena offsets (64 on the CPU: a cache line; 256 for CUDA) */
  alignment: number;
  /** flat argument indices whose storage outputs may reuse */
  donated?: ReadonlySet<number>;
  /**
   * Reserve device scratch for prefetching scan inputs that live in pinned host memory (CallLayout.prefetch): the
   * CUDA runner overlaps the copy of iteration t+1's slice with iteration t; the CPU has nothing to overlap. 'auto'
   * prefetches when that does not raise the program's device footprint (arena and outputs), as offloading is
   * there to save device memory; 'always' trades the memory for the overlap. Default 'off'.
   */
  prefetchScanInputs?: ScanPrefetchMode;
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
  /** the copy steps on their streams, with the steps they may start after and must finish before (schedule.ts) */
  readonly transfers: Transfer[];
  /** output buffer → the input buffer whose arena space it takes over at the step that writes it (in place) */
  readonly inPlace = new Map<number, number>();
  readonly #consumed = new Set<number>();

  constructor(
    readonly program: Program,
    readonly consts: readonly unknown[],
    readonly options: PlanOptions,
    /** nested plans already made for control-flow equations (another order of the same program shares them) */
    nested: Map<JaxprEqn, CallPlans> = new Map(),
  ) {
    const { buffers, steps } = program;
    for (const [i, step] of steps.entries()) if (step.kind === 'call') this.calls.set(i, callLayout(step, options, nested));

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
    const { first, last, firstWrite } = bufferLiveness(steps);

    this.placements = buffers.map((b, id): Placement => {
      if (b.kind === 'argument') return { place: 'argument', index: b.index! };
      if (b.kind === 'constant') return { place: 'constant', index: b.index! };
      if (b.kind === 'literal') return { place: 'literal' };
      const slot = slotOf.get(id);
      if (slot !== undefined) return { place: 'output', output: slot };
      return { place: 'arena', kind: b.memoryKind, offset: -1 };
    });

    // donation: as in JAX, outputs take the donated arguments of their dtype, size and memory kind in order; then
    // each output is written into the storage of one of those arguments that is dead (or read only at the element
    // being written) when the output is written, else it is allocated and the argument is just consumed
    if (options.donated?.size) {
      const sameType = (a: ProgramBuffer, o: ProgramBuffer) => a.dtype === o.dtype && a.size === o.size && a.memoryKind === o.memoryKind;
      const taken = new Set<number>();
      const matched: [slot: number, id: number][] = [];
      this.slotBuffers.forEach((id, slot) => {
        const out = buffers[id]!;
        for (const [argId, arg] of buffers.entries()) {
          if (arg.kind !== 'argument' || !options.donated!.has(arg.index!) || taken.has(argId) || !sameType(arg, out)) continue;
          if (program.outputs.some((o) => 'buffer' in o && o.buffer === argId)) continue;
          taken.add(argId);
          this.#consumed.add(arg.index!);
          matched.push([slot, id]);
          break;
        }
      });
      for (const [slot, id] of matched) {
        const write = firstWrite.get(id) ?? -1;
        const usable = [...taken].find((argId) => {
          if (!sameType(buffers[argId]!, buffers[id]!)) return false;
          const lastRead = last.get(argId) ?? -1;
          return lastRead < write || (lastRead === write && inPlaceSafe(program, write, argId, id));
        });
        if (usable === undefined) continue;
        taken.delete(usable);
        this.placements[id] = { place: 'donated', output: slot, argument: buffers[usable]!.index! };
      }
    }

    // in place (XLA's buffer sharing with an operand): an intermediate written by a kernel that reads, only at the
    // element it writes, an intermediate of the same size that dies there takes over that one's space
    const root = (id: number): number => {
      let r = id;
      while (this.inPlace.has(r)) r = this.inPlace.get(r)!;
      return r;
    };
    const given = new Set<number>();
    steps.forEach((s, k) => {
      if (s.kind !== 'launch') return;
      const { reads, writes } = stepBuffers(s);
      for (const o of writes) {
        const po = this.placements[o]!;
        if (po.place !== 'arena' || first.get(o) !== k) continue;
        const donor = [...new Set(reads)].find((b) => {
          const pb = this.placements[b]!;
          return pb.place === 'arena' && pb.kind === po.kind && !given.has(b) && !writes.includes(b) && last.get(b) === k && first.get(b)! < k
            && inPlaceSafe(program, k, b, o);
        });
        if (donor === undefined) continue;
        given.add(donor);
        this.inPlace.set(o, donor);
      }
    });

    // the arena: intermediates (one interval per group sharing space) plus each call step's scratch
    const groups = new Map<number, Interval>();
    this.placements.forEach((p, id) => {
      if (p.place !== 'arena' || !first.has(id)) return;
      const r = root(id);
      const g = groups.get(r);
      if (!g) groups.set(r, { id: r, kind: p.kind, bytes: bufferBytes(buffers[id]!), first: first.get(id)!, last: last.get(id)! });
      else {
        g.first = Math.min(g.first, first.get(id)!);
        g.last = Math.max(g.last, last.get(id)!);
      }
    });
    const intervals: Interval[] = [...groups.values()];
    const scratchIds = new Map<number, number>();
    for (const [k, layout] of this.calls) {
      for (const kind of MEMORY_KINDS_ORDER) {
        if (!layout.scratch[kind]) continue;
        const id = -1 - intervals.length;
        scratchIds.set(id, k);
        intervals.push({ id, kind, bytes: layout.scratch[kind], first: k, last: k });
      }
    }
    // A host-to-device copy's destination is packed as if live from the launch before the copy, so the transfer can
    // run beside that kernel (the next parameter's optimizer state arriving while this one's is updated), wherever
    // that costs no arena bytes.
    const prefetched = intervals.map((iv) => {
      const k = iv.id >= 0 ? steps.findIndex((s, j) => j >= iv.first && s.kind === 'copy' && s.dst === iv.id && buffers[s.src]!.memoryKind === 'pinned_host' && iv.kind === 'device') : -1;
      if (k !== iv.first) return iv;
      let j = k - 1;
      while (j >= 0 && steps[j]!.kind === 'copy') j--;
      return j >= 0 ? { ...iv, first: j } : iv;
    });
    this.arena = zeroBytes();
    for (const kind of MEMORY_KINDS_ORDER) {
      const plain = packIntervals(intervals.filter((iv) => iv.kind === kind), options.alignment);
      const early = prefetched.some((iv, i) => iv !== intervals[i] && iv.kind === kind) ? packIntervals(prefetched.filter((iv) => iv.kind === kind), options.alignment) : plain;
      const { offsets, size } = early.size <= plain.size ? early : plain;
      this.arena[kind] = size;
      for (const [id, offset] of offsets) {
        if (id >= 0) (this.placements[id] as { offset: number }).offset = offset;
        else this.calls.get(scratchIds.get(id)!)!.scratchOffset[kind] = offset;
      }
    }
    this.placements.forEach((p, id) => {
      if (p.place === 'arena' && this.inPlace.has(id)) p.offset = (this.placements[root(id)] as { offset: number }).offset;
    });

    const regionOf = (id: number): Region => {
      const p = this.placements[id]!;
      return p.place === 'arena' ? { kind: p.kind, offset: p.offset, bytes: bufferBytes(buffers[id]!) } : null;
    };
    const scratchOf = (k: number): Region[] => {
      const layout = this.calls.get(k);
      if (!layout) return [];
      return MEMORY_KINDS_ORDER.filter((kind) => layout.scratch[kind] > 0).map((kind) => ({ kind, offset: layout.scratchOffset[kind], bytes: layout.scratch[kind] }));
    };
    this.transfers = transferBounds(program, regionOf, scratchOf, first, last);
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
    case 'debug_callback': case 'pure_callback': return [];
  }
}

/**
 * Whether a launch may write output buffer `out` over buffer `arg` it also
 * reads: every read of `arg` is at the element being written, by the thread
 * writing it, before it writes (the renderers load a kernel's inputs before
 * storing its outputs). Elementwise kernels reading it contiguously (a
 * one-element buffer read as a scalar too); a dot's epilogue reading it
 * through the product's own [B, M, N] view (never the dot's operands); a
 * fused reduction's side or final output whose views of it are that output's
 * own view (side outputs are written as the first pass reads, final outputs
 * as the second pass reads, after the first pass for that output element).
 */
/** Whether an expression (a DAG) reads input `index`. */
function exprReadsInput(expr: Expr, index: number): boolean {
  const seen = new Set<Expr>();
  const walk = (e: Expr): boolean => {
    if (seen.has(e)) return false;
    seen.add(e);
    switch (e.op) {
      case 'input': return e.index === index;
      case 'literal': case 'iota': return false;
      case 'unary': case 'convert': return walk(e.x);
      case 'bitcast': return e.parts.some(walk) || (e.lane !== undefined && walk(e.lane));
      case 'binary': case 'compare': return walk(e.x) || walk(e.y);
      case 'select': return walk(e.predicate) || e.cases.some(walk);
      case 'clamp': return walk(e.lo) || walk(e.x) || walk(e.hi);
    }
  };
  return walk(expr);
}

function inPlaceSafe(program: Program, step: number, arg: number, out: number): boolean {
  const s = program.steps[step]!;
  if (s.kind !== 'launch') return false;
  const a = program.buffers[arg]!;
  const o = program.buffers[out]!;
  if (a.size !== o.size || itemsize(a.dtype) !== itemsize(o.dtype)) return false;
  const kernel = s.kernel;
  const nOut = launchOutputCount(kernel, s.buffers.length);
  const outIndex = s.buffers.indexOf(out);
  if (outIndex < 0 || outIndex >= nOut || s.buffers.slice(0, nOut).includes(arg)) return false;
  const readsAt = s.buffers.map((b, i) => (i >= nOut && b === arg ? i - nOut : -1)).filter((i) => i >= 0);
  switch (kernel.kind) {
    case 'elementwise': {
      const single = o.size === 1;
      return readsAt.every((i) => {
        const access = kernel.inputs[i]!.access;
        return mayBeWrittenInPlace(access) && (access !== 'scalar' || single);
      });
    }
    case 'dot': {
      if (!kernel.epilogue) return false;
      const [B, M, N] = s.params as [number, number, number];
      return readsAt.every((i) => {
        if (i < 2) return false;
        const [sb, sm, sn] = s.params.slice(10 + 3 * (i - 2), 13 + 3 * (i - 2)) as [number, number, number];
        return (N === 1 || sn === 1) && (M === 1 || sm === N) && (B === 1 || sb === M * N);
      });
    }
    case 'reduce': {
      // a side output is written in the first pass where that pass reads its inputs, a final output in the second
      // pass; a side output may not overwrite what the second pass still reads
      const f = kernel.fused;
      if (!f) return false;
      const nFinal = f.finalOutputs?.length ?? 0;
      const sideIndex = outIndex - f.outputs.length;
      const finalIndex = sideIndex - f.sideOutputs.length;
      if (sideIndex < 0 || (finalIndex < 0 && nFinal > 0)) return false;
      const outerRank = s.params[2]!;
      const innerRank = s.params[3 + outerRank]!;
      const width = outerRank + innerRank;
      const base = 4 + outerRank + innerRank;
      const view = (v: number) => s.params.slice(base + v * width, base + (v + 1) * width).join(',');
      const own = view(f.inputs.length + sideIndex);
      // the epilogue reads its inputs once the first pass is over, after every side output element was written
      const epilogueReads = (i: number) => f.outputs.some((o) => exprReadsInput(o.expr, i));
      return readsAt.every((i) => view(i) === own && !(finalIndex < 0 && epilogueReads(i)));
    }
    default: return false;
  }
}

/**
 * Plans a closed jaxpr (its consts are the plan's constants): fusion's step
 * order, or the memory-aware order (schedule.ts) where that needs less memory
 * (device first: arena plus outputs not written into donated arguments; then
 * the pinned-host arena).
 */
export function planJaxpr(jaxpr: Jaxpr, consts: readonly unknown[], options: PlanOptions): ProgramPlan {
  if (options.prefetchScanInputs !== 'auto') return planOrders(jaxpr, consts, options);
  const prefetching = planOrders(jaxpr, consts, { ...options, prefetchScanInputs: 'always' });
  if (![...prefetching.allPlans()].some((p) => [...p.calls.values()].some((c) => c.prefetch.length > 0))) return prefetching;
  const plain = planOrders(jaxpr, consts, { ...options, prefetchScanInputs: 'off' });
  return deviceFootprint(prefetching) <= deviceFootprint(plain) ? prefetching : plain;
}

/** Device bytes a call needs: the arena plus the outputs not written into donated arguments. */
function deviceFootprint(p: ProgramPlan): number {
  const { output, alias } = p.outputBytes();
  return p.arena.device + output.device - alias.device;
}

function planOrders(jaxpr: Jaxpr, consts: readonly unknown[], options: PlanOptions): ProgramPlan {
  const program = fuseJaxpr(jaxpr, options.target);
  const nested = new Map<JaxprEqn, CallPlans>();
  const plan = new ProgramPlan(program, consts, options, nested);
  const orders = memoryAwareOrders(program, (id) => plan.placements[id]!.place === 'arena');
  const footprint = (p: ProgramPlan) => {
    const { output, alias } = p.outputBytes();
    return [p.arena.device + output.device - alias.device, p.arena.pinned_host];
  };
  let best = plan;
  let bestFootprint = footprint(plan);
  for (const order of orders) {
    if (order.every((k, i) => k === i)) continue;
    const scheduled = new ProgramPlan(reorderSteps(program, order), consts, options, nested);
    const f = footprint(scheduled);
    if (f[0]! < bestFootprint[0]! || (f[0] === bestFootprint[0] && f[1]! < bestFootprint[1]!)) {
      best = scheduled;
      bestFootprint = f;
    }
  }
  return best;
}

const nestedPlan = (closed: ClosedJaxpr, options: PlanOptions) =>
  planJaxpr(closed.jaxpr, closed.consts, { target: options.target, alignment: options.alignment, prefetchScanInputs: options.prefetchScanInputs ?? 'off' });

/**
 * The bytes of one slice of a scan body's argument `index` when its slices can be prefetched: it lives in pinned
 * host memory, is no output of the body, and every step that reads it is a copy to the device on the h2d stream
 * (so the runner can bind a device region in its place and the copies stay ordered behind the prefetch on that
 * stream); otherwise null.
 */
function prefetchableSlice(body: ProgramPlan, index: number): number | null {
  const { buffers, steps, outputs } = body.program;
  const ids = buffers.flatMap((b, id) => (b.kind === 'argument' && b.index === index ? [id] : []));
  if (ids.length !== 1) return null;
  const id = ids[0]!;
  if (buffers[id]!.memoryKind !== 'pinned_host' || outputs.some((o) => 'buffer' in o && o.buffer === id)) return null;
  const readers = steps.flatMap((s, k) => (stepBuffers(s).reads.includes(id) ? [k] : []));
  const copiedToDevice = (k: number) => {
    const s = steps[k]!;
    return s.kind === 'copy' && buffers[s.dst]!.memoryKind === 'device' && body.transfers.some((t) => t.step === k && t.stream === 'h2d');
  };
  return readers.length > 0 && readers.every(copiedToDevice) ? bufferBytes(buffers[id]!) : null;
}

function callLayout(step: ProgramCall, options: PlanOptions, nested: Map<JaxprEqn, CallPlans>): CallLayout {
  const { alignment } = options;
  const e = step.eqn;
  const made = nested.get(e);
  let plans: CallPlans;
  let carries: { bytes: number; kind: MemoryKind }[] = [];
  let predicate = false;
  const avalBytes = (a: { shape: readonly number[]; dtype: import('../core/dtype.js').DType }) => a.shape.reduce((x, d) => x * d, 1) * itemsize(a.dtype);
  if (e.primitive === 'scan') {
    const p = e.params as PrimitiveParams['scan'];
    plans = made ?? { primitive: 'scan', body: nestedPlan(p.jaxpr, options) };
    carries = e.outVars.slice(0, p.numCarry).map((v) => ({ bytes: avalBytes(v.aval), kind: memoryKindOf(v.aval) }));
  } else if (e.primitive === 'while') {
    const p = e.params as PrimitiveParams['while'];
    plans = made ?? { primitive: 'while', cond: nestedPlan(p.condJaxpr, options), body: nestedPlan(p.bodyJaxpr, options) };
    carries = e.outVars.map((v) => ({ bytes: avalBytes(v.aval), kind: memoryKindOf(v.aval) }));
    predicate = true;
  } else if (e.primitive === 'cond') {
    const p = e.params as PrimitiveParams['cond'];
    plans = made ?? { primitive: 'cond', branches: p.branches.map((b) => nestedPlan(b, options)) };
  } else if (e.primitive === 'debug_callback' || e.primitive === 'pure_callback') {
    plans = { primitive: e.primitive };
  } else {
    throw new Error(`plan: internal error: ${e.primitive} is not control flow`);
  }
  nested.set(e, plans);
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
  const prefetch: ScanPrefetch[] = [];
  if (plans.primitive === 'scan' && options.prefetchScanInputs && options.prefetchScanInputs !== 'off') {
    const p = e.params as PrimitiveParams['scan'];
    const xsCount = e.inputs.length - p.numConsts - p.numCarry;
    for (let xs = 0; xs < xsCount && p.length >= 2; xs++) {
      const bytes = prefetchableSlice(plans.body, p.numConsts + p.numCarry + xs);
      if (bytes === null || bytes === 0) continue;
      const first = scratch.device;
      const second = align(first + bytes, alignment);
      scratch.device = align(second + bytes, alignment);
      prefetch.push({ xs, bytes, offsets: [first, second] });
    }
  }
  return { plans, scratch, scratchOffset: zeroBytes(), carryOffsets, predicateOffset, nestedOffset, prefetch };
}
