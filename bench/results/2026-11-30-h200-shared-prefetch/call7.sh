#!/usr/bin/env bash
# Session 46, call 7 (H200). build-device: the review's test refactor (the shared-sums and
# rows-copied-ahead tests share one loop, ScratchCacheGpuTest::each_config_matches_reference;
# TheSameBitsTwice at 8192 and 16384, rows copied ahead among them). Kernels as 5128fc3's.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='BackwardSharedSums.*:BackwardSharedPrefetch.*' BUILD_DIR=$B OUT=$OUT timeout 400 \
  scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) |^\[       OK \]|Failure" $OUT/gpu-tests.txt | head -20
tar czf $OUT/call7-logs.tgz -C $OUT gpu-run.txt gpu-tests.txt 2>/dev/null; rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
