#!/usr/bin/env bash
# Call B of session 8: packed 16-bit rows under shared sums: shared sums (tests of every shared-sums candidate, exhaustive tuning of
# the shapes below 85%), and the GPU subsets the session-7 review refactors touched.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(cat $b/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/environment.txt
cat $o/environment.txt
t0=$(date +%s)
timeout 150 $b/tests/normjit_gpu_tests --gtest_filter='BackwardSharedSums.*' > $o/gpu-tests-shared-sums.txt 2>&1; echo "shared-sums tests rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|Which is|with threads" $o/gpu-tests-shared-sums.txt | head -30
t0=$(date +%s)
timeout 200 $b/normjit tune --exhaustive --shapes bench/tune-shared-sums.toml > $o/tune-shared-sums.txt 2>/dev/null; echo "tune rc=$? $(( $(date +%s)-t0 ))s"
grep -vE "^  fit" $o/tune-shared-sums.txt | cut -c1-250
t0=$(date +%s)


