#!/usr/bin/env bash
# Session 40, call 4 (H200): build-device = the commit of this script (the phased rule narrowed
# after call 3's A/B: held γ and β only; LayerNorm in 1025-2048, 4000-5120, 16385-20480). The
# A/B again (against 2b5657c, as call 3), then the whole GPU suite (16 shards).
set -uo pipefail
B=build-device
N=1001,2001,3001,4095,5003,6001,8191,12289,16385,20001,30001
scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  bf16 "--forward --graph --dtypes bf16 --weights fp32 --n $N" \
  fp16 "--forward --graph --dtypes fp16 --weights same --n 1001,2001,4095,5003,12289,20001,30001" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; grep -E "median|^copy" $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 470 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu suite exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -c '^\[       OK \]' $OUT/gpu-tests.txt
grep -E "^\[  FAILED  \]|Failure|worst" $OUT/gpu-tests.txt | head -30
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
