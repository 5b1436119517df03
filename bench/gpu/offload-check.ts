// A check for GPU sessions: the tutorial's gradients (examples/host-offloading.ts)
// with activation and with parameter offloading against the baseline program,
// on the default device, with the transfers on their copy streams and (in a
// second process, JAXON_CUDA_SERIAL_TRANSFERS=1) all on the compute stream:
// prints the largest absolute and relative differences per gradient, so a
// transfer race (differences that vanish when serial) shows apart from
// rounding. Then measured against planned (measured-peak.ts): each tutorial
// program (the three above, the Adam step and the offloaded Adam step of
// DIM x DIM parameters) run once between a reset of the allocators' peaks and
// a synchronize; a line per program, and exit status 1 if a figure differs.
// Run: node dist/bench/gpu/offload-check.js [layers batch width hidden [dim]]
import * as jax from '../../lib/index.js';
import {
  type Params, hybridLayer, layerName, makeOptimizer, offloadedTrainStep, scanned, scannedWithPolicy, trainStep,
} from '../../examples/host-offloading.js';
import { measurePeak } from './measured-peak.js';

const jnp = jax.numpy;
const [layers, batch, width, hidden, dim] = process.argv.slice(2).map(Number);
const s = { layers: layers || 10, batch: batch || 16, width: width || 32, hidden: hidden || 64 };
const key = jax.random.key(0);
const [k1, k2, k3] = [jax.random.foldIn(key, 1), jax.random.foldIn(key, 2), jax.random.foldIn(key, 3)];
const w: [jax.Array, jax.Array] = [
  jnp.multiply(jax.random.normal(k1, [s.layers, s.width, s.hidden]), 1 / Math.sqrt(s.width)),
  jnp.multiply(jax.random.normal(k2, [s.layers, s.hidden, s.width]), 1 / Math.sqrt(s.hidden)),
];
const x = jax.random.normal(k3, [s.batch, s.width]);
const mesh = new jax.sharding.Mesh([[jax.devices()[0]!]], ['x', 'y']);
const sDev = new jax.sharding.NamedSharding(mesh, jax.sharding.P('x', 'y'), { memoryKind: 'device' });
const sHost = sDev.withMemoryKind('pinned_host');
const reference = jax.jit(jax.grad(scanned))(w, x) as jax.Array[];
const variants: [string, () => jax.Array[]][] = [
  ['activation offload', () => jax.jit(jax.grad(scannedWithPolicy(layerName)))(w, x) as jax.Array[]],
  ['parameter offload', () => jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev))))([jax.devicePut(w[0], sHost), jax.devicePut(w[1], sHost)], x) as jax.Array[]],
];
console.log(`${jax.environmentInfo().platform} ${String(jax.devices()[0])}, sizes ${JSON.stringify(s)}, serial transfers: ${process.env['JAXON_CUDA_SERIAL_TRANSFERS'] === '1'}`);
for (const [name, run] of variants) {
  for (let repeat = 0; repeat < 3; repeat++) {
    const got = run();
    const diffs = got.map((g, i) => {
      const a = g.dataSync();
      const b = reference[i]!.dataSync();
      let abs = 0;
      let rel = 0;
      for (let k = 0; k < b.length; k++) {
        const d = Math.abs(Number(a[k]) - Number(b[k]));
        abs = Math.max(abs, d);
        rel = Math.max(rel, d / Math.max(Math.abs(Number(b[k])), 1e-3));
      }
      return `gradient ${i} (${g.memorySpace}): max abs ${abs.toExponential(2)}, max rel ${rel.toExponential(2)}`;
    });
    console.log(`${name} #${repeat}: ${diffs.join('; ')}`);
  }
}

// ---- measured equals planned ----

const d = dim || 1024;
// the optimizer state has scalars (the step count): single-device shardings, as the tutorial's optimizer section
const sDev1 = new jax.sharding.SingleDeviceSharding(jax.devices()[0]!, { memoryKind: 'device' });
const sHost1 = new jax.sharding.SingleDeviceSharding(jax.devices()[0]!, { memoryKind: 'pinned_host' });
const optimizer = makeOptimizer();
const params = () => Object.fromEntries([1, 2, 3, 4].map((i) => [`w${i}`, jnp.multiply(jax.random.normal(jax.random.foldIn(key, 10 + i), [d, d]), 1 / Math.sqrt(d))])) as Params;
const inputs = jax.random.normal(jax.random.foldIn(key, 20), [d, d]);
const hostW = () => [jax.devicePut(w[0], sHost), jax.devicePut(w[1], sHost)];
type Runnable = Parameters<typeof measurePeak>[0];
const programs: [string, Runnable, () => unknown[]][] = [
  ['baseline', jax.jit(jax.grad(scanned)).lower(w, x).compile() as never, () => [w, x]],
  ['activation offload', jax.jit(jax.grad(scannedWithPolicy(layerName))).lower(w, x).compile() as never, () => [w, x]],
  ['parameter offload', jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev)))).lower(hostW(), x).compile() as never, () => [hostW(), x]],
  [`Adam step (DIM ${d})`, jax.jit(trainStep(optimizer), { donateArgnums: [0, 1] }).lower(params(), optimizer.init(params()), inputs).compile() as never,
    () => [params(), optimizer.init(params()), inputs]],
  [`optimizer-state offload (DIM ${d})`, jax.jit(offloadedTrainStep(optimizer, sDev1), { donateArgnums: [0], outShardings: [sDev1, sHost1] })
    .lower(params(), jax.devicePut(optimizer.init(params()) as never, sHost1), inputs).compile() as never,
    () => [params(), jax.devicePut(optimizer.init(params()) as never, sHost1), inputs]],
];
let mismatches = 0;
const MiB = 1024 ** 2;
const show = (f: { planned: number; requested: number; inUse: number }) => `planned ${(f.planned / MiB).toFixed(3)} MiB, measured ${(f.requested / MiB).toFixed(3)} MiB requested (${(f.inUse / MiB).toFixed(3)} MiB with the pool's rounding)`;
for (const [name, compiled, args] of programs) {
  const m = await measurePeak(compiled, args);
  const equal = m.device.requested === m.device.planned && m.pinnedHost.requested === m.pinnedHost.planned;
  if (!equal) mismatches++;
  console.log(`measured equals planned: ${equal} ${name}: device ${show(m.device)}; pinned_host ${show(m.pinnedHost)}`);
}
if (mismatches) {
  console.error(`offload-check: ${mismatches} program(s) measured other than planned`);
  process.exitCode = 1;
}
