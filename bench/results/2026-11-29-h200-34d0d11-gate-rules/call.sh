#!/usr/bin/env bash
# Session 33, call 2 (H200). build-device/normjit = main with the gate's rules refitted to call 1's
# exhaustive tuning (codegen/launch_config.cpp: the block of eighths at 2048; prefetching after the
# norm at 2561-3072; before the norm sums in registers up to 2560; prefetching before the norm in
# blocks of up to 640 threads; a pair of blocks of 16 after the norm at 16385-24576; fp16's pair
# after the norm from beyond 12288). build-device/v/old = dfa438f (call 1's binary).
#  1. A/B of the gate, bf16 and fp16, RMS fp32 γ, across the moved ranges.
#  2. Exhaustive tuning where the gate has not been tuned with the approximate σ(z) (data for
#     the next rules: before the norm 16384-32768, fp16 before the norm 2048-5120, bf16 after 12288).
#  3. The backward sweep with small-M latency (the standing for issue 3).
set -uo pipefail
B=build-device
NB="--graph --kinds rmsnorm --weights fp32 --fused gate,gate-before"
mkdir -p $OUT/ab
timeout 260 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  gate "$NB --dtypes bf16 --n 1536,2048,2560,3072,4608,5120,6144,16392,20480,24576" \
  gate16 "$NB --dtypes fp16 --n 1536,2048,3072,5120,12288,16392,20480,24576" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
BUILD_DIR=$B timeout 120 scripts/tune-compare.sh $OUT/tune --until 60 \
  rmsnorm:bf16:{16384,20480,32768}:gate-before rmsnorm:fp16:{2048,3072,5120,20480}:gate-before \
  rmsnorm:bf16:12288:gate > /dev/null 2>&1
echo "tune-compare: exit $? at $SECONDS s"; tail -2 $OUT/tune/compare.txt
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((580 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
tar -C $OUT -czf $OUT/logs.tgz ab tune && rm -rf $OUT/ab $OUT/tune
