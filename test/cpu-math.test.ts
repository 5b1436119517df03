// The float32 math every backend's kernels compute (issue 16: on the CPU, the vectorizable functions of
// cuda/kernels/jaxon_math.h; on CUDA, the toolkit's), in ulps against float64 over samples of every binade of the
// float range plus each function's special values (±0, ±inf, NaN, subnormals, the edges of overflow, underflow and
// the domain, multiples of pi/2 and huge arguments for the trigonometric ones). The CPU bounds are near what
// bench/math/check.c measured over all 2^32 floats (see jaxon_math.h); other backends get the CUDA math API's
// documented maxima. The special values must come out exactly (signs of zeros included), and eager and jit, which
// share one prelude on the CPU, must agree bit for bit.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Expr } from '../lib/compiler/kernel-ir.js';
import { renderC } from '../lib/compiler/render/c.js';
import * as jax from '../lib/index.js';
import { cpuCompilerInfo } from '../lib/runtime/kernel-cache.js';
import { kernelHeaderDir } from '../lib/runtime/kernel-headers.js';
import { cPow, erf } from '../lib/reference/special.js';

const lax = jax.lax;
const onCpu = jax.defaultBackend() === 'cpu';

/** Floats spread over every binade: 2^16 patterns per sign, a stride through the bit patterns, then `extra`. */
function samples(extra: readonly number[] = []): Float32Array {
  const common = [0, -0, Infinity, -Infinity, NaN, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, 1.1754944e-38, -1.1754944e-38, 3.4028235e38, -3.4028235e38, 1, -1, 2, 0.5, -0.5];
  const f = new Float32Array(2 * 65536 + common.length + extra.length);
  const bits = new Uint32Array(f.buffer);
  let k = 0;
  for (const sign of [0, 0x80000000]) for (let i = 0; i < 65536; i++) bits[k++] = (sign | ((i * 32749) >>> 0)) >>> 0;
  for (const e of [...common, ...extra]) f[k++] = e;
  return f;
}

/** |got - ref| in ulps of ref's float binade; infinities and NaN must match exactly. */
function ulpError(got: number, ref: number): number {
  if (Number.isNaN(ref)) return Number.isNaN(got) ? 0 : Infinity;
  if (Number.isNaN(got)) return Infinity;
  const rounded = Math.fround(ref);
  if (!Number.isFinite(rounded) || !Number.isFinite(got)) return got === rounded ? 0 : Infinity;
  const ulp = 2 ** (Math.max(Math.floor(Math.log2(Math.abs(ref))), -126) - 23);
  return Math.abs(got - ref) / ulp;
}

const halfPis = [1, 2, 3, 4, 5, 100, 1e4, 1e6].flatMap((k) => [k * (Math.PI / 2), -k * (Math.PI / 2)]);
// 2^53, 2^81 and 2^109 move the reduction's window of 2/pi; the last two were its worst cases while it was being written
const huge = [1e10, 1e20, 1e30, 3e38, 2 ** 53, 2 ** 81, 2 ** 109, 2 ** 53 - 2 ** 29, 2 ** 81 - 2 ** 57, 2 ** 109 - 2 ** 85, 233.263321, 1.70368359e22];
const trig = [...halfPis, ...huge, ...huge.map((x) => -x), 0.7853982, 0.7853981, 1e-20, -1e-20];
const expEdges = [88.72283, 88.72284, 89, -87.3, -103.97207, -103.97209, -104, 9, -9, 0.625, -0.625, 0.62499994, 127.99999, 128, -126, -149, -150, -149.5, 10, 20, 100, -100];

interface Case {
  name: string;
  fn: (x: jax.Array) => jax.Array;
  ref: (x: number) => number;
  /** ulps on the CPU; elsewhere the CUDA math API's documented maximum */
  cpu: number;
  cuda: number;
  extra?: number[];
  /** inputs left out of the ulp check, with why */
  skip?: (x: number) => boolean;
}

const cases: Case[] = [
  { name: 'exp', fn: lax.exp, ref: Math.exp, cpu: 1, cuda: 2, extra: expEdges },
  { name: 'exp2', fn: lax.exp2, ref: (x) => 2 ** x, cpu: 1, cuda: 2, extra: expEdges },
  { name: 'expm1', fn: lax.expm1, ref: Math.expm1, cpu: 1, cuda: 1, extra: [...expEdges, 1e-10, -1e-10] },
  { name: 'log', fn: lax.log, ref: Math.log, cpu: 1, cuda: 1 },
  { name: 'log1p', fn: lax.log1p, ref: Math.log1p, cpu: 1, cuda: 1, extra: [-0.99999994, -0.5, 1e-10, -1e-10, 0.41421357] },
  { name: 'tanh', fn: lax.tanh, ref: Math.tanh, cpu: 2, cuda: 2, extra: [0.625, -0.625, 0.62499994, 9, -9, 1e-5] },
  // 1/(1 + exp(-x)) in float: exp's 0.99 ulp and two roundings, 2.48 ulp over all floats (bench/math/RESULTS.md); from
  // -88.72 down, exp(-x) overflows and the result is 0 where the true one is a subnormal
  { name: 'logistic', fn: lax.logistic, ref: (x) => 1 / (1 + Math.exp(-x)), cpu: 3, cuda: 4, extra: expEdges, skip: (x) => x < -88.72 },
  { name: 'sin', fn: lax.sin, ref: Math.sin, cpu: 1, cuda: 2, extra: trig },
  { name: 'cos', fn: lax.cos, ref: Math.cos, cpu: 1, cuda: 2, extra: trig },
  { name: 'tan', fn: lax.tan, ref: Math.tan, cpu: 1, cuda: 4, extra: trig },
  { name: 'asin', fn: lax.asin, ref: Math.asin, cpu: 1, cuda: 4, extra: [0.5, -0.5, 0.50000006, 0.99999994, -0.99999994, 1.0000001] },
  { name: 'acos', fn: lax.acos, ref: Math.acos, cpu: 1, cuda: 3, extra: [0.5, -0.5, 0.50000006, 0.99999994, -0.99999994, 1.0000001] },
  { name: 'atan', fn: lax.atan, ref: Math.atan, cpu: 1, cuda: 2, extra: [0.41421357, 2.4142137, 1e30, -1e30] },
  { name: 'sinh', fn: lax.sinh, ref: Math.sinh, cpu: 1, cuda: 3, extra: [89.41599, 89.416, 90, -90, 1e-5, 0.1] },
  { name: 'cosh', fn: lax.cosh, ref: Math.cosh, cpu: 1, cuda: 2, extra: [89.41599, 89.416, 90, -90, 1e-5, 0.1] },
  { name: 'asinh', fn: lax.asinh, ref: Math.asinh, cpu: 1, cuda: 3, extra: [1e-5, 1e20, -1e20] },
  { name: 'acosh', fn: lax.acosh, ref: Math.acosh, cpu: 1, cuda: 4, extra: [1.0000001, 0.99999994, 1e20] },
  { name: 'atanh', fn: lax.atanh, ref: Math.atanh, cpu: 1, cuda: 3, extra: [0.99999994, -0.99999994, 1.0000001, 1e-5] },
  { name: 'cbrt', fn: lax.cbrt, ref: Math.cbrt, cpu: 1, cuda: 1, extra: [8, -27, 0.125, 1e-45, 1e30] },
  { name: 'erf', fn: lax.erf, ref: erf, cpu: 1, cuda: 2, extra: [1, 0.99999994, 1.0000001, 3.9, 3.92, 4, 4.0000005, 1e-30, -1e-30] },
];

/** Index of the first element where eager and jit differ (NaNs of any payload agree), or -1. */
function firstDifference(a: Float32Array, b: Float32Array): number {
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i]) && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return i;
  return -1;
}

for (const c of cases) {
  const bound = onCpu ? c.cpu : c.cuda;
  test(`${c.name}: within ${bound} ulp of float64 over every binade, special values exact, eager and jit bit-identical`, (t) => {
    const xs = samples(c.extra);
    const x = jax.numpy.array(xs, { dtype: 'float32' });
    const eager = c.fn(x).dataSync() as Float32Array;
    const jitted = jax.jit(c.fn)(x).dataSync() as Float32Array;
    let worst = 0;
    let at = 0;
    for (let i = 0; i < xs.length; i++) {
      if (c.skip?.(xs[i]!)) continue;
      const e = ulpError(eager[i]!, c.ref(xs[i]!));
      if (e > worst) [worst, at] = [e, i];
    }
    t.true(worst <= bound, `${c.name}(${xs[at]}) = ${eager[at]}, float64 says ${c.ref(xs[at]!)}: ${worst.toFixed(3)} ulp`);
    // the special values bit for bit: zeros keep their sign where the function is odd, infinities and NaN
    for (let i = 0; i < xs.length; i++) {
      const v = xs[i]!;
      if (!(v === 0 || !Number.isFinite(v))) continue;
      const want = Math.fround(c.ref(v));
      t.true(Object.is(eager[i], want) || (Number.isNaN(want) && Number.isNaN(eager[i])), `${c.name}(${Object.is(v, -0) ? '-0' : v}) = ${eager[i]}, not ${want}`);
    }
    const differ = firstDifference(eager, jitted);
    t.is(differ, -1, differ >= 0 ? `${c.name}(${xs[differ]}): eager ${eager[differ]}, jit ${jitted[differ]}` : '');
  });
}

/** Pairs for the binary functions: special values crossed with each other, samples crossed with a few exponents. */
function pairs(specials: number[], ys: number[]): [Float32Array, Float32Array] {
  const xs = samples();
  const a: number[] = [];
  const b: number[] = [];
  for (const p of specials) for (const q of specials) a.push(p), b.push(q);
  for (let i = 0; i < xs.length; i += 7) for (const q of ys) a.push(xs[i]!), b.push(q);
  for (let i = 0; i < xs.length; i += 11) for (const p of ys) a.push(p), b.push(xs[i]!);
  return [Float32Array.from(a), Float32Array.from(b)];
}

const binaryCases: [string, (a: jax.Array, b: jax.Array) => jax.Array, (a: number, b: number) => number, number, number, number[], number[]][] = [
  // C99 Annex F: pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN, negative bases with integer exponents, zeros and
  // infinities by their limits; exact results for exact powers (2^-3, 3^5, (-2)^3, 10^10)
  ['pow', lax.pow, cPow, 1, 4,
    [0, -0, 1, -1, 2, -2, 0.5, -0.5, 3, -3, 10, 1.5, -1.5, Infinity, -Infinity, NaN, 1e-45, -1e-45, 3.4028235e38, 0.99999994, 1.0000001],
    [0, -0, 1, -1, 2, -2, 3, -3, 0.5, -0.5, 1.5, 5, 10, 100, -100, 1e10, Infinity, -Infinity, NaN, 0.3333333]],
  ['atan2', lax.atan2, Math.atan2, 1, 3,
    [0, -0, 1, -1, 2, -0.5, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38, Infinity, -Infinity, NaN],
    [0, -0, 1, -1, 1e-30, -1e-30, 1e30, -1e30, 3, -3, Infinity, -Infinity, NaN]],
];

for (const [name, fn, ref, cpu, cuda, specials, ys] of binaryCases) {
  const bound = onCpu ? cpu : cuda;
  test(`${name}: within ${bound} ulp of float64 over samples of every binade, C99's special cases exact, eager and jit bit-identical`, (t) => {
    const [as, bs] = pairs(specials, ys);
    const a = jax.numpy.array(as, { dtype: 'float32' });
    const b = jax.numpy.array(bs, { dtype: 'float32' });
    const eager = fn(a, b).dataSync() as Float32Array;
    const jitted = jax.jit(fn)(a, b).dataSync() as Float32Array;
    let worst = 0;
    let at = 0;
    for (let i = 0; i < as.length; i++) {
      const want = ref(as[i]!, bs[i]!);
      const e = ulpError(eager[i]!, want);
      if (e > worst) [worst, at] = [e, i];
      // C99's special cases (zeros, infinities, NaN, pow's base 1 and exponent 0) exactly, zeros with their sign;
      // on the CPU every exact result exactly (pow(3, 5), pow(-2, -3))
      const x = as[i]!;
      const y = bs[i]!;
      const special = [x, y].some((v) => v === 0 || !Number.isFinite(v)) || (name === 'pow' && Math.abs(x) === 1);
      if ((special || (onCpu && Math.fround(want) === want)) && (Math.fround(want) === want || Number.isNaN(want))) {
        t.true(Object.is(eager[i], want) || (Number.isNaN(want) && Number.isNaN(eager[i])), `${name}(${as[i]}, ${bs[i]}) = ${eager[i]}, not ${want}`);
      }
    }
    t.true(worst <= bound, `${name}(${as[at]}, ${bs[at]}) = ${eager[at]}, float64 says ${ref(as[at]!, bs[at]!)}: ${worst.toFixed(3)} ulp`);
    const differ = firstDifference(eager, jitted);
    t.is(differ, -1, differ >= 0 ? `${name}(${as[differ]}, ${bs[differ]}): eager ${eager[differ]}, jit ${jitted[differ]}` : '');
  });
}

test('sin, cos and tan of an argument do not depend on a huge argument beside it (kernels run in blocks, fast then full)', (t) => {
  const small = Float32Array.from({ length: 1000 }, (_, i) => (i - 500) * 0.37);
  const mixed = small.slice();
  mixed[300] = 3e38;
  mixed[700] = NaN;
  for (const fn of [lax.sin, lax.cos, lax.tan]) {
    const a = fn(jax.numpy.array(small, { dtype: 'float32' })).dataSync() as Float32Array;
    const b = fn(jax.numpy.array(mixed, { dtype: 'float32' })).dataSync() as Float32Array;
    const differ = [...a].findIndex((v, i) => i !== 300 && i !== 700 && !Object.is(v, b[i]));
    t.is(differ, -1, `${fn.name}(${small[differ]}): ${a[differ]} alone, ${b[differ]} beside a huge argument`);
    t.is(Math.fround(b[300]!), b[300]!);
    t.true(Number.isNaN(b[700]));
  }
});

test('the chain of peers.ts (sin, exp, tanh, sqrt, log, cos) agrees between eager and jit and stays within a few ulp', (t) => {
  const jnp = jax.numpy;
  const chain = (x: jax.Array) => jnp.cos(jnp.multiply(jnp.log(jnp.sqrt(jnp.add(jnp.tanh(jnp.exp(jnp.sin(x))), 1))), 3));
  const xs = samples().filter((v) => Number.isFinite(v));
  const x = jnp.array(xs, { dtype: 'float32' });
  const eager = chain(x).dataSync() as Float32Array;
  const jitted = jax.jit(chain)(x).dataSync() as Float32Array;
  t.is(firstDifference(eager, jitted), -1);
  for (let i = 0; i < xs.length; i += 97) {
    const want = Math.cos(3 * Math.log(Math.sqrt(Math.tanh(Math.exp(Math.sin(xs[i]!))) + 1)));
    t.true(Math.abs(eager[i]! - want) < 1e-6, `chain(${xs[i]}) = ${eager[i]}, float64 says ${want}`);
  }
});

// Elementwise kernels with several math calls compute a full block of 256 as four interleaved strips (render/c.ts
// INTERLEAVE); partial blocks, several outputs, scalar operands and 16-bit types take the same values as eager ops.
test('math-heavy fused kernels (interleaved strips): jit equals eager on full and partial blocks, several outputs, float16', (t) => {
  const jnp = jax.numpy;
  const f = (x: jax.Array, s: jax.Array): [jax.Array, jax.Array] => {
    const e = jnp.exp(jnp.multiply(x, s));
    return [jnp.log1p(jnp.tanh(e)), jnp.subtract(jnp.sin(x), e)];
  };
  const g = (x: jax.Array) => jnp.log(jnp.add(jnp.exp(x), jax.nn.sigmoid(x)));
  for (const n of [1, 255, 256, 257, 1000, 4096 + 3]) {
    for (const dtype of ['float32', 'float16'] as const) {
      const x = jnp.array(Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.7) * 4), { dtype });
      const s = jnp.array(0.75, { dtype });
      const eager = f(x, s).map((a) => a.dataSync());
      const jitted = jax.jit(f)(x, s).map((a) => a.dataSync());
      for (let j = 0; j < 2; j++) {
        const differ = firstDifference(eager[j] as Float32Array, jitted[j] as Float32Array);
        t.is(differ, -1, `n=${n} ${dtype} output ${j} at ${differ}: eager ${eager[j]![differ]}, jit ${jitted[j]![differ]}`);
      }
      const ge = g(x).dataSync() as Float32Array;
      const gj = jax.jit(g)(x).dataSync() as Float32Array;
      t.is(firstDifference(ge, gj), -1, `log(exp(x) + sigmoid(x)), n=${n} ${dtype}`);
    }
  }
  if (onCpu) {
    const text = jax.jit(g).lower(jnp.zeros([1000])).compile().asText();
    t.regex(text, /s3v\d+ = /, 'the CPU kernel of log(exp(x) + sigmoid(x)) runs as four strips');
  }
});

// The point of jaxon_math.h: the generated loop of a fused chain of transcendental functions vectorizes (a call to
// the C library's sinf or a select GCC cannot if-convert would leave it scalar). Asks GCC itself, with the kernels'
// flags; other compilers are not asked.
test('the fused kernel of sin, exp, tanh, sqrt, log and cos vectorizes (GCC)', (t) => {
  const compiler = onCpu ? cpuCompilerInfo() : undefined;
  if (!compiler || !/gcc|GCC|^cc /.test(`${compiler.command} ${compiler.version}`) || /clang/.test(compiler.version)) {
    t.pass('not GCC on the CPU');
    return;
  }
  const f32 = 'float32' as const;
  const x: Expr = { op: 'input', index: 0, dtype: f32 };
  const un = (name: string, e: Expr): Expr => ({ op: 'unary', name, x: e, dtype: f32 }) as Expr;
  const bin = (name: string, a: Expr, b: Expr): Expr => ({ op: 'binary', name, x: a, y: b, dtype: f32 }) as Expr;
  const lit = (value: number): Expr => ({ op: 'literal', value, dtype: f32 }) as Expr;
  const body = un('cos', bin('mul', un('log', un('sqrt', bin('add', un('tanh', un('exp', un('sin', x))), lit(1)))), lit(3)));
  const expr = bin('max', un('abs', bin('sub', body, lit(0.5))), lit(0.1));
  const source = renderC({ kind: 'elementwise', inputs: [{ dtype: f32, access: 'contiguous' }], outputs: [{ dtype: f32, expr }] }, 'chain');
  const dir = mkdtempSync(path.join(tmpdir(), 'jaxon-vec-'));
  try {
    writeFileSync(path.join(dir, 'chain.c'), source);
    const [command, ...prefix] = compiler.command.split(/\s+/);
    const flags = compiler.flags.filter((f) => f !== '-lm');
    const run = spawnSync(command!, [...prefix, ...flags, `-I${kernelHeaderDir()}`, '-fopt-info-vec-optimized', 'chain.c', '-o', 'chain.so', '-lm'], { cwd: dir, encoding: 'utf8' });
    t.is(run.status, 0, run.stderr);
    // GCC reports on stderr, as chain.c:LINE:COLUMN: optimized: loop vectorized using N byte vectors; the loop that
    // matters is the first pass over each block, the one with the fast trigonometry
    // (GCC names the line of the loop's first statement; a loop it could split off, the flag's, has the pragma's)
    const first = source.split('\n').findIndex((l) => l.includes('reduction(| : jx_huge)')) + 3;
    t.true(first > 2, source);
    t.regex(run.stderr, new RegExp(`chain\\.c:${first}:\\d+: optimized: loop vectorized`), `GCC did not vectorize the chain's loop (line ${first}):\n${source}\n${run.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
