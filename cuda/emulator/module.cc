// The emulated driver's modules, functions and launches (see driver.cc):
// modules are shared objects built by the emulated NVRTC (nvrtc.cc) and
// loaded from memory; a launch is checked against the limits a GPU enforces
// (block and grid sizes, __launch_bounds__, shared memory) and runs on the
// executor, on its stream's thread or as a graph's kernel node; a failure
// makes the context's error sticky. JAXON_CUDA_EMULATOR_MUTATE makes one
// launch really fault or hang, for tests of what comes after.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <map>
#include "check.h"
#include "driver.h"

using namespace jaxon_emu;

// ---- modules ----

struct jaxon_emu::ModuleState {
  void *handle = nullptr;
  const jx_emu_module_desc *desc = nullptr;
  unsigned static_shared = 0;
  std::string path;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
  ~ModuleState() {
    if (handle) dlclose(handle);
  }
};

struct CUmod_st {
  std::shared_ptr<ModuleState> state;
  unsigned generation = context_generation();
};

struct CUfunc_st {
  std::weak_ptr<ModuleState> module;
  const jx_emu_kernel *kernel = nullptr;
  unsigned static_shared = 0;
  int max_dynamic_shared = 0;
  unsigned generation = context_generation();
};

// A reset leaves modules' code loaded (a stale function handle then fails a check instead of pointing at
// unmapped code); a real driver unloads them.
EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  REQUIRE_HEALTHY();
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  const unsigned char *bytes = static_cast<const unsigned char *>(image);
  if (memcmp(bytes, JX_EMU_IMAGE_MAGIC, 8) != 0) return (CUresult)JX_CUDA_ERROR_INVALID_IMAGE;
  unsigned long long size;
  memcpy(&size, bytes + 8, sizeof size);
  const unsigned char *object = bytes + 16;
  auto state = std::make_shared<ModuleState>();
  std::string error;
  state->handle = load_shared_object(object, (size_t)size, &error);
  if (!state->handle) {
    if (jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_VERBOSE")) fprintf(stderr, "jaxon cuda emulator: cuModuleLoadData: %s\n", error.c_str());
    return (CUresult)JX_CUDA_ERROR_INVALID_IMAGE;
  }
  auto desc = static_cast<const jx_emu_module_desc *>(dlsym(state->handle, "jx_emu_module"));
  auto init = reinterpret_cast<void (*)(const jx_emu_api *)>(dlsym(state->handle, "jx_emu_module_init"));
  if (!desc || !init || desc->version != JX_EMU_ABI_VERSION) return (CUresult)JX_CUDA_ERROR_INVALID_IMAGE;
  init(executor_api());
  state->desc = desc;
  state->static_shared = (unsigned)static_shared_bytes(object, (size_t)size);
  *module = new CUmod_st{state};
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  REQUIRE_INIT();
  if (!module) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(module);
  delete module;  // queued launches keep the shared object loaded
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  REQUIRE_HEALTHY();
  if (!function || !module || !name) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(module);
  ModuleState &m = *module->state;
  auto known = m.functions.find(name);
  if (known != m.functions.end()) {
    *function = known->second.get();
    return CUDA_SUCCESS;
  }
  for (int i = 0; i < m.desc->num_kernels; i++) {
    if (strcmp(m.desc->kernels[i].name, name) != 0) continue;
    auto f = std::make_unique<CUfunc_st>();
    f->module = module->state;
    f->kernel = &m.desc->kernels[i];
    f->static_shared = m.static_shared;
    f->max_dynamic_shared = kSharedPerBlock - (int)m.static_shared;
    *function = f.get();
    m.functions[name] = std::move(f);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function) {
  REQUIRE_INIT();
  if (!value || !function) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(function);
  switch ((int)attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = function->kernel->max_threads ? function->kernel->max_threads : 1024; break;
    case JX_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = (int)function->static_shared; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = function->max_dynamic_shared; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  REQUIRE_INIT();
  if (!function) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(function);
  if ((int)attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
  if (value < 0 || value + (int)function->static_shared > kSharedOptIn) return CUDA_ERROR_INVALID_VALUE;
  function->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

namespace jaxon_emu {

CUresult check_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, void **params, void **extra, CheckedLaunch *out) {
  if (!f || extra) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(f);
  std::shared_ptr<ModuleState> module = f->module.lock();
  if (!module) return (CUresult)JX_CUDA_ERROR_INVALID_HANDLE;
  unsigned long long threads = (unsigned long long)bx * by * bz;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 || threads > 1024 || gx > 2147483647u ||
      gy > 65535 || gz > 65535)
    return CUDA_ERROR_INVALID_VALUE;
  if (f->kernel->max_threads && threads > (unsigned long long)f->kernel->max_threads) return (CUresult)JX_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if ((int)shared > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  if (f->kernel->num_params > 0 && !params) return CUDA_ERROR_INVALID_VALUE;
  auto launch = std::make_shared<Launch>();
  launch->kernel = f->kernel;
  launch->grid = {gx, gy, gz};
  launch->block = {bx, by, bz};
  launch->dynamic_shared = shared;
  size_t offset = 0;
  launch->param_offsets.reserve(f->kernel->num_params);  // one allocation (launches are on the caller's hot path)
  for (int i = 0; i < f->kernel->num_params; i++) {
    size_t size = f->kernel->param_sizes[i];
    offset = (offset + 15) & ~(size_t)15;
    launch->param_offsets.push_back(offset);
    offset += size;
  }
  launch->params.resize(offset + 16);
  for (int i = 0; i < f->kernel->num_params; i++) {
    if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
    memcpy(launch->params.data() + launch->param_offsets[i], params[i], f->kernel->param_sizes[i]);
  }
  out->spec = launch;
  out->module = module;
  return CUDA_SUCCESS;
}

}  // namespace jaxon_emu

namespace {

/**
 * JAXON_CUDA_EMULATOR_MUTATE=fault:<name> or hang:<name>: the first launch of a kernel whose name contains <name>
 * really fails, for tests of what comes after (jaxon's own kernels cannot be made to fault): `fault` moves every
 * pointer argument 2^40 bytes away, so the kernel's first access is an illegal address; `hang` runs a body that
 * never ends in its place, which the watchdog stops. (`compile:<name>` fails a compile instead: nvrtc.cc.)
 */
struct Mutation {
  enum { None, Fault, Hang } kind = None;
  std::string name;
  std::atomic<bool> spent{false};
};

Mutation &mutation() {
  static Mutation &m = *[] {
    auto *m = new Mutation();
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_MUTATE");
    const char *colon = value ? strchr(value, ':') : nullptr;
    if (!colon) return m;
    std::string kind(value, (size_t)(colon - value));
    m->kind = kind == "fault" ? Mutation::Fault : kind == "hang" ? Mutation::Hang : Mutation::None;
    // compile:<name> is the emulated NVRTC's (nvrtc.cc)
    if (m->kind == Mutation::None && kind != "compile")
      fprintf(stderr, "jaxon cuda emulator: JAXON_CUDA_EMULATOR_MUTATE=%s: the kinds are fault, hang and compile\n", value);
    m->name = colon + 1;
    return m;
  }();
  return m;
}

void never_ends(void **) {
  volatile bool forever = true;
  while (forever) {}
}

void mutate(Launch &run) {
  Mutation &m = mutation();
  if (m.kind == Mutation::None || !strstr(run.kernel->name, m.name.c_str()) || m.spent.exchange(true)) return;
  if (m.kind == Mutation::Hang) {
    auto *hanging = new jx_emu_kernel(*run.kernel);  // named as the kernel it replaces; kept for the process
    hanging->entry = never_ends;
    run.kernel = hanging;
    return;
  }
  for (size_t i = 0; i < run.param_offsets.size(); i++) {
    if (run.kernel->param_sizes[i] != sizeof(uintptr_t)) continue;
    uintptr_t pointer;
    memcpy(&pointer, run.params.data() + run.param_offsets[i], sizeof pointer);
    pointer += (uintptr_t)1 << 40;
    memcpy(run.params.data() + run.param_offsets[i], &pointer, sizeof pointer);
  }
}

}  // namespace

namespace jaxon_emu {

void run_launch(const CheckedLaunch &launch) {
  if (sticky_error() != CUDA_SUCCESS) return;
  // each run gets its own Launch: a graph's launch may replay while an earlier replay still runs
  const Launch &spec = *launch.spec;
  Launch run;
  run.kernel = spec.kernel;
  run.grid = spec.grid;
  run.block = spec.block;
  run.dynamic_shared = spec.dynamic_shared;
  run.params = spec.params;
  run.param_offsets = spec.param_offsets;
  mutate(run);
  std::string failure = check_and_execute(run);
  if (!failure.empty()) set_sticky(failure);
}

}  // namespace jaxon_emu

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, CUstream stream, void **params, void **extra) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  CheckedLaunch launch;
  CUresult result = check_launch(f, gx, gy, gz, bx, by, bz, shared, params, extra, &launch);
  if (result != CUDA_SUCCESS) return result;
  stream_of(stream).push([launch] { run_launch(launch); });
  return CUDA_SUCCESS;
}

/** As cuLaunchHostFunc documents, the function is not called once the context has failed. */
EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *user) {
  REQUIRE_HEALTHY();
  REQUIRE_STREAM(stream);
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  stream_of(stream).push([fn, user] {
    if (sticky_error() == CUDA_SUCCESS) fn(user);
  });
  return CUDA_SUCCESS;
}
