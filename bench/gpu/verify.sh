#!/usr/bin/env bash
# One command turns a lent GPU into a record (issue 12):
#   npm run gpu:verify -- --part env|tests|native|sanitize|bench|offload|all [--out DIR] [--only w1,w2]
# Run after `source .gpu/setup.sh` on a GPU host (see ../shared/gpu/pack.sh). Logs and JSON go to $OUT
# (or --out); each part appends to DIR/verify-<part>.log. `tests` runs the suite on the GPU (the
# native CUDA tests alone, since one of them fills the GPU's memory); `bench` runs bench/jax/run.py
# and bench/gpu-suite.js on the same device and joins them into one table (--only: workload prefixes).
set -uo pipefail
part=env; out=${OUT:-/tmp/jaxon-gpu-out}; only=""
while [ $# -gt 0 ]; do case "$1" in --part) part=$2; shift 2;; --out) out=$2; shift 2;; --only) only=$2; shift 2;; *) echo "verify: unknown argument $1" >&2; exit 2;; esac; done
mkdir -p "$out"
log() { echo "== $*"; }
gpu_env() { JAXON_TEST_PLATFORM=cuda JAXON_PLATFORMS=cuda "$@"; }
run_env() {
  log "env $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -1
  echo "node $(node -v 2>&1)"; lscpu 2>/dev/null | grep -m1 'Model name'; nproc
  python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' 2>&1 | tail -1
  node -e 'import("./dist/lib/index.js").then(m => console.log("jaxon:", JSON.stringify(m.environmentInfo())))' 2>&1
}
run_native() { log "native: cuda-gpu tests"; gpu_env npx ava dist/test/cuda-gpu.test.js --verbose 2>&1; }
run_tests() {
  log "tests: the suite on cuda ($(nproc) cores)"
  local files; files=$(ls dist/test/*.test.js | grep -v '/cuda-gpu.test.js$')
  gpu_env npx ava --concurrency "$(( $(nproc) > 8 ? 8 : $(nproc) ))" $files 2>&1 | grep -v '^  ✔'
  run_native
}
run_sanitize() {
  # JAXON_SANITIZE=1: the native tests repeat less and skip filling the GPU (see test/cuda-gpu.test.ts); each tool
  # gets at most ${SANITIZE_TIMEOUT_S:-150} s, so one slow tool cannot eat the part's window.
  for tool in memcheck racecheck synccheck; do
    log "sanitize $tool"
    JAXON_SANITIZE=1 gpu_env timeout "${SANITIZE_TIMEOUT_S:-150}" compute-sanitizer --tool $tool --target-processes all --print-limit 20 \
      node node_modules/ava/entrypoints/cli.mjs dist/test/cuda-gpu.test.js 2>&1 | tail -40
    echo "== sanitize $tool exit ${PIPESTATUS[0]}"
  done
}
run_bench() {
  log "bench: JAX then jaxon on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)"
  local sel=(); [ -n "$only" ] && sel=(--only "$only")
  python3 bench/jax/run.py --sizes full "${sel[@]}" --out "$out/jax.json" 2>&1 | tail -45
  gpu_env node dist/bench/gpu-suite.js --sizes full "${sel[@]}" --jax "$out/jax.json" --out "$out/jaxon.json" --append-md "$out/table.md" 2>&1 | tail -45
}
# the tutorial's programs at full size: step times, memoryAnalysis and measured peak, offloaded or not, beside JAX's
run_offload() { only=${only:-tutorial,adam}; run_bench; node dist/bench/gpu/offload-check.js 10 256 256 1024 7168 2>&1; }
case $part in
  env) run_env ;; tests) run_tests ;; native) run_native ;; sanitize) run_sanitize ;; bench) run_bench ;; offload) run_offload ;;
  all) run_env; run_tests; run_sanitize; run_bench ;;
  *) echo "verify: unknown part $part (env, tests, native, sanitize, bench, offload, all)" >&2; exit 2 ;;
esac 2>&1 | tee -a "$out/verify-$part.log"
