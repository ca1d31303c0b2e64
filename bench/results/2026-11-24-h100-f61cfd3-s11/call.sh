#!/usr/bin/env bash
# Session 11, call 1 (f61cfd3): the fused forward's final refit (35e157c, 655b546) against
# exhaustive tuning at N = 32768-131072 (as session 10's call 14), the fused forward's GPU tests
# plain and under initcheck and synccheck, and racecheck over the grid-cluster tests.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 $b/tests/normjit_gpu_tests --gtest_filter='ForwardFused.*' > $o/forward-fused.txt 2>&1; echo "exit $?" >> $o/forward-fused.txt
for tool in initcheck synccheck; do
  timeout 120 $cs --tool $tool --error-exitcode 1 $b/tests/normjit_gpu_tests --gtest_filter='ForwardFused.*' > $o/$tool-forward-fused.txt 2>&1
  echo "exit $?" >> $o/$tool-forward-fused.txt
done
timeout 170 $cs --tool racecheck --error-exitcode 1 $b/tests/normjit_gpu_tests --gtest_filter='BackwardGridCluster*' > $o/racecheck-grid-cluster.txt 2>&1
echo "exit $?" >> $o/racecheck-grid-cluster.txt
for kind in layernorm rmsnorm; do for opts in "--residual" "--residual --dropout bytes" "--rowscale --dropout bits"; do
  for n in 32768 65536 131072; do
    timeout 30 $b/normjit tune --forward --kind $kind $opts --n $n --m $((67108864 / n)) --dtype bf16 --weight-dtype fp32 --exhaustive 2>&1 | grep -E "^(layer|rms)" | cut -c1-400
  done; done; done > $o/tune-forward-refit.txt 2>&1
wc -l $o/tune-forward-refit.txt
for f in $o/forward-fused.txt $o/*check-*.txt; do echo "== $f"; grep -E "^\[  (FAILED|PASSED) |^exit|ERROR SUMMARY|RACECHECK SUMMARY" $f; done
