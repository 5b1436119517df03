// Ports of JAX's tests/api_test.py (JitTest and APITest): jit caching and
// retracing, static and donated arguments, pytrees in and out, lower/compile,
// grad / valueAndGrad / jacfwd / jacrev argument handling and hasAux, jvp /
// vjp / linearize argument checks, vmap inAxes / outAxes errors, evalShape,
// ShapeDtypeStruct, devicePut / deviceGet / blockUntilReady, and the errors
// JAX raises (their types, and their words where JAX's tests match them).
// Each test names the JAX test it comes from.
//
// Not ported, and why:
// - keyword arguments (test_jit_kwargs, test_jit_with_mismatched_static_argnames,
//   test_new_static_argnum_on_keyword_arguments, donate_argnames with kwargs,
//   test_dict_donation*, test_vmap_mismatched_keyword): JS has none; staticArgnames
//   picks a parameter by name but the argument is still passed by position (README).
// - disable_jit, no_tracing, checking_leaks, clear_caches, explain_cache_misses,
//   compile logging and the count_* counters, jax.Inline / make_jaxpr showing pjit
//   (jaxon inlines jit under tracing), compiler_options, keep_unused, device/backend
//   arguments, pmap, tokens, named axes, multi-device shardings: not in jaxon's API.
// - Python object protocols: __repr__ / __doc__ / __qualname__ / __wrapped__ of jitted
//   functions, staticmethod / classmethod, weakrefs and garbage collection, threads,
//   enums, namedtuples, NumPy masked and object arrays, __jax_array__.
// - complex numbers, holomorphic=True, float0 and allow_int: jaxon has no complex
//   dtypes and no float0 (API.md's dtypes).
// - Python casts that JS does not have (complex(), hex(), oct(); float(x)'s
//   "Try using x.astype" advice): JS has Number(), ported as test_cast_int.
// - test_list_index_err: `L[n]` with a traced n cannot raise in JS. A property key
//   converts its index with the 'string' hint, the one template literals use (a
//   tracer prints as Python's str prints it), so it reads L['Traced<...>'], undefined.
// - grad through Python control flow (test_switch_value_jit's grad part): a JS
//   comparison on a traced value raises under grad too (README, "Coming from JAX").
// - test_jit_lower_compile_vmap: jaxon's Compiled evaluates its jaxpr under an outer
//   transformation (the right answer) where JAX refuses with a TypeError.
// - test_double_donation: jaxon computes f(x, x) with x donated correctly where JAX
//   raises; test_devicearray_delete: jaxon's Array has dispose() (a ReferenceError
//   on use), not delete(); ShapeDtypeStruct(4, ...): a bare number is a shape (API.md).
// - test_vjp_fun_jit, test_linearize_fun_jit, linear_transpose: functions returned
//   by vjp / linearize are not pytrees in jaxon, and linear_transpose is not in API.md.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';

const { numpy: jnp, lax } = jax;
// transformations take and return pytrees of any shape, as in JAX
/* eslint-disable @typescript-eslint/no-explicit-any */
type Fn = (...args: any[]) => any;

const values = (x: unknown): number[] => globalThis.Array.from((x as Array).dataSync() as ArrayLike<number>);
const num = (x: unknown): number => (x as Array).item() as number;

/** Every leaf of `actual` is close to the matching number of `expected` (a pytree of numbers or arrays). */
function near(t: ExecutionContext, actual: unknown, expected: unknown, message = '', tol = 1e-5): void {
  const flat = (x: unknown): number[] => jax.tree.leaves(x as any).flatMap((l: unknown) => (typeof l === 'number' ? [l] : values(l)));
  const got = flat(actual);
  const want = flat(expected);
  t.is(got.length, want.length, `${message}: number of values`);
  got.forEach((g, i) => {
    const w = want[i]!;
    t.true((Number.isNaN(g) && Number.isNaN(w)) || Math.abs(g - w) <= tol * (1 + Math.abs(w)), `${message} [${i}]: got ${g}, expected ${w}`);
  });
}

// ---- JitTest: caching and static arguments ----

test('jit of a non-function raises TypeError "Expected a callable value" (test_jit_of_noncallable)', (t) => {
  t.throws(() => jax.jit(3 as never), { instanceOf: TypeError, message: /Expected a callable value, got 3/ });
});

test('jit of a generator function raises TypeError (test_jit_of_generator)', (t) => {
  function* gen(x: number) {
    yield x;
  }
  t.throws(() => jax.jit(gen as never), { instanceOf: TypeError, message: /Expected a function, got a generator function/ });
});

for (const [kind, make] of [['JS numbers', (v: number) => v], ['int32 arrays', (v: number) => jnp.array(v, { dtype: 'int32' })]] as const) {
  test(`static arguments retrace only when their values change, dynamic ones (${kind}) never (test_jit_static_args)`, (t) => {
    const side: null[] = [];
    const f = (x: any, y: any, z: any, flag = false, _flag2 = false) => {
      if (!flag) throw new Error('flag must be true');
      side.push(null);
      return jnp.add(jnp.add(jnp.multiply(100, x), jnp.multiply(10, y)), z);
    };
    const [one, two, three] = [make(1), make(2), make(3)];
    const f1 = jax.jit(f, { staticArgnums: [3, 4] });
    t.is(num(f1(one, two, three, true, false)), 123);
    t.is(side.length, 1);
    t.is(num(f1(one, two, three, true, false)), 123);
    t.is(side.length, 1, 'obvious cache hit');
    t.is(num(f1(two, one, three, true, false)), 213);
    t.is(side.length, 1, 'same signature');
    t.is(num(f1(two, one, three, true, true)), 213);
    t.is(side.length, 2, 'a new static value');

    side.length = 0;
    const f2 = jax.jit(f, { staticArgnums: [0, 2, 3, 4] });
    const expected = [[1, 2, 3, true, false, 123, 1], [1, 3, 3, true, false, 133, 1], [2, 2, 3, true, false, 223, 2], [2, 4, 3, true, false, 243, 2], [2, 4, 3, true, true, 243, 3], [2, 5, 3, true, true, 253, 3]] as const;
    for (const [x, y, z, a, b, out, traces] of expected) {
      t.is(num(f2(x, y, z, a, b)), out);
      t.is(side.length, traces, `f2(${x}, ${y}, ${z}, ${a}, ${b})`);
    }
  });
}

test('static values equal by value share a trace; functions, class instances and Maps are static by identity (test_static_args_equality)', (t) => {
  // JS has no __hash__/__eq__: an object without them is compared by identity, Python's default
  class A {}
  const side: null[] = [];
  const f1 = jax.jit((x: any, _static: unknown) => {
    side.push(null);
    return jnp.multiply(x, 100);
  }, { staticArgnums: [1] });
  const a = new A();
  t.is(num(f1(1, a)), 100);
  t.is(num(f1(1, a)), 100);
  t.is(side.length, 1);
  t.is(f1.cacheSize, 1);
  f1(1, new A());
  t.is(f1.cacheSize, 2, 'another instance is another static value');
  (a as { field?: number }).field = 1;
  f1(1, a);
  t.is(f1.cacheSize, 3, 'a mutated instance retraces (its fields key it too)');
  f1(1, { k: [1, 2] });
  f1(1, { k: [1, 2] });
  t.is(f1.cacheSize, 4, 'plain data is compared by value');

  // two closures with the same source but different captured values are different functions
  const apply = jax.jit((g: Fn, x: any) => g(x), { staticArgnums: 0 });
  const times = (a: number) => (x: Array) => jnp.multiply(x, a);
  t.is(num(apply(times(2), 3)), 6);
  t.is(num(apply(times(5), 3)), 15);
  const lookup = jax.jit((m: Map<string, number>, x: any) => jnp.add(x, m.get('a')!), { staticArgnums: 0 });
  t.is(num(lookup(new Map([['a', 1]]), 0)), 1);
  t.is(num(lookup(new Map([['a', 7]]), 0)), 7);
  // NaN, the infinities and null are different values (JSON would write all three as null)
  const which = jax.jit((v: unknown, x: any) => jnp.add(x, Number.isNaN(v) ? 1 : v === Infinity ? 2 : 3), { staticArgnums: 0 });
  t.deepEqual([NaN, Infinity, null].map((v) => num(which(v, 0))), [1, 2, 3]);
});

test('jit of a function of 500 arguments in a list (test_jit_with_many_args_works)', (t) => {
  const f = jax.jit((args: number[]) => args.reduce<any>((a, b) => jnp.add(a, b), 0));
  const args = globalThis.Array.from({ length: 500 }, (_, i) => i);
  t.is(num(f(args)), 124750);
});

test('argnums outside fn\'s parameters raise ValueError when jit is applied, unless fn takes ...rest (test_jit_argnums_overflow_error)', (t) => {
  function f(a: any, _b: any, _c: any) {
    return a;
  }
  function h(a: any, ..._args: any[]) {
    return a;
  }
  const i = () => 1;
  for (const option of ['staticArgnums', 'donateArgnums'] as const) {
    jax.jit(f, { [option]: [0, 1] });
    jax.jit(f, { [option]: [0, 1, -3] });
    t.throws(() => jax.jit(f, { [option]: [0, 1, 3] }), { instanceOf: jax.ValueError, message: /only accepts 3 positional arguments/ });
    t.throws(() => jax.jit(f, { [option]: [0, 1, -4] }), { instanceOf: jax.ValueError });
    jax.jit(h, { [option]: [0, 999] });
    jax.jit(h, { [option]: [0, -999] });
    jax.jit(i, { [option]: [] });
  }
  t.pass();
});

test('staticArgnames naming no parameter raises ValueError (test_jit_argnames_validation)', (t) => {
  function f(a: any, b: any, c: any) {
    return [a, b, c][0];
  }
  jax.jit(f, { staticArgnames: ['b', 'c'] });
  t.throws(() => jax.jit(f, { staticArgnames: ['b', 'c', 'not_defined'] }), { instanceOf: jax.ValueError, message: /not_defined/ });
});

test('staticArgnames finds the parameter by name (test_jit_with_static_argnames)', (t) => {
  const f = (x: unknown) => {
    if (x !== 'foo') throw new Error('x must be foo');
    return 1;
  };
  t.is(num(jax.jit(f, { staticArgnums: 0 })('foo' as never)), 1);
  t.is(num(jax.jit(f, { staticArgnames: 'x' })('foo' as never)), 1);
});

test('a static parameter left to its default is no error (test_new_static_argnum_with_default_arguments)', (t) => {
  const f = jax.jit((x = 4) => x, { staticArgnums: 0 });
  t.is(num(f()), 4);
});

test('negative staticArgnums count from the end (test_jit_negative_static_argnums)', (t) => {
  const g = jax.jit((x: any, y: any) => {
    if (typeof y !== 'number') throw new Error('y must be static');
    return jnp.multiply(x, y);
  }, { staticArgnums: -1 });
  for (let i = 0; i < 3; i++) t.is(num(g(2, i)), 2 * i);
});

test('static values of different types do not share a trace (test_jit_static_argnums_requires_type_equality)', (t) => {
  let executing = true;
  const f = jax.jit((k: unknown) => {
    if (!executing) throw new Error('retraced');
    return k;
  }, { staticArgnums: 0 });
  for (const x of [1, true]) {
    executing = true;
    t.is((f(x as never) as Array).item(), x);
    executing = false;
    t.is((f(x as never) as Array).item(), x);
  }
  t.is(f.cacheSize, 2);
});

test('jit(f) applied twice shares f\'s traces (test_jit_global_cache)', (t) => {
  let executing = true;
  const f = (x: any) => {
    if (!executing) throw new Error('retraced');
    return x;
  };
  jax.jit(f)(2);
  executing = false;
  t.is(num(jax.jit(f)(3)), 3);
});

test('repeated calls with one signature keep one cache entry (test_cache_key_defaults)', (t) => {
  const f = jax.jit((x: Array) => jnp.sum(jnp.power(x, 2)));
  t.is(f.cacheSize, 0);
  const x = jnp.arange(5).astype('float32');
  for (let i = 0; i < 3; i++) f(x);
  t.is(f.cacheSize, 1);
});

test('an inner jit called ten times inside an outer jit traces once (test_inner_jit_function_retracing)', (t) => {
  let inner = 0;
  let outer = 0;
  const innerFn = jax.jit((s: Array) => {
    inner++;
    return jnp.multiply(2, s);
  });
  const outerFn = jax.jit((x: Array) => {
    outer++;
    const old = x;
    for (let i = 0; i < 10; i++) x = innerFn(x);
    return jnp.add(x, old);
  });
  const state = jnp.arange(5).astype('uint32');
  innerFn(state);
  t.deepEqual(values(outerFn(state)), [0, 1025, 2050, 3075, 4100]);
  t.is(inner, 1);
  t.is(outer, 1);
});

test('an Array as a static argument raises ValueError, on the first call or after others (test_jit_raises_on_first_invocation_on_non_hashable_static_argnum, test_cpp_jit_raises_on_non_hashable_static_argnum)', (t) => {
  const f = (x: any, _y: unknown) => jnp.add(x, 3);
  t.throws(() => jax.jit(f, { staticArgnums: [1] })(1, jnp.array(1)), { instanceOf: jax.ValueError, message: /Non-hashable static arguments are not supported/ });
  const g = jax.jit(f, { staticArgnums: [1] });
  t.is(num(g(1, 1)), 4);
  t.throws(() => g(1, jnp.array(1)), { instanceOf: jax.ValueError, message: /Non-hashable static arguments are not supported/ });
});

test('a string or a dtype passed to jit raises TypeError (test_jit_bad_input)', (t) => {
  const f = jax.jit((x: any) => x);
  t.throws(() => f('foo'), { instanceOf: TypeError, message: /'foo'/ });
  // jnp.int32 is the string 'int32' (API.md), no more an array than JAX's type objects
  t.throws(() => f(jnp.int32), { instanceOf: TypeError, message: /'int32'/ });
});

test('jit runs on every device (test_jit_on_all_devices)', (t) => {
  const data = globalThis.Array.from({ length: 1000 }, (_, i) => Math.sin(i));
  const f = jax.jit(jnp.negative);
  for (const device of jax.devices()) {
    const x = jax.devicePut(jnp.array(data), device);
    near(t, f(x), data.map((v) => -v), device.platform);
  }
});

test('jnp functions jit with static arguments (test_jit_python_builtin)', (t) => {
  const x = jnp.array([1, 2]);
  t.deepEqual(values(jax.jit(jnp.add, { staticArgnums: [1] })(x, 1)), [2, 3]);
});

test('1 + x * 0 is NaN for x = NaN, eagerly and under jit (test_jit_nan_times_zero)', (t) => {
  const f = (x: any) => jnp.add(1, jnp.multiply(x, 0));
  t.true(Number.isNaN(num(f(NaN))));
  t.true(Number.isNaN(num(jax.jit(f)(NaN))));
});

test('jit of functions returning copies gives new arrays, and JS numbers as arrays (test_trivial_computations)', (t) => {
  const x = jnp.array([1, 2, 3]);
  const y = jax.jit((v: Array) => v)(x);
  t.not(y, x);
  const [z1, z2] = jax.jit((v: Array) => [v, v])(x);
  t.not(z1, z2);
  const [a, b, c] = jax.jit((u: Array, v: Array) => [v, 1, u])(jnp.array([1, 2]), jnp.array([2, 3]));
  t.deepEqual([values(a), values(b), values(c)], [[2, 3], [1], [1, 2]]);
});

test('jit takes and returns pytrees, as grad does (test_namedtuple_transparency, with a plain object)', (t) => {
  const f = jax.jit((d: { a: Array; b: [Array, number] }) => ({ sum: jnp.add(d.a, d.b[0]), scaled: [jnp.multiply(d.a, d.b[1]), null] }));
  const out = f({ a: jnp.array([1, 2]), b: [jnp.array([10, 20]), 3] }) as any;
  t.deepEqual(values(out.sum), [11, 22]);
  t.deepEqual(values(out.scaled[0]), [3, 6]);
  t.is(out.scaled[1], null);
});

// ---- JitTest: donation ----

test('a donated argument is deleted and its value moved to the output (test_jit_donate_invalidates_input)', (t) => {
  const move = jax.jit((x: Array) => jnp.subtract(jnp.add(x, x), x), { donateArgnums: 0 });
  const x = jnp.ones([]);
  const y = move(x);
  t.true(x.isDisposed);
  t.is(num(y), 1);
  // JAX raises RuntimeError("Array has been deleted"); jaxon's deleted arrays raise ReferenceError (API.md: dispose)
  t.throws(() => jax.devicePut(x, jax.devices()[0]), { instanceOf: ReferenceError, message: /donated/ });
});

test('static and donated arguments together (test_jit_donate_static_argnums)', (t) => {
  const f = jax.jit((a: number, b: number, c: Array, d: Array) => [jnp.add(a + b, c), jnp.add(a + b, d)], { staticArgnums: [0, 1], donateArgnums: [2, 3] });
  const c = jax.devicePut(jnp.array([2, 2]));
  const d = jax.devicePut(jnp.array([1, 1, 1, 1]));
  const [e, g] = f(1, 2, c, d);
  t.deepEqual(values(e), [5, 5]);
  t.deepEqual(values(g), [4, 4, 4, 4]);
  t.true(c.isDisposed);
  t.true(d.isDisposed);
});

test('a weakly typed donated argument is deleted (test_jit_donate_weak_type)', (t) => {
  const move = jax.jit((x: Array) => x.astype('int32'), { donateArgnums: 0 });
  const x = jnp.broadcastTo(2, [3]);
  move(x);
  t.true(x.isDisposed);
});

test('an argument cannot be both static and donated (test_intersecting_static_and_donate_argnames)', (t) => {
  t.throws(() => jax.jit((x: any) => x, { staticArgnames: 'x', donateArgnums: 0 }), { instanceOf: jax.ValueError, message: /static and donated/ });
});

// ---- JitTest: lower and compile ----

test('lower(...).compile() runs, on numbers and on ShapeDtypeStructs (test_jit_lower_compile, test_jit_lower_duck_typing, test_jit_lower_compile_trivial)', (t) => {
  const f = (x: any) => jnp.add(jnp.sqrt(jnp.power(x, 2)), 1);
  near(t, jax.jit(f).lower(1).compile()(1 as never), 2);
  near(t, jax.jit((x: any) => jnp.multiply(2, x)).lower(new jax.ShapeDtypeStruct([], 'float32')).compile()(jnp.array(1) as never), 2);
  near(t, jax.jit((x: any) => x).lower(1).compile()(4 as never), 4);
});

test('a Compiled called with another pytree or dtype raises TypeError (test_jit_lower_compile_in_tree_mismatch, test_jit_lower_compile_arg_type_mismatch)', (t) => {
  const f = (x: any) => jnp.add(jnp.sqrt(jnp.power(x, 2)), 1);
  t.throws(() => jax.jit(f).lower(1).compile()([1] as never), { instanceOf: TypeError });
  const exe = jax.jit(f).lower(jnp.array(1, { dtype: 'float32' })).compile();
  t.throws(() => exe(jnp.array(1, { dtype: 'int32' }) as never), { instanceOf: TypeError, message: /float32.*int32/ });
});

test('lower and compile of a function of ...args (test_jit_lower_compile_multi_arg, test_jit_lower_compile_trivial_multi_arg)', (t) => {
  near(t, jax.jit((...args: any[]) => jnp.add(jnp.sqrt(jnp.power(args[0], 2)), 1)).lower(1, 1).compile()(1 as never, 1 as never), 2);
  near(t, jax.jit((...args: any[]) => args[0]).lower(1, 1).compile()(1 as never, 1 as never), 1);
});

test('asText, costAnalysis and memoryAnalysis of lowered and compiled functions (test_jit_lower_as_text, test_jit_lower_cost_analysis, test_jit_lower_compile_memory_analysis, test_jit_lower_compile_as_text)', (t) => {
  for (const f of [(x: any) => x, (x: any) => jnp.add(x, 4)]) {
    const lowered = jax.jit(f).lower(1);
    t.is(typeof lowered.asText(), 'string');
    t.truthy(lowered.costAnalysis());
    const compiled = lowered.compile();
    t.is(typeof compiled.asText(), 'string');
    t.truthy(compiled.costAnalysis());
    t.is(typeof compiled.memoryAnalysis().argumentSizeInBytes, 'number');
  }
});

// ---- APITest: grad and friends ----

test('grad and valueAndGrad with argnums (test_grad_argnums, test_value_and_grad_argnums)', (t) => {
  // JAX passes flag=True by keyword; JS passes it by position
  const f = (x: any, y: any, z: any, flag = false) => {
    if (!flag) throw new Error('flag must be true');
    return jnp.add(jnp.add(jnp.multiply(1, x), jnp.multiply(2, y)), jnp.multiply(3, z));
  };
  t.is(num(jax.grad(f)(1, 1, 1, true)), 1);
  t.is(num(jax.grad(f, 1)(1, 1, 1, true)), 2);
  near(t, jax.grad(f, [2, 0])(1, 1, 1, true), [3, 1]);
  const y = num(f(1, 1, 1, true));
  near(t, jax.valueAndGrad(f)(1, 1, 1, true), [y, 1]);
  near(t, jax.valueAndGrad(f, 1)(1, 1, 1, true), [y, 2]);
  near(t, jax.valueAndGrad(f, [2, 0])(1, 1, 1, true), [y, [3, 1]]);
});

test('grad with a negative argnums (test_grad_negative_argnums)', (t) => {
  const f = (x: Array, y: Array) => jnp.multiply(jnp.sum(x), jnp.sum(y));
  const x = jax.random.normal(jax.random.key(0), [4, 4]);
  const y = jax.random.normal(jax.random.key(1), [4, 4]);
  near(t, jax.grad(f, -1)(x, y), jnp.broadcastTo(jnp.sum(x), [4, 4]), 'd/dy', 1e-4);
});

test('grad of jit and jit of grad trace f once (test_grad_of_jit, test_jit_of_grad)', (t) => {
  const side: null[] = [];
  const f = jax.jit((x: Array) => {
    side.push(null);
    return jnp.multiply(x, x);
  });
  t.is(num(jax.grad(f)(1)), 2);
  t.is(side.length, 1);
  t.is(num(jax.grad(f)(2)), 4);
  t.is(side.length, 1);
  // a fresh f, as JAX's test_jit_of_grad has (f's trace for grad(f) above would serve jit(grad(f)) too)
  side.length = 0;
  const f2 = jax.jit((x: Array) => {
    side.push(null);
    return jnp.multiply(x, x);
  });
  const g = jax.jit(jax.grad(f2));
  t.is(num(g(1)), 2);
  t.is(num(g(2)), 4);
  t.is(side.length, 1);
});

test('jit(grad(f)) keeps f\'s parameters for staticArgnames, through grad, jacfwd and jacrev (test_grad_wrap)', (t) => {
  for (const transform of [jax.grad, jax.jacfwd, jax.jacrev] as Fn[]) {
    const myFunction = jax.jit(transform((x: Array, flag: boolean) => (flag ? x : jnp.zerosLike(x))), { staticArgnames: ['flag'] });
    t.is(num(myFunction(1, false)), 0);
    t.is(num(myFunction(1, true)), 1);
  }
});

test('grad, jacfwd and jacrev of the identity at a JS number are weakly typed floats (test_ad_weak_types)', (t) => {
  for (const transform of [jax.grad, jax.jacfwd, jax.jacrev] as Fn[]) {
    const out = transform((x: Array) => x)(1) as Array;
    t.is(out.dtype, 'float32');
    t.true(out.weakType, transform.name);
  }
});

test('grad of a string raises TypeError (test_grad_bad_input, test_bad_input)', (t) => {
  t.throws(() => jax.grad((x: any) => x)('foo'), { instanceOf: TypeError, message: /'foo'/ });
});

test('grad of a function returning an array pair, an empty array or a non-scalar raises TypeError "Gradient only defined for scalar-output functions" (test_grad_tuple_output, test_grad_unit_output, test_grad_nonscalar_output)', (t) => {
  const message = /Gradient only defined for scalar-output functions\. Output/;
  t.throws(() => jax.grad((x: Array) => [x, x])(1), { instanceOf: TypeError, message });
  t.throws(() => jax.grad((_x: Array) => [])(jnp.zeros(3)), { instanceOf: TypeError, message });
  t.throws(() => jax.grad((x: Array) => x)(jnp.zeros(3)), { instanceOf: TypeError, message: /Gradient only defined for scalar-output functions\. Output had shape: \[3\]/ });
});

test('grad of an int32 input raises JAX\'s TypeError (test_grad_of_int_errors)', (t) => {
  // a JS number is a weak float (API.md), so JAX's dfn(3) needs an int32 array here
  t.throws(() => jax.grad((x: Array) => jnp.power(x, 2))(jnp.array(3, { dtype: 'int32' })), {
    instanceOf: TypeError,
    message: /grad requires real- or complex-valued inputs \(input dtype that is a sub-dtype of np\.inexact\), but got int32/,
  });
});

test('grad with fewer arguments than argnums needs raises TypeError (test_grad_without_enough_args_error_message)', (t) => {
  const f = (x: any, y: any) => jnp.add(x, y);
  t.throws(() => jax.grad(f, 0)(), {
    instanceOf: TypeError,
    message: /differentiating with respect to argnums=0 requires at least 1 positional arguments to be passed by the caller, but got only 0 positional arguments\./,
  });
  t.throws(() => jax.grad(f, 2)(1, 2), { instanceOf: TypeError, message: /argnums=2 requires at least 3 positional arguments/ });
});

test('grad with hasAux (test_grad_and_aux_basic, test_grad_and_aux_constant, test_grad_and_aux_no_tracers)', (t) => {
  const [g, aux] = jax.grad((x: Array) => [jnp.power(x, 3), [jnp.power(x, 2)]], { hasAux: true })(3) as [Array, Array[]];
  near(t, g, jax.grad((x: Array) => jnp.power(x, 3))(3));
  near(t, aux, [9]);
  const [g2, aux2] = jax.grad((x: Array) => [jnp.power(x, 3), [jnp.power(x, 2), 4]], { hasAux: true })(4) as [Array, unknown[]];
  near(t, g2, 48);
  near(t, aux2, [16, 4]);
  const [, aux3] = jax.grad((x: Array) => [jnp.power(x, 2), { identity: x, p1: jnp.add(x, 1) }], { hasAux: true })(3) as [Array, Record<string, Array>];
  t.deepEqual(Object.keys(aux3), ['identity', 'p1']);
  for (const v of Object.values(aux3)) t.false(v.isTracer);
  near(t, aux3, { identity: 3, p1: 4 });
});

test('grad with hasAux of a function not returning a pair raises TypeError "two-element tuple" (test_grad_and_aux_error)', (t) => {
  const message = /two-element tuple/;
  t.throws(() => jax.grad((_x: Array) => [1, 2, 3], { hasAux: true })(1), { instanceOf: TypeError, message });
  t.throws(() => jax.grad((x: Array) => x, { hasAux: true })(1), { instanceOf: TypeError, message });
  t.throws(() => jax.grad((x: Array) => [x], { hasAux: true })(1), { instanceOf: TypeError, message });
});

test('grad with hasAux nested in grad and jit (test_grad_and_aux_nested)', (t) => {
  const f = (x: Array) => {
    const [, aux] = jax.grad((v: Array) => [jnp.power(v, 3), [jnp.power(v, 3)]], { hasAux: true })(x) as [Array, Array[]];
    return aux[0]!;
  };
  const f2 = (x: Array) => jnp.power(x, 3);
  const expected = num(jax.grad(f2)(4));
  t.is(num(jax.grad(f)(4)), expected);
  t.is(num(jax.jit(jax.grad(f))(4)), expected);
  t.is(num(jax.jit(jax.grad(jax.jit(f)))(4)), expected);
  const h = (x: Array) => jnp.multiply(f(x), jnp.sin(x));
  const h2 = (x: Array) => jnp.multiply(jnp.power(x, 3), jnp.sin(x));
  near(t, jax.grad(h)(4), jax.grad(h2)(4));
  near(t, jax.jit(jax.grad(jax.jit(h)))(4), jax.grad(h2)(4));
});

test('jacfwd, jacrev and jvp with hasAux (test_jacfwd_and_aux_basic, test_jacrev_and_aux_basic, test_jvp_and_aux_basic)', (t) => {
  const fun = (x: Array) => [jnp.power(x, 3), [jnp.power(x, 2)]];
  for (const jac of [jax.jacfwd, jax.jacrev] as Fn[]) {
    const [j, aux] = jac(fun, { hasAux: true })(3);
    near(t, j, jac((x: Array) => jnp.power(x, 3))(3));
    near(t, aux, [9]);
  }
  const [primals, tangents, aux] = jax.jvp(fun, [3], [4], { hasAux: true });
  near(t, [primals, tangents], jax.jvp((x: Array) => jnp.power(x, 3), [3], [4]));
  near(t, aux, [9]);
});

test('jvp and grad through jit called twice on a closure over the jvp tracer (test_jvp_jit_cached)', (t) => {
  const func = (x: Array) => {
    const inner = (y: Array) => jnp.multiply(y, x);
    // the second call to the inner jit would hit the cache
    return jnp.add(jax.jit(inner)(4), jax.jit(inner)(5));
  };
  near(t, jax.jvp(func, [5], [1]), [45, 9]);
  // jit returning a value of the outer transformation it closes over (test_grad_conj_symbolic_zeros, test_forwarding_bug)
  t.is(num(jax.grad((x: Array) => jax.jit((_y: Array) => x)(1))(2)), 1);
});

// ---- APITest: shape and tracer errors ----

test('adding shapes [3] and [4] raises TypeError, eagerly and under grad (test_binop_mismatch)', (t) => {
  const f = (x: Array, y: Array) => jnp.add(x, y);
  t.throws(() => f(jnp.zeros(3), jnp.zeros(4)), { instanceOf: TypeError, message: /\[3\].*\[4\]/ });
  t.throws(() => jax.grad((x: Array, y: Array) => jnp.sum(f(x, y)))(jnp.zeros(3), jnp.zeros(4)), { instanceOf: TypeError });
  t.throws(() => lax.add(jnp.zeros(3), jnp.zeros(4)), { instanceOf: TypeError, message: /add got incompatible shapes for broadcasting: \[3\], \[4\]/ });
  // shapes of different ranks fail in jnp's rank promotion: a ValueError, as in JAX
  t.throws(() => jnp.add(jnp.zeros([2, 3]), jnp.zeros(4)), { instanceOf: jax.ValueError });
});

test('dot of shapes [3] and [4] raises TypeError under grad (test_dot_mismatch)', (t) => {
  t.throws(() => jax.grad((x: Array, y: Array) => jnp.dot(x, y))(jnp.zeros(3), jnp.zeros(4)), { instanceOf: TypeError, message: /\[3\] and \[4\]/ });
});

test('evalShape of mismatched shapes raises TypeError (test_eval_shape_shape_error)', (t) => {
  const fun = (x: Array, y: Array) => jnp.tanh(jnp.add(jnp.dot(x, y), 3));
  t.throws(() => jax.evalShape(fun, jnp.ones([3, 3]), jnp.ones([4, 4])), { instanceOf: TypeError });
});

test('a JS comparison on a traced value raises ConcretizationTypeError under jit (test_switch_value_jit)', (t) => {
  const f = (x: any) => (x > 0 ? x : jnp.negative(x));
  t.throws(() => jax.jit(f)(1), { instanceOf: jax.ConcretizationTypeError });
  // JAX's ConcretizationTypeError and TracerBoolConversionError are TypeErrors
  t.throws(() => jax.jit(f)(1), { instanceOf: TypeError, name: 'TracerBoolConversionError' });
});

test('a loop bound that is traced raises TypeError; static, it runs (test_range_err)', (t) => {
  const f = (x: any, n: any) => {
    for (let i = 0; i < n; i++) x = jnp.add(x, i);
    return x;
  };
  t.is(num(jax.jit(f, { staticArgnums: [1] })(0, 5)), 10);
  t.throws(() => jax.jit(f)(0, 5), { instanceOf: TypeError });
});

test('Number(x) and Math.floor(x) of a traced value raise TypeError (test_cast_int)', (t) => {
  t.throws(() => jax.jit((x: any) => Number(x))(0), { instanceOf: TypeError });
  t.throws(() => jax.jit((x: any) => Math.floor(x))(0), { instanceOf: jax.ConcretizationTypeError });
});

test('item() of a traced array raises ConcretizationTypeError; eagerly it is the value (test_jit_item)', (t) => {
  const f = (x: Array) => x.item();
  t.is(f(jnp.array(1)), 1);
  t.throws(() => jax.jit(f as Fn)(jnp.array(1)), { instanceOf: jax.ConcretizationTypeError, message: /float32\[\]/ });
});

test('traced values are Arrays, under jit and vmap (test_is_instance)', (t) => {
  const f = (x: unknown) => {
    if (!(x instanceof jax.Array)) throw new Error('not an Array');
    return jnp.add(x, 2);
  };
  t.is(num(jax.jit(f)(3)), 5);
  t.deepEqual(values(jax.vmap(f)(jnp.arange(3))), [2, 3, 4]);
});

// ---- APITest: escaped tracers ----

/** Saves the tracer it is called with (JAX's helper_save_tracer). */
function tracerSaver() {
  const box: { saved?: Array } = {};
  const save = (x: Array) => {
    box.saved = x;
    return x;
  };
  return { box, save };
}

const UNEXPECTED = { instanceOf: jax.UnexpectedTracerError, message: /Encountered an unexpected tracer/ };

test('a tracer leaked from one jit and returned by another raises UnexpectedTracerError (test_escaped_tracers_different_top_level_traces)', (t) => {
  const { box, save } = tracerSaver();
  jax.jit(save)(0);
  t.throws(() => jax.jit((_x: Array) => box.saved!)(0), UNEXPECTED);
});

test('a leaked tracer passed to jit raises UnexpectedTracerError (test_escaped_tracers_cant_lift_sublevels)', (t) => {
  const { box, save } = tracerSaver();
  jax.jit(save)(0);
  t.throws(() => jax.jit((x: Array) => x)(box.saved!), UNEXPECTED);
  // UnexpectedTracerError is a TypeError, as in JAX
  t.throws(() => jax.jit((x: Array) => x)(box.saved!), { instanceOf: TypeError });
});

test('a tracer leaked from an inner jit and used in the outer one raises UnexpectedTracerError (test_escaped_tracers_incompatible_sublevel)', (t) => {
  const { box, save } = tracerSaver();
  const func1 = (x: Array) => {
    jax.jit(save)(0);
    return jnp.add(x, box.saved!);
  };
  t.throws(() => jax.jit(func1)(2), UNEXPECTED);
});

test('a tracer leaked from an inner grad raises UnexpectedTracerError (test_escaped_tracers_cant_lift, test_escaped_tracers_not_among_input_tracers)', (t) => {
  const { box, save } = tracerSaver();
  const func1 = (x: Array) => {
    jax.grad(save)(0);
    return jnp.add(x, box.saved!);
  };
  t.throws(() => jax.grad(func1)(2), UNEXPECTED);
  const func2 = (x: Array) => {
    jax.grad(save)(x);
    return jnp.add(x, box.saved!);
  };
  t.throws(() => jax.jit(func2)(2), UNEXPECTED);
});

test('the UnexpectedTracerError names the leaked value\'s type (test_escaped_tracer_shape_dtype)', (t) => {
  const { box, save } = tracerSaver();
  jax.jit(save)(jnp.ones([4, 3], { dtype: 'int32' }));
  t.throws(() => jnp.add(box.saved!, 1), { instanceOf: jax.UnexpectedTracerError, message: /int32\[4,3\]/ });
});

test('a tracer leaked from a lax.scan body raises UnexpectedTracerError in a later jit (test_escaped_tracer_omnistaging_top_trace)', (t) => {
  let count: any = 1;
  lax.scan((c: null) => {
    count = jnp.add(count, 1);
    return [c, null];
  }, null, null, { length: 2 });
  t.throws(() => jax.jit(jnp.add)(jnp.ones([]), count), { instanceOf: jax.UnexpectedTracerError });
});

// ---- APITest: jvp, vjp and linearize arguments ----

test('jvp with mismatched primals and tangents raises JAX\'s errors (test_jvp_mismatched_arguments)', (t) => {
  const f = (x: Array, y: Array) => jnp.multiply(x, y);
  t.throws(() => jax.jvp(f, [2], []), { instanceOf: TypeError, message: /primal and tangent arguments must have the same tree structure/ });
  t.throws(() => jax.jvp((x: Array) => jnp.negative(x), [jnp.array(2, { dtype: 'float16' })], [jnp.array(4, { dtype: 'float32' })]), { instanceOf: TypeError, message: /float16.*float32/ });
  const fun = (x: Array) => jnp.add(x, 1);
  t.throws(() => jax.jvp(fun, [jnp.array([1, 2, 3])], [jnp.array([1, 2, 3, 4])]), { instanceOf: jax.ValueError, message: /shape/ });
  t.throws(() => jax.jvp(fun, [jnp.array(10)], [jnp.array([1, 2, 3])]), { instanceOf: jax.ValueError });
  t.throws(() => jax.jvp(fun, [jnp.array([1, 2, 3])], [jnp.array(20)]), { instanceOf: jax.ValueError });
  t.throws(() => jax.jvp(fun, [jnp.array([1, 2, 3])], [20]), { instanceOf: jax.ValueError });
});

test('jvp with primals or tangents not in an array raises TypeError (test_jvp_non_tuple_arguments)', (t) => {
  const f = (x: Array, y: Array) => jnp.add(x, y);
  t.throws(() => jax.jvp(f, 0 as never, [1]), { instanceOf: TypeError });
  t.throws(() => jax.jvp(f, [0], jnp.array([1, 2]) as never), { instanceOf: TypeError });
});

test('a vjp pullback given the wrong structure or dtype raises ValueError (test_vjp_mismatched_arguments)', (t) => {
  const [, pullback] = jax.vjp((x: Array, y: Array) => jnp.multiply(x, y), 3, 4);
  t.throws(() => pullback([7, 100]), { instanceOf: jax.ValueError, message: /unexpected tree structure/ });
  t.throws(() => pullback(jnp.array(42, { dtype: 'float16' })), { instanceOf: jax.ValueError, message: /unexpected JAX type/ });
});

test('a vjp pullback given a cotangent of the wrong shape raises ValueError (test_vjp_bad_cotangent_shape)', (t) => {
  const [, pullback] = jax.vjp((x: Array, y: Array) => jnp.matmul(x, y), jnp.ones([2, 5]), jnp.ones([5, 3]));
  t.throws(() => pullback(jnp.ones([2, 4])), { instanceOf: jax.ValueError, message: /unexpected JAX type/ });
});

test('a vjp pullback called with two arguments raises TypeError naming the function (test_vjp_multiple_arguments_error_message)', (t) => {
  const [, fVjp] = jax.vjp(function foo(x: Array) {
    return [x, x];
  }, 1);
  t.throws(() => (fVjp as Fn)(1, 1), { instanceOf: TypeError, message: /applied to foo was called with 2 arguments/ });
  near(t, fVjp([2, 2]), [4]);
});

test('a linearized function given tangents of another shape or dtype raises ValueError (test_issue_871, test_linearize_aval_error)', (t) => {
  const T = jnp.array([[1, 2], [3, 4], [5, 6]]);
  const x = jnp.array([1, 2, 3]);
  const message = /linearized function called on tangent values inconsistent with the original primal values/;
  for (const f of [jnp.sum, jax.jit(jnp.sum)]) {
    const [, fJvp] = jax.linearize(f as Fn, x);
    t.throws(() => fJvp(T), { instanceOf: jax.ValueError, message });
  }
  const [, fJvp] = jax.linearize((v: Array) => v, 1);
  near(t, fJvp(1), 1);
  t.throws(() => fJvp(jnp.array(1, { dtype: 'int32' })), { instanceOf: jax.ValueError, message });
});

// ---- APITest: vmap ----

test('vmap with inconsistent sizes raises ValueError listing them (test_vmap_inconsistent_sizes_constructs_proper_error_message)', (t) => {
  const f = (x1: Array, x2: Array, g: Fn) => g(x1, x2);
  t.throws(() => jax.vmap(f, [0, 0, null])(jnp.ones(2), jnp.ones(3), jnp.add), { instanceOf: jax.ValueError, message: /vmap got inconsistent sizes for array axes to be mapped:/ });
});

test('vmap axis errors (test_vmap_mismatched_axis_sizes_error_message_issue_705)', (t) => {
  const h = (a: Array, b: any) => jnp.add(jnp.sum(a), jnp.sum(globalThis.Array.isArray(b) ? b[0] : b));
  const X = jnp.ones([10, 4]);
  const U = jnp.ones([10, 2]);
  t.throws(() => jax.vmap(h, [0, 1])(X, U), {
    instanceOf: jax.ValueError,
    message: /vmap got inconsistent sizes for array axes to be mapped:\n {2}\* one axis had size 10: axis 0 of .* of type float32\[10,4\];\n {2}\* one axis had size 2: axis 1 of .* of type float32\[10,2\]/,
  });
  t.throws(() => jax.vmap((_x: Array, _y: Array, _z: Array) => null, [0, 1, 0])(X, U, X), {
    instanceOf: jax.ValueError,
    message: /\* most axes \(2 of them\) had size 10, e\.g\. axis 0 of .* of type float32\[10,4\];\n {2}\* one axis had size 2: axis 1 of .* of type float32\[10,2\]/,
  });
  t.throws(() => jax.vmap(h, [0, 1])(X, [U, U]), { instanceOf: jax.ValueError, message: /\* most axes \(2 of them\) had size 2, e\.g\. axis 1 of .*\[0\] of type float32\[10,2\]/ });
  t.throws(() => jax.vmap((x: any) => x)(1), { instanceOf: jax.ValueError, message: /vmap was requested to map its argument along axis 0, which implies that its rank should be at least 1, but is only 0/ });
  t.throws(() => jax.vmap((x: Array) => x, null)(jnp.array([1, 2])), { instanceOf: jax.ValueError, message: /vmap must have at least one non-null value in inAxes/ });
  t.throws(() => jax.vmap((x: Array) => x, 1)(jnp.array([1, 2])), { instanceOf: jax.ValueError, message: /along axis 1, which implies that its rank should be at least 2, but is only 1/ });
  t.throws(() => jax.vmap((x: Array) => x, 0, [2, 3])(jnp.array([1, 2])), { instanceOf: jax.ValueError, message: /outAxes specification must be a tree prefix of the corresponding value/ });
  t.throws(() => jax.vmap((x: Array) => x, 0, null)(jnp.array([1, 2])), { instanceOf: jax.ValueError, message: /vmap has mapped output but outAxes is null/ });
});

test('vmap inAxes as an array of entries per argument (test_vmap_in_axes_list)', (t) => {
  const f = (dct: { a: number; b: Array }, x: Array, y: Array) => jnp.add(jnp.add(dct.a, dct.b), jnp.add(x, y));
  const out = jax.vmap(f, [null, 0, 0])({ a: 5, b: jnp.ones(2) }, jnp.zeros(3), jnp.arange(3).astype('float32'));
  t.deepEqual(values(out), [6, 6, 7, 7, 8, 8]);
});

test('vmap inAxes of another length than the arguments raises ValueError (test_vmap_in_axes_wrong_length_tuple_error)', (t) => {
  t.throws(() => jax.vmap((x: any) => x.a, [0, { a: 0 }])({ a: jnp.zeros([3, 3]) }), {
    instanceOf: jax.ValueError,
    message: /inAxes must be an int, null, or an array of entries corresponding to the positional arguments passed to the function, but got inAxes\.length = 2, args\.length = 1/,
  });
});

test('vmap inAxes that is not a tree prefix raises ValueError (test_vmap_in_axes_tree_prefix_error)', (t) => {
  t.throws(() => jax.vmap((x: Array) => x, [[0]])(jnp.ones(3)), { instanceOf: jax.ValueError, message: /inAxes specification must be a tree prefix of the corresponding value, got specification \[\[0\]\]/ });
});

test('vmap inAxes and outAxes with an Array leaf, or a boolean, raise TypeError (test_vmap_in_axes_leaf_types, test_vmap_out_axes_leaf_types, test_vmap_in_axes_bool_error)', (t) => {
  t.throws(() => jax.vmap((x: Array) => x, [jnp.array([1, 2])] as never)(jnp.array([1, 2])), { instanceOf: TypeError, message: /inAxes must be an int, null, or/ });
  t.throws(() => jax.vmap((x: Array) => x, 0, [jnp.array([1, 2])] as never)(jnp.array([1, 2])), { instanceOf: TypeError, message: /outAxes must be an int, null, or/ });
  t.throws(() => jax.vmap((x: Array) => x, false as never)(jnp.zeros(3)), { instanceOf: TypeError });
});

test('vmap passes an unmapped function argument through (test_vmap_unbatched_object_passthrough_issue_183)', (t) => {
  const vfun = jax.vmap((f: Fn, x: Array) => f(x), [null, 0]);
  t.deepEqual(values(vfun((x: Array) => jnp.add(x, 1), jnp.arange(3))), [1, 2, 3]);
});

test('vmap with structured inAxes (test_vmap_structured_in_axes)', (t) => {
  const [A, B, C, D, K] = [2, 3, 4, 5, 6];
  const x = jnp.ones([K, A, B]);
  const y = jnp.ones([B, K, C]);
  const z = jnp.ones([C, D, K]);
  const foo = ([a, [b, c]]: [Array, [Array, Array]]) => jnp.dot(a, jnp.dot(b, c));
  t.deepEqual(jax.vmap(foo, [[0, [1, 2]]])([x, [y, z]]).shape, [6, 2, 5]);
  const fooDict = ([a, d]: [Array, { a: Array; b: Array }]) => jnp.dot(a, jnp.dot(d.a, d.b));
  t.deepEqual(jax.vmap(fooDict, [[0, { a: 1, b: 2 }]])([x, { a: y, b: z }]).shape, [6, 2, 5]);
});

test('vmap of a function given no arrays raises ValueError (test_vmap_empty_arguments)', (t) => {
  t.throws(() => jax.vmap((x: unknown) => x)({}), { instanceOf: jax.ValueError, message: /vmap wrapped function must be passed at least one argument containing an array/ });
});

test('vmap with outAxes -1 of an unmapped output broadcasts it last (test_vmap_unmapped_last)', (t) => {
  const f = jax.vmap((_x: Array) => jnp.zeros(2), 0, -1);
  t.deepEqual(f(jnp.zeros(5)).shape, [2, 5]);
});

// ---- APITest: evalShape and ShapeDtypeStruct ----

test('evalShape of functions of arrays, constants, pytrees and ShapeDtypeStruct-like objects (test_eval_shape, test_eval_shape_constants, test_eval_shape_tuple_unpacking, test_eval_shape_tuple_itemgetting, test_eval_shape_output_dict, test_eval_shape_duck_typing)', (t) => {
  const shapeOf = (s: unknown) => [...(s as jax.ShapeDtypeStruct).shape];
  const fun = (x: Array, y: Array) => jnp.tanh(jnp.add(jnp.dot(x, y), 3));
  t.deepEqual(shapeOf(jax.evalShape(fun, jnp.ones([2, 3]), jnp.ones([3, 4]))), [2, 4]);
  t.deepEqual(shapeOf(jax.evalShape(() => fun(jnp.ones([2, 3]), jnp.ones([3, 4])))), [2, 4]);
  const pair = [jnp.ones(2), jnp.ones(2)];
  t.deepEqual(shapeOf(jax.evalShape(([a, b]: Array[], y: number) => jnp.add(jnp.add(a!, b!), y), pair, 3)), [2]);
  t.deepEqual(shapeOf(jax.evalShape((x: Array[], y: number) => jnp.add(jnp.add(x[0]!, x[1]!), y), pair, 3)), [2]);
  const out = jax.evalShape((x: Array[], y: number) => ({ hi: jnp.add(jnp.add(x[0]!, x[1]!), y) }), pair, 3) as any;
  t.deepEqual(jax.tree.map((s: any) => s.shape, out, { isLeaf: (s: any) => s instanceof jax.ShapeDtypeStruct }), { hi: [2] });
  // JAX's MyArgArray: any class instance with a shape and a dtype
  class MyArgArray {
    constructor(readonly shape: number[], readonly dtype: string) {}
  }
  const dot = (A: Array, b: Array, x: Array) => jnp.add(jnp.dot(A, x), b);
  t.deepEqual(shapeOf(jax.evalShape(dot, new MyArgArray([3, 4], 'float32'), new MyArgArray([1, 5], 'float32'), new MyArgArray([4, 5], 'float32'))), [3, 5]);
});

test('ShapeDtypeStruct holds a shape and a dtype (test_shape_dtype_struct, test_shape_dtype_struct_scalar)', (t) => {
  for (const i of [1, 2, 3]) {
    const s = new jax.ShapeDtypeStruct([i, 2, 3], jnp.float32);
    t.deepEqual([...s.shape], [i, 2, 3]);
    t.is(s.dtype, jnp.float32);
    t.is(s.ndim, 3);
    t.is(s.size, i * 6);
    t.is(String(s), `ShapeDtypeStruct(shape=[${i},2,3], dtype=float32)`);
  }
  const scalar = new jax.ShapeDtypeStruct([], 'float32');
  t.deepEqual([...scalar.shape], []);
  t.is(scalar.size, 1);
  t.is(scalar.ndim, 0);
});

test('ShapeDtypeStruct without a dtype, or with a PartitionSpec for a sharding, raises ValueError (test_shape_dtype_struct_dtype_none, test_shapedtypestruct_sharding_error)', (t) => {
  t.throws(() => new jax.ShapeDtypeStruct([], null as never), { instanceOf: jax.ValueError, message: /dtype must be specified/ });
  t.throws(() => new jax.ShapeDtypeStruct([8, 2], 'float32', { sharding: jax.sharding.P('x') as never }), { instanceOf: jax.ValueError, message: /sharding should be an instance of `jax\.sharding\.Sharding`/ });
});

// ---- APITest: devices ----

test('devicePut and deviceGet of arrays and pytrees (test_device_put_and_get, test_device_get_scalar)', (t) => {
  const x = jnp.arange(12).astype('float32').reshape([3, 4]);
  const dx = jax.devicePut(x);
  t.true(dx instanceof jax.Array);
  const x2 = jax.deviceGet(dx);
  t.is(x2.device.platform, 'cpu', 'deviceGet copies to the host');
  t.deepEqual(values(x2), values(x));
  const y = [x, [jnp.multiply(2, x), jnp.multiply(3, x)]];
  const y2 = jax.deviceGet(jax.devicePut(y)) as [Array, [Array, Array]];
  t.true(globalThis.Array.isArray(y2) && globalThis.Array.isArray(y2[1]));
  t.deepEqual(values(y2[1][1]), values(x).map((v) => 3 * v));
  const z = jax.deviceGet([dx, 2]) as [Array, number];
  t.deepEqual(values(z[0]), values(x));
  t.is(z[1], 2);
});

test('blockUntilReady returns the array, and jax.blockUntilReady the pytree (test_devicearray_block_until_ready, test_block_until_ready_function, test_block_until_ready_mixed)', (t) => {
  const x = jax.devicePut(1);
  t.is(x.blockUntilReady(), x);
  const tree = [jax.devicePut(1), jax.devicePut(2), jnp.ones(3), 4] as const;
  const out = jax.blockUntilReady(tree);
  t.is(out, tree);
  near(t, out, [1, 2, [1, 1, 1], 4]);
});

test('the first device\'s platform is the default backend (test_default_backend)', (t) => {
  t.is(jax.devices()[0]!.platform, jax.defaultBackend());
});

// ---- JaxprTest: makeJaxpr ----

test('makeJaxpr of x + 2 has no constvars: the 2 is a literal (test_scalar_literals)', (t) => {
  const closed = jax.makeJaxpr((x: Array) => jnp.add(x, 2))(42);
  t.is(closed.jaxpr.constVars.length, 0);
  t.regex(String(closed), / 2\.0:f32\[\]/);
});

test('makeJaxpr takes ShapeDtypeStructs and other objects with a shape and a dtype (test_abstract_inputs)', (t) => {
  class Abstract {
    constructor(readonly shape: number[], readonly dtype: string) {}
  }
  for (const x of [new jax.ShapeDtypeStruct([], 'float32'), new Abstract([], 'float32')]) {
    const closed = jax.makeJaxpr((v: Array) => jnp.add(v, 2))(x);
    t.deepEqual(closed.inAvals.map((a) => [[...a.shape], a.dtype]), [[[], 'float32']]);
  }
});

test('makeJaxpr of a function returning its argument, a number and a closed-over array (test_const)', (t) => {
  const zeros = jnp.zeros(1);
  const closed = jax.makeJaxpr((x: Array) => [x, 1, zeros])(0);
  t.is(closed.jaxpr.constVars.length, 1);
  t.is(closed.jaxpr.eqns.length, 0);
  t.is(String(closed).replace(/\s+/g, ' '), '{ lambda a:f32[1]; b:f32[]. let in (b, 1:i32[], a) }');
});

test('makeJaxpr and evalShape trace a JS number as jit does, a weak float32 (test_eval_shape_trace_cache_share)', (t) => {
  const f = (x: Array) => jnp.multiply(x, 2);
  const traced = jax.jit(f).trace(3 as never);
  const made = jax.makeJaxpr(f)(3);
  t.deepEqual(made.inAvals, traced.inAvals);
  t.deepEqual(made.inAvals.map((a) => [a.dtype, a.weakType]), [['float32', true]]);
  const shaped = jax.evalShape(f, 3) as jax.ShapeDtypeStruct;
  t.deepEqual([shaped.dtype, shaped.weakType], ['float32', true]);
});
