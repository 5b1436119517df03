#!/usr/bin/env bash
# One prepared device command for a short GPU loan (after `source .gpu/setup.sh`): every step has its own
# timeout and writes under $OUT as it goes, so what ran comes back even when the loan ends early.
#   bash bench/gpu/session.sh [budget seconds per step: env,recovery,graphs,tests,bench] [--only workloads]
set -uo pipefail
out=${OUT:-/tmp/jaxon-gpu-out}; mkdir -p "$out"
only=${BENCH_ONLY:-transpose,softmax,compile}
step() { local s=$1; shift; echo "== step $*  (limit ${s}s, $(date -u +%T))"; timeout "$s" "$@"; echo "== exit $? ($(date -u +%T))"; }
step "${T_ENV:-30}" bash bench/gpu/verify.sh --part env --out "$out"
step "${T_RECOVERY:-40}" node bench/gpu/recovery-check.mjs 2>&1 | tee "$out/recovery.txt"
JAXON_TEST_PLATFORM=cuda JAXON_PLATFORMS=cuda step "${T_GRAPHS:-70}" node dist/bench/graph-replay.js 2>&1 | tee "$out/graph-replay.txt"
cp bench/graph-replay.json "$out/graph-replay.json" 2>/dev/null
step "${T_TESTS:-260}" bash bench/gpu/verify.sh --part tests --out "$out" > /dev/null
step "${T_BENCH:-110}" bash bench/gpu/verify.sh --part bench --only "$only" --out "$out" > /dev/null
tail -5 "$out/verify-bench.log" 2>/dev/null
# the tensor-core GEMM against JAX (issue 17 targets: bf16 4096^3 / 8192^3, tf32 4096^3, gelu(x @ w + b)); the first
# run of each shape class autotunes (kept in the kernel cache), and the kernels' headers name the chosen tiling
gemm=${GEMM_ONLY:-gemm_bf16_4096,gemm_bf16_8192,gemm_f32_4096,mlp_gelu}
step "${T_GEMM:-150}" bash bench/gpu/verify.sh --part bench --only "$gemm" --out "$out/gemm" > /dev/null
tail -12 "$out/gemm/verify-bench.log" 2>/dev/null
JAXON_TEST_PLATFORM=cuda JAXON_PLATFORMS=cuda step 30 node -e 'import("./dist/lib/index.js").then((jax) => { const { numpy: jnp } = jax; for (const [dt, n] of [["bfloat16", 4096], ["bfloat16", 8192], ["float32", 4096]]) { const a = jnp.ones([n, n], { dtype: dt }); const k = jax.jit(jnp.matmul).lower(a, a).compile().kernels().find((k) => k.name.startsWith("dot")); console.log(dt, n, k.source.split("\n").filter((l) => l.startsWith("// decision gemm") || l.startsWith("// jaxon CUDA kernel")).join("\n")); } })' 2>&1 | tee "$out/gemm/chosen.txt"
