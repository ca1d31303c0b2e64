#!/usr/bin/env bash
# Session 37, call 6 (H200), build-device = the commit of this script (the session's last code:
# the memory-rich rules for 16-bit slots of four, RMS fp32 slots of two past 13312 and
# LayerNorm's prefetching blocks).
# 1) Every GPU test.
# 2) The backward sweep with small-M latency (bench --latency --graph).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 360 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
grep -c '^\[       OK \]' $OUT/gpu-tests.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((590 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt && rm -f $OUT/gpu-tests.txt
