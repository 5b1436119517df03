// Fiber stacks and the context switch (see fiber.h).
#include "fiber.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

namespace jaxon_emu {

// Stack layout: [0, page): jx_emu_thread; [page, 2 page): guard; [2 page, size): the stack, growing down.
static_assert(sizeof(jx_emu_thread) <= 4096, "jx_emu_thread must fit the first page of a fiber's stack");
static size_t page_size() {
  static size_t size = (size_t)sysconf(_SC_PAGESIZE);
  return size;
}

StackPool::StackPool(unsigned count) : count_(count) {
  reserved_size_ = (size_t)(count + 1) * JX_EMU_STACK_SIZE;
  void *p = mmap(nullptr, reserved_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    perror("jaxon cuda emulator: mmap of fiber stacks");
    abort();
  }
  reserved_ = static_cast<char *>(p);
  base_ = reinterpret_cast<char *>(((uintptr_t)reserved_ + JX_EMU_STACK_SIZE - 1) & ~(JX_EMU_STACK_SIZE - 1));
  for (unsigned i = 0; i < count; i++) mprotect(base_ + i * JX_EMU_STACK_SIZE + page_size(), page_size(), PROT_NONE);
}

StackPool::~StackPool() {
  if (reserved_) munmap(reserved_, reserved_size_);
}

void StackPool::range(unsigned i, void **bottom, size_t *size) const {
  *bottom = base_ + i * JX_EMU_STACK_SIZE + 2 * page_size();
  *size = JX_EMU_STACK_SIZE - 2 * page_size();
}

#if defined(__x86_64__)
// Callee-saved rbp, rbx, r12-r15, then MXCSR and the x87 control word.
asm(R"(
  .text
  .globl jx_emu_switch
  .hidden jx_emu_switch
  .type jx_emu_switch, @function
jx_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq (%rsi), %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size jx_emu_switch, .-jx_emu_switch

  .globl jx_emu_fiber_start
  .hidden jx_emu_fiber_start
  .type jx_emu_fiber_start, @function
jx_emu_fiber_start:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size jx_emu_fiber_start, .-jx_emu_fiber_start
  .section .note.GNU-stack,"",@progbits
  .text
)");
extern "C" void jx_emu_fiber_start();

void StackPool::prepare(unsigned i, Context *ctx, void (*entry)(void *), void *arg) const {
  uintptr_t top = (uintptr_t)(base_ + (i + 1) * JX_EMU_STACK_SIZE);
  uint64_t *sp = reinterpret_cast<uint64_t *>(top - 16);
  *--sp = (uint64_t)(uintptr_t)&jx_emu_fiber_start;  // ret target; rsp is 16-aligned after the ret
  *--sp = 0;                                          // rbp
  *--sp = 0;                                          // rbx
  *--sp = (uint64_t)(uintptr_t)entry;                 // r12
  *--sp = (uint64_t)(uintptr_t)arg;                   // r13
  *--sp = 0;                                          // r14
  *--sp = 0;                                          // r15
  uint32_t mxcsr;
  uint16_t fpcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  *--sp = (uint64_t)mxcsr | ((uint64_t)fpcw << 32);
  ctx->sp = sp;
}
#elif defined(__aarch64__)
// Callee-saved x19-x30 and d8-d15 (160 bytes), then the stack pointer in `from`.
asm(R"(
  .text
  .globl jx_emu_switch
  .hidden jx_emu_switch
  .type jx_emu_switch, %function
jx_emu_switch:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x9, sp
  str x9, [x0]
  ldr x9, [x1]
  mov sp, x9
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size jx_emu_switch, .-jx_emu_switch

  .globl jx_emu_fiber_start
  .hidden jx_emu_fiber_start
  .type jx_emu_fiber_start, %function
jx_emu_fiber_start:
  mov x0, x20
  blr x19
  brk #0
  .size jx_emu_fiber_start, .-jx_emu_fiber_start
  .section .note.GNU-stack,"",%progbits
  .text
)");
extern "C" void jx_emu_fiber_start();

void StackPool::prepare(unsigned i, Context *ctx, void (*entry)(void *), void *arg) const {
  uintptr_t top = (uintptr_t)(base_ + (i + 1) * JX_EMU_STACK_SIZE) - 16;
  uint64_t *sp = reinterpret_cast<uint64_t *>(top - 160);
  memset(sp, 0, 160);
  sp[0] = (uint64_t)(uintptr_t)entry;               // x19
  sp[1] = (uint64_t)(uintptr_t)arg;                 // x20
  sp[11] = (uint64_t)(uintptr_t)&jx_emu_fiber_start; // x30: ret target
  ctx->sp = sp;
}
#else
#error "jaxon's emulated GPU has a context switch for x86-64 and AArch64 only"
#endif

}  // namespace jaxon_emu
