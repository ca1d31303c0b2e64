#!/usr/bin/env bash
# Session 48, call 3 (H200). build-device: working tree on 10ad28c + the row loop's instruction
# diet (uncommitted when bundled; committed after): PackedSlot::load_if (16-bit rows held packed
# load their slots under a predicate, no element-by-element branch where N % 8 = 0), store_slot
# without its edge branch where N % VEC = 0, and LayerNorm's 16-bit x̂ as one FMA.
# v/old = 1807b69's normjit (session 47's kernels).
# 1. A/B old -> new, two rounds (graph and plain times).
# 2. GPU tests over what changed: every shape of the matrix, numerics, paired rows, rows copied
#    ahead, and the forward (store_slot is shared).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 1024,4096,8192,12288,16384,32768,65536,262144" \
  fp16 "--graph --dtypes fp16 --weights same --n 4096,32768" \
  fp32 "--graph --dtypes fp32 --weights same --n 8192,65536" \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n 4096,32768" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; cat $OUT/ab.txt | grep -vE "^\s*$" | cut -c1-160
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='AllVariants/BackwardMatrix.*:BackwardNumerics.*:Problems/BackwardPairedRows.*:BackwardSharedPrefetch.*:Forward.*' BUILD_DIR=$B OUT=$OUT timeout 280 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A6 Failure $OUT/gpu-tests.txt | head -30; grep -E "^shard" $OUT/tests-run.txt | head -20
tar czf $OUT/call3-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
