// On a real GPU: a kernel that reads a wild address loses the context (CUDA's sticky error); jaxon's native
// runtime rejects what waits, refuses new work, resets the device (cuDevicePrimaryCtxReset), says what went
// with the old context, and computes right afterwards. The same steps as test/cuda-recovery.test.ts's native
// test, which runs them on the emulated GPU. Then a jitted function and eager ops on the reset device.
// Run from the project root after `npm run build`: node bench/gpu/recovery-check.mjs [--settle-ms N]
// (--settle-ms: sleep N ms after the wild launch, so the fault has happened before the read is queued).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'lib');
const { createCudaDevice } = await import(path.join(dist, 'runtime', 'cuda.js'));
const { native } = await import(path.join(dist, 'runtime', 'native.js'));
const { compileCudaKernelSync } = await import(path.join(dist, 'runtime', 'nvrtc-cache.js'));
const device = createCudaDevice(0);
const h = device.info.handle;
const source = `
extern "C" __global__ void jx_recovery_wild(float *out, const float *in) {
  const float *far = in + (threadIdx.x == 3 && blockIdx.x == 2 ? (1ull << 40) : 0);
  out[blockIdx.x] = far[blockIdx.x * 256 + threadIdx.x];
}
extern "C" __global__ void jx_recovery_inc(float *out, const float *in) { out[threadIdx.x] = in[threadIdx.x] + 1.0f; }`;
const image = compileCudaKernelSync('jx_recovery_test', source, device.backend.target);
const load = () => {
  const mod = native().cudaModuleLoad(h, image.image, 'test');
  return [native().cudaGetFunction(h, mod, 'jx_recovery_wild').handle, native().cudaGetFunction(h, mod, 'jx_recovery_inc').handle];
};
const say = (what, line) => console.log(`${what.padEnd(10)} ${line}`);
const [wild, inc] = load();
const program = native().cudaProgramCreate(h, { slotBytes: [16, 16], arenaBytes: 0, events: 0, graph: false,
  ops: [{ op: 'launch', function: inc, grid: [1, 1, 1], block: [4, 1, 1], sharedMemBytes: 0, args: [[0, 0], [1, 0]] }] });
const x = native().cudaFromHost(h, new Float32Array(1024).fill(3));
const out = native().cudaAlloc(h, 4096);
const pinned = native().cudaFromHost(h, new Float32Array([5, 6, 7, 8]), 'pinned_host');
const t0 = performance.now();
native().cudaLaunch(wild, [4, 1, 1], [256, 1, 1], 0, [out, x]);
const settle = process.argv.indexOf('--settle-ms');
if (settle > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.argv[settle + 1]));
say('waiting', await native().cudaToHost(out).then(() => 'resolved (WRONG: the wild read should fail)', (e) => `${e.code}: ${e.message}`));
say('lost', JSON.stringify(native().cudaDeviceStatus(h)));
try { native().cudaAlloc(h, 16); say('refused', 'allocated (WRONG)'); } catch (e) { say('refused', `${e.code}: ${e.message}`); }
const r0 = performance.now();
say('reset', `epoch ${native().cudaDeviceReset(h)} in ${(performance.now() - r0).toFixed(1)} ms`);
for (const [what, use] of [['buffer', () => native().cudaToHostSync(x)], ['kernel', () => native().cudaLaunch(inc, [1, 1, 1], [4, 1, 1], 0, [out, x])],
                           ['program', () => native().cudaProgramRun(program, [out, x])]]) {
  try { use(); say(what, 'used (WRONG: it went with the old context)'); } catch (e) { say(what, `${e.code}: ${e.message}`); }
}
native().cudaFree(x); native().cudaFree(out); native().cudaFree(pinned);
const stats = native().cudaMemoryStats(h);
say('in use', `${stats.bytesInUse} ${stats.pinnedHost.bytesInUse} ${stats.bytesReportedToV8}`);
const [, inc2] = load();
const a = native().cudaFromHost(h, new Float32Array([1, 2, 3, 4])), b = native().cudaAlloc(h, 16);
native().cudaLaunch(inc2, [1, 1, 1], [4, 1, 1], 0, [b, a]);
say('after', `${Array.from(new Float32Array(await native().cudaToHost(b))).join(',')} (expected 2,3,4,5)`);
say('status', JSON.stringify(native().cudaDeviceStatus(h)));
say('total', `${(performance.now() - t0).toFixed(1)} ms from the wild launch to a working device`);
