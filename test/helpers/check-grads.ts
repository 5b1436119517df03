// A port of jax.test_util.check_grads: forward mode (jvp) checked against
// central differences, reverse mode (vjp) checked by the inner-product
// identity <t, vjp(c)> = <jvp(t), c>, recursively to the given order (the
// jvp and vjp functions are themselves checked). Unlike JAX, the numerical
// side always runs in float64 on the reference interpreter (inputs cast to
// float64, with jaxEnableX64 on while it runs, so jnp's promotion keeps
// them 64-bit), so it is an oracle independent of the compiled kernels; the
// primal outputs are compared against it too. Tolerances are JAX's
// default_gradient_tolerance (atol = rtol) for the dtype of the output.
import type { ExecutionContext } from 'ava';
import { Array } from '../../lib/core/array.js';
import { arrayFromValues } from '../../lib/core/bind.js';
import { type DType, isFloating } from '../../lib/core/dtype.js';
import { flatten, type PyTree, unflatten } from '../../lib/core/pytree.js';
import { jvp } from '../../lib/transforms/jvp.js';
import { vjp } from '../../lib/transforms/vjp.js';
import '../../lib/index.js';
import { withReference } from './oracle.js';
import { withX64 } from './x64.js';

export type Mode = 'fwd' | 'rev';

export interface CheckGradsOptions {
  order?: number;
  modes?: Mode[];
  atol?: number;
  rtol?: number;
  eps?: number;
}

/** JAX's EPS for check_grads. */
export const EPS = 1e-4;

/** jax._src.public_test_util.default_gradient_tolerance. */
export const GRADIENT_TOLERANCE: Partial<Record<DType, number>> = { float16: 1e-2, bfloat16: 1e-1, float32: 2e-3, float64: 1e-5 };

type Fn = (...args: never[]) => unknown;

/** Deterministic standard normals (mulberry32 + Box-Muller), JAX's rng.randn stand-in. */
export class Rng {
  #state: number;
  constructor(seed = 0) {
    this.#state = seed >>> 0;
  }
  uniform(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let r = Math.imul(this.#state ^ (this.#state >>> 15), 1 | this.#state);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  }
  normal(): number {
    const u = Math.max(this.uniform(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }
}

const leaves = (tree: unknown): Array[] =>
  flatten(tree as PyTree)[0].map((l, i) => {
    if (!(l instanceof Array)) throw new TypeError(`checkGrads: leaf ${i} is not an Array (${String(l)})`);
    return l;
  });

const values = (x: Array): number[] => globalThis.Array.from(x.dataSync() as ArrayLike<number>);

/** A pytree like `tree` with standard-normal leaves of the same shapes and dtypes. */
function randLike(rng: Rng, tree: unknown): unknown {
  const [ls, def] = flatten(tree as PyTree);
  return unflatten(def, ls.map((l) => {
    const x = l as Array;
    return arrayFromValues(globalThis.Array.from({ length: x.size }, () => rng.normal()), x.shape, x.dtype);
  }));
}

/** `tree` with its leaves as float64 arrays holding primal + scale·tangent (computed in float64 on the host). */
function shifted(primals: unknown, tangents: unknown, scale: number): unknown {
  const [ps, def] = flatten(primals as PyTree);
  const ts = leaves(tangents);
  return unflatten(def, ps.map((p, i) => {
    const x = p as Array;
    if (!isFloating(x.dtype)) throw new TypeError(`checkGrads: argument leaf ${i} has dtype ${x.dtype}; close over non-floating arrays instead`);
    const xv = values(x);
    const tv = values(ts[i]!);
    return arrayFromValues(xv.map((v, k) => v + scale * tv[k]!), x.shape, 'float64');
  }));
}

/** f on float64 arguments, on the reference interpreter, with x64 on: float64 stays float64 through jnp's promotion. */
function referenceCall(f: Fn, args: unknown): number[][] {
  return withX64(true, () => withReference(() => leaves((f as (...a: unknown[]) => unknown)(...(args as unknown[]))).map(values)));
}

/** f at the (float64-cast) arguments, on the reference interpreter, as flat float64 leaves. */
function referenceEval(f: Fn, args: unknown[]): number[][] {
  return referenceCall(f, shifted(args, args, 0));
}

/** Central differences (JAX's numerical_jvp), in float64 on the reference interpreter. */
export function numericalJvp(f: Fn, primals: unknown[], tangents: unknown[], eps = EPS): number[][] {
  const pos = referenceCall(f, shifted(primals, tangents, eps));
  const neg = referenceCall(f, shifted(primals, tangents, -eps));
  return pos.map((p, i) => p.map((v, k) => (v - neg[i]![k]!) * (0.5 / eps)));
}

function tolerance(dtype: DType, given: number | undefined): number {
  return given ?? GRADIENT_TOLERANCE[dtype] ?? 0;
}

function checkClose(t: ExecutionContext, actual: Array[], expected: number[][], atol: number | undefined, rtol: number | undefined, what: string): void {
  if (actual.length !== expected.length) {
    t.fail(`${what}: ${actual.length} output leaves, expected ${expected.length}`);
    return;
  }
  actual.forEach((a, i) => {
    const got = values(a);
    const want = expected[i]!;
    const at = tolerance(a.dtype, atol);
    const rt = tolerance(a.dtype, rtol);
    if (got.length !== want.length) {
      t.fail(`${what}: leaf ${i} has ${got.length} values, expected ${want.length}`);
      return;
    }
    for (let k = 0; k < got.length; k++) {
      const [g, w] = [got[k]!, want[k]!];
      if (Number.isNaN(g) && Number.isNaN(w)) continue;
      if (!(Math.abs(g - w) <= at + rt * Math.abs(w))) {
        t.fail(`${what}: leaf ${i} (${a.dtype}[${a.shape.join(',')}]) differs at flat index ${k}: got ${g}, expected ${w} (atol ${at}, rtol ${rt})`);
        return;
      }
    }
  });
}

function innerProduct(xs: unknown, ys: unknown): number {
  const a = leaves(xs);
  const b = leaves(ys);
  let s = 0;
  a.forEach((x, i) => {
    const yv = values(b[i]!);
    values(x).forEach((v, k) => (s += v * yv[k]!));
  });
  return s;
}

function innerProductHost(xs: number[][], ys: unknown): number {
  const b = leaves(ys);
  let s = 0;
  xs.forEach((x, i) => {
    const yv = values(b[i]!);
    x.forEach((v, k) => (s += v * yv[k]!));
  });
  return s;
}

/** JAX's check_jvp: f_jvp(args, tangents) → [out, tangentOut]. */
export function checkJvp(t: ExecutionContext, f: Fn, fJvp: (args: unknown[], tangents: unknown[]) => unknown[], args: unknown[], options: CheckGradsOptions & { message?: string } = {}): void {
  const rng = new Rng(0);
  const tangent = randLike(rng, args) as unknown[];
  const [vOut, tOut] = fJvp(args, tangent);
  const vs = leaves(vOut);
  const ts = leaves(tOut);
  const msg = options.message ?? 'JVP';
  vs.forEach((v, i) => {
    if (ts[i]!.dtype !== v.dtype) t.fail(`${msg}: tangent leaf ${i} has dtype ${ts[i]!.dtype}, primal ${v.dtype}`);
  });
  checkClose(t, vs, referenceEval(f, args), options.atol, options.rtol, `${msg} primal`);
  checkClose(t, ts, numericalJvp(f, args, tangent, options.eps), options.atol, options.rtol, `${msg} tangent`);
}

/** JAX's check_vjp: f_vjp(...args) → [out, pullback]; checks <t, pullback(c)> = <jvp_numerical(t), c>. */
export function checkVjp(t: ExecutionContext, f: Fn, fVjp: (...args: unknown[]) => [unknown, (ct: unknown) => unknown], args: unknown[], options: CheckGradsOptions & { message?: string } = {}): void {
  const rng = new Rng(0);
  const msg = options.message ?? 'VJP';
  const [vOut, pullback] = fVjp(...args);
  const vs = leaves(vOut);
  checkClose(t, vs, referenceEval(f, args), options.atol, options.rtol, `${msg} primal`);
  const tangent = randLike(rng, args) as unknown[];
  const tangentOut = numericalJvp(f, args, tangent, options.eps);
  const cotangent = randLike(rng, vOut);
  const cotangentOut = pullback(cotangent);
  const ip = innerProduct(tangent, cotangentOut);
  const ipExpected = innerProductHost(tangentOut, cotangent);
  const dtype = vs[0]?.dtype ?? 'float64';
  const [at, rt] = [tolerance(dtype, options.atol), tolerance(dtype, options.rtol)];
  if (!(Math.abs(ip - ipExpected) <= at + rt * Math.abs(ipExpected))) {
    t.fail(`${msg} cotangent projection: got ${ip}, expected ${ipExpected} (atol ${at}, rtol ${rt})`);
  }
}

/**
 * jax.test_util.check_grads(f, args, order, modes): checks the derivatives
 * of f at args up to `order`, in forward and/or reverse mode. Every check
 * that passes adds one passing assertion; a failure names the mode chain
 * (e.g. "VJP of JVP tangent").
 */
export function checkGrads(t: ExecutionContext, f: Fn, args: unknown[], options: CheckGradsOptions = {}): void {
  const order = options.order ?? 2;
  const modes = options.modes ?? ['fwd', 'rev'];
  const recurse = (fn: Fn, fnArgs: unknown[], k: number, message: string) => {
    if (modes.includes('fwd')) {
      const fwd = message ? `JVP of ${message}` : 'JVP';
      checkJvp(t, fn, (a, tg) => jvp(fn, a, tg), fnArgs, { ...options, message: fwd });
      if (k > 1) recurse(((primals: unknown[], tangents: unknown[]) => jvp(fn, primals, tangents)) as Fn, [fnArgs, fnArgs], k - 1, fwd);
    }
    if (modes.includes('rev')) {
      const rev = message ? `VJP of ${message}` : 'VJP';
      checkVjp(t, fn, (...a) => vjp(fn, ...a), fnArgs, { ...options, message: rev });
      if (k > 1) {
        const fVjp = (...a: unknown[]) => {
          const [out, pullback] = vjp(fn, ...a);
          return pullback(out);
        };
        recurse(fVjp as Fn, fnArgs, k - 1, rev);
      }
    }
  };
  recurse(f, args, order, '');
  t.pass(`check_grads order ${order} ${modes.join('+')}`);
}
