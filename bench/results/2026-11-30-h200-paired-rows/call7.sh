#!/usr/bin/env bash
# Session 47, call 7 (H200), with the device time left (about 160 s). build-device at the commit
# that restores the unpaired configs' PTX (row statistics and dx's row pointer once a row); the
# paired and rule configs' code moved with it. BackwardPairedRows and the rule's shapes in bench.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='*BackwardPairedRows.*' BUILD_DIR=$B OUT=$OUT timeout 75 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 25 $B/normjit bench --graph --dtypes bf16 --weights fp32 --n 12800,13312,14336,16384 > $OUT/bench-rule.txt 2>&1
echo "bench exit $? at $SECONDS s"; cat $OUT/bench-rule.txt | cut -c1-110
