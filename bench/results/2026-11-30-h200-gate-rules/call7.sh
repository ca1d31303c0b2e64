#!/usr/bin/env bash
# Session 50, call 7 (H200). build-device with the gate after the norm in pairs from 10241
# (16-bit γ prefetching, fp32 γ two slots a thread); v/old = b1cadb2's normjit.
# 1. The gated GPU tests (ManyRowsInEachOfTheirClusters with 11264).
# 2. A/B old -> new, bench --graph, two rounds, at 10752 and 12288, four dtype pairs.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*' BUILD_DIR=$B OUT=$OUT timeout 110 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "OK \] .*ManyRows" $OUT/gpu-tests.txt
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32,same --n 10752,12288 --fused gate" \
  fp16 "--graph --kinds rmsnorm --dtypes fp16 --weights fp32,same --n 10752,12288 --fused gate" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | grep -v " none " | sed -E 's/threads_per_row=[0-9]+ //; s/vec=8 //; s/registers //' | cut -c1-150
tar czf $OUT/call7-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
