// Buffers and transfers of the CUDA runtime. A buffer is device memory from
// the caching allocator or pinned host memory from the pinned-host pool
// (memory kinds 'device' and 'pinned_host'). Copies from JS memory go through
// a ring of pinned staging chunks on the host-to-device stream; copies back go
// through pinned memory on the device-to-host stream and settle a Promise
// from a host function, so data() never blocks the event loop. Bytes held are
// reported to V8 as external memory, so garbage collection feels GPU memory.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_runtime.h"

#define STAGING_ALIGN 256u

static void *host_pointer(const jaxon_block *block) {
  return (void *)(uintptr_t)block->address;
}

// A buffer whose memory went, or goes with the coming reset, with a lost context.
static int buffer_dead(const jaxon_cuda_buffer *b) {
  return b->epoch != b->device->epoch || b->device->lost;
}

// The handle's buffer unless it was freed (NULL with an Error naming fn and arg).
static jaxon_cuda_buffer *unfreed_buffer(napi_env env, napi_value value, const char *fn, const char *arg) {
  jaxon_cuda_buffer *b = jaxon_unwrap_handle(env, value, JAXON_HANDLE_BUFFER, fn, arg);
  if (b && b->freed) {
    char message[256];
    snprintf(message, sizeof message, "jaxon cuda: %s: %s was already freed", fn, arg);
    jaxon_throw(env, message);
    return NULL;
  }
  return b;
}

jaxon_cuda_buffer *jaxon_get_buffer(napi_env env, napi_value value, const char *fn, const char *arg) {
  jaxon_cuda_buffer *b = unfreed_buffer(env, value, fn, arg);
  if (!b) return NULL;
  if (b->epoch != b->device->epoch) return jaxon_throw_lost(env, b->device, fn, arg), NULL;
  return jaxon_use_device(env, b->device) ? b : NULL;
}

int jaxon_buffer_use(napi_env env, jaxon_cuda_buffer *b, int stream) {
  jaxon_cuda_device *d = b->device;
  // A block is reused in its pool's stream order: a first use on another stream waits for that stream's earlier
  // work, which may still touch the block's previous owner (pinned blocks are reused only after their events).
  if (b->ready_stream < 0 && !b->host && b->alloc_stream != stream) {
    CUevent event = jaxon_record_event(env, d, b->alloc_stream);
    if (!event) return 0;
    CUresult result = jaxon_cu->cuStreamWaitEvent(d->streams[stream], event, 0);
    jaxon_release_event(d, event);
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuStreamWaitEvent", result);
  }
  if (b->ready_stream >= 0 && b->ready_stream != stream) {
    CUevent event = b->ready;
    if (!event && !(event = jaxon_record_event(env, d, b->ready_stream))) return 0;
    CUresult result = jaxon_cu->cuStreamWaitEvent(d->streams[stream], event, 0);
    if (event != b->ready) jaxon_release_event(d, event);
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuStreamWaitEvent", result);
    // Once the compute stream has waited, later compute work is ordered after the write.
    if (stream == JAXON_STREAM_COMPUTE) {
      jaxon_release_event(d, b->ready);
      b->ready = NULL;
      b->ready_stream = JAXON_STREAM_COMPUTE;
    }
  }
  if (!jaxon_alloc_record_use(b->block, jaxon_stream_id(d, stream))) {
    jaxon_throw(env, "jaxon cuda: out of host memory recording a stream use");
    return 0;
  }
  return 1;
}

void jaxon_buffer_written_on_compute(jaxon_cuda_buffer *b) {
  jaxon_release_event(b->device, b->ready);
  b->ready = NULL;
  b->ready_stream = JAXON_STREAM_COMPUTE;
}

// After a copy wrote the buffer on a copy stream: later users wait on this event.
static int written_on_copy_stream(napi_env env, jaxon_cuda_buffer *b, int stream) {
  CUevent event = jaxon_record_event(env, b->device, stream);
  if (!event) return 0;
  jaxon_release_event(b->device, b->ready);
  b->ready = event;
  b->ready_stream = stream;
  return 1;
}

jaxon_cuda_buffer *jaxon_buffer_alloc(napi_env env, jaxon_cuda_device *d, size_t nbytes, int host, int stream,
                                      const char *fn) {
  jaxon_cuda_buffer *b = calloc(1, sizeof *b);
  if (!b) {
    jaxon_throw(env, "jaxon cuda: out of host memory");
    return NULL;
  }
  char err[1024] = "";
  int status = 0;
  b->block = host ? jaxon_host_alloc(&d->host_pool, nbytes, &status, err, sizeof err)
                  : jaxon_alloc(&d->allocator, nbytes, jaxon_stream_id(d, stream), &status, err, sizeof err);
  if (!b->block) {
    free(b);
    jaxon_throw_alloc(env, fn, status, err);
    return NULL;
  }
  b->device = d;
  b->host = host;
  b->nbytes = nbytes;
  b->address = b->block->address;
  b->ready_stream = -1; // nothing has written it yet
  b->alloc_stream = stream;
  b->epoch = d->epoch;
  jaxon_report_external_memory(env, d, (int64_t)b->block->size);
  return b;
}

static void release_memory(napi_env env, jaxon_cuda_buffer *b) {
  jaxon_cuda_device *d = b->device;
  char err[512] = "";
  jaxon_release_event(d, b->ready);
  b->ready = NULL;
  jaxon_report_external_memory(env, d, -(int64_t)b->block->size);
  if (b->host) jaxon_host_free(&d->host_pool, b->block, err, sizeof err);
  else jaxon_free(&d->allocator, b->block, err, sizeof err);
}

void jaxon_buffer_free(napi_env env, jaxon_cuda_buffer *b) {
  if (b->freed) return;
  b->freed = 1;
  if (buffer_dead(b)) { // the reset frees the memory; a device block's bookkeeping goes with the allocator's
    if (b->host) jaxon_block_discard(b->block);
    return;
  }
  // A pinned buffer being read in place is released by its last read.
  if (b->pending_reads > 0) b->release_deferred = 1;
  else release_memory(env, b);
}

static void finalize_buffer(napi_env env, void *data, void *hint) {
  jaxon_cuda_buffer *b = data;
  // A backstop for buffers JS forgot; skipped while the process exits.
  if (!b->freed && !jaxon_cuda_shutting_down && (buffer_dead(b) || jaxon_use_device_quietly(b->device)))
    jaxon_buffer_free(env, b);
  free(b);
}

napi_value jaxon_buffer_handle(napi_env env, jaxon_cuda_buffer *b) {
  napi_value handle = jaxon_wrap_handle(env, JAXON_HANDLE_BUFFER, b, finalize_buffer);
  if (!handle) {
    jaxon_buffer_free(env, b);
    free(b);
  }
  return handle;
}

static int memory_kind(napi_env env, napi_value value, const char *fn, int *host) {
  char *kind = NULL;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) == napi_ok && type == napi_undefined) {
    *host = 0;
    return 1;
  }
  if (!jaxon_get_string(env, value, fn, "memoryKind", &kind)) return 0;
  int known = strcmp(kind, "device") == 0 || strcmp(kind, "pinned_host") == 0;
  *host = strcmp(kind, "pinned_host") == 0;
  if (!known) {
    char message[300];
    snprintf(message, sizeof message, "jaxon cuda: %s: memoryKind must be 'device' or 'pinned_host', got '%.200s'", fn,
             kind);
    napi_throw_type_error(env, NULL, message);
  }
  free(kind);
  return known;
}

// cudaAlloc(device, nbytes, memoryKind?) -> buffer (uninitialized; device buffers are tied to the compute stream)
static napi_value cuda_alloc(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  const char *fn = "cudaAlloc";
  uint64_t nbytes = 0;
  int host = 0;
  if (!jaxon_args(env, info, fn, 2, 3, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], fn);
  if (!d || !jaxon_get_u64(env, argv[1], fn, "nbytes", &nbytes) || !memory_kind(env, argv[2], fn, &host)) return NULL;
  jaxon_cuda_buffer *b = jaxon_buffer_alloc(env, d, nbytes, host, JAXON_STREAM_COMPUTE, fn);
  return b ? jaxon_buffer_handle(env, b) : NULL;
}

// cudaFree(buffer): returns the memory to the cache now (stream-ordered: queued work still sees it); a buffer of a
// lost or reset context is only marked freed
static napi_value cuda_free(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "cudaFree", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_buffer *b = unfreed_buffer(env, argv[0], "cudaFree", "buffer");
  if (b && (buffer_dead(b) || jaxon_use_device(env, b->device))) jaxon_buffer_free(env, b);
  return NULL;
}

// cudaBufferInfo(buffer) -> { pointer: bigint, nbytes, memoryKind, freed }
static napi_value buffer_info(napi_env env, napi_callback_info info) {
  napi_value argv[1], result, pointer;
  if (!jaxon_args(env, info, "cudaBufferInfo", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_buffer *b = jaxon_unwrap_handle(env, argv[0], JAXON_HANDLE_BUFFER, "cudaBufferInfo", "buffer");
  if (!b) return NULL;
  JAXON_CHECK(env, napi_create_object(env, &result));
  JAXON_CHECK(env, napi_create_bigint_uint64(env, b->address, &pointer));
  JAXON_CHECK(env, napi_set_named_property(env, result, "pointer", pointer));
  jaxon_set_number(env, result, "nbytes", (double)b->nbytes);
  jaxon_set_string(env, result, "memoryKind", b->host ? "pinned_host" : "device");
  jaxon_set_number(env, result, "freed", b->freed);
  return result;
}

// Copies host bytes to device memory through the pinned staging ring. Small
// copies share a chunk; reaching a chunk whose last copy is still in flight
// waits for that copy (bounded by one chunk's transfer time).
static int stage_to_device(napi_env env, jaxon_cuda_device *d, CUdeviceptr dst, const uint8_t *src, size_t n) {
  size_t fill = d->ring_fill, done = 0;
  while (done < n) {
    if (fill >= JAXON_RING_CHUNK_BYTES) {
      d->ring_next = (d->ring_next + 1) % JAXON_RING_CHUNKS;
      jaxon_ring_chunk *next = &d->ring[d->ring_next];
      if (!next->block) {
        char err[512] = "";
        int status = 0;
        next->block = jaxon_host_alloc(&d->host_pool, JAXON_RING_CHUNK_BYTES, &status, err, sizeof err);
        if (!next->block) return jaxon_throw_alloc(env, "staging ring", status, err);
        CUresult result = jaxon_cu->cuEventCreate(&next->event, CU_EVENT_DISABLE_TIMING);
        if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuEventCreate", result);
      }
      if (next->in_flight) {
        CUresult result = jaxon_cu->cuEventSynchronize(next->event);
        if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuEventSynchronize(staging chunk)", result);
        next->in_flight = 0;
      }
      fill = 0;
    }
    jaxon_ring_chunk *chunk = &d->ring[d->ring_next];
    size_t piece = n - done;
    if (piece > JAXON_RING_CHUNK_BYTES - fill) piece = JAXON_RING_CHUNK_BYTES - fill;
    uint8_t *staging = (uint8_t *)host_pointer(chunk->block) + fill;
    memcpy(staging, src + done, piece);
    CUresult result = jaxon_cu->cuMemcpyHtoDAsync_v2(dst + done, staging, piece, d->streams[JAXON_STREAM_H2D]);
    if (result == CUDA_SUCCESS) result = jaxon_cu->cuEventRecord(chunk->event, d->streams[JAXON_STREAM_H2D]);
    if (result != CUDA_SUCCESS) {
      char call[96];
      snprintf(call, sizeof call, "cuMemcpyHtoDAsync_v2(%zu bytes)", piece);
      return jaxon_cuda_throw(env, call, result);
    }
    chunk->in_flight = 1;
    fill += (piece + STAGING_ALIGN - 1) / STAGING_ALIGN * STAGING_ALIGN;
    d->ring_fill = fill;
    done += piece;
  }
  return 1;
}

// cudaFromHost(device, bytes, memoryKind?) -> buffer holding a copy of `bytes`
static napi_value from_host(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  const char *fn = "cudaFromHost";
  void *data = NULL;
  size_t length = 0;
  int host = 0;
  if (!jaxon_args(env, info, fn, 2, 3, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], fn);
  if (!d || !jaxon_get_bytes(env, argv[1], fn, "bytes", &data, &length) || !memory_kind(env, argv[2], fn, &host))
    return NULL;
  // Device buffers belong to the copy stream that fills them; compute's first
  // use waits on the copy and is recorded, so reuse waits on compute.
  jaxon_cuda_buffer *b = jaxon_buffer_alloc(env, d, length, host, JAXON_STREAM_H2D, fn);
  if (!b) return NULL;
  if (host) {
    memcpy(host_pointer(b->block), data, length); // the pool hands out blocks no stream still uses
  } else if (length && (!stage_to_device(env, d, b->address, data, length) ||
                        !written_on_copy_stream(env, b, JAXON_STREAM_H2D))) {
    jaxon_buffer_free(env, b);
    free(b);
    return NULL;
  }
  return jaxon_buffer_handle(env, b);
}

static void finish_to_host(napi_env env, jaxon_completion *c) {
  napi_value array;
  void *data = NULL;
  const void *source = c->host_block ? host_pointer(c->host_block) : host_pointer(c->buffer->block);
  if (napi_create_arraybuffer(env, c->nbytes, &data, &array) == napi_ok) {
    if (c->nbytes) memcpy(data, source, c->nbytes);
    napi_resolve_deferred(env, c->deferred, array);
  } else {
    napi_value message, error;
    napi_create_string_utf8(env, "jaxon cuda: cudaToHost: cannot allocate the result ArrayBuffer", NAPI_AUTO_LENGTH,
                            &message);
    napi_create_error(env, NULL, message, &error);
    napi_reject_deferred(env, c->deferred, error);
  }
  char err[256];
  if (c->host_block) jaxon_host_free(&c->device->host_pool, c->host_block, err, sizeof err);
  if (c->buffer) {
    jaxon_cuda_buffer *b = c->buffer;
    if (--b->pending_reads == 0 && b->release_deferred) {
      b->release_deferred = 0;
      release_memory(env, b);
    }
    napi_delete_reference(env, c->keep);
  }
}

// Queues the device-to-host copy of `b` into pinned memory; returns the pinned block.
static jaxon_block *copy_out(napi_env env, jaxon_cuda_buffer *b, const char *fn) {
  jaxon_cuda_device *d = b->device;
  char err[1024] = "";
  int status = 0;
  jaxon_block *pinned = jaxon_host_alloc(&d->host_pool, b->nbytes, &status, err, sizeof err);
  if (!pinned) return jaxon_throw_alloc(env, fn, status, err), NULL;
  CUresult result = CUDA_SUCCESS;
  if (!jaxon_buffer_use(env, b, JAXON_STREAM_D2H)) goto failed;
  if (b->nbytes) {
    result = jaxon_cu->cuMemcpyDtoHAsync_v2(host_pointer(pinned), b->address, b->nbytes, d->streams[JAXON_STREAM_D2H]);
    if (result != CUDA_SUCCESS) {
      char call[96];
      snprintf(call, sizeof call, "cuMemcpyDtoHAsync_v2(%zu bytes)", b->nbytes);
      jaxon_cuda_throw(env, call, result);
      goto failed;
    }
  }
  return pinned;
failed:
  jaxon_host_free(&d->host_pool, pinned, err, sizeof err);
  return NULL;
}

// cudaToHost(buffer) -> Promise<ArrayBuffer>, settled from a host function after the copy
static napi_value to_host(napi_env env, napi_callback_info info) {
  napi_value argv[1], promise;
  const char *fn = "cudaToHost";
  if (!jaxon_args(env, info, fn, 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_buffer *b = jaxon_get_buffer(env, argv[0], fn, "buffer");
  if (!b) return NULL;
  jaxon_completion *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->device = b->device;
  c->finish = finish_to_host;
  c->nbytes = b->nbytes;
  unsigned mask = 1u << JAXON_STREAM_D2H;
  if (b->host) {
    // Pinned buffers are read in place once their last writer is done; the
    // handle is kept alive and a free waits for the read.
    mask = 1u << (b->ready_stream >= 0 ? b->ready_stream : JAXON_STREAM_COMPUTE);
    if (napi_create_reference(env, argv[0], 1, &c->keep) != napi_ok) return free(c), NULL;
    c->buffer = b;
    b->pending_reads++;
  } else if (!(c->host_block = copy_out(env, b, fn))) {
    free(c);
    return b->device->lost ? jaxon_rejected_for_loss(env, b->device) : NULL;
  }
  JAXON_CHECK(env, napi_create_promise(env, &c->deferred, &promise));
  return jaxon_complete_after(env, c, mask) ? promise : NULL;
}

// cudaToHostSync(buffer) -> ArrayBuffer; blocks this thread until the copy is done (dataSync only)
static napi_value to_host_sync(napi_env env, napi_callback_info info) {
  napi_value argv[1], array;
  const char *fn = "cudaToHostSync";
  if (!jaxon_args(env, info, fn, 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_buffer *b = jaxon_get_buffer(env, argv[0], fn, "buffer");
  if (!b) return NULL;
  jaxon_cuda_device *d = b->device;
  jaxon_block *pinned = NULL;
  int stream = JAXON_STREAM_D2H;
  if (b->host) stream = b->ready_stream >= 0 ? b->ready_stream : -1;
  else if (!(pinned = copy_out(env, b, fn))) return NULL;
  if (stream >= 0) {
    CUevent event = b->host && b->ready ? NULL : jaxon_record_event(env, d, stream);
    CUevent wait_on = event ? event : b->ready;
    CUresult result = wait_on ? jaxon_cu->cuEventSynchronize(wait_on) : CUDA_SUCCESS;
    jaxon_release_event(d, event);
    if (result != CUDA_SUCCESS) {
      char err[256];
      if (pinned) jaxon_host_free(&d->host_pool, pinned, err, sizeof err);
      return jaxon_cuda_throw(env, "cuEventSynchronize", result), NULL;
    }
  }
  void *data = NULL;
  napi_status status = napi_create_arraybuffer(env, b->nbytes, &data, &array);
  if (status == napi_ok && b->nbytes)
    memcpy(data, pinned ? host_pointer(pinned) : (void *)(uintptr_t)b->address, b->nbytes);
  char err[256];
  if (pinned) jaxon_host_free(&d->host_pool, pinned, err, sizeof err);
  JAXON_CHECK(env, status);
  return array;
}

// Copies src's bytes into dst (same size, any memory kinds): device to device
// on the compute stream, the rest on the copy stream of their direction.
static int copy_between(napi_env env, jaxon_cuda_buffer *dst, jaxon_cuda_buffer *src) {
  jaxon_cuda_device *d = src->device;
  size_t n = src->nbytes;
  int stream = !src->host && !dst->host ? JAXON_STREAM_COMPUTE : dst->host ? JAXON_STREAM_D2H : JAXON_STREAM_H2D;
  CUresult result = CUDA_SUCCESS;
  const char *call = "cuMemcpyDtoDAsync_v2";
  if (src->host && dst->host) {
    // Pinned to pinned: wait for both buffers' GPU work, then copy on the CPU.
    for (int i = 0; i < 2 && result == CUDA_SUCCESS; i++) {
      jaxon_cuda_buffer *b = i ? dst : src;
      CUevent event = b->ready ? NULL : b->ready_stream >= 0 ? jaxon_record_event(env, d, b->ready_stream) : NULL;
      CUevent wait_on = event ? event : b->ready;
      if (wait_on) result = jaxon_cu->cuEventSynchronize(wait_on);
      jaxon_release_event(d, event);
    }
    call = "cuEventSynchronize";
    if (result == CUDA_SUCCESS) {
      memcpy(host_pointer(dst->block), host_pointer(src->block), n);
      jaxon_release_event(d, dst->ready);
      dst->ready = NULL;
      dst->ready_stream = -1;
      return 1;
    }
    return jaxon_cuda_throw(env, call, result);
  }
  if (!jaxon_buffer_use(env, src, stream) || !jaxon_buffer_use(env, dst, stream)) return 0;
  if (n) {
    CUstream s = d->streams[stream];
    if (!src->host && !dst->host) {
      result = jaxon_cu->cuMemcpyDtoDAsync_v2(dst->address, src->address, n, s);
    } else if (dst->host) {
      call = "cuMemcpyDtoHAsync_v2";
      result = jaxon_cu->cuMemcpyDtoHAsync_v2(host_pointer(dst->block), src->address, n, s);
    } else {
      call = "cuMemcpyHtoDAsync_v2";
      result = jaxon_cu->cuMemcpyHtoDAsync_v2(dst->address, host_pointer(src->block), n, s);
    }
  }
  if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, call, result);
  if (stream == JAXON_STREAM_COMPUTE) {
    jaxon_buffer_written_on_compute(dst);
    return 1;
  }
  return written_on_copy_stream(env, dst, stream);
}

// cudaCopy(dst, src): queues a copy of src's bytes into dst (equal sizes, any memory kinds)
static napi_value copy(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  const char *fn = "cudaCopy";
  if (!jaxon_args(env, info, fn, 2, 2, argv, NULL)) return NULL;
  jaxon_cuda_buffer *dst = jaxon_get_buffer(env, argv[0], fn, "dst");
  jaxon_cuda_buffer *src = dst ? jaxon_get_buffer(env, argv[1], fn, "src") : NULL;
  if (!src) return NULL;
  if (dst->device != src->device || dst->nbytes != src->nbytes) {
    char message[300];
    snprintf(message, sizeof message, "jaxon cuda: %s: dst (%zu bytes, device %d) and src (%zu bytes, device %d) must "
             "have the same size on the same device", fn, dst->nbytes, dst->device->ordinal, src->nbytes,
             src->device->ordinal);
    napi_throw_range_error(env, NULL, message);
    return NULL;
  }
  copy_between(env, dst, src);
  return NULL;
}

// cudaDevicePut(buffer, memoryKind) -> a new buffer of that kind with the same bytes
static napi_value device_put(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  const char *fn = "cudaDevicePut";
  int to_host = 0;
  if (!jaxon_args(env, info, fn, 2, 2, argv, NULL)) return NULL;
  jaxon_cuda_buffer *src = jaxon_get_buffer(env, argv[0], fn, "buffer");
  if (!src || !memory_kind(env, argv[1], fn, &to_host)) return NULL;
  // Device to device runs on compute; a copy to the device fills a block of the host-to-device stream.
  int stream = src->host && !to_host ? JAXON_STREAM_H2D : JAXON_STREAM_COMPUTE;
  jaxon_cuda_buffer *dst = jaxon_buffer_alloc(env, src->device, src->nbytes, to_host, stream, fn);
  if (!dst) return NULL;
  if (!copy_between(env, dst, src)) {
    jaxon_buffer_free(env, dst);
    free(dst);
    return NULL;
  }
  return jaxon_buffer_handle(env, dst);
}

static void finish_ready(napi_env env, jaxon_completion *c) {
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_resolve_deferred(env, c->deferred, undefined);
}

// cudaBlockUntilReady(buffer) -> Promise<void>, settled once the buffer's last write is done
static napi_value block_until_ready(napi_env env, napi_callback_info info) {
  napi_value argv[1], promise;
  if (!jaxon_args(env, info, "cudaBlockUntilReady", 1, 1, argv, NULL)) return NULL;
  jaxon_cuda_buffer *b = jaxon_get_buffer(env, argv[0], "cudaBlockUntilReady", "buffer");
  if (!b) return NULL;
  jaxon_completion *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->device = b->device;
  c->finish = finish_ready;
  JAXON_CHECK(env, napi_create_promise(env, &c->deferred, &promise));
  if (b->ready_stream < 0) {
    finish_ready(env, c);
    free(c);
    return promise;
  }
  return jaxon_complete_after(env, c, 1u << b->ready_stream) ? promise : NULL;
}

// cudaMemset(buffer, byte): fills the buffer on the compute stream
static napi_value memset_buffer(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int32_t value = 0;
  if (!jaxon_args(env, info, "cudaMemset", 2, 2, argv, NULL)) return NULL;
  jaxon_cuda_buffer *b = jaxon_get_buffer(env, argv[0], "cudaMemset", "buffer");
  if (!b || !jaxon_get_i32(env, argv[1], "cudaMemset", "value", &value)) return NULL;
  if (!jaxon_buffer_use(env, b, JAXON_STREAM_COMPUTE)) return NULL;
  CUresult result = b->nbytes ? jaxon_cu->cuMemsetD8Async(b->address, (unsigned char)value, b->nbytes,
                                                           b->device->streams[JAXON_STREAM_COMPUTE])
                              : CUDA_SUCCESS;
  if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuMemsetD8Async", result), NULL;
  jaxon_buffer_written_on_compute(b);
  return NULL;
}

// cudaCopyBenchmark(device, bytes, 'h2d'|'d2h', 'pinned'|'pageable', iterations) -> Float64Array of ms per copy:
// a plain cuMemcpy{HtoD,DtoH}Async between a cuMemAlloc allocation and cuMemHostAlloc or malloc memory on the
// copy stream, each copy between two timing events, after one untimed warm-up copy. Synchronous (a benchmark).
static napi_value copy_benchmark(napi_env env, napi_callback_info info) {
  napi_value argv[5], array, buffer;
  const char *fn = "cudaCopyBenchmark";
  uint64_t bytes = 0;
  int32_t iterations = 0;
  char *direction = NULL, *host = NULL;
  if (!jaxon_args(env, info, fn, 5, 5, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], fn);
  if (!d || !jaxon_get_u64(env, argv[1], fn, "bytes", &bytes) || !jaxon_get_string(env, argv[2], fn, "direction", &direction))
    return NULL;
  int ok = jaxon_get_string(env, argv[3], fn, "host", &host) && jaxon_get_i32(env, argv[4], fn, "iterations", &iterations);
  int h2d = ok && !strcmp(direction, "h2d"), pinned = ok && !strcmp(host, "pinned");
  if (ok && ((!h2d && strcmp(direction, "d2h")) || (!pinned && strcmp(host, "pageable")) || iterations < 1 || bytes == 0)) {
    char message[300];
    snprintf(message, sizeof message, "jaxon cuda: %s: direction must be 'h2d' or 'd2h', host 'pinned' or 'pageable', "
             "iterations >= 1 and bytes > 0; got '%.20s', '%.20s', %d, %llu", fn, direction, host, iterations,
             (unsigned long long)bytes);
    napi_throw_range_error(env, NULL, message);
    ok = 0;
  }
  free(direction);
  free(host);
  if (!ok) return NULL;
  if (!jaxon_cu->cuEventElapsedTime) return jaxon_throw(env, "jaxon cuda: cudaCopyBenchmark: this driver has no cuEventElapsedTime"), NULL;
  CUstream stream = d->streams[h2d ? JAXON_STREAM_H2D : JAXON_STREAM_D2H];
  CUdeviceptr dev = 0;
  void *mem = NULL;
  CUevent start = NULL, end = NULL;
  napi_value result = NULL;
  const char *call = "cuMemAlloc_v2";
  CUresult status = jaxon_cu->cuMemAlloc_v2(&dev, bytes);
  if (status == CUDA_SUCCESS) {
    call = pinned ? "cuMemHostAlloc" : "malloc";
    if (pinned) status = jaxon_cu->cuMemHostAlloc(&mem, bytes, 0);
    else if (!(mem = malloc(bytes))) status = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (status == CUDA_SUCCESS) {
    memset(mem, 1, bytes); // touched, so no copy pays for first-touch page faults
    call = "cuEventCreate";
    status = jaxon_cu->cuEventCreate(&start, CU_EVENT_DEFAULT);
    if (status == CUDA_SUCCESS) status = jaxon_cu->cuEventCreate(&end, CU_EVENT_DEFAULT);
  }
  double *times = NULL;
  if (status == CUDA_SUCCESS && napi_create_arraybuffer(env, (size_t)iterations * sizeof(double), (void **)&times, &buffer) != napi_ok) {
    jaxon_throw(env, "jaxon cuda: cudaCopyBenchmark: cannot allocate the result");
    goto done;
  }
  for (int32_t i = -1; i < iterations && status == CUDA_SUCCESS; i++) {
    call = "cuEventRecord";
    status = jaxon_cu->cuEventRecord(start, stream);
    if (status == CUDA_SUCCESS) {
      call = h2d ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2";
      status = h2d ? jaxon_cu->cuMemcpyHtoDAsync_v2(dev, mem, bytes, stream) : jaxon_cu->cuMemcpyDtoHAsync_v2(mem, dev, bytes, stream);
    }
    if (status == CUDA_SUCCESS) status = jaxon_cu->cuEventRecord(end, stream);
    if (status == CUDA_SUCCESS) {
      call = "cuEventSynchronize";
      status = jaxon_cu->cuEventSynchronize(end);
    }
    float ms = 0;
    if (status == CUDA_SUCCESS) {
      call = "cuEventElapsedTime";
      status = jaxon_cu->cuEventElapsedTime(&ms, start, end);
    }
    if (i >= 0) times[i] = ms;
  }
  if (status != CUDA_SUCCESS) {
    jaxon_cuda_throw(env, call, status);
    goto done;
  }
  if (napi_create_typedarray(env, napi_float64_array, (size_t)iterations, buffer, 0, &array) == napi_ok) result = array;
done:
  if (start) jaxon_cu->cuEventDestroy_v2(start);
  if (end) jaxon_cu->cuEventDestroy_v2(end);
  if (mem && pinned) jaxon_cu->cuMemFreeHost(mem);
  else free(mem);
  if (dev) jaxon_cu->cuMemFree_v2(dev);
  return result;
}

void jaxon_init_cuda_memory(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "cudaCopyBenchmark", copy_benchmark);
  jaxon_export(env, exports, "cudaAlloc", cuda_alloc);
  jaxon_export(env, exports, "cudaFree", cuda_free);
  jaxon_export(env, exports, "cudaBufferInfo", buffer_info);
  jaxon_export(env, exports, "cudaFromHost", from_host);
  jaxon_export(env, exports, "cudaToHost", to_host);
  jaxon_export(env, exports, "cudaToHostSync", to_host_sync);
  jaxon_export(env, exports, "cudaCopy", copy);
  jaxon_export(env, exports, "cudaDevicePut", device_put);
  jaxon_export(env, exports, "cudaBlockUntilReady", block_until_ready);
  jaxon_export(env, exports, "cudaMemset", memset_buffer);
}
