// The reference interpreter's host callbacks: the callback runs on the
// operands' values, packed into their dtypes' bytes as a program would hand
// them over; a pure callback's results are read back from the bytes it returns.
import { packValues, unpackValues } from '../core/host.js';
import { type HostArgument, type PrimitiveParams, type ShapedArray, aval } from '../core/primitives.js';
import type { RefArray } from './array.js';

const hostArgument = (x: RefArray): HostArgument => ({ bytes: packValues(x.data, x.dtype), aval: aval(x.shape, x.dtype) });

export function debugCallbackReference(inputs: RefArray[], { callback }: PrimitiveParams['debug_callback']): Float64Array[] {
  callback(inputs.map(hostArgument), []);
  return [];
}

export function pureCallbackReference(inputs: RefArray[], { callback }: PrimitiveParams['pure_callback'], outs: ShapedArray[]): Float64Array[] {
  return callback(inputs.map(hostArgument), outs).map((bytes, i) => Float64Array.from(unpackValues(bytes, outs[i]!.dtype)));
}
