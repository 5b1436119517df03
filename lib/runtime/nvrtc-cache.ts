// Turns generated CUDA C++ into loadable images with NVRTC, off the JS thread
// (the addon compiles on libuv's thread pool, so many kernels compile in
// parallel), and caches them twice, like kernel-cache.ts does for C kernels:
// in memory by key, and on disk ($JAXON_CACHE_DIR or ~/.cache/jaxon/kernels)
// as <key>.cubin or <key>.ptx beside the source (<key>.cu, for people to read)
// and a manifest (<key>.json, written last, with the image's sha256).
// The key hashes the kernel name, source, NVRTC options (which carry the
// target architecture), NVRTC's version and jaxon's version.
//
// Targets: CUBIN for the device's exact architecture (sm_90a on Hopper,
// sm_100a on Blackwell, where the arch-specific features live), and PTX for
// the newest virtual architecture NVRTC knows when it is older than the
// device, or when NVRTC refuses the real one; the driver compiles PTX at load.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { show, ValueError } from '../core/errors.js';
import type { CudaCompileResult } from './cuda-addon.js';
import { jaxonPackageRoot, jaxonVersion, kernelCacheDir, sha256, writeFileAtomic } from './disk-cache.js';
import { native } from './native.js';
import { kernelHeaders, kernelHeadersDigest } from './kernel-headers.js';

/** The kernel headers as NVRTC's in-memory headers: [includeName, content] pairs. */
const headerPairs = (): [string, string][] => kernelHeaders().map((h) => [h.name, h.content]);

/** What NVRTC compiles for: derived from the device and the NVRTC found. */
export interface CudaTarget {
  /** 'sm_90a' (CUBIN) or 'compute_90' (PTX). */
  readonly arch: string;
  readonly kind: 'cubin' | 'ptx';
  /** NVRTC's 'major.minor'. */
  readonly nvrtcVersion: string;
  /** Set on jaxon's emulated GPU: what its images depend on beyond the source (a hash of the emulation header). */
  readonly emulator?: string;
}

export interface CudaImage {
  readonly name: string;
  readonly source: string;
  readonly key: string;
  readonly kind: 'cubin' | 'ptx';
  readonly arch: string;
  readonly image: Uint8Array;
  /** NVRTC's warnings ('' when silent), kept in the manifest for disk hits. */
  readonly log: string;
}

export interface NvrtcCacheStats {
  memoryHits: number;
  diskHits: number;
  compiles: number;
  /** Wall time from queueing each compile to its result, summed (compiles overlap). */
  compileMs: number;
  corruptEntries: number;
  /** Compiles retried as PTX because NVRTC refused the real architecture. */
  ptxFallbacks: number;
}

// --std=c++17 for the renderer's constexpr helpers; -default-device makes
// unannotated functions __device__. Float rounding is fixed by the renderer's
// __f*_rn intrinsics, so no math flag is needed (and --use_fast_math is wrong).
const baseOptions = ['-default-device', '--std=c++17'];

const cIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const memoryCache = new Map<string, CudaImage>();
const inFlight = new Map<string, Promise<CudaImage>>();
const stats: NvrtcCacheStats = { memoryHits: 0, diskHits: 0, compiles: 0, compileMs: 0, corruptEntries: 0, ptxFallbacks: 0 };

/** Counters since the process started. */
export function nvrtcCacheStats(): NvrtcCacheStats {
  return { ...stats };
}

/** Forgets in-memory images, so the next compile goes to disk; for tests. */
export function clearMemoryNvrtcCache(): void {
  memoryCache.clear();
}

/**
 * The target for a device of compute capability [major, minor] with an
 * NVRTC of `nvrtcVersion` that can build CUBIN for `nvrtcArchs` (e.g. [75, 80, 90]).
 */
export function cudaTarget(computeCapability: readonly [number, number], nvrtcVersion: string, nvrtcArchs: readonly number[]): CudaTarget {
  const [major, minor] = computeCapability;
  if (!Number.isInteger(major) || !Number.isInteger(minor) || major < 1 || minor < 0) {
    throw new ValueError(`cudaTarget: computeCapability must be [major, minor], got ${show(computeCapability)}`);
  }
  const sm = major * 10 + minor;
  const [nvrtcMajor = 0, nvrtcMinor = 0] = nvrtcVersion.split('.').map(Number);
  const nvrtc = nvrtcMajor * 10 + nvrtcMinor;
  if (nvrtcArchs.length === 0 || nvrtcArchs.includes(sm)) {
    // Arch-specific variants: sm_90a from NVRTC 12.0, sm_100a from 12.8.
    const specific = (sm === 90 && nvrtc >= 120) || (sm === 100 && nvrtc >= 128);
    return { arch: `sm_${sm}${specific ? 'a' : ''}`, kind: 'cubin', nvrtcVersion };
  }
  const older = nvrtcArchs.filter((a) => a <= sm);
  if (older.length === 0) {
    throw new ValueError(
      `cudaTarget: NVRTC ${nvrtcVersion} compiles for ${nvrtcArchs.map((a) => `sm_${a}`).join(', ')}, ` +
        `all newer than this device (sm_${sm})`,
    );
  }
  return { arch: `compute_${Math.max(...older)}`, kind: 'ptx', nvrtcVersion };
}

let emulatorIdentityMemo: string | undefined;

/**
 * What the emulated GPU's images depend on besides source and options: the
 * emulation header, the emulator's kernel build (its identification string)
 * and the knobs that change how kernels are built, hashed; part of the cache key.
 */
export function emulatorIdentity(emulator: string): string {
  if (emulatorIdentityMemo !== undefined) return emulatorIdentityMemo;
  const root = jaxonPackageRoot();
  const hash = createHash('sha256').update(emulator);
  for (const file of ['jaxon_emu.h', 'emu_abi.h', 'jaxon_emu_tensor.h']) {
    try {
      hash.update(root ? fs.readFileSync(path.join(root, 'cuda', 'emulator', file)) : `no package root for ${file}`);
    } catch {
      hash.update(`missing ${file}`);
    }
  }
  for (const knob of ['JAXON_CUDA_EMULATOR_CXX', 'JAXON_CUDA_EMULATOR_OPT', 'JAXON_CUDA_EMULATOR_CHECK']) hash.update(`${knob}=${process.env[knob] ?? ''}`);
  emulatorIdentityMemo = `jaxon-emulator-${hash.digest('hex').slice(0, 16)}`;
  return emulatorIdentityMemo;
}

/** The NVRTC options for a target. */
export function nvrtcOptions(target: CudaTarget): string[] {
  return [`--gpu-architecture=${target.arch}`, ...baseOptions];
}

/** The PTX target used when NVRTC refuses a real architecture. */
function ptxFallback(target: CudaTarget): CudaTarget {
  return { ...target, arch: target.arch.replace(/^sm_(\d+)a?$/, 'compute_$1'), kind: 'ptx' };
}

function checkKernel(fn: string, name: string, source: string): void {
  if (typeof name !== 'string' || !cIdentifier.test(name) || name.length > 200) {
    throw new ValueError(`${fn}: kernel name must be a C identifier of at most 200 characters, got ${show(name)}`);
  }
  if (typeof source !== 'string' || source.length === 0) {
    throw new TypeError(`${fn}: source of kernel '${name}' must be a non-empty string, got ${show(source)}`);
  }
}

function imageKey(name: string, source: string, target: CudaTarget): string {
  return sha256(
    JSON.stringify({
      name, source, options: nvrtcOptions(target), headers: kernelHeadersDigest(), nvrtc: target.nvrtcVersion, arch: target.arch, jaxon: jaxonVersion(),
      ...(target.emulator ? { emulator: target.emulator } : {}),
    }),
  );
}

interface EntryPaths {
  image: string;
  source: string;
  manifest: string;
}

interface Manifest {
  name: string;
  key: string;
  kind: 'cubin' | 'ptx';
  arch: string;
  sha256: string;
  nvrtc: string;
  options: string[];
  log: string;
  createdAt: string;
}

function entryPaths(key: string, kind: 'cubin' | 'ptx'): EntryPaths {
  const dir = kernelCacheDir();
  return {
    image: path.join(dir, `${key}.${kind}`),
    source: path.join(dir, `${key}.cu`),
    manifest: path.join(dir, `${key}.json`),
  };
}

// A complete entry whose image matches its checksum, or undefined (counted as corrupt when damaged).
function loadFromDisk(name: string, source: string, key: string, target: CudaTarget): CudaImage | undefined {
  const entry = entryPaths(key, target.kind);
  if (!fs.existsSync(entry.manifest) && !fs.existsSync(entry.image)) return undefined;
  try {
    const manifest = JSON.parse(fs.readFileSync(entry.manifest, 'utf8')) as Partial<Manifest>;
    const image = new Uint8Array(fs.readFileSync(entry.image));
    if (manifest.key !== key || manifest.name !== name || manifest.kind !== target.kind || manifest.sha256 !== sha256(image)) {
      stats.corruptEntries++;
      return undefined;
    }
    stats.diskHits++;
    const log = typeof manifest.log === 'string' ? manifest.log : '';
    return Object.freeze({ name, source, key, kind: target.kind, arch: target.arch, image, log });
  } catch {
    stats.corruptEntries++;
    return undefined;
  }
}

function store(name: string, source: string, key: string, target: CudaTarget, result: CudaCompileResult): CudaImage {
  const entry = entryPaths(key, target.kind);
  try {
    fs.mkdirSync(path.dirname(entry.image), { recursive: true });
    writeFileAtomic(entry.source, source);
    writeFileAtomic(entry.image, result.image);
    const manifest: Manifest = {
      name,
      key,
      kind: target.kind,
      arch: target.arch,
      sha256: sha256(result.image),
      nvrtc: target.nvrtcVersion,
      options: nvrtcOptions(target),
      log: result.log,
      createdAt: new Date().toISOString(),
    };
    writeFileAtomic(entry.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  } catch {
    // A read-only or full disk costs a recompile next time, nothing more.
  }
  dumpSource(name, key, source);
  return Object.freeze({ name, source, key, kind: target.kind, arch: target.arch, image: result.image, log: result.log });
}

// JAXON_DUMP_DIR collects every kernel source a run builds, named readably.
function dumpSource(name: string, key: string, source: string): void {
  const dumpDir = process.env.JAXON_DUMP_DIR;
  if (!dumpDir || !dumpDir.trim()) return;
  fs.mkdirSync(dumpDir, { recursive: true });
  writeFileAtomic(path.join(dumpDir, `${name}-${key.slice(0, 8)}.cu`), source);
}

function refusedArch(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'NVRTC_ERROR_INVALID_OPTION';
}

function cached(name: string, source: string, target: CudaTarget): { key: string; image?: CudaImage } {
  const key = imageKey(name, source, target);
  const known = memoryCache.get(key);
  if (known) {
    stats.memoryHits++;
    return { key, image: known };
  }
  const fromDisk = loadFromDisk(name, source, key, target);
  if (fromDisk) memoryCache.set(key, fromDisk);
  return { key, image: fromDisk };
}

/**
 * Compiles (or finds in the memory or disk cache) a CUDA kernel whose source
 * defines `extern "C" __global__ void name(...)`; NVRTC runs on a worker thread.
 * Concurrent requests for one key share one compile.
 */
export function compileCudaKernel(name: string, source: string, target: CudaTarget): Promise<CudaImage> {
  checkKernel('compileCudaKernel', name, source);
  const { key, image } = cached(name, source, target);
  if (image) return Promise.resolve(image);
  const pending = inFlight.get(key);
  if (pending) return pending;
  const started = performance.now();
  const compile = (async () => {
    let used = target;
    let result: CudaCompileResult;
    try {
      result = await native().cudaCompile(source, name, nvrtcOptions(target), headerPairs());
    } catch (error) {
      if (target.kind !== 'cubin' || !refusedArch(error)) throw error;
      stats.ptxFallbacks++;
      used = ptxFallback(target);
      result = await native().cudaCompile(source, name, nvrtcOptions(used), headerPairs());
    }
    // a synchronous caller (dataSync right after the op) took this compile's result first (the addon hands a
    // synchronous compile the pool's twin job, cuda_compile.c finished_twin) and stored it
    const taken = memoryCache.get(key);
    if (taken) return taken;
    stats.compiles++;
    stats.compileMs += performance.now() - started;
    const compiled = store(name, source, imageKey(name, source, used), used, result);
    memoryCache.set(key, compiled);
    return compiled;
  })();
  inFlight.set(key, compile);
  const settle = () => inFlight.delete(key);
  compile.then(settle, settle);
  return compile;
}

/**
 * compileCudaKernel for synchronous callers (dataSync on work whose kernels
 * are still compiling): NVRTC runs on the calling thread.
 */
export function compileCudaKernelSync(name: string, source: string, target: CudaTarget): CudaImage {
  checkKernel('compileCudaKernelSync', name, source);
  const { key, image } = cached(name, source, target);
  if (image) return image;
  const started = performance.now();
  let used = target;
  let result: CudaCompileResult;
  try {
    result = native().cudaCompileSync(source, name, nvrtcOptions(target), headerPairs());
  } catch (error) {
    if (target.kind !== 'cubin' || !refusedArch(error)) throw error;
    stats.ptxFallbacks++;
    used = ptxFallback(target);
    result = native().cudaCompileSync(source, name, nvrtcOptions(used), headerPairs());
  }
  stats.compiles++;
  stats.compileMs += performance.now() - started;
  const compiled = store(name, source, imageKey(name, source, used), used, result);
  memoryCache.set(key, compiled);
  return compiled;
}

/**
 * Compiles many kernels for a caller that needs them all before it can go on
 * (a jit executable): cache hits come from memory or disk, the misses compile
 * in one parallel NVRTC batch on native threads while this thread waits.
 */
export function compileCudaKernelsSync(kernels: readonly { name: string; source: string }[], target: CudaTarget): CudaImage[] {
  const out: (CudaImage | undefined)[] = kernels.map(({ name, source }) => {
    checkKernel('compileCudaKernelsSync', name, source);
    return cached(name, source, target).image;
  });
  const misses = kernels.map((k, i) => ({ ...k, i })).filter(({ i }) => out[i] === undefined);
  if (misses.length) {
    const started = performance.now();
    const results = native().cudaCompileSyncMany(misses.map((m) => [m.source, m.name, nvrtcOptions(target), headerPairs()] as const));
    const elapsed = performance.now() - started;
    results.forEach((result, j) => {
      const { name, source, i } = misses[j]!;
      if (result instanceof Error) {
        // an architecture NVRTC refuses, or a real error: the one-kernel path retries as PTX or throws with the log
        if (target.kind === 'cubin' && refusedArch(result)) out[i] = compileCudaKernelSync(name, source, target);
        else throw result;
        return;
      }
      stats.compiles++;
      const compiled = store(name, source, imageKey(name, source, target), target, result);
      memoryCache.set(imageKey(name, source, target), compiled);
      out[i] = compiled;
    });
    stats.compileMs += elapsed;
  }
  return out as CudaImage[];
}
