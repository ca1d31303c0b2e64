#!/usr/bin/env bash
# Session 61, call 3 (H200). build-device: 75aaa9b (the parallel-norms rule at 13825-16384 bf16
# and the forward's LayerNorm fp32-γ clusters holding γ instead of prefetching). v/old: 7e23c8a.
# 1. The whole GPU suite, 16 shards.
# 2. A/B old vs new, bench --forward --graph, 65536-262144, bf16 and fp16, fp32 and 16-bit γ,
#    both kinds (RMSNorm and 16-bit γ: the control, configs unchanged).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT/logs timeout 420 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
grep -hE '^\[ +OK \]' $OUT/logs/gpu-tests*.txt | wc -l
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fwd "--forward --graph --n 65536,131072,262144 --dtypes bf16,fp16 --weights fp32,same" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/fwd-old$r.json $OUT/logs/ab/fwd-new$r.json > $OUT/logs/ab/fwd-cmp$r.txt 2>&1; done
paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/fwd-cmp1.txt | cut -d'|' -f1-3) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/fwd-cmp2.txt | cut -d'|' -f2,4); tail -1 $OUT/logs/ab/fwd-cmp1.txt; tail -1 $OUT/logs/ab/fwd-cmp2.txt
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
