#!/usr/bin/env bash
# Session 15, call 8: heuristic refits (parallel bf16 LayerNorm 8192, fp16 gate after the norm
# at 4096, odd 16-bit RMSNorm rows): the fused bandwidth and the odd-N rows in `normjit bench`,
# then every GPU test (8 shards).
set -uo pipefail
SECONDS=0
b=build-device; o=$OUT
export NORMJIT_CACHE_DIR=$(mktemp -d)
timeout 120 $b/normjit bench --dtypes bf16,fp16 --weights fp32 --n 4096,8192 --fused none,parallel,gate --json $o/bench-fused.json > $o/bench-fused.txt 2>&1; echo "fused bench exit $? at ${SECONDS}s" >> $o/bench-fused.txt
grep -E " (parallel|gate) " $o/bench-fused.txt | awk '{print $1,$2,$5,$6,$9,$NF}'
timeout 60 $b/normjit bench --dtypes bf16,fp16 --weights fp32,same --n 5003 --json $o/bench-odd.json > $o/bench-odd.txt 2>&1; echo "odd bench exit $? at ${SECONDS}s" >> $o/bench-odd.txt
grep -E "5003" $o/bench-odd.txt | cut -c1-120
GPU_TEST_SHARDS=8 BUILD_DIR=$b timeout $((580 - SECONDS)) scripts/gpu-run.sh gpu-tests > $o/gpu-run.txt 2>&1
echo "gpu-tests exit $? at ${SECONDS}s" >> $o/gpu-run.txt; grep -E "^shard|exit" $o/gpu-run.txt
