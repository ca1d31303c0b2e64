#!/usr/bin/env bash
# Session 53, call 3 (H200; two were not lent). build-device
# at the rules' final commit (COMMIT in environment.txt). The whole GPU suite in 16 shards.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 545 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests.txt | awk '{s[$2" "$3]+=$4} END {for (k in s) print k, s[k]}'
grep -E '^\[  FAILED  \]|^\[  SKIPPED \]' $OUT/gpu-tests.txt | sort | uniq | head -20
grep -B2 -A10 Failure $OUT/gpu-tests.txt | head -60
gzip $OUT/gpu-tests.txt
