#!/usr/bin/env bash
# Session 50, call 5 (H200). build-device at the final gate rule plus fp16 16-bit γ before the
# norm prefetching in clusters of 16 at 65537-81920; v/old = b1cadb2's normjit (the rule before).
# 1. The gated and fused GPU tests (LongRowsInEachOfTheirClusters now with 73728).
# 2. A/B old -> new, bench --graph, two rounds, fp16 16-bit γ before the norm at 69632-81920.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*:*BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "OK \] .*LongRows" $OUT/gpu-tests.txt
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp16s "--graph --kinds rmsnorm --dtypes fp16 --weights same --n 69632,73728,77824,81920 --fused gate-before" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | grep -v " none " | sed -E 's/threads_per_row=[0-9]+ //; s/vec=8 //; s/registers //' | cut -c1-150
tar czf $OUT/call5-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
