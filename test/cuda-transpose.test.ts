// Elementwise kernels that read an input transposed stage it through 32x32
// shared-memory tiles on CUDA (render/cuda.ts, transposedTiles): both the
// reads and the writes are coalesced. The strategy is checked on the rendered
// source everywhere; on a CUDA device (the emulated GPU in npm test) every
// program is compared element for element with the CPU backend.
import test from 'ava';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
const onCuda = jax.defaultBackend() === 'cuda';
const cpu = jax.devices('cpu')[0]!;

type Case = [string, (...xs: jax.Array[]) => jax.Array, () => jax.Array[]];
const normal = (shape: number[], seed: number, dtype: 'float32' | 'bfloat16' | 'float64' = 'float32') =>
  jax.random.normal(jax.random.key(seed), shape).astype(dtype);
const cases: Case[] = [
  ['2-D, sizes not multiples of 32', (a) => jnp.transpose(a), () => [normal([37, 45], 0)]],
  ['2-D, exact tiles', (a) => jnp.transpose(a), () => [normal([64, 96], 1)]],
  ['3-D, inner pair swapped', (a) => jnp.transpose(a, [0, 2, 1]), () => [normal([3, 40, 33], 2)]],
  ['3-D, axes rotated', (a) => jnp.transpose(a, [2, 0, 1]), () => [normal([3, 40, 33], 3)]],
  ['bfloat16', (a) => jnp.transpose(a), () => [normal([50, 70], 4, 'bfloat16')]],
  ['int32', (a) => jnp.transpose(a), () => [jnp.arange(48 * 40).reshape([48, 40])]],
  ['fused with a contiguous input, a scalar and exp', (a, b) => jnp.add(jnp.exp(jnp.transpose(a)), jnp.multiply(b, 2)), () => [normal([37, 45], 5), normal([45, 37], 6)]],
  ['fused with iota', (a) => jnp.add(jnp.transpose(a), jnp.arange(37)), () => [normal([37, 45], 7)]],
  ['two transposed inputs', (a, b) => jnp.multiply(jnp.transpose(a), jnp.transpose(b)), () => [normal([40, 36], 8), normal([40, 36], 9)]],
  ['more tiles than blocks (grid-stride over tiles)', (a) => jnp.transpose(a), () => [normal([1100, 1040], 10)]],
];

test('a transposing elementwise kernel is rendered with shared-memory tiles; small or untransposed ones are not', (t) => {
  const strategies = (f: (...xs: jax.Array[]) => jax.Array, ...xs: jax.Array[]) =>
    jax.jit(f).lower(...xs, { platform: 'cuda' }).compile().kernels().map((k) => k.source.split('\n')[0]!);
  for (const [name, f, inputs] of cases) {
    t.true(strategies(f, ...inputs()).some((s) => /transposed input\(s\) through 32x32 shared-memory tiles/.test(s)), name);
  }
  t.false(strategies((a) => jnp.transpose(a), jnp.ones([4, 5])).some((s) => /tiles/.test(s)), 'a 4x5 transpose is too small to tile');
  t.false(strategies((a) => jnp.exp(a), jnp.ones([64, 64])).some((s) => /tiles/.test(s)), 'nothing transposed');
});

(onCuda ? test : test.skip)('transposing kernels on CUDA equal the CPU backend (exactly, but for exp in the last bit)', (t) => {
  for (const [name, f, inputs] of cases) {
    const xs = inputs();
    const got = jax.jit(f)(...xs).dataSync();
    const want = jax.jit(f)(...xs.map((x) => jax.devicePut(x, cpu))).dataSync();
    t.is(got.length, want.length, name);
    // exp is CUDA's on the GPU and the C prelude's on the CPU: they may differ in the last bit (seen on an H100), and
    // exp(a) + 2b can cancel, so the allowance is absolute: a few ulps of exp's largest values here (e^4 < 64); a
    // tiling mistake would be off by whole elements
    const allowance = name.includes('exp') ? 64 * 2 ** -22 : 0;
    let bad = -1;
    for (let i = 0; i < got.length && bad < 0; i++) {
      if (!Object.is(got[i], want[i]) && !(Math.abs(got[i]! - want[i]!) <= allowance)) bad = i;
    }
    t.is(bad, -1, `${name}: element ${bad} is ${got[bad]} on CUDA, ${want[bad]} on the CPU`);
  }
});
