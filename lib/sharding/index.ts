// jax.sharding: where an array's elements live. A Sharding names the devices
// that hold an array, which part of it each holds, and the memory kind of
// those devices it sits in (JAX's sharding.memory_kind: 'device' by default,
// or 'pinned_host'). SingleDeviceSharding puts the whole array on one
// device; NamedSharding lays it over a Mesh (a nested array of devices with
// named axes) by a PartitionSpec (for each array dimension, the mesh axes it
// is split over). After jax/_src/sharding_impls.py and mesh.py. jaxon runs
// one CPU device today, so every mesh has size-1 axes and every sharding
// holds the whole array; the index maps and checks are written for any mesh.
import { installShardingHook } from '../core/array.js';
import { ValueError, show } from '../core/errors.js';
import type { MemoryKind } from '../core/primitives.js';
import { Device } from '../runtime/device.js';

/** [start, stop) of each dimension that one device holds. */
export type Index = [number, number][];

/** Validates a memory kind against the kinds every one of `devices` has (JAX's error when one is missing). */
export function checkMemoryKind(fn: string, devices: readonly Device[], kind: unknown): MemoryKind {
  if (kind === undefined || kind === null) return 'device';
  if (typeof kind !== 'string') throw new TypeError(`${fn}: memoryKind must be a string such as 'device' or 'pinned_host', got ${show(kind)}`);
  try {
    for (const d of devices) d.memory(kind);
  } catch (error) {
    if (error instanceof ValueError) throw new ValueError(`${fn}: ${error.message}`);
    throw error;
  }
  return kind as MemoryKind;
}

function checkShardingOptions(fn: string, options: unknown): { memoryKind?: unknown } {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) throw new TypeError(`${fn}: options must be an object, got ${show(options)}`);
  for (const key of Object.keys(options)) {
    if (key !== 'memoryKind') throw new TypeError(`${fn}: unknown option '${key}' (known options: 'memoryKind')`);
  }
  return options as { memoryKind?: unknown };
}

const indexKey = (index: Index): string => index.map(([a, b]) => `${a}:${b}`).join(',');

/** What every sharding answers (jax.sharding.Sharding). */
export abstract class Sharding {
  abstract readonly memoryKind: MemoryKind;
  /** The devices holding some part of the array, in a stable order. */
  abstract get devices(): readonly Device[];
  /** For an array of `shape`: the part each device holds. */
  abstract devicesIndicesMap(shape: readonly number[]): Map<Device, Index>;
  /** The same placement in another memory kind. */
  abstract withMemoryKind(kind: string): Sharding;
  /** Same kind of sharding, same devices, same layout and same memory kind. */
  abstract equals(other: unknown): boolean;
  /** Throws unless an array of `shape` can be laid out this way (rank, divisibility); `fn` names the caller. */
  abstract checkShape(fn: string, shape: readonly number[]): void;

  get deviceSet(): Set<Device> {
    return new Set(this.devices);
  }
  get addressableDevices(): Set<Device> {
    return this.deviceSet;
  }
  get numDevices(): number {
    return this.devices.length;
  }
  get isFullyAddressable(): boolean {
    return true;
  }
  /** Whether every device holds the whole array. */
  get isFullyReplicated(): boolean {
    const probe = new globalThis.Array<number>(this.probeRank()).fill(this.numDevices);
    return [...this.devicesIndicesMap(probe).values()].every((index) => index.every(([a, b], d) => a === 0 && b === probe[d]));
  }
  /** The shape of the part one device holds. */
  shardShape(shape: readonly number[]): number[] {
    this.checkShape('Sharding.shardShape', shape);
    const first = this.devicesIndicesMap(shape).values().next().value as Index;
    return first.map(([a, b]) => b - a);
  }
  /**
   * Whether two shardings place an array of rank `ndim` the same way: the
   * same memory kind and, on every device, the same part (JAX's
   * is_equivalent_to; a NamedSharding can be equivalent to a SingleDeviceSharding).
   */
  isEquivalentTo(other: Sharding, ndim: number): boolean {
    if (!(other instanceof Sharding)) throw new TypeError(`Sharding.isEquivalentTo: other must be a Sharding, got ${show(other)}`);
    if (!Number.isInteger(ndim) || ndim < 0) throw new ValueError(`Sharding.isEquivalentTo: ndim must be a non-negative integer, got ${show(ndim)}`);
    if (this.memoryKind !== other.memoryKind) return false;
    // a size every partition count of either sharding divides
    const shape = new globalThis.Array<number>(ndim).fill(this.numDevices * other.numDevices);
    this.checkShape('Sharding.isEquivalentTo', shape);
    other.checkShape('Sharding.isEquivalentTo', shape);
    const mine = this.devicesIndicesMap(shape);
    const theirs = other.devicesIndicesMap(shape);
    if (mine.size !== theirs.size) return false;
    for (const [device, index] of mine) {
      const o = theirs.get(device);
      if (!o || indexKey(o) !== indexKey(index)) return false;
    }
    return true;
  }
  /** The smallest rank this sharding describes (a NamedSharding's spec length). */
  protected probeRank(): number {
    return 0;
  }
}

/** The whole array on one device (jax.sharding.SingleDeviceSharding). */
export class SingleDeviceSharding extends Sharding {
  readonly memoryKind: MemoryKind;
  constructor(
    readonly device: Device,
    options: { memoryKind?: string | null } = {},
  ) {
    super();
    const fn = 'SingleDeviceSharding';
    if (!(device instanceof Device)) throw new TypeError(`${fn}: device must be a Device (from jax.devices()), got ${show(device)}`);
    this.memoryKind = checkMemoryKind(fn, [device], checkShardingOptions(fn, options).memoryKind);
    Object.freeze(this);
  }
  get devices(): readonly Device[] {
    return [this.device];
  }
  devicesIndicesMap(shape: readonly number[]): Map<Device, Index> {
    return new Map([[this.device, shape.map((d): [number, number] => [0, d])]]);
  }
  withMemoryKind(kind: string): SingleDeviceSharding {
    return new SingleDeviceSharding(this.device, { memoryKind: kind });
  }
  equals(other: unknown): boolean {
    return other instanceof SingleDeviceSharding && other.device === this.device && other.memoryKind === this.memoryKind;
  }
  checkShape(): void {}
  override toString(): string {
    return `SingleDeviceSharding(device=${this.device}, memory_kind=${this.memoryKind})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

// How an Array names its placement (core imports nothing above it).
installShardingHook((device, memoryKind) => new SingleDeviceSharding(device, { memoryKind }));

/** A nested JS array of devices. */
export type NestedDevices = Device | NestedDevices[];

/** Devices arranged in an n-d grid with named axes (jax.sharding.Mesh). */
export class Mesh {
  readonly axisNames: readonly string[];
  /** Axis name → size, in axis order. */
  readonly shape: Readonly<Record<string, number>>;
  /** The devices in row-major order of the grid. */
  readonly flatDevices: readonly Device[];
  readonly #dims: number[];

  constructor(
    readonly devices: NestedDevices[],
    axisNames: string | readonly string[],
  ) {
    const fn = 'Mesh';
    const names = typeof axisNames === 'string' ? [axisNames] : axisNames;
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) {
      throw new TypeError(`${fn}: axisNames must be a string or an array of strings, got ${show(axisNames)}`);
    }
    if (new Set(names).size !== names.length) throw new ValueError(`${fn}: axis names must be distinct, got ${show(names)}`);
    if (!Array.isArray(devices)) throw new TypeError(`${fn}: devices must be a (nested) array of Devices, got ${show(devices)}`);
    const dims: number[] = [];
    const flat: Device[] = [];
    const walk = (x: NestedDevices, depth: number): void => {
      if (x instanceof Device) {
        if (depth !== dims.length) throw new ValueError(`${fn}: devices must be a rectangular nested array (a Device at depth ${depth}, expected depth ${dims.length})`);
        flat.push(x);
        return;
      }
      if (!Array.isArray(x)) throw new TypeError(`${fn}: devices must contain only Devices (from jax.devices()), got ${show(x)}`);
      if (depth === dims.length) {
        if (x.length === 0) throw new ValueError(`${fn}: a mesh axis cannot be empty`);
        dims.push(x.length);
      } else if (dims[depth] !== x.length) {
        throw new ValueError(`${fn}: devices must be a rectangular nested array, got rows of lengths ${dims[depth]} and ${x.length} at depth ${depth}`);
      }
      for (const y of x) walk(y, depth + 1);
    };
    walk(devices, 0);
    if (dims.length !== names.length) {
      throw new ValueError(
        `${fn}: the number of dimensions of devices (${dims.length}, shape [${dims.join(',')}]) must equal the number of axis names (${names.length}: ${show(names)})`,
      );
    }
    const seen = new Set<Device>();
    for (const d of flat) {
      if (seen.has(d)) throw new ValueError(`${fn}: each device may appear once, but ${d} appears more than once`);
      seen.add(d);
    }
    this.axisNames = Object.freeze([...names]);
    this.#dims = dims;
    this.flatDevices = Object.freeze(flat);
    this.shape = Object.freeze(Object.fromEntries(names.map((n, i) => [n, dims[i]!])));
    Object.freeze(this);
  }

  get size(): number {
    return this.flatDevices.length;
  }
  get deviceIds(): number[] {
    return this.flatDevices.map((d) => d.id);
  }
  /** The grid coordinates of the k-th device in row-major order. */
  coordinates(k: number): number[] {
    const out = new globalThis.Array<number>(this.#dims.length);
    for (let a = this.#dims.length - 1; a >= 0; a--) {
      out[a] = k % this.#dims[a]!;
      k = Math.floor(k / this.#dims[a]!);
    }
    return out;
  }
  equals(other: unknown): boolean {
    return other instanceof Mesh && other.axisNames.join('\0') === this.axisNames.join('\0') &&
      other.flatDevices.length === this.flatDevices.length && other.flatDevices.every((d, i) => d === this.flatDevices[i]) &&
      other.#dims.join(',') === this.#dims.join(',');
  }
  toString(): string {
    return `Mesh(${this.axisNames.map((n) => `'${n}': ${this.shape[n]}`).join(', ')})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

/** One dimension of a PartitionSpec: not split (null), split over a mesh axis, or over several (major to minor). */
export type SpecEntry = string | readonly string[] | null;

/** For each array dimension, the mesh axes it is split over (jax.sharding.PartitionSpec); trailing dimensions are not split. */
export class PartitionSpec {
  readonly parts: readonly SpecEntry[];
  constructor(...parts: (SpecEntry | undefined)[]) {
    this.parts = Object.freeze(parts.map((p, i): SpecEntry => {
      if (p === null || p === undefined) return null;
      if (typeof p === 'string') return p;
      if (Array.isArray(p) && p.every((a) => typeof a === 'string')) return Object.freeze([...p]);
      throw new TypeError(`PartitionSpec: entry ${i} must be null, a mesh axis name or an array of axis names, got ${show(p)}`);
    }));
    Object.freeze(this);
  }
  get length(): number {
    return this.parts.length;
  }
  /** The mesh axes used, in order of appearance. */
  axes(): string[] {
    return this.parts.flatMap((p) => (p === null ? [] : typeof p === 'string' ? [p] : [...p]));
  }
  equals(other: unknown): boolean {
    return other instanceof PartitionSpec && other.toString() === this.toString();
  }
  toString(): string {
    const entry = (p: SpecEntry) => (p === null ? 'None' : typeof p === 'string' ? `'${p}'` : `(${p.map((a) => `'${a}'`).join(', ')}${p.length === 1 ? ',' : ''})`);
    return `P(${this.parts.map(entry).join(', ')}${this.parts.length === 1 ? ',' : ''})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

/** `P('x', null)`: shorthand for `new PartitionSpec('x', null)`. */
export function P(...parts: (SpecEntry | undefined)[]): PartitionSpec {
  return new PartitionSpec(...parts);
}

/** An array laid out over a mesh by a PartitionSpec (jax.sharding.NamedSharding). */
export class NamedSharding extends Sharding {
  readonly memoryKind: MemoryKind;
  constructor(
    readonly mesh: Mesh,
    readonly spec: PartitionSpec = new PartitionSpec(),
    options: { memoryKind?: string | null } = {},
  ) {
    super();
    const fn = 'NamedSharding';
    if (!(mesh instanceof Mesh)) throw new TypeError(`${fn}: mesh must be a Mesh, got ${show(mesh)}`);
    if (!(spec instanceof PartitionSpec)) throw new TypeError(`${fn}: spec must be a PartitionSpec (P(...)), got ${show(spec)}`);
    const seen = new Set<string>();
    for (const axis of spec.axes()) {
      if (!mesh.axisNames.includes(axis)) {
        throw new ValueError(`${fn}: Resource axis: ${axis} of ${spec} is not found in mesh: (${mesh.axisNames.map((n) => `'${n}'`).join(', ')}${mesh.axisNames.length === 1 ? ',' : ''}).`);
      }
      if (seen.has(axis)) {
        throw new ValueError(`${fn}: A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, but ${spec} has duplicate entries for \`${axis}\``);
      }
      seen.add(axis);
    }
    this.memoryKind = checkMemoryKind(fn, mesh.flatDevices, checkShardingOptions(fn, options).memoryKind);
    Object.freeze(this);
  }
  get devices(): readonly Device[] {
    return this.mesh.flatDevices;
  }
  protected override probeRank(): number {
    return this.spec.length;
  }
  /** How many parts dimension d is split into. */
  #parts(d: number): number {
    const entry = this.spec.parts[d] ?? null;
    if (entry === null) return 1;
    return (typeof entry === 'string' ? [entry] : entry).reduce((n, a) => n * this.mesh.shape[a]!, 1);
  }
  checkShape(fn: string, shape: readonly number[]): void {
    if (shape.length < this.spec.length) {
      throw new ValueError(`${fn}: Sharding ${this} is only valid for values of rank at least ${this.spec.length}, but was applied to a value of rank ${shape.length}`);
    }
    shape.forEach((size, d) => {
      const parts = this.#parts(d);
      if (size % parts !== 0) {
        throw new ValueError(`${fn}: the sharding ${this} implies that the global size of dimension ${d} should be divisible by ${parts}, but it is equal to ${size} (full shape: [${shape.join(',')}])`);
      }
    });
  }
  devicesIndicesMap(shape: readonly number[]): Map<Device, Index> {
    this.checkShape('NamedSharding.devicesIndicesMap', shape);
    const map = new Map<Device, Index>();
    this.mesh.flatDevices.forEach((device, k) => {
      const coords = this.mesh.coordinates(k);
      map.set(device, shape.map((size, d): [number, number] => {
        const entry = this.spec.parts[d] ?? null;
        if (entry === null) return [0, size];
        // the position along the listed axes, major to minor
        let position = 0;
        for (const axis of typeof entry === 'string' ? [entry] : entry) {
          const a = this.mesh.axisNames.indexOf(axis);
          position = position * this.mesh.shape[axis]! + coords[a]!;
        }
        const chunk = size / this.#parts(d);
        return [position * chunk, (position + 1) * chunk];
      }));
    });
    return map;
  }
  withMemoryKind(kind: string): NamedSharding {
    return new NamedSharding(this.mesh, this.spec, { memoryKind: kind });
  }
  equals(other: unknown): boolean {
    return other instanceof NamedSharding && other.mesh.equals(this.mesh) && other.spec.equals(this.spec) && other.memoryKind === this.memoryKind;
  }
  override toString(): string {
    return `NamedSharding(mesh=${this.mesh}, spec=${this.spec}, memory_kind=${this.memoryKind})`;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}
