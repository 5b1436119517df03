// The kernel workloads of the GPU benchmark suite, jaxon's side: a
// device-to-device copy (the HBM bandwidth probe), the 10-op elementwise
// chain of bench/eager.ts, a full sum, row softmax, layernorm, transpose,
// GEMMs, an MLP layer gelu(x @ w + b), issue 15's sort, convolution and solve
// (./breadth.ts), dispatch latency, and host<->device transfers. Each is
// jitted (as in bench/jax/kernels.py) and checks a sample of its output
// against a JS reference, so a fast wrong kernel cannot pass.
import * as jax from '../../lib/index.js';
import {
  SHORT_DTYPE, bytesLabel, compareClose, countLabel, headOf, jitted, randomNormal, shapeLabel,
  type Prepared, type SizeSpec, type Workload,
} from './measure.js';
import { breadthWorkloads } from './breadth.js';
import { native } from '../../lib/runtime/native.js';
import type { CudaDeviceHandle } from '../../lib/runtime/cuda-addon.js';

const jnp = jax.numpy;
type Array = jax.Array;
type Float = 'float32' | 'bfloat16';
const ITEMSIZE: Record<Float, number> = { float32: 4, bfloat16: 2 };
/** Relative tolerance of a check: bf16 keeps 8 significant bits; f32 GEMMs may run on TF32 (10 bits), as JAX's default does. */
const RTOL: Record<Float, number> = { float32: 2e-3, bfloat16: 2e-2 };

/** The chain of bench/eager.ts, each op written out; bench/jax/kernels.py has the same ten. */
export function chain10(v: Array): Array {
  let y = jnp.multiply(v, 1.5);
  y = jnp.add(y, 0.25);
  y = jnp.tanh(y);
  y = jnp.multiply(y, y);
  y = jnp.subtract(y, 0.5);
  y = jnp.abs(y);
  y = jnp.sqrt(y);
  y = jnp.maximum(y, 0.1);
  y = jnp.exp(y);
  return jnp.negative(y);
}

const chain10Reference = (v: number): number => -Math.exp(Math.max(Math.sqrt(Math.abs(Math.tanh(v * 1.5 + 0.25) ** 2 - 0.5)), 0.1));

/** Layernorm over the last axis with a scale and a bias, the same formula as kernels.py. */
export function layernorm(x: Array, gamma: Array, beta: Array): Array {
  const mean = jnp.mean(x, { axis: -1, keepdims: true });
  const centered = jnp.subtract(x, mean);
  const variance = jnp.mean(jnp.square(centered), { axis: -1, keepdims: true });
  return jnp.add(jnp.multiply(jnp.multiply(centered, jax.lax.rsqrt(jnp.add(variance, 1e-5))), gamma), beta);
}

export const mlpLayer = (x: Array, w: Array, b: Array): Array => jax.nn.gelu(jnp.add(jnp.matmul(x, w), b));

const geluReference = (v: number): number => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));

/** Rows [0, rows) of x read to the host as nested JS arrays of numbers. */
function rowsOf(x: Array, rows: number): number[][] {
  const n = Math.min(rows, x.shape[0]!);
  const cols = x.shape[1]!;
  const flat = jax.tidy(() => x.index([0, n]).astype('float32').dataSync());
  return Array.from({ length: n }, (_, r) => Array.from(flat.subarray(r * cols, (r + 1) * cols)));
}

/** Columns [0, count) of x (rows × cols) read to the host, one JS array per column. */
function columnsOf(x: Array, count: number): number[][] {
  const n = Math.min(count, x.shape[1]!);
  const flat = jax.tidy(() => x.index(null, [0, n]).astype('float32').dataSync());
  return Array.from({ length: n }, (_, c) => Array.from({ length: x.shape[0]! }, (_, r) => flat[r * n + c]!));
}

/** x @ w (+ b, gelu) checked on a 2×8 corner against float64 sums of the rounded inputs. */
function checkMatmulCorner(out: Array, x: Array, w: Array, dtype: Float, epilogue?: { b: Array }): string | null {
  const rows = rowsOf(x, 2);
  const cols = columnsOf(w, 8);
  const bias = epilogue ? Array.from(headOf(epilogue.b, cols.length)) : null;
  const got: number[] = [];
  const want: number[] = [];
  const corner = rowsOf(out, rows.length);
  let worst: string | null = null;
  rows.forEach((row, r) =>
    cols.forEach((col, c) => {
      let sum = 0;
      let magnitude = 0;
      for (let k = 0; k < row.length; k++) {
        sum += row[k]! * col[k]!;
        magnitude += Math.abs(row[k]! * col[k]!);
      }
      const value = bias ? geluReference(sum + bias[c]!) : sum;
      const g = corner[r]![c]!;
      // the error of a dot product scales with the sum of |terms|, not with the result
      if (!(Math.abs(g - value) <= RTOL[dtype] * (magnitude + Math.abs(value)) + 1e-6) && worst === null) worst = `[${r},${c}] ${g} vs ${value}`;
      got.push(g);
      want.push(value);
    }),
  );
  return worst ? `matmul corner: ${worst}` : null;
}

export function kernelWorkloads(s: SizeSpec): Workload[] {
  const list: Workload[] = [];

  // the HBM bandwidth probe: jnp.array copies (JAX's side: jnp.copy under jit)
  list.push({
    name: `copy_f32_${countLabel(s.copy)}`, kind: 'memory', shape: countLabel(s.copy), dtype: 'float32', flops: 0, bytes: 2 * 4 * s.copy,
    prepare: () => jitted((x) => jnp.array(x, { copy: true }), [randomNormal([s.copy])], (out, [x]) =>
      compareClose('copy', headOf(out, 4096), headOf(x!, 4096), 0, 0)),
  });

  for (const dtype of ['float32', 'bfloat16'] as const) {
    list.push({
      name: `chain10_${SHORT_DTYPE[dtype]}_${countLabel(s.chain)}`, kind: 'memory', shape: countLabel(s.chain), dtype,
      flops: 10 * s.chain, bytes: 2 * ITEMSIZE[dtype] * s.chain,
      prepare: () => jitted(chain10, [randomNormal([s.chain], dtype)], (out, [x]) => {
        const input = headOf(x!, 4096);
        // sqrt(|y² - 0.5|) turns a rounding error δ of y² into up to √δ: bf16 rounds after every op, so it gets a loose bound
        return compareClose('chain10', headOf(out, 4096), Array.from(input, chain10Reference), dtype === 'bfloat16' ? 0.1 : 4e-3, 1e-6);
      }),
    });
  }

  list.push({
    name: `sum_f32_${countLabel(s.sum)}`, kind: 'memory', shape: countLabel(s.sum), dtype: 'float32', flops: s.sum, bytes: 4 * s.sum,
    prepare: () => jitted((x) => jnp.sum(x), [randomNormal([s.sum])], (out, [x]) => {
      // at full size reading 1 GiB back is slow: compare with a two-stage sum on the device instead
      const exact = s.sum <= 2 ** 22;
      const data = exact ? headOf(x!, s.sum) : null;
      const reference = data ? Array.from(data).reduce((a, b) => a + b, 0) : (jax.tidy(() => jnp.sum(jnp.sum(jnp.reshape(x!, [1024, -1]), { axis: 1 })).item()) as number);
      const scale = Math.sqrt(s.sum) * 4;
      return compareClose('sum', [out.item() as number], [reference], 0, scale * 1e-5);
    }),
  });

  for (const [rows, cols] of s.softmax) {
    list.push({
      name: `softmax_f32_${shapeLabel([rows, cols])}`, kind: 'memory', shape: shapeLabel([rows, cols]), dtype: 'float32',
      flops: 5 * rows * cols, bytes: 2 * 4 * rows * cols,
      prepare: () => jitted((x) => jax.nn.softmax(x, { axis: -1 }), [randomNormal([rows, cols])], (out, [x]) => {
        const want = rowsOf(x!, 4).flatMap((row) => {
          const max = Math.max(...row);
          const e = row.map((v) => Math.exp(v - max));
          const total = e.reduce((a, b) => a + b, 0);
          return e.map((v) => v / total);
        });
        return compareClose('softmax rows', rowsOf(out, 4).flat(), want, 1e-4, 1e-7);
      }),
    });
  }

  {
    const [rows, cols] = s.layernorm;
    list.push({
      name: `layernorm_f32_${shapeLabel([rows, cols])}`, kind: 'memory', shape: shapeLabel([rows, cols]), dtype: 'float32',
      flops: 8 * rows * cols, bytes: 4 * (2 * rows * cols + 2 * cols),
      prepare: () => jitted(layernorm, [randomNormal([rows, cols]), randomNormal([cols]), randomNormal([cols])], (out, [x, gamma, beta]) => {
        const g = Array.from(headOf(gamma!, cols));
        const b = Array.from(headOf(beta!, cols));
        const want = rowsOf(x!, 4).flatMap((row) => {
          const mean = row.reduce((a, v) => a + v, 0) / cols;
          const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / cols;
          return row.map((v, c) => ((v - mean) / Math.sqrt(variance + 1e-5)) * g[c]! + b[c]!);
        });
        return compareClose('layernorm rows', rowsOf(out, 4).flat(), want, 1e-4, 1e-4);
      }),
    });
  }

  {
    const [rows, cols] = s.transpose;
    list.push({
      name: `transpose_f32_${shapeLabel([rows, cols])}`, kind: 'memory', shape: shapeLabel([rows, cols]), dtype: 'float32', flops: 0, bytes: 2 * 4 * rows * cols,
      prepare: () => jitted((x) => jnp.transpose(x), [randomNormal([rows, cols])], (out, [x]) =>
        compareClose('transpose rows', rowsOf(out, 4).flat(), columnsOf(x!, 4).flat(), 0, 0)),
    });
  }

  for (const dtype of ['bfloat16', 'float32'] as const) {
    for (const n of s.gemm) {
      list.push({
        name: `gemm_${SHORT_DTYPE[dtype]}_${n}`, kind: 'compute', shape: shapeLabel([n, n, n]), dtype, flops: 2 * n ** 3, bytes: 3 * ITEMSIZE[dtype] * n * n,
        // scaled so the products stay near 1 whatever n is
        prepare: () => jitted((a, b) => jnp.matmul(a, b), [randomNormal([n, n], dtype), randomNormal([n, n], dtype, 1 / Math.sqrt(n))], (out, [a, b]) =>
          checkMatmulCorner(out, a!, b!, dtype)),
      });
    }
  }

  for (const dtype of ['bfloat16', 'float32'] as const) {
    const [m, k, n] = s.mlp;
    list.push({
      name: `mlp_gelu_${SHORT_DTYPE[dtype]}_${shapeLabel([m, k, n])}`, kind: 'compute', shape: shapeLabel([m, k, n]), dtype,
      flops: 2 * m * k * n, bytes: ITEMSIZE[dtype] * (m * k + k * n + n + m * n),
      prepare: () => jitted(mlpLayer, [randomNormal([m, k], dtype), randomNormal([k, n], dtype, 1 / Math.sqrt(k)), randomNormal([n], dtype)], (out, [x, w, b]) =>
        checkMatmulCorner(out, x!, w!, dtype, { b: b! })),
    });
  }

  list.push(...breadthWorkloads(s), ...dispatchWorkloads(s), ...transferWorkloads(s));
  return list;
}

/** One call per kernel, many calls per sample: µs per call of a tiny jitted function (the result of the last call is waited for). */
function dispatchWorkloads(s: SizeSpec): Workload[] {
  const { elements, calls } = s.dispatch;
  const oneKernel = (x: Array) => jnp.add(x, 1);
  // each max(v) is a reduction the next elementwise op cannot fuse across: ten kernels in jaxon and in XLA
  const tenKernels = (v: Array) => {
    for (let i = 0; i < 10; i++) v = jnp.sin(jnp.add(v, jnp.max(v)));
    return v;
  };
  const make = (name: string, fn: (x: Array) => Array, check?: (out: Array, x: Array) => string | null): Workload => ({
    name, kind: 'dispatch', shape: String(elements), dtype: 'float32', flops: 0, bytes: 0,
    prepare: () => {
      const x = randomNormal([elements]);
      const f = jax.jit(fn);
      return {
        step: () => {
          for (let i = 1; i < calls; i++) f(x).dispose();
          return f(x);
        },
        callsPerStep: calls,
        ...(check ? { check: (out: unknown) => check(out as Array, x) } : {}),
        extra: () => ({ kernels: f.kernelCount(x), calls_per_sample: calls }),
        dispose: () => x.dispose(),
      };
    },
  });
  return [
    make('dispatch_1kernel', oneKernel, (out, x) => compareClose('x + 1', headOf(out, 16), Array.from(headOf(x, 16), (v) => v + 1), 1e-6, 1e-6)),
    make('dispatch_10kernels', tenKernels),
  ];
}

/**
 * devicePut of `s.transfer` bytes: host to device from pageable JS memory
 * (a Float32Array) and from a pinned_host array, device to host into a
 * pinned_host array and into JS memory (dataSync). Reads back a fresh
 * device array each time, so no cached host copy can answer.
 */
function transferWorkloads(s: SizeSpec): Workload[] {
  const n = s.transfer / 4;
  const label = bytesLabel(s.transfer);
  const device = () => jax.devices()[0]!;
  const pinned = () => new jax.sharding.SingleDeviceSharding(device(), { memoryKind: 'pinned_host' });
  const onDevice = () => new jax.sharding.SingleDeviceSharding(device(), { memoryKind: 'device' });
  // the same copy as a plain cuMemcpyAsync (CUDA events, median of 5), beside each transfer row on a CUDA device
  const plainCopy = (direction: 'h2d' | 'd2h', host: 'pinned' | 'pageable') => (): Record<string, unknown> => {
    const d = device() as unknown as { platform: string; backend: { info: { handle: CudaDeviceHandle } } };
    if (d.platform !== 'cuda') return {};
    const times = [...native().cudaCopyBenchmark(d.backend.info.handle, s.transfer, direction, host, 5)].sort((a, b) => a - b);
    return { plain_copy_gbps: s.transfer / (times[2]! / 1000) / 1e9, plain_copy_timing: 'cuda events' };
  };
  const row = (name: string, prepare: () => Prepared): Workload => {
    const [direction, host] = name.split('_') as ['h2d' | 'd2h', 'pinned' | 'pageable'];
    return { name: `${name}_${label}`, kind: 'transfer', shape: label, dtype: 'float32', flops: 0, bytes: s.transfer, prepare: () => ({ extra: plainCopy(direction, host), ...prepare() }) };
  };
  const hostData = () => {
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 1000) / 1000 + 0.5;
    return data;
  };
  const sameHead = (what: string, got: ArrayLike<number>, data: Float32Array) => compareClose(what, Array.from(got).slice(0, 1024), data.subarray(0, Math.min(1024, got.length)), 0, 0);
  return [
    row('h2d_pageable', () => {
      const data = hostData();
      return { step: () => jax.devicePut(data, device()), check: (out) => sameHead('h2d pageable', headOf(out as Array, 1024), data), dispose: () => {} };
    }),
    row('h2d_pinned', () => {
      const data = hostData();
      const host = jax.devicePut(data, pinned());
      return { step: () => jax.devicePut(host, onDevice()), check: (out) => sameHead('h2d pinned', headOf(out as Array, 1024), data), dispose: () => host.dispose() };
    }),
    row('d2h_pinned', () => {
      const x = randomNormal([n]);
      return {
        step: () => jax.devicePut(x, pinned()),
        check: (out) => ((out as Array).sharding.memoryKind === 'pinned_host' ? null : `d2h pinned: result in ${(out as Array).sharding.memoryKind}`),
        dispose: () => x.dispose(),
      };
    }),
    row('d2h_pageable', () => {
      const x = randomNormal([n]);
      let fresh: Array | null = null;
      return {
        before: () => {
          fresh?.dispose();
          fresh = jnp.array(x, { copy: true }).blockUntilReady();
        },
        step: () => fresh!.dataSync(),
        dispose: () => {
          fresh?.dispose();
          x.dispose();
        },
      };
    }),
  ];
}
