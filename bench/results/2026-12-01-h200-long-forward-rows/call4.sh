#!/usr/bin/env bash
# Session 61, call 4 (H200). build-device: 88be91f: the forward's
# streamed rows read x again from the row's end back. v/old: 75aaa9b (call 3's build).
# Streamed rows (1M; LayerNorm 98304-524288 16-bit; fp32 262144) reread x in pass 2; where the
# rows in flight outgrow L2 (1M: 128 MB) pass 1's last lines are the ones still in L2.
# 1. GPU tests: the forward (Forward.*, ForwardTuning.*, the fused forward).
# 2. A/B old vs new, bench --forward --graph at the streamed N, both kinds, bf16 fp32 γ, fp16
#    fp16 γ, fp32.
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=6 GPU_TEST_FILTER='Forward*:ForwardTuning.*:*ForwardFused*' BUILD_DIR=$B OUT=$OUT/logs timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab fwd "--forward --graph --n 98304,196608,262144,393216,524288,1048576 --dtypes bf16,fp16,fp32 --weights fp32" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/fwd-old$r.json $OUT/logs/ab/fwd-new$r.json > $OUT/logs/ab/fwd-cmp$r.txt 2>&1; done
paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/fwd-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/fwd-cmp2.txt | cut -d'|' -f2,4 | cut -c1-80); tail -1 $OUT/logs/ab/fwd-cmp1.txt; tail -1 $OUT/logs/ab/fwd-cmp2.txt
tar czf $OUT/call4.tgz -C $OUT logs && rm -rf $OUT/logs
