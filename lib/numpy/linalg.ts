// jnp's products: matmul, dot, vdot, tensordot, einsum and outer, each one
// lax.dot_general after NumPy's shape rules (jax/_src/numpy/lax_numpy.py and
// einsum.py). Operands are promoted to a common dtype first; integers
// accumulate in their own dtype unless `preferredElementType` asks for
// another. `precision` goes to dot_general (float32 on a GPU: tf32 tensor
// cores unless it is HIGHEST); the CPU computes in float32 whatever it says.
import { Array, type ArrayLike } from '../core/array.js';
import { type DType, checkUserDType, resultType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import type { DotDimensionNumbers, DotPrecision } from '../core/primitives.js';
import { normalizeAxis } from '../core/shape.js';
import * as lax from '../lax/ops.js';
import { promote, typeOf } from './util.js';

export interface DotOptions {
  /** lax.Precision (or JAX's strings): HIGHEST keeps float32 operands float32-accurate on a GPU's tensor cores. */
  precision?: unknown;
  /** The dtype of the result (and of the accumulation), as lax.dot_general takes. */
  preferredElementType?: DType | null;
}

const DOT_OPTIONS = ['precision', 'preferredElementType'] as const;

interface Operands {
  x: Array;
  y: Array;
  preferred: DType | null;
  precision: DotPrecision | null;
}

function preferredOption(fn: string, options: DotOptions | undefined): DType | null {
  const value = options?.preferredElementType;
  return value === undefined || value === null ? null : checkUserDType(fn, value, 'preferredElementType');
}

/** Promotes both operands; returns the preferred element type, if any. */
function dotOperands(fn: string, a: unknown, b: unknown, options: DotOptions | undefined): Operands {
  checkOptions(fn, options, DOT_OPTIONS);
  const preferred = preferredOption(fn, options);
  const precision = lax.canonicalizePrecision(fn, options?.precision);
  const [x, y] = promote(fn, a, b) as [Array, Array];
  return { x, y, preferred, precision };
}

function dotGeneral(x: Array, y: Array, dn: DotDimensionNumbers, preferred: DType | null, precision: DotPrecision | null): Array {
  const out = lax.dotGeneral(x, y, dn, { preferredElementType: preferred, precision });
  // an explicit preferredElementType gives a strongly typed result
  return preferred && out.weakType ? lax.convertWeak(out, preferred, false) : out;
}

function range(start: number, stop: number): number[] {
  return globalThis.Array.from({ length: Math.max(0, stop - start) }, (_, i) => start + i);
}

function argsort(values: number[]): number[] {
  return values.map((v, i) => [v, i] as const).sort((p, q) => p[0] - q[0]).map((p) => p[1]);
}

/**
 * jnp.matmul(a, b, { precision, preferredElementType }): NumPy's matmul. A 1-d
 * operand is a vector (its axis is removed from the result); leading batch
 * dimensions broadcast. Size-1 and one-sided batch dimensions become free
 * dimensions of dot_general rather than being materialized.
 */
export function matmul(a: ArrayLike, b: ArrayLike, options: DotOptions = {}): Array {
  const fn = 'jnp.matmul';
  const { x, y, preferred, precision } = dotOperands(fn, a, b, options);
  [x, y].forEach((z, i) => {
    if (z.ndim < 1) throw new ValueError(`${fn}: operand ${i === 0 ? 'a' : 'b'} must have at least 1 dimension, got shape ${show(z.shape)}`);
  });
  const xMat = x.ndim > 1;
  const yMat = y.ndim > 1;
  const xContract = x.ndim - 1;
  const yContract = yMat ? y.ndim - 2 : 0;
  // JAX's dot_general shape rule raises a TypeError
  if (x.shape[xContract] !== y.shape[yContract]) {
    throw new TypeError(
      `${fn}: shapes ${show(x.shape)} and ${show(y.shape)} are not aligned: ` +
        `${x.shape[xContract]} (dim ${xContract} of a) != ${y.shape[yContract]} (dim ${yContract} of b)`,
    );
  }
  const xBatch = xMat ? x.shape.slice(0, -2) : [];
  const yBatch = yMat ? y.shape.slice(0, -2) : [];
  const nBatch = Math.max(xBatch.length, yBatch.length);
  const xOffset = nBatch - xBatch.length;
  const yOffset = nBatch - yBatch.length;
  const xSqueeze: number[] = [];
  const ySqueeze: number[] = [];
  const batchPairs: [number, number][] = [];
  // output positions, in the order dot_general emits them: batch, x free, y free
  const batchOut: number[] = [];
  const xFreeOut: number[] = [];
  const yFreeOut: number[] = [];
  let xPos = 0;
  let yPos = 0;
  for (let i = 0; i < nBatch; i++) {
    const bx = i >= xOffset ? xBatch[i - xOffset]! : null;
    const by = i >= yOffset ? yBatch[i - yOffset]! : null;
    if (bx === null) {
      yFreeOut.push(i);
      yPos++;
    } else if (by === null) {
      xFreeOut.push(i);
      xPos++;
    } else if (bx === 1) {
      xSqueeze.push(i - xOffset);
      yFreeOut.push(i);
      yPos++;
    } else if (by === 1) {
      ySqueeze.push(i - yOffset);
      xFreeOut.push(i);
      xPos++;
    } else if (bx === by) {
      batchPairs.push([xPos++, yPos++]);
      batchOut.push(i);
    } else {
      throw new ValueError(`${fn}: batch dimensions of shapes ${show(x.shape)} and ${show(y.shape)} cannot be broadcast together`);
    }
  }
  if (xMat) xFreeOut.push(nBatch);
  if (yMat) yFreeOut.push(nBatch + (xMat ? 1 : 0));
  const xs = lax.squeeze(x, xSqueeze);
  const ys = lax.squeeze(y, ySqueeze);
  const out = dotGeneral(
    xs,
    ys,
    [[[xs.ndim - 1], [ys.ndim - 1 - (yMat ? 1 : 0)]], [batchPairs.map((p) => p[0]), batchPairs.map((p) => p[1])]],
    preferred,
    precision,
  );
  return lax.transpose(out, argsort([...batchOut, ...xFreeOut, ...yFreeOut]));
}

/**
 * jnp.dot(a, b, { precision, preferredElementType }): numpy.dot. Scalars
 * multiply; otherwise the last axis of a contracts with b's only axis (1-d)
 * or its second-to-last.
 */
export function dot(a: ArrayLike, b: ArrayLike, options: DotOptions = {}): Array {
  const fn = 'jnp.dot';
  const { x, y, preferred, precision } = dotOperands(fn, a, b, options);
  if (x.ndim === 0 || y.ndim === 0) return dotGeneral(x, y, [[[], []], [[], []]], preferred, precision);
  const xc = x.ndim - 1;
  const yc = y.ndim === 1 ? 0 : y.ndim - 2;
  if (x.shape[xc] !== y.shape[yc]) {
    throw new TypeError(`${fn}: shapes ${show(x.shape)} and ${show(y.shape)} are not aligned: ${x.shape[xc]} (dim ${xc} of a) != ${y.shape[yc]} (dim ${yc} of b)`);
  }
  return dotGeneral(x, y, [[[xc], [yc]], [[], []]], preferred, precision);
}

/** jnp.vdot(a, b, { precision, preferredElementType }): the dot product of the flattened operands. */
export function vdot(a: ArrayLike, b: ArrayLike, options: DotOptions = {}): Array {
  const fn = 'jnp.vdot';
  const { x, y, preferred, precision } = dotOperands(fn, a, b, options);
  if (x.size !== y.size) {
    throw new ValueError(`${fn}: a and b must have the same number of elements, got shapes ${show(x.shape)} and ${show(y.shape)}`);
  }
  return dotGeneral(lax.reshape(x, [x.size]), lax.reshape(y, [y.size]), [[[0], [0]], [[], []]], preferred, precision);
}

function axisList(fn: string, axes: unknown, ndim: number, arg: string): number[] {
  const list = typeof axes === 'number' ? [axes] : axes;
  if (!globalThis.Array.isArray(list)) throw new TypeError(`${fn}: ${arg} must be an integer or an array of integers, got ${show(axes)}`);
  const out = list.map((d) => normalizeAxis(fn, d, ndim, arg));
  if (new Set(out).size !== out.length) throw new ValueError(`${fn}: repeated axis in ${arg} ${show(axes)}`);
  return out;
}

/**
 * jnp.tensordot(a, b, axes = 2, { precision, preferredElementType }): `axes`
 * is a count (the last n axes of a with the first n of b) or a pair
 * [aAxes, bAxes] of axes or axis lists.
 */
export function tensordot(a: ArrayLike, b: ArrayLike, axes: number | [number | number[], number | number[]] = 2, options: DotOptions = {}): Array {
  const fn = 'jnp.tensordot';
  const { x, y, preferred, precision } = dotOperands(fn, a, b, options);
  let xAxes: number[];
  let yAxes: number[];
  if (typeof axes === 'number') {
    if (!Number.isInteger(axes) || axes < 0) throw new ValueError(`${fn}: axes must be a non-negative integer, got ${axes}`);
    if (axes > Math.min(x.ndim, y.ndim)) {
      throw new ValueError(`${fn}: number of axes ${axes} exceeds the operand ranks (shapes ${show(x.shape)} and ${show(y.shape)})`);
    }
    xAxes = range(x.ndim - axes, x.ndim);
    yAxes = range(0, axes);
  } else if (globalThis.Array.isArray(axes) && axes.length === 2) {
    const [ax, ay] = axes;
    if (typeof ax !== typeof ay || (typeof ax !== 'number' && !globalThis.Array.isArray(ax))) {
      throw new TypeError(`${fn}: axes must be a pair of integers or a pair of integer arrays, got ${show(axes)}`);
    }
    xAxes = axisList(fn, ax, x.ndim, 'axes[0]');
    yAxes = axisList(fn, ay, y.ndim, 'axes[1]');
    if (xAxes.length !== yAxes.length) throw new ValueError(`${fn}: axes lists must have equal length, got ${show(ax)} and ${show(ay)}`);
  } else {
    throw new TypeError(`${fn}: axes must be an integer, a pair of integers, or a pair of integer arrays, got ${show(axes)}`);
  }
  xAxes.forEach((d, i) => {
    if (x.shape[d] !== y.shape[yAxes[i]!]) {
      throw new ValueError(`${fn}: shapes ${show(x.shape)} and ${show(y.shape)} differ in contracted axes: dim ${d} of a (${x.shape[d]}) != dim ${yAxes[i]} of b (${y.shape[yAxes[i]!]})`);
    }
  });
  return dotGeneral(x, y, [[xAxes, yAxes], [[], []]], preferred, precision);
}

/** jnp.outer(a, b): out[i, j] = a.flat[i] * b.flat[j]. */
export function outer(a: ArrayLike, b: ArrayLike): Array {
  const fn = 'jnp.outer';
  const [x, y] = promote(fn, a, b) as [Array, Array];
  const shape = [x.size, y.size];
  const xs = lax.broadcastInDim(lax.reshape(x, [x.size]), shape, [0]);
  const ys = lax.broadcastInDim(lax.reshape(y, [y.size]), shape, [1]);
  return x.dtype === 'bool' ? lax.bitwiseAnd(xs, ys) : lax.mul(xs, ys);
}

// ---- einsum ----

interface Term {
  labels: string[];
  ellipsis: boolean;
}

const LABEL = /^[a-zA-Z]$/;
/** Labels standing for the dimensions an ellipsis covers (outside a-z, A-Z). */
const ellipsisLabel = (k: number): string => String.fromCharCode(0x100 + k);

function parseTerm(fn: string, text: string, subscripts: string): Term {
  const labels: string[] = [];
  let ellipsis = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '.') {
      if (text.slice(i, i + 3) !== '...') throw new ValueError(`${fn}: invalid subscripts ${show(subscripts)}: '.' must be part of an ellipsis '...'`);
      if (ellipsis) throw new ValueError(`${fn}: invalid subscripts ${show(subscripts)}: more than one ellipsis in ${show(text)}`);
      ellipsis = true;
      labels.push('...');
      i += 2;
    } else if (LABEL.test(c)) {
      labels.push(c);
    } else {
      throw new ValueError(`${fn}: invalid character ${show(c)} in subscripts ${show(subscripts)} (labels are letters a-z, A-Z)`);
    }
  }
  return { labels, ellipsis };
}

interface EinsumPlan {
  inputs: string[][];
  output: string[];
}

/** Parses subscripts against the operand ranks, expanding ellipses to private labels. */
function parseSubscripts(fn: string, subscripts: string, operands: Array[]): EinsumPlan {
  const text = subscripts.replace(/\s+/g, '');
  const arrow = text.indexOf('->');
  if (arrow !== text.lastIndexOf('->')) throw new ValueError(`${fn}: invalid subscripts ${show(subscripts)}: more than one '->'`);
  const inputText = arrow >= 0 ? text.slice(0, arrow) : text;
  if (inputText.includes('-') || inputText.includes('>') || (arrow >= 0 && /[->]/.test(text.slice(arrow + 2)))) {
    throw new ValueError(`${fn}: invalid subscripts ${show(subscripts)}: '-' and '>' may only appear together as '->'`);
  }
  const terms = inputText.split(',').map((t) => parseTerm(fn, t, subscripts));
  if (terms.length !== operands.length) {
    throw new ValueError(`${fn}: subscripts ${show(subscripts)} name ${terms.length} operand(s), but ${operands.length} were given`);
  }
  let ellipsisRank = 0;
  const inputs = terms.map((term, k) => {
    const op = operands[k]!;
    const named = term.labels.length - (term.ellipsis ? 1 : 0);
    if (term.ellipsis ? named > op.ndim : named !== op.ndim) {
      throw new ValueError(
        `${fn}: operand ${k} has shape ${show(op.shape)} (${op.ndim} dimensions) but its subscripts ${show(term.labels.join(''))} name ${named}`,
      );
    }
    const rank = op.ndim - named;
    ellipsisRank = Math.max(ellipsisRank, term.ellipsis ? rank : 0);
    return term.labels.flatMap((l) => (l === '...' ? range(0, rank).map((i) => `...${rank - i}`) : [l]));
  });
  // ellipsis dimensions align from the right: `...1` is the last one in every operand
  const resolve = (l: string): string => (l.startsWith('...') ? ellipsisLabel(ellipsisRank - Number(l.slice(3))) : l);
  const resolved = inputs.map((labels) => labels.map(resolve));
  const ellipsisLabels = range(0, ellipsisRank).map(ellipsisLabel);
  let output: string[];
  if (arrow >= 0) {
    const term = parseTerm(fn, text.slice(arrow + 2), subscripts);
    output = term.labels.flatMap((l) => (l === '...' ? ellipsisLabels : [l]));
    const all = new Set(resolved.flat());
    for (const l of term.labels) {
      if (l !== '...' && !all.has(l)) throw new ValueError(`${fn}: output label ${show(l)} in ${show(subscripts)} does not appear in any input`);
      if (l !== '...' && term.labels.filter((m) => m === l).length > 1) throw new ValueError(`${fn}: output label ${show(l)} is repeated in ${show(subscripts)}`);
    }
  } else {
    // implicit mode: ellipsis dimensions, then the labels used exactly once, in alphabetical (ASCII) order
    const counts = new Map<string, number>();
    for (const l of resolved.flat()) counts.set(l, (counts.get(l) ?? 0) + 1);
    const once = [...counts].filter(([l, n]) => n === 1 && LABEL.test(l)).map(([l]) => l).sort();
    output = [...ellipsisLabels, ...once];
  }
  return { inputs: resolved, output };
}

/** Takes the diagonal over two axes of equal size (the second is removed). */
function diagonal(x: Array, p: number, q: number): Array {
  const n = x.shape[p]!;
  const rest = range(0, x.ndim).filter((d) => d !== p && d !== q);
  const moved = lax.transpose(x, [...rest, p, q]);
  const flat = lax.reshape(moved, [...rest.map((d) => x.shape[d]!), n * n]);
  const start = flat.shape.map(() => 0);
  const strides = flat.shape.map((_, i) => (i === flat.ndim - 1 ? n + 1 : 1));
  const diag = lax.slice(flat, start, [...flat.shape], strides);
  // put the diagonal back where axis p was
  const pos = rest.filter((d) => d < p).length;
  const perm = range(0, rest.length);
  perm.splice(pos, 0, rest.length);
  return lax.transpose(diag, perm);
}

function sumOut(x: Array, axes: number[]): Array {
  if (axes.length === 0) return x;
  return x.dtype === 'bool' ? lax.reduceOr(x, axes) : lax.reduceSum(x, axes);
}

function splitOptions(args: unknown[]): { operands: unknown[]; options: DotOptions | undefined } {
  const last = args[args.length - 1];
  const isOptions = typeof last === 'object' && last !== null && !globalThis.Array.isArray(last) && !(last instanceof Array) && !ArrayBuffer.isView(last);
  return isOptions ? { operands: args.slice(0, -1), options: last as DotOptions } : { operands: args, options: undefined };
}

/**
 * jnp.einsum(subscripts, ...operands, { precision, preferredElementType }):
 * explicit ('ij,jk->ik') and implicit ('ij,jk') output, '...' ellipses,
 * repeated labels within an operand (diagonals, traces), and size-1
 * broadcasting. Labels used by one operand only and not in the output are
 * summed out first; then operands contract pairwise from left to right,
 * labels shared with later operands or the output becoming batch dimensions.
 */
export function einsum(subscripts: string, ...args: (ArrayLike | DotOptions)[]): Array {
  const fn = 'jnp.einsum';
  if (typeof subscripts !== 'string') throw new TypeError(`${fn}: subscripts must be a string, got ${show(subscripts)}`);
  const { operands: raw, options } = splitOptions(args);
  checkOptions(fn, options, DOT_OPTIONS);
  const preferred = preferredOption(fn, options);
  const precision = lax.canonicalizePrecision(fn, options?.precision);
  if (raw.length === 0) throw new ValueError(`${fn}: at least one operand is required`);
  const operands = promote(fn, ...raw);
  const weak = resultType(...raw.map((o, i) => typeOf(fn, o, `operands[${i}]`))).weak;
  const { inputs, output } = parseSubscripts(fn, subscripts, operands);

  inputs.forEach((labels, k) => {
    labels.forEach((l, q) => {
      const p = labels.indexOf(l);
      const shape = operands[k]!.shape;
      if (p !== q && shape[p] !== shape[q]) {
        throw new ValueError(`${fn}: label ${show(l)} is repeated in operand ${k} with different sizes ${shape[p]} and ${shape[q]} (shape ${show(shape)})`);
      }
    });
  });
  // every label's size; 1 broadcasts against any other size
  const sizes = new Map<string, number>();
  const owner = new Map<string, number>();
  inputs.forEach((labels, k) => {
    labels.forEach((l, d) => {
      const size = operands[k]!.shape[d]!;
      const known = sizes.get(l);
      if (known === undefined || known === 1) {
        sizes.set(l, size);
        owner.set(l, k);
      } else if (size !== 1 && size !== known) {
        const what = l.charCodeAt(0) >= 0x100 ? `ellipsis dimension ${l.charCodeAt(0) - 0x100}` : `label ${show(l)}`;
        throw new ValueError(`${fn}: size of ${what} differs: ${known} in operand ${owner.get(l)} (shape ${show(operands[owner.get(l)!]!.shape)}) and ${size} in operand ${k} (shape ${show(operands[k]!.shape)})`);
      }
    });
  });

  // per operand: diagonals of repeated labels, squeeze broadcast size-1 labels
  let terms = operands.map((x0, k) => {
    let x = x0;
    let labels = [...inputs[k]!];
    for (;;) {
      const q = labels.findIndex((l, i) => labels.indexOf(l) !== i);
      if (q < 0) break;
      const p = labels.indexOf(labels[q]!);
      x = diagonal(x, p, q);
      labels = labels.filter((_, i) => i !== q);
    }
    const squeeze = labels.map((l, d) => (x.shape[d] === 1 && sizes.get(l)! !== 1 ? d : -1)).filter((d) => d >= 0);
    x = lax.squeeze(x, squeeze);
    labels = labels.filter((_, d) => !squeeze.includes(d));
    return { x, labels };
  });

  // sum out labels not needed by the output or another operand
  const neededBeyond = (k: number, from: number): Set<string> => {
    const set = new Set(output);
    terms.forEach((t, j) => {
      if (j !== k && j >= from) t.labels.forEach((l) => set.add(l));
    });
    return set;
  };
  const reduceUnneeded = (t: { x: Array; labels: string[] }, needed: Set<string>) => {
    const axes = t.labels.map((l, d) => (needed.has(l) ? -1 : d)).filter((d) => d >= 0);
    return { x: sumOut(t.x, axes), labels: t.labels.filter((l) => needed.has(l)) };
  };
  terms = terms.map((t, k) => reduceUnneeded(t, neededBeyond(k, 0)));

  let acc = terms[0]!;
  for (let k = 1; k < terms.length; k++) {
    const later = neededBeyond(-1, k + 1);
    const next = terms[k]!;
    acc = reduceUnneeded(acc, new Set([...later, ...next.labels]));
    const shared = acc.labels.filter((l) => next.labels.includes(l));
    const batch = shared.filter((l) => later.has(l));
    const contract = shared.filter((l) => !later.has(l));
    const accFree = acc.labels.filter((l) => !shared.includes(l));
    const nextFree = next.labels.filter((l) => !shared.includes(l));
    let y = next.x;
    if (y.dtype !== acc.x.dtype) y = lax.convertElementType(y, acc.x.dtype); // after a preferredElementType
    const idx = (labels: string[], ls: string[]) => ls.map((l) => labels.indexOf(l));
    const x = dotGeneral(
      acc.x,
      y,
      [[idx(acc.labels, contract), idx(next.labels, contract)], [idx(acc.labels, batch), idx(next.labels, batch)]],
      preferred,
      precision,
    );
    acc = { x, labels: [...batch, ...accFree, ...nextFree] };
  }
  acc = reduceUnneeded(acc, new Set(output));
  let result = lax.transpose(acc.x, output.map((l) => acc.labels.indexOf(l)));
  if (preferred && result.dtype !== preferred) result = lax.convertElementType(result, preferred);
  if (result.weakType !== (weak && !preferred)) result = lax.convertWeak(result, result.dtype, weak && !preferred);
  return result;
}
