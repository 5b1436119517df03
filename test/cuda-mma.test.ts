// The tensor-core device functions (cuda/kernels/jaxon_mma.h) on the CUDA
// device, checked against the PTX ISA's own tables, transcribed here
// independently of the emulator's (cuda/emulator/jaxon_emu_tensor.h): every
// lane's fragment registers of mma.sync m16n8k16 (bf16, f16) and m16n8k8
// (tf32) are filled from random matrices by the ISA's (row, col) formulas,
// and the product must come back at the places the ISA's C/D table names;
// ldmatrix (x1, x2, x4, with and without .trans) loads shared memory whose
// entries are their own offsets, from row addresses given in a scrambled
// order, and every register of every lane must hold the entries the ISA's
// table names; cp.async lands a group only when it is waited for, zero-fills
// past src-size, and wait_group does not wait for copies not yet committed;
// cvt.rna.tf32.f32 rounds to nearest with ties away from zero. On jaxon's
// emulated GPU this checks the emulation; on a GPU, the ISA itself.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { cudaAvailability, createCudaDevice, type CudaDevice } from '../lib/runtime/cuda.js';
import type { CudaKernelSource } from '../lib/compiler/render/cuda.js';
import { native } from '../lib/runtime/native.js';

const availability = cudaAvailability();
const onCuda = availability.available && process.env['JAXON_TEST_PLATFORM'] === 'cuda';
if (!onCuda) {
  test('tensor-core device functions on a CUDA device (skipped)', (t) => {
    t.log(`skipped: runs in the CUDA run of the suite (JAXON_TEST_PLATFORM=cuda, a GPU or JAXON_CUDA_EMULATOR=1); here: ${availability.reason}`);
    t.pass();
  });
}

const PRELUDE = '#include "jaxon_cuda.h"\n#include "jaxon_mma.h"\n';

/** Runs a one-warp kernel over the given input buffers; returns its output buffer's bytes. */
function runWarpKernel(device: CudaDevice, name: string, body: string, params: string, outBytes: number, inputs: Uint8Array[], sharedMemBytes = 0): Uint8Array {
  const source: CudaKernelSource = {
    name,
    source: `${PRELUDE}extern "C" __global__ void __launch_bounds__(32) ${name}(${params}) {\n${body}\n}\n`,
    grid: [1, 1, 1],
    block: [32, 1, 1],
    sharedMemBytes,
  };
  const fn = device.backend.loadKernelsSync([source]).get(source.source)!;
  const out = device.backend.fromHost(new Uint8Array(outBytes).fill(0xab));
  const ins = inputs.map((b) => device.backend.fromHost(b));
  native().cudaLaunch(fn, source.grid, source.block, sharedMemBytes, [out.handle, ...ins.map((b) => b.handle)]);
  const bytes = device.backend.toHostSync(out);
  for (const b of [out, ...ins]) device.backend.free(b);
  return bytes;
}

const bytesOf = (a: Uint32Array | Float32Array | Int32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

// ---- the PTX ISA's fragment tables (groupID g = lane >> 2, threadID_in_group t = lane % 4) ----

interface Place {
  row: number;
  col: number;
}
/** mma.m16n8k16 .f16/.bf16, A (16 x 16): element a_i of a lane, i in 0..7 (register i >> 1, half i & 1). */
function aPlace16(lane: number, i: number): Place {
  const g = lane >> 2, t = lane & 3;
  return { row: i < 2 || (i >= 4 && i < 6) ? g : g + 8, col: t * 2 + (i & 1) + (i >= 4 ? 8 : 0) };
}
/** mma.m16n8k16 .f16/.bf16, B (16 x 8): b_i, i in 0..3. */
function bPlace16(lane: number, i: number): Place {
  const g = lane >> 2, t = lane & 3;
  return { row: t * 2 + (i & 1) + (i >= 2 ? 8 : 0), col: g };
}
/** mma.m16n8k8 .tf32, A (16 x 8): a_i, i in 0..3 (one register each). */
function aPlace8(lane: number, i: number): Place {
  const g = lane >> 2, t = lane & 3;
  return { row: i === 0 || i === 2 ? g : g + 8, col: i < 2 ? t : t + 4 };
}
/** mma.m16n8k8 .tf32, B (8 x 8): b_i, i in 0..1. */
function bPlace8(lane: number, i: number): Place {
  const g = lane >> 2, t = lane & 3;
  return { row: i === 0 ? t : t + 4, col: g };
}
/** C and D (16 x 8, f32) of both shapes: c_i, i in 0..3. */
function cPlace(lane: number, i: number): Place {
  const g = lane >> 2, t = lane & 3;
  return { row: i < 2 ? g : g + 8, col: t * 2 + (i & 1) };
}

/** Deterministic small integers in [lo, hi]: exact in bf16, f16 and tf32, and their sums exact in f32. */
function integers(n: number, seed: number, lo: number, hi: number): number[] {
  let s = seed >>> 0 || 1;
  return Array.from({ length: n }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return lo + ((s >>> 0) % (hi - lo + 1));
  });
}

const f32bits = (x: number): number => new Uint32Array(new Float32Array([x]).buffer)[0]!;
const bf16bits = (x: number): number => f32bits(x) >>> 16; // exact for the small integers used here
function f16bits(x: number): number {
  if (x === 0) return Object.is(x, -0) ? 0x8000 : 0;
  const sign = x < 0 ? 0x8000 : 0;
  const a = Math.abs(x);
  const e = Math.floor(Math.log2(a));
  return sign | ((e + 15) << 10) | Math.round((a / 2 ** e - 1) * 1024);
}

for (const kind of ['bf16', 'f16', 'tf32'] as const) {
  (onCuda ? test : test.skip)(`mma.sync ${kind === 'tf32' ? 'm16n8k8 tf32' : `m16n8k16 ${kind}`}: every lane's A, B, C and D registers sit where the PTX ISA's tables put them`, (t) => {
    const device = createCudaDevice(0);
    const K = kind === 'tf32' ? 8 : 16;
    const A = integers(16 * K, 11, -8, 8), B = integers(K * 8, 12, -8, 8), C = integers(16 * 8, 13, -100, 100);
    const aRegs = new Uint32Array(32 * 4), bRegs = new Uint32Array(32 * 2), cRegs = new Float32Array(32 * 4);
    const half = kind === 'bf16' ? bf16bits : f16bits;
    for (let lane = 0; lane < 32; lane++) {
      if (kind === 'tf32') {
        // garbage in the 13 low bits, which the tf32 mma ignores
        for (let i = 0; i < 4; i++) { const p = aPlace8(lane, i); aRegs[lane * 4 + i] = f32bits(A[p.row * K + p.col]!) | ((lane * 37 + i * 11) & 0x1fff); }
        for (let i = 0; i < 2; i++) { const p = bPlace8(lane, i); bRegs[lane * 2 + i] = f32bits(B[p.row * 8 + p.col]!) | ((lane * 13 + i * 7) & 0x1fff); }
      } else {
        for (let r = 0; r < 4; r++) {
          const [lo, hi] = [aPlace16(lane, 2 * r), aPlace16(lane, 2 * r + 1)];
          aRegs[lane * 4 + r] = (half(A[lo.row * K + lo.col]!) | (half(A[hi.row * K + hi.col]!) << 16)) >>> 0;
        }
        for (let r = 0; r < 2; r++) {
          const [lo, hi] = [bPlace16(lane, 2 * r), bPlace16(lane, 2 * r + 1)];
          bRegs[lane * 2 + r] = (half(B[lo.row * 8 + lo.col]!) | (half(B[hi.row * 8 + hi.col]!) << 16)) >>> 0;
        }
      }
      for (let i = 0; i < 4; i++) { const p = cPlace(lane, i); cRegs[lane * 4 + i] = C[p.row * 8 + p.col]!; }
    }
    const fn = kind === 'tf32' ? 'jx_mma_m16n8k8_tf32' : `jx_mma_m16n8k16_${kind}`;
    const out = runWarpKernel(device, `jaxon_test_mma_${kind}`, `
  const int l = threadIdx.x;
  jx_u32 ra[4], rb[2];
  float d[4];
  for (int i = 0; i < 4; i++) { ra[i] = a[l * 4 + i]; d[i] = c[l * 4 + i]; }
  for (int i = 0; i < 2; i++) rb[i] = b[l * 2 + i];
  ${fn}(d, ra, rb);
  for (int i = 0; i < 4; i++) out[l * 4 + i] = d[i];`, 'float *out, const jx_u32 *a, const jx_u32 *b, const float *c', 32 * 4 * 4, [bytesOf(aRegs), bytesOf(bRegs), bytesOf(cRegs)]);
    const D = new Float32Array(out.buffer, out.byteOffset, 128);
    const wrong: string[] = [];
    for (let lane = 0; lane < 32; lane++) {
      for (let i = 0; i < 4; i++) {
        const { row, col } = cPlace(lane, i);
        let want = C[row * 8 + col]!;
        for (let k = 0; k < K; k++) want += A[row * K + k]! * B[k * 8 + col]!;
        if (D[lane * 4 + i] !== want) wrong.push(`lane ${lane} d${i} (D[${row}][${col}]): ${D[lane * 4 + i]}, expected ${want}`);
      }
    }
    t.deepEqual(wrong.slice(0, 8), []);
  });
}

for (const count of [1, 2, 4] as const) {
  for (const trans of [false, true]) {
    (onCuda ? test : test.skip)(`ldmatrix .x${count}${trans ? '.trans' : ''}: each lane's registers hold the entries the PTX ISA's table names, from scrambled row addresses`, (t) => {
      const device = createCudaDevice(0);
      // 64 rows of 8 entries; entry e holds e; lane l addresses row `slot[l]` (matrix l >> 3, row l & 7)
      const slots = integers(64, 5 + count + (trans ? 7 : 0), 0, 1 << 20).map((v, i) => ({ v, i })).sort((x, y) => x.v - y.v).map((x) => x.i).slice(0, 32);
      const offsets = Int32Array.from(slots, (s) => s * 8);
      const out = runWarpKernel(device, `jaxon_test_ldmatrix_x${count}${trans ? '_trans' : ''}`, `
  __shared__ __align__(16) jx_u16 s[512];
  for (int i = threadIdx.x; i < 512; i += 32) s[i] = (jx_u16)i;
  __syncwarp();
  jx_u32 r[4] = {0, 0, 0, 0};
  jx_ldmatrix_x${count}${trans ? '_trans' : ''}(r, s + rows[threadIdx.x]);
  for (int i = 0; i < 4; i++) out[threadIdx.x * 4 + i] = r[i];`, 'jx_u32 *out, const int *rows', 32 * 4 * 4, [bytesOf(offsets)]);
      const regs = new Uint32Array(out.buffer, out.byteOffset, 128);
      const wrong: string[] = [];
      for (let lane = 0; lane < 32; lane++) {
        const g = lane >> 2, tg = lane & 3;
        for (let i = 0; i < count; i++) {
          // matrix i's row j starts at offsets[8 i + j]
          const at = (row: number, col: number) => offsets[8 * i + row]! + col;
          const [lo, hi] = trans ? [at(2 * tg, g), at(2 * tg + 1, g)] : [at(g, 2 * tg), at(g, 2 * tg + 1)];
          const want = (lo | (hi << 16)) >>> 0;
          if (regs[lane * 4 + i] !== want) wrong.push(`lane ${lane} register ${i}: 0x${regs[lane * 4 + i]!.toString(16)}, expected 0x${want.toString(16)}`);
        }
      }
      t.deepEqual(wrong.slice(0, 8), []);
    });
  }
}

(onCuda ? test : test.skip)('cp.async: a group lands when waited for, src-size zero-fills the rest, wait_group skips uncommitted copies', (t) => {
  const device = createCudaDevice(0);
  const src = Float32Array.from({ length: 384 }, (_, i) => i + 1);
  const out = runWarpKernel(device, 'jaxon_test_cp_async', `
  __shared__ __align__(16) float s[3][128];
  const int l = threadIdx.x;
  for (int k = 0; k < 3; k++) for (int i = 0; i < 4; i++) s[k][l * 4 + i] = -1.0f;
  jx_cp_async_16(&s[0][l * 4], src + l * 4, 16);
  jx_cp_async_commit();
  jx_cp_async_16(&s[1][l * 4], src + 128 + l * 4, (l % 5) * 4);  // 0, 4, 8, 12 or 16 bytes read, the rest zeros
  jx_cp_async_commit();
  jx_cp_async_wait<1>();  // group 0 has landed
  for (int i = 0; i < 4; i++) out[l * 4 + i] = s[0][l * 4 + i];
#ifdef JX_EMULATED
  for (int i = 0; i < 4; i++) out[128 + l * 4 + i] = s[1][l * 4 + i];  // the emulation has not done group 1 yet
#endif
  jx_cp_async_wait<0>();
  for (int i = 0; i < 4; i++) out[256 + l * 4 + i] = s[1][l * 4 + i];
  jx_cp_async_16(&s[2][l * 4], src + 256 + l * 4, 16);  // not committed: wait_group 0 does not wait for it
  jx_cp_async_wait<0>();
#ifdef JX_EMULATED
  for (int i = 0; i < 4; i++) out[384 + l * 4 + i] = s[2][l * 4 + i];
#endif
  jx_cp_async_wait_all();
  for (int i = 0; i < 4; i++) out[512 + l * 4 + i] = s[2][l * 4 + i];`, 'float *out, const float *src', 640 * 4, [bytesOf(src)]);
  const got = Array.from(new Float32Array(out.buffer, out.byteOffset, 640));
  const emulated = process.env['JAXON_CUDA_EMULATOR'] === '1';
  t.deepEqual(got.slice(0, 128), Array.from(src.subarray(0, 128)), 'group 0 after wait_group 1');
  if (emulated) t.deepEqual(got.slice(128, 256), new Array(128).fill(-1), 'group 1 before its wait (the emulation performs copies at the wait)');
  const zeroFilled = Array.from({ length: 128 }, (_, i) => ((i & 3) < ((i >> 2) % 5) ? src[128 + i]! : 0));
  t.deepEqual(got.slice(256, 384), zeroFilled, 'group 1 after wait_group 0, zero-filled past src-size');
  if (emulated) t.deepEqual(got.slice(384, 512), new Array(128).fill(-1), 'an uncommitted copy after wait_group 0');
  t.deepEqual(got.slice(512, 640), Array.from(src.subarray(256, 384)), 'after wait_all');
});

/** cvt.rna.tf32.f32 on float bits: round to 10 mantissa bits, nearest, ties away from zero (NaN stays NaN). */
function tf32Bits(bits: number): number {
  if ((bits & 0x7f800000) === 0x7f800000) return (bits & 0x7fffffff) === 0x7f800000 ? bits : ((bits | 0x400000) & 0xffffe000) >>> 0;
  return ((bits + 0x1000) & 0xffffe000) >>> 0;
}

(onCuda ? test : test.skip)('cvt.rna.tf32.f32 keeps 10 mantissa bits, rounding to nearest with ties away from zero', (t) => {
  const device = createCudaDevice(0);
  const inputs = Uint32Array.from([
    0x3f800000, 0x3f800fff, 0x3f801000, 0x3f801001, 0x3f802000, 0x3f803000, // 1, just under a tie, the tie (away), just over, exact, the next tie
    0xbf801000, 0xbf800fff, 0x7f7fffff, 0x00001000, 0x00000fff, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
    ...integers(16, 99, 0, 0x7f000000).map((v) => (v * 7) >>> 0),
  ]);
  const out = runWarpKernel(device, 'jaxon_test_tf32', `
  for (int i = threadIdx.x; i < n[0]; i += 32) out[i] = jx_f2tf32(__uint_as_float(x[i]));`, 'jx_u32 *out, const jx_u32 *x, const int *n', inputs.length * 4, [bytesOf(inputs), bytesOf(Int32Array.of(inputs.length))]);
  const got = new Uint32Array(out.buffer, out.byteOffset, inputs.length);
  inputs.forEach((x, i) => {
    const want = tf32Bits(x);
    const isNaN = (b: number) => (b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0;
    if (isNaN(want)) t.true(isNaN(got[i]!), `0x${x.toString(16)}: a NaN`);
    else t.is(got[i], want, `0x${x.toString(16)}`);
  });
});

// ---- Hopper: wgmma from shared-memory matrix descriptors, mbarriers ----

/** Where accumulator d_i of thread x of a warpgroup sits (wgmma m64nNk16, f32): row 16 w + g + 8 ((i % 4) >> 1), column 8 (i / 4) + 2 t + (i & 1), w = x / 32. */
function wgmmaPlace(x: number, i: number): { row: number; col: number } {
  const w = x >> 5, lane = x & 31, g = lane >> 2, tq = lane & 3;
  return { row: 16 * w + g + 8 * ((i & 3) >> 1), col: 8 * (i >> 2) + 2 * tq + (i & 1) };
}

/** C (64 x n, row-major) as each thread's accumulator registers, thread by thread. */
function wgmmaAccumulators(C: ArrayLike<number>, n: number): Float32Array {
  const regs = new Float32Array(128 * (n / 2));
  for (let x = 0; x < 128; x++) for (let i = 0; i < n / 2; i++) { const p = wgmmaPlace(x, i); regs[x * (n / 2) + i] = C[p.row * n + p.col]!; }
  return regs;
}

/** Runs a one-warpgroup wgmma test kernel (out, shared-memory image, accumulators); out holds n / 2 floats a thread and `extra` more. */
function runWgmma(device: ReturnType<typeof createCudaDevice>, source: CudaKernelSource, image: Uint16Array, cRegs: Float32Array, n: number, extra: number): Float32Array {
  const fn = device.backend.loadKernelsSync([source]).get(source.source)!;
  const out = device.backend.fromHost(new Uint8Array(4 * (128 * (n / 2) + extra)));
  const ins = [bytesOf(new Uint32Array(image.buffer)), bytesOf(cRegs)].map((b) => device.backend.fromHost(b));
  native().cudaLaunch(fn, source.grid, source.block, source.sharedMemBytes, [out.handle, ...ins.map((b) => b.handle)]);
  const got = new Float32Array(device.backend.toHostSync(out).buffer);
  for (const b of [out, ...ins]) device.backend.free(b);
  return got;
}

/** The accumulators a wgmma got wrong: D = C + A[:, 16..31] B[:, 16..31]^T, A and B rows of `kStride` k each. */
function wgmmaWrong(got: Float32Array, n: number, A: ArrayLike<number>, B: ArrayLike<number>, C: ArrayLike<number>, kStride: number): string[] {
  const wrong: string[] = [];
  for (let x = 0; x < 128; x++) {
    for (let i = 0; i < n / 2; i++) {
      const { row, col } = wgmmaPlace(x, i);
      let want = C[row * n + col]!;
      for (let k = 16; k < 32; k++) want += A[row * kStride + k]! * B[col * kStride + k]!;
      if (got[x * (n / 2) + i] !== want) wrong.push(`thread ${x} d${i} (D[${row}][${col}]): ${got[x * (n / 2) + i]}, expected ${want}`);
    }
  }
  return wrong;
}

/** PTX ISA, K-major operand with the 128-byte swizzle: byte address of (row, k-byte) from the descriptor's start and SBO. */
function sw128Address(start: number, sbo: number, row: number, kbyte: number): number {
  const a = start + Math.floor(row / 8) * sbo + (row % 8) * 128 + kbyte;
  return a ^ (((a >> 7) & 7) << 4);
}

for (const [n, kind] of [[128, 'bf16'], [64, 'f16']] as const) {
  (onCuda ? test : test.skip)(`wgmma m64n${n}k16 ${kind}: operands through 128B-swizzled K-major descriptors, every thread's accumulators where the PTX ISA puts them`, (t) => {
    const device = createCudaDevice(0);
    // A: 64 x 64 and B: n x 64 (K-major), values small integers; the wgmma reads k 16..31 (descriptor start + 32 bytes)
    const A = integers(64 * 64, 21, -6, 6), B = integers(n * 64, 22, -6, 6), C = integers(64 * n, 23, -50, 50);
    const half = kind === 'bf16' ? bf16bits : f16bits;
    const image = new Uint16Array((8192 + n * 128) / 2);
    const bBase = 8192;
    for (let r = 0; r < 64; r++) for (let k = 0; k < 64; k++) image[sw128Address(0, 1024, r, 2 * k) / 2] = half(A[r * 64 + k]!);
    for (let c = 0; c < n; c++) for (let k = 0; k < 64; k++) image[sw128Address(bBase, 1024, c, 2 * k) / 2] = half(B[c * 64 + k]!);
    const cRegs = wgmmaAccumulators(C, n);
    const source: CudaKernelSource = {
      name: `jaxon_test_wgmma_${n}_${kind}`,
      source: `${PRELUDE}extern "C" __global__ void __launch_bounds__(128) jaxon_test_wgmma_${n}_${kind}(float *out, const jx_u16 *image, const float *c) {
  extern __shared__ __align__(1024) unsigned char smem[];
  for (int i = threadIdx.x; i < ${image.length}; i += 128) ((jx_u16 *)smem)[i] = image[i];
  __syncthreads();
  jx_fence_proxy_async();
  float d[${n / 2}];
  for (int i = 0; i < ${n / 2}; i++) d[i] = c[threadIdx.x * ${n / 2} + i];
  const jx_u64 da = jx_wgmma_desc(jx_smem_u32(smem) + 32, 16, 1024, 1), db = jx_wgmma_desc(jx_smem_u32(smem + ${bBase}) + 32, 16, 1024, 1);
  jx_wgmma_fence();
  jx_wgmma_m64n${n}k16_${kind}(d, da, db, 1);
  jx_wgmma_commit();
#ifdef JX_EMULATED
  out[${128 * (n / 2)} + threadIdx.x] = d[0];  // before the wait: the emulation has not performed it yet
#endif
  jx_wgmma_wait<0>();
  for (int i = 0; i < ${n / 2}; i++) out[threadIdx.x * ${n / 2} + i] = d[i];
}
`,
      grid: [1, 1, 1], block: [128, 1, 1], sharedMemBytes: image.byteLength,
    };
    const got = runWgmma(device, source, image, cRegs, n, 128);
    const wrong = wgmmaWrong(got, n, A, B, C, 64);
    t.deepEqual(wrong.slice(0, 8), []);
    if (process.env['JAXON_CUDA_EMULATOR'] === '1') {
      t.deepEqual(Array.from(got.subarray(128 * (n / 2))), Array.from({ length: 128 }, (_, x) => cRegs[x * (n / 2)]!), 'accumulators untouched before wgmma.wait_group');
    }
  });
}

(onCuda ? test : test.skip)('mbarrier: phases complete after the expected arrivals, try_wait.parity sees them, cp.async.mbarrier.arrive lands copies first', (t) => {
  const device = createCudaDevice(0);
  const src = Float32Array.from({ length: 64 }, (_, i) => i + 0.5);
  // warp 1 produces (plain stores, then cp.async with an arrive.noinc), warp 0 consumes; 2 rounds on one barrier
  const source: CudaKernelSource = {
    name: 'jaxon_test_mbarrier',
    source: `${PRELUDE}extern "C" __global__ void __launch_bounds__(64) jaxon_test_mbarrier(float *out, const float *src) {
  extern __shared__ __align__(1024) unsigned char smem[];
  jx_u64 *bar = (jx_u64 *)smem;
  float *data = (float *)(smem + 128);
  const int x = threadIdx.x;
  if (x == 0) {
    jx_mbarrier_init(bar, 32);
    out[200] = jx_mbarrier_try_wait(bar, 1) ? 1.0f : 0.0f;  // the phase before the first counts as complete
    out[201] = jx_mbarrier_try_wait(bar, 0) ? 1.0f : 0.0f;  // the first is not
  }
  __syncthreads();
  if (x >= 32) {
    data[x - 32] = src[x - 32] * 2.0f;
    jx_mbarrier_arrive(bar);                         // round 0: 32 plain arrivals
    jx_mbarrier_wait(bar, 0);                        // round 0 done (round 1 writes elsewhere)
    jx_cp_async_4(data + 32 + (x - 32), src + 32 + (x - 32), 4);
    jx_cp_async_mbarrier_arrive(bar);                // round 1: the copies, then the arrival
  } else {
    jx_mbarrier_wait(bar, 0);
    out[x] = data[x];
    jx_mbarrier_wait(bar, 1);
    out[32 + x] = data[32 + x];
  }
}
`,
    grid: [1, 1, 1], block: [64, 1, 1], sharedMemBytes: 1024,
  };
  const fn = device.backend.loadKernelsSync([source]).get(source.source)!;
  const out = device.backend.fromHost(new Uint8Array(4 * 256));
  const input = device.backend.fromHost(bytesOf(src));
  native().cudaLaunch(fn, source.grid, source.block, source.sharedMemBytes, [out.handle, input.handle]);
  const got = Array.from(new Float32Array(device.backend.toHostSync(out).buffer));
  device.backend.free(out);
  device.backend.free(input);
  t.deepEqual(got.slice(0, 32), Array.from(src.subarray(0, 32), (v) => v * 2), 'round 0: the plain stores');
  t.deepEqual(got.slice(32, 64), Array.from(src.subarray(32, 64)), 'round 1: the copies');
  t.deepEqual(got.slice(200, 202), [1, 0], 'try_wait.parity on a fresh barrier');
});

// ---- Hopper: TMA (cp.async.bulk.tensor through a tensor map the launch encodes), expect_tx ----

/**
 * Where the PTX ISA's 128-byte swizzle puts byte `offset` of a box written densely from a 1024-byte aligned
 * address: in 128-byte line L, the 16-byte chunk c moves to chunk c XOR (L mod 8); without swizzle, in place.
 */
function swizzledOffset(offset: number, swizzle: 0 | 3): number {
  if (swizzle === 0) return offset;
  const line = Math.floor(offset / 128), chunk = Math.floor((offset % 128) / 16);
  return line * 128 + (chunk ^ (line % 8)) * 16 + (offset % 16);
}

for (const [swizzle, rank] of [[3, 3], [0, 2]] as const) {
  (onCuda ? test : test.skip)(`TMA: a ${rank}-d box at odd coordinates lands ${swizzle ? '128B-swizzled (chunk ^ line % 8)' : 'unswizzled'}, zeros outside the tensor, its bytes completing on the mbarrier`, (t) => {
    const device = createCudaDevice(0);
    // a bfloat16-sized tensor [2][37][80 (72 used)]: rows of 160 bytes, batches of 37 rows; element values unique, nonzero
    const [K, F, Bn, rowElems] = [72, 37, 2, 80];
    const tensor = new Uint16Array(Bn * F * rowElems);
    for (let b = 0; b < Bn; b++) for (let f = 0; f < F; f++) for (let k = 0; k < rowElems; k++) tensor[(b * F + f) * rowElems + k] = 1 + ((b * F + f) * K + k) % 65000;
    const box = rank === 3 ? [64, 40, 1] : [24, 8];
    const at = rank === 3 ? [40, -3, 1] : [56, 33]; // k past K, rows before 0 (3-d); k and rows past the ends (2-d)
    const boxBytes = box.reduce((a, b) => a * b, 1) * 2;
    const map = { arg: 1, dataType: 9, dims: rank === 3 ? [K, F, Bn] : [K, F], strides: rank === 3 ? [rowElems * 2, F * rowElems * 2] : [rowElems * 2], box, swizzle };
    const load = rank === 3 ? `jx_tma_load_3d(smem, &map, bar, ${at.join(', ')})` : `jx_tma_load_2d(smem, &map, bar, ${at.join(', ')})`;
    const source: CudaKernelSource = {
      name: `jaxon_test_tma_${rank}d_${swizzle}`,
      source: `${PRELUDE}extern "C" __global__ void __launch_bounds__(32) jaxon_test_tma_${rank}d_${swizzle}(jx_u16 *out, const jx_u16 *tensor, const __grid_constant__ jx_tensor_map map) {
  extern __shared__ __align__(1024) unsigned char smem[];
  jx_u64 *bar = (jx_u64 *)(smem + ${Math.ceil(boxBytes / 1024) * 1024});
  for (int i = threadIdx.x; i < ${boxBytes / 2}; i += 32) ((jx_u16 *)smem)[i] = 0xabcd;
  jx_fence_proxy_async();
  __syncwarp();
  if (threadIdx.x == 0) {
    jx_mbarrier_init(bar, 1);
    jx_fence_mbarrier_init();
    jx_mbarrier_arrive_expect_tx(bar, ${boxBytes});
    out[${boxBytes / 2}] = jx_mbarrier_try_wait(bar, 0) ? 1 : 0;  // arrived, but the bytes have not landed
    ${load};
  }
  __syncwarp();
  jx_mbarrier_wait(bar, 0);
  for (int i = threadIdx.x; i < ${boxBytes / 2}; i += 32) out[i] = ((const jx_u16 *)smem)[i];
}
`,
      grid: [1, 1, 1], block: [32, 1, 1], sharedMemBytes: Math.ceil(boxBytes / 1024) * 1024 + 64,
    };
    const fn = device.backend.loadKernelsSync([source]).get(source.source)!;
    const out = device.backend.fromHost(new Uint8Array(boxBytes + 16));
    const input = device.backend.fromHost(new Uint8Array(tensor.buffer));
    native().cudaLaunch(fn, source.grid, source.block, source.sharedMemBytes, [out.handle, input.handle], [map]);
    const got = new Uint16Array(device.backend.toHostSync(out).buffer);
    device.backend.free(out);
    device.backend.free(input);
    const wrong: string[] = [];
    const count = boxBytes / 2;
    for (let i = 0; i < count; i++) {
      // box element i: k = at[0] + i % box[0], row = at[1] + (i / box[0]) % box[1], batch = at[2] + ...
      const k = at[0]! + (i % box[0]!), row = at[1]! + (Math.floor(i / box[0]!) % box[1]!), b = rank === 3 ? at[2]! + Math.floor(i / (box[0]! * box[1]!)) : 0;
      const inside = k >= 0 && k < K && row >= 0 && row < F && b >= 0 && b < Bn;
      const want = inside ? tensor[(b * F + row) * rowElems + k]! : 0;
      const place = swizzledOffset(2 * i, swizzle) / 2;
      if (got[place] !== want) wrong.push(`box element ${i} (k ${k}, row ${row}, batch ${b}) at shared element ${place}: ${got[place]}, expected ${want}`);
    }
    t.deepEqual(wrong.slice(0, 8), [], `${wrong.length} wrong`);
    t.is(got[count], 0, 'the phase waits for the transaction bytes, not only the arrival');
  });
}

(onCuda ? test : test.skip)('cuTensorMapEncodeTiled refuses what the driver documents: strides not multiples of 16, boxes over 256 or wider than the swizzle, zero sizes', (t) => {
  const device = createCudaDevice(0);
  const source: CudaKernelSource = {
    name: 'jaxon_test_tma_encode',
    source: `${PRELUDE}extern "C" __global__ void __launch_bounds__(32) jaxon_test_tma_encode(jx_u16 *out, const jx_u16 *tensor, const __grid_constant__ jx_tensor_map map) { out[threadIdx.x] = tensor[threadIdx.x]; }\n`,
    grid: [1, 1, 1], block: [32, 1, 1], sharedMemBytes: 0,
  };
  const fn = device.backend.loadKernelsSync([source]).get(source.source)!;
  const out = device.backend.fromHost(new Uint8Array(64));
  const input = device.backend.fromHost(new Uint8Array(64 * 1024));
  const good = { arg: 1, dataType: 9, dims: [64, 100], strides: [128], box: [64, 128], swizzle: 3 };
  const launch = (map: object) => native().cudaLaunch(fn, source.grid, source.block, 0, [out.handle, input.handle], [map as typeof good]);
  t.notThrows(() => launch(good));
  const refused: [string, object, RegExp][] = [
    ['a stride not a multiple of 16', { ...good, strides: [136] }, /byte strides \[136\]/],
    ['a box over 256', { ...good, box: [64, 257] }, /box \[64,257\]/],
    ['an inner box of 256 bytes under the 128B swizzle', { ...good, dims: [128, 100], strides: [256], box: [128, 8] }, /box \[128,8\], swizzle 3/],
    ['an inner box of 8 bytes (not a multiple of 16)', { ...good, box: [4, 8], swizzle: 0 }, /box \[4,8\], swizzle 0/],
    ['a zero size', { ...good, dims: [64, 0] }, /dims \[64,0\]/],
  ];
  for (const [what, map, values] of refused) {
    const error = t.throws(() => launch(map), undefined, what);
    t.regex(error?.message ?? '', /^jaxon cuda: cuTensorMapEncodeTiled\(address 0x[0-9a-f]+, data type 9, .*\) failed: CUDA_ERROR_INVALID_VALUE/, what);
    t.regex(error?.message ?? '', values, what);
  }
  t.throws(() => launch({ ...good, arg: 2 }), { message: /cudaLaunch: tensorMaps\[0\]: arg must index one of the launch's buffer arguments/ });
  t.throws(() => launch({ ...good, dataType: 13 }), { message: /tensorMaps\[0\]: dataType must be a CUtensorMapDataType/ });
  t.throws(() => launch({ ...good, strides: [] }), { message: /tensorMaps\[0\]: strides must be rank - 1 byte strides/ });
  device.backend.toHostSync(out);
  device.backend.free(out);
  device.backend.free(input);
});

/** Runs a one-block TMA kernel in a child process on the emulated GPU (its failure ends the context); what it printed. */
function runTmaChild(name: string, body: string): string {
  const dist = new URL('../lib/', import.meta.url).pathname;
  const source = `${PRELUDE}extern "C" __global__ void ${name}(jx_u16 *out, const jx_u16 *tensor, const __grid_constant__ jx_tensor_map map) {
  extern __shared__ __align__(1024) unsigned char smem[];
  jx_u64 *bar = (jx_u64 *)(smem + 16384);
${body}
}`;
  const script = `
    const { createCudaDevice } = await import(${JSON.stringify(`${dist}runtime/cuda.js`)});
    const { native } = await import(${JSON.stringify(`${dist}runtime/native.js`)});
    const device = createCudaDevice(0);
    const source = { name: ${JSON.stringify(name)}, source: ${JSON.stringify(source)}, grid: [1, 1, 1], block: [32, 1, 1], sharedMemBytes: 16448 };
    const fn = device.backend.loadKernelsSync([source]).get(source.source);
    const out = device.backend.fromHost(new Uint8Array(64));
    const input = device.backend.fromHost(new Uint8Array(64 * 128 * 2));
    try {
      native().cudaLaunch(fn, [1, 1, 1], [32, 1, 1], 16448, [out.handle, input.handle], [{ arg: 1, dataType: 9, dims: [64, 128], strides: [128], box: [64, 128], swizzle: 3 }]);
      device.backend.toHostSync(out);
      console.log('no error');
    } catch (e) { console.log('ERROR ' + e.message); }`;
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('JAXON_CUDA_EMULATOR')) delete base[k];
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...base, JAXON_CUDA_EMULATOR: '1' }, encoding: 'utf8', timeout: 120_000 }).trim();
}

const emulated = onCuda && process.env['JAXON_CUDA_EMULATOR'] === '1';
(emulated ? test : test.skip)('expect_tx accounting: a box of 16384 bytes completes a phase announced with 16384; 16400 hangs (a livelock, reported), 16368 fails loudly', (t) => {
  const kernel = (bytes: number) => `  if (threadIdx.x == 0) {
    jx_mbarrier_init(bar, 1);
    jx_mbarrier_arrive_expect_tx(bar, ${bytes});
    jx_tma_load_2d(smem, &map, bar, 0, 0);
  }
  __syncwarp();
  jx_mbarrier_wait(bar, 0);
  out[threadIdx.x] = ((const jx_u16 *)smem)[threadIdx.x];`;
  t.is(runTmaChild('jaxon_test_tx_exact', kernel(16384)), 'no error');
  t.regex(runTmaChild('jaxon_test_tx_more', kernel(16400)), /^ERROR .*kernel 'jaxon_test_tx_more': .*livelock: every thread of the block spins/);
  t.regex(runTmaChild('jaxon_test_tx_fewer', kernel(16368)), /^ERROR .*kernel 'jaxon_test_tx_fewer': .*mbarrier: transactions completed 16 bytes more than mbarrier\.arrive\.expect_tx announced for this phase/);
});

/**
 * PTX ISA / CuTe, MN-major operand with the 128-byte swizzle (16-bit elements): element (mn, k) of the canonical
 * ((8 elements, 8 chunks, m atoms), (8 k, k groups)) layout: atoms of 64 along M/N LBO bytes apart, groups of 8 k SBO
 * bytes apart, each k one 128-byte line of the atom; then the line's 16-byte chunk c moves to c XOR (line mod 8).
 */
function mnMajorAddress(start: number, lbo: number, sbo: number, mn: number, k: number): number {
  const linear = start + Math.floor(mn / 64) * lbo + Math.floor(k / 8) * sbo + (k % 8) * 128 + (mn % 64) * 2;
  const line = Math.floor(linear / 128), chunk = Math.floor((linear % 128) / 16);
  return line * 128 + (chunk ^ (line % 8)) * 16 + (linear % 16);
}

for (const [n, kind, tnspA] of [[128, 'bf16', 1], [64, 'f16', 0]] as const) {
  (onCuda ? test : test.skip)(`wgmma m64n${n}k16 ${kind}: ${tnspA ? 'M-major A and ' : ''}N-major B (imm-trans ${tnspA}, 1) through 128B-swizzled MN-major descriptors`, (t) => {
    const device = createCudaDevice(0);
    // 32 k of each operand in shared memory; the wgmma reads k 16..31 (descriptor start two 8-k groups, 2 SBO, on)
    const A = integers(64 * 32, 31, -6, 6), B = integers(n * 32, 32, -6, 6), C = integers(64 * n, 33, -50, 50);
    const half = kind === 'bf16' ? bf16bits : f16bits;
    const SBO = 1024, LBO_B = 4096, bBase = 8192;
    const image = new Uint16Array((bBase + (n / 64) * LBO_B) / 2);
    for (let m = 0; m < 64; m++) {
      for (let k = 0; k < 32; k++) image[(tnspA ? mnMajorAddress(0, 4096, SBO, m, k) : sw128Address(0, 1024, m, 2 * k)) / 2] = half(A[m * 32 + k]!);
    }
    for (let c = 0; c < n; c++) for (let k = 0; k < 32; k++) image[mnMajorAddress(bBase, LBO_B, SBO, c, k) / 2] = half(B[c * 32 + k]!);
    const cRegs = wgmmaAccumulators(C, n);
    // a K-major A (tnspA 0) holds its 32 k in the first 64 bytes of each 128-byte swizzled row
    const aDesc = tnspA ? `jx_wgmma_desc(jx_smem_u32(smem) + ${2 * SBO}, 4096, ${SBO}, 1)` : 'jx_wgmma_desc(jx_smem_u32(smem) + 32, 16, 1024, 1)';
    const name = `jaxon_test_wgmma_mn_${n}_${kind}`;
    const source: CudaKernelSource = {
      name,
      source: `${PRELUDE}extern "C" __global__ void __launch_bounds__(128) ${name}(float *out, const jx_u16 *image, const float *c) {
  extern __shared__ __align__(1024) unsigned char smem[];
  for (int i = threadIdx.x; i < ${image.length}; i += 128) ((jx_u16 *)smem)[i] = image[i];
  __syncthreads();
  jx_fence_proxy_async();
  float d[${n / 2}];
  for (int i = 0; i < ${n / 2}; i++) d[i] = c[threadIdx.x * ${n / 2} + i];
  const jx_u64 da = ${aDesc}, db = jx_wgmma_desc(jx_smem_u32(smem + ${bBase}) + ${2 * SBO}, ${LBO_B}, ${SBO}, 1);
  jx_wgmma_fence();
  jx_wgmma_m64n${n}k16_${kind}<${tnspA}, 1>(d, da, db, 1);
  jx_wgmma_commit();
  jx_wgmma_wait<0>();
  for (int i = 0; i < ${n / 2}; i++) out[threadIdx.x * ${n / 2} + i] = d[i];
}
`,
      grid: [1, 1, 1], block: [128, 1, 1], sharedMemBytes: image.byteLength,
    };
    const got = runWgmma(device, source, image, cRegs, n, 0);
    const wrong = wgmmaWrong(got, n, A, B, C, 32);
    t.deepEqual(wrong.slice(0, 8), [], `${wrong.length} wrong`);
  });
}
