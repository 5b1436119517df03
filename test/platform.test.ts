// The platform the suite runs on, and platform selection as in JAX: the
// CUDA device is the default where a GPU (or jaxon's emulated one) and
// NVRTC are found, JAXON_PLATFORMS chooses like JAX_PLATFORMS, and
// environmentInfo says which platform runs and why in one line. `npm test`
// runs the suite on the CPU and on the emulated GPU (JAXON_TEST_PLATFORM=cuda);
// `npm run test:gpu` runs it on a real GPU and must not silently test the CPU.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as jax from '../lib/index.js';

const index = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'index.js');

/** Runs a snippet in a fresh node with `env` (JAXON_PLATFORMS and JAXON_CUDA_EMULATOR cleared first); its stdout, or the error's first line. */
function inChild(env: Record<string, string>, body: string): string {
  const script = `import * as jax from ${JSON.stringify(index)};\ntry { ${body} } catch (e) { console.log('ERROR ' + e.message.split('\\n')[0]); }`;
  const base = { ...process.env };
  delete base['JAXON_PLATFORMS'];
  delete base['JAXON_CUDA_EMULATOR'];
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...base, ...env }, encoding: 'utf8' }).trim();
}

test('environmentInfo names the platform and why, in one line', (t) => {
  const info = jax.environmentInfo();
  t.is(info.platform, jax.defaultBackend());
  t.false(info.cuda.includes('\n'));
  t.regex(info.cuda, info.platform === 'cpu' ? /^running on the CPU/ : /^running on cuda/);
  t.is(jax.devices()[0]!.platform, info.platform);
  t.is(jax.devices('cpu')[0]!.platform, 'cpu');
});

test('npm run test:gpu and the emulated run use the cuda backend', (t) => {
  const wanted = process.env['JAXON_TEST_PLATFORM'];
  if (wanted !== 'cuda') {
    t.log(`skipped: JAXON_TEST_PLATFORM is ${wanted ?? 'unset'}; the CUDA runs are npm run test:emulated and npm run test:gpu`);
    t.pass();
    return;
  }
  t.is(jax.defaultBackend(), 'cuda', `the suite was asked to run on cuda but runs on ${jax.defaultBackend()}: ${jax.environmentInfo().cuda}`);
  t.is(jax.numpy.ones([2]).device.platform, 'cuda');
});

test('JAXON_PLATFORMS chooses the platform; unknown names and unavailable CUDA are errors that say why', (t) => {
  t.is(inChild({ JAXON_PLATFORMS: 'cpu' }, "console.log(jax.defaultBackend(), jax.environmentInfo().cuda)").split(' ')[0], 'cpu');
  t.is(inChild({ JAXON_PLATFORMS: 'tpu' }, 'console.log(jax.defaultBackend())'),
    "ERROR JAXON_PLATFORMS=tpu: unknown platform \"tpu\" (the platforms are 'cpu' and 'cuda')");
  // jaxon's emulated GPU is a CUDA device: the default when asked for, and reachable beside the CPU
  const emulated = inChild({ JAXON_CUDA_EMULATOR: '1' }, "const x = jax.numpy.ones([3]); console.log(jax.defaultBackend(), x.device.platform, jax.devices('cpu')[0].platform, x.sum().item())");
  t.is(emulated, 'cuda cuda cpu 3');
  t.is(inChild({ JAXON_CUDA_EMULATOR: '1', JAXON_PLATFORMS: 'cpu,cuda' }, "console.log(jax.defaultBackend(), jax.devices('cuda').length)"), 'cpu 1');
  // without a GPU (and no emulator) cuda cannot be asked for
  const noGpu = { JAXON_LIBCUDA: '/nonexistent/libcuda.so.1' };
  t.regex(inChild({ ...noGpu, JAXON_PLATFORMS: 'cuda' }, 'console.log(jax.defaultBackend())'), /^ERROR JAXON_PLATFORMS=cuda asks for cuda, which is not available here: no CUDA driver/);
  t.regex(inChild(noGpu, "console.log(jax.defaultBackend(), jax.environmentInfo().cuda)"), /^cpu running on the CPU because no CUDA driver/);
  t.regex(inChild(noGpu, "jax.devices('cuda')"), /^ERROR jax.devices: backend 'cuda' is not available: no CUDA driver/);
});

test('devicePut moves arrays between the CPU and a CUDA device; a computation follows its committed operands', (t) => {
  const out = inChild({ JAXON_CUDA_EMULATOR: '1' }, `
    const jnp = jax.numpy;
    const [cpu] = jax.devices('cpu'), [gpu] = jax.devices('cuda');
    const x = jnp.arange(4).astype('float32');
    const onCpu = jax.devicePut(x, cpu);
    const back = jax.devicePut(onCpu, gpu);
    const y = jnp.multiply(onCpu, 2);
    const z = jax.jit((a) => jnp.add(a, 1))(onCpu);
    console.log(String(x.device), String(onCpu.device), String(back.device), String(y.device), String(z.device), y.tolistSync().join(','), z.tolistSync().join(','), back.tolistSync().join(','));
    try { jnp.add(onCpu, back); } catch (e) { console.log(e.message); }`);
  const [first, error] = out.split('\n');
  t.is(first, 'CUDADevice(id=0) CPUDevice(id=0) CUDADevice(id=0) CPUDevice(id=0) CPUDevice(id=0) 0,2,4,6 1,2,3,4 0,1,2,3');
  t.is(error, 'lax.add: received arrays committed to different devices (CPUDevice(id=0) and CUDADevice(id=0)); move them to one device with jax.devicePut');
});
