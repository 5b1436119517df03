// The platform the suite runs on. `npm run test:gpu` sets JAXON_TEST_PLATFORM=cuda;
// until the CUDA backend exists that run must fail loudly rather than
// silently test the CPU. Without a GPU, environmentInfo says why in one line.
import test from 'ava';
import * as jax from '../lib/index.js';

test('environmentInfo names the platform and, without CUDA, why in one line', (t) => {
  const info = jax.environmentInfo();
  t.is(info.platform as string, jax.defaultBackend() as string);
  t.false(info.cuda.includes('\n'));
  if ((info.platform as string) === 'cpu') t.regex(info.cuda, /running on the CPU because|CUDA device/);
  t.is(jax.devices()[0]!.platform as string, info.platform as string);
});

test('npm run test:gpu runs on the cuda backend', (t) => {
  const wanted = process.env['JAXON_TEST_PLATFORM'];
  if (wanted !== 'cuda') {
    t.log(`skipped: JAXON_TEST_PLATFORM is ${wanted ?? 'unset'}; the GPU run is npm run test:gpu`);
    t.pass();
    return;
  }
  t.is(jax.defaultBackend(), 'cuda', `the suite was asked to run on cuda but runs on ${jax.defaultBackend()}: ${jax.environmentInfo().cuda}`);
});
