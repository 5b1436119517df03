// The reporting half of the GPU benchmark suite: joins jaxon's rows with the
// rows bench/jax/run.py wrote (by name), computes the fraction of the
// roofline (HBM bandwidth measured by JAX's device-to-device copy in the same
// run, peak FLOP/s by device kind from bench/workloads.json) and prints the
// Markdown table a person reads.
import type { Kind, PeakEntry, Row } from './measure.js';

/** What bench/jax/run.py writes: its rows and what it measured about the device. */
export interface JaxReport {
  meta: {
    device_kind?: string;
    /** bytes/s of the copy row (read + write) */
    hbm_bytes_per_s?: number | null;
    peak_flops?: Record<string, number> | null;
    [key: string]: unknown;
  };
  rows: Row[];
}

/** Accepts {meta, rows} or a bare list of rows. */
export function parseJaxReport(json: unknown): JaxReport {
  if (Array.isArray(json)) return { meta: {}, rows: json as Row[] };
  const report = json as Partial<JaxReport>;
  if (!report || !Array.isArray(report.rows)) throw new TypeError('gpu-suite: the --jax file must hold {meta, rows} or a list of rows');
  return { meta: report.meta ?? {}, rows: report.rows };
}

/** The dense peak FLOP/s of a device kind (the first entry whose match it contains), or null. */
export function peakFlopsFor(deviceKind: string, peaks: readonly PeakEntry[]): Record<string, number> | null {
  const entry = peaks.find((p) => deviceKind.includes(p.match));
  return entry ? { bfloat16: entry.bfloat16, float32: entry.float32 } : null;
}

export interface Roofline {
  hbmBytesPerSecond: number | null;
  peakFlops: Record<string, number> | null;
}

const ROOFLINE_KINDS: ReadonlySet<Kind> = new Set(['memory', 'compute', 'step']);

/** The roofline's lower bound on the time, max(bytes / bandwidth, flops / peak), over the measured median: null where neither is known. */
export function rooflineFraction(row: Pick<Row, 'kind' | 'dtype' | 'flops' | 'bytes' | 'median_ms'>, roofline: Roofline): number | null {
  if (!ROOFLINE_KINDS.has(row.kind) || !(row.median_ms > 0)) return null;
  const bound = Math.max(
    row.bytes > 0 && roofline.hbmBytesPerSecond ? row.bytes / roofline.hbmBytesPerSecond : 0,
    row.flops > 0 && roofline.peakFlops?.[row.dtype] ? row.flops / roofline.peakFlops[row.dtype]! : 0,
  );
  return bound > 0 ? bound / (row.median_ms / 1000) : null;
}

/** Bandwidth from a copy row: it reads and writes `bytes` in all. */
export function copyBandwidth(rows: readonly Row[]): number | null {
  const copy = rows.find((r) => r.name.startsWith('copy_'));
  return copy && copy.median_ms > 0 ? copy.bytes / (copy.median_ms / 1000) : null;
}

// ---- formatting ----

/** ms, or µs for dispatch rows and anything under 0.1 ms. */
export function formatTime(row: Pick<Row, 'median_ms' | 'kind'> | undefined): string {
  if (!row || !Number.isFinite(row.median_ms)) return '—';
  const ms = row.median_ms;
  if (row.kind === 'dispatch' || ms < 0.1) return `${(ms * 1000).toFixed(1)} µs`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
}

/** Half the p10–p90 range as a percentage of the median. */
export const formatSpread = (row: Row | undefined): string =>
  row && row.median_ms > 0 ? `±${((100 * (row.p90_ms - row.p10_ms)) / (2 * row.median_ms)).toFixed(1)}%` : '—';

const percent = (f: number | null): string => (f === null ? '—' : `${(100 * f).toFixed(f < 0.1 ? 1 : 0)}%`);

const formatBytes = (n: number): string => (n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : `${(n / 2 ** 20).toFixed(2)} MiB`);

/** GB/s for transfer rows; the measured peak memory for step rows. */
function note(row: Row | undefined): string {
  if (!row) return '';
  const parts: string[] = [];
  if (row.kind === 'transfer' && row.median_ms > 0) parts.push(`${(row.bytes / (row.median_ms / 1000) / 1e9).toFixed(1)} GB/s`);
  const extra = row.extra ?? {};
  if (typeof extra['plain_copy_gbps'] === 'number') parts.push(`plain cuMemcpyAsync ${extra['plain_copy_gbps'].toFixed(1)} GB/s`);
  if (typeof extra['peak_bytes_in_use'] === 'number') parts.push(`peak ${formatBytes(extra['peak_bytes_in_use'])}`);
  if (typeof extra['hidden_transfer_fraction'] === 'number') parts.push(`${(100 * extra['hidden_transfer_fraction']).toFixed(0)}% of transfers hidden`);
  if (row.check !== 'ok' && row.check !== 'not checked') parts.push(`CHECK FAILED: ${row.check}`);
  return parts.join(', ');
}

export interface Joined {
  name: string;
  jaxon?: Row;
  jax?: Row;
  /** JAX time / jaxon time: above 1, jaxon is faster */
  ratio: number | null;
  roofline_jaxon: number | null;
  roofline_jax: number | null;
}

/** jaxon's rows in order, then (with jaxOnly) the JAX rows jaxon did not run. */
export function join(jaxon: readonly Row[], jax: readonly Row[], roofline: Roofline, options: { jaxOnly?: boolean } = {}): Joined[] {
  const byName = new Map(jax.map((r) => [r.name, r]));
  const missing = options.jaxOnly ? jax.map((r) => r.name).filter((n) => !jaxon.some((r) => r.name === n)) : [];
  const names = [...jaxon.map((r) => r.name), ...missing];
  return names.map((name) => {
    const a = jaxon.find((r) => r.name === name);
    const b = byName.get(name);
    return {
      name,
      ...(a ? { jaxon: a } : {}),
      ...(b ? { jax: b } : {}),
      ratio: a && b && a.median_ms > 0 && b.median_ms > 0 ? b.median_ms / a.median_ms : null,
      roofline_jaxon: a ? rooflineFraction(a, roofline) : null,
      roofline_jax: b ? rooflineFraction(b, roofline) : null,
    };
  });
}

/** The Markdown table: with JAX's rows when there are any, else jaxon's alone. */
export function markdownTable(joined: readonly Joined[], withJax: boolean): string {
  const lines: string[] = [];
  if (withJax) {
    lines.push('| workload | jaxon | JAX | ratio (JAX / jaxon) | roofline jaxon / JAX | spread jaxon / JAX | notes (jaxon; JAX) |');
    lines.push('|---|---:|---:|---:|---:|---:|---|');
    for (const j of joined) {
      const ratio = j.ratio === null ? '—' : `${j.ratio.toFixed(2)}x`;
      const notes = [note(j.jaxon), note(j.jax)].filter(Boolean).join('; ');
      lines.push(`| ${j.name} | ${formatTime(j.jaxon)} | ${formatTime(j.jax)} | ${ratio} | ${percent(j.roofline_jaxon)} / ${percent(j.roofline_jax)} | ${formatSpread(j.jaxon)} / ${formatSpread(j.jax)} | ${notes} |`);
    }
  } else {
    lines.push('| workload | shape | dtype | jaxon | roofline | spread | n | notes |');
    lines.push('|---|---|---|---:|---:|---:|---:|---|');
    for (const j of joined) {
      const r = j.jaxon!;
      lines.push(`| ${j.name} | ${r.shape} | ${r.dtype} | ${formatTime(r)} | ${percent(j.roofline_jaxon)} | ${formatSpread(r)} | ${r.n} | ${note(r)} |`);
    }
  }
  return lines.join('\n');
}
