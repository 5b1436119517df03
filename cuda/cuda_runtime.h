// Internal declarations of the CUDA runtime of the addon, shared by
// cuda_driver.c (loading libcuda and libnvrtc), cuda_runtime.c (devices,
// streams, events, resets), cuda_completions.c (completions, a lost
// context), cuda_memory.c (buffers and transfers), cuda_compile.c (NVRTC,
// modules, launches), cuda_program.c (launch lists) and cuda_graph.c (their
// CUDA graphs).
//
// Stream discipline: each device has a compute stream and two copy streams
// (host-to-device, device-to-host). A buffer written on a copy stream carries
// a `ready` event that other streams wait on before touching it; a buffer
// used on a stream other than the one it was allocated for is recorded with
// the allocator, whose free then waits on that stream's events before reuse.
// Completion of asynchronous work reaches JS through a host function queued on
// the stream (cuLaunchHostFunc) that posts to a threadsafe function, so no
// thread blocks, the JS thread least of all.
//
// A lost context: after a faulting or hanging kernel the driver fails every
// call with a sticky error (CUDA_ERROR_LAUNCH_FAILED, _ILLEGAL_ADDRESS, ...,
// JAXON_CUDA_CONTEXT_LOST_ERRORS) and calls no more host functions. The
// first call that sees one marks the device lost: waiting completions are
// rejected with the error (a watcher thread polls the streams while any
// wait, so a loss nobody calls the driver about still settles them), and
// every later use fails with DEVICE_LOST until cudaDeviceReset resets the
// primary context and rebuilds the streams, the allocators and the staging
// ring. The reset raises the device's epoch: buffers, modules, functions and
// programs made before it are stale, and using one is a DEVICE_LOST error
// (freeing one is allowed and does nothing more).
#ifndef JAXON_CUDA_RUNTIME_H
#define JAXON_CUDA_RUNTIME_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "cuda_alloc.h"
#include "cuda_api.h"
#include "cuda_napi.h"

// ---- cuda_driver.c ----

typedef struct jaxon_cuda_driver {
#define JAXON_MEMBER(ret, name, params) jaxon_pfn_##name name;
  JAXON_CUDA_DRIVER_FUNCTIONS(JAXON_MEMBER)
  JAXON_CUDA_OPTIONAL_FUNCTIONS(JAXON_MEMBER) /* NULL when the driver lacks them */
  JAXON_CUDA_GRAPH_FUNCTIONS(JAXON_MEMBER)
  JAXON_CUDA_GRAPH_UPDATE_FUNCTIONS(JAXON_MEMBER)
  int has_graphs;        /* every JAXON_CUDA_GRAPH_FUNCTIONS entry */
  int has_graph_updates; /* graphs and every JAXON_CUDA_GRAPH_UPDATE_FUNCTIONS entry */
  int version;       /* cuDriverGetVersion: 12040 is CUDA 12.4 */
  int device_count;
  char library[1024]; /* the file it came from */
  int emulated;       /* jaxon's emulated GPU (JAXON_CUDA_EMULATOR=1) */
  char emulator[128]; /* its identification: what its compiled kernels depend on beyond their source */
} jaxon_cuda_driver;

typedef struct jaxon_nvrtc {
  JAXON_NVRTC_FUNCTIONS(JAXON_MEMBER)
#undef JAXON_MEMBER
  int major, minor;
  int num_archs;
  int archs[64];      /* nvrtcGetSupportedArchs: 75, 80, 86, 89, 90, ... */
  char library[1024];
} jaxon_nvrtc;

/* The driver (loaded, cuInit done, at least one device), or NULL with a one-line reason. */
const jaxon_cuda_driver *jaxon_cuda_driver_load(const char **reason);
/* NVRTC, or NULL with a one-line reason. Loads the driver first to match majors. */
const jaxon_nvrtc *jaxon_nvrtc_load(const char **reason);
/* The loaded driver; only valid after jaxon_cuda_driver_load succeeded. */
extern const jaxon_cuda_driver *jaxon_cu;
/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" */
void jaxon_cuda_describe(CUresult result, char *out, size_t size);
/* Throws "jaxon cuda: <call> failed: CUDA_ERROR_X (text)" with code CUDA_ERROR_X (a context-lost error first marks
   the current device lost); returns 0. */
int jaxon_cuda_throw(napi_env env, const char *call, CUresult result);

// ---- cuda_runtime.c ----

enum { JAXON_STREAM_COMPUTE = 0, JAXON_STREAM_H2D = 1, JAXON_STREAM_D2H = 2, JAXON_STREAM_COUNT = 3 };

#define JAXON_RING_CHUNKS 8
#define JAXON_RING_CHUNK_BYTES (4u << 20)

typedef struct jaxon_ring_chunk {
  jaxon_block *block; /* pinned host memory, from the host pool */
  CUevent event;      /* recorded after the copy that last read it */
  int in_flight;
} jaxon_ring_chunk;

typedef struct jaxon_completion jaxon_completion;

typedef struct jaxon_cuda_device {
  int ordinal;
  CUdevice device;
  CUcontext context;
  CUstream streams[JAXON_STREAM_COUNT];
  char name[256];
  int cc_major, cc_minor, sm_count, max_threads_per_block, max_shared_optin, l2_bytes, async_engines;
  size_t total_memory;
  jaxon_allocator allocator;
  jaxon_host_pool host_pool;
  CUevent *free_events;
  size_t num_free_events, cap_free_events;
  jaxon_ring_chunk ring[JAXON_RING_CHUNKS];
  int ring_next;
  size_t ring_fill;    /* bytes used in ring[ring_next]; a full chunk moves to the next */
  napi_threadsafe_function completions;
  int pending_completions;
  int64_t reported_external_bytes; /* buffer bytes this device reported to V8 */
  int64_t v8_external_bytes;       /* V8's external memory total after the last report */
  uint32_t epoch;                  /* raised by each reset: what was made before it is stale */
  int lost;                        /* a call returned a context-lost error: unusable until cudaDeviceReset */
  char lost_reason[1024];          /* "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure: ...)" */
  uint64_t resets;
  napi_env env;                    /* the environment that opened it, where completions settle */
  jaxon_completion *waiting;       /* completions whose host functions have not all arrived */
  jaxon_completion *lost_signal;   /* what the watcher posts to the completions function when it sees a loss */
  pthread_mutex_t watch_lock;      /* the watcher's view: the streams it polls, how many wait, what it saw */
  pthread_cond_t watch_wake;
  int watcher_started, watch_waiting, watch_reported;
  CUresult watch_result;
} jaxon_cuda_device;

typedef struct jaxon_cuda_buffer {
  jaxon_cuda_device *device;
  jaxon_block *block;
  int host;            /* memory kind pinned_host (block from the host pool) */
  size_t nbytes;
  uint64_t address;    /* device pointer, or the host pointer of a pinned_host buffer */
  CUevent ready;       /* set while the last write was on a copy stream */
  int ready_stream;    /* stream of the last write */
  int alloc_stream;    /* the stream whose pool the block came from: its earlier work may still use the memory */
  int freed;
  uint32_t epoch;      /* the device's epoch at allocation */
  int pending_reads;   /* reads of a pinned buffer in place that have not finished */
  int release_deferred; /* freed while reads were pending: released by the last one */
} jaxon_cuda_buffer;

/* Work finished on the JS thread once a stream reaches a host function. */
typedef void (*jaxon_completion_fn)(napi_env env, jaxon_completion *c);
struct jaxon_completion {
  jaxon_cuda_device *device;
  napi_deferred deferred;
  jaxon_completion_fn finish; /* resolves or rejects `deferred`, frees what it holds */
  int remaining;              /* host functions still to arrive */
  int abandoned;              /* rejected when the device was lost; late host functions are ignored */
  int unobserved;             /* its Promise never reached JS (queuing it failed): settles without rejecting */
  jaxon_completion *prev, *next; /* in the device's waiting list */
  jaxon_block *host_block;    /* pinned memory to read back and return to the pool */
  jaxon_cuda_buffer *buffer; /* a pinned buffer read in place (kept alive by `keep`) */
  napi_ref keep;
  size_t nbytes;
};

extern int jaxon_cuda_shutting_down;
jaxon_cuda_device *jaxon_get_device(napi_env env, napi_value value, const char *fn);
/* Makes the device's context current on this thread; 0 with a pending exception on failure (a lost device: DEVICE_LOST). */
int jaxon_use_device(napi_env env, jaxon_cuda_device *d);
/* The same without throwing, for finalizers and completions (0 on failure, and for a lost device). */
int jaxon_use_device_quietly(jaxon_cuda_device *d);
/* The device whose context is current on this thread, or NULL. */
jaxon_cuda_device *jaxon_current_device(void);
uint64_t jaxon_stream_id(jaxon_cuda_device *d, int stream);
/* An event from the device's pool, recorded on `stream`; NULL with a pending exception on failure. */
CUevent jaxon_record_event(napi_env env, jaxon_cuda_device *d, int stream);
void jaxon_release_event(jaxon_cuda_device *d, CUevent event);
void jaxon_report_external_memory(napi_env env, jaxon_cuda_device *d, int64_t delta);
/* Throws a RESOURCE_EXHAUSTED or CUDA_ALLOCATOR error for a failed allocation; returns 0. */
int jaxon_throw_alloc(napi_env env, const char *fn, int status, const char *err);

// ---- cuda_completions.c ----

/* The device's completions function and watcher state; 0 with a pending exception. */
int jaxon_completions_init(napi_env env, jaxon_cuda_device *d);
/* Queues a host function on each stream in `streams_mask`; `c->finish` runs on the JS thread after the last. */
int jaxon_complete_after(napi_env env, jaxon_completion *c, unsigned streams_mask);
/* Whether a result means the context is lost (JAXON_CUDA_CONTEXT_LOST_ERRORS). */
int jaxon_context_lost(CUresult result);
/* After a call on the current device returned `result`: a context-lost error marks the device lost. */
void jaxon_note_result(napi_env env, CUresult result);
/* The same for a device known without the current context (the allocator's callbacks, which have no env). */
void jaxon_note_lost(jaxon_cuda_device *d, CUresult result);
/* For an asynchronous call whose queueing met the device's loss (the pending exception): a Promise rejected as the
   waits are, so the loss reaches the caller the same way whether it came before or after the call. */
napi_value jaxon_rejected_for_loss(napi_env env, jaxon_cuda_device *d);
/* Rejects every waiting completion (with `code`) for the device's loss or reset. */
void jaxon_reject_waiting(napi_env env, jaxon_cuda_device *d, const char *code);
/* Throws DEVICE_LOST: "jaxon cuda: <fn>: <what> ...", saying why the device was lost or that it was reset; returns 0. */
int jaxon_throw_lost(napi_env env, jaxon_cuda_device *d, const char *fn, const char *what);

// ---- cuda_memory.c ----

/* A live buffer on a usable device (its context current); NULL with a pending exception (freed, stale, lost). */
jaxon_cuda_buffer *jaxon_get_buffer(napi_env env, napi_value value, const char *fn, const char *arg);
/* Makes `stream` wait for the buffer's last write and notes the use with the allocator. */
int jaxon_buffer_use(napi_env env, jaxon_cuda_buffer *b, int stream);
/* After work on the compute stream wrote or read it. */
void jaxon_buffer_written_on_compute(jaxon_cuda_buffer *b);
/* A new device buffer tied to `stream`'s pool; NULL with a pending exception. */
jaxon_cuda_buffer *jaxon_buffer_alloc(napi_env env, jaxon_cuda_device *d, size_t nbytes, int host, int stream,
                                      const char *fn);
napi_value jaxon_buffer_handle(napi_env env, jaxon_cuda_buffer *b);
void jaxon_buffer_free(napi_env env, jaxon_cuda_buffer *b);

// ---- cuda_compile.c ----

/* Checks grid/block/shared memory against a function (raising its dynamic shared limit when needed). */
int jaxon_prepare_launch(napi_env env, void *function, const uint32_t grid[3], const uint32_t block[3],
                         uint32_t shared, const char *fn);
/* 0 with DEVICE_LOST pending when the function was loaded before its device's last reset. */
int jaxon_function_current(napi_env env, void *function, const char *fn);
CUfunction jaxon_function_handle(void *function);
const char *jaxon_function_name(void *function);
jaxon_cuda_device *jaxon_function_device(void *function);

void jaxon_init_cuda_driver(napi_env env, napi_value exports);
void jaxon_init_cuda_runtime(napi_env env, napi_value exports);
void jaxon_init_cuda_memory(napi_env env, napi_value exports);
void jaxon_init_cuda_compile(napi_env env, napi_value exports);
void jaxon_init_cuda_program(napi_env env, napi_value exports);
void jaxon_init_cuda_test_hooks(napi_env env, napi_value exports);

#endif
