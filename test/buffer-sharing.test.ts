// Buffer sharing in compiled programs (compiler/plan.ts): a kernel's output
// may take over the arena space of an input that dies at that step only when
// every read of the input happens before the output element is written. A
// fused reduction writes its side outputs during its pass and reads its
// epilogue's inputs after it, so a side output must not take over an
// epilogue input (found by differential testing against NumPy: both cases
// below gave 0). Random programs of reductions, side outputs and
// elementwise ops at size 1 and at equal sizes check jit against eager.
import test from 'ava';
import fc from 'fast-check';
import * as jax from '../lib/index.js';

const jnp = jax.numpy;
type Array = jax.Array;

test('a fused reduction\'s side output does not overwrite what its epilogue reads (regressions)', (t) => {
  const f = (x: Array) => {
    const neg = jnp.negative(x);
    const a = jnp.sum(neg);
    const b = jnp.sum(x);
    return [jnp.dot(neg, neg), jnp.subtract(b, a)];
  };
  const x = jnp.array([1.5]);
  t.is((jax.jit(f)(x) as Array[])[1]!.item(), 3);
  t.is((f(x) as Array[])[1]!.item(), 3);
  const g = (y: Array) => {
    const s = jnp.sum(y, { axis: 0, keepdims: true });
    const neg = jnp.negative(s);
    return [jnp.subtract(jnp.sum(neg), s), jnp.matmul(neg, neg)];
  };
  t.deepEqual((jax.jit(g)(jnp.array([1, 2, 3], { dtype: 'float32' })) as Array[])[0]!.tolistSync(), [-12]);
});

/** A program over x: each op reads earlier values and adds one; the outputs are some of the values. */
type Op =
  | { kind: 'unary'; name: 'negative' | 'exp' | 'square'; of: number }
  | { kind: 'sum'; of: number; keepdims: boolean }
  | { kind: 'binary'; name: 'add' | 'subtract' | 'multiply'; of: [number, number] }
  | { kind: 'dot'; of: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('unary' as const), name: fc.constantFrom('negative' as const, 'exp' as const, 'square' as const), of: fc.nat(20) }),
  fc.record({ kind: fc.constant('sum' as const), of: fc.nat(20), keepdims: fc.boolean() }),
  fc.record({ kind: fc.constant('binary' as const), name: fc.constantFrom('add' as const, 'subtract' as const, 'multiply' as const), of: fc.tuple(fc.nat(20), fc.nat(20)) }),
  fc.record({ kind: fc.constant('dot' as const), of: fc.nat(20) }),
);

function run(ops: readonly Op[], outputs: readonly number[], x: Array): Array[] {
  const values: Array[] = [x];
  const pick = (i: number) => values[i % values.length]!;
  for (const op of ops) {
    switch (op.kind) {
      case 'unary': values.push(jnp[op.name](pick(op.of))); break;
      case 'sum': {
        const v = pick(op.of);
        values.push(jnp.sum(v, op.keepdims && v.ndim > 0 ? { axis: 0, keepdims: true } : {}));
        break;
      }
      case 'binary': {
        const [a, b] = [pick(op.of[0]), pick(op.of[1])];
        values.push(jnp[op.name](a, b)); // shapes [n], [1] and [] always broadcast together
        break;
      }
      case 'dot': {
        const v = pick(op.of);
        values.push(v.ndim === 1 ? jnp.dot(v, v) : jnp.multiply(v, v));
        break;
      }
    }
  }
  return outputs.map((i) => values[i % values.length]!);
}

test('random programs of reductions, side outputs and elementwise ops: jit equals eager at size 1 and at equal sizes', (t) => {
  fc.assert(
    fc.property(fc.array(opArbitrary, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(20), { minLength: 1, maxLength: 3 }), fc.constantFrom(1, 3), (ops, outputs, n) => {
      const x = jax.random.uniform(jax.random.key(n + ops.length), [n], { minval: 0.5, maxval: 1.5 });
      const eager = run(ops, outputs, x).map((v) => [v.shape.join(','), ...v.dataSync()]);
      const jitted = (jax.jit((y: Array) => run(ops, outputs, y))(x) as Array[]).map((v) => [v.shape.join(','), ...v.dataSync()]);
      t.deepEqual(jitted, eager);
    }),
    { numRuns: 80, seed: 20261126 },
  );
});

test('reductions whose side output and epilogue input could share a buffer: jit equals eager (size 1 and equal sizes)', (t) => {
  // u = e1(x) feeds a reduction and is an output (a side output); b, another reduction, is read by the first one's
  // epilogue; at size 1 (or keepdims of equal sizes) u and b fit the same arena space
  const unary = fc.constantFrom('negative' as const, 'exp' as const, 'square' as const);
  const binary = fc.constantFrom('add' as const, 'subtract' as const, 'multiply' as const);
  fc.assert(
    fc.property(
      fc.record({
        e1: unary, e2: fc.constantFrom('identity' as const, 'negative' as const, 'exp' as const, 'square' as const), keepA: fc.boolean(), keepB: fc.boolean(),
        combine: binary, swap: fc.boolean(), aFirst: fc.boolean(), extra: fc.constantFrom('u', 'dot', 'e2u'), n: fc.constantFrom(1, 1, 3),
      }),
      (c) => {
        const e2 = (v: Array) => (c.e2 === 'identity' ? v : jnp[c.e2](v));
        const f = (x: Array): Array[] => {
          const u = jnp[c.e1](x);
          const sumOf = (v: Array, keep: boolean) => jnp.sum(v, keep ? { axis: 0, keepdims: true } : {});
          let a: Array;
          let b: Array;
          if (c.aFirst) {
            a = sumOf(u, c.keepA);
            b = sumOf(e2(x), c.keepB);
          } else {
            b = sumOf(e2(x), c.keepB);
            a = sumOf(u, c.keepA);
          }
          const combined = c.swap ? jnp[c.combine](b, a) : jnp[c.combine](a, b);
          const extra = c.extra === 'u' ? u : c.extra === 'dot' ? jnp.dot(u, u) : e2(u);
          return [combined, extra];
        };
        const x = jax.random.uniform(jax.random.key(c.n), [c.n], { minval: 0.5, maxval: 1.5 });
        const eager = f(x).map((v) => [v.shape.join(','), ...v.dataSync()]);
        const jitted = (jax.jit(f)(x) as Array[]).map((v) => [v.shape.join(','), ...v.dataSync()]);
        t.deepEqual(jitted, eager, JSON.stringify(c));
      },
    ),
    { numRuns: 60, seed: 7 },
  );
});

test('every output of a several-operand sort, of its permute stage and of top_k is a write: jit equals eager (regression)', (t) => {
  // The planner once counted only a launch's first buffer as written, so a sort's second output could share memory
  // with a buffer still read after the sort (w below), and the sort overwrote it.
  const jnp = jax.numpy;
  const lax = jax.lax;
  const program = (k: jax.Array, v: jax.Array, w0: jax.Array) => {
    const w = jnp.sin(w0);
    const [sk, sv] = lax.sort([k, v], { numKeys: 1 });
    const [tv, ti] = lax.topK(k, 3);
    const u = jnp.cos(w);
    // each second output read alone by its own kernel (a scan), so only the write makes it wait for the sort
    return [jnp.add(sk!, u), jnp.cumsum(jnp.multiply(sv!, 2)), jnp.multiply(tv!, 2), jnp.cumsum(ti!)];
  };
  for (const n of [8, 40]) {
    const k = jnp.array(Array.from({ length: n }, (_, i) => (i * 7) % n), { dtype: 'float32' });
    const v = jnp.array(Array.from({ length: n }, (_, i) => i / 4), { dtype: 'float32' });
    const w0 = jnp.array(Array.from({ length: n }, (_, i) => i / 3), { dtype: 'float32' });
    const eager = program(k, v, w0).map((a) => Array.from(a.dataSync()));
    const jitted = (jax.jit(program)(k, v, w0) as jax.Array[]).map((a) => Array.from(a.dataSync()));
    t.deepEqual(jitted, eager, `n = ${n}`);
  }
});

test('an elementwise kernel whose output reuses an input\'s buffer in place reads it first (regression: __restrict__ on aliased pointers)', (t) => {
  // The gradients of the 2x2 and 3x3 closed-form determinants in one program fuse into one elementwise kernel with
  // 22 outputs, some planned over its own inputs; its CUDA source declared every pointer __restrict__, so the
  // compiler (the emulated GPU's at -O1) loaded an input after the store that overwrote it: wrong gradients.
  const jnp = jax.numpy;
  const lax = jax.lax;
  const entry = (a: jax.Array, i: number, j: number) => lax.squeeze(lax.sliceInDim(lax.sliceInDim(a, i, i + 1, 1, 1), j, j + 1, 1, 2), [1, 2]);
  const product = (...xs: jax.Array[]) => xs.reduce((p, q) => jnp.multiply(p, q));
  const det2 = (a: jax.Array) => jnp.subtract(jnp.multiply(entry(a, 0, 0), entry(a, 1, 1)), jnp.multiply(entry(a, 0, 1), entry(a, 1, 0)));
  const e = (a: jax.Array, i: number, j: number) => entry(a, i, j);
  const det3 = (a: jax.Array) => jnp.subtract(jnp.subtract(jnp.subtract(jnp.add(jnp.add(product(e(a, 0, 0), e(a, 1, 1), e(a, 2, 2)), product(e(a, 0, 1), e(a, 1, 2), e(a, 2, 0))),
    product(e(a, 0, 2), e(a, 1, 0), e(a, 2, 1))), product(e(a, 0, 2), e(a, 1, 1), e(a, 2, 0))), product(e(a, 0, 0), e(a, 1, 2), e(a, 2, 1))), product(e(a, 0, 1), e(a, 1, 0), e(a, 2, 2)));
  const values = (shape: number[], seed: number) => jnp.array(Array.from({ length: shape.reduce((p, q) => p * q, 1) }, (_, i) => Math.sin(i * 1.7 + seed * 3.1)), { dtype: 'float32' }).reshape(shape);
  const grad = (det: (a: jax.Array) => jax.Array) => (a: jax.Array, c: jax.Array) => jax.grad((m: jax.Array) => jnp.sum(jnp.multiply(det(m), c)))(a) as jax.Array;
  const program = (a: jax.Array, ca: jax.Array, b: jax.Array, cb: jax.Array) => [grad(det2)(a, ca), grad(det3)(b, cb)];
  const args = [values([2, 2, 2], 1), values([2], 3), values([2, 3, 3], 2), values([2], 4)] as const;
  const eager = program(...args).map((a) => Array.from(a.dataSync()));
  const jitted = (jax.jit(program)(...args) as jax.Array[]).map((a) => Array.from(a.dataSync()));
  t.deepEqual(jitted, eager);
});
