// The `lax` namespace.
import { disposeIntermediates } from '../core/memory.js';
import * as linalgNamespace from './linalg.js';

export * from './ops.js';
export * from './bits.js';
export * from './control-flow.js';
export * from './sort.js';
export * from './convolution.js';
export * from './windowed.js';
export * from './associative-scan.js';
/** lax.linalg; each function disposes its own intermediates. */
export const linalg = disposeIntermediates(linalgNamespace, 'lax.linalg.');
