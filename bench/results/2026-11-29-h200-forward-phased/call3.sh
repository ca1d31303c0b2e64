#!/usr/bin/env bash
# Session 40, call 3 (H200): build-device = the commit of this script (the forward's phased rule:
# odd 16-bit rows in phase on a memory-rich sm_90 at many rows, one block of 4 (or 2) 16-byte
# slots a thread, γ and β held at the block's phase). A/B of the forward against main before
# phased rows (2b5657c, build-device/v/old), bench --forward --graph, M·N = 64 Mi, two rounds:
# bf16 with fp32 γ, and fp16 with same-dtype γ, at odd N; then the GPU tests of the forward.
set -uo pipefail
B=build-device
N=1001,2001,3001,4095,5003,6001,8191,12289,16385,20001,30001
scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  bf16 "--forward --graph --dtypes bf16 --weights fp32 --n $N" \
  fp16 "--forward --graph --dtypes fp16 --weights same --n 1001,4095,5003,8191,12289,20001" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cat $OUT/ab.txt | cut -c1-170
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
