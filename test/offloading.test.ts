// Host offloading, as JAX's tutorial "JAX Memories and Host Offloading"
// does it (examples/host-offloading.ts holds the programs): the static
// targets, memoryAnalysis() of the tutorial's full-size programs
// cross-lowered for CUDA against JAX's figures on an H100 (MB = MiB, GB =
// GiB); runs at small sizes on the CPU against the programs without
// offloading; the plan's memory-aware schedule (host-to-device copies just
// before their readers, device-to-host copies just after their producers,
// outputs written over operands that die) and the transfer streams and
// windows it records; and the tutorial script itself.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/index.js';
import { itemsize } from '../lib/core/dtype.js';
import type { MemoryAnalysis } from '../lib/compiler/analysis.js';
import {
  FULL_SIZES, JAX_H100, type Params, type Sizes, activationStructs, hybridLayer, layerName, makeOptimizer, offloadedTrainStep,
  optimizerStructs, scanned, scannedWithPolicy, totalSize, trainStep, twoLayers,
} from '../examples/host-offloading.js';
import { assertArray } from './helpers/oracle.js';
import { measurePeak } from '../bench/gpu/measured-peak.js';

const jnp = jax.numpy;
const { SingleDeviceSharding } = jax.sharding;
const dev = jax.devices()[0]!;
const sDev = new SingleDeviceSharding(dev, { memoryKind: 'device' });
const sHost = new SingleDeviceSharding(dev, { memoryKind: 'pinned_host' });
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const f32 = 4;

const describe = (m: MemoryAnalysis, unit: number, name: string) =>
  `temp ${(m.tempSizeInBytes / unit).toFixed(3)}, argument ${(m.argumentSizeInBytes / unit).toFixed(3)}, output ${(m.outputSizeInBytes / unit).toFixed(3)}, alias ${(m.aliasSizeInBytes / unit).toFixed(3)}, total ${(totalSize(m) / unit).toFixed(3)} ${name}; pinned_host: temp ${(m.hostTempSizeInBytes / unit).toFixed(3)}, argument ${(m.hostArgumentSizeInBytes / unit).toFixed(3)}, output ${(m.hostOutputSizeInBytes / unit).toFixed(3)}`;

// ---- static targets (cross-lowered for cuda; lowering allocates nothing) ----

test('target: activation offloading (saveAndOffloadOnlyTheseNames "x" under remat in scan): temp <= 6.50 MB, total <= 46.75 MB, the stacked residuals in the pinned-host arena', (t) => {
  const m = jax.jit(jax.grad(scannedWithPolicy(layerName))).lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }).compile().memoryAnalysis();
  t.log(describe(m, MiB, 'MiB'), `(JAX on an H100: temp ${JAX_H100.activation.temp}, total ${JAX_H100.activation.total})`);
  t.true(m.tempSizeInBytes <= JAX_H100.activation.temp * MiB, `temp ${m.tempSizeInBytes / MiB} MiB`);
  t.true(totalSize(m) <= JAX_H100.activation.total * MiB, `total ${totalSize(m) / MiB} MiB`);
  t.is(m.argumentSizeInBytes, 20.25 * MiB);
  t.is(m.outputSizeInBytes, 20 * MiB);
  // each layer's input x [256, 256] goes to the host in the forward scan and comes back in the backward one
  t.is(m.hostTempSizeInBytes, 10 * 256 * 256 * f32);
  t.is(m.hostArgumentSizeInBytes + m.hostOutputSizeInBytes, 0);
  // without the policy, nothing is on the host and more is on the device
  const base = jax.jit(jax.grad(scanned)).lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }).compile().memoryAnalysis();
  t.is(base.hostTempSizeInBytes, 0);
  t.true(m.tempSizeInBytes < base.tempSizeInBytes, `offloaded ${m.tempSizeInBytes} vs baseline ${base.tempSizeInBytes}`);
});

test('target: offloadDotWithNoBatchDims under remat in scan puts each layer\'s x @ w1 in the pinned-host arena', (t) => {
  const policy = jax.checkpointPolicies.offloadDotWithNoBatchDims('device', 'pinned_host');
  const compiled = jax.jit(jax.grad(scannedWithPolicy(twoLayers, policy))).lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }).compile();
  const m = compiled.memoryAnalysis();
  t.log(describe(m, MiB, 'MiB'));
  t.is(m.hostTempSizeInBytes, 10 * 256 * 1024 * f32, 'ten [256, 1024] products');
  t.true(totalSize(m) <= JAX_H100.activation.total * MiB);
  t.regex(compiled.asText(), /copy \S+ -> \S+ \[device_put\] \{d2h: /);
  t.regex(compiled.asText(), /copy \S+ -> \S+ \[device_put\] \{h2d: /);
});

test('target: activation + parameter offloading: argument 0.25 MB, temp <= 4.75 MB, total <= 25.00 MB, the weights as host arguments', (t) => {
  const compiled = jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev)))).lower(...activationStructs(FULL_SIZES, sHost), { platform: 'cuda' }).compile();
  const m = compiled.memoryAnalysis();
  t.log(describe(m, MiB, 'MiB'), `(JAX on an H100: argument ${JAX_H100.parameter.argument}, temp ${JAX_H100.parameter.temp}, total ${JAX_H100.parameter.total})`);
  t.is(m.argumentSizeInBytes, 0.25 * MiB);
  t.is(m.hostArgumentSizeInBytes, 20 * MiB);
  t.true(m.tempSizeInBytes <= JAX_H100.parameter.temp * MiB, `temp ${m.tempSizeInBytes / MiB} MiB`);
  t.true(totalSize(m) <= JAX_H100.parameter.total * MiB, `total ${totalSize(m) / MiB} MiB`);
  t.is(m.hostTempSizeInBytes, 10 * 256 * 256 * f32);
  // the weights' gradients go back where the weights are (the transpose of device_put), stacked by the backward scan
  t.is(m.hostOutputSizeInBytes, 20 * MiB);
  t.is(m.outputSizeInBytes, 0);
});

test('target: the 4-layer 7168 MLP Adam step with donated parameters and state: total <= 4.59 GB, every output written into its donated argument', (t) => {
  const m = jax.jit(trainStep(makeOptimizer()), { donateArgnums: [0, 1] }).lower(...optimizerStructs(FULL_SIZES.dim), { platform: 'cuda' }).compile().memoryAnalysis();
  t.log(describe(m, GiB, 'GiB'), `(JAX on an H100: temp ${JAX_H100.adam.temp}, total ${JAX_H100.adam.total})`);
  const square = 7168 * 7168 * f32;
  t.is(m.argumentSizeInBytes, 13 * square + 4, 'params, mu, nu, the input and the int32 count');
  t.is(m.aliasSizeInBytes, m.outputSizeInBytes);
  t.true(totalSize(m) <= JAX_H100.adam.total * GiB, `total ${totalSize(m) / GiB} GiB`);
});

test('optimizer-state offloading: the state is a host argument and a host output; the device holds the params and the input', (t) => {
  const m = jax.jit(offloadedTrainStep(makeOptimizer(), sDev), { donateArgnums: [0], outShardings: [sDev, sHost] })
    .lower(...optimizerStructs(FULL_SIZES.dim, sHost), { platform: 'cuda' }).compile().memoryAnalysis();
  t.log(describe(m, GiB, 'GiB'), `(JAX on an H100: temp ${JAX_H100.adamOffloaded.temp}, argument ${JAX_H100.adamOffloaded.argument}, total ${JAX_H100.adamOffloaded.total})`);
  const square = 7168 * 7168 * f32;
  t.is(m.argumentSizeInBytes, 5 * square);
  t.is(m.hostArgumentSizeInBytes, 8 * square + 4);
  t.is(m.hostOutputSizeInBytes, 8 * square + 4);
  t.is(m.aliasSizeInBytes, 4 * square);
  // the backward pass's peak (gelu's tanh recomputed by the GEMM epilogues, not saved): 8 x 196 MiB
  t.true(m.tempSizeInBytes <= 8 * square + 64 * 1024, `temp ${m.tempSizeInBytes / GiB} GiB`);
});

test('target: optimizer-state offloading total <= 2.87 GB, one parameter\'s state brought in, updated and sent back at a time', (t) => {
  const compiled = jax.jit(offloadedTrainStep(makeOptimizer(), sDev), { donateArgnums: [0], outShardings: [sDev, sHost] })
    .lower(...optimizerStructs(FULL_SIZES.dim, sHost), { platform: 'cuda' }).compile();
  const m = compiled.memoryAnalysis();
  t.log(`total ${(totalSize(m) / GiB).toFixed(3)} GiB, temp ${(m.tempSizeInBytes / GiB).toFixed(3)} GiB (JAX on an H100: total ${JAX_H100.adamOffloaded.total}, temp ${JAX_H100.adamOffloaded.temp})`);
  t.true(totalSize(m) <= JAX_H100.adamOffloaded.total * GiB, `total ${totalSize(m) / GiB} GiB`);
  // each launch reads the device copies of at most one parameter's two moments
  const { steps, buffers } = compiled.plan.program;
  const square = 7168 * 7168;
  const moments = new Set(steps.flatMap((s) => (s.kind === 'copy' && buffers[s.src]!.memoryKind === 'pinned_host' && buffers[s.src]!.size === square ? [s.dst] : [])));
  t.is(moments.size, 8);
  const readers = steps.filter((s) => s.kind === 'launch' && s.buffers.some((b) => moments.has(b))) as Extract<typeof steps[number], { kind: 'launch' }>[];
  t.is(readers.length, 4, compiled.asText());
  for (const r of readers) t.is(r.buffers.filter((b) => moments.has(b)).length, 2, r.label);
  // the next parameter's moments come in while the kernel before their reader (the previous parameter's update) runs
  const updates = steps.flatMap((s, k) => (readers.includes(s as never) ? [k] : []));
  for (const k of updates.slice(1)) {
    let before = k - 1;
    while (steps[before]!.kind !== 'launch') before--;
    const incoming = compiled.plan.transfers.filter((x) => x.wait === k && x.stream === 'h2d');
    t.is(incoming.length, 2, JSON.stringify(incoming));
    t.true(incoming.every((x) => x.start < before), `step ${k}: ${JSON.stringify(incoming)} wait for the launch at ${before}`);
  }
});

// ---- runs at small sizes on the CPU ----

const SMALL: Sizes = { layers: 4, batch: 16, width: 8, hidden: 32, dim: 24 };

/** Weights and input with varied values (the tutorial's ones * 0.001 would hide transposed or misplaced slices). */
function smallData(s: Sizes): [[Array, Array], Array] {
  const x = jnp.sin(jnp.arange(s.batch * s.width, undefined, undefined, { dtype: 'float32' }).reshape([s.batch, s.width]));
  const w1 = jnp.multiply(jnp.cos(jnp.arange(s.layers * s.width * s.hidden, undefined, undefined, { dtype: 'float32' }).reshape([s.layers, s.width, s.hidden])), 0.3);
  const w2 = jnp.multiply(jnp.sin(jnp.multiply(jnp.arange(s.layers * s.hidden * s.width, undefined, undefined, { dtype: 'float32' }), 0.7).reshape([s.layers, s.hidden, s.width])), 0.3);
  return [[w1, w2], x];
}

test('activation offloading runs: saveAndOffloadOnlyTheseNames and offloadDotWithNoBatchDims gradients equal the baseline gradient', (t) => {
  const [w, x] = smallData(SMALL);
  const expected = jax.grad(scanned)(w, x) as [Array, Array];
  const policies = {
    saveAndOffloadOnlyTheseNames: { layer: layerName, policy: undefined },
    offloadDotWithNoBatchDims: { layer: twoLayers, policy: jax.checkpointPolicies.offloadDotWithNoBatchDims('device', 'pinned_host') },
  };
  for (const [name, { layer, policy }] of Object.entries(policies)) {
    const f = jax.jit(jax.grad(scannedWithPolicy(layer, policy)));
    const text = String(f.lower(w, x).compile().asText());
    t.regex(text, /\{d2h: /, `${name}: residuals go to the host`);
    t.regex(text, /\{h2d: /, `${name}: and come back`);
    const got = f(w, x) as [Array, Array];
    for (let i = 0; i < 2; i++) {
      t.is(got[i]!.memorySpace, 'device');
      assertArray(t, got[i]!, expected[i]!, { tol: 1e-5, message: `${name} grad ${i}` });
    }
  }
});

test('parameter streaming inside scan runs: host weights, one slice put on the device per layer, gradients equal the baseline and land on the host', (t) => {
  const [w, x] = smallData(SMALL);
  const expected = jax.grad(scanned)(w, x) as [Array, Array];
  const f = jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev))));
  const hostW = jax.devicePut(w, sHost) as [Array, Array];
  const compiled = f.lower(hostW, x).compile();
  t.is(compiled.memoryAnalysis().hostArgumentSizeInBytes, 2 * SMALL.layers * SMALL.width * SMALL.hidden * f32);
  const got = f(hostW, x) as [Array, Array];
  for (let i = 0; i < 2; i++) {
    t.is(got[i]!.memorySpace, 'pinned_host');
    t.is(got[i]!.sharding.memoryKind, 'pinned_host');
    assertArray(t, got[i]!, expected[i]!, { tol: 1e-5, message: `grad ${i}` });
  }
  // the weights stay usable (not donated)
  t.false(hostW[0].isDisposed);
});

test('optimizer-state offloading runs: 3 steps equal the on-device steps, the state stays in pinned_host, donation consumes the parameters', (t) => {
  const optimizer = makeOptimizer();
  const dim = SMALL.dim;
  const params = () => Object.fromEntries([1, 2, 3, 4].map((i) => [`w${i}`, jnp.multiply(jnp.cos(jnp.multiply(jnp.arange(dim * dim, undefined, undefined, { dtype: 'float32' }), 0.1 * i)).reshape([dim, dim]), 0.5)])) as Params;
  const inputs = jnp.sin(jnp.arange(dim * dim, undefined, undefined, { dtype: 'float32' })).reshape([dim, dim]);
  const step = jax.jit(trainStep(optimizer), { donateArgnums: [0, 1] });
  const offloaded = jax.jit(offloadedTrainStep(optimizer, sDev), { donateArgnums: [0], outShardings: [sDev, sHost] });
  let [p, s] = [params(), optimizer.init(params()) as unknown];
  let [q, r] = [params(), jax.devicePut(optimizer.init(params()) as never, sHost) as unknown];
  for (let k = 0; k < 3; k++) {
    const [p0, s0, q0, r0] = [p, s, q, r];
    [p, s] = step(p, s, inputs) as [Params, unknown];
    [q, r] = offloaded(q, r, inputs) as [Params, unknown];
    t.true(Object.values(p0).every((a) => a.isDisposed), `step ${k}: the donated parameters are consumed`);
    t.true((jax.tree.leaves(s0) as Array[]).every((a) => a.isDisposed), `step ${k}: the donated state is consumed`);
    t.true(Object.values(q0).every((a) => a.isDisposed), `step ${k}: the offloaded step's parameters are consumed`);
    t.false((jax.tree.leaves(r0) as Array[]).some((a) => a.isDisposed), `step ${k}: the host state is not donated`);
    for (const leaf of jax.tree.leaves(r) as Array[]) {
      t.is(leaf.memorySpace, 'pinned_host');
      t.is(leaf.sharding.memoryKind, 'pinned_host');
    }
    for (const key of Object.keys(p)) {
      t.is(q[key]!.memorySpace, 'device');
      assertArray(t, q[key]!, p[key]!, { tol: 1e-5, message: `step ${k} ${key}` });
    }
    const [onDevice, onHost] = [jax.tree.leaves(s) as Array[], jax.tree.leaves(r) as Array[]];
    t.is(onHost.length, onDevice.length);
    onDevice.forEach((leaf, i) => assertArray(t, onHost[i]!, leaf, { tol: 1e-5, message: `step ${k} state leaf ${i}` }));
  }
  // the moments moved: Adam did something
  t.true((jax.tree.leaves(r) as Array[]).some((l) => l.size > 1 && Math.abs(l.dataSync()[0]!) > 0));
});

// ---- measured equals planned (on a CUDA device: the emulated GPU in CI) ----

const onCuda = dev.platform === 'cuda';
(onCuda ? test.serial : test.serial.skip)('measured equals planned: each tutorial program\'s allocator peak during a call is memoryAnalysis()\'s temp + output - alias, device and pinned_host', async (t) => {
  const s: Sizes = { layers: 4, batch: 32, width: 32, hidden: 64, dim: 64 };
  const [w, x] = smallData(s);
  const hostW = () => jax.devicePut(w, sHost) as [Array, Array];
  const optimizer = makeOptimizer();
  const params = () => Object.fromEntries([1, 2, 3, 4].map((i) => [`w${i}`, jnp.multiply(jnp.cos(jnp.multiply(jnp.arange(s.dim * s.dim, undefined, undefined, { dtype: 'float32' }), 0.1 * i)).reshape([s.dim, s.dim]), 0.5)])) as Params;
  const inputs = jnp.sin(jnp.arange(s.dim * s.dim, undefined, undefined, { dtype: 'float32' })).reshape([s.dim, s.dim]);
  const programs: [string, { (...a: unknown[]): unknown; memoryAnalysis(): MemoryAnalysis }, () => unknown[]][] = [
    ['baseline', jax.jit(jax.grad(scanned)).lower(w, x).compile() as never, () => [w, x]],
    ['activation offload', jax.jit(jax.grad(scannedWithPolicy(layerName))).lower(w, x).compile() as never, () => [w, x]],
    ['activation + parameter offload', jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev)))).lower(hostW(), x).compile() as never, () => [hostW(), x]],
    ['Adam step, donated', jax.jit(trainStep(optimizer), { donateArgnums: [0, 1] }).lower(params(), optimizer.init(params()), inputs).compile() as never, () => [params(), optimizer.init(params()), inputs]],
    ['optimizer-state offload', jax.jit(offloadedTrainStep(optimizer, sDev), { donateArgnums: [0], outShardings: [sDev, sHost] })
      .lower(params(), jax.devicePut(optimizer.init(params()) as never, sHost), inputs).compile() as never, () => [params(), jax.devicePut(optimizer.init(params()) as never, sHost), inputs]],
  ];
  let hostChecked = 0;
  for (const [name, compiled, args] of programs) {
    const m = await measurePeak(compiled, args);
    t.log(name, JSON.stringify(m));
    t.true(m.device.planned > 0, name);
    t.is(m.device.requested, m.device.planned, `${name}: device`);
    t.true(m.device.inUse >= m.device.requested, `${name}: the pool's rounding only adds`);
    t.is(m.pinnedHost.requested, m.pinnedHost.planned, `${name}: pinned_host`);
    t.true(m.pinnedHost.inUse >= m.pinnedHost.requested);
    if (m.pinnedHost.planned > 0) hostChecked++;
  }
  t.is(hostChecked, 3, 'the offloaded residuals, the host gradients and the host optimizer state are in the pinned-host pool');
});

// ---- the plan's schedule: memory-aware order, in-place outputs, transfer streams ----

test('the schedule puts a host-to-device copy just before its reader and a device-to-host copy just after its producer', (t) => {
  // as written, the host value comes to the device first and the result leaves last
  const f = (hostW: Array, x: Array) => {
    const w = jax.devicePut(hostW, 'device');
    let h = x;
    for (let i = 0; i < 4; i++) h = jnp.tanh(jnp.matmul(h, jnp.multiply(h, 0.5)));
    const out = jnp.matmul(h, w);
    const offloaded = jax.devicePut(jnp.sin(h), 'pinned_host');
    return [offloaded, jnp.sum(out)];
  };
  const hostW = jax.devicePut(jnp.multiply(jnp.ones([32, 32]), 0.01), 'pinned_host');
  const x = jnp.multiply(jnp.cos(jnp.arange(32 * 32, undefined, undefined, { dtype: 'float32' })).reshape([32, 32]), 0.1);
  const compiled = jax.jit(f).lower(hostW, x).compile();
  const { steps } = compiled.plan.program;
  const h2d = steps.findIndex((s) => s.kind === 'copy' && compiled.plan.program.buffers[s.src]!.memoryKind === 'pinned_host');
  const d2h = steps.findIndex((s) => s.kind === 'copy' && compiled.plan.program.buffers[s.dst]!.memoryKind === 'pinned_host');
  const copyH2d = steps[h2d] as Extract<typeof steps[number], { kind: 'copy' }>;
  const copyD2h = steps[d2h] as Extract<typeof steps[number], { kind: 'copy' }>;
  const reader = steps.findIndex((s) => s.kind === 'launch' && s.buffers.includes(copyH2d.dst));
  const producer = steps.findIndex((s) => s.kind === 'launch' && s.buffers.includes(copyD2h.src));
  t.is(reader, h2d + 1, compiled.asText());
  t.is(d2h, producer + 1, compiled.asText());
  const transfers = compiled.plan.transfers;
  t.deepEqual(transfers.map((x) => x.stream).sort(), ['d2h', 'h2d']);
  const th = transfers.find((x) => x.stream === 'h2d')!;
  const td = transfers.find((x) => x.stream === 'd2h')!;
  // the transfer may start once its destination's space is free (here: at entry, or once earlier buffers there are dead) and is waited on by its reader
  t.true(th.start < h2d && th.wait === reader, JSON.stringify(th));
  t.true(td.start === producer && td.wait > d2h, JSON.stringify(td));
  const [offloaded, total] = compiled(hostW, x) as [Array, Array];
  const [eOff, eTotal] = f(hostW, x) as [Array, Array];
  t.is(offloaded.memorySpace, 'pinned_host');
  assertArray(t, offloaded, eOff, { tol: 1e-5 });
  assertArray(t, total, eTotal, { tol: 1e-5 });
});

test('transfer windows never overlap a buffer sharing the destination\'s or the source\'s space', (t) => {
  const compiled = jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev)))).lower(...activationStructs(FULL_SIZES, sHost), { platform: 'cuda' }).compile();
  let checked = 0;
  for (const plan of compiled.plan.allPlans()) {
    const { steps, buffers } = plan.program;
    const region = (id: number) => {
      const p = plan.placements[id]!;
      return p.place === 'arena' ? { kind: p.kind, lo: p.offset, hi: p.offset + buffers[id]!.size * itemsize(buffers[id]!.dtype) } : null;
    };
    const touches = (k: number) => {
      const s = steps[k]!;
      return s.kind === 'launch' ? s.buffers : s.kind === 'copy' ? [s.src, s.dst] : [...s.inputs, ...s.outputs];
    };
    for (const tr of plan.transfers) {
      const s = steps[tr.step] as Extract<typeof steps[number], { kind: 'copy' }>;
      t.true(tr.start < tr.step && tr.step < tr.wait, JSON.stringify(tr));
      for (const [id, from, to] of [[s.dst, tr.start + 1, tr.step], [s.src, tr.step, tr.wait - 1]] as const) {
        const r = region(id);
        if (!r) continue;
        for (let k = from; k <= to; k++) {
          for (const other of touches(k)) {
            const o = region(other);
            if (other === id || !o || o.kind !== r.kind || (other === s.src || other === s.dst)) continue;
            t.false(o.lo < r.hi && r.lo < o.hi, `step ${k} touches buffer ${other} inside the window of transfer ${JSON.stringify(tr)}`);
          }
        }
        checked++;
      }
    }
  }
  t.true(checked >= 4, `${checked} transfer windows checked`);
});

test('in place: each normalization in a chain writes over the operand it reads (a fused reduction\'s side output), and the result is right', (t) => {
  const f = (x: Array) => {
    let h = x;
    for (let i = 0; i < 5; i++) h = jnp.multiply(jnp.tanh(jnp.subtract(h, jnp.mean(h, { axis: 1, keepdims: true }))), 1.5);
    return jnp.sum(h);
  };
  const x = jnp.sin(jnp.arange(64 * 256, undefined, undefined, { dtype: 'float32' })).reshape([64, 256]);
  const compiled = jax.jit(f).lower(x).compile();
  const { plan } = compiled;
  t.true(plan.inPlace.size >= 3, compiled.asText());
  for (const [out, operand] of plan.inPlace) {
    const [po, pi] = [plan.placements[out]!, plan.placements[operand]!];
    t.true(po.place === 'arena' && pi.place === 'arena' && po.offset === pi.offset);
  }
  t.true(compiled.memoryAnalysis().tempSizeInBytes <= 64 * 256 * f32 + 2048, compiled.asText());
  assertArray(t, compiled(x) as Array, f(x), { tol: 1e-4 });
});

// ---- the tutorial script ----

test('examples/host-offloading.js prints the tutorial\'s figures and matching results', (t) => {
  const script = fileURLToPath(new URL('../examples/host-offloading.js', import.meta.url));
  const run = spawnSync(process.execPath, [script, '--small'], { encoding: 'utf8', timeout: 240_000 });
  t.is(run.status, 0, run.stderr);
  const out = run.stdout;
  t.is(out.split('Results match within tolerance: true').length - 1, 3, out);
  t.false(out.includes('Results match within tolerance: false'), out);
  t.is(out.match(/^Temp size: \d+\.\d\d (MB|GB)$/gm)?.length, 5, out);
  t.is(out.match(/^Total size: \d+\.\d\d (MB|GB)$/gm)?.length, 5, out);
  t.true(out.includes(`Running on ${jax.defaultBackend()} at smaller sizes`), out);
  t.regex(out, /\(JAX on an H100: Temp size: 6\.50 MB, Argument size: 20\.25 MB, Total size: 46\.75 MB\)/);
  t.regex(out, /Optimizer state after the step in pinned_host/);
  const bad = spawnSync(process.execPath, [script, '--large'], { encoding: 'utf8', timeout: 60_000 });
  t.not(bad.status, 0);
  t.regex(bad.stderr, /host-offloading: unknown argument "--large" \(expected --full or --small\)/);
});
