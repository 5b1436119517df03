// N-API helpers shared by the CUDA files (see cuda_napi.h).
#include "cuda_napi.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One random 128-bit tag per handle kind (napi_type_tag).
static const napi_type_tag handle_tags[JAXON_HANDLE_KIND_COUNT] = {
    {0x6a61786f6e646576ULL, 0x3f1c2a9be84d7001ULL}, {0x6a61786f6e627566ULL, 0x3f1c2a9be84d7002ULL},
    {0x6a61786f6e6d6f64ULL, 0x3f1c2a9be84d7003ULL}, {0x6a61786f6e66756eULL, 0x3f1c2a9be84d7004ULL},
    {0x6a61786f6e70726fULL, 0x3f1c2a9be84d7005ULL}, {0x6a61786f6e746573ULL, 0x3f1c2a9be84d7006ULL},
};

static const char *handle_names[JAXON_HANDLE_KIND_COUNT] = {
    "a CUDA device handle", "a CUDA buffer handle", "a CUDA module handle",
    "a CUDA function handle", "a CUDA program handle", "a test allocator handle",
};

void jaxon_throw_code(napi_env env, const char *code, const char *message) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, code, message);
}

static void throw_type(napi_env env, const char *fn, const char *arg, const char *expected) {
  char message[512];
  snprintf(message, sizeof message, "jaxon cuda: %s: %s must be %s", fn, arg, expected);
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_type_error(env, NULL, message);
}

napi_value jaxon_wrap_handle(napi_env env, jaxon_handle_kind kind, void *data, napi_finalize finalize) {
  napi_value value;
  if (napi_create_external(env, data, finalize, NULL, &value) != napi_ok) return NULL;
  if (napi_type_tag_object(env, value, &handle_tags[kind]) != napi_ok) return NULL;
  return value;
}

void *jaxon_unwrap_handle(napi_env env, napi_value value, jaxon_handle_kind kind, const char *fn, const char *arg) {
  bool matches = false;
  void *data = NULL;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external ||
      napi_check_object_type_tag(env, value, &handle_tags[kind], &matches) != napi_ok || !matches ||
      napi_get_value_external(env, value, &data) != napi_ok || !data) {
    throw_type(env, fn, arg, handle_names[kind]);
    return NULL;
  }
  return data;
}

int jaxon_get_u64(napi_env env, napi_value value, const char *fn, const char *arg, uint64_t *out) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok) return 0;
  if (type == napi_bigint) {
    bool lossless = false;
    if (napi_get_value_bigint_uint64(env, value, out, &lossless) == napi_ok && lossless) return 1;
  } else if (type == napi_number) {
    double number = 0;
    napi_get_value_double(env, value, &number);
    if (number >= 0 && number <= 9007199254740991.0 && number == (double)(uint64_t)number) {
      *out = (uint64_t)number;
      return 1;
    }
  }
  throw_type(env, fn, arg, "a non-negative integer (number or BigInt)");
  return 0;
}

int jaxon_get_i32(napi_env env, napi_value value, const char *fn, const char *arg, int32_t *out) {
  napi_valuetype type;
  double number = 0;
  if (napi_typeof(env, value, &type) == napi_ok && type == napi_number &&
      napi_get_value_double(env, value, &number) == napi_ok && number == (double)(int32_t)number) {
    *out = (int32_t)number;
    return 1;
  }
  throw_type(env, fn, arg, "a 32-bit integer");
  return 0;
}

int jaxon_get_string(napi_env env, napi_value value, const char *fn, const char *arg, char **out) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) {
    throw_type(env, fn, arg, "a string");
    return 0;
  }
  char *text = malloc(length + 1);
  if (!text) {
    jaxon_throw(env, "jaxon cuda: out of host memory");
    return 0;
  }
  napi_get_value_string_utf8(env, value, text, length + 1, &length);
  *out = text;
  return 1;
}

int jaxon_get_bytes(napi_env env, napi_value value, const char *fn, const char *arg, void **data, size_t *length) {
  bool is = false;
  if (napi_is_typedarray(env, value, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t count = 0, offset = 0;
    napi_value buffer;
    if (napi_get_typedarray_info(env, value, &type, &count, data, &buffer, &offset) != napi_ok) return 0;
    size_t element = 1;
    switch (type) {
      case napi_int16_array: case napi_uint16_array: element = 2; break;
      case napi_int32_array: case napi_uint32_array: case napi_float32_array: element = 4; break;
      case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: element = 8; break;
      default: element = 1;
    }
    *length = count * element;
    return 1;
  }
  if (napi_is_dataview(env, value, &is) == napi_ok && is) {
    napi_value buffer;
    size_t offset = 0;
    return napi_get_dataview_info(env, value, length, data, &buffer, &offset) == napi_ok;
  }
  if (napi_is_arraybuffer(env, value, &is) == napi_ok && is) {
    return napi_get_arraybuffer_info(env, value, data, length) == napi_ok;
  }
  throw_type(env, fn, arg, "a TypedArray, DataView or ArrayBuffer");
  return 0;
}

int jaxon_get_u32_array(napi_env env, napi_value value, const char *fn, const char *arg, uint32_t *out, uint32_t count) {
  bool is = false;
  uint32_t length = 0;
  char expected[64];
  if (napi_is_array(env, value, &is) != napi_ok || !is || napi_get_array_length(env, value, &length) != napi_ok ||
      length != count)
    goto bad;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    double number = -1;
    if (napi_get_element(env, value, i, &element) != napi_ok || napi_get_value_double(env, element, &number) != napi_ok ||
        !(number >= 0 && number <= 4294967295.0) || number != (double)(uint32_t)number)
      goto bad;
    out[i] = (uint32_t)number;
  }
  return 1;
bad:  // formatted only here: launches read their grid and block on the hot path
  snprintf(expected, sizeof expected, "an array of %u non-negative integers", count);
  throw_type(env, fn, arg, expected);
  return 0;
}

void jaxon_indexed_name(char out[32], const char *name, uint32_t i) {
  size_t n = strlen(name);
  char digits[11];
  int k = 0;
  if (n > 19) n = 19;
  do digits[k++] = (char)('0' + i % 10); while ((i /= 10) && k < 10);
  memcpy(out, name, n);
  out[n++] = '[';
  while (k) out[n++] = digits[--k];
  out[n++] = ']';
  out[n] = 0;
}

int jaxon_set_number(napi_env env, napi_value object, const char *key, double value) {
  napi_value number;
  return napi_create_double(env, value, &number) == napi_ok &&
         napi_set_named_property(env, object, key, number) == napi_ok;
}

int jaxon_set_string(napi_env env, napi_value object, const char *key, const char *value) {
  napi_value string;
  return napi_create_string_utf8(env, value, NAPI_AUTO_LENGTH, &string) == napi_ok &&
         napi_set_named_property(env, object, key, string) == napi_ok;
}

napi_value jaxon_stats_object(napi_env env, const jaxon_alloc_stats *s) {
  napi_value object;
  if (napi_create_object(env, &object) != napi_ok) return NULL;
  int ok = jaxon_set_number(env, object, "bytesInUse", (double)s->bytes_in_use) &&
           jaxon_set_number(env, object, "peakBytesInUse", (double)s->peak_bytes_in_use) &&
           jaxon_set_number(env, object, "bytesLimit", (double)s->bytes_limit) &&
           jaxon_set_number(env, object, "bytesReserved", (double)s->bytes_reserved) &&
           jaxon_set_number(env, object, "peakBytesReserved", (double)s->peak_bytes_reserved) &&
           jaxon_set_number(env, object, "bytesPendingFree", (double)s->bytes_pending_free) &&
           jaxon_set_number(env, object, "largestFreeBlock", (double)s->largest_free_block) &&
           jaxon_set_number(env, object, "largestAllocSize", (double)s->largest_alloc_size) &&
           jaxon_set_number(env, object, "numAllocs", (double)s->num_allocs) &&
           jaxon_set_number(env, object, "numLiveBuffers", (double)s->num_live_blocks) &&
           jaxon_set_number(env, object, "numSegments", (double)s->num_segments) &&
           jaxon_set_number(env, object, "numCacheFlushes", (double)s->num_cache_flushes) &&
           jaxon_set_number(env, object, "numOoms", (double)s->num_ooms) &&
           jaxon_set_number(env, object, "bytesRequested", (double)s->bytes_requested) &&
           jaxon_set_number(env, object, "peakBytesRequested", (double)s->peak_bytes_requested);
  return ok ? object : NULL;
}

int jaxon_args(napi_env env, napi_callback_info info, const char *fn, size_t required, size_t max, napi_value *argv,
               size_t *argc) {
  size_t count = max;
  if (napi_get_cb_info(env, info, &count, argv, NULL, NULL) != napi_ok) return 0;
  if (count < required) {
    char message[256];
    snprintf(message, sizeof message, "jaxon cuda: %s expects %zu arguments, got %zu", fn, required, count);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  for (size_t i = count; i < max; i++) argv[i] = undefined;
  if (argc) *argc = count;
  return 1;
}
