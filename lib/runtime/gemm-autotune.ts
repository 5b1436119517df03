// The GEMM autotune (issue 17, item 5). On a real GPU, the first time a
// tensor-core dot of a shape class is rendered, a few candidate tilings (the
// heuristic's and the next ones it would consider: cuda-decisions.ts
// gemmCandidates) are compiled, each run on random operands and checked
// against the SIMT reference kernel, and the correct ones timed with CUDA
// events; the fastest serves every dot of the class from then on. Results
// persist in the kernel cache folder (gemm-tuning-<hash>.json, one per
// device, NVRTC and jaxon version), and each kernel's header names the choice (`// decision
// gemm tiling: ... (autotuned: ...)`), which Compiled.kernels() shows. A
// shape class is the dtypes, precision, operand layouts and each size rounded
// up to a power of two, as cuBLAS-style heuristics bucket them. On jaxon's
// emulated GPU times mean nothing, so the heuristic decides there, unless a
// test injects a timer (gemmAutotuneHooks); JAXON_GEMM_AUTOTUNE=0 turns the
// autotune off everywhere.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { itemsize } from '../core/dtype.js';
import { packValues } from '../core/host.js';
import type { DotKernel, Kernel } from '../compiler/kernel-ir.js';
import { type GemmFacts, type GemmTiling, forcedGemmPath, gemmCandidates, gemmPath, gemmTiling } from '../compiler/render/cuda-decisions.js';
import { type GemmTarget, dotParams } from '../compiler/render/cuda-dot.js';
import { operandLayout } from '../compiler/render/cuda-gemm.js';
import { viewReach } from '../compiler/render/cuda-common.js';
import { type CudaKernelSource, renderCuda } from '../compiler/render/cuda.js';
import { jaxonVersion, kernelCacheDir, sha256, writeFileAtomic } from './disk-cache.js';

/** What a tiling is chosen for: a class of dots that one tiling serves well. */
export interface GemmShapeClass {
  key: string;
  facts: GemmFacts;
}

/** The kernel chosen for a shape class, and why (measured times). For 'wgmma' the tiling is the mma.sync fallback's. */
export interface GemmTuning {
  path?: 'mma' | 'wgmma';
  tiling: GemmTiling;
  why: string;
}

/** A kernel the autotune tries: an mma.sync tiling, or Hopper's wgmma kernel (whose tiling follows the sizes). */
export interface GemmCandidate {
  path: 'mma' | 'wgmma';
  tiling: GemmTiling;
}

/** How candidates are tried: `check` runs one against the reference kernel, `time` gives ms per launch. */
export interface CandidateRunner {
  check(candidate: GemmCandidate): boolean;
  time(candidate: GemmCandidate): number;
}

/** For tests: a timer that replaces CUDA events and lets the autotune run on the emulated GPU. */
export const gemmAutotuneHooks: { timer: ((candidate: GemmCandidate) => number) | null } = { timer: null };

const bucket = (n: number) => (n <= 1 ? 1 : 2 ** Math.ceil(Math.log2(n)));

/** The shape class of a dot that goes to tensor cores on a device of compute capability `sm`, or null. */
export function gemmShapeClass(kernel: DotKernel, params: readonly number[], alignments: readonly number[], sm: number): GemmShapeClass | null {
  const p = dotParams(kernel, params);
  const facts: GemmFacts = {
    B: p.B, M: p.M, N: p.N, K: p.K, inputDtype: kernel.inputDtype, outputDtype: kernel.outputDtype, highest: kernel.precision === 'highest', sm, forced: forcedGemmPath(),
  };
  if (gemmPath(facts).choice === 'simt' || p.B * p.M * p.N === 0) return null;
  const nOut = kernel.epilogue ? kernel.epilogue.outputs.length : 1;
  const e = itemsize(kernel.inputDtype);
  const lhs = operandLayout(p.lhs, alignments[nOut] ?? 16, e);
  const rhs = operandLayout([p.rhs[0], p.rhs[2], p.rhs[1]], alignments[nOut + 1] ?? 16, e);
  const layouts = `${lhs.contiguous}${lhs.chunk}/${rhs.contiguous}${rhs.chunk}`;
  const key = `sm${sm} ${kernel.inputDtype}->${kernel.outputDtype}${facts.highest ? ' highest' : ''} B${bucket(p.B)} M${bucket(p.M)} N${bucket(p.N)} K${bucket(p.K)} ${layouts}`;
  return { key, facts };
}

const describe = (c: GemmCandidate) => (c.path === 'wgmma' ? 'wgmma' : `${c.tiling.blockM}x${c.tiling.blockN}${c.tiling.splitK > 1 ? `/${c.tiling.splitK}` : ''}`);

/**
 * Tries the heuristic's tiling and the next `count - 1` mma.sync candidates, and on sm_90a Hopper's wgmma kernel for
 * 16-bit operands: each must agree with the reference kernel; the fastest correct one wins (the heuristic's when none
 * is correct, which a GPU should never see).
 */
export function autotune(cls: GemmShapeClass, runner: CandidateRunner, count = 4): GemmTuning {
  const heuristic = gemmTiling(cls.facts).choice;
  const same = (a: GemmTiling, b: GemmTiling) => JSON.stringify(a) === JSON.stringify(b);
  const tilings = [heuristic, ...gemmCandidates(cls.facts).filter((c) => !same(c, heuristic))].slice(0, count);
  const candidates: GemmCandidate[] = tilings.map((tiling) => ({ path: 'mma', tiling }));
  if (cls.facts.sm === 90 && cls.facts.inputDtype !== 'float32') candidates.push({ path: 'wgmma', tiling: heuristic });
  const results = candidates.map((candidate) => {
    const correct = runner.check(candidate);
    return { candidate, correct, ms: correct ? runner.time(candidate) : Infinity };
  });
  const best = results.filter((r) => r.correct).sort((a, b) => a.ms - b.ms)[0];
  const tried = results.map((r) => `${describe(r.candidate)} ${r.correct ? `${r.ms.toPrecision(3)} ms` : 'wrong'}`).join(', ');
  if (!best) return { tiling: heuristic, why: `autotune: no candidate agreed with the reference kernel (${tried}); the heuristic's` };
  const why = `autotuned over ${results.length} candidates: ${tried}`;
  return best.candidate.path === 'wgmma' ? { path: 'wgmma', tiling: heuristic, why } : { tiling: best.candidate.tiling, why };
}

/** Tunings by shape class, persisted as JSON in the kernel cache folder (rewritten atomically on each new entry). */
export class GemmTuningStore {
  #entries: Record<string, GemmTuning> | undefined;
  constructor(readonly file: string, readonly identity: string) {}

  #load(): Record<string, GemmTuning> {
    if (this.#entries) return this.#entries;
    this.#entries = {};
    try {
      const saved = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { identity?: string; entries?: Record<string, GemmTuning> };
      if (saved.identity === this.identity && saved.entries) this.#entries = saved.entries;
    } catch {
      // no file yet, or an unreadable one: tune again
    }
    return this.#entries;
  }

  get(key: string): GemmTuning | undefined {
    return this.#load()[key];
  }

  set(key: string, tuning: GemmTuning): void {
    const entries = this.#load();
    entries[key] = tuning;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      writeFileAtomic(this.file, JSON.stringify({ identity: this.identity, entries }, null, 1));
    } catch {
      // a read-only cache folder: the tuning lives as long as the process
    }
  }
}

/** Whether the autotune may run: JAXON_GEMM_AUTOTUNE=0 turns it off. */
export function gemmAutotuneEnabled(): boolean {
  return process.env['JAXON_GEMM_AUTOTUNE'] !== '0';
}

/** What the device runner needs of the CUDA backend. */
export interface TuningDevice {
  loadKernelsSync(sources: readonly CudaKernelSource[]): Map<string, unknown>;
  fromHost(bytes: Uint8Array): { handle: unknown };
  toHostSync(buffer: { handle: unknown }): Uint8Array;
  free(buffer: { handle: unknown }): void;
  launch(fn: unknown, source: CudaKernelSource, buffers: readonly { handle: unknown }[]): void;
  /** ms per launch of `fn` over `buffers`, from CUDA events over a few launches */
  time(fn: unknown, source: CudaKernelSource, buffers: readonly { handle: unknown }[]): number;
}

/** Deterministic values in [-1, 1) packed as dtype. */
function randomBytes(dtype: DotKernel['inputDtype'], n: number, seed: number): Uint8Array {
  let s = seed >>> 0 || 1;
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    values[i] = ((s >>> 0) / 4294967296) * 2 - 1;
  }
  return packValues(values, dtype);
}

/** A runner that compiles, checks and times candidates of one dot on a device, with random operands. */
export function deviceRunner(device: TuningDevice, kernel: DotKernel, params: readonly number[], alignments: readonly number[], sm: number, tma = true): CandidateRunner {
  const p = dotParams(kernel, params);
  const outputs = kernel.epilogue ? kernel.epilogue.outputs.map((o) => o.dtype) : [kernel.outputDtype];
  const inputBytes = [
    (viewReach([p.B, p.M, p.K], p.lhs) + 1) * itemsize(kernel.inputDtype),
    (viewReach([p.B, p.K, p.N], p.rhs) + 1) * itemsize(kernel.inputDtype),
    ...(kernel.epilogue?.inputs ?? []).map((e, i) => (viewReach([p.B, p.M, p.N], p.views[i]!) + 1) * itemsize(e.dtype)),
  ];
  const inputDtypes = [kernel.inputDtype, kernel.inputDtype, ...(kernel.epilogue?.inputs ?? []).map((e) => e.dtype)];
  const render = (gemm: GemmTarget) => renderCuda(kernel, params, { alignments: [...alignments], gemm });
  let reference: { buffers: { handle: unknown }[]; outputs: Float32Array[] } | undefined;
  const sources = new Map<string, CudaKernelSource>();
  const sourceOf = (candidate: GemmCandidate) => {
    const key = JSON.stringify(candidate);
    let s = sources.get(key);
    if (!s) sources.set(key, (s = render({ sm, path: candidate.path, tuned: { tiling: candidate.tiling, why: 'an autotune candidate' }, ...(tma ? {} : { tma }) })));
    return s;
  };
  const readOutputs = (buffers: { handle: unknown }[]) => outputs.map((dtype, j) => toFloats(device.toHostSync(buffers[j]!), dtype));
  const prepare = () => {
    if (reference) return reference;
    const inputs = inputBytes.map((bytes, i) => device.fromHost(randomBytes(inputDtypes[i]!, Math.ceil(bytes / itemsize(inputDtypes[i]!)), 17 + i)));
    const outs = outputs.map((dtype) => device.fromHost(new Uint8Array(p.B * p.M * p.N * itemsize(dtype))));
    const buffers = [...outs, ...inputs];
    const source = render({ sm, path: 'simt' });
    device.launch(device.loadKernelsSync([source]).get(source.source), source, buffers);
    reference = { buffers, outputs: readOutputs(buffers) };
    return reference;
  };
  return {
    check(candidate) {
      const ref = prepare();
      const source = sourceOf(candidate);
      const outs = outputs.map((dtype) => device.fromHost(new Uint8Array(p.B * p.M * p.N * itemsize(dtype)).fill(0xab)));
      try {
        device.launch(device.loadKernelsSync([source]).get(source.source), source, [...outs, ...ref.buffers.slice(outputs.length)]);
        const got = readOutputs(outs);
        // tf32 and 16-bit results differ from the reference's f32 sums by rounding; a wrong tile by whole products
        return got.every((g, j) => agree(g, ref.outputs[j]!, 2 ** -6));
      } finally {
        for (const o of outs) device.free(o);
      }
    },
    time(candidate) {
      const ref = prepare();
      const source = sourceOf(candidate);
      const timer = gemmAutotuneHooks.timer;
      if (timer) return timer(candidate);
      return device.time(device.loadKernelsSync([source]).get(source.source), source, ref.buffers);
    },
  };
}

function toFloats(bytes: Uint8Array, dtype: string): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / itemsize(dtype as DotKernel['inputDtype']);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (dtype === 'float32') out[i] = view.getFloat32(4 * i, true);
    else if (dtype === 'bfloat16') out[i] = new Float32Array(new Uint32Array([view.getUint16(2 * i, true) << 16]).buffer)[0]!;
    else if (dtype === 'float16') out[i] = halfToFloat(view.getUint16(2 * i, true));
    else out[i] = NaN;
  }
  return out;
}

function halfToFloat(h: number): number {
  const e = (h >> 10) & 0x1f, m = h & 0x3ff, s = h & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Whether two outputs agree to `relative` of the reference's largest magnitude (NaN where the other has NaN). */
function agree(got: Float32Array, want: Float32Array, relative: number): boolean {
  let scale = 0;
  for (const v of want) if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
  const bound = relative * scale + 1e-6;
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i]!) !== Number.isNaN(got[i]!)) return false;
    if (!Number.isNaN(want[i]!) && !(Math.abs(got[i]! - want[i]!) <= bound || got[i] === want[i])) return false;
  }
  return true;
}

/**
 * The GEMM target of a kernel on a device: its compute capability and, for a tensor-core dot, the tuned tiling of its
 * shape class (tuned now if it is the class's first dot and the autotune may run).
 */
export function gemmTargetFor(
  kernel: Kernel, params: readonly number[], alignments: readonly number[],
  device: { sm: number; emulated: boolean; store: GemmTuningStore; runner: () => TuningDevice; tma?: boolean },
): GemmTarget | undefined {
  if (kernel.kind !== 'dot') return undefined;
  // the driver's TMA support (cuTensorMapEncodeTiled) shapes the wgmma kernel's producer, candidates' too
  const base: GemmTarget = device.tma === false ? { sm: device.sm, tma: false } : { sm: device.sm };
  const cls = gemmShapeClass(kernel, params, alignments, device.sm);
  if (!cls) return base;
  const known = device.store.get(cls.key);
  if (known) return { ...base, tuned: known };
  if (!gemmAutotuneEnabled() || (device.emulated && !gemmAutotuneHooks.timer)) return base;
  const tuning = autotune(cls, deviceRunner(device.runner(), kernel, params, alignments, device.sm, device.tma !== false));
  device.store.set(cls.key, tuning);
  return { ...base, tuned: tuning };
}

/** The store of a device: one file per kernel cache folder, its entries valid for one device, NVRTC and jaxon. */
export function gemmTuningStore(deviceName: string, nvrtcVersion: string, arch: string): GemmTuningStore {
  const identity = `${deviceName} | ${arch} | NVRTC ${nvrtcVersion} | jaxon ${jaxonVersion()}`;
  return new GemmTuningStore(path.join(kernelCacheDir(), `gemm-tuning-${sha256(identity).slice(0, 12)}.json`), identity);
}
