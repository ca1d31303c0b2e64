#!/usr/bin/env bash
# Session 56, call 6 (H200). build-device: the marks (0c66f20) and rich_fused_element_rows (blocks
# of 8 elements a thread, two an SM, for fused options on rows of an element of 769-1024 and
# 2561-4096 columns). v/old = 46e7ee6 (the session's start).
# 1. The fused GPU tests (every family and option, recompute, gate, parallel).
# 2. A/B old against new, bench --graph, two rounds: bf16 fp32 γ at odd N in and out of the rule's
#    ranges with every fused set, fp32 at three N.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='BackwardRecompute.*:BackwardFused*:BackwardGated*:BackwardParallel*' BUILD_DIR=$B OUT=$OUT timeout 200 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"
grep -hE '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gpu-tests*.txt | sort | uniq -c | head; grep -h -B2 -A8 'Failure' $OUT/gpu-tests*.txt | head -40
mkdir -p $OUT/ab
timeout 330 scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bf16 "--graph --dtypes bf16 --weights fp32 --n 897,1001,1537,2561,3001,3585,4095 --fused none,residual,all,recompute,gate,parallel" \
  fp32 "--graph --dtypes fp32 --n 1001,3001,4095 --fused none,residual,all,recompute" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
grep -E "median" $OUT/ab.txt
mkdir -p $OUT/logs && mv $OUT/gpu-tests*.txt $OUT/tests-run.txt $OUT/ab $OUT/logs/ 2>/dev/null
tar czf $OUT/call6.tgz -C $OUT logs && rm -rf $OUT/logs
