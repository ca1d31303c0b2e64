#!/usr/bin/env bash
# Session 47, call 4 (H200). build-device at de64ba9: the memory-rich rule for 16-bit rows of
# 12289-16384 (rows copied ahead in a cluster of two or one block; LayerNorm 15361-16384 paired).
# v/old = 0fa6bd3 (session 46; the configs outside the rule have its PTX).
# 1. A/B old -> new, two rounds: bf16 fp32 γ at 14 N of 12288-16384 (the rule's edges and the
#    tuned N), fp16 with fp16 γ at five.
# 2. The rule's configs in the GPU tests: BackwardSharedPrefetch (LN 13312, RMS fp16 14336 added),
#    BackwardPairedRows, BackwardSharedSums.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 12288,12544,12800,13056,13312,13568,13824,14080,14336,14592,14848,15360,15872,16384" \
  fp16 "--graph --dtypes fp16 --weights same --n 12800,13824,14336,14848,16384" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='*BackwardPairedRows.*:BackwardSharedPrefetch.*:BackwardSharedSums.*' BUILD_DIR=$B OUT=$OUT timeout 240 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A6 Failure $OUT/gpu-tests.txt | head -30
tar czf $OUT/call4-logs.tgz -C $OUT ab gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
