// The `jnp` namespace: every numpy function, the dtype names, and the Array
// methods that forward to them.
import { Array, registerArrayMethods } from '../core/array.js';
import { disposeIntermediates } from '../core/memory.js';
import { checkUserDType } from '../core/dtype.js';
import * as lax from '../lax/ops.js';
import * as creation from './creation.js';
import * as elementwise from './elementwise.js';
import * as indexing from './indexing.js';
import * as linalg from './linalg.js';
import * as manipulation from './manipulation.js';
import * as reductions from './reductions.js';
import * as productsMore from './products-more.js';
import * as sets from './sets.js';
import * as sorting from './sorting.js';
import * as statistics from './statistics.js';

export * from './creation.js';
export * from './elementwise.js';
export * from './bits.js';
export * from './manipulation.js';
export * from './reductions.js';
export * from './linalg.js';
export * from './indexing.js';
export * from './testing.js';
export * from './sorting.js';
export * from './sets.js';
export * from './convolve.js';
export * from './nan-reductions.js';
export * from './statistics.js';
export * from './manipulation-more.js';
export * from './products-more.js';
export * from './logaddexp.js';
export * from './dtype-info.js';
export { Array };

import * as linalgNamespace from './linalg-namespace.js';
/** jnp.linalg; each function disposes its own intermediates. */
const linalgFunctions = disposeIntermediates(linalgNamespace, 'jnp.linalg.');
export { linalgFunctions as linalg };

export const bool = 'bool' as const;
export const int8 = 'int8' as const;
export const int16 = 'int16' as const;
export const int32 = 'int32' as const;
export const uint8 = 'uint8' as const;
export const uint16 = 'uint16' as const;
export const uint32 = 'uint32' as const;
export const float16 = 'float16' as const;
export const bfloat16 = 'bfloat16' as const;
export const float32 = 'float32' as const;
export const float64 = 'float64' as const;
export const newaxis = 'newaxis' as const;
export const pi = Math.PI;
export const e = Math.E;
export const inf = Infinity;
export const nan = NaN;

registerArrayMethods(disposeIntermediates({
  add: elementwise.add,
  subtract: elementwise.subtract,
  multiply: elementwise.multiply,
  divide: elementwise.divide,
  power: elementwise.power,
  negative: elementwise.negative,
  matmul: (x, y) => linalg.matmul(x, y),
  sum: (x, options) => reductions.sum(x, options as never),
  mean: (x, options) => reductions.mean(x, options as never),
  max: (x, options) => reductions.max(x, options as never),
  min: (x, options) => reductions.min(x, options as never),
  argmax: (x, options) => reductions.argmax(x, options as never),
  reshape: (x, shape) => manipulation.reshape(x, shape),
  transpose: (x, axes) => manipulation.transpose(x, axes),
  astype: (x, dtype) => lax.convertElementType(x, checkUserDType('Array.astype', dtype)),
  index: (x, items) => indexing.index(x, items),
  at: (x, items) => indexing.at(x, items),
  more: disposeIntermediates({
    prod: (x, o) => reductions.prod(x, o as never),
    std: (x, o) => reductions.std(x, o as never),
    var: (x, o) => reductions.var(x, o as never),
    any: (x, o) => reductions.any(x, o as never),
    all: (x, o) => reductions.all(x, o as never),
    argmin: (x, o) => reductions.argmin(x, o as never),
    cumsum: (x, o) => reductions.cumsum(x, o as never),
    cumprod: (x, o) => reductions.cumprod(x, o as never),
    squeeze: (x, o) => manipulation.squeeze(x, o as never),
    ravel: (x) => manipulation.ravel(x),
    round: (x, o) => elementwise.round(x, o as never),
    clip: (x, lo, hi) => elementwise.clip(x, lo as never, hi as never),
    dot: (x, y) => linalg.dot(x, y as never),
    repeat: (x, r, o) => manipulation.repeat(x, r as never, o as never),
    swapaxes: (x, a, b) => manipulation.swapaxes(x, a as number, b as number),
    take: (x, i, o) => indexing.take(x, i as never, o as never),
    copy: (x) => creation.array(x, { copy: true }),
    ptp: (x, o) => statistics.ptp(x, o as never),
    sort: (x, o) => sorting.sort(x, o as never),
    argsort: (x, o) => sorting.argsort(x, o as never),
    diagonal: (x, o) => productsMore.diagonal(x, o as never),
    nonzero: (x, o) => sets.nonzero(x, o as never) as unknown as Array,
    searchsorted: (x, v, o) => sorting.searchsorted(x, v as never, o as never),
  }, 'Array.'),
}, 'Array.'));

