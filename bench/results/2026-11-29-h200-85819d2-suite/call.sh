#!/usr/bin/env bash
# Session 33, call 4 (H200): every GPU test with γ in shared memory for 16-bit γ of 16-bit rows
# in one block an SM (with_shared_weights), the one rule landed after call 3's whole suite.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt && rm -rf $OUT/gpu-tests.txt $OUT/environment.txt
