// costAnalysis(): flops, transcendentals and bytes accessed of a jaxpr, with
// the meaning JAX gives `jax.jit(f).lower(...).cost_analysis()`: XLA's
// HloCostAnalysis run on the HLO module JAX lowers to, before any XLA
// optimization. So the counts follow (1) JAX's lowering of each primitive
// (logistic is neg/exp/add/div, asin is 8 ops, argmax a variadic reduce,
// cumsum a reduce-window, scan a while loop over dynamic slices), (2) the MLIR
// canonicalization StableHLO goes through on its way to HLO (constants fold,
// one broadcast per distinct splat constant and computation, x+0, x*1 and
// no-op reshapes vanish, dead code and dead loop carries are removed), and
// (3) HloCostAnalysis's rules: an elementwise op is one flop per output
// element (a transcendental for exp, log, tanh, sin, sqrt, rsqrt, pow, erf,
// ...), a dot 2·out·K, a reduce (in - out)·(flops of its body); bytes are
// operands + output, except slices and gathers (2·output), dynamic update
// slices and scatters (the updates), transposes (bitcasts in the lowered
// module: free) and tuples (8 bytes a pointer). A while loop counts its body
// and condition once, whatever the trip count (so a scan of length 10 costs
// what one of length 1 does, apart from its ys buffers); a conditional counts
// its costliest branch, key by key. Every rule was measured against JAX 0.10.2
// on the CPU (test/fixtures/gen_cost.py; test/cost.test.ts compares).
// Not modelled: JAX's 'utilization{i}{}' keys, and XLA's float32 sums (its
// counts round once they pass 2^24; these stay exact). A jaxpr's constvars
// count as parameters (free), like the constants JAX embeds.
import { type DType, isFloating, itemsize, roundToDType } from '../core/dtype.js';
import {
  type BinaryPrimitive, type ComparePrimitive, type Primitive, type PrimitiveParams, type ReducePrimitive, type ShapedArray, type UnaryPrimitive,
  BINARY_PRIMITIVES, COMPARE_PRIMITIVES, CUSTOM_VJP_JVP_ERROR, UNARY_PRIMITIVES,
} from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import { type Atom, type Jaxpr, type JaxprEqn, Literal, type Var } from '../trace/jaxpr.js';
import { primitivesWith } from '../core/traits.js';

export interface CostAnalysis {
  flops: number;
  transcendentals: number;
  bytesAccessed: number;
  /**
   * JAX's 'bytes accessed{i}{}': bytes read through operand slot i, summed
   * over every HLO instruction of the program (slot 0 of an add, of a dot, of
   * a reduce...). Not per argument of the program: that is how XLA keys it.
   */
  bytesAccessedOperands: number[];
  /** JAX's 'bytes accessedout{}': bytes written, summed over instructions. */
  bytesAccessedOutput: number;
}

/** One instruction's (or computation's) properties, as HloCostAnalysis keeps them. */
interface Totals {
  flops: number;
  transcendentals: number;
  bytes: number;
  operands: number[];
  output: number;
}

const POINTER_BYTES = 8;

function combine(a: Totals, b: Totals, f: (x: number, y: number) => number): Totals {
  const n = Math.max(a.operands.length, b.operands.length);
  return {
    flops: f(a.flops, b.flops),
    transcendentals: f(a.transcendentals, b.transcendentals),
    bytes: f(a.bytes, b.bytes),
    operands: Array.from({ length: n }, (_, i) => f(a.operands[i] ?? 0, b.operands[i] ?? 0)),
    output: f(a.output, b.output),
  };
}
const sum = (a: Totals, b: Totals) => combine(a, b, (x, y) => x + y);
function addInto(acc: Totals, t: Totals): void {
  acc.flops += t.flops;
  acc.transcendentals += t.transcendentals;
  acc.bytes += t.bytes;
  acc.output += t.output;
  t.operands.forEach((b, i) => (acc.operands[i] = (acc.operands[i] ?? 0) + b));
}
const ZERO: Totals = { flops: 0, transcendentals: 0, bytes: 0, operands: [], output: 0 };

/** HloCostAnalysis's default: every operand read once, the output written once. */
function readAll(inputs: readonly Value[], outBytes: number, extra: Partial<Totals> = {}): Totals {
  const operands = inputs.map((v) => v.bytes);
  return { ...ZERO, bytes: operands.reduce((s, b) => s + b, outBytes), operands, output: outBytes, ...extra };
}

// ---- the emulated HLO graph ----

interface Op {
  readonly cost: Totals;
  readonly inputs: readonly Value[];
}

/** How a value was shaped at the StableHLO level, for the canonicalizer's merges. */
interface ShapeDef {
  kind: 'reshape' | 'broadcast' | 'transpose' | 'slice';
  operand: Value;
  /** broadcast dimensions, permutation, or a unit-stride slice's starts */
  dims: number[];
}

/** An HLO value: computed by `op`, a parameter of its computation (no op), or a constant splat. */
class Value {
  constructor(
    readonly shape: readonly number[],
    readonly dtype: DType,
    readonly op?: Op,
    readonly splat?: number,
    readonly def?: ShapeDef,
  ) {}
  get size(): number {
    return sizeOf(this.shape);
  }
  get bytes(): number {
    return this.size * itemsize(this.dtype);
  }
}

const param = (shape: readonly number[], dtype: DType, op?: Op) => new Value([...shape], dtype, op);
const constant = (value: number, shape: readonly number[], dtype: DType) => new Value([...shape], dtype, undefined, roundToDType(value, dtype));

/** One HLO computation: the entry, a loop body or condition, a branch, a call. Splat constants are per computation. */
class Computation {
  readonly #splats = new Map<string, Value>();

  emit(cost: Totals, inputs: Value[], shape: readonly number[], dtype: DType, def?: ShapeDef): Value {
    return new Value([...shape], dtype, { cost, inputs: inputs.map((v) => this.materialize(v)) }, undefined, def);
  }

  /** A constant used as an operand: a literal when it has one element, else one shared broadcast of a scalar. */
  materialize(v: Value): Value {
    if (v.splat === undefined || v.size <= 1) return v;
    const key = `${v.dtype}|${v.shape.join(',')}|${Object.is(v.splat, -0) ? '-0' : v.splat}`;
    let b = this.#splats.get(key);
    if (!b) {
      b = param(v.shape, v.dtype, { cost: { ...ZERO, bytes: itemsize(v.dtype) + v.bytes, operands: [itemsize(v.dtype)], output: v.bytes }, inputs: [] });
      this.#splats.set(key, b);
    }
    return b;
  }

  tuple(values: Value[]): Value {
    const n = values.length * POINTER_BYTES;
    return this.emit({ ...ZERO, bytes: n, operands: values.map(() => 0), output: n }, values, [], 'int32');
  }

  /** A computation's result (or a loop's state, a branch's operands): a single value as is, several as a tuple. */
  root(outs: Value[]): Value[] {
    return outs.length === 1 ? [this.materialize(outs[0]!)] : [this.tuple(outs)];
  }
}

/** Sums the instructions the roots depend on: what is not reached is dead code, which canonicalization removes. */
function total(roots: Value[]): Totals {
  const seen = new Set<Op>();
  const stack = roots.flatMap((r) => (r.op ? [r.op] : []));
  const t: Totals = { ...ZERO, operands: [] };
  while (stack.length) {
    const op = stack.pop()!;
    if (seen.has(op)) continue;
    seen.add(op);
    addInto(t, op.cost);
    for (const v of op.inputs) if (v.op && !seen.has(v.op)) stack.push(v.op);
  }
  return t;
}

// ---- elementwise ops, with StableHLO's folding and identities ----

/** What XLA's HloCostAnalysis counts as transcendental (core/traits.ts). */
const TRANSCENDENTAL = primitivesWith('xlaTranscendental');

const FOLD: Record<string, (...x: number[]) => number> = {
  add: (a, b) => a + b, sub: (a, b) => a - b, mul: (a, b) => a * b, div: (a, b) => a / b, rem: (a, b) => a % b,
  max: Math.max, min: Math.min, pow: Math.pow, atan2: Math.atan2, and: (a, b) => a & b, or: (a, b) => a | b,
  xor: (a, b) => a ^ b, neg: (a) => -a, abs: Math.abs, sign: Math.sign, floor: Math.floor, ceil: Math.ceil,
  exp: Math.exp, log: Math.log, tanh: Math.tanh, sin: Math.sin, cos: Math.cos, tan: Math.tan, sqrt: Math.sqrt,
  rsqrt: (a) => 1 / Math.sqrt(a), cbrt: Math.cbrt, expm1: Math.expm1, log1p: Math.log1p, is_finite: (a) => +Number.isFinite(a),
  eq: (a, b) => +(a === b), ne: (a, b) => +(a !== b), lt: (a, b) => +(a < b), le: (a, b) => +(a <= b),
  gt: (a, b) => +(a > b), ge: (a, b) => +(a >= b), select: (p, a, b) => (p ? a : b), convert: (a) => a,
  clamp: (lo, x, hi) => Math.min(Math.max(x, lo), hi),
};

const isSplat = (v: Value, k: number) => v.splat === k;

/** add(x, 0), mul(x, 1), select(true, a, b)...: what canonicalization replaces by one of the operands. */
function identity(opcode: string, [a, b, c]: Value[], dtype: DType): Value | undefined {
  const integral = !isFloating(dtype);
  const ones = dtype === 'bool' ? 1 : -1;
  switch (opcode) {
    case 'add': return isSplat(b!, 0) ? a : isSplat(a!, 0) ? b : undefined;
    case 'sub': return isSplat(b!, 0) ? a : undefined;
    case 'mul':
      if (isSplat(b!, 1)) return a;
      if (isSplat(a!, 1)) return b;
      return integral && (isSplat(a!, 0) || isSplat(b!, 0)) ? constant(0, a!.shape, dtype) : undefined;
    case 'and':
      if (isSplat(a!, 0) || isSplat(b!, 0)) return constant(0, a!.shape, dtype);
      return isSplat(b!, ones) ? a : isSplat(a!, ones) ? b : undefined;
    case 'or':
      if (isSplat(b!, 0)) return a;
      if (isSplat(a!, 0)) return b;
      return isSplat(a!, ones) || isSplat(b!, ones) ? constant(ones, a!.shape, dtype) : undefined;
    case 'select': return a!.splat !== undefined ? (a!.splat ? b : c) : b === c ? b : undefined;
    default: return undefined;
  }
}

/** An elementwise HLO op; rank-0 operands are broadcast to the output shape first (JAX's multi_broadcast_in_dim). */
function elementwise(c: Computation, opcode: string, inputs: Value[], dtype: DType): Value {
  const shape = inputs.reduce<readonly number[]>((s, v) => (v.shape.length > s.length ? v.shape : s), []);
  const args = inputs.map((v) => (v.shape.length === shape.length ? v : broadcastInDim(c, v, shape, [])));
  const fold = FOLD[opcode];
  if (fold && args.every((v) => v.splat !== undefined)) return constant(fold(...args.map((v) => v.splat!)), shape, dtype);
  const same = identity(opcode, args, dtype);
  if (same) return same;
  const n = sizeOf(shape);
  const work = TRANSCENDENTAL.has(opcode) ? { transcendentals: n } : { flops: n };
  return c.emit(readAll(args, n * itemsize(dtype), work), args, shape, dtype);
}

const COMPARES = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);

/** Elementwise ops in their operands' dtype (compares give bool), for JAX's multi-op lowerings. */
function opsOn(c: Computation, dtype: DType) {
  return {
    op: (opcode: string, ...xs: Value[]) => elementwise(c, opcode, xs, COMPARES.has(opcode) ? 'bool' : xs[xs.length - 1]!.dtype),
    k: (value: number, d: DType = dtype) => constant(value, [], d),
    bitcast: (v: Value, d: DType) => elementwise(c, 'bitcast', [v], d),
  };
}

// ---- shape ops, as JAX lowers them and the HLO exporter writes them ----

const isIota = (dims: readonly number[]) => dims.every((d, i) => d === i);
const isSorted = (dims: readonly number[]) => dims.every((d, i) => i === 0 || dims[i - 1]! < d);
const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((n, i) => n === b[i]);

function broadcastInDim(c: Computation, v: Value, shape: readonly number[], dims: readonly number[]): Value {
  if (sameShape(v.shape, shape) && isIota(dims)) return v;
  if (v.splat !== undefined) return constant(v.splat, shape, v.dtype);
  if (v.def?.kind === 'broadcast') return broadcastInDim(c, v.def.operand, shape, v.def.dims.map((d) => dims[d]!));
  const def: ShapeDef = { kind: 'broadcast', operand: v, dims: [...dims] };
  const out = sizeOf(shape) * itemsize(v.dtype);
  if (!isSorted(dims)) {
    // a transpose, then a broadcast in order
    const t = transpose(c, v, dims.map((_, i) => i).sort((i, j) => dims[i]! - dims[j]!));
    return sameShape(t.shape, shape) ? t : c.emit(readAll([t], out), [t], shape, v.dtype, def);
  }
  if (v.size === sizeOf(shape)) return reshape(c, v, shape);
  const expanded = (i: number) => v.shape[i] === 1 && shape[dims[i]!] !== 1;
  if (v.shape.some((_, i) => expanded(i))) {
    // XLA's BroadcastInDim: an identity broadcast, a reshape dropping the expanded 1s, then the broadcast
    const id = c.emit(readAll([v], v.bytes), [v], v.shape, v.dtype);
    const keep = v.shape.map((_, i) => i).filter((i) => !expanded(i));
    const r = c.emit(readAll([id], v.bytes), [id], keep.map((i) => v.shape[i]!), v.dtype);
    return c.emit(readAll([r], out), [r], shape, v.dtype, def);
  }
  return c.emit(readAll([v], out), [v], shape, v.dtype, def);
}

function reshape(c: Computation, v: Value, shape: readonly number[]): Value {
  if (sameShape(v.shape, shape)) return v;
  if (v.splat !== undefined) return constant(v.splat, shape, v.dtype);
  if (v.def?.kind === 'reshape') return reshape(c, v.def.operand, shape);
  return c.emit(readAll([v], v.bytes), [v], shape, v.dtype, { kind: 'reshape', operand: v, dims: [] });
}

/** A transpose is a bitcast in the lowered module (its layout is permuted instead): free, unless it only moves 1s (a reshape). */
function transpose(c: Computation, v: Value, perm: readonly number[]): Value {
  const shape = perm.map((p) => v.shape[p]!);
  if (isIota(perm)) return v;
  if (v.splat !== undefined) return constant(v.splat, shape, v.dtype);
  if (v.def?.kind === 'transpose') return transpose(c, v.def.operand, perm.map((p) => v.def!.dims[p]!));
  if (isSorted(perm.filter((p) => v.shape[p] !== 1))) return reshape(c, v, shape);
  return c.emit({ ...ZERO, operands: [0] }, [v], shape, v.dtype, { kind: 'transpose', operand: v, dims: [...perm] });
}

function slice(c: Computation, v: Value, start: number[], limit: number[], strides: number[]): Value {
  const shape = start.map((s, i) => Math.max(0, Math.ceil((limit[i]! - s) / strides[i]!)));
  if (sameShape(v.shape, shape)) return v;
  if (v.splat !== undefined) return constant(v.splat, shape, v.dtype);
  const unit = strides.every((s) => s === 1);
  if (unit && v.def?.kind === 'slice') {
    const at = v.def.dims;
    return slice(c, v.def.operand, start.map((s, i) => s + at[i]!), limit.map((l, i) => l + at[i]!), strides);
  }
  const out = sizeOf(shape) * itemsize(v.dtype);
  const def: ShapeDef | undefined = unit ? { kind: 'slice', operand: v, dims: [...start] } : undefined;
  return c.emit({ ...ZERO, bytes: 2 * out, operands: [out], output: out }, [v], shape, v.dtype, def);
}

/** v[from:to] along the leading axis. */
const rows = (c: Computation, v: Value, from: number, to: number) =>
  slice(c, v, v.shape.map((_, d) => (d ? 0 : from)), v.shape.map((n, d) => (d ? n : to)), v.shape.map(() => 1));

/** Empty operands are dropped, one operand is itself, equal splats fold. */
function concatenate(c: Computation, xs: Value[], shape: readonly number[]): Value {
  const parts = xs.filter((x) => x.size > 0);
  if (parts.length === 1 && sameShape(parts[0]!.shape, shape)) return parts[0]!;
  const dtype = xs[0]!.dtype;
  if (parts.length && parts.every((x) => x.splat !== undefined && x.splat === parts[0]!.splat)) return constant(parts[0]!.splat!, shape, dtype);
  return c.emit(readAll(parts, sizeOf(shape) * itemsize(dtype)), parts, shape, dtype);
}

function dynamicSlice(c: Computation, v: Value, index: Value[], sizes: number[]): Value {
  if (index.every((i) => i.splat !== undefined)) {
    // constant starts: a slice, with the starts clamped into range as XLA does
    const start = index.map((i, d) => Math.min(Math.max(i.splat!, 0), v.shape[d]! - sizes[d]!));
    return slice(c, v, start, start.map((s, d) => s + sizes[d]!), sizes.map(() => 1));
  }
  const out = sizeOf(sizes) * itemsize(v.dtype);
  const operands = [out, ...index.map((i) => i.bytes)];
  return c.emit({ ...ZERO, bytes: 2 * out + index[0]!.bytes, operands, output: out }, [v, ...index], sizes, v.dtype);
}

function dynamicUpdateSlice(c: Computation, v: Value, update: Value, index: Value[]): Value {
  const u = update.bytes;
  const operands = [0, u, ...index.map((i) => i.bytes)];
  return c.emit({ ...ZERO, bytes: 2 * u + index[0]!.bytes, operands, output: u }, [v, update, ...index], v.shape, v.dtype);
}

/** An HLO reduce (or reduce-window) over `operands` with `inits`; `applications` of a body of `bodyFlops` flops. */
function reduce(c: Computation, operands: Value[], inits: DType[], shape: readonly number[], outDtype: DType, applications: number, bodyFlops: number): Value {
  const ins = [...operands, ...inits.map((d) => constant(0, [], d))];
  const out = inits.reduce((s, d) => s + sizeOf(shape) * itemsize(d), 0);
  return c.emit(readAll(ins, out, { flops: applications * bodyFlops }), ins, shape, outDtype);
}

/** iota of rank > 1 is a 1-D iota broadcast along its dimension (canonicalization). */
function iota(c: Computation, shape: readonly number[], dimension: number, dtype: DType): Value {
  if (shape.length > 1) return broadcastInDim(c, iota(c, [shape[dimension]!], 0, dtype), shape, [dimension]);
  const out = sizeOf(shape) * itemsize(dtype);
  return c.emit({ ...ZERO, bytes: out, output: out }, [], shape, dtype);
}

function gather(c: Computation, operand: Value, indices: Value, shape: readonly number[]): Value {
  const out = sizeOf(shape) * itemsize(operand.dtype);
  return c.emit({ ...ZERO, bytes: 2 * out + indices.bytes, operands: [out, indices.bytes], output: out }, [operand, indices], shape, operand.dtype);
}

/** `bounds` per index-vector entry, as a constant of the indices' shape (a splat when they agree, else a free literal). */
function indexBounds(indices: Value, bounds: number[]): Value {
  return bounds.every((b) => b === bounds[0]) ? constant(bounds[0]!, indices.shape, indices.dtype) : param(indices.shape, indices.dtype);
}

// ---- JAX's multi-op lowerings of single primitives (read off the HLO JAX 0.10.2 emits) ----

type Recipe = (o: ReturnType<typeof opsOn>, x: Value, y?: Value) => Value;
const LN2 = Math.LN2;

const RECIPES: Record<string, Recipe> = {
  exp2: ({ op, k }, x) => op('exp', op('mul', x, k(LN2))),
  logistic: ({ op, k }, x) => op('div', k(1), op('add', op('exp', op('neg', x)), k(1))),
  atan: ({ op, k }, x) => op('atan2', x, k(1)),
  asin: ({ op, k }, x) => {
    const f = op('atan2', x, op('add', op('sqrt', op('mul', op('sub', k(1), x), op('add', x, k(1)))), k(1)));
    return op('add', f, f);
  },
  acos: ({ op, k }, x) => op('atan2', op('sqrt', op('mul', op('sub', k(1), x), op('add', x, k(1)))), x),
  cosh: ({ op, k }, x) => op('add', op('exp', op('add', x, k(-LN2))), op('exp', op('sub', k(-LN2), x))),
  sinh: ({ op, k }, x) => {
    const small = op('lt', op('abs', x), k(1));
    const em1 = op('expm1', x);
    const near = op('mul', op('add', em1, op('div', em1, op('add', em1, k(1)))), k(0.5));
    const far = op('sub', op('exp', op('add', x, k(-LN2))), op('exp', op('sub', k(-LN2), x)));
    return op('select', small, near, far);
  },
  asinh: ({ op, k }, x) => {
    const a = op('abs', x);
    const sign = op('sign', x);
    const far = op('ge', a, k(2 ** 64));
    const big = op('add', op('log', a), k(LN2));
    const sq = op('mul', a, a);
    const near = op('log1p', op('add', a, op('div', sq, op('add', op('sqrt', op('add', sq, k(1))), k(1)))));
    return op('mul', sign, op('select', far, big, near));
  },
  acosh: ({ op, k }, x) => {
    const far = op('ge', x, k(2 ** 127));
    const big = op('add', op('log', x), k(LN2));
    const s = op('sqrt', op('sub', x, k(1)));
    return op('select', far, big, op('log1p', op('mul', s, op('add', op('sqrt', op('add', x, k(1))), s))));
  },
  atanh: ({ op, k }, x) => {
    const out = op('gt', op('abs', x), k(1));
    const half = op('mul', op('sub', op('log1p', x), op('log1p', op('neg', x))), k(0.5));
    return op('select', out, k(NaN), half);
  },
  nextafter: ({ op, k, bitcast: cast }, x, y) => {
    // on the integer bit patterns; 64-bit floats use an 8-byte stand-in (only sizes matter here)
    const bits: DType = x.dtype === 'float64' ? 'float64' : itemsize(x.dtype) === 2 ? 'int16' : 'int32';
    const high = -(2 ** (8 * itemsize(x.dtype) - 1));
    const nan = op('or', op('ne', x, x), op('ne', y!, y!));
    const nanBits = cast(constant(NaN, x.shape, x.dtype), bits);
    const [bx, by] = [cast(x, bits), cast(y!, bits)];
    const ax = op('and', bx, k(-high - 1, bits));
    const ay = op('and', by, k(-high - 1, bits));
    const sy = op('and', by, k(high, bits));
    const towardZero = op('select', op('eq', ay, k(0, bits)), by, op('or', sy, k(1, bits)));
    const away = op('or', op('gt', ax, ay), op('ne', op('and', bx, k(high, bits)), sy));
    const step = op('add', bx, op('select', away, k(-1, bits), k(1, bits)));
    const r = op('select', nan, nanBits, op('select', op('eq', x, y!), by, op('select', op('eq', ax, k(0, bits)), towardZero, step)));
    return cast(r, x.dtype);
  },
};

// ---- which loop carries survive (dead ones are removed before HLO) ----

/** Backward liveness: which inputs of `jaxpr` (constvars, then invars) the used outputs need, and each equation's used outputs. */
function liveness(jaxpr: Jaxpr, outsUsed: readonly boolean[]): { inputs: boolean[]; eqnOuts: Map<JaxprEqn, boolean[]> } {
  const live = new Set<Var>();
  const eqnOuts = new Map<JaxprEqn, boolean[]>();
  jaxpr.outs.forEach((a, i) => {
    if (outsUsed[i] && !(a instanceof Literal)) live.add(a);
  });
  for (let k = jaxpr.eqns.length - 1; k >= 0; k--) {
    const e = jaxpr.eqns[k]!;
    const used = e.outVars.map((v) => live.has(v));
    eqnOuts.set(e, used);
    if (!used.some(Boolean)) continue;
    const need = e.primitive === 'scan' ? scanLiveness(e.params as PrimitiveParams['scan'], used).inputs
      : e.primitive === 'while' ? whileLiveness(e.params as PrimitiveParams['while'], used).inputs
      : e.inputs.map(() => true);
    e.inputs.forEach((a, i) => {
      if (need[i] && !(a instanceof Literal)) live.add(a);
    });
  }
  return { inputs: [...jaxpr.constVars, ...jaxpr.inVars].map((v) => live.has(v)), eqnOuts };
}

/** Invars only (control-flow jaxprs have no constvars). */
const liveInvars = (jaxpr: Jaxpr, used: readonly boolean[]) => liveness(jaxpr, used).inputs.slice(jaxpr.constVars.length);

/** A carry stays when it is used after the loop or feeds something that is; the rest only feed themselves. */
function scanLiveness(p: PrimitiveParams['scan'], used: readonly boolean[]) {
  const { numConsts: nC, numCarry: nK } = p;
  const ys = used.slice(nK);
  let carry = used.slice(0, nK);
  for (;;) {
    const ins = liveInvars(p.jaxpr.jaxpr, [...carry, ...ys]);
    const next = carry.map((k, i) => k || ins[nC + i]!);
    if (next.every((k, i) => k === carry[i])) {
      const consts = ins.slice(0, nC);
      const xs = ins.slice(nC + nK);
      return { carry, ys, consts, xs, inputs: [...consts, ...carry, ...xs] };
    }
    carry = next;
  }
}

function whileLiveness(p: PrimitiveParams['while'], used: readonly boolean[]) {
  const condIns = liveInvars(p.condJaxpr.jaxpr, [true]);
  const condConsts = condIns.slice(0, p.condNconsts);
  let carry = used.map((u, i) => u || condIns[p.condNconsts + i]!);
  for (;;) {
    const ins = liveInvars(p.bodyJaxpr.jaxpr, carry);
    const next = carry.map((k, i) => k || ins[p.bodyNconsts + i]!);
    if (next.every((k, i) => k === carry[i])) {
      const bodyConsts = ins.slice(0, p.bodyNconsts);
      return { carry, condConsts, bodyConsts, inputs: [...condConsts, ...bodyConsts, ...carry] };
    }
    carry = next;
  }
}

const pick = <T>(xs: readonly T[], keep: readonly boolean[]) => xs.filter((_, i) => keep[i]);
/** Values of the same types whose contents the computation cannot see (parameters, or results of `op`). */
const opaque = (vs: readonly { shape: readonly number[]; dtype: DType }[], op?: Op) => vs.map((v) => param(v.shape, v.dtype, op));
const paramsOf = (vars: readonly Var[]) => opaque(vars.map((v) => v.aval));

// ---- the lowering of each primitive ----

interface EqnContext {
  outAvals: ShapedArray[];
  /** Which outputs of the equation are used (for loops, whose dead carries are removed). */
  used: boolean[];
}
type Rule<P extends Primitive> = (c: Computation, inputs: Value[], params: PrimitiveParams[P], ctx: EqnContext) => Value[];

const ew = (opcode: string): Rule<Primitive> => (c, xs, _, ctx) => [elementwise(c, opcode, xs, ctx.outAvals[0]!.dtype)];
const recipe = (name: string): Rule<Primitive> => (c, [x, y]) => [RECIPES[name]!(opsOn(c, x!.dtype), x!, y)];
const same: Rule<Primitive> = (_, xs) => xs;

function integerPow(c: Computation, x: Value, y: number): Value {
  if (y === 0) return constant(1, x.shape, x.dtype);
  let acc: Value | undefined;
  let base = x;
  for (let n = Math.abs(y); n > 0;) {
    if (n & 1) acc = acc ? elementwise(c, 'mul', [acc, base], x.dtype) : base;
    n >>= 1;
    if (n > 0) base = elementwise(c, 'mul', [base, base], x.dtype);
  }
  return y < 0 ? elementwise(c, 'div', [constant(1, [], x.dtype), acc!], x.dtype) : acc!;
}

/** select_n on an integer index: a binary tree of `which < mid` selects (JAX's _select_hlo_lowering). */
function selectN(c: Computation, which: Value, cases: Value[], dtype: DType): Value {
  if (cases.length === 1) return cases[0]!;
  if (which.dtype === 'bool') return elementwise(c, 'select', [which, cases[1]!, cases[0]!], dtype);
  const tree = (offset: number, cs: Value[]): Value => {
    if (cs.length === 1) return cs[0]!;
    const mid = cs.length >> 1;
    const pred = elementwise(c, 'lt', [which, constant(offset + mid, which.shape, which.dtype)], 'bool');
    return elementwise(c, 'select', [pred, tree(offset, cs.slice(0, mid)), tree(offset + mid, cs.slice(mid))], dtype);
  };
  return tree(0, cases);
}

/** reduce_sum & co: an HLO reduce whose body is one op; a reduce over no axes is removed. */
const reduceRule: Rule<ReducePrimitive> = (c, [x], { axes }, ctx) => {
  if (!axes.length) return [x!];
  const out = ctx.outAvals[0]!;
  return [reduce(c, [x!], [x!.dtype], out.shape, out.dtype, x!.size - sizeOf(out.shape), 1)];
};

/** argmax/argmin: a variadic reduce of (value, iota) whose body is 9 ops on floats (NaN-aware), 7 on integers. */
const argRule: Rule<'argmax' | 'argmin'> = (c, [x], { axes, indexDtype }, ctx) => {
  const out = ctx.outAvals[0]!;
  const index = iota(c, x!.shape, axes[0]!, indexDtype);
  return [reduce(c, [x!, index], [x!.dtype, indexDtype], out.shape, indexDtype, x!.size - sizeOf(out.shape), isFloating(x!.dtype) ? 9 : 7)];
};

/** cumsum & co: a reduce-window over the whole axis, padded on one side. */
const cumulativeRule: Rule<'cumsum' | 'cumprod' | 'cummax' | 'cummin'> = (c, [x], { axis }) =>
  [reduce(c, [x!], [x!.dtype], x!.shape, x!.dtype, (x!.shape[axis]! - 1) * x!.size, 1)];

/**
 * sort: XLA's HloCostAnalysis::HandleSort counts n·ceil(log2 n) flops over all elements of the first operand (a
 * comparison sort); bytes as its default, every operand read and every output (one tuple of them) written.
 */
const sortRule: Rule<'sort'> = (c, xs) => {
  const n = xs[0]!.size;
  const bytes = xs.reduce((s, x) => s + x.bytes, 0);
  const op = c.emit({ ...readAll(xs, bytes), flops: n * Math.ceil(Math.log2(Math.max(n, 1))) }, xs, [], 'int32').op;
  return xs.map((x) => param(x.shape, x.dtype, op));
};

/** top_k: counted as a sort of the operand writing the k values and indices (not checked against XLA's count for TopK). */
const topKRule: Rule<'top_k'> = (c, [x], _params, ctx) => {
  const n = x!.size;
  const bytes = ctx.outAvals.reduce((s, a) => s + sizeOf(a.shape) * itemsize(a.dtype), 0);
  const op = c.emit({ ...readAll([x!], bytes), flops: n * Math.ceil(Math.log2(Math.max(n, 1))) }, [x!], [], 'int32').op;
  return ctx.outAvals.map((a) => param(a.shape, a.dtype, op));
};

/**
 * qr / eigh / svd: LAPACK's operation counts for the dense algorithms (geqrf+orgqr ~ 4mn² - 4n³/3, syevd ~ 9n³, gesvd
 * ~ 4mn² + 8n³ with vectors), the operand read and every output written; XLA counts these custom calls as zero.
 */
const orthogonalRule = (flopsPerMatrix: (m: number, n: number) => number): Rule<'qr' | 'eigh' | 'svd'> => (c, [x], _params, ctx) => {
  const r = x!.shape.length;
  const m = x!.shape[r - 2]!;
  const n = x!.shape[r - 1]!;
  const batch = sizeOf(x!.shape.slice(0, r - 2));
  const bytes = ctx.outAvals.reduce((s, a) => s + sizeOf(a.shape) * itemsize(a.dtype), 0);
  const op = c.emit({ ...readAll([x!], bytes), flops: batch * flopsPerMatrix(m, n) }, [x!], [], x!.dtype).op;
  return ctx.outAvals.map((a) => param(a.shape, a.dtype, op));
};

/**
 * cholesky, triangular_solve, lu: XLA lowers them to LAPACK / cuSOLVER custom calls, which its cost analysis does not
 * look into; counted here as LAPACK's flop counts (n^3/3, m^2 n or m n^2, m n^2 - n^3/3 per matrix) and bytes as
 * the default, every operand read and every output written.
 */
const linalgRule = <P extends 'cholesky' | 'triangular_solve' | 'lu'>(flopsPerMatrix: (m: number, n: number, params: PrimitiveParams[P]) => number): Rule<P> => (c, xs, params, ctx) => {
  const shape = ctx.outAvals[0]!.shape;
  const m = shape[shape.length - 2]!;
  const n = shape[shape.length - 1]!;
  const batch = sizeOf(shape.slice(0, -2));
  const bytes = ctx.outAvals.reduce((s, a) => s + sizeOf(a.shape) * itemsize(a.dtype), 0);
  const op = c.emit({ ...readAll(xs, bytes), flops: batch * flopsPerMatrix(m, n, params) }, xs, [], ctx.outAvals[0]!.dtype).op;
  return ctx.outAvals.map((a) => param(a.shape, a.dtype, op));
};

function gatherRule(c: Computation, [operand, indices]: Value[], p: PrimitiveParams['gather'], ctx: EqnContext): Value[] {
  const shape = ctx.outAvals[0]!.shape;
  if (p.mode === 'clip') return [gather(c, operand!, indices!, shape)];
  // JAX's _gather_fill: an in-bounds mask, the gather, and a select against the fill value
  const { startIndexMap, offsetDims } = p.dimensionNumbers;
  const idx = indices!.dtype === 'int32' ? indices! : elementwise(c, 'convert', [indices!], 'int32');
  const bounds = indexBounds(idx, startIndexMap.map((d) => operand!.shape[d]! - p.sliceSizes[d]!));
  const inRange = elementwise(c, 'and', [elementwise(c, 'ge', [idx, constant(0, [], 'int32')], 'bool'), elementwise(c, 'le', [idx, bounds], 'bool')], 'bool');
  const batch = idx.shape.slice(0, -1);
  const mask = reduce(c, [inRange], ['bool'], batch, 'bool', inRange.size - sizeOf(batch), 1);
  const batchDims = shape.map((_, i) => i).filter((i) => !offsetDims.includes(i));
  const dtype = operand!.dtype;
  const bits = 8 * itemsize(dtype);
  const fill = p.fillValue ?? (isFloating(dtype) ? NaN : dtype === 'bool' ? 1 : dtype.startsWith('u') ? 2 ** bits - 1 : -(2 ** (bits - 1)));
  return [elementwise(c, 'select', [broadcastInDim(c, mask, shape, batchDims), gather(c, operand!, idx, shape), constant(fill, [], dtype)], dtype)];
}

/** Scatters: 3·updates + indices bytes; the combiner's flop per update element (none for a plain scatter). */
type ScatterPrimitive = 'scatter' | 'scatter_add' | 'scatter_mul' | 'scatter_min' | 'scatter_max';
const scatterRule = (combinerFlops: number): Rule<ScatterPrimitive> => (c, [operand, indices, updates], { dimensionNumbers: dn, mode }) => {
  let idx = indices!;
  if (mode === 'clip') {
    // JAX's _clamp_scatter_indices: clamp(0, indices, operand dim - window size)
    let w = 0;
    const window = operand!.shape.map((_, d) => (dn.insertedWindowDims.includes(d) ? 1 : updates!.shape[dn.updateWindowDims[w++]!]!));
    const bounds = indexBounds(idx, dn.scatterDimsToOperandDims.map((d) => operand!.shape[d]! - window[d]!));
    idx = elementwise(c, 'clamp', [constant(0, [], idx.dtype), idx, bounds], idx.dtype);
  }
  const u = updates!.bytes;
  const cost = { ...ZERO, bytes: 3 * u + idx.bytes, operands: [u, idx.bytes, u], output: u, flops: combinerFlops * updates!.size };
  return [c.emit(cost, [operand!, idx, updates!], operand!.shape, operand!.dtype)];
};

/**
 * Unary, binary and comparison primitives: one HLO op per element (its transcendental count from core/traits.ts), or
 * the StableHLO expansion in RECIPES where XLA's cost analysis sees several; so a new one needs no entry here.
 */
const elementwiseRules = Object.fromEntries(
  [...UNARY_PRIMITIVES, ...BINARY_PRIMITIVES, ...COMPARE_PRIMITIVES].map((p) => [p, Object.hasOwn(RECIPES, p) ? recipe(p) : ew(p)]),
) as { [P in UnaryPrimitive | BinaryPrimitive | ComparePrimitive]: Rule<P> };

const RULES: { [P in Primitive]: Rule<P> } = {
  ...elementwiseRules,
  square: (c, [x]) => [elementwise(c, 'mul', [x!, x!], x!.dtype)],
  integer_pow: (c, [x], { y }) => [integerPow(c, x!, y)],
  copy: same,
  select_n: (c, [which, ...cases], _, ctx) => [selectN(c, which!, cases, ctx.outAvals[0]!.dtype)],
  clamp: ew('clamp'),
  bitcast_convert_type: (c, [x], { newDtype }, ctx) => {
    if (x!.dtype === newDtype) return [x!];
    const out = ctx.outAvals[0]!;
    return [sameShape(out.shape, x!.shape) ? elementwise(c, 'bitcast', [x!], newDtype) : c.emit(readAll([x!], x!.bytes), [x!], out.shape, newDtype)];
  },
  convert_element_type: (c, [x], { newDtype }) => [x!.dtype === newDtype ? x! : elementwise(c, 'convert', [x!], newDtype)],
  iota: (c, _, { dtype, shape, dimension }) => [iota(c, shape, dimension, dtype)],
  broadcast_in_dim: (c, [x], { shape, broadcastDimensions }) => [broadcastInDim(c, x!, shape, broadcastDimensions)],
  reshape: (c, [x], { newSizes }) => [reshape(c, x!, newSizes)],
  squeeze: (c, [x], _, ctx) => [reshape(c, x!, ctx.outAvals[0]!.shape)],
  transpose: (c, [x], { permutation }) => [transpose(c, x!, permutation)],
  rev: (c, [x], { dimensions }) => [!dimensions.length || x!.splat !== undefined ? x! : c.emit(readAll([x!], x!.bytes), [x!], x!.shape, x!.dtype)],
  slice: (c, [x], { startIndices, limitIndices, strides }) => [slice(c, x!, startIndices, limitIndices, strides ?? startIndices.map(() => 1))],
  pad: (c, [x, value], { paddingConfig }, ctx) => {
    if (paddingConfig.every((p) => p.every((n) => n === 0))) return [x!];
    const out = ctx.outAvals[0]!;
    return [c.emit(readAll([x!, value!], sizeOf(out.shape) * itemsize(out.dtype)), [x!, value!], out.shape, out.dtype)];
  },
  concatenate: (c, xs, _, ctx) => [concatenate(c, xs, ctx.outAvals[0]!.shape)],
  dynamic_slice: (c, [x, ...index], { sliceSizes }) => [dynamicSlice(c, x!, index, sliceSizes)],
  dynamic_update_slice: (c, [x, update, ...index]) => [dynamicUpdateSlice(c, x!, update!, index)],
  gather: gatherRule,
  scatter: scatterRule(0), scatter_add: scatterRule(1), scatter_mul: scatterRule(1), scatter_min: scatterRule(1), scatter_max: scatterRule(1),
  reduce_sum: reduceRule, reduce_prod: reduceRule, reduce_max: reduceRule, reduce_min: reduceRule, reduce_and: reduceRule, reduce_or: reduceRule,
  argmax: argRule, argmin: argRule,
  cumsum: cumulativeRule, cumprod: cumulativeRule, cummax: cumulativeRule, cummin: cumulativeRule,
  sort: sortRule,
  top_k: topKRule,
  qr: orthogonalRule((m, n) => { const k = Math.min(m, n); return Math.max(0, 4 * m * n * k - (4 / 3) * k ** 3); }),
  eigh: orthogonalRule((_m, n) => 9 * n ** 3),
  svd: orthogonalRule((m, n) => { const k = Math.min(m, n), big = Math.max(m, n); return 4 * big * k * k + 8 * k ** 3; }),
  cholesky: linalgRule<'cholesky'>((_m, n) => (n * n * n) / 3),
  triangular_solve: linalgRule<'triangular_solve'>((m, n, { leftSide }) => (leftSide ? m * m * n : m * n * n)),
  lu: linalgRule<'lu'>((m, n) => m * n * Math.min(m, n) - Math.min(m, n) ** 3 / 3),
  // XLA's count for a convolution: 2 flops per output element, tap and input feature of its group
  conv_general_dilated: (c, [a, b], { dimensionNumbers: dn }, ctx) => {
    const out = ctx.outAvals[0]!;
    const k = dn.rhsSpec.slice(1).reduce((s, d) => s * b!.shape[d]!, 1);
    return [c.emit(readAll([a!, b!], sizeOf(out.shape) * itemsize(out.dtype), { flops: 2 * sizeOf(out.shape) * k }), [a!, b!], out.shape, out.dtype)];
  },
  dot_general: (c, [a, b], { dimensionNumbers: [[contracting]] }, ctx) => {
    const out = ctx.outAvals[0]!;
    const k = contracting.reduce((s, d) => s * a!.shape[d]!, 1);
    return [c.emit(readAll([a!, b!], sizeOf(out.shape) * itemsize(out.dtype), { flops: 2 * sizeOf(out.shape) * k }), [a!, b!], out.shape, out.dtype)];
  },
  stop_gradient: same,
  scan: scanRule,
  while: whileRule,
  cond: condRule,
  checkpoint: (c, xs, { jaxpr, preventCse, differentiated }) => {
    const consts = paramsOf(jaxpr.jaxpr.constVars);
    if (!(differentiated && preventCse)) return lowerJaxpr(c, jaxpr.jaxpr, consts, xs);
    // JAX's _remat_translation_using_opt_barrier: the arguments pass through an optimization barrier
    const pointers = xs.length * POINTER_BYTES;
    const data = xs.reduce((s, x) => s + x.bytes, 0);
    const barrier = c.emit({ ...ZERO, bytes: pointers + data, operands: [pointers], output: data }, [c.tuple(xs)], [], 'int32');
    return lowerJaxpr(c, jaxpr.jaxpr, consts, opaque(xs, barrier.op));
  },
  custom_jvp_call: (c, xs, { callJaxpr }) => lowerJaxpr(c, callJaxpr.jaxpr, paramsOf(callJaxpr.jaxpr.constVars), xs),
  custom_vjp_call: (c, xs, { callJaxpr }) => lowerJaxpr(c, callJaxpr.jaxpr, paramsOf(callJaxpr.jaxpr.constVars), xs),
  custom_lin: () => {
    throw new TypeError(CUSTOM_VJP_JVP_ERROR);
  },
  // host callbacks are custom calls, which XLA's HloCostAnalysis cannot see into: counted as free here
  debug_callback: () => [],
  pure_callback: (c, xs, _params, ctx) => {
    const call = c.emit(ZERO, xs, [], 'int32').op;
    return ctx.outAvals.map((a) => param(a.shape, a.dtype, call));
  },
  name: same,
  device_put: same,
};

// ---- control flow ----

/**
 * lax.scan as JAX lowers it (_scan_impl): a while loop over (counter, consts,
 * carry, ys buffers, xs) whose body slices x[i] (dynamic_slice + reshape),
 * calls the scan body and writes y into ys[i] (reshape + dynamic update
 * slice); counted once, whatever the length. With unroll u the loop runs
 * length/u trips over xs reshaped to [trips, u, ...], calling the body u times
 * on static slices, and the remaining length % u steps run after it.
 */
function scanRule(c: Computation, inputs: Value[], p: PrimitiveParams['scan'], ctx: EqnContext): Value[] {
  const { numConsts: nC, numCarry: nK, length, reverse, unroll } = p;
  const body = p.jaxpr;
  const live = scanLiveness(p, ctx.used);
  const consts = pick(inputs.slice(0, nC), live.consts);
  const xs = pick(inputs.slice(nC + nK), live.xs);
  const init = inputs.slice(nC, nC + nK);
  const yAvals = pick(body.outAvals.slice(nK), live.ys);
  const i32 = (v: number) => constant(v, [], 'int32');
  let [trips, rest] = [Math.floor(length / unroll), length % unroll];
  if (unroll !== 1 && trips === 1 && rest === 0) [trips, rest] = [0, length];

  // the body is a call: a computation of its own on opaque arguments, the same cost at every call site
  const callee = new Computation();
  const outs = lowerJaxpr(callee, body.jaxpr, paramsOf(body.jaxpr.constVars), paramsOf(body.jaxpr.inVars));
  const callCost = total(callee.root(outs.filter((_, k) => (k < nK ? live.carry[k] : live.ys[k - nK]))));
  const call = (comp: Computation, kConsts: Value[], carry: Value[], x: Value[]) => {
    const op = comp.emit(callCost, [...kConsts, ...pick(carry, live.carry), ...x], [], 'int32').op;
    return { carry: carry.map((v, k) => (live.carry[k] ? param(v.shape, v.dtype, op) : v)), ys: yAvals.map((a) => param(a.shape, a.dtype, op)) };
  };
  /** n unrolled steps on static slices of xs, the ys stacked (JAX's inner()). */
  const steps = (comp: Computation, n: number, kConsts: Value[], carry: Value[], stacked: Value[]) => {
    const ys: Value[][] = [];
    for (let j = 0; j < n; j++) {
      const k = reverse ? n - 1 - j : j;
      const x = stacked.map((s) => reshape(comp, rows(comp, s, k, k + 1), s.shape.slice(1)));
      ({ carry, ys: ys[j] } = call(comp, kConsts, carry, x));
    }
    if (reverse) ys.reverse();
    return { carry, ys: yAvals.map((a, m) => concatenate(comp, ys.map((y) => reshape(comp, y[m]!, [1, ...a.shape])), [n, ...a.shape])) };
  };

  let carry = init;
  let ys = yAvals.map((a) => constant(0, [trips * unroll, ...a.shape], a.dtype));
  const split = trips * unroll;
  // unrolled leftovers come off the end (the front when reversed): static slices
  const [loopRange, restRange] = reverse ? [[rest, length], [0, rest]] : [[0, split], [split, length]];
  const [looped, leftover] = [loopRange!, restRange!].map(([from, to]) => xs.map((v) => rows(c, v, from!, to!)));
  if (trips) {
    const xss = unroll === 1 ? looped : looped.map((v) => reshape(c, v, [trips, unroll, ...v.shape.slice(1)]));
    const yss = yAvals.map((a) => constant(0, [trips, ...(unroll === 1 ? [] : [unroll]), ...a.shape], a.dtype));
    const [start] = c.root([i32(0), ...consts, ...pick(init, live.carry), ...yss, ...xss]);
    const b = new Computation();
    const [constIn, carryIn, xsIn, ysIn] = [opaque(consts), opaque(init), opaque(xss), opaque(yss)];
    const counter = param([], 'int32');
    const i = reverse ? elementwise(b, 'sub', [elementwise(b, 'sub', [i32(trips), counter], 'int32'), i32(1)], 'int32') : counter;
    const slices = xsIn.map((x) => reshape(b, dynamicSlice(b, x, [i, ...x.shape.slice(1).map(() => i32(0))], [1, ...x.shape.slice(1)]), x.shape.slice(1)));
    const r = unroll === 1 ? call(b, constIn, carryIn, slices) : steps(b, unroll, constIn, carryIn, slices);
    const ysOut = r.ys.map((y, m) => dynamicUpdateSlice(b, ysIn[m]!, reshape(b, y, [1, ...y.shape]), [i, ...y.shape.map(() => i32(0))]));
    const next = elementwise(b, 'add', [counter, i32(1)], 'int32');
    const bodyCost = total(b.root([next, ...constIn, ...pick(r.carry, live.carry), ...ysOut, ...xsIn]));
    const condCost = total([elementwise(new Computation(), 'lt', [param([], 'int32'), i32(trips)], 'bool')]);
    const loopOp = c.emit(sum(bodyCost, condCost), [start!], [], 'int32').op;
    carry = init.map((v, k) => (live.carry[k] ? param(v.shape, v.dtype, loopOp) : v));
    ys = yss.map((y) => reshape(c, param(y.shape, y.dtype, loopOp), [split, ...y.shape.slice(unroll === 1 ? 1 : 2)]));
  }
  if (rest) {
    const r = steps(c, rest, consts, carry, leftover);
    carry = r.carry;
    ys = ys.map((y, m) => concatenate(c, reverse ? [r.ys[m]!, y] : [y, r.ys[m]!], [length, ...y.shape.slice(1)]));
  }
  const allYs = body.outAvals.slice(nK);
  let m = 0;
  return [...carry, ...allYs.map((a, j) => (live.ys[j] ? ys[m++]! : param([length, ...a.shape], a.dtype)))];
}

/** lax.while_loop: one HLO while over (cond consts, body consts, carry), body and condition counted once. */
function whileRule(c: Computation, inputs: Value[], p: PrimitiveParams['while'], ctx: EqnContext): Value[] {
  const { condNconsts: nCC, bodyNconsts: nBC } = p;
  const [condConsts, bodyConsts, init] = [inputs.slice(0, nCC), inputs.slice(nCC, nCC + nBC), inputs.slice(nCC + nBC)];
  const live = whileLiveness(p, ctx.used);
  const [start] = c.root([...pick(condConsts, live.condConsts), ...pick(bodyConsts, live.bodyConsts), ...pick(init, live.carry)]);

  const b = new Computation();
  const [condIn, bodyIn, carryIn] = [opaque(condConsts), opaque(bodyConsts), opaque(init)];
  const outs = lowerJaxpr(b, p.bodyJaxpr.jaxpr, [], [...bodyIn, ...carryIn]);
  const bodyCost = total(b.root([...pick(condIn, live.condConsts), ...pick(bodyIn, live.bodyConsts), ...pick(outs, live.carry)]));
  const cc = new Computation();
  const condCost = total(cc.root(lowerJaxpr(cc, p.condJaxpr.jaxpr, [], [...opaque(condConsts), ...opaque(init)])));
  const loopOp = c.emit(sum(bodyCost, condCost), [start!], [], 'int32').op;
  return opaque(init, loopOp);
}

/**
 * lax.cond / switch: an HLO conditional, whose cost is the largest branch's,
 * key by key. Branches see constant operands (StableHLO regions capture them);
 * the others reach a branch directly when it uses one, as a tuple when more.
 */
function condRule(c: Computation, [index, ...ops]: Value[], { branches }: PrimitiveParams['cond'], ctx: EqnContext): Value[] {
  if (index!.splat !== undefined) {
    const k = Math.min(Math.max(index!.splat, 0), branches.length - 1);
    return lowerJaxpr(c, branches[k]!.jaxpr, [], ops);
  }
  let cost: Totals | undefined;
  const passed: Value[] = [];
  for (const branch of branches) {
    const bc = new Computation();
    const outs = lowerJaxpr(bc, branch.jaxpr, [], ops.map((v) => (v.splat !== undefined ? v : param(v.shape, v.dtype))));
    const t = total(bc.root(outs));
    cost = cost ? combine(cost, t, Math.max) : t;
    const used = liveInvars(branch.jaxpr, branch.jaxpr.outs.map(() => true));
    const captured = ops.filter((v, i) => used[i] && v.splat === undefined);
    passed.push(...c.root(captured));
  }
  const condOp = c.emit(cost!, [index!, ...passed], [], 'int32').op;
  return ctx.outAvals.map((a) => param(a.shape, a.dtype, condOp));
}

// ---- entry points ----

/** Lowers `jaxpr`'s equations into `c`; returns its outputs. */
function lowerJaxpr(c: Computation, jaxpr: Jaxpr, consts: Value[], args: Value[]): Value[] {
  const { eqnOuts } = liveness(jaxpr, jaxpr.outs.map(() => true));
  const env = new Map<Var, Value>();
  const read = (a: Atom) => (a instanceof Literal ? constant(a.value, a.aval.shape, a.aval.dtype) : env.get(a)!);
  jaxpr.constVars.forEach((v, i) => env.set(v, consts[i]!));
  jaxpr.inVars.forEach((v, i) => env.set(v, args[i]!));
  for (const e of jaxpr.eqns) {
    const rule = RULES[e.primitive] as Rule<Primitive>;
    const outs = rule(c, e.inputs.map(read), e.params, { outAvals: e.outVars.map((v) => v.aval), used: eqnOuts.get(e)! });
    e.outVars.forEach((v, i) => env.set(v, outs[i]!));
  }
  return jaxpr.outs.map(read);
}

/** Cost of an (unfused) jaxpr, per XLA's HloCostAnalysis conventions on the lowered StableHLO. */
export function jaxprCost(jaxpr: Jaxpr): CostAnalysis {
  const entry = new Computation();
  const t = total(entry.root(lowerJaxpr(entry, jaxpr, paramsOf(jaxpr.constVars), paramsOf(jaxpr.inVars))));
  const operands = [...t.operands];
  while (operands.length && operands[operands.length - 1] === 0) operands.pop();
  return { flops: t.flops, transcendentals: t.transcendentals, bytesAccessed: t.bytes, bytesAccessedOperands: operands, bytesAccessedOutput: t.output };
}

/**
 * The dict `jax.jit(f).lower(...).cost_analysis()` returns, with JAX's key
 * names ('flops', 'transcendentals', 'bytes accessed', 'bytes accessed0{}',
 * ..., 'bytes accessedout{}'); as there, keys whose value is 0 are left out.
 * (JAX's 'utilization{i}{}' keys are not modelled.)
 */
export function formatCost(cost: CostAnalysis): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (key: string, value: number) => {
    if (value !== 0) out[key] = value;
  };
  put('flops', cost.flops);
  put('transcendentals', cost.transcendentals);
  put('bytes accessed', cost.bytesAccessed);
  cost.bytesAccessedOperands.forEach((b, i) => put(`bytes accessed${i}{}`, b));
  put('bytes accessedout{}', cost.bytesAccessedOutput);
  return out;
}
