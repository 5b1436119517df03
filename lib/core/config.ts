// jax.config: process-wide options, read and set as in JAX
// (`jax.config.update('jaxEnableX64', true)`, `jax.config.jaxEnableX64`).
// The one option is JAX's jax_enable_x64: off by default, as in JAX, so a
// 64-bit dtype a user asks for is canonicalized to its 32-bit counterpart
// (core/dtype.ts, canonicalizeDType). JAXON_ENABLE_X64 sets the start value,
// as JAX_ENABLE_X64 does. In core because dtypes consult it at every layer.
import { AttributeError, ValueError, show } from './errors.js';

/** JAX's bool_env: the strings an environment flag may hold. */
function boolEnv(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase();
  if (['y', 'yes', 't', 'true', 'on', '1'].includes(value)) return true;
  if (['n', 'no', 'f', 'false', 'off', '0'].includes(value)) return false;
  throw new ValueError(`invalid truth value ${show(raw)} for environment variable ${name}`);
}

let enableX64 = boolEnv('JAXON_ENABLE_X64', false);

/** Each option under its camelCase name and JAX's snake_case one. */
const OPTION_NAMES: Record<string, 'jaxEnableX64'> = { jaxEnableX64: 'jaxEnableX64', jax_enable_x64: 'jaxEnableX64' };

function optionNamed(name: unknown): 'jaxEnableX64' {
  const option = typeof name === 'string' && Object.hasOwn(OPTION_NAMES, name) ? OPTION_NAMES[name] : undefined;
  if (!option) throw new AttributeError(`Unrecognized config option: ${typeof name === 'string' ? name : show(name)} (jaxon's options: jaxEnableX64, also spelled jax_enable_x64)`);
  return option;
}

/** Whether 64-bit dtypes are enabled (JAX's config.jax_enable_x64). */
export function x64Enabled(): boolean {
  return enableX64;
}

/** jax.config. */
export const config = Object.freeze({
  /** Sets an option: `jax.config.update('jaxEnableX64', true)` (JAX's name 'jax_enable_x64' works too). */
  update(name: string, value: boolean): void {
    const option = optionNamed(name);
    if (typeof value !== 'boolean') throw new TypeError(`jax.config.update: ${option} must be a boolean, got ${show(value)}`);
    enableX64 = value;
  },
  /** The value of an option, by either of its names. */
  read(name: string): boolean {
    optionNamed(name);
    return enableX64;
  },
  /** Whether 64-bit dtypes are enabled (off by default, as in JAX). */
  get jaxEnableX64(): boolean {
    return enableX64;
  },
  /** JAX's spelling of jaxEnableX64. */
  get jax_enable_x64(): boolean {
    return enableX64;
  },
});
