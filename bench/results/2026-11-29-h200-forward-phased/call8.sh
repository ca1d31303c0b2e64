#!/usr/bin/env bash
# Session 40, call 8 (H200): build-device = the commit of this script. Call 7's forward tests
# failed to compile every unphased kernel of realigned slots (the phased x load named a member
# only one-piece slots have; it is now a template only phased kernels instantiate). The forward
# GPU tests again.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -c '^\[       OK \]' $OUT/gpu-tests.txt
grep -E "^\[  FAILED  \]|Failure|candidates checked" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
