#!/usr/bin/env bash
# Session 32, call 4 (H200): db77f71 (build-device/normjit: the gate after the norm keeps one
# block of 16 below 12288) against afca9b6 (build-device/v/old: the pair from 8193), then the gate
# GPU tests on db77f71.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 100 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  gate "--graph --kinds rmsnorm --weights fp32 --fused gate,gate-before --dtypes bf16,fp16 --n 8200,10240,12288" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 100 $B/tests/normjit_gpu_tests --gtest_filter='*Gate*:*gate*' > $OUT/gate-tests.txt 2>&1
echo "gate tests: exit $? at $SECONDS s"; grep -E "^\[  (PASSED|FAILED) " $OUT/gate-tests.txt | head
tar -C $OUT -czf $OUT/logs.tgz ab gate-tests.txt && rm -rf $OUT/ab $OUT/gate-tests.txt
