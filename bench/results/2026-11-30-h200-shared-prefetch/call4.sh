#!/usr/bin/env bash
# Session 46, call 4 (H200). build-device: on memory-rich devices fp32 rows of 57345-65536 take
# blocks of 16 elements a thread in a cluster of 8 (call 3's tuning: LN 65536 1.13x, RMS 1.09x),
# the search space without fp32 shared-prefetch candidates, and the GPU tests' additions.
# v/old = deaa189 (call 3's build: the RMSNorm rule).
# 1. A/B old -> new, fp32 LN/RMS 57344-65536 (57344 the control) and 98304 (unchanged).
# 2. The whole GPU suite (the KernelLaunch refactor, rows copied ahead, both rules).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp32 "--graph --dtypes fp32 --weights same --n 57344,59392,61440,63488,65536,98304" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -v '^bench-ab' $OUT/ab.txt | tail -32
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 420 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
grep -hE "^\[       OK \] Backward(SharedPrefetch|SharedSums)" $OUT/gpu-tests.txt
tar czf $OUT/call4-logs.tgz -C $OUT ab gpu-run.txt gpu-tests.txt 2>/dev/null; rm -rf $OUT/ab $OUT/gpu-run.txt $OUT/gpu-tests.txt
