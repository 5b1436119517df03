// `npm start`: JAX's tutorial "JAX Memories and Host Offloading"
// (docs.jax.dev/en/latest/notebooks/host-offloading.html) in TypeScript, with
// the same programs, shapes, policies and printing: the building blocks
// (NamedSharding memory kinds, devicePut, outShardings), activation
// offloading (checkpoint names and saveAndOffloadOnlyTheseNames under remat
// inside scan), parameter offloading (host weights streamed in per layer),
// and optimizer-state offloading (optax adam state in pinned_host, put on the
// device inside the step, sent back by outShardings). Each section prints
// memoryAnalysis() of the tutorial's full-size program cross-lowered for
// CUDA (lowering allocates nothing) next to JAX's figures on an H100, then
// runs the program and checks it against the program without offloading. On
// the CPU the runs use smaller sizes unless --full is given. Each section also
// writes the program's memory plan (Compiled.memoryPlan().toSVG(): buffers
// over the schedule, one lane per memory kind, the peak marked) into
// ./memory-plans/, with one more picture per nested scan / while / cond
// plan, and prints the paths. The programs are exported for
// test/offloading.test.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/index.js';
import type { MemoryAnalysis } from '../lib/compiler/analysis.js';
import type { MemoryPlan } from '../lib/compiler/memory-plan.js';
import * as optax from '../lib/optax/index.js';

const jnp = jax.numpy;
const { Mesh, NamedSharding, P, SingleDeviceSharding } = jax.sharding;
type Sharding = jax.sharding.Sharding;
type Weights = [Array, Array];

// ---- activation offloading ----

/** The baseline layer: two linear transformations, no names. */
export function twoLayers(x: Array, [w1, w2]: Weights): [Array, null] {
  const y = jnp.matmul(x, w1);
  return [jnp.matmul(y, w2), null];
}

/** The baseline network: the layer applied once per slice of the weights by lax.scan, summed. */
export function scanned(w: Weights, x: Array): Array {
  const [result] = jax.lax.scan(twoLayers, x, w);
  return jnp.sum(result as Array);
}

/** The layer with its input named "x" for the checkpoint policy. */
export function layerName(x: Array, [w1, w2]: Weights): [Array, null] {
  x = jax.checkpointName(x, 'x');
  const y = jnp.matmul(x, w1);
  return [jnp.matmul(y, w2), null];
}

/** No values stored on the device; activations named "x" offloaded from the device to pinned host memory. */
export const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({
  namesWhichCanBeSaved: [],
  namesWhichCanBeOffloaded: ['x'],
  offloadSrc: 'device',
  offloadDst: 'pinned_host',
});

/** The network with each layer rematerialized under a checkpoint policy (the tutorial's, by default). */
export function scannedWithPolicy(layer: (x: Array, w: Weights) => [Array, null], remat: jax.CheckpointPolicy = policy) {
  return (w: Weights, x: Array): Array => {
    const rematLayer = jax.remat(layer, { policy: remat, preventCse: false });
    const [result] = jax.lax.scan(rematLayer, x, w);
    return jnp.sum(result as Array);
  };
}

// ---- parameter offloading ----

/** The hybrid layer: the layer's weights are moved to the device first (they live in pinned host memory). */
export function hybridLayer(sDev: Sharding) {
  return (x: Array, w: Weights): [Array, null] => {
    const [w1, w2] = jax.tree.map((v: Array) => jax.devicePut(v, sDev), w) as Weights;
    x = jax.checkpointName(x, 'x');
    const y = jnp.matmul(x, w1);
    return [jnp.matmul(y, w2), null];
  };
}

// ---- optimizer-state offloading ----

export type Params = Record<string, Array>;

/** optax.chain(optax.clip_by_global_norm(1.0), optax.adam(learning_rate=0.1)) */
export const makeOptimizer = () => optax.chain(optax.clipByGlobalNorm(1.0), optax.adam(0.1));

export function gelu(x: Array): Array {
  const inner = jnp.multiply(jnp.sqrt(2 / jnp.pi), jnp.add(x, jnp.multiply(0.044715, jnp.power(x, 3))));
  return jnp.multiply(jnp.multiply(0.5, x), jnp.add(1, jnp.tanh(inner)));
}

export function forward(params: Params, x: Array): Array {
  for (let i = 1; i <= 4; i++) x = gelu(jnp.matmul(x, params[`w${i}`]!));
  return x;
}

export function computeLoss(params: Params, inputs: Array): Array {
  const outputs = forward(params, inputs);
  const loss = jnp.mean(jnp.power(jnp.subtract(outputs, inputs), 2));
  let sum: Array | number = 0;
  for (const w of jax.tree.leaves(params) as Array[]) sum = jnp.add(sum, jnp.sum(jnp.power(w, 2)));
  return jnp.add(loss, jnp.multiply(0.001, sum));
}

/** The training step with everything on the device. */
export function trainStep(optimizer: optax.GradientTransformation<unknown[]>) {
  return (params: Params, optState: unknown, inputs: Array): [Params, unknown] => {
    const grads = jax.grad((p: Params) => computeLoss(p, inputs))(params) as Params;
    const [updates, newOptState] = optimizer.update(grads, optState as unknown[], params);
    return [optax.applyUpdates(params, updates), newOptState];
  };
}

/** The training step whose optimizer state arrives in pinned host memory and is put on the device for the update. */
export function offloadedTrainStep(optimizer: optax.GradientTransformation<unknown[]>, sDev: Sharding) {
  return (params: Params, optState: unknown, inputs: Array): [Params, unknown] => {
    const grads = jax.grad((p: Params) => computeLoss(p, inputs))(params) as Params;
    const onDevice = jax.devicePut(optState as never, sDev) as unknown[];
    const [updates, newOptState] = optimizer.update(grads, onDevice, params);
    return [optax.applyUpdates(params, updates), newOptState];
  };
}

// ---- sizes, structs and printing ----

export interface Sizes {
  /** activation and parameter offloading: layers, the input's rows and columns, the hidden width */
  layers: number;
  batch: number;
  width: number;
  hidden: number;
  /** optimizer-state offloading: the square matrices' size */
  dim: number;
}

/** The tutorial's sizes. */
export const FULL_SIZES: Sizes = { layers: 10, batch: 256, width: 256, hidden: 1024, dim: 7168 };
/** What the CPU runs by default. */
export const SMALL_SIZES: Sizes = { layers: 10, batch: 128, width: 128, hidden: 512, dim: 384 };

const MB = 1024 ** 2;
const GB = 1024 ** 3;

/** total = temp + argument + output - alias, the tutorial's device total. */
export const totalSize = (m: MemoryAnalysis): number => m.tempSizeInBytes + m.argumentSizeInBytes + m.outputSizeInBytes - m.aliasSizeInBytes;

/** The tutorial's three lines (its print helper), in MB or GB. */
export function memoryLines(m: MemoryAnalysis, unit: 'MB' | 'GB'): string[] {
  const d = unit === 'MB' ? MB : GB;
  return [
    `Temp size: ${(m.tempSizeInBytes / d).toFixed(2)} ${unit}`,
    `Argument size: ${(m.argumentSizeInBytes / d).toFixed(2)} ${unit}`,
    `Total size: ${(totalSize(m) / d).toFixed(2)} ${unit}`,
  ];
}

function hostLine(m: MemoryAnalysis, unit: 'MB' | 'GB'): string {
  const d = unit === 'MB' ? MB : GB;
  const f = (n: number) => `${(n / d).toFixed(2)} ${unit}`;
  return `  pinned_host: temp ${f(m.hostTempSizeInBytes)}, argument ${f(m.hostArgumentSizeInBytes)}, output ${f(m.hostOutputSizeInBytes)}; device output ${f(m.outputSizeInBytes)}, alias ${f(m.aliasSizeInBytes)}`;
}

const struct = (shape: number[], sharding?: Sharding) => new jax.ShapeDtypeStruct(shape, 'float32', sharding ? { sharding } : {});

/** The weights' and input's ShapeDtypeStructs at some sizes, the weights in `weights` memory. */
export function activationStructs(s: Sizes, weights?: Sharding): [[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct], jax.ShapeDtypeStruct] {
  return [[struct([s.layers, s.width, s.hidden], weights), struct([s.layers, s.hidden, s.width], weights)], struct([s.batch, s.width])];
}

/** The four parameters' and the optimizer state's ShapeDtypeStructs, the state in `state` memory. */
export function optimizerStructs(dim: number, state?: Sharding): [Record<string, jax.ShapeDtypeStruct>, unknown, jax.ShapeDtypeStruct] {
  const params = Object.fromEntries([1, 2, 3, 4].map((i) => [`w${i}`, struct([dim, dim])]));
  const optimizer = makeOptimizer();
  let optState = jax.evalShape((p: Params) => optimizer.init(p), params);
  if (state) optState = jax.tree.map((x: jax.ShapeDtypeStruct) => new jax.ShapeDtypeStruct(x.shape, x.dtype, { sharding: state }), optState as never);
  return [params, optState, struct([dim, dim])];
}

/** JAX's figures on an H100 from the tutorial (MB = MiB, GB = GiB; its offloaded step prints "Argument size: 0.96 MB" for 0.96 GB). */
export const JAX_H100 = {
  baseline: { temp: 17.25, argument: 20.25, total: 57.5 },
  activation: { temp: 6.5, argument: 20.25, total: 46.75 },
  parameter: { temp: 4.75, argument: 0.25, total: 25.0 },
  adam: { temp: 2.11, argument: 2.49, total: 4.59 },
  adamOffloaded: { temp: 1.91, argument: 0.96, total: 2.87 },
};

/** The weights and input as the tutorial makes them: ones times 0.001. */
function activationData(s: Sizes): [Weights, Array] {
  const input = jnp.multiply(jnp.ones([s.batch, s.width], { dtype: 'float32' }), 0.001);
  const w1 = jnp.multiply(jnp.ones([s.layers, s.width, s.hidden], { dtype: 'float32' }), 0.001);
  const w2 = jnp.multiply(jnp.ones([s.layers, s.hidden, s.width], { dtype: 'float32' }), 0.001);
  return [[w1, w2], input];
}

/** Where `npm start` writes the memory plans' SVGs (relative to the working directory). */
export const PLANS_DIR = 'memory-plans';

/**
 * Writes a memory plan's SVG as `dir/name.svg`, and each nested control-flow plan's as
 * `dir/name.step<K>-<primitive>-<body|cond|branch-i>.svg`; returns the paths, the program's first.
 */
export function writeMemoryPlans(plan: MemoryPlan, dir: string, name: string, title: string): string[] {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.svg`);
  writeFileSync(file, plan.toSVG({ title }));
  const paths = [file];
  for (const call of plan.calls) {
    for (const nested of call.plans) {
      const part = `${name}.step${call.step}-${call.primitive}-${nested.name.replace(/ /g, '-')}`;
      paths.push(...writeMemoryPlans(nested.plan, dir, part, `${title}: the ${call.primitive} at step ${call.step}, its ${nested.name}`));
    }
  }
  return paths;
}

const allclose = (a: Array, b: Array) => jnp.allclose(a, b, { rtol: 1e-5, atol: 1e-5 }).item() as boolean;

// ---- the tutorial ----

function main(argv: readonly string[]): void {
  const unknown = argv.filter((a) => a !== '--full' && a !== '--small');
  if (unknown.length) throw new TypeError(`host-offloading: unknown argument ${unknown.map((a) => JSON.stringify(a)).join(', ')} (expected --full or --small)`);
  const full = argv.includes('--full');
  const run = full ? FULL_SIZES : SMALL_SIZES;
  const platform = jax.defaultBackend();
  const out = (...lines: string[]) => console.log(lines.join('\n'));
  const analyze = (
    lowered: { compile(): { memoryAnalysis(): MemoryAnalysis; memoryPlan(): MemoryPlan } },
    unit: 'MB' | 'GB',
    jaxFigures: { temp: number; argument: number; total: number },
    plan: { name: string; title: string },
  ) => {
    const compiled = lowered.compile();
    const m = compiled.memoryAnalysis();
    const memoryPlan = compiled.memoryPlan();
    const [file, ...nested] = writeMemoryPlans(memoryPlan, PLANS_DIR, plan.name, `${plan.title} (cross-lowered for cuda)`);
    const peak = memoryPlan.peak.device;
    out(
      'memoryAnalysis of the full-size program, cross-lowered for cuda:',
      ...memoryLines(m, unit),
      `  (JAX on an H100: Temp size: ${jaxFigures.temp.toFixed(2)} ${unit}, Argument size: ${jaxFigures.argument.toFixed(2)} ${unit}, Total size: ${jaxFigures.total.toFixed(2)} ${unit})`,
      hostLine(m, unit),
      `Memory plan: ${file} (device peak at step ${peak.step} of ${memoryPlan.steps.length}, ${peak.live.length} buffers live)${nested.length ? `; nested plans: ${nested.join(', ')}` : ''}`,
    );
  };
  const runs = (describe: (s: Sizes) => string) => out(full
    ? `Running on ${platform} at the tutorial's sizes (${describe(FULL_SIZES)}):`
    : `Running on ${platform} at smaller sizes (${describe(SMALL_SIZES)}; --full runs the tutorial's ${describe(FULL_SIZES)}):`);
  const what = (s: Sizes) => `input [${s.batch}, ${s.width}], w1 [${s.layers}, ${s.width}, ${s.hidden}], w2 [${s.layers}, ${s.hidden}, ${s.width}]`;
  const dims = (s: Sizes) => `DIM ${s.dim}`;
  out(`JAX Memories and Host Offloading, in jaxon (default backend: ${platform})`, '');

  // -- building blocks --
  out('## Building Blocks for Offloading');
  const mesh = new Mesh([[jax.devices()[0]!]], ['x', 'y']);
  const sDev = new NamedSharding(mesh, P('x', 'y'), { memoryKind: 'device' });
  const sHost = sDev.withMemoryKind('pinned_host');
  out(String(sDev), String(sHost));
  const arr = jnp.arange(8.0).reshape([2, 4]);
  const arrHost = jax.devicePut(arr, sHost);
  const arrDev = jax.devicePut(arr, sDev);
  out(arrHost.sharding.memoryKind, arrDev.sharding.memoryKind);
  out('Result value of H2D: \n', String(jax.jit((x: Array) => x, { outShardings: sDev })(arrHost)));
  const addFunc = (x: Array) => jnp.add(jax.devicePut(x, sDev), 1);
  out('Result value of H2D and add 1 in device memory: \n', String(jax.jit(addFunc, { outShardings: sDev })(arrHost)));
  const outHost = jax.jit((x: Array) => x, { outShardings: sHost })(arrDev) as Array;
  out(`Result value of D2H (in ${outHost.sharding.memoryKind}): \n`, String(outHost), '');

  // -- activation offloading --
  out('## Activation Offloading', '', '### Baseline: 10 layers of x @ w1 @ w2 under lax.scan, jit(grad(scanned))');
  const f = jax.jit(jax.grad(scanned));
  analyze(f.lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }), 'MB', JAX_H100.baseline, { name: 'baseline', title: 'Baseline: jit(grad(scanned))' });
  runs(what);
  const [w, input] = activationData(run);
  const result = f(w, input) as Weights;
  out(`Sample of results:  ${String(result[0].index(0, 0, [0, 5]))}`, '');

  out('### Activation offloading: remat(layerName, saveAndOffloadOnlyTheseNames(offloaded: ["x"]))');
  const fOffload = jax.jit(jax.grad(scannedWithPolicy(layerName)));
  analyze(fOffload.lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }), 'MB', JAX_H100.activation, { name: 'activation-offloading', title: 'Activation offloading: remat(layerName) under saveAndOffloadOnlyTheseNames' });
  runs(what);
  const resultActivation = fOffload(w, input) as Weights;
  out(`Results match within tolerance: ${allclose(resultActivation[0], result[0])}`);
  out(`Sample of results:  ${String(resultActivation[0].index(0, 0, [0, 5]))}`, '');

  // -- parameter offloading --
  out('## Parameter Offloading', '', '### Hybrid: weights in pinned_host, each layer\'s slice put on the device inside the scan, activation offloading as before');
  const fHybrid = jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev))));
  analyze(fHybrid.lower(...activationStructs(FULL_SIZES, sHost), { platform: 'cuda' }), 'MB', JAX_H100.parameter, { name: 'parameter-offloading', title: 'Parameter + activation offloading: host weights put on the device per layer' });
  runs(what);
  const [wh1, wh2] = [jax.devicePut(w[0], sHost), jax.devicePut(w[1], sHost)];
  const resultBoth = fHybrid([wh1, wh2], input) as Weights;
  // the gradient of a host parameter is a host array (the transpose of a device_put moves the cotangent back)
  out(`Gradients in ${resultBoth[0].sharding.memoryKind}`);
  out(`Results match within tolerance: ${allclose(resultActivation[0], jax.devicePut(resultBoth[0], sDev))}`, '');

  // -- optimizer-state offloading --
  out('# Optimizer State Offloading', '', '### Basic implementation: 4 layers of 7168 x 7168 with gelu, optax chain(clipByGlobalNorm(1), adam(0.1)), jit(step, donateArgnums: [0, 1])');
  const optimizer = makeOptimizer();
  const step = jax.jit(trainStep(optimizer), { donateArgnums: [0, 1] });
  analyze(step.lower(...optimizerStructs(FULL_SIZES.dim), { platform: 'cuda' }), 'GB', JAX_H100.adam, { name: 'adam', title: 'Adam step, everything on the device, parameters and state donated' });
  const sDevice = new SingleDeviceSharding(jax.devices()[0]!, { memoryKind: 'device' });
  const sPinned = new SingleDeviceSharding(jax.devices()[0]!, { memoryKind: 'pinned_host' });
  out('', '### Offloaded: the optimizer state in pinned_host, put on the device in the step, jit(step, donateArgnums: [0], outShardings: [sDev, sHost])');
  const offloadStep = jax.jit(offloadedTrainStep(optimizer, sDevice), { donateArgnums: [0], outShardings: [sDevice, sPinned] });
  analyze(offloadStep.lower(...optimizerStructs(FULL_SIZES.dim, sPinned), { platform: 'cuda' }), 'GB', JAX_H100.adamOffloaded, { name: 'optimizer-state-offloading', title: 'Adam step, optimizer state in pinned_host' });
  runs(dims);
  const ones = () => Object.fromEntries([1, 2, 3, 4].map((i) => [`w${i}`, jnp.ones([run.dim, run.dim], { dtype: 'float32' })])) as Params;
  const inputs = jnp.ones([run.dim, run.dim], { dtype: 'float32' });
  const [newParams, newOptState] = step(ones(), optimizer.init(ones()), inputs) as [Params, unknown];
  const optState = jax.devicePut(optimizer.init(ones()) as never, sPinned);
  const [offloadParams, offloadOptState] = offloadStep(ones(), optState, inputs) as [Params, unknown];
  const stateLeaves = jax.tree.leaves(offloadOptState) as Array[];
  out(`Optimizer state after the step in ${[...new Set(stateLeaves.map((l) => l.sharding.memoryKind))].join(', ')}`);
  const same = [
    ...Object.keys(newParams).map((k) => allclose(newParams[k]!, offloadParams[k]!)),
    ...(jax.tree.leaves(newOptState) as Array[]).map((l, i) => allclose(l, jax.devicePut(stateLeaves[i]!, sDevice))),
  ];
  out(`Results match within tolerance: ${same.every(Boolean)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
