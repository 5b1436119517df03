// Scheduling a fused program (fuse.ts) before and after buffer assignment
// (plan.ts). Before: candidate step orders within the data dependences,
// fusion's and a memory-aware list schedule's (after XLA's list scheduler
// with its memory-pressure heuristic: each next step is the ready one that
// grows the live intermediates least), both settled so that steps reading
// no intermediate (host-to-device copies of offloaded values, kernels of
// arguments) run just before their first reader and steps writing none
// (device-to-host copies into host outputs) just after their last
// producer; the plan keeps the order that assigns the least memory. After:
// the copy steps are put on transfer streams (XLA's latency-hiding
// scheduler, static part): each transfer may start as soon as its source is
// written and its destination's arena space is free, and must be complete
// before the first step that reads its destination or reuses its source's
// space. The bounds follow from the fixed buffer assignment, so overlapping
// transfers with compute costs no memory; the CPU runs the steps in order.
import { itemsize } from '../core/dtype.js';
import type { MemoryKind } from '../core/primitives.js';
import type { Program, ProgramStep } from './fuse.js';
import { eqnHasEffects } from '../trace/jaxpr.js';
import type { Kernel } from './kernel-ir.js';

/** The buffers a step reads and writes. */
export function stepBuffers(step: ProgramStep): { reads: number[]; writes: number[] } {
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
export function launchOutputCount(kernel: Kernel, total: number): number {
  switch (kernel.kind) {
    case 'elementwise': return kernel.outputs.length;
    case 'reduce': return kernel.fused ? kernel.fused.outputs.length + kernel.fused.sideOutputs.length + (kernel.fused.finalOutputs?.length ?? 0) : 1;
    case 'dot': return kernel.epilogue ? kernel.epilogue.outputs.length : 1;
    // outputs and working storage first, the one operand last
    case 'orthogonal': return total - 1;
    // every operand sorted (or gathered along the order) at once; top_k's values and indices
    case 'sort': return kernel.stage === 'sort_rows' || kernel.stage === 'permute' ? kernel.dtypes.length : kernel.stage === 'top_k' || kernel.stage === 'order' ? 2 : 1;
    case 'cumulative': case 'pad': case 'concatenate': case 'dynamic_slice': case 'dynamic_update_slice': case 'gather': case 'scatter':
      return Math.min(1, total);
    // lu's factors, pivots and permutation; cholesky's and triangular_solve's one result; a blocked stage's counters
    case 'linalg': return (kernel.op === 'lu' ? 3 : 1) + (kernel.blocked ? 1 : 0);
    case 'conv': return 1;
    default: return kernel satisfies never;
  }
}

/** Each buffer's first and last step touching it, first step writing it and last step reading it, over `steps`. */
export function bufferLiveness(steps: readonly ProgramStep[]): { first: Map<number, number>; last: Map<number, number>; firstWrite: Map<number, number>; lastRead: Map<number, number> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const firstWrite = new Map<number, number>();
  const lastRead = new Map<number, number>();
  steps.forEach((s, k) => {
    const { reads, writes } = stepBuffers(s);
    for (const b of [...reads, ...writes]) {
      if (!first.has(b)) first.set(b, k);
      last.set(b, k);
    }
    for (const b of reads) lastRead.set(b, k);
    for (const b of writes) if (!firstWrite.has(b)) firstWrite.set(b, k);
  });
  return { first, last, firstWrite, lastRead };
}

/**
 * For each step, the earlier steps it must follow: the last writer of each
 * buffer it touches, the readers since then of each buffer it writes, and
 * the step with the last effect before its own (prints stay in program order).
 */
export function stepDependences(program: Program): Set<number>[] {
  const lastWriter = new Map<number, number>();
  const readersSince = new Map<number, number[]>();
  let lastEffect = -1;
  return program.steps.map((s, k) => {
    const deps = new Set<number>();
    if (s.kind === 'call' && eqnHasEffects(s.eqn)) {
      if (lastEffect >= 0) deps.add(lastEffect);
      lastEffect = k;
    }
    const { reads, writes } = stepBuffers(s);
    for (const b of [...reads, ...writes]) {
      const w = lastWriter.get(b);
      if (w !== undefined) deps.add(w);
    }
    for (const b of writes) for (const r of readersSince.get(b) ?? []) if (r !== k) deps.add(r);
    for (const b of reads) {
      const list = readersSince.get(b) ?? [];
      list.push(k);
      readersSince.set(b, list);
    }
    for (const b of writes) {
      lastWriter.set(b, k);
      readersSince.set(b, []);
    }
    return deps;
  });
}

/**
 * Memory-aware orders of the program's steps (each a permutation of step
 * indices): fusion's order and a greedy list schedule, each with its pure
 * producers sunk and pure consumers hoisted. `counted(id)` says whether a
 * buffer is an intermediate the arena holds (arguments, constants and
 * outputs have their own storage). The plan keeps the order that assigns
 * the least memory.
 */
export function memoryAwareOrders(program: Program, counted: (id: number) => boolean): number[][] {
  const deps = stepDependences(program);
  const fusionOrder = program.steps.map((_, k) => k);
  return [settle(program, deps, fusionOrder, counted), settle(program, deps, greedyOrder(program, deps, counted), counted)];
}

/**
 * List scheduling: each next step is the ready one that grows the live
 * intermediates least (device bytes, then pinned-host bytes, then fusion's
 * order).
 */
function greedyOrder(program: Program, deps: Set<number>[], counted: (id: number) => boolean): number[] {
  const { steps, buffers } = program;
  const waiting = deps.map((d) => d.size);
  const followers = steps.map((): number[] => []);
  deps.forEach((d, k) => d.forEach((p) => followers[p]!.push(k)));
  const touches = steps.map((s) => {
    const { reads, writes } = stepBuffers(s);
    return [...new Set([...reads, ...writes])].filter(counted);
  });
  const uses = new Map<number, number>();
  for (const t of touches) for (const b of t) uses.set(b, (uses.get(b) ?? 0) + 1);
  const bytes = (b: number) => buffers[b]!.size * itemsize(buffers[b]!.dtype);
  const live = new Set<number>();
  const growth = (k: number): Record<MemoryKind, number> => {
    const g = { device: 0, pinned_host: 0 };
    for (const b of touches[k]!) {
      const kind = buffers[b]!.memoryKind;
      if (!live.has(b)) g[kind] += bytes(b);
      if (uses.get(b) === 1) g[kind] -= bytes(b);
    }
    return g;
  };
  const ready = new Set(steps.map((_, k) => k).filter((k) => waiting[k] === 0));
  const order: number[] = [];
  while (ready.size) {
    let best = -1;
    let bestGrowth: Record<MemoryKind, number> | null = null;
    for (const k of ready) {
      const g = growth(k);
      if (!bestGrowth || g.device < bestGrowth.device || (g.device === bestGrowth.device && (g.pinned_host < bestGrowth.pinned_host || (g.pinned_host === bestGrowth.pinned_host && k < best)))) {
        best = k;
        bestGrowth = g;
      }
    }
    ready.delete(best);
    order.push(best);
    for (const b of touches[best]!) {
      live.add(b);
      const n = uses.get(b)! - 1;
      uses.set(b, n);
      if (n === 0) live.delete(b);
    }
    for (const f of followers[best]!) if (--waiting[f]! === 0) ready.add(f);
  }
  if (order.length !== steps.length) throw new Error(`schedule: internal error: scheduled ${order.length} of ${steps.length} steps`);
  return order;
}

/**
 * Moves each launch or copy that reads no intermediate (a host-to-device copy
 * of an argument, a kernel of arguments only) down to just before its first
 * dependent step, and each one that writes no intermediate (a copy into a
 * host output) up to just after its last dependence. Neither lengthens any
 * intermediate's life, so neither adds memory; the first shortens its
 * outputs' lives, the second its inputs'.
 */
function settle(program: Program, deps: Set<number>[], initial: readonly number[], counted: (id: number) => boolean): number[] {
  const order = [...initial];
  const followers = program.steps.map((): number[] => []);
  deps.forEach((d, k) => d.forEach((p) => followers[p]!.push(k)));
  const movable = (k: number) => program.steps[k]!.kind !== 'call';
  const io = program.steps.map((s) => stepBuffers(s));
  // positions, recomputed only after a step really moves (a step whose neighbour is already its first follower or
  // last dependence stays): long chains of launches (the multi-block Jacobi's tens of thousands) would otherwise cost
  // a scan of the order per step, and per follower of a step that all of them read
  let position: number[] = [];
  let stale = true;
  const at = (k: number) => {
    if (stale) { position = []; order.forEach((s, i) => (position[s] = i)); stale = false; }
    return position[k]!;
  };
  // the place of `f` once the step at `from` is taken out
  const without = (f: number, from: number) => at(f) - (at(f) > from ? 1 : 0);
  const producers = initial.filter((k) => movable(k) && !io[k]!.reads.some(counted) && followers[k]!.length > 0);
  for (const k of [...producers].reverse()) {
    const from = at(k);
    if (followers[k]!.includes(order[from + 1]!)) continue;
    let to = Infinity;
    for (const f of followers[k]!) to = Math.min(to, without(f, from));
    order.splice(from, 1);
    order.splice(to, 0, k);
    stale = true;
  }
  const consumers = initial.filter((k) => movable(k) && !io[k]!.writes.some(counted));
  for (const k of consumers) {
    const from = at(k);
    if (from > 0 && deps[k]!.has(order[from - 1]!)) continue;
    let to = -1;
    for (const p of deps[k]!) to = Math.max(to, without(p, from));
    order.splice(from, 1);
    order.splice(to + 1, 0, k);
    stale = true;
  }
  return order;
}

/** The program with its steps in `order`. */
export function reorderSteps(program: Program, order: readonly number[]): Program {
  return { ...program, steps: order.map((k) => program.steps[k]!) };
}

/** Which engine runs a copy step: the copy engines for transfers between kinds, the compute stream within one. */
export type Stream = 'compute' | 'h2d' | 'd2h';

/** A copy step's place on the streams: it may start after step `start` (-1: at the program's start) and must be complete before step `wait` (steps.length: the program's end). */
export interface Transfer {
  step: number;
  stream: Stream;
  start: number;
  wait: number;
}

/** Where a buffer's bytes are, for the transfer bounds: in an arena region, or storage of its own (arguments, outputs, ...). */
export type Region = { kind: MemoryKind; offset: number; bytes: number } | null;

/**
 * The copy steps' streams and bounds under a fixed buffer assignment: a
 * transfer starts once its source is written and every other buffer in its
 * destination's region is dead, and is waited on by the first step that
 * reads its destination or writes into its source's region.
 */
export function transferBounds(
  program: Program,
  regionOf: (id: number) => Region,
  /** the arena regions a call step reserves for its nested plans while it runs */
  scratchOf: (step: number) => Region[],
  first: ReadonlyMap<number, number>,
  last: ReadonlyMap<number, number>,
): Transfer[] {
  const { steps, buffers } = program;
  const overlaps = (a: Region, b: Region) => a !== null && b !== null && a.kind === b.kind && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
  const writers = steps.map((s) => stepBuffers(s).writes);
  const readers = steps.map((s) => stepBuffers(s).reads);
  const out: Transfer[] = [];
  steps.forEach((s, k) => {
    if (s.kind !== 'copy') return;
    const from = buffers[s.src]!.memoryKind;
    const to = buffers[s.dst]!.memoryKind;
    const stream: Stream = from === to ? 'compute' : to === 'device' ? 'h2d' : 'd2h';
    let start = -1;
    for (let j = k - 1; j >= 0 && start < 0; j--) if (writers[j]!.includes(s.src)) start = j;
    const dst = regionOf(s.dst);
    if (dst) {
      buffers.forEach((_, id) => {
        if (id === s.dst || !overlaps(dst, regionOf(id)) || (first.get(id) ?? k) >= k) return;
        start = Math.max(start, last.get(id)!);
      });
      for (let j = k - 1; j > start; j--) if (scratchOf(j).some((r) => overlaps(dst, r))) start = j;
    }
    const src = regionOf(s.src);
    let wait = steps.length;
    for (let j = k + 1; j < steps.length && wait === steps.length; j++) {
      const reuses = src !== null && (writers[j]!.some((w) => w !== s.src && overlaps(src, regionOf(w)) && (first.get(w) ?? j) > k) || scratchOf(j).some((r) => overlaps(src, r)));
      if (readers[j]!.includes(s.dst) || reuses) wait = j;
    }
    out.push({ step: k, stream, start: Math.min(start, k - 1), wait });
  });
  return out;
}
