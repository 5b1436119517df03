"""The breadth workloads of the GPU benchmark suite (issue 15), JAX's side (jaxon's is bench/jaxon/breadth.ts).

A sort of float32 values (jnp.sort), a ResNet-style convolution (NHWC input, HWIO kernel, SAME padding, stride 1;
float32 and bfloat16) and a solve of a square float32 system with one right-hand side, each jitted and checked as
jaxon's side checks them: the sort whole (order, and the same sum as its input), the convolution at a corner and an inner pixel
against float64 sums of its inputs, the solve by its residual.
"""
from __future__ import annotations

import math

from common import Workload, random_normal, shape_label


def _jitted(fn, inputs, check):
    from kernels import jitted

    return jitted(fn, inputs, check)


def check_sorted(out, x):
    import numpy as np

    got = np.asarray(out, dtype=np.float64)
    values = np.asarray(x, dtype=np.float64)
    if got.shape != values.shape:
        return f"sort: {got.size} values, expected {values.size}"
    bad = np.nonzero(~(got[:-1] <= got[1:]))[0]
    if bad.size:
        i = int(bad[0]) + 1
        return f"sort: out of order at {i}: {got[i - 1]} then {got[i]}"
    a, b = float(np.sum(got)), float(np.sum(values))
    return None if abs(a - b) <= 1e-9 * float(np.sum(np.abs(values))) else f"sort: the output sums to {a}, the input to {b}"


def check_conv_pixels(out, x, w, window, relative=2e-3):
    """Output pixels (0, 0) and (1, 1) of image 0, their first 8 features, against float64 sums of the inputs
    (a bfloat16 result adds its own rounding, 2^-9 of the sum: relative 6e-3 there)."""
    import numpy as np

    _, height, width, _ = x.shape
    outs = min(8, w.shape[3])
    lo = (window - 1) // 2  # SAME: (window - 1) / 2 before, the rest after
    image = np.asarray(x[0], dtype=np.float64)
    weights = np.asarray(w, dtype=np.float64)
    for r, c in ((0, 0), (1, 1)):
        if r >= height or c >= width:
            continue
        got = np.asarray(out[0, r, c, :outs], dtype=np.float64)
        for o in range(outs):
            total, magnitude = 0.0, 0.0
            for i in range(window):
                for j in range(window):
                    y, z = r + i - lo, c + j - lo
                    if 0 <= y < height and 0 <= z < width:
                        terms = image[y, z, :] * weights[i, j, :, o]
                        total += float(np.sum(terms))
                        magnitude += float(np.sum(np.abs(terms)))
            if not abs(got[o] - total) <= relative * magnitude + 1e-6:
                return f"conv: pixel ({r}, {c}) feature {o}: {got[o]} vs {total}"
    return None


def breadth_workloads(s: dict) -> list:
    """The workloads at sizes s; building the list imports neither JAX nor NumPy."""
    out = []
    n = s["sort"]

    def sort_prepare():
        import jax.numpy as jnp

        return _jitted(jnp.sort, [random_normal([n])], lambda o, i: check_sorted(o, i[0]))

    out.append(Workload(name=f"sort_f32_{n}", kind="memory", shape=str(n), dtype="float32", flops=0, bytes=2 * 4 * n,
                        prepare=sort_prepare))

    batch, height, width, cin, cout, window = s["conv"]

    # the convolution in float32 (TF32 at the default precision) and in bfloat16 (f32 accumulation)
    for dtype, code, size, relative in (("float32", "f32", 4, 2e-3), ("bfloat16", "bf16", 2, 6e-3)):

        def conv_prepare(dtype=dtype, relative=relative):
            from jax import lax

            def conv(x, w):
                return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

            inputs = [random_normal([batch, height, width, cin], dtype), random_normal([window, window, cin, cout], dtype, 1 / math.sqrt(window * window * cin))]
            return _jitted(conv, inputs, lambda o, i: check_conv_pixels(o, i[0], i[1], window, relative))

        out.append(Workload(name=f"conv_{code}_{shape_label([batch, height, width, cin])}_{window}x{window}x{cout}", kind="compute",
                            shape=shape_label([batch, height, width, cin, cout, window]), dtype=dtype,
                            flops=2 * batch * height * width * cin * cout * window * window,
                            bytes=size * (batch * height * width * (cin + cout) + window * window * cin * cout), prepare=conv_prepare))

    m = s["solve"]

    def solve_prepare():
        import jax.numpy as jnp

        # a normal matrix plus 2 sqrt(n) I: its eigenvalues lie in a disc of radius about sqrt(n) around 2 sqrt(n)
        a = random_normal([m, m]) + 2 * math.sqrt(m) * jnp.eye(m, dtype=jnp.float32)

        def check(o, i):
            residual = float(jnp.max(jnp.abs(jnp.matmul(i[0], o, precision="highest") - i[1])))
            return None if residual <= 1e-3 else f"solve: residual max |a x - b| = {residual}"

        return _jitted(jnp.linalg.solve, [a, random_normal([m, 1])], check)

    out.append(Workload(name=f"solve_f32_{m}", kind="compute", shape=shape_label([m, m]), dtype="float32",
                        flops=(2 / 3) * m**3 + 2 * m * m, bytes=4 * (m * m + 2 * m), prepare=solve_prepare))
    return out
