"""NumPy's side of bench/linalg-solve.ts: np.linalg.solve and scipy-free LU-dominated work on the same sizes,
timed the same way (median and range of repeated calls after a warm-up), printed as one JSON object. Threads:
OpenBLAS takes OPENBLAS_NUM_THREADS from the caller."""
import json
import sys

import numpy as np
from peer_timing import timed


def main():
    reps = int(sys.argv[1])
    n = int(sys.argv[2])
    rng = np.random.default_rng(0)
    out = {}
    for dtype in ["float32", "float64"]:
        a = (rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)).astype(dtype)
        b = rng.standard_normal((n,)).astype(dtype)
        out[f"solve {dtype}"] = timed(lambda: np.linalg.solve(a, b), reps)
    batch = (rng.standard_normal((4096, 8, 8)) + 3 * np.eye(8)).astype("float32")
    rhs = rng.standard_normal((4096, 8, 1)).astype("float32")
    out["solve float32 4096 x 8x8"] = timed(lambda: np.linalg.solve(batch, rhs), reps)
    print(json.dumps(out))


main()
