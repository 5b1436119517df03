// Applying a primitive, after Autodidax's `bind`: the trace stack decides
// whether some trace processes the primitive (a tracer among the operands,
// or the dynamic trace jit installs); if none does, the bottom interpreter
// evaluates it. Both are installed from above while modules load, so core
// imports nothing above it: lib/trace installs the trace stack
// (trace/core.ts), lib/runtime the eager interpreter (runtime/eager.ts:
// abstract eval, lower to a kernel plan, run on the operands' device). The
// API layers above only ever call bind.
import { Array, runtimeDevices } from './array.js';
import { type DType } from './dtype.js';
import { storageBytesOf } from './host.js';
import { Storage } from './memory.js';
import { type Primitive, type PrimitiveParams } from './primitives.js';

/** Evaluates primitives on concrete arrays: the bottom of the trace stack. */
export interface Interpreter {
  apply<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array[];
}

/** What core asks the trace layer (lib/trace/core.ts): does some trace own this primitive application? */
export interface TraceStack {
  /** The outputs, lowered back to the caller's level, when a trace processes the primitive; null when none does (evaluate at the bottom). */
  process<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array[] | null;
}

// `var`, and no initializer: both are installed by modules that may finish loading before this one does
// (modules importing each other); a `let` would not exist yet then, and an initializer would reset them.
// eslint-disable-next-line no-var
var traceStack: TraceStack | undefined;
// eslint-disable-next-line no-var
var bottom: Interpreter | undefined;

/** Installs the trace stack (lib/trace does this at load; until then no tracer can exist). */
export function installTraceStack(stack: TraceStack): void {
  traceStack = stack;
}

/** Installs the eager interpreter (lib/runtime does this at load). */
export function installEagerInterpreter(eager: Interpreter): void {
  bottom = eager;
}

function bottomInterpreter(): Interpreter {
  if (!bottom) throw new Error('jaxon: internal error: the runtime (runtime/eager.ts) has not installed the eager interpreter; import jaxon (lib/index) rather than lib/core directly');
  return bottom;
}

/** Replaces the bottom interpreter (tests swap in the reference interpreter) and returns the one it replaced. */
export function setInterpreter(next: Interpreter): Interpreter {
  const previous = bottomInterpreter();
  bottom = next;
  return previous;
}

export function bind<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array[] {
  return traceStack?.process(prim, inputs, params) ?? bottomInterpreter().apply(prim, inputs, params);
}

export function bind1<P extends Primitive>(prim: P, inputs: Array[], params: PrimitiveParams[P]): Array {
  return bind(prim, inputs, params)[0]!;
}

/** A new array holding `values` (already validated), on the default device. */
export function arrayFromValues(values: ArrayLike<number | boolean>, shape: readonly number[], dtype: DType, weakType = false): Array {
  const backend = runtimeDevices().defaultDevice().backend;
  return new Array(new Storage(backend, backend.fromHost(storageBytesOf(values, dtype))), shape, dtype, weakType);
}

/** A new array from raw storage bytes (on the default device unless `device` says otherwise). */
export function arrayFromBytes(bytes: Uint8Array, shape: readonly number[], dtype: DType, weakType = false, device = runtimeDevices().defaultDevice()): Array {
  const backend = device.backend;
  return new Array(new Storage(backend, backend.fromHost(bytes)), shape, dtype, weakType);
}
