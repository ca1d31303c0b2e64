#!/usr/bin/env bash
# Session 39, call 1 (H200): build-device = branch next/phased-rows-2 (main 1e71f99 + phased rows
# with every fix of next/phased-rows). The whole GPU suite, 16 shards, a longer limit than
# session 38's 290 s (which cut it short).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 480 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu suite exit $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/gpu-tests.txt | sort | uniq -c | head -40
grep -E "^\[  FAILED  \]|Failure|worst" $OUT/gpu-tests.txt | head -40
