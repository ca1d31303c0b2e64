#!/usr/bin/env bash
# Session 26, call 1 (H100): clusters meet by posting (c6dae69, ClusterPost: st.async into
# every block's shared memory, counted by mbarriers) against a809c94 (cluster barrier, then
# remote reads). Every GPU test first (12 shards, under a time limit: a wrong mbarrier phase hangs).
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
GPU_TEST_SHARDS=12 BUILD_DIR=$B OUT=$OUT timeout 330 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
BWD="--graph --dtypes bf16,fp32 --weights fp32 --n 12288,16384,32768,65536,131072,262144"
FWD="--forward --graph --dtypes bf16,fp32 --weights fp32 --n 32768,65536,131072,262144"
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab bwd "$BWD" fwd "$FWD" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
