#!/usr/bin/env bash
# Session 26, call 7 (H100): the cluster rules refitted after posting (this commit) against
# 96adb72's heuristic (build-device/v/old), in bench across the ranges the rules cover, not only
# at the tuned sizes; then the GPU tests that run the engine's configs at these N.
set -uo pipefail
B=build-device
mkdir -p $OUT/ab
B16="--graph --dtypes bf16 --weights fp32 --n 16392,20480,24576,32768,40960,49152,65536,98304,131072,163840,196608,262144"
F32="--graph --dtypes fp32 --weights fp32 --n 40960,61440,65536,98304,131072,196608"
scripts/bench-ab.sh $B/v/old $B/normjit $OUT/ab b16 "$B16" f32 "$F32" > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
GPU_TEST_SHARDS=12 GPU_TEST_FILTER='*BackwardMatrix*:*BackwardFewGroups*:*Determinism*:*SharedSums*' BUILD_DIR=$B OUT=$OUT timeout 250 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
tar -C $OUT -czf $OUT/logs.tgz ab gpu-tests.txt && rm -rf $OUT/ab $OUT/gpu-tests.txt
