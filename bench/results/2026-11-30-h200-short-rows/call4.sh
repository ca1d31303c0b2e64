#!/usr/bin/env bash
# Session 52, call 4 (H200). build-device at the rule for rows of 513-999 aligned to 2 bytes (a
# warp a row of elements); v/old = b113850's normjit (the session's rules before). 1. GPU tests:
# BackwardPhasedRows (now with 745, 999, 1281 at many rows) and
# Tuning.PhasedRowsInEveryBlockShapeMatchTheReference (call 3 ran the suite unfiltered: one
# shard takes no filter). 2. A/B old -> new, bench --graph, M·N = 64 Mi, two rounds, odd N of
# 513-1001 (contiguous rows: in phase); 1001 the control.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=2 GPU_TEST_FILTER='BackwardPhasedRows.*:Tuning.PhasedRowsInEveryBlockShapeMatchTheReference' BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests.txt | head; grep -A8 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/ab
N=513,519,583,647,711,745,767,801,871,935,999,1001
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --kinds rmsnorm,layernorm --dtypes bf16 --weights fp32 --n $N" \
  fp16 "--graph --kinds rmsnorm,layernorm --dtypes fp16 --weights same --n $N" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-150
tar czf $OUT/call4-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
