#!/usr/bin/env bash
# Session 60, call 3 (H200). build-device: parallel_norms_config's clusters of four blocks of two
# slots, two an SM, at 16385-32767 (LayerNorm to 24576). v/old: the session's start (8457dc1).
# 1. GPU tests: parallel norms (the rule's shapes, 18440 with a short last slot), determinism,
#    shared sums.
# 2. A/B old vs new, bench --graph, parallel norms and the option-free row (the control), 16-bit
#    types with fp32 and 16-bit γ, at the rule's N and past it (28672-30720 LayerNorm: unchanged).
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='BackwardParallel.*:BackwardDeterminism*:BackwardSharedSums*' BUILD_DIR=$B OUT=$OUT timeout 150 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab par "--graph --n 17408,18432,20480,22528,24576,26624,28672,30720 --dtypes bf16,fp16 --weights fp32,same --fused parallel" > $OUT/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/ab/par-old$r.json $OUT/ab/par-new$r.json > $OUT/ab/par-cmp$r.txt 2>&1; done
paste -d'|' <(grep -E "parallel|none" $OUT/ab/par-cmp1.txt | cut -c1-120) <(grep -E "parallel|none" $OUT/ab/par-cmp2.txt | awk '{print $NF}'); tail -1 $OUT/ab/par-cmp1.txt; tail -1 $OUT/ab/par-cmp2.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
