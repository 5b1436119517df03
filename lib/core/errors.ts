// Error types jaxon throws. Messages name the function, the argument and the
// values (`jnp.add: shapes [2,3] and [4] cannot be broadcast together`), as
// JAX's do; TypeError is used for wrong kinds of argument, ValueError for
// well-typed but invalid values.

/** A well-typed argument with an invalid value (JAX's ValueError). */
export class ValueError extends Error {
  override name = 'ValueError';
}

/** An index outside an array's bounds or an unsupported index (JAX's IndexError). */
export class IndexError extends Error {
  override name = 'IndexError';
}

/** A missing attribute or option: an unknown jax.config option, a custom function without its rule (JAX's AttributeError). */
export class AttributeError extends Error {
  override name = 'AttributeError';
}

/** A device ran out of memory (JAX's XlaRuntimeError RESOURCE_EXHAUSTED). */
export class ResourceExhaustedError extends Error {
  override name = 'ResourceExhaustedError';
}

/**
 * A device's state was lost: a kernel faulted or hung (CUDA's sticky errors, where JAX raises XlaRuntimeError
 * INTERNAL and the process must restart). The work in flight did not run and every array on the device is invalid;
 * using one raises this too. jaxon tries to reset the device on its next use: the emulated GPU allows it, so computing
 * again works; NVIDIA's driver does not (an H100 refused), and the message then says to restart the process.
 */
export class DeviceLostError extends Error {
  override name = 'DeviceLostError';
}

/** Formats a value for an error message: shapes as [2,3], strings quoted. */
export function show(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(show).join(',')}]`;
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name;
    if (name && name !== 'Object') return name;
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  }
  if (typeof value === 'function') return `function ${(value as { name?: string }).name || '(anonymous)'}`;
  return String(value);
}

/** Throws `${fn}: unknown option ${key}` for keys outside `allowed`. */
export function checkOptions(fn: string, options: unknown, allowed: readonly string[]): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: options must be an object, got ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      const known = allowed.length ? allowed.map((k) => `'${k}'`).join(', ') : 'none';
      throw new TypeError(`${fn}: unknown option '${key}' (known options: ${known})`);
    }
  }
}

/** A traced (abstract) array was used where a concrete value is needed (JAX's ConcretizationTypeError, a TypeError there too). */
export class ConcretizationTypeError extends TypeError {
  override name = 'ConcretizationTypeError';
}

/** A traced array was converted to a JS primitive: a comparison, arithmetic operator or `if` on a traced value (JAX's TracerBoolConversionError). */
export class TracerBoolConversionError extends ConcretizationTypeError {
  override name = 'TracerBoolConversionError';
}

/** A tracer used outside the transformation that made it: it escaped through a side effect, or reached a trace it does not belong to (JAX's UnexpectedTracerError, a TypeError there too). */
export class UnexpectedTracerError extends TypeError {
  override name = 'UnexpectedTracerError';
}
