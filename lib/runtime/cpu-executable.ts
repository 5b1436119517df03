// Running a planned program (compiler/plan.ts) on the CPU backend: every kernel is
// compiled up front and every launch's parameters packed once; a call
// allocates its outputs and one arena per memory kind (intermediates at the
// offsets buffer assignment fixed), then runs the steps: kernel launches,
// copies (device_put), and control flow over nested plans whose arenas are
// regions of this one. A scan's body reads xs[t] and writes ys[t] in place
// through views at offset t, and its carry alternates between the scan's
// output buffer and a second buffer so the last iteration lands in the
// output; while loops alternate the same way and copy once at the end when
// needed. Arguments donated to the call may hold outputs (plan.ts decides).
// Host callbacks (jax.debug.print, jax.pureCallback) are call steps too: the
// host reads their operands' bytes, calls back, and writes the results.
import { Array } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { packValues } from '../core/host.js';
import { Storage } from '../core/memory.js';
import type { MemoryKind, PrimitiveParams } from '../core/primitives.js';
import { describePlan } from '../compiler/describe-plan.js';
import type { Program, ProgramLaunch } from '../compiler/fuse.js';
import type { JaxprEqn } from '../trace/jaxpr.js';
import { type Kernel, kernelName } from '../compiler/kernel-ir.js';
import { type CallLayout, ProgramPlan, bufferBytes } from '../compiler/plan.js';
import { renderC } from '../compiler/render/c.js';
import { profiling, record } from '../profiler.js';
import type { ProgramExecutable } from './backend.js';
import { outputArrays } from './program.js';
import { CpuBuffer, NO_BYTES, cpuBackend, hostBuffer, recycleHostBuffer } from './cpu.js';
import { type CpuKernel, compileCpuKernel } from './kernel-cache.js';

export interface CompiledLaunch {
  name: string;
  kernel: Kernel;
  /** the primitives the kernel computes */
  label: string;
  buffers: number[];
  params: BigInt64Array;
  compiled: CpuKernel;
}

/** Kernels by their source, so a program compiles each distinct kernel once per process. */
const compiledKernels = new Map<string, CpuKernel>();

function compile(kernel: Kernel): { name: string; compiled: CpuKernel } {
  const name = kernelName(kernel).slice(0, 160);
  const source = renderC(kernel, name);
  let compiled = compiledKernels.get(source);
  if (!compiled) {
    compiled = compileCpuKernel(name, source);
    compiledKernels.set(source, compiled);
  }
  return { name, compiled };
}

/** Bytes somewhere in host memory: a window of an ArrayBuffer. */
interface Ref {
  bytes: ArrayBuffer;
  offset: number;
  nbytes: number;
}

const view = (r: Ref) => new Uint8Array(r.bytes, r.offset, r.nbytes);
/** What a kernel gets for a buffer: the ArrayBuffer itself when the ref is all of it (no view object per launch). */
const kernelArg = (r: Ref): ArrayBuffer | Uint8Array => (r.offset === 0 && r.nbytes === r.bytes.byteLength ? r.bytes : view(r));
/** An empty arena (no temporaries): shared, nothing is ever written to it. */
const sub = (r: Ref, offset: number, nbytes: number): Ref => ({ bytes: r.bytes, offset: r.offset + offset, nbytes });
const copyBytes = (src: Ref, dst: Ref) => {
  if (src.bytes !== dst.bytes || src.offset !== dst.offset) view(dst).set(view(src));
};

type Regions = Record<MemoryKind, Ref>;

type CompiledStep =
  | { kind: 'launch'; launch: CompiledLaunch }
  | { kind: 'copy'; src: number; dst: number }
  | { kind: 'call'; index: number; layout: CallLayout; run: CallRunner };

type CallRunner = (ref: (id: number) => Ref, inputs: number[], outputs: number[], scratch: Regions) => void;

/** A plan with its kernels compiled for the CPU. */
export class Executable implements ProgramExecutable {
  readonly plan: ProgramPlan;
  readonly program: Program;
  /** the top-level kernel launches, in order */
  readonly launches: CompiledLaunch[] = [];
  readonly #steps: CompiledStep[];
  readonly #literals = new Map<number, Ref>();

  constructor(plan: ProgramPlan) {
    this.plan = plan;
    this.program = plan.program;
    this.#steps = plan.program.steps.map((s, index): CompiledStep => {
      if (s.kind === 'launch') {
        const launch = compileLaunch(s);
        this.launches.push(launch);
        return { kind: 'launch', launch };
      }
      if (s.kind === 'copy') return { kind: 'copy', src: s.src, dst: s.dst };
      const layout = plan.calls.get(index)!;
      return { kind: 'call', index, layout, run: callRunner(s.eqn, layout) };
    });
    plan.program.buffers.forEach((b, i) => {
      if (b.kind === 'literal') {
        const bytes = packValues([b.value!], b.dtype);
        const copy = new ArrayBuffer(bytes.byteLength);
        new Uint8Array(copy).set(bytes);
        this.#literals.set(i, { bytes: copy, offset: 0, nbytes: copy.byteLength });
      }
    });
  }

  /** Kernel launch sites in this program and its nested ones (a loop body's kernels count once). */
  get kernelCount(): number {
    let n = 0;
    for (const p of this.plan.allPlans()) n += p.program.steps.filter((s) => s.kind === 'launch').length;
    return n;
  }

  /**
   * Runs the steps with arguments, constants and outputs bound to `args`,
   * `consts` and `outs` (by output slot), intermediates in `arena`.
   */
  exec(args: readonly Ref[], consts: readonly Ref[], outs: readonly Ref[], arena: Regions): void {
    const { placements } = this.plan;
    const ref = (id: number): Ref => {
      const p = placements[id]!;
      switch (p.place) {
        case 'argument': return args[p.index]!;
        case 'constant': return consts[p.index]!;
        case 'literal': return this.#literals.get(id)!;
        case 'output': case 'donated': return outs[p.output]!;
        case 'arena': return sub(arena[p.kind], p.offset, bufferBytes(this.program.buffers[id]!));
      }
    };
    const timed = profiling();
    for (const s of this.#steps) {
      const begin = timed ? performance.now() : 0;
      if (s.kind === 'launch') {
        s.launch.compiled.call(s.launch.buffers.map((id) => kernelArg(ref(id))), s.launch.params);
        if (timed) record(s.launch.name, 'compute', begin, { label: s.launch.label });
      } else if (s.kind === 'copy') {
        const src = ref(s.src);
        copyBytes(src, ref(s.dst));
        if (timed) {
          const [from, to] = [this.program.buffers[s.src]!.memoryKind, this.program.buffers[s.dst]!.memoryKind];
          record(`copy ${from} -> ${to}`, to === 'device' && from !== 'device' ? 'h2d' : from === 'device' && to !== 'device' ? 'd2h' : 'compute', begin, { bytes: src.nbytes });
        }
      } else {
        const step = this.program.steps[s.index] as Extract<Program['steps'][number], { kind: 'call' }>;
        const scratch = {
          device: sub(arena.device, s.layout.scratchOffset.device, s.layout.scratch.device),
          pinned_host: sub(arena.pinned_host, s.layout.scratchOffset.pinned_host, s.layout.scratch.pinned_host),
        };
        s.run(ref, step.inputs, step.outputs, scratch);
        if (timed) record(step.eqn.primitive, 'host', begin);
      }
    }
  }

  /**
   * Nested use (a loop body, a branch): runs with outputs written into the
   * caller's destinations, including outputs the program does not compute
   * itself (an argument, a constant, a literal, a value returned twice),
   * which are copied there.
   */
  execInto(args: readonly Ref[], consts: readonly Ref[], dests: readonly Ref[], arena: Regions): void {
    const { outputSlots, slotBuffers } = this.plan;
    const outs = slotBuffers.map((_, slot) => dests[outputSlots.indexOf(slot)]!);
    this.exec(args, consts, outs, arena);
    this.program.outputs.forEach((o, i) => {
      const slot = outputSlots[i]!;
      if (slot >= 0 && outputSlots.indexOf(slot) === i) return;
      const src = 'literal' in o ? literalRef(o.literal, o.aval.dtype) : slot >= 0 ? outs[slot]! : this.#sourceRef(o.buffer, args, consts);
      copyBytes(src, dests[i]!);
    });
  }

  #sourceRef(id: number, args: readonly Ref[], consts: readonly Ref[]): Ref {
    const p = this.plan.placements[id]!;
    if (p.place === 'argument') return args[p.index]!;
    if (p.place === 'constant') return consts[p.index]!;
    if (p.place === 'literal') return this.#literals.get(id)!;
    throw new Error(`jax.jit: internal error: output buffer ${id} has placement ${p.place}`);
  }

  /** Runs the program on concrete arguments (the flat jaxpr inputs) and constants; returns new output Arrays. */
  run(args: readonly Array[], consts: readonly Array[]): Array[] {
    const backend = cpuBackend;
    const { plan, program } = this;
    const argRefs = args.map((a) => hostRef(a));
    const constRefs = consts.map((c) => hostRef(c));
    const moved = new Map<Storage, CpuBuffer>(); // donated outputs, with the buffer they took their bytes from
    const storages: Storage[] = plan.slotBuffers.map((id) => {
      const p = plan.placements[id]!;
      if (p.place === 'donated') {
        const donor = args[p.argument]!.storage('jax.jit');
        // a buffer another array still shares cannot be overwritten: allocate instead
        if (donor.refs === 1) {
          // the bytes move to the output; the donor's buffer is emptied, so freeing it later recycles nothing
          const from = donor.buffer as CpuBuffer;
          const output = new Storage(backend, new CpuBuffer(from.bytes));
          from.bytes = NO_BYTES;
          moved.set(output, from);
          return output;
        }
      }
      const b = program.buffers[id]!;
      return new Storage(backend, new CpuBuffer(hostBuffer(bufferBytes(b), 'an output of jit', 'overwritten')));
    });
    const outs = storages.map((s) => ({ bytes: (s.buffer as CpuBuffer).bytes, offset: 0, nbytes: s.buffer.nbytes }));
    const arena = {
      device: { bytes: plan.arena.device ? hostBuffer(plan.arena.device, "a jitted program's temporaries", 'overwritten') : NO_BYTES, offset: 0, nbytes: plan.arena.device },
      pinned_host: { bytes: plan.arena.pinned_host ? hostBuffer(plan.arena.pinned_host, "a jitted program's pinned_host temporaries", 'overwritten') : NO_BYTES, offset: 0, nbytes: plan.arena.pinned_host },
    };
    try {
      this.exec(argRefs, constRefs, outs, arena);
    } catch (error) {
      // a host callback may throw (a pure callback's result check, a format error): the outputs were never handed
      // out, and donated bytes go back to their arrays
      for (const s of storages) {
        const from = moved.get(s);
        if (from) [from.bytes, (s.buffer as CpuBuffer).bytes] = [(s.buffer as CpuBuffer).bytes, NO_BYTES];
        s.release();
      }
      throw error;
    } finally {
      recycleHostBuffer(arena.device.bytes);
      recycleHostBuffer(arena.pinned_host.bytes);
    }
    return outputArrays(plan, storages, args, consts, (value, aval) => arrayFromValues([value], aval.shape, aval.dtype, aval.weakType));
  }

  /** The generated kernels of this program and its nested programs. */
  kernels(): { name: string; label: string; source: string }[] {
    const out: { name: string; label: string; source: string }[] = [];
    for (const p of this.plan.allPlans()) {
      for (const s of p.program.steps) {
        if (s.kind !== 'launch') continue;
        const { name, compiled } = compile(s.kernel);
        out.push({ name, label: s.label, source: compiled.source });
      }
    }
    return out;
  }

  /** One line per step: kernel name, the primitives it fuses, and its buffers. */
  toString(): string {
    return describePlan(this.plan);
  }
}

function compileLaunch(l: ProgramLaunch): CompiledLaunch {
  return { ...compile(l.kernel), kernel: l.kernel, label: l.label, buffers: l.buffers, params: BigInt64Array.from(l.params.map((p) => BigInt(p))) };
}

function hostRef(a: Array): Ref {
  const bytes = (a.storage('jax.jit').buffer as CpuBuffer).bytes;
  return { bytes, offset: 0, nbytes: bytes.byteLength };
}

function literalRef(value: number, dtype: import('../core/dtype.js').DType): Ref {
  const packed = packValues([value], dtype);
  const bytes = new ArrayBuffer(packed.byteLength);
  new Uint8Array(bytes).set(packed);
  return { bytes, offset: 0, nbytes: bytes.byteLength };
}

/** A host callback's result into its output buffer (the callback checked its type; a wrong size is a jaxon bug). */
function copyHostResult(bytes: Uint8Array | undefined, dst: Ref, primitive: string): void {
  if (!bytes || bytes.byteLength !== dst.nbytes) throw new Error(`jax.jit: internal error: ${primitive} gave ${bytes?.byteLength ?? 'no'} bytes for a ${dst.nbytes}-byte result`);
  view(dst).set(bytes);
}

const nestedExecutables = new WeakMap<ProgramPlan, Executable>();
const executableOf = (p: ProgramPlan): Executable => {
  let e = nestedExecutables.get(p);
  if (!e) nestedExecutables.set(p, (e = new Executable(p)));
  return e;
};

/** The constants of a nested plan, as host refs. */
const constRefsOf = (p: ProgramPlan): Ref[] => p.consts.map((c) => hostRef(c as Array));

function nestedArena(scratch: Regions, layout: CallLayout, plan: ProgramPlan): Regions {
  return {
    device: sub(scratch.device, layout.nestedOffset.device, plan.arena.device),
    pinned_host: sub(scratch.pinned_host, layout.nestedOffset.pinned_host, plan.arena.pinned_host),
  };
}

function callRunner(eqn: JaxprEqn, layout: CallLayout): CallRunner {
  const params = eqn.params as PrimitiveParams['scan'] & PrimitiveParams['while'] & PrimitiveParams['cond'];
  if (layout.plans.primitive === 'debug_callback' || layout.plans.primitive === 'pure_callback') {
    // the host calls back on its operands' bytes and writes the results where the program reads them
    const { callback } = eqn.params as PrimitiveParams['pure_callback'];
    const avals = eqn.inputs.map((a) => a.aval);
    const resultAvals = eqn.outVars.map((v) => v.aval);
    return (ref, inputs, outputs) => {
      const results = callback(inputs.map((id, i) => ({ bytes: view(ref(id)), aval: avals[i]! })), resultAvals);
      outputs.forEach((id, k) => copyHostResult(results[k], ref(id), eqn.primitive));
    };
  }
  const carrySlot = (scratch: Regions, kind: MemoryKind, k: number, nbytes: number) => sub(scratch[kind], layout.carryOffsets[k]!, nbytes);
  if (layout.plans.primitive === 'scan') {
    const bodyPlan = layout.plans.body;
    const body = executableOf(bodyPlan);
    const { length, numConsts, numCarry, reverse } = params;
    return (ref, inputs, outputs, scratch) => {
      const consts = inputs.slice(0, numConsts).map(ref);
      const init = inputs.slice(numConsts, numConsts + numCarry).map(ref);
      const xs = inputs.slice(numConsts + numCarry).map(ref);
      const carryOut = outputs.slice(0, numCarry).map(ref);
      const ys = outputs.slice(numCarry).map(ref);
      if (length === 0) {
        init.forEach((r, k) => copyBytes(r, carryOut[k]!));
        return;
      }
      const kinds = bodyPlan.program.outputs.slice(0, numCarry).map((o) => (o.aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device');
      const slots = [carryOut, carryOut.map((r, k) => carrySlot(scratch, kinds[k]!, k, r.nbytes))];
      const bodyConsts = constRefsOf(bodyPlan);
      const arena = nestedArena(scratch, layout, bodyPlan);
      const xBytes = xs.map((x) => x.nbytes / length);
      const yBytes = ys.map((y) => y.nbytes / length);
      for (let t = 0; t < length; t++) {
        const i = reverse ? length - 1 - t : t;
        const cur = t === 0 ? init : slots[(length - t) % 2]!;
        const next = slots[(length - 1 - t) % 2]!;
        body.execInto(
          [...consts, ...cur, ...xs.map((x, k) => sub(x, i * xBytes[k]!, xBytes[k]!))],
          bodyConsts,
          [...next, ...ys.map((y, k) => sub(y, i * yBytes[k]!, yBytes[k]!))],
          arena,
        );
      }
    };
  }
  if (layout.plans.primitive === 'while') {
    const { cond: condPlan, body: bodyPlan } = layout.plans;
    const cond = executableOf(condPlan);
    const body = executableOf(bodyPlan);
    const { condNconsts, bodyNconsts } = params;
    return (ref, inputs, outputs, scratch) => {
      const condConsts = inputs.slice(0, condNconsts).map(ref);
      const bodyConsts = inputs.slice(condNconsts, condNconsts + bodyNconsts).map(ref);
      const init = inputs.slice(condNconsts + bodyNconsts).map(ref);
      const out = outputs.map(ref);
      const kinds = bodyPlan.program.outputs.map((o) => (o.aval as { memorySpace?: MemoryKind }).memorySpace ?? 'device');
      const slots = [out, out.map((r, k) => carrySlot(scratch, kinds[k]!, k, r.nbytes))];
      const predicate = sub(scratch.device, layout.predicateOffset, 1);
      const condArena = nestedArena(scratch, layout, condPlan);
      const bodyArena = nestedArena(scratch, layout, bodyPlan);
      const condC = constRefsOf(condPlan);
      const bodyC = constRefsOf(bodyPlan);
      let cur = init;
      for (let k = 0; ; k++) {
        cond.execInto([...condConsts, ...cur], condC, [predicate], condArena);
        if (!view(predicate)[0]) break;
        const next = slots[k % 2]!;
        body.execInto([...bodyConsts, ...cur], bodyC, next, bodyArena);
        cur = next;
      }
      if (cur !== out) cur.forEach((r, k) => copyBytes(r, out[k]!));
    };
  }
  if (layout.plans.primitive !== 'cond') throw new Error(`jax.jit: internal error: no runner for ${layout.plans.primitive}`);
  const branchPlans = layout.plans.branches;
  const branches = branchPlans.map(executableOf);
  return (ref, inputs, outputs, scratch) => {
    const index = ref(inputs[0]!);
    const raw = new DataView(index.bytes, index.offset, 4).getInt32(0, true);
    const i = Math.min(Math.max(raw, 0), branches.length - 1);
    const p = branchPlans[i]!;
    branches[i]!.execInto(inputs.slice(1).map(ref), constRefsOf(p), outputs.map(ref), nestedArena(scratch, layout, p));
  };
}

