// Tests of the CUDA runtime that need no GPU: the device caching allocator
// and the pinned-host pool through the addon's test hooks (a fake address
// space whose events complete when the test says); the loader's one-line
// reasons for missing or wrong libraries (child processes, since what was
// loaded stays loaded); cuda_api.h against a real cuda.h where a toolkit is
// installed; the NVRTC target choice; and the whole addon runtime (streams,
// events, staging ring, completions, programs, NVRTC cache, CudaBackend) over
// test/fixtures/fake_cuda.c, a fake driver whose streams are threads.
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import { ResourceExhaustedError } from '../lib/core/errors.js';
import { abstractEval, aval } from '../lib/core/primitives.js';
import type { CudaBufferHandle, CudaDeviceInfo, TestAllocatorHandle } from '../lib/runtime/cuda-addon.js';
import { CudaBuffer, createCudaDevice, cudaAvailability } from '../lib/runtime/cuda.js';
import { native } from '../lib/runtime/native.js';
import {
  clearMemoryNvrtcCache, compileCudaKernel, compileCudaKernelSync, cudaTarget, nvrtcCacheStats,
} from '../lib/runtime/nvrtc-cache.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KiB = 1024;
const MiB = 1024 * 1024;

// ---- the fake driver: built once, loaded by this process before anything probes CUDA ----

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-cuda-runtime-test-'));
const fakeCuda = path.join(workDir, 'libfakecuda.so');
execFileSync('cc', ['-shared', '-fPIC', '-pthread', '-O1', '-o', fakeCuda, path.join(root, 'test', 'fixtures', 'fake_cuda.c')]);
const fakeEnv = {
  JAXON_LIBCUDA: fakeCuda,
  JAXON_LIBNVRTC: fakeCuda,
  FAKE_CUDA_MEMORY_BYTES: String(64 * MiB),
  FAKE_CUDA_COPY_US: '2000', // slow copies, so a missing wait reads stale data
  FAKE_CUDA_SLEEP_MS: '300',
  FAKE_NVRTC_MS: '150',
  JAXON_NVRTC_THREADS: '8',
};
Object.assign(process.env, fakeEnv, { JAXON_CACHE_DIR: path.join(workDir, 'cache') });
delete process.env.JAXON_DUMP_DIR;
delete process.env.JAXON_CUDA_EMULATOR; // the emulated GPU would take precedence over the fake driver (the emulated run sets it)

test.after.always(() => {
  fs.rmSync(workDir, { recursive: true, force: true });
});

const addon = native();

// ---- the device caching allocator ----

function deviceAllocator(limit = 0, capacity = 0): TestAllocatorHandle {
  return addon.testAllocatorCreate('device', limit, capacity);
}

test('allocator: sizes round up to 512 bytes, and 0 bytes still gets a block', (t) => {
  const a = deviceAllocator();
  t.is(addon.testAllocatorAlloc(a, 1, 1).size, 512);
  t.is(addon.testAllocatorAlloc(a, 512, 1).size, 512);
  t.is(addon.testAllocatorAlloc(a, 513, 1).size, 1024);
  t.is(addon.testAllocatorAlloc(a, 0, 1).size, 512);
  t.is(addon.testAllocatorStats(a).bytesInUse, 512 + 512 + 1024 + 512);
});

test('allocator: a freed block is reused by the next request of its size on its stream', (t) => {
  const a = deviceAllocator();
  const first = addon.testAllocatorAlloc(a, 1000, 1);
  addon.testAllocatorFree(a, first.address);
  const second = addon.testAllocatorAlloc(a, 900, 1);
  t.is(second.address, first.address);
  const stats = addon.testAllocatorStats(a);
  t.is(stats.numSegments, 1);
  t.is(stats.numAllocs, 2);
  t.is(stats.fakeReservedBytes, 2 * MiB);
});

test('allocator: best fit picks the smallest free block that fits', (t) => {
  const a = deviceAllocator();
  // Holes of 8 KiB, 2 KiB and 4 KiB, kept apart by allocated blocks.
  const blocks = [8 * KiB, 512, 2 * KiB, 512, 4 * KiB, 512].map((size) => addon.testAllocatorAlloc(a, size, 1));
  for (const i of [0, 2, 4]) addon.testAllocatorFree(a, blocks[i]!.address);
  t.is(addon.testAllocatorAlloc(a, 1500, 1).address, blocks[2]!.address, 'the 2 KiB hole');
  t.is(addon.testAllocatorAlloc(a, 3000, 1).address, blocks[4]!.address, 'the 4 KiB hole');
  t.is(addon.testAllocatorAlloc(a, 5000, 1).address, blocks[0]!.address, 'the 8 KiB hole');
});

test('allocator: blocks split off the rest of a segment and merge back when freed', (t) => {
  const a = deviceAllocator();
  const x = addon.testAllocatorAlloc(a, 1000, 1);
  const y = addon.testAllocatorAlloc(a, 3000, 1);
  const z = addon.testAllocatorAlloc(a, 5000, 1);
  t.deepEqual(
    addon.testAllocatorSegments(a)[0]!.blocks.map((b) => [b.address - x.address, b.size, b.state]),
    [[0, 1024, 'allocated'], [1024, 3072, 'allocated'], [4096, 5120, 'allocated'], [9216, 2 * MiB - 9216, 'free']],
  );
  addon.testAllocatorFree(a, y.address);
  addon.testAllocatorFree(a, x.address); // merges with y's hole
  t.deepEqual(
    addon.testAllocatorSegments(a)[0]!.blocks.map((b) => [b.size, b.state]),
    [[4096, 'free'], [5120, 'allocated'], [2 * MiB - 9216, 'free']],
  );
  addon.testAllocatorFree(a, z.address); // merges with both neighbours
  t.deepEqual(addon.testAllocatorSegments(a)[0]!.blocks, [{ address: x.address, size: 2 * MiB, state: 'free' }]);
  t.is(addon.testAllocatorStats(a).largestFreeBlock, 2 * MiB);
});

test('allocator: requests up to 1 MiB share 2 MiB small segments; larger ones get large segments', (t) => {
  const a = deviceAllocator();
  addon.testAllocatorAlloc(a, MiB, 1);
  addon.testAllocatorAlloc(a, MiB, 1); // the rest of the same small segment
  addon.testAllocatorAlloc(a, MiB + 1, 1); // large pool: a 20 MiB segment for requests under 10 MiB
  addon.testAllocatorAlloc(a, 11 * MiB, 1); // best fit: the rest of the 20 MiB segment
  addon.testAllocatorAlloc(a, 21 * MiB + 1, 1); // from 10 MiB: a segment of the request rounded to 2 MiB
  const segments = addon.testAllocatorSegments(a);
  t.deepEqual(
    segments.map((s) => [s.pool, s.blocks.reduce((sum, b) => sum + b.size, 0)]),
    [['small', 2 * MiB], ['large', 20 * MiB], ['large', 22 * MiB]],
  );
  // Large blocks split only when more than 1 MiB would remain: the 22 MiB block keeps its 1 MiB - 512 tail.
  t.deepEqual(segments[1]!.blocks.map((b) => [b.size, b.state]), [[MiB + 512, 'allocated'], [11 * MiB, 'allocated'], [8 * MiB - 512, 'free']]);
  t.deepEqual(segments[2]!.blocks.map((b) => [b.size, b.state]), [[22 * MiB, 'allocated']]);
  const stats = addon.testAllocatorStats(a);
  t.is(stats.bytesReserved, 44 * MiB);
  t.is(stats.bytesInUse, 2 * MiB + (MiB + 512) + 11 * MiB + 22 * MiB);
  t.is(stats.largestFreeBlock, 8 * MiB - 512);
});

test('allocator: free blocks belong to their stream; another stream gets its own segment', (t) => {
  const a = deviceAllocator();
  const x = addon.testAllocatorAlloc(a, 4096, 1);
  addon.testAllocatorFree(a, x.address);
  const y = addon.testAllocatorAlloc(a, 4096, 2);
  t.not(y.address, x.address);
  t.deepEqual(addon.testAllocatorSegments(a).map((s) => s.stream), [1, 2]);
  t.is(addon.testAllocatorAlloc(a, 4096, 1).address, x.address);
});

test('allocator: a block used on another stream is reused only after that stream\'s event completes', (t) => {
  const a = deviceAllocator();
  const x = addon.testAllocatorAlloc(a, 4096, 1);
  addon.testAllocatorRecordUse(a, x.address, 2);
  addon.testAllocatorFree(a, x.address);
  let stats = addon.testAllocatorStats(a);
  t.is(stats.bytesInUse, 0);
  t.is(stats.bytesPendingFree, 4096);
  t.is(stats.pendingEvents, 1);
  const y = addon.testAllocatorAlloc(a, 4096, 1);
  t.not(y.address, x.address, 'reused while stream 2 may still read it');
  t.is(addon.testAllocatorCompleteEvents(a, 3), 0, 'no event on stream 3');
  t.is(addon.testAllocatorCompleteEvents(a, 2), 1);
  addon.testAllocatorFree(a, y.address);
  stats = addon.testAllocatorStats(a);
  t.is(stats.bytesPendingFree, 0);
  t.is(stats.pendingEvents, 0);
  t.is(addon.testAllocatorAlloc(a, 4096, 1).address, x.address, 'the lowest free address, once the event completed');
});

test('allocator: uses on several streams wait for every one of their events', (t) => {
  const a = deviceAllocator();
  const x = addon.testAllocatorAlloc(a, 4096, 1);
  addon.testAllocatorRecordUse(a, x.address, 2);
  addon.testAllocatorRecordUse(a, x.address, 3);
  addon.testAllocatorRecordUse(a, x.address, 1); // its own stream needs no event
  addon.testAllocatorFree(a, x.address);
  t.is(addon.testAllocatorStats(a).pendingEvents, 2);
  addon.testAllocatorCompleteEvents(a, 2);
  t.is(addon.testAllocatorStats(a).bytesPendingFree, 4096, 'stream 3 has not finished');
  addon.testAllocatorCompleteEvents(a, 3);
  t.is(addon.testAllocatorStats(a).bytesPendingFree, 0);
  t.is(addon.testAllocatorAlloc(a, 4096, 1).address, x.address);
});

test('allocator: out of memory empties the cache and retries before failing', (t) => {
  const a = deviceAllocator(4 * MiB);
  addon.testAllocatorAlloc(a, MiB, 1);
  addon.testAllocatorAlloc(a, MiB, 1);
  const cached = addon.testAllocatorAlloc(a, MiB, 2); // a second segment, for stream 2
  addon.testAllocatorFree(a, cached.address);
  t.is(addon.testAllocatorStats(a).bytesReserved, 4 * MiB);
  addon.testAllocatorAlloc(a, MiB, 3); // needs a third segment: the limit forces out stream 2's cached one
  let stats = addon.testAllocatorStats(a);
  t.is(stats.numCacheFlushes, 1);
  t.is(stats.numOoms, 0);
  t.is(stats.bytesReserved, 4 * MiB);
  addon.testAllocatorAlloc(a, MiB, 3);
  const error = t.throws(() => addon.testAllocatorAlloc(a, MiB, 4)) as Error & { code?: string };
  t.is(error.code, 'RESOURCE_EXHAUSTED');
  t.is(
    error.message,
    'out of memory allocating 1048576 bytes (1.00 MiB): 4194304 bytes (4.00 MiB) in use in 4 buffers, 0 B reserved ' +
      'but unused after emptying the cache, 0 B waiting for other streams, limit 4.00 MiB',
  );
  stats = addon.testAllocatorStats(a);
  t.is(stats.numOoms, 1);
  t.is(stats.numCacheFlushes, 2);
  // It keeps working: a freed block serves the next request.
  const segments = addon.testAllocatorSegments(a);
  addon.testAllocatorFree(a, segments[0]!.blocks[0]!.address);
  t.notThrows(() => addon.testAllocatorAlloc(a, MiB, 1));
});

test('allocator: out of memory waits for blocks held by other streams\' events', (t) => {
  const a = deviceAllocator(2 * MiB);
  const x = addon.testAllocatorAlloc(a, MiB, 1);
  addon.testAllocatorRecordUse(a, x.address, 2);
  addon.testAllocatorFree(a, x.address);
  t.is(addon.testAllocatorStats(a).bytesPendingFree, MiB);
  // The retry synchronizes the pending event (the fake completes it), frees stream 1's segment, and succeeds.
  const y = addon.testAllocatorAlloc(a, MiB, 3);
  const stats = addon.testAllocatorStats(a);
  t.is(stats.bytesPendingFree, 0);
  t.is(stats.numCacheFlushes, 1);
  t.is(stats.numSegments, 1);
  t.is(addon.testAllocatorSegments(a)[0]!.stream, 3);
  t.is(y.size, MiB);
});

test('allocator: when the device refuses a 20 MiB segment, a large request gets one of its own size', (t) => {
  const a = deviceAllocator(0, 8 * MiB); // no limit, but the fake device has 8 MiB
  const x = addon.testAllocatorAlloc(a, 3 * MiB, 1);
  t.is(x.size, 4 * MiB, 'the segment rounded to 2 MiB, kept whole (1 MiB left is not worth a split)');
  const stats = addon.testAllocatorStats(a);
  t.is(stats.bytesReserved, 4 * MiB, 'not a 20 MiB segment');
  t.is(stats.numCacheFlushes, 1);
  const error = t.throws(() => addon.testAllocatorAlloc(a, 5 * MiB, 1)) as Error & { code?: string };
  t.is(error.code, 'RESOURCE_EXHAUSTED');
  t.regex(error.message, /^out of memory allocating 5242880 bytes \(5\.00 MiB\): 4194304 bytes \(4\.00 MiB\) in use in 1 buffers/);
});

test('allocator: emptyCache releases whole free segments only', (t) => {
  const a = deviceAllocator();
  const x = addon.testAllocatorAlloc(a, 4096, 1);
  const y = addon.testAllocatorAlloc(a, 4096, 2);
  addon.testAllocatorAlloc(a, 4096, 2);
  addon.testAllocatorFree(a, x.address);
  addon.testAllocatorFree(a, y.address);
  t.is(addon.testAllocatorEmptyCache(a), 2 * MiB, 'stream 1\'s segment; stream 2\'s still has a live block');
  const stats = addon.testAllocatorStats(a);
  t.is(stats.bytesReserved, 2 * MiB);
  t.is(stats.peakBytesReserved, 4 * MiB);
  t.is(stats.numSegments, 1);
  t.is(stats.fakeReservedBytes, 2 * MiB);
});

test('allocator: stats count exactly', (t) => {
  const a = deviceAllocator(64 * MiB);
  const sizes = [100, 5000, 700 * KiB, 3 * MiB];
  const blocks = sizes.map((s) => addon.testAllocatorAlloc(a, s, 1));
  addon.testAllocatorFree(a, blocks[1]!.address);
  t.deepEqual(
    { ...addon.testAllocatorStats(a) },
    {
      bytesInUse: 512 + 700 * KiB + 3 * MiB,
      peakBytesInUse: 512 + 5120 + 700 * KiB + 3 * MiB,
      bytesLimit: 64 * MiB,
      bytesReserved: 2 * MiB + 20 * MiB,
      peakBytesReserved: 22 * MiB,
      bytesPendingFree: 0,
      largestFreeBlock: 17 * MiB,
      largestAllocSize: 3 * MiB,
      numAllocs: 4,
      numLiveBuffers: 3,
      numSegments: 2,
      numCacheFlushes: 0,
      numOoms: 0,
      bytesRequested: 100 + 700 * KiB + 3 * MiB,
      peakBytesRequested: 100 + 5000 + 700 * KiB + 3 * MiB,
      pendingEvents: 0,
      fakeReservedBytes: 22 * MiB,
    },
  );
});

test('allocator: a double free is an error, not a corruption', (t) => {
  const a = deviceAllocator();
  const x = addon.testAllocatorAlloc(a, 4096, 1);
  addon.testAllocatorFree(a, x.address);
  t.throws(() => addon.testAllocatorFree(a, x.address), { message: /no live block at address/ });
  t.throws(() => addon.testAllocatorAlloc({} as TestAllocatorHandle, 1, 1), {
    instanceOf: TypeError,
    message: /testAllocatorAlloc: allocator must be a test allocator handle/,
  });
});

// ---- the pinned-host pool ----

test('pinned-host pool: power-of-two classes from 4 KiB, whole blocks reused', (t) => {
  const p = addon.testAllocatorCreate('host', 0, 0);
  t.is(addon.testAllocatorAlloc(p, 1).size, 4 * KiB);
  const x = addon.testAllocatorAlloc(p, 5000);
  t.is(x.size, 8 * KiB);
  t.is(addon.testAllocatorAlloc(p, MiB + 1).size, 2 * MiB);
  addon.testAllocatorFree(p, x.address);
  t.is(addon.testAllocatorAlloc(p, 4097).address, x.address);
  t.not(addon.testAllocatorAlloc(p, 6000).address, x.address);
  const stats = addon.testAllocatorStats(p);
  t.is(stats.bytesInUse, 4 * KiB + 8 * KiB + 2 * MiB + 8 * KiB);
  t.is(stats.numSegments, 4);
});

test('pinned-host pool: a block a stream used is reused once the stream\'s event completes', (t) => {
  const p = addon.testAllocatorCreate('host', 0, 0);
  const x = addon.testAllocatorAlloc(p, 4096);
  addon.testAllocatorRecordUse(p, x.address, 7);
  addon.testAllocatorFree(p, x.address);
  t.is(addon.testAllocatorStats(p).bytesPendingFree, 4096);
  const y = addon.testAllocatorAlloc(p, 4096);
  t.not(y.address, x.address);
  addon.testAllocatorCompleteEvents(p, 7);
  t.is(addon.testAllocatorAlloc(p, 4096).address, x.address);
});

test('pinned-host pool: out of memory empties the cache, retries, then names the request', (t) => {
  const p = addon.testAllocatorCreate('host', 64 * KiB, 0);
  const x = addon.testAllocatorAlloc(p, 32 * KiB);
  addon.testAllocatorFree(p, x.address); // cached in the 32 KiB class
  addon.testAllocatorAlloc(p, 64 * KiB); // only fits once the cached block is released
  t.is(addon.testAllocatorStats(p).numCacheFlushes, 1);
  const error = t.throws(() => addon.testAllocatorAlloc(p, 1)) as Error & { code?: string };
  t.is(error.code, 'RESOURCE_EXHAUSTED');
  t.is(error.message, 'out of pinned host memory allocating 1 bytes (a 4.00 KiB block): 65536 bytes (64.00 KiB) in use in 1 buffers');
});

// ---- the loader's reasons, in child processes (a loaded library stays loaded) ----

function probeIn(env: Record<string, string>): { available: boolean; reason: string } {
  const script = `const a = require(${JSON.stringify(path.join(root, 'build', 'Release', 'jaxon_native.node'))});
    process.stdout.write(JSON.stringify(a.cudaProbe()));`;
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const key of [...Object.keys(fakeEnv), 'FAKE_CUDA_INIT_ERROR', 'FAKE_CUDA_DEVICES']) delete childEnv[key];
  const result = spawnSync(process.execPath, ['-e', script], { env: { ...childEnv, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`probe child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as { available: boolean; reason: string };
}

// A real shared library that is not CUDA: libm, as this process mapped it.
const libm = fs.readFileSync('/proc/self/maps', 'utf8').split('\n').map((l) => l.split(/\s+/).at(-1) ?? '')
  .find((p) => /\/libm\.so/.test(p));

test('loader: JAXON_LIBCUDA pointing at a missing file says so in one line', (t) => {
  const probe = probeIn({ JAXON_LIBCUDA: '/nonexistent/libcuda.so.1' });
  t.false(probe.available);
  t.is(
    probe.reason,
    'no CUDA driver: JAXON_LIBCUDA=/nonexistent/libcuda.so.1 cannot be loaded: /nonexistent/libcuda.so.1: cannot open ' +
      'shared object file: No such file or directory',
  );
});

test('loader: JAXON_LIBCUDA pointing at a library that is not CUDA names what it lacks', (t) => {
  if (!libm) return t.fail('libm is not mapped into this process');
  const probe = probeIn({ JAXON_LIBCUDA: libm });
  t.false(probe.available);
  t.is(probe.reason, `JAXON_LIBCUDA=${libm} is not a usable CUDA driver: it lacks cuInit, cuDriverGetVersion, ` +
    'cuGetErrorName and 31 more (34 of 34 entry points)');
});

test('loader: a driver without the entry points jaxon never calls (cuEventElapsedTime, cuModuleUnload) is usable', (t) => {
  const minimal = path.join(workDir, 'libfakecuda-minimal.so');
  execFileSync('cc', ['-shared', '-fPIC', '-pthread', '-O1', '-DFAKE_CUDA_WITHOUT_OPTIONAL', '-o', minimal, path.join(root, 'test', 'fixtures', 'fake_cuda.c')]);
  t.false(execFileSync('nm', ['-D', minimal], { encoding: 'utf8' }).includes('cuModuleUnload'));
  const probe = probeIn({ JAXON_LIBCUDA: minimal, JAXON_LIBNVRTC: minimal });
  t.true(probe.available, probe.reason);
});

test('loader: without overrides the reason names where it looked, in one line', (t) => {
  const probe = probeIn({});
  if (probe.available) return t.pass(); // a machine with a GPU
  t.false(probe.reason.includes('\n'));
  t.regex(probe.reason, /^no CUDA driver: libcuda\.so\.1 is not on the loader's paths .* \(set JAXON_LIBCUDA to its path\)$/);
});

test('loader: a driver with a missing or wrong NVRTC is reported with both', (t) => {
  let probe = probeIn({ JAXON_LIBCUDA: fakeCuda, JAXON_LIBNVRTC: '/nonexistent/libnvrtc.so.12' });
  t.false(probe.available);
  t.is(
    probe.reason,
    `1 CUDA device(s), driver for CUDA 12.4 (${fakeCuda}), but no NVRTC: JAXON_LIBNVRTC=/nonexistent/libnvrtc.so.12 ` +
      'cannot be used: /nonexistent/libnvrtc.so.12: cannot open shared object file: No such file or directory',
  );
  if (!libm) return t.fail('libm is not mapped into this process');
  probe = probeIn({ JAXON_LIBCUDA: fakeCuda, JAXON_LIBNVRTC: libm });
  t.false(probe.available);
  t.true(probe.reason.endsWith(`is not a usable NVRTC: it lacks nvrtcGetErrorString, nvrtcVersion, nvrtcGetNumSupportedArchs and 10 more`), probe.reason);
});

test('loader: the toolkit stub, a failing cuInit and a GPU-less driver each get their reason', (t) => {
  const stub = probeIn({ JAXON_LIBCUDA: fakeCuda, FAKE_CUDA_INIT_ERROR: '34' });
  t.is(stub.reason, `${fakeCuda} is the CUDA toolkit's stub library, not a driver (cuInit: CUDA_ERROR_STUB_LIBRARY (CUDA driver is a stub library))`);
  const noDevice = probeIn({ JAXON_LIBCUDA: fakeCuda, FAKE_CUDA_INIT_ERROR: '100' });
  t.is(noDevice.reason, `the CUDA driver ${fakeCuda} failed to initialize: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)`);
  const unknown = probeIn({ JAXON_LIBCUDA: fakeCuda, FAKE_CUDA_INIT_ERROR: '999' });
  t.is(unknown.reason, `the CUDA driver ${fakeCuda} failed to initialize: cuInit: CUresult 999 (unknown error code)`);
  const none = probeIn({ JAXON_LIBCUDA: fakeCuda, FAKE_CUDA_DEVICES: '0' });
  t.is(none.reason, `the CUDA driver ${fakeCuda} (CUDA 12.4) reports no GPU: 0 devices`);
  for (const p of [stub, noDevice, unknown, none]) t.false(p.available);
});

// ---- cuda_api.h against the toolkit ----

test('cuda_api.h agrees with the installed toolkit\'s cuda.h (values and prototypes)', (t) => {
  const homes = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter((h): h is string => !!h);
  const include = homes.map((h) => path.join(h, 'include')).find((dir) => fs.existsSync(path.join(dir, 'cuda.h')));
  if (!include) {
    t.log('no CUDA toolkit headers here (CUDA_HOME, CUDA_PATH, /usr/local/cuda); nothing to compare against');
    return t.pass();
  }
  const result = spawnSync('cc', ['-std=c11', '-fsyntax-only', `-I${include}`, `-I${path.join(root, 'cuda')}`,
    path.join(root, 'cuda', 'cuda_api_check.c')], { encoding: 'utf8' });
  t.is(result.status, 0, result.stderr);
});

// ---- NVRTC targets ----

test('cudaTarget: CUBIN for the exact arch (sm_90a, sm_100a), PTX when NVRTC is older than the device', (t) => {
  const archs = [75, 80, 86, 89, 90];
  t.deepEqual(cudaTarget([9, 0], '12.4', archs), { arch: 'sm_90a', kind: 'cubin', nvrtcVersion: '12.4' });
  t.deepEqual(cudaTarget([9, 0], '11.8', [75, 80, 86, 89, 90]), { arch: 'sm_90', kind: 'cubin', nvrtcVersion: '11.8' });
  t.deepEqual(cudaTarget([8, 6], '12.4', archs), { arch: 'sm_86', kind: 'cubin', nvrtcVersion: '12.4' });
  t.deepEqual(cudaTarget([10, 0], '12.8', [...archs, 100, 120]), { arch: 'sm_100a', kind: 'cubin', nvrtcVersion: '12.8' });
  t.deepEqual(cudaTarget([10, 0], '12.4', archs), { arch: 'compute_90', kind: 'ptx', nvrtcVersion: '12.4' });
  t.throws(() => cudaTarget([7, 0], '12.4', archs), { message: /sm_75, .* all newer than this device \(sm_70\)/ });
});

// ---- the runtime over the fake driver ----

let device: CudaDeviceInfo | undefined;
function fakeDevice(): CudaDeviceInfo {
  device ??= addon.cudaInit(0);
  return device;
}

function floats(buffer: ArrayBuffer): number[] {
  return [...new Float32Array(buffer)];
}

async function fakeKernel(name: string) {
  const d = fakeDevice();
  const image = await compileCudaKernel(name, `extern "C" __global__ void ${name}() {}\n`, cudaTarget(d.computeCapability, '12.4', []));
  return addon.cudaGetFunction(d.handle, addon.cudaModuleLoad(d.handle, image.image, name), name).handle;
}

test.serial('fake driver: the probe and the device info', (t) => {
  const availability = cudaAvailability();
  t.true(availability.available);
  t.is(availability.reason, `1 CUDA device(s), driver for CUDA 12.4 (${fakeCuda}); NVRTC 12.4 (${fakeCuda})`);
  const d = fakeDevice();
  t.like(d, { ordinal: 0, name: 'Fake CUDA Device (jaxon tests)', totalMemory: 64 * MiB, smCount: 132, driverVersion: 12040, nvrtcVersion: '12.4' });
  t.deepEqual(d.computeCapability, [9, 0]);
  t.throws(() => addon.cudaInit(1), { instanceOf: RangeError, message: 'jaxon cuda: cudaInit: ordinal must be in [0, 1), got 1' });
});

test.serial('fake driver: bytes round-trip through the staging ring, small, empty and larger than the ring', async (t) => {
  const d = fakeDevice();
  for (const n of [0, 3, 4096, 5 * MiB + 7, 40 * MiB + 1]) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 7 + n) & 255);
    const buffer = addon.cudaFromHost(d.handle, bytes);
    t.true(Buffer.from(await addon.cudaToHost(buffer)).equals(bytes), `${n} bytes, asynchronously`);
    t.true(Buffer.from(addon.cudaToHostSync(buffer)).equals(bytes), `${n} bytes, synchronously`);
    addon.cudaFree(buffer);
  }
  // Many small copies share ring chunks and wrap around the ring.
  const buffers = Array.from({ length: 100 }, (_, i) => addon.cudaFromHost(d.handle, new Float32Array(30_000).fill(i)));
  const back = await Promise.all(buffers.map((b) => addon.cudaToHost(b)));
  t.true(back.every((b, i) => new Float32Array(b).every((v) => v === i)));
  for (const b of buffers) addon.cudaFree(b);
});

test.serial('fake driver: a kernel waits for the copy that fills its input, and the read waits for the kernel', async (t) => {
  const d = fakeDevice();
  const scale2 = await fakeKernel('fake_scale2_f32');
  const n = 1 << 16;
  const input = addon.cudaFromHost(d.handle, Float32Array.from({ length: n }, (_, i) => i));
  const output = addon.cudaAlloc(d.handle, 4 * n);
  addon.cudaLaunch(scale2, [n / 256, 1, 1], [256, 1, 1], 0, [output, input]);
  const result = new Float32Array(await addon.cudaToHost(output));
  t.true(result.every((v, i) => v === 2 * i), 'the copy (2 ms in the fake) finished before the kernel read it');
  addon.cudaFree(input);
  addon.cudaFree(output);
});

test.serial('fake driver: data() and blockUntilReady() settle without blocking the event loop', async (t) => {
  const d = fakeDevice();
  const sleep = await fakeKernel('fake_sleep');
  const flag = addon.cudaFromHost(d.handle, new Int32Array([0]));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  addon.cudaLaunch(sleep, [1, 1, 1], [1, 1, 1], 0, [flag]); // 300 ms on the compute stream
  const ready = addon.cudaBlockUntilReady(flag);
  const read = addon.cudaToHost(flag);
  const queuedMs = performance.now() - started;
  await ready;
  const readyMs = performance.now() - started;
  const value = new Int32Array(await read)[0];
  clearInterval(timer);
  t.true(queuedMs < 100, `queueing took ${queuedMs} ms`);
  t.true(readyMs >= 250, `blockUntilReady settled after ${readyMs} ms, before the kernel ended`);
  t.is(value, 1, 'the read waited for the kernel that wrote the flag');
  t.true(ticks >= 10, `the event loop ran ${ticks} timer ticks meanwhile`);
  await addon.cudaSynchronize(d.handle);
  addon.cudaFree(flag);
});

test.serial('fake driver: a freed buffer\'s memory is not reused while a copy still reads it', async (t) => {
  const d = fakeDevice();
  const iota = await fakeKernel('fake_iota_f32');
  const n = 1 << 14;
  const a = addon.cudaAlloc(d.handle, 4 * n);
  addon.cudaLaunch(iota, [n / 256, 1, 1], [256, 1, 1], 0, [a]);
  const read = addon.cudaToHost(a); // the device-to-host stream reads a (2 ms in the fake)
  const pointer = addon.cudaBufferInfo(a).pointer;
  addon.cudaFree(a);
  const b = addon.cudaAlloc(d.handle, 4 * n);
  t.not(addon.cudaBufferInfo(b).pointer, pointer, 'the copy\'s event has not completed');
  addon.cudaMemset(b, 0xff);
  t.true(new Float32Array(await read).every((v, i) => v === i));
  addon.cudaFree(b);
  await addon.cudaSynchronize(d.handle);
  const c = addon.cudaAlloc(d.handle, 4 * n);
  t.is(addon.cudaBufferInfo(c).pointer, pointer, 'reused once the copy completed');
  addon.cudaFree(c);
});

test.serial('fake driver: devicePut moves bytes between device and pinned_host memory', async (t) => {
  const d = fakeDevice();
  const values = Float32Array.from({ length: 1000 }, (_, i) => i / 3);
  const onDevice = addon.cudaFromHost(d.handle, values);
  const pinned = addon.cudaDevicePut(onDevice, 'pinned_host');
  const pinnedAgain = addon.cudaDevicePut(pinned, 'pinned_host');
  const back = addon.cudaDevicePut(pinnedAgain, 'device');
  const copy = addon.cudaDevicePut(back, 'device');
  t.is(addon.cudaBufferInfo(pinned).memoryKind, 'pinned_host');
  t.is(addon.cudaBufferInfo(back).memoryKind, 'device');
  for (const b of [pinned, pinnedAgain, back, copy]) t.deepEqual(floats(await addon.cudaToHost(b)), [...values]);
  t.deepEqual(floats(addon.cudaToHostSync(pinnedAgain)), [...values]);
  const fromHostPinned = addon.cudaFromHost(d.handle, values, 'pinned_host');
  t.deepEqual(floats(await addon.cudaToHost(addon.cudaDevicePut(fromHostPinned, 'device'))), [...values]);
  for (const b of [onDevice, pinned, pinnedAgain, back, copy, fromHostPinned]) addon.cudaFree(b);
});

test.serial('fake driver: a pinned buffer freed while data() reads it in place is released after the read', async (t) => {
  const d = fakeDevice();
  const sleep = await fakeKernel('fake_sleep');
  const flag = addon.cudaAlloc(d.handle, 4);
  const values = Float32Array.from({ length: 2048 }, (_, i) => i * 1.5);
  const pinned = addon.cudaFromHost(d.handle, values, 'pinned_host');
  addon.cudaLaunch(sleep, [1, 1, 1], [1, 1, 1], 0, [flag]); // the read waits behind 300 ms of compute
  const read = addon.cudaToHost(pinned);
  const pointer = addon.cudaBufferInfo(pinned).pointer;
  addon.cudaFree(pinned);
  const other = addon.cudaFromHost(d.handle, new Float32Array(2048).fill(-1), 'pinned_host');
  t.not(addon.cudaBufferInfo(other).pointer, pointer, 'the pinned block is still being read');
  t.deepEqual(floats(await read), [...values]);
  const after = addon.cudaAlloc(d.handle, 2048 * 4, 'pinned_host');
  t.is(addon.cudaBufferInfo(after).pointer, pointer, 'released once the read finished');
  for (const b of [flag, other, after]) addon.cudaFree(b);
});

test.serial('fake driver: out of device memory frees the cache, retries, then throws naming the request and usage', (t) => {
  const d = fakeDevice();
  const stats = addon.cudaMemoryStats(d.handle);
  t.true(stats.bytesLimit > 0 && stats.bytesLimit <= 64 * MiB, `bytesLimit ${stats.bytesLimit}`);
  const big = addon.cudaAlloc(d.handle, 20 * MiB);
  addon.cudaFree(big); // cached: a 20 MiB segment
  const held = addon.cudaAlloc(d.handle, 30 * MiB);
  const error = t.throws(() => addon.cudaAlloc(d.handle, 40 * MiB)) as Error & { code?: string };
  t.is(error.code, 'RESOURCE_EXHAUSTED');
  t.regex(error.message, /^jaxon cuda: cudaAlloc: out of memory allocating 41943040 bytes \(40\.00 MiB\): \d+ bytes \([\d.]+ MiB\) in use in \d+ buffers/);
  const after = addon.cudaMemoryStats(d.handle);
  t.true(after.numOoms >= 1);
  t.true(after.numCacheFlushes >= 1);
  addon.cudaFree(held);
  const retry = addon.cudaAlloc(d.handle, 40 * MiB);
  t.is(addon.cudaBufferInfo(retry).nbytes, 40 * MiB, 'the process keeps working after running out');
  addon.cudaFree(retry);
});

test.serial('fake driver: buffer bytes are reported to V8 as external memory', (t) => {
  const d = fakeDevice();
  const before = addon.cudaMemoryStats(d.handle);
  const buffer = addon.cudaAlloc(d.handle, 16 * MiB);
  const during = addon.cudaMemoryStats(d.handle);
  addon.cudaFree(buffer);
  const after = addon.cudaMemoryStats(d.handle);
  t.is(during.bytesReportedToV8 - before.bytesReportedToV8, 16 * MiB);
  t.is(during.bytesReportedToV8 - after.bytesReportedToV8, 16 * MiB);
  // V8's own total (napi_adjust_external_memory's answer) moved by as much, give or take what other external memory
  // the process freed meanwhile (seen: 23 KiB less on a loaded machine, a garbage collection between the calls)
  t.true(during.v8ExternalMemory - before.v8ExternalMemory >= 15 * MiB, `V8 grew by ${during.v8ExternalMemory - before.v8ExternalMemory}`);
  t.true(during.v8ExternalMemory - after.v8ExternalMemory >= 15 * MiB, `V8 shrank by ${during.v8ExternalMemory - after.v8ExternalMemory}`);
});

test.serial('fake driver: launches are checked against the function and handles against their kind', async (t) => {
  const d = fakeDevice();
  const iota = await fakeKernel('fake_iota_f32');
  const out = addon.cudaAlloc(d.handle, 4096);
  t.throws(() => addon.cudaLaunch(iota, [1, 1, 1], [2048, 1, 1], 0, [out]), {
    instanceOf: RangeError,
    message: "jaxon cuda: cudaLaunch: kernel 'fake_iota_f32': block [2048,1,1] has 2048 threads, more than the 1024 it can run with 32 registers per thread",
  });
  t.throws(() => addon.cudaLaunch(iota, [0, 1, 1], [1, 1, 1], 0, [out]), { message: /grid \[0,1,1\] and block \[1,1,1\] must be positive/ });
  t.throws(() => addon.cudaLaunch(iota, [1, 1, 1], [1, 1, 1], 300_000, [out]), {
    message: "jaxon cuda: cudaLaunch: kernel 'fake_iota_f32' asks for 300000 bytes of dynamic shared memory beside its 0 static ones; Fake CUDA Device (jaxon tests) allows 232448 in all",
  });
  t.throws(() => addon.cudaLaunch(out as never, [1, 1, 1], [1, 1, 1], 0, [out]), {
    instanceOf: TypeError,
    message: 'jaxon cuda: cudaLaunch: function must be a CUDA function handle',
  });
  addon.cudaFree(out);
  t.throws(() => addon.cudaFree(out), { message: 'jaxon cuda: cudaFree: buffer was already freed' });
  t.throws(() => addon.cudaLaunch(iota, [1, 1, 1], [1, 1, 1], 0, [out]), { message: 'jaxon cuda: cudaLaunch: buffers[0] was already freed' });
  const image = new TextEncoder().encode('not an image\0');
  t.throws(() => addon.cudaModuleLoad(d.handle, image, 'cubin of kernel bogus'), {
    message: 'jaxon cuda: cuModuleLoadData(cubin of kernel bogus, 13 bytes) failed: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)',
  });
});

test.serial('fake driver: a program replays copies, launches and event waits across the three streams', async (t) => {
  const d = fakeDevice();
  const scale2 = await fakeKernel('fake_scale2_f32');
  const add = await fakeKernel('fake_add_f32');
  const n = 4096;
  const bytes = 4 * n;
  // slot 0: pinned input, slot 1: device input, slot 2: pinned output, slot 3: device output.
  const program = addon.cudaProgramCreate(d.handle, {
    slotBytes: [bytes, bytes, bytes, bytes],
    arenaBytes: 2 * bytes,
    events: 2,
    graph: true,
    ops: [
      { op: 'copy', stream: 'h2d', dst: [-1, 0], src: [0, 0], bytes }, // prefetch the pinned input into the arena
      { op: 'record', stream: 'h2d', event: 0 },
      { op: 'launch', function: scale2, grid: [n / 256, 1, 1], block: [256, 1, 1], sharedMemBytes: 0, args: [[-1, bytes], [1, 0]] },
      { op: 'wait', stream: 'compute', event: 0 },
      { op: 'launch', function: add, grid: [n / 256, 1, 1], block: [256, 1, 1], sharedMemBytes: 0, args: [[3, 0], [-1, 0], [-1, bytes]] },
      { op: 'record', stream: 'compute', event: 1 },
      { op: 'wait', stream: 'd2h', event: 1 },
      { op: 'copy', stream: 'd2h', dst: [2, 0], src: [3, 0], bytes },
    ],
  });
  for (let run = 0; run < 3; run++) {
    const x = Float32Array.from({ length: n }, (_, i) => i + run);
    const y = Float32Array.from({ length: n }, (_, i) => 1000 * run - i);
    const slots: CudaBufferHandle[] = [
      addon.cudaFromHost(d.handle, x, 'pinned_host'),
      addon.cudaFromHost(d.handle, y),
      addon.cudaAlloc(d.handle, bytes, 'pinned_host'),
      addon.cudaAlloc(d.handle, bytes),
    ];
    addon.cudaProgramRun(program, slots);
    const expected = [...x].map((v, i) => v + 2 * y[i]!);
    t.deepEqual(floats(await addon.cudaToHost(slots[2]!)), expected, `run ${run}: pinned output`);
    t.deepEqual(floats(await addon.cudaToHost(slots[3]!)), expected, `run ${run}: device output`);
    for (const s of slots) addon.cudaFree(s);
  }
  t.deepEqual(addon.cudaProgramStats(program), {
    runs: 3, graphLaunches: 0, graphCaptures: 0, graphUpdates: 0, graph: false, graphOffReason: 'the driver lacks the graph API',
  });
});

test.serial('fake driver: program specs and runs are validated', async (t) => {
  const d = fakeDevice();
  const iota = await fakeKernel('fake_iota_f32');
  const spec = (ops: unknown[]) => ({ slotBytes: [1024], arenaBytes: 512, events: 1, ops }) as never;
  t.throws(() => addon.cudaProgramCreate(d.handle, spec([{ op: 'copy', stream: 'h2d', dst: [1, 0], src: [0, 0], bytes: 4 }])), {
    message: 'jaxon cuda: cudaProgramCreate: ops[0]: slot out of range',
  });
  t.throws(() => addon.cudaProgramCreate(d.handle, spec([{ op: 'memset', stream: 'compute', dst: [-1, 256], value: 0, bytes: 512 }])), {
    message: 'jaxon cuda: cudaProgramCreate: ops[0]: reference past the end of its slot or the arena',
  });
  t.throws(() => addon.cudaProgramCreate(d.handle, spec([{ op: 'wait', stream: 'gpu', event: 0 }])), {
    message: "jaxon cuda: cudaProgramCreate: ops[0]: stream must be 'compute', 'h2d' or 'd2h'",
  });
  t.throws(() => addon.cudaProgramCreate(d.handle, spec([{ op: 'record', stream: 'compute', event: 1 }])), {
    message: 'jaxon cuda: cudaProgramCreate: ops[0]: record and wait need stream and an event index below `events`',
  });
  const program = addon.cudaProgramCreate(d.handle, spec([
    { op: 'memset', stream: 'compute', dst: [0, 0], value: 0, bytes: 1024 },
    { op: 'launch', function: iota, grid: [1, 1, 1], block: [128, 1, 1], sharedMemBytes: 0, args: [[0, 512]] },
  ]));
  const small = addon.cudaAlloc(d.handle, 512);
  t.throws(() => addon.cudaProgramRun(program, []), { message: 'jaxon cuda: cudaProgramRun: slots must be an array of 1 buffers' });
  t.throws(() => addon.cudaProgramRun(program, [small]), {
    message: 'jaxon cuda: cudaProgramRun: slots[0] must be a buffer of at least 1024 bytes on device 0, got 512 bytes on device 0',
  });
  const ok = addon.cudaAlloc(d.handle, 1024);
  addon.cudaProgramRun(program, [ok]);
  const out = new Float32Array(await addon.cudaToHost(ok));
  t.deepEqual([...out.subarray(0, 128)], new Array(128).fill(0));
  t.deepEqual([...out.subarray(128)], Array.from({ length: 128 }, (_, i) => i));
  addon.cudaFree(small);
  addon.cudaFree(ok);
});

test.serial('fake driver: without cuDevicePrimaryCtxReset a device cannot be reset, and says to restart', (t) => {
  const d = fakeDevice();
  t.like(addon.cudaProbe(), { contextReset: false, graphs: false, graphUpdates: false });
  t.throws(() => addon.cudaDeviceReset(d.handle), {
    code: 'DEVICE_LOST',
    message: /^jaxon cuda: cudaDeviceReset: the CUDA driver .*libfakecuda\.so has no cuDevicePrimaryCtxReset_v2, so device 0 cannot be reset; restart the process to use it again$/,
  });
  t.deepEqual(addon.cudaDeviceStatus(d.handle), { lost: false, reason: '', epoch: 1, resets: 0 }); // refused before touching anything
  const b = addon.cudaFromHost(d.handle, new Float32Array([1, 2]));
  t.deepEqual(floats(addon.cudaToHostSync(b)), [1, 2]);
  addon.cudaFree(b);
});

// ---- the NVRTC cache over the fake NVRTC ----

test.serial('nvrtc cache: compiles run off the JS thread and in parallel; then memory and disk hits', async (t) => {
  const target = cudaTarget(fakeDevice().computeCapability, '12.4', [75, 80, 86, 89, 90]);
  const before = nvrtcCacheStats();
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  const names = ['k_parallel_a', 'k_parallel_b', 'k_parallel_c', 'k_parallel_d'];
  const images = await Promise.all(names.map((name) => compileCudaKernel(name, `extern "C" __global__ void ${name}() {}\n`, target)));
  const elapsed = performance.now() - started;
  clearInterval(timer);
  t.true(elapsed < 4 * 150, `4 compiles of 150 ms each took ${elapsed} ms`);
  t.true(ticks >= 5, `the event loop ran ${ticks} timer ticks while NVRTC worked`);
  t.is(nvrtcCacheStats().compiles - before.compiles, 4);
  const afterFirst = nvrtcCacheStats();
  t.deepEqual(images.map((i) => [i.kind, i.arch]), names.map(() => ['cubin', 'sm_90a']));
  t.true(new TextDecoder().decode(images[0]!.image).startsWith('FAKE-CUBIN arch=sm_90a\n'));
  // beyond libuv's 4 threads: the compile pool has one thread per CPU, at least 4 (8 here: JAXON_NVRTC_THREADS)
  const more = Array.from({ length: 8 }, (_, i) => `k_parallel_more_${i}`);
  const moreStarted = performance.now();
  await Promise.all(more.map((name) => compileCudaKernel(name, `extern "C" __global__ void ${name}() {}\n`, target)));
  const moreElapsed = performance.now() - moreStarted;
  t.true(moreElapsed < 2 * 150, `8 compiles of 150 ms each took ${moreElapsed} ms on 8 threads`);
  // The same kernel again: a memory hit; after forgetting memory: a disk hit with identical bytes.
  const again = await compileCudaKernel(names[0]!, `extern "C" __global__ void ${names[0]}() {}\n`, target);
  t.is(again, images[0]);
  clearMemoryNvrtcCache();
  const fromDisk = compileCudaKernelSync(names[0]!, `extern "C" __global__ void ${names[0]}() {}\n`, target);
  t.deepEqual(fromDisk.image, images[0]!.image);
  const after = nvrtcCacheStats();
  t.is(after.memoryHits - afterFirst.memoryHits, 1);
  t.is(after.diskHits - afterFirst.diskHits, 1);
  const dir = path.join(workDir, 'cache');
  const key = images[0]!.key;
  t.true(fs.existsSync(path.join(dir, `${key}.cubin`)) && fs.existsSync(path.join(dir, `${key}.cu`)) && fs.existsSync(path.join(dir, `${key}.json`)));
  t.like(JSON.parse(fs.readFileSync(path.join(dir, `${key}.json`), 'utf8')), {
    name: names[0], kind: 'cubin', arch: 'sm_90a', nvrtc: '12.4', options: ['--gpu-architecture=sm_90a', '-default-device', '--std=c++17'],
  });
});

test.serial('nvrtc cache: a damaged disk entry is detected by its checksum and rebuilt', async (t) => {
  const target = cudaTarget([9, 0], '12.4', [90]);
  const source = 'extern "C" __global__ void k_damaged() {}\n';
  const image = await compileCudaKernel('k_damaged', source, target);
  const file = path.join(workDir, 'cache', `${image.key}.cubin`);
  fs.writeFileSync(file, 'FAKE-CUBIN tampered');
  clearMemoryNvrtcCache();
  const before = nvrtcCacheStats();
  const rebuilt = await compileCudaKernel('k_damaged', source, target);
  const after = nvrtcCacheStats();
  t.is(after.corruptEntries - before.corruptEntries, 1);
  t.is(after.compiles - before.compiles, 1);
  t.deepEqual(rebuilt.image, image.image);
  t.deepEqual(new Uint8Array(fs.readFileSync(file)), image.image);
});

test.serial('nvrtc cache: a compile error names the kernel and carries NVRTC\'s log', async (t) => {
  const target = cudaTarget([9, 0], '12.4', [90]);
  const source = 'extern "C" __global__ void k_broken() {\n#error the renderer wrote this\n}\n';
  const error = await t.throwsAsync(compileCudaKernel('k_broken', source, target)) as Error & { code?: string; log?: string };
  t.is(error.code, 'NVRTC_ERROR_COMPILATION');
  t.is(error.log, 'k_broken.cu(2): error: #error the renderer wrote this\n\n1 error detected in the compilation of "k_broken.cu".\n');
  t.true(error.message.startsWith("jaxon cuda: NVRTC failed to compile kernel 'k_broken': nvrtcCompileProgram returned NVRTC_ERROR_COMPILATION"));
  t.true(error.message.includes('k_broken.cu(2): error: #error the renderer wrote this'));
  t.throws(() => compileCudaKernelSync('k_broken', source, target), { message: /kernel 'k_broken'.*\n.*k_broken\.cu\(2\)/ });
});

test('nvrtc cache: an NVRTC that refuses the real arch falls back to PTX for the same generation', (t) => {
  const moduleUrl = new URL('../lib/runtime/nvrtc-cache.js', import.meta.url).href;
  const script = `import { compileCudaKernel, nvrtcCacheStats } from ${JSON.stringify(moduleUrl)};
    const image = await compileCudaKernel('k_ptx', 'extern "C" __global__ void k_ptx() {}\\n', { arch: 'sm_90a', kind: 'cubin', nvrtcVersion: '12.4' });
    process.stdout.write(JSON.stringify({ kind: image.kind, arch: image.arch, head: new TextDecoder().decode(image.image.subarray(0, 25)), stats: nvrtcCacheStats() }));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, FAKE_NVRTC_REFUSE_SM: '1', JAXON_CACHE_DIR: path.join(workDir, 'cache-ptx') },
    encoding: 'utf8',
  });
  t.is(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout) as { kind: string; arch: string; head: string; stats: { ptxFallbacks: number } };
  t.like(out, { kind: 'ptx', arch: 'compute_90', head: 'FAKE-PTX arch=compute_90\n' });
  t.is(out.stats.ptxFallbacks, 1);
});

// ---- CudaBackend over the fake driver ----

test.serial('CudaBackend: transfers, memory kinds and memoryStats on a CUDA Device', async (t) => {
  const cuda = createCudaDevice(0);
  t.is(cuda.platform, 'cuda');
  t.is(cuda.deviceKind, 'Fake CUDA Device (jaxon tests)');
  t.is(createCudaDevice(0), cuda, 'one Device per ordinal');
  const backend = cuda.backend;
  t.is(backend.target.arch, 'sm_90a');
  const bytes = Uint8Array.from({ length: 10_000 }, (_, i) => i & 255);
  const buffer = backend.fromHost(bytes);
  t.true(buffer instanceof CudaBuffer);
  t.deepEqual(await backend.toHost(buffer), bytes);
  t.deepEqual(backend.toHostSync(buffer), bytes);
  const pinned = backend.devicePut(buffer, 'pinned_host');
  t.is(pinned.memoryKind, 'pinned_host');
  t.deepEqual(await backend.toHost(pinned), bytes);
  await backend.blockUntilReady(pinned);
  const stats = cuda.memoryStats();
  t.true(stats.bytesInUse >= 10_240 && stats.numAllocs >= 1 && stats.pinnedHost.bytesInUse >= 16 * KiB);
  t.deepEqual(Object.keys(stats).slice(0, 5), ['bytesInUse', 'peakBytesInUse', 'bytesLimit', 'bytesReserved', 'peakBytesReserved']);
  backend.free(buffer);
  backend.free(pinned);
  t.true(buffer.isFreed && pinned.isFreed);
  t.throws(() => backend.toHostSync(buffer), { message: 'CudaBuffer: the buffer (10000 bytes, device) was freed' });
  t.throws(() => backend.fromHost(new Uint8Array(100 * MiB)), { instanceOf: ResourceExhaustedError, message: /out of memory allocating 104857600 bytes/ });
});

test.serial('CudaBackend: a kernel that fails to load reaches the arrays it should have produced', async (t) => {
  const backend = createCudaDevice(0).backend;
  const x = aval([1000], 'float32');
  const [out] = abstractEval.exp([x], {} as never);
  const plan = lowerPrimitive('exp', [x], [out!], {} as never, 'cuda');
  const input = backend.fromHost(new Uint8Array(4000));
  const before = nvrtcCacheStats();
  const [result] = backend.execute(plan, [input], [out!]);
  // Queued behind its compile (off the JS thread): execute returned at once.
  backend.free(input);
  // The fake NVRTC compiles the renderer's source, but the fake driver has no such kernel to run.
  const error = await t.throwsAsync(backend.toHost(result!));
  t.regex(error!.message, /^jaxon cuda: cuModuleGetFunction\(\w+\) failed: CUDA_ERROR_NOT_FOUND \(named symbol not found\)$/);
  t.is(nvrtcCacheStats().compiles - before.compiles, 1);
  t.throws(() => backend.toHostSync(result!), { message: error!.message });
  backend.free(result!);
});
