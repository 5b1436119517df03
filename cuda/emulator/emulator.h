// What the emulated driver (driver.cc), the emulated NVRTC (nvrtc.cc) and the
// checking modes (check.cc) share: the CUDA types and result codes (from
// jaxon's own cuda_api.h), the image format the emulated NVRTC produces, and
// helpers for the shared objects that hold compiled kernels.
#ifndef JAXON_EMU_EMULATOR_H
#define JAXON_EMU_EMULATOR_H
#include <stddef.h>
#include <string>
#include "../cuda_api.h"

// Result codes the emulator returns beyond those jaxon names in cuda_api.h (values from cuda.h).
enum {
  JX_CUDA_ERROR_INVALID_IMAGE = 200,
  JX_CUDA_ERROR_INVALID_CONTEXT = 201,
  JX_CUDA_ERROR_INVALID_HANDLE = 400,
  JX_CUDA_ERROR_ILLEGAL_STATE = 401,
  JX_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  JX_CUDA_ERROR_LAUNCH_FAILED = 719,
  JX_CUDA_ERROR_NOT_SUPPORTED = 801,
  JX_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  JX_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  JX_CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
};
enum { JX_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1 };

// An emulated "CUBIN": this magic, the shared object's size (8 bytes, little endian), then the shared object.
#define JX_EMU_IMAGE_MAGIC "JXEMUSO1"

const char *jx_emu_error_name(CUresult result);
const char *jx_emu_error_string(CUresult result);

namespace jaxon_emu {

/** dlopens a shared object held in memory (through a memfd); null with `error` set on failure. */
void *load_shared_object(const unsigned char *bytes, size_t size, std::string *error);

/** The bytes of thread-local storage (= static __shared__ memory) a kernel object declares: its PT_TLS size. */
size_t static_shared_bytes(const unsigned char *elf, size_t size);

/** The folder holding jaxon_emu.h and emu_abi.h ($JAXON_CUDA_EMULATOR_INCLUDE, or beside the sources). */
std::string header_folder();

/**
 * A variable of the environment as it was when the emulator loaded (null if unset). Compiles run on threads of
 * their own while the JS thread may change process.env (setenv / unsetenv move and free `environ`), so what runs
 * beside JS reads this copy, never getenv or environ.
 */
const char *loaded_env(const char *name);

/** That environment as an envp array (for posix_spawn). */
char *const *loaded_environment();

}  // namespace jaxon_emu
#endif
