// N-API helpers shared by the CUDA files of the addon: typed External handles
// (type-tagged, so a module passed where a buffer is expected is an error,
// not a crash), argument readers whose errors name the function and the
// argument, errors carrying a code, and the allocator stats object.
#ifndef JAXON_CUDA_NAPI_H
#define JAXON_CUDA_NAPI_H
#include <stdint.h>
#include "addon.h"
#include "cuda_alloc.h"

typedef enum {
  JAXON_HANDLE_DEVICE,
  JAXON_HANDLE_BUFFER,
  JAXON_HANDLE_MODULE,
  JAXON_HANDLE_FUNCTION,
  JAXON_HANDLE_PROGRAM,
  JAXON_HANDLE_TEST_ALLOCATOR,
  JAXON_HANDLE_KIND_COUNT,
} jaxon_handle_kind;

/* Throws an Error whose `code` property is `code` (e.g. "RESOURCE_EXHAUSTED"). */
void jaxon_throw_code(napi_env env, const char *code, const char *message);

/* Wraps `data` in a type-tagged External; `finalize` runs when JS drops it. */
napi_value jaxon_wrap_handle(napi_env env, jaxon_handle_kind kind, void *data, napi_finalize finalize);
/* The data of a handle of `kind`; NULL with a TypeError naming fn and arg otherwise. */
void *jaxon_unwrap_handle(napi_env env, napi_value value, jaxon_handle_kind kind, const char *fn, const char *arg);

/* Readers: return 0 with a pending TypeError/RangeError naming fn and arg on a bad value. */
int jaxon_get_u64(napi_env env, napi_value value, const char *fn, const char *arg, uint64_t *out);
// "name[i]" into out (at most 31 characters), without snprintf: for argument names on hot paths
void jaxon_indexed_name(char out[32], const char *name, uint32_t i);
int jaxon_get_i32(napi_env env, napi_value value, const char *fn, const char *arg, int32_t *out);
int jaxon_get_string(napi_env env, napi_value value, const char *fn, const char *arg, char **out);
/* A Uint8Array/TypedArray/DataView/ArrayBuffer's bytes. */
int jaxon_get_bytes(napi_env env, napi_value value, const char *fn, const char *arg, void **data, size_t *length);
/* Exactly `count` non-negative integers from a JS array of numbers. */
int jaxon_get_u32_array(napi_env env, napi_value value, const char *fn, const char *arg, uint32_t *out, uint32_t count);

int jaxon_set_number(napi_env env, napi_value object, const char *key, double value);
int jaxon_set_string(napi_env env, napi_value object, const char *key, const char *value);
napi_value jaxon_stats_object(napi_env env, const jaxon_alloc_stats *stats);

/* Reads argc arguments; fewer than `required` is a TypeError naming fn. */
int jaxon_args(napi_env env, napi_callback_info info, const char *fn, size_t required, size_t max, napi_value *argv,
               size_t *argc);

#endif
