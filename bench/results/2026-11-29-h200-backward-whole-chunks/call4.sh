#!/usr/bin/env bash
# Session 41, call 4 (H200): build-device = the commit of this script. The phased forward rule
# now prefetches where call 3's tuning had prefetching blocks ahead (RMSNorm up to 544 threads,
# two slots a thread where those fit; LayerNorm from 9217 at four slots, no blocks bound). The
# forward GPU tests, and the forward A/B against 53e0333 (session 40's rules): bf16 fp32 γ at
# odd N, and fp16 with fp16 γ at some.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt && rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
timeout 300 scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  bf16 "--forward --graph --dtypes bf16 --weights fp32 --n 1001,2001,3001,4095,5003,6001,8191,10001,12289,16385,20001" \
  fp16 "--forward --graph --dtypes fp16 --weights same --n 3001,5003,10001,16385" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-120 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
