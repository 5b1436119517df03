// A function's positional parameters, read from its source: what JAX gets
// from inspect.signature, for jit's staticArgnames and its argnums checks.
// Transformations hand back wrappers (`(...args) => ...`); like
// functools.wraps, `wraps` records the function a wrapper stands for, so
// jit(grad(f), { staticArgnames: ['flag'] }) finds f's parameter `flag`.

/** The parameters of a function: names (null for a destructured one), and whether a rest parameter takes any number more. */
export interface Signature {
  params: (string | null)[];
  rest: boolean;
}

const wrapped = new WeakMap<object, (...args: never[]) => unknown>();

/** Marks `wrapper` as standing for `fn` (JAX's functools.wraps): its signature is fn's. Returns wrapper. */
export function wraps<W extends object>(wrapper: W, fn: unknown): W {
  if (typeof fn === 'function') wrapped.set(wrapper, fn as (...args: never[]) => unknown);
  return wrapper;
}

/** The signature of fn (of the function it wraps, through wraps), or null when its source does not show one (a native or bound function). */
export function signatureOf(fn: (...args: never[]) => unknown): Signature | null {
  let f = fn;
  for (let next = wrapped.get(f); next; next = wrapped.get(f)) f = next;
  const source = Function.prototype.toString.call(f);
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) return null;
  const open = source.indexOf('(');
  const arrow = source.indexOf('=>');
  // `x => ...` has no parentheses around its one parameter
  if (arrow >= 0 && (open < 0 || open > arrow)) return { params: [source.slice(0, arrow).replace(/^async\s+/, '').trim()], rest: false };
  let depth = 0;
  let current = '';
  const params: string[] = [];
  for (let i = open + 1; i < source.length; i++) {
    const c = source[i]!;
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) {
      if (depth === 0) break;
      depth--;
    }
    if (c === ',' && depth === 0) {
      params.push(current);
      current = '';
    } else current += c;
  }
  if (current.trim() !== '') params.push(current);
  const rest = params.length > 0 && params[params.length - 1]!.trim().startsWith('...');
  const named = (rest ? params.slice(0, -1) : params).map((p) => {
    const name = /^\s*([A-Za-z_$][\w$]*)\s*(=[^>]|:|$)/.exec(p);
    return name ? name[1]! : null;
  });
  return { params: named, rest };
}

/** The parameter names of a function, from its source (null for a destructured parameter; a rest parameter is left out). */
export function parameterNames(fn: (...args: never[]) => unknown): (string | null)[] {
  return signatureOf(fn)?.params ?? [];
}
