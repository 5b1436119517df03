// A kernel that fails to compile on a CUDA device: checked on jaxon's emulated
// GPU in a child process, where JAXON_CUDA_EMULATOR_MUTATE=compile:<name>
// makes the first compile of one of jaxon's own kernels fail (as a compiler
// that cannot run: the emulated NVRTC once met `cannot run g++: Bad address`)
// with a fresh kernel cache, so the kernel is really compiled. The eager op
// whose kernel failed returns at once (dispatch is asynchronous); its array
// then raises the NVRTC error, and so does every call that reads it: an eager
// op, and a jitted call, top level or in a scan's body (the jitted call used
// to run on the array's memory, which nothing wrote: a wrong value, no error).
// A jitted function whose own kernel fails raises it on the call. The next
// compile of the same kernel succeeds, and the values are right.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');

function run(script: string, mutate: string): string[] {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-compile-failure-'));
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA') || k === 'JAXON_PLATFORMS' || k === 'JAXON_CACHE_DIR') delete base[k];
  try {
    return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...base, JAXON_CUDA_EMULATOR: '1', JAXON_PLATFORMS: 'cuda', JAXON_CACHE_DIR: cache, JAXON_CUDA_EMULATOR_MUTATE: mutate },
      encoding: 'utf8', timeout: 180_000,
    }).trim().split('\n');
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

const prelude = `
  const jax = await import(${JSON.stringify(path.join(dist, 'index.js'))});
  const jnp = jax.numpy;
  const report = (label, compute) => {
    try {
      console.log(label + ' ' + Array.from(compute(), (v) => Math.round(v * 1e4) / 1e4).join(','));
    } catch (e) {
      console.log(label + ' ' + e.name + ': ' + e.message.split('\\n').join(' | '));
    }
  };`;

const failure = /^Error: jaxon cuda: NVRTC failed to compile kernel 'ew_cos_\w+': nvrtcCompileProgram returned NVRTC_ERROR_COMPILATION .*NVRTC log: \| jaxon cuda emulator: JAXON_CUDA_EMULATOR_MUTATE failed the compile of kernel 'ew_cos_\w+'/;

test('an eager op whose kernel fails to compile: its array, an eager op and jitted calls on it raise the NVRTC error; the kernel then compiles', (t) => {
  const lines = run(`${prelude}
    const x = jnp.cos(jnp.zeros([4]));
    // awaiting the array lets the failed compile's result reach its job: the array now carries the error
    try { await x.data(); console.log('data computed'); } catch (e) { console.log('data ' + e.name + ': ' + e.message.split('\\n').join(' | ')); }
    const f = jax.jit(function f(a) { return jnp.multiply(a, 2); });
    const g = jax.jit(function g(c0) {
      return jax.lax.scan((c, s) => [jnp.add(c, jnp.multiply(x, s)), s], c0, jnp.arange(0, 3, 1, { dtype: 'float32' }))[0];
    });
    report('jit', () => f(x).dataSync());
    report('scan', () => g(jnp.ones([4])).dataSync());
    report('eager', () => jnp.add(x, 1).dataSync());
    report('read', () => x.dataSync());
    x.dispose();
    const y = jnp.cos(jnp.zeros([4]));
    report('jit', () => f(y).dataSync());
    report('eager', () => jnp.add(y, 1).dataSync());
  `, 'compile:ew_cos');
  t.is(lines.length, 7, lines.join('\n'));
  for (const line of lines.slice(0, 5)) t.regex(line.replace(/^\w+ /, ''), failure, line);
  t.deepEqual(lines.slice(5), ['jit 2,2,2,2', 'eager 2,2,2,2']);
});

test('a compile that failed on the compile pool is not handed on: a synchronous read compiles the kernel again and computes right', (t) => {
  const lines = run(`${prelude}
    const x = jnp.cos(jnp.zeros([4]));
    const f = jax.jit(function f(a) { return jnp.multiply(a, 2); });
    report('jit', () => f(x).dataSync());
    report('read', () => x.dataSync());
  `, 'compile:ew_cos');
  t.deepEqual(lines, ['jit 2,2,2,2', 'read 1,1,1,1']);
});

test('a jitted function whose kernel fails to compile raises the NVRTC error on the call; the next call compiles it and computes right', (t) => {
  const lines = run(`${prelude}
    const f = jax.jit(function f(a) { return jnp.cos(jnp.multiply(a, 2)); });
    report('f', () => f(jnp.arange(0, 4, 1, { dtype: 'float32' })).dataSync());
    report('f', () => f(jnp.arange(0, 4, 1, { dtype: 'float32' })).dataSync());
  `, 'compile:ew_cos');
  t.is(lines.length, 2, lines.join('\n'));
  t.regex(lines[0]!.replace(/^f /, ''), failure, lines[0]);
  t.is(lines[1], `f ${[0, 1, 2, 3].map((v) => Math.round(Math.fround(Math.cos(2 * v)) * 1e4) / 1e4).join(',')}`);
});
