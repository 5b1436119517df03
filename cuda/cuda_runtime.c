// CUDA devices in the addon: initialization (primary context, the compute and
// two copy streams, the caching allocator over cuMemAlloc and the pinned-host
// pool over cuMemHostAlloc), a pool of reusable events, memory statistics,
// and the reset that makes a lost device usable again (completions and
// noticing a lost context are in cuda_completions.c). See cuda_runtime.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_runtime.h"

#define MAX_DEVICES 16

static jaxon_cuda_device *devices[MAX_DEVICES];
static _Thread_local jaxon_cuda_device *current_device = NULL;
int jaxon_cuda_shutting_down = 0;

jaxon_cuda_device *jaxon_get_device(napi_env env, napi_value value, const char *fn) {
  jaxon_cuda_device *d = jaxon_unwrap_handle(env, value, JAXON_HANDLE_DEVICE, fn, "device");
  return d && jaxon_use_device(env, d) ? d : NULL;
}

int jaxon_use_device(napi_env env, jaxon_cuda_device *d) {
  if (d->lost) return jaxon_throw_lost(env, d, NULL, NULL);
  if (current_device == d) return 1;
  CUresult result = jaxon_cu->cuCtxSetCurrent(d->context);
  if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuCtxSetCurrent", result);
  current_device = d;
  return 1;
}

jaxon_cuda_device *jaxon_current_device(void) {
  return current_device;
}

int jaxon_use_device_quietly(jaxon_cuda_device *d) {
  if (d->lost) return 0;
  if (current_device == d) return 1;
  if (jaxon_cu->cuCtxSetCurrent(d->context) != CUDA_SUCCESS) return 0;
  current_device = d;
  return 1;
}

uint64_t jaxon_stream_id(jaxon_cuda_device *d, int stream) {
  return (uint64_t)(uintptr_t)d->streams[stream];
}

static int stream_index(jaxon_cuda_device *d, uint64_t id) {
  for (int s = 0; s < JAXON_STREAM_COUNT; s++)
    if (jaxon_stream_id(d, s) == id) return s;
  return JAXON_STREAM_COMPUTE;
}

// ---- events ----

static CUresult take_event(jaxon_cuda_device *d, CUevent *event) {
  if (d->num_free_events) {
    *event = d->free_events[--d->num_free_events];
    return CUDA_SUCCESS;
  }
  return jaxon_cu->cuEventCreate(event, CU_EVENT_DISABLE_TIMING);
}

void jaxon_release_event(jaxon_cuda_device *d, CUevent event) {
  if (!event) return;
  if (d->num_free_events == d->cap_free_events) {
    size_t capacity = d->cap_free_events ? d->cap_free_events * 2 : 64;
    CUevent *grown = realloc(d->free_events, capacity * sizeof *grown);
    if (!grown) {
      jaxon_cu->cuEventDestroy_v2(event);
      return;
    }
    d->free_events = grown;
    d->cap_free_events = capacity;
  }
  d->free_events[d->num_free_events++] = event;
}

CUevent jaxon_record_event(napi_env env, jaxon_cuda_device *d, int stream) {
  CUevent event = NULL;
  CUresult result = take_event(d, &event);
  if (result != CUDA_SUCCESS) {
    jaxon_cuda_throw(env, "cuEventCreate", result);
    return NULL;
  }
  result = jaxon_cu->cuEventRecord(event, d->streams[stream]);
  if (result != CUDA_SUCCESS) {
    jaxon_release_event(d, event);
    jaxon_cuda_throw(env, "cuEventRecord", result);
    return NULL;
  }
  return event;
}

// ---- allocator vtables: device memory and pinned host memory ----

static int device_segment_alloc(void *ctx, size_t size, uint64_t *address, char *err, size_t err_size) {
  CUdeviceptr pointer = 0;
  CUresult result = jaxon_cu->cuMemAlloc_v2(&pointer, size);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return JAXON_ALLOC_OUT_OF_MEMORY;
  if (result != CUDA_SUCCESS) {
    jaxon_note_lost(ctx, result); // an allocation can be the first call to meet a lost context
    char description[512];
    jaxon_cuda_describe(result, description, sizeof description);
    snprintf(err, err_size, "cuMemAlloc_v2(%zu bytes) failed: %s", size, description);
    return JAXON_ALLOC_ERROR;
  }
  *address = pointer;
  return JAXON_ALLOC_OK;
}

static void device_segment_free(void *ctx, uint64_t address, size_t size) {
  jaxon_cu->cuMemFree_v2((CUdeviceptr)address);
}

static int host_segment_alloc(void *ctx, size_t size, uint64_t *address, char *err, size_t err_size) {
  void *pointer = NULL;
  CUresult result = jaxon_cu->cuMemHostAlloc(&pointer, size, CU_MEMHOSTALLOC_PORTABLE);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return JAXON_ALLOC_OUT_OF_MEMORY;
  if (result != CUDA_SUCCESS) {
    jaxon_note_lost(ctx, result);
    char description[512];
    jaxon_cuda_describe(result, description, sizeof description);
    snprintf(err, err_size, "cuMemHostAlloc(%zu bytes) failed: %s", size, description);
    return JAXON_ALLOC_ERROR;
  }
  *address = (uint64_t)(uintptr_t)pointer;
  return JAXON_ALLOC_OK;
}

static void host_segment_free(void *ctx, uint64_t address, size_t size) {
  jaxon_cu->cuMemFreeHost((void *)(uintptr_t)address);
}

static int vt_event_record(void *ctx, uint64_t stream, void **event, char *err, size_t err_size) {
  jaxon_cuda_device *d = ctx;
  CUevent e = NULL;
  CUresult result = take_event(d, &e);
  if (result == CUDA_SUCCESS) result = jaxon_cu->cuEventRecord(e, d->streams[stream_index(d, stream)]);
  if (result != CUDA_SUCCESS) {
    char description[512];
    jaxon_cuda_describe(result, description, sizeof description);
    snprintf(err, err_size, "cuEventRecord failed: %s", description);
    if (e) jaxon_release_event(d, e);
    return JAXON_ALLOC_ERROR;
  }
  *event = e;
  return JAXON_ALLOC_OK;
}

static int vt_event_query(void *ctx, void *event) {
  CUresult result = jaxon_cu->cuEventQuery((CUevent)event);
  return result == CUDA_SUCCESS ? 1 : result == CUDA_ERROR_NOT_READY ? 0 : -1;
}

static void vt_event_synchronize(void *ctx, void *event) {
  jaxon_cu->cuEventSynchronize((CUevent)event);
}

static void vt_event_release(void *ctx, void *event) {
  jaxon_release_event(ctx, (CUevent)event);
}

int jaxon_throw_alloc(napi_env env, const char *fn, int status, const char *err) {
  char message[1200];
  snprintf(message, sizeof message, "jaxon cuda: %s: %s", fn, err);
  jaxon_throw_code(env, status == JAXON_ALLOC_OUT_OF_MEMORY ? "RESOURCE_EXHAUSTED" : "CUDA_ALLOCATOR", message);
  return 0;
}

void jaxon_report_external_memory(napi_env env, jaxon_cuda_device *d, int64_t delta) {
  int64_t adjusted = 0;
  d->reported_external_bytes += delta;
  if (!jaxon_cuda_shutting_down && napi_adjust_external_memory(env, delta, &adjusted) == napi_ok)
    d->v8_external_bytes = adjusted;
}

// ---- device handles ----

static void finalize_device(napi_env env, void *data, void *hint) {
  // Devices live for the process: several handles may share one.
}

static void shutdown_hook(void *arg) {
  jaxon_cuda_shutting_down = 1;
}

static int attribute(napi_env env, jaxon_cuda_device *d, CUdevice_attribute which, const char *name, int *out) {
  CUresult result = jaxon_cu->cuDeviceGetAttribute(out, which, d->device);
  if (result != CUDA_SUCCESS) {
    char call[128];
    snprintf(call, sizeof call, "cuDeviceGetAttribute(%s)", name);
    return jaxon_cuda_throw(env, call, result);
  }
  return 1;
}

// What a context holds for jaxon: the three streams, the caching allocator and the pinned-host pool, an empty
// staging ring. Made when the device opens and again after each reset; 0 with a pending exception.
static int start_context(napi_env env, jaxon_cuda_device *d) {
  d->ring_fill = JAXON_RING_CHUNK_BYTES;
  d->ring_next = JAXON_RING_CHUNKS - 1;
  for (int s = 0; s < JAXON_STREAM_COUNT; s++) {
    CUresult result = jaxon_cu->cuStreamCreate(&d->streams[s], CU_STREAM_NON_BLOCKING);
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuStreamCreate", result);
  }
  // The limit is what the device had free when jaxon started, as XLA's
  // allocator does; cuMemAlloc failing first is handled the same way.
  size_t free_bytes = 0, total_bytes = 0;
  CUresult result = jaxon_cu->cuMemGetInfo_v2(&free_bytes, &total_bytes);
  if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuMemGetInfo_v2", result);
  jaxon_alloc_vtable device_vt = {d, device_segment_alloc, device_segment_free, vt_event_record,
                                  vt_event_query, vt_event_synchronize, vt_event_release};
  jaxon_alloc_vtable host_vt = {d, host_segment_alloc, host_segment_free, vt_event_record,
                                vt_event_query, vt_event_synchronize, vt_event_release};
  jaxon_allocator_init(&d->allocator, &device_vt, free_bytes);
  // Exact allocations for checkers: JAXON_CUDA_ALLOCATOR=exact, and the emulated GPU's checks (the address check's
  // redzones sit right after each buffer; the schedule check snapshots and compares the allocations a launch's
  // arguments point into, which must be theirs alone: a carved segment also holds buffers that copies on other
  // streams write meanwhile, which read as a launch whose result depends on its threads' order)
  const char *mode = getenv("JAXON_CUDA_ALLOCATOR"), *check = getenv("JAXON_CUDA_EMULATOR_CHECK");
  d->allocator.exact = (mode && !strcmp(mode, "exact")) ||
                       (jaxon_cu->emulated && check && (!strcmp(check, "address") || !strcmp(check, "schedule")));
  jaxon_host_pool_init(&d->host_pool, &host_vt, 0);
  return 1;
}

static jaxon_cuda_device *open_device(napi_env env, int ordinal) {
  jaxon_cuda_device *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->ordinal = ordinal;
  d->epoch = 1;
  d->env = env;
  CUresult result = jaxon_cu->cuDeviceGet(&d->device, ordinal);
  if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuDeviceGet", result), free(d), NULL;
  jaxon_cu->cuDeviceGetName(d->name, sizeof d->name - 1, d->device);
  if (!attribute(env, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", &d->cc_major) ||
      !attribute(env, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", &d->cc_minor) ||
      !attribute(env, d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", &d->sm_count) ||
      !attribute(env, d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", &d->max_threads_per_block) ||
      !attribute(env, d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
                 &d->max_shared_optin) ||
      !attribute(env, d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE", &d->l2_bytes) ||
      !attribute(env, d, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, "ASYNC_ENGINE_COUNT", &d->async_engines)) {
    free(d);
    return NULL;
  }
  if ((result = jaxon_cu->cuDeviceTotalMem_v2(&d->total_memory, d->device)) != CUDA_SUCCESS ||
      (result = jaxon_cu->cuDevicePrimaryCtxRetain(&d->context, d->device)) != CUDA_SUCCESS) {
    jaxon_cuda_throw(env, d->context ? "cuDeviceTotalMem_v2" : "cuDevicePrimaryCtxRetain", result);
    free(d);
    return NULL;
  }
  if (!jaxon_use_device(env, d) || !start_context(env, d)) return free(d), NULL;
  if (!jaxon_completions_init(env, d)) return free(d), NULL;
  return d;
}

// Forgets what the lost context held: its memory, events and streams are the driver's to destroy in the reset.
static void forget_context(napi_env env, jaxon_cuda_device *d) {
  jaxon_allocator_abandon(&d->allocator);
  for (int i = 0; i < JAXON_RING_CHUNKS; i++) {
    if (d->ring[i].block) jaxon_block_discard(d->ring[i].block);
    memset(&d->ring[i], 0, sizeof d->ring[i]);
  }
  jaxon_host_pool_abandon(&d->host_pool);
  free(d->free_events);
  d->free_events = NULL;
  d->num_free_events = d->cap_free_events = 0;
  memset(d->streams, 0, sizeof d->streams);
  jaxon_report_external_memory(env, d, -d->reported_external_bytes);
}

// Resets the primary context (cuDevicePrimaryCtxReset destroys its memory, streams, events and modules) and
// starts a fresh one; the primary context stays retained once. 0 with a pending exception: the device stays lost.
static int reset_device(napi_env env, jaxon_cuda_device *d) {
  char call[64] = "cuDevicePrimaryCtxReset_v2";
  if (!d->lost) d->lost_reason[0] = '\0'; // reset while it worked
  d->lost = 1;
  jaxon_reject_waiting(env, d, "DEVICE_LOST");
  pthread_mutex_lock(&d->watch_lock); // the watcher must not poll streams that are being destroyed
  forget_context(env, d);
  d->epoch++;
  d->resets++;
  CUresult result = jaxon_cu->cuDevicePrimaryCtxReset_v2(d->device);
  CUcontext context = NULL;
  if (result == CUDA_SUCCESS) {
    snprintf(call, sizeof call, "cuDevicePrimaryCtxRetain");
    result = jaxon_cu->cuDevicePrimaryCtxRetain(&context, d->device);
  }
  if (result == CUDA_SUCCESS) {
    if (jaxon_cu->cuDevicePrimaryCtxRelease_v2) jaxon_cu->cuDevicePrimaryCtxRelease_v2(d->device); // net: one retain
    d->context = context;
    current_device = NULL;
    snprintf(call, sizeof call, "cuCtxSetCurrent");
    result = jaxon_cu->cuCtxSetCurrent(context);
    if (result == CUDA_SUCCESS) current_device = d;
  }
  d->watch_reported = 0;
  pthread_mutex_unlock(&d->watch_lock);
  if (result != CUDA_SUCCESS) {
    char description[512], message[2000];
    jaxon_cuda_describe(result, description, sizeof description);
    snprintf(message, sizeof message, "jaxon cuda: cudaDeviceReset: device %d could not be reset (%s failed: %s) after %s; "
             "restart the process to use it again", d->ordinal, call, description, d->lost_reason);
    jaxon_throw_code(env, "DEVICE_LOST", message);
    return 0;
  }
  d->lost = 0; // start_context calls the driver through the usual paths
  pthread_mutex_lock(&d->watch_lock);
  int started = start_context(env, d);
  pthread_mutex_unlock(&d->watch_lock);
  if (!started) {
    d->lost = 1;
    snprintf(d->lost_reason, sizeof d->lost_reason, "its context failed to start again after a reset");
  }
  return started;
}

static napi_value device_info(napi_env env, jaxon_cuda_device *d) {
  napi_value info, handle, capability, value;
  const char *nvrtc_reason = NULL;
  const jaxon_nvrtc *nvrtc = jaxon_nvrtc_load(&nvrtc_reason);
  JAXON_CHECK(env, napi_create_object(env, &info));
  handle = jaxon_wrap_handle(env, JAXON_HANDLE_DEVICE, d, finalize_device);
  if (!handle) return NULL;
  JAXON_CHECK(env, napi_set_named_property(env, info, "handle", handle));
  jaxon_set_number(env, info, "ordinal", d->ordinal);
  jaxon_set_string(env, info, "name", d->name);
  JAXON_CHECK(env, napi_create_array_with_length(env, 2, &capability));
  JAXON_CHECK(env, napi_create_int32(env, d->cc_major, &value));
  JAXON_CHECK(env, napi_set_element(env, capability, 0, value));
  JAXON_CHECK(env, napi_create_int32(env, d->cc_minor, &value));
  JAXON_CHECK(env, napi_set_element(env, capability, 1, value));
  JAXON_CHECK(env, napi_set_named_property(env, info, "computeCapability", capability));
  jaxon_set_number(env, info, "totalMemory", (double)d->total_memory);
  jaxon_set_number(env, info, "smCount", d->sm_count);
  jaxon_set_number(env, info, "maxThreadsPerBlock", d->max_threads_per_block);
  jaxon_set_number(env, info, "maxSharedMemoryPerBlockOptin", d->max_shared_optin);
  jaxon_set_number(env, info, "l2CacheBytes", d->l2_bytes);
  jaxon_set_number(env, info, "asyncEngineCount", d->async_engines);
  jaxon_set_number(env, info, "driverVersion", jaxon_cu->version);
  char version[32] = "";
  if (nvrtc) snprintf(version, sizeof version, "%d.%d", nvrtc->major, nvrtc->minor);
  jaxon_set_string(env, info, "nvrtcVersion", version);
  jaxon_set_string(env, info, "nvrtcReason", nvrtc_reason);
  return info;
}

// cudaInit(ordinal) -> { handle, ordinal, name, computeCapability: [major, minor], totalMemory, smCount, ... }
static napi_value cuda_init(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t ordinal = 0;
  const char *reason = NULL;
  if (!jaxon_args(env, info, "cudaInit", 1, 1, argv, NULL) || !jaxon_get_i32(env, argv[0], "cudaInit", "ordinal", &ordinal))
    return NULL;
  if (!jaxon_cuda_driver_load(&reason)) {
    char message[2200];
    snprintf(message, sizeof message, "jaxon cuda: cudaInit: CUDA is not available: %s", reason);
    jaxon_throw_code(env, "CUDA_UNAVAILABLE", message);
    return NULL;
  }
  if (ordinal < 0 || ordinal >= jaxon_cu->device_count || ordinal >= MAX_DEVICES) {
    char message[256];
    snprintf(message, sizeof message, "jaxon cuda: cudaInit: ordinal must be in [0, %d), got %d",
             jaxon_cu->device_count, ordinal);
    napi_throw_range_error(env, NULL, message);
    return NULL;
  }
  if (!devices[ordinal]) {
    static int hook_added = 0;
    if (!hook_added) hook_added = napi_add_env_cleanup_hook(env, shutdown_hook, NULL) == napi_ok;
    devices[ordinal] = open_device(env, ordinal);
    if (!devices[ordinal]) return NULL;
  }
  return device_info(env, devices[ordinal]);
}

// cudaMemoryStats(device) -> allocator stats (plus pinnedHost: the pinned-host pool's)
static napi_value memory_stats(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "cudaMemoryStats", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], "cudaMemoryStats");
  if (!d) return NULL;
  jaxon_alloc_stats device_stats = jaxon_alloc_get_stats(&d->allocator);
  jaxon_alloc_stats host_stats = jaxon_host_get_stats(&d->host_pool);
  napi_value result = jaxon_stats_object(env, &device_stats);
  napi_value host = jaxon_stats_object(env, &host_stats);
  if (!result || !host) return NULL;
  JAXON_CHECK(env, napi_set_named_property(env, result, "pinnedHost", host));
  jaxon_set_number(env, result, "bytesReportedToV8", (double)d->reported_external_bytes);
  jaxon_set_number(env, result, "v8ExternalMemory", (double)d->v8_external_bytes);
  return result;
}

// cudaResetPeakMemoryStats(device): the peaks of both pools start again from what is in use now
static napi_value reset_peak_memory_stats(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "cudaResetPeakMemoryStats", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], "cudaResetPeakMemoryStats");
  if (!d) return NULL;
  jaxon_alloc_process_events(&d->allocator);
  jaxon_host_process_events(&d->host_pool);
  jaxon_alloc_reset_peaks(&d->allocator);
  jaxon_host_reset_peaks(&d->host_pool);
  return NULL;
}

// cudaEmptyCache(device) -> bytes returned to the driver (device and pinned host)
static napi_value empty_cache(napi_env env, napi_callback_info info) {
  napi_value argv[1], result;
  if (!jaxon_args(env, info, "cudaEmptyCache", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], "cudaEmptyCache");
  if (!d) return NULL;
  uint64_t released = jaxon_alloc_empty_cache(&d->allocator) + jaxon_host_empty_cache(&d->host_pool);
  JAXON_CHECK(env, napi_create_double(env, (double)released, &result));
  return result;
}

static void resolve_undefined(napi_env env, jaxon_completion *c) {
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_resolve_deferred(env, c->deferred, undefined);
}

// cudaSynchronize(device) -> Promise<void>, settled once all three streams reach this point
static napi_value synchronize(napi_env env, napi_callback_info info) {
  napi_value argv[1], promise;
  if (!jaxon_args(env, info, "cudaSynchronize", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], "cudaSynchronize");
  jaxon_completion *c = d ? calloc(1, sizeof *c) : NULL;
  if (!c) return NULL;
  c->device = d;
  c->finish = resolve_undefined;
  JAXON_CHECK(env, napi_create_promise(env, &c->deferred, &promise));
  if (!jaxon_complete_after(env, c, (1u << JAXON_STREAM_COUNT) - 1)) return NULL;
  return promise;
}

// cudaSynchronizeSync(device): blocks until every stream is idle (dataSync-style callers only)
static napi_value synchronize_sync(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "cudaSynchronizeSync", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], "cudaSynchronizeSync");
  if (!d) return NULL;
  for (int s = 0; s < JAXON_STREAM_COUNT; s++) {
    CUresult result = jaxon_cu->cuStreamSynchronize(d->streams[s]);
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuStreamSynchronize", result), NULL;
  }
  return NULL;
}

// cudaMemGetInfo(device) -> { free, total } as the driver sees them now
static napi_value mem_get_info(napi_env env, napi_callback_info info) {
  napi_value argv[1], result;
  if (!jaxon_args(env, info, "cudaMemGetInfo", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], "cudaMemGetInfo");
  if (!d) return NULL;
  size_t free_bytes = 0, total_bytes = 0;
  CUresult status = jaxon_cu->cuMemGetInfo_v2(&free_bytes, &total_bytes);
  if (status != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuMemGetInfo_v2", status), NULL;
  JAXON_CHECK(env, napi_create_object(env, &result));
  jaxon_set_number(env, result, "free", (double)free_bytes);
  jaxon_set_number(env, result, "total", (double)total_bytes);
  return result;
}

// cudaDeviceReset(device) -> epoch: after a lost context (or while it works: what it held is gone either way),
// resets the primary context and makes the device usable again. Waiting Promises reject; buffers, modules,
// functions and programs made before are stale.
static napi_value device_reset(napi_env env, napi_callback_info info) {
  napi_value argv[1], result;
  if (!jaxon_args(env, info, "cudaDeviceReset", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_unwrap_handle(env, argv[0], JAXON_HANDLE_DEVICE, "cudaDeviceReset", "device");
  if (!d) return NULL;
  if (!jaxon_cu->cuDevicePrimaryCtxReset_v2) {
    char message[2600];
    snprintf(message, sizeof message, "jaxon cuda: cudaDeviceReset: the CUDA driver %s has no cuDevicePrimaryCtxReset_v2, "
             "so device %d cannot be reset%s%s; restart the process to use it again", jaxon_cu->library, d->ordinal,
             d->lost ? " after " : "", d->lost ? d->lost_reason : "");
    jaxon_throw_code(env, "DEVICE_LOST", message);
    return NULL;
  }
  if (!reset_device(env, d)) return NULL;
  JAXON_CHECK(env, napi_create_uint32(env, d->epoch, &result));
  return result;
}

// cudaDeviceStatus(device) -> { lost, reason, epoch, resets }: never throws, whatever the device's state
static napi_value device_status(napi_env env, napi_callback_info info) {
  napi_value argv[1], result, flag;
  if (!jaxon_args(env, info, "cudaDeviceStatus", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_unwrap_handle(env, argv[0], JAXON_HANDLE_DEVICE, "cudaDeviceStatus", "device");
  if (!d) return NULL;
  JAXON_CHECK(env, napi_create_object(env, &result));
  JAXON_CHECK(env, napi_get_boolean(env, d->lost, &flag));
  JAXON_CHECK(env, napi_set_named_property(env, result, "lost", flag));
  jaxon_set_string(env, result, "reason", d->lost_reason);
  jaxon_set_number(env, result, "epoch", d->epoch);
  jaxon_set_number(env, result, "resets", (double)d->resets);
  return result;
}

void jaxon_init_cuda_runtime(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "cudaDeviceReset", device_reset);
  jaxon_export(env, exports, "cudaDeviceStatus", device_status);
  jaxon_export(env, exports, "cudaInit", cuda_init);
  jaxon_export(env, exports, "cudaMemoryStats", memory_stats);
  jaxon_export(env, exports, "cudaEmptyCache", empty_cache);
  jaxon_export(env, exports, "cudaResetPeakMemoryStats", reset_peak_memory_stats);
  jaxon_export(env, exports, "cudaSynchronize", synchronize);
  jaxon_export(env, exports, "cudaSynchronizeSync", synchronize_sync);
  jaxon_export(env, exports, "cudaMemGetInfo", mem_get_info);
}
