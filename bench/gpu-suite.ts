// The GPU benchmark suite, jaxon's side (issue 12): the workloads of
// bench/jax/run.py (JAX's side) with the same shapes, dtypes and names, both
// read from bench/workloads.json. Wall time around each call and
// blockUntilReady(), after warm-up; median and p10/p90 of N runs. With the
// JSON that run.py wrote in the same session on the same device, it prints
// jaxon, JAX, their ratio, the fraction of the roofline (HBM bandwidth from
// JAX's device-to-device copy, peak FLOP/s by device kind) and the spread.
//
//   node dist/bench/gpu-suite.js --sizes full|tiny [--only a,b] [--jax FILE.json] [--out FILE.json] [--append-md FILE.md]
//
// --only takes workload names or name prefixes (gemm, tutorial_, adam_step).
// At full size the CLI runs the step workloads (the tutorial's programs) in
// child processes of their own, so measured peak memory is theirs alone
// (--no-isolate turns that off). runSuite() is the same suite in-process,
// for test/bench-dry-run.test.ts's dry run at tiny sizes.
import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as jax from '../lib/index.js';
import { kernelWorkloads } from './jaxon/kernels.js';
import { runWorkload, workloadSpec, type Row, type SizeSet, type Workload } from './jaxon/measure.js';
import { copyBandwidth, join, markdownTable, parseJaxReport, peakFlopsFor, type JaxReport, type Roofline } from './jaxon/report.js';
import { compileChild, tutorialWorkloads } from './jaxon/tutorial.js';

export type { Row, SizeSet, Workload } from './jaxon/measure.js';

const SIZE_SETS: readonly SizeSet[] = ['full', 'tiny'];

/** Every workload at a size set, in the order the suite runs them. */
export function workloads(sizes: SizeSet): Workload[] {
  const spec = workloadSpec().sizes[sizes];
  return [...kernelWorkloads(spec), ...tutorialWorkloads(spec, sizes)];
}

/** The workloads `only` names: exact names or name prefixes; an entry matching nothing is an error that lists the names. */
export function selectWorkloads(all: readonly Workload[], only?: readonly string[]): Workload[] {
  if (!only || only.length === 0) return [...all];
  for (const want of only) {
    if (!all.some((w) => w.name === want || w.name.startsWith(want))) {
      throw new TypeError(`gpu-suite: --only ${JSON.stringify(want)} matches no workload; the workloads are ${all.map((w) => w.name).join(', ')}`);
    }
  }
  return all.filter((w) => only.some((want) => w.name === want || w.name.startsWith(want)));
}

export interface SuiteOptions {
  sizes: SizeSet;
  only?: readonly string[];
  /** Runs `isolate` workloads in child processes (the CLI's default at full size). */
  isolate?: boolean;
  /** Called with a line per finished workload. */
  log?: (line: string) => void;
  /** A workload that throws becomes a row whose check says so (the CLI's choice: one failure must not cost a GPU session the rest). */
  keepGoing?: boolean;
}

function errorRow(w: Workload, error: unknown): Row {
  return {
    name: w.name, kind: w.kind, shape: w.shape, dtype: w.dtype,
    median_ms: NaN, p10_ms: NaN, p90_ms: NaN, min_ms: NaN, max_ms: NaN, n: 0,
    flops: w.flops, bytes: w.bytes, timing: 'wall',
    check: `error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
  };
}

const SELF = fileURLToPath(import.meta.url);

/** One workload in a child process; its rows come back as the last line of stdout. */
function runIsolated(w: Workload, sizes: SizeSet): Row {
  const stdout = execFileSync(process.execPath, [SELF, '--sizes', sizes, '--only', w.name, '--rows-child'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const rows = JSON.parse(stdout.trim().split('\n').pop()!) as Row[];
  const row = rows.find((r) => r.name === w.name);
  if (!row) throw new Error(`gpu-suite: the child process for ${w.name} returned no row`);
  return { ...row, extra: { ...row.extra, isolated: true } };
}

/** Runs the suite and returns its rows; each workload makes and frees its own inputs. */
export function runSuite(options: SuiteOptions): Row[] {
  const { sizes, only, isolate = false, log, keepGoing = false } = options;
  if (!SIZE_SETS.includes(sizes)) throw new TypeError(`gpu-suite: sizes must be 'full' or 'tiny', got ${JSON.stringify(sizes)}`);
  const timing = workloadSpec().sizes[sizes].timing;
  const rows: Row[] = [];
  for (const w of selectWorkloads(workloads(sizes), only)) {
    let row: Row;
    try {
      row = isolate && w.isolate ? runIsolated(w, sizes) : runWorkload(w, timing);
    } catch (error) {
      if (!keepGoing) throw error;
      console.error(error);
      row = errorRow(w, error);
    }
    rows.push(row);
    log?.(row.n > 0
      ? `${row.name}: median ${row.median_ms.toPrecision(4)} ms (p10 ${row.p10_ms.toPrecision(3)}, p90 ${row.p90_ms.toPrecision(3)}, n ${row.n}), check ${row.check}`
      : `${row.name}: ${row.check}`);
  }
  return rows;
}

/** The device and environment lines the output starts with. */
export function environmentLines(): string[] {
  const device = jax.devices()[0]!;
  const info = jax.environmentInfo();
  return [
    `device: ${device} (${device.deviceKind}), platform ${info.platform}`,
    `environment: ${JSON.stringify(info)}`,
    `host: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
    'times are wall time: performance.now() around the call and blockUntilReady() of its outputs, after warm-up; median of n runs, spread = half the p10–p90 range',
  ];
}

// ---- the command line ----

interface Cli {
  sizes: SizeSet;
  only?: string[];
  jax?: string;
  out?: string;
  appendMd?: string;
  isolate: boolean;
  rowsChild: boolean;
}

function parseArgs(argv: readonly string[]): Cli {
  let sizes: SizeSet = 'tiny';
  let isolate: boolean | undefined;
  const cli: Partial<Cli> = {};
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new TypeError(`gpu-suite: ${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    switch (arg) {
      case '--sizes': {
        const v = value(i++, arg);
        if (v !== 'full' && v !== 'tiny') throw new TypeError(`gpu-suite: --sizes must be full or tiny, got ${JSON.stringify(v)}`);
        sizes = v;
        break;
      }
      case '--only':
        cli.only = value(i++, arg).split(',').filter(Boolean);
        break;
      case '--jax':
        cli.jax = value(i++, arg);
        break;
      case '--out':
        cli.out = value(i++, arg);
        break;
      case '--append-md':
        cli.appendMd = value(i++, arg);
        break;
      case '--isolate':
        isolate = true;
        break;
      case '--no-isolate':
        isolate = false;
        break;
      case '--rows-child':
        cli.rowsChild = true;
        break;
      default:
        throw new TypeError(`gpu-suite: unknown argument ${JSON.stringify(arg)} (expected --sizes full|tiny, --only a,b, --jax FILE, --out FILE, --append-md FILE, --isolate, --no-isolate)`);
    }
  }
  return { ...cli, sizes, isolate: isolate ?? sizes === 'full', rowsChild: cli.rowsChild ?? false };
}

function main(argv: readonly string[]): void {
  if (argv[0] === '--compile-child') {
    const sizes = argv[1] as SizeSet;
    compileChild(workloadSpec().sizes[sizes].tutorial);
    return;
  }
  const cli = parseArgs(argv);
  if (cli.rowsChild) {
    console.log(JSON.stringify(runSuite({ sizes: cli.sizes, ...(cli.only ? { only: cli.only } : {}) })));
    return;
  }
  const header = environmentLines();
  console.log(`# jaxon GPU benchmark suite, --sizes ${cli.sizes}\n\n${header.join('\n')}\n`);
  const jaxReport: JaxReport | null = cli.jax ? parseJaxReport(JSON.parse(readFileSync(cli.jax, 'utf8'))) : null;
  const rows = runSuite({ sizes: cli.sizes, ...(cli.only ? { only: cli.only } : {}), isolate: cli.isolate, keepGoing: true, log: (line) => console.log(line) });

  // JAX's copy measures the bandwidth when its rows are here; jaxon's own copy row otherwise
  const deviceKind = jaxReport?.meta.device_kind ?? jax.devices()[0]!.deviceKind;
  const roofline: Roofline = {
    hbmBytesPerSecond: jaxReport?.meta.hbm_bytes_per_s ?? copyBandwidth(jaxReport?.rows ?? []) ?? copyBandwidth(rows),
    peakFlops: jaxReport?.meta.peak_flops ?? peakFlopsFor(deviceKind, workloadSpec().peaks),
  };
  // with --only, JAX's other rows are not this comparison's business
  const joined = join(rows, jaxReport?.rows ?? [], roofline, { jaxOnly: !cli.only });
  const table = markdownTable(joined, jaxReport !== null);
  const bandwidth = roofline.hbmBytesPerSecond ? `${(roofline.hbmBytesPerSecond / 1e9).toFixed(0)} GB/s (${jaxReport ? "JAX's" : "jaxon's"} device-to-device copy)` : 'unknown';
  const peaks = roofline.peakFlops ? Object.entries(roofline.peakFlops).map(([d, f]) => `${d} ${(f / 1e12).toFixed(0)} TFLOP/s`).join(', ') : `unknown for ${deviceKind}`;
  const legend = `roofline: HBM ${bandwidth}; peak ${peaks}. ratio = JAX time / jaxon time (above 1: jaxon is faster).`;
  console.log(`\n${legend}\n\n${table}`);
  const failed = rows.filter((r) => r.check !== 'ok' && r.check !== 'not checked');
  if (failed.length) console.log(`\n${failed.length} workload(s) computed wrong results: ${failed.map((r) => `${r.name} (${r.check})`).join('; ')}`);

  const meta = { date: new Date().toISOString(), sizes: cli.sizes, device: String(jax.devices()[0]), device_kind: jax.devices()[0]!.deviceKind, environment: jax.environmentInfo(), header, roofline };
  if (cli.out) writeFileSync(cli.out, JSON.stringify({ meta, rows, ...(jaxReport ? { jax_meta: jaxReport.meta, joined } : {}) }, null, 2) + '\n');
  if (cli.appendMd) appendFileSync(cli.appendMd, `\n## ${meta.date.slice(0, 10)}, ${deviceKind}, --sizes ${cli.sizes}\n\n${header.join('  \n')}  \n${legend}\n\n${table}\n`);
  if (failed.length) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
