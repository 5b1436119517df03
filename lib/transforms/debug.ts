// jax.debug: the namespace of host callbacks for debugging (callbacks.ts).
export { callback, print, setPrintSink } from './callbacks.js';
