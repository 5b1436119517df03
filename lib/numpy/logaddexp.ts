// jnp.logaddexp and jnp.logaddexp2: log(exp(x1) + exp(x2)) without overflow,
// with JAX's custom_jvp (jax/_src/lax/other.py): the tangent is
// t1 * exp(x1 - out) + t2 * exp(x2 - out) with +inf replaced by 0 on both
// sides, so the derivative at (inf, inf) is (1/2, 1/2) and NaN where JAX's is.
import type { Array, ArrayLike } from '../core/array.js';
import * as lax from '../lax/ops.js';
import { customJvp } from '../transforms/custom-derivatives.js';
import { broadcastAll, promoteInexact } from './util.js';

function constant(value: number, like: Array): Array {
  return lax.broadcastInDim(lax.convertElementType(value, like.dtype), [...like.shape], []);
}

/** JAX's _replace_inf: +inf becomes 0. */
function replaceInf(x: Array): Array {
  return lax.select(lax.eq(x, constant(Infinity, x)), constant(0, x), x);
}

function logaddexpBody(base2: boolean) {
  return (x1: Array, x2: Array): Array => {
    const amax = lax.max(x1, x2);
    const delta = lax.sub(x1, x2);
    const negAbs = lax.neg(lax.abs(delta));
    const tail = base2 ? lax.mul(constant(1 / Math.LN2, amax), lax.log1p(lax.exp2(negAbs))) : lax.log1p(lax.exp(negAbs));
    // a NaN delta means a NaN input or infinities of one sign: x1 + x2 gives NaN or that infinity
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), lax.add(amax, tail));
  };
}

function withJvp(name: string, base2: boolean) {
  const body = logaddexpBody(base2);
  const exp = base2 ? lax.exp2 : lax.exp;
  const f = customJvp(function logaddexp(x1: Array, x2: Array): Array {
    return body(x1, x2);
  });
  f.defjvp(([x1, x2]: Array[], [t1, t2]: Array[]) => {
    const out = body(x1!, x2!);
    const r = replaceInf(out);
    return [out, lax.add(lax.mul(t1!, exp(lax.sub(replaceInf(x1!), r))), lax.mul(t2!, exp(lax.sub(replaceInf(x2!), r))))];
  });
  return (x1: ArrayLike, x2: ArrayLike): Array => {
    const fn = `jnp.${name}`;
    const [a, b] = broadcastAll(fn, ...promoteInexact(fn, x1, x2));
    return f(a!, b!) as Array;
  };
}

/** jnp.logaddexp(x1, x2) = log(exp(x1) + exp(x2)), computed without overflow; ints give float32. */
export const logaddexp = withJvp('logaddexp', false);
/** jnp.logaddexp2(x1, x2) = log2(2**x1 + 2**x2), computed without overflow; ints give float32. */
export const logaddexp2 = withJvp('logaddexp2', true);
