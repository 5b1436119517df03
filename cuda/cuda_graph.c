// A program as a CUDA graph, built node by node from its ops: launches become
// kernel nodes, copies memcpy nodes, memsets memset nodes, and each stream's
// order and each record/wait pair become edges (the fork from and join into
// the compute stream are the graph launch's own ordering). A call with other
// pointers (fresh outputs, another arena) updates the instantiated graph in
// place: cuGraphExecKernelNodeSetParams for each kernel whose arguments moved,
// cuGraphExecMemcpyNodeSetParams / cuGraphExecMemsetNodeSetParams for copies
// and memsets. Chosen over capturing the run again and cuGraphExecUpdate
// because on a real GPU (H100) that path pays for a whole stream capture
// every call (each captured op costs about what launching it does, plus
// building the graph) and then a whole-graph topology comparison, while a node
// update writes only the parameters that changed, with no capture and no
// comparison; NVIDIA's "Constructing CUDA Graphs with Dynamic Parameters"
// (2022) describes node updates as the low-cost path for explicitly built
// graphs, and a program's op list is exactly what explicit building needs.
// When the driver refuses an update (an operand moved to another kind of
// memory, a driver with other limits), the graph is built and instantiated
// again. A kernel's tensor-map parameters (TMA descriptors) hold its
// operands' addresses, and a kernel node keeps a copy of its parameters, so
// they follow the same path: a launch whose pointers moved gets its maps
// encoded again and its node updated with them; no node keeps a stale map.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_program.h"

static CUresult kernel_params(const jaxon_program *p, const program_op *o, const CUdeviceptr *bases, CUdeviceptr *pointers,
                              CUtensorMap *maps, void **params, CUDA_KERNEL_NODE_PARAMS *out, char *call, size_t call_size) {
  CUresult result = jaxon_program_launch_params(p, o, bases, pointers, maps, params, call, call_size);
  memset(out, 0, sizeof *out);
  out->func = jaxon_function_handle(o->function);
  out->gridDimX = o->grid[0];
  out->gridDimY = o->grid[1];
  out->gridDimZ = o->grid[2];
  out->blockDimX = o->block[0];
  out->blockDimY = o->block[1];
  out->blockDimZ = o->block[2];
  out->sharedMemBytes = o->shared;
  out->kernelParams = o->num_args + o->num_maps ? params : NULL;
  return result;
}

static void copy_params(const program_op *o, const CUdeviceptr *bases, const int *slot_host, CUDA_MEMCPY3D *out) {
  CUdeviceptr src = jaxon_program_resolve(&o->src, bases), dst = jaxon_program_resolve(&o->dst, bases);
  memset(out, 0, sizeof *out);
  out->srcMemoryType = o->src.slot >= 0 && slot_host[o->src.slot] ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (out->srcMemoryType == CU_MEMORYTYPE_HOST) out->srcHost = (const void *)(uintptr_t)src;
  else out->srcDevice = src;
  out->dstMemoryType = o->dst.slot >= 0 && slot_host[o->dst.slot] ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (out->dstMemoryType == CU_MEMORYTYPE_HOST) out->dstHost = (void *)(uintptr_t)dst;
  else out->dstDevice = dst;
  out->WidthInBytes = o->bytes;
  out->Height = 1;
  out->Depth = 1;
}

static void memset_params(const program_op *o, const CUdeviceptr *bases, CUDA_MEMSET_NODE_PARAMS *out) {
  memset(out, 0, sizeof *out);
  out->dst = jaxon_program_resolve(&o->dst, bases);
  out->value = (unsigned)o->value;
  out->elementSize = 1;
  out->width = o->bytes;
  out->height = 1;
}

/* The nodes an op on a stream must follow: the stream's last node and what its waits brought in. */
typedef struct {
  CUgraphNode *nodes;
  size_t count;
} frontier;

static void frontier_set(frontier *f, CUgraphNode node) {
  f->nodes[0] = node;
  f->count = 1;
}

static void frontier_join(frontier *f, const frontier *other) {
  for (size_t i = 0; i < other->count; i++) {
    size_t k = 0;
    while (k < f->count && f->nodes[k] != other->nodes[i]) k++;
    if (k == f->count) f->nodes[f->count++] = other->nodes[i];
  }
}

/* Adds the ops as nodes of `graph`, recording each op's node in p->nodes; a CUresult and the failing call. */
static CUresult add_nodes(jaxon_program *p, CUgraph graph, const CUdeviceptr *bases, const int *slot_host, char *call,
                          size_t call_size) {
  // A frontier holds at most one node per op; each stream and each event has one.
  size_t sets = JAXON_STREAM_COUNT + p->num_events;
  CUgraphNode *storage = calloc(sets * ((size_t)p->num_ops + 1), sizeof *storage);
  frontier *fronts = calloc(sets, sizeof *fronts);
  CUresult result = storage && fronts ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  snprintf(call, call_size, "graph building (out of host memory)");
  for (size_t i = 0; fronts && storage && i < sets; i++) fronts[i].nodes = storage + i * ((size_t)p->num_ops + 1);
  frontier *streams = fronts, *events = fronts ? fronts + JAXON_STREAM_COUNT : NULL;
  CUdeviceptr pointers[256];
  CUtensorMap maps[JAXON_MAX_TENSOR_MAPS];
  void *params[256 + JAXON_MAX_TENSOR_MAPS];
  for (uint32_t i = 0; i < p->num_ops && result == CUDA_SUCCESS; i++) {
    const program_op *o = &p->ops[i];
    frontier *s = &streams[o->stream];
    CUgraphNode node = NULL;
    p->nodes[i] = NULL;
    switch (o->kind) {
      case OP_LAUNCH: {
        CUDA_KERNEL_NODE_PARAMS kp;
        if ((result = kernel_params(p, o, bases, pointers, maps, params, &kp, call, call_size)) != CUDA_SUCCESS) break;
        snprintf(call, call_size, "cuGraphAddKernelNode_v2(%s) for ops[%u]", jaxon_function_name(o->function), i);
        result = jaxon_cu->cuGraphAddKernelNode_v2(&node, graph, s->nodes, s->count, &kp);
        break;
      }
      case OP_COPY: {
        if (!o->bytes) break;
        CUDA_MEMCPY3D cp;
        copy_params(o, bases, slot_host, &cp);
        snprintf(call, call_size, "cuGraphAddMemcpyNode(%llu bytes) for ops[%u]", (unsigned long long)o->bytes, i);
        result = jaxon_cu->cuGraphAddMemcpyNode(&node, graph, s->nodes, s->count, &cp, p->device->context);
        break;
      }
      case OP_MEMSET: {
        if (!o->bytes) break;
        CUDA_MEMSET_NODE_PARAMS mp;
        memset_params(o, bases, &mp);
        snprintf(call, call_size, "cuGraphAddMemsetNode(%llu bytes) for ops[%u]", (unsigned long long)o->bytes, i);
        result = jaxon_cu->cuGraphAddMemsetNode(&node, graph, s->nodes, s->count, &mp, p->device->context);
        break;
      }
      case OP_RECORD:
        events[o->event].count = 0;
        frontier_join(&events[o->event], s);
        break;
      case OP_WAIT:
        frontier_join(s, &events[o->event]); // a wait for an event the program has not recorded yet waits for nothing
        break;
    }
    if (node) {
      p->nodes[i] = node;
      frontier_set(s, node);
    }
  }
  free(storage);
  free(fronts);
  return result;
}

int jaxon_graph_build(jaxon_program *p, const CUdeviceptr *bases, const int *slot_host) {
  char call[400] = "cuGraphCreate", description[512];
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  CUresult result = jaxon_cu->cuGraphCreate(&graph, 0);
  if (result == CUDA_SUCCESS) result = add_nodes(p, graph, bases, slot_host, call, sizeof call);
  if (result == CUDA_SUCCESS) {
    snprintf(call, sizeof call, "cuGraphInstantiateWithFlags");
    result = jaxon_cu->cuGraphInstantiateWithFlags(&exec, graph, 0);
  }
  if (result != CUDA_SUCCESS) {
    if (graph) jaxon_cu->cuGraphDestroy(graph);
    jaxon_note_result(p->device->env, result);
    jaxon_cuda_describe(result, description, sizeof description);
    snprintf(p->graph_off_reason, sizeof p->graph_off_reason, "%s failed: %s", call, description);
    p->graph_enabled = 0;
    return 0;
  }
  jaxon_graph_destroy(p);
  p->graph = graph;
  p->exec = exec;
  memcpy(p->graph_pointers, bases, (p->num_slots + 1) * sizeof *bases);
  memcpy(p->graph_slot_host, slot_host, (p->num_slots + 1) * sizeof *slot_host);
  p->graph_captures++;
  return 1;
}

int jaxon_graph_update(jaxon_program *p, const CUdeviceptr *bases, const int *slot_host) {
  if (!jaxon_cu->has_graph_updates) return 0;
  const CUdeviceptr *old = p->graph_pointers;
  // a reference moved when its base did, or its slot's memory kind changed (a copy node's memory type)
#define MOVED(ref) (old[(ref).slot + 1] != bases[(ref).slot + 1] || \
                    ((ref).slot >= 0 && p->graph_slot_host[(ref).slot] != slot_host[(ref).slot]))
  CUdeviceptr pointers[256];
  CUtensorMap maps[JAXON_MAX_TENSOR_MAPS];
  void *params[256 + JAXON_MAX_TENSOR_MAPS];
  CUresult result = CUDA_SUCCESS;
  for (uint32_t i = 0; i < p->num_ops && result == CUDA_SUCCESS; i++) {
    const program_op *o = &p->ops[i];
    if (!p->nodes[i]) continue;
    int moved = 0;
    if (o->kind == OP_LAUNCH) {
      for (uint32_t a = 0; a < o->num_args && !moved; a++) moved = MOVED(p->args[o->first_arg + a]);
      if (!moved) continue;
      // the node's tensor maps are encoded again from the moved pointers (a map holds its tensor's address)
      CUDA_KERNEL_NODE_PARAMS kp;
      char call[400];
      if ((result = kernel_params(p, o, bases, pointers, maps, params, &kp, call, sizeof call)) != CUDA_SUCCESS) break;
      result = jaxon_cu->cuGraphExecKernelNodeSetParams_v2(p->exec, p->nodes[i], &kp);
    } else if (o->kind == OP_COPY) {
      if (!MOVED(o->src) && !MOVED(o->dst)) continue;
      CUDA_MEMCPY3D cp;
      copy_params(o, bases, slot_host, &cp);
      result = jaxon_cu->cuGraphExecMemcpyNodeSetParams(p->exec, p->nodes[i], &cp, p->device->context);
    } else if (o->kind == OP_MEMSET) {
      if (!MOVED(o->dst)) continue;
      CUDA_MEMSET_NODE_PARAMS mp;
      memset_params(o, bases, &mp);
      result = jaxon_cu->cuGraphExecMemsetNodeSetParams(p->exec, p->nodes[i], &mp, p->device->context);
    }
  }
#undef MOVED
  if (result != CUDA_SUCCESS) {
    jaxon_note_result(p->device->env, result); // a lost context is not a refusal
    return 0;
  }
  memcpy(p->graph_pointers, bases, (p->num_slots + 1) * sizeof *bases);
  memcpy(p->graph_slot_host, slot_host, (p->num_slots + 1) * sizeof *slot_host);
  p->graph_updates++;
  return 1;
}

void jaxon_graph_destroy(jaxon_program *p) {
  int live = !jaxon_cuda_shutting_down && p->epoch == p->device->epoch && !p->device->lost;
  if (live && p->exec) jaxon_cu->cuGraphExecDestroy(p->exec);
  if (live && p->graph) jaxon_cu->cuGraphDestroy(p->graph);
  p->exec = NULL;
  p->graph = NULL;
}
