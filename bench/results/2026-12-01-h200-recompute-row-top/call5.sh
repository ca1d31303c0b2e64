#!/usr/bin/env bash
# Session 57, call 5 (H200). build-device: the session's final code: the rule of call 3 widened to
# the recompute at 2049-3584 (call 4's data). v/old = 35d3347 (session 56's final code).
# 1. The recompute's GPU tests. 2. A/B old against new at the widened range, bench --graph, two
# rounds. 3. The standing sweep against session 56's call 7.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:*BackwardEarlyWeights*' BUILD_DIR=$B OUT=$OUT timeout 60 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -30
mkdir -p $OUT/ab
timeout 80 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  b16 "--graph --dtypes bf16 --weights fp32 --n 2049,2177,3329,3457,3583 --fused recompute" \
  fp32 "--graph --dtypes fp32 --n 2113,3457 --fused recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "recompute|median" $OUT/ab.txt | cut -c1-120
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 280 scripts/gpu-standing.sh bench/results/2026-11-30-h200-odd-recompute/call7
echo "standing exit $? at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/standing-*.txt $OUT/standing-*-again.json $OUT/logs/ 2>/dev/null
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
