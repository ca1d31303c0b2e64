#!/usr/bin/env bash
# Session 39, call 7 (H200): build-device = the commit of this script (phased halves: odd 16-bit
# rows whose aligned twin is one block, from N = 5000 at many rows, as clusters of two blocks of
# shared sums). The whole GPU suite (BackwardMatrix's 5003 at 4096 rows, BackwardPhasedRows'
# 5003 and 8191 and Tuning's pinned halves run them).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 450 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu suite exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -c '^\[       OK \]' $OUT/gpu-tests.txt
grep -E "^\[  FAILED  \]|Failure|worst" $OUT/gpu-tests.txt | head -30
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
