// Bits (issue 15): lax.shiftLeft / shiftRightLogical / shiftRightArithmetic,
// populationCount, clz, bitcastConvertType (same width and width changes),
// jnp.leftShift / rightShift / bitwiseCount / signbit / copysign, and
// jnp.nanmedian / nanquantile / nanpercentile, against JAX 0.10.2's own
// outputs (test/fixtures/gen_bits.py): every integer dtype with shift amounts
// that are negative or at least the width, floats with -0 and NaNs of both
// signs (compared bit by bit: a NaN's sign is not a value), all-NaN slices.
// Then gradients against JAX, jit == eager, vmap == a loop, check_grads to
// order 2, the float64 paths under x64, the reference interpreter, and bad
// input. Runs on whichever platform the suite runs on; on the emulated GPU
// each sweep is one jitted program (one fused kernel per dtype group).
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import { arrayFromBytes } from '../lib/core/bind.js';
import type { DType } from '../lib/core/dtype.js';
import { numpy as jnp, lax } from '../lib/index.js';
import { checkGrads } from './helpers/check-grads.js';
import { emulatorSubset } from './helpers/emulator.js';
import { type EncodedNumber, decodeNumber, loadFixture, underOneJit } from './helpers/fixtures.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference } from './helpers/oracle.js';
import { withX64 } from './helpers/x64.js';

interface Spec { shape: number[]; dtype: DType; values: EncodedNumber[]; bits?: number[] }
type Arg = string | number;
interface Case { fn: string; args: Arg[]; options: Record<string, unknown>; expected: Spec }
interface GradCase { fn: string; args: Arg[]; options: Record<string, unknown>; argnums: number[]; expected: Spec[] }
interface Fixture { inputs: Record<string, Spec>; cases: Case[]; grads: GradCase[] }
const fixture = loadFixture<Fixture>('bits.json');

const onEmulatedGpu = process.env.JAXON_TEST_PLATFORM === 'cuda';
const UNSIGNED_BITS = { 2: Uint16Array, 4: Uint32Array } as const;

/** An input Array; floats are built from their bits, so NaNs keep their signs. */
function make(s: Spec): Array {
  if (s.bits) {
    const words = new UNSIGNED_BITS[s.dtype === 'float32' ? 4 : 2](s.bits);
    return arrayFromBytes(new Uint8Array(words.buffer), s.shape, s.dtype);
  }
  return lax.reshape(jnp.array(s.values.map((v) => (typeof v === 'boolean' ? Number(v) : decodeNumber(v))), { dtype: s.dtype }), s.shape);
}
const cache = new Map<string, Array>();
const input = (name: string): Array => {
  if (!cache.has(name)) cache.set(name, make(fixture.inputs[name]!));
  return cache.get(name)!;
};
const resolve = (a: Arg): Array | number => (typeof a === 'string' ? input(a) : a);

function call(c: { fn: string; args: Arg[]; options: Record<string, unknown> }, args: (Array | number)[]): Array {
  const [a, b] = args as [Array, Array];
  const o = c.options;
  switch (c.fn) {
    case 'shiftLeft': return lax.shiftLeft(a, b);
    case 'shiftRightLogical': return lax.shiftRightLogical(a, b);
    case 'shiftRightArithmetic': return lax.shiftRightArithmetic(a, b);
    case 'populationCount': return lax.populationCount(a);
    case 'clz': return lax.clz(a);
    case 'bitcastConvertType': return lax.bitcastConvertType(a, o.newDtype as DType);
    case 'leftShift': return jnp.leftShift(a, b);
    case 'rightShift': return jnp.rightShift(a, b);
    case 'bitwiseLeftShift': return jnp.bitwiseLeftShift(a, b);
    case 'bitwiseRightShift': return jnp.bitwiseRightShift(a, b);
    case 'bitwiseCount': return jnp.bitwiseCount(a);
    case 'signbit': return jnp.signbit(a);
    case 'copysign': return jnp.copysign(a, b);
    case 'nanmedian': return jnp.nanmedian(a, o);
    case 'nanquantile': return jnp.nanquantile(a, b, o);
    case 'nanpercentile': return jnp.nanpercentile(a, b, o);
  }
  throw new Error(`unknown fixture function ${c.fn}`);
}

const label = (c: { fn: string; args: Arg[]; options: Record<string, unknown> }) => `${c.fn}(${c.args.map((a) => JSON.stringify(a)).join(', ')}, ${JSON.stringify(c.options)})`;

/** Shape, dtype and values; for floats also the bits: exact where not NaN, the sign where NaN (payloads may differ). */
function check(t: import('ava').ExecutionContext, out: Array, want: Spec, message: string, tol?: number): void {
  const values = want.values.map((v) => (typeof v === 'boolean' ? Number(v) : decodeNumber(v)));
  assertArray(t, out, { shape: want.shape, dtype: want.dtype, values }, { message, tol });
  if (!want.bits || out.dtype !== want.dtype) return;
  const s = out.storage('test');
  const bytes = s.backend.toHostSync(s.buffer);
  const width = want.dtype === 'float32' ? 4 : 2;
  const got = new UNSIGNED_BITS[width](bytes.slice().buffer);
  const sign = width === 4 ? 0x80000000 : 0x8000;
  const bad = want.bits.findIndex((b, i) => (Number.isNaN(values[i]!) ? (b & sign) !== (got[i]! & sign) : tol === undefined && b !== got[i]));
  t.is(bad, -1, `${message}: bits at flat index ${bad}: got 0x${got[bad]?.toString(16)}, expected 0x${want.bits[bad]?.toString(16)}`);
}

const isStatistic = (c: Case) => c.fn.startsWith('nan');
const bitCases = fixture.cases.filter((c) => !isStatistic(c));
const statCases = fixture.cases.filter(isStatistic);

/**
 * Runs `cases` eagerly on the CPU; on the emulated GPU as one jitted program whose arguments are the fixture inputs,
 * so that each dtype group's elementwise outputs share one fused kernel.
 */
function runCases(cases: Case[]): Array[] {
  const run = () => cases.map((c) => call(c, c.args.map(resolve)));
  if (!onEmulatedGpu) return run();
  const names = [...new Set(cases.flatMap((c) => c.args.filter((a): a is string => typeof a === 'string')))];
  return underOneJit(cache, names, input, run);
}

test('shifts, population_count, clz, bitcasts, bitwise_count, signbit and copysign match JAX 0.10.2 bit for bit', (t) => {
  // the emulator compiles each width-changing bitcast (its own kernel) once: its subset keeps one of each direction
  const WIDTH_CHANGES = new Set(['f_float32>uint8', 'f_float16>int8', 'w_uint8>float32', 'w_uint16>uint32']);
  const cases = bitCases.filter((c) => {
    if (!emulatorSubset || c.fn !== 'bitcastConvertType') return true;
    const [from, to] = [fixture.inputs[c.args[0] as string]!.dtype, c.expected.dtype];
    const bytes = { bool: 1, int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, bfloat16: 2, int32: 4, uint32: 4, float32: 4, float64: 8 };
    return bytes[from] === bytes[to] || WIDTH_CHANGES.has(`${c.args[0]}>${c.options.newDtype}`);
  });
  const outs = runCases(cases);
  cases.forEach((c, k) => check(t, outs[k]!, c.expected, label(c)));
  t.true(cases.length >= (emulatorSubset ? 80 : 92), `${cases.length} cases`);
});

test('nanmedian, nanquantile and nanpercentile match JAX 0.10.2 (NaNs skipped, all-NaN slices NaN, every method)', (t) => {
  // the emulator's subset: each function's first case and the 16-bit float inputs (their own kernels' paths)
  const seen = new Set<string>();
  const cases = statCases.filter((c) => {
    const keep = !emulatorSubset || !seen.has(c.fn) || c.args.includes('hn') || c.args.includes('bn');
    seen.add(c.fn);
    return keep;
  });
  const outs = runCases(cases);
  cases.forEach((c, k) => check(t, outs[k]!, c.expected, label(c), c.expected.dtype === 'float32' ? 1e-6 : undefined));
  t.true(cases.length >= (emulatorSubset ? 5 : 22), `${cases.length} cases`);
});

/** d/dargs sum(f(args) * c), c[i] = (i % 7 + 1) / 4 over the flat output, as the generator computes it. */
function weightedSum(out: Array): Array {
  const c = jnp.array(globalThis.Array.from({ length: out.size }, (_, i) => ((i % 7) + 1) / 4), { dtype: out.dtype });
  return jnp.sum(jnp.multiply(out, lax.reshape(c, [...out.shape])));
}

test('gradients match JAX 0.10.2 (nanmedian / nanquantile ties and NaNs, copysign at signed zeros)', (t) => {
  // the emulated GPU: the first nanquantile case (ties and NaNs); copysign's gradient is in check_grads below
  const grads = emulatorSubset ? fixture.grads.filter((g) => g.fn === 'nanquantile').slice(0, 1) : fixture.grads;
  for (const g of grads) {
    const f = (...xs: Array[]) => {
      const args = g.args.map(resolve);
      g.argnums.forEach((k, i) => (args[k] = xs[i]!));
      return weightedSum(call(g, args));
    };
    const primals = g.argnums.map((k) => resolve(g.args[k]!) as Array);
    // one compiled program on the emulated GPU, whose eager ops would each compile a kernel
    const gradient = jax.grad(f, { argnums: g.argnums.map((_, i) => i) });
    const got = (onEmulatedGpu ? jax.jit(gradient) : gradient)(...primals) as unknown as Array[];
    g.expected.forEach((e, i) => check(t, got[i]!, e, `grad ${label(g)} [${i}]`, 2e-6));
  }
});

test('jit == eager and vmap == a loop', (t) => {
  const x = input('x_int16');
  const s = input('s_int16');
  const f = input('f_float32');
  const n = input('n');
  // the emulated GPU compiles a kernel per eager op: there the elementwise half, which fusion changes most
  const fn = (a: Array, b: Array, c: Array, m: Array) => [
    lax.shiftLeft(a, b), lax.clz(a), jnp.copysign(m, c.index([0, 5])),
    ...(emulatorSubset ? [] : [jnp.rightShift(a, b), lax.bitcastConvertType(a, 'float16'), lax.bitcastConvertType(c, 'uint16'), jnp.nanquantile(m, 0.4, { axis: 1, method: 'linear' })]),
  ];
  const eager = fn(x, s, f, n);
  const jitted = jax.jit(fn)(x, s, f, n);
  eager.forEach((e, k) => assertArray(t, jitted[k], e, { message: `jit output ${k}` }));
  // vmap over rows: a [2, 8] view of the int16 vectors and the nan rows
  const rows = (a: Array) => lax.reshape(a, [2, 8]);
  const g = (a: Array, b: Array, c: Array) => [
    lax.shiftRightArithmetic(a, b), lax.populationCount(a), lax.bitcastConvertType(a, 'uint8'), jnp.signbit(c), jnp.nanmedian(c),
  ];
  const fr = lax.reshape(f, [2, 8]);
  // jitted on the emulated GPU: the rows share one program, and the batched one is one more
  const compiled = <F extends (...xs: Array[]) => Array | Array[]>(h: F): F => (onEmulatedGpu ? (jax.jit(h) as unknown as F) : h);
  const batched = compiled(jax.vmap(g))(rows(x), rows(s), fr);
  for (let r = 0; r < 2; r++) {
    compiled(g)(rows(x).index(r), rows(s).index(r), fr.index(r)).forEach((e, k) => assertArray(t, batched[k]!.index(r), e, { message: `vmap row ${r} output ${k}` }));
  }
  const widened = compiled(jax.vmap((u: Array) => lax.bitcastConvertType(u, 'float32')))(lax.reshape(input('w_uint8'), [2, 2, 4]));
  assertArray(t, widened, lax.reshape(lax.bitcastConvertType(input('w_uint8'), 'float32'), [2, 2]), { message: 'vmap of a widening bitcast' });
  // batched along the axis a widening bitcast removes: the batch dimension moves out of its way
  const columns = compiled(jax.vmap((u: Array) => lax.bitcastConvertType(u, 'float32'), { inAxes: 1 }))(lax.transpose(input('w_uint8'), [1, 0]));
  assertArray(t, columns, lax.bitcastConvertType(input('w_uint8'), 'float32'), { message: 'vmap over the last axis of a widening bitcast' });
});

// XLA's bitcast is exact: every 16-bit pattern comes back, NaN payloads and signalling NaNs included, though
// 16-bit floats compute as float here (jx_nan2h / jx_nan2bf keep a NaN's sign and payload through float); a copy of
// 16-bit float data (a transpose) keeps them too
test('16-bit NaN payloads survive bitcasts and copies: uint16 -> float16 / bfloat16 -> uint16 is the identity', (t) => {
  const patterns = [0x7c01, 0xfc01, 0x7d55, 0x7e00, 0x7fff, 0xfe01, 0x7f81, 0xff81, 0x7fc1, 0x7f80, 0x0001, 0x8000, 0x3c00, 0x7bff];
  const u = jnp.array(patterns, { dtype: 'uint16' });
  for (const dtype of ['float16', 'bfloat16'] as const) {
    const roundTrip = (x: Array) => lax.bitcastConvertType(lax.bitcastConvertType(x, dtype), 'uint16');
    const viaCopy = (x: Array) => lax.bitcastConvertType(jnp.transpose(jnp.reshape(lax.bitcastConvertType(x, dtype), [2, 7])).T.reshape([14]), 'uint16');
    for (const [how, f] of [['eager', roundTrip], ['jit', jax.jit(roundTrip)], ['copy', jax.jit(viaCopy)]] as const) {
      t.deepEqual(globalThis.Array.from((f(u) as Array).dataSync()), patterns, `${dtype} ${how}`);
    }
  }
});

test('bitcasts and integer bit operations have zero derivatives, as JAX (defjvp_zero)', (t) => {
  const x = jnp.array([1.5, -2]);
  const roundTrip = (v: Array) => jnp.sum(lax.bitcastConvertType(lax.bitcastConvertType(v, 'int32'), 'float32'));
  assertArray(t, jax.grad(roundTrip)(x) as Array, { shape: [2], dtype: 'float32', values: [0, 0] }, { message: 'grad through int32 bits' });
  const viaShift = (v: Array) => jnp.sum(lax.convertElementType(lax.shiftLeft(lax.bitcastConvertType(v, 'int32'), 1), 'float32'));
  assertArray(t, jax.grad(viaShift)(x) as Array, { shape: [2], dtype: 'float32', values: [0, 0] }, { message: 'grad through a shift' });
});

// order 2 on the CPU; the emulated GPU checks first derivatives (each order compiles its own kernels)
const ORDER = { order: onEmulatedGpu ? 1 : 2 };

test('check_grads: nanmedian, nanquantile, nanpercentile and copysign (order 2 on the CPU)', (t) => {
  const x = jnp.array([[0.3, -1.2, 2.1, 0.7, 1.6], [1.9, -0.4, 0.2, -2.5, 0.9], [0.9, 1.4, -0.8, 3.3, -1.1]]);
  const withNaN = (a: Array) => jnp.where(jnp.array([[false, true, false, false, false], [false, false, false, true, true], [true, false, false, false, false]]), NaN, a);
  // the emulated GPU checks copysign; nanquantile's gradient there is the fixture's (above)
  if (!emulatorSubset) {
    checkGrads(t, (a: Array) => jnp.nanmedian(withNaN(a), { axis: 1 }), [x], ORDER);
    checkGrads(t, (a: Array) => jnp.nanquantile(withNaN(a), jnp.array([0.3, 0.75]), { axis: 1 }), [x], ORDER);
    checkGrads(t, (a: Array) => jnp.nanpercentile(withNaN(a), 40, { axis: 0, keepdims: true }), [x], ORDER);
  }
  const y = jnp.array([[1.1, -0.5, -0.3, 2.2, 0.4], [-1.7, 0.8, 1.3, -0.1, 2], [2.4, -0.6, 0.4, -1.5, -3]]);
  checkGrads(t, (a: Array, b: Array) => jnp.copysign(a, b), [x, y], ORDER);
});

test.serial('float64 under x64: signbit and copysign read the sign bit, bitcasts to and from two 32-bit halves', (t) => {
  withX64(true, () => {
    const bits = new Uint32Array([0, 0x80000000, 0, 0x7ff80000, 0, 0xfff80000, 0, 0x7ff00000, 0, 0xfff00000, 0x9999999a, 0xbff19999]);
    const x = arrayFromBytes(new Uint8Array(bits.buffer), [6], 'float64');
    assertArray(t, jnp.signbit(x), { shape: [6], dtype: 'bool', values: [1, 0, 1, 0, 1, 1] }, { message: 'signbit of -0, nan, -nan, inf, -inf, -1.1' });
    const c = jnp.copysign(jnp.array([1, 2, 3, 4, 5, 6], { dtype: 'float64' }), x);
    assertArray(t, c, { shape: [6], dtype: 'float64', values: [-1, 2, -3, 4, -5, -6] }, { message: 'copysign' });
    const halves = lax.bitcastConvertType(x, 'uint32');
    assertArray(t, halves, { shape: [6, 2], dtype: 'uint32', values: [...bits] }, { message: 'float64 to uint32 halves, low half first' });
    assertArray(t, lax.bitcastConvertType(halves, 'float64'), x, { message: 'and back' });
    const jitted = jax.jit((a: Array) => [jnp.signbit(a), lax.bitcastConvertType(a, 'int16')])(x);
    assertArray(t, jitted[0], jnp.signbit(x), { message: 'jit signbit' });
    assertArray(t, lax.bitcastConvertType(jitted[1]!, 'float64'), x, { message: 'jit float64 to int16 quarters and back' });
  });
});

// the emulated GPU's kernels are checked against JAX's values above; an eager op per primitive and dtype here would
// each compile one
(emulatorSubset ? test.skip : test)('the bit primitives agree with the reference interpreter', (t) => {
  for (const d of ['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32']) {
    const [x, s] = [input(`x_${d}`), input(`s_${d}`)];
    checkAgainstReference(t, () => [
      lax.shiftLeft(x, s), lax.shiftRightLogical(x, s), lax.shiftRightArithmetic(x, s), lax.populationCount(x), lax.clz(x),
      lax.bitcastConvertType(x, d.startsWith('u') ? (`int${d.slice(4)}` as DType) : (`uint${d.slice(3)}` as DType)),
    ], { message: d });
  }
  checkAgainstReference(t, () => [lax.bitcastConvertType(input('w_uint8'), 'float32'), lax.bitcastConvertType(input('x_int32'), 'uint8')], { message: 'width changes' });
});

test('a JS -0 is a float zero with its sign (JS cannot tell 0 from 0.0, but -0 is a float)', (t) => {
  t.true(jnp.signbit(-0).item() as boolean);
  t.false(jnp.signbit(0).item() as boolean);
  assertArray(t, jnp.copysign(jnp.array([1.5, -2]), -0), { shape: [2], dtype: 'float32', values: [-1.5, -2] });
  t.true(Object.is(jnp.copysign(-0, 1).item(), 0) && Object.is(jnp.copysign(0, -1).item(), -0));
});

test('bad input names the function, the argument and the values', (t) => {
  const f = jnp.array([1.5, 2]);
  const i = jnp.array([1, 2], { dtype: 'int32' });
  assertThrowsMentioning(t, () => lax.shiftLeft(f, 1), 'lax.shiftLeft', 'x', 'integer', 'float32');
  assertThrowsMentioning(t, () => lax.shiftRightArithmetic(i, jnp.array([true, false])), 'lax.shiftRightArithmetic', 'y', 'integer', 'bool');
  assertThrowsMentioning(t, () => lax.shiftRightLogical(i, jnp.array([1, 2], { dtype: 'int8' })), 'shift_right_logical', 'int32', 'int8');
  assertThrowsMentioning(t, () => lax.populationCount(f), 'lax.populationCount', 'float32');
  assertThrowsMentioning(t, () => lax.clz(jnp.array([true])), 'lax.clz', 'bool');
  assertThrowsMentioning(t, () => jnp.leftShift(f, 2), 'jnp.leftShift', 'float32');
  assertThrowsMentioning(t, () => jnp.rightShift(i, 0.5), 'jnp.rightShift', '0.5', 'float32');
  assertThrowsMentioning(t, () => jnp.bitwiseCount(f), 'jnp.bitwiseCount', 'float32');
  assertThrowsMentioning(t, () => lax.bitcastConvertType(jnp.array([1, 2, 3], { dtype: 'uint8' }), 'float32'), 'lax.bitcastConvertType', 'uint8', 'float32', '[3]', '4');
  assertThrowsMentioning(t, () => lax.bitcastConvertType(f, 'bool'), 'lax.bitcastConvertType', 'bool', 'float32');
  assertThrowsMentioning(t, () => lax.bitcastConvertType(f, 'int33' as DType), 'lax.bitcastConvertType', 'newDtype', 'int33');
  assertThrowsMentioning(t, () => jnp.nanquantile(f, 0.5, { method: 'cubic' as never }), 'jnp.nanquantile', 'cubic');
  assertThrowsMentioning(t, () => jnp.nanmedian(f, { axis: 2 }), 'jnp.nanmedian', '2');
  assertThrowsMentioning(t, () => jnp.nanpercentile(f, 50, { keepdim: true } as never), 'jnp.nanpercentile', 'keepdim');
});
