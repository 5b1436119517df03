#!/usr/bin/env bash
# Whether GCC vectorizes a generated-like kernel loop (`#pragma omp parallel for simd`, out[i] = f(in[i]), the
# kernels' flags) for each float math function of cuda/kernels/jaxon_math.h, and for the 10-op chain of
# bench/peers.ts. Prints one line per loop: the function and GCC's -fopt-info-vec-optimized verdict.
# Run from the repository root: bash bench/math/vectorized.sh [extra gcc flags, e.g. -march=x86-64-v2]
set -euo pipefail
flags=(-O3 -std=c11 -fPIC -shared -fopenmp -ffp-contract=off -fno-math-errno)
arch=("${@:--march=native}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
body() {
  cat <<C
#include "jaxon_c.h"
void kernel(void **buffers, const int64_t *params) {
  const int64_t n = params[0];
  float *restrict out0 = (float *)buffers[0];
  const float *restrict in0 = (const float *)buffers[1];
  const float *restrict in1 = (const float *)buffers[2];
  (void)in1;
  #pragma omp parallel for simd if (n > JX_PARALLEL_THRESHOLD)
  for (int64_t i = 0; i < n; i++) {
    const float v0 = in0[i];
    const float w0 = in1[i];
    (void)w0;
    out0[i] = $1;
  }
}
C
}
check() {
  local name=$1 expr=$2
  body "$expr" > "$dir/$name.c"
  local verdict
  verdict=$(gcc "${flags[@]}" "${arch[@]}" -Icuda/kernels -fopt-info-vec-optimized "$dir/$name.c" -o "$dir/$name.so" 2>&1 | grep -o "loop vectorized using [0-9]* byte vectors" | sort -u | tr '\n' ' ' || true)
  local calls
  calls=$(objdump -d "$dir/$name.so" | grep -oE "call.*<[a-z0-9_]+f(@plt)?>" | grep -oE "<[a-z0-9_]+f(@plt)?>" | sort -u | tr '\n' ' ' || true)
  printf '%-10s %s%s\n' "$name" "${verdict:-NOT VECTORIZED}" "${calls:+ calls $calls}"
}
for f in exp exp2 expm1 log log1p tanh sin cos tan asin acos atan sinh cosh asinh acosh atanh cbrt erf; do check "$f" "${f}f(v0)"; done
check logistic '(1.0f / (1.0f + expf(-v0)))'
check pow 'powf(v0, w0)'
check atan2 'atan2f(v0, w0)'
check chain10 'jx_maxf(fabsf(cosf(logf(sqrtf(tanhf(expf(sinf(v0))) + 1.0f)) * 3.0f) - 0.5f), 0.1f)'
