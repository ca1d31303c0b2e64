#!/usr/bin/env bash
# Session 14, call 13: aligned fp32 rows of 4097-8192 in registers (not staged) for many rows.
# The bandwidth at fp32 5120/7168/8192 (call 8's bench.txt has them staged), peers.py in fp32 at
# 7168 (LayerNorm lost 0.96 to Liger in call 10), and the GPU tests over dtypes, variants and
# few groups (8 shards).
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 60 $b/normjit bench --dtypes fp32 --weights fp32 --n 5120,7168,8192 --latency > $o/bench.txt 2>&1; echo "bench exit $?" >> $o/bench.txt
grep -E "^(layer|rms)" $o/bench.txt | cut -c1-140
BUILD_DIR=$b timeout 150 scripts/gpu-peers.sh --dtype fp32 --n 5120,7168,8192 > /dev/null 2>&1; echo "peers exit $?"
cut -c1-40,95- $o/peers.txt | tail -7
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*Matrix*:*Dtypes*:*FewGroups*:*Fused*:*Determinism*:*Threads*:*Layout*' BUILD_DIR=$b timeout $((585 - SECONDS)) scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1
echo "gpu-tests exit $? at ${SECONDS}s" >> $o/gpu-run.txt; grep -E "^shard|exit" $o/gpu-run.txt
