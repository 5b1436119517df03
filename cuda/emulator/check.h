// The emulated GPU's checking modes (JAXON_CUDA_EMULATOR_CHECK):
//  - address: kernels are built with AddressSanitizer, device allocations
//    have their exact sizes with poisoned redzones around them, and an
//    out-of-bounds access fails the launch with ASan's report (the line, and
//    the block and thread that made it). The process must have the ASan
//    runtime loaded first (LD_PRELOAD=$(g++ -print-file-name=libasan.so)).
//  - schedule: every launch runs twice from the same memory, with the fibers
//    of each block taking turns in opposite orders; different results mean
//    the kernel depends on an order CUDA does not promise (a missing
//    __syncthreads), and the launch fails naming the first difference.
#ifndef JAXON_EMU_CHECK_H
#define JAXON_EMU_CHECK_H
#include <stddef.h>
#include <string>
#include "executor.h"

namespace jaxon_emu {

enum class CheckMode { None, Address, Schedule };

CheckMode check_mode();

/** Device memory of `bytes` (rounded: the allocator's granule): exact-size with redzones in address mode. */
void *check_allocate(size_t bytes, size_t rounded);
void check_free(void *pointer);

/** Runs a launch, twice in schedule mode; "" or why it failed. */
std::string check_and_execute(Launch &launch);

/** Registers (or forgets) the memory a launch may touch, for the schedule check's snapshots. */
void check_track(void *base, size_t bytes, bool add);

}  // namespace jaxon_emu
#endif
