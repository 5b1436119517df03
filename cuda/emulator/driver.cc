// The emulated CUDA driver: the subset of libcuda that jaxon calls
// (cuda/cuda_api.h), with a real driver's semantics where jaxon can observe
// them. "Device" memory is host memory handed out by address, with a
// capacity (JAXON_CUDA_EMULATOR_MEMORY) and out-of-memory errors; each
// stream is a host thread running its queue in order, so copies, kernels,
// event records and waits really are asynchronous and really are ordered;
// copies from or to pageable host memory are synchronous, as on a GPU. A
// failed launch makes CUDA_ERROR_LAUNCH_FAILED sticky, with the kernel,
// block, thread and cause in cuGetErrorString's text: later work is skipped,
// host functions are not called (as cuLaunchHostFunc documents), and every
// call returns the error until cuDevicePrimaryCtxReset, which destroys the
// context's memory, streams, events, modules and graphs (see driver.h).
// Modules and launches are in module.cc, graphs in graph.cc.
#include "driver.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <vector>
#include "check.h"

using namespace jaxon_emu;

namespace jaxon_emu {
std::atomic<bool> initialized{false};
}

namespace {

constexpr int kWarp = 32;
constexpr const char *kDeviceName = "jaxon emulated GPU (sm_90, runs on the host CPU)";

std::atomic<unsigned> generation{1};
std::atomic<int> primary_retains{0};

// ---- the sticky error ----

// Immortal, like the other state stream threads touch: they run on while the process exits and static
// destructors would free what they use.
std::mutex &sticky_lock = *new std::mutex();
CUresult sticky = CUDA_SUCCESS;
std::string &sticky_text = *new std::string();

}  // namespace

namespace jaxon_emu {

CUresult sticky_error() {
  std::lock_guard<std::mutex> guard(sticky_lock);
  return sticky;
}

void set_sticky(const std::string &why) {
  std::lock_guard<std::mutex> guard(sticky_lock);
  if (sticky != CUDA_SUCCESS) return;
  sticky = (CUresult)JX_CUDA_ERROR_LAUNCH_FAILED;
  sticky_text = "unspecified launch failure: " + why;
  if (jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_VERBOSE")) fprintf(stderr, "jaxon cuda emulator: %s\n", sticky_text.c_str());
}

unsigned context_generation() { return generation.load(); }

}  // namespace jaxon_emu


namespace {

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
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_MEMORY");
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

/** Frees every allocation (a context reset). */
void free_all_memory() {
  std::lock_guard<std::mutex> guard(memory_lock);
  for (auto &[address, allocation] : allocations) {
    if (allocation.pinned) free((void *)address);
    else check_free((void *)address);
  }
  allocations.clear();
  device_bytes = 0;
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

  bool completed(unsigned long long target) const { return target <= floor || done.count(target) > 0; }
  void complete(unsigned long long target) {
    done.insert(target);
    while (done.count(floor + 1)) done.erase(++floor);
  }
};

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

std::vector<CUstream_st *> &all_streams() {
  static std::vector<CUstream_st *> &streams = *new std::vector<CUstream_st *>();
  return streams;
}
std::mutex &streams_lock = *new std::mutex();

}  // namespace

struct CUevent_st {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
  unsigned flags = 0;
  unsigned generation = context_generation();
};

CUstream_st::CUstream_st() {
  // The thread ends once the stream is destroyed (or reset) and idle; the object stays, so its handle can be
  // told stale.
  std::thread([this] { loop(); }).detach();
}

void CUstream_st::loop() {
  std::unique_lock<std::mutex> guard(lock);
  for (;;) {
    while (queue.empty() && !retired) {
      sleeping = true;
      wake.wait(guard);
      sleeping = false;
    }
    if (queue.empty()) {
      idle.notify_all();
      return;
    }
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

// Wakes the thread only when it sleeps, and after letting go of the lock (a thread woken under the lock would
// wait for it at once): a launch costs the caller a lock and a push, not a futex wake per op.
void CUstream_st::push(std::function<void()> op) {
  bool asleep;
  {
    std::lock_guard<std::mutex> guard(lock);
    queue.push_back(std::move(op));
    asleep = sleeping;
    sleeping = false;  // one wake is enough for everything pushed before the thread looks
  }
  if (asleep) wake.notify_one();
}

void CUstream_st::drain() {
  std::unique_lock<std::mutex> guard(lock);
  idle.wait(guard, [this] { return queue.empty() && !busy; });
}

namespace jaxon_emu {

CUstream_st &stream_of(CUstream s) {
  static CUstream_st *null_stream = new CUstream_st();
  return s ? *s : *null_stream;
}

bool stale(CUstream s) {
  if (!s) return false;
  std::lock_guard<std::mutex> guard(s->lock);
  return s->retired || s->generation != context_generation();
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

/** JAXON_CUDA_EMULATOR_COPY_DELAY_US: each asynchronous copy waits this long first, so a missing wait on a copy shows. */
static long copy_delay_us() {
  static long delay = [] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_COPY_DELAY_US");
    return value && *value ? strtol(value, nullptr, 10) : 0L;
  }();
  return delay;
}

/** JAXON_CUDA_EMULATOR_LINK_GBPS: copies between pinned host and device memory move at most this many GB/s, so
    whether copies overlap compute shows in time (0 or unset: no limit). */
static double link_gbps() {
  static double gbps = [] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_LINK_GBPS");
    return value && *value ? strtod(value, nullptr) : 0.0;
  }();
  return gbps;
}

void slow_copy(size_t bytes, bool link) {
  double us = (double)copy_delay_us();
  if (link && link_gbps() > 0) us += (double)bytes / (link_gbps() * 1e3);
  if (us >= 1) usleep((useconds_t)us);
}

}  // namespace jaxon_emu

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

/** Ends a stream: its thread finishes what is queued, then stops. */
static void retire(CUstream_st *s) {
  std::lock_guard<std::mutex> guard(s->lock);
  s->retired = true;
  s->wake.notify_all();
}

/**
 * Marks this library as jaxon's emulated GPU for the loader (cuda_driver.c). The version names the kernel
 * objects' ABI and build (emu_abi.h, nvrtc.cc's compiler flags): raise it when either changes, since
 * compiled kernels are cached under it.
 */
EXPORT const char jaxon_emulated_gpu[] = "jaxon emulated GPU, kernel build 4";

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

// The primary context: one handle for the life of the process; a reset empties it.
static struct CUctx_st {
} primary_context;

CUcontext jaxon_emu::primary_context_handle() { return &primary_context; }

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  REQUIRE_INIT();
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  primary_retains++;
  *context = &primary_context;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  int retains = primary_retains.load();
  while (retains > 0 && !primary_retains.compare_exchange_weak(retains, retains - 1)) {}
  return retains > 0 ? CUDA_SUCCESS : (CUresult)JX_CUDA_ERROR_INVALID_CONTEXT;
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
 * Destroys everything the primary context holds, as on a GPU: waits for the streams (a hanging kernel ends
 * by the watchdog), frees all device and pinned memory, makes every stream, event, module, function and graph
 * made so far an invalid handle, and clears the sticky error. The context handle and its retains stay.
 */
EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  drain_all_streams();
  std::vector<CUstream_st *> streams;
  {
    std::lock_guard<std::mutex> guard(streams_lock);
    streams.swap(all_streams());
  }
  for (CUstream_st *s : streams) retire(s);
  generation++;
  free_all_memory();
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

// A copy between host and device: asynchronous from pinned memory, synchronous (after the stream's earlier work) otherwise.
static CUresult host_copy(void *dst, const void *src, size_t bytes, CUstream stream, const void *host) {
  if (bytes == 0) return CUDA_SUCCESS;
  CUstream_st &s = stream_of(stream);
  if (is_pinned_range(host, bytes)) {
    s.push([=] {
      slow_copy(bytes, true);
      if (sticky_error() == CUDA_SUCCESS) memcpy(dst, src, bytes);
    });
    return CUDA_SUCCESS;
  }
  s.drain();
  CUresult now = sticky_error();
  if (now != CUDA_SUCCESS) return now;
  memcpy(dst, src, bytes);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  if (!src || !is_device_range(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return host_copy((void *)(uintptr_t)dst, src, bytes, stream, src);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  if (!dst || !is_device_range(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return host_copy(dst, (const void *)(uintptr_t)src, bytes, stream, dst);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  if (bytes == 0) return CUDA_SUCCESS;
  if (!is_device_range(dst, bytes) || !is_device_range(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  stream_of(stream).push([=] {
    slow_copy(bytes, false);
    if (sticky_error() == CUDA_SUCCESS) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  });
  return CUDA_SUCCESS;
}

/** A copy between any two pinned host or device ranges (the unified address space). */
EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  if (bytes == 0) return CUDA_SUCCESS;
  const bool dst_device = is_device_range(dst, bytes), src_device = is_device_range(src, bytes);
  if ((!dst_device && !is_pinned_range((const void *)(uintptr_t)dst, bytes)) ||
      (!src_device && !is_pinned_range((const void *)(uintptr_t)src, bytes)))
    return CUDA_ERROR_INVALID_VALUE;
  stream_of(stream).push([=] {
    slow_copy(bytes, dst_device != src_device);
    if (sticky_error() == CUDA_SUCCESS) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
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

/** Returns at once; the stream's queued work still runs, then its thread ends. */
EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  REQUIRE_INIT();
  if (!stream) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_STREAM(stream);
  {
    std::lock_guard<std::mutex> guard(streams_lock);
    auto &streams = all_streams();
    streams.erase(std::remove(streams.begin(), streams.end(), stream), streams.end());
  }
  retire(stream);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  REQUIRE_INIT();
  REQUIRE_STREAM(stream);
  stream_of(stream).drain();
  return sticky_error();
}

/** CUDA_SUCCESS once the stream is idle, CUDA_ERROR_NOT_READY while work is queued; the sticky error first. */
EXPORT CUresult cuStreamQuery(CUstream stream) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  CUstream_st &s = stream_of(stream);
  std::lock_guard<std::mutex> guard(s.lock);
  return s.queue.empty() && !s.busy ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
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
  REQUIRE_CURRENT(event);
  delete event;  // queued records and waits hold the state
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  REQUIRE_HEALTHY();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(event);
  REQUIRE_STREAM(stream);
  std::shared_ptr<EventState> e = event->state;
  unsigned long long target;
  {
    std::lock_guard<std::mutex> guard(e->lock);
    target = ++e->recorded;
  }
  stream_of(stream).push([e, target] {
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
  REQUIRE_CURRENT(event);
  REQUIRE_STREAM(stream);
  std::shared_ptr<EventState> e = event->state;
  unsigned long long target;
  {
    std::lock_guard<std::mutex> guard(e->lock);
    target = e->recorded;
  }
  if (target == 0) return CUDA_SUCCESS;
  stream_of(stream).push([e, target] {
    std::unique_lock<std::mutex> guard(e->lock);
    e->changed.wait(guard, [&] { return e->completed(target); });
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent event) {
  REQUIRE_HEALTHY();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(event);
  std::lock_guard<std::mutex> guard(event->state->lock);
  return event->state->completed(event->state->recorded) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventSynchronize(CUevent event) {
  REQUIRE_INIT();
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(event);
  std::shared_ptr<EventState> e = event->state;
  std::unique_lock<std::mutex> guard(e->lock);
  unsigned long long target = e->recorded;
  e->changed.wait(guard, [&] { return e->completed(target); });
  return sticky_error();
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  REQUIRE_HEALTHY();
  if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(start);
  REQUIRE_CURRENT(end);
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return (CUresult)JX_CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> a(start->state->lock);
  if (!start->state->completed(start->state->recorded) || start->state->recorded == 0) return CUDA_ERROR_NOT_READY;
  long long t0 = start->state->time_ns;
  std::lock_guard<std::mutex> b(end->state->lock);
  if (!end->state->completed(end->state->recorded) || end->state->recorded == 0) return CUDA_ERROR_NOT_READY;
  *ms = (float)((end->state->time_ns - t0) / 1e6);
  return CUDA_SUCCESS;
}
