#!/usr/bin/env bash
# Session 41, call 8 (H200): build-device = the commit of this script. The backward rule from
# call 7's tuning: RMSNorm's phased rows of 6145-12281 in one prefetching block of shared sums.
# A/B against 53e0333 (bench --graph, bf16 fp32 γ, M·N = 64 Mi; 12289 unchanged, a control),
# then the phased GPU tests as time allows.
set -uo pipefail
B=build-device
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  rms "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 6001,7001,8191,9001,10001,11001,12289" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-120 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='Tuning.Phased*:BackwardPhasedRows.*' BUILD_DIR=$B OUT=$OUT timeout 80 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "phased tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null; rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
