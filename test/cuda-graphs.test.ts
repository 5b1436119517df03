// CUDA graphs of native programs (cuda/cuda_graph.c) on jaxon's emulated GPU,
// in child processes that select it: a program run with fresh buffers each
// time updates its instantiated graph's nodes in place instead of building
// the graph again, with the results of op-by-op replay; an update the driver
// refuses (a copy's operand moved to another kind of memory, or every update
// with JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES=1) builds the graph again,
// with the same results; and a jitted function called with fresh outputs each
// call does the same through the whole jit path (by default for every stretch
// with a kernel; JAXON_CUDA_GRAPHS=0 turns graphs off, =N sets the least kernels).
import test from 'ava';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');
const module = (name: string) => JSON.stringify(path.join(dist, ...name.split('/')));

function run(script: string, env: Record<string, string> = {}): string {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA') || k === 'JAXON_PLATFORMS') delete base[k];
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...base, JAXON_CUDA_EMULATOR: '1', ...env }, encoding: 'utf8', timeout: 180_000,
  }).trim();
}

// A program over every node kind: an h2d copy into the arena, two kernels, a memset, a d2h copy back to a pinned
// buffer, ordered across the three streams by events. Run with fresh buffers each time; prints results and stats.
const programScript = (graph: boolean, pinnedOutput = true) => `
  const { createCudaDevice } = await import(${module('runtime/cuda.js')});
  const { native } = await import(${module('runtime/native.js')});
  const { compileCudaKernelSync } = await import(${module('runtime/nvrtc-cache.js')});
  const device = createCudaDevice(0);
  const h = device.info.handle;
  const source = \`
extern "C" __global__ void jx_graph_scale2(float *out, const float *in) { unsigned i = blockIdx.x * 256 + threadIdx.x; out[i] = 2.0f * in[i]; }
extern "C" __global__ void jx_graph_add(float *out, const float *a, const float *b) { unsigned i = blockIdx.x * 256 + threadIdx.x; out[i] = a[i] + b[i]; }\`;
  const image = compileCudaKernelSync('jx_graph_test', source, device.backend.target);
  const mod = native().cudaModuleLoad(h, image.image, 'test');
  const fn = (name) => native().cudaGetFunction(h, mod, name).handle;
  const n = 1024, bytes = 4 * n;
  const program = native().cudaProgramCreate(h, {
    slotBytes: [bytes, bytes, bytes, bytes], arenaBytes: 2 * bytes, events: 2, graph: ${graph},
    ops: [
      { op: 'copy', stream: 'h2d', dst: [-1, 0], src: [0, 0], bytes },
      { op: 'record', stream: 'h2d', event: 0 },
      { op: 'launch', function: fn('jx_graph_scale2'), grid: [4, 1, 1], block: [256, 1, 1], sharedMemBytes: 0, args: [[-1, bytes], [1, 0]] },
      { op: 'wait', stream: 'compute', event: 0 },
      { op: 'launch', function: fn('jx_graph_add'), grid: [4, 1, 1], block: [256, 1, 1], sharedMemBytes: 0, args: [[3, 0], [-1, 0], [-1, bytes]] },
      { op: 'memset', stream: 'compute', dst: [3, 0], value: 0, bytes: 8 },
      { op: 'record', stream: 'compute', event: 1 },
      { op: 'wait', stream: 'd2h', event: 1 },
      { op: 'copy', stream: 'd2h', dst: [2, 0], src: [3, 0], bytes },
    ],
  });
  const lines = [];
  const kept = [];
  for (let run = 0; run < 5; run++) {
    const x = Float32Array.from({ length: n }, (_, i) => i + run);
    const y = Float32Array.from({ length: n }, (_, i) => 1000 * run - i);
    // the last run's output moves from pinned host memory to device memory: an update the driver refuses
    const outKind = ${pinnedOutput} || run < 4 ? 'pinned_host' : 'device';
    const slots = [native().cudaFromHost(h, x, 'pinned_host'), native().cudaFromHost(h, y), native().cudaAlloc(h, bytes, outKind), native().cudaAlloc(h, bytes)];
    native().cudaProgramRun(program, slots);
    lines.push(Array.from(new Float32Array(native().cudaToHostSync(slots[2]))).join(','));
    kept.push(...slots); // alive: the next run's buffers are fresh ones
  }
  console.log(JSON.stringify({ results: lines, stats: native().cudaProgramStats(program) }));`;

test('a graph program run with fresh buffers updates its nodes in place, with the op-by-op results', (t) => {
  const opByOp = JSON.parse(run(programScript(false)));
  const graph = JSON.parse(run(programScript(true)));
  t.deepEqual(graph.results, opByOp.results);
  t.is(opByOp.results[1]!.split(',').slice(0, 3).join(','), '0,0,1999'); // the memset's 8 bytes, then x + 2y
  t.like(opByOp.stats, { runs: 5, graphLaunches: 0, graphCaptures: 0, graphUpdates: 0, graph: false });
  t.deepEqual(graph.stats, { runs: 5, graphLaunches: 5, graphCaptures: 1, graphUpdates: 4, graph: true, graphOffReason: '' });
});

test('an update the driver refuses builds the graph again, with the same results', (t) => {
  const opByOp = JSON.parse(run(programScript(false, false)));
  // a copy's destination moves from pinned host memory to device memory: its memcpy node cannot be updated
  const moved = JSON.parse(run(programScript(true, false)));
  t.deepEqual(moved.results, opByOp.results);
  t.deepEqual(moved.stats, { runs: 5, graphLaunches: 5, graphCaptures: 2, graphUpdates: 3, graph: true, graphOffReason: '' });
  // a driver that refuses every update
  const refused = JSON.parse(run(programScript(true), { JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES: '1' }));
  t.deepEqual(refused.results, JSON.parse(run(programScript(false))).results);
  t.deepEqual(refused.stats, { runs: 5, graphLaunches: 5, graphCaptures: 5, graphUpdates: 0, graph: true, graphOffReason: '' });
});

// Ten calls of a jitted function of several kernels and a copy between memory kinds, each with fresh outputs (the
// earlier results stay alive); prints the results and the summed stats of its native programs.
const jitScript = `
  const jax = await import(${module('index.js')});
  const jnp = jax.numpy;
  const f = jax.jit(function f(x, y) {
    let a = x;
    for (let i = 0; i < 4; i++) a = jnp.add(jnp.multiply(jnp.max(a), 0.5), jnp.sin(a)); // a reduction each: 4 kernels
    return [jnp.add(jnp.cumsum(a), y), jax.devicePut(a, 'pinned_host')];
  });
  const x = jnp.linspace(-2, 2, 300), y = jnp.array(0.25);
  const outs = [];
  for (let call = 0; call < 10; call++) outs.push(f(x, y));
  const stats = f.executable(x, y).programStats();
  const sum = (k) => stats.reduce((n, s) => n + s[k], 0);
  console.log(JSON.stringify({
    results: outs.map((o) => o.map((a) => Array.from(a.dataSync()))),
    kernels: f.kernelCount(x, y), runs: sum('runs'), graphLaunches: sum('graphLaunches'), graphCaptures: sum('graphCaptures'),
    graphUpdates: sum('graphUpdates'), segments: stats.length,
  }));`;

test('a jitted call with fresh outputs each call updates its graph instead of building it again, with the op-by-op results', (t) => {
  const opByOp = JSON.parse(run(jitScript, { JAXON_CUDA_GRAPHS: '0' }));
  const graphs = JSON.parse(run(jitScript, { JAXON_CUDA_GRAPHS: '1' }));
  const refused = JSON.parse(run(jitScript, { JAXON_CUDA_GRAPHS: '1', JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES: '1' }));
  const byDefault = JSON.parse(run(jitScript)); // every stretch with a kernel is a graph
  const xlaLike = JSON.parse(run(jitScript, { JAXON_CUDA_GRAPHS: String(opByOp.kernels + 1) })); // a threshold above its kernels
  t.true(opByOp.kernels >= 5, `${opByOp.kernels} kernels`);
  t.deepEqual(byDefault.results, opByOp.results);
  t.like(byDefault, { graphLaunches: 10, graphCaptures: 1, graphUpdates: 9 });
  t.deepEqual(xlaLike.results, opByOp.results);
  t.like(xlaLike, { runs: 10, graphLaunches: 0 });
  t.is(opByOp.segments, 1);
  t.deepEqual(graphs.results, opByOp.results);
  t.deepEqual(refused.results, opByOp.results);
  t.true(opByOp.results.every((r: number[][]) => JSON.stringify(r) === JSON.stringify(opByOp.results[0])));
  t.like(opByOp, { runs: 10, graphLaunches: 0, graphCaptures: 0, graphUpdates: 0 });
  t.like(graphs, { runs: 10, graphLaunches: 10, graphCaptures: 1, graphUpdates: 9 });
  t.like(refused, { runs: 10, graphLaunches: 10, graphCaptures: 10, graphUpdates: 0 });
});
