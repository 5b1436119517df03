// JAX's ahead-of-time stages: `jit(f).lower(...args, { platform })` →
// Lowered { asText, costAnalysis, compile } → Compiled { memoryAnalysis,
// costAnalysis, asText, kernels, and a call }. Lowering needs only avals
// (ShapeDtypeStructs allocate nothing), and lowering for 'cuda' works on a
// machine without a GPU: the plan (fusion, schedule, buffer assignment) is
// the same for both targets except alignment, so memoryAnalysis() is what a
// run allocates; the kernels are rendered as CUDA C++ (render/cuda.ts),
// which nvcc or NVRTC compiles. A Compiled for 'cpu' also runs.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Array } from '../core/array.js';
import { ValueError, show } from '../core/errors.js';
import type { ShapedArray } from '../core/primitives.js';
import { type PyTree, type TreeDef, flatten, treeDefToString } from '../core/pytree.js';
import type { ClosedJaxpr } from '../trace/jaxpr.js';
import { type CostAnalysis, jaxprCost } from './cost.js';
import type { ProgramExecutable } from '../runtime/backend.js';
import { type Device, devices } from '../runtime/device.js';
import { describePlan } from './describe-plan.js';
import { type ProgramPlan, bufferBytes, planJaxpr } from './plan.js';
import { renderCuda } from './render/cuda.js';
import { kernelName } from './kernel-ir.js';

export type Platform = 'cpu' | 'cuda';

/** Arena offsets for CUDA: 256 bytes, the allocation granularity CUDA's own allocators guarantee. */
export const CUDA_ALIGNMENT = 256;

/** JAX's CompiledMemoryStats, camelCased. */
export interface MemoryAnalysis {
  generatedCodeSizeInBytes: number;
  argumentSizeInBytes: number;
  outputSizeInBytes: number;
  aliasSizeInBytes: number;
  tempSizeInBytes: number;
  hostGeneratedCodeSizeInBytes: number;
  hostArgumentSizeInBytes: number;
  hostOutputSizeInBytes: number;
  hostAliasSizeInBytes: number;
  hostTempSizeInBytes: number;
  peakMemoryInBytes: number;
}

/** One generated kernel: a complete translation unit and, for CUDA, its launch shape. */
export interface KernelInfo {
  name: string;
  /** the primitives it computes */
  label: string;
  source: string;
  /** CUDA launch shape; null for CPU kernels (OpenMP loops) */
  grid: [number, number, number] | null;
  block: [number, number, number] | null;
  sharedMemBytes: number;
}

interface LoweredInfo {
  platform: Platform;
  inTree: TreeDef;
  outTree: TreeDef;
  avals: readonly ShapedArray[];
  donated: ReadonlySet<number>;
  fn: string;
  /** the jitted function's executable for this signature on a device (shared with calls) */
  executable: (device: Device) => ProgramExecutable;
  /** calls the jitted function on a device */
  call: (device: Device, args: unknown[]) => unknown;
}

const avalText = (a: ShapedArray) => {
  const space = (a as { memorySpace?: string }).memorySpace;
  return `${a.dtype}[${a.shape.join(',')}]${a.weakType ? '{weak}' : ''}${space && space !== 'device' ? `{${space}}` : ''}`;
};

export class Lowered {
  readonly #info: LoweredInfo;
  #compiled?: Compiled;

  constructor(
    readonly jaxpr: ClosedJaxpr,
    info: LoweredInfo,
  ) {
    this.#info = info;
  }

  get platform(): Platform {
    return this.#info.platform;
  }

  get inAvals(): readonly ShapedArray[] {
    return this.#info.avals;
  }

  /** The traced program (our StableHLO: the jaxpr). */
  asText(): string {
    return this.jaxpr.toString();
  }

  /** Flops, transcendentals and bytes accessed of the unfused program, as XLA's HloCostAnalysis counts them. */
  costAnalysis(): CostAnalysis {
    return jaxprCost(this.jaxpr.jaxpr);
  }

  compile(): Compiled {
    this.#compiled ??= makeCompiled(this, this.#info);
    return this.#compiled;
  }
}

export interface Compiled {
  /** Runs the program (same argument structure, shapes and dtypes as lowered) on the first device of its platform. */
  (...args: unknown[]): unknown;
  readonly platform: Platform;
  readonly plan: ProgramPlan;
  memoryAnalysis(): MemoryAnalysis;
  costAnalysis(): CostAnalysis;
  /** The fused schedule: one line per step with buffer placements, then the kernels' sources. */
  asText(): string;
  kernels(): KernelInfo[];
}

/** The platform's first device here, or undefined (cross-lowering for 'cuda' where no GPU is). */
function deviceFor(platform: Platform): Device | undefined {
  try {
    return devices(platform)[0];
  } catch {
    return undefined;
  }
}

function makeCompiled(lowered: Lowered, info: LoweredInfo): Compiled {
  const { platform } = info;
  const device = deviceFor(platform);
  const plan = device
    ? info.executable(device).plan
    : planJaxpr(lowered.jaxpr.jaxpr, lowered.jaxpr.consts, { alignment: CUDA_ALIGNMENT, donated: info.donated });
  let kernels: KernelInfo[] | undefined;
  const listKernels = (): KernelInfo[] => {
    kernels ??= platform === 'cpu' ? cpuKernels(info.executable(device!)) : cudaKernels(plan);
    return kernels;
  };
  const call = (...args: unknown[]) => {
    if (!device) {
      throw new ValueError(`Compiled(${info.fn}): this program was compiled for 'cuda', and this process has no CUDA device (${deviceProblem()}); lower it with { platform: 'cpu' } to run it here`);
    }
    const [leaves, tree] = flatten(args as PyTree);
    const given = leaves.map((l) => (l instanceof Array ? l.aval : null));
    const mismatch = treeDefToString(tree) !== treeDefToString(info.inTree) || given.some((a, i) => {
      const want = info.avals[i]!;
      return a !== null && (a.dtype !== want.dtype || a.shape.join(',') !== want.shape.join(','));
    });
    if (mismatch) {
      throw new TypeError(`Compiled(${info.fn}): computation compiled for input types (${info.avals.map(avalText).join(', ')}) was called with (${leaves.map((l) => (l instanceof Array ? avalText(l.aval) : show(l))).join(', ')})`);
    }
    return info.call(device, args);
  };
  const compiled = call as Compiled;
  Object.defineProperties(compiled, {
    platform: { value: platform },
    plan: { value: plan },
    memoryAnalysis: { value: () => memoryAnalysis(plan, listKernels()) },
    costAnalysis: { value: () => lowered.costAnalysis() },
    asText: {
      value: () => {
        const m = memoryAnalysis(plan, listKernels());
        const header = `// ${info.fn} compiled for ${platform}: ${listKernels().length} kernels; arena ${m.tempSizeInBytes} bytes (device), ${m.hostTempSizeInBytes} bytes (pinned_host)`;
        return [header, describePlan(plan), ...listKernels().map((k) => k.source)].join('\n\n');
      },
    },
    kernels: { value: () => listKernels() },
  });
  return compiled;
}

function memoryAnalysis(plan: ProgramPlan, kernels: readonly KernelInfo[]): MemoryAnalysis {
  const args = plan.argumentBytes();
  const { output, alias } = plan.outputBytes();
  const code = new Set(kernels.map((k) => k.source));
  const generated = [...code].reduce((n, s) => n + Buffer.byteLength(s), 0);
  return {
    generatedCodeSizeInBytes: generated,
    argumentSizeInBytes: args.device,
    outputSizeInBytes: output.device,
    aliasSizeInBytes: alias.device,
    tempSizeInBytes: plan.arena.device,
    hostGeneratedCodeSizeInBytes: 0,
    hostArgumentSizeInBytes: args.pinned_host,
    hostOutputSizeInBytes: output.pinned_host,
    hostAliasSizeInBytes: alias.pinned_host,
    hostTempSizeInBytes: plan.arena.pinned_host,
    // everything the call holds on the device at once: arguments, outputs (less those written into donated arguments) and the arena
    peakMemoryInBytes: args.device + output.device - alias.device + plan.arena.device,
  };
}

function deviceProblem(): string {
  try {
    devices('cuda');
    return 'unknown';
  } catch (error) {
    return (error as Error).message;
  }
}

function cpuKernels(executable: ProgramExecutable): KernelInfo[] {
  return executable.kernels().map((k) => ({ ...k, grid: null, block: null, sharedMemBytes: 0 }));
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * CUDA kernels of a plan and its nested plans. Buffer alignment follows the
 * placements: arena offsets and allocations are CUDA_ALIGNMENT-aligned; a
 * loop body's xs / ys are windows at multiples of their slice size.
 */
function cudaKernels(plan: ProgramPlan, argAlign?: readonly number[], outAlign?: readonly number[]): KernelInfo[] {
  const out: KernelInfo[] = [];
  const alignOf = (id: number): number => {
    const p = plan.placements[id]!;
    if (p.place === 'argument') return argAlign?.[p.index] ?? CUDA_ALIGNMENT;
    if (p.place === 'output' || p.place === 'donated') return outAlign?.[plan.program.outputs.findIndex((o) => 'buffer' in o && o.buffer === id)] ?? CUDA_ALIGNMENT;
    return CUDA_ALIGNMENT;
  };
  plan.program.steps.forEach((s, k) => {
    if (s.kind === 'launch') {
      const r = renderCuda(s.kernel, s.params, { name: kernelName(s.kernel).slice(0, 120), alignments: s.buffers.map(alignOf) });
      dumpCuda(r.name, r.source);
      out.push({ name: r.name, label: s.label, source: r.source, grid: r.grid, block: r.block, sharedMemBytes: r.sharedMemBytes });
      return;
    }
    if (s.kind !== 'call') return;
    const layout = plan.calls.get(k)!;
    if (layout.plans.primitive === 'scan') {
      const body = layout.plans.body;
      const { numConsts, numCarry, length } = s.eqn.params as { numConsts: number; numCarry: number; length: number };
      const windows = (ids: number[]) => ids.map((id) => gcd(CUDA_ALIGNMENT, alignOf(id) === CUDA_ALIGNMENT ? bufferBytes(plan.program.buffers[id]!) / Math.max(length, 1) : 1));
      const argA = [...s.inputs.slice(0, numConsts + numCarry).map(alignOf), ...windows(s.inputs.slice(numConsts + numCarry))];
      const outA = [...s.outputs.slice(0, numCarry).map(() => CUDA_ALIGNMENT), ...windows(s.outputs.slice(numCarry))];
      out.push(...cudaKernels(body, argA, outA));
    } else if (layout.plans.primitive === 'while') {
      out.push(...cudaKernels(layout.plans.cond), ...cudaKernels(layout.plans.body));
    } else {
      for (const b of layout.plans.branches) out.push(...cudaKernels(b));
    }
  });
  return out;
}

/** JAXON_DUMP_DIR: every cross-lowered CUDA kernel is written there as NAME.cu, as the CPU and NVRTC caches do for the kernels they build. */
function dumpCuda(name: string, source: string): void {
  const dir = process.env.JAXON_DUMP_DIR;
  if (!dir || !dir.trim()) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${name}.cu`), source);
}
