// The emulated CUDA driver: the subset of libcuda that jaxon calls
// (cuda/cuda_api.h), with a real driver's semantics where jaxon can observe
// them. "Device" memory is host memory handed out by address, with a
// capacity (JAXON_CUDA_EMULATOR_MEMORY) and out-of-memory errors; each
// stream is a host thread running its queue in order, so copies, kernels,
// event records and waits really are asynchronous and really are ordered;
// copies from or to pageable host memory are synchronous, as on a GPU;
// modules are shared objects built by the emulated NVRTC (nvrtc.cc) and
// loaded from memory; launches are checked against the limits a GPU enforces
// (block and grid sizes, __launch_bounds__, shared memory) and run on the
// executor. A failed launch makes CUDA_ERROR_LAUNCH_FAILED sticky, with the
// kernel, block, thread and cause in cuGetErrorString's text, until
// cuDevicePrimaryCtxReset. Stream capture records what captured streams are
// given and a graph launch replays it in capture order on one stream.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "check.h"
#include "emulator.h"
#include "executor.h"

using namespace jaxon_emu;

namespace {

constexpr int kWarp = 32;
constexpr int kSharedPerBlock = 48 * 1024;
constexpr int kSharedOptIn = 232448;  // 227 KiB, as on an H100
constexpr const char *kDeviceName = "jaxon emulated GPU (sm_90, runs on the host CPU)";

std::atomic<bool> initialized{false};

// ---- the sticky error ----

// Immortal, like the other state stream threads touch: they run on while the process exits and static
// destructors would free what they use.
std::mutex &sticky_lock = *new std::mutex();
CUresult sticky = CUDA_SUCCESS;
std::string &sticky_text = *new std::string();

CUresult sticky_error() {
  std::lock_guard<std::mutex> guard(sticky_lock);
  return sticky;
}

void set_sticky(const std::string &why) {
  std::lock_guard<std::mutex> guard(sticky_lock);
  if (sticky != CUDA_SUCCESS) return;
  sticky = (CUresult)JX_CUDA_ERROR_LAUNCH_FAILED;
  sticky_text = "unspecified launch failure: " + why;
  if (getenv("JAXON_CUDA_EMULATOR_VERBOSE")) fprintf(stderr, "jaxon cuda emulator: %s\n", sticky_text.c_str());
}

#define REQUIRE_INIT() \
  do { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define REQUIRE_HEALTHY()                        \
  do {                                           \
    REQUIRE_INIT();                              \
    CUresult sticky_now = sticky_error();        \
    if (sticky_now != CUDA_SUCCESS) return sticky_now; \
  } while (0)

// ---- memory ----

struct Allocation {
  size_t size;
  bool pinned;
};

std::mutex &memory_lock = *new std::mutex();
std::map<uintptr_t, Allocation> &allocations = *new std::map<uintptr_t, Allocation>();
size_t device_bytes = 0;

size_t device_capacity() {
  static size_t capacity = [] {
    const char *value = getenv("JAXON_CUDA_EMULATOR_MEMORY");
    if (value && *value) {
      char *end = nullptr;
      double n = strtod(value, &end);
      double scale = 1;
      if (end && (*end == 'G' || *end == 'g')) scale = 1 << 30;
      else if (end && (*end == 'M' || *end == 'm')) scale = 1 << 20;
      if (n > 0) return (size_t)(n * scale);
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t half = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 2 : (size_t)4 << 30;
    return half < ((size_t)16 << 30) ? half : ((size_t)16 << 30);
  }();
  return capacity;
}

/** The allocation holding [p, p + n), or null. */
const Allocation *find_allocation(uintptr_t p, size_t n, uintptr_t *base) {
  auto it = allocations.upper_bound(p);
  if (it == allocations.begin()) return nullptr;
  --it;
  if (p + n > it->first + it->second.size) return nullptr;
  if (base) *base = it->first;
  return &it->second;
}

bool is_device_range(CUdeviceptr p, size_t n) {
  std::lock_guard<std::mutex> guard(memory_lock);
  const Allocation *a = find_allocation((uintptr_t)p, n, nullptr);
  return a && !a->pinned;
}

bool is_pinned_range(const void *p, size_t n) {
  std::lock_guard<std::mutex> guard(memory_lock);
  const Allocation *a = find_allocation((uintptr_t)p, n, nullptr);
  return a && a->pinned;
}

// ---- streams and events ----

// An event's records are numbered 1, 2, ...; a wait waits for the record that was the latest when it was
// queued, and records on different streams can complete out of order (a re-recorded event's later record on a
// fast stream must not release a wait for its earlier record on a slow one).
struct EventState {
  std::mutex lock;
  std::condition_variable changed;
  unsigned long long recorded = 0;
  unsigned long long floor = 0;          // every record up to this one has completed
  std::set<unsigned long long> done;     // completed records above the floor
  long long time_ns = 0;
  CUgraph capture = nullptr;  // recorded in a stream capture: only captured streams may wait on it

  bool completed(unsigned long long target) const { return target <= floor || done.count(target) > 0; }
  void complete(unsigned long long target) {
    done.insert(target);
    while (done.count(floor + 1)) done.erase(++floor);
  }
};

}  // namespace

struct CUevent_st {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
  unsigned flags = 0;
};

struct CUgraph_st {
  std::vector<std::function<void()>> ops;
};

struct CUgraphExec_st {
  std::vector<std::function<void()>> ops;
};

struct CUstream_st {
  std::mutex lock;
  std::condition_variable wake, idle;
  std::deque<std::function<void()>> queue;
  bool busy = false;
  CUgraph capture = nullptr;
  bool capture_origin = false;

  CUstream_st() {
    std::thread([this] { loop(); }).detach();  // streams live as long as the process, like the addon's
  }

  void loop() {
    std::unique_lock<std::mutex> guard(lock);
    for (;;) {
      wake.wait(guard, [this] { return !queue.empty(); });
      std::function<void()> op = std::move(queue.front());
      queue.pop_front();
      busy = true;
      guard.unlock();
      op();
      guard.lock();
      busy = false;
      if (queue.empty()) idle.notify_all();
    }
  }

  /** Queues `op`, or records it into the capture this stream takes part in. */
  void push(std::function<void()> op) {
    std::lock_guard<std::mutex> guard(lock);
    if (capture) {
      capture->ops.push_back(std::move(op));
      return;
    }
    queue.push_back(std::move(op));
    wake.notify_one();
  }

  void drain() {
    std::unique_lock<std::mutex> guard(lock);
    idle.wait(guard, [this] { return queue.empty() && !busy; });
  }
};

namespace {

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

CUstream_st &stream_of(CUstream s) {
  static CUstream_st *null_stream = new CUstream_st();
  return s ? *s : *null_stream;
}

std::vector<CUstream_st *> &all_streams() {
  static std::vector<CUstream_st *> &streams = *new std::vector<CUstream_st *>();
  return streams;
}
std::mutex &streams_lock = *new std::mutex();

// ---- modules ----

struct ModuleState {
  void *handle = nullptr;
  const jx_emu_module_desc *desc = nullptr;
  unsigned static_shared = 0;
  std::string path;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
  ~ModuleState() {
    if (handle) dlclose(handle);
  }
};

}  // namespace

struct CUmod_st {
  std::shared_ptr<ModuleState> state;
};

struct CUfunc_st {
  std::weak_ptr<ModuleState> module;
  const jx_emu_kernel *kernel = nullptr;
  unsigned static_shared = 0;
  int max_dynamic_shared = 0;
};

// ---- the API ----

/** Waits until every stream is idle: freeing memory synchronizes with the device, as the real driver's frees do. */
static void drain_all_streams() {
  std::vector<CUstream_st *> streams;
  {
    std::lock_guard<std::mutex> guard(streams_lock);
    streams = all_streams();
  }
  for (CUstream_st *s : streams) s->drain();
  stream_of(nullptr).drain();
}


#define EXPORT extern "C" __attribute__((visibility("default")))

/**
 * Marks this library as jaxon's emulated GPU for the loader (cuda_driver.c). The version names the kernel
 * objects' ABI and build (emu_abi.h, nvrtc.cc's compiler flags): raise it when either changes, since
 * compiled kernels are cached under it.
 */
EXPORT const char jaxon_emulated_gpu[] = "jaxon emulated GPU, kernel build 1";

EXPORT CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  initialized = true;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = 13000;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **out) {
  const char *name = jx_emu_error_name(error);
  if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
  *out = name;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if ((int)error == JX_CUDA_ERROR_LAUNCH_FAILED) {
    std::lock_guard<std::mutex> guard(sticky_lock);
    if (sticky == error) {
      *out = sticky_text.c_str();  // stays valid until a reset
      return CUDA_SUCCESS;
    }
  }
  const char *text = jx_emu_error_string(error);
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  *out = text;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
  REQUIRE_INIT();
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  REQUIRE_INIT();
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice device) {
  REQUIRE_INIT();
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)len, "%s", kDeviceName);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
  REQUIRE_INIT();
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  switch ((int)attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = kSharedPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = kWarp; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *value = 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = kSharedOptIn; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  REQUIRE_INIT();
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = device_capacity();
  return CUDA_SUCCESS;
}

static struct CUctx_st {
} primary_context;

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  REQUIRE_INIT();
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  *context = &primary_context;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  REQUIRE_INIT();
  return context == nullptr || context == &primary_context ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** Waits for every stream; the sticky error, if any, comes back. */
EXPORT CUresult cuCtxSynchronize() {
  REQUIRE_INIT();
  drain_all_streams();
  return sticky_error();
}

/**
 * Clears the sticky error once every stream is idle. Unlike a real reset,
 * memory, modules and streams survive (jaxon's runtime keeps its handles).
 */
EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  cuCtxSynchronize();
  std::lock_guard<std::mutex> guard(sticky_lock);
  sticky = CUDA_SUCCESS;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  REQUIRE_HEALTHY();
  if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> guard(memory_lock);
  *total = device_capacity();
  *free_bytes = device_capacity() - device_bytes;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  REQUIRE_HEALTHY();
  if (!pointer || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> guard(memory_lock);
  size_t rounded = (bytes + 255) & ~(size_t)255;
  if (rounded > device_capacity() - device_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  void *p = check_allocate(bytes, rounded);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  allocations[(uintptr_t)p] = {check_mode() == CheckMode::Address ? bytes : rounded, false};
  device_bytes += rounded;
  *pointer = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  REQUIRE_INIT();
  drain_all_streams(); // queued copies and kernels may still use the memory
  std::lock_guard<std::mutex> guard(memory_lock);
  auto it = allocations.find((uintptr_t)pointer);
  if (it == allocations.end() || it->second.pinned) return CUDA_ERROR_INVALID_VALUE;
  device_bytes -= (it->second.size + 255) & ~(size_t)255;
  check_free((void *)it->first);
  allocations.erase(it);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags) {
  REQUIRE_HEALTHY();
  if (!pointer || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> guard(memory_lock);
  allocations[(uintptr_t)p] = {bytes, true};
  *pointer = p;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeHost(void *pointer) {
  REQUIRE_INIT();
  drain_all_streams();
  std::lock_guard<std::mutex> guard(memory_lock);
  auto it = allocations.find((uintptr_t)pointer);
  if (it == allocations.end() || !it->second.pinned) return CUDA_ERROR_INVALID_VALUE;
  free(pointer);
  allocations.erase(it);
  return CUDA_SUCCESS;
}

/** JAXON_CUDA_EMULATOR_COPY_DELAY_US: each asynchronous copy waits this long first, so a missing wait on a copy shows. */
static long copy_delay_us() {
  static long delay = [] {
    const char *value = getenv("JAXON_CUDA_EMULATOR_COPY_DELAY_US");
    return value && *value ? strtol(value, nullptr, 10) : 0L;
  }();
  return delay;
}

static void slow_copy() {
  if (copy_delay_us() > 0) usleep((useconds_t)copy_delay_us());
}

// A copy between host and device: asynchronous from pinned memory, synchronous (after the stream's earlier work) otherwise.
static CUresult host_copy(void *dst, const void *src, size_t bytes, CUstream stream, const void *host) {
  if (bytes == 0) return CUDA_SUCCESS;
  CUstream_st &s = stream_of(stream);
  if (is_pinned_range(host, bytes)) {
    s.push([=] {
      slow_copy();
      if (sticky_error() == CUDA_SUCCESS) memcpy(dst, src, bytes);
    });
    return CUDA_SUCCESS;
  }
  if (s.capture) return (CUresult)JX_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  s.drain();
  CUresult now = sticky_error();
  if (now != CUDA_SUCCESS) return now;
  memcpy(dst, src, bytes);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  if (!src || !is_device_range(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return host_copy((void *)(uintptr_t)dst, src, bytes, stream, src);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  if (!dst || !is_device_range(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return host_copy(dst, (const void *)(uintptr_t)src, bytes, stream, dst);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  if (bytes == 0) return CUDA_SUCCESS;
  if (!is_device_range(dst, bytes) || !is_device_range(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  stream_of(stream).push([=] {
    slow_copy();
    if (sticky_error() == CUDA_SUCCESS) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  REQUIRE_HEALTHY();
  if (count == 0) return CUDA_SUCCESS;
  if (!is_device_range(dst, count)) return CUDA_ERROR_INVALID_VALUE;
  stream_of(stream).push([=] {
    if (sticky_error() == CUDA_SUCCESS) memset((void *)(uintptr_t)dst, value, count);
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  REQUIRE_INIT();
  if (!stream) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st *s = new CUstream_st();
  std::lock_guard<std::mutex> guard(streams_lock);
  all_streams().push_back(s);
  *stream = s;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  REQUIRE_INIT();
  CUstream_st &s = stream_of(stream);
  if (s.capture) return (CUresult)JX_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  s.drain();
  return sticky_error();
}

EXPORT CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  REQUIRE_INIT();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  *event = new CUevent_st();
  (*event)->flags = flags;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  REQUIRE_INIT();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  delete event;  // queued records and waits hold the state
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  REQUIRE_HEALTHY();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st &s = stream_of(stream);
  std::shared_ptr<EventState> e = event->state;
  {
    std::lock_guard<std::mutex> guard(s.lock);
    if (s.capture) {  // a dependency inside the graph: replay runs in capture order, so nothing to do there
      std::lock_guard<std::mutex> event_guard(e->lock);
      e->capture = s.capture;
      return CUDA_SUCCESS;
    }
  }
  unsigned long long target;
  {
    std::lock_guard<std::mutex> guard(e->lock);
    target = ++e->recorded;
    e->capture = nullptr;
  }
  s.push([e, target] {
    std::lock_guard<std::mutex> guard(e->lock);
    e->complete(target);
    e->time_ns = now_ns();
    e->changed.notify_all();
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  REQUIRE_HEALTHY();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st &s = stream_of(stream);
  std::shared_ptr<EventState> e = event->state;
  unsigned long long target;
  CUgraph capture;
  {
    std::lock_guard<std::mutex> guard(e->lock);
    target = e->recorded;
    capture = e->capture;
  }
  {
    std::lock_guard<std::mutex> guard(s.lock);
    if (capture) {  // the stream joins the capture the event was recorded in
      if (s.capture && s.capture != capture) return (CUresult)JX_CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
      s.capture = capture;
      return CUDA_SUCCESS;
    }
  }
  if (target == 0) return CUDA_SUCCESS;
  s.push([e, target] {
    std::unique_lock<std::mutex> guard(e->lock);
    e->changed.wait(guard, [&] { return e->completed(target); });
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent event) {
  REQUIRE_HEALTHY();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> guard(event->state->lock);
  return event->state->completed(event->state->recorded) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventSynchronize(CUevent event) {
  REQUIRE_INIT();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<EventState> e = event->state;
  std::unique_lock<std::mutex> guard(e->lock);
  unsigned long long target = e->recorded;
  e->changed.wait(guard, [&] { return e->completed(target); });
  return sticky_error();
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  REQUIRE_HEALTHY();
  if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return (CUresult)JX_CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> a(start->state->lock);
  if (!start->state->completed(start->state->recorded) || start->state->recorded == 0) return CUDA_ERROR_NOT_READY;
  long long t0 = start->state->time_ns;
  std::lock_guard<std::mutex> b(end->state->lock);
  if (!end->state->completed(end->state->recorded) || end->state->recorded == 0) return CUDA_ERROR_NOT_READY;
  *ms = (float)((end->state->time_ns - t0) / 1e6);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  REQUIRE_HEALTHY();
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  const unsigned char *bytes = static_cast<const unsigned char *>(image);
  if (memcmp(bytes, JX_EMU_IMAGE_MAGIC, 8) != 0) return (CUresult)JX_CUDA_ERROR_INVALID_IMAGE;
  unsigned long long size;
  memcpy(&size, bytes + 8, sizeof size);
  const unsigned char *object = bytes + 16;
  auto state = std::make_shared<ModuleState>();
  std::string error;
  state->handle = load_shared_object(object, (size_t)size, &error);
  if (!state->handle) {
    if (getenv("JAXON_CUDA_EMULATOR_VERBOSE")) fprintf(stderr, "jaxon cuda emulator: cuModuleLoadData: %s\n", error.c_str());
    return (CUresult)JX_CUDA_ERROR_INVALID_IMAGE;
  }
  auto desc = static_cast<const jx_emu_module_desc *>(dlsym(state->handle, "jx_emu_module"));
  auto init = reinterpret_cast<void (*)(const jx_emu_api *)>(dlsym(state->handle, "jx_emu_module_init"));
  if (!desc || !init || desc->version != JX_EMU_ABI_VERSION) return (CUresult)JX_CUDA_ERROR_INVALID_IMAGE;
  init(executor_api());
  state->desc = desc;
  state->static_shared = (unsigned)static_shared_bytes(object, (size_t)size);
  *module = new CUmod_st{state};
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  REQUIRE_INIT();
  if (!module) return CUDA_ERROR_INVALID_VALUE;
  delete module;  // queued launches keep the shared object loaded
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  REQUIRE_HEALTHY();
  if (!function || !module || !name) return CUDA_ERROR_INVALID_VALUE;
  ModuleState &m = *module->state;
  auto known = m.functions.find(name);
  if (known != m.functions.end()) {
    *function = known->second.get();
    return CUDA_SUCCESS;
  }
  for (int i = 0; i < m.desc->num_kernels; i++) {
    if (strcmp(m.desc->kernels[i].name, name) != 0) continue;
    auto f = std::make_unique<CUfunc_st>();
    f->module = module->state;
    f->kernel = &m.desc->kernels[i];
    f->static_shared = m.static_shared;
    f->max_dynamic_shared = kSharedPerBlock - (int)m.static_shared;
    *function = f.get();
    m.functions[name] = std::move(f);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function) {
  REQUIRE_INIT();
  if (!value || !function) return CUDA_ERROR_INVALID_VALUE;
  switch ((int)attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = function->kernel->max_threads ? function->kernel->max_threads : 1024; break;
    case JX_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = (int)function->static_shared; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = function->max_dynamic_shared; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  REQUIRE_INIT();
  if (!function) return CUDA_ERROR_INVALID_VALUE;
  if ((int)attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
  if (value < 0 || value + (int)function->static_shared > kSharedOptIn) return CUDA_ERROR_INVALID_VALUE;
  function->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, CUstream stream, void **params, void **extra) {
  REQUIRE_HEALTHY();
  if (!f || extra) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<ModuleState> module = f->module.lock();
  if (!module) return (CUresult)JX_CUDA_ERROR_INVALID_HANDLE;
  unsigned long long threads = (unsigned long long)bx * by * bz;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 || threads > 1024 || gx > 2147483647u ||
      gy > 65535 || gz > 65535)
    return CUDA_ERROR_INVALID_VALUE;
  if (f->kernel->max_threads && threads > (unsigned long long)f->kernel->max_threads) return (CUresult)JX_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if ((int)shared > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  if (f->kernel->num_params > 0 && !params) return CUDA_ERROR_INVALID_VALUE;
  auto launch = std::make_shared<Launch>();
  launch->kernel = f->kernel;
  launch->grid = {gx, gy, gz};
  launch->block = {bx, by, bz};
  launch->dynamic_shared = shared;
  size_t offset = 0;
  for (int i = 0; i < f->kernel->num_params; i++) {
    size_t size = f->kernel->param_sizes[i];
    offset = (offset + 15) & ~(size_t)15;
    launch->param_offsets.push_back(offset);
    offset += size;
  }
  launch->params.resize(offset + 16);
  for (int i = 0; i < f->kernel->num_params; i++) {
    if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
    memcpy(launch->params.data() + launch->param_offsets[i], params[i], f->kernel->param_sizes[i]);
  }
  // each run gets its own Launch: a captured launch may replay while an earlier replay still runs
  std::shared_ptr<const Launch> spec = launch;
  stream_of(stream).push([spec, module] {
    if (sticky_error() != CUDA_SUCCESS) return;
    Launch run;
    run.kernel = spec->kernel;
    run.grid = spec->grid;
    run.block = spec->block;
    run.dynamic_shared = spec->dynamic_shared;
    run.params = spec->params;
    run.param_offsets = spec->param_offsets;
    std::string failure = check_and_execute(run);
    if (!failure.empty()) set_sticky(failure);
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *user) {
  REQUIRE_HEALTHY();
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  stream_of(stream).push([fn, user] { fn(user); });
  return CUDA_SUCCESS;
}

// ---- graphs ----

EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) {
  REQUIRE_HEALTHY();
  if (!stream) return (CUresult)JX_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // the legacy stream cannot be captured
  CUstream_st &s = *stream;
  std::lock_guard<std::mutex> guard(s.lock);
  if (s.capture) return (CUresult)JX_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  s.capture = new CUgraph_st();
  s.capture_origin = true;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  REQUIRE_INIT();
  if (!stream || !graph) return CUDA_ERROR_INVALID_VALUE;
  CUgraph captured;
  {
    std::lock_guard<std::mutex> guard(stream->lock);
    if (!stream->capture || !stream->capture_origin) return (CUresult)JX_CUDA_ERROR_ILLEGAL_STATE;
    captured = stream->capture;
    stream->capture = nullptr;
    stream->capture_origin = false;
  }
  std::lock_guard<std::mutex> guard(streams_lock);
  for (CUstream_st *s : all_streams()) {
    std::lock_guard<std::mutex> stream_guard(s->lock);
    if (s->capture == captured) s->capture = nullptr;
  }
  *graph = captured;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
  REQUIRE_HEALTHY();
  if (!exec || !graph) return CUDA_ERROR_INVALID_VALUE;
  *exec = new CUgraphExec_st{graph->ops};
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  REQUIRE_HEALTHY();
  if (!exec) return CUDA_ERROR_INVALID_VALUE;
  auto ops = std::make_shared<std::vector<std::function<void()>>>(exec->ops);
  stream_of(stream).push([ops] {
    for (auto &op : *ops) op();
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete exec;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  delete graph;
  return CUDA_SUCCESS;
}
