// The CPU backend's per-call machinery (issue 16, dispatch): freed small buffers are handed out again (runtime/cpu.ts
// hostBuffer's pool), zeroed, and never while an array still reads them (a donated buffer moves to its new array;
// a failed call gives it back); kernels enter OpenMP only for work above the threshold (render/c.ts regionKernel:
// small work calls the kernel's part directly, since a region with a false `if` clause still costs libgomp a team).
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import { hostBuffer, recycleHostBuffer } from '../lib/runtime/cpu.js';
import { renderC } from '../lib/compiler/render/c.js';
import { lowerPrimitive } from '../lib/compiler/lower.js';
import { type ShapedArray, abstractEval } from '../lib/core/primitives.js';

const jnp = jax.numpy;
const cpu = jax.devices('cpu')[0]!;

test('a recycled buffer comes back zeroed, and only at its own size', (t) => {
  const a = hostBuffer(96, 'a test buffer');
  new Uint8Array(a).fill(7);
  recycleHostBuffer(a);
  const b = hostBuffer(96, 'a test buffer');
  t.is(b, a, 'the freed buffer is reused');
  t.true(new Uint8Array(b).every((v) => v === 0), 'and zeroed');
  recycleHostBuffer(b);
  t.not(hostBuffer(100, 'a test buffer'), b, 'another size gets another buffer');
  t.is(hostBuffer(96, 'a test buffer'), b);
});

test('a recycled large buffer comes back too: zeroed when asked, as it was for a kernel to overwrite', (t) => {
  const big = hostBuffer(2 ** 20 + 64, 'a test buffer');
  new Uint8Array(big).fill(7);
  recycleHostBuffer(big);
  t.not(hostBuffer(2 ** 20 + 128, 'a test buffer'), big, 'another size gets another buffer');
  const again = hostBuffer(2 ** 20 + 64, 'a test buffer', 'overwritten');
  t.is(again, big, 'the freed large buffer is reused');
  if (process.env['JAXON_POISON_HOST_BUFFERS'] !== '1') t.is(new Uint8Array(again)[12345], 7, 'not zeroed for a kernel to overwrite');
  recycleHostBuffer(again);
  const zeroed = hostBuffer(2 ** 20 + 64, 'a test buffer');
  t.is(zeroed, big);
  t.true(new Uint8Array(zeroed).every((v) => v === 0), 'zeroed when asked');
});

test('large arrays: freed buffers are reused for new results, never one a live or donated array holds', (t) => {
  const n = 2 ** 18; // 1 MiB of float32
  const step = jax.jit((x: Array) => jnp.add(x, 1), { donateArgnums: 0 });
  let x = jax.devicePut(jnp.zeros([n]), cpu);
  const kept = jnp.full([n], 3, { dtype: 'float32' });
  for (let i = 0; i < 6; i++) {
    const next = step(x);
    for (let j = 0; j < 3; j++) jnp.multiply(next, -1).dispose();
    const filler = jnp.full([n], -5, { dtype: 'float32' });
    x = next;
    const values = x.dataSync() as Float32Array;
    t.true(values.every((v) => v === i + 1), `step ${i}: every element is ${i + 1}`);
    filler.dispose();
  }
  t.true((kept.dataSync() as Float32Array).every((v) => v === 3), 'an array that lived through it all kept its values');
});

test('a donated buffer stays with its new array while freed buffers of its size are reused', (t) => {
  const step = jax.jit((x: Array) => jnp.add(x, 1), { donateArgnums: 0 });
  let x = jax.devicePut(jnp.arange(16).astype('float32'), cpu);
  for (let i = 0; i < 20; i++) {
    const next = step(x);
    // freed arrays of the same size: their buffers are recycled into new ones, which must never be `next`'s
    for (let j = 0; j < 4; j++) jnp.multiply(next, 0).dispose();
    const filler = jnp.full([16], -5, { dtype: 'float32' });
    x = next;
    t.deepEqual(x.tolistSync(), [...globalThis.Array(16).keys()].map((k) => k + i + 1), `step ${i}`);
    filler.dispose();
  }
});

test('a jitted call that fails gives its donated buffer back: the argument keeps its values', (t) => {
  const failing = jax.jit(
    (x: Array) => jax.pureCallback(() => {
      throw new Error('callback fails on purpose');
    }, new jax.ShapeDtypeStruct([8], 'float32'), jnp.add(x, 1)) as Array,
    { donateArgnums: 0 },
  );
  const x = jax.devicePut(jnp.arange(8).astype('float32'), cpu);
  t.throws(() => failing(x), { message: /callback fails on purpose/ });
  t.false(x.isDisposed, 'the call never ran: its argument stays valid');
  t.deepEqual(x.tolistSync(), [0, 1, 2, 3, 4, 5, 6, 7]);
  // whatever it holds is not handed to new arrays while it lives
  const others = [0, 1, 2, 3].map(() => jnp.zeros([8]));
  t.deepEqual(x.tolistSync(), [0, 1, 2, 3, 4, 5, 6, 7]);
  for (const o of others) o.dispose();
});

test('small work never enters an OpenMP region: every CPU kernel with a region calls its part directly below the threshold', (t) => {
  const f32 = (...shape: number[]): ShapedArray => ({ shape, dtype: 'float32', weakType: false }) as ShapedArray;
  const cases: [string, ShapedArray[], unknown][] = [
    ['add', [f32(8), f32(8)], {}],
    ['reduce_sum', [f32(4, 8)], { axes: [1] }],
    ['reduce_max', [f32(40, 8)], { axes: [0] }],
    ['dot_general', [f32(4, 8), f32(8, 3)], { dimensionNumbers: [[[1], [0]], [[], []]], preferredElementType: null }],
    ['transpose', [f32(3, 5)], { permutation: [1, 0] }],
  ];
  for (const [prim, ins, params] of cases) {
    const outs = (abstractEval[prim as 'add'] as (a: ShapedArray[], p: unknown) => ShapedArray[])(ins, params);
    const plan = lowerPrimitive(prim as never, ins, outs, params as never, 'cpu');
    for (const launch of plan.launches) {
      const source = renderC(launch.kernel, 'k');
      const regions = source.split('\n').filter((l) => l.includes('#pragma omp parallel'));
      for (const line of regions) t.false(/\bif\s*\(/.test(line), `${prim}: "${line.trim()}" still enters libgomp when its if clause is false`);
      if (regions.length) t.regex(source, /\} else \{/, `${prim}: a region has a serial path`);
    }
  }
});
