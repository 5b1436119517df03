// What a compiled program reports without running it, for
// `jit(f).lower(...).compile()` (transforms/stages.ts): JAX's memory
// analysis of a plan, and the plan's kernels rendered as CUDA C++
// (render/cuda.ts) with the alignments its buffer placements guarantee,
// which is what cross-lowering for 'cuda' shows on a machine without a GPU.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type ProgramPlan, bufferBytes } from './plan.js';
import { renderCuda } from './render/cuda.js';
import { type Kernel, kernelName } from './kernel-ir.js';
import type { GemmTarget } from './render/cuda-dot.js';

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

/** JAX's memory analysis of a plan whose kernels are `kernels` (generated code counts each distinct source once). */
export function memoryAnalysis(plan: ProgramPlan, kernels: readonly KernelInfo[]): MemoryAnalysis {
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

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * CUDA kernels of a plan and its nested plans. Buffer alignment follows the
 * placements: arena offsets and allocations are CUDA_ALIGNMENT-aligned; a
 * loop body's xs / ys are windows at multiples of their slice size.
 */
/** A device's GEMM target for a kernel (CudaBackend.gemmTarget): its compute capability and tuned tilings. */
export type GemmTargetOf = (kernel: Kernel, params: readonly number[], alignments: readonly number[]) => GemmTarget | undefined;

export function cudaKernels(plan: ProgramPlan, argAlign?: readonly number[], outAlign?: readonly number[], gemm?: GemmTargetOf): KernelInfo[] {
  const out: KernelInfo[] = [];
  const alignOf = (id: number): number => {
    const p = plan.placements[id]!;
    if (p.place === 'argument') return argAlign?.[p.index] ?? CUDA_ALIGNMENT;
    if (p.place === 'output' || p.place === 'donated') return outAlign?.[plan.program.outputs.findIndex((o) => 'buffer' in o && o.buffer === id)] ?? CUDA_ALIGNMENT;
    return CUDA_ALIGNMENT;
  };
  plan.program.steps.forEach((s, k) => {
    if (s.kind === 'launch') {
      const alignments = s.buffers.map(alignOf);
      const r = renderCuda(s.kernel, s.params, { name: kernelName(s.kernel).slice(0, 120), alignments, ...(gemm ? { gemm: gemm(s.kernel, s.params, alignments) } : {}) });
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
      out.push(...cudaKernels(body, argA, outA, gemm));
    } else if (layout.plans.primitive === 'while') {
      out.push(...cudaKernels(layout.plans.cond, undefined, undefined, gemm), ...cudaKernels(layout.plans.body, undefined, undefined, gemm));
    } else if (layout.plans.primitive === 'cond') {
      for (const b of layout.plans.branches) out.push(...cudaKernels(b, undefined, undefined, gemm));
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
