// jax.jacfwd, jax.jacrev (jax.jacobian) and jax.hessian, built as JAX builds
// them: forward mode pushes a basis of tangents through jvp under vmap,
// reverse mode pulls a basis of cotangents back through vjp under vmap. The
// result has the outputs' structure, each leaf holding the differentiated
// arguments' structure (one argument, or a list for a list of argnums), each
// array of shape out.shape + in.shape, as in JAX.
import { Array } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { isFloating } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { flatten, numLeaves, type PyTree, type TreeDef, unflatten } from '../core/pytree.js';
import { bind1 } from '../core/bind.js';
import type { DType } from '../core/dtype.js';
import { jvp, scalar } from './jvp.js';
import { vjp, vjpWithAux } from './vjp.js';
import { vmap } from './vmap.js';
import { wraps } from './signature.js';

// the few lax operations this file needs, bound directly (transforms sit below lax)
const lax = {
  iota: (shape: number[], dimension: number) => bind1('iota', [], { dtype: 'int32', shape, dimension }),
  eq: (a: Array, b: Array) => bind1('eq', [a, b], {}),
  convertElementType: (x: Array, newDtype: DType) => bind1('convert_element_type', [x], { newDtype, weakType: false }),
  reshape: (x: Array, newSizes: number[]) => bind1('reshape', [x], { newSizes }),
  broadcastInDim: (x: Array, shape: number[], broadcastDimensions: number[]) => bind1('broadcast_in_dim', [x], { shape, broadcastDimensions }),
  transpose: (x: Array, permutation: number[]) => bind1('transpose', [x], { permutation }),
};

export interface JacobianOptions {
  /** Which positional arguments to differentiate (default 0); a list gives a list per output leaf. */
  argnums?: number | number[];
  /** fn returns [output, aux]; aux comes back beside the Jacobian. */
  hasAux?: boolean;
}

type Fn = (...args: never[]) => unknown;

function jacobianOptions(fn: string, argnums: number | number[] | JacobianOptions | undefined, options: JacobianOptions | undefined): JacobianOptions {
  const o = typeof argnums === 'number' || globalThis.Array.isArray(argnums) ? { ...(options ?? {}), argnums } : (argnums ?? {});
  checkOptions(fn, o, ['argnums', 'hasAux']);
  return o;
}

/** The argnums as a list, checked against the call; `single` when one int was given. */
function argnumList(fn: string, argnums: number | number[] | undefined, count: number): { nums: number[]; single: boolean } {
  const single = !globalThis.Array.isArray(argnums);
  const nums = (single ? [argnums ?? 0] : argnums) as number[];
  for (const n of nums) {
    if (!Number.isInteger(n) || n < -count || n >= count) throw new ValueError(`${fn}: argnums ${show(argnums)} is out of range for a call with ${count} arguments`);
  }
  return { nums: nums.map((n) => (n < 0 ? n + count : n)), single };
}

/** fn of the differentiated arguments only, the others fixed at their values. */
function partial(f: Fn, args: unknown[], nums: number[]): (...diff: unknown[]) => unknown {
  return (...diff: unknown[]) => {
    const all = [...args];
    nums.forEach((n, i) => (all[n] = diff[i]));
    return (f as (...a: unknown[]) => unknown)(...all);
  };
}

function floatLeaves(fn: string, what: string, leaves: Array[]): void {
  for (const l of leaves) {
    if (!isFloating(l.dtype)) throw new TypeError(`${fn}: ${what} must have a floating dtype, got ${l.dtype}[${l.shape.join(',')}] (convert with .astype('float32'))`);
  }
}

/** The rows of an identity of size n, shaped [n, ...shape]: the basis pushed or pulled through. */
function basis(shape: readonly number[], dtype: Array['dtype']): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  const rows = lax.iota([n, n], 0);
  const cols = lax.iota([n, n], 1);
  return lax.reshape(lax.convertElementType(lax.eq(rows, cols), dtype), [n, ...shape]);
}

/** Per output leaf, the argument structure with one Jacobian block per input leaf. */
function assemble(outDef: TreeDef, inDefs: TreeDef[], single: boolean, blocks: Array[][]): unknown {
  const perOutput = blocks.map((row) => {
    let k = 0;
    const trees = inDefs.map((def) => {
      const leaves = row.slice(k, k + numLeaves(def));
      k += numLeaves(def);
      return unflatten(def, leaves);
    });
    return single ? trees[0] : trees;
  });
  return unflatten(outDef, perOutput as PyTree[]);
}

function flattenArgs(fn: string, diff: unknown[]): { leaves: Array[]; defs: TreeDef[] } {
  const defs: TreeDef[] = [];
  const leaves: Array[] = [];
  for (const d of diff) {
    const [ls, def] = flatten(d as PyTree);
    defs.push(def);
    // a bare JS number is a weak float, as grad and vjp take it (API.md, "JS numbers")
    leaves.push(...ls.map((l, i) => (typeof l === 'number' ? scalar(l, 'float32') : toArray(fn, l, `argument leaf ${i}`))));
  }
  return { leaves, defs };
}

/** What jacrev and jacfwd share for one call: the differentiated arguments, flattened, and fn of those alone. */
interface Call {
  fn: string;
  single: boolean;
  diff: unknown[];
  inLeaves: Array[];
  inDefs: TreeDef[];
  /** fn of the differentiated arguments only, the others fixed */
  g: Fn;
  hasAux: boolean;
}

/** A Jacobian transformation: checks f and the options once, and each call's argnums and argument dtypes; `build` gives [jacobian, aux]. */
function jacobianTransform(fn: string, f: Fn, argnums: number | number[] | JacobianOptions | undefined, maybeOptions: JacobianOptions | undefined, build: (c: Call) => [unknown, unknown]) {
  if (typeof f !== 'function') throw new TypeError(`${fn}: fn must be a function, got ${show(f)}`);
  const options = jacobianOptions(fn, argnums, maybeOptions);
  return wraps((...args: unknown[]): unknown => {
    const { nums, single } = argnumList(fn, options.argnums, args.length);
    const diff = nums.map((n) => args[n]);
    const { leaves: inLeaves, defs: inDefs } = flattenArgs(fn, diff);
    floatLeaves(fn, 'differentiated arguments', inLeaves);
    const [jac, aux] = build({ fn, single, diff, inLeaves, inDefs, g: partial(f, args, nums) as Fn, hasAux: options.hasAux === true });
    return options.hasAux ? [jac, aux] : jac;
  }, f);
}

/** The float output leaves of a result and their structure. */
function outputLeaves(fn: string, out: unknown): { outs: Array[]; outDef: TreeDef } {
  const [outLeaves, outDef] = flatten(out as PyTree);
  const outs = outLeaves.map((l, i) => toArray(fn, l, `output leaf ${i}`));
  floatLeaves(fn, 'outputs', outs);
  return { outs, outDef };
}

/** A block takes the weak type of the leaf JAX unravels it against (_possible_downcast): jacrev's input leaf, jacfwd's output leaf. */
function withWeakType(block: Array, example: Array): Array {
  return block.weakType === example.weakType ? block : bind1('convert_element_type', [block], { newDtype: block.dtype, weakType: example.weakType });
}

const zerosOf = (fn: string, x: Array) => lax.broadcastInDim(lax.convertElementType(toArray(fn, 0), x.dtype), [...x.shape], []);

/** jax.jacrev(f, argnums?, options?): reverse mode, one vjp, vmapped over the outputs' basis. */
export function jacrev(f: Fn, argnums?: number | number[] | JacobianOptions, maybeOptions?: JacobianOptions): (...args: unknown[]) => unknown {
  return jacobianTransform('jax.jacrev', f, argnums, maybeOptions, ({ fn, single, diff, inLeaves, inDefs, g, hasAux }) => {
    const [out, pullback, aux] = hasAux ? vjpWithAux(g, ...diff) : [...vjp(g, ...diff), undefined];
    const { outs, outDef } = outputLeaves(fn, out);
    const blocks = outs.map((y, i) => {
      const cotangents = (e: Array) => unflatten(outDef, outs.map((o, k) => (k === i ? e : zerosOf(fn, o))));
      const rows = vmap((e: Array) => flatten(pullback(cotangents(e)) as PyTree)[0] as Array[])(basis(y.shape, y.dtype)) as Array[];
      return rows.map((r, j) => withWeakType(lax.reshape(r, [...y.shape, ...inLeaves[j]!.shape]), inLeaves[j]!));
    });
    return [assemble(outDef, inDefs, single, blocks), aux];
  });
}

/** jax.jacfwd(f, argnums?, options?): forward mode, jvp vmapped over the inputs' basis. */
export function jacfwd(f: Fn, argnums?: number | number[] | JacobianOptions, maybeOptions?: JacobianOptions): (...args: unknown[]) => unknown {
  return jacobianTransform('jax.jacfwd', f, argnums, maybeOptions, ({ fn, single, inLeaves, inDefs, g, hasAux }) => {
    const trees = (leaves: Array[]) => inDefs.map((def, a) => unflatten(def, leaves.slice(offset(inDefs, a), offset(inDefs, a) + numLeaves(def))));
    const primals = trees(inLeaves);
    const zeros = inLeaves.map((x) => zerosOf(fn, x));
    // one forward pass (no tangents) for the structure, the values and aux
    const result = (g as (...a: unknown[]) => unknown)(...primals);
    const [out, aux] = hasAux ? (result as [unknown, unknown]) : [result, undefined];
    const gOut = hasAux ? (...a: unknown[]) => ((g as (...b: unknown[]) => unknown)(...a) as [unknown, unknown])[0] : g;
    const { outs, outDef } = outputLeaves(fn, out);
    const pushOut = (j: number) => (e: Array) => {
      const [, t] = jvp(gOut as Fn, primals, trees(zeros.map((z, k) => (k === j ? e : z)))) as [unknown, unknown];
      return flatten(t as PyTree)[0] as Array[];
    };
    // columns[j][i]: d out_i / d in_j, shaped [size_j, ...out_i.shape]
    const columns = inLeaves.map((x, j) => vmap(pushOut(j))(basis(x.shape, x.dtype)) as Array[]);
    const blocks = outs.map((y, i) =>
      inLeaves.map((x, j) => {
        const moved = lax.transpose(columns[j]![i]!, [...y.shape.map((_, d) => d + 1), 0]);
        return withWeakType(lax.reshape(moved, [...y.shape, ...x.shape]), y);
      }),
    );
    return [assemble(outDef, inDefs, single, blocks), aux];
  });
}

function offset(defs: TreeDef[], a: number): number {
  return defs.slice(0, a).reduce((n, d) => n + numLeaves(d), 0);
}

/** jax.jacobian: jacrev. */
export const jacobian = jacrev;

/** jax.hessian(f, argnums?, options?): jacfwd of jacrev. */
export function hessian(f: Fn, argnums?: number | number[] | JacobianOptions, maybeOptions?: JacobianOptions): (...args: unknown[]) => unknown {
  const options = jacobianOptions('jax.hessian', argnums, maybeOptions);
  return jacfwd(jacrev(f, options) as Fn, options);
}
