#!/usr/bin/env bash
# Session 19, call 1: fused problems at aligned 16-bit rows of 1025-4095. Session 18's rules
# there (option-free only) took LN bf16 1280 308 -> 147 us; fused problems kept the old
# configs (8-byte vectors, staged blocks). A/B: 783236a (old) against b63ffe0, which gives
# them the same rules; then the forward's fused options at model sizes (new build only).
set -uo pipefail
b=build-device; o=$OUT
N=1280,1536,1792,2304,2560,3072,3584
scripts/bench-ab.sh $b/v/old $b/normjit $o \
  ln "--graph --kinds layernorm --dtypes bf16 --weights fp32 --n $N --fused residual,all,parallel,recompute" \
  rms1 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n $N --fused residual,all,recompute" \
  rms2 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n $N --fused gate,gate-before,parallel" \
  f16 "--graph --dtypes fp16 --weights fp32 --n 1536,2560,3072 --fused residual,gate,parallel" > $o/ab.txt 2>&1
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 150 $b/normjit bench --forward --graph --dtypes bf16 --weights fp32 \
  --n 1280,1536,2048,2304,2560,3072,3584,4096,5120,7168,8192 --fused residual,all,gate,parallel --json $o/fwd-fused.json > $o/fwd-fused.txt 2>&1
echo "forward bench exit $?"
cd $o && tar czf results.tgz *.json *-old*.txt *-new*.txt && rm -f *.json *-old*.txt *-new*.txt
