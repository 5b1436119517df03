// Array printing, byte for byte as NumPy 2 and JAX print: `str` is numpy's
// array_str and `repr` is JAX's Array.__repr__ (numpy's array2string with an
// 'Array(' prefix, ', ' separators and the dtype always shown). A port of
// numpy/_core/arrayprint.py under the default print options, with the digits
// from a BigInt Dragon4 (numpy's dragon4.c: shortest digits that round-trip in
// the element's own type, ties to even). bfloat16 is an ml_dtypes type that
// numpy prints with the scalar's repr, C++'s `%g`, and so do we.
import { checkOptions, show, ValueError } from './errors.js';
import { checkDType, isFloating, roundToDType, type DType } from './dtype.js';

export type FormatMode = 'str' | 'repr';

export interface FormatOptions {
  /** 'str' (the default) is Python's `str(array)`; 'repr' is JAX's `repr(array)`. */
  mode?: FormatMode;
  /** repr of a weakly typed array: JAX adds `weak_type=True`. */
  weakType?: boolean;
}

// numpy's default print options
const PRECISION = 8;
const THRESHOLD = 1000;
const EDGE_ITEMS = 3;
const LINE_WIDTH = 75;
const REPR_PREFIX = 'Array(';

/**
 * Formats row-major `values` of an array with `shape` and `dtype` as
 * `str(np.asarray(x))` ('str') or JAX's `repr(x)` ('repr'). Bools are 0/1,
 * 16-bit floats already widened to numbers.
 */
export function formatArray(
  values: ArrayLike<number>,
  shape: readonly number[],
  dtype: DType,
  options?: FormatOptions,
): string {
  checkOptions('formatArray', options, ['mode', 'weakType']);
  const mode = options?.mode ?? 'str';
  if (mode !== 'str' && mode !== 'repr') {
    throw new TypeError(`formatArray: mode must be 'str' or 'repr', got ${show(mode)}`);
  }
  checkDType('formatArray', dtype);
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new TypeError(`formatArray: shape must be an array of non-negative integers, got ${show(shape)}`);
  }
  const size = shape.reduce((a, b) => a * b, 1);
  if (values.length !== size) {
    throw new ValueError(`formatArray: shape ${show(shape)} needs ${size} values, got ${values.length}`);
  }
  return mode === 'str' ? arrayStr(values, shape, dtype) : arrayRepr(values, shape, dtype, options?.weakType === true);
}

function arrayStr(values: ArrayLike<number>, shape: readonly number[], dtype: DType): string {
  if (shape.length === 0) return scalarStr(values[0]!, dtype);
  return array2string(values, shape, dtype, ' ', '', '');
}

function arrayRepr(values: ArrayLike<number>, shape: readonly number[], dtype: DType, weakType: boolean): string {
  const dtypeStr = weakType ? `dtype=${dtype}, weak_type=True` : `dtype=${dtype}`;
  const size = values.length;
  const body =
    size === 0 ? `[], shape=${pythonTuple(shape)}` : array2string(values, shape, dtype, ', ', REPR_PREFIX, ',');
  // JAX's own arithmetic: rfind gives -1 for one line, and the gap is spaces, not a newline
  const lastLineLength = body.length - body.lastIndexOf('\n') + 1;
  const gap = lastLineLength + dtypeStr.length + 2 > LINE_WIDTH ? ' '.repeat(REPR_PREFIX.length) : ' ';
  return `${REPR_PREFIX}${body},${gap}${dtypeStr})`;
}

function pythonTuple(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

// ---- array2string and _formatArray ----

function array2string(
  values: ArrayLike<number>,
  shape: readonly number[],
  dtype: DType,
  separator: string,
  prefix: string,
  suffix: string,
): string {
  if (values.length === 0) return '[]';
  const strides = rowMajorStrides(shape);
  const summarize = values.length > THRESHOLD;
  // the element format (widths, notation) is chosen from the printed elements only
  const shown = summarize ? cornerIndices(shape, strides).map((i) => values[i]!) : Array.from(values);
  const formatElement = elementFormatter(shown, shape.length === 0, dtype);
  const lineWidth = LINE_WIDTH - suffix.length;
  const nextLinePrefix = ' ' + ' '.repeat(prefix.length);

  const recurse = (axis: number, offset: number, hangingIndent: string, currentWidth: number): string => {
    const axesLeft = shape.length - axis;
    if (axesLeft === 0) return formatElement(values[offset]!);
    const nextHangingIndent = hangingIndent + ' ';
    const nextWidth = currentWidth - 1; // room for the closing ']'
    const length = shape[axis]!;
    const stride = strides[axis]!;
    const showSummary = summarize && 2 * EDGE_ITEMS < length;
    const leading = showSummary ? EDGE_ITEMS : 0;
    const trailing = showSummary ? EDGE_ITEMS : length;
    const child = (i: number): string => recurse(axis + 1, offset + i * stride, nextHangingIndent, nextWidth);
    let s = '';
    if (axesLeft === 1) {
      const elementWidth = currentWidth - Math.max(separator.trimEnd().length, 1);
      let line = hangingIndent;
      const extend = (word: string): void => {
        [s, line] = extendLine(s, line, word, elementWidth, hangingIndent);
      };
      for (let i = 0; i < leading; i++) {
        extend(child(i));
        line += separator;
      }
      if (showSummary) {
        extend('...');
        line += separator;
      }
      for (let i = trailing; i > 1; i--) {
        extend(child(length - i));
        line += separator;
      }
      extend(child(length - 1));
      s += line;
    } else {
      const lineSeparator = separator.trimEnd() + '\n'.repeat(axesLeft - 1);
      for (let i = 0; i < leading; i++) s += hangingIndent + child(i) + lineSeparator;
      if (showSummary) s += hangingIndent + '...' + lineSeparator;
      for (let i = trailing; i > 1; i--) s += hangingIndent + child(length - i) + lineSeparator;
      s += hangingIndent + child(length - 1);
    }
    return '[' + s.slice(hangingIndent.length) + ']';
  };
  return recurse(0, 0, nextLinePrefix, lineWidth);
}

function extendLine(s: string, line: string, word: string, lineWidth: number, nextLinePrefix: string): [string, string] {
  // wrapping a line that holds only the indent would not help
  const needsWrap = line.length + word.length > lineWidth && line.length > nextLinePrefix.length;
  if (needsWrap) {
    s += line.trimEnd() + '\n';
    line = nextLinePrefix;
  }
  return [s, line + word];
}

function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let stride = 1;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    strides[axis] = stride;
    stride *= shape[axis]!;
  }
  return strides;
}

/** Flat indices of the elements a summarized print shows (numpy's _leading_trailing). */
function cornerIndices(shape: readonly number[], strides: readonly number[]): number[] {
  const out: number[] = [];
  const visit = (axis: number, offset: number): void => {
    if (axis === shape.length) {
      out.push(offset);
      return;
    }
    const length = shape[axis]!;
    const keep =
      length > 2 * EDGE_ITEMS
        ? [...range(0, EDGE_ITEMS), ...range(length - EDGE_ITEMS, length)]
        : range(0, length);
    for (const i of keep) visit(axis + 1, offset + i * strides[axis]!);
  };
  visit(0, 0);
  return out;
}

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}

// ---- element formats ----

type Formatter = (value: number) => string;

function elementFormatter(shown: number[], zeroDimensional: boolean, dtype: DType): Formatter {
  if (dtype === 'bool') {
    const trueString = zeroDimensional ? 'True' : ' True';
    return (v) => (v ? trueString : 'False');
  }
  if (dtype === 'bfloat16') return (v) => formatCFloat(roundToDType(v, dtype));
  if (isFloating(dtype)) return floatingFormatter(shown, dtype as BinaryFloat);
  let width = 0;
  for (const v of shown) width = Math.max(width, String(v).length);
  return (v) => String(v).padStart(width);
}

/** numpy's FloatingFormat with floatmode 'maxprec', precision 8, suppress off. */
function floatingFormatter(shown: number[], dtype: BinaryFloat): Formatter {
  const data = shown.map((v) => roundToDType(v, dtype));
  const finite = data.filter((v) => Number.isFinite(v));
  const absNonZero = finite.filter((v) => v !== 0).map(Math.abs);
  let expFormat = false;
  if (absNonZero.length > 0) {
    const max = Math.max(...absNonZero);
    const min = Math.min(...absNonZero);
    // numpy compares in the array's dtype: Python floats are weak (NEP 50)
    const ratio = roundToDType(max / min, dtype);
    expFormat = max >= EXP_CUTOFF_MAX[dtype] || min < roundToDType(1e-4, dtype) || ratio > 1000;
  }

  let padLeft = 0;
  let padRight = 0;
  let format: (v: number) => string;
  if (finite.length === 0) {
    format = () => '';
  } else if (expFormat) {
    const parts = finite.map((v) => splitScientific(scientific(v, dtype, { precision: PRECISION, trim: '.' })));
    const expSize = Math.max(...parts.map((p) => p.exponent.length)) - 1;
    const precision = Math.max(...parts.map((p) => p.fraction.length));
    padLeft = Math.max(...parts.map((p) => p.integer.length));
    padRight = expSize + 2 + precision;
    format = (v) =>
      scientific(v, dtype, { precision, minDigits: precision, trim: 'k', padLeft, expDigits: expSize });
  } else {
    const parts = finite.map((v) => positional(v, dtype, { precision: PRECISION, trim: '.' }).split('.'));
    padLeft = Math.max(...parts.map((p) => p[0]!.length));
    padRight = Math.max(...parts.map((p) => p[1]!.length));
    format = (v) => positional(v, dtype, { precision: PRECISION, minDigits: 0, trim: '.', padLeft, padRight });
  }
  if (finite.length !== data.length) {
    const negativeInfinity = data.some((v) => v === -Infinity) ? 1 : 0;
    const offset = padRight + 1; // the decimal point
    padLeft = Math.max(padLeft, 'nan'.length - offset, 'inf'.length + negativeInfinity - offset);
  }
  const width = padLeft + padRight + 1;
  const cache = new Map<number, string>();
  return (value) => {
    const v = roundToDType(value, dtype);
    if (!Number.isFinite(v)) return nonFinite(v).padStart(width);
    const key = Object.is(v, -0) ? NaN : v; // NaN never reaches here, so it can stand for -0
    let s = cache.get(key);
    if (s === undefined) cache.set(key, (s = format(v)));
    return s;
  };
}

// numpy 2.2+: 10**min(8, finfo(dtype).precision)
const EXP_CUTOFF_MAX: Record<BinaryFloat, number> = { float16: 1e3, float32: 1e6, float64: 1e8 };
// numpy's scalar str switches to scientific at these (the float64 one kept from numpy 1)
const SCALAR_CUTOFF_MAX: Record<BinaryFloat, number> = { float16: 1e3, float32: 1e6, float64: 1e16 };

function nonFinite(v: number): string {
  return Number.isNaN(v) ? 'nan' : v < 0 ? '-inf' : 'inf';
}

/** `str` of a 0-d array: the scalar's str, which is not bound by `precision`. */
function scalarStr(value: number, dtype: DType): string {
  if (dtype === 'bool') return value ? 'True' : 'False';
  if (dtype === 'bfloat16') return formatCFloat(roundToDType(value, dtype));
  if (!isFloating(dtype)) return String(value);
  const type = dtype as BinaryFloat;
  const v = roundToDType(value, type);
  if (!Number.isFinite(v)) return nonFinite(v);
  const abs = Math.abs(v);
  // the 1e-4 bound is compared in long double, not in the scalar's type
  if (abs === 0 || (abs < SCALAR_CUTOFF_MAX[type] && abs >= 1e-4)) return positional(v, type, { trim: '0' });
  return scientific(v, type, { trim: '-' });
}

/**
 * ml_dtypes prints bfloat16 through C++ `ostream << float`: printf's `%g` with
 * 6 significant digits, and NaN without its sign.
 */
function formatCFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v < 0 ? '-inf' : 'inf';
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  if (v === 0) return sign + '0';
  const significant = 6;
  const { digits, exponent } = dragon4(Math.abs(v), 'float64', { unique: false, cutoff: 'total', precision: significant });
  const trimmed = digits.replace(/0+$/, '');
  if (exponent < -4 || exponent >= significant) {
    const fraction = trimmed.slice(1);
    return `${sign}${trimmed[0]}${fraction ? '.' + fraction : ''}e${exponentString(exponent, 2)}`;
  }
  const { integer, fraction } = placeDigits(trimmed, exponent);
  return `${sign}${integer}${fraction ? '.' + fraction : ''}`;
}

// ---- Dragon4 ----

type BinaryFloat = 'float16' | 'float32' | 'float64';

/** Significand bits (with the implicit one) and the least normal exponent. */
const FLOAT_LAYOUT: Record<BinaryFloat, { bits: number; minExponent: number }> = {
  float16: { bits: 11, minExponent: -14 },
  float32: { bits: 24, minExponent: -126 },
  float64: { bits: 53, minExponent: -1022 },
};

interface DigitRequest {
  /** Shortest digits that read back as the same value of the type; else exact digits up to the cutoff. */
  unique: boolean;
  /** How `precision` and `minDigits` count: digits after the point, or significant digits. */
  cutoff: 'fraction' | 'total';
  /** The most digits (-1: no limit). */
  precision?: number;
  /** The fewest digits, past those needed to be unique (-1: none). */
  minDigits?: number;
}

/** `digits` (no sign, no point) with the first digit at 10**exponent. */
interface Digits {
  digits: string;
  exponent: number;
}

const float64View = new DataView(new ArrayBuffer(8));

/**
 * Decimal digits of a finite v >= 0, as numpy's Dragon4 (Steele & White with
 * Burger & Dybvig's margins) makes them. The margins are half the gaps to the
 * neighbours in `type`, inclusive when the significand is even (IEEE ties);
 * a cut digit is rounded to nearest, ties to even.
 */
function dragon4(v: number, type: BinaryFloat, request: DigitRequest): Digits {
  if (v === 0) return { digits: '0', exponent: 0 };
  const { bits, minExponent } = FLOAT_LAYOUT[type];
  const precision = request.precision ?? -1;
  const minDigits = request.minDigits ?? -1;

  // v = significand * 2**e, with the type's significand width
  float64View.setFloat64(0, v);
  const high = float64View.getUint32(0);
  const biased = (high >>> 20) & 0x7ff;
  let significand = (BigInt(high & 0xfffff) << 32n) | BigInt(float64View.getUint32(4));
  let e = -1074;
  if (biased !== 0) {
    significand |= 1n << 52n;
    e = biased - 1075;
  }
  const log2 = e + significand.toString(2).length - 1;
  const typeExponent = Math.max(log2, minExponent) - (bits - 1);
  significand = e >= typeExponent ? significand << BigInt(e - typeExponent) : significand >> BigInt(typeExponent - e);
  e = typeExponent;
  const isEven = (significand & 1n) === 0n;
  const unequalMargins = significand === 1n << BigInt(bits - 1) && log2 > minExponent;

  // value = num / scale; the margins are half the gaps below and above, in the same units
  let num = significand * 4n;
  let marginLow = unequalMargins ? 1n : 2n;
  let marginHigh = 2n;
  let scale = 1n;
  if (e - 2 >= 0) {
    const f = 1n << BigInt(e - 2);
    num *= f;
    marginLow *= f;
    marginHigh *= f;
  } else {
    scale = 1n << BigInt(2 - e);
  }

  // exponent of the first digit: 10**k <= v < 10**(k+1)
  let k = Math.floor(Math.log10(v));
  while (compareScaled(num, scale, k + 1) >= 0) k++;
  while (compareScaled(num, scale, k) < 0) k--;

  let cutoffExponent = -Infinity;
  let minExponentDigits = Infinity;
  if (request.cutoff === 'fraction') {
    if (precision >= 0) {
      cutoffExponent = -precision;
      if (k < cutoffExponent) k = cutoffExponent; // print the digit at the cutoff even if it is 0
    }
    if (minDigits >= 0) minExponentDigits = -minDigits;
  } else {
    if (precision >= 0) cutoffExponent = k - Math.max(precision, 1) + 1;
    if (minDigits >= 0) minExponentDigits = k - minDigits + 1;
  }

  if (k >= 0) scale *= 10n ** BigInt(k);
  else {
    const f = 10n ** BigInt(-k);
    num *= f;
    marginLow *= f;
    marginHigh *= f;
  }

  let digits = '';
  let exponent = k;
  let digit: number;
  let low = false;
  let highEnough = false;
  for (;;) {
    digit = Number(num / scale);
    num %= scale;
    if (request.unique) {
      low = isEven ? num <= marginLow : num < marginLow;
      const upper = num + marginHigh;
      highEnough = isEven ? upper >= scale : upper > scale;
    }
    if (((low || highEnough) && exponent <= minExponentDigits) || exponent === cutoffExponent) break;
    digits += String(digit);
    num *= 10n;
    marginLow *= 10n;
    marginHigh *= 10n;
    exponent--;
  }

  let roundDown = low;
  if (low === highEnough) {
    const twice = num * 2n;
    roundDown = twice < scale || (twice === scale && digit % 2 === 0);
  }
  if (roundDown) return { digits: digits + String(digit), exponent: k };
  if (digit < 9) return { digits: digits + String(digit + 1), exponent: k };
  // carry through the trailing nines
  let i = digits.length - 1;
  while (i >= 0 && digits[i] === '9') i--;
  if (i < 0) return { digits: '1', exponent: k + 1 };
  return { digits: digits.slice(0, i) + String(Number(digits[i]) + 1), exponent: k };
}

/** Sign of num / scale - 10**power. */
function compareScaled(num: bigint, scale: bigint, power: number): number {
  const left = power >= 0 ? num : num * 10n ** BigInt(-power);
  const right = power >= 0 ? scale * 10n ** BigInt(power) : scale;
  return left < right ? -1 : left > right ? 1 : 0;
}

// ---- positional and scientific strings (numpy's FormatPositional / FormatScientific) ----

/** numpy's trim modes: 'k' keep, '.' trim zeros, '0' trim zeros but keep one, '-' trim zeros and point. */
type Trim = 'k' | '.' | '0' | '-';

interface PositionalOptions {
  precision?: number;
  minDigits?: number;
  trim: Trim;
  padLeft?: number;
  padRight?: number;
}

function positional(v: number, type: BinaryFloat, options: PositionalOptions): string {
  const precision = options.precision ?? -1;
  const d = dragon4(Math.abs(v), type, {
    unique: true,
    cutoff: 'fraction',
    precision,
    minDigits: options.minDigits ?? -1,
  });
  const { integer, fraction: raw } = placeDigits(d.digits, d.exponent);
  const fraction = trimFraction(raw, precision, options.trim);
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  const point = fraction === '' && options.trim === '-' ? '' : '.';
  return (
    (sign + integer).padStart(options.padLeft ?? 0) + point + fraction.padEnd(options.padRight ?? 0)
  );
}

interface ScientificOptions {
  precision?: number;
  minDigits?: number;
  trim: Trim;
  padLeft?: number;
  expDigits?: number;
}

function scientific(v: number, type: BinaryFloat, options: ScientificOptions): string {
  const precision = options.precision ?? -1;
  const minDigits = options.minDigits ?? -1;
  // precision counts the digits after the point, Dragon4 counts all of them
  const d = dragon4(Math.abs(v), type, {
    unique: true,
    cutoff: 'total',
    precision: precision >= 0 ? precision + 1 : -1,
    minDigits: minDigits >= 0 ? minDigits + 1 : -1,
  });
  const fraction = trimFraction(d.digits.slice(1), precision, options.trim);
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  const point = fraction === '' && options.trim === '-' ? '' : '.';
  const mantissa = (sign + d.digits[0]).padStart(options.padLeft ?? 0) + point + fraction;
  return `${mantissa}e${exponentString(d.exponent, options.expDigits ?? -1)}`;
}

function splitScientific(s: string): { integer: string; fraction: string; exponent: string } {
  const [mantissa, exponent] = s.split('e') as [string, string];
  const [integer, fraction] = mantissa.split('.') as [string, string];
  return { integer, fraction: fraction ?? '', exponent };
}

function exponentString(exponent: number, digits: number): string {
  return (exponent < 0 ? '-' : '+') + String(Math.abs(exponent)).padStart(Math.max(digits, 2), '0');
}

/** Splits digits whose first sits at 10**exponent into integer and fraction digits. */
function placeDigits(digits: string, exponent: number): { integer: string; fraction: string } {
  if (exponent < 0) return { integer: '0', fraction: '0'.repeat(-exponent - 1) + digits };
  if (digits.length <= exponent + 1) return { integer: digits + '0'.repeat(exponent + 1 - digits.length), fraction: '' };
  return { integer: digits.slice(0, exponent + 1), fraction: digits.slice(exponent + 1) };
}

function trimFraction(fraction: string, precision: number, trim: Trim): string {
  if (trim === 'k') return precision > fraction.length ? fraction.padEnd(precision, '0') : fraction;
  // digits cut at the precision may end in zeros; unique digits never do
  if (precision >= 0) fraction = fraction.replace(/0+$/, '');
  if (trim === '0' && fraction === '') return '0';
  return fraction;
}
