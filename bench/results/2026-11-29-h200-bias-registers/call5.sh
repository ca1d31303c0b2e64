#!/usr/bin/env bash
# Session 43, call 5 (H200): build-device = the commit of this script. The forward's GPU tests,
# ForwardTuning.PhasedRowsMatchTheReference now also pinning the H200 rule's own LayerNorm blocks
# at 7001, 8191, 10233 (fp16) and 11001 (the unprefetched four-slot blocks and either side).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT/tests timeout 240 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests exit $? at $SECONDS s"; tail -17 $OUT/tests.txt
grep -hE "^\[  FAILED  \]|Failure" $OUT/tests/gpu-tests.txt | head
grep -A3 "PhasedRowsMatchTheReference" $OUT/tests/gpu-tests.txt | head -8
tar czf $OUT/call5-logs.tgz -C $OUT tests && rm -rf $OUT/tests
