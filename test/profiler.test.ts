// jax.profiler.trace: a Chrome trace of the steps compiled programs run
// (kernels on the compute track, control flow on the host track), written
// also when the traced function throws.
import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
const dir = mkdtempSync(path.join(os.tmpdir(), 'jaxon-profiler-'));

interface ChromeEvent { name: string; ph: string; tid: number; ts?: number; dur?: number; args?: Record<string, unknown> }
const load = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] }).traceEvents;

test('trace records every kernel and control-flow step of a jitted scan, with thread names', (t) => {
  const f = jax.jit((x: jax.Array) => {
    const [c] = jax.lax.scan((h: jax.Array, w: jax.Array) => [jnp.tanh(jnp.multiply(h, w)), null] as [jax.Array, null], x, jnp.ones([3, 8]));
    return jnp.sum(jnp.exp(c as jax.Array));
  });
  const x = jnp.arange(8, undefined, undefined, { dtype: 'float32' });
  f(x);
  const file = path.join(dir, 'scan.json');
  const out = jax.profiler.trace(() => f(x), file);
  t.true(out instanceof jax.Array);
  const events = load(file);
  const spans = events.filter((e) => e.ph === 'X');
  const scans = spans.filter((e) => e.name === 'scan');
  t.is(scans.length, 1);
  const kernels = spans.filter((e) => e.tid === 1);
  // the body's kernel runs 3 times, plus the kernels outside the loop
  t.true(kernels.length >= 4, JSON.stringify(kernels.map((k) => k.name)));
  for (const k of kernels) t.true(typeof k.ts === 'number' && typeof k.dur === 'number' && k.dur! >= 0);
  t.true(events.some((e) => e.ph === 'M' && e.args?.name === 'compute stream'));
  t.true(events.some((e) => e.ph === 'M' && e.args?.name === 'H2D copy stream'));
  // outside a trace nothing is recorded, and the next trace starts empty
  f(x);
  const file2 = path.join(dir, 'again.json');
  jax.profiler.trace(() => 1, file2);
  t.is(load(file2).filter((e) => e.ph === 'X').length, 0);
});

test('trace writes the file when fn throws, awaits async functions, and rejects bad arguments', async (t) => {
  const file = path.join(dir, 'throws.json');
  t.throws(() => jax.profiler.trace(() => { throw new Error('boom'); }, file), { message: 'boom' });
  t.true(Array.isArray(load(file)));
  const file2 = path.join(dir, 'async.json');
  const v = await jax.profiler.trace(async () => { await new Promise((r) => setTimeout(r, 1)); return 7; }, file2);
  t.is(v, 7);
  t.true(Array.isArray(load(file2)));
  t.throws(() => jax.profiler.trace(1 as never, file), { message: /fn must be a function, got 1/ });
  t.throws(() => jax.profiler.trace(() => 1, ''), { message: /path must be a file path/ });
  t.throws(() => jax.profiler.trace(() => jax.profiler.trace(() => 1, file), file), { message: /already being recorded/ });
});

const onCuda = process.env['JAXON_TEST_PLATFORM'] === 'cuda';

(onCuda ? test.serial : test.serial.skip)('on CUDA, transfers are timed on their copy streams by CUDA events, beside the kernels', (t) => {
  const device = jax.devices()[0]!;
  const mesh = new jax.sharding.Mesh([[device]], ['x', 'y']);
  const onDevice = new jax.sharding.NamedSharding(mesh, jax.sharding.P(), { memoryKind: 'device' });
  const onHost = onDevice.withMemoryKind('pinned_host');
  const f = jax.jit((x: jax.Array) => {
    const saved = jax.devicePut(jnp.sin(x), onHost); // to the host while the next kernels run
    let y = x;
    for (let i = 0; i < 4; i++) y = jnp.tanh(jnp.add(jnp.cumsum(y), 1));
    return jnp.add(y, jax.devicePut(saved, onDevice));
  });
  const x = jax.random.normal(jax.random.key(0), [1 << 16]);
  const want = f(x).dataSync();
  const file = path.join(dir, 'cuda-transfers.json');
  const got = (jax.profiler.trace(() => f(x), file) as jax.Array).dataSync();
  t.deepEqual(Array.from(got), Array.from(want));
  const spans = load(file).filter((e) => e.ph === 'X');
  const track = (tid: number) => spans.filter((e) => e.tid === tid).sort((a, b) => a.ts! - b.ts!);
  const [compute, h2d, d2h] = [track(1), track(2), track(3)];
  t.true(compute.length >= 4, JSON.stringify(spans.map((s) => [s.name, s.tid])));
  t.is(h2d.length, 1, JSON.stringify(spans.map((s) => [s.name, s.tid])));
  t.is(d2h.length, 1);
  t.is(h2d[0]!.args?.['bytes'], 4 << 16);
  const delayUs = Number(process.env['JAXON_CUDA_EMULATOR_COPY_DELAY_US'] ?? 0);
  // a copy's span is its time on its stream (the emulated copy's delay included), not a host call's
  for (const copy of [...h2d, ...d2h]) t.true(copy.dur! >= 0.9 * delayUs, `${copy.name}: ${copy.dur} µs`);
  // one stream runs one op at a time: spans of a track do not overlap
  for (const list of [compute, h2d, d2h]) for (let i = 1; i < list.length; i++) t.true(list[i]!.ts! >= list[i - 1]!.ts! + list[i - 1]!.dur! - 1);
  // the copy back to the device starts after the copy to the host ended
  t.true(h2d[0]!.ts! >= d2h[0]!.ts! + d2h[0]!.dur! - 1);
});

(onCuda && jax.devices()[0]!.platform === 'cuda' ? test : test.skip)('cudaCopyBenchmark times plain copies with CUDA events and names bad arguments', async (t) => {
  const { native } = await import('../lib/runtime/native.js');
  const device = jax.devices()[0]! as unknown as { backend: { info: { handle: never } } };
  const handle = device.backend.info.handle;
  for (const direction of ['h2d', 'd2h'] as const) {
    for (const host of ['pinned', 'pageable'] as const) {
      const times = native().cudaCopyBenchmark(handle, 1 << 20, direction, host, 3);
      t.is(times.length, 3);
      for (const ms of times) t.true(ms > 0 && ms < 10_000, `${direction} ${host}: ${ms} ms`);
    }
  }
  t.throws(() => native().cudaCopyBenchmark(handle, 1 << 20, 'sideways' as never, 'pinned', 3), { message: /cudaCopyBenchmark: direction must be 'h2d' or 'd2h'.*got 'sideways'/ });
  t.throws(() => native().cudaCopyBenchmark(handle, 0, 'h2d', 'pinned', 3), { message: /bytes > 0/ });
});
