// JAX's ahead-of-time stages: `jit(f).lower(...args, { platform })` →
// Lowered { asText, costAnalysis, compile } → Compiled { memoryAnalysis,
// costAnalysis, asText, kernels, and a call }. Lowering needs only avals
// (ShapeDtypeStructs allocate nothing), and lowering for 'cuda' works on a
// machine without a GPU: the plan (fusion, schedule, buffer assignment) is
// the same for both targets except alignment, so memoryAnalysis() is what a
// run allocates; the kernels are rendered as CUDA C++ (render/cuda.ts),
// which nvcc or NVRTC compiles. A Compiled runs on its platform's first
// device where this process has one. The plan and its reports come from the
// compiler (compiler/analysis.ts); finding a device and running the program
// belong here, above the runtime, so the compiler runs nothing.
import { Array } from '../core/array.js';
import { ValueError, show } from '../core/errors.js';
import type { ShapedArray } from '../core/primitives.js';
import { type PyTree, type TreeDef, flatten, treeDefToString } from '../core/pytree.js';
import type { ClosedJaxpr } from '../trace/jaxpr.js';
import { CUDA_ALIGNMENT, type GemmTargetOf, type KernelInfo, type MemoryAnalysis, cudaKernels, memoryAnalysis } from '../compiler/analysis.js';
import { type CostAnalysis, jaxprCost } from '../compiler/cost.js';
import { describePlan } from '../compiler/describe-plan.js';
import { type MemoryPlan, memoryPlanOf } from '../compiler/memory-plan.js';
import { type ProgramPlan, planJaxpr } from '../compiler/plan.js';
import type { ProgramExecutable } from '../runtime/backend.js';
import { type Device, devices } from '../runtime/device.js';
import { scanPrefetchMode } from '../runtime/cuda-executable.js';

export type { KernelInfo, MemoryAnalysis } from '../compiler/analysis.js';
export type { MemoryPlan } from '../compiler/memory-plan.js';

export type Platform = 'cpu' | 'cuda';

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

  /** Not a Lowered's: buffer assignment happens in compile(). */
  memoryPlan(): never {
    throw new ValueError(`Lowered.memoryPlan(${this.#info.fn}): a lowered program has no buffer assignment yet; call .compile().memoryPlan()`);
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
  /**
   * The buffer assignment over the schedule, as plain data (`{ buffers, steps, transfers, lanes, peak, totals, ... }`,
   * compiler/memory-plan.ts), whose totals are memoryAnalysis()'s figures; `.toSVG()` draws it.
   */
  memoryPlan(): MemoryPlan;
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
    : planJaxpr(lowered.jaxpr.jaxpr, lowered.jaxpr.consts, { target: platform, alignment: CUDA_ALIGNMENT, prefetchScanInputs: scanPrefetchMode(), donated: info.donated });
  let kernels: KernelInfo[] | undefined;
  const listKernels = (): KernelInfo[] => {
    // on a CUDA device, dots render for it (its compute capability, the autotune's tilings) as its executable did
    const gemm = (device?.backend as { gemmTarget?: GemmTargetOf } | undefined)?.gemmTarget?.bind(device!.backend);
    kernels ??= platform === 'cpu' ? cpuKernels(info.executable(device!)) : cudaKernels(plan, undefined, undefined, gemm);
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
    memoryPlan: { value: () => memoryPlanOf(plan, { function: info.fn, platform, argumentShapes: info.avals.map((a) => a.shape) }) },
  });
  return compiled;
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
