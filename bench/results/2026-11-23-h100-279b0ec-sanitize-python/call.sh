#!/usr/bin/env bash
# Call G of session 8: compute-sanitizer memcheck and racecheck over every shared-sums candidate
# (BackwardSharedSums.EverySharedSumsCandidateMatchesTheReference, M·N <= 2^20 for M > 1), then
# the Python package's GPU suite and examples (scripts/gpu-python.sh) on the new kernels.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
f='BackwardSharedSums.EverySharedSumsCandidateMatchesTheReference'
timeout 60 $b/tests/normjit_gpu_tests --gtest_filter="$f" > /dev/null 2>&1  # warm-up: compile into the cache
for tool in memcheck racecheck; do
  t0=$(date +%s)
  NORMJIT_TEST_MATRIX=sanitize NORMJIT_TEST_MAX_ELEMENTS=1048576 timeout 170 $cs --tool $tool --error-exitcode 3 $b/tests/normjit_gpu_tests --gtest_filter="$f" > $o/sanitize-shared-sums-$tool.txt 2>&1
  echo "$tool rc=$? $(( $(date +%s)-t0 ))s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)" $o/sanitize-shared-sums-$tool.txt | head -5
done
t0=$(date +%s)
BUILD_DIR=$b OUT=$o timeout 230 scripts/gpu-python.sh > /dev/null 2>&1; echo "python rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^python:|passed|failed|curves|gpu-python.sh: exit" $o/python.txt | tail -8
