// The ABI between jaxon's emulated GPU (the executor in cuda/emulator/*.cc)
// and the kernel modules its "NVRTC" builds with the host C++ compiler.
// A module exports jx_emu_module (its kernels: entry thunk, parameter sizes,
// launch bounds) and jx_emu_module_init (receives the executor's function
// table). Each CUDA thread runs on a fiber whose stack is JX_EMU_STACK_SIZE
// bytes, aligned to its size, with the thread's jx_emu_thread at the base:
// kernel code finds "itself" (threadIdx, blockIdx, ...) from its stack
// pointer, with no thread-local storage and nothing to update on a switch.
#ifndef JAXON_EMU_ABI_H
#define JAXON_EMU_ABI_H
#include <stdint.h>

#define JX_EMU_ABI_VERSION 1
#define JX_EMU_STACK_SIZE ((uintptr_t)1 << 18) /* 256 KiB, a power of two */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { unsigned x, y, z; } jx_emu_dim3;

typedef struct jx_emu_thread {
  jx_emu_dim3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned linear;       /* thread index within the block */
  unsigned lane, warp;   /* lane within the warp, warp within the block */
  void *dynamic_shared;  /* the block's dynamic shared memory (extern __shared__) */
  void *block;           /* executor's per-block state */
} jx_emu_thread;

typedef struct {
  int version;
  /* __syncthreads: returns once every thread of the block that has not exited arrived */
  void (*syncthreads)(jx_emu_thread *self);
  /* a warp collective: every lane in `mask` deposits `value`; returns once all did, with all 32 lanes' values in `out` */
  void (*warp_exchange)(jx_emu_thread *self, unsigned mask, unsigned long long value, unsigned long long *out);
  /* __trap / failed assert: ends the launch with CUDA_ERROR_LAUNCH_FAILED and this message */
  void (*trap)(jx_emu_thread *self, const char *message);
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
