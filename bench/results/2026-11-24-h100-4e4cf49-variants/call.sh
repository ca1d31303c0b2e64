#!/usr/bin/env bash
# Session 13, call 12: BackwardFewGroupsVariants (every variant, N = 33, 4096, 65536, over two
# row groups) plain as the warm-up and under all four compute-sanitizer tools; then the full
# matrix plain (its variant list moved to tests/support), 4 shards.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
f='BackwardFewGroupsVariants.*'
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS="racecheck memcheck initcheck synccheck" \
  SANITIZE_FILTER_racecheck="$f" SANITIZE_FILTER_memcheck="$f" SANITIZE_FILTER_initcheck="$f" SANITIZE_FILTER_synccheck="$f" \
  TIMEOUT_racecheck=200 TIMEOUT_memcheck=80 TIMEOUT_initcheck=80 TIMEOUT_synccheck=80 WARMUP_TIMEOUT=60 \
  timeout 470 scripts/gpu-sanitize.sh | tail -7
export NORMJIT_CACHE_DIR=$(mktemp -d)
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout $((585 - SECONDS)) $b/tests/normjit_gpu_tests --gtest_filter='AllVariants/BackwardMatrix.*' > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests-matrix.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED" $o/gpu-tests-matrix.txt
