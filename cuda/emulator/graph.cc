// The emulated driver's CUDA graphs, built node by node (kernel, memcpy and
// memset nodes with explicit dependencies) and instantiated into executable
// graphs whose nodes can be updated in place, with the real driver's
// parameters, checks and error codes. A launch replays the nodes in the
// order they were added (an order every dependency respects) as one piece
// of work on the launching stream, from a snapshot of their parameters, so
// an update affects later launches only, as documented. What the emulator
// cannot do (2D/3D copies, CUDA arrays, CUkernel handles) is
// CUDA_ERROR_NOT_SUPPORTED; jaxon uses none of it.
// JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES=1 refuses every in-place update
// (CUDA_ERROR_INVALID_VALUE, as a driver refuses one it cannot apply), so
// tests and benchmarks can take the path that builds the graph again.
#include <stdlib.h>
#include <string.h>
#include <memory>
#include <vector>
#include "driver.h"

using namespace jaxon_emu;

namespace {

enum class NodeKind { Kernel, Memcpy, Memset };

/** Where an operand lives; an update may not move an operand to another kind of memory. */
enum class Memory { Device, Pinned, Pageable };

struct NodeWork {
  NodeKind kind = NodeKind::Kernel;
  CheckedLaunch launch;  // kernel
  void *dst = nullptr;   // memcpy and memset
  const void *src = nullptr;
  size_t bytes = 0;
  Memory dst_memory = Memory::Device, src_memory = Memory::Device;
  unsigned value = 0, element_size = 1;  // memset
  size_t width = 0;
};

Memory memory_of(const void *p, size_t n) {
  if (is_device_range((CUdeviceptr)(uintptr_t)p, n)) return Memory::Device;
  return is_pinned_range(p, n) ? Memory::Pinned : Memory::Pageable;
}

void run(const NodeWork &w) {
  switch (w.kind) {
    case NodeKind::Kernel:
      run_launch(w.launch);
      return;
    case NodeKind::Memcpy:
      slow_copy(w.bytes, (w.dst_memory == Memory::Device) != (w.src_memory == Memory::Device));
      if (sticky_error() == CUDA_SUCCESS) memmove(w.dst, w.src, w.bytes);
      return;
    case NodeKind::Memset:
      if (sticky_error() != CUDA_SUCCESS) return;
      for (size_t i = 0; i < w.width; i++) memcpy((char *)w.dst + i * w.element_size, &w.value, w.element_size);
      return;
  }
}

CUresult read_kernel(const CUDA_KERNEL_NODE_PARAMS *p, NodeWork *out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (!p->func) return p->kern ? (CUresult)JX_CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
  out->kind = NodeKind::Kernel;
  return check_launch(p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                      p->sharedMemBytes, p->kernelParams, p->extra, &out->launch);
}

/** One operand of a copy: its pointer by memory type, checked to hold `bytes`. */
CUresult copy_operand(CUmemorytype type, const void *host, CUdeviceptr device, size_t x, size_t bytes,
                      const void **pointer, Memory *memory) {
  const void *p;
  switch ((int)type) {
    case CU_MEMORYTYPE_HOST: p = host; break;
    case CU_MEMORYTYPE_DEVICE: case CU_MEMORYTYPE_UNIFIED: p = (const void *)(uintptr_t)device; break;
    case CU_MEMORYTYPE_ARRAY: return (CUresult)JX_CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  p = (const char *)p + x;
  *memory = memory_of(p, bytes);
  if ((int)type == CU_MEMORYTYPE_DEVICE && *memory != Memory::Device) return CUDA_ERROR_INVALID_VALUE;
  if ((int)type == CU_MEMORYTYPE_HOST && *memory == Memory::Device) return CUDA_ERROR_INVALID_VALUE;
  *pointer = p;
  return CUDA_SUCCESS;
}

CUresult read_copy(const CUDA_MEMCPY3D *p, CUcontext ctx, NodeWork *out) {
  if (!p || ctx != primary_context_handle()) return CUDA_ERROR_INVALID_VALUE;
  if (p->WidthInBytes == 0 || p->Height == 0 || p->Depth == 0) return CUDA_ERROR_INVALID_VALUE;  // zero-length
  if (p->Height != 1 || p->Depth != 1 || p->srcY || p->srcZ || p->srcLOD || p->dstY || p->dstZ || p->dstLOD)
    return (CUresult)JX_CUDA_ERROR_NOT_SUPPORTED;  // only 1D copies are emulated
  const void *src = nullptr, *dst = nullptr;
  CUresult result = copy_operand(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->WidthInBytes, &src,
                                 &out->src_memory);
  if (result == CUDA_SUCCESS)
    result = copy_operand(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->WidthInBytes, &dst,
                          &out->dst_memory);
  if (result != CUDA_SUCCESS) return result;
  out->kind = NodeKind::Memcpy;
  out->src = src;
  out->dst = const_cast<void *>(dst);
  out->bytes = p->WidthInBytes;
  return CUDA_SUCCESS;
}

CUresult read_memset(const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx, NodeWork *out) {
  if (!p || ctx != primary_context_handle()) return CUDA_ERROR_INVALID_VALUE;
  if ((p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || p->width == 0 || p->height == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (p->height != 1) return (CUresult)JX_CUDA_ERROR_NOT_SUPPORTED;
  if (!is_device_range(p->dst, p->width * p->elementSize)) return CUDA_ERROR_INVALID_VALUE;
  out->kind = NodeKind::Memset;
  out->dst = (void *)(uintptr_t)p->dst;
  out->value = p->value;
  out->element_size = p->elementSize;
  out->width = p->width;
  return CUDA_SUCCESS;
}

}  // namespace

struct CUgraphNode_st {
  CUgraph_st *graph;
  size_t index;
  NodeWork work;
};

struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
  unsigned generation = context_generation();
};

struct CUgraphExec_st {
  const CUgraph_st *source;  // node handles of this graph name the nodes to update
  // copy on write: a launch shares the current works; an update after a launch copies them first, so queued
  // launches keep the parameters they were launched with (a launch of an unchanged exec copies nothing)
  std::shared_ptr<std::vector<NodeWork>> works = std::make_shared<std::vector<NodeWork>>();
  unsigned generation = context_generation();
};


namespace {

/** Adds a node after its dependencies (nodes of the same graph). */
CUresult add_node(CUgraphNode *node, CUgraph graph, const CUgraphNode *dependencies, size_t count, NodeWork work) {
  if (!node || !graph || (count && !dependencies)) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(graph);
  for (size_t i = 0; i < count; i++)
    if (!dependencies[i] || dependencies[i]->graph != graph) return CUDA_ERROR_INVALID_VALUE;
  auto added = std::make_unique<CUgraphNode_st>(CUgraphNode_st{graph, graph->nodes.size(), std::move(work)});
  *node = added.get();
  graph->nodes.push_back(std::move(added));
  return CUDA_SUCCESS;
}

bool refuse_updates() {
  static const bool refuse = [] {
    const char *value = jaxon_emu::loaded_env("JAXON_CUDA_EMULATOR_REFUSE_GRAPH_UPDATES");
    return value && *value && strcmp(value, "0") != 0;
  }();
  return refuse;
}

/** The exec's copy of a node, when the node is of the graph it was instantiated from and of kind `kind`. */
CUresult exec_node(CUgraphExec exec, CUgraphNode node, NodeKind kind, NodeWork **out) {
  if (!exec || !node || refuse_updates()) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(exec);
  if (node->graph != exec->source || node->index >= exec->works->size() || (*exec->works)[node->index].kind != kind)
    return CUDA_ERROR_INVALID_VALUE;
  if (exec->works.use_count() > 1) exec->works = std::make_shared<std::vector<NodeWork>>(*exec->works);
  *out = &(*exec->works)[node->index];
  return CUDA_SUCCESS;
}

}  // namespace

EXPORT CUresult cuGraphCreate(CUgraph *graph, unsigned int flags) {
  REQUIRE_HEALTHY();
  if (!graph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *graph = new CUgraph_st();
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                        const CUDA_KERNEL_NODE_PARAMS *params) {
  REQUIRE_HEALTHY();
  NodeWork work;
  CUresult result = read_kernel(params, &work);
  return result == CUDA_SUCCESS ? add_node(node, graph, dependencies, count, std::move(work)) : result;
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                     const CUDA_MEMCPY3D *params, CUcontext ctx) {
  REQUIRE_HEALTHY();
  NodeWork work;
  CUresult result = read_copy(params, ctx, &work);
  return result == CUDA_SUCCESS ? add_node(node, graph, dependencies, count, std::move(work)) : result;
}

EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *dependencies, size_t count,
                                     const CUDA_MEMSET_NODE_PARAMS *params, CUcontext ctx) {
  REQUIRE_HEALTHY();
  NodeWork work;
  CUresult result = read_memset(params, ctx, &work);
  return result == CUDA_SUCCESS ? add_node(node, graph, dependencies, count, std::move(work)) : result;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
  REQUIRE_HEALTHY();
  if (!exec || !graph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(graph);
  auto instance = new CUgraphExec_st{graph, std::make_shared<std::vector<NodeWork>>()};
  for (auto &n : graph->nodes) instance->works->push_back(n->work);
  *exec = instance;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  REQUIRE_HEALTHY();
  if (!exec) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(exec);
  REQUIRE_STREAM(stream);
  std::shared_ptr<const std::vector<NodeWork>> works = exec->works;  // later updates copy before they write
  stream_of(stream).push([works] {
    for (const NodeWork &w : *works) run(w);
  });
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  REQUIRE_INIT();
  if (!exec) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(exec);
  delete exec;  // queued launches hold their own copies
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  REQUIRE_INIT();
  if (!graph) return CUDA_ERROR_INVALID_VALUE;
  REQUIRE_CURRENT(graph);
  delete graph;
  return CUDA_SUCCESS;
}

/** A kernel node's new function, shape and arguments, for later launches of the exec. */
EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *params) {
  REQUIRE_HEALTHY();
  NodeWork *work = nullptr, updated;
  CUresult result = exec_node(exec, node, NodeKind::Kernel, &work);
  if (result == CUDA_SUCCESS) result = read_kernel(params, &updated);
  if (result == CUDA_SUCCESS) *work = std::move(updated);
  return result;
}

/** New pointers for a 1D copy whose operands stay in the kind of memory they were in (the driver's "mapping"). */
EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_MEMCPY3D *params,
                                               CUcontext ctx) {
  REQUIRE_HEALTHY();
  NodeWork *work = nullptr, updated;
  CUresult result = exec_node(exec, node, NodeKind::Memcpy, &work);
  if (result == CUDA_SUCCESS) result = read_copy(params, ctx, &updated);
  if (result != CUDA_SUCCESS) return result;
  if (updated.src_memory != work->src_memory || updated.dst_memory != work->dst_memory) return CUDA_ERROR_INVALID_VALUE;
  *work = std::move(updated);
  return CUDA_SUCCESS;
}

/** A new destination and value for a memset of the same width and element size. */
EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *params,
                                               CUcontext ctx) {
  REQUIRE_HEALTHY();
  NodeWork *work = nullptr, updated;
  CUresult result = exec_node(exec, node, NodeKind::Memset, &work);
  if (result == CUDA_SUCCESS) result = read_memset(params, ctx, &updated);
  if (result != CUDA_SUCCESS) return result;
  if (updated.width != work->width || updated.element_size != work->element_size) return CUDA_ERROR_INVALID_VALUE;
  *work = std::move(updated);
  return CUDA_SUCCESS;
}
