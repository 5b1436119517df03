// The `lax` namespace.
export * from './ops.js';
export * from './control-flow.js';
export * from './sort.js';
import { disposeIntermediates } from '../core/memory.js';
import * as linalgNamespace from './linalg.js';
/** lax.linalg; each function disposes its own intermediates. */
export const linalg = disposeIntermediates(linalgNamespace, 'lax.linalg.');
