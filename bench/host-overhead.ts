// Host time per call on the CUDA backend (issue 11): from the JS call to the
// last launch queued, for a jitted function of 1 and 2 kernels and for an
// eager op, on f32[8] (launches are asynchronous, so the loop measures the
// host's work: dispatch, argument checks, allocation, the native call).
// Run on the emulated GPU (JAXON_CUDA_EMULATOR=1), where launches are cheap
// and host work dominates, or on a GPU.
//
// Two figures per call, median and range of 7 runs of 20000 calls: the wall
// time, and the CPU time of the calling thread alone (Linux:
// /proc/thread-self/stat, 10 ms ticks, so 20000 calls keep the tick within
// ±5 %). On the emulated GPU of a 2-core machine the emulated device's
// threads compete with the caller for the cores, so the wall time swings
// with them; the caller's CPU time is the host work itself.
import { existsSync, readFileSync } from 'node:fs';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
const RUNS = 7;
const CALLS = Number(process.env['HOST_OVERHEAD_CALLS'] ?? 20000);
const threadStat = '/proc/thread-self/stat';
const hasThreadTime = existsSync(threadStat);

/** CPU time of the calling thread in µs (user + system), at 100 ticks a second. */
function threadCpuUs(): number {
  const fields = readFileSync(threadStat, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const range = (v: number[]) => `${Math.min(...v).toFixed(1)}–${Math.max(...v).toFixed(1)}`;

function perCall(label: string, call: () => jax.Array): void {
  for (let i = 0; i < 3000; i++) call().dispose(); // warm up: compiles, caches, V8's tiers
  call().blockUntilReady().dispose();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const c0 = hasThreadTime ? threadCpuUs() : 0;
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) call().dispose();
    wall.push(((performance.now() - start) * 1000) / CALLS);
    if (hasThreadTime) cpu.push((threadCpuUs() - c0) / CALLS);
    jnp.zeros([1]).blockUntilReady().dispose(); // let the device catch up between runs
  }
  const cpuCells = hasThreadTime ? `${median(cpu).toFixed(1)} µs | ${range(cpu)} µs` : 'n/a | n/a';
  console.log(`| ${label} | ${median(wall).toFixed(1)} µs | ${range(wall)} µs | ${cpuCells} |`);
}

const x = jnp.arange(8).astype('float32');
const y = jnp.ones([8]);
const one = jax.jit((a: jax.Array) => jnp.multiply(jnp.add(a, 1), 2));
const two = jax.jit((a: jax.Array, b: jax.Array) => {
  const s = jnp.sum(jnp.exp(a)); // a reduction
  return jnp.add(jnp.divide(b, s), jnp.cumsum(a)); // a cumulative scan, then an elementwise kernel
});
console.log(`${jax.environmentInfo().cuda}\n`);
console.log(`| host time per call, f32[8], ${RUNS} × ${CALLS} calls | wall: median | wall: range | calling thread's CPU: median | range |`);
console.log('|---|---:|---:|---:|---:|');
perCall(`jit, ${one.kernelCount(x)} kernel`, () => one(x));
perCall(`jit, ${two.kernelCount(x, y)} kernels`, () => two(x, y));
perCall('eager jnp.add', () => jnp.add(x, y));
