// The emulated GPU's address check (JAXON_CUDA_EMULATOR_CHECK=address):
// kernels are built with AddressSanitizer and every device buffer is its own
// exact-size allocation (the caching allocator stops carving segments), so
// a kernel reading one element past its input is reported with the kernel's
// source line and the block and thread that read it, as a launch failure,
// while the same kernel reading in bounds passes. The process must start
// with the ASan runtime preloaded; the test runs the kernels in such a
// child (skipped where the compiler has no libasan).
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');
let libasan = '';
try {
  libasan = execFileSync('g++', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
} catch {
  libasan = '';
}
const available = libasan.startsWith('/') && existsSync(libasan);

const source = (name: string, past: number) => `
extern "C" __global__ void __launch_bounds__(256) ${name}(float *out, const float *in) {
  unsigned i = blockIdx.x * 256 + threadIdx.x;
  if (i >= 1001) return;
  float v = in[i];
  if (i == 1000) v += in[i + ${past}]; // the last element, or the one after it
  out[i] = v;
}
`;

/** A warp's mma.sync of all-ones bf16 operands onto accumulators of 1: each lane's four sums are 17. */
const mmaSource = (name: string) => `#include "jaxon_cuda.h"
#include "jaxon_mma.h"
extern "C" __global__ void __launch_bounds__(32) ${name}(float *out, const float *in) {
  const jx_u32 a[4] = {0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u}, b[2] = {0x3f803f80u, 0x3f803f80u};
  float d[4] = {in[0], in[0], in[0], in[0]};
  jx_mma_m16n8k16_bf16(d, a, b);
  out[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
}
`;

/** Runs kernel `name` of `text` under the address check in a child with the ASan runtime: 'ok <out[last]>' or 'ERROR <message>'. */
function runChecked(name: string, text: string, grid: number, block: number, last: number): string {
  const script = `
    const { createCudaDevice } = await import(${JSON.stringify(path.join(dist, 'runtime', 'cuda.js'))});
    const { native } = await import(${JSON.stringify(path.join(dist, 'runtime', 'native.js'))});
    const { compileCudaKernelSync } = await import(${JSON.stringify(path.join(dist, 'runtime', 'nvrtc-cache.js'))});
    const device = createCudaDevice(0);
    const image = compileCudaKernelSync(${JSON.stringify(name)}, ${JSON.stringify(text)}, device.backend.target);
    const fn = native().cudaGetFunction(device.info.handle, native().cudaModuleLoad(device.info.handle, image.image, 'test'), ${JSON.stringify(name)}).handle;
    const x = device.backend.fromHost(new Uint8Array(new Float32Array(1001).fill(1).buffer));
    const out = device.backend.fromHost(new Uint8Array(4 * 1001));
    try {
      native().cudaLaunch(fn, [${grid}, 1, 1], [${block}, 1, 1], 0, [out.handle, x.handle]);
      console.log('ok ' + new Float32Array(device.backend.toHostSync(out).buffer)[${last}]);
    } catch (e) { console.log('ERROR ' + e.message); }`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR')) delete base[k];
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...base, JAXON_CUDA_EMULATOR: '1', JAXON_CUDA_EMULATOR_CHECK: 'address', LD_PRELOAD: libasan, ASAN_OPTIONS: 'detect_leaks=0:halt_on_error=0' },
    encoding: 'utf8', timeout: 180_000,
  });
  return `${result.stdout}`.trim() || `no output; stderr: ${result.stderr}`;
}

if (!available) {
  test('the address check (skipped)', (t) => {
    t.log(`skipped: g++ has no libasan.so here (${libasan || 'g++ -print-file-name failed'})`);
    t.pass();
  });
} else {
  test('the address check passes a kernel reading in bounds', (t) => {
    t.is(runChecked('jaxon_emu_in_bounds', source('jaxon_emu_in_bounds', 0), 4, 256, 1000), 'ok 2'); // 1024 threads: the last 23 return
  });

  // each lane of a warp collective reads what the others published after they have returned from publishing: the
  // record each lane publishes must outlive that (it was a dead stack slot, reported as stack-use-after-scope)
  test('the address check passes a warp collective (mma.sync): no lane reads another lane\'s dead stack', (t) => {
    t.is(runChecked('jaxon_emu_mma_checked', mmaSource('jaxon_emu_mma_checked'), 1, 32, 31), 'ok 68');
  });

  test('the address check reports a read one element past a buffer, at its line, with the block and thread', (t) => {
    const out = runChecked('jaxon_emu_past_end', source('jaxon_emu_past_end', 1), 4, 256, 1000);
    t.regex(out, /^ERROR .*CUDA_ERROR_LAUNCH_FAILED \(unspecified launch failure: kernel 'jaxon_emu_past_end': block \(3,0,0\), thread \(232,0,0\): AddressSanitizer:/);
    t.regex(out, /heap-buffer-overflow/);
    t.regex(out, /READ of size 4/);
    t.regex(out, /jaxon_emu_past_end\.cu:6/, 'the report names the source line of the read');
  });
}
