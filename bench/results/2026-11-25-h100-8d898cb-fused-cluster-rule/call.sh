#!/usr/bin/env bash
# Session 26, call 9 (H100): 8d898cb plus an uncommitted experiment switch,
# NJ_EXP_FUSED_CLUSTER_RULE (exp): the refitted cluster rules for the elementwise fused options
# too (residual, zero-centred γ, row scale, dropout; not parallel norms, the gate or recompute),
# against 8d898cb, where those keep the rule before.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
A="--graph --dtypes bf16,fp32 --weights fp32 --n 32768,65536,131072 --fused residual,all"
scripts/bench-ab.sh $B/normjit $B/v/exp $OUT/ab fused "$A" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab && rm -rf $OUT/ab
