#!/usr/bin/env bash
# Session 58, call 5 (H200). build-device: the rules of calls 1-4 (wide_cluster_config: clusters
# of 16 at up to 24 elements a thread for many rows past 262144; grid_for_few_rows: the grid at
# few long rows; the grid from the cluster's edge instead of streaming 262145-270335).
# v/old: 4960795 (the session's start).
# 1. GPU tests: BackwardGridCluster.* (the new rule cases among them) and Tuning.*.
# 2. A/B, bench --graph, old then new twice: rows past 262144 at M = 64 Mi / N, and few rows
#    (M = 1-16) of 32768-393216; bf16 and fp32, fp32 γ, both kinds.
# 3. The standing sweep against session 57's call 5.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardGridCluster.*:Tuning.*' BUILD_DIR=$B OUT=$OUT timeout 170 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  past "--graph --dtypes bf16,fp32 --weights fp32 --n 262145,262152,270328,327680,393216,458752" \
  few "--graph --dtypes bf16,fp32 --weights fp32 --m 1,2,4,8,16 --n 32768,65536,131072,262144,393216" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 280 scripts/gpu-standing.sh bench/results/2026-12-01-h200-recompute-row-top/call5 > $OUT/standing-run.txt 2>&1
echo "standing exit $? at $SECONDS s"
tail -30 $OUT/standing-run.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/standing-*.txt $OUT/standing-*-again.json $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
