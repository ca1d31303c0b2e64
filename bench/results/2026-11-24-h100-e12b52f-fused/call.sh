#!/usr/bin/env bash
# Session 13, call 5 (e12b52f): the fused 4096 rule after call 4's tuning (parallel RMSNorms to
# shared sums, LayerNorm recompute back to the option-free rule): the fused bandwidth at 4096,
# 8192, 32768 (bf16 and fp16, fp32 γ), then every fused-option, gated, parallel, recompute and
# few-groups GPU test (4 shards at once) and the matrix.
# Prediction: RMS parallel 0.60 -> ~0.9 of the option-free row, LN recompute 0.87 -> ~0.89;
# the other sets as in call 3.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 100 $b/normjit bench --dtypes bf16,fp16 --weights fp32 --n 4096,8192,32768 --fused none,residual,all,parallel,gate,gate-before,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench exit $?" >> $o/bench-fused.txt
grep -E "bf16 +fp32 +16384 +4096 " $o/bench-fused.txt | cut -c1-70,200-
f='*BackwardFused*:*BackwardGated*:*BackwardParallel*:*BackwardRecompute*:EveryN/BackwardFewGroups.*:*BackwardSharedSums*:AllVariants/BackwardMatrix.*'
pids=()
for i in 0 1 2 3 4 5; do
  GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i timeout 300 $b/tests/normjit_gpu_tests --gtest_filter="$f" > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3 4 5; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED" $o/gpu-tests.txt | head -40
