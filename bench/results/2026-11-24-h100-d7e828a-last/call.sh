#!/usr/bin/env bash
# Session 17, call 15 (d7e828a; the last code change is 09ae6d1): every GPU test (8 shards) and the
# Python package's GPU tests, once more after the session's last heuristic change.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
export NORMJIT_CACHE_DIR=$(mktemp -d)
BUILD_DIR=$b OUT=$w GPU_TEST_SHARDS=8 timeout 280 scripts/gpu-run.sh gpu-tests > $w/gpu-run.txt 2>&1
grep -hE "^\[  (FAILED|PASSED) " $w/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED" $w/gpu-tests.txt | head
cp $w/gpu-tests.txt $w/environment.txt $o/
echo "tests done at ${SECONDS}s"
BUILD_DIR=$b OUT=$w timeout $((590 - SECONDS)) scripts/gpu-run.sh python > $w/gpu-run-python.txt 2>&1; echo "python exit $? at ${SECONDS}s"
cp $w/python.txt $o/ 2>/dev/null; grep -E "passed|failed|curves" $o/python.txt | tail -4
