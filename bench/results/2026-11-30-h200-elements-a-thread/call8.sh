#!/usr/bin/env bash
# Session 49, call 8 (H200). build-device at the rule giving the gate after the norm γ in shared
# memory in its pair of 1024-thread blocks (15873-16384, fp32 γ); v/old = 7aab213's normjit,
# v/prev = 0948f97's (call 7's build).
# 1. The gated GPU tests.
# 2. A/B prev -> new, two rounds: the gate after the norm, bf16 and fp16 with fp32 γ, at 15880,
#    16000, 16384, and 14336 (control).
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*' BUILD_DIR=$B OUT=$OUT timeout 100 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/prev $B/normjit $OUT/ab \
  gate "--graph --kinds rmsnorm --dtypes bf16,fp16 --weights fp32 --n 14336,15880,16000,16384 --fused gate" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | cut -c1-120
tar czf $OUT/call8-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
