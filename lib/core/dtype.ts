// dtypes, their storage, and JAX's type promotion lattice with weak types.
// Promotion follows jax._src.dtypes (the lattice in JAX's "Type promotion
// semantics" doc) with 64-bit integers canonicalized to 32 bits, as JAX does
// with x64 off (jaxon has no 64-bit integers). float64 exists while
// jax.config's jaxEnableX64 is on; while it is off (the default, as in JAX)
// canonicalizeDType turns it into float32 wherever JAX canonicalizes: the
// dtypes users ask for (checkUserDType, with JAX's UserWarning), the dtypes
// data imply, and resultType.
import { x64Enabled } from './config.js';
import { ValueError, show } from './errors.js';

export type DType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'float16'
  | 'bfloat16'
  | 'float32'
  | 'float64';

export const DTYPES: readonly DType[] = [
  'bool', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'float16', 'bfloat16', 'float32', 'float64',
];

const ITEMSIZE: Record<DType, number> = {
  bool: 1, int8: 1, int16: 2, int32: 4, uint8: 1, uint16: 2, uint32: 4, float16: 2, bfloat16: 2, float32: 4, float64: 8,
};

export function itemsize(dtype: DType): number {
  return ITEMSIZE[dtype];
}

export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && (DTYPES as readonly string[]).includes(value);
}

/** Validates a user-given dtype; `fn` and `arg` name the call in the error. */
export function checkDType(fn: string, value: unknown, arg = 'dtype'): DType {
  if (isDType(value)) return value;
  throw new TypeError(`${fn}: ${arg} must be one of ${DTYPES.join(', ')}, got ${show(value)}`);
}

/**
 * JAX's canonicalize_dtype: with x64 off, a 64-bit dtype becomes its 32-bit
 * counterpart (float64 → float32); with x64 on, every dtype is itself.
 */
export function canonicalizeDType(dtype: DType): DType {
  return dtype === 'float64' && !x64Enabled() ? 'float32' : dtype;
}

const warnedFunctions = new Set<string>();

/**
 * JAX's check_and_canonicalize_user_dtype: validates a dtype a user asked
 * for and canonicalizes it. A 64-bit request truncated to 32 bits emits JAX's
 * UserWarning, once per function (JAX's warnings show once per call site).
 */
export function checkUserDType(fn: string, value: unknown, arg = 'dtype'): DType {
  const dtype = checkDType(fn, value, arg);
  const canonical = canonicalizeDType(dtype);
  if (canonical !== dtype && !warnedFunctions.has(fn)) {
    warnedFunctions.add(fn);
    process.emitWarning(
      `Explicitly requested dtype ${dtype} requested in ${fn} is not available, and will be truncated to dtype ${canonical}. ` +
        "To enable more dtypes, set the jaxEnableX64 configuration option (jax.config.update('jaxEnableX64', true)) " +
        'or the JAXON_ENABLE_X64 shell environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.',
      { type: 'UserWarning', code: 'JAXON_DTYPE_TRUNCATED' },
    );
  }
  return canonical;
}

export const isFloating = (d: DType): boolean =>
  d === 'float16' || d === 'bfloat16' || d === 'float32' || d === 'float64';
export const isUnsigned = (d: DType): boolean => d === 'uint8' || d === 'uint16' || d === 'uint32';
export const isSignedInteger = (d: DType): boolean => d === 'int8' || d === 'int16' || d === 'int32';
export const isInteger = (d: DType): boolean => isUnsigned(d) || isSignedInteger(d);
/** 16-bit floats: stored in 16 bits, computed in float32. */
export const isHalf = (d: DType): boolean => d === 'float16' || d === 'bfloat16';

export type StorageArray =
  | Uint8Array
  | Int8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array;

type StorageConstructor = { new (length: number): StorageArray; new (buffer: ArrayBufferLike, offset?: number, length?: number): StorageArray };

const STORAGE: Record<DType, StorageConstructor> = {
  bool: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array, uint8: Uint8Array, uint16: Uint16Array,
  uint32: Uint32Array, float16: Uint16Array, bfloat16: Uint16Array, float32: Float32Array, float64: Float64Array,
};

/** The TypedArray that holds a dtype's bits (Uint16Array for the 16-bit floats). */
export function storageArray(dtype: DType, buffer: ArrayBufferLike, length?: number): StorageArray {
  return new STORAGE[dtype](buffer, 0, length);
}

export function newStorage(dtype: DType, length: number): StorageArray {
  return new STORAGE[dtype](length);
}

// ---- 16-bit float conversion (round to nearest even) ----

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function float32ToBfloat16Bits(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  if ((bits & 0x7fffffff) > 0x7f800000) return ((bits >>> 16) | 0x40) & 0xffff; // quiet NaN
  const rounding = 0x7fff + ((bits >>> 16) & 1);
  return ((bits + rounding) >>> 16) & 0xffff;
}

export function bfloat16BitsToFloat32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/**
 * The float16 nearest a number, ties to even, rounded once (as NumPy and
 * XLA's f64→f16 convert do): a float64 input is first rounded to float32 by
 * round-to-odd, which keeps the one float16 rounding exact.
 */
export function float32ToFloat16Bits(value: number): number {
  f32[0] = value;
  if (f32[0] !== value && Number.isFinite(f32[0]!) && (u32[0]! & 1) === 0) {
    // inexact and even: step the last bit toward `value`, so no float16 tie is made up
    u32[0] = Math.abs(f32[0]!) < Math.abs(value) ? u32[0]! + 1 : u32[0]! - 1;
  }
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const absBits = x & 0x7fffffff;
  if (absBits >= 0x7f800000) return sign | (absBits > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (absBits >= 0x477ff000) return sign | 0x7c00; // rounds to >= 65520: infinity
  if (absBits < 0x38800000) {
    // subnormal half (or zero): value / 2^-24, rounded to nearest even
    const scaled = Math.abs(f32[0]!) * 16777216; // exact in double
    const floor = Math.floor(scaled);
    const rest = scaled - floor;
    let m = floor;
    if (rest > 0.5 || (rest === 0.5 && (floor & 1) === 1)) m += 1;
    return sign | m;
  }
  const exponent = ((absBits >>> 23) - 112) << 10;
  const mantissa = absBits & 0x7fffff;
  let half = exponent | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1;
  return sign | half;
}

export function float16BitsToFloat32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Rounds a JS number to the value the dtype would store (the cast JAX does). */
export function roundToDType(value: number, dtype: DType): number {
  switch (dtype) {
    case 'float64':
      return value;
    case 'float32':
      return Math.fround(value);
    case 'float16':
      return float16BitsToFloat32(float32ToFloat16Bits(value));
    case 'bfloat16':
      return bfloat16BitsToFloat32(float32ToBfloat16Bits(value));
    case 'bool':
      return value !== 0 ? 1 : 0; // NaN is truthy too, as in C
    default:
      return castToInteger(value, dtype);
  }
}

const INT_RANGE: Record<string, [number, number]> = {
  int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647],
  uint8: [0, 255], uint16: [0, 65535], uint32: [0, 4294967295],
};

export function integerRange(dtype: DType): [number, number] {
  const range = INT_RANGE[dtype];
  if (!range) throw new ValueError(`integerRange: ${dtype} is not an integer dtype`);
  return range;
}

/**
 * Float (or wider integer) to integer dtype. Integer sources wrap modulo 2^bits
 * (C's conversion of in-range values; JAX wraps too). Floats truncate toward
 * zero; NaN becomes 0 and out-of-range floats saturate, which is what XLA's
 * CPU and GPU backends produce, and what our kernels implement.
 */
export function castToInteger(value: number, dtype: DType): number {
  const [lo, hi] = integerRange(dtype);
  if (Number.isNaN(value)) return 0;
  const t = Math.trunc(value) + 0; // + 0 turns -0 into 0
  if (t < lo) return lo;
  if (t > hi) return hi;
  return t;
}

/** Wraps an integer result of integer arithmetic into the dtype (two's complement). */
export function wrapInteger(value: number, dtype: DType): number {
  switch (dtype) {
    case 'int8': return (value << 24) >> 24;
    case 'int16': return (value << 16) >> 16;
    case 'int32': return value | 0;
    case 'uint8': return value & 0xff;
    case 'uint16': return value & 0xffff;
    case 'uint32': return value >>> 0;
    case 'bool': return value ? 1 : 0;
    default: return value;
  }
}

// ---- promotion ----

/** A node of the promotion lattice: a dtype, or a weak Python-like scalar type. */
type LatticeNode = DType | 'int64' | 'uint64' | 'i*' | 'f*';

const UP: Record<LatticeNode, LatticeNode[]> = {
  bool: ['i*'],
  'i*': ['uint8', 'int8'],
  uint8: ['int16', 'uint16'],
  uint16: ['int32', 'uint32'],
  uint32: ['int64', 'uint64'],
  uint64: ['f*'],
  int8: ['int16'],
  int16: ['int32'],
  int32: ['int64'],
  int64: ['f*'],
  'f*': ['bfloat16', 'float16'],
  bfloat16: ['float32'],
  float16: ['float32'],
  float32: ['float64'],
  float64: [],
};

const UPPER_BOUNDS = new Map<LatticeNode, Set<LatticeNode>>();
for (const node of Object.keys(UP) as LatticeNode[]) {
  const seen = new Set<LatticeNode>();
  const stack: LatticeNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...UP[n]);
  }
  UPPER_BOUNDS.set(node, seen);
}

/** Joins already made, by pair (promotion runs on every op: host time per eager op). */
const joins = new Map<LatticeNode, Map<LatticeNode, LatticeNode>>();

function join(a: LatticeNode, b: LatticeNode): LatticeNode {
  if (a === b) return a;
  let row = joins.get(a);
  if (!row) joins.set(a, (row = new Map()));
  let c = row.get(b);
  if (c === undefined) row.set(b, (c = leastUpperBound(a, b)));
  return c;
}

function leastUpperBound(a: LatticeNode, b: LatticeNode): LatticeNode {
  const ua = UPPER_BOUNDS.get(a)!;
  const ub = UPPER_BOUNDS.get(b)!;
  const common = [...ua].filter((n) => ub.has(n));
  // the least upper bound is the common bound whose own upper set contains all others
  for (const c of common) {
    const uc = UPPER_BOUNDS.get(c)!;
    if (common.every((d) => uc.has(d))) return c;
  }
  throw new Error(`no least upper bound for ${a} and ${b}`);
}

/** An operand's type for promotion: a dtype, and whether it is weakly typed. */
export interface TypeInfo {
  dtype: DType;
  weak: boolean;
}

function toNode(t: TypeInfo): LatticeNode {
  if (!t.weak) return t.dtype;
  if (t.dtype === 'bool') return 'bool';
  return isFloating(t.dtype) ? 'f*' : 'i*';
}

/**
 * JAX's result_type: the promoted dtype of the operands, weak when the result
 * comes from weak operands only, canonicalized (64-bit integers become 32-bit;
 * float64 becomes float32 while x64 is off).
 */
export function resultType(...types: TypeInfo[]): TypeInfo {
  if (types.length === 0) throw new ValueError('resultType: at least one type is required');
  const joined = latticeJoin(types);
  return { dtype: canonicalizeDType(joined.dtype), weak: joined.weak };
}

/** The least upper bound of the operands' types; 64-bit integers (which jaxon lacks) are 32-bit, float64 stays. */
function latticeJoin(types: readonly TypeInfo[]): TypeInfo {
  let node = toNode(types[0]!);
  for (let i = 1; i < types.length; i++) node = join(node, toNode(types[i]!));
  switch (node) {
    case 'i*': return { dtype: 'int32', weak: true };
    case 'f*': return { dtype: 'float32', weak: true };
    case 'int64': return { dtype: 'int32', weak: false };
    case 'uint64': return { dtype: 'uint32', weak: false };
    default: {
      // weak types keep their own width: a weak f32 scalar with a weak f32 stays weak
      const weak = types.every((t) => t.weak);
      return { dtype: node, weak };
    }
  }
}

/**
 * jnp.promote_types for two strong dtypes. Like JAX's, it does not
 * canonicalize: float32 with float64 is float64 even while x64 is off.
 */
export function promoteTypes(a: DType, b: DType): DType {
  return latticeJoin([{ dtype: a, weak: false }, { dtype: b, weak: false }]).dtype;
}

/** The default dtype a JS number takes (int32 for integer values, else float32), weakly typed. */
export function scalarType(value: number | boolean): TypeInfo {
  if (typeof value === 'boolean') return { dtype: 'bool', weak: false };
  return { dtype: isInt32(value) ? 'int32' : 'float32', weak: true };
}

/** An integer-valued number in int32's range (past it a JS number can only be a float). */
export function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= -2147483648 && value <= 2147483647;
}

/** The dtype a float operation on this dtype yields (ints and bools go to float32). */
export function toInexact(dtype: DType): DType {
  return isFloating(dtype) ? dtype : 'float32';
}
