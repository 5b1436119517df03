"""The seed tutorial's programs as workloads of the GPU benchmark suite, JAX's side.

JAX's "Memories and Host Offloading" tutorial, whose TypeScript port is
examples/host-offloading.ts (jaxon's side of these rows: bench/jaxon/tutorial.ts):
jit(grad(scan)) of 10 layers of x @ w1 @ w2 as the baseline, with activation
offloading (remat with save_and_offload_only_these_names), and with parameter
offloading (weights in pinned_host, each layer's put on the device inside the
scan); the 4-layer Adam step with and without optimizer-state offloading; and
the compile time of the baseline, cold (empty persistent compilation cache) and
warm, each in a fresh process. Step rows carry memory_analysis() and the
device's peak bytes in use (the workload's own when run.py isolates it).

python3 tutorial.py --compile-child SIZES CACHE_DIR is the child that times one compile.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

from common import Prepared, Workload, block, delete_tree, jax_leaves, memory_figures, peak_bytes_in_use, random_normal, workload_spec


def optax_module():
    """optax when installed, else the same chain/adam in mini_optax.py."""
    try:
        import optax

        return optax
    except ImportError:
        import mini_optax

        return mini_optax


# ---- activation and parameter offloading (the tutorial's programs) ----

def two_layers(x, w):
    w1, w2 = w
    y = x @ w1
    return y @ w2, None


def scanned(w, x):
    import jax
    import jax.numpy as jnp

    result = jax.lax.scan(two_layers, x, w)[0]
    return jnp.sum(result)


def layer_name(x, w):
    from jax.ad_checkpoint import checkpoint_name

    w1, w2 = w
    x = checkpoint_name(x, "x")
    y = x @ w1
    return y @ w2, None


def offload_policy():
    """No values saved on the device; activations named "x" offloaded to pinned host memory."""
    import jax

    return jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["x"], offload_src="device", offload_dst="pinned_host")


def scanned_with_policy(layer):
    def f(w, x):
        import jax
        import jax.numpy as jnp

        remat_layer = jax.remat(layer, policy=offload_policy(), prevent_cse=False)
        result = jax.lax.scan(remat_layer, x, w)[0]
        return jnp.sum(result)

    return f


def hybrid_layer(s_dev):
    """The layer whose weights live in pinned_host and are put on the device first."""
    def layer(x, w):
        import jax
        from jax.ad_checkpoint import checkpoint_name

        w1, w2 = jax.tree.map(lambda v: jax.device_put(v, s_dev), w)
        x = checkpoint_name(x, "x")
        y = x @ w1
        return y @ w2, None

    return layer


# ---- optimizer-state offloading ----

def make_optimizer():
    optax = optax_module()
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adam(learning_rate=0.1))


def gelu(x):
    import jax.numpy as jnp

    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x**3)))


def forward(params, x):
    for i in range(1, 5):
        x = gelu(x @ params[f"w{i}"])
    return x


def compute_loss(params, inputs):
    import jax
    import jax.numpy as jnp

    outputs = forward(params, inputs)
    loss = jnp.mean((outputs - inputs) ** 2)
    l2 = sum(jnp.sum(w**2) for w in jax.tree.leaves(params))
    return loss + 0.001 * l2


def train_step(optimizer):
    def step(params, opt_state, inputs):
        import jax

        grads = jax.grad(lambda p: compute_loss(p, inputs))(params)
        updates, new_opt_state = optimizer.update(grads, opt_state, params)
        return optax_module().apply_updates(params, updates), new_opt_state

    return step


def offloaded_train_step(optimizer, s_dev):
    def step(params, opt_state, inputs):
        import jax

        grads = jax.grad(lambda p: compute_loss(p, inputs))(params)
        opt_state = jax.device_put(opt_state, s_dev)
        updates, new_opt_state = optimizer.update(grads, opt_state, params)
        return optax_module().apply_updates(params, updates), new_opt_state

    return step


# ---- workloads ----

def activation_inputs(t: dict):
    """Random weights scaled by fan-in (10 layers stay finite) and a random input."""
    w1 = random_normal([t["layers"], t["width"], t["hidden"]], "float32", 1 / math.sqrt(t["width"]))
    w2 = random_normal([t["layers"], t["hidden"], t["width"]], "float32", 1 / math.sqrt(t["hidden"]))
    return (w1, w2), random_normal([t["batch"], t["width"]])


def all_finite(tree):
    import jax
    import jax.numpy as jnp

    # pinned_host outputs (gradients of host weights, offloaded state) are checked on the device; a Device alone as
    # the target keeps the memory kind in JAX 0.11 ("Memory kind mismatch"), so the sharding names 'device'
    on_device = jax.sharding.SingleDeviceSharding(jax.devices()[0], memory_kind="device")
    for leaf in jax_leaves(tree):
        if not bool(jnp.all(jnp.isfinite(jax.device_put(leaf, on_device)))):
            return f"non-finite values in a {leaf.dtype}{list(leaf.shape)} output"
    return None


def close_to(tree, reference):
    import jax
    import jax.numpy as jnp

    on_device = jax.sharding.SingleDeviceSharding(jax.devices()[0], memory_kind="device")
    for i, (leaf, ref) in enumerate(zip(jax_leaves(tree), jax_leaves(reference))):
        if not bool(jnp.allclose(jax.device_put(leaf, on_device), ref, rtol=1e-4, atol=1e-5)):
            return f"gradient {i} differs from the baseline program's"
    return None


def activation_workloads(t: dict) -> list:
    flops = 12 * t["layers"] * t["batch"] * t["width"] * t["hidden"]  # grad of two matmuls per layer, as model FLOPs
    shape = f"L{t['layers']} {t['batch']}x{t['width']} h{t['hidden']}"

    def program(name, variant):
        def prepare():
            import jax
            import numpy as np

            mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("x", "y"))
            s_dev = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x", "y"), memory_kind="device")
            s_host = s_dev.with_memory_kind("pinned_host")
            w, x = activation_inputs(t)
            baseline = jax.jit(jax.grad(scanned))
            reference = None if variant == "baseline" else baseline(w, x)
            if variant == "baseline":
                f = baseline
            elif variant == "activation":
                f = jax.jit(jax.grad(scanned_with_policy(layer_name)))
            else:
                f = jax.jit(jax.grad(scanned_with_policy(hybrid_layer(s_dev))))
            weights = (jax.device_put(w[0], s_host), jax.device_put(w[1], s_host)) if variant == "parameter" else w

            def check(out):
                return all_finite(out) or (close_to(out, reference) if reference is not None else None)

            def extra():
                return {"memory_analysis": memory_figures(f.lower(weights, x).compile()), "peak_bytes_in_use": peak_bytes_in_use()}

            return Prepared(step=lambda: f(weights, x), check=check, extra=extra,
                            dispose=lambda: delete_tree([w, x, weights, reference]))

        return Workload(name=name, kind="step", shape=shape, dtype="float32", flops=flops, bytes=0, prepare=prepare, isolate=True)

    return [program("tutorial_baseline", "baseline"),
            program("tutorial_activation_offload", "activation"),
            program("tutorial_parameter_offload", "parameter")]


def adam_workloads(t: dict) -> list:
    """The Adam step as a training loop: each step's outputs feed the next (params donated, as in the tutorial)."""
    d = t["dim"]

    def program(name, offloaded):
        def prepare():
            import jax

            device = jax.devices()[0]
            s_dev = jax.sharding.SingleDeviceSharding(device, memory_kind="device")
            s_host = jax.sharding.SingleDeviceSharding(device, memory_kind="pinned_host")
            optimizer = make_optimizer()
            params = {f"w{i}": random_normal([d, d], "float32", 1 / math.sqrt(d)) for i in range(1, 5)}
            inputs = random_normal([d, d])
            state = optimizer.init(params)
            if offloaded:
                state = jax.device_put(state, s_host)
                step = jax.jit(offloaded_train_step(optimizer, s_dev), donate_argnums=(0,), out_shardings=(s_dev, s_host))
            else:
                step = jax.jit(train_step(optimizer), donate_argnums=(0, 1))
            current = {"params": params, "state": state}

            def consume(out):
                delete_tree([current["params"], current["state"]])  # the offloaded step's host state is not donated
                current["params"], current["state"] = out

            def check(out):
                p, st = out
                kinds = sorted({leaf.sharding.memory_kind for leaf in jax_leaves(st)})
                if offloaded and kinds != ["pinned_host"]:
                    return f"optimizer state in {', '.join(kinds)}, expected pinned_host"
                return all_finite(p)

            def extra():
                lowered = step.lower(current["params"], current["state"], inputs)  # lowering donates nothing
                return {"memory_analysis": memory_figures(lowered.compile()), "peak_bytes_in_use": peak_bytes_in_use()}

            return Prepared(step=lambda: step(current["params"], current["state"], inputs), consume=consume, check=check,
                            extra=extra, dispose=lambda: delete_tree([current["params"], current["state"], inputs]))

        return Workload(name=name, kind="step", shape=f"4x{d}x{d}", dtype="float32", flops=24 * d**3, bytes=0,
                        prepare=prepare, isolate=True)

    return [program("adam_step", False), program("adam_step_offloaded", True)]


# ---- compile time, in fresh processes ----

def compile_child(sizes: str, cache_dir: str) -> None:
    """Times the first call of jit(grad(scanned)) (trace, compile, run) with a persistent cache in cache_dir."""
    import jax

    for option, value in (("jax_compilation_cache_dir", cache_dir), ("jax_persistent_cache_min_compile_time_secs", 0.0),
                          ("jax_persistent_cache_min_entry_size_bytes", 0)):
        try:
            jax.config.update(option, value)
        except Exception as error:  # an option this JAX lacks: say so, time anyway
            print(f"compile child: jax.config.update({option!r}) failed: {error}", file=sys.stderr)
    w, x = activation_inputs(workload_spec()["sizes"][sizes]["tutorial"])
    block([w, x])
    start = time.perf_counter()
    block(jax.jit(jax.grad(scanned))(w, x))
    print(json.dumps({"first_call_ms": (time.perf_counter() - start) * 1000.0}))


def first_call_ms(sizes: str, cache_dir: str) -> float:
    here = os.path.dirname(os.path.abspath(__file__))
    # the parent has JAX running and holds its default 75 % of the GPU's memory: a child that preallocates
    # too is left with almost nothing, and cuBLAS then fails to launch (seen on an H100, 2026-11-26/27)
    env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    done = subprocess.run([sys.executable, os.path.join(here, "tutorial.py"), "--compile-child", sizes, cache_dir],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        # the child's own error (an XLA autotuner failure was seen on an H100), not just its exit status
        raise RuntimeError(f"compile child exited with {done.returncode}: {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["first_call_ms"]


def compile_workloads(s: dict, sizes: str) -> list:
    t = s["tutorial"]
    shape = f"L{t['layers']} {t['batch']}x{t['width']} h{t['hidden']}"

    # each pair of runs shares a cache folder, and the two rows share the pairs (whichever row runs first measures them)
    pairs = []

    def measure_pairs():
        if not pairs:
            for _ in range(s["compile"]["samples"]):
                cache_dir = tempfile.mkdtemp(prefix="jax-bench-cache-")
                try:
                    cold = first_call_ms(sizes, cache_dir)
                    pairs.append((cold, first_call_ms(sizes, cache_dir)))
                finally:
                    shutil.rmtree(cache_dir, ignore_errors=True)
        return pairs

    def row(name, warm):
        def measure(timing):
            samples = [pair[1] if warm else pair[0] for pair in measure_pairs()]
            return {"samples": samples, "extra": {"process": "fresh python process per sample",
                                                  "cache": "the persistent cache a cold run filled" if warm else "empty persistent cache"}}

        return Workload(name=name, kind="compile", shape=shape, dtype="float32", flops=0, bytes=0, measure=measure)

    return [row("compile_cold", False), row("compile_warm", True)]


def tutorial_workloads(s: dict, sizes: str) -> list:
    return activation_workloads(s["tutorial"]) + adam_workloads(s["tutorial"]) + compile_workloads(s, sizes)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--compile-child":
    compile_child(sys.argv[2], sys.argv[3])
