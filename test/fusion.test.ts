// Fusion (compiler/fuse.ts) and compiled programs (compiler/executable.ts):
// how many kernels a jitted function becomes, what each computes, that no
// expensive value is computed twice, that kernels never form a cycle through
// other kernels, half-precision intermediates round like eager ones, and that
// temporaries are released after their last use. Results always equal eager.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import { numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import { Executable } from '../lib/compiler/executable.js';
import { fuseJaxpr } from '../lib/compiler/fuse.js';
import { kernelJson, type Kernel } from '../lib/compiler/kernel-ir.js';
import type { Backend, DeviceBuffer } from '../lib/runtime/backend.js';
import { cpuBackend } from '../lib/runtime/cpu.js';
import { randomValues } from './helpers/oracle.js';

type Fn = (...args: never[]) => unknown;

function rand(shape: number[], seed = 1, lo = -3, hi = 3): Array {
  const n = shape.reduce((a, b) => a * b, 1);
  return lax.reshape(jnp.array(randomValues(n, seed, lo, hi)), shape);
}

/** The compiled program of f, after checking that it computes exactly what eager f does. */
function compiled(t: ExecutionContext, f: Fn, ...args: unknown[]): Executable {
  const jf = jax.jit(f);
  const got = jax.tree.leaves((jf as unknown as (...a: unknown[]) => unknown)(...args) as never) as Array[];
  const want = jax.tree.leaves((f as (...a: unknown[]) => unknown)(...args) as never) as Array[];
  t.is(got.length, want.length);
  got.forEach((g, i) => t.deepEqual([...g.shape, ...g.dataSync()], [...want[i]!.shape, ...want[i]!.dataSync()], `output ${i} equals eager`));
  return jf.executable(...(args as never[]));
}

const labels = (e: Executable) => e.launches.map((l) => l.label);
const kinds = (e: Executable) => e.launches.map((l) => l.kernel.kind);
/** How many kernels evaluate primitive `p`. */
const computing = (e: Executable, p: string) => labels(e).filter((l) => l.split(' ').includes(p)).length;

const x = rand([6, 7], 1);

test('a 10-op elementwise chain with scalars is one kernel', (t) => {
  const chain = (a: Array) =>
    jnp.negative(jnp.exp(jnp.maximum(jnp.sqrt(jnp.abs(jnp.subtract(jnp.multiply(jnp.tanh(jnp.add(jnp.multiply(a, 2), 1)), 3), 0.5))), 0.1)));
  const e = compiled(t, chain, x);
  t.deepEqual(kinds(e), ['elementwise']);
  t.is(labels(e)[0], 'mul add tanh mul sub abs sqrt max exp neg');
  const kernel = e.launches[0]!.kernel as Extract<Kernel, { kind: 'elementwise' }>;
  t.deepEqual(kernel.inputs, [{ dtype: 'float32', access: 'contiguous' }], 'one input read, one output written');
  t.is(kernel.outputs.length, 1);
});

test('sum(exp(x - 1)) along an axis is one reduction kernel with a prologue', (t) => {
  for (const axis of [0, 1]) {
    const e = compiled(t, (a: Array) => jnp.sum(jnp.exp(jnp.subtract(a, 1)), { axis }), x);
    t.deepEqual(kinds(e), ['reduce'], `axis ${axis}`);
    t.is(labels(e)[0], 'sub exp reduce_sum');
  }
});

test('row and column softmax are three kernels, and exp is computed once', (t) => {
  for (const axis of [1, 0]) {
    const softmax = (a: Array) => {
      const ex = jnp.exp(jnp.subtract(a, jnp.max(a, { axis, keepdims: true })));
      return jnp.divide(ex, jnp.sum(ex, { axis, keepdims: true }));
    };
    const e = compiled(t, softmax, x);
    t.deepEqual(kinds(e), ['reduce', 'reduce', 'elementwise'], `axis ${axis}`);
    t.is(computing(e, 'exp'), 1, 'exp(x - max) is a side output of the sum, not recomputed by the division');
    const sum = e.launches[1]!.kernel as Extract<Kernel, { kind: 'reduce' }>;
    t.is(sum.fused?.sideOutputs.length, 1);
  }
});

test('elementwise consumers of a reduction become its epilogue: mean, logsumexp', (t) => {
  const mean = compiled(t, (a: Array) => jnp.mean(a, { axis: 0 }), x);
  t.deepEqual(labels(mean), ['reduce_sum div']);
  const lse = compiled(t, (a: Array) => jnp.log(jnp.sum(jnp.exp(a), { axis: 1, keepdims: true })), x);
  t.deepEqual(labels(lse), ['exp reduce_sum reshape log']);
});

test('layer norm is three kernels (CSE merges the mean jnp.var recomputes)', (t) => {
  const e = compiled(t, (a: Array) => {
    const m = jnp.mean(a, { axis: -1, keepdims: true });
    const v = jnp.var(a, { axis: -1, keepdims: true });
    return jnp.divide(jnp.subtract(a, m), jnp.sqrt(jnp.add(v, 1e-5)));
  }, x);
  t.deepEqual(kinds(e), ['reduce', 'reduce', 'elementwise']);
  t.is(computing(e, 'sqrt'), 1, 'sqrt(var + eps) is computed once per row, in the variance epilogue');
  t.true(labels(e)[1]!.endsWith('sqrt'));
});

test('values used outside a fused group are extra outputs of one kernel', (t) => {
  const e = compiled(t, (a: Array) => {
    const s = jnp.sin(a);
    return [s, jnp.add(jnp.cos(a), s), jnp.multiply(s, 2)];
  }, x);
  t.deepEqual(kinds(e), ['elementwise']);
  t.is((e.launches[0]!.kernel as Extract<Kernel, { kind: 'elementwise' }>).outputs.length, 3);
  t.is(computing(e, 'sin'), 1);
});

test('a cheap broadcast operand is recomputed in place; an expensive one gets a buffer', (t) => {
  const row = rand([7], 2);
  const cheap = compiled(t, (a: Array, r: Array) => jnp.multiply(a, jnp.add(r, 1)), x, row);
  t.deepEqual(kinds(cheap), ['elementwise']);
  const expensive = compiled(t, (a: Array, r: Array) => jnp.multiply(a, jnp.exp(r)), x, row);
  t.deepEqual(labels(expensive), ['exp', 'broadcast_in_dim mul'], 'exp(row) is evaluated 7 times, not 42');
});

test('dot, cumsum, gather, concatenate stay their own kernels; their operands and results are buffers', (t) => {
  const w = rand([7, 3], 3);
  const e = compiled(t, (a: Array) => jnp.tanh(jnp.add(jnp.matmul(jnp.multiply(a, 2), w), 1)), x);
  t.deepEqual(labels(e), ['mul', 'dot_general', 'add tanh']);
  const c = compiled(t, (a: Array) => jnp.concatenate([jnp.cumsum(jnp.exp(a), { axis: 1 }), jnp.take(a, jnp.array([1, 0]), { axis: 0 })], { axis: 0 }), x);
  t.is(computing(c, 'cumsum'), 1);
  t.is(computing(c, 'gather'), 1);
  t.is(computing(c, 'concatenate'), 1);
});

test('merging never creates a cycle through another kernel, and never duplicates expensive work', (t) => {
  // v feeds both cumsum and a reduction that also reads cumsum(v): v cannot be the reduction's side output
  const e = compiled(t, (a: Array) => {
    const v = jnp.exp(a);
    return jnp.sum(jnp.multiply(v, jnp.cumsum(v, { axis: 1 })), { axis: 1 });
  }, x);
  t.deepEqual(labels(e), ['exp', 'cumsum', 'mul reduce_sum']);
  // an elementwise output that depends on a reduction of another elementwise output
  const f = compiled(t, (a: Array) => {
    const s = jnp.sin(a);
    return [s, jnp.divide(s, jnp.sum(s, { axis: 1, keepdims: true }))];
  }, x);
  t.is(computing(f, 'sin'), 1);
  t.is(f.kernelCount, 2);
});

test('transpose and size-1 reshapes only remap coordinates; a general reshape needs a buffer', (t) => {
  t.deepEqual(labels(compiled(t, (a: Array) => jnp.add(jnp.transpose(jnp.exp(a)), 1), x)), ['exp transpose add']);
  t.is(compiled(t, (a: Array) => jnp.multiply(jnp.expandDims(jnp.exp(a), 1), 2), x).kernelCount, 1);
  t.deepEqual(labels(compiled(t, (a: Array) => jnp.sum(jnp.reshape(jnp.exp(a), [7, 6]), { axis: 1 }), x)), ['exp', 'reduce_sum']);
});

test('iota fuses into elementwise kernels and into reductions', (t) => {
  t.is(compiled(t, (a: Array) => jnp.tril(jnp.exp(a)), x).kernelCount, 1);
  const masked = compiled(t, (a: Array) => jnp.sum(jnp.where(jnp.less(jnp.arange(7), 3), a, 0), { axis: 1 }), x);
  t.deepEqual(kinds(masked), ['reduce']);
  const firstBig = compiled(t, (a: Array) => jnp.argmax(jnp.greater(a, 1).astype('int32'), { axis: 0 }), x);
  t.deepEqual(kinds(firstBig), ['reduce']);
});

test('CSE and DCE: equal equations run once; unused ones not at all', (t) => {
  const e = compiled(t, (a: Array) => {
    void jnp.exp(jnp.cos(a)); // dead
    return jnp.add(jnp.sum(jnp.sin(a)), jnp.sum(jnp.sin(a)));
  }, x);
  t.is(computing(e, 'sin'), 1);
  t.is(computing(e, 'reduce_sum'), 1);
  t.is(computing(e, 'cos'), 0);
});

test('16-bit float intermediates round to their dtype inside fused kernels, as eager stores do', (t) => {
  const h = rand([64], 5, -300, 300).astype('float16');
  // each step's rounding matters: a float32 intermediate would give different bits
  compiled(t, (a: Array) => jnp.multiply(jnp.add(jnp.multiply(a, 1.001), 0.01), 3.3), h);
  compiled(t, (a: Array) => jnp.sum(jnp.multiply(jnp.exp(jnp.multiply(a, 0.01)), 1.7), { axis: 0 }), h);
  const b = rand([64], 6, -300, 300).astype('bfloat16');
  compiled(t, (a: Array) => jnp.subtract(jnp.multiply(a, 1.01), a), b);
  const f = rand([64], 7);
  const roundTrip = compiled(t, (a: Array) => jnp.subtract(a.astype('float16').astype('float32'), a), f);
  t.is(roundTrip.kernelCount, 1);
  t.true([...jax.jit((a: Array) => jnp.subtract(a.astype('float16').astype('float32'), a))(f).dataSync()].some((v) => v !== 0), 'the float16 cast rounds');
});

test('edge cases: zero-size and rank-0 arrays, inputs and literals as outputs, one value returned twice', (t) => {
  const empty = jnp.zeros([0, 3]);
  const e = compiled(t, (a: Array) => [jnp.sum(jnp.exp(a), { axis: 0 }), jnp.add(a, 1)], empty);
  t.is(e.kernelCount, 2);
  compiled(t, (s: Array) => jnp.multiply(jnp.exp(s), jnp.sum(s)), jnp.array(0.5));
  const out = jax.jit((a: Array) => [a, 7, jnp.add(a, 1), a])(x) as Array[];
  t.deepEqual([...out[0]!.dataSync()], [...x.dataSync()]);
  t.is(out[1]!.item(), 7);
  out[0]!.dispose();
  t.deepEqual([...out[3]!.dataSync()], [...x.dataSync()], 'outputs sharing a buffer own a reference each');
  t.false(x.isDisposed);
  t.is(jax.jit((a: Array) => a).kernelCount(x), 0);
});

test('fused kernels are DAGs: shared subexpressions stay linear in cache keys and sources', (t) => {
  const f = (a: Array) => {
    let v = a;
    for (let i = 0; i < 40; i++) v = jnp.add(jnp.multiply(v, v), v); // each node used twice: 2^40 as a tree
    return jnp.tanh(v);
  };
  const small = rand([5], 8, -0.1, 0.1);
  const e = compiled(t, f, small);
  t.is(e.kernelCount, 1);
  t.true(kernelJson(e.launches[0]!.kernel).length < 20000);
  t.true(e.launches[0]!.compiled.source.length < 40000);
});

test('kernelJson equals JSON.stringify for tree-shaped kernels', (t) => {
  const kernel: Kernel = {
    kind: 'elementwise',
    inputs: [{ dtype: 'float32', access: 'contiguous' }],
    outputs: [{ dtype: 'float32', expr: { op: 'unary', name: 'exp', x: { op: 'input', index: 0, dtype: 'float32' }, dtype: 'float32' } }],
  };
  t.is(kernelJson(kernel), JSON.stringify(kernel));
});

test('temporaries are released after their last use; outputs are not', (t) => {
  const freed: DeviceBuffer[] = [];
  const spy: Backend = {
    platform: 'cpu',
    fromHost: (b) => cpuBackend.fromHost(b),
    toHostSync: (b) => cpuBackend.toHostSync(b),
    toHost: (b) => cpuBackend.toHost(b),
    execute: (p, i, o) => cpuBackend.execute(p, i, o),
    free: (b) => {
      freed.push(b);
      cpuBackend.free(b);
    },
  };
  const f = (a: Array) => jnp.tanh(jnp.cumsum(jnp.cumsum(jnp.exp(a), { axis: 0 }), { axis: 1 }));
  const closed = jax.makeJaxpr(f)(x);
  const program = fuseJaxpr(closed.jaxpr);
  const exe = new Executable(program, spy);
  t.deepEqual(exe.launches.map((l) => l.label), ['exp', 'cumsum', 'cumsum', 'tanh']);
  const [out] = exe.run([x], closed.consts);
  t.is(freed.length, 3, 'exp(x) and both cumsums are freed, each after its last reader');
  t.deepEqual([...out!.dataSync()], [...f(x).dataSync()]);
  t.false(out!.isDisposed);
});

test('random programs: jit equals eager bit for bit (float32 and float16)', (t) => {
  let state = 12345;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const data = (shape: number[], k: number) => lax.reshape(jnp.array(randomValues(shape.reduce((a, b) => a * b, 1), k, -2, 2)), shape);
  // each step applies a random op to random earlier values; mismatched shapes fall back to a unary op
  const makeProgram = (steps: number[][]) => (x: Array, y: Array, r: Array, c: Array, w: Array) => {
    const pool: Array[] = [x, y, r, c];
    for (const [a, b, kind, d] of steps) {
      const u = pool[Math.floor(a! * pool.length)]!;
      const v = pool[Math.floor(b! * pool.length)]!;
      const axis = Math.floor(d! * Math.max(u.ndim, 1));
      const ops: (() => Array)[] = [
        () => jnp.exp(jnp.multiply(u, 0.3)),
        () => jnp.add(jnp.tanh(u), v),
        () => jnp.multiply(u, v),
        () => (u.ndim ? jnp.sum(u, { axis, keepdims: d! > 0.5 }) : u),
        () => (u.ndim ? jnp.max(u, { axis, keepdims: d! < 0.5 }) : u),
        () => (u.ndim ? jnp.cumsum(u, { axis }) : u),
        () => jnp.transpose(u),
        () => jnp.where(jnp.greater(u, 0), u, jnp.multiply(v, 2)),
        () => (u.ndim === 2 && u.shape[1] === 5 ? jnp.matmul(u, w) : jnp.negative(u)),
        () => jnp.divide(u, jnp.add(jnp.square(v), 1)),
        () => jnp.mean(u),
        () => jnp.sqrt(jnp.abs(jnp.maximum(u, v))),
      ];
      let out: Array;
      try {
        out = ops[Math.floor(kind! * ops.length)]!();
      } catch {
        out = jnp.sin(u);
      }
      pool.push(out);
    }
    return [pool[pool.length - 1]!, pool[4 + Math.floor(steps[0]![3]! * (pool.length - 4))]!, pool[pool.length - 2]!];
  };
  for (let trial = 0; trial < 20; trial++) {
    const steps = globalThis.Array.from({ length: 3 + Math.floor(next() * 10) }, () => [next(), next(), next(), next()]);
    const dtype = trial % 4 === 3 ? 'float16' : 'float32';
    const args = [data([4, 5], 1), data([4, 5], 2), data([5], 3), data([4, 1], 4), data([5, 5], 5)].map((a) => a.astype(dtype));
    const f = makeProgram(steps);
    const got = jax.jit(f)(...(args as [Array, Array, Array, Array, Array]));
    const want = f(...(args as [Array, Array, Array, Array, Array]));
    got.forEach((g, i) => {
      const a = [...g.shape, ...g.dataSync()].map((v) => (Number.isNaN(v) ? 'NaN' : v));
      const b = [...want[i]!.shape, ...want[i]!.dataSync()].map((v) => (Number.isNaN(v) ? 'NaN' : v));
      t.deepEqual(a, b, `trial ${trial} (${dtype}) output ${i}`);
    });
  }
});
