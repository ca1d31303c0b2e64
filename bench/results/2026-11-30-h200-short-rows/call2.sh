#!/usr/bin/env bash
# Session 52, call 2 (H200). build-device at the rules refit from call 1's A/B (LayerNorm's bf16
# rows with 16-bit γ keep a row a turn up to 1664; rows in phase whose twin is a paired cluster
# are not phased). 1. The whole GPU suite (16 shards). 2. The Python package's GPU tests with the
# time left.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 440 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests.txt | awk '{s[$2" "$3]+=$4} END {for (k in s) print k, s[k]}'
grep -E '^\[  FAILED  \]|^\[  SKIPPED \]' $OUT/gpu-tests.txt | sort | uniq | head -20
grep -B2 -A10 Failure $OUT/gpu-tests.txt | head -60
left=$((585 - SECONDS))
NORMJIT_CACHE_DIR=$(mktemp -d) NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout $left python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python exit $? at $SECONDS s"; tail -15 $OUT/python-tests.txt
gzip $OUT/gpu-tests.txt
