// A program (cuda_program.c): a compiled executable's launch list, with the
// CUDA graph it may run as (cuda_graph.c). Pointers are (slot, offset)
// references resolved against each run's bases: bases[0] the arena,
// bases[1 + i] slot i.
#ifndef JAXON_CUDA_PROGRAM_H
#define JAXON_CUDA_PROGRAM_H
#include "cuda_runtime.h"
#include "cuda_tensor_map.h"

enum { OP_LAUNCH, OP_COPY, OP_MEMSET, OP_RECORD, OP_WAIT };

typedef struct {
  int32_t slot; /* -1: the arena */
  uint64_t offset;
} program_ref;

typedef struct {
  int kind, stream;
  void *function;
  uint32_t grid[3], block[3], shared;
  uint32_t first_arg, num_args;
  uint32_t first_map, num_maps; /* tensor-map parameters after the pointers (cuda_tensor_map.h) */
  program_ref dst, src;
  uint64_t bytes;
  int value, event;
} program_op;

typedef struct {
  jaxon_cuda_device *device;
  uint32_t epoch; /* the device's epoch at creation: a reset makes the program stale */
  program_op *ops;
  uint32_t num_ops;
  program_ref *args;
  jaxon_tensor_map_spec *maps;
  uint32_t num_maps;
  uint32_t num_slots;
  uint64_t *slot_bytes;
  unsigned *slot_streams; /* bit s: stream s touches the slot */
  uint64_t arena_bytes;
  unsigned used_streams;
  CUevent *events;
  uint32_t num_events;
  CUevent fork, join[JAXON_STREAM_COUNT];
  /* spec.fork / spec.join false: the copy streams do not wait for compute at the start of a run, or compute does not
     wait for them at its end (a prefetch left in flight; a later run's join orders it) */
  int no_fork, no_join;
  int graph_enabled;
  CUgraph graph;
  CUgraphExec exec;
  CUgraphNode *nodes;       /* each op's node (NULL: records, waits and empty copies have none) */
  CUdeviceptr *graph_pointers; /* the bases the instantiated graph's nodes point into: arena, then slots */
  int *graph_slot_host;     /* each slot's memory kind then (1: pinned host) */
  char graph_off_reason[1024];
  uint64_t runs, graph_launches, graph_captures, graph_updates;
  CUevent *timing; /* timed runs (the profiler): 2 per op, then the base; created on first use */
} jaxon_program;

static inline CUdeviceptr jaxon_program_resolve(const program_ref *ref, const CUdeviceptr *bases) {
  return bases[ref->slot + 1] + ref->offset;
}

/* A launch's kernel parameters for these bases: its pointers, then its tensor maps encoded from them (so a run
   with moved pointers re-encodes them: graphs update their kernel nodes with the new maps). params must hold
   num_args + num_maps entries. On a failed encoding, `call` says which. */
CUresult jaxon_program_launch_params(const jaxon_program *p, const program_op *o, const CUdeviceptr *bases,
                                     CUdeviceptr *pointers, CUtensorMap *maps, void **params, char *call, size_t call_size);

/* Builds the program's graph for these bases and instantiates it (graph_captures + 1); 0 when the driver
   refuses, with graphs turned off for the program and graph_off_reason saying why. */
int jaxon_graph_build(jaxon_program *p, const CUdeviceptr *bases, const int *slot_host);
/* Points the instantiated graph's nodes at new bases in place (graph_updates + 1); 0 when the driver refuses an
   update (the caller builds again). */
int jaxon_graph_update(jaxon_program *p, const CUdeviceptr *bases, const int *slot_host);
/* Destroys the graph and its instantiation (the driver's objects only when they are still of a live context). */
void jaxon_graph_destroy(jaxon_program *p);

#endif
