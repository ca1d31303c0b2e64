#!/usr/bin/env bash
# Session 26, call 2 (H100): fe93dcc (the backward's clusters meet by posting, the forward's by
# the cluster barrier as at a809c94) plus an uncommitted experiment switch: relaxed =
# NJ_EXP_RELAXED_ARRIVE (the receiver's mbarrier arrival relaxed instead of release). Every GPU
# test (call 1's run was cut by its time limit, 330 s, with 5 of 12 shards reported, all passed).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab $OUT/ab2
GPU_TEST_SHARDS=12 BUILD_DIR=$B OUT=$OUT timeout 400 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
BWD="--graph --dtypes bf16,fp32 --weights fp32 --n 32768,65536,131072,262144"
FUSED="--graph --dtypes bf16 --weights fp32 --n 262144 --fused residual,parallel,recompute"
scripts/bench-ab.sh $B/normjit $B/v/relaxed $OUT/ab bwd "$BWD" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab2 fused "$FUSED" > $OUT/ab2.txt 2>&1
cat $OUT/ab2.txt
tar -C $OUT -czf $OUT/logs.tgz ab ab2 gpu-tests.txt && rm -rf $OUT/ab $OUT/ab2 $OUT/gpu-tests.txt
