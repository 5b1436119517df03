// Array lifetimes: dispose, `using`, tidy, the live-array count, use after
// dispose, and the FinalizationRegistry backstop.
import test from 'ava';
import * as jax from '../lib/index.js';
import { assertThrowsMentioning } from './helpers/oracle.js';

const jnp = jax.numpy;

test.serial('dispose releases an array and later use throws a clear error', (t) => {
  const before = jax.liveArrayCount();
  const x = jnp.array([1, 2, 3]);
  t.is(jax.liveArrayCount(), before + 1);
  x.dispose();
  t.is(jax.liveArrayCount(), before);
  t.true(x.isDisposed);
  assertThrowsMentioning(t, () => x.dataSync(), 'disposed', 'float32[3]');
  assertThrowsMentioning(t, () => jnp.add(x, 1), 'disposed');
  x.dispose(); // a second dispose is harmless
  t.is(jax.liveArrayCount(), before);
});

test.serial('an array sharing a buffer (reshape) keeps it alive after the source is disposed', (t) => {
  const x = jnp.array([1, 2, 3, 4], { dtype: 'float32' });
  const y = x.reshape([2, 2]);
  x.dispose();
  t.deepEqual(Array.from(y.dataSync()), [1, 2, 3, 4]);
  y.dispose();
});

test.serial('using disposes at the end of the block', (t) => {
  const before = jax.liveArrayCount();
  let escaped: jax.Array | undefined;
  {
    using x = jnp.ones([3]);
    escaped = x;
    t.is(jax.liveArrayCount(), before + 1);
  }
  t.is(jax.liveArrayCount(), before);
  t.true(escaped.isDisposed);
});

test.serial('tidy disposes intermediates and keeps what fn returns (pytrees too)', (t) => {
  const before = jax.liveArrayCount();
  const result = jax.tidy(() => {
    const a = jnp.ones([4]);
    const b = jnp.add(a, 1);
    const c = jnp.multiply(b, 2);
    return { c, list: [b] };
  });
  t.is(jax.liveArrayCount(), before + 2);
  t.deepEqual(Array.from(result.c.dataSync()), [4, 4, 4, 4]);
  t.false(result.list[0]!.isDisposed);
  result.c.dispose();
  result.list[0]!.dispose();
  t.is(jax.liveArrayCount(), before);
});

test.serial('nested tidy moves kept arrays to the outer scope', (t) => {
  const before = jax.liveArrayCount();
  const outer = jax.tidy(() => {
    const inner = jax.tidy(() => jnp.add(jnp.ones([2]), 1));
    t.false(inner.isDisposed);
    return jnp.multiply(inner, 3);
  });
  t.is(jax.liveArrayCount(), before + 1);
  t.deepEqual(Array.from(outer.dataSync()), [6, 6]);
  outer.dispose();
});

test.serial('tidy disposes everything when fn throws, and rethrows', (t) => {
  const before = jax.liveArrayCount();
  t.throws(() =>
    jax.tidy(() => {
      jnp.ones([2]);
      throw new Error('boom');
    }),
  { message: 'boom' });
  t.is(jax.liveArrayCount(), before);
});

test.serial('tidy rejects async functions', (t) => {
  assertThrowsMentioning(t, () => jax.tidy((async () => jnp.ones([1])) as never), 'jaxon.tidy', 'Promise');
});

test.serial('keep protects an array from the enclosing tidy', (t) => {
  let kept: jax.Array | undefined;
  jax.tidy(() => {
    kept = jax.keep(jnp.ones([2]));
    return null;
  });
  t.false(kept!.isDisposed);
  kept!.dispose();
});

test.serial('forgotten arrays are collected by the FinalizationRegistry backstop', async (t) => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    t.log('skipped: run node with --expose-gc to check the FinalizationRegistry backstop');
    t.pass();
    return;
  }
  const before = jax.liveArrayCount();
  (() => {
    for (let i = 0; i < 10; i++) jnp.ones([8]);
  })();
  for (let i = 0; i < 20 && jax.liveArrayCount() > before; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  t.is(jax.liveArrayCount(), before);
});
