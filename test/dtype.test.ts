// Tests for lib/core/dtype.ts: JAX's type promotion table (written out by
// hand from the lattice in JAX's "Type promotion semantics" doc, with x64 off:
// int64 → int32, uint64 → uint32), weak-typed JS scalars through jnp, and the
// 16-bit float conversions against NumPy (float16) and an independent
// nearest-value search (bfloat16), from test/fixtures/gen_elementwise.py.
import test from 'ava';
import * as fs from 'node:fs';
import { config, numpy as jnp, lax } from '../lib/index.js';
import {
  type DType, type TypeInfo, DTYPES, bfloat16BitsToFloat32, castToInteger, checkDType, float16BitsToFloat32,
  float32ToBfloat16Bits, float32ToFloat16Bits, promoteTypes, resultType, roundToDType, scalarType, wrapInteger,
} from '../lib/core/dtype.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

// 64-bit on for the whole file, as JAX's tests run with jax_enable_x64: it tests float64 in the promotion table and in kernels.
// What x64 off (the default) does to float64 requests is config.test.ts's subject.
config.update('jaxEnableX64', true);

type Code = 'b' | 'u8' | 'u16' | 'u32' | 'i8' | 'i16' | 'i32' | 'bf' | 'f16' | 'f32' | 'f64' | 'i*' | 'f*';

const TYPES: Record<Code, TypeInfo> = {
  b: { dtype: 'bool', weak: false },
  u8: { dtype: 'uint8', weak: false },
  u16: { dtype: 'uint16', weak: false },
  u32: { dtype: 'uint32', weak: false },
  i8: { dtype: 'int8', weak: false },
  i16: { dtype: 'int16', weak: false },
  i32: { dtype: 'int32', weak: false },
  bf: { dtype: 'bfloat16', weak: false },
  f16: { dtype: 'float16', weak: false },
  f32: { dtype: 'float32', weak: false },
  f64: { dtype: 'float64', weak: false },
  'i*': { dtype: 'int32', weak: true },
  'f*': { dtype: 'float32', weak: true },
};

// JAX's binary promotion table (jnp.promote_types / jnp.result_type), rows
// and columns in the order of COLUMNS. Entries where x64 JAX says i64 are
// i32 here (u32 with any signed int), as with JAX_ENABLE_X64=0.
const COLUMNS: Code[] = ['b', 'u8', 'u16', 'u32', 'i8', 'i16', 'i32', 'bf', 'f16', 'f32', 'f64', 'i*', 'f*'];
const TABLE: Record<Code, Code[]> = {
  //     b      u8     u16    u32    i8     i16    i32    bf     f16    f32    f64    i*     f*
  b: ['b', 'u8', 'u16', 'u32', 'i8', 'i16', 'i32', 'bf', 'f16', 'f32', 'f64', 'i*', 'f*'],
  u8: ['u8', 'u8', 'u16', 'u32', 'i16', 'i16', 'i32', 'bf', 'f16', 'f32', 'f64', 'u8', 'f*'],
  u16: ['u16', 'u16', 'u16', 'u32', 'i32', 'i32', 'i32', 'bf', 'f16', 'f32', 'f64', 'u16', 'f*'],
  u32: ['u32', 'u32', 'u32', 'u32', 'i32', 'i32', 'i32', 'bf', 'f16', 'f32', 'f64', 'u32', 'f*'],
  i8: ['i8', 'i16', 'i32', 'i32', 'i8', 'i16', 'i32', 'bf', 'f16', 'f32', 'f64', 'i8', 'f*'],
  i16: ['i16', 'i16', 'i32', 'i32', 'i16', 'i16', 'i32', 'bf', 'f16', 'f32', 'f64', 'i16', 'f*'],
  i32: ['i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'bf', 'f16', 'f32', 'f64', 'i32', 'f*'],
  bf: ['bf', 'bf', 'bf', 'bf', 'bf', 'bf', 'bf', 'bf', 'f32', 'f32', 'f64', 'bf', 'bf'],
  f16: ['f16', 'f16', 'f16', 'f16', 'f16', 'f16', 'f16', 'f32', 'f16', 'f32', 'f64', 'f16', 'f16'],
  f32: ['f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f32', 'f64', 'f32', 'f32'],
  f64: ['f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64', 'f64'],
  'i*': ['i*', 'u8', 'u16', 'u32', 'i8', 'i16', 'i32', 'bf', 'f16', 'f32', 'f64', 'i*', 'f*'],
  'f*': ['f*', 'f*', 'f*', 'f*', 'f*', 'f*', 'f*', 'bf', 'f16', 'f32', 'f64', 'f*', 'f*'],
};

test('resultType matches JAX promotion table for every pair', (t) => {
  let checked = 0;
  for (const row of COLUMNS) {
    TABLE[row].forEach((expected, j) => {
      const col = COLUMNS[j]!;
      const got = resultType(TYPES[row], TYPES[col]);
      const want = TYPES[expected];
      if (got.dtype !== want.dtype || got.weak !== want.weak) {
        t.fail(`resultType(${row}, ${col}) = ${got.dtype}${got.weak ? ' (weak)' : ''}, expected ${expected}`);
      }
      checked++;
    });
  }
  t.is(checked, COLUMNS.length ** 2);
});

test('the promotion table is symmetric and promoteTypes agrees on strong types', (t) => {
  for (const a of COLUMNS) {
    for (const b of COLUMNS) {
      t.is(TABLE[a][COLUMNS.indexOf(b)], TABLE[b][COLUMNS.indexOf(a)], `table[${a}][${b}]`);
      const ta = TYPES[a];
      const tb = TYPES[b];
      if (!ta.weak && !tb.weak) t.is(promoteTypes(ta.dtype, tb.dtype), TYPES[TABLE[a][COLUMNS.indexOf(b)]].dtype, `${a} ${b}`);
    }
  }
});

test('resultType is associative over the lattice (three operands)', (t) => {
  for (const a of COLUMNS) {
    for (const b of COLUMNS) {
      for (const c of COLUMNS) {
        const ab = TABLE[a][COLUMNS.indexOf(b)];
        const expected = TYPES[TABLE[ab][COLUMNS.indexOf(c)]];
        const got = resultType(TYPES[a], TYPES[b], TYPES[c]);
        if (got.dtype !== expected.dtype || got.weak !== expected.weak) t.fail(`resultType(${a}, ${b}, ${c}) = ${got.dtype}`);
      }
    }
  }
  t.pass();
});

test('resultType of one operand keeps it; weak operands of other widths act as weak defaults', (t) => {
  for (const d of DTYPES) t.deepEqual(resultType({ dtype: d, weak: false }), { dtype: d, weak: false });
  t.deepEqual(resultType({ dtype: 'int32', weak: true }), { dtype: 'int32', weak: true });
  t.deepEqual(resultType({ dtype: 'float32', weak: true }), { dtype: 'float32', weak: true });
  // JAX canonicalizes weak results to the default width of their kind
  t.deepEqual(resultType({ dtype: 'int8', weak: true }, { dtype: 'int8', weak: true }), { dtype: 'int32', weak: true });
  t.deepEqual(resultType({ dtype: 'float16', weak: true }, { dtype: 'int32', weak: true }), { dtype: 'float32', weak: true });
  t.throws(() => resultType(), { message: /at least one/ });
});

test('scalarType: integer-valued JS numbers are weak int32, others weak float32, booleans strong bool', (t) => {
  t.deepEqual(scalarType(2), { dtype: 'int32', weak: true });
  t.deepEqual(scalarType(-0), { dtype: 'int32', weak: true });
  t.deepEqual(scalarType(2.5), { dtype: 'float32', weak: true });
  t.deepEqual(scalarType(NaN), { dtype: 'float32', weak: true });
  t.deepEqual(scalarType(Infinity), { dtype: 'float32', weak: true });
  t.deepEqual(scalarType(true), { dtype: 'bool', weak: false });
  // past int32 a JS number cannot be an int32: it is a float
  t.deepEqual(scalarType(2 ** 31), { dtype: 'float32', weak: true });
  t.deepEqual(scalarType(-(2 ** 31)), { dtype: 'int32', weak: true });
  t.deepEqual(scalarType(1e20), { dtype: 'float32', weak: true });
});

// ---- weak types through jnp ----

function dtypeOf(x: { dtype: DType; weakType: boolean }): string {
  return `${x.dtype}${x.weakType ? ' weak' : ''}`;
}

test('jnp binary ops with weak JS scalars keep the array dtype', (t) => {
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'int32' }), 2)), 'int32');
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'int32' }), 2.5)), 'float32 weak'); // as in JAX
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'float16' }), 2.5)), 'float16');
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'bfloat16' }), 2.5)), 'bfloat16');
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'int8' }), 1)), 'int8');
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'uint8' }), 1)), 'uint8');
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'int8' }), 1.5)), 'float32 weak');
  t.is(dtypeOf(jnp.multiply(2, jnp.array([1, 2], { dtype: 'uint16' }))), 'uint16');
  t.is(dtypeOf(jnp.add(jnp.array([true, false]), 1)), 'int32 weak');
  t.is(dtypeOf(jnp.add(jnp.array([true, false]), 1.5)), 'float32 weak');
  t.is(dtypeOf(jnp.add(jnp.array([true, false]), true)), 'bool');
  t.is(dtypeOf(jnp.add(2, 3)), 'int32 weak');
  t.is(dtypeOf(jnp.add(2, 3.5)), 'float32 weak');
  t.is(dtypeOf(jnp.add(jnp.array([1, 2], { dtype: 'float64' }), 2.5)), 'float64');
  const v = jnp.add(jnp.array([1, 2], { dtype: 'float16' }), 2.5).dataSync();
  t.deepEqual(Array.from(v), [3.5, 4.5]);
});

test('jnp binary ops between arrays follow the table', (t) => {
  const a = (dtype: DType) => jnp.array([1, 2], { dtype });
  t.is(jnp.add(a('int8'), a('uint8')).dtype, 'int16');
  t.is(jnp.add(a('uint32'), a('int32')).dtype, 'int32');
  t.is(jnp.add(a('uint32'), a('int8')).dtype, 'int32');
  t.is(jnp.add(a('int32'), a('float16')).dtype, 'float16');
  t.is(jnp.add(a('uint16'), a('bfloat16')).dtype, 'bfloat16');
  t.is(jnp.add(a('bfloat16'), a('float16')).dtype, 'float32');
  t.is(jnp.add(a('float32'), a('float64')).dtype, 'float64');
  t.is(jnp.add(a('bool'), a('uint8')).dtype, 'uint8');
  t.deepEqual(Array.from(jnp.add(a('bfloat16'), a('float16')).dataSync()), [2, 4]);
});

test('weak results combine with a later strong operand without widening it', (t) => {
  const weak = jnp.add(2, 3); // weak int32
  const r = jnp.add(jnp.array([1], { dtype: 'int8' }), weak);
  t.is(dtypeOf(r), 'int8');
  t.deepEqual(Array.from(r.dataSync()), [6]);
  const wf = jnp.multiply(1.5, 2); // weak float32
  t.is(dtypeOf(wf), 'float32 weak');
  t.is(dtypeOf(jnp.add(jnp.array([1], { dtype: 'float16' }), wf)), 'float16');
  t.is(dtypeOf(jnp.add(jnp.array([1], { dtype: 'int16' }), wf)), 'float32 weak');
});

test('weak JS integers that do not fit the array dtype are errors, as in JAX', (t) => {
  assertThrowsMentioning(t, () => jnp.add(jnp.array([1], { dtype: 'int8' }), 1000), 'jnp.add', '1000', 'int8');
  assertThrowsMentioning(t, () => jnp.add(jnp.array([1], { dtype: 'uint8' }), -1), 'jnp.add', '-1', 'uint8');
  // a JS integer past int32 can only be a float (JAX would read 2**40 as an int and overflow)
  const big = jnp.multiply(jnp.array([3], { dtype: 'int32' }), 2 ** 40);
  t.is(dtypeOf(big), 'float32 weak');
  t.deepEqual(Array.from(big.dataSync()), [3 * 2 ** 40]);
  // in range is fine at both ends
  t.deepEqual(Array.from(jnp.add(jnp.array([0], { dtype: 'int8' }), -128).dataSync()), [-128]);
  t.deepEqual(Array.from(jnp.add(jnp.array([0], { dtype: 'uint8' }), 255).dataSync()), [255]);
});

// ---- dtype helpers ----

test('checkDType accepts every dtype and names the function and value otherwise', (t) => {
  for (const d of DTYPES) t.is(checkDType('f', d), d);
  assertThrowsMentioning(t, () => checkDType('jnp.zeros', 'float128'), 'jnp.zeros', "'float128'", 'float32');
  assertThrowsMentioning(t, () => checkDType('jnp.zeros', 7), 'jnp.zeros', '7');
  assertThrowsMentioning(t, () => checkDType('jnp.zeros', 'int64', 'dtype'), 'dtype', "'int64'");
});

test('castToInteger truncates and saturates, NaN to 0; wrapInteger wraps', (t) => {
  t.is(castToInteger(3.9, 'int8'), 3);
  t.is(castToInteger(-3.9, 'int8'), -3);
  t.is(castToInteger(1e10, 'int32'), 2147483647);
  t.is(castToInteger(-1e10, 'int32'), -2147483648);
  t.is(castToInteger(-5, 'uint32'), 0);
  t.is(castToInteger(5e9, 'uint32'), 4294967295);
  t.is(castToInteger(NaN, 'int16'), 0);
  t.is(castToInteger(Infinity, 'uint16'), 65535);
  t.is(castToInteger(-Infinity, 'int8'), -128);
  t.is(wrapInteger(200, 'int8'), -56);
  t.is(wrapInteger(-1, 'uint8'), 255);
  t.is(wrapInteger(-1, 'uint32'), 4294967295);
  t.is(wrapInteger(2 ** 31, 'int32'), -(2 ** 31));
  t.is(wrapInteger(65536 + 7, 'uint16'), 7);
  t.is(wrapInteger(2, 'bool'), 1);
});

test('roundToDType rounds like a store into the dtype', (t) => {
  t.is(roundToDType(0.1, 'float32'), Math.fround(0.1));
  t.is(roundToDType(0.1, 'float64'), 0.1);
  t.is(roundToDType(0.1, 'float16'), 0.0999755859375);
  t.is(roundToDType(0.1, 'bfloat16'), 0.10009765625);
  t.is(roundToDType(NaN, 'bool'), 1);
  t.is(roundToDType(-0.5, 'bool'), 1);
  t.is(roundToDType(0, 'bool'), 0);
  t.is(roundToDType(300.7, 'uint8'), 255);
  t.is(roundToDType(-2.5, 'int32'), -2);
});

// ---- 16-bit floats ----

interface Fixture {
  float16Bits: [number | string, number][];
  bfloat16Bits: [number | string, number | null][];
}
const fixture = JSON.parse(fs.readFileSync('test/fixtures/elementwise.json', 'utf8')) as Fixture;

function decode(v: number | string): number {
  if (typeof v === 'number') return v;
  return { nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 }[v] ?? NaN;
}

const hex = (b: number) => `0x${b.toString(16).padStart(4, '0')}`;

test('float32ToFloat16Bits rounds to nearest even like NumPy (ties, subnormals, overflow, double rounding)', (t) => {
  t.true(fixture.float16Bits.length > 150);
  for (const [x, bits] of fixture.float16Bits) {
    const got = float32ToFloat16Bits(decode(x));
    if (got !== bits) t.fail(`float32ToFloat16Bits(${x}) = ${hex(got)}, NumPy says ${hex(bits)}`);
  }
  t.pass();
});

test('float16 NaN, infinities and signed zeros', (t) => {
  t.is(float32ToFloat16Bits(NaN) & 0x7c00, 0x7c00);
  t.not(float32ToFloat16Bits(NaN) & 0x3ff, 0);
  t.is(float32ToFloat16Bits(Infinity), 0x7c00);
  t.is(float32ToFloat16Bits(-Infinity), 0xfc00);
  t.is(float32ToFloat16Bits(-0), 0x8000);
  t.is(float32ToFloat16Bits(0), 0);
  t.is(float32ToFloat16Bits(65504), 0x7bff);
  t.is(float32ToFloat16Bits(65520), 0x7c00); // the tie with infinity rounds to even: infinity
  t.is(float32ToFloat16Bits(2 ** -25), 0); // half the smallest subnormal: tie to even zero
  t.is(float32ToFloat16Bits(2 ** -25 * 1.0000001), 1);
  t.true(Number.isNaN(float16BitsToFloat32(0x7e00)));
  t.true(Number.isNaN(float16BitsToFloat32(0xfc01)));
  t.is(float16BitsToFloat32(0xfc00), -Infinity);
  t.true(Object.is(float16BitsToFloat32(0x8000), -0));
  t.is(float16BitsToFloat32(1), 2 ** -24);
  t.is(float16BitsToFloat32(0x3c00), 1);
  t.is(float16BitsToFloat32(0x3555), 0.333251953125);
});

test('every float16 bit pattern survives float16 → number → float16', (t) => {
  let nans = 0;
  for (let b = 0; b < 65536; b++) {
    const v = float16BitsToFloat32(b);
    if (Number.isNaN(v)) {
      nans++;
      continue;
    }
    const back = float32ToFloat16Bits(v);
    if (back !== b) t.fail(`${hex(b)} → ${v} → ${hex(back)}`);
  }
  t.is(nans, 2 * 1023);
});

test('float32ToBfloat16Bits rounds to nearest even (checked by a nearest-value search)', (t) => {
  t.true(fixture.bfloat16Bits.length > 100);
  for (const [x, bits] of fixture.bfloat16Bits) {
    if (bits === null) continue;
    const got = float32ToBfloat16Bits(decode(x));
    if (got !== bits) t.fail(`float32ToBfloat16Bits(${x}) = ${hex(got)}, expected ${hex(bits)}`);
  }
  t.pass();
});

test('bfloat16 edge cases by hand', (t) => {
  // 1 + 2^-8 is halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81): ties to even
  t.is(float32ToBfloat16Bits(1 + 2 ** -8), 0x3f80);
  // 1 + 3·2^-8 is halfway between 0x3f81 (odd) and 0x3f82: rounds up to even
  t.is(float32ToBfloat16Bits(1 + 3 * 2 ** -8), 0x3f82);
  t.is(float32ToBfloat16Bits(1 + 2 ** -8 + 2 ** -20), 0x3f81);
  t.is(float32ToBfloat16Bits(-(1 + 2 ** -8)), 0xbf80);
  // the largest bfloat16 is 0x7f7f; float32 max rounds up past it to infinity
  t.is(float32ToBfloat16Bits(3.3895313892515355e38), 0x7f7f);
  t.is(float32ToBfloat16Bits(3.4028234663852886e38), 0x7f80);
  t.is(float32ToBfloat16Bits(Infinity), 0x7f80);
  t.is(float32ToBfloat16Bits(-Infinity), 0xff80);
  t.is(float32ToBfloat16Bits(-0), 0x8000);
  // subnormals: the smallest float32 subnormal is a tie-free round down to zero
  t.is(float32ToBfloat16Bits(2 ** -149), 0);
  t.is(float32ToBfloat16Bits(2 ** -133), 0x0001);
  t.is(float32ToBfloat16Bits(2 ** -133 * 1.5), 0x0002); // tie: 1 is odd, rounds up to 2
  t.is(float32ToBfloat16Bits(2 ** -133 * 2.5), 0x0002); // tie: 2 is even, stays
  // NaN stays NaN (quiet), whatever its payload
  const nan = float32ToBfloat16Bits(NaN);
  t.is(nan & 0x7f80, 0x7f80);
  t.not(nan & 0x7f, 0);
  t.true(Number.isNaN(bfloat16BitsToFloat32(nan)));
  t.is(bfloat16BitsToFloat32(0x3f80), 1);
  t.is(bfloat16BitsToFloat32(0xc000), -2);
  t.is(bfloat16BitsToFloat32(0x0001), 2 ** -133);
  // a payload NaN whose low bits would round into the exponent must stay NaN
  const f = new Float32Array(1);
  new Uint32Array(f.buffer)[0] = 0x7f80ffff;
  t.true(Number.isNaN(bfloat16BitsToFloat32(float32ToBfloat16Bits(f[0]!))));
});

test('every bfloat16 bit pattern survives bfloat16 → number → bfloat16', (t) => {
  for (let b = 0; b < 65536; b++) {
    const v = bfloat16BitsToFloat32(b);
    if (Number.isNaN(v)) continue;
    const back = float32ToBfloat16Bits(v);
    if (back !== b) t.fail(`${hex(b)} → ${v} → ${hex(back)}`);
  }
  t.pass();
});

test('kernels convert float32 → float16/bfloat16 exactly as the host does', (t) => {
  const f16 = fixture.float16Bits.slice(0, -8).map(([x]) => decode(x)); // float32 inputs only
  const h = lax.convertElementType(jnp.array(Float32Array.from(f16)), 'float16').dataSync();
  f16.forEach((x, i) => {
    const expected = float16BitsToFloat32(float32ToFloat16Bits(x));
    if (!Object.is(h[i], expected) && !(Number.isNaN(h[i]!) && Number.isNaN(expected))) t.fail(`f16(${x}): kernel ${h[i]}, host ${expected}`);
  });
  const bf = fixture.bfloat16Bits.map(([x]) => decode(x));
  const b = lax.convertElementType(jnp.array(Float32Array.from(bf)), 'bfloat16').dataSync();
  bf.forEach((x, i) => {
    const expected = bfloat16BitsToFloat32(float32ToBfloat16Bits(x));
    if (!Object.is(b[i], expected) && !(Number.isNaN(b[i]!) && Number.isNaN(expected))) t.fail(`bf16(${x}): kernel ${b[i]}, host ${expected}`);
  });
  t.pass();
});

test('float64 → float16 in a kernel rounds once, like XLA (no double rounding through float32)', (t) => {
  const xs = fixture.float16Bits.slice(-8);
  const out = lax.convertElementType(jnp.array(Float64Array.from(xs.map(([x]) => decode(x)))), 'float16').dataSync();
  xs.forEach(([x, bits], i) => t.is(out[i], float16BitsToFloat32(bits), `f16(${x})`));
});

test('float64 → bfloat16 in a kernel goes through float32, like XLA', (t) => {
  // 1 + 2^-8 + 2^-40 rounds to the float32 tie 1 + 2^-8, then to even: 1
  const out = lax.convertElementType(jnp.array(Float64Array.of(1 + 2 ** -8 + 2 ** -40)), 'bfloat16').dataSync();
  t.is(out[0], 1);
  t.is(roundToDType(1 + 2 ** -8 + 2 ** -40, 'bfloat16'), 1);
});
