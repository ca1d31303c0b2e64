#!/usr/bin/env bash
# Session 53, call 5 (H200). build-device = 2da7e26 plus R.diff (uncommitted: LayerNorm's rows in
# phase of 1025-2047 take a phased prefetching block of a slot a thread with shared sums, as
# RMSNorm's 960-2047); v/old = 2da7e26's normjit (the session's rules). 1. A/B, bench --graph,
# M·N = 64 Mi, two rounds: LayerNorm odd 1025-2047, bf16 and fp16, fp32 and 16-bit γ.
# 2. BackwardFewGroups at 1201 and Tuning.PhasedRowsInEveryBlockShapeMatchTheReference with R.
set -uo pipefail
B=build-device
scripts/gpu-environment.sh $B > $OUT/environment.txt 2>&1
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  lnR "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 1025,1201,1409,1473,1535,1601,1793,2001,2047" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='EveryN/BackwardFewGroups.*/N1201:Tuning.PhasedRowsInEveryBlockShapeMatchTheReference' \
  BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | head -20
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-160
tar czf $OUT/call5-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
