#!/usr/bin/env bash
# Session 39, call 9 (H200), the device time left: LayerNorm's phased halves spill 8 bytes at
# 64 registers (their blocks per SM); the same config one block fewer an SM does not spill.
# Timed side by side (normjit tune --config, beside the heuristic's), bf16, M = 16384.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
P="--dtype bf16 --align 2 --m 16384"
one() { timeout 25 $B/normjit tune --n $1 $P --weight-dtype $2 --config "$3" 2>&1 | grep -E "^  config"; }
H="vec=8 registers cluster=2"
S="shared_sums shared_weights phased"
one 5003 fp32 "threads=160 threads_per_row=160 $H min_blocks=5 $S"
one 5003 same "threads=160 threads_per_row=160 $H min_blocks=5 $S"
one 6001 fp32 "threads=192 threads_per_row=192 $H min_blocks=4 $S"
one 10001 fp32 "threads=320 threads_per_row=320 $H min_blocks=2 $S"
one 15001 fp32 "threads=480 threads_per_row=480 $H $S"
echo "done at $SECONDS s"
