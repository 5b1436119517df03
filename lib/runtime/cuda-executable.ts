// Running a planned program (compiler/plan.ts) on a CUDA device: the CUDA
// twin of cpu-executable.ts. Every kernel is rendered for its exact params
// and buffer alignments and compiled when the executable is made (all
// missing kernels in one parallel NVRTC batch); each straight-line stretch of
// steps becomes one native program (cuda/cuda_program.c), so a call of a
// program without control flow is one native call that queues every launch
// and copy; a stretch with a kernel runs as a CUDA graph, updated in
// place when a call brings fresh buffers (runsAsGraph). Buffers are bound by slot: the arguments, the constants, the
// output slots, the executable's literals, and the two arenas (device and
// pinned host) at the offsets buffer assignment fixed; a slot may start at
// an offset into its buffer, which is how a loop body runs on xs[t] and on
// its region of the caller's arena. Copies between memory kinds run on the
// copy streams inside the windows the schedule gives them (events order
// them against the compute stream).
//
// Control flow is driven from the host, one native call per iteration of a
// loop body: scan runs its body's programs with the carries alternating
// between the output and a scratch buffer (as the CPU runner does); while
// and cond read their predicate or branch index back to the host, which
// waits for the device each iteration, as a GPU without device-side control
// flow must. A host callback (jax.debug.print, jax.pureCallback) is a call
// piece as well: the host reads its operands back once the work before it
// is done, calls back, and queues its results' copies on the compute stream.
//
// After a device reset (a kernel faulted or hung; cuda-health.ts) the
// executable's native programs, kernels and literals belong to the lost
// context: its next run loads the kernels again (from the NVRTC cache),
// uploads the literals and builds new programs.
import { Array } from '../core/array.js';
import type { JaxprEqn } from '../trace/jaxpr.js';
import { packValues } from '../core/host.js';
import { Storage } from '../core/memory.js';
import type { MemoryKind, PrimitiveParams } from '../core/primitives.js';
import { describePlan } from '../compiler/describe-plan.js';
import type { Program } from '../compiler/fuse.js';
import { type CallLayout, type ProgramPlan, type ScanPrefetchMode, bufferBytes, nestedPlans } from '../compiler/plan.js';
import { launchOutputCount } from '../compiler/schedule.js';
import { type CudaKernelSource, renderCuda } from '../compiler/render/cuda.js';
import type { ProgramExecutable } from './backend.js';
import { outputArrays } from './program.js';
import type { CudaBackend, CudaBuffer } from './cuda.js';
import type { CudaBufferHandle, CudaFunctionHandle, CudaProgramHandle, CudaProgramOp, CudaProgramRef, CudaProgramSpec, CudaProgramStats } from './cuda-addon.js';
import { type Track, profiling, record, recordSpan } from '../profiler.js';
import { native } from './native.js';

/**
 * Whether scans prefetch their inputs that live in pinned host memory: the copy of iteration t+1's slice runs on
 * the h2d stream while iteration t computes (CallLayout.prefetch), at the cost of device memory for the slices in
 * flight. By default ('auto') where that costs no device memory (the program's footprint does not grow);
 * JAXON_CUDA_SCAN_PREFETCH=1 always, =0 never, and never with JAXON_CUDA_SERIAL_TRANSFERS=1 (every copy on the
 * compute stream). Read when a program is planned, as XLA_FLAGS are.
 */
export function scanPrefetchMode(): ScanPrefetchMode {
  const setting = process.env['JAXON_CUDA_SCAN_PREFETCH'];
  if (setting === '0' || process.env['JAXON_CUDA_SERIAL_TRANSFERS'] === '1') return 'off';
  return setting === '1' ? 'always' : 'auto';
}

/**
 * Whether a straight-line stretch of a program with `launches` kernels runs as a CUDA graph (cuda_graph.c): built on
 * its first run, relaunched, and updated in place when a call brings other buffers. By default every stretch with a
 * kernel: XLA waits for 5 kernels (xla_gpu_graph_min_graph_size) because it instantiates graphs again, but graphs
 * updated in place cost less host time than launching even 1 or 2 kernels one by one (an H200, 2026-11-27, calling
 * thread per jitted call: 1 kernel 7.8 µs as a graph, 8.9 µs op by op; 2 kernels 6.7 against 16.5 µs).
 * JAXON_CUDA_GRAPHS=0 turns graphs off, =N makes stretches of at least N kernels graphs (5 as XLA); read when a
 * program is compiled, as XLA_FLAGS are.
 */
export function runsAsGraph(launches: number): boolean {
  const setting = process.env['JAXON_CUDA_GRAPHS'];
  if (setting === '0') return false;
  const least = setting !== undefined && /^[1-9][0-9]*$/.test(setting) ? Number(setting) : 1;
  return launches >= least;
}

/** A slot's memory for one run: a buffer and the byte offset the slot starts at. */
interface Binding {
  buffer: CudaBuffer;
  offset: number;
}

const at = (b: Binding, offset: number): Binding => ({ buffer: b.buffer, offset: b.offset + offset });

/** The largest power of two (at most 256) dividing n. */
const alignmentOf = (n: number): number => {
  let a = 256;
  while (a > 1 && n % a !== 0) a /= 2;
  return a;
};

/** What the profiler calls an op of a segment (null for event records and waits). */
interface OpLabel {
  name: string;
  track: Track;
  bytes?: number;
}

/** The bytes an op reads and writes: [slot, offset, bytes] each. */
interface Access {
  reads: [number, number, number][];
  writes: [number, number, number][];
}

type Piece =
  | { kind: 'segment'; program: CudaProgramHandle; launches: number; labels: (OpLabel | null)[]; ops: CudaProgramOp[]; access: (Access | null)[] }
  | { kind: 'call'; step: number; layout: CallLayout; run: CallRunner };

type CallRunner = (ref: (id: number) => Binding, inputs: number[], outputs: number[], scratch: Record<MemoryKind, Binding>) => void;

export class CudaExecutable implements ProgramExecutable {
  readonly program: Program;
  /** the CUDA source of every launch step, by step index */
  readonly #sources = new Map<number, CudaKernelSource>();
  #functions = new Map<string, CudaFunctionHandle>();
  #pieces: Piece[] = [];
  /** literal buffers' offsets in the literal slot */
  readonly #literalOffsets = new Map<number, number>();
  #literals: CudaBuffer;
  readonly #literalHost: Uint8Array;
  /** the device generation its programs, kernels and literals belong to */
  #generation: number;
  /** constants of nested plans, copied to this device once */
  readonly #consts: CudaBuffer[];
  readonly #slots: { args: number; consts: number; outputs: number; literals: number; arena: Record<MemoryKind, number>; count: number };
  readonly #nested = new Map<ProgramPlan, CudaExecutable>();
  /** scan input slices copied ahead of their iteration (CallLayout.prefetch), over every run */
  #prefetches = 0;
  /**
   * A top-level program without control flow keeps its device temporaries in the native program's own arena (slot
   * -1: allocated and freed, stream-ordered, inside the one native call that runs it) rather than in a buffer the
   * run allocates and frees from JS: two addon calls fewer per call.
   */
  readonly #nativeArena: boolean;
  /** JAXON_CUDA_POISON=1: every run's temporaries and outputs start as 0xff bytes (read once: process.env is slow) */
  readonly #poison = process.env['JAXON_CUDA_POISON'] === '1';
  /** Whether run() may take #runDirect: one segment, no donation, no arena outside the native program's, no poison. */
  get #direct(): boolean {
    const { plan } = this;
    if (this.#pieces.length === 0) return false; // not built yet
    return this.#directOk ??=
      this.#pieces.length === 1 && this.#pieces[0]!.kind === 'segment' && !this.#poison && plan.arena.pinned_host === 0 &&
      (plan.arena.device === 0 || this.#nativeArena) && plan.slotBuffers.every((id) => plan.placements[id]!.place !== 'donated');
  }
  #directOk: boolean | undefined;

  constructor(
    readonly backend: CudaBackend,
    readonly plan: ProgramPlan,
    /** byte alignment each argument / output slot's base is guaranteed (nested bodies run on windows of the caller's buffers) */
    readonly slotAlignments: { args: readonly number[]; outputs: readonly number[] } | null = null,
    compile = true,
    /** what a failure on the device names: 'jax.jit(f)' */
    readonly label = 'a compiled program',
    /**
     * argument indices the caller binds to device memory although the plan has them in pinned host memory (a scan's
     * prefetched xs): their copies are device to device, on the compute stream rather than in a transfer window
     */
    readonly deviceArgs: ReadonlySet<number> = new Set(),
  ) {
    this.program = plan.program;
    this.#generation = backend.generation;
    this.#nativeArena = slotAlignments === null && plan.arena.device > 0 && plan.program.steps.every((s) => s.kind !== 'call') && !this.#poison;
    const { buffers, steps } = this.program;
    const args = buffers.filter((b) => b.kind === 'argument').reduce((n, b) => Math.max(n, b.index! + 1), 0);
    const nConsts = plan.consts.length;
    this.#slots = {
      args,
      consts: nConsts,
      outputs: plan.slotBuffers.length,
      literals: args + nConsts + plan.slotBuffers.length,
      arena: { device: args + nConsts + plan.slotBuffers.length + 1, pinned_host: args + nConsts + plan.slotBuffers.length + 2 },
      count: args + nConsts + plan.slotBuffers.length + 3,
    };
    // literals (and literal outputs of nested programs) packed into one device buffer, 16 bytes apart
    const literalBytes: Uint8Array[] = [];
    let literalSize = 0;
    const addLiteral = (value: number, dtype: Parameters<typeof packValues>[1]) => {
      const bytes = packValues([value], dtype);
      const offset = literalSize;
      literalBytes.push(bytes);
      literalSize += 16;
      return offset;
    };
    buffers.forEach((b, id) => {
      if (b.kind === 'literal') this.#literalOffsets.set(id, addLiteral(b.value!, b.dtype));
    });
    this.program.outputs.forEach((o, i) => {
      if ('literal' in o) this.#literalOffsets.set(-1 - i, addLiteral(o.literal, o.aval.dtype));
    });
    const literalHost = new Uint8Array(Math.max(literalSize, 16));
    literalBytes.forEach((b, i) => literalHost.set(b, i * 16));
    this.#literalHost = literalHost;
    this.#literals = backend.fromHost(literalHost);
    this.#consts = [];
    // kernels: render each launch for its buffers' alignments
    steps.forEach((s, k) => {
      if (s.kind !== 'launch') return;
      const alignments = s.buffers.map((id) => Math.min(16, this.#alignment(id)));
      this.#sources.set(k, renderCuda(s.kernel, s.params, { alignments, gemm: backend.gemmTarget(s.kernel, s.params, alignments) }));
    });
    for (const [k, layout] of plan.calls) {
      const p = layout.plans;
      const step = steps[k] as Extract<Program['steps'][number], { kind: 'call' }>;
      for (const n of nestedPlans(p)) {
        if (this.#nested.has(n)) continue;
        // a scan's prefetched xs arrive in device memory: the body copies them on the compute stream
        const deviceArgs = new Set<number>();
        if (p.primitive === 'scan') {
          const { numConsts, numCarry } = step.eqn.params as PrimitiveParams['scan'];
          for (const f of layout.prefetch) deviceArgs.add(numConsts + numCarry + f.xs);
        }
        this.#nested.set(n, new CudaExecutable(backend, n, this.#nestedAlignments(layout, n, step), false, label, deviceArgs));
      }
    }
    if (compile) this.#load();
  }

  /** The alignment a buffer's address is sure to have during a run. */
  #alignment(id: number): number {
    const p = this.plan.placements[id]!;
    switch (p.place) {
      case 'argument': return this.slotAlignments?.args[p.index] ?? 256;
      case 'constant': return 256;
      case 'literal': return 16;
      case 'output': case 'donated': return this.slotAlignments?.outputs[p.output] ?? 256;
      case 'arena': return alignmentOf(p.offset);
    }
  }

  /**
   * What a nested plan's argument and output slots are aligned to, from where the caller binds them: its own
   * buffers' alignments, the scratch slots in its arena, and windows of xs / ys at multiples of their stride
   * (a vector load on a misaligned address faults on a GPU).
   */
  #nestedAlignments(layout: CallLayout, nested: ProgramPlan, step: Extract<Program['steps'][number], { kind: 'call' }>): { args: number[]; outputs: number[] } {
    const cap = (a: number) => Math.min(16, a);
    const inA = step.inputs.map((id) => this.#alignment(id));
    const outA = step.outputs.map((id) => this.#alignment(id));
    const scratch = (kind: MemoryKind, offset: number) => alignmentOf(layout.scratchOffset[kind] + offset);
    const argCount = nested.program.buffers.filter((b) => b.kind === 'argument').reduce((n, b) => Math.max(n, b.index! + 1), 0);
    const args = new globalThis.Array<number>(argCount).fill(16);
    const outputs = new globalThis.Array<number>(nested.slotBuffers.length).fill(16);
    const setOutput = (i: number, a: number) => {
      const slot = nested.outputSlots[i]!;
      if (slot >= 0) outputs[slot] = Math.min(outputs[slot]!, cap(a));
    };
    const kindOf = (i: number) => (nested.program.outputs[i]?.aval as { memorySpace?: MemoryKind } | undefined)?.memorySpace ?? 'device';
    const bytesOf = (id: number) => bufferBytes(this.program.buffers[id]!);
    if (layout.plans.primitive === 'scan') {
      const { numConsts, numCarry, length } = step.eqn.params as PrimitiveParams['scan'];
      for (let i = 0; i < args.length; i++) {
        if (i < numConsts) args[i] = cap(inA[i]!);
        else if (i < numConsts + numCarry) {
          const k = i - numConsts;
          args[i] = cap(Math.min(inA[i]!, outA[k]!, scratch(kindOf(k), layout.carryOffsets[k]!)));
        } else args[i] = cap(Math.min(inA[i]!, alignmentOf(bytesOf(step.inputs[i]!) / Math.max(length, 1))));
      }
      nested.program.outputs.forEach((_, i) => {
        if (i < numCarry) setOutput(i, Math.min(outA[i]!, scratch(kindOf(i), layout.carryOffsets[i]!)));
        else setOutput(i, Math.min(outA[i]!, alignmentOf(bytesOf(step.outputs[i]!) / Math.max(length, 1))));
      });
    } else if (layout.plans.primitive === 'while') {
      const { condNconsts, bodyNconsts } = step.eqn.params as PrimitiveParams['while'];
      const carries = step.outputs.map((_, k) => Math.min(inA[condNconsts + bodyNconsts + k]!, outA[k]!, scratch(kindOf(k), layout.carryOffsets[k]!)));
      if (nested === layout.plans.cond) {
        for (let i = 0; i < args.length; i++) args[i] = cap(i < condNconsts ? inA[i]! : carries[i - condNconsts]!);
        setOutput(0, alignmentOf(layout.scratchOffset.device + layout.predicateOffset));
      } else {
        for (let i = 0; i < args.length; i++) args[i] = cap(i < bodyNconsts ? inA[condNconsts + i]! : carries[i - bodyNconsts]!);
        nested.program.outputs.forEach((_, i) => setOutput(i, carries[i]!));
      }
    } else {
      for (let i = 0; i < args.length; i++) args[i] = cap(inA[i + 1]!);
      nested.program.outputs.forEach((_, i) => setOutput(i, outA[i]!));
    }
    return { args, outputs };
  }

  /** Compiles every kernel of this program and its nested ones in one batch, then builds the native programs. */
  #load(): void {
    const all = [...this.#allExecutables()];
    const sources = all.flatMap((e) => [...e.#sources.values()]);
    this.#functions = this.backend.loadKernelsSync(sources);
    for (const e of all) {
      e.#functions = this.#functions;
      e.#generation = this.backend.generation;
      e.#buildPieces();
    }
    // a race between streams would be a silent wrong answer: refuse the program instead
    const hazards = this.hazards();
    if (hazards.length) throw new Error(`jax.jit: internal error: the compiled CUDA program leaves ops unordered: ${hazards.slice(0, 3).join('; ')}`);
  }

  /** After a device reset: the literals uploaded again, the kernels loaded again, new native programs. */
  #rebuild(): void {
    for (const e of this.#allExecutables()) {
      e.#literals = this.backend.fromHost(e.#literalHost);
      e.#consts.length = 0; // nested constants that lived on the device are gone with it: using them raises
      e.#pieces = [];
    }
    this.#load();
  }

  *#allExecutables(): Generator<CudaExecutable> {
    yield this;
    for (const n of this.#nested.values()) yield* n.#allExecutables();
  }

  #buildPieces(): void {
    const { steps } = this.program;
    let start = 0;
    for (let k = 0; k <= steps.length; k++) {
      if (k < steps.length && steps[k]!.kind !== 'call') continue;
      if (k > start) this.#pieces.push(this.#segment(start, k));
      if (k < steps.length) {
        const layout = this.plan.calls.get(k)!;
        const step = steps[k] as Extract<Program['steps'][number], { kind: 'call' }>;
        this.#pieces.push({ kind: 'call', step: k, layout, run: this.#callRunner(step.eqn, layout) });
      }
      start = k + 1;
    }
  }

  /** The slot and offset of a buffer. */
  #ref(id: number): CudaProgramRef {
    const p = this.plan.placements[id]!;
    const s = this.#slots;
    switch (p.place) {
      case 'argument': return [p.index, 0];
      case 'constant': return [s.args + p.index, 0];
      case 'literal': return [s.literals, this.#literalOffsets.get(id)!];
      case 'output': case 'donated': return [s.args + s.consts + p.output, 0];
      case 'arena': return p.kind === 'device' && this.#nativeArena ? [-1, p.offset] : [s.arena[p.kind], p.offset];
    }
  }

  /** One native program for steps [from, to): launches and copies, transfers in their windows. */
  #segment(from: number, to: number): Piece {
    const { steps, buffers } = this.program;
    const ops: CudaProgramOp[] = [];
    const slotBytes = new globalThis.Array<number>(this.#slots.count).fill(0);
    const need = (ref: CudaProgramRef, bytes: number) => {
      if (ref[0] >= 0) slotBytes[ref[0]] = Math.max(slotBytes[ref[0]]!, ref[1] + bytes);
      return ref;
    };
    let events = 0;
    const labels: (OpLabel | null)[] = [];
    const waits = new Map<number, number[]>();
    // JAXON_CUDA_SERIAL_TRANSFERS=1 keeps every copy on the compute stream, in step order (to tell a transfer race from anything else)
    const serial = process.env['JAXON_CUDA_SERIAL_TRANSFERS'] === '1';
    const fromDeviceArg = (k: number) => {
      const s = steps[k]!;
      return s.kind === 'copy' && buffers[s.src]!.kind === 'argument' && this.deviceArgs.has(buffers[s.src]!.index!);
    };
    const transfers = serial ? [] : this.plan.transfers.filter((t) => t.step >= from && t.step < to && t.stream !== 'compute' && !fromDeviceArg(t.step));
    const issued: { stream: string; done: number; before: number }[] = [];
    const startTransfers = (position: number) => {
      for (const t of transfers) {
        if (Math.max(t.start, from - 1) !== position) continue;
        const s = steps[t.step] as Extract<Program['steps'][number], { kind: 'copy' }>;
        const bytes = bufferBytes(buffers[s.src]!);
        const ready = events++;
        const done = events++;
        ops.push({ op: 'record', stream: 'compute', event: ready });
        ops.push({ op: 'wait', stream: t.stream, event: ready });
        // transfers that must finish before this step (it is a copy: it runs on its own stream, not after compute's waits)
        for (const other of issued) if (other.before <= t.step && other.stream !== t.stream) ops.push({ op: 'wait', stream: t.stream, event: other.done });
        labels[ops.length] = { name: `copy ${buffers[s.src]!.memoryKind} -> ${buffers[s.dst]!.memoryKind}`, track: t.stream === 'h2d' ? 'h2d' : 'd2h', bytes };
        ops.push({ op: 'copy', stream: t.stream, dst: need(this.#ref(s.dst), bytes), src: need(this.#ref(s.src), bytes), bytes });
        ops.push({ op: 'record', stream: t.stream, event: done });
        const before = Math.min(t.wait, to);
        issued.push({ stream: t.stream, done, before });
        waits.set(before, [...(waits.get(before) ?? []), done]);
      }
    };
    let launches = 0;
    const launchSteps = new Map<CudaProgramOp, Extract<Program['steps'][number], { kind: 'launch' }>>();
    startTransfers(from - 1);
    for (let k = from; k < to; k++) {
      for (const event of waits.get(k) ?? []) ops.push({ op: 'wait', stream: 'compute', event });
      const s = steps[k]!;
      if (s.kind === 'launch') {
        const source = this.#sources.get(k)!;
        if (!source.grid.some((g) => g === 0)) {
          const launch: CudaProgramOp = {
            op: 'launch', function: this.#functions.get(source.source)!, grid: source.grid, block: source.block,
            sharedMemBytes: source.sharedMemBytes, args: s.buffers.map((id) => need(this.#ref(id), bufferBytes(buffers[id]!))),
            ...(source.tensorMaps ? { tensorMaps: source.tensorMaps } : {}),
          };
          labels[ops.length] = { name: source.name, track: 'compute' };
          ops.push(launch);
          launchSteps.set(launch, s);
          launches++;
        }
      } else if (s.kind === 'copy') {
        const bytes = bufferBytes(buffers[s.src]!);
        const copy: CudaProgramOp = { op: 'copy', stream: 'compute', dst: need(this.#ref(s.dst), bytes), src: need(this.#ref(s.src), bytes), bytes };
        if (bytes > 0 && !transfers.some((t) => t.step === k)) {
          const [from, to] = [buffers[s.src]!.memoryKind, buffers[s.dst]!.memoryKind];
          labels[ops.length] = { name: `copy ${from} -> ${to}`, track: 'compute', bytes };
          ops.push(copy);
        }
      }
      startTransfers(k);
    }
    for (const event of waits.get(to) ?? []) ops.push({ op: 'wait', stream: 'compute', event });
    const graph = runsAsGraph(launches);
    const program = this.backend.guarded(() => native().cudaProgramCreate(this.backend.info.handle, { slotBytes, arenaBytes: this.#nativeArena ? this.plan.arena.device : 0, events, graph, ops }));
    const access = ops.map((op): Access | null => {
      if (op.op === 'copy') return { reads: [[...op.src, op.bytes]], writes: [[...op.dst, op.bytes]] };
      if (op.op !== 'launch') return null;
      const step = launchSteps.get(op)!;
      const n = launchOutputCount(step.kernel, step.buffers.length);
      const regions = step.buffers.map((id, i): [number, number, number] => [...op.args[i]!, bufferBytes(buffers[id]!)]);
      return { reads: regions.slice(n), writes: regions.slice(0, n) };
    });
    return { kind: 'segment', program, launches, labels: ops.map((_, i) => labels[i] ?? null), ops, access };
  }

  /**
   * Pairs of ops in one native program that touch overlapping bytes (one of them writing) with nothing ordering
   * them: not one stream, and no record/wait chain between their streams. A race on a GPU; [] is the pass.
   */
  hazards(): string[] {
    const out: string[] = [];
    for (const e of this.#allExecutables()) {
      for (const piece of e.#pieces) if (piece.kind === 'segment') out.push(...segmentHazards(piece.ops, piece.access));
    }
    return out;
  }

  /** The native programs' counters (runs, graph launches, builds and updates), this program's and its nested ones'. */
  programStats(): CudaProgramStats[] {
    const out: CudaProgramStats[] = [];
    for (const e of this.#allExecutables()) {
      for (const piece of e.#pieces) if (piece.kind === 'segment') out.push(native().cudaProgramStats(piece.program));
    }
    return out;
  }

  /** Scan input slices this program and its nested ones copied to the device one iteration ahead, over every run. */
  get scanPrefetches(): number {
    let n = 0;
    for (const e of this.#allExecutables()) n += e.#prefetches;
    return n;
  }

  get kernelCount(): number {
    let n = 0;
    for (const p of this.plan.allPlans()) n += p.program.steps.filter((s) => s.kind === 'launch').length;
    return n;
  }

  /** Runs the pieces with every slot bound; `consts` null: the executable's own (nested plans). */
  exec(args: readonly Binding[], consts: readonly Binding[] | null, outs: readonly Binding[], arena: Record<MemoryKind, Binding>): void {
    const bindings: Binding[] = [
      ...args,
      ...(consts ?? this.#constBindings()),
      ...outs,
      { buffer: this.#literals, offset: 0 },
      arena.device,
      arena.pinned_host,
    ];
    const handles = bindings.map((b) => b.buffer.handle);
    const offsets = bindings.map((b) => b.offset);
    const ref = (id: number): Binding => {
      const [slot, offset] = this.#ref(id);
      return at(bindings[slot]!, offset);
    };
    const timed = profiling();
    for (const piece of this.#pieces) {
      if (piece.kind === 'segment') {
        if (timed) this.#runTimed(piece, handles, offsets);
        else this.backend.guarded(() => native().cudaProgramRun(piece.program, handles, offsets));
        continue;
      }
      const begin = timed ? performance.now() : 0;
      const step = this.program.steps[piece.step] as Extract<Program['steps'][number], { kind: 'call' }>;
      const scratch = {
        device: at(arena.device, piece.layout.scratchOffset.device),
        pinned_host: at(arena.pinned_host, piece.layout.scratchOffset.pinned_host),
      };
      piece.run(ref, step.inputs, step.outputs, scratch);
      if (timed) record(step.eqn.primitive, 'host', begin);
    }
  }

  /**
   * While the profiler records: the segment runs as usual, on all its streams, with CUDA events around each op, and
   * waits; each op becomes a span at its device time, placed on the host clock from when the run was queued, so
   * copies that overlap kernels show as overlapping.
   */
  #runTimed(piece: Extract<Piece, { kind: 'segment' }>, handles: CudaBufferHandle[], offsets: number[]): void {
    const addon = native();
    this.backend.guarded(() => addon.cudaSynchronizeSync(this.backend.info.handle));
    const begin = performance.now();
    const times = this.backend.guarded(() => addon.cudaProgramRunTimed(piece.program, handles, offsets));
    piece.labels.forEach((label, i) => {
      if (!label) return;
      recordSpan(label.name, label.track, begin + times[2 * i]!, times[2 * i + 1]! - times[2 * i]!, label.bytes !== undefined ? { bytes: label.bytes } : undefined);
    });
  }

  #constBindings(): Binding[] {
    if (this.#consts.length === 0 && this.plan.consts.length > 0) {
      const consts = this.plan.consts as Array[];
      // a constant whose own work failed holds no value (as in run), checked before any is kept
      for (const c of consts) {
        const s = c.storage('jax.jit');
        const error = s.backend === this.backend ? (s.buffer as CudaBuffer).error : undefined;
        if (error !== undefined) throw error;
      }
      for (const c of consts) this.#consts.push(this.#constantBuffer(c));
    }
    return this.#consts.map((buffer) => ({ buffer, offset: 0 }));
  }

  /** A nested plan's constant on this device (a copy if it lives elsewhere), kept for the executable's life. */
  #constantBuffer(c: Array): CudaBuffer {
    const s = c.storage('jax.jit');
    if (s.backend === this.backend) {
      s.retain(); // held by the executable
      return s.buffer as CudaBuffer;
    }
    return this.backend.fromHost(s.backend.toHostSync(s.buffer), c.memorySpace);
  }

  /** Nested use: outputs go to the caller's destinations, including those the program does not compute (copied there). */
  execInto(args: readonly Binding[], dests: readonly Binding[], arena: Record<MemoryKind, Binding>): void {
    const { outputSlots, slotBuffers } = this.plan;
    const outs = slotBuffers.map((_, slot) => dests[outputSlots.indexOf(slot)]!);
    this.exec(args, null, outs, arena);
    this.program.outputs.forEach((o, i) => {
      const slot = outputSlots[i]!;
      if (slot >= 0 && outputSlots.indexOf(slot) === i) return;
      const bytes = bufferBytes({ size: o.aval.shape.reduce((a, b) => a * b, 1), dtype: o.aval.dtype });
      let src: Binding;
      if ('literal' in o) src = { buffer: this.#literals, offset: this.#literalOffsets.get(-1 - i)! };
      else if (slot >= 0) src = outs[slot]!;
      else {
        const p = this.plan.placements[o.buffer]!;
        if (p.place === 'argument') src = args[p.index]!;
        else if (p.place === 'constant') src = this.#constBindings()[p.index]!;
        else src = { buffer: this.#literals, offset: this.#literalOffsets.get(o.buffer)! };
      }
      this.backend.copyRegion(dests[i]!, src, bytes);
    });
  }

  #callRunner(eqn: JaxprEqn, layout: CallLayout): CallRunner {
    const params = eqn.params as PrimitiveParams['scan'] & PrimitiveParams['while'] & PrimitiveParams['cond'];
    if (layout.plans.primitive === 'debug_callback' || layout.plans.primitive === 'pure_callback') {
      // the host waits for its operands (a read through the compute stream), calls back, and queues the results' copies
      const { callback } = eqn.params as PrimitiveParams['pure_callback'];
      const avals = eqn.inputs.map((a) => a.aval);
      const resultAvals = eqn.outVars.map((v) => v.aval);
      const bytesOf = (id: number) => bufferBytes(this.program.buffers[id]!);
      return (ref, inputs, outputs) => {
        const results = callback(inputs.map((id, i) => ({ bytes: this.backend.readRegionSync(ref(id), bytesOf(id)), aval: avals[i]! })), resultAvals);
        outputs.forEach((id, k) => {
          const bytes = results[k];
          if (!bytes || bytes.byteLength !== bytesOf(id)) throw new Error(`jax.jit: internal error: ${eqn.primitive} gave ${bytes?.byteLength ?? 'no'} bytes for a ${bytesOf(id)}-byte result`);
          this.backend.writeRegion(ref(id), bytes);
        });
      };
    }
    const carrySlot = (scratch: Record<MemoryKind, Binding>, kind: MemoryKind, k: number) => at(scratch[kind], layout.carryOffsets[k]!);
    const nestedArena = (scratch: Record<MemoryKind, Binding>): Record<MemoryKind, Binding> => ({
      device: at(scratch.device, layout.nestedOffset.device),
      pinned_host: at(scratch.pinned_host, layout.nestedOffset.pinned_host),
    });
    const bytesOf = (id: number) => bufferBytes(this.program.buffers[id]!);
    if (layout.plans.primitive === 'scan') {
      const bodyPlan = layout.plans.body;
      const body = this.#nested.get(bodyPlan)!;
      const { length, numConsts, numCarry, reverse } = params;
      return (ref, inputs, outputs, scratch) => {
        const consts = inputs.slice(0, numConsts).map(ref);
        const init = inputs.slice(numConsts, numConsts + numCarry).map(ref);
        const xs = inputs.slice(numConsts + numCarry);
        const carryOut = outputs.slice(0, numCarry).map(ref);
        const ys = outputs.slice(numCarry);
        if (length === 0) {
          init.forEach((r, k) => this.backend.copyRegion(carryOut[k]!, r, bytesOf(outputs[k]!)));
          return;
        }
        const kinds = bodyPlan.program.outputs.slice(0, numCarry).map((o) => (o.aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device');
        const slots = [carryOut, carryOut.map((_, k) => carrySlot(scratch, kinds[k]!, k))];
        const arena = nestedArena(scratch);
        const xBytes = xs.map((x) => bytesOf(x) / length);
        const yBytes = ys.map((y) => bytesOf(y) / length);
        const xRefs = xs.map(ref);
        const yRefs = ys.map(ref);
        const index = (t: number) => (reverse ? length - 1 - t : t);
        // prefetched xs (layout.prefetch): while the body runs on slice t in one device region, slice t+1 is copied
        // into the other on the h2d stream. Per iteration: the compute stream waits for the copies queued so far
        // (slice t); the next copy waits for the compute stream up to there (iteration t-1, the last reader of its
        // region, is done) and is left in flight; then the body, whose copy of its slice reads device memory on
        // the compute stream (the nested executable's deviceArgs).
        const regions = layout.prefetch.map((f) => f.offsets.map((o) => at(scratch.device, o)));
        const prefetch = (t: number) => layout.prefetch.forEach((f, k) => {
          this.backend.prefetchRegion(regions[k]![t % 2]!, at(xRefs[f.xs]!, index(t) * f.bytes), f.bytes, t === 0);
          this.#prefetches++;
        });
        if (regions.length) prefetch(0);
        for (let t = 0; t < length; t++) {
          const i = index(t);
          const cur = t === 0 ? init : slots[(length - t) % 2]!;
          const next = slots[(length - 1 - t) % 2]!;
          const xsNow = xRefs.map((x, k) => at(x, i * xBytes[k]!));
          if (regions.length) {
            this.backend.awaitPrefetches();
            if (t + 1 < length) prefetch(t + 1);
            layout.prefetch.forEach((f, k) => { xsNow[f.xs] = regions[k]![t % 2]!; });
          }
          body.execInto([...consts, ...cur, ...xsNow], [...next, ...yRefs.map((y, k) => at(y, i * yBytes[k]!))], arena);
        }
      };
    }
    if (layout.plans.primitive === 'while') {
      const { cond: condPlan, body: bodyPlan } = layout.plans;
      const cond = this.#nested.get(condPlan)!;
      const body = this.#nested.get(bodyPlan)!;
      const { condNconsts, bodyNconsts } = params;
      return (ref, inputs, outputs, scratch) => {
        const condConsts = inputs.slice(0, condNconsts).map(ref);
        const bodyConsts = inputs.slice(condNconsts, condNconsts + bodyNconsts).map(ref);
        const init = inputs.slice(condNconsts + bodyNconsts).map(ref);
        const out = outputs.map(ref);
        const kinds = bodyPlan.program.outputs.map((o) => (o.aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device');
        const slots = [out, out.map((_, k) => carrySlot(scratch, kinds[k]!, k))];
        const predicate = at(scratch.device, layout.predicateOffset);
        const arena = nestedArena(scratch);
        let cur = init;
        for (let k = 0; ; k++) {
          cond.execInto([...condConsts, ...cur], [predicate], arena);
          if (!this.backend.readByte(predicate)) break;
          const next = slots[k % 2]!;
          body.execInto([...bodyConsts, ...cur], next, arena);
          cur = next;
        }
        if (cur !== out) cur.forEach((r, k) => this.backend.copyRegion(out[k]!, r, bytesOf(outputs[k]!)));
      };
    }
    if (layout.plans.primitive !== 'cond') throw new Error(`jax.jit: internal error: no runner for ${layout.plans.primitive}`);
    const branchPlans = layout.plans.branches;
    const branches = branchPlans.map((p) => this.#nested.get(p)!);
    return (ref, inputs, outputs, scratch) => {
      const raw = this.backend.readInt32(ref(inputs[0]!));
      const i = Math.min(Math.max(raw, 0), branches.length - 1);
      branches[i]!.execInto(inputs.slice(1).map(ref), outputs.map(ref), nestedArena(scratch));
    };
  }

  /**
   * The usual jitted call, on the host's hot path: one native program (no control flow, no donation, no host
   * temporaries), every slot at offset 0. Binds the handles straight into the native call's slot array (the general
   * path below builds bindings, offsets and arena objects per call; host time per call is issue 11's figure).
   */
  #runDirect(args: readonly Array[], consts: readonly Array[]): Array[] {
    const { plan, program, backend } = this;
    const piece = this.#pieces[0] as Extract<Piece, { kind: 'segment' }>;
    const slots = this.#slots;
    const handles = new globalThis.Array<CudaBufferHandle>(slots.count);
    for (let i = 0; i < args.length; i++) handles[i] = backend.own(args[i]!.storage('jax.jit').buffer, 'jax.jit').handle;
    for (let i = 0; i < consts.length; i++) handles[slots.args + i] = backend.own(consts[i]!.storage('jax.jit').buffer, 'jax.jit').handle;
    backend.ensureUsable();
    backend.noteWork(this.label);
    const slotBuffers = plan.slotBuffers;
    const storages: Storage[] = new globalThis.Array(slotBuffers.length);
    try {
      for (let i = 0; i < slotBuffers.length; i++) {
        const b = program.buffers[slotBuffers[i]!]!;
        const buffer = backend.allocate(bufferBytes(b), b.memoryKind);
        storages[i] = new Storage(backend, buffer);
        handles[slots.args + slots.consts + i] = buffer.handle;
      }
      const literals = this.#literals.handle;
      handles[slots.literals] = literals;
      handles[slots.arena.device] = literals; // no temporaries outside the native arena: nothing refers to these slots
      handles[slots.arena.pinned_host] = literals;
      backend.guarded(() => native().cudaProgramRun(piece.program, handles));
    } catch (error) {
      for (const st of storages) st?.release();
      throw error;
    }
    return this.#outputArrays(storages, args, consts);
  }

  /** The call's output arrays (runtime/program.ts); a literal output is uploaded to this device. */
  #outputArrays(storages: Storage[], args: readonly Array[], consts: readonly Array[]): Array[] {
    const { backend } = this;
    return outputArrays(this.plan, storages, args, consts, (value, aval) => {
      const space = (aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device';
      return new Array(new Storage(backend, backend.fromHost(packValues([value], aval.dtype), space)), aval.shape, aval.dtype, aval.weakType, space);
    });
  }

  /** Throws the failure of the work that should have written an argument's buffer, if it failed. */
  #computed(a: Array): void {
    const { error } = this.backend.own(a.storage('jax.jit').buffer, 'jax.jit');
    if (error !== undefined) throw error;
  }

  /** Runs the program on arguments and constants on this device; returns new output arrays. */
  run(args: readonly Array[], consts: readonly Array[]): Array[] {
    const { plan, program, backend } = this;
    backend.flush();
    // an array whose own work failed (an eager op whose kernel did not compile) holds no value: the call raises that
    // failure, as reading the array does, rather than computing from memory nothing wrote
    for (const a of args) this.#computed(a);
    for (const a of consts) this.#computed(a);
    if (this.#direct && this.#generation === backend.generation && args.length === this.#slots.args && consts.length === this.#slots.consts && !profiling()) {
      return this.#runDirect(args, consts);
    }
    const bind = (a: Array): Binding => {
      const buffer = backend.own(a.storage('jax.jit').buffer, 'jax.jit');
      if (buffer.goneError) throw buffer.goneError;
      return { buffer, offset: 0 };
    };
    const argBindings = args.map(bind);
    const constBindings = consts.map(bind);
    backend.ensureUsable();
    if (this.#generation !== backend.generation) this.#rebuild();
    backend.noteWork(this.label);
    const storages: Storage[] = plan.slotBuffers.map((id) => {
      const p = plan.placements[id]!;
      const b = program.buffers[id]!;
      if (p.place === 'donated') {
        const donor = args[p.argument]!.storage('jax.jit');
        // a buffer another array still shares cannot be overwritten: allocate instead
        if (donor.refs === 1) {
          const adopted = backend.adopt(donor.buffer as CudaBuffer);
          argBindings[p.argument] = { buffer: adopted, offset: 0 }; // the argument is read from its new owner
          return new Storage(backend, adopted);
        }
      }
      return new Storage(backend, backend.allocate(bufferBytes(b), b.memoryKind));
    });
    // no temporaries: the arena slot is bound to the literals (nothing refers to it), saving an allocation and a free
    const arena = {
      device: plan.arena.device > 0 && !this.#nativeArena ? backend.allocate(plan.arena.device, 'device') : null,
      pinned_host: plan.arena.pinned_host > 0 ? backend.allocate(plan.arena.pinned_host, 'pinned_host') : null,
    };
    const placeholder = this.#literals;
    if (this.#poison) {
      // every temporary and output starts as 0xff bytes (NaN floats), so a read of memory no step wrote shows
      for (const b of [arena.device ?? placeholder, ...storages.map((st) => st.buffer as CudaBuffer)]) if (b !== placeholder && b.memoryKind === 'device') backend.guarded(() => native().cudaMemset(b.handle, 0xff));
    }
    try {
      this.exec(argBindings, constBindings, storages.map((s) => ({ buffer: s.buffer as CudaBuffer, offset: 0 })), {
        device: { buffer: arena.device ?? placeholder, offset: 0 },
        pinned_host: { buffer: arena.pinned_host ?? arena.device ?? placeholder, offset: 0 },
      });
    } catch (error) {
      for (const s of storages) s.release();
      throw error;
    } finally {
      if (arena.device) backend.free(arena.device);
      if (arena.pinned_host) backend.free(arena.pinned_host);
    }
    return this.#outputArrays(storages, args, consts);
  }

  kernels(): { name: string; label: string; source: string }[] {
    const out: { name: string; label: string; source: string }[] = [];
    for (const e of this.#allExecutables()) {
      for (const [k, source] of e.#sources) out.push({ name: source.name, label: (e.program.steps[k] as { label: string }).label, source: source.source });
    }
    return out;
  }

  toString(): string {
    return describePlan(this.plan);
  }
}

const streamOf = (op: CudaProgramOp): string => (op.op === 'launch' ? 'compute' : op.stream);

/**
 * Happens-before over a native program's ops: program order on each stream, and a wait for an event after the
 * record it waits for (the program forks the copy streams from compute at entry, so entry is common ground).
 */
function segmentHazards(ops: readonly CudaProgramOp[], access: readonly (Access | null)[]): string[] {
  // for each op: per stream, the index of the latest op on that stream known to come before it (-1: none)
  const known: Map<string, number>[] = [];
  const last = new Map<string, number>();
  const recorded = new Map<number, Map<string, number>>();
  ops.forEach((op, i) => {
    const stream = streamOf(op);
    const before = new Map(last.has(stream) ? known[last.get(stream)!]! : []);
    if (last.has(stream)) before.set(stream, last.get(stream)!);
    if (op.op === 'wait') for (const [s, j] of recorded.get(op.event) ?? []) before.set(s, Math.max(before.get(s) ?? -1, j));
    if (op.op === 'record') recorded.set(op.event, new Map([...before, [stream, i]]));
    known.push(before);
    last.set(stream, i);
  });
  const ordered = (a: number, b: number) => (known[b]!.get(streamOf(ops[a]!)) ?? -1) >= a;
  const overlap = (x: [number, number, number], y: [number, number, number]) => x[0] === y[0] && x[1] < y[1] + y[2] && y[1] < x[1] + x[2];
  const out: string[] = [];
  for (let b = 0; b < ops.length; b++) {
    const B = access[b];
    if (!B) continue;
    for (let a = 0; a < b; a++) {
      const A = access[a];
      if (!A || streamOf(ops[a]!) === streamOf(ops[b]!) || ordered(a, b)) continue;
      const conflict = A.writes.some((w) => [...B.reads, ...B.writes].some((r) => overlap(w, r))) || B.writes.some((w) => A.reads.some((r) => overlap(w, r)));
      if (conflict) out.push(`ops[${a}] (${ops[a]!.op} on ${streamOf(ops[a]!)}) and ops[${b}] (${ops[b]!.op} on ${streamOf(ops[b]!)}) touch the same bytes unordered`);
    }
  }
  return out;
}
