// Reference rule for dot_general: out[batch, lhsFree, rhsFree] = Σ over the
// contracting axes of lhs·rhs. Floats accumulate in float64 (rounded to the
// output dtype once); integers accumulate modulo 2^32, which equals the exact
// integer sum wrapped into any output integer dtype of 32 bits or fewer.
import { castToInteger, isFloating, wrapInteger } from '../core/dtype.js';
import type { PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { type RefArray, nextIndex, offsetOf, sizeOf, stridesOf } from './array.js';

/** The flat offset of every multi-index over `sizes` (row-major), with the given strides. */
function offsetTable(sizes: number[], strides: number[]): Float64Array {
  const table = new Float64Array(sizeOf(sizes));
  if (table.length === 0) return table;
  const index = new Array<number>(sizes.length).fill(0);
  let i = 0;
  do table[i++] = offsetOf(index, strides);
  while (nextIndex(index, sizes));
  return table;
}

export function dotGeneralRule(
  inputs: RefArray[],
  { dimensionNumbers }: PrimitiveParams['dot_general'],
  outs: ShapedArray[],
): Float64Array[] {
  const [lhs, rhs] = inputs as [RefArray, RefArray];
  const [[lhsContracting, rhsContracting], [lhsBatch, rhsBatch]] = dimensionNumbers;
  const outDtype = outs[0]!.dtype;
  const lhsStrides = stridesOf(lhs.shape);
  const rhsStrides = stridesOf(rhs.shape);
  const free = (rank: number, contracting: number[], batch: number[]) =>
    Array.from({ length: rank }, (_, i) => i).filter((i) => !contracting.includes(i) && !batch.includes(i));
  const lhsFree = free(lhs.shape.length, lhsContracting, lhsBatch);
  const rhsFree = free(rhs.shape.length, rhsContracting, rhsBatch);
  const table = (x: RefArray, strides: number[], axes: number[]) => offsetTable(axes.map((d) => x.shape[d]!), axes.map((d) => strides[d]!));

  const lhsBatchOffsets = table(lhs, lhsStrides, lhsBatch);
  const rhsBatchOffsets = table(rhs, rhsStrides, rhsBatch);
  const lhsFreeOffsets = table(lhs, lhsStrides, lhsFree);
  const rhsFreeOffsets = table(rhs, rhsStrides, rhsFree);
  // contracting axes pair up in order, so both tables enumerate the same (lhs axis sizes) index space
  const contractSizes = lhsContracting.map((d) => lhs.shape[d]!);
  const lhsContractOffsets = offsetTable(contractSizes, lhsContracting.map((d) => lhsStrides[d]!));
  const rhsContractOffsets = offsetTable(contractSizes, rhsContracting.map((d) => rhsStrides[d]!));

  const B = lhsBatchOffsets.length;
  const M = lhsFreeOffsets.length;
  const N = rhsFreeOffsets.length;
  const K = lhsContractOffsets.length;
  const out = new Float64Array(B * M * N);
  const integerSum = !isFloating(outDtype) && outDtype !== 'bool' && !isFloating(lhs.dtype);
  const a = lhs.data;
  const b = rhs.data;
  for (let bi = 0; bi < B; bi++) {
    for (let m = 0; m < M; m++) {
      const lhsBase = lhsBatchOffsets[bi]! + lhsFreeOffsets[m]!;
      for (let n = 0; n < N; n++) {
        const rhsBase = rhsBatchOffsets[bi]! + rhsFreeOffsets[n]!;
        let acc = 0;
        if (integerSum) {
          for (let k = 0; k < K; k++) acc = (acc + Math.imul(a[lhsBase + lhsContractOffsets[k]!]!, b[rhsBase + rhsContractOffsets[k]!]!)) | 0;
          acc = wrapInteger(acc, outDtype);
        } else {
          for (let k = 0; k < K; k++) acc += a[lhsBase + lhsContractOffsets[k]!]! * b[rhsBase + rhsContractOffsets[k]!]!;
          if (outDtype === 'bool') acc = acc !== 0 ? 1 : 0;
          else if (!isFloating(outDtype)) acc = castToInteger(acc, outDtype) + 0;
        }
        out[(bi * M + m) * N + n] = acc;
      }
    }
  }
  return [out];
}
