// The `lax` namespace.
export * from './ops.js';
