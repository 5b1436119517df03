/* Tensor-core and asynchronous-copy instructions for the CUDA GEMM kernels
   (lib/compiler/render/cuda-gemm.ts: sm_80 and later; cuda-wgmma.ts: wgmma
   and mbarriers, sm_90a): each inline-PTX instruction sits behind one small
   device function, so that jaxon's emulated GPU (JX_EMULATED,
   cuda/emulator/jaxon_emu_tensor.h) can run the same kernel with its own
   versions, which follow the PTX ISA's fragment and shared-memory layouts.
   Fragments are arrays of 32-bit registers as the PTX ISA numbers them
   (a0..a3, b0..b1, c0..c3); accumulators are updated in place (d = a b + d).
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
  /* a NaN whose payload lies in the 13 dropped bits alone rounds to an infinity on the hardware (an H200 gave a
     non-NaN for 0x7f800001, 2026-11-27): keep it a NaN, quiet, as the emulated conversion does */
  return x != x ? ((__float_as_uint(x) | 0x400000u) & 0xffffe000u) : r;
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

/* ---- Hopper (sm_90a): wgmma from shared-memory descriptors, mbarriers, TMA ---- */

/* A TMA descriptor as a kernel takes it (`const __grid_constant__ jx_tensor_map`): cuda.h's CUtensorMap, 128 opaque
   bytes the host fills with cuTensorMapEncodeTiled at launch (generated kernels include no toolkit header). */
struct __align__(64) jx_tensor_map {
  unsigned long long opaque[16];
};
#if !defined(JX_EMULATED) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
JX_DEVICE void jx_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
JX_DEVICE void jx_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> JX_DEVICE void jx_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
/* makes shared-memory writes of the generic proxy (st.shared, cp.async) visible to wgmma's async proxy */
JX_DEVICE void jx_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
JX_DEVICE void jx_mbarrier_init(jx_u64 *bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(jx_smem_u32(bar)), "r"(count) : "memory");
}
JX_DEVICE void jx_mbarrier_arrive(jx_u64 *bar) {
  asm volatile("{ .reg .b64 state; mbarrier.arrive.shared::cta.b64 state, [%0]; }" ::"r"(jx_smem_u32(bar)) : "memory");
}
JX_DEVICE bool jx_mbarrier_try_wait(jx_u64 *bar, int parity) {
  jx_u32 done;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(done) : "r"(jx_smem_u32(bar)), "r"(parity) : "memory");
  return done != 0;
}
JX_DEVICE void jx_mbarrier_wait(jx_u64 *bar, int parity) {
  while (!jx_mbarrier_try_wait(bar, parity)) {}
}
/* the thread's cp.async copies issued so far, once complete, count as one arrival on bar */
JX_DEVICE void jx_cp_async_mbarrier_arrive(jx_u64 *bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(jx_smem_u32(bar)) : "memory");
}
/* makes the mbarrier initializations visible to the async proxy (TMA's complete_tx) and the cluster */
JX_DEVICE void jx_fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
/* `bytes` more transaction bytes expected in the current phase, then one arrival */
JX_DEVICE void jx_mbarrier_arrive_expect_tx(jx_u64 *bar, jx_u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(jx_smem_u32(bar)), "r"(bytes) : "memory");
}
/* `bytes` more transaction bytes expected in the current phase, without arriving */
JX_DEVICE void jx_mbarrier_expect_tx(jx_u64 *bar, jx_u32 bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(jx_smem_u32(bar)), "r"(bytes) : "memory");
}
/* brings a __grid_constant__ tensor map into the descriptor cache ahead of its first use */
JX_DEVICE void jx_prefetch_tensor_map(const jx_tensor_map *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}
/* TMA: the box at element coordinates (c0 innermost, c1, c2) of `map`'s tensor into shared memory at dst (as the map's
   swizzle lays it out, zeros outside the tensor); its bytes complete as transactions on bar */
JX_DEVICE void jx_tma_load_3d(void *dst, const jx_tensor_map *map, jx_u64 *bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
               ::"r"(jx_smem_u32(dst)), "l"(map), "r"(jx_smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
JX_DEVICE void jx_tma_load_2d(void *dst, const jx_tensor_map *map, jx_u64 *bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
               ::"r"(jx_smem_u32(dst)), "l"(map), "r"(jx_smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n64k16_bf16(float *d, jx_u64 desc_a, jx_u64 desc_b, int scale_d) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; "
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
               "%32, %33, p, 1, 1, %35, %36; }"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_A), "n"(TNSP_B));
}
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n64k16_f16(float *d, jx_u64 desc_a, jx_u64 desc_b, int scale_d) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; "
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
               "%32, %33, p, 1, 1, %35, %36; }"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_A), "n"(TNSP_B));
}
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n128k16_bf16(float *d, jx_u64 desc_a, jx_u64 desc_b, int scale_d) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; "
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
               "%64, %65, p, 1, 1, %67, %68; }"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_A), "n"(TNSP_B));
}
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n128k16_f16(float *d, jx_u64 desc_a, jx_u64 desc_b, int scale_d) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; "
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
               "%64, %65, p, 1, 1, %67, %68; }"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_A), "n"(TNSP_B));
}
#elif defined(JX_EMULATED)
JX_DEVICE jx_u32 jx_smem_u32(const void *p) { return jx_emu_smem_addr(p); }
JX_DEVICE void jx_wgmma_fence() {}
JX_DEVICE void jx_wgmma_commit() { jx_emu_wgmma_commit(); }
template <int N> JX_DEVICE void jx_wgmma_wait() { jx_emu_wgmma_wait(N); }
JX_DEVICE void jx_fence_proxy_async() {}
JX_DEVICE void jx_mbarrier_init(jx_u64 *bar, int count) { jx_emu_mbarrier_init((unsigned long long *)bar, (unsigned)count); }
JX_DEVICE void jx_mbarrier_arrive(jx_u64 *bar) { jx_emu_mbarrier_update((unsigned long long *)bar, 1, 0); }
JX_DEVICE bool jx_mbarrier_try_wait(jx_u64 *bar, int parity) { return jx_emu_mbarrier_try_wait_parity((unsigned long long *)bar, (unsigned)parity); }
JX_DEVICE void jx_mbarrier_wait(jx_u64 *bar, int parity) { jx_emu_mbarrier_wait_parity((unsigned long long *)bar, (unsigned)parity); }
JX_DEVICE void jx_cp_async_mbarrier_arrive(jx_u64 *bar) { jx_emu_cp_async_mbarrier_arrive((unsigned long long *)bar); }
JX_DEVICE void jx_fence_mbarrier_init() {}
JX_DEVICE void jx_mbarrier_arrive_expect_tx(jx_u64 *bar, jx_u32 bytes) { jx_emu_mbarrier_arrive_expect_tx((unsigned long long *)bar, bytes); }
JX_DEVICE void jx_mbarrier_expect_tx(jx_u64 *bar, jx_u32 bytes) { jx_emu_mbarrier_expect_tx((unsigned long long *)bar, bytes); }
JX_DEVICE void jx_prefetch_tensor_map(const jx_tensor_map *) {}
JX_DEVICE void jx_tma_load_3d(void *dst, const jx_tensor_map *map, jx_u64 *bar, int c0, int c1, int c2) {
  const int coords[3] = {c0, c1, c2};
  jx_emu_tma_load(dst, map, (unsigned long long *)bar, 3, coords);
}
JX_DEVICE void jx_tma_load_2d(void *dst, const jx_tensor_map *map, jx_u64 *bar, int c0, int c1) {
  const int coords[2] = {c0, c1};
  jx_emu_tma_load(dst, map, (unsigned long long *)bar, 2, coords);
}
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n64k16_bf16(float *d, jx_u64 a, jx_u64 b, int scale_d) { jx_emu_wgmma(JX_EMU_MMA_BF16, 64, d, a, b, scale_d, TNSP_A | TNSP_B << 1); }
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n64k16_f16(float *d, jx_u64 a, jx_u64 b, int scale_d) { jx_emu_wgmma(JX_EMU_MMA_F16, 64, d, a, b, scale_d, TNSP_A | TNSP_B << 1); }
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n128k16_bf16(float *d, jx_u64 a, jx_u64 b, int scale_d) { jx_emu_wgmma(JX_EMU_MMA_BF16, 128, d, a, b, scale_d, TNSP_A | TNSP_B << 1); }
template <int TNSP_A = 0, int TNSP_B = 0>
JX_DEVICE void jx_wgmma_m64n128k16_f16(float *d, jx_u64 a, jx_u64 b, int scale_d) { jx_emu_wgmma(JX_EMU_MMA_F16, 128, d, a, b, scale_d, TNSP_A | TNSP_B << 1); }
#endif
#if defined(JX_EMULATED) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900)
/* A wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"): shared address >> 4 in bits 0-13, leading byte
   offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, swizzle in 62-63 (1: 128B, 2: 64B, 3: 32B, 0: none).
   K-major operands (the wgmma's transpose immediate 0): with a swizzle, rows of the swizzle width along K, 8-row
   groups SBO apart, LBO unused. MN-major operands (transpose immediate 1, bf16/f16 only): with a swizzle, each atom
   is 8 rows along K of the swizzle width along M or N (64 bf16 at 128B), atoms LBO apart along M/N and SBO apart
   along K (each 8 k). The jx_wgmma_* functions take the immediates as template arguments <tnspA, tnspB>. */
JX_DEVICE jx_u64 jx_wgmma_desc(jx_u32 addr, jx_u32 lbo, jx_u32 sbo, int swizzle) {
  return (jx_u64)((addr & 0x3ffffu) >> 4) | ((jx_u64)((lbo >> 4) & 0x3fffu) << 16) | ((jx_u64)((sbo >> 4) & 0x3fffu) << 32) | ((jx_u64)swizzle << 62);
}
#endif

/* The 128-byte swizzle of a byte offset into a shared-memory tile (TMA's and wgmma's SWIZZLE_128B): its 16-byte
   chunk is XORed with its 128-byte line (mod 8), so the 8 rows an ldmatrix phase reads, or a column of 4-byte
   elements, fall in different banks. Tiles start at multiples of 1024 bytes. */
JX_DEVICE int jx_swizzle128(int offset) { return offset ^ ((offset >> 7 & 7) << 4); }
/* Rows of 2^rowShift bytes (256 and more): each 16-byte chunk XORs its row's index mod 8, so 8 rows at one column
   fall in 8 different chunks of the 128-byte bank line (ldmatrix reads 8 rows a phase) */
JX_DEVICE int jx_swizzle_rows(int offset, int rowShift) { return offset ^ ((offset >> rowShift & 7) << 4); }

/* Two bf16 / f16 values in one register, the first in the low half (as fragments hold them). */
JX_DEVICE jx_u32 jx_pack_u16x2(jx_u16 lo, jx_u16 hi) { return (jx_u32)lo | ((jx_u32)hi << 16); }

#endif
