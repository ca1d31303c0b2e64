#!/usr/bin/env bash
# Session 28, call 1 (H200, the first on this kind), 0299eca (88bbb02's kernels; the elementwise
# fused options take the 16-bit cluster rule): every GPU test in 14 shards; the backward sweep
# with small-M latency (bench --latency --graph) to re-baseline on the H200.
set -uo pipefail
B=build-device
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv > $OUT/gpu.txt 2>&1
GPU_TEST_SHARDS=14 BUILD_DIR=$B OUT=$OUT timeout 300 scripts/gpu-run.sh gpu-tests > $OUT/gpu-run.txt 2>&1
echo "GPU tests: exit $?"; grep -E "^shard|FAILED" $OUT/gpu-run.txt | head -30
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 230 $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1; echo "bench: exit $?"
tail -4 $OUT/bench.txt
tar -C $OUT -czf $OUT/logs.tgz gpu-tests.txt && rm -f $OUT/gpu-tests.txt
