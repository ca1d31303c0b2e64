#!/usr/bin/env bash
# Session 34, call 10 (H200): every GPU test at 92a4cf0, the session's last code (call 8 ran them
# at a6d2427, before the rules were narrowed back to staged blocks at some shapes).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
grep -c '^\[       OK \]' $OUT/gpu-tests.txt
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt environment.txt && rm -rf $OUT/gpu-tests.txt $OUT/environment.txt
