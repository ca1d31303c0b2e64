#!/usr/bin/env bash
# Session 66, call 3 (H200). build-device: 14ad71e + uncommitted `grid_ahead` (a grid cluster's
# rows copying while one is worked; before, always one: kGridDefer = stages − 2). ncu of LN bf16
# 1M (call 1): 35% of DRAM, one 32 KB row in flight an SM. Pinned beside the heuristic (bench
# --graph), the grid's stages split between rows copying (ahead) and rows waiting for the sums:
# 1M bf16 / fp32 at 64 rows, 458752-524288 at M·N = 64 Mi, few rows of 131072-262144.
# Then the GPU tests of the grid (BackwardGridCluster.*, BackwardGridStaging.* new: every grid
# candidate, grid_ahead 1-3, against the reference).
set -uo pipefail
B=build-device
L=$OUT/logs
mkdir -p $L
G="registers cluster=132 grid staged"
v() {  # threads vec stages ahead [extra]
  echo "threads=$1 threads_per_row=$1 vec=$2 $G stages=$3 grid_ahead=$4 shared_weights"
}
PIN_TIMEOUT=120 scripts/bench-pin.sh $L g1m16 "--kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32,same --n 1048576" \
  "$(v 512 8 5 2)" "$(v 512 8 5 3)" "$(v 512 8 5 4)" "$(v 512 8 6 2)" "$(v 512 8 6 3)" "$(v 512 8 6 4)" "$(v 512 8 4 2)" "$(v 512 8 4 3)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L g1m32 "--kinds layernorm,rmsnorm --dtypes fp32 --n 1048576" \
  "$(v 1024 4 3 2)" "$(v 512 4 3 2)" "$(v 1024 4 2 1)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L g524288 "--kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 524288" \
  "$(v 512 8 5 2)" "$(v 512 8 5 3)" "$(v 512 8 6 3)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L g458752 "--kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 458752" \
  "$(v 448 8 5 2)" "$(v 448 8 5 3)" "$(v 448 8 6 3)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L gfew "--kinds layernorm,rmsnorm --dtypes bf16 --weights fp32 --n 131072,262144 --m 4,8" \
  "$(v 256 8 5 2)" "$(v 256 8 5 3)" "$(v 128 8 5 2)" "$(v 128 8 5 3)"
PIN_TIMEOUT=60 scripts/bench-pin.sh $L gfew32 "--kinds layernorm --dtypes fp32 --n 262144 --m 8" \
  "$(v 512 4 5 2)" "$(v 512 4 5 3)"
echo "pins at ${SECONDS}s"
GPU_TEST_SHARDS=4 GPU_TEST_FILTER='BackwardGrid*' BUILD_DIR=$B OUT=$L/tests timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/tests.txt 2>&1
echo "tests exit $? at ${SECONDS}s"; grep -E "PASSED|FAILED" $OUT/tests.txt | head
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $L
