// Issue 13: no silent wrong answers from JS. JS cannot overload operators, so
// a traced Array meeting `>`, `*`, `? :` or `while` must raise JAX's
// TracerBoolConversionError rather than compare an object; concrete scalars
// convert to their numbers; x[i] = v raises JAX's immutability error; arrays
// made from JS numbers are float32. Plus the transforms JAX users reach for
// first: positional argnums/inAxes, jacfwd/jacrev/hessian, shared jit caches.
import test from 'ava';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
const lax = jax.lax;
const values = (x: unknown) => Array.from((x as jax.Array).dataSync());
const TRACER_BOOL = { name: 'TracerBoolConversionError', message: /Attempted conversion of a traced array .* JS operators cannot be traced: use .*jnp\.where or lax\.cond/s };

test('JS comparisons and branches on traced values raise TracerBoolConversionError under jit, grad, vjp and vmap', (t) => {
  const branch = (x: jax.Array) => ((x as unknown as number) > 0 ? x : jnp.multiply(2, x));
  t.throws(() => jax.jit(branch)(10), TRACER_BOOL);
  // JAX returns 12 here; a JS comparison cannot be traced, so jaxon raises instead of returning -4
  const f = (x: jax.Array) => ((x as unknown as number) < 3 ? jnp.multiply(3, jnp.multiply(x, x)) : jnp.negative(x));
  t.throws(() => jax.grad(f)(2), TRACER_BOOL);
  t.throws(() => jax.vjp(f, 2), TRACER_BOOL);
  t.throws(() => jax.vmap(branch)(jnp.array([1, -1])), TRACER_BOOL);
  t.throws(() => jax.jit((x: jax.Array) => ((x as unknown as number) > 0 && (x as unknown as number) < 3 ? 1 : 0))(-1), TRACER_BOOL);
  t.throws(() => jax.jit((x: jax.Array, y: jax.Array) => {
    let v = x;
    while ((v as unknown as number) < (y as unknown as number)) v = jnp.add(v, 1);
    return v;
  })(1, 10), TRACER_BOOL);
  t.throws(() => lax.whileLoop((x: jax.Array) => (x as unknown as number) < 10 as unknown as jax.Array, (x: jax.Array) => jnp.add(x, 1), 0), TRACER_BOOL);
  // the error is also a ConcretizationTypeError, as in JAX
  const error = t.throws(() => jax.jit(branch)(1));
  t.true(error instanceof jax.ConcretizationTypeError && error instanceof jax.TracerBoolConversionError);
  // what works instead
  t.deepEqual(values(jax.jit((x: jax.Array) => jnp.where(jnp.greater(x, 0), x, jnp.multiply(2, x)))(jnp.array([3, -3]))), [3, -6]);
  t.deepEqual(values(jax.grad((x: jax.Array) => lax.cond(jnp.less(x, 3), (v: jax.Array) => jnp.multiply(3, jnp.multiply(v, v)), (v: jax.Array) => jnp.negative(v), x))(2)), [12]);
});

test('string conversion of a tracer prints it, as Python str does', (t) => {
  let seen = '';
  jax.jit((x: jax.Array) => {
    seen = `${x}`;
    return x;
  })(jnp.array([1, 2]));
  t.is(seen, 'Traced<f32[2]>with<DynamicJaxprTrace>');
});

test('a concrete scalar Array is its number under JS operators; a non-scalar one names the jnp functions', (t) => {
  const five = jnp.array(5) as unknown as number;
  t.is(five + 1, 6);
  t.is(five * 2, 10);
  t.true(five > 4);
  t.is(`${jnp.array([1, 2])}`, '[1. 2.]');
  const x = jnp.array([1, 2, 3]) as unknown as number;
  t.throws(() => x * 2, { instanceOf: TypeError, message: /shape float32\[3\] cannot be converted to a JS number.*jnp\.multiply/ });
  t.throws(() => x + 1, { instanceOf: TypeError, message: /jnp\.add/ });
  t.throws(() => x < 0, { instanceOf: TypeError, message: /jnp\.less/ });
});

test('x[i] = v raises JAX immutability error; x[i] reads x.index(i), negative indices too', (t) => {
  const x = jnp.array([1, 2, 3]);
  t.throws(() => {
    (x as unknown as number[])[0] = 10;
  }, { instanceOf: TypeError, message: /immutable and do not support in-place item assignment\. Instead of x\[0\] = y, use x = x\.at\(0\)\.set\(y\)/ });
  t.deepEqual(values(x), [1, 2, 3]);
  const indexed = x as unknown as jax.Array[];
  t.deepEqual(values(indexed[1]), [2]);
  t.deepEqual(values(indexed[-1]), [3]);
  t.deepEqual(values(x.at(0).set(10)), [10, 2, 3]);
});

test('arrays from JS numbers are float32: jnp.array([1., 2., 3.]) can be differentiated and .at().set(0.5) keeps 0.5', (t) => {
  const x = jnp.array([1, 2, 3]);
  t.is(x.dtype, 'float32');
  t.is(jnp.array(5).dtype, 'float32');
  t.is(jnp.full([2], 5).dtype, 'float32');
  t.is(jnp.array([true, false]).dtype, 'bool');
  t.is(jnp.array(new Int32Array([1, 2])).dtype, 'int32');
  t.is(jnp.arange(3).dtype, 'int32');
  t.deepEqual(values(jax.grad((v: jax.Array) => jnp.sum(jnp.multiply(v, v)))(x)), [2, 4, 6]);
  t.deepEqual(values(x.at(1).set(0.5)), [1, 0.5, 3]);
  // index arrays must be integers: the error says how to make one
  t.throws(() => x.index(jnp.array([0, 2])), { message: /index arrays must have an integer dtype, got float32.*\{ dtype: 'int32' \}/ });
});

test('JS booleans passed to jit are static: `neg ? -x : x` takes the right branch, each value its own trace', (t) => {
  let traces = 0;
  const f = jax.jit((x: jax.Array, neg: boolean) => {
    traces++;
    return neg ? jnp.negative(x) : x;
  });
  t.deepEqual(values(f(1, false)), [1]);
  t.deepEqual(values(f(1, true)), [-1]);
  t.deepEqual(values(f(2, true)), [-2]);
  t.is(traces, 2);
  const g = jax.jit((x: jax.Array, cfg: { flag: boolean }) => (cfg.flag ? jnp.negative(x) : x));
  t.deepEqual(values(g(1, { flag: false })), [1]);
  t.deepEqual(values(g(1, { flag: true })), [-1]);
});

test('Arrays iterate over their first axis; jnp.array stacks Arrays and nested lists of Arrays', (t) => {
  const [k1, k2] = jax.random.split(jax.random.key(0)) as unknown as jax.Array[];
  t.deepEqual(k1!.shape, [2]);
  t.notDeepEqual(values(k1), values(k2));
  const rows = [...jnp.arange(6).reshape([3, 2])];
  t.is(rows.length, 3);
  t.deepEqual(values(rows[2]), [4, 5]);
  // a 0-d array is not iterable (JAX: TypeError 'iteration over a 0-d array'; here JS's own TypeError)
  t.throws(() => [...jnp.array(1)], { instanceOf: TypeError, message: /is not iterable/ });
  const a = jnp.array([1, 2]);
  const stacked = jnp.array([a, jnp.multiply(a, 2)]);
  t.deepEqual(stacked.shape, [2, 2]);
  t.deepEqual(values(stacked), [1, 2, 2, 4]);
  const mixed = jnp.array([[jnp.array(1.5), 2], [3, jnp.array(4)]]);
  t.deepEqual(mixed.shape, [2, 2]);
  t.is(mixed.dtype, 'float32');
  t.deepEqual(values(jnp.array([jnp.arange(2), jnp.arange(2)])), [0, 1, 0, 1]);
});

test('indexing follows JAX: reads out of bounds clamp (jnp.arange(10)[11] is 9), updates drop, concrete boolean masks select', (t) => {
  const x = jnp.arange(10);
  t.deepEqual(values(x.index(11)), [9]);
  t.deepEqual(values(x.at(11).get()), [9]);
  t.deepEqual(values(x.index(-11)), [0]);
  t.deepEqual(values(x.at(11).set(99)), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.deepEqual(values(x.at(11).set(99, { mode: 'clip' })), [0, 1, 2, 3, 4, 5, 6, 7, 8, 99]);
  const y = jnp.array([-1, 2, -3]);
  t.deepEqual(values(y.index(jnp.less(y, 0))), [-1, -3]);
  const m = jnp.arange(6).reshape([2, 3]);
  t.deepEqual(values(m.index(jnp.greater(m, 2))), [3, 4, 5]);
  t.deepEqual(values(m.index(null, jnp.array([true, false, true]))), [0, 2, 3, 5]);
  t.throws(() => y.index(jnp.array([true, false])), { message: /boolean mask at position 0 has shape \[2\], which does not match the indexed axes \[3\]/ });
  t.throws(() => jax.jit((v: jax.Array) => v.index(jnp.less(v, 0)))(y), { message: /boolean mask at position 0 .* is traced.*NonConcreteBooleanIndexError/ });
});

test('a shape from a traced argument says which value and that staticArgnums fixes it', (t) => {
  t.throws(() => jax.jit((n: jax.Array) => jnp.ones(n as never))(3), { name: 'ConcretizationTypeError', message: /jnp\.ones: shapes must be sequences of concrete integers.*Traced<.*staticArgnums/s });
  t.deepEqual(values(jax.jit((n: number) => jnp.ones(n), { staticArgnums: [0] })(3)), [1, 1, 1]);
});

test('positional argnums and axes: grad(f, 1), valueAndGrad(f, [0, 1]), vmap(f, 0, 0)', (t) => {
  const f = (a: jax.Array, b: jax.Array) => jnp.sum(jnp.multiply(a, b));
  const a = jnp.array([1, 2]);
  const b = jnp.array([3, 4]);
  t.deepEqual(values(jax.grad(f, 1)(a, b)), [1, 2]);
  const [v, [ga, gb]] = jax.valueAndGrad(f, [0, 1])(a, b) as [jax.Array, jax.Array[]];
  t.deepEqual([values(v), values(ga), values(gb)], [[11], [3, 4], [1, 2]]);
  t.deepEqual(values(jax.vmap((x: jax.Array) => jnp.sum(x), 0, 0)(jnp.ones([3, 2]))), [2, 2, 2]);
  t.deepEqual(values(jax.vmap((x: jax.Array, y: jax.Array) => jnp.add(x, y), [0, null])(jnp.ones([3, 2]), jnp.array([1, 2]))), [2, 3, 2, 3, 2, 3]);
});

test('jit(f) twice shares one trace cache per function, as in JAX', (t) => {
  let traces = 0;
  const f = (x: jax.Array) => {
    traces++;
    return jnp.add(x, 1);
  };
  jax.jit(f)(1);
  jax.jit(f)(2);
  t.is(traces, 1);
  jax.jit(f, { donateArgnums: [0] })(jnp.array(1));
  t.is(traces, 2); // other options, other cache
});

test('reduction and other jnp methods on Array take the axis by position', (t) => {
  const x = jnp.array([[1, 2], [3, 5]]);
  t.deepEqual(values(x.std(0)), [1, 1.5]);
  t.deepEqual(values(x.var(1)), [0.25, 1]);
  t.deepEqual(values(x.sum(0, { keepdims: true })), [4, 7]);
  t.deepEqual(x.sum(0, { keepdims: true }).shape, [1, 2]);
  t.deepEqual(values(x.prod()), [30]);
  t.deepEqual(values(x.cumsum(1)), [1, 3, 3, 8]);
  t.deepEqual(values(x.argmin(0)), [0, 0]);
  t.deepEqual(values(x.clip(2, 3)), [2, 2, 3, 3]);
  t.deepEqual(values(x.ravel()), [1, 2, 3, 5]);
  t.deepEqual(values(jnp.greater(x, 2).any(1)), [0, 1]);
  t.deepEqual(values(x.dot(jnp.array([1, 1]))), [3, 8]);
});

test('jacfwd, jacrev, jacobian and hessian: values, argnums lists, pytrees, hasAux, under jit', (t) => {
  // f(x) = [x0 * x1, sin(x0)]: J = [[x1, x0], [cos(x0), 0]]
  const f = (x: jax.Array) => jnp.stack([jnp.multiply(x.index(0), x.index(1)), jnp.sin(x.index(0))]);
  const x = jnp.array([1, 2]);
  const want = [2, 1, Math.cos(1), 0];
  for (const jac of [jax.jacfwd, jax.jacrev, jax.jacobian]) {
    const got = values(jac(f)(x));
    got.forEach((g, i) => t.true(Math.abs(g - want[i]!) < 1e-6, `${jac.name}: ${got}`));
  }
  t.deepEqual(values(jax.jit(jax.jacrev(f))(x)).map((v) => Math.round(v * 1e6) / 1e6), want.map((v) => Math.round(v * 1e6) / 1e6));
  // hessian of sum(x^3) is diag(6x)
  t.deepEqual(values(jax.hessian((v: jax.Array) => jnp.sum(jnp.power(v, 3)))(x)), [6, 0, 0, 12]);
  // pytree outputs, a list of argnums: out leaf -> [d/da, d/db], each out.shape + in.shape
  const g = (a: jax.Array, b: jax.Array) => ({ y: jnp.multiply(a, b), z: jnp.sum(a) });
  for (const jac of [jax.jacfwd, jax.jacrev]) {
    const J = jac(g, [0, 1])(jnp.array([1, 2]), jnp.array([3, 4])) as { y: jax.Array[]; z: jax.Array[] };
    t.deepEqual(J.y[0]!.shape, [2, 2]);
    t.deepEqual(values(J.y[0]), [3, 0, 0, 4]);
    t.deepEqual(values(J.y[1]), [1, 0, 0, 2]);
    t.deepEqual(values(J.z[0]), [1, 1]);
    t.deepEqual(values(J.z[1]), [0, 0]);
  }
  const [jj, aux] = jax.jacrev((v: jax.Array) => [jnp.sin(v), jnp.sum(v)], { hasAux: true })(jnp.array([0, 1])) as [jax.Array, jax.Array];
  t.deepEqual(values(jj).map((v) => Math.round(v * 1e6)), [1e6, 0, 0, Math.round(Math.cos(1) * 1e6)]);
  t.deepEqual(values(aux), [1]);
  t.throws(() => jax.jacrev(f)(jnp.arange(2)), { message: /jax\.jacrev: differentiated arguments must have a floating dtype, got int32\[2\]/ });
  t.throws(() => jax.jacfwd(f, 3)(x), { message: /jax\.jacfwd: argnums 3 is out of range for a call with 1 arguments/ });
});

test('jit staticArgnames picks parameters by their names in fn', (t) => {
  let traces = 0;
  const f = jax.jit((x: jax.Array, n: number) => {
    traces++;
    return jnp.multiply(x, jnp.ones(n));
  }, { staticArgnames: ['n'] });
  t.deepEqual(values(f(2, 3)), [2, 2, 2]);
  t.deepEqual(values(f(3, 3)), [3, 3, 3]);
  t.is(traces, 1);
  const g = jax.jit(function (_x: number, { a }: { a: number }, n = 2) { return jnp.full([n], a); }, { staticArgnames: 'n' });
  t.deepEqual(values(g(1, { a: 4 }, 3)), [4, 4, 4]);
  t.throws(() => jax.jit((x: jax.Array) => x, { staticArgnames: ['m'] }), { message: "jax.jit: staticArgnames names 'm', which is not a parameter of fn (its parameters: x)" });
});

test('errors name the function the user called, the argument and the value (issue 13 list)', (t) => {
  const disposed = () => {
    const a = jnp.ones([2, 2]);
    a.dispose();
    return a;
  };
  // 4 TB: more than any GPU or host has (37 GiB fit on an H100)
  const oom = jax.devices()[0]!.platform === 'cpu'
    ? /^jnp\.zeros: RESOURCE_EXHAUSTED: out of memory allocating 3\.64 TiB for an output float32\[1000000,1000000\] on the CPU/
    : /^jnp\.zeros: jaxon cuda: cudaAlloc: out of memory allocating 4000000000000 bytes \(3\.64 TiB\)/;
  t.throws(() => jnp.zeros([1e6, 1e6]), { name: 'ResourceExhaustedError', message: oom });
  if (jax.devices()[0]!.platform === 'cpu') {
    t.throws(() => jax.jit(function big() { return jnp.zeros([1e6, 1e6]); })(), { name: 'ResourceExhaustedError', message: /^jax\.jit\(big\): RESOURCE_EXHAUSTED: out of memory allocating 3\.64 TiB/ });
  }
  t.throws(() => jax.nn.softmax(jnp.ones([2, 3]), { axis: 5 }), { message: 'nn.softmax: axis 5 is out of bounds for an array of dimension 2' });
  t.throws(() => jax.nn.logSoftmax(jnp.ones([2, 3]), { axis: -3 }), { message: /^nn\.logSoftmax: axis -3 is out of bounds/ });
  t.throws(() => jax.nn.standardize(jnp.ones([2, 3]), { axis: 5 }), { message: /^nn\.standardize: axis 5/ });
  t.throws(() => jnp.ones([2]).astype('float128' as never), { message: /^Array\.astype: dtype must be one of .* got 'float128'/ });
  t.throws(() => jnp.clip(jnp.ones([2]), 'a' as never), { message: /^jnp\.clip: min must be an Array.* got 'a'/ });
  t.throws(() => jax.nn.leakyRelu(jnp.ones([2]), { negativeSlope: 'x' as never }), { message: /^nn\.leakyRelu: negativeSlope must be .* got 'x'/ });
  t.throws(() => disposed().item(), { instanceOf: ReferenceError, message: /^Array\.item: this Array \(float32\[2,2\]\) was disposed/ });
  t.throws(() => disposed().tolistSync(), { message: /^Array\.tolistSync: this Array/ });
  t.throws(() => jnp.matmul(disposed(), jnp.ones([2, 2])), { message: /^jnp\.matmul: this Array/ });
  t.throws(() => disposed().matmul(jnp.ones([2, 2])), { message: /^Array\.matmul: this Array/ });
  t.throws(() => jnp.array(disposed()), { message: /^jnp\.array: this Array/ });
  t.throws(() => jnp.concatenate([jnp.ones([1]), disposed()]), { message: /^jnp\.concatenate: this Array/ });
  t.throws(() => lax.foriLoop(0, 2.5, (_i: jax.Array, x: jax.Array) => x, jnp.ones([1])), { message: 'lax.foriLoop: upper must be an integer, got 2.5' });
  t.throws(() => lax.foriLoop(0, 3, (_i: jax.Array, x: jax.Array) => jnp.concatenate([x, x]), jnp.ones([2])), {
    message: /^lax\.foriLoop: bodyFun's input val and output val must have equal types.*the input component val has type float32\[2\] but the corresponding output component has type float32\[4\]/s,
  });
});

test('blockUntilReady, deviceGet and makeMesh at the top level; repr shows weak_type=True', (t) => {
  const tree = { a: jnp.arange(3), b: [jnp.ones([2]), 5] };
  t.is(jax.blockUntilReady(tree), tree);
  const host = jax.deviceGet(tree) as { a: jax.Array; b: [jax.Array, number] };
  t.is(host.a.device.platform, 'cpu');
  t.false(host.a.committed);
  t.deepEqual(values(host.a), [0, 1, 2]);
  t.is(host.b[1], 5);
  const mesh = jax.makeMesh([1, 1], ['x', 'y']);
  t.deepEqual(mesh.axisNames, ['x', 'y']);
  t.deepEqual(mesh.shape, { x: 1, y: 1 });
  t.is(mesh.flatDevices[0], jax.devices()[0]);
  t.throws(() => jax.makeMesh([2, 4], ['x', 'y']), { message: /jax\.makeMesh: a mesh of shape \[2,4\] needs 8 devices, but 1 is available/ });
  t.throws(() => jax.makeMesh([1], ['x', 'y']), { message: /must name each of the 1 axes/ });
  t.is(jax.jit((x: jax.Array) => x)(1.5).toRepr(), 'Array(1.5, dtype=float32, weak_type=True)');
  t.is(jnp.array(1.5).toRepr(), 'Array(1.5, dtype=float32)');
});

test('a bare JS number passed to jit is a weak float, as grad and vjp take it (API.md); a fill value takes the array dtype', (t) => {
  const y = jax.jit((x: jax.Array) => x)(2);
  t.is(y.dtype, 'float32');
  t.true(y.weakType);
  const [, pullback] = jax.vjp((x: jax.Array) => jnp.multiply(jnp.pi, x), 4);
  t.deepEqual(values((jax.jit(pullback)(1) as jax.Array[])[0]).map((v) => Math.round(v * 1e6)), [3141593]);
  // NaN into an int32 array is 0 (a convert), not a NaN literal in the kernel source
  t.deepEqual(values(jnp.arange(10).at(11).get({ mode: 'fill', fillValue: NaN })), [0]);
  t.deepEqual(values(jnp.arange(10).at(11).get({ mode: 'fill', fillValue: 2.7 })), [2]);
});
