#!/usr/bin/env bash
# Session 52, call 1 (H200). build-device at e93b6c4 (a warp a row at 641-1023, paired rows at
# 1025-2047: option-free aligned 16-bit rows leaving a warp's last pass part-empty); v/old =
# b113850's normjit (the rules before). 1. BackwardFewGroups at N = 1000, 1128, 1768 (the new
# configs over two row groups, against the float64 reference). 2. A/B old -> new, bench --graph,
# M·N = 64 Mi, two rounds: aligned rows of 648-2024 (control 1024), and LayerNorm's rows in
# phase of 1281-2047 (their twins' paired clusters are phased).
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='*BackwardFewGroups.*/N1000:*BackwardFewGroups.*/N1128:*BackwardFewGroups.*/N1768' BUILD_DIR=$B OUT=$OUT timeout 120 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "OK \] " $OUT/gpu-tests.txt | head -20
mkdir -p $OUT/ab
A=648,712,744,800,872,960,1000,1016,1024,1032,1128,1200,1296,1384,1512,1640,1768,1960,2024
O=1281,1385,1537,2001,2047
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  rms-bf16 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32,same --n $A" \
  ln-bf16 "--graph --kinds layernorm --dtypes bf16 --weights fp32,same --n $A,$O" \
  fp16 "--graph --kinds rmsnorm,layernorm --dtypes fp16 --weights same --n $A" \
  ln-fp16-odd "--graph --kinds layernorm --dtypes fp16 --weights fp32 --n $O" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-170
tar czf $OUT/call1-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
