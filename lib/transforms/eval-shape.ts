// jax.eval_shape: the types of f's outputs, found by tracing f on abstract
// arguments (trace/jaxpr-trace.ts) without running anything. Arguments are
// pytrees of Arrays, ShapeDtypeStructs (whose sharding's memory kind is the
// argument's memory space) or other objects with a shape and a dtype, numbers
// and TypedArrays; outputs come back as
// ShapeDtypeStructs, with a SingleDeviceSharding when they live in a memory
// kind other than the default 'device'.
import { Array } from '../core/array.js';
import { isArrayLike, isShapeDtypeLike, shapeDtypeAval, toArray } from '../core/coerce.js';
import { canonicalizeDType } from '../core/dtype.js';
import { show } from '../core/errors.js';
import { flatten, type PyTree, unflatten } from '../core/pytree.js';
import type { ShapedArray } from '../core/primitives.js';
import { ShapeDtypeStruct } from '../sharding/shape-dtype-struct.js';
import { defaultDevice } from '../runtime/device.js';
import { SingleDeviceSharding } from '../sharding/index.js';
import { flattenFunction, traceToJaxpr } from '../trace/jaxpr-trace.js';

function argumentAval(leaf: unknown, i: number): ShapedArray {
  if (leaf instanceof ShapeDtypeStruct) return leaf.aval;
  // JAX duck-types its arguments: any other object with a shape and a dtype stands for an array of that type
  if (isShapeDtypeLike(leaf)) return shapeDtypeAval('jax.evalShape', leaf, `argument leaf ${i}`);
  // a bare JS number is a weak float, as jit traces it (API.md, "JS numbers"): evalShape gives what jit would
  if (typeof leaf === 'number') return { shape: [], dtype: 'float32', weakType: true };
  // a float64 Array made while x64 was on is traced as float32 once it is off, as jit traces it
  if (leaf instanceof Array) return { ...leaf.aval, dtype: canonicalizeDType(leaf.dtype) };
  if (!isArrayLike(leaf)) throw new TypeError(`jax.evalShape: argument leaf ${i} must be an Array, a ShapeDtypeStruct, a number or a TypedArray, got ${show(leaf)}`);
  const x = toArray('jax.evalShape', leaf, `argument leaf ${i}`);
  const aval = x.aval;
  x.dispose();
  return aval;
}

/** The ShapeDtypeStructs of fn(...args)'s outputs (a pytree like its result); fn is traced, not run. */
export function evalShape(fn: (...args: never[]) => unknown, ...args: unknown[]): PyTree<ShapeDtypeStruct> {
  if (typeof fn !== 'function') throw new TypeError(`jax.evalShape: fn must be a function, got ${show(fn)}`);
  const [leaves, inTree] = flatten(args as PyTree);
  const avals = leaves.map(argumentAval);
  const { flat, outTree } = flattenFunction(fn, inTree);
  const closed = traceToJaxpr(flat, avals);
  // the trace's references to concrete constants are not needed: nothing runs
  for (const c of closed.consts) if (!c.isTracer) c.dispose();
  const outs = closed.outAvals.map((a) => {
    const kind = a.memorySpace ?? 'device';
    const sharding = kind === 'device' ? null : new SingleDeviceSharding(defaultDevice(), { memoryKind: kind });
    return new ShapeDtypeStruct(a.shape, a.dtype, { sharding, weakType: a.weakType });
  });
  return unflatten(outTree(), outs);
}
