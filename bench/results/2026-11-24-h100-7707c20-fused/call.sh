#!/usr/bin/env bash
# Session 13, call 7: the fused rule for clusters up to 32768. The fused bandwidth at 4096, 8192,
# 32768 (bf16 and fp16, fp32 γ); every fused-option, gated, parallel, recompute, few-groups and
# shared-sums GPU test (6 shards); then EveryN/BackwardFewGroups.*/N32768 under racecheck.
# Prediction (from call 6's tuning at bf16 32768): parallel LN 0.62 -> ~0.74, RMS 0.66 -> ~0.75,
# gate 0.54 -> ~0.60, recompute LN 0.71 -> ~0.76, RMS 0.73 -> ~0.79 of the option-free row.
set -uo pipefail
b=build-device; o=$OUT
scripts/gpu-environment.sh $b > $o/environment.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 100 $b/normjit bench --dtypes bf16,fp16 --weights fp32 --n 4096,8192,32768 --fused none,residual,all,parallel,gate,gate-before,recompute --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench exit $?" >> $o/bench-fused.txt
f='*BackwardFused*:*BackwardGated*:*BackwardParallel*:*BackwardRecompute*:EveryN/BackwardFewGroups.*:*BackwardSharedSums*'
pids=()
for i in 0 1 2 3 4 5; do
  GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i timeout 240 $b/tests/normjit_gpu_tests --gtest_filter="$f" > $o/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for i in 0 1 2 3 4 5; do echo "== shard $i"; cat $o/shard$i.txt; done > $o/gpu-tests.txt; rm -f $o/shard*.txt
grep -E "^\[  (FAILED|PASSED) |^\[  FAILED" $o/gpu-tests.txt | head -40
unset NORMJIT_CACHE_DIR
BUILD_DIR=$b OUT=$o SANITIZE_TOOLS=racecheck SANITIZE_FILTER_racecheck='EveryN/BackwardFewGroups.*/N32768' \
  TIMEOUT_racecheck=$((570 - SECONDS - 40)) WARMUP_TIMEOUT=40 timeout $((585 - SECONDS)) scripts/gpu-sanitize.sh | tail -4
