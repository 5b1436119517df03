#!/usr/bin/env bash
# Issue 17 on a lent GPU, one prepared command (after `source .gpu/setup.sh`): the tensor-core GEMM's tests on the
# hardware (PTX fragment layouts, odd shapes, JAXON_GEMM=wgmma, autotune), then the GEMM rows and the tutorial's
# training step beside JAX in the same minute, then the configuration each shape chose. Every step has its own
# timeout and writes under $OUT as it goes.
#   bash bench/gpu/gemm-session.sh      (T_TESTS, T_BENCH: seconds; GEMM_TESTS: test files, GEMM_MATCH: an ava
#   --match pattern; GEMM_ONLY: workload names or prefixes; JAX_JSON: JAX's side from an earlier call, not rerun)
set -uo pipefail
out=${OUT:-/tmp/jaxon-gpu-out}; mkdir -p "$out"
step() { local s=$1; shift; echo "== step $*  (limit ${s}s, $(date -u +%T))"; timeout "$s" "$@"; echo "== exit $? ($(date -u +%T))"; }
cuda=(env JAXON_TEST_PLATFORM=cuda JAXON_PLATFORMS=cuda)
step 25 bash bench/gpu/verify.sh --part env --out "$out" > /dev/null; tail -8 "$out/verify-env.log"
# the PTX layout tests whole, beside the GEMM tests (GEMM_MATCH: ava --match patterns joined by '|')
tests=${GEMM_TESTS:-dist/test/cuda-gemm.test.js dist/test/gemm-autotune.test.js dist/test/mlp.test.js}
match=(); IFS='|' read -ra patterns <<< "${GEMM_MATCH:-}"; for p in "${patterns[@]}"; do match+=(--match "$p"); done
"${cuda[@]}" timeout "${T_TESTS:-130}" npx ava --verbose dist/test/cuda-mma.test.js > "$out/tests-mma.log" 2>&1 &
step "${T_TESTS:-130}" "${cuda[@]}" npx ava --concurrency 4 --verbose $tests "${match[@]}" > "$out/tests.log" 2>&1
wait
grep -E "✘|tests? (passed|failed)|known failure|skipped|todo|Error" "$out/tests-mma.log" "$out/tests.log" | head -30
rows=${GEMM_ONLY:-gemm_bf16_4096,gemm_bf16_8192,gemm_f32_4096,mlp_gelu,tutorial_baseline}
if [ -n "${JAX_JSON:-}" ]; then
  # JAX's side from an earlier call on the same kind of card (named in the record), to spend the loan on jaxon's side
  mkdir -p "$out/bench"
  step "${T_BENCH:-200}" "${cuda[@]}" node dist/bench/gpu-suite.js --sizes full --only "$rows" --jax "$JAX_JSON" --out "$out/bench/jaxon.json" --append-md "$out/bench/table.md" > "$out/bench/verify-bench.log" 2>&1
else
  step "${T_BENCH:-200}" bash bench/gpu/verify.sh --part bench --only "$rows" --out "$out/bench" > /dev/null
fi
tail -14 "$out/bench/verify-bench.log" 2>/dev/null
step 40 "${cuda[@]}" node -e 'import("./dist/lib/index.js").then((jax) => { const { numpy: jnp } = jax; for (const [dt, n] of [["bfloat16", 4096], ["bfloat16", 8192], ["float32", 4096]]) { const a = jnp.ones([n, n], { dtype: dt }); const k = jax.jit(jnp.matmul).lower(a, a).compile().kernels().find((k) => k.name.startsWith("dot")); console.log(dt, n, k.source.split("\n").filter((l) => l.startsWith("// decision gemm") || l.startsWith("// jaxon CUDA kernel")).join("\n")); } })' 2>&1 | tee "$out/chosen.txt"
