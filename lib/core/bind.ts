// Applying a primitive. In eager mode (the only mode until tracing exists),
// bind checks operands with the primitive's abstract-eval rule, lowers the
// single primitive to a kernel plan, and runs it on the operands' device.
// Tracing replaces the interpreter that bind dispatches to; the API layers
// above only ever call bind.
import { lowerPrimitive } from '../compiler/lower.js';
import { findTopMain, fullRaise } from '../trace/core.js';
import { defaultDevice } from '../runtime/device.js';
import { computationDevice, onDevice } from '../runtime/placement.js';
import { Array } from './array.js';
import { type DType } from './dtype.js';
import { packValues } from './host.js';
import { Storage } from './memory.js';
import { type Primitive, type PrimitiveParams, abstractEval } from './primitives.js';

export interface Interpreter {
  apply<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array[];
}

/** The eager implementation of a primitive that is a program rather than one kernel (control flow). */
export type Impl<P extends Primitive> = (inputs: Array[], params: PrimitiveParams[P]) => Array[];

const impls: { [P in Primitive]?: Impl<P> } = {};

/**
 * Registers the eager implementation of a primitive that does not lower to a
 * kernel plan (scan, while, cond run their jaxprs per iteration); the eager
 * interpreter consults it before lowering. The compiler must treat such
 * primitives as opaque calls (see `hasImpl`).
 */
export function registerImpl<P extends Primitive>(prim: P, impl: Impl<P>): void {
  (impls as Record<string, unknown>)[prim] = impl;
}

/** Whether a primitive runs through a registered implementation instead of a kernel. */
export function hasImpl(prim: Primitive): boolean {
  return impls[prim] !== undefined;
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

let interpreter: Interpreter = eagerInterpreter;

/** Installs an interpreter (tracing does this) and returns the previous one. */
export function setInterpreter(next: Interpreter): Interpreter {
  const previous = interpreter;
  interpreter = next;
  return previous;
}

export function bind<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array[] {
  const main = findTopMain(inputs);
  if (!main) return interpreter.apply(prim, inputs, params);
  const trace = main.trace();
  const tracers = inputs.map((x) => fullRaise(trace, x));
  return trace.processPrimitive(prim, tracers, params).map((t) => t.fullLower());
}

export function bind1<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array {
  return bind(prim, inputs, params)[0]!;
}

/** A new array holding `values` (already validated), on the default device. */
export function arrayFromValues(values: ArrayLike<number | boolean>, shape: readonly number[], dtype: DType, weakType = false): Array {
  const backend = defaultDevice().backend;
  return new Array(new Storage(backend, backend.fromHost(packValues(values, dtype))), shape, dtype, weakType);
}

/** A new array from raw storage bytes. */
export function arrayFromBytes(bytes: Uint8Array, shape: readonly number[], dtype: DType, weakType = false, device = defaultDevice()): Array {
  const backend = device.backend;
  return new Array(new Storage(backend, backend.fromHost(bytes)), shape, dtype, weakType);
}
