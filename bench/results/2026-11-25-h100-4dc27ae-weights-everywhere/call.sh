#!/usr/bin/env bash
# Session 24, call 10 (H100): γ in shared memory for every one-row block with shared sums
# (hook NJ_EXP_SW_ALL: with_shared_weights' width condition dropped), against the rule, at
# model widths, bf16 rows with bf16 and fp32 γ; LN bf16 8192 runs 5 points slower with bf16 γ
# than with fp32 γ in the same config, and a kernel bound by issue would lose the conversions.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/normjit $B/v/swall $OUT/ab \
  sw "--graph --dtypes bf16 --weights same,fp32 --n 5120,7168,8192,10240,12288,16384" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/ab.tgz ab && rm -rf $OUT/ab
