#!/usr/bin/env bash
# Session 32, call 1 (H200), 539569c: A/B of branch next/fast-sigmoid (ada7520,
# build-device/v/sig) against main (build-device/normjit) on the gated RMSNorm, backward and
# forward; that branch's gate GPU tests (build-device/v/sig-gpu-tests); every GPU test on main
# (5e6ef0e's reducer selection and the review's commits, never GPU-run as a whole).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 230 scripts/bench-ab.sh $B/normjit $B/v/sig $OUT/ab \
  gate "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 2048,4096,8192,12288,16384,32768 --fused gate,gate-before" \
  gate32 "--graph --kinds rmsnorm --dtypes fp32 --weights fp32 --n 4096,8192,16384 --fused gate,gate-before" \
  fwdgate "--forward --graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 4096,8192,16384 --fused gate,gate-before" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median|copy GB" $OUT/ab.txt | head
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 80 $B/v/sig-gpu-tests --gtest_filter='*Gate*:*gate*' > $OUT/sig-gate-tests.txt 2>&1
echo "sig gate tests: exit $? at $SECONDS s"; grep -E "^\[  (PASSED|FAILED) " $OUT/sig-gate-tests.txt | head
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout $((590 - SECONDS)) scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt sig-gate-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt $OUT/sig-gate-tests.txt
