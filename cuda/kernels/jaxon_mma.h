/* Tensor-core and asynchronous-copy instructions for the CUDA GEMM kernels
   (lib/compiler/render/cuda-gemm.ts), sm_80 and later: each inline-PTX
   instruction sits behind one small device function, so that jaxon's emulated
   GPU (JX_EMULATED, cuda/emulator/jaxon_emu_tensor.h) can run the same kernel
   with its own versions, which follow the PTX ISA's fragment and shared-memory
   layouts. Fragments are arrays of 32-bit registers as the PTX ISA numbers
   them (a0..a3, b0..b1, c0..c3); accumulators are updated in place (d = a b + d).
   Included after jaxon_cuda.h by the kernels that use it. */
#ifndef JX_MMA_H
#define JX_MMA_H

#ifdef JX_EMULATED
/* cvt.rna.tf32.f32: float rounded to 10 mantissa bits (nearest, ties away from zero), as the tf32 register bits */
JX_DEVICE jx_u32 jx_f2tf32(float x) { return __float_as_uint(jx_emu_float_to_tf32(x)); }
/* d += a b: m16n8k16, bf16 or f16 operands, f32 accumulators */
JX_DEVICE void jx_mma_m16n8k16_bf16(float *d, const jx_u32 *a, const jx_u32 *b) { jx_emu_mma_m16n8k16(JX_EMU_MMA_BF16, d, a, b); }
JX_DEVICE void jx_mma_m16n8k16_f16(float *d, const jx_u32 *a, const jx_u32 *b) { jx_emu_mma_m16n8k16(JX_EMU_MMA_F16, d, a, b); }
/* d += a b: m16n8k8, tf32 operands (the low 13 bits of each register are ignored), f32 accumulators */
JX_DEVICE void jx_mma_m16n8k8_tf32(float *d, const jx_u32 *a, const jx_u32 *b) { jx_emu_mma_m16n8k8_tf32(d, a, b); }
/* ldmatrix.m8n8.b16: `row` is this lane's row address (lanes 8i..8i+7: matrix i) */
JX_DEVICE void jx_ldmatrix_x1(jx_u32 *r, const void *row) { jx_emu_ldmatrix(1, false, r, row); }
JX_DEVICE void jx_ldmatrix_x2(jx_u32 *r, const void *row) { jx_emu_ldmatrix(2, false, r, row); }
JX_DEVICE void jx_ldmatrix_x4(jx_u32 *r, const void *row) { jx_emu_ldmatrix(4, false, r, row); }
JX_DEVICE void jx_ldmatrix_x1_trans(jx_u32 *r, const void *row) { jx_emu_ldmatrix(1, true, r, row); }
JX_DEVICE void jx_ldmatrix_x2_trans(jx_u32 *r, const void *row) { jx_emu_ldmatrix(2, true, r, row); }
JX_DEVICE void jx_ldmatrix_x4_trans(jx_u32 *r, const void *row) { jx_emu_ldmatrix(4, true, r, row); }
/* cp.async of 16, 8 or 4 bytes global → shared (both addresses aligned to the size); only the first src_bytes are
   read, the rest is zero-filled */
JX_DEVICE void jx_cp_async_16(void *smem, const void *gmem, int src_bytes) { jx_emu_cp_async(smem, gmem, 16, (unsigned)src_bytes); }
JX_DEVICE void jx_cp_async_8(void *smem, const void *gmem, int src_bytes) { jx_emu_cp_async(smem, gmem, 8, (unsigned)src_bytes); }
JX_DEVICE void jx_cp_async_4(void *smem, const void *gmem, int src_bytes) { jx_emu_cp_async(smem, gmem, 4, (unsigned)src_bytes); }
JX_DEVICE void jx_cp_async_commit() { jx_emu_cp_async_commit(); }
/* cp.async.wait_group N: all but the N most recent commit groups have landed */
template <int N> JX_DEVICE void jx_cp_async_wait() { jx_emu_cp_async_wait(N); }
JX_DEVICE void jx_cp_async_wait_all() { jx_emu_cp_async_wait_all(); }
#else
/* the shared-memory address of a generic pointer into shared memory, as ldmatrix and cp.async take it */
JX_DEVICE jx_u32 jx_smem_u32(const void *p) {
  jx_u32 a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
JX_DEVICE jx_u32 jx_f2tf32(float x) {
  jx_u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
JX_DEVICE void jx_mma_m16n8k16_bf16(float *d, const jx_u32 *a, const jx_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
JX_DEVICE void jx_mma_m16n8k16_f16(float *d, const jx_u32 *a, const jx_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
JX_DEVICE void jx_mma_m16n8k8_tf32(float *d, const jx_u32 *a, const jx_u32 *b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
JX_DEVICE void jx_ldmatrix_x1(jx_u32 *r, const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(jx_smem_u32(row)) : "memory");
}
JX_DEVICE void jx_ldmatrix_x2(jx_u32 *r, const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(jx_smem_u32(row)) : "memory");
}
JX_DEVICE void jx_ldmatrix_x4(jx_u32 *r, const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(jx_smem_u32(row)) : "memory");
}
JX_DEVICE void jx_ldmatrix_x1_trans(jx_u32 *r, const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(jx_smem_u32(row)) : "memory");
}
JX_DEVICE void jx_ldmatrix_x2_trans(jx_u32 *r, const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(jx_smem_u32(row)) : "memory");
}
JX_DEVICE void jx_ldmatrix_x4_trans(jx_u32 *r, const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(jx_smem_u32(row)) : "memory");
}
JX_DEVICE void jx_cp_async_16(void *smem, const void *gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(jx_smem_u32(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}
JX_DEVICE void jx_cp_async_8(void *smem, const void *gmem, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(jx_smem_u32(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}
JX_DEVICE void jx_cp_async_4(void *smem, const void *gmem, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(jx_smem_u32(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}
JX_DEVICE void jx_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> JX_DEVICE void jx_cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
JX_DEVICE void jx_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#endif

/* The 128-byte swizzle of a byte offset into a shared-memory tile (TMA's and wgmma's SWIZZLE_128B): its 16-byte
   chunk is XORed with its 128-byte line (mod 8), so the 8 rows an ldmatrix phase reads, or a column of 4-byte
   elements, fall in different banks. Tiles start at multiples of 1024 bytes. */
JX_DEVICE int jx_swizzle128(int offset) { return offset ^ ((offset >> 7 & 7) << 4); }

/* Two bf16 / f16 values in one register, the first in the low half (as fragments hold them). */
JX_DEVICE jx_u32 jx_pack_u16x2(jx_u16 lo, jx_u16 hi) { return (jx_u32)lo | ((jx_u32)hi << 16); }

#endif
