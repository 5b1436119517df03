// jax.profiler for jaxon: `trace(fn, path)` runs fn and writes a Chrome
// trace (the JSON Event Format; open it in Perfetto or chrome://tracing) of
// every step compiled programs ran: kernels on the compute stream, copies
// between memory kinds on the H2D (pinned_host → device) and D2H (device →
// pinned_host) copy streams, and control flow as enclosing spans. On the CPU
// every step runs synchronously on the calling thread, so the tracks show
// the schedule, not overlap; on CUDA each native program runs on all its
// streams as usual with CUDA events around every op, so the spans are device
// times and a copy hidden behind a kernel shows as overlapping it.
import { writeFileSync } from 'node:fs';
import { ValueError, show } from './core/errors.js';

export type Track = 'compute' | 'h2d' | 'd2h' | 'host';

export interface TraceEvent {
  name: string;
  track: Track;
  /** microseconds since the trace began */
  start: number;
  duration: number;
  args?: Record<string, string | number>;
}

const TRACK_IDS: Record<Track, number> = { host: 0, compute: 1, h2d: 2, d2h: 3 };
const TRACK_NAMES: Record<Track, string> = { host: 'host (control flow)', compute: 'compute stream', h2d: 'H2D copy stream', d2h: 'D2H copy stream' };

let active: { origin: number; events: TraceEvent[] } | null = null;

/** Whether a trace is being recorded (the executable checks this before timing steps). */
export function profiling(): boolean {
  return active !== null;
}

/** Records one event that began at `begin` (a performance.now() reading) and ended now. */
export function record(name: string, track: Track, begin: number, args?: TraceEvent['args']): void {
  if (!active) return;
  const now = performance.now();
  active.events.push({ name, track, start: (begin - active.origin) * 1000, duration: (now - begin) * 1000, ...(args ? { args } : {}) });
}

/** Records one event that began at `begin` (on performance.now()'s clock) and lasted `duration` ms (device timings). */
export function recordSpan(name: string, track: Track, begin: number, duration: number, args?: TraceEvent['args']): void {
  if (!active) return;
  active.events.push({ name, track, start: (begin - active.origin) * 1000, duration: Math.max(0, duration) * 1000, ...(args ? { args } : {}) });
}

/** The Chrome trace JSON of a list of events. */
export function chromeTrace(events: readonly TraceEvent[]): string {
  const meta = (Object.keys(TRACK_IDS) as Track[]).map((t) => ({ name: 'thread_name', ph: 'M', pid: 1, tid: TRACK_IDS[t], args: { name: TRACK_NAMES[t] } }));
  const process = { name: 'process_name', ph: 'M', pid: 1, tid: 0, args: { name: 'jaxon' } };
  const body = events.map((e) => ({ name: e.name, ph: 'X', pid: 1, tid: TRACK_IDS[e.track], ts: e.start, dur: e.duration, ...(e.args ? { args: e.args } : {}) }));
  return JSON.stringify({ traceEvents: [process, ...meta, ...body], displayTimeUnit: 'ms' });
}

function finish(path: string): TraceEvent[] {
  const events = active!.events;
  active = null;
  writeFileSync(path, chromeTrace(events));
  return events;
}

/**
 * Runs fn while recording every compiled program's steps, then writes the
 * timeline to `path` (also when fn throws). An async fn is awaited.
 */
export function trace<T>(fn: () => T, path: string): T {
  if (typeof fn !== 'function') throw new TypeError(`jax.profiler.trace: fn must be a function, got ${show(fn)}`);
  if (typeof path !== 'string' || path === '') throw new TypeError(`jax.profiler.trace: path must be a file path, got ${show(path)}`);
  if (active) throw new ValueError('jax.profiler.trace: a trace is already being recorded (traces do not nest)');
  active = { origin: performance.now(), events: [] };
  let result: T;
  try {
    result = fn();
  } catch (error) {
    finish(path);
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(
      (value) => {
        finish(path);
        return value;
      },
      (error) => {
        finish(path);
        throw error;
      },
    ) as T;
  }
  finish(path);
  return result;
}
