// Runs the benchmarks, prints a table, writes bench/results.json, and, with
// --suite, also times the test suite with a cold and a warm kernel cache.
// Results go into bench/RESULTS.md by hand-free regeneration (writeResults).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as jax from '../lib/index.js';
import { compileBenchmarks } from './compile.js';
import { eagerBenchmarks } from './eager.js';

function timeSuite(cacheDir: string): number {
  const start = performance.now();
  execFileSync('npx', ['ava'], { stdio: 'ignore', env: { ...process.env, JAXON_CACHE_DIR: cacheDir } });
  return (performance.now() - start) / 1000;
}

async function main(): Promise<void> {
  const info = jax.environmentInfo();
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
  console.log(`jaxon benchmarks on ${machine}\nbackend: ${info.platform} (${info.cuda})\n`);
  const eager = await eagerBenchmarks();
  console.log('| benchmark | mean | ±% | samples | note |');
  console.log('|---|---:|---:|---:|---|');
  for (const r of eager) {
    const mean = r.meanMicroseconds >= 1000 ? `${(r.meanMicroseconds / 1000).toFixed(2)} ms` : `${r.meanMicroseconds.toFixed(1)} µs`;
    console.log(`| ${r.name} | ${mean} | ${r.rme.toFixed(1)} | ${r.samples} | ${r.note ?? ''} |`);
  }
  const results: Record<string, unknown> = { machine, backend: info, date: new Date().toISOString(), eager };
  if (process.argv.includes('--compile')) {
    const { cold, warm } = compileBenchmarks();
    const line = (r: Record<string, number>) =>
      `trace ${r['traceMs']!.toFixed(0)} ms, first call ${r['firstCallMs']!.toFixed(0)} ms, second call ${r['secondCallMs']!.toFixed(0)} ms (compile ≈ ${(r['firstCallMs']! - r['secondCallMs']!).toFixed(0)} ms)`;
    console.log(`
jit(grad(scan network)), fresh process, empty kernel cache: ${line(cold)}`);
    console.log(`jit(grad(scan network)), fresh process, warm disk cache:  ${line(warm)}`);
    results['compile'] = { cold, warm };
  }
  if (process.argv.includes('--suite')) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jaxon-bench-cache-'));
    const cold = timeSuite(dir);
    const warm = timeSuite(dir);
    rmSync(dir, { recursive: true, force: true });
    console.log(`\ntest suite (npx ava): cold kernel cache ${cold.toFixed(1)} s, warm ${warm.toFixed(1)} s`);
    results['suite'] = { coldSeconds: cold, warmSeconds: warm };
  }
  writeFileSync(path.join('bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');
}

await main();
