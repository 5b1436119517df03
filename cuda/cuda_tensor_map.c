// Tensor-map kernel parameters (cuda_tensor_map.h): read from JS once, encoded at every launch.
#include <stdio.h>
#include <string.h>
#include "cuda_tensor_map.h"

static int bad(napi_env env, const char *fn, uint32_t index, const char *what) {
  char message[300];
  snprintf(message, sizeof message, "jaxon cuda: %s: tensorMaps[%u]: %s", fn, index, what);
  napi_throw_type_error(env, NULL, message);
  return 0;
}

static int get_named(napi_env env, napi_value object, const char *key, napi_value *out) {
  bool has = false;
  return napi_has_named_property(env, object, key, &has) == napi_ok && has && napi_get_named_property(env, object, key, out) == napi_ok;
}

static int read_u64s(napi_env env, napi_value object, const char *key, const char *fn, uint64_t *out, uint32_t *length,
                     uint32_t max) {
  napi_value array, element;
  bool is = false;
  if (!get_named(env, object, key, &array) || napi_is_array(env, array, &is) != napi_ok || !is ||
      napi_get_array_length(env, array, length) != napi_ok || *length > max)
    return 0;
  for (uint32_t i = 0; i < *length; i++)
    if (napi_get_element(env, array, i, &element) != napi_ok || !jaxon_get_u64(env, element, fn, key, &out[i])) return 0;
  return 1;
}

int jaxon_read_tensor_maps(napi_env env, napi_value value, const char *fn, uint32_t num_args, jaxon_tensor_map_spec *out,
                           uint32_t *count) {
  napi_valuetype type;
  bool is = false;
  *count = 0;
  if (!value || (napi_typeof(env, value, &type) == napi_ok && type == napi_undefined)) return 1;
  if (napi_is_array(env, value, &is) != napi_ok || !is || napi_get_array_length(env, value, count) != napi_ok ||
      *count > JAXON_MAX_TENSOR_MAPS) {
    napi_throw_type_error(env, NULL, "jaxon cuda: tensorMaps must be an array of at most 8 tensor map specs");
    return 0;
  }
  for (uint32_t i = 0; i < *count; i++) {
    napi_value spec, field;
    jaxon_tensor_map_spec *s = &out[i];
    uint64_t numbers[5];
    uint32_t rank = 0, length = 0;
    memset(s, 0, sizeof *s);
    if (napi_get_element(env, value, i, &spec) != napi_ok) return bad(env, fn, i, "unreadable");
    if (!get_named(env, spec, "arg", &field) || !jaxon_get_u64(env, field, fn, "arg", &numbers[0]) || numbers[0] >= num_args)
      return bad(env, fn, i, "arg must index one of the launch's buffer arguments");
    s->arg = (uint32_t)numbers[0];
    if (!get_named(env, spec, "dataType", &field) || !jaxon_get_u64(env, field, fn, "dataType", &numbers[0]) || numbers[0] > 12)
      return bad(env, fn, i, "dataType must be a CUtensorMapDataType (0 to 12)");
    s->data_type = (uint32_t)numbers[0];
    if (!get_named(env, spec, "swizzle", &field) || !jaxon_get_u64(env, field, fn, "swizzle", &numbers[0]) || numbers[0] > 3)
      return bad(env, fn, i, "swizzle must be a CUtensorMapSwizzle (0 to 3)");
    s->swizzle = (uint32_t)numbers[0];
    if (!read_u64s(env, spec, "dims", fn, s->dims, &rank, 5) || rank < 1) return bad(env, fn, i, "dims must be 1 to 5 sizes");
    s->rank = rank;
    if (!read_u64s(env, spec, "strides", fn, s->strides, &length, 4) || length != rank - 1)
      return bad(env, fn, i, "strides must be rank - 1 byte strides");
    if (!read_u64s(env, spec, "box", fn, numbers, &length, 5) || length != rank) return bad(env, fn, i, "box must be rank sizes");
    for (uint32_t d = 0; d < rank; d++) {
      if (numbers[d] > 0xffffffffu) return bad(env, fn, i, "box sizes must fit 32 bits");
      s->box[d] = (uint32_t)numbers[d];
    }
  }
  return 1;
}

CUresult jaxon_encode_tensor_map(const jaxon_tensor_map_spec *s, CUdeviceptr address, CUtensorMap *out, char *call,
                                 size_t call_size) {
  static const cuuint32_t unit[5] = {1, 1, 1, 1, 1};
  CUresult result = jaxon_cu->cuTensorMapEncodeTiled
                        ? jaxon_cu->cuTensorMapEncodeTiled(out, (CUtensorMapDataType)s->data_type, s->rank,
                                                           (void *)(uintptr_t)address, s->dims, s->strides, s->box, unit,
                                                           CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)s->swizzle,
                                                           CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
                        : CUDA_ERROR_NOT_SUPPORTED;
  if (result != CUDA_SUCCESS) {
    int n = snprintf(call, call_size, "cuTensorMapEncodeTiled(address 0x%llx, data type %u, dims [", (unsigned long long)address,
                     s->data_type);
    for (uint32_t d = 0; d < s->rank && n > 0 && (size_t)n < call_size; d++)
      n += snprintf(call + n, call_size - n, "%s%llu", d ? "," : "", (unsigned long long)s->dims[d]);
    if (n > 0 && (size_t)n < call_size) n += snprintf(call + n, call_size - n, "], byte strides [");
    for (uint32_t d = 0; d + 1 < s->rank && n > 0 && (size_t)n < call_size; d++)
      n += snprintf(call + n, call_size - n, "%s%llu", d ? "," : "", (unsigned long long)s->strides[d]);
    if (n > 0 && (size_t)n < call_size) n += snprintf(call + n, call_size - n, "], box [");
    for (uint32_t d = 0; d < s->rank && n > 0 && (size_t)n < call_size; d++)
      n += snprintf(call + n, call_size - n, "%s%u", d ? "," : "", s->box[d]);
    if (n > 0 && (size_t)n < call_size)
      snprintf(call + n, call_size - n, "], swizzle %u)%s", s->swizzle,
               jaxon_cu->cuTensorMapEncodeTiled ? "" : ": the driver lacks cuTensorMapEncodeTiled");
  }
  return result;
}
