#!/usr/bin/env bash
# Session 31, call 4 (H200), 2fda4b4: every GPU test on the final code (the row reducer per
# family, the forward's held-weights rule); the backward sweep with small-M latency; the
# forward sweep.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 110 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((460 - SECONDS)) $B/normjit bench --forward --graph --json $OUT/bench-forward.json > $OUT/bench-forward.txt 2>&1
echo "bench forward: exit $? at $SECONDS s"
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt && rm -rf $OUT/gpu-tests.txt $OUT/environment.txt
