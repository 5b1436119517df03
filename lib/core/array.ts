/// <reference lib="esnext.disposable" preserve="true" />
// jaxon's Array: an immutable n-d array on a device. Operations never consume
// their inputs (JAX semantics); memory is released by dispose(), `using`,
// jaxon.tidy, or, as a backstop, garbage collection. Methods that mirror jnp
// are installed by lib/numpy (registerArrayMethods), and an array's device
// and sharding come from hooks that lib/runtime and lib/sharding install, so
// this file depends on no layer above core (it names their types only).
// The lib reference above stays in array.d.ts, so a user's tsc knows
// Symbol.dispose whatever their `lib` setting.
import type { Backend } from '../runtime/backend.js';
import type { Device } from '../runtime/device.js';
import type { SingleDeviceSharding } from '../sharding/index.js';
import { type DType, itemsize } from './dtype.js';
import { formatArray } from './format.js';
import { type NestedArray, type UserTypedArray, nest, unpackValues } from './host.js';
import { ConcretizationTypeError, TracerBoolConversionError, ValueError } from './errors.js';
import { Storage, trackArray, untrackArray } from './memory.js';
import type { MemoryKind, ShapedArray } from './primitives.js';
import { sizeOf } from './shape.js';

/** Anything jnp functions accept where an array is expected. */
export type ArrayLike = Array | number | boolean | NestedArray | ArrayBufferView;

/**
 * One entry of x.index(...) / x.at(...): an integer, null (a whole axis), a
 * [start, stop, step?] slice, 'newaxis', '...', or an integer index array (an
 * Array, an integer TypedArray, or nested JS arrays such as [[0, 2]]; a flat
 * JS array is always a slice).
 */
export type IndexItem =
  | number | null | [number | null, (number | null)?, (number | null)?] | Array | 'newaxis' | '...'
  | NestedArray[][] | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/** Out-of-bounds handling of x.at(...) (JAX's `mode`): get clamps by default, updates drop. */
export type IndexMode = 'promise_in_bounds' | 'clip' | 'drop' | 'fill';
export interface AtGetOptions { mode?: IndexMode; fillValue?: number | null; indicesAreSorted?: boolean; uniqueIndices?: boolean }
export interface AtUpdateOptions { mode?: IndexMode; indicesAreSorted?: boolean; uniqueIndices?: boolean }

/** The jnp functions Array methods forward to (set by lib/numpy). */
export interface ArrayMethods {
  add(x: Array, y: ArrayLike): Array;
  subtract(x: Array, y: ArrayLike): Array;
  multiply(x: Array, y: ArrayLike): Array;
  divide(x: Array, y: ArrayLike): Array;
  power(x: Array, y: ArrayLike): Array;
  negative(x: Array): Array;
  matmul(x: Array, y: ArrayLike): Array;
  sum(x: Array, options?: object): Array;
  mean(x: Array, options?: object): Array;
  max(x: Array, options?: object): Array;
  min(x: Array, options?: object): Array;
  argmax(x: Array, options?: object): Array;
  reshape(x: Array, shape: number | number[]): Array;
  transpose(x: Array, axes?: number[]): Array;
  astype(x: Array, dtype: DType): Array;
  index(x: Array, items: IndexItem[]): Array;
  at(x: Array, items: IndexItem[]): ArrayAt;
  /** The other jnp functions mirrored as methods (x.std(0), x.cumsum(1), x.clip(0, 1), ...), by name. */
  more: Record<MoreMethod, (x: Array, ...args: unknown[]) => Array>;
}

export type MoreMethod =
  | 'prod' | 'std' | 'var' | 'any' | 'all' | 'argmin' | 'cumsum' | 'cumprod' | 'squeeze' | 'ravel' | 'round' | 'clip'
  | 'dot' | 'repeat' | 'swapaxes' | 'take' | 'copy'
  | 'ptp' | 'sort' | 'argsort' | 'diagonal' | 'nonzero' | 'searchsorted';

/** A reduction method's argument: the axis by position (x.sum(0), x.std([0, 1])) or an options object. */
export type AxisOrOptions = number | number[] | null | object;

export interface ArrayAt {
  get(options?: AtGetOptions): Array;
  set(value: ArrayLike, options?: AtUpdateOptions): Array;
  add(value: ArrayLike, options?: AtUpdateOptions): Array;
  multiply(value: ArrayLike, options?: AtUpdateOptions): Array;
  min(value: ArrayLike, options?: AtUpdateOptions): Array;
  max(value: ArrayLike, options?: AtUpdateOptions): Array;
}

let methods: ArrayMethods | undefined;

/** What Array needs from the runtime layer, installed by it (runtime/device.ts; core imports nothing above it). */
export interface DeviceHooks {
  deviceOf(backend: Backend): Device;
  defaultDevice(): Device;
}

/** How an Array names its placement (jax.Array.sharding), installed by lib/sharding. */
export type ShardingHook = (device: Device, memoryKind: MemoryKind) => SingleDeviceSharding;

// `var`, and no initializer: the hooks are installed while modules load, which may happen before this module
// finishes loading (modules importing each other); a `let` would not exist yet then, and an initializer would reset them.
// eslint-disable-next-line no-var
var deviceHooks: DeviceHooks | undefined;
// eslint-disable-next-line no-var
var shardingHook: ShardingHook | undefined;

export function installDeviceHooks(hooks: DeviceHooks): void {
  deviceHooks = hooks;
}

export function installShardingHook(hook: ShardingHook): void {
  shardingHook = hook;
}

/** The runtime's devices, as installed by runtime/device.ts (core/bind.ts places new arrays on the default device). */
export function runtimeDevices(): DeviceHooks {
  if (!deviceHooks) throw new Error('jaxon: internal error: the runtime (runtime/device.ts) has not installed its device hooks; import jaxon (lib/index) rather than lib/core directly');
  return deviceHooks;
}

export function registerArrayMethods(m: ArrayMethods): void {
  methods = m;
}

/** A method's axis argument as jnp's options: x.sum(0, { keepdims: true }) is jnp.sum(x, { axis: 0, keepdims: true }). */
function axisOptions(axis: AxisOrOptions | undefined, options: object | undefined): object | undefined {
  if (axis === undefined) return options;
  if (axis === null || typeof axis === 'number' || globalThis.Array.isArray(axis)) return { ...(options ?? {}), axis };
  if (options !== undefined) throw new TypeError(`Array method: pass the axis before the options object, got ${JSON.stringify(axis)} then another options object`);
  return axis;
}

function api(): ArrayMethods {
  if (!methods) throw new Error('jaxon: Array methods are not installed; import jaxon (lib/index) rather than lib/core directly');
  return methods;
}

export class Array {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly weakType: boolean;
  /** The memory kind holding the elements ('device' or 'pinned_host'; JAX's aval.memory_space). */
  readonly memorySpace: MemoryKind;
  #storage: Storage | null;
  #token = {};
  #disposedBy: string | null = null;

  /**
   * Internal: wraps a storage reference this Array now owns; `null` makes an
   * abstract array (a Tracer, lib/trace). Use jnp.array to make arrays.
   */
  /** Placed on its device explicitly (jax.devicePut to a device or sharding, JAX's committed arrays): operations then run there. */
  readonly committed: boolean;

  constructor(storage: Storage | null, shape: readonly number[], dtype: DType, weakType = false, memorySpace: MemoryKind = 'device', committed = false) {
    this.#storage = storage;
    this.committed = committed;
    this.shape = Object.freeze([...shape]);
    this.dtype = dtype;
    this.weakType = weakType;
    this.memorySpace = memorySpace;
    if (storage) trackArray(this, storage, this.#token);
  }

  /** True for tracers: abstract values inside jit/grad/vmap, which have no data. */
  get isTracer(): boolean {
    return false;
  }

  get ndim(): number {
    return this.shape.length;
  }
  get size(): number {
    return sizeOf(this.shape);
  }
  get nbytes(): number {
    return this.size * itemsize(this.dtype);
  }
  get aval(): ShapedArray {
    const a = { shape: this.shape, dtype: this.dtype, weakType: this.weakType };
    return this.memorySpace === 'device' ? a : { ...a, memorySpace: this.memorySpace };
  }
  /** The device holding the elements (a tracer's: the default device). */
  get device(): Device {
    return this.#storage ? runtimeDevices().deviceOf(this.#storage.backend) : runtimeDevices().defaultDevice();
  }
  /** Where the array lives: its device and memory kind (jax.Array.sharding). */
  get sharding(): SingleDeviceSharding {
    if (!shardingHook) throw new Error('jaxon: internal error: lib/sharding has not installed its sharding hook; import jaxon (lib/index) rather than lib/core directly');
    return shardingHook(this.device, this.memorySpace);
  }
  get isDisposed(): boolean {
    return this.#storage === null && !this.isTracer;
  }

  /** Internal: the storage, checked for use after dispose. `fn` names the caller in the error. */
  storage(fn = 'Array'): Storage {
    if (this.#storage === null) {
      if (this.isTracer) {
        throw new ConcretizationTypeError(
          `${fn}: a traced array ${this.dtype}[${this.shape.join(',')}] has no value here: inside jit/grad/vmap only its shape and dtype are known ` +
            `(use lax control flow instead of JS branches on array values, or mark the argument static)`,
        );
      }
      throw new ReferenceError(
        `${fn}: this Array (${this.dtype}[${this.shape.join(',')}]) was ${this.#disposedBy ?? 'disposed'} and can no longer be used`,
      );
    }
    return this.#storage;
  }

  dispose(): void {
    this.#release('disposed');
  }

  /** Internal: marks the array unusable because its buffer was donated. */
  markDonated(): void {
    this.#release('donated');
  }

  #release(reason: string): void {
    if (this.#storage === null) return;
    this.#storage.release();
    this.#storage = null;
    this.#disposedBy = reason;
    untrackArray(this.#token);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- reading values ----

  #bytesSync(fn: string): Uint8Array {
    const s = this.storage(fn);
    return s.backend.toHostSync(s.buffer);
  }

  /** The elements as a TypedArray (a copy): Float32Array for 16-bit floats, Uint8Array for bool. */
  dataSync(): UserTypedArray {
    return unpackValues(this.#bytesSync('Array.dataSync'), this.dtype);
  }

  async data(): Promise<UserTypedArray> {
    const s = this.storage('Array.data');
    return unpackValues(await s.backend.toHost(s.buffer), this.dtype);
  }

  tolistSync(): NestedArray {
    return nest(unpackValues(this.#bytesSync('Array.tolistSync'), this.dtype), this.shape, this.dtype === 'bool');
  }

  async tolist(): Promise<NestedArray> {
    return nest(await this.data(), this.shape, this.dtype === 'bool');
  }

  /** The single element of a size-1 array, as a number (boolean for bool). */
  item(): number | boolean {
    this.storage('Array.item');
    if (this.size !== 1) throw new TypeError(`Array.item: only size-1 arrays can be converted to a scalar, got shape [${this.shape.join(',')}]`);
    const v = this.dataSync()[0]!;
    return this.dtype === 'bool' ? v !== 0 : v;
  }

  /** Waits until the elements are computed (work on a GPU is asynchronous), blocking the thread. */
  blockUntilReady(): this {
    const s = this.storage('Array.blockUntilReady');
    s.backend.blockUntilReadySync(s.buffer);
    return this;
  }

  /** NumPy's str(): `[1. 2. 3.]`. */
  toString(): string {
    if (this.isDisposed) return `Array(<${this.#disposedBy}>, shape=[${this.shape.join(',')}], dtype=${this.dtype})`;
    return formatArray(this.dataSync(), this.shape, this.dtype, { mode: 'str' });
  }

  /** JAX's repr(): `Array([1., 2., 3.], dtype=float32)`. */
  toRepr(): string {
    if (this.isDisposed) return this.toString();
    return formatArray(this.dataSync(), this.shape, this.dtype, { mode: 'repr', weakType: this.weakType });
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toRepr();
  }

  /** Not 'Array': tools that see `[object Array]` (test frameworks' deep equality, loggers) treat it as a JS array and read x.length and x[i]. */
  get [Symbol.toStringTag](): string {
    return 'jaxon.Array';
  }

  // ---- JS operators, iteration and item assignment (API.md, "JS operators and control flow") ----

  /**
   * What JS operators see. A concrete 0-d array is its number (`x * 2`, `x > 0`, `if (x > 0)`), like Python's
   * float(x); a non-scalar one refuses, naming the jnp functions to use; a traced array (inside jit, grad, vmap)
   * refuses with JAX's TracerBoolConversionError, since JS cannot trace an operator. String conversion always
   * works (`${x}`: NumPy's str, or Traced<f32[]> for a tracer, as Python's str does).
   */
  [Symbol.toPrimitive](hint: 'number' | 'string' | 'default'): number | string {
    if (hint === 'string') return this.toString();
    const what = `${this.dtype}[${this.shape.join(',')}]`;
    if (this.isTracer) {
      throw new TracerBoolConversionError(
        `Attempted conversion of a traced array ${what} to a JS number or boolean (${this}): a JS comparison, arithmetic ` +
          `operator or condition (x > 0, x * 2, x ? a : b, while (x < y)) on a value traced by jit, grad or vmap. ` +
          `JS operators cannot be traced: use jnp.greater / jnp.multiply / ... for arithmetic, jnp.where or lax.cond / ` +
          `lax.whileLoop for control flow, or mark the argument static (jit's staticArgnums). See ` +
          `https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError`,
      );
    }
    if (this.ndim !== 0) {
      throw new TypeError(
        `An Array of shape ${what} cannot be converted to a JS number: JS operators do not work element-wise on Arrays. ` +
          `Use jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.power, jnp.greater, jnp.less, jnp.equal ... ` +
          `(or the methods x.add(y), x.mul(y), ...), and x.item() for the value of a size-1 array`,
      );
    }
    return Number(this.item());
  }

  /**
   * Arrays iterate over their first axis, as in JAX (`const [k1, k2] = random.split(key)`). A 0-d array is not
   * iterable (JAX's TypeError; here JS's own "is not iterable"), so tools probing Symbol.iterator see a plain value.
   */
  // (installed below as a getter: see iterateRows)

  // ---- jnp methods ----

  add(y: ArrayLike): Array { return api().add(this, y); }
  sub(y: ArrayLike): Array { return api().subtract(this, y); }
  mul(y: ArrayLike): Array { return api().multiply(this, y); }
  div(y: ArrayLike): Array { return api().divide(this, y); }
  pow(y: ArrayLike): Array { return api().power(this, y); }
  neg(): Array { return api().negative(this); }
  matmul(y: ArrayLike): Array { return api().matmul(this, y); }
  sum(axis?: AxisOrOptions, options?: object): Array { return api().sum(this, axisOptions(axis, options)); }
  mean(axis?: AxisOrOptions, options?: object): Array { return api().mean(this, axisOptions(axis, options)); }
  max(axis?: AxisOrOptions, options?: object): Array { return api().max(this, axisOptions(axis, options)); }
  min(axis?: AxisOrOptions, options?: object): Array { return api().min(this, axisOptions(axis, options)); }
  argmax(axis?: AxisOrOptions, options?: object): Array { return api().argmax(this, axisOptions(axis, options)); }
  prod(axis?: AxisOrOptions, options?: object): Array { return api().more.prod(this, axisOptions(axis, options)); }
  std(axis?: AxisOrOptions, options?: object): Array { return api().more.std(this, axisOptions(axis, options)); }
  var(axis?: AxisOrOptions, options?: object): Array { return api().more.var(this, axisOptions(axis, options)); }
  any(axis?: AxisOrOptions, options?: object): Array { return api().more.any(this, axisOptions(axis, options)); }
  all(axis?: AxisOrOptions, options?: object): Array { return api().more.all(this, axisOptions(axis, options)); }
  argmin(axis?: AxisOrOptions, options?: object): Array { return api().more.argmin(this, axisOptions(axis, options)); }
  cumsum(axis?: AxisOrOptions, options?: object): Array { return api().more.cumsum(this, axisOptions(axis, options)); }
  cumprod(axis?: AxisOrOptions, options?: object): Array { return api().more.cumprod(this, axisOptions(axis, options)); }
  squeeze(axis?: AxisOrOptions): Array { return api().more.squeeze(this, axisOptions(axis, undefined)); }
  ravel(): Array { return api().more.ravel(this); }
  flatten(): Array { return api().more.ravel(this); }
  round(decimals = 0): Array { return api().more.round(this, { decimals }); }
  clip(min?: ArrayLike | null, max?: ArrayLike | null): Array { return api().more.clip(this, min, max); }
  dot(y: ArrayLike): Array { return api().more.dot(this, y); }
  repeat(repeats: number | number[], axis?: number | null): Array { return api().more.repeat(this, repeats, axis === undefined ? {} : { axis }); }
  swapaxes(axis1: number, axis2: number): Array { return api().more.swapaxes(this, axis1, axis2); }
  take(indices: ArrayLike, axis?: number | null): Array { return api().more.take(this, indices, axis === undefined ? {} : { axis }); }
  copy(): Array { return api().more.copy(this); }
  ptp(axis?: AxisOrOptions, options?: object): Array { return api().more.ptp(this, axisOptions(axis, options)); }
  /** JAX's x.sort(axis=-1, ...): a sorted copy (null sorts the flattened array). */
  sort(axis?: AxisOrOptions, options?: object): Array { return api().more.sort(this, axisOptions(axis, options)); }
  argsort(axis?: AxisOrOptions, options?: object): Array { return api().more.argsort(this, axisOptions(axis, options)); }
  diagonal(offset = 0, axis1 = 0, axis2 = 1): Array { return api().more.diagonal(this, { offset, axis1, axis2 }); }
  /** The indices of the non-zero elements, one Array per axis (`{ size, fillValue }` under jit). */
  nonzero(options?: { size?: number | null; fillValue?: ArrayLike | null }): Array[] { return api().more.nonzero(this, options) as unknown as Array[]; }
  searchsorted(v: ArrayLike, options?: object): Array { return api().more.searchsorted(this, v, options); }
  reshape(shape: number | number[]): Array { return api().reshape(this, shape); }
  transpose(axes?: number[]): Array { return api().transpose(this, axes); }
  astype(dtype: DType): Array { return api().astype(this, dtype); }
  get T(): Array { return api().transpose(this); }
  /** The matrix transpose: the last two axes swapped (JAX's x.mT). */
  get mT(): Array {
    if (this.ndim < 2) throw new ValueError(`Array.mT: matrix transpose needs ndim >= 2, got an array of shape [${this.shape.join(',')}]`);
    return api().more.swapaxes(this, -1, -2);
  }
  /** NumPy indexing: numbers, [start, stop, step] ranges, null for a whole axis, 'newaxis', '...', integer arrays. */
  index(...items: IndexItem[]): Array { return api().index(this, items); }
  /** JAX's x.at[idx]: `.set(v)`, `.add(v)`, `.multiply(v)`, `.min(v)`, `.max(v)`, `.get()` return new arrays. */
  at(...items: IndexItem[]): ArrayAt { return api().at(this, items); }
}

// Arrays are iterable in the type system; at run time Symbol.iterator is a getter that gives undefined for a 0-d
// array, so `[...scalar]` is JS's TypeError and tools that probe for iterables treat a scalar as a plain value.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface Array extends Iterable<Array> {}

function* iterateRows(this: Array): IterableIterator<Array> {
  for (let i = 0; i < this.shape[0]!; i++) yield this.index(i);
}

Object.defineProperty(Array.prototype, Symbol.iterator, {
  get(this: Array) {
    return this.ndim === 0 ? undefined : iterateRows;
  },
  configurable: false,
  enumerable: false,
});

/** How many indices x[i] covers (reads give x.index(i); writes raise JAX's immutability error); see below. */
export const INDEXED_ACCESS_LIMIT = 1 << 16;

// x[i] reads as x.index(i) and x[i] = v raises JAX's error, for i in [-64, 2^16): JS has no operator to
// overload, so the prototype carries an accessor per index (indexed ones live in its element store, apart from
// the methods). Without them a read gives undefined (NaN in arithmetic) and a write is silently ignored.
function installIndexAccessors(): void {
  const immutable = (i: number) => {
    throw new TypeError(
      `jaxon arrays are immutable and do not support in-place item assignment. Instead of x[${i}] = y, ` +
        `use x = x.at(${i}).set(y) or another .at() method (add, multiply, min, max): ` +
        'https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html',
    );
  };
  const descriptors: PropertyDescriptorMap = {};
  for (let i = -64; i < INDEXED_ACCESS_LIMIT; i++) {
    descriptors[i] = {
      get(this: Array) { return this.index(i); },
      set(this: Array, _value: unknown) { immutable(i); },
      enumerable: false,
      configurable: false,
    };
  }
  Object.defineProperties(Array.prototype, descriptors);
}
installIndexAccessors();
