// Key path entries and Python-style printing for pytrees, as in jax.tree_util: SequenceKey for JS
// arrays, DictKey for plain objects, GetAttrKey for named fields of registered classes,
// FlattenedIndexKey for the children of classes registered without keys; keystr joins them as JAX
// prints them (`[0]['a'].x`). pyRepr writes JS values as Python's repr would, so PyTreeDef strings
// and error messages read like JAX's.

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

/** The index of an element of a JS array (JAX's SequenceKey); prints as `[0]`. */
export class SequenceKey {
  constructor(readonly idx: number) {}
  toString(): string {
    return `[${pyRepr(this.idx)}]`;
  }
  [inspectCustom](): string {
    return `SequenceKey(idx=${pyRepr(this.idx)})`;
  }
}

/** The key of a plain object's entry (JAX's DictKey); prints as `['a']`. */
export class DictKey {
  constructor(readonly key: unknown) {}
  toString(): string {
    return `[${pyRepr(this.key)}]`;
  }
  [inspectCustom](): string {
    return `DictKey(key=${pyRepr(this.key)})`;
  }
}

/** A named field of a registered class (JAX's GetAttrKey); prints as `.name`. */
export class GetAttrKey {
  constructor(readonly name: string) {}
  toString(): string {
    return `.${this.name}`;
  }
  [inspectCustom](): string {
    return `GetAttrKey(name=${pyRepr(this.name)})`;
  }
}

/** The i-th child of a class registered without keys (JAX's FlattenedIndexKey); prints as `[<flat index 0>]`. */
export class FlattenedIndexKey {
  constructor(readonly key: number) {}
  toString(): string {
    return `[<flat index ${this.key}>]`;
  }
  [inspectCustom](): string {
    return `FlattenedIndexKey(key=${this.key})`;
  }
}

/** One step of a key path: a built-in key, or whatever a registerPytreeWithKeys flatten returned (printed with String). */
export type KeyEntry = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey | string | number | object;
export type KeyPath = readonly KeyEntry[];

export interface KeystrOptions {
  /** Print each key bare (`0`, `a`, `x`) instead of as an accessor (`[0]`, `['a']`, `.x`). */
  simple?: boolean;
  /** Put between the keys; default ''. */
  separator?: string;
}

/** jax.tree_util.keystr(path, { simple, separator }): `[0]['a'].x`, or `0/a/x` with `{ simple: true, separator: '/' }`. */
export function keystr(path: KeyPath, options: KeystrOptions = {}): string {
  const fn = 'tree.keystr';
  if (!Array.isArray(path)) throw new TypeError(`${fn}: path must be a JS array of keys (a key path), got ${pyRepr(path)}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: options must be an object { simple, separator }, got ${pyRepr(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'simple' && key !== 'separator') {
      throw new TypeError(`${fn}: unknown option '${key}' (known options: 'simple', 'separator')`);
    }
  }
  const { simple = false, separator = '' } = options;
  if (typeof simple !== 'boolean') throw new TypeError(`${fn}: options.simple must be a boolean, got ${pyRepr(simple)}`);
  if (typeof separator !== 'string') throw new TypeError(`${fn}: options.separator must be a string, got ${pyRepr(separator)}`);
  return path.map((k) => (simple ? simpleKeyString(k) : String(k))).join(separator);
}

function simpleKeyString(key: unknown): string {
  if (key instanceof SequenceKey) return String(key.idx);
  if (key instanceof DictKey) return pyStr(key.key);
  if (key instanceof GetAttrKey) return key.name;
  if (key instanceof FlattenedIndexKey) return String(key.key);
  return String(key);
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

function reprNumber(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  return String(x);
}

/** A JS value as Python's repr would write the matching Python value (None, True, 'a', [1, 2], {'a': 1}). */
export function pyRepr(x: unknown, seen: Set<unknown> = new Set()): string {
  if (x === null || x === undefined) return 'None';
  if (typeof x === 'boolean') return x ? 'True' : 'False';
  if (typeof x === 'number') return reprNumber(x);
  if (typeof x === 'bigint') return String(x);
  if (typeof x === 'string') return reprString(x);
  if (typeof x === 'symbol') return x.toString();
  if (typeof x === 'function') return `<function ${x.name || '<anonymous>'}>`;
  if (seen.has(x)) return Array.isArray(x) ? '[...]' : '{...}';
  if (Array.isArray(x)) {
    seen.add(x);
    const out = `[${Array.from(x, (v) => pyRepr(v, seen)).join(', ')}]`;
    seen.delete(x);
    return out;
  }
  if (isPlainObject(x)) {
    seen.add(x);
    const out = `{${Object.keys(x).map((k) => `${reprString(k)}: ${pyRepr(x[k], seen)}`).join(', ')}}`;
    seen.delete(x);
    return out;
  }
  const custom = (x as { [inspectCustom]?: unknown })[inspectCustom];
  const toRepr = (x as { toRepr?: unknown }).toRepr;
  try {
    if (typeof toRepr === 'function') return String(toRepr.call(x));
    if (typeof custom === 'function') return String(custom.call(x));
  } catch {
    // a traced or disposed Array cannot show its values; fall back to its str
  }
  if (hasOwnToString(x)) return String(x);
  return `<${(x as object).constructor?.name ?? 'object'} object>`;
}

/** Python's str: a top-level string unquoted, anything else as pyRepr (how JAX prints a CustomNode's aux data). */
export function pyStr(x: unknown): string {
  return typeof x === 'string' ? x : pyRepr(x);
}

/** Whether an object's class (or an ancestor below Object) defines toString. */
export function hasOwnToString(x: object): boolean {
  return typeof (x as { toString?: unknown }).toString === 'function' && (x as object).toString !== Object.prototype.toString;
}
