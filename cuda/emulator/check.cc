// The checking modes of the emulated GPU (see check.h).
#include "check.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <map>
#include <mutex>
#include <vector>
#include "emulator.h"

namespace jaxon_emu {

CheckMode check_mode() {
  static CheckMode mode = [] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_CHECK");
    if (!value || !*value || !strcmp(value, "none")) return CheckMode::None;
    if (!strcmp(value, "address")) return CheckMode::Address;
    if (!strcmp(value, "schedule")) return CheckMode::Schedule;
    fprintf(stderr, "jaxon cuda emulator: JAXON_CUDA_EMULATOR_CHECK=%s is not a checking mode (address, schedule, none); no checks\n", value);
    return CheckMode::None;
  }();
  return mode;
}

namespace {

// Immortal: stream threads use them while the process exits (static destructors would free them under them).
std::mutex &tracked_lock = *new std::mutex();
std::map<uintptr_t, size_t> &tracked = *new std::map<uintptr_t, size_t>();  // device allocations by address: what a launch may touch

// ASan's report callback, called on the host thread whose kernel thread made the bad access: the first report
// of a launch, with that block and thread, becomes the launch's failure.
std::mutex &asan_lock = *new std::mutex();
std::string &asan_report = *new std::string();
std::once_flag asan_once;

void on_asan_report(const char *report) {
  std::lock_guard<std::mutex> guard(asan_lock);
  if (asan_report.empty()) asan_report = describe_running_thread() + ": AddressSanitizer:\n" + report;
}

void install_asan_callback() {
  using Callback = void (*)(void (*)(const char *));
  auto set = reinterpret_cast<Callback>(dlsym(RTLD_DEFAULT, "__asan_set_error_report_callback"));
  if (set) set(on_asan_report);
}

}  // namespace

void check_track(void *base, size_t bytes, bool add) {
  std::lock_guard<std::mutex> guard(tracked_lock);
  if (add) tracked[(uintptr_t)base] = bytes;
  else tracked.erase((uintptr_t)base);
}

void *check_allocate(size_t bytes, size_t rounded) {
  void *p;
  if (check_mode() == CheckMode::Address) {
    p = malloc(bytes);  // ASan's malloc: the bytes past the end are a redzone
  } else {
    p = aligned_alloc(256, rounded);
  }
  if (p) check_track(p, check_mode() == CheckMode::Address ? bytes : rounded, true);
  return p;
}

void check_free(void *pointer) {
  check_track(pointer, 0, false);
  free(pointer);
}

static std::string execute_reporting_asan(Launch &launch) {
  {
    std::lock_guard<std::mutex> guard(asan_lock);
    asan_report.clear();
  }
  std::string failure = execute(launch);
  std::lock_guard<std::mutex> guard(asan_lock);
  if (!asan_report.empty() && failure.empty()) failure = std::string("kernel '") + launch.kernel->name + "': " + asan_report;
  return failure;
}

std::string check_and_execute(Launch &launch) {
  switch (check_mode()) {
    case CheckMode::None: return execute(launch);
    case CheckMode::Address: {
      std::call_once(asan_once, install_asan_callback);
      return execute_reporting_asan(launch);
    }
    case CheckMode::Schedule: break;
  }
  // The allocations the arguments point into: snapshot, run forward, keep, restore, run reversed, compare.
  std::vector<std::pair<unsigned char *, size_t>> regions;
  {
    std::lock_guard<std::mutex> guard(tracked_lock);
    for (size_t i = 0; i < launch.param_offsets.size(); i++) {
      if (launch.kernel->param_sizes[i] != sizeof(uintptr_t)) continue;
      uintptr_t value;
      memcpy(&value, launch.params.data() + launch.param_offsets[i], sizeof value);
      auto it = tracked.upper_bound(value);
      if (it == tracked.begin()) continue;
      --it;
      if (value >= it->first + it->second) continue;
      std::pair<unsigned char *, size_t> region{reinterpret_cast<unsigned char *>(it->first), it->second};
      bool seen = false;
      for (auto &r : regions) seen = seen || r.first == region.first;
      if (!seen) regions.push_back(region);
    }
  }
  std::vector<std::vector<unsigned char>> before, forward;
  for (auto &r : regions) before.emplace_back(r.first, r.first + r.second);
  launch.order = FiberOrder::Forward;
  std::string failure = execute(launch);
  if (!failure.empty()) return failure;
  for (size_t k = 0; k < regions.size(); k++) {
    forward.emplace_back(regions[k].first, regions[k].first + regions[k].second);
    memcpy(regions[k].first, before[k].data(), regions[k].second);
  }
  launch.order = FiberOrder::Reverse;
  failure = execute(launch);
  launch.order = FiberOrder::Forward;
  if (!failure.empty()) return "with the threads of each block in reverse order: " + failure;
  for (size_t k = 0; k < regions.size(); k++) {
    const unsigned char *a = forward[k].data(), *b = regions[k].first;
    if (memcmp(a, b, regions[k].second) == 0) continue;
    size_t at = 0;
    while (a[at] == b[at]) at++;
    char message[600];
    snprintf(message, sizeof message,
             "kernel '%s': its result depends on the order the threads of a block run in (a missing __syncthreads or "
             "__syncwarp?): run twice from the same memory, with each block's threads taking turns forward and in "
             "reverse, the allocation at 0x%llx differs at byte %zu (0x%02x and 0x%02x)",
             launch.kernel->name, (unsigned long long)(uintptr_t)regions[k].first, at, a[at], b[at]);
    return message;
  }
  return "";
}

}  // namespace jaxon_emu
