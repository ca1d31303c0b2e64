#!/usr/bin/env bash
# Session 25, call 2 (H100): the cluster rank bounded for ptxas (cluster_rank_below: the
# forward's LayerNorm 16-bit cluster blocks and the backward's fp32 cluster blocks no longer
# spill), with call 1's change (LayerNorm's forward clusters meet once; 16-bit LayerNorm rows of
# 32769-262144 in register clusters). build-device at 3457cb2 plus the uncommitted change;
# old = NJ_EXP_LN16_STREAMED NJ_EXP_CLUSTER_TWO_MEETINGS NJ_EXP_RANK_UNBOUNDED (3457cb2's code).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='Forward*:BackwardMatrix*:BackwardSharedSums*:BackwardDtypes*' BUILD_DIR=$B OUT=$OUT scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -20
FLN="--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 32768,36864,40000,40960,49152,57344,65536,70001,81920,98304,131072,163840,196608,262144"
FF="--forward --graph --dtypes fp32 --weights fp32 --n 40960,65536,81920,98304,131072,163840"
FRMS="--forward --graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 65536,131072,262144"
BWD="--graph --dtypes bf16,fp32 --weights fp32 --n 32768,65536,131072,262144"
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab fwd-ln16 "$FLN" fwd-fp32 "$FF" fwd-rms16 "$FRMS" bwd "$BWD" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
