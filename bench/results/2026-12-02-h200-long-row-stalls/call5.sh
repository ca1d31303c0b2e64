#!/usr/bin/env bash
# Session 66, call 5 (H200). build-device: the grid's sixth stage (grid_rows: stages of 24 KB and
# more, memory-rich devices, where γ still fits: 16-bit 1M, fp32 524288) and the new test
# BackwardGridStaging (every grid candidate against the reference). v/old: the session's start
# (14ad71e's rules; kMaxGridStages 12, which no rule reaches).
# 1. The whole GPU suite (16 shards; last run whole at 48a1939, session 64).
# 2. A/B, two rounds, bench --graph: the changed shapes (1M 16-bit at 1-128 rows, fp32 524288)
#    and controls (16-bit 524288, fp32 1M, 2M, whose configs do not change).
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L/ab
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$L/tests timeout 450 scripts/gpu-run.sh gpu-tests > $OUT/suite.txt 2>&1
echo "suite exit $? at ${SECONDS}s"; grep -cE "PASSED" $OUT/suite.txt; grep -E "FAILED|failed" $OUT/suite.txt | head
timeout 160 scripts/bench-ab.sh $B/v/old $B/normjit $L/ab \
  m1 "--graph --n 1048576 --dtypes bf16,fp16" \
  rows "--graph --n 1048576 --dtypes bf16 --weights fp32 --m 1,16,128" \
  ctl "--graph --n 524288 --dtypes bf16,fp32 --weights fp32" \
  big "--graph --n 1048576,2097152 --dtypes fp32 --m 16" > $L/ab/ab.txt 2>&1
echo "ab at ${SECONDS}s"; grep -iE "median|exited|no JSON" $L/ab/ab.txt
tar czf $OUT/call5.tgz -C $OUT logs && rm -rf $L
