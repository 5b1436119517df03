// What the emulated driver's files share (driver.cc: context, memory,
// streams and events; module.cc: modules and launches; graph.cc: graphs):
// the sticky error, the context's generation, streams, and checked launches.
//
// A context reset (cuDevicePrimaryCtxReset) destroys what the context held,
// as on a GPU: memory is freed, and streams, events, modules, functions,
// graphs and executable graphs made before it are invalid handles
// (CUDA_ERROR_INVALID_HANDLE) afterwards. Their objects are kept, never
// freed, so a stale handle is an error the caller sees, not a crash.
#ifndef JAXON_EMU_DRIVER_H
#define JAXON_EMU_DRIVER_H
#include <stdint.h>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include "emulator.h"
#include "executor.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace jaxon_emu {

constexpr int kSharedPerBlock = 48 * 1024;
constexpr int kSharedOptIn = 232448;  // 227 KiB, as on an H100

extern std::atomic<bool> initialized;

/** CUDA_SUCCESS, or the sticky error a failed launch left (until a reset). */
CUresult sticky_error();
void set_sticky(const std::string &why);

/** The context's generation: raised by each reset; handles carry the one they were made in. */
unsigned context_generation();

/** The device's primary context (the only one). */
CUcontext primary_context_handle();

/** [p, p + n) lies in one device allocation / one pinned host allocation. */
bool is_device_range(CUdeviceptr p, size_t n);
bool is_pinned_range(const void *p, size_t n);

/** JAXON_CUDA_EMULATOR_COPY_DELAY_US before each asynchronous copy, so a missing wait on a copy shows. */
/** Before an asynchronous copy of `bytes`: JAXON_CUDA_EMULATOR_COPY_DELAY_US, plus, for a copy between pinned
    host and device memory (`link`), the time JAXON_CUDA_EMULATOR_LINK_GBPS gives it (a PCIe/NVLink-C2C stand-in). */
void slow_copy(size_t bytes, bool link);

struct ModuleState;

/** A launch checked against the function and the device's limits, ready to queue (kernel node or stream). */
struct CheckedLaunch {
  std::shared_ptr<const Launch> spec;
  std::shared_ptr<ModuleState> module;  // keeps the kernel's code loaded while it is queued
};

/** Checks a launch as cuLaunchKernel does and copies its parameters; CUDA_SUCCESS or the error it returns. */
CUresult check_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, void **params, void **extra, CheckedLaunch *out);

/** Runs a checked launch on the calling (stream) thread, unless the context already failed. */
void run_launch(const CheckedLaunch &launch);

}  // namespace jaxon_emu

struct CUstream_st {
  std::mutex lock;
  std::condition_variable wake, idle;
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool sleeping = false;  // the thread waits for work: a push wakes it (otherwise it finds the work when it looks)
  bool retired = false;  // destroyed, or made before a reset: its thread ends once the queue is empty
  unsigned generation = jaxon_emu::context_generation();

  CUstream_st();
  void loop();
  /** Queues `op`. */
  void push(std::function<void()> op);
  /** Waits until everything queued so far has run. */
  void drain();
};

#define REQUIRE_INIT() \
  do { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
/** The sticky error, if any, is every call's answer. */
#define REQUIRE_HEALTHY()                                  \
  do {                                                     \
    REQUIRE_INIT();                                        \
    CUresult sticky_now = sticky_error();                  \
    if (sticky_now != CUDA_SUCCESS) return sticky_now;     \
  } while (0)
/** A handle made before the last reset is invalid. */
#define REQUIRE_CURRENT(handle) \
  do { if ((handle)->generation != context_generation()) return (CUresult)JX_CUDA_ERROR_INVALID_HANDLE; } while (0)
#define REQUIRE_STREAM(stream) \
  do { if (stale(stream)) return (CUresult)JX_CUDA_ERROR_INVALID_HANDLE; } while (0)

namespace jaxon_emu {

/** The stream a handle names (the legacy stream for null). */
CUstream_st &stream_of(CUstream s);
/** A handle made before the last reset, or destroyed. */
bool stale(CUstream s);

}  // namespace jaxon_emu
#endif
