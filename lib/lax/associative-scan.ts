// lax.associative_scan (jax/_src/lax/control_flow/loops.py) with JAX's
// recursive odd/even scheme (Blelloch-style: combine neighbours, scan the
// half, fill in the evens, interleave), so the combines happen in JAX's order
// and round as JAX's do; elements are any pytree of arrays of one length along
// the axis. lax.cumlogsumexp is the scan of JAX's logaddexp, whose custom jvp
// (t1 e^(x1-out) + t2 e^(x2-out), +inf replaced by 0: NaN where both are -inf, as in JAX) it keeps, so its
// derivative is JAX's _cumulative_jvp_rule.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, type PyTree, type TreeDef, unflatten } from '../core/pytree.js';
import { normalizeAxis } from '../core/shape.js';
import { type CustomJvp, customJvp } from '../transforms/custom-derivatives.js';
import * as ops from './ops.js';

export interface AssociativeScanOptions {
  /** Scan from the end (default false). */
  reverse?: boolean;
  /** The axis to scan along (default 0). */
  axis?: number;
}

function sliceAxis(x: Array, axis: number, start: number, limit: number, stride = 1): Array {
  return ops.sliceInDim(x, start, limit, stride, axis);
}

/** JAX's _interleave: a's elements at even positions, b's at odd ones (pads with zeros, then add, or or for bools). */
function interleave(a: Array, b: Array, axis: number): Array {
  const n = a.ndim;
  const same = a.shape[axis] === b.shape[axis];
  const config = (lo: number, hi: number) => globalThis.Array.from({ length: n }, (_, i) => (i === axis ? [lo, hi, 1] : [0, 0, 0]) as [number, number, number]);
  const pa = ops.pad(a, 0, same ? config(0, 1) : config(0, 0));
  const pb = ops.pad(b, 0, same ? config(1, 0) : config(1, 1));
  return a.dtype === 'bool' ? ops.bitwiseOr(pa, pb) : ops.add(pa, pb);
}

/**
 * jax.lax.associative_scan: the inclusive scan of `elems` (a pytree of arrays, scanned together along `axis`) with
 * the associative `fn`, which takes two such pytrees and returns one.
 */
export function associativeScan<T extends PyTree>(fn: (a: T, b: T) => T, elems: T, options: AssociativeScanOptions = {}): T {
  const api = 'lax.associativeScan';
  checkOptions(api, options, ['reverse', 'axis']);
  if (typeof fn !== 'function') throw new TypeError(`${api}: fn must be a function of two pytrees, got ${show(fn)}`);
  const reverse = options.reverse ?? false;
  if (typeof reverse !== 'boolean') throw new TypeError(`${api}: reverse must be a boolean, got ${show(reverse)}`);
  const [leaves, tree] = flatten(elems) as [unknown[], TreeDef];
  if (leaves.length === 0) throw new ValueError(`${api}: elems must hold at least one array`);
  let flat = leaves.map((l, i) => toArray(api, l, `elems leaf ${i}`));
  if (flat.some((x) => x.ndim === 0)) throw new ValueError(`${api}: every leaf of elems needs rank >= 1, got shapes ${show(flat.map((x) => x.shape))}`);
  const axis = normalizeAxis(api, options.axis ?? 0, flat[0]!.ndim);
  const length = flat[0]!.shape[axis]!;
  if (flat.some((x) => x.ndim <= axis || x.shape[axis] !== length)) {
    throw new ValueError(`${api}: array inputs to associative_scan must have the same first dimension. (saw: ${show(flat.map((x) => x.shape))})`);
  }
  const combine = (a: Array[], b: Array[]): Array[] => {
    const [out, outTree] = flatten(fn(unflatten(tree, a) as T, unflatten(tree, b) as T)) as [unknown[], TreeDef];
    if (out.length !== a.length || !out.every((o) => o instanceof Array)) {
      throw new ValueError(`${api}: fn must return a pytree of ${a.length} arrays like its arguments, got ${show(outTree)}`);
    }
    return out as Array[];
  };
  const scan = (xs: Array[]): Array[] => {
    const n = xs[0]!.shape[axis]!;
    if (n < 2) return xs;
    const reduced = combine(
      xs.map((x) => sliceAxis(x, axis, 0, n - 1, 2)),
      xs.map((x) => sliceAxis(x, axis, 1, n, 2)),
    );
    const odd = scan(reduced);
    const even =
      n % 2 === 0
        ? combine(
            odd.map((x) => sliceAxis(x, axis, 0, x.shape[axis]! - 1)),
            xs.map((x) => sliceAxis(x, axis, 2, n, 2)),
          )
        : combine(
            odd,
            xs.map((x) => sliceAxis(x, axis, 2, n, 2)),
          );
    const withFirst = even.map((e, i) => ops.concatenate([sliceAxis(xs[i]!, axis, 0, 1), e], axis));
    return withFirst.map((e, i) => interleave(e, odd[i]!, axis));
  };
  if (reverse) flat = flat.map((x) => ops.rev(x, [axis]));
  let scanned = scan(flat);
  if (reverse) scanned = scanned.map((x) => ops.rev(x, [axis]));
  return unflatten(tree, scanned) as T;
}

let logaddexpWithJvp: CustomJvp<(a: Array, b: Array) => Array> | null = null;

/** JAX's lax logaddexp (jax/_src/lax/other.py) with its custom jvp. */
function logaddexp(a: Array, b: Array): Array {
  if (!logaddexpWithJvp) {
    const primal = (x1: Array, x2: Array): Array => {
      const delta = ops.sub(x1, x2);
      return ops.select(ops.ne(delta, delta), ops.add(x1, x2), ops.add(ops.max(x1, x2), ops.log1p(ops.exp(ops.neg(ops.abs(delta))))));
    };
    const replaceInf = (x: Array): Array => ops.select(ops.eq(x, Infinity), ops.broadcast(toArray('lax.cumlogsumexp', 0, 'x', x.dtype), [...x.shape]), x);
    const f = customJvp(primal);
    f.defjvp(([x1, x2]: Array[], [t1, t2]: Array[]) => {
      const out = f(x1!, x2!);
      const r = replaceInf(out);
      return [out, ops.add(ops.mul(t1!, ops.exp(ops.sub(replaceInf(x1!), r))), ops.mul(t2!, ops.exp(ops.sub(replaceInf(x2!), r))))];
    });
    logaddexpWithJvp = f;
  }
  return logaddexpWithJvp(a, b);
}

/** jax.lax.cumlogsumexp(operand, { axis, reverse }): log of the cumulative sum of exp, without overflow. */
export function cumlogsumexp(operand: ArrayLike, options: { axis?: number; reverse?: boolean } = {}): Array {
  const api = 'lax.cumlogsumexp';
  checkOptions(api, options, ['axis', 'reverse']);
  const x = toArray(api, operand, 'operand');
  if (x.ndim === 0) throw new ValueError(`${api}: operand must have rank >= 1, got a scalar`);
  if (!isFloating(x.dtype)) throw new TypeError(`${api}: operand must be a floating-point array (logaddexp requires floating-point inputs), got dtype ${x.dtype}`);
  const axis = normalizeAxis(api, options.axis ?? 0, x.ndim);
  return associativeScan(logaddexp, x, { axis, reverse: options.reverse ?? false });
}
