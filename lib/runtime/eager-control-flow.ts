// Eager scan, while and cond (registered by eager.ts, the eager interpreter,
// which consults them before lowering): the equation is staged as a
// one-equation jaxpr and run as a compiled program, so eager control flow
// takes the same path as control flow inside jit: loops stay loops over
// nested programs of their bodies (compiler/plan.ts, cpu-executable.ts,
// cuda-executable.ts), with xs read and ys written in place.
import type { Array } from '../core/array.js';
import { bind } from '../core/bind.js';
import { type Primitive, type PrimitiveParams, type ShapedArray, avalKey } from '../core/primitives.js';
import { traceToJaxpr } from '../trace/jaxpr-trace.js';
import type { ProgramExecutable } from './backend.js';
import { lostArrays } from './cuda-health.js';
import type { Device } from './device.js';
import { computationDevice, onDevice } from './placement.js';
import { compileForDevice } from './program.js';


/** Programs per equation: keyed by the params object (which holds the jaxprs), the operand avals and the device. */
const programs = new WeakMap<object, Map<string, ProgramExecutable>>();
const deviceKey = (d: Device) => `${d.platform}${d.id}`;

/** The eager implementation of a control-flow primitive: its one-equation program, compiled once per operand types and device. */
export function controlFlowImpl<P extends 'scan' | 'while' | 'cond'>(primitive: P) {
  return (inputs: Array[], params: PrimitiveParams[P]): Array[] => {
    const avals = inputs.map((x) => x.aval);
    let byAvals = programs.get(params);
    if (!byAvals) programs.set(params, (byAvals = new Map()));
    const device = computationDevice(`lax.${primitive}`, inputs);
    const key = `${deviceKey(device)}|${avals.map(avalKey).join(';')}`;
    let executable = byAvals.get(key);
    // constants traced on a device whose state was lost since are gone: trace again
    if (!executable || lostArrays(executable.plan.consts as Array[])) {
      const closed = traceToJaxpr((...xs: Array[]) => bind(primitive as Primitive, xs, params as never), avals);
      executable = compileForDevice(device, closed.jaxpr, closed.consts.map((c) => onDevice(c, device).array), undefined, `lax.${primitive}`);
      byAvals.set(key, executable);
    }
    const placed = inputs.map((x) => onDevice(x, device));
    try {
      return executable.run(placed.map((p) => p.array), executable.plan.consts as Array[]);
    } finally {
      for (const p of placed) if (p.moved) p.array.dispose();
    }
  };
}
