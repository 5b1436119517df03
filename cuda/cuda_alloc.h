// The device caching allocator and the pinned-host pool, as plain C over a
// small vtable (reserve/release memory, record/query events), so the same
// code runs over cuMemAlloc and CUDA events in the addon and over a fake
// address space with hand-completed events in the tests
// (cuda_test_hooks.c). The design follows PyTorch's CUDACachingAllocator:
// sizes rounded to 512 bytes; a small pool (requests up to 1 MiB, carved
// from 2 MiB segments) and a large pool; best fit among one stream's free
// blocks, splitting the rest off and merging free neighbours; a block freed
// after use on other streams is reused only once events recorded on those
// streams have completed; on out-of-memory the cache is emptied and the
// request retried before failing with the request and the usage.
// Not thread-safe: the addon calls it from the JS thread only.
#ifndef JAXON_CUDA_ALLOC_H
#define JAXON_CUDA_ALLOC_H
#include <stddef.h>
#include <stdint.h>

enum {
  JAXON_ALLOC_OK = 0,
  JAXON_ALLOC_OUT_OF_MEMORY = 1,
  JAXON_ALLOC_ERROR = 2,
};

#define JAXON_ALLOC_ROUND 512u
#define JAXON_ALLOC_SMALL_REQUEST (1u << 20)     /* requests up to this go to the small pool */
#define JAXON_ALLOC_SMALL_SEGMENT (2u << 20)     /* segment size of the small pool */
#define JAXON_ALLOC_LARGE_SEGMENT (20u << 20)    /* segment for large requests under 10 MiB */
#define JAXON_ALLOC_MIN_LARGE_ALLOC (10u << 20)  /* from here segments fit the request */
#define JAXON_ALLOC_LARGE_ROUND (2u << 20)       /* large segments are multiples of this */
#define JAXON_HOST_MIN_CLASS_LOG2 12             /* pinned-host classes: 4 KiB, 8 KiB, ... */
#define JAXON_HOST_MAX_CLASS_LOG2 48

typedef struct jaxon_alloc_vtable {
  void *ctx;
  /* Reserves `size` bytes; JAXON_ALLOC_OUT_OF_MEMORY when none are left, JAXON_ALLOC_ERROR with `err` otherwise. */
  int (*segment_alloc)(void *ctx, size_t size, uint64_t *address, char *err, size_t err_size);
  void (*segment_free)(void *ctx, uint64_t address, size_t size);
  /* Marks the point after all work queued on `stream` so far. */
  int (*event_record)(void *ctx, uint64_t stream, void **event, char *err, size_t err_size);
  /* 1 when the event's work is done, 0 while it is pending; -1 on error (treated as done). */
  int (*event_query)(void *ctx, void *event);
  void (*event_synchronize)(void *ctx, void *event);
  void (*event_release)(void *ctx, void *event);
} jaxon_alloc_vtable;

enum { JAXON_BLOCK_FREE = 0, JAXON_BLOCK_ALLOCATED = 1, JAXON_BLOCK_PENDING = 2 };

typedef struct jaxon_block {
  uint64_t address;
  size_t size;      /* bytes the block spans (rounded) */
  size_t requested; /* bytes asked for */
  uint64_t stream;  /* the stream whose free blocks it joins */
  int state;
  int small;        /* in the small pool */
  struct jaxon_block *prev, *next; /* neighbours in the segment, by address */
  uint64_t *uses;   /* other streams that used it (jaxon_alloc_record_use) */
  int num_uses, cap_uses;
  void **events;    /* events that must complete before reuse */
  int num_events, cap_events;
  struct jaxon_block *pending_next;
} jaxon_block;

typedef struct jaxon_alloc_stats {
  uint64_t bytes_in_use;       /* rounded sizes of blocks handed out and not freed */
  uint64_t peak_bytes_in_use;
  uint64_t bytes_limit;        /* the allocator never reserves more than this */
  uint64_t bytes_reserved;     /* segments held from the device */
  uint64_t peak_bytes_reserved;
  uint64_t bytes_pending_free; /* freed, waiting for other streams' events */
  uint64_t largest_free_block; /* largest block in the cache, ready for reuse */
  uint64_t largest_alloc_size;
  uint64_t num_allocs;         /* successful allocations since creation */
  uint64_t num_live_blocks;
  uint64_t num_segments;
  uint64_t num_cache_flushes;  /* out-of-memory retries that emptied the cache */
  uint64_t num_ooms;           /* requests that failed after the retry */
  uint64_t bytes_requested;    /* the sizes asked for (before rounding) of blocks handed out and not freed */
  uint64_t peak_bytes_requested;
} jaxon_alloc_stats;

typedef struct jaxon_block_pool {
  jaxon_block **blocks; /* free blocks sorted by (stream, size, address) */
  size_t count, capacity;
} jaxon_block_pool;

typedef struct jaxon_allocator {
  jaxon_alloc_vtable vt;
  jaxon_block_pool small, large;
  jaxon_block **segments; /* each segment's first block */
  size_t num_segments, cap_segments;
  jaxon_block *pending_head, *pending_tail;
  jaxon_alloc_stats stats;
  /* Each request its own segment of exactly its size, released when freed: no carving or caching, so a
     checker below (AddressSanitizer in the emulated GPU) sees every buffer's true bounds. */
  int exact;
} jaxon_allocator;

void jaxon_allocator_init(jaxon_allocator *a, const jaxon_alloc_vtable *vt, uint64_t limit);
/* Releases every segment; blocks still allocated become invalid. */
void jaxon_allocator_destroy(jaxon_allocator *a);
/* Forgets every segment and block without releasing memory or events: their context is gone (a reset). */
void jaxon_allocator_abandon(jaxon_allocator *a);
/* Frees an allocated block's bookkeeping whose memory went with its context (a pinned block after a reset). */
void jaxon_block_discard(jaxon_block *b);
/* NULL on failure, with the status in *status and a one-line message in err. */
jaxon_block *jaxon_alloc(jaxon_allocator *a, size_t size, uint64_t stream, int *status, char *err, size_t err_size);
/* Returns JAXON_ALLOC_ERROR (message in err) for a block that is not allocated. */
int jaxon_free(jaxon_allocator *a, jaxon_block *block, char *err, size_t err_size);
/* Notes that `stream` uses the block, so its reuse waits for that stream's work. */
int jaxon_alloc_record_use(jaxon_block *block, uint64_t stream);
/* Moves freed blocks whose events have completed back into the cache. */
void jaxon_alloc_process_events(jaxon_allocator *a);
/* Releases segments with no block in use; returns the bytes released. */
uint64_t jaxon_alloc_empty_cache(jaxon_allocator *a);
/* Starts the peaks (in use, requested, reserved) again from the current values. */
void jaxon_alloc_reset_peaks(jaxon_allocator *a);
jaxon_alloc_stats jaxon_alloc_get_stats(jaxon_allocator *a);
/* Calls fn for each block of each segment, in address order (for tests and snapshots). */
void jaxon_alloc_visit(jaxon_allocator *a, void (*fn)(void *user, size_t segment, const jaxon_block *b), void *user);
/* "1.50 GiB"-style size for messages. */
void jaxon_format_bytes(uint64_t bytes, char *out, size_t out_size);

/* Pinned host memory: power-of-two classes, whole blocks reused once the
 * events of every stream that used them have completed. */
typedef struct jaxon_host_pool {
  jaxon_alloc_vtable vt;
  jaxon_block *free_lists[JAXON_HOST_MAX_CLASS_LOG2 + 1];
  jaxon_block *pending_head, *pending_tail;
  jaxon_alloc_stats stats;
} jaxon_host_pool;

void jaxon_host_pool_init(jaxon_host_pool *p, const jaxon_alloc_vtable *vt, uint64_t limit);
void jaxon_host_pool_destroy(jaxon_host_pool *p);
/* Forgets cached and pending blocks without releasing them (a reset freed the memory); allocated ones are the
   holders' to discard. */
void jaxon_host_pool_abandon(jaxon_host_pool *p);
jaxon_block *jaxon_host_alloc(jaxon_host_pool *p, size_t size, int *status, char *err, size_t err_size);
/* Reuse waits for every stream recorded with jaxon_alloc_record_use (host blocks belong to no stream). */
int jaxon_host_free(jaxon_host_pool *p, jaxon_block *block, char *err, size_t err_size);
void jaxon_host_process_events(jaxon_host_pool *p);
uint64_t jaxon_host_empty_cache(jaxon_host_pool *p);
void jaxon_host_reset_peaks(jaxon_host_pool *p);
jaxon_alloc_stats jaxon_host_get_stats(jaxon_host_pool *p);

#endif
