// JAX 101: "Just-in-time compilation" (docs/jit-compilation.md), "Control flow
// and logical operators with JIT" (docs/control-flow.md), "Tracing"
// (docs/tracing.md), "Stateful computations" (docs/stateful-computations.md)
// and "Key concepts" (docs/key-concepts.md), with the outputs the current pages
// print. JS cannot trace `if x > 0` or `x < 3 and ...` under any transformation:
// where the page relies on that (or on a JS boolean being traced), the snippet
// asserts jaxon's documented behaviour instead and says so (README, "Coming
// from JAX").
import * as jax from '../../lib/index.js';
import { expectArray, expectScalar, snippet, type Snippet } from './snippet.js';

const { numpy: jnp, lax } = jax;
const JIT = 'Just-in-time compilation';
const CF = 'Control flow and logical operators with JIT';
const TRACING = 'Tracing';
const KEY = 'Key concepts';
const STATE = 'Stateful computations';
const TRACER_BOOL = { name: 'TracerBoolConversionError' };

const selu = (x: jax.Array, alpha = 1.67, lambda = 1.05) =>
  jnp.multiply(lambda, jnp.where(jnp.greater(x, 0), x, jnp.subtract(jnp.multiply(alpha, jnp.exp(x)), alpha)));

export const snippets: Snippet[] = [
  snippet(`${JIT} › How JAX transformations work`, 'make_jaxpr(log2)(3.0) is log, log 2.0, div; the side effect is not in it', (t) => {
    const globalList: unknown[] = [];
    const log2 = (x: jax.Array) => {
      globalList.push(x);
      const lnX = jnp.log(x);
      const ln2 = jnp.log(2.0);
      return jnp.divide(lnX, ln2);
    };
    // Python's 3.0 is a float; JS cannot tell 3.0 from 3, so say float32 (API.md, "JS numbers")
    const jaxpr = String(jax.makeJaxpr(log2)(jnp.array(3.0, { dtype: 'float32' })));
    // JAX: { lambda ; a:f32[]. let b:f32[] = log a; c:f32[] = log 2.0:f32[]; d:f32[] = div b c in (d,) }
    t.regex(jaxpr, /lambda ; a:f32\[\]\. let/);
    t.is((jaxpr.match(/= log /g) ?? []).length, 2);
    t.regex(jaxpr, /= div /);
    t.regex(jaxpr, /in \([a-z]+,?\) \}/);
    t.is(globalList.length, 1); // the append ran once, while tracing
  }),

  snippet(`${JIT} › How JAX transformations work`, 'print inside a traced function shows a tracer', (t) => {
    const printed: string[] = [];
    const log2WithPrint = (x: jax.Array) => {
      printed.push(`printed x: ${x}`);
      return jnp.divide(jnp.log(x), jnp.log(2.0));
    };
    jax.makeJaxpr(log2WithPrint)(jnp.array(3.0, { dtype: 'float32' })); // Python's 3. is a float
    t.is(printed.length, 1);
    t.regex(printed[0]!, /^printed x: Traced<f32\[\]>/); // JAX: printed x: JitTracer(~float32[])
  }),

  snippet(`${JIT} › How JAX transformations work`, 'the jaxpr follows the branch taken: log2_if_rank_2 of a vector is { lambda ; a:i32[3]. let in (a,) }', (t) => {
    const log2IfRank2 = (x: jax.Array) => (x.ndim === 2 ? jnp.divide(jnp.log(x), jnp.log(2.0)) : x);
    const jaxpr = String(jax.makeJaxpr(log2IfRank2)(jnp.array([1, 2, 3], { dtype: 'int32' })));
    t.regex(jaxpr, /lambda ; a:i32\[3\]\. let\s+in \(a,?\) \}/);
  }),

  snippet(`${KEY} › Transformations`, 'jit(selu)(1.0) is 1.05', (t) => {
    expectScalar(t, jax.jit((x: jax.Array) => selu(x))(1.0), 1.05);
  }),

  snippet(`${JIT} › Why can't we just JIT everything?`, 'jit(f)(10) with `if x > 0` raises TracerBoolConversionError', (t) => {
    const f = (x: jax.Array) => ((x as unknown as number) > 0 ? x : jnp.multiply(2, x));
    t.throws(() => jax.jit(f)(10), TRACER_BOOL);
  }),

  snippet(`${JIT} › Why can't we just JIT everything?`, 'jit(g)(10, 20) with `while i < n` raises TracerBoolConversionError', (t) => {
    const g = (x: jax.Array, n: jax.Array) => {
      let i = 0;
      while (i < (n as unknown as number)) i += 1;
      return jnp.add(x, i);
    };
    t.throws(() => jax.jit(g)(10, 20), TRACER_BOOL);
  }),

  snippet(`${JIT} › Why can't we just JIT everything?`, 'jit only the loop body: g_inner_jitted(10, 20) is 30', (t) => {
    const loopBody = jax.jit((prevI: jax.Array) => jnp.add(prevI, 1));
    const gInnerJitted = (x: number, n: number) => {
      let i: jax.Array | number = 0;
      while ((i as number) < n) i = loopBody(i as jax.Array); // i is concrete here: a 0-d Array compares as its number
      return jnp.add(x, i);
    };
    expectScalar(t, gInnerJitted(10, 20), 30);
  }),

  snippet(`${JIT} › Marking arguments as static`, 'jit(f, static_argnums=0)(10) is 10; jit(g, static_argnames=["n"])(10, 20) is 30', (t) => {
    const f = (x: number) => (x > 0 ? x : 2 * x);
    const g = (x: jax.Array, n: number) => {
      let i = 0;
      while (i < n) i += 1;
      return jnp.add(x, i);
    };
    expectScalar(t, jax.jit(f, { staticArgnums: 0 })(10) as unknown as jax.Array, 10);
    expectScalar(t, jax.jit(g, { staticArgnames: ['n'] })(10, 20), 30);
    const gJitDecorated = jax.jit((x: jax.Array, n: number) => {
      let i = 0;
      while (i < n) i += 1;
      return jnp.add(x, i);
    }, { staticArgnames: ['n'] });
    expectScalar(t, gJitDecorated(10, 20), 30);
  }),

  snippet(`${JIT} › JIT and caching`, 'jit of the same function inside a loop reuses its cached trace', (t) => {
    let traces = 0;
    const unjittedLoopBody = (prevI: jax.Array) => {
      traces += 1;
      return jnp.add(prevI, 1);
    };
    const gInnerJittedNormal = (x: number, n: number) => {
      let i: jax.Array | number = 0;
      while ((i as number) < n) i = jax.jit(unjittedLoopBody)(i as jax.Array); // OK: jit finds the cached trace
      return jnp.add(x, i);
    };
    expectScalar(t, gInnerJittedNormal(10, 20), 30);
    t.true(traces <= 2, `traced ${traces} times`); // once per argument type (the first i is a JS number), not 20 times
  }),

  snippet(`${CF} › Python control flow + JIT`, 'a static Python loop unrolls: f(3) is 24', (t) => {
    const f = jax.jit((x: jax.Array) => {
      for (let i = 0; i < 3; i++) x = jnp.multiply(2, x);
      return x;
    });
    expectScalar(t, f(3), 24);
  }),

  snippet(`${CF} › Python control flow + JIT`, 'a loop over x.shape[0]: g([1., 2., 3.]) is 6.0', (t) => {
    const g = jax.jit((x: jax.Array) => {
      let y: jax.Array | number = 0.0;
      for (let i = 0; i < x.shape[0]!; i++) y = jnp.add(y, x.index(i));
      return y as jax.Array;
    });
    expectScalar(t, g(jnp.array([1.0, 2.0, 3.0])), 6.0, { dtype: 'float32' });
  }),

  snippet(`${CF} › Python control flow + JIT`, '`if x < 3` and `(x > 0) and (x < 3)` under jit raise TracerBoolConversionError', (t) => {
    const f = jax.jit((x: jax.Array) =>
      (x as unknown as number) < 3 ? jnp.multiply(3.0, jnp.square(x)) : jnp.multiply(-4, x));
    t.throws(() => f(2), TRACER_BOOL);
    const g = jax.jit((x: jax.Array) => (x as unknown as number) > 0 && (x as unknown as number) < 3);
    t.throws(() => g(2), TRACER_BOOL);
  }),

  snippet(`${CF} › Python control flow + JIT`, "jit(f, static_argnames='x')(2.) is 12.0", (t) => {
    const f = jax.jit((x: number) => (x < 3 ? 3.0 * x ** 2 : -4 * x), { staticArgnames: ['x'] });
    expectScalar(t, f(2.0) as unknown as jax.Array, 12.0);
  }),

  snippet(`${CF} › Python control flow + JIT`, "a loop over a static n: jit(f, static_argnames='n')([2., 3., 4.], 2) is 5.0", (t) => {
    const f = jax.jit((x: jax.Array, n: number) => {
      let y: jax.Array | number = 0.0;
      for (let i = 0; i < n; i++) y = jnp.add(y, x.index(i));
      return y as jax.Array;
    }, { staticArgnames: ['n'] });
    expectScalar(t, f(jnp.array([2.0, 3.0, 4.0]), 2), 5.0, { dtype: 'float32' });
  }),

  snippet(`${CF} › Python control flow + JIT`, 'value-dependent shapes: jnp.ones((length,)) needs length static', (t) => {
    const exampleFun = (length: number, val: number) => jnp.multiply(jnp.ones([length]), val);
    expectArray(t, exampleFun(5, 4), [4, 4, 4, 4, 4]); // un-jit'd works fine
    // JAX: TypeError: Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),)
    t.throws(() => jax.jit(exampleFun)(10, 4), { message: /shape/i });
    const goodExampleJit = jax.jit(exampleFun, { staticArgnames: ['length'] });
    expectArray(t, goodExampleJit(10, 4), [4, 4, 4, 4, 4, 4, 4, 4, 4, 4]);
    expectArray(t, goodExampleJit(5, 4), [4, 4, 4, 4, 4]); // recompiles
  }),

  snippet(`${CF} › Python control flow + JIT`, 'print inside jit prints tracers; f(2) returns 4', (t) => {
    const printed: string[] = [];
    const f = jax.jit((x: jax.Array) => {
      printed.push(String(x));
      const y = jnp.multiply(2, x);
      printed.push(String(y));
      return y;
    });
    // JAX prints JitTracer(~int32[]) twice and returns Array(4, dtype=int32, weak_type=True); JS cannot tell 2 from
    // 2.0, so a bare JS number passed to jit is a weak float32 in jaxon (API.md, "JS numbers")
    expectScalar(t, f(2), 4, { dtype: 'float32' });
    t.is(printed.length, 2);
    for (const p of printed) t.regex(p, /^Traced<f32\[\]>/);
  }),

  snippet(`${CF} › Structured control flow primitives › cond`, 'lax.cond(True, ...) is [1.]; lax.cond(False, ...) is [-1.]', (t) => {
    const operand = jnp.array([0.0]);
    expectArray(t, lax.cond(true, (x: jax.Array) => jnp.add(x, 1), (x: jax.Array) => jnp.subtract(x, 1), operand), [1.0], { dtype: 'float32' });
    expectArray(t, lax.cond(false, (x: jax.Array) => jnp.add(x, 1), (x: jax.Array) => jnp.subtract(x, 1), operand), [-1.0], { dtype: 'float32' });
  }),

  snippet(`${CF} › Structured control flow primitives › while_loop`, 'lax.while_loop(x < 10, x + 1, 0) is 10', (t) => {
    const condFun = (x: jax.Array) => jnp.less(x, 10);
    const bodyFun = (x: jax.Array) => jnp.add(x, 1);
    expectScalar(t, lax.whileLoop(condFun, bodyFun, 0), 10);
  }),

  snippet(`${CF} › Structured control flow primitives › fori_loop`, 'lax.fori_loop(0, 10, x + i, 0) is 45', (t) => {
    const bodyFun = (i: jax.Array, x: jax.Array) => jnp.add(x, i);
    expectScalar(t, lax.foriLoop(0, 10, bodyFun, 0), 45);
  }),

  snippet(`${CF} › Logical operators`, 'positive even check: True for 24 with `and` and with jnp.logical_and under jit', (t) => {
    const pythonCheckPositiveEven = (x: number) => x % 2 === 0 && x > 0; // `&&` short-circuits, like Python's `and`
    const jaxCheckPositiveEven = jax.jit((x: jax.Array) => jnp.logicalAnd(jnp.equal(jnp.mod(x, 2), 0), jnp.greater(x, 0)));
    t.true(pythonCheckPositiveEven(24));
    t.true(jaxCheckPositiveEven(24).item() as boolean);
  }),

  snippet(`${CF} › Logical operators`, 'jnp.logical_and is elementwise: [-1 2 5] gives [False True False]', (t) => {
    const jaxCheckPositiveEven = jax.jit((x: jax.Array) => jnp.logicalAnd(jnp.equal(jnp.mod(x, 2), 0), jnp.greater(x, 0)));
    const x = jnp.array([-1, 2, 5], { dtype: 'int32' });
    t.deepEqual(jaxCheckPositiveEven(x).tolistSync(), [false, true, false]);
  }),

  snippet(`${CF} › Logical operators`, 'JS operators on a multi-element array raise (JAX: "The truth value of an array with more than one element is ambiguous")', (t) => {
    const x = jnp.array([-1, 2, 5], { dtype: 'int32' });
    const pythonCheckPositiveEven = (v: number) => v % 2 === 0 && v > 0;
    // JAX raises a ValueError from bool(array); JS first converts x for `%`, and jaxon refuses that with a TypeError
    t.throws(() => pythonCheckPositiveEven(x as unknown as number), { instanceOf: TypeError, message: /int32\[3\] cannot be converted to a JS number/ });
  }),

  snippet(`${CF} › Python control flow + autodiff`, 'grad of `if x < 3`: JAX gives 12.0 and -4.0; jaxon raises, and lax.cond gives 12.0 and -4.0', (t) => {
    const f = (x: jax.Array) => ((x as unknown as number) < 3 ? jnp.multiply(3.0, jnp.square(x)) : jnp.multiply(-4, x));
    // a JS comparison cannot be traced, so jaxon raises under grad too (README, "Coming from JAX")
    t.throws(() => jax.grad(f)(2.0), TRACER_BOOL);
    const fCond = (x: jax.Array) => lax.cond(jnp.less(x, 3), (v: jax.Array) => jnp.multiply(3.0, jnp.square(v)), (v: jax.Array) => jnp.multiply(-4, v), x) as jax.Array;
    expectScalar(t, jax.grad(fCond)(2.0), 12.0);
    expectScalar(t, jax.grad(fCond)(4.0), -4.0);
  }),

  snippet(`${TRACING} › Tracing`, 'make_jaxpr(f)(x, y) of jnp.dot(x + 1, y + 1) is add, add, dot_general', (t) => {
    const f = (x: jax.Array, y: jax.Array) => jnp.dot(jnp.add(x, 1), jnp.add(y, 1));
    const jaxpr = String(jax.makeJaxpr(f)(jnp.zeros([3, 4]), jnp.zeros([4])));
    t.regex(jaxpr, /lambda ; a:f32\[3,4\] b:f32\[4\]\. let/);
    t.regex(jaxpr, /c:f32\[3,4\] = add a 1\.0:f32\[\]/);
    t.regex(jaxpr, /d:f32\[4\] = add b 1\.0:f32\[\]/);
    t.regex(jaxpr, /e:f32\[3\] = dot_general/);
  }),

  snippet(`${TRACING} › Tracing`, 'jit(f)(1, True) with `-x if neg else x`: JAX raises; a JS boolean is static in jaxon, giving -1', (t) => {
    const f = jax.jit((x: jax.Array, neg: boolean) => (neg ? jnp.negative(x) : x));
    // JAX traces Python bools and raises TracerBoolConversionError here; jaxon keeps JS booleans static (README),
    // which is what JAX's static_argnums=(1,) gives: Array(-1, dtype=int32, weak_type=True), then 1 for False
    expectScalar(t, f(1, true), -1);
    expectScalar(t, f(1, false), 1);
    const fStatic = jax.jit((x: jax.Array, neg: boolean) => (neg ? jnp.negative(x) : x), { staticArgnums: [1] });
    expectScalar(t, fStatic(1, true), -1);
    expectScalar(t, fStatic(1, false), 1);
  }),

  snippet(`${TRACING} › Static vs traced operations`, 'x.reshape(jnp.array(x.shape).prod()) fails under jit; the static product gives six ones', (t) => {
    const x = jnp.ones([2, 3]);
    // JAX: TypeError: Shapes must be 1D sequences of concrete values of integer type, got [JitTracer(int32[])]
    t.throws(() => jax.jit((v: jax.Array) => v.reshape(jnp.prod(jnp.array([...v.shape], { dtype: 'int32' })) as unknown as number))(x), { instanceOf: TypeError });
    const f = jax.jit((v: jax.Array) => v.reshape([v.shape.reduce((a, b) => a * b, 1)])); // np.prod(x.shape): static
    expectArray(t, f(x), [1, 1, 1, 1, 1, 1], { dtype: 'float32' });
  }),

  snippet(`${TRACING} › Different kinds of JAX values`, 'divide(x, y) = x / y if y >= 1. else 0.: jax.grad(divide)(3., 2.) works; jit needs static_argnums=1', (t) => {
    const divide = (x: jax.Array | number, y: jax.Array | number) => ((y as number) >= 1.0 ? jnp.divide(x, y) : 0.0);
    // grad differentiates x only, so y stays a plain value and the comparison resolves: d(x / y)/dx = 0.5
    expectScalar(t, jax.grad(divide)(3.0, 2.0) as jax.Array, 0.5);
    t.throws(() => jax.jit(divide)(3.0, 2.0), TRACER_BOOL);
    expectScalar(t, jax.jit(divide, { staticArgnums: [1] })(3.0, 2.0) as jax.Array, 1.5);
  }),

  snippet(`${STATE} › A simple example: Counter`, 'a jitted stateful counter prints 1 1 1', (t) => {
    class Counter {
      n = 0;
      count = () => {
        this.n += 1; // a side effect: it runs while tracing, once
        return this.n;
      };
      reset() {
        this.n = 0;
      }
    }
    const counter = new Counter();
    t.deepEqual([counter.count(), counter.count(), counter.count()], [1, 2, 3]);
    counter.reset();
    const fastCount = jax.jit(counter.count as unknown as () => jax.Array);
    const values = [0, 1, 2].map(() => Number(fastCount().item()));
    t.deepEqual(values, [1, 1, 1]);
  }),

  snippet(`${STATE} › The solution: explicit state`, 'state as an argument: the jitted counter prints 1 2 3', (t) => {
    const count = (n: jax.Array): [jax.Array, jax.Array] => [jnp.add(n, 1), jnp.add(n, 1)];
    const fastCount = jax.jit(count);
    let state: jax.Array | number = 0;
    const values: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [value, next]: jax.Array[] = fastCount(state as jax.Array);
      values.push(Number(value.item()));
      state = next;
    }
    t.deepEqual(values, [1, 2, 3]);
  }),

  snippet(`${KEY} › Tracing`, 'print(x) inside jit of jnp.arange(5) shows a tracer of int32[5]', (t) => {
    let printed = '';
    const f = jax.jit((x: jax.Array) => {
      printed = String(x);
      return jnp.add(x, 1);
    });
    expectArray(t, f(jnp.arange(5)), [1, 2, 3, 4, 5], { dtype: 'int32' });
    t.regex(printed, /^Traced<i32\[5\]>/); // JAX: JitTracer(int32[5])
  }),

  snippet(`${KEY} › Jaxprs`, 'make_jaxpr(selu)(jnp.arange(5.0)): gt, exp, mul, sub, select_n, mul', (t) => {
    const jaxpr = String(jax.makeJaxpr((x: jax.Array) => selu(x))(jnp.arange(5).astype('float32')));
    const lines = jaxpr.split('\n').map((l) => l.trim());
    // JAX prints these equations (its select_n sits inside a jit named _where)
    t.is(lines[0], '{ lambda ; a:f32[5]. let');
    t.true(lines.includes('b:bool[5] = gt a 0.0:f32[]'), jaxpr);
    t.true(lines.includes('c:f32[5] = exp a'), jaxpr);
    t.true(lines.includes('d:f32[5] = mul 1.6699999570846558:f32[] c'), jaxpr);
    t.true(lines.includes('e:f32[5] = sub d 1.6699999570846558:f32[]'), jaxpr);
    t.true(lines.includes('f:f32[5] = select_n b e a'), jaxpr);
    t.true(lines.includes('g:f32[5] = mul 1.0499999523162842:f32[] f'), jaxpr);
  }),
];
