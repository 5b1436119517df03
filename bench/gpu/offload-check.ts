// A check for GPU sessions: the tutorial's gradients (examples/host-offloading.ts)
// with activation and with parameter offloading against the baseline program,
// on the default device, with the transfers on their copy streams and (in a
// second process, JAXON_CUDA_SERIAL_TRANSFERS=1) all on the compute stream:
// prints the largest absolute and relative differences per gradient, so a
// transfer race (differences that vanish when serial) shows apart from
// rounding. Run: node dist/bench/gpu/offload-check.js [layers batch width hidden]
import * as jax from '../../lib/index.js';
import { hybridLayer, layerName, scanned, scannedWithPolicy } from '../../examples/host-offloading.js';

const jnp = jax.numpy;
const [layers, batch, width, hidden] = process.argv.slice(2).map(Number);
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
