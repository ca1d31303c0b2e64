#!/usr/bin/env bash
# Session 49, call 7 (H200). build-device at the gate's 57345-65536 rule; v/old = 7aab213's.
# 1. The gated GPU tests (65536 among their shapes).
# 2. A/B old -> new, two rounds, at 61440 and 65536 (the rule) and 32768 (control).
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*:*BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 32768,61440,65536 --fused gate,gate-before" \
  fp16 "--graph --kinds rmsnorm --dtypes fp16 --weights same --n 61440,65536 --fused gate,gate-before" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | cut -c1-120
tar czf $OUT/call7-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
