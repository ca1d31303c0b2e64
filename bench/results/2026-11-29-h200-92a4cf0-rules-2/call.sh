#!/usr/bin/env bash
# Session 34, call 9 (H200). build-device/normjit = 92a4cf0: call 8's rules narrowed where its A/B lost
# (a warp a row only at 513-640; LayerNorm's fp16 rows up to 1280 staged as before).
# build-device/v/old = a6d2427 (call 8's binary).
#  1. A/B at the narrowed shapes (and neighbours kept), bf16 and fp16.
#  2. The backward sweep with small-M latency at this commit.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  short "--graph --weights fp32 --dtypes bf16,fp16 --n 600,712,776,1000,1208,1400" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 200 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench: exit $? at $SECONDS s"; head -2 $OUT/bench.txt
tar -C $OUT -czf $OUT/logs.tgz ab && rm -rf $OUT/ab
