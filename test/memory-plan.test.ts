// Compiled.memoryPlan() and its .toSVG(): the plan's totals equal
// memoryAnalysis() per memory kind (the tutorial's programs cross-lowered for
// CUDA, control flow with its nested plans, donation, offloaded residuals,
// programs compiled for this run's platform); every buffer's place and live
// steps agree with the schedule and the packing; the peak is the step with
// the most live bytes; the SVG is well-formed XML (a strict checker, no
// dependency) with a bar per buffer and its labels, the same text every
// time; and headless Chromium renders it (Debian's chromium, installed by
// test/helpers/chromium.ts where it can be; skipped with the reason where not).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/index.js';
import { memoryAnalysis } from '../lib/compiler/analysis.js';
import { type MemoryPlan, type MemoryPlanData, BUFFER_ROLES, memoryPlanOf } from '../lib/compiler/memory-plan.js';
import { ROLE_COLORS, escapeXml, formatBytes, memoryPlanSvg } from '../lib/compiler/memory-plan-svg.js';
import { type ProgramPlan, nestedPlans } from '../lib/compiler/plan.js';
import { stepBuffers } from '../lib/compiler/schedule.js';
import {
  FULL_SIZES, PLANS_DIR, activationStructs, hybridLayer, layerName, makeOptimizer, offloadedTrainStep, optimizerStructs, scanned, scannedWithPolicy, trainStep, writeMemoryPlans,
} from '../examples/host-offloading.js';
import { decodePng, findChromium, runChromium } from './helpers/chromium.js';
import { elements, parseXml, texts } from './helpers/xml.js';

const jnp = jax.numpy;
const { SingleDeviceSharding } = jax.sharding;
const dev = jax.devices()[0]!;
const sDev = new SingleDeviceSharding(dev, { memoryKind: 'device' });
const sHost = new SingleDeviceSharding(dev, { memoryKind: 'pinned_host' });
const struct = (shape: number[], dtype = 'float32', sharding?: jax.sharding.Sharding) => new jax.ShapeDtypeStruct(shape, dtype as never, sharding ? { sharding } : {});

type Compiled = ReturnType<ReturnType<ReturnType<typeof jax.jit>['lower']>['compile']>;

/** The tutorial's five programs at its full sizes, cross-lowered for CUDA (nothing is allocated). */
function tutorialPrograms(): Record<string, Compiled> {
  const optimizer = makeOptimizer();
  return {
    baseline: jax.jit(jax.grad(scanned)).lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }).compile(),
    activationOffload: jax.jit(jax.grad(scannedWithPolicy(layerName))).lower(...activationStructs(FULL_SIZES), { platform: 'cuda' }).compile(),
    hybrid: jax.jit(jax.grad(scannedWithPolicy(hybridLayer(sDev)))).lower(...activationStructs(FULL_SIZES, sHost), { platform: 'cuda' }).compile(),
    adam: jax.jit(trainStep(optimizer), { donateArgnums: [0, 1] }).lower(...optimizerStructs(FULL_SIZES.dim), { platform: 'cuda' }).compile(),
    adamOffloaded: jax.jit(offloadedTrainStep(optimizer, sDev), { donateArgnums: [0], outShardings: [sDev, sHost] })
      .lower(...optimizerStructs(FULL_SIZES.dim, sHost), { platform: 'cuda' }).compile(),
  };
}

/** scan, while and cond in one program (nested plans in the caller's arena). */
function controlFlow(x: Array): Array {
  const [c, ys] = jax.lax.scan((h: Array, w: Array) => {
    const n = jnp.tanh(jnp.multiply(h, w));
    return [n, jnp.sum(n)] as [Array, Array];
  }, x, jnp.ones([5, 64])) as [Array, Array];
  const [, k] = jax.lax.whileLoop(([i]: [Array, Array]) => jnp.less(i, 3), (([i, v]: [Array, Array]) => [jnp.add(i, 1), jnp.add(v, 1)]) as never, [jnp.array(0, { dtype: 'int32' }), c]) as [Array, Array];
  return jax.lax.cond(jnp.greater(jnp.sum(k), 0), (v: Array) => jnp.multiply(v, 2), (v: Array) => jnp.exp(v), jnp.add(k, jnp.sum(ys))) as Array;
}

/** Programs compiled for this run's platform (the CPU, or the emulated GPU), with donation, aliasing and a host copy. */
function localPrograms(): Record<string, Compiled> {
  const sgd = (p: Array, g: Array) => jnp.subtract(p, jnp.multiply(g, 0.1));
  const chain = (x: Array) => {
    let y = x;
    for (let i = 0; i < 3; i++) y = jax.nn.standardize(jnp.exp(y));
    return y;
  };
  const offload = (x: Array) => {
    const h = jax.devicePut(jnp.exp(x), sHost);
    const y = jnp.sum(jnp.tanh(x));
    return jnp.multiply(jax.devicePut(h, sDev), y);
  };
  return {
    donated: jax.jit(sgd, { donateArgnums: 0 }).lower(struct([1000]), struct([1000])).compile(),
    inPlace: jax.jit(chain).lower(struct([64, 256])).compile(),
    controlFlow: jax.jit(controlFlow).lower(struct([64])).compile(),
    hostCopies: jax.jit(offload).lower(struct([128, 128])).compile(),
    passThrough: jax.jit((a: Array, b: Array) => [a, jnp.add(a, b), 1] as never).lower(struct([10]), struct([10])).compile(),
  };
}

const HOST_FIELDS = { argument: 'hostArgumentSizeInBytes', output: 'hostOutputSizeInBytes', alias: 'hostAliasSizeInBytes', temp: 'hostTempSizeInBytes' } as const;
const DEVICE_FIELDS = { argument: 'argumentSizeInBytes', output: 'outputSizeInBytes', alias: 'aliasSizeInBytes', temp: 'tempSizeInBytes' } as const;

/** The plan's totals against memoryAnalysis() of the same program plan. */
function checkTotals(t: ExecutionContext, name: string, plan: MemoryPlanData, m: ReturnType<typeof memoryAnalysis>) {
  for (const [field, key] of Object.entries(DEVICE_FIELDS)) t.is(plan.totals.device[field as keyof typeof DEVICE_FIELDS], m[key], `${name}: device ${field}`);
  for (const [field, key] of Object.entries(HOST_FIELDS)) t.is(plan.totals.pinned_host[field as keyof typeof HOST_FIELDS], m[key], `${name}: pinned_host ${field}`);
  t.is(plan.totals.device.peak, m.peakMemoryInBytes, `${name}: device peak`);
  t.is(plan.lanes.device.size, m.peakMemoryInBytes, `${name}: the device lane is what the call reserves`);
  t.is(plan.lanes.pinned_host.size, m.hostArgumentSizeInBytes + m.hostOutputSizeInBytes - m.hostAliasSizeInBytes + m.hostTempSizeInBytes, `${name}: pinned_host lane`);
}

/**
 * Everything a plan says about its buffers agrees with the program plan it came from: each step touches only
 * buffers live at that step, arena buffers live at the same time share no byte unless one is written over the
 * other (aliased / donated), regions hold their buffers, arena offsets are aligned, scratch is its call step's,
 * transfers sit on copy steps inside their windows, and the peak is the step with the most live bytes.
 */
function checkConsistency(t: ExecutionContext, name: string, plan: MemoryPlanData, programPlan: ProgramPlan) {
  const n = programPlan.program.steps.length;
  t.is(plan.steps.length, n, `${name}: steps`);
  const byName = new Map(plan.buffers.map((b) => [b.name, b] as const));
  t.is(byName.size, plan.buffers.length, `${name}: buffer names are unique`);
  for (const b of plan.buffers) {
    t.true(BUFFER_ROLES.includes(b.role), `${name}: ${b.name} role ${b.role}`);
    t.true(b.start >= 0 && b.start <= b.end && b.end <= Math.max(n - 1, 0), `${name}: ${b.name} live ${b.start}-${b.end} within ${n} steps`);
    t.true(b.offset >= 0 && b.offset + b.size <= plan.lanes[b.memoryKind][b.region].size, `${name}: ${b.name} at ${b.region}+${b.offset} (${b.size} B) inside the region (${plan.lanes[b.memoryKind][b.region].size} B)`);
    if (b.region === 'arena') t.is(b.offset % plan.alignment, 0, `${name}: ${b.name} aligned to ${plan.alignment}`);
    if (b.role === 'scratch') t.is(plan.steps[b.start]!.kind, 'call', `${name}: ${b.name} is a call step's`);
    if (b.role === 'donated') {
      const argument = byName.get(b.aliasOf!)!;
      t.is(argument.role, 'argument');
      t.is(b.offset, argument.offset, `${name}: ${b.name} is written into ${b.aliasOf}'s storage`);
      t.true(argument.end <= b.start, `${name}: ${b.aliasOf} is read for the last time (step ${argument.end}) no later than ${b.name} is written (step ${b.start})`);
    }
    if (b.role === 'aliased') {
      const donor = byName.get(b.aliasOf!)!;
      t.is(b.offset, donor.offset, `${name}: ${b.name} takes over ${b.aliasOf}'s space`);
      t.is(donor.end, b.start, `${name}: ${b.aliasOf} dies where ${b.name} is written`);
    }
  }
  // each step's buffers are live at that step (arguments, outputs and intermediates by name)
  programPlan.program.steps.forEach((s, k) => {
    const { reads, writes } = stepBuffers(s);
    for (const id of [...reads, ...writes]) {
      const p = programPlan.placements[id]!;
      if (p.place !== 'arena') continue;
      const b = byName.get(`tmp${id}`);
      t.truthy(b, `${name}: step ${k} touches tmp${id}`);
      t.true(b!.start <= k && k <= b!.end, `${name}: tmp${id} is live at step ${k} (${b!.start}-${b!.end})`);
    }
  });
  // no two arena buffers live at the same step share a byte, unless one is written over the other
  const arena = plan.buffers.filter((b) => b.region === 'arena' && b.size > 0);
  for (const [i, a] of arena.entries()) {
    for (const b of arena.slice(i + 1)) {
      if (a.memoryKind !== b.memoryKind || a.end < b.start || b.end < a.start) continue;
      if (a.aliasOf === b.name || b.aliasOf === a.name) continue;
      const apart = a.offset + a.size <= b.offset || b.offset + b.size <= a.offset;
      t.true(apart, `${name}: ${a.name} [${a.offset}, +${a.size}) steps ${a.start}-${a.end} and ${b.name} [${b.offset}, +${b.size}) steps ${b.start}-${b.end} overlap`);
    }
  }
  // the peak: live bytes counted as buffer sizes less the space written over (another formula than the plan's union)
  for (const kind of ['device', 'pinned_host'] as const) {
    const mine = plan.buffers.filter((b) => b.memoryKind === kind);
    const liveAt = (k: number) => mine.filter((b) => b.start <= k && k <= b.end);
    const bytesAt = (k: number) => {
      const live = liveAt(k);
      const names = new Set(live.map((b) => b.name));
      return live.reduce((a, b) => a + (b.aliasOf && names.has(b.aliasOf) ? 0 : b.size), 0);
    };
    const p = plan.peak[kind];
    const perStep = globalThis.Array.from({ length: Math.max(n, 1) }, (_, k) => bytesAt(k));
    const most = Math.max(0, ...perStep);
    t.is(p.bytes, most, `${name}: ${kind} peak bytes`);
    t.is(p.step, perStep.indexOf(most), `${name}: ${kind} peak at the first step with the most bytes live`);
    t.deepEqual([...p.live].sort(), liveAt(p.step).filter((b) => b.size > 0).map((b) => b.name).sort(), `${name}: ${kind} live at the peak`);
    t.true(p.bytes <= p.allocated, `${name}: ${kind} live ${p.bytes} <= reserved ${p.allocated}`);
  }
  // transfers: copy steps on the stream their step says, inside their windows
  for (const tr of plan.transfers) {
    const s = plan.steps[tr.step]!;
    t.is(s.kind, 'copy', `${name}: transfer at step ${tr.step}`);
    t.is(s.stream, tr.stream);
    t.true(tr.start < tr.step && tr.step < tr.wait && tr.wait <= n, `${name}: step ${tr.step} in its window (${tr.start}, ${tr.wait})`);
    t.true(tr.overlaps.every((j) => j > tr.start && j < tr.wait && j !== tr.step), `${name}: overlaps of step ${tr.step}`);
    t.true(byName.has(tr.src) && byName.has(tr.dst), `${name}: transfer ${tr.src} -> ${tr.dst} names buffers`);
  }
  t.is(plan.transfers.length, programPlan.program.steps.filter((s) => s.kind === 'copy').length, `${name}: one transfer per copy step`);
}

/** The plan, then each nested plan against its own ProgramPlan, depth first. */
function checkAll(t: ExecutionContext, name: string, plan: MemoryPlan, programPlan: ProgramPlan, m: ReturnType<typeof memoryAnalysis>) {
  checkTotals(t, name, plan, m);
  checkConsistency(t, name, plan, programPlan);
  t.is(plan.calls.length, programPlan.calls.size, `${name}: one entry per control-flow step`);
  for (const call of plan.calls) {
    const layout = programPlan.calls.get(call.step)!;
    const nested = nestedPlans(layout.plans);
    t.is(call.plans.length, nested.length);
    for (const kind of ['device', 'pinned_host'] as const) {
      const bar = plan.buffers.find((b) => b.name === `scratch${call.step}` && b.memoryKind === kind);
      t.is(bar?.size ?? 0, layout.scratch[kind], `${name}: step ${call.step}'s ${kind} scratch is one bar`);
      t.true(call.scratch[kind] >= Math.max(0, ...call.plans.map((p) => p.plan.totals[kind].temp)), `${name}: the scratch holds the nested arenas`);
    }
    call.plans.forEach((p, i) => checkAll(t, `${name}/${call.primitive}@${call.step}/${p.name}`, p.plan, nested[i]!, memoryAnalysis(nested[i]!, [])));
  }
}

test('the tutorial\'s programs (cross-lowered for cuda): the plan\'s totals are memoryAnalysis() per memory kind, and its buffers agree with the schedule', (t) => {
  const programs = tutorialPrograms();
  for (const [name, compiled] of Object.entries(programs)) {
    const plan = compiled.memoryPlan();
    checkAll(t, name, plan, compiled.plan, compiled.memoryAnalysis());
    t.log(`${name}: ${plan.steps.length} steps, ${plan.buffers.length} buffers, ${plan.transfers.length} transfers; device ${formatBytes(plan.totals.device.peak)} (peak ${formatBytes(plan.peak.device.bytes)} live at step ${plan.peak.device.step}), pinned_host ${formatBytes(plan.lanes.pinned_host.size)}`);
  }
  // what the pictures are for: the baseline's stacked activations are residuals on the device; offloading moves them to the host
  const roles = (name: string, kind: string) => programs[name]!.memoryPlan().buffers.filter((b) => b.memoryKind === kind).map((b) => b.role);
  t.true(roles('baseline', 'device').includes('residual'), 'the forward scan\'s stacks, read by the backward scan');
  const offloaded = programs.activationOffload!.memoryPlan().buffers.filter((b) => b.role === 'offloaded');
  t.is(offloaded.reduce((a, b) => a + b.size, 0), 10 * 256 * 256 * 4, 'each layer\'s x [256, 256] in the pinned-host arena');
  t.true(offloaded.every((b) => b.memoryKind === 'pinned_host'));
  // the offloaded Adam step: its state arrives and leaves in pinned_host, the transfers run on the copy streams
  const adam = programs.adamOffloaded!.memoryPlan();
  t.true(adam.transfers.some((x) => x.stream === 'h2d' && x.overlaps.length > 0), 'a state leaf is fetched while kernels run');
  t.true(adam.transfers.some((x) => x.stream === 'd2h'), 'the new state goes back');
  t.true(adam.buffers.some((b) => b.role === 'donated' && b.memoryKind === 'device'), 'the parameters are updated in their donated storage');
  // the hybrid program streams each layer's weights inside the scan bodies: transfers in the nested plans
  const hybrid = programs.hybrid!.memoryPlan();
  t.true(hybrid.calls.some((c) => c.plans.some((p) => p.plan.transfers.some((x) => x.stream === 'h2d'))));
});

test('programs compiled for this platform: donation, in-place aliasing, scan / while / cond, host copies and pass-through outputs', (t) => {
  for (const [name, compiled] of Object.entries(localPrograms())) {
    const plan = compiled.memoryPlan();
    t.is(plan.platform, jax.defaultBackend());
    checkAll(t, name, plan, compiled.plan, compiled.memoryAnalysis());
  }
  const local = localPrograms();
  const donated = local.donated!.memoryPlan();
  t.deepEqual(donated.buffers.filter((b) => b.role === 'donated').map((b) => [b.name, b.aliasOf, b.size]), [['out0', 'arg0', 4000]]);
  t.is(donated.lanes.device.outputs.size, 0, 'the output has no storage of its own');
  t.true(local.inPlace!.memoryPlan().buffers.some((b) => b.role === 'aliased'), 'a normalization writes over the operand it reads');
  const cf = local.controlFlow!.memoryPlan();
  t.deepEqual(cf.calls.map((c) => c.primitive), ['scan', 'while', 'cond']);
  t.deepEqual(cf.calls.map((c) => c.plans.map((p) => p.name)), [['body'], ['cond', 'body'], ['branch 0', 'branch 1']]);
  t.is(cf.buffers.filter((b) => b.role === 'scratch').length, cf.calls.filter((c) => c.scratch.device > 0).length + cf.calls.filter((c) => c.scratch.pinned_host > 0).length);
  const host = local.hostCopies!.memoryPlan();
  t.deepEqual(host.transfers.map((x) => x.stream).sort(), ['d2h', 'h2d']);
  t.true(host.buffers.some((b) => b.role === 'offloaded' && b.memoryKind === 'pinned_host' && b.size === 128 * 128 * 4));
  // outputs no step writes are copied at the end: an argument returned as it is, and a literal
  const pass = local.passThrough!.memoryPlan();
  const last = pass.steps.length - 1;
  t.deepEqual(pass.buffers.filter((b) => b.role === 'output').map((b) => [b.name, b.size]), [['out0', 40], ['out1', 40], ['out2', 4]]);
  const out = (name: string) => pass.buffers.find((b) => b.name === name)!;
  t.is(out('out0').start, last);
  t.regex(out('out0').label, /copied from arg0 at the end/);
  t.is(out('out2').start, last);
  t.regex(out('out2').label, /a literal filled at the end/);
});

test('the plan is plain data: JSON keeps all of it, toSVG is not enumerable, and the SVG drawn from the JSON is the same', (t) => {
  const compiled = tutorialPrograms().activationOffload!;
  const plan = compiled.memoryPlan();
  const json = JSON.parse(JSON.stringify(plan)) as MemoryPlanData;
  t.deepEqual(json, plan as never);
  t.false(Object.keys(plan).includes('toSVG'));
  t.is(typeof plan.toSVG, 'function');
  t.is(memoryPlanSvg(json), plan.toSVG());
  t.is(compiled.memoryPlan().toSVG(), plan.toSVG(), 'deterministic');
  t.is(typeof plan.calls[0]!.plans[0]!.plan.toSVG, 'function', 'nested plans draw too');
});

test('toSVG: well-formed XML with one bar per buffer, one mark per transfer, the legend, lanes, sizes and the peak\'s live buffers', (t) => {
  const programs = { ...tutorialPrograms(), ...localPrograms() };
  for (const [name, compiled] of Object.entries(programs)) {
    const plan = compiled.memoryPlan();
    const svg = plan.toSVG();
    const root = parseXml(svg);
    t.is(root.name, 'svg', name);
    t.is(root.attributes.xmlns, 'http://www.w3.org/2000/svg');
    const all = [...elements(root)];
    const bars = all.filter((e) => e.name === 'rect' && (e.attributes.class ?? '').split(' ')[0] === 'buffer');
    t.is(bars.length, plan.buffers.length, `${name}: one bar per buffer`);
    for (const role of BUFFER_ROLES) {
      t.is(bars.filter((e) => e.attributes.class === `buffer role-${role}`).length, plan.buffers.filter((b) => b.role === role).length, `${name}: ${role} bars`);
      t.true(bars.filter((e) => e.attributes.class === `buffer role-${role}`).every((e) => e.attributes.fill === ROLE_COLORS[role]));
    }
    const copyTransfers = plan.transfers.filter((x) => x.stream !== 'compute');
    t.is(all.filter((e) => e.attributes.class === 'transfer').length, copyTransfers.length, `${name}: transfers`);
    t.is(all.filter((e) => e.attributes.class === 'transfer-window').length, copyTransfers.length, `${name}: transfer windows`);
    t.is(all.filter((e) => e.attributes.class === 'step').length, plan.steps.length, `${name}: schedule cells`);
    const words = texts(root).join('\n');
    for (const label of [...BUFFER_ROLES, 'device', 'pinned_host', 'copy stream h2d', 'copy stream d2h', 'schedule step', 'transfer window']) t.true(words.includes(label), `${name}: label ${label}`);
    t.true(words.includes(formatBytes(plan.totals.device.peak)), `${name}: the device total ${formatBytes(plan.totals.device.peak)}`);
    t.true(words.includes(`peak: ${formatBytes(plan.peak.device.bytes)} live at step ${plan.peak.device.step}`), `${name}: the peak`);
    t.is(all.filter((e) => e.attributes.class === 'peak').length, (plan.lanes.device.size > 0 ? 1 : 0) + (plan.lanes.pinned_host.size > 0 ? 1 : 0), `${name}: a peak line per lane in use`);
    for (const live of plan.peak.device.live.slice(0, 40)) t.true(words.includes(`${live}  `), `${name}: ${live} listed at the peak`);
    // every bar's tooltip names its buffer
    t.deepEqual(bars.map((e) => e.children[0]!.text.split(' ')[0]).sort(), plan.buffers.map((b) => b.name).sort());
  }
});

test('toSVG escapes what it prints, and validates its options', (t) => {
  const f = (x: Array) => jnp.exp(x);
  Object.defineProperty(f, 'name', { value: 'a<b & "c" \'d\'' });
  const plan = jax.jit(f).lower(struct([8])).compile().memoryPlan();
  t.is(plan.function, 'a<b & "c" \'d\'');
  const svg = plan.toSVG();
  t.notThrows(() => parseXml(svg));
  t.true(svg.includes('a&lt;b &amp; &quot;c&quot; &apos;d&apos;'));
  t.true(texts(parseXml(plan.toSVG({ title: 'x < y && z\u0001' }))).includes('x < y && z\ufffd'));
  t.is(escapeXml('<&>"\''), '&lt;&amp;&gt;&quot;&apos;');
  t.throws(() => plan.toSVG({ widht: 800 } as never), { message: 'memoryPlan().toSVG: unknown option "widht" (expected width, maxListed, title)' });
  t.throws(() => plan.toSVG({ width: 100 }), { message: 'memoryPlan().toSVG: width must be an integer from 400 to 20000, got 100' });
  t.throws(() => plan.toSVG({ maxListed: -1 }), { message: /maxListed must be a non-negative integer, got -1/ });
  t.throws(() => plan.toSVG('wide' as never), { message: 'memoryPlan().toSVG: options must be an object, got string' });
  t.is(parseXml(plan.toSVG({ width: 800 })).attributes.width, '800');
  // the parser this test relies on rejects what is not well-formed
  for (const bad of ['<svg><rect></svg>', '<svg a="1" a="2"/>', '<svg>&nbsp;</svg>', '<svg>a & b</svg>', '<svg/><svg/>', '<svg x=1/>', '<svg><!-- a -- b --></svg>']) {
    t.throws(() => parseXml(bad), undefined, bad);
  }
});

test('memoryPlan on what is not a compiled program: errors that name the function and what was given', (t) => {
  const lowered = jax.jit(function double(x: Array) {
    return jnp.multiply(x, 2);
  }).lower(struct([4]));
  t.throws(() => (lowered as unknown as { memoryPlan(): unknown }).memoryPlan(), { message: 'Lowered.memoryPlan(double): a lowered program has no buffer assignment yet; call .compile().memoryPlan()' });
  t.throws(() => memoryPlanOf({} as never, { function: 'f', platform: 'cpu' }), { message: 'memoryPlan: expected a compiled program\'s plan (ProgramPlan), got Object' });
  t.throws(() => memoryPlanOf(null as never, { function: 'f', platform: 'cpu' }), { message: 'memoryPlan: expected a compiled program\'s plan (ProgramPlan), got null' });
});

test('npm start\'s writeMemoryPlans: the program\'s SVG and one per nested plan, each well-formed, paths returned in order', (t) => {
  t.is(PLANS_DIR, 'memory-plans');
  const dir = mkdtempSync(path.join(tmpdir(), 'jaxon-memory-plans-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const plan = tutorialPrograms().hybrid!.memoryPlan();
  const paths = writeMemoryPlans(plan, dir, 'hybrid', 'Hybrid <offloading>');
  t.deepEqual(paths, ['hybrid.svg', 'hybrid.step0-scan-body.svg', 'hybrid.step2-scan-body.svg'].map((f) => path.join(dir, f)));
  const root = parseXml(readFileSync(paths[0]!, 'utf8'));
  t.true(texts(root).includes('Hybrid <offloading>'));
  const body = parseXml(readFileSync(paths[2]!, 'utf8'));
  t.true(texts(body).includes('Hybrid <offloading>: the scan at step 2, its body'));
  t.is([...elements(body)].filter((e) => e.attributes.class === 'transfer').length, plan.calls[1]!.plans[0]!.plan.transfers.filter((x) => x.stream !== 'compute').length);
});

// ---- the picture, in a browser ----

const chromium = findChromium();
if (!chromium.command) console.log(`memory-plan: ${chromium.reason}`);

(chromium.command ? test : test.skip)(`headless Chromium renders the activation-offloading plan: a picture of many colours, every label laid out${chromium.command ? '' : ` (skipped: ${chromium.reason})`}`, async (t) => {
  const plan = tutorialPrograms().activationOffload!.memoryPlan();
  const svg = plan.toSVG();
  const dir = mkdtempSync(path.join(tmpdir(), 'jaxon-memory-plan-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const svgPath = path.join(dir, 'plan.svg');
  writeFileSync(svgPath, svg);
  const height = Number(parseXml(svg).attributes.height);
  // the screenshot: not empty, not one colour, the role colours present
  const pngPath = path.join(dir, 'plan.png');
  const shot = runChromium(chromium.command!, [`--screenshot=${pngPath}`, `--window-size=1200,${height}`, `file://${svgPath}`], path.join(dir, 'profile'));
  t.is(shot.status, 0, shot.stderr);
  const png = await decodePng(readFileSync(pngPath));
  t.is(png.width, 1200);
  const colours = new Set<number>();
  let white = 0;
  for (let i = 0; i < png.pixels.length; i += 4) {
    const rgb = (png.pixels[i]! << 16) | (png.pixels[i + 1]! << 8) | png.pixels[i + 2]!;
    colours.add(rgb);
    if (rgb === 0xffffff) white++;
  }
  const inked = 1 - white / (png.width * png.height);
  t.log(`screenshot ${png.width}x${png.height}: ${colours.size} colours, ${(inked * 100).toFixed(1)}% not white`);
  t.true(colours.size > 20, `${colours.size} colours`);
  t.true(inked > 0.1, `${(inked * 100).toFixed(1)}% of the picture drawn`);
  // the DOM: the browser parses the SVG as XML (strictly), lays out every text with a width, and finds every bar
  const html = `<!doctype html><html><body><pre id="out"></pre><script>
const doc = new DOMParser().parseFromString(${JSON.stringify(svg).replace(/</g, '\\u003c')}, 'image/svg+xml');
const error = doc.querySelector('parsererror');
const svg = document.importNode(doc.documentElement, true);
document.body.appendChild(svg);
const texts = [...svg.querySelectorAll('text')].map((e) => ({ text: e.textContent, width: e.getBBox().width }));
document.getElementById('out').textContent = JSON.stringify({ error: error ? error.textContent : null, bars: svg.querySelectorAll('rect.buffer').length, texts });
</script></body></html>`;
  const htmlPath = path.join(dir, 'plan.html');
  writeFileSync(htmlPath, html);
  const dom = runChromium(chromium.command!, ['--dump-dom', `file://${htmlPath}`], path.join(dir, 'profile'));
  t.is(dom.status, 0, dom.stderr);
  const pre = /<pre id="out">([^<]*)<\/pre>/.exec(dom.stdout);
  t.truthy(pre, dom.stdout.slice(0, 2000));
  const decoded = pre![1]!.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const seen = JSON.parse(decoded) as { error: string | null; bars: number; texts: { text: string; width: number }[] };
  t.is(seen.error, null);
  t.is(seen.bars, plan.buffers.length);
  const labels = seen.texts.map((x) => x.text);
  for (const label of ['device', 'pinned_host', 'offloaded', 'residual', 'copy stream h2d', `peak: ${formatBytes(plan.peak.device.bytes)} live at step ${plan.peak.device.step}`]) {
    t.true(labels.some((l) => l.includes(label)), `label ${label} in the rendered DOM`);
  }
  t.true(seen.texts.every((x) => x.width > 0), `every label has a width: ${seen.texts.filter((x) => !(x.width > 0)).map((x) => x.text).join(', ')}`);
});
