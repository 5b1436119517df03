// Whether a CUDA device's state is still there. A faulting or hanging kernel
// loses the context (CUDA's sticky errors: every later driver call fails);
// the addon notices (cuda_runtime.c) and this turns it into what a JAX user
// can act on: the call that meets the loss raises DeviceLostError saying what
// failed and what was queued since the last completed wait (on a GPU the
// driver does not name the kernel; the emulated GPU does); every buffer made
// before is invalid, and using one raises DeviceLostError rather than reading
// garbage; and the backend tries to reset the device on its next use (cuda.ts).
// JAX itself cannot recover (XLA's client must be recreated, and NVIDIA
// documents a restart). On a real GPU the reset fails too: on an H100
// (2026-11-27, bench/gpu/recovery-check.mjs) cuDevicePrimaryCtxReset returns
// success and the next cuDevicePrimaryCtxRetain fails with the same
// CUDA_ERROR_ILLEGAL_ADDRESS, so there the message says to restart the
// process; a driver that allows it (jaxon's emulated GPU) gets a fresh device.
// An automatic attempt was chosen over a public call such as JAX's
// clear_backends because the device is unusable until then anyway.
//
// A generation counts the device's contexts: it mirrors the addon's epoch,
// which each reset raises; a buffer remembers the one it was made in.
import type { Array } from '../core/array.js';
import { DeviceLostError } from '../core/errors.js';

/**
 * Whether any of these arrays lived on a device whose state was lost since (a cache holding them, such as a jitted
 * function's traced constants, must be made again).
 */
export function lostArrays(arrays: readonly Array[]): boolean {
  return arrays.some((a) => !a.isTracer && !a.isDisposed && (a.storage().buffer as { goneError?: unknown }).goneError !== undefined);
}

/** How many labels of recent work a failure message lists. */
const RECENT_LIMIT = 6;

export class DeviceHealth {
  #generation = 1;
  #lost: string | undefined;
  /** Why each finished generation ended. */
  readonly #endings = new Map<number, string>();
  /** Work queued since the last wait that completed (jitted functions, kernels), oldest first. */
  #recent: string[] = [];
  #recentDropped = 0;
  /** The driver could not reset: every use fails (a restart is the way out). */
  #unrecoverable: string | undefined;

  constructor(
    /** 'CUDADevice(id=0)', as the device prints. */
    readonly device: string,
    /** Whether the driver can reset a lost context in the same process: jaxon's emulated GPU can, NVIDIA's cannot. */
    readonly resettable = false,
  ) {}

  /** What happens next, for the messages: a reset on the next use, or a restart. */
  #afterwards(): string {
    return this.resettable
      ? 'jaxon resets the device on its next use (this driver allows it), so later work runs on a fresh device'
      : "NVIDIA's driver cannot recover from this in the same process (jaxon tries a reset on the next use; on an " +
          'H100 it fails and every use then says so): restart the process to use the device again. Arrays on other ' +
          'devices (the CPU) are unaffected';
  }

  get generation(): number {
    return this.#generation;
  }

  /** Why the current generation is lost ('CUDA_ERROR_LAUNCH_FAILED (...)'), or undefined while it works. */
  get lost(): string | undefined {
    return this.#lost;
  }

  /** Notes work queued on the device, for the message of a failure it may cause. */
  noteWork(label: string): void {
    if (this.#recent[this.#recent.length - 1] === label) return;
    this.#recent.push(label);
    if (this.#recent.length > RECENT_LIMIT) {
      this.#recent.shift();
      this.#recentDropped++;
    }
  }

  /** A wait for the device completed: what was queued before it ran. */
  noteWaitDone(): void {
    this.#recent = [];
    this.#recentDropped = 0;
  }

  /** The device's context was lost, `reason` being the driver's error: the error the failing call raises. */
  failed(reason: string, cause?: unknown): DeviceLostError {
    if (this.#lost === undefined) this.#lost = reason;
    const recent = this.#recent.length
      ? ` while running work queued since the last completed wait: ${this.#recentDropped ? `${this.#recentDropped} more, then ` : ''}${this.#recent.join(', ')}`
      : '';
    return new DeviceLostError(
      `${this.device} failed: ${this.#lost}${recent}. The device's state is lost: work queued on it did not run, and ` +
        `every array on it is now invalid (using one raises DeviceLostError). ${this.#afterwards()}; recompute the arrays ` +
        `you need from data on the host or another device.`,
      cause === undefined ? undefined : { cause },
    );
  }

  /** Whether memory made in `generation` is usable: the device was neither lost nor reset since. */
  live(generation: number): boolean {
    return generation === this.#generation && this.#lost === undefined;
  }

  /** The error of using something made in `generation` (a buffer, an executable's kernels), if it is gone. */
  goneSince(generation: number, what: string): DeviceLostError | undefined {
    if (generation === this.#generation) {
      if (this.#lost === undefined) return undefined;
      return new DeviceLostError(
        `${this.device}: ${what} is invalid: the device's state was lost (${this.#lost}). Arrays on ${this.device} from ` +
          `before the failure are gone; recompute them (${this.resettable ? 'the device is reset on its next use' : 'after restarting the process: the driver cannot reset this device'}).`,
      );
    }
    return new DeviceLostError(
      `${this.device}: ${what} is invalid: it was made before the device's state was lost (${this.#endings.get(generation)}) ` +
        `and the device was reset; recompute it.`,
    );
  }

  /** Before a reset. Throws when an earlier reset failed. */
  checkRecoverable(): void {
    if (this.#unrecoverable !== undefined) throw new DeviceLostError(this.#unrecoverable);
  }

  /** The addon reset the context: a new generation starts. */
  resetDone(): void {
    this.#endings.set(this.#generation, this.#lost ?? 'a reset');
    this.#generation++;
    this.#lost = undefined;
    this.noteWaitDone();
  }

  /** The reset itself failed (a driver without cuDevicePrimaryCtxReset, or one that cannot recover). */
  resetFailed(error: Error): DeviceLostError {
    this.#unrecoverable =
      `${this.device} is lost (${this.#lost ?? 'a failure'}) and could not be reset: ${error.message}. Arrays on other ` +
      `devices (the CPU) still work; save what you need from them and restart the process to use ${this.device} again.`;
    return new DeviceLostError(this.#unrecoverable, { cause: error });
  }
}
