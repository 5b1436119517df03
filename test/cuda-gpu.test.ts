// Tests of the CUDA runtime on a real GPU: device memory, copies on the
// three streams, NVRTC CUBIN for the exact arch, launches of rendered kernels
// against the CPU backend, asynchronous reads that leave the event loop free,
// event-guarded reuse, out-of-memory recovery, and programs (launch lists,
// CUDA graphs). Without a usable GPU every test is skipped, and one skipped
// entry says why (cudaAvailability's reason).
import test from 'ava';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import type { DType } from '../lib/core/dtype.js';
import { abstractEval, aval, type Primitive, type PrimitiveParams, type ShapedArray } from '../lib/core/primitives.js';
import { cpuBackend } from '../lib/runtime/cpu.js';
import type { CudaBufferHandle, CudaFunctionHandle } from '../lib/runtime/cuda-addon.js';
import { type CudaDevice, createCudaDevice, cudaAvailability } from '../lib/runtime/cuda.js';
import { native } from '../lib/runtime/native.js';
import { compileCudaKernel, nvrtcCacheStats } from '../lib/runtime/nvrtc-cache.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const availability = cudaAvailability();
const gpuTest = availability.available ? test.serial : test.serial.skip;
// Under compute-sanitizer (gpu:verify's sanitize part sets JAXON_SANITIZE=1) every launch and allocation is
// instrumented: loops repeat less, and filling the whole GPU's memory is left out.
const sanitizing = process.env['JAXON_SANITIZE'] === '1';
const repeats = (n: number): number => (sanitizing ? Math.max(2, Math.ceil(n / 20)) : n);
const unsanitizedTest = availability.available && !sanitizing ? test.serial : test.serial.skip;
if (!availability.available) test.skip(`GPU tests skipped: CUDA is not available: ${availability.reason}`, () => {});

// A fresh kernel cache, so compile counts and timings are this run's.
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-cuda-gpu-test-'));
process.env.JAXON_CACHE_DIR = cacheDir;
test.after.always(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

let cached: CudaDevice | undefined;
function gpu(): CudaDevice {
  cached ??= createCudaDevice(0);
  return cached;
}

/** Compiles CUDA source with NVRTC and returns the named kernel, loaded on the device. */
async function kernel(name: string, source: string): Promise<CudaFunctionHandle> {
  const device = gpu();
  const image = await compileCudaKernel(name, source, device.backend.target);
  const module = native().cudaModuleLoad(device.info.handle, image.image, name);
  return native().cudaGetFunction(device.info.handle, module, name).handle;
}

const scaleSource = (name: string, n: number, factor: number) => `
extern "C" __global__ void ${name}(float *out, const float *x) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ${n}u) out[i] = ${factor.toFixed(1)}f * x[i];
}
`;

// Busy-waits on the global nanosecond timer, then sets a flag: a kernel that takes `ms`.
const spinSource = (name: string, ms: number) => `
extern "C" __global__ void ${name}(int *flag) {
  unsigned long long start, now;
#ifdef JX_EMULATED
  start = jx_emu_globaltimer();
  do { now = jx_emu_globaltimer(); } while (now - start < ${ms}ull * 1000000ull);
#else
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ${ms}ull * 1000000ull);
#endif
  *flag = 1;
}
`;

function floats(buffer: ArrayBuffer | Uint8Array): Float32Array {
  return buffer instanceof Uint8Array ? new Float32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 4) : new Float32Array(buffer);
}

gpuTest('the CUDA device: name, compute capability, memory, NVRTC target', (t) => {
  const device = gpu();
  const { info } = device;
  t.log(`${info.name}: sm_${info.computeCapability.join('')}, ${(info.totalMemory / GiB).toFixed(1)} GiB, ${info.smCount} SMs, ` +
    `driver ${info.driverVersion}, NVRTC ${info.nvrtcVersion}, target ${device.backend.target.arch} (${device.backend.target.kind})`);
  t.is(device.platform, 'cuda');
  t.is(device.deviceKind, info.name);
  t.true(info.name.length > 0);
  t.true(info.computeCapability[0] >= 7);
  t.true(info.totalMemory > GiB);
  t.true(info.smCount > 0);
  t.not(info.nvrtcVersion, '');
  if (info.computeCapability[0] === 9 && info.computeCapability[1] === 0 && Number(info.nvrtcVersion.split('.')[0]) >= 12) {
    const { emulator, ...target } = device.backend.target;
    t.deepEqual(target, { arch: 'sm_90a', kind: 'cubin', nvrtcVersion: info.nvrtcVersion });
    t.is(emulator !== undefined, native().cudaProbe().emulated);
  }
});

gpuTest('bytes round-trip device memory and pinned host memory, every size', async (t) => {
  const { backend } = gpu();
  for (const n of [0, 1, 3, 4097, 4 * MiB + 3, 64 * MiB + 5]) {
    const bytes = new Uint8Array(n);
    for (let i = 0; i < n; i++) bytes[i] = (i * 131 + 7) & 255;
    const buffer = backend.fromHost(bytes);
    t.true(Buffer.from(await backend.toHost(buffer)).equals(bytes), `${n} bytes, toHost`);
    t.true(Buffer.from(backend.toHostSync(buffer)).equals(bytes), `${n} bytes, toHostSync`);
    const pinned = backend.devicePut(buffer, 'pinned_host');
    const back = backend.devicePut(pinned, 'device');
    t.true(Buffer.from(await backend.toHost(back)).equals(bytes), `${n} bytes, device -> pinned_host -> device`);
    for (const b of [buffer, pinned, back]) backend.free(b);
  }
});

gpuTest('NVRTC builds CUBIN (or PTX) for the device and the kernel runs', async (t) => {
  const device = gpu();
  const n = 100_000;
  const image = await compileCudaKernel('jaxon_gpu_scale3', scaleSource('jaxon_gpu_scale3', n, 3), device.backend.target);
  t.is(image.kind, device.backend.target.kind);
  // a CUBIN is an ELF file; the emulated GPU's is a host shared object (ELF too) after a 16-byte header
  const elfAt = device.backend.target.emulator ? 16 : 0;
  if (device.backend.target.emulator) t.is(new TextDecoder().decode(image.image.subarray(0, 8)), 'JXEMUSO1');
  if (image.kind === 'cubin') t.deepEqual([...image.image.subarray(elfAt, elfAt + 4)], [0x7f, 0x45, 0x4c, 0x46], 'an ELF image');
  const fn = await kernel('jaxon_gpu_scale3', scaleSource('jaxon_gpu_scale3', n, 3));
  const x = Float32Array.from({ length: n }, (_, i) => i - 5000);
  const input = device.backend.fromHost(new Uint8Array(x.buffer));
  const output = device.backend.fromHost(new Uint8Array(4 * n));
  native().cudaLaunch(fn, [Math.ceil(n / 256), 1, 1], [256, 1, 1], 0, [output.handle, input.handle]);
  const result = floats(await device.backend.toHost(output));
  t.true(result.every((v, i) => v === 3 * x[i]!));
  device.backend.free(input);
  device.backend.free(output);
});

gpuTest('an NVRTC compile error names the kernel and shows the log', async (t) => {
  const source = 'extern "C" __global__ void jaxon_gpu_broken(float *out) { out[0] = undefined_name; }\n';
  const error = (await t.throwsAsync(compileCudaKernel('jaxon_gpu_broken', source, gpu().backend.target))) as Error & { code?: string; log?: string };
  t.is(error.code, 'NVRTC_ERROR_COMPILATION');
  t.true(error.message.includes("kernel 'jaxon_gpu_broken'"), error.message);
  t.regex(error.log ?? '', /undefined_name/);
});

type Case = { [P in Primitive]: { prim: P; ins: ShapedArray[]; params: PrimitiveParams[P] } }[Primitive];

function values(a: ShapedArray, seed: number): Uint8Array {
  const n = a.shape.reduce((p, d) => p * d, 1);
  const dtype: DType = a.dtype;
  if (dtype === 'float32') return new Uint8Array(Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed) * 3).buffer);
  if (dtype === 'int32') return new Uint8Array(Int32Array.from({ length: n }, (_, i) => ((i * 7919 + seed) % 201) - 100).buffer);
  throw new Error(`no test values for ${dtype}`);
}

gpuTest('rendered kernels on the GPU agree with the CPU backend on lowered primitives', async (t) => {
  const { backend } = gpu();
  const f32 = (...shape: number[]) => aval(shape, 'float32');
  const cases: Case[] = [
    { prim: 'add', ins: [f32(1000), f32(1000)], params: {} },
    { prim: 'mul', ins: [f32(33, 65), f32(33, 65)], params: {} },
    { prim: 'exp', ins: [f32(4097)], params: {} as never },
    { prim: 'reduce_sum', ins: [f32(64, 1000)], params: { axes: [1] } },
    { prim: 'reduce_max', ins: [f32(300, 7)], params: { axes: [0] } },
    { prim: 'reduce_sum', ins: [f32(1 << 20)], params: { axes: [0] } },
    // at float32 precision (the default rounds float32 operands to tf32 on tensor cores, as JAX on a GPU)
    { prim: 'dot_general', ins: [f32(128, 256), f32(256, 64)], params: { dimensionNumbers: [[[1], [0]], [[], []]], preferredElementType: null, precision: 'highest' } },
    { prim: 'transpose', ins: [f32(17, 31, 5)], params: { permutation: [2, 0, 1] } },
    { prim: 'cumsum', ins: [f32(10, 100)], params: { axis: 1, reverse: false } },
  ];
  for (const c of cases) {
    const outs = (abstractEval[c.prim] as (a: ShapedArray[], p: unknown) => ShapedArray[])(c.ins, c.params);
    const plan = lowerPrimitive(c.prim, c.ins, outs, c.params as never, 'cuda');
    const hostInputs = c.ins.map((a, i) => values(a, i));
    const expected = cpuBackend.execute(plan, hostInputs.map((b) => cpuBackend.fromHost(b)), outs).map((b) => cpuBackend.toHostSync(b));
    const inputs = hostInputs.map((b) => backend.fromHost(b));
    const results = backend.execute(plan, inputs, outs);
    for (let k = 0; k < outs.length; k++) {
      const got = floats(await backend.toHost(results[k]!));
      const want = floats(expected[k]!);
      let worst = 0;
      for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / Math.max(1, Math.abs(want[i]!)));
      // a float32 sum of n values of magnitude <= 3: the CPU adds in float lanes (render/c.ts floatLanes), CUDA in
      // double, so they differ by float32 accumulation error, n eps max|x| at worst; a dot's two f32 sums (and
      // 3xTF32's dropped low x low products) differ by a few K eps of sum |a||b| ~ 1000 here
      const summed = c.prim === 'reduce_sum' ? c.params.axes.reduce((p, a) => p * c.ins[0]!.shape[a]!, 1) : 0;
      const bound = c.prim === 'dot_general' ? 1e-4 : Math.max(1e-5, summed * 3 * 2 ** -24);
      t.true(worst <= bound, `${c.prim} ${JSON.stringify(c.ins.map((a) => a.shape))}: output ${k} differs from the CPU by ${worst} (relative; bound ${bound})`);
    }
    for (const b of inputs) backend.free(b);
    for (const b of results) if (!(inputs as unknown[]).includes(b)) backend.free(b);
  }
  t.log(`NVRTC: ${JSON.stringify(nvrtcCacheStats())}`);
});

gpuTest('execute returns before its kernel has compiled; the result arrives once it has', async (t) => {
  const { backend } = gpu();
  const x = aval([12345], 'float32');
  const [out] = abstractEval.sqrt([x], {} as never);
  const plan = lowerPrimitive('sqrt', [x], [out!], {} as never, 'cuda');
  const input = backend.fromHost(new Uint8Array(Float32Array.from({ length: 12345 }, (_, i) => i).buffer));
  const compilesBefore = nvrtcCacheStats().compiles;
  const started = performance.now();
  const [result] = backend.execute(plan, [input], [out!]);
  const returnedMs = performance.now() - started;
  const values = floats(await backend.toHost(result!));
  const doneMs = performance.now() - started;
  t.log(`execute returned after ${returnedMs.toFixed(1)} ms; the result came after ${doneMs.toFixed(1)} ms (NVRTC compile included)`);
  t.is(nvrtcCacheStats().compiles - compilesBefore, 1);
  t.true(returnedMs < doneMs / 2, 'execute did not wait for NVRTC');
  t.true(values.every((v, i) => Math.abs(v - Math.sqrt(i)) <= 1e-6 * Math.max(1, Math.sqrt(i))));
  backend.free(input);
  backend.free(result!);
});

gpuTest('data() and blockUntilReady() leave the event loop free while the GPU works', async (t) => {
  const device = gpu();
  const spin = await kernel('jaxon_gpu_spin', spinSource('jaxon_gpu_spin', 300));
  const flag = device.backend.fromHost(new Uint8Array(4));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  native().cudaLaunch(spin, [1, 1, 1], [1, 1, 1], 0, [flag.handle]);
  const ready = device.backend.blockUntilReady(flag);
  const read = device.backend.toHost(flag);
  const queuedMs = performance.now() - started;
  await ready;
  const readyMs = performance.now() - started;
  const value = new Int32Array((await read).buffer)[0];
  clearInterval(timer);
  t.log(`queued in ${queuedMs.toFixed(2)} ms, ready after ${readyMs.toFixed(1)} ms, ${ticks} timer ticks meanwhile`);
  t.true(queuedMs < 50);
  t.true(readyMs >= 280);
  t.is(value, 1);
  t.true(ticks >= 15);
  device.backend.free(flag);
});

gpuTest('copies and kernels stay ordered across the three streams, many times over', async (t) => {
  const device = gpu();
  const n = 1 << 20;
  const fn = await kernel('jaxon_gpu_scale2', scaleSource('jaxon_gpu_scale2', n, 2));
  for (let round = 0; round < repeats(50); round++) {
    const x = Float32Array.from({ length: n }, (_, i) => (i ^ round) % 1000);
    const input = device.backend.fromHost(new Uint8Array(x.buffer));
    const output = device.backend.devicePut(input, 'device'); // same size; overwritten next
    native().cudaLaunch(fn, [n / 256, 1, 1], [256, 1, 1], 0, [output.handle, input.handle]);
    const pinned = device.backend.devicePut(output, 'pinned_host');
    device.backend.free(input);
    device.backend.free(output);
    const got = floats(await device.backend.toHost(pinned));
    device.backend.free(pinned);
    if (!got.every((v, i) => v === 2 * x[i]!)) return t.fail(`round ${round}: wrong values`);
  }
  t.pass();
});

gpuTest('a freed buffer is not reused while a copy on another stream still reads it', async (t) => {
  const device = gpu();
  const spin = await kernel('jaxon_gpu_spin_reuse', spinSource('jaxon_gpu_spin_reuse', 200));
  const n = 16 * MiB;
  const source = device.backend.fromHost(new Uint8Array(n).fill(7));
  const flag = device.backend.fromHost(new Uint8Array(4));
  native().cudaLaunch(spin, [1, 1, 1], [1, 1, 1], 0, [flag.handle]); // holds the compute stream 200 ms
  const a = device.backend.devicePut(source, 'device'); // on the compute stream, after the spin
  const read = device.backend.toHost(a); // the device-to-host stream waits for compute, then reads a
  const pointer = native().cudaBufferInfo(a.handle).pointer;
  device.backend.free(a);
  const c = native().cudaAlloc(device.info.handle, n); // compute's pool, where a's block waits for the copy
  t.not(native().cudaBufferInfo(c).pointer, pointer);
  native().cudaMemset(c, 0);
  const got = await read;
  t.true(got.every((v) => v === 7));
  native().cudaFree(c);
  for (const x of [flag, source]) device.backend.free(x);
});

unsanitizedTest('running out of device memory throws ResourceExhausted with the usage, and the process recovers', (t) => {
  const device = gpu();
  const addon = native();
  const held: CudaBufferHandle[] = [];
  const limit = Math.ceil(device.info.totalMemory / GiB) + 2;
  let error: (Error & { code?: string }) | undefined;
  for (let i = 0; i < limit && !error; i++) {
    try {
      held.push(addon.cudaAlloc(device.info.handle, GiB));
    } catch (e) {
      error = e as Error & { code?: string };
    }
  }
  t.log(`allocated ${held.length} GiB before: ${error?.message}`);
  t.is(error?.code, 'RESOURCE_EXHAUSTED');
  t.regex(error?.message ?? '', /^jaxon cuda: cudaAlloc: out of memory allocating 1073741824 bytes \(1\.00 GiB\): \d+ bytes \([\d.]+ GiB\) in use in \d+ buffers/);
  const stats = device.memoryStats();
  t.true(stats.numOoms >= 1);
  t.true(stats.bytesInUse >= held.length * GiB);
  for (const h of held) addon.cudaFree(h);
  const again = addon.cudaAlloc(device.info.handle, GiB);
  t.is(addon.cudaBufferInfo(again).nbytes, GiB);
  addon.cudaFree(again);
  const released = device.backend.emptyCache();
  t.true(released >= held.length * GiB, `emptyCache released ${released} bytes`);
});

gpuTest('a program replays on three streams; with graphs it relaunches while pointers stay put', async (t) => {
  const device = gpu();
  const addon = native();
  const n = 1 << 16;
  const bytes = 4 * n;
  const scale2 = await kernel('jaxon_gpu_p_scale2', scaleSource('jaxon_gpu_p_scale2', n, 2));
  const add = await kernel('jaxon_gpu_p_add', `
extern "C" __global__ void jaxon_gpu_p_add(float *out, const float *x, const float *y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ${n}u) out[i] = x[i] + y[i];
}
`);
  const grid = [n / 256, 1, 1] as const;
  const block = [256, 1, 1] as const;
  const spec = (graph: boolean) => ({
    slotBytes: [bytes, bytes, bytes, bytes],
    arenaBytes: 2 * bytes,
    events: 2,
    graph,
    ops: [
      { op: 'copy', stream: 'h2d', dst: [-1, 0], src: [0, 0], bytes },
      { op: 'record', stream: 'h2d', event: 0 },
      { op: 'launch', function: scale2, grid, block, sharedMemBytes: 0, args: [[-1, bytes], [1, 0]] },
      { op: 'wait', stream: 'compute', event: 0 },
      { op: 'launch', function: add, grid, block, sharedMemBytes: 0, args: [[3, 0], [-1, 0], [-1, bytes]] },
      { op: 'record', stream: 'compute', event: 1 },
      { op: 'wait', stream: 'd2h', event: 1 },
      { op: 'copy', stream: 'd2h', dst: [2, 0], src: [3, 0], bytes },
    ],
  }) as const;
  for (const graph of [false, true]) {
    const program = addon.cudaProgramCreate(device.info.handle, spec(graph));
    const slots = [
      addon.cudaAlloc(device.info.handle, bytes, 'pinned_host'),
      addon.cudaAlloc(device.info.handle, bytes),
      addon.cudaAlloc(device.info.handle, bytes, 'pinned_host'),
      addon.cudaAlloc(device.info.handle, bytes),
    ];
    for (let run = 0; run < 4; run++) {
      const x = Float32Array.from({ length: n }, (_, i) => i + run);
      const y = Float32Array.from({ length: n }, (_, i) => run * 10 - i);
      const fresh = [addon.cudaFromHost(device.info.handle, x, 'pinned_host'), addon.cudaFromHost(device.info.handle, y)];
      addon.cudaCopy(slots[0]!, fresh[0]!);
      addon.cudaCopy(slots[1]!, fresh[1]!);
      addon.cudaProgramRun(program, slots);
      const got = floats(await addon.cudaToHost(slots[2]!));
      t.true(got.every((v, i) => v === x[i]! + 2 * y[i]!), `graph ${graph}, run ${run}`);
      for (const f of fresh) addon.cudaFree(f);
    }
    const stats = addon.cudaProgramStats(program);
    t.log(`graph ${graph}: ${JSON.stringify(stats)}`);
    t.is(stats.runs, 4);
    if (graph && availability.available) {
      t.is(stats.graphOffReason, '');
      t.true(stats.graphLaunches === 4 && stats.graphCaptures >= 1 && stats.graphCaptures <= 4);
    }
    for (const s of slots) addon.cudaFree(s);
  }
});

gpuTest('replay cost of a 50-launch program, op by op and as a CUDA graph (measured, logged)', async (t) => {
  const device = gpu();
  const addon = native();
  const n = 1024;
  const scale = await kernel('jaxon_gpu_t_scale', scaleSource('jaxon_gpu_t_scale', n, 1));
  const ops = Array.from({ length: 50 }, () => ({
    op: 'launch' as const, function: scale, grid: [4, 1, 1] as const, block: [256, 1, 1] as const, sharedMemBytes: 0,
    args: [[0, 0], [0, 0]] as const,
  }));
  const slot = addon.cudaAlloc(device.info.handle, 4 * n);
  const timings: Record<string, number> = {};
  for (const graph of [false, true]) {
    const program = addon.cudaProgramCreate(device.info.handle, { slotBytes: [4 * n], arenaBytes: 0, events: 0, graph, ops });
    for (let i = 0; i < repeats(10); i++) addon.cudaProgramRun(program, [slot]);
    await addon.cudaSynchronize(device.info.handle);
    const runs = repeats(200);
    const started = performance.now();
    for (let i = 0; i < runs; i++) addon.cudaProgramRun(program, [slot]);
    await addon.cudaSynchronize(device.info.handle);
    timings[graph ? 'graph' : 'opByOp'] = (performance.now() - started) / runs;
  }
  t.log(`per run of 50 launches: op by op ${timings.opByOp!.toFixed(3)} ms, CUDA graph ${timings.graph!.toFixed(3)} ms`);
  addon.cudaFree(slot);
  t.pass();
});

gpuTest('memoryStats follows allocations, and V8 sees the bytes', (t) => {
  const device = gpu();
  const before = device.memoryStats();
  const buffer = native().cudaAlloc(device.info.handle, 256 * MiB);
  const during = device.memoryStats();
  native().cudaFree(buffer);
  const after = device.memoryStats();
  t.is(during.bytesInUse - before.bytesInUse, 256 * MiB);
  t.true(during.peakBytesInUse >= during.bytesInUse);
  t.is(during.numAllocs - before.numAllocs, 1);
  t.is(after.bytesInUse, before.bytesInUse);
  t.true(during.bytesLimit > 0);
  t.true(after.largestFreeBlock >= 256 * MiB);
  // V8's external memory is the whole process's: a garbage collection between two readings can free other bytes
  // (ArrayBuffers of earlier tests) and hide the allocation's, so a few tries, each with readings right around it
  let seen = 0;
  for (let attempt = 0; attempt < 5 && seen < 256 * MiB; attempt++) {
    const v8Before = device.memoryStats().v8ExternalMemory;
    const again = native().cudaAlloc(device.info.handle, 256 * MiB);
    seen = device.memoryStats().v8ExternalMemory - v8Before;
    native().cudaFree(again);
  }
  t.true(seen >= 256 * MiB, `V8's external memory grew by ${seen} bytes for a 256 MiB allocation`);
});
