// jax.config: process-wide options, read and set as in JAX
// (`jax.config.update('jaxEnableX64', true)`, `jax.config.jaxEnableX64`).
// jax_enable_x64: off by default, as in JAX, so a 64-bit dtype a user asks
// for is canonicalized to its 32-bit counterpart (core/dtype.ts,
// canonicalizeDType); JAXON_ENABLE_X64 sets the start value, as
// JAX_ENABLE_X64 does. jax_default_matmul_precision: the lax.Precision a dot
// without one gets when it is traced (null: DEFAULT, which lets a GPU's
// tensor cores round float32 operands to tf32, as JAX does there; 'float32'
// or 'highest' keeps float32 accuracy); JAXON_DEFAULT_MATMUL_PRECISION sets
// the start value, as JAX_DEFAULT_MATMUL_PRECISION does. In core because
// dtypes and dot_general consult them at every layer.
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

/** dot_general's precision param: 'default' and 'high' allow tf32 on a GPU, 'highest' keeps float32. */
export type MatmulPrecision = 'default' | 'high' | 'highest';

/** JAX's names of a precision (lax.Precision members and the strings jax_default_matmul_precision takes). */
export const PRECISION_NAMES: Readonly<Record<string, MatmulPrecision>> = {
  default: 'default', bfloat16: 'default', fastest: 'default', high: 'high', tensorfloat32: 'high', highest: 'highest', float32: 'highest',
};

function precisionNamed(where: string, value: unknown): MatmulPrecision {
  const p = typeof value === 'string' ? PRECISION_NAMES[value.toLowerCase()] : undefined;
  if (!p) throw new ValueError(`${where} must be one of ${Object.keys(PRECISION_NAMES).map((n) => `'${n}'`).join(', ')} or null, got ${show(value)}`);
  return p;
}

let enableX64 = boolEnv('JAXON_ENABLE_X64', false);
const precisionEnv = process.env['JAXON_DEFAULT_MATMUL_PRECISION'];
let matmulPrecision: string | null = precisionEnv ? (precisionNamed('JAXON_DEFAULT_MATMUL_PRECISION', precisionEnv), precisionEnv) : null;

type Option = 'jaxEnableX64' | 'jaxDefaultMatmulPrecision';
/** Each option under its camelCase name and JAX's snake_case one. */
const OPTION_NAMES: Record<string, Option> = {
  jaxEnableX64: 'jaxEnableX64', jax_enable_x64: 'jaxEnableX64',
  jaxDefaultMatmulPrecision: 'jaxDefaultMatmulPrecision', jax_default_matmul_precision: 'jaxDefaultMatmulPrecision',
};

function optionNamed(name: unknown): Option {
  const option = typeof name === 'string' && Object.hasOwn(OPTION_NAMES, name) ? OPTION_NAMES[name] : undefined;
  if (!option) {
    throw new AttributeError(`Unrecognized config option: ${typeof name === 'string' ? name : show(name)} (jaxon's options: jaxEnableX64, also spelled jax_enable_x64; jaxDefaultMatmulPrecision, also spelled jax_default_matmul_precision)`);
  }
  return option;
}

/** Whether 64-bit dtypes are enabled (JAX's config.jax_enable_x64). */
export function x64Enabled(): boolean {
  return enableX64;
}

/** The precision a dot_general without one is traced with: null for DEFAULT (JAX's config.jax_default_matmul_precision). */
export function defaultMatmulPrecision(): MatmulPrecision | null {
  if (matmulPrecision === null) return null;
  const p = PRECISION_NAMES[matmulPrecision.toLowerCase()]!;
  return p === 'default' ? null : p;
}

/** What a trace depends on among the options: jit keys its cache with it. */
export function traceConfigKey(): string {
  return `${enableX64 ? 'x64|' : ''}${matmulPrecision === null ? '' : `precision=${defaultMatmulPrecision() ?? 'default'}|`}`;
}

/** jax.config. */
export const config = Object.freeze({
  /**
   * Sets an option: `jax.config.update('jaxEnableX64', true)`, `jax.config.update('jaxDefaultMatmulPrecision',
   * 'float32')` (JAX's names 'jax_enable_x64' and 'jax_default_matmul_precision' work too).
   */
  update(name: string, value: boolean | string | null): void {
    const option = optionNamed(name);
    if (option === 'jaxEnableX64') {
      if (typeof value !== 'boolean') throw new TypeError(`jax.config.update: ${option} must be a boolean, got ${show(value)}`);
      enableX64 = value;
      return;
    }
    if (value !== null) precisionNamed(`jax.config.update: ${option}`, value);
    matmulPrecision = value as string | null;
  },
  /** The value of an option, by either of its names. */
  read(name: string): boolean | string | null {
    return optionNamed(name) === 'jaxEnableX64' ? enableX64 : matmulPrecision;
  },
  /** Whether 64-bit dtypes are enabled (off by default, as in JAX). */
  get jaxEnableX64(): boolean {
    return enableX64;
  },
  /** JAX's spelling of jaxEnableX64. */
  get jax_enable_x64(): boolean {
    return enableX64;
  },
  /** The default precision of dots (null: lax.Precision.DEFAULT), as set. */
  get jaxDefaultMatmulPrecision(): string | null {
    return matmulPrecision;
  },
  /** JAX's spelling of jaxDefaultMatmulPrecision. */
  get jax_default_matmul_precision(): string | null {
    return matmulPrecision;
  },
});
