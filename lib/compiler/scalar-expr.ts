// The one translation from an elementwise primitive to a kernel-IR scalar
// expression (jax-js's jit.ts shape): eager lowering (lower.ts) builds a
// kernel around one application, fusion (fuse.ts) nests applications into
// one expression, and both call `scalarExpr`, so a primitive means the same
// thing in either. The table is typed over every elementwise primitive.
import type { DType } from '../core/dtype.js';
import {
  type BinaryPrimitive, type ComparePrimitive, type Primitive, type PrimitiveParams, type UnaryPrimitive,
  BINARY_PRIMITIVES, COMPARE_PRIMITIVES, UNARY_PRIMITIVES,
} from '../core/primitives.js';
import type { Expr } from './kernel-ir.js';

export type ElementwisePrimitive = UnaryPrimitive | BinaryPrimitive | ComparePrimitive | 'select_n' | 'clamp' | 'convert_element_type' | 'bitcast_convert_type';

type Rule<P extends ElementwisePrimitive> = (args: Expr[], params: PrimitiveParams[P], out: DType) => Expr;

const unary = <P extends UnaryPrimitive>(name: P, param?: (p: PrimitiveParams[P]) => number[]): Rule<P> => (args, params, out) => {
  const values = param?.(params);
  return { op: 'unary', name, x: args[0]!, dtype: out, ...(values ? { param: values } : {}) };
};
const binary = (name: BinaryPrimitive): Rule<BinaryPrimitive> => (args, _p, out) => ({ op: 'binary', name, x: args[0]!, y: args[1]!, dtype: out });
const compare = (name: ComparePrimitive): Rule<ComparePrimitive> => (args) => ({ op: 'compare', name, x: args[0]!, y: args[1]!, dtype: 'bool' });

/** Unary primitives whose params the kernel reads, as numbers (the IR carries `param: number[]`). */
const UNARY_PARAMS: { [P in 'round' | 'integer_pow' | 'reduce_precision']: (p: PrimitiveParams[P]) => number[] } = {
  round: (p) => [p.roundingMethod === 'to_nearest_even' ? 1 : 0],
  integer_pow: (p) => [p.y],
  reduce_precision: (p) => [p.exponentBits, p.mantissaBits],
};

const RULES = {
  ...(Object.fromEntries(UNARY_PRIMITIVES.map((p) => [p, unary(p, (UNARY_PARAMS as Record<string, (p: unknown) => number[]>)[p])])) as {
    [P in UnaryPrimitive]: Rule<P>;
  }),
  ...(Object.fromEntries(BINARY_PRIMITIVES.map((p) => [p, binary(p)])) as { [P in BinaryPrimitive]: Rule<P> }),
  ...(Object.fromEntries(COMPARE_PRIMITIVES.map((p) => [p, compare(p)])) as { [P in ComparePrimitive]: Rule<P> }),
  select_n: (args, _p, out) => ({ op: 'select', predicate: args[0]!, cases: args.slice(1), dtype: out }),
  clamp: (args, _p, out) => ({ op: 'clamp', lo: args[0]!, x: args[1]!, hi: args[2]!, dtype: out }),
  convert_element_type: (args, _p, out) => ({ op: 'convert', x: args[0]!, dtype: out }),
  // same width here; lower.ts reads the parts of a width change through strided views
  bitcast_convert_type: (args, _p, out) => ({ op: 'bitcast', parts: [args[0]!], dtype: out }),
} satisfies { [P in ElementwisePrimitive]: Rule<P> };

/** Every elementwise primitive. */
export const ELEMENTWISE_PRIMITIVES = Object.keys(RULES) as ElementwisePrimitive[];

export function isElementwisePrimitive(p: Primitive): p is ElementwisePrimitive {
  return Object.hasOwn(RULES, p);
}

/** The scalar expression of `prim` applied to `args` (one per operand), producing `out`. */
export function scalarExpr<P extends ElementwisePrimitive>(prim: P, args: Expr[], params: PrimitiveParams[P], out: DType): Expr {
  return (RULES[prim] as Rule<P>)(args, params, out);
}
