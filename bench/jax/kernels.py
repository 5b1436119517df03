"""Kernel workloads of the GPU benchmark suite, JAX's side (jaxon's is bench/jaxon/kernels.ts).

A device-to-device copy (the HBM bandwidth probe), the 10-op elementwise chain
of bench/eager.ts, a full sum, row softmax, layernorm, transpose, GEMMs at
JAX's default precision, an MLP layer gelu(x @ w + b), issue 15's sort,
convolution and solve (breadth.py), dispatch latency of a tiny jitted
function, and host<->device transfers. Each is jitted and checks a
sample of its output against NumPy, as jaxon's side does.
"""
from __future__ import annotations

import math

from common import (
    ITEMSIZE, SHORT_DTYPE, Prepared, Workload, bytes_label, compare_close, count_label, delete_tree, head,
    kernel_count, random_normal, shape_label,
)

RTOL = {"float32": 2e-3, "bfloat16": 2e-2}  # f32 matmuls run on TF32 under JAX's default precision


def chain10(v):
    """bench/eager.ts's chain, the same ten ops as jaxon's chain10."""
    import jax.numpy as jnp

    y = v * 1.5
    y = y + 0.25
    y = jnp.tanh(y)
    y = y * y
    y = y - 0.5
    y = jnp.abs(y)
    y = jnp.sqrt(y)
    y = jnp.maximum(y, 0.1)
    y = jnp.exp(y)
    return -y


def chain10_reference(v):
    import numpy as np

    return -np.exp(np.maximum(np.sqrt(np.abs(np.tanh(v * 1.5 + 0.25) ** 2 - 0.5)), 0.1))


def layernorm(x, gamma, beta):
    """Layernorm over the last axis with a scale and a bias (the formula of jaxon's side)."""
    import jax
    import jax.numpy as jnp

    mean = jnp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    variance = jnp.mean(jnp.square(centered), axis=-1, keepdims=True)
    return centered * jax.lax.rsqrt(variance + 1e-5) * gamma + beta


def mlp_layer(x, w, b):
    import jax

    return jax.nn.gelu(x @ w + b)  # approximate=True, jaxon's default too


def gelu_reference(v):
    import numpy as np

    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))


def rows_of(x, n):
    import numpy as np

    return np.asarray(x[: min(n, x.shape[0])].astype("float32"), dtype=np.float64)


def columns_of(x, n):
    import numpy as np

    return np.asarray(x[:, : min(n, x.shape[1])].astype("float32"), dtype=np.float64)


def jitted(fn, inputs, check=None) -> Prepared:
    """A jitted function of fixed inputs; extra() reports its kernel count from the optimized HLO."""
    import jax

    f = jax.jit(fn)

    def extra():
        try:
            return {"kernels": kernel_count(f.lower(*inputs).compile().as_text())}
        except Exception:  # as_text() is informational only
            return {}

    return Prepared(
        step=lambda: f(*inputs),
        check=(lambda out: check(out, inputs)) if check else None,
        extra=extra,
        dispose=lambda: delete_tree(inputs),
    )


def check_matmul_corner(out, x, w, dtype, bias=None):
    """x @ w (+ bias, gelu) on a 2x8 corner against float64 sums of the rounded inputs."""
    import numpy as np

    a = rows_of(x, 2)
    b = columns_of(w, 8)
    exact = a @ b
    magnitude = np.abs(a) @ np.abs(b)  # the error of a dot product scales with the sum of |terms|
    want = gelu_reference(exact + head(bias, b.shape[1])) if bias is not None else exact
    got = rows_of(out, a.shape[0])[:, : b.shape[1]]
    bad = np.argwhere(~(np.abs(got - want) <= RTOL[dtype] * (magnitude + np.abs(want)) + 1e-6))
    if bad.size:
        r, c = bad[0]
        return f"matmul corner: [{r},{c}] {got[r, c]} vs {want[r, c]}"
    return None


def kernel_workloads(s: dict) -> list:
    """The workloads at sizes s; building the list imports neither JAX nor NumPy (run.py --list needs neither)."""
    out = []

    def add(**kwargs):
        out.append(Workload(**kwargs))

    # the HBM bandwidth probe: jnp.copy under jit (jaxon's side: jnp.array, which copies)
    def copy_prepare():
        import jax.numpy as jnp

        return jitted(jnp.copy, [random_normal([s["copy"]])],
                      lambda o, i: compare_close("copy", head(o, 4096), head(i[0], 4096), 0, 0))

    add(name=f"copy_f32_{count_label(s['copy'])}", kind="memory", shape=count_label(s["copy"]), dtype="float32",
        flops=0, bytes=2 * 4 * s["copy"], prepare=copy_prepare)

    for dtype in ("float32", "bfloat16"):
        def chain_prepare(dtype=dtype):
            def check(o, i):
                # sqrt(|y^2 - 0.5|) turns a rounding error d of y^2 into up to sqrt(d): bf16 gets a loose bound
                return compare_close("chain10", head(o, 4096), chain10_reference(head(i[0], 4096)),
                                     0.1 if dtype == "bfloat16" else 4e-3, 1e-6)
            return jitted(chain10, [random_normal([s["chain"]], dtype)], check)

        add(name=f"chain10_{SHORT_DTYPE[dtype]}_{count_label(s['chain'])}", kind="memory", shape=count_label(s["chain"]),
            dtype=dtype, flops=10 * s["chain"], bytes=2 * ITEMSIZE[dtype] * s["chain"], prepare=chain_prepare)

    def sum_prepare():
        import jax.numpy as jnp

        def check(o, i):
            import numpy as np

            x = i[0]
            if s["sum"] <= 2**22:
                reference = float(np.sum(np.asarray(x, dtype=np.float64)))
            else:  # reading 1 GiB back is slow: a two-stage sum on the device instead
                reference = float(jnp.sum(jnp.sum(x.reshape(1024, -1), axis=1)))
            return compare_close("sum", [float(o)], [reference], 0, math.sqrt(s["sum"]) * 4 * 1e-5)

        return jitted(jnp.sum, [random_normal([s["sum"]])], check)

    add(name=f"sum_f32_{count_label(s['sum'])}", kind="memory", shape=count_label(s["sum"]), dtype="float32",
        flops=s["sum"], bytes=4 * s["sum"], prepare=sum_prepare)

    for rows, cols in s["softmax"]:
        def softmax_prepare(rows=rows, cols=cols):
            import jax

            def check(o, i):
                import numpy as np

                x = rows_of(i[0], 4)
                e = np.exp(x - x.max(axis=1, keepdims=True))
                return compare_close("softmax rows", rows_of(o, 4), e / e.sum(axis=1, keepdims=True), 1e-4, 1e-7)

            return jitted(lambda x: jax.nn.softmax(x, axis=-1), [random_normal([rows, cols])], check)

        add(name=f"softmax_f32_{shape_label([rows, cols])}", kind="memory", shape=shape_label([rows, cols]),
            dtype="float32", flops=5 * rows * cols, bytes=2 * 4 * rows * cols, prepare=softmax_prepare)

    rows, cols = s["layernorm"]

    def layernorm_prepare():
        def check(o, i):
            import numpy as np

            x, gamma, beta = i
            r = rows_of(x, 4)
            mean = r.mean(axis=1, keepdims=True)
            variance = ((r - mean) ** 2).mean(axis=1, keepdims=True)
            want = (r - mean) / np.sqrt(variance + 1e-5) * head(gamma, cols) + head(beta, cols)
            return compare_close("layernorm rows", rows_of(o, 4), want, 1e-4, 1e-4)

        return jitted(layernorm, [random_normal([rows, cols]), random_normal([cols]), random_normal([cols])], check)

    add(name=f"layernorm_f32_{shape_label([rows, cols])}", kind="memory", shape=shape_label([rows, cols]),
        dtype="float32", flops=8 * rows * cols, bytes=4 * (2 * rows * cols + 2 * cols), prepare=layernorm_prepare)

    t_rows, t_cols = s["transpose"]

    def transpose_prepare():
        import jax.numpy as jnp

        return jitted(jnp.transpose, [random_normal([t_rows, t_cols])],
                      lambda o, i: compare_close("transpose rows", rows_of(o, 4), columns_of(i[0], 4).T, 0, 0))

    add(name=f"transpose_f32_{shape_label([t_rows, t_cols])}", kind="memory", shape=shape_label([t_rows, t_cols]),
        dtype="float32", flops=0, bytes=2 * 4 * t_rows * t_cols, prepare=transpose_prepare)

    for dtype in ("bfloat16", "float32"):
        for n in s["gemm"]:
            def gemm_prepare(dtype=dtype, n=n):
                # scaled so the products stay near 1 whatever n is
                return jitted(lambda a, b: a @ b, [random_normal([n, n], dtype), random_normal([n, n], dtype, 1 / math.sqrt(n))],
                              lambda o, i: check_matmul_corner(o, i[0], i[1], dtype))

            add(name=f"gemm_{SHORT_DTYPE[dtype]}_{n}", kind="compute", shape=shape_label([n, n, n]), dtype=dtype,
                flops=2 * n**3, bytes=3 * ITEMSIZE[dtype] * n * n, prepare=gemm_prepare)

    m, k, n = s["mlp"]
    for dtype in ("bfloat16", "float32"):
        def mlp_prepare(dtype=dtype):
            inputs = [random_normal([m, k], dtype), random_normal([k, n], dtype, 1 / math.sqrt(k)), random_normal([n], dtype)]
            return jitted(mlp_layer, inputs, lambda o, i: check_matmul_corner(o, i[0], i[1], dtype, bias=i[2]))

        add(name=f"mlp_gelu_{SHORT_DTYPE[dtype]}_{shape_label([m, k, n])}", kind="compute", shape=shape_label([m, k, n]),
            dtype=dtype, flops=2 * m * k * n, bytes=ITEMSIZE[dtype] * (m * k + k * n + n + m * n), prepare=mlp_prepare)

    from breadth import breadth_workloads

    out.extend(breadth_workloads(s))
    out.extend(dispatch_workloads(s))
    out.extend(transfer_workloads(s))
    return out


def dispatch_workloads(s: dict) -> list:
    """µs per call of a tiny jitted function: `calls` calls per sample, waiting on the last one's result."""
    elements = s["dispatch"]["elements"]
    calls = s["dispatch"]["calls"]

    def one_kernel(x):
        return x + 1

    def ten_kernels(v):
        import jax.numpy as jnp

        for _ in range(10):  # each max(v) is a reduction the next elementwise op cannot fuse across
            v = jnp.sin(v + jnp.max(v))
        return v

    def make(name, fn, check=None):
        def prepare():
            import jax

            x = random_normal([elements])
            f = jax.jit(fn)

            def step():
                for _ in range(calls - 1):
                    f(x)
                return f(x)

            def extra():
                try:
                    return {"kernels": kernel_count(f.lower(x).compile().as_text()), "calls_per_sample": calls}
                except Exception:
                    return {"calls_per_sample": calls}

            return Prepared(step=step, calls_per_step=calls, check=(lambda o: check(o, x)) if check else None,
                            extra=extra, dispose=lambda: delete_tree(x))

        return Workload(name=name, kind="dispatch", shape=str(elements), dtype="float32", flops=0, bytes=0, prepare=prepare)

    return [
        make("dispatch_1kernel", one_kernel, lambda o, x: compare_close("x + 1", head(o, 16), head(x, 16) + 1, 1e-6, 1e-6)),
        make("dispatch_10kernels", ten_kernels),
    ]


def transfer_workloads(s: dict) -> list:
    """device_put of s["transfer"] bytes: H2D from pageable NumPy memory and from a pinned_host array; D2H into
    pinned_host and into NumPy (reading a fresh device array each time, so no cached host copy answers)."""
    n = s["transfer"] // 4
    label = bytes_label(s["transfer"])

    def shardings():
        import jax

        device = jax.devices()[0]
        return (jax.sharding.SingleDeviceSharding(device, memory_kind="device"),
                jax.sharding.SingleDeviceSharding(device, memory_kind="pinned_host"))

    def host_data():
        import numpy as np

        return ((np.arange(n, dtype=np.int64) * 7919) % 1000 / 1000 + 0.5).astype(np.float32)

    def same_head(what, out, data):
        return compare_close(what, head(out, 1024), data[:1024], 0, 0)

    def h2d_pageable():
        import jax

        data = host_data()
        device = jax.devices()[0]
        return Prepared(step=lambda: jax.device_put(data, device), check=lambda o: same_head("h2d pageable", o, data))

    def h2d_pinned():
        import jax

        s_dev, s_host = shardings()
        data = host_data()
        host = jax.device_put(jax.device_put(data, s_dev), s_host)  # staged through the device, the tutorial's path
        return Prepared(step=lambda: jax.device_put(host, s_dev), check=lambda o: same_head("h2d pinned", o, data),
                        dispose=lambda: delete_tree(host))

    def d2h_pinned():
        import jax

        _, s_host = shardings()
        x = random_normal([n])

        def check(o):
            kind = o.sharding.memory_kind
            return None if kind == "pinned_host" else f"d2h pinned: result in {kind}"

        return Prepared(step=lambda: jax.device_put(x, s_host), check=check, dispose=lambda: delete_tree(x))

    def d2h_pageable():
        import jax
        import jax.numpy as jnp

        x = random_normal([n])
        copy = jax.jit(jnp.copy)
        fresh = [None]

        def before():
            delete_tree(fresh[0])
            fresh[0] = copy(x)
            fresh[0].block_until_ready()

        def step():
            import numpy as np

            return np.asarray(fresh[0])  # blocks until the bytes are in NumPy memory

        return Prepared(step=step, before=before, dispose=lambda: delete_tree([fresh[0], x]))

    def row(name, prepare):
        return Workload(name=f"{name}_{label}", kind="transfer", shape=label, dtype="float32", flops=0,
                        bytes=s["transfer"], prepare=prepare)

    return [row("h2d_pageable", h2d_pageable), row("h2d_pinned", h2d_pinned),
            row("d2h_pinned", d2h_pinned), row("d2h_pageable", d2h_pageable)]
