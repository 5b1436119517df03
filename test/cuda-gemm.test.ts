// The tensor-core GEMM (lib/compiler/render/cuda-gemm.ts, issue 17) on a CUDA
// device (jaxon's emulated GPU in npm test, whose mma / ldmatrix / cp.async
// follow the PTX ISA: cuda-mma.test.ts), element for element against the CPU
// backend: odd shapes (1, 7, 129, 4097) in every operand layout, float32 at
// default precision (tf32 operands: the bound allows 10-bit mantissas) and
// at Precision.HIGHEST (3xTF32: float32 accuracy), bfloat16 and float16
// (products exact, f32 sums, the result rounded to 16 bits), split-K,
// batched and strided dot_generals, the epilogues fusion gives a dot
// (tanh(x @ w + b) in one kernel, the MLP backward pass), and JAXON_GEMM;
// the Hopper kernel with its TMA producer and with the cp.async fallback
// (JAXON_WGMMA_TMA=0) on shapes of 1, 7, 129, 1000 and 4097.
// Each element's bound is scaled by sum_k |a||b| (the magnitude the rounding
// of products and sums is relative to), so a dropped tile or a wrong
// fragment is off by whole products and cannot pass.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { CudaExecutable } from '../lib/runtime/cuda-executable.js';

const jnp = jax.numpy;
const lax = jax.lax;
const onCuda = jax.defaultBackend() === 'cuda';
const cpu = jax.devices('cpu')[0]!;

type Kind = 'float32' | 'float32-highest' | 'bfloat16' | 'float16';
const dtypeOf = (kind: Kind) => (kind === 'float32-highest' ? 'float32' : kind);
const precisionOf = (kind: Kind) => (kind === 'float32-highest' ? lax.Precision.HIGHEST : undefined);

/** Deterministic values in [-1, 1) of `shape`, rounded to dtype. */
function operand(shape: number[], seed: number, dtype: string): jax.Array {
  const n = shape.reduce((a, b) => a * b, 1);
  let s = (seed * 2654435761) >>> 0 || 1;
  const values = Float32Array.from({ length: n }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) / 4294967296) * 2 - 1;
  });
  return jnp.array(values).reshape(shape).astype(dtype as 'float32');
}

/** |error| allowed relative to sum |a||b| for each kind, and the output's own rounding (an ulp of a 16-bit result). */
function bounds(kind: Kind, K: number): { relative: number; ulp: number } {
  const sums = 2 ** -21 * Math.max(8, Math.sqrt(K)); // f32 sums in another order than the CPU's
  switch (kind) {
    case 'float32': return { relative: 2 ** -10 + sums, ulp: 0 }; // each operand rounded to 11 significant bits
    case 'float32-highest': return { relative: sums, ulp: 0 };
    case 'bfloat16': return { relative: sums, ulp: 2 ** -7 };
    case 'float16': return { relative: sums, ulp: 2 ** -10 };
  }
}

/**
 * Runs `f` on the CUDA device and on the CPU; `magnitude` (run on the CPU with |operands|) gives sum |a||b| per output
 * element. Returns the first element out of bounds, or null.
 */
function compare(f: (...xs: jax.Array[]) => jax.Array, xs: jax.Array[], magnitude: (...xs: jax.Array[]) => jax.Array, kind: Kind, K: number): string | null {
  const got = jax.jit(f)(...xs).astype('float32').dataSync();
  const onCpu = xs.map((x) => jax.devicePut(x, cpu));
  const want = jax.jit(f)(...onCpu).astype('float32').dataSync();
  const mag = jax.jit(magnitude)(...onCpu.map((x) => jnp.abs(x.astype('float32')))).dataSync();
  if (got.length !== want.length) return `${got.length} elements, the CPU has ${want.length}`;
  const { relative, ulp } = bounds(kind, K);
  for (let i = 0; i < got.length; i++) {
    const bound = relative * mag[i % mag.length]! + ulp * Math.abs(want[i]!) + 1e-6;
    if (!(Math.abs(got[i]! - want[i]!) <= bound)) return `element ${i}: CUDA ${got[i]}, CPU ${want[i]} (bound ${bound.toExponential(2)})`;
  }
  return null;
}

/** The dot kernels' first header lines (strategy) of f's CUDA program. */
function strategies(f: (...xs: jax.Array[]) => jax.Array, xs: jax.Array[]): string[] {
  return jax.jit(f).lower(...xs, { platform: 'cuda' }).compile().kernels().filter((k) => k.name.startsWith('dot')).map((k) => k.source.split('\n').filter((l) => l.startsWith('// jaxon CUDA kernel') || l.startsWith('// decision gemm')).join('\n'));
}

const LAYOUTS = ['NN', 'TN', 'NT', 'TT'] as const;
/** [M, K, N]: 1, 7, 129 and neighbours of tile edges. */
const SHAPES: [number, number, number][] = [[1, 1, 1], [7, 7, 7], [1, 129, 129], [129, 7, 1], [33, 129, 65], [130, 72, 70]];

for (const kind of ['float32', 'float32-highest', 'bfloat16', 'float16'] as const) {
  (onCuda ? test.serial : test.skip)(`${kind} products of odd shapes in every operand layout agree with the CPU backend`, (t) => {
    const dtype = dtypeOf(kind);
    const precision = precisionOf(kind);
    const paths = new Set<string>();
    SHAPES.forEach(([M, K, N], s) => {
      const layout = LAYOUTS[s % LAYOUTS.length]!;
      // a transposed operand contracts its other axis: the kernel reads it through m- (or k-) contiguous tiles
      const a = operand(layout[0] === 'T' ? [K, M] : [M, K], 7 * s + 1, dtype);
      const b = operand(layout[1] === 'T' ? [N, K] : [K, N], 7 * s + 2, dtype);
      const product = (x: jax.Array, y: jax.Array) => lax.dotGeneral(x, y, [[[layout[0] === 'T' ? 0 : 1], [layout[1] === 'T' ? 1 : 0]], [[], []]], { precision });
      for (const line of strategies(product, [a, b])) paths.add(line.split('\n')[0]!.replace(/^.*?: /, ''));
      const bad = compare(product, [a, b], product, kind, K);
      t.is(bad, null, `[${M},${K}] x [${K},${N}] ${layout}: ${bad}`);
    });
    const all = [...paths].join('\n');
    t.regex(all, new RegExp(`tensor-core GEMM \\(mma\\.sync ${kind === 'float32' ? 'tf32' : kind === 'float32-highest' ? '3xTF32' : kind}\\)`));
    t.regex(all, /cp\.async/, 'some operand goes through cp.async');
    t.regex(all, /lhs m-contiguous/, 'some lhs is read m-contiguous');
    t.regex(all, /rhs k-contiguous/, 'some rhs is read k-contiguous');
    t.log([...paths].join('\n'));
  });
}

/** Runs `body` with the environment variables set (undefined: unset), restoring them afterwards. */
function withEnv(vars: Record<string, string | undefined>, body: () => void): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    body();
  } finally {
    set(saved);
  }
}

(onCuda ? test.serial : test.skip)('an eager dot follows JAXON_GEMM as it is at each call, not as it was when its shapes were first seen', (t) => {
  // eager plans are cached by primitive, shapes and params; their rendering used to be too, so a second value of
  // JAXON_GEMM for the same shapes ran the first one's kernel
  const backend = (jax.devices('cuda')[0] as unknown as { backend: { loadedKernelCount: number } }).backend;
  const a = operand([24, 40], 11, 'float16'), b = operand([40, 24], 12, 'float16');
  const run = (path: string) => {
    let out: Float32Array | undefined;
    withEnv({ JAXON_GEMM: path }, () => { out = jnp.matmul(a, b).astype('float32').dataSync() as Float32Array; });
    return { out: out!, loaded: backend.loadedKernelCount };
  };
  const simt = run('simt'), mma = run('mma'), again = run('simt');
  t.is(mma.loaded, simt.loaded + 1, 'JAXON_GEMM=mma loads the tensor-core kernel');
  t.is(again.loaded, mma.loaded, 'back to simt: the SIMT kernel, loaded already');
  const worst = Math.max(...simt.out.map((v, i) => Math.abs(mma.out[i]! - v) / (1 + Math.abs(v))));
  t.true(worst <= 2 ** -8, `the two kernels differ by ${worst} (relative)`);
  t.deepEqual(again.out, simt.out);
});

(onCuda ? test.serial : test.skip)('JAXON_GEMM=wgmma (TMA off): Hopper\'s warp-specialized wgmma kernel on odd shapes in every layout, batched, with an epilogue', (t) => {
  const saved = process.env['JAXON_GEMM'];
  process.env['JAXON_GEMM'] = 'wgmma';
  process.env['JAXON_WGMMA_TMA'] = '0';
  try {
    const paths = new Set<string>();
    for (const kind of ['bfloat16', 'float16'] as const) {
      [...SHAPES, [130, 300, 150] as [number, number, number]].forEach(([M, K, N], s) => {
        const layout = LAYOUTS[(s + (kind === 'float16' ? 1 : 0)) % LAYOUTS.length]!;
        const a = operand(layout[0] === 'T' ? [K, M] : [M, K], 7 * s + 3, kind);
        const b = operand(layout[1] === 'T' ? [N, K] : [K, N], 7 * s + 4, kind);
        const product = (x: jax.Array, y: jax.Array) => lax.dotGeneral(x, y, [[[layout[0] === 'T' ? 0 : 1], [layout[1] === 'T' ? 1 : 0]], [[], []]]);
        for (const line of strategies(product, [a, b])) paths.add(line.split('\n')[0]!.replace(/^.*?: /, ''));
        t.is(compare(product, [a, b], product, kind, K), null, `${kind} [${M},${K}] x [${K},${N}] ${layout}`);
      });
    }
    const all = [...paths].join('\n');
    t.regex(all, /Hopper GEMM \(wgmma bfloat16, m64n128k16\)/);
    t.regex(all, /Hopper GEMM \(wgmma float16, m64n64k16\)/);
    t.regex(all, /lhs k-contiguous rows by cp\.async, rhs k-contiguous rows by cp\.async/, 'both operands by cp.async somewhere');
    t.regex(all, /element by element into K-major tiles/);
    // batched (a persistent block walks several batch elements) with a fused epilogue
    const x = operand([3, 70, 96], 5, 'bfloat16'), w = operand([3, 96, 40], 6, 'bfloat16'), bias = operand([40], 7, 'bfloat16');
    const layer = (xx: jax.Array, ww: jax.Array, bb: jax.Array) => jnp.tanh(jnp.add(jnp.matmul(xx, ww), bb));
    t.regex(strategies(layer, [x, w, bias]).join('\n'), /Hopper GEMM .*fused epilogue/);
    t.is(compare(layer, [x, w, bias], (xx, ww) => jnp.matmul(xx, ww), 'bfloat16', 96), null, 'batched tanh(x @ w + b)');
    // more tiles (batch elements) than the 132 persistent blocks: some blocks take two
    const many = [operand([140, 9, 20], 8, 'bfloat16'), operand([140, 20, 5], 9, 'bfloat16')];
    const batched = (p: jax.Array, q: jax.Array) => jnp.matmul(p, q);
    t.regex(strategies(batched, many).join('\n'), /persistent over 140 tiles/);
    t.is(compare(batched, many, batched, 'bfloat16', 20), null, '140 batch elements on 132 blocks');
    // float32 stays on mma.sync, and says why
    t.regex(strategies((p: jax.Array, q: jax.Array) => jnp.matmul(p, q), [operand([8, 8], 1, 'float32'), operand([8, 8], 2, 'float32')]).join('\n'), /JAXON_GEMM=wgmma, but the wgmma kernel takes bfloat16 and float16/);
    t.notRegex(all, /by TMA/, 'JAXON_WGMMA_TMA=0 takes the cp.async producer');
    t.log(all);
  } finally {
    delete process.env['JAXON_WGMMA_TMA'];
    if (saved === undefined) delete process.env['JAXON_GEMM'];
    else process.env['JAXON_GEMM'] = saved;
  }
});

/** [M, K, N] for the TMA producer: M and N of 1, 7, 129, 1000 and 4097 (the boxes' zero fill at every edge), K a multiple of 8 (16-byte rows) except 4097 (no tensor map: cp.async or element loads). */
const TMA_SHAPES: [number, number, number][] = [[1, 8, 1], [7, 64, 7], [129, 136, 129], [1000, 1000, 7], [4097, 16, 24], [7, 4097, 9], [130, 200, 1000]];

for (const tma of ['1', '0'] as const) {
  (onCuda ? test.serial : test.skip)(`JAXON_GEMM=wgmma, ${tma === '1' ? 'TMA producer (MN-major tiles for transposed operands)' : 'cp.async producer (JAXON_WGMMA_TMA=0)'}: odd shapes 1, 7, 129, 1000, 4097 in bfloat16 and float16, k- and m/n-contiguous operands, against the CPU`, (t) => {
    withEnv({ JAXON_GEMM: 'wgmma', JAXON_WGMMA_TMA: tma }, () => {
      const producers = new Set<string>();
      for (const kind of ['bfloat16', 'float16'] as const) {
        TMA_SHAPES.forEach(([M, K, N], s) => {
          // NT: both operands k-contiguous (TMA's layout); every third shape also in another layout (transposed operands)
          for (const layout of s % 3 === 0 ? ['NT', LAYOUTS[(s / 3 + (kind === 'float16' ? 1 : 0)) % 4]!] : ['NT']) {
            const a = operand(layout[0] === 'T' ? [K, M] : [M, K], 11 * s + 3, kind);
            const b = operand(layout[1] === 'T' ? [N, K] : [K, N], 11 * s + 4, kind);
            const product = (x: jax.Array, y: jax.Array) => lax.dotGeneral(x, y, [[[layout[0] === 'T' ? 0 : 1], [layout[1] === 'T' ? 1 : 0]], [[], []]]);
            const kernels = jax.jit(product).lower(a, b, { platform: 'cuda' }).compile().kernels().filter((k) => k.name.startsWith('dot'));
            for (const k of kernels) producers.add(k.source.split('\n').find((l) => l.startsWith('// decision wgmma producer')) ?? 'none');
            t.is(compare(product, [a, b], product, kind, K), null, `${kind} [${M},${K}] x [${K},${N}] ${layout}`);
          }
        });
        // transposed operands with 16-byte strides: m- or n-contiguous, straight into MN-major tiles by TMA
        for (const [M, K, N, layout] of [[136, 64, 200, 'TN'], [200, 96, 1000, 'NN'], [72, 130, 7, 'TT']] as const) {
          const a = operand(layout[0] === 'T' ? [K, M] : [M, K], M + 1, kind);
          const b = operand(layout[1] === 'T' ? [N, K] : [K, N], N + 2, kind);
          const product = (x: jax.Array, y: jax.Array) => lax.dotGeneral(x, y, [[[layout[0] === 'T' ? 0 : 1], [layout[1] === 'T' ? 1 : 0]], [[], []]]);
          const kernels = jax.jit(product).lower(a, b, { platform: 'cuda' }).compile().kernels().filter((k) => k.name.startsWith('dot'));
          for (const k of kernels) producers.add(k.source.split('\n').find((l) => l.startsWith('// decision wgmma producer')) ?? 'none');
          t.is(compare(product, [a, b], product, kind, K), null, `${kind} [${M},${K}] x [${K},${N}] ${layout}`);
        }
      }
      const all = [...producers].join('\n');
      if (tma === '1') {
        t.regex(all, /decision wgmma producer: lhs by TMA \(cp\.async\.bulk\.tensor, tensor map\), rhs by TMA/, 'both operands by TMA');
        t.regex(all, /lhs k-contiguous rows by cp\.async|lhs by cp\.async rows|lhs element by element/, 'K = 4097 (rows of 8194 bytes): no tensor map');
        t.regex(all, /lhs by TMA into MN-major tiles \(transposed wgmma operand\)/, 'an m-contiguous lhs by TMA, untransposed');
        t.regex(all, /rhs by TMA into MN-major tiles \(transposed wgmma operand\)/, 'an n-contiguous rhs by TMA, untransposed');
      } else {
        t.notRegex(all, /by TMA/);
        t.regex(all, /JAXON_WGMMA_TMA=0/);
        t.regex(all, /lhs by cp\.async rows, rhs by cp\.async rows/);
        t.regex(all, /lhs by cp\.async into MN-major tiles \(transposed wgmma operand\)/, 'an m-contiguous lhs by cp.async, untransposed');
        t.regex(all, /rhs by cp\.async into MN-major tiles \(transposed wgmma operand\)/, 'an n-contiguous rhs by cp.async, untransposed');
      }
      t.log(all);
    });
  });
}

(onCuda ? test.serial : test.skip)('JAXON_GEMM=wgmma with TMA: a fused tanh(x @ w + b) stays one kernel; a second call with other arrays re-encodes the tensor maps (graph update)', (t) => {
  withEnv({ JAXON_GEMM: 'wgmma', JAXON_WGMMA_TMA: undefined }, () => {
    const layer = (xx: jax.Array, ww: jax.Array, bb: jax.Array) => jnp.tanh(jnp.add(lax.dotGeneral(xx, ww, [[[1], [1]], [[], []]]), bb));
    const x = operand([200, 96], 21, 'bfloat16'), w = operand([72, 96], 22, 'bfloat16'), bias = operand([72], 23, 'bfloat16');
    const kernels = jax.jit(layer).lower(x, w, bias, { platform: 'cuda' }).compile().kernels();
    t.is(kernels.length, 1, kernels.map((k) => k.name).join(', '));
    t.regex(kernels[0]!.source, /Hopper GEMM .*lhs by TMA, rhs by TMA.*fused epilogue/);
    t.regex(kernels[0]!.source, /const __grid_constant__ jx_tensor_map tmap_lhs, const __grid_constant__ jx_tensor_map tmap_rhs\)/);
    const f = jax.jit(layer);
    const first = f(x, w, bias).astype('float32').dataSync();
    // other operands at other addresses: a graph replaying the first call's tensor maps would read the old ones
    const x2 = operand([200, 96], 24, 'bfloat16'), w2 = operand([72, 96], 25, 'bfloat16');
    const second = f(x2, w2, bias).astype('float32').dataSync();
    const cpuLayer = jax.jit(layer);
    const [cx, cw, cb, cx2, cw2] = [x, w, bias, x2, w2].map((a) => jax.devicePut(a, cpu)) as jax.Array[];
    const want1 = cpuLayer(cx!, cw!, cb!).astype('float32').dataSync(), want2 = cpuLayer(cx2!, cw2!, cb!).astype('float32').dataSync();
    const worst = (got: ArrayLike<number>, want: ArrayLike<number>) => Math.max(...Array.from(want, (v, i) => Math.abs(v - got[i]!)));
    t.true(worst(first, want1) < 2 ** -6, `first call: ${worst(first, want1)}`);
    t.true(worst(second, want2) < 2 ** -6, `second call (new addresses): ${worst(second, want2)}`);
    const stats = (f.executable(x, w, bias) as unknown as CudaExecutable).programStats();
    const sum = (key: 'graphLaunches' | 'graphUpdates') => stats.reduce((n: number, st) => n + st[key], 0);
    t.is(sum('graphLaunches'), 2, 'both calls ran as a graph');
    t.true(sum('graphUpdates') >= 1, 'the second updated its kernel node (the tensor maps with it)');
    // eagerly (one launch through cudaLaunch, its tensor maps encoded there)
    const eager = lax.dotGeneral(x2, w2, [[[1], [1]], [[], []]]).astype('float32').dataSync();
    const eagerWant = lax.dotGeneral(cx2!, cw2!, [[[1], [1]], [[], []]]).astype('float32').dataSync();
    // both round the f32 sums to bfloat16: at most one ulp apart (2^-7 relative)
    const off = Array.from(eagerWant).findIndex((v, i) => !(Math.abs(eager[i]! - v) <= 2 ** -7 * Math.abs(v) + 2 ** -20));
    t.is(off, -1, `eager dot_general: element ${off}: ${eager[off]}, CPU ${eagerWant[off]}`);
  });
});

(onCuda ? test.serial : test.skip)('a 4097-long K (split over blocks) and a 4097-long M', (t) => {
  const cases: [Kind, number, number, number][] = [['bfloat16', 16, 4097, 24], ['float32', 4097, 16, 8], ['float32-highest', 24, 4097, 8]];
  for (const [kind, M, K, N] of cases) {
    const a = operand([M, K], M + K, dtypeOf(kind));
    const b = operand([K, N], K + N, dtypeOf(kind));
    const product = (x: jax.Array, y: jax.Array) => jnp.matmul(x, y, { precision: precisionOf(kind) });
    const bad = compare(product, [a, b], product, kind, K);
    t.is(bad, null, `${kind} [${M},${K}] x [${K},${N}]: ${bad}`);
    if (K === 4097) t.regex(strategies(product, [a, b]).join('\n'), /split-K \d+/, `${kind}: K is split`);
  }
});

(onCuda ? test.serial : test.skip)('batched and strided dot_generals: batch axes anywhere, a shared rhs, two contracting axes', (t) => {
  const dn = (lc: number[], rc: number[], lb: number[], rb: number[]): [[number[], number[]], [number[], number[]]] => [[lc, rc], [lb, rb]];
  const cases: [string, number[], number[], (x: jax.Array, y: jax.Array) => jax.Array][] = [
    ['batch first', [3, 33, 40], [3, 40, 17], (x, y) => lax.dotGeneral(x, y, dn([2], [1], [0], [0]))],
    ['batch in the middle (a layout step)', [33, 3, 40], [40, 3, 17], (x, y) => lax.dotGeneral(x, y, dn([2], [0], [1], [1]))],
    ['a shared rhs (batch stride 0)', [3, 33, 40], [40, 17], (x, y) => jnp.matmul(x, y)],
    ['two contracting axes', [9, 5, 8], [5, 8, 11], (x, y) => jnp.tensordot(x, y, 2)],
  ];
  for (const kind of ['bfloat16', 'float32'] as const) {
    cases.forEach(([name, sa, sb, f], i) => {
      const a = operand(sa, 31 * i + 1, kind);
      const b = operand(sb, 31 * i + 2, kind);
      const K = name === 'two contracting axes' ? 40 : 40;
      const bad = compare(f, [a, b], f, kind, K);
      t.is(bad, null, `${kind} ${name}: ${bad}`);
      t.true(strategies(f, [a, b]).every((s) => /tensor-core GEMM|Hopper GEMM/.test(s)), `${kind} ${name}: on tensor cores (mma.sync, or wgmma where the autotune chose it)`);
    });
  }
});

(onCuda ? test.serial : test.skip)('tanh(x @ w + b) is one tensor-core kernel with the epilogue fused, and agrees with the CPU', (t) => {
  for (const kind of ['float32', 'bfloat16'] as const) {
    const x = operand([70, 96], 1, kind), w = operand([96, 50], 2, kind), bias = operand([50], 3, kind);
    const layer = (xx: jax.Array, ww: jax.Array, bb: jax.Array) => jnp.tanh(jnp.add(jnp.matmul(xx, ww), bb));
    const kernels = jax.jit(layer).lower(x, w, bias, { platform: 'cuda' }).compile().kernels();
    t.is(kernels.length, 1, `${kind}: ${kernels.map((k) => k.name).join(', ')}`);
    t.regex(kernels[0]!.source.split('\n')[0]!, /(tensor-core|Hopper) GEMM .*fused epilogue/);
    const bad = compare(layer, [x, w, bias], (xx, ww) => jnp.matmul(xx, ww), kind, 96);
    t.is(bad, null, `${kind}: ${bad}`);
  }
});

(onCuda ? test.serial : test.skip)('the MLP backward pass (gradient epilogues fused onto its dots) agrees with the CPU', (t) => {
  const x = operand([40, 64], 11, 'float32'), w1 = operand([64, 48], 12, 'float32'), b1 = operand([48], 13, 'float32'), w2 = operand([48, 10], 14, 'float32');
  const loss = (p: { w1: jax.Array; b1: jax.Array; w2: jax.Array }, xx: jax.Array) =>
    jnp.sum(jnp.square(jnp.matmul(jax.nn.gelu(jnp.add(jnp.matmul(xx, p.w1), p.b1)), p.w2)));
  const grads = (ww1: jax.Array, bb1: jax.Array, ww2: jax.Array, xx: jax.Array) => {
    const g = jax.grad(loss)({ w1: ww1, b1: bb1, w2: ww2 }, xx) as { w1: jax.Array; b1: jax.Array; w2: jax.Array };
    return jnp.concatenate([g.w1.reshape([-1]), g.b1, g.w2.reshape([-1])]);
  };
  const dots = jax.jit(grads).lower(w1, b1, w2, x, { platform: 'cuda' }).compile().kernels().filter((k) => k.name.startsWith('dot'));
  t.true(dots.length >= 4 && dots.every((k) => k.source.includes('tensor-core GEMM')), dots.map((k) => k.source.split('\n')[0]).join('\n'));
  t.true(dots.some((k) => k.source.split('\n')[0]!.includes('fused epilogue')), 'some gradient dot carries an epilogue');
  const got = jax.jit(grads)(w1, b1, w2, x).dataSync();
  const [cw1, cb1, cw2, cx] = [w1, b1, w2, x].map((a) => jax.devicePut(a, cpu)) as [jax.Array, jax.Array, jax.Array, jax.Array];
  const want = jax.jit(grads)(cw1, cb1, cw2, cx).dataSync();
  // tf32 products through two layers of the chain rule: relative to the gradient's scale
  const scale = Math.max(...Array.from(want, Math.abs));
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / scale);
  t.true(worst < 2 ** -7, `worst error ${worst} of the largest gradient`);
});

(onCuda ? test.serial : test.skip)('Precision.HIGHEST keeps float32 accuracy; the default rounds float32 operands to tf32, as JAX on a GPU', (t) => {
  const [M, K, N] = [32, 512, 40];
  const a = operand([M, K], 5, 'float32'), b = operand([K, N], 6, 'float32');
  const av = a.dataSync(), bv = b.dataSync();
  const error = (precision?: string) => {
    const got = jax.jit((x: jax.Array, y: jax.Array) => jnp.matmul(x, y, { precision }))(a, b).dataSync();
    let worst = 0;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = 0, m = 0;
        for (let k = 0; k < K; k++) { s += av[i * K + k]! * bv[k * N + j]!; m += Math.abs(av[i * K + k]! * bv[k * N + j]!); }
        worst = Math.max(worst, Math.abs(got[i * N + j]! - s) / m);
      }
    }
    return worst;
  };
  const tf32 = error(), highest = error('highest'), float32 = error('float32');
  t.true(tf32 > 2 ** -16 && tf32 < 2 ** -10, `default precision: worst error ${tf32} of sum |a||b| (tf32 operands)`);
  t.true(highest < 2 ** -20, `Precision.HIGHEST: ${highest}`);
  t.is(float32, highest, "JAX's 'float32' is HIGHEST");
  t.throws(() => jnp.matmul(a, b, { precision: 'fast' }), { message: /jnp\.matmul: precision must be a lax\.Precision/ });
});

(onCuda ? test.serial : test.skip)('JAXON_GEMM forces the path: simt takes the SIMT kernel with f32 accumulation, mma and wgmma tensor cores', (t) => {
  const a = operand([33, 70], 1, 'float32'), b = operand([70, 20], 2, 'float32');
  const product = (x: jax.Array, y: jax.Array) => jnp.matmul(x, y);
  const saved = process.env['JAXON_GEMM'];
  try {
    process.env['JAXON_GEMM'] = 'simt';
    const simt = strategies(product, [a, b]).join('\n');
    t.regex(simt, /shared-memory tiles, float accumulation/);
    t.regex(simt, /decision gemm path: simt \(JAXON_GEMM=simt\)/);
    t.is(compare(product, [a, b], product, 'float32-highest', 70), null, 'the SIMT kernel is float32-accurate');
    process.env['JAXON_GEMM'] = 'mma';
    t.regex(strategies(product, [a, b]).join('\n'), /decision gemm path: mma \(tensor cores: mma\.sync, float32 as tf32 \(default precision\), f32 accumulation \(JAXON_GEMM=mma\)\)/);
    process.env['JAXON_GEMM'] = 'wgmma';
    t.regex(strategies(product, [a, b]).join('\n'), /decision gemm path: (wgmma|mma) \(/);
    process.env['JAXON_GEMM'] = 'tensor';
    t.throws(() => strategies(product, [a, b]), { message: /JAXON_GEMM must be simt, mma, wgmma or auto, got "tensor"/ });
  } finally {
    if (saved === undefined) delete process.env['JAXON_GEMM'];
    else process.env['JAXON_GEMM'] = saved;
  }
});

(onCuda ? test.serial : test.skip)('16-bit operands with a float32 result (preferredElementType), and float16 operands into a bfloat16 cast', (t) => {
  const a = operand([65, 33], 3, 'bfloat16'), b = operand([33, 17], 4, 'bfloat16');
  const wide = (x: jax.Array, y: jax.Array) => lax.dotGeneral(x, y, [[[1], [0]], [[], []]], { preferredElementType: 'float32' });
  t.is(compare(wide, [a, b], (x, y) => jnp.matmul(x, y), 'float32-highest', 33), null);
  const h = operand([20, 40], 5, 'float16'), g = operand([40, 30], 6, 'float16');
  const cast = (x: jax.Array, y: jax.Array) => jnp.matmul(x, y).astype('bfloat16');
  t.is(compare(cast, [h, g], (x, y) => jnp.matmul(x, y), 'bfloat16', 40), null);
});
