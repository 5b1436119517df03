// Lifetime of array storage in JS: reference-counted device buffers (arrays
// that share a buffer, like a reshape and its source, each hold a reference),
// `tidy` scopes, a live-array count for leak tests, and a
// FinalizationRegistry that frees what was forgotten (a backstop, not the plan).
import type { Backend, DeviceBuffer } from '../runtime/backend.js';
import { DeviceLostError, ResourceExhaustedError } from './errors.js';

/** Bytes held by live arrays' buffers (Device.memoryStats); a compiled program's temporaries are not counted. */
const bufferStats = { bytesInUse: 0, peakBytesInUse: 0, numAllocs: 0, largestAllocSize: 0 };

export function storageStats(): Readonly<typeof bufferStats> {
  return { ...bufferStats };
}

/** A device buffer shared by the arrays that view it. */
export class Storage {
  #refs = 1;
  readonly #nbytes: number;
  constructor(
    readonly backend: Backend,
    readonly buffer: DeviceBuffer,
  ) {
    this.#nbytes = buffer.nbytes;
    bufferStats.bytesInUse += this.#nbytes;
    bufferStats.numAllocs++;
    bufferStats.peakBytesInUse = Math.max(bufferStats.peakBytesInUse, bufferStats.bytesInUse);
    bufferStats.largestAllocSize = Math.max(bufferStats.largestAllocSize, this.#nbytes);
  }
  retain(): this {
    this.#refs++;
    return this;
  }
  release(): void {
    if (--this.#refs === 0) {
      bufferStats.bytesInUse -= this.#nbytes;
      this.backend.free(this.buffer);
    }
  }
  get refs(): number {
    return this.#refs;
  }
}

let live = 0;

/** The number of arrays created and not yet disposed (or collected). */
export function liveArrayCount(): number {
  return live;
}

const registry = new FinalizationRegistry<Storage>((storage) => {
  live--;
  storage.release();
});

export interface Disposable {
  dispose(): void;
  readonly isDisposed: boolean;
}

const scopes: Set<Disposable>[] = [];

/**
 * Arrays not yet registered with the FinalizationRegistry, as (array, storage, token) triples. Registering costs
 * V8 more than the rest of a small op's host work (12% of a jitted add's samples, and unregistering on dispose
 * 2% more), and most arrays are disposed within the synchronous job that made them (tidy scopes, intermediates,
 * a loop's results): those are never registered. The rest are registered at the end of the job (a microtask) or
 * once PENDING_LIMIT arrays wait, so a forgotten array is collected at most one job or PENDING_LIMIT arrays late.
 */
const pending: (Disposable | Storage | object)[] = [];
const PENDING_LIMIT = 1024;
const registered = new WeakSet<object>();

function registerPending(): void {
  for (let i = 0; i < pending.length; i += 3) {
    const array = pending[i] as Disposable & object;
    if (array.isDisposed) continue;
    registry.register(array, pending[i + 1] as Storage, pending[i + 2]!);
    registered.add(pending[i + 2]!);
  }
  pending.length = 0;
}

/** Called by Array's constructor: counts it, puts it in the innermost tidy scope. */
export function trackArray(array: Disposable & object, storage: Storage, token: object): void {
  live++;
  if (pending.length === 0) queueMicrotask(registerPending);
  pending.push(array, storage, token);
  if (pending.length >= 3 * PENDING_LIMIT) registerPending();
  scopes[scopes.length - 1]?.add(array);
}

/** Called by Array.dispose. */
export function untrackArray(token: object): void {
  live--;
  if (registered.delete(token)) registry.unregister(token);
}

/**
 * Runs fn and disposes every array created inside it that is not part of its
 * result (arrays anywhere in a returned pytree are kept). Nested tidies work;
 * a kept array moves to the enclosing scope.
 */
export function tidy<T>(fn: () => T): T {
  const scope = new Set<Disposable>();
  scopes.push(scope);
  let result: T;
  try {
    result = fn();
  } catch (error) {
    scopes.pop();
    for (const a of scope) if (!a.isDisposed) a.dispose();
    throw error;
  }
  scopes.pop();
  if (result instanceof Promise) throw new TypeError('jaxon.tidy: fn must be synchronous (it returned a Promise)');
  const parent = scopes[scopes.length - 1];
  // the usual op: it made one array, its result (no walk of the result)
  if (scope.size <= 1 && (scope.size === 0 || scope.has(result as Disposable))) {
    if (scope.size === 1) parent?.add(result as Disposable);
    return result;
  }
  const kept = new Set<unknown>();
  collect(result, kept);
  for (const a of scope) {
    if (kept.has(a)) parent?.add(a);
    else if (!a.isDisposed) a.dispose();
  }
  return result;
}

/**
 * A method that objects holding arrays (tracers of vmap and jvp hold concrete
 * values) define, so a tidy that keeps the object keeps what it holds.
 */
export const heldArrays: unique symbol = Symbol.for('jaxon.heldArrays');

function collect(x: unknown, out: Set<unknown>, depth = 0): void {
  if (x === null || typeof x !== 'object' || depth > 64) return;
  out.add(x);
  if (Array.isArray(x)) for (const v of x) collect(v, out, depth + 1);
  else if (Object.getPrototypeOf(x) === Object.prototype) for (const v of Object.values(x)) collect(v, out, depth + 1);
  const held = (x as { [heldArrays]?: () => unknown[] })[heldArrays];
  if (typeof held === 'function') for (const v of held.call(x)) collect(v, out, depth + 1);
}

/** Keeps an array alive past the enclosing tidy scopes. */
export function keep<T extends Disposable>(array: T): T {
  for (const scope of scopes) scope.delete(array);
  return array;
}

const wrappedOriginals = new WeakMap<object, unknown>();

/** The namespace function disposeIntermediates wrapped into `fn` (lax.reduceWindow knows lax.max by it), else `fn`. */
export function unwrapped<F>(fn: F): F {
  return (wrappedOriginals.get(fn as object) as F | undefined) ?? fn;
}

/**
 * Wraps every function of an API namespace so the intermediates it creates
 * (converted JS scalars, broadcasts, casts) are disposed when it returns, as
 * Python's reference counting frees them in JAX. Non-function members pass through.
 */
export function disposeIntermediates<T extends object>(namespace: T, prefix = ''): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(namespace)) {
    if (typeof value === 'function' && !/^[A-Z]/.test(name)) {
      const fn = value as (...args: unknown[]) => unknown;
      const qualified = `${prefix}${name}`;
      const wrapped = (...args: unknown[]) => {
        // a disposed argument is blamed on the function the user called, not on a primitive deep inside it
        for (const a of args) {
          if (isDisposedArray(a)) usedAfterDispose(a, qualified);
          else if (Array.isArray(a)) for (const b of a) if (isDisposedArray(b)) usedAfterDispose(b, qualified);
        }
        try {
          return tidy(() => fn(...args));
        } catch (error) {
          // out of memory or a lost device deep inside: say which function the user called
          if ((error instanceof ResourceExhaustedError || error instanceof DeviceLostError) && prefix !== '' && !error.message.startsWith(prefix)) error.message = `${qualified}: ${error.message}`;
          throw error;
        }
      };
      Object.defineProperty(wrapped, 'name', { value: name });
      wrappedOriginals.set(wrapped, fn);
      out[name] = wrapped;
    } else {
      out[name] = value;
    }
  }
  return Object.freeze(out) as T;
}

function isDisposedArray(x: unknown): x is { isDisposed: true; storage(fn: string): unknown } {
  return typeof x === 'object' && x !== null && (x as { isDisposed?: unknown }).isDisposed === true && typeof (x as { storage?: unknown }).storage === 'function';
}

function usedAfterDispose(x: { storage(fn: string): unknown }, fn: string): never {
  x.storage(fn); // throws the ReferenceError naming fn
  throw new Error(`jaxon: internal error: ${fn} got a disposed array that still has storage`);
}
