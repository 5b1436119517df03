"""What a dlopen'd BLAS would give jaxon (issue 16 item 3's question): OpenBLAS's cblas_sgemm called directly through
ctypes on preallocated row-major f32 matrices (C = A B into an existing buffer, as jaxon would call it on its output),
timed like gemm_bench.c and printed as one JSON line in its form. The library: $OPENBLAS_LIB, else the copy bundled
with NumPy's wheel (numpy.libs/libscipy_openblas64_*: this machine has no system BLAS). Threads: OPENBLAS_NUM_THREADS.
Usage: python3 bench/gemm/openblas_dlopen.py N [reps]"""
import ctypes
import glob
import json
import os
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
path = os.environ.get("OPENBLAS_LIB") or glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "libscipy_openblas*.so"))[0]
lib = ctypes.CDLL(path)
# the scipy-openblas wheel's symbols carry a prefix and a 64-bit-integer suffix; a system libopenblas has plain names
sgemm = getattr(lib, "scipy_cblas_sgemm64_", None) or lib.cblas_sgemm
corename = getattr(lib, "scipy_openblas_get_corename64_", None) or getattr(lib, "openblas_get_corename", None)
index = ctypes.c_int64 if hasattr(lib, "scipy_cblas_sgemm64_") else ctypes.c_int
sgemm.restype = None
sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, index, index, index, ctypes.c_float, ctypes.c_void_p, index,
                  ctypes.c_void_p, index, ctypes.c_float, ctypes.c_void_p, index]
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
c = np.empty((n, n), dtype=np.float32)
ROW_MAJOR, NO_TRANS = 101, 111


def call():
    sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, a.ctypes.data, n, b.ctypes.data, n, 0.0, c.ctypes.data, n)


call()
assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-3)
times, cpu = [], []
for _ in range(reps):
    t, u = time.perf_counter(), time.process_time()
    call()
    times.append(time.perf_counter() - t)
    cpu.append((time.process_time() - u) / max(1, int(os.environ.get("OPENBLAS_NUM_THREADS", "1"))))
times.sort()
cpu.sort()
flop = 2.0 * n**3
if corename:
    corename.restype = ctypes.c_char_p
print(json.dumps({"n": n, "threads": int(os.environ.get("OPENBLAS_NUM_THREADS", "0")), "library": os.path.basename(path),
                  "core": corename().decode() if corename else None, "median_ms": round(times[reps // 2] * 1e3, 3),
                  "min_ms": round(times[0] * 1e3, 3), "max_ms": round(times[-1] * 1e3, 3),
                  "gflops_median": round(flop / times[reps // 2] * 1e-9, 1), "gflops_best": round(flop / times[0] * 1e-9, 1),
                  "cpu_gflops_median": round(flop / cpu[reps // 2] * 1e-9, 1), "cpu_median_ms": round(cpu[reps // 2] * 1e3, 3)}))
