// jax.config's jaxEnableX64 for a stretch of a test. The setting is
// process-wide and ava runs a file's tests concurrently, so `fn` must be
// synchronous (nothing else runs until the setting is restored) and a test
// that flips it is declared test.serial.
import { config } from '../../lib/core/config.js';

/** Runs `fn` with x64 set to `enabled`, then restores the previous setting (also when fn throws). */
export function withX64<T>(enabled: boolean, fn: () => T): T {
  const previous = config.jaxEnableX64;
  config.update('jaxEnableX64', enabled);
  try {
    const result = fn();
    if (result instanceof Promise) throw new TypeError('withX64: fn must be synchronous (the setting is process-wide)');
    return result;
  } finally {
    config.update('jaxEnableX64', previous);
  }
}
