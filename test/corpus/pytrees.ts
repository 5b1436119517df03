// Pytrees: JAX 101's "Pytrees" (docs/pytrees.md; earlier jax-101/05.1-pytrees)
// and the pytree part of "Key concepts". JS containers stand for Python's:
// arrays for lists and tuples, plain objects for dicts, null for None
// (API.md, "Pytrees"). Anything else, like a string or a class instance that
// is not registered, is a leaf, as in JAX.
import * as jax from '../../lib/index.js';
import { expectArray, snippet, type Snippet } from './snippet.js';

const { numpy: jnp } = jax;
const SRC = 'Pytrees';
const KEY = 'Key concepts';

export const snippets: Snippet[] = [
  snippet(`${SRC} › What is a pytree?`, 'jax.tree.leaves of five example trees: 3, 3, 5, 3 and 1 leaves', (t) => {
    const anObject = new (class Thing {})(); // Python's object(): not a registered container, so a leaf
    const exampleTrees: unknown[] = [
      [1, 'a', anObject],
      [1, [2, 3], []], // (1, (2, 3), ())
      [1, { k1: 2, k2: [3, 4] }, 5],
      { a: 2, b: [2, 3] },
      jnp.array([1, 2, 3], { dtype: 'int32' }),
    ];
    const leaves = exampleTrees.map((tree) => jax.tree.leaves(tree as jax.tree.PyTree));
    t.deepEqual(leaves.map((l) => l.length), [3, 3, 5, 3, 1]);
    t.deepEqual(leaves[0], [1, 'a', anObject]);
    t.deepEqual(leaves[1], [1, 2, 3]);
    t.deepEqual(leaves[2], [1, 2, 3, 4, 5]);
    t.deepEqual(leaves[3], [2, 2, 3]);
    t.is(leaves[4]![0], exampleTrees[4]);
  }),

  snippet(`${SRC} › Common function: jax.tree.map`, 'jax.tree.map(lambda x: x*2, list_of_lists)', (t) => {
    const listOfLists = [[1, 2, 3], [1, 2], [1, 2, 3, 4]];
    t.deepEqual(jax.tree.map((x: number) => x * 2, listOfLists), [[2, 4, 6], [2, 4], [2, 4, 6, 8]]);
  }),

  snippet(`${SRC} › Common function: jax.tree.map`, 'an N-ary jax.tree.map(lambda x, y: x+y, ...)', (t) => {
    const listOfLists = [[1, 2, 3], [1, 2], [1, 2, 3, 4]];
    const anotherListOfLists = listOfLists;
    t.deepEqual(jax.tree.map((x: number, y: number) => x + y, listOfLists, anotherListOfLists), [[2, 4, 6], [2, 4], [2, 4, 6, 8]]);
  }),

  snippet(`${SRC} › Example of jax.tree.map with ML model parameters`, 'the shapes of init_mlp_params([1, 128, 128, 1])', (t) => {
    const initMlpParams = (layerWidths: number[]) => {
      const params: { weights: jax.Array; biases: jax.Array }[] = [];
      for (let i = 0; i + 1 < layerWidths.length; i++) {
        const [nIn, nOut] = [layerWidths[i]!, layerWidths[i + 1]!];
        // the page draws weights with np.random.normal; only the shapes are printed
        params.push({ weights: jnp.multiply(jnp.ones([nIn, nOut]), Math.sqrt(2 / nIn)), biases: jnp.ones([nOut]) });
      }
      return params;
    };
    const params = initMlpParams([1, 128, 128, 1]);
    const shapes = jax.tree.map((x: jax.Array) => x.shape, params);
    t.deepEqual(shapes, [
      { biases: [128], weights: [1, 128] },
      { biases: [128], weights: [128, 128] },
      { biases: [1], weights: [128, 1] },
    ]);
  }),

  snippet(`${SRC} › Viewing the pytree definition of an object`, 'tree_structure(object) is PyTreeDef(*)', (t) => {
    t.is(String(jax.tree.structure(new (class Thing {})())), 'PyTreeDef(*)');
  }),

  snippet(`${SRC} › Explicit key paths`, 'tree_flatten_with_path and keystr: tree[0], tree[1][\'k1\'], ..., tree[2].name', (t) => {
    // namedtuple ATuple('foo') has a GetAttrKey path `.name`; a JS object's key prints as a dict key ['name']
    const tree = [1, { k1: 2, k2: [3, 4] }, { name: 'foo' }];
    const [flattened] = jax.tree.flattenWithPath(tree as jax.tree.PyTree);
    const lines = flattened.map(([keyPath, value]) => `Value of tree${jax.tree.keystr(keyPath)}: ${value}`);
    t.deepEqual(lines, [
      'Value of tree[0]: 1',
      "Value of tree[1]['k1']: 2",
      "Value of tree[1]['k2'][0]: 3",
      "Value of tree[1]['k2'][1]: 4",
      "Value of tree[2]['name']: foo",
    ]);
  }),

  snippet(`${SRC} › Mistaking pytree nodes for leaves`, 'jax.tree.map(jnp.ones, shapes) maps over the shape entries', (t) => {
    const aTree = [jnp.zeros([2, 3]), jnp.zeros([3, 4])];
    const shapes = jax.tree.map((x: jax.Array) => x.shape, aTree); // [[2, 3], [3, 4]]: nodes, not leaves
    const ones = jax.tree.map((n: number) => jnp.ones(n), shapes) as jax.Array[][];
    // [(Array([1., 1.]), Array([1., 1., 1.])), (Array([1., 1., 1.]), Array([1., 1., 1., 1.]))]
    expectArray(t, ones[0]![0], [1, 1], { dtype: 'float32' });
    expectArray(t, ones[0]![1], [1, 1, 1], { dtype: 'float32' });
    expectArray(t, ones[1]![0], [1, 1, 1], { dtype: 'float32' });
    expectArray(t, ones[1]![1], [1, 1, 1, 1], { dtype: 'float32' });
  }),

  snippet(`${SRC} › Handling of None by jax.tree_util`, 'None is an empty node: [] leaves; with is_leaf, [None, None, None]', (t) => {
    t.deepEqual(jax.tree.leaves([null, null, null]), []);
    t.deepEqual(jax.tree.leaves([null, null, null], { isLeaf: (x: unknown) => x === null }), [null, null, null]);
  }),

  snippet(`${SRC} › Transposing pytrees`, 'tree_transpose with jax.tree.map: {"obs": [3, 4], "t": [1, 2]}', (t) => {
    const treeTranspose = (listOfTrees: unknown[]) =>
      jax.tree.map((...xs: unknown[]) => xs, listOfTrees[0] as jax.tree.PyTree, ...listOfTrees.slice(1));
    const episodeSteps = [{ t: 1, obs: 3 }, { t: 2, obs: 4 }];
    t.deepEqual(treeTranspose(episodeSteps), { obs: [3, 4], t: [1, 2] });
  }),

  snippet(`${SRC} › Transposing pytrees`, 'jax.tree.transpose(outer_treedef, inner_treedef, episode_steps)', (t) => {
    const episodeSteps = [{ t: 1, obs: 3 }, { t: 2, obs: 4 }];
    const out = jax.tree.transpose(
      jax.tree.structure(episodeSteps.map(() => 0)),
      jax.tree.structure(episodeSteps[0]!),
      episodeSteps,
    );
    t.deepEqual(out, { obs: [3, 4], t: [1, 2] });
  }),

  snippet(`${SRC} › Custom pytree nodes (JAX 101, 2021)`, 'registering MyContainer: leaves [1, 2, 3, 4, 5, 6], the name is aux data', (t) => {
    class MyContainer {
      constructor(public name: string, public a: number, public b: number, public c: number) {}
    }
    const unregistered = [new MyContainer('Alice', 1, 2, 3), new MyContainer('Bob', 4, 5, 6)];
    t.is(jax.tree.leaves(unregistered).length, 2); // unregistered: each container is one leaf
    jax.tree.registerPytreeNode(
      MyContainer,
      (container: MyContainer) => [[container.a, container.b, container.c], container.name],
      (auxData: string, flatContents: number[]) => new MyContainer(auxData, ...(flatContents as [number, number, number])),
    );
    t.deepEqual(jax.tree.leaves([new MyContainer('Alice', 1, 2, 3), new MyContainer('Bob', 4, 5, 6)]), [1, 2, 3, 4, 5, 6]);
    const incremented = jax.tree.map((x: number) => x + 1, [new MyContainer('Alice', 1, 2, 3)] as object) as unknown as MyContainer[];
    t.true(incremented[0] instanceof MyContainer);
    t.is(incremented[0]!.name, 'Alice');
    t.deepEqual([incremented[0]!.a, incremented[0]!.b, incremented[0]!.c], [2, 3, 4]);
  }),

  snippet(`${KEY} › Pytrees`, 'a nested list of parameters: PyTreeDef([*, *, (*, *)]) and its leaves', (t) => {
    const params = [1, 2, [jnp.arange(3), jnp.ones(2)]];
    // JS has no tuples: the inner (jnp.arange(3), jnp.ones(2)) is a JS array, printed as a list
    t.is(String(jax.tree.structure(params as jax.tree.PyTree)), 'PyTreeDef([*, *, [*, *]])');
    const leaves = jax.tree.leaves(params as jax.tree.PyTree) as unknown[];
    t.is(leaves.length, 4);
    t.deepEqual(leaves.slice(0, 2), [1, 2]);
    expectArray(t, leaves[2], [0, 1, 2], { dtype: 'int32' });
    expectArray(t, leaves[3], [1, 1], { dtype: 'float32' });
  }),

  snippet(`${KEY} › Pytrees`, "a dict of parameters: PyTreeDef({'W': *, 'b': *, 'n': *}), leaves in sorted key order", (t) => {
    const params = { n: 5, W: jnp.ones([2, 2]), b: jnp.zeros(2) };
    t.is(String(jax.tree.structure(params)), "PyTreeDef({'W': *, 'b': *, 'n': *})");
    const leaves = jax.tree.leaves(params) as unknown[];
    expectArray(t, leaves[0], [[1, 1], [1, 1]], { dtype: 'float32' });
    expectArray(t, leaves[1], [0, 0], { dtype: 'float32' });
    t.is(leaves[2], 5);
  }),
];
