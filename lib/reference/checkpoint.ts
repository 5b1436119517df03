// The reference interpreter's remat primitives: checkpoint evaluates its
// jaxpr equation by equation (recomputation changes where values are
// computed, never what they are); checkpoint_name and device_put are copies.
// Custom derivative calls evaluate their primal jaxpr, as checkpoint does.
import type { PrimitiveParams } from '../core/primitives.js';
import type { RefArray } from './array.js';
import { evalJaxprReference } from './control-flow.js';

/** custom_jvp_call / custom_vjp_call: the primal function's jaxpr (the rules only matter to differentiation). */
export function customCallReference(inputs: RefArray[], { callJaxpr }: PrimitiveParams['custom_jvp_call']): Float64Array[] {
  return evalJaxprReference(callJaxpr.jaxpr, [], inputs).map((r) => r.data.slice());
}

export function checkpointReference(inputs: RefArray[], { jaxpr }: PrimitiveParams['checkpoint']): Float64Array[] {
  return evalJaxprReference(jaxpr.jaxpr, [], inputs).map((r) => r.data.slice());
}
