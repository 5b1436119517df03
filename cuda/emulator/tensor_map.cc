// The emulated driver's cuTensorMapEncodeTiled: checks its arguments as the
// CUDA driver API reference documents them (CUDA_ERROR_INVALID_VALUE
// otherwise) and writes what the emulated cp.async.bulk.tensor reads
// (jx_emu_tensor_map, emu_abi.h) into the descriptor's 128 opaque bytes. Only
// the tile mode without interleave is emulated (jaxon's kernels use no other);
// an interleaved layout is CUDA_ERROR_NOT_SUPPORTED, not silently wrong.
#include <string.h>
#include "driver.h"

namespace {

/** Bytes per element of each CUtensorMapDataType, 0 for values cuda.h does not define. */
unsigned element_bytes(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
  }
  return 0;
}

bool is_float(CUtensorMapDataType type) {
  return type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ||
         type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 || type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ ||
         type == CU_TENSOR_MAP_DATA_TYPE_FLOAT64 || type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
         type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

}  // namespace

static_assert(sizeof(jx_emu_tensor_map) <= sizeof(CUtensorMap), "the emulated tensor map fits a CUtensorMap");

EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                       const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
  if (!jaxon_emu::initialized) return CUDA_ERROR_NOT_INITIALIZED;
  const unsigned bytes = element_bytes(type);
  if (!map || (uintptr_t)map % 64 || !bytes || rank < 1 || rank > 5 || !address || !dims || (rank > 1 && !strides) || !box ||
      !element_strides)
    return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned)interleave > CU_TENSOR_MAP_INTERLEAVE_32B || (unsigned)swizzle > CU_TENSOR_MAP_SWIZZLE_128B ||
      (unsigned)l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B || (unsigned)fill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return CUDA_ERROR_INVALID_VALUE;
  // globalAddress: 16-byte aligned (32 with 32-byte interleave); interleave needs rank >= 3
  if ((uintptr_t)address % (interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16)) return CUDA_ERROR_INVALID_VALUE;
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3) return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; i++) {
    // globalDim: 1 to 2^32; boxDim: 1 to 256; elementStrides: 1 to 8
    if (dims[i] == 0 || dims[i] > (1ull << 32) || box[i] == 0 || box[i] > 256 || element_strides[i] == 0 || element_strides[i] > 8)
      return CUDA_ERROR_INVALID_VALUE;
  }
  for (cuuint32_t i = 0; i + 1 < rank; i++) {
    // globalStrides (dimensions 1..rank-1, bytes): multiples of 16 (32 with 32-byte interleave), below 2^40
    if (strides[i] % (interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16) || strides[i] >= (1ull << 40)) return CUDA_ERROR_INVALID_VALUE;
  }
  const unsigned long long inner = (unsigned long long)box[0] * bytes;
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
    // the box's inner dimension: a multiple of 16 bytes, and no wider than the swizzle span
    if (inner % 16) return CUDA_ERROR_INVALID_VALUE;
    const unsigned span = swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : 128;
    if (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner > span) return CUDA_ERROR_INVALID_VALUE;
  } else if (interleave == CU_TENSOR_MAP_INTERLEAVE_32B && swizzle != CU_TENSOR_MAP_SWIZZLE_32B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // NaN fill is for floating-point elements only
  if (fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !is_float(type)) return CUDA_ERROR_INVALID_VALUE;
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return (CUresult)JX_CUDA_ERROR_NOT_SUPPORTED;
  jx_emu_tensor_map m;
  memset(&m, 0, sizeof m);
  m.magic = JX_EMU_TENSOR_MAP_MAGIC;
  m.rank = (unsigned char)rank;
  m.element_size = (unsigned char)bytes;
  m.swizzle = (unsigned char)swizzle;
  m.oob_nan = fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  m.address = (unsigned long long)(uintptr_t)address;
  for (cuuint32_t i = 0; i < rank; i++) {
    m.dims[i] = dims[i];
    m.box[i] = (unsigned short)box[i];
    m.element_strides[i] = (unsigned char)element_strides[i];
  }
  for (cuuint32_t i = 0; i + 1 < rank; i++) m.strides[i] = strides[i];
  memset(map, 0, sizeof *map);
  memcpy(map, &m, sizeof m);
  return CUDA_SUCCESS;
}
