#!/usr/bin/env bash
# Session 55, call 6 (H200). build-device = the session's final code (the vote for slots of one
# element, shuffles for slots of two). ForwardFused.* and the forward's own tests.
set -uo pipefail
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='ForwardFused.*:Forward.*' BUILD_DIR=build-device OUT=$OUT timeout 100 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED) |Failure' $OUT/gpu-tests*.txt | sort | uniq -c
tar czf $OUT/call6.tgz -C $OUT $(cd $OUT && ls gpu-tests*.txt tests-run.txt) && rm -f $OUT/gpu-tests*.txt
