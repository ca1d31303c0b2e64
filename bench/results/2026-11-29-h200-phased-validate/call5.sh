#!/usr/bin/env bash
# Session 39, call 5 (H200): build-device as call 4. Data for a rule: normjit tune at more odd
# 16-bit N (bf16, fp32 γ, M = 16384), LN and RMS: which shapes' winners are phased, and how much
# the tuned config beats the heuristic's.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
for k in layernorm rmsnorm; do for n in 1537 2047 3001 3583 6001 7001 9001 10001 11001 13001 14001 15001; do
  timeout 40 $B/normjit tune --kind $k --n $n --dtype bf16 --weight-dtype fp32 --align 2 --m 16384 2>&1 | grep -vE "^\[[0-9]"
done; done > $OUT/tune.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm N" $OUT/tune.txt | sed -E 's/ x=bf16 dy=bf16 dx=bf16 weight=fp32//; s/threads_per_row=[0-9]+ //' | tr -s ' ' | cut -c1-230
