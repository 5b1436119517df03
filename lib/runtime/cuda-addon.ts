// The CUDA half of the native addon's surface (cuda/cuda_*.c), typed: devices,
// buffers and transfers, NVRTC compiles, modules and launches, programs
// (native launch lists), and the allocator test hooks. native.ts merges these
// into NativeAddon and checks at load that a build has every one of them.
// Handles are type-tagged N-API Externals: passing one kind where another is
// expected throws a TypeError instead of crashing.

declare const deviceBrand: unique symbol;
declare const bufferBrand: unique symbol;
declare const moduleBrand: unique symbol;
declare const functionBrand: unique symbol;
declare const programBrand: unique symbol;
declare const testAllocatorBrand: unique symbol;

export type CudaDeviceHandle = { readonly [deviceBrand]: 'CudaDevice' };
export type CudaBufferHandle = { readonly [bufferBrand]: 'CudaBuffer' };
export type CudaModuleHandle = { readonly [moduleBrand]: 'CudaModule' };
export type CudaFunctionHandle = { readonly [functionBrand]: 'CudaFunction' };
export type CudaProgramHandle = { readonly [programBrand]: 'CudaProgram' };
export type TestAllocatorHandle = { readonly [testAllocatorBrand]: 'TestAllocator' };

export type CudaMemoryKind = 'device' | 'pinned_host';

export interface CudaDeviceInfo {
  readonly handle: CudaDeviceHandle;
  readonly ordinal: number;
  /** cuDeviceGetName, e.g. 'NVIDIA H100 80GB HBM3' (JAX's device_kind). */
  readonly name: string;
  readonly computeCapability: readonly [number, number];
  readonly totalMemory: number;
  readonly smCount: number;
  readonly maxThreadsPerBlock: number;
  readonly maxSharedMemoryPerBlockOptin: number;
  readonly l2CacheBytes: number;
  readonly asyncEngineCount: number;
  /** cuDriverGetVersion: 12040 is CUDA 12.4. */
  readonly driverVersion: number;
  /** 'major.minor', or '' when NVRTC was not found (nvrtcReason says why). */
  readonly nvrtcVersion: string;
  readonly nvrtcReason: string;
}

/** The caching allocator's counters (JAX's Device.memory_stats(), camelCased, plus a few of ours). */
export interface CudaAllocatorStats {
  bytesInUse: number;
  peakBytesInUse: number;
  /** The allocator never reserves more than this (device memory free when jaxon started; 0: no limit). */
  bytesLimit: number;
  /** Memory held from the driver: in use, cached, or waiting for another stream. */
  bytesReserved: number;
  peakBytesReserved: number;
  /** Freed blocks whose reuse waits for another stream's work. */
  bytesPendingFree: number;
  /** The largest cached block ready for reuse. */
  largestFreeBlock: number;
  largestAllocSize: number;
  numAllocs: number;
  numLiveBuffers: number;
  numSegments: number;
  /** Out-of-memory retries that emptied the cache. */
  numCacheFlushes: number;
  /** Requests that failed even after emptying the cache. */
  numOoms: number;
  /** The sizes asked for (before the allocator's rounding) of buffers handed out and not freed. */
  bytesRequested: number;
  peakBytesRequested: number;
}

export interface CudaMemoryStats extends CudaAllocatorStats {
  /** The pinned-host pool (memory kind pinned_host and transfer staging). */
  pinnedHost: CudaAllocatorStats;
  /** Buffer bytes (device and pinned) this device has reported to V8 as external memory. */
  bytesReportedToV8: number;
  /** V8's external-memory total after the last report (what its GC heuristics see). */
  v8ExternalMemory: number;
}

export interface CudaCompileResult {
  /** CUBIN, or NUL-terminated PTX text. */
  image: Uint8Array;
  kind: 'cubin' | 'ptx';
  /** NVRTC's log (warnings), '' when silent. */
  log: string;
}

/** A pointer fixed at program creation: [slot, byteOffset], slot -1 being the run's arena. */
export type CudaProgramRef = readonly [number, number];
export type CudaProgramStream = 'compute' | 'h2d' | 'd2h';

/** A TMA descriptor the native launch encodes (cuTensorMapEncodeTiled) from the address of buffer argument `arg`. */
export interface CudaTensorMapSpec {
  arg: number;
  /** CUtensorMapDataType */
  dataType: number;
  /** elements, innermost first */
  dims: readonly number[];
  /** bytes, of dimensions 1.. */
  strides: readonly number[];
  box: readonly number[];
  /** CUtensorMapSwizzle */
  swizzle: number;
}

export type CudaProgramOp =
  | {
      op: 'launch';
      function: CudaFunctionHandle;
      grid: readonly [number, number, number];
      block: readonly [number, number, number];
      sharedMemBytes: number;
      args: readonly CudaProgramRef[];
      /** tensor-map parameters after the pointers, encoded from args[arg]'s address at each run (cuda_tensor_map.h) */
      tensorMaps?: readonly CudaTensorMapSpec[];
    }
  | { op: 'copy'; stream: CudaProgramStream; dst: CudaProgramRef; src: CudaProgramRef; bytes: number }
  | { op: 'memset'; stream: CudaProgramStream; dst: CudaProgramRef; value: number; bytes: number }
  | { op: 'record' | 'wait'; stream: CudaProgramStream; event: number };

export interface CudaProgramSpec {
  /** The least bytes each slot buffer must have (checked on every run). */
  slotBytes: readonly number[];
  /** Temporaries: allocated from the caching allocator for each run. */
  arenaBytes: number;
  /** Events the program's record and wait ops name (0 .. events - 1). */
  events: number;
  /** Run as a CUDA graph: built on the first run, relaunched, and updated in place when the pointers change. */
  graph?: boolean;
  /**
   * false: the copy streams do not first wait for the compute stream, nor for the last writers of the slots (default
   * true: a run is ordered after the work queued before it). Only for copies the caller orders itself, such as a
   * scan's next input slice, read from an input the scan does not write into a region only prefetches write.
   */
  fork?: boolean;
  /**
   * false: the compute stream does not wait for the copy streams at the end of a run, so a copy stays in flight
   * while later work runs; a later run that touches the same copy stream joins it (its slots are not marked
   * ordered on compute). Not with `graph`.
   */
  join?: boolean;
  ops: readonly CudaProgramOp[];
}

export interface CudaProgramStats {
  runs: number;
  graphLaunches: number;
  /** Graphs built from the ops and instantiated (the first graph run, and each one whose update was refused). */
  graphCaptures: number;
  /** Graph runs with other pointers that updated the instantiated graph's nodes in place. */
  graphUpdates: number;
  graph: boolean;
  /** Why graphs are off for this program ('' when on or never asked for). */
  graphOffReason: string;
}

export interface TestBlock {
  address: number;
  size: number;
}

export interface TestSegment {
  address: number;
  stream: number;
  pool: 'small' | 'large';
  blocks: { address: number; size: number; state: 'free' | 'allocated' | 'pending' }[];
}

/** Whether a device's context was lost (a sticky error), why, and how many resets it has had. */
export interface CudaDeviceStatus {
  lost: boolean;
  /** The error that lost it ('CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure: ...)'), kept after a reset. */
  reason: string;
  /** Raised by each reset: buffers, modules, functions and programs of an older epoch are stale. */
  epoch: number;
  resets: number;
}

export interface CudaAddonFunctions {
  cudaInit(ordinal: number): CudaDeviceInfo;
  /**
   * Resets the device's primary context (after a lost context, or at any time) and starts a fresh one; returns the
   * new epoch. Waiting Promises reject; what was made on the device before is stale. Throws DEVICE_LOST when the
   * driver cannot reset (the process must restart).
   */
  cudaDeviceReset(device: CudaDeviceHandle): number;
  /** Never throws. */
  cudaDeviceStatus(device: CudaDeviceHandle): CudaDeviceStatus;
  cudaMemoryStats(device: CudaDeviceHandle): CudaMemoryStats;
  /** Returns cached device and pinned memory to the driver; the bytes released. */
  cudaEmptyCache(device: CudaDeviceHandle): number;
  /** The peaks (in use, requested, reserved) of the device pool and the pinned-host pool start again from their current values. */
  cudaResetPeakMemoryStats(device: CudaDeviceHandle): void;
  /** Settles once every stream of the device reaches this point. */
  cudaSynchronize(device: CudaDeviceHandle): Promise<void>;
  cudaSynchronizeSync(device: CudaDeviceHandle): void;
  cudaMemGetInfo(device: CudaDeviceHandle): { free: number; total: number };

  cudaAlloc(device: CudaDeviceHandle, nbytes: number, memoryKind?: CudaMemoryKind): CudaBufferHandle;
  cudaFree(buffer: CudaBufferHandle): void;
  cudaBufferInfo(buffer: CudaBufferHandle): { pointer: bigint; nbytes: number; memoryKind: CudaMemoryKind; freed: number };
  /** Copies bytes into a new buffer (device: through the pinned staging ring, asynchronously). */
  cudaFromHost(device: CudaDeviceHandle, bytes: ArrayBufferView | ArrayBuffer, memoryKind?: CudaMemoryKind): CudaBufferHandle;
  cudaToHost(buffer: CudaBufferHandle): Promise<ArrayBuffer>;
  cudaToHostSync(buffer: CudaBufferHandle): ArrayBuffer;
  /** Queues a copy of src's bytes into dst (equal sizes, any memory kinds) on the stream of its direction. */
  cudaCopy(dst: CudaBufferHandle, src: CudaBufferHandle): void;
  cudaDevicePut(buffer: CudaBufferHandle, memoryKind: CudaMemoryKind): CudaBufferHandle;
  cudaBlockUntilReady(buffer: CudaBufferHandle): Promise<void>;
  cudaMemset(buffer: CudaBufferHandle, value: number): void;

  /** headers: [includeName, content] pairs handed to NVRTC as in-memory headers. */
  cudaCompile(source: string, name: string, options: readonly string[], headers?: readonly (readonly [string, string])[]): Promise<CudaCompileResult>;
  cudaCompileSync(source: string, name: string, options: readonly string[], headers?: readonly (readonly [string, string])[]): CudaCompileResult;
  /** Compiles every job in parallel on native threads and returns when all are done: a result or an Error each. */
  cudaCompileSyncMany(
    jobs: readonly (readonly [source: string, name: string, options: readonly string[], headers?: readonly (readonly [string, string])[]])[],
  ): (CudaCompileResult | Error)[];
  cudaModuleLoad(device: CudaDeviceHandle, image: Uint8Array, label: string): CudaModuleHandle;
  cudaGetFunction(
    device: CudaDeviceHandle,
    module: CudaModuleHandle,
    name: string,
  ): { handle: CudaFunctionHandle; numRegs: number; maxThreadsPerBlock: number };
  cudaLaunch(
    fn: CudaFunctionHandle,
    grid: readonly [number, number, number],
    block: readonly [number, number, number],
    sharedMemBytes: number,
    buffers: readonly CudaBufferHandle[],
    tensorMaps?: readonly CudaTensorMapSpec[],
  ): void;

  cudaProgramCreate(device: CudaDeviceHandle, spec: CudaProgramSpec): CudaProgramHandle;
  /** Queues a run; offsets[i] (bytes) moves slot i's base into its buffer. */
  cudaProgramRun(program: CudaProgramHandle, slots: readonly CudaBufferHandle[], offsets?: readonly number[]): void;
  /**
   * Runs op by op (never as a graph) with a timing event around each op on its stream, waits, and returns each op's
   * [start, end] in ms from the run's base event (NaN for records and waits): what the profiler shows.
   */
  cudaProgramRunTimed(program: CudaProgramHandle, slots: readonly CudaBufferHandle[], offsets?: readonly number[]): Float64Array;
  cudaProgramStats(program: CudaProgramHandle): CudaProgramStats;
  /**
   * A plain cuMemcpyAsync of `bytes` between a device allocation and host memory (pinned from cuMemHostAlloc, or
   * pageable from malloc), `iterations` times on one stream, each timed by CUDA events: ms per copy. The bandwidth
   * jaxon's own transfers are compared with.
   */
  cudaCopyBenchmark(device: CudaDeviceHandle, bytes: number, direction: 'h2d' | 'd2h', host: 'pinned' | 'pageable', iterations: number): Float64Array;

  testAllocatorCreate(kind: 'device' | 'host', limitBytes: number, capacityBytes: number): TestAllocatorHandle;
  testAllocatorAlloc(allocator: TestAllocatorHandle, size: number, stream?: number): TestBlock;
  testAllocatorFree(allocator: TestAllocatorHandle, address: number): void;
  testAllocatorRecordUse(allocator: TestAllocatorHandle, address: number, stream: number): void;
  /** Completes the fake events recorded on `stream` (all streams when omitted); returns how many. */
  testAllocatorCompleteEvents(allocator: TestAllocatorHandle, stream?: number): number;
  testAllocatorStats(allocator: TestAllocatorHandle): CudaAllocatorStats & { pendingEvents: number; fakeReservedBytes: number };
  testAllocatorEmptyCache(allocator: TestAllocatorHandle): number;
  testAllocatorSegments(allocator: TestAllocatorHandle): TestSegment[];
}

export const cudaAddonFunctionNames = [
  'cudaInit', 'cudaDeviceReset', 'cudaDeviceStatus', 'cudaMemoryStats', 'cudaEmptyCache', 'cudaResetPeakMemoryStats', 'cudaSynchronize', 'cudaSynchronizeSync', 'cudaMemGetInfo',
  'cudaAlloc', 'cudaFree', 'cudaBufferInfo', 'cudaFromHost', 'cudaToHost', 'cudaToHostSync', 'cudaCopy', 'cudaDevicePut',
  'cudaBlockUntilReady', 'cudaMemset', 'cudaCompile', 'cudaCompileSync', 'cudaCompileSyncMany', 'cudaModuleLoad', 'cudaGetFunction',
  'cudaLaunch', 'cudaProgramCreate', 'cudaProgramRun', 'cudaProgramRunTimed', 'cudaProgramStats', 'cudaCopyBenchmark', 'testAllocatorCreate',
  'testAllocatorAlloc', 'testAllocatorFree', 'testAllocatorRecordUse', 'testAllocatorCompleteEvents',
  'testAllocatorStats', 'testAllocatorEmptyCache', 'testAllocatorSegments',
] as const satisfies readonly (keyof CudaAddonFunctions)[];

// Every function of the interface is listed above (a missing name fails to type-check here).
type Unlisted = Exclude<keyof CudaAddonFunctions, (typeof cudaAddonFunctionNames)[number]>;
const everyFunctionListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFunctionListed;
