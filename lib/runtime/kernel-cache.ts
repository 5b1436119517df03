// Turns generated C kernels into callable functions: the system C compiler
// builds each source into a shared object, which the native addon dlopens.
// Binaries are cached twice: in memory by key, and on disk
// ($JAXON_CACHE_DIR or ~/.cache/jaxon/kernels) as <key>.so beside the source
// (<key>.c, for people to read, as MLX keeps its JIT sources) and a manifest
// (<key>.json, written last, so its presence marks a complete entry).
//
// Several processes (ava's workers, a user's parallel jobs) may build the same
// key at once, so every cache file is written under a unique temporary name
// and renamed into place; readers see either no file or a whole one.
// Compilation is synchronous because eager ops call kernels right away.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { show, ValueError } from '../core/errors.js';
import { jaxonVersion, kernelCacheDir, moveIntoPlace, sha256, temporaryName, writeFileAtomic } from './disk-cache.js';
import { native, type NativeLibrary, type NativeSymbol } from './native.js';
import { kernelHeaderDir, kernelHeadersDigest } from './kernel-headers.js';
import { chooseCCompiler, missingCompilerMessage } from './c-compiler.js';

export { kernelCacheDir } from './disk-cache.js';

/** A compiled kernel `void name(void **buffers, const int64_t *params)`. */
export interface CpuKernel {
  readonly name: string;
  readonly source: string;
  /** Hex sha256 naming the cache entry; changes with the source, flags, compiler and jaxon version. */
  readonly key: string;
  /** Runs the kernel synchronously on buffers' data pointers and params. */
  call(buffers: (ArrayBuffer | ArrayBufferView)[], params: BigInt64Array): void;
}

export interface CpuCompilerInfo {
  /** $JAXON_CC, else $CC, else the first of cc, gcc, clang on PATH. */
  command: string;
  /** First line of `<command> --version`; part of every cache key. */
  version: string;
  flags: string[];
  /** With -march=native among the flags: the host CPU's model and feature flags (part of every cache key). */
  cpu: string;
}

export interface KernelCacheStats {
  memoryHits: number;
  diskHits: number;
  compiles: number;
  /** Wall time spent in the C compiler, summed over compiles. */
  compileMs: number;
  /** Disk entries found incomplete, corrupt or unloadable, and so rebuilt. */
  corruptEntries: number;
}

// -ffp-contract=off keeps a*b+c from becoming an FMA, so results round like
// the reference interpreter's; -fno-math-errno lets sqrt and friends vectorize.
const compileFlags = ['-O3', '-std=c11', '-fPIC', '-shared', '-fopenmp', '-ffp-contract=off', '-fno-math-errno'];
// Libraries go after the source, or linkers that drop unused libraries drop libm.
const linkFlags = ['-lm'];

/**
 * Code for the host CPU's vector units (AVX2/FMA, AVX-512 where present: the GEMM's micro-kernel and every
 * vectorized loop): -march=native when the compiler takes it, unless JAXON_CPU_MARCH names another -march value
 * ('' for the compiler's default). -ffp-contract=off still keeps a*b+c unfused outside the GEMM, so results do not
 * depend on the CPU. The CPU's identity joins the cache key (hostCpuIdentity): a cache moved to another machine
 * rebuilds instead of running instructions that machine lacks.
 */
function hostArchFlags(command: string, prefixArgs: string[]): string[] {
  const chosen = process.env['JAXON_CPU_MARCH'];
  if (chosen !== undefined) return chosen === '' ? [] : [`-march=${chosen}`];
  try {
    execFileSync(command, [...prefixArgs, '-march=native', '-E', '-x', 'c', '-'], { input: '', stdio: ['pipe', 'ignore', 'ignore'] });
    return ['-march=native'];
  } catch {
    return [];
  }
}

/** The host CPU's model and feature flags (Linux: /proc/cpuinfo's first processor), else Node's view of it. */
function hostCpuIdentity(): string {
  try {
    const info = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n\n')[0]!;
    const field = (name: string) => info.split('\n').find((l) => l.startsWith(name))?.split(':')[1]?.trim() ?? '';
    const identity = `${field('model name')}|${field('flags') || field('Features')}`;
    if (identity !== '|') return sha256(identity).slice(0, 16);
  } catch {
    // not Linux
  }
  return sha256(`${os.cpus()[0]?.model ?? ''}|${process.arch}`).slice(0, 16);
}

const cIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
// The addon copies symbol names into a 512-byte buffer.
const maxNameLength = 200;
const maxStderrChars = 4000;

const memoryCache = new Map<string, CpuKernel>();
const compilerInfoBySpec = new Map<string, CpuCompilerInfo>();
const stats: KernelCacheStats = { memoryHits: 0, diskHits: 0, compiles: 0, compileMs: 0, corruptEntries: 0 };

/** The compiler jaxon uses now ($JAXON_CC, $CC and PATH are read on each call), with its version and flags. */
export function cpuCompilerInfo(): CpuCompilerInfo {
  const choice = chooseCCompiler();
  if (!choice.command) throw new Error(`jaxon: ${missingCompilerMessage()}`);
  const spec = choice.command;
  const known = compilerInfoBySpec.get(spec);
  if (known) return { ...known, flags: [...known.flags] };
  const [command, ...prefixArgs] = spec.split(/\s+/);
  let output: string;
  try {
    output = execFileSync(command!, [...prefixArgs, '--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = code === 'ENOENT' ? 'was not found' : `failed to report its version (${message})`;
    throw new Error(
      `cpuCompilerInfo: the C compiler ${show(spec)} (from ${choice.from}) ${why}; ` +
        `install gcc or clang, or set JAXON_CC to one`,
      { cause: error },
    );
  }
  const arch = hostArchFlags(command!, prefixArgs);
  const flags = [...compileFlags, ...arch, ...linkFlags];
  const info: CpuCompilerInfo = { command: spec, version: output.split('\n')[0]!.trim(), flags, cpu: arch.length ? hostCpuIdentity() : '' };
  compilerInfoBySpec.set(spec, info);
  return { ...info, flags: [...flags] };
}

/** Counters since the process started (tests compare before and after). */
export function kernelCacheStats(): KernelCacheStats {
  return { ...stats };
}

/** Forgets in-memory kernels, so the next compile goes to disk; for tests. */
export function clearMemoryKernelCache(): void {
  memoryCache.clear();
}

/**
 * Compiles (or finds in the memory or disk cache) a C kernel whose source
 * defines `void name(void **buffers, const int64_t *params)`.
 */
export function compileCpuKernel(name: string, source: string): CpuKernel {
  if (typeof name !== 'string') {
    throw new TypeError(`compileCpuKernel: name must be a string, got ${show(name)}`);
  }
  if (!cIdentifier.test(name) || name.length > maxNameLength) {
    throw new ValueError(
      `compileCpuKernel: kernel name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*, at most ` +
        `${maxNameLength} characters), got ${show(name)}`,
    );
  }
  if (typeof source !== 'string' || source.length === 0) {
    throw new TypeError(`compileCpuKernel: source of kernel '${name}' must be a non-empty string, got ${show(source)}`);
  }
  const compiler = cpuCompilerInfo();
  const key = kernelKey(name, source, compiler);
  const cached = memoryCache.get(key);
  if (cached) {
    stats.memoryHits++;
    return cached;
  }
  dumpSource(name, key, source);
  const dir = kernelCacheDir();
  fs.mkdirSync(dir, { recursive: true });
  const entry = entryPaths(dir, key);
  let symbol = loadFromDisk(name, key, entry);
  if (symbol) stats.diskHits++;
  else symbol = compileIntoCache(name, key, source, compiler, entry);
  const kernel = makeKernel(name, source, key, symbol);
  memoryCache.set(key, kernel);
  return kernel;
}

// The name is hashed too: one source may define several kernels, and a
// CpuKernel found by key must call the symbol it was asked for.
function kernelKey(name: string, source: string, compiler: CpuCompilerInfo): string {
  const material = JSON.stringify({
    name,
    source,
    flags: compiler.flags,
    cpu: compiler.cpu,
    headers: kernelHeadersDigest(),
    compiler: compiler.version,
    jaxon: jaxonVersion(),
    arch: process.arch,
  });
  return sha256(material);
}

interface EntryPaths {
  so: string;
  source: string;
  manifest: string;
}

interface Manifest {
  name: string;
  key: string;
  sha256: string;
  compiler: string;
  flags: string[];
  createdAt: string;
}

function entryPaths(dir: string, key: string): EntryPaths {
  return {
    so: path.join(dir, `${key}.so`),
    source: path.join(dir, `${key}.c`),
    manifest: path.join(dir, `${key}.json`),
  };
}

// Returns the kernel's symbol from a complete, verified entry; undefined when
// there is no entry or it cannot be trusted (then it is counted as corrupt and
// the caller rebuilds it). A binary whose bytes do not match its manifest is
// never dlopened, since dlopen runs its constructors.
function loadFromDisk(name: string, key: string, entry: EntryPaths): NativeSymbol | undefined {
  if (!fs.existsSync(entry.manifest) && !fs.existsSync(entry.so)) return undefined;
  try {
    const manifest = JSON.parse(fs.readFileSync(entry.manifest, 'utf8')) as Partial<Manifest>;
    if (manifest.key !== key || manifest.name !== name || typeof manifest.sha256 !== 'string') return corrupt();
    if (sha256(fs.readFileSync(entry.so)) !== manifest.sha256) return corrupt();
    const addon = native();
    return addon.getSymbol(loadLibraryFresh(entry.so), name);
  } catch {
    // A missing file, bad JSON, or a dlopen/dlsym failure: rebuild all the same.
    return corrupt();
  }
}

function corrupt(): undefined {
  stats.corruptEntries++;
  return undefined;
}

function compileIntoCache(
  name: string,
  key: string,
  source: string,
  compiler: CpuCompilerInfo,
  entry: EntryPaths,
): NativeSymbol {
  // A per-process directory, so concurrent builds never share temporary files.
  const workDir = path.join(os.tmpdir(), `jaxon-cc-${process.pid}`);
  fs.mkdirSync(workDir, { recursive: true });
  const sourceFile = `${key}.c`;
  const outputFile = `${key}.so`;
  const sourcePath = path.join(workDir, sourceFile);
  const outputPath = path.join(workDir, outputFile);
  fs.writeFileSync(sourcePath, source);
  const [command, ...prefixArgs] = compiler.command.split(/\s+/);
  // Relative names, run in workDir: the object records the source file name,
  // and a pid in it would make builds of one key differ between processes.
  const args = [...prefixArgs, sourceFile, ...compiler.flags.filter((f) => !linkFlags.includes(f)), '-I', kernelHeaderDir(), '-o', outputFile, ...linkFlags];
  const started = performance.now();
  try {
    execFileSync(command!, args, {
      cwd: workDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    stats.compileMs += performance.now() - started;
    throw compileError(name, compiler.command, sourcePath, error);
  }
  stats.compileMs += performance.now() - started;
  stats.compiles++;

  const binary = fs.readFileSync(outputPath);
  writeFileAtomic(entry.source, source);
  moveIntoPlace(outputPath, entry.so);
  const manifest: Manifest = {
    name,
    key,
    sha256: sha256(binary),
    compiler: compiler.version,
    flags: compiler.flags,
    createdAt: new Date().toISOString(),
  };
  writeFileAtomic(entry.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  fs.rmSync(sourcePath, { force: true });
  try {
    fs.rmdirSync(workDir); // Only when empty: a failed build's source stays for inspection.
  } catch {
    // Not empty, or another call's files are in it.
  }

  // Only now dlopen, from the final path: what is there is a whole file.
  const addon = native();
  const library = loadLibraryFresh(entry.so);
  try {
    return addon.getSymbol(library, name);
  } catch (error) {
    throw new Error(
      `compileCpuKernel: kernel '${name}' compiled, but its source defines no exported symbol '${name}' ` +
        `(it must define void ${name}(void **buffers, const int64_t *params), not static); source at ${entry.source}`,
      { cause: error },
    );
  }
}

function compileError(name: string, command: string, sourcePath: string, error: unknown): Error {
  const failure = error as NodeJS.ErrnoException & { status?: number | null; signal?: string | null; stderr?: string };
  if (failure.code === 'ENOENT') {
    return new Error(
      `compileCpuKernel: cannot compile kernel '${name}': the C compiler ${show(command)} was not found; ` +
        `install gcc or clang, or set JAXON_CC`,
      { cause: error },
    );
  }
  let stderr = (failure.stderr ?? '').trim() || failure.message;
  if (stderr.length > maxStderrChars) {
    stderr = `${stderr.slice(0, maxStderrChars)}\n... (${stderr.length - maxStderrChars} more characters)`;
  }
  const how = failure.signal ? `was killed by ${failure.signal}` : `exited with status ${failure.status}`;
  return new Error(
    `compileCpuKernel: kernel '${name}' failed to compile (${command} ${how}); ` +
      `its source is kept at ${sourcePath}:\n${stderr}`,
    { cause: error },
  );
}

// dlopen finds an already-loaded library by its path string before looking at
// the file, so after a cached .so is replaced (a rebuild of a corrupt entry)
// dlopen(path) would hand back the old mapping. When the inode at `soPath`
// differs from the one this process loaded there, load it through a fresh
// hard link instead; glibc then compares inodes and maps the new file.
const loadedLibraries = new Map<string, { dev: bigint; ino: bigint; library: NativeLibrary }>();

function loadLibraryFresh(soPath: string): NativeLibrary {
  const addon = native();
  const { dev, ino } = fs.statSync(soPath, { bigint: true });
  const previous = loadedLibraries.get(soPath);
  if (previous && previous.dev === dev && previous.ino === ino) return previous.library;
  let library: NativeLibrary;
  if (!previous) {
    library = addon.loadLibrary(soPath);
  } else {
    const alias = temporaryName(soPath);
    try {
      fs.linkSync(soPath, alias);
    } catch {
      fs.copyFileSync(soPath, alias); // Filesystems without hard links.
    }
    try {
      library = addon.loadLibrary(alias);
    } finally {
      fs.rmSync(alias, { force: true }); // The mapping outlives the name.
    }
  }
  loadedLibraries.set(soPath, { dev, ino, library });
  return library;
}

function makeKernel(name: string, source: string, key: string, symbol: NativeSymbol): CpuKernel {
  const addon = native();
  return Object.freeze({
    name,
    source,
    key,
    call(buffers: (ArrayBuffer | ArrayBufferView)[], params: BigInt64Array): void {
      // Checked here so a mistake names the kernel, not the addon's trampoline.
      if (!Array.isArray(buffers)) {
        throw new TypeError(`CpuKernel.call: kernel '${name}': buffers must be an array, got ${show(buffers)}`);
      }
      if (!(params instanceof BigInt64Array)) {
        throw new TypeError(`CpuKernel.call: kernel '${name}': params must be a BigInt64Array, got ${show(params)}`);
      }
      addon.callKernel(symbol, buffers, params);
    },
  });
}

// JAXON_DUMP_DIR collects every kernel source a run builds, named readably.
function dumpSource(name: string, key: string, source: string): void {
  const dumpDir = process.env.JAXON_DUMP_DIR;
  if (!dumpDir || !dumpDir.trim()) return;
  fs.mkdirSync(dumpDir, { recursive: true });
  writeFileAtomic(path.join(dumpDir, `${name}-${key.slice(0, 8)}.c`), source);
}
