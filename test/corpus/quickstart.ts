// "Quickstart: How to think in JAX" (docs.jax.dev, notebooks/thinking_in_jax),
// and the older "How to think in JAX" notebook it replaced: JAX vs. NumPy,
// jit, grad, vmap, random keys, debugging. Every number asserted below is the
// output printed in that page.
import * as jax from '../../lib/index.js';
import { expectArray, expectScalar, snippet, type Snippet } from './snippet.js';

const { numpy: jnp, lax, random } = jax;
const SRC = 'Quickstart: How to think in JAX';

function sumLogistic(x: jax.Array): jax.Array {
  return jnp.sum(jnp.divide(1.0, jnp.add(1.0, jnp.exp(jnp.negative(x)))));
}
// Python writes jnp.arange(3.); JS cannot see the `.` of `3.`, so jaxon's arange(3) is int32 (README, "Coming from JAX")
const xSmall = () => jnp.arange(3).astype('float32');

export const snippets: Snippet[] = [
  snippet(`${SRC} › JAX vs. NumPy`, 'JAX arrays are immutable: x[0] = 10 raises, x.at(0).set(10) returns a copy', (t) => {
    const x = jnp.arange(10);
    t.throws(() => {
      (x as unknown as number[])[0] = 10;
    }, { instanceOf: TypeError, message: /immutable.*\.at\(0\)\.set/s });
    const y = x.at(0).set(10);
    expectArray(t, x, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], { dtype: 'int32' });
    expectArray(t, y, [10, 1, 2, 3, 4, 5, 6, 7, 8, 9], { dtype: 'int32' });
  }),

  snippet(`${SRC} › Array creation`, 'jnp.arange(5) is a jax.Array', (t) => {
    const x = jnp.arange(5);
    t.true(x instanceof jax.Array);
  }),

  snippet(`${SRC} › Just-in-time compilation with jax.jit`, 'norm(X) and jit(norm)(X) agree to atol 1e-6', (t) => {
    const norm = (X: jax.Array) => {
      const centered = jnp.subtract(X, X.mean(0));
      return jnp.divide(centered, centered.std(0));
    };
    const normCompiled = jax.jit(norm);
    // the page draws X with np.random.rand(10000, 10); any uniform data shows the same
    const X = random.uniform(random.key(1701), [10000, 10]);
    t.true(jnp.allclose(norm(X), normCompiled(X), { atol: 1e-6 }).item());
  }),

  snippet(`${SRC} › Just-in-time compilation with jax.jit`, 'x[x < 0] works op by op; under jit it is NonConcreteBooleanIndexError', (t) => {
    const getNegatives = (x: jax.Array) => x.index(jnp.less(x, 0));
    // the page's x is np.random.randn(10); these ten values hold the four negatives it printed, in order
    const x = jnp.array([0.3, -0.10570311, 1.2, -0.59403396, -0.8680282, 0.05, 2.1, -0.23489487, 0.7, 1.5]);
    expectArray(t, getNegatives(x), [-0.10570311, -0.59403396, -0.8680282, -0.23489487], { dtype: 'float32' });
    t.throws(() => jax.jit(getNegatives)(x), { message: /NonConcreteBooleanIndexError/ });
  }),

  snippet(`${SRC} › Taking derivatives with jax.grad`, 'grad(sum_logistic)(x_small) is [0.25 0.19661197 0.10499357]', (t) => {
    const derivativeFn = jax.grad(sumLogistic);
    expectArray(t, derivativeFn(xSmall()), [0.25, 0.19661197, 0.10499357], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Taking derivatives with jax.grad`, 'finite differences agree: [0.24998187 0.1964569 0.10502338]', (t) => {
    const firstFiniteDifferences = (f: (x: jax.Array) => jax.Array, x: jax.Array, eps = 1e-3) =>
      jnp.array([...jnp.eye(x.shape[0]!)].map((v) =>
        jnp.divide(jnp.subtract(f(jnp.add(x, jnp.multiply(eps, v))), f(jnp.subtract(x, jnp.multiply(eps, v)))), 2 * eps)));
    // a float32 finite difference with eps=1e-3 moves by ~6e-5 per ulp of the sum, hence the wider tolerance
    expectArray(t, firstFiniteDifferences(sumLogistic, xSmall()), [0.24998187, 0.1964569, 0.10502338], { atol: 2e-4 });
  }),

  snippet(`${SRC} › Taking derivatives with jax.grad`, 'grad(jit(grad(jit(grad(sum_logistic)))))(1.0) is -0.0353256', (t) => {
    const third = jax.grad(jax.jit(jax.grad(jax.jit(jax.grad(sumLogistic)))));
    expectScalar(t, third(1.0), -0.0353256, { rtol: 1e-4 });
  }),

  snippet(`${SRC} › Taking derivatives with jax.grad`, 'jacobian(jnp.exp)(x_small) is diag(1, e, e^2)', (t) => {
    expectArray(t, jax.jacobian(jnp.exp)(xSmall()), [[1, 0, 0], [0, 2.7182817, 0], [0, 0, 7.389056]]);
  }),

  snippet(`${SRC} › Taking derivatives with jax.grad`, 'hessian = jit(jacfwd(jacrev(f))) of sum_logistic at x_small', (t) => {
    const hessian = (fun: (x: jax.Array) => jax.Array) => jax.jit(jax.jacfwd(jax.jacrev(fun)));
    expectArray(t, hessian(sumLogistic)(xSmall()), [[-0, -0, -0], [-0, -0.09085776, -0], [-0, -0, -0.07996249]]);
  }),

  snippet(`${SRC} › Auto-vectorization with jax.vmap`, 'naive loop, manual batching and vmap agree (atol=rtol=1e-4)', (t) => {
    const key = random.key(1701);
    const [key1, key2] = random.split(key);
    const mat = random.normal(key1!, [150, 100]);
    const batchedX = random.normal(key2!, [10, 100]);
    const applyMatrix = (x: jax.Array) => jnp.dot(mat, x);
    const naivelyBatchedApplyMatrix = (vBatched: jax.Array) => jnp.stack([...vBatched].map(applyMatrix));
    const batchedApplyMatrix = jax.jit((bx: jax.Array) => jnp.dot(bx, mat.T));
    const vmapBatchedApplyMatrix = jax.jit((bx: jax.Array) => jax.vmap(applyMatrix)(bx) as jax.Array);
    const reference = naivelyBatchedApplyMatrix(batchedX);
    t.true(jnp.allclose(reference, batchedApplyMatrix(batchedX), { atol: 1e-4, rtol: 1e-4 }).item());
    t.true(jnp.allclose(reference, vmapBatchedApplyMatrix(batchedX), { atol: 1e-4, rtol: 1e-4 }).item());
  }),

  snippet(`${SRC} › Pseudorandom numbers`, 'random.key(43) holds [0 43]; normal(key) is 0.07520543, twice', (t) => {
    const key = random.key(43);
    // JAX prints a typed key<fry> scalar "overlaying [ 0 43]"; jaxon keys are the raw uint32 pair (lib/random)
    t.deepEqual(key.tolistSync(), [0, 43]);
    expectScalar(t, random.normal(key), 0.07520543);
    expectScalar(t, random.normal(key), 0.07520543);
  }),

  snippet(`${SRC} › Pseudorandom numbers`, 'split the key before each draw: -1.9133632, -1.4749839, -0.3670377', (t) => {
    let key = random.key(43);
    const draws: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [newKey, subkey] = random.split(key);
      draws.push(random.normal(subkey!).item() as number);
      key = newKey!;
    }
    expectScalar(t, draws[0], -1.9133632183074951);
    expectScalar(t, draws[1], -1.4749839305877686);
    expectScalar(t, draws[2], -0.36703771352767944);
  }),

  snippet(`${SRC} › Debugging`, 'print inside jit shows tracers, not values; the result is sin(2)', (t) => {
    const printed: string[] = [];
    const f = jax.jit((x: jax.Array) => {
      printed.push(`print(x) -> ${x}`);
      const y = jnp.sin(x);
      printed.push(`print(y) -> ${y}`);
      return y;
    });
    // Python's 2. is a float; JS cannot tell 2.0 from 2, so say float32 (API.md, "JS numbers")
    const result = f(jnp.array(2.0, { dtype: 'float32' }));
    // JAX prints JitTracer(~float32[]); jaxon's tracer prints its abstract value too
    t.is(printed.length, 2);
    t.regex(printed[0]!, /^print\(x\) -> Traced<f32\[\]>/);
    t.regex(printed[1]!, /^print\(y\) -> Traced<f32\[\]>/);
    // jax.debug.print shows 0.9092974066734314 for y
    expectScalar(t, result, 0.9092974066734314);
  }),

  snippet(`${SRC} › jax.debug.print`, 'jax.debug.print("jax.debug.print(x) -> {x}", x=x) under jit prints 2.0 and 0.9092974066734314', (t) => {
    const lines: string[] = [];
    const f = jax.jit((x: jax.Array) => {
      jax.debug.print('jax.debug.print(x) -> {x}', { x });
      const y = jnp.sin(x);
      jax.debug.print('jax.debug.print(y) -> {y}', { y });
      return y;
    });
    const previous = jax.debug.setPrintSink((line) => lines.push(line));
    let result: jax.Array;
    try {
      result = f(jnp.array(2.0, { dtype: 'float32' }));
    } finally {
      jax.debug.setPrintSink(previous);
    }
    // the page's values; y is the float32 sin(2) printed as the Python float it widens to
    expectScalar(t, result, 0.9092974066734314);
    t.deepEqual(lines, ['jax.debug.print(x) -> 2.0', `jax.debug.print(y) -> ${String(result.item())}`]);
  }),

  snippet('How to think in JAX (2023 notebook) › NumPy, lax & XLA', 'jnp.add promotes mixed types: jnp.add(1, 1.0) is 2.0', (t) => {
    // Python's 1.0 is a float; JS cannot tell 1.0 from 1, so say float32 explicitly (README, "Coming from JAX")
    expectScalar(t, jnp.add(1, jnp.array(1.0, { dtype: 'float32' })), 2, { dtype: 'float32' });
  }),

  snippet('How to think in JAX (2023 notebook) › NumPy, lax & XLA', 'lax needs explicit promotion: lax.add(jnp.float32(1), 1.0) is 2.0', (t) => {
    expectScalar(t, lax.add(jnp.array(1, { dtype: 'float32' }), 1.0), 2, { dtype: 'float32' });
    t.throws(() => lax.add(jnp.array(1, { dtype: 'int32' }), jnp.array(1, { dtype: 'float32' })), { message: /lax\.add.*int32.*float32/s });
  }),

  snippet('How to think in JAX (2023 notebook) › NumPy, lax & XLA', 'lax.add(int32, float32) raises TypeError: lax.add requires arguments to have the same dtypes, got int32, float32, with the jnp.add tip', (t) => {
    t.throws(() => lax.add(jnp.array(1, { dtype: 'int32' }), jnp.array(1, { dtype: 'float32' })), {
      instanceOf: TypeError,
      message: 'lax.add requires arguments to have the same dtypes, got int32, float32. (Tip: jnp.add is a similar function that does automatic type promotion on inputs).',
    });
  }),

  snippet('How to think in JAX (2023 notebook) › NumPy, lax & XLA', 'jnp.convolve([1, 2, 1], ones(10)) is [1 3 4 4 4 4 4 4 4 4 3 1] and lax.conv_general_dilated gives the same', (t) => {
    const x = jnp.array([1, 2, 1], { dtype: 'float32' });
    const y = jnp.ones(10);
    expectArray(t, jnp.convolve(x, y), [1, 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 1], { dtype: 'float32' });
    // padding [(len(y) - 1, len(y) - 1)] is NumPy's mode='full'
    const result = lax.convGeneralDilated(x.reshape([1, 1, 3]), y.reshape([1, 1, 10]), [1], [[9, 9]]);
    expectArray(t, result.index(0, 0), [1, 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 1], { dtype: 'float32' });
  }),
];
