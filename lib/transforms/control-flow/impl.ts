// Eager implementations of scan, while and cond (registered with
// core/bind.ts's `registerImpl`, which the eager interpreter consults before
// lowering): loops stay loops, running their jaxprs once per iteration. A
// jaxpr without nested control flow is compiled once into one fused program
// (compiler/executable.ts, the machinery jit uses) and run per iteration;
// otherwise its equations are evaluated one by one. A scan step runs
// `unroll` iterations (slicing xs inside the step), and the ys are stacked
// once at the end by a tree of concatenations.
import { Array } from '../../core/array.js';
import { arrayFromValues, bind1, registerImpl } from '../../core/bind.js';
import { tidy } from '../../core/memory.js';
import type { PrimitiveParams, ShapedArray } from '../../core/primitives.js';
import { compileJaxpr } from '../../compiler/executable.js';
import { defaultDevice } from '../../runtime/device.js';
import { type ClosedJaxpr, evalJaxpr } from '../../trace/jaxpr.js';
import { traceToJaxpr } from '../../trace/jaxpr-trace.js';
import { zerosLike } from '../jvp.js';
import { usesControlFlow } from './jaxprs.js';

type Runner = (args: Array[]) => Array[];

/**
 * Runs a closed jaxpr on concrete arrays: compiled when it is one program,
 * else equation by equation. The outputs are new Arrays, distinct from the
 * arguments and from each other, owned by the caller.
 */
function makeRunner(closed: ClosedJaxpr): Runner {
  const backend = defaultDevice().backend;
  if (backend.platform === 'cpu' && !usesControlFlow(closed.jaxpr)) {
    const executable = compileJaxpr(closed.jaxpr, backend);
    return (args) => executable.run(args, closed.consts);
  }
  return (args) => {
    const outs = tidy(() => evalJaxpr(closed.jaxpr, closed.consts, args));
    // every output a new Array of the caller's, even where the jaxpr returns an input or one value twice
    const seen = new Set<Array>([...args, ...closed.consts]);
    return outs.map((o) => {
      if (!seen.has(o)) {
        seen.add(o);
        return o;
      }
      return new Array(o.storage('lax control flow').retain(), o.shape, o.dtype, o.weakType);
    });
  };
}

const runners = new WeakMap<object, Map<string, Runner>>();

function cachedRunner(owner: object, key: string, make: () => ClosedJaxpr): Runner {
  let byKey = runners.get(owner);
  if (!byKey) runners.set(owner, (byKey = new Map()));
  let runner = byKey.get(key);
  if (!runner) byKey.set(key, (runner = makeRunner(make())));
  return runner;
}

/** Disposes the arrays of `old` that are neither kept (`next`) nor the caller's inputs. */
function release(old: readonly Array[], next: readonly Array[], inputs: readonly Array[]): void {
  const keep = new Set<Array>([...next, ...inputs]);
  for (const x of new Set(old)) if (!keep.has(x) && !x.isDisposed) x.dispose();
}

/** Fresh output Arrays (new objects, each holding its own reference, with the primitive's avals); the intermediates are disposed. */
function finish(values: readonly Array[], avals: readonly ShapedArray[], inputs: readonly Array[]): Array[] {
  const outs = values.map((v, i) => {
    const a = avals[i]!;
    return new Array(v.storage('lax control flow').retain(), a.shape, a.dtype, a.weakType);
  });
  release(values, [], inputs);
  return outs;
}

const int32 = (v: number): Array => arrayFromValues([v], [], 'int32');

/**
 * The step of a scan: (t, ...consts, ...carry, ...xs) → [...carry, ...ys of
 * k iterations], iteration t + j reading xs at element t + j (or
 * length - 1 - t - j when reversed).
 */
function scanStep(params: PrimitiveParams['scan'], k: number): ClosedJaxpr {
  const { jaxpr, length, numConsts, numCarry, reverse } = params;
  const inAvals = jaxpr.inAvals;
  const xAvals = inAvals.slice(numConsts + numCarry);
  const stepAvals = [{ shape: [], dtype: 'int32', weakType: false } as ShapedArray, ...inAvals.slice(0, numConsts + numCarry), ...xAvals.map((a) => ({ ...a, shape: [length, ...a.shape] }))];
  return traceToJaxpr((t, ...rest) => {
    const consts = rest.slice(0, numConsts);
    let carry = rest.slice(numConsts, numConsts + numCarry);
    const xs = rest.slice(numConsts + numCarry);
    const ys: Array[] = [];
    for (let j = 0; j < k; j++) {
      const index = reverse ? bind1('sub', [int32(length - 1 - j), t!], {}) : j === 0 ? t! : bind1('add', [t!, int32(j)], {});
      const x = xs.map((v, i) => {
        const zeros = xAvals[i]!.shape.map(() => int32(0));
        const slice = bind1('dynamic_slice', [v, index, ...zeros], { sliceSizes: [1, ...xAvals[i]!.shape] });
        return bind1('reshape', [slice], { newSizes: [...xAvals[i]!.shape] });
      });
      const outs = evalJaxpr(jaxpr.jaxpr, jaxpr.consts, [...consts, ...carry, ...x]);
      carry = outs.slice(0, numCarry);
      ys.push(...outs.slice(numCarry));
    }
    return [...carry, ...ys];
  }, stepAvals);
}

/** Stacks arrays of one aval along a new leading axis (concatenations of at most 16 operands at a time). */
function stack(items: Array[], aval: ShapedArray): Array {
  if (items.length === 0) return zerosLike({ ...aval, shape: [0, ...aval.shape] });
  return tidy(() => {
    let level = items.map((y) => bind1('reshape', [y], { newSizes: [1, ...aval.shape] }));
    while (level.length > 1) {
      const next: Array[] = [];
      for (let i = 0; i < level.length; i += 16) {
        const group = level.slice(i, i + 16);
        next.push(group.length === 1 ? group[0]! : bind1('concatenate', group, { dimension: 0 }));
      }
      level = next;
    }
    return level[0]!;
  });
}

function scanImpl(inputs: Array[], params: PrimitiveParams['scan']): Array[] {
  const { jaxpr, length, numConsts, numCarry, unroll } = params;
  const consts = inputs.slice(0, numConsts);
  const xs = inputs.slice(numConsts + numCarry);
  const yAvals = jaxpr.outAvals.slice(numCarry);
  let carry = inputs.slice(numConsts, numConsts + numCarry);
  const ys: Array[][] = yAvals.map(() => new globalThis.Array<Array>(length));
  for (let t = 0; t < length;) {
    const k = Math.min(unroll, length - t);
    const step = cachedRunner(jaxpr, `${k}|${length}|${params.reverse}|${numConsts}|${numCarry}`, () => scanStep(params, k));
    const start = int32(t);
    const outs = step([start, ...consts, ...carry, ...xs]);
    start.dispose();
    const next = outs.slice(0, numCarry);
    release(carry, next, inputs);
    carry = next;
    for (let j = 0; j < k; j++) {
      const element = params.reverse ? length - 1 - (t + j) : t + j;
      yAvals.forEach((_, i) => (ys[i]![element] = outs[numCarry + j * yAvals.length + i]!));
    }
    t += k;
  }
  const stacked = ys.map((list, i) => {
    const s = stack(list, yAvals[i]!);
    release(list, [], inputs);
    return s;
  });
  const carryAvals = inputs.slice(numConsts, numConsts + numCarry).map((x) => x.aval);
  return [...finish(carry, carryAvals, inputs), ...stacked];
}

function whileImpl(inputs: Array[], params: PrimitiveParams['while']): Array[] {
  const { condJaxpr, bodyJaxpr, condNconsts, bodyNconsts } = params;
  const condConsts = inputs.slice(0, condNconsts);
  const bodyConsts = inputs.slice(condNconsts, condNconsts + bodyNconsts);
  const init = inputs.slice(condNconsts + bodyNconsts);
  const cond = cachedRunner(condJaxpr, 'cond', () => condJaxpr);
  const body = cachedRunner(bodyJaxpr, 'body', () => bodyJaxpr);
  let carry = init;
  for (;;) {
    const [pred] = cond([...condConsts, ...carry]);
    const go = Boolean(pred!.dataSync()[0]);
    pred!.dispose();
    if (!go) break;
    const next = body([...bodyConsts, ...carry]);
    release(carry, next, inputs);
    carry = next;
  }
  return finish(carry, init.map((x) => x.aval), inputs);
}

function condImpl(inputs: Array[], params: PrimitiveParams['cond']): Array[] {
  const [index, ...operands] = inputs as [Array, ...Array[]];
  const n = params.branches.length;
  const i = Math.min(Math.max(Number(index.dataSync()[0]), 0), n - 1);
  const branch = params.branches[i]!;
  const outs = cachedRunner(branch, 'branch', () => branch)(operands);
  const avals = params.branches[0]!.outAvals.map((a, k) => ({ ...a, weakType: params.branches.every((b) => b.outAvals[k]!.weakType) }));
  return finish(outs, avals, inputs);
}

registerImpl('scan', scanImpl);
registerImpl('while', whileImpl);
registerImpl('cond', condImpl);
