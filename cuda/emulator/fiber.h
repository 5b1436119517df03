// Fibers for the emulated GPU: one per CUDA thread of a block, switched by a
// dozen instructions of our own (x86-64 and AArch64) rather than ucontext,
// whose signal-mask system call on every switch makes it ~12x slower. Each
// stack is JX_EMU_STACK_SIZE bytes aligned to its size, with the thread's
// jx_emu_thread in its first page and a guard page after it, so an overflow
// faults instead of corrupting the neighbour (emu_abi.h).
#ifndef JAXON_EMU_FIBER_H
#define JAXON_EMU_FIBER_H
#include <stddef.h>
#include <stdint.h>
#include "emu_abi.h"

namespace jaxon_emu {

/** Saved stack pointer of a suspended context (the registers live on its stack). */
struct Context {
  void *sp = nullptr;
};

/** Saves the current context into `from` and resumes `to`. */
extern "C" void jx_emu_switch(Context *from, Context *to);

/** A set of fiber stacks, reserved once per host thread and reused for every block it runs. */
class StackPool {
 public:
  explicit StackPool(unsigned count);
  ~StackPool();
  StackPool(const StackPool &) = delete;
  StackPool &operator=(const StackPool &) = delete;
  unsigned count() const { return count_; }
  /** The base of stack i, where its jx_emu_thread lives. */
  jx_emu_thread *thread(unsigned i) const { return reinterpret_cast<jx_emu_thread *>(base_ + i * JX_EMU_STACK_SIZE); }
  /** Prepares `ctx` so that switching to it calls entry(arg) on stack i; entry must never return. */
  void prepare(unsigned i, Context *ctx, void (*entry)(void *), void *arg) const;
  /** The usable stack range of stack i, for sanitizers. */
  void range(unsigned i, void **bottom, size_t *size) const;

 private:
  char *reserved_ = nullptr;
  size_t reserved_size_ = 0;
  char *base_ = nullptr;
  unsigned count_ = 0;
};

}  // namespace jaxon_emu
#endif
