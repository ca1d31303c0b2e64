#!/usr/bin/env bash
# Session 10, call 12: the fp32 8193-12288 rule against exhaustive tuning (graph replays; 10240
# is not in the sweep), and the three matrix variants call 11 had no time for.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
for kind in layernorm rmsnorm; do for nm in "12288 8192" "10240 8192"; do set -- $nm
  timeout 40 $b/normjit tune --kind $kind --n $1 --m $2 --dtype fp32 --exhaustive 2>&1 | grep -E "^(layer|rms)" | cut -c1-300
done; done > $o/tune-refit.txt 2>&1
timeout 120 $b/tests/normjit_gpu_tests --gtest_filter='AllVariants/BackwardMatrix.*RMSNorm_bf16*:BackwardEdgeCases.*' > $o/gpu-tests-matrix-rest.txt 2>&1; echo "exit $?" >> $o/gpu-tests-matrix-rest.txt
cut -c1-200 $o/tune-refit.txt; grep -E "^\[  (FAILED|PASSED) |^exit" $o/gpu-tests-matrix-rest.txt
