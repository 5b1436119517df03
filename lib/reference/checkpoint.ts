// The reference interpreter's remat primitives: checkpoint evaluates its
// jaxpr equation by equation (recomputation changes where values are
// computed, never what they are); checkpoint_name and device_put are copies.
import type { PrimitiveParams } from '../core/primitives.js';
import type { RefArray } from './array.js';
import { evalJaxprReference } from './control-flow.js';

export function checkpointReference(inputs: RefArray[], { jaxpr }: PrimitiveParams['checkpoint']): Float64Array[] {
  return evalJaxprReference(jaxpr.jaxpr, [], inputs).map((r) => r.data.slice());
}
