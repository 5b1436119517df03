// jnp.matmul, dot, vdot, tensordot, einsum and outer against NumPy-computed
// fixtures (values, dtypes, shapes under JAX's promotion), the float64
// reference interpreter on compositions, and bad input.
import test from 'ava';
import fs from 'node:fs';
import { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import * as lax from '../lib/lax/ops.js';
import { array } from '../lib/numpy/creation.js';
import * as la from '../lib/numpy/linalg.js';
import * as r from '../lib/numpy/reductions.js';
import { assertArray, assertThrowsMentioning, checkAgainstReference, randomValues } from './helpers/oracle.js';
import { config } from '../lib/core/config.js';

// Float32 dots at float32 precision, to compare with NumPy's float32 values: a GPU's default rounds their operands to tf32, as
// JAX's does (jax.config's jax_default_matmul_precision, as JAX's own tests set it).
config.update('jaxDefaultMatmulPrecision', 'float32');

interface Spec {
  shape: number[];
  dtype: DType;
  values: number[];
}
interface Case {
  fn: string;
  args: string[];
  options: Record<string, unknown>;
  expected: Spec;
  axes?: number | [number | number[], number | number[]];
  subscripts?: string;
  tol?: number;
}

const fixture = JSON.parse(fs.readFileSync('test/fixtures/numpy-linalg.json', 'utf8')) as { inputs: Record<string, Spec>; cases: Case[] };

function input(name: string): Array {
  const s = fixture.inputs[name]!;
  return lax.reshape(array(s.dtype === 'bool' ? s.values.map((v) => v !== 0) : s.values, { dtype: s.dtype }), s.shape);
}

function run(c: Case): unknown {
  const [a, b] = c.args.map(input) as [Array, Array];
  switch (c.fn) {
    case 'matmul': return la.matmul(a, b, c.options);
    case 'dot': return la.dot(a, b, c.options);
    case 'vdot': return la.vdot(a, b, c.options);
    case 'tensordot': return la.tensordot(a, b, c.axes!, c.options);
    case 'outer': return la.outer(a, b);
    case 'einsum': return la.einsum(c.subscripts!, ...c.args.map(input), c.options);
    default: throw new Error(`unknown fixture function ${c.fn}`);
  }
}

for (const fn of ['matmul', 'dot', 'vdot', 'tensordot', 'einsum', 'outer']) {
  test(`${fn} matches NumPy (values, dtype, shape)`, (t) => {
    const cases = fixture.cases.filter((c) => c.fn === fn);
    t.true(cases.length > 0);
    for (const c of cases) {
      const label = `${fn}(${c.subscripts ? `'${c.subscripts}', ` : ''}${c.args.join(', ')}${c.axes !== undefined ? `, axes=${JSON.stringify(c.axes)}` : ''}, ${JSON.stringify(c.options)})`;
      assertArray(t, run(c), c.expected, { message: label, tol: c.tol });
    }
  });
}

test('JS numbers and nested arrays are promoted as in JAX (weak scalars do not widen)', (t) => {
  const i8 = array([[1, 2], [3, 4]], { dtype: 'int8' });
  assertArray(t, la.dot(3, i8), { shape: [2, 2], dtype: 'int8', values: [3, 6, 9, 12] });
  assertArray(t, la.matmul([[1, 2]], [[3], [4]]), { shape: [1, 1], dtype: 'int32', values: [11] });
  assertArray(t, la.matmul([1.5, 2], [2, 4]), { shape: [], dtype: 'float32', values: [11] });
  const h = array([1, 2], { dtype: 'float16' });
  // a nested JS array is a strong int32 array, and int32 with float16 promotes to float16 in JAX
  assertArray(t, la.einsum('i,i', h, [3, 4]), { shape: [], dtype: 'float16', values: [11] });
  assertArray(t, la.outer(h, 2), { shape: [2, 1], dtype: 'float16', values: [2, 4] });
  t.true(la.dot(2, 3).weakType, 'dot of two weak scalars stays weak');
  t.false(la.dot(2, 3, { preferredElementType: 'int32' }).weakType, 'preferredElementType gives a strong result');
  assertArray(t, la.vdot(array([1, 2], { dtype: 'uint8' }), array([3, 4], { dtype: 'uint8' }), { preferredElementType: 'float32' }), {
    shape: [], dtype: 'float32', values: [11],
  });
  assertArray(t, la.tensordot(i8, i8, 2, { preferredElementType: 'int16' }), { shape: [], dtype: 'int16', values: [30] });
});

test('bool products: 256 true terms are still true (bool accumulates as "any")', (t) => {
  const ones = array(new globalThis.Array<boolean>(256).fill(true));
  assertArray(t, la.dot(ones, ones), { shape: [], dtype: 'bool', values: [1] });
  assertArray(t, la.einsum('i,i->', ones, ones), { shape: [], dtype: 'bool', values: [1] });
  assertArray(t, la.einsum('i->', ones), { shape: [], dtype: 'bool', values: [1] });
});

test('empty operands give zeros or empty results', (t) => {
  const e = lax.reshape(array([], { dtype: 'float32' }), [3, 0]);
  const f = lax.reshape(array([], { dtype: 'float32' }), [0, 2]);
  assertArray(t, la.matmul(e, f), { shape: [3, 2], dtype: 'float32', values: [0, 0, 0, 0, 0, 0] });
  assertArray(t, la.einsum('ij,jk->ik', e, f), { shape: [3, 2], dtype: 'float32', values: [0, 0, 0, 0, 0, 0] });
  assertArray(t, la.matmul(f, lax.reshape(array([], { dtype: 'float32' }), [2, 0])), { shape: [0, 0], dtype: 'float32', values: [] });
  assertArray(t, la.einsum('ii', lax.reshape(array([], { dtype: 'float32' }), [0, 0])), { shape: [], dtype: 'float32', values: [0] });
});

test('compositions agree with the float64 reference interpreter', (t) => {
  const a = lax.reshape(array(randomValues(24, 11)), [2, 3, 4]);
  const b = lax.reshape(array(randomValues(20, 12)), [4, 5]);
  const c = lax.reshape(array(randomValues(15, 13)), [5, 3]);
  checkAgainstReference(t, () => r.mean(la.matmul(a, b), { axis: 0 }));
  checkAgainstReference(t, () => la.einsum('bij,jk,kl->bil', a, b, c));
  checkAgainstReference(t, () => r.logsumexp(la.einsum('...j,jk', a, b), { axis: -1 }));
  checkAgainstReference(t, () => la.tensordot(a, lax.reshape(la.outer(a, [1, 2]), [2, 3, 4, 2]), 3));
  checkAgainstReference(t, () => la.matmul(lax.convertElementType(a, 'bfloat16'), lax.convertElementType(b, 'bfloat16'), { preferredElementType: 'float32' }));
  checkAgainstReference(t, () => la.einsum('iij->j', lax.reshape(array(randomValues(18, 14)), [3, 3, 2])));
});

test('matmul: bad shapes name both shapes', (t) => {
  const a = lax.reshape(array(randomValues(6, 1)), [2, 3]);
  const b = lax.reshape(array(randomValues(8, 2)), [4, 2]);
  assertThrowsMentioning(t, () => la.matmul(a, b), 'jnp.matmul', '[2,3]', '[4,2]', 'not aligned');
  assertThrowsMentioning(t, () => la.matmul(lax.reshape(array(randomValues(18, 1)), [3, 2, 3]), lax.reshape(array(randomValues(36, 1)), [4, 3, 3])), 'jnp.matmul', '[3,2,3]', '[4,3,3]', 'broadcast');
  assertThrowsMentioning(t, () => la.matmul(2, a), 'jnp.matmul', 'operand a', 'at least 1 dimension');
  assertThrowsMentioning(t, () => la.matmul(a, array(3)), 'jnp.matmul', 'operand b');
  assertThrowsMentioning(t, () => la.matmul(a, 'x' as never), 'jnp.matmul');
  assertThrowsMentioning(t, () => la.matmul(a, a, { precison: 'high' } as never), 'jnp.matmul', "unknown option 'precison'");
  assertThrowsMentioning(t, () => la.matmul(a, b, { preferredElementType: 'f32' as never }), 'jnp.matmul', 'preferredElementType', "'f32'");
});

test('dot, vdot, tensordot, outer: bad input', (t) => {
  const a = lax.reshape(array(randomValues(6, 1)), [2, 3]);
  assertThrowsMentioning(t, () => la.dot(a, a), 'jnp.dot', '[2,3]', 'not aligned');
  assertThrowsMentioning(t, () => la.dot(a, [1, 2]), 'jnp.dot', '[2,3]', '[2]');
  assertThrowsMentioning(t, () => la.vdot(a, [1, 2]), 'jnp.vdot', 'same number of elements', '[2,3]', '[2]');
  assertThrowsMentioning(t, () => la.tensordot(a, a, 3), 'jnp.tensordot', 'exceeds', '[2,3]');
  assertThrowsMentioning(t, () => la.tensordot(a, a, -1), 'jnp.tensordot', 'non-negative');
  assertThrowsMentioning(t, () => la.tensordot(a, a, 1), 'jnp.tensordot', 'dim 1 of a (3)', 'dim 0 of b (2)');
  assertThrowsMentioning(t, () => la.tensordot(a, a, [[0, 1], [0]]), 'jnp.tensordot', 'equal length');
  assertThrowsMentioning(t, () => la.tensordot(a, a, [[0], 1] as never), 'jnp.tensordot', 'pair');
  assertThrowsMentioning(t, () => la.tensordot(a, a, [2, 0]), 'jnp.tensordot', 'axes[0] 2', 'out of bounds');
  assertThrowsMentioning(t, () => la.tensordot(a, a, [[0, 0], [0, 1]]), 'jnp.tensordot', 'repeated axis');
  assertThrowsMentioning(t, () => la.tensordot(a, a, 'x' as never), 'jnp.tensordot', 'axes');
  assertThrowsMentioning(t, () => la.outer(a, {} as never), 'jnp.outer');
  assertThrowsMentioning(t, () => la.dot(a, a, { preferred: 'int32' } as never), 'jnp.dot', "unknown option 'preferred'");
});

test('einsum: bad subscripts and operands', (t) => {
  const a = lax.reshape(array(randomValues(6, 1)), [2, 3]);
  const b = lax.reshape(array(randomValues(12, 2)), [4, 3]);
  assertThrowsMentioning(t, () => la.einsum('ij,jk->ik', a, b), 'jnp.einsum', "label 'j'", '3', '4', '[2,3]', '[4,3]');
  assertThrowsMentioning(t, () => la.einsum('ij', a, b), 'jnp.einsum', '1 operand', '2 were given');
  assertThrowsMentioning(t, () => la.einsum('ijk', a), 'jnp.einsum', 'operand 0', '[2,3]', 'name 3');
  assertThrowsMentioning(t, () => la.einsum('i', a), 'jnp.einsum', 'name 1');
  assertThrowsMentioning(t, () => la.einsum('i1', a), 'jnp.einsum', "invalid character '1'");
  assertThrowsMentioning(t, () => la.einsum('ij->k', a), 'jnp.einsum', "output label 'k'");
  assertThrowsMentioning(t, () => la.einsum('ij->ii', a), 'jnp.einsum', "output label 'i' is repeated");
  assertThrowsMentioning(t, () => la.einsum('ij->i->j', a), 'jnp.einsum', "more than one '->'");
  assertThrowsMentioning(t, () => la.einsum('ij-i', a), 'jnp.einsum', "'->'");
  assertThrowsMentioning(t, () => la.einsum('i.j', a), 'jnp.einsum', 'ellipsis');
  assertThrowsMentioning(t, () => la.einsum('......', a), 'jnp.einsum', 'more than one ellipsis');
  assertThrowsMentioning(t, () => la.einsum('ii', a), 'jnp.einsum', "label 'i' is repeated in operand 0", '2 and 3');
  const a223 = lax.reshape(array(randomValues(12, 1)), [2, 2, 3]);
  assertThrowsMentioning(t, () => la.einsum('...i,...i', a223, lax.reshape(array(randomValues(9, 1)), [3, 3])), 'jnp.einsum', 'ellipsis dimension 1', '2', '3');
  // size-1 ellipsis dimensions broadcast
  assertArray(t, la.einsum('...i,...i', lax.reshape(a, [2, 1, 3]), b), { shape: [2, 4], dtype: 'float32', values: r.sum(lax.mul(lax.broadcastInDim(a, [2, 4, 3], [0, 2]), lax.broadcastInDim(b, [2, 4, 3], [1, 2])), { axis: 2 }).dataSync() });
  assertThrowsMentioning(t, () => la.einsum(3 as never, a), 'jnp.einsum', 'subscripts must be a string');
  assertThrowsMentioning(t, () => la.einsum('ij'), 'jnp.einsum', 'at least one operand');
  assertThrowsMentioning(t, () => la.einsum('ij', a, { optimize: 'greedy' } as never), 'jnp.einsum', "unknown option 'optimize'");
});
