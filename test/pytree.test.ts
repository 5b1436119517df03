// jax.tree: flatten/unflatten round trips, sorted object keys, None leaves, map with several trees.
import test from 'ava';
import * as jax from '../lib/index.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

test('flatten orders object keys like JAX (sorted) and drops null/undefined', (t) => {
  const [leaves, def] = jax.tree.flatten({ b: 1, a: [2, null, { z: 3, y: 4 }], c: undefined });
  t.deepEqual(leaves, [2, 4, 3, 1]);
  t.is(jax.tree.treeDefToString(def), '{a: [*, None, {y: *, z: *}], b: *, c: None}');
  t.deepEqual(jax.tree.unflatten(def, [20, 40, 30, 10]), { a: [20, null, { y: 40, z: 30 }], b: 10, c: undefined });
});

test('leaves of arrays are Arrays', (t) => {
  const x = jax.numpy.ones([2]);
  t.deepEqual(jax.tree.leaves([x, { w: x }]), [x, x]);
  x.dispose();
});

test('map applies over several trees of the same structure', (t) => {
  t.deepEqual(jax.tree.map((a: number, b: unknown) => a + (b as number), [1, { x: 2 }], [10, { x: 20 }]), [11, { x: 22 }]);
  assertThrowsMentioning(t, () => jax.tree.map((a: number) => a, [1, 2], [1]), 'tree.map', 'structure');
});

test('unflatten checks the leaf count', (t) => {
  const def = jax.tree.structure([1, 2]);
  assertThrowsMentioning(t, () => jax.tree.unflatten(def, [1]), 'tree.unflatten', '2 leaves', 'got 1');
});
