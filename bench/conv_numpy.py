#!/usr/bin/env python3
"""NumPy baseline for bench/conv.ts: the same ResNet-style 3x3 convolution
(NHWC float32 input [32, 56, 56, 64], HWIO kernel [3, 3, 64, 64], stride 1,
SAME padding) as an im2col + GEMM: np.pad, a sliding_window_view of the
3x3 windows and one np.tensordot over (channel, kh, kw), which copies the
windows and calls NumPy's BLAS sgemm, as jaxon's im2col + dot_general does.
Prints one JSON line: the median and min of `reps` timed runs in ms.

    python3 bench/conv_numpy.py [reps]
"""
import json
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv(x, w):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    win = sliding_window_view(xp, (3, 3), axis=(1, 2))  # [N, H, W, C, kh, kw]
    return np.tensordot(win, w, axes=([3, 4, 5], [2, 0, 1]))  # [N, H, W, O]


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 56, 56, 64), dtype=np.float32)
    w = rng.standard_normal((3, 3, 64, 64), dtype=np.float32)
    conv(x, w)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        y = conv(x, w)
        times.append((time.perf_counter() - t0) * 1e3)
    assert y.shape == (32, 56, 56, 64)
    times.sort()
    print(json.dumps({'impl': f'numpy {np.__version__} (sliding_window_view + tensordot)', 'medianMs': times[len(times) // 2],
                      'minMs': times[0], 'reps': reps, 'checksum': float(y[0, :4, :4, :4].astype(np.float64).sum())}))


if __name__ == '__main__':
    main()
