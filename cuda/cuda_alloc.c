// The device caching allocator and the pinned-host pool (see cuda_alloc.h for
// the design and where it comes from). Free blocks of each pool sit in one
// array sorted by (stream, size, address), so a best fit is one binary search.
#include "cuda_alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t round_up(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

void jaxon_format_bytes(uint64_t bytes, char *out, size_t out_size) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    unit++;
  }
  if (unit == 0) snprintf(out, out_size, "%llu B", (unsigned long long)bytes);
  else snprintf(out, out_size, "%.2f %s", value, units[unit]);
}

static jaxon_block *new_block(uint64_t address, size_t size, uint64_t stream, int small) {
  jaxon_block *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->address = address;
  b->size = size;
  b->stream = stream;
  b->small = small;
  b->state = JAXON_BLOCK_FREE;
  return b;
}

static void delete_block(jaxon_block *b) {
  free(b->uses);
  free(b->events);
  free(b);
}

// ---- sorted free-block pools ----

static int block_before(const jaxon_block *x, uint64_t stream, size_t size, uint64_t address) {
  if (x->stream != stream) return x->stream < stream;
  if (x->size != size) return x->size < size;
  return x->address < address;
}

static size_t pool_lower_bound(const jaxon_block_pool *p, uint64_t stream, size_t size, uint64_t address) {
  size_t lo = 0, hi = p->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (block_before(p->blocks[mid], stream, size, address)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int pool_insert(jaxon_block_pool *p, jaxon_block *b) {
  if (p->count == p->capacity) {
    size_t capacity = p->capacity ? p->capacity * 2 : 64;
    jaxon_block **grown = realloc(p->blocks, capacity * sizeof *grown);
    if (!grown) return 0;
    p->blocks = grown;
    p->capacity = capacity;
  }
  size_t at = pool_lower_bound(p, b->stream, b->size, b->address);
  memmove(p->blocks + at + 1, p->blocks + at, (p->count - at) * sizeof *p->blocks);
  p->blocks[at] = b;
  p->count++;
  return 1;
}

static void pool_remove(jaxon_block_pool *p, jaxon_block *b) {
  size_t at = pool_lower_bound(p, b->stream, b->size, b->address);
  if (at < p->count && p->blocks[at] == b) {
    memmove(p->blocks + at, p->blocks + at + 1, (p->count - at - 1) * sizeof *p->blocks);
    p->count--;
  }
}

// The smallest free block of `stream` with at least `size` bytes (lowest address among equals).
static jaxon_block *pool_best_fit(jaxon_block_pool *p, uint64_t stream, size_t size) {
  size_t at = pool_lower_bound(p, stream, size, 0);
  if (at < p->count && p->blocks[at]->stream == stream) return p->blocks[at];
  return NULL;
}

static jaxon_block_pool *pool_of(jaxon_allocator *a, const jaxon_block *b) {
  return b->small ? &a->small : &a->large;
}

// ---- events and pending frees (shared by both allocators) ----

static int push_event(jaxon_block *b, void *event) {
  if (b->num_events == b->cap_events) {
    int capacity = b->cap_events ? b->cap_events * 2 : 4;
    void **grown = realloc(b->events, (size_t)capacity * sizeof *grown);
    if (!grown) return 0;
    b->events = grown;
    b->cap_events = capacity;
  }
  b->events[b->num_events++] = event;
  return 1;
}

int jaxon_alloc_record_use(jaxon_block *b, uint64_t stream) {
  if (stream == b->stream) return 1;
  for (int i = 0; i < b->num_uses; i++)
    if (b->uses[i] == stream) return 1;
  if (b->num_uses == b->cap_uses) {
    int capacity = b->cap_uses ? b->cap_uses * 2 : 4;
    uint64_t *grown = realloc(b->uses, (size_t)capacity * sizeof *grown);
    if (!grown) return 0;
    b->uses = grown;
    b->cap_uses = capacity;
  }
  b->uses[b->num_uses++] = stream;
  return 1;
}

// Records one event per stream in `streams`; on failure the block must never be reused.
static int record_events(const jaxon_alloc_vtable *vt, jaxon_block *b, const uint64_t *streams, int count,
                         char *err, size_t err_size) {
  for (int i = 0; i < count; i++) {
    void *event = NULL;
    if (vt->event_record(vt->ctx, streams[i], &event, err, err_size) != JAXON_ALLOC_OK) return 0;
    if (!push_event(b, event)) {
      vt->event_release(vt->ctx, event);
      snprintf(err, err_size, "out of host memory recording an event");
      return 0;
    }
  }
  return 1;
}

static void pending_append(jaxon_block **head, jaxon_block **tail, jaxon_block *b) {
  b->pending_next = NULL;
  if (*tail) (*tail)->pending_next = b;
  else *head = b;
  *tail = b;
}

// Drops completed events; returns 1 once none remain. `wait` synchronizes instead of polling.
static int events_done(const jaxon_alloc_vtable *vt, jaxon_block *b, int wait) {
  int kept = 0;
  for (int i = 0; i < b->num_events; i++) {
    void *event = b->events[i];
    if (wait) vt->event_synchronize(vt->ctx, event);
    if (vt->event_query(vt->ctx, event) == 0) {
      b->events[kept++] = event;
    } else {
      vt->event_release(vt->ctx, event);
    }
  }
  b->num_events = kept;
  return kept == 0;
}

// ---- device allocator ----

void jaxon_allocator_init(jaxon_allocator *a, const jaxon_alloc_vtable *vt, uint64_t limit) {
  memset(a, 0, sizeof *a);
  a->vt = *vt;
  a->stats.bytes_limit = limit;
}

static int segments_add(jaxon_allocator *a, jaxon_block *head) {
  if (a->num_segments == a->cap_segments) {
    size_t capacity = a->cap_segments ? a->cap_segments * 2 : 16;
    jaxon_block **grown = realloc(a->segments, capacity * sizeof *grown);
    if (!grown) return 0;
    a->segments = grown;
    a->cap_segments = capacity;
  }
  a->segments[a->num_segments++] = head;
  return 1;
}

static void release_segment(jaxon_allocator *a, size_t index) {
  jaxon_block *head = a->segments[index];
  a->vt.segment_free(a->vt.ctx, head->address, head->size);
  a->stats.bytes_reserved -= head->size;
  a->stats.num_segments--;
  pool_remove(pool_of(a, head), head);
  delete_block(head);
  a->segments[index] = a->segments[--a->num_segments];
}

// Forgets every block; `release` gives segments back and events to their pool (a destroy), else the memory and
// events are already gone with their context (an abandon after a reset).
static void drop_all(jaxon_allocator *a, int release) {
  for (jaxon_block *b = a->pending_head; b && release; b = b->pending_next) {
    for (int i = 0; i < b->num_events; i++) a->vt.event_release(a->vt.ctx, b->events[i]);
    b->num_events = 0;
  }
  for (size_t s = 0; s < a->num_segments; s++) {
    jaxon_block *head = a->segments[s];
    size_t total = 0;
    for (jaxon_block *b = head; b;) {
      jaxon_block *next = b->next;
      total += b->size;
      if (b != head) delete_block(b);
      b = next;
    }
    if (release) a->vt.segment_free(a->vt.ctx, head->address, total);
    delete_block(head);
  }
  free(a->segments);
  free(a->small.blocks);
  free(a->large.blocks);
  memset(a, 0, sizeof *a);
}

void jaxon_allocator_destroy(jaxon_allocator *a) {
  drop_all(a, 1);
}

void jaxon_allocator_abandon(jaxon_allocator *a) {
  drop_all(a, 0);
}

void jaxon_block_discard(jaxon_block *b) {
  delete_block(b);
}

// Returns a block to the cache, merging it with free neighbours of its segment.
static void return_to_cache(jaxon_allocator *a, jaxon_block *b) {
  jaxon_block_pool *pool = pool_of(a, b);
  if (a->exact && !b->prev && !b->next) { // its own segment: back to the driver at once
    b->state = JAXON_BLOCK_FREE;
    pool_insert(pool, b);
    for (size_t s = 0; s < a->num_segments; s++)
      if (a->segments[s] == b) return release_segment(a, s);
    return;
  }
  b->state = JAXON_BLOCK_FREE;
  b->num_uses = 0;
  b->requested = 0;
  jaxon_block *next = b->next;
  if (next && next->state == JAXON_BLOCK_FREE) {
    pool_remove(pool, next);
    b->size += next->size;
    b->next = next->next;
    if (b->next) b->next->prev = b;
    delete_block(next);
  }
  jaxon_block *prev = b->prev;
  if (prev && prev->state == JAXON_BLOCK_FREE) {
    pool_remove(pool, prev);
    prev->size += b->size;
    prev->next = b->next;
    if (prev->next) prev->next->prev = prev;
    delete_block(b);
    b = prev;
  }
  pool_insert(pool, b);
}

static void process_pending(jaxon_allocator *a, int wait) {
  jaxon_block *b = a->pending_head, *keep_head = NULL, *keep_tail = NULL;
  while (b) {
    jaxon_block *next = b->pending_next;
    if (events_done(&a->vt, b, wait)) {
      a->stats.bytes_pending_free -= b->size;
      return_to_cache(a, b);
    } else {
      pending_append(&keep_head, &keep_tail, b);
    }
    b = next;
  }
  a->pending_head = keep_head;
  a->pending_tail = keep_tail;
}

void jaxon_alloc_process_events(jaxon_allocator *a) {
  if (a->pending_head) process_pending(a, 0);
}

uint64_t jaxon_alloc_empty_cache(jaxon_allocator *a) {
  jaxon_alloc_process_events(a);
  uint64_t released = 0;
  for (size_t s = a->num_segments; s-- > 0;) {
    jaxon_block *head = a->segments[s];
    if (head->state == JAXON_BLOCK_FREE && !head->next) {
      released += head->size;
      release_segment(a, s);
    }
  }
  return released;
}

static size_t segment_size_for(size_t rounded) {
  if (rounded <= JAXON_ALLOC_SMALL_REQUEST) return JAXON_ALLOC_SMALL_SEGMENT;
  if (rounded < JAXON_ALLOC_MIN_LARGE_ALLOC) return JAXON_ALLOC_LARGE_SEGMENT;
  return round_up(rounded, JAXON_ALLOC_LARGE_ROUND);
}

// Reserves a segment unless that would pass the limit or the device refuses.
static int reserve(jaxon_allocator *a, size_t size, uint64_t *address, char *err, size_t err_size) {
  if (a->stats.bytes_limit && a->stats.bytes_reserved + size > a->stats.bytes_limit) return JAXON_ALLOC_OUT_OF_MEMORY;
  return a->vt.segment_alloc(a->vt.ctx, size, address, err, err_size);
}

static void out_of_memory_message(jaxon_allocator *a, size_t size, char *err, size_t err_size) {
  char want[32], used[32], cached[32], pending[32], limit[32];
  uint64_t in_use = a->stats.bytes_in_use;
  jaxon_format_bytes(size, want, sizeof want);
  jaxon_format_bytes(in_use, used, sizeof used);
  jaxon_format_bytes(a->stats.bytes_reserved - in_use - a->stats.bytes_pending_free, cached, sizeof cached);
  jaxon_format_bytes(a->stats.bytes_pending_free, pending, sizeof pending);
  if (a->stats.bytes_limit) jaxon_format_bytes(a->stats.bytes_limit, limit, sizeof limit);
  else snprintf(limit, sizeof limit, "none");
  snprintf(err, err_size,
           "out of memory allocating %zu bytes (%s): %llu bytes (%s) in use in %llu buffers, %s reserved but "
           "unused after emptying the cache, %s waiting for other streams, limit %s",
           size, want, (unsigned long long)in_use, used, (unsigned long long)a->stats.num_live_blocks, cached,
           pending, limit);
}

jaxon_block *jaxon_alloc(jaxon_allocator *a, size_t size, uint64_t stream, int *status, char *err, size_t err_size) {
  jaxon_alloc_process_events(a);
  size_t rounded = size ? round_up(size, JAXON_ALLOC_ROUND) : JAXON_ALLOC_ROUND;
  int small = rounded <= JAXON_ALLOC_SMALL_REQUEST;
  jaxon_block_pool *pool = small ? &a->small : &a->large;
  jaxon_block *b = a->exact ? NULL : pool_best_fit(pool, stream, rounded);
  if (a->exact) rounded = size ? size : 1;
  if (b) {
    pool_remove(pool, b);
  } else {
    size_t segment = a->exact ? rounded : segment_size_for(rounded);
    uint64_t address = 0;
    int result = reserve(a, segment, &address, err, err_size);
    if (result == JAXON_ALLOC_OUT_OF_MEMORY) {
      // Wait for frees held by other streams: they may fit, or free whole segments.
      a->stats.num_cache_flushes++;
      if (a->pending_head) process_pending(a, 1);
      b = pool_best_fit(pool, stream, rounded);
      if (b) {
        pool_remove(pool, b);
      } else {
        jaxon_alloc_empty_cache(a);
        result = reserve(a, segment, &address, err, err_size);
        size_t exact = round_up(rounded, JAXON_ALLOC_LARGE_ROUND);
        if (result == JAXON_ALLOC_OUT_OF_MEMORY && !small && exact < segment) {
          segment = exact;
          result = reserve(a, segment, &address, err, err_size);
        }
      }
    }
    if (!b) {
      if (result != JAXON_ALLOC_OK) {
        if (result == JAXON_ALLOC_OUT_OF_MEMORY) {
          a->stats.num_ooms++;
          out_of_memory_message(a, size, err, err_size);
        }
        *status = result;
        return NULL;
      }
      b = new_block(address, segment, stream, small);
      if (!b || !segments_add(a, b)) {
        a->vt.segment_free(a->vt.ctx, address, segment);
        free(b);
        snprintf(err, err_size, "out of host memory tracking a segment");
        *status = JAXON_ALLOC_ERROR;
        return NULL;
      }
      a->stats.bytes_reserved += segment;
      a->stats.num_segments++;
      if (a->stats.bytes_reserved > a->stats.peak_bytes_reserved) a->stats.peak_bytes_reserved = a->stats.bytes_reserved;
    }
  }
  // Split off the rest when it is worth keeping: any remainder in the small
  // pool, more than a small request's worth in the large one.
  size_t remaining = b->size - rounded;
  if (small ? remaining >= JAXON_ALLOC_ROUND : remaining > JAXON_ALLOC_SMALL_REQUEST) {
    jaxon_block *rest = new_block(b->address + rounded, remaining, stream, small);
    if (rest) {
      rest->prev = b;
      rest->next = b->next;
      if (rest->next) rest->next->prev = rest;
      b->next = rest;
      b->size = rounded;
      pool_insert(pool, rest);
    }
  }
  b->state = JAXON_BLOCK_ALLOCATED;
  b->requested = size;
  a->stats.bytes_in_use += b->size;
  if (a->stats.bytes_in_use > a->stats.peak_bytes_in_use) a->stats.peak_bytes_in_use = a->stats.bytes_in_use;
  a->stats.bytes_requested += size;
  if (a->stats.bytes_requested > a->stats.peak_bytes_requested) a->stats.peak_bytes_requested = a->stats.bytes_requested;
  if (b->size > a->stats.largest_alloc_size) a->stats.largest_alloc_size = b->size;
  a->stats.num_allocs++;
  a->stats.num_live_blocks++;
  *status = JAXON_ALLOC_OK;
  return b;
}

int jaxon_free(jaxon_allocator *a, jaxon_block *b, char *err, size_t err_size) {
  if (!b || b->state != JAXON_BLOCK_ALLOCATED) {
    snprintf(err, err_size, "free of a block that is not allocated (double free?)");
    return JAXON_ALLOC_ERROR;
  }
  a->stats.bytes_in_use -= b->size;
  a->stats.bytes_requested -= b->requested;
  a->stats.num_live_blocks--;
  if (b->num_uses == 0) {
    return_to_cache(a, b);
    return JAXON_ALLOC_OK;
  }
  b->state = JAXON_BLOCK_PENDING;
  a->stats.bytes_pending_free += b->size;
  if (!record_events(&a->vt, b, b->uses, b->num_uses, err, err_size)) {
    // Without an event we cannot know when the other stream is done: the
    // block stays pending outside the list, never reused until destroy.
    return JAXON_ALLOC_ERROR;
  }
  b->num_uses = 0;
  pending_append(&a->pending_head, &a->pending_tail, b);
  return JAXON_ALLOC_OK;
}

jaxon_alloc_stats jaxon_alloc_get_stats(jaxon_allocator *a) {
  jaxon_alloc_process_events(a);
  uint64_t largest = 0;
  for (size_t i = 0; i < a->small.count; i++)
    if (a->small.blocks[i]->size > largest) largest = a->small.blocks[i]->size;
  for (size_t i = 0; i < a->large.count; i++)
    if (a->large.blocks[i]->size > largest) largest = a->large.blocks[i]->size;
  a->stats.largest_free_block = largest;
  return a->stats;
}

void jaxon_alloc_visit(jaxon_allocator *a, void (*fn)(void *user, size_t segment, const jaxon_block *b), void *user) {
  for (size_t s = 0; s < a->num_segments; s++)
    for (const jaxon_block *b = a->segments[s]; b; b = b->next) fn(user, s, b);
}

// ---- pinned-host pool ----

static int class_log2(size_t size) {
  int k = JAXON_HOST_MIN_CLASS_LOG2;
  while (k < JAXON_HOST_MAX_CLASS_LOG2 && ((size_t)1 << k) < size) k++;
  return ((size_t)1 << k) >= size ? k : -1;
}

void jaxon_host_pool_init(jaxon_host_pool *p, const jaxon_alloc_vtable *vt, uint64_t limit) {
  memset(p, 0, sizeof *p);
  p->vt = *vt;
  p->stats.bytes_limit = limit;
}

static void host_release_block(jaxon_host_pool *p, jaxon_block *b) {
  p->vt.segment_free(p->vt.ctx, b->address, b->size);
  p->stats.bytes_reserved -= b->size;
  p->stats.num_segments--;
  delete_block(b);
}

uint64_t jaxon_host_empty_cache(jaxon_host_pool *p) {
  jaxon_host_process_events(p);
  uint64_t released = 0;
  for (int k = 0; k <= JAXON_HOST_MAX_CLASS_LOG2; k++) {
    while (p->free_lists[k]) {
      jaxon_block *b = p->free_lists[k];
      p->free_lists[k] = b->next;
      released += b->size;
      host_release_block(p, b);
    }
  }
  return released;
}

void jaxon_host_pool_abandon(jaxon_host_pool *p) {
  for (jaxon_block *b = p->pending_head; b;) {
    jaxon_block *next = b->pending_next;
    delete_block(b);
    b = next;
  }
  for (int k = 0; k <= JAXON_HOST_MAX_CLASS_LOG2; k++) {
    for (jaxon_block *b = p->free_lists[k]; b;) {
      jaxon_block *next = b->next;
      delete_block(b);
      b = next;
    }
  }
  memset(p, 0, sizeof *p);
}

void jaxon_host_pool_destroy(jaxon_host_pool *p) {
  for (jaxon_block *b = p->pending_head; b;) {
    jaxon_block *next = b->pending_next;
    events_done(&p->vt, b, 1);
    host_release_block(p, b);
    b = next;
  }
  p->pending_head = p->pending_tail = NULL;
  jaxon_host_empty_cache(p);
}

static void host_return(jaxon_host_pool *p, jaxon_block *b) {
  int k = class_log2(b->size);
  b->state = JAXON_BLOCK_FREE;
  b->num_uses = 0;
  b->next = p->free_lists[k];
  p->free_lists[k] = b;
}

void jaxon_host_process_events(jaxon_host_pool *p) {
  jaxon_block *b = p->pending_head, *keep_head = NULL, *keep_tail = NULL;
  while (b) {
    jaxon_block *next = b->pending_next;
    if (events_done(&p->vt, b, 0)) {
      p->stats.bytes_pending_free -= b->size;
      host_return(p, b);
    } else {
      pending_append(&keep_head, &keep_tail, b);
    }
    b = next;
  }
  p->pending_head = keep_head;
  p->pending_tail = keep_tail;
}

jaxon_block *jaxon_host_alloc(jaxon_host_pool *p, size_t size, int *status, char *err, size_t err_size) {
  jaxon_host_process_events(p);
  int k = class_log2(size ? size : 1);
  if (k < 0) {
    snprintf(err, err_size, "pinned host request of %zu bytes is larger than the largest class (2^%d bytes)", size,
             JAXON_HOST_MAX_CLASS_LOG2);
    *status = JAXON_ALLOC_ERROR;
    return NULL;
  }
  size_t class_size = (size_t)1 << k;
  jaxon_block *b = p->free_lists[k];
  if (b) {
    p->free_lists[k] = b->next;
  } else {
    uint64_t address = 0;
    int result = JAXON_ALLOC_OUT_OF_MEMORY;
    for (int attempt = 0; attempt < 2 && result == JAXON_ALLOC_OUT_OF_MEMORY; attempt++) {
      if (attempt == 1) {
        p->stats.num_cache_flushes++;
        jaxon_host_empty_cache(p);
      }
      if (p->stats.bytes_limit && p->stats.bytes_reserved + class_size > p->stats.bytes_limit) continue;
      result = p->vt.segment_alloc(p->vt.ctx, class_size, &address, err, err_size);
    }
    if (result != JAXON_ALLOC_OK) {
      if (result == JAXON_ALLOC_OUT_OF_MEMORY) {
        char want[32], used[32];
        p->stats.num_ooms++;
        jaxon_format_bytes(class_size, want, sizeof want);
        jaxon_format_bytes(p->stats.bytes_in_use, used, sizeof used);
        snprintf(err, err_size,
                 "out of pinned host memory allocating %zu bytes (a %s block): %llu bytes (%s) in use in %llu buffers",
                 size, want, (unsigned long long)p->stats.bytes_in_use, used,
                 (unsigned long long)p->stats.num_live_blocks);
      }
      *status = result;
      return NULL;
    }
    b = new_block(address, class_size, 0, 0);
    if (!b) {
      p->vt.segment_free(p->vt.ctx, address, class_size);
      snprintf(err, err_size, "out of host memory tracking a pinned block");
      *status = JAXON_ALLOC_ERROR;
      return NULL;
    }
    p->stats.bytes_reserved += class_size;
    p->stats.num_segments++;
    if (p->stats.bytes_reserved > p->stats.peak_bytes_reserved) p->stats.peak_bytes_reserved = p->stats.bytes_reserved;
  }
  b->next = NULL;
  b->state = JAXON_BLOCK_ALLOCATED;
  b->requested = size;
  p->stats.bytes_in_use += b->size;
  if (p->stats.bytes_in_use > p->stats.peak_bytes_in_use) p->stats.peak_bytes_in_use = p->stats.bytes_in_use;
  p->stats.bytes_requested += size;
  if (p->stats.bytes_requested > p->stats.peak_bytes_requested) p->stats.peak_bytes_requested = p->stats.bytes_requested;
  if (b->size > p->stats.largest_alloc_size) p->stats.largest_alloc_size = b->size;
  p->stats.num_allocs++;
  p->stats.num_live_blocks++;
  *status = JAXON_ALLOC_OK;
  return b;
}

int jaxon_host_free(jaxon_host_pool *p, jaxon_block *b, char *err, size_t err_size) {
  if (!b || b->state != JAXON_BLOCK_ALLOCATED) {
    snprintf(err, err_size, "free of a pinned block that is not allocated (double free?)");
    return JAXON_ALLOC_ERROR;
  }
  p->stats.bytes_in_use -= b->size;
  p->stats.bytes_requested -= b->requested;
  p->stats.num_live_blocks--;
  if (b->num_uses == 0) {
    host_return(p, b);
    return JAXON_ALLOC_OK;
  }
  b->state = JAXON_BLOCK_PENDING;
  p->stats.bytes_pending_free += b->size;
  if (!record_events(&p->vt, b, b->uses, b->num_uses, err, err_size)) return JAXON_ALLOC_ERROR; // leaked, as above
  b->num_uses = 0;
  pending_append(&p->pending_head, &p->pending_tail, b);
  return JAXON_ALLOC_OK;
}

jaxon_alloc_stats jaxon_host_get_stats(jaxon_host_pool *p) {
  jaxon_host_process_events(p);
  uint64_t largest = 0;
  for (int k = 0; k <= JAXON_HOST_MAX_CLASS_LOG2; k++)
    if (p->free_lists[k] && p->free_lists[k]->size > largest) largest = p->free_lists[k]->size;
  p->stats.largest_free_block = largest;
  return p->stats;
}

static void reset_peaks(jaxon_alloc_stats *s) {
  s->peak_bytes_in_use = s->bytes_in_use;
  s->peak_bytes_requested = s->bytes_requested;
  s->peak_bytes_reserved = s->bytes_reserved;
}

void jaxon_alloc_reset_peaks(jaxon_allocator *a) { reset_peaks(&a->stats); }

void jaxon_host_reset_peaks(jaxon_host_pool *p) { reset_peaks(&p->stats); }
