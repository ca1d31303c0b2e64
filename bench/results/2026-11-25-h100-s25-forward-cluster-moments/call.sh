#!/usr/bin/env bash
# Session 25, call 1 (H100): LayerNorm's forward in clusters meeting once (warp- then
# block-shifted moments, ClusterExchange::shifted_moments) and 16-bit LayerNorm rows of
# 32769-262144 in register clusters as RMSNorm's (they were streamed twice). build-device at
# 3457cb2 plus the uncommitted change; hooks: NJ_EXP_CLUSTER_TWO_MEETINGS (the old meetings),
# NJ_EXP_LN16_STREAMED (the old rule), NJ_EXP_LN_512 (16-bit LayerNorm clusters of blocks of at
# most 512 threads). old = both old hooks; new = none; ln512 = NJ_EXP_LN_512.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab $OUT/ab512
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='Forward*' BUILD_DIR=$B OUT=$OUT scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -20
BF="--forward --graph --kinds layernorm --dtypes bf16 --weights fp32 --n 32768,36864,40000,40960,49152,57344,65536,70001,81920,98304,131072,163840,196608,262144"
F32="--forward --graph --kinds layernorm --dtypes fp32 --weights fp32 --n 40960,65536,81920,98304,131072,163840"
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab fwd-bf16 "$BF" fwd-fp32 "$F32" > $OUT/ab-old-new.txt 2>&1
cat $OUT/ab-old-new.txt
scripts/bench-ab.sh $B/normjit $B/v/ln512 $OUT/ab512 fwd-bf16 "$BF" > $OUT/ab-new-512.txt 2>&1
cat $OUT/ab-new-512.txt
tar -C $OUT -czf $OUT/logs.tgz ab ab512 gpu-tests.txt && rm -rf $OUT/ab $OUT/ab512 $OUT/gpu-tests.txt
