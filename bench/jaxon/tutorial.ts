// The seed tutorial's programs as workloads of the GPU benchmark suite
// (jaxon's side; bench/jax/tutorial.py is JAX's): jit(grad(scan)) of 10
// layers of x @ w1 @ w2 as the baseline, with activation offloading, and with
// parameter offloading; the 4-layer Adam step with and without optimizer-state
// offloading; and the compile time of the baseline, cold (empty kernel cache)
// and warm, in fresh processes. The programs are examples/host-offloading.ts's
// own. Step rows carry memoryAnalysis(), the device's peak bytes in use (the
// workload's own when the CLI isolates it in a child process) and, for the
// offloaded programs, the fraction of transfer time hidden behind compute,
// read from a profiler trace of one step.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as jax from '../../lib/index.js';
import {
  hybridLayer, layerName, makeOptimizer, offloadedTrainStep, optimizerStructs, scanned, scannedWithPolicy, trainStep,
  type Params,
} from '../../examples/host-offloading.js';
import { blockTree, disposeTree, leavesOf, randomNormal, type Prepared, type SizeSpec, type TutorialSizes, type Workload } from './measure.js';

type Array = jax.Array;
type Weights = [Array, Array];
const jnp = jax.numpy;

/**
 * The share of copy-stream time (H2D and D2H) that overlaps compute-stream
 * time in a Chrome trace written by jax.profiler.trace; null when the trace
 * has no transfers.
 */
export function hiddenTransferFraction(traceJson: string): number | null {
  const events = (JSON.parse(traceJson) as { traceEvents: { ph: string; tid: number; ts: number; dur: number }[] }).traceEvents.filter((e) => e.ph === 'X');
  const compute = events.filter((e) => e.tid === 1).map((e) => [e.ts, e.ts + e.dur] as const).sort((a, b) => a[0] - b[0]);
  const transfers = events.filter((e) => e.tid === 2 || e.tid === 3);
  let total = 0;
  let hidden = 0;
  for (const t of transfers) {
    total += t.dur;
    // compute spans on one stream do not overlap each other, so their overlaps with t add up
    for (const [start, end] of compute) hidden += Math.max(0, Math.min(end, t.ts + t.dur) - Math.max(start, t.ts));
  }
  return total > 0 ? hidden / total : null;
}

/** Runs `call` once under the profiler; returns its outputs and the hidden transfer fraction. */
function profileOnce(call: () => unknown): { out: unknown; hidden: number | null } {
  const file = path.join(os.tmpdir(), `jaxon-bench-trace-${process.pid}.json`);
  try {
    const out = jax.profiler.trace(() => {
      const o = call();
      blockTree(o);
      return o;
    }, file);
    return { out, hidden: hiddenTransferFraction(readFileSync(file, 'utf8')) };
  } finally {
    rmSync(file, { force: true });
  }
}

/** Peak bytes of live arrays the device has seen in this process (the workload's own in an isolated child). */
const peakBytesInUse = (): number => jax.devices()[0]!.memoryStats().peakBytesInUse;

const memoryFigures = (m: { tempSizeInBytes: number; argumentSizeInBytes: number; outputSizeInBytes: number; aliasSizeInBytes: number; hostTempSizeInBytes: number; peakMemoryInBytes: number }) => ({
  temp_bytes: m.tempSizeInBytes,
  argument_bytes: m.argumentSizeInBytes,
  output_bytes: m.outputSizeInBytes,
  alias_bytes: m.aliasSizeInBytes,
  host_temp_bytes: m.hostTempSizeInBytes,
  peak_bytes: m.peakMemoryInBytes,
});

/** The weights and input of the activation and parameter offloading programs: random, scaled by fan-in so 10 layers stay finite. */
function activationInputs(s: TutorialSizes): [Weights, Array] {
  return [[randomNormal([s.layers, s.width, s.hidden], 'float32', 1 / Math.sqrt(s.width)), randomNormal([s.layers, s.hidden, s.width], 'float32', 1 / Math.sqrt(s.hidden))], randomNormal([s.batch, s.width])];
}

const allFinite = (tree: unknown): string | null => {
  for (const leaf of leavesOf(tree)) {
    if (!(jax.tidy(() => jnp.all(jnp.isfinite(leaf)).item()) as boolean)) return `non-finite values in a ${leaf.dtype}[${leaf.shape}] output`;
  }
  return null;
};

const closeTo = (tree: unknown, reference: Array[]): string | null => {
  const leaves = leavesOf(tree);
  for (let i = 0; i < leaves.length; i++) {
    const onDevice = jax.devicePut(leaves[i]!, jax.devices()[0]!);
    const ok = jax.tidy(() => jnp.allclose(onDevice, reference[i]!, { rtol: 1e-4, atol: 1e-5 }).item()) as boolean;
    if (onDevice !== leaves[i]) onDevice.dispose();
    if (!ok) return `gradient ${i} differs from the baseline program's`;
  }
  return null;
};

function activationWorkloads(s: TutorialSizes): Workload[] {
  const flops = 12 * s.layers * s.batch * s.width * s.hidden; // grad of two matmuls per layer: 3 × forward, as model FLOPs (no remat)
  const shape = `L${s.layers} ${s.batch}x${s.width} h${s.hidden}`;
  const mesh = () => new jax.sharding.Mesh([[jax.devices()[0]!]], ['x', 'y']);
  const program = (name: string, variant: 'baseline' | 'activation' | 'parameter'): Workload => ({
    name, kind: 'step', shape, dtype: 'float32', flops, bytes: 0, isolate: true,
    prepare: (): Prepared => {
      const sDev = new jax.sharding.NamedSharding(mesh(), jax.sharding.P('x', 'y'), { memoryKind: 'device' });
      const sHost = sDev.withMemoryKind('pinned_host');
      const [w, x] = activationInputs(s);
      const baseline = jax.jit(jax.grad(scanned));
      const reference = variant === 'baseline' ? null : (baseline(w, x) as Array[]);
      const f = variant === 'baseline' ? baseline
        : variant === 'activation' ? jax.jit(jax.grad(scannedWithPolicy(layerName)))
        : jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev))));
      const weights: Weights = variant === 'parameter' ? [jax.devicePut(w[0], sHost), jax.devicePut(w[1], sHost)] : w;
      return {
        step: () => f(weights, x),
        check: (out) => allFinite(out) ?? (reference ? closeTo(out, reference) : null),
        extra: () => {
          const { out, hidden } = profileOnce(() => f(weights, x));
          disposeTree(out);
          return {
            memory_analysis: memoryFigures(f.lower(weights, x).compile().memoryAnalysis()),
            peak_bytes_in_use: peakBytesInUse(),
            ...(variant === 'baseline' ? {} : { hidden_transfer_fraction: hidden }),
          };
        },
        dispose: () => disposeTree([w, x, weights, reference]),
      };
    },
  });
  return [
    program('tutorial_baseline', 'baseline'),
    program('tutorial_activation_offload', 'activation'),
    program('tutorial_parameter_offload', 'parameter'),
  ];
}

/** The Adam step (4 layers of dim², gelu, optax chain(clipByGlobalNorm(1), adam(0.1))) as a training loop: each step's outputs feed the next. */
function adamWorkloads(s: TutorialSizes): Workload[] {
  const d = s.dim;
  const flops = 24 * d ** 3; // 4 matmuls of d³ multiply-adds forward, twice that backward
  const program = (name: string, offloaded: boolean): Workload => ({
    name, kind: 'step', shape: `4x${d}x${d}`, dtype: 'float32', flops, bytes: 0, isolate: true,
    prepare: (): Prepared => {
      const device = jax.devices()[0]!;
      const sDevice = new jax.sharding.SingleDeviceSharding(device, { memoryKind: 'device' });
      const sPinned = new jax.sharding.SingleDeviceSharding(device, { memoryKind: 'pinned_host' });
      const optimizer = makeOptimizer();
      let params: Params = Object.fromEntries([1, 2, 3, 4].map((i) => [`w${i}`, randomNormal([d, d], 'float32', 1 / Math.sqrt(d))]));
      const inputs = randomNormal([d, d]);
      let state: unknown = optimizer.init(params);
      if (offloaded) {
        const host = jax.devicePut(state as never, sPinned);
        disposeTree(state);
        state = host;
      }
      const step = offloaded
        ? jax.jit(offloadedTrainStep(optimizer, sDevice), { donateArgnums: [0], outShardings: [sDevice, sPinned] })
        : jax.jit(trainStep(optimizer), { donateArgnums: [0, 1] });
      const consume = (out: unknown) => {
        // donated inputs are already gone; the host state of the offloaded step is not donated and is freed here
        disposeTree([params, state]);
        [params, state] = out as [Params, unknown];
      };
      return {
        step: () => step(params, state, inputs),
        consume,
        check: (out) => {
          const [p, st] = out as [Params, unknown];
          const where = leavesOf(st).map((l) => l.sharding.memoryKind).filter((k, i, all) => all.indexOf(k) === i);
          if (offloaded && (where.length !== 1 || where[0] !== 'pinned_host')) return `optimizer state in ${where.join(', ')}, expected pinned_host`;
          return allFinite(p);
        },
        extra: () => {
          const { out, hidden } = profileOnce(() => step(params, state, inputs));
          consume(out);
          return {
            memory_analysis: memoryFigures(step.lower(...optimizerStructs(d, offloaded ? sPinned : undefined)).compile().memoryAnalysis()),
            peak_bytes_in_use: peakBytesInUse(),
            ...(offloaded ? { hidden_transfer_fraction: hidden } : {}),
          };
        },
        dispose: () => disposeTree([params, state, inputs]),
      };
    },
  });
  return [program('adam_step', false), program('adam_step_offloaded', true)];
}

// ---- compile time, in fresh processes ----

/** Child mode (gpu-suite.js --compile-child SIZES): time the first call of jit(grad(scanned)) and print it as JSON. */
export function compileChild(s: TutorialSizes): void {
  const [w, x] = activationInputs(s);
  blockTree([w, x]);
  const start = performance.now();
  const grads = jax.jit(jax.grad(scanned))(w, x);
  blockTree(grads);
  console.log(JSON.stringify({ first_call_ms: performance.now() - start }));
}

const SUITE = fileURLToPath(new URL('../gpu-suite.js', import.meta.url));

function firstCallMs(sizes: string, cacheDir: string): number {
  const stdout = execFileSync(process.execPath, [SUITE, '--compile-child', sizes], { env: { ...process.env, JAXON_CACHE_DIR: cacheDir }, encoding: 'utf8' });
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { first_call_ms: number }).first_call_ms;
}

function compileWorkloads(s: SizeSpec, sizes: string): Workload[] {
  const t = s.tutorial;
  const shape = `L${t.layers} ${t.batch}x${t.width} h${t.hidden}`;
  // trace + compile + first run of jit(grad(scanned)) in a new process; cold: an empty kernel cache, warm: the cache a cold run filled.
  // Each pair of runs shares a cache folder, and the two rows share the pairs (whichever row runs first measures them).
  let pairs: { cold: number; warm: number }[] | null = null;
  const measurePairs = () => {
    pairs ??= Array.from({ length: s.compile.samples }, () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'jaxon-bench-cache-'));
      try {
        const cold = firstCallMs(sizes, dir);
        return { cold, warm: firstCallMs(sizes, dir) };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    return pairs;
  };
  const row = (name: string, warm: boolean): Workload => ({
    name, kind: 'compile', shape, dtype: 'float32', flops: 0, bytes: 0,
    measure: () => ({
      samples: measurePairs().map((p) => (warm ? p.warm : p.cold)),
      extra: { process: 'fresh node process per sample', cache: warm ? 'the disk cache a cold run filled' : 'empty JAXON_CACHE_DIR' },
    }),
  });
  return [row('compile_cold', false), row('compile_warm', true)];
}

export function tutorialWorkloads(s: SizeSpec, sizes: string): Workload[] {
  return [...activationWorkloads(s.tutorial), ...adamWorkloads(s.tutorial), ...compileWorkloads(s, sizes)];
}
