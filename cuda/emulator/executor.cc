// The emulated GPU's executor (see executor.h).
#include "executor.h"
#include "emulator.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <thread>
#include "fiber.h"

namespace jaxon_emu {

namespace {

constexpr unsigned kMaxThreads = 1024;
enum FiberState : unsigned char { Ready, AtBarrier, AtWarp, Done };

struct WarpRendezvous {
  unsigned pending = 0, expect = 0;
  unsigned long long values[32] = {};
  unsigned long long *outs[32] = {};
};

struct Worker;

struct BlockState {
  Worker *worker = nullptr;
  Launch *launch = nullptr;
  unsigned threads = 0, live = 0, arrived = 0;
  /** yields since a thread last did anything else (arrived somewhere or exited): a livelock when it grows huge */
  unsigned long long idle_yields = 0;
  WarpRendezvous warps[kMaxThreads / 32];
};

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

// One per host thread that runs blocks: its fibers, their stacks, and the way out of a failing block.
struct Worker {
  pthread_t thread = pthread_self();
  StackPool stacks{kMaxThreads};
  Context scheduler;
  Context fibers[kMaxThreads];
  FiberState state[kMaxThreads] = {};
  BlockState block;
  unsigned current = 0;
  sigjmp_buf escape;
  volatile sig_atomic_t in_kernel = 0;
  std::atomic<long long> block_started{0};
  std::atomic<bool> watchdog_fired{false};
  char failure[1024] = "";
  std::unique_ptr<unsigned char[]> dynamic_shared;
  unsigned dynamic_shared_size = 0;
  std::unique_ptr<char[]> alternate_stack;
};

thread_local Worker *tls_worker = nullptr;

// Immortal (never destroyed): the watchdog thread reads them until the process ends, also while it exits and
// static destructors run, which would otherwise free them under it.
std::mutex &workers_lock = *new std::mutex();
std::vector<Worker *> &all_workers = *new std::vector<Worker *>();
std::once_flag signals_once;
struct sigaction previous_actions[65];
int watchdog_signal() { return SIGRTMIN + 4; }

double watchdog_seconds() {
  static double seconds = [] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_WATCHDOG_S");
    double s = value && *value ? atof(value) : 120.0;
    return s > 0 ? s : 120.0;
  }();
  return seconds;
}

const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "signal";
  }
}

void describe_thread(Worker *w, char *out, size_t size) {
  const jx_emu_thread *t = w->stacks.thread(w->current);
  snprintf(out, size, "block (%u,%u,%u), thread (%u,%u,%u)", t->block_idx.x, t->block_idx.y, t->block_idx.z,
           t->thread_idx.x, t->thread_idx.y, t->thread_idx.z);
}

void on_signal(int sig, siginfo_t *info, void *context) {
  Worker *w = tls_worker;
  if (!w || !w->in_kernel) {
    if (sig == watchdog_signal()) return;  // the block finished meanwhile
    struct sigaction &old = previous_actions[sig];
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
      old.sa_sigaction(sig, info, context);
    } else if (old.sa_handler == SIG_IGN) {
      return;
    } else if (old.sa_handler == SIG_DFL) {
      signal(sig, SIG_DFL);  // the faulting instruction runs again and takes the default action
    } else {
      old.sa_handler(sig);
    }
    return;
  }
  char where[160];
  describe_thread(w, where, sizeof where);
  if (sig == watchdog_signal()) {
    snprintf(w->failure, sizeof w->failure,
             "%s: the block ran longer than the watchdog's %.0f s (JAXON_CUDA_EMULATOR_WATCHDOG_S): an endless loop, or a thread waiting for another block",
             where, watchdog_seconds());
  } else {
    uintptr_t address = (uintptr_t)info->si_addr;
    const char *access = "access";
#if defined(__x86_64__)
    if (sig == SIGSEGV) access = (((ucontext_t *)context)->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
#endif
    bool overflow = false;
    void *bottom;
    size_t stack_size;
    w->stacks.range(w->current, &bottom, &stack_size);
    uintptr_t guard_end = (uintptr_t)bottom, guard_start = guard_end - (uintptr_t)sysconf(_SC_PAGESIZE);
    if (address >= guard_start && address < guard_end) overflow = true;
    if (overflow) {
      snprintf(w->failure, sizeof w->failure, "%s: stack overflow (%s): the thread used more than its %zu KiB of stack", where,
               signal_name(sig), stack_size / 1024);
    } else if (sig == SIGSEGV || sig == SIGBUS) {
      snprintf(w->failure, sizeof w->failure, "%s: illegal memory %s at address 0x%llx (%s)", where, access,
               (unsigned long long)address, signal_name(sig));
    } else {
      snprintf(w->failure, sizeof w->failure, "%s: %s (%s) at 0x%llx", where,
               sig == SIGFPE ? "arithmetic exception" : "illegal instruction", signal_name(sig), (unsigned long long)address);
    }
  }
  siglongjmp(w->escape, 2);
}

void install_signals() {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, watchdog_signal()}) sigaction(sig, &action, &previous_actions[sig]);
  std::thread([] {
    for (;;) {
      usleep(200000);
      long long limit = (long long)(watchdog_seconds() * 1e9), now = now_ns();
      std::lock_guard<std::mutex> guard(workers_lock);
      for (Worker *w : all_workers) {
        long long started = w->block_started.load();
        if (started && now - started > limit && !w->watchdog_fired.exchange(true)) pthread_kill(w->thread, watchdog_signal());
      }
    }
  }).detach();
}

Worker *current_worker() {
  if (tls_worker) return tls_worker;
  std::call_once(signals_once, install_signals);
  Worker *w = new Worker();  // lives as long as its thread; threads that run blocks live as long as the process
  constexpr size_t kAltStack = 64 * 1024;
  w->alternate_stack.reset(new char[kAltStack]);
  stack_t ss;
  ss.ss_sp = w->alternate_stack.get();
  ss.ss_size = kAltStack;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
  tls_worker = w;
  std::lock_guard<std::mutex> guard(workers_lock);
  all_workers.push_back(w);
  return w;
}

[[noreturn]] void fail_block(Worker *w, const char *message) {
  char where[160];
  describe_thread(w, where, sizeof where);
  snprintf(w->failure, sizeof w->failure, "%s: %s", where, message);
  siglongjmp(w->escape, 1);
}

void release_barrier(Worker *w) {
  BlockState &b = w->block;
  for (unsigned i = 0; i < b.threads; i++)
    if (w->state[i] == AtBarrier) w->state[i] = Ready;
  b.arrived = 0;
}

// ---- the API kernel modules call ----

void api_syncthreads(jx_emu_thread *self) {
  BlockState *b = static_cast<BlockState *>(self->block);
  Worker *w = b->worker;
  b->idle_yields = 0;
  if (++b->arrived == b->live) {
    release_barrier(w);
    return;
  }
  w->state[self->linear] = AtBarrier;
  jx_emu_switch(&w->fibers[self->linear], &w->scheduler);
}

void api_warp_exchange(jx_emu_thread *self, unsigned mask, unsigned long long value, unsigned long long *out) {
  BlockState *b = static_cast<BlockState *>(self->block);
  Worker *w = b->worker;
  WarpRendezvous &r = b->warps[self->warp];
  unsigned bit = 1u << self->lane;
  b->idle_yields = 0;
  char message[200];
  if (!(mask & bit)) {
    snprintf(message, sizeof message, "a warp collective's mask 0x%08x does not include the calling lane %u", mask, self->lane);
    fail_block(w, message);
  }
  if (r.pending == 0) {
    r.expect = mask;
  } else if (r.expect != mask) {
    snprintf(message, sizeof message, "lanes of warp %u meet at a warp collective with different masks (0x%08x, 0x%08x)",
             self->warp, r.expect, mask);
    fail_block(w, message);
  }
  r.values[self->lane] = value;
  r.outs[self->lane] = out;
  r.pending |= bit;
  if (r.pending == r.expect) {
    for (unsigned l = 0; l < 32; l++) {
      if (!(r.expect & (1u << l))) continue;
      memcpy(r.outs[l], r.values, sizeof r.values);
      if (l != self->lane) w->state[self->warp * 32 + l] = Ready;
    }
    r.pending = 0;
    return;
  }
  w->state[self->linear] = AtWarp;
  jx_emu_switch(&w->fibers[self->linear], &w->scheduler);
}

void api_trap(jx_emu_thread *self, const char *message) {
  fail_block(static_cast<BlockState *>(self->block)->worker, message);
}

void api_yield(jx_emu_thread *self) {
  BlockState *b = static_cast<BlockState *>(self->block);
  Worker *w = b->worker;
  // every live thread yielding ten thousand times over without anyone arriving anywhere: nothing will change
  if (++b->idle_yields > 10000ull * b->live) {
    fail_block(w, "livelock: every thread of the block spins (an mbarrier wait) and none arrives anywhere, so none can go on");
  }
  jx_emu_switch(&w->fibers[self->linear], &w->scheduler);  // stays Ready: the scheduler runs the others first
}

void api_progress(jx_emu_thread *self) { static_cast<BlockState *>(self->block)->idle_yields = 0; }

const jx_emu_api the_api = {JX_EMU_ABI_VERSION, api_syncthreads, api_warp_exchange, api_trap, api_yield, api_progress};

// ---- running a block ----

void fiber_main(void *arg) {
  Worker *w = static_cast<Worker *>(arg);
  unsigned me = w->current;
  BlockState &b = w->block;
  Launch &launch = *b.launch;
  launch.kernel->entry(launch.arguments.data());
  w->state[me] = Done;
  b.live--;
  b.idle_yields = 0;
  if (b.arrived > 0 && b.arrived == b.live) release_barrier(w);  // exited threads count as arrived
  jx_emu_switch(&w->fibers[me], &w->scheduler);
  abort();  // a finished fiber is never resumed
}

void schedule(Worker *w) {
  BlockState &b = w->block;
  const bool reverse = b.launch->order == FiberOrder::Reverse;
  for (;;) {
    bool ran = false;
    for (unsigned k = 0; k < b.threads; k++) {
      unsigned i = reverse ? b.threads - 1 - k : k;
      if (w->state[i] != Ready) continue;
      w->current = i;
      jx_emu_switch(&w->scheduler, &w->fibers[i]);
      ran = true;
    }
    if (b.live == 0) return;
    if (!ran) {
      unsigned barrier = 0, warp = 0;
      for (unsigned i = 0; i < b.threads; i++) {
        if (w->state[i] == AtBarrier) barrier++;
        if (w->state[i] == AtWarp) warp++;
      }
      char message[300];
      snprintf(message, sizeof message,
               "deadlock: %u thread(s) wait at __syncthreads and %u at a warp collective, and no thread can go on "
               "(a barrier or shuffle not reached by every thread it waits for: divergent code, or lanes that exited)",
               barrier, warp);
      for (unsigned i = 0; i < b.threads; i++)
        if (w->state[i] != Done) { w->current = i; break; }
      fail_block(w, message);
    }
  }
}

void record_failure(Launch &launch, const std::string &message) {
  std::lock_guard<std::mutex> guard(launch.failure_lock);
  if (launch.failure.empty()) launch.failure = message;
  launch.failed = true;
}

void run_block(Worker *w, Launch &launch, unsigned long long index) {
  const jx_emu_dim3 grid = launch.grid, dim = launch.block;
  const jx_emu_dim3 block_idx = {(unsigned)(index % grid.x), (unsigned)(index / grid.x % grid.y),
                                 (unsigned)(index / ((unsigned long long)grid.x * grid.y))};
  const unsigned threads = launch.threads_per_block();
  if (launch.dynamic_shared > w->dynamic_shared_size) {
    w->dynamic_shared.reset(new unsigned char[launch.dynamic_shared + 128]);
    w->dynamic_shared_size = launch.dynamic_shared;
  }
  unsigned char *shared = w->dynamic_shared ? reinterpret_cast<unsigned char *>(((uintptr_t)w->dynamic_shared.get() + 127) & ~(uintptr_t)127) : nullptr;
  BlockState &b = w->block;
  b.worker = w;
  b.launch = &launch;
  b.threads = b.live = threads;
  b.arrived = 0;
  b.idle_yields = 0;
  for (unsigned k = 0; k < (threads + 31) / 32; k++) b.warps[k].pending = 0;
  for (unsigned i = 0; i < threads; i++) {
    jx_emu_thread *t = w->stacks.thread(i);
    t->thread_idx = {i % dim.x, i / dim.x % dim.y, i / (dim.x * dim.y)};
    t->block_idx = block_idx;
    t->block_dim = dim;
    t->grid_dim = grid;
    t->linear = i;
    t->lane = i % 32;
    t->warp = i / 32;
    t->dynamic_shared = shared;
    t->block = &b;
    t->async_count = 0;
    t->async_groups = 0;
    t->wgmma_count = 0;
    t->wgmma_groups = 0;
    w->state[i] = Ready;
    w->stacks.prepare(i, &w->fibers[i], fiber_main, w);
  }
  w->failure[0] = '\0';
  w->watchdog_fired = false;
  w->block_started = now_ns();
  if (sigsetjmp(w->escape, 1) == 0) {
    w->in_kernel = 1;
    schedule(w);
  }
  w->in_kernel = 0;
  w->block_started = 0;
  if (w->failure[0]) record_failure(launch, std::string("kernel '") + launch.kernel->name + "': " + w->failure);
}

void run_blocks(Launch &launch) {
  Worker *w = current_worker();
  const unsigned long long total = launch.total_blocks();
  for (;;) {
    unsigned long long index = launch.next_block.fetch_add(1);
    if (index >= total) return;
    if (!launch.failed) run_block(w, launch, index);
    launch.finished_blocks.fetch_add(1);
  }
}

// ---- the pool ----

struct Pool {
  std::mutex lock;
  std::condition_variable work, done;
  std::deque<Launch *> queue;
  std::vector<Launch *> active;  // launches a pool thread is working on
  unsigned threads = 0;

  void start(unsigned count) {
    threads = count;
    for (unsigned i = 0; i < count; i++) std::thread([this] { loop(); }).detach();
  }

  void loop() {
    std::unique_lock<std::mutex> guard(lock);
    for (;;) {
      work.wait(guard, [this] { return !queue.empty(); });
      Launch *launch = queue.front();
      active.push_back(launch);
      guard.unlock();
      run_blocks(*launch);
      guard.lock();
      active.erase(std::find(active.begin(), active.end(), launch));
      if (!queue.empty() && queue.front() == launch) queue.pop_front();
      done.notify_all();
    }
  }
};

Pool &pool() {
  static Pool *p = [] {
    Pool *created = new Pool();
    if (executor_threads() > 1) created->start(executor_threads() - 1);
    return created;
  }();
  return *p;
}

}  // namespace

unsigned executor_threads() {
  static unsigned count = [] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_THREADS");
    long n = value && *value ? strtol(value, nullptr, 10) : (long)std::thread::hardware_concurrency();
    return (unsigned)(n < 1 ? 1 : n > 256 ? 256 : n);
  }();
  return count;
}

const jx_emu_api *executor_api() { return &the_api; }

std::string describe_running_thread() {
  Worker *w = tls_worker;
  if (!w || !w->in_kernel) return "";
  char where[160];
  describe_thread(w, where, sizeof where);
  return where;
}

std::string execute(Launch &launch) {
  launch.next_block = 0;
  launch.finished_blocks = 0;
  launch.failed = false;
  launch.failure.clear();
  launch.arguments.resize(launch.param_offsets.size());
  for (size_t i = 0; i < launch.arguments.size(); i++) launch.arguments[i] = launch.params.data() + launch.param_offsets[i];
  const unsigned long long total = launch.total_blocks();
  Pool &p = pool();
  if (total > 1 && p.threads > 0) {
    std::unique_lock<std::mutex> guard(p.lock);
    p.queue.push_back(&launch);
    p.work.notify_all();
  }
  run_blocks(launch);
  if (total > 1 && p.threads > 0) {
    std::unique_lock<std::mutex> guard(p.lock);
    auto it = std::find(p.queue.begin(), p.queue.end(), &launch);
    if (it != p.queue.end()) p.queue.erase(it);
    p.done.wait(guard, [&] {
      return launch.finished_blocks.load() >= total && std::find(p.active.begin(), p.active.end(), &launch) == p.active.end();
    });
  }
  return launch.failure;
}

}  // namespace jaxon_emu
