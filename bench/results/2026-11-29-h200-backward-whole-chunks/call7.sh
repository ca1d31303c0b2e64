#!/usr/bin/env bash
# Session 41, call 7 (H200): build-device = the commit of this script (the kernels of call 6).
# Data for a backward rule of prefetching phased blocks (entry 55, next 1): tune RMSNorm bf16
# fp32 γ odd N 6001-16383 at M = 16384 and 8192 (the bench's rows are M·N = 64 Mi), and LN at
# 8191 and 10001; print each shape's heuristic and tuned time and the prefetching phased
# candidates' times.
set -uo pipefail
B=build-device
export NORMJIT_CACHE_DIR=$(mktemp -d)
for s in "rmsnorm 6001" "rmsnorm 7001" "rmsnorm 8191" "rmsnorm 9001" "rmsnorm 10001" "rmsnorm 11001" "rmsnorm 12289" \
         "rmsnorm 14001" "rmsnorm 16383" "layernorm 8191" "layernorm 10001"; do
  set -- $s
  [ $SECONDS -lt 200 ] && timeout 40 $B/normjit tune --kind $1 --n $2 --dtype bf16 --weight-dtype fp32 --align 2 --m 16384,8192 2>&1
done > $OUT/tune-log.txt
echo "tune at $SECONDS s"
grep -hE "^(layer|rms)norm N" $OUT/tune-log.txt | tr -s ' ' | sed 's/x=bf16 dy=bf16 dx=bf16 weight=fp32 //' | cut -c1-200
grep -E " time [0-9]+/" $OUT/tune-log.txt | grep "prefetch.*phased" | sed -E 's/^.*\] (layernorm|rmsnorm) N=([0-9]+).*M<=([0-9]+) time ([0-9]+)\/[0-9]+ /\1 \2 M\3 #\4 /; s/threads_per_row=[0-9]+ //' | cut -c1-120
