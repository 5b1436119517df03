// Kernel parameters of the "tensor map" kind: a TMA descriptor (CUtensorMap,
// 128 bytes) that cuTensorMapEncodeTiled makes on the host at each launch
// from the device address of one of the launch's buffer arguments, so a
// kernel reads its operand tiles with cp.async.bulk.tensor. Launches pass a
// kernel its buffers' pointers first, then its tensor maps in order.
#ifndef JAXON_CUDA_TENSOR_MAP_H
#define JAXON_CUDA_TENSOR_MAP_H
#include "cuda_runtime.h"

#define JAXON_MAX_TENSOR_MAPS 8

typedef struct {
  uint32_t arg;       /* the buffer argument whose address the tensor starts at */
  uint32_t data_type; /* CUtensorMapDataType */
  uint32_t rank;      /* 1 to 5 */
  uint32_t swizzle;   /* CUtensorMapSwizzle */
  uint64_t dims[5];   /* elements, innermost first */
  uint64_t strides[4]; /* bytes, of dimensions 1 .. rank - 1 */
  uint32_t box[5];    /* the box one copy moves, elements */
} jaxon_tensor_map_spec;

/* Reads `value` (undefined: none) as an array of at most JAXON_MAX_TENSOR_MAPS
   { arg, dataType, dims, strides, box, swizzle } objects whose `arg` is below num_args; 0 with a TypeError naming
   fn and the field otherwise. */
int jaxon_read_tensor_maps(napi_env env, napi_value value, const char *fn, uint32_t num_args, jaxon_tensor_map_spec *out,
                           uint32_t *count);

/* Encodes the map for a tensor at `address` (zeros out of bounds). A driver without cuTensorMapEncodeTiled is
   CUDA_ERROR_NOT_SUPPORTED. On failure `call` says which call with which values. */
CUresult jaxon_encode_tensor_map(const jaxon_tensor_map_spec *spec, CUdeviceptr address, CUtensorMap *out, char *call,
                                 size_t call_size);

#endif
