"""NumPy's side of bench/gemm/run.sh: C = A @ B for square f32 matrices, median and range of repeated calls
after a warm-up (wall time, and CPU time per thread), as one JSON line in the same form as gemm_bench.c. Threads: OPENBLAS_NUM_THREADS from the caller."""
import json
import os
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
a @ b
times, cpu = [], []
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    a @ b
    times.append(time.perf_counter() - t)
    cpu.append((time.process_time() - c) / max(1, int(os.environ.get("OPENBLAS_NUM_THREADS", "1"))))
times.sort()
cpu.sort()
flop = 2.0 * n**3
print(json.dumps({"n": n, "threads": int(os.environ.get("OPENBLAS_NUM_THREADS", "0")), "median_ms": round(times[reps // 2] * 1e3, 3),
                  "min_ms": round(times[0] * 1e3, 3), "max_ms": round(times[-1] * 1e3, 3),
                  "gflops_median": round(flop / times[reps // 2] * 1e-9, 1), "gflops_best": round(flop / times[0] * 1e-9, 1),
                  "cpu_gflops_median": round(flop / cpu[reps // 2] * 1e-9, 1), "cpu_median_ms": round(cpu[reps // 2] * 1e3, 3)}))
