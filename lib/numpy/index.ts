// The `jnp` namespace: every numpy function, the dtype names, and the Array
// methods that forward to them.
import { Array, registerArrayMethods } from '../core/array.js';
import { disposeIntermediates } from '../core/memory.js';
import * as lax from '../lax/ops.js';
import * as creation from './creation.js';
import * as elementwise from './elementwise.js';
import * as manipulation from './manipulation.js';

export * from './creation.js';
export * from './elementwise.js';
export * from './manipulation.js';
export { Array };

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

const notYet = (name: string) => (): never => {
  throw new Error(`jnp.${name} is not available yet`);
};

registerArrayMethods(disposeIntermediates({
  add: elementwise.add,
  subtract: elementwise.subtract,
  multiply: elementwise.multiply,
  divide: elementwise.divide,
  power: elementwise.power,
  negative: elementwise.negative,
  matmul: notYet('matmul'),
  sum: notYet('sum'),
  mean: notYet('mean'),
  max: notYet('max'),
  min: notYet('min'),
  argmax: notYet('argmax'),
  reshape: (x, shape) => manipulation.reshape(x, shape),
  transpose: (x, axes) => manipulation.transpose(x, axes),
  astype: (x, dtype) => lax.convertElementType(x, dtype),
  index: notYet('index'),
  at: notYet('at'),
}));
void creation;
