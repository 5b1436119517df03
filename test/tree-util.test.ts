// jax.tree / jax.treeUtil, ported from JAX's tests/tree_util_test.py: flatten/unflatten round trips over
// many tree shapes, isLeaf, registered classes (registerPytreeNode, *WithKeys, *Class, registerDataclass,
// registerStatic), key paths and keystr exactly as JAX prints them, flattenUpTo, transpose, reduce, all,
// PyTreeDef printing, registered classes through jit and grad, and the error messages for bad input.
// JS has one sequence type (arrays, JAX's lists), so JAX's tuple cases become arrays.
import test from 'ava';
import { inspect } from 'node:util';
import * as jax from '../lib/index.js';
import { numpy as jnp, tree, treeUtil } from '../lib/index.js';
import type { Array as JaxArray } from '../lib/core/array.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

const { SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey } = treeUtil;

// ---- classes registered once for the whole file (the registry is per process, as JAX's) ----

/** JAX's AnObject: children (x, y), aux z. */
class AnObject {
  constructor(public x: unknown, public y: unknown, public z: unknown) {}
}
treeUtil.registerPytreeNode(AnObject, (o) => [[o.x, o.y], o.z], (z, [x, y]) => new AnObject(x, y, z));

/** JAX's AnObject2: registered with (string) keys. */
class AnObject2 {
  constructor(public x: unknown, public y: unknown, public z: unknown) {}
}
treeUtil.registerPytreeWithKeys(
  AnObject2,
  (o) => [[['x', o.x], ['y', o.y]], o.z],
  (z, [x, y]) => new AnObject2(x, y, z),
);

/** JAX's Special (register_pytree_node_class) and SpecialWithKeys (register_pytree_with_keys_class). */
class Special {
  constructor(public x: unknown, public y: unknown) {}
  treeFlatten(): [unknown[], null] {
    return [[this.x, this.y], null];
  }
  static treeUnflatten(_aux: unknown, [x, y]: unknown[]): Special {
    return new this(x, y);
  }
}
treeUtil.registerPytreeNodeClass(Special);

class SpecialWithKeys extends Special {
  treeFlattenWithKeys(): [[InstanceType<typeof GetAttrKey>, unknown][], null] {
    return [[[new GetAttrKey('x'), this.x], [new GetAttrKey('y'), this.y]], null];
  }
}
treeUtil.registerPytreeWithKeysClass(SpecialWithKeys);

/** JAX's ADataclass / ADataclassWithMeta. */
class ADataclass {
  constructor(public x: unknown, public y: unknown) {}
}
treeUtil.registerDataclass(ADataclass, ['x', 'y'], []);

class ADataclassWithMeta {
  constructor(public x: unknown, public y: unknown, public z: number) {}
  sum(): number {
    return (this.x as number[])[0]! + this.z;
  }
}
treeUtil.registerDataclass(ADataclassWithMeta, ['x', 'y'], ['z']);

/** JAX's StaticInt: a static value; equal when the numbers are. */
class StaticInt {
  constructor(readonly value: number) {}
  equals(other: unknown): boolean {
    return other instanceof StaticInt && other.value === this.value;
  }
  toString(): string {
    return String(this.value);
  }
}
treeUtil.registerStatic(StaticInt);

// ---- the tree shapes of JAX's TREES and their PyTreeDef strings ----

const TREES: [unknown, string][] = [
  [null, 'PyTreeDef(None)'],
  [undefined, 'PyTreeDef(None)'],
  [[null], 'PyTreeDef([None])'],
  [[], 'PyTreeDef([])'],
  [[[]], 'PyTreeDef([[]])'],
  [[1, 2], 'PyTreeDef([*, *])'],
  [[[1, 'foo'], ['bar', [3, null, 7]]], 'PyTreeDef([[*, *], [*, [*, None, *]]])'],
  [[3], 'PyTreeDef([*])'],
  [[new AnObject(3, null, [4, 'foo'])], "PyTreeDef([CustomNode(AnObject[[4, 'foo']], [*, None])])"],
  [[new AnObject2(3, null, [4, 'foo'])], "PyTreeDef([CustomNode(AnObject2[[4, 'foo']], [*, None])])"],
  [new Special(2, 3.5), 'PyTreeDef(CustomNode(Special[None], [*, *]))'],
  [{ a: 1, b: 2 }, "PyTreeDef({'a': *, 'b': *})"],
  [{}, 'PyTreeDef({})'],
  [new StaticInt(1), 'PyTreeDef(CustomNode(StaticInt[1], []))'],
  [new ADataclass([1, 2], 3), 'PyTreeDef(CustomNode(ADataclass[[]], [[*, *], *]))'],
  [new ADataclassWithMeta([1, 2], 3, 4), 'PyTreeDef(CustomNode(ADataclassWithMeta[[4]], [[*, *], *]))'],
  [{ b: [1, { d: null, c: 'x' }], a: undefined }, "PyTreeDef({'a': None, 'b': [*, {'c': *, 'd': None}]})"],
];
const LEAVES: unknown[] = ['foo', 0.1, 1, true, new Map([[1, 2]]), new Date(0), () => 1];

test('flatten then unflatten gives the tree back, for every tree shape and leaf (testRoundtrip)', (t) => {
  for (const [x, s] of TREES) {
    const [ls, def] = tree.flatten(x);
    t.deepEqual(tree.unflatten(def, ls), x, s);
    t.is(def.numLeaves, ls.length, s);
  }
  for (const leaf of LEAVES) {
    const [ls, def] = tree.flatten(leaf);
    t.deepEqual(ls, [leaf]);
    t.is(tree.unflatten(def, ls), leaf);
    t.is(String(def), 'PyTreeDef(*)');
  }
});

test('flattenUpTo of a tree by its own structure gives its leaves (testRoundtripWithFlattenUpTo)', (t) => {
  for (const [x, s] of [...TREES, ...LEAVES.map((l) => [l, String(l)] as [unknown, string])]) {
    const def = tree.structure(x);
    const xs = def.flattenUpTo(x);
    t.deepEqual(xs, tree.leaves(x), s);
    t.deepEqual(def.unflatten(xs), x, s);
  }
});

test('a PyTreeDef prints as JAX prints it, in String, template strings and util.inspect (testStringRepresentation)', (t) => {
  for (const [x, s] of TREES) {
    const def = tree.structure(x);
    t.is(String(def), s);
    t.is(`${def}`, s);
    t.is(inspect(def), s);
  }
  t.is(inspect([tree.structure(1), tree.structure([1])]), '[ PyTreeDef(*), PyTreeDef([*]) ]');
});

test('object keys flatten sorted and unflatten in sorted order (testFlattenDictKeyOrder)', (t) => {
  const [ls, def] = tree.flatten({ b: 2, a: 1, c: { b: 2, a: 1 } });
  t.deepEqual(ls, [1, 2, 1, 2]);
  t.is(String(def), "PyTreeDef({'a': *, 'b': *, 'c': {'a': *, 'b': *}})");
  t.deepEqual(Object.keys(tree.unflatten(def, ls) as object), ['a', 'b', 'c']);
});

test('leaves come in depth-first order (testFlattenOrder)', (t) => {
  t.deepEqual(tree.leaves([0, [[1, 2], 3, [4, [5, 6, 7]]], 8, 9]), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.deepEqual(tree.leaves([0, [[1, [2, 3]], [4, [5, 6, 7]]], 8, 9]), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('null and undefined are None: no leaves, and unflatten gives back the one that was there', (t) => {
  const [ls, def] = tree.flatten({ a: null, b: [undefined, 1] });
  t.deepEqual(ls, [1]);
  const back = tree.unflatten(def, [2]) as { a: unknown; b: unknown[] };
  t.is(back.a, null);
  t.is(back.b[0], undefined);
  t.true('a' in back);
  t.true(tree.structure(null).equals(tree.structure(undefined)));
});

test('isLeaf in leaves and flatten, as an option or bare (testFlattenIsLeaf)', (t) => {
  const x = [[1, 2], [3, 4], [5, 6]];
  const pairs = (v: unknown) => Array.isArray(v) && v.length === 2;
  for (const leafFn of [
    (tr: unknown, isLeaf: (v: unknown) => boolean) => tree.leaves(tr, { isLeaf }),
    (tr: unknown, isLeaf: (v: unknown) => boolean) => tree.flatten(tr, { isLeaf })[0],
    (tr: unknown, isLeaf: (v: unknown) => boolean) => tree.leaves(tr, isLeaf),
    (tr: unknown, isLeaf: (v: unknown) => boolean) => treeUtil.treeLeaves(tr, isLeaf),
  ]) {
    t.deepEqual(leafFn(x, () => false), [1, 2, 3, 4, 5, 6]);
    t.deepEqual(leafFn(x, pairs), x);
    t.deepEqual(leafFn(x, (v) => Array.isArray(v) && v.length === 3), [x]);
    t.deepEqual(leafFn(x, () => true), [x]);
    const y = [[[[1]], [[[2]], { a: [3] }]]];
    t.deepEqual(leafFn(y, (v) => Array.isArray(v) && v.length === 1 && typeof v[0] === 'number'), [[1], [2], [3]]);
  }
  // isLeaf sees None too, so it can keep it as a leaf
  t.deepEqual(tree.leaves([null, 1], { isLeaf: (v) => v === null }), [null, 1]);
});

test('isLeaf in structure sets the number of leaves (testStructureIsLeaf)', (t) => {
  const x = [[1, 2], [3, 4], [5, 6]];
  t.is(tree.structure(x, { isLeaf: () => false }).numLeaves, 6);
  t.is(tree.structure(x, { isLeaf: (v) => Array.isArray(v) && v.length === 2 }).numLeaves, 3);
  t.is(tree.structure(x, { isLeaf: () => true }).numLeaves, 1);
  t.is(String(tree.structure(x, { isLeaf: (v) => Array.isArray(v) && v.length === 2 })), 'PyTreeDef([*, *, *])');
});

test('round trips with isLeaf keep subtrees whole (testRoundtripIsLeaf)', (t) => {
  for (const [x, s] of TREES) {
    const [ls, def] = tree.flatten(x, { isLeaf: (v) => Array.isArray(v) });
    t.deepEqual(tree.unflatten(def, ls), x, s);
  }
});

test('map gives f the matching subtrees of the other trees, which may be deeper (testTreeMap)', (t) => {
  const x = [[1, 2], [3, 4, 5]];
  const y = [[[3], null], [{ foo: 'bar' }, 7, [5, 6]]];
  t.deepEqual(tree.map((...xs: unknown[]) => xs, x, y), [[[1, [3]], [2, null]], [[3, { foo: 'bar' }], [4, 7], [5, [5, 6]]]]);
  t.deepEqual(treeUtil.treeMap((a: number, b: number) => a + b, { a: 1, b: [2] }, { a: 10, b: [20] }), { a: 11, b: [22] });
});

test('map takes a trailing { isLeaf } as options, not as a tree (testTreeMapWithIsLeafArgument)', (t) => {
  const x = [[1, 2], [3, 4, 5]];
  const y = [[[3], null], [{ foo: 'bar' }, 7, [5, 6]]];
  const isLeaf = (n: unknown) => Array.isArray(n) && n.length === 3;
  t.deepEqual(tree.map((...xs: unknown[]) => xs, x, y, { isLeaf }), [[[1, [3]], [2, null]], [[3, 4, 5], [{ foo: 'bar' }, 7, [5, 6]]]]);
  t.deepEqual(tree.map((v: unknown) => [v], [[1], 2], { isLeaf: (v: unknown) => Array.isArray(v) && v.length === 1 }), [[[1]], [2]]);
  // a tree that looks like options is passed as a tree by following it with explicit options
  const f = () => 1;
  const lookalike = { isLeaf: f };
  t.deepEqual(tree.map((a: unknown, b: unknown) => [a, b], { isLeaf: 0 }, lookalike, { isLeaf: undefined }), { isLeaf: [0, f] });
});

test('flattenUpTo gives the subtrees at the structure\'s leaves (testFlattenUpTo)', (t) => {
  const cases: [unknown, unknown, unknown[]][] = [
    [[[1, 2], null, [3, 7]], [[{ foo: 7 }, [3, 4]], null, [[11, 9], null]], [{ foo: 7 }, [3, 4], [11, 9], null]],
    [[1], [{ a: 7 }], [{ a: 7 }]],
    [[1], [[7]], [[7]]],
    [[1, 2], [{ a: 7 }, { a: 8 }], [{ a: 7 }, { a: 8 }]],
    [{ a: 1, b: [2, 3] }, { a: [7], b: [[8], [9]] }, [[7], [8], [9]]],
    [{ a: 1 }, { a: { a: 7 } }, [{ a: 7 }]],
    [null, null, []],
    [new AnObject(1, 2, 'z'), new AnObject([3], { b: 4 }, 'z'), [[3], { b: 4 }]],
  ];
  for (const [x, xs, expected] of cases) t.deepEqual(tree.structure(x).flattenUpTo(xs), expected);
});

test('flattenUpTo errors read as JAX\'s (testFlattenUpToErrors)', (t) => {
  const cases: [unknown, unknown, string][] = [
    [[1, 2], [7], 'List arity mismatch: 1 != 2; list: [7].'],
    [{ a: 1 }, { a: 7, b: 8 }, "Dict key mismatch; expected keys: ['a']; dict: {'a': 7, 'b': 8}."],
    [{ a: 1 }, { b: 7 }, "Dict key mismatch; expected keys: ['a']; dict: {'b': 7}."],
    [[1], { a: 7 }, "Expected list, got {'a': 7}."],
    [{ a: 1 }, [7], 'Expected dict, got [7].'],
    [[[1]], [7], 'Expected list, got 7.'],
    [[{ a: 1 }], [[7]], 'Expected dict, got [7].'],
    [{ a: [1] }, { a: 'x' }, "Expected list, got 'x'."],
    [{ a: { a: 1 } }, { a: { b: 7 } }, "Dict key mismatch; expected keys: ['a']; dict: {'b': 7}."],
    [null, [2], 'Expected None, got [2].'],
    [[new AnObject([1], [2], 'z')], [[[1], [2], 'z']], "Custom node type mismatch; expected type: AnObject; value: [[1], [2], 'z']."],
    [new AnObject(1, 2, 'z'), new AnObject(1, 2, 'w'), 'Mismatch custom node data: z != w; value: <AnObject object>.'],
  ];
  for (const [x, xs, message] of cases) {
    const error = t.throws(() => tree.structure(x).flattenUpTo(xs), { instanceOf: jax.ValueError });
    t.is(error?.message, `PyTreeDef.flattenUpTo: ${message}`);
  }
});

test('map names the argument whose structure does not match', (t) => {
  const error = t.throws(() => tree.map((a: number) => a, [1, 2], [1], [1]), { instanceOf: jax.ValueError });
  t.is(error?.message, "tree.map: rest[0] must have the first tree's structure PyTreeDef([*, *]) as a prefix: List arity mismatch: 1 != 2; list: [1].");
  assertThrowsMentioning(t, () => tree.map((a: number) => a, { a: 1 }, { a: 1 }, { b: 1 }), 'tree.map', 'rest[1]', "expected keys: ['a']");
});

test('reduce folds the leaves, with isLeaf and an initializer (testTreeReduceWithIsLeafArgument)', (t) => {
  const isPair = (l: unknown) => Array.isArray(l) && l.length === 2 && typeof l[0] === 'number';
  t.deepEqual(tree.reduce((a: number[], b: number[]) => [...a, ...b], [[1, 2], [[3, 4], [5, 6]]], { isLeaf: isPair }), [1, 2, 3, 4, 5, 6]);
  t.is(tree.reduce((a: number, b: number) => a + b, [1, { x: 2, y: [3] }]), 6);
  t.is(tree.reduce((a: number, b: number) => a - b, [1, 2], 10), 7);
  t.is(tree.reduce((a: number, b: number) => a + b, [], 10), 10);
  t.is(tree.reduce((a: number, b: unknown) => a + (b as number[]).length, [[1, 2], [3, 4]], 0, { isLeaf: isPair }), 4);
  t.is(treeUtil.treeReduce((a: string, b: string) => a + b, { b: 'y', a: 'x' }), 'xy');
  assertThrowsMentioning(t, () => tree.reduce((a: number) => a, [null, {}]), 'tree.reduce', 'no leaves', 'no initializer', 'PyTreeDef([None, {}])');
});

test('all is Python\'s all() over the leaves', (t) => {
  t.true(tree.all([1, { a: true, b: 'x' }, null]));
  t.false(tree.all([1, { a: 0 }]));
  t.false(tree.all({ a: '' }));
  t.true(tree.all([]));
  t.true(tree.all([NaN]), 'NaN is truthy in Python');
  t.true(tree.all([0, 1], { isLeaf: (x) => Array.isArray(x) }), 'a whole array leaf is truthy');
  t.true(treeUtil.treeAll([new Map()]));
  const one = jnp.array(1);
  const zero = jnp.array([0]);
  const many = jnp.ones([3]);
  t.true(tree.all([one]));
  t.false(tree.all([one, zero]));
  assertThrowsMentioning(t, () => tree.all([many]), 'tree.all', 'leaf 0', 'shape [3]', 'ambiguous');
  for (const a of [one, zero, many]) a.dispose();
});

test('compose puts the inner structure at each leaf (testCompose)', (t) => {
  const inner = tree.structure(['*', '*', '*']);
  for (const [x, s] of TREES) {
    const def = tree.structure(x);
    const composed = def.compose(inner);
    const expectedLeaves = def.numLeaves * inner.numLeaves;
    t.is(composed.numLeaves, expectedLeaves, s);
    t.is(composed.numNodes, def.numNodes - def.numLeaves + inner.numNodes * def.numLeaves, s);
    const ones = new Array(expectedLeaves).fill(1);
    t.deepEqual(tree.leaves(tree.unflatten(composed, ones)), ones, s);
  }
});

test('transpose turns a tree of lists into a list of trees (testTranspose, testTransposeInferInnerTreedef)', (t) => {
  for (const [x, s] of TREES) {
    const outer = tree.structure(x);
    if (outer.numLeaves === 0) continue;
    const nested = tree.map((v: unknown) => [v, v, v], x);
    t.deepEqual(tree.transpose(outer, tree.structure([1, 1, 1]), nested), [x, x, x], s);
    const nested2 = tree.map((v: unknown) => [v, { a: v }, [v]], x);
    t.deepEqual(treeUtil.treeTranspose(outer, null, nested2), [x, { a: x }, [x]], s);
  }
  const outer = tree.structure([1, 2]);
  t.deepEqual(tree.transpose(outer, tree.structure({ a: 1, b: 1 }), [{ a: 1, b: 2 }, { a: 3, b: 4 }]), { a: [1, 3], b: [2, 4] });
});

test('transpose refuses a tree of another structure with "Mismatch" (testTransposeMismatch*)', (t) => {
  const x = { a: [1, 2], b: [3, 4] };
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 1, b: 2, c: 3 }, [1, 2], x],
    [{ a: 1, b: 2 }, [1, 2, 3], x],
    [['*', '*', '*'], ['*', '*'], [[1, 2], [3, 4], [5, 6, 7]]],
    [['*', '*', '*'], ['*', '*'], [1, [2, [3, [4, [5, [6]]]]]]],
  ];
  for (const [o, i, v] of cases) {
    const error = t.throws(() => tree.transpose(tree.structure(o), tree.structure(i), v), { instanceOf: TypeError });
    t.true(error!.message.startsWith('tree.transpose: Mismatch\n'), error!.message);
  }
  const error = t.throws(() => tree.transpose(tree.structure([1, 2]), tree.structure({ a: 1 }), [{ a: 1 }, { b: 2 }]));
  t.is(error?.message, "tree.transpose: Mismatch\nPyTreeDef([{'a': *}, {'b': *}])\n != \nPyTreeDef([{'a': *}, {'a': *}])");
  assertThrowsMentioning(t, () => tree.transpose([1, 2] as never, null, [1, 2]), 'tree.transpose', 'outerTreedef', 'PyTreeDef', '[1,2]');
});

test('numNodes, treedefChildren, treedefIsLeaf and equals (testChildren)', (t) => {
  const def = tree.structure([[1, 2, 3], [4]]);
  t.is(def.numNodes, 7);
  t.is(tree.structure([null, 1]).numNodes, 3);
  const children = treeUtil.treedefChildren(def);
  t.is(children.length, 2);
  t.true(children[0]!.equals(tree.structure([0, 0, 0])));
  t.true(children[1]!.equals(tree.structure([7])));
  t.false(children[1]!.equals(tree.structure([7, 8])));
  t.false(tree.structure({ a: 1 }).equals(tree.structure({ b: 1 })));
  t.false(tree.structure([1]).equals(tree.structure({ 0: 1 })));
  t.false(tree.structure(new AnObject(1, 2, 'z')).equals(tree.structure(new AnObject(1, 2, 'w'))));
  t.true(tree.structure(new AnObject(1, 2, ['z'])).equals(tree.structure(new AnObject(5, 6, ['z']))));
  t.deepEqual(treeUtil.treedefChildren(tree.structure(1)), []);
  t.true(treeUtil.treedefIsLeaf(tree.structure(1)));
  t.true(treeUtil.treedefIsLeaf(tree.structure(null)));
  t.false(treeUtil.treedefIsLeaf(tree.structure([1])));
});

test('registered classes flatten to their children and rebuild with their aux data', (t) => {
  const x = [new AnObject(jnp.array(1), { w: 2 }, 'meta'), 3];
  const [ls, def] = tree.flatten(x);
  t.is(ls.length, 3);
  t.is(ls[1], 2);
  const back = tree.unflatten(def, ['a', 'b', 'c']) as [AnObject, string];
  t.true(back[0] instanceof AnObject);
  t.deepEqual([back[0].x, back[0].y, back[0].z, back[1]], ['a', { w: 'b' }, 'meta', 'c']);
  const doubled = tree.map((v: number) => v * 2, new Special(1, [2, 3])) as unknown as Special;
  t.true(doubled instanceof Special);
  t.deepEqual([doubled.x, doubled.y], [2, [4, 6]]);
  (ls[0] as unknown as JaxArray).dispose();
});

test('a subclass of a registered class is a leaf, as in JAX (registration is by exact class)', (t) => {
  class Sub extends AnObject {}
  const s = new Sub(1, 2, 3);
  t.deepEqual(tree.leaves([s]), [s]);
  t.is(String(tree.structure(new SpecialWithKeys(1, 2))), 'PyTreeDef(CustomNode(SpecialWithKeys[None], [*, *]))');
});

test('registerDataclass rebuilds an instance of the class with its data and meta fields', (t) => {
  const d = new ADataclassWithMeta([1, 2], 3, 4);
  const [ls, def] = tree.flatten(d);
  t.deepEqual(ls, [1, 2, 3]);
  const back = tree.unflatten(def, [10, 20, 30]) as unknown as ADataclassWithMeta;
  t.true(back instanceof ADataclassWithMeta);
  t.deepEqual([back.x, back.y, back.z], [[10, 20], 30, 4]);
  t.is(back.sum(), 14);
  t.deepEqual(
    tree.leavesWithPath(d).map(([p, v]) => `${tree.keystr(p)}=${v}`),
    ['.x[0]=1', '.x[1]=2', '.y=3'],
  );
  t.false(tree.structure(d).equals(tree.structure(new ADataclassWithMeta([1, 2], 3, 5))));
});

test('registerStatic: no leaves, the instance kept whole and compared with equals', (t) => {
  const s = new StaticInt(7);
  const [ls, def] = tree.flatten({ s, v: 1 });
  t.deepEqual(ls, [1]);
  t.is((tree.unflatten(def, [2]) as unknown as { s: StaticInt }).s, s);
  t.true(tree.structure(new StaticInt(7)).equals(tree.structure(new StaticInt(7))));
  t.false(tree.structure(new StaticInt(7)).equals(tree.structure(new StaticInt(8))));
  t.deepEqual(tree.leavesWithPath([s, 1]).map(([p]) => tree.keystr(p)), ['[1]']);
});

test('registered classes go through jit, grad and vmap, and static data keys jit\'s cache', (t) => {
  let traces = 0;
  const f = jax.jit((p: ADataclassWithMeta) => {
    traces++;
    return jnp.multiply(jnp.add((p.x as JaxArray[])[0]!, p.y as JaxArray), p.z);
  });
  const a = jnp.array([1, 2]);
  const b = jnp.array([3, 4]);
  const r1 = f(new ADataclassWithMeta([a], b, 2));
  const r2 = f(new ADataclassWithMeta([b], a, 2));
  t.deepEqual(Array.from(r1.dataSync()), [8, 12]);
  t.deepEqual(Array.from(r2.dataSync()), [8, 12]);
  t.is(traces, 1, 'same meta field: one trace');
  const r3 = f(new ADataclassWithMeta([a], b, 3));
  t.deepEqual(Array.from(r3.dataSync()), [12, 18]);
  t.is(traces, 2, 'another meta field: traced again');

  const g = jax.grad((p: AnObject) => jnp.sum(jnp.multiply(p.x as JaxArray, p.y as JaxArray)))(new AnObject(a, b, 'aux')) as AnObject;
  t.true(g instanceof AnObject);
  t.is(g.z, 'aux');
  t.deepEqual(Array.from((g.x as JaxArray).dataSync()), [3, 4]);
  t.deepEqual(Array.from((g.y as JaxArray).dataSync()), [1, 2]);

  const v = jax.vmap((p: Special) => jnp.add(p.x as JaxArray, p.y as JaxArray))(new Special(a, b)) as JaxArray;
  t.deepEqual(Array.from(v.dataSync()), [4, 6]);
  for (const arr of [a, b, r1, r2, r3, g.x as JaxArray, g.y as JaxArray, v]) arr.dispose();
});

test('flattenWithPath gives JAX\'s keys and the same structure as flatten (testTreeFlattenWithPathBuiltin)', (t) => {
  const x = [1, { a: 2, b: 3 }];
  const [kls, def] = tree.flattenWithPath(x);
  t.deepEqual(kls, [
    [[new SequenceKey(0)], 1],
    [[new SequenceKey(1), new DictKey('a')], 2],
    [[new SequenceKey(1), new DictKey('b')], 3],
  ]);
  t.true(def.equals(tree.structure(x)));
  const [kls2] = treeUtil.treeFlattenWithPath(new AnObject(1, [2], 'z'));
  t.deepEqual(kls2.map(([p]) => p), [[new FlattenedIndexKey(0)], [new FlattenedIndexKey(1), new SequenceKey(0)]]);
});

test('paths through classes registered with keys (testTreeFlattenWithPathCustom)', (t) => {
  const x = [new AnObject2(12, { foo: new SpecialWithKeys(2, 3), bar: null }, 'constantdef'), 5];
  const [kls] = tree.flattenWithPath(x);
  t.deepEqual(kls, [
    [[new SequenceKey(0), 'x'], 12],
    [[new SequenceKey(0), 'y', new DictKey('foo'), new GetAttrKey('x')], 2],
    [[new SequenceKey(0), 'y', new DictKey('foo'), new GetAttrKey('y')], 3],
    [[new SequenceKey(1)], 5],
  ]);
  t.deepEqual(kls.map(([p]) => tree.keystr(p)), ['[0]x', "[0]y['foo'].x", "[0]y['foo'].y", '[1]']);
  // a class registered without keys is still a node, not a leaf (testPyTreeWithoutKeysIsntTreatedAsLeaf)
  t.is(tree.flattenWithPath(new Special([1, 2], [3, 4]))[0].length, 4);
});

test('leavesWithPath and mapWithPath (testTreeLeavesWithPath, testTreeMapWithPath*)', (t) => {
  const keys = [...'abcdefghij'];
  const x = [Object.fromEntries(keys.map((k, i) => [k, i]))];
  t.deepEqual(tree.leavesWithPath(x), keys.map((k, i) => [[new SequenceKey(0), new DictKey(k)], i]));
  const zeros = tree.mapWithPath((kp, v: number) => v - keys.indexOf((kp[1] as InstanceType<typeof DictKey>).key as string) + (kp[0] as InstanceType<typeof SequenceKey>).idx, x);
  t.deepEqual(zeros, [Object.fromEntries(keys.map((k) => [k, 0]))]);
  const t1 = [new AnObject2(12, { cin: [1, 4, 10], bar: null }, 'constantdef'), 5];
  const t2 = [new AnObject2(2, { cin: [2, 2, 2], bar: null }, 'constantdef'), 2];
  t.deepEqual(
    treeUtil.treeMapWithPath((_kp, a: number, b: number) => a + b, t1, t2),
    tree.map((a: number) => a + 2, t1),
  );
  t.deepEqual(treeUtil.treeLeavesWithPath({ a: [1] }), [[[new DictKey('a'), new SequenceKey(0)], 1]]);
});

test('keystr prints paths as JAX does, and simply with a separator (testKeyStr)', (t) => {
  const x = [new ADataclass(12, { cin: [1, 4, 10], bar: null }), jnp.arange(5)];
  const [kls] = tree.flattenWithPath(x);
  t.deepEqual(kls.map(([p, v]) => `${tree.keystr(p)}: ${v}`), [
    '[0].x: 12',
    "[0].y['cin'][0]: 1",
    "[0].y['cin'][1]: 4",
    "[0].y['cin'][2]: 10",
    '[1]: [0 1 2 3 4]',
  ]);
  t.deepEqual(kls.map(([p, v]) => `${treeUtil.keystr(p, { simple: true, separator: '/' })}: ${v}`), [
    '0/x: 12',
    '0/y/cin/0: 1',
    '0/y/cin/1: 4',
    '0/y/cin/2: 10',
    '1: [0 1 2 3 4]',
  ]);
  t.is(tree.keystr([0, 1, 'a', 'b']), '01ab');
  t.is(tree.keystr([new DictKey("it's")]), '["it\'s"]');
  t.is(tree.keystr([]), '');
  (x[1] as JaxArray).dispose();
});

test('key entries print and inspect as JAX\'s (TreeKeyTest.testBasic)', (t) => {
  t.is(String(new SequenceKey(1)), '[1]');
  t.is(String(new DictKey('foo')), "['foo']");
  t.is(String(new GetAttrKey('bar')), '.bar');
  t.is(String(new FlattenedIndexKey(1)), '[<flat index 1>]');
  t.deepEqual([new SequenceKey(1), new DictKey('foo'), new GetAttrKey('bar'), new FlattenedIndexKey(1)].map((k) => inspect(k)),
    ['SequenceKey(idx=1)', "DictKey(key='foo')", "GetAttrKey(name='bar')", 'FlattenedIndexKey(key=1)']);
  t.is(new SequenceKey(1).idx, 1);
  t.is(new DictKey('foo').key, 'foo');
  t.is(new GetAttrKey('bar').name, 'bar');
  t.notDeepEqual(new FlattenedIndexKey(1), new SequenceKey(1) as unknown);
});

test('isLeaf may take the path (testTreeFlattenWithPathWithIsLeafWithPathArgument)', (t) => {
  const x = [[1, 2], [3, { 4: 4, 5: 5 }]];
  const [kls] = tree.flattenWithPath(x, { isLeaf: (kp: readonly unknown[]) => kp.length >= 2, isLeafTakesPath: true });
  t.deepEqual(kls, [
    [[new SequenceKey(0), new SequenceKey(0)], 1],
    [[new SequenceKey(0), new SequenceKey(1)], 2],
    [[new SequenceKey(1), new SequenceKey(0)], 3],
    [[new SequenceKey(1), new SequenceKey(1)], { 4: 4, 5: 5 }],
  ]);
  const y = [[[3], 0], [[0], 7, [5, 6]]];
  const out = tree.mapWithPath(
    (kp, ...xs: unknown[]) => [(kp[0] as InstanceType<typeof SequenceKey>).idx, ...xs],
    [[1, 2], [3, 4, 5]],
    y,
    { isLeaf: (_kp: unknown, n: unknown) => Array.isArray(n) && n.length === 3, isLeafTakesPath: true },
  );
  t.deepEqual(out, [[[0, 1, [3]], [0, 2, 0]], [1, [3, 4, 5], [[0], 7, [5, 6]]]]);
});

test('allLeaves (testAllLeavesWithTrees, testAllLeavesWithLeaves)', (t) => {
  for (const [x, s] of TREES) {
    t.true(treeUtil.allLeaves(tree.leaves(x)), s);
    t.false(treeUtil.allLeaves([x]), s);
  }
  for (const leaf of LEAVES) t.true(treeUtil.allLeaves([leaf]));
  t.true(treeUtil.allLeaves([[1], [2]], { isLeaf: (v) => Array.isArray(v) && v.length === 1 }));
});

test('registration refuses bad classes and functions, naming the function and the argument', (t) => {
  class Fresh {}
  assertThrowsMentioning(t, () => treeUtil.registerPytreeNode(AnObject, () => [[], null], () => new AnObject(1, 2, 3)), 'registerPytreeNode', 'Duplicate', 'AnObject');
  assertThrowsMentioning(t, () => treeUtil.registerPytreeNode(Array, () => [[], null], () => []), 'registerPytreeNode', 'Array', 'already a pytree node');
  assertThrowsMentioning(t, () => treeUtil.registerPytreeNode(3 as never, () => [[], null], () => 0), 'registerPytreeNode', 'nodetype', 'class', '3');
  assertThrowsMentioning(t, () => treeUtil.registerPytreeNode(Fresh, 'f' as never, () => new Fresh()), 'registerPytreeNode', 'flatten', "'f'");
  assertThrowsMentioning(t, () => treeUtil.registerDataclass(Fresh, ['a'], ['a']), 'registerDataclass', "'a'", 'both');
  assertThrowsMentioning(t, () => treeUtil.registerPytreeNodeClass(Fresh as never), 'registerPytreeNodeClass', 'Fresh', 'treeFlatten');
  // Fresh was never registered by the failed calls
  const f = new Fresh();
  t.deepEqual(tree.leaves([f]), [f]);
});

test('a flatten that returns the wrong thing is named in the error (testBadFlatten*)', (t) => {
  class BadNonPair {}
  class BadArity {}
  class BadChildren {}
  treeUtil.registerPytreeNode(BadNonPair, () => 'hello' as never, () => new BadNonPair());
  treeUtil.registerPytreeNode(BadArity, () => [2, 3, 4] as never, () => new BadArity());
  treeUtil.registerPytreeNode(BadChildren, () => [7, 7] as never, () => new BadChildren());
  const message = (x: unknown) => t.throws(() => tree.flatten(x), { instanceOf: jax.ValueError })?.message;
  t.is(message(new BadNonPair()), "tree.flatten: the flatten function registered for BadNonPair should return a [children, auxData] pair, got 'hello'");
  t.is(message(new BadArity()), 'tree.flatten: the flatten function registered for BadArity should return a [children, auxData] pair, got [2, 3, 4]');
  t.is(message(new BadChildren()), 'tree.flatten: the flatten function registered for BadChildren should return a [children, auxData] pair where children is an array, got [7, 7]');
  assertThrowsMentioning(t, () => tree.leaves([new BadArity()]), 'tree.leaves', 'BadArity');
});

test('bad arguments get errors naming the function, the argument and the value', (t) => {
  const def = tree.structure([1, 2]);
  assertThrowsMentioning(t, () => tree.leaves([1], { isleaf: () => true } as never), 'tree.leaves', "unknown option 'isleaf'", "'isLeaf'");
  assertThrowsMentioning(t, () => tree.flatten([1], { isLeaf: 3 } as never), 'tree.flatten', 'isLeaf', 'function', '3');
  assertThrowsMentioning(t, () => tree.structure([1], 'x' as never), 'tree.structure', 'options', "'x'");
  assertThrowsMentioning(t, () => tree.map(3 as never, [1]), 'tree.map', 'f', 'function', '3');
  assertThrowsMentioning(t, () => tree.unflatten([1, 2] as never, [1, 2]), 'tree.unflatten', 'treedef', 'PyTreeDef', '[1,2]');
  assertThrowsMentioning(t, () => tree.unflatten(def, 5 as never), 'tree.unflatten', 'leaves', '5');
  assertThrowsMentioning(t, () => tree.unflatten(def, [1]), 'tree.unflatten', 'Too few leaves for PyTreeDef([*, *])', '2 leaves', 'got 1');
  assertThrowsMentioning(t, () => def.unflatten([1, 2, 3]), 'PyTreeDef.unflatten', 'Too many leaves', 'got 3');
  assertThrowsMentioning(t, () => (tree.reduce as (...args: unknown[]) => unknown)((a: number) => a, [1], 0, {}, 1), 'tree.reduce', '5 arguments');
  assertThrowsMentioning(t, () => tree.keystr('a' as never), 'tree.keystr', 'path', "'a'");
  assertThrowsMentioning(t, () => tree.keystr([], { simple: 1 } as never), 'tree.keystr', 'simple', 'boolean');
  assertThrowsMentioning(t, () => tree.keystr([], { sep: '/' } as never), 'tree.keystr', "unknown option 'sep'");
  assertThrowsMentioning(t, () => tree.flattenWithPath([1], { isLeafTakesPath: 'yes' } as never), 'tree.flattenWithPath', 'isLeafTakesPath', 'boolean');
  assertThrowsMentioning(t, () => tree.transpose(def, null, [1]), 'tree.transpose', 'List arity mismatch');
  assertThrowsMentioning(t, () => tree.transpose(tree.structure([]), null, []), 'tree.transpose', 'no leaves');
  assertThrowsMentioning(t, () => def.compose({} as never), 'PyTreeDef.compose', 'inner', 'PyTreeDef');
});
