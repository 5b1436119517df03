// The emulated NVRTC: compiles a CUDA translation unit with the host C++
// compiler (JAXON_CUDA_EMULATOR_CXX, default g++) and the emulation header
// (jaxon_emu.h, precompiled once per compiler, flags and header content into
// the cache folder), into a shared object that the emulated driver loads.
// The source is the one a GPU gets; only two things are added around it:
// `extern __shared__` arrays become the block's dynamic shared memory, and
// each `extern "C" __global__` kernel gets an entry in the module's table
// (name, parameter sizes, __launch_bounds__). Options are checked like
// NVRTC's; the compiler's messages are the program log; a kernel whose
// static shared memory exceeds 48 KiB fails to compile, as ptxas does.
// Compiles run on the addon's threads while the JS thread may change
// process.env, so the compiler is spawned with the environment as it was when
// the emulator loaded (loaded_environment), never with the live `environ`.
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>
#include "check.h"
#include "emulator.h"

struct _nvrtcProgram {
  std::string source, name;
  std::vector<std::pair<std::string, std::string>> headers;  // include name, content
  std::string log;
  std::string image;  // JX_EMU_IMAGE_MAGIC + size + shared object
};

namespace {

using jaxon_emu::CheckMode;
using jaxon_emu::check_mode;

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_file(const std::string &path, const std::string &content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  return (bool)out;
}

void make_folders(const std::string &path) {
  for (size_t at = 1; at != std::string::npos; at = path.find('/', at + 1)) mkdir(path.substr(0, at).c_str(), 0755);
  mkdir(path.c_str(), 0755);
}

void remove_tree(const std::string &path) {
  nftw(path.c_str(), [](const char *file, const struct stat *, int, struct FTW *) { return remove(file), 0; }, 16, FTW_DEPTH | FTW_PHYS);
}

unsigned long long fnv1a(const std::string &text, unsigned long long hash = 1469598103934665603ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string hex(unsigned long long value) {
  char out[17];
  snprintf(out, sizeof out, "%016llx", value);
  return out;
}

/**
 * The file a program name runs: as given when it names a path, else the first executable of that name on the loaded
 * environment's PATH ("" if none). posix_spawnp would search the live environment's PATH.
 */
std::string find_program(const std::string &name) {
  if (name.find('/') != std::string::npos) return name;
  const char *path = jaxon_emu::loaded_env("PATH");
  std::string folders = path ? path : "/bin:/usr/bin";
  for (size_t start = 0; start <= folders.size();) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    std::string file = (end > start ? folders.substr(start, end - start) : ".") + "/" + name;
    if (access(file.c_str(), X_OK) == 0) return file;
    start = end + 1;
  }
  return "";
}

/** Starts argv[0] with the loaded environment and these file actions; 0 or an errno. */
int spawn(const std::vector<std::string> &args, const posix_spawn_file_actions_t *actions, pid_t *pid) {
  std::string file = find_program(args[0]);
  if (file.empty()) return ENOENT;
  std::vector<char *> argv;
  for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  return posix_spawn(pid, file.c_str(), actions, nullptr, argv.data(), jaxon_emu::loaded_environment());
}

/** What a program prints on stdout, and on stderr too with `errors` ("" if it could not start). */
std::string command_output(const std::vector<std::string> &args, bool errors) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";  // close-on-exec: compilers spawned meanwhile must not hold it open
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  if (errors) posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  else posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int started = spawn(args, &actions, &pid);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  if (started == 0) {
    char chunk[4096];
    for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) != 0;) {
      if (n > 0) out.append(chunk, (size_t)n);
      else if (errno != EINTR) break;
    }
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
  }
  close(fds[0]);
  return out;
}

/** Runs argv with stdout and stderr into `log`; the exit status (-1 if it could not start). */
int run(const std::vector<std::string> &args, std::string *log, const std::string &log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int started = spawn(args, &actions, &pid);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) {
    *log = "cannot run " + args[0] + ": " + strerror(started) + " (set JAXON_CUDA_EMULATOR_CXX to a C++17 compiler)";
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  *log = read_file(log_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string compiler() {
  const char *configured = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_CXX");
  return configured && *configured ? configured : "g++";
}

std::vector<std::string> base_flags() {
  const char *opt = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_OPT");
  std::vector<std::string> flags = {"-std=c++17", opt && *opt ? opt : "-O1", "-fPIC", "-w", "-ffp-contract=off",
                                    "-fno-strict-aliasing", "-fwrapv", "-fno-math-errno", "-fvisibility=hidden",
                                    "-fno-exceptions", "-fno-rtti"};
  if (check_mode() == CheckMode::Address) {
    for (const char *f : {"-fsanitize=address", "-fsanitize-recover=address", "-fno-omit-frame-pointer", "-g"}) flags.push_back(f);
  }
  return flags;
}

std::string cache_folder() {
  const char *configured = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_CACHE");
  if (configured && *configured) return configured;
  const char *cache = jaxon_emu::loaded_env("JAXON_CACHE_DIR");
  if (cache && *cache) return std::string(cache) + "/cuda-emulator";
  const char *home = jaxon_emu::loaded_env("HOME");
  if (home && *home) return std::string(home) + "/.cache/jaxon/cuda-emulator";
  return "/tmp/jaxon-cuda-emulator";
}

/**
 * The objects a lean link of a kernel module names itself: the C runtime's init/fini pieces, libgcc (the arithmetic
 * helpers a kernel may call, e.g. 128-bit division) and libm (so the module needs it, whoever opens it), as full
 * paths; empty where the compiler cannot name one of them. The compiler driver's default link searches for and reads
 * libstdc++, libm, libc and libgcc_s and loads the LTO plugin: 0.042 of a small kernel's 0.12 CPU-seconds of compile
 * (gcc 12); this link takes 0.016. libc is in every process that opens a module, its symbols bound at dlopen.
 */
const std::vector<std::string> &lean_link_objects() {
  // immortal, as precompiled_header's state
  static std::mutex &lock = *new std::mutex();
  static std::vector<std::string> &objects = *new std::vector<std::string>();
  static bool tried = false;
  std::lock_guard<std::mutex> guard(lock);
  if (tried) return objects;
  tried = true;
  const char *env = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_LEAN_LINK");
  if ((env && strcmp(env, "0") == 0) || check_mode() == CheckMode::Address) return objects;  // the sanitizer runtime links by default
  std::vector<std::string> found;
  for (const char *name : {"crti.o", "crtbeginS.o", "libgcc.a", "libm.so.6", "crtendS.o", "crtn.o"}) {
    std::string path = command_output({compiler(), std::string("-print-file-name=") + name}, false);
    while (!path.empty() && isspace((unsigned char)path.back())) path.pop_back();
    struct stat st;
    if (path.empty() || path[0] != '/' || stat(path.c_str(), &st) != 0) return objects;  // not found: the default link
    found.push_back(path);
  }
  objects = found;
  return objects;
}

/** A folder holding jaxon_emu.h and its precompiled form for these flags (built once); "" if none could be made. */
std::string precompiled_header(std::string *why) {
  // immortal: compiles on the addon's threads may still run while the process exits
  static std::mutex &lock = *new std::mutex();
  static std::string &folder = *new std::string(), &reason = *new std::string();
  static bool tried = false;
  std::lock_guard<std::mutex> guard(lock);
  if (tried) {
    *why = reason;
    return folder;
  }
  tried = true;
  std::string sources = jaxon_emu::header_folder();
  std::string header = read_file(sources + "/jaxon_emu.h"), abi = read_file(sources + "/emu_abi.h"),
              tensor = read_file(sources + "/jaxon_emu_tensor.h");
  if (sources.empty() || header.empty() || abi.empty() || tensor.empty()) {
    reason = "the emulation header jaxon_emu.h was not found (set JAXON_CUDA_EMULATOR_INCLUDE to cuda/emulator)";
    *why = reason;
    return "";
  }
  std::string version_log = command_output({compiler(), "-dumpfullversion", "-dumpversion"}, true);
  std::string identity = header + abi + tensor + compiler() + version_log;
  for (const std::string &f : base_flags()) identity += " " + f;
  std::string target = cache_folder() + "/pch-" + hex(fnv1a(identity));
  struct stat st;
  if (stat((target + "/jaxon_emu.h.gch").c_str(), &st) == 0) {
    folder = target;
    return folder;
  }
  make_folders(cache_folder());
  char scratch[4096];
  snprintf(scratch, sizeof scratch, "%s.tmp-%d-%lx", target.c_str(), (int)getpid(), (unsigned long)pthread_self());
  make_folders(scratch);
  std::string dir = scratch;
  write_file(dir + "/jaxon_emu.h", header);
  write_file(dir + "/emu_abi.h", abi);
  write_file(dir + "/jaxon_emu_tensor.h", tensor);
  std::vector<std::string> args = {compiler()};
  for (const std::string &f : base_flags()) args.push_back(f);
  for (const char *a : {"-x", "c++-header"}) args.push_back(a);
  args.push_back(dir + "/jaxon_emu.h");
  args.push_back("-o");
  args.push_back(dir + "/jaxon_emu.h.gch");
  std::string log;
  if (run(args, &log, dir + "/log") != 0) {
    reason = "precompiling jaxon_emu.h failed: " + log;
    remove_tree(dir);
    // still usable without a precompiled header
    folder = "";
    *why = reason;
    return folder;
  }
  if (rename(dir.c_str(), target.c_str()) != 0) remove_tree(dir);  // another process got there first
  folder = target;
  return folder;
}

bool is_identifier_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/** The source with comments and string/char literals blanked (same length), for scanning declarations. */
std::string code_only(const std::string &s) {
  std::string out = s;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') out[i++] = ' ';
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t end = s.find("*/", i + 2);
      end = end == std::string::npos ? s.size() : end + 2;
      for (; i < end; i++) if (out[i] != '\n') out[i] = ' ';
    } else if (s[i] == '"' || s[i] == '\'') {
      char quote = s[i++];
      while (i < s.size() && s[i] != quote) {
        if (s[i] == '\\') i++;
        i++;
      }
      i++;
    } else {
      i++;
    }
  }
  return out;
}

size_t skip_space(const std::string &s, size_t i) {
  while (i < s.size() && isspace((unsigned char)s[i])) i++;
  return i;
}

bool word_at(const std::string &s, size_t i, const char *word) {
  size_t n = strlen(word);
  return s.compare(i, n, word) == 0 && (i == 0 || !is_identifier_char(s[i - 1])) && (i + n >= s.size() || !is_identifier_char(s[i + n]));
}

struct KernelEntry {
  std::string name;
  int max_threads;
};

/** `extern "C" __global__ void [__launch_bounds__(n, ...)] name(` declarations. */
std::vector<KernelEntry> find_kernels(const std::string &source) {
  std::string code = code_only(source);
  std::vector<KernelEntry> kernels;
  for (size_t at = code.find("__global__"); at != std::string::npos; at = code.find("__global__", at + 10)) {
    if (!word_at(code, at, "__global__")) continue;
    // extern "C" right before (the literal is blanked in `code`, so read it from `source`)
    size_t back = at;
    while (back > 0 && isspace((unsigned char)source[back - 1])) back--;
    if (back < 3 || source.compare(back - 3, 3, "\"C\"") != 0) continue;
    size_t i = skip_space(code, at + 10);
    if (!word_at(code, i, "void")) continue;
    i = skip_space(code, i + 4);
    int max_threads = 0;
    if (word_at(code, i, "__launch_bounds__")) {
      i = skip_space(code, i + 17);
      if (code[i] != '(') continue;
      max_threads = (int)strtol(code.c_str() + i + 1, nullptr, 0);
      size_t close = code.find(')', i);
      if (close == std::string::npos) continue;
      i = skip_space(code, close + 1);
    }
    size_t start = i;
    while (i < code.size() && is_identifier_char(code[i])) i++;
    if (i == start) continue;
    std::string name = code.substr(start, i - start);
    if (code[skip_space(code, i)] != '(') continue;
    kernels.push_back({name, max_threads});
  }
  return kernels;
}

/** `extern __shared__ [__align__(n)] T name[];` → a macro reading the block's dynamic shared memory. */
std::string rewrite_dynamic_shared(const std::string &source) {
  std::string out = source, code = code_only(source);
  for (size_t at = code.rfind("__shared__"); at != std::string::npos; at = at ? code.rfind("__shared__", at - 1) : std::string::npos) {
    size_t back = at;
    while (back > 0 && isspace((unsigned char)code[back - 1])) back--;
    size_t extern_at = back >= 6 ? back - 6 : std::string::npos;
    if (extern_at == std::string::npos || !word_at(code, extern_at, "extern")) {
      if (back >= 6 && code.compare(back - 1, 1, ")") == 0) {  // extern __align__(n) __shared__
        size_t open = code.rfind("__align__", back);
        if (open != std::string::npos) {
          size_t e = open;
          while (e > 0 && isspace((unsigned char)code[e - 1])) e--;
          if (e >= 6 && word_at(code, e - 6, "extern")) extern_at = e - 6;
        }
      }
      if (extern_at == std::string::npos || !word_at(code, extern_at, "extern")) continue;
    }
    size_t semicolon = code.find(';', at);
    if (semicolon == std::string::npos) continue;
    std::string declaration = code.substr(at + 10, semicolon - at - 10);
    size_t bracket = declaration.rfind('[');
    if (bracket == std::string::npos) continue;
    std::string before = declaration.substr(0, bracket);
    while (!before.empty() && isspace((unsigned char)before.back())) before.pop_back();
    size_t name_start = before.size();
    while (name_start > 0 && is_identifier_char(before[name_start - 1])) name_start--;
    std::string name = before.substr(name_start), type = before.substr(0, name_start);
    size_t align = type.find("__align__");
    if (align != std::string::npos) type.erase(align, type.find(')', align) + 1 - align);
    if (name.empty()) continue;
    std::string replacement = "\n#define " + name + " (reinterpret_cast<" + type + " *>(jx_emu_self()->dynamic_shared))\n";
    out.replace(extern_at, semicolon + 1 - extern_at, replacement);
  }
  return out;
}

std::string module_table(const std::vector<KernelEntry> &kernels) {
  std::string out = "\n// ---- added by jaxon's emulated NVRTC: the module's kernel table ----\n";
  for (size_t i = 0; i < kernels.size(); i++)
    out += "static void jx_emu_entry_" + std::to_string(i) + "(void **p) { jx_emu_invoke(" + kernels[i].name + ", p); }\n";
  out += "extern \"C\" __attribute__((visibility(\"default\"))) const jx_emu_kernel jx_emu_kernels[] = {";
  for (size_t i = 0; i < kernels.size(); i++) {
    const std::string &n = kernels[i].name;
    out += (i ? ", " : "") + std::string("{\"") + n + "\", jx_emu_entry_" + std::to_string(i) + ", jx_emu_arity(" + n +
           "), jx_emu_param_sizes(" + n + "), " + std::to_string(kernels[i].max_threads) + "}";
  }
  if (kernels.empty()) out += "{nullptr, nullptr, 0, nullptr, 0}";
  out += "};\nextern \"C\" __attribute__((visibility(\"default\"))) const jx_emu_module_desc jx_emu_module = {" +
         std::to_string(JX_EMU_ABI_VERSION) + ", " + std::to_string(kernels.size()) + ", jx_emu_kernels};\n";
  return out;
}

/**
 * JAXON_CUDA_EMULATOR_MUTATE=compile:<name>: the first compile of a program defining a kernel whose name contains
 * <name> fails, as one whose compiler could not run, for tests of what a failed compile leaves behind (module.cc
 * reads the variable's fault and hang kinds).
 */
const KernelEntry *compile_mutated(const std::vector<KernelEntry> &kernels) {
  static const std::string &name = *[] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_MUTATE");
    return new std::string(value && strncmp(value, "compile:", 8) == 0 ? value + 8 : "");
  }();
  static std::atomic<bool> spent{false};
  if (name.empty()) return nullptr;
  for (const KernelEntry &k : kernels)
    if (k.name.find(name) != std::string::npos) return spent.exchange(true) ? nullptr : &k;
  return nullptr;
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT const char *nvrtcGetErrorString(nvrtcResult result) {
  switch ((int)result) {
    case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
    case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
    default: return "NVRTC_ERROR unknown";
  }
}

EXPORT nvrtcResult nvrtcVersion(int *major, int *minor) {
  if (!major || !minor) return NVRTC_ERROR_INVALID_INPUT;
  *major = 13;
  *minor = 0;
  return NVRTC_SUCCESS;
}

static const int supported_archs[] = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};

EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int *count) {
  if (!count) return NVRTC_ERROR_INVALID_INPUT;
  *count = (int)(sizeof supported_archs / sizeof supported_archs[0]);
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetSupportedArchs(int *archs) {
  if (!archs) return NVRTC_ERROR_INVALID_INPUT;
  memcpy(archs, supported_archs, sizeof supported_archs);
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *program, const char *source, const char *name, int num_headers,
                                      const char *const *headers, const char *const *include_names) {
  if (!program || !source || num_headers < 0 || (num_headers > 0 && (!headers || !include_names))) return NVRTC_ERROR_INVALID_INPUT;
  auto *p = new _nvrtcProgram();
  p->source = source;
  p->name = name && *name ? name : "default_program";
  for (int i = 0; i < num_headers; i++) p->headers.emplace_back(include_names[i], headers[i] ? headers[i] : "");
  *program = p;
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *program) {
  if (!program || !*program) return NVRTC_ERROR_INVALID_PROGRAM;
  delete *program;
  *program = nullptr;
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int num_options, const char *const *options) {
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (num_options < 0 || (num_options > 0 && !options)) return NVRTC_ERROR_INVALID_INPUT;
  p->log.clear();
  p->image.clear();
  std::vector<std::string> extra;
  for (int i = 0; i < num_options; i++) {
    std::string o = options[i] ? options[i] : "";
    auto value_of = [&](const char *long_form, const char *short_form, std::string *value) {
      for (const char *form : {long_form, short_form}) {
        if (!form) continue;
        size_t n = strlen(form);
        if (o.compare(0, n, form) == 0 && o.size() > n && o[n] == '=') { *value = o.substr(n + 1); return true; }
      }
      return false;
    };
    std::string v;
    if (value_of("--gpu-architecture", "-arch", &v)) {
      if (v.compare(0, 3, "sm_") != 0 && v.compare(0, 8, "compute_") != 0) {
        p->log = "nvrtc: error: invalid value for --gpu-architecture (-arch): " + v + "\n";
        return NVRTC_ERROR_INVALID_OPTION;
      }
    } else if (value_of("--std", "-std", &v)) {
      if (v != "c++03" && v != "c++11" && v != "c++14" && v != "c++17" && v != "c++20") {
        p->log = "nvrtc: error: invalid value for --std: " + v + "\n";
        return NVRTC_ERROR_INVALID_OPTION;
      }
      extra.push_back("-std=" + (v == "c++20" ? v : std::string("c++17")));
    } else if (value_of("--define-macro", "-D", &v) || (o.compare(0, 2, "-D") == 0 && (v = o.substr(2), true))) {
      extra.push_back("-D" + v);
    } else if (value_of("--include-path", "-I", &v) || (o.compare(0, 2, "-I") == 0 && (v = o.substr(2), true))) {
      extra.push_back("-I" + v);
    } else if (value_of("--fmad", "-fmad", &v) || value_of("--ftz", "-ftz", &v) || value_of("--prec-div", "-prec-div", &v) ||
               value_of("--prec-sqrt", "-prec-sqrt", &v) || value_of("--maxrregcount", "-maxrregcount", &v) ||
               value_of("--dopt", "-dopt", &v)) {
      // code-generation choices of the GPU compiler: the emulator's arithmetic is IEEE either way
    } else if (o == "--device-debug" || o == "-G" || o == "--generate-line-info" || o == "-lineinfo" || o == "-default-device" ||
               o == "--use_fast_math" || o == "-use_fast_math" || o == "--restrict" || o == "-restrict" || o == "-w" ||
               o == "--disable-warnings" || o == "--extra-device-vectorization" || o == "-extra-device-vectorization") {
    } else {
      p->log = "nvrtc: error: unrecognized option " + o + "\n";
      return NVRTC_ERROR_INVALID_OPTION;
    }
  }
  std::string pch_why;
  std::string pch = precompiled_header(&pch_why);
  std::string headers = jaxon_emu::header_folder();
  if (headers.empty()) {
    p->log = "jaxon cuda emulator: " + pch_why + "\n";
    return NVRTC_ERROR_COMPILATION;
  }
  std::vector<KernelEntry> kernels = find_kernels(p->source);
  if (const KernelEntry *mutated = compile_mutated(kernels)) {
    p->log = "jaxon cuda emulator: JAXON_CUDA_EMULATOR_MUTATE failed the compile of kernel '" + mutated->name + "'\n";
    return NVRTC_ERROR_COMPILATION;
  }
  const char *tmp = jaxon_emu::loaded_env("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/jaxon-nvrtc-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data())) {
    p->log = std::string("jaxon cuda emulator: cannot create a temporary folder: ") + strerror(errno) + "\n";
    return NVRTC_ERROR_COMPILATION;
  }
  std::string dir = buffer.data();
  for (auto &h : p->headers) {
    std::string path = dir + "/" + h.first;
    make_folders(path.substr(0, path.rfind('/')));
    write_file(path, h.second);
  }
  std::string unit = "#line 1 \"" + p->name + "\"\n" + rewrite_dynamic_shared(p->source) + module_table(kernels);
  write_file(dir + "/program.cu", unit);
  std::vector<std::string> args = {compiler()};
  for (const std::string &f : base_flags()) args.push_back(f);
  for (const std::string &f : extra) args.push_back(f);
  args.push_back("-I" + dir);
  args.push_back("-I" + (pch.empty() ? headers : pch));
  for (const char *a : {"-include", "jaxon_emu.h", "-shared"}) args.push_back(a);
  const std::vector<std::string> &lean = lean_link_objects();  // crti, crtbeginS, libgcc.a, libm.so.6, crtendS, crtn
  if (!lean.empty()) {
    for (const char *a : {"-nostdlib", "-fno-use-linker-plugin"}) args.push_back(a);
    args.push_back(lean[0]);
    args.push_back(lean[1]);
  }
  for (const char *a : {"-x", "c++"}) args.push_back(a);
  args.push_back(dir + "/program.cu");
  if (!lean.empty()) {
    for (const char *a : {"-x", "none"}) args.push_back(a);
    for (size_t i = 2; i < lean.size(); i++) args.push_back(lean[i]);
  }
  args.push_back("-o");
  args.push_back(dir + "/program.so");
  std::string log;
  int status = run(args, &log, dir + "/log");
  for (size_t at; (at = log.find(dir + "/")) != std::string::npos;) log.erase(at, dir.size() + 1);
  p->log = log;
  if (status != 0) {
    remove_tree(dir);
    if (p->log.empty()) p->log = "jaxon cuda emulator: the compiler failed without a message\n";
    return NVRTC_ERROR_COMPILATION;
  }
  std::string object = read_file(dir + "/program.so");
  if (jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_KEEP")) fprintf(stderr, "jaxon cuda emulator: kept %s/program.cu\n", dir.c_str());
  else remove_tree(dir);
  size_t shared = jaxon_emu::static_shared_bytes(reinterpret_cast<const unsigned char *>(object.data()), object.size());
  if (shared > 48 * 1024) {
    char message[300];
    snprintf(message, sizeof message, "ptxas error   : Entry function '%s' uses too much shared data (0x%zx bytes, 0xc000 max)\n",
             kernels.empty() ? p->name.c_str() : kernels[0].name.c_str(), shared);
    p->log += message;
    return NVRTC_ERROR_COMPILATION;
  }
  unsigned long long size = object.size();
  p->image.assign(JX_EMU_IMAGE_MAGIC, 8);
  p->image.append(reinterpret_cast<const char *>(&size), sizeof size);
  p->image += object;
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *size) {
  if (!p || !size) return NVRTC_ERROR_INVALID_INPUT;
  *size = p->log.size() + 1;
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log) {
  if (!p || !log) return NVRTC_ERROR_INVALID_INPUT;
  memcpy(log, p->log.c_str(), p->log.size() + 1);
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *size) {
  if (!p || !size) return NVRTC_ERROR_INVALID_INPUT;
  if (p->image.empty()) return NVRTC_ERROR_INVALID_PROGRAM;
  *size = p->image.size();
  return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *cubin) {
  if (!p || !cubin) return NVRTC_ERROR_INVALID_INPUT;
  if (p->image.empty()) return NVRTC_ERROR_INVALID_PROGRAM;
  memcpy(cubin, p->image.data(), p->image.size());
  return NVRTC_SUCCESS;
}

// The emulated "PTX" is the same image: the driver loads either.
EXPORT nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *size) { return nvrtcGetCUBINSize(p, size); }
EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *ptx) { return nvrtcGetCUBIN(p, ptx); }
