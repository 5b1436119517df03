// The CUDA backend: buffers in device memory (or pinned host memory) from the
// addon's caching allocators; kernels rendered by render/cuda.ts for their
// exact params, compiled by NVRTC off the JS thread (nvrtc-cache.ts), loaded
// once per device, and launched on the device's compute stream.
//
// Dispatch is asynchronous, as in JAX: execute() allocates its outputs and
// returns them at once. When every kernel it needs is loaded and nothing is
// queued it launches right away; otherwise it queues behind the compiles, in
// order, and later work (launches, frees, reads) queues behind it. A compile
// error reaches the arrays it should have produced: reading them throws it.
// toHostSync (dataSync) is the one synchronous path: it finishes queued work
// now, compiling on this thread whatever has not compiled yet.
//
// A lost device (a kernel faulted or hung; cuda-health.ts): every addon error
// is checked against the device's status, and a lost context becomes a
// DeviceLostError; buffers made before it raise one when used; the next use
// of the device resets it (a fresh context, kernels loaded again from the
// NVRTC cache, native programs rebuilt by their executables).
import type { BufferRef, Plan } from '../compiler/lower.js';
import type { ProgramPlan, ScanPrefetchMode } from '../compiler/plan.js';
import { kernelJson } from '../compiler/kernel-ir.js';
import { type CudaKernelSource, bufferCount, renderCuda } from '../compiler/render/cuda.js';
import type { Kernel } from '../compiler/kernel-ir.js';
import type { GemmTarget } from '../compiler/render/cuda-dot.js';
import { forcedConvPath, forcedGemmPath, tmaAllowed } from '../compiler/render/cuda-decisions.js';
import { type GemmTuningStore, type TuningDevice, gemmTargetFor, gemmTuningStore } from './gemm-autotune.js';
import { itemsize } from '../core/dtype.js';
import { DeviceLostError, ResourceExhaustedError, show, ValueError } from '../core/errors.js';
import type { ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { Backend, DeviceBuffer } from './backend.js';
import type {
  CudaBufferHandle, CudaDeviceInfo, CudaFunctionHandle, CudaMemoryKind, CudaMemoryStats, CudaProgramHandle, CudaProgramSpec,
} from './cuda-addon.js';
import { CudaExecutable, scanPrefetchMode } from './cuda-executable.js';
import { DeviceHealth } from './cuda-health.js';
import { Device } from './device.js';
import { native } from './native.js';
import {
  type CudaImage, type CudaTarget, compileCudaKernel, compileCudaKernelSync, compileCudaKernelsSync, cudaTarget, emulatorIdentity,
} from './nvrtc-cache.js';

/** Whether jaxon can run on a GPU here, and why (not), in one line. */
export function cudaAvailability(): { available: boolean; reason: string } {
  try {
    const probe = native().cudaProbe();
    return { available: probe.available, reason: probe.reason };
  } catch (error) {
    return { available: false, reason: `the native addon failed to load: ${(error as Error).message}` };
  }
}

export class CudaBuffer implements DeviceBuffer {
  #handle: CudaBufferHandle | undefined;
  readonly #generation: number;
  /** Set when the work that should have written this buffer failed; reading it throws this. */
  error: unknown;
  constructor(
    handle: CudaBufferHandle,
    readonly nbytes: number,
    readonly memoryKind: CudaMemoryKind,
    readonly health: DeviceHealth,
  ) {
    this.#handle = handle;
    this.#generation = health.generation;
  }
  get handle(): CudaBufferHandle {
    if (!this.#handle) throw new Error(`CudaBuffer: the buffer (${this.nbytes} bytes, ${this.memoryKind}) was freed`);
    const gone = this.goneError;
    if (gone) throw gone;
    return this.#handle;
  }
  get isFreed(): boolean {
    return this.#handle === undefined;
  }
  /** The error of using this buffer, when its device's state was lost since it was made. */
  get goneError(): DeviceLostError | undefined {
    if (this.health.live(this.#generation)) return undefined; // (the message is built only when needed: every handle read asks)
    return this.health.goneSince(this.#generation, `this array's buffer (${this.nbytes} bytes, ${this.memoryKind})`);
  }
  /** Drops the handle; the caller frees the memory. */
  release(): CudaBufferHandle | undefined {
    const handle = this.#handle;
    this.#handle = undefined;
    return handle;
  }
}

interface LoadedKernel {
  readonly source: CudaKernelSource;
  readonly image: CudaImage;
  readonly fn: CudaFunctionHandle;
}

interface PreparedLaunch {
  readonly source: CudaKernelSource;
  /** what a failure names */
  readonly label: string;
  readonly buffers: CudaBuffer[];
}

interface Job {
  kind: 'job';
  launches: PreparedLaunch[];
  inputs: CudaBuffer[];
  outputs: CudaBuffer[];
  temps: CudaBuffer[];
  done: boolean;
}

/** A free or a copy queued behind jobs that wait for their kernels. */
interface Action {
  kind: 'action';
  run: () => void;
  done: boolean;
}

/** Rendered kernels by IR and params, so repeated eager ops render once. */
const renderedKernels = new Map<string, CudaKernelSource>();
/**
 * Each eager plan's launches rendered, and what a failure names, once per plan (plans are cached: runtime/eager.ts)
 * and per forced kernel path: a dot's or conv's plan is rendered again when JAXON_GEMM, JAXON_CONV or
 * JAXON_WGMMA_TMA changed since (the eager plan's key does not hold them).
 */
const renderedPlans = new WeakMap<Plan, { forced: string; launches: { source: CudaKernelSource; label: string }[] }>();

/** The environment a plan's rendering reads: '' unless it launches a dot or a conv (other ops read none, per op). */
function forcedPaths(plan: Plan): string {
  for (const l of plan.launches) {
    if (l.kernel.kind === 'dot' || l.kernel.kind === 'conv') return `${forcedGemmPath() ?? ''}|${forcedConvPath() ?? ''}|${tmaAllowed()}`;
  }
  return '';
}

function renderPlan(plan: Plan, backend: CudaBackend): { source: CudaKernelSource; label: string }[] {
  const forced = forcedPaths(plan);
  let rendered = renderedPlans.get(plan);
  if (!rendered || rendered.forced !== forced) {
    const launches = plan.launches.map((l) => {
      const source = render(l.kernel, l.params, backend);
      return { source, label: `kernel '${source.name}'` };
    });
    renderedPlans.set(plan, (rendered = { forced, launches }));
  }
  return rendered.launches;
}

function render(kernel: Plan['launches'][number]['kernel'], params: readonly number[], backend: CudaBackend): CudaKernelSource {
  const key = `${kernelJson(kernel)}|${params.join(',')}|${kernel.kind === 'dot' ? `${backend.target.arch}|${forcedGemmPath() ?? ''}|${tmaAllowed()}` : kernel.kind === 'conv' ? `${backend.target.arch}|${forcedConvPath() ?? ''}` : ''}`;
  let rendered = renderedKernels.get(key);
  if (!rendered) {
    // eager buffers come from the allocator: 16-byte aligned at least
    const alignments = new globalThis.Array<number>(bufferCount(kernel)).fill(16);
    rendered = renderCuda(kernel, params, { alignments, gemm: backend.gemmTarget(kernel, params, alignments) });
    renderedKernels.set(key, rendered);
  }
  return rendered;
}

export class CudaBackend implements Backend {
  readonly platform = 'cuda' as const;
  /** Arena offsets are 256-byte aligned, like cudaMalloc's pointers (vector loads, TMA). */
  readonly planAlignment = 256;
  /** Read when a program is planned, as XLA_FLAGS are (cuda-executable.ts, scanPrefetchMode). */
  get prefetchesScanInputs(): ScanPrefetchMode {
    return scanPrefetchMode();
  }
  readonly target: CudaTarget;
  /** Whether the device's state is there, and which context (generation) buffers and programs belong to. */
  readonly health: DeviceHealth;
  /** Small native programs by what they do (copyRegion, prefetchRegion, awaitPrefetches): 'copy 4096', ... */
  #smallPrograms = new Map<string, CudaProgramHandle>();
  #staging: CudaBuffer | undefined;
  #functions = new Map<string, LoadedKernel>();
  #loading = new Map<string, Promise<LoadedKernel>>();
  /** queued work, in order (a Set: entries leave from anywhere in O(1)) */
  #pending = new Set<Job | Action>();
  #tail: Promise<void> = Promise.resolve();

  constructor(readonly info: CudaDeviceInfo) {
    const probe = native().cudaProbe();
    const target = cudaTarget(info.computeCapability, probe.nvrtcVersion, probe.nvrtcArchs);
    this.target = probe.emulated ? { ...target, emulator: emulatorIdentity(probe.emulator) } : target;
    this.health = new DeviceHealth(`CUDADevice(id=${info.ordinal})`, probe.emulated === true);
  }

  #gemmStore: GemmTuningStore | undefined;
  /** whether the driver encodes TMA descriptors (the Hopper GEMM's TMA producer) */
  #tensorMaps: boolean | undefined;

  /**
   * What the renderer needs to know of this device for a dot (gemm-autotune.ts): its compute capability and the
   * tiling tuned for the dot's shape class, tuning it now when it is the class's first dot on a real GPU.
   */
  gemmTarget(kernel: Kernel, params: readonly number[], alignments: readonly number[]): GemmTarget | undefined {
    const [major, minor] = this.info.computeCapability;
    // a conv needs only the compute capability (its tensor-core path: sm_80 and later)
    if (kernel.kind === 'conv') return { sm: major * 10 + minor };
    if (kernel.kind !== 'dot') return undefined;
    this.#gemmStore ??= gemmTuningStore(this.info.name, this.target.nvrtcVersion, this.target.arch);
    this.#tensorMaps ??= native().cudaProbe().tensorMaps;
    return gemmTargetFor(kernel, params, alignments, { sm: major * 10 + minor, emulated: this.target.emulator !== undefined, store: this.#gemmStore, runner: () => this.#tuningDevice(), tma: this.#tensorMaps });
  }

  #tuningDevice(): TuningDevice {
    const handles = (buffers: readonly { handle: unknown }[]) => buffers.map((b) => (b as CudaBuffer).handle as CudaBufferHandle);
    return {
      loadKernelsSync: (sources) => this.loadKernelsSync(sources),
      fromHost: (bytes) => this.fromHost(bytes),
      toHostSync: (buffer) => this.toHostSync(buffer as CudaBuffer),
      free: (buffer) => this.free(buffer as CudaBuffer),
      launch: (fn, source, buffers) => {
        this.guarded(() => native().cudaLaunch(fn as CudaFunctionHandle, source.grid, source.block, source.sharedMemBytes, handles(buffers), source.tensorMaps));
      },
      time: (fn, source, buffers) => {
        const reps = 5;
        const program = this.guarded(() => native().cudaProgramCreate(this.info.handle, {
          slotBytes: buffers.map((b) => (b as CudaBuffer).nbytes), arenaBytes: 0, events: 0, graph: false,
          ops: globalThis.Array.from({ length: reps }, () => ({
            op: 'launch' as const, function: fn as CudaFunctionHandle, grid: source.grid, block: source.block, sharedMemBytes: source.sharedMemBytes,
            args: buffers.map((_, i) => [i, 0] as const), ...(source.tensorMaps ? { tensorMaps: source.tensorMaps } : {}),
          })),
        }));
        this.guarded(() => native().cudaProgramRunTimed(program, handles(buffers))); // warm-up: loads, clocks
        const times = this.guarded(() => native().cudaProgramRunTimed(program, handles(buffers)));
        const each = globalThis.Array.from({ length: reps }, (_, i) => times[2 * i + 1]! - times[2 * i]!).sort((a, b) => a - b);
        return each[Math.floor(reps / 2)]!;
      },
    };
  }

  /** The device's context generation: raised by each reset after a loss (executables rebuild their programs). */
  get generation(): number {
    return this.health.generation;
  }

  /**
   * Runs an addon call: out of memory becomes ResourceExhaustedError, a lost context DeviceLostError (the device
   * is marked lost, and a reset is tried on its next use).
   */
  guarded<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw this.#translate(error);
    }
  }

  /** Before new work on the device: a lost device is reset first (what was on it stays invalid). */
  ensureUsable(): void {
    if (this.health.lost === undefined) return;
    this.health.checkRecoverable();
    for (const entry of this.#pending) {
      if (entry.done) continue;
      entry.done = true;
      if (entry.kind === 'job') {
        const error = this.health.failed(this.health.lost);
        for (const b of entry.outputs) if (!entry.inputs.includes(b)) b.error = error;
      }
    }
    this.#pending = new Set();
    this.#tail = Promise.resolve();
    try {
      native().cudaDeviceReset(this.info.handle);
    } catch (error) {
      throw this.health.resetFailed(error as Error);
    }
    this.health.resetDone();
    this.#functions.clear();
    this.#smallPrograms.clear();
    this.#staging = undefined;
  }

  /** Compiles a program planned with planAlignment (cuda-executable.ts); `label` names it in failures. */
  compileProgram(plan: ProgramPlan, label?: string): CudaExecutable {
    this.ensureUsable();
    return new CudaExecutable(this, plan, null, true, label);
  }

  /** A new buffer of a memory kind (its contents undefined). */
  allocate(nbytes: number, memoryKind: CudaMemoryKind = 'device'): CudaBuffer {
    this.ensureUsable();
    return this.#alloc(nbytes, memoryKind);
  }

  /** A new CudaBuffer owning another's memory (a donation); the old one no longer frees it. */
  adopt(buffer: CudaBuffer): CudaBuffer {
    const gone = buffer.goneError;
    if (gone) throw gone;
    const handle = buffer.release();
    if (!handle) throw new Error(`CudaBackend.adopt: the buffer (${buffer.nbytes} bytes) was freed`);
    return new CudaBuffer(handle, buffer.nbytes, buffer.memoryKind, this.health);
  }

  /** The buffer as a CudaBuffer, or a TypeError naming `fn`. */
  own(buffer: DeviceBuffer, fn: string): CudaBuffer {
    return this.#own(buffer, fn);
  }

  /** Runs queued work (kernels still compiling) now, so what comes next is ordered after it. */
  flush(): void {
    this.#drainSync();
  }

  /** Loads kernels, compiling those not cached in one parallel NVRTC batch; returns the functions by source. */
  loadKernelsSync(sources: readonly CudaKernelSource[]): Map<string, CudaFunctionHandle> {
    this.ensureUsable();
    const missing = [...new Map(sources.filter((s) => !this.#functions.has(s.source)).map((s) => [s.source, s])).values()];
    if (missing.length) {
      const images = compileCudaKernelsSync(missing.map((s) => ({ name: s.name, source: s.source })), this.target);
      missing.forEach((s, i) => this.#install(s, images[i]!));
    }
    return new Map(sources.map((s) => [s.source, this.#functions.get(s.source)!.fn]));
  }

  /** Runs a small native program, made once per key (one copy, or a pair of event ops), on these slots. */
  #runSmall(key: string, spec: () => CudaProgramSpec, slots: CudaBufferHandle[], offsets: number[]): void {
    let program = this.#smallPrograms.get(key);
    if (!program) {
      program = this.guarded(() => native().cudaProgramCreate(this.info.handle, spec()));
      this.#smallPrograms.set(key, program);
    }
    const run = program;
    this.guarded(() => native().cudaProgramRun(run, slots, offsets));
  }

  /** Copies `bytes` bytes between two (buffer, offset) regions on the compute stream. */
  copyRegion(dst: { buffer: CudaBuffer; offset: number }, src: { buffer: CudaBuffer; offset: number }, bytes: number): void {
    if (bytes === 0) return;
    this.#runSmall(`copy ${bytes}`, () => ({
      slotBytes: [bytes, bytes], arenaBytes: 0, events: 0, graph: false,
      ops: [{ op: 'copy', stream: 'compute', dst: [0, 0], src: [1, 0], bytes }],
    }), [dst.buffer.handle, src.buffer.handle], [dst.offset, src.offset]);
  }

  /**
   * Queues a copy of `bytes` bytes on the h2d stream after the work queued so far on the compute stream, and leaves
   * it in flight: the compute stream does not wait for it (a scan's next input slice, copied while the current
   * iteration computes), until awaitPrefetches(). `first`: the copy also waits for its buffers' last writers on
   * other streams (a devicePut still copying the source); later copies from the same source queue behind it.
   */
  prefetchRegion(dst: { buffer: CudaBuffer; offset: number }, src: { buffer: CudaBuffer; offset: number }, bytes: number, first: boolean): void {
    if (bytes === 0) return;
    // join off: nothing waits for the copy. Fork off after the first: the record/wait pair orders the copy after
    // compute's work so far, without the per-buffer waits (the destination lies in the caller's arena, whose last
    // writer is the iteration computing in another region of it)
    this.#runSmall(`prefetch ${bytes}${first ? ' first' : ''}`, () => ({
      slotBytes: [bytes, bytes], arenaBytes: 0, events: 1, graph: false, fork: first, join: false,
      ops: [
        { op: 'record', stream: 'compute', event: 0 },
        { op: 'wait', stream: 'h2d', event: 0 },
        { op: 'copy', stream: 'h2d', dst: [0, 0], src: [1, 0], bytes },
      ],
    }), [dst.buffer.handle, src.buffer.handle], [dst.offset, src.offset]);
  }

  /** Work queued on the compute stream from now on waits for every prefetchRegion() copy queued so far. */
  awaitPrefetches(): void {
    this.#runSmall('await prefetches', () => ({
      slotBytes: [], arenaBytes: 0, events: 1, graph: false, fork: false, join: false,
      ops: [{ op: 'record', stream: 'h2d', event: 0 }, { op: 'wait', stream: 'compute', event: 0 }],
    }), [], []);
  }

  /** Reads `bytes` (at most 16) at a region back to the host, waiting for the work that writes them. */
  #readBack(src: { buffer: CudaBuffer; offset: number }, bytes: number): Uint8Array {
    this.#staging ??= this.#alloc(16, 'device');
    this.copyRegion({ buffer: this.#staging, offset: 0 }, src, bytes);
    return new Uint8Array(this.#waited(() => native().cudaToHostSync(this.#staging!.handle)), 0, bytes);
  }

  /** `bytes` bytes at a region (any memory kind), on the host, once the work queued before that writes them is done (a host callback's operand). */
  readRegionSync(src: { buffer: CudaBuffer; offset: number }, bytes: number): Uint8Array {
    if (bytes === 0) return new Uint8Array(0);
    const copy = this.#alloc(bytes, 'device');
    try {
      this.copyRegion({ buffer: copy, offset: 0 }, src, bytes);
      return new Uint8Array(this.#waited(() => native().cudaToHostSync(copy.handle)));
    } finally {
      this.#freeNow(copy);
    }
  }

  /** Writes host bytes into a region, ordered on the compute stream after the work queued before (a host callback's result). */
  writeRegion(dst: { buffer: CudaBuffer; offset: number }, bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    const staged = this.fromHost(bytes);
    this.copyRegion(dst, { buffer: staged, offset: 0 }, bytes.byteLength);
    this.#freeNow(staged);
  }

  /** A byte of device memory (a while loop's predicate), on the host. */
  readByte(src: { buffer: CudaBuffer; offset: number }): number {
    return this.#readBack(src, 1)[0]!;
  }

  /** An int32 of device memory (cond's branch index), on the host. */
  readInt32(src: { buffer: CudaBuffer; offset: number }): number {
    const b = this.#readBack(src, 4);
    return new DataView(b.buffer, b.byteOffset, 4).getInt32(0, true);
  }

  /** Waits, blocking this thread, until the buffer's contents are computed. */
  blockUntilReadySync(buffer: DeviceBuffer): void {
    const b = this.#live(buffer, 'blockUntilReady');
    this.#drainSync();
    if (b.error !== undefined) throw b.error;
    this.#waited(() => native().cudaSynchronizeSync(this.info.handle));
  }

  fromHost(bytes: Uint8Array, memoryKind: CudaMemoryKind = 'device'): CudaBuffer {
    this.ensureUsable();
    const handle = this.guarded(() => native().cudaFromHost(this.info.handle, bytes, memoryKind));
    return new CudaBuffer(handle, bytes.byteLength, memoryKind, this.health);
  }

  async toHost(buffer: DeviceBuffer): Promise<Uint8Array> {
    const b = this.#live(buffer, 'toHost');
    if (this.#pending.size) await this.#tail;
    if (b.error !== undefined) throw b.error;
    try {
      const bytes = new Uint8Array(await native().cudaToHost(b.handle));
      this.health.noteWaitDone();
      return bytes;
    } catch (error) {
      throw this.#translate(error);
    }
  }

  toHostSync(buffer: DeviceBuffer): Uint8Array {
    const b = this.#live(buffer, 'toHostSync');
    this.#drainSync();
    if (b.error !== undefined) throw b.error;
    return new Uint8Array(this.#waited(() => native().cudaToHostSync(b.handle)));
  }

  /** Settles once the buffer's contents are computed (JAX's block_until_ready). */
  async blockUntilReady(buffer: DeviceBuffer): Promise<void> {
    const b = this.#live(buffer, 'blockUntilReady');
    if (this.#pending.size) await this.#tail;
    if (b.error !== undefined) throw b.error;
    try {
      await native().cudaBlockUntilReady(b.handle);
      this.health.noteWaitDone();
    } catch (error) {
      throw this.#translate(error);
    }
  }

  /** A copy of the buffer in another memory kind (or the same), queued on a copy stream. */
  devicePut(buffer: DeviceBuffer, memoryKind: CudaMemoryKind): CudaBuffer {
    const src = this.#live(buffer, 'devicePut');
    this.ensureUsable();
    const dst = this.#alloc(src.nbytes, memoryKind);
    this.#whenQueueAllows(() => {
      if (src.error !== undefined) dst.error = src.error;
      else native().cudaCopy(dst.handle, src.handle);
    });
    return dst;
  }

  execute(plan: Plan, inputs: DeviceBuffer[], outputs: ShapedArray[]): DeviceBuffer[] {
    const ins = inputs.map((b) => this.#live(b, 'execute'));
    this.ensureUsable();
    const created: CudaBuffer[] = [];
    try {
      const outs = outputs.map((o, i) => {
        const aliased = plan.aliases.get(i);
        if (aliased !== undefined) return ins[aliased]!;
        const b = this.#alloc(sizeOf(o.shape) * itemsize(o.dtype), o.memorySpace ?? 'device');
        created.push(b);
        return b;
      });
      const temps = plan.temps.map((t) => {
        const b = this.#alloc(t.size * itemsize(t.dtype), 'device');
        created.push(b);
        return b;
      });
      const resolve = (ref: BufferRef): CudaBuffer => {
        switch (ref.kind) {
          case 'input': return ins[ref.index]!;
          case 'output': return outs[ref.index]!;
          case 'temp': return temps[ref.index]!;
        }
      };
      const rendered = renderPlan(plan, this);
      const launches = plan.launches.map((l, k) => ({ source: rendered[k]!.source, label: rendered[k]!.label, buffers: l.buffers.map(resolve) }));
      const job: Job = { kind: 'job', launches, inputs: ins, outputs: outs, temps, done: false };
      // the usual case, every kernel loaded: no sets or filters (host time per eager op)
      let loaded = true;
      for (const l of launches) if (!this.#functions.has(l.source.source)) loaded = false;
      if (loaded) this.#runReady();
      if (this.#pending.size === 0 && loaded) {
        this.#run(job);
      } else {
        const missing = new Map<string, CudaKernelSource>();
        for (const l of launches) if (!this.#functions.has(l.source.source)) missing.set(l.source.source, l.source);
        this.#enqueue(job, [...missing.values()]);
      }
      return outs;
    } catch (error) {
      for (const b of created) this.#freeNow(b);
      throw this.#translate(error);
    }
  }

  free(buffer: DeviceBuffer): void {
    const b = this.#own(buffer, 'free');
    this.#whenQueueAllows(() => this.#freeNow(b));
  }

  /** The caching allocator's counters, and the pinned-host pool's under pinnedHost. */
  memoryStats(): CudaMemoryStats {
    this.ensureUsable();
    return this.guarded(() => native().cudaMemoryStats(this.info.handle));
  }

  /** Starts the peaks of memoryStats() (device and pinned host) again from what is in use now, to measure one call. */
  resetPeakMemoryStats(): void {
    this.ensureUsable();
    this.guarded(() => native().cudaResetPeakMemoryStats(this.info.handle));
  }

  /** Returns cached memory to the driver; the bytes released. */
  emptyCache(): number {
    this.ensureUsable();
    return this.guarded(() => native().cudaEmptyCache(this.info.handle));
  }

  /** Settles once all queued work (compiles included) has run on the device. */
  async synchronize(): Promise<void> {
    if (this.#pending.size) await this.#tail;
    try {
      await native().cudaSynchronize(this.info.handle);
      this.health.noteWaitDone();
    } catch (error) {
      throw this.#translate(error);
    }
  }

  /** Kernels loaded on this device (for stats and tests). */
  get loadedKernelCount(): number {
    return this.#functions.size;
  }

  /** Notes work queued on the device (a jitted call, an eager op's kernels), named in the message of a failure. */
  noteWork(label: string): void {
    this.health.noteWork(label);
  }

  // An addon error: a lost context (the addon's status says so, or DEVICE_LOST) becomes DeviceLostError.
  #translate(error: unknown): unknown {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'RESOURCE_EXHAUSTED') return new ResourceExhaustedError((error as Error).message, { cause: error });
    if (error instanceof DeviceLostError || typeof code !== 'string') return error;
    const status = native().cudaDeviceStatus(this.info.handle);
    if (!status.lost && code !== 'DEVICE_LOST') return error;
    return this.health.failed(status.lost ? status.reason : (error as Error).message, error);
  }

  // A synchronous wait on the device: once it returns, the work queued before it is done.
  #waited<T>(run: () => T): T {
    const result = this.guarded(run);
    this.health.noteWaitDone();
    return result;
  }

  #own(buffer: DeviceBuffer, fn: string): CudaBuffer {
    if (!(buffer instanceof CudaBuffer)) {
      throw new TypeError(`CudaBackend.${fn}: expected a CUDA buffer, got ${show(buffer)}`);
    }
    return buffer;
  }

  /** The buffer, unless its device's state was lost since it was made (DeviceLostError). */
  #live(buffer: DeviceBuffer, fn: string): CudaBuffer {
    const b = this.#own(buffer, fn);
    const gone = b.goneError;
    if (gone) throw gone;
    return b;
  }

  #alloc(nbytes: number, memoryKind: CudaMemoryKind): CudaBuffer {
    const handle = this.guarded(() => native().cudaAlloc(this.info.handle, nbytes, memoryKind));
    return new CudaBuffer(handle, nbytes, memoryKind, this.health);
  }

  #freeNow(buffer: CudaBuffer): void {
    const handle = buffer.release();
    if (handle) native().cudaFree(handle); // a buffer of a lost context is only marked freed
  }

  // Runs `action` now when nothing is queued, else after the queued work (in order, also when drained synchronously).
  #whenQueueAllows(action: () => void): void {
    this.#runReady();
    if (this.#pending.size === 0) {
      this.guarded(action);
      return;
    }
    const entry: Action = { kind: 'action', run: action, done: false };
    this.#pending.add(entry);
    this.#tail = this.#tail.then(() => this.#runAction(entry));
  }

  // Runs queued work from the front while it needs no compile still in flight (its kernels are loaded), so a
  // loop that never yields to the event loop does not pile every later op behind one finished compile.
  #runReady(): void {
    for (const entry of this.#pending) {
      if (entry.kind === 'job' && !entry.done && entry.launches.some((l) => !this.#functions.has(l.source.source))) return;
      this.#pending.delete(entry);
      if (entry.kind === 'action') this.#runAction(entry);
      else if (!entry.done) this.#runJob(entry);
    }
  }

  #runJob(job: Job): void {
    try {
      this.#run(job);
    } catch (error) {
      job.done = true;
      for (const b of job.outputs) if (!job.inputs.includes(b)) b.error = this.#translate(error);
      for (const t of job.temps) this.#freeNow(t);
    }
  }

  #runAction(entry: Action): void {
    this.#forget(entry);
    if (entry.done) return;
    entry.done = true;
    try {
      entry.run();
    } catch {
      // Frees and copies after a failed job: the buffers carry the error.
    }
  }

  #forget(entry: Job | Action): void {
    this.#pending.delete(entry);
  }

  #run(job: Job): void {
    job.done = true;
    const failed = job.inputs.find((b) => b.error !== undefined);
    if (failed) {
      for (const b of job.outputs) if (!job.inputs.includes(b)) b.error = failed.error;
    } else {
      for (const { source, label, buffers } of job.launches) {
        const grid = source.grid;
        if (grid[0] === 0 || grid[1] === 0 || grid[2] === 0) continue; // empty arrays: nothing to do
        const loaded = this.#functions.get(source.source)!;
        this.health.noteWork(label);
        const handles = new globalThis.Array<CudaBufferHandle>(buffers.length);
        for (let i = 0; i < buffers.length; i++) handles[i] = buffers[i]!.handle;
        native().cudaLaunch(loaded.fn, grid, source.block, source.sharedMemBytes, handles, source.tensorMaps);
      }
    }
    for (const t of job.temps) this.#freeNow(t); // stream-ordered: the launches above still see them
  }

  #enqueue(job: Job, missing: CudaKernelSource[]): void {
    this.#pending.add(job);
    const loads = Promise.all(missing.map((s) => this.#load(s)));
    loads.catch(() => {}); // handled below, once the queue reaches this job
    const settle = (error?: unknown) => {
      this.#forget(job);
      if (job.done) return; // toHostSync ran it already
      if (error === undefined) {
        try {
          this.#run(job);
          return;
        } catch (runError) {
          error = this.#translate(runError);
        }
      }
      job.done = true;
      for (const b of job.outputs) if (!job.inputs.includes(b)) b.error = error;
      for (const t of job.temps) this.#freeNow(t);
    };
    this.#tail = this.#tail.then(() => loads).then(() => settle(), (error: unknown) => settle(error));
  }

  // Loads a kernel: compile (or cache hit) off the JS thread, then module load and lookup.
  #load(source: CudaKernelSource): Promise<LoadedKernel> {
    const known = this.#functions.get(source.source);
    if (known) return Promise.resolve(known);
    let loading = this.#loading.get(source.source);
    if (!loading) {
      loading = compileCudaKernel(source.name, source.source, this.target).then((image) => this.#install(source, image));
      this.#loading.set(source.source, loading);
      const done = () => this.#loading.delete(source.source);
      loading.then(done, done);
    }
    return loading;
  }

  #install(source: CudaKernelSource, image: CudaImage): LoadedKernel {
    const known = this.#functions.get(source.source); // toHostSync may have loaded it meanwhile
    if (known) return known;
    const addon = native();
    const module = addon.cudaModuleLoad(this.info.handle, image.image, `${image.kind} of kernel '${source.name}'`);
    const { handle } = addon.cudaGetFunction(this.info.handle, module, source.name);
    const loaded: LoadedKernel = { source, image, fn: handle };
    this.#functions.set(source.source, loaded);
    return loaded;
  }

  // Runs queued work now, in order, compiling the kernels it still lacks in one parallel batch while this thread waits.
  #drainSync(): void {
    if (this.#pending.size === 0) return;
    const entries = [...this.#pending];
    this.#pending = new Set();
    const missing = entries.flatMap((e) => (e.kind === 'job' && !e.done ? e.launches.map((l) => l.source) : []))
      .filter((s) => !this.#functions.has(s.source));
    let batchError: unknown;
    if (missing.length) {
      try {
        this.loadKernelsSync(missing);
      } catch (error) {
        batchError = error; // each job below compiles what it needs on its own and takes its own error
      }
    }
    for (const entry of entries) {
      if (entry.done) continue;
      if (entry.kind === 'action') {
        this.#runAction(entry);
        continue;
      }
      try {
        for (const { source } of entry.launches) {
          if (!this.#functions.has(source.source)) this.#install(source, compileCudaKernelSync(source.name, source.source, this.target));
        }
        this.#run(entry);
      } catch (error) {
        entry.done = true;
        for (const b of entry.outputs) if (!entry.inputs.includes(b)) b.error = this.#translate(error ?? batchError);
        for (const t of entry.temps) this.#freeNow(t);
      }
    }
  }
}

/** JAX's Device for a GPU: its memory stats come from the caching allocator. */
export interface CudaDevice extends Device {
  readonly platform: 'cuda';
  readonly backend: CudaBackend;
  readonly info: CudaDeviceInfo;
  memoryStats(): CudaMemoryStats;
}

let cudaDeviceClass: (new (info: CudaDeviceInfo, backend: CudaBackend) => CudaDevice) | undefined;

// Defined on first use: device.ts may import this module, and a class
// extending Device at load time would meet Device before it is initialized.
function deviceClass(): new (info: CudaDeviceInfo, backend: CudaBackend) => CudaDevice {
  cudaDeviceClass ??= class extends Device {
    declare readonly platform: 'cuda';
    declare readonly backend: CudaBackend;
    constructor(
      readonly info: CudaDeviceInfo,
      backend: CudaBackend,
    ) {
      super(info.ordinal, 'cuda', info.name, backend);
    }
    override memoryStats(): CudaMemoryStats {
      return this.backend.memoryStats();
    }
  } as unknown as new (info: CudaDeviceInfo, backend: CudaBackend) => CudaDevice;
  return cudaDeviceClass;
}

const cudaDevices = new Map<number, CudaDevice>();

/**
 * The CUDA device of an ordinal, initialized on first use (primary context,
 * streams, allocators). Throws, saying why, when CUDA is not available.
 */
export function createCudaDevice(ordinal = 0): CudaDevice {
  if (!Number.isInteger(ordinal) || ordinal < 0) {
    throw new ValueError(`createCudaDevice: ordinal must be a non-negative integer, got ${show(ordinal)}`);
  }
  const known = cudaDevices.get(ordinal);
  if (known) return known;
  const availability = cudaAvailability();
  if (!availability.available) throw new Error(`createCudaDevice: CUDA is not available: ${availability.reason}`);
  const info = native().cudaInit(ordinal);
  const device = new (deviceClass())(info, new CudaBackend(info));
  cudaDevices.set(ordinal, device);
  return device;
}
