// The `lax` namespace.
export * from './ops.js';
export * from './control-flow.js';
export * from './sort.js';
export * from './convolution.js';
export * as linalg from './linalg.js';
export * from './windowed.js';
export * from './associative-scan.js';
