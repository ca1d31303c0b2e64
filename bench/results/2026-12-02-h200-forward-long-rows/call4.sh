#!/usr/bin/env bash
# Session 65, call 4 (H200). build-device: call 3's rule with RMSNorm's 4-byte slots (odd N)
# back on session 63's rule (their 1024-thread blocks spill; call 3: 0.65-0.98x at 200003 and
# 250001). v/old: 9f8d1b8.
# 1. A/B at N = 2 mod 4 (8-byte slots, which the rule takes too; not timed before).
# 2. The forward GPU tests.
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab \
  two "--forward --graph --dtypes fp32 --n 180002,200002,229378,250002 --m 1,16,24,40,64,96" \
  twobig "--forward --graph --dtypes fp32 --n 180002,200002,229378,250002" \
  odd "--forward --graph --kinds rmsnorm --dtypes fp32 --n 200003,250001 --m 16,40,96" > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -iE "median|exited|no JSON" $L/ab/ab.txt
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*Forward*' BUILD_DIR=$B OUT=$L/tests timeout 170 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests rc $? at ${SECONDS}s"; grep -E "^shard|FAILED" $OUT/tests.txt | head -30
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $L
