// jax.jit: the compiled program equals eager evaluation, bit for bit, on a
// catalogue of functions (elementwise chains with broadcasting, reductions
// with keepdims, softmax and layer norm, matmul + bias + tanh, indexing,
// concatenate, where, cumsum, int / bool / float16 / bfloat16), and matches
// the float64 reference at JAX's tolerances; jit of jit, closures over arrays,
// pytrees in and out, staticArgnums, donateArgnums, and the signature cache.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import { numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { flatten } from '../lib/core/pytree.js';
import { assertArray, assertThrowsMentioning, randomValues, withReference } from './helpers/oracle.js';

// Float32 dots at float32 precision, to compare with the float64 reference at float32 tolerances: a GPU's default rounds their operands to tf32, as
// JAX's does (jax.config's jax_default_matmul_precision, as JAX's own tests set it).
jax.config.update('jaxDefaultMatmulPrecision', 'float32');

type Fn = (...args: never[]) => unknown;

function rand(shape: number[], seed = 1, dtype: DType = 'float32', lo = -3, hi = 3): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  let values = randomValues(n, seed, lo, hi);
  if (dtype.startsWith('int') || dtype.startsWith('uint')) values = values.map(Math.floor);
  return lax.reshape(jnp.array(values, { dtype }), shape);
}

/** Every leaf of jit(f)(...args) equals f(...args): shape, dtype, weak type and bits (NaNs equal). */
function checkJitEqualsEager(t: ExecutionContext, name: string, f: Fn, args: unknown[]): void {
  const call = (g: Fn) => (g as (...a: unknown[]) => unknown)(...args);
  const got = flatten(call(jax.jit(f)) as never)[0] as Array[];
  const want = flatten(call(f) as never)[0] as unknown[];
  t.is(got.length, want.length, `${name}: number of outputs`);
  want.forEach((w, i) => {
    const g = got[i]!;
    if (!(w instanceof jax.Array)) {
      // a JS number returned from the function: jit returns it as a weakly typed scalar array, as JAX does
      t.deepEqual([g.shape.length, g.weakType, g.item()], [0, true, w], `${name}: output ${i}`);
      return;
    }
    const e = w;
    t.deepEqual([...g.shape, g.dtype, g.weakType], [...e.shape, e.dtype, e.weakType], `${name}: output ${i} aval`);
    const a = g.dataSync();
    const b = e.dataSync();
    const bad = a.findIndex((v, k) => !(Object.is(v, b[k]) || v === b[k] || (Number.isNaN(v) && Number.isNaN(b[k]!))));
    t.is(bad, -1, `${name}: output ${i} differs at flat index ${bad}: jit ${a[bad]}, eager ${b[bad]}`);
  });
}

const x = rand([6, 7], 1);
const y = rand([6, 7], 2);
const row = rand([7], 3);
const col = rand([6, 1], 4);
const w = rand([7, 5], 5);
const bias = rand([5], 6);
const scalar = jnp.array(1.5);
const xi = rand([6, 7], 7, 'int32', -20, 20);
const x16 = rand([6, 7], 8, 'float16');
const xbf = rand([6, 7], 9, 'bfloat16');

const softmax = (a: Array, axis: number) => {
  const e = jnp.exp(jnp.subtract(a, jnp.max(a, { axis, keepdims: true })));
  return jnp.divide(e, jnp.sum(e, { axis, keepdims: true }));
};
const chain10 = (a: Array) =>
  jnp.negative(jnp.exp(jnp.maximum(jnp.sqrt(jnp.abs(jnp.subtract(jnp.multiply(jnp.tanh(jnp.add(jnp.multiply(a, 2), 1)), 3), 0.5))), 0.1)));

export const catalogue: [string, Fn, unknown[]][] = [
  ['10-op elementwise chain', chain10, [x]],
  ['broadcast a row', (a: Array, b: Array) => jnp.multiply(jnp.add(a, b), 2), [x, row]],
  ['broadcast a column through exp', (a: Array, c: Array) => jnp.subtract(jnp.exp(c), a), [x, col]],
  ['rank-0 array argument', (a: Array, s: Array) => jnp.multiply(jnp.tanh(a), s), [x, scalar]],
  ['sum with keepdims', (a: Array) => jnp.sum(jnp.square(a), { axis: 1, keepdims: true }), [x]],
  ['sum of everything', (a: Array) => jnp.sum(jnp.abs(a)), [x]],
  ['mean over axis 0', (a: Array) => jnp.mean(a, { axis: 0 }), [x]],
  ['var and std', (a: Array) => [jnp.var(a, { axis: 1 }), jnp.std(a)], [x]],
  ['max, min, prod', (a: Array) => [jnp.max(a, { axis: 0 }), jnp.min(jnp.negative(a)), jnp.prod(jnp.tanh(a), { axis: 1 })], [x]],
  ['softmax over rows', (a: Array) => softmax(a, 1), [x]],
  ['softmax over columns', (a: Array) => softmax(a, 0), [x]],
  ['logsumexp', (a: Array) => {
    const m = jnp.max(a, { axis: 1 });
    return jnp.add(jnp.log(jnp.sum(jnp.exp(jnp.subtract(a, jnp.expandDims(m, 1))), { axis: 1 })), m);
  }, [x]],
  ['layer norm', (a: Array) => {
    const m = jnp.mean(a, { axis: -1, keepdims: true });
    const v = jnp.var(a, { axis: -1, keepdims: true });
    return jnp.divide(jnp.subtract(a, m), jnp.sqrt(jnp.add(v, 1e-5)));
  }, [x]],
  ['matmul + bias + tanh', (a: Array, m: Array, b: Array) => jnp.tanh(jnp.add(jnp.matmul(a, m), b)), [x, w, bias]],
  ['slicing', (a: Array) => jnp.multiply(a.index([1, 5], null), 2), [x]],
  ['take (gather)', (a: Array) => jnp.add(jnp.take(a, jnp.array([0, 3, 3, 5], { dtype: 'int32' }), { axis: 0 }), 1), [x]],
  ['.at().set (scatter)', (a: Array) => a.at(2).set(jnp.multiply(a.index(3), 2)), [x]],
  ['dynamic slice', (a: Array) => jnp.multiply(lax.dynamicSlice(a, [1, 2], [3, 3]), 3), [x]],
  ['concatenate', (a: Array, b: Array) => jnp.concatenate([jnp.sin(a), jnp.cos(b)], { axis: 1 }), [x, y]],
  ['pad', (a: Array) => jnp.pad(jnp.exp(a), [[1, 0], [0, 2]]), [x]],
  ['where', (a: Array, b: Array) => jnp.where(jnp.greater(a, 0), a, jnp.multiply(b, 0.5)), [x, y]],
  ['clip', (a: Array) => jnp.clip(jnp.multiply(a, 2), -1, 1.5), [x]],
  ['cumsum', (a: Array) => jnp.cumsum(jnp.multiply(a, a), { axis: 1 }), [x]],
  ['transpose', (a: Array) => jnp.add(jnp.transpose(jnp.exp(a)), 1), [x]],
  ['int32 arithmetic', (a: Array) => jnp.mod(jnp.add(jnp.multiply(a, 3), 1), 5), [xi]],
  ['int32 floor division and sum', (a: Array) => [jnp.floorDivide(a, 3), jnp.sum(a, { axis: 0 })], [xi]],
  ['bool logic and any/all', (a: Array, b: Array) => [
    jnp.logicalAnd(jnp.greater(a, 0), jnp.less(b, 1)), jnp.any(jnp.greater(a, 2), { axis: 1 }), jnp.all(jnp.less(a, 3)),
  ], [x, y]],
  ['float16 chain', (a: Array) => jnp.add(jnp.exp(jnp.multiply(a, 0.5)), 1), [x16]],
  ['float16 sum', (a: Array) => jnp.sum(jnp.multiply(jnp.sin(a), 3), { axis: 1 }), [x16]],
  ['bfloat16 chain and mean', (a: Array) => [jnp.sqrt(jnp.abs(jnp.multiply(a, a))), jnp.mean(jnp.tanh(a), { axis: 0 })], [xbf]],
  ['float32 → float16 → float32 round trip', (a: Array) => jnp.subtract(a.astype('float16').astype('float32'), a), [x]],
  ['casts through int32', (a: Array) => jnp.multiply(jnp.multiply(a, 10).astype('int32'), 2).astype('float32'), [x]],
  ['arange (iota)', (a: Array) => jnp.multiply(a, jnp.arange(7)), [x]],
  ['argmax and argmin', (a: Array, b: Array) => [jnp.argmax(jnp.multiply(a, b), { axis: 1 }), jnp.argmin(jnp.abs(a), { axis: 0 })], [x, y]],
  ['one-hot of argmax', (a: Array) => jnp.equal(jnp.expandDims(jnp.arange(7), 0), jnp.expandDims(jnp.argmax(a, { axis: 1 }), 1)), [x]],
  ['tril of exp', (a: Array) => jnp.tril(jnp.exp(a)), [x]],
  ['outer product summed', (b: Array) => jnp.sum(jnp.multiply(jnp.expandDims(b, 0), jnp.expandDims(b, 1)), { axis: 0 }), [row]],
  ['reshape of an intermediate', (a: Array) => jnp.sum(jnp.reshape(jnp.exp(a), [7, 6]), { axis: 1 }), [x]],
  ['several outputs sharing work', (a: Array) => {
    const s = jnp.sin(a);
    return { s, t: jnp.add(jnp.cos(a), s), total: jnp.sum(s) };
  }, [x]],
  ['identity and literal outputs', (a: Array) => [a, 3, jnp.add(a, 1), a], [x]],
];

for (const [name, f, args] of catalogue) {
  test(`jit equals eager: ${name}`, (t) => {
    checkJitEqualsEager(t, name, f, args);
  });
}

test('jit matches the float64 reference interpreter', (t) => {
  for (const [name, f, args] of catalogue.filter(([n]) => ['10-op elementwise chain', 'softmax over rows', 'layer norm', 'float16 chain', 'matmul + bias + tanh'].includes(n))) {
    const got = flatten((jax.jit(f) as unknown as (...a: unknown[]) => unknown)(...args) as never)[0] as Array[];
    const want = flatten(withReference(() => (f as (...a: unknown[]) => unknown)(...args)) as never)[0] as Array[];
    // the reference rounds once per primitive, like eager; allow a little for float32 transcendentals
    got.forEach((g, i) => assertArray(t, g, want[i]!, { message: `${name} output ${i}`, tol: g.dtype === 'float32' ? 1e-5 : undefined }));
  }
});

test('jit of jit inlines the inner program; the outer one compiles once', (t) => {
  const inner = jax.jit((a: Array) => jnp.tanh(jnp.multiply(a, 2)));
  const outer = jax.jit((a: Array) => jnp.add(inner(a), inner(jnp.negative(a))));
  checkJitEqualsEager(t, 'jit of jit', outer as Fn, [x]);
  t.is(outer.kernelCount(x), 1, 'the inner equations fuse with the outer ones');
  t.is(inner.cacheSize, 1, 'the inner function traced once, for the outer trace');
  const jaxpr = String(jax.makeJaxpr(outer)(x));
  t.true(jaxpr.includes('tanh') && jaxpr.includes('neg'), 'under an outer trace jit stages its equations');
});

test('closures over arrays become constants of the program', (t) => {
  const m = rand([7, 3], 11);
  const c = jnp.array(0.25);
  const f = jax.jit((a: Array) => jnp.add(jnp.matmul(a, m), c));
  checkJitEqualsEager(t, 'closure', ((a: Array) => jnp.add(jnp.matmul(a, m), c)) as Fn, [x]);
  assertArray(t, f(x), jnp.add(jnp.matmul(x, m), c));
  t.is(f.trace(x).consts.length, 1, 'the matrix is a constvar; the scalar became a literal');
});

test('pytrees in and out', (t) => {
  const f = jax.jit((p: { a: Array; b: Array[] }, scale: number) => ({
    sum: jnp.add(p.a, p.b[0]!),
    parts: [jnp.multiply(p.b[1]!, scale), null],
    n: jnp.sum(p.a),
  }));
  const out = f({ a: x, b: [y, row] }, 3);
  t.deepEqual(Object.keys(out).sort(), ['n', 'parts', 'sum']);
  assertArray(t, out.sum, jnp.add(x, y));
  assertArray(t, out.parts[0]!, jnp.multiply(row, 3));
  t.is(out.parts[1], null);
  assertArray(t, out.n, jnp.sum(x));
});

test('staticArgnums: static values take part in the signature and may steer Python-style control flow', (t) => {
  let traces = 0;
  const f = jax.jit((a: Array, power: number, mode: string) => {
    traces++;
    const p = jnp.power(a, power);
    return mode === 'neg' ? jnp.negative(p) : p;
  }, { staticArgnums: [1, 2] });
  assertArray(t, f(x, 2, 'neg'), jnp.negative(jnp.power(x, 2)));
  assertArray(t, f(x, 2, 'neg'), jnp.negative(jnp.power(x, 2)));
  t.is(traces, 1, 'same static values: cache hit');
  assertArray(t, f(x, 3, 'neg'), jnp.negative(jnp.power(x, 3)));
  assertArray(t, f(x, 3, 'pos'), jnp.power(x, 3));
  t.is(traces, 3, 'each new static value retraces');
  t.is(f.cacheSize, 3);
  assertThrowsMentioning(t, () => jax.jit((a: Array) => a, { staticArgnums: 'a' as never }), 'staticArgnums');
});

test('the cache hits on the same signature and retraces on a new shape, dtype or weak type', (t) => {
  let traces = 0;
  const f = jax.jit((a: Array) => {
    traces++;
    return jnp.multiply(a, 2);
  });
  f(x);
  f(y);
  t.is(traces, 1, 'same shape and dtype: one trace');
  t.is(f.executable(x), f.executable(y), 'and one compiled program');
  f(rand([3, 7]));
  t.is(traces, 2, 'new shape');
  f(xi);
  t.is(traces, 3, 'new dtype');
  const weak = f(2.0 as never);
  const strong = f(jnp.array(2.0));
  t.is(traces, 5, 'a weakly typed JS number and a float32 array are different signatures');
  t.true(weak.weakType);
  t.false(strong.weakType);
  t.is(f.cacheSize, 5);
});

test('donateArgnums: a donated array is unusable afterwards; donating a static argument is an error', (t) => {
  const a = rand([6, 7], 21);
  const b = rand([6, 7], 22);
  const expected = jnp.add(a, b).dataSync();
  const f = jax.jit((p: Array, q: Array) => jnp.add(p, q), { donateArgnums: 0 });
  const out = f(a, b);
  t.deepEqual(out.dataSync(), expected);
  t.true(a.isDisposed, 'the donated argument was consumed');
  t.false(b.isDisposed, 'the other argument was not');
  assertThrowsMentioning(t, () => a.dataSync(), 'donated');
  assertThrowsMentioning(t, () => f(a, b), 'donated');
  // a donated array that the program returns as is stays readable through the output
  const c = rand([4], 23);
  const values = c.dataSync();
  const same = jax.jit((p: Array) => p, { donateArgnums: [0] })(c);
  t.true(c.isDisposed);
  t.deepEqual(same.dataSync(), values);
  assertThrowsMentioning(t, () => jax.jit((p: Array, n: number) => p, { staticArgnums: 1, donateArgnums: 1 }), 'static', 'donated');
});

test('kernelCount and executable() describe the compiled program', (t) => {
  const f = jax.jit(chain10);
  t.is(f.kernelCount(x), 1);
  const e = f.executable(x);
  const [kernel] = e.kernels();
  t.regex(kernel!.source, new RegExp(`void (__launch_bounds__\\(\\d+\\) )?${kernel!.name}\\(`), 'the kernel source defines its symbol');
  t.is(kernel!.label, 'mul add tanh mul sub abs sqrt max exp neg');
  t.regex(String(e), /^0: ew_\w+ \[mul add tanh/);
});

test('donation is ignored while an outer jit traces; numbers passed to jit leave no arrays behind', (t) => {
  const c = rand([4], 31);
  const inner = jax.jit((p: Array) => jnp.multiply(p, 2), { donateArgnums: 0 });
  const outer = jax.jit((a: Array) => jnp.add(inner(c), a));
  assertArray(t, outer(jnp.ones([4])), jnp.add(jnp.multiply(c, 2), 1));
  t.false(c.isDisposed, 'a closed-over array handed to a donating jit under a trace is staged, not donated');
  const f = jax.jit((a: Array, s: number) => jnp.multiply(a, s));
  f(c, 3).dispose();
  const before = jax.liveArrayCount();
  const out = f(c, 4);
  t.is(jax.liveArrayCount(), before + 1, 'only the output is alive');
  out.dispose();
});

test('an Array as a static argument is JAX\'s non-hashable ValueError, not a trace shared by every Array (issue 13)', (t) => {
  const g = jax.jit((a: Array | number[]) => jnp.sum(jnp.square(jnp.asarray(a as never))), { staticArgnums: [0] });
  const error = t.throws(() => g(jnp.array([1, 2, 3])), { instanceOf: jax.ValueError });
  t.regex(error!.message, /^jax\.jit: Non-hashable static arguments are not supported\. An error occurred while trying to hash an object of type Array, Array\(\[1\., 2\., 3\.\], dtype=float32\) \(static argument 0\)\. The error was: TypeError: unhashable type: 'Array'/);
  t.throws(() => g([jnp.array(1)] as never), { instanceOf: jax.ValueError, message: /Non-hashable static arguments/ });
  // JS arrays are hashed by value (JAX's tuples): each gets its own trace
  t.is(g([1, 2, 3]).item(), 14);
  t.is(g([4, 5, 6]).item(), 77);
  t.is(g.cacheSize, 2);
});
