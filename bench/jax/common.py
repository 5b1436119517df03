"""Shared helpers of the JAX side of the GPU benchmark suite (issue 12).

The shapes come from bench/workloads.json, which bench/gpu-suite.ts (jaxon's
side) reads too, so both sides run the same workloads under the same names.
Times are wall time: time.perf_counter() around the call and
jax.block_until_ready() of its outputs, after warm-up calls; the row keeps the
median, p10, p90, min and max of n runs (the schema of bench/jaxon/measure.ts).
JAX is imported inside functions, so every module imports (and passes
py_compile) on a machine without it.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SHORT_DTYPE = {"float32": "f32", "bfloat16": "bf16"}
ITEMSIZE = {"float32": 4, "bfloat16": 2}


def workload_spec() -> dict:
    """bench/workloads.json: {"sizes": {"full": ..., "tiny": ...}, "peaks": [...]}."""
    with open(os.path.join(HERE, "..", "workloads.json"), encoding="utf-8") as f:
        return json.load(f)


# ---- naming, shared with bench/jaxon/measure.ts ----

def count_label(n: int) -> str:
    """2^26 for powers of two from 1024 on, else the number."""
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def bytes_label(n: int) -> str:
    if n >= 2**20 and n % 2**20 == 0:
        return f"{n // 2**20}MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}KiB"
    return f"{n}B"


def shape_label(shape) -> str:
    return "x".join(str(d) for d in shape)


# ---- workloads ----

@dataclass
class Prepared:
    """A workload with its inputs made: step() is the timed call and returns its outputs (a pytree)."""
    step: Callable[[], Any]
    before: Optional[Callable[[], None]] = None  # untimed, before each step
    check: Optional[Callable[[Any], Optional[str]]] = None  # None when right, else what is wrong
    consume: Optional[Callable[[Any], None]] = None  # takes the outputs (a training loop feeds them back)
    calls_per_step: int = 1  # dispatch: a step makes this many calls
    extra: Optional[Callable[[], dict]] = None  # figures gathered after timing
    dispose: Optional[Callable[[], None]] = None


@dataclass
class Workload:
    name: str
    kind: str  # memory | compute | step | dispatch | transfer | compile
    shape: str
    dtype: str
    flops: float
    bytes: float
    prepare: Optional[Callable[[], Prepared]] = None
    measure: Optional[Callable[[dict], dict]] = None  # times itself: {"samples": [...], "extra": {...}}
    isolate: bool = False  # run.py runs it in a child process at full size (its own peak memory)
    meta: dict = field(default_factory=dict)


# ---- inputs and outputs ----

_seed = [0]


def random_normal(shape, dtype: str = "float32", scale: float = 1.0):
    """Random normal inputs (never zeros), each from a fresh key."""
    import jax
    import jax.numpy as jnp

    _seed[0] += 1
    x = jax.random.normal(jax.random.key(_seed[0]), tuple(shape), dtype=jnp.dtype(dtype))
    return x if scale == 1.0 else (x * scale).astype(x.dtype)


def jax_leaves(tree) -> list:
    import jax

    return [leaf for leaf in jax.tree.leaves(tree) if isinstance(leaf, jax.Array)]


def block(tree) -> None:
    leaves = jax_leaves(tree)
    if leaves:
        import jax

        jax.block_until_ready(leaves)


def delete_tree(tree) -> None:
    """Frees device buffers now instead of at garbage collection."""
    for leaf in jax_leaves(tree):
        try:
            leaf.delete()
        except Exception:  # already deleted or donated
            pass


def head(x, count: int):
    """The first `count` elements of x, flattened, as float64 NumPy values."""
    import numpy as np

    flat = x.reshape(-1)
    return np.asarray(flat[: min(count, flat.shape[0])].astype("float32"), dtype=np.float64)


def compare_close(what: str, got, want, rtol: float, atol: float) -> Optional[str]:
    import numpy as np

    got = np.asarray(got, dtype=np.float64).reshape(-1)
    want = np.asarray(want, dtype=np.float64).reshape(-1)
    if got.shape != want.shape:
        return f"{what}: {got.size} values, expected {want.size}"
    bad = np.nonzero(~(np.abs(got - want) <= atol + rtol * np.abs(want)))[0][:3]
    if bad.size:
        return f"{what}: " + ", ".join(f"[{i}] {got[i]} vs {want[i]}" for i in bad)
    return None


# ---- statistics ----

def quantile(sorted_samples, q: float) -> float:
    """Linear interpolation between order statistics (NumPy's default, as measure.ts)."""
    if not sorted_samples:
        return float("nan")
    at = (len(sorted_samples) - 1) * q
    lo = math.floor(at)
    hi = min(lo + 1, len(sorted_samples) - 1)
    return sorted_samples[lo] + (sorted_samples[hi] - sorted_samples[lo]) * (at - lo)


def summarize(samples) -> dict:
    s = sorted(samples)
    return {
        "median_ms": quantile(s, 0.5),
        "p10_ms": quantile(s, 0.1),
        "p90_ms": quantile(s, 0.9),
        "min_ms": s[0] if s else float("nan"),
        "max_ms": s[-1] if s else float("nan"),
        "n": len(s),
    }


# ---- the timing loop ----

def time_prepared(p: Prepared, timing: dict):
    """Warm-up calls (the first compiles), one checked call, then min_n..max_n timed calls within budget_s."""

    def finish(out):
        if p.consume:
            p.consume(out)
        else:
            delete_tree(out)

    def once():
        if p.before:
            p.before()
        start = time.perf_counter()
        out = p.step()
        block(out)
        return (time.perf_counter() - start) * 1000.0, out

    for _ in range(timing["warmup"]):
        finish(once()[1])
    _, checked = once()
    check = "not checked"
    if p.check:
        try:
            check = p.check(checked) or "ok"
        except Exception as error:  # a check that cannot run is reported, not fatal
            check = f"check raised {type(error).__name__}: {error}"
    finish(checked)
    samples = []
    spent = 0.0
    while len(samples) < timing["max_n"] and (len(samples) < timing["min_n"] or spent < timing["budget_s"] * 1000.0):
        ms, out = once()
        finish(out)
        spent += ms
        samples.append(ms / p.calls_per_step)
    return samples, check


def run_workload(w: Workload, timing: dict) -> dict:
    """Runs one workload start to end (inputs made and freed inside) and returns its row."""
    extra = {}
    check = "not checked"
    if w.measure:
        measured = w.measure(timing)
        samples = measured["samples"]
        extra = measured.get("extra", {})
    else:
        p = w.prepare()
        try:
            samples, check = time_prepared(p, timing)
            if p.extra:
                extra = p.extra()
        finally:
            if p.dispose:
                p.dispose()
    row = {
        "name": w.name,
        "kind": w.kind,
        "shape": w.shape,
        "dtype": w.dtype,
        **summarize(samples),
        "flops": w.flops,
        "bytes": w.bytes,
        "timing": "wall",
        "check": check,
    }
    if extra:
        row["extra"] = extra
    return row


# ---- compiled programs ----

_NOT_KERNELS = {
    "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all",
    "partition-id", "replica-id", "opt-barrier", "add-dependency",
}


def kernel_count(hlo_text: str) -> int:
    """Kernels in an optimized HLO module: ENTRY's instructions that launch work, counting into call()s (command buffers).

    An estimate for the table's notes: XLA may still split or merge launches when it runs the thunks.
    """
    import re

    computations = {}
    entry = None
    current = None
    for line in hlo_text.splitlines():
        header = re.match(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$", line)
        if header and not line.startswith(" "):
            current = header.group(2)
            computations[current] = []
            if header.group(1):
                entry = current
            continue
        if current is not None and line.strip() == "}":
            current = None
            continue
        if current is not None:
            computations[current].append(line)

    def count(name, depth=0) -> int:
        total = 0
        for line in computations.get(name, []):
            op = re.search(r"=\s.*?\s?([a-z][\w\-]*)\(", line)
            if not op or op.group(1) in _NOT_KERNELS:
                continue
            called = re.search(r"to_apply=%?([\w.\-]+)", line)
            if op.group(1) == "call" and called and depth < 4:
                total += count(called.group(1), depth + 1)
            else:
                total += 1
        return total

    return count(entry) if entry else 0


def memory_figures(compiled) -> dict:
    """compiled.memory_analysis() as the row's memory_analysis (the names of jaxon's Row)."""
    m = compiled.memory_analysis()
    if m is None:
        return {}
    names = {
        "temp_bytes": "temp_size_in_bytes",
        "argument_bytes": "argument_size_in_bytes",
        "output_bytes": "output_size_in_bytes",
        "alias_bytes": "alias_size_in_bytes",
        "host_temp_bytes": "host_temp_size_in_bytes",
        "peak_bytes": "peak_memory_in_bytes",
    }
    return {ours: getattr(m, theirs, None) for ours, theirs in names.items()}


def peak_bytes_in_use():
    """The device's peak bytes in use in this process (the workload's own in an isolated child), or None."""
    import jax

    stats = jax.devices()[0].memory_stats()
    return stats.get("peak_bytes_in_use") if stats else None
