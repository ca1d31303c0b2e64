#!/usr/bin/env bash
# Session 29, call 5 (H200): the forward's fp32 register clusters at 128 bytes a thread on a
# memory-rich device. The forward GPU tests (the pinned test runs the new configs); an A/B of the
# forward against 836255d's normjit (build-device/v/old) on fp32 rows of 40960-163840.
set -uo pipefail
B=build-device
GPU_TEST_FILTER='Forward*' GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 110 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "forward GPU tests: exit $? at $SECONDS s"; grep -E "FAILED" $OUT/gpu-run.txt | head -20
mkdir -p $OUT/ab
timeout $((265 - SECONDS)) scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  fwd32 "--forward --graph --dtypes fp32 --weights fp32 --n 40960,49152,65536,98304,131072,163840" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; cut -c1-175 $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt
