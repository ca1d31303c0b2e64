#!/usr/bin/env bash
# Session 59, call 4 (H200). build-device: variant B's kernel (call 1) and parallel_norms_config
# (codegen/launch_config.cpp), the rule fitted to calls 2-3's tuning. v/old: the session's start.
# 1. GPU tests: parallel norms (a new case for the rule's shapes), determinism, shared sums.
# 2. A/B old vs new, bench --graph, parallel norms and the option-free row, 16-bit types with
#    fp32 and 16-bit γ, at the rule's N and beside it (5120, 6144, 24576: untimed shapes).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardParallel.*:BackwardDeterminism*:BackwardSharedSums*' BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab par "--graph --n 4096,5120,6144,8192,16384,24576,32768 --dtypes bf16,fp16 --weights fp32,same --fused parallel" > $OUT/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/ab/par-old$r.json $OUT/ab/par-new$r.json > $OUT/ab/par-cmp$r.txt 2>&1; done
grep parallel $OUT/ab/par-cmp1.txt | cut -c1-150; tail -1 $OUT/ab/par-cmp1.txt; tail -1 $OUT/ab/par-cmp2.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $OUT/logs
