#!/usr/bin/env bash
# Session 65, call 3 (H200). build-device: the rule as committed (the fp32 rows past the wide
# blocks in clusters of 8 of 1024 threads with γ held, by waves of clusters: m <= 16 both
# norms, 17-32 rows LayerNorm, 33-64 RMSNorm and LayerNorm past 229376, 128 up both).
# v/old: 9f8d1b8.
# 1. A/B at odd N (4-byte slots, which the rule takes too; calls 1-2 timed N % 4 == 0 only).
# 2. Pinned: the forward's 16-bit 1M rows (64 rows, streamed clusters of 2, 60-65% of copy)
#    in streamed clusters of 4 and 8 (fewer rows in flight: x's second read from L2?).
# 3. The forward GPU tests; 4. the standing against session 64's (fused: session 63's).
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab $L/base
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab \
  odd "--forward --graph --dtypes fp32 --n 180001,200003,229377,250001 --m 1,16,24,40,64,96" \
  oddbig "--forward --graph --dtypes fp32 --n 180001,200003,229377,250001" > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -iE "median|exited|no JSON" $L/ab/ab.txt
PIN_TIMEOUT=60 scripts/bench-pin.sh $L pin1m16 "--forward --dtypes bf16 --weights fp32 --n 1048576" \
  "threads=1024 threads_per_row=1024 vec=8 streamed cluster=4" "threads=1024 threads_per_row=1024 vec=8 streamed cluster=8" > $L/pin1m-rows.txt
PIN_TIMEOUT=60 scripts/bench-pin.sh $L pin1m32 "--forward --dtypes fp32 --n 1048576" \
  "threads=1024 threads_per_row=1024 vec=4 streamed cluster=4" "threads=1024 threads_per_row=1024 vec=4 streamed cluster=8" >> $L/pin1m-rows.txt
cut -c1-150 $L/pin1m-rows.txt
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='*Forward*' BUILD_DIR=$B OUT=$L/tests timeout 170 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests rc $? at ${SECONDS}s"; grep -E "^shard|FAILED" $OUT/tests.txt | head -30
cp bench/results/2026-12-02-h200-forward-held-bias/call1/standing/standing-{backward,forward}.json $L/base/
cp bench/results/2026-12-02-h200-forward-clusters-of-16/standing/standing-fused-{backward,forward}.json $L/base/
BENCH_TIMEOUT=150 BUILD_DIR=$B OUT=$L/standing timeout 290 scripts/gpu-standing.sh $L/base > $OUT/standing.txt 2>&1
echo "standing rc $? at ${SECONDS}s"; tail -25 $OUT/standing.txt | cut -c1-160
rm -rf $L/base
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $L
