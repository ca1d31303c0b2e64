#!/usr/bin/env bash
# Session 59, call 1 (H200). build-device: variant B (parallel norms' packed rows hold dy1 with
# the row and keep g = dy·γ + dy1·γ1 from pass 1 for the dx pass; the row sums take g + g1 once).
# v/old: the session's start (cf16926); v/varA: the same but RMSNorm's one-block rows keep
# reading dy1 again (kHoldsSecondDy as before).
# 1. GPU tests of parallel norms, the fused families, determinism and shared sums.
# 2. A/B old vs B: parallel norms (and the option-free row) at 2048-32768 and 4095.
# 3. A/B A vs B: RMSNorm's parallel norms where the two differ (one block a row).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardParallel.*:BackwardFused*:BackwardDeterminism*:BackwardSharedSums*:BackwardFewGroups*' BUILD_DIR=$B OUT=$OUT timeout 170 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab par "--graph --n 2048,4096,8192,12288,16384,32768,4095 --dtypes bf16 --weights fp32,same --fused parallel" 2>&1 | tail -3
echo "ab1 at $SECONDS s"
scripts/bench-ab.sh $B/v/varA $B/normjit $OUT/ab rmsAB "--graph --kinds rmsnorm --n 1024,2048,3072,4095,4096,5120,8192 --dtypes bf16 --weights fp32 --fused parallel" 2>&1 | tail -3
echo "ab2 at $SECONDS s"
for f in $OUT/ab/par $OUT/ab/rmsAB; do python3 bench/compare_bench.py $f-old1.json $f-new1.json > $f-cmp1.txt 2>&1; python3 bench/compare_bench.py $f-old2.json $f-new2.json > $f-cmp2.txt 2>&1; done
head -80 $OUT/ab/par-cmp1.txt; head -40 $OUT/ab/rmsAB-cmp1.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call1.tgz -C $OUT logs && rm -rf $OUT/logs
