// jnp.iinfo and jnp.finfo: machine limits of every jaxon dtype, with NumPy's
// and ml_dtypes' field names in camelCase and their exact values (each float
// field is the dtype's own value, e.g. bfloat16's resolution is 0.01 rounded
// to bfloat16). Float limits follow from the mantissa and exponent widths.
import { Array } from '../core/array.js';
import { type DType, checkDType, integerRange, isFloating, isInteger, roundToDType } from '../core/dtype.js';
import { ValueError, show } from '../core/errors.js';

export interface IInfo {
  readonly bits: number;
  readonly min: number;
  readonly max: number;
  /** 'i' for signed, 'u' for unsigned, as NumPy's dtype.kind. */
  readonly kind: 'i' | 'u';
  readonly dtype: DType;
}

export interface FInfo {
  readonly bits: number;
  readonly dtype: DType;
  /** The difference between 1 and the next larger float. */
  readonly eps: number;
  /** The difference between 1 and the next smaller float. */
  readonly epsneg: number;
  readonly max: number;
  readonly min: number;
  /** The smallest positive normal number (also smallestNormal). */
  readonly tiny: number;
  readonly smallestNormal: number;
  readonly smallestSubnormal: number;
  /** 10 ** -precision, rounded to the dtype. */
  readonly resolution: number;
  /** The number of decimal digits the dtype holds exactly. */
  readonly precision: number;
  readonly iexp: number;
  readonly nexp: number;
  readonly nmant: number;
  readonly machep: number;
  readonly negep: number;
  readonly maxexp: number;
  readonly minexp: number;
}

function dtypeOf(fn: string, value: unknown): DType {
  if (value instanceof Array) return value.dtype;
  return checkDType(fn, value, 'dtype');
}

/** jnp.iinfo(dtype or Array): bits, min, max of an integer dtype. */
export function iinfo(type: DType | Array): IInfo {
  const fn = 'jnp.iinfo';
  const dtype = dtypeOf(fn, type);
  if (!isInteger(dtype)) throw new ValueError(`${fn}: Invalid integer data type ${show(dtype)}.`);
  const [min, max] = integerRange(dtype);
  const bits = Number(dtype.replace(/^u?int/, ''));
  return Object.freeze({ bits, min, max, kind: dtype.startsWith('u') ? 'u' : 'i', dtype });
}

/** Mantissa and exponent widths of each float dtype. */
const FLOAT_LAYOUT: Partial<Record<DType, { bits: number; nmant: number; nexp: number }>> = {
  float16: { bits: 16, nmant: 10, nexp: 5 },
  bfloat16: { bits: 16, nmant: 7, nexp: 8 },
  float32: { bits: 32, nmant: 23, nexp: 8 },
  float64: { bits: 64, nmant: 52, nexp: 11 },
};

/** jnp.finfo(dtype or Array): the limits of a float dtype, as numpy.finfo / ml_dtypes.finfo give them. */
export function finfo(type: DType | Array): FInfo {
  const fn = 'jnp.finfo';
  const dtype = dtypeOf(fn, type);
  const layout = FLOAT_LAYOUT[dtype];
  if (!isFloating(dtype) || !layout) throw new ValueError(`${fn}: data type ${show(dtype)} not inexact`);
  const { bits, nmant, nexp } = layout;
  const maxexp = 2 ** (nexp - 1);
  const minexp = 2 - maxexp;
  const eps = 2 ** -nmant;
  const max = (2 - eps) * 2 ** (maxexp - 1);
  const tiny = 2 ** minexp;
  const precision = Math.floor(-Math.log10(eps));
  return Object.freeze({
    bits, dtype, eps, epsneg: 2 ** -(nmant + 1), max, min: -max, tiny, smallestNormal: tiny,
    smallestSubnormal: 2 ** (minexp - nmant), resolution: roundToDType(Number(`1e-${precision}`), dtype), precision,
    iexp: nexp, nexp, nmant, machep: -nmant, negep: -(nmant + 1), maxexp, minexp,
  });
}
