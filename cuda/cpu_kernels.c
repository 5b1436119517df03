// Loading and calling CPU kernels that jaxon's compiler generated as C and the
// system compiler built into shared objects. Every kernel has one ABI:
//   void kernel(void **buffers, const int64_t *params);
// buffers are the data pointers of ArrayBuffers / TypedArrays, params the
// shape-generic sizes and strides.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "addon.h"

typedef void (*jaxon_kernel_fn)(void **buffers, const int64_t *params);

#define MAX_BUFFERS 256

static napi_value load_library(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  JAXON_CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char path[4096];
  size_t len = 0;
  if (argc < 1 || napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok) {
    jaxon_throw(env, "jaxon native: loadLibrary(path) expects a string");
    return NULL;
  }
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    char message[4600];
    snprintf(message, sizeof message, "jaxon native: dlopen(%s) failed: %s", path, dlerror());
    jaxon_throw(env, message);
    return NULL;
  }
  napi_value result;
  JAXON_CHECK(env, napi_create_external(env, handle, NULL, NULL, &result));
  return result;
}

static napi_value get_symbol(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  JAXON_CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *handle = NULL;
  char name[512];
  size_t len = 0;
  if (argc < 2 || napi_get_value_external(env, argv[0], &handle) != napi_ok ||
      napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len) != napi_ok) {
    jaxon_throw(env, "jaxon native: getSymbol(library, name) expects a library handle and a string");
    return NULL;
  }
  dlerror();
  void *symbol = dlsym(handle, name);
  if (!symbol) {
    char message[1200];
    snprintf(message, sizeof message, "jaxon native: symbol %s not found: %s", name, dlerror());
    jaxon_throw(env, message);
    return NULL;
  }
  napi_value result;
  JAXON_CHECK(env, napi_create_external(env, symbol, NULL, NULL, &result));
  return result;
}

// Returns the data pointer of an ArrayBuffer or any ArrayBufferView.
static int buffer_pointer(napi_env env, napi_value value, void **data) {
  bool is = false;
  size_t length = 0;
  if (napi_is_arraybuffer(env, value, &is) == napi_ok && is)
    return napi_get_arraybuffer_info(env, value, data, &length) == napi_ok;
  if (napi_is_typedarray(env, value, &is) == napi_ok && is) {
    napi_typedarray_type type;
    napi_value arraybuffer;
    size_t offset = 0;
    return napi_get_typedarray_info(env, value, &type, &length, data, &arraybuffer, &offset) == napi_ok;
  }
  if (napi_is_dataview(env, value, &is) == napi_ok && is) {
    napi_value arraybuffer;
    size_t offset = 0;
    return napi_get_dataview_info(env, value, &length, data, &arraybuffer, &offset) == napi_ok;
  }
  return 0;
}

// callKernel(fn, buffers: (ArrayBuffer | ArrayBufferView)[], params: BigInt64Array)
static napi_value call_kernel(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  JAXON_CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *fn = NULL;
  if (argc < 3 || napi_get_value_external(env, argv[0], &fn) != napi_ok || !fn) {
    jaxon_throw(env, "jaxon native: callKernel(fn, buffers, params) expects a kernel handle");
    return NULL;
  }
  uint32_t count = 0;
  bool is_array = false;
  if (napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[1], &count) != napi_ok || count > MAX_BUFFERS) {
    jaxon_throw(env, "jaxon native: callKernel: buffers must be an array of at most 256 buffers");
    return NULL;
  }
  void *buffers[MAX_BUFFERS];
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    JAXON_CHECK(env, napi_get_element(env, argv[1], i, &element));
    if (!buffer_pointer(env, element, &buffers[i])) {
      char message[200];
      snprintf(message, sizeof message, "jaxon native: callKernel: buffers[%u] is not an ArrayBuffer or TypedArray", i);
      jaxon_throw(env, message);
      return NULL;
    }
  }
  napi_typedarray_type type;
  size_t length = 0;
  void *params = NULL;
  napi_value arraybuffer;
  size_t offset = 0;
  if (napi_get_typedarray_info(env, argv[2], &type, &length, &params, &arraybuffer, &offset) != napi_ok ||
      type != napi_bigint64_array) {
    jaxon_throw(env, "jaxon native: callKernel: params must be a BigInt64Array");
    return NULL;
  }
  ((jaxon_kernel_fn)fn)(buffers, (const int64_t *)params);
  return NULL;
}

void jaxon_init_cpu_kernels(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "loadLibrary", load_library);
  jaxon_export(env, exports, "getSymbol", get_symbol);
  jaxon_export(env, exports, "callKernel", call_kernel);
}
