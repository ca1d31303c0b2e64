#!/usr/bin/env bash
# Session 47, call 5 (H200). build-device at the rule without RMSNorm's one block at 15361-16384.
# 1. The whole GPU suite (16 shards).
# 2. The backward sweep, bench --latency --graph (M·N = 64 Mi and small M).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 380 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests.txt | awk '{print $1,$2,$3,$4}' | sort | uniq -c
grep -E '^\[  PASSED  \] [0-9]+ test' $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed:", s}'
grep -E '^\[  FAILED  \] [0-9]+ test' $OUT/gpu-tests.txt | awk '{s+=$4} END {print "failed:", s+0}'
grep -A6 Failure $OUT/gpu-tests.txt | head -30
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench exit $? at $SECONDS s"; head -5 $OUT/bench.txt
gzip -f $OUT/gpu-tests.txt
