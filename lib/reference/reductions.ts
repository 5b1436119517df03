// Reference rules for reductions (reduce_*), argmax/argmin and the
// cumulative primitives. Floats accumulate in float64 and round once at the
// end; integers wrap at every step (the same result as wrapping once).
import { type DType, integerRange, isFloating, wrapInteger } from '../core/dtype.js';
import type { CumulativePrimitive, PrimitiveParams, ReducePrimitive, ShapedArray } from '../core/primitives.js';
import { type RefArray, aroundAxis, sizeOf, stridesOf } from './array.js';

interface Monoid {
  identity: (dtype: DType) => number;
  combine: (a: number, b: number, dtype: DType) => number;
}

const lowest = (d: DType): number => (isFloating(d) ? -Infinity : d === 'bool' ? 0 : integerRange(d)[0]);
const highest = (d: DType): number => (isFloating(d) ? Infinity : d === 'bool' ? 1 : integerRange(d)[1]);

const SUM: Monoid = {
  identity: () => 0,
  combine: (a, b, d) => (isFloating(d) ? a + b : wrapInteger(a + b, d)), // bool: or
};
const PROD: Monoid = {
  identity: () => 1,
  combine: (a, b, d) => (isFloating(d) ? a * b : wrapInteger(Math.imul(a, b), d)), // bool: and
};
const MAX: Monoid = { identity: lowest, combine: (a, b) => Math.max(a, b) }; // NaN propagates
const MIN: Monoid = { identity: highest, combine: (a, b) => Math.min(a, b) };

export const REDUCE_MONOIDS: { [P in ReducePrimitive]: Monoid } = {
  reduce_sum: SUM,
  reduce_prod: PROD,
  reduce_max: MAX,
  reduce_min: MIN,
  reduce_and: { identity: (d) => wrapInteger(-1, d), combine: (a, b, d) => wrapInteger(a & b, d) }, // all ones / true
  reduce_or: { identity: () => 0, combine: (a, b, d) => wrapInteger(a | b, d) },
};

export const CUMULATIVE_MONOIDS: { [P in CumulativePrimitive]: Monoid } = {
  cumsum: SUM,
  cumprod: PROD,
  cummax: MAX,
  cummin: MIN,
};

export function reduceRule(monoid: Monoid) {
  return (inputs: RefArray[], { axes }: { axes: number[] }, outs: ShapedArray[]): Float64Array[] => {
    const x = inputs[0]!;
    if (axes.length === 0) return [x.data.slice()]; // no reduction: XLA returns the operand (keeping -0)
    const dtype = x.dtype;
    const out = new Float64Array(sizeOf(outs[0]!.shape)).fill(monoid.identity(dtype));
    if (x.data.length === 0) return [out];
    // the output stride each input axis moves by (0 along reduced axes)
    const outStrides = stridesOf(outs[0]!.shape);
    const strideOnInputAxis = new Array<number>(x.shape.length).fill(0);
    let kept = 0;
    x.shape.forEach((_, k) => {
      if (!axes.includes(k)) strideOnInputAxis[k] = outStrides[kept++]!;
    });
    const index = new Array<number>(x.shape.length).fill(0);
    let pos = 0;
    for (let i = 0; i < x.data.length; i++) {
      out[pos] = monoid.combine(out[pos]!, x.data[i]!, dtype);
      for (let k = x.shape.length - 1; k >= 0; k--) {
        pos += strideOnInputAxis[k]!;
        if (++index[k]! < x.shape[k]!) break;
        pos -= strideOnInputAxis[k]! * x.shape[k]!;
        index[k] = 0;
      }
    }
    return [out];
  };
}

/** The first index of the max (min) along the axis; the first NaN wins if there is one (JAX's behaviour). */
export function argReduceRule(better: (a: number, b: number) => boolean) {
  return (inputs: RefArray[], { axes }: PrimitiveParams['argmax']): Float64Array[] => {
    const x = inputs[0]!;
    const { outer, size, inner } = aroundAxis(x.shape, axes[0]!);
    const out = new Float64Array(outer * inner);
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        const base = o * size * inner + j;
        let best = 0;
        let bestValue = x.data[base]!;
        for (let k = 1; k < size && !Number.isNaN(bestValue); k++) {
          const v = x.data[base + k * inner]!;
          if (Number.isNaN(v) || better(v, bestValue)) {
            best = k;
            bestValue = v;
          }
        }
        out[o * inner + j] = best;
      }
    }
    return [out];
  };
}

export function cumulativeRule(monoid: Monoid) {
  return (inputs: RefArray[], { axis, reverse }: PrimitiveParams['cumsum']): Float64Array[] => {
    const x = inputs[0]!;
    const dtype = x.dtype;
    const { outer, size, inner } = aroundAxis(x.shape, axis);
    const out = new Float64Array(x.data.length);
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        let acc = monoid.identity(dtype);
        for (let step = 0; step < size; step++) {
          const k = reverse ? size - 1 - step : step;
          const pos = o * size * inner + k * inner + j;
          acc = monoid.combine(acc, x.data[pos]!, dtype);
          out[pos] = acc;
        }
      }
    }
    return [out];
  };
}

/** JAX's sort comparator on one key (lax._sort_lt_comparator): floats with -0 == 0 and every NaN equal and last. */
function sortLess(a: number, b: number): boolean {
  return Number.isNaN(b) ? !Number.isNaN(a) : a < b;
}

/** XLA's TopK order: a total order on the bits (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN); NaN payloads are not compared. */
function totalOrderKey(v: number): [number, number] {
  const bits = new DataView(new Float64Array([v]).buffer);
  const negative = (bits.getUint8(7) & 0x80) !== 0;
  if (Number.isNaN(v)) return [negative ? 0 : 2, 0];
  return [1, v === 0 ? (negative ? -Number.MIN_VALUE : 0) : v];
}

/** lax.top_k: the k largest of each row of the last axis in XLA's TopK order, ties by lower index, and their indices. */
export function topKRule(inputs: RefArray[], { k }: PrimitiveParams['top_k']): Float64Array[] {
  const x = inputs[0]!;
  const n = x.shape[x.shape.length - 1]!;
  const rows = n ? x.data.length / n : 0;
  const values = new Float64Array(rows * k);
  const indices = new Float64Array(rows * k);
  for (let r = 0; r < rows; r++) {
    const keys = Array.from({ length: n }, (_, i) => totalOrderKey(x.data[r * n + i]!));
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[b]![0] - keys[a]![0] || keys[b]![1] - keys[a]![1] || a - b);
    for (let j = 0; j < k; j++) {
      values[r * k + j] = x.data[r * n + order[j]!]!;
      indices[r * k + j] = order[j]!;
    }
  }
  return [values, indices];
}

/** lax.sort: a stable sort of each line along `dimension`, lexicographic over the first numKeys operands. */
export function sortRule(inputs: RefArray[], { dimension, numKeys }: PrimitiveParams['sort']): Float64Array[] {
  const { outer, size, inner } = aroundAxis(inputs[0]!.shape, dimension);
  const outs = inputs.map((x) => new Float64Array(x.data.length));
  const order = Array.from({ length: size }, (_, i) => i);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      const at = (k: number) => o * size * inner + k * inner + j;
      const byKeys = (a: number, b: number): number => {
        for (let key = 0; key < numKeys; key++) {
          const x = inputs[key]!.data[at(a)]!;
          const y = inputs[key]!.data[at(b)]!;
          if (sortLess(x, y)) return -1;
          if (sortLess(y, x)) return 1;
        }
        return a - b; // stable
      };
      const sorted = order.slice().sort(byKeys);
      sorted.forEach((from, k) => inputs.forEach((x, i) => (outs[i]![at(k)] = x.data[at(from)]!)));
    }
  }
  return outs;
}
