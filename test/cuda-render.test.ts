// The CUDA renderer without a GPU: every kernel of the catalogue
// (helpers/kernel-catalogue.ts: each lowered primitive, fused programs of
// real models, hand-built IR) renders to a complete translation unit with the
// documented ABI and sane launch shapes; the index width, vector loads and
// reduction strategy follow the sizes; and, where nvcc exists, every kernel
// compiles to a cubin for sm_90a. Results on a GPU are checked by
// `npm run test:gpu` on a machine that has one.
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DType } from '../lib/core/dtype.js';
import { abstractEval, aval, type Primitive, type ShapedArray } from '../lib/core/primitives.js';
import { type Kernel, kernelJson } from '../lib/compiler/kernel-ir.js';
import { lowerPrimitive, lowerRules } from '../lib/compiler/lower.js';
import { type CudaKernelSource, renderCuda } from '../lib/compiler/render/cuda.js';
import { CUDA_TYPES } from '../lib/compiler/render/expr.js';

const { storageType } = CUDA_TYPES;
import { kernelHeaderDir } from '../lib/runtime/kernel-headers.js';
import { type CatalogueEntry, PRIMITIVES_WITHOUT_KERNELS, bufferLayout, kernelCatalogue } from './helpers/kernel-catalogue.js';

const catalogue = kernelCatalogue();

/** The entry's body: the source after the prelude (which defines jx_vec and friends). */
const entryOf = (r: CudaKernelSource) => r.source.slice(r.source.indexOf('extern "C"'));

function render(e: CatalogueEntry, options?: Parameters<typeof renderCuda>[2]): CudaKernelSource {
  try {
    return renderCuda(e.kernel, e.params, options);
  } catch (err) {
    throw new Error(`renderCuda failed on catalogue entry "${e.label}" (params ${JSON.stringify(e.params)}): ${(err as Error).message}`);
  }
}

function lowered(prim: Primitive, ins: ShapedArray[], params: object): { kernel: Kernel; params: number[] } {
  const outs = (abstractEval[prim] as (a: ShapedArray[], p: object) => ShapedArray[])(ins, params);
  const launches = lowerPrimitive(prim, ins, outs, params as never, 'cuda').launches;
  return launches[launches.length - 1]!;
}

const elementwiseF32 = (): Kernel => ({
  kind: 'elementwise',
  inputs: [{ dtype: 'float32', access: 'contiguous' }],
  outputs: [{ dtype: 'float32', expr: { op: 'unary', name: 'exp', x: { op: 'input', index: 0, dtype: 'float32' }, dtype: 'float32' } }],
});

test('the catalogue covers every primitive lower.ts lowers and every kernel kind', (t) => {
  const labelled = new Set(catalogue.map((e) => e.label.slice(0, e.label.indexOf('('))));
  const lowerable = Object.keys(lowerRules).filter((p) => !PRIMITIVES_WITHOUT_KERNELS.includes(p as Primitive));
  t.deepEqual(lowerable.filter((p) => !labelled.has(p)), [], 'primitives without a catalogue entry');
  const kinds = new Set(catalogue.map((e) => e.kernel.kind));
  t.deepEqual([...kinds].sort(), ['concatenate', 'conv', 'cumulative', 'dot', 'dynamic_slice', 'dynamic_update_slice', 'elementwise', 'gather', 'linalg', 'orthogonal', 'pad', 'reduce', 'scatter', 'sort']);
  t.deepEqual([...new Set(catalogue.flatMap((e) => (e.kernel.kind === 'sort' ? [e.kernel.stage] : [])))].sort(), ['merge', 'permute', 'rank', 'sort_rows', 'top_k'], 'every sort stage');
  t.true(catalogue.some((e) => e.kernel.kind === 'reduce' && e.kernel.fused?.finalOutputs?.length), 'a fused reduction with final outputs');
  t.true(catalogue.some((e) => e.kernel.kind === 'dot' && e.kernel.epilogue), 'a dot with an epilogue');
  t.true(catalogue.some((e) => e.label.startsWith('MLP grad')) && catalogue.some((e) => e.label.startsWith('tutorial layer grad')), 'fused programs traced');
  t.log(`${catalogue.length} catalogue kernels`);
});

test('every catalogue kernel renders to one translation unit (with the prelude header) with the documented ABI', (t) => {
  const byName = new Map<string, string>();
  for (const e of catalogue) {
    const r = render(e);
    const where = `${e.label} (${r.name})`;
    // the prelude, handed to NVRTC as an in-memory header (runtime/kernel-headers.ts), and for tensor-core GEMMs the
    // device functions of their inline PTX
    const tensorCores = r.source.includes('tensor-core GEMM');  // the dot's and the conv's (implicit tensor-core GEMM)
    t.deepEqual(r.source.match(/#include .*/g), ['#include "jaxon_cuda.h"', ...(tensorCores ? ['#include "jaxon_mma.h"'] : [])], `${where}: includes only the prelude`);
    t.true(/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.name), `${where}: name is a C identifier`);
    t.is(r.source.split('extern "C" __global__').length - 1, 1, `${where}: one extern "C" __global__ entry`);
    const threads = r.block[0] * r.block[1] * r.block[2];
    const signature = new RegExp(`extern "C" __global__ void __launch_bounds__\\((\\d+)\\) ${r.name}\\(([^)]*)\\) \\{`).exec(r.source);
    if (!signature) {
      t.fail(`${where}: no entry named ${r.name}`);
      continue;
    }
    t.is(Number(signature[1]), threads, `${where}: __launch_bounds__ equals the block size`);
    const { dtypes, outputs } = bufferLayout(e.kernel);
    const args = signature[2]!.split(', ');
    t.is(args.length, dtypes.length, `${where}: one pointer per buffer`);
    args.forEach((arg, i) => {
      const expected = `${i < outputs ? '' : 'const '}${storageType(dtypes[i]!)} *`;
      t.true(arg.startsWith(expected), `${where}: buffer ${i} is "${arg}", expected "${expected}..."`);
    });
    t.true(threads >= 1 && threads <= 1024 && r.block.every((b) => Number.isInteger(b) && b >= 1), `${where}: block ${r.block}`);
    t.true(r.grid.every((g) => Number.isInteger(g) && g >= 1), `${where}: grid ${r.grid}`);
    t.true(r.grid[0] < 2 ** 31 && r.grid[1] <= 65535 && r.grid[2] <= 65535, `${where}: grid ${r.grid} within limits`);
    if (tensorCores) t.true(r.sharedMemBytes > 0 && r.sharedMemBytes <= 227 * 1024, `${where}: the GEMM's pipeline stages in dynamic shared memory`);
    else t.is(r.sharedMemBytes, 0, `${where}: static shared memory only`);
    t.true(r.source.startsWith(`// jaxon CUDA kernel ${r.name}`) && r.source.includes(`// kernel: ${kernelJson(e.kernel)}`) && r.source.includes(`// params: ${JSON.stringify(e.params)}`), `${where}: header holds the kernel and params`);
    const known = byName.get(r.name);
    if (known !== undefined) t.is(known, r.source, `${where}: one name, one specialization`);
    byName.set(r.name, r.source);
  }
});

test('index arithmetic is 32-bit for small sizes and 64-bit when a size exceeds 2^31', (t) => {
  t.true(renderCuda(elementwiseF32(), [1 << 20, 1, 1 << 20]).source.includes('typedef jx_i32 jx_index;'));
  const big = renderCuda(elementwiseF32(), [3e9, 1, 3e9]);
  t.true(big.source.includes('typedef jx_i64 jx_index;'));
  t.true(big.grid[0] <= 132 * 8, 'a grid-stride loop covers the rest');
  const sum = lowered('reduce_sum', [aval([3e9], 'float32')], { axes: [0] });
  t.true(renderCuda(sum.kernel, sum.params).source.includes('typedef jx_i64 jx_index;'));
  const rows = lowered('reduce_sum', [aval([3, 1000], 'float32')], { axes: [1] });
  t.true(renderCuda(rows.kernel, rows.params).source.includes('typedef jx_i32 jx_index;'));
  const matmul = lowered('dot_general', [aval([50000, 50000], 'float32'), aval([50000, 8], 'float32')], { dimensionNumbers: [[[1], [0]], [[], []]], preferredElementType: null });
  t.true(renderCuda(matmul.kernel, matmul.params).source.includes('typedef jx_i64 jx_index;'), 'a 2.5e9-element operand');
});

test('contiguous elementwise kernels use 16-byte vector loads when the alignments allow', (t) => {
  const aligned = entryOf(renderCuda(elementwiseF32(), [4096, 1, 4096]));
  t.true(aligned.includes('reinterpret_cast<const jx_vec<float, 4> *>(in0 + i)'), 'a 4-wide float load');
  t.true(aligned.includes('reinterpret_cast<jx_vec<float, 4> *>(out0 + i) = r0'), 'a 4-wide float store');
  t.false(aligned.includes('i < 4096; i +='), 'no scalar tail when 4 divides n');
  const unaligned = entryOf(renderCuda(elementwiseF32(), [4096, 1, 4096], { alignments: [4, 4] }));
  t.false(unaligned.includes('jx_vec'), 'scalar code for 4-byte alignment');
  const halfAligned = entryOf(renderCuda(elementwiseF32(), [4096, 1, 4096], { alignments: [16, 8] }));
  t.true(halfAligned.includes('jx_vec<float, 2>'), 'the widest width every buffer allows');
  const tail = entryOf(renderCuda(elementwiseF32(), [4099, 1, 4099]));
  t.true(tail.includes('jx_vec<float, 4>') && tail.includes('i = 4096 + (jx_index)blockIdx.x'), 'vector body, then a scalar tail from 4096');
  const bf16 = lowered('add', [aval([64, 64], 'bfloat16'), aval([64, 64], 'bfloat16')], {});
  t.true(entryOf(renderCuda(bf16.kernel, bf16.params)).includes('jx_vec<jx_u16, 8>'), '8 bfloat16 per 16 bytes');
  // a strided input whose innermost axis is not a multiple of the width stays scalar
  const odd = lowered('transpose', [aval([5, 7], 'float32')], { permutation: [1, 0] });
  t.false(entryOf(renderCuda(odd.kernel, odd.params)).includes('jx_vec'));
  const rowBias = lowered('broadcast_in_dim', [aval([64], 'float32')], { shape: [32, 64], broadcastDimensions: [1] });
  t.true(entryOf(renderCuda(rowBias.kernel, rowBias.params)).includes('jx_vec<float, 4>'), 'a broadcast row keeps vector stores');
});

test('reductions pick their strategy from the sizes', (t) => {
  const strategy = (shape: number[], axes: number[], dtype: DType = 'float32') => {
    const l = lowered('reduce_sum', [aval(shape, dtype)], { axes });
    return renderCuda(l.kernel, l.params);
  };
  t.regex(strategy([1000, 10], [1]).source, /^[^\n]*one thread per output/);
  t.regex(strategy([1000, 64], [1]).source, /^[^\n]*one warp per output/);
  const rows = strategy([300, 5000], [1]);
  t.regex(rows.source, /^[^\n]*one block per output/);
  t.deepEqual(rows.grid, [300, 1, 1]);
  const full = strategy([3000000], [0]);
  t.regex(full.source, /^[^\n]*two-stage/);
  t.true(full.grid[1] > 1 && full.grid[1] <= 528, `partials over grid.y: ${full.grid}`);
  t.true(full.source.includes(`__device__ double jx_partial0_${full.name}[${full.grid[1]}];`) && full.source.includes(`atomicAdd(&jx_ticket_${full.name}[o], 1u)`));
  const columns = strategy([256, 4096], [0]);
  t.regex(columns.source, /^[^\n]*column reduction/);
  t.deepEqual(columns.block, [32, 8, 1]);
  const tall = strategy([100000, 4], [0], 'int32');
  t.regex(tall.source, /^[^\n]*column reduction.*two-stage/);
  t.true(tall.source.includes('jx_u64 jx_partial0_'), 'integer sums merge in wrapping 64 bits');
  const arg = lowered('argmax', [aval([8, 20000], 'float32')], { axes: [1], indexDtype: 'int32' });
  const argSource = renderCuda(arg.kernel, arg.params).source;
  t.true(argSource.includes('obi < bi') && argSource.includes('jx_shfl_xor(bi, m)'), 'argmax merges (value, index) pairs, first index wins');
});

test('semantics the C renderer fixes are spelled out in the CUDA source', (t) => {
  const entry = (prim: Primitive, ins: ShapedArray[], params: object = {}) => {
    const l = lowered(prim, ins, params);
    return entryOf(renderCuda(l.kernel, l.params));
  };
  t.true(entry('add', [aval([8], 'float32'), aval([8], 'float32')]).includes('__fadd_rn('), 'no FMA contraction');
  const half = entry('mul', [aval([8], 'float16'), aval([8], 'float16')]);
  t.regex(half, /const float v0 = jx_h2f\(a0\.v\[q\]\);[^]*__fmul_rn\(v0, v1\)[^]*r0\.v\[q\] = jx_f2h\(v2\);/, 'float16 computes in float, rounds on store');
  t.true(entry('div', [aval([8], 'int32'), aval([8], 'int32')]).includes('jx_div_i32('), 'XLA integer division');
  t.true(entry('convert_element_type', [aval([8], 'float32')], { newDtype: 'uint8', weakType: false }).includes('jx_fcast_u8('), 'saturating float to int');
  t.true(entry('max', [aval([8], 'bfloat16'), aval([8], 'bfloat16')]).includes('jx_maxf('), 'NaN-propagating max');
  const dot = (dtype: DType) => {
    const l = lowered('dot_general', [aval([4, 5], dtype), aval([5, 6], dtype)], { dimensionNumbers: [[[1], [0]], [[], []]], preferredElementType: null });
    return entryOf(renderCuda(l.kernel, l.params));
  };
  t.true(dot('float64').includes('typedef double ACC;'), 'float64 dots accumulate in double like C');
  t.true(dot('int32').includes('typedef jx_u64 ACC;'), 'integer dots wrap like C');
  t.true(dot('float32').includes('float acc[') && dot('float32').includes('jx_mma_m16n8k8_tf32('), 'float32 dots accumulate in f32 on tensor cores');
});

test('kernels differing only in a NaN, infinite or negative-zero literal get different names', (t) => {
  const withLiteral = (value: number): Kernel => ({
    kind: 'elementwise',
    inputs: [{ dtype: 'float32', access: 'contiguous' }],
    outputs: [{ dtype: 'float32', expr: { op: 'binary', name: 'max', x: { op: 'input', index: 0, dtype: 'float32' }, y: { op: 'literal', value, dtype: 'float32' }, dtype: 'float32' } }],
  });
  const names = [NaN, Infinity, -Infinity, 0, -0].map((v) => renderCuda(withLiteral(v), [8, 1, 8]).name);
  t.is(new Set(names).size, 5, names.join(', '));
  const gatherFill = (fillValue: number) => renderCuda({ kind: 'gather', dtype: 'float32', indexDtype: 'int32', mode: 'fill', fillValue }, [1, 1, 0, 1, 10, 1, 1, -1, 0, 0]);
  t.not(gatherFill(NaN).name, gatherFill(-Infinity).name);
  t.true(gatherFill(-Infinity).source.includes('(-JX_INFF)'));
});

test('renderCuda validates its arguments', (t) => {
  const k = elementwiseF32();
  t.throws(() => renderCuda(k, [8, 1, 8], { alignment: [16, 16] } as never), { message: /unknown option "alignment"/ });
  t.throws(() => renderCuda(k, [8, 1, 8], { alignments: [16] }), { message: /alignments must be 2 powers of two.*\[16\]/ });
  t.throws(() => renderCuda(k, [8, 1, 8], { alignments: [16, 12] }), { message: /alignments must be 2 powers of two/ });
  t.throws(() => renderCuda(k, [8, 1, 8], { name: '2fast' }), { message: /name must be a C identifier, got "2fast"/ });
  t.throws(() => renderCuda(k, [8, 1]), { message: /elementwise params end before shape/ });
  t.throws(() => renderCuda(k, [8, 1, 8, 9]), { message: /1 entries past the documented layout/ });
  t.throws(() => renderCuda(k, [8, 1, 8.5]), { message: /params must be an array of integers/ });
  t.is(renderCuda(k, [8, 1, 8], { name: 'my_exp' }).name, 'my_exp');
});

function findNvcc(): string | null {
  const probe = spawnSync('nvcc', ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? 'nvcc' : null;
}

const nvcc = findNvcc();
if (!nvcc) console.log('cuda-render: nvcc not on PATH: CUDA kernels were not compiled');

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

(nvcc ? test : test.skip)(`nvcc compiles every catalogue kernel for sm_90a${nvcc ? '' : ' (nvcc not on PATH: CUDA kernels were not compiled)'}`, async (t) => {
  t.timeout(300_000);
  const unique = new Map<string, { label: string; source: string }>();
  for (const e of catalogue) {
    const r = render(e);
    if (!unique.has(r.name)) unique.set(r.name, { label: e.label, source: r.source });
    // 16-bit dots also as Hopper's wgmma kernel (what JAXON_GEMM=wgmma or the autotune picks on sm_90a)
    if (e.kernel.kind === 'dot' && (e.kernel.inputDtype === 'bfloat16' || e.kernel.inputDtype === 'float16')) {
      const w = render(e, { gemm: { sm: 90, path: 'wgmma' } });
      if (!unique.has(w.name)) unique.set(w.name, { label: `${e.label} (wgmma)`, source: w.source });
    }
  }
  const kernels = [...unique].map(([name, k]) => ({ name, ...k }));
  const jobs = Math.max(2, Math.min(availableParallelism(), 8));
  const files = Math.min(kernels.length, jobs * 2);
  const dir = mkdtempSync(join(tmpdir(), 'jaxon-cuda-'));
  const started = Date.now();
  const batches = Array.from({ length: files }, (_, f) => {
    const members = kernels.filter((_, i) => i % files === f);
    // line ranges name the kernel an nvcc error points into
    const ranges: { name: string; label: string; first: number }[] = [];
    let line = 1;
    const text = members.map((k) => {
      ranges.push({ name: k.name, label: k.label, first: line });
      line += k.source.split('\n').length - 1;
      return k.source;
    }).join('');
    const path = join(dir, `kernels${f}.cu`);
    writeFileSync(path, text);
    return { path, cubin: join(dir, `kernels${f}.cubin`), members, ranges };
  });
  const results: { batch: (typeof batches)[number]; code: number; output: string }[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: jobs }, async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      const { code, output } = await run(nvcc!, ['-cubin', '-arch=sm_90a', '-w', '-I', kernelHeaderDir(), '-o', batch.cubin, batch.path]);
      results.push({ batch, code, output });
    }
  }));
  const seconds = (Date.now() - started) / 1000;
  for (const { batch, code, output } of results) {
    if (code !== 0) {
      const culprits = new Set<string>();
      for (const m of output.matchAll(/\.cu\((\d+)\)/g)) {
        const at = Number(m[1]);
        const k = [...batch.ranges].reverse().find((r) => r.first <= at);
        if (k) culprits.add(`${k.name} (${k.label})`);
      }
      t.fail(`nvcc failed on ${batch.path} (kernels: ${[...culprits].join(', ') || 'see log'}):\n${output.slice(0, 6000)}`);
      continue;
    }
    const binary = readFileSync(batch.cubin).toString('latin1');
    const missing = batch.members.filter((k) => !binary.includes(k.name)).map((k) => k.name);
    t.deepEqual(missing, [], `${batch.path}: every entry is in the cubin`);
  }
  t.log(`nvcc: ${kernels.length} kernels in ${files} files, ${jobs} at a time: ${seconds.toFixed(1)} s`);
  if (results.every((r) => r.code === 0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A rendered kernel through `nvcc -cubin -arch=sm_90a -Xptxas -v` in `dir`: fails the test if nvcc fails or ptxas
 * reports spills; the log line with the register count, or null when nvcc failed.
 */
async function ptxasNoSpills(t: ExecutionContext, dir: string, label: string, r: CudaKernelSource): Promise<string | null> {
  const path = join(dir, `${r.name}.cu`);
  writeFileSync(path, r.source);
  const { code, output } = await run(nvcc!, ['-cubin', '-arch=sm_90a', '-w', '-Xptxas', '-v', '-I', kernelHeaderDir(), '-o', join(dir, `${r.name}.cubin`), path]);
  if (code !== 0) {
    t.fail(`${label}: nvcc failed:\n${output.slice(0, 4000)}`);
    return null;
  }
  const registers = /Used (\d+) registers/.exec(output)?.[1];
  const spills = /(\d+) bytes spill stores, (\d+) bytes spill loads/.exec(output);
  t.truthy(registers && spills, `${label}: ptxas -v reports registers and spills:\n${output}`);
  t.deepEqual([spills?.[1], spills?.[2]], ['0', '0'], `${label}: no spills`);
  return `${label}: ${registers} registers, ${spills?.[1]} bytes spill stores, ${spills?.[2]} bytes spill loads`;
}

// The Hopper GEMM (cuda-wgmma.ts) through ptxas: each producer (TMA or cp.async into K-major or MN-major tiles,
// element by element), both
// tile widths, both 16-bit dtypes; ptxas -v must report no spill stores or loads. The register counts are logged
// (bench/RESULTS.md, issue 17).
(nvcc ? test : test.skip)(`nvcc -Xptxas -v: the wgmma kernels (TMA, cp.async and element producers) compile for sm_90a with no spills${nvcc ? '' : ' (nvcc not on PATH)'}`, async (t) => {
  t.timeout(300_000);
  const variants: { label: string; dtype: 'bfloat16' | 'float16'; params: number[]; tma: boolean; producer: RegExp }[] = [];
  for (const dtype of ['bfloat16', 'float16'] as const) {
    for (const N of [64, 1000]) {
      // [B, M, N, K], lhs strides (b, m, k), rhs strides (b, k, n)
      variants.push({ label: `${dtype} N=${N} TMA`, dtype, params: [1, 1000, N, 512, 0, 512, 1, 0, 1, 512], tma: true, producer: /lhs by TMA .*rhs by TMA/ });
      variants.push({ label: `${dtype} N=${N} cp.async`, dtype, params: [1, 1000, N, 512, 0, 512, 1, 0, 1, 512], tma: false, producer: /lhs by cp\.async rows, rhs by cp\.async rows/ });
      variants.push({ label: `${dtype} N=${N} elements`, dtype, params: [1, 1000, N, 512, 0, 1, 1001, 0, N + 1, 1], tma: true, producer: /lhs element by element into K-major tiles, rhs element by element/ });
      variants.push({ label: `${dtype} N=${N} cp.async, MN-major`, dtype, params: [1, 1000, N, 512, 0, 1, 1000, 0, N, 1], tma: false, producer: /lhs by cp\.async into MN-major tiles, rhs by cp\.async into MN-major tiles/ });
      variants.push({ label: `${dtype} N=${N} TMA, MN-major`, dtype, params: [1, 1000, N, 512, 0, 1, 1000, 0, N, 1], tma: true, producer: /lhs by TMA into MN-major tiles, rhs by TMA into MN-major tiles/ });
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'jaxon-wgmma-'));
  const lines: string[] = [];
  for (const v of variants) {
    const kernel: Kernel = { kind: 'dot', inputDtype: v.dtype, outputDtype: v.dtype };
    const r = renderCuda(kernel, v.params, { gemm: { sm: 90, path: 'wgmma', tma: v.tma } });
    t.regex(r.source, v.producer, v.label);
    const line = await ptxasNoSpills(t, dir, v.label, r);
    if (line) lines.push(line);
  }
  t.log(lines.join('\n'));
  rmSync(dir, { recursive: true, force: true });
});

// The tensor-core conv (render/conv-mma.ts) through ptxas: bf16, f16, tf32 and 3xTF32 fragments, 64- and 128-wide
// tiles, cp.async (16- and 4-byte chunks) and element-by-element A tiles, split-K; ptxas -v must report no spills. The register counts are
// logged (issue 15).
(nvcc ? test : test.skip)(`nvcc -Xptxas -v: the tensor-core conv kernels compile for sm_90a with no spills${nvcc ? '' : ' (nvcc not on PATH)'}`, async (t) => {
  t.timeout(300_000);
  const nhwc = (lhs: number[], rhs: number[], dtype: DType, extra: { featureGroupCount?: number; precision?: 'highest'; strides?: number[] } = {}) => {
    const params = {
      windowStrides: extra.strides ?? [1, 1], padding: [[1, 1], [1, 1]] as [number, number][], lhsDilation: [1, 1], rhsDilation: [1, 1],
      dimensionNumbers: { lhsSpec: [0, 3, 1, 2], rhsSpec: [3, 2, 0, 1], outSpec: [0, 3, 1, 2] },
      featureGroupCount: extra.featureGroupCount ?? 1, batchGroupCount: 1, preferredElementType: null, ...(extra.precision ? { precision: extra.precision } : {}),
    };
    return lowered('conv_general_dilated', [aval(lhs, dtype), aval(rhs, dtype)], params);
  };
  const variants: { label: string; kernel: Kernel; params: number[]; expect: RegExp }[] = [
    { label: 'bfloat16 32x56x56x64 3x3x64', ...nhwc([32, 56, 56, 64], [3, 3, 64, 64], 'bfloat16'), expect: /mma\.sync bfloat16.*128x64x32 tiles.*lhs by 16-byte cp\.async/ },
    { label: 'float16 32x28x28x64 3x3x128', ...nhwc([32, 28, 28, 64], [3, 3, 64, 128], 'float16'), expect: /mma\.sync float16.*128x128x32 tiles/ },
    { label: 'float32 32x56x56x64 3x3x64 (tf32)', ...nhwc([32, 56, 56, 64], [3, 3, 64, 64], 'float32'), expect: /mma\.sync tf32.*128x64x16 tiles/ },
    { label: 'float32 32x56x56x63 3x3x128 (tf32, 4-byte A chunks: 16 rows a thread)', ...nhwc([32, 56, 56, 63], [3, 3, 63, 128], 'float32'), expect: /mma\.sync tf32.*128x128x16 tiles.*lhs by 4-byte cp\.async/ },
    { label: 'float32 HIGHEST 32x56x56x64 3x3x64 (3xTF32)', ...nhwc([32, 56, 56, 64], [3, 3, 64, 64], 'float32', { precision: 'highest' }), expect: /mma\.sync 3xTF32.*64x64x16 tiles/ },
    { label: 'bfloat16 2 groups of 35 features (element-by-element A)', ...nhwc([8, 28, 28, 70], [3, 3, 35, 64], 'bfloat16', { featureGroupCount: 2 }), expect: /lhs element by element/ },
    { label: 'bfloat16 long K, few tiles (split-K)', ...nhwc([2, 6, 5, 256], [3, 3, 256, 32], 'bfloat16'), expect: /split-K/ },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'jaxon-conv-mma-'));
  const lines: string[] = [];
  for (const v of variants) {
    const r = renderCuda(v.kernel, v.params, { gemm: { sm: 90, path: 'mma' } });
    t.regex(r.source, v.expect, v.label);
    const line = await ptxasNoSpills(t, dir, v.label, r);
    if (line) lines.push(line);
  }
  t.log(lines.join('\n'));
  rmSync(dir, { recursive: true, force: true });
});

// The Jacobi eigh and svd kernels (render/linalg-jacobi.ts): a block per matrix, a thread per pair of the round-robin
// ordering over min(m, n) indices rounded up to a warp (32 to 256), the pairs beyond strided over the block.
const jacobiVariants: { label: string; kernel: Kernel; params: number[]; threads: number }[] = [
  { label: 'eigh float32 n = 1', kernel: { kind: 'orthogonal', op: 'eigh', dtype: 'float32', fullMatrices: false, computeUv: true, lower: true, sort: true }, params: [3, 1, 1], threads: 32 },
  { label: 'eigh float32 4 x 70 x 70', kernel: { kind: 'orthogonal', op: 'eigh', dtype: 'float32', fullMatrices: false, computeUv: true, lower: true, sort: true }, params: [4, 70, 70], threads: 64 },
  { label: 'eigh float64 600 x 600', kernel: { kind: 'orthogonal', op: 'eigh', dtype: 'float64', fullMatrices: false, computeUv: true, lower: false, sort: true }, params: [1, 600, 600], threads: 256 },
  { label: 'svd float64 2 x 70 x 64', kernel: { kind: 'orthogonal', op: 'svd', dtype: 'float64', fullMatrices: false, computeUv: true, lower: true, sort: true }, params: [2, 70, 64], threads: 32 },
  { label: 'svd float32 72 x 68 full', kernel: { kind: 'orthogonal', op: 'svd', dtype: 'float32', fullMatrices: true, computeUv: true, lower: true, sort: true }, params: [1, 72, 68], threads: 64 },
  { label: 'svd float32 2 x 5 x 131 values only', kernel: { kind: 'orthogonal', op: 'svd', dtype: 'float32', fullMatrices: false, computeUv: false, lower: true, sort: true }, params: [2, 5, 131], threads: 32 },
];

test('eigh and svd render a block per matrix, a thread per round-robin pair rounded up to a warp', (t) => {
  for (const v of jacobiVariants) {
    const r = renderCuda(v.kernel, v.params);
    t.deepEqual([r.grid, r.block], [[v.params[0], 1, 1], [v.threads, 1, 1]], v.label);
    t.regex(r.source, /round-robin/, v.label);
  }
});

// ptxas -v must report no spills (the svd's one-thread completion of U unrolled at the baked sizes once spilled)
(nvcc ? test : test.skip)(`nvcc -Xptxas -v: the Jacobi eigh and svd kernels compile for sm_90a with no spills${nvcc ? '' : ' (nvcc not on PATH)'}`, async (t) => {
  t.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'jaxon-jacobi-'));
  const results = await Promise.all(jacobiVariants.map(async (v) => {
    const r = renderCuda(v.kernel, v.params);
    const path = join(dir, `${r.name}.cu`);
    writeFileSync(path, r.source);
    return { v, ...(await run(nvcc!, ['-cubin', '-arch=sm_90a', '-w', '-Xptxas', '-v', '-I', kernelHeaderDir(), '-o', join(dir, `${r.name}.cubin`), path])) };
  }));
  const lines: string[] = [];
  for (const { v, code, output } of results) {
    if (code !== 0) {
      t.fail(`${v.label}: nvcc failed:\n${output.slice(0, 4000)}`);
      continue;
    }
    const registers = /Used (\d+) registers/.exec(output)?.[1];
    const spills = /(\d+) bytes spill stores, (\d+) bytes spill loads/.exec(output);
    t.deepEqual([spills?.[1], spills?.[2]], ['0', '0'], `${v.label}: no spills`);
    lines.push(`${v.label}: ${registers} registers, ${spills?.[1]} bytes spill stores, ${spills?.[2]} bytes spill loads`);
  }
  t.log(lines.join('\n'));
  rmSync(dir, { recursive: true, force: true });
});

test('the wgmma kernel\'s producer: tensor maps for TMA (K-major and MN-major boxes), cp.async where the driver lacks cuTensorMapEncodeTiled or JAXON_WGMMA_TMA=0', (t) => {
  const kernel: Kernel = { kind: 'dot', inputDtype: 'bfloat16', outputDtype: 'bfloat16' };
  // [B, M, N, K] = [2, 300, 200, 520]: lhs [2, 300, 520] k-contiguous, rhs [2, 200, 520] (k-contiguous, an NT product)
  const nt = [2, 300, 200, 520, 300 * 520, 520, 1, 200 * 520, 1, 520];
  const tma = renderCuda(kernel, nt, { gemm: { sm: 90, path: 'wgmma' } });
  t.deepEqual(tma.tensorMaps, [
    { name: 'tmap_lhs', arg: 1, dataType: 9, dims: [520, 300, 2], strides: [1040, 300 * 1040], box: [64, 128, 1], swizzle: 3 },
    { name: 'tmap_rhs', arg: 2, dataType: 9, dims: [520, 200, 2], strides: [1040, 200 * 1040], box: [64, 128, 1], swizzle: 3 },
  ]);
  t.regex(tma.source, /const __grid_constant__ jx_tensor_map tmap_lhs, const __grid_constant__ jx_tensor_map tmap_rhs\)/);
  t.regex(tma.source, /jx_mbarrier_arrive_expect_tx\(&full\[s\], 32768\)/, 'a stage: 128 x 64 + 128 x 64 bf16');
  // lhs [2, 296, 520] stored as [2, 520, 296] (m-contiguous) and rhs [2, 520, 200] (n-contiguous): MN-major boxes of 64 x 64
  const mn = renderCuda(kernel, [2, 296, 200, 520, 296 * 520, 1, 296, 200 * 520, 200, 1], { gemm: { sm: 90, path: 'wgmma' } });
  t.deepEqual(mn.tensorMaps?.map((m) => [m.dims, m.strides, m.box]), [[[296, 520, 2], [592, 520 * 592], [64, 64, 1]], [[200, 520, 2], [400, 520 * 400], [64, 64, 1]]]);
  // 300 m-contiguous rows of 600 bytes: no tensor map (a stride not a multiple of 16), transposed element by element
  t.regex(renderCuda(kernel, [2, 300, 200, 520, 300 * 520, 1, 300, 200 * 520, 200, 1], { gemm: { sm: 90, path: 'wgmma' } }).source, /lhs element by element, rhs by TMA into MN-major tiles/);
  t.regex(mn.source, /jx_wgmma_m64n128k16_bf16<1, 1>\(acc, jx_wgmma_desc\(sa \+ kk \* 2048, 8192, 1024, 1\), jx_wgmma_desc\(sb \+ kk \* 2048, 8192, 1024, 1\), 1\)/);
  const noDriver = renderCuda(kernel, nt, { gemm: { sm: 90, path: 'wgmma', tma: false } });
  t.is(noDriver.tensorMaps, undefined);
  t.regex(noDriver.source, /decision wgmma producer: lhs by cp\.async rows, rhs by cp\.async rows \(the driver lacks cuTensorMapEncodeTiled; /);
  const saved = process.env['JAXON_WGMMA_TMA'];
  try {
    process.env['JAXON_WGMMA_TMA'] = '0';
    const off = renderCuda(kernel, nt, { gemm: { sm: 90, path: 'wgmma' } });
    t.regex(off.source, /decision wgmma producer: lhs by cp\.async rows, rhs by cp\.async rows \(JAXON_WGMMA_TMA=0; /);
    t.not(off.name, tma.name, 'the kernel name covers the choice');
    process.env['JAXON_WGMMA_TMA'] = 'yes';
    t.throws(() => renderCuda(kernel, nt, { gemm: { sm: 90, path: 'wgmma' } }), { message: 'JAXON_WGMMA_TMA must be 0 or 1, got "yes"' });
  } finally {
    if (saved === undefined) delete process.env['JAXON_WGMMA_TMA'];
    else process.env['JAXON_WGMMA_TMA'] = saved;
  }
});
