// Pytree prefixes, as jax.device_put's destination and jit's in_shardings /
// out_shardings use them: a value of the prefix tree applies to every leaf
// of the full tree below the same position (JAX's broadcast_prefix). The
// walk visits object keys in sorted order, as pytree.flatten does, so the
// result lines up with the full tree's flattened leaves.
import { show } from '../core/errors.js';
import { ValueError } from '../core/errors.js';
import { leaves } from '../core/pytree.js';

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function describe(x: unknown): string {
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (isPlainObject(x)) return `an object with keys ${show(Object.keys(x).sort())}`;
  if (x === null || x === undefined) return show(x);
  return 'a leaf';
}

/**
 * For each leaf of `tree` (in flatten order), the leaf of `prefix` above it.
 * `isPrefixLeaf` says which values of the prefix are leaves; `fn`, `prefixName`
 * and `treeName` name the caller and the two trees in errors.
 */
export function broadcastPrefix<T>(
  fn: string,
  prefix: unknown,
  tree: unknown,
  isPrefixLeaf: (x: unknown) => x is T,
  prefixName: string,
  treeName: string,
): T[] {
  const out: T[] = [];
  const walk = (p: unknown, t: unknown, path: string): void => {
    if (isPrefixLeaf(p)) {
      for (let n = leaves(t as never).length; n > 0; n--) out.push(p);
      return;
    }
    const at = path ? ` at ${path}` : '';
    if (Array.isArray(p)) {
      if (!Array.isArray(t) || t.length !== p.length) {
        throw new ValueError(`${fn}: ${prefixName} must be a pytree prefix of ${treeName}, but${at} ${prefixName} has ${describe(p)} where ${treeName} have ${describe(t)}`);
      }
      p.forEach((c, i) => walk(c, t[i], `${path}[${i}]`));
      return;
    }
    if (isPlainObject(p)) {
      const keys = Object.keys(p).sort();
      if (!isPlainObject(t) || Object.keys(t).sort().join('\0') !== keys.join('\0')) {
        throw new ValueError(`${fn}: ${prefixName} must be a pytree prefix of ${treeName}, but${at} ${prefixName} has ${describe(p)} where ${treeName} have ${describe(t)}`);
      }
      for (const k of keys) walk(p[k], t[k], `${path}.${k}`);
      return;
    }
    throw new TypeError(`${fn}: ${prefixName} has an unsupported leaf${at}: ${show(p)}`);
  };
  walk(prefix, tree, '');
  return out;
}
