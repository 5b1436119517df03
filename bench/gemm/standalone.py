"""Issue 16 item 3: the GEMM micro-kernel on its own, interleaved with OpenBLAS. Builds bench/gemm/gemm_bench.c with
the flags jaxon's CPU kernels compile with (lib/runtime/kernel-cache.ts: -O3 -std=c11 -fopenmp -ffp-contract=off
-fno-math-errno -march=native) from this checkout's cuda/kernels/jaxon_gemm.h and from the header of git revision
--baseline (default main), each also with -march=haswell in place of native (what an AVX2-only host compiles; this
CPU runs it); then runs them, NumPy's `a @ b`
(numpy_gemm.py) and OpenBLAS's cblas_sgemm by dlopen (openblas_dlopen.py) one after another, round after round, and
prints per side the median over rounds of each round's median GFLOP/s, wall and CPU time per thread, with the load.
Usage: python3 bench/gemm/standalone.py [--sizes 1024,2048] [--threads 1] [--rounds 7] [--reps 5] [--baseline REV]
Writes bench/gemm/standalone-<threads>t.json."""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timezone

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
p = argparse.ArgumentParser()
p.add_argument("--sizes", default="1024,2048")
p.add_argument("--threads", default="1")
p.add_argument("--rounds", type=int, default=7)
p.add_argument("--reps", default="5")
p.add_argument("--baseline", default="main")
args = p.parse_args()

FLAGS = ["-O3", "-std=c11", "-fopenmp", "-ffp-contract=off", "-fno-math-errno", "-march=native"]
work = tempfile.mkdtemp(prefix="jaxon-gemm-bench-")
kernels = os.path.join(repo, "cuda", "kernels")
old = os.path.join(work, "baseline")
shutil.copytree(kernels, old)
with open(os.path.join(old, "jaxon_gemm.h"), "wb") as f:
    f.write(subprocess.check_output(["git", "-C", repo, "show", f"{args.baseline}:cuda/kernels/jaxon_gemm.h"]))
source = os.path.join(here, "gemm_bench.c")
HASWELL = [f for f in FLAGS if f != "-march=native"] + ["-march=haswell"]
builds = {
    "jaxon": (FLAGS, ["-I", kernels]),
    "jaxon, -march=haswell (AVX2 path)": (HASWELL, ["-I", kernels]),
    f"baseline ({args.baseline})": (FLAGS, ["-I", old]),
    f"baseline ({args.baseline}), -march=haswell": (HASWELL, ["-I", old]),
}
sides = {}
for i, (name, (flags, extra)) in enumerate(builds.items()):
    binary = os.path.join(work, f"gemm_bench_{i}")
    subprocess.check_call(["gcc", *flags, *extra, source, "-o", binary, "-lm"])
    sides[name] = [binary]
sides["NumPy a @ b"] = ["python3", os.path.join(here, "numpy_gemm.py")]
sides["OpenBLAS sgemm by dlopen"] = ["python3", os.path.join(here, "openblas_dlopen.py")]
env = {**os.environ, "OMP_NUM_THREADS": args.threads, "OPENBLAS_NUM_THREADS": args.threads}


def median(xs):
    return sorted(xs)[len(xs) // 2]


model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"{model} x{os.cpu_count()}, {args.threads} thread(s) each side, {args.rounds} rounds of {args.reps} calls, {datetime.now(timezone.utc).isoformat()}")
print("\n| n | side | GFLOP/s wall (median of rounds; min–max) | GFLOP/s CPU time | ratio to NumPy, wall / CPU | load (1 min) |")
print("|---|---|---:|---:|---:|---:|")
raw = {}
for n in [int(s) for s in args.sizes.split(",")]:
    rows = {s: [] for s in sides}
    for _ in range(args.rounds):
        for side, command in sides.items():
            load = os.getloadavg()[0]
            out = subprocess.check_output([*command, str(n), args.reps], env=env, text=True).strip().splitlines()[-1]
            rows[side].append({**json.loads(out), "load": load})
    raw[n] = rows
    numpy_wall = median([r["gflops_median"] for r in rows["NumPy a @ b"]])
    numpy_cpu = median([r["cpu_gflops_median"] for r in rows["NumPy a @ b"]])
    for side, rs in rows.items():
        wall = [r["gflops_median"] for r in rs]
        cpu = [r["cpu_gflops_median"] for r in rs]
        loads = [r["load"] for r in rs]
        print(f"| {n}² | {side} | {median(wall):.1f} ({min(wall):.1f}–{max(wall):.1f}) | {median(cpu):.1f} ({min(cpu):.1f}–{max(cpu):.1f}) | "
              f"{median(wall) / numpy_wall:.2f}× / {median(cpu) / numpy_cpu:.2f}× | {min(loads):.1f}–{max(loads):.1f} |")
with open(os.path.join(here, f"standalone-{args.threads}t.json"), "w") as f:
    json.dump({"machine": model, "threads": args.threads, "rounds": args.rounds, "reps": args.reps, "baseline": args.baseline, "raw": raw}, f, indent=1)
    f.write("\n")
shutil.rmtree(work)
