#!/usr/bin/env bash
# Session 39, call 3 (H200): build-device as call 2 (branch next/phased-rows-2 with the test
# fixes; every GPU test has now passed on it: calls 1 and 2).
# 1) One-block phased kernels timed beside the heuristic's (normjit tune --config), LN and RMS
#    bf16 fp32 γ at 4095, 5003, 8191, 12289, rows aligned to 2 bytes (call 2 left out --align 2:
#    tune then makes rows of 16 and turns the phased configs down).
# 2) The backward sweep with small-M latency (bench --latency --graph): where we stand.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
P="--dtype bf16 --weight-dtype fp32 --align 2 --m 16384"
one() { timeout 40 $B/normjit tune --kind $1 --n $2 $P --config "$3" 2>&1 | grep -vE "^ *$|^\[[0-9]"; }
{
one layernorm 4095 "threads=288 threads_per_row=288 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
one layernorm 5003 "threads=320 threads_per_row=320 vec=8 registers min_blocks=2 shared_sums shared_weights phased"
one layernorm 8191 "threads=544 threads_per_row=544 vec=8 registers shared_sums shared_weights phased"
one layernorm 12289 "threads=800 threads_per_row=800 vec=8 registers shared_sums shared_weights phased"
one rmsnorm 4095 "threads=288 threads_per_row=288 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
one rmsnorm 5003 "threads=320 threads_per_row=320 vec=8 registers min_blocks=3 shared_sums shared_weights phased"
one rmsnorm 8191 "threads=544 threads_per_row=544 vec=8 registers shared_sums shared_weights phased"
one rmsnorm 12289 "threads=800 threads_per_row=800 vec=8 registers shared_sums shared_weights phased"
} > $OUT/one-block.txt
echo "one-block tune at $SECONDS s"; grep -E "^  config|^(layer|rms)norm N|does not" $OUT/one-block.txt | cut -c1-230
NORMJIT_CACHE_DIR=$(mktemp -d) timeout $((560 - SECONDS)) $B/normjit bench --latency --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
echo "sweep: exit $? at $SECONDS s"
