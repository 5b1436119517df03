// Float sums, maxima and minima reduce in one fixed order on the CPU (render/c.ts `floatLanes`: blocks of 256
// elements in 16 float lanes, blocks folded into double), whichever loop computes them: a contiguous last axis
// (vectorized), a strided or multi-axis inner space, a leading axis (vectorized across outputs), a fused prologue,
// rows split across threads. So jit equals eager bit for bit on every layout, the error of a long sum stays within
// an ulp or two of float64 (the bias of long float runs, which drop values below half an ulp, is bounded), and NaN
// reaches the result from any position. The same tests run on the emulated GPU, whose reductions keep double
// accumulation: the properties hold there too.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';

const jnp = jax.numpy;

function bitsOf(a: Array): Uint32Array {
  const f = a.astype('float32').dataSync() as Float32Array;
  return new Uint32Array(f.buffer, f.byteOffset, f.length);
}

function firstDifference(a: Array, b: Array): string {
  const x = bitsOf(a);
  const y = bitsOf(b);
  if (x.length !== y.length) return `lengths ${x.length} vs ${y.length}`;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return `index ${i}: ${a.astype('float32').dataSync()[i]} vs ${b.astype('float32').dataSync()[i]}`;
  return '';
}

const x = jax.random.normal(jax.random.key(7), [37, 1000]);
const wide = jax.random.uniform(jax.random.key(8), [3, 50000], { minval: -8, maxval: 8 });

const cases: [string, (a: Array) => Array, Array][] = [
  ['sum over the last axis', (a) => jnp.sum(a, { axis: 1 }), x],
  ['sum over the leading axis (vectorized across outputs)', (a) => jnp.sum(a, { axis: 0 }), x],
  ['sum over both axes', (a) => jnp.sum(a), x],
  ['sum of a transposed view (strided inner axis)', (a) => jnp.sum(jnp.transpose(a), { axis: 1 }), x],
  ['sum of squares over the leading axis (fused, strided)', (a) => jnp.sum(jnp.multiply(a, a), { axis: 0 }), x],
  ['sum of exp(x - max) over the last axis (fused)', (a) => jnp.sum(jnp.exp(jnp.subtract(a, jnp.max(a, { axis: 1, keepdims: true }))), { axis: 1 }), x],
  ['softmax of few long rows (rows split across threads)', (a) => jax.nn.softmax(a, { axis: 1 }), wide],
  ['mean over the last axis of bfloat16', (a) => jnp.mean(a.astype('bfloat16'), { axis: 1 }), x],
  ['max and min over each axis', (a) => jnp.concatenate([jnp.max(a, { axis: 0 }), jnp.min(a, { axis: 1 }), jnp.max(jnp.transpose(a), { axis: 1 })]), x],
];

for (const [name, fn, input] of cases) {
  test(`${name}: jit equals eager bit for bit`, (t) => {
    const eager = fn(input);
    const jitted = jax.jit(fn)(input);
    t.is(firstDifference(jitted, eager), '');
  });
}

test('a long float32 sum stays within an ulp of the float64 sum, even where most values are far below the running sum', (t) => {
  // softmax denominators over 50000 and 10^6 values in [e^-16, 1]: float runs lose the small values, always downwards
  // (256-element blocks: within 0.5 ulp here; 4096: 1.5-2.4 ulps too small; 65536: 15-54)
  for (const n of [50000, 1000000]) {
    const rows = jax.random.uniform(jax.random.key(8), [3, n], { minval: -8, maxval: 8 });
    const shifted = (a: Array) => jnp.exp(jnp.subtract(a, jnp.max(a, { axis: 1, keepdims: true })));
    const values = shifted(rows).dataSync() as Float32Array;
    for (const [how, got] of [['eager', jnp.sum(shifted(rows), { axis: 1 })], ['fused under jit', jax.jit((a: Array) => jnp.sum(shifted(a), { axis: 1 }))(rows)]] as const) {
      const sums = got.dataSync() as Float32Array;
      for (let r = 0; r < 3; r++) {
        let exact = 0;
        for (let c = 0; c < n; c++) exact += values[r * n + c]!;
        const ulp = 2 ** (Math.floor(Math.log2(exact)) - 23);
        t.true(Math.abs(sums[r]! - exact) <= ulp, `${how}, ${n} values, row ${r}: ${sums[r]} vs float64 ${exact} (${((sums[r]! - exact) / ulp).toFixed(2)} ulp)`);
      }
    }
  }
  // 2^24 ones: a single float accumulator stops at 2^24 = 16777216 long before; the lanes and blocks do not
  t.is(jnp.sum(jnp.ones([2 ** 24 + 40])).item(), 2 ** 24 + 40);
});

test('a NaN anywhere makes a float sum, max and min NaN, on every loop; infinities stay exact', (t) => {
  for (const at of [0, 15, 16, 255, 256, 999]) {
    const values = new Float32Array(4 * 1000).fill(1);
    values[2 * 1000 + at] = NaN;
    const a = jnp.array(values).reshape([4, 1000]);
    for (const [label, got] of [
      ['sum rows', jnp.sum(a, { axis: 1 })],
      ['max rows', jnp.max(a, { axis: 1 })],
      ['min rows', jnp.min(a, { axis: 1 })],
      ['max of the transpose', jnp.max(jnp.transpose(a), { axis: 0 })],
      ['sum of the transpose over the leading axis', jnp.sum(jnp.transpose(a), { axis: 0 })],
    ] as const) {
      const v = [...(got.dataSync() as Float32Array)];
      t.deepEqual(v.map(Number.isNaN), [false, false, true, false], `${label}, NaN at ${at}: ${v}`);
    }
    const cols = jnp.max(jnp.array(values).reshape([1000, 4]), { axis: 0 }).dataSync() as Float32Array;
    t.deepEqual([...cols].map(Number.isNaN), [0, 1, 2, 3].map((c) => (2 * 1000 + at) % 4 === c), `max over the leading axis, NaN at ${2 * 1000 + at}`);
  }
  const inf = jnp.array([1, Infinity, 2, -1]).reshape([1, 4]);
  t.deepEqual([...(jnp.max(inf, { axis: 1 }).dataSync() as Float32Array)], [Infinity]);
  t.deepEqual([...(jnp.min(jnp.negative(inf), { axis: 1 }).dataSync() as Float32Array)], [-Infinity]);
  t.deepEqual([...(jnp.sum(jnp.array([Infinity, -Infinity, 1])).dataSync() as Float32Array)].map(Number.isNaN), [true]);
  t.deepEqual([...(jnp.max(jnp.full([300], -Infinity)).dataSync() as Float32Array)], [-Infinity]);
});
