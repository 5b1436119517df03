// NVRTC compilation, module loading and kernel launches. Compiles run on a
// pool of threads of our own (one per CPU, at least 4), never on the JS
// thread, so many kernels compile in parallel (NVRTC is thread-safe across programs); the
// result is CUBIN when the options name a real architecture (sm_90a) and PTX
// for a virtual one (compute_90), which the driver then compiles at load.
// Modules stay loaded for the life of their context (a reset drops them), as
// the CPU backend's kernel libraries do; kernel caches above them hold every
// function anyway.
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cuda_runtime.h"
#include "cuda_tensor_map.h"

#define MAX_KERNEL_ARGS 256
#define DEFAULT_DYNAMIC_SHARED (48 * 1024)

typedef struct compile_job {
  char *source, *name;
  char **options;
  uint32_t num_options;
  char **header_names, **header_contents; /* in-memory headers handed to NVRTC (the kernel prelude) */
  uint32_t num_headers;
  int want_cubin;
  const jaxon_nvrtc *nvrtc;
  nvrtcResult result;
  const char *stage; /* the NVRTC call that failed */
  char *log, *image;
  size_t image_size;
  napi_deferred deferred;
  napi_async_work work;
  struct compile_job *next;      /* in the compile pool's queue */
  struct compile_job *live_next; /* in compile_pool.live, from its queueing until JS takes its result */
  int state;                     /* JOB_QUEUED, JOB_RUNNING or JOB_DONE, under compile_pool.lock */
} compile_job;

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

typedef struct jaxon_cuda_module {
  jaxon_cuda_device *device;
  CUmodule module;
  uint32_t epoch; /* the device's epoch when it was loaded */
} jaxon_cuda_module;

typedef struct jaxon_cuda_function {
  jaxon_cuda_device *device;
  CUfunction function;
  uint32_t epoch;
  char name[256];
  int num_regs, max_threads_per_block, dynamic_shared_limit, static_shared;
} jaxon_cuda_function;

static void free_job(compile_job *job) {
  free(job->source);
  free(job->name);
  for (uint32_t i = 0; i < job->num_options; i++) free(job->options[i]);
  free(job->options);
  for (uint32_t i = 0; i < job->num_headers; i++) {
    free(job->header_names[i]);
    free(job->header_contents[i]);
  }
  free(job->header_names);
  free(job->header_contents);
  free(job->log);
  free(job->image);
  free(job);
}

// Runs on any thread; touches nothing but NVRTC and the job.
static void run_compile(compile_job *job) {
  const jaxon_nvrtc *nv = job->nvrtc;
  nvrtcProgram program = NULL;
  char file[300];
  snprintf(file, sizeof file, "%.250s.cu", job->name);
  job->stage = "nvrtcCreateProgram";
  job->result = nv->nvrtcCreateProgram(&program, job->source, file, (int)job->num_headers, (const char *const *)job->header_contents,
                                       (const char *const *)job->header_names);
  if (job->result != NVRTC_SUCCESS) return;
  job->stage = "nvrtcCompileProgram";
  job->result = nv->nvrtcCompileProgram(program, (int)job->num_options, (const char *const *)job->options);
  size_t log_size = 0;
  if (nv->nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 0 &&
      (job->log = malloc(log_size + 1))) {
    if (nv->nvrtcGetProgramLog(program, job->log) != NVRTC_SUCCESS) job->log[0] = '\0';
    job->log[log_size] = '\0';
  }
  if (job->result == NVRTC_SUCCESS) {
    job->stage = job->want_cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize";
    job->result = job->want_cubin ? nv->nvrtcGetCUBINSize(program, &job->image_size)
                                  : nv->nvrtcGetPTXSize(program, &job->image_size);
  }
  if (job->result == NVRTC_SUCCESS) {
    job->stage = job->want_cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX";
    job->image = malloc(job->image_size ? job->image_size : 1);
    if (!job->image) job->result = NVRTC_ERROR_OUT_OF_MEMORY;
    else job->result = job->want_cubin ? nv->nvrtcGetCUBIN(program, job->image) : nv->nvrtcGetPTX(program, job->image);
  }
  nv->nvrtcDestroyProgram(&program);
}

static const char *nvrtc_result_name(nvrtcResult result) {
  switch (result) {
#define JAXON_NAME_CASE(name, value) case name: return #name;
    JAXON_NVRTC_RESULT_VALUES(JAXON_NAME_CASE)
#undef JAXON_NAME_CASE
    default: return "NVRTC_ERROR";
  }
}

// The compile's outcome: { image: Uint8Array, kind: 'cubin' | 'ptx', log } or an Error with `code` and `log`.
static napi_value compile_outcome(napi_env env, compile_job *job, int *ok) {
  napi_value value, log;
  napi_create_string_utf8(env, job->log ? job->log : "", NAPI_AUTO_LENGTH, &log);
  if (job->result != NVRTC_SUCCESS) {
    size_t size = 1024 + (job->log ? strlen(job->log) : 0);
    char *message = malloc(size);
    napi_value text, code;
    if (message) {
      snprintf(message, size, "jaxon cuda: NVRTC failed to compile kernel '%s': %s returned %s (%s)%s%s", job->name,
               job->stage, nvrtc_result_name(job->result), job->nvrtc->nvrtcGetErrorString(job->result),
               job->log && job->log[0] ? "; NVRTC log:\n" : "", job->log ? job->log : "");
    }
    napi_create_string_utf8(env, message ? message : "jaxon cuda: NVRTC failed", NAPI_AUTO_LENGTH, &text);
    napi_create_string_utf8(env, nvrtc_result_name(job->result), NAPI_AUTO_LENGTH, &code);
    napi_create_error(env, code, text, &value);
    napi_set_named_property(env, value, "log", log);
    free(message);
    *ok = 0;
    return value;
  }
  napi_value array_buffer, bytes;
  void *data = NULL;
  napi_create_object(env, &value);
  if (napi_create_arraybuffer(env, job->image_size, &data, &array_buffer) != napi_ok) {
    napi_value text;
    napi_create_string_utf8(env, "jaxon cuda: cannot allocate the compiled image", NAPI_AUTO_LENGTH, &text);
    napi_create_error(env, NULL, text, &value);
    *ok = 0;
    return value;
  }
  if (job->image_size) memcpy(data, job->image, job->image_size);
  napi_create_typedarray(env, napi_uint8_array, job->image_size, array_buffer, 0, &bytes);
  napi_set_named_property(env, value, "image", bytes);
  jaxon_set_string(env, value, "kind", job->want_cubin ? "cubin" : "ptx");
  napi_set_named_property(env, value, "log", log);
  *ok = 1;
  return value;
}

// Reads [[includeName, content], ...] into the job's in-memory headers; false with a pending exception.
static bool read_headers(napi_env env, napi_value headers, const char *fn, compile_job *job) {
  bool is_array = false;
  uint32_t count = 0;
  char message[300];
  if (napi_is_array(env, headers, &is_array) != napi_ok || !is_array || napi_get_array_length(env, headers, &count) != napi_ok) {
    snprintf(message, sizeof message, "jaxon cuda: %s: headers must be an array of [includeName, content]", fn);
    napi_throw_type_error(env, NULL, message);
    return false;
  }
  job->header_names = calloc(count ? count : 1, sizeof *job->header_names);
  job->header_contents = calloc(count ? count : 1, sizeof *job->header_contents);
  if (!job->header_names || !job->header_contents) return false;
  for (uint32_t i = 0; i < count; i++) {
    napi_value pair, name, content;
    bool pair_is_array = false;
    uint32_t length = 0;
    if (napi_get_element(env, headers, i, &pair) != napi_ok || napi_is_array(env, pair, &pair_is_array) != napi_ok ||
        !pair_is_array || napi_get_array_length(env, pair, &length) != napi_ok || length != 2) {
      snprintf(message, sizeof message, "jaxon cuda: %s: headers[%u] must be [includeName, content]", fn, i);
      napi_throw_type_error(env, NULL, message);
      return false;
    }
    napi_get_element(env, pair, 0, &name);
    napi_get_element(env, pair, 1, &content);
    if (!jaxon_get_string(env, name, fn, "headers[i][0]", &job->header_names[i])) return false;
    job->num_headers = i + 1; /* free_job frees the name even if the content fails */
    if (!jaxon_get_string(env, content, fn, "headers[i][1]", &job->header_contents[i])) return false;
  }
  return true;
}

// Reads (source, name, options[, headers]) values into a job; NULL with a pending exception.
static compile_job *read_job_values(napi_env env, napi_value *argv, napi_value headers, const char *fn) {
  const char *reason = NULL;
  const jaxon_nvrtc *nvrtc = jaxon_nvrtc_load(&reason);
  if (!nvrtc) {
    char message[2300];
    snprintf(message, sizeof message, "jaxon cuda: %s: %s", fn, reason);
    jaxon_throw_code(env, "CUDA_UNAVAILABLE", message);
    return NULL;
  }
  compile_job *job = calloc(1, sizeof *job);
  if (!job) return NULL;
  job->nvrtc = nvrtc;
  bool is_array = false;
  if (!jaxon_get_string(env, argv[0], fn, "source", &job->source) ||
      !jaxon_get_string(env, argv[1], fn, "name", &job->name) || napi_is_array(env, argv[2], &is_array) != napi_ok ||
      !is_array || napi_get_array_length(env, argv[2], &job->num_options) != napi_ok) {
    if (!is_array) napi_throw_type_error(env, NULL, "jaxon cuda: compile: options must be an array of strings");
    free_job(job);
    return NULL;
  }
  job->options = calloc(job->num_options ? job->num_options : 1, sizeof *job->options);
  job->want_cubin = 0;
  for (uint32_t i = 0; job->options && i < job->num_options; i++) {
    napi_value option;
    if (napi_get_element(env, argv[2], i, &option) != napi_ok || !jaxon_get_string(env, option, fn, "options[i]", &job->options[i])) {
      job->num_options = i;
      free_job(job);
      return NULL;
    }
    const char *o = job->options[i];
    if (!strncmp(o, "--gpu-architecture=sm_", 22) || !strncmp(o, "-arch=sm_", 9)) job->want_cubin = 1;
  }
  if (headers && !read_headers(env, headers, fn, job)) {
    free_job(job);
    return NULL;
  }
  return job;
}

// Reads the call's (source, name, options[, headers]) into a job; NULL with a pending exception.
static compile_job *read_job(napi_env env, napi_callback_info info, const char *fn) {
  napi_value argv[4];
  size_t argc = 0;
  if (!jaxon_args(env, info, fn, 3, 4, argv, &argc)) return NULL;
  napi_valuetype type = napi_undefined;
  if (argc == 4) napi_typeof(env, argv[3], &type);
  return read_job_values(env, argv, type == napi_undefined ? NULL : argv[3], fn);
}

static void execute_compile(napi_env env, void *data) {
  run_compile(data);
}

static void complete_compile(napi_env env, napi_status status, void *data) {
  compile_job *job = data;
  int ok = 0;
  napi_value outcome = compile_outcome(env, job, &ok);
  if (ok) napi_resolve_deferred(env, job->deferred, outcome);
  else napi_reject_deferred(env, job->deferred, outcome);
  napi_delete_async_work(env, job->work);
  free_job(job);
}

// ---- the compile pool: NVRTC on threads of our own (libuv's pool has 4 threads and is shared with fs and
// crypto), as many as JAXON_NVRTC_THREADS or the CPUs (at least 4); results reach JS through a threadsafe
// function that holds the event loop open only while compiles are outstanding ----

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake, finished;
  compile_job *head, *tail;
  compile_job *live; /* every queued, running or finished job whose result JS has not taken yet */
  int threads;
  napi_env env;
  napi_threadsafe_function done;
  uint32_t outstanding; /* touched on the JS thread only */
} compile_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, 0, NULL, NULL, 0};

/** Compiles a job taken off the queue (called with compile_pool.lock held; returns without it) and posts it to JS. */
static void compile_taken(compile_job *job, napi_threadsafe_function_call_mode mode) {
  job->state = JOB_RUNNING;
  pthread_mutex_unlock(&compile_pool.lock);
  run_compile(job);
  pthread_mutex_lock(&compile_pool.lock);
  job->state = JOB_DONE;
  pthread_cond_broadcast(&compile_pool.finished);
  pthread_mutex_unlock(&compile_pool.lock);
  napi_call_threadsafe_function(compile_pool.done, job, mode);
}

static void *compile_worker(void *unused) {
  (void)unused;
  for (;;) {
    pthread_mutex_lock(&compile_pool.lock);
    while (!compile_pool.head) pthread_cond_wait(&compile_pool.wake, &compile_pool.lock);
    compile_job *job = compile_pool.head;
    compile_pool.head = job->next;
    if (!compile_pool.head) compile_pool.tail = NULL;
    compile_taken(job, napi_tsfn_blocking);
  }
  return NULL;
}

static int same_strings(char *const *a, char *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(a[i], b[i]) != 0) return 0;
  return 1;
}

/** Whether two jobs compile the same program (source, name, options, headers) for the same NVRTC. */
static int same_program(const compile_job *a, const compile_job *b) {
  return a->nvrtc == b->nvrtc && a->want_cubin == b->want_cubin && a->num_options == b->num_options &&
         a->num_headers == b->num_headers && strcmp(a->name, b->name) == 0 && strcmp(a->source, b->source) == 0 &&
         same_strings(a->options, b->options, a->num_options) && same_strings(a->header_names, b->header_names, a->num_headers) &&
         same_strings(a->header_contents, b->header_contents, a->num_headers);
}

/**
 * The pool job already compiling what `job` asks for, once its result is there; NULL if there is none, or if one that
 * was already running or done failed (the caller then compiles anew). A synchronous caller asks first, so that a
 * kernel an eager op queued for the pool a moment before its result was read is compiled once, not twice (once more
 * on the calling thread): a queued twin is taken off the queue and compiled here (its promise still settles, through
 * the pool's threadsafe function), a running one is waited for. The twin stays allocated until finish_compile_on_js
 * runs on the JS thread, which a synchronous caller is holding.
 */
static compile_job *finished_twin(const compile_job *job) {
  if (!compile_pool.threads) return NULL;
  pthread_mutex_lock(&compile_pool.lock);
  compile_job *twin = compile_pool.live;
  while (twin && !same_program(twin, job)) twin = twin->live_next;
  if (twin && twin->state == JOB_QUEUED) {
    compile_job *previous = NULL;
    for (compile_job *at = compile_pool.head; at != twin; at = at->next) previous = at;
    if (previous) previous->next = twin->next;
    else compile_pool.head = twin->next;
    if (compile_pool.tail == twin) compile_pool.tail = previous;
    twin->next = NULL;
    compile_taken(twin, napi_tsfn_nonblocking);
    return twin;
  }
  while (twin && twin->state != JOB_DONE) pthread_cond_wait(&compile_pool.finished, &compile_pool.lock);
  pthread_mutex_unlock(&compile_pool.lock);
  // a failure is not handed on (the twin stays until JS takes its result): a compile that failed once, say a
  // compiler that could not start, is tried again rather than failing every caller until then
  return twin && twin->result == NVRTC_SUCCESS ? twin : NULL;
}

static void finish_compile_on_js(napi_env env, napi_value callback, void *context, void *data) {
  compile_job *job = data;
  pthread_mutex_lock(&compile_pool.lock);
  for (compile_job **at = &compile_pool.live; *at; at = &(*at)->live_next) {
    if (*at == job) {
      *at = job->live_next;
      break;
    }
  }
  pthread_mutex_unlock(&compile_pool.lock);
  if (env) {
    int ok = 0;
    napi_value outcome = compile_outcome(env, job, &ok);
    if (ok) napi_resolve_deferred(env, job->deferred, outcome);
    else napi_reject_deferred(env, job->deferred, outcome);
    if (--compile_pool.outstanding == 0) napi_unref_threadsafe_function(env, compile_pool.done);
  }
  free_job(job);
}

// Starts the pool for this env on first use; 0 when it cannot (then compiles use libuv's pool).
static int compile_pool_ready(napi_env env) {
  if (compile_pool.threads) return compile_pool.env == env;
  napi_value name;
  if (napi_create_string_utf8(env, "jaxon:nvrtc-pool", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, NULL, finish_compile_on_js,
                                      &compile_pool.done) != napi_ok)
    return 0;
  napi_unref_threadsafe_function(env, compile_pool.done);
  const char *configured = getenv("JAXON_NVRTC_THREADS");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long count = configured && *configured ? strtol(configured, NULL, 10) : (cpus > 4 ? cpus : 4);
  if (count < 1) count = 1;
  if (count > 64) count = 64;
  for (long i = 0; i < count; i++) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, compile_worker, NULL) != 0) break;
    pthread_detach(thread);
    compile_pool.threads++;
  }
  compile_pool.env = env;
  return compile_pool.threads > 0;
}

// cudaCompile(source, name, options[, headers]) -> Promise<{ image, kind, log }>, compiled on the compile pool;
// headers: [[includeName, content], ...], handed to NVRTC as in-memory headers
static napi_value cuda_compile(napi_env env, napi_callback_info info) {
  compile_job *job = read_job(env, info, "cudaCompile");
  if (!job) return NULL;
  napi_value promise, resource_name;
  JAXON_CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  if (compile_pool_ready(env)) {
    if (compile_pool.outstanding++ == 0) napi_ref_threadsafe_function(env, compile_pool.done);
    pthread_mutex_lock(&compile_pool.lock);
    if (compile_pool.tail) compile_pool.tail->next = job;
    else compile_pool.head = job;
    compile_pool.tail = job;
    job->state = JOB_QUEUED;
    job->live_next = compile_pool.live;
    compile_pool.live = job;
    pthread_cond_signal(&compile_pool.wake);
    pthread_mutex_unlock(&compile_pool.lock);
    return promise;
  }
  JAXON_CHECK(env, napi_create_string_utf8(env, "jaxon:nvrtc", NAPI_AUTO_LENGTH, &resource_name));
  JAXON_CHECK(env, napi_create_async_work(env, NULL, resource_name, execute_compile, complete_compile, job, &job->work));
  JAXON_CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

// cudaCompileSync(source, name, options[, headers]) -> { image, kind, log }: on this thread, for synchronous callers only
static napi_value cuda_compile_sync(napi_env env, napi_callback_info info) {
  compile_job *job = read_job(env, info, "cudaCompileSync");
  if (!job) return NULL;
  compile_job *twin = finished_twin(job);
  if (!twin) run_compile(job);
  int ok = 0;
  napi_value outcome = compile_outcome(env, twin ? twin : job, &ok);
  free_job(job);
  if (!ok) napi_throw(env, outcome);
  return ok ? outcome : NULL;
}

typedef struct {
  compile_job **jobs;
  compile_job **twins; /* the pool job that compiled jobs[i] already, if one did (finished_twin) */
  uint32_t count;
  uint32_t next; /* taken with __atomic_fetch_add */
} compile_batch;

static void *batch_worker(void *data) {
  compile_batch *batch = data;
  for (;;) {
    uint32_t i = __atomic_fetch_add(&batch->next, 1, __ATOMIC_RELAXED);
    if (i >= batch->count) return NULL;
    if (!(batch->twins[i] = finished_twin(batch->jobs[i]))) run_compile(batch->jobs[i]);
  }
}

// cudaCompileSyncMany([[source, name, options], ...]) -> ({ image, kind, log } | Error)[]: compiles them all in
// parallel on threads of its own and returns when every one is done; for a program that needs all its kernels
// before it can run (a jit executable), so its compiles overlap even though the caller waits.
static napi_value cuda_compile_sync_many(napi_env env, napi_callback_info info) {
  const char *fn = "cudaCompileSyncMany";
  napi_value argv[1], result = NULL;
  bool is_array = false;
  uint32_t count = 0;
  if (!jaxon_args(env, info, fn, 1, 1, argv, NULL)) return NULL;
  if (napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[0], &count) != napi_ok) {
    napi_throw_type_error(env, NULL, "jaxon cuda: cudaCompileSyncMany: jobs must be an array of [source, name, options]");
    return NULL;
  }
  compile_batch batch = {calloc(count + 1, sizeof(compile_job *)), calloc(count + 1, sizeof(compile_job *)), count, 0};
  if (!batch.jobs || !batch.twins) {
    free(batch.jobs);
    free(batch.twins);
    return NULL;
  }
  uint32_t read = 0;
  for (; read < count; read++) {
    napi_value entry, parts[4];
    bool entry_is_array = false;
    uint32_t length = 0;
    if (napi_get_element(env, argv[0], read, &entry) != napi_ok || napi_is_array(env, entry, &entry_is_array) != napi_ok ||
        !entry_is_array || napi_get_array_length(env, entry, &length) != napi_ok || length < 3 || length > 4) {
      napi_throw_type_error(env, NULL, "jaxon cuda: cudaCompileSyncMany: each job must be [source, name, options] or [source, name, options, headers]");
      goto done;
    }
    for (uint32_t k = 0; k < length; k++) napi_get_element(env, entry, k, &parts[k]);
    if (!(batch.jobs[read] = read_job_values(env, parts, length == 4 ? parts[3] : NULL, fn))) goto done;
  }
  {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t threads = cpus < 1 ? 1 : (uint32_t)cpus;
    if (threads > count) threads = count;
    pthread_t *ids = calloc(threads + 1, sizeof *ids);
    uint32_t started = 0;
    for (; ids && started + 1 < threads; started++)
      if (pthread_create(&ids[started], NULL, batch_worker, &batch) != 0) break;
    batch_worker(&batch); /* this thread works too */
    for (uint32_t t = 0; t < started; t++) pthread_join(ids[t], NULL);
    free(ids);
  }
  JAXON_CHECK(env, napi_create_array_with_length(env, count, &result));
  for (uint32_t i = 0; i < count; i++) {
    int ok = 0;
    napi_set_element(env, result, i, compile_outcome(env, batch.twins[i] ? batch.twins[i] : batch.jobs[i], &ok));
  }
done:
  for (uint32_t i = 0; i < read && i < count; i++)
    if (batch.jobs[i]) free_job(batch.jobs[i]);
  free(batch.jobs);
  free(batch.twins);
  return result;
}

static void finalize_module(napi_env env, void *data, void *hint) {
  free(data); // the module itself stays loaded (its functions may be in programs still)
}

// cudaModuleLoad(device, image, label) -> module (cuModuleLoadData: CUBIN as is, PTX compiled by the driver)
static napi_value module_load(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  const char *fn = "cudaModuleLoad";
  void *image = NULL;
  size_t length = 0;
  char *label = NULL;
  if (!jaxon_args(env, info, fn, 3, 3, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], fn);
  if (!d || !jaxon_get_bytes(env, argv[1], fn, "image", &image, &length) || !jaxon_get_string(env, argv[2], fn, "label", &label))
    return NULL;
  jaxon_cuda_module *m = calloc(1, sizeof *m);
  if (!m) return free(label), NULL;
  CUresult result = jaxon_cu->cuModuleLoadData(&m->module, image);
  if (result != CUDA_SUCCESS) {
    char call[400];
    snprintf(call, sizeof call, "cuModuleLoadData(%.300s, %zu bytes)", label, length);
    free(label);
    free(m);
    return jaxon_cuda_throw(env, call, result), NULL;
  }
  free(label);
  m->device = d;
  m->epoch = d->epoch;
  napi_value handle = jaxon_wrap_handle(env, JAXON_HANDLE_MODULE, m, finalize_module);
  if (!handle) free(m);
  return handle;
}

// cudaGetFunction(device, module, name) -> { handle, numRegs, maxThreadsPerBlock }
static napi_value get_function(napi_env env, napi_callback_info info) {
  napi_value argv[3], result;
  const char *fn = "cudaGetFunction";
  char *name = NULL;
  if (!jaxon_args(env, info, fn, 3, 3, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], fn);
  jaxon_cuda_module *m = d ? jaxon_unwrap_handle(env, argv[1], JAXON_HANDLE_MODULE, fn, "module") : NULL;
  if (!m) return NULL;
  if (m->device != d || m->epoch != d->epoch) {
    if (m->device == d) return jaxon_throw_lost(env, d, fn, "module"), NULL;
    napi_throw_error(env, NULL, "jaxon cuda: cudaGetFunction: the module was loaded on another device");
    return NULL;
  }
  if (!jaxon_get_string(env, argv[2], fn, "name", &name)) return NULL;
  jaxon_cuda_function *f = calloc(1, sizeof *f);
  if (!f) return free(name), NULL;
  f->device = d;
  f->epoch = d->epoch;
  snprintf(f->name, sizeof f->name, "%s", name);
  free(name);
  CUresult status = jaxon_cu->cuModuleGetFunction(&f->function, m->module, f->name);
  if (status == CUDA_SUCCESS)
    status = jaxon_cu->cuFuncGetAttribute(&f->num_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f->function);
  if (status == CUDA_SUCCESS)
    status = jaxon_cu->cuFuncGetAttribute(&f->max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f->function);
  if (status == CUDA_SUCCESS)
    status = jaxon_cu->cuFuncGetAttribute(&f->static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f->function);
  if (status != CUDA_SUCCESS) {
    char call[400];
    snprintf(call, sizeof call, "cuModuleGetFunction(%s)", f->name);
    free(f);
    return jaxon_cuda_throw(env, call, status), NULL;
  }
  // without opting in, static and dynamic shared memory together stay within 48 KiB
  f->dynamic_shared_limit = DEFAULT_DYNAMIC_SHARED - f->static_shared;
  JAXON_CHECK(env, napi_create_object(env, &result));
  napi_value handle = jaxon_wrap_handle(env, JAXON_HANDLE_FUNCTION, f, NULL);
  if (!handle) return free(f), NULL;
  JAXON_CHECK(env, napi_set_named_property(env, result, "handle", handle));
  jaxon_set_number(env, result, "numRegs", f->num_regs);
  jaxon_set_number(env, result, "maxThreadsPerBlock", f->max_threads_per_block);
  return result;
}

// Checks a launch's shape against the function and raises its shared-memory limit when needed.
int jaxon_function_current(napi_env env, void *function, const char *fn) {
  jaxon_cuda_function *f = function;
  if (f->epoch == f->device->epoch) return 1;
  char what[300];
  snprintf(what, sizeof what, "kernel '%.250s'", f->name);
  return jaxon_throw_lost(env, f->device, fn, what);
}

int jaxon_prepare_launch(napi_env env, void *function, const uint32_t grid[3], const uint32_t block[3],
                         uint32_t shared, const char *fn) {
  jaxon_cuda_function *f = function;
  char message[1200];
  if (!jaxon_function_current(env, f, fn)) return 0;
  uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
  if (!grid[0] || !grid[1] || !grid[2] || !threads) {
    snprintf(message, sizeof message, "jaxon cuda: %s: kernel '%s': grid [%u,%u,%u] and block [%u,%u,%u] must be positive",
             fn, f->name, grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    napi_throw_range_error(env, NULL, message);
    return 0;
  }
  if (threads > (uint64_t)f->max_threads_per_block) {
    snprintf(message, sizeof message,
             "jaxon cuda: %s: kernel '%s': block [%u,%u,%u] has %llu threads, more than the %d it can run with %d "
             "registers per thread", fn, f->name, block[0], block[1], block[2], (unsigned long long)threads,
             f->max_threads_per_block, f->num_regs);
    napi_throw_range_error(env, NULL, message);
    return 0;
  }
  if ((int64_t)shared > f->dynamic_shared_limit) {
    if ((int64_t)shared + f->static_shared > f->device->max_shared_optin) {
      snprintf(message, sizeof message, "jaxon cuda: %s: kernel '%s' asks for %u bytes of dynamic shared memory beside "
               "its %d static ones; %s allows %d in all", fn, f->name, shared, f->static_shared, f->device->name,
               f->device->max_shared_optin);
      napi_throw_range_error(env, NULL, message);
      return 0;
    }
    CUresult result = jaxon_cu->cuFuncSetAttribute(f->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", result);
    f->dynamic_shared_limit = (int)shared;
  }
  return 1;
}

CUfunction jaxon_function_handle(void *function) {
  return ((jaxon_cuda_function *)function)->function;
}

const char *jaxon_function_name(void *function) {
  return ((jaxon_cuda_function *)function)->name;
}

jaxon_cuda_device *jaxon_function_device(void *function) {
  return ((jaxon_cuda_function *)function)->device;
}

// cudaLaunch(function, grid, block, sharedMemBytes, buffers, tensorMaps?): one pointer argument per buffer, then
// each tensor map encoded from its buffer's address (cuda_tensor_map.h), on the compute stream
static napi_value launch(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  const char *fn = "cudaLaunch";
  uint32_t grid[3], block[3], count = 0;
  int32_t shared = 0;
  bool is_array = false;
  size_t argc = 0;
  if (!jaxon_args(env, info, fn, 5, 6, argv, &argc)) return NULL;
  jaxon_cuda_function *f = jaxon_unwrap_handle(env, argv[0], JAXON_HANDLE_FUNCTION, fn, "function");
  if (!f || !jaxon_use_device(env, f->device) || !jaxon_get_u32_array(env, argv[1], fn, "grid", grid, 3) ||
      !jaxon_get_u32_array(env, argv[2], fn, "block", block, 3) ||
      !jaxon_get_i32(env, argv[3], fn, "sharedMemBytes", &shared))
    return NULL;
  if (shared < 0 || napi_is_array(env, argv[4], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[4], &count) != napi_ok || count > MAX_KERNEL_ARGS) {
    napi_throw_type_error(env, NULL, "jaxon cuda: cudaLaunch: sharedMemBytes must be >= 0 and buffers an array of at most 256 buffers");
    return NULL;
  }
  if (!jaxon_prepare_launch(env, f, grid, block, (uint32_t)shared, fn)) return NULL;
  jaxon_cuda_buffer *buffers[MAX_KERNEL_ARGS];
  CUdeviceptr pointers[MAX_KERNEL_ARGS];
  void *params[MAX_KERNEL_ARGS + JAXON_MAX_TENSOR_MAPS];
  jaxon_tensor_map_spec specs[JAXON_MAX_TENSOR_MAPS];
  CUtensorMap maps[JAXON_MAX_TENSOR_MAPS];
  uint32_t num_maps = 0;
  if (!jaxon_read_tensor_maps(env, argc > 5 ? argv[5] : NULL, fn, count, specs, &num_maps)) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    char arg[32];
    jaxon_indexed_name(arg, "buffers", i);
    if (napi_get_element(env, argv[4], i, &element) != napi_ok ||
        !(buffers[i] = jaxon_get_buffer(env, element, fn, arg)))
      return NULL;
    if (buffers[i]->device != f->device) {
      napi_throw_error(env, NULL, "jaxon cuda: cudaLaunch: a buffer lives on another device than the kernel");
      return NULL;
    }
  }
  jaxon_use_device(env, f->device);
  for (uint32_t i = 0; i < count; i++) {
    if (!jaxon_buffer_use(env, buffers[i], JAXON_STREAM_COMPUTE)) return NULL;
    pointers[i] = buffers[i]->address;
    params[i] = &pointers[i];
  }
  for (uint32_t m = 0; m < num_maps; m++) {
    char call[600];
    CUresult encoded = jaxon_encode_tensor_map(&specs[m], pointers[specs[m].arg], &maps[m], call, sizeof call);
    if (encoded != CUDA_SUCCESS) return jaxon_cuda_throw(env, call, encoded), NULL;
    params[count + m] = &maps[m];
  }
  CUresult result = jaxon_cu->cuLaunchKernel(f->function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                             (unsigned)shared, f->device->streams[JAXON_STREAM_COMPUTE],
                                             count + num_maps ? params : NULL, NULL);
  if (result != CUDA_SUCCESS) {
    char call[400];
    snprintf(call, sizeof call, "cuLaunchKernel(%s, grid [%u,%u,%u], block [%u,%u,%u], %d bytes shared)", f->name,
             grid[0], grid[1], grid[2], block[0], block[1], block[2], shared);
    return jaxon_cuda_throw(env, call, result), NULL;
  }
  for (uint32_t i = 0; i < count; i++) jaxon_buffer_written_on_compute(buffers[i]);
  return NULL;
}

void jaxon_init_cuda_compile(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "cudaCompile", cuda_compile);
  jaxon_export(env, exports, "cudaCompileSync", cuda_compile_sync);
  jaxon_export(env, exports, "cudaCompileSyncMany", cuda_compile_sync_many);
  jaxon_export(env, exports, "cudaModuleLoad", module_load);
  jaxon_export(env, exports, "cudaGetFunction", get_function);
  jaxon_export(env, exports, "cudaLaunch", launch);
}
