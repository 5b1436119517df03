// random.multivariateNormal and random.orthogonal against JAX 0.10.2's samples for the same keys
// (test/fixtures/gen_random_linalg.py): the normals are bit-identical, the factorizations jaxon's own, so values agree
// to a few float32 ulps of the factor; the 'eigh' and 'svd' methods (eigenvector signs are LAPACK's choice) by the
// covariance their samples reproduce; orthogonality; bad input. Runs on the CPU and the emulated GPU.
import test from 'ava';
import * as jax from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import { assertThrowsMentioning } from './helpers/oracle.js';
import { loadFixture } from './helpers/fixtures.js';

const { numpy: jnp, random } = jax;

interface Spec { shape: number[]; dtype: string; values: number[] }
interface Case { fn: string; seed: number; mean?: Spec; cov?: Spec; shape: number[] | null; n?: number; m?: number | null; out: Spec }
const fixture = loadFixture<{ cases: Case[] }>('random-linalg.json');
// on a GPU the einsum's float32 dot is TF32 at the default precision, as JAX's on a GPU (the fixtures are JAX's on a CPU)
const TOL = process.env.JAXON_TEST_PLATFORM === 'cuda' ? 2e-3 : 2e-5;
const make = (s: Spec): Array => jnp.array(s.values, { dtype: 'float32' }).reshape(s.shape);

function close(t: import('ava').ExecutionContext, got: Array, want: Spec, tol: number, label: string): void {
  t.deepEqual([...got.shape], want.shape, `${label}: shape`);
  const g = got.dataSync();
  const worst = want.values.reduce((w, v, i) => Math.max(w, Math.abs(g[i]! - v)), 0);
  t.true(worst <= tol, `${label}: largest difference from JAX ${worst}`);
}

test('multivariateNormal (cholesky) and orthogonal match JAX samples for the same keys', (t) => {
  for (const c of fixture.cases) {
    const key = random.key(c.seed);
    if (c.fn === 'multivariateNormal') {
      const out = random.multivariateNormal(key, make(c.mean!), make(c.cov!), { shape: c.shape });
      close(t, out, c.out, TOL, `multivariateNormal seed ${c.seed}`);
    } else {
      const out = random.orthogonal(key, c.n!, { shape: c.shape!, m: c.m });
      close(t, out, c.out, 2e-5, `orthogonal seed ${c.seed} n ${c.n} m ${c.m}`);
      const q = out.reshape([-1, out.shape[out.ndim - 2]!, out.shape[out.ndim - 1]!]);
      const tall = c.n! >= (c.m ?? c.n!);
      const gram = tall ? jnp.matmul(jnp.swapaxes(q, 1, 2), q, { precision: 'highest' }) : jnp.matmul(q, jnp.swapaxes(q, 1, 2), { precision: 'highest' });
      const k = gram.shape[1]!;
      t.true((jnp.max(jnp.abs(jnp.subtract(gram, jnp.eye(k)))).item() as number) < 1e-5, 'orthonormal');
    }
  }
});

test('multivariateNormal with method eigh and svd: samples with the given mean and covariance', (t) => {
  const mean = jnp.array([1, -2, 0.5]);
  const cov = jnp.array([[2.0, 0.6, -0.4], [0.6, 1.0, 0.3], [-0.4, 0.3, 1.5]]);
  for (const method of ['eigh', 'svd'] as const) {
    const x = random.multivariateNormal(random.key(7), mean, cov, { shape: [20000], method });
    t.deepEqual(x.shape, [20000, 3]);
    const mu = jnp.mean(x, { axis: 0 });
    const centered = jnp.subtract(x, mu);
    const sample = jnp.divide(jnp.matmul(jnp.swapaxes(centered, 0, 1), centered, { precision: 'highest' }), 19999);
    t.true((jnp.max(jnp.abs(jnp.subtract(mu, mean))).item() as number) < 0.05, `${method}: mean`);
    t.true((jnp.max(jnp.abs(jnp.subtract(sample, cov))).item() as number) < 0.08, `${method}: covariance`);
  }
});

test('bad input names random.multivariateNormal / random.orthogonal and the values', (t) => {
  const key = random.key(0);
  assertThrowsMentioning(t, () => random.multivariateNormal(key, jnp.zeros([3]), jnp.eye(2)), 'random.multivariateNormal', 'cov.shape');
  assertThrowsMentioning(t, () => random.multivariateNormal(key, jnp.zeros([3]), jnp.eye(3), { method: 'qr' as never }), 'random.multivariateNormal', 'method', 'qr');
  assertThrowsMentioning(t, () => random.multivariateNormal(key, jnp.zeros([2, 3]), jnp.eye(3), { shape: [3] }), 'random.multivariateNormal', 'shape');
  assertThrowsMentioning(t, () => random.orthogonal(key, 2.5), 'random.orthogonal', 'n', '2.5');
});
