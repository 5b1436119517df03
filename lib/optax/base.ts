// optax's core (optax/_src/base.py, update.py, combine.py, numerics.py):
// a GradientTransformation is a pair of pure functions, init(params) → state
// and update(updates, state, params?) → [updates, state], over pytrees whose
// leaves are Arrays; states are plain objects and JS arrays of Arrays, so
// they pass through jit, donation and offloading like any other pytree.
// Every init/update runs in a tidy scope: intermediates are freed, results kept.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { ValueError, show } from '../core/errors.js';
import { tidy } from '../core/memory.js';
import { type PyTree, type TreeDef, flatten, map, structure, treeDefEqual, treeDefToString } from '../core/pytree.js';
import * as lax from '../lax/ops.js';
import * as jnp from '../numpy/index.js';

/** A pytree of parameters (Arrays, or JS numbers as scalar leaves). */
export type Params = PyTree<Array | number>;
/** A pytree of updates (gradients on the way in, parameter deltas on the way out). */
export type Updates = PyTree<Array>;
/** An optimizer state: a pytree of Arrays (plain objects, JS arrays, null). */
export type OptState = PyTree<Array>;
/** A learning-rate (or weight-decay) schedule: the step count (int32 scalar) → the value. */
export type Schedule = (count: Array) => ArrayLike;
/** A constant hyperparameter or a schedule of the step count. */
export type ScalarOrSchedule = number | Array | Schedule;

/**
 * An optimizer or one of its parts. Trees are any pytrees (plain objects,
 * interfaces, JS arrays); the new updates have the structure of the old.
 */
export interface GradientTransformation<S = OptState> {
  /** The initial state for these parameters. */
  init(params: unknown): S;
  /** Transforms `updates` (e.g. gradients) and returns [newUpdates, newState]. */
  update<U>(updates: U, state: S, params?: unknown): [U, S];
}

/** optax.EmptyState: the state of stateless transformations (a pytree without leaves). */
export type EmptyState = Record<string, never>;

export function emptyState(): EmptyState {
  return {};
}

/** Wraps init/update so their intermediates are disposed, as Python's refcounting would. */
export function transformation<S>(
  init: (params: Params) => S,
  update: (updates: Updates, state: S, params?: Params | null) => [Updates, S],
): GradientTransformation<S> {
  return {
    init: (params) => tidy(() => init(params as Params)),
    update: <U>(updates: U, state: S, params?: unknown) => tidy(() => update(updates as Updates, state, params as Params | null)) as [U, S],
  };
}

/** optax.identity: passes the updates through unchanged. */
export function identity(): GradientTransformation<EmptyState> {
  return transformation(() => emptyState(), (updates, state) => [updates, state]);
}

/** optax.safe_increment: count + 1, staying at the dtype's maximum instead of wrapping. */
export function safeIncrement(count: ArrayLike): Array {
  const c = toArray('optax.safeIncrement', count, 'count');
  let max: number;
  if (c.dtype === 'int32') max = 2147483647;
  else if (c.dtype === 'uint32') max = 4294967295;
  else if (c.dtype === 'float32') max = 3.4028234663852886e38;
  else {
    throw new ValueError(`optax.safeIncrement: cannot safely increment a count of dtype ${c.dtype} (expected int32, uint32 or float32)`);
  }
  const maxValue = jnp.array(max, { dtype: c.dtype });
  return lax.select(lax.lt(c, maxValue), lax.add(c, jnp.array(1, { dtype: c.dtype })), maxValue);
}
/** optax.safe_int32_increment (an alias of safeIncrement). */
export const safeInt32Increment = safeIncrement;

/** A zero int32 step counter, as optax's states hold. */
export function zeroCount(): Array {
  return jnp.zeros([], { dtype: 'int32' });
}

/** optax.apply_updates: params + updates, each leaf cast back to its parameter's dtype. */
export function applyUpdates<P>(params: P, updates: unknown): P {
  const fn = 'optax.applyUpdates';
  checkSameStructure(fn, 'updates', updates, 'params', params);
  return tidy(() =>
    map((p: unknown, u: unknown) => {
      const pa = toArray(fn, p, 'params leaf');
      const sum = jnp.add(pa, u as ArrayLike);
      return sum.dtype === pa.dtype ? sum : lax.convertElementType(sum, pa.dtype);
    }, params as PyTree, updates as PyTree),
  ) as P;
}

/** optax.chain: applies the transformations in order; the state is the JS array of their states. */
export function chain(...transforms: GradientTransformation<unknown>[]): GradientTransformation<unknown[]> {
  transforms.forEach((t, i) => checkTransformation('optax.chain', t, `transforms[${i}]`));
  return transformation(
    (params) => transforms.map((t) => t.init(params)),
    (updates, state, params) => {
      if (!globalThis.Array.isArray(state) || state.length !== transforms.length) {
        const got = globalThis.Array.isArray(state) ? `an array of ${state.length} states` : show(state);
        throw new ValueError(
          `optax.chain: the state must hold one state per transformation (${transforms.length}), got ${got}; make sure you have called init first`,
        );
      }
      const next: unknown[] = [];
      for (let i = 0; i < transforms.length; i++) {
        const [u, s] = transforms[i]!.update(updates, state[i], params);
        updates = u;
        next.push(s);
      }
      return [updates, next];
    },
  );
}

// ---- shared helpers ----

export function checkTransformation(fn: string, t: unknown, arg: string): void {
  const ok = t !== null && typeof t === 'object' && typeof (t as GradientTransformation).init === 'function' &&
    typeof (t as GradientTransformation).update === 'function';
  if (!ok) throw new TypeError(`${fn}: ${arg} must be a GradientTransformation ({ init, update }), got ${show(t)}`);
}

/** A hyperparameter: a finite number or an Array. */
export function checkScalar(fn: string, value: unknown, arg: string): number | Array {
  if (value instanceof Array) return value;
  if (typeof value !== 'number' || Number.isNaN(value)) throw new TypeError(`${fn}: ${arg} must be a number or an Array, got ${show(value)}`);
  return value;
}

/** A number, an Array or a schedule function. */
export function checkScalarOrSchedule(fn: string, value: unknown, arg: string): ScalarOrSchedule {
  if (typeof value === 'function') return value as Schedule;
  return checkScalar(fn, value, arg);
}

/** 1 - x for a number or an Array hyperparameter (computed in double precision for numbers, as Python does). */
export function oneMinus(x: number | Array): number | Array {
  return typeof x === 'number' ? 1 - x : jnp.subtract(1, x);
}

/** Throws when two pytrees differ in structure, naming both. */
export function checkSameStructure(fn: string, nameA: string, a: unknown, nameB: string, b: unknown): void {
  const sa = structure(a as PyTree);
  const sb = structure(b as PyTree);
  if (!treeDefEqual(sa, sb)) {
    throw new ValueError(`${fn}: ${nameA} have structure ${treeDefToString(sa)} but ${nameB} have structure ${treeDefToString(sb)}`);
  }
}

/** Throws unless `state` is an object with exactly these keys (the state this transformation's init made). */
export function checkState(fn: string, state: unknown, keys: readonly string[]): Record<string, unknown> {
  const ok = state !== null && typeof state === 'object' && !globalThis.Array.isArray(state) &&
    keys.every((k) => k in (state as object)) && Object.keys(state as object).length === keys.length;
  if (!ok) {
    const got = state !== null && typeof state === 'object' && !globalThis.Array.isArray(state) ? `{${Object.keys(state).join(', ')}}` : show(state);
    throw new TypeError(`${fn}: state must be the object init returned, with keys {${keys.join(', ')}}, got ${got}`);
  }
  return state as Record<string, unknown>;
}

/** optax.tree.zeros_like: zeros shaped like each leaf (in `dtype` if given). */
export function zerosLikeTree(tree: Params, dtype?: Array['dtype'] | null): OptState {
  return map((p: unknown) => jnp.zerosLike(p as ArrayLike, dtype ? { dtype } : {}), tree as PyTree) as OptState;
}

/** optax.tree.cast: casts every leaf to `dtype` (a no-op when null). */
export function castTree(tree: OptState, dtype: Array['dtype'] | null | undefined): OptState {
  if (!dtype) return tree;
  return map((x: unknown) => ((x as Array).dtype === dtype ? x : lax.convertElementType(x as Array, dtype)), tree as PyTree) as OptState;
}

/** optax.tree.cast_like: casts each leaf of `tree` to the dtype of the matching leaf of `like`. */
export function castTreeLike(tree: OptState, like: OptState): OptState {
  return map((x: unknown, l: unknown) => {
    const target = toArray('optax', l).dtype;
    return (x as Array).dtype === target ? x : lax.convertElementType(x as Array, target);
  }, tree as PyTree, like as PyTree) as OptState;
}

/** The leaves and structure of a pytree. */
export function treeLeaves(tree: unknown): [unknown[], TreeDef] {
  return flatten(tree as PyTree);
}
