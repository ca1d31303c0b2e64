#!/usr/bin/env bash
# Session 40, call 1 (H200): build-device = the commit of this script (forward phased rows,
# rebuilt from bench/NOTES.md entry 53's description: that branch was lost). The forward GPU
# tests (ForwardTuning.PhasedRowsMatchTheReference pins phased kernels in every statistics path;
# EveryCandidateMatchesTheReference now includes LN bf16 1001's phased candidates), then normjit
# tune --forward at odd 16-bit N (bf16, fp32 γ, M = 16384), every candidate's time kept.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 220 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -c '^\[       OK \]' $OUT/gpu-tests.txt
grep -E "^\[  FAILED  \]|Failure|worst|candidates checked" $OUT/gpu-tests.txt | head -30
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do for n in 1001 4095 5003 8191 12289; do
  timeout 34 $B/normjit tune --forward --kind $k --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1 | grep -E " time |^(layer|rms)norm"
done; done > $OUT/tune.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm" $OUT/tune.txt | tr -s ' ' | cut -c1-250
