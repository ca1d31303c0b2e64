#!/usr/bin/env bash
# Session 39, call 8 (H200): build-device = the commit of this script (phased halves and
# clusters; every GPU test passed on it in call 7), build-device/v/old = main 1e71f99 (no phased rows).
# 1) A/B, two rounds, bench --graph, odd bf16 N of 5003-30001, LN and RMS, fp32 γ.
# 2) The backward sweep with small-M latency (bench --latency --graph): where we stand.
set -uo pipefail
B=build-device
ab=$(mktemp -d)
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $ab \
  odd "--graph --kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 5003,6001,8191,10001,13001,15001,16383,30001" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
cut -c1-200 $OUT/ab.txt | grep -vE "^ *$" | head -44
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((330 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep: exit $? at $SECONDS s"
tar czf $OUT/ab-logs.tgz -C $ab .
