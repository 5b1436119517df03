"""The GPU benchmark suite, JAX's side (issue 12): every workload, or --only some, timed and written as JSON.

    python3 bench/jax/run.py --sizes full|tiny [--only a,b] [--out FILE.json]

Rows: {name, kind, shape, dtype, median_ms, p10_ms, p90_ms, min_ms, max_ms, n, flops, bytes, timing, check, extra};
meta: JAX's version and device, the HBM bandwidth of the device-to-device copy (bytes/s) and the device's peak
FLOP/s, which bench/gpu-suite.ts uses for the roofline of both sides. --only takes names or name prefixes
(gemm, tutorial_); the copy always runs, for the bandwidth. At full size the tutorial's step workloads run in
child processes of their own, so their peak memory is theirs alone (--no-isolate turns that off).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import run_workload, workload_spec  # noqa: E402


def all_workloads(sizes: str) -> list:
    from kernels import kernel_workloads
    from tutorial import tutorial_workloads

    s = workload_spec()["sizes"][sizes]
    return kernel_workloads(s) + tutorial_workloads(s, sizes)


def select(workloads: list, only) -> list:
    """Workloads named by `only` (exact names or prefixes); an entry matching none is an error listing the names."""
    if not only:
        return list(workloads)
    for want in only:
        if not any(w.name == want or w.name.startswith(want) for w in workloads):
            raise SystemExit(f"run.py: --only {want!r} matches no workload; the workloads are {', '.join(w.name for w in workloads)}")
    return [w for w in workloads if any(w.name == want or w.name.startswith(want) for want in only)]


def environment() -> dict:
    import jax
    import numpy as np

    device = jax.devices()[0]
    info = {
        "jax": jax.__version__,
        "jaxlib": getattr(__import__("jaxlib"), "__version__", "unknown"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "backend": jax.default_backend(),
        "device": str(device),
        "device_kind": device.device_kind,
        "devices": len(jax.devices()),
        "host": f"{platform.processor() or platform.machine()} x{os.cpu_count()}",
    }
    try:
        import optax

        info["optax"] = optax.__version__
    except ImportError:
        info["optax"] = "absent (bench/jax/mini_optax.py stands in)"
    return info


def peak_flops(device_kind: str):
    for entry in workload_spec()["peaks"]:
        if entry["match"] in device_kind:
            return {"bfloat16": entry["bfloat16"], "float32": entry["float32"]}
    return None


def finite(value):
    """NaN and infinities become null: the JSON must parse in JavaScript."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def error_row(w, error: BaseException) -> dict:
    return {"name": w.name, "kind": w.kind, "shape": w.shape, "dtype": w.dtype, "median_ms": None, "p10_ms": None,
            "p90_ms": None, "min_ms": None, "max_ms": None, "n": 0, "flops": w.flops, "bytes": w.bytes, "timing": "wall",
            "check": f"error: {type(error).__name__}: {error}"}


def run_isolated(w, sizes: str) -> dict:
    """One workload in a child process; its rows come back as the last line of stdout."""
    result = subprocess.run([sys.executable, os.path.abspath(__file__), "--sizes", sizes, "--only", w.name, "--rows-child"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-4000:])
        raise RuntimeError(f"the child process for {w.name} exited with {result.returncode}")
    rows = json.loads(result.stdout.strip().splitlines()[-1])
    row = next(r for r in rows if r["name"] == w.name)
    row.setdefault("extra", {})["isolated"] = True
    return row


def run_all(selected: list, sizes: str, isolate: bool, log=print) -> list:
    timing = workload_spec()["sizes"][sizes]["timing"]
    rows = []
    for w in selected:
        try:
            row = run_isolated(w, sizes) if isolate and w.isolate else run_workload(w, timing)
        except Exception as error:  # one broken workload must not cost the rest of a GPU session
            traceback.print_exc()
            row = error_row(w, error)
        rows.append(row)
        if row["median_ms"] is not None:
            log(f"{row['name']}: median {row['median_ms']:.4g} ms (p10 {row['p10_ms']:.3g}, p90 {row['p90_ms']:.3g}, n {row['n']}), check {row['check']}")
        else:
            log(f"{row['name']}: {row['check']}")
        sys.stdout.flush()
    return rows


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", choices=("full", "tiny"), default="tiny")
    parser.add_argument("--only", default="", help="comma-separated workload names or name prefixes")
    parser.add_argument("--out", help="write {meta, rows} as JSON here")
    parser.add_argument("--isolate", dest="isolate", action="store_true", default=None)
    parser.add_argument("--no-isolate", dest="isolate", action="store_false")
    parser.add_argument("--rows-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="print the workload names and exit")
    args = parser.parse_args(argv)
    only = [name for name in args.only.split(",") if name]
    workloads = all_workloads(args.sizes)
    if args.list:
        print("\n".join(w.name for w in workloads))
        return 0
    selected = select(workloads, only)
    if args.rows_child:
        print(json.dumps(finite(run_all(selected, args.sizes, False, log=lambda line: print(line, file=sys.stderr)))))
        return 0
    # the roofline needs the bandwidth of the copy, measured in this run
    copy = next(w for w in workloads if w.name.startswith("copy_"))
    if copy not in selected:
        selected.insert(0, copy)

    env = environment()
    print(f"# JAX GPU benchmark suite, --sizes {args.sizes}\n")
    print(f"device: {env['device']} ({env['device_kind']}), backend {env['backend']}")
    print(f"environment: {json.dumps(env)}")
    print("times are wall time: time.perf_counter() around the call and jax.block_until_ready() of its outputs, after warm-up\n")
    isolate = args.isolate if args.isolate is not None else args.sizes == "full"
    rows = run_all(selected, args.sizes, isolate)

    copy_row = next(r for r in rows if r["name"] == copy.name)
    bandwidth = copy_row["bytes"] / (copy_row["median_ms"] / 1000) if copy_row["median_ms"] else None
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "sizes": args.sizes,
        **env,
        "hbm_bytes_per_s": bandwidth,
        "peak_flops": peak_flops(env["device_kind"]),
        "timing": "wall: time.perf_counter() around the call and jax.block_until_ready()",
    }
    if bandwidth:
        print(f"\nHBM bandwidth (device-to-device copy, read + write): {bandwidth / 1e9:.0f} GB/s")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(finite({"meta": meta, "rows": rows}), f, indent=2, allow_nan=False)
            f.write("\n")
        print(f"wrote {args.out}")
    failed = [r for r in rows if r["check"] not in ("ok", "not checked")]
    if failed:
        print(f"{len(failed)} workload(s) failed: " + "; ".join(f"{r['name']} ({r['check']})" for r in failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
