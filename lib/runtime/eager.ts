// The eager interpreter: the bottom of the trace stack (Autodidax's
// EvalTrace), installed into core at load (core/bind.ts calls it for every
// primitive no trace processes). A primitive is checked by its abstract-eval
// rule, lowered alone to a kernel plan (compiler/lower.ts) and run by the
// backend of the device its operands agree on (placement.ts); primitives
// that are programs rather than one kernel (scan, while, cond, checkpoint)
// run through their registered implementation instead.
import { Array } from '../core/array.js';
import { type Interpreter, installEagerInterpreter } from '../core/bind.js';
import { Storage } from '../core/memory.js';
import { type Primitive, type PrimitiveParams, type ShapedArray, abstractEval, avalKey } from '../core/primitives.js';
import { type LowerTarget, type Plan, lowerPrimitive } from '../compiler/lower.js';
import { controlFlowImpl } from './eager-control-flow.js';
import { computationDevice, onDevice } from './placement.js';

/** The eager implementation of a primitive that is a program rather than one kernel. */
export type Impl<P extends Primitive> = (inputs: Array[], params: PrimitiveParams[P]) => Array[];

const impls: { [P in Primitive]?: Impl<P> } = {};

/**
 * Registers the eager implementation of a primitive that does not lower to a
 * kernel plan (scan, while, cond run their jaxprs as programs; checkpoint,
 * registered by transforms/remat-rules.ts, evaluates its jaxpr); the eager
 * interpreter consults it before lowering. The compiler treats such
 * primitives as opaque calls.
 */
export function registerImpl<P extends Primitive>(prim: P, impl: Impl<P>): void {
  (impls as Record<string, unknown>)[prim] = impl;
}

/** Whether a primitive runs through a registered implementation instead of a kernel. */
export function hasImpl(prim: Primitive): boolean {
  return impls[prim] !== undefined;
}

registerImpl('scan', controlFlowImpl('scan'));
registerImpl('while', controlFlowImpl('while'));
registerImpl('cond', controlFlowImpl('cond'));

/**
 * Eager plans by target, primitive, operand avals and params, so a repeated op (the same shapes and params) skips
 * lowering, and its kernel objects stay the same, which the backends' caches key on first. Numbers are written
 * exactly (JSON would merge NaN, the infinities and null, and -0 with 0). Bounded: oldest first out.
 */
const plans = new Map<string, Plan>();
const PLAN_CACHE_SIZE = 4096;

function exactKey(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? `#${Object.is(v, -0) ? '-0' : String(v)}` : v));
}

/** Params without fields (most elementwise primitives) skip JSON. */
function paramsKey(params: object): string {
  for (const _ in params) return exactKey(params);
  return '{}';
}

function planFor<P extends Primitive>(prim: P, avals: readonly ShapedArray[], outAvals: ShapedArray[], params: PrimitiveParams[P], target: LowerTarget): Plan {
  let key: string;
  try {
    key = `${target}|${prim}`;
    for (const a of avals) key += `|${avalKey(a)}`;
    key += `|${paramsKey(params as object)}`;
  } catch {
    return lowerPrimitive(prim, avals as ShapedArray[], outAvals, params, target); // params that do not serialize: lower each time
  }
  let plan = plans.get(key);
  if (!plan) {
    plan = lowerPrimitive(prim, avals as ShapedArray[], outAvals, params, target);
    if (plans.size >= PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value!);
    plans.set(key, plan);
  }
  return plan;
}

export const eagerInterpreter: Interpreter = {
  apply(prim, inputs, params) {
    const impl = impls[prim] as Impl<typeof prim> | undefined;
    if (impl) return impl(inputs, params);
    const device = computationDevice(`lax.${prim}`, inputs);
    const placed = inputs.map((x) => onDevice(x, device));
    try {
      const operands = placed.map((p) => p.array);
      const storages = operands.map((x) => x.storage(`lax.${prim}`));
      const avals = operands.map((x) => x.aval);
      const outAvals = abstractEval[prim](avals, params);
      const backend = device.backend;
      const plan = planFor(prim, avals, outAvals, params, backend.platform);
      const buffers = backend.execute(plan, storages.map((s) => s.buffer), outAvals);
      const committed = inputs.some((x) => x.committed);
      return outAvals.map((a, i) => {
        const aliased = plan.aliases.get(i);
        const storage = aliased !== undefined ? storages[aliased]!.retain() : new Storage(backend, buffers[i]!);
        return new Array(storage, a.shape, a.dtype, a.weakType, a.memorySpace ?? 'device', committed);
      });
    } finally {
      for (const p of placed) if (p.moved) p.array.dispose();
    }
  },
};

installEagerInterpreter(eagerInterpreter);
