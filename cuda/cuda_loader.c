// Finds the CUDA driver at run time (dlopen, never linked). This first cut
// only reports whether a usable driver and GPU exist, so jaxon can say why it
// runs on the CPU; the CUDA backend builds on it.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "addon.h"

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_device_get_count_fn)(int *);

// cudaProbe() -> { available: boolean, reason: string, library: string }
static napi_value cuda_probe(napi_env env, napi_callback_info info) {
  const char *override = getenv("JAXON_LIBCUDA");
  const char *path = override && *override ? override : "libcuda.so.1";
  char reason[1024] = "";
  int available = 0;
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(reason, sizeof reason, "no CUDA driver: dlopen(%s) failed: %s", path, dlerror());
  } else {
    cu_init_fn cu_init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_device_get_count_fn get_count = (cu_device_get_count_fn)dlsym(lib, "cuDeviceGetCount");
    int count = 0;
    int status;
    if (!cu_init || !get_count) {
      snprintf(reason, sizeof reason, "%s lacks cuInit or cuDeviceGetCount", path);
    } else if ((status = cu_init(0)) != 0) {
      snprintf(reason, sizeof reason, "cuInit failed with CUresult %d", status);
    } else if ((status = get_count(&count)) != 0 || count == 0) {
      snprintf(reason, sizeof reason, "the CUDA driver reports no GPU (CUresult %d, %d devices)", status, count);
    } else {
      available = 1;
      snprintf(reason, sizeof reason, "%d CUDA device(s) found", count);
    }
  }
  napi_value result, value;
  JAXON_CHECK(env, napi_create_object(env, &result));
  JAXON_CHECK(env, napi_get_boolean(env, available, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "available", value));
  JAXON_CHECK(env, napi_create_string_utf8(env, reason, NAPI_AUTO_LENGTH, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "reason", value));
  JAXON_CHECK(env, napi_create_string_utf8(env, path, NAPI_AUTO_LENGTH, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "library", value));
  return result;
}

void jaxon_init_cuda_loader(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "cudaProbe", cuda_probe);
}
