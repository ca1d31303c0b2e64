#!/usr/bin/env bash
# Session 45, call 2 (H200). build-device = dae4f23: every backward and forward kernel but the
# grid cluster's a programmatic dependent launch (waiting at its top; the row sums wait before
# they let the column blocks start), and call 1's dependent reduction. v/A = 6f6f777 (call 1's
# A: the reduction alone dependent). v/old = 3511164.
# 1. The new GPU test first (forward + two backwards back to back), then the whole GPU suite.
# 2. A/B A -> new: backward long rows, few rows; forward long rows, few rows.
set -uo pipefail
B=build-device
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/tests/normjit_gpu_tests --gtest_filter='DependentLaunches.*' > $OUT/dependent.txt 2>&1
echo "dependent-launch test exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/dependent.txt
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/A $B/normjit $OUT/ab \
  long "--graph --dtypes bf16 --weights fp32 --n 1024,4096,5003,8192,16384,32768,65536,262144" \
  few "--graph --dtypes bf16 --weights fp32 --n 1024,4096,8192,16384 --m 1,37,199,1024" \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n 1024,4096,8192,16384,32768,262144" \
  fwdfew "--forward --graph --dtypes bf16 --weights fp32 --n 1024,4096,8192 --m 1,37,199" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
tar czf $OUT/call2-logs.tgz -C $OUT ab gpu-run.txt gpu-tests.txt dependent.txt 2>/dev/null; rm -rf $OUT/ab $OUT/gpu-run.txt $OUT/gpu-tests.txt
