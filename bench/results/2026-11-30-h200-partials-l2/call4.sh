#!/usr/bin/env bash
# Session 44, call 4 (H200), the last of the session. build-device = this commit: the reduction
# reads 16-byte slices from N = 16384 on, sizes its lanes by the partial rows (one batch of 8
# loads each, at most 16), and discards the lines it read. v/old = 1fda0ec (before this session);
# v/call3 = call 3's kernel (16-byte slices for every N multiple of 4, 8 lanes, rows past the
# last full batch one at a time).
# 1. A/B old -> new and call3 -> new, bf16 (γ bf16) at the sweep's N.
# 2. The backward sweep (bench --latency --graph), all dtypes.
# 3. The Python tests (4 processes).
# 4. The GPU tests of the backward that the reduction serves (matrix with N = 16388, few
#    groups, determinism, parallel norms, merge), as long as the call has time.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab \
  bwd "--graph --dtypes bf16 --weights same --n 4096,5003,8192,12288,16384,32768,65536,131072,262144"
echo "ab exit $? at $SECONDS s"
scripts/bench-ab.sh $B/v/call3 $B/normjit $OUT/ab c3 "--graph --dtypes bf16 --weights same --n 4096,16384,32768,65536,262144"
echo "call3 ab exit $? at $SECONDS s"
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 300 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep exit $? at $SECONDS s"
export NORMJIT_LIBRARY=$PWD/$B/libnormjit.so
NORMJIT_CACHE_DIR=$(mktemp -d) timeout 170 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python tests exit $? at $SECONDS s"; grep -E "^python:|^===== shard" $OUT/python-tests.txt; grep -E "^(ERROR|FAIL):" $OUT/python-tests.txt | head
left=$((585 - SECONDS)); [ $left -lt 30 ] && left=30
GPU_TEST_SHARDS=16 GPU_TEST_FILTER='AllVariants/BackwardMatrix.*:EveryN/BackwardFewGroups.*:BackwardDeterminism.*:BackwardParallel.*:BackwardMerge.*:BackwardFewGroupsVariants.*' \
  BUILD_DIR=$B OUT=$OUT timeout $left scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "gpu tests exit $? at $SECONDS s (limit $left s)"
grep -hE "^\[  (PASSED|FAILED) " $OUT/gpu-tests.txt | sort | uniq -c; grep -E "^\[  FAILED  \]|Failure" $OUT/gpu-tests.txt | head
grep -hE "^\[  PASSED  \] [0-9]+ test" $OUT/gpu-tests.txt | awk '{s+=$4} END {print "passed in all:", s}'
gzip $OUT/python-tests.txt
tar czf $OUT/call4-logs.tgz -C $OUT ab gpu-run.txt gpu-tests.txt 2>/dev/null; rm -rf $OUT/ab $OUT/gpu-run.txt $OUT/gpu-tests.txt
