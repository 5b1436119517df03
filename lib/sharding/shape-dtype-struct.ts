// jax.ShapeDtypeStruct: an array's type without its data (shape, dtype,
// weak type and, through its sharding, memory kind). jit(f).lower and
// evalShape take it where an array would go; nothing is allocated. It lives
// with the shardings it holds (core knows no shardings).
import { type DType, canonicalizeDType, checkDType } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';
import type { ShapedArray } from '../core/primitives.js';
import { withMemorySpace } from '../core/memory-space.js';
import { checkShape, shapesEqual, sizeOf } from '../core/shape.js';
import { Sharding } from './index.js';

export interface ShapeDtypeStructOptions {
  /** Where an array of this type would live; its memory kind becomes the aval's memory space. */
  sharding?: Sharding | null;
  weakType?: boolean;
}

export class ShapeDtypeStruct {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly sharding: Sharding | null;
  readonly weakType: boolean;

  constructor(shape: number | readonly number[], dtype: DType, options: ShapeDtypeStructOptions = {}) {
    const fn = 'ShapeDtypeStruct';
    if (options === null || typeof options !== 'object') throw new TypeError(`${fn}: options must be an object, got ${show(options)}`);
    for (const key of Object.keys(options)) {
      if (key !== 'sharding' && key !== 'weakType') throw new TypeError(`${fn}: unknown option '${key}' (known options: 'sharding', 'weakType')`);
    }
    this.shape = Object.freeze(checkShape(fn, shape));
    // JAX's ValueErrors for a missing dtype and for a sharding that is not a Sharding (a PartitionSpec, say)
    if (dtype === null || dtype === undefined) throw new ValueError(`${fn}: dtype must be specified.`);
    this.dtype = checkDType(fn, dtype);
    const sharding = options.sharding ?? null;
    if (sharding !== null && !(sharding instanceof Sharding)) {
      throw new ValueError(`${fn}: sharding should be an instance of \`jax.sharding.Sharding\` (SingleDeviceSharding, NamedSharding) or null, got ${show(sharding)}`);
    }
    sharding?.checkShape(fn, this.shape);
    this.sharding = sharding;
    const weakType = options.weakType ?? false;
    if (typeof weakType !== 'boolean') throw new TypeError(`${fn}: weakType must be a boolean, got ${show(weakType)}`);
    this.weakType = weakType;
    Object.freeze(this);
  }

  get ndim(): number {
    return this.shape.length;
  }
  get size(): number {
    return sizeOf(this.shape);
  }
  /**
   * The abstract value tracing sees; the memory space is the sharding's memory kind. Its dtype is canonicalized
   * (float64 is float32 while x64 is off), as JAX's shaped_abstractify does; the struct keeps the dtype given.
   */
  get aval(): ShapedArray {
    return withMemorySpace({ shape: this.shape, dtype: canonicalizeDType(this.dtype), weakType: this.weakType }, this.sharding?.memoryKind ?? 'device');
  }
  equals(other: unknown): boolean {
    if (!(other instanceof ShapeDtypeStruct)) return false;
    const sameSharding = this.sharding === null ? other.sharding === null : this.sharding.equals(other.sharding);
    return shapesEqual(this.shape, other.shape) && this.dtype === other.dtype && this.weakType === other.weakType && sameSharding;
  }
  toString(): string {
    const weak = this.weakType ? ', weak_type=True' : '';
    const sharding = this.sharding ? `, sharding=${this.sharding}` : '';
    return `ShapeDtypeStruct(shape=[${this.shape.join(',')}], dtype=${this.dtype}${sharding}${weak})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

