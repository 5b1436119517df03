#!/usr/bin/env bash
# One command turns a lent GPU into a record: bash bench/gpu/verify.sh --part env|native|tests|sanitize [--out DIR]
# Run after `source .gpu/setup.sh` (see ../shared/gpu/pack.sh). Logs go to $OUT (or --out).
set -uo pipefail
part=env; out=${OUT:-/tmp/jaxon-gpu-out}
while [ $# -gt 0 ]; do case "$1" in --part) part=$2; shift 2;; --out) out=$2; shift 2;; *) echo "verify: unknown argument $1" >&2; exit 2;; esac; done
mkdir -p "$out"
log() { echo "== $*"; }
run_env() {
  log "env $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvcc --version 2>&1 | tail -1
  echo "node $(node -v 2>&1)"; lscpu 2>/dev/null | grep -m1 'Model name'; nproc
  python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' 2>&1 | tail -1
  node -e 'import("./dist/lib/runtime/cuda.js").then(m => console.log("jaxon cudaAvailability:", JSON.stringify(m.cudaAvailability())))' 2>&1
}
run_native() { log "native: cuda-gpu tests"; npx ava dist/test/cuda-gpu.test.js --verbose 2>&1; }
run_tests() { log "tests: npm run test:gpu"; JAXON_TEST_PLATFORM=cuda npx ava --verbose 2>&1; }
run_sanitize() {
  for tool in memcheck racecheck synccheck; do
    log "sanitize $tool"
    compute-sanitizer --tool $tool --target-processes all --print-limit 20 npx ava dist/test/cuda-gpu.test.js 2>&1 | tail -40
  done
}
case $part in
  env) run_env ;; native) run_native ;; tests) run_tests ;; sanitize) run_sanitize ;;
  *) echo "verify: unknown part $part (env, native, tests, sanitize)" >&2; exit 2 ;;
esac 2>&1 | tee -a "$out/verify-$part.log"
