// The stages API (jit(f).lower(...).compile()), buffer assignment and
// memoryAnalysis: the tutorial's baseline program cross-lowered for CUDA
// against JAX's figures on an H100, arena reuse, donation aliasing, control
// flow inside compiled programs, and the errors of the stages.
import test from 'ava';
import * as jax from '../lib/index.js';
import { packIntervals } from '../lib/compiler/plan.js';
import { assertArray } from './helpers/oracle.js';

const jnp = jax.numpy;
const MiB = 1024 * 1024;

/** A ShapeDtypeStruct stand-in: any non-pytree object with a shape and a dtype lowers. */
class Struct {
  constructor(
    readonly shape: number[],
    readonly dtype: string,
  ) {}
}
const sds = (shape: number[], dtype = 'float32') => new Struct(shape, dtype);

/** The host-offloading tutorial's network: 10 layers of x @ w1 @ w2 under lax.scan. */
function scanned(params: [jax.Array, jax.Array], x: jax.Array): jax.Array {
  const [y] = jax.lax.scan((h: jax.Array, [w1, w2]: [jax.Array, jax.Array]) => [jnp.matmul(jnp.matmul(h, w1), w2), null] as [jax.Array, null], x, params);
  return jnp.sum(y as jax.Array);
}

test("the tutorial's baseline jit(grad(scanned)) cross-lowered for cuda: JAX's H100 figures or better", (t) => {
  const lowered = jax.jit(jax.grad(scanned)).lower([sds([10, 256, 1024]), sds([10, 1024, 256])], sds([256, 256]), { platform: 'cuda' });
  t.is(lowered.platform, 'cuda');
  const compiled = lowered.compile();
  const m = compiled.memoryAnalysis();
  t.log(`argument ${m.argumentSizeInBytes / MiB} MiB, output ${m.outputSizeInBytes / MiB} MiB, temp ${m.tempSizeInBytes / MiB} MiB, peak ${m.peakMemoryInBytes / MiB} MiB (JAX on an H100: temp 17.25, total 57.50)`);
  t.is(m.argumentSizeInBytes, 20.25 * MiB);
  t.is(m.outputSizeInBytes, 20 * MiB);
  t.is(m.aliasSizeInBytes, 0);
  t.true(m.tempSizeInBytes <= 17.25 * MiB, `temp ${m.tempSizeInBytes / MiB} MiB`);
  t.true(m.argumentSizeInBytes + m.outputSizeInBytes - m.aliasSizeInBytes + m.tempSizeInBytes <= 57.5 * MiB);
  t.is(m.hostTempSizeInBytes, 0);
  t.true(m.generatedCodeSizeInBytes > 0);
  // without a GPU the program cannot run here; with one (or the emulated GPU) a wrong signature is JAX's TypeError
  if (jax.defaultBackend() === 'cpu') t.throws(() => compiled(jnp.ones([2])), { message: /compiled for 'cuda'/ });
  else t.throws(() => compiled(jnp.ones([2])), { message: /computation compiled for input types/ });
  const kernels = compiled.kernels();
  t.true(kernels.length > 0);
  for (const k of kernels) {
    const tensorCores = k.source.includes('tensor-core GEMM');
    t.deepEqual(k.source.match(/#include .*/g), ['#include "jaxon_cuda.h"', ...(tensorCores ? ['#include "jaxon_mma.h"'] : [])], `${k.name}: only the prelude header (and the GEMM's device functions)`);
    t.truthy(k.grid);
  }
});

test('lower takes ShapeDtypeStructs and allocates nothing; compile on the cpu runs and equals the jitted call', (t) => {
  const f = (a: jax.Array, b: jax.Array) => jnp.tanh(jnp.add(jnp.matmul(a, b), 1));
  const live = jax.liveArrayCount();
  const lowered = jax.jit(f).lower(sds([4, 8]), sds([8, 3]));
  t.is(jax.liveArrayCount(), live, 'lowering allocates no arrays');
  t.true(lowered.asText().includes('dot_general'));
  const compiled = lowered.compile();
  t.is(lowered.compile(), compiled, 'compile() is cached');
  const a = jnp.reshape(jnp.sin(jnp.arange(32)), [4, 8]);
  const b = jnp.reshape(jnp.cos(jnp.arange(24)), [8, 3]);
  assertArray(t, compiled(a, b) as jax.Array, jax.jit(f)(a, b), { tol: 0 });
  t.true(compiled.asText().includes('dot_'), compiled.asText());
  const m = compiled.memoryAnalysis();
  t.is(m.argumentSizeInBytes, (32 + 24) * 4);
  t.is(m.outputSizeInBytes, 12 * 4);
  t.throws(() => compiled(jnp.ones([4, 9]), b), { instanceOf: TypeError, message: /compiled for input types \(float32\[4,8\], float32\[8,3\]\) was called with \(float32\[4,9\], float32\[8,3\]\)/ });
});

test('lower validates its platform and structs', (t) => {
  const f = (a: jax.Array) => jnp.exp(a);
  t.throws(() => jax.jit(f).lower(sds([2]), { platform: 'tpu' }), { message: /platform must be 'cpu' or 'cuda', got 'tpu'/ });
  t.throws(() => jax.jit(f).lower(sds([2, -1])), { message: /argument leaf 0 has an invalid shape/ });
  t.throws(() => jax.jit(f).lower(sds([2], 'float128')), { message: /unknown dtype 'float128'/ });
});

test('buffer assignment packs intermediates whose lifetimes do not overlap into the same space', (t) => {
  // a chain of matmuls: each intermediate is read only by the next one, so two buffers' space serves them all
  const f = (x: jax.Array, w: jax.Array) => {
    let h = x;
    for (let i = 0; i < 6; i++) h = jnp.tanh(jnp.matmul(h, w));
    return h;
  };
  const lowered = jax.jit(f).lower(sds([64, 256]), sds([256, 256]));
  const compiled = lowered.compile();
  const m = compiled.memoryAnalysis();
  const { plan } = compiled;
  const arenaBuffers = plan.placements.map((p, id) => [p, id] as const).filter(([p]) => p.place === 'arena');
  const total = arenaBuffers.reduce((n, [, id]) => n + plan.program.buffers[id]!.size * 4, 0);
  t.true(arenaBuffers.length >= 5, `${arenaBuffers.length} arena buffers`);
  t.true(m.tempSizeInBytes < total, `arena ${m.tempSizeInBytes} bytes < ${total} bytes of intermediates`);
  t.true(m.tempSizeInBytes <= 2 * 64 * 256 * 4 * 2, `arena ${m.tempSizeInBytes} bytes`);
  const x = jnp.reshape(jnp.sin(jnp.arange(64 * 256)), [64, 256]);
  const w = jnp.multiply(jnp.reshape(jnp.cos(jnp.arange(256 * 256)), [256, 256]), 0.05);
  assertArray(t, compiled(x, w) as jax.Array, f(x, w), { tol: 1e-5 });
});

test('packIntervals: no two buffers live at the same time overlap, offsets aligned', (t) => {
  const intervals = [
    { id: 0, kind: 'device' as const, bytes: 100, first: 0, last: 2 },
    { id: 1, kind: 'device' as const, bytes: 300, first: 1, last: 3 },
    { id: 2, kind: 'device' as const, bytes: 200, first: 3, last: 5 },
    { id: 3, kind: 'device' as const, bytes: 50, first: 4, last: 4 },
    { id: 4, kind: 'device' as const, bytes: 400, first: 6, last: 7 },
  ];
  const { offsets, size } = packIntervals(intervals, 64);
  for (const a of intervals) {
    t.is(offsets.get(a.id)! % 64, 0);
    for (const b of intervals) {
      if (a.id >= b.id || a.last < b.first || b.last < a.first) continue;
      const [oa, ob] = [offsets.get(a.id)!, offsets.get(b.id)!];
      t.true(oa + a.bytes <= ob || ob + b.bytes <= oa, `buffers ${a.id} and ${b.id} overlap`);
    }
  }
  t.is(offsets.get(4), 0, 'the last buffer reuses the start of the arena');
  t.true(size <= 640, `size ${size}`);
});

test('donated arguments hold outputs of the same dtype, size and kind (aliasSizeInBytes), and the result is right', (t) => {
  const step = (p: jax.Array, g: jax.Array) => jnp.subtract(p, jnp.multiply(g, 0.1));
  const jf = jax.jit(step, { donateArgnums: 0 });
  const m = jf.lower(sds([1000]), sds([1000])).compile().memoryAnalysis();
  t.is(m.aliasSizeInBytes, 4000);
  t.is(m.outputSizeInBytes, 4000);
  t.is(jax.jit(step).lower(sds([1000]), sds([1000])).compile().memoryAnalysis().aliasSizeInBytes, 0, 'nothing aliases without donation');
  const p = jnp.arange(1000, undefined, undefined, { dtype: 'float32' });
  const g = jnp.ones([1000]);
  const expected = step(p, g);
  const out = jf(p, g);
  assertArray(t, out, expected, { tol: 0 });
  t.throws(() => p.dataSync(), { message: /donated/ });
  // a donated buffer another array still shares is not overwritten
  const q = jnp.arange(1000, undefined, undefined, { dtype: 'float32' });
  const shared = jax.jit((a: jax.Array) => a)(q);
  const out2 = jf(q, g);
  assertArray(t, out2, expected, { tol: 0 });
  assertArray(t, shared, jnp.arange(1000, undefined, undefined, { dtype: 'float32' }), { tol: 0 });
});

test('control flow compiles into the program: kernelCount and memoryAnalysis work for scan, while and cond', (t) => {
  const f = (x: jax.Array) => {
    const [c, ys] = jax.lax.scan((h: jax.Array, w: jax.Array) => {
      const n = jnp.tanh(jnp.multiply(h, w));
      return [n, jnp.sum(n)] as [jax.Array, jax.Array];
    }, x, jnp.ones([5, 16])) as [jax.Array, jax.Array];
    const [, k] = jax.lax.whileLoop(([i]: [jax.Array, jax.Array]) => jnp.less(i, 3), (([i, v]: [jax.Array, jax.Array]) => [jnp.add(i, 1), jnp.add(v, 1)]) as never, [jnp.array(0, { dtype: 'int32' }), c]) as [jax.Array, jax.Array];
    return jax.lax.cond(jnp.greater(jnp.sum(k), 0), (v: jax.Array) => jnp.multiply(v, 2), (v: jax.Array) => v, jnp.add(k, jnp.sum(ys)));
  };
  const x = jnp.multiply(jnp.sin(jnp.arange(16)), 0.5);
  const jf = jax.jit(f);
  t.true(jf.kernelCount(x) >= 3);
  const text = String(jf.executable(x));
  t.regex(text, /scan/);
  t.regex(text, /while/);
  t.regex(text, /cond/);
  const m = jf.lower(x).compile().memoryAnalysis();
  t.true(m.tempSizeInBytes > 0);
  assertArray(t, jf(x) as jax.Array, f(x) as jax.Array, { tol: 1e-6 });
});

test('scan with reverse, several carries and ys, passthrough carries and length 0', (t) => {
  const f = (x: jax.Array, xs: jax.Array) =>
    jax.lax.scan((([a, b]: [jax.Array, jax.Array], r: jax.Array) => [[jnp.add(a, r), b], [jnp.multiply(a, r), a]]) as never, [x, jnp.negative(x)], xs, { reverse: true });
  const x = jnp.arange(3, undefined, undefined, { dtype: 'float32' });
  const xs = jnp.reshape(jnp.arange(12, undefined, undefined, { dtype: 'float32' }), [4, 3]);
  const expected = f(x, xs) as unknown as jax.Array[][];
  const got = jax.jit(f)(x, xs) as unknown as jax.Array[][];
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) assertArray(t, got[i]![j]!, expected[i]![j]!, { tol: 0 });
  // expected values by hand for the reverse scan
  assertArray(t, got[0]![0]!, jnp.add(x, jnp.sum(xs, { axis: 0 })), { tol: 0 });
  const empty = jax.jit(f)(x, jnp.zeros([0, 3])) as unknown as jax.Array[][];
  assertArray(t, empty[0]![0]!, x, { tol: 0 });
  t.deepEqual(empty[1]![0]!.shape, [0, 3]);
});

test('while loops alternate their carry buffers and copy once at the end', (t) => {
  for (const n of [0, 1, 2, 5]) {
    const f = (x: jax.Array) => jax.lax.whileLoop(([i]: [jax.Array, jax.Array]) => jnp.less(i, n), (([i, v]: [jax.Array, jax.Array]) => [jnp.add(i, 1), jnp.add(jnp.multiply(v, 2), i)]) as never, [jnp.array(0, { dtype: 'int32' }), x]);
    const x = jnp.arange(4, undefined, undefined, { dtype: 'float32' });
    const [i, v] = jax.jit(f)(x) as [jax.Array, jax.Array];
    t.is(i.item(), n);
    let expected = [0, 1, 2, 3];
    for (let k = 0; k < n; k++) expected = expected.map((e) => e * 2 + k);
    t.deepEqual([...v.dataSync()], expected);
  }
});

test('JAXON_DUMP_DIR receives every cross-lowered CUDA kernel as NAME.cu; kernels() lists name, source and launch shape', async (t) => {
  const { mkdtempSync, readdirSync, readFileSync } = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jaxon-dump-'));
  const before = process.env.JAXON_DUMP_DIR;
  process.env.JAXON_DUMP_DIR = dir;
  try {
    const f = (x: jax.Array) => jax.nn.softmax(jnp.multiply(x, 3), { axis: -1 });
    const kernels = jax.jit(f).lower(sds([64, 1000]), { platform: 'cuda' }).compile().kernels();
    t.is(kernels.length, 2, 'row softmax: 2 kernels');
    const files = readdirSync(dir).filter((n) => n.endsWith('.cu'));
    for (const k of kernels) {
      t.true(files.includes(`${k.name}.cu`), k.name);
      t.is(readFileSync(path.join(dir, `${k.name}.cu`), 'utf8'), k.source);
      t.true(k.block![0] * k.block![1] * k.block![2] <= 1024);
    }
  } finally {
    if (before === undefined) delete process.env.JAXON_DUMP_DIR;
    else process.env.JAXON_DUMP_DIR = before;
  }
});
