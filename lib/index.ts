// jaxon: JAX for Node.js. `import * as jax from 'jaxon'` gives the top level
// (jit, grad, devices, tree, ...); `numpy`, `lax`, `nn`, `random` are
// namespaces, as in JAX.
// The runtime first: it installs the eager interpreter and the devices into
// core (which imports nothing above it), the bottom of every computation.
import './runtime/eager.js';
import { disposeIntermediates } from './core/memory.js';
import * as laxModule from './lax/index.js';
import * as numpyModule from './numpy/index.js';

/** jax.numpy; each function disposes its own intermediates. */
export const numpy = disposeIntermediates(numpyModule, 'jnp.');
/** jax.lax */
export const lax = disposeIntermediates(laxModule, 'lax.');
export * as tree from './tree.js';
/** jax.tree_util: JAX's tree_* names, key types, registration of classes as pytree nodes. */
export * as treeUtil from './core/tree-util.js';
export { Array } from './core/array.js';
export type { ArrayLike } from './core/array.js';
export type { DType } from './core/dtype.js';
export { promoteTypes, resultType } from './core/dtype.js';
/** jax.config: `jax.config.update('jaxEnableX64', true)` (or JAX's 'jax_enable_x64'), `jax.config.jaxEnableX64`. */
export { config } from './core/config.js';
export { ValueError, ResourceExhaustedError, DeviceLostError, ConcretizationTypeError, TracerBoolConversionError, IndexError, UnexpectedTracerError } from './core/errors.js';
export { tidy, keep, liveArrayCount } from './core/memory.js';
export { Device, devices, defaultBackend, environmentInfo } from './runtime/device.js';
export { makeJaxpr } from './trace/jaxpr-trace.js';
export { jit } from './transforms/jit.js';
export { ClosedJaxpr, Jaxpr } from './trace/jaxpr.js';
export { vmap } from './transforms/vmap.js';
export { jvp } from './transforms/jvp.js';
export { grad, linearize, valueAndGrad, vjp, vjpWithAux } from './transforms/vjp.js';
export { hessian, jacfwd, jacobian, jacrev } from './transforms/jacobian.js';
export { AttributeError, CustomJVPException, CustomVJPException, customJvp, customVjp } from './transforms/custom-derivatives.js';
export type { CustomJvp, CustomJvpOptions, CustomVjp, CustomVjpOptions } from './transforms/custom-derivatives.js';
export { blockUntilReady, deviceGet, makeMesh } from './transforms/host.js';
export { NotImplementedError, RuntimeError, pureCallback } from './transforms/callbacks.js';
export type { DebugCallbackOptions, DebugPrintOptions, PrintSink, PureCallbackOptions } from './transforms/callbacks.js';
export { KeyError } from './core/python-format.js';
/** jax.debug: print and callback (work under jit, vmap, grad and in loops); setPrintSink redirects print's lines. */
export * as debug from './transforms/debug.js';
export { adCheckpoint, checkpoint, checkpointName, checkpointPolicies, remat } from './transforms/remat.js';
export type { CheckpointOptions, CheckpointPolicy, MemoryKind, PolicyDecision } from './transforms/remat.js';
export * as random from './random/index.js';
export * as nn from './nn/index.js';
/** jax.sharding: Mesh, PartitionSpec / P, NamedSharding, SingleDeviceSharding (memory kinds 'device' and 'pinned_host'). */
export * as sharding from './sharding/index.js';
export { devicePut, memory } from './transforms/device-put.js';
export type { DevicePutOptions, Placement } from './transforms/device-put.js';
export { ShapeDtypeStruct } from './sharding/shape-dtype-struct.js';
export { evalShape } from './transforms/eval-shape.js';
export { Memory } from './runtime/device.js';
export type { MemoryStats } from './runtime/device.js';
/** Compiled.memoryPlan(): the buffer assignment over the schedule, and its SVG. */
export type { BufferRole, MemoryPlan, MemoryPlanBuffer, MemoryPlanStep, MemoryPlanTransfer } from './compiler/memory-plan.js';
export type { SvgOptions } from './compiler/memory-plan-svg.js';
export * as profiler from './profiler.js';
