// Trace + compile time of jit(grad(...)) of the host-offloading tutorial's
// network (10 layers of x @ w1 @ w2 under lax.scan; x 256x256, w1 10x256x1024,
// w2 10x1024x256, float32), in a fresh process: cold (empty kernel cache) and
// warm (kernels from the disk cache). Also the jit vs eager time of one step.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;

function network(params: [jax.Array, jax.Array], x: jax.Array): jax.Array {
  const [y] = jax.lax.scan((h: jax.Array, [w1, w2]: [jax.Array, jax.Array]) => [jnp.matmul(jnp.matmul(h, w1), w2), null] as [jax.Array, null], x, params);
  return jnp.sum(y as jax.Array);
}

/** Child mode: trace + compile once, print milliseconds as JSON. */
function child(): void {
  const x = jnp.ones([256, 256]);
  const w1 = jnp.multiply(jnp.ones([10, 256, 1024]), 1e-3);
  const w2 = jnp.multiply(jnp.ones([10, 1024, 256]), 1e-3);
  const step = jax.jit(jax.grad(network) as (p: [jax.Array, jax.Array], x: jax.Array) => [jax.Array, jax.Array]);
  const t0 = performance.now();
  step.trace([w1, w2], x);
  const t1 = performance.now();
  const grads = step([w1, w2], x);
  for (const g of grads) g.blockUntilReady();
  const t2 = performance.now();
  const again = step([w1, w2], x);
  for (const g of again) g.blockUntilReady();
  const t3 = performance.now();
  console.log(JSON.stringify({ traceMs: t1 - t0, firstCallMs: t2 - t1, secondCallMs: t3 - t2 }));
}

export function compileBenchmarks(): { cold: Record<string, number>; warm: Record<string, number> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jaxon-compile-cache-'));
  const self = fileURLToPath(import.meta.url);
  const runChild = () => JSON.parse(execFileSync(process.execPath, [self, '--child'], { env: { ...process.env, JAXON_CACHE_DIR: dir }, encoding: 'utf8' }).trim().split('\n').pop()!) as Record<string, number>;
  try {
    const cold = runChild();
    const warm = runChild();
    return { cold, warm };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--child')) child();
