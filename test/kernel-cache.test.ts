// Tests for the CPU kernel cache: compiling C kernels, memory and disk hits,
// recovery from damaged disk entries, compile errors, source dumps, OpenMP,
// and several processes building one kernel at once.
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import {
  clearMemoryKernelCache,
  compileCpuKernel,
  cpuCompilerInfo,
  kernelCacheDir,
  kernelCacheStats,
  type CpuKernel,
} from '../lib/runtime/kernel-cache.js';

// The module reads the environment at call time, so setting it here (after the
// hoisted imports, before any compile) is enough.
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-kernel-cache-test-'));
process.env.JAXON_CACHE_DIR = cacheDir;
delete process.env.JAXON_DUMP_DIR;

test.after.always(() => {
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

const moduleUrl = new URL('../lib/runtime/kernel-cache.js', import.meta.url).href;

// A distinct tag per test gives each its own cache key.
function addSource(name: string, tag: string): string {
  return `// ${tag}
#include <stdint.h>
void ${name}(void **buffers, const int64_t *params) {
  const float *x = buffers[0], *y = buffers[1];
  float *out = buffers[2];
  int64_t n = params[0];
  for (int64_t i = 0; i < n; i++) out[i] = x[i] + y[i];
}
`;
}

function checkAdd(t: { deepEqual: (a: unknown, b: unknown) => void }, kernel: CpuKernel, n = 1000): void {
  const x = Float32Array.from({ length: n }, (_, i) => i * 0.5);
  const y = Float32Array.from({ length: n }, (_, i) => 1 - i);
  const out = new Float32Array(n);
  kernel.call([x, y, out], BigInt64Array.of(BigInt(n)));
  t.deepEqual(out, Float32Array.from({ length: n }, (_, i) => Math.fround(x[i]! + y[i]!)));
}

function entryFiles(key: string) {
  return {
    so: path.join(cacheDir, `${key}.so`),
    source: path.join(cacheDir, `${key}.c`),
    manifest: path.join(cacheDir, `${key}.json`),
  };
}

// Replaces a file through a rename, as another process would. Writing in place
// would change the pages of a library this process has already mapped.
function replaceFile(file: string, data: Uint8Array): void {
  fs.writeFileSync(`${file}.replacement`, data);
  fs.renameSync(`${file}.replacement`, file);
}

const childScript = `
import { compileCpuKernel, kernelCacheStats } from ${JSON.stringify(moduleUrl)};
const [name, source, n] = JSON.parse(process.argv[1]);
const kernel = compileCpuKernel(name, source);
const x = Float32Array.from({ length: n }, (_, i) => i);
const out = new Float32Array(n);
kernel.call([x, x, out], BigInt64Array.of(BigInt(n)));
const ok = out.every((v, i) => v === 2 * i);
process.stdout.write(JSON.stringify({ ok, key: kernel.key, stats: kernelCacheStats() }));
`;

interface ChildResult {
  ok: boolean;
  key: string;
  stats: ReturnType<typeof kernelCacheStats>;
}

function childArgs(name: string, source: string): string[] {
  return ['--input-type=module', '-e', childScript, JSON.stringify([name, source, 4096])];
}

/** Builds the kernel in another process, so this one never maps its .so. */
function compileInChild(name: string, source: string): ChildResult {
  const output = execFileSync(process.execPath, childArgs(name, source), { encoding: 'utf8', env: process.env });
  return JSON.parse(output) as ChildResult;
}

test.serial('kernelCacheDir follows JAXON_CACHE_DIR at call time', (t) => {
  t.is(kernelCacheDir(), cacheDir);
  const info = cpuCompilerInfo();
  t.truthy(info.version);
  t.is(info.flags[info.flags.length - 1], '-lm');
  t.true(info.flags.includes('-fopenmp'));
});

test.serial('an add kernel gives correct results, and a second compile is a memory hit', (t) => {
  const source = addSource('jaxon_add_f32', 'basic');
  const before = kernelCacheStats();
  const started = performance.now();
  const kernel = compileCpuKernel('jaxon_add_f32', source);
  const compileMs = performance.now() - started;
  const afterCompile = kernelCacheStats();
  t.is(afterCompile.compiles, before.compiles + 1);
  t.is(kernel.name, 'jaxon_add_f32');
  t.regex(kernel.key, /^[0-9a-f]{64}$/);
  checkAdd(t, kernel);
  checkAdd(t, kernel, 0);

  const again = compileCpuKernel('jaxon_add_f32', source);
  t.is(again, kernel);
  const afterHit = kernelCacheStats();
  t.is(afterHit.memoryHits, afterCompile.memoryHits + 1);
  t.is(afterHit.compiles, afterCompile.compiles);

  // The entry on disk is readable by people and complete.
  const files = entryFiles(kernel.key);
  t.is(fs.readFileSync(files.source, 'utf8'), source);
  const manifest = JSON.parse(fs.readFileSync(files.manifest, 'utf8'));
  t.like(manifest, { name: 'jaxon_add_f32', key: kernel.key });
  t.is(manifest.sha256, createHash('sha256').update(fs.readFileSync(files.so)).digest('hex'));
  t.deepEqual(manifest.flags, cpuCompilerInfo().flags);
  t.deepEqual(fs.readdirSync(cacheDir).filter((f) => f.includes('.tmp-')), []);
  t.log(`compile: ${compileMs.toFixed(1)} ms`);
});

test.serial('after clearMemoryKernelCache the kernel is a disk hit', (t) => {
  const source = addSource('jaxon_add_f32', 'disk-hit');
  compileCpuKernel('jaxon_add_f32', source);
  clearMemoryKernelCache();
  const before = kernelCacheStats();
  const started = performance.now();
  const kernel = compileCpuKernel('jaxon_add_f32', source);
  const loadMs = performance.now() - started;
  const after = kernelCacheStats();
  t.is(after.diskHits, before.diskHits + 1);
  t.is(after.compiles, before.compiles);
  t.is(after.corruptEntries, before.corruptEntries);
  checkAdd(t, kernel);
  t.log(`disk hit: ${loadMs.toFixed(2)} ms`);
});

test.serial('a .so with corrupted bytes is rebuilt, never run', (t) => {
  const source = addSource('jaxon_add_f32', 'corrupt-bytes');
  const first = compileCpuKernel('jaxon_add_f32', source);
  clearMemoryKernelCache();
  const files = entryFiles(first.key);
  const bytes = fs.readFileSync(files.so);
  for (let i = 64; i < bytes.length; i += 97) bytes[i] ^= 0xff;
  replaceFile(files.so, bytes);
  const before = kernelCacheStats();
  const kernel = compileCpuKernel('jaxon_add_f32', source);
  const after = kernelCacheStats();
  t.is(after.corruptEntries, before.corruptEntries + 1);
  t.is(after.compiles, before.compiles + 1);
  t.is(after.diskHits, before.diskHits);
  checkAdd(t, kernel);
  // The rebuilt entry is whole again: the next load is a clean disk hit.
  clearMemoryKernelCache();
  compileCpuKernel('jaxon_add_f32', source);
  t.is(kernelCacheStats().diskHits, after.diskHits + 1);
});

// dlopen returns an already-loaded library when given the same path string,
// even after the file there was replaced; a rebuilt kernel must be the new one.
test.serial('a rebuild of a .so this process had loaded runs the new binary', (t) => {
  const source = `#include <stdint.h>
void jaxon_magic(void **buffers, const int64_t *params) { float *out = buffers[0]; out[0] = 1234.5f; }
`;
  const first = compileCpuKernel('jaxon_magic', source);
  const out = new Float32Array(1);
  first.call([out], new BigInt64Array(1));
  t.is(out[0], 1234.5);
  clearMemoryKernelCache();
  // Patch the constant in place, so the mapped copy now computes 1.0 (a
  // change harmless to the rest of the library, unlike random damage).
  const file = entryFiles(first.key).so;
  const bytes = fs.readFileSync(file);
  const magic = Buffer.from(Float32Array.of(1234.5).buffer);
  const one = Buffer.from(Float32Array.of(1).buffer);
  let patched = 0;
  for (let at = bytes.indexOf(magic); at >= 0; at = bytes.indexOf(magic, at + 4), patched++) one.copy(bytes, at);
  t.true(patched > 0);
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, 0);
  fs.closeSync(fd);
  first.call([out], new BigInt64Array(1));
  t.is(out[0], 1, 'the mapped library shows the in-place patch');

  const before = kernelCacheStats();
  const rebuilt = compileCpuKernel('jaxon_magic', source);
  t.is(kernelCacheStats().corruptEntries, before.corruptEntries + 1);
  rebuilt.call([out], new BigInt64Array(1));
  t.is(out[0], 1234.5);
});

test.serial('an entry without its .json is rebuilt', (t) => {
  const source = addSource('jaxon_add_f32', 'missing-json');
  const first = compileCpuKernel('jaxon_add_f32', source);
  clearMemoryKernelCache();
  fs.rmSync(entryFiles(first.key).manifest);
  const before = kernelCacheStats();
  const kernel = compileCpuKernel('jaxon_add_f32', source);
  const after = kernelCacheStats();
  t.is(after.corruptEntries, before.corruptEntries + 1);
  t.is(after.compiles, before.compiles + 1);
  t.true(fs.existsSync(entryFiles(first.key).manifest));
  checkAdd(t, kernel);
});

test.serial('a truncated .so left by another process is rebuilt', (t) => {
  const source = addSource('jaxon_add_f32', 'truncated');
  const child = compileInChild('jaxon_add_f32', source);
  t.true(child.ok);
  t.is(child.stats.compiles, 1);
  const files = entryFiles(child.key);
  // In place is safe here: this process has never mapped the file.
  fs.truncateSync(files.so, 100);
  const before = kernelCacheStats();
  const kernel = compileCpuKernel('jaxon_add_f32', source);
  const after = kernelCacheStats();
  t.is(kernel.key, child.key);
  t.is(after.corruptEntries, before.corruptEntries + 1);
  t.is(after.compiles, before.compiles + 1);
  checkAdd(t, kernel);
});

test.serial('an entry built by another process is a disk hit here', (t) => {
  const source = addSource('jaxon_add_f32', 'cross-process');
  const child = compileInChild('jaxon_add_f32', source);
  t.true(child.ok);
  const before = kernelCacheStats();
  const kernel = compileCpuKernel('jaxon_add_f32', source);
  const after = kernelCacheStats();
  t.is(after.diskHits, before.diskHits + 1);
  t.is(after.compiles, before.compiles);
  checkAdd(t, kernel);
});

test.serial('a syntax error names the kernel and shows the compiler message', (t) => {
  const source = 'void jaxon_broken(void **buffers, const long *params) { int x = ; }\n';
  const error = t.throws(() => compileCpuKernel('jaxon_broken', source));
  t.regex(error.message, /kernel 'jaxon_broken' failed to compile/);
  t.regex(error.message, /error/);
  t.regex(error.message, /expected expression/);
  const kept = /source is kept at (\S+\.c):/.exec(error.message)?.[1];
  t.truthy(kept);
  t.is(fs.readFileSync(kept!, 'utf8'), source);
  fs.rmSync(path.dirname(kept!), { recursive: true, force: true });
});

test.serial('a source that lacks the named symbol is an error naming it', (t) => {
  const source = addSource('jaxon_other_name', 'missing-symbol');
  const error = t.throws(() => compileCpuKernel('jaxon_wanted_name', source));
  t.regex(error.message, /kernel 'jaxon_wanted_name' compiled, but its source defines no exported symbol/);
});

test.serial('kernel names must be C identifiers', (t) => {
  const source = addSource('ok', 'bad-name');
  for (const name of ['1abc', 'a-b', '', 'add f32', 'x;rm', 'a'.repeat(300)]) {
    const error = t.throws(() => compileCpuKernel(name, source));
    t.regex(error.message, /compileCpuKernel: kernel name must be a C identifier/);
    t.true(error.message.includes(`'${name}'`));
  }
  t.throws(() => compileCpuKernel(42 as unknown as string, source), {
    instanceOf: TypeError,
    message: /name must be a string, got 42/,
  });
  t.throws(() => compileCpuKernel('jaxon_empty', ''), { instanceOf: TypeError, message: /'jaxon_empty'/ });
});

test.serial('CpuKernel.call checks its arguments', (t) => {
  const kernel = compileCpuKernel('jaxon_add_f32', addSource('jaxon_add_f32', 'basic'));
  t.throws(() => kernel.call([], [1n] as unknown as BigInt64Array), {
    message: /kernel 'jaxon_add_f32': params must be a BigInt64Array, got \[1n\]/,
  });
});

test.serial('JAXON_DUMP_DIR receives each kernel source', (t) => {
  const dumpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-dump-test-'));
  process.env.JAXON_DUMP_DIR = dumpDir;
  try {
    const source = addSource('jaxon_add_f32', 'dump');
    const kernel = compileCpuKernel('jaxon_add_f32', source);
    const dumped = path.join(dumpDir, `jaxon_add_f32-${kernel.key.slice(0, 8)}.c`);
    t.is(fs.readFileSync(dumped, 'utf8'), source);
  } finally {
    delete process.env.JAXON_DUMP_DIR;
    fs.rmSync(dumpDir, { recursive: true, force: true });
  }
});

test.serial('an OpenMP parallel loop over 1e6 elements works', (t) => {
  const source = `
#include <math.h>
#include <stdint.h>
#include <omp.h>
void jaxon_omp_sqrt(void **buffers, const int64_t *params) {
  const double *x = buffers[0];
  double *out = buffers[1];
  int32_t *threads = buffers[2];
  int64_t n = params[0];
  #pragma omp parallel for
  for (int64_t i = 0; i < n; i++) out[i] = sqrt(x[i]) + 1.0;
  threads[0] = omp_get_max_threads();
}
`;
  const kernel = compileCpuKernel('jaxon_omp_sqrt', source);
  const n = 1_000_000;
  const x = Float64Array.from({ length: n }, (_, i) => i);
  const out = new Float64Array(n);
  const threads = new Int32Array(1);
  kernel.call([x, out, threads], BigInt64Array.of(BigInt(n)));
  let mismatches = 0;
  for (let i = 0; i < n; i++) if (out[i] !== Math.sqrt(i) + 1) mismatches++;
  t.is(mismatches, 0);
  t.true(threads[0]! >= 1);
  t.log(`OpenMP threads: ${threads[0]}`);
});

test.serial('processes building one kernel at once leave one valid entry', async (t) => {
  const source = addSource('jaxon_add_f32', `concurrent-${process.pid}-${Date.now()}`);
  const run = promisify(execFile);
  const results = await Promise.all(
    Array.from({ length: 4 }, () => run(process.execPath, childArgs('jaxon_add_f32', source), { env: process.env })),
  );
  const parsed = results.map(({ stdout }) => JSON.parse(stdout) as ChildResult);
  t.true(parsed.every((r) => r.ok));
  const key = parsed[0]!.key;
  t.true(parsed.every((r) => r.key === key));
  const files = entryFiles(key);
  const manifest = JSON.parse(fs.readFileSync(files.manifest, 'utf8'));
  t.is(manifest.sha256, createHash('sha256').update(fs.readFileSync(files.so)).digest('hex'));
  t.deepEqual(fs.readdirSync(cacheDir).filter((f) => f.includes('.tmp-')), []);
  // And this process takes the entry as a clean disk hit.
  const before = kernelCacheStats();
  checkAdd(t, compileCpuKernel('jaxon_add_f32', source));
  const after = kernelCacheStats();
  t.is(after.diskHits, before.diskHits + 1);
  t.is(after.corruptEntries, before.corruptEntries);
});
