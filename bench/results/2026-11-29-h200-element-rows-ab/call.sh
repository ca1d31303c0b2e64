#!/usr/bin/env bash
# Session 35, call 4 (H200): the unaligned prefetch rule narrowed for rows of an element (only
# where 16 a thread would take blocks of 96 or 160 threads). build-device/v/old = 523d0d3
# (call 3's binary: the rule at every N up to 2560), build-device/normjit = this commit.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  rows "--graph --kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32 --n 1001,1025,1201,1505,1537,1800,2001,2049,2300,2505" > $OUT/ab.txt 2>&1
echo "ab: exit $? at $SECONDS s"; grep -E "median" $OUT/ab.txt | head
tar -C $OUT -czf $OUT/logs.tgz ab && rm -rf $OUT/ab
