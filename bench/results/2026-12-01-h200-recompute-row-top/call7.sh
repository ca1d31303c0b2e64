#!/usr/bin/env bash
# Session 57, call 7 (H200). build-device: the session's final code (the fp32 4097-5120 recompute
# rule included). The recompute's, early weights' and phased rows' GPU tests on it.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:*BackwardEarlyWeights*:BackwardPhasedRows.*:BackwardFusedFamilies.*' BUILD_DIR=$B OUT=$OUT timeout 100 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -30
grep -h "^\[       OK" $OUT/gpu-tests*.txt | sed 's/ (.*//' | sort
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call7.tgz -C $OUT logs && rm -rf $OUT/logs
