#!/usr/bin/env bash
# Session 56, call 7 (H200). build-device: the marks (0c66f20) and rich_fused_element_rows as
# narrowed after call 6. v/old = 46e7ee6 (the session's start).
# 1. The fused GPU tests (every family and option, recompute, gate, parallel).
# 2. A/B old against new, bench --graph, two rounds, at the rule's edges.
# 3. The standing sweep against session 55's call 4.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFused*:BackwardGated*:BackwardParallel*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
timeout 200 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 897,1001,2561,3001,3585,4095 --fused none,residual,all,recompute,gate" \
  fp32 "--graph --dtypes fp32 --n 1001,4095,65536 --fused none,all,recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "median" $OUT/ab.txt
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 280 scripts/gpu-standing.sh bench/results/2026-11-30-h200-standing/call4
echo "standing exit $? at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/ab.txt $OUT/standing-*.txt $OUT/standing-*-again.json $OUT/logs/ 2>/dev/null
tar czf $OUT/call7.tgz -C $OUT logs && rm -rf $OUT/logs
