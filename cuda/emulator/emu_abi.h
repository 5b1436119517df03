// The ABI between jaxon's emulated GPU (the executor in cuda/emulator/*.cc)
// and the kernel modules its "NVRTC" builds with the host C++ compiler.
// A module exports jx_emu_module (its kernels: entry thunk, parameter sizes,
// launch bounds) and jx_emu_module_init (receives the executor's function
// table). Each CUDA thread runs on a fiber whose stack is JX_EMU_STACK_SIZE
// bytes, aligned to its size, with the thread's jx_emu_thread at the base:
// kernel code finds "itself" (threadIdx, blockIdx, ...) from its stack
// pointer, with no thread-local storage and nothing to update on a switch.
// The rest of that first page holds the thread's emulated asynchronous copies
// (cp.async: jaxon_emu_tensor.h), performed when the thread waits for them.
#ifndef JAXON_EMU_ABI_H
#define JAXON_EMU_ABI_H
#include <stdint.h>

#define JX_EMU_ABI_VERSION 4
#define JX_EMU_STACK_SIZE ((uintptr_t)1 << 18) /* 256 KiB, a power of two */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { unsigned x, y, z; } jx_emu_dim3;

/* One cp.async a thread issued and the emulation has not performed yet: `size` bytes at dst, the first
   `src_size` from src and the rest zeros, once its commit group is waited for (or earlier, when the queue is full). */
typedef struct {
  void *dst;
  const void *src;
  unsigned size, src_size;
  unsigned long long group;
} jx_emu_async_copy;

#define JX_EMU_MAX_ASYNC_COPIES 96

/* One wgmma.mma_async a thread issued: performed (its shared memory read, its accumulators written) when its commit
   group is waited for (wgmma.wait_group), so a kernel that reuses a stage before waiting reads the new data here. */
typedef struct {
  float *d;
  unsigned long long desc_a, desc_b, group;
  int kind, n, scale_d, tnsp; /* tnsp: bit 0 A is M-major, bit 1 B is N-major (the wgmma's imm-trans-a/b) */
} jx_emu_wgmma_op;

#define JX_EMU_MAX_WGMMA_OPS 8

/* What the emulated cuTensorMapEncodeTiled (driver.cc) writes into a CUtensorMap's 128 opaque bytes, and the
   emulated cp.async.bulk.tensor (jaxon_emu_tensor.h) reads: the global tensor (address, sizes, byte strides of
   dimensions 1.. rank-1) and the box it copies. */
typedef struct {
  unsigned magic; /* JX_EMU_TENSOR_MAP_MAGIC: made by cuTensorMapEncodeTiled */
  unsigned char rank, element_size, swizzle /* 0 none, 1 32B, 2 64B, 3 128B */, oob_nan;
  unsigned long long address;
  unsigned long long dims[5];
  unsigned long long strides[4];
  unsigned short box[5];
  unsigned char element_strides[5];
} jx_emu_tensor_map;

#define JX_EMU_TENSOR_MAP_MAGIC 0x4a58544du /* "JXTM" */

typedef struct jx_emu_thread {
  jx_emu_dim3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned linear;       /* thread index within the block */
  unsigned lane, warp;   /* lane within the warp, warp within the block */
  void *dynamic_shared;  /* the block's dynamic shared memory (extern __shared__) */
  void *block;           /* executor's per-block state */
  /* cp.async state, zeroed when the thread starts: queued copies, and commit groups closed so far */
  unsigned async_count;
  unsigned long long async_groups;
  jx_emu_async_copy async_copies[JX_EMU_MAX_ASYNC_COPIES];
  /* wgmma state, zeroed when the thread starts: queued operations, and commit groups closed so far */
  unsigned wgmma_count;
  unsigned long long wgmma_groups;
  jx_emu_wgmma_op wgmma_ops[JX_EMU_MAX_WGMMA_OPS];
} jx_emu_thread;

typedef struct {
  int version;
  /* __syncthreads: returns once every thread of the block that has not exited arrived */
  void (*syncthreads)(jx_emu_thread *self);
  /* a warp collective: every lane in `mask` deposits `value`; returns once all did, with all 32 lanes' values in `out` */
  void (*warp_exchange)(jx_emu_thread *self, unsigned mask, unsigned long long value, unsigned long long *out);
  /* __trap / failed assert: ends the launch with CUDA_ERROR_LAUNCH_FAILED and this message */
  void (*trap)(jx_emu_thread *self, const char *message);
  /* lets the block's other threads run (a spin-wait on an mbarrier); fails the launch when every thread of the
     block has only been yielding for a long time (nobody can complete what they wait for) */
  void (*yield)(jx_emu_thread *self);
  /* something happened a spinning thread may be waiting for (an mbarrier arrival): the livelock count restarts */
  void (*progress)(jx_emu_thread *self);
} jx_emu_api;

typedef struct {
  const char *name;
  void (*entry)(void **params);  /* calls the kernel with params[i] pointing at argument i */
  int num_params;
  const unsigned *param_sizes;
  int max_threads;               /* __launch_bounds__, or 0 */
} jx_emu_kernel;

typedef struct {
  int version;
  int num_kernels;
  const jx_emu_kernel *kernels;
} jx_emu_module_desc;

#ifdef __cplusplus
}
#endif
#endif
