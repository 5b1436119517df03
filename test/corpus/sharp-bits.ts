// "🔪 JAX - The Sharp Bits 🔪" (docs/notebooks/Common_Gotchas_in_JAX): pure
// functions, in-place updates, jit with class methods, out-of-bounds indexing,
// non-array inputs, dynamic shapes, 64-bit precision and unsafe casts, with the
// outputs printed in the current page; then the random-number cells of the
// notebook's earlier edition, whose values JAX computed before it changed its
// PRNG default (see the comment there).
import * as jax from '../../lib/index.js';
import { expectArray, expectScalar, failing, snippet, todo, type Snippet } from './snippet.js';

const { numpy: jnp, lax, random } = jax;
const SRC = '🔪 JAX - The Sharp Bits 🔪';

export const snippets: Snippet[] = [
  snippet(`${SRC} › Pure functions`, 'a side effect runs while tracing only: once per new argument type', (t) => {
    const printed: string[] = [];
    const impurePrintSideEffect = (x: jax.Array) => {
      printed.push('Executing function'); // this is a side-effect
      return x;
    };
    expectScalar(t, jax.jit(impurePrintSideEffect)(4.0), 4.0); // First call: 4.0
    expectScalar(t, jax.jit(impurePrintSideEffect)(5.0), 5.0); // Second call: 5.0 (cached: nothing printed)
    t.is(printed.length, 1);
    expectArray(t, jax.jit(impurePrintSideEffect)(jnp.array([5.0])), [5.0]); // Third call, different type: [5.]
    t.is(printed.length, 2);
  }),

  snippet(`${SRC} › Pure functions`, 'a global is captured at trace time: 4.0, 5.0, then [14.] after a retrace', (t) => {
    let g = 0.0;
    const impureUsesGlobals = (x: jax.Array) => jnp.add(x, g);
    expectScalar(t, jax.jit(impureUsesGlobals)(4.0), 4.0);
    g = 10.0; // update the global
    expectScalar(t, jax.jit(impureUsesGlobals)(5.0), 5.0); // the cached trace still adds 0
    expectArray(t, jax.jit(impureUsesGlobals)(jnp.array([4.0])), [14.0]); // a new shape retraces and reads g = 10
  }),

  snippet(`${SRC} › Pure functions`, 'saving an argument to a global leaks a tracer', (t) => {
    let g: unknown = 0.0;
    const impureSavesGlobal = (x: jax.Array) => {
      g = x;
      return x;
    };
    expectScalar(t, jax.jit(impureSavesGlobal)(4.0), 4.0);
    // JAX prints "Saved global: JitTracer(~float32[])": g holds the tracer of the scalar argument
    t.regex(String(g), /^Traced<[a-z0-9]+\[\]>/);
  }),

  snippet(`${SRC} › Pure functions`, 'internal state is fine: pure_uses_internal_state(5.) is 50.0', (t) => {
    const pureUsesInternalState = (x: jax.Array) => {
      const state: Record<'even' | 'odd', jax.Array | number> = { even: 0, odd: 0 };
      for (let i = 0; i < 10; i++) {
        const k = i % 2 === 0 ? 'even' : 'odd';
        state[k] = jnp.add(state[k], x);
      }
      return jnp.add(state.even, state.odd);
    };
    expectScalar(t, jax.jit(pureUsesInternalState)(5.0), 50.0);
  }),

  snippet(`${SRC} › Pure functions`, 'iterators in control flow: fori_loop gives 45 with array[i], 0 with next(iterator)', (t) => {
    const array = jnp.arange(10);
    expectScalar(t, lax.foriLoop(0, 10, (i: jax.Array, x: jax.Array) => jnp.add(x, array.index(i)), 0), 45); // expected result 45
    const iterator = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9][Symbol.iterator]();
    // the body is traced once, so next() runs once: unexpected result 0
    expectScalar(t, lax.foriLoop(0, 10, (_i: jax.Array, x: jax.Array) => jnp.add(x, iterator.next().value as number), 0), 0);
    const arrayOperand = jnp.array([0.0]);
    expectArray(t, lax.cond(true, (x: jax.Array) => jnp.add(x, 1), (x: jax.Array) => jnp.subtract(x, 1), arrayOperand), [1.0]);
  }),

  snippet(`${SRC} › In-place updates`, 'jax_array[1, :] = 1.0 raises: JAX arrays are immutable', (t) => {
    const jaxArray = jnp.zeros([3, 3], { dtype: 'float32' });
    // JS has no x[1, :] syntax; x[1] = v is the assignment JS can express, and it raises JAX's error
    t.throws(() => {
      (jaxArray as unknown as number[])[1] = 1.0;
    }, { instanceOf: TypeError, message: /immutable and do not support in-place item assignment/ });
  }),

  snippet(`${SRC} › In-place updates`, '`jax_array_new += 10` rebinds: the new array is [20 30], the original stays [10 20]', (t) => {
    const jaxArray = jnp.array([10, 20], { dtype: 'int32' });
    let jaxArrayNew = jaxArray;
    // JS cannot overload +=: on a non-scalar Array it raises a TypeError naming jnp.add (README, "Coming from JAX")
    t.throws(() => (jaxArrayNew as unknown as number) + 10, { instanceOf: TypeError, message: /jnp\.add/ });
    jaxArrayNew = jnp.add(jaxArrayNew, 10);
    expectArray(t, jaxArrayNew, [20, 30], { dtype: 'int32' });
    expectArray(t, jaxArray, [10, 20], { dtype: 'int32' });
  }),

  snippet(`${SRC} › Array updates: x.at[idx].set(y)`, 'jax_array.at[1, :].set(1.0) returns the update; the original is unchanged', (t) => {
    const jaxArray = jnp.zeros([3, 3], { dtype: 'float32' });
    const updatedArray = jaxArray.at(1, null).set(1.0);
    expectArray(t, updatedArray, [[0, 0, 0], [1, 1, 1], [0, 0, 0]], { dtype: 'float32' });
    expectArray(t, jaxArray, [[0, 0, 0], [0, 0, 0], [0, 0, 0]], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Array updates with other operations`, 'jnp.ones((5, 6)).at[::2, 3:].add(7.)', (t) => {
    const jaxArray = jnp.ones([5, 6]);
    const newJaxArray = jaxArray.at([null, null, 2], [3, null]).add(7.0);
    expectArray(t, newJaxArray, [
      [1, 1, 1, 8, 8, 8],
      [1, 1, 1, 1, 1, 1],
      [1, 1, 1, 8, 8, 8],
      [1, 1, 1, 1, 1, 1],
      [1, 1, 1, 8, 8, 8],
    ], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Using jax.jit with class methods › Strategy 1: JIT-compiled helper function`, 'c.calc(3) is 6', (t) => {
    const calcHelper = jax.jit((mul: boolean, x: jax.Array, y: jax.Array) => (mul ? jnp.multiply(x, y) : y), { staticArgnums: [0] });
    class CustomClass {
      constructor(public x: number | jax.Array, public mul: boolean) {}
      calc(y: number) {
        return calcHelper(this.mul, this.x as jax.Array, y as unknown as jax.Array);
      }
    }
    const c = new CustomClass(2, true);
    expectScalar(t, c.calc(3), 6);
  }),

  snippet(`${SRC} › Using jax.jit with class methods › Strategy 2: Marking self as static`, 'c.calc(3) is 6; after c.mul = False it "should print 3"', (t) => {
    class CustomClass {
      constructor(public x: number, public mul: boolean) {}
      static calc = jax.jit((self: CustomClass, y: jax.Array) => (self.mul ? jnp.multiply(self.x, y) : y), { staticArgnums: [0] });
      calc(y: number) {
        return CustomClass.calc(this, y as unknown as jax.Array);
      }
    }
    const c = new CustomClass(2, true);
    expectScalar(t, c.calc(3), 6);
    c.mul = false;
    // JAX prints 6 here: its cache hashes `self` by identity, so the mutation goes unseen (the page's warning);
    // jaxon keys a static class instance by its identity and its fields, so the mutated object retraces and gives
    // the 3 the page says it should print
    expectScalar(t, c.calc(3), 3);
  }),

  snippet(`${SRC} › Using jax.jit with class methods › Strategy 3: Making CustomClass a PyTree`, '6, then 3 after mutation, then 6 with x = jnp.array(2)', (t) => {
    class CustomClass {
      constructor(public x: number | jax.Array, public mul: boolean) {}
      static calcJitted = jax.jit((self: CustomClass, y: jax.Array) => (self.mul ? jnp.multiply(self.x, y) : y));
      calc(y: number) {
        return CustomClass.calcJitted(this, y as unknown as jax.Array);
      }
      treeFlatten(): [unknown[], unknown] {
        return [[this.x], { mul: this.mul }]; // children: arrays / dynamic values; aux data: static values
      }
      static treeUnflatten(auxData: { mul: boolean }, children: unknown[]) {
        return new CustomClass(children[0] as jax.Array, auxData.mul);
      }
    }
    jax.tree.registerPytreeNode(CustomClass, (c: CustomClass) => c.treeFlatten(), CustomClass.treeUnflatten);
    const c = new CustomClass(2, true);
    expectScalar(t, c.calc(3), 6);
    c.mul = false; // mutation is detected
    expectScalar(t, c.calc(3), 3);
    const c2 = new CustomClass(jnp.array(2), true); // non-hashable x is supported
    expectScalar(t, c2.calc(3), 6);
  }),

  snippet(`${SRC} › Out-of-bounds indexing`, 'jnp.arange(10)[11] is 9: reads clamp to the bounds', (t) => {
    expectScalar(t, jnp.arange(10).index(11), 9, { dtype: 'int32' });
    expectScalar(t, (jnp.arange(10) as unknown as jax.Array[])[11], 9, { dtype: 'int32' }); // x[i] reads x.index(i) in jaxon
  }),

  snippet(`${SRC} › Out-of-bounds indexing`, 'jnp.arange(10.0).at[11].get() is 9.0; with mode="fill" it is nan', (t) => {
    const x = jnp.arange(10).astype('float32'); // jnp.arange(10.0): JS cannot see the `.`
    expectScalar(t, x.at(11).get(), 9.0, { dtype: 'float32' });
    expectScalar(t, x.at(11).get({ mode: 'fill', fillValue: NaN }), NaN, { dtype: 'float32' });
    // the lax.gather docstring: the default fill_value is NaN for inexact types, the most negative value for signed ints
    expectScalar(t, x.at(11).get({ mode: 'fill' }), NaN, { dtype: 'float32' });
    expectScalar(t, jnp.arange(10).at(11).get({ mode: 'fill' }), -2147483648, { dtype: 'int32' });
  }),

  // DIVERGENCE: JAX raises "TypeError: sum requires ndarray or scalar arguments, got <class 'list'> at position
  // 0" so that lists are never silently converted element by element; jaxon's jnp.sum takes a JS array and returns 6.
  failing(`${SRC} › Non-array inputs: NumPy vs. JAX`, 'jnp.sum([1, 2, 3]) raises TypeError', (t) => {
    t.throws(() => jnp.sum([1, 2, 3]), { instanceOf: TypeError, message: /sum requires ndarray or scalar arguments/ });
  }),

  snippet(`${SRC} › Non-array inputs: NumPy vs. JAX`, 'convert explicitly: jnp.sum(jnp.array(x)) is 45', (t) => {
    const x = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]; // list(range(10))
    const permissiveSum = (v: number[]) => jnp.sum(jnp.array(v, { dtype: 'int32' })); // JS numbers make float32 unless a dtype says otherwise
    expectScalar(t, permissiveSum(x), 45, { dtype: 'int32' });
    // each list entry is a separate input of the traced function: 10 scalar inputs, then a concatenate. JAX's Python
    // ints are i32[] inputs; JS numbers are traced as jit traces them, weak f32[] (API.md), and converted after
    const jaxpr = String(jax.makeJaxpr(permissiveSum)(x));
    t.is((jaxpr.split('let')[0]!.match(/:[a-z0-9]+\[\]/g) ?? []).length, 10);
    t.regex(jaxpr, /f32\[10\] = concatenate\[dimension=0\]/);
    t.regex(jaxpr, /i32\[10\] = convert_element_type\[new_dtype=int32/);
    t.regex(jaxpr, /i32\[\] = reduce_sum\[axes=\(0,\)\]/);
  }),

  snippet(`${SRC} › Dynamic shapes`, 'nansum with a boolean mask is 10.0 eagerly, an error under jit; the jnp.where form jits', (t) => {
    const nansum = (x: jax.Array) => {
      const mask = jnp.logicalNot(jnp.isnan(x)); // boolean mask selecting non-nan values
      return x.index(mask).sum();
    };
    const x = jnp.array([1, 2, NaN, 3, 4]);
    expectScalar(t, nansum(x), 10.0);
    // JAX: NonConcreteBooleanIndexError: Array boolean indices must be concrete; got bool[5]
    t.throws(() => jax.jit(nansum)(x), { message: /NonConcreteBooleanIndexError/ });
    const nansum2 = jax.jit((v: jax.Array) => jnp.where(jnp.logicalNot(jnp.isnan(v)), v, 0).sum());
    expectScalar(t, nansum2(x), 10.0);
  }),

  // with 64-bit mode off (JAX's and jaxon's default, API.md), an explicitly requested float64 is truncated to
  // float32 (with JAX's UserWarning)
  snippet(`${SRC} › Double (64bit) precision`, 'random.uniform(key, (1000,), dtype=jnp.float64).dtype is float32 while x64 is off', (t) => {
    t.false(jax.config.jaxEnableX64);
    const x = random.uniform(random.key(0), [1000], { dtype: 'float64' });
    t.is(x.dtype, 'float32');
  }),

  snippet(`${SRC} › Double (64bit) precision`, 'jax.config.update("jax_enable_x64", True) then random.uniform(..., dtype=float64).dtype is float64', (t) => {
    const before = jax.config.jaxEnableX64;
    t.is(random.uniform(random.key(0), [1000], { dtype: 'float64' }).dtype, 'float32');
    jax.config.update('jax_enable_x64', true);
    try {
      t.true(jax.config.jaxEnableX64);
      const x = random.uniform(random.key(0), [1000], { dtype: jnp.float64 });
      t.is(x.dtype, 'float64');
      t.is(x.shape[0], 1000);
      const values = x.dataSync();
      // 64-bit samples: in [0, 1), and not all of them float32 values
      t.true(values.every((v) => v >= 0 && v < 1));
      t.true(values.some((v) => Math.fround(v) !== v));
    } finally {
      jax.config.update('jax_enable_x64', before);
    }
    t.is(jax.config.jaxEnableX64, before);
    t.is(random.uniform(random.key(0), [1000], { dtype: 'float64' }).dtype, 'float32');
  }, { serial: true }),

  snippet(`${SRC} › Miscellaneous divergences from NumPy`, 'unsafe cast: jnp.arange(254.0, 258.0).astype("uint8") is [254 255 255 255]', (t) => {
    const x = jnp.arange(254, 258, 1, { dtype: 'float32' });
    expectArray(t, x.astype('uint8'), [254, 255, 255, 255], { dtype: 'uint8' });
  }),

  // The notebook's earlier edition (jax-ml/jax docs/notebooks/Common_Gotchas_in_JAX.ipynb before 2024) printed
  // these with JAX's old default jax_threefry_partitionable=False; JAX 0.5.0 made True the default, which is the
  // only mode jaxon implements (lib/random). jaxon gives key [1797259609 2579123966], subkey
  // [928981903 3453687069] and normal [-2.4424558] here; normal(PRNGKey(0), (1,)) is [1.6226422].
  failing(`${SRC} (2020 edition) › JAX PRNG`, 'PRNGKey(0) is [0 0]; normal(key, (1,)) is [-0.20584226], then split', (t) => {
    const key = random.PRNGKey(0);
    t.deepEqual(key.tolistSync(), [0, 0]);
    expectArray(t, random.normal(key, [1]), [-0.20584226]);
    const [newKey, subkey] = random.split(key);
    t.deepEqual(newKey!.tolistSync(), [4146024105, 967050713]);
    t.deepEqual(subkey!.tolistSync(), [2718843009, 1272950319]);
    expectArray(t, random.normal(subkey!, [1]), [-1.2515389]);
  }),

  todo(`${SRC} (2020 edition) › JAX PRNG`, 'the pre-0.5 stream (jax.config.update("jax_threefry_partitionable", False)) that the earlier docs printed: jaxon implements only the partitionable default'),
];
