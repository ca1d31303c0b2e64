#!/usr/bin/env bash
# Session 44, call 5 (H200), the session's final kernels. build-device = this commit: 16-byte
# slices and 8 lanes from N = 16384 on (call 3's kernel there: identical PTX), single columns and
# 16 lanes below (the old reduction's shape), rows past the last full batch one at a time, lines
# discarded at any number of groups. v/old = 1fda0ec.
# 1. A/B old -> final, bf16 (γ bf16). 2. The backward sweep (bench --latency --graph).
# 3. The backward GPU tests the reduction serves, in the time left.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16 --weights same --n 4096,5003,8192,12288,16384,32768,65536,131072,262144"
echo "ab exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 120 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep exit $? at $SECONDS s"
left=$((225 - SECONDS)); [ $left -lt 20 ] && left=20
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='AllVariants/BackwardMatrix.*:EveryN/BackwardFewGroups.*:BackwardDeterminism.*:BackwardParallel.*:BackwardMerge.*:BackwardFewGroupsVariants.*' \
  BUILD_DIR=$B OUT=$OUT timeout $left scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s (limit $left s)"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
tar czf $OUT/call5-logs.tgz -C $OUT ab gpu-run.txt gpu-tests.txt 2>/dev/null; rm -rf $OUT/ab $OUT/gpu-run.txt $OUT/gpu-tests.txt
