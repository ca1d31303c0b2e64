#!/usr/bin/env bash
# Session 58, call 10 (H200), the last of the device time. build-device: the final code (the
# realigned RMSNorm clusters give way to the grid up to 32 rows; a GPU case for 24 rows added).
# 1. GPU tests: BackwardGridCluster.* and Tuning.*.
# 2. The standing sweep of the final code against session 57's call 5 (the next baseline).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardGridCluster.*:Tuning.*' BUILD_DIR=$B OUT=$OUT timeout 60 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
BENCH_TIMEOUT=200 BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-standing.sh bench/results/2026-12-01-h200-recompute-row-top/call5 > $OUT/standing-run.txt 2>&1
echo "standing exit $? at $SECONDS s"
tail -20 $OUT/standing-run.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/standing-*.txt $OUT/standing-*-again.json $OUT/logs/ 2>/dev/null
tar czf $OUT/call10.tgz -C $OUT logs && rm -rf $OUT/logs
