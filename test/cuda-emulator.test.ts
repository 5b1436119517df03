// jaxon's emulated GPU itself (cuda/emulator/): what a real GPU would refuse
// or get wrong, it must refuse or report too. Checked in child processes
// (each selects the emulator, and its checking mode, when it loads): a
// kernel that reads shared memory before the barrier that publishes it runs
// right in one fiber order and wrong in another, which the schedule check
// reports; the same kernel with its barrier passes, and so does a program
// whose copies run beside its kernels; a kernel reading out of
// bounds of its buffer faults with the kernel, block and thread named and
// the error is sticky until the device is reset; a deadlocked block (a
// shuffle a lane never reaches) fails instead of hanging.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');

const reduceSource = (name: string, barrier: boolean) => `
extern "C" __global__ void __launch_bounds__(256) ${name}(float *out, const float *in) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  ${barrier ? '__syncthreads();' : '/* the barrier that publishes s[] is missing */'}
  for (unsigned k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
`;

/**
 * Runs a kernel on the emulated GPU in a fresh process; prints the block sums or the error. `settleMs`: the host
 * sleeps that long after the launch before reading, so a fault is already sticky when the read starts (and its
 * first driver call, allocating the pinned staging buffer, is the one that meets it).
 */
function runKernel(source: string, name: string, env: Record<string, string>, body = '', settleMs = 0): string {
  const script = `
    const { createCudaDevice } = await import(${JSON.stringify(path.join(dist, 'runtime', 'cuda.js'))});
    const { native } = await import(${JSON.stringify(path.join(dist, 'runtime', 'native.js'))});
    const { compileCudaKernelSync } = await import(${JSON.stringify(path.join(dist, 'runtime', 'nvrtc-cache.js'))});
    const device = createCudaDevice(0);
    const image = compileCudaKernelSync(${JSON.stringify(name)}, ${JSON.stringify(source)}, device.backend.target);
    const module = native().cudaModuleLoad(device.info.handle, image.image, 'test');
    const fn = native().cudaGetFunction(device.info.handle, module, ${JSON.stringify(name)}).handle;
    const input = Float32Array.from({ length: 4 * 256 }, (_, i) => (i % 7) + 1);
    const x = device.backend.fromHost(new Uint8Array(input.buffer));
    const out = device.backend.fromHost(new Uint8Array(16));
    try {
      native().cudaLaunch(fn, [4, 1, 1], [256, 1, 1], 0, [out.handle, x.handle]);
      if (${settleMs} > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${settleMs});
      console.log(Array.from(new Float32Array(device.backend.toHostSync(out).buffer)).join(','));
    } catch (e) { console.log('ERROR ' + e.message); }
    ${body}`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR')) delete base[k];
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...base, JAXON_CUDA_EMULATOR: '1', ...env }, encoding: 'utf8', timeout: 120_000,
  }).trim();
}

// each block sums 256 values of (i % 7) + 1
const expected = [0, 1, 2, 3].map((b) => Array.from({ length: 256 }, (_, t) => ((b * 256 + t) % 7) + 1).reduce((a, c) => a + c, 0)).join(',');

test('the schedule check passes a kernel whose barriers are all there', (t) => {
  t.is(runKernel(reduceSource('jaxon_emu_reduce_ok', true), 'jaxon_emu_reduce_ok', { JAXON_CUDA_EMULATOR_CHECK: 'schedule' }), expected);
});

test('the schedule check reports a kernel missing a __syncthreads', (t) => {
  const out = runKernel(reduceSource('jaxon_emu_reduce_racy', false), 'jaxon_emu_reduce_racy', { JAXON_CUDA_EMULATOR_CHECK: 'schedule' });
  t.regex(out, /^ERROR .*CUDA_ERROR_LAUNCH_FAILED.*kernel 'jaxon_emu_reduce_racy': its result depends on the order the threads of a block run in \(a missing __syncthreads/);
});

// the schedule check snapshots and compares whole allocations: with buffers carved from shared segments it compared
// buffers that copies on other streams were writing meanwhile, and failed this program's 1-element copy kernel
test('the schedule check compares only the launch\'s own buffers: eager random normals and sums pass it', (t) => {
  const script = `
    const jax = await import(${JSON.stringify(path.join(dist, 'index.js'))});
    const { random, numpy: jnp } = jax;
    const x = random.normal(random.key(1), [4, 12, 12, 8]);
    const w = random.normal(random.key(2), [3, 3, 8, 8]);
    console.log(Number.isFinite(jnp.sum(x).item() + jnp.sum(w).item()) ? 'finite' : 'not finite');`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR') || k === 'JAXON_PLATFORMS') delete base[k];
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...base, JAXON_CUDA_EMULATOR: '1', JAXON_PLATFORMS: 'cuda', JAXON_CUDA_EMULATOR_CHECK: 'schedule' }, encoding: 'utf8', timeout: 300_000,
  }).trim();
  t.is(out.split('\n').pop(), 'finite');
});

test('an out-of-bounds read faults with the kernel, block and thread named, and the error is sticky until a reset', (t) => {
  const source = `
extern "C" __global__ void jaxon_emu_wild(float *out, const float *in) {
  const float *far = in + (threadIdx.x == 3 && blockIdx.x == 2 ? (1ull << 40) : 0);
  out[blockIdx.x] = far[blockIdx.x * 256 + threadIdx.x];
}`;
  const after = `
    try { native().cudaFromHost(device.info.handle, new Uint8Array(4)); console.log('allocated after the fault'); } catch (e) { console.log('STICKY ' + e.message); }
    const fresh = device.backend.fromHost(new Uint8Array([7])); // the backend's next use resets the device (cuda-recovery.test.ts)
    console.log('after the reset ' + device.backend.toHostSync(fresh)[0]);`;
  // read at once, and after the fault has surely happened (then the read's first driver call, a pinned
  // allocation, meets the sticky error: the device must count as lost from there too, so the next use resets it)
  for (const settleMs of [0, 300]) {
    const [first, second, third] = runKernel(source, 'jaxon_emu_wild', {}, after, settleMs).split('\n');
    t.regex(first!, /^ERROR .*CUDA_ERROR_LAUNCH_FAILED \(unspecified launch failure: kernel 'jaxon_emu_wild': block \(2,0,0\), thread \(3,0,0\): illegal memory read at address 0x[0-9a-f]+ \(SIGSEGV\)\)/);
    t.regex(second!, /^STICKY .*CUDA_ERROR_LAUNCH_FAILED/);
    t.is(third, 'after the reset 7', `read after ${settleMs} ms`);
  }
});

test('a warp shuffle that a lane never reaches is a deadlock the launch reports, not a hang', (t) => {
  const source = `
extern "C" __global__ void jaxon_emu_stuck(float *out, const float *in) {
  float v = in[blockIdx.x * 256 + threadIdx.x];
  if (threadIdx.x % 32 != 5) v += __shfl_xor_sync(0xffffffffu, v, 1); // lane 5 of each warp never arrives
  out[blockIdx.x] = v;
}`;
  const out = runKernel(source, 'jaxon_emu_stuck', {});
  t.regex(out, /^ERROR .*kernel 'jaxon_emu_stuck': block \(\d,0,0\), thread \(\d+,0,0\): deadlock: 0 thread\(s\) wait at __syncthreads and 248 at a warp collective/);
});

test('a copy into a block reused from the compute stream waits for the kernels still reading its previous owner', (t) => {
  const source = `
extern "C" __global__ void jaxon_emu_slow_read(float *out, const float *a) {
  unsigned long long start = jx_emu_globaltimer();
  while (jx_emu_globaltimer() - start < 300000000ull) {}  // 300 ms, then read a (one thread: fibers take turns)
  for (int i = 0; i < 1024; i++) out[i] = a[i];
}`;
  const script = `
    const { createCudaDevice } = await import(${JSON.stringify(path.join(dist, 'runtime', 'cuda.js'))});
    const { native } = await import(${JSON.stringify(path.join(dist, 'runtime', 'native.js'))});
    const { compileCudaKernelSync } = await import(${JSON.stringify(path.join(dist, 'runtime', 'nvrtc-cache.js'))});
    const device = createCudaDevice(0);
    const be = device.backend;
    const image = compileCudaKernelSync('jaxon_emu_slow_read', ${JSON.stringify(source)}, be.target);
    const module = native().cudaModuleLoad(device.info.handle, image.image, 'test');
    const fn = native().cudaGetFunction(device.info.handle, module, 'jaxon_emu_slow_read').handle;
    const n = 3 * 1024 * 1024 + 1024; // a size of its own, so the next block of this size is a's
    const a = be.allocate(4 * n); // from the compute stream's pool, written there
    native().cudaMemset(a.handle, 0x3f); // every float 0x3f3f3f3f
    const out = be.fromHost(new Uint8Array(4 * 1024));
    be.blockUntilReadySync(out);
    const where = native().cudaBufferInfo(a.handle).pointer;
    native().cudaLaunch(fn, [1, 1, 1], [1, 1, 1], 0, [out.handle, a.handle]);
    be.free(a); // back to the compute stream's pool while the kernel still has to read it
    const pinned = be.fromHost(new Uint8Array(new Float32Array(n).fill(2).buffer), 'pinned_host');
    const b = be.devicePut(pinned, 'device'); // a host-to-device copy into a fresh block: a's
    const values = new Float32Array(be.toHostSync(out).buffer); // the kernel's reads of a
    console.log(native().cudaBufferInfo(b.handle).pointer === where, values.every((v) => v === new Float32Array(new Uint32Array([0x3f3f3f3f]).buffer)[0]));`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR')) delete base[k];
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...base, JAXON_CUDA_EMULATOR: '1' }, encoding: 'utf8', timeout: 120_000 }).trim();
  t.is(out, 'true true', 'the copy reused the block and the kernel still read the old values');
});

test('a program waits for the copies that fill its arguments, even when an earlier program of the same call did not use them', (t) => {
  // the while loop's cond reads n, which jnp.array copies to the device; the call's first program (a kernel
  // writing the loop's start) does not touch n, and used to mark it written, dropping the copy's event
  const script = `
    const jax = await import(${JSON.stringify(path.join(dist, 'index.js'))});
    const { numpy: jnp, lax } = jax;
    const f = jax.jit((n, v) => lax.foriLoop(2, n, (i, x) => jnp.add(jnp.multiply(x, 2), i), v));
    const got = [];
    for (let k = 0; k < 12; k++) got.push(f(jnp.array(k % 2 ? 4 : 7, { dtype: 'int32' }), jnp.array(1, { dtype: 'float32' })).item());
    console.log(got.join(','));`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR') || k === 'JAXON_PLATFORMS') delete base[k];
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...base, JAXON_CUDA_EMULATOR: '1', JAXON_CUDA_EMULATOR_COPY_DELAY_US: '3000' }, encoding: 'utf8', timeout: 120_000,
  }).trim();
  t.is(out, Array.from({ length: 12 }, (_, k) => (k % 2 ? 11 : 120)).join(','));
});

test('the emulated NVRTC starts its compiler with the environment the emulator loaded with: process.env changes after it do not reach it', (t) => {
  // compiles run on the addon's threads while JS changes process.env: setenv / unsetenv move and free environ, and a
  // compiler spawned from the live environ failed ("cannot run g++: Bad address") while a loop of env writes ran;
  // here a PATH without the compiler and a compiler that does not exist, set after the emulator loaded, are not used
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-emulator-env-'));
  const script = `
    const jax = await import(${JSON.stringify(path.join(dist, 'index.js'))});
    const jnp = jax.numpy;
    console.log(Array.from(jnp.cos(jnp.zeros([4])).dataSync()).join(','));
    process.env.PATH = '/nonexistent';
    process.env.JAXON_CUDA_EMULATOR_CXX = 'no-such-compiler';
    try { console.log(Array.from(jnp.exp(jnp.zeros([4])).dataSync()).join(',')); } catch (e) { console.log(e.message.split('\\n').join(' | ')); }`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR') || k === 'JAXON_PLATFORMS' || k === 'JAXON_CACHE_DIR') delete base[k];
  try {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...base, JAXON_CUDA_EMULATOR: '1', JAXON_PLATFORMS: 'cuda', JAXON_CACHE_DIR: cache }, encoding: 'utf8', timeout: 120_000,
    }).trim();
    t.is(out, '1,1,1,1\n1,1,1,1');
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
});

test('static and dynamic shared memory together past 48 KiB are opted into; past the device limit they are refused with both sizes', (t) => {
  // 40 KiB static + 16 KiB dynamic: a launch without cuFuncSetAttribute would fail, as on a GPU
  const source = `
extern "C" __global__ void __launch_bounds__(256) jaxon_emu_shared(float *out, const float *in) {
  __shared__ float fixed[10240];
  extern __shared__ float extra[];
  unsigned t = threadIdx.x;
  for (unsigned i = t; i < 10240; i += 256) fixed[i] = in[i % 1024];
  for (unsigned i = t; i < 4096; i += 256) extra[i] = 2.0f * in[i % 1024];
  __syncthreads();
  if (t == 0) { float s = 0; for (unsigned i = 0; i < 10240; i++) s += fixed[i]; for (unsigned i = 0; i < 4096; i++) s += extra[i]; out[0] = s; }
}`;
  const script = `
    const { createCudaDevice } = await import(${JSON.stringify(path.join(dist, 'runtime', 'cuda.js'))});
    const { native } = await import(${JSON.stringify(path.join(dist, 'runtime', 'native.js'))});
    const { compileCudaKernelSync } = await import(${JSON.stringify(path.join(dist, 'runtime', 'nvrtc-cache.js'))});
    const device = createCudaDevice(0);
    const image = compileCudaKernelSync('jaxon_emu_shared', ${JSON.stringify(source)}, device.backend.target);
    const fn = native().cudaGetFunction(device.info.handle, native().cudaModuleLoad(device.info.handle, image.image, 'test'), 'jaxon_emu_shared').handle;
    const x = device.backend.fromHost(new Uint8Array(new Float32Array(1024).fill(1).buffer));
    const out = device.backend.fromHost(new Uint8Array(4));
    native().cudaLaunch(fn, [1, 1, 1], [256, 1, 1], 16384, [out.handle, x.handle]);
    console.log(new Float32Array(device.backend.toHostSync(out).buffer)[0]);
    try { native().cudaLaunch(fn, [1, 1, 1], [256, 1, 1], 200 * 1024, [out.handle, x.handle]); } catch (e) { console.log(e.message); }`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR')) delete base[k];
  const [sum, refused] = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...base, JAXON_CUDA_EMULATOR: '1' }, encoding: 'utf8', timeout: 120_000 }).trim().split('\n');
  t.is(sum, String(10240 + 2 * 4096));
  t.is(refused, "jaxon cuda: cudaLaunch: kernel 'jaxon_emu_shared' asks for 204800 bytes of dynamic shared memory beside its 40960 static ones; jaxon emulated GPU (sm_90, runs on the host CPU) allows 232448 in all");
});

test('a kernel that never ends is stopped by the watchdog and reported, not a hang', (t) => {
  const source = `
extern "C" __global__ void jaxon_emu_forever(float *out, const float *in) {
  volatile float x = in[0];
  while (x == x) {}  // never ends (in[0] is a number)
  out[0] = x;
}`;
  const started = Date.now();
  const out = runKernel(source, 'jaxon_emu_forever', { JAXON_CUDA_EMULATOR_WATCHDOG_S: '1' });
  t.regex(out, /^ERROR .*CUDA_ERROR_LAUNCH_FAILED \(unspecified launch failure: kernel 'jaxon_emu_forever': block \(\d,0,0\), thread \(\d+,0,0\): the block ran longer than the watchdog's 1 s/);
  t.true(Date.now() - started < 60_000);
});

test('lanes of a warp at different tensor-core collectives, or an ldmatrix row address off 16 bytes, fail the launch', (t) => {
  const divergent = `#include "jaxon_cuda.h"
#include "jaxon_mma.h"
extern "C" __global__ void jaxon_emu_divergent(float *out, const float *in) {
  __shared__ __align__(16) jx_u16 s[256 * 8];
  jx_u32 r[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  float d[4] = {0, 0, 0, 0};
  if (threadIdx.x % 32 < 16) jx_mma_m16n8k16_bf16(d, r, b);  // half the warp at an mma, half at an ldmatrix
  else jx_ldmatrix_x4(r, s + threadIdx.x * 8);
  out[blockIdx.x] = d[0] + (float)r[0];
}`;
  t.regex(runKernel(divergent, 'jaxon_emu_divergent', {}), /^ERROR .*kernel 'jaxon_emu_divergent': block \(\d,0,0\), thread \(\d+,0,0\): lanes of warp \d+ execute different warp collectives together: /);
  const misaligned = `#include "jaxon_cuda.h"
#include "jaxon_mma.h"
extern "C" __global__ void jaxon_emu_misaligned(float *out, const float *in) {
  __shared__ __align__(16) jx_u16 s[256 * 8 + 8];
  jx_u32 r[4];
  jx_ldmatrix_x4(r, s + threadIdx.x * 8 + (threadIdx.x % 32 == 3 ? 4 : 0));
  out[blockIdx.x] = (float)r[0];
}`;
  t.regex(runKernel(misaligned, 'jaxon_emu_misaligned', {}), /^ERROR .*kernel 'jaxon_emu_misaligned': .*ldmatrix: lane 3's row address 0x[0-9a-f]+ is not 16-byte aligned/);
});

test('a block whose threads all wait on an mbarrier nobody completes fails as a livelock, not a hang', (t) => {
  const source = `#include "jaxon_cuda.h"
#include "jaxon_mma.h"
extern "C" __global__ void jaxon_emu_livelock(float *out, const float *in) {
  extern __shared__ __align__(16) unsigned char smem[];
  jx_u64 *bar = (jx_u64 *)smem;
  if (threadIdx.x == 0) jx_mbarrier_init(bar, 1000);  // 1000 arrivals expected, 256 threads
  __syncthreads();
  jx_mbarrier_arrive(bar);
  jx_mbarrier_wait(bar, 0);
  out[blockIdx.x] = in[0];
}`;
  const script = `
    const { createCudaDevice } = await import(${JSON.stringify(path.join(dist, 'runtime', 'cuda.js'))});
    const { native } = await import(${JSON.stringify(path.join(dist, 'runtime', 'native.js'))});
    const { compileCudaKernelSync } = await import(${JSON.stringify(path.join(dist, 'runtime', 'nvrtc-cache.js'))});
    const device = createCudaDevice(0);
    const image = compileCudaKernelSync('jaxon_emu_livelock', ${JSON.stringify(source)}, device.backend.target);
    const fn = native().cudaGetFunction(device.info.handle, native().cudaModuleLoad(device.info.handle, image.image, 'test'), 'jaxon_emu_livelock').handle;
    const x = device.backend.fromHost(new Uint8Array(16));
    const out = device.backend.fromHost(new Uint8Array(16));
    try { native().cudaLaunch(fn, [1, 1, 1], [256, 1, 1], 64, [out.handle, x.handle]); device.backend.toHostSync(out); console.log('no error'); } catch (e) { console.log('ERROR ' + e.message); }`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR')) delete base[k];
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...base, JAXON_CUDA_EMULATOR: '1' }, encoding: 'utf8', timeout: 120_000 }).trim();
  t.regex(out, /^ERROR .*kernel 'jaxon_emu_livelock': .*livelock: every thread of the block spins/);
});
