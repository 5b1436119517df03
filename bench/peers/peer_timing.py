"""The timing every NumPy side of a jaxon benchmark uses (numpy_peers.py, numpy_breadth.py, numpy_linalg.py), as
jaxon's side times: one warm-up call, then the median and range of `reps` calls, in milliseconds."""
import time


def timed(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return {"median_ms": times[len(times) // 2], "min_ms": times[0], "max_ms": times[-1]}
