// Programs: a compiled executable as a native launch list (kernel launches,
// copies, memsets, event records and waits across the compute and two copy
// streams) replayed by one N-API call. Pointers are fixed at creation as
// (slot, byte offset): slot i is the i-th buffer passed to each run
// (arguments and outputs), slot -1 the program's arena of temporaries,
// allocated from the caching allocator for the run, so peak memory is what
// buffer assignment planned. Each run forks the copy streams from the compute
// stream and joins them back at the end, so a run is ordered after earlier
// compute work and later work sees all of its writes.
//
// With `graph: true` a run becomes a CUDA graph (cuda_graph.c), built once
// and relaunched; a run with other pointers (slots, arena) updates the
// instantiated graph's nodes in place, or builds it again when the driver
// refuses the update; a failure to build turns the graph off for that
// program and it replays op by op. A device reset makes a program stale:
// running it is a DEVICE_LOST error (its creator builds a new one).
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_program.h"

/* A timed run's events: op i's start and end (launches, copies, memsets) and the base event everything is timed from. */
typedef struct {
  CUevent *events; /* 2 * num_ops + 1; the last is the base */
} program_timing;

static void destroy_program(jaxon_program *p) {
  // a reset destroyed the events and graphs of the context they were made in
  if (!jaxon_cuda_shutting_down && p->epoch == p->device->epoch && !p->device->lost) {
    for (uint32_t i = 0; i < p->num_events; i++)
      if (p->events[i]) jaxon_cu->cuEventDestroy_v2(p->events[i]);
    if (p->fork) jaxon_cu->cuEventDestroy_v2(p->fork);
    for (int s = 0; s < JAXON_STREAM_COUNT; s++)
      if (p->join[s]) jaxon_cu->cuEventDestroy_v2(p->join[s]);
    if (p->timing)
      for (uint32_t i = 0; i <= 2 * p->num_ops; i++)
        if (p->timing[i]) jaxon_cu->cuEventDestroy_v2(p->timing[i]);
  }
  jaxon_graph_destroy(p);
  free(p->timing);
  free(p->ops);
  free(p->args);
  free(p->maps);
  free(p->slot_bytes);
  free(p->slot_streams);
  free(p->events);
  free(p->nodes);
  free(p->graph_pointers);
  free(p->graph_slot_host);
  free(p);
}

static void finalize_program(napi_env env, void *data, void *hint) {
  destroy_program(data);
}

// ---- reading the spec ----

static int fail(napi_env env, uint32_t op, const char *what) {
  char message[400];
  snprintf(message, sizeof message, "jaxon cuda: cudaProgramCreate: ops[%u]: %s", op, what);
  napi_throw_type_error(env, NULL, message);
  return 0;
}

static int get_property(napi_env env, napi_value object, const char *key, napi_value *value) {
  bool has = false;
  return napi_has_named_property(env, object, key, &has) == napi_ok && has &&
         napi_get_named_property(env, object, key, value) == napi_ok;
}

static int get_u64_property(napi_env env, napi_value object, const char *key, uint64_t *out, const char *fn) {
  napi_value value;
  if (!get_property(env, object, key, &value)) {
    char message[200];
    snprintf(message, sizeof message, "jaxon cuda: %s: missing '%s'", fn, key);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  return jaxon_get_u64(env, value, fn, key, out);
}

static int read_stream(napi_env env, napi_value op, uint32_t index, int *stream) {
  napi_value value;
  char name[16] = "";
  size_t length = 0;
  if (!get_property(env, op, "stream", &value) ||
      napi_get_value_string_utf8(env, value, name, sizeof name, &length) != napi_ok)
    return fail(env, index, "stream must be 'compute', 'h2d' or 'd2h'");
  if (!strcmp(name, "compute")) *stream = JAXON_STREAM_COMPUTE;
  else if (!strcmp(name, "h2d")) *stream = JAXON_STREAM_H2D;
  else if (!strcmp(name, "d2h")) *stream = JAXON_STREAM_D2H;
  else return fail(env, index, "stream must be 'compute', 'h2d' or 'd2h'");
  return 1;
}

// A [slot, byteOffset] pair; `bytes` past the offset must fit the slot's declared size.
static int read_ref(napi_env env, jaxon_program *p, napi_value value, uint32_t index, uint64_t bytes, program_ref *ref) {
  napi_value slot, offset;
  int32_t s = 0;
  uint64_t o = 0;
  bool is_array = false;
  if (napi_is_array(env, value, &is_array) != napi_ok || !is_array || napi_get_element(env, value, 0, &slot) != napi_ok ||
      napi_get_element(env, value, 1, &offset) != napi_ok ||
      !jaxon_get_i32(env, slot, "cudaProgramCreate", "slot", &s) ||
      !jaxon_get_u64(env, offset, "cudaProgramCreate", "byteOffset", &o))
    return fail(env, index, "a buffer reference must be [slot (-1 for the arena), byteOffset]");
  if (s < -1 || s >= (int32_t)p->num_slots) return fail(env, index, "slot out of range");
  uint64_t size = s < 0 ? p->arena_bytes : p->slot_bytes[s];
  if (o + bytes > size || (bytes == 0 && o > size)) return fail(env, index, "reference past the end of its slot or the arena");
  ref->slot = s;
  ref->offset = o;
  return 1;
}

static void note_stream(jaxon_program *p, const program_ref *ref, int stream) {
  if (ref->slot >= 0) p->slot_streams[ref->slot] |= 1u << stream;
  p->used_streams |= 1u << stream;
}

static int read_op(napi_env env, jaxon_program *p, napi_value op, uint32_t index, uint32_t *num_args) {
  napi_value kind_value, value;
  char kind[16] = "";
  size_t length = 0;
  program_op *o = &p->ops[index];
  if (!get_property(env, op, "op", &kind_value) ||
      napi_get_value_string_utf8(env, kind_value, kind, sizeof kind, &length) != napi_ok)
    return fail(env, index, "op must be 'launch', 'copy', 'memset', 'record' or 'wait'");
  if (!strcmp(kind, "launch")) {
    o->kind = OP_LAUNCH;
    o->stream = JAXON_STREAM_COMPUTE;
    int32_t shared = 0;
    bool is_array = false;
    uint32_t count = 0;
    if (!get_property(env, op, "function", &value) ||
        !(o->function = jaxon_unwrap_handle(env, value, JAXON_HANDLE_FUNCTION, "cudaProgramCreate", "function")))
      return fail(env, index, "launch needs a function handle");
    if (jaxon_function_device(o->function) != p->device) return fail(env, index, "the function was loaded on another device");
    if (!get_property(env, op, "grid", &value) || !jaxon_get_u32_array(env, value, "cudaProgramCreate", "grid", o->grid, 3) ||
        !get_property(env, op, "block", &value) || !jaxon_get_u32_array(env, value, "cudaProgramCreate", "block", o->block, 3) ||
        !get_property(env, op, "sharedMemBytes", &value) || !jaxon_get_i32(env, value, "cudaProgramCreate", "sharedMemBytes", &shared) ||
        shared < 0)
      return fail(env, index, "launch needs grid, block and sharedMemBytes");
    o->shared = (uint32_t)shared;
    if (!jaxon_prepare_launch(env, o->function, o->grid, o->block, o->shared, "cudaProgramCreate")) return 0;
    if (!get_property(env, op, "args", &value) || napi_is_array(env, value, &is_array) != napi_ok || !is_array ||
        napi_get_array_length(env, value, &count) != napi_ok || count > 256)
      return fail(env, index, "launch needs args: an array of at most 256 [slot, byteOffset] pairs");
    program_ref *grown = realloc(p->args, (size_t)(*num_args + count + 1) * sizeof *grown);
    if (!grown) return fail(env, index, "out of host memory");
    p->args = grown;
    o->first_arg = *num_args;
    o->num_args = count;
    for (uint32_t a = 0; a < count; a++) {
      napi_value ref;
      if (napi_get_element(env, value, a, &ref) != napi_ok || !read_ref(env, p, ref, index, 0, &p->args[*num_args + a]))
        return 0;
      note_stream(p, &p->args[*num_args + a], JAXON_STREAM_COMPUTE);
    }
    *num_args += count;
    jaxon_tensor_map_spec specs[JAXON_MAX_TENSOR_MAPS];
    napi_value maps = NULL;
    uint32_t num_maps = 0;
    if (get_property(env, op, "tensorMaps", &value)) maps = value;
    if (!jaxon_read_tensor_maps(env, maps, "cudaProgramCreate", count, specs, &num_maps)) return 0;
    o->first_map = p->num_maps;
    o->num_maps = num_maps;
    if (num_maps) {
      jaxon_tensor_map_spec *more = realloc(p->maps, (size_t)(p->num_maps + num_maps) * sizeof *more);
      if (!more) return fail(env, index, "out of host memory");
      p->maps = more;
      memcpy(p->maps + p->num_maps, specs, num_maps * sizeof *specs);
      p->num_maps += num_maps;
    }
    return 1;
  }
  if (!strcmp(kind, "copy") || !strcmp(kind, "memset")) {
    o->kind = kind[0] == 'c' ? OP_COPY : OP_MEMSET;
    int32_t fill = 0;
    if (!read_stream(env, op, index, &o->stream) || !get_u64_property(env, op, "bytes", &o->bytes, "cudaProgramCreate") ||
        !get_property(env, op, "dst", &value) || !read_ref(env, p, value, index, o->bytes, &o->dst))
      return 0;
    note_stream(p, &o->dst, o->stream);
    if (o->kind == OP_COPY) {
      if (!get_property(env, op, "src", &value) || !read_ref(env, p, value, index, o->bytes, &o->src)) return 0;
      note_stream(p, &o->src, o->stream);
    } else {
      if (!get_property(env, op, "value", &value) || !jaxon_get_i32(env, value, "cudaProgramCreate", "value", &fill))
        return fail(env, index, "memset needs a byte value");
      o->value = fill & 0xff;
    }
    return 1;
  }
  if (!strcmp(kind, "record") || !strcmp(kind, "wait")) {
    o->kind = kind[0] == 'r' ? OP_RECORD : OP_WAIT;
    int32_t event = -1;
    if (!read_stream(env, op, index, &o->stream) || !get_property(env, op, "event", &value) ||
        !jaxon_get_i32(env, value, "cudaProgramCreate", "event", &event) || event < 0 || (uint32_t)event >= p->num_events)
      return fail(env, index, "record and wait need stream and an event index below `events`");
    o->event = event;
    p->used_streams |= 1u << o->stream;
    return 1;
  }
  return fail(env, index, "op must be 'launch', 'copy', 'memset', 'record' or 'wait'");
}

// cudaProgramCreate(device, { slotBytes, arenaBytes, events, graph, fork, join, ops }) -> program
static napi_value program_create(napi_env env, napi_callback_info info) {
  napi_value argv[2], value, ops;
  const char *fn = "cudaProgramCreate";
  uint64_t arena = 0, events = 0;
  uint32_t num_slots = 0, num_ops = 0, num_args = 0;
  bool is_array = false, graph = false;
  if (!jaxon_args(env, info, fn, 2, 2, argv, NULL)) return NULL;
  jaxon_cuda_device *d = jaxon_get_device(env, argv[0], fn);
  if (!d || !get_u64_property(env, argv[1], "arenaBytes", &arena, fn) ||
      !get_u64_property(env, argv[1], "events", &events, fn))
    return NULL;
  if (!get_property(env, argv[1], "slotBytes", &value) || napi_is_array(env, value, &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, value, &num_slots) != napi_ok || !get_property(env, argv[1], "ops", &ops) ||
      napi_is_array(env, ops, &is_array) != napi_ok || !is_array || napi_get_array_length(env, ops, &num_ops) != napi_ok) {
    napi_throw_type_error(env, NULL, "jaxon cuda: cudaProgramCreate: spec needs slotBytes (number[]) and ops (array)");
    return NULL;
  }
  napi_value graph_value;
  bool fork = true, join = true;
  if (get_property(env, argv[1], "graph", &graph_value)) napi_get_value_bool(env, graph_value, &graph);
  if (get_property(env, argv[1], "fork", &graph_value)) napi_get_value_bool(env, graph_value, &fork);
  if (get_property(env, argv[1], "join", &graph_value)) napi_get_value_bool(env, graph_value, &join);
  if (graph && (!fork || !join)) {
    napi_throw_type_error(env, NULL, "jaxon cuda: cudaProgramCreate: a graph forks and joins the copy streams: "
                          "spec.graph true needs fork and join true");
    return NULL;
  }
  jaxon_program *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->device = d;
  p->epoch = d->epoch;
  p->no_fork = !fork;
  p->no_join = !join;
  p->num_slots = num_slots;
  p->arena_bytes = arena;
  p->num_events = (uint32_t)events;
  p->slot_bytes = calloc(num_slots + 1, sizeof *p->slot_bytes);
  p->slot_streams = calloc(num_slots + 1, sizeof *p->slot_streams);
  p->ops = calloc(num_ops + 1, sizeof *p->ops);
  p->events = calloc(p->num_events + 1, sizeof *p->events);
  p->nodes = calloc(num_ops + 1, sizeof *p->nodes);
  p->graph_pointers = calloc(num_slots + 1, sizeof *p->graph_pointers);
  p->graph_slot_host = calloc(num_slots + 1, sizeof *p->graph_slot_host);
  if (!p->slot_bytes || !p->slot_streams || !p->ops || !p->events || !p->nodes || !p->graph_pointers ||
      !p->graph_slot_host)
    goto failed;
  for (uint32_t i = 0; i < num_slots; i++) {
    napi_value element;
    if (napi_get_element(env, value, i, &element) != napi_ok ||
        !jaxon_get_u64(env, element, fn, "slotBytes[i]", &p->slot_bytes[i]))
      goto failed;
  }
  p->num_ops = num_ops;
  for (uint32_t i = 0; i < num_ops; i++) {
    napi_value op;
    if (napi_get_element(env, ops, i, &op) != napi_ok || !read_op(env, p, op, i, &num_args)) goto failed;
  }
  CUresult result = CUDA_SUCCESS;
  for (uint32_t i = 0; i < p->num_events && result == CUDA_SUCCESS; i++)
    result = jaxon_cu->cuEventCreate(&p->events[i], CU_EVENT_DISABLE_TIMING);
  if (result == CUDA_SUCCESS) result = jaxon_cu->cuEventCreate(&p->fork, CU_EVENT_DISABLE_TIMING);
  for (int s = 0; s < JAXON_STREAM_COUNT && result == CUDA_SUCCESS; s++)
    result = jaxon_cu->cuEventCreate(&p->join[s], CU_EVENT_DISABLE_TIMING);
  if (result != CUDA_SUCCESS) {
    jaxon_cuda_throw(env, "cuEventCreate", result);
    goto failed;
  }
  p->graph_enabled = graph && jaxon_cu->has_graphs;
  if (graph && !jaxon_cu->has_graphs) snprintf(p->graph_off_reason, sizeof p->graph_off_reason, "the driver lacks the graph API");
  napi_value handle = jaxon_wrap_handle(env, JAXON_HANDLE_PROGRAM, p, finalize_program);
  if (!handle) goto failed;
  return handle;
failed:
  destroy_program(p);
  return NULL;
}

CUresult jaxon_program_launch_params(const jaxon_program *p, const program_op *o, const CUdeviceptr *bases,
                                     CUdeviceptr *pointers, CUtensorMap *maps, void **params, char *call, size_t call_size) {
  uint32_t n = o->num_args < 256 ? o->num_args : 256;
  for (uint32_t a = 0; a < n; a++) {
    pointers[a] = jaxon_program_resolve(&p->args[o->first_arg + a], bases);
    params[a] = &pointers[a];
  }
  for (uint32_t m = 0; m < o->num_maps; m++) {
    const jaxon_tensor_map_spec *spec = &p->maps[o->first_map + m];
    CUresult result = jaxon_encode_tensor_map(spec, pointers[spec->arg], &maps[m], call, call_size);
    if (result != CUDA_SUCCESS) return result;
    params[n + m] = &maps[m];
  }
  return CUDA_SUCCESS;
}

// Queues every op; `bases[0]` is the arena, `bases[1 + i]` slot i. Returns a CUresult and the failing call.
static CUresult replay(jaxon_program *p, const CUdeviceptr *bases, const int *slot_host, const program_timing *timing,
                       char *call, size_t call_size) {
  jaxon_cuda_device *d = p->device;
  CUdeviceptr pointers[256];
  CUtensorMap maps[JAXON_MAX_TENSOR_MAPS];
  void *params[256 + JAXON_MAX_TENSOR_MAPS];
  CUresult result = CUDA_SUCCESS;
  for (uint32_t i = 0; i < p->num_ops && result == CUDA_SUCCESS; i++) {
    const program_op *o = &p->ops[i];
    CUstream stream = d->streams[o->stream];
    int timed = timing && o->kind != OP_RECORD && o->kind != OP_WAIT;
    if (timed) {
      snprintf(call, call_size, "cuEventRecord(start of ops[%u])", i);
      if ((result = jaxon_cu->cuEventRecord(timing->events[2 * i], stream)) != CUDA_SUCCESS) break;
    }
    switch (o->kind) {
      case OP_LAUNCH: {
        if ((result = jaxon_program_launch_params(p, o, bases, pointers, maps, params, call, call_size)) != CUDA_SUCCESS) break;
        result = jaxon_cu->cuLaunchKernel(jaxon_function_handle(o->function), o->grid[0], o->grid[1], o->grid[2],
                                          o->block[0], o->block[1], o->block[2], o->shared, stream,
                                          o->num_args + o->num_maps ? params : NULL, NULL);
        if (result != CUDA_SUCCESS)
          snprintf(call, call_size, "cuLaunchKernel(%s) in ops[%u]", jaxon_function_name(o->function), i);
        break;
      }
      case OP_COPY: {
        int src_host = o->src.slot >= 0 && slot_host[o->src.slot];
        int dst_host = o->dst.slot >= 0 && slot_host[o->dst.slot];
        CUdeviceptr dst = jaxon_program_resolve(&o->dst, bases), src = jaxon_program_resolve(&o->src, bases);
        if (src_host && dst_host) // pinned host to pinned host (a scan body passing its host slice through)
          result = jaxon_cu->cuMemcpyAsync ? jaxon_cu->cuMemcpyAsync(dst, src, o->bytes, stream) : CUDA_ERROR_INVALID_VALUE;
        else if (dst_host) result = jaxon_cu->cuMemcpyDtoHAsync_v2((void *)(uintptr_t)dst, src, o->bytes, stream);
        else if (src_host) result = jaxon_cu->cuMemcpyHtoDAsync_v2(dst, (const void *)(uintptr_t)src, o->bytes, stream);
        else result = jaxon_cu->cuMemcpyDtoDAsync_v2(dst, src, o->bytes, stream);
        if (result != CUDA_SUCCESS) snprintf(call, call_size, "copy of %llu bytes in ops[%u]", (unsigned long long)o->bytes, i);
        break;
      }
      case OP_MEMSET:
        result = jaxon_cu->cuMemsetD8Async(jaxon_program_resolve(&o->dst, bases), (unsigned char)o->value, o->bytes, stream);
        if (result != CUDA_SUCCESS) snprintf(call, call_size, "cuMemsetD8Async in ops[%u]", i);
        break;
      case OP_RECORD:
        result = jaxon_cu->cuEventRecord(p->events[o->event], stream);
        if (result != CUDA_SUCCESS) snprintf(call, call_size, "cuEventRecord in ops[%u]", i);
        break;
      case OP_WAIT:
        result = jaxon_cu->cuStreamWaitEvent(stream, p->events[o->event], 0);
        if (result != CUDA_SUCCESS) snprintf(call, call_size, "cuStreamWaitEvent in ops[%u]", i);
        break;
    }
    if (timed && result == CUDA_SUCCESS) {
      snprintf(call, call_size, "cuEventRecord(end of ops[%u])", i);
      result = jaxon_cu->cuEventRecord(timing->events[2 * i + 1], stream);
    }
  }
  return result;
}

// Copy streams start after the compute stream's earlier work (the arena may
// reuse memory it still reads) and end before its later work.
static CUresult fork_streams(jaxon_program *p) {
  jaxon_cuda_device *d = p->device;
  if (p->no_fork) return CUDA_SUCCESS;
  CUresult result = jaxon_cu->cuEventRecord(p->fork, d->streams[JAXON_STREAM_COMPUTE]);
  for (int s = 1; s < JAXON_STREAM_COUNT && result == CUDA_SUCCESS; s++)
    if ((p->used_streams >> s) & 1) result = jaxon_cu->cuStreamWaitEvent(d->streams[s], p->fork, 0);
  return result;
}

static CUresult join_streams(jaxon_program *p) {
  jaxon_cuda_device *d = p->device;
  CUresult result = CUDA_SUCCESS;
  if (p->no_join) return CUDA_SUCCESS;
  for (int s = 1; s < JAXON_STREAM_COUNT && result == CUDA_SUCCESS; s++) {
    if (!((p->used_streams >> s) & 1)) continue;
    result = jaxon_cu->cuEventRecord(p->join[s], d->streams[s]);
    if (result == CUDA_SUCCESS) result = jaxon_cu->cuStreamWaitEvent(d->streams[JAXON_STREAM_COMPUTE], p->join[s], 0);
  }
  return result;
}

static CUresult replay_all(jaxon_program *p, const CUdeviceptr *bases, const int *slot_host,
                           const program_timing *timing, char *call, size_t size) {
  CUresult result = CUDA_SUCCESS;
  if (timing) {
    snprintf(call, size, "cuEventRecord(base of a timed run)");
    result = jaxon_cu->cuEventRecord(timing->events[2 * p->num_ops], p->device->streams[JAXON_STREAM_COMPUTE]);
  }
  if (result == CUDA_SUCCESS && (result = fork_streams(p)) != CUDA_SUCCESS) snprintf(call, size, "fork of the copy streams");
  if (result == CUDA_SUCCESS) result = replay(p, bases, slot_host, timing, call, size);
  if (result == CUDA_SUCCESS && (result = join_streams(p)) != CUDA_SUCCESS) snprintf(call, size, "join of the copy streams");
  return result;
}

// Creates a program's timing events (with timing enabled, unlike every other event of the runtime).
static int ensure_timing(napi_env env, jaxon_program *p, const char *fn) {
  if (p->timing) return 1;
  if (!jaxon_cu->cuEventElapsedTime) {
    char message[200];
    snprintf(message, sizeof message, "jaxon cuda: %s: this driver has no cuEventElapsedTime, so runs cannot be timed", fn);
    jaxon_throw(env, message);
    return 0;
  }
  p->timing = calloc(2 * (size_t)p->num_ops + 1, sizeof *p->timing);
  if (!p->timing) return jaxon_throw(env, "jaxon cuda: out of host memory for timing events"), 0;
  for (uint32_t i = 0; i <= 2 * p->num_ops; i++) {
    int needed = i == 2 * p->num_ops || (p->ops[i / 2].kind != OP_RECORD && p->ops[i / 2].kind != OP_WAIT);
    CUresult result = needed ? jaxon_cu->cuEventCreate(&p->timing[i], CU_EVENT_DEFAULT) : CUDA_SUCCESS;
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuEventCreate(timing)", result), 0;
  }
  return 1;
}

// After a timed run: waits for it, then a Float64Array of [start, end] per op in milliseconds from the run's base
// event (recorded on the compute stream before anything else of the run); NaN for records and waits.
static napi_value timing_result(napi_env env, jaxon_program *p) {
  CUresult result = jaxon_cu->cuStreamSynchronize(p->device->streams[JAXON_STREAM_COMPUTE]);
  if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuStreamSynchronize(timed run)", result), NULL;
  napi_value buffer, array;
  void *data = NULL;
  size_t n = 2 * (size_t)p->num_ops;
  JAXON_CHECK(env, napi_create_arraybuffer(env, n * sizeof(double), &data, &buffer));
  double *times = data;
  CUevent base = p->timing[n];
  for (size_t i = 0; i < n; i++) {
    float ms = 0;
    if (!p->timing[i]) {
      times[i] = NAN;
      continue;
    }
    result = jaxon_cu->cuEventElapsedTime(&ms, base, p->timing[i]);
    if (result != CUDA_SUCCESS) return jaxon_cuda_throw(env, "cuEventElapsedTime", result), NULL;
    times[i] = ms;
  }
  JAXON_CHECK(env, napi_create_typedarray(env, napi_float64_array, n, buffer, 0, &array));
  return array;
}

// cudaProgramRun(program, slots, offsets?): queues the whole launch list; returns at once. offsets[i] (bytes, default
// 0) moves slot i's base into its buffer, so a loop body runs on a window of a larger buffer (scan's xs[t], a region
// of the caller's arena). cudaProgramRunTimed(program, slots, offsets?) runs it op by op (never as a graph) with a
// timing event around each op on its own stream, waits, and returns the ops' [start, end] times (timing_result):
// the profiler's view of what overlapped.
static napi_value run(napi_env env, napi_callback_info info, int timed) {
  napi_value argv[3];
  const char *fn = timed ? "cudaProgramRunTimed" : "cudaProgramRun";
  bool is_array = false, has_offsets = false;
  uint32_t count = 0;
  size_t argc = 0;
  if (!jaxon_args(env, info, fn, 2, 3, argv, &argc)) return NULL;
  if (argc == 3) {
    napi_valuetype type;
    napi_typeof(env, argv[2], &type);
    has_offsets = type != napi_undefined;
  }
  jaxon_program *p = jaxon_unwrap_handle(env, argv[0], JAXON_HANDLE_PROGRAM, fn, "program");
  if (!p || !jaxon_use_device(env, p->device)) return NULL;
  if (p->epoch != p->device->epoch) return jaxon_throw_lost(env, p->device, fn, "program"), NULL;
  if (timed && !ensure_timing(env, p, fn)) return NULL;
  if (napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[1], &count) != napi_ok ||
      count != p->num_slots) {
    char message[200];
    snprintf(message, sizeof message, "jaxon cuda: %s: slots must be an array of %u buffers", fn, p->num_slots);
    napi_throw_type_error(env, NULL, message);
    return NULL;
  }
  jaxon_cuda_device *d = p->device;
  // a run is on the host's hot path (one per jitted call): small programs keep their slot tables on the stack
  enum { SMALL = 16 };
  jaxon_cuda_buffer *small_slots[SMALL];
  CUdeviceptr small_bases[SMALL];
  int small_host[SMALL];
  int heap = count + 1 > SMALL;
  jaxon_cuda_buffer **slots = heap ? calloc(count + 1, sizeof *slots) : small_slots;
  CUdeviceptr *bases = heap ? calloc(count + 1, sizeof *bases) : small_bases;
  int *slot_host = heap ? calloc(count + 1, sizeof *slot_host) : small_host;
  jaxon_cuda_buffer *arena = NULL;
  napi_value result = NULL;
  if (!slots || !bases || !slot_host) goto done;
  if (!heap) {
    memset(small_bases, 0, sizeof small_bases);
    memset(small_host, 0, sizeof small_host);
  }
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    char arg[32], message[300];
    jaxon_indexed_name(arg, "slots", i);
    if (napi_get_element(env, argv[1], i, &element) != napi_ok || !(slots[i] = jaxon_get_buffer(env, element, fn, arg)))
      goto done;
    uint64_t offset = 0;
    if (has_offsets) {
      napi_value o;
      jaxon_indexed_name(arg, "offsets", i);
      if (napi_get_element(env, argv[2], i, &o) != napi_ok || !jaxon_get_u64(env, o, fn, arg, &offset)) goto done;
    }
    if (slots[i]->device != d || offset > slots[i]->nbytes || slots[i]->nbytes - offset < p->slot_bytes[i]) {
      char after[64] = "";
      if (offset) snprintf(after, sizeof after, " after offset %llu", (unsigned long long)offset);
      snprintf(message, sizeof message, "jaxon cuda: %s: slots[%u] must be a buffer of at least %llu bytes%s on device "
               "%d, got %zu bytes on device %d", fn, i, (unsigned long long)p->slot_bytes[i], after, d->ordinal,
               slots[i]->nbytes, slots[i]->device->ordinal);
      napi_throw_range_error(env, NULL, message);
      goto done;
    }
    bases[i + 1] = slots[i]->address + offset;
    slot_host[i] = slots[i]->host;
  }
  jaxon_use_device(env, d);
  if (p->arena_bytes && !(arena = jaxon_buffer_alloc(env, d, p->arena_bytes, 0, JAXON_STREAM_COMPUTE, fn))) goto done;
  bases[0] = arena ? arena->address : 0;
  // Waits for each slot's last writer on the streams that touch it; a graph
  // starts from the compute stream, so then compute waits for all of them.
  // Without the fork the caller orders the run itself: a slot's last writer is
  // tracked per buffer, and a scan's prefetch into its region of the caller's
  // arena must not wait for the iteration computing in another region.
  for (uint32_t i = 0; i < count; i++) {
    for (int s = JAXON_STREAM_COUNT - 1; s >= 0 && !p->no_fork; s--) {
      int touches = p->graph_enabled ? s == JAXON_STREAM_COMPUTE : (p->slot_streams[i] >> s) & 1;
      if (touches && !jaxon_buffer_use(env, slots[i], s)) goto done;
    }
    for (int s = 0; s < JAXON_STREAM_COUNT; s++)
      if ((p->slot_streams[i] >> s) & 1) jaxon_alloc_record_use(slots[i]->block, jaxon_stream_id(d, s));
  }
  char call[300];
  call[0] = 0;
  CUresult status = CUDA_SUCCESS;
  program_timing timing = {p->timing};
  int reuse = 0;
  if (!timed && p->graph_enabled && p->exec) {
    reuse = !memcmp(p->graph_pointers, bases, (count + 1) * sizeof *bases) &&
            !memcmp(p->graph_slot_host, slot_host, count * sizeof *slot_host);
    if (!reuse) reuse = jaxon_graph_update(p, bases, slot_host);
  }
  if (!timed && p->graph_enabled && !reuse && !p->device->lost) reuse = jaxon_graph_build(p, bases, slot_host);
  if (p->device->lost) { // an update or build met the lost context
    jaxon_throw_lost(env, p->device, NULL, NULL);
    goto done;
  }
  if (reuse) {
    memcpy(call, "cuGraphLaunch", sizeof "cuGraphLaunch");
    status = jaxon_cu->cuGraphLaunch(p->exec, d->streams[JAXON_STREAM_COMPUTE]);
    if (status == CUDA_SUCCESS) p->graph_launches++;
  } else {
    status = replay_all(p, bases, slot_host, timed ? &timing : NULL, call, sizeof call);
  }
  if (status != CUDA_SUCCESS) {
    jaxon_cuda_throw(env, call, status);
    goto done;
  }
  p->runs++;
  // Slots the run touched are now ordered after it on compute (the copy streams join compute at its end). A slot
  // it did not touch keeps its own last writer: marking it too would drop a pending copy's event unwaited. Without
  // the join nothing is ordered yet: the caller's later run joins it (the allocator saw each stream's use).
  for (uint32_t i = 0; i < count && !p->no_join; i++)
    if (p->graph_enabled || p->slot_streams[i]) jaxon_buffer_written_on_compute(slots[i]);
  if (timed) result = timing_result(env, p);
  else napi_get_undefined(env, &result);
done:
  if (arena) {
    jaxon_buffer_free(env, arena); // stream-ordered: the run's queued work still owns it
    free(arena);
  }
  if (heap) {
    free(slots);
    free(bases);
    free(slot_host);
  }
  return result;
}

static napi_value program_run(napi_env env, napi_callback_info info) { return run(env, info, 0); }
static napi_value program_run_timed(napi_env env, napi_callback_info info) { return run(env, info, 1); }

// cudaProgramStats(program) -> { runs, graphLaunches, graphCaptures, graphUpdates, graph, graphOffReason }:
// graphCaptures counts graphs built and instantiated, graphUpdates runs that updated the instantiated one
static napi_value program_stats(napi_env env, napi_callback_info info) {
  napi_value argv[1], result, flag;
  if (!jaxon_args(env, info, "cudaProgramStats", 1, 1, argv, NULL)) return NULL;
  jaxon_program *p = jaxon_unwrap_handle(env, argv[0], JAXON_HANDLE_PROGRAM, "cudaProgramStats", "program");
  if (!p) return NULL;
  JAXON_CHECK(env, napi_create_object(env, &result));
  jaxon_set_number(env, result, "runs", (double)p->runs);
  jaxon_set_number(env, result, "graphLaunches", (double)p->graph_launches);
  jaxon_set_number(env, result, "graphCaptures", (double)p->graph_captures);
  jaxon_set_number(env, result, "graphUpdates", (double)p->graph_updates);
  JAXON_CHECK(env, napi_get_boolean(env, p->graph_enabled, &flag));
  JAXON_CHECK(env, napi_set_named_property(env, result, "graph", flag));
  jaxon_set_string(env, result, "graphOffReason", p->graph_off_reason);
  return result;
}

void jaxon_init_cuda_program(napi_env env, napi_value exports) {
  jaxon_export(env, exports, "cudaProgramCreate", program_create);
  jaxon_export(env, exports, "cudaProgramRun", program_run);
  jaxon_export(env, exports, "cudaProgramRunTimed", program_run_timed);
  jaxon_export(env, exports, "cudaProgramStats", program_stats);
}
