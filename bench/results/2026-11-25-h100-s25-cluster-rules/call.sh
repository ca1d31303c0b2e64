#!/usr/bin/env bash
# Session 25, call 3 (H100): the rules from calls 1-2 — the forward's 16-bit LayerNorm rows in
# register clusters only in 1024-thread blocks (else streamed as before), LayerNorm's forward
# clusters meeting once, the backward's rank bounded only in clusters without shared sums —
# with every GPU test, then A/B against 3457cb2's code (old = NJ_EXP_LN16_STREAMED
# NJ_EXP_CLUSTER_TWO_MEETINGS NJ_EXP_RANK_UNBOUNDED) on every kind of kernel whose PTX the
# change touches: forward LN 16-bit clusters, fused forward LN clusters, backward fp32 clusters
# without shared sums (option-free and fused).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
GPU_TEST_SHARDS=12 BUILD_DIR=$B OUT=$OUT scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
FLN="--forward --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32,same --n 65536,131072,163840,262144"
FFU="--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 32768,65536,131072 --fused residual,all,parallel"
BF="--graph --dtypes fp32 --weights fp32,same --n 16384,24576,32768,40960,65536"
BFU="--graph --dtypes fp32 --weights fp32 --n 24576,65536 --fused residual,parallel,recompute,gate"
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab fwd-ln16 "$FLN" fwd-fused "$FFU" bwd-fp32 "$BF" bwd-fused "$BFU" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
