// The measuring half of the GPU benchmark suite (bench/gpu-suite.ts, issue
// 12): the shared shapes in bench/workloads.json, the Workload and Row
// shapes, and the timing loop. Times are wall time: performance.now() around
// the call and blockUntilReady() of every output, after warm-up calls, so
// they include dispatch; bench/jax/common.py times JAX the same way
// (time.perf_counter around the call and jax.block_until_ready).
import { readFileSync } from 'node:fs';
import * as jax from '../../lib/index.js';
import type { Array } from '../../lib/index.js';

export type SizeSet = 'full' | 'tiny';

/** What bounds a workload, and so which roofline (if any) its row is measured against. */
export type Kind = 'memory' | 'compute' | 'step' | 'dispatch' | 'transfer' | 'compile';

export interface Timing {
  warmup: number;
  /** at least this many timed runs... */
  min_n: number;
  /** ...and at most this many, stopping once budget_s has passed */
  max_n: number;
  budget_s: number;
}

export interface TutorialSizes {
  layers: number;
  batch: number;
  width: number;
  hidden: number;
  dim: number;
}

/** One entry of bench/workloads.json's "sizes". */
export interface SizeSpec {
  copy: number;
  chain: number;
  sum: number;
  softmax: [number, number][];
  layernorm: [number, number];
  transpose: [number, number];
  gemm: number[];
  mlp: [number, number, number];
  /** issue 15's rows: sort length; conv [batch, height, width, in features, out features, window]; solve's n */
  sort: number;
  conv: [number, number, number, number, number, number];
  solve: number;
  dispatch: { elements: number; calls: number };
  tutorial: TutorialSizes;
  transfer: number;
  compile: { samples: number };
  timing: Timing;
}

export interface PeakEntry {
  match: string;
  bfloat16: number;
  float32: number;
}

/** bench/workloads.json, which bench/jax/*.py read too, so both sides run the same shapes under the same names. */
export function workloadSpec(): { sizes: Record<SizeSet, SizeSpec>; peaks: PeakEntry[] } {
  // dist/bench/jaxon/measure.js and bench/jaxon/measure.ts both sit two folders below the repository root
  for (const candidate of ['../workloads.json', '../../../bench/workloads.json']) {
    try {
      return JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error('gpu-suite: bench/workloads.json not found beside bench/ or dist/bench/');
}

/** One measured workload, the schema bench/jax/run.py writes too (times in ms; dispatch rows are per call). */
export interface Row {
  name: string;
  kind: Kind;
  shape: string;
  dtype: string;
  median_ms: number;
  p10_ms: number;
  p90_ms: number;
  min_ms: number;
  max_ms: number;
  n: number;
  flops: number;
  bytes: number;
  timing: 'wall';
  /** 'ok', 'not checked', or what was wrong with the output */
  check: string;
  /** measured peak memory, memoryAnalysis(), hidden transfer fraction, kernel count... */
  extra?: Record<string, unknown>;
}

/** A prepared workload: inputs made, ready to be timed. */
export interface Prepared {
  /** The timed call; returns its outputs (any pytree of Arrays). */
  step(): unknown;
  /** Untimed work before each step (a fresh array to read back, say). */
  before?(): void;
  /** Checks one step's outputs: null when right, else what is wrong. */
  check?(out: unknown): string | null;
  /** Takes the outputs instead of disposing them (a training step feeds them back). */
  consume?(out: unknown): void;
  /** Calls that one step makes (dispatch), so a sample is divided by it. */
  callsPerStep?: number;
  /** Figures gathered after timing (peak memory, memoryAnalysis, profiler). */
  extra?(): Record<string, unknown>;
  dispose(): void;
  /** The inputs step() reads, for tests that check outputs themselves. */
  inputs?: Array[];
}

export interface Workload {
  name: string;
  kind: Kind;
  shape: string;
  dtype: string;
  flops: number;
  bytes: number;
  /** The CLI runs it in a child process at full size, so measured peak memory is its own. */
  isolate?: boolean;
  prepare?(): Prepared;
  /** A workload that times itself (compile times come from child processes): samples in ms. */
  measure?(timing: Timing): { samples: number[]; check?: string; extra?: Record<string, unknown> };
}

// ---- naming, shared with bench/jax/common.py ----

export const SHORT_DTYPE: Record<string, string> = { float32: 'f32', bfloat16: 'bf16' };

/** 2^26 for powers of two from 1024 on, else the number (names and shapes both use it). */
export function countLabel(n: number): string {
  const log = Math.log2(n);
  return n >= 1024 && Number.isInteger(log) ? `2^${log}` : String(n);
}

/** 256MiB, 64KiB, or bytes. */
export function bytesLabel(n: number): string {
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n / 2 ** 20}MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024}KiB`;
  return `${n}B`;
}

export const shapeLabel = (shape: readonly number[]): string => shape.join('x');

// ---- inputs ----

let seed = 0;
/** Random normal inputs (never zeros: a kernel that skips work cannot look fast), each from a fresh key. */
export function randomNormal(shape: number[], dtype: 'float32' | 'bfloat16' = 'float32', scale = 1): Array {
  return jax.tidy(() => {
    const x = jax.random.normal(jax.random.key(++seed), shape, { dtype });
    return scale === 1 ? x : jax.numpy.multiply(x, scale);
  });
}

// ---- pytrees of outputs ----

export const leavesOf = (tree: unknown): Array[] => (jax.tree.leaves(tree as never) as unknown[]).filter((x): x is Array => x instanceof jax.Array);

export function blockTree(tree: unknown): void {
  for (const leaf of leavesOf(tree)) leaf.blockUntilReady();
}

export function disposeTree(tree: unknown): void {
  for (const leaf of leavesOf(tree)) leaf.dispose();
}

// ---- statistics ----

/** The q-quantile (0..1) of sorted samples, interpolating linearly (NumPy's default, which common.py uses). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export function summarize(samples: readonly number[]): Pick<Row, 'median_ms' | 'p10_ms' | 'p90_ms' | 'min_ms' | 'max_ms' | 'n'> {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median_ms: quantile(sorted, 0.5),
    p10_ms: quantile(sorted, 0.1),
    p90_ms: quantile(sorted, 0.9),
    min_ms: sorted[0] ?? NaN,
    max_ms: sorted[sorted.length - 1] ?? NaN,
    n: sorted.length,
  };
}

// ---- the timing loop ----

/** A jitted function of fixed inputs, timed; the inputs are freed with the workload. */
export function jitted(fn: (...args: Array[]) => unknown, inputs: Array[], check?: (out: Array, inputs: Array[]) => string | null): Prepared {
  const f = jax.jit(fn);
  return {
    step: () => f(...inputs),
    inputs,
    ...(check ? { check: (out: unknown) => check(out as Array, inputs) } : {}),
    extra: () => ({ kernels: f.kernelCount(...inputs) }),
    dispose: () => disposeTree(inputs),
  };
}

/**
 * Warm-up calls (the first compiles), one checked call, then timed calls:
 * at least min_n, at most max_n, stopping once budget_s of timed calls has passed.
 */
export function timePrepared(p: Prepared, timing: Timing): { samples: number[]; check: string } {
  const finish = (out: unknown) => (p.consume ? p.consume(out) : disposeTree(out));
  const once = (): [number, unknown] => {
    p.before?.();
    const start = performance.now();
    const out = p.step();
    blockTree(out);
    return [performance.now() - start, out];
  };
  for (let i = 0; i < timing.warmup; i++) finish(once()[1]);
  const [, checked] = once();
  let check = 'not checked';
  if (p.check) {
    try {
      check = p.check(checked) ?? 'ok';
    } catch (error) {
      check = `check threw: ${(error as Error).message}`;
    }
  }
  finish(checked);
  const samples: number[] = [];
  let spent = 0;
  while (samples.length < timing.max_n && (samples.length < timing.min_n || spent < timing.budget_s * 1000)) {
    const [ms, out] = once();
    finish(out);
    spent += ms;
    samples.push(ms / (p.callsPerStep ?? 1));
  }
  return { samples, check };
}

/** Runs one workload start to end (inputs made and freed inside) and returns its row. */
export function runWorkload(w: Workload, timing: Timing): Row {
  let samples: number[];
  let check = 'not checked';
  let extra: Record<string, unknown> | undefined;
  if (w.measure) {
    ({ samples, check = 'not checked', extra } = w.measure(timing));
  } else if (w.prepare) {
    const p = w.prepare();
    try {
      ({ samples, check } = timePrepared(p, timing));
      extra = p.extra?.();
    } finally {
      p.dispose();
    }
  } else {
    throw new Error(`gpu-suite: workload ${w.name} has neither prepare() nor measure()`);
  }
  return {
    name: w.name,
    kind: w.kind,
    shape: w.shape,
    dtype: w.dtype,
    ...summarize(samples),
    flops: w.flops,
    bytes: w.bytes,
    timing: 'wall',
    check,
    ...(extra && Object.keys(extra).length ? { extra } : {}),
  };
}

// ---- checks against JS references ----

/** Elements of `got` that differ from `want` by more than atol + rtol·|want|: null when none, else the first few. */
export function compareClose(what: string, got: ArrayLike<number>, want: ArrayLike<number>, rtol: number, atol: number): string | null {
  if (got.length !== want.length) return `${what}: ${got.length} values, expected ${want.length}`;
  const bad: string[] = [];
  for (let i = 0; i < got.length && bad.length < 3; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (!(Math.abs(g - w) <= atol + rtol * Math.abs(w))) bad.push(`[${i}] ${g} vs ${w}`);
  }
  return bad.length ? `${what}: ${bad.join(', ')}` : null;
}

/** The first `count` elements of x, flattened, read to the host (a sample that stays cheap at full size). */
export function headOf(x: Array, count: number): ReturnType<Array['dataSync']> {
  return jax.tidy(() => jax.numpy.reshape(x, [-1]).index([0, Math.min(count, x.size)]).dataSync());
}
