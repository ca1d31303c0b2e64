#!/usr/bin/env bash
# Session 13, call 18: after the variant lists moved to tests/support: every BackwardFewGroups test
# and the matrix (full and sanitize mode), plain.
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 400 $b/tests/normjit_gpu_tests --gtest_filter='*BackwardFewGroups*:AllVariants/BackwardMatrix.*' > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
NORMJIT_TEST_MATRIX=sanitize timeout 100 $b/tests/normjit_gpu_tests --gtest_filter='AllVariants/BackwardMatrix.*' > $o/shard-sanitize.txt 2>&1
for f in $o/shard*.txt; do echo "== $(basename $f)"; cat $f; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED|^== " $o/gpu-tests.txt
