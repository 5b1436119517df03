// The subset of the CUDA driver API and of NVRTC that jaxon calls, declared by
// hand so the addon builds on machines with no CUDA toolkit (both libraries
// are dlopened, never linked; see cuda_driver.c). Values and signatures follow
// NVIDIA's cuda.h and nvrtc.h. Entry points and constants are X-macro lists:
// the loader resolves every listed symbol by its exact (versioned) name, and
// cuda_api_check.c compiles the same lists against a real cuda.h (define
// JAXON_CUDA_API_USE_TOOLKIT_TYPES after including it) to prove they agree.
#ifndef JAXON_CUDA_API_H
#define JAXON_CUDA_API_H
#include <stddef.h>
#include <stdint.h>

#ifndef JAXON_CUDA_API_USE_TOOLKIT_TYPES
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; // 64-bit hosts only, as cuda.h on LP64
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUkern_st *CUkernel;
typedef struct CUarray_st *CUarray;
typedef void (*CUhostFn)(void *userData);
typedef struct _nvrtcProgram *nvrtcProgram;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
/* The TMA descriptor cuTensorMapEncodeTiled fills: 128 opaque bytes, at least 64-byte aligned (CUDA 13 aligns it to 128). */
typedef struct CUtensorMap_st {
  cuuint64_t opaque[16] __attribute__((aligned(128)));
} CUtensorMap;
#endif

// name, value: every constant jaxon uses, grouped by the cuda.h enum it belongs to.
#define JAXON_CURESULT_VALUES(X)                    \
  X(CUDA_SUCCESS, 0)                                \
  X(CUDA_ERROR_INVALID_VALUE, 1)                    \
  X(CUDA_ERROR_OUT_OF_MEMORY, 2)                    \
  X(CUDA_ERROR_NOT_INITIALIZED, 3)                  \
  X(CUDA_ERROR_STUB_LIBRARY, 34)                    \
  X(CUDA_ERROR_NO_DEVICE, 100)                      \
  X(CUDA_ERROR_INVALID_DEVICE, 101)                 \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)              \
  X(CUDA_ERROR_CONTAINED, 226)                      \
  X(CUDA_ERROR_INVALID_HANDLE, 400)                 \
  X(CUDA_ERROR_NOT_FOUND, 500)                      \
  X(CUDA_ERROR_NOT_READY, 600)                      \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                 \
  X(CUDA_ERROR_ASSERT, 710)                         \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)           \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)            \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)             \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)          \
  X(CUDA_ERROR_INVALID_PC, 718)                     \
  X(CUDA_ERROR_LAUNCH_FAILED, 719)                  \
  X(CUDA_ERROR_NOT_SUPPORTED, 801)                  \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)         \
  X(CUDA_ERROR_EXTERNAL_DEVICE, 911)

// The errors after which cuda.h says "any further CUDA work will return the same error": the context is lost
// (a sticky error) until cuDevicePrimaryCtxReset. cuda_runtime.c marks the device lost when a call returns one.
#define JAXON_CUDA_CONTEXT_LOST_ERRORS(X) \
  X(CUDA_ERROR_ECC_UNCORRECTABLE)         \
  X(CUDA_ERROR_CONTAINED)                 \
  X(CUDA_ERROR_ILLEGAL_ADDRESS)           \
  X(CUDA_ERROR_LAUNCH_TIMEOUT)            \
  X(CUDA_ERROR_ASSERT)                    \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR)      \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION)       \
  X(CUDA_ERROR_MISALIGNED_ADDRESS)        \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE)     \
  X(CUDA_ERROR_INVALID_PC)                \
  X(CUDA_ERROR_LAUNCH_FAILED)             \
  X(CUDA_ERROR_EXTERNAL_DEVICE)

#define JAXON_CU_DEVICE_ATTRIBUTE_VALUES(X)                  \
  X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)            \
  X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)      \
  X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                       \
  X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)            \
  X(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18)                      \
  X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                   \
  X(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 40)              \
  X(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 41)              \
  X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)        \
  X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)        \
  X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)

#define JAXON_CU_FUNCTION_ATTRIBUTE_VALUES(X)              \
  X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)            \
  X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1)                \
  X(CU_FUNC_ATTRIBUTE_NUM_REGS, 4)                         \
  X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)

#define JAXON_CU_MEMORYTYPE_VALUES(X) \
  X(CU_MEMORYTYPE_HOST, 1)            \
  X(CU_MEMORYTYPE_DEVICE, 2)          \
  X(CU_MEMORYTYPE_ARRAY, 3)           \
  X(CU_MEMORYTYPE_UNIFIED, 4)

// Flags passed as unsigned int; cuda.h has them as enums or #defines.
#define JAXON_CU_FLAG_VALUES(X)        \
  X(CU_STREAM_NON_BLOCKING, 0x1)       \
  X(CU_EVENT_DEFAULT, 0x0)             \
  X(CU_EVENT_DISABLE_TIMING, 0x2)      \
  X(CU_MEMHOSTALLOC_PORTABLE, 0x01)

// cuTensorMapEncodeTiled's enums (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
// CUtensorMapL2promotion, CUtensorMapFloatOOBfill): the values jaxon passes.
#define JAXON_CU_TENSOR_MAP_DATA_TYPE_VALUES(X) \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT8, 0)           \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT16, 1)          \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT32, 2)          \
  X(CU_TENSOR_MAP_DATA_TYPE_INT32, 3)           \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT64, 4)          \
  X(CU_TENSOR_MAP_DATA_TYPE_INT64, 5)           \
  X(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 6)         \
  X(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 7)         \
  X(CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8)         \
  X(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 9)        \
  X(CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, 10)    \
  X(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 11)       \
  X(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, 12)
#define JAXON_CU_TENSOR_MAP_INTERLEAVE_VALUES(X) \
  X(CU_TENSOR_MAP_INTERLEAVE_NONE, 0)            \
  X(CU_TENSOR_MAP_INTERLEAVE_16B, 1)             \
  X(CU_TENSOR_MAP_INTERLEAVE_32B, 2)
#define JAXON_CU_TENSOR_MAP_SWIZZLE_VALUES(X) \
  X(CU_TENSOR_MAP_SWIZZLE_NONE, 0)            \
  X(CU_TENSOR_MAP_SWIZZLE_32B, 1)             \
  X(CU_TENSOR_MAP_SWIZZLE_64B, 2)             \
  X(CU_TENSOR_MAP_SWIZZLE_128B, 3)
#define JAXON_CU_TENSOR_MAP_L2_PROMOTION_VALUES(X) \
  X(CU_TENSOR_MAP_L2_PROMOTION_NONE, 0)            \
  X(CU_TENSOR_MAP_L2_PROMOTION_L2_64B, 1)          \
  X(CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 2)         \
  X(CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 3)
#define JAXON_CU_TENSOR_MAP_FLOAT_OOB_FILL_VALUES(X) \
  X(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, 0)            \
  X(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, 1)

#define JAXON_NVRTC_RESULT_VALUES(X)          \
  X(NVRTC_SUCCESS, 0)                         \
  X(NVRTC_ERROR_OUT_OF_MEMORY, 1)             \
  X(NVRTC_ERROR_PROGRAM_CREATION_FAILURE, 2)  \
  X(NVRTC_ERROR_INVALID_INPUT, 3)             \
  X(NVRTC_ERROR_INVALID_PROGRAM, 4)           \
  X(NVRTC_ERROR_INVALID_OPTION, 5)            \
  X(NVRTC_ERROR_COMPILATION, 6)

// type, name: the fields of the graph node parameter structs jaxon fills, in cuda.h's order (CUDA 12+ layouts:
// CUDA_KERNEL_NODE_PARAMS is _v2, with kern and ctx). cuda_api_check.c compares offsets and sizes with cuda.h.
#define JAXON_CUDA_KERNEL_NODE_PARAMS_FIELDS(X) \
  X(CUfunction, func)                           \
  X(unsigned int, gridDimX)                     \
  X(unsigned int, gridDimY)                     \
  X(unsigned int, gridDimZ)                     \
  X(unsigned int, blockDimX)                    \
  X(unsigned int, blockDimY)                    \
  X(unsigned int, blockDimZ)                    \
  X(unsigned int, sharedMemBytes)               \
  X(void **, kernelParams)                      \
  X(void **, extra)                             \
  X(CUkernel, kern)                             \
  X(CUcontext, ctx)

#define JAXON_CUDA_MEMSET_NODE_PARAMS_FIELDS(X) \
  X(CUdeviceptr, dst)                           \
  X(size_t, pitch)                              \
  X(unsigned int, value)                        \
  X(unsigned int, elementSize)                  \
  X(size_t, width)                              \
  X(size_t, height)

#define JAXON_CUDA_MEMCPY3D_FIELDS(X) \
  X(size_t, srcXInBytes)              \
  X(size_t, srcY)                     \
  X(size_t, srcZ)                     \
  X(size_t, srcLOD)                   \
  X(CUmemorytype, srcMemoryType)      \
  X(const void *, srcHost)            \
  X(CUdeviceptr, srcDevice)           \
  X(CUarray, srcArray)                \
  X(void *, reserved0)                \
  X(size_t, srcPitch)                 \
  X(size_t, srcHeight)                \
  X(size_t, dstXInBytes)              \
  X(size_t, dstY)                     \
  X(size_t, dstZ)                     \
  X(size_t, dstLOD)                   \
  X(CUmemorytype, dstMemoryType)      \
  X(void *, dstHost)                  \
  X(CUdeviceptr, dstDevice)           \
  X(CUarray, dstArray)                \
  X(void *, reserved1)                \
  X(size_t, dstPitch)                 \
  X(size_t, dstHeight)                \
  X(size_t, WidthInBytes)             \
  X(size_t, Height)                   \
  X(size_t, Depth)

#define JAXON_FIELD(type, name) type name;
#ifndef JAXON_CUDA_API_USE_TOOLKIT_TYPES
#define JAXON_ENUMERATOR(name, value) name = value,
typedef enum cudaError_enum { JAXON_CURESULT_VALUES(JAXON_ENUMERATOR) } CUresult;
typedef enum CUdevice_attribute_enum { JAXON_CU_DEVICE_ATTRIBUTE_VALUES(JAXON_ENUMERATOR) } CUdevice_attribute;
typedef enum CUfunction_attribute_enum { JAXON_CU_FUNCTION_ATTRIBUTE_VALUES(JAXON_ENUMERATOR) } CUfunction_attribute;
typedef enum CUmemorytype_enum { JAXON_CU_MEMORYTYPE_VALUES(JAXON_ENUMERATOR) } CUmemorytype;
typedef enum CUtensorMapDataType_enum { JAXON_CU_TENSOR_MAP_DATA_TYPE_VALUES(JAXON_ENUMERATOR) } CUtensorMapDataType;
typedef enum CUtensorMapInterleave_enum { JAXON_CU_TENSOR_MAP_INTERLEAVE_VALUES(JAXON_ENUMERATOR) } CUtensorMapInterleave;
typedef enum CUtensorMapSwizzle_enum { JAXON_CU_TENSOR_MAP_SWIZZLE_VALUES(JAXON_ENUMERATOR) } CUtensorMapSwizzle;
typedef enum CUtensorMapL2promotion_enum { JAXON_CU_TENSOR_MAP_L2_PROMOTION_VALUES(JAXON_ENUMERATOR) } CUtensorMapL2promotion;
typedef enum CUtensorMapFloatOOBfill_enum { JAXON_CU_TENSOR_MAP_FLOAT_OOB_FILL_VALUES(JAXON_ENUMERATOR) } CUtensorMapFloatOOBfill;
enum { JAXON_CU_FLAG_VALUES(JAXON_ENUMERATOR) };
typedef enum { JAXON_NVRTC_RESULT_VALUES(JAXON_ENUMERATOR) } nvrtcResult;
#undef JAXON_ENUMERATOR
typedef struct { JAXON_CUDA_KERNEL_NODE_PARAMS_FIELDS(JAXON_FIELD) } CUDA_KERNEL_NODE_PARAMS;
typedef struct { JAXON_CUDA_MEMSET_NODE_PARAMS_FIELDS(JAXON_FIELD) } CUDA_MEMSET_NODE_PARAMS;
typedef struct { JAXON_CUDA_MEMCPY3D_FIELDS(JAXON_FIELD) } CUDA_MEMCPY3D;
#endif

// return type, exact exported symbol, parameters. The loader refuses a
// library that lacks any of these, so a call never meets a NULL pointer.
#define JAXON_CUDA_DRIVER_FUNCTIONS(X)                                                                   \
  X(CUresult, cuInit, (unsigned int Flags))                                                              \
  X(CUresult, cuDriverGetVersion, (int *driverVersion))                                                  \
  X(CUresult, cuGetErrorName, (CUresult error, const char **pStr))                                       \
  X(CUresult, cuGetErrorString, (CUresult error, const char **pStr))                                     \
  X(CUresult, cuDeviceGetCount, (int *count))                                                            \
  X(CUresult, cuDeviceGet, (CUdevice *device, int ordinal))                                              \
  X(CUresult, cuDeviceGetName, (char *name, int len, CUdevice dev))                                      \
  X(CUresult, cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev))                  \
  X(CUresult, cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev))                                        \
  X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))                                 \
  X(CUresult, cuCtxSetCurrent, (CUcontext ctx))                                                          \
  X(CUresult, cuMemGetInfo_v2, (size_t *free, size_t *total))                                            \
  X(CUresult, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))                                       \
  X(CUresult, cuMemFree_v2, (CUdeviceptr dptr))                                                          \
  X(CUresult, cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags))                          \
  X(CUresult, cuMemFreeHost, (void *p))                                                                  \
  X(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,       \
                                     CUstream hStream))                                                  \
  X(CUresult, cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,             \
                                     CUstream hStream))                                                  \
  X(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,     \
                                     CUstream hStream))                                                  \
  X(CUresult, cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))    \
  X(CUresult, cuStreamCreate, (CUstream *phStream, unsigned int Flags))                                  \
  X(CUresult, cuStreamSynchronize, (CUstream hStream))                                                   \
  X(CUresult, cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags))                 \
  X(CUresult, cuEventCreate, (CUevent *phEvent, unsigned int Flags))                                     \
  X(CUresult, cuEventDestroy_v2, (CUevent hEvent))                                                       \
  X(CUresult, cuEventRecord, (CUevent hEvent, CUstream hStream))                                         \
  X(CUresult, cuEventQuery, (CUevent hEvent))                                                            \
  X(CUresult, cuEventSynchronize, (CUevent hEvent))                                                      \
  X(CUresult, cuModuleLoadData, (CUmodule *module, const void *image))                                   \
  X(CUresult, cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name))                 \
  X(CUresult, cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc))              \
  X(CUresult, cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value))            \
  X(CUresult, cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,               \
                               unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,    \
                               unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,    \
                               void **kernelParams, void **extra))                                       \
  X(CUresult, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData))

// Entry points jaxon does not need to run (timing, unloading, recovering a lost context, stream status, copies
// between two pinned host buffers, which the unified address space lets cuMemcpyAsync do; TMA descriptors, CUDA
// 12+, without which the Hopper GEMM loads its tiles with cp.async):
// resolved when the driver has them, NULL otherwise.
#define JAXON_CUDA_OPTIONAL_FUNCTIONS(X)                                                                 \
  X(CUresult, cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd))                  \
  X(CUresult, cuModuleUnload, (CUmodule hmod))                                                           \
  X(CUresult, cuDevicePrimaryCtxReset_v2, (CUdevice dev))                                                \
  X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                                              \
  X(CUresult, cuStreamQuery, (CUstream hStream))                                                         \
  X(CUresult, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream))            \
  X(CUresult, cuTensorMapEncodeTiled, (CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,                \
                                       cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,   \
                                       const cuuint64_t *globalStrides, const cuuint32_t *boxDim,                 \
                                       const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,        \
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,            \
                                       CUtensorMapFloatOOBfill oobFill))

// CUDA graphs, built node by node from a program's ops (CUDA 12+: the _v2 kernel node): an optimization, so
// without them programs replay op by op.
#define JAXON_CUDA_GRAPH_FUNCTIONS(X)                                                                    \
  X(CUresult, cuGraphCreate, (CUgraph *phGraph, unsigned int flags))                                     \
  X(CUresult, cuGraphAddKernelNode_v2, (CUgraphNode *phGraphNode, CUgraph hGraph,                        \
                                        const CUgraphNode *dependencies, size_t numDependencies,         \
                                        const CUDA_KERNEL_NODE_PARAMS *nodeParams))                      \
  X(CUresult, cuGraphAddMemcpyNode, (CUgraphNode *phGraphNode, CUgraph hGraph,                           \
                                     const CUgraphNode *dependencies, size_t numDependencies,            \
                                     const CUDA_MEMCPY3D *copyParams, CUcontext ctx))                    \
  X(CUresult, cuGraphAddMemsetNode, (CUgraphNode *phGraphNode, CUgraph hGraph,                           \
                                     const CUgraphNode *dependencies, size_t numDependencies,            \
                                     const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx))        \
  X(CUresult, cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph,                    \
                                            unsigned long long flags))                                   \
  X(CUresult, cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream))                                 \
  X(CUresult, cuGraphExecDestroy, (CUgraphExec hGraphExec))                                              \
  X(CUresult, cuGraphDestroy, (CUgraph hGraph))

// Updating an instantiated graph's nodes in place (new pointers for a relaunch): without them a graph whose
// pointers change is built and instantiated again.
#define JAXON_CUDA_GRAPH_UPDATE_FUNCTIONS(X)                                                             \
  X(CUresult, cuGraphExecKernelNodeSetParams_v2, (CUgraphExec hGraphExec, CUgraphNode hNode,             \
                                                  const CUDA_KERNEL_NODE_PARAMS *nodeParams))            \
  X(CUresult, cuGraphExecMemcpyNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode,                \
                                               const CUDA_MEMCPY3D *copyParams, CUcontext ctx))          \
  X(CUresult, cuGraphExecMemsetNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode,                \
                                               const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx))

#define JAXON_NVRTC_FUNCTIONS(X)                                                                         \
  X(const char *, nvrtcGetErrorString, (nvrtcResult result))                                             \
  X(nvrtcResult, nvrtcVersion, (int *major, int *minor))                                                 \
  X(nvrtcResult, nvrtcGetNumSupportedArchs, (int *numArchs))                                             \
  X(nvrtcResult, nvrtcGetSupportedArchs, (int *supportedArchs))                                          \
  X(nvrtcResult, nvrtcCreateProgram, (nvrtcProgram *prog, const char *src, const char *name,            \
                                      int numHeaders, const char *const *headers,                       \
                                      const char *const *includeNames))                                 \
  X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *prog))                                              \
  X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram prog, int numOptions, const char *const *options))  \
  X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram prog, size_t *ptxSizeRet))                               \
  X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram prog, char *ptx))                                            \
  X(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram prog, size_t *cubinSizeRet))                           \
  X(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram prog, char *cubin))                                        \
  X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t *logSizeRet))                        \
  X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram prog, char *log))

#define JAXON_DECLARE_PFN(ret, name, params) typedef ret(*jaxon_pfn_##name) params;
JAXON_CUDA_DRIVER_FUNCTIONS(JAXON_DECLARE_PFN)
JAXON_CUDA_OPTIONAL_FUNCTIONS(JAXON_DECLARE_PFN)
JAXON_CUDA_GRAPH_FUNCTIONS(JAXON_DECLARE_PFN)
JAXON_CUDA_GRAPH_UPDATE_FUNCTIONS(JAXON_DECLARE_PFN)
JAXON_NVRTC_FUNCTIONS(JAXON_DECLARE_PFN)
#undef JAXON_DECLARE_PFN

#endif
