// Shared by the emulated driver and NVRTC: result code names, loading kernel
// objects from memory, reading their static shared memory size, finding
// the emulation header, and the environment as it was when the emulator
// loaded (see emulator.h).
#include "emulator.h"
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <atomic>
#include <vector>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

namespace {
struct ResultText {
  int code;
  const char *name, *text;
};
const ResultText results[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "dependency created on uncaptured work in another stream"},
};
}  // namespace

const char *jx_emu_error_name(CUresult result) {
  for (const ResultText &r : results)
    if (r.code == (int)result) return r.name;
  return nullptr;
}

const char *jx_emu_error_string(CUresult result) {
  for (const ResultText &r : results)
    if (r.code == (int)result) return r.text;
  return nullptr;
}

namespace jaxon_emu {

void *load_shared_object(const unsigned char *bytes, size_t size, std::string *error) {
  // A file of a name never used before: the loader returns an already loaded object for a known name,
  // so /proc/self/fd/N of a memfd (whose N is reused) would hand back an earlier kernel.
  static std::atomic<unsigned long long> counter{0};
  const char *tmp = jaxon_emu::loaded_env("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/jaxon-kernel-%d-%llu-XXXXXX", tmp && *tmp ? tmp : "/tmp", (int)getpid(), counter.fetch_add(1));
  int fd = mkstemp(path);
  if (fd < 0) {
    *error = std::string("cannot create a file for the kernel object: ") + strerror(errno);
    return nullptr;
  }
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, bytes + written, size - written);
    if (n <= 0) {
      *error = std::string("cannot write the kernel object: ") + strerror(errno);
      close(fd);
      unlink(path);
      return nullptr;
    }
    written += (size_t)n;
  }
  close(fd);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) *error = dlerror();
  // the mapping stays; the address check keeps the file, so AddressSanitizer can name the kernel's lines
  const char *check = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_CHECK");
  if (!handle || !check || strcmp(check, "address") != 0) unlink(path);
  return handle;
}

size_t static_shared_bytes(const unsigned char *elf, size_t size) {
  if (size < sizeof(Elf64_Ehdr) || memcmp(elf, ELFMAG, SELFMAG) != 0 || elf[EI_CLASS] != ELFCLASS64) return 0;
  Elf64_Ehdr header;
  memcpy(&header, elf, sizeof header);
  for (unsigned i = 0; i < header.e_phnum; i++) {
    size_t at = header.e_phoff + (size_t)i * header.e_phentsize;
    if (at + sizeof(Elf64_Phdr) > size) break;
    Elf64_Phdr program;
    memcpy(&program, elf + at, sizeof program);
    if (program.p_type == PT_TLS) return program.p_memsz;
  }
  return 0;
}

static bool has_header(const std::string &folder) {
  struct stat st;
  return stat((folder + "/jaxon_emu.h").c_str(), &st) == 0;
}

std::string header_folder() {
  const char *configured = loaded_env("JAXON_CUDA_EMULATOR_INCLUDE");
  if (configured && *configured) return configured;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&header_folder), &info) && info.dli_fname) {
    std::string library = info.dli_fname;
    std::string folder = library.substr(0, library.rfind('/'));
    // build/Release/jaxon_cuda_emulator.so → cuda/emulator; also a copy beside the library
    for (const char *relative : {"/../../cuda/emulator", "/emulator", "/../cuda/emulator"}) {
      if (has_header(folder + relative)) return folder + relative;
    }
  }
  return "";
}

namespace {

struct Environment {
  std::vector<std::string> entries;  // "NAME=value"
  std::vector<char *> envp;          // into entries, null-terminated
};

// immortal (compiles may still run while the process exits); copied on the thread that loads the emulator, the JS
// thread (the addon dlopens it from an N-API call), so no setenv runs meanwhile
const Environment &environment_at_load() {
  static const Environment &copy = *[] {
    auto *e = new Environment();
    for (char **at = environ; at && *at; at++) e->entries.emplace_back(*at);
    for (std::string &entry : e->entries) e->envp.push_back(&entry[0]);
    e->envp.push_back(nullptr);
    return e;
  }();
  return copy;
}

const bool environment_copied = (environment_at_load(), true);  // at load, not at a compile thread's first use

}  // namespace

const char *loaded_env(const char *name) {
  size_t n = strlen(name);
  for (const std::string &entry : environment_at_load().entries)
    if (entry.size() > n && entry[n] == '=' && entry.compare(0, n, name) == 0) return entry.c_str() + n + 1;
  return nullptr;
}

char *const *loaded_environment() { return environment_at_load().envp.data(); }

}  // namespace jaxon_emu
