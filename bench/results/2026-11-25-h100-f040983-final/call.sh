#!/usr/bin/env bash
# Session 19, call 8: the forward's LayerNorm dropout rule against 1ce5e2a (A/B, both runs),
# then every GPU test at this commit (the backward rules of calls 1-7 and the forward rule).
set -uo pipefail
b=build-device; o=$OUT
scripts/bench-ab.sh $b/v/old $b/normjit $o \
  fwd "--forward --graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 2560,3072,4096,5120,6144,7168,8192 --fused all,dropout-bits,dropout-bytes" > $o/ab.txt 2>&1
GPU_TEST_SHARDS=12 BUILD_DIR=$b scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1; echo "gpu tests exit $?"
grep -E "^shard" $o/gpu-run.txt
gzip -f $o/gpu-tests.txt
cd $o && tar czf results.tgz *.json *-old*.txt *-new*.txt && rm -f *.json *-old*.txt *-new*.txt
