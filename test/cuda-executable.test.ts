// Compiled programs on a CUDA device (runtime/cuda-executable.ts): every
// native program orders each pair of ops that touch the same bytes (one
// writing) by stream order or events, for the tutorial's offloading
// programs whose transfers run on the copy streams; and those programs give
// the baseline's gradients exactly, call after call. Found on an H100
// (2026-11-26): a host-to-device copy into the region a device-to-host copy
// still read waited only for compute, not for that copy, so the parameter-
// offload gradient of w2 was garbage on the second call (max error 160).
import test from 'ava';
import * as jax from '../lib/index.js';
import { hybridLayer, layerName, scanned, scannedWithPolicy } from '../examples/host-offloading.js';
import type { CudaExecutable } from '../lib/runtime/cuda-executable.js';

const jnp = jax.numpy;
const onCuda = jax.defaultBackend() === 'cuda';

if (!onCuda) {
  test('compiled programs on a CUDA device (skipped)', (t) => {
    t.log(`skipped: runs in the CUDA runs of the suite; here: ${jax.environmentInfo().cuda}`);
    t.pass();
  });
} else {
  const key = jax.random.key(0);
  const weights = (layers: number, width: number, hidden: number): [jax.Array, jax.Array] => [
    jnp.multiply(jax.random.normal(jax.random.foldIn(key, 1), [layers, width, hidden]), 1 / Math.sqrt(width)),
    jnp.multiply(jax.random.normal(jax.random.foldIn(key, 2), [layers, hidden, width]), 1 / Math.sqrt(hidden)),
  ];
  const mesh = () => new jax.sharding.Mesh([[jax.devices()[0]!]], ['x', 'y']);

  test('the tutorial programs order every pair of conflicting ops on the device (no transfer races)', (t) => {
    const sDev = new jax.sharding.NamedSharding(mesh(), jax.sharding.P('x', 'y'), { memoryKind: 'device' });
    const sHost = sDev.withMemoryKind('pinned_host');
    const w = weights(3, 128, 512);
    const x = jnp.ones([128, 128]);
    const host: [jax.Array, jax.Array] = [jax.devicePut(w[0], sHost), jax.devicePut(w[1], sHost)];
    const programs: [string, CudaExecutable][] = [
      ['baseline', jax.jit(jax.grad(scanned)).executable(w, x) as CudaExecutable],
      ['activation offload', jax.jit(jax.grad(scannedWithPolicy(layerName))).executable(w, x) as CudaExecutable],
      ['parameter offload', jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev)))).executable(host, x) as CudaExecutable],
    ];
    for (const [name, e] of programs) t.deepEqual(e.hazards(), [], name);
  });

  test('parameter offloading gives the baseline gradients exactly, call after call', (t) => {
    const sDev = new jax.sharding.NamedSharding(mesh(), jax.sharding.P('x', 'y'), { memoryKind: 'device' });
    const sHost = sDev.withMemoryKind('pinned_host');
    const w = weights(10, 128, 512);
    const x = jax.random.normal(jax.random.foldIn(key, 3), [128, 128]);
    const reference = (jax.jit(jax.grad(scanned))(w, x) as jax.Array[]).map((g) => g.dataSync());
    const f = jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev))));
    const host: [jax.Array, jax.Array] = [jax.devicePut(w[0], sHost), jax.devicePut(w[1], sHost)];
    for (let call = 0; call < 3; call++) {
      const grads = f(host, x) as jax.Array[];
      grads.forEach((g, i) => t.deepEqual(g.dataSync(), reference[i], `call ${call}, gradient ${i}`));
    }
  });

  test('a loop body nested two deep renders its kernels for the alignment its operands really have', (t) => {
    // the inner scan reads the outer scan's x, a window of xs every 24 bytes: 8-byte aligned, so no 16-byte vector loads
    const f = jax.jit((xs: jax.Array) => jax.lax.scan((c: jax.Array, x: jax.Array) => {
      const [inner] = jax.lax.scan((d: jax.Array) => [jnp.add(jnp.multiply(d, 2), x), null] as [jax.Array, null], c, null, { length: 2 });
      return [inner, jnp.sum(inner as jax.Array)] as [jax.Array, jax.Array];
    }, jnp.zeros([6]), xs));
    const xs = jnp.arange(30).astype('float32').reshape([5, 6]);
    const [c, ys] = f(xs) as [jax.Array, jax.Array];
    t.deepEqual(c.tolistSync(), [2016, 3039, 4062, 5085, 6108, 7131]);
    t.deepEqual(ys.tolistSync(), [45, 333, 1593, 6741, 27441]);
    const inner = (f.executable(xs) as CudaExecutable).kernels().find((k) => k.label === 'mul add')!;
    t.regex(inner.source, /alignments: \[16,16,8\]/);
    t.false(inner.source.includes('jx_vec<float, 4>'));
  });
}
