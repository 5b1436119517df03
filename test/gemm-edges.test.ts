// The CPU's packed GEMM (cuda/kernels/jaxon_gemm.h; issue 16 item 3) where its micro-kernel and blocking go wrong:
// every size of 1, 7, 13, 31, 33, 129 and 1000 in m, k and n, sizes one past the KC, MC and NC blocks, transposed
// operands, f16/bf16 operands, batches (with a shared rhs) and a fused bias + relu, each element checked against a
// float64 product within the float32 accumulation bound K·eps·sum|a||b|. Then the same cases in child processes:
// with 1 and 3 OpenMP threads the results must be bit-identical to this process's (each element sums over k in the
// same order whatever the split), and with JAXON_CPU_MARCH=haswell (the AVX2 6 x 16 micro-kernel, on x86 hosts
// with AVX2) they must meet the same bound.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as jax from '../lib/index.js';
import { cpuCompilerInfo } from '../lib/runtime/kernel-cache.js';
import { kernelHeaderDir } from '../lib/runtime/kernel-headers.js';
import { caseSeed, GEMM_CASES, gemmOperands, gemmResult, type GemmCase, type GemmOperands } from './helpers/gemm-cases.js';

const onCpu = jax.defaultBackend() === 'cpu';
const EPS_OUT = { float32: 2 ** -24, float16: 2 ** -11, bfloat16: 2 ** -8 } as const;

/** The first element of `got` outside the bound around the float64 result, or undefined. */
function firstError(c: GemmCase, ops: GemmOperands, got: Float32Array): string | undefined {
  const batches = Math.max(c.batch, 1);
  const shared = !(c.batch && c.bBatched);
  if (got.length !== batches * c.M * c.N) return `${got.length} elements, expected ${batches * c.M * c.N}`;
  for (let p = 0; p < batches; p++) {
    for (let i = 0; i < c.M; i++) {
      for (let j = 0; j < c.N; j++) {
        let sum = 0;
        let mag = 0;
        for (let k = 0; k < c.K; k++) {
          const x = ops.a[(p * c.M + i) * c.K + k]! * ops.b[((shared ? 0 : p) * c.K + k) * c.N + j]!;
          sum += x;
          mag += Math.abs(x);
        }
        const bias = c.epilogue ? ops.biasValues[j]! : 0;
        const expected = c.epilogue ? Math.max(sum + bias, 0) : sum;
        // accumulation in float32, then the roundings to the output dtype (the product, then the epilogue's sum)
        const bound = c.K * 2 ** -24 * mag + 2 * EPS_OUT[c.dtype] * (Math.abs(sum) + Math.abs(bias)) + 1e-7;
        const v = got[(p * c.M + i) * c.N + j]!;
        if (!(Math.abs(v - expected) <= bound)) return `[${p}, ${i}, ${j}] is ${v}, expected ${expected} (bound ${bound})`;
      }
    }
  }
  return undefined;
}

const operands = new Map<GemmCase, GemmOperands>();
const results = new Map<GemmCase, Float32Array>();
function inProcess(c: GemmCase, index: number): { ops: GemmOperands; got: Float32Array } {
  if (!operands.has(c)) operands.set(c, gemmOperands(c, caseSeed(index)));
  const ops = operands.get(c)!;
  if (!results.has(c)) results.set(c, gemmResult(c, ops));
  return { ops, got: results.get(c)! };
}

GEMM_CASES.forEach((c, index) => {
  test(`${c.name} agrees with a float64 product`, (t) => {
    if (!onCpu) return t.pass('a test of the CPU backend (the CUDA dot: gemm.test.ts, cuda-gemm.test.ts)');
    const { ops, got } = inProcess(c, index);
    const error = firstError(c, ops, got);
    t.is(error, undefined, `${c.name}: ${error}`);
  });
});

const child = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'gemm-cases.js');

/** Every case's result computed in a child process with `env` added. */
function childResults(env: Record<string, string>): Map<string, Float32Array> {
  const run = spawnSync(process.execPath, [child, '--child'], { env: { ...process.env, JAXON_PLATFORMS: 'cpu', ...env }, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`gemm-cases child with ${JSON.stringify(env)} exited with ${run.status}: ${run.stderr}`);
  const parsed = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, string>;
  return new Map(Object.entries(parsed).map(([name, b64]) => {
    const bytes = Buffer.from(b64, 'base64');
    return [name, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)];
  }));
}

/** The first element where two results differ in their bits, or undefined. */
function firstDifference(a: Float32Array, b: Float32Array): string | undefined {
  if (a.length !== b.length) return `lengths ${a.length} and ${b.length}`;
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < a.length; i++) if (ua[i] !== ub[i]) return `element ${i}: ${a[i]} and ${b[i]}`;
  return undefined;
}

for (const threads of ['1', '3']) {
  test(`every case gives the same bits with ${threads} OpenMP thread(s) as with this process's`, (t) => {
    if (!onCpu) return t.pass('a test of the CPU backend');
    const theirs = childResults({ OMP_NUM_THREADS: threads });
    GEMM_CASES.forEach((c, index) => {
      const got = theirs.get(c.name);
      if (!got) return t.fail(`${c.name}: missing from the child's results`);
      const difference = firstDifference(inProcess(c, index).got, got);
      t.is(difference, undefined, `${c.name}: ${difference}`);
    });
  });
}

const hasAvx2 = process.arch === 'x64' && (() => {
  try {
    const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1]?.split(/\s+/) ?? [];
    return flags.includes('avx2') && flags.includes('fma');
  } catch {
    return false;
  }
})();

test('the AVX2 micro-kernel (JAXON_CPU_MARCH=haswell) meets the same bound, with the same bits on 1 and 2 threads', (t) => {
  if (!onCpu || !hasAvx2) return t.pass('needs the CPU backend on an x86 host with AVX2 and FMA');
  const one = childResults({ JAXON_CPU_MARCH: 'haswell', OMP_NUM_THREADS: '1' });
  const two = childResults({ JAXON_CPU_MARCH: 'haswell', OMP_NUM_THREADS: '2' });
  GEMM_CASES.forEach((c, index) => {
    const got = two.get(c.name);
    if (!got) return t.fail(`${c.name}: missing from the child's results`);
    const error = firstError(c, inProcess(c, index).ops, got);
    t.is(error, undefined, `${c.name} (AVX2): ${error}`);
    const difference = firstDifference(one.get(c.name)!, got);
    t.is(difference, undefined, `${c.name} (AVX2, 1 vs 2 threads): ${difference}`);
  });
});

// Written with vectors wider than the host's registers, GCC 12 kept the 6 x 16 kernel's accumulators on the stack
// with -march=haswell (9 GFLOP/s instead of 60-70; every FMA read and wrote memory): the kernel compiled for this host
// and for an AVX2 one must have its FMAs on registers only.
test('the micro-kernel keeps its accumulators in registers (GCC on x86: -march=native and -march=haswell)', (t) => {
  const compiler = onCpu && process.arch === 'x64' ? cpuCompilerInfo() : undefined;
  const [command, ...prefix] = compiler ? compiler.command.split(/\s+/) : [];
  // GCC itself, not clang (which defines __GNUC__ too): its version line may read `cc (Debian 12.2.0-14) 12.2.0`
  const macros = command ? spawnSync(command, [...prefix, '-dM', '-E', '-x', 'c', '-'], { input: '', encoding: 'utf8' }).stdout ?? '' : '';
  if (!compiler || !macros.includes('__GNUC__') || macros.includes('__clang__')) {
    t.log('skipped: needs GCC on an x86 host');
    return t.pass();
  }
  const flags = compiler.flags.filter((f) => f !== '-lm' && f !== '-shared' && !f.startsWith('-march='));
  const probe = '#include "jaxon_c.h"\nvoid jx_probe(int64_t kc, const float *a, const float *b, float *c) { jx_sgemm_micro(kc, a, b, c, 64, JX_MR, JX_NR, 0); }\n';
  for (const march of ['native', 'haswell']) {
    const run = spawnSync(command!, [...prefix, ...flags, `-march=${march}`, `-I${kernelHeaderDir()}`, '-S', '-x', 'c', '-', '-o', '-'], { input: probe, encoding: 'utf8' });
    t.is(run.status, 0, run.stderr);
    const fmas = run.stdout.split('\n').filter((l) => /^\s*vfmadd\w*ps/.test(l));
    t.true(fmas.length >= 12, `-march=${march}: ${fmas.length} vector FMAs in the micro-kernel`);
    const onStack = fmas.filter((l) => /\(%[re](sp|bp)\)/.test(l));
    t.deepEqual(onStack, [], `-march=${march}: FMAs with an accumulator on the stack`);
  }
});
