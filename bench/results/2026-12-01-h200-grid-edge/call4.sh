#!/usr/bin/env bash
# Session 58, call 4 (H200). build-device: as calls 1-2 (4960795's code).
# Call 3: the grid beats today's clusters at 1-4 rows (LN bf16 262144 M = 1: 13.4 us against
# 45.7), the clusters win from 16; past 262144 the 3-slot clusters win from 32 rows. Here: the
# lines call 3 lost (c16 without its second argument under set -u), M = 8 at 131072-262144, and
# the grid at 1-8 rows of 32768-65536 against the heuristic's (the column pass there).
# `normjit tune --config` (the heuristic's config is timed first, then the listed ones).
set -uo pipefail
B=build-device
g() { echo "threads=$1 threads_per_row=$1 vec=$2 registers cluster=132 grid staged stages=5 shared_weights"; }
c16() { echo "threads=1024 threads_per_row=1024 vec=$1 registers cluster=16 shared_sums${2:-}"; }
while IFS='|' read -r shape cfgs; do
  set -- $shape; kind=$1 dtype=$2 w=$3 n=$4 ms=$5
  [ $SECONDS -gt 480 ] && { echo "out of time at $shape"; break; }
  args=(); IFS=';' read -ra cs <<< "$cfgs"
  for c in "${cs[@]}"; do args+=(--config "$(eval echo "$c")"); done
  for m in ${ms//,/ }; do
    echo "### $kind $dtype $w $n m $m" | tee -a $OUT/configs.txt >> $OUT/tune-progress.txt
    NORMJIT_CACHE_DIR=$(mktemp -d) timeout 60 $B/normjit tune --kind $kind --dtype $dtype --weight-dtype $w --n $n --m $m "${args[@]}" \
      2>> $OUT/tune-progress.txt | grep -E "^ *config" >> $OUT/configs.txt
  done
done <<'SHAPES'
layernorm bf16 fp32 262152 4,8,16,32,64|$(c16 8);$(g 256 8)
rmsnorm bf16 fp32 262152 4,8,16|$(g 256 8)
layernorm bf16 fp32 393216 4,8,32,64|$(c16 8)
layernorm fp32 fp32 262148 4,8,16,32,64|$(c16 4)
layernorm bf16 fp32 262144 8|$(g 256 8)
rmsnorm bf16 fp32 262144 8|$(g 256 8)
layernorm bf16 fp32 131072 8|$(g 128 8)
rmsnorm bf16 fp32 131072 8|$(g 128 8)
layernorm fp32 fp32 262144 8|$(g 512 4)
rmsnorm fp32 fp32 131072 8|$(g 256 4)
layernorm bf16 fp32 65536 2,8|$(g 64 8)
rmsnorm bf16 fp32 65536 1,4,8|$(g 64 8)
layernorm bf16 fp32 32768 1,4|$(g 64 8)
layernorm fp32 fp32 65536 1,4,8|$(g 128 4)
layernorm fp32 fp32 32768 1,4|$(g 64 4)
layernorm fp16 fp16 262144 1,4,8|$(g 256 8)
SHAPES
echo "configs done at $SECONDS s"
mkdir -p $OUT/logs && mv $OUT/tune-progress.txt $OUT/logs/ 2>/dev/null
tar czf $OUT/call3.tgz -C $OUT logs && rm -rf $OUT/logs
