#!/usr/bin/env bash
# Session 62, call 5 (H200). build-device: d87639e (the session's code: forward rows copied ahead,
# RMSNorm's forward clusters of 8, the backward's short fused rows and LN recompute at 4096).
# v/old: 3b5ea1a (call 4's build: before the backward's short fused rows and the forward's
# alignment guard).
# 1. The whole GPU suite, 16 shards.
# 2. A/B old vs new: the short fused rows at 1024 and fp16 parallel norms at 2048 (bench --graph).
set -uo pipefail
B=build-device
mkdir -p $OUT/logs/ab
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT/logs timeout 420 scripts/gpu-run.sh gpu-tests > $OUT/logs/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/logs/gpu-tests*.txt | sort | uniq -c | head; grep -hE '^\[  FAILED  \]' $OUT/logs/gpu-tests*.txt | head; grep -h -B2 -A8 'Failure' $OUT/logs/gpu-tests*.txt | head -30
grep -hcE '^\[ +OK \]' $OUT/logs/gpu-tests.txt
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/logs/ab short "--graph --weights fp32 --dtypes bf16,fp16 --n 1024 --fused none,parallel,residual,gate,gate-before,all,recompute" par "--graph --dtypes bf16,fp16 --n 2048 --fused parallel" > $OUT/logs/ab/ab.txt 2>&1
echo "ab at $SECONDS s"
for s in short par; do for r in 1 2; do python3 bench/compare_bench.py $OUT/logs/ab/$s-old$r.json $OUT/logs/ab/$s-new$r.json > $OUT/logs/ab/$s-cmp$r.txt 2>&1; done
  paste -d'|' <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp1.txt | cut -d'|' -f1-2) <(grep -E "^(layernorm|rmsnorm)" $OUT/logs/ab/$s-cmp2.txt | cut -d'|' -f2,4 | cut -c1-70); tail -1 $OUT/logs/ab/$s-cmp1.txt; tail -1 $OUT/logs/ab/$s-cmp2.txt; done
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $OUT/logs
