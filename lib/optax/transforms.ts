// optax's building-block transformations, with optax 0.2.x's update
// equations (optax/_src/transform.py, transforms/_accumulation.py,
// _adding.py, _clipping.py, _masking.py): scaleByAdam, trace (momentum),
// scale / scaleBySchedule / scaleByLearningRate, addDecayedWeights,
// clipByGlobalNorm and masked. Scalars combine with arrays as Python floats
// do in JAX (weakly typed), so results match optax in float32 and bfloat16.
import { Array, type ArrayLike } from '../core/array.js';
import { toArray } from '../core/coerce.js';
import { type DType, checkUserDType } from '../core/dtype.js';
import { ValueError, checkOptions, show } from '../core/errors.js';
import { type PyTree, map } from '../core/pytree.js';
import * as lax from '../lax/ops.js';
import * as jnp from '../numpy/index.js';
import {
  type EmptyState, type GradientTransformation, type OptState, type Params, type ScalarOrSchedule, type Schedule, type Updates,
  castTree, castTreeLike, checkSameStructure, checkScalar, checkScalarOrSchedule, checkState, checkTransformation, emptyState,
  identity, oneMinus, safeIncrement, transformation, treeLeaves, zeroCount, zerosLikeTree,
} from './base.js';

type Leaf = Array;
const mapLeaves = (f: (...xs: Leaf[]) => ArrayLike, ...trees: unknown[]): OptState =>
  map((...xs: unknown[]) => f(...(xs as Leaf[])), trees[0] as PyTree, ...(trees.slice(1) as PyTree[])) as OptState;

function optionalDtype(fn: string, value: unknown, arg: string): DType | null {
  return value === undefined || value === null ? null : checkUserDType(fn, value, arg);
}

function checkFlag(fn: string, value: unknown, arg: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${arg} must be a boolean, got ${show(value)}`);
  return value;
}

/** optax.tree.update_moment: (1 - decay) * g^order + decay * t. */
function updateMoment(updates: Updates, moments: OptState, decay: number | Array, order: number): OptState {
  const a = oneMinus(decay);
  return mapLeaves((g, t) => jnp.add(jnp.multiply(a, jnp.power(g, order)), jnp.multiply(decay, t)), updates, moments);
}

/** optax.tree.bias_correction: moment / (1 - decay^count), the correction computed in float32 then cast to each leaf's dtype. */
function biasCorrection(moment: OptState, decay: number | Array, count: Array): OptState {
  const correction = jnp.subtract(1, jnp.power(decay, count));
  return mapLeaves((t) => jnp.divide(t, lax.convertElementType(correction, t.dtype)), moment);
}

// ---- Adam ----

export interface ScaleByAdamOptions {
  /** Decay of the first moment's moving average (default 0.9). */
  b1?: number | Array;
  /** Decay of the second moment's moving average (default 0.999). */
  b2?: number | Array;
  /** Added to the denominator outside the square root (default 1e-8). */
  eps?: number | Array;
  /** Added to the second moment inside the square root (default 0). */
  epsRoot?: number | Array;
  /** dtype of the first moment (default: the parameters' dtypes). */
  muDtype?: DType | null;
  /** Nesterov momentum (NAdam, Dozat 2016). */
  nesterov?: boolean;
}

export interface ScaleByAdamState {
  count: Array;
  mu: OptState;
  nu: OptState;
}

const ADAM_KEYS = ['b1', 'b2', 'eps', 'epsRoot', 'muDtype', 'nesterov'] as const;

function adamHyperparameters(fn: string, options: ScaleByAdamOptions) {
  return {
    b1: checkScalar(fn, options.b1 ?? 0.9, 'b1'),
    b2: checkScalar(fn, options.b2 ?? 0.999, 'b2'),
    eps: checkScalar(fn, options.eps ?? 1e-8, 'eps'),
    epsRoot: checkScalar(fn, options.epsRoot ?? 0, 'epsRoot'),
    muDtype: optionalDtype(fn, options.muDtype, 'muDtype'),
    nesterov: checkFlag(fn, options.nesterov, 'nesterov'),
  };
}

/**
 * optax.scale_by_adam: mu and nu are moving averages of g and g²; the update
 * is mu_hat / (sqrt(nu_hat + epsRoot) + eps) with mu_hat = mu / (1 - b1^count),
 * nu_hat = nu / (1 - b2^count) and count incremented first (saturating int32).
 */
export function scaleByAdam(options: ScaleByAdamOptions = {}): GradientTransformation<ScaleByAdamState> {
  const fn = 'optax.scaleByAdam';
  checkOptions(fn, options, ADAM_KEYS);
  const { b1, b2, eps, epsRoot, muDtype, nesterov } = adamHyperparameters(fn, options ?? {});
  return transformation<ScaleByAdamState>(
    (params) => ({ count: zeroCount(), mu: zerosLikeTree(params, muDtype), nu: zerosLikeTree(params) }),
    (updates, state) => {
      const s = checkState(fn, state, ['count', 'mu', 'nu']) as unknown as ScaleByAdamState;
      checkSameStructure(fn, 'updates', updates, 'the state (from init)', s.mu);
      const mu = updateMoment(updates, s.mu, b1, 1);
      const nu = updateMoment(updates, s.nu, b2, 2);
      const countInc = safeIncrement(s.count);
      const muHat = nesterov
        ? mapLeaves(
            (m, g) => jnp.add(jnp.multiply(b1, m), jnp.multiply(oneMinus(b1), g)),
            biasCorrection(mu, b1, safeIncrement(countInc)),
            biasCorrection(updates, b1, countInc),
          )
        : biasCorrection(mu, b1, countInc);
      const nuHat = biasCorrection(nu, b2, countInc);
      const out = mapLeaves((m, v) => jnp.divide(m, jnp.add(jnp.sqrt(jnp.add(v, epsRoot)), eps)), muHat, nuHat);
      return [out, { count: countInc, mu: castTree(mu, muDtype), nu: castTreeLike(nu, s.nu) }];
    },
  );
}

// ---- momentum ----

export interface TraceOptions {
  nesterov?: boolean;
  /** dtype of the stored trace (default: the parameters' dtypes). */
  accumulatorDtype?: DType | null;
}

export interface TraceState {
  trace: OptState;
}

/** optax.trace: momentum; trace = g + decay * trace, and with nesterov the update is g + decay * trace. */
export function trace(decay: number | Array, options: TraceOptions = {}): GradientTransformation<TraceState> {
  const fn = 'optax.trace';
  checkOptions(fn, options, ['nesterov', 'accumulatorDtype']);
  const d = checkScalar(fn, decay, 'decay');
  const nesterov = checkFlag(fn, options?.nesterov, 'nesterov');
  const accumulatorDtype = optionalDtype(fn, options?.accumulatorDtype, 'accumulatorDtype');
  return transformation<TraceState>(
    (params) => ({ trace: zerosLikeTree(params, accumulatorDtype) }),
    (updates, state) => {
      const s = checkState(fn, state, ['trace']) as unknown as TraceState;
      checkSameStructure(fn, 'updates', updates, 'the state (from init)', s.trace);
      const f = (g: Leaf, t: Leaf) => jnp.add(g, jnp.multiply(d, t));
      const newTrace = mapLeaves(f, updates, s.trace);
      const out = nesterov ? mapLeaves(f, updates, newTrace) : newTrace;
      return [out, { trace: castTree(newTrace, accumulatorDtype) }];
    },
  );
}

// ---- scaling ----

/** optax.scale: multiplies the updates by stepSize. */
export function scale(stepSize: number | Array): GradientTransformation<EmptyState> {
  const s = checkScalar('optax.scale', stepSize, 'stepSize');
  return transformation(() => emptyState(), (updates, state) => [mapLeaves((g) => jnp.multiply(s, g), updates), state]);
}

export interface ScaleByScheduleState {
  count: Array;
}

/** optax.scale_by_schedule: multiplies the updates by stepSizeFn(count), then increments count. */
export function scaleBySchedule(stepSizeFn: Schedule): GradientTransformation<ScaleByScheduleState> {
  const fn = 'optax.scaleBySchedule';
  if (typeof stepSizeFn !== 'function') throw new TypeError(`${fn}: stepSizeFn must be a function of the step count, got ${show(stepSizeFn)}`);
  return transformation<ScaleByScheduleState>(
    () => ({ count: zeroCount() }),
    (updates, state) => {
      const s = checkState(fn, state, ['count']) as unknown as ScaleByScheduleState;
      const stepSize = stepSizeFn(s.count);
      const out = mapLeaves((g) => jnp.multiply(jnp.array(stepSize, { dtype: g.dtype }), g), updates);
      return [out, { count: safeIncrement(s.count) }];
    },
  );
}

/**
 * optax.scale_by_learning_rate: multiplies the updates by -learningRate (by
 * +learningRate with flipSign false); a schedule is called with the step count.
 */
export function scaleByLearningRate(
  learningRate: ScalarOrSchedule,
  options: { flipSign?: boolean } = {},
): GradientTransformation<EmptyState | ScaleByScheduleState> {
  const fn = 'optax.scaleByLearningRate';
  checkOptions(fn, options, ['flipSign']);
  const lr = checkScalarOrSchedule(fn, learningRate, 'learningRate');
  const flip = options?.flipSign === undefined ? true : checkFlag(fn, options.flipSign, 'flipSign');
  const m = flip ? -1 : 1;
  if (typeof lr === 'function') {
    return scaleBySchedule((count) => {
      const value = lr(count);
      return typeof value === 'number' ? m * value : jnp.multiply(m, value);
    });
  }
  return scale(typeof lr === 'number' ? m * lr : jnp.multiply(m, lr));
}

// ---- weight decay ----

export interface WeightDecayScheduleState {
  count: Array;
}

/** A mask: a pytree of booleans (a prefix of the parameters' tree) or a function of the parameters giving one. */
export type Mask = PyTree<boolean> | ((params: Params) => PyTree<boolean>);

/** optax.add_decayed_weights: updates + weightDecay * params (needs params). */
export function addDecayedWeights(
  weightDecay: ScalarOrSchedule = 0,
  options: { mask?: Mask | null } = {},
): GradientTransformation<EmptyState | WeightDecayScheduleState | MaskedState> {
  const fn = 'optax.addDecayedWeights';
  checkOptions(fn, options, ['mask']);
  const wd = checkScalarOrSchedule(fn, weightDecay, 'weightDecay');
  const isSchedule = typeof wd === 'function';
  const inner = transformation<EmptyState | WeightDecayScheduleState>(
    () => (isSchedule ? { count: zeroCount() } : emptyState()),
    (updates, state, params) => {
      if (params === undefined || params === null) {
        throw new ValueError(`${fn}: this transformation needs the parameters: call update(updates, state, params)`);
      }
      let next = state;
      let s: number | Array | ArrayLike = wd as number | Array;
      if (isSchedule) {
        const st = checkState(fn, state, ['count']) as unknown as WeightDecayScheduleState;
        next = { count: safeIncrement(st.count) };
        s = (wd as Schedule)(st.count);
      }
      if (typeof wd === 'number' && wd === 0) return [updates, next];
      checkSameStructure(fn, 'updates', updates, 'params', params);
      return [mapLeaves((g, p) => jnp.add(g, jnp.multiply(s, p)), updates, params), next];
    },
  );
  const mask = options?.mask;
  return mask === undefined || mask === null ? inner : masked(inner, mask);
}

// ---- clipping ----

/** optax.tree.norm (optax.global_norm): the l2 norm of all leaves together. */
export function globalNorm(updates: Updates): Array {
  const [leaves] = treeLeaves(updates);
  let total: ArrayLike = 0;
  for (const [i, leaf] of leaves.entries()) total = jnp.add(total, jnp.sum(jnp.square(toArray('optax.globalNorm', leaf, `leaf ${i}`))));
  return jnp.sqrt(total);
}

/** optax.clip_by_global_norm: scales all updates by maxNorm / globalNorm when the global norm exceeds maxNorm. */
export function clipByGlobalNorm(maxNorm: number | Array): GradientTransformation<EmptyState> {
  const fn = 'optax.clipByGlobalNorm';
  const max = checkScalar(fn, maxNorm, 'maxNorm');
  return transformation(
    () => emptyState(),
    (updates, state) => {
      const norm = globalNorm(updates);
      const trigger = jnp.less(norm, max);
      const out = mapLeaves((t) => lax.select(trigger, t, jnp.multiply(jnp.divide(t, lax.convertElementType(norm, t.dtype)), max)), updates);
      return [out, state];
    },
  );
}

// ---- masking ----

export interface MaskedState {
  innerState: unknown;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/**
 * Walks a mask (a tree prefix of `trees`): at each boolean leaf, `leaf(m,
 * subtrees)` gives the result for that whole subtree.
 */
function zipMask(fn: string, mask: unknown, trees: unknown[], leaf: (m: boolean, subtrees: unknown[]) => unknown, path: string): unknown {
  if (typeof mask === 'boolean') return leaf(mask, trees);
  if (mask === null || mask === undefined) return trees[0];
  if (globalThis.Array.isArray(mask)) {
    for (const t of trees) {
      if (!globalThis.Array.isArray(t) || t.length !== mask.length) {
        throw new ValueError(`${fn}: the mask has an array of ${mask.length} at ${path || 'the root'}, but the tree has ${show(t)} there`);
      }
    }
    return mask.map((m, i) => zipMask(fn, m, trees.map((t) => (t as unknown[])[i]), leaf, `${path}[${i}]`));
  }
  if (isPlainObject(mask)) {
    const keys = Object.keys(mask).sort();
    for (const t of trees) {
      const tk = isPlainObject(t) ? Object.keys(t).sort() : null;
      if (!tk || tk.length !== keys.length || tk.some((k, i) => k !== keys[i])) {
        throw new ValueError(`${fn}: the mask has keys {${keys.join(', ')}} at ${path || 'the root'}, but the tree has ${tk ? `{${tk.join(', ')}}` : show(t)} there`);
      }
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = zipMask(fn, mask[k], trees.map((t) => (t as Record<string, unknown>)[k]), leaf, `${path}.${k}`);
    return out;
  }
  throw new TypeError(`${fn}: mask leaves must be booleans, got ${show(mask)} at ${path || 'the root'}`);
}

/**
 * optax.masked: applies `inner` only where the mask is true; elsewhere the
 * updates pass through unchanged (masked-out leaves are null inside `inner`).
 */
export function masked(inner: GradientTransformation<unknown>, mask: Mask): GradientTransformation<MaskedState> {
  const fn = 'optax.masked';
  checkTransformation(fn, inner, 'inner');
  const maskFor = (tree: unknown): unknown => (typeof mask === 'function' ? mask(tree as Params) : mask);
  const maskTree = (tree: unknown, m: unknown) => zipMask(fn, m, [tree], (keep, [sub]) => (keep ? sub : null), '');
  return {
    init: (params) => {
      const m = maskFor(params);
      return { innerState: inner.init(maskTree(params, m)) };
    },
    update: <U>(updates: U, state: MaskedState, params?: unknown): [U, MaskedState] => {
      const s = checkState(fn, state, ['innerState']) as unknown as MaskedState;
      const m = maskFor(updates);
      const [newMasked, innerState] = inner.update(
        maskTree(updates, m),
        s.innerState,
        params === undefined || params === null ? params : maskTree(params, m),
      );
      const out = zipMask(fn, m, [newMasked, updates], (keep, [newU, oldU]) => (keep ? newU : oldU), '');
      return [out as U, { innerState }];
    },
  };
}

export { identity };
