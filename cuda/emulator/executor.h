// The emulated GPU's executor: runs a kernel launch's blocks on a pool of
// host threads, each block as one fiber per CUDA thread (fiber.h) scheduled
// cooperatively on one host thread. Fibers switch only where CUDA threads
// wait for each other (__syncthreads, warp collectives), so a block's
// threads interleave exactly at its synchronization points; a block whose
// threads can no longer all make progress is a deadlock and fails the
// launch, as does a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL), a __trap, or a
// block running past the watchdog's limit. Failures name the kernel, the
// block and the thread.
#ifndef JAXON_EMU_EXECUTOR_H
#define JAXON_EMU_EXECUTOR_H
#include <atomic>
#include <mutex>
#include <string>
#include <vector>
#include "emu_abi.h"

namespace jaxon_emu {

/** The order a block's runnable fibers take turns in: the schedule check runs a launch in both. */
enum class FiberOrder { Forward, Reverse };

struct Launch {
  const jx_emu_kernel *kernel = nullptr;
  jx_emu_dim3 grid{1, 1, 1}, block{1, 1, 1};
  unsigned dynamic_shared = 0;
  std::vector<unsigned char> params;    // argument values, each at its offset
  std::vector<size_t> param_offsets;
  std::vector<void *> arguments;        // params.data() + each offset (set by execute)
  FiberOrder order = FiberOrder::Forward;

  // filled while running
  std::atomic<unsigned long long> next_block{0};
  std::atomic<unsigned long long> finished_blocks{0};
  std::atomic<bool> failed{false};
  std::mutex failure_lock;
  std::string failure;

  unsigned long long total_blocks() const { return (unsigned long long)grid.x * grid.y * grid.z; }
  unsigned threads_per_block() const { return block.x * block.y * block.z; }
};

/** Runs every block of `launch` (on the pool and the calling thread); returns "" or why the launch failed. */
std::string execute(Launch &launch);

/** The function table kernel modules receive (jx_emu_module_init). */
const jx_emu_api *executor_api();

/** "block (x,y,z), thread (x,y,z)" of the kernel thread running on the calling host thread, or "" (for checkers' reports). */
std::string describe_running_thread();

/** Host threads that run blocks (JAXON_CUDA_EMULATOR_THREADS, default: the CPUs). */
unsigned executor_threads();

}  // namespace jaxon_emu
#endif
