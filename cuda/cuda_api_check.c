// Proves cuda_api.h agrees with a real toolkit's cuda.h: every constant has
// cuda.h's value, every entry point's type is cuda.h's prototype, and every
// struct jaxon fills has cuda.h's layout. Not part of the addon;
// test/cuda-runtime.test.ts compiles it with -fsyntax-only where a cuda.h
// exists (nvrtc.h is checked too when the toolkit has it).
#include <cuda.h>
#include <stddef.h>
#if __has_include(<nvrtc.h>)
#include <nvrtc.h>
#define JAXON_CHECK_NVRTC 1
#endif
#define JAXON_CUDA_API_USE_TOOLKIT_TYPES
#ifndef JAXON_CHECK_NVRTC
typedef struct _nvrtcProgram *nvrtcProgram;
typedef int nvrtcResult;
#endif
#include "cuda_api.h"

#define SAME_VALUE(name, value) _Static_assert((long long)(name) == (value), #name " differs from cuda.h");
JAXON_CURESULT_VALUES(SAME_VALUE)
JAXON_CU_DEVICE_ATTRIBUTE_VALUES(SAME_VALUE)
JAXON_CU_FUNCTION_ATTRIBUTE_VALUES(SAME_VALUE)
JAXON_CU_MEMORYTYPE_VALUES(SAME_VALUE)
JAXON_CU_FLAG_VALUES(SAME_VALUE)
JAXON_CU_TENSOR_MAP_DATA_TYPE_VALUES(SAME_VALUE)
JAXON_CU_TENSOR_MAP_INTERLEAVE_VALUES(SAME_VALUE)
JAXON_CU_TENSOR_MAP_SWIZZLE_VALUES(SAME_VALUE)
JAXON_CU_TENSOR_MAP_L2_PROMOTION_VALUES(SAME_VALUE)
JAXON_CU_TENSOR_MAP_FLOAT_OOB_FILL_VALUES(SAME_VALUE)
_Static_assert(sizeof(CUtensorMap) == 128 && _Alignof(CUtensorMap) >= 64, "CUtensorMap differs from cuda.h");

// `name` is macro-expanded here, so cuda.h's own renames (cuEventElapsedTime →
// _v2 in CUDA 12.8+) are followed; those keep the old entry's signature.
#define SAME_TYPE(ret, name, params) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&name), jaxon_pfn_##name), #name " differs from cuda.h");
JAXON_CUDA_DRIVER_FUNCTIONS(SAME_TYPE)
JAXON_CUDA_OPTIONAL_FUNCTIONS(SAME_TYPE)
JAXON_CUDA_GRAPH_FUNCTIONS(SAME_TYPE)
JAXON_CUDA_GRAPH_UPDATE_FUNCTIONS(SAME_TYPE)

// The node parameter structs: jaxon's field lists, laid out as a struct of their own, against cuda.h's.
#define SAME_LAYOUT(toolkit, fields)                                                                       \
  struct jaxon_##toolkit { fields(JAXON_FIELD) };                                                          \
  _Static_assert(sizeof(struct jaxon_##toolkit) == sizeof(toolkit), #toolkit " has another size in cuda.h");
SAME_LAYOUT(CUDA_KERNEL_NODE_PARAMS, JAXON_CUDA_KERNEL_NODE_PARAMS_FIELDS)
SAME_LAYOUT(CUDA_MEMSET_NODE_PARAMS, JAXON_CUDA_MEMSET_NODE_PARAMS_FIELDS)
SAME_LAYOUT(CUDA_MEMCPY3D, JAXON_CUDA_MEMCPY3D_FIELDS)
#define SAME_FIELD(ours, theirs, name)                                                                       \
  _Static_assert(offsetof(ours, name) == offsetof(theirs, name) &&                                           \
                     __builtin_types_compatible_p(__typeof__(((ours *)0)->name), __typeof__(((theirs *)0)->name)), \
                 #theirs "." #name " differs from cuda.h");
#define SAME_KERNEL_FIELD(type, name) SAME_FIELD(struct jaxon_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, name)
#define SAME_MEMSET_FIELD(type, name) SAME_FIELD(struct jaxon_CUDA_MEMSET_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS, name)
#define SAME_MEMCPY_FIELD(type, name) SAME_FIELD(struct jaxon_CUDA_MEMCPY3D, CUDA_MEMCPY3D, name)
JAXON_CUDA_KERNEL_NODE_PARAMS_FIELDS(SAME_KERNEL_FIELD)
JAXON_CUDA_MEMSET_NODE_PARAMS_FIELDS(SAME_MEMSET_FIELD)
JAXON_CUDA_MEMCPY3D_FIELDS(SAME_MEMCPY_FIELD)

_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 64-bit");
_Static_assert(sizeof(CUresult) == sizeof(int), "CUresult is int-sized");

#ifdef JAXON_CHECK_NVRTC
JAXON_NVRTC_RESULT_VALUES(SAME_VALUE)
JAXON_NVRTC_FUNCTIONS(SAME_TYPE)
#endif

int jaxon_cuda_api_check;
