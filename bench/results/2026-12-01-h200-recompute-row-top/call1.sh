#!/usr/bin/env bash
# Session 57, call 1 (H200). build-device: recompute's γ and β read at the top of each row
# (RowTopWeights, templates/norm_backward.cuh; session 56's untimed patch made a proper change).
# v/old = 35d3347 (session 56's final code).
# 1. The fused GPU tests on the new build. 2. A/B old against new: recompute over odd N, bf16 and
# fp16 (fp32 γ) and fp32, heuristic configs. 3. Every candidate of six recompute shapes on the new
# build (to set beside session 56's call 5, which timed the same shapes on the old kernels).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFused*:BackwardParallel*:BackwardGated*' BUILD_DIR=$B OUT=$OUT timeout 120 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -20
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  b16 "--graph --dtypes bf16,fp16 --weights fp32 --n 897,1001,1537,2561,3001,3585,3841,4095,5003 --fused recompute" \
  fp32 "--graph --dtypes fp32 --n 1001,3001,4095,5003 --fused recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "recompute|median" $OUT/ab.txt | cut -c1-150
while read -r kind dtype n; do
  align=2; [ $dtype = fp32 ] && align=4
  echo "### $kind $dtype $n --recompute-from-output" >> $OUT/tune-progress.txt
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 45 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype fp32 --n $n --align $align \
    --m $(( 67108864 / n )) --recompute-from-output 2>> $OUT/tune-progress.txt | grep " M<=" >> $OUT/tune.txt
  echo "tune $kind $dtype $n at $SECONDS s"
done <<'SHAPES'
layernorm bf16 1537
layernorm bf16 3001
layernorm bf16 4095
rmsnorm bf16 3001
rmsnorm bf16 4095
layernorm fp32 1001
SHAPES
cat $OUT/tune.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
