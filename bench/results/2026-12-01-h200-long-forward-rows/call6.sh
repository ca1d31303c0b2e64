#!/usr/bin/env bash
# Session 61, call 6 (H200). build-device: df01c0e (the forward's streamed rows between the
# powers of two). v/old: 88be91f (call 4's build: the reversed pass 2, before that rule).
# 1. GPU tests: the forward (the rule's configs pinned in MemoryRichPrefetchingRowsMatchTheReference).
# 2. A/B old vs new, bench --forward --graph at the rule's N and beside it (65536, 327680: the
#    control), both kinds, bf16 and fp16, fp32 γ.
# 3. The standing sweep of the final code against session 59's call 6.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='Forward*:ForwardTuning.*:*ForwardFused*' BUILD_DIR=$B OUT=$OUT/logs timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fwd "--forward --graph --n 36864,40960,49152,57344,65536,81920,98304,114688,163840,196608,229376,327680 --dtypes bf16,fp16 --weights fp32" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/fwd-old$r.json $OUT/logs/ab/fwd-new$r.json > $OUT/logs/ab/fwd-cmp$r.txt 2>&1; done
paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/fwd-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/fwd-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/fwd-cmp1.txt; tail -1 $OUT/logs/ab/fwd-cmp2.txt
mkdir -p $OUT/standing
BENCH_TIMEOUT=250 BUILD_DIR=$B OUT=$OUT/standing timeout 320 scripts/gpu-standing.sh bench/results/2026-12-01-h200-parallel-held-grad/call6 > $OUT/logs/standing-run.txt 2>&1
echo "standing exit $? at $SECONDS s"; tail -40 $OUT/standing/standing-check.txt
tar czf $OUT/call6.tgz -C $OUT logs standing && rm -rf $OUT/logs $OUT/standing
