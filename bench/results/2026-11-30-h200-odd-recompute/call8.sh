#!/usr/bin/env bash
# Session 56, call 8 (H200). build-device: the session's final code: the kernels as at 46e7ee6
# (the marks reverted), rich_fused_element_rows (elementwise options at 769-1024 and 2561-3072,
# the residual alone to 4096, recompute in 16-bit rows of 3841-4096). v/old = 46e7ee6.
# 1. The recompute's GPU tests. 2. A/B old against new, recompute and residual at the rule's edges.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFusedFamilies.*' BUILD_DIR=$B OUT=$OUT timeout 90 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -20
mkdir -p $OUT/ab
timeout 110 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 1001,3001,3585,3841,4095 --fused none,residual,recompute" \
  fp32 "--graph --dtypes fp32 --n 1001,4095 --fused none,recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "recompute|residual|median" $OUT/ab.txt | cut -c1-100
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call8.tgz -C $OUT logs && rm -rf $OUT/logs
