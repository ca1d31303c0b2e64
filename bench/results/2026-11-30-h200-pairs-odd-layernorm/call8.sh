#!/usr/bin/env bash
# Session 53, call 8 (H200). build-device = the T rule's commit plus U.diff (uncommitted:
# LayerNorm's element blocks of 128 threads, 1537-2048, 5 an SM at 96 registers without
# prefetching, in place of prefetching two an SM); v/old = the T rule's commit's normjit.
# 1. A/B, bench --graph, M·N = 64 Mi, two rounds. 2. BackwardFewGroups at 1901 with U.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  ln128 "--graph --kinds layernorm --dtypes bf16,fp16 --weights fp32 --n 1537,1793,1901,2047" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
GPU_TEST_SHARDS=2 GPU_TEST_FILTER='EveryN/BackwardFewGroups.*/N1901' \
  BUILD_DIR=$B OUT=$OUT timeout 40 scripts/gpu-run.sh gpu-tests > $OUT/tests-run.txt 2>&1
echo "tests exit $? at $SECONDS s"; grep -hE '^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure' $OUT/gpu-tests*.txt | head
grep -E "^(layer|rms)|median" $OUT/ab.txt | sed -E 's/threads_per_row=[0-9]+ //; s/registers //; s/shared_weights //' | cut -c1-130
tar czf $OUT/call8-logs.tgz -C $OUT ab 2>/dev/null; rm -rf $OUT/ab
