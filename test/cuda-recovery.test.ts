// After a CUDA device's state is lost (a kernel faults or hangs: CUDA's
// sticky errors), the process goes on: checked on jaxon's emulated GPU in
// child processes, where JAXON_CUDA_EMULATOR_MUTATE makes the first launch
// of one of jaxon's own kernels really fault (wild pointers) or really hang
// (stopped by the watchdog). The call that meets the failure raises
// DeviceLostError naming the kernel and the jitted function; arrays made
// before raise DeviceLostError when used and can still be disposed; the
// device is reset on its next use, and the same jitted function, a new one
// and eager ops compute the right values on it; the CPU device is untouched.
// The native runtime is checked underneath: what waits is rejected, what was
// made before the reset is stale, and cudaDeviceReset brings back a working
// device; and DeviceHealth's messages and generations on their own.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeviceLostError } from '../lib/core/errors.js';
import { DeviceHealth } from '../lib/runtime/cuda-health.js';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');
const module = (name: string) => JSON.stringify(path.join(dist, ...name.split('/')));

function run(script: string, env: Record<string, string>): string[] {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA') || k === 'JAXON_PLATFORMS') delete base[k];
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...base, JAXON_CUDA_EMULATOR: '1', ...env }, encoding: 'utf8', timeout: 180_000,
  }).trim().split('\n');
}

// f's kernel is an elementwise sin (ew_sin_...), the kernel the mutation picks; `read` is 'dataSync' or 'data'.
const jitScript = (read: 'dataSync' | 'data') => `
  const jax = await import(${module('index.js')});
  const jnp = jax.numpy;
  const show = (values) => Array.from(values, (v) => Math.round(v * 1e4) / 1e4).join(',');
  const cpu = jax.devicePut(jnp.array([1, 2, 3]), jax.devices('cpu')[0]);
  const before = jnp.array([1, 2, 3, 4]);
  const f = jax.jit(function f(x) { return jnp.sin(jnp.multiply(x, 2)); });
  try {
    console.log('f ' + show(await f(jnp.arange(4)).${read}()));
  } catch (e) {
    console.log(e.name + ': ' + e.message);
  }
  try { before.dataSync(); console.log('read an array made before'); } catch (e) { console.log(e.name + ': ' + e.message); }
  before.dispose();
  const g = jax.jit(function g(a) { return jnp.add(jnp.multiply(a, 3), 1); });
  console.log('g ' + show(g(jnp.array([1, 2, 3])).dataSync()));
  console.log('f ' + show(await f(jnp.arange(4)).${read}()));
  console.log('eager ' + show(jnp.cumsum(jnp.exp(jnp.array([0, 1, 2]))).dataSync()));
  console.log('cpu ' + show(jnp.multiply(cpu, 2).dataSync()) + ' ' + jnp.multiply(cpu, 2).device);`;

const fAfter = `f ${[0, 1, 2, 3].map((v) => Math.round(Math.sin(2 * v) * 1e4) / 1e4).join(',')}`;
const eagerAfter = `eager ${[1, 1 + Math.E, 1 + Math.E + Math.exp(2)].map((v) => Math.round(Math.fround(v) * 1e4) / 1e4).join(',')}`;

for (const graphs of ['0', '1']) {
  test(`a jitted program whose kernel faults raises DeviceLostError; old arrays raise it; the device then computes right (graphs ${graphs})`, (t) => {
    const [failure, old, g, f, eager, cpu] = run(jitScript('dataSync'), { JAXON_CUDA_EMULATOR_MUTATE: 'fault:ew_sin', JAXON_CUDA_GRAPHS: graphs });
    t.regex(failure!, /^DeviceLostError: CUDADevice\(id=0\) failed: CUDA_ERROR_LAUNCH_FAILED \(unspecified launch failure: kernel 'ew_sin_\w+': block \(\d+,0,0\), thread \(\d+,0,0\): illegal memory (read|write) at address 0x[0-9a-f]+ \(SIGSEGV\)\) while running work queued since the last completed wait: .*jax\.jit\(f\)\. The device's state is lost: work queued on it did not run, and every array on it is now invalid \(using one raises DeviceLostError\)\. jaxon resets the device on its next use/);
    t.regex(old!, /^DeviceLostError: CUDADevice\(id=0\): this array's buffer \(16 bytes, device\) is invalid: the device's state was lost \(CUDA_ERROR_LAUNCH_FAILED .*kernel 'ew_sin_\w+'.*\)\. Arrays on CUDADevice\(id=0\) from before the failure are gone; recompute them/);
    t.is(g, 'g 4,7,10');
    t.is(f, fAfter);
    t.is(eager, eagerAfter);
    t.is(cpu, 'cpu 2,4,6 CPUDevice(id=0)');
  });
}

test('a kernel that never ends is stopped by the watchdog; awaiting its result rejects with DeviceLostError, then the device works', (t) => {
  const started = Date.now();
  const [failure, old, g, f, eager, cpu] = run(jitScript('data'), { JAXON_CUDA_EMULATOR_MUTATE: 'hang:ew_sin', JAXON_CUDA_EMULATOR_WATCHDOG_S: '1' });
  t.regex(failure!, /^DeviceLostError: CUDADevice\(id=0\) failed: CUDA_ERROR_LAUNCH_FAILED \(unspecified launch failure: kernel 'ew_sin_\w+': block \(\d+,0,0\), thread \(\d+,0,0\): the block ran longer than the watchdog's 1 s/);
  t.regex(old!, /^DeviceLostError: CUDADevice\(id=0\): this array's buffer \(16 bytes, device\) is invalid/);
  t.is(g, 'g 4,7,10');
  t.is(f, fAfter);
  t.is(eager, eagerAfter);
  t.is(cpu, 'cpu 2,4,6 CPUDevice(id=0)');
  t.true(Date.now() - started < 120_000);
});

// bench/gpu/recovery-check.mjs is the same check for a real GPU (where NVIDIA's driver refuses the reset): here it
// runs on the emulated GPU, whose driver allows it, and every step is asserted.
// Read at once, and after the fault has surely happened (then queueing the read meets the loss: it must reject the
// same way a wait does, not throw).
for (const settleMs of [0, 300]) {
test(`the native runtime after a lost context: waits reject, what was made before is stale, a reset brings the device back (read after ${settleMs} ms)`, (t) => {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA') || k === 'JAXON_PLATFORMS') delete base[k];
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'gpu', 'recovery-check.mjs');
  const out = execFileSync(process.execPath, [script, '--settle-ms', String(settleMs)], { env: { ...base, JAXON_CUDA_EMULATOR: '1' }, encoding: 'utf8', timeout: 180_000 });
  // each line: a label padded to 10 characters, then what happened
  const said = new Map(out.trim().split('\n').map((line) => [line.slice(0, 10).trim(), line.slice(11)]));
  const why = "CUDA_ERROR_LAUNCH_FAILED \\(unspecified launch failure: kernel 'jx_recovery_wild': block \\(2,0,0\\), thread \\(3,0,0\\): illegal memory read at address 0x[0-9a-f]+ \\(SIGSEGV\\)\\)";
  t.regex(said.get('waiting')!, new RegExp(`^CUDA_ERROR_LAUNCH_FAILED: jaxon cuda: device 0 failed: ${why}$`));
  t.like(JSON.parse(said.get('lost')!), { lost: true, epoch: 1, resets: 0 });
  t.regex(said.get('refused')!, new RegExp(`^DEVICE_LOST: jaxon cuda: device 0 is lost: ${why}; every use fails until it is reset \\(cudaDeviceReset\\)$`));
  t.regex(said.get('reset')!, /^epoch 2 in [0-9.]+ ms$/);
  const stale = (fn: string, what: string) => new RegExp(`^DEVICE_LOST: jaxon cuda: ${fn}: ${what} belonged to device 0's context before its reset \\(after ${why}\\): it went with that context$`);
  t.regex(said.get('buffer')!, stale('cudaToHostSync', 'buffer'));
  t.regex(said.get('kernel')!, stale('cudaLaunch', "kernel 'jx_recovery_inc'"));
  t.regex(said.get('program')!, stale('cudaProgramRun', 'program'));
  t.is(said.get('in use'), '0 0 0');
  t.is(said.get('after'), '2,3,4,5 (expected 2,3,4,5)');
  t.like(JSON.parse(said.get('status')!), { lost: false, epoch: 2, resets: 1 });
});
}

test('DeviceHealth: what a failure names, which generations are gone, and a reset that fails for good', (t) => {
  const health = new DeviceHealth('CUDADevice(id=0)');
  t.is(health.goneSince(1, 'x'), undefined);
  for (let i = 0; i < 8; i++) health.noteWork(`jax.jit(f${i})`);
  health.noteWork('jax.jit(f7)'); // a repeat is listed once
  const failure = health.failed('CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)');
  t.true(failure instanceof DeviceLostError);
  t.regex(failure.message, /^CUDADevice\(id=0\) failed: CUDA_ERROR_ILLEGAL_ADDRESS \(an illegal memory access was encountered\) while running work queued since the last completed wait: 2 more, then jax\.jit\(f2\), jax\.jit\(f3\), jax\.jit\(f4\), jax\.jit\(f5\), jax\.jit\(f6\), jax\.jit\(f7\)\. /);
  // a real GPU's driver (not resettable): the messages say to restart, as an H100 required (bench/gpu/recovery-check.mjs)
  t.regex(failure.message, /\. NVIDIA's driver cannot recover from this in the same process .*: restart the process to use the device again\. Arrays on other devices \(the CPU\) are unaffected; recompute/);
  t.regex(health.goneSince(1, 'this array')!.message, /^CUDADevice\(id=0\): this array is invalid: the device's state was lost \(CUDA_ERROR_ILLEGAL_ADDRESS .*\)\. .*recompute them \(after restarting the process: the driver cannot reset this device\)\.$/);
  const emulated = new DeviceHealth('CUDADevice(id=0)', true);
  t.regex(emulated.failed('CUDA_ERROR_LAUNCH_FAILED (y)').message, /jaxon resets the device on its next use \(this driver allows it\), so later work runs on a fresh device; recompute/);
  t.regex(emulated.goneSince(1, 'this array')!.message, /recompute them \(the device is reset on its next use\)\.$/);
  health.resetDone();
  t.is(health.generation, 2);
  t.is(health.lost, undefined);
  t.is(health.goneSince(2, 'x'), undefined);
  t.regex(health.goneSince(1, 'this array')!.message, /^CUDADevice\(id=0\): this array is invalid: it was made before the device's state was lost \(CUDA_ERROR_ILLEGAL_ADDRESS .*\) and the device was reset; recompute it\.$/);
  t.regex(health.failed('CUDA_ERROR_LAUNCH_FAILED (x)').message, /failed: CUDA_ERROR_LAUNCH_FAILED \(x\)\. The device's state is lost/); // nothing queued since the reset
  const refused = health.resetFailed(new Error('cuDevicePrimaryCtxReset_v2 failed: CUDA_ERROR_UNKNOWN'));
  t.is(refused.message, 'CUDADevice(id=0) is lost (CUDA_ERROR_LAUNCH_FAILED (x)) and could not be reset: cuDevicePrimaryCtxReset_v2 failed: CUDA_ERROR_UNKNOWN. Arrays on other devices (the CPU) still work; save what you need from them and restart the process to use CUDADevice(id=0) again.');
  t.throws(() => health.checkRecoverable(), { instanceOf: DeviceLostError, message: refused.message });
});
