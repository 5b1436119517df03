// Pytrees as in JAX: containers (JS arrays, plain objects) of leaves, with
// null/undefined as empty subtrees (Python's None). Objects flatten in sorted
// key order, as JAX sorts dict keys.
import { show } from './errors.js';

export type PyTree<Leaf = unknown> = Leaf | PyTree<Leaf>[] | { [key: string]: PyTree<Leaf> } | null | undefined;

export type TreeDef =
  | { kind: 'leaf' }
  | { kind: 'none'; value: null | undefined }
  | { kind: 'array'; children: TreeDef[] }
  | { kind: 'object'; keys: string[]; children: TreeDef[] };

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

export function flatten<Leaf = unknown>(tree: PyTree<Leaf>, isLeaf?: (x: unknown) => boolean): [Leaf[], TreeDef] {
  const leaves: Leaf[] = [];
  const walk = (x: unknown): TreeDef => {
    if (isLeaf?.(x)) {
      leaves.push(x as Leaf);
      return { kind: 'leaf' };
    }
    if (x === null || x === undefined) return { kind: 'none', value: x };
    if (Array.isArray(x)) return { kind: 'array', children: x.map(walk) };
    if (isPlainObject(x)) {
      const keys = Object.keys(x).sort();
      return { kind: 'object', keys, children: keys.map((k) => walk(x[k])) };
    }
    leaves.push(x as Leaf);
    return { kind: 'leaf' };
  };
  const def = walk(tree);
  return [leaves, def];
}

export function leaves<Leaf = unknown>(tree: PyTree<Leaf>, isLeaf?: (x: unknown) => boolean): Leaf[] {
  return flatten(tree, isLeaf)[0];
}

export function numLeaves(def: TreeDef): number {
  switch (def.kind) {
    case 'leaf': return 1;
    case 'none': return 0;
    case 'array':
    case 'object': return def.children.reduce((n, c) => n + numLeaves(c), 0);
  }
}

export function unflatten<Leaf>(def: TreeDef, values: readonly Leaf[]): PyTree<Leaf> {
  if (values.length !== numLeaves(def)) {
    throw new TypeError(`tree.unflatten: the tree structure has ${numLeaves(def)} leaves, got ${values.length} values`);
  }
  let i = 0;
  const build = (d: TreeDef): PyTree<Leaf> => {
    switch (d.kind) {
      case 'leaf': return values[i++] as Leaf;
      case 'none': return d.value;
      case 'array': return d.children.map(build);
      case 'object': {
        const out: Record<string, PyTree<Leaf>> = {};
        d.keys.forEach((k, j) => (out[k] = build(d.children[j]!)));
        return out;
      }
    }
  };
  return build(def);
}

export function structure(tree: PyTree, isLeaf?: (x: unknown) => boolean): TreeDef {
  return flatten(tree, isLeaf)[1];
}

export function treeDefEqual(a: TreeDef, b: TreeDef): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'leaf': return true;
    case 'none': return true;
    case 'array': {
      const bc = (b as typeof a).children;
      return a.children.length === bc.length && a.children.every((c, i) => treeDefEqual(c, bc[i]!));
    }
    case 'object': {
      const bo = b as typeof a;
      return a.keys.length === bo.keys.length && a.keys.every((k, i) => k === bo.keys[i] && treeDefEqual(a.children[i]!, bo.children[i]!));
    }
  }
}

export function treeDefToString(def: TreeDef): string {
  switch (def.kind) {
    case 'leaf': return '*';
    case 'none': return 'None';
    case 'array': return `[${def.children.map(treeDefToString).join(', ')}]`;
    case 'object': return `{${def.keys.map((k, i) => `${k}: ${treeDefToString(def.children[i]!)}`).join(', ')}}`;
  }
}

/** tree.map(f, tree, ...rest): rest must have tree's structure (or be a prefix of leaves). */
export function map<A, B>(f: (x: A, ...rest: unknown[]) => B, tree: PyTree<A>, ...rest: PyTree[]): PyTree<B> {
  const [ls, def] = flatten<A>(tree);
  const others = rest.map((r, k) => {
    const [rl, rd] = flatten(r);
    if (!treeDefEqual(def, rd)) {
      throw new TypeError(
        `tree.map: argument ${k + 1} has structure ${treeDefToString(rd)}, expected ${treeDefToString(def)}`,
      );
    }
    return rl;
  });
  return unflatten(def, ls.map((x, i) => f(x, ...others.map((o) => o[i]))));
}

export function checkTree(fn: string, tree: unknown): void {
  if (typeof tree === 'function') throw new TypeError(`${fn}: a function is not a pytree, got ${show(tree)}`);
}
