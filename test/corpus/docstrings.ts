// Examples from JAX's own docstrings (jax/_src/numpy/reductions.py, ufuncs.py,
// jax/_src/lax/slicing.py, jax/_src/nn/functions.py and the jax.numpy API
// pages), each asserting the Array the docstring prints. JAX's
// jnp.array([1, 3, 4, 2]) is int32; jaxon's is float32 (JS cannot tell 1 from
// 1.0, API.md "JS numbers"), so integer examples say { dtype: 'int32' }.
import * as jax from '../../lib/index.js';
import { expectArray, expectScalar, snippet, todo, type Snippet } from './snippet.js';

const { numpy: jnp, lax, nn } = jax;
const int32 = (data: number[] | number[][]) => jnp.array(data, { dtype: 'int32' });
const bool = (data: number[][] | boolean[][]) => jnp.array(data, { dtype: 'bool' });

export const snippets: Snippet[] = [
  snippet('jax.numpy.sum docstring', 'sum over all axes, axis=1, keepdims and where', (t) => {
    const x = int32([[1, 3, 4, 2], [5, 2, 6, 3], [8, 1, 3, 9]]);
    expectScalar(t, jnp.sum(x), 47, { dtype: 'int32' });
    expectArray(t, jnp.sum(x, { axis: 1 }), [10, 16, 21], { dtype: 'int32' });
    expectArray(t, jnp.sum(x, { axis: 1, keepdims: true }), [[10], [16], [21]], { dtype: 'int32' });
    let where = bool([[0, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]);
    expectArray(t, jnp.sum(x, { axis: 1, keepdims: true, where }), [[4], [9], [12]], { dtype: 'int32' });
    where = jnp.array([[false], [false], [false]]);
    expectArray(t, jnp.sum(x, { axis: 0, keepdims: true, where }), [[0, 0, 0, 0]], { dtype: 'int32' });
  }),

  snippet('jax.numpy.prod docstring', 'product over all axes, axis=1, keepdims and where', (t) => {
    const x = int32([[1, 3, 4, 2], [5, 2, 1, 3], [2, 1, 3, 1]]);
    expectScalar(t, jnp.prod(x), 4320, { dtype: 'int32' });
    expectArray(t, jnp.prod(x, { axis: 1 }), [24, 30, 6], { dtype: 'int32' });
    expectArray(t, jnp.prod(x, { axis: 1, keepdims: true }), [[24], [30], [6]], { dtype: 'int32' });
    let where = bool([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]);
    expectArray(t, jnp.prod(x, { axis: 1, keepdims: true, where }), [[4], [3], [6]], { dtype: 'int32' });
    where = jnp.array([[false], [false], [false]]);
    expectArray(t, jnp.prod(x, { axis: 1, keepdims: true, where }), [[1], [1], [1]], { dtype: 'int32' });
  }),

  snippet('jax.numpy.max docstring', 'max over all axes, axis=1, keepdims, and where with initial=0', (t) => {
    const x = int32([[9, 3, 4, 5], [5, 2, 7, 4], [8, 1, 3, 6]]);
    expectScalar(t, jnp.max(x), 9, { dtype: 'int32' });
    expectArray(t, jnp.max(x, { axis: 1 }), [9, 7, 8], { dtype: 'int32' });
    expectArray(t, jnp.max(x, { axis: 1, keepdims: true }), [[9], [7], [8]], { dtype: 'int32' });
    let where = bool([[0, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]);
    expectArray(t, jnp.max(x, { axis: 1, keepdims: true, initial: 0, where }), [[4], [7], [8]], { dtype: 'int32' });
    where = jnp.array([[false], [false], [false]]);
    expectArray(t, jnp.max(x, { axis: 0, keepdims: true, initial: 0, where }), [[0, 0, 0, 0]], { dtype: 'int32' });
  }),

  snippet('jax.numpy.min docstring', 'min over all axes, axis=1, keepdims, and where with initial=0', (t) => {
    const x = int32([[2, 5, 1, 6], [3, -7, -2, 4], [8, -4, 1, -3]]);
    expectScalar(t, jnp.min(x), -7, { dtype: 'int32' });
    expectArray(t, jnp.min(x, { axis: 1 }), [1, -7, -4], { dtype: 'int32' });
    expectArray(t, jnp.min(x, { axis: 1, keepdims: true }), [[1], [-7], [-4]], { dtype: 'int32' });
    let where = bool([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]);
    expectArray(t, jnp.min(x, { axis: 1, keepdims: true, initial: 0, where }), [[0], [-2], [-4]], { dtype: 'int32' });
    where = jnp.array([[false], [false], [false]]);
    expectArray(t, jnp.min(x, { axis: 0, keepdims: true, initial: 0, where }), [[0, 0, 0, 0]], { dtype: 'int32' });
  }),

  snippet('jax.numpy.all docstring', 'all over all axes, axis=0, keepdims and where', (t) => {
    const x = jnp.array([[true, true, true, false], [true, false, true, false], [true, true, false, false]]);
    t.is(jnp.all(x).item(), false);
    t.deepEqual(jnp.all(x, { axis: 0 }).tolistSync(), [true, false, false, false]);
    t.deepEqual(jnp.all(x, { axis: 0, keepdims: true }).tolistSync(), [[true, false, false, false]]);
    const where = bool([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]);
    t.deepEqual(jnp.all(x, { axis: 0, keepdims: true, where }).tolistSync(), [[true, true, false, false]]);
  }),

  snippet('jax.numpy.any docstring', 'any over all axes, axis=0, keepdims and where', (t) => {
    const x = jnp.array([[true, true, true, false], [true, false, true, false], [true, true, false, false]]);
    t.is(jnp.any(x).item(), true);
    t.deepEqual(jnp.any(x, { axis: 0 }).tolistSync(), [true, true, true, false]);
    t.deepEqual(jnp.any(x, { axis: 0, keepdims: true }).tolistSync(), [[true, true, true, false]]);
    const where = bool([[1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]);
    t.deepEqual(jnp.any(x, { axis: 0, keepdims: true, where }).tolistSync(), [[true, false, true, false]]);
  }),

  snippet('jax.numpy.mean docstring', 'mean over all axes (3.8333335), axis=1, keepdims and where', (t) => {
    const x = int32([[1, 3, 4, 2], [5, 2, 6, 3], [8, 1, 2, 9]]);
    expectScalar(t, jnp.mean(x), 3.8333335, { dtype: 'float32' });
    expectArray(t, jnp.mean(x, { axis: 1 }), [2.5, 4.0, 5.0], { dtype: 'float32' });
    expectArray(t, jnp.mean(x, { axis: 1, keepdims: true }), [[2.5], [4.0], [5.0]], { dtype: 'float32' });
    const where = bool([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 1]]);
    expectArray(t, jnp.mean(x, { axis: 1, keepdims: true, where }), [[2.5], [2.5], [6.0]], { dtype: 'float32' });
  }),

  snippet('jax.numpy.std docstring', 'std (1.21 at precision 2), axis=0, keepdims, ddof=1 and where', (t) => {
    const x = int32([[1, 3, 4, 2], [4, 2, 5, 3], [5, 4, 2, 3]]);
    const twoDigits = { atol: 0.005, rtol: 0 }; // printed with jnp.printoptions(precision=2)
    expectScalar(t, jnp.std(x), 1.21, { dtype: 'float32', ...twoDigits });
    expectArray(t, jnp.std(x, { axis: 0 }), [1.7, 0.82, 1.25, 0.47], twoDigits);
    expectArray(t, jnp.std(x, { axis: 0, keepdims: true }), [[1.7, 0.82, 1.25, 0.47]], twoDigits);
    expectArray(t, jnp.std(x, { axis: 0, keepdims: true, ddof: 1 }), [[2.08, 1.0, 1.53, 0.58]], twoDigits);
    const where = bool([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]]);
    expectArray(t, jnp.std(x, { axis: 0, keepdims: true, where }), [[2.0, 1.0, 1.0, 0.0]], { dtype: 'float32' });
  }),

  snippet('jax.numpy.cumsum docstring', 'flattened cumulative sum and along axis 1', (t) => {
    const x = int32([[1, 2, 3], [4, 5, 6]]);
    expectArray(t, jnp.cumsum(x), [1, 3, 6, 10, 15, 21], { dtype: 'int32' });
    expectArray(t, jnp.cumsum(x, { axis: 1 }), [[1, 3, 6], [4, 9, 15]], { dtype: 'int32' });
  }),

  snippet('jax.numpy.argmax docstring', 'argmax of a vector, along axis 1, and with keepdims', (t) => {
    expectScalar(t, jnp.argmax(int32([1, 3, 5, 4, 2])), 2, { dtype: 'int32' });
    const x = int32([[1, 3, 2], [5, 4, 1]]);
    expectArray(t, jnp.argmax(x, { axis: 1 }), [1, 0], { dtype: 'int32' });
    expectArray(t, jnp.argmax(x, { axis: 1, keepdims: true }), [[1], [0]], { dtype: 'int32' });
  }),

  snippet('jax.numpy.linspace docstring', 'jnp.linspace(0, 10, 5) is [0. 2.5 5. 7.5 10.]', (t) => {
    expectArray(t, jnp.linspace(0, 10, 5), [0, 2.5, 5, 7.5, 10], { dtype: 'float32' });
  }),

  snippet('jax.numpy.tile docstring', 'jnp.tile([1, 2], 2) and jnp.tile([[1, 2], [3, 4]], (2, 1))', (t) => {
    expectArray(t, jnp.tile(int32([1, 2]), 2), [1, 2, 1, 2], { dtype: 'int32' });
    expectArray(t, jnp.tile(int32([[1, 2], [3, 4]]), [2, 1]), [[1, 2], [3, 4], [1, 2], [3, 4]], { dtype: 'int32' });
  }),

  snippet('jax.lax.tile docstring', 'lax.tile([[1, 2], [3, 4]], (2, 3)) tiles to a 4x6 array; lax.tile([1, 2, 3], (2,)) is [1 2 3 1 2 3]; lax.tile([[1], [2]], (1, 3)) is [[1 1 1] [2 2 2]]', (t) => {
    expectArray(t, lax.tile(int32([[1, 2], [3, 4]]), [2, 3]), [[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4], [1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]], { dtype: 'int32' });
    expectArray(t, lax.tile(int32([1, 2, 3]), [2]), [1, 2, 3, 1, 2, 3], { dtype: 'int32' });
    expectArray(t, lax.tile(int32([[1], [2]]), [1, 3]), [[1, 1, 1], [2, 2, 2]], { dtype: 'int32' });
    t.throws(() => lax.tile(int32([[1, 2], [3, 4]]), [2]), { message: /reps length must be equal to the ndim of x, got len\(reps\)=1 and x.ndim=2/ });
  }),

  snippet('jax.numpy.clip docstring', 'jnp.clip(arr, 2, 5)', (t) => {
    const arr = int32([0, 1, 2, 3, 4, 5, 6, 7]);
    expectArray(t, jnp.clip(arr, 2, 5), [2, 2, 2, 3, 4, 5, 5, 5], { dtype: 'int32' });
  }),

  snippet('jax.numpy.astype docstring', 'int32 to float32, and float to int truncates', (t) => {
    const x = int32([0, 1, 2, 3]);
    expectArray(t, x.astype('float32'), [0.0, 1.0, 2.0, 3.0], { dtype: 'float32' });
    const y = jnp.array([0.0, 0.5, 1.0]);
    expectArray(t, y.astype('int32'), [0, 0, 1], { dtype: 'int32' }); // truncates fractional values
  }),

  snippet('jax.numpy.absolute docstring', 'absolute of int vectors and matrices', (t) => {
    expectArray(t, jnp.absolute(int32([5, -2, 0, 12])), [5, 2, 0, 12], { dtype: 'int32' });
    expectArray(t, jnp.absolute(int32([[8, -3, 1], [0, 9, -6]])), [[8, 3, 1], [0, 9, 6]], { dtype: 'int32' });
  }),

  todo('jax.numpy.absolute docstring', 'jnp.absolute(jnp.array([8 + 15j, 3 - 4j, -5 + 0j])) is [17. 5. 5.]: complex dtypes are missing'),

  snippet('jax.numpy.true_divide docstring', 'jnp.true_divide([3, 4, 5], 2) is [1.5 2. 2.5]', (t) => {
    expectArray(t, jnp.trueDivide(int32([3, 4, 5]), 2), [1.5, 2.0, 2.5], { dtype: 'float32' });
  }),

  snippet('jax.numpy.floor_divide docstring', 'integer floor division rounds toward -inf; int / float gives float', (t) => {
    expectArray(t, jnp.floorDivide(int32([10, 20, 30]), int32([3, 4, 7])), [3, 5, 4], { dtype: 'int32' });
    expectArray(t, jnp.floorDivide(int32([-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5]), 3), [-2, -2, -1, -1, -1, 0, 0, 0, 1, 1, 1], { dtype: 'int32' });
    const x1 = jnp.array([6, 6, 6], { dtype: jnp.int32 });
    const x2 = jnp.array([2.0, 2.5, 3.0], { dtype: jnp.float32 });
    expectArray(t, jnp.floorDivide(x1, x2), [3.0, 2.0, 2.0], { dtype: 'float32' });
  }),

  snippet('jax.numpy.log2 docstring', 'log2 of [0.25, 0.5, 1, 2, 4, 8]', (t) => {
    expectArray(t, jnp.log2(jnp.array([0.25, 0.5, 1, 2, 4, 8])), [-2, -1, 0, 1, 2, 3], { dtype: 'float32' });
  }),

  snippet('jax.numpy.log10 docstring', 'log10 of [0.01, 0.1, 1, 10, 100, 1000]', (t) => {
    expectArray(t, jnp.log10(jnp.array([0.01, 0.1, 1, 10, 100, 1000])), [-2, -1, 0, 1, 2, 3], { atol: 0.005, rtol: 0 });
  }),

  snippet('jax.numpy.exp2 docstring', 'exp2(x1 + x2) equals exp2(x1) * exp2(x2)', (t) => {
    const x1 = int32([2, -4, 3, -1]);
    const x2 = int32([-1, 3, -2, 3]);
    expectArray(t, jnp.exp2(jnp.add(x1, x2)), [2.0, 0.5, 2.0, 4.0], { dtype: 'float32' });
    expectArray(t, jnp.multiply(jnp.exp2(x1), jnp.exp2(x2)), [2.0, 0.5, 2.0, 4.0], { dtype: 'float32' });
  }),

  snippet('jax.numpy.rint docstring', 'jnp.rint([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5]) is [-2. -2. -0. 0. 2. 2. 4. 4.]', (t) => {
    const r = jnp.rint(jnp.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5]));
    expectArray(t, r, [-2, -2, -0, 0, 2, 2, 4, 4], { dtype: 'float32' });
    t.true(Object.is(r.dataSync()[2], -0), '-0.5 rounds to -0.');
    t.is(jnp.rint(int32([1, 2])).dtype, 'float32', 'integers become float32, as promote_args_inexact');
  }),
  snippet('jax.numpy.copysign docstring', 'jnp.copysign([5, 2, 0], -1) is [-5. -2. -0.]; jnp.copysign([6, 8, 0], 2) is [6. 8. 0.]; jnp.copysign([2, -3], [[1], [-4], [5]]) is [[2. 3.] [-2. -3.] [2. 3.]]', (t) => {
    const negative = jnp.copysign(int32([5, 2, 0]), -1);
    expectArray(t, negative, [-5, -2, -0], { dtype: 'float32' });
    t.true(Object.is(negative.dataSync()[2], -0), 'copysign(0, -1) is -0.');
    expectArray(t, jnp.copysign(int32([6, 8, 0]), 2), [6, 8, 0], { dtype: 'float32' });
    expectArray(t, jnp.copysign(int32([2, -3]), int32([[1], [-4], [5]])), [[2, 3], [-2, -3], [2, 3]], { dtype: 'float32' });
  }),
  snippet('jax.numpy.bitwise_count docstring', 'jnp.bitwise_count([64, 32, 31, 20]) is [1 1 5 2], of [-16, -7, 7] [1 3 3], of [[2, -7], [-9, 7]] [[1 3] [2 3]] (uint8)', (t) => {
    expectArray(t, jnp.bitwiseCount(int32([64, 32, 31, 20])), [1, 1, 5, 2], { dtype: 'uint8' });
    expectArray(t, jnp.bitwiseCount(int32([-16, -7, 7])), [1, 3, 3], { dtype: 'uint8' });
    expectArray(t, jnp.bitwiseCount(int32([[2, -7], [-9, 7]])), [[1, 3], [2, 3]], { dtype: 'uint8' });
  }),
  snippet('jax.numpy.right_shift docstring', 'jnp.right_shift([1, 2, 4, 8], 1) is [0 1 2 4]; jnp.right_shift(16, [1, 2, 3, 4]) is [8 4 2 1]', (t) => {
    expectArray(t, jnp.rightShift(int32([1, 2, 4, 8]), 1), [0, 1, 2, 4], { dtype: 'int32' });
    expectArray(t, jnp.rightShift(16, int32([1, 2, 3, 4])), [8, 4, 2, 1], { dtype: 'int32' });
  }),
  snippet('jax.numpy.divmod docstring', 'jnp.divmod([10, 20, 30], [3, 4, 7]) is ([3 5 4], [1 0 2])', (t) => {
    const [q, r] = jnp.divmod(int32([10, 20, 30]), int32([3, 4, 7]));
    expectArray(t, q, [3, 5, 4], { dtype: 'int32' });
    expectArray(t, r, [1, 0, 2], { dtype: 'int32' });
  }),
  snippet('jax.numpy.logaddexp docstring', 'jnp.allclose(jnp.logaddexp(x1, x2), jnp.log(jnp.exp(x1) + jnp.exp(x2))) is True for x1 = [1, 2, 3], x2 = [4, 5, 6]', (t) => {
    const x1 = jnp.array([1, 2, 3]);
    const x2 = jnp.array([4, 5, 6]);
    t.true(jnp.allclose(jnp.logaddexp(x1, x2), jnp.log(jnp.add(jnp.exp(x1), jnp.exp(x2)))).item() as boolean);
  }),
  snippet('jax.numpy.median docstring', 'jnp.median of [[2, 4, 7, 1], [3, 5, 9, 2], [6, 1, 8, 3]] is 3.5, along axis 1 [3. 4. 4.5]', (t) => {
    const x = int32([[2, 4, 7, 1], [3, 5, 9, 2], [6, 1, 8, 3]]);
    expectScalar(t, jnp.median(x), 3.5);
    expectArray(t, jnp.median(x, { axis: 1 }), [3, 4, 4.5], { dtype: 'float32' });
  }),
  snippet('jax.numpy.quantile / percentile docstrings', 'jnp.quantile(jnp.arange(10), [0.25, 0.5, 0.75]) is [2.25 4.5 6.75]; jnp.percentile([0..6], [25, 50, 75]) is [1.5 3. 4.5]', (t) => {
    expectArray(t, jnp.quantile(jnp.arange(10), jnp.array([0.25, 0.5, 0.75])), [2.25, 4.5, 6.75], { dtype: 'float32' });
    expectArray(t, jnp.percentile(jnp.arange(7), jnp.array([25, 50, 75])), [1.5, 3, 4.5], { dtype: 'float32' });
  }),
  snippet('jax.numpy.nanmin / nanmax docstrings', 'jnp.nanmin of [[1, nan, 4, 5], [nan, -2, nan, -4], [2, 1, 3, nan]] is -4., along axis 1 [1. -4. 1.]; nanmax 5., along axis 1 [5. -2. 3.]', (t) => {
    const x = jnp.array([[1, NaN, 4, 5], [NaN, -2, NaN, -4], [2, 1, 3, NaN]]);
    expectScalar(t, jnp.nanmin(x), -4);
    expectArray(t, jnp.nanmin(x, { axis: 1 }), [1, -4, 1], { dtype: 'float32' });
    expectScalar(t, jnp.nanmax(x), 5);
    expectArray(t, jnp.nanmax(x, { axis: 1 }), [5, -2, 3], { dtype: 'float32' });
  }),
  snippet('jax.numpy.ptp / count_nonzero docstrings', 'jnp.ptp of [[1, 3, 5, 2], [4, 6, 8, 1], [7, 9, 3, 4]] is 8; jnp.count_nonzero of [[1, 0, 0, 0], [0, 0, 1, 0], [1, 1, 1, 0]] is 5', (t) => {
    expectScalar(t, jnp.ptp(int32([[1, 3, 5, 2], [4, 6, 8, 1], [7, 9, 3, 4]])), 8);
    const c = jnp.countNonzero(int32([[1, 0, 0, 0], [0, 0, 1, 0], [1, 1, 1, 0]]));
    expectScalar(t, c, 5);
    t.is(c.dtype, 'int32');
  }),

  snippet('jax.lax.slice docstring', 'lax.slice with strides, and the equivalent x[1:3, 0:2] / x[0:3, 0:4:2]', (t) => {
    const x = jnp.arange(12).reshape([3, 4]);
    expectArray(t, lax.slice(x, [0, 0], [3, 4], [1, 2]), [[0, 2], [4, 6], [8, 10]], { dtype: 'int32' });
    expectArray(t, x.index([1, 3], [0, 2]), [[4, 5], [8, 9]], { dtype: 'int32' });
    expectArray(t, x.index([0, 3], [0, 4, 2]), [[0, 2], [4, 6], [8, 10]], { dtype: 'int32' });
  }),

  snippet('jax.lax.dynamic_slice docstring', 'dynamic_slice(x, (1, 1), (2, 3)); an overrunning slice shifts its start', (t) => {
    const x = jnp.arange(12).reshape([3, 4]);
    expectArray(t, x, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], { dtype: 'int32' });
    expectArray(t, lax.dynamicSlice(x, [1, 1], [2, 3]), [[5, 6, 7], [9, 10, 11]], { dtype: 'int32' });
    expectArray(t, lax.dynamicSlice(x, [1, 1], [2, 4]), [[4, 5, 6, 7], [8, 9, 10, 11]], { dtype: 'int32' });
  }),

  snippet('jax.lax.dynamic_update_slice docstring', 'one- and two-dimensional updates; an update too large shifts its start', (t) => {
    const x = jnp.zeros(6);
    const y = jnp.ones(3);
    expectArray(t, lax.dynamicUpdateSlice(x, y, [2]), [0, 0, 1, 1, 1, 0], { dtype: 'float32' });
    expectArray(t, lax.dynamicUpdateSlice(x, y, [3]), [0, 0, 0, 1, 1, 1], { dtype: 'float32' });
    expectArray(t, lax.dynamicUpdateSlice(x, y, [5]), [0, 0, 0, 1, 1, 1], { dtype: 'float32' });
    const x2 = jnp.zeros([4, 4]);
    const y2 = jnp.ones([2, 2]);
    expectArray(t, lax.dynamicUpdateSlice(x2, y2, [1, 2]), [[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0]], { dtype: 'float32' });
  }),

  snippet('jax.lax.gather docstring', 'x[indices] and x.at[indices].get(indices_are_sorted=True, mode="promise_in_bounds")', (t) => {
    const x = int32([10, 11, 12]);
    const indices = int32([0, 1, 1, 2, 2, 2]);
    expectArray(t, x.index(indices), [10, 11, 11, 12, 12, 12], { dtype: 'int32' });
    expectArray(t, x.at(indices).get({ indicesAreSorted: true, mode: 'promise_in_bounds' }), [10, 11, 11, 12, 12, 12], { dtype: 'int32' });
  }),

  snippet('jax.nn.relu docstring', 'relu([-2., -1., -0.5, 0, 0.5, 1., 2.])', (t) => {
    expectArray(t, nn.relu(jnp.array([-2.0, -1.0, -0.5, 0, 0.5, 1.0, 2.0])), [0, 0, 0, 0, 0.5, 1, 2], { dtype: 'float32' });
  }),

  snippet('jax.nn.one_hot docstring', 'one_hot([0, 1, 2], 3) is the identity; out-of-range indices encode as zeros', (t) => {
    expectArray(t, nn.oneHot(int32([0, 1, 2]), 3), [[1, 0, 0], [0, 1, 0], [0, 0, 1]], { dtype: 'float32' });
    expectArray(t, nn.oneHot(int32([-1, 3]), 3), [[0, 0, 0], [0, 0, 0]], { dtype: 'float32' });
  }),
];
