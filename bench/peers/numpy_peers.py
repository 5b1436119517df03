"""NumPy's side of `npm run bench:peers` (bench/peers.ts): the same workloads as jaxon's, timed the same way
(median and range of repeated calls after a warm-up), printed as one JSON object. Threads: OpenBLAS takes
OPENBLAS_NUM_THREADS from the caller (the number of cores, as jaxon's OpenMP)."""
import json
import sys

import numpy as np
from peer_timing import timed


def chain(x):
    y = np.sin(x)
    y = np.exp(y)
    y = np.tanh(y)
    y = np.sqrt(y + np.float32(1))
    y = np.log(y)
    y = y * np.float32(3)
    y = np.cos(y)
    y = y - np.float32(0.5)
    y = np.abs(y)
    return np.maximum(y, np.float32(0.1))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rng = np.random.default_rng(0)
    out = {"numpy": np.__version__}
    x = rng.standard_normal(2**24, dtype=np.float32)
    out["chain10"] = timed(lambda: chain(x), reps)
    out["sum"] = timed(lambda: x.sum(), reps)
    s = rng.standard_normal((4096, 1024), dtype=np.float32)
    out["softmax"] = timed(lambda: softmax(s), reps)
    for n in (512, 1024, 2048):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        out[f"matmul{n}"] = timed(lambda: a @ b, reps)
    small = np.arange(8, dtype=np.float32)
    calls = 20000
    def adds():
        for _ in range(calls):
            np.add(small, small)
    r = timed(adds, 5)
    out["add8"] = {k: v * 1e3 / calls for k, v in r.items()}  # µs per call, stored in the *_ms fields
    print(json.dumps(out))


main()
