// A compiled program: the kernel launches fusion (fuse.ts) produced, with
// every kernel compiled up front and every launch's parameters packed once,
// run on the CPU backend over argument, constant, literal, value and
// temporary buffers. Intermediates live only between their first write and
// their last read: a buffer is dropped right after the last launch that
// uses it (an arena with offsets from buffer assignment comes later).
import { Array } from '../core/array.js';
import { arrayFromValues } from '../core/bind.js';
import { itemsize } from '../core/dtype.js';
import { packValues } from '../core/host.js';
import { Storage } from '../core/memory.js';
import type { Backend } from '../runtime/backend.js';
import { CpuBuffer } from '../runtime/cpu.js';
import { type CpuKernel, compileCpuKernel } from '../runtime/kernel-cache.js';
import type { Jaxpr } from '../trace/jaxpr.js';
import { type Program, fuseJaxpr } from './fuse.js';
import { type Kernel, kernelName } from './kernel-ir.js';
import { renderC } from './render/c.js';

export interface CompiledLaunch {
  name: string;
  kernel: Kernel;
  /** the primitives the kernel computes */
  label: string;
  buffers: number[];
  params: BigInt64Array;
  compiled: CpuKernel;
}

/** Kernels by their IR text, so a program compiles each distinct kernel once per process. */
const compiledKernels = new Map<string, CpuKernel>();

function compile(kernel: Kernel): { name: string; compiled: CpuKernel } {
  const name = kernelName(kernel).slice(0, 160);
  const source = renderC(kernel, name);
  let compiled = compiledKernels.get(source);
  if (!compiled) {
    compiled = compileCpuKernel(name, source);
    compiledKernels.set(source, compiled);
  }
  return { name, compiled };
}

export class Executable {
  readonly launches: CompiledLaunch[];
  readonly program: Program;
  /** per launch: the value and temporary buffers whose last use it is */
  #releaseAfter: number[][];
  #literals = new Map<number, CpuBuffer>();

  constructor(
    program: Program,
    private readonly backend: Backend,
  ) {
    if (backend.platform !== 'cpu') throw new Error(`jax.jit: compiled programs run on the CPU backend only for now, not ${backend.platform}`);
    this.program = program;
    this.launches = program.launches.map((l) => ({ ...compile(l.kernel), kernel: l.kernel, label: l.label, buffers: l.buffers, params: BigInt64Array.from(l.params.map((p) => BigInt(p))) }));
    program.buffers.forEach((b, i) => {
      if (b.kind === 'literal') this.#literals.set(i, backend.fromHost(packValues([b.value!], b.dtype)) as CpuBuffer);
    });
    const kept = new Set(program.outputs.flatMap((o) => ('buffer' in o ? [o.buffer] : [])));
    const lastUse = new Map<number, number>();
    this.launches.forEach((l, k) => l.buffers.forEach((b) => lastUse.set(b, k)));
    this.#releaseAfter = this.launches.map(() => []);
    for (const [b, k] of lastUse) {
      const kind = program.buffers[b]!.kind;
      if ((kind === 'value' || kind === 'temp') && !kept.has(b)) this.#releaseAfter[k]!.push(b);
    }
  }

  get kernelCount(): number {
    return this.launches.length;
  }

  /** Runs the program on concrete arguments (the flat jaxpr inputs) and constants; returns new output Arrays. */
  run(args: readonly Array[], consts: readonly Array[]): Array[] {
    const { buffers, outputs } = this.program;
    const live: (CpuBuffer | undefined)[] = new globalThis.Array(buffers.length);
    buffers.forEach((b, i) => {
      if (b.kind === 'argument') live[i] = args[b.index!]!.storage('jax.jit').buffer as CpuBuffer;
      else if (b.kind === 'constant') live[i] = consts[b.index!]!.storage('jax.jit').buffer as CpuBuffer;
      else if (b.kind === 'literal') live[i] = this.#literals.get(i);
    });
    this.launches.forEach((l, k) => {
      const bytes = l.buffers.map((id) => {
        let b = live[id];
        if (!b) {
          const spec = buffers[id]!;
          b = new CpuBuffer(new ArrayBuffer(spec.size * itemsize(spec.dtype)));
          live[id] = b;
        }
        return b.bytes;
      });
      l.compiled.call(bytes, l.params);
      for (const id of this.#releaseAfter[k]!) {
        this.backend.free(live[id]!);
        live[id] = undefined;
      }
    });
    const storages = new Map<number, Storage>();
    return outputs.map((o) => {
      if ('literal' in o) return arrayFromValues([o.literal], o.aval.shape, o.aval.dtype, o.aval.weakType);
      const spec = buffers[o.buffer]!;
      let storage = storages.get(o.buffer);
      if (storage) storage.retain();
      else if (spec.kind === 'argument') storage = args[spec.index!]!.storage('jax.jit').retain();
      else if (spec.kind === 'constant') storage = consts[spec.index!]!.storage('jax.jit').retain();
      else {
        const buffer = live[o.buffer];
        if (!buffer) throw new Error(`jax.jit: internal error: output buffer ${o.buffer} was never written`);
        storage = new Storage(this.backend, buffer);
      }
      storages.set(o.buffer, storage);
      return new Array(storage, o.aval.shape, o.aval.dtype, o.aval.weakType);
    });
  }

  /** The generated kernels, in launch order. */
  kernels(): { name: string; label: string; source: string }[] {
    return this.launches.map((l) => ({ name: l.name, label: l.label, source: l.compiled.source }));
  }

  /** One line per launch: kernel name, the primitives it fuses, and its buffers. */
  toString(): string {
    const kind = (id: number) => {
      const b = this.program.buffers[id]!;
      return `${b.kind === 'argument' ? 'arg' : b.kind === 'constant' ? 'const' : b.kind === 'literal' ? 'lit' : b.kind === 'temp' ? 'tmp' : 'v'}${id}`;
    };
    return this.launches.map((l, k) => `${k}: ${l.name} [${l.label}] (${l.buffers.map(kind).join(', ')})`).join('\n');
  }
}

/** Fuses and compiles a jaxpr for the backend. */
export function compileJaxpr(jaxpr: Jaxpr, backend: Backend): Executable {
  return new Executable(fuseJaxpr(jaxpr), backend);
}
