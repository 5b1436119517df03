// Shared declarations of the jaxon N-API addon: each source file registers its
// functions on the exports object through one init function.
#ifndef JAXON_ADDON_H
#define JAXON_ADDON_H
#define NAPI_VERSION 8
#include <node_api.h>

// Throws a JS Error with `message` unless an exception is already pending.
void jaxon_throw(napi_env env, const char *message);

// Adds `fn` to `exports` under `name`; returns false (with a pending exception) on failure.
int jaxon_export(napi_env env, napi_value exports, const char *name, napi_callback fn);

void jaxon_init_cpu_kernels(napi_env env, napi_value exports);
// The CUDA runtime (cuda_*.c; see cuda_runtime.h).
void jaxon_init_cuda_driver(napi_env env, napi_value exports);
void jaxon_init_cuda_runtime(napi_env env, napi_value exports);
void jaxon_init_cuda_memory(napi_env env, napi_value exports);
void jaxon_init_cuda_compile(napi_env env, napi_value exports);
void jaxon_init_cuda_program(napi_env env, napi_value exports);
void jaxon_init_cuda_test_hooks(napi_env env, napi_value exports);

#define JAXON_CHECK(env, call)                         \
  do {                                                 \
    if ((call) != napi_ok) {                           \
      jaxon_throw((env), "jaxon native: " #call " failed"); \
      return NULL;                                     \
    }                                                  \
  } while (0)

#endif
