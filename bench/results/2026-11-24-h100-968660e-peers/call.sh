#!/usr/bin/env bash
# Session 13, call 19 (968660e, the kernels of 6f5b47c): bench/peers.py in fp16 and fp32 (weights
# in x's dtype), LayerNorm and RMSNorm, every N of the sweep (calls 15-16 ran bf16).
set -uo pipefail
b=build-device
scripts/gpu-environment.sh $b > $OUT/environment.txt 2>&1
BUILD_DIR=$b timeout 280 scripts/gpu-peers.sh --dtype fp16 > /dev/null 2>&1; echo "fp16 exit $?"
mv $OUT/peers.txt $OUT/peers-fp16.txt; mv $OUT/peers.json $OUT/peers-fp16.json
BUILD_DIR=$b timeout $((585 - SECONDS)) scripts/gpu-peers.sh --dtype fp32 > /dev/null 2>&1; echo "fp32 exit $?"
mv $OUT/peers.txt $OUT/peers-fp32.txt; mv $OUT/peers.json $OUT/peers-fp32.json
