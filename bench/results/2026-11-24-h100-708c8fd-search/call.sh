#!/usr/bin/env bash
# Session 16, call 14: after the search space's last change (4-wide shared-sums candidates in
# one block only), the GPU tests that run search-space candidates: shared sums, tuning.
set -uo pipefail
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=build-device GPU_TEST_SHARDS=4 GPU_TEST_FILTER='BackwardSharedSums.*:Tuning.*:BackwardMerge.*' \
  timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $OUT/gpu-tests.txt | head
