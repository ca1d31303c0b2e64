#!/usr/bin/env bash
# Session 57, call 3 (H200). build-device: the rule (rich_fused_element_rows for the recompute at
# 2305-3328, RMSNorm's 16-bit at 3841-4096, with early_weights), early_weights, the phased-rows
# fix. v/old = 35d3347 (session 56's final code).
# 1. The whole GPU suite. 2. A/B old against new: the recompute over odd N, bf16 and fp16 (fp32
# γ) and fp32, heuristic configs, two rounds.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 420 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -30
grep -hE '^\[  FAILED  \]' $OUT/gpu-tests*.txt | head
mkdir -p $OUT/ab
timeout 150 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  b16 "--graph --dtypes bf16,fp16 --weights fp32 --n 2049,2305,2561,2817,3001,3201,3328,3329,3841,4095 --fused recompute" \
  fp32 "--graph --dtypes fp32 --n 2305,3001,3201,3841,4095 --fused recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "median" $OUT/ab.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
