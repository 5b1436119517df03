// Completions and a lost context. Asynchronous work reaches JS through a
// host function queued on a stream (cuLaunchHostFunc) that posts to the
// device's threadsafe function, whose JS-thread callback settles a Promise.
// After a context-lost error the driver calls no more host functions, so
// the first call that sees one marks the device lost and rejects every
// waiting completion; while any wait, a watcher thread polls the streams
// (cuStreamQuery) so a loss nobody calls the driver about still settles
// them. See cuda_runtime.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuda_runtime.h"

int jaxon_context_lost(CUresult result) {
  switch ((int)result) {
#define JAXON_LOST_CASE(name) case name:
    JAXON_CUDA_CONTEXT_LOST_ERRORS(JAXON_LOST_CASE)
#undef JAXON_LOST_CASE
    return 1;
    default: return 0;
  }
}

int jaxon_throw_lost(napi_env env, jaxon_cuda_device *d, const char *fn, const char *what) {
  char message[1800], prefix[300] = "";
  if (fn && what) snprintf(prefix, sizeof prefix, "%s: %s ", fn, what);
  if (d->lost) {
    snprintf(message, sizeof message, "jaxon cuda: %sdevice %d is lost: %s; every use fails until it is reset (cudaDeviceReset)",
             prefix, d->ordinal, d->lost_reason);
  } else {
    snprintf(message, sizeof message, "jaxon cuda: %sbelonged to device %d's context before its reset%s%s%s: it went "
             "with that context", prefix, d->ordinal, d->lost_reason[0] ? " (after " : "", d->lost_reason,
             d->lost_reason[0] ? ")" : "");
  }
  jaxon_throw_code(env, "DEVICE_LOST", message);
  return 0;
}

static void waiting_add(jaxon_cuda_device *d, jaxon_completion *c) {
  c->prev = NULL;
  c->next = d->waiting;
  if (d->waiting) d->waiting->prev = c;
  d->waiting = c;
  pthread_mutex_lock(&d->watch_lock);
  d->watch_waiting++;
  pthread_cond_signal(&d->watch_wake);
  pthread_mutex_unlock(&d->watch_lock);
}

static void waiting_remove(jaxon_cuda_device *d, jaxon_completion *c) {
  if (c->prev) c->prev->next = c->next;
  else d->waiting = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  pthread_mutex_lock(&d->watch_lock);
  d->watch_waiting--;
  pthread_mutex_unlock(&d->watch_lock);
}

static void completion_done(napi_env env, jaxon_cuda_device *d) {
  if (--d->pending_completions == 0) napi_unref_threadsafe_function(env, d->completions);
}

// Rejects every waiting completion with the device's loss. Their host functions may still arrive (a driver that
// calls them after a failure, or one already posted): those find the completion abandoned, so it is never freed.
static void lost_message(jaxon_cuda_device *d, char *message, size_t size) {
  if (d->lost_reason[0]) snprintf(message, size, "jaxon cuda: device %d failed: %s", d->ordinal, d->lost_reason);
  else snprintf(message, size, "jaxon cuda: device %d was reset before this work finished", d->ordinal);
}

napi_value jaxon_rejected_for_loss(napi_env env, jaxon_cuda_device *d) {
  napi_value exception, code, text, error, promise;
  napi_deferred deferred;
  char message[1400], name[64] = "DEVICE_LOST";
  napi_get_and_clear_last_exception(env, &exception); // whichever call met the loss first: the loss is the error
  // the code waits get: the driver's error name, which starts the reason ("CUDA_ERROR_LAUNCH_FAILED (...)")
  if (d->lost_reason[0]) snprintf(name, sizeof name, "%.*s", (int)strcspn(d->lost_reason, " "), d->lost_reason);
  lost_message(d, message, sizeof message);
  JAXON_CHECK(env, napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code));
  JAXON_CHECK(env, napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text));
  JAXON_CHECK(env, napi_create_error(env, code, text, &error));
  JAXON_CHECK(env, napi_create_promise(env, &deferred, &promise));
  JAXON_CHECK(env, napi_reject_deferred(env, deferred, error));
  return promise;
}

void jaxon_reject_waiting(napi_env env, jaxon_cuda_device *d, const char *code) {
  char message[1400];
  lost_message(d, message, sizeof message);
  while (d->waiting) {
    jaxon_completion *c = d->waiting;
    waiting_remove(d, c);
    c->abandoned = 1;
    if (!c->unobserved) { // a Promise nobody holds must not reject: Node would report it unhandled
      napi_value text, code_value, error;
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
      napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value);
      napi_create_error(env, code_value, text, &error);
      napi_reject_deferred(env, c->deferred, error);
    }
    if (c->keep) napi_delete_reference(env, c->keep);
    completion_done(env, d);
  }
}

static void device_lost(napi_env env, jaxon_cuda_device *d, CUresult result) {
  if (d->lost) return;
  d->lost = 1;
  jaxon_cuda_describe(result, d->lost_reason, sizeof d->lost_reason);
  const char *name = NULL;
  if (jaxon_cu->cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) name = "DEVICE_LOST";
  if (env) jaxon_reject_waiting(env, d, name);
}

void jaxon_note_lost(jaxon_cuda_device *d, CUresult result) {
  // no env here (the allocator's callbacks): waits are rejected when the device is next used or reset
  if (d && jaxon_context_lost(result)) device_lost(NULL, d, result);
}

void jaxon_note_result(napi_env env, CUresult result) {
  jaxon_cuda_device *d = jaxon_current_device();
  if (d && jaxon_context_lost(result)) device_lost(env, d, result);
}

static void host_function(void *data) {
  jaxon_completion *c = data;
  // Runs on a driver thread: no CUDA calls here, only a post to the JS thread.
  napi_call_threadsafe_function(c->device->completions, c, napi_tsfn_nonblocking);
}

static void finish_on_js_thread(napi_env env, napi_value js_callback, void *context, void *data) {
  jaxon_completion *c = data;
  if (!env) return; // the environment is torn down
  jaxon_cuda_device *d = c->device;
  if (c == d->lost_signal) { // the watcher saw the context fail
    pthread_mutex_lock(&d->watch_lock);
    CUresult seen = d->watch_result;
    pthread_mutex_unlock(&d->watch_lock);
    device_lost(env, d, seen);
    return;
  }
  if (c->abandoned || --c->remaining > 0) return;
  waiting_remove(d, c);
  jaxon_use_device_quietly(d); // no exception can be thrown from here
  c->finish(env, c);
  free(c);
  completion_done(env, d);
}

// While completions wait, polls the streams every few milliseconds: after a failure the driver calls no host
// function, so without this a Promise waiting on the device would never settle.
static void *watch_streams(void *data) {
  jaxon_cuda_device *d = data;
  CUcontext current = NULL;
  pthread_mutex_lock(&d->watch_lock);
  for (;;) {
    while (d->watch_waiting == 0 || d->watch_reported) pthread_cond_wait(&d->watch_wake, &d->watch_lock);
    if (current != d->context && jaxon_cu->cuCtxSetCurrent(d->context) == CUDA_SUCCESS) current = d->context;
    CUresult seen = CUDA_SUCCESS;
    for (int s = 0; s < JAXON_STREAM_COUNT && !jaxon_context_lost(seen); s++) seen = jaxon_cu->cuStreamQuery(d->streams[s]);
    if (jaxon_context_lost(seen)) {
      d->watch_reported = 1;
      d->watch_result = seen;
      napi_call_threadsafe_function(d->completions, d->lost_signal, napi_tsfn_nonblocking);
      continue;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 10 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&d->watch_wake, &d->watch_lock, &until);
  }
  return NULL;
}

int jaxon_complete_after(napi_env env, jaxon_completion *c, unsigned streams_mask) {
  jaxon_cuda_device *d = c->device;
  int count = 0, queued = 0;
  for (int s = 0; s < JAXON_STREAM_COUNT; s++) count += (streams_mask >> s) & 1;
  c->remaining = count;
  // Keeps Node's event loop alive while a Promise waits on the GPU.
  if (d->pending_completions++ == 0) napi_ref_threadsafe_function(env, d->completions);
  for (int s = 0; s < JAXON_STREAM_COUNT; s++) {
    if (!((streams_mask >> s) & 1)) continue;
    CUresult result = jaxon_cu->cuLaunchHostFunc(d->streams[s], host_function, c);
    if (result != CUDA_SUCCESS) {
      // The caller throws instead of returning the Promise; the completion still finishes (freeing what it
      // holds) once the queued host functions arrive, or quietly with the device's loss.
      c->remaining -= count - queued;
      if (c->remaining == 0) {
        c->finish(env, c);
        free(c);
        completion_done(env, d);
      } else {
        c->unobserved = 1;
        waiting_add(d, c);
      }
      return jaxon_cuda_throw(env, "cuLaunchHostFunc", result);
    }
    queued++;
  }
  waiting_add(d, c);
  if (!d->watcher_started && jaxon_cu->cuStreamQuery) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, watch_streams, d) == 0) {
      pthread_detach(thread);
      d->watcher_started = 1;
    }
  }
  return 1;
}

int jaxon_completions_init(napi_env env, jaxon_cuda_device *d) {
  jaxon_completion *signal = calloc(1, sizeof *signal);
  napi_value name;
  napi_create_string_utf8(env, "jaxon cuda completions", NAPI_AUTO_LENGTH, &name);
  if (!signal || napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, NULL, finish_on_js_thread,
                                                 &d->completions) != napi_ok) {
    free(signal);
    jaxon_throw(env, "jaxon cuda: napi_create_threadsafe_function failed");
    return 0;
  }
  napi_unref_threadsafe_function(env, d->completions);
  signal->device = d;
  d->lost_signal = signal;
  pthread_mutex_init(&d->watch_lock, NULL);
  pthread_cond_init(&d->watch_wake, NULL);
  return 1;
}
