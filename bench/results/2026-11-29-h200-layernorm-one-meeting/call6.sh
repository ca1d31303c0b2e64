#!/usr/bin/env bash
# Session 42, call 6 (H200): build-device = the commit of this script. Call 5's four Python
# errors (the forward of rows out of phase launched a backward kernel: their problem codes
# shared bit 47 with the forward's) fixed in Engine::Impl::problem_code. The Python package's
# tests alone, then the whole GPU suite as the time left allows.
set -uo pipefail
B=build-device
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 210 python3 python/tests/run.py > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; tail -4 $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
unset NORMJIT_CACHE_DIR
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 290 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
tar czf $OUT/test-logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null; rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
