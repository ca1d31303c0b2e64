#!/usr/bin/env bash
# Session 48, call 4 (H200). build-device at the commit after call 3's A/B: the loads' predicate
# not for rows loaded ahead (LN bf16 12288 lost 24% there), store_slot's shortcut only for 16-bit
# slots (LN fp32 65536 lost 5%), LayerNorm's x̂ as before (the FMA form failed constant and N = 1
# rows: x − μ is exactly 0 there, x·rstd − μ·rstd is not). v/old = 1807b69's normjit.
# 1. A/B old -> new, two rounds, at the shapes call 3 moved and the gated fused row that now spills 4 bytes.
# 2. The speed sweep (--latency --graph --json).
# 3. The whole GPU suite, 16 shards.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 5120,12288,16384,32768,65536,262144" \
  fp "--graph --dtypes fp32,fp16 --weights same --n 32768,65536" \
  gate "--graph --kinds rmsnorm --dtypes bf16 --weights fp32 --n 16384 --fused gate" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"; grep -E "^(layer|rms)|median" $OUT/ab.txt | cut -c1-110
NORMJIT_CACHE_DIR=$(mktemp -d) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "bench exit $? at $SECONDS s"; cut -c1-150 $OUT/bench.txt
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout $((590 - SECONDS)) scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' $OUT/gpu-tests.txt | sort | uniq -c | head -30
grep -A8 Failure $OUT/gpu-tests.txt | head -40; grep -E "^shard" $OUT/tests-run.txt | cut -c1-200
tar czf $OUT/call4-logs.tgz -C $OUT ab ab.txt gpu-tests.txt tests-run.txt 2>/dev/null; rm -rf $OUT/ab; gzip -k $OUT/gpu-tests.txt
