#!/usr/bin/env bash
# Session 59, call 6 (H200). build-device: the final code. Since call 4: RMSNorm's one-block rows
# of 640-896 threads prefetch (call 5's tuning) and bf16 RMSNorm rows with 16-bit γ keep their
# two-slot blocks (call 4's 0.83-0.98x); kHoldsParallelGrad folded into kHoldsSecondDy (PTX
# identical at four configs). v/old: the session's start.
# 1. GPU tests: parallel norms (the rule's shapes among them), determinism.
# 2. A/B old vs new, RMSNorm parallel norms at 4096-8192 in 16-bit types with fp32 and 16-bit γ.
# 3. The standing sweep against session 58's call 10.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardParallel.*:BackwardDeterminism*' BUILD_DIR=$B OUT=$OUT timeout 120 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab rms "--graph --kinds rmsnorm --n 4096,5120,6144,7168,8192 --dtypes bf16,fp16 --weights fp32,same --fused parallel" > $OUT/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/ab/rms-old$r.json $OUT/ab/rms-new$r.json > $OUT/ab/rms-cmp$r.txt 2>&1; done
paste -d'|' <(grep parallel $OUT/ab/rms-cmp1.txt) <(grep parallel $OUT/ab/rms-cmp2.txt) | awk -F'|' '{split($2,a," "); split($6,b," "); printf "%-40s %7.1f %7.1f %.3f | %7.1f %7.1f %.3f\n", $1, a[1],a[2],a[1]/a[2], b[1],b[2],b[1]/b[2]}'
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-standing.sh bench/results/2026-12-01-h200-grid-edge/call10 > $OUT/standing-run.txt 2>&1
echo "standing exit $? at $SECONDS s"
tail -25 $OUT/standing-run.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/standing-*.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
