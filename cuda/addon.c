// Entry point of the jaxon native addon (N-API, C). The addon links neither
// libcuda nor libnvrtc: both are opened with dlopen at run time, so it builds
// and loads on machines without CUDA.
#include <stdbool.h>
#include "addon.h"

void jaxon_throw(napi_env env, const char *message) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, NULL, message);
}

int jaxon_export(napi_env env, napi_value exports, const char *name, napi_callback fn) {
  napi_value value;
  if (napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &value) != napi_ok) return 0;
  return napi_set_named_property(env, exports, name, value) == napi_ok;
}

static napi_value init(napi_env env, napi_value exports) {
  jaxon_init_cpu_kernels(env, exports);
  jaxon_init_cuda_driver(env, exports);
  jaxon_init_cuda_runtime(env, exports);
  jaxon_init_cuda_memory(env, exports);
  jaxon_init_cuda_compile(env, exports);
  jaxon_init_cuda_program(env, exports);
  jaxon_init_cuda_test_hooks(env, exports);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
