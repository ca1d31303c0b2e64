#!/usr/bin/env bash
# Session 14, call 11: fp32 rows up to 4096 prefetching in 512-thread blocks. The bandwidth at
# fp32 3072/4096 (both weight forms; call 8's bench.txt has 4096 before), peers.py in fp32 at
# 4096, and the GPU tests that run the heuristic's configs over dtypes and variants (8 shards).
set -uo pipefail
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 60 $b/normjit bench --dtypes fp32 --n 3072,4096 > $o/bench.txt 2>&1; echo "bench exit $?" >> $o/bench.txt
grep -E "^(layer|rms)" $o/bench.txt | cut -c1-140
BUILD_DIR=$b timeout 150 scripts/gpu-peers.sh --dtype fp32 --n 4096,7168 > /dev/null 2>&1; echo "peers exit $?"
cut -c1-40,95- $o/peers.txt | tail -5
GPU_TEST_SHARDS=8 GPU_TEST_FILTER='*Matrix*:*Dtypes*:*FewGroups*:*Fused*:*Determinism*' BUILD_DIR=$b timeout $((585 - SECONDS)) scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1
echo "gpu-tests exit $? at ${SECONDS}s" >> $o/gpu-run.txt; grep -E "^shard|exit" $o/gpu-run.txt
