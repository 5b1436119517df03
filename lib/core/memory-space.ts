// Memory spaces of abstract values, after JAX's aval.memory_space and
// lax/utils.py's _default_memory_space_rule: the non-scalar operands of a
// primitive must share one memory space, which its outputs inherit (scalars
// are exempt, and a primitive over scalars only computes on the device).
// A few primitives keep their operand's space whatever its rank
// (broadcast_in_dim, copy, checkpoint_name, stop_gradient, the scatters,
// as in JAX), device_put moves to its dstKind, and control flow takes the
// spaces its nested jaxprs give their outputs. Applied around every
// abstract-eval rule (primitives.ts), so eager ops, tracing and every
// transform see the same spaces.
import { ValueError } from './errors.js';
import type { AbstractEvalRule, MemoryKind, Primitive, PrimitiveParams, ShapedArray } from './primitives.js';

export function memorySpaceOf(a: ShapedArray): MemoryKind {
  return a.memorySpace ?? 'device';
}

/** The aval in `space` (a new object; the 'device' default is left implicit, so `{ ...aval }` comparisons keep working). */
export function withMemorySpace(a: ShapedArray, space: MemoryKind): ShapedArray {
  const { memorySpace: _, ...rest } = a;
  return space === 'device' ? rest : { ...rest, memorySpace: space };
}

/** JAX's aval.str_short(): `float32[4,2]`, `float32<host>[4,2]`. */
export function typeWithSpace(a: ShapedArray): string {
  const space = memorySpaceOf(a) === 'device' ? '' : '<host>';
  return `${a.dtype}${space}[${a.shape.join(',')}]`;
}

/** Primitives whose output lives where their (first) operand does, scalar or not. */
const OPERAND_SPACE = new Set<Primitive>(['broadcast_in_dim', 'copy', 'name', 'stop_gradient', 'scatter', 'scatter_add', 'scatter_mul', 'scatter_min', 'scatter_max']);

/** JAX's default rule: one space among the non-scalar operands; the device when every operand is a scalar. */
function commonSpace(prim: Primitive, avals: readonly ShapedArray[]): MemoryKind {
  let previous: ShapedArray | null = null;
  for (const a of avals) {
    if (a.shape.length === 0) continue;
    if (previous && memorySpaceOf(previous) !== memorySpaceOf(a)) {
      throw new ValueError(
        `lax.${prim}: memory_space of all inputs passed to \`${prim}\` must be the same. ` +
          `Got one operand with type: ${typeWithSpace(previous)} and another operand with type: ${typeWithSpace(a)}`,
      );
    }
    previous = a;
  }
  return previous ? memorySpaceOf(previous) : 'device';
}

/** Loops carry values in the space they came in: JAX's "carry input and carry output must have equal types". */
function checkCarry(prim: 'scan' | 'while', carryIn: readonly ShapedArray[], carryOut: readonly ShapedArray[]): void {
  carryIn.forEach((a, i) => {
    const o = carryOut[i];
    if (o && memorySpaceOf(a) !== memorySpaceOf(o)) {
      throw new TypeError(
        `lax.${prim}: the body's carry input and carry output must have equal types, but carry ${i} comes in as ${typeWithSpace(a)} ` +
          `and goes out as ${typeWithSpace(o)} (move it with devicePut before the loop or inside the body)`,
      );
    }
  });
}

/** The memory space of each output of `prim` (after its shape/dtype rule accepted the operands). */
function outputSpaces<P extends Primitive>(prim: P, avals: readonly ShapedArray[], params: PrimitiveParams[P], count: number): MemoryKind[] {
  switch (prim) {
    case 'device_put':
      return [(params as PrimitiveParams['device_put']).dstKind];
    case 'checkpoint':
      return (params as PrimitiveParams['checkpoint']).jaxpr.outAvals.map(memorySpaceOf);
    case 'custom_jvp_call':
    case 'custom_vjp_call':
      return (params as PrimitiveParams['custom_jvp_call']).callJaxpr.outAvals.map(memorySpaceOf);
    case 'custom_lin':
      return (params as PrimitiveParams['custom_lin']).outAvals.map(memorySpaceOf);
    // the host reads operands in any memory kind; a pure callback's results land in device memory
    case 'debug_callback':
      return [];
    case 'pure_callback':
      return new globalThis.Array<MemoryKind>(count).fill('device');
    case 'cond': {
      const [first, ...rest] = (params as PrimitiveParams['cond']).branches;
      const spaces = first!.outAvals.map(memorySpaceOf);
      rest.forEach((b, i) => {
        b.outAvals.forEach((o, k) => {
          if (memorySpaceOf(o) !== spaces[k]) {
            throw new TypeError(
              `lax.cond: branch 0 and ${i + 1} outputs must have the same types, but output ${k} is ${typeWithSpace(first!.outAvals[k]!)} and ${typeWithSpace(o)}`,
            );
          }
        });
      });
      return spaces;
    }
    case 'scan': {
      const { jaxpr, numConsts, numCarry } = params as PrimitiveParams['scan'];
      checkCarry('scan', jaxpr.inAvals.slice(numConsts, numConsts + numCarry), jaxpr.outAvals);
      return jaxpr.outAvals.map(memorySpaceOf);
    }
    case 'while': {
      const { bodyJaxpr, bodyNconsts } = params as PrimitiveParams['while'];
      checkCarry('while', bodyJaxpr.inAvals.slice(bodyNconsts), bodyJaxpr.outAvals);
      return bodyJaxpr.outAvals.map(memorySpaceOf);
    }
    default: {
      const space = OPERAND_SPACE.has(prim) ? memorySpaceOf(avals[0]!) : commonSpace(prim, avals);
      return new globalThis.Array<MemoryKind>(count).fill(space);
    }
  }
}

type RuleTable = { [P in Primitive]: AbstractEvalRule<P> };

/** Primitives whose output spaces come from their params (outputSpaces' cases before the default). */
const SPACE_RULES = new Set<Primitive>(['device_put', 'checkpoint', 'custom_jvp_call', 'custom_vjp_call', 'custom_lin', 'debug_callback', 'pure_callback', 'cond', 'scan', 'while']);

/** An aval in device memory with the default left implicit (withMemorySpace's form). */
const onDevice = (a: ShapedArray) => a.memorySpace === undefined;

/** Wraps every rule of the table so its outputs carry memory spaces (and mixed spaces are rejected). */
export function withMemorySpaces(table: RuleTable): RuleTable {
  const out: Partial<Record<Primitive, unknown>> = {};
  for (const prim of Object.keys(table) as Primitive[]) {
    const rule = table[prim] as AbstractEvalRule<Primitive>;
    const special = SPACE_RULES.has(prim);
    out[prim] = (avals: ShapedArray[], params: PrimitiveParams[Primitive]): ShapedArray[] => {
      const outs = rule(avals, params);
      // everything on the device (the common case, on every eager op): outputs on the device, no copies
      if (!special && avals.every(onDevice) && outs.every(onDevice)) return outs;
      const spaces = outputSpaces(prim, avals, params, outs.length);
      return outs.map((o, i) => withMemorySpace(o, spaces[i] ?? 'device'));
    };
  }
  return out as RuleTable;
}
