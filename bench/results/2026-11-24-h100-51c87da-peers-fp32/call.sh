#!/usr/bin/env bash
# Session 14, call 10: bench/peers.py in fp32 (weights fp32) with its two timings, every N of the
# sweep, LayerNorm and RMSNorm (kernels of 5b65198).
set -uo pipefail
BUILD_DIR=build-device timeout 560 scripts/gpu-peers.sh --dtype fp32 > /dev/null 2>&1; echo "fp32 exit $?"
mv $OUT/peers.txt $OUT/peers-fp32.txt; mv $OUT/peers.json $OUT/peers-fp32.json
tail -45 $OUT/peers-fp32.txt | cut -c1-40,150-
