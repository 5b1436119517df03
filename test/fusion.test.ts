// Fusion (compiler/fuse.ts) and compiled programs (runtime/*-executable.ts):
// how many kernels a jitted function becomes (softmax and layer norm two, a
// dense layer with its bias and activation one), what each computes, that no
// expensive value is computed twice (but for a reduction's second pass, which
// recomputes its prologue, as XLA's softmax does), that kernels never form a
// cycle through other kernels, and half-precision intermediates round like
// eager ones. Results always equal eager.
import test, { type ExecutionContext } from 'ava';
import * as jax from '../lib/index.js';
import { numpy as jnp, lax } from '../lib/index.js';
import type { Array } from '../lib/core/array.js';
import type { ProgramExecutable as Executable } from '../lib/runtime/backend.js';
import type { ProgramLaunch } from '../lib/compiler/fuse.js';
import { kernelJson, type Kernel } from '../lib/compiler/kernel-ir.js';
import { checkAgainstReference, randomValues } from './helpers/oracle.js';

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

/** The program's top-level kernel launches, in order. */
const launches = (e: Executable) => e.plan.program.steps.filter((s): s is ProgramLaunch => s.kind === 'launch');
const labels = (e: Executable) => launches(e).map((l) => l.label);
const kinds = (e: Executable) => launches(e).map((l) => l.kernel.kind);
/** How many kernels evaluate primitive `p`. */
const computing = (e: Executable, p: string) => labels(e).filter((l) => l.split(' ').includes(p)).length;

const x = rand([6, 7], 1);

test('a 10-op elementwise chain with scalars is one kernel', (t) => {
  const chain = (a: Array) =>
    jnp.negative(jnp.exp(jnp.maximum(jnp.sqrt(jnp.abs(jnp.subtract(jnp.multiply(jnp.tanh(jnp.add(jnp.multiply(a, 2), 1)), 3), 0.5))), 0.1)));
  const e = compiled(t, chain, x);
  t.deepEqual(kinds(e), ['elementwise']);
  t.is(labels(e)[0], 'mul add tanh mul sub abs sqrt max exp neg');
  const kernel = launches(e)[0]!.kernel as Extract<Kernel, { kind: 'elementwise' }>;
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

const softmaxOver = (axis: number) => (a: Array) => {
  const ex = jnp.exp(jnp.subtract(a, jnp.max(a, { axis, keepdims: true })));
  return jnp.divide(ex, jnp.sum(ex, { axis, keepdims: true }));
};

test('row and column softmax are two kernels: max, then sum of exp(x - max) with the division as a second pass', (t) => {
  for (const axis of [1, 0]) {
    const e = compiled(t, softmaxOver(axis), x);
    t.deepEqual(kinds(e), ['reduce', 'reduce'], `axis ${axis}`);
    t.is(computing(e, 'exp'), 1, 'only the sum kernel evaluates exp');
    const sum = (launches(e)[1]!.kernel as Extract<Kernel, { kind: 'reduce' }>).fused!;
    t.is(sum.sideOutputs.length, 0, 'exp(x - max) is recomputed in the second pass, never written to memory');
    t.is(sum.outputs.length, 0, 'the row sums are not stored either');
    t.is(sum.finalOutputs?.length, 1);
  }
  t.deepEqual(kinds(compiled(t, (a: Array) => jax.nn.softmax(a), x)), ['reduce', 'reduce'], 'jax.nn.softmax');
});

test('softmax in float32 and bfloat16 matches the float64 reference, on rows split across threads and on many short rows', (t) => {
  const wide = rand([3, 50000], 9, -8, 8); // few long rows: each row's sum is split across threads before the second pass
  const tall = rand([4000, 10], 10, -8, 8);
  for (const a of [x, wide, tall]) {
    for (const dtype of ['float32', 'bfloat16'] as const) {
      const input = a.astype(dtype);
      const e = compiled(t, softmaxOver(1), input);
      t.is(e.kernelCount, 2, `${dtype} ${a.shape}`);
      checkAgainstReference(t, () => jax.jit(softmaxOver(1))(input), { message: `${dtype} ${a.shape}` });
    }
  }
});

test('a final output may be an extra output beside values the reduction already writes', (t) => {
  // exp(x) is returned, so it is a side output; the normalized value recomputes it in the second pass
  const e = compiled(t, (a: Array) => {
    const ex = jnp.exp(a);
    return [ex, jnp.divide(ex, jnp.sum(ex, { axis: 1, keepdims: true })), jnp.sum(ex, { axis: 1 })];
  }, x);
  t.deepEqual(kinds(e), ['reduce']);
  const fused = (launches(e)[0]!.kernel as Extract<Kernel, { kind: 'reduce' }>).fused!;
  t.deepEqual([fused.outputs.length, fused.sideOutputs.length, fused.finalOutputs?.length], [1, 1, 1]);
  // x / sum(x) over all axes: one output element, its inner space split across threads
  t.deepEqual(kinds(compiled(t, (a: Array) => jnp.divide(a, jnp.sum(a)), rand([300, 300], 11))), ['reduce']);
  // a final output reading the result transposed is not this element's result: it stays a kernel of its own
  const sq = rand([7, 7], 12);
  t.deepEqual(kinds(compiled(t, (a: Array) => jnp.divide(a, jnp.sum(a, { axis: 1 })), sq)), ['reduce', 'elementwise']);
});

test('elementwise consumers of a reduction become its epilogue: mean, logsumexp', (t) => {
  const mean = compiled(t, (a: Array) => jnp.mean(a, { axis: 0 }), x);
  t.deepEqual(labels(mean), ['reduce_sum div']);
  const lse = compiled(t, (a: Array) => jnp.log(jnp.sum(jnp.exp(a), { axis: 1, keepdims: true })), x);
  t.deepEqual(labels(lse), ['exp reduce_sum reshape log']);
});

const layerNorm = (a: Array) => {
  const m = jnp.mean(a, { axis: -1, keepdims: true });
  const v = jnp.var(a, { axis: -1, keepdims: true });
  return jnp.divide(jnp.subtract(a, m), jnp.sqrt(jnp.add(v, 1e-5)));
};

test('layer norm is two kernels: the mean, then the variance with the normalized row as a second pass', (t) => {
  const e = compiled(t, layerNorm, x);
  t.deepEqual(kinds(e), ['reduce', 'reduce'], 'CSE merges the mean jnp.var recomputes');
  t.is(computing(e, 'sqrt'), 1);
  const fused = (launches(e)[1]!.kernel as Extract<Kernel, { kind: 'reduce' }>).fused!;
  t.is(fused.finalOutputs?.length, 1);
  // (the CPU kernel's C loop; on CUDA the fused reduction's structure above says the same)
  if (jax.defaultBackend() === 'cpu') {
    t.false(/for \(int64_t j = lo; j < hi; j\+\+\) \{[^}]*sqrtf/.test(e.kernels()[1]!.source), 'sqrt(var + eps) is computed once per row, outside the second pass');
  }
  const gamma = rand([7], 13);
  const beta = rand([7], 14);
  const affine = compiled(t, (a: Array, g: Array, b: Array) => jnp.add(jnp.multiply(layerNorm(a), g), b), x, gamma, beta);
  t.deepEqual(kinds(affine), ['reduce', 'reduce'], 'gamma and beta are read in the second pass');
  const wide = rand([2, 40000], 15);
  t.is(compiled(t, layerNorm, wide).kernelCount, 2);
  checkAgainstReference(t, () => jax.jit(layerNorm)(wide), { tol: 1e-5 });
  checkAgainstReference(t, () => jax.jit(layerNorm)(x.astype('bfloat16')));
});

test('values used outside a fused group are extra outputs of one kernel', (t) => {
  const e = compiled(t, (a: Array) => {
    const s = jnp.sin(a);
    return [s, jnp.add(jnp.cos(a), s), jnp.multiply(s, 2)];
  }, x);
  t.deepEqual(kinds(e), ['elementwise']);
  t.is((launches(e)[0]!.kernel as Extract<Kernel, { kind: 'elementwise' }>).outputs.length, 3);
  t.is(computing(e, 'sin'), 1);
});

test('a cheap broadcast operand is recomputed in place; an expensive one gets a buffer', (t) => {
  const row = rand([7], 2);
  const cheap = compiled(t, (a: Array, r: Array) => jnp.multiply(a, jnp.add(r, 1)), x, row);
  t.deepEqual(kinds(cheap), ['elementwise']);
  const expensive = compiled(t, (a: Array, r: Array) => jnp.multiply(a, jnp.exp(r)), x, row);
  t.deepEqual(labels(expensive), ['exp', 'broadcast_in_dim mul'], 'exp(row) is evaluated 7 times, not 42');
});

test('cumsum, gather, concatenate stay their own kernels; their operands and results are buffers', (t) => {
  const w = rand([7, 3], 3);
  const e = compiled(t, (a: Array) => jnp.tanh(jnp.add(jnp.matmul(jnp.multiply(a, 2), w), 1)), x);
  t.deepEqual(labels(e), ['mul', 'dot_general add tanh'], 'a dot operand is a buffer');
  const c = compiled(t, (a: Array) => jnp.concatenate([jnp.cumsum(jnp.exp(a), { axis: 1 }), jnp.take(a, jnp.array([1, 0], { dtype: 'int32' }), { axis: 0 })], { axis: 0 }), x);
  t.is(computing(c, 'cumsum'), 1);
  t.is(computing(c, 'gather'), 1);
  t.is(computing(c, 'concatenate'), 1);
});

test('elementwise consumers of a dot are its epilogue: tanh(x @ w + b) is one kernel', (t) => {
  const a = rand([9, 7], 20);
  const w = rand([7, 5], 21);
  const b = rand([5], 22);
  const layer = compiled(t, (p: Array, q: Array, r: Array) => jnp.tanh(jnp.add(jnp.matmul(p, q), r)), a, w, b);
  t.deepEqual(labels(layer), ['dot_general broadcast_in_dim add tanh']);
  const dot = launches(layer)[0]!.kernel as Extract<Kernel, { kind: 'dot' }>;
  t.deepEqual(dot.epilogue?.inputs, [{ dtype: 'float32' }], 'the bias is the one epilogue input; the product never reaches memory');
  t.is(dot.epilogue?.outputs.length, 1);
  // a scale and a cast to bfloat16: the product rounds to float32 first, as eager's dot stores it
  const cast = compiled(t, (p: Array, q: Array, r: Array) => jnp.multiply(jnp.tanh(jnp.add(jnp.matmul(p, q), r)), 0.5).astype('bfloat16'), a, w, b);
  t.deepEqual(kinds(cast), ['dot']);
  const half = compiled(t, (p: Array, q: Array, r: Array) => jnp.tanh(jnp.add(jnp.matmul(p, q), r)), a.astype('bfloat16'), w.astype('bfloat16'), b.astype('bfloat16'));
  t.deepEqual(kinds(half), ['dot'], 'bfloat16 operands');
  // batched: [4, 9, 7] @ [4, 7, 5] + a per-batch bias [4, 1, 5]
  const xb = rand([4, 9, 7], 23);
  const wb = rand([4, 7, 5], 24);
  const bb = rand([4, 1, 5], 25);
  const batched = compiled(t, (p: Array, q: Array, r: Array) => jnp.maximum(jnp.add(jnp.matmul(p, q), r), 0), xb, wb, bb);
  t.deepEqual(kinds(batched), ['dot']);
  checkAgainstReference(t, () => jax.jit((p: Array, q: Array, r: Array) => jnp.tanh(jnp.add(jnp.matmul(p, q), r)))(xb, wb, bb));
});

test('a dot epilogue: chained layers, the raw product as an extra output, and what stays unfused', (t) => {
  const a = rand([9, 7], 26);
  const w = rand([7, 5], 27);
  const b = rand([5], 28);
  const w2 = rand([5, 3], 29);
  const mlp = compiled(t, (p: Array, q: Array, r: Array, s: Array) => jnp.matmul(jnp.maximum(jnp.add(jnp.matmul(p, q), r), 0), s), a, w, b, w2);
  t.deepEqual(kinds(mlp), ['dot', 'dot'], 'relu(x @ w + b) @ w2');
  const both = compiled(t, (p: Array, q: Array) => {
    const y = jnp.matmul(p, q);
    return [y, jnp.exp(y)];
  }, a, w);
  t.deepEqual(kinds(both), ['dot']);
  t.is((launches(both)[0]!.kernel as Extract<Kernel, { kind: 'dot' }>).epilogue?.outputs.length, 2, 'the product and exp(product)');
  // [2, 3, 7] @ [7, 5]: M merges two axes; a bias that varies along the first but not the second cannot be read as [B, M, N]
  const x3 = rand([2, 3, 7], 30);
  const bias3 = rand([2, 1, 5], 31);
  const split = compiled(t, (p: Array, q: Array, r: Array) => jnp.add(jnp.matmul(p, q), r), x3, w, bias3);
  t.deepEqual(kinds(split), ['dot', 'elementwise']);
  const viewable = compiled(t, (p: Array, q: Array, r: Array) => jnp.add(jnp.matmul(p, q), r), x3, w, rand([2, 3, 1], 32));
  t.deepEqual(kinds(viewable), ['dot'], 'a bias per row of [2, 3] is a [B, M, N] view with strides [0, 1, 0]');
  const sq = rand([5, 5], 33);
  t.deepEqual(kinds(compiled(t, (p: Array) => {
    const y = jnp.matmul(p, p);
    return jnp.add(y, jnp.transpose(y));
  }, sq)), ['dot', 'elementwise'], 'reading the product transposed');
  t.deepEqual(kinds(compiled(t, (p: Array) => jnp.tril(jnp.matmul(p, p)), sq)), ['dot', 'elementwise'], 'iota');
});

test('the MLP loss gradient under jit equals eager bit for bit, with its dots carrying their epilogues', (t) => {
  const layers = [[1, 16], [16, 16], [16, 1]].map(([i, o], k) => ({ w: rand([i!, o!], 40 + k, -1, 1), b: rand([o!], 50 + k, -0.1, 0.1) }));
  const xs = rand([32, 1], 60);
  const ys = jnp.sin(xs);
  const loss = (params: typeof layers, p: Array, q: Array) => {
    let h = p;
    params.forEach(({ w, b }, i) => {
      h = jnp.add(jnp.matmul(h, w), b);
      if (i < params.length - 1) h = jnp.tanh(h);
    });
    return jnp.mean(jnp.square(jnp.subtract(h, q)));
  };
  const e = compiled(t, (params: typeof layers, p: Array, q: Array) => jax.grad(loss)(params, p, q), layers, xs, ys);
  t.true(computing(e, 'tanh') <= 2, 'each tanh is evaluated by one kernel, its dot');
  t.is(labels(e).filter((l) => l === 'broadcast_in_dim add tanh').length, 0, 'no forward layer is a kernel of its own');
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
  t.is(f.kernelCount, 1, 'sin(x) is a side output of the sum; the division is its second pass');
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
  t.true(kernelJson(launches(e)[0]!.kernel).length < 20000);
  t.true(e.kernels()[0]!.source.length < 40000);
});

test('kernelJson equals JSON.stringify for tree-shaped kernels', (t) => {
  const kernel: Kernel = {
    kind: 'elementwise',
    inputs: [{ dtype: 'float32', access: 'contiguous' }],
    outputs: [{ dtype: 'float32', expr: { op: 'unary', name: 'exp', x: { op: 'input', index: 0, dtype: 'float32' }, dtype: 'float32' } }],
  };
  t.is(kernelJson(kernel), JSON.stringify(kernel));
});

test('kernelJson tells NaN, ±Infinity and -0 literals apart (they are part of cache keys)', (t) => {
  const withLiteral = (value: number): Kernel => ({
    kind: 'elementwise',
    inputs: [{ dtype: 'float32', access: 'contiguous' }],
    outputs: [{ dtype: 'float32', expr: { op: 'binary', name: 'max', x: { op: 'input', index: 0, dtype: 'float32' }, y: { op: 'literal', value, dtype: 'float32' }, dtype: 'float32' } }],
  });
  const keys = [NaN, Infinity, -Infinity, 0, -0].map((v) => kernelJson(withLiteral(v)));
  t.is(new Set(keys).size, 5);
  // and eager ops with such literals run the right kernels
  const x = jax.numpy.array([1, -2], { dtype: 'float32' });
  t.deepEqual([...jax.numpy.maximum(x, -Infinity).dataSync()], [1, -2]);
  t.true(Number.isNaN(jax.numpy.maximum(x, NaN).dataSync()[0]!));
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

test('values computed from host arrays put on the device stay in one kernel per independent part; on the device they fuse into one', (t) => {
  // two optimizer-like updates: m' = 0.9 m + 0.1 g, p' = p - m' (the moments m1, m2 arrive in pinned_host)
  const update = (m1: Array, m2: Array, g1: Array, g2: Array, p1: Array, p2: Array) => {
    const [d1, d2] = [jax.devicePut(m1, 'device'), jax.devicePut(m2, 'device')];
    const n1 = jnp.add(jnp.multiply(d1, 0.9), jnp.multiply(g1, 0.1));
    const n2 = jnp.add(jnp.multiply(d2, 0.9), jnp.multiply(g2, 0.1));
    return [jnp.subtract(p1, n1), jnp.subtract(p2, n2), jax.devicePut(n1, 'pinned_host'), jax.devicePut(n2, 'pinned_host')];
  };
  const [g1, g2, p1, p2] = [rand([64, 32], 1), rand([64, 32], 2), rand([64, 32], 3), rand([64, 32], 4)];
  const [m1, m2] = [rand([64, 32], 5), rand([64, 32], 6)];
  const onHost = compiled(t, update as Fn, jax.devicePut(m1, 'pinned_host'), jax.devicePut(m2, 'pinned_host'), g1, g2, p1, p2);
  t.is(launches(onHost).length, 2, labels(onHost).join('; '));
  const onDevice = compiled(t, update as Fn, m1, m2, g1, g2, p1, p2);
  t.is(launches(onDevice).length, 1, labels(onDevice).join('; '));
});
