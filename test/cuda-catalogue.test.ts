// Every kernel the CUDA renderer emits, run on a CUDA device (a GPU, or
// jaxon's emulated one under JAXON_CUDA_EMULATOR=1) and on the CPU backend
// from the same inputs, output for output: the kernel catalogue
// (helpers/kernel-catalogue.ts: each lowered primitive over its dtypes,
// fused programs of real models) with random inputs and poisoned outputs, so
// a kernel that writes nothing, writes part of its output, or computes
// something else cannot pass. Integers, booleans and data movement must
// agree bit for bit; floats to a few ulps (float32 dots and convs to f32 accumulation error, tf32 at default
// precision), since the two backends' libm
// differ (NaN where the other has NaN).
import test from 'ava';
import { type DType, itemsize } from '../lib/core/dtype.js';
import { unpackValues } from '../lib/core/host.js';
import type { Kernel } from '../lib/compiler/kernel-ir.js';
import { renderCuda } from '../lib/compiler/render/cuda.js';
import { cpuKernel } from '../lib/runtime/cpu.js';
import { type CudaDevice, createCudaDevice, cudaAvailability } from '../lib/runtime/cuda.js';
import { native } from '../lib/runtime/native.js';
import { type CatalogueEntry, bufferLayout, kernelCatalogue } from './helpers/kernel-catalogue.js';

const availability = cudaAvailability();
const onCuda = availability.available && process.env['JAXON_TEST_PLATFORM'] === 'cuda';
if (!onCuda) {
  test('the kernel catalogue on a CUDA device (skipped)', (t) => {
    t.log(`skipped: runs in the CUDA run of the suite (JAXON_TEST_PLATFORM=cuda, a GPU or JAXON_CUDA_EMULATOR=1); here: ${availability.reason}`);
    t.pass();
  });
}

/** Deterministic values a kernel can take for a buffer of this dtype (indices stay small, so gathers hit and miss). */
function fill(dtype: DType, bytes: number, seed: number): Uint8Array {
  const n = Math.floor(bytes / itemsize(dtype));
  let state = (seed * 2654435761) >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  for (let i = 0; i < n; i++) {
    const u = next();
    switch (dtype) {
      case 'float32': view.setFloat32(4 * i, u * 6 - 3, true); break;
      case 'float64': view.setFloat64(8 * i, u * 6 - 3, true); break;
      case 'float16': case 'bfloat16': {
        const f = new Float32Array([u * 6 - 3]);
        const bits = new Uint32Array(f.buffer)[0]!;
        view.setUint16(2 * i, dtype === 'bfloat16' ? bits >>> 16 : halfBits(f[0]!), true);
        break;
      }
      case 'int32': view.setInt32(4 * i, Math.floor(u * 14) - 4, true); break;
      case 'uint32': view.setUint32(4 * i, Math.floor(u * 10), true); break;
      case 'int16': view.setInt16(2 * i, Math.floor(u * 14) - 4, true); break;
      case 'uint16': view.setUint16(2 * i, Math.floor(u * 10), true); break;
      case 'int8': view.setInt8(i, Math.floor(u * 14) - 4); break;
      case 'uint8': view.setUint8(i, Math.floor(u * 10)); break;
      case 'bool': view.setUint8(i, u < 0.5 ? 1 : 0); break;
    }
  }
  return out;
}

/** float → IEEE half bits, round to nearest even (the inputs here are normal numbers). */
function halfBits(f: number): number {
  const b = new Uint32Array(new Float32Array([f]).buffer)[0]!;
  const sign = (b >>> 16) & 0x8000;
  let x = (b & 0x7fffffff) - 0x38000000;
  x += 0xfff + ((x >>> 13) & 1);
  return sign | (x >>> 13);
}

/** How many units in the last place of dtype a and b are apart (NaN with NaN: 0; NaN with a number: Infinity). */
function ulps(a: number, b: number, dtype: DType): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  if (a === b) return 0;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Infinity;
  const mantissa = dtype === 'float64' ? 52 : dtype === 'float32' ? 23 : dtype === 'float16' ? 10 : 7;
  const scale = Math.max(Math.abs(a), Math.abs(b), dtype === 'float32' ? 1.2e-38 : dtype === 'float16' ? 6.1e-5 : 1e-300);
  return Math.abs(a - b) / (2 ** (Math.floor(Math.log2(scale)) - mantissa));
}

const FLOATS = new Set<DType>(['float32', 'float64', 'float16', 'bfloat16']);

/**
 * The entries the emulated GPU runs: all of them on a real GPU or with JAXON_CATALOGUE_FULL=1; on the emulator, whose
 * kernels are each compiled by the host's C++ compiler on both sides (about a quarter of CI's emulated pass for the
 * full catalogue), every entry but the single-primitive elementwise ones, of which a cover: each primitive once, each
 * operand dtype once, and each primitive in each half type (float16, bfloat16: the conversions most particular to
 * CUDA). lax.test.ts runs the elementwise primitives over their dtypes on the emulated GPU against the float64
 * reference, so most of what the cover leaves out is still compared there.
 */
function onEmulator<E extends CatalogueEntry>(entries: E[]): E[] {
  if (process.env['JAXON_CUDA_EMULATOR'] !== '1' || process.env['JAXON_CATALOGUE_FULL'] === '1') return entries;
  const seen = new Set<string>();
  return entries.filter((e) => {
    const single = e.kernel.kind === 'elementwise' ? /^([a-z_0-9]+)\(([a-z0-9]+)\[/.exec(e.label) : null;
    if (!single) return true;
    const primitive = single[1]!, dtype = single[2]!;
    const half = dtype === 'float16' || dtype === 'bfloat16';
    const fresh = !seen.has(`op ${primitive}`) || !seen.has(`dtype ${dtype}`) || (half && !seen.has(`${primitive} ${dtype}`));
    for (const key of [`op ${primitive}`, `dtype ${dtype}`, `${primitive} ${dtype}`]) seen.add(key);
    return fresh;
  });
}

if (onCuda) {
  test('every catalogue kernel computes on the CUDA device what the CPU backend computes', (t) => {
    const device: CudaDevice = createCudaDevice(0);
    // sort stages that read an order (merge, permute, top_k) need the order the stage before made, not random values
    // (positions out of range), and the rank stage's order differs by design (the CPU sorts each whole line, the GPU
    // runs of the width; render/sort.ts); sort.test.ts runs whole sorts on the device against NumPy instead
    // so do the blocked linalg stages (each works on what the stages before it left; linalg-blocked.test.ts runs them whole)
    const readsOrder = (k: Kernel) => (k.kind === 'sort' && k.stage !== 'sort_rows') || (k.kind === 'linalg' && k.blocked !== undefined) || (k.kind === 'orthogonal' && k.cudaStage !== undefined);
    const all = kernelCatalogue().filter((e): e is CatalogueEntry & { bufferBytes: number[] } => e.bufferBytes !== undefined && !readsOrder(e.kernel));
    const entries = onEmulator(all);
    const sources = entries.map((e) => renderCuda(e.kernel, e.params));
    const functions = device.backend.loadKernelsSync(sources); // one parallel NVRTC batch
    const addon = native();
    const failures: string[] = [];
    let compared = 0;
    entries.forEach((e, k) => {
      const { dtypes, outputs } = bufferLayout(e.kernel as Kernel);
      const inputs = e.bufferBytes.map((bytes, i) => (i < outputs ? new Uint8Array(bytes).fill(0xab) : fill(dtypes[i]!, bytes, k * 31 + i)));
      // the CPU backend: C kernels over ArrayBuffers
      const cpuBuffers = inputs.map((b) => b.slice().buffer);
      cpuKernel(e.kernel).call(cpuBuffers, BigInt64Array.from(e.params.map((p) => BigInt(p))));
      // the CUDA device: the rendered kernel over device buffers, outputs poisoned the same way
      const source = sources[k]!;
      const handles = inputs.map((b) => device.backend.fromHost(b));
      if (!source.grid.some((g) => g === 0)) addon.cudaLaunch(functions.get(source.source)!, source.grid, source.block, source.sharedMemBytes, handles.map((h) => h.handle));
      for (let o = 0; o < outputs; o++) {
        const dtype = dtypes[o]!;
        const got = unpackValues(device.backend.toHostSync(handles[o]!), dtype);
        const want = unpackValues(new Uint8Array(cpuBuffers[o]!), dtype);
        compared += want.length;
        // libm differences (exp, tanh, pow, ...) stay within a few ulps, or a small absolute error where a fused chain
        // subtracts nearly equal values; data movement and integers are exact
        const allowed = FLOATS.has(dtype) ? (dtype === 'float32' || dtype === 'float64' ? 8 : 1) : 0;
        let absolute = dtype === 'float32' || dtype === 'float64' ? 1e-6 : FLOATS.has(dtype) ? 1e-3 : 0;
        // float dots: the CPU's GEMM accumulates f32 in f32 (as OpenBLAS and XLA's CPU backend), the CUDA GEMM on
        // tensor cores with f32 accumulators, so they agree to f32 accumulation error, relative to the output's scale
        // (bounded by 16 K eps max|lhs| max|rhs|; an epilogue after the product is 1-Lipschitz in the catalogue);
        // float32 operands at default precision are tf32 on tensor cores (JAX's default on a GPU): 2^-10 relative
        const maxAbs = (i: number) => {
          let m = 0;
          for (const v of unpackValues(inputs[i]!, dtypes[i]!) as ArrayLike<number | bigint> & Iterable<number | bigint>) m = Math.max(m, Math.abs(Number(v)));
          return m;
        };
        const kernel = e.kernel as Kernel;
        if (kernel.kind === 'dot' && dtype === 'float32') {
          const tf32 = kernel.inputDtype === 'float32' && kernel.precision !== 'highest';
          absolute = 2 ** (tf32 ? -10 : -20) * Math.max(1, Number(e.params[3])) * maxAbs(outputs) * maxAbs(outputs + 1) + 1e-6;
        }
        // float convs likewise: the CUDA conv on tensor cores (render/conv-mma.ts) adds the K = taps x features
        // products in mma order, the CPU tap by tap; float32 operands at default precision are tf32 there
        if (kernel.kind === 'conv' && kernel.inputDtype !== 'float64' && FLOATS.has(kernel.inputDtype) && dtype !== 'float64') {
          let K = Number(e.params[2]);
          for (let d = 0; d < kernel.spatialRank; d++) K *= Number(e.params[4 + 7 * d + 2]);
          const tf32 = kernel.inputDtype === 'float32' && kernel.precision !== 'highest';
          absolute = Math.max(absolute, 2 ** (tf32 ? -10 : -20) * Math.max(1, K) * maxAbs(outputs) * maxAbs(outputs + 1) + 1e-6);
        }
        // float32 sums likewise: the CPU adds in float lanes (render/c.ts floatLanes), CUDA in double; n_inner terms
        // of at most the inputs' magnitude (the catalogue's prologues do not grow their values)
        if (kernel.kind === 'reduce' && kernel.op === 'sum' && kernel.inputDtype === 'float32' && dtype === 'float32') {
          let scale = 1;
          for (let i = outputs; i < inputs.length; i++) if (FLOATS.has(dtypes[i]!)) scale = Math.max(scale, maxAbs(i));
          absolute = 2 ** -20 * Math.max(1, Number(e.params[1])) * scale + 1e-6;
        }
        for (let i = 0; i < want.length; i++) {
          const [a, b] = [Number(got[i]), Number(want[i])];
          const d = FLOATS.has(dtype) ? ulps(a, b, dtype) : a === b ? 0 : Infinity;
          if (d <= allowed || Math.abs(a - b) <= absolute) continue;
          failures.push(`${e.label}: output ${o} (${dtype}) element ${i}: CUDA ${a} vs CPU ${b} (${d} ulps)`);
          break;
        }
      }
      for (const h of handles) device.backend.free(h);
    });
    t.log(`${entries.length} of ${all.length} catalogue kernels, ${compared} output elements compared on ${device.deviceKind}`);
    t.true(all.length > 400, `${all.length} catalogue kernels with known buffer sizes`);
    t.deepEqual(failures, []);
  });
}
