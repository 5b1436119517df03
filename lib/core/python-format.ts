// Python's str.format for jax.debug.print, after CPython's string.Formatter
// (Lib/string.py) and its format-spec mini-language (Objects/stringlib/
// unicode_format.h, Python/formatter_unicode.c, Python/pystrtod.c): fields
// `{}`, `{0}`, `{name}`, `{x[0]}`, `{x.shape}`, conversions `!s` `!r` `!a`,
// nested specs `{:{width}}`, and the spec `[[fill]align][sign][z][#][0]
// [width][grouping][.precision][type]` for ints, floats and strings. Values
// format as JAX's do: a 0-d Array as the Python scalar it holds (a float32
// prints its float64 value, `0.9092974066734314`, since numpy's scalar
// __format__ goes through Python's float), an n-d Array as numpy's str, JS
// numbers as Python ints (integral) or floats, JS arrays and plain objects as
// Python lists and dicts of reprs. Float digits are exact: BigInt arithmetic
// on the binary value, ties to even, as CPython's dtoa rounds.
import { Array } from './array.js';
import { IndexError, ValueError } from './errors.js';

/** Python's KeyError: a format field names a keyword argument that was not given. */
export class KeyError extends Error {
  override name = 'KeyError';
}

/** Python's AttributeError for a missing attribute in a format field (`{x.foo}`). */
class FieldAttributeError extends Error {
  override name = 'AttributeError';
}

/** A Python tuple for display (an Array's `.shape` in a format field prints as `(3,)`). */
export class PyTuple {
  constructor(readonly items: readonly unknown[]) {}
}

/** A numpy dtype for display: str `float32`, repr `dtype('float32')`. */
class PyDtype {
  constructor(readonly name: string) {}
}

// ---- parsing format strings (CPython's MarkupIterator and parse_field) ----

export interface FormatField {
  /** everything before `!` or `:`: `0`, `x`, `x[0].y`, or '' (automatic numbering) */
  name: string;
  conversion: string | null;
  spec: string;
}

export type FormatPiece = string | FormatField;

/** The literal text and replacement fields of a format string; ValueError with Python's message when it is malformed. */
export function parseFormat(fmt: string): FormatPiece[] {
  const pieces: FormatPiece[] = [];
  let i = 0;
  const n = fmt.length;
  while (i < n) {
    let literal = '';
    let markup = false;
    while (i < n) {
      const c = fmt[i++]!;
      if (c !== '{' && c !== '}') {
        literal += c;
        continue;
      }
      const atEnd = i >= n;
      if (c === '}' && (atEnd || fmt[i] !== '}')) throw new ValueError("Single '}' encountered in format string");
      if (c === '{' && atEnd) throw new ValueError("Single '{' encountered in format string");
      if (fmt[i] === c) {
        literal += c; // {{ or }}
        i++;
        continue;
      }
      markup = true;
      break;
    }
    if (literal) pieces.push(literal);
    if (!markup) continue;
    // the field: a name up to '!', ':' or '}' ('[...]' may hold anything but ']')
    const start = i;
    let c = '';
    while (i < n) {
      c = fmt[i++]!;
      if (c === '{') throw new ValueError("unexpected '{' in field name");
      if (c === '[') {
        while (i < n && fmt[i] !== ']') i++;
        continue;
      }
      if (c === '}' || c === ':' || c === '!') break;
    }
    if (i >= n && c !== '}' && c !== ':' && c !== '!') throw new ValueError("expected '}' before end of string");
    const name = fmt.slice(start, i - 1);
    let conversion: string | null = null;
    let spec = '';
    if (c === '!' || c === ':') {
      if (c === '!') {
        if (i >= n) throw new ValueError('end of string while looking for conversion specifier');
        conversion = fmt[i++]!;
        if (i < n) {
          const next = fmt[i++]!;
          if (next === '}') {
            pieces.push({ name, conversion, spec });
            continue;
          }
          if (next !== ':') throw new ValueError("expected ':' after conversion specifier");
        }
      }
      const specStart = i;
      let depth = 1;
      let closed = false;
      while (i < n) {
        const d = fmt[i++]!;
        if (d === '{') depth++;
        else if (d === '}' && --depth === 0) {
          closed = true;
          break;
        }
      }
      if (!closed) throw new ValueError("unmatched '{' in format spec");
      spec = fmt.slice(specStart, i - 1);
    } else if (c !== '}') {
      throw new ValueError("expected '}' before end of string");
    }
    pieces.push({ name, conversion, spec });
  }
  return pieces;
}

/** Whether a format string has replacement fields (JAX prints `fmt arg0 arg1 ...` when it has none). */
export function hasPlaceholders(fmt: string): boolean {
  return parseFormat(fmt).some((p) => typeof p !== 'string');
}

/** Whether some field of a format string (or of its nested specs) names a keyword argument (`{x}`). */
export function usesKeywords(fmt: string): boolean {
  return parseFormat(fmt).some((p) => {
    if (typeof p === 'string') return false;
    const head = firstPart(p.name);
    return (head !== '' && !/^\d+$/.test(head)) || (p.spec.includes('{') && usesKeywords(p.spec));
  });
}

function firstPart(name: string): string {
  const m = /^[^.[]*/.exec(name);
  return m ? m[0] : '';
}

// ---- string.Formatter.vformat ----

type Accessor = { attribute: true; name: string } | { attribute: false; key: string | number };

/** JAX's _string.formatter_field_name_split: the first part (an index or a keyword) and the accessors after it. */
function splitFieldName(name: string): { first: string | number; rest: Accessor[] } {
  const head = firstPart(name);
  const first: string | number = /^\d+$/.test(head) ? Number(head) : head;
  const rest: Accessor[] = [];
  let i = head.length;
  while (i < name.length) {
    const c = name[i]!;
    if (c === '.') {
      let j = i + 1;
      while (j < name.length && name[j] !== '.' && name[j] !== '[') j++;
      const attr = name.slice(i + 1, j);
      if (!attr) throw new ValueError('Empty attribute in format string');
      rest.push({ attribute: true, name: attr });
      i = j;
    } else if (c === '[') {
      const close = name.indexOf(']', i + 1);
      if (close < 0) throw new ValueError("Missing ']' in format string");
      const key = name.slice(i + 1, close);
      if (!key) throw new ValueError('Empty attribute in format string');
      rest.push({ attribute: false, key: /^\d+$/.test(key) ? Number(key) : key });
      i = close + 1;
      if (i < name.length && name[i] !== '.' && name[i] !== '[') {
        throw new ValueError("Only '.' or '[' may follow ']' in format field specifier");
      }
    } else {
      throw new ValueError("Only '.' or '[' may follow ']' in format field specifier");
    }
  }
  return { first, rest };
}

/** What a format pass does with values: format them (printing), or only look them up (JAX's eager check on tracers). */
interface Pass {
  check: boolean;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function pyTypeName(x: unknown): string {
  if (x === null || x === undefined) return 'NoneType';
  if (x instanceof Array) return 'ArrayImpl';
  if (x instanceof PyTuple) return 'tuple';
  if (globalThis.Array.isArray(x)) return 'list';
  if (isPlainObject(x)) return 'dict';
  if (typeof x === 'string') return 'str';
  if (typeof x === 'boolean') return 'bool';
  if (typeof x === 'number') return isPyInt(x) ? 'int' : 'float';
  if (typeof x === 'function') return 'function';
  return (x as object).constructor?.name ?? 'object';
}

function getAttribute(obj: unknown, name: string, pass: Pass): unknown {
  if (obj instanceof Array) {
    switch (name) {
      case 'shape': return new PyTuple(obj.shape);
      case 'dtype': return new PyDtype(obj.dtype);
      case 'ndim': return obj.ndim;
      case 'size': return obj.size;
      case 'T': return pass.check || obj.isTracer ? obj : obj.T;
      default: throw new FieldAttributeError(`'ArrayImpl' object has no attribute '${name}'`);
    }
  }
  // JS objects' properties are their attributes (a Python dict's keys are not)
  if (obj !== null && (typeof obj === 'object' || typeof obj === 'function') && name in (obj as object)) return (obj as Record<string, unknown>)[name];
  throw new FieldAttributeError(`'${pyTypeName(obj)}' object has no attribute '${name}'`);
}

function getItem(obj: unknown, key: string | number, pass: Pass): unknown {
  if (obj instanceof Array) {
    if (typeof key !== 'number') throw new IndexError(`only integers, slices (\`:\`), ellipsis (\`...\`), numpy.newaxis (\`None\`) and integer or boolean arrays are valid indices, got '${key}'`);
    if (pass.check || obj.isTracer) return obj;
    return obj.index(key);
  }
  if (globalThis.Array.isArray(obj) || obj instanceof PyTuple) {
    const items = obj instanceof PyTuple ? obj.items : obj;
    const kind = obj instanceof PyTuple ? 'tuple' : 'list';
    if (typeof key !== 'number') throw new TypeError(`${kind} indices must be integers or slices, not str`);
    if (key >= items.length) throw new IndexError(`${kind} index out of range`);
    return items[key];
  }
  if (typeof obj === 'string') {
    if (typeof key !== 'number') throw new TypeError('string indices must be integers, not \'str\'');
    if (key >= obj.length) throw new IndexError('string index out of range');
    return obj[key];
  }
  if (obj !== null && typeof obj === 'object') {
    const k = String(key);
    if (!(k in obj)) throw new KeyError(pyRepr(key));
    return (obj as Record<string, unknown>)[k];
  }
  throw new TypeError(`'${pyTypeName(obj)}' object is not subscriptable`);
}

interface VformatState {
  auto: number | false;
  used: Set<string | number>;
}

function vformat(fmt: string, args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>, state: VformatState, depth: number, pass: Pass): string {
  if (depth < 0) throw new ValueError('Max string recursion exceeded');
  let out = '';
  for (const piece of parseFormat(fmt)) {
    if (typeof piece === 'string') {
      out += piece;
      continue;
    }
    let name = piece.name;
    if (name === '') {
      if (state.auto === false) throw new ValueError('cannot switch from manual field specification to automatic field numbering');
      name = String(state.auto);
      state.auto++;
    } else if (/^\d+$/.test(name)) {
      if (state.auto) throw new ValueError('cannot switch from manual field specification to automatic field numbering');
      state.auto = false;
    }
    const { first, rest } = splitFieldName(name);
    let obj: unknown;
    if (typeof first === 'number') {
      if (first >= args.length) throw new IndexError('tuple index out of range');
      obj = args[first];
    } else {
      if (!Object.hasOwn(kwargs, first)) throw new KeyError(pyRepr(first));
      obj = kwargs[first];
    }
    for (const a of rest) obj = a.attribute ? getAttribute(obj, a.name, pass) : getItem(obj, a.key, pass);
    state.used.add(first);
    if (piece.conversion !== null && !['s', 'r', 'a'].includes(piece.conversion)) {
      throw new ValueError(`Unknown conversion specifier ${piece.conversion}`);
    }
    const spec = vformat(piece.spec, args, kwargs, state, depth - 1, pass);
    if (pass.check) continue;
    const converted = piece.conversion === 's' ? pyStr(obj) : piece.conversion === 'r' ? pyRepr(obj) : piece.conversion === 'a' ? pyAscii(pyRepr(obj)) : obj;
    out += pyFormat(converted, spec);
  }
  return out;
}

/** `fmt.format(*args, **kwargs)` on the host values (concrete Arrays, JS values). */
export function pythonFormat(fmt: string, args: readonly unknown[], kwargs: Readonly<Record<string, unknown>> = {}): string {
  return vformat(fmt, args, kwargs, { auto: 0, used: new Set() }, 2, { check: false });
}

/**
 * JAX's _DebugPrintFormatChecker: parses `fmt` and looks every field up in
 * the arguments (which may be tracers) without formatting anything; returns
 * the positional indices and keyword names no field used.
 */
export function checkFormat(fmt: string, args: readonly unknown[], kwargs: Readonly<Record<string, unknown>> = {}): { unusedArgs: number[]; unusedKwargs: string[] } {
  const state: VformatState = { auto: 0, used: new Set() };
  vformat(fmt, args, kwargs, state, 2, { check: true });
  return {
    unusedArgs: args.map((_, i) => i).filter((i) => !state.used.has(i)),
    unusedKwargs: Object.keys(kwargs).filter((k) => !state.used.has(k)),
  };
}

// ---- str, repr ----

const isPyInt = (x: number) => Number.isSafeInteger(x) && !Object.is(x, -0);

/** Python's str(x) of a host value: numpy's str for Arrays, Python's for JS values (lists and dicts show their items' reprs). */
export function pyStr(x: unknown): string {
  if (typeof x === 'string') return x;
  if (x instanceof Array) return x.toString();
  if (x instanceof PyDtype) return x.name;
  return pyRepr(x);
}

/** Python's repr(x) of a host value (JAX's repr for Arrays: `Array(2., dtype=float32)`). */
export function pyRepr(x: unknown): string {
  if (x === null || x === undefined) return 'None';
  if (typeof x === 'string') return pyStringRepr(x);
  if (typeof x === 'boolean') return x ? 'True' : 'False';
  if (typeof x === 'number') return isPyInt(x) ? String(x) : pyFloatRepr(x);
  if (typeof x === 'bigint') return String(x);
  if (x instanceof Array) return x.isTracer ? x.toString() : x.toRepr();
  if (x instanceof PyDtype) return `dtype('${x.name}')`;
  if (x instanceof PyTuple) return x.items.length === 1 ? `(${pyRepr(x.items[0])},)` : `(${x.items.map(pyRepr).join(', ')})`;
  if (globalThis.Array.isArray(x)) return `[${x.map(pyRepr).join(', ')}]`;
  if (isPlainObject(x)) return `{${Object.entries(x).map(([k, v]) => `${pyStringRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  if (ArrayBuffer.isView(x)) return `array([${globalThis.Array.from(x as unknown as ArrayLike<number>).join(', ')}])`;
  if (typeof x === 'function') return `<function ${x.name || '<lambda>'}>`;
  return String(x);
}

function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const c of s) {
    if (c === quote || c === '\\') out += '\\' + c;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) out += `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += c;
  }
  return out + quote;
}

/** Python's ascii(): repr with non-ASCII characters escaped. */
function pyAscii(repr: string): string {
  let out = '';
  for (const c of repr) {
    const code = c.codePointAt(0)!;
    if (code < 0x80) out += c;
    else if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return out;
}

/** Python's repr(float): the shortest digits that read back, positional for exponents in [-4, 16). */
export function pyFloatRepr(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const { digits, exp } = shortestDigits(v);
  const sign = v < 0 ? '-' : '';
  if (exp < -4 || exp >= 16) return sign + scientific(digits, exp, false, 'e');
  return sign + positional(digits, exp + 1, false) + (exp + 1 >= digits.length ? '.0' : '');
}

/** Shortest round-trip digits of |v| (ECMAScript's Number::toString picks them as Python's repr does) and the first digit's exponent. */
function shortestDigits(v: number): { digits: string; exp: number } {
  const [mantissa, exponent] = Math.abs(v).toExponential().split('e') as [string, string];
  return { digits: mantissa.replace('.', ''), exp: Number(exponent) };
}

/** d.ddde+XX (at least two exponent digits); `alt` keeps a point after a lone digit. */
function scientific(digits: string, exp: number, alt: boolean, e: 'e' | 'E'): string {
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : alt ? `${digits}.` : digits;
  return `${mantissa}${e}${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** Digits placed around the point at position `decpt` (digits before it); `alt` keeps a trailing point. */
function positional(digits: string, decpt: number, alt: boolean): string {
  if (decpt <= 0) return `0.${'0'.repeat(-decpt)}${digits}`;
  if (digits.length <= decpt) return digits + '0'.repeat(decpt - digits.length) + (alt ? '.' : '');
  return `${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

// ---- exact decimal digits of doubles ----

const view64 = new DataView(new ArrayBuffer(8));

/** |v| = m * 2^e exactly, for finite v. */
function decompose(v: number): { m: bigint; e: number } {
  view64.setFloat64(0, Math.abs(v));
  const hi = view64.getUint32(0);
  const lo = view64.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  return biased === 0 ? { m, e: -1074 } : { m: m | (1n << 52n), e: biased - 1075 };
}

/** |v| * 10^k rounded to an integer, ties to even. */
function scaledRound(v: number, k: number): bigint {
  const { m, e } = decompose(v);
  let num = m;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  if (k >= 0) num *= 10n ** BigInt(k);
  else den *= 10n ** BigInt(-k);
  const q = num / den;
  const twice = 2n * (num % den);
  return twice > den || (twice === den && (q & 1n) === 1n) ? q + 1n : q;
}

/** |v| with `precision` digits after the point ('f'). */
function fixedDigits(v: number, precision: number, alt: boolean): string {
  const n = v === 0 ? '0'.repeat(precision + 1) : scaledRound(v, precision).toString().padStart(precision + 1, '0');
  if (precision === 0) return alt ? `${n}.` : n;
  return `${n.slice(0, -precision)}.${n.slice(-precision)}`;
}

/** |v| rounded to `significant` digits: the digits and the exponent of the first. */
function roundedDigits(v: number, significant: number): { digits: string; exp: number } {
  if (v === 0) return { digits: '0'.repeat(significant), exp: 0 };
  let exp = Math.floor(Math.log10(Math.abs(v)));
  for (let tries = 0; tries < 4; tries++) {
    const s = scaledRound(v, significant - 1 - exp).toString();
    if (s.length > significant) exp++;
    else if (s.length < significant) exp--;
    else return { digits: s, exp };
  }
  throw new Error(`python-format: internal error: no ${significant}-digit rounding of ${v}`);
}

// ---- the format-spec mini-language ----

interface Spec {
  fill: string;
  align: '<' | '>' | '=' | '^' | null;
  sign: '+' | '-' | ' ' | null;
  z: boolean;
  alt: boolean;
  zero: boolean;
  width: number;
  grouping: ',' | '_' | null;
  precision: number | null;
  type: string | null;
}

function parseSpec(spec: string, typeName: string): Spec {
  const m = /^(?:(.)?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d*))?(.)?$/su.exec(spec);
  if (!m) throw new ValueError(`Invalid format specifier '${spec}' for object of type '${typeName}'`);
  if (m[9] === '') throw new ValueError('Format specifier missing precision');
  return {
    fill: m[1] ?? ' ',
    align: (m[2] as Spec['align']) ?? null,
    sign: (m[3] as Spec['sign']) ?? null,
    z: m[4] !== undefined,
    alt: m[5] !== undefined,
    zero: m[6] !== undefined,
    width: m[7] ? Number(m[7]) : 0,
    grouping: (m[8] as Spec['grouping']) ?? null,
    precision: m[9] !== undefined ? Number(m[9]) : null,
    type: m[10] ?? null,
  };
}

/** Inserts `sep` every `every` digits from the right, padding with zeros to at least `minWidth` characters (Python's grouped zero fill). */
function group(digits: string, sep: string | null, every: number, minWidth = 0): string {
  if (!sep) return digits.padStart(minWidth, '0');
  let d = digits;
  for (;;) {
    let out = '';
    for (let i = d.length; i > 0; i -= every) out = d.slice(Math.max(0, i - every), i) + (out ? sep + out : '');
    if (out.length >= minWidth) return out;
    d = '0' + d;
  }
}

/** Sign, prefix and body laid out in the spec's width (numbers: '=' puts the fill after the sign). */
function layoutNumber(s: Spec, negative: boolean, prefix: string, intDigits: string, rest: string, every: number): string {
  const signText = negative ? '-' : s.sign === '+' ? '+' : s.sign === ' ' ? ' ' : '';
  let fill = s.fill;
  let align = s.align;
  if (s.zero && align === null) {
    fill = '0';
    align = '=';
  }
  align ??= '>';
  const zeroFill = align === '=' && fill === '0';
  const minDigits = zeroFill ? s.width - signText.length - prefix.length - rest.length : 0;
  const body = group(intDigits, /^\d+$/.test(intDigits) || /^[0-9a-fA-F]+$/.test(intDigits) ? s.grouping : null, every, minDigits);
  return pad(signText + prefix, body + rest, s.width, fill, align);
}

function pad(head: string, body: string, width: number, fill: string, align: '<' | '>' | '=' | '^'): string {
  const n = Math.max(0, width - [...head].length - [...body].length);
  switch (align) {
    case '<': return head + body + fill.repeat(n);
    case '>': return fill.repeat(n) + head + body;
    case '=': return head + fill.repeat(n) + body;
    case '^': return fill.repeat(Math.floor(n / 2)) + head + body + fill.repeat(n - Math.floor(n / 2));
  }
}

function formatString(value: string, spec: string, typeName = 'str'): string {
  if (spec === '') return value;
  const s = parseSpec(spec, typeName);
  if (s.type !== null && s.type !== 's') throw new ValueError(`Unknown format code '${s.type}' for object of type '${typeName}'`);
  if (s.sign !== null) throw new ValueError('Sign not allowed in string format specifier');
  if (s.alt) throw new ValueError('Alternate form (#) not allowed in string format specifier');
  if (s.grouping) throw new ValueError(`Cannot specify '${s.grouping}' with 's'.`);
  if (s.align === '=') throw new ValueError("'=' alignment not allowed in string format specifier");
  const text = s.precision !== null ? [...value].slice(0, s.precision).join('') : value;
  const fill = s.zero && s.align === null ? '0' : s.fill;
  return pad('', text, s.width, fill, s.align ?? '<');
}

function formatInt(value: number, spec: string, typeName = 'int'): string {
  if (spec === '') return String(value);
  const s = parseSpec(spec, typeName);
  const t = s.type ?? 'd';
  if ('eEfFgG%'.includes(t)) return formatFloat(value, spec);
  if (!'dbcoxXn'.includes(t)) throw new ValueError(`Unknown format code '${t}' for object of type '${typeName}'`);
  if (s.precision !== null) throw new ValueError('Precision not allowed in integer format specifier');
  if (s.grouping === ',' && t !== 'd') throw new ValueError(`Cannot specify ',' with '${t}'.`);
  if (t === 'n' && s.grouping) throw new ValueError(`Cannot specify '${s.grouping}' with 'n'.`);
  if (t === 'c') {
    if (s.sign !== null) throw new ValueError("Sign not allowed with integer format specifier 'c'");
    if (s.alt) throw new ValueError("Alternate form (#) not allowed with integer format specifier 'c'");
    if (value < 0 || value > 0x10ffff) throw new RangeError('%c arg not in range(0x110000)');
    return formatString(String.fromCodePoint(value), spec.replace(/c$/, ''), 'str');
  }
  const radix = t === 'b' ? 2 : t === 'o' ? 8 : t === 'x' || t === 'X' ? 16 : 10;
  let digits = Math.abs(value).toString(radix);
  if (t === 'X') digits = digits.toUpperCase();
  const prefix = s.alt && radix !== 10 ? `0${t === 'X' ? 'X' : t}` : '';
  return layoutNumber(s, value < 0, prefix, digits, '', radix === 10 ? 3 : 4);
}

function formatFloat(value: number, spec: string, typeName = 'float'): string {
  if (spec === '') return pyFloatRepr(value);
  const s = parseSpec(spec, typeName);
  let t = s.type;
  if (t !== null && !'eEfFgGn%'.includes(t)) throw new ValueError(`Unknown format code '${t}' for object of type '${typeName}'`);
  if (t === 'n') {
    if (s.grouping) throw new ValueError(`Cannot specify '${s.grouping}' with 'n'.`);
    t = 'g';
  }
  let v = value;
  let suffix = '';
  if (t === '%') {
    v *= 100;
    suffix = '%';
    t = 'f';
  }
  const negative = (v < 0 || Object.is(v, -0)) && !(s.z && roundsToZero(v, t, s.precision));
  const upper = t !== null && t === t.toUpperCase();
  let body: string;
  if (!Number.isFinite(v)) {
    body = Number.isNaN(v) ? 'nan' : 'inf';
    if (upper) body = body.toUpperCase();
    return layoutNumber({ ...s, grouping: null }, !Number.isNaN(v) && v < 0, '', body, suffix, 3);
  }
  const a = Math.abs(v);
  if (t === null && s.precision === null) {
    // repr, laid out (sign, width, grouping)
    body = pyFloatRepr(a);
  } else if (t === 'f' || t === 'F') {
    body = fixedDigits(a, s.precision ?? 6, s.alt);
  } else if (t === 'e' || t === 'E') {
    const p = s.precision ?? 6;
    const { digits, exp } = roundedDigits(a, p + 1);
    body = scientific(digits, exp, s.alt, t === 'E' ? 'E' : 'e');
  } else {
    // 'g', 'G', or no type with a precision (like 'g', with at least one digit after the point)
    const addDot0 = t === null;
    const p = Math.max(1, s.precision ?? 6);
    const { digits, exp } = roundedDigits(a, p);
    const d = s.alt ? digits : digits.replace(/0+$/, '') || '0';
    const decpt = exp + 1;
    const useExp = decpt <= -4 || decpt > (addDot0 ? p - 1 : p);
    if (useExp) body = scientific(d, a === 0 ? 0 : exp, s.alt, upper && t !== null ? 'E' : 'e');
    else {
      body = positional(d, a === 0 ? 1 : decpt, s.alt);
      if (addDot0 && !body.includes('.')) body += '.0';
    }
  }
  const point = body.search(/[.eE]/);
  const intDigits = point < 0 ? body : body.slice(0, point);
  const rest = point < 0 ? '' : body.slice(point);
  return layoutNumber(s, negative, '', intDigits, rest + suffix, 3);
}

/** Whether a negative value prints as zero (the 'z' option then drops its sign). */
function roundsToZero(v: number, t: string | null, precision: number | null): boolean {
  if (v === 0) return true;
  if (t === 'f' || t === 'F') return scaledRound(v, precision ?? 6) === 0n;
  return false;
}

/**
 * Python's format(value, spec) of a host value, as JAX formats a callback's
 * arguments: a 0-d Array as its Python scalar (numpy's scalar __format__),
 * bfloat16 through its str (it is no numpy floating type); an n-d Array as
 * numpy's str, and only with an empty spec.
 */
export function pyFormat(value: unknown, spec: string): string {
  if (value instanceof Array) {
    if (value.isTracer) return formatString(value.toString(), spec);
    if (value.ndim > 0) {
      if (spec !== '') throw new TypeError('unsupported format string passed to numpy.ndarray.__format__');
      return value.toString();
    }
    const x = value.dataSync()[0]!;
    switch (value.dtype) {
      case 'bool': return formatBool(x !== 0, spec);
      case 'bfloat16': return formatString(value.toString(), spec, 'str');
      case 'float16': case 'float32': case 'float64': return formatFloat(x, spec);
      default: return formatInt(x, spec);
    }
  }
  if (typeof value === 'number') return isPyInt(value) ? formatInt(value, spec) : formatFloat(value, spec);
  if (typeof value === 'boolean') return formatBool(value, spec);
  if (typeof value === 'string') return formatString(value, spec);
  if (value instanceof PyDtype) return formatString(value.name, spec);
  if (spec !== '') throw new TypeError(`unsupported format string passed to ${pyTypeName(value)}.__format__`);
  return pyStr(value);
}

function formatBool(value: boolean, spec: string): string {
  // bool.__format__ is int's: 'True' with an empty spec, else the integer 1 or 0
  return spec === '' ? (value ? 'True' : 'False') : formatInt(value ? 1 : 0, spec, 'bool');
}
