"""NumPy's side of `npm run bench:breadth` (bench/breadth.ts, issue 15): a sort of 2^22 float32 (stable, as
jnp.sort, and NumPy's default introsort), a ResNet-style 3x3 convolution (batch 32, 56x56x64 -> 64, NHWC, SAME) as
NumPy users write it (sliding_window_view + tensordot, one BLAS GEMM), and solve of a 1024^2 system (LAPACK gesv).
Same inputs' shapes and the same timing as jaxon's side: median and range of repeated calls after a warm-up.
Prints one JSON object. Threads: OpenBLAS takes OPENBLAS_NUM_THREADS from the caller."""
import json
import sys

import numpy as np
from peer_timing import timed
from numpy.lib.stride_tricks import sliding_window_view


def conv_nhwc_same(x, w):
    # x [N, H, W, C], w [3, 3, C, O]: pad by one, every 3x3 window as a view, one tensordot over (kh, kw, c)
    p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = sliding_window_view(p, (3, 3), axis=(1, 2))  # [N, H, W, C, 3, 3]
    return np.tensordot(windows, w, axes=([4, 5, 3], [0, 1, 2]))


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(0)
    out = {"numpy": np.__version__}
    x = rng.random(1 << 22, dtype=np.float32)
    out["sort"] = timed(lambda: np.sort(x, kind="stable"), reps)
    out["sortDefault"] = timed(lambda: np.sort(x), reps)
    images = rng.standard_normal((32, 56, 56, 64), dtype=np.float32)
    kernel = rng.standard_normal((3, 3, 64, 64), dtype=np.float32) * np.float32(0.05)
    out["conv"] = timed(lambda: conv_nhwc_same(images, kernel), max(3, reps // 2))
    a = rng.standard_normal((1024, 1024), dtype=np.float32) + np.eye(1024, dtype=np.float32) * np.float32(32)
    b = rng.standard_normal((1024, 1), dtype=np.float32)
    out["solve"] = timed(lambda: np.linalg.solve(a, b), reps)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
