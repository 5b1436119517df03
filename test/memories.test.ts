// Memory kinds, shardings and devicePut: ports of the single-device cases of
// JAX's tests/memories_test.py (ShardingMemoriesTest, DevicePutTest, the
// memory-kind parts of ComputeOffload, ActivationOffloadingTest). JAX runs
// most of them on GPU/TPU only; jaxon's CPU device has the kinds 'device'
// and 'pinned_host' (both host memory), so they all run here. Expected
// messages and behaviours were checked against JAX 0.10.2 on its CPU
// device (which also has memory kinds); where jaxon deliberately differs,
// the test says so. jaxon's arrays report a SingleDeviceSharding (device +
// memory kind); on one device it is equivalent (isEquivalentTo) to any
// NamedSharding over a mesh of size-1 axes, which is how the ports compare
// to JAX's NamedSharding results.
import test, { type ExecutionContext } from 'ava';
import type { Array } from '../lib/core/array.js';
import type { DType } from '../lib/core/dtype.js';
import * as jax from '../lib/index.js';
import { UndefinedPrimal, backwardPass } from '../lib/transforms/transpose.js';
import { linearizeFlat } from '../lib/transforms/vjp.js';
import { type ClosedJaxpr, type Jaxpr } from '../lib/trace/jaxpr.js';
import { traceToJaxpr } from '../lib/trace/jaxpr-trace.js';
import { assertArray, assertThrowsMentioning } from './helpers/oracle.js';

const { numpy: jnp, lax, sharding } = jax;
const { Mesh, NamedSharding, SingleDeviceSharding, P } = sharding;
type Fn = (...args: never[]) => unknown;
type Sharding = jax.sharding.Sharding;

const dev = jax.devices()[0]!;
/** Bytes an allocation of n takes: exact on the CPU; a GPU's caching allocator rounds to its 512-byte granule. */
const allocated = (n: number) => (dev.platform === 'cuda' ? Math.ceil(n / 512) * 512 : n);
const sDev = new SingleDeviceSharding(dev);
const sHost = new SingleDeviceSharding(dev, { memoryKind: 'pinned_host' });
const mesh1 = new Mesh([dev], ['x']);
const mesh2 = new Mesh([[dev]], ['x', 'y']);

/** np.arange(n).reshape(shape) as int32 (JAX's x64-off default), or float32. */
const arange = (shape: number[], dtype: DType = 'int32'): Array => jnp.arange(0, shape.reduce((a, b) => a * b, 1), 1, { dtype }).reshape(shape);

/** JAX's _check_device_put_addressable_shards: values, placement and memory kind. */
function checkPlaced(t: ExecutionContext, out: unknown, expected: Array | { shape: number[]; dtype: DType; values: number[] }, s: Sharding, kind: jax.MemoryKind): void {
  assertArray(t, out, expected);
  const x = out as Array;
  t.is(x.memorySpace, kind, 'memory space');
  t.is(x.sharding.memoryKind, kind, 'sharding.memoryKind');
  t.true(x.sharding.isEquivalentTo(s, x.ndim), `${x.sharding} is equivalent to ${s}`);
}

// ---- ShardingMemoriesTest ----

test('memories_test: test_canonicalize_memory_kind (named_sharding, single_device_sharding)', (t) => {
  t.is(new NamedSharding(mesh1, P('x')).memoryKind, 'device');
  t.is(new SingleDeviceSharding(dev).memoryKind, 'device');
});

test('memories_test: test_wrong_memory_kind (named_sharding, single_device_sharding)', (t) => {
  // JAX 0.10.2: "Could not find memory addressable by device cpu. Device cpu can address the following memory kinds: device, pinned_host, unpinned_host. Got memory kind: hbm"
  assertThrowsMentioning(t, () => new NamedSharding(mesh1, P('x'), { memoryKind: 'hbm' }),
    'NamedSharding', `Could not find memory addressable by device ${dev.deviceKind}`, 'Got memory kind: hbm');
  assertThrowsMentioning(t, () => new SingleDeviceSharding(dev, { memoryKind: 'host' }),
    'SingleDeviceSharding', 'Could not find memory addressable by device', `Device ${dev.deviceKind} can address the following memory kinds: device, pinned_host`, 'Got memory kind: host');
  t.throws(() => new SingleDeviceSharding(dev, { memoryKind: 'host' }), { instanceOf: jax.ValueError });
  assertThrowsMentioning(t, () => sDev.withMemoryKind('unpinned_host'), 'the following memory kinds: device, pinned_host');
  assertThrowsMentioning(t, () => dev.memory('hbm'), `Could not find memory addressable by device ${dev.deviceKind}`, 'Got memory kind: hbm');
});

test('memories_test: test_sharding_eq (named_sharding, single_device_sharding): no memory kind equals device', (t) => {
  t.true(new NamedSharding(mesh1, P('x')).equals(new NamedSharding(mesh1, P('x'), { memoryKind: 'device' })));
  t.true(new SingleDeviceSharding(dev).equals(new SingleDeviceSharding(dev, { memoryKind: 'device' })));
  t.false(new SingleDeviceSharding(dev).equals(sHost));
  t.false(new NamedSharding(mesh1, P('x')).equals(new NamedSharding(mesh1, P('x'), { memoryKind: 'pinned_host' })));
  t.true(sHost.withMemoryKind('device').equals(sDev));
  // as in JAX: a spec's trailing null is part of it, and shardings of different classes are never equal
  t.false(new NamedSharding(mesh1, P('x')).equals(new NamedSharding(mesh1, P('x', null))));
  t.false(new NamedSharding(mesh1, P()).equals(sDev));
});

test('memories_test: test_sharding_equivalent (NamedSharding vs a single-device sharding, with and without the default kind)', (t) => {
  // JAX compares with a GSPMDSharding built from the same devices; jaxon's equivalent is SingleDeviceSharding
  t.true(new NamedSharding(mesh1, P('x')).isEquivalentTo(new SingleDeviceSharding(dev, { memoryKind: 'device' }), 2));
  t.true(new NamedSharding(mesh1, P('x'), { memoryKind: 'device' }).isEquivalentTo(sDev, 2));
  t.true(new NamedSharding(mesh1, P('x')).isEquivalentTo(new NamedSharding(mesh2, P(null, 'y')), 2));
  t.false(new NamedSharding(mesh1, P('x')).isEquivalentTo(new NamedSharding(mesh1, P('x'), { memoryKind: 'pinned_host' }), 2));
  t.true(sHost.isEquivalentTo(new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' }), 2));
});

test('memories_test: test_default_memory_kind; device.memories(), addressableMemories(), memory(kind)', (t) => {
  t.is(dev.defaultMemory().kind, 'device');
  t.deepEqual(dev.memories().map((m) => m.kind), ['device', 'pinned_host']);
  t.deepEqual(dev.addressableMemories().map((m) => m.kind), ['device', 'pinned_host']);
  t.is(dev.memory('pinned_host').kind, 'pinned_host');
  t.deepEqual(dev.memory('pinned_host').addressableByDevices(), [dev]);
  t.is(dev.defaultMemory().device, dev);
});

test('Mesh, PartitionSpec and NamedSharding: shape, accessors, printing, and JAX errors for bad specs', (t) => {
  t.deepEqual({ ...mesh2.shape }, { x: 1, y: 1 });
  t.is(mesh2.size, 1);
  t.deepEqual([...mesh2.axisNames], ['x', 'y']);
  t.deepEqual(mesh2.deviceIds, [0]);
  t.is(String(mesh2), "Mesh('x': 1, 'y': 1)");
  t.is(String(P('x', null, ['x', 'y'])), "P('x', None, ('x', 'y'))");
  t.is(String(P('x')), "P('x',)");
  const ns = new NamedSharding(mesh2, P('x'), { memoryKind: 'pinned_host' });
  t.is(String(ns), "NamedSharding(mesh=Mesh('x': 1, 'y': 1), spec=P('x',), memory_kind=pinned_host)");
  t.is(String(sHost), `SingleDeviceSharding(device=${dev}, memory_kind=pinned_host)`);
  t.deepEqual([...ns.deviceSet], [dev]);
  t.deepEqual([...sHost.addressableDevices], [dev]);
  t.is(ns.numDevices, 1);
  t.true(ns.isFullyReplicated);
  t.true(ns.isFullyAddressable);
  t.deepEqual(ns.shardShape([4, 2]), [4, 2]);
  t.deepEqual([...ns.devicesIndicesMap([4, 2]).entries()], [[dev, [[0, 4], [0, 2]]]]);
  // JAX 0.10.2's messages
  assertThrowsMentioning(t, () => new NamedSharding(mesh1, P('z')), "Resource axis: z of P('z',) is not found in mesh: ('x',).");
  assertThrowsMentioning(t, () => new NamedSharding(mesh2, P('x', 'x')),
    "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, but P('x', 'x') has duplicate entries for `x`");
  assertThrowsMentioning(t, () => jax.devicePut(jnp.ones([3]), new NamedSharding(mesh2, P('x', 'y'))),
    'jax.devicePut', 'is only valid for values of rank at least 2, but was applied to a value of rank 1');
  // one CPU device: a mesh can hold it once, and the grid's rank must match the axis names
  assertThrowsMentioning(t, () => new Mesh([dev, dev], ['x']), 'Mesh', 'appears more than once');
  assertThrowsMentioning(t, () => new Mesh([[dev]], ['x']), 'Mesh', 'number of dimensions of devices (2', 'number of axis names (1');
  assertThrowsMentioning(t, () => new NamedSharding(mesh1, ['x'] as never), 'NamedSharding: spec must be a PartitionSpec');
  assertThrowsMentioning(t, () => new SingleDeviceSharding(dev, { kind: 'device' } as never), "unknown option 'kind'");
});

// ---- DevicePutTest ----

test('memories_test: test_device_put_host_to_hbm (pinned_host)', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('y'), { memoryKind: 'pinned_host' });
  const np = arange([8, 2]);
  const outOnHost = jax.devicePut(np, sHostNamed);
  t.is(outOnHost.sharding.memoryKind, 'pinned_host');
  const sHbm = sHostNamed.withMemoryKind('device');
  const outOnHbm = jax.devicePut(outOnHost, sHbm);
  checkPlaced(t, outOnHbm, np, sHbm, 'device');
});

test('memories_test: test_device_put_hbm_to_host (pinned_host)', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('y'), { memoryKind: 'pinned_host' });
  const inp = arange([8, 2]);
  checkPlaced(t, jax.devicePut(inp, sHostNamed), inp, sHostNamed, 'pinned_host');
  const shardedInp = jax.devicePut(inp, sHostNamed.withMemoryKind('device'));
  checkPlaced(t, jax.devicePut(shardedInp, sHostNamed), shardedInp, sHostNamed, 'pinned_host');
});

test('memories_test: test_device_put_numpy_array (TypedArrays into each kind)', (t) => {
  const np = new Int32Array(16).map((_, i) => i);
  const sHbm = new NamedSharding(mesh2, P(['x', 'y']), { memoryKind: 'device' });
  const sHostNamed = sHbm.withMemoryKind('pinned_host');
  const expected = { shape: [16], dtype: 'int32' as DType, values: [...np] };
  checkPlaced(t, jax.devicePut(np, sHbm), expected, sHbm, 'device');
  checkPlaced(t, jax.devicePut(np, sHostNamed), expected, sHostNamed, 'pinned_host');
  checkPlaced(t, jax.devicePut(new Float32Array([1.5, 2.5]), 'pinned_host'), { shape: [2], dtype: 'float32', values: [1.5, 2.5] }, sHost, 'pinned_host');
});

test('memories_test: test_device_put_numpy_scalar (a strongly typed scalar)', (t) => {
  const scalar = jnp.array(8, { dtype: 'float32' });
  checkPlaced(t, jax.devicePut(scalar, sDev), scalar, sDev, 'device');
  const host = jax.devicePut(scalar, sHost);
  checkPlaced(t, host, scalar, sHost, 'pinned_host');
  t.false(host.weakType);
});

test('memories_test: test_device_put_python_scalar and test_device_put_python_int (JS numbers, weakly typed as in JAX)', (t) => {
  for (const [value, dtype] of [[8.5, 'float32'], [8, 'int32']] as const) {
    const onDevice = jax.devicePut(value, sDev);
    checkPlaced(t, onDevice, { shape: [], dtype, values: [value] }, sDev, 'device');
    const onHost = jax.devicePut(value, sHost);
    checkPlaced(t, onHost, { shape: [], dtype, values: [value] }, sHost, 'pinned_host');
    // JAX 0.10.2: device_put(8, s_host) is int32 with weak_type=True
    t.true(onHost.weakType);
  }
  t.is(jax.devicePut(true, 'pinned_host').dtype, 'bool');
});

test('memories_test: test_device_put_inside_jit (a pytree of host arrays to the device)', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' });
  const np = arange([8, 2]);
  const inpHost = jax.devicePut(np, sHostNamed);
  const sDevNamed = sHostNamed.withMemoryKind('device');
  const f = jax.jit((a: Array, b: Array) => {
    const [x, y] = jax.devicePut([a, b], sDevNamed);
    return jnp.multiply(x, y);
  });
  checkPlaced(t, f(inpHost, inpHost), jnp.multiply(np, np), sDevNamed, 'device');
  t.is(count(f.trace(inpHost, inpHost), 'device_put[src_kind=pinned_host dst_kind=device]'), 2);
});

test('memories_test: test_parameter_streaming (a host parameter streamed in, outputs offloaded by outShardings)', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' });
  const sDevNamed = sHostNamed.withMemoryKind('device');
  const np = arange([8, 2]);
  const inpHost = jax.devicePut(np, sHostNamed);
  const inpDev = jax.devicePut(np, sDevNamed);
  const f = jax.jit((a: Array, b: Array) => {
    const x = jnp.multiply(b, 2);
    const y = jax.devicePut(a, sDevNamed);
    const z = jnp.multiply(x, y);
    return [jnp.multiply(z, 4), z];
  }, { outShardings: sHostNamed });
  const [out1, out2] = f(inpHost, inpDev) as Array[];
  checkPlaced(t, out1, jnp.multiply(jnp.multiply(np, np), 8), sHostNamed, 'pinned_host');
  checkPlaced(t, out2, jnp.multiply(jnp.multiply(np, np), 2), sHostNamed, 'pinned_host');
});

test('memories_test: test_zero_size_parameter', (t) => {
  const sHostNamed = new NamedSharding(mesh1, P(), { memoryKind: 'pinned_host' });
  const inpHost = jax.devicePut(jnp.zeros([0], { dtype: 'int32' }), sHostNamed);
  const f = jax.jit((a: Array) => jax.devicePut(a, sHostNamed.withMemoryKind('device')), { outShardings: sHostNamed });
  checkPlaced(t, f(inpHost), { shape: [0], dtype: 'int32', values: [] }, sHostNamed, 'pinned_host');
});

test('memories_test: test_parameter_streaming_with_scalar_and_constant', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P(), { memoryKind: 'pinned_host' });
  const f = jax.jit((scalarInput: Array) => [jax.devicePut(scalarInput, sHostNamed), jax.devicePut(2, sHostNamed)], { outShardings: sHostNamed });
  const [out1, out2] = f(1 as never) as Array[];
  // JAX's argument 1 is an int; a bare JS number argument is a weak float in jaxon (API.md, "JS numbers")
  checkPlaced(t, out1, { shape: [], dtype: 'float32', values: [1] }, sHostNamed, 'pinned_host');
  checkPlaced(t, out2, { shape: [], dtype: 'int32', values: [2] }, sHostNamed, 'pinned_host');
  // the constant is a literal transferred inside the program, as in JAX's jaxpr
  t.true(f.trace(1 as never).toString().includes('device_put[src_kind=device dst_kind=pinned_host] 2:i32[]'));
});

test('memories_test: test_parameter_and_output_streaming_with_array and _with_scalar', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' });
  const np = arange([8, 2]);
  const inpHost = jax.devicePut(np, sHostNamed);
  const f = jax.jit((x: Array) => [x, x], { outShardings: [sHostNamed, sHostNamed] });
  for (const out of f(inpHost) as Array[]) checkPlaced(t, out, np, sHostNamed, 'pinned_host');
  // nothing to move: the program has no transfer
  t.is(count(f.trace(inpHost), 'device_put'), 0);
  const sHostScalar = new NamedSharding(new Mesh([dev], 'axis'), P(), { memoryKind: 'pinned_host' });
  const g = jax.jit((x: Array) => [x, x], { outShardings: [sHostScalar, sHostScalar] });
  for (const out of g(1 as never) as Array[]) checkPlaced(t, out, { shape: [], dtype: 'float32', values: [1] }, sHostScalar, 'pinned_host');
});

test('memories_test: test_identity_jit_host_to_device_and_vice_versa', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' });
  const sDevNamed = sHostNamed.withMemoryKind('device');
  const np = arange([8, 2]);
  const arrHost = jax.devicePut(np, sHostNamed);
  const arrDev = jax.devicePut(np, sDevNamed);
  checkPlaced(t, jax.jit((x: Array) => x, { outShardings: sDevNamed })(arrHost), np, sDevNamed, 'device');
  checkPlaced(t, jax.jit((x: Array) => x, { outShardings: sHostNamed })(arrDev), np, sHostNamed, 'pinned_host');
});

test('memories_test: test_parameter_streaming_inside_scan (host xs, each slice streamed to the device in the body)', (t) => {
  const sHostNamed = new NamedSharding(new Mesh([[[dev]]], ['x', 'y', 'z']), P('x', 'y', 'z'), { memoryKind: 'pinned_host' });
  const np = arange([4, 4, 4], 'float32');
  const arrHost = jax.devicePut(np, sHostNamed);
  const f = jax.jit((xs: Array) => lax.scan((carry: Array, x: Array) => [carry, jnp.add(jax.devicePut(x, jax.memory.Space.Device), carry)], jnp.array(1, { dtype: 'float32' }), xs));
  const [, outHbm] = f(arrHost) as Array[];
  checkPlaced(t, outHbm, jnp.add(np, 1), new NamedSharding(sHostNamed.mesh, P(null, null, 'z')), 'device');
  // JAX's jaxpr: the body reads a host slice (f32<host>[4,4]) and moves it to the device
  const text = f.trace(arrHost).toString();
  t.true(text.includes('f32<host>[4,4]. let'), text);
  t.is(count(f.trace(arrHost), 'device_put[src_kind=pinned_host dst_kind=device]'), 1);
});

test('memories_test: test_diff_mem_space_error (JAX: "memory_space of all inputs ... must be the same")', (t) => {
  const np = arange([8, 2], 'float32');
  const arrHbm = jax.devicePut(np, new NamedSharding(mesh1, P('x'), { memoryKind: 'device' }));
  const arrHost = jax.devicePut(np, new NamedSharding(mesh1, P('x'), { memoryKind: 'pinned_host' }));
  const f = jax.jit((x: Array, y: Array) => jnp.add(x, y));
  // JAX 0.10.2: memory_space of all inputs passed to `add` must be the same. Got one operand with type: float32[8,2] and another operand with type: float32<host>[8,2]
  assertThrowsMentioning(t, () => f(arrHbm, arrHost),
    'memory_space of all inputs passed to `add` must be the same. Got one operand with type: float32[8,2] and another operand with type: float32<host>[8,2]');
  t.throws(() => f(arrHbm, arrHost), { instanceOf: jax.ValueError });
  // eagerly too, and for every primitive (dot_general, select_n, concatenate as JAX 0.10.2 reports them)
  assertThrowsMentioning(t, () => jnp.add(arrHbm, arrHost), 'memory_space of all inputs passed to `add` must be the same');
  assertThrowsMentioning(t, () => jnp.matmul(arrHost, arrHbm.T), 'memory_space of all inputs passed to `dot_general` must be the same');
  assertThrowsMentioning(t, () => lax.select(jnp.greater(arrHbm, 1), arrHbm, arrHost), 'passed to `select_n` must be the same');
  assertThrowsMentioning(t, () => jnp.concatenate([arrHost, arrHbm]), 'passed to `concatenate` must be the same');
});

test('mixed memory spaces: scalars are exempt, the result lives where the non-scalar operands do (JAX\'s default memory-space rule)', (t) => {
  const host = jax.devicePut(arange([4, 2], 'float32'), 'pinned_host');
  const hostScalar = jax.devicePut(jnp.array(2, { dtype: 'float32' }), 'pinned_host');
  const devScalar = jnp.array(3, { dtype: 'float32' });
  // JAX 0.10.2: host + device scalar -> host; host scalar + device array -> device; sum of host -> host scalar
  t.is(jnp.add(host, devScalar).memorySpace, 'pinned_host');
  t.is(jnp.add(host, 1).memorySpace, 'pinned_host');
  t.is(jnp.add(hostScalar, arange([4, 2], 'float32')).memorySpace, 'device');
  t.is(jnp.sum(host).memorySpace, 'pinned_host');
  // only scalars: the device computes (JAX: neg of a host scalar is on the device), but broadcast_in_dim keeps its operand's space
  t.is(jnp.negative(hostScalar).memorySpace, 'device');
  t.is(jnp.broadcastTo(hostScalar, [3]).memorySpace, 'pinned_host');
  assertArray(t, jnp.add(host, devScalar), jnp.add(arange([4, 2], 'float32'), 3));
  // the jaxpr shows the spaces as JAX prints them
  const text = jax.makeJaxpr((x: Array) => jnp.sum(x))(host).toString();
  t.true(text.includes('a:f32<host>[4,2]') && text.includes('b:f32<host>[] = reduce_sum'), text);
});

test('memories_test: test_output_streaming (outShardings offloads a computed output)', (t) => {
  const sHbm = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'device' });
  const sHostNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' });
  const np = arange([8, 2], 'float32');
  const arrHbm = jax.devicePut(np, sHbm);
  const f = jax.jit((xs: Array) => jnp.add(xs, 1), { outShardings: sHostNamed });
  checkPlaced(t, f(arrHbm), jnp.add(np, 1), sHostNamed, 'pinned_host');
});

test('memories_test: test_weight_offload_with_dp_on_output (avals inside jit carry the memory space)', (t) => {
  const sDevNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'device' });
  const sHostNamed = sDevNamed.withMemoryKind('pinned_host');
  const np = arange([8, 2]);
  const seen: string[] = [];
  const f = jax.jit((x: Array) => {
    const y = jnp.multiply(x, 2);
    seen.push(y.memorySpace);
    const z = jax.devicePut(y, sHostNamed);
    seen.push(z.memorySpace, z.aval.memorySpace ?? 'device');
    return z;
  });
  checkPlaced(t, f(jax.devicePut(np, sDevNamed)), jnp.multiply(np, 2), sHostNamed, 'pinned_host');
  t.deepEqual(seen, ['device', 'pinned_host', 'pinned_host']);
});

test('memories_test: test_output_streaming_inside_scan (each y moved to the host in the body; the stacked ys are host arrays)', (t) => {
  const np = arange([4, 4, 4]);
  const arrHbm = jax.devicePut(np, new NamedSharding(new Mesh([[[dev]]], ['x', 'y', 'z']), P(null, 'y', 'z'), { memoryKind: 'device' }));
  const ysSpace: string[] = [];
  const f = jax.jit((xs: Array) => {
    const [, res] = lax.scan((carry: Array, x: Array) => [carry, jax.devicePut(jnp.add(x, carry), new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' }))], 1, xs);
    ysSpace.push((res as Array).memorySpace);
    return res;
  });
  const out = f(arrHbm) as Array;
  assertArray(t, out, jnp.add(np, 1));
  t.is(out.sharding.memoryKind, 'pinned_host');
  t.deepEqual(ysSpace, ['pinned_host']);
});

test('memories_test: test_deepcopy and test_disallow_alias_copies_arrays (mayAlias: false copies; the copy outlives the original)', (t) => {
  const s = new NamedSharding(mesh1, P('x'), { memoryKind: 'pinned_host' });
  const np = arange([8, 2]);
  const inpHost = jax.devicePut(np, s);
  const copy = jax.devicePut(inpHost, null, { mayAlias: false });
  t.is(copy.memorySpace, 'pinned_host');
  inpHost.dispose();
  assertArray(t, copy.blockUntilReady(), np);
  const zeros = jax.devicePut(jnp.zeros([8, 2]), new NamedSharding(mesh1, P(), { memoryKind: 'pinned_host' }));
  const zerosCopy = jax.devicePut(zeros, undefined, { mayAlias: false });
  assertArray(t, zerosCopy, zeros);
  t.deepEqual([...zerosCopy.shape], [8, 2]);
});

test('devicePut copy semantics: the same kind reuses the buffer (JAX\'s REUSE_INPUT), donate gives it up, donate with mayAlias is an error', (t) => {
  const live = jax.liveArrayCount();
  const a = arange([6], 'float32');
  const before = dev.memoryStats().bytesInUse;
  const same = jax.devicePut(a, sDev);
  t.not(same, a, 'a new Array object');
  t.is(dev.memoryStats().bytesInUse, before, 'REUSE_INPUT: no new buffer (JAX 0.10.2: same unsafe_buffer_pointer)');
  const copied = jax.devicePut(a, sDev, { mayAlias: false });
  t.is(dev.memoryStats().bytesInUse, before + allocated(24), 'mayAlias: false allocates a copy');
  const moved = jax.devicePut(a, sDev, { donate: true });
  t.true(a.isDisposed, 'the donated input cannot be used');
  assertThrowsMentioning(t, () => a.dataSync(), 'was donated');
  assertArray(t, moved, { shape: [6], dtype: 'float32', values: [0, 1, 2, 3, 4, 5] });
  // JAX 0.10.2: "may_alias and donate cannot be True at the same time."
  assertThrowsMentioning(t, () => jax.devicePut(copied, sDev, { donate: true, mayAlias: true }), 'jax.devicePut', 'mayAlias and donate cannot be true at the same time');
  // across kinds a donated input is copied and then released
  const b = arange([3], 'float32');
  const offloaded = jax.devicePut(b, 'pinned_host', { donate: true });
  t.true(b.isDisposed);
  assertArray(t, offloaded, { shape: [3], dtype: 'float32', values: [0, 1, 2] });
  for (const x of [same, copied, moved, offloaded]) x.dispose();
  t.is(jax.liveArrayCount(), live);
});

test('memories_test: test_close_over_host_constant_and_stream', (t) => {
  const sHostNamed = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'pinned_host' });
  const sDevNamed = sHostNamed.withMemoryKind('device');
  const np = arange([8, 2]);
  const inpHost = jax.devicePut(np, sHostNamed);
  const f = jax.jit(() => jnp.multiply(jax.devicePut(inpHost, sDevNamed), 2), { outShardings: sDevNamed });
  checkPlaced(t, f(), jnp.multiply(np, 2), sDevNamed, 'device');
  // JAX's jaxpr: `{ lambda b:f32<host>[4]; . let c = device_put[...] b ...`: the closed-over host array is a host constvar
  const text = f.trace().toString();
  t.true(text.startsWith('{ lambda a:i32<host>[8,2]; . let'), text);
  // a closed-over host scalar stays a host constant too (a literal would be on the device)
  const hostScalar = jax.devicePut(jnp.array(5, { dtype: 'float32' }), 'pinned_host');
  const g = jax.jit(() => jax.devicePut(hostScalar, 'device'));
  t.true(g.trace().toString().startsWith('{ lambda a:f32<host>[]; . let'), g.trace().toString());
  assertArray(t, g(), { shape: [], dtype: 'float32', values: [5] });
});

test('memories_test: test_device_put_memory_space (jax.memory.Space.Host / Device)', (t) => {
  const arr = jax.devicePut(arange([8, 2]), new NamedSharding(mesh1, P('x')));
  const out = jax.devicePut(arr, jax.memory.Space.Host);
  t.true(out.sharding.isEquivalentTo(new NamedSharding(mesh1, P('x'), { memoryKind: 'pinned_host' }), 2));
  t.is(out.sharding.memoryKind, 'pinned_host');
  const back = jax.devicePut(out, jax.memory.Space.Device);
  t.true(back.sharding.equals(new SingleDeviceSharding(dev, { memoryKind: 'device' })));
  // a Device is its default memory; an unknown kind names the kinds the device has
  t.is(jax.devicePut(out, dev).memorySpace, 'device');
  assertThrowsMentioning(t, () => jax.devicePut(arr, 'unpinned_host' as never), 'jax.devicePut', 'can address the following memory kinds: device, pinned_host', 'Got memory kind: unpinned_host');
  assertThrowsMentioning(t, () => jax.devicePut(arr, 3 as never), 'jax.devicePut: the destination must be null, a Device, a Sharding, a memory kind');
});

test('memories_test: test_disallow_alias_copies_arrays_with_donated_input', (t) => {
  const s = new NamedSharding(mesh1, P('x'), { memoryKind: 'pinned_host' });
  const np = arange([8, 2]);
  const inpHost = jax.devicePut(np, s);
  const inpHostDonate = jax.jit((x: Array) => x, { donateArgnums: 0 })(inpHost) as Array;
  t.is(inpHostDonate.memorySpace, 'pinned_host');
  const copy = jax.devicePut(inpHostDonate, null, { mayAlias: false });
  inpHostDonate.dispose();
  assertArray(t, copy.blockUntilReady(), np);
  t.is(copy.memorySpace, 'pinned_host');
});

test('memories_test: test_host_to_device_transfer (round trips keep values and kinds)', (t) => {
  const orig = new Int32Array(8).map((_, i) => i);
  let d = jax.devicePut(orig, jax.memory.Space.Device);
  for (let i = 0; i < 2; i++) {
    const h = jax.devicePut(d, jax.memory.Space.Host);
    t.is(h.sharding.memoryKind, 'pinned_host');
    assertArray(t, h, { shape: [8], dtype: 'int32', values: [...orig] });
    d = jax.devicePut(h, jax.memory.Space.Device);
    t.is(d.sharding.memoryKind, 'device');
    assertArray(t, d, { shape: [8], dtype: 'int32', values: [...orig] });
  }
});

test('devicePut over pytrees: one destination for all leaves, or a prefix of destinations; structure errors', (t) => {
  const x = arange([2, 2], 'float32');
  const placed = jax.devicePut({ a: x, b: [1.5, x] }, 'pinned_host');
  t.deepEqual([placed.a.memorySpace, placed.b[0].memorySpace, placed.b[1].memorySpace], ['pinned_host', 'pinned_host', 'pinned_host']);
  const mixed = jax.devicePut([x, x], [sHost, sDev]);
  t.deepEqual(mixed.map((m) => m.memorySpace), ['pinned_host', 'device']);
  const prefix = jax.devicePut({ a: x, b: [x, x] }, { a: null, b: 'pinned_host' });
  t.deepEqual([prefix.a.memorySpace, prefix.b[0].memorySpace], ['device', 'pinned_host']);
  assertThrowsMentioning(t, () => jax.devicePut([x, x], [sHost, sDev, sDev]), 'jax.devicePut', 'pytree prefix of x', 'an array of length 3', 'an array of length 2');
  assertThrowsMentioning(t, () => jax.devicePut(['a'] as never, sHost), 'jax.devicePut: leaf 0 of x must be an Array');
  assertThrowsMentioning(t, () => jax.devicePut(x, sHost, { alias: true } as never), "jax.devicePut: unknown option 'alias'");
});

// ---- device_put under transformations ----

test('memories_test: transpose of device_put sends the cotangent back to the source kind (grad, vjp, jit of grad)', (t) => {
  const x = arange([4], 'float32');
  const xHost = jax.devicePut(x, 'pinned_host');
  // JAX 0.10.2: grad(lambda a: sum(device_put(a, device)))(host) is a host array; its jaxpr ends in device_put to the host
  const g = jax.grad((a: Array) => jnp.sum(jax.devicePut(a, 'device')))(xHost) as Array;
  t.is(g.memorySpace, 'pinned_host');
  assertArray(t, g, { shape: [4], dtype: 'float32', values: [1, 1, 1, 1] });
  const jaxpr = jax.makeJaxpr(jax.grad((a: Array) => jnp.sum(jax.devicePut(a, 'device'))) as Fn)(xHost);
  t.true(jaxpr.toString().includes('f32<host>[4] = device_put[src_kind=device dst_kind=pinned_host]'), jaxpr.toString());
  // device -> host -> device: each transfer's transpose undoes it (JAX 0.10.2 instead rejects this cotangent type)
  const roundTrip = (a: Array) => jnp.sum(jax.devicePut(jnp.multiply(jax.devicePut(a, 'pinned_host'), 2), 'device'));
  const gr = jax.grad(roundTrip)(x) as Array;
  t.is(gr.memorySpace, 'device');
  assertArray(t, gr, { shape: [4], dtype: 'float32', values: [2, 2, 2, 2] });
  const text = jax.makeJaxpr(jax.grad(roundTrip) as Fn)(x).toString();
  t.is(count(text, 'device_put[src_kind=device dst_kind=pinned_host]'), 2, text);
  t.is(count(text, 'device_put[src_kind=pinned_host dst_kind=device]'), 2, text);
  // vjp with a host cotangent for a host output gives a device cotangent for the device input (JAX: vjp dp -> device)
  const [y, pullback] = jax.vjp((a: Array) => jax.devicePut(a, 'pinned_host'), x);
  t.is((y as Array).memorySpace, 'pinned_host');
  const [ct] = pullback(jax.devicePut(jnp.ones([4]), 'pinned_host')) as Array[];
  t.is(ct!.memorySpace, 'device');
  // and the same under jit
  const jg = jax.jit(jax.grad((a: Array) => jnp.sum(jax.devicePut(a, 'device'))));
  t.is((jg(xHost) as Array).memorySpace, 'pinned_host');
  // jvp: the tangent follows the primal into the new kind
  const [, tangentOut] = jax.jvp((a: Array) => jax.devicePut(a, 'pinned_host'), [x], [jnp.ones([4])]);
  t.is((tangentOut as Array).memorySpace, 'pinned_host');
});

test('devicePut under vmap and inside scan bodies keeps memory spaces per example', (t) => {
  const xs = arange([3, 2], 'float32');
  const out = jax.vmap((x: Array) => jnp.multiply(jax.devicePut(x, 'pinned_host'), 2))(xs) as Array;
  t.is(out.memorySpace, 'pinned_host');
  assertArray(t, out, jnp.multiply(xs, 2));
  // a loop carry must stay in its space (JAX: "carry input and carry output must have equal types")
  assertThrowsMentioning(t, () => lax.scan((c: Array, x: Array) => [jax.devicePut(c, 'pinned_host'), x], jnp.ones([2]), xs),
    'lax.scan', 'carry input and carry output must have equal types', 'float32[2]', 'float32<host>[2]');
  // cond: the branches agree on their outputs' spaces, which the result takes
  const x = arange([2], 'float32');
  const hostBoth = lax.cond(true, (v: Array) => jax.devicePut(jnp.sin(v), 'pinned_host'), (v: Array) => jax.devicePut(jnp.cos(v), 'pinned_host'), x) as Array;
  t.is(hostBoth.memorySpace, 'pinned_host');
  assertArray(t, hostBoth, jnp.sin(x));
  assertThrowsMentioning(t, () => lax.cond(true, (v: Array) => jax.devicePut(v, 'pinned_host'), (v: Array) => v, x),
    'lax.cond', 'outputs must have the same types', 'float32<host>[2]', 'float32[2]');
});

// ---- jit: inShardings / outShardings (ComputeOffload's memory-kind cases) ----

test('memories_test: test_jit_host_multi_outputs (device_put per output inside jit)', (t) => {
  const s = new NamedSharding(mesh2, P('x'));
  const np = arange([8, 2], 'float32');
  const inp = jax.devicePut(np, s);
  const f = jax.jit((x: Array, y: Array) => [jax.devicePut(jnp.sin(x), s.withMemoryKind('pinned_host')), jax.devicePut(jnp.cos(y), s.withMemoryKind('device'))]);
  const [out1, out2] = f(inp, inp) as Array[];
  checkPlaced(t, out1, jnp.sin(np), s.withMemoryKind('pinned_host'), 'pinned_host');
  checkPlaced(t, out2, jnp.cos(np), s.withMemoryKind('device'), 'device');
});

test('memories_test: test_jit_out_shardings_single_output (outShardings, or device_put on the result)', (t) => {
  const inp = jax.devicePut(arange([8, 2]), new NamedSharding(mesh2, P('x', 'y')));
  const outS = new NamedSharding(mesh2, P(), { memoryKind: 'pinned_host' });
  const g = jax.jit((x: Array) => jnp.sum(jnp.multiply(x, 2)), { outShardings: outS });
  checkPlaced(t, g(inp), { shape: [], dtype: 'int32', values: [240] }, outS, 'pinned_host');
  const h = jax.jit((x: Array) => jax.devicePut(jnp.sum(jnp.multiply(x, 2)), outS));
  checkPlaced(t, h(inp), { shape: [], dtype: 'int32', values: [240] }, outS, 'pinned_host');
  // the same program either way
  t.is(h.trace(inp).toString(), g.trace(inp).toString());
});

test('memories_test: test_jit_in_shardings (JAX\'s error for an argument in another memory kind)', (t) => {
  const s = new NamedSharding(mesh2, P('x', 'y'));
  const np = arange([8, 2]);
  const inp = jax.devicePut(np, s);
  const f = jax.jit((x: Array) => jnp.multiply(x, 2), { inShardings: s.withMemoryKind('pinned_host') });
  // JAX 0.10.2: "Memory kinds passed to jax.jit does not match memory kind on the respective arg. Got jit memory kind: pinned_host, arg memory kind: device for arg type: float32[4,2]"
  const message = 'Memory kinds passed to jax.jit does not match memory kind on the respective arg. Got jit memory kind: pinned_host, arg memory kind: device for arg type: int32[8,2]';
  assertThrowsMentioning(t, () => f(arange([8, 2])), 'jax.jit', message);
  assertThrowsMentioning(t, () => f(inp), message);
  t.throws(() => f(inp), { instanceOf: jax.ValueError });
  const g = jax.jit((x: Array) => jnp.multiply(x, 2), { inShardings: s.withMemoryKind('device') });
  checkPlaced(t, g(inp), jnp.multiply(np, 2), s, 'device');
  // the other way round, and a matching host argument
  const fromDevice = jax.jit((x: Array) => x, { inShardings: sDev });
  assertThrowsMentioning(t, () => fromDevice(jax.devicePut(np, 'pinned_host')), 'Got jit memory kind: device, arg memory kind: pinned_host for arg type: int32<host>[8,2]');
  const onHost = f(jax.devicePut(np, 'pinned_host')) as Array;
  checkPlaced(t, onHost, jnp.multiply(np, 2), sHost, 'pinned_host');
  // JS data has no placement yet: it is put where inShardings says (JAX 0.10.2 keeps numpy arguments on the device instead)
  const h = jax.jit((x: Array) => jnp.multiply(x, 2), { inShardings: sHost });
  checkPlaced(t, h(new Int32Array([1, 2, 3]) as never), { shape: [3], dtype: 'int32', values: [2, 4, 6] }, sHost, 'pinned_host');
  t.true(h.trace(new Int32Array([1, 2, 3]) as never).toString().includes('device_put[src_kind=device dst_kind=pinned_host] a'));
});

test('jit inShardings: an Array in the wrong kind is rejected on a cache hit too', (t) => {
  // the first call traces with JS data (moved to the host inside the program); a device Array has the same signature
  const f = jax.jit((x: Array) => jnp.multiply(x, 2), { inShardings: sHost });
  f(new Float32Array([1, 2]) as never);
  assertThrowsMentioning(t, () => f(jnp.array([1, 2], { dtype: 'float32' })), 'Got jit memory kind: pinned_host, arg memory kind: device for arg type: float32[2]');
});

test('jit inShardings and outShardings: pytree prefixes, static arguments, null entries, JAX-like errors', (t) => {
  const x = arange([2, 2], 'float32');
  // one entry per non-static positional argument (JAX: a tuple of length 2 for an args tuple of length 1 is an error)
  const withStatic = jax.jit((a: Array, n: number) => jnp.multiply(a, n), { staticArgnums: 1, inShardings: [sDev] });
  assertArray(t, withStatic(x, 3 as never), jnp.multiply(x, 3));
  const tooMany = jax.jit((a: Array, n: number) => jnp.multiply(a, n), { staticArgnums: 1, inShardings: [sDev, sDev] });
  assertThrowsMentioning(t, () => tooMany(x, 3 as never), 'jax.jit: inShardings must be a pytree prefix of the positional arguments', 'length 2 for 1 such arguments');
  // a prefix inside one argument's pytree
  const tree = jax.jit((p: { a: Array; b: Array }) => [p.a, p.b], { inShardings: [{ a: sHost, b: null }] });
  const [a, b] = tree({ a: jax.devicePut(x, 'pinned_host'), b: x }) as Array[];
  t.deepEqual([a!.memorySpace, b!.memorySpace], ['pinned_host', 'device']);
  // per output, null leaves an output where it is (JAX: out_shardings=(s_host, None))
  const perOutput = jax.jit((v: Array) => [jnp.multiply(v, 2), jnp.multiply(v, 3)], { outShardings: [sHost, null] });
  t.deepEqual((perOutput(x) as Array[]).map((o) => o.memorySpace), ['pinned_host', 'device']);
  const broadcast = jax.jit((v: Array) => [jnp.multiply(v, 4), v], { outShardings: sHost });
  t.deepEqual((broadcast(x) as Array[]).map((o) => o.memorySpace), ['pinned_host', 'pinned_host']);
  const wrongLength = jax.jit((v: Array) => [v, v], { outShardings: [sHost, sHost, sHost] });
  assertThrowsMentioning(t, () => wrongLength(x), 'jax.jit: outShardings must be a pytree prefix of the outputs', 'an array of length 3', 'an array of length 2');
  // JAX: "out_shardings leaf specifications are expected to be PartitionSpec instances or None, but got pinned_host"
  assertThrowsMentioning(t, () => jax.jit((v: Array) => v, { outShardings: 'pinned_host' }), 'jax.jit: outShardings must be a Sharding', "got 'pinned_host'");
  assertThrowsMentioning(t, () => jax.jit((v: Array) => v, { inShardings: [sDev, 3] }), 'jax.jit: inShardings must be a Sharding', 'at [1]');
  assertThrowsMentioning(t, () => jax.jit((v: Array) => v, { outShardings: new NamedSharding(mesh2, P('x', 'y')) })(jnp.ones([3])), 'is only valid for values of rank at least 2');
});

test('memories_test: test_jit_in_out_shardings', (t) => {
  const s = new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'device' });
  const np = arange([8, 2]);
  const inp = jax.devicePut(np, s);
  const outS = new NamedSharding(mesh2, P(), { memoryKind: 'device' });
  const f = jax.jit((x: Array) => jnp.sum(x), { inShardings: s, outShardings: outS });
  checkPlaced(t, f(inp), { shape: [], dtype: 'int32', values: [120] }, outS, 'device');
  const g = jax.jit((x: Array) => jnp.sum(x), { inShardings: s, outShardings: outS.withMemoryKind('pinned_host') });
  checkPlaced(t, g(inp), { shape: [], dtype: 'int32', values: [120] }, outS.withMemoryKind('pinned_host'), 'pinned_host');
});

test('memories_test: test_jit_cpp_cache_hit, test_jit_cache_hit_with_default_and_specified_mem_kind, test_jit_cpp_cache_output_hit', (t) => {
  const np = arange([8, 2], 'float32');
  const inp = jax.devicePut(np, new NamedSharding(mesh2, P('x', 'y')));
  const inp2 = jax.devicePut(np, new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'device' }));
  const f = jax.jit((x: Array) => jnp.matmul(x, x.T));
  const out = f(inp) as Array;
  const out2 = f(inp2) as Array;
  t.is(f.cacheSize, 1, 'default and explicit device memory share one cache entry');
  assertArray(t, out2, out);
  f(jax.devicePut(np, 'pinned_host'));
  t.is(f.cacheSize, 2, 'a host argument is another signature');
  // jit(in_shardings=s) and jit(in_shardings=s with memory_kind='device') lower the same program
  const g1 = jax.jit((x: Array) => jnp.matmul(x, x.T), { inShardings: new NamedSharding(mesh2, P('x', 'y')) });
  const g2 = jax.jit((x: Array) => jnp.matmul(x, x.T), { inShardings: new NamedSharding(mesh2, P('x', 'y'), { memoryKind: 'device' }) });
  t.is(g1.trace(np).toString(), g2.trace(np).toString());
  const mulTwo = jax.jit((x: Array) => jnp.multiply(x, 2));
  mulTwo(mulTwo(inp) as never);
  t.is(mulTwo.cacheSize, 1, 'an output fed back in hits the cache');
});

test('memories_test: test_single_mem_kind_donation_default_mem_kind and test_identity_mem_kind_donation (pinned_host, device)', (t) => {
  const s = new NamedSharding(mesh1, P());
  const f = jax.jit((x: Array) => jnp.multiply(x, 2), { outShardings: s, donateArgnums: 0 });
  const x = jax.devicePut(arange([8, 2]), s);
  assertArray(t, f(x), jnp.multiply(arange([8, 2]), 2));
  t.true(x.isDisposed, 'donated within one memory kind');
  for (const kind of ['pinned_host', 'device'] as const) {
    const sk = new NamedSharding(mesh1, P(), { memoryKind: kind });
    const identity = jax.jit((v: Array) => v, { outShardings: sk, donateArgnums: 0 });
    const v = jax.devicePut(arange([8, 2]), sk);
    const out = identity(v) as Array;
    checkPlaced(t, out, arange([8, 2]), sk, kind);
    t.true(v.isDisposed, `${kind}: donated`);
  }
});

test('memories_test: test_no_donation_across_memory_kinds', (t) => {
  // JAX: UserWarning "Some donated buffers were not usable", no input_output_alias, the input is not deleted
  const sHbm = new NamedSharding(mesh2, P('x'));
  const inp = jax.devicePut(arange([8, 2]), sHbm);
  const f = jax.jit((x: Array) => jnp.multiply(x, 2), { outShardings: sHbm.withMemoryKind('pinned_host'), donateArgnums: 0 });
  const out = f(inp) as Array;
  t.is(out.memorySpace, 'pinned_host');
  t.false(inp.isDisposed);
});

// ---- evalShape and ShapeDtypeStruct ----

test('ShapeDtypeStruct and evalShape: memory kinds from shardings in, host outputs out', (t) => {
  const sds = new jax.ShapeDtypeStruct([3], 'float32', { sharding: sHost });
  t.is(sds.aval.memorySpace, 'pinned_host');
  t.is(String(sds), `ShapeDtypeStruct(shape=[3], dtype=float32, sharding=SingleDeviceSharding(device=${dev}, memory_kind=pinned_host))`);
  t.false(new jax.ShapeDtypeStruct([3], 'float32').equals(new jax.ShapeDtypeStruct([3], 'float32', { sharding: sDev })));
  t.true(new jax.ShapeDtypeStruct(3, 'float32').equals(new jax.ShapeDtypeStruct([3], 'float32')));
  const b = jax.devicePut(arange([2, 2], 'float32'), 'pinned_host');
  const live = jax.liveArrayCount();
  const out = jax.evalShape((a: Array, v: Array) => [jnp.multiply(a, 2), jax.devicePut(v, 'device'), jnp.sum(v)], sds, b) as InstanceType<typeof jax.ShapeDtypeStruct>[];
  t.is(jax.liveArrayCount(), live, 'nothing allocated');
  t.deepEqual(out.map((o) => [[...o.shape], o.dtype, o.sharding?.memoryKind ?? null]), [[[3], 'float32', 'pinned_host'], [[2, 2], 'float32', null], [[], 'float32', 'pinned_host']]);
  const weak = jax.evalShape((a: Array) => jnp.add(a, 1), 2.5) as InstanceType<typeof jax.ShapeDtypeStruct>;
  t.true(weak.weakType);
  assertThrowsMentioning(t, () => jax.evalShape((a: Array, b: Array) => jnp.add(a, b), sds, new jax.ShapeDtypeStruct([3], 'float32')), 'memory_space of all inputs passed to `add` must be the same');
  assertThrowsMentioning(t, () => new jax.ShapeDtypeStruct([3], 'float32', { sharding: new NamedSharding(mesh2, P('x', 'y')) }), 'ShapeDtypeStruct', 'rank at least 2');
  assertThrowsMentioning(t, () => jax.evalShape((a: Array) => a, 'x'), 'jax.evalShape: argument leaf 0 must be');
});

test('jit(f).lower(ShapeDtypeStruct in pinned_host): the program takes and returns host values; memoryAnalysis counts them as host bytes', (t) => {
  const f = jax.jit((a: Array) => jnp.multiply(jax.devicePut(a, 'device'), 2), { outShardings: sHost });
  const lowered = f.lower(new jax.ShapeDtypeStruct([4], 'float32', { sharding: sHost }));
  const text = lowered.asText();
  t.true(text.startsWith('{ lambda ; a:f32<host>[4]. let'), text);
  t.is(count(text, 'device_put'), 2);
  const compiled = lowered.compile();
  const m = compiled.memoryAnalysis();
  t.is(m.hostArgumentSizeInBytes, 16);
  t.is(m.hostOutputSizeInBytes, 16);
  t.is(m.argumentSizeInBytes, 0);
  t.is(m.outputSizeInBytes, 0);
  // a device struct where inShardings says pinned_host: JAX's memory-kind error, before anything runs
  const g = jax.jit((a: Array) => a, { inShardings: sHost });
  assertThrowsMentioning(t, () => g.lower(new jax.ShapeDtypeStruct([4], 'float32')), 'Got jit memory kind: pinned_host, arg memory kind: device for arg type: float32[4]');
});

test('device.memoryStats counts the bytes of live arrays', (t) => {
  const before = dev.memoryStats();
  const x = jnp.zeros([1000], { dtype: 'float32' }).blockUntilReady(); // GPU work (and the frees queued behind it) is asynchronous
  const during = dev.memoryStats();
  t.is(during.bytesInUse - before.bytesInUse, allocated(4000));
  t.true(during.peakBytesInUse >= during.bytesInUse);
  t.true(during.largestAllocSize >= 4000);
  x.dispose();
  t.is(dev.memoryStats().bytesInUse, before.bytesInUse);
});

// ---- ActivationOffloadingTest ----

/**
 * JAX's jtu.fwd_bwd_jaxprs: the forward jaxpr (primal output, then the
 * residuals the backward pass reads) and the backward jaxpr (residuals and
 * the output cotangent → input cotangents) of f at x.
 */
function fwdBwdJaxprs(f: (x: Array) => Array, x: Array): { fwd: ClosedJaxpr; bwd: ClosedJaxpr } {
  let linear: Jaxpr | undefined;
  const fwd = jax.makeJaxpr((a: Array) => {
    const lin = linearizeFlat((b: Array) => [f(b)], [a]);
    linear = lin.linear.jaxpr;
    return [...lin.outs, ...lin.linear.consts];
  })(x);
  const lj = linear!;
  const bwd = traceToJaxpr((...xs: Array[]) => {
    const cts = backwardPass(lj, xs.slice(0, -1), lj.inVars.map((v) => new UndefinedPrimal(v.aval)), [xs[xs.length - 1]!]);
    return cts.map((c) => c!);
  }, [...fwd.outAvals.slice(1), fwd.outAvals[0]!]);
  return { fwd, bwd };
}

function count(text: unknown, fragment: string): number {
  return String(text).split(fragment).length - 1;
}

test('memories_test: test_remat_jaxpr_offloadable (forward offloads 3 residuals to the host, backward brings 3 back)', (t) => {
  const policy = () => ({ offload: ['device', 'pinned_host'] as ['device', 'pinned_host'] });
  const f = jax.remat((x: Array) => jnp.sum(jnp.sin(jnp.sin(jnp.sin(x)))), { policy });
  const inp = arange([16], 'float32');
  const { fwd, bwd } = fwdBwdJaxprs(f, inp);
  t.is(fwd.outAvals.length, 4, '1 output, 3 offloaded residuals');
  t.is(fwd.outAvals.filter((a) => a.memorySpace === 'pinned_host').length, 3, fwd.toString());
  t.is(count(fwd, 'device_put[src_kind=device dst_kind=pinned_host]'), 3, fwd.toString());
  t.is(bwd.inAvals.length, 4, '3 offloaded residuals, 1 cotangent');
  t.is(bwd.inAvals.filter((a) => a.memorySpace === 'pinned_host').length, 3);
  t.is(count(bwd, 'device_put[src_kind=pinned_host dst_kind=device]'), 3, bwd.toString());
  t.is(count(bwd, 'dst_kind=pinned_host'), 0, 'nothing goes back to the host in the backward pass');
  // execution: jit of grad runs the transfers and matches the gradient without remat
  const g = jax.jit(jax.grad(f)) as (x: Array) => Array;
  assertArray(t, g(inp), jax.grad((x: Array) => jnp.sum(jnp.sin(jnp.sin(jnp.sin(x)))))(inp) as Array, { tol: 1e-5 });
});

test('memories_test: test_remat_checkpoint_dots_with_no_batch_dims (offloadDotWithNoBatchDims: matmul outputs go to the host)', (t) => {
  const policy = jax.checkpointPolicies.offloadDotWithNoBatchDims('device', 'pinned_host');
  const body = (x: Array): Array => {
    let y = jnp.sin(jnp.einsum('ij,jk->ik', x, x));
    y = jnp.sin(jnp.einsum('ij,jk->ik', y, y));
    y = jnp.sin(jnp.einsum('ij,jk->ik', y, y));
    return jnp.sum(y);
  };
  const f = jax.checkpoint(body, { policy });
  const inp = jnp.ones([2, 2]);
  const { fwd, bwd } = fwdBwdJaxprs(f, inp);
  // the three dot outputs are offloaded; the sins (not dots) that later dots read are recomputed from them in the backward pass
  t.is(count(fwd, 'device_put[src_kind=device dst_kind=pinned_host]'), 3, fwd.toString());
  t.is(fwd.outAvals.filter((a) => a.memorySpace === 'pinned_host').length, 3);
  t.is(count(bwd, 'device_put[src_kind=pinned_host dst_kind=device]'), 3, bwd.toString());
  t.is(count(bwd, ' sin '), 2, 'sin of the first two dots, recomputed from the fetched dots');
  assertArray(t, (jax.jit(jax.grad(f)) as (x: Array) => Array)(inp), jax.grad(body)(inp) as Array, { tol: 1e-5 });
});

test('activation offloading: saveAndOffloadOnlyTheseNames saves, offloads and recomputes by name (forward/backward transfer counts)', (t) => {
  const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({
    namesWhichCanBeSaved: ['y'], namesWhichCanBeOffloaded: ['z', 'w'], offloadSrc: 'device', offloadDst: 'pinned_host',
  });
  const body = (x: Array): Array => {
    const y = jax.checkpointName(jnp.sin(x), 'y');
    const z = jax.checkpointName(jnp.sin(y), 'z');
    const w = jax.checkpointName(jnp.sin(z), 'w');
    const v = jnp.sin(w);
    return jnp.sum(jnp.sin(v));
  };
  const f = jax.remat(body, { policy });
  const inp = jnp.multiply(arange([8], 'float32'), 0.1);
  const { fwd, bwd } = fwdBwdJaxprs(f, inp);
  const hostResiduals = fwd.outAvals.slice(1).filter((a) => a.memorySpace === 'pinned_host').length;
  const deviceResiduals = fwd.outAvals.slice(1).filter((a) => (a.memorySpace ?? 'device') === 'device').length;
  t.is(hostResiduals, 2, `z and w live on the host: ${fwd.toString()}`);
  t.is(deviceResiduals, 2, 'y is saved on the device, and the input x (for cos x) is a residual too');
  t.is(count(fwd, 'dst_kind=pinned_host]'), 2);
  t.is(count(bwd, 'device_put[src_kind=pinned_host dst_kind=device]'), 2, bwd.toString());
  // v = sin(w) is neither saved nor offloaded: recomputed in the backward pass from the fetched w
  t.is(count(bwd, ' sin '), 1, bwd.toString());
  // names not listed in either list: everything is recomputed, nothing transferred
  const none = jax.remat(body, { policy: jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: [], offloadSrc: 'device', offloadDst: 'pinned_host' }) });
  const plain = fwdBwdJaxprs(none, inp);
  t.is(count(plain.fwd, 'device_put'), 0);
  t.is(count(plain.bwd, 'device_put'), 0);
  // JAX: "The names should be exclusive and should not intersect"
  assertThrowsMentioning(t, () => jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({
    namesWhichCanBeSaved: ['y'], namesWhichCanBeOffloaded: ['y', 'w'], offloadSrc: 'device', offloadDst: 'pinned_host',
  }), 'exclusive');
  const grads = (jax.jit(jax.grad(f)) as (x: Array) => Array)(inp);
  assertArray(t, grads, jax.grad(body)(inp) as Array, { tol: 1e-5 });
  t.is(grads.memorySpace, 'device');
});

test('memories_test: test_remat_scan_jaxpr_offloadable, remat inside the scan body (the older test: an everything-offloadable policy, 3 residuals stacked on the host)', (t) => {
  const policy = () => ({ offload: ['device', 'pinned_host'] as ['device', 'pinned_host'] });
  const g = jax.remat((y: Array, _: null): [Array, null] => [jnp.sin(jnp.sin(jnp.sin(y))), null], { policy });
  const f = (x: Array) => jnp.sum(lax.scan(g, x, null, { length: 1 })[0] as Array);
  const inp = arange([16], 'float32');
  const { fwd, bwd } = fwdBwdJaxprs(f, inp);
  t.is(fwd.outAvals.length, 4, '1 output, 3 offloaded residuals');
  t.deepEqual(fwd.outAvals.slice(1).map((a) => [a.memorySpace, a.shape]), [['pinned_host', [1, 16]], ['pinned_host', [1, 16]], ['pinned_host', [1, 16]]], fwd.toString());
  t.is(count(fwd, 'device_put[src_kind=device dst_kind=pinned_host]'), 3, fwd.toString());
  t.is(bwd.inAvals.length, 4, '3 offloaded residuals, 1 cotangent');
  t.is(count(bwd, 'device_put[src_kind=pinned_host dst_kind=device]'), 3, bwd.toString());
  const grad = jax.jit(jax.grad(f));
  assertArray(t, grad(inp) as Array, jax.grad((x: Array) => jnp.sum(jnp.sin(jnp.sin(jnp.sin(x)))))(inp) as Array, { tol: 1e-5 });
  t.true(grad.lower(inp).compile().memoryAnalysis().hostTempSizeInBytes > 0);
});

/** JAX's test_remat_scan_jaxpr_offloadable body: y saved, z and w offloaded, under one remat around the whole scan. */
function rematAroundScan(transpose: boolean) {
  const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({
    namesWhichCanBeSaved: ['y'], namesWhichCanBeOffloaded: ['z', 'w'], offloadSrc: 'device', offloadDst: 'pinned_host',
  });
  const body = (x: Array): Array => {
    const g = ([carry]: [Array, Array], _: null): [[Array, Array], null] => {
      const y = jax.checkpointName(jnp.sin(carry), 'y');
      let z = jax.checkpointName(jnp.sin(y), 'z');
      if (transpose) z = z.T;
      let w = jax.checkpointName(jnp.sin(z), 'w');
      if (transpose) w = w.T;
      return [[w, jnp.sum(w)], null];
    };
    const [[, out]] = lax.scan(g, [x, jnp.array(1, { dtype: 'float32' })], null, { length: 3 }) as [[Array, Array], null];
    return out;
  };
  return { body, f: jax.remat(body, { policy }) };
}

test('memories_test: test_remat_scan_jaxpr_offloadable (a policy around a whole scan reaches inside its body: z stacked on the host, y on the device)', (t) => {
  assertThrowsMentioning(t, () => jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({
    namesWhichCanBeSaved: ['y'], namesWhichCanBeOffloaded: ['y', 'w'], offloadSrc: 'device', offloadDst: 'pinned_host',
  }), 'the names should be exclusive and should not intersect');
  const { body, f } = rematAroundScan(false);
  const inp = jnp.multiply(arange([256, 128], 'float32'), 1e-4);
  const { fwd, bwd } = fwdBwdJaxprs(f, inp);
  // residuals, each stacked over the 3 iterations: the carry coming in (sin's cosine is recomputed from it), y saved
  // on the device, z offloaded; w and sum(w) feed only the next iteration and the output, so nothing keeps them.
  // (JAX counts 2 host residuals and 5 forward outputs on its own printing; the rule is the same: the policy chooses
  // per iteration inside the body instead of the whole scan being recomputed from its input.)
  const residuals = fwd.outAvals.slice(1);
  t.is(residuals.length, 3, fwd.toString());
  t.true(residuals.every((a) => a.shape.join() === '3,256,128'));
  t.deepEqual(residuals.map((a) => a.memorySpace ?? 'device').sort(), ['device', 'device', 'pinned_host'], fwd.toString());
  t.is(count(fwd, 'device_put[src_kind=device dst_kind=pinned_host]'), 1, fwd.toString());
  t.is(count(bwd, 'device_put[src_kind=pinned_host dst_kind=device]'), 1, bwd.toString());
  t.is(count(bwd, 'dst_kind=pinned_host'), 0);
  // y is saved: the backward pass recomputes neither sin(carry) nor sin(y); only w = sin(z) feeds nothing it needs
  t.is(count(bwd, ' sin '), 0, bwd.toString());
  const grad = jax.jit(jax.grad(f));
  t.true(grad.lower(inp).compile().memoryAnalysis().hostTempSizeInBytes >= 3 * 256 * 128 * 4);
  assertArray(t, grad(inp) as Array, jax.grad(body)(inp) as Array, { tol: 1e-5 });
});

test('memories_test: test_remat_scan_layout_change_offloadable (z transposed after it is named: offloaded in the layout it was named in)', (t) => {
  const { body, f } = rematAroundScan(true);
  const inp = jnp.multiply(arange([256, 128], 'float32'), 1e-4);
  const { fwd } = fwdBwdJaxprs(f, inp);
  t.deepEqual(fwd.outAvals.filter((a) => a.memorySpace === 'pinned_host').map((a) => a.shape), [[3, 256, 128]], fwd.toString());
  const grad = jax.jit(jax.grad(f));
  t.true(grad.lower(inp).compile().memoryAnalysis().hostTempSizeInBytes >= 3 * 256 * 128 * 4);
  assertArray(t, grad(inp) as Array, jax.grad(body)(inp) as Array, { tol: 1e-5 });
});

test('a policy around a cond reaches inside its branches: the taken branch offloads its named value', (t) => {
  const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['h'], offloadSrc: 'device', offloadDst: 'pinned_host' });
  const body = (x: Array) => jnp.sum(lax.cond(jnp.greater(jnp.sum(x), 0), (a: Array) => jnp.sin(jax.checkpointName(jnp.sin(a), 'h')), (a: Array) => jnp.cos(a), x) as Array);
  const f = jax.remat(body, { policy });
  const { fwd, bwd } = fwdBwdJaxprs(f, jnp.multiply(arange([8], 'float32'), 0.1));
  t.deepEqual(fwd.outAvals.filter((a) => a.memorySpace === 'pinned_host').map((a) => a.shape), [[8]], fwd.toString());
  t.is(count(bwd, 'device_put[src_kind=pinned_host dst_kind=device]'), 1, bwd.toString());
  const grad = jax.jit(jax.grad(f)) as (x: Array) => Array;
  for (const x of [jnp.multiply(arange([8], 'float32'), 0.1), jnp.multiply(arange([8], 'float32'), -0.1)]) {
    assertArray(t, grad(x), jax.grad(body)(x) as Array, { tol: 1e-6 });
  }
});

test('the tutorial\'s policy around the whole scan gives the figures of remat around each layer (cross-lowered for cuda)', (t) => {
  const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['x'], offloadSrc: 'device', offloadDst: 'pinned_host' });
  const layer = (x: Array, [w1, w2]: [Array, Array]): [Array, null] => [jnp.matmul(jnp.matmul(jax.checkpointName(x, 'x'), w1), w2), null];
  const around = (w: [Array, Array], x: Array) => jnp.sum(lax.scan(layer, x, w)[0] as Array);
  const inside = (w: [Array, Array], x: Array) => jnp.sum(lax.scan(jax.remat(layer, { policy, preventCse: false }), x, w)[0] as Array);
  const structs = [[new jax.ShapeDtypeStruct([10, 256, 1024], 'float32'), new jax.ShapeDtypeStruct([10, 1024, 256], 'float32')], new jax.ShapeDtypeStruct([256, 256], 'float32')] as const;
  const analysis = (f: (w: [Array, Array], x: Array) => Array) => jax.jit(jax.grad(f)).lower(...structs, { platform: 'cuda' }).compile().memoryAnalysis();
  const a = analysis(jax.remat(around, { policy, preventCse: false }));
  const b = analysis(inside);
  t.is(a.hostTempSizeInBytes, 10 * 256 * 256 * 4, 'each layer\'s x stacked on the host');
  t.is(a.hostTempSizeInBytes, b.hostTempSizeInBytes);
  t.is(a.tempSizeInBytes, b.tempSizeInBytes);
});

test('activation offloading: the offloaded residuals are host arrays between the passes (vjp runs the forward now)', (t) => {
  const policy = jax.checkpointPolicies.saveAndOffloadOnlyTheseNames({ namesWhichCanBeSaved: [], namesWhichCanBeOffloaded: ['h'], offloadSrc: 'device', offloadDst: 'pinned_host' });
  const f = jax.remat((x: Array) => jnp.sum(jnp.sin(jax.checkpointName(jnp.multiply(x, x), 'h'))), { policy });
  const x = arange([4], 'float32');
  const lin = linearizeFlat((a: Array) => [f(a)], [x]);
  // the residuals: x itself (an operand of the checkpoint) on the device, h offloaded to the host
  t.deepEqual(lin.linear.consts.map((c) => c.memorySpace).sort(), ['device', 'pinned_host']);
  const [, pullback] = jax.vjp(f, x);
  const [g] = pullback(jnp.array(1, { dtype: 'float32' })) as Array[];
  assertArray(t, g!, jax.grad((a: Array) => jnp.sum(jnp.sin(jnp.multiply(a, a))))(x) as Array, { tol: 1e-6 });
});
