// Test hooks: the device caching allocator and the pinned-host pool
// (cuda_alloc.c) driven from JS over a fake device, so their policy (best
// fit, split and merge, pools, stream-tied reuse, events, out-of-memory
// retry, stats) is tested on machines without a GPU. The fake device hands
// out addresses from a counter (no memory behind them) up to an optional
// capacity; its events complete only when the test says so.
// Used by test/cuda-runtime.test.ts only.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_napi.h"

typedef struct fake_event {
  uint64_t stream;
  int done;
  struct fake_event *next;
} fake_event;

typedef struct fake_allocator {
  int host; /* a pinned-host pool instead of a device allocator */
  jaxon_allocator device;
  jaxon_host_pool pool;
  uint64_t next_address, capacity, reserved;
  fake_event *events; /* recorded and not yet released */
  jaxon_block **live;
  size_t num_live, cap_live;
} fake_allocator;

static int fake_segment_alloc(void *ctx, size_t size, uint64_t *address, char *err, size_t err_size) {
  fake_allocator *f = ctx;
  if (f->capacity && f->reserved + size > f->capacity) return JAXON_ALLOC_OUT_OF_MEMORY;
  *address = f->next_address;
  f->next_address += (size + 0xfffff) & ~(uint64_t)0xfffff; // 1 MiB apart, like a real device
  f->reserved += size;
  return JAXON_ALLOC_OK;
}

static void fake_segment_free(void *ctx, uint64_t address, size_t size) {
  ((fake_allocator *)ctx)->reserved -= size;
}

static int fake_event_record(void *ctx, uint64_t stream, void **event, char *err, size_t err_size) {
  fake_allocator *f = ctx;
  fake_event *e = calloc(1, sizeof *e);
  if (!e) {
    snprintf(err, err_size, "out of host memory");
    return JAXON_ALLOC_ERROR;
  }
  e->stream = stream;
  e->next = f->events;
  f->events = e;
  *event = e;
  return JAXON_ALLOC_OK;
}

static int fake_event_query(void *ctx, void *event) {
  return ((fake_event *)event)->done;
}

// A real event synchronize waits until the GPU gets there; here that is now.
static void fake_event_synchronize(void *ctx, void *event) {
  ((fake_event *)event)->done = 1;
}

static void fake_event_release(void *ctx, void *event) {
  fake_allocator *f = ctx;
  for (fake_event **p = &f->events; *p; p = &(*p)->next) {
    if (*p == event) {
      *p = ((fake_event *)event)->next;
      free(event);
      return;
    }
  }
}

static void finalize_fake(napi_env env, void *data, void *hint) {
  fake_allocator *f = data;
  if (f->host) jaxon_host_pool_destroy(&f->pool);
  else jaxon_allocator_destroy(&f->device);
  while (f->events) {
    fake_event *next = f->events->next;
    free(f->events);
    f->events = next;
  }
  free(f->live);
  free(f);
}

static fake_allocator *get_fake(napi_env env, napi_value value, const char *fn) {
  return jaxon_unwrap_handle(env, value, JAXON_HANDLE_TEST_ALLOCATOR, fn, "allocator");
}

// testAllocatorCreate(kind: 'device' | 'host', limitBytes, capacityBytes) -> handle
static napi_value create(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  const char *fn = "testAllocatorCreate";
  char *kind = NULL;
  uint64_t limit = 0, capacity = 0;
  if (!jaxon_args(env, info, fn, 3, 3, argv, NULL) || !jaxon_get_string(env, argv[0], fn, "kind", &kind)) return NULL;
  int host = strcmp(kind, "host") == 0;
  int known = host || strcmp(kind, "device") == 0;
  free(kind);
  if (!known) {
    napi_throw_type_error(env, NULL, "jaxon cuda: testAllocatorCreate: kind must be 'device' or 'host'");
    return NULL;
  }
  if (!jaxon_get_u64(env, argv[1], fn, "limitBytes", &limit) || !jaxon_get_u64(env, argv[2], fn, "capacityBytes", &capacity))
    return NULL;
  fake_allocator *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->host = host;
  f->capacity = capacity;
  f->next_address = (uint64_t)1 << 32;
  jaxon_alloc_vtable vt = {f, fake_segment_alloc, fake_segment_free, fake_event_record,
                           fake_event_query, fake_event_synchronize, fake_event_release};
  if (host) jaxon_host_pool_init(&f->pool, &vt, limit);
  else jaxon_allocator_init(&f->device, &vt, limit);
  return jaxon_wrap_handle(env, JAXON_HANDLE_TEST_ALLOCATOR, f, finalize_fake);
}

static jaxon_block *find_live(napi_env env, fake_allocator *f, napi_value value, const char *fn, size_t *index) {
  uint64_t address;
  if (!jaxon_get_u64(env, value, fn, "address", &address)) return NULL;
  for (size_t i = 0; i < f->num_live; i++) {
    if (f->live[i]->address == address) {
      if (index) *index = i;
      return f->live[i];
    }
  }
  char message[256];
  snprintf(message, sizeof message, "jaxon cuda: %s: no live block at address %llu", fn, (unsigned long long)address);
  jaxon_throw(env, message);
  return NULL;
}

// testAllocatorAlloc(allocator, size, stream) -> { address, size }
static napi_value alloc(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  const char *fn = "testAllocatorAlloc";
  uint64_t size = 0, stream = 0;
  if (!jaxon_args(env, info, fn, 2, 3, argv, NULL)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], fn);
  if (!f || !jaxon_get_u64(env, argv[1], fn, "size", &size)) return NULL;
  if (!f->host && !jaxon_get_u64(env, argv[2], fn, "stream", &stream)) return NULL;
  char err[512] = "";
  int status = 0;
  jaxon_block *b = f->host ? jaxon_host_alloc(&f->pool, size, &status, err, sizeof err)
                           : jaxon_alloc(&f->device, size, stream, &status, err, sizeof err);
  if (!b) {
    jaxon_throw_code(env, status == JAXON_ALLOC_OUT_OF_MEMORY ? "RESOURCE_EXHAUSTED" : "CUDA_ALLOCATOR", err);
    return NULL;
  }
  if (f->num_live == f->cap_live) {
    size_t capacity = f->cap_live ? f->cap_live * 2 : 32;
    jaxon_block **grown = realloc(f->live, capacity * sizeof *grown);
    if (!grown) return NULL;
    f->live = grown;
    f->cap_live = capacity;
  }
  f->live[f->num_live++] = b;
  napi_value result;
  JAXON_CHECK(env, napi_create_object(env, &result));
  jaxon_set_number(env, result, "address", (double)b->address);
  jaxon_set_number(env, result, "size", (double)b->size);
  return result;
}

// testAllocatorFree(allocator, address)
static napi_value release(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  const char *fn = "testAllocatorFree";
  size_t index = 0;
  if (!jaxon_args(env, info, fn, 2, 2, argv, NULL)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], fn);
  jaxon_block *b = f ? find_live(env, f, argv[1], fn, &index) : NULL;
  if (!b) return NULL;
  f->live[index] = f->live[--f->num_live];
  char err[512] = "";
  int status = f->host ? jaxon_host_free(&f->pool, b, err, sizeof err) : jaxon_free(&f->device, b, err, sizeof err);
  if (status != JAXON_ALLOC_OK) jaxon_throw(env, err);
  return NULL;
}

// testAllocatorRecordUse(allocator, address, stream)
static napi_value record_use(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  const char *fn = "testAllocatorRecordUse";
  uint64_t stream = 0;
  if (!jaxon_args(env, info, fn, 3, 3, argv, NULL)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], fn);
  jaxon_block *b = f ? find_live(env, f, argv[1], fn, NULL) : NULL;
  if (!b || !jaxon_get_u64(env, argv[2], fn, "stream", &stream)) return NULL;
  jaxon_alloc_record_use(b, stream);
  return NULL;
}

// testAllocatorCompleteEvents(allocator, stream?) -> how many pending events completed
static napi_value complete_events(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  const char *fn = "testAllocatorCompleteEvents";
  size_t argc = 0;
  uint64_t stream = 0;
  if (!jaxon_args(env, info, fn, 1, 2, argv, &argc)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], fn);
  if (!f || (argc > 1 && !jaxon_get_u64(env, argv[1], fn, "stream", &stream))) return NULL;
  int completed = 0;
  for (fake_event *e = f->events; e; e = e->next) {
    if (!e->done && (argc < 2 || e->stream == stream)) {
      e->done = 1;
      completed++;
    }
  }
  napi_value result;
  JAXON_CHECK(env, napi_create_int32(env, completed, &result));
  return result;
}

// testAllocatorStats(allocator) -> stats, with pendingEvents and fakeReservedBytes
static napi_value stats(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "testAllocatorStats", 1, 1, argv, NULL)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], "testAllocatorStats");
  if (!f) return NULL;
  jaxon_alloc_stats s = f->host ? jaxon_host_get_stats(&f->pool) : jaxon_alloc_get_stats(&f->device);
  napi_value result = jaxon_stats_object(env, &s);
  int pending = 0;
  for (fake_event *e = f->events; e; e = e->next) pending += !e->done;
  if (result) {
    jaxon_set_number(env, result, "pendingEvents", pending);
    jaxon_set_number(env, result, "fakeReservedBytes", (double)f->reserved);
  }
  return result;
}

// testAllocatorEmptyCache(allocator) -> bytes released
static napi_value empty_cache(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "testAllocatorEmptyCache", 1, 1, argv, NULL)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], "testAllocatorEmptyCache");
  if (!f) return NULL;
  uint64_t released = f->host ? jaxon_host_empty_cache(&f->pool) : jaxon_alloc_empty_cache(&f->device);
  napi_value result;
  JAXON_CHECK(env, napi_create_double(env, (double)released, &result));
  return result;
}

typedef struct {
  napi_env env;
  napi_value segments;
  napi_value current;
  size_t current_index;
  uint32_t count;
} visit_state;

static void visit_block(void *user, size_t segment, const jaxon_block *b) {
  visit_state *v = user;
  napi_env env = v->env;
  if (!v->current || segment != v->current_index) {
    napi_value blocks;
    napi_create_object(env, &v->current);
    napi_create_array(env, &blocks);
    napi_set_named_property(env, v->current, "blocks", blocks);
    jaxon_set_number(env, v->current, "address", (double)b->address);
    jaxon_set_number(env, v->current, "stream", (double)b->stream);
    jaxon_set_string(env, v->current, "pool", b->small ? "small" : "large");
    napi_set_element(env, v->segments, v->count++, v->current);
    v->current_index = segment;
  }
  napi_value blocks, block;
  uint32_t length = 0;
  napi_get_named_property(env, v->current, "blocks", &blocks);
  napi_get_array_length(env, blocks, &length);
  napi_create_object(env, &block);
  jaxon_set_number(env, block, "address", (double)b->address);
  jaxon_set_number(env, block, "size", (double)b->size);
  jaxon_set_string(env, block, "state",
                   b->state == JAXON_BLOCK_ALLOCATED ? "allocated" : b->state == JAXON_BLOCK_PENDING ? "pending" : "free");
  napi_set_element(env, blocks, length, block);
}

// testAllocatorSegments(allocator) -> [{ address, stream, pool, blocks: [{ address, size, state }] }] (device only)
static napi_value segments(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!jaxon_args(env, info, "testAllocatorSegments", 1, 1, argv, NULL)) return NULL;
  fake_allocator *f = get_fake(env, argv[0], "testAllocatorSegments");
  if (!f) return NULL;
  visit_state v = {env, NULL, NULL, 0, 0};
  JAXON_CHECK(env, napi_create_array(env, &v.segments));
  if (!f->host) jaxon_alloc_visit(&f->device, visit_block, &v);
  return v.segments;
}

void jaxon_init_cuda_test_hooks(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "testAllocatorCreate", create);
  jaxon_export(env, exports, "testAllocatorAlloc", alloc);
  jaxon_export(env, exports, "testAllocatorFree", release);
  jaxon_export(env, exports, "testAllocatorRecordUse", record_use);
  jaxon_export(env, exports, "testAllocatorCompleteEvents", complete_events);
  jaxon_export(env, exports, "testAllocatorStats", stats);
  jaxon_export(env, exports, "testAllocatorEmptyCache", empty_cache);
  jaxon_export(env, exports, "testAllocatorSegments", segments);
}
