#!/usr/bin/env bash
# Session 19, call 4: every GPU test after the gate / parallel / recompute rules of 1025-3072;
# A/B bench against 17a4667 (the rules of call 2) at the widths they change, bf16 and fp16.
set -uo pipefail
b=build-device; o=$OUT
GPU_TEST_SHARDS=8 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
N=1280,1536,1792,2304,2560,3072
scripts/bench-ab.sh $b/v/old $b/normjit $o \
  ln "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n $N --fused parallel,recompute" \
  rms "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n $N --fused gate,gate-before,parallel" > $o/ab.txt 2>&1
gzip -f $o/gpu-tests.txt
cd $o && tar czf results.tgz *.json *-old*.txt *-new*.txt && rm -f *.json *-old*.txt *-new*.txt
