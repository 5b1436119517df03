// A scan over inputs in pinned host memory copies iteration t+1's slice to
// the device while iteration t computes (issue 11: scan's next-iteration
// prefetch; plan.ts CallLayout.prefetch, cuda-executable.ts). Checked here:
// the plan reserves exactly two device slices per prefetched input (so
// memoryAnalysis counts them); by default only where that leaves the
// program's device footprint as it was, JAXON_CUDA_SCAN_PREFETCH=1 always;
// inputs the body uses otherwise are not prefetched; and on a CUDA device
// (the emulated GPU in `npm test`, whose copies are slowed so a missing order
// shows) the results equal a float32 reference forward and reversed, op by
// op and as CUDA graphs, with one prefetch per iteration, and with
// JAXON_CUDA_SCAN_PREFETCH=0 as well.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import { cudaAvailability } from '../lib/runtime/cuda.js';
import type { CudaExecutable } from '../lib/runtime/cuda-executable.js';

const jnp = jax.numpy;
const lax = jax.lax;
const L = 6;
const N = 1024;

/** carry ← carry/2 + sin(x_t) on the device; ys_t = 2 carry; `passHost`: the body also returns its host slice as a ys. */
function scanned(reverse: boolean, passHost = false) {
  return function scanned(c: Array, xs: Array) {
    return lax.scan(
      (carry: Array, x: Array) => {
        const next = jnp.add(jnp.multiply(carry, 0.5), jnp.sin(jax.devicePut(x, 'device')));
        return [next, passHost ? [jnp.multiply(next, 2), x] : jnp.multiply(next, 2)];
      },
      c,
      xs,
      { reverse },
    );
  };
}

const xsValues = Float32Array.from({ length: L * N }, (_, i) => Math.fround(((i * 37) % 101) / 17 - 3));

/** The float32 recurrence in JS: [final carry, ys rows]. */
function reference(reverse: boolean): [Float32Array, Float32Array] {
  const c = new Float32Array(N);
  const ys = new Float32Array(L * N);
  for (let t = 0; t < L; t++) {
    const i = reverse ? L - 1 - t : t;
    for (let j = 0; j < N; j++) {
      c[j] = Math.fround(Math.fround(c[j]! * 0.5) + Math.fround(Math.sin(xsValues[i * N + j]!)));
      ys[i * N + j] = Math.fround(c[j]! * 2);
    }
  }
  return [c, ys];
}

/** Runs `fn` with environment variables set (the settings are read when a program is planned). */
function withEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function close(t: import('ava').ExecutionContext, got: ArrayLike<number>, want: ArrayLike<number>, what: string) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
  t.true(got.length === want.length && worst <= 2e-5, `${what}: largest difference ${worst}`);
}

test('the plan reserves two device slices per prefetched scan input, and memoryAnalysis counts them; by default only where that is free', (t) => {
  const xs = jax.devicePut(jnp.asarray(xsValues).reshape([L, N]), 'pinned_host');
  const big = jnp.ones([96, 96]);
  const analysis = (fn: (c: Array, xs: Array, big: Array) => unknown, prefetch: string | undefined) =>
    withEnv(prefetch === undefined ? {} : { JAXON_CUDA_SCAN_PREFETCH: prefetch }, () => {
      if (prefetch === undefined) delete process.env['JAXON_CUDA_SCAN_PREFETCH'];
      // a new function each time: jit keeps what it compiled per function (settings are read when it plans)
      return jax.jit((c: Array, x: Array, b: Array) => fn(c, x, b)).lower(jnp.zeros([N]), xs, big, { platform: 'cuda' }).compile().memoryAnalysis();
    });
  const alone = (c: Array, x: Array) => scanned(false)(c, x);
  const on = analysis(alone, '1');
  const off = analysis(alone, '0');
  t.is(on.tempSizeInBytes - off.tempSizeInBytes, 2 * N * 4, 'two f32[1024] slices');
  t.is(on.hostTempSizeInBytes, off.hostTempSizeInBytes);
  t.is(analysis(alone, undefined).tempSizeInBytes, off.tempSizeInBytes, 'by default not at the cost of device memory');
  // a [96, 96] product lives in the arena at another step: the slices fit beside the scan for free
  const besideProduct = (c: Array, x: Array, b: Array) => [scanned(false)(c, x), jnp.sum(jnp.matmul(b, b))];
  const free = analysis(besideProduct, undefined);
  t.is(free.tempSizeInBytes, analysis(besideProduct, '0').tempSizeInBytes);
  const xsFor = withEnv({}, () => {
    delete process.env['JAXON_CUDA_SCAN_PREFETCH'];
    return jax.jit((c: Array, x: Array, b: Array) => besideProduct(c, x, b)).lower(jnp.zeros([N]), xs, big, { platform: 'cuda' }).compile().asText();
  });
  t.regex(xsFor, /prefetch/, 'the plan says which xs it prefetches');
  // the body returns its host slice too: not prefetched, nothing reserved
  const passing = (c: Array, x: Array) => scanned(false, true)(c, x);
  t.is(analysis(passing, '1').tempSizeInBytes, analysis(passing, '0').tempSizeInBytes);
});

const availability = cudaAvailability();
const onCuda = availability.available && process.env['JAXON_TEST_PLATFORM'] === 'cuda';
const cudaTest = onCuda ? test.serial : test.serial.skip;
if (!onCuda) {
  test('scan prefetch on a CUDA device (skipped)', (t) => {
    t.log(`skipped: runs in the CUDA run of the suite (JAXON_TEST_PLATFORM=cuda); here: ${availability.reason ?? 'the CPU run'}`);
    t.pass();
  });
}

for (const [reverse, graphs] of [[false, '0'], [true, '0'], [false, '1'], [true, '1']] as const) {
  // with graphs (JAXON_CUDA_GRAPHS=1) the body, its copy of the slice included, is one graph on the compute stream
  cudaTest(`a scan over pinned-host inputs prefetches slice t+1 during iteration t and computes the recurrence (reverse ${reverse}, graphs ${graphs})`, (t) => {
    withEnv({ JAXON_CUDA_GRAPHS: graphs, JAXON_CUDA_SCAN_PREFETCH: '1' }, () => {
      const f = jax.jit(scanned(reverse));
      const c = jnp.zeros([N]);
      const xs = jax.devicePut(jnp.asarray(xsValues).reshape([L, N]), 'pinned_host');
      const [want, wantYs] = reference(reverse);
      for (let call = 1; call <= 2; call++) {
        const [carry, ys] = f(c, xs) as [Array, Array];
        close(t, carry.dataSync(), want, `carry, call ${call}`);
        close(t, ys.dataSync(), wantYs, `ys, call ${call}`);
        const executable = f.executable(c, xs) as CudaExecutable;
        t.is(executable.scanPrefetches, call * L);
        if (graphs === '1') t.true(executable.programStats().some((s) => s.graphLaunches > 0), 'the body ran as a graph');
      }
    });
  });
}

cudaTest('a host slice the body also returns is not prefetched; JAXON_CUDA_SCAN_PREFETCH=0 turns prefetching off', (t) => {
  const xs = jax.devicePut(jnp.asarray(xsValues).reshape([L, N]), 'pinned_host');
  const c = jnp.zeros([N]);
  const [want, wantYs] = reference(false);
  const passing = jax.jit(scanned(false, true));
  const [carry, [ys, back]] = withEnv({ JAXON_CUDA_SCAN_PREFETCH: '1' }, () => passing(c, xs) as [Array, [Array, Array]]);
  close(t, carry.dataSync(), want, 'carry');
  close(t, ys.dataSync(), wantYs, 'ys');
  close(t, back.dataSync(), xsValues, 'the host slices passed through');
  t.is((passing.executable(c, xs) as CudaExecutable).scanPrefetches, 0);

  withEnv({ JAXON_CUDA_SCAN_PREFETCH: '0' }, () => {
    const off = jax.jit(scanned(false));
    const [c2, ys2] = off(c, xs) as [Array, Array];
    close(t, c2.dataSync(), want, 'carry without prefetch');
    close(t, ys2.dataSync(), wantYs, 'ys without prefetch');
    t.is((off.executable(c, xs) as CudaExecutable).scanPrefetches, 0);
  });
});
