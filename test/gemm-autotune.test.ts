// The GEMM autotune (lib/runtime/gemm-autotune.ts, issue 17 item 5): the
// choice among candidates (the fastest that agrees with the reference kernel;
// a wrong one never wins, however fast), the store that persists choices in
// the kernel cache folder, the kernel header that names the choice; and on
// the emulated GPU, where the heuristic decides unless a timer is injected,
// the whole path with an injected timer: candidates compiled and checked
// against the SIMT reference on the device, the winner in Compiled.kernels()
// and in the cache folder, and the product right.
import test from 'ava';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// the tunings this file makes go to a folder of its own (set before jaxon reads it)
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-gemm-tuning-'));
process.env['JAXON_CACHE_DIR'] = cacheDir;

const jax = await import('../lib/index.js');
const { GemmTuningStore, autotune, gemmAutotuneHooks, gemmShapeClass } = await import('../lib/runtime/gemm-autotune.js');
const { gemmCandidates, gemmTiling } = await import('../lib/compiler/render/cuda-decisions.js');
const { renderCuda } = await import('../lib/compiler/render/cuda.js');
type GemmTiling = import('../lib/compiler/render/cuda-decisions.js').GemmTiling;
type GemmCandidate = import('../lib/runtime/gemm-autotune.js').GemmCandidate;
type DotKernel = import('../lib/compiler/kernel-ir.js').DotKernel;
type JaxArray = import('../lib/index.js').Array;

const jnp = jax.numpy;
const onCuda = jax.defaultBackend() === 'cuda';
test.after.always(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

const bf16: DotKernel = { kind: 'dot', inputDtype: 'bfloat16', outputDtype: 'bfloat16' };
/** params of a row-major [M, K] x [K, N] product */
const params = (M: number, K: number, N: number) => [1, M, N, K, M * K, K, 1, K * N, N, 1];
const name = (c: GemmCandidate) => (c.path === 'wgmma' ? 'wgmma' : `${c.tiling.blockM}x${c.tiling.blockN}/${c.tiling.splitK}`);
const mma = (tiling: GemmTiling): GemmCandidate => ({ path: 'mma', tiling });

test('the autotune takes the fastest candidate that agrees with the reference kernel; a wrong one never wins', (t) => {
  const cls = gemmShapeClass(bf16, params(2048, 1024, 2048), [16, 16, 16], 90)!;
  t.is(cls.key, 'sm90 bfloat16->bfloat16 B1 M2048 N2048 K1024 k16/free16');
  const candidates = gemmCandidates(cls.facts);
  t.true(candidates.length >= 4);
  const heuristic = gemmTiling(cls.facts).choice;
  const tried: string[] = [];
  // the second candidate is wrong and fastest; the third is the fastest correct one (wgmma, on sm_90, slower)
  const order = [heuristic, ...candidates.filter((c) => name(mma(c)) !== name(mma(heuristic)))].map(mma);
  const runner = {
    check: (c: GemmCandidate) => (tried.push(name(c)), name(c) !== name(order[1]!)),
    time: (c: GemmCandidate) => (name(c) === name(order[1]!) ? 0.1 : name(c) === name(order[2]!) ? 0.5 : c.path === 'wgmma' ? 0.7 : 1 + c.tiling.blockM / 1000),
  };
  const tuning = autotune(cls, runner);
  t.deepEqual(tried, [...order.slice(0, 4).map(name), 'wgmma'], 'the heuristic first, then the next candidates, then wgmma (sm_90, bf16)');
  t.deepEqual(tuning.tiling, order[2]!.tiling);
  t.is(tuning.path, undefined, 'an mma.sync tiling');
  t.regex(tuning.why, /^autotuned over 5 candidates: .* wrong, .* 0\.500 ms, .*wgmma 0\.700 ms$/);
  const hopper = autotune(cls, { check: () => true, time: (c) => (c.path === 'wgmma' ? 0.2 : 1) });
  t.is(hopper.path, 'wgmma', 'wgmma measured faster wins');
  const header = renderCuda(bf16, params(2048, 1024, 2048), { gemm: { sm: 90, tuned: hopper } }).source.split('\n').find((l) => l.startsWith('// decision gemm path'))!;
  t.regex(header, /^\/\/ decision gemm path: wgmma \(Hopper's warpgroup MMA, bfloat16, f32 accumulation: autotuned over 5 candidates: /);
  t.false(autotune(gemmShapeClass(bf16, params(2048, 1024, 2048), [16, 16, 16], 80)!, { check: () => true, time: () => 1 }).why.includes('wgmma'), 'no wgmma candidate on sm_80');
  const none = autotune(cls, { check: () => false, time: () => 1 });
  t.deepEqual(none.tiling, heuristic, 'no correct candidate: the heuristic');
  t.regex(none.why, /no candidate agreed with the reference kernel/);
  t.is(gemmShapeClass({ kind: 'dot', inputDtype: 'int32', outputDtype: 'int32' }, params(64, 64, 64), [16, 16, 16], 90), null, 'integer dots are not tuned');
});

test('tunings persist in the kernel cache folder, per device identity, and name themselves in the kernel header', (t) => {
  const file = path.join(cacheDir, 'store-test.json');
  const store = new GemmTuningStore(file, 'an H100 | sm_90a');
  const tiling: GemmTiling = { blockM: 64, blockN: 128, blockK: 32, warpsM: 2, warpsN: 2, stages: 3, splitK: 1 };
  store.set('some class', { tiling, why: 'autotuned over 4 candidates: ...' });
  t.deepEqual(new GemmTuningStore(file, 'an H100 | sm_90a').get('some class')?.tiling, tiling, 'read back from the file');
  t.is(new GemmTuningStore(file, 'an A100 | sm_80').get('some class'), undefined, 'another device tunes again');
  const source = renderCuda(bf16, params(512, 512, 512), { gemm: { sm: 90, tuned: { tiling, why: 'autotuned over 4 candidates: 64x128 0.1 ms' } } }).source;
  t.true(source.includes('\n// decision gemm tiling: 64x128x32 block tiles, 2x2 warps of 32x64, 3 stages (autotuned over 4 candidates: 64x128 0.1 ms)\n'));
});

(onCuda ? test.serial : test.skip)('on the emulated GPU with an injected timer: candidates checked on the device, the winner in Compiled.kernels() and the cache folder', (t) => {
  const [M, K, N] = [100, 64, 90];
  const operand = (shape: number[], seed: number) => jax.random.uniform(jax.random.key(seed), shape, { minval: -1, maxval: 1 }).astype('bfloat16');
  const x = operand([M, K], 1), y = operand([K, N], 2);
  const timed: GemmCandidate[] = [];
  // the smallest mma.sync block tile is "fastest"; wgmma, timed last, slower
  gemmAutotuneHooks.timer = (c) => (timed.push(c), c.path === 'wgmma' ? 1e9 : c.tiling.blockM * c.tiling.blockN);
  try {
    const f = jax.jit((a: JaxArray, b: JaxArray) => jnp.matmul(a, b));
    const got = f(x, y).astype('float32').dataSync();
    t.true(timed.length >= 2, `candidates timed: ${timed.map(name).join(', ')}`);
    t.is(timed[timed.length - 1]!.path, 'wgmma', 'the wgmma kernel was compiled, checked on the device and timed too');
    const smallest = timed.filter((c) => c.path === 'mma').map((c) => c.tiling).sort((a, b) => a.blockM * a.blockN - b.blockM * b.blockN)[0]!;
    const header = f.lower(x, y).compile().kernels().find((k) => k.name.startsWith('dot'))!.source.split('\n').find((l) => l.startsWith('// decision gemm tiling'))!;
    t.true(header.startsWith(`// decision gemm tiling: ${smallest.blockM}x${smallest.blockN}x${smallest.blockK} block tiles`) && header.includes(`(autotuned over ${timed.length} candidates: `), header);
    const files = fs.readdirSync(cacheDir).filter((f) => /^gemm-tuning-[0-9a-f]{12}\.json$/.test(f));
    t.is(files.length, 1);
    const saved = JSON.parse(fs.readFileSync(path.join(cacheDir, files[0]!), 'utf8')) as { entries: Record<string, { why: string }> };
    t.true(Object.keys(saved.entries).some((k) => k.startsWith('sm90 bfloat16->bfloat16 B1 M128 N128 K64')), Object.keys(saved.entries).join('; '));
    // the product is right whatever tiling won
    const want = jax.jit((a: JaxArray, b: JaxArray) => jnp.matmul(a, b))(jax.devicePut(x, jax.devices('cpu')[0]!), jax.devicePut(y, jax.devices('cpu')[0]!)).astype('float32').dataSync();
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / (Math.abs(want[i]!) + 1));
    t.true(worst < 2 ** -6, `worst ${worst}`);
  } finally {
    gemmAutotuneHooks.timer = null;
  }
});

// 16-bit operand tiles with rows of 256 bytes and more swizzle by row (render/cuda-gemm.ts swizzleOf: the 128-byte
// line alone left ldmatrix 2- to 4-way bank conflicts, seen on an H200): the big tilings that use it are checked on
// the device against the SIMT reference like any candidate, and must win when timed fastest.
(onCuda ? test.serial : test.skip)('on the emulated GPU: the largest bfloat16 tilings (rows swizzled by row) agree with the reference and win when fastest', (t) => {
  const [M, K, N] = [256, 64, 256];
  const operand = (shape: number[], seed: number) => jax.random.uniform(jax.random.key(seed), shape, { minval: -1, maxval: 1 }).astype('bfloat16');
  const x = operand([M, K], 3), xt = operand([K, M], 4), y = operand([K, N], 5);
  const layouts: [string, (a: JaxArray, b: JaxArray) => JaxArray, JaxArray][] = [
    ['lhs k-contiguous, rhs n-contiguous', (a, b) => jnp.matmul(a, b), x],
    ['lhs m-contiguous (a transposed operand), rhs n-contiguous', (a, b) => jnp.matmul(jnp.transpose(a), b), xt],
  ];
  gemmAutotuneHooks.timer = (c) => (c.path === 'wgmma' ? 1e9 : 1e6 / (c.tiling.blockM * c.tiling.blockN));
  try {
    for (const [what, fn, lhs] of layouts) {
      const f = jax.jit(fn);
      const got = f(lhs, y).astype('float32').dataSync();
      const source = f.lower(lhs, y).compile().kernels().find((k) => k.name.startsWith('dot'))!.source;
      const header = source.split('\n').find((l) => l.startsWith('// decision gemm tiling'))!;
      const largest = gemmCandidates({ ...gemmShapeClass(bf16, params(M, K, N), [256, 256, 256], 90)!.facts }).reduce((a, b) => (b.blockM * b.blockN > a.blockM * a.blockN ? b : a));
      t.true(header.startsWith(`// decision gemm tiling: ${largest.blockM}x${largest.blockN}x`), `${what}: ${header}`);
      t.true(source.includes('jx_swizzle_rows('), `${what}: the tiles with 256-byte rows and more swizzle by row`);
      const cpu = jax.devices('cpu')[0]!;
      const want = jax.jit(fn)(jax.devicePut(lhs, cpu), jax.devicePut(y, cpu)).astype('float32').dataSync();
      let worst = 0;
      for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / (Math.abs(want[i]!) + 1));
      t.true(worst < 2 ** -6, `${what}: worst ${worst}`);
    }
  } finally {
    gemmAutotuneHooks.timer = null;
  }
});
