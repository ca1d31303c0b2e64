#!/usr/bin/env bash
# Session 34, call 8 (H200). build-device/normjit = a6d2427: the memory-rich rules for aligned 16-bit
# rows of 513-2047 not a multiple of 128 (a warp a row at 513-768; a block of up to 128 threads
# with shared sums at 769-2047) and 800-thread staged blocks of 2 slots for rows aligned to less
# with β (LN 12289-12800). build-device/v/old = a8e56d9 (the staged rows bounded, rules before).
#  1. A/B across the moved ranges, bf16 and fp16.
#  2. Every GPU test (the staged kernels changed in a8e56d9).
#  3. The backward sweep with small-M latency (the standing for issue 3).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  short "--graph --weights fp32 --dtypes bf16,fp16 --n 520,600,712,776,1000,1208,1400,1608,1800,1960,2040" \
  odd12k "--graph --weights fp32 --kinds layernorm --dtypes bf16,fp16 --n 12289,12500,12799" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $? at $SECONDS s"; grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c | head; grep -E "^\[  FAILED  \]" $OUT/gpu-tests.txt | head -20
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((590 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt environment.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt $OUT/environment.txt
