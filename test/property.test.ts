// Property tests (fast-check): random elementwise expression trees over
// random broadcastable shapes, and random reductions, evaluated on the
// compiled C kernels and again with every primitive run by the float64
// reference interpreter. The op and dtype vocabulary is small on purpose, so
// the number of distinct kernels (each compiled once, then cached) stays
// bounded. Seeds are fixed for reproducible CI; set JAXON_PROPERTY_SEED to
// explore others.
import test from 'ava';
import fc from 'fast-check';
import { numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import { TOLERANCE, randomValues, withReference } from './helpers/oracle.js';
import { emulatorSubset } from './helpers/emulator.js';

const SEED = process.env.JAXON_PROPERTY_SEED ? Number(process.env.JAXON_PROPERTY_SEED) : 20240611;
// the emulated GPU compiles a kernel per random shape (helpers/emulator.ts): the first 20 runs of each property there
const RUNS = emulatorSubset ? 20 : 60;

type Node =
  | { kind: 'leaf'; input: number }
  | { kind: 'unary'; op: UnaryOp; x: Node }
  | { kind: 'binary'; op: BinaryOp; x: Node; y: Node }
  | { kind: 'where'; a: number; b: number; x: Node; y: Node };

const FLOAT_UNARY = ['exp', 'tanh', 'sin', 'abs', 'neg', 'sqrtAbs'] as const;
const INT_UNARY = ['abs', 'neg'] as const;
const FLOAT_BINARY = ['add', 'sub', 'mul', 'div', 'max', 'min'] as const;
const INT_BINARY = ['add', 'sub', 'mul', 'max', 'min'] as const;
type UnaryOp = (typeof FLOAT_UNARY)[number];
type BinaryOp = (typeof FLOAT_BINARY)[number];

const INPUTS = 3;

/** Trees of depth ≤ maxDepth over `INPUTS` leaves; ints use only ops closed over the integers. */
function treeArbitrary(integer: boolean, maxDepth: number): fc.Arbitrary<Node> {
  const leaf: fc.Arbitrary<Node> = fc.integer({ min: 0, max: INPUTS - 1 }).map((input) => ({ kind: 'leaf', input }));
  const unaryOps = integer ? INT_UNARY : FLOAT_UNARY;
  const binaryOps = integer ? INT_BINARY : FLOAT_BINARY;
  let level = leaf;
  for (let d = 1; d <= maxDepth; d++) {
    const sub = level;
    level = fc.oneof(
      { arbitrary: leaf, weight: 1 },
      { arbitrary: fc.record({ op: fc.constantFrom(...unaryOps), x: sub }).map((r): Node => ({ kind: 'unary', ...r })), weight: 2 },
      { arbitrary: fc.record({ op: fc.constantFrom(...binaryOps), x: sub, y: sub }).map((r): Node => ({ kind: 'binary', ...r })), weight: 3 },
      {
        arbitrary: fc.record({ a: fc.nat(INPUTS - 1), b: fc.nat(INPUTS - 1), x: sub, y: sub }).map((r): Node => ({ kind: 'where', ...r })),
        weight: 1,
      },
    );
  }
  return level;
}

function depthOf(n: Node): number {
  switch (n.kind) {
    case 'leaf': return 0;
    case 'unary': return 1 + depthOf(n.x);
    default: return 1 + Math.max(depthOf(n.x), depthOf(n.y));
  }
}

function show(n: Node): string {
  switch (n.kind) {
    case 'leaf': return `x${n.input}`;
    case 'unary': return `${n.op}(${show(n.x)})`;
    case 'binary': return `${n.op}(${show(n.x)}, ${show(n.y)})`;
    case 'where': return `where(x${n.a} > x${n.b}, ${show(n.x)}, ${show(n.y)})`;
  }
}

/**
 * Evaluates a tree with jnp. Ill-conditioned ops are kept well-conditioned:
 * exp sees its argument clipped to [-2, 2], division is by |y| + 0.5, and
 * where compares inputs (not computed values, which may round differently).
 */
function evaluate(n: Node, inputs: Array[], seen?: (x: Array) => void): Array {
  let out: Array;
  if (n.kind === 'leaf') out = inputs[n.input]!;
  else if (n.kind === 'unary') out = UNARY[n.op](evaluate(n.x, inputs, seen));
  else if (n.kind === 'binary') out = BINARY[n.op](evaluate(n.x, inputs, seen), evaluate(n.y, inputs, seen));
  else out = jnp.where(jnp.greater(inputs[n.a]!, inputs[n.b]!), evaluate(n.x, inputs, seen), evaluate(n.y, inputs, seen));
  seen?.(out);
  return out;
}

const UNARY: Record<UnaryOp, (x: Array) => Array> = {
  exp: (x) => jnp.exp(jnp.clip(x, -2, 2)),
  tanh: (x) => jnp.tanh(x),
  sin: (x) => jnp.sin(x),
  abs: (x) => jnp.abs(x),
  neg: (x) => jnp.negative(x),
  sqrtAbs: (x) => jnp.sqrt(jnp.abs(x)),
};

const BINARY: Record<BinaryOp, (x: Array, y: Array) => Array> = {
  add: (x, y) => jnp.add(x, y),
  sub: (x, y) => jnp.subtract(x, y),
  mul: (x, y) => jnp.multiply(x, y),
  div: (x, y) => jnp.divide(x, jnp.add(jnp.abs(y), 0.5)),
  max: (x, y) => jnp.maximum(x, y),
  min: (x, y) => jnp.minimum(x, y),
};

const MAX_FINITE: Record<string, number> = { float16: 65504, bfloat16: 3.39e38, float32: 3.4e38, float64: 1.8e308 };

/**
 * Compares compiled and reference results. Each op may round differently by
 * an ulp (transcendentals; 16-bit results computed in float32 vs float64), so
 * the tolerance grows with the depth and is also relative to the largest
 * intermediate magnitude (cancellation turns relative error into absolute).
 */
function compare(actual: Float32Array | Float64Array | Int32Array, expected: ArrayLike<number>, dtype: DType, depth: number, scale: number): string | null {
  if (actual.length !== expected.length) return `length ${actual.length} vs ${expected.length}`;
  const rtol = dtype === 'int32' ? 0 : dtype === 'float16' ? 1e-2 * Math.max(1, depth) : dtype === 'bfloat16' ? 5e-2 * Math.max(1, depth) : 1e-6 * (1 + depth);
  const nearOverflow = scale >= 0.25 * MAX_FINITE[dtype]!;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const b = expected[i]!;
    if (a === b || (Number.isNaN(a) && Number.isNaN(b))) continue;
    if (nearOverflow && (!Number.isFinite(a) || !Number.isFinite(b))) continue; // overflow thresholds may round either way
    if (Math.abs(a - b) <= rtol * Math.abs(b) + rtol * (1 + scale)) continue;
    return `index ${i}: compiled ${a}, reference ${b} (rtol ${rtol}, scale ${scale})`;
  }
  return null;
}

/** Shapes of INPUTS operands that broadcast to `out`: each a suffix of it, some axes set to 1. */
const shapesArbitrary = fc
  .array(fc.integer({ min: 1, max: 5 }), { minLength: 0, maxLength: 3 })
  .chain((out) =>
    fc.tuple(
      fc.constant(out),
      fc.array(fc.tuple(fc.integer({ min: 0, max: out.length }), fc.array(fc.boolean(), { minLength: 3, maxLength: 3 })), { minLength: INPUTS, maxLength: INPUTS }),
    ),
  )
  .map(([out, specs]) => ({
    out,
    inputs: specs.map(([rank, ones]) => out.slice(out.length - rank).map((d, i) => (ones[i] ? 1 : d))),
  }));

function makeInput(shape: number[], dtype: DType, seed: number): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  const values = dtype === 'int32' ? randomValues(n, seed, -1000, 1000).map(Math.round) : randomValues(n, seed, -1.5, 1.5);
  return lax.reshape(jnp.array(values, { dtype }), shape);
}

for (const dtype of ['float32', 'float16', 'bfloat16', 'int32'] as DType[]) {
  test(`random elementwise expression trees agree with the reference interpreter (${dtype})`, (t) => {
    const property = fc.property(treeArbitrary(dtype === 'int32', 4), shapesArbitrary, fc.integer({ min: 1, max: 1 << 30 }), (tree, shapes, seed) => {
      const inputs = shapes.inputs.map((s, k) => makeInput(s, dtype, seed + k));
      const compiled = evaluate(tree, inputs);
      let scale = 0;
      const expected = withReference(() =>
        evaluate(tree, inputs, (x) => {
          for (const v of x.dataSync()) if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
        }),
      );
      const where = `${show(tree)} on ${JSON.stringify(shapes.inputs)}`;
      if (compiled.dtype !== expected.dtype) throw new Error(`${where}: dtype ${compiled.dtype} vs ${expected.dtype}`);
      if (compiled.dtype !== dtype) throw new Error(`${where}: result dtype ${compiled.dtype}, expected ${dtype}`);
      if (JSON.stringify(compiled.shape) !== JSON.stringify(expected.shape)) throw new Error(`${where}: shape ${compiled.shape} vs ${expected.shape}`);
      const problem = compare(compiled.dataSync() as Float32Array, expected.dataSync(), dtype, depthOf(tree), scale);
      if (problem) throw new Error(`${where}: ${problem}`);
    });
    fc.assert(property, { numRuns: RUNS, seed: SEED });
    t.pass();
  });
}

const REDUCTIONS = ['sum', 'max', 'min', 'prod'] as const;

const reductionArbitrary = fc
  .array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 })
  .chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      axis: fc.oneof(
        fc.constant(null),
        fc.integer({ min: -shape.length, max: shape.length - 1 }),
        fc.subarray(shape.map((_, i) => i)),
      ),
      keepdims: fc.boolean(),
      op: fc.constantFrom(...REDUCTIONS),
      seed: fc.integer({ min: 1, max: 1 << 30 }),
    }),
  );

for (const dtype of ['float32', 'float16', 'bfloat16', 'int32'] as DType[]) {
  test(`random reductions over random axes agree with the reference interpreter (${dtype})`, (t) => {
    const fns = { sum: jnp.sum, max: jnp.max, min: jnp.min, prod: jnp.prod };
    const property = fc.property(reductionArbitrary, ({ shape, axis, keepdims, op, seed }) => {
      const n = shape.reduce((a, b) => a * b, 1);
      // products stay near 1 so that 125 factors neither overflow nor vanish in float16
      const [lo, hi] = op === 'prod' ? (dtype === 'int32' ? [-3, 3] : [0.7, 1.3]) : dtype === 'int32' ? [-1000, 1000] : [-2, 2];
      let values = randomValues(n, seed, lo, hi);
      if (dtype === 'int32') values = values.map(Math.round);
      const x = lax.reshape(jnp.array(values, { dtype }), shape);
      const run = () => fns[op](x, { axis, keepdims });
      const compiled = run();
      const expected = withReference(run);
      const where = `${op}(${dtype}${JSON.stringify(shape)}, axis ${JSON.stringify(axis)}, keepdims ${keepdims})`;
      const axes = axis === null ? shape.map((_, i) => i) : (globalThis.Array.isArray(axis) ? axis : [axis as number]).map((a: number) => (a < 0 ? a + shape.length : a));
      const expectedShape = keepdims ? shape.map((d, i) => (axes.includes(i) ? 1 : d)) : shape.filter((_, i) => !axes.includes(i));
      if (JSON.stringify(compiled.shape) !== JSON.stringify(expectedShape)) throw new Error(`${where}: shape ${JSON.stringify(compiled.shape)}, expected ${JSON.stringify(expectedShape)}`);
      if (compiled.dtype !== dtype || expected.dtype !== dtype) throw new Error(`${where}: dtype ${compiled.dtype} / ${expected.dtype}`);
      const tol = 4 * TOLERANCE[dtype];
      const a = compiled.dataSync();
      const b = expected.dataSync();
      for (let i = 0; i < a.length; i++) {
        if (a[i] === b[i] || (Number.isNaN(a[i]!) && Number.isNaN(b[i]!))) continue;
        if (Math.abs(a[i]! - b[i]!) > tol * (1 + Math.abs(b[i]!))) throw new Error(`${where}: index ${i}: compiled ${a[i]}, reference ${b[i]}`);
      }
    });
    fc.assert(property, { numRuns: RUNS, seed: SEED + 1 });
    t.pass();
  });
}
