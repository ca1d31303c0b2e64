#!/usr/bin/env bash
# Session 46, call 2 (H200), same build as call 1 (1ece14e). Call 1: rows copied ahead into
# shared memory won RMS bf16 262144 (149.5 against 160.5 us) but lost LN (no room for γ beside
# the stage). Where else do they win? Exhaustive tuning, M·N = 64 Mi, of long rows: RMSNorm
# 32768-262144 bf16 / fp16 / fp32, LayerNorm 131072, and γ in x's dtype (half the shared memory
# for γ: LN 262144 then has room for a stage).
set -uo pipefail
B=build-device
for shape in "rmsnorm 32768 bf16 fp32" "rmsnorm 65536 bf16 fp32" "rmsnorm 131072 bf16 fp32" "rmsnorm 262144 fp16 fp32" \
             "layernorm 131072 bf16 fp32" "layernorm 262144 bf16 same" "rmsnorm 262144 bf16 same" "layernorm 131072 bf16 same" \
             "rmsnorm 131072 fp32 fp32" "rmsnorm 65536 fp32 fp32" "layernorm 65536 fp32 fp32" "rmsnorm 262144 fp32 fp32" \
             "layernorm 262144 fp16 fp32" "rmsnorm 1048576 bf16 fp32"; do
  set -- $shape
  bias=""; [ $1 = rmsnorm ] && bias="--no-bias"
  NORMJIT_CACHE_DIR=$(mktemp -d) timeout 90 $B/normjit tune --kind $1 $bias --n $2 --dtype $3 --weight-dtype $4 \
    --m $((67108864 / $2)) --exhaustive > $OUT/tune-$1-$2-$3-$4.txt 2>&1
  echo "tune $shape exit $? at $SECONDS s"; grep -E '^(layer|rms)norm N=' $OUT/tune-$1-$2-$3-$4.txt | sed 's/ \+/ /g'
done
