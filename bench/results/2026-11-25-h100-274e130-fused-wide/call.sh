#!/usr/bin/env bash
# Session 19, call 7: the fused rules of 4097-16384 against 1ce5e2a (A/B, both runs), bf16 and
# fp16, fp32 γ, M·N = 64 Mi; then the GPU tests of the fused options.
set -uo pipefail
b=build-device; o=$OUT
scripts/bench-ab.sh $b/v/old $b/normjit $o \
  ln "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 5120,7168,8192,10240,12288,14336,16384 --fused parallel,recompute" \
  gate "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 5120,6144,7168,12288,14336,16384 --fused gate,gate-before" \
  rms "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 10240,14336,16384 --fused parallel,residual,all,recompute" > $o/ab.txt 2>&1
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 200 $b/tests/normjit_gpu_tests --gtest_filter='*Fused*:*Gated*:*Parallel*:*Recompute*' > $o/gpu-fused.txt 2>&1; echo "fused GPU tests exit $?"
grep -E "^\[  (PASSED|FAILED)" $o/gpu-fused.txt
gzip -f $o/gpu-fused.txt
cd $o && tar czf results.tgz *.json *-old*.txt *-new*.txt && rm -f *.json *-old*.txt *-new*.txt
