// Compiled.memoryPlan(): the buffer assignment (plan.ts) over the schedule
// (schedule.ts) as plain data a person can look at, and draw with
// .toSVG() (memory-plan-svg.ts), so a user sees why a program needs the
// memory memoryAnalysis() reports (JAX can only print the totals; XLA's
// buffer-assignment dump is the idea, in a form one can plot).
//
// Each memory kind is one lane laid out as the call holds it: the arguments
// (end to end, as argumentSizeInBytes counts them), then the outputs that
// have storage of their own (outputSizeInBytes less aliasSizeInBytes), then
// the arena (tempSizeInBytes) at the offsets buffer assignment fixed; so a
// lane's size is what memoryAnalysis() reports for that kind (peakMemoryInBytes
// for the device). A buffer is live from the first step that touches it to
// the last (inclusive); arguments for the whole call (a donated one whose
// storage an output takes, until its last read); outputs from the step that
// writes them to the end (those copied at the end: the last step). Control
// flow (scan / while / cond) is one 'scratch' bar per memory kind for its
// step, the region of the caller's arena where its nested arenas and second
// carry buffers live; the nested plans themselves are in `calls`, each a
// memory plan of its own (with its own toSVG()). Nothing here runs anything.
import { itemsize } from '../core/dtype.js';
import type { MemoryKind, PrimitiveParams } from '../core/primitives.js';
import { kernelName } from './kernel-ir.js';
import { MEMORY_KINDS_ORDER, ProgramPlan, bufferBytes, nestedPlans } from './plan.js';
import { type Stream, bufferLiveness } from './schedule.js';
import { type SvgOptions, memoryPlanSvg } from './memory-plan-svg.js';

/**
 * What a buffer is for, which colours its bar:
 * - argument: a caller's array (donated or not)
 * - output: an output with storage of its own
 * - donated: an output written into a donated argument's storage (aliasSizeInBytes)
 * - temporary: an intermediate in the arena
 * - aliased: an intermediate written over an operand that dies at that step (XLA's buffer sharing)
 * - residual: an intermediate one control-flow step writes and a later one reads: what a loop saves for another
 *   (the forward scan's stacked activations for the backward scan of a gradient)
 * - offloaded: an intermediate in the pinned-host arena (offloaded activations, residuals, copies)
 * - scratch: the region a scan / while / cond step reserves in its caller's arena while it runs
 */
export type BufferRole = 'argument' | 'output' | 'donated' | 'temporary' | 'aliased' | 'residual' | 'offloaded' | 'scratch';

export const BUFFER_ROLES: readonly BufferRole[] = ['argument', 'output', 'donated', 'temporary', 'aliased', 'residual', 'offloaded', 'scratch'];

/** Where in its lane a buffer lives: among the arguments, the outputs with storage of their own, or the arena. */
export type LaneRegion = 'arguments' | 'outputs' | 'arena';

export interface MemoryPlanStep {
  index: number;
  kind: 'launch' | 'copy' | 'call';
  /** the kernel's name (launch), `copy device->pinned_host` (copy), or the primitive (call) */
  name: string;
  /** the primitives the step computes */
  label: string;
  /** the stream that runs it: copies between memory kinds on the copy engines' streams */
  stream: Stream;
}

export interface MemoryPlanBuffer {
  /** argN (argument N), outN (output N), tmpN (program buffer N), scratchK (step K's scratch) */
  name: string;
  /** dtype and shape (or element count), and what wrote it */
  label: string;
  memoryKind: MemoryKind;
  role: BufferRole;
  region: LaneRegion;
  /** bytes from the start of its region (for the arena: the offset buffer assignment gave it) */
  offset: number;
  /** bytes */
  size: number;
  /** first and last step it is live (inclusive) */
  start: number;
  end: number;
  /** donated: the argument whose storage it is written into; aliased: the operand whose space it takes over */
  aliasOf: string | null;
}

export interface MemoryPlanTransfer {
  /** the copy step */
  step: number;
  stream: Stream;
  /** it may start after step `start` (-1: the call's start) and must be complete before step `wait` (steps.length: the call's end) */
  start: number;
  wait: number;
  /** the steps it may run alongside (between start and wait, itself excluded): its copy-stream window */
  overlaps: number[];
  src: string;
  dst: string;
  bytes: number;
}

export interface LaneLayout {
  /** where each region starts in the lane, and its bytes */
  arguments: { offset: number; size: number };
  outputs: { offset: number; size: number };
  arena: { offset: number; size: number };
  size: number;
}

export interface MemoryPlanPeak {
  /** the first step with the most bytes live */
  step: number;
  /** bytes of live buffers at that step (the union of their byte ranges: shared space counts once) */
  bytes: number;
  /** what the call reserves in this memory kind: the lane's size (for the device, memoryAnalysis().peakMemoryInBytes) */
  allocated: number;
  /** the buffers live at that step, largest first */
  live: string[];
}

/** memoryAnalysis()'s figures per memory kind (pinned_host: the host* fields), summed from the buffers. */
export interface MemoryPlanTotals {
  argument: number;
  output: number;
  alias: number;
  temp: number;
  /** argument + output - alias + temp */
  peak: number;
}

export interface MemoryPlanCall {
  step: number;
  primitive: string;
  scratch: Record<MemoryKind, number>;
  /** the nested plans (scan: body; while: cond, body; cond: branch 0, 1, ...) */
  plans: { name: string; plan: MemoryPlan }[];
}

export interface MemoryPlanData {
  /** the jitted function's name */
  function: string;
  platform: string;
  /** byte alignment of arena offsets */
  alignment: number;
  steps: MemoryPlanStep[];
  buffers: MemoryPlanBuffer[];
  transfers: MemoryPlanTransfer[];
  lanes: Record<MemoryKind, LaneLayout>;
  peak: Record<MemoryKind, MemoryPlanPeak>;
  totals: Record<MemoryKind, MemoryPlanTotals>;
  /** the traced constants: held by the compiled program, not by a call, so no lane (and no memoryAnalysis figure) counts them */
  constants: { name: string; memoryKind: MemoryKind; size: number }[];
  calls: MemoryPlanCall[];
}

/** A memory plan: plain data (JSON.stringify keeps all of it), with toSVG() to draw it. */
export interface MemoryPlan extends MemoryPlanData {
  /** A self-contained SVG: one lane per memory kind, steps left to right, bars coloured by role, the peak marked. */
  toSVG(options?: SvgOptions): string;
}

export interface MemoryPlanContext {
  /** the jitted function's name, for titles and errors */
  function: string;
  platform: string;
  /** the shapes of the flat arguments (labels); absent: element counts */
  argumentShapes?: readonly (readonly number[])[];
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The memory plan of a program plan. */
export function memoryPlanOf(plan: ProgramPlan, context: MemoryPlanContext): MemoryPlan {
  if (!(plan instanceof ProgramPlan)) {
    throw new TypeError(`memoryPlan: expected a compiled program's plan (ProgramPlan), got ${plan === null ? 'null' : typeof plan === 'object' ? (plan as object).constructor?.name ?? 'an object' : typeof plan}`);
  }
  return withSvg(buildPlan(plan, context));
}

function withSvg(data: MemoryPlanData): MemoryPlan {
  for (const c of data.calls) for (const p of c.plans) p.plan = withSvg(p.plan);
  // not enumerable: JSON.stringify and deep equality see the data only
  return Object.defineProperty(data, 'toSVG', { value: (options?: SvgOptions) => memoryPlanSvg(data, options), enumerable: false }) as MemoryPlan;
}

function buildPlan(plan: ProgramPlan, context: MemoryPlanContext): MemoryPlanData {
  const { program } = plan;
  const { buffers: programBuffers, steps: programSteps, outputs } = program;
  const n = programSteps.length;
  const lastStep = Math.max(n - 1, 0);
  const shapeText = (shape: readonly number[]) => `[${shape.join(',')}]`;

  // liveness, as plan.ts computes it
  const { first, last, lastRead, firstWrite: writer } = bufferLiveness(programSteps);

  const steps: MemoryPlanStep[] = programSteps.map((s, k) => {
    if (s.kind === 'launch') return { index: k, kind: 'launch', name: kernelName(s.kernel).slice(0, 120), label: s.label, stream: 'compute' };
    if (s.kind === 'copy') {
      const t = plan.transfers.find((x) => x.step === k);
      return { index: k, kind: 'copy', name: `copy ${programBuffers[s.src]!.memoryKind}->${programBuffers[s.dst]!.memoryKind}`, label: s.label, stream: t?.stream ?? 'compute' };
    }
    return { index: k, kind: 'call', name: s.eqn.primitive, label: s.label, stream: 'compute' };
  });

  // names: arguments by flat index, outputs by output index, the rest by program buffer
  const outputOf = new Map<number, number>();
  program.outputs.forEach((o, i) => {
    if ('buffer' in o && plan.outputSlots[i]! >= 0 && !outputOf.has(o.buffer)) outputOf.set(o.buffer, i);
  });
  const nameOf = (id: number): string => {
    const b = programBuffers[id]!;
    if (b.kind === 'argument') return `arg${b.index}`;
    if (b.kind === 'constant') return `const${b.index}`;
    if (b.kind === 'literal') return `literal${id}`;
    const out = outputOf.get(id);
    return out !== undefined ? `out${out}` : `tmp${id}`;
  };
  const elementsText = (id: number) => {
    const b = programBuffers[id]!;
    if (b.kind === 'argument' && context.argumentShapes?.[b.index!]) return `${b.dtype}${shapeText(context.argumentShapes[b.index!]!)}`;
    const out = outputOf.get(id);
    if (out !== undefined) return `${b.dtype}${shapeText(outputs[out]!.aval.shape)}`;
    // a control-flow step's outputs carry their avals (a scan's stacked ys)
    const k = writer.get(id);
    const s = k === undefined ? undefined : programSteps[k];
    if (s?.kind === 'call') {
      const v = s.eqn.outVars[s.outputs.indexOf(id)];
      if (v) return `${b.dtype}${shapeText(v.aval.shape)}`;
    }
    return `${b.dtype}, ${b.size} elements`;
  };
  const producedBy = (id: number) => {
    const k = writer.get(id);
    return k === undefined ? '' : ` from step ${k} (${programSteps[k]!.label})`;
  };

  const buffers: MemoryPlanBuffer[] = [];
  const regionSize: Record<MemoryKind, Record<LaneRegion, number>> = {
    device: { arguments: 0, outputs: 0, arena: plan.arena.device },
    pinned_host: { arguments: 0, outputs: 0, arena: plan.arena.pinned_host },
  };

  // arguments, end to end in flat order
  const argumentOffset = new Map<number, number>();
  const argumentIds = programBuffers.flatMap((b, id) => (b.kind === 'argument' ? [id] : [])).sort((a, b) => programBuffers[a]!.index! - programBuffers[b]!.index!);
  const takenStorage = new Map<number, number>(); // argument index → the output buffer written into it
  plan.placements.forEach((p, id) => {
    if (p.place === 'donated') takenStorage.set(p.argument, id);
  });
  for (const id of argumentIds) {
    const b = programBuffers[id]!;
    const size = bufferBytes(b);
    const offset = regionSize[b.memoryKind].arguments;
    argumentOffset.set(b.index!, offset);
    regionSize[b.memoryKind].arguments += size;
    const taken = takenStorage.has(b.index!);
    // the caller holds an argument for the whole call, unless an output is written into its storage
    const end = taken ? (lastRead.get(id) ?? 0) : lastStep;
    buffers.push({
      name: nameOf(id), label: `${elementsText(id)}${plan.options.donated?.has(b.index!) ? ', donated' : ''}`, memoryKind: b.memoryKind, role: 'argument',
      region: 'arguments', offset, size, start: 0, end, aliasOf: null,
    });
  }

  // outputs: one per program output, as memoryAnalysis counts them
  const firstOfSlot = new Set<number>();
  outputs.forEach((o, i) => {
    const kind = (o.aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device';
    const size = o.aval.shape.reduce((a, d) => a * d, 1) * itemsize(o.aval.dtype);
    const slot = plan.outputSlots[i]!;
    const label = `${o.aval.dtype}${shapeText(o.aval.shape)}`;
    const written = slot >= 0 && !firstOfSlot.has(slot);
    if (written) firstOfSlot.add(slot);
    const id = 'buffer' in o ? o.buffer : -1;
    const p = written ? plan.placements[id]! : null;
    if (p?.place === 'donated') {
      buffers.push({
        name: `out${i}`, label: `${label}${producedBy(id)}, into arg${p.argument}`, memoryKind: kind, role: 'donated', region: 'arguments',
        offset: argumentOffset.get(p.argument)!, size, start: writer.get(id) ?? first.get(id) ?? lastStep, end: lastStep, aliasOf: `arg${p.argument}`,
      });
      return;
    }
    const offset = regionSize[kind].outputs;
    regionSize[kind].outputs += size;
    // outputs no step writes (arguments returned as they are, literals, a value returned twice) are copied at the end
    const start = written ? (writer.get(id) ?? first.get(id) ?? lastStep) : lastStep;
    const source = written ? producedBy(id) : 'literal' in o ? ', a literal filled at the end' : `, copied from ${nameOf(id)} at the end`;
    buffers.push({ name: `out${i}`, label: `${label}${source}`, memoryKind: kind, role: 'output', region: 'outputs', offset, size, start, end: lastStep, aliasOf: null });
  });

  // the arena: intermediates, then each control-flow step's scratch
  const writtenByCall = (id: number) => {
    const k = writer.get(id);
    return k !== undefined && programSteps[k]!.kind === 'call';
  };
  const readByLaterCall = (id: number) => programSteps.some((s, k) => s.kind === 'call' && k > (writer.get(id) ?? n) && s.inputs.includes(id));
  plan.placements.forEach((p, id) => {
    if (p.place !== 'arena' || !first.has(id)) return;
    const b = programBuffers[id]!;
    const donor = plan.inPlace.get(id);
    const role: BufferRole = p.kind === 'pinned_host' ? 'offloaded'
      : donor !== undefined ? 'aliased'
        : writtenByCall(id) && readByLaterCall(id) ? 'residual' : 'temporary';
    buffers.push({
      name: nameOf(id), label: `${elementsText(id)}${producedBy(id)}`, memoryKind: p.kind, role, region: 'arena', offset: p.offset,
      size: bufferBytes(b), start: first.get(id)!, end: last.get(id)!, aliasOf: donor === undefined ? null : nameOf(donor),
    });
  });
  const calls: MemoryPlanCall[] = [];
  for (const [k, layout] of [...plan.calls].sort((a, b) => a[0] - b[0])) {
    const nested = nestedPlans(layout.plans);
    const names = layout.plans.primitive === 'scan' ? ['body'] : layout.plans.primitive === 'while' ? ['cond', 'body'] : nested.map((_, i) => `branch ${i}`);
    // the nested jaxprs' own argument shapes (a scan body's: one slice of each xs)
    const step = programSteps[k]!;
    const params = (step.kind === 'call' ? step.eqn.params : {}) as Partial<PrimitiveParams['scan'] & PrimitiveParams['while'] & PrimitiveParams['cond']>;
    const jaxprs = layout.plans.primitive === 'scan' ? [params.jaxpr] : layout.plans.primitive === 'while' ? [params.condJaxpr, params.bodyJaxpr] : params.branches ?? [];
    calls.push({
      step: k, primitive: layout.plans.primitive, scratch: { ...layout.scratch },
      plans: nested.map((p, i) => ({
        name: names[i]!,
        plan: buildPlan(p, {
          function: `${context.function}/${layout.plans.primitive}@${k}/${names[i]}`, platform: context.platform,
          ...(jaxprs[i] ? { argumentShapes: jaxprs[i]!.jaxpr.inVars.map((v) => v.aval.shape) } : {}),
        }) as MemoryPlan,
      })),
    });
    for (const kind of MEMORY_KINDS_ORDER) {
      const bytes = layout.scratch[kind];
      if (!bytes) continue;
      const nestedArena = Math.max(0, ...nested.map((p) => p.arena[kind]));
      const prefetch = kind === 'device' ? sum(layout.prefetch.map((f) => 2 * f.bytes)) : 0;
      const parts = [`nested arena ${nestedArena} B`];
      if (prefetch) parts.push(`prefetch slices ${prefetch} B`);
      if (bytes - nestedArena - prefetch > 0) parts.push(`carries and padding ${bytes - nestedArena - prefetch} B`);
      buffers.push({
        name: `scratch${k}`, label: `${layout.plans.primitive} at step ${k}: ${parts.join(', ')}`, memoryKind: kind, role: 'scratch', region: 'arena',
        offset: layout.scratchOffset[kind], size: bytes, start: k, end: k, aliasOf: null,
      });
    }
  }

  const lanes = {} as Record<MemoryKind, LaneLayout>;
  const totals = {} as Record<MemoryKind, MemoryPlanTotals>;
  const peak = {} as Record<MemoryKind, MemoryPlanPeak>;
  for (const kind of MEMORY_KINDS_ORDER) {
    const r = regionSize[kind];
    lanes[kind] = {
      arguments: { offset: 0, size: r.arguments },
      outputs: { offset: r.arguments, size: r.outputs },
      arena: { offset: r.arguments + r.outputs, size: r.arena },
      size: r.arguments + r.outputs + r.arena,
    };
    const mine = buffers.filter((b) => b.memoryKind === kind);
    const of = (role: BufferRole) => sum(mine.filter((b) => b.role === role).map((b) => b.size));
    const argument = of('argument');
    const alias = of('donated');
    const output = of('output') + alias;
    totals[kind] = { argument, output, alias, temp: r.arena, peak: argument + output - alias + r.arena };
    peak[kind] = peakOf(mine, lanes[kind], n);
  }

  const constants = programBuffers.flatMap((b) => (b.kind === 'constant' ? [{ name: `const${b.index}`, memoryKind: b.memoryKind, size: bufferBytes(b) }] : []));
  const transfers: MemoryPlanTransfer[] = plan.transfers.map((t) => {
    const s = programSteps[t.step]!;
    if (s.kind !== 'copy') throw new Error(`memoryPlan: internal error: transfer at step ${t.step} is a ${s.kind}`);
    const overlaps: number[] = [];
    for (let j = t.start + 1; j < t.wait; j++) if (j !== t.step) overlaps.push(j);
    return { step: t.step, stream: t.stream, start: t.start, wait: t.wait, overlaps: t.stream === 'compute' ? [] : overlaps, src: nameOf(s.src), dst: nameOf(s.dst), bytes: bufferBytes(programBuffers[s.dst]!) };
  });

  return { function: context.function, platform: context.platform, alignment: plan.options.alignment, steps, buffers, transfers, lanes, peak, totals, constants, calls };
}

/** Where a buffer's bytes are in its lane. */
export const laneOffset = (lane: LaneLayout, b: Pick<MemoryPlanBuffer, 'region' | 'offset'>): number => lane[b.region].offset + b.offset;

/** Names in natural order (arg2 before arg13), the same in every locale. */
function byName(a: string, b: string): number {
  const [, pa = a, na = ''] = /^(\D*)(\d*)$/.exec(a) ?? [];
  const [, pb = b, nb = ''] = /^(\D*)(\d*)$/.exec(b) ?? [];
  if (pa !== pb) return pa < pb ? -1 : 1;
  return Number(na) - Number(nb) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The step with the most live bytes (the union of live byte ranges, so space two buffers share counts once). */
function peakOf(buffers: MemoryPlanBuffer[], lane: LaneLayout, n: number): MemoryPlanPeak {
  let best: MemoryPlanPeak = { step: 0, bytes: -1, allocated: lane.size, live: [] };
  for (let k = 0; k < Math.max(n, 1); k++) {
    const live = buffers.filter((b) => b.start <= k && k <= b.end && b.size > 0);
    const ranges = live.map((b) => [laneOffset(lane, b), laneOffset(lane, b) + b.size] as const).sort((a, b) => a[0] - b[0]);
    let bytes = 0;
    let reach = 0;
    for (const [lo, hi] of ranges) {
      if (hi > reach) bytes += hi - Math.max(lo, reach);
      reach = Math.max(reach, hi);
    }
    if (bytes > best.bytes) {
      best = { step: k, bytes, allocated: lane.size, live: [...live].sort((a, b) => b.size - a.size || byName(a.name, b.name)).map((b) => b.name) };
    }
  }
  return best;
}
