// jax.debug.print, jax.debug.callback and jax.pureCallback: the printed text
// of the examples in JAX's "Introduction to debugging" / "Compiled prints and
// breakpoints" pages and of JAX's debugging_primitives_test.py, exactly as
// current JAX prints them (a 0-d float32 formats as the Python float it
// widens to: 0.9092974066734314); eagerly, under jit (every call, in program
// order, never eliminated), vmap (once per batch element), grad / jvp / vjp
// (the forward pass only), custom derivatives, scan / fori / while / cond
// bodies and checkpoint; Python's str.format (specs, conversions, fields,
// errors); and pureCallback's values, JAX's result checks and errors, its
// vmap methods and its lack of derivatives. Runs on the default platform of
// the run (the CPU, or the emulated GPU), and one test on every device.
import test, { type ExecutionContext } from 'ava';
import type { Array } from '../lib/core/array.js';
import * as jax from '../lib/index.js';

const { numpy: jnp, lax } = jax;
/* eslint-disable @typescript-eslint/no-explicit-any */
type Fn = (...args: any[]) => any;

const f32 = (data: number | number[]): Array => jnp.array(data, { dtype: 'float32' });
const i32 = (data: number | number[]): Array => jnp.array(data, { dtype: 'int32' });
/** Python's jnp.arange(3.) */
const arangeF = (n: number): Array => jnp.arange(n).astype('float32');

/** The lines jax.debug.print writes while fn runs (tests are synchronous, so no other test prints meanwhile). */
function printed(fn: () => unknown): string[] {
  const lines: string[] = [];
  const previous = jax.debug.setPrintSink((line) => lines.push(line));
  try {
    fn();
  } finally {
    jax.debug.setPrintSink(previous);
  }
  return lines;
}

/** Python's repr of a float32 value as a double (what `{}` shows for a 0-d float32 Array). */
const asDouble = (x: Array): string => {
  const v = x.item() as number;
  return Number.isInteger(v) ? `${v}.0` : String(v);
};

// ---- the documented examples ----

test('Compiled prints: jit prints 🤯 2.0 🤯 and 🤯 sin(2) 🤯 when the program runs', (t) => {
  const f = jax.jit((x: Array) => {
    jax.debug.print('🤯 {x} 🤯', { x });
    const y = jnp.sin(x);
    jax.debug.print('🤯 {y} 🤯', { y });
    return y;
  });
  let y!: Array;
  const lines = printed(() => {
    y = f(2.0);
  });
  // the page shows 0.9092974662780762 (an older XLA's sin); JAX prints the float32 result as a Python float
  t.deepEqual(lines, ['🤯 2.0 🤯', `🤯 ${asDouble(y)} 🤯`]);
  if (jax.defaultBackend() === 'cpu') t.is(lines[1], '🤯 0.9092974066734314 🤯');
  // every call prints, with that call's values
  t.deepEqual(printed(() => f(3.0)), ['🤯 3.0 🤯', `🤯 ${asDouble(jnp.sin(f32(3)))} 🤯`]);
});

test('Introduction to debugging: vmap prints every x, then every y; lax.map interleaves them', (t) => {
  const f = (x: Array) => {
    jax.debug.print('jax.debug.print(x) -> {}', x);
    const y = jnp.sin(x);
    jax.debug.print('jax.debug.print(y) -> {}', y);
    return y;
  };
  const xs = arangeF(3);
  const ys = [0, 1, 2].map((i) => asDouble(jnp.sin(f32(i))));
  t.deepEqual(printed(() => jax.vmap(f)(xs)), [
    'jax.debug.print(x) -> 0.0', 'jax.debug.print(x) -> 1.0', 'jax.debug.print(x) -> 2.0',
    ...ys.map((y) => `jax.debug.print(y) -> ${y}`),
  ]);
  if (jax.defaultBackend() === 'cpu') t.deepEqual(ys, ['0.0', '0.8414709568023682', '0.9092974066734314']);
  t.deepEqual(printed(() => lax.map(f, xs)), [0, 1, 2].flatMap((i) => [`jax.debug.print(x) -> ${i}.0`, `jax.debug.print(y) -> ${ys[i]}`]));
  // jit of vmap and vmap of jit print the same
  t.deepEqual(printed(() => jax.jit(jax.vmap(f))(xs)), printed(() => jax.vmap(f)(xs)));
  t.deepEqual(printed(() => jax.vmap(jax.jit(f))(xs)), printed(() => jax.vmap(f)(xs)));
});

test('Introduction to debugging: grad prints only the forward pass, with or without jit', (t) => {
  const f = (x: Array) => {
    jax.debug.print('jax.debug.print(x) -> {}', x);
    return jnp.square(x);
  };
  let g!: Array;
  t.deepEqual(printed(() => {
    g = jax.grad(f)(1.0) as Array;
  }), ['jax.debug.print(x) -> 1.0']);
  t.is(g.item(), 2);
  t.deepEqual(printed(() => jax.jit(jax.grad(f))(1.0)), ['jax.debug.print(x) -> 1.0']);
  t.deepEqual(printed(() => jax.grad(jax.jit(f))(1.0)), ['jax.debug.print(x) -> 1.0']);
  t.deepEqual(printed(() => jax.valueAndGrad(f)(3.0)), ['jax.debug.print(x) -> 3.0']);
});

test('Introduction to debugging: ordered prints of f(1, 2) under jit (and every print keeps program order)', (t) => {
  const f = jax.jit((x: Array, y: Array) => {
    jax.debug.print({ ordered: true })('jax.debug.print(x) -> {}', x);
    jax.debug.print('jax.debug.print(y) -> {}', y, );
    return jnp.add(x, y);
  });
  // Python's 1 and 2 are ints (int32 arrays)
  t.deepEqual(printed(() => f(i32(1), i32(2))), ['jax.debug.print(x) -> 1', 'jax.debug.print(y) -> 2']);
});

test('Compiled prints: printing on the backward pass through a customVjp (x_grad: 2.0)', (t) => {
  const printGrad = jax.customVjp((x: Array) => x);
  printGrad.defvjp((x: Array) => [x, null], (_res: unknown, xGrad: Array) => {
    jax.debug.print('x_grad: {}', xGrad);
    return [xGrad];
  });
  const f = (x: Array) => jnp.multiply(printGrad(x), 2);
  t.deepEqual(printed(() => jax.grad(f)(1.0)), ['x_grad: 2.0']);
});

// ---- JAX's debugging_primitives_test.py ----

test('debugging_primitives_test: eager, named, multiple and staged prints', (t) => {
  t.deepEqual(printed(() => jax.debug.print('x: {}', i32(2))), ['x: 2']);
  t.deepEqual(printed(() => jax.debug.print('x: {x}', { x: i32(2) })), ['x: 2']);
  t.deepEqual(printed(() => {
    const x = i32(2);
    jax.debug.print('x: {x}', { x });
    jax.debug.print('y: {y}', { y: jnp.add(x, 1) });
  }), ['x: 2', 'y: 3']);
  // a jitted function with no outputs still prints (the print is its effect), and twice jitted
  const staged = (x: Array) => {
    jax.debug.print('x: {x}', { x });
  };
  t.deepEqual(printed(() => jax.jit(staged)(i32(2))), ['x: 2']);
  t.deepEqual(printed(() => jax.jit(jax.jit(staged))(i32(2))), ['x: 2']);
  t.deepEqual(printed(() => jax.jit((x: Array) => jax.debug.print({ ordered: true })('x: {x}', { x }))(i32(2))), ['x: 2']);
  // a pytree argument prints as Python prints a dict of jax.Arrays
  t.deepEqual(printed(() => jax.jit((x: Array) => jax.debug.print('x: {}', { foo: x }))(i32(2))), ["x: {'foo': Array(2, dtype=int32)}"]);
});

test('debugging_primitives_test: donated arguments still print', (t) => {
  const f = jax.jit((x: Array, y: Array) => {
    jax.debug.print('x: {x}', { x });
    return jnp.add(x, y);
  }, { donateArgnums: 0 });
  t.deepEqual(printed(() => f(f32(2), f32(3))), ['x: 2.0']);
});

test('debugging_primitives_test: vmap unrolls the print over the batch, nested vmaps inner axis first', (t) => {
  t.deepEqual(printed(() => jax.vmap((x: Array) => jax.debug.print('hello: {}', x))(jnp.arange(2))), ['hello: 0', 'hello: 1']);
  // an unbatched operand is passed whole; a batched one is indexed along its axis
  t.deepEqual(printed(() => jax.vmap((x: Array, y: Array) => jax.debug.print('hello: {} {}', x, y), [0, 1])(jnp.arange(2), jnp.arange(2).reshape([1, 2]))), ['hello: 0 [0]', 'hello: 1 [1]']);
  const x = jnp.arange(6).reshape([3, 2]);
  const f = (v: Array) => jax.debug.print('hello: {}', v);
  t.deepEqual(printed(() => jax.vmap(jax.vmap(f))(x)), ['hello: 0', 'hello: 2', 'hello: 4', 'hello: 1', 'hello: 3', 'hello: 5']);
  t.deepEqual(printed(() => jax.vmap(jax.vmap(f, 0), 1)(x)), ['hello: 0', 'hello: 1', 'hello: 2', 'hello: 3', 'hello: 4', 'hello: 5']);
  // an unbatched print under vmap runs once
  t.deepEqual(printed(() => jax.vmap((v: Array) => {
    jax.debug.print('once {}', i32(7));
    return v;
  })(x)), ['once 7']);
});

test('debugging_primitives_test: jvp and vjp print the primal once; transposition prints nothing', (t) => {
  const f = (x: Array) => {
    jax.debug.print('x: {}', x);
    return x;
  };
  t.deepEqual(printed(() => jax.jvp(f, [1.0], [1.0])), ['x: 1.0']);
  let pullback!: (ct: unknown) => unknown[];
  t.deepEqual(printed(() => {
    [, pullback] = jax.vjp(f, 1.0);
  }), ['x: 1.0']);
  t.deepEqual(printed(() => pullback(1.0)), []);
  // linearize prints the primal when it linearizes, and nothing when the linear map runs
  let fJvp!: (...t: unknown[]) => unknown;
  t.deepEqual(printed(() => {
    [, fJvp] = jax.linearize(f, 1.0);
  }), ['x: 1.0']);
  t.deepEqual(printed(() => fJvp(1.0)), []);
});

test('debugging_primitives_test: printing a tangent in a customJvp rule; x and x_grad with a customVjp', (t) => {
  const printTangent = jax.customJvp((x: Array) => x);
  printTangent.defjvp(([x]: Array[], [tangent]: Array[]) => {
    jax.debug.print('x_tangent: {}', tangent);
    return [x, tangent];
  });
  const f = (x: Array) => printTangent(jnp.sin(x));
  const x = f32(1);
  const expected = asDouble(jnp.cos(x));
  t.deepEqual(printed(() => jax.jvp(f, [x], [x])), [`x_tangent: ${expected}`]);

  const printGrad = jax.customVjp((v: Array) => v);
  printGrad.defvjp((v: Array) => [v, null], (_res: unknown, g: Array) => {
    jax.debug.print('x_grad: {}', g);
    return [g];
  });
  const h = (v: Array) => {
    jax.debug.print('x: {}', v);
    return jnp.sin(printGrad(v));
  };
  t.deepEqual(printed(() => jax.grad(h)(x)), ['x: 1.0', `x_grad: ${expected}`]);
});

test('debugging_primitives_test: prints inside staged customJvp and customVjp functions and their rules', (t) => {
  const f = jax.jit((x: Array) => {
    const g = jax.customJvp((v: Array) => {
      jax.debug.print('hello: {x}', { x: v });
      return v;
    });
    g.defjvp(([v]: Array[], [dv]: Array[]) => {
      jax.debug.print('goodbye: {x} {t}', { x: v, t: dv });
      return [v, dv];
    });
    return g(x);
  });
  t.deepEqual(printed(() => f(2.0)), ['hello: 2.0']);
  t.deepEqual(printed(() => jax.jvp(f, [2.0], [3.0])), ['goodbye: 2.0 3.0']);

  const h = jax.jit((x: Array) => {
    const g = jax.customVjp((v: Array) => {
      jax.debug.print('hello: {x}', { x: v });
      return v;
    });
    g.defvjp((v: Array) => {
      jax.debug.print('hello fwd: {x}', { x: v });
      return [v, v];
    }, (v: Array, ct: Array) => {
      jax.debug.print('hello bwd: {x} {g}', { x: v, g: ct });
      return [ct];
    });
    return g(x);
  });
  t.deepEqual(printed(() => h(2.0)), ['hello: 2.0']);
  let pullback!: (ct: unknown) => unknown[];
  t.deepEqual(printed(() => {
    [, pullback] = jax.vjp(h, 2.0);
  }), ['hello fwd: 2.0']);
  t.deepEqual(printed(() => pullback(3.0)), ['hello bwd: 2.0 3.0']);
});

test('debugging_primitives_test: prints inside scan, fori_loop, while_loop and cond, each iteration, eager and jit', (t) => {
  const scanned = (xs: Array) => lax.scan((carry: Array, x: Array) => {
    jax.debug.print('carry: {carry}, x: {x}', { carry, x });
    return [jnp.add(carry, 1), jnp.add(x, 1)];
  }, i32(2), xs);
  for (const f of [scanned, jax.jit(scanned)]) t.deepEqual(printed(() => f(jnp.arange(2))), ['carry: 2, x: 0', 'carry: 3, x: 1']);

  const fori = (x: Array) => lax.foriLoop(0, 5, (i: Array, v: Array) => {
    jax.debug.print('i: {i}', { i });
    jax.debug.print('x: {x}', { x: v });
    return jnp.add(v, 1);
  }, x);
  const expected = [0, 1, 2, 3, 4].flatMap((i) => [`i: ${i}`, `x: ${i + 2}`]);
  for (const f of [fori, jax.jit(fori)]) t.deepEqual(printed(() => f(i32(2))), expected);

  const whileBody = (x: Array) => lax.whileLoop((v: Array) => jnp.less(v, 5), (v: Array) => {
    jax.debug.print('x: {x}', { x: v });
    return jnp.add(v, 1);
  }, x);
  const whileCond = (x: Array) => lax.whileLoop((v: Array) => {
    jax.debug.print('x: {x}', { x: v });
    return jnp.less(v, 5);
  }, (v: Array) => jnp.add(v, 1), x);
  for (const f of [whileBody, jax.jit(whileBody)]) t.deepEqual(printed(() => f(i32(2))), ['x: 2', 'x: 3', 'x: 4']);
  for (const f of [whileCond, jax.jit(whileCond)]) t.deepEqual(printed(() => f(i32(2))), ['x: 2', 'x: 3', 'x: 4', 'x: 5']);

  const branch = (b: Array, x: Array) => lax.cond(b, (v: Array) => {
    jax.debug.print('true: {}', v);
    return v;
  }, (v: Array) => {
    jax.debug.print('false: {}', v);
    return v;
  }, x);
  for (const f of [branch, jax.jit(branch)]) {
    t.deepEqual(printed(() => f(jnp.array(true), i32(1))), ['true: 1']);
    t.deepEqual(printed(() => f(jnp.array(false), i32(1))), ['false: 1']);
  }
});

test('grad of a scan whose body prints: each iteration prints once, in the forward pass', (t) => {
  const loss = (x: Array) => jnp.sum(lax.scan((c: Array, xi: Array) => {
    jax.debug.print('c={} xi={}', c, xi);
    return [jnp.add(jnp.multiply(c, xi), 1), jnp.sin(c)];
  }, x, arangeF(3))[1] as Array);
  const expected = ['c=0.5 xi=0.0', 'c=1.0 xi=1.0', 'c=2.0 xi=2.0'];
  for (const g of [jax.grad(loss), jax.jit(jax.grad(loss))]) {
    let value!: Array;
    t.deepEqual(printed(() => {
      value = g(0.5) as Array;
    }), expected);
    t.true(Math.abs((value.item() as number) - Math.cos(0.5)) < 1e-6);
  }
  // a print that reads only loop invariants is not hoisted out of the loop
  const invariant = (x: Array) => jnp.sum(lax.scan((c: Array) => {
    jax.debug.print('w={}', x);
    return [jnp.multiply(c, x), c];
  }, x, null, { length: 3 })[1] as Array);
  t.deepEqual(printed(() => jax.grad(invariant)(2.0)), ['w=2.0', 'w=2.0', 'w=2.0']);
});

test('checkpoint: a print in a rematerialized function prints in the forward pass', (t) => {
  const f = jax.checkpoint((x: Array) => {
    const y = jnp.add(x, 1);
    const z = jnp.multiply(y, 2);
    jax.debug.print('y: {}, z: {}', y, z);
    return jnp.exp(z);
  });
  t.deepEqual(printed(() => jax.grad(f)(2.0)), ['y: 3.0, z: 6.0']);
});

// ---- effects under jit: never eliminated, always in program order ----

test('jit: a print whose value nothing else uses is not eliminated, and the program holds it', (t) => {
  const f = (x: Array) => {
    const y = jnp.sin(x);
    jax.debug.print('y {}', y);
    return x;
  };
  const jitted = jax.jit(f);
  t.deepEqual(printed(() => jitted(2.0)), [`y ${asDouble(jnp.sin(f32(2)))}`]);
  t.regex(jax.makeJaxpr(f)(f32(2)).toString(), /\n {4}debug_callback\[callback=<function print> effect=Debug\] \w+\n/);
  t.regex(jitted.lower(f32(2)).compile().asText(), /debug_callback/);
  // a scan whose outputs are unused runs anyway when its body prints
  const g = jax.jit((x: Array) => {
    lax.scan((c: Array) => {
      jax.debug.print('loop {}', c);
      return [jnp.add(c, 1), null];
    }, x, null, { length: 2 });
    return x;
  });
  t.deepEqual(printed(() => g(i32(5))), ['loop 5', 'loop 6']);
  // two equal prints are two prints (never merged)
  t.deepEqual(printed(() => jax.jit((x: Array) => {
    jax.debug.print('same {}', x);
    jax.debug.print('same {}', x);
  })(i32(1))), ['same 1', 'same 1']);
});

test('jit: prints keep program order, whatever the data dependences, around loops and branches', (t) => {
  const f = jax.jit((x: Array, y: Array) => {
    const big = jnp.sum(jnp.exp(jnp.multiply(y, jnp.ones([64]))));
    jax.debug.print('a {}', big);
    jax.debug.print('b {}', x);
    lax.scan((c: Array) => {
      jax.debug.print('loop {}', c);
      return [jnp.add(c, 1), null];
    }, x, null, { length: 2 });
    jax.debug.print('c {}', y);
    lax.cond(jnp.greater(x, 0), (v: Array) => {
      jax.debug.print('d {}', v);
      return v;
    }, (v: Array) => v, x);
    jax.debug.print('e {}', jnp.multiply(x, 10));
    return big;
  });
  const big = asDouble(jnp.multiply(jnp.exp(f32(0)), 64));
  t.deepEqual(printed(() => f(i32(1), f32(0))), [`a ${big}`, 'b 1', 'loop 1', 'loop 2', 'c 0.0', 'd 1', 'e 10']);
  // fusion merges sin and cos into one kernel; the print of sin's value must not move after the print of y
  const g = jax.jit((x: Array, y: Array) => {
    jax.debug.print('p1 {}', jnp.sin(x));
    jax.debug.print('p2 {}', y);
    return jnp.cos(x);
  });
  t.deepEqual(printed(() => g(f32([0, 0]), f32([3, 4]))), ['p1 [0. 0.]', 'p2 [3. 4.]']);
});

test('prints from every device: each backend runs the host step after its inputs are computed', (t) => {
  const f = jax.jit((x: Array) => {
    const y = jnp.multiply(jnp.cumsum(x), 2);
    jax.debug.print('y={}', y);
    const z = jnp.add(y, 1);
    jax.debug.print('z={} sum={}', z, jnp.sum(z));
    return z;
  });
  const platforms: ('cpu' | 'cuda')[] = ['cpu', ...(jax.defaultBackend() === 'cuda' ? ['cuda' as const] : [])];
  for (const platform of platforms) {
    const x = jax.devicePut(arangeF(4), jax.devices(platform)[0]!);
    let z!: Array;
    t.deepEqual(printed(() => {
      z = f(x);
    }), ['y=[ 0.  2.  6. 12.]', 'z=[ 1.  3.  7. 13.] sum=24.0'], platform);
    t.is(z.device.platform, platform);
    t.deepEqual(z.tolistSync(), [1, 3, 7, 13]);
  }
});

test('a print of a value offloaded to pinned_host memory reads it back', (t) => {
  const device = jax.devices()[0]!;
  const onHost = new jax.sharding.SingleDeviceSharding(device, { memoryKind: 'pinned_host' });
  const onDevice = new jax.sharding.SingleDeviceSharding(device, { memoryKind: 'device' });
  const f = jax.jit((x: Array) => {
    const host = jax.devicePut(jnp.multiply(x, 3), onHost) as Array;
    jax.debug.print('host {}', host);
    return jnp.add(jax.devicePut(host, onDevice) as Array, 1);
  });
  let out!: Array;
  t.deepEqual(printed(() => {
    out = f(arangeF(3));
  }), ['host [0. 3. 6.]']);
  t.deepEqual(out.tolistSync(), [1, 4, 7]);
});

// ---- Python's str.format ----

test("format: Python's str.format of Arrays and JS values", (t) => {
  const line = (fmt: string, ...args: unknown[]) => printed(() => jax.debug.print(fmt, ...args))[0];
  const x = f32(1234.5678);
  t.is(line('{0:+.2e}|{0:10.4g}|{0:%}|{0:.3f}|{0:,.1f}', x), '+1.23e+03|      1235|123456.774902%|1234.568|1,234.6');
  t.is(line('{0:05d}|{0:,}|{0:#x}|{0:#b}|{0:>+6}|{0:<4}|{0:^7}|{0:_}', i32(4660)), '04660|4,660|0x1234|0b1001000110100| +4660|4660| 4660  |4_660');
  t.is(line('{0!s} {0!r} {0}', f32(0.1)), '0.1 Array(0.1, dtype=float32) 0.10000000149011612');
  t.is(line('{} {} {}', jnp.array(true), jnp.array([true, false]), jnp.array(1.5, { dtype: 'float16' })), 'True [ True False] 1.5');
  t.is(line('{} {}', jnp.array(0.1, { dtype: 'bfloat16' }), f32(1e20)), '0.100098 1.0000000200408773e+20');
  t.is(line('{}', jnp.arange(12).reshape([3, 4])), '[[ 0  1  2  3]\n [ 4  5  6  7]\n [ 8  9 10 11]]');
  t.is(line('{0[1]} {x[0]} {y.shape} {y.dtype} {y.ndim}', i32([5, 6]), { x: [7, 8], y: jnp.zeros([2, 3]) }), '6 7 (2, 3) float32 2');
  t.is(line('{:{w}.{p}f}|{{literal}}', f32(3.14159), { w: 8, p: 2 }), '    3.14|{literal}');
  // JS values: numbers as Python ints or floats, strings, lists and dicts of reprs, null as None
  t.is(line('{} {} {} {} {!r} {}', 3, 2.5, 'ab', [1, 'a', null], 'ab', { k: i32(1) }), "3 2.5 ab [1, 'a', None] 'ab' {'k': Array(1, dtype=int32)}");
  t.is(line('{:6.2f}|{:x}|{:>5}', 2.5, 255, true), '  2.50|ff|    1');
  t.is(line('{:e} {:g} {:g} {}', 0, 1e-5, 1.5e16, -0.0), '0.000000e+00 1e-05 1.5e+16 -0.0');
  t.is(line('{} {} {:.1f}', NaN, -Infinity, Infinity), 'nan -inf inf');
  t.is(line('{:.0f} {:.0f} {:.2f}', 0.5, 2.5, 0.125), '0 2 0.12');
  // no fields: with skipFormatCheck the arguments follow the text, space-separated (JAX's has_placeholders=False)
  t.deepEqual(printed(() => jax.debug.print({ skipFormatCheck: true })('values', f32(1.5), 3)), ['values 1.5 3']);
});

test('format errors: JAX checks the fields against the arguments when print is called', (t) => {
  t.throws(() => jax.debug.print('{}', 1, 2), { instanceOf: jax.ValueError, message: 'Unused positional arguments to `jax.debug.print`: [2]' });
  t.throws(() => jax.debug.print('{x}', { x: 1, y: 2 }), {
    instanceOf: jax.ValueError,
    message: "Unused keyword arguments to `jax.debug.print`: ['y']. You may be passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass in a regular string.",
  });
  t.throws(() => jax.debug.print('{x}', 1), { instanceOf: jax.KeyError, message: "'x'" });
  t.throws(() => jax.debug.print('{} {}', 1), { instanceOf: jax.IndexError, message: 'tuple index out of range' });
  t.throws(() => jax.debug.print('{!z}', 1), { instanceOf: jax.ValueError, message: 'Unknown conversion specifier z' });
  t.throws(() => jax.debug.print('{', 1), { instanceOf: jax.ValueError, message: "Single '{' encountered in format string" });
  t.throws(() => jax.debug.print('}', 1), { instanceOf: jax.ValueError, message: "Single '}' encountered in format string" });
  t.throws(() => jax.debug.print('{}{1}', 1, 2), { instanceOf: jax.ValueError, message: 'cannot switch from manual field specification to automatic field numbering' });
  t.throws(() => jax.debug.print(3 as never), { instanceOf: TypeError, message: /fmt must be a string/ });
  // under jit the check runs at trace time, on the tracers
  t.throws(() => jax.jit((x: Array) => jax.debug.print('{}', x, x))(f32(1)), { message: /^Unused positional arguments to `jax\.debug\.print`: \[Traced<f32\[\]>with<DynamicJaxprTrace>\]$/ });
  // a spec a value cannot take fails when the value is formatted, as Python's format does
  t.throws(() => jax.debug.print('{:.2f}', f32([1, 2])), { instanceOf: TypeError, message: 'unsupported format string passed to numpy.ndarray.__format__' });
  t.throws(() => jax.debug.print('{:d}', 2.5), { instanceOf: jax.ValueError, message: "Unknown format code 'd' for object of type 'float'" });
});

test('debug.callback: the function gets Arrays on the CPU device and the static values; setPrintSink(null) restores console.log', (t) => {
  const seen: unknown[][] = [];
  const f = jax.jit((x: Array) => {
    jax.debug.callback((a: Array, label: string, n: number) => {
      seen.push([a.device.platform, a.committed, a.dtype, a.tolistSync(), label, n]);
    }, jnp.multiply(x, 2), 'label', 7);
    return x;
  });
  f(i32([1, 2]));
  f(i32([3, 4]));
  t.deepEqual(seen, [['cpu', true, 'int32', [2, 4], 'label', 7], ['cpu', true, 'int32', [6, 8], 'label', 7]]);
  t.throws(() => jax.debug.callback(3 as never), { instanceOf: TypeError, message: "first argument to jax.debug.callback must be callable, but got an object of type <class 'int'>" });
  // the sink: what replaced it is handed back, and null puts console.log back
  const mine = (_line: string) => {};
  const previous = jax.debug.setPrintSink(mine);
  t.is(jax.debug.setPrintSink(null), mine);
  t.not(jax.debug.setPrintSink(previous), mine);
});

// ---- jax.pureCallback ----

const sds = (shape: number[], dtype: jax.DType = 'float32') => new jax.ShapeDtypeStruct(shape, dtype);

test('pureCallback: values eagerly and under jit, pytrees of results, JS results converted to the declared types', (t) => {
  const calls: string[] = [];
  const callback = (x: Array) => {
    calls.push(x.device.platform);
    return jnp.multiply(x, 10);
  };
  const f = (x: Array) => jax.pureCallback(callback, sds([3]), x) as Array;
  t.deepEqual(f(arangeF(3)).tolistSync(), [0, 10, 20]);
  t.deepEqual(jax.jit(f)(arangeF(3)).tolistSync(), [0, 10, 20]);
  t.deepEqual(calls, ['cpu', 'cpu']);
  // pytrees in and out; a JS number, a TypedArray and a boolean are results of the declared dtypes
  const out = jax.jit((a: Array, b: Array) => jax.pureCallback(
    ({ a: u, b: v }: { a: Array; b: Array }) => ({ sum: (u.item() as number) + (v.item() as number), parts: [new Int32Array([1, 2]), true] }),
    { sum: sds([]), parts: [sds([2], 'int32'), sds([], 'bool')] }, { a, b }))(f32(1.5), f32(2)) as { sum: Array; parts: [Array, Array] };
  t.is(out.sum.dtype, 'float32');
  t.is(out.sum.item(), 3.5);
  t.deepEqual(out.parts[0].tolistSync(), [1, 2]);
  t.is(out.parts[0].dtype, 'int32');
  t.is(out.parts[1].item(), true);
  // inside a scan body, once per iteration, feeding the next iteration
  const scanned = jax.jit((x: Array) => lax.scan((c: Array) => {
    const next = jax.pureCallback((v: Array) => jnp.add(jnp.multiply(v, 2), 1), sds([]), c) as Array;
    return [next, c];
  }, x, null, { length: 4 }));
  const [last, ys] = scanned(f32(0)) as [Array, Array];
  t.deepEqual(ys.tolistSync(), [0, 1, 3, 7]);
  t.is(last.item(), 15);
});

test("pureCallback: JAX's checks of the results: count, shapes and dtypes, eagerly and under jit", (t) => {
  const x = arangeF(3);
  for (const wrap of [(f: Fn) => f, (f: Fn) => jax.jit(f)]) {
    t.throws(() => wrap((v: Array) => jax.pureCallback((a: Array) => a, sds([2]), v))(x), { instanceOf: jax.RuntimeError, message: 'Incorrect output shape for return value #0: Expected: (2,), Actual: (3,)' });
    t.throws(() => wrap((v: Array) => jax.pureCallback((a: Array) => a, sds([3], 'int32'), v))(x), { instanceOf: jax.RuntimeError, message: 'Incorrect output dtype for return value #0: Expected: int32, Actual: float32' });
    t.throws(() => wrap((v: Array) => jax.pureCallback((a: Array) => [a, a], sds([3]), v))(x), { instanceOf: jax.RuntimeError, message: 'Mismatched number of outputs from callback. Expected: 1, Actual: 2' });
    t.throws(() => wrap((v: Array) => jax.pureCallback(() => 1.5, sds([], 'int32'), v))(x), { instanceOf: jax.RuntimeError, message: 'Incorrect output dtype for return value #0: Expected: int32, Actual: float32' });
    t.throws(() => wrap((v: Array) => jax.pureCallback(() => jnp.zeros([2, 2]), [sds([]), sds([2, 2])], v))(x), { instanceOf: jax.RuntimeError, message: 'Mismatched number of outputs from callback. Expected: 2, Actual: 1' });
  }
  t.throws(() => jax.pureCallback((a: Array) => a, sds([3], 'float64'), x), { instanceOf: jax.ValueError, message: 'result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled' });
  t.throws(() => jax.pureCallback((a: Array) => a, sds([3]), x, { vmapMethod: 'nope' as never }), { instanceOf: jax.ValueError, message: /^vmap_method must be one of the allowed methods \['sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized', None\], but got: nope$/ });
  t.throws(() => jax.pureCallback(3 as never, sds([3]), x), { instanceOf: TypeError, message: /callback must be a function/ });
});

test("pureCallback: pure, so jit drops it when its result is unused (JAX's semantics); eagerly it runs", (t) => {
  let calls = 0;
  const f = (x: Array) => {
    jax.pureCallback((a: Array) => {
      calls++;
      return a;
    }, sds([]), x);
    return jnp.add(x, 1);
  };
  t.is(jax.jit(f)(f32(1)).item(), 2);
  t.is(calls, 0);
  f(f32(1));
  t.is(calls, 1);
});

test("pureCallback under vmap: 'sequential' calls per element, 'expand_dims' / 'broadcast_all' once (JAX's docstring example)", (t) => {
  const shapes: string[] = [];
  const callback = (x: Array, y: Array) => {
    shapes.push(`${JSON.stringify(x.shape)} ${JSON.stringify(y.shape)}`);
    return jnp.add(x, y);
  };
  const fun = (vmapMethod: 'sequential' | 'sequential_unrolled' | 'expand_dims' | 'broadcast_all') => (x: Array, y: Array) => jax.pureCallback(callback, sds([]), x, y, { vmapMethod });
  const x = arangeF(4);
  const y = f32(1);
  const run = (method: Parameters<typeof fun>[0]) => {
    shapes.length = 0;
    const out = jax.vmap(fun(method), [0, null])(x, y) as Array;
    return { out: out.tolistSync(), shapes: [...shapes] };
  };
  t.deepEqual(run('expand_dims'), { out: [1, 2, 3, 4], shapes: ['[4] [1]'] });
  t.deepEqual(run('broadcast_all'), { out: [1, 2, 3, 4], shapes: ['[4] [4]'] });
  t.deepEqual(run('sequential'), { out: [1, 2, 3, 4], shapes: ['[] []', '[] []', '[] []', '[] []'] });
  t.deepEqual(run('sequential_unrolled'), { out: [1, 2, 3, 4], shapes: ['[] []', '[] []', '[] []', '[] []'] });
  // under jit too, and with the batch along another axis
  const column = (v: Array, w: Array) => jax.pureCallback(callback, sds([1]), v, w, { vmapMethod: 'sequential' });
  t.deepEqual((jax.jit(jax.vmap(column, [1, null]))(x.reshape([1, 4]), y) as Array).tolistSync(), [[1], [2], [3], [4]]);
  // a callback that ignores the batch fails JAX's shape check under 'expand_dims'
  t.throws(() => jax.vmap((v: Array) => jax.pureCallback(() => f32(0), sds([]), v, { vmapMethod: 'expand_dims' }))(x), { instanceOf: jax.RuntimeError, message: 'Incorrect output shape for return value #0: Expected: (4,), Actual: ()' });
  t.throws(() => jax.vmap((v: Array) => jax.pureCallback((a: Array) => a, sds([]), v))(x), {
    instanceOf: jax.NotImplementedError,
    message: "vmap is only supported for the pure_callback primitive when vmapMethod is one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got vmapMethod=null.",
  });
});

test("pureCallback has no derivative: JAX's errors under grad, jvp and vjp; customJvp around it works", (t) => {
  const f = (x: Array) => jax.pureCallback((a: Array) => jnp.sin(a), sds([]), x) as Array;
  const jvpError = { instanceOf: jax.ValueError, message: 'Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.' };
  t.throws(() => jax.grad(f)(1.0), jvpError);
  t.throws(() => jax.jit(jax.grad(f))(1.0), jvpError);
  t.throws(() => jax.jvp(f, [1.0], [1.0]), jvpError);
  t.throws(() => jax.vjp(f, 1.0), jvpError);
  // differentiating with respect to something else is fine (a zero tangent never reaches the rule)
  t.is((jax.grad((x: Array, y: Array) => jnp.multiply(x, f(y)))(f32(2), f32(0.5)) as Array).item(), Math.fround(Math.sin(0.5)));
  // the documented way: a custom rule around the callback
  const g = jax.customJvp(f);
  g.defjvp(([x]: Array[], [dx]: Array[]) => [g(x), jnp.multiply(jnp.cos(x), dx)]);
  t.true(Math.abs((jax.grad(g)(f32(0.5)) as Array).item() as number - Math.cos(0.5)) < 1e-6);
});
