// Finds and opens the CUDA driver (libcuda.so.1) and NVRTC (libnvrtc.so.<major>)
// with dlopen at run time; neither is ever linked, so the addon builds and
// loads on machines without CUDA. Every entry point jaxon calls is resolved
// here, once, and a library lacking one is refused, so no later call meets a
// NULL pointer. When CUDA cannot be used the reason is one line, for
// jax.environmentInfo() and the CPU fallback.
//
// With JAXON_CUDA_EMULATOR=1 both are jaxon's emulated GPU
// (jaxon_cuda_emulator.node beside this addon, see cuda/emulator/), whatever
// JAXON_LIBCUDA / JAXON_LIBNVRTC say.
//
// Search order. Driver: $JAXON_LIBCUDA (alone, when set), the loader's paths
// (libcuda.so.1), then the usual driver folders. NVRTC: $JAXON_LIBNVRTC (alone,
// when set); otherwise, for each major from the driver's CUDA version down to
// 11: $CUDA_HOME, $CUDA_PATH and /usr/local/cuda (lib64, lib), the loader's
// paths, then pip's nvidia/*/lib folders under the usual Python prefixes.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_runtime.h"

const jaxon_cuda_driver *jaxon_cu = NULL;

static jaxon_cuda_driver driver_state;
static char driver_reason[2048];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static jaxon_nvrtc nvrtc_state;
static const jaxon_nvrtc *nvrtc_loaded = NULL;
static char nvrtc_reason[2048];
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

typedef struct {
  const char *name;
  size_t offset;
} symbol_entry;

#define JAXON_DRIVER_ENTRY(ret, name, params) {#name, offsetof(jaxon_cuda_driver, name)},
static const symbol_entry driver_symbols[] = {JAXON_CUDA_DRIVER_FUNCTIONS(JAXON_DRIVER_ENTRY)};
static const symbol_entry optional_symbols[] = {JAXON_CUDA_OPTIONAL_FUNCTIONS(JAXON_DRIVER_ENTRY)};
static const symbol_entry graph_symbols[] = {JAXON_CUDA_GRAPH_FUNCTIONS(JAXON_DRIVER_ENTRY)};
static const symbol_entry graph_update_symbols[] = {JAXON_CUDA_GRAPH_UPDATE_FUNCTIONS(JAXON_DRIVER_ENTRY)};
#undef JAXON_DRIVER_ENTRY
#define JAXON_NVRTC_ENTRY(ret, name, params) {#name, offsetof(jaxon_nvrtc, name)},
static const symbol_entry nvrtc_symbols[] = {JAXON_NVRTC_FUNCTIONS(JAXON_NVRTC_ENTRY)};
#undef JAXON_NVRTC_ENTRY

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

// Resolves every entry into `table`; returns how many are missing and names the first three.
static int resolve(void *lib, void *table, const symbol_entry *entries, size_t count, char *missing, size_t size) {
  int absent = 0;
  size_t used = 0;
  missing[0] = '\0';
  for (size_t i = 0; i < count; i++) {
    void *symbol = dlsym(lib, entries[i].name);
    memcpy((char *)table + entries[i].offset, &symbol, sizeof symbol);
    if (symbol) continue;
    if (absent < 3 && used < size) used += snprintf(missing + used, size - used, "%s%s", absent ? ", " : "", entries[i].name);
    absent++;
  }
  if (absent > 3 && used < size) snprintf(missing + used, size - used, " and %d more", absent - 3);
  return absent;
}

// The file a handle came from (the loader may have found it anywhere).
static void library_path(void *lib, const char *symbol, const char *fallback, char *out, size_t size) {
  Dl_info info;
  void *address = dlsym(lib, symbol);
  if (address && dladdr(address, &info) && info.dli_fname) snprintf(out, size, "%s", info.dli_fname);
  else snprintf(out, size, "%s", fallback);
}

void jaxon_cuda_describe(CUresult result, char *out, size_t size) {
  const char *name = NULL, *text = NULL;
  if (jaxon_cu && jaxon_cu->cuGetErrorName(result, &name) == CUDA_SUCCESS && name) {
    if (jaxon_cu->cuGetErrorString(result, &text) != CUDA_SUCCESS || !text) text = "no description";
    snprintf(out, size, "%s (%s)", name, text);
  } else {
    snprintf(out, size, "CUresult %d (unknown error code)", (int)result);
  }
}

int jaxon_cuda_throw(napi_env env, const char *call, CUresult result) {
  char description[512], message[1024];
  const char *name = NULL;
  jaxon_note_result(env, result); // a lost context marks its device lost first
  jaxon_cuda_describe(result, description, sizeof description);
  snprintf(message, sizeof message, "jaxon cuda: %s failed: %s", call, description);
  if (!jaxon_cu || jaxon_cu->cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) name = "CUDA_ERROR_UNKNOWN";
  jaxon_throw_code(env, name, message);
  return 0;
}

static const char *driver_folders[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
    "/usr/local/nvidia/lib64",   "/usr/lib/wsl/lib",
};

/** Whether JAXON_CUDA_EMULATOR asks for the emulated GPU. */
static int emulator_requested(void) {
  const char *value = getenv("JAXON_CUDA_EMULATOR");
  return value && *value && strcmp(value, "0") != 0 && strcmp(value, "false") != 0;
}

/** The emulated GPU's library: beside this addon (build/Release/jaxon_cuda_emulator.node). */
static const char *emulator_library(void) {
  static char path[1100];
  Dl_info info;
  if (!path[0] && dladdr((void *)&emulator_library, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    int folder = slash ? (int)(slash - info.dli_fname) : 1;
    snprintf(path, sizeof path, "%.*s/jaxon_cuda_emulator.node", folder, slash ? info.dli_fname : ".");
  }
  return path;
}

/**
 * The emulator's library when JAXON_CUDA_EMULATOR asks for it (it is a driver and NVRTC pair: a real NVRTC's
 * CUBIN cannot load into it, so it takes precedence over JAXON_LIBCUDA / JAXON_LIBNVRTC), else $name.
 */
static const char *library_override(const char *name) {
  if (emulator_requested()) return emulator_library();
  const char *value = getenv(name);
  return value && *value ? value : NULL;
}

static void load_driver(void) {
  const char *override = library_override("JAXON_LIBCUDA");
  void *lib = NULL;
  char label[1024], first_error[1024] = "";
  if (override && *override) {
    if (emulator_requested()) snprintf(label, sizeof label, "JAXON_CUDA_EMULATOR=1: %.990s", override);
    else snprintf(label, sizeof label, "JAXON_LIBCUDA=%.990s", override);
    lib = dlopen(override, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      snprintf(driver_reason, sizeof driver_reason, "no CUDA driver: %s cannot be loaded: %s", label, dlerror());
      return;
    }
  } else {
    snprintf(label, sizeof label, "libcuda.so.1");
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) snprintf(first_error, sizeof first_error, "%s", dlerror());
    for (size_t i = 0; !lib && i < COUNT(driver_folders); i++) {
      char path[512];
      snprintf(path, sizeof path, "%s/libcuda.so.1", driver_folders[i]);
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (lib) snprintf(label, sizeof label, "%s", path);
    }
    if (!lib) {
      snprintf(driver_reason, sizeof driver_reason,
               "no CUDA driver: libcuda.so.1 is not on the loader's paths (%s) nor in /usr/lib*, "
               "/usr/local/nvidia/lib64 or /usr/lib/wsl/lib (set JAXON_LIBCUDA to its path)",
               first_error);
      return;
    }
  }
  char missing[512];
  int absent = resolve(lib, &driver_state, driver_symbols, COUNT(driver_symbols), missing, sizeof missing);
  if (absent) {
    snprintf(driver_reason, sizeof driver_reason, "%s is not a usable CUDA driver: it lacks %s (%d of %zu entry points)",
             label, missing, absent, COUNT(driver_symbols));
    dlclose(lib);
    return;
  }
  char optional_missing[512];
  resolve(lib, &driver_state, optional_symbols, COUNT(optional_symbols), optional_missing, sizeof optional_missing);
  char graph_missing[512];
  driver_state.has_graphs = resolve(lib, &driver_state, graph_symbols, COUNT(graph_symbols), graph_missing,
                                    sizeof graph_missing) == 0;
  driver_state.has_graph_updates = driver_state.has_graphs &&
                                   resolve(lib, &driver_state, graph_update_symbols, COUNT(graph_update_symbols),
                                           graph_missing, sizeof graph_missing) == 0;
  library_path(lib, "cuInit", label, driver_state.library, sizeof driver_state.library);
  const char *emulator = dlsym(lib, "jaxon_emulated_gpu");
  driver_state.emulated = emulator != NULL;
  if (emulator) snprintf(driver_state.emulator, sizeof driver_state.emulator, "%s", emulator);
  jaxon_cu = &driver_state; // for error names from here on
  CUresult result = driver_state.cuInit(0);
  char description[512];
  if (result != CUDA_SUCCESS) {
    jaxon_cuda_describe(result, description, sizeof description);
    if (result == CUDA_ERROR_STUB_LIBRARY) {
      snprintf(driver_reason, sizeof driver_reason,
               "%s is the CUDA toolkit's stub library, not a driver (cuInit: %s)", driver_state.library, description);
    } else {
      snprintf(driver_reason, sizeof driver_reason, "the CUDA driver %s failed to initialize: cuInit: %s",
               driver_state.library, description);
    }
    jaxon_cu = NULL;
    return;
  }
  driver_state.cuDriverGetVersion(&driver_state.version);
  result = driver_state.cuDeviceGetCount(&driver_state.device_count);
  if (result != CUDA_SUCCESS || driver_state.device_count == 0) {
    if (result != CUDA_SUCCESS) jaxon_cuda_describe(result, description, sizeof description);
    else snprintf(description, sizeof description, "0 devices");
    snprintf(driver_reason, sizeof driver_reason, "the CUDA driver %s (CUDA %d.%d) reports no GPU: %s",
             driver_state.library, driver_state.version / 1000, driver_state.version % 1000 / 10, description);
    jaxon_cu = NULL;
    return;
  }
  snprintf(driver_reason, sizeof driver_reason, "%d CUDA device(s), driver for CUDA %d.%d (%s)",
           driver_state.device_count, driver_state.version / 1000, driver_state.version % 1000 / 10,
           driver_state.library);
}

const jaxon_cuda_driver *jaxon_cuda_driver_load(const char **reason) {
  pthread_once(&driver_once, load_driver);
  if (reason) *reason = driver_reason;
  return jaxon_cu;
}

// Opens an NVRTC candidate; returns 1 when it has every entry point (then `nvrtc_state` is filled).
static int try_nvrtc(const char *path, char *error, size_t error_size) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (!error[0]) snprintf(error, error_size, "%s", dlerror());
    return 0;
  }
  char missing[512];
  int absent = resolve(lib, &nvrtc_state, nvrtc_symbols, COUNT(nvrtc_symbols), missing, sizeof missing);
  if (absent) {
    snprintf(error, error_size, "%s is not a usable NVRTC: it lacks %s", path, missing);
    dlclose(lib);
    return 0;
  }
  library_path(lib, "nvrtcVersion", path, nvrtc_state.library, sizeof nvrtc_state.library);
  return 1;
}

static int try_glob(const char *pattern, char *error, size_t error_size) {
  glob_t found;
  int ok = 0;
  if (glob(pattern, 0, NULL, &found) == 0) {
    for (size_t i = 0; !ok && i < found.gl_pathc; i++) ok = try_nvrtc(found.gl_pathv[i], error, error_size);
  }
  globfree(&found);
  return ok;
}

static int find_nvrtc(int major, char *error, size_t error_size) {
  char pattern[1200];
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t r = 0; r < COUNT(roots); r++) {
    if (!roots[r] || !*roots[r]) continue;
    snprintf(pattern, sizeof pattern, "%s/lib64/libnvrtc.so.%d*", roots[r], major);
    if (try_glob(pattern, error, error_size)) return 1;
    snprintf(pattern, sizeof pattern, "%s/lib/libnvrtc.so.%d*", roots[r], major);
    if (try_glob(pattern, error, error_size)) return 1;
  }
  snprintf(pattern, sizeof pattern, "libnvrtc.so.%d", major);
  if (try_nvrtc(pattern, error, error_size)) return 1;
  if (major == 11 && try_nvrtc("libnvrtc.so.11.2", error, error_size)) return 1;
  const char *home = getenv("HOME");
  char user_prefix[600] = "";
  if (home && *home) snprintf(user_prefix, sizeof user_prefix, "%s/.local", home);
  const char *prefixes[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"), user_prefix, "/usr/local", "/usr",
                            "/opt/conda"};
  for (size_t p = 0; p < COUNT(prefixes); p++) {
    if (!prefixes[p] || !*prefixes[p]) continue;
    snprintf(pattern, sizeof pattern, "%s/lib/python3*/*-packages/nvidia/*/lib/libnvrtc.so.%d*", prefixes[p], major);
    if (try_glob(pattern, error, error_size)) return 1;
  }
  return 0;
}

static void load_nvrtc(void) {
  const char *override = library_override("JAXON_LIBNVRTC");
  char error[1200] = "";
  int found = 0;
  if (override && *override) {
    found = try_nvrtc(override, error, sizeof error);
    if (!found) {
      snprintf(nvrtc_reason, sizeof nvrtc_reason, "no NVRTC: %s=%s cannot be used: %s",
               emulator_requested() ? "JAXON_CUDA_EMULATOR=1, so" : "JAXON_LIBNVRTC", override, error);
      return;
    }
  } else {
    // NVRTC's major must not be newer than the driver's CUDA version.
    const jaxon_cuda_driver *cu = jaxon_cuda_driver_load(NULL);
    int newest = cu ? cu->version / 1000 : 13;
    for (int major = newest; !found && major >= 11; major--) found = find_nvrtc(major, error, sizeof error);
    if (!found) {
      snprintf(nvrtc_reason, sizeof nvrtc_reason,
               "no NVRTC: libnvrtc.so.%d..11 is not in $CUDA_HOME, $CUDA_PATH or /usr/local/cuda (lib64, lib), on "
               "the loader's paths, or in pip's nvidia/*/lib folders (set JAXON_LIBNVRTC to its path)%s%s",
               newest, error[0] ? "; last error: " : "", error);
      return;
    }
  }
  nvrtcResult result = nvrtc_state.nvrtcVersion(&nvrtc_state.major, &nvrtc_state.minor);
  if (result == NVRTC_SUCCESS) result = nvrtc_state.nvrtcGetNumSupportedArchs(&nvrtc_state.num_archs);
  if (result == NVRTC_SUCCESS && nvrtc_state.num_archs > 0 && nvrtc_state.num_archs <= (int)COUNT(nvrtc_state.archs)) {
    result = nvrtc_state.nvrtcGetSupportedArchs(nvrtc_state.archs);
  } else if (result == NVRTC_SUCCESS) {
    nvrtc_state.num_archs = 0;
  }
  if (result != NVRTC_SUCCESS) {
    snprintf(nvrtc_reason, sizeof nvrtc_reason, "NVRTC %s does not answer nvrtcVersion/nvrtcGetSupportedArchs: %s",
             nvrtc_state.library, nvrtc_state.nvrtcGetErrorString(result));
    return;
  }
  snprintf(nvrtc_reason, sizeof nvrtc_reason, "NVRTC %d.%d (%s)", nvrtc_state.major, nvrtc_state.minor,
           nvrtc_state.library);
  nvrtc_loaded = &nvrtc_state;
}

const jaxon_nvrtc *jaxon_nvrtc_load(const char **reason) {
  pthread_once(&nvrtc_once, load_nvrtc);
  if (reason) *reason = nvrtc_reason;
  return nvrtc_loaded;
}

// cudaProbe() -> { available, reason, library, driverVersion, deviceCount, nvrtcLibrary, nvrtcVersion,
//                  nvrtcArchs, graphs, graphUpdates, contextReset, tensorMaps }: whether jaxon can run on CUDA here, and why
//                  not in one line.
static napi_value cuda_probe(napi_env env, napi_callback_info info) {
  const char *driver_why = NULL, *nvrtc_why = NULL;
  const jaxon_cuda_driver *cu = jaxon_cuda_driver_load(&driver_why);
  const jaxon_nvrtc *nvrtc = jaxon_nvrtc_load(&nvrtc_why);
  char reason[4200];
  if (!cu) snprintf(reason, sizeof reason, "%s", driver_why);
  else if (!nvrtc) snprintf(reason, sizeof reason, "%s, but %s", driver_why, nvrtc_why);
  else if (cu->emulated) snprintf(reason, sizeof reason, "jaxon's emulated GPU (JAXON_CUDA_EMULATOR=1; kernels run on the host CPU): %s; %s", driver_why, nvrtc_why);
  else snprintf(reason, sizeof reason, "%s; %s", driver_why, nvrtc_why);
  napi_value result, value, archs;
  JAXON_CHECK(env, napi_create_object(env, &result));
  JAXON_CHECK(env, napi_get_boolean(env, cu && nvrtc, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "available", value));
  jaxon_set_string(env, result, "reason", reason);
  const char *override = library_override("JAXON_LIBCUDA");
  jaxon_set_string(env, result, "library", cu ? cu->library : override && *override ? override : "libcuda.so.1");
  JAXON_CHECK(env, napi_get_boolean(env, cu && cu->emulated, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "emulated", value));
  jaxon_set_string(env, result, "emulator", cu && cu->emulated ? cu->emulator : "");
  jaxon_set_number(env, result, "driverVersion", cu ? cu->version : 0);
  jaxon_set_number(env, result, "deviceCount", cu ? cu->device_count : 0);
  jaxon_set_string(env, result, "nvrtcLibrary", nvrtc ? nvrtc->library : "");
  char version[32] = "";
  if (nvrtc) snprintf(version, sizeof version, "%d.%d", nvrtc->major, nvrtc->minor);
  jaxon_set_string(env, result, "nvrtcVersion", version);
  JAXON_CHECK(env, napi_create_array(env, &archs));
  for (int i = 0; nvrtc && i < nvrtc->num_archs; i++) {
    JAXON_CHECK(env, napi_create_int32(env, nvrtc->archs[i], &value));
    JAXON_CHECK(env, napi_set_element(env, archs, (uint32_t)i, value));
  }
  JAXON_CHECK(env, napi_set_named_property(env, result, "nvrtcArchs", archs));
  JAXON_CHECK(env, napi_get_boolean(env, cu && cu->has_graphs, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "graphs", value));
  JAXON_CHECK(env, napi_get_boolean(env, cu && cu->has_graph_updates, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "graphUpdates", value));
  JAXON_CHECK(env, napi_get_boolean(env, cu && cu->cuDevicePrimaryCtxReset_v2, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "contextReset", value));
  JAXON_CHECK(env, napi_get_boolean(env, cu && cu->cuTensorMapEncodeTiled, &value));
  JAXON_CHECK(env, napi_set_named_property(env, result, "tensorMaps", value));
  return result;
}

void jaxon_init_cuda_driver(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "cudaProbe", cuda_probe);
}
