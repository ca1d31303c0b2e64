#!/usr/bin/env bash
# Session 20, call 4: γ held in shared memory by the shared-sums rows (d83fc1c) against
# 4d2c889 (the same heuristics, γ from L1) in A/B: the option-free shared-sums shapes of the
# sweep and model widths, bf16 (fp16 at three), and fused sets, fp32 γ.
set -uo pipefail
b=build-device; o=$OUT; w=$(mktemp -d)
scripts/bench-ab.sh $b/v/old $b/normjit $w \
  none "--graph --dtypes bf16 --weights fp32 --n 2560,3584,5120,7168,8192,10240,12288,14336,32768,65536,131072,262144" \
  fp16 "--graph --dtypes fp16 --weights fp32 --n 5120,12288,65536" \
  fused "--graph --dtypes bf16 --weights fp32 --n 5120,12288,14336 --fused residual,recompute,all,gate" > $o/ab.txt 2>&1
echo "ab done at ${SECONDS}s"
tar -C $w -czf $o/results.tgz .
ls -la $o
