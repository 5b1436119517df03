// Automatic differentiation: JAX 101's "Automatic differentiation"
// (docs/automatic-differentiation.md), "The Autodiff Cookbook"
// (docs/notebooks/autodiff_cookbook), and the jax-101 notebooks "JAX As
// Accelerated NumPy" (01-jax-basics) and "Advanced Automatic Differentiation"
// (04-advanced-autodiff), with the values those pages print. The logistic
// regression's W and b come from jax.random (key 0), so these snippets also
// check that jaxon's random stream is JAX's.
import * as jax from '../../lib/index.js';
import { expectArray, expectScalar, failing, snippet, todo, type Snippet } from './snippet.js';

const { numpy: jnp, lax, random } = jax;
const AD = 'Automatic differentiation';
const COOKBOOK = 'The Autodiff Cookbook';
const BASICS = 'JAX 101 (2021): JAX As Accelerated NumPy';
const ADVANCED = 'JAX 101 (2021): Advanced Automatic Differentiation';

// ---- the cookbook's linear logistic regression ----

const sigmoid = (x: jax.Array) => jnp.multiply(0.5, jnp.add(jnp.tanh(jnp.divide(x, 2)), 1));
// outputs probability of a label being true
const predict = (W: jax.Array, b: jax.Array, inputs: jax.Array) => sigmoid(jnp.add(jnp.dot(inputs, W), b));
// a toy dataset
const inputs = () => jnp.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.3], [0.74, -2.49, 1.39]]);
const targets = () => jnp.array([true, true, false, true]);
// training loss is the negative log-likelihood of the training examples
const loss = (W: jax.Array, b: jax.Array) => {
  const preds = predict(W, b, inputs());
  const labelProbs = jnp.add(jnp.multiply(preds, targets()), jnp.multiply(jnp.subtract(1, preds), jnp.subtract(1, targets())));
  return jnp.negative(jnp.sum(jnp.log(labelProbs)));
};
// initialize random model coefficients: key, W_key, b_key = random.split(key, 3)
function model() {
  const [key, WKey, bKey] = random.split(random.key(0), 3);
  return { key: key!, W: random.normal(WKey!, [3]), b: random.normal(bKey!, []) };
}
const W_GRAD = [-0.433146, -0.7354605, -1.2598922];
const B_GRAD = -0.69001776;

export const snippets: Snippet[] = [
  snippet(`${AD} › Taking gradients with jax.grad`, 'grad(jnp.tanh)(2.0) is 0.070650816; the 2nd and 3rd derivatives -0.13621868, 0.25265405', (t) => {
    const gradTanh = jax.grad(jnp.tanh);
    expectScalar(t, gradTanh(2.0), 0.070650816);
    expectScalar(t, jax.grad(jax.grad(jnp.tanh))(2.0), -0.13621868);
    expectScalar(t, jax.grad(jax.grad(jax.grad(jnp.tanh)))(2.0), 0.25265405);
  }),

  snippet(`${AD} › Taking gradients with jax.grad`, 'derivatives of x**3 + 2*x**2 - 3*x + 1 at 1: 4.0 10.0 6.0 0.0', (t) => {
    const f = (x: jax.Array) => jnp.add(jnp.subtract(jnp.add(jnp.power(x, 3), jnp.multiply(2, jnp.power(x, 2))), jnp.multiply(3, x)), 1);
    const dfdx = jax.grad(f);
    const d2fdx = jax.grad(dfdx);
    const d3fdx = jax.grad(d2fdx);
    const d4fdx = jax.grad(d3fdx);
    expectScalar(t, dfdx(1.0), 4.0);
    expectScalar(t, d2fdx(1.0), 10.0);
    expectScalar(t, d3fdx(1.0), 6.0);
    expectScalar(t, d4fdx(1.0), 0.0);
  }),

  snippet(`${AD} › Computing gradients in a linear logistic regression`, 'grad(loss, argnums) for W, b and (W, b)', (t) => {
    const { W, b } = model();
    expectArray(t, jax.grad(loss, 0)(W, b), W_GRAD, { dtype: 'float32' }); // argnums=0
    expectArray(t, jax.grad(loss)(W, b), W_GRAD); // argnums=0 is the default
    expectScalar(t, jax.grad(loss, 1)(W, b), B_GRAD);
    const [WGrad, bGrad] = jax.grad(loss, [0, 1])(W, b) as jax.Array[];
    expectArray(t, WGrad, W_GRAD);
    expectScalar(t, bGrad, B_GRAD);
  }),

  snippet(`${AD} › Differentiating with respect to nested lists, tuples, and dicts`, "grad(loss2)({'W': W, 'b': b})", (t) => {
    const { W, b } = model();
    const loss2 = (params: { W: jax.Array; b: jax.Array }) => loss(params.W, params.b);
    const grads = jax.grad(loss2)({ W, b }) as { W: jax.Array; b: jax.Array };
    t.deepEqual(Object.keys(grads).sort(), ['W', 'b']);
    expectArray(t, grads.W, W_GRAD, { dtype: 'float32' });
    expectScalar(t, grads.b, B_GRAD, { dtype: 'float32' });
  }),

  snippet(`${AD} › Evaluating a function and its gradient using jax.value_and_grad`, 'loss value 2.9729187', (t) => {
    const { W, b } = model();
    const [lossValue, WbGrad] = jax.valueAndGrad(loss, [0, 1])(W, b) as [jax.Array, jax.Array[]];
    expectScalar(t, lossValue, 2.9729187);
    expectScalar(t, loss(W, b), 2.9729187);
    expectArray(t, WbGrad[0], W_GRAD);
    expectScalar(t, WbGrad[1], B_GRAD);
  }),

  snippet(`${AD} › Checking against numerical differences`, 'b_grad_numerical -0.6890297; W_dirderiv numerical 1.3041496, autodiff 1.3006744', (t) => {
    const { key, W, b } = model();
    const eps = 1e-4;
    const bGradNumerical = jnp.divide(jnp.subtract(loss(W, jnp.add(b, eps / 2)), loss(W, jnp.subtract(b, eps / 2))), eps);
    // a float32 difference over eps=1e-4 moves by ~2e-3 per ulp of the loss: the printed digits are rounding noise
    expectScalar(t, bGradNumerical, -0.6890297, { atol: 5e-3 });
    expectScalar(t, jax.grad(loss, 1)(W, b), B_GRAD);
    const [, subkey] = random.split(key);
    const vec = random.normal(subkey!, [...W.shape]);
    const unitvec = jnp.divide(vec, jnp.sqrt(jnp.vdot(vec, vec)));
    const WGradNumerical = jnp.divide(
      jnp.subtract(loss(jnp.add(W, jnp.multiply(eps / 2, unitvec)), b), loss(jnp.subtract(W, jnp.multiply(eps / 2, unitvec)), b)), eps);
    expectScalar(t, WGradNumerical, 1.3041496, { atol: 5e-3 });
    expectScalar(t, jnp.vdot(jax.grad(loss)(W, b) as jax.Array, unitvec), 1.3006744);
  }),

  todo(`${AD} › Checking against numerical differences`, 'jax.test_util.check_grads(loss, (W, b), order=2) passes: check_grads is not public in jaxon (test/helpers/check-grads.ts only)'),

  snippet(`${COOKBOOK} › Jacobians and Hessians using jacfwd and jacrev`, 'jacfwd and jacrev of predict w.r.t. W, shape (4, 3)', (t) => {
    const { W, b } = model();
    const f = (W: jax.Array) => predict(W, b, inputs());
    const J = [
      [0.05069415, 0.1091874, 0.07506633],
      [0.14170025, -0.17390487, 0.02415345],
      [0.12579198, 0.01451446, -0.31447992],
      [0.00574409, -0.0193281, 0.01078958],
    ];
    expectArray(t, jax.jacfwd(f)(W), J, { atol: 2e-7 });
    expectArray(t, jax.jacrev(f)(W), J, { atol: 2e-7 });
  }),

  snippet(`${COOKBOOK} › Jacobians and Hessians using jacfwd and jacrev`, 'jacrev of predict_dict with container types', (t) => {
    const { W, b } = model();
    const predictDict = (params: { W: jax.Array; b: jax.Array }, inputs: jax.Array) => predict(params.W, params.b, inputs);
    const JDict = jax.jacrev(predictDict)({ W, b }, inputs()) as { W: jax.Array; b: jax.Array };
    expectArray(t, JDict.W, [
      [0.05069415, 0.10918741, 0.07506634],
      [0.14170025, -0.17390487, 0.02415345],
      [0.12579198, 0.01451446, -0.31447995],
      [0.00574409, -0.0193281, 0.01078958],
    ], { atol: 2e-7 });
    expectArray(t, JDict.b, [0.09748876, 0.16102302, 0.24190766, 0.00776229], { atol: 2e-7 });
  }),

  snippet(`${COOKBOOK} › Jacobians and Hessians using jacfwd and jacrev`, 'hessian = jacfwd(jacrev(f)), shape (4, 3, 3)', (t) => {
    const { W, b } = model();
    const f = (W: jax.Array) => predict(W, b, inputs());
    const hessian = (f: (W: jax.Array) => jax.Array) => jax.jacfwd(jax.jacrev(f));
    expectArray(t, hessian(f)(W), [
      [[0.02058932, 0.04434624, 0.03048803], [0.04434623, 0.09551499, 0.06566654], [0.03048803, 0.06566655, 0.04514575]],
      [[-0.0743913, 0.09129842, -0.01268033], [0.09129842, -0.11204806, 0.01556223], [-0.01268034, 0.01556223, -0.00216142]],
      [[0.01176856, 0.00135791, -0.02942139], [0.00135791, 0.00015668, -0.00339478], [-0.0294214, -0.00339478, 0.07355348]],
      [[-0.00418412, 0.014079, -0.00785936], [0.014079, -0.04737393, 0.02644569], [-0.00785936, 0.02644569, -0.01476286]],
    ], { atol: 2e-7 });
  }),

  snippet(`${COOKBOOK} › Vector-valued gradients with VJPs`, 'vgrad(lambda x: 3*x**2, jnp.ones((2, 2))) is [[6. 6.] [6. 6.]]', (t) => {
    const vgrad = (f: (x: jax.Array) => jax.Array, x: jax.Array) => {
      const [y, vjpFn] = jax.vjp(f, x);
      return vjpFn(jnp.ones([...(y as jax.Array).shape]))[0];
    };
    expectArray(t, vgrad((x) => jnp.multiply(3, jnp.power(x, 2)), jnp.ones([2, 2])), [[6, 6], [6, 6]], { dtype: 'float32' });
  }),

  snippet(`${COOKBOOK} › Hessian-vector products using both forward- and reverse-mode`, 'forward-over-reverse hvp matches tensordot(hessian(f)(X), V, 2)', (t) => {
    const hvp = (f: (x: jax.Array) => jax.Array, primals: jax.Array[], tangents: jax.Array[]) => jax.jvp(jax.grad(f), primals, tangents)[1] as jax.Array;
    const f = (X: jax.Array) => jnp.sum(jnp.power(jnp.tanh(X), 2));
    const [, subkey1, subkey2] = random.split(random.key(0), 3);
    // the page's X and V are 30x40; 6x8 keeps the full Hessian small, and the claim is the same
    const X = random.normal(subkey1!, [6, 8]);
    const V = random.normal(subkey2!, [6, 8]);
    const ans1 = hvp(f, [X], [V]);
    const ans2 = jnp.tensordot(jax.hessian(f)(X) as jax.Array, V, 2);
    t.true(jnp.allclose(ans1, ans2, { rtol: 1e-4, atol: 1e-4 }).item()); // True
    // reverse-over-reverse, written with grad of a vdot, agrees too
    const hvpRevrev = (f: (x: jax.Array) => jax.Array, [x]: jax.Array[], [v]: jax.Array[]) =>
      jax.grad((x: jax.Array) => jnp.vdot(jax.grad(f)(x) as jax.Array, v!))(x) as jax.Array;
    t.true(jnp.allclose(ans1, hvpRevrev(f, [X], [V]), { rtol: 1e-4, atol: 1e-4 }).item());
  }),

  snippet(`${COOKBOOK} › Jacobian-Matrix and Matrix-Jacobian products`, 'vmapped and looped matrix-Jacobian products are identical', (t) => {
    const { W, b } = model();
    const f = (W: jax.Array) => predict(W, b, inputs());
    const loopMjp = (f: (x: jax.Array) => jax.Array, x: jax.Array, M: jax.Array) => {
      const [, vjpFun] = jax.vjp(f, x);
      return jnp.vstack([...M].map((mi) => vjpFun(mi)[0] as jax.Array));
    };
    const vmapMjp = (f: (x: jax.Array) => jax.Array, x: jax.Array, M: jax.Array) => {
      const [, vjpFun] = jax.vjp(f, x);
      const [outs] = jax.vmap(vjpFun)(M) as jax.Array[];
      return outs!;
    };
    const U = random.normal(random.key(0), [16, 4]); // the page uses 128 covectors
    t.true(jnp.allclose(loopMjp(f, W, U), vmapMjp(f, W, U)).item(), 'Vmap and non-vmapped Matrix-Jacobian Products should be identical');
  }),

  snippet(`${COOKBOOK} › Jacobian-Matrix and Matrix-Jacobian products`, 'vmapped and looped Jacobian-matrix products are identical', (t) => {
    const { W, b } = model();
    const f = (W: jax.Array) => predict(W, b, inputs());
    const loopJmp = (f: (x: jax.Array) => jax.Array, W: jax.Array, M: jax.Array) =>
      jnp.vstack([...M].map((mi) => jax.jvp(f, [W], [mi])[1] as jax.Array));
    const vmapJmp = (f: (x: jax.Array) => jax.Array, W: jax.Array, M: jax.Array) =>
      jax.vmap((s: jax.Array) => jax.jvp(f, [W], [s])[1] as jax.Array)(M) as jax.Array;
    const S = random.normal(random.key(0), [16, 3]); // the page uses 128 vectors
    t.true(jnp.allclose(loopJmp(f, W, S), vmapJmp(f, W, S)).item(), 'Vmap and non-vmapped Jacobian-Matrix products should be identical');
  }),

  snippet(`${COOKBOOK} › The implementation of jacfwd and jacrev`, 'our_jacrev and our_jacfwd (vmap over a basis) match the built-ins', (t) => {
    const { W, b } = model();
    const f = (W: jax.Array) => predict(W, b, inputs());
    const ourJacrev = (f: (x: jax.Array) => jax.Array) => (x: jax.Array) => {
      const [y, vjpFun] = jax.vjp(f, x);
      const [J] = jax.vmap(vjpFun, 0)(jnp.eye((y as jax.Array).shape[0]!)) as jax.Array[];
      return J!;
    };
    const ourJacfwd = (f: (x: jax.Array) => jax.Array) => (x: jax.Array) => {
      const jvp1 = (s: jax.Array) => jax.jvp(f, [x], [s])[1] as jax.Array;
      const Jt = jax.vmap(jvp1, 1)(jnp.eye(x.shape[0]!)) as jax.Array;
      return jnp.transpose(Jt);
    };
    t.true(jnp.allclose(jax.jacrev(f)(W) as jax.Array, ourJacrev(f)(W)).item(), 'Incorrect reverse-mode Jacobian results!');
    t.true(jnp.allclose(jax.jacfwd(f)(W) as jax.Array, ourJacfwd(f)(W)).item(), 'Incorrect forward-mode Jacobian results!');
  }),

  snippet(`${COOKBOOK} › The implementation of jacfwd and jacrev`, 'jit of a VJP: (Array(3.1415927),) for pi * x at 4.0', (t) => {
    // JAX's f branches with `if x < 3` under vjp's concrete tracers and takes the `except ValueError` path; JS cannot
    // trace a comparison (README), so jaxon raises there. The value-dependent branch written with lax.cond:
    const f = (x: jax.Array) => lax.cond(jnp.less(x, 3), (v: jax.Array) => jnp.multiply(2, jnp.power(v, 3)), (v: jax.Array) => jnp.multiply(jnp.pi, v), x) as jax.Array;
    const [, fVjp] = jax.vjp(f, 4.0);
    // Python's 1. is a float; the bare-JS-number form is the failing snippet below
    const out = jax.jit(fVjp)(jnp.array(1.0, { dtype: 'float32' })) as jax.Array[];
    t.is(out.length, 1);
    expectScalar(t, out[0], 3.1415927);
    const fJs = (x: jax.Array) => ((x as unknown as number) < 3 ? jnp.multiply(2, jnp.power(x, 3)) : jnp.multiply(jnp.pi, x));
    t.throws(() => jax.vjp(fJs, 4.0), { name: 'TracerBoolConversionError' });
  }),

  // jit treats a bare JS number argument as a weak float (API.md, "JS numbers"), so the cookbook's jit(f_vjp)(1.)
  // works as in JAX, which prints (Array(3.1415927, dtype=float32, weak_type=True),).
  snippet(`${COOKBOOK} › The implementation of jacfwd and jacrev`, 'jit(f_vjp)(1.) with a bare JS number cotangent is (3.1415927,)', (t) => {
    const [, fVjp] = jax.vjp((x: jax.Array) => jnp.multiply(jnp.pi, x), 4.0);
    const out = jax.jit(fVjp)(1.0) as jax.Array[];
    expectScalar(t, out[0], 3.1415927, { dtype: 'float32' });
  }),

  todo(`${COOKBOOK} › Complex numbers and differentiation`, 'grad of C -> R functions and holomorphic=True (e.g. check(seed) prints True three times): complex dtypes are missing'),

  snippet(`${BASICS} › JAX first transformation: grad`, 'sum_of_squares(x) is 30.0; its grad is [2. 4. 6. 8.]', (t) => {
    const sumOfSquares = (x: jax.Array) => jnp.sum(jnp.power(x, 2));
    const sumOfSquaresDx = jax.grad(sumOfSquares);
    const x = jnp.asarray([1.0, 2.0, 3.0, 4.0]);
    expectScalar(t, sumOfSquares(x), 30.0);
    expectArray(t, sumOfSquaresDx(x), [2, 4, 6, 8], { dtype: 'float32' });
  }),

  snippet(`${BASICS} › JAX first transformation: grad`, 'grad of sum_squared_error w.r.t. x and with argnums=(0, 1)', (t) => {
    const sumSquaredError = (x: jax.Array, y: jax.Array) => jnp.sum(jnp.power(jnp.subtract(x, y), 2));
    const x = jnp.asarray([1.0, 2.0, 3.0, 4.0]);
    const y = jnp.asarray([1.1, 2.1, 3.1, 4.1]);
    const dx = [-0.20000005, -0.19999981, -0.19999981, -0.19999981];
    expectArray(t, jax.grad(sumSquaredError)(x, y), dx);
    const [gx, gy] = jax.grad(sumSquaredError, [0, 1])(x, y) as jax.Array[];
    expectArray(t, gx, dx);
    expectArray(t, gy, dx.map((v) => -v));
  }),

  snippet(`${BASICS} › Value and Grad`, 'value_and_grad(sum_squared_error)(x, y) is (0.03999995, [-0.2 ...])', (t) => {
    const sumSquaredError = (x: jax.Array, y: jax.Array) => jnp.sum(jnp.power(jnp.subtract(x, y), 2));
    const [value, grad] = jax.valueAndGrad(sumSquaredError)(jnp.asarray([1.0, 2.0, 3.0, 4.0]), jnp.asarray([1.1, 2.1, 3.1, 4.1]));
    expectScalar(t, value, 0.03999995);
    expectArray(t, grad, [-0.20000005, -0.19999981, -0.19999981, -0.19999981]);
  }),

  snippet(`${BASICS} › Auxiliary data`, 'grad of a pair raises "Gradient only defined for scalar-output functions"; has_aux returns it', (t) => {
    const sumSquaredError = (x: jax.Array, y: jax.Array) => jnp.sum(jnp.power(jnp.subtract(x, y), 2));
    const squaredErrorWithAux = (x: jax.Array, y: jax.Array) => [sumSquaredError(x, y), jnp.subtract(x, y)];
    const x = jnp.asarray([1.0, 2.0, 3.0, 4.0]);
    const y = jnp.asarray([1.1, 2.1, 3.1, 4.1]);
    t.throws(() => jax.grad(squaredErrorWithAux)(x, y), { instanceOf: TypeError, message: /Gradient only defined for scalar-output functions/ });
    const [grad, aux] = jax.grad(squaredErrorWithAux, { hasAux: true })(x, y) as jax.Array[];
    expectArray(t, grad, [-0.20000005, -0.19999981, -0.19999981, -0.19999981]);
    expectArray(t, aux, [-0.10000002, -0.0999999, -0.0999999, -0.0999999]);
  }),

  snippet(`${BASICS} › Differences from NumPy`, 'x[0] = 123 raises; x.at[0].set(123) gives [123 2 3] and leaves y as [1 2 3]', (t) => {
    const inPlaceModify = (x: jax.Array) => {
      (x as unknown as number[])[0] = 123;
      return null;
    };
    t.throws(() => inPlaceModify(jnp.array([1, 2, 3], { dtype: 'int32' })), { instanceOf: TypeError, message: /immutable/ });
    const jaxInPlaceModify = (x: jax.Array) => x.at(0).set(123);
    const y = jnp.array([1, 2, 3], { dtype: 'int32' });
    expectArray(t, jaxInPlaceModify(y), [123, 2, 3], { dtype: 'int32' });
    expectArray(t, y, [1, 2, 3], { dtype: 'int32' });
  }),

  snippet(`${ADVANCED} › Higher-order derivatives`, 'hessian(f) = jacfwd(grad(f)) of jnp.dot(x, x) is 2 * I', (t) => {
    const hessian = (f: (x: jax.Array) => jax.Array) => jax.jacfwd(jax.grad(f));
    const f = (x: jax.Array) => jnp.dot(x, x);
    expectArray(t, hessian(f)(jnp.array([1.0, 2.0, 3.0])), [[2, 0, 0], [0, 2, 0], [0, 0, 2]], { dtype: 'float32' });
  }),

  snippet(`${ADVANCED} › Stopping gradients`, 'TD(0): the naive update is [2.4 -2.4 2.4]; with stop_gradient [-2.4 -4.8 2.4]', (t) => {
    const valueFn = (theta: jax.Array, state: jax.Array) => jnp.dot(theta, state);
    const theta = jnp.array([0.1, -0.1, 0.0]);
    // an example transition
    const sTm1 = jnp.array([1.0, 2.0, -1.0]);
    const rT = jnp.array(1.0);
    const sT = jnp.array([2.0, 1.0, 0.0]);
    const tdLossNaive = (theta: jax.Array, sTm1: jax.Array, rT: jax.Array, sT: jax.Array) => {
      const vTm1 = valueFn(theta, sTm1);
      const target = jnp.add(rT, valueFn(theta, sT));
      return jnp.power(jnp.subtract(target, vTm1), 2);
    };
    expectArray(t, jax.grad(tdLossNaive)(theta, sTm1, rT, sT), [2.4, -2.4, 2.4]);
    const tdLoss = (theta: jax.Array, sTm1: jax.Array, rT: jax.Array, sT: jax.Array) => {
      const vTm1 = valueFn(theta, sTm1);
      const target = jnp.add(rT, valueFn(theta, sT));
      return jnp.power(jnp.subtract(lax.stopGradient(target), vTm1), 2);
    };
    expectArray(t, jax.grad(tdLoss)(theta, sTm1, rT, sT), [-2.4, -4.8, 2.4]);
  }),

  snippet(`${ADVANCED} › Straight-through estimator using stop_gradient`, 'f(3.2) = straight_through_f(3.2) = 3.0; grads 0.0 and 1.0', (t) => {
    const f = (x: jax.Array) => jnp.round(x); // non-differentiable
    const straightThroughF = (x: jax.Array) => jnp.add(x, lax.stopGradient(jnp.subtract(f(x), x)));
    expectScalar(t, f(jnp.array(3.2)), 3.0);
    expectScalar(t, straightThroughF(jnp.array(3.2)), 3.0);
    expectScalar(t, jax.grad(f)(3.2), 0.0);
    expectScalar(t, jax.grad(straightThroughF)(3.2), 1.0);
  }),

  snippet(`${ADVANCED} › Per-example gradients`, 'jit(vmap(grad(td_loss), in_axes=(None, 0, 0, 0))) gives one row per example', (t) => {
    const valueFn = (theta: jax.Array, state: jax.Array) => jnp.dot(theta, state);
    const tdLoss = (theta: jax.Array, sTm1: jax.Array, rT: jax.Array, sT: jax.Array) => {
      const vTm1 = valueFn(theta, sTm1);
      const target = jnp.add(rT, valueFn(theta, sT));
      return jnp.power(jnp.subtract(lax.stopGradient(target), vTm1), 2);
    };
    const perexGrads = jax.jit(jax.vmap(jax.grad(tdLoss), [null, 0, 0, 0]));
    const sTm1 = jnp.array([1.0, 2.0, -1.0]);
    const rT = jnp.array(1.0);
    const sT = jnp.array([2.0, 1.0, 0.0]);
    const out = perexGrads(jnp.array([0.1, -0.1, 0.0]), jnp.stack([sTm1, sTm1]), jnp.stack([rT, rT]), jnp.stack([sT, sT]));
    expectArray(t, out, [[-2.4, -4.8, 2.4], [-2.4, -4.8, 2.4]], { dtype: 'float32' });
  }),

  snippet(`${ADVANCED} › Custom derivative rules`, 'grad of the naive log(1 + exp(x)) at 100. is nan; with a custom_jvp rule (log1pexp) it is 1.0', (t) => {
    const naive = (x: jax.Array) => jnp.log(jnp.add(1, jnp.exp(x)));
    expectScalar(t, jax.grad(naive)(100), NaN);
    const log1pexp = jax.customJvp((x: jax.Array) => jnp.log(jnp.add(1, jnp.exp(x))));
    log1pexp.defjvp(([x]: jax.Array[], [xDot]: jax.Array[]) => [
      log1pexp(x!),
      jnp.multiply(jnp.subtract(1, jnp.divide(1, jnp.add(1, jnp.exp(x!)))), xDot!),
    ]);
    expectScalar(t, jax.grad(log1pexp)(100), 1.0);
    expectScalar(t, jax.jit(jax.grad(log1pexp))(100), 1.0);
  }),
];
