// Compiling a jaxpr for a device (jit, eager control flow): the compiler
// plans it with the device's arena alignment (compiler/plan.ts) and the
// device's backend compiles the plan (cpu-executable.ts, cuda-executable.ts).
import { Array } from '../core/array.js';
import type { Storage } from '../core/memory.js';
import type { ShapedArray } from '../core/primitives.js';
import { type ProgramPlan, planJaxpr } from '../compiler/plan.js';
import type { Jaxpr } from '../trace/jaxpr.js';
import type { ProgramExecutable } from './backend.js';
import type { Device } from './device.js';

/** `label` names the program in a device failure's message ('jax.jit(f)'). */
export function compileForDevice(device: Device, jaxpr: Jaxpr, consts: readonly Array[] = [], donated?: ReadonlySet<number>, label?: string): ProgramExecutable {
  const { planAlignment: alignment, prefetchesScanInputs: prefetchScanInputs } = device.backend;
  const plan = planJaxpr(jaxpr, consts, { target: device.backend.platform, alignment, prefetchScanInputs, ...(donated ? { donated } : {}) });
  return device.backend.compileProgram(plan, label);
}

/**
 * A call's output arrays (cpu-executable.ts, cuda-executable.ts): from the storage of the output slot that holds it
 * (a slot returned twice is shared: retained again), from the argument or constant it returns (retained), or, for
 * a literal output, the array `literal` makes.
 */
export function outputArrays(plan: ProgramPlan, storages: readonly Storage[], args: readonly Array[], consts: readonly Array[], literal: (value: number, aval: ShapedArray) => Array): Array[] {
  const handedOut = new Set<number>();
  return plan.program.outputs.map((o, i) => {
    if ('literal' in o) return literal(o.literal, o.aval);
    const slot = plan.outputSlots[i]!;
    let storage: Storage;
    if (slot >= 0) {
      storage = storages[slot]!;
      if (handedOut.has(slot)) storage.retain();
      handedOut.add(slot);
    } else {
      const p = plan.placements[o.buffer]!;
      storage = (p.place === 'argument' ? args[p.index]! : consts[(p as { index: number }).index]!).storage('jax.jit').retain();
    }
    return new Array(storage, o.aval.shape, o.aval.dtype, o.aval.weakType, o.aval.memorySpace ?? 'device');
  });
}
