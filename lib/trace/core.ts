// The trace stack, after JAX's Autodidax: every transformation is an
// interpreter (a Trace) over primitives; tracers carry the interpreter's
// values. `bind` (core/bind.ts) asks the trace stack installed here: the
// highest-level trace among the operands (or the dynamic trace that jit
// installs, so constants are staged too) gets every operand raised into it
// and processes the primitive. Eager evaluation (runtime/eager.ts) is the
// bottom of the stack and needs no tracer. Core knows only the small
// TraceStack interface it calls, so it imports nothing from this layer.
import { Array } from '../core/array.js';
import { installTraceStack } from '../core/bind.js';
import type { DType } from '../core/dtype.js';
import { UnexpectedTracerError } from '../core/errors.js';
import type { Primitive, PrimitiveParams, ShapedArray } from '../core/primitives.js';

export interface Trace {
  readonly main: MainTrace;
  /** Wraps a value of a lower level (a concrete Array) as this trace's tracer. */
  pure(x: Array): Tracer;
  /** Wraps a tracer of a lower-level trace. */
  lift(x: Tracer): Tracer;
  processPrimitive<P extends Primitive>(prim: P, tracers: Tracer[], params: PrimitiveParams[P]): Tracer[];
}

export class MainTrace {
  constructor(
    readonly level: number,
    readonly name: string,
    readonly create: (main: MainTrace) => Trace,
    public globalData: unknown = undefined,
  ) {}
  trace(): Trace {
    return this.create(this);
  }
}

const stack: MainTrace[] = [];
let dynamic: MainTrace | null = null;

/** Runs fn with a new main trace on top of the stack. */
export function withMainTrace<T>(name: string, create: (main: MainTrace) => Trace, fn: (main: MainTrace) => T, globalData?: unknown): T {
  const main = new MainTrace(stack.length + 1, name, create, globalData);
  stack.push(main);
  try {
    return fn(main);
  } finally {
    stack.pop();
  }
}

/** Runs fn with `main` as the dynamic trace: every primitive, even on constants, goes to it (jit's omnistaging). */
export function withDynamicTrace<T>(main: MainTrace, fn: () => T): T {
  const previous = dynamic;
  dynamic = main;
  try {
    return fn();
  } finally {
    dynamic = previous;
  }
}

/** An abstract array of some trace. Tracers are Arrays, so every jnp function accepts them. */
export abstract class Tracer extends Array {
  abstract readonly trace: Trace;
  constructor(aval: ShapedArray) {
    super(null, aval.shape, aval.dtype, aval.weakType, aval.memorySpace ?? 'device');
  }
  override get isTracer(): boolean {
    return true;
  }
  /** The value handed back to lower levels once this trace is done with it. */
  fullLower(): Array {
    return this;
  }
  override toString(): string {
    return `Traced<${shortDtype(this.dtype)}[${this.shape.join(',')}]>with<${this.trace.main.name}>`;
  }
  override toRepr(): string {
    return this.toString();
  }
}

function shortDtype(d: DType): string {
  return { bool: 'bool', int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32', float16: 'f16', bfloat16: 'bf16', float32: 'f32', float64: 'f64' }[d];
}

/** The main trace that should process a primitive over these operands, or null for eager evaluation. */
export function findTopMain(inputs: readonly Array[]): MainTrace | null {
  let top: MainTrace | null = dynamic;
  for (const x of inputs) {
    if (x instanceof Tracer) {
      const m = x.trace.main;
      if (!stack.includes(m)) {
        throw new UnexpectedTracerError(
          `Encountered an unexpected tracer. A function transformed by jit, grad or vmap had a side effect, allowing for a reference ` +
            `to an intermediate value with type ${x.dtype}[${x.shape.join(',')}] wrapped in a ${m.name}r (${x}) to escape the scope of ` +
            `the transformation: an escaped tracer, used after the transformation that made it returned. Transformations require that ` +
            `functions explicitly return their outputs: return values from the transformed function instead of storing them outside it`,
        );
      }
      if (!top || m.level > top.level) top = m;
    }
  }
  return top;
}

export function fullRaise(trace: Trace, x: Array): Tracer {
  if (!(x instanceof Tracer)) return trace.pure(x);
  const level = trace.main.level;
  if (x.trace.main === trace.main) return x;
  if (x.trace.main.level < level) return trace.lift(x);
  throw new UnexpectedTracerError(
    `Encountered an unexpected tracer: ${x} (level ${x.trace.main.level}) cannot be lifted into ${trace.main.name} (level ${level}), ` +
      `the trace of a transformation it does not belong to`,
  );
}

/** Whether `main` is still on the trace stack (its tracers are live; a transformation that finished is not). */
export function isActive(main: MainTrace): boolean {
  return stack.includes(main);
}

export function currentLevel(): number {
  return stack.length;
}

// bind's question to the trace layer: which trace, if any, processes this primitive?
installTraceStack({
  process(prim, inputs, params) {
    const main = findTopMain(inputs);
    if (!main) return null;
    const trace = main.trace();
    const tracers = inputs.map((x) => fullRaise(trace, x));
    return trace.processPrimitive(prim, tracers, params).map((t) => t.fullLower());
  },
});
