// Which device a computation runs on, and moving arrays between devices, as
// in JAX: an array placed on a device explicitly (jax.devicePut to a device
// or sharding) is committed, and a computation runs on its committed
// operands' device (they must agree); otherwise it runs on the default
// device, and uncommitted operands elsewhere are copied there.
import { Array } from '../core/array.js';
import { ValueError } from '../core/errors.js';
import { Storage } from '../core/memory.js';
import { type Device, defaultDevice } from './device.js';

/** The device `fn` runs on for these operands (tracers count as uncommitted). */
export function computationDevice(fn: string, arrays: readonly Array[]): Device {
  let committed: Device | undefined;
  for (const x of arrays) {
    if (!x.committed) continue;
    const device = x.device;
    if (committed && device !== committed) {
      throw new ValueError(`${fn}: received arrays committed to different devices (${committed} and ${device}); move them to one device with jax.devicePut`);
    }
    committed = device;
  }
  return committed ?? defaultDevice();
}

/** A copy of x's elements on `device` (same shape, dtype, weak type and memory kind); the caller owns it. */
export function copyToDevice(x: Array, device: Device, committed = false): Array {
  const source = x.storage('jax.devicePut');
  const bytes = source.backend.toHostSync(source.buffer);
  const buffer = device.backend.fromHost(bytes, x.memorySpace);
  return new Array(new Storage(device.backend, buffer), x.shape, x.dtype, x.weakType, x.memorySpace, committed);
}

/** x itself when it is on `device`, else a copy there (`moved` says which: the caller disposes copies). */
export function onDevice(x: Array, device: Device): { array: Array; moved: boolean } {
  if (x.isTracer || x.device === device) return { array: x, moved: false };
  return { array: copyToDevice(x, device), moved: true };
}
