#!/usr/bin/env bash
# Session 51, call 5 (H200). build-device at 3e577c5 (as call 4). 1. The Python package's GPU
# tests, four processes. 2. bench --graph at the sweep's odd N (1000, 4095, 5003) and the
# A/B's 1001-5119 in bf16 fp32 γ: the standing.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
NORMJIT_LIBRARY=$PWD/$B/libnormjit.so timeout 240 python3 python/tests/run.py --shards 4 > $OUT/python-tests.txt 2>&1
echo "python exit $? at $SECONDS s"; tail -6 $OUT/python-tests.txt
timeout 120 $B/normjit bench --graph --kinds layernorm,rmsnorm --dtypes bf16,fp16 --weights fp32,same --n 1000,4095,4096,5003,5120 --json $OUT/bench-odd.json > $OUT/bench-odd.txt 2>&1
echo "bench exit $? at $SECONDS s"; cut -c1-150 $OUT/bench-odd.txt
