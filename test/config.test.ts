// jax.config and JAX's dtype canonicalization (issue 13). x64 is off by
// default, as in JAX: every float64 a user asks for — a dtype argument, a
// Float64Array, a float64 jit argument or ShapeDtypeStruct, a promotion to
// float64 — is float32, and an explicit request emits JAX's UserWarning once
// per function. With x64 on, float64 is float64 (values exact). The setting
// is process-wide and ava runs this file's tests concurrently, so every test
// that flips it is serial and restores it (helpers/x64.ts); serial tests run
// before the concurrent ones, which see the default.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { withX64 } from './helpers/x64.js';

const { numpy: jnp, lax, nn, random } = jax;

const TRUNCATED = 'JAXON_DTYPE_TRUNCATED';

/** JAX's warning text for a float64 request in `fn` (jax/_src/dtypes.py, check_and_canonicalize_user_dtype). */
const warningText = (fn: string) =>
  `Explicitly requested dtype float64 requested in ${fn} is not available, and will be truncated to dtype float32. ` +
  "To enable more dtypes, set the jaxEnableX64 configuration option (jax.config.update('jaxEnableX64', true)) " +
  'or the JAXON_ENABLE_X64 shell environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.';

/** The dtype warnings `fn` emits (process.emitWarning delivers them on a later tick). */
async function truncationWarnings(fn: () => void): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (w: Error) => {
    if ((w as Error & { code?: string }).code === TRUNCATED) seen.push(w);
  };
  process.on('warning', listener);
  try {
    fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

const key = random.key(0);
const f32 = (data: number[]) => jnp.array(data, { dtype: 'float32' });

/** Every place a user asks for a dtype: each makes an Array of the dtype given. */
const REQUESTS: [string, (dtype: DType) => Array][] = [
  ['jnp.array', (dtype) => jnp.array([0.1, 0.2], { dtype })],
  ['jnp.array of an Array', (dtype) => jnp.array(f32([1, 2]), { dtype })],
  ['jnp.asarray', (dtype) => jnp.asarray([0.1, 0.2], { dtype })],
  ['jnp.zeros', (dtype) => jnp.zeros([2], { dtype })],
  ['jnp.ones', (dtype) => jnp.ones([2], { dtype })],
  ['jnp.empty', (dtype) => jnp.empty([2], { dtype })],
  ['jnp.full', (dtype) => jnp.full([2], 0.1, { dtype })],
  ['jnp.zerosLike', (dtype) => jnp.zerosLike(f32([1, 2]), { dtype })],
  ['jnp.onesLike', (dtype) => jnp.onesLike(f32([1, 2]), { dtype })],
  ['jnp.fullLike', (dtype) => jnp.fullLike(f32([1, 2]), 0.1, { dtype })],
  ['jnp.arange', (dtype) => jnp.arange(0, 1, 0.1, { dtype })],
  ['jnp.linspace', (dtype) => jnp.linspace(0, 1, 7, { dtype })],
  ['jnp.eye', (dtype) => jnp.eye(2, null, { dtype })],
  ['jnp.identity', (dtype) => jnp.identity(2, { dtype })],
  ['jnp.tri', (dtype) => jnp.tri(2, null, 0, { dtype })],
  ['jnp.sum', (dtype) => jnp.sum(f32([1, 2]), { dtype })],
  ['jnp.cumsum', (dtype) => jnp.cumsum(f32([1, 2]), { dtype })],
  ['jnp.concatenate', (dtype) => jnp.concatenate([f32([1]), f32([2])], { dtype })],
  ['jnp.matmul preferredElementType', (dtype) => jnp.matmul(f32([1, 2]), f32([3, 4]), { preferredElementType: dtype })],
  ['Array.astype', (dtype) => f32([0.1, 0.2]).astype(dtype)],
  ['lax.convertElementType', (dtype) => lax.convertElementType(f32([0.1, 0.2]), dtype)],
  ['lax.iota', (dtype) => lax.iota(dtype, 3)],
  ['lax.broadcastedIota', (dtype) => lax.broadcastedIota(dtype, [2, 2], 1)],
  ['lax.dotGeneral preferredElementType', (dtype) => lax.dotGeneral(f32([1, 2]), f32([3, 4]), [[[0], [0]], [[], []]], { preferredElementType: dtype })],
  ['random.uniform', (dtype) => random.uniform(key, [3], { dtype })],
  ['random.normal', (dtype) => random.normal(key, [3], { dtype })],
  ['random.truncatedNormal', (dtype) => random.truncatedNormal(key, -1, 1, [3], { dtype })],
  ['random.gumbel', (dtype) => random.gumbel(key, [3], { dtype })],
  ['nn.oneHot', (dtype) => nn.oneHot(jnp.array([0, 2], { dtype: 'int32' }), 3, { dtype })],
  ['nn.initializers.normal (init dtype)', (dtype) => nn.initializers.normal()(key, [2, 2], dtype)],
  ['nn.initializers.glorotUniform (factory dtype)', (dtype) => nn.initializers.glorotUniform({ dtype })(key, [2, 2])],
];

// ---- warnings first: serial, so no other test has used up a function's one warning ----

test.serial('an explicit float64 request emits JAX\'s UserWarning once per function; implicit ones and x64 on emit none', async (t) => {
  const first = await truncationWarnings(() => {
    t.is(jnp.zeros([2], { dtype: 'float64' }).dtype, 'float32');
    t.is(jnp.zeros([3], { dtype: jnp.float64 }).dtype, 'float32'); // the same function again: no second warning
    t.is(jnp.ones([2], { dtype: 'float64' }).dtype, 'float32');
    t.is(jnp.array(Float64Array.of(0.5)).dtype, 'float32'); // data, not a request: silent, as in JAX
    t.is(jnp.add(f32([1]), Float64Array.of(2)).dtype, 'float32');
  });
  t.deepEqual(first.map((w) => w.message), [warningText('jnp.zeros'), warningText('jnp.ones')]);
  t.true(first.every((w) => w.name === 'UserWarning'));

  // with x64 on nothing is truncated, so nothing is said (and jnp.full keeps its one warning for later)
  const on = await truncationWarnings(() => withX64(true, () => t.is(jnp.full([2], 1, { dtype: 'float64' }).dtype, 'float64')));
  t.deepEqual(on, []);
  const later = await truncationWarnings(() => t.is(jnp.full([2], 1, { dtype: 'float64' }).dtype, 'float32'));
  t.deepEqual(later.map((w) => w.message), [warningText('jnp.full')]);
});

// ---- the option itself ----

test.serial('jaxEnableX64 is off by default; update takes the camelCase and JAX\'s snake_case names; both read it', (t) => {
  t.false(jax.config.jaxEnableX64);
  t.false(jax.config.jax_enable_x64);
  t.false(jax.config.read('jaxEnableX64'));
  try {
    jax.config.update('jax_enable_x64', true);
    t.true(jax.config.jaxEnableX64);
    t.true(jax.config.jax_enable_x64);
    t.true(jax.config.read('jax_enable_x64'));
    jax.config.update('jaxEnableX64', false);
    t.false(jax.config.jaxEnableX64);
    jax.config.update('jaxEnableX64', true);
    t.true(jax.config.read('jaxEnableX64'));
  } finally {
    jax.config.update('jaxEnableX64', false);
  }
  t.false(jax.config.jaxEnableX64);
});

test('unknown options raise JAX\'s AttributeError naming them; a non-boolean value is a TypeError; neither changes the setting', (t) => {
  const unknown = t.throws(() => jax.config.update('jax_enable_x65', true));
  t.is(unknown?.name, 'AttributeError');
  t.true(unknown instanceof jax.AttributeError);
  t.regex(unknown?.message ?? '', /^Unrecognized config option: jax_enable_x65\b/);
  t.throws(() => jax.config.read('jaxDebugNans'), { name: 'AttributeError', message: /Unrecognized config option: jaxDebugNans/ });
  t.throws(() => jax.config.update('enableX64', true), { name: 'AttributeError', message: /enableX64/ });
  t.throws(() => jax.config.update('jaxEnableX64', 1 as unknown as boolean), { instanceOf: TypeError, message: "jax.config.update: jaxEnableX64 must be a boolean, got 1" });
  t.throws(() => jax.config.update('jax_enable_x64', 'true' as unknown as boolean), { instanceOf: TypeError, message: /must be a boolean, got 'true'/ });
  t.false(jax.config.jaxEnableX64);
  // the object is read-only: the setting changes through update only
  t.throws(() => {
    (jax.config as { jaxEnableX64: boolean }).jaxEnableX64 = true;
  }, { instanceOf: TypeError });
  t.false(jax.config.jaxEnableX64);
});

// ---- canonicalization: x64 off (the default) against x64 on ----

test('with x64 off every dtype request for float64 gives float32, with float32 values', (t) => {
  for (const [name, make] of REQUESTS) {
    const x = make('float64');
    t.is(x.dtype, 'float32', name);
    const values = x.dataSync();
    t.true(values instanceof Float32Array, `${name}: ${values.constructor.name}`);
    t.deepEqual(make('float32').dataSync(), values, `${name}: the same values as asking for float32`);
  }
  t.is(jnp.array([0.1], { dtype: 'float64' }).dataSync()[0], Math.fround(0.1));
});

test.serial('with x64 on the same requests give float64, with float64 values', (t) => withX64(true, () => {
  for (const [name, make] of REQUESTS) {
    const x = make('float64');
    t.is(x.dtype, 'float64', name);
    t.true(x.dataSync() instanceof Float64Array, name);
  }
  t.is(jnp.array([0.1], { dtype: 'float64' }).dataSync()[0], 0.1);
  t.is(jnp.linspace(0, 1, 4, { dtype: 'float64' }).dataSync()[1], 1 / 3);
  t.is(lax.convertElementType(jnp.array([1, 2], { dtype: 'int32' }), 'float64').dtype, 'float64');
  t.false(random.uniform(key, [8], { dtype: 'float64' }).dataSync().every((v) => Math.fround(v) === v)); // 64-bit samples
}));

test('the Sharp Bits example: random.uniform(key, (1000,), dtype=jnp.float64).dtype is float32 with x64 off', (t) => {
  const x = random.uniform(key, [1000], { dtype: jnp.float64 });
  t.is(x.dtype, 'float32');
  t.deepEqual(x.shape, [1000]);
  // the same samples float32 gives (JAX draws float32 bits once the dtype is canonical)
  t.deepEqual(x.dataSync(), random.uniform(key, [1000], { dtype: 'float32' }).dataSync());
});

test.serial('the Sharp Bits example with jax.config.update("jax_enable_x64", True): float64', (t) => withX64(true, () => {
  const x = random.uniform(key, [1000], { dtype: jnp.float64 });
  t.is(x.dtype, 'float64');
  t.true(x.dataSync().every((v) => v >= 0 && v < 1));
}));

test('Float64Array data is float32 with x64 off (silently, as JAX treats a NumPy float64 array)', (t) => {
  const data = Float64Array.of(0.1, 1e-40, 3);
  const x = jnp.array(data);
  t.is(x.dtype, 'float32');
  t.deepEqual([...x.dataSync()], [Math.fround(0.1), Math.fround(1e-40), 3]);
  t.is(jnp.asarray(data).dtype, 'float32');
  t.is(jnp.multiply(data, 2).dtype, 'float32');
  t.is(jnp.full([3], data).dtype, 'float32');
  t.is(jax.devicePut(data).dtype, 'float32');
  // an explicit dtype still wins
  t.is(jnp.array(data, { dtype: 'float16' }).dtype, 'float16');
});

test.serial('Float64Array data is float64 with x64 on', (t) => withX64(true, () => {
  const x = jnp.array(Float64Array.of(0.1, 3));
  t.is(x.dtype, 'float64');
  t.deepEqual([...x.dataSync()], [0.1, 3]);
  t.is(jnp.multiply(Float64Array.of(0.1), 2).dtype, 'float64');
}));

test.serial('a float64 Array made while x64 was on becomes float32 where JAX canonicalizes once it is off', (t) => {
  const x = withX64(true, () => jnp.array([0.1, 0.2], { dtype: 'float64' }));
  t.is(x.dtype, 'float64'); // existing arrays keep their dtype
  t.is(jnp.add(x, x).dtype, 'float32'); // jnp promotion is canonicalized (result_type)
  t.is(jnp.sin(x).dtype, 'float32');
  t.is(jnp.array(x).dtype, 'float32');
  t.is(jnp.asarray(x).dtype, 'float32');
  t.deepEqual([...jnp.array(x).dataSync()], [Math.fround(0.1), Math.fround(0.2)]);
  const jitted = jax.jit((v: Array) => jnp.multiply(v, 2));
  const out = jitted(x);
  t.is(out.dtype, 'float32');
  t.deepEqual([...out.dataSync()], [Math.fround(0.2), Math.fround(0.4)]);
  t.false(x.isDisposed); // the caller's array is untouched (its converted copy was the call's)
  t.is(x.dtype, 'float64');
  t.is((jax.evalShape((v: Array) => jnp.multiply(v, 2), x) as jax.ShapeDtypeStruct).dtype, 'float32'); // what jit gives
});

test('jit traces float64 arguments as float32 with x64 off: Float64Array leaves and ShapeDtypeStructs', (t) => {
  const f = (v: Array) => jnp.multiply(v, 2);
  const jaxpr = jax.jit(f).lower(new jax.ShapeDtypeStruct([2], 'float64')).asText();
  t.regex(jaxpr, /a:f32\[2\]/);
  t.notRegex(jaxpr, /f64/);
  const out = jax.jit(f)(Float64Array.of(0.1, 2));
  t.is(out.dtype, 'float32');
  t.deepEqual([...out.dataSync()], [Math.fround(0.1) * 2, 4]);
  // evalShape sees the canonical type; the struct itself keeps the dtype it was given, as JAX's does
  const struct = new jax.ShapeDtypeStruct([3], 'float64');
  t.is(struct.dtype, 'float64');
  t.is((jax.evalShape(f, struct) as jax.ShapeDtypeStruct).dtype, 'float32');
});

test.serial('jit traces float64 as float64 with x64 on, and keeps the traces made under each setting apart', (t) => {
  const f = (v: Array) => jnp.add(v, jnp.zeros([2], { dtype: 'float64' }));
  const jitted = jax.jit(f);
  const on = withX64(true, () => {
    t.regex(jitted.lower(new jax.ShapeDtypeStruct([2], 'float64')).asText(), /a:f64\[2\]/);
    return jitted(f32([1, 2]));
  });
  t.is(on.dtype, 'float64');
  // the same function and argument types with x64 off: traced again, not the float64 trace reused
  const off = jitted(f32([1, 2]));
  t.is(off.dtype, 'float32');
  t.is(withX64(true, () => jitted(f32([1, 2]))).dtype, 'float64');
});

test('resultType canonicalizes float64 to float32 with x64 off; promoteTypes does not (as jnp.promote_types)', (t) => {
  const strong = (dtype: DType) => ({ dtype, weak: false });
  const others: DType[] = ['bool', 'int8', 'uint8', 'int32', 'uint32', 'float16', 'bfloat16', 'float32', 'float64'];
  for (const other of others) {
    t.deepEqual(jax.resultType(strong(other), strong('float64')), strong('float32'), `resultType(${other}, float64)`);
    t.is(jax.promoteTypes(other, 'float64'), 'float64', `promoteTypes(${other}, float64)`);
  }
  t.deepEqual(jax.resultType(strong('float64')), strong('float32'));
  t.deepEqual(jax.resultType({ dtype: 'float64', weak: true }, { dtype: 'int32', weak: true }), { dtype: 'float32', weak: true });
  // no other dtype changes
  t.deepEqual(jax.resultType(strong('bfloat16'), strong('float16')), strong('float32'));
  t.deepEqual(jax.resultType(strong('int32'), strong('uint32')), strong('int32'));
});

test.serial('resultType keeps float64 with x64 on', (t) => withX64(true, () => {
  const strong = (dtype: DType) => ({ dtype, weak: false });
  for (const other of ['bool', 'int32', 'uint32', 'bfloat16', 'float32', 'float64'] as DType[]) {
    t.deepEqual(jax.resultType(strong(other), strong('float64')), strong('float64'), `resultType(${other}, float64)`);
  }
  t.deepEqual(jax.resultType(strong('float64'), { dtype: 'float32', weak: true }), strong('float64'));
}));

test('x64 off changes only float64: other dtype requests and the 32-bit defaults are as they were', (t) => {
  for (const dtype of ['bool', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'float16', 'bfloat16', 'float32'] as DType[]) {
    t.is(jnp.zeros([1], { dtype }).dtype, dtype);
    t.is(f32([1]).astype(dtype).dtype, dtype);
  }
  t.is(jnp.zeros([1]).dtype, 'float32');
  t.is(jnp.arange(3).dtype, 'int32');
  t.is(random.uniform(key, [2]).dtype, 'float32');
});

test.serial('x64 on keeps the 32-bit defaults (jaxon differs from JAX here: it has no int64, and its floats stay float32 unless asked)', (t) => withX64(true, () => {
  t.is(jnp.zeros([1]).dtype, 'float32');
  t.is(jnp.array([1.5]).dtype, 'float32');
  t.is(jnp.arange(3).dtype, 'int32');
  t.is(random.uniform(key, [2]).dtype, 'float32');
  t.is(jnp.add(f32([1]), 0.5).dtype, 'float32');
}));

test.serial('random samplers draw float32 with x64 off even though they compute through float64 inside (XLA\'s FMAs)', (t) => {
  // normal uses erf⁻¹ with fused multiply-adds emulated in float64: internal, so canonicalization must not touch it
  const x = random.normal(key, [4]);
  t.is(x.dtype, 'float32');
  t.deepEqual(x.dataSync(), withX64(true, () => random.normal(key, [4])).dataSync());
});
