#!/usr/bin/env bash
# Session 46, call 1 (H200). build-device = b816d56: session 45's KernelLaunch refactor (c7bb656,
# one description of a launch in place of launch_with / cluster_launch / dependent_launch and
# two hand-built configs) and 396a5fb (same PTX), not yet run on a GPU. v/old = bdf03db (c7bb656^).
# 1. The whole GPU suite. 2. A/B old -> new: the launches must be the same, so the times too.
set -uo pipefail
B=build-device
GPU_TEST_SHARDS=16 BUILD_DIR=$B OUT=$OUT timeout 340 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  long "--graph --dtypes bf16 --weights fp32 --n 1024,4096,16384,65536,262144,1048576" \
  few "--graph --dtypes bf16 --weights fp32 --n 1024,4096,8192 --m 1,37,199" \
  fwd "--forward --graph --dtypes bf16 --weights fp32 --n 1024,4096,16384 --m 1,199" > $OUT/ab.txt 2>&1
echo "ab exit $? at $SECONDS s"
tar czf $OUT/call1-logs.tgz -C $OUT ab gpu-run.txt gpu-tests.txt 2>/dev/null; rm -rf $OUT/ab $OUT/gpu-run.txt
