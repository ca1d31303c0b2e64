#!/usr/bin/env bash
# Session 39, call 6 (H200): build-device as call 4. normjit tune at odd 16-bit N (bf16, M =
# 16384), LN and RMS, fp32 γ and bf16 γ, every candidate's time kept (the lines call 5 dropped):
# the data for a phased rule past clusters.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
for w in fp32 same; do for k in layernorm rmsnorm; do for n in 3001 4095 5003 6001 7001 8191 10001 12289 13001 15001; do
  [ $w = same ] && case $n in 3001|5003|7001|10001|15001) continue;; esac
  timeout 40 $B/normjit tune --kind $k --n $n --dtype bf16 --weight-dtype $w --align 2 --m 16384 2>&1 | grep -E " time |^(layer|rms)norm N"
done; done; done > $OUT/tune.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm N" $OUT/tune.txt | sed -E 's/ x=bf16 dy=bf16 dx=bf16//; s/threads_per_row=[0-9]+ //' | tr -s ' ' | cut -c1-230
