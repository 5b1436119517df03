// Eager scan, while and cond (registered with core/bind.ts's `registerImpl`,
// which the eager interpreter consults before lowering): the equation is
// staged as a one-equation jaxpr and run as a compiled program, so eager
// control flow takes the same path as control flow inside jit — loops stay
// loops over nested programs of their bodies (compiler/plan.ts,
// compiler/executable.ts), with xs read and ys written in place.
import type { Array } from '../../core/array.js';
import { bind, registerImpl } from '../../core/bind.js';
import type { Primitive, PrimitiveParams, ShapedArray } from '../../core/primitives.js';
import { type Executable, compileJaxpr } from '../../compiler/executable.js';
import { defaultDevice } from '../../runtime/device.js';
import { traceToJaxpr } from '../../trace/jaxpr-trace.js';

const avalKey = (a: ShapedArray) => `${a.dtype}${a.weakType ? '~' : ''}[${a.shape.join(',')}]${(a as { memorySpace?: string }).memorySpace ?? ''}`;

/** Programs per equation: keyed by the params object (which holds the jaxprs) and the operand avals. */
const programs = new WeakMap<object, Map<string, Executable>>();

function impl<P extends 'scan' | 'while' | 'cond'>(primitive: P) {
  return (inputs: Array[], params: PrimitiveParams[P]): Array[] => {
    const avals = inputs.map((x) => x.aval);
    let byAvals = programs.get(params);
    if (!byAvals) programs.set(params, (byAvals = new Map()));
    const key = avals.map(avalKey).join(';');
    let executable = byAvals.get(key);
    if (!executable) {
      const closed = traceToJaxpr((...xs: Array[]) => bind(primitive as Primitive, xs, params as never), avals);
      executable = compileJaxpr(closed.jaxpr, closed.consts);
      byAvals.set(key, executable);
    }
    return executable.run(inputs, executable.plan.consts as Array[], defaultDevice().backend);
  };
}

registerImpl('scan', impl('scan'));
registerImpl('while', impl('while'));
registerImpl('cond', impl('cond'));
