// Compiling a jaxpr for a device (jit, eager control flow): the compiler
// plans it with the device's arena alignment (compiler/plan.ts) and the
// device's backend compiles the plan (cpu-executable.ts, cuda-executable.ts).
import type { Array } from '../core/array.js';
import { planJaxpr } from '../compiler/plan.js';
import type { Jaxpr } from '../trace/jaxpr.js';
import type { ProgramExecutable } from './backend.js';
import type { Device } from './device.js';

/** `label` names the program in a device failure's message ('jax.jit(f)'). */
export function compileForDevice(device: Device, jaxpr: Jaxpr, consts: readonly Array[] = [], donated?: ReadonlySet<number>, label?: string): ProgramExecutable {
  const { planAlignment: alignment, prefetchesScanInputs: prefetchScanInputs } = device.backend;
  const plan = planJaxpr(jaxpr, consts, { alignment, prefetchScanInputs, ...(donated ? { donated } : {}) });
  return device.backend.compileProgram(plan, label);
}
