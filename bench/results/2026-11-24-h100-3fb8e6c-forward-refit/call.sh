#!/usr/bin/env bash
# Session 10, call 14: the fused forward's refit against exhaustive tuning (as call 13, at the
# shapes the new rule takes: N = 32768, 65536, 131072), and the forward's fused GPU tests.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for kind in layernorm rmsnorm; do for opts in "--residual" "--residual --dropout bytes" "--rowscale --dropout bits"; do
  for n in 32768 65536 131072; do
    timeout 30 $b/normjit tune --forward --kind $kind $opts --n $n --m $((67108864 / n)) --dtype bf16 --weight-dtype fp32 --exhaustive 2>&1 | grep -E "^(layer|rms)" | cut -c1-400
  done; done; done > $o/tune-forward-refit.txt 2>&1
timeout 100 $b/tests/normjit_gpu_tests --gtest_filter='ForwardFused.*' > $o/forward-fused.txt 2>&1; echo "exit $?" >> $o/forward-fused.txt
wc -l $o/tune-forward-refit.txt; grep -E "^\[  (FAILED|PASSED) |^exit" $o/forward-fused.txt
