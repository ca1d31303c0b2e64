#!/usr/bin/env bash
# Session 49, call 5 (H200). build-device at the commit that holds γ for dz for bf16 rows only;
# v/old = 7aab213's normjit.
# 1. The gated GPU tests again (fp16 rows read γ again for dz).
# 2. A/B old -> new, two rounds, the shapes whose registers or spills moved and call 3 did not
#    time: fp16 with fp32 γ, and bf16 at 10240, 14336, 20480.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*BackwardGated*:*ForwardFused*:*BackwardFused*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fp16 "--graph --kinds rmsnorm --dtypes fp16 --weights fp32 --n 4096,10240,12288,16384,65536 --fused gate,gate-before" \
  bf16 "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 10240,14336,20480 --fused gate,gate-before" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | cut -c1-120
tar czf $OUT/call5-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab
