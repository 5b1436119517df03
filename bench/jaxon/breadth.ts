// The breadth workloads of the GPU benchmark suite (issue 15), jaxon's side
// (JAX's is bench/jax/breadth.py): the rows `npm run bench:breadth` times
// beside NumPy on the CPU, here beside JAX on a GPU. A sort of float32
// values (jnp.sort), a ResNet-style convolution (NHWC input, HWIO kernel,
// SAME padding, stride 1; float32 and bfloat16) and a solve of a square float32 system with one
// right-hand side. Each is jitted and checked: the sort whole (order, and
// the same sum as its input), the convolution at a corner and an inner
// pixel against float64 sums of its inputs, the solve by its residual.
import * as jax from '../../lib/index.js';
import { jitted, randomNormal, shapeLabel, type SizeSpec, type Workload } from './measure.js';

const { numpy: jnp, lax } = jax;
type Array = jax.Array;

/** The whole output in order, and its sum equal to the input's (float64 sums of the same values in another order). */
export function checkSorted(out: Array, x: Array): string | null {
  const got = out.dataSync();
  const input = x.dataSync();
  if (got.length !== input.length) return `sort: ${got.length} values, expected ${input.length}`;
  for (let i = 1; i < got.length; i++) if (!(got[i - 1]! <= got[i]!)) return `sort: out of order at ${i}: ${got[i - 1]} then ${got[i]}`;
  let a = 0, b = 0, magnitude = 0;
  for (let i = 0; i < got.length; i++) {
    a += got[i]!;
    b += input[i]!;
    magnitude += Math.abs(input[i]!);
  }
  return Math.abs(a - b) <= 1e-9 * magnitude ? null : `sort: the output sums to ${a}, the input to ${b}`;
}

/**
 * Output pixels (0, 0) (in the padding's reach) and (1, 1) of image 0, their first 8 features, against float64 sums
 * of the inputs: the error of a dot product scales with the sum of |terms| (TF32 on a GPU, as JAX's default; a
 * bfloat16 result adds its own rounding, 2^-9 of the sum: `relative` 6e-3 there).
 */
export function checkConvPixels(out: Array, x: Array, w: Array, window: number, relative = 2e-3): string | null {
  const [, height, width, features] = x.shape as [number, number, number, number];
  const outs = Math.min(8, w.shape[3]!);
  const weights = jax.tidy(() => w.astype('float32').dataSync());
  const reach = Math.min(height, window + 1), span = Math.min(width, window + 1);
  const patch = jax.tidy(() => x.index(0, [0, reach], [0, span]).astype('float32').dataSync());
  const lo = (window - 1) >> 1; // SAME: (window - 1) / 2 before, the rest after
  for (const [r, c] of [[0, 0], [1, 1]] as const) {
    if (r >= height || c >= width) continue;
    const got = jax.tidy(() => out.index(0, r, c, [0, outs]).astype('float32').dataSync());
    for (let o = 0; o < outs; o++) {
      let sum = 0, magnitude = 0;
      for (let i = 0; i < window; i++) {
        for (let j = 0; j < window; j++) {
          const y = r + i - lo, z = c + j - lo;
          if (y < 0 || z < 0 || y >= reach || z >= span) continue;
          for (let f = 0; f < features; f++) {
            const term = patch[(y * span + z) * features + f]! * weights[((i * window + j) * features + f) * w.shape[3]! + o]!;
            sum += term;
            magnitude += Math.abs(term);
          }
        }
      }
      if (!(Math.abs(got[o]! - sum) <= relative * magnitude + 1e-6)) return `conv: pixel (${r}, ${c}) feature ${o}: ${got[o]} vs ${sum}`;
    }
  }
  return null;
}

export function breadthWorkloads(s: SizeSpec): Workload[] {
  const list: Workload[] = [];
  list.push({
    name: `sort_f32_${s.sort}`, kind: 'memory', shape: String(s.sort), dtype: 'float32', flops: 0, bytes: 2 * 4 * s.sort,
    prepare: () => jitted((x) => jnp.sort(x), [randomNormal([s.sort])], (out, [x]) => checkSorted(out, x!)),
  });
  // the convolution in float32 (tf32 tensor cores at JAX's default precision) and in bfloat16 (f32 accumulation)
  for (const dtype of ['float32', 'bfloat16'] as const) {
    const [batch, height, width, cin, cout, window] = s.conv;
    const bytes = dtype === 'float32' ? 4 : 2;
    list.push({
      name: `conv_${dtype === 'float32' ? 'f32' : 'bf16'}_${shapeLabel([batch, height, width, cin])}_${window}x${window}x${cout}`, kind: 'compute', shape: shapeLabel([batch, height, width, cin, cout, window]),
      dtype, flops: 2 * batch * height * width * cin * cout * window * window, bytes: bytes * (batch * height * width * (cin + cout) + window * window * cin * cout),
      prepare: () => jitted(
        (x, w) => lax.convGeneralDilated(x, w, [1, 1], 'SAME', { dimensionNumbers: ['NHWC', 'HWIO', 'NHWC'] }),
        [randomNormal([batch, height, width, cin], dtype), randomNormal([window, window, cin, cout], dtype, 1 / Math.sqrt(window * window * cin))],
        (out, [x, w]) => checkConvPixels(out, x!, w!, window, dtype === 'float32' ? 2e-3 : 6e-3),
      ),
    });
  }
  {
    const n = s.solve;
    list.push({
      name: `solve_f32_${n}`, kind: 'compute', shape: shapeLabel([n, n]), dtype: 'float32', flops: (2 / 3) * n ** 3 + 2 * n * n, bytes: 4 * (n * n + 2 * n),
      prepare: () => {
        // a normal matrix plus 2 sqrt(n) I: its eigenvalues lie in a disc of radius about sqrt(n) around 2 sqrt(n)
        const a = jax.tidy(() => jnp.add(randomNormal([n, n]), jnp.multiply(jnp.eye(n), 2 * Math.sqrt(n))));
        return jitted((m, v) => jnp.linalg.solve(m, v), [a, randomNormal([n, 1])], (out, [m, v]) => {
          const residual = jax.tidy(() => jnp.max(jnp.abs(jnp.subtract(jnp.matmul(m!, out, { precision: 'highest' }), v!))).item() as number);
          return residual <= 1e-3 ? null : `solve: residual max |a x - b| = ${residual}`;
        });
      },
    });
  }
  return list;
}

