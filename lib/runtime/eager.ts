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
import { type Primitive, type PrimitiveParams, abstractEval } from '../core/primitives.js';
import { lowerPrimitive } from '../compiler/lower.js';
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

export const eagerInterpreter: Interpreter = {
  apply(prim, inputs, params) {
    const impl = impls[prim] as Impl<typeof prim> | undefined;
    if (impl) return impl(inputs, params);
    const device = computationDevice(`lax.${prim}`, inputs);
    const placed = inputs.map((x) => onDevice(x, device));
    try {
      const operands = placed.map((p) => p.array);
      const storages = operands.map((x) => x.storage(`lax.${prim}`));
      const outAvals = abstractEval[prim](operands.map((x) => x.aval), params);
      const backend = device.backend;
      const plan = lowerPrimitive(prim, operands.map((x) => x.aval), outAvals, params);
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
