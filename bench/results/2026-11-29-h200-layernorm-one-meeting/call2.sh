#!/usr/bin/env bash
# Session 42, call 2 (H200): build-device = the commit of this script. LayerNorm's phased forward
# rows meet once on Σx and Σx² (sums_of_powers_moments: a second meeting on Σ(x − mean)² where
# the mean is more than 2 spreads off zero), and the forward rule takes LayerNorm's phased rows as
# RMSNorm's (a hypothesis for tuning to test). The forward GPU tests; tuning of LayerNorm's
# forward at bench's M (M·N = 64 Mi); A/B against 8c3cc25 (bench --forward --graph).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
tar czf $OUT/test-logs.tgz -C $OUT gpu-run.txt gpu-tests.txt environment.txt 2>/dev/null; rm -f $OUT/gpu-run.txt $OUT/gpu-tests.txt
for n in 1001 2001 3001 4095 5003 6001 7001 8191 10001 12289 14001 16385 20001 24577 30001; do
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 30 $B/normjit tune --forward --kind layernorm --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m $((67108864 / n)) 2>&1 | grep "forward N=" >> $OUT/tune.txt
done
echo "tune at $SECONDS s"; cut -c1-250 $OUT/tune.txt
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT \
  bf16 "--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 1001,2001,3001,4095,5003,6001,8191,10001,12289,16385,20001,30001" \
  fp16 "--forward --graph --kinds layernorm --dtypes fp16 --weights same --n 2001,5003,12289" > $OUT/ab.txt 2>&1
echo "ab at $SECONDS s"; cut -c1-150 $OUT/ab.txt
tar czf $OUT/ab-logs.tgz -C $OUT $(cd $OUT && ls *-old*.* *-new*.*) && (cd $OUT && rm -f *-old*.* *-new*.*)
