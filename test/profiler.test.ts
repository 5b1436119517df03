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
