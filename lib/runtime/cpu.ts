// The CPU backend: buffers are ArrayBuffers; kernels are C compiled by the
// system compiler (kernel-cache.ts) and called through the native addon.
// Compiled kernels are looked up by their IR, so a kernel is rendered and
// compiled once per process (and once per machine, through the disk cache).
import type { Kernel } from '../compiler/kernel-ir.js';
import { kernelJson, kernelName } from '../compiler/kernel-ir.js';
import type { BufferRef, Plan } from '../compiler/lower.js';
import { renderC } from '../compiler/render/c.js';
import { itemsize } from '../core/dtype.js';
import type { ProgramPlan } from '../compiler/plan.js';
import type { ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { Backend, DeviceBuffer } from './backend.js';
import { ResourceExhaustedError } from '../core/errors.js';
import { Executable } from './cpu-executable.js';
import { type CpuKernel, compileCpuKernel } from './kernel-cache.js';

export class CpuBuffer implements DeviceBuffer {
  constructor(public bytes: ArrayBuffer) {}
  get nbytes(): number {
    return this.bytes.byteLength;
  }
}

const kernels = new Map<string, CpuKernel>();

/** No bytes, shared: what a freed or emptied buffer holds, and an absent arena. */
export const NO_BYTES = new ArrayBuffer(0);

/** The compiled kernel for an IR, compiling it on first use. */
/** The same by kernel object first: repeated eager plans reuse their kernel objects (runtime/eager.ts). */
const kernelsByObject = new WeakMap<Kernel, CpuKernel>();

export function cpuKernel(kernel: Kernel): CpuKernel {
  const byObject = kernelsByObject.get(kernel);
  if (byObject) return byObject;
  const key = kernelJson(kernel);
  let compiled = kernels.get(key);
  if (!compiled) {
    const name = kernelName(kernel).slice(0, 160);
    compiled = compileCpuKernel(name, renderC(kernel, name));
    kernels.set(key, compiled);
  }
  kernelsByObject.set(kernel, compiled);
  return compiled;
}

/** Kernel IRs this process compiled (for stats and the stages API). */
export function compiledCpuKernelCount(): number {
  return kernels.size;
}

class CpuBackend implements Backend {
  readonly platform = 'cpu' as const;
  /** CPU arenas and outputs are aligned to a cache line. */
  readonly planAlignment = 64;
  readonly prefetchesScanInputs = 'off';

  /** Both memory kinds are ordinary host memory on the CPU. */
  fromHost(bytes: Uint8Array): CpuBuffer {
    const copy = hostBuffer(bytes.byteLength, 'a copy of host data', 'overwritten');
    new Uint8Array(copy).set(bytes);
    return new CpuBuffer(copy);
  }

  toHostSync(buffer: DeviceBuffer): Uint8Array {
    return new Uint8Array((buffer as CpuBuffer).bytes.slice(0));
  }

  toHost(buffer: DeviceBuffer): Promise<Uint8Array> {
    return Promise.resolve(this.toHostSync(buffer));
  }

  execute(plan: Plan, inputs: DeviceBuffer[], outputs: ShapedArray[]): DeviceBuffer[] {
    const outs = outputs.map((o, i) => {
      const aliased = plan.aliases.get(i);
      if (aliased !== undefined) return inputs[aliased] as CpuBuffer;
      return new CpuBuffer(hostBuffer(sizeOf(o.shape) * itemsize(o.dtype), () => `an output ${o.dtype}[${o.shape.join(',')}]`, 'overwritten'));
    });
    const temps = plan.temps.map((t) => new CpuBuffer(hostBuffer(t.size * itemsize(t.dtype), () => `a temporary ${t.dtype}[${t.size}]`, 'overwritten')));
    const resolve = (ref: BufferRef): ArrayBuffer => {
      switch (ref.kind) {
        case 'input': return (inputs[ref.index] as CpuBuffer).bytes;
        case 'output': return outs[ref.index]!.bytes;
        case 'temp': return temps[ref.index]!.bytes;
      }
    };
    for (const launch of plan.launches) cpuKernel(launch.kernel).call(launch.buffers.map(resolve), packedParams(launch));
    for (const t of temps) recycleHostBuffer(t.bytes);
    return outs;
  }

  devicePut(buffer: DeviceBuffer): CpuBuffer {
    return this.fromHost(new Uint8Array((buffer as CpuBuffer).bytes));
  }

  compileProgram(plan: ProgramPlan): Executable {
    return new Executable(plan);
  }

  /** CPU kernels run synchronously: a buffer is ready once it exists. */
  blockUntilReadySync(): void {}

  free(buffer: DeviceBuffer): void {
    const b = buffer as CpuBuffer;
    recycleHostBuffer(b.bytes);
    b.bytes = NO_BYTES;
  }
}

export const cpuBackend = new CpuBackend();

function formatBytes(n: number): string {
  return n >= 2 ** 40 ? `${(n / 2 ** 40).toFixed(2)} TiB` : n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(2)} MiB` : `${n} bytes`;
}

/** Each eager launch's params as the kernel reads them, packed once (plans are cached: runtime/eager.ts). */
const packed = new WeakMap<Plan['launches'][number], BigInt64Array>();

function packedParams(launch: Plan['launches'][number]): BigInt64Array {
  let params = packed.get(launch);
  if (!params) {
    params = BigInt64Array.from(launch.params, (p) => BigInt(p));
    packed.set(launch, params);
  }
  return params;
}

/**
 * Freed buffers by exact size (a buffer's length is its array's), handed out again by hostBuffer: those of at most
 * POOL_MAX_BYTES up to POOL_TOTAL_BYTES in all, larger ones up to LARGE_POOL_BYTES in all, oldest given up first.
 * A new ArrayBuffer costs V8 a backing store and garbage-collector bookkeeping, the largest part of a small op's host
 * time (every op allocates its outputs); a large one is fresh pages from the kernel, whose faults cost more than the
 * kernel that fills them (16 MiB: 2-10 ms of faults, 0.9 ms to zero it again, 3.5 ms for the whole `x + 1`), where
 * NumPy's malloc reuses its heap. A buffer comes here only once nothing reads it: its last array's storage is freed
 * (runtime/cpu.ts `free`), an eager plan's temporaries after its launches, a jitted program's arena after the call;
 * a donated buffer moves to its new array and its old holder is emptied first, so it never comes here while in use.
 */
const POOL_MAX_BYTES = 65536;
const POOL_TOTAL_BYTES = 8 * 2 ** 20;
const LARGE_POOL_BYTES = 256 * 2 ** 20;
/** Both tiers' free buffers, by exact size. */
const pool = new Map<number, Uint8Array[]>();
let pooledBytes = 0;
let largePooledBytes = 0;
/** The large tier's buffers in the order they came back, oldest first; those handed out since are no longer in largePooled. */
let largeOrder: Uint8Array[] = [];
const largePooled = new Set<Uint8Array>();
/** Testing aid: buffers a kernel overwrites are handed out filled with 0xff bytes (NaN floats), new or reused. */
const POISON = process.env['JAXON_POISON_HOST_BUFFERS'] === '1';

/** Gives a buffer nothing reads any more back to hostBuffer's pool (beyond the pool's bounds it goes to the garbage collector). */
export function recycleHostBuffer(bytes: ArrayBuffer): void {
  const n = bytes.byteLength;
  if (n === 0 || n > LARGE_POOL_BYTES / 2 || (n <= POOL_MAX_BYTES && pooledBytes + n > POOL_TOTAL_BYTES)) return;
  const view = new Uint8Array(bytes);
  let free = pool.get(n);
  if (!free) pool.set(n, (free = []));
  free.push(view);
  if (n <= POOL_MAX_BYTES) {
    pooledBytes += n;
    return;
  }
  largePooled.add(view);
  largeOrder.push(view);
  largePooledBytes += n;
  while (largePooledBytes > LARGE_POOL_BYTES) {
    const oldest = largeOrder.shift()!;
    if (!largePooled.delete(oldest)) continue; // handed out again since
    const same = pool.get(oldest.byteLength)!;
    same.splice(same.indexOf(oldest), 1);
    largePooledBytes -= oldest.byteLength;
  }
  // buffers handed out again stay in the order list until this drops them
  if (largeOrder.length > 2 * largePooled.size + 64) largeOrder = largeOrder.filter((v) => largePooled.has(v));
}

/**
 * A buffer of n bytes: zeroed, or for `contents` 'overwritten' (a kernel's output or a program's arena: every
 * kernel writes every element of its outputs before anything reads them, as on a GPU, whose memory is never zeroed)
 * whatever a reused buffer held. Running out of memory is JAX's RESOURCE_EXHAUSTED, saying how much and for what.
 */
export function hostBuffer(n: number, what: string | (() => string), contents: 'zeroed' | 'overwritten' = 'zeroed'): ArrayBuffer {
  const reused = pool.get(n)?.pop();
  if (reused) {
    if (n <= POOL_MAX_BYTES) pooledBytes -= n;
    else {
      largePooled.delete(reused);
      largePooledBytes -= n;
    }
    if (POISON && contents === 'overwritten') return reused.fill(0xff).buffer as ArrayBuffer;
    return (contents === 'zeroed' ? reused.fill(0) : reused).buffer as ArrayBuffer;
  }
  try {
    const bytes = new ArrayBuffer(n);
    if (POISON && contents === 'overwritten') new Uint8Array(bytes).fill(0xff);
    return bytes;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const named = typeof what === 'string' ? what : what(); // built only on failure (allocations are on every op's path)
    throw new ResourceExhaustedError(`RESOURCE_EXHAUSTED: out of memory allocating ${formatBytes(n)} for ${named} on the CPU (${error.message})`);
  }
}
