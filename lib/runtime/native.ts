// The native addon (cuda/*.c, built by node-gyp into build/Release, or the
// package's prebuilt binary; found by addon-files.ts): dlopen,
// dlsym and a call trampoline for compiled CPU kernels, a CUDA probe, and the
// CUDA runtime (typed in cuda-addon.ts). Loaded lazily so that importing jaxon
// never fails just because the addon is missing; the first use that needs it
// says how to build it.
import path from 'node:path';
import { loadAddon } from './addon-files.js';
import { type CudaAddonFunctions, cudaAddonFunctionNames } from './cuda-addon.js';

declare const libraryBrand: unique symbol;
declare const symbolBrand: unique symbol;

/** A dlopen handle (an N-API External); never closed, so it stays valid. */
export type NativeLibrary = { readonly [libraryBrand]: 'NativeLibrary' };
/** A dlsym result for a kernel `void fn(void **buffers, const int64_t *params)`. */
export type NativeSymbol = { readonly [symbolBrand]: 'NativeSymbol' };

export interface CudaProbe {
  readonly available: boolean;
  /** Why CUDA is or is not usable, for messages that explain a CPU fallback. */
  readonly reason: string;
  /** The driver library it tried ($JAXON_LIBCUDA or libcuda.so.1), or the file it loaded. */
  readonly library: string;
  /** cuDriverGetVersion (12040 is CUDA 12.4); 0 without a driver. */
  readonly driverVersion: number;
  readonly deviceCount: number;
  /** The NVRTC library loaded, '' when none was found. */
  readonly nvrtcLibrary: string;
  /** 'major.minor', '' when NVRTC was not found. */
  readonly nvrtcVersion: string;
  /** Real architectures NVRTC can compile CUBIN for (75, 80, 86, 89, 90, ...). */
  readonly nvrtcArchs: readonly number[];
  /** Whether the driver has the CUDA graph API (explicit building, CUDA 12+). */
  readonly graphs: boolean;
  /** Whether it can also update an instantiated graph's nodes in place. */
  readonly graphUpdates: boolean;
  /** Whether it can reset a lost context (cuDevicePrimaryCtxReset_v2); without it a sticky error needs a restart. */
  readonly contextReset: boolean;
  /** Whether it can encode TMA descriptors (cuTensorMapEncodeTiled, CUDA 12+); without it the Hopper GEMM loads by cp.async. */
  readonly tensorMaps: boolean;
  /** Whether the driver is jaxon's emulated GPU (JAXON_CUDA_EMULATOR=1), which runs kernels on the host CPU. */
  readonly emulated: boolean;
  /** The emulated GPU's identification (what its compiled kernels depend on beyond their source); '' otherwise. */
  readonly emulator: string;
}

export interface NativeAddon extends CudaAddonFunctions {
  /** dlopen(path, RTLD_NOW | RTLD_LOCAL); throws with dlerror's message. */
  loadLibrary(path: string): NativeLibrary;
  /** dlsym(library, name); throws when the symbol is missing. */
  getSymbol(library: NativeLibrary, name: string): NativeSymbol;
  /** Calls fn(buffers' data pointers, params' data) synchronously on this thread. */
  callKernel(fn: NativeSymbol, buffers: readonly (ArrayBuffer | ArrayBufferView)[], params: BigInt64Array): void;
  cudaProbe(): CudaProbe;
}

const requiredFunctions = ['loadLibrary', 'getSymbol', 'callKernel', 'cudaProbe', ...cudaAddonFunctionNames] as const;

let addon: NativeAddon | undefined;
let addonFile: string | undefined;
// A failed load (after one build attempt) is not retried: every later use rethrows it.
let addonFailure: Error | undefined;

/** The loaded addon; throws an Error saying how to build it when it is missing or stale. */
export function native(): NativeAddon {
  if (addon) return addon;
  if (addonFailure) throw addonFailure;
  let found: ReturnType<typeof loadAddon>;
  try {
    found = loadAddon('jaxon_native');
  } catch (error) {
    addonFailure = error as Error;
    throw error;
  }
  const loaded = found.exports;
  // A build from an older checkout loads fine but lacks newer functions.
  const missing = requiredFunctions.filter(
    (name) => typeof (loaded as Record<string, unknown> | null)?.[name] !== 'function',
  );
  if (missing.length) {
    throw new Error(
      `jaxon: the native addon jaxon_native is out of date (missing ${missing.join(', ')}); ` +
        `rebuild it (\`npx node-gyp rebuild\` in ${path.dirname(path.dirname(path.dirname(found.file)))})`,
    );
  }
  addon = loaded as NativeAddon;
  addonFile = `${found.file} (${found.kind})`;
  return addon;
}

/** Which addon binary was loaded and how it was found, or why none loads; for environmentInfo. */
export function nativeAddonInfo(): string {
  try {
    native();
    return addonFile!;
  } catch (error) {
    return (error as Error).message;
  }
}
