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
