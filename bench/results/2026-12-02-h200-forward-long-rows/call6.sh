#!/usr/bin/env bash
# Session 65, call 6 (H200). build-device: 7242673 (bf16 widened by inline PTX in the forward's
# kernels that form a pre-norm sum). v/old: 78c954c.
# 1. A/B of the forward's fused rows, bf16, two rounds: option-free rows (same source) as the
#    control, the residual and `all` (residual, zero-centred γ, row scale, dropout bits).
# 2. The forward GPU tests (ForwardFused.* among them).
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab
timeout 300 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab \
  fp32w "--forward --graph --dtypes bf16 --weights fp32 --n 4096,8192,10240,12288,14336,16384,32768,4095 --fused residual,all" \
  samew "--forward --graph --kinds layernorm --dtypes bf16 --weights same --n 10240,12288,14336,16384 --fused residual,rowscale,dropout-bits" \
  > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -iE "median|exited|no JSON" $L/ab/ab.txt
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*Forward*' BUILD_DIR=$B OUT=$L/tests timeout 170 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests rc $? at ${SECONDS}s"; grep -E "^shard|FAILED" $OUT/tests.txt | head -30
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $L
